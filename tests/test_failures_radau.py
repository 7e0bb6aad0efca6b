"""Bad input and numerical failures of method "radau-dae" (flexmbs/integrators/radau_dae.py): each row is
(what is done, the message it now gives).  Misuse raises a ValueError naming the argument; a run that
cannot go on ends with status "failed", the message naming the cause and what to change, and the
outputs before it kept."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import flexmbs as fm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cases"))
sys.path.insert(0, str(ROOT / "tests"))

import double_four_bar  # noqa: E402
from test_failures_rattle import rod, skate  # noqa: E402


def run(system, **options):
    return fm.run(system, method="radau-dae", t_end=0.1, dt_out=0.1, store=False, **options)


REFUSED = [
    ("rtol = 0", lambda: run(rod(), rtol=0.0), "`rtol` must be positive, got 0.0."),
    ("rtol < 0", lambda: run(rod(), rtol=-1e-6), "`rtol` must be positive, got -1e-06."),
    ("rtol >= 1", lambda: run(rod(), rtol=1.5),
     "`rtol` is a relative tolerance and must be below 1 (e.g. 1e-6), got 1.5."),
    ("atol < 0", lambda: run(rod(), atol=-1.0),
     "`atol` must be positive (a number or one per state component), got -1.0."),
    ("newton_max_iter = 0", lambda: run(rod(), newton_max_iter=0), "`newton_max_iter` must be an integer >= 1, got 0."),
    ("newton_max_iter = 2.5", lambda: run(rod(), newton_max_iter=2.5),
     "`newton_max_iter` must be an integer >= 1, got 2.5."),
    ("newton_tol = 0", lambda: run(rod(), newton_tol=0.0),
     "`newton_tol` must be a positive number (None: from rtol), got 0.0."),
    ("max_step = 0", lambda: run(rod(), max_step=0.0),
     "`max_step` must be a positive number (inf: no bound), got 0.0."),
    ("max_step a string", lambda: run(rod(), max_step="big"),
     "`max_step` must be a positive number (inf: no bound), got 'big'."),
    ("kernel = 'gpu'", lambda: run(rod(), kernel="gpu"), "`kernel` must be 'auto', 'compiled' or 'numpy', got 'gpu'."),
    ("relaxation < 0", lambda: run(rod(), relaxation=-1e-12),
     "`relaxation` must be a time >= 0 in seconds (None: 1e-6 rtol s, 0: exact constraints), got -1e-12."),
    ("relaxation a string", lambda: run(rod(), relaxation="small"),
     "`relaxation` must be a time >= 0 in seconds (None: 1e-6 rtol s, 0: exact constraints), got 'small'."),
    ("a point mass held by a velocity constraint (nonholonomic)", lambda: run(skate()),
     "method 'radau-dae' imposes C(q, t) = 0 and C_q v + C_t = 0 (the GGL form), and 'constrained-index3' has "
     "velocity constraints without a position equation (KnifeEdge, VelocityConstraint, GearPair, RackPinion); run "
     "it with an index-1 formulation ('lagrange': e.g. method 'Radau' or 'DOP853') or a quasi-velocity one "
     "('maggi', 'kane'); methods that fit this term: none."),
    ("two identical pins (redundant constraints)", lambda: run(rod(redundant=True)),
     "method 'radau-dae' needs independent constraints (C_q of full row rank: its iteration matrix holds C_q "
     "twice), but C_q of 'constrained-index3' at t0 = 0 has rank 2 < 4 rows (redundant constraints or a singular "
     "start: System.mobility names them); remove the redundant constraints or use method 'index3-alpha' (option "
     "`regularization`)."),
]


@pytest.mark.parametrize("description, call, message", REFUSED, ids=[row[0] for row in REFUSED])
def test_refused_with_a_message(description, call, message):
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        call()


def test_formulation_lagrange_is_refused_naming_the_combinations():
    with pytest.raises(ValueError, match="^" + re.escape(
            "formulation 'lagrange' does not run with method 'radau-dae'; the combinations for a System are: ")):
        run(rod(), formulation="lagrange")


def test_rho_inf_is_not_an_option_of_radau_dae():
    """An option of index3-alpha given to radau-dae warns and is ignored (the run is unchanged)."""
    with pytest.warns(UserWarning, match=re.escape("Unknown options for method 'radau-dae': rho_inf; they are "
                                                   "ignored. Options of 'radau-dae': divergence_limit, kernel, "
                                                   "max_step, newton_max_iter, newton_tol, relaxation.")):
        res = run(rod(), rho_inf=0.9)
    assert res.status == "finished"


def test_exact_constraint_rows_stop_at_a_singular_configuration_naming_it_and_keeping_the_outputs():
    """IFToMM A02 (the double four-bar, N = 2) reaches a configuration where C_q loses rank at about
    t = 0.714 s.  With ``relaxation=0`` (the exact GGL rows: radau_dae's module docstring, "Singular
    configurations") the multipliers' pole stops Newton there, the steps shrink to the round-off of t
    and the run fails naming the near-singular C_q and the method that passes it; the outputs before
    it are kept.  (With the default relaxation the run passes: tests/test_radau_dae.py.)"""
    system, q0, v0, _ = double_four_bar.build(2)
    res = fm.run(system, method="radau-dae", rtol=1e-6, atol=1e-9, relaxation=0.0, t_end=1.0, dt_out=0.1, q0=q0,
                 v0=v0, store=False)
    assert res.status == "failed"
    assert re.match(r"Step-size underflow at t = 0\.71\d+: radau-dae rejected every step down to .* s \(Newton's "
                    r"iteration or the error estimate failed at every step size\): C_q is nearly singular there "
                    r"\(smallest / largest singular value .*\), a singular configuration of the mechanism, which the "
                    r"exact GGL rows \(`relaxation` = 0\) do not pass; set `relaxation` \(default 1e-6 rtol s\) or use "
                    r"method 'index3-alpha' \(option `regularization`\), which passes it\.", res.message), res.message
    np.testing.assert_allclose(res.t, np.arange(8) * 0.1, atol=1e-12)       # the outputs up to 0.7 s


def a02_at_rtol_1e_8(kernel: str):
    """IFToMM A02 (N = 2) over its 10 s at rtol 1e-8, atol 1e-11 (the work-precision row of docs/benchmarks.md
    sec. 19), outputs every 0.1 s."""
    system, q0, v0, _ = double_four_bar.build(2)
    return fm.run(system, method="radau-dae", rtol=1e-8, atol=1e-11, t_end=10.0, dt_out=0.1, q0=q0, v0=v0,
                  store=False, kernel=kernel)


CRAWL = (r"radau-dae crawls at t = 0\.710\d+: its last 1000 trial steps advanced t by less than 1e-05 s \(a mean "
         r"step below 1e-09 of the span: the run would take more than 1e9 steps\): C_q is nearly singular there "
         r"\(smallest / largest singular value 0\.00\d+\), a singular configuration of the mechanism, where the "
         r"round-off of the constraint rows, amplified by C_q's conditioning, exceeds the tolerances \(rtol = "
         r"1e-08\); loosen `rtol`/`atol`, raise `relaxation` \(now 1e-14 s; 1e-11 s passes IFToMM A02 at rtol "
         r"1e-8\) or use method 'index3-alpha' \(option `regularization`\), which passes it\.")
#: (what is run, the message it now gives: a regular expression, the digits of t and of C_q's singular values
#: being round-off's)
STOPPED = [
    pytest.param("A02 at rtol 1e-8, compiled", lambda: a02_at_rtol_1e_8("compiled"), CRAWL, id="a02-compiled"),
    pytest.param("A02 at rtol 1e-8, numpy", lambda: a02_at_rtol_1e_8("numpy"), CRAWL, marks=pytest.mark.slow,
                 id="a02-numpy"),
]


@pytest.mark.parametrize("description, call, message", STOPPED)
def test_a_run_that_cannot_go_on_stops_with_a_message_and_keeps_its_outputs(description, call, message):
    """A02 at rtol 1e-8 (radau_dae's module docstring, "Singular configurations"): from t* - 4e-3 s on, the
    round-off of Newton's corrections, amplified by C_q's conditioning, is above the tolerance the iteration
    asks for, and only steps of about 1e-9 s converge; before, the run crawled there (8 min of CPU, not
    finished, docs/benchmarks.md sec. 19).  Now it stops at the first window of 1000 trial steps that advanced
    t by less than 1e-5 s (measured: 0.3 s of CPU compiled, 12 s numpy), the outputs before it kept."""
    res = call()
    assert res.status == "failed"
    assert re.match(message + "$", res.message), res.message
    np.testing.assert_allclose(res.t, np.arange(8) * 0.1, atol=1e-12)       # the outputs up to 0.7 s
    assert res.stats["n_steps"] < 3000
