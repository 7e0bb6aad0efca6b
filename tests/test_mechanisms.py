"""Rigid planar kinematics: loop closure, derivatives, branches, singular positions, Grashof type.

Sources: vector-loop equations and the closed-form positions of the four-bar and the offset
slider-crank, R. L. Norton, Design of Machinery, 5th ed. (2012), secs. 4.5-4.6; the Grashof
condition and its classes, ibid. sec. 2.12; velocity and acceleration equations
Phi_q q' = -Phi_phi phi', Phi_q q'' = -Phi_phi phi'' - gamma, P. E. Nikravesh,
Computer-Aided Analysis of Mechanical Systems (1988), ch. 3.  The parallelogram is the planar
version of Bauchau's four-bar (BENCHMARKS sec. 5: 0.12 / 0.24 / 0.12 / 0.24 m), a change-point
linkage whose links are collinear at phi = 0 and pi.
"""
import numpy as np
import pytest

from flexmbs.mechanisms import (AssemblyError, FourBar, GrashofType, Linkage, SingularPositionError, SliderCrank,
                                Vec, constant_speed, grashof, link_motion)

CRANK_ROCKER = dict(ground=0.30, crank=0.08, coupler=0.30, rocker=0.25)
LINKAGES = {
    "four-bar-open": lambda: FourBar(**CRANK_ROCKER, branch="open"),
    "four-bar-crossed": lambda: FourBar(**CRANK_ROCKER, branch="crossed"),
    "four-bar-tilted-ground": lambda: FourBar(0.25, 0.06, 0.21, 0.18, ground_angle=0.4),
    "slider-crank-offset": lambda: SliderCrank(0.15, 0.30, offset=0.05),
    "slider-crank-left": lambda: SliderCrank(0.15, 0.30, offset=-0.03, branch="left"),
}


def law(t):
    """A crank-angle law with rate and acceleration (not constant speed)."""
    return 0.3 + 7.0 * t + 4.0 * np.sin(3.0 * t), 7.0 + 12.0 * np.cos(3.0 * t), -36.0 * np.sin(3.0 * t)


@pytest.mark.parametrize("name", LINKAGES)
def test_loops_close_to_round_off(name):
    lk = LINKAGES[name]()
    phi = np.linspace(0.0, 2.0 * np.pi, 73)
    st = lk.solve(phi)
    for p, z in zip(phi, st.z):
        assert np.abs(lk.residual(p, z[1:])).max() <= 8 * np.finfo(float).eps * lk.scale
    # every link keeps its length: the joints are where the rigid links put them
    for link in lk.links:
        c = st.link(link)
        np.testing.assert_allclose(c.length, c.length[0], rtol=1e-13)


@pytest.mark.parametrize("name", LINKAGES)
def test_velocities_and_accelerations_match_finite_differences(name):
    lk = LINKAGES[name]()
    h = 1e-4
    for t in (0.05, 0.4, 0.77):
        laws = np.array([law(t + k * h) for k in (-2, -1, 0, 1, 2)])
        st = lk.solve(laws[:, 0], laws[:, 1], laws[:, 2])
        z = st.z
        # 4th-order central differences of the positions in time
        d1 = (z[0] - 8 * z[1] + 8 * z[3] - z[4]) / (12 * h)
        d2 = (-z[0] + 16 * z[1] - 30 * z[2] + 16 * z[3] - z[4]) / (12 * h * h)
        np.testing.assert_allclose(st.z_dot[2], d1, rtol=1e-8, atol=1e-8 * np.abs(d1).max())
        np.testing.assert_allclose(st.z_ddot[2], d2, rtol=1e-5, atol=1e-5 * np.abs(d2).max())
        for point in lk.points:
            r, v, a = st.point(point)
            np.testing.assert_allclose(v[2], (r[0] - 8 * r[1] + 8 * r[3] - r[4]) / (12 * h),
                                       atol=1e-8 * (1 + np.abs(v[2]).max()))
            np.testing.assert_allclose(a[2], (-r[0] + 16 * r[1] - 30 * r[2] + 16 * r[3] - r[4]) / (12 * h * h),
                                       atol=1e-5 * (1 + np.abs(a[2]).max()))
        for link in lk.links:
            c = st.link(link)
            th = c.theta
            np.testing.assert_allclose(c.omega[2], (th[0] - 8 * th[1] + 8 * th[3] - th[4]) / (12 * h),
                                       atol=1e-8 * (1 + abs(c.omega[2])))
            np.testing.assert_allclose(c.eps[2], (-th[0] + 16 * th[1] - 30 * th[2] + 16 * th[3] - th[4]) / (12 * h * h),
                                       atol=1e-5 * (1 + abs(c.eps[2])))


