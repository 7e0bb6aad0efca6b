"""Joint limits and joint friction: forces on the free coordinate of a revolute or prismatic joint.

Both are force elements (`flexmbs.forces.ForceElement`, for ``System(..., forces=[...])``) whose one
measure is the joint's coordinate x(q), zero in the initial configuration:

.. code:: text

    revolute   x = theta, the rotation of body_j about the joint's axis     (`RotationalSpringDamper`'s
               angle, in (-pi, pi]; 2D: phi_j - phi_i)
    prismatic  x = a_i . (r_j - r_i) - x_start, the sliding along the axis  (a_i the axis on body_i, r_k
               the joint's points)          G = dx/dq = [d^T V_a - a_i^T J_i, a_i^T J_j]

and the generalized force is Q = G^T F(x, x') (a torque [N m] or a force [N] along the axis).

**Stop** (`JointLimit`): a penalty stop with a hysteretic restitution.  With the penetration
delta = x - upper (upper stop) or lower - x (lower stop), delta > 0 in contact,

.. code:: text

    P = k delta^n (1 - (1 - e^2) sigma(delta')),   sigma(v) = tanh^2(max(0, -v) / v_s)
    F = -P (upper stop), +P (lower stop)
    U = k delta^(n+1) / (n+1)                                         stored energy (into U)
    P_damping = (1 - e^2) k delta^n sigma(delta') (-delta') >= 0       dissipated power (into the works)

While the stop is pressed in (delta' > 0) P is the elastic k delta^n and stores U; while it
springs back (delta' < 0, past the transition speed v_s) it returns e^2 of the force, so the
energy given back is e^2 of the energy stored: the rebound speed is e times the impact speed,
whatever the inertia, the impact speed and n (up to the work of other forces during the contact
and O(v_s / impact speed)); docs/design.md, "Joint limits".

**Friction** (`JointFriction`): Coulomb friction of constant magnitude F_c, regularised,

.. code:: text

    F = -F_c tanh(x' / v_c)
    P_damping = F_c tanh(x' / v_c) x' >= 0

so a joint held by a load Q below F_c creeps at |x'| = v_c atanh(|Q| / F_c) (the creep bound:
below v_c for |Q| < 0.76 F_c, 1.5 v_c at 0.9 F_c) and slides against F_c above it.  tanh rather
than a linear creep range clipped at +-F_c: the kink of the clipped law at |x'| = v_c stopped
index3-alpha's Newton iterations where the joint comes to rest (measured).

References
----------
.. [1] K. H. Hunt, F. R. E. Crossley, "Coefficient of restitution interpreted as damping in
       vibroimpact", J. Appl. Mech. 42 (1975) 440-445, doi:10.1115/1.3423596 (the force k delta^n,
       continuous at the start of a contact, that the stop keeps).
.. [2] H. M. Lankarani, P. E. Nikravesh, "A contact force model with hysteresis damping for impact
       analysis of multibody systems", J. Mech. Des. 112 (1990) 369-376, doi:10.1115/1.2912617
       (a restitution that needs the impact speed, which this stateless stop avoids:
       docs/design.md, "Joint limits").
"""
from __future__ import annotations

import numpy as np

from ..bodies.base import real_number
from ..bodies.motion import marker_motion
from ..forces import ForceElement, RotationalSpringDamper
from .joints import Prismatic, Revolute
from .planar import PlanarPrismatic, PlanarRevolute

__all__ = ["JointLimit", "JointFriction", "joint_coordinate_kind"]


def joint_coordinate_kind(joint, owner: str) -> str:
    """"angle" for a Revolute or PlanarRevolute, "slide" for a Prismatic or PlanarPrismatic; ValueError
    naming ``owner`` and the joint otherwise (the joints with one free coordinate a stop or friction
    acts on)."""
    if isinstance(joint, (Revolute, PlanarRevolute)):
        return "angle"
    if isinstance(joint, (Prismatic, PlanarPrismatic)):
        return "slide"
    raise ValueError(f"{owner}: `joint` must be a Revolute, Prismatic, PlanarRevolute or PlanarPrismatic joint (one free "
                     f"coordinate), got {joint!r} ({type(joint).__name__})")


