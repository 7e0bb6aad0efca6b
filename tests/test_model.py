"""Model building: supports, loads, point masses, geometric stiffening and bad input."""
import numpy as np
import pytest
from scipy.optimize import brentq

import flexmbs as fm
from flexmbs.modal import natural_frequencies, static_solution
from flexmbs.motion import ConstantRotation

STEEL = fm.Material(2e11, 7800.0)


def test_tip_mass_bar_frequency_closed_form():
    """Clamped bar with tip mass M: beta tan(beta) = rho A L / M, omega = beta c / L."""
    A, L, M = 1e-4, 1.0, 1.56
    md = fm.Model(fm.generate.line(400, L), fm.Bar2(STEEL, A), fixed=[("start", "all")],
                  point_masses=[("end", M)])
    mu = STEEL.rho * A * L / M
    beta = brentq(lambda b: b * np.tan(b) - mu, 1e-9, np.pi / 2 - 1e-12)
    w, _ = natural_frequencies(md, n_modes=1)
    assert w[0] == pytest.approx(beta * np.sqrt(STEEL.E / STEEL.rho) / L, rel=1e-6)
    assert md.mass == pytest.approx(STEEL.rho * A * L + M)


def test_centrifugal_tension_of_a_tip_mass_stiffens_the_beam():
    """Tip mass M at radius L spinning at Omega: static axial elongation M Omega^2 L / (EA) more."""
    A, I, L, M, Om = 1e-4, 1e-9, 1.0, 2.0, 30.0
    beam = fm.BeamEB2D(STEEL, A, I)
    kw = dict(motion=ConstantRotation(Om), fixed=[("start", "all")])
    bare = fm.Model(fm.generate.line(8, L), beam, **kw)
    heavy = fm.Model(fm.generate.line(8, L), beam, point_masses=[("end", M)], **kw)
    u_bare, u_heavy = static_solution(bare), static_solution(heavy)
    tip = heavy.dof(8, "u")
    # with softening the extra stretch is slightly larger than M Omega^2 L L/(EA); first order:
    assert u_heavy[tip] - u_bare[tip] == pytest.approx(M * Om**2 * L * L / (STEEL.E * A), rel=1e-3)
    # the tension raises the chordwise frequency (stiffening beats the -Omega^2 softening)
    w_bare = natural_frequencies(bare, n_modes=1, gyroscopic=False)[0][0]
    w_heavy_free = natural_frequencies(fm.Model(fm.generate.line(8, L), beam, point_masses=[("end", M)],
                                                stiffening=False, **kw), n_modes=1, gyroscopic=False)[0][0]
    w_heavy = natural_frequencies(heavy, n_modes=1, gyroscopic=False)[0][0]
    assert w_heavy > w_heavy_free
    assert w_bare > 0


def test_stiffening_default_follows_the_frame():
    beam = fm.BeamEB2D(STEEL, 1e-4, 1e-9)
    mesh = fm.generate.line(4, 1.0)
    assert fm.Model(mesh, beam, motion=ConstantRotation(3.0), fixed=[("start", "all")]).stiffening
    assert not fm.Model(mesh, beam, fixed=[("start", "all")]).stiffening
    with pytest.raises(ValueError, match="supported body"):
        fm.Model(mesh, beam, motion=ConstantRotation(3.0))            # free-floating: K singular
    free = fm.Model(mesh, beam, motion=ConstantRotation(3.0), stiffening=False)
    assert free.n_dofs == 15


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(fixed=[("start", "phi")]), ValueError, "unknown DOF 'phi'"),
    (dict(fixed=[("nowhere", "all")]), ValueError, "no node set named 'nowhere'"),
    (dict(fixed=[("start", "all"), ("end", "all"), (np.arange(1, 4), "all")]), ValueError, "removes every DOF"),
    (dict(point_masses=[("end", -1.0)]), ValueError, "positive"),
    (dict(point_masses=["end"]), TypeError, r"\(nodes, mass\)"),
    (dict(loads=[3.0]), TypeError, "NodalLoad"),
    (dict(gravity=(0, -9.81)), ValueError, "`gravity`"),
    (dict(damping=(1.0, -2.0)), ValueError, "`damping`"),
    (dict(motion="spin"), TypeError, "`motion`"),
])
def test_bad_model_input(kwargs, error, match):
    kwargs.setdefault("fixed", [("start", "all")])
    with pytest.raises(error, match=match):
        fm.Model(fm.generate.line(4, 1.0), fm.BeamEB2D(STEEL, 1e-4, 1e-9), **kwargs)


