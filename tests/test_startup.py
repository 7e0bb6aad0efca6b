"""Start-up (issue 22, item 2): ``import flexmbs`` loads no submodule, the public names load on
first use, `flexmbs --version` and `flexmbs cases` answer without numpy, and a run with
``--no-plots`` never imports matplotlib.

Each check runs a fresh interpreter (a module imported once stays in ``sys.modules``, so only a new
process shows what an import costs) and reads its ``sys.modules`` at the end; no timings are
asserted (the measured CPU times are in docs/benchmarks.md, "Start-up").
"""
from __future__ import annotations

import ast
import importlib
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import flexmbs

ROOT = Path(__file__).resolve().parents[1]

# the imports that cost more than a few ms of CPU each (docs/benchmarks.md, "Start-up")
HEAVY = ("numpy", "scipy", "scipy.sparse", "scipy.linalg", "scipy.sparse.linalg", "scipy.integrate",
         "scipy.optimize", "h5py", "meshio", "matplotlib", "rich", "dask", "distributed")


def modules_after(code: str, cwd: Path = ROOT) -> set[str]:
    """The `HEAVY` modules loaded once ``code`` has run (or exited) in a new interpreter that
    imports this checkout's flexmbs."""
    wrapper = (f"import sys\ntry:\n{textwrap.indent(textwrap.dedent(code), '    ')}\nfinally:\n"
               f"    print('\\nLOADED ' + repr(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", wrapper], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr     # the code's own checks passed
    line = proc.stdout.rstrip().splitlines()[-1]
    assert line.startswith("LOADED "), proc.stdout + proc.stderr
    return set(eval(line[len("LOADED "):]))


def test_import_flexmbs_loads_no_heavy_module():
    assert modules_after("import flexmbs") == set()


@pytest.mark.parametrize("argv", [["--version"], ["cases"]], ids=["version", "cases"])
def test_version_and_cases_answer_without_numpy(argv):
    loaded = modules_after(f"from flexmbs.cli import main\nsys.exit(main({argv!r}))")
    assert loaded == set(), f"flexmbs {' '.join(argv)} imported {sorted(loaded)}"


@pytest.mark.parametrize("option", [["--no-plots"], ["--set", "plots=false"]], ids=["no-plots", "set-plots-false"])
def test_run_without_plots_never_imports_matplotlib(tmp_path, option):
    argv = ["run", "rotating_bar", "--cases", str(ROOT / "cases"), "--out", str(tmp_path / "out"), "--no-paraview",
            "--set", "elements=3", "--set", "t_end=0.001", "--set", "dt_out=5e-4", *option]
    loaded = modules_after(f"from flexmbs.cli import main\nrc = main({argv!r})\nassert rc == 0, rc", cwd=tmp_path)
    assert "numpy" in loaded                            # it did run
    assert (tmp_path / "out" / "results.npz").is_file()
    assert "matplotlib" not in loaded
    assert not list((tmp_path / "out").glob("*.png"))


def test_importing_plots_does_not_import_matplotlib():
    """The cases import `flexmbs.plots` in their plot branch; the module itself loads
    matplotlib only with its first figure."""
    assert "matplotlib" not in modules_after("import flexmbs.plots")


def test_every_public_name_resolves_to_its_submodule_object():
    for name in flexmbs.__all__:
        value = getattr(flexmbs, name)
        assert value is not None, name
        if name != "__version__":
            source = importlib.import_module(flexmbs._PUBLIC[name])
            assert value is (source if source.__name__.endswith("." + name) else getattr(source, name)), name
    assert set(flexmbs.__all__) <= set(dir(flexmbs))
    assert (flexmbs.generate.__name__, flexmbs.run.__module__) == ("flexmbs.mesh.generate", "flexmbs.analysis")
    from flexmbs import Model, load_results, run          # `from flexmbs import X` of the cases and tests
    assert (Model, load_results, run) == (flexmbs.Model, flexmbs.io.load_results, flexmbs.run)


