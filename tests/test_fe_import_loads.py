"""Loads on an imported body (flexmbs/io/fe_import.py, `ImportedBody.model(loads=..., gravity=...)`):
M and K written in Abaqus's format from a native Tet4 bar, imported, loaded by nodal forces, a body
force per mass and gravity, equal the native body's load vectors, static response and run to round-off;
stresses are refused by name."""
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.analysis import element_data
from flexmbs.io.fe_import import import_body
from flexmbs.reduction import reduce
from test_fe_import import abaqus_files, node_labels
from flexmbs.assembly.assembler import dense_array

STEEL = fm.Material(2.1e11, 7800.0, 0.3)
GRAVITY = (0.0, -9.81, 0.0)
SPIN = (0.0, 0.0, 30.0)          # a body force per mass [N/kg] along z


def pair(tmp_path):
    """(native Model, imported Model, rows): the bar clamped at x = 0, loaded at its tip by 50 N along -y
    on each tip node, by a body force per mass and by gravity; rows[j] the imported row of native node j."""
    mesh = fm.generate.box(5, 1, 1, 0.4, 0.04, 0.04, cell="tetra")
    labels = node_labels(mesh.n_nodes)
    body = import_body(*abaqus_files(tmp_path, fm.Model(mesh, fm.Tet4(STEEL)), labels, "abaqus-labels"))
    rows = np.argsort(body.node_labels)[np.searchsorted(np.sort(body.node_labels), labels)]
    xmin, xmax = mesh.nodes("xmin"), mesh.nodes("xmax")
    f = lambda t: 1.0 + t            # noqa: E731
    native = fm.Model(mesh, fm.Tet4(STEEL), fixed=[("xmin", "all")], gravity=GRAVITY,
                      loads=[fm.NodalLoad("xmax", "v", -50.0, f), fm.DistributedLoad(SPIN, per="mass")])
    imported = body.model(fixed=[("root", "all")], node_sets={"root": rows[xmin], "tip": rows[xmax]}, gravity=GRAVITY,
                          loads=[fm.NodalLoad("tip", "v", -50.0, f), fm.DistributedLoad(SPIN, per="mass")])
    return native, imported, rows


def native_order(native, imported, rows):
    """P (n_native_free, n_imported_free): native free DOF -> imported free DOF, delta_i = P^T delta_n."""
    dof = (rows[:, None] * 3 + np.arange(3)).ravel()              # native full DOF k -> imported full DOF
    pos = np.searchsorted(imported.free, dof[native.free])
    P = np.zeros((native.n_dofs, imported.n_dofs))
    P[np.arange(native.n_dofs), pos] = 1.0
    return P


def test_loads_and_gravity_equal_the_native_bodys(tmp_path):
    native, imported, rows = pair(tmp_path)
    P = native_order(native, imported, rows)
    scale = np.abs(native.Q).max()
    np.testing.assert_allclose(P @ imported.Q, native.Q, atol=1e-10 * scale)
    assert imported.Q[:, 1].reshape(-1, 3).sum(axis=0) == pytest.approx(
        np.array(SPIN) * native.Q[:, 1].reshape(-1, 3).sum(axis=0)[2] / SPIN[2], rel=1e-12)
    # the static response to all loads and to gravity (the frame's load -m_O^T R^T (a_O - g), here m_O^T g)
    F_n = native.Q.sum(axis=1) + native.m_O.T @ np.array(GRAVITY)
    F_i = imported.Q.sum(axis=1) + imported.m_O.T @ np.array(GRAVITY)
    u_n = np.linalg.solve(dense_array(native.K), F_n)
    u_i = np.linalg.solve(dense_array(imported.K), F_i)
    np.testing.assert_allclose(P @ u_i, u_n, atol=1e-10 * np.abs(u_n).max())


def test_a_loaded_imported_body_runs_as_the_native_one(tmp_path):
    native, imported, rows = pair(tmp_path)
    P = native_order(native, imported, rows)
    opts = dict(method="newmark", h=1e-5, t_end=5e-4, dt_out=1e-4, store=False)
    res_n, res_i = fm.run(native, **opts), fm.run(imported, **opts)
    assert res_n.success and res_i.success
    np.testing.assert_allclose(res_i.delta @ P.T, res_n.delta, atol=1e-10 * np.abs(res_n.delta).max())
    red_n, red_i = reduce(native, 3), reduce(imported, 3)          # the static modes of the loads, too
    np.testing.assert_allclose(red_i.omega2, red_n.omega2, rtol=1e-10)


def test_stress_of_an_imported_body_is_refused_by_name(tmp_path):
    _, imported, _ = pair(tmp_path)
    assert element_data(imported, np.zeros(imported.n_dofs)) == {}           # runs carry no element data
    with pytest.raises(ValueError, match="`stress`: an imported body has no element data"):
        imported.stress(np.zeros(imported.n_dofs))
    red = reduce(imported, 2)
    with pytest.raises(ValueError, match="`stress`: an imported body has no element data"):
        red.stress(np.zeros(red.n_dofs))