def test_element_must_fit_the_mesh():
    with pytest.raises(ValueError, match="no 'tetra' cells"):
        fm.Model(fm.generate.line(4, 1.0), fm.Tet4(STEEL))
    with pytest.raises(TypeError, match="`mesh`"):
        fm.Model("beam.msh", fm.Tet4(STEEL))


def test_run_reports_bad_arguments():
    md = fm.Model(fm.generate.line(3, 1.0), fm.Bar2(STEEL, 1e-4), fixed=[("start", "all")])
    with pytest.raises(ValueError, match="`formulation` must be one of"):
        fm.run(md, formulation="newton", t_end=1.0)
    with pytest.raises(ValueError, match="`method` must be one of"):
        fm.run(md, method="euler", t_end=1.0)
    with pytest.raises(ValueError, match="`delta0` must have shape"):
        fm.run(md, t_end=1.0, delta0=np.zeros(7))


def test_uniform_line_load_on_a_cantilever_is_nodally_exact():
    """w_tip = q L^4 / (8 EI) (BENCHMARKS sec. 8.4: Hermite cubics with consistent loads)."""
    E, I, L, q = 2e11, 1e-8, 1.5, 120.0
    beam = fm.BeamEB2D(fm.Material(E, 7800.0), 1e-4, I)
    for n in (2, 5):
        md = fm.Model(fm.generate.line(n, L), beam, fixed=[("start", "all")],
                      loads=[fm.DistributedLoad((0.0, -q, 0.0), per="length")])
        u = static_solution(md)
        assert u[md.dof(n, "v")] == pytest.approx(-q * L**4 / (8 * E * I), rel=1e-10)


def test_distributed_axial_load_stiffens_like_its_tension():
    """An axial line load q toward the tip: tension q (L - x); the stiffening case uses it exactly."""
    beam = fm.BeamEB2D(STEEL, 1e-4, 1e-9)
    mesh = fm.generate.line(6, 2.0)
    md = fm.Model(mesh, beam, fixed=[("start", "all")], stiffening=True,
                  loads=[fm.DistributedLoad((50.0, 0.0, 0.0), per="length")])
    assert md.stiffening
    pulled = natural_frequencies(md, n_modes=1)[0][0]
    plain = natural_frequencies(fm.Model(mesh, beam, fixed=[("start", "all")]), n_modes=1)[0][0]
    assert pulled > plain


def test_distributed_load_bad_input():
    with pytest.raises(ValueError, match="`loads\\[0\\].per`"):
        fm.Model(fm.generate.line(2, 1.0), fm.BeamEB2D(STEEL, 1e-4, 1e-9), fixed=[("start", "all")],
                 loads=[fm.DistributedLoad((1.0, 0.0, 0.0), per="area")])
    with pytest.raises(ValueError, match="element set"):
        fm.Model(fm.generate.line(2, 1.0), fm.BeamEB2D(STEEL, 1e-4, 1e-9), fixed=[("start", "all")],
                 loads=[fm.DistributedLoad((1.0, 0.0, 0.0), elements="deck")])


