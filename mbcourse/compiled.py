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

import math

import numba as nb
import numpy as np

from .errors import TopologyError

__all__ = ["REVOLUTE", "PRISMATIC", "WELD", "pack_chain", "model_data", "fast_arrays",
           "state_arrays", "attempt", "run", "PARALLEL_BATCH", "cartesian_forward", "loops_forward",
           "vereshchagin_forward", "tree_forward", "tree_matrices", "cholesky_solve",
           "ivanov_sweep_solve", "ivanov_cholesky_solve", "COMPILE_NOTE"]

REVOLUTE, PRISMATIC, WELD = 0, 1, 2
_NDARRAY = np.ndarray
_REAL = (float, int, np.floating, np.integer)
_F8 = np.dtype(np.float64)

#: What a first call costs (measured on the reference machine, see benchmarks/).
COMPILE_NOTE = "the first call of a fresh installation compiles the kernel (about 8 s), once"

_OPTS = dict(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})


def pack_chain(kinds, parent, child, axis, orientation, parent_point, child_point, q_index,
               v_index, masses, inertias, gravity=(0.0, 0.0, 0.0)):
    """Pack a tree's constants for the kernels.

    Returns
    -------
    ints : ndarray of int64, shape (m, 5)
        ``kind, parent, child, q index, v index`` per joint, base-to-leaves order.
    geo : ndarray, shape (m, 18)
        ``axis (3), orientation (9, row-major), parent_point (3), child_point (3)``.
    body : ndarray, shape (n + 1, 10)
        ``mass, inertia (9, row-major, body axes)`` per body; row 0 (the base) holds the
        gravity vector in columns 1..3.
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
    body[0, 1:4] = gravity
    for arr in (ints, geo, body):
        arr.flags.writeable = False
    return ints, np.ascontiguousarray(geo), body


_KINDS = {"rotation": REVOLUTE, "translation": PRISMATIC}


def model_data(model):
    """The packed constants of a Model for the kernels, or ``None`` when they do not apply.

    The kernels cover trees of revolute, prismatic and fixed joints whose joints point away
    from the base, with gravity as the only load (no loads, spring-dampers, joint springs,
    generalized-force callables) and a fixed base; the formulations run their NumPy versions
    otherwise. Prepared once per model version.

    Returns
    -------
    tuple ``(ints, geo, body, body_without_gravity, nv)`` or None
    """
    def build():
        if (model.base_motion is not None or model.loads or model.springs
                or model.joint_springs or model.generalized_force_elements):
            return None
        try:
            joints = model.outward_joints("the compiled kernels")
        except TopologyError:
            return None
        kinds, axes = [], []
        for j in joints:
            described = j.elementary_motion
            if described is not None:
                kinds.append(_KINDS[described[0]])
                axes.append(described[1])
            elif j.nq == 0 and j.nv == 0 and not j.moves_joint_point:
                kinds.append(WELD)
                axes.append(np.zeros(3))
            else:
                return None
        ints, geo, body = pack_chain(
            kinds, [j.parent for j in joints], [j.child for j in joints], axes,
            [j.orientation for j in joints], [j.parent_point for j in joints],
            [j.child_point for j in joints], [j.q_slice.start for j in joints],
            [j.v_slice.start for j in joints], model.masses(), model.inertias(), model.gravity)
        weightless = body.copy()
        weightless[0, 1:4] = 0.0
        weightless.flags.writeable = False
        return ints, geo, body, weightless, model.nv

    return model.prepared("compiled", build)


def fast_arrays(nv, q, qd, tau, t):
    """``(q, qd, tau, single)`` as (B, nv) arrays when the inputs need no conversion (float64,
    C-contiguous, aligned, writeable ndarrays of shape (nv,) or (B, nv), ``tau`` the same or
    None, a finite ``t``); ``None`` otherwise (the caller then checks them the long way)."""
    if (q.__class__ is not _NDARRAY or qd.__class__ is not _NDARRAY
            or q.dtype is not _F8 or qd.dtype is not _F8):
        return None
    shape = q.shape
    if (qd.shape != shape or shape[-1] != nv or len(shape) > 2 or not q.flags.carray
            or not qd.flags.carray or not isinstance(t, _REAL) or t.__class__ is bool
            or not math.isfinite(t)):
        return None
    if tau is None:
        tau = np.zeros(shape)
    elif (tau.__class__ is not _NDARRAY or tau.dtype is not _F8 or tau.shape != shape
          or not tau.flags.carray):
        return None
    if len(shape) == 1:
        return q.reshape(1, nv), qd.reshape(1, nv), tau.reshape(1, nv), True
    return q, qd, tau, False


def attempt(call, nv, q, qd, tau, t, check, what):
    """Try a compiled kernel on a formulation's inputs.

    ``call(q, qd, tau, out) -> ok`` runs the kernel on (B, nv) arrays. It runs on the inputs
    as they are when they need no conversion (:func:`fast_arrays`), otherwise on the state
    ``check()`` returns (the formulation's own input check, which also names bad inputs).

    Returns
    -------
    (result, state)
        ``result`` in the inputs' batch shape, or ``None`` when the kernel declined (a value
        not finite, a state it does not accept): then the caller runs its NumPy route on
        ``state`` (``None`` if ``check`` has not run yet).
    """
    fast = fast_arrays(nv, q, qd, tau, t)
    if fast is not None:
        out = np.zeros(fast[1].shape)
        if call(*fast[:3], out):
            return (out[0] if fast[3] else out), None
    state = check()
    out = np.zeros(state.qd.shape)
    if call(*state_arrays(state), out):
        return state.result(out, what), state
    return None, state


def state_arrays(state):
    """A checked :class:`~mbcourse.model.State`'s arrays as fresh C-contiguous float64
    copies (one kernel signature for every input)."""
    return tuple(np.array(x, dtype=np.float64, order="C")
                 for x in (state.q, state.qd, state.tau))


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
def _shift(f, rho):
    """``f <- C^T f`` for a wrench ``f = (F, M)`` about a child's centre of mass, moved to
    the parent's: ``C = [[E, X], [0, E]]``, ``X = -rho~`` (3.174), so ``M += rho x F``."""
    x0, x1, x2 = rho[0], rho[1], rho[2]
    a, b, d = f[0], f[1], f[2]
    f[3] += -b * x2 + d * x1
    f[4] += a * x2 - d * x0
    f[5] += -a * x1 + b * x0


@nb.njit(**_OPTS)
def _fold(Ma, rho, dest):
    """``dest += C^T Ma C`` (``Ma`` is overwritten): a 6x6 inertia moved from a child's
    centre of mass to its parent's."""
    x0, x1, x2 = rho[0], rho[1], rho[2]
    for r in range(6):                                  # Ma C: columns 3..5 += Ma[:, :3] X
        a, b, d = Ma[r, 0], Ma[r, 1], Ma[r, 2]
        Ma[r, 3] += -b * x2 + d * x1
        Ma[r, 4] += a * x2 - d * x0
        Ma[r, 5] += -a * x1 + b * x0
    for k in range(6):                                  # C^T (.): rows 3..5 += X^T rows 0..2
        a, b, d = Ma[0, k], Ma[1, k], Ma[2, k]
        Ma[3, k] += -b * x2 + d * x1
        Ma[4, k] += a * x2 - d * x0
        Ma[5, k] += -a * x1 + b * x0
    for r in range(6):
        for k in range(6):
            dest[r, k] += Ma[r, k]


