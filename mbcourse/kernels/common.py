"""What every chapter's kernel shares: joint kinds, 3-vector and small-matrix loops, the
work arrays and the outward kinematics pass of Yudintsev (3.172)-(3.174).

Everything here is a numba function of plain loops over preallocated arrays (no allocation
inside the loops). The kinematics pass fills one :class:`Work` (a named tuple of arrays, one
argument for the kernels instead of a long parameter list).

Examples
--------
>>> import numpy as np
>>> out = np.empty(3)
>>> cross(np.array([1.0, 0, 0]), np.array([0, 1.0, 0]), out)
>>> out.tolist()
[0.0, 0.0, 1.0]
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

__all__ = ["REVOLUTE", "PRISMATIC", "WELD", "OPTS", "INLINE", "Work", "workspace", "cross",
           "mv3", "mtv3", "mm3", "take",
           "matvec", "matmul", "shift", "fold", "rodrigues", "kinematics", "centres",
           "joint_wrench", "cholesky_factor", "lower_solve", "upper_solve", "cholesky_solve",
           "finite"]

#: Joint kinds in the packed ``ints[:, 0]`` column (see :func:`mbcourse.kernels.pack_chain`).
REVOLUTE, PRISMATIC, WELD = 0, 1, 2

#: numba options of every kernel: compiled once per machine (``cache=True``), the GIL released.
OPTS = dict(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})
_OPTS = OPTS
#: The same, inlined into the caller by numba: for the steps a kernel runs once per
#: configuration (a call counts a reference per array argument, measured ~1 us per state).
INLINE = dict(OPTS, inline="always")


class Work(NamedTuple):
    """Work arrays of a kernel (``n1`` bodies with the base, ``m`` joints).

    Per body: orientations ``A`` (n1, 3, 3), angular velocities ``om`` (n1, 3), ``Ms``
    (n1, 6, 6) and ``Qs`` (n1, 6) (3.172) (articulated after an inward pass), accelerations
    ``w`` (n1, 6), wrenches ``f`` (n1, 6), composite inertias ``Ic`` (n1, 6, 6), central
    inertias in body axes ``J0`` (n1, 3, 3), ``up`` (n1,) the joint above a body. Per joint:
    ``rho`` (m, 3) parent's centre -> child's, ``S`` (m, 6), ``w0`` (m, 6) of (3.174), ``U``
    (m,), fixed orientations ``R0`` (m, 3, 3). Row 0 of the per-body arrays is the base
    (``A_0 = E``, ``om_0 = 0``, set by :func:`workspace` and never written). Scratch:
    ``t3`` (3, 3, 3), ``v`` (9, 3), ``t6`` (3, 6), ``Ma`` (6, 6), ``F`` (6,)."""
    A: np.ndarray
    om: np.ndarray
    Ms: np.ndarray
    Qs: np.ndarray
    w: np.ndarray
    f: np.ndarray
    Ic: np.ndarray
    J0: np.ndarray
    up: np.ndarray
    rho: np.ndarray
    S: np.ndarray
    w0: np.ndarray
    U: np.ndarray
    R0: np.ndarray
    t3: np.ndarray
    v: np.ndarray
    t6: np.ndarray
    Ma: np.ndarray
    F: np.ndarray


@nb.njit(**OPTS)
def cross(a, b, out):
    """``out = a x b`` (``out`` may alias ``a`` or ``b``)."""
    x = a[1] * b[2] - a[2] * b[1]
    y = a[2] * b[0] - a[0] * b[2]
    z = a[0] * b[1] - a[1] * b[0]
    out[0], out[1], out[2] = x, y, z


@nb.njit(**OPTS)
def matvec(M, x, out):
    """``out = M x``."""
    for r in range(M.shape[0]):
        s = 0.0
        for k in range(x.shape[0]):
            s += M[r, k] * x[k]
        out[r] = s


@nb.njit(**OPTS)
def matmul(A, B, out):
    """``out = A B``."""
    for r in range(A.shape[0]):
        for c in range(B.shape[1]):
            s = 0.0
            for k in range(B.shape[0]):
                s += A[r, k] * B[k, c]
            out[r, c] = s


@nb.njit(**OPTS)
def shift(f, rho):
    """``f <- C^T f`` for a wrench ``f = (F, M)`` about a child's centre of mass, moved to
    the parent's: ``C = [[E, X], [0, E]]``, ``X = -rho~`` (3.174), so ``M += rho x F``."""
    x0, x1, x2 = rho[0], rho[1], rho[2]
    a, b, d = f[0], f[1], f[2]
    f[3] += -b * x2 + d * x1
    f[4] += a * x2 - d * x0
    f[5] += -a * x1 + b * x0


