"""Joint rows in INERTIAL axes at the centres of mass, for chapter 6's cut joints.

A joint's rows ``G_c X_c + G_p X_p = gamma`` (2.22) on the accelerations ``X = (a, eps)``
of its two bodies, written in inertial axes at the centres of mass (:func:`joint_rows`), and
a joint's acceleration from its bodies' (:func:`joint_acceleration`), (3.104)-(3.107).
:mod:`~mbcourse.kernels.loops` builds the cut joints' rows from them. (These are the rows
of the single-module ``mbcourse.compiled``'s Cartesian kernel; chapter 2's own kernel,
:mod:`~mbcourse.kernels.cartesian`, writes the chapter's rows in the joints' axes.)
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .common import OPTS, PRISMATIC, REVOLUTE, WELD
from .common import cross as _cross
from .common import matvec as _matvec

__all__ = ["joint_rows", "joint_acceleration"]


@nb.njit(**OPTS)
def _perpendicular(e, n1, n2):
    """Two unit vectors completing ``e`` to a right-handed orthonormal basis."""
    if abs(e[0]) < 0.9:
        t0, t1, t2 = 1.0, 0.0, 0.0
    else:
        t0, t1, t2 = 0.0, 1.0, 0.0
    n1[0] = e[1] * t2 - e[2] * t1
    n1[1] = e[2] * t0 - e[0] * t2
    n1[2] = e[0] * t1 - e[1] * t0
    s = np.sqrt(n1[0] ** 2 + n1[1] ** 2 + n1[2] ** 2)
    for k in range(3):
        n1[k] /= s
    _cross(e, n1, n2)


@nb.njit(**OPTS)
def _line_row(n, e, qj, p, c, om, vel, rc, ri, Gc, Gp, d, dd, h, tmp6):
    """A prismatic joint's row along a normal ``n`` of its axis: the child's joint point stays
    on the parent's axis line; writes the row's child and parent parts ``Gc``, ``Gp`` (6,)
    and returns its right-hand side."""
    for k in range(3):
        d[k] = e[k] * qj                                 # child's point - parent's point
    _cross(om[c], rc, h)
    _cross(om[p], ri, dd)
    for k in range(3):                                   # d' = v_c + w_c x rc - v_p - w_p x ri
        dd[k] = vel[c, k] + h[k] - vel[p, k] - dd[k]
    _cross(rc, n, h)
    for k in range(3):
        Gc[k] = n[k]
        Gc[3 + k] = h[k]
    _cross(ri, n, h)
    _cross(n, d, tmp6[0:3])
    for k in range(3):
        Gp[k] = -n[k]
        Gp[3 + k] = -h[k] + tmp6[k]
    gsum = 0.0
    _cross(om[p], n, h)                                  # w_p x n
    for k in range(3):
        gsum += 2.0 * h[k] * dd[k]
    _cross(om[p], h, tmp6[0:3])                          # w_p x (w_p x n)
    for k in range(3):
        gsum += tmp6[k] * d[k]
    _cross(om[c], rc, h)
    _cross(om[c], h, tmp6[0:3])
    for k in range(3):
        gsum += n[k] * tmp6[k]
    _cross(om[p], ri, h)
    _cross(om[p], h, tmp6[0:3])
    for k in range(3):
        gsum -= n[k] * tmp6[k]
    return -gsum


@nb.njit(**OPTS)
def joint_rows(kind, g, p, c, qj, A, om, vel, Gc, Gp, gam, v, tmp6):
    """A joint's constraint rows on the accelerations ``X = (a, eps)`` of its two bodies
    (inertial axes, centres of mass): ``Gc X_c + Gp X_p = gam``; returns the number of rows.

    Revolute: the joint points coincide (3) and the axis is kept (2 normals of the axis,
    fixed in the parent); prismatic: no relative rotation (3) and the child's point stays on
    the axis line (2); weld: both (6). ``g`` is the joint's row of the packed geometry and
    ``qj`` its coordinate (the slide's length)."""
    e, rc, ri, n1, n2, d, dd, h, w_rel = v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]
    _matvec(A[p], g[0:3], e)
    _matvec(A[c], g[15:18], rc)                          # child's centre -> joint point
    _matvec(A[p], g[12:15], ri)                          # parent's centre -> its joint point
    for row in range(6):
        gam[row] = 0.0
        for k in range(6):
            Gc[row, k] = 0.0
            Gp[row, k] = 0.0
    for k in range(3):
        w_rel[k] = om[c, k] - om[p, k]
    nrow = 0
    if kind != PRISMATIC:                                # the joint points coincide (3 rows)
        _cross(om[c], rc, h)
        _cross(om[c], h, dd)
        _cross(om[p], ri, h)
        _cross(om[p], h, d)
        for k in range(3):
            Gc[k, k] = 1.0
            Gp[k, k] = -1.0
            gam[k] = -dd[k] + d[k]
        # angular parts: e_k . (eps x rho) = eps . (rho x e_k), child +, parent -
        Gc[0, 4], Gc[0, 5] = rc[2], -rc[1]
        Gc[1, 3], Gc[1, 5] = -rc[2], rc[0]
        Gc[2, 3], Gc[2, 4] = rc[1], -rc[0]
        Gp[0, 4], Gp[0, 5] = -ri[2], ri[1]
        Gp[1, 3], Gp[1, 5] = ri[2], -ri[0]
        Gp[2, 3], Gp[2, 4] = -ri[1], ri[0]
        nrow = 3
    if kind != REVOLUTE:                                 # no relative rotation (3 rows)
        for k in range(3):
            Gc[nrow + k, 3 + k] = 1.0
            Gp[nrow + k, 3 + k] = -1.0
        nrow += 3
    if kind != WELD:                                     # two normals of the axis
        _perpendicular(e, n1, n2)
        for j in range(2):
            n = n1 if j == 0 else n2
            if kind == REVOLUTE:                         # keep the axis: n . (w_c - w_p) = 0
                _cross(om[p], n, h)
                for k in range(3):
                    Gc[nrow, 3 + k] = n[k]
                    Gp[nrow, 3 + k] = -n[k]
                gam[nrow] = -(h[0] * w_rel[0] + h[1] * w_rel[1] + h[2] * w_rel[2])
            else:                                        # the point stays on the line
                gam[nrow] = _line_row(n, e, qj, p, c, om, vel, rc, ri, Gc[nrow], Gp[nrow], d,
                                      dd, h, tmp6)
            nrow += 1
    return nrow


