"""Reduced flexible bodies in a System (issue 24, item 1): a `FlexibleBody` of a `ReducedModel`
(free-interface modes, Craig-Bampton, or free-free elastic modes on mean axes) runs in a
mechanism on the compiled step and converges to the full body as modes are added."""
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import FlexibleBody, Node
from flexmbs.constraints import Revolute
from flexmbs.reduction import reduce
from flexmbs.system import System

BEAM = fm.BeamEB2D(fm.Material(E=2e7, rho=1000.0), area=1e-3, I=1e-6)   # 1 m: first bending mode 2.6 Hz clamped
G = (0.0, -9.81, 0.0)


def pendulum(model, reference="supports"):
    """The beam on a revolute joint (axis z) at node 0, released horizontally under gravity."""
    body = FlexibleBody(model, "beam", reference=reference)
    return System([body], [Revolute(body, None, s_i=Node(0), axis=(0.0, 0.0, 1.0), name="pin")], gravity=G)


def tip_history(model, reference="supports", h=1e-3, t_end=0.5):
    res = fm.run(pendulum(model, reference), method="index3-alpha", h=h, t_end=t_end, dt_out=0.01, store=False)
    assert res.status == "finished"
    return res, res.bodies["beam"].global_positions()[:, -1, :2]


@pytest.fixture(scope="module")
def clamped():
    """The beam with a tangent frame at node 0 (20 elements, 60 DOFs) and its full run."""
    model = fm.Model(fm.generate.line(20, 1.0), BEAM, fixed=[("start", "all")])
    return model, tip_history(model)


def test_reduced_body_converges_to_the_full_body(clamped):
    """The tip's global path with k free-interface modes against the full 60-DOF body, same step:
    the error falls as modes are added (measured 9.8e-2, 3.1e-2, 6.1e-3, 7.9e-4 of the tip's
    elastic deflection for k = 2, 4, 8, 12 at h = 1 ms)."""
    model, (full, tip_full) = clamped
    deflection = np.abs(full.bodies["beam"].displacement[:, -1, 1]).max()
    errors = []
    for k in (2, 4, 8):
        res, tip = tip_history(reduce(model, k, static_modes=False))
        assert res.metadata.get("kernel") == full.metadata.get("kernel")      # the same (compiled) path
        assert res.q.shape[1] == 7 + k
        errors.append(np.abs(tip - tip_full).max() / deflection)
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 0.02


def test_static_modes_and_energy(clamped):
    """4 modes plus the static modes of the frame's unit inertia loads (8 coordinates) follow the
    full body closer than 4 modes alone; the total energy is conserved as the full body's."""
    model, (full, tip_full) = clamped
    deflection = np.abs(full.bodies["beam"].displacement[:, -1, 1]).max()
    res, tip = tip_history(reduce(model, 4))
    _, tip4 = tip_history(reduce(model, 4, static_modes=False))
    assert np.abs(tip - tip_full).max() < np.abs(tip4 - tip_full).max()
    assert np.abs(tip - tip_full).max() < 0.03 * deflection
    e = res.energies
    assert np.ptp(e["total"]) < 2 * np.ptp(full.energies["total"]) + 1e-9 * np.abs(e["kinetic"]).max()
    assert np.all(e["W_drivers"] == 0.0)


def test_free_free_modes_on_mean_axes():
    """A free-free beam reduced to its elastic modes (the rigid-body ones removed: [m_O; g] Phi = 0)
    needs no mean-axis constraint, and swings as the full mean-axis body as modes are added.  Pinned
    at a node, free-free modes converge slowly (the pin's attachment mode is missing): measured
    0.37, 0.16, 0.050, 0.014, 9.2e-4 of the tip's elastic deflection for k = 3, 6, 12, 24, 40."""
    free = fm.Model(fm.generate.line(20, 1.0), BEAM)
    red = reduce(free, 6, static_modes=False)
    assert np.abs(np.vstack([red.m_O, red.g])).max() < 1e-10 * np.abs(np.vstack([free.m_O, free.g])).max()
    # the elastic frequencies of the full free-free beam (its 4th to 9th eigenvalues, the first 3 rigid)
    from scipy.linalg import eigh
    w2 = eigh(free.K.toarray(), free.M.toarray(), eigvals_only=True)
    np.testing.assert_allclose(red.omega2, w2[3:9], rtol=1e-8)
    body = FlexibleBody(red, "beam", reference="mean-axis")
    assert [c.name for c in body.internal_constraints()] == ["beam.euler_parameter_norm"]
    full, tip_full = tip_history(free, "mean-axis")
    deflection = np.abs(full.bodies["beam"].displacement[:, -1, 1]).max()
    errors = [np.abs(tip_history(reduce(free, k, static_modes=False), "mean-axis")[1] - tip_full).max() / deflection
              for k in (3, 6, 12)]
    assert errors[0] > errors[1] > errors[2] and errors[2] < 0.06


def test_craig_bampton_rod_in_the_slider_crank():
    """The coupled slider-crank (cases/slider_crank.py, "omega" stiffening) with its rod reduced by
    Craig-Bampton at the two bearing nodes (N fixed-interface modes + 3 constraint modes) against
    the full 24-DOF rod over one revolution: the mid-span deflection (peak 1.96 mm) agrees to
    3.9e-3, 1.5e-3, 2.7e-4 of its peak with N = 1, 4, 8 (measured; h = 50 us)."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
    try:
        from slider_crank import build_coupled
    finally:
        sys.path.pop(0)
    from flexmbs.mechanisms import chord_deflection

    def midspan(**kw):
        system, _, model = build_coupled(coupled_stiffening="omega", **kw)
        res = fm.run(system, method="index3-alpha", h=5e-5, t_end=0.0419, dt_out=1e-4, store=False)
        return chord_deflection(model, res.bodies["rod"].delta, [0.15])[:, 0], res.metadata.get("kernel")

    full, kernel = midspan()
    errors = []
    for n in (1, 4):
        w, k = midspan(rod_modes=n)
        assert k == kernel
        errors.append(np.abs(w - full).max() / np.abs(full).max())
    assert errors[1] < errors[0] and errors[1] < 3e-3


@pytest.mark.parametrize("call, message", [
    (lambda m: FlexibleBody(reduce(m, 2), "b", stiffening="axial-strain"),
     "stiffening='axial-strain' evaluates each element's axial strain from its nodal DOFs"),
    (lambda m: reduce(fm.Model(fm.generate.line(4, 1.0), BEAM), 2),
     "pass static_modes=False for a free-free body"),
    (lambda m: reduce(fm.Model(fm.generate.line(4, 1.0), BEAM), 2, method="craig-bampton", interface=[0],
                      static_modes=False),
     "reduce it with method='free'"),
    (lambda m: FlexibleBody(reduce(m, 2), "b").rigid_modes(), "its coordinates are modal"),
])
def test_refusals_name_what_to_do(call, message):
    model = fm.Model(fm.generate.line(4, 1.0), BEAM, fixed=[("start", "all")])
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call(model)
