"""An imported body runs (issue 24): M and K of a solid written in Abaqus's format from a native
flexmbs mesh, imported (`flexmbs.io.fe_import.ImportedBody.model`), reduced with its attachment modes,
joined in a System and run, equal the native body's run to 1e-10."""
import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import FlexibleBody, Interface
from flexmbs.constraints import Revolute
from flexmbs.io.fe_import import ImportedModel, import_body
from flexmbs.reduction import reduce
from flexmbs.system import System
from test_fe_import import abaqus_files, node_labels

STEEL = fm.Material(2.1e11, 7800.0, 0.3)


def bar_mesh():
    """A 0.4 m x 0.04 m x 0.04 m Tet4 bar (5 x 1 x 1 grid cells) along x."""
    return fm.generate.box(5, 1, 1, 0.4, 0.04, 0.04, cell="tetra")


def pendulum(model, clamped_face, tip_face):
    """The bar clamped to its frame at x = 0 (its tangent frame), reduced to 3 modes plus the static
    modes of the tip's averaging interface, on a revolute joint about z at the frame's origin, released
    horizontally under gravity: (System, body, ReducedModel)."""
    reduced = reduce(model, 3, static_modes=False, attachments=[tip_face])
    body = FlexibleBody(reduced, "bar", stiffening="none")
    pin = Revolute(None, body, at=np.zeros(3), axis=(0.0, 0.0, 1.0), name="pin")
    return System([body], [pin], gravity=(0.0, -9.81, 0.0)), body, reduced


def run_pendulum(system):
    """index3-alpha with Newton converged to round-off (newton_tol 1e-12): the two bodies' runs then differ
    by what their imports differ by, not by where each stops within the default tolerance 1e-8 (2.9e-16 m
    of the tip's 1.6e-7 m elastic part with it)."""
    return fm.run(system, method="index3-alpha", h=1e-4, t_end=0.02, dt_out=0.002, store=False, newton_tol=1e-12)


def tip_history(res, body, reduced, tip):
    """Global position of the tip interface's point over time (n_t, 3)."""
    X_c, Phi_c = reduced.interface_translation(tip)
    motion = res.bodies[body.name]
    return motion.position + np.einsum("tij,tj->ti", motion.rotation, X_c + res.bodies[body.name].delta @ Phi_c.T)


def test_imported_abaqus_bar_runs_as_the_native_one(tmp_path):
    mesh = bar_mesh()
    free_free = fm.Model(mesh, fm.Tet4(STEEL))                       # M and K on every node, for the export
    labels = node_labels(mesh.n_nodes)
    imported = import_body(*abaqus_files(tmp_path, free_free, labels, "abaqus-labels"))
    # row i of the imported body is the node labelled imported.node_labels[i]; native node j has labels[j]
    rows = np.argsort(imported.node_labels)[np.searchsorted(np.sort(imported.node_labels), labels)]
    xmin, xmax = mesh.nodes("xmin"), mesh.nodes("xmax")
    model = imported.model(fixed=[("root", "all")], node_sets={"root": rows[xmin], "tip": rows[xmax]})
    assert isinstance(model, ImportedModel) and model.n_dofs == free_free.n_dofs - 3 * len(xmin)

    native = fm.Model(mesh, fm.Tet4(STEEL), fixed=[("xmin", "all")])
    sys_n, body_n, red_n = pendulum(native, "xmin", "xmax")
    sys_i, body_i, red_i = pendulum(model, "root", "tip")
    assert red_i.n_dofs == red_n.n_dofs == 6
    assert np.allclose(red_i.omega2, red_n.omega2, rtol=1e-10, atol=0)
    res_n, res_i = run_pendulum(sys_n), run_pendulum(sys_i)
    assert res_n.status == res_i.status == "finished"
    # the frame (R, p) and the tip: the modal coordinates themselves may differ by the modes' signs
    frame_n, frame_i = res_n.q[:, :7], res_i.q[:, :7]
    assert np.abs(frame_i - frame_n).max() <= 1e-10 * np.abs(frame_n).max()
    tip_n = tip_history(res_n, body_n, red_n, "xmax")
    tip_i = tip_history(res_i, body_i, red_i, "tip")
    assert np.abs(tip_i - tip_n).max() <= 1e-10 * np.abs(tip_n - tip_n[0]).max()
    # the elastic part alone (1.6e-7 m; measured apart by 3e-19 m)
    elastic_n = res_n.bodies["bar"].delta @ red_n.interface_translation("xmax")[1].T
    elastic_i = res_i.bodies["bar"].delta @ red_i.interface_translation("tip")[1].T
    assert np.abs(elastic_n).max() > 1e-8
    assert np.abs(elastic_i - elastic_n).max() <= 1e-10 * np.abs(elastic_n).max()