@nb.njit(**_OPTS)
def _workspace(ints, geo, body):
    """Every work array of a kernel carved out of one allocation; ``R0`` and ``J0`` (the
    joints' fixed orientations and the bodies' inertias as 3x3 matrices) filled in."""
    m, n1 = ints.shape[0], body.shape[0]
    buf = np.zeros(n1 * 108 + m * 34 + 144)
    at = 0
    A = buf[at:at + n1 * 9].reshape((n1, 3, 3))
    at += n1 * 9
    om = buf[at:at + n1 * 3].reshape((n1, 3))
    at += n1 * 3
    Ms = buf[at:at + n1 * 36].reshape((n1, 6, 6))
    at += n1 * 36
    Qs = buf[at:at + n1 * 6].reshape((n1, 6))
    at += n1 * 6
    w = buf[at:at + n1 * 6].reshape((n1, 6))
    at += n1 * 6
    f = buf[at:at + n1 * 6].reshape((n1, 6))
    at += n1 * 6
    Ic = buf[at:at + n1 * 36].reshape((n1, 6, 6))
    at += n1 * 36
    J0 = buf[at:at + n1 * 9].reshape((n1, 3, 3))
    at += n1 * 9
    rho = buf[at:at + m * 3].reshape((m, 3))
    at += m * 3
    S = buf[at:at + m * 6].reshape((m, 6))
    at += m * 6
    w0 = buf[at:at + m * 6].reshape((m, 6))
    at += m * 6
    U = buf[at:at + m]
    at += m
    R0 = buf[at:at + m * 9].reshape((m, 3, 3))
    at += m * 9
    t3 = buf[at:at + 27].reshape((3, 3, 3))
    at += 27
    v = buf[at:at + 27].reshape((9, 3))
    at += 27
    t6 = buf[at:at + 18].reshape((3, 6))
    at += 18
    Ma = buf[at:at + 36].reshape((6, 6))
    at += 36
    F = buf[at:at + 6]
    for i in range(m):
        for r in range(3):
            for c in range(3):
                R0[i, r, c] = geo[i, 3 + 3 * r + c]
    for i in range(1, n1):
        for r in range(3):
            for c in range(3):
                J0[i, r, c] = body[i, 1 + 3 * r + c]
    return A, om, Ms, Qs, w, f, Ic, rho, S, w0, U, R0, J0, t3, v, t6, Ma, F


@nb.njit(**_OPTS)
def _rodrigues(e, angle, out):
    """``out = rot(e, angle)`` for a unit axis ``e`` (Rodrigues)."""
    s, co = np.sin(angle), np.cos(angle)
    for r in range(3):
        for k in range(3):
            out[r, k] = (1.0 - co) * e[r] * e[k] + (co if r == k else 0.0)
    out[0, 1] -= s * e[2]
    out[0, 2] += s * e[1]
    out[1, 0] += s * e[2]
    out[1, 2] -= s * e[0]
    out[2, 0] -= s * e[1]
    out[2, 1] += s * e[0]


@nb.njit(**_OPTS)
def _centres(ints, geo, qd, A, om, rho, r, vel, v):
    """Centres of mass ``r`` and their velocities ``vel`` (inertial axes) after
    :func:`_kinematics`: ``r_c = r_p + rho``, ``v_c = v_p + w_p x l_p + e qd (slide) - w_c x
    rc``, ``l_p`` from the parent's centre and ``rc`` from the child's to the joint point."""
    e, rc, ri, d, h = v[0], v[1], v[2], v[5], v[7]
    for k in range(3):
        r[0, k] = 0.0
        vel[0, k] = 0.0
    for i in range(ints.shape[0]):
        kind, p, c, vk = ints[i, 0], ints[i, 1], ints[i, 2], ints[i, 4]
        _matvec(A[p], geo[i, 0:3], e)
        _matvec(A[c], geo[i, 15:18], rc)
        for k in range(3):
            ri[k] = rho[i, k] + rc[k]
            r[c, k] = r[p, k] + rho[i, k]
        _cross(om[p], ri, h)
        _cross(om[c], rc, d)
        rate = qd[vk] if kind == 1 else 0.0
        for k in range(3):
            vel[c, k] = vel[p, k] + h[k] + e[k] * rate - d[k]


@nb.njit(**_OPTS)
def _joint_wrench(kind, force, e, lever, W):
    """The wrench ``W`` about a body's centre of mass of a joint force acting on it: a couple
    ``force e`` (revolute) or a force ``force e`` at the joint point, ``lever`` from the
    centre (prismatic). The child gets ``+force`` with its lever, the parent ``-force`` with
    its own."""
    for k in range(6):
        W[k] = 0.0
    if kind == 0:
        for k in range(3):
            W[3 + k] = force * e[k]
    elif kind == 1:
        for k in range(3):
            W[k] = force * e[k]
        W[3] = force * (lever[1] * e[2] - lever[2] * e[1])
        W[4] = force * (lever[2] * e[0] - lever[0] * e[2])
        W[5] = force * (lever[0] * e[1] - lever[1] * e[0])


@nb.njit(**_OPTS)
def _kinematics(ints, geo, body, q, qd, A, om, Ms, Qs, rho, S, w0, R0, J0, t3, v):
    """Outward pass shared by the recursions: orientations ``A`` and angular velocities
    ``om`` of the bodies, and per joint ``rho`` (parent's centre -> child's), ``S_k`` and
    ``w0_k`` of (3.174), ``w_k = C_k w_p + S_k qdd_k + w0_k``; per body ``M_k`` and ``Q_k``
    about its centre of mass (3.172), gravity and the gyroscopic moment in ``Q_k``. Inertial
    axes throughout (the same quantities as ``mb.vereshchagin``'s NumPy recursion)."""
    m = ints.shape[0]
    Rj, R, J = t3[0], t3[1], t3[2]
    Pw, lp, lc, Om, kv, z, a0, e0, h = v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]
    for r in range(3):
        om[0, r] = 0.0
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
            _rodrigues(e, q[qk], Rj)
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
            Qs[c, k] = body[c, 0] * body[0, 1 + k]           # m g
            Qs[c, k + 3] = -a0[k]


@nb.njit(**_OPTS)
def _vereshchagin_one(ints, geo, body, q, qd, tau, qdd, A, om, Ms, Qs, w, rho, S, w0, U, R0,
                      J0, t3, v, t6, Ma):
    """One configuration: Yudintsev (3.172)-(3.179), the course's chapter 4."""
    m = ints.shape[0]
    h = v[8]
    r6, MS, g6 = t6[0], t6[1], t6[2]
    _kinematics(ints, geo, body, q, qd, A, om, Ms, Qs, rho, S, w0, R0, J0, t3, v)
    for r in range(6):
        w[0, r] = 0.0
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
        # M*_p += C^T Ma C and Q*_p += C^T Qa
        _fold(Ma, rho[i], Ms[p])
        _shift(r6, rho[i])
        for r in range(6):
            Qs[p, r] += r6[r]
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
def vereshchagin_forward(ints, geo, body, q, qd, tau, qdd):
    """Vereshchagin's recursion for a batch: ``q`` (B, nq), ``qd``, ``tau`` (B, nv) into
    ``qdd`` (B, nv). Returns False if any input or output is not finite (the caller then
    takes the checked route, which names the culprit)."""
    A, om, Ms, Qs, w, f, Ic, rho, S, w0, U, R0, J0, t3, v, t6, Ma, F = _workspace(ints, geo,
                                                                                 body)
    ok = True
    for b in range(q.shape[0]):
        _vereshchagin_one(ints, geo, body, q[b], qd[b], tau[b], qdd[b], A, om, Ms, Qs, w, rho,
                          S, w0, U, R0, J0, t3, v, t6, Ma)
        for k in range(qdd.shape[1]):
            if not np.isfinite(qdd[b, k]):
                ok = False
    return ok


