"""The classes converted from ``@dataclass(frozen=True)`` to `flexmbs.frozen.FrozenFields` behave as
the dataclasses did: keyword (and, where the dataclass allowed it, positional) construction with the
same defaults, the same repr, equality only within a class, the same hash, frozen-ness, pickling.

The reference is the dataclass itself, made here from each class's ``_fields`` and ``__init__``
signature with `dataclasses.make_dataclass` (same fields, defaults, frozen, kw_only): each converted
class's repr, ``==`` and hash are compared with that dataclass's on the same values."""
import ast
import dataclasses
import inspect
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from flexmbs.assembly.invariants import BodyInvariants
from flexmbs.block_mass import BlockMass, MassGroup
from flexmbs.bodies.base import PartKinematics
from flexmbs.cli import CaseInfo
from flexmbs.compiled import KernelStatus
from flexmbs.elements.base import InertiaIntegrals, MassPoints, Material, SBlock
from flexmbs.formulations._common import Energies
from flexmbs.formulations.base import SecondOrderForm
from flexmbs.formulations.registry import Entry
from flexmbs.formulations.stabilization import Partition
from flexmbs.formulations.terms import DAETerm, ODETerm, SparseStep
from flexmbs.frozen import Fields, FrozenFields
from flexmbs.integrators.budget import RunSize
from flexmbs.integrators.simulate import Solution, StepRule
from flexmbs.io.fe_import import NodeCloud
from flexmbs.io.recovery import Superblock
from flexmbs.io.store import _Extent
from flexmbs import kernel_schema
from flexmbs.kernel_schema import Field, Record
from flexmbs.mesh import Mesh, MeshError
from flexmbs.model import DistributedLoad, NodalLoad, SurfaceLoad
from flexmbs.motion import FrameState, FrameStates
from flexmbs.results import BodyResults, Results

CONVERTED = [SparseStep, ODETerm, DAETerm, Solution, StepRule, FrameState, FrameStates, MassGroup, BlockMass, Superblock,
             RunSize, Partition, Entry, CaseInfo, Energies, Results, BodyResults, Field, Record, KernelStatus,
             Material, NodalLoad, DistributedLoad, SurfaceLoad]
MUTABLE = [SecondOrderForm, PartKinematics, _Extent, MassPoints, SBlock, InertiaIntegrals]   # were @dataclass
# classes that check their values: valid ones, distinct per seed
VALID = {Material: lambda seed: {"E": 2.1e11 + seed, "rho": 7850.0 + seed, "nu": 0.3 - 0.01 * seed}}


def reference_dataclass(cls, frozen: bool = True):
    """The frozen dataclass with ``cls``'s fields, defaults and keyword-only-ness (what ``cls`` was); a
    ``dict | None = None`` parameter is the dataclass's ``field(default_factory=dict)``."""
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    assert [p.name for p in params] == list(cls._fields), cls
    kw_only = params[0].kind is inspect.Parameter.KEYWORD_ONLY
    spec = [(p.name, object) if p.default is inspect.Parameter.empty
            else (p.name, object, dataclasses.field(default_factory=dict)) if p.annotation == "dict | None"
            else (p.name, object, p.default) for p in params]
    made = dataclasses.make_dataclass(cls.__name__, spec, frozen=frozen, kw_only=kw_only)
    made.__qualname__ = cls.__qualname__
    return made, kw_only


def values(cls, seed: int = 0) -> dict:
    """A hashable value per field (distinct strings: the repr shows which went where; `VALID`'s
    numbers for a class that checks them)."""
    if cls in VALID:
        return VALID[cls](seed)
    return {name: f"{name}-{seed}" for name in cls._fields}


@pytest.mark.parametrize("cls", CONVERTED, ids=lambda c: c.__name__)
def test_construction_repr_eq_hash_as_the_dataclass(cls):
    ref, kw_only = reference_dataclass(cls)
    a, a_ref = cls(**values(cls)), ref(**values(cls))
    assert repr(a) == repr(a_ref)
    assert a == cls(**values(cls)) and a != cls(**values(cls, 1))
    assert hash(a) == hash(a_ref)
    assert (a == a_ref) is False and a.__eq__(a_ref) is NotImplemented     # another class: never equal
    assert cls.__match_args__ == ref.__match_args__                       # positional patterns
    if not kw_only:                                                       # positional as the dataclass
        assert cls(*values(cls).values()) == a
    else:
        with pytest.raises(TypeError):
            cls(*values(cls).values())


