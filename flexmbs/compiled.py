"""The compiled step: a `flexmbs.System` packed into arrays for the C kernel ``_flexmbs_kernel``.

A step of a small multibody system on the numpy path costs a few hundred Python and numpy
calls on arrays of a few dozen numbers (docs/benchmarks.md, sec. 11). The kernel
(csrc/index3_kernel.c, built by ``pip install`` when a C compiler is present) evaluates the
same equations with loops in C and runs the whole Newton iteration of ``index3-alpha`` there,
one call for many steps (and the step-size control of ``index3-alpha-adaptive``, `steps`' ``adaptive``
tuple; `flexmbs.kernel_schema.METHODS` lists the methods it steps); for method ``radau-dae`` it
evaluates M, Q, C and C_q, one call per evaluation (`CompiledSystem.terms`), while that
method's steps, solves and step control stay numpy (`flexmbs.integrators.radau_dae`); so it does for the
index-1 formulations "lagrange" and "udwadia-kalaba" on a System (`flexmbs.formulations.evaluations`). Its formulas
are those of the numpy code, which stays the reference and the fallback:

- `flexmbs.bodies.RigidBodyEP`: M and Q_v of `flexmbs.bodies.rigid.EPBatch`, gravity, the
  exact dQ_v/dv (the quadratic form differenced with unit steps) and the loads of
  `flexmbs.bodies.loads` (torques and forces, global or body-fixed, constant or functions of t
  tabulated at the step times like the drivers' laws; springs and dashpots to the ground); a
  user's own load callable is not compiled;
- `flexmbs.bodies.FlexibleBody` (``reference`` "supports" or "mean-axis"; ``stiffening`` "none",
  "axial-strain", "omega" or "modal-stress"; its Model's `flexmbs.model.NodalLoad` s with their functions
  of t, `_nodal_loads`, csrc ``flex_nodal_loads``: Q_delta += Q f(t), and on the frame the forces' sum,
  V(p, y)^T F and the moments' 2 G^T T, as `FlexibleBody.applied_forces`): the invariant contractions of its M, Q_v and
  dQ_v/dv, [k], Rayleigh damping, gravity, the axial-strain force and stiffness
  (`flexmbs.bodies.axial_strain`), the "modal-stress" force (sum_i q_i G_i) q of a reduced body and its
  tangent, and the "omega" force sum_i c_i K_g,i delta and stiffness
  [k] + sum_i c_i K_g,i with the Model's unit geometric stiffnesses and the coefficients of
  ``FlexibleBody._omega_coefficients`` (A_f = tilde(omega)^2, omega = 2 G(p) p'; alpha = -A^T g; the
  load factors f_i(t) from the time row).
  As on the numpy path, dQ_v/dv leaves out the p'-dependence of that force (it stays in the
  finite-difference C_t);
- constraints: the Euler-parameter norms, the mean-axis conditions B delta = 0
  (`flexmbs.constraints.mean_axis`, constant B) and the joints of `flexmbs.constraints.batch.JointBatch`
  (point, dot1, dot2, dist, the angle rows of `AngleDriver` and the screw rows of `Screw`) on the frame markers of these
  bodies and the ground;
- planar systems: `flexmbs.bodies.RigidBody2D` (constant M = diag(m, m, I_G), Q the weight and
  the loads of `flexmbs.bodies.loads` (torques, point forces, springs and dashpots to the ground,
  csrc ``planar_load``), no quadratic-velocity terms: dQ_v/dv = 0) with `flexmbs.constraints.planar.PlanarRevolute` (those of
  the System's pair batch and single ones) and `PlanarPrismatic` between these bodies and the ground
  (e.g. IFToMM A01 and A02, cases/pendulum_a01.py and cases/double_four_bar.py);
- `flexmbs.bodies.CorotationalBeam2D` (csrc ``corot2d_bodies``, `corotational_arrays`): its constant M, its
  weight and the elements' corotational internal forces of `flexmbs.elements.corotational` (Q = Q_g - f_int,
  no Q_v, the same terms for Gibbs-Appell; K_el left to the finite-difference tangent, as the numpy System
  gives none), with `PlanarRevolute` on its nodes, `PlanarPrismatic` on its Node(0) and a 2D `Spherical`
  (planar revolute rows, `planar_side`) and `SpringDamper` and `RotationalSpringDamper` on its nodes, e.g.
  cases/flexible_pendulum.py; without loads of its own;
- `flexmbs.bodies.CorotationalBeam3D` (csrc ``corot3d_bodies``, `corotational_3d_arrays`), in Lagrange's form:
  M(q) = its constant translational mass plus T(psi_k) J0_k T(psi_k)^T on each node's rotation vector, Q = the
  weight + the rotary quadratic-velocity terms - the elements' corotational internal forces (the closed forms of
  `flexmbs.elements.corotational3d`; K_t, C_t by the kernel's differences), the joint batch's markers on its
  nodes (MARKER code "corot3d": a node's point x_k, node 0's section vectors R(psi_0) u; `beam_joint_axes`
  refuses axes on the beam with a point on another node) and `SpringDamper` on its nodes; without loads of its
  own, and not for Gibbs-Appell (the numpy GibbsAppellSystem has no terms for it);
- `flexmbs.constraints.CoordinateDriver` (C = q_k - f(t)) on a body of either kind;
- `flexmbs.bodies.RigidBodyNatural` (q = (R, a, b, c): constant M = Sigma (x) I_3, Q the weight and the
  loads of `flexmbs.bodies.loads`, dQ_v/dv = 0, M_GA = M and g = 0), its `NaturalRigidity` rows and the
  markers r = R + A y (a constant Jacobian, zero bias) of the joint batch's rows on it (`_markers`, MARKER
  codes), the force elements on it (SIDE natural) and its controllers' sensors (`sensor_row`);
- `flexmbs.bodies.PointMass` (M = m I, Q = m g; without loads of its own) and the force elements
  between bodies of `flexmbs.forces` (`SpringDamper`, `RotationalSpringDamper`, `Bushing`: their
  measures, G^T F and the material tangent G^T diag(k) G, csrc ``force_measure``) between the ground,
  `RigidBodyEP`, `RigidBody2D`, `PointMass` and `RigidBodyNatural` bodies, their actuators tabulated like the
  loads' functions of time (`_force_element`).

The inertia terms are Lagrange's (above: M and Q_v from the invariants) or, with
``CompiledSystem(system, formulation="gibbs-appell")`` (`flexmbs.formulations.gibbs_appell_system`),
Gibbs-Appell's M_GA and g of dS/dq'' = M_GA q'' + g, computed by the kernel itself as the numpy
``gibbs_appell`` of each body kind does: a `RigidBodyEP` from its inertia about the centroid (csrc
``rigid_ga``), a `FlexibleBody` (full or reduced) from its mass points, packed as the ``point_*``
arrays (`mass_point_arrays`, csrc ``flex_ga``); `RigidBody2D` and `PointMass` have M_GA = M, g = 0.
The header's ``formulation`` field declares which; dQ_v/dv is then zero (the Gibbs-Appell term gives
no analytic dg/dv: C_t by finite differences, as on the numpy path).  docs/formulations_system.md,
"Which formulations run compiled", says why the others (Hamilton, Maggi, Kane, Volterra) cannot.

The laws f(t) of the angle and coordinate drivers are Python callables: they are evaluated here
at the step times and passed to the kernel as a table (the angle drivers first), and so are the
loads' functions of time (the torques' and forces' vectors, the force elements' actuators, and each
NodalLoad's factor f_i(t), a number in its group of 3; a NodalLoad without ``f`` has none); a function with an ``at_times(times) -> (k, 3)`` method (the held
outputs of `flexmbs.control`) is evaluated at all the step times of a call at once, and in a
controlled run not tabulated at all: the kernel reads its vector from the ``held`` array that the
controllers' samples write within the call (`steps`' control tuple, `flexmbs.control.KernelSampling`,
which also gives the kernel the sensors it evaluates in C: `sensor_row`).  index3-alpha-adaptive's kernel, which chooses its step times as
it goes, evaluates a law that declares ``affine`` itself (`time_law`: constant_speed's, a constant load's;
the TIME_LAW rows) and asks Python for the others' row once per trial step (`law_row`); gamma and C_t of
the constraints it computes itself (csrc ``constraint_rates``, `constraint_rates`).

`kernel_status()` says whether the kernel is installed (and where) or why not; every case's
summary.json says so too, with the path its runs took (`summary_keys`: ``kernel_installed``,
``kernel``: "compiled", "numpy", "mixed" or "none" when no run could take the kernel).

The contract with the kernel is declared in `flexmbs.kernel_schema`: the packed system is a dict
of arrays by declared names, each fixed-width row (header, rigid body, load, planar joint, sensor,
...) is filled by field name (`Record.row`), the C side reads them through the header setup.py
generates from the same declaration, and a kernel built from another declaration (its ``SCHEMA``)
is not used (`version_mismatch`).

`CompiledSystem(system)` packs a system and raises `Unsupported` (naming what is not covered)
for anything else (e.g. tree bodies, and loads of a `RigidBodyEP` or a `RigidBody2D`
that are a user's own callables, not made by `flexmbs.bodies.loads`); `index3-alpha` then runs on the
numpy path (option ``kernel``: "auto", "compiled", "numpy").  tests/test_compiled.py checks every array against the numpy path and
whole runs against each other.
"""
from __future__ import annotations

import numpy as np

from . import kernel_schema as schema
from .assembly.assembler import csr_parts, dense_array, is_sparse
from .constraints.base import law_history, law_values
from .user_functions import UserFunctionError, evaluate, require_finite
from .frozen import FrozenFields
from .lazy import LazyModule, loaded_class

sparse = LazyModule("scipy.sparse")

__all__ = ["CompiledSystem", "Unsupported", "KERNEL_CHOICES", "choose_kernel", "time_law", "KernelStatus",
           "kernel_status", "c_compiler", "note_path", "summary_keys", "FORMULATIONS", "mass_point_arrays",
           "MAX_ELASTIC", "SENSOR_KINDS", "NO_CONTROL"]

KERNEL_VERSION = 4      # the `steps` call of csrc/index3_kernel.c this module makes (2: with lam_out; 3: with
                        # the control tuple: samples called from the steps, held load vectors, sensors; 4: a
                        # fourth int parameter, index3-alpha's `kept_stop`)