# ---------------------------------------------------------------- the tree equations
@nb.njit(**_OPTS)
def _tree_one(ints, geo, body, q, qd, H, hb, A, om, Ms, Qs, w, rho, S, w0, R0, J0, t3, v, f,
              Ic, F, Ma, up):
    """``A q'' = B`` of chapter 3 for one configuration, assembled in ``O(n d)`` (``d`` the
    depth): the mass matrix by composite bodies, ``H_ij = S_i^T (C^T ... I_j S_j)``, and the
    velocity and gravity terms ``hb`` by one outward and one inward pass with ``q'' = 0``
    (so ``B = tau - hb``). The same matrices as ``mb.tree``'s ``Phi m Phi^T`` assembly."""
    m = ints.shape[0]
    _kinematics(ints, geo, body, q, qd, A, om, Ms, Qs, rho, S, w0, R0, J0, t3, v)
    h = v[8]
    for r in range(6):
        w[0, r] = 0.0
    for i in range(m):                                  # accelerations with q'' = 0
        p, c = ints[i, 1], ints[i, 2]
        up[c] = i
        _cross(w[p, 3:], rho[i], h)
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
        kind, p, c, vk = ints[i, 0], ints[i, 1], ints[i, 2], ints[i, 4]
        if kind < 2:
            s = 0.0
            for k in range(6):
                s += S[i, k] * f[c, k]
            hb[vk] = s
        _shift(f[c], rho[i])
        for k in range(6):
            f[p, k] += f[c, k]
        if p > 0:
            Ma[:, :] = Ic[c]
            _fold(Ma, rho[i], Ic[p])
    for r in range(H.shape[0]):
        for k in range(H.shape[1]):
            H[r, k] = 0.0                               # joints on different branches
    for j in range(m):                                  # H_jj and up the path to the base
        if ints[j, 0] == 2:
            continue
        c, vj = ints[j, 2], ints[j, 4]
        _matvec(Ic[c], S[j], F)
        s = 0.0
        for k in range(6):
            s += S[j, k] * F[k]
        H[vj, vj] = s
        i = j
        while ints[i, 1] != 0:
            _shift(F, rho[i])                           # to the parent's centre of mass
            i = up[ints[i, 1]]
            if ints[i, 0] < 2:
                s = 0.0
                for k in range(6):
                    s += S[i, k] * F[k]
                H[ints[i, 4], vj] = s
                H[vj, ints[i, 4]] = s


@nb.njit(**_OPTS)
def _cholesky_factor(H):
    """``H = L L^T`` in place (lower triangle); False if ``H`` is not positive definite."""
    n = H.shape[0]
    for j in range(n):
        s = H[j, j]
        for k in range(j):
            s -= H[j, k] * H[j, k]
        if not s > 0.0:
            return False
        d = np.sqrt(s)
        H[j, j] = d
        for i in range(j + 1, n):
            s = H[i, j]
            for k in range(j):
                s -= H[i, k] * H[j, k]
            H[i, j] = s / d
    return True


@nb.njit(**_OPTS)
def _lower_solve(L, b, out):
    for i in range(L.shape[0]):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * out[k]
        out[i] = s / L[i, i]


@nb.njit(**_OPTS)
def _upper_solve(L, b, out):
    n = L.shape[0]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s -= L[k, i] * out[k]
        out[i] = s / L[i, i]


@nb.njit(**_OPTS)
def cholesky_solve(H, b):
    """Solve ``H x = b`` in place (``b`` becomes ``x``) by ``H = L L^T`` (``H`` becomes
    ``L``); False if ``H`` is not positive definite.

    Examples
    --------
    >>> import numpy as np
    >>> H, b = np.array([[4.0, 2.0], [2.0, 3.0]]), np.array([2.0, 1.0])
    >>> cholesky_solve(H, b), b
    (True, array([0.5, 0. ]))
    >>> cholesky_solve(np.array([[1.0, 2.0], [2.0, 1.0]]), np.zeros(2))
    False
    """
    if not _cholesky_factor(H):
        return False
    _lower_solve(H, b, b)
    _upper_solve(H, b, b)
    return True


@nb.njit(**_OPTS)
def tree_forward(ints, geo, body, q, qd, tau, qdd):
    """The tree equations ``A q'' = B`` (chapter 3) for a batch, assembled by composite
    bodies and solved by Cholesky: ``q`` (B, nq), ``qd``, ``tau`` (B, nv) into ``qdd``.
    Returns False if a mass matrix is not positive definite or a value is not finite."""
    nv = qd.shape[1]
    A, om, Ms, Qs, w, f, Ic, rho, S, w0, U, R0, J0, t3, v, t6, Ma, F = _workspace(ints, geo,
                                                                                 body)
    up = np.zeros(body.shape[0], dtype=np.int64)
    H = np.empty((nv, nv))
    hb = np.empty(nv)
    ok = True
    for b in range(q.shape[0]):
        _tree_one(ints, geo, body, q[b], qd[b], H, hb, A, om, Ms, Qs, w, rho, S, w0, R0, J0,
                  t3, v, f, Ic, F, Ma, up)
        for k in range(nv):
            qdd[b, k] = tau[b, k] - hb[k]
        if not cholesky_solve(H, qdd[b]):
            ok = False
        for k in range(nv):
            if not np.isfinite(qdd[b, k]):
                ok = False
    return ok


@nb.njit(**_OPTS)
def tree_matrices(ints, geo, body, q, qd, H, hb):
    """Mass matrices ``H`` (B, nv, nv) and velocity-and-gravity terms ``hb`` (B, nv) of the
    tree equations (``A = H``, ``B = tau - hb``), by composite bodies."""
    A, om, Ms, Qs, w, f, Ic, rho, S, w0, U, R0, J0, t3, v, t6, Ma, F = _workspace(ints, geo,
                                                                                 body)
    up = np.zeros(body.shape[0], dtype=np.int64)
    for b in range(q.shape[0]):
        _tree_one(ints, geo, body, q[b], qd[b], H[b], hb[b], A, om, Ms, Qs, w, rho, S, w0, R0,
                  J0, t3, v, f, Ic, F, Ma, up)