def _number(value, what: str, owner: str, low: float, high: float = np.inf, low_open: bool = False) -> float:
    """``value`` as a finite number in [low, high] ((low, high] with ``low_open``); ValueError naming it."""
    x = real_number(value, what, owner)
    if not (np.isfinite(x) and (x > low if low_open else x >= low) and x <= high):
        bound = f"{'>' if low_open else '>='} {low:g}" + ("" if high == np.inf else f" and <= {high:g}")
        raise ValueError(f"{owner}: `{what}` must be a finite number {bound}, got {value!r}")
    return x


class _JointCoordinateForce(ForceElement):
    """A force element whose one measure is a joint's coordinate x (module docstring)."""

    def _on_joint(self, joint, name):
        self.kind = joint_coordinate_kind(joint, type(self).__name__)
        self.joint = joint
        body_i, body_j = joint.bodies
        self._sides(body_i, body_j, name or f"{type(self).__name__}({joint.name})")
        q0 = self._initial()
        if self.kind == "angle":
            self.gauge = RotationalSpringDamper.about(joint, 0.0, name=f"{self.name}: angle")
        else:
            self.points = list(joint.s)
            self.axis_i = joint.a[0] if self.dim == 2 else joint.R[0][:, 2]      # the axis on body_i
            self.x_start = 0.0
            self.x_start = float(self._slide(q0)[0][0])
        self.k, self.c, self.g0 = np.zeros(1), np.zeros(1), np.zeros(1)

    def _slide(self, qs):
        """(x, [G_i, G_j]) of a prismatic joint: x = a_i . (r_j - r_i) - x_start."""
        a, b = self._side
        ri, rj = a.point(qs[0], self.points[0]), b.point(qs[1], self.points[1])
        u = a.vector(qs[0], self.axis_i)
        d = rj - ri
        Gi = d @ a.vector_jacobian(qs[0], self.axis_i) - u @ a.point_jacobian(qs[0], self.points[0])
        Gj = u @ b.point_jacobian(qs[1], self.points[1])
        return np.array([float(u @ d) - self.x_start]), [Gi[None], Gj[None]]

    def measures(self, qs):
        """(x (1,), [G_i, G_j]): the joint's coordinate and its Jacobian (module docstring)."""
        if self.kind == "angle":
            return self.gauge.measures(qs)
        return self._slide(qs)

    def measure_history(self, Qs, Vs=None):
        """(x, x') (n_t, 1) at all rows at once: the gauge's angle and rate (revolute) or the sliding
        x = a_i . (r_j - r_i) - x_start and x' = a_i' . (r_j - r_i) + a_i . (r_j' - r_i') (prismatic)."""
        if self.kind == "angle":
            return self.gauge.measure_history(Qs, Vs)
        a, b = self.bodies
        Vi, Vj = (None, None) if Vs is None else Vs
        ri, vi = marker_motion(a, Qs[0], Vi, self.points[0])
        rj, vj = marker_motion(b, Qs[1], Vj, self.points[1])
        u, du = marker_motion(a, Qs[0], Vi, self.axis_i, vector=True)
        d = rj - ri
        x = (np.einsum("ti,ti->t", u, d) - self.x_start)[:, None]
        if Vs is None:
            return x, None
        return x, (np.einsum("ti,ti->t", du, d) + np.einsum("ti,ti->t", u, vj - vi))[:, None]

    def potential_history(self, Qs) -> np.ndarray:
        """Zero (n_t,): friction stores no energy (a stop overrides it)."""
        return np.zeros(len(Qs[0]))

    def _unit(self) -> str:
        return "rad" if self.kind == "angle" else "m"


