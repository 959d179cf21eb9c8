"""Chapter 6 compiled: the cut-joint method, Yudintsev (3.186)-(3.201).

For one configuration: the reduced tree's ``A qdd_T = B`` (``A = H``, the tree's mass matrix,
by :mod:`~mbcourse.kernels.composite`), each cut joint's rows ``H_c qdd_T = gamma`` from the
bodies' Jacobians, the minimum-norm multipliers ``lambda`` from an SVD of ``L^-1 H_c^T``
(``A = L L^T``), and the cut joints' accelerations from their bodies. The cut joints' rows
are written in inertial axes at the centres of mass (the rows of
:mod:`~mbcourse.kernels.cartesian_inertial`). :func:`loops_intermediates` exposes ``H`` and
``lambda`` for the tests, which compare them with :func:`mbcourse.loops.solve`.
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from .cartesian_inertial import joint_acceleration, joint_rows
from .common import (INLINE, OPTS, PRISMATIC, REVOLUTE, WELD, centres, cholesky_factor, cross,
                     joint_wrench, lower_solve, matvec, rodrigues, upper_solve, workspace)
from .composite import tree_one

__all__ = ["CutData", "loops_forward", "loops_intermediates"]


class CutData(NamedTuple):
    """Packed constants of the cut-joint kernel (prepared by ``mb.loops`` once per model
    version): the reduced tree's ``ints, geo, body`` (see
    :func:`mbcourse.kernels.pack_chain`, its own coordinates), the cut joints' ``cints``
    (kind, parent, child, q index, v index in the Model's vectors) and ``cgeo``, the
    positions ``q_tree``, ``v_tree`` of the tree's coordinates in the Model's, ``limits``
    ``(rcond, tol)`` (the SVD's cut-off, the closure tolerance) and the Model's ``nv``."""
    ints: np.ndarray
    geo: np.ndarray
    body: np.ndarray
    cints: np.ndarray
    cgeo: np.ndarray
    q_tree: np.ndarray
    v_tree: np.ndarray
    limits: np.ndarray
    nv: int

    def args(self, gravity=True):
        """The kernel's leading arguments (gravity is part of the reduced tree's data)."""
        return self[:8]


class _LoopWork(NamedTuple):
    """Work arrays of one configuration (``N`` tree speeds, ``K`` cut joints)."""
    r: np.ndarray        # (n1, 3) centres of mass
    vel: np.ndarray      # (n1, 3) their velocities
    J: np.ndarray        # (n1, 6, N) the bodies' Jacobians
    X: np.ndarray        # (n1, 6) the bodies' accelerations
    qT: np.ndarray       # (N,) the tree's q, qd, tau
    qdT: np.ndarray
    tauT: np.ndarray
    Hm: np.ndarray       # (N, N) A = H, factored in place
    hb: np.ndarray       # (N,)
    G: np.ndarray        # (2, 6, 6) one joint's rows on child and parent
    gam: np.ndarray      # (6,)
    tmp6: np.ndarray     # (6,)
    rhs: np.ndarray      # (N,) B + B* + tau
    Hc: np.ndarray       # (6 K, N) the cut joints' rows
    gc: np.ndarray       # (6 K,) their right-hand sides
    lam: np.ndarray      # (6 K,) the multipliers
    qddT: np.ndarray     # (N,) the tree's accelerations
    scale: np.ndarray    # (2,) length and speed scales of the closure test


@nb.njit(**OPTS)
def _loop_work(n1, N, K):
    return _LoopWork(np.empty((n1, 3)), np.empty((n1, 3)), np.empty((n1, 6, N)),
                     np.empty((n1, 6)), np.empty(N), np.empty(N), np.empty(N), np.empty((N, N)),
                     np.empty(N), np.empty((2, 6, 6)), np.empty(6), np.empty(6), np.empty(N),
                     np.zeros((6 * K, N)), np.zeros(6 * K), np.zeros(6 * K), np.empty(N),
                     np.empty(2))


@nb.njit(**INLINE)
def _jacobians(ints, ws, lw):
    """The bodies' Jacobians ``J`` (``v_c = v_p + w_p x rho``, plus ``S`` in the joint's
    column) and the closure test's scales from the centres and velocities."""
    J, r, rho, S, om, vel = lw.J, lw.r, ws.rho, ws.S, ws.om, lw.vel
    N = J.shape[2]
    for col in range(N):
        for k in range(6):
            J[0, k, col] = 0.0
    scale = 1.0
    for i in range(ints.shape[0]):
        kind, p, c, vk = ints[i, 0], ints[i, 1], ints[i, 2], ints[i, 4]
        for k in range(3):
            scale = max(scale, 1.0 + abs(r[c, k]))
        for col in range(N):                             # v_c = v_p + w_p x rho
            for k in range(3):
                J[c, 3 + k, col] = J[p, 3 + k, col]
            J[c, 0, col] = J[p, 0, col] + J[p, 4, col] * rho[i, 2] - J[p, 5, col] * rho[i, 1]
            J[c, 1, col] = J[p, 1, col] + J[p, 5, col] * rho[i, 0] - J[p, 3, col] * rho[i, 2]
            J[c, 2, col] = J[p, 2, col] + J[p, 3, col] * rho[i, 1] - J[p, 4, col] * rho[i, 0]
        if kind != WELD:
            for k in range(6):
                J[c, k, vk] += S[i, k]
    vscale = 1.0
    for b in range(r.shape[0]):
        for k in range(3):
            vscale = max(vscale, 1.0 + abs(vel[b, k]) + abs(om[b, k]) * scale)
    lw.scale[0] = scale
    lw.scale[1] = vscale