def version_mismatch(module) -> str | None:
    """Why the loaded kernel ``module`` cannot be used: built from other sources than this flexmbs
    (its ``VERSION`` is not `KERNEL_VERSION`, e.g. a .so left from before a change of the `steps`
    call, or its ``SCHEMA``, the layout of the rows it reads, is not `flexmbs.kernel_schema.signature`),
    or None when it matches."""
    version = getattr(module, "VERSION", 1)
    where = getattr(module, "__file__", "_flexmbs_kernel")
    rebuild = "rebuild it (`python setup.py build_ext --inplace` in the source tree, or reinstall flexmbs)"
    if version != KERNEL_VERSION:
        return f"the compiled kernel {where} is version {version}, this flexmbs calls version {KERNEL_VERSION}; {rebuild}"
    built = getattr(module, "SCHEMA", None)
    if built != schema.signature():
        first = next((a for a, b in zip((built or "").split(";"), schema.signature().split(";")) if a != b), None)
        return (f"the compiled kernel {where} was built from another declaration of its rows than "
                f"flexmbs/kernel_schema.py ({'no SCHEMA' if built is None else 'first difference: ' + repr(first)}); "
                f"{rebuild}")
    return None


try:                                    # a top-level extension module, installed with flexmbs
    import _flexmbs_kernel as _kernel
    _MISSING = version_mismatch(_kernel)
except ImportError as err:              # no C compiler at install time: the numpy path
    _kernel = None
    _MISSING = (f"the compiled kernel `_flexmbs_kernel` is not installed ({err}); reinstall flexmbs "
                "with a C compiler present (`pip install .` builds it)")
if _MISSING is not None:                # not installed, or built from older sources: the numpy path
    _kernel = None

_NO_LAW = np.zeros(0)                        # the time row of a system without laws or load functions of t
LAW_ROWS_KEPT = 8                            # time rows kept by `CompiledSystem._law_row` (radau-dae's stage times)
SENSOR_KINDS = schema.CODES["SENSOR"]        # the kinds of `flexmbs.control.Sensor.kernel`, csrc ``sense``
SENSOR_WIDTH = {"angle": 1, "rate": 1, "position": 3, "velocity": 3, "omega": 3}

#: the formulations whose inertia terms the kernel evaluates: the run's name -> the kernel's code
#: (`flexmbs.kernel_schema.CODES` "FORMULATION"); the others' equations are not of the index-3 form
#: M q'' + C_q^T lam = Q it steps (docs/formulations_system.md, "Which formulations run compiled")
FORMULATIONS = {"lagrange": "lagrange", "gibbs-appell": "gibbs_appell"}

MAX_ELASTIC = 400       # elastic coordinates of a flexible body beyond which the numpy path is used:
                        # the kernel keeps the dense (9 n_e, n_e) S[a, b] and [k], [m] of each body


NO_CONTROL = (np.zeros(0, dtype=np.int64), None, np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64),
              np.zeros(0), np.zeros(0))    # the control tuple of `CompiledSystem.steps` without controllers


def time_law(f, what: str) -> list:
    """The TIME_LAW row (`flexmbs.kernel_schema`) of a driver's law or a load's function of t: kind "affine"
    with its ``affine`` declaration (offset, rate), the kernel's row offset + rate t (`flexmbs.mechanisms.
    constant_speed`: (phi0, omega, 0) + (omega, 0, 0) t; a constant load of `flexmbs.bodies.loads`: (c, 0)),
    which index3-alpha-adaptive's kernel evaluates itself at each trial step; kind "python" otherwise (a
    user's law: `CompiledSystem.law_row`, once per trial step).  A declaration that is not two finite
    vectors of at most 3 numbers is refused (ValueError naming ``what``, the law)."""
    affine = getattr(f, "affine", None)
    if affine is None:
        return schema.TIME_LAW.row(kind=schema.CODES["TIME"].index("python"), offset=(), rate=())
    try:
        offset, rate = (np.atleast_1d(np.asarray(x, dtype=float)) for x in affine)
    except (TypeError, ValueError):
        offset = rate = None
    if offset is None or offset.ndim != 1 or rate.ndim != 1 or offset.size > 3 or rate.size > 3 \
            or not (np.all(np.isfinite(offset)) and np.all(np.isfinite(rate))):
        raise ValueError(f"{what} declares `affine` = {affine!r}; expected (offset, rate), two finite vectors of "
                         "at most 3 numbers (its values offset + rate t)")
    return schema.TIME_LAW.row(kind=schema.CODES["TIME"].index("affine"), offset=offset, rate=rate)


class Unsupported(ValueError):
    """The system has a body, constraint or option that the compiled kernel does not evaluate."""


KERNEL_CHOICES = ("auto", "compiled", "numpy")


def choose_kernel(kernel, make, refusal: str | None = None, check=None):
    """The option ``kernel`` of a run that can take the compiled kernel ("auto", "compiled",
    "numpy"; index3-alpha and its variants, radau-dae, the index-1 formulations): (the
    `CompiledSystem`, None) when the run takes it, else (None, why not).

    ``make`` packs the system (`flexmbs.System.compiled`, a term's ``compiled``; None when the
    equations are not a System), ``refusal`` is why the method itself keeps the numpy path (None: it
    does not), ``check(compiled)`` raises `Unsupported` when the loaded kernel lacks what the caller
    uses.  "auto" takes the kernel when it packs; "compiled" raises ValueError with the reason when it
    does not; "numpy" never packs.
    """
    if not isinstance(kernel, str) or kernel not in KERNEL_CHOICES:
        raise ValueError(f"`kernel` must be 'auto', 'compiled' or 'numpy', got {kernel!r}.")
    if kernel == "numpy":
        return None, "kernel='numpy'"
    compiled, reason = None, refusal
    if reason is None and make is None:
        reason = "the equations are not a flexmbs.System"
    if reason is None:
        try:
            compiled = make()
            if check is not None:
                check(compiled)
        except ValueError as err:                  # Unsupported
            compiled, reason = None, str(err)
    if compiled is None and kernel == "compiled":
        raise ValueError(f"`kernel` 'compiled' cannot run this system: {reason}.")
    return compiled, reason


def refusal(kind: str) -> str:
    """Why the compiled kernel does not evaluate ``kind`` (a class name), as `flexmbs.kernel_schema.KINDS`
    states it."""
    entry = schema.KINDS.get(kind, "")
    return entry[len("refused: "):] if entry.startswith("refused: ") else \
        f"{kind} is not declared in flexmbs.kernel_schema.KINDS"


def c_compiler() -> bool:
    """True if this machine has the C compiler this Python was built with (``pip install`` builds
    the kernel with it; without one it installs flexmbs without the kernel)."""
    import shutil
    import sysconfig
    cc = (sysconfig.get_config_var("CC") or "").split()
    return bool(cc) and shutil.which(cc[0]) is not None


class KernelStatus(FrozenFields):
    """Whether the compiled kernel is installed: ``installed``, the file it was loaded from
    (``path``) or why it is not there (``reason``); ``str()`` says it in a line.  Frozen
    (`flexmbs.frozen`)."""

    def __init__(self, installed: bool, path: str | None = None, reason: str | None = None):
        self._set_fields(locals())

    def __str__(self) -> str:
        return f"installed ({self.path})" if self.installed else f"not installed: {self.reason}"


def kernel_status() -> KernelStatus:
    """The compiled kernel's `KernelStatus` (``.installed``; ``.reason`` when it is not)."""
    if _kernel is None:
        return KernelStatus(False, reason=_MISSING)
    return KernelStatus(True, path=getattr(_kernel, "__file__", None))


_PATHS: list[str] = []          # the paths ("compiled"/"numpy") of the index3-alpha runs since the last summary


def note_path(kernel: str | None) -> None:
    """Note the path a run took (a `Solution`'s ``kernel``; None: no kernel applies, nothing to note)
    for the next `summary_keys`."""
    if kernel is not None:
        _PATHS.append(str(kernel))


def forget_paths() -> None:
    """Forget the noted paths (a case starts: `flexmbs.case.resolve`)."""
    _PATHS.clear()


def summary_keys() -> dict:
    """``{"kernel_installed": bool, "kernel": path}`` for a case's summary.json: the path of the
    runs noted since the last summary, those of the methods and formulations that can take the kernel
    (index3-alpha and its variants, radau-dae, the index-1 formulations of a System): "compiled",
    "numpy", "mixed" when they differ, "none" when no run could; the noted paths are then forgotten,
    so that each summary speaks of its own runs."""
    taken = sorted(set(_PATHS))
    _PATHS.clear()
    path = "none" if not taken else taken[0] if len(taken) == 1 else "mixed"
    return {"kernel_installed": _kernel is not None, "kernel": path}


def _i64(x, shape=None):
    a = np.ascontiguousarray(np.asarray(x, dtype=np.int64))
    return a if shape is None else a.reshape(shape)


def _f64(x, shape=None):
    a = np.ascontiguousarray(np.asarray(x, dtype=float))
    return a if shape is None else a.reshape(shape)


def mass_point_arrays(model) -> dict:
    """The ``point_*`` arrays of `flexmbs.kernel_schema.FLEX_ARRAYS`: the mass points of ``model`` (a Model
    or ReducedModel, `flexmbs.assembly.mass_points.body_mass_points`, as `FlexibleBody.gibbs_appell` sums
    them): masses m_p (n_p,), positions x_p (n_p, 3) and Phi (3 n_p, n_e) in CSR (row 3 p + a: the
    displacement component a of point p per elastic coordinate); ``model`` None: none (n_p = 0)."""
    if model is None:
        return dict(point_m=np.zeros(0), point_x=np.zeros(0), point_Phi_indptr=_i64([0]),
                    point_Phi_indices=_i64([]), point_Phi_data=np.zeros(0))
    from .assembly.mass_points import body_mass_points
    pts = body_mass_points(model, dense=False)
    Phi = sparse.csr_array(pts.Phi)
    Phi.sort_indices()
    return dict(point_m=_f64(pts.m), point_x=_f64(pts.x, (-1, 3)), point_Phi_indptr=_i64(Phi.indptr),
                point_Phi_indices=_i64(Phi.indices), point_Phi_data=_f64(Phi.data))


def constraint_of_row(system, row: int):
    """The constraint of ``system`` whose rows (`System.rows`) hold the row ``row``."""
    return next(c for c in system.constraints if system.rows(c).start <= row < system.rows(c).stop)


def planar_side(system, body, marker, joint, point: bool) -> tuple[int, np.ndarray]:
    """(first coordinate, point s) of a side of a planar joint as csrc ``side2`` reads it, (x, y, theta) at the
    coordinate and the point (x, y) + R(theta) s: the ground (-1, its point itself), a `RigidBody2D` (its first
    coordinate, s in body coordinates) or a node k of a `CorotationalBeam2D` (node_index: the coordinate of
    x_k, s = 0; a planar revolute's point).  A PlanarPrismatic (``point`` False) also turns its axes with the
    side's theta, which on a beam is node 0's section (`CorotationalBeam2D.vector`): it is taken on Node(0) only.
    `Unsupported` naming ``joint`` and the body otherwise."""
    from .bodies.planar import RigidBody2D
    from .constraints.base import Ground
    CorotationalBeam2D = loaded_class("flexmbs.bodies.corotational:CorotationalBeam2D")   # None: no beam
    if body is None or isinstance(body, Ground):
        return -1, np.asarray(marker, dtype=float)
    start = system.slice(body).start
    if type(body) is RigidBody2D:
        return start, np.asarray(marker, dtype=float)
    if type(body) is CorotationalBeam2D:
        node = body.node_index(marker)
        if not point and node != 0:
            raise Unsupported(f"joint {joint.name!r} ({type(joint).__name__}) is on node {node} of the corotational "
                              f"beam {body.name!r}: its point moves with that node while its axes turn with node 0's "
                              "section, which the compiled kernel does not evaluate (on Node(0) it does)")
        return start + 3 * node, np.zeros(2)
    raise Unsupported(f"joint {joint.name!r} ({type(joint).__name__}) joins body {body.name!r}, a "
                      f"{type(body).__name__}; the compiled kernel takes planar joints between RigidBody2D bodies, "
                      "CorotationalBeam2D nodes and the ground")


