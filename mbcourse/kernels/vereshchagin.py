"""Chapter 4 compiled: Vereshchagin's recursion, Yudintsev (3.172)-(3.179).

The same three passes as :mod:`mbcourse.vereshchagin`'s NumPy recursion (Featherstone's
``FDab.m`` is the model): the outward kinematics (:func:`~mbcourse.kernels.common.kinematics`),
the inward pass folding the articulated ``M*_k``, ``Q*_k`` into the parent (3.178)-(3.179),
and the outward pass of the accelerations (3.176). :func:`vereshchagin_articulated` exposes
the articulated quantities (``w``, ``M*``, ``Q*``) for the tests, which compare them with
:func:`mbcourse.vereshchagin.articulated`.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..spatial import PIVOT_RTOL
from .common import (B_BASE, I_NV, INLINE, OPTS, borrow, cholesky_factor_n, cross, finite,
                     fold, kinematics, lower_solve, matvec, release, shift, spring_torques,
                     upper_solve, workspace)

__all__ = ["vereshchagin_forward", "vereshchagin_articulated"]


@nb.njit(**OPTS)
def _block_solves(L, nk, MS, X, y, col, sol):
    """``X = U^-1 (M* S)^T`` column by column and ``y <- U^-1 y``, ``U = L L^T`` (a joint with
    ``nk > 1`` speeds)."""
    for k in range(6):
        for j in range(nk):
            col[j] = MS[j, k]
        lower_solve(L, col, sol, nk)
        upper_solve(L, sol, sol, nk)
        for j in range(nk):
            X[j, k] = sol[j]
    lower_solve(L, y, y, nk)
    upper_solve(L, y, y, nk)


@nb.njit(**INLINE)
def _articulate(ints, tau, ws):
    """Inward (3.178)-(3.179): per joint ``U_k = S^T M* S`` (``n_k x n_k``, ``S`` the
    joint's ``n_k`` columns; factored ``L L^T`` in ``ws.U[k]`` when ``n_k > 1``), fold the
    articulated
    ``M*_k - M* S U^-1 S^T M*``, ``Q*_k - M* w0 - M* S U^-1 (tau_k + S^T (Q* - M* w0))``
    into the parent (``M*_p += C^T Ma C``, ``Q*_p += C^T Qa``)."""
    Ms, Qs, S, w0, Ma, rho, MS, X, y = ws.Ms, ws.Qs, ws.S, ws.w0, ws.Ma, ws.rho, ws.MS, ws.X, ws.y
    r6 = ws.t6[0]
    for i in range(ints.shape[0] - 1, -1, -1):
        p, c, v0, nk = ints[i, 1], ints[i, 2], ints[i, 4], ints[i, I_NV]
        Mk, U = Ms[c], ws.U[i]
        matvec(Mk, w0[i], r6)
        for k in range(6):
            r6[k] = Qs[c, k] - r6[k]                    # Q*_k - M*_k w0_k
        for r in range(6):
            for k in range(6):
                Ma[r, k] = Mk[r, k]
        if nk > 0:
            for j in range(nk):
                matvec(Mk, S[v0 + j], MS[j])            # rows of (M* S)^T
                y[j] = tau[v0 + j]
                for k in range(6):
                    y[j] += S[v0 + j, k] * r6[k]        # tau_k + S^T (Q* - M* w0)
                for l in range(j + 1):
                    u = 0.0
                    for k in range(6):
                        u += S[v0 + l, k] * MS[j, k]
                    U[j, l] = u                         # U_k = S^T M* S
            if nk == 1:                                 # one speed: U is a number
                lin, ang = max(Mk[0, 0], Mk[1, 1], Mk[2, 2]), max(Mk[3, 3], Mk[4, 4], Mk[5, 5])
                scale = 0.0
                for k in range(3):
                    scale += S[v0, k] * S[v0, k] * lin + S[v0, k + 3] * S[v0, k + 3] * ang
                if not U[0, 0] > PIVOT_RTOL * scale:    # as spatial.pivot_scale
                    return False
                for k in range(6):
                    X[0, k] = MS[0, k] / U[0, 0]
                y[0] /= U[0, 0]
            else:
                if not cholesky_factor_n(U, nk):
                    return False
                _block_solves(U, nk, MS, X, y, ws.t6[1], ws.t6[2])
            for r in range(6):
                for j in range(nk):
                    r6[r] -= MS[j, r] * y[j]
                    for k in range(6):
                        Ma[r, k] -= MS[j, r] * X[j, k]
        fold(Ma, rho[i], Ms[p])
        shift(r6, rho[i])
        for r in range(6):
            Qs[p, r] += r6[r]
    return True


@nb.njit(**INLINE)
def _accelerate(ints, body, tau, qdd, ws):
    """Outward (3.176): ``qdd_k = U^-1 (tau_k + S^T (Q*_k - M*_k (C_k w_p + w0_k)))``,
    ``w_k = C_k w_p + S_k qdd_k + w0_k``, from the base's ``w_0``: zero, or its prescribed
    acceleration (the columns ``B_BASE + 12:`` of ``body``'s row 0, zero when it does not
    move)."""
    w, S, h, rho, w0, Ms, Qs, y = ws.w, ws.S, ws.v[8], ws.rho, ws.w0, ws.Ms, ws.Qs, ws.y
    r6, g6 = ws.t6[0], ws.t6[2]
    for r in range(6):
        w[0, r] = body[0, B_BASE + 12 + r]
    for i in range(ints.shape[0]):
        p, c, v0, nk = ints[i, 1], ints[i, 2], ints[i, 4], ints[i, I_NV]
        cross(w[p, 3:], rho[i], h)                   # X eps_p = eps_p x rho
        for k in range(3):
            r6[k] = w0[i, k] + w[p, k] + h[k]
            r6[k + 3] = w0[i, k + 3] + w[p, k + 3]
        if nk > 0:
            matvec(Ms[c], r6, g6)
            for j in range(nk):
                y[j] = tau[v0 + j]
                for k in range(6):
                    y[j] += S[v0 + j, k] * (Qs[c, k] - g6[k])
            if nk == 1:
                y[0] /= ws.U[i, 0, 0]
            else:
                lower_solve(ws.U[i], y, y, nk)
                upper_solve(ws.U[i], y, y, nk)
            for j in range(nk):
                qdd[v0 + j] = y[j]
                for k in range(6):
                    r6[k] += S[v0 + j, k] * y[j]
        for k in range(6):
            w[c, k] = r6[k]


@nb.njit(**INLINE)
def _one(ints, geo, body, q, qd, tau, qdd, ws):
    """One configuration: Yudintsev (3.172)-(3.179), ``tau`` with the joint springs; True
    if ``qdd`` is finite."""
    spring_torques(ints, geo, q, qd, tau, ws.tq)
    if not kinematics(ints, geo, body, q, qd, ws) or not _articulate(ints, ws.tq, ws):
        return False
    _accelerate(ints, body, ws.tq, qdd, ws)
    return finite(qdd)


@nb.njit(**OPTS)
def vereshchagin_forward(ints, geo, body, q, qd, tau, qdd):
    """Vereshchagin's recursion for a batch: ``q`` (B, nq), ``qd``, ``tau`` (B, nv) into
    ``qdd`` (B, nv). Returns False if any input or output is not finite, a quaternion is
    farther than ``QUATERNION_TOL`` from unit norm, a joint's ``S^T M* S`` is not positive
    definite or a spring's points coincide (the caller then takes the checked route, which
    names the culprit)."""
    ints, geo, body, q, qd, tau, qdd = (borrow(ints), borrow(geo), borrow(body), borrow(q),
                                        borrow(qd), borrow(tau), borrow(qdd))
    ws, keep = workspace(ints, geo, body)
    ok = True
    for b in range(q.shape[0]):
        if not _one(ints, geo, body, q[b], qd[b], tau[b], qdd[b], ws):
            ok = False
    return release(keep, ok)


@nb.njit(**OPTS)
def vereshchagin_articulated(ints, geo, body, q, qd, tau, qdd, w, M_star, Q_star):
    """:func:`vereshchagin_forward` that also writes the recursion's per-body quantities
    (the diagnostic entry): ``w`` (B, n + 1, 6) the accelerations ``(a_k, eps_k)``,
    ``M_star`` (B, n + 1, 6, 6) and ``Q_star`` (B, n + 1, 6) the articulated terms after the
    inward pass (3.177)-(3.179); inertial axes, centres of mass, row 0 the base."""
    ws, keep = workspace(ints, geo, body)
    ok = True
    for b in range(q.shape[0]):
        if not _one(ints, geo, body, q[b], qd[b], tau[b], qdd[b], ws):
            ok = False
        w[b] = ws.w
        M_star[b] = ws.Ms
        Q_star[b] = ws.Qs
    return release(keep, ok)
