"""The wheel is complete: it carries the cases and the sample meshes, and the installed command
finds them from an empty folder (issue 11, item 2).

The wheel is built once per session from a copy of the source tree (so no build/ or egg-info
is left in the checkout), without build isolation when this environment can build wheels
itself, else with pip's isolated build (which fetches setuptools; skipped when it cannot).
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from flexmbs.compiled import c_compiler

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = {"flexmbs": "flexmbs", "cases": "flexmbs/cases", "meshes": "flexmbs/meshes"}   # source -> wheel
SOURCE = ["pyproject.toml", "setup.py", "csrc", "README.md", *SHIPPED]

pytestmark = pytest.mark.slow          # a wheel build takes a few seconds (more with an isolated build)


def _skip_file(rel: str) -> bool:
    return "__pycache__" in rel.split("/") or rel.endswith(".pyc")


def source_files() -> list[str]:
    """The files of flexmbs/, cases/ and meshes/ (tracked by git when this is a git checkout)."""
    try:
        out = subprocess.run(["git", "ls-files", *SHIPPED], cwd=ROOT, capture_output=True, text=True,
                             check=True, timeout=60).stdout.split()
    except (OSError, subprocess.SubprocessError):
        out = []
    if not out:
        out = [p.relative_to(ROOT).as_posix() for d in SHIPPED for p in (ROOT / d).rglob("*") if p.is_file()]
    return sorted(rel for rel in out if not _skip_file(rel) and (ROOT / rel).is_file())


def in_wheel(rel: str) -> str:
    top, _, rest = rel.partition("/")
    return f"{SHIPPED[top]}/{rest}"


def _can_build_without_isolation() -> bool:
    if importlib.util.find_spec("setuptools") is None:
        return False
    if importlib.util.find_spec("wheel") is not None:
        return True
    import setuptools
    major, minor = (int(x) for x in setuptools.__version__.split(".")[:2])
    return (major, minor) >= (70, 1)              # bdist_wheel inside setuptools since 70.1


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    src, dist = tmp / "src", tmp / "dist"
    src.mkdir()
    for name in SOURCE:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, src / name)
    isolated = not _can_build_without_isolation()
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(src)]
    if not isolated:
        cmd.insert(5, "--no-build-isolation")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        if isolated:
            pytest.skip("this environment has no wheel builder (setuptools >= 70.1 or setuptools + wheel) and "
                        f"pip's isolated build failed (no package index?): {proc.stderr.strip()[-300:]}")
        pytest.fail(f"building the wheel failed:\n{proc.stdout}\n{proc.stderr}")
    (path,) = dist.glob("flexmbs-*.whl")
    return path


def test_wheel_has_every_module_case_and_sample_mesh(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {in_wheel(rel) for rel in source_files()}
    assert {"flexmbs/cases/rotating_bar.py", "flexmbs/cases/timing.py", "flexmbs/meshes/beam_line.msh",
            "flexmbs/cases/data/four_bar_markers.csv"} <= expected           # the listing itself works
    missing = sorted(expected - names)
    assert not missing, f"not in the wheel (a subpackage missing from pyproject's packages?): {missing}"
    assert not [n for n in names if _skip_file(n)]
    kernel = {n for n in names if n.startswith("_flexmbs_kernel.")}          # the compiled kernel, a module
    assert kernel or not c_compiler(), "a C compiler is here, but the wheel has no _flexmbs_kernel"
    assert {n.split("/")[0] for n in names} - kernel == {"flexmbs", wheel.name.split("-")[0] + "-"
                                                          + wheel.name.split("-")[1] + ".dist-info"}  # no cases/, meshes/


def _venv_paths(venv: Path) -> tuple[Path, Path, Path]:
    """(python, scripts directory, site-packages) of a venv."""
    scheme_vars = {"base": str(venv), "platbase": str(venv), "installed_base": str(venv),
                   "installed_platbase": str(venv)}
    scheme = "nt" if os.name == "nt" else "posix_prefix"
    site = Path(sysconfig.get_path("purelib", scheme, vars=scheme_vars))
    scripts = Path(sysconfig.get_path("scripts", scheme, vars=scheme_vars))
    return scripts / ("python.exe" if os.name == "nt" else "python"), scripts, site


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> tuple[Path, Path, Path, Path, dict]:
    """(venv, python, scripts, site-packages, environment) of a venv with the wheel installed: it sees
    this environment's dependencies (after its own packages, through a .pth file) but not the
    source tree."""
    venv = tmp_path_factory.mktemp("installed") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python, scripts, site = _venv_paths(venv)
    import site as outer_site
    outer = [p for p in outer_site.getsitepackages() if Path(p).is_dir()]
    (site / "_outer_env.pth").write_text("\n".join(outer) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "FLEXMBS_CASES", "PYTHONHOME")}
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--ignore-installed", "--no-index",
                    str(wheel)], check=True, env=env, timeout=300, capture_output=True)
    return venv, python, scripts, site, env


def test_installed_wheel_lists_the_cases_and_reads_the_samples_from_an_empty_folder(installed, tmp_path):
    """`flexmbs cases` and `flexmbs.mesh.sample` from an empty folder."""
    venv, python, scripts, site, env = installed
    empty = tmp_path / "empty"
    empty.mkdir()
    flexmbs = scripts / ("flexmbs.exe" if os.name == "nt" else "flexmbs")
    proc = subprocess.run([str(flexmbs), "cases"], cwd=empty, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    installed_cases = site / "flexmbs" / "cases"
    assert f"cases in {installed_cases}" in proc.stdout.replace(str(installed_cases.resolve()), str(installed_cases))
    for case in ("rotating_bar", "spinup_beam", "slider_crank"):
        assert f"\n  {case} " in proc.stdout
    code = ("import flexmbs, flexmbs.mesh as m, flexmbs.compiled as c; print(flexmbs.__file__); print(m.samples()); "
            "print(m.sample('beam_line').n_nodes, m.sample('bar_hex.msh', cell_types=['hexahedron']).n_nodes); "
            "print(c.kernel_status().installed)")
    proc = subprocess.run([str(python), "-c", code], cwd=empty, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    where, names, counts, kernel = proc.stdout.splitlines()
    assert kernel == "True" or not c_compiler(), kernel        # the installed kernel is found
    assert Path(where).resolve().is_relative_to(venv.resolve())
    assert "beam_line.msh" in names and "plate_quad.msh" in names
    assert counts.split()[0] == "21"                # meshes/README.md: 21 nodes on the beam line
    assert not list(empty.iterdir())                # listing and reading wrote nothing


def test_installed_wheel_runs_a_case_that_imports_its_sibling_helper(installed, tmp_path):
    """cart_pendulum imports cases/_comparison.py (shipped as flexmbs/cases/_comparison.py): `flexmbs
    run` from an empty folder finds it and writes one run into results.h5."""
    venv, python, scripts, site, env = installed
    empty, out = tmp_path / "empty", tmp_path / "cart"
    empty.mkdir()
    flexmbs = scripts / ("flexmbs.exe" if os.name == "nt" else "flexmbs")
    proc = subprocess.run([str(flexmbs), "run", "cart_pendulum", "--no-plots", "--no-paraview", "--out", str(out),
                           "--set", "t_end=0.05", "--set", "dt_out=0.05"], cwd=empty, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "run volterra-reduced: finished, 2 outputs to t = 0.05 s" in proc.stdout
    assert (out / "results.h5").is_file() and (out / "summary.json").is_file()
    code = ("import flexmbs.cli as c; c.load_case(c.discover_cases(c.find_cases_dir())['cart_pendulum']); "
            "import _comparison; print(_comparison.__file__)")
    proc = subprocess.run([str(python), "-c", code], cwd=empty, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).resolve() == (site / "flexmbs" / "cases" / "_comparison.py").resolve()