def test_every_flexmbs_name_in_the_api_reference_resolves():
    """docs/api.md names objects as ``flexmbs.a.b``: each must import (module) or be an attribute."""
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    names = sorted(set(re.findall(r"\bflexmbs(?:\.[A-Za-z_]\w*)+", text)))
    assert len(names) > 50
    for dotted in names:
        parts = dotted.split(".")
        obj = importlib.import_module("flexmbs")
        for i, part in enumerate(parts[1:], start=1):
            try:
                obj = getattr(obj, part)
            except AttributeError:
                obj = importlib.import_module(".".join(parts[:i + 1]))
        assert obj is not None, dotted


@pytest.mark.slow
def test_submodules_import_alone_in_a_fresh_interpreter():
    """No import cycle appears now that ``flexmbs/__init__`` imports nothing first: each module a
    script may start from imports on its own."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for module in ("flexmbs.analysis", "flexmbs.system", "flexmbs.system_run", "flexmbs.io",
                   "flexmbs.mechanisms", "flexmbs.integrators", "flexmbs.formulations", "flexmbs.bodies"):
        proc = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True,
                              cwd=ROOT, env=env, timeout=120)
        assert proc.returncode == 0, f"import {module}: {proc.stderr}"


def test_a_run_without_a_results_file_loads_no_hdf5_mesh_reader_or_plotting():
    """`flexmbs.run` imports `flexmbs.io.store` (h5py) only for a results file; a generated mesh
    needs no meshio."""
    loaded = modules_after("""
        import flexmbs as fm
        model = fm.Model(fm.generate.line(3, 1.0), fm.Bar2(fm.Material(E=1e9, rho=1000.0), 1e-4),
                         motion=fm.motion.ConstantRotation(10.0), fixed=[("start", "all")])
        assert fm.run(model, t_end=1e-3, dt_out=5e-4).status == "finished"
    """)
    assert "numpy" in loaded                            # it did run
    assert not loaded & {"h5py", "meshio", "matplotlib", "rich", "dask", "distributed"}, sorted(loaded)


def test_submodules_are_attributes_of_the_package_as_before():
    """``import flexmbs as fm; fm.mesh.sample(...)``: a submodule used as an attribute is
    imported on first use (the eager ``__init__`` had imported these)."""
    loaded = modules_after("""
        import flexmbs as fm
        assert fm.mesh.samples() and fm.mechanisms.FourBar and fm.constraints.Revolute and fm.bodies.PointMass
        assert fm.analysis.output_times(1.0, 0.5).tolist() == [0.0, 0.5, 1.0]
        assert fm.plots.save and fm.model.rayleigh_coefficients
        print("ok")
    """)
    assert "numpy" in loaded and "matplotlib" not in loaded


# module -> the files that may import it at module level (the module that exists to wrap it)
DEFERRED = {"matplotlib": (), "meshio": (), "dask": (), "distributed": (),
            "h5py": ("flexmbs/io/store.py", "flexmbs/io/h5create.py")}


def module_level_imports(path: Path) -> set[str]:
    """Top-level package names imported by ``path`` outside functions and classes."""
    names, todo = set(), list(ast.parse(path.read_text(encoding="utf-8")).body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            todo.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt))
    return names


def test_plotting_hdf5_mesh_files_and_dask_are_imported_where_used():
    offenders = []
    for path in sorted([*ROOT.glob("flexmbs/**/*.py"), *ROOT.glob("cases/*.py")]):
        rel = path.relative_to(ROOT).as_posix()
        offenders += [f"{rel} imports {name} at module level" for name in module_level_imports(path) & set(DEFERRED)
                      if rel not in DEFERRED[name]]
    assert offenders == []


def test_module_level_imports_sees_imports_under_if_and_try(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("import os\ntry:\n    import h5py\nexcept ImportError:\n    pass\nif True:\n"
                    "    from matplotlib.figure import Figure\ndef f():\n    import meshio\n")
    assert module_level_imports(path) == {"os", "h5py", "matplotlib"}


def test_reading_results_loads_h5py_but_not_the_paraview_writer_matrix_import_or_urdf_reader():
    """`flexmbs.io` loads each public name's submodule on first use (`flexmbs.lazy.lazy_package`)."""
    loaded = modules_after("""
        from flexmbs.io import load_results, recording
        import flexmbs.io as io
        assert sorted(io.__all__) == sorted(io._PUBLIC) and callable(io.export_paraview)
        assert 'meshio' not in sys.modules
    """)
    assert "h5py" in loaded and not loaded & {"scipy", "scipy.sparse", "matplotlib"}, sorted(loaded)


