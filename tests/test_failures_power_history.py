"""Bad values met while the force elements' powers are evaluated over many rows at once (issue 22,
item 1; `flexmbs.forces.ForceElement.power_history`): each row is (what is evaluated, the message it
now prints), the same messages as at one state."""
import numpy as np
import pytest

from flexmbs.bodies import PointMass
from flexmbs.forces import SpringDamper
from flexmbs.user_functions import UserFunctionError

M = PointMass("m", 1.0, position=(1.0, 0.0, 0.0))
T = np.array([0.0, 0.5, 1.0])
EMPTY = np.zeros((3, 0))
Q = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0]])


def powers(actuator, q=Q):
    """The powers of a damped spring-actuator from the origin to the point mass at the rows ``q``."""
    spring = SpringDamper(None, (0, 0, 0), M, (0, 0, 0), 1.0, damping=0.5, actuator=actuator, name="s")
    return spring.power_history(T, [EMPTY, q], [EMPTY, np.ones((3, 3))])


def vectorized(f):
    f.vectorized = True
    return f


ROWS = [
    (lambda: powers(lambda t: (1.0, 2.0) if t > 0.2 else 1.0), ValueError,
     "SpringDamper 's': its `actuator` must give a finite number at each t, got [1.0, 2.0] (shape (2,)) at t = 0.5"),
    (lambda: powers(lambda t: "on" if t > 0.2 else 1.0), ValueError,
     "SpringDamper 's': its `actuator` must give a finite number at each t, got 'on' (shape ()) at t = 0.5"),
    (lambda: powers(lambda t: 1.0 / (t - 1.0)), UserFunctionError,
     "SpringDamper 's': its actuator raised ZeroDivisionError at t = 1: float division by zero"),
    (lambda: powers(lambda t: np.inf if t == 0.5 else 1.0), UserFunctionError,
     "SpringDamper 's': its actuator gave NaN or inf at t = 0.5; a law or load must be finite at every time of the "
     "run"),
    (lambda: powers(vectorized(lambda t: np.zeros(2))), ValueError,
     "SpringDamper 's': its actuator declares `vectorized` and must return an array of shape (3,) (a value of shape "
     "() at each of the 3 times), got shape (2,)"),
    (lambda: powers(1.0, q=np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 3.0]])), ValueError,
     "SpringDamper 's': its points coincide (length 0), so its direction is undefined; give points apart, or use "
     "a Bushing"),
]


@pytest.mark.parametrize("call, error, message", ROWS)
def test_bad_values_over_rows_name_the_element_and_the_time(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message
