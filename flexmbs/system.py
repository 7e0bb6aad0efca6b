"""A multibody system: bodies, constraints, and their global vectors and matrices.

The System owns the layout: body b gets the slice ``slice(b)`` of q, v = q' and the force
vector; constraint c gets the rows ``rows(c)`` of C, C_q, C_t, gamma and the multipliers.
The bodies' internal constraints (Euler-parameter norm, natural-coordinate rigidity) come
first, in body order, then the given constraints.  Bodies of one class
that offer a ``batch`` evaluator (the rigid bodies) and their one-body internal constraints are
evaluated together on stacked coordinates.  The equations of motion are

.. code:: text

    M(q) q'' + C_q^T lam = Q(t, q, q'),    C(q, t) = 0,    C_q q'' = gamma

with M block-diagonal over the bodies and Q = Q_e + Q_v.
"""
from __future__ import annotations

import logging
import warnings
from typing import NamedTuple

import numpy as np

from .constraints.base import EMPTY, ConstraintError, force_and_torque, torque_and_internal_columns
from .constraints.batch import JointBatch, evaluated_by_batch
from .constraints.reaction_blocks import ReactionBlocks, least_squares, unstacked_reason
from .block_mass import BlockMass, MassGroup, constant_inverse
from .newton import NewtonError, max_norm, newton
from .lazy import LazyModule

scipy = LazyModule("scipy")                 # scipy.linalg loads at its first use (flexmbs.lazy)

__all__ = ["System", "SystemEnergy", "Momentum", "InconsistentStateError", "InitialStateWarning", "CONSISTENCY_RTOL",
           "ReactionsPerOutputWarning", "REACTION_BLOCK"]

log = logging.getLogger(__name__)

_EPS = np.finfo(float).eps

# An initial state is consistent when every constraint holds to CONSISTENCY_RTOL times its scale
# (System.consistency): far above the round-off of data typed to double precision and of
# System.assemble (|C| <= 1e-12), far below a violation that changes the motion (a 1e-8 m gap
# in a 1 m mechanism).
CONSISTENCY_RTOL = 1e-8

# System.reaction_history evaluates this many outputs at a time: arrays of a block are a few MB
# (C_q of the chosen joints, n_rows x n_q per output), whatever the length of the run
REACTION_BLOCK = 256


class SystemEnergy(NamedTuple):
    """The mechanical energy of a System at one state, by kind, each in J; ``sum(energy)`` is the total
    E = T + V_g + U, conserved by a system without damping, drivers and non-conservative loads.

    kinetic : T = 1/2 q'^T M(q) q', summed over the bodies.
    gravity : V_g = -g . sum_b m_b r_C,b, the potential of gravity (0 without gravity).
    strain : U, the strain energy of the flexible bodies (`strain_energy` of FlexibleBody, including
        its axial-strain stiffening, and of the corotational beams) plus the energy stored in the
        springs of the force elements between bodies (`flexmbs.forces`); 0 for rigid bodies alone.
    """

    kinetic: float
    gravity: float
    strain: float


class Momentum(NamedTuple):
    """The momentum of a System at one state, in global components (`System.momentum`).

    linear : (3,) [N s] (2D: (2,)), sum of m v over the mass.
    angular : (3,) [N m s] about the given point O, sum of (r - O) x v dm plus the spin of the
        sections and rigid bodies (2D: a float, its z component).
    """

    linear: np.ndarray
    angular: np.ndarray | float


def _finite_vector(x, shape: tuple, what: str, method: str) -> np.ndarray:
    """``x`` as a float array of ``shape``, finite; ValueError naming ``method``'s argument ``what``."""
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"System.{method}: `{what}` must be a finite array of shape {shape}, got {x!r}") from None
    if a.shape != shape or not np.all(np.isfinite(a)):
        raise ValueError(f"System.{method}: `{what}` must be a finite array of shape {shape}, got "
                         f"{_shown(a) if a.ndim else repr(x)} (shape {a.shape})")
    return a


class InconsistentStateError(ConstraintError):
    """An initial state that violates the constraints beyond the tolerance of `System.consistency`.

    Attributes: ``names`` (the worst constraint first), ``level`` ("position" or "velocity"),
    ``size`` (its largest |C| or |C_q v + C_t|) and ``tol``.
    """

    def __init__(self, message: str, name: str, level: str, size: float, tol: float):
        super().__init__(message, [name])
        self.level, self.size, self.tol = level, size, tol


class ReactionsPerOutputWarning(UserWarning):
    """`System.reaction_history` computes some constraints' reactions one output at a time (the
    message names them and why: `flexmbs.constraints.reaction_blocks.unstacked_reason`)."""


class InitialStateWarning(UserWarning):
    """An initial state was assembled (moved onto the constraints) on request: says how far."""


def _snapshot(value):
    """A copy of ``value`` to compare with later (`_changed`): arrays by value, lists and tuples entry
    by entry, anything else (numbers, strings, bodies, callables, markers) as it is."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, (list, tuple)):
        return tuple(_snapshot(x) for x in value)
    return value


def _body_tangent_blocks(body, KC) -> tuple[np.ndarray, np.ndarray]:
    """(K_b, C_b) of ``body.tangent``, checked: two (n_q, n_q) arrays, else a ValueError naming the body,
    what it gave and what to return (None lets the System difference the body).  Non-finite entries pass,
    as non-finite differences would: index3-alpha's Newton failure names them with the state."""
    n = body.n_q
    try:
        Kb, Cb = (np.asarray(x, dtype=float) for x in KC)
    except (TypeError, ValueError):
        raise ValueError(f"System: body {body.name!r}: `tangent` must return (K_b, C_b), two ({n}, {n}) arrays, or "
                         f"None, got {type(KC).__name__}") from None
    for what, X in (("K_b", Kb), ("C_b", Cb)):
        if X.shape != (n, n):
            raise ValueError(f"System: body {body.name!r}: `tangent` returned {what} of shape {X.shape}, expected "
                             f"({n}, {n}) (its n_q), or None to have the System difference the body")
    return Kb, Cb


def _changed(old, new) -> bool:
    """True if ``new`` differs from the snapshot ``old``: arrays by their bytes (an array changed in
    place too; bytes rather than np.array_equal: a tenth of the time on these small arrays), numbers
    by value, lists and tuples entry by entry, other objects by identity."""
    if isinstance(old, np.ndarray) or isinstance(new, np.ndarray):
        return not (isinstance(old, np.ndarray) and isinstance(new, np.ndarray) and old.shape == new.shape
                    and old.dtype == new.dtype and old.tobytes() == new.tobytes())
    if isinstance(old, tuple):
        return not (isinstance(new, (list, tuple)) and len(new) == len(old)
                    and not any(_changed(a, b) for a, b in zip(old, new)))
    if isinstance(old, (bool, int, float, complex, str, np.number)):
        return type(old) is not type(new) or old != new
    return old is not new


def _public_attributes(obj) -> dict:
    """The attributes of ``obj`` that its constructor set and others may read (names without a leading
    underscore): a body's mass, inertia and loads, a joint's body points and axes."""
    return {k: _snapshot(v) for k, v in vars(obj).items() if not k.startswith("_")}


def _shown(value) -> str:
    """A short text of an attribute's value for a message: small arrays as lists, large ones by shape."""
    if isinstance(value, np.ndarray):
        return repr(value.tolist()) if value.size <= 9 else f"an array of shape {value.shape}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_shown(x) for x in value) + "]"
    return repr(value)


def _entries(items, what: str, needs, expected: str) -> list:
    """``items`` as a list, each entry checked to have the attributes ``needs`` (a body's or a
    constraint's protocol); ValueError naming the argument ``what``, the entry and its type otherwise
    (a string or a single object where a sequence is expected, too)."""
    if isinstance(items, (str, bytes)) or not hasattr(items, "__iter__"):
        raise ValueError(f"System: `{what}` must be a sequence, each entry {expected}; got {items!r} "
                         f"({type(items).__name__})")
    items = list(items)
    for k, x in enumerate(items):
        missing = [a for a in needs if not hasattr(x, a)]
        if missing:
            raise ValueError(f"System: `{what}` entry {k} must be {expected}, got {x!r} ({type(x).__name__}, "
                             f"without {', '.join(missing)})")
    return items


def _joined(parts) -> dict:
    """One `System.reaction_history` entry from the entries of consecutive blocks of outputs."""
    if len(parts) == 1:
        return parts[0]
    return {"origin": np.concatenate([p["origin"] for p in parts]),
            "rotation": np.concatenate([p["rotation"] for p in parts]),
            "bodies": {b: {key: np.concatenate([p["bodies"][b][key] for p in parts]) for key in parts[0]["bodies"][b]}
                       for b in parts[0]["bodies"]}}


def _batched(obj) -> bool:
    """True if obj's own class (not a parent) defines `batch`: a subclass that overrides forces or
    residuals is evaluated one by one unless it brings its own batch evaluator."""
    return "batch" in type(obj).__dict__


