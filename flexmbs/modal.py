"""Steady state and small vibrations of a body on a frame frozen at time t.

Linearised about the frame state at t (omega, eps constant), the free motion obeys

.. code:: text

    [m] delta'' + [c(omega)] delta' + K_eff delta = 0,      K_eff = [k] + K_geo + [k(omega)] + [k(eps)]

Without the gyroscopic matrix (or when it vanishes) and with a symmetric K_eff this is
the symmetric problem K_eff phi = omega_n^2 [m] phi.  Otherwise (gyroscopic terms, or the
skew [k(eps)] of an angular acceleration) it is the state-space problem
[[0, I], [-K_eff, -c]] z = lambda [[I, 0], [0, m]] z; its eigenvalues are +-i omega_n when
K_eff is symmetric positive definite, and complex with a real part otherwise.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
from scipy import sparse

from .formulations import Lagrange
from .model import Model

__all__ = ["static_solution", "natural_frequencies", "effective_stiffness"]


def effective_stiffness(model: Model, t: float = 0.0) -> sparse.csr_array:
    """K_eff(t) = [k] + K_geo(t) + [k(omega)] + [k(eps)] on the free DOFs."""
    return sparse.csr_array(model.frame_stiffness(t))


def static_solution(model: Model, t: float = 0.0) -> np.ndarray:
    """delta with K_eff delta = f(t, 0, 0): equilibrium in the frame held at its state at t.

    For a constant spin this is the steady centrifugal deformation (with centrifugal
    softening [k(omega)]); for a translation it is the deformation under the inertia load.
    """
    f0 = Lagrange(model).generalized_force(t, np.zeros(model.n_dofs), np.zeros(model.n_dofs))
    from scipy.sparse.linalg import spsolve
    return np.atleast_1d(spsolve(sparse.csc_matrix(effective_stiffness(model, t)), f0))


def natural_frequencies(model: Model, t: float = 0.0, n_modes: int = 6, gyroscopic: bool = True,
                        dense_below: int = 1500):
    """Natural circular frequencies [rad/s] (ascending) and mode shapes (n, n_modes).

    Frequencies of modes that are unstable in the frozen frame (K_eff not positive
    definite, e.g. above a divergence speed) come out as negative numbers -sqrt(-omega^2)
    in the symmetric problem, and are reported by their growth rate in the gyroscopic one.
    """
    n = model.n_dofs
    if not (1 <= n_modes <= n):
        raise ValueError(f"`n_modes` must be between 1 and {n}, got {n_modes!r}")
    K = effective_stiffness(model, t)
    C = model.inv.c(model.frame(t).omega)
    has_gyro = gyroscopic and C.nnz > 0 and abs(C).max() > 0
    asymmetric = abs(K - K.T).max() > 1e-12 * abs(K).max() if K.nnz else False   # [k(eps)] is skew
    if asymmetric and not has_gyro:
        C = sparse.csr_array(C.shape)
    if not (has_gyro or asymmetric):
        if n < dense_below:
            w2, phi = sla.eigh(K.toarray(), model.M.toarray(), subset_by_index=(0, n_modes - 1))
        else:
            from scipy.sparse.linalg import eigsh
            w2, phi = eigsh(sparse.csc_matrix(K), k=n_modes, M=sparse.csc_matrix(model.M), sigma=0.0)
            order = np.argsort(w2)
            w2, phi = w2[order], phi[:, order]
        return np.sign(w2) * np.sqrt(np.abs(w2)), phi
    if 2 * n > 2 * dense_below:
        raise NotImplementedError("gyroscopic modal analysis is dense; use fewer DOFs or gyroscopic=False")
    I = np.eye(n)
    A = np.block([[np.zeros((n, n)), I], [-K.toarray(), -C.toarray()]])
    B = np.block([[I, np.zeros((n, n))], [np.zeros((n, n)), model.M.toarray()]])
    lam, Z = sla.eig(A, B)
    keep = lam.imag >= -1e-9 * np.abs(lam).max()
    lam, Z = lam[keep], Z[:n, keep]
    freq = np.where(np.abs(lam.imag) > np.abs(lam.real), lam.imag, -np.abs(lam.real))
    order = np.argsort(np.abs(freq))
    freq, Z = freq[order][:n_modes], Z[:, order][:, :n_modes]
    return freq, Z