@nb.njit(**OPTS)
def fold(Ma, rho, dest):
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


@nb.njit(**OPTS)
def workspace(ints, geo, body):
    """A :class:`Work` for a packed tree, carved out of one allocation; ``R0`` and ``J0``
    (the joints' fixed orientations and the bodies' inertias as 3x3 matrices) filled in."""
    m, n1 = ints.shape[0], body.shape[0]
    sizes = (n1 * 9, n1 * 3, n1 * 36, n1 * 6, n1 * 6, n1 * 6, n1 * 36, n1 * 9, m * 3, m * 6,
             m * 6, m, m * 9, 27, 27, 18, 36, 6)
    at = np.zeros(len(sizes) + 1, dtype=np.int64)
    for k in range(len(sizes)):
        at[k + 1] = at[k] + sizes[k]
    buf = np.zeros(at[len(sizes)])
    ws = Work(buf[at[0]:at[1]].reshape((n1, 3, 3)), buf[at[1]:at[2]].reshape((n1, 3)),
              buf[at[2]:at[3]].reshape((n1, 6, 6)), buf[at[3]:at[4]].reshape((n1, 6)),
              buf[at[4]:at[5]].reshape((n1, 6)), buf[at[5]:at[6]].reshape((n1, 6)),
              buf[at[6]:at[7]].reshape((n1, 6, 6)), buf[at[7]:at[8]].reshape((n1, 3, 3)),
              np.zeros(n1, dtype=np.int64),
              buf[at[8]:at[9]].reshape((m, 3)), buf[at[9]:at[10]].reshape((m, 6)),
              buf[at[10]:at[11]].reshape((m, 6)), buf[at[11]:at[12]],
              buf[at[12]:at[13]].reshape((m, 3, 3)), buf[at[13]:at[14]].reshape((3, 3, 3)),
              buf[at[14]:at[15]].reshape((9, 3)), buf[at[15]:at[16]].reshape((3, 6)),
              buf[at[16]:at[17]].reshape((6, 6)), buf[at[17]:at[18]])
    for i in range(m):
        for r in range(3):
            for c in range(3):
                ws.R0[i, r, c] = geo[i, 3 + 3 * r + c]
    for i in range(1, n1):
        for r in range(3):
            for c in range(3):
                ws.J0[i, r, c] = body[i, 1 + 3 * r + c]
    for r in range(3):
        ws.A[0, r, r] = 1.0                             # the base: A = E, om = 0
    return ws


@nb.njit(**OPTS)
def rodrigues(e, angle, out):
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


@nb.njit(**OPTS)
def centres(ints, geo, qd, A, om, rho, r, vel, v):
    """Centres of mass ``r`` and their velocities ``vel`` (inertial axes) after
    :func:`kinematics`: ``r_c = r_p + rho``, ``v_c = v_p + w_p x l_p + e qd (slide) - w_c x
    rc``, ``l_p`` from the parent's centre and ``rc`` from the child's to the joint point."""
    e, rc, ri, d, h = v[0], v[1], v[2], v[5], v[7]
    for k in range(3):
        r[0, k] = 0.0
        vel[0, k] = 0.0
    for i in range(ints.shape[0]):
        kind, p, c, vk = ints[i, 0], ints[i, 1], ints[i, 2], ints[i, 4]
        matvec(A[p], geo[i, 0:3], e)
        matvec(A[c], geo[i, 15:18], rc)
        for k in range(3):
            ri[k] = rho[i, k] + rc[k]
            r[c, k] = r[p, k] + rho[i, k]
        cross(om[p], ri, h)
        cross(om[c], rc, d)
        rate = qd[vk] if kind == PRISMATIC else 0.0
        for k in range(3):
            vel[c, k] = vel[p, k] + h[k] + e[k] * rate - d[k]


@nb.njit(**OPTS)
def joint_wrench(kind, force, e, lever, W):
    """The wrench ``W`` about a body's centre of mass of a joint force acting on it: a couple
    ``force e`` (revolute) or a force ``force e`` at the joint point, ``lever`` from the
    centre (prismatic). The child gets ``+force`` with its lever, the parent ``-force`` with
    its own."""
    for k in range(6):
        W[k] = 0.0
    if kind == REVOLUTE:
        for k in range(3):
            W[3 + k] = force * e[k]
    elif kind == PRISMATIC:
        for k in range(3):
            W[k] = force * e[k]
        W[3] = force * (lever[1] * e[2] - lever[2] * e[1])
        W[4] = force * (lever[2] * e[0] - lever[0] * e[2])
        W[5] = force * (lever[0] * e[1] - lever[1] * e[0])


