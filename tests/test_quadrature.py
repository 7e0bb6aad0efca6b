"""Quadrature rules: exactness on monomials, sharpness, positivity, bad input."""
from itertools import product
from math import factorial

import numpy as np
import pytest

from flexmbs.quadrature import CELL_DIM, CELL_MEASURE, gauss_legendre, quadrature

DEGREES = range(9)


def exponents(dim: int, degree: int) -> np.ndarray:
    """All exponent tuples of total degree <= ``degree``, shape (n_monomials, dim)."""
    return np.array([e for e in product(range(degree + 1), repeat=dim) if sum(e) <= degree])


def exact_integral(cell: str, e: np.ndarray) -> np.ndarray:
    """Integral of prod x_i^e_i over the reference cell, for each row of ``e`` (n, dim)."""
    if cell in ("line", "quad", "hexahedron"):   # [-1, 1]^d: product of 1D integrals
        return np.prod(np.where(e % 2 == 0, 2.0 / (e + 1), 0.0), axis=1)
    # unit simplex: a! b! (c!) / (a + b (+ c) + d)!
    return np.array([np.prod([factorial(a) for a in row]) / factorial(sum(row) + len(row))
                     for row in e])


@pytest.mark.parametrize("cell", sorted(CELL_DIM))
@pytest.mark.parametrize("degree", DEGREES)
def test_exact_for_monomials_up_to_degree(cell, degree):
    xi, w = quadrature(cell, degree)
    e = exponents(CELL_DIM[cell], degree)
    approx = np.prod(xi[None, :, :] ** e[:, None, :], axis=2) @ w
    exact = exact_integral(cell, e)
    err = np.abs(approx - exact) / (1e-12 * np.abs(exact) + 1e-15)   # > 1 fails
    worst = int(np.argmax(err))
    assert err[worst] <= 1, (f"{cell}, degree {degree}: monomial {e[worst]}: "
                             f"{approx[worst]} != {exact[worst]}")


@pytest.mark.parametrize("degree", DEGREES)
def test_line_rule_degree_is_sharp(degree):
    # n Gauss points are exact to degree 2n - 1 and fail on x^(2n).  For odd `degree`
    # 2n - 1 == degree, so x^(degree + 1) already fails.  For even `degree` the symmetric
    # rule is also exact for the odd x^(degree + 1) and the first failure is x^(degree + 2).
    xi, w = gauss_legendre(degree)
    first_fail = degree + 1 if degree % 2 else degree + 2
    assert len(xi) == first_fail // 2
    for k in range(first_fail):
        assert abs(w @ xi**k - exact_integral("line", np.array([[k]]))[0]) < 1e-13
    exact = exact_integral("line", np.array([[first_fail]]))[0]
    assert abs(w @ xi**first_fail - exact) > 1e-3 * exact


@pytest.mark.parametrize("cell", sorted(CELL_DIM))
@pytest.mark.parametrize("degree", DEGREES)
def test_weights_positive_and_points_inside(cell, degree):
    xi, w = quadrature(cell, degree)
    assert xi.shape == (len(w), CELL_DIM[cell]) and w.ndim == 1
    assert np.all(w > 0)
    assert np.isclose(w.sum(), CELL_MEASURE[cell], rtol=1e-14)
    if cell in ("line", "quad", "hexahedron"):
        assert np.all(np.abs(xi) < 1)
    else:
        assert np.all(xi > 0) and np.all(xi.sum(axis=1) < 1)


@pytest.mark.parametrize("args, match", [
    (("pentagon", 2), "`cell` must be one of"),
    (("line", -1), "`degree` must be a non-negative integer"),
    (("triangle", 2.5), "`degree` must be a non-negative integer"),
    (("tetra", "2"), "`degree` must be a non-negative integer"),
])
def test_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        quadrature(*args)


@pytest.mark.parametrize("n", range(1, 13))
def test_tabulated_gauss_legendre_rules_are_numpys_and_exact(n):
    """`gauss_legendre_points` (a table up to 10 points, numpy's leggauss beyond): the rule of
    leggauss to rounding, points ascending, and exact to degree 2n - 1 (closed form: the integral
    of x^k over [-1, 1] is 2 / (k + 1) for even k, 0 for odd k)."""
    from flexmbs.quadrature import gauss_legendre_points
    x, w = gauss_legendre_points(n)
    x_np, w_np = np.polynomial.legendre.leggauss(n)
    np.testing.assert_allclose(x, x_np, rtol=0, atol=2e-15)
    np.testing.assert_allclose(w, w_np, rtol=0, atol=2e-15)
    assert np.all(np.diff(x) > 0)
    for k in range(2 * n):
        exact = 2.0 / (k + 1) if k % 2 == 0 else 0.0
        assert abs(w @ x**k - exact) < 1e-14, k


def test_gauss_legendre_does_not_import_numpy_polynomial():
    import subprocess
    import sys
    code = ("import sys\nfrom flexmbs.quadrature import gauss_legendre\ngauss_legendre(9)\n"
            "print('numpy.polynomial' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.split()[-1] == "False", proc.stderr