@pytest.mark.skipif(not __import__("flexmbs.compiled").compiled.kernel_status().installed,
                    reason="the compiled kernel is not installed (the numpy path uses scipy.linalg)")
@pytest.mark.parametrize("paraview", [True, False], ids=["paraview", "no-paraview"])
def test_a_quiet_rigid_run_on_the_compiled_step_imports_no_scipy_or_matplotlib(tmp_path, paraview):
    """scipy is imported where it is used (`flexmbs.lazy.LazyModule`, imports inside functions):
    the triple pendulum on index3-alpha's kernel needs none of it (about 0.25 s of CPU over numpy:
    docs/benchmarks.md section 20).  The ParaView files are written with h5py and numpy
    (`flexmbs.io.vtk_formats`, loaded only to write them): no meshio, and so no rich either (meshio
    imports it); ``-q`` makes no console."""
    argv = ["run", "triple_pendulum", "-q", "--cases", str(ROOT / "cases"), "--out", str(tmp_path / "out"),
            "--set", "t_end=0.01", "--set", "coordinates=euler-parameters", "--set", "integrator=index3-alpha",
            "--set", "stabilization=none", "--no-plots", *([] if paraview else ["--no-paraview"])]
    code = (f"from flexmbs.cli import main\nrc = main({argv!r})\nassert rc == 0, rc\n"
            f"assert ('flexmbs.io.vtk_formats' in sys.modules) == {paraview}, 'vtk_formats'")
    loaded = modules_after(code, cwd=tmp_path)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["kernel"] == "compiled", summary.get("kernel")            # it ran on the kernel
    assert {"numpy", "h5py"} <= loaded                                     # it ran, into results.h5
    assert not loaded & {"scipy", "scipy.sparse", "scipy.linalg", "matplotlib"}, sorted(loaded)
    assert not loaded & {"meshio", "rich"}, sorted(loaded)


def test_running_a_case_reads_its_own_file_only(tmp_path, caplog):
    """`flexmbs run CASE` reads CASE.py alone (its code object); the other files of the cases directory
    are read only to list them when CASE is not a case."""
    from flexmbs.cli import CLIError, find_case
    (tmp_path / "good.py").write_text('"""A case."""\nDEFAULTS = {}\ndef run(out=None):\n    pass\n')
    (tmp_path / "broken.py").write_text("def (:\n")            # discover_cases warns when it reads it
    with caplog.at_level("WARNING", logger="flexmbs.cli"):
        assert find_case("good", tmp_path).summary == "A case."
    assert "broken" not in caplog.text
    with caplog.at_level("WARNING", logger="flexmbs.cli"), pytest.raises(CLIError, match="no case 'god'.*'good'"):
        find_case("god", tmp_path)
    assert "skipping" in caplog.text and "broken.py" in caplog.text


@pytest.mark.parametrize("env", [{}, {"FORCE_COLOR": "1"}, {"TTY_COMPATIBLE": "1"}, {"TTY_COMPATIBLE": "0"}],
                         ids=["plain", "FORCE_COLOR", "TTY_COMPATIBLE=1", "TTY_COMPATIBLE=0"])