@pytest.mark.parametrize("cls", CONVERTED, ids=lambda c: c.__name__)
def test_defaults_as_the_dataclass(cls):
    ref, _ = reference_dataclass(cls)
    required = {name: values(cls)[name] for name, p in inspect.signature(cls.__init__).parameters.items()
                if name != "self" and p.default is inspect.Parameter.empty}
    extra = {"forcing": required["rhs"]} if cls is ODETerm else {}        # ODETerm: forcing None is rhs
    if cls is Results:                                                    # its one-body fields None: empty
        extra = {"delta": np.zeros((3, 0)), "delta_dot": np.zeros((3, 0)), "displacement": np.zeros((3, 0, 3)),
                 "velocity": np.zeros((3, 0, 3)), "nodes": np.zeros((0, 3))}
    assert repr(cls(**required)) == repr(ref(**required, **extra))
    with pytest.raises(TypeError):                                        # a required field missing
        cls(**dict(list(required.items())[1:]))


@pytest.mark.parametrize("cls", CONVERTED, ids=lambda c: c.__name__)
def test_frozen_pickled_replaced(cls):
    a = cls(**values(cls))
    name = cls._fields[-1]
    with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot assign to field '{name}'"):
        setattr(a, name, 1)
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'other'"):
        a.other = 1
    with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot delete field '{name}'"):
        delattr(a, name)
    assert pickle.loads(pickle.dumps(a)) == a
    new = values(cls, 1)[name]
    b = a.replace(**{name: new})
    assert getattr(b, name) == new and getattr(a, name) == values(cls)[name]
    assert [getattr(b, n) for n in cls._fields[:-1]] == [getattr(a, n) for n in cls._fields[:-1]]


def test_ode_term_forcing_defaults_to_rhs_also_in_replace():
    """ODETerm's former __post_init__: forcing None is rhs (M_full = I), also in a replaced copy."""
    def rhs(t, x):
        return x
    term = ODETerm(name="t", n_state=2, rhs=rhs)
    assert term.forcing is rhs and term.replace(name="u").forcing is rhs


def test_array_fields_compare_as_the_dataclass():
    """Equal only if the arrays are the same objects (the tuple comparison of a dataclass's __eq__;
    equal values in other arrays make numpy's truth value ambiguous, as before)."""
    z = np.zeros(3)
    a = FrameState(np.eye(3), z, z, z, z, z)
    assert a == FrameState(a.R, z, z, z, z, z)
    with pytest.raises(ValueError, match="ambiguous"):
        _ = a == FrameState(np.eye(3), z, z, z, z, z)
    with pytest.raises(TypeError, match="unhashable"):
        hash(a)


@pytest.mark.parametrize("cls", MUTABLE, ids=lambda c: c.__name__)
def test_mutable_ones_as_the_dataclass(cls):
    """A (non-frozen) dataclass: the same repr and ==, unhashable, fields assignable, pickled, replaced."""
    ref, _ = reference_dataclass(cls, frozen=False)
    a = cls(**values(cls))
    assert repr(a) == repr(ref(**values(cls))) and cls(*values(cls).values()) == a != cls(**values(cls, 1))
    assert cls.__match_args__ == ref.__match_args__
    with pytest.raises(TypeError, match="unhashable"):
        hash(a)
    name = cls._fields[-1]
    setattr(a, name, "new")
    assert getattr(a, name) == "new" and pickle.loads(pickle.dumps(a)) == a
    assert a.replace(**{name: "other"}) == cls(**{**values(cls), name: "other"})


def test_no_class_of_a_run_is_a_dataclass_any_more():
    """The converted classes stay plain classes (docs/design.md "Hot-import classes are plain classes")."""
    assert not any(dataclasses.is_dataclass(c) for c in CONVERTED + MUTABLE)
    assert all(issubclass(c, FrozenFields) for c in CONVERTED)
    assert all(issubclass(c, Fields) and not issubclass(c, FrozenFields) for c in MUTABLE)



def test_fields_are_declared_once_by_the_init():
    """``_fields`` is read from ``__init__``'s parameters (flexmbs.frozen.init_fields), not written out;
    a ``dict | None`` parameter is the one kind of default built per instance."""
    for cls in CONVERTED + MUTABLE:
        assert cls._fields == tuple(inspect.signature(cls.__init__).parameters)[1:], cls
        assert cls._new_dicts == tuple(n for n, p in inspect.signature(cls.__init__).parameters.items()
                                       if p.annotation == "dict | None"), cls
    a, b = Results(t=np.zeros(1)), Results(t=np.zeros(1))
    assert a.stats == {} and a.stats is not b.stats                        # a new {} each, as default_factory


def test_mesh_as_the_dataclass():
    """Mesh (was a mutable dataclass with default_factory dicts and a __post_init__ check): positional
    or keyword construction, new {} sets each, its own repr, == within the class, unhashable,
    mutable, pickled; ``replace`` checks again."""
    points, cells = np.array([[0.0, 0.0], [1.0, 0.0]]), {"line": np.array([[0, 1]])}
    a, b = Mesh(points, cells), Mesh(points=points, cells=cells, source="generated")
    assert a.node_sets == {} and a.node_sets is not b.node_sets and a.element_sets == {}
    assert (a == Mesh(points, cells, source="x")) is False and a.__eq__(points) is NotImplemented
    assert repr(a) == "Mesh(2 nodes in 2D; line: 1; node sets []; element sets []; from generated)"
    with pytest.raises(TypeError, match="unhashable"):
        hash(a)
    a.source = "renamed"
    c = pickle.loads(pickle.dumps(a))
    assert c.source == "renamed" and np.array_equal(c.points, points) and np.array_equal(c.cells["line"], [[0, 1]])
    with pytest.raises(MeshError, match="refers to node 2 but the mesh has 2 nodes"):
        a.replace(cells={"line": np.array([[0, 2]])})
    cloud = NodeCloud(np.zeros((2, 3)), {})       # a subclass's own __post_init__ runs (vertices only), not Mesh's
    assert cloud.cells["vertex"].tolist() == [[0], [1]] and cloud.node_sets == {}


