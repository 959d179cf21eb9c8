"""Chapter 2's simulation in absolute coordinates, compiled: the right-hand side ``dy/dt`` of
:func:`mbcourse.cartesian.simulate` (the index-1 DAE of Yudintsev's section 2).

The same equations as :func:`mbcourse.cartesian.rhs`, for one state ``y`` (the moving
bodies' positions and quaternions or planar angles, then their velocities):

* the bodies' states from ``y`` (the orientation from the normalized quaternion, or a turn
  about ``z`` in the planar form, each body at its constant height);
* ``M_k`` and ``F_k`` (2.5)-(2.9): gravity, the constant loads and the spring-dampers (by
  the recursions' helpers, :mod:`.common`), the gyroscopic moment in body axes; the planar
  form keeps ``(F_x, F_y, M_z)`` and ``(m, m, J_zz)``;
* every joint's rows (2.22) from its packed description (chapter 2's kernel
  :func:`~mbcourse.kernels.cartesian.joint_rows` in space; the point-on-line rows
  (2.33)-(2.43) and the relative-rotation row (2.32) in the plane) with their position
  residuals ``g``, and Baumgarte's ``b - 2 alpha Q dX - beta^2 g``;
* ``M ddX = F + Q^T lam``, ``Q ddX = b`` by the Schur complement ``Q M^-1 Q^T lam = b -
  Q M^-1 F`` (2.50) (``M`` is block diagonal; the complement's Cholesky factor, so closed
  loops need no tree order), then ``ddX = M^-1 (F + Q^T lam)``;
* ``dy``: the velocities, ``dquat/dt = W(quat) w`` with the pull back to the unit sphere,
  and ``ddX``.

A prescribed motion of the base comes in ``body``'s row 0
(:func:`mbcourse.kernels.with_base_motion`); its acceleration moves to the right-hand side
of the rows on it. The kernel declines (returns False) a complement that is singular or
nearly so (redundant rows, :data:`PIVOT_TOL`, which the NumPy route handles by its
``redundant`` option) and a planar load that leaves the plane; the forces that need the
generalized state (``tau``, joint springs, control laws, loads given as callables) are the
NumPy route's.

Examples
--------
>>> import numpy as np, mbcourse as mb
>>> from mbcourse.kernels import pack_absolute
>>> m = mb.models.double_pendulum()
>>> y = mb.cartesian.to_absolute(m, [0.3, -0.5], [0.2, 0.7])        # the planar form
>>> data = pack_absolute(m, True, mb.cartesian.prepare(m).z_levels)
>>> dy, power = np.empty_like(y), np.zeros(1)
>>> absolute_rhs(*data, np.array([0.0, 0.0, 1.0]), y, dy, power)  # no Baumgarte terms
True
>>> bool(np.allclose(dy, mb.cartesian.rhs(m, 0.0, y, baumgarte=None, compiled=False)))
True
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .cartesian import joint_rows, row_residual, row_workspace
from .common import (B_BASE, B_MOVING, B_SPRINGS, G_ROWS, I_ROWS, OPTS, R_D, R_N, R_RHO,
                     R_TYPE, ROTATION, ROW_WIDTH, body_terms, cholesky_factor, damping_power,
                     finite, lower_solve, mtv3, mv3, release, spring_wrenches, upper_solve)

__all__ = ["PIVOT_TOL", "absolute_rhs"]

#: The Schur complement's Cholesky pivots must keep this share of their diagonal entries:
#: a smaller one means rows that are (nearly) dependent, and the kernel declines (the
#: NumPy route then raises or takes least squares, by its ``redundant`` option). Exactly
#: redundant rows leave pivots of order 1e-16, a state that drifts 1e-6 off such a manifold
#: about 1e-12; an ordinary mechanism's are of order one.
PIVOT_TOL = 1e-8


@nb.njit(**OPTS)
def _base(body, r, A, v, w, ddX0):
    """The base (row 0): at rest at the origin, or its prescribed motion from ``body``'s row
    0 (:data:`.common.B_BASE`), with its accelerations ``ddX0`` (the angular one in its own
    axes). (A model whose base moves is never in the planar form:
    :func:`mbcourse.cartesian.resolve_planar`.)"""
    if body[0, B_MOVING] == 0.0:
        for a in range(3):
            A[0, a, a] = 1.0
        return
    for a in range(3):
        for c in range(3):
            A[0, a, c] = body[0, B_BASE + 3 * a + c]
        r[0, a], v[0, a] = body[0, B_BASE + 18 + a], body[0, B_BASE + 21 + a]
        ddX0[a] = body[0, B_BASE + 12 + a]
    mtv3(A[0], body[0, B_BASE + 9:B_BASE + 12], w[0])
    mtv3(A[0], body[0, B_BASE + 15:B_BASE + 18], ddX0[3:])


@nb.njit(**OPTS)
def _unpack(y, planar, zlev, r, A, v, w, phi):
    """The moving bodies' centres ``r``, orientations ``A``, velocities ``v`` (inertial
    axes) and angular velocities ``w`` (body axes) from ``y`` (rows 1 ...)."""
    n1 = r.shape[0]
    n = n1 - 1
    for k in range(1, n1):
        if planar:
            at, vt = 3 * (k - 1), 3 * n + 3 * (k - 1)
            c, s = np.cos(y[at + 2]), np.sin(y[at + 2])
            phi[k] = y[at + 2]
            r[k, 0], r[k, 1], r[k, 2] = y[at], y[at + 1], zlev[k]
            A[k, 0, 0], A[k, 0, 1], A[k, 1, 0], A[k, 1, 1], A[k, 2, 2] = c, -s, s, c, 1.0
            v[k, 0], v[k, 1], v[k, 2] = y[vt], y[vt + 1], 0.0
            w[k, 0], w[k, 1], w[k, 2] = 0.0, 0.0, y[vt + 2]
            continue
        at, vt = 7 * (k - 1), 7 * n + 6 * (k - 1)
        qw, qx, qy, qz = y[at + 3], y[at + 4], y[at + 5], y[at + 6]
        s = 2.0 / (qw * qw + qx * qx + qy * qy + qz * qz)     # the normalized quaternion
        A[k, 0, 0] = 1.0 - s * (qy * qy + qz * qz)
        A[k, 0, 1] = s * (qx * qy - qw * qz)
        A[k, 0, 2] = s * (qx * qz + qw * qy)
        A[k, 1, 0] = s * (qx * qy + qw * qz)
        A[k, 1, 1] = 1.0 - s * (qx * qx + qz * qz)
        A[k, 1, 2] = s * (qy * qz - qw * qx)
        A[k, 2, 0] = s * (qx * qz - qw * qy)
        A[k, 2, 1] = s * (qy * qz + qw * qx)
        A[k, 2, 2] = 1.0 - s * (qx * qx + qy * qy)
        for a in range(3):
            r[k, a], v[k, a], w[k, a] = y[at + a], y[vt + a], y[vt + 3 + a]


# ------------------------------------------------------------------ the planar rows
@nb.njit(**OPTS)
def _planar_row(kind, g, i, j, r, A, v, w, phi, Qi, Qj):
    """A planar row (2.32)-(2.43): ``Q_i``, ``Q_j`` (3,) written, ``(b, residual)``
    returned. A point of ``j`` on a line of ``i`` (normal ``n``, offset ``d``): ``Q_i =
    (-A_i n, -(Omega rho_i) . n)``, ``Q_j = (A_i n, (A_i^T Omega A_j rho_j) . n)``, or the
    relative rotation ``phi_j - phi_i = c0`` (wrapped to (-pi, pi])."""
    if kind == ROTATION:
        Qi[0], Qi[1], Qi[2] = 0.0, 0.0, -1.0
        Qj[0], Qj[1], Qj[2] = 0.0, 0.0, 1.0
        e = phi[j] - phi[i] - g[R_D] + np.pi
        return 0.0, e - 2.0 * np.pi * np.floor(e / (2.0 * np.pi)) - np.pi
    ci, si, cj, sj = A[i, 0, 0], A[i, 1, 0], A[j, 0, 0], A[j, 1, 0]
    n0, n1, p0, p1 = g[R_N], g[R_N + 1], g[R_RHO], g[R_RHO + 1]
    ar0, ar1 = cj * p0 - sj * p1, sj * p0 + cj * p1          # A_j rho_j
    d0, d1 = ar0 + r[j, 0] - r[i, 0], ar1 + r[j, 1] - r[i, 1]
    ri0, ri1 = ci * d0 + si * d1, -si * d0 + ci * d1          # rho_i = A_i^T rho0
    na0, na1 = ci * n0 - si * n1, si * n0 + ci * n1           # A_i n
    Qi[0], Qi[1], Qi[2] = -na0, -na1, -(-ri1 * n0 + ri0 * n1)
    o0, o1 = -ar1, ar0                                        # Omega A_j rho_j
    Qj[0], Qj[1], Qj[2] = na0, na1, (ci * o0 + si * o1) * n0 + (-si * o0 + ci * o1) * n1
    wi, wj = w[i, 2], w[j, 2]
    dx0, dx1 = v[j, 0] - v[i, 0], v[j, 1] - v[i, 1]
    e0, e1 = wj * o0 + dx0, wj * o1 + dx1                     # drho0
    dr0 = wi * ri1 + ci * e0 + si * e1                        # drho_i = -w_i Omega rho_i
    dr1 = -wi * ri0 - si * e0 + ci * e1                       #   + A_i^T drho0
    t1 = -wi * ((ci * -dx1 + si * dx0) * n0 + (-si * -dx1 + ci * dx0) * n1)
    t2 = -wi * (-dr1 * n0 + dr0 * n1)
    t3 = wj * (-(wj - wi)) * ((ci * ar0 + si * ar1) * n0 + (-si * ar0 + ci * ar1) * n1)
    return -(t1 + t2 + t3), ri0 * n0 + ri1 * n1 - g[R_D]


# ------------------------------------------------------------------ the equations
@nb.njit(**OPTS)
def _rows(rints, rgeo, planar, gains, r, A, v, w, phi, ddX0, cw, Q, bc, body_of, t):
    """Every row as ``Q`` (nc, 2, dof) on its two bodies ``body_of`` (nc, 2) and ``bc``
    (nc,) with Baumgarte's terms and the base's known acceleration ``ddX0`` moved to the
    right-hand side; returns the number of rows."""
    alpha, beta = gains[0], gains[1]
    dof = 3 if planar else 6
    if not planar:
        for k in range(r.shape[0]):
            for a in range(3):
                cw.r[k, a], cw.vel[k, a], cw.w[k, a] = r[k, a], v[k, a], w[k, a]
        joint_rows(rints, rgeo, A, cw)
    nc = 0
    for a in range(rints.shape[0]):
        i, j = rints[a, 1], rints[a, 2]
        for row in range(rints[a, I_ROWS]):
            g = rgeo[a, G_ROWS + ROW_WIDTH * row:G_ROWS + ROW_WIDTH * (row + 1)]
            kind = int(g[R_TYPE])
            body_of[nc, 0], body_of[nc, 1] = i, j
            if planar:
                b, res = _planar_row(kind, g, i, j, r, A, v, w, phi, Q[nc, 0], Q[nc, 1])
            else:
                for k in range(6):
                    Q[nc, 0, k], Q[nc, 1, k] = cw.Qi[a, row, k], cw.Qj[a, row, k]
                b = cw.b[a, row]
                res = row_residual(kind, g, i, j, r, A, t) if beta != 0.0 else 0.0
            gdot = 0.0
            for side in range(2):
                k = body_of[nc, side]
                if k == 0:
                    for c in range(dof):
                        b -= Q[nc, side, c] * ddX0[c]
                for c in range(dof):
                    speed = (v[k, c] if c < 3 else w[k, c - 3]) if not planar else (
                        v[k, c] if c < 2 else w[k, 2])
                    gdot += Q[nc, side, c] * speed
            bc[nc] = b - 2.0 * alpha * gdot - beta * beta * res
            nc += 1
    return nc


@nb.njit(**OPTS)
def _forces(body, sgeo, planar, r, A, v, w, J0, Ms, Qs, t3, sv, Minv, F, power):
    """``F`` (n1, dof) and the blocks' inverses ``Minv`` (n1, dof, dof) (2.5)-(2.9), the
    dampers' power to ``power[0]``; False for a planar load out of the plane or a spring
    whose points coincide."""
    om = np.empty((r.shape[0], 3))
    for k in range(r.shape[0]):
        mv3(A[k], w[k], om[k])
    body_terms(body, A, om, J0, Ms, Qs, t3, sv)
    if body[0, B_SPRINGS] > 0:
        if not spring_wrenches(sgeo, 0, body, A, r, v, om, Qs, sv):
            return False
        none = np.zeros((0, 1), dtype=np.int64)
        power[0] = damping_power(none, sgeo, body, A, r, v, om, v[0], sv)
    h = sv[0]
    for k in range(1, r.shape[0]):
        m = body[k, 0]
        if planar:
            if abs(Qs[k, 2]) > 1e-12 * (1.0 + abs(Qs[k, 0]) + abs(Qs[k, 1])):
                return False
            F[k, 0], F[k, 1], F[k, 2] = Qs[k, 0], Qs[k, 1], Qs[k, 5]
            Minv[k, 0, 0], Minv[k, 1, 1], Minv[k, 2, 2] = 1.0 / m, 1.0 / m, 1.0 / J0[k, 2, 2]
            continue
        mtv3(A[k], Qs[k, 3:], h)
        for a in range(3):
            F[k, a] = Qs[k, a]
            F[k, 3 + a] = h[a]
            Minv[k, a, a] = 1.0 / m
        J = J0[k].copy()
        if not cholesky_factor(J):
            return False
        for c in range(3):                                    # J^-1 column by column
            for a in range(3):
                h[a] = 1.0 if a == c else 0.0
            lower_solve(J, h, h)
            upper_solve(J, h, h)
            for a in range(3):
                Minv[k, 3 + a, 3 + c] = h[a]
    return True


@nb.njit(**OPTS)
def _schur(nc, dof, Q, bc, body_of, Minv, F, ddX):
    """``(Q M^-1 Q^T) lam = b - Q M^-1 F``, ``ddX = M^-1 (F + Q^T lam)`` (2.50); False if the
    complement is not safely positive definite: a Cholesky pivot below :data:`PIVOT_TOL`
    times its diagonal entry (rows dependent or nearly so, where the NumPy route decides by
    its ``redundant`` option)."""
    n1 = F.shape[0]
    for k in range(1, n1):
        for a in range(dof):
            s = 0.0
            for c in range(dof):
                s += Minv[k, a, c] * F[k, c]
            ddX[k, a] = s
    Y = np.zeros((nc, 2, dof))                                # M^-1 Q^T, per row and side
    for row in range(nc):
        for side in range(2):
            k = body_of[row, side]
            if k == 0:
                continue
            for a in range(dof):
                s = 0.0
                for c in range(dof):
                    s += Minv[k, a, c] * Q[row, side, c]
                Y[row, side, a] = s
    S = np.zeros((nc, nc))
    lam = np.empty(nc)
    for row in range(nc):
        s = bc[row]
        for side in range(2):
            k = body_of[row, side]
            if k == 0:
                continue
            for a in range(dof):
                s -= Q[row, side, a] * ddX[k, a]
        lam[row] = s
        for col in range(row + 1):
            s = 0.0
            for p in range(2):
                for q in range(2):
                    k = body_of[row, p]
                    if k != 0 and k == body_of[col, q]:
                        for a in range(dof):
                            s += Q[col, q, a] * Y[row, p, a]
            S[row, col] = S[col, row] = s
    diagonal = np.empty(nc)
    for row in range(nc):
        diagonal[row] = S[row, row]
    if not cholesky_factor(S):
        return False
    for row in range(nc):
        if S[row, row] * S[row, row] < PIVOT_TOL * diagonal[row]:
            return False
    lower_solve(S, lam, lam)
    upper_solve(S, lam, lam)
    for row in range(nc):
        for side in range(2):
            k = body_of[row, side]
            if k == 0:
                continue
            for a in range(dof):
                ddX[k, a] += Y[row, side, a] * lam[row]
    return True


@nb.njit(**OPTS)
def absolute_rhs(rints, rgeo, body, sgeo, zlev, planar, gains, y, dy, power):
    """``dy/dt`` (N,) of the absolute state ``y`` (N,) (the layout of
    :mod:`mbcourse.cartesian.simulate`): the joints' rows ``rints``, ``rgeo`` (packed as
    :func:`~mbcourse.kernels.pack_chain` packs them, any topology), the bodies ``body``
    (masses, inertias, gravity, constant loads), the spring-dampers ``sgeo`` (S, 11), the
    planar form's heights ``zlev`` (n1,), ``planar`` (0 or 1) and ``gains`` = (alpha, beta,
    the quaternions' pull to the unit sphere); the dampers' power goes to ``power`` (1,).
    False when the kernel declines (module docstring)."""
    n1 = body.shape[0]
    dof = 3 if planar else 6
    r, v, w = np.zeros((n1, 3)), np.zeros((n1, 3)), np.zeros((n1, 3))
    A, J0 = np.zeros((n1, 3, 3)), np.zeros((n1, 3, 3))
    phi, ddX0 = np.zeros(n1), np.zeros(6)
    _base(body, r, A, v, w, ddX0)
    _unpack(y, planar, zlev, r, A, v, w, phi)
    for k in range(1, n1):
        for a in range(3):
            for c in range(3):
                J0[k, a, c] = body[k, 1 + 3 * a + c]
    Ms, Qs = np.zeros((n1, 6, 6)), np.zeros((n1, 6))
    t3, sv = np.zeros((3, 3, 3)), np.zeros((9, 3))
    Minv, F, ddX = np.zeros((n1, dof, dof)), np.zeros((n1, dof)), np.zeros((n1, dof))
    power[0] = 0.0
    if not _forces(body, sgeo, planar, r, A, v, w, J0, Ms, Qs, t3, sv, Minv, F, power):
        return False
    most = 0
    for a in range(rints.shape[0]):
        most += rints[a, I_ROWS]
    Q, bc = np.zeros((most, 2, dof)), np.zeros(most)
    body_of = np.zeros((most, 2), dtype=np.int64)
    cw, keep = row_workspace(rints.shape[0], n1)
    nc = release(keep, _rows(rints, rgeo, planar, gains, r, A, v, w, phi, ddX0, cw, Q, bc,
                             body_of, sv))
    if not _schur(nc, dof, Q, bc, body_of, Minv, F, ddX):
        return False
    n, npos = n1 - 1, (3 if planar else 7)
    for k in range(1, n1):
        at, vt = npos * (k - 1), npos * n + dof * (k - 1)
        for a in range(dof):
            dy[vt + a] = ddX[k, a]
        if planar:
            for a in range(3):
                dy[at + a] = y[vt + a]
            continue
        for a in range(3):
            dy[at + a] = v[k, a]
        qw, qx, qy, qz = y[at + 3], y[at + 4], y[at + 5], y[at + 6]
        wx, wy, wz = w[k, 0], w[k, 1], w[k, 2]
        pull = gains[2] * (qw * qw + qx * qx + qy * qy + qz * qz - 1.0)
        dy[at + 3] = 0.5 * (-qx * wx - qy * wy - qz * wz) - pull * qw
        dy[at + 4] = 0.5 * (qw * wx - qz * wy + qy * wz) - pull * qx
        dy[at + 5] = 0.5 * (qz * wx + qw * wy - qx * wz) - pull * qy
        dy[at + 6] = 0.5 * (-qy * wx + qx * wy + qw * wz) - pull * qz
    return finite(dy)