# ---------------------------------------------------------------- the kinematics pass
# Plain loops with the small vector helpers only: a numba call that is not inlined costs a
# reference count per array argument and every slice a view, so the pass is two loops (joints,
# then bodies) rather than a loop calling per-joint steps (measured twice as slow).
@nb.njit(**INLINE)
def _body_terms(body, A, om, J0, Ms, Qs, t3, v):
    """Every body's ``M_c = diag(m E, A J A^T)`` and ``Q_c = (m g, -w x J w)`` (3.172),
    about its centre of mass, inertial axes (row 0, the base, is left alone)."""
    AJ, J, a0, h = t3[0], t3[2], v[6], v[8]
    for c in range(1, body.shape[0]):
        matmul(A[c], J0[c], AJ)
        for r in range(3):
            for k in range(3):
                s = 0.0
                for l in range(3):
                    s += AJ[r, l] * A[c, k, l]
                J[r, k] = s
        for r in range(6):
            for k in range(6):
                Ms[c, r, k] = 0.0
        for r in range(3):
            Ms[c, r, r] = body[c, 0]
            for k in range(3):
                Ms[c, r + 3, k + 3] = J[r, k]
        matvec(J, om[c], h)
        cross(om[c], h, a0)
        for k in range(3):
            Qs[c, k] = body[c, 0] * body[0, 1 + k]      # m g
            Qs[c, k + 3] = -a0[k]


@nb.njit(**OPTS)
def kinematics(ints, geo, body, q, qd, ws):
    """Outward pass shared by the recursions: orientations ``A`` and angular velocities
    ``om`` of the bodies, and per joint ``rho`` (parent's centre -> child's), ``S_k`` and
    ``w0_k`` of (3.174), ``w_k = C_k w_p + S_k qdd_k + w0_k``; per body ``M_k`` and ``Q_k``
    about its centre of mass (3.172), gravity and the gyroscopic moment in ``Q_k``. Inertial
    axes throughout (the same quantities as ``mb.vereshchagin``'s NumPy recursion); the
    base's ``A``, ``om`` (row 0) are set by :func:`workspace`."""
    A, om, rho, S, w0, R0, t3, v = ws.A, ws.om, ws.rho, ws.S, ws.w0, ws.R0, ws.t3, ws.v
    Rj, R = t3[0], t3[1]
    Pw, lp, lc, Om, kv, z, a0, e0, h = v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]
    for i in range(ints.shape[0]):
        kind, p, c, qk, vk = ints[i, 0], ints[i, 1], ints[i, 2], ints[i, 3], ints[i, 4]
        e = geo[i, 0:3]
        for k in range(3):
            z[k] = 0.0
        if kind == REVOLUTE:                            # R_a = rot(e, q) R0 (Rodrigues)
            rodrigues(e, q[qk], Rj)
            matmul(Rj, R0[i], R)
        else:                                           # R_a = R0; z_a = e q if prismatic
            R[:, :] = R0[i]
            if kind == PRISMATIC:
                for k in range(3):
                    z[k] = e[k] * q[qk]
        matmul(A[p], R, A[c])                           # A_c = A_p R_a
        matvec(A[p], e, Pw)                             # the axis, inertial axes
        for k in range(3):
            h[k] = geo[i, 12 + k] + z[k]
        matvec(A[p], h, lp)                             # parent's centre -> joint point
        matvec(A[c], geo[i, 15:18], lc)
        rate = qd[vk] if kind != WELD else 0.0
        for k in range(3):
            lc[k] = -lc[k]                              # joint point -> child's centre
            Om[k] = Pw[k] * rate if kind == REVOLUTE else 0.0   # relative angular velocity
            kv[k] = Pw[k] * rate if kind == PRISMATIC else 0.0  # relative velocity (sliding)
            om[c, k] = om[p, k] + Om[k]
            rho[i, k] = lp[k] + lc[k]                   # parent's centre -> child's
        wp, wc = om[p], om[c]
        cross(wp, Om, e0)                               # eps0 = w_p x Omega
        cross(wp, lp, h)
        cross(wp, h, a0)                                # a0 = w_p x (w_p x l_p)
        cross(e0, lc, h)                                #    + eps0 x l_c
        for k in range(3):
            a0[k] += h[k]
        cross(wc, lc, h)
        cross(wc, h, h)                                 #    + w_c x (w_c x l_c)
        for k in range(3):
            a0[k] += h[k]
        cross(wp, kv, h)                                #    + 2 w_p x (A_p k v)
        for k in range(3):
            w0[i, k] = a0[k] + 2.0 * h[k]
            w0[i, k + 3] = e0[k]
        if kind == REVOLUTE:                            # S_k = (e x l_c, e)
            cross(Pw, lc, h)
            for k in range(3):
                S[i, k] = h[k]
                S[i, k + 3] = Pw[k]
        elif kind == PRISMATIC:                         # S_k = (e, 0)
            for k in range(3):
                S[i, k] = Pw[k]
                S[i, k + 3] = 0.0
    _body_terms(body, A, om, ws.J0, ws.Ms, ws.Qs, t3, v)