class System:
    """Bodies and constraints with one global coordinate layout.

    Parameters
    ----------
    bodies : sequence of Body
        Distinct names; all of one dimension (2 or 3).
    constraints : sequence of Constraint
        Joints and drivers among these bodies (None: the ground); the bodies' internal
        constraints are added.
    gravity : array (dim,), optional
        Gravitational acceleration, e.g. (0, 0, -9.81) [m/s^2]; None: no gravity.
    forces : sequence of force elements, optional
        Springs, dampers, actuators and force laws between these bodies (`flexmbs.forces`:
        SpringDamper, RotationalSpringDamper, Bushing, ForceLaw; a joint's stops and friction,
        `flexmbs.constraints.JointLimit` and `JointFriction`), kept in ``force_elements``:
        their generalized forces enter Q, their stored energy U, their dissipated and actuator
        powers the works (``damping``, ``loads``) and their tangent K_el and C_t.
    """

    def __init__(self, bodies, constraints=(), gravity=None, forces=()):
        self.bodies = _entries(bodies, "bodies", ("name", "n_q", "dim", "mass_matrix", "forces"),
                               "a body (flexmbs.bodies: RigidBodyEP, RigidBody2D, FlexibleBody, ...)")
        if not self.bodies:
            raise ValueError("System: `bodies` is empty; give at least one body")
        names = [b.name for b in self.bodies]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"System: body names must be unique, got {dup} more than once")
        dims = {b.dim for b in self.bodies}
        if len(dims) != 1:
            raise ValueError(f"System: all bodies must have the same dimension, got {sorted(dims)}")
        self.dim = dims.pop()
        if gravity is None:
            self.gravity = None
        else:
            g = np.asarray(gravity, dtype=float)
            if g.shape != (self.dim,) or not np.all(np.isfinite(g)):
                raise ValueError(f"System: `gravity` must be a finite vector of {self.dim} components, got {gravity!r}")
            self.gravity = g
        given = _entries(constraints, "constraints", ("name", "bodies", "n_c", "residual", "jacobian"),
                         "a constraint (flexmbs.constraints: Revolute, Spherical, Distance, ...)")
        internal = [c for b in self.bodies for c in b.internal_constraints()]
        self.constraints = internal + given
        self.force_elements = _entries(forces, "forces", ("name", "bodies", "generalized_forces", "potential",
                                                          "powers", "tangent"),
                                       "a force element (flexmbs.forces: SpringDamper, RotationalSpringDamper, "
                                       "Bushing, ForceLaw)")
        self.n_internal = len(internal)
        self._built_from = [(b, _public_attributes(b)) for b in self.bodies] + \
            [(c, _public_attributes(c)) for c in given]
        cnames = [c.name for c in self.constraints]
        dup = sorted({n for n in cnames if cnames.count(n) > 1})
        if dup:
            raise ValueError(f"System: constraint names must be unique, got {dup} more than once; pass `name=`")
        ids = {id(b) for b in self.bodies}
        fnames = [f.name for f in self.force_elements]
        dup = sorted({n for n in fnames if fnames.count(n) > 1})
        if dup:
            raise ValueError(f"System: force element names must be unique, got {dup} more than once; pass `name=`")
        for f in self.force_elements:
            for b in f.bodies:
                if b is not None and id(b) not in ids:
                    raise ValueError(f"System: force element {f.name!r} refers to body {b.name!r}, which is not "
                                     "in `bodies`")
        for c in given:
            for b in c.bodies:
                if b is not None and id(b) not in ids:
                    raise ValueError(f"System: constraint {c.name!r} refers to body {b.name!r}, which is not "
                                     "in `bodies`")
        # layout
        self._qslice, start = {}, 0
        for b in self.bodies:
            self._qslice[id(b)] = slice(start, start + b.n_q)
            start += b.n_q
        self.n_q = start
        self._rows, start = {}, 0
        for c in self.constraints:
            self._rows[id(c)] = slice(start, start + c.n_c)
            start += c.n_c
        self.n_c = start
        self._holonomic_rows = np.concatenate(
            [np.arange(self._rows[id(c)].start, self._rows[id(c)].stop) for c in self.constraints if c.holonomic]
            + [np.zeros(0, dtype=int)]).astype(int)
        self._cslices = [[None if b is None else self._qslice[id(b)] for b in c.bodies] for c in self.constraints]
        self._fslices = [[None if b is None else self._qslice[id(b)] for b in f.bodies] for f in self.force_elements]
        self._fcols = [self._stacked_columns(f, sls) for f, sls in zip(self.force_elements, self._fslices)]
        # bodies of one class with a `batch` evaluator are evaluated together (stacked coordinates)
        groups = {}
        for b in self.bodies:
            key = (type(b), b.n_q) if _batched(b) else id(b)
            groups.setdefault(key, []).append(b)
        self._body_groups, self._single_bodies, self._batched_members = [], [], []
        for members in groups.values():
            if _batched(members[0]):
                idx = np.array([np.arange(self._qslice[id(b)].start, self._qslice[id(b)].stop) for b in members])
                self._body_groups.append((type(members[0]).batch(members), idx, members[0].constant_mass))
                self._batched_members.append(members)
            else:
                self._single_bodies.append(members[0])
        self._mass_groups = self._mass_group_sources()
        batched = {id(b) for b in self.bodies} - {id(b) for b in self._single_bodies}
        # bodies with an analytic elastic stiffness on their last n_e coordinates (FlexibleBody)
        self._elastic = [(b, slice(self._qslice[id(b)].stop - b.n_e, self._qslice[id(b)].stop))
                         for b in self.bodies if hasattr(b, "elastic_stiffness")]
        self._loaded = [(b, self._qslice[id(b)]) for b in self.bodies if id(b) in batched and b.loads]
        self._strained = [b for b in self.bodies if hasattr(b, "strain_energy")]      # flexible bodies: U
        # one-body constraints of one class with a `batch` evaluator (the internal constraints); a class
        # whose equations read only the first `batch_columns` coordinates of its body is batched over
        # bodies of any size (the Euler-parameter norms of rigid and flexible bodies together)
        groups, width = {}, {}
        for k, c in enumerate(self.constraints):
            b = c.bodies[0] if len(c.bodies) == 1 else None
            if b is not None and _batched(c):
                width[k] = min(getattr(type(c), "batch_columns", b.n_q), b.n_q)
                key = (type(c), width[k], c.n_c)
            else:
                key = k
            groups.setdefault(key, []).append(k)
        self._constraint_groups, self._single_constraints = [], []
        for members in groups.values():
            c0 = self.constraints[members[0]]
            if len(c0.bodies) == 1 and _batched(c0):
                cols = np.array([self._cslices[k][0].start + np.arange(width[k]) for k in members])
                rows = np.array([np.arange(self._rows[id(self.constraints[k])].start,
                                           self._rows[id(self.constraints[k])].stop) for k in members])
                self._constraint_groups.append((type(c0).batch([self.constraints[k] for k in members]), rows, cols))
            else:
                self._single_constraints.extend(members)
        # two-body joints of one class with a `pair_batch` evaluator (planar revolutes of rigid bodies)
        self._pair_groups = []
        by_class = {}
        for k in self._single_constraints:
            c = self.constraints[k]
            if "pair_batch" in type(c).__dict__ and c.holonomic:
                by_class.setdefault(type(c), []).append(k)
        taken = set()
        for cls, members in by_class.items():
            rows = [np.arange(self._rows[id(self.constraints[k])].start, self._rows[id(self.constraints[k])].stop)
                    for k in members]
            batch, take = cls.pair_batch([self.constraints[k] for k in members],
                                         [self._cslices[k] for k in members], rows)
            if batch is not None:
                self._pair_groups.append((batch, np.array([rows[i] for i in take])))
                taken.update(members[i] for i in take)
        self._single_constraints = [k for k in self._single_constraints if k not in taken]
        # joints made of primitives (point, dot1, dot2, dist, angle): all in one JointBatch
        joints = [k for k in self._single_constraints if evaluated_by_batch(self.constraints[k])]
        self._joints = None
        if joints:
            cols = [[None if sl is None else sl.start for sl in self._cslices[k]] for k in joints]
            rows = [self._rows[id(self.constraints[k])].start for k in joints]
            self._joints = JointBatch([self.constraints[k] for k in joints], cols, rows, self.n_q, self.n_c,
                                      self.dim)
            self._single_constraints = [k for k in self._single_constraints if k not in set(joints)]

    # -- how the constraints are evaluated ------------------------------------------------------
    @property
    def joint_batch(self):
        """The `flexmbs.constraints.batch.JointBatch` that evaluates together every joint made of
        primitives (point, dot1, dot2, dist, angle), or None if the system has none."""
        return self._joints

    @property
    def pair_batches(self) -> tuple:
        """The two-body joints of one class evaluated together by that class's ``pair_batch``
        (planar revolutes of rigid bodies): pairs (batch, rows), rows (n_joints, n_c) the rows of each
        joint in C."""
        return tuple(self._pair_groups)

    @property
    def single_constraints(self) -> tuple[int, ...]:
        """Indices into `constraints` of the constraints evaluated one by one (in no batch)."""
        return tuple(self._single_constraints)

    # -- layout ---------------------------------------------------------------------------------
    def slice(self, body) -> slice:
        """Slice of ``body`` in q, v and the force vector."""
        try:
            return self._qslice[id(body)]
        except KeyError:
            raise ValueError(f"System: {body!r} is not a body of this system") from None

    def rows(self, constraint) -> slice:
        """Rows of ``constraint`` in C, C_q, gamma and lam."""
        try:
            return self._rows[id(constraint)]
        except KeyError:
            raise ValueError(f"System: {constraint!r} is not a constraint of this system") from None

    @classmethod
    def prescribed(cls, model, name: str = "body") -> "System":
        """The System of a Model on its prescribed frame: the `FlexibleBody` of ``model`` (placed at
        the frame's state at t = 0) whose frame a `PrescribedFrame` drives along ``model.motion``,
        with the model's gravity.  `flexmbs.run` runs it by elimination of the frame (the Model's
        formulations and fast paths, `flexmbs.system_run.prescribed_model`) unless the index-3
        formulation is asked for."""
        from .bodies.flexible import FlexibleBody
        from .constraints.prescribed import PrescribedFrame
        body = FlexibleBody.from_model(model, name)
        return cls([body], [PrescribedFrame(body, model.motion)], gravity=model.gravity)

    def row_names(self) -> list[str]:
        """The name of the constraint of each row of C and lam (n_c names; a constraint with k rows
        repeats its name k times, the bodies' internal constraints first)."""
        names = [""] * self.n_c
        for c in self.constraints:
            sl = self._rows[id(c)]
            names[sl] = [c.name] * (sl.stop - sl.start)
        return names

    def body(self, name: str):
        """The body called ``name``."""
        for b in self.bodies:
            if b.name == name:
                return b
        raise ValueError(f"System: no body {name!r}; bodies: {[b.name for b in self.bodies]}")

    def constraint(self, name: str):
        """The constraint called ``name``."""
        for c in self.constraints:
            if c.name == name:
                return c
        raise ValueError(f"System: no constraint {name!r}; constraints: {[c.name for c in self.constraints]}")

    def _split(self, x, k):
        return [EMPTY if sl is None else x[sl] for sl in self._cslices[k]]

    # -- state ----------------------------------------------------------------------------------
    def initial_coordinates(self) -> np.ndarray:
        """q0 of all bodies, from their constructors."""
        return np.concatenate([b.initial_coordinates() for b in self.bodies])

    def initial_velocities(self) -> np.ndarray:
        """v0 of all bodies, from their constructors."""
        return np.concatenate([b.initial_velocities() for b in self.bodies])

    def check_start(self, q) -> None:
        """Refuse coordinates q that the bodies' internal constraints say cannot start a run (e.g.
        Euler parameters off the unit norm: `EulerParameterNorm.check_start`); ValueError naming the body."""
        q = np.asarray(q, dtype=float)
        for k, c in enumerate(self.constraints[:self.n_internal]):
            check = getattr(c, "check_start", None)
            if check is not None:
                check(self._split(q, k))

    # -- dynamics -------------------------------------------------------------------------------
    def _mass_group_sources(self) -> list:
        """What `mass_blocks` evaluates: per group of stacked bodies (and per single body) either its
        constant `MassGroup` (blocks and inverse computed here, once) or (evaluator, idx, names), the
        evaluator ``f(q[idx]) -> (n_g, n_b, n_b)`` called at each evaluation."""
        out = []
        groups = [(batch.mass_matrix, idx, members, constant) for (batch, idx, constant), members
                  in zip(self._body_groups, self._batched_members)]
        for b in self._single_bodies:
            sl = self._qslice[id(b)]
            groups.append((lambda qb, b=b: np.asarray(b.mass_matrix(qb[0]), dtype=float)[None],
                           np.arange(sl.start, sl.stop)[None], [b], b.constant_mass))
        for f, idx, members, constant in groups:
            names = tuple(b.name for b in members)
            if constant:
                q0 = np.concatenate([b.initial_coordinates() for b in members]).reshape(idx.shape)
                blocks = np.array(f(q0), dtype=float)
                out.append(MassGroup(idx, blocks, names, constant_inverse(blocks)))
            else:
                out.append((f, idx, names))
        return out

    def mass_blocks(self, q) -> BlockMass:
        """M(q) as its blocks (`flexmbs.block_mass.BlockMass`): one `MassGroup` per kind of stacked
        bodies (point masses, rigid bodies in Euler parameters, planar bodies, natural coordinates:
        one batched evaluation each) and per other body; constant groups are built once."""
        return BlockMass(self.n_q, tuple(g if isinstance(g, MassGroup) else MassGroup(g[1], g[0](q[g[1]]), g[2])
                                         for g in self._mass_groups))

    def mass_matrix(self, q) -> np.ndarray:
        """M(q), dense block-diagonal (n_q, n_q) (a fresh array) from `mass_blocks`."""
        return self.mass_blocks(q).dense()

    def forces(self, t, q, v) -> np.ndarray:
        """Q = Q_e + Q_v, (n_q,): `force_history` of one row."""
        return self._force_rows(np.array([float(t)]), np.asarray(q, dtype=float)[None],
                                np.asarray(v, dtype=float)[None])[0]

    def _validated_rows(self, t, q, v) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(t (n_t,), q, v (n_t, n_q)) of a ``force_history(t, q, v)`` as float arrays; ValueError naming the
        argument, its expected and its given shape otherwise."""
        try:
            t = np.asarray(t, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise ValueError(f"System.force_history: `t` must be the times, a vector of numbers, got {t!r}") from None
        out = [t]
        for name, x in (("q", q), ("v", v)):
            try:
                x = np.asarray(x, dtype=float)
            except (TypeError, ValueError):
                raise ValueError(f"System.force_history: `{name}` must be an array ({len(t)}, {self.n_q}) of "
                                 f"numbers, got {x!r}") from None
            if x.shape != (len(t), self.n_q):
                raise ValueError(f"System.force_history: `{name}` must be an array ({len(t)}, {self.n_q}): one row "
                                 f"of n_q = {self.n_q} numbers at each of the {len(t)} times `t`, got shape {x.shape}")
            out.append(x)
        return tuple(out)

    def force_history(self, t, q, v) -> np.ndarray:
        """Q = Q_e + Q_v (n_t, n_q) at the times t (n_t,) and the rows of q, v (n_t, n_q):

        .. code:: text

            Q[k] = sum_b Q_b(t_k, q_b[k], v_b[k]) + sum_f G_f^T F_f(t_k, q[k], v[k])

        (bodies b: weight, quadratic-velocity vector, loads; force elements f).  All rows at once where the
        pieces have a form over rows: a group of bodies of one class (`_body_groups`) is one batch of its
        bodies repeated for every row (`_rows_batch`: rows times bodies are more bodies of the batch), a
        contact is one `flexmbs.contact.Contact.stacked_force_history`.  Row by row, the rest: the loads of
        batched bodies (a load is a function of one state), the bodies without a batch (flexible,
        corotational, tree) and the force elements other than contacts."""
        return self._force_rows(*self._validated_rows(t, q, v))

    def _force_rows(self, t: np.ndarray, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """`force_history` of validated rows t (n_t,), q, v (n_t, n_q)."""
        n_t, g = len(q), self.gravity
        Q = np.empty((n_t, self.n_q))
        for (batch, idx, _), members in zip(self._body_groups, self._batched_members):
            n_b, n_qb = idx.shape
            if n_t == 1:
                Q[0, idx] = batch.forces(t[0], q[0, idx], v[0, idx], g)
                continue
            Q[:, idx] = self._rows_batch(members, n_t).forces(
                np.repeat(t, n_b), q[:, idx].reshape(n_t * n_b, n_qb), v[:, idx].reshape(n_t * n_b, n_qb),
                g).reshape(n_t, n_b, n_qb)
        for b, sl in self._loaded:                          # loads of the batched bodies: one state each
            if n_t == 1:                                    # a step's one state: no list to convert
                Q[0, sl] += b.applied(float(t[0]), q[0, sl], v[0, sl])
                continue
            Q[:, sl] += [b.applied(float(tk), qk, vk) for tk, qk, vk in zip(t, q[:, sl], v[:, sl])]
        for b in self._single_bodies:
            sl = self._qslice[id(b)]
            if n_t == 1:
                Q[0, sl] = b.forces(float(t[0]), q[0, sl], v[0, sl], g)
                continue
            Q[:, sl] = [b.forces(float(tk), qk, vk, g) for tk, qk, vk in zip(t, q[:, sl], v[:, sl])]
        if self.force_elements:
            Q += self.element_force_history(t, q, v)
        return Q

    def _rows_batch(self, members, n_t: int):
        """The batch evaluator of ``members`` (bodies of one class) repeated n_t times, row-major (row k's
        bodies are entries k n_b ... (k + 1) n_b - 1), kept for the last n_t asked for each group: the forces
        of a batch are per body, so n_t rows of n_b bodies are n_t n_b bodies of one batch."""
        cache = self.__dict__.setdefault("_rows_batches", {})
        key = id(members[0])
        if key not in cache or cache[key][0] != n_t:
            cache[key] = (n_t, type(members[0]).batch(list(members) * n_t))
        return cache[key][1]

    # -- force elements between bodies (flexmbs.forces) -----------------------------------------
    def _element_states(self, k, q, v):
        """([q_i, q_j], [v_i, v_j]) of force element k at one state q, v (n_q,), or at all the rows of
        q, v (n_t, n_q) at once, each then (n_t, n_q of its body); empty for the ground ((0,), (n_t, 0))."""
        sls = self._fslices[k]
        empty = EMPTY if np.ndim(q) == 1 else np.zeros((len(q), 0))
        return ([empty if sl is None else q[..., sl] for sl in sls], [empty if sl is None else v[..., sl] for sl in sls])

    @staticmethod
    def _stacked_columns(f, slices) -> np.ndarray | None:
        """The columns of q (distinct: the element's bodies are distinct) on which force element ``f``
        evaluates at once, its bodies' coordinates one after the other, when it offers
        ``stacked_force_history(Q, V)`` there (a `flexmbs.contact.Contact` of many bodies); None otherwise."""
        if not callable(getattr(f, "stacked_force_history", None)):
            return None
        return np.concatenate([np.zeros(0, dtype=int)] + [np.arange(sl.start, sl.stop) for sl in slices
                                                            if sl is not None])

    def element_forces(self, t, q, v) -> np.ndarray:
        """Q_f (n_q,): the generalized forces G^T F of the force elements (`flexmbs.forces`), part of
        `forces` (and of the active forces of Gibbs-Appell and Hamilton); zero without elements.
        `element_force_history` of one row."""
        return self.element_force_history(np.array([float(t)]), np.asarray(q, dtype=float)[None],
                                          np.asarray(v, dtype=float)[None])[0]

    def element_force_history(self, t, q, v) -> np.ndarray:
        """Q_f (n_t, n_q) at the times t (n_t,) and rows of q, v (n_t, n_q): `element_forces` of every row; an
        element with ``stacked_force_history`` (contact) on all rows at once, its bodies' coordinates gathered
        by one index array and its forces scattered back by it (no loop over its bodies); the others row by row
        (``generalized_forces`` is a function of one state)."""
        Q = np.zeros((len(q), self.n_q))
        rowwise = []
        for k, f in enumerate(self.force_elements):
            cols = self._fcols[k]
            if cols is not None:
                Q[:, cols] += f.stacked_force_history(q[:, cols], v[:, cols])
            else:
                rowwise.append(k)
        for k in rowwise:
            for r, (tk, qk, vk) in enumerate(zip(t, q, v)):
                qs, vs = self._element_states(k, qk, vk)
                for sl, Qb in zip(self._fslices[k], self.force_elements[k].generalized_forces(float(tk), qs, vs)):
                    if sl is not None:
                        Q[r, sl] += Qb
        return Q

    def element_tangent(self, t, q, v, geometric: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """(K_f, C_f) = (-dQ_f/dq, -dQ_f/dv) (n_q, n_q) of the force elements (`ForceElement.tangent`:
        material parts analytic, geometric parts by differences of the measures' Jacobian G; only the
        material parts with ``geometric=False``)."""
        K, C = np.zeros((self.n_q, self.n_q)), np.zeros((self.n_q, self.n_q))
        for k, f in enumerate(self.force_elements):
            qs, vs = self._element_states(k, q, v)
            Kf, Cf = f.tangent(t, qs, vs, geometric)
            cols = np.concatenate([np.zeros(0, dtype=int) if sl is None else np.arange(sl.start, sl.stop)
                                   for sl in self._fslices[k]])
            K[np.ix_(cols, cols)] += Kf
            C[np.ix_(cols, cols)] += Cf
        return K, C

    def quadratic_velocity_jacobian(self, q, v) -> np.ndarray:
        """dQ_v/dv (n_q, n_q), block-diagonal: the velocity Jacobian of the bodies' quadratic-velocity
        vectors (exact, from their quadratic form); zero blocks for bodies that do not give it."""
        D = np.zeros((self.n_q, self.n_q))
        for batch, idx, _ in self._body_groups:
            if hasattr(batch, "quadratic_velocity_jacobian"):
                D[idx[:, :, None], idx[:, None, :]] = batch.quadratic_velocity_jacobian(q[idx], v[idx])
        for b in self._single_bodies:
            if hasattr(b, "quadratic_velocity_jacobian"):
                sl = self._qslice[id(b)]
                D[sl, sl] = b.quadratic_velocity_jacobian(q[sl], v[sl])
        return D

    def elastic_stiffness(self, t, q, v) -> np.ndarray | None:
        """K_el = -dQ_el/dq (n_q, n_q), block-diagonal: the bodies' analytic Jacobians of their elastic
        and stiffening forces (``Body.elastic_stiffness``, on the body's last n_e coordinates, the
        elastic ones), which enter Q with a minus sign, so that K_el is their part of the tangent
        K_t = d(M q'' - Q + C_q^T lam)/dq; zero blocks for the other bodies.  None when no body gives
        it (nothing to add).  One call per such body, each vectorised over its elements.  The force
        elements between bodies add the material part of their K_f (`element_tangent` with
        ``geometric=False``: -G^T dF/dg G, one evaluation of each element's G), so a kept tangent of
        index3-alpha follows their stiffness; the geometric part stays as the kept tangent has it."""
        if not self._elastic and not self.force_elements:
            return None
        K = np.zeros((self.n_q, self.n_q))
        for b, sl in self._elastic:
            bs = self._qslice[id(b)]
            K[sl, sl] = b.elastic_stiffness(t, q[bs], v[bs], self.gravity)
        if self.force_elements:                             # the springs between bodies: K_f, material part
            K += self.element_tangent(t, q, v, geometric=False)[0]
        return K

    def energy(self, q, v) -> SystemEnergy:
        """`SystemEnergy` (kinetic T, gravity V_g, strain U) [J] at (q, v), each summed over the bodies
        (U over those with a ``strain_energy``, the flexible ones); ``sum(...)`` is T + V_g + U.
        `energy_history` at one state."""
        T, V, U = self.energy_history(np.asarray(q, dtype=float)[None], np.asarray(v, dtype=float)[None])
        return SystemEnergy(float(T[0]), float(V[0]), float(U[0]))

    def energy_history(self, q, v) -> SystemEnergy:
        """`SystemEnergy` of arrays (n_t,) at the rows of q, v (n_t, n_q): each body's batched
        `energies` and `strain_energies` (all outputs at once for rigid bodies in Euler parameters and
        natural coordinates, tree bodies, planar bodies, point masses, flexible bodies and 3D corotational
        beams; the 2D corotational beam one output at a time, `flexmbs.bodies.base.Body.energies`)."""
        q, v = np.atleast_2d(np.asarray(q, dtype=float)), np.atleast_2d(np.asarray(v, dtype=float))
        T, V, U = np.zeros(len(q)), np.zeros(len(q)), np.zeros(len(q))
        for b in self.bodies:
            sl = self._qslice[id(b)]
            t_b, v_b = b.energies(q[:, sl], v[:, sl], self.gravity)
            T += t_b
            V += v_b
        for b in self._strained:
            U += b.strain_energies(q[:, self._qslice[id(b)]])
        if self.force_elements:                              # springs, stops, contacts: all rows at once
            from .forces import element_potential_history
            for k, f in enumerate(self.force_elements):
                U += element_potential_history(f, self._element_states(k, q, q)[0])
        return SystemEnergy(T, V, U)

    def works_vanish(self) -> bool:
        """True when every power of `power_history` is zero at every state, so that a run's works are
        zero at every output without a quadrature: no force element with power (a spring without
        damper and actuator has none, its work is in U: `flexmbs.forces.powerless`; dampers, actuators,
        force laws, contacts and joint stops have), no rheonomic constraint (drivers, prescribed frames),
        and every body's powers those of `flexmbs.bodies.base.Body.powers` (its loads) with no loads; a
        body kind with forces of its own (the flexible body's nodal loads, damping, stiffening) overrides
        ``powers``.  Kept next to `power_history`: a power source added there is one to name here.  The
        triple pendulum under gravity alone: 28 % of its AB4 step went to the quadrature of these zeros
        (the dense output at 3 Gauss points and `power_history`, 2026-11-27)."""
        from .bodies.base import Body
        if any(c.rheonomic for c in self.constraints) or not all(type(b).powers is Body.powers and not b.loads
                                                                  for b in self.bodies):
            return False
        if not self.force_elements:
            return True
        from .forces import powerless
        return all(powerless(f) for f in self.force_elements)

    def power_history(self, t, q, v, lam=None) -> dict[str, np.ndarray]:
        """Powers [W], each (n_t,), of the forces that do work outside T + V_g + U, at the times t
        (n_t,) and rows of q, v (n_t, n_q), with the multipliers lam (n_t, n_c):

        .. code:: text

            loads        q' . Q_loads              the bodies' loads and a flexible body's nodal loads,
                                                   the force elements' actuators and force laws
            damping      delta'^T C delta' >= 0    dissipated by Rayleigh damping and by the force
                                                   elements' dampers (g'^T diag(c) g')
            stiffening   -delta' . K_geo delta     the "omega" geometric stiffening (no potential)
            drivers      lam . C_t                 the constraint forces -C_q^T lam of the rheonomic
                                                   constraints (drivers, prescribed frames):
                                                   -lam . C_q q' = lam . C_t on C_q q' + C_t = 0

        so that d(T + V_g + U)/dt = P_loads + P_drivers + P_stiffening - P_damping.  The bodies' loads
        at all rows at once (`flexmbs.bodies.base.Body.powers`: each built-in load's ``power_history``;
        a body with a user's load callable, a function of one state, row by row); the rheonomic
        constraints at each row (only when some constraint is rheonomic); the damping at all rows at
        once, and so are the force elements' powers (`flexmbs.forces.element_power_history`: each element's
        ``power_history`` on its sides' coordinates of all rows, gathered by one slice per side; a
        user's element with one-state ``powers`` only is evaluated row by row).
        ``drivers`` is NaN when a rheonomic constraint is present but lam is None (a formulation
        without multipliers)."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        q, v = np.atleast_2d(np.asarray(q, dtype=float)), np.atleast_2d(np.asarray(v, dtype=float))
        out = {"loads": np.zeros(len(t)), "damping": np.zeros(len(t)), "stiffening": np.zeros(len(t)),
               "drivers": np.zeros(len(t))}
        for b in self.bodies:
            sl = self._qslice[id(b)]
            for key, P in b.powers(t, q[:, sl], v[:, sl], self.gravity).items():
                out[key] += P
        if self.force_elements:                              # dampers, actuators, stops, contacts: all rows at once
            from .forces import element_power_history
            for k, f in enumerate(self.force_elements):
                for key, P in element_power_history(f, t, *self._element_states(k, q, v)).items():
                    out[key] += P
        if any(c.rheonomic for c in self.constraints):
            if lam is None:
                out["drivers"][:] = np.nan
            else:
                lam = np.asarray(lam, dtype=float).reshape(len(t), self.n_c)
                out["drivers"] = np.einsum("tc,tc->t", lam, self._time_derivatives(t, q))
        return out

    def _time_derivatives(self, t, q) -> np.ndarray:
        """C_t (n_t, n_c) at the rows of q (n_t, n_q) for the drivers' power: the joint batch's rows at
        all rows at once when its markers stack (`JointBatch.time_derivative_history`), the other
        constraints' one row at a time (`time_derivative`)."""
        if self._joints is None or not self._joints.markers.stackable():
            return np.array([self.time_derivative(tk, qk) for tk, qk in zip(t, q)]).reshape(len(t), self.n_c)
        tail = JointBatch.extend(np.zeros(0))
        Ct = self._joints.time_derivative_history(t, np.concatenate((q, np.broadcast_to(tail, (len(q), len(tail)))),
                                                                    axis=1))
        for k in self._single_constraints:
            c = self.constraints[k]
            Ct[:, self._rows[id(c)]] = [c.time_derivative(tk, self._split(qk, k)) for tk, qk in zip(t, q)]
        return Ct

    # -- momentum and rigid motions (docs/multibody.md, "Momentum and rigid motions") -----------
    def rigid_motion_generators(self, q, point=None) -> np.ndarray:
        """X(q) (n_q, 6) [3D] or (n_q, 3) [2D]: dq/d(eps) of a global translation by eps e_k (columns
        0..2, 2D: 0..1) and of a global rotation by eps about e_k through ``point`` (columns 3..5, 2D:
        the last, about z), from each body's ``rigid_motion_generators`` (one call per body).
        ``point`` (dim,) defaults to the origin.  NotImplementedError names a body kind without them."""
        return self._generators(_finite_vector(q, (self.n_q,), "q", "rigid_motion_generators"), point,
                                "rigid_motion_generators")

    def _generators(self, q, point, method: str) -> np.ndarray:
        """`rigid_motion_generators` at a checked q; ``point`` checked for ``method``'s message."""
        O = np.zeros(self.dim) if point is None else _finite_vector(point, (self.dim,), "point", method)
        X = np.empty((self.n_q, 6 if self.dim == 3 else 3))
        for b in self.bodies:
            sl = self._qslice[id(b)]
            X[sl] = b.rigid_motion_generators(q[sl], O)
        return X

    def momentum(self, q, v, point=None) -> Momentum:
        """`Momentum` (linear [N s], angular about ``point`` [N m s]) in global components at (q, v).

        Noether: with the generalized momentum p = M(q) v and the generators X_e(q) of a global
        translation along e and of a rotation about the axis e through O (`rigid_motion_generators`),
        the momentum along e is p . X_e (T = 1/2 v^T M v is invariant under the rigid motion)."""
        q = _finite_vector(q, (self.n_q,), "q", "momentum")
        v = _finite_vector(v, (self.n_q,), "v", "momentum")
        h = self._generators(q, point, "momentum").T @ (self.mass_matrix(q) @ v)
        if self.dim == 2:
            return Momentum(h[:2], float(h[2]))
        return Momentum(h[:3], h[3:])

    def rigid_motion_velocities(self, q, angular_velocity, velocity=None, point=None) -> np.ndarray:
        """v (n_q,) of the whole system moving as one rigid body at q: every material point at r gets
        velocity + angular_velocity x (r - point), v = X(q) (velocity, angular_velocity)
        (`rigid_motion_generators`).  ``angular_velocity`` (3,) [rad/s] (2D: a float), ``velocity``
        (dim,) [m/s] of the material point at ``point`` (dim,) [m] (defaults: zero, the origin).

        Use it as v0 to spin a floating system in one call; it satisfies every joint between the
        bodies and their internal constraints (C_q v = 0), so `initial_state` accepts it; a joint to
        the ground or a driver does not move with it and is refused there."""
        omega = (np.array([_finite_vector(angular_velocity, (), "angular_velocity", "rigid_motion_velocities")])
                 if self.dim == 2 else _finite_vector(angular_velocity, (3,), "angular_velocity",
                                                      "rigid_motion_velocities"))
        vel = np.zeros(self.dim) if velocity is None else _finite_vector(velocity, (self.dim,), "velocity",
                                                                          "rigid_motion_velocities")
        q = _finite_vector(q, (self.n_q,), "q", "rigid_motion_velocities")
        return self._generators(q, point, "rigid_motion_velocities") @ np.concatenate([vel, omega])

    def body_tangents(self) -> bool:
        """True when some body gives its own block of the tangent (`flexmbs.bodies.base.Body.tangent`
        overridden: the corotational beams).  Only then does index3-alpha's numpy path take
        `tangent_matrices` (`flexmbs.formulations.constrained.ConstrainedProblem.term`); otherwise it
        takes forward differences of the whole system, the arithmetic of the compiled kernel's step
        (csrc ``tangents``), so that both paths iterate alike (tests/test_compiled*.py compare their
        steps to round-off)."""
        from .bodies.base import Body
        return any(type(b).tangent is not Body.tangent for b in self.bodies)

    def tangent_matrices(self, t, q, v, qdd, lam) -> tuple[np.ndarray, np.ndarray]:
        """(K_t, C_t) = (d(M q'' - Q + C_q^T lam)/dq, -dQ/dv) at fixed q'', v, lam: the tangent
        matrices of implicit (index-3) integrators.

        A body's block is its own ``tangent(t, q, v, q'', gravity)`` where it gives one (`Body.tangent`:
        exact derivatives, e.g. the corotational beams'), else forward differences of its M and Q
        (step sqrt(eps) max(1, |x|)); constraints by forward differences constraint by constraint,
        the force elements by their own ``tangent``.  A body's terms depend on its own coordinates
        only, a constraint's on those of its bodies, so the cost grows linearly with the number of
        bodies instead of quadratically.  Measured (CPU time, 2-core shared x86_64, numpy 2.4) on a chain of N
        Euler-parameter bodies on spherical joints: 2.2, 8.3, 22 ms for N = 3, 10, 30, against
        2.6, 17, 136 ms for forward differences of the whole system.
        """
        n = self.n_q
        K, Ct = np.zeros((n, n)), np.zeros((n, n))
        h0 = np.sqrt(_EPS)
        g = self.gravity
        for b in self.bodies:
            sl = self._qslice[id(b)]
            qb, vb, ab = q[sl].copy(), v[sl].copy(), qdd[sl]
            own = getattr(b, "tangent", None)
            KC = None if own is None else own(t, qb, vb, ab, g)
            if KC is not None:
                K[sl, sl], Ct[sl, sl] = _body_tangent_blocks(b, KC)
                continue
            Q0 = b.forces(t, qb, vb, g)
            g0 = b.mass_matrix(qb) @ ab - Q0
            for j in range(b.n_q):
                hq = h0 * max(1.0, abs(qb[j]))
                qp = qb.copy()
                qp[j] += hq
                K[sl, sl.start + j] = ((b.mass_matrix(qp) @ ab - b.forces(t, qp, vb, g)) - g0) / hq
                hv = h0 * max(1.0, abs(vb[j]))
                vp = vb.copy()
                vp[j] += hv
                Ct[sl, sl.start + j] = -(b.forces(t, qb, vp, g) - Q0) / hv
        for k, c in enumerate(self.constraints):
            lc = lam[self._rows[id(c)]]
            if not np.any(lc):
                continue
            qs = self._split(q, k)
            slices = self._cslices[k]
            f0 = [blk.T @ lc for blk in c.jacobian(t, qs)]
            for i, sli in enumerate(slices):
                if sli is None:
                    continue
                for j in range(sli.stop - sli.start):
                    hq = h0 * max(1.0, abs(qs[i][j]))
                    qq = [x.copy() for x in qs]
                    qq[i][j] += hq
                    for sl, fp, fz in zip(slices, (blk.T @ lc for blk in c.jacobian(t, qq)), f0):
                        if sl is not None:
                            K[sl, sli.start + j] += (fp - fz) / hq
        if self.force_elements:                             # springs and dampers between bodies
            Kf, Cf = self.element_tangent(t, q, v)
            K += Kf
            Ct += Cf
        return K, Ct

    def check_unchanged(self) -> None:
        """Raise ValueError if a body or a given constraint changed after this System was built.

        The System keeps what its evaluators read from the bodies and constraints when it is built
        (the rigid bodies' masses and inertia in their batches, the joints' points and axes in the
        `JointBatch`, the constant mass blocks), and the compiled kernel packs the same data
        (`flexmbs.compiled.CompiledSystem`): an attribute changed afterwards (``body.mass = 2``, or in
        place: ``joint.s[0][1] = 0.1``) would be seen by some of them and not by others.  So it is
        refused, naming the body or constraint, the attribute and both values; it is checked where a
        run starts and where the System is packed for the kernel (once per run, not per step).
        Build the bodies, constraints and the System again with the new values instead.
        """
        for obj, before in self._built_from:
            now = vars(obj)
            for key, old in before.items():
                if key not in now or _changed(old, now[key]):
                    kind = "body" if id(obj) in self._qslice else "constraint"
                    raise ValueError(
                        f"System: {kind} {obj.name!r} changed after the System was built: its `{key}` was "
                        f"{_shown(old)}, now {_shown(now.get(key, '(deleted)'))}; the System and the compiled "
                        f"kernel keep the values given when it was built, so build the {kind} and the System "
                        "again with the new value")
            added = sorted(k for k in now if not k.startswith("_") and k not in before)
            if added:
                kind = "body" if id(obj) in self._qslice else "constraint"
                raise ValueError(f"System: {kind} {obj.name!r} changed after the System was built: it has the new "
                                 f"attribute(s) {added}; build the {kind} and the System again instead")

    def check_loads(self, t, q, v) -> None:
        """Evaluate each body's loads once at (t, q, v) and check their sizes
        (`flexmbs.bodies.loads.check_loads`: ValueError naming the body, the load and both sizes), so
        that a wrong load is named at the start of a run rather than failing inside numpy at a step."""
        from .bodies.loads import check_loads
        for b in self.bodies:
            if b.loads:
                sl = self._qslice[id(b)]
                check_loads(b, t, q[sl], v[sl])

    def compiled(self):
        """This system packed for the compiled kernel (`flexmbs.compiled.CompiledSystem`, used by
        index3-alpha); raises `flexmbs.compiled.Unsupported` (a ValueError) naming what the kernel
        does not evaluate, or that it is not installed."""
        from .compiled import CompiledSystem
        return CompiledSystem(self)

    # -- constraints ----------------------------------------------------------------------------
    def residual(self, t, q) -> np.ndarray:
        """C(q, t), (n_c,); zero in the rows of velocity-level (non-holonomic) constraints."""
        return self._constraint_terms(t, q, False)[0]

    def residual_norms(self, t, q) -> np.ndarray:
        """||C(q_k, t_k)||_2 (n_t,) at each output: t (n_t,), q (n_t, n_q) (e.g. `Results.t`,
        `Results.q`), the position violation a run leaves.  One `residual` per output (the joints
        evaluate one configuration at a time).

        Raises
        ------
        ValueError
            ``q`` not (n_t, n_q), or ``t`` not one time per row of ``q``.
        """
        q, t = np.asarray(q, dtype=float), np.asarray(t, dtype=float)
        if q.ndim != 2 or q.shape[1] != self.n_q:
            raise ValueError(f"`q` must have shape (n_t, n_q) = (n_t, {self.n_q}): one row of coordinates per "
                             f"output, got {q.shape}")
        if t.shape != (len(q),):
            raise ValueError(f"`t` must have shape (n_t,) = ({len(q)},): one time per row of `q`, got {t.shape}")
        return np.array([np.linalg.norm(self.residual(tk, qk)) for tk, qk in zip(t, q)], dtype=float)

    def jacobian(self, t, q) -> np.ndarray:
        """C_q, dense (n_c, n_q)."""
        return self._constraint_terms(t, q, True)[1]

    def constraint_terms(self, t, q) -> tuple[np.ndarray, np.ndarray]:
        """(C, C_q) in one pass (the joints' markers are evaluated once for both)."""
        return self._constraint_terms(t, q, True)

    def _constraint_terms(self, t, q, with_jacobian: bool):
        C = np.empty(self.n_c)
        J = None
        if with_jacobian:
            buf = np.zeros(self.n_c * self.n_q + 1)            # the last entry: scratch of the joint batch
            J = buf[:-1].reshape(self.n_c, self.n_q)
        for batch, rows, cols in self._constraint_groups:
            Qc = q[cols]
            C[rows] = batch.residual(t, Qc)
            if with_jacobian:
                J[rows[:, :, None], cols[:, None, :]] = batch.jacobian(t, Qc)
        for batch, rows in self._pair_groups:
            C[rows] = batch.residual(t, q)
            if with_jacobian:
                batch.jacobian_into(J, t, q)
        if self._joints is not None:
            self._joints.evaluate(t, JointBatch.extend(q), C, buf if with_jacobian else None)
        for k in self._single_constraints:
            c = self.constraints[k]
            rows = self._rows[id(c)]
            qs = self._split(q, k)
            C[rows] = c.residual(t, qs) if c.holonomic else 0.0
            if with_jacobian:
                for sl, blk in zip(self._cslices[k], c.jacobian(t, qs)):
                    if sl is not None:
                        J[rows, sl] += blk
        return C, J

    def time_derivative(self, t, q) -> np.ndarray:
        """C_t, (n_c,) (zero for the batched internal constraints and planar joints: scleronomic)."""
        Ct = np.zeros(self.n_c)
        if self._joints is not None:
            self._joints.time_derivative(t, JointBatch.extend(q), Ct)
        for k in self._single_constraints:
            c = self.constraints[k]
            Ct[self._rows[id(c)]] = c.time_derivative(t, self._split(q, k))
        return Ct

    def gamma(self, t, q, v) -> np.ndarray:
        """gamma with C_q q'' = gamma, (n_c,)."""
        g = np.empty(self.n_c)
        for batch, rows, cols in self._constraint_groups:
            g[rows] = batch.gamma(t, q[cols], v[cols])
        for batch, rows in self._pair_groups:
            g[rows] = batch.gamma(t, q, v)
        if self._joints is not None:
            self._joints.gamma(t, JointBatch.extend(q), JointBatch.extend_velocity(v), g)
        for k in self._single_constraints:
            c = self.constraints[k]
            g[self._rows[id(c)]] = c.gamma(t, self._split(q, k), self._split(v, k))
        return g

    def _names_of_rows(self, rows) -> list[str]:
        out = []
        for r in rows:
            for c in self.constraints:
                sl = self._rows[id(c)]
                if sl.start <= r < sl.stop and c.name not in out:
                    out.append(c.name)
        return out

    # -- consistent initial conditions ----------------------------------------------------------
    def _free(self, fixed):
        mask = np.ones(self.n_q, dtype=bool)
        for f in fixed:
            if isinstance(f, tuple):
                body, i = f
                sl = self.slice(body)
                if not 0 <= i < sl.stop - sl.start:
                    raise ValueError(f"System.assemble: `fixed` index {i} out of range for body {body.name!r}")
                mask[sl.start + i] = False
            else:
                if not (isinstance(f, (int, np.integer)) and 0 <= f < self.n_q):
                    raise ValueError(f"System.assemble: `fixed` entries must be coordinate indices in "
                                     f"[0, {self.n_q}) or (body, index) pairs, got {f!r}")
                mask[f] = False
        return np.flatnonzero(mask)

    def assemble(self, t, q_guess, v_guess=None, tol: float = 1e-12, fixed=(), max_iter: int = 50,
                 rcond: float = 1e-8):
        """Consistent initial conditions: (q, v) with C(q, t) = 0 and C_q v + C_t = 0.

        Positions: Newton on C = 0 with minimum-norm steps dq = C_q^+ C over the free
        coordinates (all except ``fixed``: global indices or (body, index) pairs); converged when
        max |C| <= tol (accepted up to 1e3 tol when the steps stall at round-off).  The
        pseudo-inverse drops singular values below ``rcond`` times the largest, so redundant
        constraints (whose Jacobian is nearly rank-deficient near the solution) do not blow the
        steps up.  Velocities: the
        minimum-norm correction v = v_guess - C_q^+ (C_q v_guess + C_t) over the free
        coordinates (v_guess default zero).

        Velocity-level (non-holonomic) constraints a(q) v + b = 0 take part in the velocity
        correction only.

        Raises
        ------
        ConstraintError
            Naming the constraints whose equations are left unsatisfied (the positions reached
            are in its ``q`` attribute).
        """
        q0 = np.array(q_guess, dtype=float)
        if q0.shape != (self.n_q,):
            raise ValueError(f"System.assemble: `q_guess` must have shape ({self.n_q},), got {q0.shape}")
        free = self._free(fixed)

        def residual(x):
            q0[free] = x
            return self.residual(t, q0)

        hol = self._holonomic_rows                         # positions: holonomic rows only

        def solve(x, r):
            q0[free] = x
            J = self.jacobian(t, q0)[hol][:, free]
            return scipy.linalg.lstsq(J, r[hol], cond=rcond, lapack_driver="gelsd")[0]

        try:
            x, _ = newton(residual, solve, q0[free], tol=tol, accept=1e3 * tol, max_iter=max_iter,
                          name="System.assemble")
        except NewtonError as err:
            r = err.residual if err.residual is not None else np.full(self.n_c, np.nan)
            q0[free] = err.x
            bad = np.flatnonzero(~(np.abs(r) <= 1e3 * tol))
            names = self._names_of_rows(bad)
            internal = {c.name for c in self.constraints[:self.n_internal]}
            joints = [n for n in names if n not in internal]       # least squares spreads the misfit
            names = joints or names                                 # over the bodies' own constraints too
            worst = {n: float(np.max(np.abs(r[self.rows(self.constraint(n))]))) for n in names}
            e = ConstraintError(
                f"System.assemble: cannot satisfy constraint(s) {names} (largest |C| per constraint: "
                f"{ {n: float(f'{w:.3g}') for n, w in worst.items()} }) after {err.iterations} Newton "
                "iterations; the joints cannot all close here: check their points and axes, remove "
                "over-constraining joints, or start closer", names)
            e.q = q0.copy()
            raise e from None
        q = q0.copy()
        q[free] = x
        v = np.zeros(self.n_q) if v_guess is None else np.array(v_guess, dtype=float)
        if v.shape != (self.n_q,):
            raise ValueError(f"System.assemble: `v_guess` must have shape ({self.n_q},), got {v.shape}")
        if self.n_c:
            J = self.jacobian(t, q)
            r = J @ v + self.time_derivative(t, q)
            v[free] -= scipy.linalg.lstsq(J[:, free], r, cond=rcond, lapack_driver="gelsd")[0]
            r = J @ v + self.time_derivative(t, q)
            scale = 1.0 + max_norm(v)
            if max_norm(r) > 1e3 * tol * scale:
                bad = np.flatnonzero(np.abs(r) > 1e3 * tol * scale)
                names = self._names_of_rows(bad)
                raise ConstraintError(f"System.assemble: the velocity constraints of {names} cannot be "
                                      f"satisfied (largest |C_q v + C_t| = {max_norm(r):.3g}); a driver "
                                      "conflicts with the joints", names)
        return q, v

    def consistency(self, t, q, v) -> dict:
        """The worst violation of the constraints at each level, against its tolerance.

        Returns ``{"position": (name, size, tol), "velocity": (name, size, tol)}`` with ``name`` the
        constraint of the largest entry (None without constraints) and

        .. code:: text

            position:  size = max_i |C_i(q, t)|,         tol = CONSISTENCY_RTOL L,  L = max(1, |q|_inf)
            velocity:  size = max_i |(C_q v + C_t)_i|,   tol = CONSISTENCY_RTOL V,
                       V = max(1, max_i (sum_j |C_q,ij v_j| + |C_t,i|))

        L is the size of the system's coordinates (the round-off of C grows with it) and V the size
        of the terms of the velocity constraints.  Velocity-level (non-holonomic) constraints are
        zero at the position level.  The state is consistent when size <= tol at both levels.
        """
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        if not self.n_c:
            return {level: (None, 0.0, CONSISTENCY_RTOL) for level in ("position", "velocity")}
        C, J = self.constraint_terms(t, q)
        Ct = self.time_derivative(t, q)
        scales = {"position": max(1.0, max_norm(q)),
                  "velocity": max(1.0, max_norm(np.abs(J) @ np.abs(v) + np.abs(Ct)))}
        out = {}
        for level, r in (("position", C), ("velocity", J @ v + Ct)):
            worst = int(np.argmax(np.abs(r)))
            out[level] = (self._names_of_rows([worst])[0], float(abs(r[worst])), CONSISTENCY_RTOL * scales[level])
        return out

    def initial_state(self, t: float = 0.0, q=None, v=None, *, assemble: bool = False):
        """(q, v) to start an integration at t from: consistent with the constraints, or refused.

        ``q``, ``v`` default to the bodies' own initial coordinates and velocities
        (`initial_coordinates`, `initial_velocities`: a body's ``velocity=`` and
        ``angular_velocity=`` included).  The state is checked by `consistency`.  When it violates
        a constraint beyond the tolerance:

        - ``assemble=False`` (default): raises `InconsistentStateError` naming the worst
          constraint, the level (position or velocity), the size of the violation and the
          tolerance; nothing is integrated from an inconsistent state.
        - ``assemble=True``: `assemble` projects the positions, then the velocities, onto the
          constraints (minimum-norm corrections) and an `InitialStateWarning` (also logged) says
          how far each moved.  A consistent state is assembled too (to |C| ~ 1e-12), silently.
        """
        q = self.initial_coordinates() if q is None else np.array(q, dtype=float)
        v = self.initial_velocities() if v is None else np.array(v, dtype=float)
        for value, label in ((q, "q0"), (v, "v0")):
            if value.shape != (self.n_q,):
                raise ValueError(f"`{label}` must have shape (system.n_q,) = ({self.n_q},), got {value.shape}")
            if not np.all(np.isfinite(value)):
                raise ValueError(f"`{label}` must be finite (it contains NaN or inf)")
        if not assemble:
            self.check_start(q)             # named by its own measure first (|p| of Euler parameters)
        report = self.consistency(t, q, v)
        bad = {level: r for level, r in report.items() if r[1] > r[2]}
        if not assemble:
            if bad:
                raise self._inconsistent(bad, t)
            return q, v
        q1, v1 = self.assemble(t, q, v)
        if bad:
            msg = (f"initial state at t = {t:g} assembled ({self._describe(bad)}): positions moved by up to "
                   f"{max_norm(q1 - q):.3g}{self._body_of_largest(q1 - q)}, velocities by up to "
                   f"{max_norm(v1 - v):.3g}{self._body_of_largest(v1 - v)}")
            log.warning(msg)
            warnings.warn(msg, InitialStateWarning, stacklevel=3)
        return q1, v1

    @staticmethod
    def _describe(bad: dict) -> str:
        """'constraint 'pivot' violated at the position level by 1 (tolerance 1e-08)' for each level."""
        units = {"position": "|C|", "velocity": "|C_q v + C_t|"}
        return "; ".join(f"constraint {name!r} violated at the {level} level by {units[level]} = {size:.3g} "
                         f"(tolerance {tol:.2g})" for level, (name, size, tol) in bad.items())

    def _inconsistent(self, bad: dict, t: float) -> InconsistentStateError:
        level, (name, size, tol) = next(iter(bad.items()))
        return InconsistentStateError(
            f"inconsistent initial state at t = {t:g}: {self._describe(bad)}; it is not integrated. Correct "
            "q0/v0, or pass assemble=True (to the formulation's state0, ConstrainedProblem.state0 or "
            "flexmbs.run) to project the positions, then the velocities, onto the constraints",
            name, level, size, tol)

    def _body_of_largest(self, dx) -> str:
        """' (body 'name')': the body of the largest |dx_k| ('' when dx is zero)."""
        k = int(np.argmax(np.abs(dx)))
        if dx[k] == 0:
            return ""
        return next(f" (body {b.name!r})" for b in self.bodies if self.slice(b).start <= k < self.slice(b).stop)

    def kinematics(self, t, q_guess, tol: float = 1e-12, rcond: float = 1e-8):
        """Kinematic analysis of a fully driven system (0 degrees of freedom): (q, v, a) at time t.

        Positions by `assemble` from ``q_guess``; velocities from C_q v = -C_t and accelerations
        from C_q a = gamma, both by least squares (minimum norm).  Raises `ConstraintError` if
        the system keeps degrees of freedom at this configuration (then the motion is not
        determined by the drivers), naming no constraint but giving the count.
        """
        q, _ = self.assemble(t, q_guess, tol=tol, rcond=rcond)
        J = self.jacobian(t, q)
        mob = self.mobility(t, q)
        if mob["dof"] > 0:
            raise ConstraintError(f"System.kinematics: {mob['dof']} degree(s) of freedom remain at t = {t:g}; "
                                  "add drivers (or run a dynamic analysis)")
        v = scipy.linalg.lstsq(J, -self.time_derivative(t, q), cond=rcond, lapack_driver="gelsd")[0]
        a = scipy.linalg.lstsq(J, self.gamma(t, q, v), cond=rcond, lapack_driver="gelsd")[0]
        return q, v, a

    # -- analysis -------------------------------------------------------------------------------
    def mobility(self, t, q, rtol: float | None = None) -> dict:
        """Degrees of freedom and redundant constraints from the rank of C_q.

        The rank is the number of singular values of C_q above ``rtol * s_max`` (default
        rtol = 1e-10: above the round-off of a configuration assembled to |C| ~ 1e-12, below
        the near-singularities one wants to see; pass ``rtol`` to change it).  Redundant rows are found in
        constraint order: a row is redundant when it lies in the span of the rows before it
        (the same tolerance, by an SVD of the rows so far), so the bodies' internal
        constraints and earlier joints count as independent.  Returns a dict with n_q, n_c,
        rank, dof = n_q - rank, redundant (constraint names), redundant_rows (indices),
        singular_values and tol.
        """
        J = self.jacobian(t, q)
        n_c, n_q = J.shape
        out = {"n_q": n_q, "n_c": n_c}
        if n_c == 0:
            return out | {"rank": 0, "dof": n_q, "redundant": [], "redundant_rows": [],
                          "singular_values": np.zeros(0), "tol": 0.0}
        s = np.linalg.svd(J, compute_uv=False)
        rtol = 1e-10 if rtol is None else float(rtol)
        tol = rtol * s[0]
        rank = int(np.sum(s > tol))
        redundant = []
        if rank < n_c:
            basis = np.zeros((0, n_q))
            for r in range(n_c):
                resid = J[r].copy()
                for _ in range(2):                      # Gram-Schmidt, twice for orthogonality
                    resid -= basis.T @ (basis @ resid)
                nr = np.linalg.norm(resid)
                if nr <= tol:
                    redundant.append(r)
                else:
                    basis = np.vstack([basis, resid / nr])
            if len(redundant) != n_c - rank:            # ill-conditioned: let pivoted QR of C_q^T choose
                piv = scipy.linalg.qr(J.T, mode="r", pivoting=True)[1]
                redundant = sorted(int(r) for r in piv[rank:])
        return out | {"rank": rank, "dof": n_q - rank, "redundant": self._names_of_rows(redundant),
                      "redundant_rows": redundant, "singular_values": s, "tol": tol}

    def over_constrained(self, t, q, tol: float = 1e-8) -> str | None:
        """Why the constraints cannot all hold at (t, q), or None if they can be reduced to zero here.

        The least-squares (Gauss-Newton) correction dq = -C_q^+ C removes from the residual C all
        but its part outside the range of C_q, ``C + C_q dq``.  Where that part is beyond
        ``tol`` max(|q|_inf, 1) (not round-off), no motion of q can reduce it: C_q is rank-deficient
        (dependent rows, `mobility`) and C is inconsistent with it, as for a body pinned at two
        points farther apart than its length.  Newton's corrections then grow or stall whatever
        the step size.  Returns the message naming the constraints, for failure reports.
        """
        q = np.asarray(q, dtype=float)
        C, Cq = self.constraint_terms(t, q)
        if not C.size:
            return None
        left = C + Cq @ np.linalg.lstsq(Cq, -C, rcond=1e-10)[0]
        limit = tol * max(1.0, float(np.abs(q).max()))
        if not np.abs(left).max() > limit:
            return None
        mobility = self.mobility(t, q)
        held = self._names_of_rows(np.flatnonzero(np.abs(left) > limit))
        return (f"the constraints cannot all hold (over-constrained): at t = {t:.6g} their residual "
                f"|C|_inf = {np.abs(C).max():.3g} cannot be reduced, as C_q has rank {mobility['rank']} < "
                f"{len(C)} rows (dependent: {', '.join(mobility['redundant'])}) and {np.abs(left).max():.3g} of C "
                f"is outside its range (in {', '.join(held)}). Check the points, axes, lengths and laws of these "
                "constraints, or remove the one that over-constrains the system.")

    def reactions(self, t, q, lam, names=None) -> dict:
        """{constraint name: its reaction()} for the given constraints (internal ones omitted), or
        for those called ``names`` only."""
        out = {}
        wanted = None if names is None else set(names)
        for k, c in enumerate(self.constraints[self.n_internal:], start=self.n_internal):
            if wanted is None or c.name in wanted:
                out[c.name] = c.reaction(t, self._split(q, k), lam[self._rows[id(c)]])
        if wanted is not None and wanted - set(out):
            raise ValueError(f"System.reactions: no given constraint named {sorted(wanted - set(out))}; "
                             f"constraints: {[c.name for c in self.constraints[self.n_internal:]]}")
        return out

    def reaction_history(self, t, q, lam, names) -> dict:
        """`reactions` at every output at once: t (n_t,), q (n_t, n_q) (or the states (n_t, 2 n_q)) and
        lam (n_t, n_c) (e.g. ``Solution.lam``) give ``{name: {"origin": (n_t, d), "rotation": (n_t, d, d),
        "bodies": {body: {"force": (n_t, d), "torque": (n_t, 3) or (n_t,)}}}}`` for the constraints
        called ``names``.

        Per output and body, Q_b = -C_q,b^T lam = B_b x (`Constraint.reaction_basis`) and x = B_b^+ Q_b
        (the least-squares solution of `Constraint.reaction`).  The joints that
        `flexmbs.constraints.reaction_blocks.unstacked_reason` accepts (joints of primitives on
        rigid and flexible frame bodies in 3D) are evaluated in blocks of `REACTION_BLOCK` outputs,
        every array with a leading axis of outputs (`ReactionBlocks`): no Python loop over outputs,
        and on Euler-parameter bodies (rigid, flexible on its supports) x in closed form from the rows
        of R and p (`flexmbs.constraints.reaction_blocks.frame_reaction`: the same x, no solve).
        The others are evaluated one output at a time (one C_q and one reaction basis per output,
        then one batched least-squares solve per body), with a warning naming them and why.
        """
        t = np.atleast_1d(np.asarray(t, dtype=float))
        if t.ndim != 1 or not len(t):
            raise ValueError(f"System.reaction_history: `t` must be a vector of at least one time, got shape {t.shape}")
        q, lam = np.asarray(q, dtype=float), np.asarray(lam, dtype=float)
        for value, name, widths in ((q, "q", (self.n_q, 2 * self.n_q)), (lam, "lam", (self.n_c,))):
            if value.ndim != 2 or value.shape[0] != len(t) or value.shape[1] not in widths:
                raise ValueError(f"System.reaction_history: `{name}` must be an array ({len(t)}, {widths[0]}) "
                                 f"(one row per time of `t`), got shape {value.shape}")
        q = q[:, :self.n_q]
        if not len(names):
            return {}
        chosen = [self.constraint(name) for name in names]
        why = {c.name: unstacked_reason(c) for c in chosen}
        stacked = [c for c in chosen if why[c.name] is None]
        alone = [c for c in chosen if why[c.name] is not None]
        if alone:
            warnings.warn("System.reaction_history: the reactions of " + "; ".join(
                f"{c.name!r} ({why[c.name]})" for c in alone) + " are computed one output at a time",
                ReactionsPerOutputWarning, stacklevel=2)
        blocks = ReactionBlocks(self, stacked) if stacked else None
        parts = []
        for first in range(0, len(t), REACTION_BLOCK):
            block = slice(first, first + REACTION_BLOCK)
            part = blocks.evaluate(t[block], q[block], lam[block]) if blocks is not None else {}
            if alone:
                part |= self._reactions_per_output(t[block], q[block], lam[block], alone)
            parts.append(part)
        return {c.name: _joined([p[c.name] for p in parts]) for c in chosen}

    def _reactions_per_output(self, t, q, lam, chosen) -> dict:
        """`reaction_history`'s entries of the constraints ``chosen`` from one C_q, one frame and one
        `Constraint.reaction_basis` per output, then one batched least-squares solve per body."""
        index = [self.constraints.index(c) for c in chosen]
        rows = np.concatenate([np.arange(self.n_c)[self.rows(c)] for c in chosen])
        involved = list({id(b): b for c in chosen for b in c.bodies if b is not None}.values())
        frames, bases, Cq = [], [], []
        for ti, qi in zip(t, q):
            ti = float(ti)
            Cq.append(self.jacobian(ti, qi)[rows])
            qs = [self._split(qi, k) for k in index]
            shared = {b.name: torque_and_internal_columns(b, ti, qi[self.slice(b)]) for b in involved}
            frames.append([c.frame(ti, qs_c) for c, qs_c in zip(chosen, qs)])
            bases.append([c.reaction_basis(ti, qs_c, shared) for c, qs_c in zip(chosen, qs)])
        Cq = np.array(Cq).reshape(len(t), len(rows), self.n_q)
        out, first = {}, 0
        for j, c in enumerate(chosen):
            own = slice(first, first + c.n_c)
            first += c.n_c
            R = np.array([f[j][1] for f in frames])
            Q = -np.einsum("tcq,tc->tq", Cq[:, own], lam[:, self.rows(c)])
            bodies = {}
            for b in c.bodies:
                if b is not None:
                    B = np.array([basis[j][b.name] for basis in bases])
                    bodies[b.name] = force_and_torque(least_squares(B, Q[:, self.slice(b)]), R, b.dim)
            out[c.name] = {"origin": np.array([f[j][0] for f in frames]), "rotation": R, "bodies": bodies}
        return out

    def __repr__(self):
        forces = f", {len(self.force_elements)} force elements" if self.force_elements else ""
        return (f"System({len(self.bodies)} bodies, {len(self.constraints)} constraints{forces}, n_q = {self.n_q}, "
                f"n_c = {self.n_c})")