def test_spinning_solid_is_stiffened_like_a_beam():
    """Hex8 cantilever spinning about z: the flapwise Southwell coefficient (w^2 - w0^2)/Omega^2
    equals the beam's, 1.189 at gamma = 2 (../shared/BENCHMARKS.md sec. 2.3: (4.1373^2 - 3.5160^2)/4),
    although the fully integrated Hex8 is too stiff in bending (shear locking raises w0).

    The section is twice as wide (y) as it is thick (z): with a square section the flapwise and
    chordwise modes have (nearly) equal frequencies at Omega = 0 and the eigensolver returns any
    mix of the two, depending on the BLAS build.  gamma = Omega L^2 sqrt(12 rho / (E t^2)) of the
    flapwise modes depends on the thickness t only, so the width does not change the reference."""
    L, t, width = 1.0, 0.03, 0.06
    mesh = fm.generate.box(24, 1, 2, L, width, t, cell="hexahedron")
    element = fm.Hex8(fm.Material(1e9, 1000.0, 0.0))
    flap = {}
    for Om in (0.0, 20.0):                                   # gamma = Omega sqrt(rho A L^4 / EI) = 2.31
        md = fm.Model(mesh, element, motion=ConstantRotation(Om), fixed=[("xmin", "all")])
        assert md.stiffening
        w, Z = natural_frequencies(md, n_modes=4, gyroscopic=False)
        z = md.free % 3 == 2                                 # w DOFs among the free ones
        share = np.linalg.norm(Z[z], axis=0) / np.linalg.norm(Z, axis=0)
        assert np.sort(share)[-2] > 0.99 and np.sort(share)[1] < 0.01    # 2 pure flap, 2 pure chord modes
        flap[Om] = w[share > 0.99][0]                        # the first flapwise mode
        assert w[share < 0.01][0] > 1.4 * flap[Om]           # the chordwise one is well apart
    assert (flap[20.0] ** 2 - flap[0.0] ** 2) / 20.0**2 == pytest.approx((4.1373**2 - 3.5160**2) / 4, rel=0.01)


def test_output_times_never_pass_t_end():
    """t_end = 4 pi / 150 with dt_out = t_end / 720: the last grid time rounds above t_end."""
    from flexmbs.analysis import output_times
    t_end = 4 * np.pi / 150
    t = output_times(t_end, t_end / 720)
    assert len(t) == 721 and t[-1] == t_end and np.all(np.diff(t) > 0)


def test_supported_body_is_a_rigid_mode_test_not_a_residual_threshold():
    """A beam fixed at one end is supported at any mesh size; free, it is refused by the
    rigid-mode test (rank of the rigid modes on the fixed DOFs), with the count of free motions."""
    from flexmbs.motion import ConstantRotation
    beam = fm.BeamEB2D(fm.Material(E=210e9, rho=7800.0), 1e-4, 1e-9)
    mesh = fm.generate.line(2000, 1.0)
    md = fm.Model(mesh, beam, motion=ConstantRotation(15.0), fixed=[("start", "all")])
    assert md.stiffening and ("A", 0, 0) in md._Kg_keys
    with pytest.raises(ValueError, match="1 rigid-body motion"):
        fm.Model(mesh, beam, motion=ConstantRotation(15.0), fixed=[("start", ["u", "v"])])


@pytest.mark.slow
def test_rotating_beam_of_100000_elements_builds_with_stiffening():
    """Issue 15: 10^5 elements raised "needs a supported body" (a residual test |K u - f| <= 1e-6 |f|
    that the condition number ~ n^2 of the bar defeats)."""
    from flexmbs.motion import ConstantRotation
    rho, A, L, n = 7800.0, 1e-4, 1.0, 100_000
    beam = fm.BeamEB2D(fm.Material(E=210e9, rho=rho), A, 1e-9)
    md = fm.Model(fm.generate.line(n, L), beam, motion=ConstantRotation(15.0), fixed=[("start", "all")])
    assert md.stiffening and md.n_dofs == 3 * n
    assert ("A", 0, 0) in md._Kg_keys
