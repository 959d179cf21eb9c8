"""Chapter 6 compiled: the cut-joint method, Yudintsev (3.186)-(3.201).

For one configuration, the same steps as the NumPy route :func:`mbcourse.loops.solve`:

* the reduced tree's ``A qdd_T = B + B* + tau`` (3.186) by chapter 3's kernel
  (:func:`mbcourse.kernels.tree.tree_one`: ``A = Phi m Phi^T``, the bodies' Jacobians
  ``Phi``, ``pT`` and their accelerations at ``qdd_T = 0``);
* each cut joint's rows in chapter 2's form (2.22), ``Q_i ddX_i + Q_j ddX_j = b``, by
  chapter 2's kernel (:func:`mbcourse.kernels.cartesian.joint_rows`), applied to the bodies'
  Jacobians: ``H_c qdd_T = gamma_c`` (3.188);
* the minimum-norm multipliers ``lambda`` of ``H_c A^-1 H_c^T lambda = gamma_c - H_c x0``
  (3.189) from an SVD of ``L^-1 H_c^T`` (``A = L L^T``), then ``qdd_T``;
* the cut joints' accelerations from their bodies' (3.104)-(3.107).

:func:`loops_intermediates` exposes ``A``, ``lambda`` and ``H_c^T lambda`` for the tests,
which compare them with :func:`mbcourse.loops.solve`'s.
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from .cartesian import joint_rows, row_residual, row_workspace
from .common import (B_MOVING, G_ROWS, I_NV, I_ROWS, INLINE, J_KV, J_OM, J_R, J_Z, OPTS,
                     J_ROWS, R_TYPE, ROW_WIDTH, borrow,
                     cholesky_factor, cross,
                     damping_power, finite, joint_acceleration, joint_force, joint_motion,
                     lower_solve, mm3, mtv3, mv3, release, spring_torques, take,
                     upper_solve)
from .tree import tree_one, tree_workspace

__all__ = ["CutData", "loops_forward", "loops_intermediates", "loops_reduced", "loops_closure"]


class CutData(NamedTuple):
    """Packed constants of the cut-joint kernel (prepared by ``mb.loops`` once per model
    version): the reduced tree's ``ints, geo, body`` (see
    :func:`mbcourse.kernels.pack_chain`, its own coordinates), the cut joints' ``cints``
    and ``cgeo`` (packed as :func:`~mbcourse.kernels.pack_chain` packs a tree's joints, with
    their motion and chapter 2's rows, indices into the Model's ``q`` and ``qd``), the
    positions ``q_tree``, ``v_tree`` of the tree's coordinates in the Model's, ``limits``
    ``(rcond, tol)`` (the SVD's cut-off, the closure tolerance), the Model's ``nv`` and, as
    in :class:`~mbcourse.kernels.ModelData`, whether the Model has forces given as
    callables (``callables``; loads among them: ``state_loads``), which
    :func:`mbcourse.kernels.route` evaluates and hands in as numbers, and whether the base
    moves (``base_moves``: :func:`~mbcourse.kernels.route` packs its motion into ``body``
    at each call), and the Model's ``nq``."""
    ints: np.ndarray
    geo: np.ndarray
    body: np.ndarray
    cints: np.ndarray
    cgeo: np.ndarray
    q_tree: np.ndarray
    v_tree: np.ndarray
    limits: np.ndarray
    nv: int
    callables: bool = False
    state_loads: bool = False
    base_moves: bool = False
    nq: int = -1

    def args(self, gravity=True):
        """The kernel's leading arguments (gravity is part of the reduced tree's data)."""
        return self[:8]


class _LoopWork(NamedTuple):
    """Work arrays of one configuration (``n1`` bodies, ``N`` tree speeds, ``K`` cut joints)."""
    r: np.ndarray        # (n1, 3) centres of mass, inertial axes
    vel: np.ndarray      # (n1, 3) their velocities
    X: np.ndarray        # (n1, 6) the bodies' accelerations (a, eps), inertial axes
    qT: np.ndarray       # (NQ,) the tree's q; (N,) its qd, tau
    qdT: np.ndarray
    tauT: np.ndarray
    Hm: np.ndarray       # (N, N) A (3.186), factored in place
    Bv: np.ndarray       # (N,) chapter 3's B (3.167)
    G: np.ndarray        # (2, 6) one row on the child and the parent, inertial axes
    W: np.ndarray        # (6,) a cut joint's wrench
    rhs: np.ndarray      # (N,) B + B* + tau
    Hc: np.ndarray       # (6 K, N) the cut joints' rows
    gc: np.ndarray       # (6 K,) their right-hand sides gamma_c
    lam: np.ndarray      # (6 K,) the multipliers
    qddT: np.ndarray     # (N,) the tree's accelerations
    scale: np.ndarray    # (2,) length and speed scales of the closure test
    v: np.ndarray        # (9, 3) scratch
    t3: np.ndarray       # (1, 3, 3) scratch
    sv: np.ndarray       # (6 K,) the singular values of L^-1 H_c^T
    R0: np.ndarray       # (K, 3, 3) the cut joints' fixed orientations
    jw: np.ndarray       # a cut joint's own motion (common's J_ROWS x 3 array)
    S6: np.ndarray       # (6, 6) scratch


@nb.njit(**OPTS)
def _loop_work(n1, N, NQ, cgeo):
    """``(lw, keep)``: a :class:`_LoopWork` of :func:`~mbcourse.kernels.common.borrow`-ed
    views carved out of one allocation ``keep``."""
    K = cgeo.shape[0]
    owner = np.zeros(n1 * 12 + NQ + N * (N + 5) + 12 + 6 + 6 * K * (N + 3) + 2 + 27 + 9
                     + K * 9 + J_ROWS * 3 + 36)
    buf, at = borrow(owner), np.zeros(1, dtype=np.int64)
    lw = _LoopWork(take(buf, at, n1 * 3).reshape((n1, 3)),
                   take(buf, at, n1 * 3).reshape((n1, 3)),
                   take(buf, at, n1 * 6).reshape((n1, 6)), take(buf, at, NQ),
                   take(buf, at, N), take(buf, at, N), take(buf, at, N * N).reshape((N, N)),
                   take(buf, at, N), take(buf, at, 12).reshape((2, 6)), take(buf, at, 6),
                   take(buf, at, N), take(buf, at, 6 * K * N).reshape((6 * K, N)),
                   take(buf, at, 6 * K), take(buf, at, 6 * K), take(buf, at, N),
                   take(buf, at, 2), take(buf, at, 27).reshape((9, 3)),
                   take(buf, at, 9).reshape((1, 3, 3)), take(buf, at, 6 * K),
                   take(buf, at, K * 9).reshape((K, 3, 3)),
                   take(buf, at, J_ROWS * 3).reshape((J_ROWS, 3)),
                   take(buf, at, 36).reshape((6, 6)))
    for j in range(K):
        for r in range(3):
            for c in range(3):
                lw.R0[j, r, c] = cgeo[j, 3 + 3 * r + c]
    return lw, owner


@nb.njit(**INLINE)
def _centres(ints, body, tw, lw):
    """Centres of mass ``r_c = r_p + c*_pa - c*_ca`` (3.153), their velocities
    ``v = Phi^T qd_T`` (3.163) (plus ``v_0 + omega_0 x (r_c - r_0)`` on a moving base, from
    its origin ``r_0``), the base's accelerations ``X_0`` and the closure test's scales."""
    r, vel, N, h = lw.r, lw.vel, lw.qdT.shape[0], lw.v[0]
    moving = body[0, B_MOVING] != 0.0
    for k in range(3):
        r[0, k] = tw.r[0, k] if moving else 0.0
        vel[0, k] = tw.vel[0, k] if moving else 0.0
        lw.X[0, k], lw.X[0, 3 + k] = tw.U[0, k], tw.eps[0, k]
    scale = 1.0
    for a in range(ints.shape[0]):
        p, c = ints[a, 1], ints[a, 2]
        for k in range(3):
            r[c, k] = r[p, k] + tw.Cstar[p, a, k] - tw.Cstar[c, a, k]
            scale = max(scale, 1.0 + abs(r[c, k]))
            h[k] = r[c, k] - r[0, k]
        cross(tw.omega[0], h, h)
        for k in range(3):
            s_ = vel[0, k] + h[k]
            for col in range(N):
                s_ += tw.Jv[c, col, k] * lw.qdT[col]
            vel[c, k] = s_
    vscale = 1.0
    for b in range(r.shape[0]):
        for k in range(3):
            vscale = max(vscale, 1.0 + abs(vel[b, k]) + abs(tw.omega[b, k]) * scale)
    lw.scale[0] = scale
    lw.scale[1] = vscale


@nb.njit(**INLINE)
def _closes(cints, cgeo, q, qd, tol, tw, lw):
    """Whether the state closes every loop (position and velocity, each cut joint with its
    own q, qd and its motion from :func:`~mbcourse.kernels.common.joint_motion`) to ``tol``
    relative to the scales of :func:`_centres`: ``A_c = A_p R_a``, the joint points meet
    (``r_c + A_c c_c = r_p + A_p (c_p + z_a)``), ``w_c - w_p = A_p Omega_a`` and the joint
    point's velocities differ by ``A_p k qd``."""
    A, om, r, vel, v, jw = tw.Ab, tw.omega, lw.r, lw.vel, lw.v, lw.jw
    rc, ri, d, h, e = v[1], v[2], v[5], v[7], v[8]
    R = lw.t3[0]
    scale, vscale = lw.scale[0], lw.scale[1]
    for j in range(cints.shape[0]):
        p, c = cints[j, 1], cints[j, 2]
        if not joint_motion(j, cints, cgeo, q, qd, lw.R0, jw):
            return False
        mm3(A[p], jw[J_R:J_R + 3], R)
        for a in range(3):
            for b in range(3):
                if abs(A[c, a, b] - R[a, b]) > tol:
                    return False
        mv3(A[c], cgeo[j, 15:18], rc)
        for k in range(3):
            h[k] = cgeo[j, 12 + k] + jw[J_Z, k]
        mv3(A[p], h, ri)                                 # parent's centre -> joint point
        mv3(A[p], jw[J_OM], e)
        for k in range(3):
            if (abs(r[c, k] + rc[k] - r[p, k] - ri[k]) > tol * scale
                    or abs(om[c, k] - om[p, k] - e[k]) > tol * vscale):
                return False
        cross(om[c], rc, h)
        cross(om[p], ri, d)
        mv3(A[p], jw[J_KV], e)
        for k in range(3):
            if abs(vel[c, k] + h[k] - vel[p, k] - d[k] - e[k]) > tol * vscale:
                return False
    return True


@nb.njit(**INLINE)
def _add_generalized(b, W, tw, rhs):
    """``rhs += Phi_b W_f + (pT)_b W_m``: a wrench (force, moment about the centre of mass,
    inertial axes) on body ``b`` as generalized forces of the tree."""
    for col in range(rhs.shape[0]):
        acc = 0.0
        for k in range(3):
            acc += tw.Jv[b, col, k] * W[k] + tw.Jw[b, col, k] * W[3 + k]
        rhs[col] += acc


@nb.njit(**OPTS)
def _cut_force(j, cints, cgeo, q, qd, tau, tw, lw):
    """``B*`` (3.201): cut joint ``j``'s drive ``tau`` (its speeds' slice of the Model's) as
    the wrench pair ``J (J^T J)^-1 tau`` on its bodies
    (:func:`~mbcourse.kernels.common.joint_force`), added to ``rhs`` through the bodies'
    Jacobians. False if the joint's speed columns are dependent."""
    A, v, W, Wb, jw = tw.Ab, lw.v, lw.W, lw.G[1], lw.jw
    p, c, nk = cints[j, 1], cints[j, 2], cints[j, I_NV]
    rc, ri, mo = v[1], v[2], v[7]
    joint_motion(j, cints, cgeo, q, qd, lw.R0, jw)
    if not joint_force(jw, nk, tau, A[p], lw.S6, lw.G[0], v[4:6], W):
        return False
    mv3(A[c], cgeo[j, 15:18], rc)                       # child's centre -> joint point
    for k in range(3):
        mo[k] = cgeo[j, 12 + k] + jw[J_Z, k]
    mv3(A[p], mo, ri)                                   # parent's centre -> joint point
    cross(rc, W[:3], mo)
    for k in range(3):
        Wb[k], Wb[3 + k] = W[k], W[3 + k] + mo[k]
    _add_generalized(c, Wb, tw, lw.rhs)
    cross(ri, W[:3], mo)
    for k in range(3):
        Wb[k], Wb[3 + k] = -W[k], -W[3 + k] - mo[k]
    _add_generalized(p, Wb, tw, lw.rhs)
    return True


@nb.njit(**INLINE)
def _inertial_row(Q, A, out):
    """A row's coefficients on ``(a, eps)`` with ``eps`` in inertial axes: ``(Q_a, A Q_eps)``
    (chapter 2 writes the angular acceleration in body axes, ``eps_body = A^T eps``)."""
    for k in range(3):
        out[k] = Q[k]
    mv3(A, Q[3:], out[3:])


@nb.njit(**INLINE)
def _cut_rows(cints, cgeo, tw, lw, cw):
    """Every cut joint's chapter 2 rows (2.22) on the tree's accelerations, ``H_c qdd_T =
    gamma_c`` with ``H_c = Q_i X_i + Q_j X_j`` (``X`` the bodies' Jacobians) and ``gamma_c =
    b - Q_i ddX0_i - Q_j ddX0_j`` (the bodies' accelerations at ``qdd_T = 0``); returns the
    number of rows."""
    A, G, N = tw.Ab, lw.G, lw.qdT.shape[0]
    for b in range(A.shape[0]):                          # the body states of chapter 2
        for k in range(3):
            cw.r[b, k], cw.vel[b, k] = lw.r[b, k], lw.vel[b, k]
        mtv3(A[b], tw.omega[b], cw.w[b])                 # angular velocity, body axes
    joint_rows(cints, cgeo, A, cw)
    nc = 0
    for j in range(cints.shape[0]):
        p, c = cints[j, 1], cints[j, 2]
        for row in range(cints[j, I_ROWS]):
            _inertial_row(cw.Qj[j, row], A[c], G[0])
            _inertial_row(cw.Qi[j, row], A[p], G[1])
            s_ = cw.b[j, row]
            for k in range(3):
                s_ -= (G[0, k] * tw.U[c, k] + G[0, 3 + k] * tw.eps[c, k]
                       + G[1, k] * tw.U[p, k] + G[1, 3 + k] * tw.eps[p, k])
            lw.gc[nc] = s_
            for col in range(N):
                acc = 0.0
                for k in range(3):
                    acc += (G[0, k] * tw.Jv[c, col, k] + G[0, 3 + k] * tw.Jw[c, col, k]
                            + G[1, k] * tw.Jv[p, col, k] + G[1, 3 + k] * tw.Jw[p, col, k])
                lw.Hc[nc, col] = acc
            nc += 1
    return nc


@nb.njit(**OPTS)
def _multipliers(L, Hc, gc, x0, nc, rcond, rank, lam, sv_out):
    """Minimum-norm ``lam`` of ``H_c A^-1 H_c^T lam = gc - H_c x0`` (``A = L L^T``): with
    ``Y = L^-1 H_c^T = U s V^T``, ``lam = V s^-2 V^T (gc - H_c x0)`` over the singular values
    above ``rcond s_max`` or, for ``rank >= 0`` (a simulation's rank on the constraint
    manifold, as in :func:`mbcourse.loops._kkt`), the first ``rank`` of those above
    ``1e-14 s_max``. The singular values go to ``sv_out`` (zero beyond their number)."""
    N = L.shape[0]
    y = np.empty(N)
    Y = np.empty((N, nc))
    for a in range(nc):
        lower_solve(L, Hc[a], y)
        for k in range(N):
            Y[k, a] = y[k]
    U, sv, Vt = np.linalg.svd(Y, full_matrices=False)
    res = np.empty(nc)
    for a in range(nc):
        s_ = gc[a]
        for k in range(N):
            s_ -= Hc[a, k] * x0[k]
        res[a] = s_
    sv_out[:] = 0.0
    z = np.zeros(sv.shape[0])
    for a in range(sv.shape[0]):
        sv_out[a] = sv[a]
        keep = sv[a] > rcond * sv[0] if rank < 0 else (a < rank and sv[a] > 1e-14 * sv[0])
        if keep:
            s_ = 0.0
            for k in range(nc):
                s_ += Vt[a, k] * res[k]
            z[a] = s_ / (sv[a] * sv[a])
    for k in range(nc):
        s_ = 0.0
        for a in range(sv.shape[0]):
            s_ += Vt[a, k] * z[a]
        lam[k] = s_


@nb.njit(**INLINE)
def _tree_accelerations(nc, rcond, rank, lw):
    """``qdd_T = A^-1 (rhs + H_c^T lam)`` with the multipliers of :func:`_multipliers`;
    False if ``A`` is not positive definite."""
    Hm, Hc, qddT, lam, N = lw.Hm, lw.Hc, lw.qddT, lw.lam, lw.Hm.shape[0]
    if not cholesky_factor(Hm):
        return False
    y = np.empty(N)
    x0 = np.empty(N)
    lower_solve(Hm, lw.rhs, y)
    upper_solve(Hm, y, x0)
    qddT[:] = x0
    if nc > 0:
        _multipliers(Hm, Hc, lw.gc, x0, nc, rcond, rank, lam, lw.sv)
        hl = np.zeros(N)
        for k in range(N):
            s_ = 0.0
            for a in range(nc):
                s_ += Hc[a, k] * lam[a]
            hl[k] = s_
        lower_solve(Hm, hl, y)
        upper_solve(Hm, y, x0)
        for k in range(N):
            qddT[k] += x0[k]
    return True


@nb.njit(**INLINE)
def _cut_accelerations(cints, cgeo, q, qd, qdd, tw, lw):
    """The cut joints' accelerations from their bodies' ``X = (U + Phi^T qdd_T,
    eps + (pT)^T qdd_T)`` (:func:`~mbcourse.kernels.common.joint_acceleration`). False if
    a joint's speed columns are dependent."""
    X, N, A, v, jw = lw.X, lw.qddT.shape[0], tw.Ab, lw.v, lw.jw
    for b in range(1, X.shape[0]):
        for k in range(3):
            a_, e_ = tw.U[b, k], tw.eps[b, k]
            for col in range(N):
                a_ += tw.Jv[b, col, k] * lw.qddT[col]
                e_ += tw.Jw[b, col, k] * lw.qddT[col]
            X[b, k], X[b, 3 + k] = a_, e_
    for j in range(cints.shape[0]):
        p, c, vk, nk = cints[j, 1], cints[j, 2], cints[j, 4], cints[j, I_NV]
        if nk == 0:
            continue
        joint_motion(j, cints, cgeo, q, qd, lw.R0, jw)
        for k in range(3):
            v[8, k] = cgeo[j, 12 + k] + jw[J_Z, k]
        mv3(A[p], v[8], v[6])                            # parent's centre -> joint point
        mv3(A[c], cgeo[j, 15:18], v[7])                  # child's centre -> joint point
        if not joint_acceleration(jw, nk, A[p], tw.omega[p], tw.omega[c], X[p], X[c], v[6],
                                  v[7], lw.S6, v[0:6], qdd[vk:vk + nk]):
            return False
    return True


@nb.njit(**INLINE)
def _one(ints, geo, body, cints, cgeo, q_tree, v_tree, limits, q, qd, tau, qdd, tw, lw, cw):
    """Chapter 6 for one configuration; returns the number of rows, or -1 if the state
    does not close the loops (the checked route then names the joint) or ``A`` is not
    positive definite. ``lw.Hm`` keeps ``A`` factored, ``lw.lam`` the multipliers."""
    N, qT, qdT, tauT = v_tree.shape[0], lw.qT, lw.qdT, lw.tauT
    for k in range(q_tree.shape[0]):
        qT[k] = q[q_tree[k]]
    for k in range(N):
        qdT[k] = qd[v_tree[k]]
        tauT[k] = tau[v_tree[k]]
    if not tree_one(ints, geo, body, qT, qdT, lw.Hm, lw.Bv, tw):
        return -1                       # a far quaternion, a spring whose points coincide
    _centres(ints, body, tw, lw)
    if not _closes(cints, cgeo, q, qd, limits[1], tw, lw):
        return -1
    spring_torques(ints, geo, qT, qdT, tauT, lw.rhs)     # tau and the joint springs
    for k in range(N):
        lw.rhs[k] += lw.Bv[k]
    for j in range(cints.shape[0]):
        vk, nk = cints[j, 4], cints[j, I_NV]
        loaded = False
        for k in range(nk):
            loaded = loaded or tau[vk + k] != 0.0
        if loaded and not _cut_force(j, cints, cgeo, q, qd, tau[vk:vk + nk], tw, lw):
            return -1
    nc = _cut_rows(cints, cgeo, tw, lw, cw)
    if not _tree_accelerations(nc, limits[0], -1, lw):
        return -1
    for k in range(N):
        qdd[v_tree[k]] = lw.qddT[k]
    if not _cut_accelerations(cints, cgeo, q, qd, qdd, tw, lw):
        return -1
    return nc


@nb.njit(**OPTS)
def _workspaces(ints, geo, body, cints, cgeo, q_tree, v_tree):
    """``(tw, lw, cw, keep)``: the reduced tree's, the loops' and the cut joints' work
    arrays, borrowed (:func:`~mbcourse.kernels.common.borrow`), and their owners, which
    a kernel that makes them keeps to its end (:func:`~mbcourse.kernels.common.release`)."""
    N = v_tree.shape[0]
    tw, keep_t = tree_workspace(ints, geo, body, N)
    lw, keep_l = _loop_work(body.shape[0], N, q_tree.shape[0], cgeo)
    cw, keep_c = row_workspace(cints.shape[0], body.shape[0])
    return tw, lw, cw, (keep_t, keep_l, keep_c)


@nb.njit(**OPTS)
def loops_forward(ints, geo, body, cints, cgeo, q_tree, v_tree, limits, q, qd, tau, qdd):
    """Chapter 6's cut-joint method for a batch (the arguments before ``q`` are a
    :class:`CutData`'s): ``q`` (B, nq), ``qd``, ``tau`` (B, nv) into ``qdd``. False if a
    state does not close the loops, a mass matrix is singular or a value is not finite."""
    ints, geo, body, cints, cgeo, q_tree, v_tree, limits = (
        borrow(ints), borrow(geo), borrow(body), borrow(cints), borrow(cgeo), borrow(q_tree),
        borrow(v_tree), borrow(limits))
    q, qd, tau, qdd = borrow(q), borrow(qd), borrow(tau), borrow(qdd)
    tw, lw, cw, keep = _workspaces(ints, geo, body, cints, cgeo, q_tree, v_tree)
    ok = True
    for b in range(q.shape[0]):
        if _one(ints, geo, body, cints, cgeo, q_tree, v_tree, limits, q[b], qd[b], tau[b],
                qdd[b], tw, lw, cw) < 0 or not finite(qdd[b]):
            ok = False
            break
    return release(keep, ok)


@nb.njit(**OPTS)
def loops_intermediates(ints, geo, body, cints, cgeo, q_tree, v_tree, limits, q, qd, tau, qdd,
                        H, lam, reaction):
    """:func:`loops_forward` that also writes chapter 6's intermediates (the diagnostic
    entry): ``H`` (B, N, N) the reduced tree's mass matrix ``A`` (3.186), ``lam`` (B, 6 K)
    the cut joints' multipliers (3.189) of chapter 2's rows, joint by joint in each joint's
    order of rows (zero beyond the rows the joints have), and ``reaction`` (B, N) their
    generalized force on the tree ``H_c^T lam = A qdd_T - B``. Returns the number of rows
    per configuration (-1 where the state was refused)."""
    ints, geo, body, cints, cgeo, q_tree, v_tree, limits = (
        borrow(ints), borrow(geo), borrow(body), borrow(cints), borrow(cgeo), borrow(q_tree),
        borrow(v_tree), borrow(limits))
    q, qd, tau, qdd, H, lam, reaction = (borrow(q), borrow(qd), borrow(tau), borrow(qdd),
                                         borrow(H), borrow(lam), borrow(reaction))
    N = v_tree.shape[0]
    tw, lw, cw, keep = _workspaces(ints, geo, body, cints, cgeo, q_tree, v_tree)
    rows = np.zeros(q.shape[0], dtype=np.int64)
    for b in range(q.shape[0]):
        for k in range(qd.shape[1]):
            qdd[b, k] = 0.0
        for k in range(q_tree.shape[0]):                 # A before its factorization
            lw.qT[k] = q[b, q_tree[k]]
        for k in range(N):
            lw.qdT[k] = qd[b, v_tree[k]]
        tree_one(ints, geo, body, lw.qT, lw.qdT, H[b], lw.Bv, tw)
        rows[b] = _one(ints, geo, body, cints, cgeo, q_tree, v_tree, limits, q[b], qd[b],
                       tau[b], qdd[b], tw, lw, cw)
        lam[b, :] = lw.lam
        for k in range(N):
            s_ = 0.0
            for r in range(max(rows[b], 0)):
                s_ += lw.Hc[r, k] * lw.lam[r]
            reaction[b, k] = s_
    return release(keep, rows)


@nb.njit(**OPTS)
def loops_reduced(ints, geo, body, cints, cgeo, q_tree, v_tree, limits, qT, vT, tauT, rank,
                  qddT, sv, power):
    """The reduced system's accelerations, the right-hand side of a simulation in the tree's
    coordinates: ``qdd_T`` (N,) of ``qT`` (NQ,), ``vT`` (N,) with the generalized forces ``tauT``
    (N,) on them, the cut joints' rows taken from the bodies' poses and velocities (their
    own coordinates are not needed), no closure test (a state between two projections lies
    a little off the manifold) and, for ``rank >= 0``, the rank found on the manifold (see
    :func:`_multipliers`). Writes the singular values of ``L^-1 H_c^T`` to ``sv`` (6 K,)
    and the dampers' power (:func:`~mbcourse.kernels.common.damping_power`) to ``power``
    (1,); returns the number of rows, or -1 when ``A`` is not positive definite or a value
    is not finite."""
    ints, geo, body, cints, cgeo, q_tree, v_tree, limits = (
        borrow(ints), borrow(geo), borrow(body), borrow(cints), borrow(cgeo), borrow(q_tree),
        borrow(v_tree), borrow(limits))
    qT, vT, tauT, qddT, sv, power = (borrow(qT), borrow(vT), borrow(tauT), borrow(qddT),
                                     borrow(sv), borrow(power))
    N = v_tree.shape[0]
    tw, lw, cw, keep = _workspaces(ints, geo, body, cints, cgeo, q_tree, v_tree)
    for k in range(q_tree.shape[0]):
        lw.qT[k] = qT[k]
    for k in range(N):
        lw.qdT[k] = vT[k]
    if not tree_one(ints, geo, body, lw.qT, lw.qdT, lw.Hm, lw.Bv, tw):
        return release(keep, -1)
    _centres(ints, body, tw, lw)
    power[0] = damping_power(ints, geo, body, tw.Ab, lw.r, lw.vel, tw.omega, lw.qdT, lw.v)
    spring_torques(ints, geo, lw.qT, lw.qdT, tauT, lw.rhs)
    for k in range(N):
        lw.rhs[k] += lw.Bv[k]
    nc = _cut_rows(cints, cgeo, tw, lw, cw)
    if not _tree_accelerations(nc, limits[0], rank, lw):
        return release(keep, -1)
    for k in range(N):
        qddT[k] = lw.qddT[k]
    for k in range(sv.shape[0]):
        sv[k] = lw.sv[k]
    return release(keep, nc if finite(qddT) else -1)


@nb.njit(**OPTS)
def loops_closure(ints, geo, body, cints, cgeo, q_tree, v_tree, limits, qT, f, H, ft, scale):
    """How far the tree's configuration ``qT`` (NQ,) is from closing the loops, for the
    Newton projection of a simulation: the cut joints' rows' position residuals ``f``
    (chapter 2's functions, :func:`~mbcourse.kernels.cartesian.row_residual`), their
    Jacobian in the tree's speeds ``H`` (the rows ``H_c`` of (3.188)) and their rates at
    rest ``ft`` (nonzero only when the base moves), written to the first ``nc`` entries of
    ``f`` (6 K,), ``H`` (6 K, N), ``ft`` (6 K,); ``scale[0] = 1 + max |r|`` over the
    centres. Returns ``nc``, or -1 when the tree's kernel declines the configuration."""
    ints, geo, body, cints, cgeo, q_tree, v_tree, limits = (
        borrow(ints), borrow(geo), borrow(body), borrow(cints), borrow(cgeo), borrow(q_tree),
        borrow(v_tree), borrow(limits))
    qT, f, H, ft, scale = borrow(qT), borrow(f), borrow(H), borrow(ft), borrow(scale)
    N = v_tree.shape[0]
    tw, lw, cw, keep = _workspaces(ints, geo, body, cints, cgeo, q_tree, v_tree)
    for k in range(q_tree.shape[0]):
        lw.qT[k] = qT[k]
    for k in range(N):
        lw.qdT[k] = 0.0
    if not tree_one(ints, geo, body, lw.qT, lw.qdT, lw.Hm, lw.Bv, tw):
        return release(keep, -1)
    _centres(ints, body, tw, lw)
    nc = _cut_rows(cints, cgeo, tw, lw, cw)
    row = 0
    for j in range(cints.shape[0]):
        p, c = cints[j, 1], cints[j, 2]
        for r in range(cints[j, I_ROWS]):
            g = cgeo[j, G_ROWS + ROW_WIDTH * r:G_ROWS + ROW_WIDTH * (r + 1)]
            f[row] = row_residual(int(g[R_TYPE]), g, p, c, lw.r, tw.Ab, lw.v)
            s_ = 0.0
            for k in range(3):
                s_ += (cw.Qi[j, r, k] * lw.vel[p, k] + cw.Qj[j, r, k] * lw.vel[c, k]
                       + cw.Qi[j, r, 3 + k] * cw.w[p, k] + cw.Qj[j, r, 3 + k] * cw.w[c, k])
            ft[row] = s_
            for col in range(N):
                H[row, col] = lw.Hc[row, col]
            row += 1
    big = 0.0
    for b in range(lw.r.shape[0]):
        for k in range(3):
            big = max(big, abs(lw.r[b, k]))
    scale[0] = 1.0 + big
    return release(keep, nc)