# ---------------------------------------------------------------- chapter 2: absolute coordinates
@nb.njit(**_OPTS)
def _invert(A, n, out):
    """``out[:n, :n] = A[:n, :n]^-1`` by Gauss-Jordan with partial pivoting (n <= 6); False if
    singular."""
    W = np.zeros((6, 12))
    for r in range(n):
        for c in range(n):
            W[r, c] = A[r, c]
        W[r, n + r] = 1.0
    for c in range(n):
        piv = c
        for r in range(c + 1, n):
            if abs(W[r, c]) > abs(W[piv, c]):
                piv = r
        if not abs(W[piv, c]) > 0.0:
            return False
        if piv != c:
            for k in range(2 * n):
                W[c, k], W[piv, k] = W[piv, k], W[c, k]
        d = W[c, c]
        for k in range(2 * n):
            W[c, k] /= d
        for r in range(n):
            if r != c:
                f = W[r, c]
                if f != 0.0:
                    for k in range(2 * n):
                        W[r, k] -= f * W[c, k]
    for r in range(n):
        for c in range(n):
            out[r, c] = W[r, n + c]
    return True


@nb.njit(**_OPTS)
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


@nb.njit(**_OPTS)
def _joint_rows(kind, g, p, c, qj, A, om, vel, Gc, Gp, gam, v, tmp6):
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
    if kind != 1:                                        # the joint points coincide (3 rows)
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
    if kind != 0:                                        # no relative rotation (3 rows)
        for k in range(3):
            Gc[nrow + k, 3 + k] = 1.0
            Gp[nrow + k, 3 + k] = -1.0
        nrow += 3
    if kind < 2:                                         # two normals of the axis
        _perpendicular(e, n1, n2)
        for j in range(2):
            n = n1 if j == 0 else n2
            if kind == 0:                                # keep the axis: n . (w_c - w_p) = 0
                _cross(om[p], n, h)
                for k in range(3):
                    Gc[nrow, 3 + k] = n[k]
                    Gp[nrow, 3 + k] = -n[k]
                gam[nrow] = -(h[0] * w_rel[0] + h[1] * w_rel[1] + h[2] * w_rel[2])
            else:                                        # the point stays on the line
                for k in range(3):
                    d[k] = e[k] * qj                     # child's point - parent's point
                _cross(om[c], rc, h)
                _cross(om[p], ri, dd)
                for k in range(3):                       # d' = v_c + w_c x rc - v_p - w_p x ri
                    dd[k] = vel[c, k] + h[k] - vel[p, k] - dd[k]
                _cross(rc, n, h)
                for k in range(3):
                    Gc[nrow, k] = n[k]
                    Gc[nrow, 3 + k] = h[k]
                _cross(ri, n, h)
                _cross(n, d, tmp6[0:3])
                for k in range(3):
                    Gp[nrow, k] = -n[k]
                    Gp[nrow, 3 + k] = -h[k] + tmp6[k]
                gsum = 0.0
                _cross(om[p], n, h)                      # w_p x n
                for k in range(3):
                    gsum += 2.0 * h[k] * dd[k]
                _cross(om[p], h, tmp6[0:3])              # w_p x (w_p x n)
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
                gam[nrow] = -gsum
            nrow += 1
    return nrow


@nb.njit(**_OPTS)
def _joint_acceleration(kind, g, p, c, qj, vj, A, om, vel, X, v):
    """A joint's generalized acceleration from its bodies' accelerations ``X``:
    ``e . (eps_c - eps_p)`` for a revolute joint, the slide's relative acceleration along the
    axis for a prismatic one."""
    e, rc, ri, n1, n2, d, dd, h = v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
    _matvec(A[p], g[0:3], e)
    s = 0.0
    if kind == 0:
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


@nb.njit(**_OPTS)
def _cartesian_one(ints, geo, body, q, qd, tau, qdd, A, om, Ms, Qs, rho, S, w0, R0, J0, t3, v,
                   r, vel, X, G, gam, nr, Minv, Kinv, res, u, tmp6, tmpM):
    """Chapter 2 for one configuration: every body free, M_k X_k = F_k + G_k^T lam (2.5)-(2.9),
    each joint's rows G_c X_c + G_p X_p = gamma (2.22), the KKT system (2.49) solved by
    block elimination in tree order from the leaves (Baraff's LDL^T without fill-in), then the
    joint accelerations from the bodies' relative motion. Rows in inertial axes."""
    m = ints.shape[0]
    _kinematics(ints, geo, body, q, qd, A, om, Ms, Qs, rho, S, w0, R0, J0, t3, v)
    e, rc, ri = v[0], v[1], v[2]
    for k in range(6):
        X[0, k] = 0.0
    _centres(ints, geo, qd, A, om, rho, r, vel, v)
    for i in range(m):                                   # joint forces as wrench pairs
        kind, p, c, vk = ints[i, 0], ints[i, 1], ints[i, 2], ints[i, 4]
        if kind < 2 and tau[vk] != 0.0:
            _matvec(A[p], geo[i, 0:3], e)
            _matvec(A[c], geo[i, 15:18], rc)
            for k in range(3):
                ri[k] = rho[i, k] + rc[k]
            _joint_wrench(kind, tau[vk], e, rc, tmp6)
            for k in range(6):
                Qs[c, k] += tmp6[k]
            _joint_wrench(kind, -tau[vk], e, ri, tmp6)
            for k in range(6):
                Qs[p, k] += tmp6[k]
    # the rows of every joint: G[i, 0] (child), G[i, 1] (parent), gamma
    for i in range(m):
        slide = q[ints[i, 3]] if ints[i, 0] == 1 else 0.0
        nr[i] = _joint_rows(ints[i, 0], geo[i], ints[i, 1], ints[i, 2], slide, A, om, vel,
                            G[i, 0], G[i, 1], gam[i], v, tmp6)
    # inward: X_c = M~_c^-1 (F~_c + G_c^T lam); the joint's rows give lam; fold into parent
    ok = True
    for i in range(m - 1, -1, -1):
        p, c = ints[i, 1], ints[i, 2]
        nrow = nr[i]
        if not _invert(Ms[c], 6, Minv[i]):
            ok = False
        _matvec(Minv[i], Qs[c], u[i])                   # M~^-1 F~
        for a in range(nrow):                           # K = G_c M~^-1 G_c^T
            for k in range(6):
                s = 0.0
                for l in range(6):
                    s += Minv[i, k, l] * G[i, 0, a, l]
                tmpM[k, a] = s
        for a in range(nrow):
            for b in range(nrow):
                s = 0.0
                for k in range(6):
                    s += G[i, 0, a, k] * tmpM[k, b]
                Kinv[i, a, b] = s
        if not _invert(Kinv[i], nrow, Kinv[i]):
            ok = False
        for a in range(nrow):                           # gamma - G_c M~^-1 F~
            s = gam[i, a]
            for k in range(6):
                s -= G[i, 0, a, k] * u[i, k]
            res[i, a] = s
        if p > 0:                                       # M~_p += G_p^T K^-1 G_p, F~_p += ...
            for a in range(nrow):
                s = 0.0
                for b in range(nrow):
                    s += Kinv[i, a, b] * res[i, b]
                tmp6[a] = s
            for k in range(6):
                for a in range(nrow):
                    s = 0.0
                    for b in range(nrow):
                        s += Kinv[i, a, b] * G[i, 1, b, k]
                    tmpM[a, k] = s
            for k in range(6):
                f = 0.0
                for a in range(nrow):
                    f += G[i, 1, a, k] * tmp6[a]
                Qs[p, k] += f
                for l in range(6):
                    s = 0.0
                    for a in range(nrow):
                        s += G[i, 1, a, k] * tmpM[a, l]
                    Ms[p, k, l] += s
    # outward: lam = K^-1 (res - G_p X_p), X_c = u + M~^-1 G_c^T lam, then qdd
    for i in range(m):
        kind, p, c, qk, vk = ints[i, 0], ints[i, 1], ints[i, 2], ints[i, 3], ints[i, 4]
        nrow = nr[i]
        for a in range(nrow):
            s = res[i, a]
            for k in range(6):
                s -= G[i, 1, a, k] * X[p, k]
            tmp6[a] = s
        for k in range(6):
            s = 0.0
            for a in range(nrow):
                lam = 0.0
                for b in range(nrow):
                    lam += Kinv[i, a, b] * tmp6[b]
                s += G[i, 0, a, k] * lam
            h6 = s
            tmpM[0, k] = h6
        for k in range(6):
            s = u[i, k]
            for l in range(6):
                s += Minv[i, k, l] * tmpM[0, l]
            X[c, k] = s
        if kind < 2:
            qdd[vk] = _joint_acceleration(kind, geo[i], p, c, q[qk], qd[vk], A, om, vel, X, v)
    return ok