class JointLimit(_JointCoordinateForce):
    """A unilateral stop on the coordinate of a revolute or prismatic joint (lower and/or upper).

    A penalty stop with a hysteretic restitution (module docstring): stiffness k delta^n while
    pressed in, e^2 of it while springing back, so that it rebounds at e times the impact speed.

    Parameters
    ----------
    joint : Revolute, Prismatic, PlanarRevolute or PlanarPrismatic
        The joint; its coordinate x (angle [rad] or sliding [m]) is zero in the initial configuration.
    lower, upper : float, optional
        The stops' positions of x (at least one), lower <= 0 <= upper: the start lies between them.
    stiffness : float > 0
        k [N m / rad^n] or [N / m^n].
    restitution : float in [0, 1]
        e, the ratio of rebound to impact speed.
    exponent : float >= 1
        n (1: linear; 1.5: Hertz's point contact).
    transition_speed : float > 0
        v_s [rad/s or m/s]: the rate of x over which the force changes from loading to unloading.
        The restitution is met up to O((v_s / impact speed)^2) (measured in
        tests/test_joints_limits.py at 3 rad/s: 2.4e-5 relative at 1e-2, 2.5e-2 at 0.1 for e = 0.3);
        a smaller v_s is a steeper switch, which index3-alpha's Newton iterations did not cross at
        1e-3 (use an adaptive method there).
    name : str, optional
        Default ``"JointLimit(<joint name>)"``.
    """

    smooth = False                  # the stop's force begins with a kink (`ForceElement.smooth`)

    def __init__(self, joint, lower=None, upper=None, *, stiffness, restitution=1.0, exponent=1.0,
                 transition_speed=1e-2, name=None):
        self._on_joint(joint, name)
        owner = f"JointLimit {self.name!r}"
        if lower is None and upper is None:
            raise ValueError(f"{owner}: give `lower`, `upper` or both (the stops' positions of the joint's "
                             f"coordinate [{self._unit()}]), got neither")
        self.lower = None if lower is None else real_number(lower, "lower", owner)
        self.upper = None if upper is None else real_number(upper, "upper", owner)
        for what, x in (("lower", self.lower), ("upper", self.upper)):
            if x is not None and not np.isfinite(x):
                raise ValueError(f"{owner}: `{what}` must be finite, got {x!r}")
        if self.lower is not None and self.lower > 0 or self.upper is not None and self.upper < 0:
            raise ValueError(f"{owner}: the start (coordinate 0) must lie between the stops, got lower = "
                             f"{self.lower!r}, upper = {self.upper!r} [{self._unit()}]")
        if self.kind == "angle" and (self.lower is not None and self.lower <= -np.pi
                                     or self.upper is not None and self.upper >= np.pi):
            raise ValueError(f"{owner}: a revolute joint's stops must lie within half a turn of the start, "
                             f"-pi < lower, upper < pi (its angle is measured in (-pi, pi]), got lower = "
                             f"{self.lower!r}, upper = {self.upper!r}")
        self.stiffness = _number(stiffness, "stiffness", owner, 0.0, low_open=True)
        self.restitution = _number(restitution, "restitution", owner, 0.0, 1.0)
        self.exponent = _number(exponent, "exponent", owner, 1.0)
        self.transition_speed = _number(transition_speed, "transition_speed", owner, 0.0, low_open=True)

    def _penetrations(self, x, v):
        """[(delta, delta', sign of F)] of the stops in contact (delta > 0)."""
        out = []
        if self.upper is not None and x > self.upper:
            out.append((x - self.upper, v, -1.0))
        if self.lower is not None and x < self.lower:
            out.append((self.lower - x, -v, 1.0))
        return out

    def _sigma(self, rate):
        """(sigma, d sigma / d rate): the unloading switch tanh^2(max(0, -rate) / v_s), once
        differentiable at rate 0 (Newton's iterations of an implicit step cross it)."""
        if rate >= 0.0:
            return 0.0, 0.0
        s = np.tanh(-rate / self.transition_speed)
        return float(s * s), -2.0 * s * (1.0 - s * s) / self.transition_speed

    def law(self, t, g, gd):
        """(F, 0): the stops' force on the coordinate (module docstring); no power into the loads."""
        F = 0.0
        k, n, loss = self.stiffness, self.exponent, 1.0 - self.restitution ** 2
        for delta, rate, sign in self._penetrations(float(g[0]), float(gd[0])):
            F += sign * k * delta ** n * (1.0 - loss * self._sigma(rate)[0])
        return np.array([F]), np.zeros(1)

    def law_derivatives(self, t, g, gd):
        """(dF/dx, dF/dx') (1, 1) each, analytic: both stops give -dP/ddelta and -dP/ddelta'."""
        dx = dv = 0.0
        k, n, loss = self.stiffness, self.exponent, 1.0 - self.restitution ** 2
        for delta, rate, _ in self._penetrations(float(g[0]), float(gd[0])):
            s, ds = self._sigma(rate)
            dx -= n * k * delta ** (n - 1.0) * (1.0 - loss * s)
            dv -= k * delta ** n * (-loss * ds)
        return np.array([[dx]]), np.array([[dv]])

    def _penetration_history(self, x, rate) -> list:
        """[(delta, delta')] (each (n_t,)) of each stop given, delta = 0 where it is not in contact
        (`_penetrations` at all rows)."""
        out = []
        if self.upper is not None:
            out.append((np.maximum(x - self.upper, 0.0), rate))
        if self.lower is not None:
            out.append((np.maximum(self.lower - x, 0.0), -rate))
        return out

    def potential_history(self, Qs) -> np.ndarray:
        """U = k delta^(n+1) / (n+1) (n_t,) [J] of the stops in contact, all rows at once."""
        x = self.measure_history(Qs)[0][:, 0]
        n = self.exponent
        U = np.zeros(len(x))
        for d, _ in self._penetration_history(x, x):
            U += self.stiffness * d ** (n + 1.0) / (n + 1.0)
        return U

    def power_history(self, t, Qs, Vs) -> dict[str, np.ndarray]:
        """{"damping": (1 - e^2) k delta^n sigma(delta') (-delta') >= 0, "loads": 0}, each (n_t,) [W], with
        sigma(r) = tanh^2(max(0, -r) / v_s) (`_sigma`), all rows at once."""
        g, gd = self.measure_history(Qs, Vs)
        k, n, loss = self.stiffness, self.exponent, 1.0 - self.restitution ** 2
        P = np.zeros(len(g))
        for d, r in self._penetration_history(g[:, 0], gd[:, 0]):
            sigma = np.tanh(np.maximum(-r, 0.0) / self.transition_speed) ** 2
            P += loss * k * d ** n * sigma * (-r)
        return {"damping": P, "loads": np.zeros(len(g))}


