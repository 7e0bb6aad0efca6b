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

from .assembly.assembler import dense_array, is_sparse
from .formulations import Lagrange
from .lazy import LazyModule
from .model import Model, as_operator

sparse = LazyModule("scipy.sparse")
sla = LazyModule("scipy.linalg")

__all__ = ["static_solution", "natural_frequencies", "effective_stiffness", "generalized_eigh"]


def effective_stiffness(model: Model, t: float = 0.0):
    """K_eff(t) = [k] + K_geo(t) + [k(omega)] + [k(eps)] on the free DOFs: dense for a dense model
    (``model.dense``), else CSR."""
    return as_operator(model.frame_stiffness(t), model.dense)


def generalized_eigh(K: np.ndarray, M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(w2, Phi): all solutions of the symmetric generalised eigenproblem K phi = w2 M phi for a
    symmetric K and a symmetric positive definite M, w2 ascending, Phi^T M Phi = I, with numpy
    alone (LAPACK's sygv does the same steps).  With the Cholesky factor M = L L^T:

    .. code:: text

        (L^-1 K L^-T) y = w2 y,      phi = L^-T y,      A = L^-1 K L^-T symmetric (numpy.linalg.eigh)

    and y^T y = I gives phi^T M phi = y^T L^-1 (L L^T) L^-T y = I.
    """
    try:
        L = np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        raise ValueError("the mass matrix is not positive definite (a DOF without mass?): the modes "
                         "K phi = w^2 M phi need M > 0") from None
    B = np.linalg.solve(L, K)                         # L^-1 K
    A = np.linalg.solve(L, B.T).T                     # L^-1 K L^-T (K symmetric)
    w2, Y = np.linalg.eigh(0.5 * (A + A.T))
    return w2, np.linalg.solve(L.T, Y)


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
    has_gyro = gyroscopic and C.size > 0 and abs(C).max() > 0             # sparse: size = nnz
    asymmetric = abs(K - K.T).max() > 1e-12 * abs(K).max() if K.size else False   # [k(eps)] is skew
    if asymmetric and not has_gyro:
        C = np.zeros(C.shape)
    if not (has_gyro or asymmetric):
        if not is_sparse(K):                                          # a dense model: numpy alone
            w2, phi = generalized_eigh(K, dense_array(model.M))
            w2, phi = w2[:n_modes], phi[:, :n_modes]
        elif n < dense_below:
            w2, phi = sla.eigh(K.toarray(), model.M.toarray(), subset_by_index=(0, n_modes - 1))
        else:
            from scipy.sparse.linalg import eigsh

            from .arrays import lanczos_start
            w2, phi = eigsh(sparse.csc_matrix(K), k=n_modes, M=sparse.csc_matrix(model.M), sigma=0.0,
                            v0=lanczos_start(n))
            order = np.argsort(w2)
            w2, phi = w2[order], phi[:, order]
        return np.sign(w2) * np.sqrt(np.abs(w2)), phi
    if 2 * n > 2 * dense_below:
        raise NotImplementedError("gyroscopic modal analysis is dense; use fewer DOFs or gyroscopic=False")
    I = np.eye(n)
    A = np.block([[np.zeros((n, n)), I], [-dense_array(K), -dense_array(C)]])
    B = np.block([[I, np.zeros((n, n))], [np.zeros((n, n)), dense_array(model.M)]])
    lam, Z = sla.eig(A, B)
    keep = lam.imag >= -1e-9 * np.abs(lam).max()
    lam, Z = lam[keep], Z[:n, keep]
    freq = np.where(np.abs(lam.imag) > np.abs(lam.real), lam.imag, -np.abs(lam.real))
    order = np.argsort(np.abs(freq))
    freq, Z = freq[order][:n_modes], Z[:, order][:, :n_modes]
    return freq, Z
