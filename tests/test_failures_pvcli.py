"""Bad input to the ParaView writers of a System run's `Results` (issue 21, items 4-5):
`write_results_xdmf`, `write_results_vtu` and the ``shapes`` of `write_system_xdmf`.  Each row is
the call and the message it now prints (a ValueError/TypeError/IndexError naming the argument,
what was expected and what was given); no file is left behind."""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.body_motion import body_outputs
from flexmbs.bodies import FlexibleBody, PointMass
from flexmbs.io.paraview import write_results_vtu, write_results_xdmf, write_system_xdmf


@pytest.fixture(scope="module")
def ball_run():
    """A thrown point mass, 6 outputs."""
    ball = PointMass("ball", 1.0, (0.0, 0.0, 0.0), velocity=(1.0, 0.0, 0.0))
    return fm.run(fm.System([ball], gravity=(0.0, 0.0, -9.81)), t_end=0.05, h=1e-3, dt_out=0.01, store=False)


def model_run():
    model = fm.Model(fm.generate.line(2, 1.0), fm.Bar2(fm.Material(E=1e9, rho=1000.0), 1e-4),
                     motion=fm.motion.ConstantRotation(1.0), fixed=[("start", "all")])
    return fm.run(model, t_end=0.01, dt_out=0.005)


def no_outputs(res):
    return fm.Results(t=np.zeros(0), bodies={n: body_outputs(b, slice(0, 0)) for n, b in res.bodies.items()})


def beam_system():
    model = fm.Model(fm.generate.line(2, 0.5), fm.BeamEB2D(fm.Material(E=70e9, rho=2700.0), area=1e-4, I=1e-9),
                     fixed=[("start", "all")])
    return fm.System([FlexibleBody(model, "beam")])


TRIANGLE = (np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), [("triangle", np.array([[0, 1, 2]]))])

ROWS = [
    ("xdmf of a path", lambda res, d: write_results_xdmf("results.h5", d / "a.xdmf"), TypeError,
     "`results` must be a flexmbs.Results, got str"),
    ("xdmf of a Model's run", lambda res, d: write_results_xdmf(model_run(), d / "a.xdmf"), ValueError,
     "`results` holds no bodies (a Model's run: write it with `write_xdmf` or `export_paraview`); the "
     "global-frame series of every body needs a System's run"),
    ("xdmf without outputs", lambda res, d: write_results_xdmf(no_outputs(res), d / "a.xdmf"), ValueError,
     "`results` has no output: there is nothing to write"),
    ("xdmf every = 0", lambda res, d: write_results_xdmf(res, d / "a.xdmf", every=0), ValueError,
     "`every` must be a positive integer, got 0"),
    ("vtu of a Model's run", lambda res, d: write_results_vtu(model_run(), d / "a.vtu"), ValueError,
     "`results` holds no bodies (a Model's run: write it with `write_xdmf` or `export_paraview`); the "
     "global-frame series of every body needs a System's run"),
    ("vtu index beyond the outputs", lambda res, d: write_results_vtu(res, d / "a.vtu", index=6), IndexError,
     "`index` must be in [-6, 5] (the run has 6 outputs), got 6"),
    ("shape of a flexible body", lambda res, d: write_system_xdmf(beam_system(), [0.0], beam_system()
                                                                  .initial_coordinates()[None], d / "a.xdmf",
                                                                  shapes={"beam": TRIANGLE}), ValueError,
     "`shapes['beam']`: body 'beam' is flexible; it is drawn as its mesh (shapes replace the box of a rigid "
     "body or the vertex of a point mass)"),
]


@pytest.mark.parametrize("call, error, message", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_bad_input_message(ball_run, tmp_path, call, error, message):
    with pytest.raises(error) as info:
        call(ball_run, tmp_path)
    assert str(info.value) == message
    assert not list(tmp_path.iterdir())