@nb.njit(**OPTS)
def _oriented(kind, g, qj, A, p, c, R, Rj, tol):
    """Whether a cut joint's child has the orientation the joint gives it:
    ``|A_c - A_p rot(e, q) R0| <= tol``."""
    for a in range(3):
        for bb in range(3):
            Rj[a, bb] = 1.0 if a == bb else 0.0
    if kind == REVOLUTE:
        rodrigues(g[0:3], qj, Rj)
    for a in range(3):                                   # R = Rj R0
        for bb in range(3):
            acc = 0.0
            for k in range(3):
                acc += Rj[a, k] * g[3 + 3 * k + bb]
            R[a, bb] = acc
    for a in range(3):                                   # A_c - A_p R
        for bb in range(3):
            acc = 0.0
            for k in range(3):
                acc += A[p, a, k] * R[k, bb]
            if abs(A[c, a, bb] - acc) > tol:
                return False
    return True


@nb.njit(**INLINE)
def _closes(cints, cgeo, q, qd, tol, ws, lw):
    """Whether the state closes every loop (position and velocity, each cut joint with its
    own q, qd) to ``tol`` relative to the scales of :func:`_jacobians`."""
    A, om, r, vel = ws.A, ws.om, lw.r, lw.vel
    v = ws.v
    e, rc, ri, d, h = v[0], v[1], v[2], v[5], v[7]
    R, Rj = ws.t3[0], ws.t3[1]
    scale, vscale = lw.scale[0], lw.scale[1]
    for j in range(cints.shape[0]):
        kind, p, c, qk, vk = cints[j, 0], cints[j, 1], cints[j, 2], cints[j, 3], cints[j, 4]
        g = cgeo[j]
        qj = q[qk] if kind != WELD else 0.0
        vj = qd[vk] if kind != WELD else 0.0
        if not _oriented(kind, g, qj, A, p, c, R, Rj, tol):
            return False
        matvec(A[p], g[0:3], e)
        matvec(A[c], g[15:18], rc)
        for k in range(3):
            h[k] = g[12 + k] + (g[k] * qj if kind == PRISMATIC else 0.0)
        matvec(A[p], h, ri)                              # parent's centre -> joint point
        for k in range(3):
            if abs(r[c, k] + rc[k] - r[p, k] - ri[k]) > tol * scale:
                return False
        for k in range(3):
            rel = om[c, k] - om[p, k] - (e[k] * vj if kind == REVOLUTE else 0.0)
            if abs(rel) > tol * vscale:
                return False
        cross(om[c], rc, h)
        cross(om[p], ri, d)
        for k in range(3):
            slid = e[k] * vj if kind == PRISMATIC else 0.0
            rel = vel[c, k] + h[k] - vel[p, k] - d[k] - slid
            if abs(rel) > tol * vscale:
                return False
    return True


