"""The index-3 methods refuse velocity-level constraints, which they cannot impose (a gear pair run by
index3-alpha drifted off its ratio by 1.7 % in 0.5 s, whatever the step), naming the routes that do."""
import pytest

import flexmbs as fm
from test_registry import sleigh

MESSAGE = "imposes constraints at the position level (index 3)"


@pytest.mark.parametrize("method", ["index3-alpha", "hht", "newmark", "index3-alpha-adaptive"])
def test_index3_methods_refuse_velocity_constraints(method):
    opts = {"rtol": 1e-6} if method == "index3-alpha-adaptive" else {"h": 1e-3}
    with pytest.raises(ValueError, match=r"velocity constraints without a position equation.*'maggi', 'kane'"):
        fm.run(sleigh(), method=method, t_end=0.01, store=False, **opts)


def test_the_index1_route_still_runs_them():
    res = fm.run(sleigh(), formulation="lagrange", method="DOP853", t_end=0.01, store=False)
    assert res.status == "finished"
