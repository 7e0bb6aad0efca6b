"""Bad laws at the outputs (issue 22, item 1): a driver's law declaring ``vectorized`` is called once
with an array of times (`flexmbs.constraints.base.law_history`); each row is a law and the message
it now prints."""
import numpy as np
import pytest

from flexmbs.constraints.base import law_history
from flexmbs.user_functions import UserFunctionError

T = np.array([0.0, 0.5, 1.0])


def vectorized(f):
    f.vectorized = True
    return f


ROWS = [
    ("two values", vectorized(lambda t: (t, 1.0)), ValueError,
     "driver 'drive': its law declares `vectorized` and must return (f, f', f'') as arrays of shape (3,) (that of "
     "t) or numbers, got (array([0. , 0.5, 1. ]), 1.0)"),
    ("values of another shape", vectorized(lambda t: (np.zeros(2), 1.0, 0.0)), ValueError,
     "driver 'drive': its law declares `vectorized` and must return (f, f', f'') as arrays of shape (3,) (that of "
     "t) or numbers, got (array([0., 0.]), 1.0, 0.0)"),
    ("a column per time", vectorized(lambda t: (t[:, None], 1.0, 0.0)), ValueError,
     "driver 'drive': its law declares `vectorized` and must return (f, f', f'') as arrays of shape (3,) (that of "
     "t) or numbers, got values of shape (3, 3)"),
    ("a scalar law declared vectorized", vectorized(lambda t: (float(t), 1.0, 0.0)), UserFunctionError,
     "driver 'drive': its law (vectorized, at 3 times) raised TypeError at t = 0: only 0-dimensional arrays can "
     "be converted to Python scalars"),
    ("NaN at one time", vectorized(lambda t: (np.where(t == 0.5, np.inf, t), 1.0, 0.0)), UserFunctionError,
     "driver 'drive': its law gave NaN or inf at t = 0.5 ((f, f', f'') = (inf, 1, 0)); a law or load must be "
     "finite at every time of the run"),
]


@pytest.mark.parametrize("law, error, message", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_message(law, error, message):
    with pytest.raises(error) as err:
        law_history(law, T, "drive")
    assert str(err.value) == message