@nb.njit(**_OPTS)
def cartesian_forward(ints, geo, body, q, qd, tau, qdd):
    """Chapter 2's absolute-coordinate equations for a batch (see :func:`_cartesian_one`):
    ``q`` (B, nq), ``qd``, ``tau`` (B, nv) into ``qdd``. False if a value is not finite or a
    block is singular."""
    m, n1 = ints.shape[0], body.shape[0]
    A, om, Ms, Qs, w, f, Ic, rho, S, w0, U, R0, J0, t3, v, t6, Ma, F = _workspace(ints, geo,
                                                                                 body)
    r = np.empty((n1, 3))
    vel = np.empty((n1, 3))
    X = np.empty((n1, 6))
    G = np.empty((m, 2, 6, 6))
    gam = np.empty((m, 6))
    nr = np.empty(m, dtype=np.int64)
    Minv = np.empty((m, 6, 6))
    Kinv = np.empty((m, 6, 6))
    res = np.empty((m, 6))
    u = np.empty((m, 6))
    tmp6 = np.empty(6)
    tmpM = np.empty((6, 6))
    ok = True
    for b in range(q.shape[0]):
        if not _cartesian_one(ints, geo, body, q[b], qd[b], tau[b], qdd[b], A, om, Ms, Qs,
                              rho, S, w0, R0, J0, t3, v, r, vel, X, G, gam, nr, Minv, Kinv,
                              res, u, tmp6, tmpM):
            ok = False
        for k in range(qdd.shape[1]):
            if not np.isfinite(qdd[b, k]):
                ok = False
    return ok


# ---------------------------------------------------------------- chapter 6: cut joints
@nb.njit(**_OPTS)
def _loops_one(ints, geo, body, cints, cgeo, q_tree, v_tree, q, qd, tau, qdd, A, om, Ms, Qs,
               w, rho, S, w0, R0, J0, t3, v, f, Ic, F, Ma, up, r, vel, J, X, qT, qdT, tauT,
               Hm, hb, G, gam, tmp6, rcond, tol):
    """Chapter 6 for one configuration: the reduced tree's ``A qdd_T = B`` (composite
    bodies), each cut joint's rows ``H qdd_T = gamma`` from the bodies' Jacobians, minimum-norm
    multipliers from an SVD of ``L^-1 H^T`` (3.186)-(3.195), and the cut joints' accelerations
    from their bodies. False if the state does not close the loops (the checked route then
    names the joint) or a value is not finite."""
    m, N, K = ints.shape[0], q_tree.shape[0], cints.shape[0]
    n1 = body.shape[0]
    for k in range(N):
        qT[k] = q[q_tree[k]]
        qdT[k] = qd[v_tree[k]]
        tauT[k] = tau[v_tree[k]]
    _tree_one(ints, geo, body, qT, qdT, Hm, hb, A, om, Ms, Qs, w, rho, S, w0, R0, J0, t3, v,
              f, Ic, F, Ma, up)
    e, rc, ri, d, h = v[0], v[1], v[2], v[5], v[7]
    _centres(ints, geo, qdT, A, om, rho, r, vel, v)
    for col in range(N):
        for k in range(6):
            J[0, k, col] = 0.0
    scale = 1.0
    for i in range(m):                                   # the bodies' Jacobians
        kind, p, c, vk = ints[i, 0], ints[i, 1], ints[i, 2], ints[i, 4]
        for k in range(3):
            scale = max(scale, 1.0 + abs(r[c, k]))
        for col in range(N):                             # v_c = v_p + w_p x rho
            for k in range(3):
                J[c, 3 + k, col] = J[p, 3 + k, col]
            J[c, 0, col] = J[p, 0, col] + J[p, 4, col] * rho[i, 2] - J[p, 5, col] * rho[i, 1]
            J[c, 1, col] = J[p, 1, col] + J[p, 5, col] * rho[i, 0] - J[p, 3, col] * rho[i, 2]
            J[c, 2, col] = J[p, 2, col] + J[p, 3, col] * rho[i, 1] - J[p, 4, col] * rho[i, 0]
        if kind < 2:
            for k in range(6):
                J[c, k, vk] += S[i, k]
    vscale = 1.0
    for b in range(n1):
        for k in range(3):
            vscale = max(vscale, 1.0 + abs(vel[b, k]) + abs(om[b, k]) * scale)
    # the cut joints close their loops (position and velocity), with their own q, qd
    for j in range(K):
        kind, p, c, qk, vk = cints[j, 0], cints[j, 1], cints[j, 2], cints[j, 3], cints[j, 4]
        g = cgeo[j]
        qj = q[qk] if kind < 2 else 0.0
        vj = qd[vk] if kind < 2 else 0.0
        R = t3[0]
        Rj = t3[1]
        for a in range(3):
            for bb in range(3):
                Rj[a, bb] = 1.0 if a == bb else 0.0
        if kind == 0:
            _rodrigues(g[0:3], qj, Rj)
        for a in range(3):                               # R = Rj R0
            for bb in range(3):
                acc = 0.0
                for k in range(3):
                    acc += Rj[a, k] * g[3 + 3 * k + bb]
                R[a, bb] = acc
        for a in range(3):                               # A_c - A_p R
            for bb in range(3):
                acc = 0.0
                for k in range(3):
                    acc += A[p, a, k] * R[k, bb]
                if abs(A[c, a, bb] - acc) > tol:
                    return False
        _matvec(A[p], g[0:3], e)
        _matvec(A[c], g[15:18], rc)
        for k in range(3):
            h[k] = g[12 + k] + (g[k] * qj if kind == 1 else 0.0)
        _matvec(A[p], h, ri)                             # parent's centre -> joint point
        for k in range(3):
            if abs(r[c, k] + rc[k] - r[p, k] - ri[k]) > tol * scale:
                return False
        for k in range(3):
            rel = om[c, k] - om[p, k] - (e[k] * vj if kind == 0 else 0.0)
            if abs(rel) > tol * vscale:
                return False
        _cross(om[c], rc, h)
        _cross(om[p], ri, d)
        for k in range(3):
            rel = vel[c, k] + h[k] - vel[p, k] - d[k] - (e[k] * vj if kind == 1 else 0.0)
            if abs(rel) > tol * vscale:
                return False
    # rows H qdd_T = gamma' and the cut joints' forces as wrench pairs on their bodies
    nc = 0
    rhs = np.empty(N)
    for k in range(N):
        rhs[k] = tauT[k] - hb[k]
    Hc = np.zeros((6 * K, N))
    gc = np.zeros(6 * K)
    for j in range(K):
        kind, p, c, qk, vk = cints[j, 0], cints[j, 1], cints[j, 2], cints[j, 3], cints[j, 4]
        slide = q[qk] if kind == 1 else 0.0
        nrow = _joint_rows(kind, cgeo[j], p, c, slide, A, om, vel, G[0], G[1], gam, v, tmp6)
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
        if kind < 2 and tau[vk] != 0.0:                  # B*: the cut joint's force
            _matvec(A[p], cgeo[j, 0:3], e)
            _matvec(A[c], cgeo[j, 15:18], rc)
            for k in range(3):
                h[k] = cgeo[j, 12 + k] + (cgeo[j, k] * slide if kind == 1 else 0.0)
            _matvec(A[p], h, ri)
            _joint_wrench(kind, tau[vk], e, rc, tmp6)
            for col in range(N):                          # J_c^T W_c
                acc = 0.0
                for k in range(6):
                    acc += J[c, k, col] * tmp6[k]
                rhs[col] += acc
            _joint_wrench(kind, -tau[vk], e, ri, tmp6)
            for col in range(N):                          # J_p^T W_p
                acc = 0.0
                for k in range(6):
                    acc += J[p, k, col] * tmp6[k]
                rhs[col] += acc
    # minimum-norm multipliers: A = L L^T, Y = L^-1 H^T = U s V^T
    if not _cholesky_factor(Hm):
        return False
    y = np.empty(N)
    x0 = np.empty(N)
    _lower_solve(Hm, rhs, y)
    _upper_solve(Hm, y, x0)
    qddT = x0.copy()
    if nc > 0:
        Y = np.empty((N, nc))
        for a in range(nc):
            _lower_solve(Hm, Hc[a], y)
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
        lam = np.zeros(nc)
        for k in range(nc):
            s_ = 0.0
            for a in range(sv.shape[0]):
                s_ += Vt[a, k] * z[a]
            lam[k] = s_
        hl = np.zeros(N)
        for k in range(N):
            s_ = 0.0
            for a in range(nc):
                s_ += Hc[a, k] * lam[a]
            hl[k] = s_
        _lower_solve(Hm, hl, y)
        _upper_solve(Hm, y, x0)
        for k in range(N):
            qddT[k] += x0[k]
    for k in range(N):
        qdd[v_tree[k]] = qddT[k]
    # the cut joints' accelerations from their bodies: X = J qdd_T + w
    for b in range(n1):
        for k in range(6):
            s_ = w[b, k] if b > 0 else 0.0
            for col in range(N):
                s_ += J[b, k, col] * qddT[col]
            X[b, k] = s_
    for j in range(K):
        kind, p, c, qk, vk = cints[j, 0], cints[j, 1], cints[j, 2], cints[j, 3], cints[j, 4]
        if kind < 2:
            qdd[vk] = _joint_acceleration(kind, cgeo[j], p, c, q[qk], qd[vk], A, om, vel, X,
                                          v)
    return True


