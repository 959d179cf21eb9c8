"""Compiled kernels (numba): the recursions of the course as plain loops over bodies.

A NumPy call costs about a microsecond of interpreter overhead whatever the size of its
arrays, and a recursion over a few bodies makes hundreds of them; written as loops over
bodies with scalar arithmetic on 3-vectors and 6x6 matrices and compiled by numba, the same
recursion costs a few microseconds per configuration. The kernels read like the book's
recursions (Featherstone's ``FDab.m`` is the model), use no allocation inside the loops,
and are checked equal to the NumPy versions of the formulation modules (tests).

Kernels here take packed arrays prepared once per model version by the formulation module
(see :func:`pack_chain`): the formulation decides when its compiled path applies and falls
back to its NumPy version otherwise. Compilation happens once per machine (``cache=True``
writes the machine code next to this file, or to numba's user cache directory); the first
call of a fresh installation pays it (:data:`COMPILE_NOTE`).

Joint kinds: ``0`` revolute, ``1`` prismatic, ``2`` weld (a fixed joint).
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["REVOLUTE", "PRISMATIC", "WELD", "pack_chain", "vereshchagin_forward",
           "COMPILE_NOTE"]

REVOLUTE, PRISMATIC, WELD = 0, 1, 2

#: What a first call costs (measured on the reference machine, see benchmarks/).
COMPILE_NOTE = "the first call of a fresh installation compiles the kernel (about 8 s), once"

_OPTS = dict(cache=True, nogil=True, error_model="numpy")


def pack_chain(kinds, parent, child, axis, orientation, parent_point, child_point, q_index,
               v_index, masses, inertias):
    """Pack a tree's constants for the kernels.

    Returns
    -------
    ints : ndarray of int64, shape (m, 5)
        ``kind, parent, child, q index, v index`` per joint, base-to-leaves order.
    geo : ndarray, shape (m, 18)
        ``axis (3), orientation (9, row-major), parent_point (3), child_point (3)``.
    body : ndarray, shape (n + 1, 10)
        ``mass, inertia (9, row-major, body axes)`` per body (row 0, the base, unused).
    """
    m = len(kinds)
    ints = np.stack([np.asarray(x, dtype=np.int64).reshape(m)
                     for x in (kinds, parent, child, q_index, v_index)], axis=1)
    geo = np.concatenate([np.asarray(axis, float).reshape(m, 3),
                          np.asarray(orientation, float).reshape(m, 9),
                          np.asarray(parent_point, float).reshape(m, 3),
                          np.asarray(child_point, float).reshape(m, 3)], axis=1)
    n = len(masses)
    body = np.zeros((n + 1, 10))
    body[1:, 0] = masses
    body[1:, 1:] = np.asarray(inertias, float).reshape(n, 9)
    for arr in (ints, geo, body):
        arr.flags.writeable = False
    return ints, np.ascontiguousarray(geo), body


@nb.njit(**_OPTS)
def _cross(a, b, out):
    x = a[1] * b[2] - a[2] * b[1]
    y = a[2] * b[0] - a[0] * b[2]
    z = a[0] * b[1] - a[1] * b[0]
    out[0], out[1], out[2] = x, y, z


@nb.njit(**_OPTS)
def _matvec(M, x, out):
    for r in range(M.shape[0]):
        s = 0.0
        for k in range(x.shape[0]):
            s += M[r, k] * x[k]
        out[r] = s


@nb.njit(**_OPTS)
def _matmul(A, B, out):
    for r in range(A.shape[0]):
        for c in range(B.shape[1]):
            s = 0.0
            for k in range(B.shape[0]):
                s += A[r, k] * B[k, c]
            out[r, c] = s


@nb.njit(**_OPTS)
def _vereshchagin_one(ints, geo, body, gravity, q, qd, tau, qdd, A, om, Ms, Qs, w, rho, S,
                      w0, U, R0, J0, t3, v, t6, Ma):
    """One configuration: Yudintsev (3.172)-(3.179), the course's chapter 4 (the same
    equations as ``mb.vereshchagin``'s NumPy recursion, inertial axes, centres of mass)."""
    m = ints.shape[0]
    Rj, R, J = t3[0], t3[1], t3[2]
    Pw, lp, lc, Om, kv, z, a0, e0, h = v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]
    r6, MS, g6 = t6[0], t6[1], t6[2]
    for r in range(3):
        om[0, r] = 0.0
        w[0, r] = 0.0
        w[0, r + 3] = 0.0
        for c in range(3):
            A[0, r, c] = 1.0 if r == c else 0.0
    # ---- outward: kinematics of joint k (3.174), w_k = C_k w_p + S_k qdd_k + w0_k,
    #      and the child's M_k, Q_k about its centre of mass (3.172)
    for i in range(m):
        kind, p, c, qk, vk = ints[i, 0], ints[i, 1], ints[i, 2], ints[i, 3], ints[i, 4]
        e = geo[i, 0:3]
        for k in range(3):
            z[k] = 0.0
        if kind == 0:                                   # R_a = rot(e, q) R0 (Rodrigues)
            s, co = np.sin(q[qk]), np.cos(q[qk])
            for r in range(3):
                for k in range(3):
                    Rj[r, k] = (1.0 - co) * e[r] * e[k] + (co if r == k else 0.0)
            Rj[0, 1] -= s * e[2]
            Rj[0, 2] += s * e[1]
            Rj[1, 0] += s * e[2]
            Rj[1, 2] -= s * e[0]
            Rj[2, 0] -= s * e[1]
            Rj[2, 1] += s * e[0]
            _matmul(Rj, R0[i], R)
        else:                                           # R_a = R0; z_a = e q if prismatic
            R[:, :] = R0[i]
            if kind == 1:
                for k in range(3):
                    z[k] = e[k] * q[qk]
        _matmul(A[p], R, A[c])                              # A_c = A_p R_a
        _matvec(A[p], e, Pw)                                # the axis, inertial axes
        for k in range(3):
            h[k] = geo[i, 12 + k] + z[k]
        _matvec(A[p], h, lp)                                # parent's centre -> joint point
        _matvec(A[c], geo[i, 15:18], lc)
        rate = qd[vk] if kind < 2 else 0.0
        for k in range(3):
            lc[k] = -lc[k]                              # joint point -> child's centre
            Om[k] = Pw[k] * rate if kind == 0 else 0.0  # relative angular velocity
            kv[k] = Pw[k] * rate if kind == 1 else 0.0  # relative velocity (sliding)
            om[c, k] = om[p, k] + Om[k]
            rho[i, k] = lp[k] + lc[k]                   # parent's centre -> child's
        wp, wc = om[p], om[c]
        _cross(wp, Om, e0)                              # eps0 = w_p x Omega
        _cross(wp, lp, h)
        _cross(wp, h, a0)                               # a0 = w_p x (w_p x l_p)
        _cross(e0, lc, h)                               #    + eps0 x l_c
        for k in range(3):
            a0[k] += h[k]
        _cross(wc, lc, h)
        _cross(wc, h, h)                                #    + w_c x (w_c x l_c)
        for k in range(3):
            a0[k] += h[k]
        _cross(wp, kv, h)                               #    + 2 w_p x (A_p k v)
        for k in range(3):
            w0[i, k] = a0[k] + 2.0 * h[k]
            w0[i, k + 3] = e0[k]
        if kind == 0:                                   # S_k = (e x l_c, e)
            _cross(Pw, lc, h)
            for k in range(3):
                S[i, k] = h[k]
                S[i, k + 3] = Pw[k]
        elif kind == 1:                                 # S_k = (e, 0)
            for k in range(3):
                S[i, k] = Pw[k]
                S[i, k + 3] = 0.0
        # M_c = diag(m E, A J A^T), Q_c = (m g, -w x J w)
        _matmul(A[c], J0[c], Rj)
        for r in range(3):
            for k in range(3):
                s = 0.0
                for l in range(3):
                    s += Rj[r, l] * A[c, k, l]
                J[r, k] = s
        for r in range(6):
            for k in range(6):
                Ms[c, r, k] = 0.0
        for r in range(3):
            Ms[c, r, r] = body[c, 0]
            for k in range(3):
                Ms[c, r + 3, k + 3] = J[r, k]
        _matvec(J, wc, h)
        _cross(wc, h, a0)
        for k in range(3):
            Qs[c, k] = body[c, 0] * gravity[k]
            Qs[c, k + 3] = -a0[k]
    # ---- inward (3.178)-(3.179): fold the articulated M*_k, Q*_k into the parent
    for i in range(m - 1, -1, -1):
        kind, p, c, vk = ints[i, 0], ints[i, 1], ints[i, 2], ints[i, 4]
        Mk = Ms[c]
        _matvec(Mk, w0[i], r6)
        for k in range(6):
            r6[k] = Qs[c, k] - r6[k]                    # Q*_k - M*_k w0_k
        if kind < 2:
            _matvec(Mk, S[i], MS)
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
        # M*_p += C^T Ma C and Q*_p += C^T Qa, C = [[E, X], [0, E]], X = -rho~
        x0, x1, x2 = rho[i, 0], rho[i, 1], rho[i, 2]
        for r in range(6):                              # Ma C: columns 3..5 += Ma[:, :3] X
            a, b, d = Ma[r, 0], Ma[r, 1], Ma[r, 2]
            Ma[r, 3] += -b * x2 + d * x1
            Ma[r, 4] += a * x2 - d * x0
            Ma[r, 5] += -a * x1 + b * x0
        for k in range(6):                              # C^T (.): rows 3..5 += X^T rows 0..2
            a, b, d = Ma[0, k], Ma[1, k], Ma[2, k]
            Ma[3, k] += -b * x2 + d * x1
            Ma[4, k] += a * x2 - d * x0
            Ma[5, k] += -a * x1 + b * x0
        a, b, d = r6[0], r6[1], r6[2]
        r6[3] += -b * x2 + d * x1
        r6[4] += a * x2 - d * x0
        r6[5] += -a * x1 + b * x0
        for r in range(6):
            Qs[p, r] += r6[r]
            for k in range(6):
                Ms[p, r, k] += Ma[r, k]
    # ---- outward (3.176): qdd_k = U^-1 (tau_k + S^T (Q*_k - M*_k (C_k w_p + w0_k)))
    for i in range(m):
        kind, p, c, vk = ints[i, 0], ints[i, 1], ints[i, 2], ints[i, 4]
        _cross(w[p, 3:], rho[i], h)                     # X eps_p = eps_p x rho
        for k in range(3):
            r6[k] = w0[i, k] + w[p, k] + h[k]
            r6[k + 3] = w0[i, k + 3] + w[p, k + 3]
        if kind < 2:
            _matvec(Ms[c], r6, g6)
            acc = tau[vk]
            for k in range(6):
                acc += S[i, k] * (Qs[c, k] - g6[k])
            acc /= U[i]
            qdd[vk] = acc
            for k in range(6):
                r6[k] += S[i, k] * acc
        for k in range(6):
            w[c, k] = r6[k]


