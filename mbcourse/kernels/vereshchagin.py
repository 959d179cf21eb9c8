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

from .common import INLINE, OPTS, WELD, cross, finite, fold, kinematics, matvec, shift, workspace

__all__ = ["vereshchagin_forward", "vereshchagin_articulated"]


@nb.njit(**INLINE)
def _articulate(ints, tau, ws):
    """Inward (3.178)-(3.179): ``U_k = S^T M* S``, fold the articulated ``M*_k``, ``Q*_k``
    into the parent (``M*_p += C^T Ma C``, ``Q*_p += C^T Qa``)."""
    Ms, Qs, S, w0, U, Ma, rho = ws.Ms, ws.Qs, ws.S, ws.w0, ws.U, ws.Ma, ws.rho
    r6, MS, g6 = ws.t6[0], ws.t6[1], ws.t6[2]
    for i in range(ints.shape[0] - 1, -1, -1):
        kind, p, c, vk = ints[i, 0], ints[i, 1], ints[i, 2], ints[i, 4]
        Mk = Ms[c]
        matvec(Mk, w0[i], r6)
        for k in range(6):
            r6[k] = Qs[c, k] - r6[k]                    # Q*_k - M*_k w0_k
        if kind != WELD:
            matvec(Mk, S[i], MS)
            u = 0.0
            f = tau[vk]
            for k in range(6):
                u += S[i, k] * MS[k]                    # U_k = S^T M* S
                f += S[i, k] * r6[k]                    # tau_k + S^T (Q* - M* w0)
            U[i] = u
            for r in range(6):
                g6[r] = MS[r] / u
                r6[r] -= g6[r] * f
                for k in range(6):
                    Ma[r, k] = Mk[r, k] - g6[r] * MS[k]
        else:
            Ma[:, :] = Mk
        fold(Ma, rho[i], Ms[p])
        shift(r6, rho[i])
        for r in range(6):
            Qs[p, r] += r6[r]


@nb.njit(**INLINE)
def _accelerate(ints, tau, qdd, ws):
    """Outward (3.176): ``qdd_k = U^-1 (tau_k + S^T (Q*_k - M*_k (C_k w_p + w0_k)))``,
    ``w_k = C_k w_p + S_k qdd_k + w0_k``."""
    w, S, h, rho, w0, Ms, Qs, U = ws.w, ws.S, ws.v[8], ws.rho, ws.w0, ws.Ms, ws.Qs, ws.U
    r6, g6 = ws.t6[0], ws.t6[2]
    for r in range(6):
        w[0, r] = 0.0
    for i in range(ints.shape[0]):
        kind, p, c, vk = ints[i, 0], ints[i, 1], ints[i, 2], ints[i, 4]
        cross(w[p, 3:], rho[i], h)                   # X eps_p = eps_p x rho
        for k in range(3):
            r6[k] = w0[i, k] + w[p, k] + h[k]
            r6[k + 3] = w0[i, k + 3] + w[p, k + 3]
        if kind != WELD:
            matvec(Ms[c], r6, g6)
            acc = tau[vk]
            for k in range(6):
                acc += S[i, k] * (Qs[c, k] - g6[k])
            acc /= U[i]
            qdd[vk] = acc
            for k in range(6):
                r6[k] += S[i, k] * acc
        for k in range(6):
            w[c, k] = r6[k]


@nb.njit(**INLINE)
def _one(ints, geo, body, q, qd, tau, qdd, ws):
    """One configuration: Yudintsev (3.172)-(3.179); True if ``qdd`` is finite."""
    kinematics(ints, geo, body, q, qd, ws)
    _articulate(ints, tau, ws)
    _accelerate(ints, tau, qdd, ws)
    return finite(qdd)


@nb.njit(**OPTS)
def vereshchagin_forward(ints, geo, body, q, qd, tau, qdd):
    """Vereshchagin's recursion for a batch: ``q`` (B, nq), ``qd``, ``tau`` (B, nv) into
    ``qdd`` (B, nv). Returns False if any input or output is not finite (the caller then
    takes the checked route, which names the culprit)."""
    ws = workspace(ints, geo, body)
    ok = True
    for b in range(q.shape[0]):
        if not _one(ints, geo, body, q[b], qd[b], tau[b], qdd[b], ws):
            ok = False
    return ok


@nb.njit(**OPTS)
def vereshchagin_articulated(ints, geo, body, q, qd, tau, qdd, w, M_star, Q_star):
    """:func:`vereshchagin_forward` that also writes the recursion's per-body quantities
    (the diagnostic entry): ``w`` (B, n + 1, 6) the accelerations ``(a_k, eps_k)``,
    ``M_star`` (B, n + 1, 6, 6) and ``Q_star`` (B, n + 1, 6) the articulated terms after the
    inward pass (3.177)-(3.179); inertial axes, centres of mass, row 0 the base."""
    ws = workspace(ints, geo, body)
    ok = True
    for b in range(q.shape[0]):
        if not _one(ints, geo, body, q[b], qd[b], tau[b], qdd[b], ws):
            ok = False
        w[b] = ws.w
        M_star[b] = ws.Ms
        Q_star[b] = ws.Qs
    return ok