def corotational_packing(beams, prefix: str, per_beam) -> tuple[dict, list]:
    """The arrays the planar and the spatial corotational beams share in the kernel's layout
    (`flexmbs.kernel_schema` records ``{prefix}_I``, ``_E``, ``_R``): ``{prefix}_i``, a row per beam (its first
    coordinate, its counts and where its elements, mass block and nodes start in the arrays of all the beams),
    ``{prefix}_elements``, a row per element (its nodes), ``{prefix}_reals``, the element rows, and
    ``{prefix}_mass``, the constant mass blocks (n_q x n_q each) flattened one after the other; with the nodes'
    values, which ``per_beam(body) -> (element rows, mass block, node values)`` gives with the rest, in a list.
    ``beams``: (first coordinate, body) each.  `Unsupported` for a beam with loads (user callables)."""
    table_i, table_e, table_r = (getattr(schema, f"{prefix.upper()}_{part}") for part in "IER")
    rows_i, rows_e, rows_r, mass, nodes = [], [], [], [], []
    n_el = n_mass = n_node = 0
    for off, b in beams:
        if b.loads:
            raise Unsupported(f"body {b.name!r} is a {type(b).__name__} with loads (user callables), which the "
                              "compiled kernel cannot evaluate")
        rows_i.append(table_i.row(offset=off, n_nodes=b.n_nodes, n_elements=len(b.elements),
                                  first_element=n_el, first_mass=n_mass, first_node=n_node))
        rows_e += [table_e.row(node_i=i, node_j=j) for i, j in b.elements]
        reals, block, values = per_beam(b)
        rows_r += reals
        mass.append(np.asarray(block, dtype=float).ravel())
        nodes += values
        n_el, n_mass, n_node = n_el + len(b.elements), n_mass + b.n_q ** 2, n_node + b.n_nodes
    return {f"{prefix}_i": _i64(rows_i, (-1, table_i.width)), f"{prefix}_elements": _i64(rows_e, (-1, table_e.width)),
            f"{prefix}_reals": _f64(rows_r, (-1, table_r.width)),
            f"{prefix}_mass": _f64(np.concatenate(mass) if mass else [])}, nodes


def corotational_arrays(beams) -> dict:
    """The ``corot2d_*`` arrays of `flexmbs.kernel_schema.SYSTEM_ARRAYS` of the `CorotationalBeam2D` bodies
    ``beams`` ((first coordinate, body) each; csrc ``corot2d_bodies``), `corotational_packing`'s with a
    COROT2D_R row per element (L_0 = |X_j - X_i| and beta_0 = atan2 of the reference chord, as
    `flexmbs.elements.corotational.corotational_2d` computes them; EA, EI), the constant mass blocks
    (`mass_matrix`, (3 n_nodes)^2 each) and each node's share w_k of the weight (Q_g = w_k g: its
    `gravity_force` of a unit g).  `Unsupported` for a beam with loads (user callables)."""
    def per_beam(b):
        D0 = b.nodes[b.elements][:, 1] - b.nodes[b.elements][:, 0]
        reals = [schema.COROT2D_R.row(length0=L0, angle0=a0, EA=b.EA, EI=b.EI)
                 for L0, a0 in zip(np.hypot(D0[:, 0], D0[:, 1]), np.arctan2(D0[:, 1], D0[:, 0]))]
        return reals, b.mass_matrix(b.initial_coordinates()), list(b.gravity_force((1.0, 0.0))[0::3])
    packed, weights = corotational_packing(beams, "corot2d", per_beam)
    return dict(packed, corot2d_weights=_f64(weights))


def corotational_3d_arrays(beams) -> dict:
    """The ``corot3d_*`` arrays of `flexmbs.kernel_schema.SYSTEM_ARRAYS` of the `CorotationalBeam3D` bodies
    ``beams`` ((first coordinate, body) each; csrc ``corot3d_bodies``), `corotational_packing`'s with a
    COROT3D_R row per element (L_0, its reference frame E_0 from the beam's `element_frames`, EA, GJ, EI_y,
    EI_z), the constant translational mass blocks (`translational_mass`, (6 n_nodes)^2 each) and a COROT3D_N row
    per node (its share w_k of the weight, Q_g = w_k g: `gravity_force` of a unit g; its rotary inertia J0_k,
    `section_inertia`).  `Unsupported` for a beam with loads (user callables)."""
    def per_beam(b):
        reals = [schema.COROT3D_R.row(length0=L0, frame0=E0.ravel(), EA=b.EA, GJ=b.GJ, EIy=b.EIy, EIz=b.EIz)
                 for L0, E0 in zip(b.length0, b.element_frames)]
        nodes = [schema.COROT3D_N.row(weight=w, inertia=J0.ravel())
                 for w, J0 in zip(b.gravity_force((1.0, 0.0, 0.0))[0::6], b.section_inertia)]
        return reals, b.translational_mass, nodes
    packed, nodes = corotational_packing(beams, "corot3d", per_beam)
    return dict(packed, corot3d_nodes=_f64(nodes, (-1, schema.COROT3D_N.width)))


def beam_joint_axes(system, joints) -> None:
    """Refuse a joint of the batch ``joints`` that takes a vector of a `CorotationalBeam3D` (node 0's section,
    `CorotationalBeam3D.vector`) together with a point of the same beam at another node: its point would move
    with that node while its axes turn with node 0's section.  `Unsupported` naming the joint, the node and the
    beam (a joint's axes on a beam are compiled with its point on Node(0), or with no point on the beam)."""
    Beam3D = loaded_class("flexmbs.bodies.corotational:CorotationalBeam3D")
    if Beam3D is None or joints is None:
        return
    spec = joints.markers.spec
    groups = [(joints.point, (1, 2)), (joints.dot1, (1, 2)), (joints.dot2, (1, 2, 3)), (joints.dist, (1, 2)),
              (joints.angle, (1, 2, 3)), (joints.screw, (1, 2, 3, 4, 5, 6))]
    used = {}                                   # first row -> the joint's markers
    for rows, at in groups:
        if rows is None:
            continue
        first = rows[0][:, 0] if np.ndim(rows[0]) == 2 else rows[0]        # a point row's three rows: the first
        for i, row in enumerate(first):
            used.setdefault(int(row), set()).update(int(rows[a][i]) for a in at)
    for c in system.constraints:
        r = system.rows(c)
        markers = set().union(*(k for row, k in used.items() if r.start <= row < r.stop))
        for beam in {id(spec[k][0]): spec[k][0] for k in markers if type(spec[k][0]) is Beam3D}.values():
            mine = [spec[k] for k in markers if spec[k][0] is beam]
            nodes = sorted({beam.node_index(m) for _, _, m, vector in mine if not vector} - {0})
            if nodes and any(vector for *_, vector in mine):
                raise Unsupported(f"joint {c.name!r} ({type(c).__name__}) is on node {nodes[0]} of the corotational "
                                  f"beam {beam.name!r}: its point moves with that node while its axes turn with node "
                                  "0's section (CorotationalBeam3D.vector), which the compiled kernel does not "
                                  "evaluate (on Node(0) it does)")


