"""`Results` as an xarray Dataset or a pandas DataFrame (the optional extra ``flexmbs[data]``).

The dimensions and their names are those of the results file (`flexmbs.io.dimensions`):
``t`` is the coordinate of every history; a System run's bodies stack along ``body``
(``position (t, body, axis)``), its multipliers along ``constraint`` (the constraint names).
Each variable has an attribute ``units``.
"""
from __future__ import annotations

import importlib

import numpy as np

from .dimensions import RUN_DIMENSIONS, row_labels
from .store import UNITS

__all__ = ["results_to_xarray", "results_to_dataframe", "require"]

BODY_MOTION = ("position", "velocity", "angular_velocity")       # a body's 3-vectors, global components
AXIS = list(RUN_DIMENSIONS["axis"])


def require(module: str, needed_by: str):
    """Import the optional ``module`` for ``needed_by``, or raise an ImportError that says how to
    install it (``pip install "flexmbs[data]"``)."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(f"{needed_by} needs {module}, which is not installed ({err}); install the data "
                          f'extra: pip install "flexmbs[data]" (xarray, pandas, h5netcdf)') from None


def results_to_xarray(res):
    """The histories of ``res`` (`flexmbs.Results`) as an ``xarray.Dataset`` with coordinate ``t``.

    Variables (those the run has): every energy and work (t,) [J]; ``multipliers`` (t,
    constraint: `row_labels`); ``q``, ``v``, ``q_dot`` (t, coordinate); the bodies' ``position``, ``velocity``,
    ``angular_velocity`` (t, body, axis) and ``rotation`` (t, body, axis, body_axis); the joints'
    ``joint_position`` (t, joint, axis); a Model run's ``delta``, ``delta_dot`` (t, dof),
    ``displacement``, ``velocity`` (t, node, component), its frame's ``origin``, ``omega``
    (t, axis) and ``rotation`` (t, axis, body_axis), and its element data (t, element, ...).
    """
    xr = require("xarray", "`Results.to_xarray`")
    data = {k: (("t",), np.asarray(v), {"units": UNITS["energies"]}) for k, v in res.energies.items()}
    coords = {"t": ("t", np.asarray(res.t), {"units": "s"})}
    if res.multipliers is not None:
        data["multipliers"] = (("t", "constraint"), res.multipliers, {"units": UNITS["multipliers"]})
        coords["constraint"] = row_labels(res.constraint_names)
    for key in ("q", "v", "q_dot"):
        if getattr(res, key) is not None:
            data[key] = (("t", "coordinate"), getattr(res, key), {"units": UNITS[key]})
    if res.bodies:
        names = list(res.bodies)
        coords.update(body=names, axis=AXIS, body_axis=AXIS)
        for key in BODY_MOTION:
            data[key] = (("t", "body", "axis"), np.stack([getattr(res.bodies[b], key) for b in names], axis=1),
                         {"units": UNITS[key]})
        data["rotation"] = (("t", "body", "axis", "body_axis"),
                            np.stack([res.bodies[b].rotation for b in names], axis=1), {"units": "1"})
    if res.joints:
        coords.update(joint=list(res.joints), axis=AXIS)
        data["joint_position"] = (("t", "joint", "axis"), np.stack(list(res.joints.values()), axis=1),
                                  {"units": "m"})
    if res.q is None:
        data.update(_model_histories(res, coords))
    return xr.Dataset(data, coords=coords, attrs={"status": res.status, "message": res.message})


def _model_histories(res, coords: dict) -> dict:
    """A Model run's DOFs, nodal fields, frame motion and element data (see `results_to_xarray`)."""
    data = {}
    if res.delta.shape[1]:
        data.update(delta=(("t", "dof"), res.delta, {"units": UNITS["delta"]}),
                    delta_dot=(("t", "dof"), res.delta_dot, {"units": UNITS["delta_dot"]}))
    if res.displacement.shape[1]:
        coords["component"] = AXIS[:res.displacement.shape[2]]
        for key in ("displacement", "velocity"):
            data[key] = (("t", "node", "component"), getattr(res, key), {"units": UNITS[key]})
    if res.frame:
        coords.update(axis=AXIS, body_axis=AXIS)
        for key in ("origin", "origin_velocity", "omega"):
            data[key] = (("t", "axis"), res.frame[key], {"units": UNITS[key]})
        data["rotation"] = (("t", "axis", "body_axis"), res.frame["rotation"], {"units": "1"})
    for key, value in res.element_data.items():
        dims = ("t", "element") + (("voigt",) if value.ndim == 3 and value.shape[2] == 6 else ())
        data[key] = (dims + tuple(f"{key}_{k}" for k in range(len(dims), value.ndim)), value,
                     {"units": UNITS.get(key, "")})
    if any("voigt" in v[0] for v in data.values()):
        coords["voigt"] = list(RUN_DIMENSIONS["voigt"])
    return data


def results_to_dataframe(res, what: str = "energies"):
    """One table of scalar histories of ``res`` as a ``pandas.DataFrame`` indexed by ``t`` [s].

    Parameters
    ----------
    what : str
        "energies": the energies and works [J], one column each; "multipliers": one column per
        row of the constraints, named by `flexmbs.io.dimensions.row_labels` (a joint of 5 rows
        "pivot": "pivot[0]" .. "pivot[4]"); a body's name (System run): its motion, columns ``x, y, z``
        (position [m]), ``vx, vy, vz`` [m/s], ``omega_x, omega_y, omega_z`` [rad/s] (global
        components) and ``e0 .. e3`` where the body has Euler parameters.
    """
    pd = require("pandas", "`Results.to_dataframe`")
    choices = ["energies", "multipliers", *res.bodies]
    index = pd.Index(np.asarray(res.t), name="t")
    if what == "energies":
        return pd.DataFrame(dict(res.energies), index=index)
    if what == "multipliers":
        if res.multipliers is None:
            raise ValueError("`what` 'multipliers': these results hold none (only a System run by index3-alpha "
                             "that reached its end has them)")
        return pd.DataFrame(res.multipliers, index=index, columns=row_labels(res.constraint_names))
    if what not in res.bodies:
        raise ValueError(f"`what` must be one of {choices}, got {what!r}")
    return pd.DataFrame(_body_columns(res.bodies[what]), index=index)


def _body_columns(body) -> dict[str, np.ndarray]:
    """A `BodyResults`'s motion as named columns (see `results_to_dataframe`)."""
    columns = {}
    for prefix, key in (("", "position"), ("v", "velocity"), ("omega_", "angular_velocity")):
        columns.update({f"{prefix}{a}": getattr(body, key)[:, i] for i, a in enumerate(AXIS)})
    if body.euler_parameters is not None:
        columns.update({f"e{i}": body.euler_parameters[:, i] for i in range(4)})
    return columns