@nb.njit(**_OPTS)
def vereshchagin_forward(ints, geo, body, gravity, q, qd, tau, qdd):
    """Vereshchagin's recursion for a batch: ``q`` (B, nq), ``qd``, ``tau`` (B, nv) into
    ``qdd`` (B, nv). Returns False if any input or output is not finite (the caller then
    takes the checked route, which names the culprit)."""
    m, n1 = ints.shape[0], body.shape[0]
    A = np.empty((n1, 3, 3))
    om = np.empty((n1, 3))
    Ms = np.empty((n1, 6, 6))
    Qs = np.empty((n1, 6))
    w = np.empty((n1, 6))
    rho = np.empty((m, 3))
    S = np.zeros((m, 6))
    w0 = np.empty((m, 6))
    U = np.empty(m)
    R0 = np.empty((m, 3, 3))
    J0 = np.empty((n1, 3, 3))
    for i in range(m):
        for r in range(3):
            for c in range(3):
                R0[i, r, c] = geo[i, 3 + 3 * r + c]
    for i in range(n1):
        for r in range(3):
            for c in range(3):
                J0[i, r, c] = body[i, 1 + 3 * r + c]
    t3 = np.empty((3, 3, 3))
    v = np.empty((9, 3))
    t6 = np.empty((3, 6))
    Ma = np.empty((6, 6))
    ok = True
    for b in range(q.shape[0]):
        _vereshchagin_one(ints, geo, body, gravity, q[b], qd[b], tau[b], qdd[b], A, om, Ms,
                          Qs, w, rho, S, w0, U, R0, J0, t3, v, t6, Ma)
        for k in range(qdd.shape[1]):
            if not np.isfinite(qdd[b, k]):
                ok = False
    return ok