def test_offset_slider_crank_matches_its_closed_form():
    """Norton eq. 4.17: s = r cos(phi) + sqrt(l^2 - (r sin(phi) - e)^2) on the right branch."""
    r, l, e = 0.15, 0.30, 0.05
    phi = np.linspace(-np.pi, np.pi, 37)
    st = SliderCrank(r, l, offset=e).solve(phi)
    np.testing.assert_allclose(st["s"][0], r * np.cos(phi) + np.sqrt(l**2 - (r * np.sin(phi) - e) ** 2),
                               rtol=1e-14)
    # dead centres are regular for a crank input: slider speed zero where crank and rod align
    inline = SliderCrank(r, l).state(0.0, 150.0)
    assert inline["s"][1] == pytest.approx(0.0, abs=1e-12)
    assert inline["theta"][1] == pytest.approx(-r * 150.0 / l, rel=1e-14)       # rod turns about B


def test_generic_vector_loops_reproduce_the_four_bar():
    """The same loop written by hand (no closed form) gives the FourBar's solution."""
    fb = FourBar(**CRANK_ROCKER)
    a, b, c, d = 0.08, 0.30, 0.25, 0.30
    loop = [Vec(a, "phi"), Vec(b, "theta3"), Vec(c, "theta4", -1), Vec(d, 0.0, -1)]
    generic = Linkage(("theta3", "theta4"), [loop], {"O2": [], "B": [Vec(a, "phi"), Vec(b, "theta3")]},
                      {"coupler": ("O2", "B")}, branch=-1)            # det Phi_q < 0 on the open branch
    phi = np.linspace(0.0, 2 * np.pi, 37)
    generic.position(phi[0], guess=fb.position(phi[0]) + 0.05)
    st = generic.solve(phi)
    ref = fb.solve(phi)
    np.testing.assert_allclose(np.angle(np.exp(1j * (st.z - ref.z))), 0.0, atol=1e-13)
    with pytest.raises(ValueError, match="starting point"):
        Linkage(("theta3", "theta4"), [loop], {}, {}).position(0.3)


def test_branches_are_mirror_images_about_the_diagonal():
    op, cr = FourBar(**CRANK_ROCKER, branch="open"), FourBar(**CRANK_ROCKER, branch="crossed")
    for phi in (0.2, 2.5, 4.0):
        A = op.state(phi).point("A")[0]
        O4 = op.state(phi).point("O4")[0]
        B1, B2 = op.state(phi).point("B")[0], cr.state(phi).point("B")[0]
        u = (O4 - A) / np.linalg.norm(O4 - A)
        n = np.array([-u[1], u[0]])
        assert (B1 - A) @ n > 0 > (B2 - A) @ n                    # open: B left of A -> O4
        assert (B1 - A) @ u == pytest.approx((B2 - A) @ u, rel=1e-12)
        # Newton started on the other branch is refused, not silently accepted
        with pytest.raises(AssemblyError, match="other assembly branch"):
            op.position(phi, guess=cr.position(phi))