def test_progress_off_a_terminal_decides_as_rich_does_without_importing_it(env):
    """stderr is a pipe here: the display decides bar or lines as rich's `Console.is_terminal` would,
    and imports rich only where rich must decide (an environment variable that overrides isatty)."""
    code = """
        from flexmbs.progress import Display
        shown = Display()
        imported = 'rich' in sys.modules
        from rich.console import Console
        assert shown.enabled == Console(stderr=True).is_terminal and shown.lines == (not shown.enabled)
        print('IMPORTED', imported)
    """
    wrapper = "import sys\n" + textwrap.dedent(code)
    base = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    proc = subprocess.run([sys.executable, "-c", wrapper], capture_output=True, text=True, cwd=ROOT,
                          env={**base, **env, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[-1] == str(bool(env))


@pytest.mark.skipif(not __import__("flexmbs.compiled").compiled.kernel_status().installed,
                    reason="the compiled kernel is not installed (the numpy path uses scipy.linalg)")
def test_the_coupled_slider_crank_imports_no_scipy(tmp_path):
    """The flexible rod (8 beam elements, below the Model's ``dense_below``) is assembled dense with
    numpy (`flexmbs.assembly.Assembler`, docs/design.md "Dense small models") and packed for the
    kernel without scipy.sparse; its mesh check counts connected parts without scipy.sparse.csgraph.
    Importing any scipy subpackage costs about 0.2 s of CPU (docs/benchmarks.md section 13)."""
    argv = ["run", "slider_crank", "-q", "--cases", str(ROOT / "cases"), "--out", str(tmp_path / "out"),
            "--set", "coupled=true", "--set", "revolutions=0.02", "--no-plots", "--no-paraview"]
    loaded = modules_after(f"from flexmbs.cli import main\nrc = main({argv!r})\nassert rc == 0, rc", cwd=tmp_path)
    assert "numpy" in loaded and "h5py" in loaded                          # it ran, into results.h5
    assert not loaded & {"scipy", "matplotlib", "meshio", "rich"}, sorted(loaded)


def test_the_coupled_slider_crank_with_paraview_files_loads_no_meshio(tmp_path):
    """meshio is the mesh reader only: the ParaView files of a run (paraview.xdmf + .h5,
    paraview_final.vtu) are written by `flexmbs.io.vtk_formats` (about 75 ms of CPU saved: meshio's
    import pulls its CLI, every format and rich; docs/benchmarks.md section 13)."""
    argv = ["run", "slider_crank", "-q", "--cases", str(ROOT / "cases"), "--out", str(tmp_path / "out"),
            "--set", "coupled=true", "--set", "revolutions=0.02", "--no-plots"]
    loaded = modules_after(f"from flexmbs.cli import main\nrc = main({argv!r})\nassert rc == 0, rc", cwd=tmp_path)
    assert {"numpy", "h5py"} <= loaded                                     # it ran, into results.h5
    assert {p.name for p in (tmp_path / "out").iterdir()} >= {"paraview.xdmf", "paraview.h5", "paraview_final.vtu"}
    assert not loaded & {"scipy", "meshio", "rich", "matplotlib"}, sorted(loaded)


def test_the_rotating_bar_with_damping_imports_no_scipy(tmp_path):
    """The README's job (rotating bar, Rayleigh damping from its first two modes, method "exact"): a
    dense 10-DOF model, its modes by `flexmbs.modal.generalized_eigh`, its pre-stress by numpy's
    Cholesky, its propagation by `flexmbs.integrators.exact.expm`, the exact modal reference by
    numpy's eig: no scipy."""
    argv = ["run", "rotating_bar", "-q", "--cases", str(ROOT / "cases"), "--out", str(tmp_path / "out"),
            "--set", "damping=0.02", "--set", "t_end=0.002", "--no-plots", "--no-paraview"]
    loaded = modules_after(f"from flexmbs.cli import main\nrc = main({argv!r})\nassert rc == 0, rc", cwd=tmp_path)
    assert "numpy" in loaded and (tmp_path / "out" / "summary.json").is_file()
    assert not loaded & {"scipy", "matplotlib"}, sorted(loaded)


def loaded_modules(argv: list[str], cwd: Path) -> set[str]:
    """Every module in ``sys.modules`` after ``flexmbs`` ran ``argv`` in a new interpreter."""
    code = (f"import sys\nfrom flexmbs.cli import main\nrc = main({argv!r})\nassert rc == 0, rc\n"
            "print('\\nLOADED ' + repr(sorted(sys.modules)))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return set(eval(proc.stdout.rstrip().splitlines()[-1][len("LOADED "):]))


def flexmbs_set(names: str) -> set[str]:
    """``"a b.c"`` -> {"flexmbs", "flexmbs.a", "flexmbs.b.c"}."""
    return {"flexmbs", *(f"flexmbs.{n}" for n in names.split())}


# flexmbs's modules that the two commands below loaded on 2026-11-27 (branch s10-lean): a set that
# must not grow.  A module a change adds to one of these runs fails the test, naming it; remove a
# name here when a change stops loading it.
RIGID_COMPILED_RUN = flexmbs_set("""
    analysis assembly assembly.assembler block_mass bodies bodies.base bodies.loads
    bodies.motion bodies.natural bodies.planar bodies.point bodies.rigid body_motion case cli compiled constraints disk
    constraints.base constraints.batch constraints.driving constraints.joints constraints.mean_axis
    constraints.nonholonomic constraints.planar constraints.reaction_blocks formulations
    formulations._common formulations.augmented formulations.base formulations.constrained
    formulations.evaluations formulations.index1 formulations.registry formulations.stabilization
    formulations.terms formulations.udwadia_kalaba frozen integrators integrators.base integrators.budget
    integrators.index3_alpha integrators.simulate io io.dimensions io.h5create io.paraview io.recovery io.store
    io.vtk_formats kernel_schema lapack lazy motion newton package_data parameters pipes progress quadrature
    results rotations stiffness system system_run user_functions validity""")

README_JOB = flexmbs_set("""
    analysis arrays assembly assembly.assembler assembly.invariants case cli compiled constraints disk
    constraints.base elements elements._line elements.bar2 elements.base elements.lagrange elements.plate
    elements.quad4
    formulations formulations._common formulations.base formulations.lagrange formulations.registry
    formulations.steady_energies formulations.terms frozen integrators integrators.base integrators.budget
    integrators.exact integrators.simulate io io.dimensions io.h5create io.paraview io.recovery io.store io.vtk_formats
    kernel_schema lapack lazy mesh mesh.faces mesh.generate mesh.io mesh.mesh mesh.samples mesh.topology modal
    model motion package_data parameters pipes progress quadrature results rotations signals stiffness
    user_functions validity""")
# modules of the standard library and numpy that these runs do not use (np.unique imports numpy.ma,
# hashlib is a Model run's mesh checksum only, ctypes.util runs `ldconfig -p`): docs/benchmarks.md 13.3
NOT_USED = {"numpy.ma", "ctypes.util", "scipy", "matplotlib", "meshio", "rich", "difflib", "decimal",
            "flexmbs.fmi", "flexmbs.bodies.tree"}
OTHER_INTEGRATORS = {f"flexmbs.integrators.{m}" for m in ("rk", "adams_bashforth", "midpoint", "generalized_alpha",
                                                           "rattle", "radau_dae")}


@pytest.mark.skipif(not __import__("flexmbs.compiled").compiled.kernel_status().installed,
                    reason="the compiled kernel is not installed (the numpy path uses scipy.linalg)")
def test_a_compiled_rigid_run_loads_no_module_beyond_its_recorded_set(tmp_path):
    """The triple pendulum on index3-alpha's kernel (section 13.3's command, 10 steps): its own
    integrator only (`flexmbs.integrators.INTEGRATORS` imports the one asked), none of the Model's
    formulations but the index-1 one the case builds, no hashlib."""
    argv = ["run", "triple_pendulum", "-q", "--cases", str(ROOT / "cases"), "--out", str(tmp_path / "out"),
            "--set", "t_end=0.01", "--set", "coordinates=euler-parameters", "--set", "integrator=index3-alpha",
            "--set", "stabilization=none", "--no-plots"]
    loaded = loaded_modules(argv, tmp_path)
    assert "flexmbs.integrators.index3_alpha" in loaded                    # it ran
    assert sorted(m for m in loaded if m.startswith("flexmbs") and m not in RIGID_COMPILED_RUN) == []
    not_used = NOT_USED | OTHER_INTEGRATORS | {
        "hashlib", "flexmbs.model", "flexmbs.bodies.flexible", "flexmbs.elements", "flexmbs.integrators.exact", "flexmbs.formulations.lagrange", "flexmbs.formulations.gibbs_appell",
        "flexmbs.formulations.hamilton", "flexmbs.contact", "flexmbs.bodies.corotational", "flexmbs.constraints.gears"}
    assert not loaded & not_used, sorted(loaded & not_used)


def test_the_readme_job_loads_no_module_beyond_its_recorded_set(tmp_path):
    """The rotating bar with damping (method "exact", a Model on its frame): integrator "exact"
    only, formulation lagrange only, no joint and no body (`flexmbs.constraints` and
    `flexmbs.bodies` load their names on use; the case's summary reads `flexmbs.compiled`, which
    reads the drivers' laws of `flexmbs.constraints.base`)."""
    argv = ["run", "rotating_bar", "-q", "--cases", str(ROOT / "cases"), "--out", str(tmp_path / "out"),
            "--set", "damping=0.02", "--set", "t_end=0.002", "--no-plots"]
    loaded = loaded_modules(argv, tmp_path)
    assert "flexmbs.integrators.exact" in loaded                            # it ran
    assert sorted(m for m in loaded if m.startswith("flexmbs") and m not in README_JOB) == []
    not_used = NOT_USED | OTHER_INTEGRATORS | {"flexmbs.integrators.index3_alpha", "flexmbs.formulations.hamilton",
                                               "flexmbs.elements.hex8", "flexmbs.elements.tet10", "flexmbs.elements.beam3d",
                                               "flexmbs.formulations.gibbs_appell", "flexmbs.bodies.flexible",
                                               "flexmbs.bodies.corotational", "flexmbs.bodies.rigid",
                                               "flexmbs.constraints.joints", "flexmbs.bodies"}
    assert not loaded & not_used, sorted(loaded & not_used)


def test_lazy_table_imports_on_lookup_only():
    """`flexmbs.lazy.LazyTable`: names without imports, an object imported on lookup and kept, and
    a source that is not 'module:attribute' refused by name."""
    from flexmbs.lazy import LazyTable
    table = LazyTable({"join": "os.path:join", "nope": "flexmbs_no_such_module:x"})
    assert list(table) == ["join", "nope"] and len(table) == 2 and "join" in table and "x" not in table
    assert table["join"] is os.path.join and table.source("nope") == "flexmbs_no_such_module:x"
    with pytest.raises(ModuleNotFoundError):
        table["nope"]
    with pytest.raises(KeyError):
        table["x"]
    with pytest.raises(ValueError, match=r"`sources` must map each name to 'module:attribute', got \{'a': 'os'\}"):
        LazyTable({"a": "os"})


def test_the_integrators_and_formulations_tables_name_their_classes():
    """Each entry of the lazy tables resolves to the class registered under that name."""
    from flexmbs.formulations import FORMULATIONS
    from flexmbs.integrators import INTEGRATORS
    assert all(cls.name == name for name, cls in INTEGRATORS.items())
    assert {name: cls.__name__ for name, cls in FORMULATIONS.items()} == {
        "lagrange": "Lagrange", "gibbs-appell": "GibbsAppell", "hamilton": "Hamilton"}


def test_isinstance_of_answers_without_importing_an_absent_module():
    """`flexmbs.lazy.isinstance_of`: False for a class whose module is not loaded (no object of it
    can exist), the usual isinstance once it is, and any of several classes."""
    code = """
        from collections import OrderedDict
        from flexmbs.lazy import isinstance_of
        assert not isinstance_of(OrderedDict(), "flexmbs.bodies.flexible:FlexibleBody")
        assert "flexmbs.bodies.flexible" not in sys.modules
        assert isinstance_of(OrderedDict(), "flexmbs.bodies.flexible:FlexibleBody", "collections:OrderedDict")
        assert isinstance_of(OrderedDict(), "collections:Counter", "builtins:dict")
        assert not isinstance_of(1.0, "collections:OrderedDict", "builtins:no_such_class")
    """
    assert "numpy" not in modules_after(code)