# ---------------------------------------------------------------- dense Cholesky
@nb.njit(**OPTS)
def cholesky_factor(H):
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


@nb.njit(**OPTS)
def lower_solve(L, b, out):
    """``out = L^-1 b`` (``L`` lower triangular)."""
    for i in range(L.shape[0]):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * out[k]
        out[i] = s / L[i, i]


@nb.njit(**OPTS)
def upper_solve(L, b, out):
    """``out = L^-T b``."""
    n = L.shape[0]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s -= L[k, i] * out[k]
        out[i] = s / L[i, i]


@nb.njit(**OPTS)
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
    if not cholesky_factor(H):
        return False
    lower_solve(H, b, b)
    upper_solve(H, b, b)
    return True


@nb.njit(**INLINE)
def finite(x):
    """Whether every entry of the vector ``x`` is finite (a kernel declines a state whose
    answer is not)."""
    for k in range(x.shape[0]):
        if not np.isfinite(x[k]):
            return False
    return True


# the names of the single-module version (mbcourse.compiled before the split)
_cross, _matvec, _matmul, _rodrigues, _kinematics = cross, matvec, matmul, rodrigues, kinematics
_shift, _fold, _centres, _joint_wrench, _workspace = shift, fold, centres, joint_wrench, workspace
_cholesky_factor, _lower_solve, _upper_solve = cholesky_factor, lower_solve, upper_solve


# ------------------------------------------------------- unrolled 3x3 loops
@nb.njit(**OPTS)
def mv3(M, x, out):
    """``out = M x`` for a 3x3 ``M``, unrolled (numba inlines it; the generic
    :func:`~mbcourse.kernels.common.matvec` is a call, about 50 times slower on 3-vectors)."""
    a = M[0, 0] * x[0] + M[0, 1] * x[1] + M[0, 2] * x[2]
    b = M[1, 0] * x[0] + M[1, 1] * x[1] + M[1, 2] * x[2]
    c = M[2, 0] * x[0] + M[2, 1] * x[1] + M[2, 2] * x[2]
    out[0], out[1], out[2] = a, b, c


@nb.njit(**OPTS)
def mtv3(M, x, out):
    """``out = M^T x`` for a 3x3 ``M``, unrolled."""
    a = M[0, 0] * x[0] + M[1, 0] * x[1] + M[2, 0] * x[2]
    b = M[0, 1] * x[0] + M[1, 1] * x[1] + M[2, 1] * x[2]
    c = M[0, 2] * x[0] + M[1, 2] * x[1] + M[2, 2] * x[2]
    out[0], out[1], out[2] = a, b, c


@nb.njit(**OPTS)
def mm3(A, B, out):
    """``out = A B`` for 3x3 matrices, unrolled by rows (``out`` must not alias)."""
    for r in range(3):
        a0, a1, a2 = A[r, 0], A[r, 1], A[r, 2]
        out[r, 0] = a0 * B[0, 0] + a1 * B[1, 0] + a2 * B[2, 0]
        out[r, 1] = a0 * B[0, 1] + a1 * B[1, 1] + a2 * B[2, 1]
        out[r, 2] = a0 * B[0, 2] + a1 * B[1, 2] + a2 * B[2, 2]


@nb.njit(**OPTS)
def take(buf, at, size):
    """The next ``size`` entries of ``buf`` from ``at[0]`` (then advanced): work arrays
    carved out of one allocation."""
    out = buf[at[0]:at[0] + size]
    at[0] += size
    return out