class CompiledSystem:
    """A `flexmbs.System` packed for the compiled kernel.

    Parameters
    ----------
    system : flexmbs.System
    formulation : {"lagrange", "gibbs-appell"}
        The inertia terms the kernel evaluates (`FORMULATIONS`, the HEADER's ``formulation``):
        Lagrange's M and Q_v from the bodies' inertia invariants, or Gibbs-Appell's M_GA and g of
        dS/dq'' = M_GA q'' + g from their mass points (a flexible body's quadrature points, packed as
        ``point_*`` arrays) and a rigid body's inertia about its centroid (docs/formulations_system.md).

    Raises
    ------
    Unsupported
        If the kernel is not installed, or the system holds something it does not evaluate
        (the message names it).
    ValueError
        If ``formulation`` is not one of `FORMULATIONS`.
    """

    def __init__(self, system, formulation: str = "lagrange"):
        if formulation not in FORMULATIONS:
            raise ValueError(f"CompiledSystem: `formulation` must be one of {', '.join(map(repr, FORMULATIONS))}, "
                             f"got {formulation!r}")
        if _kernel is None:
            raise Unsupported(_MISSING)
        self.formulation = formulation
        gibbs_appell = formulation == "gibbs-appell"
        FlexibleBody = loaded_class("flexmbs.bodies.flexible:FlexibleBody")   # None: the System has none
        from .bodies.rigid import EulerParameterNorm, RigidBodyEP
        from .constraints.mean_axis import MeanAxisConditions
        from .bodies.planar import RigidBody2D
        from .system import System
        self.system = system
        if type(system) is not System:          # a subclass may override what the kernel would evaluate
            raise Unsupported(f"the system is a {type(system).__name__}, a subclass of System; the compiled kernel "
                              "evaluates System's own equations only")
        from .bodies.point import PointMass
        from .bodies.natural import NaturalRigidity, RigidBodyNatural
        CorotationalBeam2D = loaded_class("flexmbs.bodies.corotational:CorotationalBeam2D")   # None: no beam
        CorotationalBeam3D = loaded_class("flexmbs.bodies.corotational:CorotationalBeam3D")
        system.check_unchanged()                # packed now: what the numpy path evaluates, or refused
        n, m = system.n_q, system.n_c
        norms, mean_axis, rigidity = [], {}, {}
        for c in system.constraints[:system.n_internal]:
            if type(c) is EulerParameterNorm:
                norms.append((system.rows(c).start, system.slice(c.bodies[0]).start))
            elif type(c) is NaturalRigidity and type(c.bodies[0]) is RigidBodyNatural:
                rigidity[id(c.bodies[0])] = system.rows(c).start
            elif type(c) is MeanAxisConditions and type(c.bodies[0]) is FlexibleBody:
                mean_axis[id(c.bodies[0])] = (system.rows(c).start, c.B)
            else:
                raise Unsupported(f"internal constraint {c.name!r} ({type(c).__name__}) is not evaluated by the "
                                  "compiled kernel")
        rigid, flex, planar, loads, points, natural, natural_loads, beams = [], [], [], [], [], [], [], []
        beams3d = []
        self._vectors = []                                  # (function of t, its name) of the tabulated loads
        for b in system.bodies:
            off = system.slice(b).start
            if type(b) is RigidBody2D:
                loads.extend(self._loads(b, off))
                planar.append((off, schema.PLANAR_BODY.row(mass=b.mass, inertia=b.inertia)))
            elif type(b) is RigidBodyEP:
                loads.extend(self._loads(b, off))
                rigid.append((off, schema.RIGID.row(mass=b.mass, inertia=np.asarray(b.inertia_reference, float).ravel(),
                                                    centroid=b.centroid)))
            elif type(b) is FlexibleBody:
                flex.append(self._flexible(b, off, mean_axis.pop(id(b), None), gibbs_appell))
            elif type(b) is PointMass:
                if b.loads:
                    raise Unsupported(f"body {b.name!r} is a PointMass with loads, which the compiled kernel does not "
                                      "apply (a force element to the ground it does)")
                points.append((off, schema.POINT_MASS.row(mass=b.mass)))
            elif type(b) is RigidBodyNatural:
                natural.append(self._natural(b, off, rigidity.pop(id(b), None)))
                natural_loads.extend(self._loads(b, off))
            elif type(b) is CorotationalBeam2D:
                beams.append((off, b))
            elif type(b) is CorotationalBeam3D:
                if gibbs_appell:
                    raise Unsupported(f"body {b.name!r} is a CorotationalBeam3D, which the compiled kernel evaluates "
                                      "in Lagrange's form only: the numpy GibbsAppellSystem has no Gibbs-Appell "
                                      "terms for it (flexmbs.formulations.body_terms), so there is no reference to "
                                      "follow")
                beams3d.append((off, b))
            else:
                raise Unsupported(f"body {b.name!r} is a {type(b).__name__}: {refusal(type(b).__name__)}; the "
                                  "compiled kernel takes RigidBodyEP, FlexibleBody, RigidBody2D, PointMass, "
                                  "RigidBodyNatural, CorotationalBeam2D and CorotationalBeam3D")
        forces = [self._force_element(f, system) for f in system.force_elements]
        if mean_axis:                                       # conditions of a body the kernel does not hold
            raise Unsupported("mean-axis conditions of a body that is not a FlexibleBody of this system are not "
                              "evaluated by the compiled kernel")
        if rigidity:                                        # as for the mean-axis conditions
            raise Unsupported("rigidity conditions of a body that is not a RigidBodyNatural of this system are not "
                              "evaluated by the compiled kernel")
        joints = system.joint_batch
        plane_points = None
        if joints is not None and joints.markers.dim == 2:  # planar joints of the batch: planar revolute rows
            plane_points, joints = self._plane_point_rows(system, joints), None
        beam_joint_axes(system, joints)
        arrays = self._joints(joints, n)
        self.drivers = [] if joints is None or joints.angle is None else list(joints.angle[4])
        two = self._planar(system, planar)
        if plane_points is not None:
            two["rev"] += plane_points["rev"]
            two["rev_s"] += plane_points["rev_s"]
        self.drivers += two["drivers"]                      # the laws' table: angle drivers, then coordinate drivers
        g = np.zeros(4)
        if system.gravity is not None and np.any(system.gravity):
            g[:system.dim], g[3] = system.gravity, 1.0
        header = schema.HEADER.row(
            n=n, m=m, n_rigid=len(rigid), n_flex=len(flex), n_norm=len(norms), n_mark=arrays["n_mark"],
            marker_width=arrays["W"], marker_elastic=arrays["E"], n_point=len(arrays["pt"]), n_dot1=len(arrays["d1"]),
            n_dot2=len(arrays["d2"]), n_dist=len(arrays["ds"]), n_angle=len(arrays["ang"]), n_load=len(loads),
            n_vector=len(self._vectors), n_planar=len(planar), n_planar_revolute=len(two["rev"]),
            n_planar_prismatic=len(two["pri"]), n_coordinate_driver=len(two["cd"]), dim=system.dim,
            n_point_mass=len(points), n_force=len(forces), n_screw=len(arrays["sc"]),
            formulation=schema.CODES["FORMULATION"].index(FORMULATIONS[formulation]), n_natural=len(natural),
            n_natural_load=len(natural_loads), n_corot2d=len(beams),
            n_corot3d=len(beams3d))
        joint_width = schema.PLANAR_JOINT.width
        packed = schema.arrays(
            schema.SYSTEM_ARRAYS, "the system",
            header=_i64(header), gravity=_f64(g), rigid_offsets=_i64([r[0] for r in rigid]),
            rigid=_f64([r[1] for r in rigid], (-1, schema.RIGID.width)), norms=_i64(norms, (-1, 2)),
            marker_R=arrays["R"], marker_p=arrays["p"], marker_e=arrays["e"], marker_cols=arrays["cols"],
            marker_point=arrays["point"], marker_y0=arrays["y0"], marker_Phi=arrays["Phi"], point_rows=arrays["pt"],
            dot1_rows=arrays["d1"], dot2_rows=arrays["d2"], dist_rows=arrays["ds"], dist_lengths=arrays["L"],
            angle_rows=arrays["ang"], screw_rows=_i64(arrays["sc"], (-1, 7)), screw_pitches=arrays["pitch"],
            flexible=flex,
            load_i=_i64([x[0] for x in loads], (-1, schema.LOAD_I.width)),
            load_r=_f64([x[1] for x in loads], (-1, schema.LOAD_R.width)),
            planar_offsets=_i64([b[0] for b in planar]),
            planar_bodies=_f64([b[1] for b in planar], (-1, schema.PLANAR_BODY.width)),
            planar_revolute_rows=_i64(two["rev"], (-1, joint_width)),
            planar_revolute=_f64(two["rev_s"], (-1, schema.PLANAR_REVOLUTE.width)),
            planar_prismatic_rows=_i64(two["pri"], (-1, joint_width)),
            planar_prismatic=_f64(two["pri_v"], (-1, schema.PLANAR_PRISMATIC.width)),
            coordinate_drivers=_i64(two["cd"], (-1, schema.COORDINATE_DRIVER.width)),
            point_mass_offsets=_i64([x[0] for x in points]),
            point_masses=_f64([x[1] for x in points], (-1, schema.POINT_MASS.width)),
            force_i=_i64([x[0] for x in forces], (-1, schema.FORCE_I.width)),
            force_r=_f64([x[1] for x in forces], (-1, schema.FORCE_R.width)),
            time_laws=_f64([time_law(d.law, f"driver {d.name!r}: its law") for d in self.drivers]
                           + [time_law(f, what) for f, what in self._vectors], (-1, schema.TIME_LAW.width)),
            marker_kind=arrays["kind"], natural_i=_i64([x[0] for x in natural], (-1, schema.NATURAL_I.width)),
            natural_bodies=_f64([x[1] for x in natural], (-1, schema.NATURAL_BODY.width)),
            natural_load_i=_i64([x[0] for x in natural_loads], (-1, schema.LOAD_I.width)),
            natural_load_r=_f64([x[1] for x in natural_loads], (-1, schema.LOAD_R.width)),
            **corotational_arrays(beams), **corotational_3d_arrays(beams3d))
        self._time_law_names = [f"driver {d.name!r}: its law" for d in self.drivers] + [w for _, w in self._vectors]
        self._packed = packed                               # the kernel reads these arrays in place
        # the loads' functions of t as `tabulate` evaluates them: (index, f, name) one time at a time, or all
        # the times of a call at once (``at_times``: the held outputs of flexmbs.control)
        self._by_row = [(k, f, what) for k, (f, what) in enumerate(self._vectors) if not hasattr(f, "at_times")]
        self._held = [(k, f, what) for k, (f, what) in enumerate(self._vectors) if hasattr(f, "at_times")]
        self.handle = _kernel.system(packed)
        self._law_rows = {}                                 # t -> the time row at t (`_law_row`)
        self.n, self.m = n, m
        self.has_elastic = bool(flex) or bool(forces)      # as System.elastic_stiffness: K_el and the springs' k G^T G

    def _force_element(self, f, system):
        """(FORCE_I row, FORCE_R row) of the force element ``f`` (`flexmbs.kernel_schema`): a `SpringDamper`
        (its points s_i, s_j), a `RotationalSpringDamper` (its directions u_i, w_i, u_j) or a `Bushing` (its
        points and frame axes a, b, one stiffness and damping per measure) between the ground,
        `RigidBodyEP`, `RigidBody2D` and `PointMass` bodies given by body-coordinate points (not a body's
        marker object); a `SpringDamper` on a node k of a `CorotationalBeam2D` (a planar side at that node's
        coordinates with s = 0, as `planar_side`) and a `RotationalSpringDamper` on one (a planar side at
        node 0, whose section turns the beam's vectors: `CorotationalBeam2D.vector`); its actuator, a function
        of t, is tabulated with the loads' vectors; a `SpringDamper` on a node k of a `CorotationalBeam3D` (a point side
        at x_k, coordinate o + 6 k, s = 0).  `Unsupported` naming it otherwise (its kind's refusal in
        `flexmbs.kernel_schema.KINDS`)."""
        from .bodies.natural import RigidBodyNatural
        CorotationalBeam2D = loaded_class("flexmbs.bodies.corotational:CorotationalBeam2D")   # None: no beam
        from .bodies.planar import RigidBody2D
        from .bodies.point import PointMass
        from .bodies.rigid import RigidBodyEP
        from .constraints.limits import JointFriction, JointLimit
        from .forces import Bushing, RotationalSpringDamper, SpringDamper
        kind = type(f)
        if kind not in (SpringDamper, RotationalSpringDamper, Bushing, JointLimit, JointFriction):
            raise Unsupported(f"force element {f.name!r} is a {kind.__name__}: {refusal(kind.__name__)}")
        CorotationalBeam3D = loaded_class("flexmbs.bodies.corotational:CorotationalBeam3D")
        sides, offsets, beam_points = [], [], {}
        side_kinds = {RigidBodyEP: "rigid", RigidBody2D: "planar", PointMass: "point", RigidBodyNatural: "natural"}
        for k, b in enumerate(f.bodies):
            if type(b) is CorotationalBeam3D:       # a node's point x_k: a point side at its coordinates, s = 0
                if kind is not SpringDamper:
                    raise Unsupported(f"force element {f.name!r} ({kind.__name__}) acts on the spatial corotational "
                                      f"beam {b.name!r}; the compiled kernel evaluates SpringDamper on its nodes")
                sides.append(schema.CODES["SIDE"].index("point"))
                offsets.append(system.slice(b).start + 6 * b.node_index(f.s[k]))
                beam_points[k] = np.zeros(3)
                continue
            if type(b) is CorotationalBeam2D:
                if kind not in (SpringDamper, RotationalSpringDamper):
                    raise Unsupported(f"force element {f.name!r} ({kind.__name__}) acts on the corotational beam "
                                      f"{b.name!r}; the compiled kernel evaluates SpringDamper and "
                                      "RotationalSpringDamper on its nodes")
                node = b.node_index(f.s[k]) if kind is SpringDamper else 0
                sides.append(schema.CODES["SIDE"].index("planar"))
                offsets.append(system.slice(b).start + 3 * node)
                beam_points[k] = np.zeros(2)
                continue
            if b is not None and type(b) not in side_kinds:
                raise Unsupported(f"force element {f.name!r} joins body {b.name!r}, a {type(b).__name__}; the compiled "
                                  "kernel evaluates force elements between RigidBodyEP, RigidBody2D, PointMass, "
                                  "RigidBodyNatural, CorotationalBeam2D nodes and the ground")
            sides.append(schema.CODES["SIDE"].index("ground" if b is None else side_kinds[type(b)]))
            offsets.append(-1 if b is None else system.slice(b).start)
        def padded(vectors):                      # each vector in 3 numbers (a planar one padded with a zero)
            return [np.concatenate([np.asarray(u, dtype=float), np.zeros(3 - len(u))]) for u in vectors]

        law, extra = "linear", {}
        if kind in (JointLimit, JointFriction):       # a joint's coordinate: the gauge's angle or the sliding
            law = "stop" if kind is JointLimit else "friction"
            extra = self._joint_law(f, kind is JointLimit)
            if f.kind == "angle":
                f, kind = f.gauge, RotationalSpringDamper
        if kind in (JointLimit, JointFriction):
            vectors = dict(s_i=f.points[0], s_j=f.points[1], u_i=f.axis_i, w_i=(), u_j=(), a=(), b=())
            for what, x in zip(("s_i", "s_j"), f.points):
                if not (isinstance(x, np.ndarray) and x.dtype.kind == "f"):
                    raise Unsupported(f"force element {f.name!r}: its point {what} is a body's marker object ({x!r}), "
                                      "which the compiled kernel does not evaluate")
        elif kind in (SpringDamper, Bushing):
            points = []
            for k, (what, x) in enumerate(zip(("s_i", "s_j"), f.s)):
                a = beam_points.get(k, np.asarray(x) if isinstance(x, np.ndarray) else None)
                if a is None or a.dtype.kind != "f":
                    raise Unsupported(f"force element {f.name!r}: its point {what} is a body's marker object ({x!r}), "
                                      "which the compiled kernel does not evaluate (a point in body coordinates it does)")
                points.append(a)
            vectors = dict(s_i=points[0], s_j=points[1], u_i=(), w_i=(), u_j=(), a=(), b=())
            if kind is Bushing:
                vectors.update(a=padded(f.a), b=padded(f.b))
        else:
            if any(type(b) is PointMass for b in f.bodies):
                raise Unsupported(f"force element {f.name!r}: a RotationalSpringDamper on a PointMass (no rotation) is "
                                  "not evaluated by the compiled kernel")
            vectors = dict(s_i=(), s_j=(), u_i=f.u_i, w_i=f.w_i, u_j=f.u_j, a=(), b=())
        vector = -1
        if f.actuator is not None:
            value = np.asarray(f.actuator(0.0), dtype=float)
            if value.shape != ():
                raise Unsupported(f"force element {f.name!r}: its actuator gives shape {value.shape} at t = 0, not a "
                                  "number")
            vector = len(self._vectors)
            self._vectors.append((f.actuator, f"{kind.__name__} {f.name!r}: its actuator"))
        name = {SpringDamper: "spring", RotationalSpringDamper: "rotational", Bushing: "bushing", JointLimit: "slide",
                JointFriction: "slide"}[kind]
        code = schema.CODES["FORCE"].index(name + ("_2d" if f.dim == 2 else ""))
        rest = 0.0 if kind is Bushing else f.x_start if kind in (JointLimit, JointFriction) else float(f.g0[0])
        values = dict(stiffness=np.asarray(f.k, float), damping=np.asarray(f.c, float), rest=rest, lower=0.0, upper=0.0,
                      restitution=0.0, exponent=0.0, transition=0.0, friction=0.0, creep=0.0)
        values.update(extra)
        return (schema.FORCE_I.row(kind=code, law=schema.CODES["LAW"].index(law), side_i=sides[0], offset_i=offsets[0],
                                   side_j=sides[1], offset_j=offsets[1], vector=vector),
                schema.FORCE_R.row(**vectors, **values))

    @staticmethod
    def _natural(b, off, rigidity_row):
        """(NATURAL_I row, NATURAL_BODY row) of the `RigidBodyNatural` ``b`` at coordinate ``off``: its first
        coordinate and the first row of its `NaturalRigidity` (``rigidity_row``; `Unsupported` when the system
        does not hold them: the kernel evaluates a natural body with its six rigidity rows), its mass, centroid
        and second moments Y_O (the kernel's M = Sigma (x) I_3, csrc ``natural_bodies``)."""
        if rigidity_row is None:
            raise Unsupported(f"body {b.name!r}: its rigidity conditions (NaturalRigidity) are not among the system's "
                              "internal constraints")
        return (schema.NATURAL_I.row(offset=off, rigidity_row=rigidity_row),
                schema.NATURAL_BODY.row(mass=b.mass, centroid=b.centroid, second_moments=b.second_moments))

    @staticmethod
    def _joint_law(f, stop: bool) -> dict:
        """FORCE_R's law fields of a `JointLimit` (stops, +-inf where there is none; stiffness, restitution,
        exponent, transition speed) or a `JointFriction` (friction, creep speed)."""
        if not stop:
            return dict(friction=f.friction, creep=f.creep_speed)
        return dict(stiffness=[f.stiffness], lower=-np.inf if f.lower is None else f.lower,
                    upper=np.inf if f.upper is None else f.upper, restitution=f.restitution, exponent=f.exponent,
                    transition=f.transition_speed)

    def _loads(self, b, off):
        """(LOAD_I row, LOAD_R row) of each load of rigid body ``b`` (a `RigidBodyEP`, a `RigidBody2D` or a
        `RigidBodyNatural`, whose rows the kernel reads from their own arrays, ``natural_load_*``;
        `flexmbs.bodies.loads`, by its ``spec``; `flexmbs.kernel_schema`), its kind the LOAD code of the
        spec's kind ("torque", "point", "spring"; with "_2d" on a planar body).  The loads' functions of
        time are added to ``_vectors`` (tabulated per step by `laws`, padded to 3 columns)."""
        out, dim = [], b.dim
        codes = schema.CODES["LOAD"]
        for i, load in enumerate(b.loads):
            spec = getattr(load, "spec", None)
            if spec is None:
                raise Unsupported(f"body {b.name!r}: its load {i} is a user callable, which the compiled kernel "
                                  "cannot evaluate (flexmbs.bodies.loads' torque_load, point_load and "
                                  "spring_to_ground it can; a law of the state sampled by a "
                                  "flexmbs.control.Controller it can too)")
            kind = spec[0]
            code = codes.index(kind if dim == 3 else f"{kind}_2d")
            if kind == "spring":
                _, s, anchor, k, l0, c = spec
                out.append((schema.LOAD_I.row(kind=code, offset=off, local=0, vector=0),
                            schema.LOAD_R.row(point=s, anchor=anchor, stiffness=k, rest_length=l0, damping=c)))
                continue
            f, local, s = (spec[1], spec[2], np.zeros(dim)) if kind == "torque" else (spec[2], spec[3], spec[1])
            value = np.asarray(f(0.0), dtype=float)
            want = () if kind == "torque" and dim == 2 else (dim,)
            if value.shape != want:
                raise Unsupported(f"body {b.name!r}: its {kind} load {i} gives a vector of shape {value.shape} at "
                                  f"t = 0, not {want}")
            out.append((schema.LOAD_I.row(kind=code, offset=off, local=int(local), vector=len(self._vectors)),
                        schema.LOAD_R.row(point=s, anchor=(), stiffness=0.0, rest_length=0.0, damping=0.0)))
            self._vectors.append((f, f"body {b.name!r}: load {i}"))
        return out

    @staticmethod
    def _plane_point_rows(system, joints) -> dict:
        """The planar joints of the System's joint batch (dim 2) as planar revolute rows ("rev", "rev_s" as
        `_planar`'s): a 2D `Spherical`'s point rows C = r_i - r_j are PlanarRevolute's, each side a
        `planar_side`.  `Unsupported` naming the joint for a batch with other rows (a 2D `Distance`)."""
        mk = joints.markers
        for rows in (joints.dot1, joints.dot2, joints.dist, joints.angle, joints.screw):
            if rows is not None:
                c = constraint_of_row(system, int(np.atleast_1d(rows[0])[0]))
                raise Unsupported(f"joint {c.name!r} ({type(c).__name__}) in the plane has rows other than point rows, "
                                  "which the compiled kernel does not evaluate on planar bodies (a 2D Spherical, "
                                  "PlanarRevolute and PlanarPrismatic it does)")
        out = {"rev": [], "rev_s": []}
        if joints.point is None:
            return out
        rr, pi, pj, _ = joints.point
        for rows, a, b in zip(rr, pi, pj):
            row = int(rows[0])
            c = constraint_of_row(system, row)
            (oi, si), (oj, sj) = (planar_side(system, mk.spec[k][0], mk.spec[k][2], c, point=True) for k in (a, b))
            out["rev"].append(schema.PLANAR_JOINT.row(row=row, offset_i=oi, offset_j=oj))
            out["rev_s"].append(schema.PLANAR_REVOLUTE.row(s_i=si, s_j=sj))
        return out

    @staticmethod
    def _planar(system, planar) -> dict:
        """The constraints outside the joint batch: planar revolute and prismatic joints between
        `RigidBody2D` bodies, `CorotationalBeam2D` nodes and the ground (`planar_side`; those of
        `System.pair_batches` and of `System.single_constraints`), and coordinate drivers; `Unsupported`
        for any other.  Rows, first coordinates (-1: the ground) and the vectors of their formulas
        (`flexmbs.constraints.planar`), and the drivers whose laws the kernel reads."""
        from .constraints.driving import CoordinateDriver
        from .constraints.planar import PlanarPrismatic, PlanarRevolute, PlanarRevoluteBatch
        out = {"rev": [], "rev_s": [], "pri": [], "pri_v": [], "cd": [], "drivers": []}
        if any(type(batch) is not PlanarRevoluteBatch for batch, _ in system.pair_batches):
            raise Unsupported("a pair batch of joints other than planar revolutes is not evaluated by the compiled "
                              "kernel")
        single = set(system.single_constraints)
        for k, c in enumerate(system.constraints):
            kind = type(c)
            if kind in (PlanarRevolute, PlanarPrismatic):
                row = system.rows(c).start
                (oi, si), (oj, sj) = (planar_side(system, b, c.s[i], c, point=kind is PlanarRevolute)
                                      for i, b in enumerate(c.bodies))
                joint = schema.PLANAR_JOINT.row(row=row, offset_i=oi, offset_j=oj)
                if kind is PlanarRevolute:
                    out["rev"].append(joint)
                    out["rev_s"].append(schema.PLANAR_REVOLUTE.row(s_i=si, s_j=sj))
                else:
                    out["pri"].append(joint)
                    out["pri_v"].append(schema.PLANAR_PRISMATIC.row(s_i=si, s_j=sj, a_i=c.a[0], a_j=c.a[1],
                                                                    n_i=c.n_i))
            elif kind is CoordinateDriver and k in single:
                out["cd"].append(schema.COORDINATE_DRIVER.row(row=system.rows(c).start,
                                                              coordinate=system.slice(c.bodies[0]).start + c.index))
                out["drivers"].append(c)
            elif k in single:
                raise Unsupported(f"constraint {c.name!r} ({kind.__name__}) is not evaluated by the compiled "
                                  "kernel")
        return out

    def _flexible(self, b, off, mean_axis, gibbs_appell: bool = False):
        """The arrays of flexible body ``b`` by the names of `flexmbs.kernel_schema.FLEX_ARRAYS` (first
        coordinate ``off``; ``mean_axis``: (first row, B) of its mean-axis conditions, or None; with
        ``gibbs_appell`` its mass points, `mass_point_arrays`, else none; its Model's nodal loads,
        `_nodal_loads`)."""
        if b.reference not in ("supports", "mean-axis"):
            raise Unsupported(f"body {b.name!r} has reference={b.reference!r}; the compiled kernel takes "
                              "'supports' and 'mean-axis'")
        if (b.reference == "mean-axis") != (mean_axis is not None):
            raise Unsupported(f"body {b.name!r}: its mean-axis conditions are not among the system's internal "
                              "constraints")
        if b.stiffening not in ("none", "axial-strain", "omega", "modal-stress"):
            raise Unsupported(f"body {b.name!r} has stiffening={b.stiffening!r}; the compiled kernel takes "
                              "'none', 'axial-strain', 'omega' and 'modal-stress'")
        ne = b.n_e
        if ne > MAX_ELASTIC:
            raise Unsupported(f"body {b.name!r} has {ne} elastic coordinates; the compiled kernel keeps dense "
                              f"matrices and takes at most {MAX_ELASTIC} (reduce the body: flexmbs.reduction)")
        md = b.model
        d, S, J, s, m_O = b.inertia_tensors()
        S_indptr, S_indices, S_data = csr_parts(S)          # S[a, b] of a beam or solid: mostly zeros
        damped = md.C_op is not None
        C = dense_array(md.C_op) if damped else None
        ax = b.axial_strain
        if ax is None:
            sizes = dict(n_elements=0, element_dofs=0, axial=0)
            axial = [np.zeros(0), np.zeros(0), np.zeros(0), _i64([])]
            EA = 0.0
        else:
            nel, k = ax.idx.shape
            sizes = dict(n_elements=nel, element_dofs=k, axial=1)
            axial = [_f64(ax.L), _f64(ax.a), _f64(ax.G), _i64(ax.idx)]
            EA = float(ax.EA)
        omega = [_i64([]), _i64([]), _i64([]), np.zeros(0)]
        n_kg = 0
        if b.stiffening == "omega":
            # FlexibleBody._omega_coefficients: key ("A", a, b) -> A_f[a, b], ("alpha", c) -> alpha[c],
            # ("load", i) -> the factor f_i(t) of the Model's load i (csrc omega_coefficients: 12 + i)
            codes = []
            for key in md.geometric_stiffness_keys:
                if key[0] == "A":
                    codes.append(3 * key[1] + key[2])
                elif key[0] == "alpha":
                    codes.append(9 + key[1])
                elif key[0] == "load":
                    codes.append(12 + key[1])
                else:
                    raise Unsupported(f"body {b.name!r}: its geometric stiffness has the term {key!r}, which the "
                                      "compiled kernel does not evaluate")
            if codes:
                Kg = md.geometric_stiffness_matrices
                stacked = (sparse.vstack([sparse.csr_array(K) for K in Kg], format="csr") if is_sparse(Kg[0])
                           else np.vstack(Kg))
                n_kg = len(codes)
                omega = [_i64(codes), *(f(a) for f, a in zip((_i64, _i64, _f64), csr_parts(stacked)))]
        B = [np.zeros(0)]
        n_B, B_row = 0, 0
        if mean_axis is not None:
            B_row, B_rows = mean_axis
            n_B = len(B_rows)
            B = [_f64(B_rows, (n_B, ne))]
        modal = b.stiffening == "modal-stress"          # G (ne, ne, ne): ReducedModel.modal_geometric_stiffness
        points = mass_point_arrays(md) if gibbs_appell else mass_point_arrays(None)
        loads = self._nodal_loads(b)
        ints = schema.FLEX_I.row(offset=off, n_elastic=ne, damped=int(damped), n_kg=n_kg, n_mean_axis=n_B,
                                 mean_axis_row=B_row, modal_stress=int(modal), n_points=len(points["point_m"]),
                                 n_loads=len(loads["load_vectors"]), n_nodal=len(loads["nodal_i"]), **sizes)
        reals = schema.FLEX_R.row(mass=md.mass, s=np.asarray(s, float), J=np.asarray(J, float).ravel(), EA=EA)
        return schema.arrays(
            schema.FLEX_ARRAYS, f"flexible body {b.name!r}", ints=_i64(ints), reals=_f64(reals), m_O=_f64(m_O, (3, ne)),
            d=_f64(d, (9, ne)), S_indptr=_i64(S_indptr), S_indices=_i64(S_indices), S_data=_f64(S_data),
            M_dd=_f64(b.m_ff), K_dd=_f64(b.k_ff), C_dd=_f64(C) if damped else np.zeros(0),
            **dict(zip(("axial_L", "axial_a", "axial_G", "axial_idx"), axial)),
            **dict(zip(("kg_keys", "kg_indptr", "kg_indices", "kg_data"), omega)), B=B[0],
            modal_G=_f64(md.modal_geometric_stiffness(), (ne, ne, ne)) if modal else np.zeros(0), **points, **loads)

    def _nodal_loads(self, b) -> dict:
        """The nodal-load arrays of `flexmbs.kernel_schema.FLEX_ARRAYS` of flexible body ``b`` (its Model's
        `flexmbs.model.NodalLoad` s, `FlexibleBody.nodal_loads`; csrc ``flex_nodal_loads``): ``load_Q`` (n_L, n_e),
        the Model's load vectors Q_i (q_ext = Q f); ``load_vectors`` (n_L,), the index of load i's function of t
        among the tabulated vectors (added to ``_vectors``: a scalar in a time row's 3 numbers), -1 for a load
        without one (f = 1); the NODAL_I, NODAL_R rows of each (load, node) entry and ``nodal_Phi`` (k, 3, n_e), the
        translation interpolation Phi_j of a force's node (zero for a moment).  `Unsupported` for a load that is
        not a NodalLoad (FlexibleBody refuses DistributedLoads itself) or a function of t that does not give a
        number at t = 0."""
        from .model import NodalLoad
        md, ne = b.model, b.n_e
        vector_of = []
        for i, load in enumerate(md.loads):
            if type(load) is not NodalLoad:
                raise Unsupported(f"body {b.name!r}: its Model's `loads[{i}]` is a {type(load).__name__}, which the "
                                  "compiled kernel does not apply (NodalLoads it does)")
            if load.f is None:
                vector_of.append(-1)
                continue
            what = f"body {b.name!r}: its Model's `loads[{i}].f`"
            value = np.asarray(evaluate(what, 0.0, load.f, 0.0))
            if value.shape != ():
                raise Unsupported(f"{what} gives an array of shape {value.shape} at t = 0, not a number")
            vector_of.append(len(self._vectors))
            self._vectors.append((load.f, what))
        entries = b.nodal_loads
        k = 0 if entries is None else len(entries.kind)
        rows_i, rows_r, Phi = [], [], np.zeros((k, 3, ne))
        if k:
            force = entries.kind == 0
            points = np.zeros((k, 3))
            points[force], Phi[force] = entries.X, entries.Phi
            codes = schema.CODES["NODAL"]
            for kind, load, value, x in zip(entries.kind, entries.load, entries.vectors, points):
                rows_i.append(schema.NODAL_I.row(kind=codes.index("force" if kind == 0 else "moment"), load=load))
                rows_r.append(schema.NODAL_R.row(value=value, point=x))
        return dict(load_Q=_f64(np.asarray(md.Q, dtype=float).T.reshape(len(md.loads), ne)),
                    load_vectors=_i64(vector_of), nodal_i=_i64(rows_i, (-1, schema.NODAL_I.width)),
                    nodal_r=_f64(rows_r, (-1, schema.NODAL_R.width)), nodal_Phi=_f64(Phi))

    @staticmethod
    def _joints(joints, n):
        out = {"n_mark": 0, "W": 1, "E": 0}
        empty_i, empty_f = _i64([]), np.zeros(0)
        for key in ("R", "p", "e", "cols", "point", "kind", "pt", "d1", "d2", "ds", "ang", "sc"):
            out[key] = empty_i
        for key in ("y0", "Phi", "L", "pitch"):
            out[key] = empty_f
        if joints is None:
            return out
        out.update(CompiledSystem._markers(joints.markers, n))
        if joints.point is not None:
            rr, pi, pj, _ = joints.point
            out["pt"] = _i64(np.stack([rr[:, 0], pi, pj], axis=1))
        if joints.dot1 is not None:
            rr, va, vb, _ = joints.dot1
            out["d1"] = _i64(np.stack([rr, va, vb], axis=1))
        if joints.dot2 is not None:
            rr, va, pi, pj, _ = joints.dot2
            out["d2"] = _i64(np.stack([rr, va, pi, pj], axis=1))
        if joints.dist is not None:
            rr, pi, pj, L, _ = joints.dist
            out["ds"], out["L"] = _i64(np.stack([rr, pi, pj], axis=1)), _f64(L)
        if joints.angle is not None:
            rr, vx, vy, vb, _, _ = joints.angle
            out["ang"] = _i64(np.stack([rr, vx, vy, vb], axis=1))
        if joints.screw is not None:
            rr, vx, vy, vz, vb, pi, pj, pitch, _ = joints.screw
            out["sc"], out["pitch"] = _i64(np.stack([rr, vx, vy, vz, vb, pi, pj], axis=1)), _f64(pitch)
        return out

    @staticmethod
    def _markers(mk, n) -> dict:
        """The marker arrays of the joint batch ``mk`` (`flexmbs.constraints.batch._Markers`), one row per
        marker: its kind (MARKER codes of `flexmbs.kernel_schema`), "frame" for the frame markers of
        RigidBodyEP, FlexibleBody and the ground (indices of R, p, the elastic coordinates, y0, Phi and the
        columns, as the batch keeps them), "natural" for a marker of a `RigidBodyNatural` (its 12 columns,
        y0 its point s or vector u, r = S(y0) q; its R, p, e rows point at the ground's constant tail, unused),
        "corot3d" for a marker of a `CorotationalBeam3D` (its three columns: a point's node k, x_k; a vector's
        node 0, psi_0, y0 its u, r = R(psi_0) u, as `CorotationalBeam3D.point` and ``vector``; the other columns
        n, dropped).  `Unsupported` for a marker on any other body."""
        from .bodies.natural import RigidBodyNatural
        Beam3D = loaded_class("flexmbs.bodies.corotational:CorotationalBeam3D")   # None: no beam
        if mk.dim != 3:
            raise Unsupported("a joint has a marker on a body without frame markers; the compiled kernel takes "
                              "markers of RigidBodyEP, FlexibleBody, RigidBodyNatural and the ground")
        nm, frame = len(mk.spec), mk.frame
        E = mk.e_idx.shape[1] if len(frame) else 0
        ground = n + np.arange(7)                       # the ground's R, p in the constant tail (batch.TAIL)
        R, p = np.tile(ground[:3], (nm, 1)), np.tile(ground[3:], (nm, 1))
        e, Phi, y0 = np.full((nm, E), n + 7), np.zeros((nm, 3, E)), np.zeros((nm, 3))
        kind = np.full(nm, schema.CODES["MARKER"].index("natural"))
        point = np.zeros(nm, dtype=bool)
        if len(frame):
            R[frame], p[frame], e[frame], Phi[frame], y0[frame] = mk.R_idx, mk.p_idx, mk.e_idx, mk.Phi, mk.y0
            kind[frame] = schema.CODES["MARKER"].index("frame")
            point[frame] = mk.J_frame[:, 0, 0] == 1.0
        cols = np.array(mk.cols, dtype=np.int64)
        for k in mk.generic:
            side, start, marker, vector = mk.spec[k]
            point[k] = not vector
            if type(side) is Beam3D:                # a node's point x_k, or node 0's section vector R(psi_0) u
                node = 0 if vector else side.node_index(marker)
                cols[k] = n
                cols[k, :3] = start + 6 * node + (3 if vector else 0) + np.arange(3)
                kind[k] = schema.CODES["MARKER"].index("corot3d")
                y0[k] = np.asarray(marker, dtype=float) if vector else 0.0
                continue
            y = np.asarray(marker) if isinstance(marker, (np.ndarray, tuple, list)) else None
            if type(side) is not RigidBodyNatural or y is None or y.shape != (3,) or y.dtype.kind not in "fi":
                raise Unsupported(f"a joint has a marker on body {side.name!r}, a {type(side).__name__}; the compiled "
                                  "kernel takes markers of RigidBodyEP, FlexibleBody, RigidBodyNatural (a point or "
                                  "vector of 3 numbers in body coordinates), CorotationalBeam3D nodes and the ground")
            y0[k] = y
        return dict(n_mark=nm, W=mk.W, E=E, R=_i64(R), p=_i64(p), e=_i64(e), cols=_i64(cols), point=_i64(point),
                    kind=_i64(kind), y0=_f64(y0), Phi=_f64(Phi))

    # -- evaluation ---------------------------------------------------------------------------------
    def laws(self, times) -> np.ndarray:
        """The kernel's time rows at ``times``, (k, 3 (n_drivers + n_vectors)): (f, f', f'') of each
        angle driver, then of each coordinate driver, then the vector of each load given as a
        function of t (torque, force).  Raises `UserFunctionError` as `tabulate` reports it."""
        table, failure = self.tabulate(times)
        if failure is not None:
            raise failure
        return table

    @property
    def held_loads(self) -> list:
        """The loads' functions of time that are held controller outputs (they have ``at_times``:
        `flexmbs.control.Output`'s loads), as (vector index, function, name): in a controlled run the
        kernel reads their vectors from the ``held`` array that the samples write (`steps`)."""
        return list(self._held)

    @property
    def n_vectors(self) -> int:
        """The loads' vectors of time the kernel reads (a time row's last 3 n_vectors columns)."""
        return len(self._vectors)

    def sensor_row(self, kind: str, bodies, vectors: dict, out: int):
        """The kernel's rows of a controller's sensor (csrc/index3_kernel.c ``sense``): (SENSOR_I row:
        kind, first coordinate of each body (-1: the ground; body j only for "angle" and "rate"),
        output index ``out``, each body's SIDE code (ground, rigid, natural); SENSOR_R row: its body-fixed
        ``vectors`` by field name, "u", "w", "x", the others zero), or None when a body is not a
        `RigidBodyEP` or a `RigidBodyNatural` of this system or the ground (the sensor is then read in
        Python)."""
        from .bodies.natural import RigidBodyNatural
        from .bodies.rigid import RigidBodyEP
        system = self.system
        members = {id(b) for b in system.bodies}
        sides = {RigidBodyEP: "rigid", RigidBodyNatural: "natural"}
        if any(b is not None and (type(b) not in sides or id(b) not in members) for b in bodies):
            return None
        bodies = list(bodies) + [None] * (2 - len(bodies))
        offsets = [-1 if b is None else system.slice(b).start for b in bodies]
        codes = [schema.CODES["SIDE"].index("ground" if b is None else sides[type(b)]) for b in bodies]
        return (schema.SENSOR_I.row(kind=SENSOR_KINDS.index(kind), offset_i=offsets[0], offset_j=offsets[1], out=out,
                                    side_i=codes[0], side_j=codes[1]),
                schema.SENSOR_R.row(**{"u": (), "w": (), "x": (), **vectors}))

    def tabulate(self, times, held_by_kernel: bool = False) -> tuple[np.ndarray, UserFunctionError | None]:
        """The rows of `laws` at ``times`` in order, up to the first time at which a law or a load's
        function raises or gives NaN or inf: (the rows before it, that `UserFunctionError` naming it
        and the time), or (all rows, None).  The steps before that time can then run, as they do on
        the numpy path, where the same error stops the step to that time.  ``held_by_kernel``: the
        columns of `held_loads` are left zero (a controlled run: the kernel reads them from ``held``)."""
        times = np.atleast_1d(np.asarray(times, dtype=float))
        by_row, held = self._by_row, self._held
        rows, failure = [], None
        whole = self._driver_history(times) if not by_row else None
        if whole is not None:
            rows = whole
        elif self.drivers or by_row:
            try:
                for t in times:
                    rows.append(self._row(float(t), by_row))
            except UserFunctionError as err:
                failure = err
            times = times[:len(rows)]
        n_d = len(self.drivers)
        table = (np.zeros if held_by_kernel else np.empty)((len(times), 3 * (n_d + len(self._vectors))))
        if len(rows):
            rows = np.asarray(rows, dtype=float)
            table[:, :3 * n_d] = rows[:, :3 * n_d]
            for j, (k, _, _) in enumerate(by_row):
                table[:, 3 * (n_d + k):3 * (n_d + k + 1)] = rows[:, 3 * (n_d + j):3 * (n_d + j + 1)]
        for k, f, what in held if len(times) and not held_by_kernel else ():
            # a held control output (`flexmbs.control.Output`): its values at all times in one call,
            # finite by construction (checked where the controller set them)
            table[:, 3 * (n_d + k):3 * (n_d + k + 1)] = evaluate(what, float(times[0]), f.at_times, times)
        return table, failure

    def _driver_history(self, times: np.ndarray) -> np.ndarray | None:
        """The drivers' columns of `laws` at all ``times`` at once when every driver's law declares
        ``vectorized`` (`flexmbs.constraints.base.law_history`: one call a law, not one a time), else
        None; None too when a law fails at some time, so that `tabulate`'s row-by-row loop finds the
        first failing time and keeps the rows before it."""
        if not self.drivers or not all(getattr(d.law, "vectorized", False) for d in self.drivers):
            return None
        try:
            return np.concatenate([law_history(d.law, times, d.name) for d in self.drivers], axis=1)
        except UserFunctionError:
            return None

    def law_row(self, t: float, out: np.ndarray) -> None:
        """The time row of `laws` at one time t, written into ``out`` (3 (n_drivers + n_vectors),), without
        the table `tabulate` builds (a third of its time for one row; index3-alpha-adaptive's kernel asks a
        row at each trial step).  Raises `UserFunctionError` as `tabulate` reports it."""
        if self._held:                                  # held outputs: their own evaluation
            table, failure = self.tabulate([t])
            if failure is not None:
                raise failure
            out[:] = table[0]
            return
        row = self._row(float(t), self._by_row)
        n_d = len(self.drivers)
        out[:3 * n_d] = row[:3 * n_d]
        for j, (k, _, _) in enumerate(self._by_row):
            out[3 * (n_d + k):3 * (n_d + k + 1)] = row[3 * (n_d + j):3 * (n_d + j + 1)]

    def _row(self, t: float, vectors) -> list[float]:
        """One row of `laws` at t for the drivers and the load functions ``vectors`` ((index, f, name)),
        each value checked (`law_values`; the load functions' vectors as `flexmbs.bodies.base.Body.applied`
        checks the loads on the numpy path, by the same name)."""
        row = [x for d in self.drivers for x in law_values(d.law, t, d.name)]
        for _, f, what in vectors:
            value = np.asarray(evaluate(what, t, f, t), dtype=float).ravel()
            require_finite(value, what, t)
            row.extend(value)
            row.extend((0.0,) * (3 - value.size))           # a planar torque (1) or force (2): 3 columns
        return row

    def evaluate(self, t, q, v) -> dict:
        """M, Q, C, C_q, dQ_v/dv and K_el (the elastic stiffness, zero outside the elastic
        coordinates) at (t, q, v), computed by the kernel (for checks against the numpy path); with
        ``formulation="gibbs-appell"`` M is M_GA, Q is Q_a - g and dQ_v/dv is zero."""
        n, m = self.n, self.m
        q, v = (self._vector(x, name) for x, name in ((q, "q"), (v, "v")))
        out = {"M": np.zeros((n, n)), "Q": np.zeros(n), "C": np.zeros(m), "Cq": np.zeros((m, n)),
               "D": np.zeros((n, n)), "K": np.zeros((n, n))}
        law = np.ascontiguousarray(self.laws([t])[0])
        _kernel.evaluate(self.handle, q, v, law, out["M"], out["Q"], out["C"], out["Cq"],
                         out["D"], out["K"])
        return out

    def constraint_rates(self, t, q, v) -> tuple[np.ndarray, np.ndarray]:
        """(gamma, C_t) of the constraints at (t, q, v) computed by the kernel (csrc ``constraint_rates``, what
        index3-alpha-adaptive's trial steps use; the index-1 formulations' gamma on the compiled path,
        `flexmbs.formulations.evaluations`), equal to `flexmbs.System.gamma` and `time_derivative`
        to round-off (tests/test_compiled_adaptive.py)."""
        q, v = (self._vector(x, name) for x, name in ((q, "q"), (v, "v")))
        gamma, Ct = np.zeros(self.m), np.zeros(self.m)
        _kernel.constraint_rates(self.handle, q, v, self._law_row(t), gamma, Ct)
        return gamma, Ct

    @property
    def python_laws(self) -> list[str]:
        """The names of the laws of t (drivers' laws, loads' functions of t) that index3-alpha-adaptive's kernel
        asks of Python at each trial step (kind "python" of `time_law`: users' callables); empty: no Python
        call per trial step."""
        python = schema.CODES["TIME"].index("python")
        return [name for name, row in zip(self._time_law_names, self._packed["time_laws"]) if row[0] == python]

    def terms(self, t, q, v) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(M, Q, C, C_q) at (t, q, v) in one kernel call (csrc/index3_kernel.c ``py_terms``): the one
        evaluation entry of the consumers that keep their own solves in numpy, method radau-dae's stage
        equations (`flexmbs.integrators.radau_dae`) and the index-1 formulations' accelerations and
        projections (`flexmbs.formulations.evaluations`); q and v float64 vectors of n_q (the integrator's
        own, not checked here: `evaluate` checks a user's).

        gamma (C_q q'' = gamma) and C_t are not returned: `constraint_rates` gives them (one more kernel
        call; `scleronomic` says when C_t = 0).  `Unsupported` when the loaded kernel predates this entry."""
        if not hasattr(_kernel, "terms"):
            raise Unsupported(f"the compiled kernel {getattr(_kernel, '__file__', '')} has no terms (built "
                              "before its evaluations were used outside its steps); rebuild it "
                              "(`python setup.py build_ext --inplace`)")
        n, m = self.n, self.m
        law = self._law_row(t)
        M, Q, C, Cq = np.empty((n, n)), np.empty(n), np.empty(m), np.empty((m, n))
        _kernel.terms(self.handle, np.array(q, dtype=float), np.array(v, dtype=float), law, M, Q, C, Cq)
        return M, Q, C, Cq

    def terms_history(self, T, Q, V) -> tuple[np.ndarray, ...]:
        """(M, Q, C, C_q, gamma, C_t) at N states, stacked ((N, n, n), (N, n), (N, m), (N, m, n), (N, m), (N, m)):
        what N calls of `terms` and `constraint_rates` give, in one kernel call (csrc ``py_terms_history``), the
        time rows of all the times ``T`` (N,) from one evaluation of the laws (`laws`, `tabulate`: one call a
        law when each declares ``vectorized``); Q and V (N, n_q) the coordinates and velocities (e.g. the
        outputs of a run, `flexmbs.formulations.index1.Index1.multiplier_history`).

        Raises
        ------
        ValueError
            T not a vector of N times or Q, V not (N, n_q) (the message names the argument).
        Unsupported
            The loaded kernel predates this entry (rebuild it).
        UserFunctionError
            A law fails at one of the times (as `laws` reports it).
        """
        if not hasattr(_kernel, "terms_history"):
            raise Unsupported(f"the compiled kernel {getattr(_kernel, '__file__', '')} has no terms_history (built "
                              "before the index-1 multipliers were evaluated at all outputs at once); rebuild it "
                              "(`python setup.py build_ext --inplace`)")
        T, Q, V = self._states(T, Q, V)
        N, n, m = len(T), self.n, self.m
        laws = np.ascontiguousarray(self.laws(T) if self.time_row_width else np.zeros((N, 0)))
        out = (np.empty((N, n, n)), np.empty((N, n)), np.empty((N, m)), np.empty((N, m, n)), np.empty((N, m)),
               np.empty((N, m)))
        _kernel.terms_history(self.handle, N, Q, V, laws, *out)
        return out

    def _states(self, T, Q, V) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """T (N,), Q and V (N, n_q) of `terms_history` as C-contiguous float64 arrays; ValueError naming the one
        of another shape."""
        try:
            times = np.asarray(T, dtype=float)
        except (TypeError, ValueError):
            times = None
        if times is None or times.ndim != 1:
            raise ValueError(f"CompiledSystem.terms_history: `T` must be a vector of times, got "
                             f"{'an array of shape ' + str(times.shape) if times is not None else repr(T)}")
        T = times
        states = []
        for x, name in ((Q, "Q"), (V, "V")):
            try:
                a = np.ascontiguousarray(x, dtype=float)
            except (TypeError, ValueError):
                a = None
            if a is None or a.shape != (len(T), self.n):
                raise ValueError(f"CompiledSystem.terms_history: `{name}` must be ({len(T)}, {self.n}) (a row of "
                                 f"n_q = {self.n} numbers at each of the {len(T)} times), got "
                                 f"{'shape ' + str(a.shape) if a is not None else repr(x)}")
            states.append(a)
        return (T, *states)

    def law_rows(self, times) -> np.ndarray:
        """The kernel's time rows at ``times`` as one C-contiguous (k, tw) array, from the rows kept by
        `_law_row` (a trial step of radau-dae: t_n and its three stage times, `radau_steps`)."""
        return np.ascontiguousarray(np.stack([self._law_row(t) for t in times]).reshape(len(times), -1))

    @property
    def time_row_width(self) -> int:
        """tw, the width of the kernel's time row: (f, f', f'') of each driver, a load's vector of t."""
        return 3 * (len(self.drivers) + self.n_vectors)

    def radau_steps(self, row, atol, y, a, poly, scal, jac, lu, piv, start, scratch, count, laws, terms,
                    t_stop: float, near_rtol: float, points, wanted, rows, done) -> int:
        """Method radau-dae's steps in one kernel call (csrc/index3_kernel.c ``radau_steps``,
        `flexmbs.integrators.radau_dae.RadauDAE._kernel_steps`) up to the step that reaches ``t_stop`` (within
        ``near_rtol`` h), t_end, as many steps as ``points`` has rows or a failure; returns the status (radau_dae
        ``RUN_*``); ``points`` (flat, rows of 1 + 2 n_q + n_c) gets each accepted step's t, q, v, lam; the
        outputs at the times ``wanted`` (sorted) in the last step go to ``rows`` (k, 2 n_q + n_c: q, v, lam; the
        dense output projected onto the constraints), ``done`` (int64, k + 1) saying which the kernel did (0:
        C_q lost rank there, left to Python) and, last, how many of ``wanted`` the step reached.
        ``row``: the RADAU row (flexmbs/kernel_schema.py); the state y, a, poly, scal and the kept J, LUs and
        F(t_n, y_n) (jac, lu, piv, start) are read and written; count (int64: n_steps, n_rejected, n_jac, n_lu,
        n_rhs, n_newton) is added to; laws (4, tw): the time rows of a trial, written by ``terms(t, h)`` (a
        callable, for a user's law of t) or, when None, by the kernel (affine laws).  `Unsupported` when the
        loaded kernel predates this entry."""
        if not hasattr(_kernel, "radau_steps"):
            raise Unsupported(f"the compiled kernel {getattr(_kernel, '__file__', '')} has no radau_steps (built "
                              "before radau-dae's steps ran in it); rebuild it (`python setup.py build_ext --inplace`)")
        return _kernel.radau_steps(self.handle, row, atol, y, a, poly, scal, jac, lu, piv, start, scratch, count, laws,
                                   terms, float(t_stop), float(near_rtol), points, wanted, rows, done)

    @property
    def scleronomic(self) -> bool:
        """True when C_t = 0: the drivers are the only rheonomic rows the kernel evaluates."""
        return not self.drivers

    def _law_row(self, t) -> np.ndarray:
        """The kernel's time row at t (`laws`), the empty row without drivers or load functions of t.
        The rows of the last LAW_ROWS_KEPT times are kept: radau-dae evaluates at its three stage times
        in every Newton iteration and at one time for all the columns of a Jacobian (A03: 8021
        evaluations at about 1500 times; the laws in Python took 0.46 s of its 2.1 s)."""
        if not self.drivers and not self._by_row and not self._held:
            return _NO_LAW
        if self._held:                          # a controller's held outputs change at its samples: not kept
            return np.ascontiguousarray(self.laws([t])[0])
        t = float(t)
        row = self._law_rows.get(t)
        if row is None:
            if len(self._law_rows) >= LAW_ROWS_KEPT:
                self._law_rows.clear()
            row = self._law_rows[t] = np.ascontiguousarray(self.laws([t])[0])
        return row

    def _vector(self, x, name: str) -> np.ndarray:
        """A float64 copy of the state vector ``x`` (n_q,); ValueError naming it otherwise (the kernel
        itself refuses arrays of the wrong type or size, csrc/index3_kernel.c's get_array)."""
        try:
            a = np.array(x, dtype=float)
        except (TypeError, ValueError):
            a = None
        if a is None or a.shape != (self.n,):
            raise ValueError(f"CompiledSystem.evaluate: `{name}` must be a vector of {self.n} numbers, got "
                             f"{'an array of shape ' + str(np.shape(x)) if a is not None else repr(x)}")
        return a

    def steps(self, params, int_params, state, flags, piv, times, hs, laws, t_out, x_out, lam_out, x_old,
              info, control=None, adaptive=None) -> float:
        """Runs the kernel's index-3 generalized-alpha steps (`flexmbs.integrators.index3_alpha`); the
        states at the output times ``t_out`` go to ``x_out`` (n_out, 2 n_q), their multipliers to
        ``lam_out`` (n_out, n_c).  ``control`` (None: `NO_CONTROL`): (sample_at (k,) int64, 1 after
        the steps that end at a sample time; sample(step) -> bool, called there after the kernel has
        written the sensors' values to ``sensed`` (False: stop after that step); held (3 n_vectors,),
        the held load vectors it reads where held_mask (n_vectors,) int64 is 1; the sensor rows'
        ints (SENSOR_I width n_s,) and reals (9 n_s,) of `sensor_row`; sensed), `flexmbs.control.KernelSampling`.
        ``adaptive`` (None: the fixed schedule ``times``, ``hs``): the step-size control of
        index3-alpha-adaptive, which writes the accepted steps into ``times``, ``hs`` and the rows at the
        output times ``t_out`` (and at every step point) into x_out, lam_out (its tuple:
        `Index3AdaptiveAlpha._adaptive_kernel`, csrc ``Adaptive``)."""
        args = (self.handle, params, int_params, state, flags, piv, (times, hs, laws),
                (t_out, x_out, lam_out, x_old, info), NO_CONTROL if control is None else control)
        return _kernel.steps(*args) if adaptive is None else _kernel.steps(*args, adaptive)
