"""Results in the data ecosystem (issue 27, item 2): results.h5 opens in xarray (netCDF-4 dimension
scales: ``t`` is the coordinate, every axis named, units kept) for a Model run and a System run, and
`Results.to_xarray` / `Results.to_dataframe` hold the same numbers as the `Results` they come from."""
from __future__ import annotations

import numpy as np
import pytest

import flexmbs as fm
from flexmbs.bodies import RigidBodyEP
from flexmbs.constraints import Revolute
from flexmbs.system import System

xr = pytest.importorskip("xarray")      # the data extra is part of the test extra (pyproject.toml)
pd = pytest.importorskip("pandas")
pytest.importorskip("h5netcdf")


def bar_model():
    """A spinning 4-element bar under a tip load (tests/test_results_io.py's)."""
    bar = fm.Bar2(fm.Material(E=210e9, rho=50_000.0), area=0.2e-4)
    load = fm.NodalLoad("end", "u", 1.0, lambda t: np.sin(200.0 * t))
    return fm.Model(fm.generate.line(4, 1.0), bar, motion=fm.motion.ConstantRotation(15.0),
                    fixed=[("start", "all")], loads=[load])


def pendulum():
    """A 3D rigid pendulum (RigidBodyEP) on a revolute joint about z at the origin, under gravity."""
    body = RigidBodyEP("link", 2.0, np.diag([0.01, 0.02, 0.02]), position=(0.5, 0.0, 0.0))
    return System([body], [Revolute(None, body, at=(0.0, 0.0, 0.0), axis=(0, 0, 1), name="pivot")],
                  gravity=(0.0, -9.81, 0.0))


@pytest.fixture(scope="module")
def model_run(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "results.h5"
    res = fm.run(bar_model(), store=path, formulation="hamilton", method="DOP853", rtol=1e-6, t_end=2e-3,
                 dt_out=1e-4)
    return path, res


@pytest.fixture(scope="module")
def system_run(tmp_path_factory):
    path = tmp_path_factory.mktemp("system") / "results.h5"
    res = fm.run(pendulum(), method="index3-alpha", t_end=0.05, h=1e-3, t_eval=np.linspace(0.0, 0.05, 11),
                 store=path)
    return path, fm.load_results(path)


def open_run(path, group):
    # phony_dims=None: an axis without a dimension scale is an error, not a phony_dim_N
    return xr.open_dataset(path, group=group, engine="h5netcdf", phony_dims=None)


def test_model_run_opens_in_xarray_with_t_as_coordinate(model_run):
    path, res = model_run
    with open_run(path, "run") as ds:
        np.testing.assert_array_equal(ds["t"].values, res.t)
        assert "t" in ds.indexes and ds["t"].attrs["units"] == "s"
        assert ds["displacement"].dims == ("t", "node", "component")
        assert ds["displacement"].attrs["units"] == "m"
        np.testing.assert_array_equal(ds["displacement"].values, res.displacement)
        assert list(ds["component"].values) == ["x", "y"]
        assert list(ds["energy"].values) == ["T", "T2", "T1", "T0", "V", "V_geo", "V_g", "jacobi"]
        np.testing.assert_array_equal(ds["energies"].sel(energy="T").values, res.energies["T"])
        np.testing.assert_array_equal(ds["works"].sel(work="W_frame").values, res.energies["W_frame"])
    with open_run(path, "run/frame") as frame:
        assert frame["rotation"].dims == ("t", "axis", "body_axis")
        np.testing.assert_array_equal(frame["omega"].values, res.frame["omega"])
    with open_run(path, "run/element_data") as element:
        assert element["axial_force"].dims == ("t", "element") and element["axial_force"].attrs["units"] == "N"


def test_system_run_opens_in_xarray_with_constraint_names(system_run):
    path, res = system_run
    with open_run(path, "run") as ds:
        np.testing.assert_array_equal(ds["t"].values, res.t)
        assert ds["q"].dims == ("t", "coordinate")
        assert ds["multipliers"].dims == ("t", "constraint")
        assert list(ds["constraint"].values) == ["link.euler_parameter_norm"] + [f"pivot[{k}]" for k in range(5)]
        np.testing.assert_array_equal(ds["multipliers"].values, res.multipliers)
    with open_run(path, "run/bodies/link") as link:
        assert link["position"].dims == ("t", "axis") and link["position"].attrs["units"] == "m"
        np.testing.assert_array_equal(link["position"].values, res.bodies["link"].position)


def test_a_labelled_file_reads_back_as_before(model_run, system_run):
    """The dimension scales are not time series: `load_results` sees the same run (tests/test_results_io.py
    checks the values); the file's data sets with a time axis all have n_t rows."""
    for path, res in (model_run, system_run):
        back = fm.load_results(path)
        assert back.status == "finished" and len(back.t) == len(res.t)
        assert fm.io.list_runs(path) == {"run": "finished"}


def test_to_xarray_holds_the_results_histories(system_run, model_run):
    _, res = system_run
    ds = res.to_xarray()
    np.testing.assert_array_equal(ds["t"].values, res.t)
    np.testing.assert_array_equal(ds["kinetic"].values, res.energies["kinetic"])
    np.testing.assert_array_equal(ds["position"].sel(body="link").values, res.bodies["link"].position)
    np.testing.assert_array_equal(ds["multipliers"].sel(constraint="pivot[4]").values,
                                  res.multipliers[:, -1])
    assert ds["angular_velocity"].attrs["units"] == "rad/s"
    _, model = model_run
    ds = model.to_xarray()
    np.testing.assert_array_equal(ds["velocity"].values, model.velocity)
    np.testing.assert_array_equal(ds["axial_force"].values, model.element_data["axial_force"])


def test_to_dataframe_energies_multipliers_and_a_body(system_run):
    """The tables hold the `Results`' numbers under their names; the link's columns describe a rotation
    about the joint's z axis at 0.5 m from the pivot."""
    _, res = system_run
    energies = res.to_dataframe()
    assert energies.index.name == "t"
    np.testing.assert_array_equal(energies["total"].to_numpy(), res.energies["total"])
    lam = res.to_dataframe("multipliers")
    assert list(lam.columns) == ["link.euler_parameter_norm"] + [f"pivot[{k}]" for k in range(5)]
    np.testing.assert_array_equal(lam.to_numpy(), res.multipliers)
    link = res.to_dataframe("link")
    assert list(link.columns) == ["x", "y", "z", "vx", "vy", "vz", "omega_x", "omega_y", "omega_z",
                                  "e0", "e1", "e2", "e3"]
    np.testing.assert_array_equal(link[["x", "y", "z"]].to_numpy(), res.bodies["link"].position)
    # physics: the link turns about z only, and its speed is omega_z times the pivot distance 0.5 m
    np.testing.assert_allclose(link[["omega_x", "omega_y"]].to_numpy(), 0.0, atol=1e-9)
    np.testing.assert_allclose(np.hypot(link["vx"], link["vy"]), 0.5 * np.abs(link["omega_z"]), rtol=1e-6,
                               atol=1e-12)
