"""Bad input to `ImportedBody.model` (an imported body as a Model): each row is (what is given, the
message it now prints)."""
import numpy as np
import pytest
from scipy import sparse

from flexmbs.io.fe_import import ImportedBody
from flexmbs.assembly.assembler import dense_array

# two nodes, unit scalar mass and a spring between them along every axis
MS = sparse.csr_array(np.array([[2.0, 1.0], [1.0, 2.0]]))
BODY = ImportedBody(sparse.csr_array(sparse.kron(MS, np.eye(3))),
                    sparse.csr_array(sparse.kron(np.array([[1.0, -1.0], [-1.0, 1.0]]), np.eye(3))),
                    np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]), np.array([1, 2]), ("abaqus-labels",) * 2)

ROWS = [
    (lambda: BODY.model(fixed=[([0], "theta_x")]), "unknown DOF 'theta_x' for NodeTranslations; valid: ['u', 'v', 'w'] or 'all'"),
    (lambda: BODY.model(fixed=[([0, 1], "all")]), "`fixed` removes every DOF: nothing is left to move"),
    (lambda: BODY.model(node_sets={"tip": [2]}), "`node_sets['tip']` must hold row indices of the imported nodes, 0..1, got 2"),
    (lambda: BODY.model(fixed=[("root", "all")]), "no node set named 'root'; the mesh has no node sets"),
    (lambda: BODY.model(damping=(0.1, -1.0)), "`damping` must be (alpha, beta) >= 0, got (0.1, -1.0)"),
]


@pytest.mark.parametrize("call, message", ROWS, ids=[m[:40] for _, m in ROWS])
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError) as err:
        call()
    assert message in str(err.value)


def test_a_good_model_has_the_imported_matrices():
    md = BODY.model(fixed=[([0], "all")], node_sets={"tip": [1]})
    assert md.n_dofs == 3 and np.allclose(dense_array(md.M), 2.0 * np.eye(3)) and np.allclose(dense_array(md.K), np.eye(3))
    assert md.mass == pytest.approx(6.0)                        # 1^T m_s 1
    assert np.allclose(md.interface_translation("tip")[0], [1.0, 0.0, 0.0])