@nb.njit(**_OPTS)
def loops_forward(ints, geo, body, cints, cgeo, q_tree, v_tree, q, qd, tau, qdd, rcond, tol):
    """Chapter 6's cut-joint method for a batch (see :func:`_loops_one`): the reduced tree's
    packed constants (``ints, geo, body``, its own coordinates), the cut joints' (``cints``:
    kind, parent, child, q index, v index in the Model's vectors; ``cgeo`` as in
    :func:`pack_chain`), the positions ``q_tree``, ``v_tree`` of the tree's coordinates in the
    Model's; ``q`` (B, nq), ``qd``, ``tau`` (B, nv) into ``qdd``."""
    n1, N = body.shape[0], q_tree.shape[0]
    A, om, Ms, Qs, w, f, Ic, rho, S, w0, U, R0, J0, t3, v, t6, Ma, F = _workspace(ints, geo,
                                                                                 body)
    up = np.zeros(n1, dtype=np.int64)
    r = np.empty((n1, 3))
    vel = np.empty((n1, 3))
    J = np.empty((n1, 6, N))
    X = np.empty((n1, 6))
    qT = np.empty(N)
    qdT = np.empty(N)
    tauT = np.empty(N)
    Hm = np.empty((N, N))
    hb = np.empty(N)
    G = np.empty((2, 6, 6))
    gam = np.empty(6)
    tmp6 = np.empty(6)
    ok = True
    for b in range(q.shape[0]):
        if not _loops_one(ints, geo, body, cints, cgeo, q_tree, v_tree, q[b], qd[b], tau[b],
                          qdd[b], A, om, Ms, Qs, w, rho, S, w0, R0, J0, t3, v, f, Ic, F, Ma, up,
                          r, vel, J, X, qT, qdT, tauT, Hm, hb, G, gam, tmp6, rcond, tol):
            ok = False
            break
        for k in range(qdd.shape[1]):
            if not np.isfinite(qdd[b, k]):
                ok = False
    return ok


# ---------------------------------------------------------------- batches on every core
#: Batches at least this large are split over the cores (numba's threads).
PARALLEL_BATCH = 64


@nb.njit(parallel=True, **_OPTS)
def _split(kernel_id, threads, ints, geo, body, q, qd, tau, qdd):
    """Run a kernel on ``threads`` contiguous slices of the batch, in parallel."""
    B = q.shape[0]
    chunk = (B + threads - 1) // threads
    ok = np.ones(threads, dtype=np.bool_)
    for t in nb.prange(threads):
        lo = t * chunk
        hi = min(B, lo + chunk)
        if lo < hi:
            if kernel_id == 0:
                ok[t] = vereshchagin_forward(ints, geo, body, q[lo:hi], qd[lo:hi], tau[lo:hi],
                                             qdd[lo:hi])
            elif kernel_id == 1:
                ok[t] = tree_forward(ints, geo, body, q[lo:hi], qd[lo:hi], tau[lo:hi],
                                     qdd[lo:hi])
            else:
                ok[t] = cartesian_forward(ints, geo, body, q[lo:hi], qd[lo:hi], tau[lo:hi],
                                          qdd[lo:hi])
    return ok.all()


def run(kernel, data, q, qd, tau, qdd, gravity=True):
    """Call ``kernel`` (:func:`vereshchagin_forward`, :func:`tree_forward` or
    :func:`cartesian_forward`) with a model's
    :func:`model_data` on a batch, on every core when the batch has at least
    :data:`PARALLEL_BATCH` configurations; ``gravity=False`` switches gravity off."""
    body = data[2] if gravity else data[3]
    if q.shape[0] >= PARALLEL_BATCH:
        kernel_id = 0 if kernel is vereshchagin_forward else 1 if kernel is tree_forward else 2
        return _split(kernel_id, nb.get_num_threads(), data[0], data[1], body, q, qd, tau, qdd)
    return kernel(data[0], data[1], body, q, qd, tau, qdd)