def test_body_invariants_derived_fields_as_the_dataclass():
    """BodyInvariants: G and g (a dataclass's field(init=False)) are computed by __init__, shown and
    compared after the fields, computed again by ``replace``; not constructor arguments."""
    n = 2
    S = {(0, 0): np.eye(n), (1, 1): 2 * np.eye(n), (0, 1): np.ones((n, n))}
    d = np.arange(9 * n, dtype=float).reshape(3, 3, n)
    inv = BodyInvariants(np.eye(n), S, np.zeros((3, n)), d, 1.0, np.zeros(3), np.eye(3))
    assert inv._fields == ("M", "S", "m_O", "d", "mass", "s", "J") and inv._shown[-2:] == ("G", "g")
    assert repr(inv).startswith("BodyInvariants(M=array(") and ", G=[" in repr(inv) and ", g=array(" in repr(inv)
    # G_i = sum_ab (e_i~)[a, b] S[a, b]: e_z~ has (0, 1) = -1, so G_3 = -S[0, 1]; e_x~, e_y~ meet no
    # stored block (None); g_i = sum_ab (e_i~)[a, b] d[a, b], e.g. g_3 = d[1, 0] - d[0, 1]
    assert inv.G[0] is None and inv.G[1] is None and np.array_equal(inv.G[2], -np.ones((n, n)))
    assert np.array_equal(inv.g[2], d[1, 0] - d[0, 1]) and np.array_equal(inv.g[0], d[2, 1] - d[1, 2])
    again = inv.replace(S={(0, 0): np.eye(n)})
    assert again.G == [None, None, None] and again.mass == 1.0
    with pytest.raises(TypeError, match="unexpected keyword argument 'G'"):
        BodyInvariants(np.eye(n), S, np.zeros((3, n)), d, 1.0, np.zeros(3), np.eye(3), G=[])
    with pytest.raises(TypeError, match="unhashable"):
        hash(inv)


ROOT = Path(__file__).resolve().parents[1]
RUN_PATH = ("flexmbs.cli", "flexmbs.case", "flexmbs.compiled", "flexmbs.system", "flexmbs.system_run",
            "flexmbs.integrators.index3_alpha", "flexmbs.results", "flexmbs.motion",          # triple pendulum
            "flexmbs.model", "flexmbs.elements.bar2", "flexmbs.mesh.generate", "flexmbs.assembly.invariants",
            "flexmbs.modal", "flexmbs.formulations", "flexmbs.integrators")                   # cases/rotating_bar.py


def test_the_run_path_does_not_import_dataclasses():
    """The modules of the triple pendulum's run and of cases/rotating_bar.py import no `dataclasses`
    (its `FrozenInstanceError` is imported when one is raised): docs/design.md "Hot-import classes
    are plain classes"."""
    code = f"import sys\nfor m in {RUN_PATH!r}: __import__(m)\nprint('dataclasses' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_setup_loads_the_schema_without_the_package():
    """setup.py's ``load_schema`` reads flexmbs/kernel_schema.py and the flexmbs/frozen.py it imports
    by their paths, with numpy unimportable; its header is the one in csrc/, and the stand-in
    package ``flexmbs`` is gone afterwards.  Only setup.py's imports, ROOT and functions are run
    (not its ``setup()`` call)."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    parts = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom, ast.FunctionDef))
             or (isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "ROOT")]
    code = (f"import sys\nsys.modules['numpy'] = None\n"
            f"namespace = {{'__file__': {str(ROOT / 'setup.py')!r}, '__name__': 'setup_parts'}}\n"
            f"exec(compile({ast.unparse(ast.Module(body=parts, type_ignores=[]))!r}, 'setup.py', 'exec'), namespace)\n"
            f"schema = namespace['load_schema']()\n"
            f"import json\nprint(json.dumps([schema.c_header(), 'flexmbs' in sys.modules, type(schema.HEADER).__name__]))")
    out = subprocess.run([sys.executable, "-c", code], cwd="/", capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": ""})
    assert out.returncode == 0, out.stderr
    header = kernel_schema.c_header()                      # what the package's own import generates
    assert json.loads(out.stdout) == [header, False, "Record"] and "#define HEADER_WIDTH" in header