@nb.njit(**OPTS)
def _cut_force(kind, g, p, c, slide, force, ws, lw):
    """``B*`` (3.201): a cut joint's drive ``force`` as wrench pairs on its bodies, added
    to ``rhs`` through the bodies' Jacobians (``J_c^T W_c + J_p^T W_p``)."""
    A, v, J, W, rhs = ws.A, ws.v, lw.J, lw.tmp6, lw.rhs
    e, rc, ri, h = v[0], v[1], v[2], v[7]
    N = J.shape[2]
    matvec(A[p], g[0:3], e)
    matvec(A[c], g[15:18], rc)
    for k in range(3):
        h[k] = g[12 + k] + (g[k] * slide if kind == PRISMATIC else 0.0)
    matvec(A[p], h, ri)
    joint_wrench(kind, force, e, rc, W)
    for col in range(N):                                 # J_c^T W_c
        acc = 0.0
        for k in range(6):
            acc += J[c, k, col] * W[k]
        rhs[col] += acc
    joint_wrench(kind, -force, e, ri, W)
    for col in range(N):                                 # J_p^T W_p
        acc = 0.0
        for k in range(6):
            acc += J[p, k, col] * W[k]
        rhs[col] += acc


@nb.njit(**INLINE)
def _cut_rows(cints, cgeo, q, tau, ws, lw):
    """Every cut joint's rows ``H_c qdd_T = gamma_c`` (``gamma`` less the rows applied to
    the bodies' accelerations at ``qdd_T = 0``) and ``rhs = B + B* + tau``; returns the
    number of rows."""
    J, G, w, gam, gc, Hc = lw.J, lw.G, ws.w, lw.gam, lw.gc, lw.Hc
    N, rhs, tauT, hb = J.shape[2], lw.rhs, lw.tauT, lw.hb
    for k in range(N):
        rhs[k] = tauT[k] - hb[k]
    nc = 0
    for j in range(cints.shape[0]):
        kind, p, c, qk, vk = cints[j, 0], cints[j, 1], cints[j, 2], cints[j, 3], cints[j, 4]
        slide = q[qk] if kind == PRISMATIC else 0.0
        nrow = joint_rows(kind, cgeo[j], p, c, slide, ws.A, ws.om, lw.vel, G[0], G[1],
                           lw.gam, ws.v, lw.tmp6)
        for a in range(nrow):
            s_ = gam[a]
            for k in range(6):
                s_ -= G[0, a, k] * w[c, k] + G[1, a, k] * w[p, k]
            gc[nc + a] = s_
            for col in range(N):
                acc = 0.0
                for k in range(6):
                    acc += G[0, a, k] * J[c, k, col] + G[1, a, k] * J[p, k, col]
                Hc[nc + a, col] = acc
        nc += nrow
        if kind != WELD and tau[vk] != 0.0:
            _cut_force(kind, cgeo[j], p, c, slide, tau[vk], ws, lw)
    return nc


@nb.njit(**OPTS)
def _multipliers(L, Hc, gc, x0, nc, rcond, lam):
    """Minimum-norm ``lam`` of ``H_c A^-1 H_c^T lam = gc - H_c x0`` (``A = L L^T``): with
    ``Y = L^-1 H_c^T = U s V^T``, ``lam = V s^-2 V^T (gc - H_c x0)`` over the singular values
    above ``rcond s_max``."""
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
    z = np.zeros(sv.shape[0])
    for a in range(sv.shape[0]):
        if sv[a] > rcond * sv[0]:
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
def _tree_accelerations(nc, rcond, lw):
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
        _multipliers(Hm, Hc, lw.gc, x0, nc, rcond, lam)
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
def _cut_accelerations(cints, cgeo, q, qd, qddT, qdd, ws, lw):
    """The cut joints' accelerations from their bodies' ``X = J qdd_T + w``."""
    J, X, w, N = lw.J, lw.X, ws.w, qddT.shape[0]
    for b in range(X.shape[0]):
        for k in range(6):
            s_ = w[b, k] if b > 0 else 0.0
            for col in range(N):
                s_ += J[b, k, col] * qddT[col]
            X[b, k] = s_
    for j in range(cints.shape[0]):
        kind, p, c, qk, vk = cints[j, 0], cints[j, 1], cints[j, 2], cints[j, 3], cints[j, 4]
        if kind != WELD:
            qdd[vk] = joint_acceleration(kind, cgeo[j], p, c, q[qk], qd[vk], ws.A, ws.om,
                                          lw.vel, X, ws.v)


