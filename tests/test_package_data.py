"""The shipped cases and sample meshes are found by name (issue 11, item 2; the wheel itself:
tests/test_packaging.py)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.cli import find_cases_dir, main
from flexmbs.package_data import package_data_dir

ROOT = Path(__file__).resolve().parents[1]


def test_source_tree_data_directories():
    assert package_data_dir("cases") == ROOT / "cases"
    assert package_data_dir("meshes") == ROOT / "meshes"
    with pytest.raises(ValueError, match="`name` must be one of"):
        package_data_dir("results")


def test_samples_by_name_and_by_file_name():
    names = fm.mesh.samples()
    assert names == sorted(p.name for p in (ROOT / "meshes").iterdir() if p.suffix in (".msh", ".vtu", ".inp"))
    line = fm.mesh.sample("beam_line")
    assert line.n_nodes == 21 and len(line.cells["line"]) == 20          # meshes/README.md
    assert set(line.node_sets) >= {"clamped", "tip"}
    assert fm.mesh.sample_path("beam_line.msh") == ROOT / "meshes" / "beam_line.msh"
    hexes = fm.mesh.sample("bar_hex", cell_types=["hexahedron"])          # options go to read
    assert set(hexes.cells) == {"hexahedron"} and len(hexes.cells["hexahedron"]) == 40


@pytest.mark.parametrize(("name", "message"), [
    ("beam_lin", "no sample mesh 'beam_lin'; did you mean 'beam_line'"),
    ("nothing_like_it", "The samples: bar_hex.msh"),
])
def test_unknown_sample(name, message):
    with pytest.raises(fm.MeshError, match=message):
        fm.mesh.sample(name)


def test_missing_file_named_like_a_sample_points_to_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(fm.MeshError, match=r"ships with flexmbs: flexmbs.mesh.sample\('beam_line.msh'\)"):
        fm.mesh.read("beam_line.msh")
    with pytest.raises(fm.MeshError) as err:
        fm.mesh.read("mine.msh")
    assert "sample" not in str(err.value)


def test_cases_found_from_any_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FLEXMBS_CASES", raising=False)
    assert find_cases_dir() == ROOT / "cases"
    assert main(["cases"]) == 0
    assert f"cases in {ROOT / 'cases'}" in capsys.readouterr().out
    own = tmp_path / "cases"                                     # ./cases comes first
    own.mkdir()
    assert find_cases_dir() == own
    monkeypatch.setenv("FLEXMBS_CASES", str(ROOT / "cases"))     # then $FLEXMBS_CASES before it
    assert find_cases_dir() == ROOT / "cases"
    assert find_cases_dir(own) == own                            # and --cases before everything


def test_gmsh_written_sample_keeps_its_physical_groups():
    """meshes/bar_tet_gmsh.msh, written by Gmsh itself (not by meshio like the other samples)."""
    mesh = fm.mesh.sample("bar_tet_gmsh")
    assert mesh.dim == 3 and mesh.n_nodes == 190 and len(mesh.cells["tetra"]) == 434
    assert set(mesh.element_sets) == {"bar", "root", "tip"}
    x = mesh.points[:, 0]
    assert np.all(x[mesh.nodes("root")] == 0.0) and np.all(x[mesh.nodes("tip")] == 1.0)
    volume = fm.mesh.signed_measure(mesh.points, "tetra", mesh.cells["tetra"]).sum()
    assert volume == pytest.approx(1.0 * 0.1 * 0.1, rel=1e-12)


def test_every_subpackage_is_listed_for_the_wheel():
    """pyproject.toml lists the packages explicitly (package discovery cannot see the mapped
    cases/ and meshes/): a new subpackage of flexmbs/ must be added there, or the wheel lacks it
    (tests/test_packaging.py checks the built wheel itself)."""
    import tomllib
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "flexmbs").rglob("__init__.py")}
    listed = set(config["packages"])
    assert found <= listed, f"add {sorted(found - listed)} to [tool.setuptools] packages in pyproject.toml"
    assert config["package-dir"] == {"flexmbs.cases": "cases", "flexmbs.meshes": "meshes"}
    assert {"flexmbs.cases", "flexmbs.meshes"} <= listed
