"""Issue 22, item 4: the kernel's schema (flexmbs/kernel_schema.py).  Every kind a user builds (the
bodies and constraints flexmbs exports, the loads of flexmbs.bodies.loads) has a compiled evaluator
or a stated refusal; the compiled kernel was built from the same declaration of its rows as the
packer uses; the header setup.py generates gives each field's offset."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import flexmbs.bodies as bodies
import flexmbs.bodies.loads as loads
import flexmbs.constraints as constraints
from flexmbs import kernel_schema as schema
from flexmbs.bodies.base import Body
from flexmbs.compiled import CompiledSystem, Unsupported, kernel_status
from flexmbs.constraints.base import Constraint
from flexmbs.system import System


def registry() -> list[str]:
    """The kinds users build: the concrete Body and Constraint classes flexmbs.bodies and
    flexmbs.constraints export, and the load makers of flexmbs.bodies.loads."""
    kinds = []
    for module in (bodies, constraints):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, (Body, Constraint)) and not inspect.isabstract(obj):
                kinds.append(name)
    return kinds + [name for name in loads.__all__ if name.endswith(("_load", "_ground"))]


@pytest.mark.parametrize("kind", registry())
def test_every_kind_has_a_compiled_evaluator_or_a_stated_refusal(kind):
    entry = schema.KINDS.get(kind)
    assert entry is not None, (f"kind {kind!r} has neither a compiled evaluator nor a stated refusal: add it to "
                               "flexmbs.kernel_schema.KINDS ('compiled: <records>' or 'refused: <why>')")
    assert entry.startswith(("compiled: ", "refused: ")) and len(entry) > len("refused: ") + 10, (kind, entry)


def test_the_registry_covers_the_kinds_the_kernel_packs():
    """What `flexmbs.compiled` packs is declared compiled (the loads by their spec kinds, too)."""
    compiled = {k for k, v in schema.KINDS.items() if v.startswith("compiled")}
    assert {"RigidBodyEP", "RigidBody2D", "FlexibleBody", "PlanarRevolute", "PlanarPrismatic", "CoordinateDriver",
            "AngleDriver", "torque_load", "point_load", "spring_to_ground", "CorotationalBeam2D",
            "CorotationalBeam3D"} <= compiled
    assert {k.rsplit("_", 1)[0] if k.endswith("_2d") else k for k in schema.CODES["LOAD"]} == {"torque", "point",
                                                                                                "spring"}


@pytest.mark.skipif(not kernel_status().installed, reason="the compiled kernel is not installed")
def test_a_refused_body_is_refused_with_its_stated_reason():
    from flexmbs.bodies.tree import TreeBody, TreeJoint, TreePart
    arm = TreeBody("arm", ("theta",), [TreeJoint("theta", "revolute", (0, 1, 0), "theta")],
                   [TreePart("bob", "theta", 2.0, centroid=(0, 0, -1.0))], q0=(0.3,))
    with pytest.raises(Unsupported, match="body 'arm' is a TreeBody: tree \\(relative-coordinate\\) bodies are not "
                                          "evaluated by the compiled kernel"):
        CompiledSystem(System([arm]))


@pytest.mark.skipif(not kernel_status().installed, reason="the compiled kernel is not installed")
def test_the_installed_kernel_was_built_from_this_declaration():
    import _flexmbs_kernel
    assert _flexmbs_kernel.SCHEMA == schema.signature()


def test_the_generated_header_gives_every_field_its_offset():
    text = schema.c_header()
    assert "#define LOAD_R_ANCHOR 3" in text and "#define LOAD_R_WIDTH 9" in text
    assert "#define HEADER_WIDTH 28" in text and "LOAD_SPRING_2D = 5, N_LOAD_KINDS = 6" in text
    assert "FORMULATION_GIBBS_APPELL = 1, N_FORMULATION_KINDS = 2" in text
    for name in schema.SYSTEM_ARRAYS:
        assert f'#define ARRAY_{name.upper()} "{name}"\n' in text
    for name in schema.FLEX_ARRAYS:
        assert f'#define FLEX_ARRAY_{name.upper()} "{name}"\n' in text
    for record in schema.RECORDS:
        for name, at in record.offsets().items():
            assert f"#define {record.prefix}_{name.upper()} {at}\n" in text
        assert f"#define {record.prefix}_WIDTH {record.width}\n" in text


def test_rows_are_filled_by_name_and_padded():
    row = schema.LOAD_R.row(point=(0.1, 0.2), anchor=np.array([1.0, 2.0, 3.0]), stiffness=5.0, rest_length=0.5,
                            damping=0.0)
    assert row == [0.1, 0.2, 0.0, 1.0, 2.0, 3.0, 5.0, 0.5, 0.0]
    assert schema.SENSOR_I.row(kind=1, offset_i=-1, offset_j=7, out=2, side_i=0, side_j=4) == [1, -1, 7, 2, 0, 4]