# ------------------------------------------- Ivanov's two solvers of (6), as printed
# Both kernels take the per-call kinematics of Ivanov's §1 (C_i, A_i, M_i about O_i in
# body axes, v*_i) already evaluated, and solve (6) for qd and mu, one configuration,
# ``repeats`` times (for timing). Every product is a dense loop over its operands' sizes
# (the 6x6 C_i as a general matrix, in both routes alike); each helper adds the
# multiplications and additions it performs to ``count`` = [multiplications (divisions and
# square roots included), additions (subtractions included)], so the two routes' arithmetic
# is counted from the code that runs, not estimated.

@nb.njit(**_OPTS)
def _mm_c(A, B, out, r, kk, c, count, ta=False):
    """``out[:r, :c] = A[:r, :kk] @ B[:kk, :c]``, or ``A[:kk, :r].T @ B[:kk, :c]`` with
    ``ta``."""
    for i in range(r):
        for j in range(c):
            s = 0.0
            for k in range(kk):
                s += (A[k, i] if ta else A[i, k]) * B[k, j]
            out[i, j] = s
    count[0] += r * c * kk
    count[1] += r * c * (kk - 1)


@nb.njit(**_OPTS)
def _mv_c(A, x, out, r, kk, count, ta=False):
    """``out[:r] = A[:r, :kk] @ x[:kk]``, or ``A[:kk, :r].T @ x[:kk]`` with ``ta``."""
    for i in range(r):
        s = 0.0
        for k in range(kk):
            s += (A[k, i] if ta else A[i, k]) * x[k]
        out[i] = s
    count[0] += r * kk
    count[1] += r * (kk - 1)


@nb.njit(**_OPTS)
def _carry_inertia_c(phi, Ms, k, h, X, count):
    """A child's articulated terms carried to its parent ``k``: ``phi*_k += h``,
    ``M*_k += X`` (both routes, backward pass)."""
    for r in range(6):
        phi[k, r] += h[r]
        for cc in range(6):
            Ms[k, r, cc] += X[r, cc]
    count[1] += 42


@nb.njit(**_OPTS)
def _carry_velocity_c(C, vk, vstar_c, out, count):
    """``out = C v_k + v*``: the parent's velocity carried to the child (both routes,
    forward pass)."""
    _mv_c(C, vk, out, 6, 6, count)
    for r in range(6):
        out[r] += vstar_c[r]
    count[1] += 6


@nb.njit(**_OPTS)
def _velocity_momentum_c(Ai, qdi, ni, Msc, phic, s6, h, vc, muc, count):
    """A body's velocity and momentum once its joint rates ``qdi`` are known:
    ``v_i = (C v_k + v*) + A qd_i`` (``s6`` holds the bracket), ``mu_i = M* v_i + phi*``."""
    if ni > 0:
        _mv_c(Ai, qdi, h, 6, ni, count)
        for r in range(6):
            s6[r] += h[r]
        count[1] += 6
    _mv_c(Msc, s6, h, 6, 6, count)
    for r in range(6):
        vc[r] = s6[r]
        muc[r] = h[r] + phic[r]
    count[1] += 6


@nb.njit(**_OPTS)
def _invert_c(V, D, n, count):
    """``D = V^-1`` (n x n) by Gauss-Jordan elimination without pivoting (V is SPD);
    False if a pivot is not positive."""
    for i in range(n):
        for j in range(n):
            D[i, j] = 1.0 if i == j else 0.0
    for k in range(n):
        piv = V[k, k]
        if not piv > 0.0:
            return False
        inv = 1.0 / piv
        count[0] += 1
        for j in range(n):
            V[k, j] *= inv
            D[k, j] *= inv
        count[0] += 2 * n
        for i in range(n):
            if i != k:
                f = V[i, k]
                for j in range(n):
                    V[i, j] -= f * V[k, j]
                    D[i, j] -= f * D[k, j]
                count[0] += 2 * n
                count[1] += 2 * n
    return True


@nb.njit(**_OPTS)
def _chol_c(V, n, count):
    """``V = L L^T`` in place (lower triangle); False if ``V`` is not positive definite."""
    for j in range(n):
        s = V[j, j]
        for k in range(j):
            s -= V[j, k] * V[j, k]
        count[0] += j
        count[1] += j
        if not s > 0.0:
            return False
        d = np.sqrt(s)
        V[j, j] = d
        count[0] += 1
        for i in range(j + 1, n):
            s = V[i, j]
            for k in range(j):
                s -= V[i, k] * V[j, k]
            V[i, j] = s / d
            count[0] += j + 1
            count[1] += j
    return True


@nb.njit(**_OPTS)
def _lsolve_c(L, B, n, c, count):
    """``B[:n, :c] <- L^-1 B`` (forward substitution, L lower triangular)."""
    for j in range(c):
        for i in range(n):
            s = B[i, j]
            for k in range(i):
                s -= L[i, k] * B[k, j]
            B[i, j] = s / L[i, i]
            count[0] += i + 1
            count[1] += i


@nb.njit(**_OPTS)
def _ltsolve_c(L, b, n, count):
    """``b[:n] <- L^-T b`` (back substitution with L^T)."""
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s -= L[k, i] * b[k]
        b[i] = s / L[i, i]
        count[0] += n - i
        count[1] += n - i - 1


