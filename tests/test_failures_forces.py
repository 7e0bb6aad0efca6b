"""Bad input to the force elements between bodies (issue 26, item 1; flexmbs/forces.py) and to
``System(forces=...)``: each row is (what is given, the message it now prints)."""
import numpy as np
import pytest

from flexmbs.bodies import PointMass, RigidBody2D, RigidBodyEP
from flexmbs.forces import Bushing, ForceLaw, RotationalSpringDamper, SpringDamper
from flexmbs.system import System

A = RigidBodyEP("a", 1.0, np.eye(3) * 0.1)
B = RigidBodyEP("b", 1.0, np.eye(3) * 0.1, position=(1.0, 0.0, 0.0))
P = RigidBody2D("p", 1.0, 0.1)
M = PointMass("m", 1.0, position=(0.0, 0.0, 0.0))

ROWS = [
    (lambda: SpringDamper(A, (0, 0, 0), B, (0, 0, 0), "stiff"),
     "SpringDamper 'SpringDamper(a, b)': `stiffness` must be a number, got 'stiff' (str)"),
    (lambda: SpringDamper(A, (0, 0, 0), B, (0, 0, 0), -1.0),
     "SpringDamper 'SpringDamper(a, b)': `stiffness` must be a finite number >= 0, got -1.0"),
    (lambda: SpringDamper(A, (0, 0, 0), B, (0, 0, 0), 1.0, damping=np.nan),
     "SpringDamper 'SpringDamper(a, b)': `damping` must be a finite number >= 0, got nan"),
    (lambda: SpringDamper(A, (0, 0), B, (0, 0, 0), 1.0),
     "SpringDamper 'SpringDamper(a, b)': `s_i` must be a finite vector of 3 components or a marker of body 'a', "
     "got (0, 0)"),
    (lambda: SpringDamper(A, (0, 0, 0), B, (-1, 0, 0), 1.0),
     "SpringDamper 'SpringDamper(a, b)': its points coincide (length 0), so its direction is undefined; give "
     "points apart, or use a Bushing"),
    (lambda: SpringDamper(A, (0, 0, 0), B, (0, 0, 0), 1.0, actuator="up"),
     "SpringDamper 'SpringDamper(a, b)': `actuator` must be a finite number, a vector of finite numbers or a function "
     "of t, got 'up' (str)"),
    (lambda: SpringDamper(A, (0, 0, 0), A, (0, 0, 0), 1.0),
     "SpringDamper: `body_i` and `body_j` are the same body 'a'"),
    (lambda: SpringDamper(None, (0, 0, 0), None, (1, 0, 0), 1.0),
     "SpringDamper: at most one of `body_i`, `body_j` may be the ground (None)"),
    (lambda: SpringDamper(A, (0, 0, 0), P, (0, 0), 1.0),
     "SpringDamper 'SpringDamper(a, p)': both bodies must have the same dimension, got [('a', 3), ('p', 2)]"),
    (lambda: SpringDamper("a", (0, 0, 0), B, (0, 0, 0), 1.0),
     "SpringDamper: `body_i` must be a body (flexmbs.bodies) or None (the ground), got 'a' (str)"),
    (lambda: SpringDamper(A, (0, 0, 0), B, (0, 0, 0), 1.0, actuator=lambda t: (1.0, 2.0)).law(0.0, np.ones(1),
                                                                                              np.zeros(1)),
     "SpringDamper 'SpringDamper(a, b)': its `actuator` must give a finite number at each t, got [1.0, 2.0] "
     "(shape (2,)) at t = 0"),
    (lambda: RotationalSpringDamper(A, B, 1.0),
     "RotationalSpringDamper 'RotationalSpringDamper(a, b)': `axis` must be a nonzero finite 3-vector (the global "
     "axis at the start), got None"),
    (lambda: RotationalSpringDamper(A, B, 1.0, axis=(0, 0, 0)),
     "RotationalSpringDamper 'RotationalSpringDamper(a, b)': `axis` must be a nonzero finite 3-vector (the global "
     "axis at the start), got (0, 0, 0)"),
    (lambda: RotationalSpringDamper(P, None, 1.0, axis=(0, 0, 1)),
     "RotationalSpringDamper 'RotationalSpringDamper(p, ground)': `axis` is for 3D bodies (planar ones turn about "
     "z), got (0, 0, 1)"),
    (lambda: RotationalSpringDamper(A, B, 1.0, rest_angle="0", axis=(0, 0, 1)),
     "RotationalSpringDamper 'RotationalSpringDamper(a, b)': `rest_angle` must be a number, got '0' (str)"),
    (lambda: Bushing(A, B, [1.0, 2.0, 3.0]),
     "Bushing 'Bushing(a, b)': `stiffness` must be a number or 6 numbers, finite and >= 0, got [1.0, 2.0, 3.0]"),
    (lambda: Bushing(P, None, 1.0, damping=[1, -1, 1]),
     "Bushing 'Bushing(p, ground)': `damping` must be a number or 3 numbers, finite and >= 0, got [1, -1, 1]"),
    (lambda: ForceLaw(A, (0, 0, 0), B, (0, 0, 0), 3.0),
     "ForceLaw 'ForceLaw(a, b)': `law` must be callable law(t, d, d_dot) -> force (dim,), got 3.0 (float)"),
    (lambda: ForceLaw(A, (0, 0, 0), B, (0, 0, 0), lambda t, d, dd: 1.0),
     "ForceLaw 'ForceLaw(a, b)': `law` must return a force of shape (3,), got shape () at the start"),
    (lambda: System([A, B], forces=SpringDamper(A, (0, 0, 0), B, (0, 0, 0), 1.0)),
     "System: `forces` must be a sequence, each entry a force element (flexmbs.forces: SpringDamper, "
     "RotationalSpringDamper, Bushing, ForceLaw); got SpringDamper('SpringDamper(a, b)') (SpringDamper)"),
    (lambda: System([A, B], forces=[lambda t: 0.0]),
     "System: `forces` entry 0 must be a force element (flexmbs.forces: SpringDamper, RotationalSpringDamper, "
     "Bushing, ForceLaw), got"),
    (lambda: System([A], forces=[SpringDamper(A, (0, 0, 0), B, (0, 0, 0), 1.0)]),
     "System: force element 'SpringDamper(a, b)' refers to body 'b', which is not in `bodies`"),
    (lambda: System([A, B], forces=[SpringDamper(A, (0, 0, 0), B, (0, 0, 0), 1.0),
                                    SpringDamper(A, (0, 0.1, 0), B, (0, 0, 0), 1.0)]),
     "System: force element names must be unique, got ['SpringDamper(a, b)'] more than once; pass `name=`"),
    (lambda: Bushing(A, B, 1.0, at="origin"),
     "Bushing 'Bushing(a, b)': `at` must be a finite global point of 3 components (the bushing frame's origin at "
     "the start), got 'origin'"),
    (lambda: SpringDamper(A, (0, 0, 0), B, (0, 0, 0), 1.0, actuator=lambda t: 1.0 / 0.0).law(0.5, np.ones(1),
                                                                                          np.zeros(1)),
     "SpringDamper 'SpringDamper(a, b)': its actuator raised ZeroDivisionError at t = 0.5: float division by zero"),
    (lambda: ForceLaw(A, (0, 0, 0), B, (0, 0, 0), lambda t, d, dd: d * np.log(t)).law(0.0, np.ones(3), np.zeros(3)),
     "ForceLaw 'ForceLaw(a, b)': its law gave NaN or inf at t = 0; a law or load must be finite at every time of the "
     "run"),
]


def test_a_force_law_that_fails_in_a_run_stops_it_with_its_name():
    """A law giving NaN at t > 0.05 stops the run with status "failed" naming the element and the time
    (that of the stage that met it), the outputs so far kept."""
    import flexmbs as fm

    def law(t, d, d_dot):
        return -d * (np.nan if t > 0.05 else 1.0)

    m = PointMass("m2", 1.0, position=(1.0, 0.0, 0.0))
    res = fm.run(System([m], forces=[ForceLaw(None, (0, 0, 0), m, (0, 0, 0), law, name="pull")]), method="RK45",
                 t_end=0.1, dt_out=0.01, store=False)
    assert res.status == "failed"
    assert "failed: ForceLaw 'pull': its law gave NaN or inf at t = " in res.message
    assert 2 <= len(res.t) < 11 and res.t[-1] <= 0.05


@pytest.mark.parametrize("call, message", ROWS, ids=[m[:60] for _, m in ROWS])
def test_bad_input_is_refused_with_a_message_naming_it(call, message):
    with pytest.raises(ValueError) as err:
        call()
    assert str(err.value).startswith(message), str(err.value)
