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
from flexmbs.assembly.assembler import dense_array

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
    w2 = eigh(dense_array(free.K), dense_array(free.M), eigvals_only=True)
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


# -- interfaces, attachment modes, stiffening by the modes' own stress ------------------------------
def solid_bar(nx=6):
    """A 0.3 x 0.008 x 0.008 m steel bar of Tet10 cells, clamped at x = 0 (tangent frame)."""
    mesh = fm.generate.box(nx, 1, 1, 0.3, 0.008, 0.008, cell="tetra10")
    return fm.Model(mesh, fm.Tet10(fm.Material(E=2e11, rho=7870.0, nu=0.3)), fixed=[("xmin", "all")])


def test_interface_marker_is_the_mean_of_its_nodes():
    from flexmbs.bodies import Interface
    model = solid_bar()
    body = FlexibleBody(reduce(model, 3, attachments=["xmax"]), "bar")
    rng = np.random.default_rng(3)
    q = body.initial_coordinates() + np.concatenate([[0.1, 0.2, 0.3], np.zeros(4), 1e-3 * rng.standard_normal(body.n_e)])
    q[3:7] /= np.linalg.norm(q[3:7])
    nodes = model.mesh.node_sets["xmax"]
    mean = np.mean([body.point(q, Node(int(i))) for i in nodes], axis=0)
    np.testing.assert_allclose(body.point(q, Interface("xmax")), mean, rtol=0, atol=1e-15)
    w = np.arange(1.0, len(nodes) + 1)
    weighted = np.einsum("k,ka->a", w / w.sum(), [body.point(q, Node(int(i))) for i in nodes])
    np.testing.assert_allclose(body.point(q, Interface(nodes.tolist(), tuple(w))), weighted, rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match="Interface 'nowhere'"):
        body.point(q, Interface("nowhere"))
    with pytest.raises(ValueError, match="`weights` must be"):
        body.point(q, Interface("xmax", (1.0, -1.0)))


def test_attachment_modes_make_a_joint_load_exact():
    """With the attachment modes of an interface, the reduced body's static response to a force at
    that interface's point is the full body's (K_r^-1 Phi^T f = the projection of K^-1 f, exact when
    K^-1 f is in the basis)."""
    model = solid_bar()
    red = reduce(model, 2, static_modes=False, attachments=["xmax"])
    Phi_c = model.interface_translation("xmax")[1]                  # (3, n)
    f = Phi_c.T @ np.array([10.0, -50.0, 20.0])
    from flexmbs.sparse_solve import spd_factor
    u_full = spd_factor(model.K).solve(f)
    q = np.linalg.solve(dense_array(red.K), red.Phi.T @ f)
    np.testing.assert_allclose(red.Phi @ q, u_full, rtol=0, atol=1e-8 * np.abs(u_full).max())   # Ritz round-off


def test_modal_stress_stiffening_is_the_projected_stress_stiffness():
    """f(q) = (sum_i q_i G_i) q equals Phi^T K_geo(sigma(Phi q)) Phi q of the full mesh, and the body's
    elastic tangent is its derivative (central differences)."""
    model = solid_bar()
    red = reduce(model, 3, attachments=["xmax"])
    body = FlexibleBody(red, "bar", stiffening="modal-stress")
    rng = np.random.default_rng(5)
    q = body.initial_coordinates()
    q[7:] = 1e-3 * rng.standard_normal(body.n_e)
    delta = q[7:]
    f = body.geometric_stiffness_force(0.0, q, np.zeros(body.n_q), None)
    full = red.Phi.T @ (model.stress_stiffness(red.Phi @ delta) @ (red.Phi @ delta))
    np.testing.assert_allclose(f, full, rtol=1e-10, atol=1e-12 * np.abs(full).max())
    K = body.elastic_stiffness(0.0, q, np.zeros(body.n_q), None)
    h = 1e-6 * np.abs(delta).max()
    fd = np.empty_like(K)
    for j in range(body.n_e):
        e = np.zeros(body.n_q)
        e[7 + j] = h
        fp = red.K @ (q + e)[7:] + body.geometric_stiffness_force(0.0, q + e, np.zeros(body.n_q), None)
        fm_ = red.K @ (q - e)[7:] + body.geometric_stiffness_force(0.0, q - e, np.zeros(body.n_q), None)
        fd[:, j] = (fp - fm_) / (2 * h)
    np.testing.assert_allclose(K, fd, rtol=1e-7, atol=1e-7 * np.abs(K).max())
    with pytest.raises(ValueError, match="stiffening='modal-stress' takes a ReducedModel"):
        FlexibleBody(model, "full", stiffening="modal-stress")


