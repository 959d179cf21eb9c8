"""Chapter 2's absolute coordinates, compiled: the chapter's constraint rows in the
chapter's axes, the KKT system (2.49) by Baraff's block ``LDL^T`` and the multipliers.

The same equations as the NumPy route (:mod:`mbcourse.cartesian.system`,
:mod:`~mbcourse.cartesian.constraints`, :func:`mbcourse.cartesian.solvers.solve_ldlt`) in
its spatial form, written as loops:

* every body ``k`` free, ``M_k ddX_k = F_k + Q_k^T lam`` (2.5)-(2.9), (2.26):
  ``ddX_k = (a_k, eps_k)`` with the centre-of-mass acceleration in inertial axes and the
  angular acceleration in **body** axes, ``M_k = diag(m_k E, J_k)``, ``F_k = (m_k g,
  - w_k x J_k w_k)`` plus the constant loads and spring-dampers (summed by the shared
  kinematics pass) and the joint forces ``tau`` with the joint springs, as equal and
  opposite wrenches ``J (J^T J)^-1 tau`` (:func:`~mbcourse.kernels.common.joint_force`);
* a prescribed motion of the base: its known acceleration moves to the right-hand side
  of the rows of the joints on it;
* each joint's elementary rows ``Q_i ddX_i + Q_j ddX_j = b`` (2.22) between its parent
  ``i`` and child ``j``, read from the joint's packed description
  (:meth:`mbcourse.joints.Joint.row_parameters`, no switch on the joint's kind):
  point-plane rows (2.10)-(2.22) (normals and offsets in the parent's axes, the child's
  point in the child's), perpendicular rows, the relative-rotation constraint
  (2.27)-(2.31), and the screw's row tying the advance to the turn
  (:func:`mbcourse.cartesian.constraints.screw`): revolute = 3 point-plane + 2
  perpendicular, spherical = 3 point-plane, a free joint none, and so on;
* the KKT system (2.49) ``[[M, Q^T], [Q, 0]] [ddX; -lam] = [F; b]`` factored by Baraff's
  tree-ordered block ``LDL^T`` without fill-in (2.55)-(2.61), erratum E12: bodies and
  joints are the nodes, each body's parent node is the joint above it and each joint's
  the body it hangs from, eliminated from the leaves; every ``D`` is kept as a Cholesky
  factor (of ``D_c`` and of ``-D_a``) and the updates are one-sided (``D_p -= Q_i^T L_a``,
  never ``L^T D L`` after an inverse), which keeps light links between heavy bodies
  (1e-3 kg, 1e-6 kg m^2 next to 50 kg, 10 kg m^2) at 3e-13 of the dense solve, as the
  square-root form of :func:`~mbcourse.cartesian.solvers.solve_ldlt`
  (tests/test_cartesian_conditioning.py);
* the joints' accelerations from their bodies' relative motion (3.104)-(3.107), as
  :func:`mbcourse.cartesian.joint_accelerations`
  (:func:`~mbcourse.kernels.common.joint_acceleration`).

The multipliers ``lam`` have the NumPy route's sign (2.26) and units; the kernel writes them
joint by joint in the packed joints' order (:func:`mbcourse.kernels.model_data`).

Examples
--------
>>> import numpy as np, mbcourse as mb
>>> from mbcourse.kernels import model_data
>>> m = mb.models.double_pendulum()
>>> qdd, lam = np.zeros((1, 2)), np.zeros((1, 10))
>>> cartesian_solve(*model_data(m).args(), np.zeros((1, 2)), np.zeros((1, 2)),
...                 np.zeros((1, 2)), qdd, lam)
True
>>> sol = mb.cartesian.solve(m, [0.0, 0.0], [0.0, 0.0], planar=False)
>>> bool(np.allclose(lam, sol.lam))       # the multipliers of (2.49), sign of (2.26)
True
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from .common import (B_BASE, B_MOVING, G_ROWS, I_NV, I_ROWS, INLINE, J_Z, OPTS, PERPENDICULAR,
                     POINT_PLANE, R_D, R_N, R_PITCH, R_RHO, R_TYPE, R_U1, R_U2, R_W1, ROW_WIDTH,
                     SCREW, borrow, centres, cholesky_factor, cross, finite, joint_acceleration,
                     joint_force, joint_motion, kinematics, mtv3, mv3, release, spring_torques,
                     take, workspace)

__all__ = ["POINT_PLANE", "PERPENDICULAR", "SCREW", "CartesianWork", "row_workspace",
           "joint_rows", "row_residual", "cartesian_workspace", "cartesian_one",
           "cartesian_forward", "cartesian_solve", "cartesian_terms"]


class CartesianWork(NamedTuple):
    """Work arrays of chapter 2's kernel (``n1`` bodies with the base, ``m`` joints, at most
    6 rows a joint; the rows' parameters are the joints' packed rows, ``geo[:, G_ROWS:]``).

    Body states: ``r``, ``vel`` (n1, 3) inertial axes, ``w`` (n1, 3) angular velocity in
    body axes. The equations: ``Qi``, ``Qj`` (m, 6, 6) (joint, row, column), ``b`` (m, 6),
    ``M`` (n1, 6, 6), ``F`` (n1, 6). Baraff's factors: ``D`` (n1, 6, 6) the bodies' (then
    their Cholesky factors), ``Dj`` (m, 6, 6) the Cholesky factors of the joints' ``-D_a``,
    ``Lb`` (n1, 6, 6) ``L_c^T = (D_c^-1 Q_j^T)^T`` (nr x 6), ``Lj`` (m, 6, 6) ``L_a^T =
    (D_a^-1 Q_i)^T`` (6 x nr), ``y``, ``x`` (n1, 6) and ``yj``, ``xj`` (m, 6) (``x =
    ddX``, ``xj = -lam``). Scratch ``v`` (12, 3), ``s``, ``W`` (6,), ``S6`` (6, 6), ``X``
    (2, 6)."""
    r: np.ndarray
    vel: np.ndarray
    w: np.ndarray
    Qi: np.ndarray
    Qj: np.ndarray
    b: np.ndarray
    M: np.ndarray
    F: np.ndarray
    D: np.ndarray
    Dj: np.ndarray
    Lb: np.ndarray
    Lj: np.ndarray
    y: np.ndarray
    x: np.ndarray
    yj: np.ndarray
    xj: np.ndarray
    v: np.ndarray
    s: np.ndarray
    W: np.ndarray
    S6: np.ndarray
    X: np.ndarray


# ------------------------------------------------------------------ small loops
@nb.njit(**INLINE)
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


# ------------------------------------------------------------------ the rows
@nb.njit(**OPTS)
def _point_plane(a, row, g, i, j, A, cw):
    """Point ``rho_j`` of body ``j`` on the plane ``n . rho = d`` of body ``i`` (2.10)-(2.22):
    ``rho_i = A_i^T (A_j rho_j + r_j - r_i)`` (2.12), (2.15), ``Q_i = [-n^T A_i^T, n^T
    tilde(rho_i)]``, ``Q_j = [n^T A_i^T, -n^T A_i^T A_j tilde(rho_j)]``, ``b = n . (2 w_i x
    A_i^T drho - w_i x (w_i x rho_i) - A_i^T A_j w_j x (w_j x rho_j))``."""
    n, rho = g[R_N:R_N + 3], g[R_RHO:R_RHO + 3]
    v = cw.v
    rho0, rho_i, nA, h, d, t = v[6], v[7], v[8], v[9], v[10], v[11]
    wi, wj = cw.w[i], cw.w[j]
    mv3(A[j], rho, rho0)
    for k in range(3):
        rho0[k] += cw.r[j, k] - cw.r[i, k]              # (2.15)
    mtv3(A[i], rho0, rho_i)                         # (2.12)
    mv3(A[i], n, nA)
    cross(n, rho_i, h)
    mtv3(A[j], nA, t)
    cross(rho, t, d)
    for k in range(3):
        cw.Qi[a, row, k], cw.Qi[a, row, 3 + k] = -nA[k], h[k]
        cw.Qj[a, row, k], cw.Qj[a, row, 3 + k] = nA[k], d[k]
    cross(wj, rho, h)                                   # drho0 = A_j (w_j x rho_j) + v_j - v_i
    mv3(A[j], h, d)                                  #   (2.16)
    for k in range(3):
        d[k] += cw.vel[j, k] - cw.vel[i, k]
    mtv3(A[i], d, t)
    cross(wi, t, d)                                     # 2 w_i x A_i^T drho0
    cross(wi, rho_i, h)
    cross(wi, h, t)                                     # - w_i x (w_i x rho_i)
    cross(wj, rho, h)
    cross(wj, h, rho0)
    mv3(A[j], rho0, h)
    mtv3(A[i], h, rho0)                             # - A_i^T A_j w_j x (w_j x rho_j)
    s = 0.0
    for k in range(3):
        s += n[k] * (2.0 * d[k] - t[k] - rho0[k])
    cw.b[a, row] = s


@nb.njit(**OPTS)
def _perpendicular(a, row, g, i, j, A, cw):
    """Vector ``u`` of body ``i`` and ``w`` of body ``j`` keep ``u . A_i^T A_j w = c0``
    (2.27)-(2.31): ``Q_i = [0, u x w_i]``, ``Q_j = [0, w x u_j]`` with ``w_i = A_i^T A_j w``,
    ``u_j = A_j^T A_i u``, ``b = -((u x dw_i) . w_i + (w x du_j) . w_j)``."""
    u, w = g[R_N:R_N + 3], g[R_RHO:R_RHO + 3]
    v = cw.v
    w_i, u_j, h, t, dw, du = v[6], v[7], v[8], v[9], v[10], v[11]
    wi, wj = cw.w[i], cw.w[j]
    mv3(A[j], w, h)
    mtv3(A[i], h, w_i)
    mv3(A[i], u, h)
    mtv3(A[j], h, u_j)
    cross(u, w_i, h)
    cross(w, u_j, t)
    for k in range(3):
        cw.Qi[a, row, k], cw.Qi[a, row, 3 + k] = 0.0, h[k]
        cw.Qj[a, row, k], cw.Qj[a, row, 3 + k] = 0.0, t[k]
    cross(wj, w, h)                                     # dw_i = -w_i x w_i' + A_i^T A_j (w_j x w)
    mv3(A[j], h, t)
    mtv3(A[i], t, dw)
    cross(wi, w_i, h)
    for k in range(3):
        dw[k] -= h[k]
    cross(wi, u, h)                                     # du_j = -w_j x u_j + A_j^T A_i (w_i x u)
    mv3(A[i], h, t)
    mtv3(A[j], t, du)
    cross(wj, u_j, h)
    for k in range(3):
        du[k] -= h[k]
    cross(u, dw, h)
    cross(w, du, t)
    cw.b[a, row] = -(_dot(h, wi) + _dot(t, wj))


@nb.njit(**OPTS)
def _screw(a, row, g, i, j, A, cw):
    """The screw's row (:func:`mbcourse.cartesian.constraints.screw`): the point-plane row
    along the axis ``n`` less the pitch ``h`` times the angle turned, ``theta = atan2(u2 .
    m, u1 . m)``, ``m = A_i^T A_j w1``: ``Q_i += h (0, c)``, ``Q_j -= h (0, A_j^T A_i c)``,
    ``b -= h (c . (w_i x A_i^T A_j w_j) - Omega . dc/dt)`` with ``dtheta/dt = c .
    Omega``, ``c = m x (x u2 - y u1) / (x^2 + y^2)``, ``Omega = A_i^T A_j w_j - w_i``."""
    _point_plane(a, row, g, i, j, A, cw)
    u1, u2, pitch = g[R_U1:R_U1 + 3], g[R_U2:R_U2 + 3], g[R_PITCH]
    v = cw.v
    m, sv, c, Rw, Om, h = v[0], v[1], v[2], v[3], v[4], v[5]
    dm, ds, dc, t = v[6], v[7], v[8], v[9]
    mv3(A[j], g[R_W1:R_W1 + 3], h)
    mtv3(A[i], h, m)                                     # the child's reference vector
    x, y = _dot(m, u1), _dot(m, u2)
    rho2 = x * x + y * y
    for k in range(3):
        sv[k] = x * u2[k] - y * u1[k]
    cross(m, sv, c)
    for k in range(3):
        c[k] /= rho2                                     # dtheta/dt = c . Omega
    mv3(A[j], cw.w[j], h)
    mtv3(A[i], h, Rw)
    for k in range(3):
        Om[k] = Rw[k] - cw.w[i, k]
    cross(Om, m, dm)
    dx, dy = _dot(dm, u1), _dot(dm, u2)
    for k in range(3):
        ds[k] = dx * u2[k] - dy * u1[k]
    cross(dm, sv, dc)
    cross(m, ds, t)
    for k in range(3):
        dc[k] = (dc[k] + t[k] - 2.0 * (x * dx + y * dy) * c[k]) / rho2
    cross(cw.w[i], Rw, t)
    b_theta = _dot(c, t) - _dot(Om, dc)
    mv3(A[i], c, h)
    mtv3(A[j], h, t)                                     # A_j^T A_i c
    for k in range(3):
        cw.Qi[a, row, 3 + k] += pitch * c[k]
        cw.Qj[a, row, 3 + k] -= pitch * t[k]
    cw.b[a, row] -= pitch * b_theta


@nb.njit(**OPTS)
def joint_rows(ints, geo, A, cw):
    """The rows ``Q_i, Q_j, b`` (2.22) of every joint of ``ints`` (parent ``ints[a, 1]``,
    child ``ints[a, 2]``, ``ints[a, I_ROWS]`` rows packed in ``geo[a, G_ROWS:]``) at the body
    states ``cw.r``, ``cw.vel``, ``cw.w`` and orientations ``A``."""
    for a in range(ints.shape[0]):
        i, j = ints[a, 1], ints[a, 2]
        for row in range(ints[a, I_ROWS]):
            g = geo[a, G_ROWS + ROW_WIDTH * row:G_ROWS + ROW_WIDTH * (row + 1)]
            kind = int(g[R_TYPE])
            if kind == POINT_PLANE:
                _point_plane(a, row, g, i, j, A, cw)
            elif kind == PERPENDICULAR:
                _perpendicular(a, row, g, i, j, A, cw)
            else:
                _screw(a, row, g, i, j, A, cw)


@nb.njit(**OPTS)
def row_residual(kind, g, i, j, r, A, t):
    """A spatial row's position residual (its packed parameters ``g``, bodies ``i``, ``j``
    at the centres ``r`` and orientations ``A``; ``t`` (3, 3) scratch): ``n . rho_i - d``
    (point-plane), ``u . A_i^T A_j w - c0`` (perpendicular), the screw's ``n . rho_i - d -
    h theta`` on the branch nearest zero (:mod:`mbcourse.cartesian.constraints`)."""
    a, b, m = t[0], t[1], t[2]
    if kind == PERPENDICULAR:
        mv3(A[j], g[R_RHO:R_RHO + 3], a)
        mtv3(A[i], a, b)
        return _dot(g[R_N:R_N + 3], b) - g[R_D]
    mv3(A[j], g[R_RHO:R_RHO + 3], a)
    for k in range(3):
        a[k] += r[j, k] - r[i, k]
    mtv3(A[i], a, b)
    res = _dot(g[R_N:R_N + 3], b) - g[R_D]
    if kind == POINT_PLANE:
        return res
    h = g[R_PITCH]
    mv3(A[j], g[R_W1:R_W1 + 3], a)
    mtv3(A[i], a, m)
    res -= h * np.arctan2(_dot(m, g[R_U2:R_U2 + 3]), _dot(m, g[R_U1:R_U1 + 3]))
    lead = 2.0 * np.pi * h
    return res - lead * np.round(res / lead)


# ---------------------------------------------------------- bodies and forces
@nb.njit(**OPTS)
def _body_states(ints, geo, body, q, qd, kin, cw):
    """Absolute coordinates from ``q, qd``: ``A_k`` and ``omega_k`` (the shared kinematics
    pass, which also sums each body's applied wrench ``Q_k``), ``r_k``, ``v_k`` and the
    body-axes angular velocity ``w_k = A_k^T omega_k``; the base's acceleration ``x_0``
    (zero, or its prescribed motion, angular part in its own axes). False where that pass
    declines (a quaternion far from unit norm, a spring-damper whose points coincide)."""
    if not kinematics(ints, geo, body, q, qd, kin):
        return False
    centres(ints, body, qd, kin.om, kin.rho, kin.S, cw.r, cw.vel, cw.v[0])
    for k in range(body.shape[0]):
        mtv3(kin.A[k], kin.om[k], cw.w[k])
    moving = body[0, B_MOVING] != 0.0
    for k in range(3):
        cw.x[0, k] = body[0, B_BASE + 12 + k] if moving else 0.0
        cw.v[0, k] = body[0, B_BASE + 15 + k] if moving else 0.0
    mtv3(kin.A[0], cw.v[0], cw.x[0, 3:])
    return True


@nb.njit(**OPTS)
def _base_rows(ints, cw):
    """The known acceleration of the base to the right-hand side: ``b -= Q_i x_0`` for the
    rows of the joints on it."""
    for a in range(ints.shape[0]):
        if ints[a, 1] != 0:
            continue
        for row in range(ints[a, I_ROWS]):
            acc = 0.0
            for k in range(6):
                acc += cw.Qi[a, row, k] * cw.x[0, k]
            cw.b[a, row] -= acc


@nb.njit(**INLINE)
def _add_wrench(k, f, m, A, cw):
    """``F_k += (f, A_k^T m)`` (the moment to body axes)."""
    h = cw.v[11]
    mtv3(A[k], m, h)
    for r in range(3):
        cw.F[k, r] += f[r]
        cw.F[k, 3 + r] += h[r]


@nb.njit(**OPTS)
def _joint_levers(a, ints, geo, kin, lp, lc):
    """Joint ``a``'s levers (inertial axes), its motion in ``kin.jw``: ``lp`` from the
    parent's centre to the joint point, ``A_p (c_p + z_a)``, and ``lc`` from the child's,
    ``A_c c_c``."""
    p, c, h = ints[a, 1], ints[a, 2], kin.v[8]
    for k in range(3):
        h[k] = geo[a, 12 + k] + kin.jw[J_Z, k]
    mv3(kin.A[p], h, lp)
    mv3(kin.A[c], geo[a, 15:18], lc)


@nb.njit(**OPTS)
def _mass_and_forces(ints, geo, body, q, qd, tau, kin, cw):
    """``M_k = diag(m_k E, J_k)``, ``F_k = (m_k g + F, A_k^T M - w_k x J_k w_k)``
    (2.5)-(2.9), body axes for the angular part, ``F``, ``M`` the body's constant loads and
    spring-dampers about its centre (the kinematics pass's ``Q_k``, inertial axes);
    ``tau_a`` with the joint springs (:func:`~mbcourse.kernels.common.spring_torques`) acts
    as the wrench ``J (J^T J)^-1 tau_a`` on the child at its joint point and the opposite
    on the parent (:func:`mbcourse.cartesian.system.joint_wrenches`). False if a joint's
    speed columns are dependent."""
    A, v, W = kin.A, cw.v, cw.W
    lc, lp, mo = v[6], v[7], v[8]
    for k in range(1, body.shape[0]):
        for r in range(3):
            cw.M[k, r, r] = body[k, 0]
            for c in range(3):
                cw.M[k, 3 + r, 3 + c] = kin.J0[k, r, c]
        mtv3(A[k], kin.Qs[k, 3:6], mo)                # M - omega x J omega, to body axes
        for r in range(3):
            cw.F[k, r] = kin.Qs[k, r]
            cw.F[k, 3 + r] = mo[r]
    spring_torques(ints, geo, q, qd, tau, kin.tq)
    for a in range(ints.shape[0]):
        p, c, v0, nk = ints[a, 1], ints[a, 2], ints[a, 4], ints[a, I_NV]
        loaded = False
        for j in range(nk):
            loaded = loaded or kin.tq[v0 + j] != 0.0
        if not loaded:
            continue
        joint_motion(a, ints, geo, q, qd, kin.R0, kin.jw)
        if not joint_force(kin.jw, nk, kin.tq[v0:v0 + nk], A[p], cw.S6, cw.s, v[9:11], W):
            return False
        _joint_levers(a, ints, geo, kin, lp, lc)
        cross(lc, W[:3], mo)                            # about the child's centre
        for k in range(3):
            mo[k] += W[3 + k]
        _add_wrench(c, W[:3], mo, A, cw)
        if p > 0:
            cross(lp, W[:3], mo)                        # the opposite, about the parent's
            for k in range(3):
                mo[k] = -mo[k] - W[3 + k]
                W[k] = -W[k]
            _add_wrench(p, W[:3], mo, A, cw)
    return True


# ------------------------------------------------------- Baraff's LDL^T (2.55)-(2.61)
@nb.njit(**OPTS)
def _solve_rows(L, n, X, m, out):
    """``out[r, :n] = (L L^T)^-1 X[r, :n]`` for the rows ``r < m`` (``L`` a Cholesky factor
    of size ``n``): one call for a block's right-hand sides."""
    for r in range(m):
        for i in range(n):                              # L u = x
            s = X[r, i]
            for k in range(i):
                s -= L[i, k] * out[r, k]
            out[r, i] = s / L[i, i]
        for i in range(n - 1, -1, -1):                  # L^T x = u
            s = out[r, i]
            for k in range(i + 1, n):
                s -= L[k, i] * out[r, k]
            out[r, i] = s / L[i, i]


@nb.njit(**OPTS)
def _eliminate_body(a, c, nr, cw):
    """Body ``c`` (its children done): ``D_c = L L^T``, ``L_c = D_c^-1 Q_j^T`` (kept
    transposed, nr x 6), joint ``a``'s ``D_a = -Q_j L_c`` and ``y_a = b_a - L_c^T y_c``;
    ``Dj`` keeps the Cholesky factor of ``-D_a``. False if a block is not definite."""
    if not cholesky_factor(cw.D[c]):
        return False
    _solve_rows(cw.D[c], 6, cw.Qj[a], nr, cw.Lb[c])
    for r in range(nr):
        for t in range(nr):
            acc = 0.0
            for k in range(6):
                acc += cw.Qj[a, r, k] * cw.Lb[c, t, k]
            cw.Dj[a, r, t] = acc                        # -D_a = Q_j D_c^-1 Q_j^T
        acc = cw.b[a, r]
        for k in range(6):
            acc -= cw.Lb[c, r, k] * cw.y[c, k]
        cw.yj[a, r] = acc
    return cholesky_factor(cw.Dj[a, :nr, :nr])


@nb.njit(**OPTS)
def _eliminate_joint(a, p, nr, cw):
    """Joint ``a`` into its parent body ``p``: ``L_a = D_a^-1 Q_i`` (kept transposed,
    6 x nr), ``D_p -= L_a^T D_a L_a = Q_i^T L_a``, ``y_p -= L_a^T y_a``."""
    Qt = cw.S6
    for k in range(6):
        for r in range(nr):
            Qt[k, r] = -cw.Qi[a, r, k]                  # D_a = -(L L^T)
    _solve_rows(cw.Dj[a], nr, Qt, 6, cw.Lj[a])
    for k in range(6):
        for l in range(6):
            acc = 0.0
            for r in range(nr):
                acc += cw.Qi[a, r, k] * cw.Lj[a, l, r]
            cw.D[p, k, l] -= acc
        acc = 0.0
        for r in range(nr):
            acc += cw.Lj[a, k, r] * cw.yj[a, r]
        cw.y[p, k] -= acc


@nb.njit(**OPTS)
def _factor(ints, cw):
    """``H = U^T D U`` and ``U^T y = [F; b]`` from the leaves (children before parents, no
    fill-in): for each joint ``a`` from the last, its child body, then the joint itself."""
    n1 = cw.D.shape[0]
    for k in range(n1):
        for r in range(6):
            cw.y[k, r] = cw.F[k, r]
            for c in range(6):
                cw.D[k, r, c] = cw.M[k, r, c]
    for a in range(ints.shape[0] - 1, -1, -1):
        p, c, nr = ints[a, 1], ints[a, 2], ints[a, I_ROWS]
        if not _eliminate_body(a, c, nr, cw):
            return False
        if p > 0:
            _eliminate_joint(a, p, nr, cw)
    return True


@nb.njit(**OPTS)
def _back_substitute(ints, cw):
    """``D z = y``, ``U x = z`` from the root: ``x_a = D_a^-1 y_a - L_a x_p`` (the joints to
    the base are roots), ``x_c = D_c^-1 y_c - L_c x_a``; ``ddX = x`` of the bodies,
    ``lam = -x`` of the joints."""
    for a in range(ints.shape[0]):
        p, c, nr = ints[a, 1], ints[a, 2], ints[a, I_ROWS]
        _solve_rows(cw.Dj[a], nr, cw.yj[a:a + 1], 1, cw.xj[a:a + 1])
        for r in range(nr):
            acc = -cw.xj[a, r]
            if p > 0:
                for k in range(6):
                    acc -= cw.Lj[a, k, r] * cw.x[p, k]
            cw.xj[a, r] = acc
        _solve_rows(cw.D[c], 6, cw.y[c:c + 1], 1, cw.x[c:c + 1])
        for k in range(6):
            acc = cw.x[c, k]
            for r in range(nr):
                acc -= cw.Lb[c, r, k] * cw.xj[a, r]
            cw.x[c, k] = acc


# ------------------------------------------------------------ back to the joints
@nb.njit(**OPTS)
def _joint_accelerations(ints, geo, q, qd, qdd, kin, cw):
    """Every joint's ``qdd`` from its bodies' accelerations ``x`` (3.104)-(3.107) by
    :func:`~mbcourse.kernels.common.joint_acceleration` (the angular accelerations turned
    to inertial axes first). False if a joint's speed columns are dependent."""
    A, om, v, X = kin.A, kin.om, cw.v, cw.X
    for a in range(ints.shape[0]):
        p, c, v0, nk = ints[a, 1], ints[a, 2], ints[a, 4], ints[a, I_NV]
        if nk == 0:
            continue
        for side, b in ((0, p), (1, c)):
            for k in range(3):
                X[side, k] = cw.x[b, k]
            mv3(A[b], cw.x[b, 3:], X[side, 3:])
        joint_motion(a, ints, geo, q, qd, kin.R0, kin.jw)
        _joint_levers(a, ints, geo, kin, v[6], v[7])
        if not joint_acceleration(kin.jw, nk, A[p], om[p], om[c], X[0], X[1], v[6], v[7],
                                  cw.S6, v[0:6], qdd[v0:v0 + nk]):
            return False
    return True


@nb.njit(**OPTS)
def cartesian_one(ints, geo, body, q, qd, tau, qdd, lam, kin, cw):
    """Chapter 2 for one configuration: body states, rows (2.22), ``M`` and ``F``
    (2.5)-(2.9), the KKT system (2.49) by Baraff's ``LDL^T`` (2.55)-(2.61), then ``qdd``
    and ``lam`` (joint by joint, packed order). False if a block is not definite."""
    if not _body_states(ints, geo, body, q, qd, kin, cw):
        return False
    joint_rows(ints, geo, kin.A, cw)
    if body[0, B_MOVING] != 0.0:
        _base_rows(ints, cw)
    if not _mass_and_forces(ints, geo, body, q, qd, tau, kin, cw) or not _factor(ints, cw):
        return False
    _back_substitute(ints, cw)
    row = 0
    for a in range(ints.shape[0]):
        for r in range(ints[a, I_ROWS]):
            lam[row + r] = -cw.xj[a, r]
        row += ints[a, I_ROWS]
    return _joint_accelerations(ints, geo, q, qd, qdd, kin, cw)


@nb.njit(**OPTS)
def row_workspace(m, n1, borrowed=True):
    """``(cw, keep)``: a :class:`CartesianWork` for ``m`` joints between ``n1`` bodies
    (one allocation, ``keep``; :func:`joint_rows` writes the rows of a state),
    :func:`~mbcourse.kernels.common.borrow`-ed views unless ``borrowed`` is False. Chapter
    6's kernel uses it for the cut joints alone."""
    owner = np.zeros(m * (36 + 36 + 6 + 36 + 36 + 6 + 6)
                     + n1 * (3 + 3 + 3 + 36 + 6 + 36 + 36 + 6 + 6) + 36 + 6 + 6 + 36 + 12)
    buf = borrow(owner) if borrowed else owner
    at = np.zeros(1, dtype=np.int64)
    cw = CartesianWork(take(buf, at, n1 * 3).reshape((n1, 3)),
                         take(buf, at, n1 * 3).reshape((n1, 3)),
                         take(buf, at, n1 * 3).reshape((n1, 3)),
                         take(buf, at, m * 36).reshape((m, 6, 6)),
                         take(buf, at, m * 36).reshape((m, 6, 6)),
                         take(buf, at, m * 6).reshape((m, 6)),
                         take(buf, at, n1 * 36).reshape((n1, 6, 6)),
                         take(buf, at, n1 * 6).reshape((n1, 6)),
                         take(buf, at, n1 * 36).reshape((n1, 6, 6)),
                         take(buf, at, m * 36).reshape((m, 6, 6)),
                         take(buf, at, n1 * 36).reshape((n1, 6, 6)),
                         take(buf, at, m * 36).reshape((m, 6, 6)),
                         take(buf, at, n1 * 6).reshape((n1, 6)),
                         take(buf, at, n1 * 6).reshape((n1, 6)),
                         take(buf, at, m * 6).reshape((m, 6)),
                         take(buf, at, m * 6).reshape((m, 6)),
                         take(buf, at, 36).reshape((12, 3)), take(buf, at, 6),
                         take(buf, at, 6), take(buf, at, 36).reshape((6, 6)),
                         take(buf, at, 12).reshape((2, 6)))
    return cw, owner


@nb.njit(**OPTS)
def cartesian_workspace(ints, geo, body, borrowed=True):
    """``(kin, cw, keep)``: the kinematics pass's :class:`~mbcourse.kernels.common.Work`
    and a :class:`CartesianWork` (:func:`row_workspace`) for a packed tree, and their
    owning buffers."""
    kin, keep_kin = workspace(ints, geo, body, borrowed)
    cw, keep_cw = row_workspace(ints.shape[0], body.shape[0], borrowed)
    return kin, cw, (keep_kin, keep_cw)


@nb.njit(**OPTS)
def cartesian_solve(ints, geo, body, q, qd, tau, qdd, lam):
    """Chapter 2 for a batch (:func:`cartesian_one`): ``q`` (B, nq), ``qd``, ``tau`` (B, nv)
    into ``qdd`` (B, nv) and the multipliers ``lam`` (B, nc), packed joints' order. False
    if a block is singular or a value is not finite."""
    ints, geo, body, q, qd, tau, qdd, lam = (borrow(ints), borrow(geo), borrow(body),
                                             borrow(q), borrow(qd), borrow(tau), borrow(qdd),
                                             borrow(lam))
    kin, cw, keep = cartesian_workspace(ints, geo, body)
    ok = True
    for b in range(q.shape[0]):
        if (not cartesian_one(ints, geo, body, q[b], qd[b], tau[b], qdd[b], lam[b], kin, cw)
                or not finite(qdd[b])):
            ok = False
    return release(keep, ok)


@nb.njit(**OPTS)
def cartesian_forward(ints, geo, body, q, qd, tau, qdd):
    """:func:`cartesian_solve` without the multipliers (the front door's kernel)."""
    nc = 0
    for a in range(ints.shape[0]):
        nc += ints[a, I_ROWS]
    lam = np.empty((q.shape[0], nc))
    return cartesian_solve(ints, geo, body, q, qd, tau, qdd, lam)


@nb.njit(**OPTS)
def cartesian_terms(ints, geo, body, q, qd, tau, qdd, lam):
    """One configuration: :func:`cartesian_one` into ``qdd`` (nv,), ``lam`` (nc,), and the
    :class:`CartesianWork` with the rows, ``M``, ``F`` and ``ddX = x`` (for the tests)."""
    kin, cw, _ = cartesian_workspace(ints, geo, body, False)
    ok = cartesian_one(ints, geo, body, q, qd, tau, qdd, lam, kin, cw)
    return ok, cw


from . import register, rows_data  # noqa: E402  (the front door, mbcourse.kernels)

register("cartesian", cartesian_forward, moving_base=True, pack=rows_data,
         refusal="the compiled Cartesian route needs solver='ldlt', planar=None, joints "
                 "pointing away from the base whose kinds have chapter 2's rows")