@nb.njit(**OPTS)
def joint_acceleration(kind, g, p, c, qj, vj, A, om, vel, X, v):
    """A joint's generalized acceleration from its bodies' accelerations ``X``:
    ``e . (eps_c - eps_p)`` for a revolute joint, the slide's relative acceleration along the
    axis for a prismatic one."""
    e, rc, ri, n1, n2, d, dd, h = v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
    _matvec(A[p], g[0:3], e)
    s = 0.0
    if kind == REVOLUTE:
        for k in range(3):
            s += e[k] * (X[c, 3 + k] - X[p, 3 + k])
        return s
    _matvec(A[c], g[15:18], rc)
    _matvec(A[p], g[12:15], ri)
    for k in range(3):
        d[k] = e[k] * qj
    _cross(om[c], rc, h)
    _cross(om[p], ri, dd)
    for k in range(3):
        dd[k] = vel[c, k] + h[k] - vel[p, k] - dd[k]          # d'
    # d'' = a_c + eps_c x rc + w_c x (w_c x rc) - (the same for p, ri)
    _cross(X[c, 3:], rc, h)
    for k in range(3):
        n1[k] = X[c, k] + h[k]
    _cross(om[c], rc, h)
    _cross(om[c], h, n2)
    for k in range(3):
        n1[k] += n2[k]
    _cross(X[p, 3:], ri, h)
    for k in range(3):
        n1[k] -= X[p, k] + h[k]
    _cross(om[p], ri, h)
    _cross(om[p], h, n2)
    for k in range(3):
        n1[k] -= n2[k]
    # qdd = e . (d'' - eps_p x d - w_p x d' - (w_p x e) qd)
    _cross(X[p, 3:], d, h)
    for k in range(3):
        n1[k] -= h[k]
    _cross(om[p], dd, h)
    for k in range(3):
        n1[k] -= h[k]
    _cross(om[p], e, h)
    for k in range(3):
        s += e[k] * (n1[k] - h[k] * vj)
    return s
