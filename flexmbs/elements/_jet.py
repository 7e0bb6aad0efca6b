"""Second-order forward-mode differentiation of scalar expressions, batched.

A `Jet` carries a value v (n,), its gradient g (n, m) and Hessian H (n, m, m) with respect to
m independent variables, for n independent evaluations (e.g. the elements of a mesh).  The
arithmetic applies the chain rule exactly:

.. code:: text

    (u v)   = u v,   g = u g_v + v g_u,   H = u H_v + v H_u + g_u g_v^T + g_v g_u^T
    phi(u)  = phi,   g = phi' g_u,        H = phi'' g_u g_u^T + phi' H_u

so a strain energy written with these operations gives its exact internal force (gradient) and
tangent stiffness (Hessian), consistent to round-off.  Used by the spatial corotational beam's
tangent stiffness, whose rotation parametrisation makes hand-written second derivatives long (its force
and inertia terms, first derivatives, are written out in `corotational3d`).
"""
from __future__ import annotations

import numpy as np

__all__ = ["Jet", "variables", "sqrt", "dot", "cross"]


def _outer(a, b):
    return a[:, :, None] * b[:, None, :]


class Jet:
    """Value, gradient and Hessian of a scalar for n evaluations (see the module docstring)."""

    __slots__ = ("v", "g", "H")
    __array_ufunc__ = None            # numpy arrays defer to Jet's reflected operators

    def __init__(self, v, g, H):
        self.v, self.g, self.H = v, g, H

    # -- arithmetic with Jets and constants (scalars or arrays (n,)) ---------------------------
    def __add__(self, o):
        if isinstance(o, Jet):
            return Jet(self.v + o.v, self.g + o.g, self.H + o.H)
        return Jet(self.v + o, self.g, self.H)

    __radd__ = __add__

    def __neg__(self):
        return Jet(-self.v, -self.g, -self.H)

    def __sub__(self, o):
        return self + (-o)

    def __rsub__(self, o):
        return (-self) + o

    def __mul__(self, o):
        if isinstance(o, Jet):
            g = self.v[:, None] * o.g + o.v[:, None] * self.g
            gg = _outer(self.g, o.g)
            return Jet(self.v * o.v, g,
                       self.v[:, None, None] * o.H + o.v[:, None, None] * self.H + gg + np.swapaxes(gg, 1, 2))
        c = np.asarray(o)
        return Jet(self.v * c, self.g * c[..., None] if c.ndim else self.g * c,
                   self.H * c[..., None, None] if c.ndim else self.H * c)

    __rmul__ = __mul__

    def apply(self, f, df, d2f):
        """phi(self) given phi, phi', phi'' at self.v (arrays (n,))."""
        return Jet(f, df[:, None] * self.g, d2f[:, None, None] * _outer(self.g, self.g) + df[:, None, None] * self.H)

    def reciprocal(self):
        r = 1.0 / self.v
        return self.apply(r, -r * r, 2.0 * r * r * r)

    def __truediv__(self, o):
        if isinstance(o, Jet):
            return self * o.reciprocal()
        return self * (1.0 / np.asarray(o))

    def __rtruediv__(self, o):
        return self.reciprocal() * o


def variables(values) -> list[Jet]:
    """The m independent variables of values (n, m), each a Jet with a unit gradient and a zero
    Hessian."""
    values = np.asarray(values, dtype=float)
    n, m = values.shape
    eye = np.eye(m)
    zero = np.zeros((n, m, m))
    return [Jet(values[:, j], np.broadcast_to(eye[j], (n, m)).copy(), zero) for j in range(m)]


def sqrt(u):
    if not isinstance(u, Jet):
        return np.sqrt(u)
    r = np.sqrt(u.v)
    return u.apply(r, 0.5 / r, -0.25 / (r * u.v))


def dot(a, b):
    """a . b of two 3-vectors (sequences of Jets or numbers)."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def cross(a, b):
    """a x b of two 3-vectors (sequences of Jets or numbers)."""
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