@pytest.mark.slow
def test_solid_rod_of_the_slider_crank_agrees_with_the_beam():
    """The slider-crank's rod as a Tet10 solid (meshes/slider_crank_rod.msh, Gmsh: 1440 cells, 9000
    DOFs), clamped at bearing A (tangent frame), its bearing B an averaging Interface, reduced to
    4 free-interface modes plus the static and attachment modes (19), stiffened by its own stress:
    the mid-span deflection relative to the chord over the first 75 degrees peaks at 1.6398 mm at
    33.5 deg, the beam model's (8 BeamEB2D, axial-strain stiffening) at 1.6371 mm: 0.16 % apart
    (shear and the solid's 3D stress; the beam is Euler-Bernoulli)."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
    try:
        import slider_crank as sc
    finally:
        sys.path.pop(0)
    from flexmbs.bodies import Interface
    from flexmbs.mechanisms import chord_deflection
    mesh = fm.mesh.sample("slider_crank_rod")
    model = fm.Model(mesh, fm.Tet10(fm.Material(E=2e11, rho=7870.0, nu=0.3)), fixed=[("bearing_A", "all")])
    red = reduce(model, 4, attachments=["bearing_B"])
    t_end = np.radians(75) / 150
    t_eval = np.minimum(fm.analysis.output_times(t_end, np.radians(0.5) / 150), t_end)
    system = sc.build_coupled(rod_model=red, coupled_stiffening="modal-stress",
                              rod_ends=(Interface("bearing_A"), Interface("bearing_B")))[0]
    res = fm.run(system, method="index3-alpha", h=5e-5, t_end=t_end, t_eval=t_eval, rho_inf=0.9, store=False)
    mid = red.interface_translation(np.flatnonzero(np.isclose(mesh.points[:, 0], 0.15)))[1][1]
    end = red.interface_translation("bearing_B")[1][1]
    d = res.bodies["rod"].delta
    w_solid = d @ mid - 0.5 * d @ end
    beam_system, _, beam = sc.build_coupled()
    beam_res = fm.run(beam_system, method="index3-alpha", h=5e-5, t_end=t_end, t_eval=t_eval, rho_inf=0.9, store=False)
    w_beam = chord_deflection(beam, beam_res.bodies["rod"].delta, [0.15])[:, 0]
    assert np.abs(w_solid).max() == pytest.approx(np.abs(w_beam).max(), rel=5e-3)
    assert np.abs(w_solid - w_beam).max() < 0.02 * np.abs(w_beam).max()


def test_modal_stress_runs_compiled_as_on_the_numpy_path():
    """A reduced Tet10 bar stiffened by its own stress, on a pin at its clamped face under gravity:
    the compiled kernel's steps give the numpy path's states (the same Newton iteration; round-off)."""
    from flexmbs.bodies import Interface
    red = reduce(solid_bar(), 3, attachments=["xmax"])

    def run(kernel):
        body = FlexibleBody(red, "bar", stiffening="modal-stress")
        pin = Revolute(body, None, s_i=Interface("xmin"), axis=(0.0, 0.0, 1.0), name="pin")
        system = System([body], [pin], gravity=(0.0, -9.81, 0.0))
        return fm.run(system, method="index3-alpha", h=1e-4, t_end=0.02, dt_out=1e-3, kernel=kernel, store=False)

    compiled, numpy_path = run("auto"), run("numpy")
    assert compiled.metadata["kernel"] == "compiled" and numpy_path.metadata["kernel"] == "numpy"
    d = numpy_path.q[:, 7:]
    assert np.abs(d).max() > 1e-9                                   # it bends
    np.testing.assert_allclose(compiled.q[:, 7:], d, rtol=0, atol=1e-9 * np.abs(d).max())
    np.testing.assert_allclose(compiled.q[:, :7], numpy_path.q[:, :7], rtol=0, atol=1e-12)


@pytest.mark.slow
def test_solid_rod_reduction_error_against_the_full_mesh():
    """cases/slider_crank.py's solid_reduction_error (issue 24, item 4) on a coarse Tet10 rod of the same
    size (6 x 1 x 1 grid cells, 315 free DOFs; the case's 8975 take 25 s): the full mesh and its
    reduction, both kinematically driven on the chord frame over the first 10 degrees at h = 1e-4 s; the
    error falls with the modes (measured at 5 degrees, h = 1e-5 s: 2.0e-2 with 1 mode, 4.2e-4 with 4).  On the case's mesh over 45 degrees it measured 1.8e-3 with 1 mode, 1.8e-4 with 2 and 8.0e-5
    with 4 (docs/flexible_bodies.md)."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
    try:
        import slider_crank as sc
    finally:
        sys.path.pop(0)
    mesh = fm.generate.box(6, 1, 1, 0.3, 0.008, 0.008, cell="tetra10")
    mesh.node_sets.update(bearing_A=mesh.nodes("xmin"), bearing_B=mesh.nodes("xmax"))
    p = {**sc.DEFAULTS, "coupled": True, "rod": "solid", "compare_degrees": 10.0, "h": 1e-4}
    errors = [sc.solid_reduction_error({**p, "modes": n}, mesh) for n in (1, 4)]
    for e in errors:
        assert e["peak_full_m"] > 1e-5 and e["reduced_dofs"] < e["full_dofs"]
    assert 0 < errors[1]["midspan_error"] < 0.1 * errors[0]["midspan_error"]