@pytest.mark.parametrize("lengths, expected", [
    ((0.30, 0.08, 0.30, 0.25), GrashofType.CRANK_ROCKER),       # crank shortest
    ((0.05, 0.20, 0.30, 0.25), GrashofType.DOUBLE_CRANK),       # ground shortest: drag link
    ((0.30, 0.25, 0.08, 0.30), GrashofType.DOUBLE_ROCKER),      # coupler shortest
    ((0.30, 0.25, 0.30, 0.08), GrashofType.ROCKER_CRANK),       # rocker shortest
    ((0.24, 0.12, 0.24, 0.12), GrashofType.CHANGE_POINT),       # parallelogram: s + l = p + q
    ((0.30, 0.20, 0.10, 0.12), GrashofType.TRIPLE_ROCKER),      # s + l = 0.40 > p + q = 0.32
])
def test_grashof_type_of_known_linkages(lengths, expected):
    assert grashof(*lengths) is expected
    assert FourBar(*lengths).type is expected


def test_grashof_rejects_bad_lengths():
    with pytest.raises(ValueError, match="positive"):
        grashof(0.3, -0.1, 0.2, 0.2)


def test_a_four_bar_that_cannot_close_raises_a_clear_error():
    # non-Grashof: the crank only reaches a range; at phi = pi the pin is too far from O4
    fb = FourBar(0.30, 0.20, 0.10, 0.12)
    assert fb.type is GrashofType.TRIPLE_ROCKER and not fb.type.crank_turns
    lo, hi = fb.crank_range()
    assert -np.pi < lo < 0 < hi < np.pi
    with pytest.raises(AssemblyError, match="cannot close at crank angle") as info:
        fb.position(np.pi)
    assert "coupler + rocker" in str(info.value) and "triple-rocker" in str(info.value)
    assert info.value.phi == np.pi
    fb.position(0.5 * hi)                                          # inside the range it closes
    with pytest.raises(AssemblyError):
        fb.solve(np.linspace(0.0, 2.0, 50))                        # a path that leaves the range
    # links that can never close
    with pytest.raises(AssemblyError, match="no crank angle"):
        FourBar(1.0, 0.1, 0.1, 0.1).position(0.0)
    with pytest.raises(AssemblyError, match="cannot close"):
        SliderCrank(0.2, 0.1).position(np.pi / 2)


def test_singular_positions_of_the_parallelogram_are_reported():
    pg = FourBar(0.24, 0.12, 0.24, 0.12)                           # planar Bauchau four-bar
    with pytest.raises(SingularPositionError, match="singular position at phi = 0"):
        pg.position(0.0)
    singular, blocked = pg.singular_positions(n=73)
    np.testing.assert_allclose(singular, [0.0, np.pi, 2 * np.pi], atol=1e-12)
    assert len(blocked) == 0
    # driving it through phi = 0 is refused even when no sample falls on the singular position
    with pytest.raises(SingularPositionError, match="passes through a singular position between"):
        pg.solve(np.linspace(0.5, -0.43, 20))
    # a time-driven frame is checked over its interval before a simulation starts
    with pytest.raises(SingularPositionError):
        link_motion(pg, "coupler", constant_speed(0.6, phi0=0.3), t_span=(0.0, 12.0))
    # a regular crank-rocker has none
    assert len(FourBar(**CRANK_ROCKER).singular_positions(n=181)[0]) == 0


def test_link_motion_gives_the_chord_frame_of_the_link():
    sc = SliderCrank(0.15, 0.30, offset=0.02)
    m = link_motion(sc, "rod", law)
    for t in (0.1, 0.9):
        fs = m.state(t)
        st = sc.state(*law(t))
        A, vA, aA = st.point("A")
        B = st.point("B")[0]
        np.testing.assert_allclose(fs.r_O[:2], A, atol=1e-15)
        np.testing.assert_allclose(fs.v_O[:2], vA, atol=1e-13)
        np.testing.assert_allclose(fs.a_O[:2], aA, atol=1e-12)
        np.testing.assert_allclose(fs.R[:2, 0], (B - A) / 0.30, atol=1e-14)      # x axis along the chord
        assert fs.omega[2] == pytest.approx(st["theta"][1], rel=1e-12)            # rigid rod: theta'
        assert fs.eps[2] == pytest.approx(st["theta"][2], rel=1e-10)
    with pytest.raises(ValueError, match="unknown link"):
        link_motion(sc, "coupler", law)
    with pytest.raises(TypeError, match="callable"):
        link_motion(sc, "rod", 150.0)
