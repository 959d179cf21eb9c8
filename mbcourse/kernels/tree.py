"""Chapter 3's tree equations ``A qdd = B``, compiled: ``Phi m Phi^T`` with the chapter's
quantities (Yudintsev (3.101)-(3.167), after Wittenburg).

The same algorithm as the NumPy route :func:`mbcourse.tree.general._terms` and
:func:`mbcourse.tree.equations_from_terms`, written as loops over bodies and joints. All
vectors are in inertial axes; the tree's joints point away from the base, so the path
matrix ``T`` (1.4) has ``T_aj = -1`` exactly when joint ``a`` lies on the path from the base
to body ``j`` and ``0`` otherwise. The kernel keeps ``T`` column by column (``path[j]``: the
joints on the path of body ``j``, base first) and every product with ``T`` or ``T^T`` only
visits those entries:

* ``p_a``, ``k_a`` (3.101), (3.104) in inertial axes, ``Omega_a = p_a qd_a``;
* the actual hinge vectors ``c*_{ia} = c_{ia} + S+_{ia} z_a`` (3.150)-(3.151);
* ``omega = omega_0 1 - T^T Omega`` (3.114) and the angular accelerations at ``qdd = 0``,
  ``eps = -T^T f``, ``f_a = w_a + omega_{i-(a)} x Omega_a`` (3.82), (3.120);
* ``d*_{kj} = sum_a T_aj S_ka c*_ka`` (3.152) and ``TD_{aj} = sum_k T_ak d*_kj``;
* the Jacobian ``Phi_{(a), j} = p_a x TD_aj - k_a T_aj`` (3.163) (``Jv``, rows of
  ``Phi^T`` body by body) and ``Jw = -(pT)^T`` (3.122);
* the centre-of-mass accelerations at ``qdd = 0``: ``U = -T^T (sum_k S_ka ddc*_ka)``;
* ``A = Phi m Phi^T + (pT) J (pT)^T`` and
  ``B = Phi (F - m U) + (pT)(M - J eps - omega x J omega)`` (3.167), then Cholesky.

The products ``Phi m Phi^T`` cost ``O(sum_j depth_j^2)`` (``O(n^3)`` for a chain): the
chapter's algorithm, not the fastest one (composite bodies, :mod:`.composite`, and
Vereshchagin's ``O(n)`` recursion, :mod:`.vereshchagin`, build or avoid the same ``A``).

Examples
--------
>>> import numpy as np, mbcourse as mb
>>> from mbcourse.kernels import model_data
>>> data = model_data(mb.models.double_pendulum())
>>> A, B = np.zeros((1, 2, 2)), np.zeros((1, 2))
>>> tree_matrices(*data.args(), np.zeros((1, 2)), np.zeros((1, 2)), A, B)
>>> bool(np.allclose(A[0], mb.tree.mass_matrix(mb.models.double_pendulum(), [0.0, 0.0])))
True
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from .common import (B_BASE, B_FORCE, B_MOVING, B_SPRINGS, I_NV, J_K, J_KV, J_OM, J_P, J_R,
                     J_ROWS, J_SA, J_WA, J_Z, OPTS, base_state, borrow, cholesky_solve, cross,
                     finite, joint_motion, load_wrench, mm3, mv3, release, spring_torques,
                     spring_wrenches, take)

__all__ = ["TreeWork", "tree_workspace", "tree_one", "tree_forward", "tree_matrices",
           "tree_terms"]


class TreeWork(NamedTuple):
    """Work arrays of chapter 3's kernel (``n1 = n + 1`` bodies with the base, ``m`` joints,
    ``nv`` speeds), the names of :class:`mbcourse.tree.TreeTerms`.

    Structure (per model): ``up`` (n1,) the joint above each body, ``path`` (n1, n1) and
    ``depth`` (n1,): ``path[j, :depth[j]]`` are the joints with ``T_aj = -1``, base first;
    ``R0`` (m, 3, 3) fixed joint orientations, ``J0`` (n1, 3, 3) central inertias in body
    axes. Per state: body orientations ``Ab`` (n1, 3, 3) and central inertias ``I`` in
    inertial axes; per speed ``P``, ``K`` (nv, 3) (the columns of ``p_a``, ``k_a``); per
    joint ``Omega``, ``Kv`` (m, 3) (``p_a qd_a``, ``k_a qd_a``) and the bias terms ``Wb``,
    ``Sb`` (m, 3) (``w_a``, ``s_a`` (3.106), (3.102)); per body ``omega``, ``eps``, ``U``
    (n1, 3); ``Cstar``
    (n1, m, 3), ``dstar`` (n1, n1, 3) (column ``j`` for body ``j``), ``TD`` (m, n1, 3),
    ``Jv``, ``Jw`` (n1, nv, 3). Scratch ``col``, ``mcol`` (nv, 6), ``dof`` (nv,), ``t3``
    (3, 3, 3), ``v`` (8, 3), the joint's own motion ``jw``; for spring-dampers the centres
    ``r``, their velocities ``vel`` (n1, 3) and the springs' wrenches ``SF`` (n1, 6).
    Entries off the paths stay zero."""
    up: np.ndarray
    path: np.ndarray
    depth: np.ndarray
    R0: np.ndarray
    J0: np.ndarray
    Ab: np.ndarray
    I: np.ndarray
    P: np.ndarray
    K: np.ndarray
    Omega: np.ndarray
    Kv: np.ndarray
    Wb: np.ndarray
    Sb: np.ndarray
    omega: np.ndarray
    eps: np.ndarray
    U: np.ndarray
    Cstar: np.ndarray
    dstar: np.ndarray
    TD: np.ndarray
    Jv: np.ndarray
    Jw: np.ndarray
    col: np.ndarray
    mcol: np.ndarray
    dof: np.ndarray
    t3: np.ndarray
    v: np.ndarray
    jw: np.ndarray
    r: np.ndarray
    vel: np.ndarray
    SF: np.ndarray


@nb.njit(**OPTS)
def tree_workspace(ints, geo, body, nv, borrowed=True):
    """``(ws, keep)``: a :class:`TreeWork` for a packed tree
    (:func:`mbcourse.kernels.pack_chain`), carved out of one allocation (the integers out of
    a second; ``keep`` holds both), with the path structure, ``R0`` and ``J0`` filled in;
    :func:`~mbcourse.kernels.common.borrow`-ed views unless ``borrowed`` is False (a
    workspace handed back to Python)."""
    m, n1 = ints.shape[0], body.shape[0]
    owner = np.zeros(m * 9 + n1 * 27 + nv * 6 + m * 12 + n1 * 9 + n1 * m * 3 + n1 * n1 * 3
                     + m * n1 * 3 + n1 * nv * 6 + nv * 12 + 27 + 24 + J_ROWS * 3 + n1 * 12)
    at = np.zeros(1, dtype=np.int64)
    owner_i = np.zeros(n1 * (n1 + 2) + nv, dtype=np.int64)
    buf, ints_buf = (borrow(owner), borrow(owner_i)) if borrowed else (owner, owner_i)
    ws = TreeWork(ints_buf[:n1], ints_buf[n1:n1 + n1 * n1].reshape((n1, n1)),
                  ints_buf[n1 + n1 * n1:2 * n1 + n1 * n1],
                  take(buf, at, m * 9).reshape((m, 3, 3)),
                  take(buf, at, n1 * 9).reshape((n1, 3, 3)),
                  take(buf, at, n1 * 9).reshape((n1, 3, 3)),
                  take(buf, at, n1 * 9).reshape((n1, 3, 3)),
                  take(buf, at, nv * 3).reshape((nv, 3)), take(buf, at, nv * 3).reshape((nv, 3)),
                  take(buf, at, m * 3).reshape((m, 3)), take(buf, at, m * 3).reshape((m, 3)),
                  take(buf, at, m * 3).reshape((m, 3)), take(buf, at, m * 3).reshape((m, 3)),
                  take(buf, at, n1 * 3).reshape((n1, 3)),
                  take(buf, at, n1 * 3).reshape((n1, 3)),
                  take(buf, at, n1 * 3).reshape((n1, 3)),
                  take(buf, at, n1 * m * 3).reshape((n1, m, 3)),
                  take(buf, at, n1 * n1 * 3).reshape((n1, n1, 3)),
                  take(buf, at, m * n1 * 3).reshape((m, n1, 3)),
                  take(buf, at, n1 * nv * 3).reshape((n1, nv, 3)),
                  take(buf, at, n1 * nv * 3).reshape((n1, nv, 3)),
                  take(buf, at, nv * 6).reshape((nv, 6)), take(buf, at, nv * 6).reshape((nv, 6)),
                  ints_buf[2 * n1 + n1 * n1:], take(buf, at, 27).reshape((3, 3, 3)),
                  take(buf, at, 24).reshape((8, 3)),
                  take(buf, at, J_ROWS * 3).reshape((J_ROWS, 3)),
                  take(buf, at, n1 * 3).reshape((n1, 3)), take(buf, at, n1 * 3).reshape((n1, 3)),
                  take(buf, at, n1 * 6).reshape((n1, 6)))
    ws.up[0] = -1
    for a in range(m):                                  # T column by column: path(c) =
        p, c = ints[a, 1], ints[a, 2]                   #   path(p) + joint a
        ws.up[c] = a
        ws.depth[c] = ws.depth[p] + 1
        for t in range(ws.depth[p]):
            ws.path[c, t] = ws.path[p, t]
        ws.path[c, ws.depth[p]] = a
        for r in range(3):
            for k in range(3):
                ws.R0[a, r, k] = geo[a, 3 + 3 * r + k]
    for i in range(1, n1):
        for r in range(3):
            for k in range(3):
                ws.J0[i, r, k] = body[i, 1 + 3 * r + k]
    for r in range(3):
        ws.Ab[0, r, r] = 1.0                            # the fixed base: A_0 = E
    return ws, (owner, owner_i)


@nb.njit(**OPTS)
def _joint_vectors(a, ints, geo, q, qd, ws):
    """Joint ``a``: ``A_c = A_p G_a`` (``G_a`` = the joint's ``R_a``, :func:`joint_motion`),
    ``p_a``, ``k_a`` per speed in inertial axes (3.101), (3.104), ``Omega_a = p_a qd``,
    ``k_a qd``, ``w_a``, ``s_a`` and the actual hinge vectors ``c*_{pa} = A_p (c_pa + z_a)``,
    ``c*_{ca} = A_c c_ca`` (3.150)-(3.151). False for a quaternion far from unit norm."""
    p, c, v0, jw = ints[a, 1], ints[a, 2], ints[a, 4], ws.jw
    h = ws.v[0]
    if not joint_motion(a, ints, geo, q, qd, ws.R0, jw):
        return False
    mm3(ws.Ab[p], jw[J_R:J_R + 3], ws.Ab[c])
    for j in range(ints[a, I_NV]):
        mv3(ws.Ab[p], jw[J_P + j], ws.P[v0 + j])
        mv3(ws.Ab[p], jw[J_K + j], ws.K[v0 + j])
    mv3(ws.Ab[p], jw[J_OM], ws.Omega[a])
    mv3(ws.Ab[p], jw[J_KV], ws.Kv[a])
    mv3(ws.Ab[p], jw[J_WA], ws.Wb[a])
    mv3(ws.Ab[p], jw[J_SA], ws.Sb[a])
    for k in range(3):
        h[k] = geo[a, 12 + k] + jw[J_Z, k]
    mv3(ws.Ab[p], h, ws.Cstar[p, a])
    mv3(ws.Ab[c], geo[a, 15:18], ws.Cstar[c, a])
    return True


@nb.njit(**OPTS)
def _angular(a, ints, ws):
    """``omega_c = omega_p + Omega_a`` (3.114: ``omega = -T^T Omega``, ``T^T`` summed along
    the path), ``eps_c = eps_p + f_a``, ``f_a = w_a + omega_c x Omega_a`` (3.82), (3.120)
    with ``qdd = 0``, and ``I_c = A_c J_c A_c^T``."""
    p, c = ints[a, 1], ints[a, 2]
    f, AJ = ws.v[2], ws.t3[2]
    for k in range(3):
        ws.omega[c, k] = ws.omega[p, k] + ws.Omega[a, k]
    cross(ws.omega[c], ws.Omega[a], f)
    for k in range(3):
        ws.eps[c, k] = ws.eps[p, k] + f[k] + ws.Wb[a, k]
    mm3(ws.Ab[c], ws.J0[c], AJ)
    for r in range(3):
        for k in range(3):
            s = 0.0
            for l in range(3):
                s += AJ[r, l] * ws.Ab[c, k, l]
            ws.I[c, r, k] = s


@nb.njit(**OPTS)
def _hinge_sums(ints, ws):
    """``d*_kj = sum_a T_aj S_ka c*_ka`` (3.152) and ``TD_aj = sum_k T_ak d*_kj``, column by
    column: ``T_aj = -1`` on the path of ``j``, ``S_{i+(a) a} = 1``, ``S_{i-(a) a} = -1``, so
    ``d*_{i+(a) j} -= c*_{i+(a) a}`` and ``d*_{i-(a) j} += c*_{i-(a) a}`` for ``a`` on the
    path; ``T_ak = -1`` for the bodies ``k`` beyond ``a``, of which only those on the path of
    ``j`` have ``d*_kj != 0``."""
    for j in range(1, ws.up.shape[0]):
        D = ws.depth[j]
        for t in range(D):                              # zero column j on its support
            a = ws.path[j, t]
            for k in range(3):
                ws.dstar[ints[a, 1], j, k] = 0.0
                ws.dstar[ints[a, 2], j, k] = 0.0
        for t in range(D):
            a = ws.path[j, t]
            p, c = ints[a, 1], ints[a, 2]
            for k in range(3):
                ws.dstar[p, j, k] -= ws.Cstar[p, a, k]
                ws.dstar[c, j, k] += ws.Cstar[c, a, k]
        s = ws.v[3]
        for k in range(3):
            s[k] = 0.0
        for t in range(D - 1, -1, -1):                  # TD_aj = -(d*_kj summed beyond a)
            a = ws.path[j, t]
            c = ints[a, 2]
            for k in range(3):
                s[k] += ws.dstar[c, j, k]
                ws.TD[a, j, k] = -s[k]


@nb.njit(**OPTS)
def _jacobians(ints, ws):
    """``Phi_{(a), j} = p_a x TD_aj - k_a T_aj`` (3.163) and ``-T_aj p_a`` (3.122) for the
    speeds ``l`` of the joints ``a`` on the path of ``j`` (``T_aj = -1``; zero elsewhere)."""
    h = ws.v[4]
    for j in range(1, ws.up.shape[0]):
        for t in range(ws.depth[j]):
            a = ws.path[j, t]
            for l in range(ints[a, 4], ints[a, 4] + ints[a, I_NV]):
                cross(ws.P[l], ws.TD[a, j], h)
                for k in range(3):
                    ws.Jv[j, l, k] = h[k] + ws.K[l, k]
                    ws.Jw[j, l, k] = ws.P[l, k]


@nb.njit(**OPTS)
def _ddc(k, a, omega, eps, ws, out):
    """``eps_k x c*_ka + omega_k x (omega_k x c*_ka)``: the acceleration of the tip of
    ``c*_ka`` turning with body ``k`` at ``qdd = 0``."""
    h = ws.v[7]
    cross(omega, ws.Cstar[k, a], h)
    cross(omega, h, out)
    cross(eps, ws.Cstar[k, a], h)
    for r in range(3):
        out[r] += h[r]


@nb.njit(**OPTS)
def _bias_accelerations(ints, ws):
    """The centre-of-mass accelerations at ``qdd = 0``, ``U = -T^T g`` with ``g_a = sum_k
    S_ka ddc*_ka``, the second derivative of ``r_j = r_0 - sum_k d*_kj`` (3.153): on the
    parent's side ``ddc*`` also holds ``2 omega_p x k_a qd + s_a`` (``z_a`` slides), so
    ``U_c = U_p + g_a`` along the path."""
    gp, gc, h = ws.v[5], ws.v[6], ws.v[4]
    for a in range(ints.shape[0]):
        p, c = ints[a, 1], ints[a, 2]
        _ddc(p, a, ws.omega[p], ws.eps[p], ws, gp)
        cross(ws.omega[p], ws.Kv[a], h)
        _ddc(c, a, ws.omega[c], ws.eps[c], ws, gc)
        for k in range(3):
            ws.U[c, k] = ws.U[p, k] + gp[k] + 2.0 * h[k] + ws.Sb[a, k] - gc[k]


@nb.njit(**OPTS)
def _mass_matrix(ints, body, Amat, ws):
    """``A = Phi m Phi^T + (pT) J (pT)^T`` (3.167): ``sum_j m_j Jv_j Jv_j^T + Jw_j I_j
    Jw_j^T`` over the pairs of joints on the path of each body ``j`` (their columns of
    ``Phi`` and ``pT`` gathered first: ``col = (Jv, Jw)``, ``mcol = (m_j Jv, I_j Jw)``)."""
    col, mcol, dof = ws.col, ws.mcol, ws.dof
    for r in range(Amat.shape[0]):
        for k in range(Amat.shape[1]):
            Amat[r, k] = 0.0
    for j in range(1, ws.up.shape[0]):
        nd = 0
        for t in range(ws.depth[j]):
            a = ws.path[j, t]
            for l in range(ints[a, 4], ints[a, 4] + ints[a, I_NV]):
                dof[nd] = l
                mv3(ws.I[j], ws.Jw[j, l], mcol[nd, 3:])
                for k in range(3):
                    col[nd, k], col[nd, 3 + k] = ws.Jv[j, l, k], ws.Jw[j, l, k]
                    mcol[nd, k] = body[j, 0] * ws.Jv[j, l, k]
                nd += 1
        for t1 in range(nd):
            for t2 in range(t1 + 1):
                s = 0.0
                for k in range(6):
                    s += mcol[t1, k] * col[t2, k]
                Amat[dof[t1], dof[t2]] += s
    for r in range(Amat.shape[0]):
        for k in range(r):
            Amat[k, r] = Amat[r, k]


@nb.njit(**OPTS)
def _bias_forces(ints, body, Bvec, ws):
    """``B = sum_j Jv_j^T (F_j - m_j U_j) + Jw_j^T (M_j - I_j eps_j - omega_j x I_j omega_j)``
    (3.167); the applied forces are the weight ``m_j g`` (``g`` in ``body[0, 1:4]``), the
    constant loads' ``F_j``, ``M_j`` (:func:`~mbcourse.kernels.common.load_wrench`) and the
    spring-dampers' (``SF``, :func:`_springs`)."""
    lin, ang, h, F, M = ws.v[4], ws.v[5], ws.v[6], ws.v[0], ws.v[1]
    for r in range(Bvec.shape[0]):
        Bvec[r] = 0.0
    for j in range(1, ws.up.shape[0]):
        mj = body[j, 0]
        for k in range(3):
            F[k] = M[k] = 0.0
        if body[0, B_FORCE] != 0.0:
            load_wrench(body, j, ws.Ab[j], F, M, h)
        if body[0, B_SPRINGS] > 0:
            for k in range(3):
                F[k] += ws.SF[j, k]
                M[k] += ws.SF[j, 3 + k]
        mv3(ws.I[j], ws.omega[j], h)
        cross(ws.omega[j], h, ang)
        mv3(ws.I[j], ws.eps[j], h)
        for k in range(3):
            lin[k] = mj * (body[0, 1 + k] - ws.U[j, k]) + F[k]
            ang[k] = M[k] - h[k] - ang[k]
        for t in range(ws.depth[j]):
            a = ws.path[j, t]
            for l in range(ints[a, 4], ints[a, 4] + ints[a, I_NV]):
                s = 0.0
                for k in range(3):
                    s += ws.Jv[j, l, k] * lin[k] + ws.Jw[j, l, k] * ang[k]
                Bvec[l] += s


@nb.njit(**OPTS)
def tree_one(ints, geo, body, q, qd, Amat, Bvec, ws):
    """``A`` and ``B`` of (3.167) for one configuration (``A qdd = B + tau``), leaving the
    chapter's intermediate quantities in ``ws``; False for a quaternion far from unit
    norm. A prescribed motion of the base (``body``'s row 0) starts the outward pass: the
    base's ``A_0``, ``omega_0``, ``eps_0`` and its origin's acceleration ``U_0``, position
    and velocity."""
    if body[0, B_MOVING] != 0.0:
        base_state(body, ws.Ab, ws.omega, ws.r, ws.vel)
        for k in range(3):
            ws.U[0, k] = body[0, B_BASE + 12 + k]
            ws.eps[0, k] = body[0, B_BASE + 15 + k]
    for a in range(ints.shape[0]):                      # outward: joints, then bodies
        if not _joint_vectors(a, ints, geo, q, qd, ws):
            return False
        _angular(a, ints, ws)
    _hinge_sums(ints, ws)
    _jacobians(ints, ws)
    _bias_accelerations(ints, ws)
    _mass_matrix(ints, body, Amat, ws)
    if body[0, B_SPRINGS] > 0 and not _springs(ints, geo, body, ws):
        return False
    _bias_forces(ints, body, Bvec, ws)
    return True


@nb.njit(**OPTS)
def _springs(ints, geo, body, ws):
    """The spring-dampers' wrenches ``SF`` about the centres: the centres ``r_c = r_p +
    c*_pa - c*_ca`` and their velocities ``v_c = v_p + omega_p x c*_pa + k_a qd - omega_c x
    c*_ca`` outward (the derivatives of (3.150)-(3.153)), then
    :func:`~mbcourse.kernels.common.spring_wrenches`. False where a spring's points
    coincide."""
    h = ws.v[5]
    for a in range(ints.shape[0]):
        p, c = ints[a, 1], ints[a, 2]
        cross(ws.omega[p], ws.Cstar[p, a], h)
        for k in range(3):
            ws.r[c, k] = ws.r[p, k] + ws.Cstar[p, a, k] - ws.Cstar[c, a, k]
            ws.vel[c, k] = ws.vel[p, k] + h[k] + ws.Kv[a, k]
        cross(ws.omega[c], ws.Cstar[c, a], h)
        for k in range(3):
            ws.vel[c, k] -= h[k]
    for j in range(ws.SF.shape[0]):
        for k in range(6):
            ws.SF[j, k] = 0.0
    return spring_wrenches(geo, ints.shape[0], body, ws.Ab, ws.r, ws.vel, ws.omega, ws.SF,
                           ws.v)


@nb.njit(**OPTS)
def tree_forward(ints, geo, body, q, qd, tau, qdd):
    """Chapter 3's ``A qdd = B + tau`` for a batch, solved by Cholesky: ``q`` (B, nq),
    ``qd``, ``tau`` (B, nv) into ``qdd``. Returns False if a mass matrix is not positive
    definite or a value is not finite."""
    ints, geo, body, q, qd, tau, qdd = (borrow(ints), borrow(geo), borrow(body), borrow(q),
                                        borrow(qd), borrow(tau), borrow(qdd))
    nv = qd.shape[1]
    ws, keep = tree_workspace(ints, geo, body, nv)
    owner = np.empty(nv * nv + nv)
    buf = borrow(owner)
    Amat, Bvec = buf[:nv * nv].reshape((nv, nv)), buf[nv * nv:]
    ok = True
    for b in range(q.shape[0]):
        if not tree_one(ints, geo, body, q[b], qd[b], Amat, Bvec, ws):
            ok = False
            continue
        spring_torques(ints, geo, q[b], qd[b], tau[b], qdd[b])
        for k in range(nv):
            qdd[b, k] += Bvec[k]
        if not cholesky_solve(Amat, qdd[b]) or not finite(qdd[b]):
            ok = False
    return release((owner, keep), ok)


@nb.njit(**OPTS)
def tree_matrices(ints, geo, body, q, qd, Amat, Bvec):
    """``A`` (B, nv, nv) and ``B`` (B, nv) of (3.167) for a batch (``B`` without ``tau``)."""
    ints, geo, body, q, qd, Amat, Bvec = (borrow(ints), borrow(geo), borrow(body), borrow(q),
                                          borrow(qd), borrow(Amat), borrow(Bvec))
    ws, keep = tree_workspace(ints, geo, body, qd.shape[1])
    for b in range(q.shape[0]):
        tree_one(ints, geo, body, q[b], qd[b], Amat[b], Bvec[b], ws)
    release(keep, True)


@nb.njit(**OPTS)
def tree_terms(ints, geo, body, q, qd):
    """One configuration's ``(A, B, ws)``: the matrices of (3.167) and the
    :class:`TreeWork` holding the chapter's intermediate quantities (for the tests)."""
    nv = qd.shape[0]
    ws, _ = tree_workspace(ints, geo, body, nv, False)
    Amat, Bvec = np.empty((nv, nv)), np.empty(nv)
    tree_one(ints, geo, body, q, qd, Amat, Bvec, ws)
    return Amat, Bvec, ws


from . import register  # noqa: E402  (the front door, mbcourse.kernels)

register("tree", tree_forward, moving_base=True,
         refusal="the compiled tree equations need joints pointing away from the base")