class JointFriction(_JointCoordinateForce):
    """Coulomb friction in a revolute (a torque) or prismatic (a force) joint, with a creep range.

    F = -F_c tanh(x' / v_c) (module docstring): it sticks, creeping at v_c atanh(|Q| / F_c), while the
    rest of the system loads the joint by a Q less than F_c, and slides against F_c otherwise.

    Parameters
    ----------
    joint : Revolute, Prismatic, PlanarRevolute or PlanarPrismatic
    friction : float > 0
        F_c: the friction torque [N m] (revolute) or force [N] (prismatic), constant; for a pin of
        radius r under a normal load N with a friction coefficient mu, F_c = mu r N.
    creep_speed : float > 0
        v_c [rad/s or m/s]: the creep rate scale while it sticks.  Smaller is closer to dry
        friction and stiffer (a viscous coefficient F_c / v_c near rest): an implicit integrator
        (index3-alpha, Radau).
    name : str, optional
        Default ``"JointFriction(<joint name>)"``.
    """

    def __init__(self, joint, friction, *, creep_speed=1e-4, name=None):
        self._on_joint(joint, name)
        owner = f"JointFriction {self.name!r}"
        self.friction = _number(friction, "friction", owner, 0.0, low_open=True)
        self.creep_speed = _number(creep_speed, "creep_speed", owner, 0.0, low_open=True)

    def law(self, t, g, gd):
        """(F, 0) with F = -F_c tanh(x' / v_c)."""
        return np.array([-self.friction * np.tanh(float(gd[0]) / self.creep_speed)]), np.zeros(1)

    def law_derivatives(self, t, g, gd):
        """(0, -F_c (1 - tanh^2(x' / v_c)) / v_c)."""
        th = np.tanh(float(gd[0]) / self.creep_speed)
        return np.zeros((1, 1)), np.array([[-self.friction * (1.0 - th * th) / self.creep_speed]])

    def power_history(self, t, Qs, Vs) -> dict[str, np.ndarray]:
        """{"damping": F_c tanh(x' / v_c) x' >= 0, "loads": 0}, each (n_t,) [W], all rows at once."""
        v = self.measure_history(Qs, Vs)[1][:, 0]
        return {"damping": self.friction * np.tanh(v / self.creep_speed) * v, "loads": np.zeros(len(v))}

