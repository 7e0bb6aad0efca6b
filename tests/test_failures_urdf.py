"""Bad URDF files (issue 27, item 3): rows (what is wrong, the message `read_urdf` prints)."""
from __future__ import annotations

from pathlib import Path

import pytest

from flexmbs.io.urdf import read_urdf, read_urdf_shapes

LINK = ('<link name="{0}"><inertial><mass value="1.0"/>'
        '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>{1}</link>')


def robot(*parts: str) -> str:
    return '<?xml version="1.0"?><robot name="r"><link name="world"/>' + "".join(parts) + "</robot>"


def joint(name="j", kind="revolute", parent="world", child="a", extra='<axis xyz="0 0 1"/>') -> str:
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="0 0 1" rpy="0 0 0"/>{extra}</joint>')


ROWS = [
    ("a floating joint", robot(LINK.format("a", ""), joint(kind="floating")),
     r"URDF joint 'j': `type` must be one of \['revolute', 'continuous', 'prismatic', 'fixed'\], got 'floating'"),
    ("a zero axis", robot(LINK.format("a", ""), joint(extra='<axis xyz="0 0 0"/>')),
     r"URDF joint 'j': <axis xyz> must be nonzero, got \[0.0, 0.0, 0.0\]"),
    ("two numbers for xyz", robot(LINK.format("a", ""), joint(extra='<axis xyz="0 1"/>')),
     r"URDF joint 'j' <axis>: `xyz` must be 3 finite numbers, got '0 1'"),
    ("a mass that is not a number", robot(LINK.format("a", "").replace('value="1.0"', 'value="heavy"'), joint()),
     r"URDF link 'a' <mass>: `value` must be a finite number, got 'heavy'"),
    ("a parent that is no link", robot(LINK.format("a", ""), joint(parent="base")),
     r"URDF joint 'j': parent link 'base' is not a <link> of"),
    ("a link with two parents", robot(LINK.format("a", ""), LINK.format("b", ""), joint(),
                                      joint(name="k", parent="b", child="a")),
     r"the links must form one tree \(one root, one parent each\); roots \['world', 'b'\], links with several "
     r"parents \['a'\]"),
    ("a massless link that is not the root", robot('<link name="a"/>', joint()),
     r"URDF link 'a' has no <inertial>: only the root link may be massless \(it is the ground\)"),
    ("not a robot", '<?xml version="1.0"?><model/>', r"the root element must be <robot>, got <model>"),
    ("not XML", "<robot", r"is not valid XML"),
]


@pytest.mark.parametrize("what, text, message", ROWS, ids=[r[0] for r in ROWS])
def test_bad_urdf_says_what_is_wrong(tmp_path, what, text, message):
    path = tmp_path / "robot.urdf"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        read_urdf(path)


def test_missing_file_names_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"URDF file nowhere.urdf not found \(working directory "):
        read_urdf(Path("nowhere.urdf"))


def test_a_cylinder_visual_is_not_drawn_and_says_so(tmp_path):
    path = tmp_path / "robot.urdf"
    path.write_text(robot(LINK.format("a", '<visual><geometry><cylinder radius="0.1" length="1"/></geometry></visual>'),
                          joint()))
    with pytest.warns(UserWarning, match=r"URDF link 'a': <cylinder> visuals are not read; the link is drawn as its "
                                         r"inertia box"):
        assert read_urdf_shapes(path) == {}


def test_a_missing_visual_mesh_names_the_link_and_where_it_looked(tmp_path):
    path = tmp_path / "robot.urdf"
    path.write_text(robot(LINK.format("a", '<visual><geometry><mesh filename="package://r/a.stl"/></geometry></visual>'),
                          joint()))
    with pytest.raises(FileNotFoundError, match=r"URDF link 'a': visual mesh 'package://r/a.stl' not found \(looked "
                                                r"for .*a.stl\)"):
        read_urdf_shapes(path)


@pytest.mark.parametrize("limits, error, message", [
    (1e4, TypeError, "`limits` must be None or a dict of JointLimit's keyword arguments"),
    (dict(stiffness=1e4, lower=-1.0), ValueError, "`limits` gives ['lower']: the stops' positions come from"),
    (dict(restitution=0.5), TypeError, "stiffness"),
])
def test_bad_limits_are_named(limits, error, message):
    from pathlib import Path
    arm = Path(__file__).resolve().parents[1] / "cases" / "data" / "arm.urdf"
    with pytest.raises(error) as info:
        read_urdf(arm, limits=limits)
    assert message in str(info.value)
