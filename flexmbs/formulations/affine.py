"""The second-order equations of a small (dense) model as constant matrices times time coefficients.

Lagrange's equations (`flexmbs.formulations.lagrange`) are linear in (delta, delta') with
coefficients that depend on t only through the frame state and the load factors:

.. code:: text

    M delta'' = g(t) - K(t) delta - C(t) delta'

    K(t) = [k] + sum_k c_k(t) K_geo,k + sum_ab (tilde(omega)^2)_ab S_ab + sum_i eps_i G_i
    C(t) = C + 2 sum_i omega_i G_i
    g(t) = m_O^T (R^T g - a_O,local) - sum_ab (tilde(omega)^2)_ab d_ab - sum_i eps_i g_i + sum_j f_j(t) Q_j

(the v_O terms cancel, docs/theory.md; c_k(t) are `Model.geometric_coefficients`).  So
K(t) = sum_i gamma_i(t) K_i, C(t) = sum_i gamma_i(t) C_i and g(t) = sum_i gamma_i(t) g_i
with constant matrices and one coefficient vector gamma(t) per time.  `AffineSecondOrder`
keeps the matrices and computes gamma for many times at once (`FrameMotion.states`), so that
an implicit step costs a few small matrix products and one n x n LU, with no Python work per
element or per term.  Equal to `Lagrange.generalized_force`, `Model.frame_stiffness` and
`Model.frame_damping` to round-off (tests/test_affine.py).
"""
from __future__ import annotations

import numpy as np

from ._common import tilde

__all__ = ["AffineSecondOrder"]

_AB = [(a, b) for a in range(3) for b in range(3)]


class AffineSecondOrder:
    """K(t), C(t), g(t) of a dense model as combinations of constant matrices (module docstring).

    Attributes
    ----------
    M : ndarray (n, n)
    basis : ndarray (n_gamma, n, n + n + 1)
        For each coefficient gamma_i the block row [K_i, C_i, g_i] (g_i as a column), so that
        sum_i gamma_i basis[i] = [K(t), C(t), g(t)].
    """

    def __init__(self, model):
        if not model.dense:
            raise ValueError("AffineSecondOrder needs a dense (small) model")
        self.model = md = model
        n = md.n_dofs
        self.n = n
        zero = np.zeros((n, n))
        blocks = []                                      # (K_i, C_i, g_i)
        C0 = zero if md.C_op is None else np.asarray(md.C_op)
        blocks.append((np.asarray(md.K_op), C0, np.zeros(n)))                       # 1
        Kg = md.geometric_stiffness_operators
        self._n_geo = len(Kg)
        blocks += [(np.asarray(K), zero, np.zeros(n)) for K in Kg]                  # c_k
        S = {k: np.asarray(v) for k, v in md.S_op.items()}
        blocks += [(S.get(ab, zero), zero, -md.d[ab]) for ab in _AB]               # (W W)_ab
        G = [zero if Gi is None else np.asarray(Gi) for Gi in md.G_op]
        blocks += [(G[i], zero, -md.g[i]) for i in range(3)]                         # eps_i
        blocks += [(zero, 2.0 * G[i], np.zeros(n)) for i in range(3)]               # omega_i
        blocks += [(zero, zero, md.m_O[i]) for i in range(3)]                        # (R^T g - a_O)_i
        blocks += [(zero, zero, md.Q[:, j]) for j in range(md.Q.shape[1])]          # f_j
        self.M = np.asarray(md.M_op)
        self.basis = np.stack([np.concatenate([K, C, g[:, None]], axis=1) for K, C, g in blocks])

    def coefficients(self, t) -> np.ndarray:
        """gamma (N, n_gamma) at the times ``t`` (N,)."""
        md = self.model
        t = np.atleast_1d(np.asarray(t, dtype=float))
        fs = md.motion.states(t)
        N = len(t)
        W = np.stack([tilde(w) for w in fs.omega])                   # (N, 3, 3)
        WW = W @ W
        E = np.stack([tilde(e) for e in fs.eps])
        alpha = np.einsum("nji,nj->ni", fs.R, fs.a_O - md.gravity)  # R^T (a_O - g)
        f = self.model.load_factor_history(t)
        geo = np.empty((N, self._n_geo))
        A = E + WW
        for k, key in enumerate(md.geometric_stiffness_keys):
            geo[:, k] = (A[:, key[1], key[2]] if key[0] == "A" else alpha[:, key[1]] if key[0] == "alpha"
                         else f[:, key[1]])
        return np.concatenate([np.ones((N, 1)), geo, WW.reshape(N, 9), fs.eps, fs.omega, -alpha, f], axis=1)

    def combine(self, gamma: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(K, C, g) for one coefficient vector gamma (n_gamma,)."""
        n = self.n
        KCg = np.tensordot(gamma, self.basis, axes=1)
        return KCg[:, :n], KCg[:, n:2 * n], KCg[:, 2 * n]
