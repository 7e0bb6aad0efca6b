"""The slider-crank's solid rod with bearing B rigid (cases/slider_crank.py --set interface=rigid): its
reduced basis moves the bearing face rigidly and the rod's body takes the rigid marker there.  (The full
two-revolution peaks, 1.86779 mm rigid and 1.86879 mm averaging, are measured in docs/coupled.md.)"""
import sys
from pathlib import Path

import numpy as np
import pytest

from flexmbs.bodies import Interface

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cases"))
import slider_crank as sc  # noqa: E402


@pytest.mark.slow
def test_rigid_bearing_b_is_built_into_the_rods_basis():
    solid = sc.solid_rod(2, 2e11, 7870.0, 0.3, rigid_bearing=True)
    model = solid["model"]
    assert solid["summary"]["bearing_B"] == "rigid"
    assert model.rigid_interfaces == (frozenset(model.mesh.nodes("bearing_B").tolist()),)
    _, dofs, R = model.interface_rigid_modes("bearing_B")
    on_face = model.Phi[dofs]
    np.testing.assert_allclose(R @ np.linalg.lstsq(R, on_face, rcond=None)[0], on_face,
                               atol=1e-10 * np.abs(on_face).max())
    system, body, _ = sc.build_coupled(rod_model=model, coupled_stiffening="modal-stress",
                                       rod_ends=(Interface("bearing_A"), Interface("bearing_B", rigid=True)))
    assert body.n_e == model.n_dofs and system is not None