@nb.njit(**INLINE)
def _one(ints, geo, body, cints, cgeo, q_tree, v_tree, limits, q, qd, tau, qdd, ws, lw):
    """Chapter 6 for one configuration; returns the number of rows, or -1 if the state
    does not close the loops (the checked route then names the joint) or ``A`` is not
    positive definite. ``lw.Hm`` keeps ``A`` factored, ``lw.lam`` the multipliers."""
    N, qT, qdT, tauT, qddT = q_tree.shape[0], lw.qT, lw.qdT, lw.tauT, lw.qddT
    for k in range(N):
        qT[k] = q[q_tree[k]]
        qdT[k] = qd[v_tree[k]]
        tauT[k] = tau[v_tree[k]]
    tree_one(ints, geo, body, lw.qT, lw.qdT, lw.Hm, lw.hb, ws)
    centres(ints, geo, lw.qdT, ws.A, ws.om, ws.rho, lw.r, lw.vel, ws.v)
    _jacobians(ints, ws, lw)
    if not _closes(cints, cgeo, q, qd, limits[1], ws, lw):
        return -1
    nc = _cut_rows(cints, cgeo, q, tau, ws, lw)
    if not _tree_accelerations(nc, limits[0], lw):
        return -1
    for k in range(N):
        qdd[v_tree[k]] = qddT[k]
    _cut_accelerations(cints, cgeo, q, qd, lw.qddT, qdd, ws, lw)
    return nc


@nb.njit(**OPTS)
def loops_forward(ints, geo, body, cints, cgeo, q_tree, v_tree, limits, q, qd, tau, qdd):
    """Chapter 6's cut-joint method for a batch (the arguments before ``q`` are a
    :class:`CutData`'s): ``q`` (B, nq), ``qd``, ``tau`` (B, nv) into ``qdd``. False if a
    state does not close the loops, a mass matrix is singular or a value is not finite."""
    ws = workspace(ints, geo, body)
    lw = _loop_work(body.shape[0], q_tree.shape[0], cints.shape[0])
    ok = True
    for b in range(q.shape[0]):
        if _one(ints, geo, body, cints, cgeo, q_tree, v_tree, limits, q[b], qd[b], tau[b],
                qdd[b], ws, lw) < 0:
            ok = False
            break
        for k in range(qdd.shape[1]):
            if not np.isfinite(qdd[b, k]):
                ok = False
    return ok


@nb.njit(**OPTS)
def loops_intermediates(ints, geo, body, cints, cgeo, q_tree, v_tree, limits, q, qd, tau, qdd,
                        H, lam, reaction):
    """:func:`loops_forward` that also writes chapter 6's intermediates (the diagnostic
    entry): ``H`` (B, N, N) the reduced tree's mass matrix ``A`` (3.186), ``lam`` (B, 6 K)
    the cut joints' multipliers (3.189) of the kernel's rows (zero beyond the rows the
    joints have) and ``reaction`` (B, N) their generalized force on the tree,
    ``H_c^T lam = A qdd_T - B`` (the same whatever rows describe the cut joints). Returns
    the number of rows per configuration (-1 where the state was refused)."""
    ws = workspace(ints, geo, body)
    N, K = q_tree.shape[0], cints.shape[0]
    rows = np.zeros(q.shape[0], dtype=np.int64)
    lw = _loop_work(body.shape[0], N, K)
    for b in range(q.shape[0]):
        for k in range(qd.shape[1]):
            qdd[b, k] = 0.0
        q_b, qd_b = q[b], qd[b]
        for k in range(N):
            lw.qT[k] = q_b[q_tree[k]]
            lw.qdT[k] = qd_b[v_tree[k]]
        tree_one(ints, geo, body, lw.qT, lw.qdT, H[b], lw.hb, ws)
        rows[b] = _one(ints, geo, body, cints, cgeo, q_tree, v_tree, limits, q_b, qd_b, tau[b],
                       qdd[b], ws, lw)
        lam[b, :] = lw.lam
        for k in range(N):
            s_ = 0.0
            for r in range(max(rows[b], 0)):
                s_ += lw.Hc[r, k] * lw.lam[r]
            reaction[b, k] = s_
    return rows
