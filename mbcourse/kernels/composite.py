"""The tree equations ``A qdd = B`` assembled by composite bodies (not chapter 3's algorithm).

Chapter 3 assembles ``A = Phi m Phi^T`` (3.163)-(3.167); this kernel builds the same
matrices by the composite-rigid-body algorithm (Featherstone's ``HandC``): the velocity and
gravity terms by one outward and one inward pass with ``qdd = 0``, the mass matrix
``H_ij = S_i^T (C^T ... I_j S_j)`` from the composite inertias, in ``O(n d)`` (``d`` the depth
of the tree), then Cholesky. Public as :func:`mbcourse.tree.forward_dynamics_composite`; the
loops kernel (chapter 6) uses it for the reduced tree's ``H``.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .common import (B_BASE, I_NV, INLINE, OPTS, borrow, cholesky_solve, cross, finite, fold,
                     kinematics, matvec, release, shift, spring_torques, workspace)

__all__ = ["tree_one", "composite_forward", "composite_matrices"]


@nb.njit(**INLINE)
def _bias(ints, body, hb, ws):
    """The velocity and gravity terms ``hb`` (``B = tau - hb``): accelerations with
    ``qdd = 0`` outward from the base's (zero, or its prescribed acceleration in ``body``'s
    row 0), ``f_b = M_b w_b - Q_b`` summed inward; also the composite inertias ``Ic`` and
    ``up`` (the joint above each body)."""
    w, f, Ic, Ms, rho, h = ws.w, ws.f, ws.Ic, ws.Ms, ws.rho, ws.v[8]
    w0, Qs, S, up, Ma = ws.w0, ws.Qs, ws.S, ws.up, ws.Ma
    m = ints.shape[0]
    for r in range(6):
        w[0, r] = body[0, B_BASE + 12 + r]
    for i in range(m):                                  # accelerations with q'' = 0
        p, c = ints[i, 1], ints[i, 2]
        up[c] = i
        cross(w[p, 3:], rho[i], h)
        for k in range(3):
            w[c, k] = w0[i, k] + w[p, k] + h[k]
            w[c, k + 3] = w0[i, k + 3] + w[p, k + 3]
    for b in range(1, Ms.shape[0]):                     # f_b = M_b w_b - Q_b, I_b = M_b
        for r in range(6):
            s = -Qs[b, r]
            for k in range(6):
                s += Ms[b, r, k] * w[b, k]
                Ic[b, r, k] = Ms[b, r, k]
            f[b, r] = s
    for i in range(m - 1, -1, -1):                      # inward: bias and composite bodies
        p, c = ints[i, 1], ints[i, 2]
        for l in range(ints[i, 4], ints[i, 4] + ints[i, I_NV]):
            s = 0.0
            for k in range(6):
                s += S[l, k] * f[c, k]
            hb[l] = s
        shift(f[c], rho[i])
        for k in range(6):
            f[p, k] += f[c, k]
        if p > 0:
            Ma[:, :] = Ic[c]
            fold(Ma, rho[i], Ic[p])


@nb.njit(**INLINE)
def _mass_matrix(ints, H, ws):
    """``H_jj = S_j^T I_j S_j`` and up the path to the base ``H_ij = S_i^T (C^T ... I_j
    S_j)`` from the composite inertias ``Ic``, speed by speed (``S_j`` a column of joint
    ``j``, ``S_i`` of a joint on its path, or of joint ``j`` itself)."""
    S, F, Ic, rho, up = ws.S, ws.F, ws.Ic, ws.rho, ws.up
    for r in range(H.shape[0]):
        for k in range(H.shape[1]):
            H[r, k] = 0.0                               # joints on different branches
    for j in range(ints.shape[0]):
        c = ints[j, 2]
        for vj in range(ints[j, 4], ints[j, 4] + ints[j, I_NV]):
            matvec(Ic[c], S[vj], F)
            for l in range(ints[j, 4], vj + 1):
                s = 0.0
                for k in range(6):
                    s += S[l, k] * F[k]
                H[vj, l] = H[l, vj] = s
            i = j
            while ints[i, 1] != 0:
                shift(F, rho[i])                     # to the parent's centre of mass
                i = up[ints[i, 1]]
                for l in range(ints[i, 4], ints[i, 4] + ints[i, I_NV]):
                    s = 0.0
                    for k in range(6):
                        s += S[l, k] * F[k]
                    H[l, vj] = H[vj, l] = s


@nb.njit(**INLINE)
def tree_one(ints, geo, body, q, qd, H, hb, ws):
    """``A = H`` and ``B = tau - hb`` of chapter 3 for one configuration, by composite
    bodies (the same matrices as ``mb.tree``'s ``Phi m Phi^T`` assembly); False for a
    quaternion far from unit norm."""
    if not kinematics(ints, geo, body, q, qd, ws):
        return False
    _bias(ints, body, hb, ws)
    _mass_matrix(ints, H, ws)
    return True


@nb.njit(**OPTS)
def composite_forward(ints, geo, body, q, qd, tau, qdd):
    """The tree equations ``A q'' = B`` for a batch, assembled by composite bodies and
    solved by Cholesky: ``q`` (B, nq), ``qd``, ``tau`` (B, nv) into ``qdd``. Returns False
    if a mass matrix is not positive definite or a value is not finite."""
    ints, geo, body, q, qd, tau, qdd = (borrow(ints), borrow(geo), borrow(body), borrow(q),
                                        borrow(qd), borrow(tau), borrow(qdd))
    nv = qd.shape[1]
    ws, keep = workspace(ints, geo, body)
    owner = np.empty(nv * nv + nv)
    buf = borrow(owner)
    H, hb = buf[:nv * nv].reshape((nv, nv)), buf[nv * nv:]
    ok = True
    for b in range(q.shape[0]):
        if not tree_one(ints, geo, body, q[b], qd[b], H, hb, ws):
            ok = False
            continue
        spring_torques(ints, geo, q[b], qd[b], tau[b], qdd[b])
        for k in range(nv):
            qdd[b, k] -= hb[k]
        if not cholesky_solve(H, qdd[b]) or not finite(qdd[b]):
            ok = False
    return release((owner, keep), ok)


@nb.njit(**OPTS)
def composite_matrices(ints, geo, body, q, qd, H, hb):
    """Mass matrices ``H`` (B, nv, nv) and velocity-and-gravity terms ``hb`` (B, nv) of the
    tree equations (``A = H``, ``B = tau - hb``), by composite bodies."""
    ints, geo, body, q, qd, H, hb = (borrow(ints), borrow(geo), borrow(body), borrow(q),
                                     borrow(qd), borrow(H), borrow(hb))
    ws, keep = workspace(ints, geo, body)
    for b in range(q.shape[0]):
        tree_one(ints, geo, body, q[b], qd[b], H[b], hb[b], ws)
    release(keep, True)