@nb.njit(**_OPTS)
def ivanov_sweep_solve(ints, C, A, M, vstar, p, qd, mu, count, repeats):
    """Ivanov's sweep (alg. of §3), as printed: ``D_i = (A_i^T M*_i A_i)^-1`` by inversion,
    ``H_i = E - M*_i A_i D_i A_i^T`` formed, ``M*_k += C^T H M* C``,
    ``phi*_k += C^T [M* A D p + H (M* v* + phi*)]``; forward ``qd_i = D_i [p_i - A_i^T
    (phi*_i + M*_i (C_i v_k + v*_i))]``, ``v_i``, ``mu_i = M*_i v_i + phi*_i``.

    ``ints`` (m, 4): parent, child, first speed index, number of speeds ``n_i`` per joint
    (base-to-leaves order); ``C`` (m, 6, 6); ``A`` (m, 6, 6), the first ``n_i`` columns
    used; ``M`` (n + 1, 6, 6) about ``O_i``; ``vstar`` (n + 1, 6); ``p`` (nv,). Writes
    ``qd`` (nv,), ``mu`` (n + 1, 6) and adds the arithmetic to ``count`` (2,). Returns False
    if some ``A_i^T M*_i A_i`` is not positive definite."""
    m, n1 = ints.shape[0], M.shape[0]
    Ms = np.empty((n1, 6, 6))
    phi = np.empty((n1, 6))
    v = np.empty((n1, 6))
    D = np.zeros((m, 6, 6))
    MA, G, H = np.empty((6, 6)), np.empty((6, 6)), np.empty((6, 6))
    X, Y, Vn = np.empty((6, 6)), np.empty((6, 6)), np.empty((6, 6))
    w, h, s6, t6 = np.empty(6), np.empty(6), np.empty(6), np.empty(6)
    for _ in range(repeats):
        Ms[:] = M
        phi[:] = 0.0
        for i in range(m - 1, -1, -1):                   # backward: leaves -> base
            k, c, vs, ni = ints[i, 0], ints[i, 1], ints[i, 2], ints[i, 3]
            Mc = Ms[c]
            _mv_c(Mc, vstar[c], w, 6, 6, count)          # M* v* + phi*
            for r in range(6):
                w[r] += phi[c, r]
            count[1] += 6
            if ni > 0:
                _mm_c(Mc, A[i], MA, 6, 6, ni, count)     # M* A
                _mm_c(A[i], MA, Vn, ni, 6, ni, count, True)   # A^T M* A
                if not _invert_c(Vn, D[i], ni, count):   # D = (A^T M* A)^-1
                    return False
                _mm_c(MA, D[i], G, 6, ni, ni, count)     # M* A D
                for r in range(6):                       # H = E - M* A D A^T
                    for cc in range(6):
                        s = 0.0
                        for kk in range(ni):
                            s += G[r, kk] * A[i, cc, kk]
                        H[r, cc] = (1.0 if r == cc else 0.0) - s
                count[0] += 36 * ni
                count[1] += 36 * ni                      # (ni - 1) adds and one subtraction
                _mv_c(G, p[vs:], s6, 6, ni, count)       # M* A D p
                _mv_c(H, w, t6, 6, 6, count)             # H (M* v* + phi*)
                for r in range(6):
                    t6[r] += s6[r]
                count[1] += 6
                _mm_c(H, Mc, X, 6, 6, 6, count)          # H M*
            else:
                for r in range(6):
                    t6[r] = w[r]
                X[:, :] = Mc
            _mm_c(X, C[i], Y, 6, 6, 6, count)            # (H M*) C
            _mm_c(C[i], Y, X, 6, 6, 6, count, True)           # C^T (H M* C)
            _mv_c(C[i], t6, h, 6, 6, count, True)
            _carry_inertia_c(phi, Ms, k, h, X, count)   # phi*_k += h, M*_k += X
        for r in range(6):
            v[0, r] = 0.0
        for i in range(m):                               # forward: base -> leaves
            k, c, vs, ni = ints[i, 0], ints[i, 1], ints[i, 2], ints[i, 3]
            _carry_velocity_c(C[i], v[k], vstar[c], s6, count)   # C v_k + v*
            if ni > 0:
                _mv_c(Ms[c], s6, h, 6, 6, count)         # phi* + M* (C v_k + v*)
                for r in range(6):
                    h[r] += phi[c, r]
                count[1] += 6
                _mv_c(A[i], h, t6, ni, 6, count, True)
                for r in range(ni):
                    t6[r] = p[vs + r] - t6[r]
                count[1] += ni
                _mv_c(D[i], t6, w, ni, ni, count)        # qd_i = D (p - A^T (...))
                for r in range(ni):
                    qd[vs + r] = w[r]
            _velocity_momentum_c(A[i], w, ni, Ms[c], phi[c], s6, h, v[c], mu[c], count)
        for r in range(6):
            mu[0, r] = phi[0, r]
    return True


@nb.njit(**_OPTS)
def ivanov_cholesky_solve(ints, C, A, M, vstar, p, qd, mu, count, repeats):
    """Ivanov's block ``L^T D L`` algorithm (alg. of §4), as printed: ``L_i L_i^T =
    A_i^T M*_i A_i``, ``L_i x_i = p_i - A_i^T (phi*_i + M*_i v*_i)``, ``L_i V_i = A_i^T M*_i
    C_i``; ``M*_k += C^T M* C - V^T V``, ``phi*_k += C^T (M* v* + phi*) + V^T x``; forward
    ``L_i^T qd_i = x_i - V_i v_k``, ``v_i``, ``mu_i = M*_i v_i + phi*_i``. Arguments and
    result as :func:`ivanov_sweep_solve`."""
    m, n1 = ints.shape[0], M.shape[0]
    Ms = np.empty((n1, 6, 6))
    phi = np.empty((n1, 6))
    v = np.empty((n1, 6))
    L = np.zeros((m, 6, 6))
    V = np.zeros((m, 6, 6))
    x = np.zeros((m, 6))
    AtM, X, Y = np.empty((6, 6)), np.empty((6, 6)), np.empty((6, 6))
    w, h, s6 = np.empty(6), np.empty(6), np.empty(6)
    for _ in range(repeats):
        Ms[:] = M
        phi[:] = 0.0
        for i in range(m - 1, -1, -1):                   # backward: leaves -> base
            k, c, vs, ni = ints[i, 0], ints[i, 1], ints[i, 2], ints[i, 3]
            Mc = Ms[c]
            _mv_c(Mc, vstar[c], w, 6, 6, count)          # M* v* + phi*
            for r in range(6):
                w[r] += phi[c, r]
            count[1] += 6
            _mm_c(Mc, C[i], Y, 6, 6, 6, count)           # C^T M* C
            _mm_c(C[i], Y, X, 6, 6, 6, count, True)
            _mv_c(C[i], w, h, 6, 6, count, True)              # C^T (M* v* + phi*)
            if ni > 0:
                _mm_c(A[i], Mc, AtM, ni, 6, 6, count, True)   # A^T M*
                _mm_c(AtM, A[i], L[i], ni, 6, ni, count) # A^T M* A
                if not _chol_c(L[i], ni, count):         # = L L^T
                    return False
                _mv_c(A[i], w, s6, ni, 6, count, True)        # x = L^-1 (p - A^T (...))
                for r in range(ni):
                    x[i, r] = p[vs + r] - s6[r]
                count[1] += ni
                _lsolve_c(L[i], x[i].reshape((6, 1)), ni, 1, count)
                _mm_c(AtM, C[i], V[i], ni, 6, 6, count)  # V = L^-1 A^T M* C
                _lsolve_c(L[i], V[i], ni, 6, count)
                _mm_c(V[i], V[i], Y, 6, ni, 6, count, True)   # V^T V
                _mv_c(V[i], x[i], s6, 6, ni, count, True)     # V^T x
                for r in range(6):
                    h[r] += s6[r]
                    for cc in range(6):
                        X[r, cc] -= Y[r, cc]
                count[1] += 42
            _carry_inertia_c(phi, Ms, k, h, X, count)   # phi*_k += h, M*_k += X
        for r in range(6):
            v[0, r] = 0.0
        for i in range(m):                               # forward: base -> leaves
            k, c, vs, ni = ints[i, 0], ints[i, 1], ints[i, 2], ints[i, 3]
            _carry_velocity_c(C[i], v[k], vstar[c], s6, count)   # C v_k + v*
            if ni > 0:
                _mv_c(V[i], v[k], w, ni, 6, count)       # L^T qd = x - V v_k
                for r in range(ni):
                    w[r] = x[i, r] - w[r]
                count[1] += ni
                _ltsolve_c(L[i], w, ni, count)
                for r in range(ni):
                    qd[vs + r] = w[r]
            _velocity_momentum_c(A[i], w, ni, Ms[c], phi[c], s6, h, v[c], mu[c], count)
        for r in range(6):
            mu[0, r] = phi[0, r]
    return True
