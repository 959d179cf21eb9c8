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
from numba.core import cgutils, types
from numba.extending import intrinsic

from ..spatial import PIVOT_RTOL

__all__ = ["REVOLUTE", "PRISMATIC", "WELD", "GENERAL", "OPTS", "INLINE", "Work", "workspace",
           "borrow", "release",
           "joint_motion", "body_terms", "joint_force", "joint_acceleration",
           "load_wrench", "spring_torques", "spring_wrenches",
           "damping_power", "dissipation", "base_state",
           "cross", "cholesky_factor_n",
           "mv3", "mtv3", "mm3", "take",
           "matvec", "matmul", "shift", "fold", "rodrigues", "kinematics", "centres",
           "cholesky_factor", "lower_solve", "quaternion_matrix", "speed_count",
           "upper_solve", "cholesky_solve",
           "finite"]

#: Joint kinds in the packed ``ints[:, 0]`` column (see :func:`mbcourse.kernels.pack_chain`):
#: a label only (no kernel switches on it; they read the joint's packed motion and rows):
#: the one-coordinate kinds, from which ``pack_chain`` can derive both, and ``GENERAL``.
REVOLUTE, PRISMATIC, WELD, GENERAL = 0, 1, 2, 3

# Where a joint's own motion (:class:`mbcourse.joints.Motion`) sits in its packed rows.
# ints: the number of speeds, the turns' (q, speed) indices, the quaternion's first index,
# the slides' q indices (model indices; -1 where absent) and each speed's frame (the codes
# PARENT, FIRST_TURN, CHILD of mbcourse.joints).
# Then the number of chapter 2's rows of the joint (I_ROWS).
I_NV, I_TURN1, I_TURN2, I_QUAT, I_SLIDE, I_FRAME, I_ROWS, INT_COLUMNS = (5, 6, 8, 10, 11, 14,
                                                                        20, 21)
# geo: the turns' axes, the slides' vectors and each speed's (p, k) in its frame, then per
# speed (stiffness, stiffness rest, damping) summed over the joint's springs, then chapter
# 2's rows (:meth:`mbcourse.joints.Joint.row_parameters`), ROW_WIDTH columns each from G_ROWS:
# the type, the normal n (or the parent's vector u), the child's point rho (or vector w), the
# offset d, and for a screw row its pitch, the basis u1, u2 across the axis and the child's
# w1 (columns R_TYPE ... R_W1 of a row).
G_TURN1, G_TURN2, G_SLIDE, G_SPEED, G_SPRING, G_ROWS = 18, 21, 24, 33, 69, 87
ROW_WIDTH, MAX_ROWS = 18, 6
GEO_COLUMNS = G_ROWS + ROW_WIDTH * MAX_ROWS
R_TYPE, R_N, R_RHO, R_D, R_PITCH, R_U1, R_U2, R_W1 = 0, 1, 4, 7, 8, 9, 12, 15
#: Row types of :meth:`mbcourse.joints.Joint.row_parameters` in a packed row's ``R_TYPE``:
#: the spatial form's, then the planar form's (a point on a line of the parent, the
#: relative rotation; their normal and point take the first two of their three columns).
POINT_PLANE, PERPENDICULAR, SCREW, POINT_LINE, ROTATION = 0, 1, 2, 3, 4
# body: mass, inertia (9), then the constant loads: a force and a torque in inertial axes
# (B_FORCE), the moments' coefficients G (3 x 3) of the inertial forces' points (B_LEVER),
# a force and a torque (about the centre) in body axes (B_BODY); row 0 (the base, which
# carries no load) holds 1 in column B_FORCE when any body carries one.
B_FORCE, B_LEVER, B_BODY = 10, 16, 25
# A prescribed motion of the base (set per call by mbcourse.kernels.route, for the kernels
# that take it): 1 in column B_MOVING of row 0, and from column B_BASE its orientation (3 x 3,
# base axes to inertial), angular velocity, the acceleration of its origin, its angular
# acceleration, the position and the velocity of its origin (inertial axes).
B_MOVING, B_BASE, BODY_COLUMNS = 5, 31, 55
# Spring-dampers between bodies: their number in row 0 of body (column B_SPRINGS), one row
# each in geo after the joints' rows: the bodies a, b (S_A, S_B), the points (body axes, from
# the centres; S_PA, S_PB), stiffness, rest length and damping (S_K, S_L0, S_C).
B_SPRINGS = 4
S_A, S_B, S_PA, S_PB, S_K, S_L0, S_C = 0, 1, 2, 5, 8, 9, 10
# the frames of Motion.speeds (mbcourse.joints.PARENT, FIRST_TURN, CHILD)
_FIRST_TURN, _CHILD = 1, 2
#: A quaternion whose norm differs from 1 by more than this is declined (the checked route
#: then refuses it by name); the same as :data:`mbcourse.joints.QUATERNION_TOL`.
QUATERNION_TOL = 1e-3

#: numba options of every kernel: compiled once per machine (``cache=True``), the GIL released.
OPTS = dict(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})
_OPTS = OPTS
#: The same, inlined into the caller by numba: for the steps a kernel runs once per
#: configuration (a call counts a reference per array argument, measured ~1 us per state).
INLINE = dict(OPTS, inline="always")


@intrinsic
def borrow(typingctx, arr):
    """A view of the whole of ``arr`` that counts no references (numba's ``meminfo`` of the
    view left null), and neither do the views taken of it.

    Every view a kernel takes of a counted array (``A[p]``, ``ws.S``, ``geo[i, 3:6]``)
    costs an atomic increment of the array's reference count and an atomic decrement when
    it is dropped. In the recursions these were more than half of the time (``perf`` on the
    SO-100's Vereshchagin kernel, 1000 states: 58 % in ``NRT_incref`` and ``NRT_decref``).
    So the forward kernels (and chapter 6's simulation kernels) borrow their array
    arguments, which the caller keeps alive for the whole call, and the work arrays are
    carved out of a borrowed buffer whose owner the
    workspace's maker returns beside it (``ws, keep = workspace(...)``), kept alive by
    :func:`release` at the end of the kernel that made it. The owners are not fields of the
    workspace: a larger tuple handed to every helper measured 1.8x slower in chapter 3's
    kernel. A borrowed array must never be returned to Python (make the workspace with
    ``borrowed=False`` for that)."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, signature, args):
        src = context.make_array(arr)(context, builder, value=args[0])
        out = context.make_array(arr)(context, builder)
        out.data, out.shape, out.strides = src.data, src.shape, src.strides
        out.itemsize, out.nitems = src.itemsize, src.nitems
        out.meminfo = cgutils.get_null_value(out.meminfo.type)
        out.parent = cgutils.get_null_value(out.parent.type)
        return out._getvalue()
    return arr(arr), codegen


@nb.njit(**OPTS)
def release(keep, result):
    """``result``, after a last use of ``keep`` (a workspace's owning buffers): numba frees
    a variable right after its last use, so a kernel whose work arrays are borrowed
    (:func:`borrow`) ends with ``return release(keep, result)``."""
    return result


# A joint's work array ``jw`` (J_ROWS, 3), written by :func:`joint_motion`: ``R = R_a`` (child
# to parent axes, rows J_R:J_R+3), ``z = z_a`` (J_Z), per speed ``p``, ``k`` (rows J_P + j,
# J_K + j) (3.101), (3.104), ``Omega_a`` (J_OM, the sum of ``p qd``), the sum of ``k qd``
# (J_KV), ``w_a``, ``s_a`` (J_WA, J_SA) (3.106), (3.102), and scratch: the first turn J_F1,
# J_T, J_RJ (3 rows each), parent axes throughout. One array rather than a named tuple: a
# tuple of arrays handed to a per-joint function costs a reference count per array
# (measured: 0.4 us per joint for eleven arrays). The workspaces carve it out of their buffer.
J_R, J_Z, J_P, J_K, J_OM, J_KV, J_WA, J_SA, J_F1, J_T, J_RJ, J_ROWS = (0, 3, 4, 10, 16, 17,
                                                                      18, 19, 20, 23, 26, 29)


class Work(NamedTuple):
    """Work arrays of a kernel (``n1`` bodies with the base, ``m`` joints, ``nv`` speeds).

    Per body: orientations ``A`` (n1, 3, 3), angular velocities ``om`` (n1, 3), ``Ms``
    (n1, 6, 6) and ``Qs`` (n1, 6) (3.172) (articulated after an inward pass), accelerations
    ``w`` (n1, 6), wrenches ``f`` (n1, 6), composite inertias ``Ic`` (n1, 6, 6), central
    inertias in body axes ``J0`` (n1, 3, 3), ``up`` (n1,) the joint above a body. Per joint:
    ``rho`` (m, 3) parent's centre -> child's, ``w0`` (m, 6) of (3.174), ``U`` (m, 6, 6)
    ``S^T M* S`` itself for one speed, its Cholesky factor (the leading ``n_k x n_k``
    block) for ``n_k > 1``, fixed
    orientations ``R0`` (m, 3, 3). Per speed: ``S`` (nv, 6) of (3.174). Row 0 of the per-body
    arrays is the base (``A_0 = E``, ``om_0 = 0``, set by :func:`workspace` and never
    written). Scratch: ``t3`` (3, 3, 3), ``v`` (9, 3), ``t6`` (3, 6), ``Ma``, ``MS``, ``X``
    (6, 6), ``F`` (6,), ``y`` (6,), ``tq`` (nv,) (``tau`` with the joint springs), the
    centres ``r`` and their velocities ``vel`` (n1, 3) (filled only for spring-dampers) and
    the joint's own motion ``jw`` (``J_ROWS`` x 3, see ``J_R``)."""
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
    MS: np.ndarray
    X: np.ndarray
    y: np.ndarray
    tq: np.ndarray
    r: np.ndarray
    vel: np.ndarray
    jw: np.ndarray


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
def speed_count(ints):
    """The number of speeds of a packed tree."""
    nv = 0
    for i in range(ints.shape[0]):
        nv = max(nv, ints[i, 4] + ints[i, I_NV])
    return nv


@nb.njit(**OPTS)
def workspace(ints, geo, body, borrowed=True):
    """``(ws, keep)``: a :class:`Work` for a packed tree, carved out of one allocation (the
    joints above the bodies ``up`` out of a second; ``keep`` holds both), ``R0`` and ``J0``
    (the joints' fixed orientations and the bodies' inertias as 3x3 matrices) filled in. The
    work arrays are :func:`borrow`-ed views unless ``borrowed`` is False (a workspace handed
    back to Python)."""
    m, n1, nv = ints.shape[0], body.shape[0], speed_count(ints)
    sizes = (n1 * 9, n1 * 3, n1 * 36, n1 * 6, n1 * 6, n1 * 6, n1 * 36, n1 * 9, m * 3, nv * 6,
             m * 6, m * 36, m * 9, 27, 27, 18, 36, 6, 36, 36, 6, nv, n1 * 3, n1 * 3)
    at = np.zeros(len(sizes) + 1, dtype=np.int64)
    for k in range(len(sizes)):
        at[k + 1] = at[k] + sizes[k]
    owner = np.zeros(at[len(sizes)] + J_ROWS * 3)
    owner_i = np.zeros(n1, dtype=np.int64)
    buf, up = (borrow(owner), borrow(owner_i)) if borrowed else (owner, owner_i)
    ws = Work(buf[at[0]:at[1]].reshape((n1, 3, 3)), buf[at[1]:at[2]].reshape((n1, 3)),
              buf[at[2]:at[3]].reshape((n1, 6, 6)), buf[at[3]:at[4]].reshape((n1, 6)),
              buf[at[4]:at[5]].reshape((n1, 6)), buf[at[5]:at[6]].reshape((n1, 6)),
              buf[at[6]:at[7]].reshape((n1, 6, 6)), buf[at[7]:at[8]].reshape((n1, 3, 3)),
              up,
              buf[at[8]:at[9]].reshape((m, 3)), buf[at[9]:at[10]].reshape((nv, 6)),
              buf[at[10]:at[11]].reshape((m, 6)), buf[at[11]:at[12]].reshape((m, 6, 6)),
              buf[at[12]:at[13]].reshape((m, 3, 3)), buf[at[13]:at[14]].reshape((3, 3, 3)),
              buf[at[14]:at[15]].reshape((9, 3)), buf[at[15]:at[16]].reshape((3, 6)),
              buf[at[16]:at[17]].reshape((6, 6)), buf[at[17]:at[18]],
              buf[at[18]:at[19]].reshape((6, 6)), buf[at[19]:at[20]].reshape((6, 6)),
              buf[at[20]:at[21]], buf[at[21]:at[22]], buf[at[22]:at[23]].reshape((n1, 3)),
              buf[at[23]:at[24]].reshape((n1, 3)), buf[at[24]:].reshape((J_ROWS, 3)))
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
    return ws, (owner, owner_i)


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
def centres(ints, body, qd, om, rho, S, r, vel, h):
    """Centres of mass ``r`` and their velocities ``vel`` (inertial axes) after
    :func:`kinematics`, for every joint kind: ``r_c = r_p + rho`` and ``v_c = v_p + w_p x
    rho + sum_j S_j qd_j`` (the linear part of (3.174)'s columns), from the base's origin
    (at rest at zero, or its prescribed motion)."""
    moving = body[0, B_MOVING] != 0.0
    for k in range(3):
        r[0, k] = body[0, B_BASE + 18 + k] if moving else 0.0
        vel[0, k] = body[0, B_BASE + 21 + k] if moving else 0.0
    for i in range(ints.shape[0]):
        p, c, v0 = ints[i, 1], ints[i, 2], ints[i, 4]
        cross(om[p], rho[i], h)
        for k in range(3):
            r[c, k] = r[p, k] + rho[i, k]
            vel[c, k] = vel[p, k] + h[k]
        for j in range(ints[i, I_NV]):
            for k in range(3):
                vel[c, k] += S[v0 + j, k] * qd[v0 + j]


@nb.njit(**INLINE)
def load_wrench(body, c, A, force, moment, h):
    """``force``, ``moment`` (3,) = the constant loads on body ``c`` with orientation ``A``,
    the moment about its centre, inertial axes. A force ``F`` at the point ``P`` (body axes)
    has the moment ``(A P) x F = sum_k A e_k x P_k F``: the forces given in inertial axes
    add ``sum_k (A e_k) x G_k`` with ``G_k = sum P_k F`` packed; those in body axes (and
    their moments) turn with the body."""
    mv3(A, body[c, B_BODY:B_BODY + 3], force)
    mv3(A, body[c, B_BODY + 3:B_BODY + 6], moment)
    for k in range(3):
        force[k] += body[c, B_FORCE + k]
        moment[k] += body[c, B_FORCE + 3 + k]
    for k in range(3):
        a = A[:, k]
        g = body[c, B_LEVER + 3 * k:B_LEVER + 3 * k + 3]
        h[0] = a[1] * g[2] - a[2] * g[1]
        h[1] = a[2] * g[0] - a[0] * g[2]
        h[2] = a[0] * g[1] - a[1] * g[0]
        for r in range(3):
            moment[r] += h[r]


@nb.njit(**INLINE)
def spring_torques(ints, geo, q, qd, tau, out):
    """``out = tau - (c q - c rest) - d qd`` speed by speed: the joint springs, packed per
    speed as ``(c, c rest, d)`` summed over a joint's springs (joints whose coordinates are
    their speeds' integrals; zero elsewhere)."""
    for i in range(ints.shape[0]):
        for j in range(ints[i, I_NV]):
            g, l = G_SPRING + 3 * j, ints[i, 4] + j
            out[l] = tau[l]
            if geo[i, g] != 0.0 or geo[i, g + 2] != 0.0:
                out[l] -= geo[i, g] * q[ints[i, 3] + j] - geo[i, g + 1] + geo[i, g + 2] * qd[l]


# ---------------------------------------------------------------- the kinematics pass
# Plain loops with the small vector helpers only: a numba call that is not inlined costs a
# reference count per array argument and every slice a view, so the pass is two loops (joints,
# then bodies) rather than a loop calling per-joint steps (measured twice as slow).
@nb.njit(**INLINE)
def body_terms(body, A, om, J0, Ms, Qs, t3, v):
    """Every body's ``M_c = diag(m E, A J A^T)`` and ``Q_c = (m g + F, M - w x J w)``
    (3.172), ``F``, ``M`` its constant loads (:func:`load_wrench`), about its centre of
    mass, inertial axes (row 0, the base, is left alone)."""
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
        if body[0, B_FORCE] != 0.0:                     # the constant loads
            load_wrench(body, c, A[c], Qs[c, 0:3], Qs[c, 3:6], v[7])
        else:
            for k in range(6):
                Qs[c, k] = 0.0
        for k in range(3):
            Qs[c, k] += body[c, 0] * body[0, 1 + k]     # m g
            Qs[c, k + 3] -= a0[k]


@nb.njit(**OPTS)
def quaternion_matrix(quat, out):
    """``out`` = the rotation of the quaternion ``quat`` (w, x, y, z) divided by its norm;
    False when the norm differs from 1 by more than :data:`QUATERNION_TOL` (the public
    entries refuse such a state; within it they renormalize, as this does)."""
    w, x, y, z = quat[0], quat[1], quat[2], quat[3]
    n2 = w * w + x * x + y * y + z * z
    if not abs(np.sqrt(n2) - 1.0) <= QUATERNION_TOL:
        return False
    s = 2.0 / n2
    out[0, 0] = 1.0 - s * (y * y + z * z)
    out[0, 1] = s * (x * y - w * z)
    out[0, 2] = s * (x * z + w * y)
    out[1, 0] = s * (x * y + w * z)
    out[1, 1] = 1.0 - s * (x * x + z * z)
    out[1, 2] = s * (y * z - w * x)
    out[2, 0] = s * (x * z - w * y)
    out[2, 1] = s * (y * z + w * x)
    out[2, 2] = 1.0 - s * (x * x + y * y)
    return True


@nb.njit(**INLINE)
def _copy3(src, dst):
    """``dst = src`` for 3x3 matrices (an explicit loop: numba's slice assignment checks
    for overlap and may copy through a temporary)."""
    for r in range(3):
        for c in range(3):
            dst[r, c] = src[r, c]


@nb.njit(**INLINE)
def _frame_rate(frame, axis1, rate1, om, out):
    """How fast a speed's frame turns relative to the parent (parent axes): the frame after
    the first turn ``axis1 rate1``, the child ``Omega_a`` (the parent itself does not turn:
    :func:`joint_motion` skips its speeds)."""
    for k in range(3):
        out[k] = axis1[k] * rate1 if frame == _FIRST_TURN else om[k]


@nb.njit(**INLINE)
def joint_motion(i, ints, geo, q, qd, R0, jw):
    """Joint ``i``'s own motion from its packed :class:`~mbcourse.joints.Motion`, in parent
    axes (the jcalc of every kernel; no switch on the joint's kind): ``R_a = rot(turn 1)
    rot(turn 2) quat R0``, ``z_a`` the sum of the slides, per speed ``p_j``, ``k_j`` turned
    into the parent's axes by its frame, ``Omega_a``, the sum of ``k qd``, and the bias terms
    ``w_a = sum_j (W_j x p_j) qd_j``, ``s_a = sum_j (W_j x k_j) qd_j`` (3.102), (3.106),
    ``W_j`` the rate of speed ``j``'s frame. False for a quaternion too far from unit norm."""
    F1, R = jw[J_F1:J_F1 + 3], jw[J_R:J_R + 3]
    rate1 = 0.0
    if ints[i, I_TURN1] >= 0:
        rodrigues(geo[i, G_TURN1:G_TURN1 + 3], q[ints[i, I_TURN1]], F1)
        rate1 = qd[ints[i, I_TURN1 + 1]]
    else:
        for r in range(3):
            for c in range(3):
                F1[r, c] = 1.0 if r == c else 0.0
    if ints[i, I_TURN2] < 0 and ints[i, I_QUAT] < 0:
        mm3(F1, R0[i], R)                               # R_a = rot(turn 1) R0
    else:                                               # R_a = F1 rot(turn 2) quat R0
        Rj, T = jw[J_RJ:J_RJ + 3], jw[J_T:J_T + 3]
        if ints[i, I_TURN2] >= 0:
            rodrigues(geo[i, G_TURN2:G_TURN2 + 3], q[ints[i, I_TURN2]], T)
            mm3(F1, T, Rj)
        else:
            _copy3(F1, Rj)
        if ints[i, I_QUAT] >= 0:
            if not quaternion_matrix(q[ints[i, I_QUAT]:ints[i, I_QUAT] + 4], T):
                return False
            mm3(Rj, T, R)
            _copy3(R, Rj)
        mm3(Rj, R0[i], R)
    for k in range(3):
        jw[J_Z, k] = jw[J_OM, k] = jw[J_KV, k] = jw[J_WA, k] = jw[J_SA, k] = 0.0
    for t in range(3):
        if ints[i, I_SLIDE + t] >= 0:
            x = q[ints[i, I_SLIDE + t]]
            for k in range(3):
                jw[J_Z, k] += geo[i, G_SLIDE + 3 * t + k] * x
    nv, v0 = ints[i, I_NV], ints[i, 4]
    for j in range(nv):
        frame, g = ints[i, I_FRAME + j], G_SPEED + 6 * j
        if frame == 0:
            for k in range(3):
                jw[J_P + j, k], jw[J_K + j, k] = geo[i, g + k], geo[i, g + 3 + k]
        else:
            M = F1 if frame == _FIRST_TURN else R
            mv3(M, geo[i, g:g + 3], jw[J_P + j])
            mv3(M, geo[i, g + 3:g + 6], jw[J_K + j])
        for k in range(3):
            jw[J_OM, k] += jw[J_P + j, k] * qd[v0 + j]
            jw[J_KV, k] += jw[J_K + j, k] * qd[v0 + j]
    for j in range(nv):
        if ints[i, I_FRAME + j] == 0:
            continue                                    # fixed in the parent: no rate
        W, h = jw[J_T], jw[J_T + 1]                     # scratch rows
        _frame_rate(ints[i, I_FRAME + j], geo[i, G_TURN1:G_TURN1 + 3], rate1, jw[J_OM], W)
        cross(W, jw[J_P + j], h)
        for k in range(3):
            jw[J_WA, k] += h[k] * qd[v0 + j]
        cross(W, jw[J_K + j], h)
        for k in range(3):
            jw[J_SA, k] += h[k] * qd[v0 + j]
    return True


@nb.njit(**INLINE)
def _speed_gram(jw, nk, G):
    """``G = L L^T`` of ``[p; k]^T [p; k]`` (``nk x nk``, the joint's speed columns from
    :func:`joint_motion`, parent axes); False if the columns are dependent."""
    for a in range(nk):
        for b in range(a + 1):
            acc = 0.0
            for k in range(3):
                acc += jw[J_P + a, k] * jw[J_P + b, k] + jw[J_K + a, k] * jw[J_K + b, k]
            G[a, b] = G[b, a] = acc
    return cholesky_factor_n(G, nk)


@nb.njit(**OPTS)
def joint_force(jw, nk, tau, Ap, G, x, h, W):
    """The joint wrench of the generalized forces ``tau`` (nk,) of a joint (its motion in
    ``jw``, :func:`joint_motion`): ``W = J (J^T J)^-1 tau``, ``J = [A_p k; A_p p]``, a force
    ``W[:3]`` and a moment ``W[3:]`` (inertial axes) acting on the child at its joint point,
    the opposite on the parent; its power on the relative motion ``J qd`` is ``tau . qd``
    (as :func:`mbcourse.cartesian.system.joint_wrenches`). ``G`` (6, 6), ``x`` (6,), ``h``
    (2, 3) scratch. False if the joint's speed columns are dependent."""
    if not _speed_gram(jw, nk, G):
        return False
    lower_solve(G, tau, x, nk)
    upper_solve(G, x, x, nk)
    for k in range(3):
        h[0, k] = h[1, k] = 0.0
    for j in range(nk):
        for k in range(3):
            h[0, k] += jw[J_K + j, k] * x[j]
            h[1, k] += jw[J_P + j, k] * x[j]
    mv3(Ap, h[0], W[:3])
    mv3(Ap, h[1], W[3:])
    return True


@nb.njit(**OPTS)
def joint_acceleration(jw, nk, Ap, om_p, om_c, X_p, X_c, L, lc, G, v, out):
    """A joint's generalized accelerations ``out`` (nk,) from its bodies' accelerations
    ``X = (a, eps)`` (centre of mass, inertial axes) (3.104)-(3.107), as
    :func:`mbcourse.cartesian.joint_accelerations`: ``[p; k] qdd = A_p^T [d_Omega; d_z]``
    in the least-squares sense (exact for consistent accelerations), with ``d_Omega =
    eps_c - eps_p - w_p x A_p Omega_a - A_p w_a`` and ``d_z`` the acceleration of the
    child's joint point less that of the point carried by the parent, ``... + 2 w_p x A_p k
    qd + A_p s_a``. ``L`` the parent's centre -> joint point, ``lc`` the child's centre ->
    joint point (inertial axes); ``jw`` from :func:`joint_motion`; ``G`` (6, 6), ``v``
    (6, 3) scratch. False if the joint's speed columns are dependent."""
    dO, dz, h, t = v[0], v[1], v[2], v[3]
    mv3(Ap, jw[J_OM], h)
    cross(om_p, h, dO)
    mv3(Ap, jw[J_WA], h)
    for k in range(3):
        dO[k] = X_c[3 + k] - X_p[3 + k] - dO[k] - h[k]
    cross(X_c[3:], lc, dz)                               # the child's joint point
    cross(om_c, lc, h)
    cross(om_c, h, t)
    for k in range(3):
        dz[k] += X_c[k] + t[k] - X_p[k]
    cross(X_p[3:], L, h)                                 # the point carried by the parent
    cross(om_p, L, t)
    cross(om_p, t, t)
    for k in range(3):
        dz[k] -= h[k] + t[k]
    mv3(Ap, jw[J_KV], h)
    cross(om_p, h, t)
    mv3(Ap, jw[J_SA], h)
    for k in range(3):
        dz[k] -= 2.0 * t[k] + h[k]
    mtv3(Ap, dO, v[4])
    mtv3(Ap, dz, v[5])
    if not _speed_gram(jw, nk, G):
        return False
    for j in range(nk):
        acc = 0.0
        for k in range(3):
            acc += jw[J_P + j, k] * v[4, k] + jw[J_K + j, k] * v[5, k]
        out[j] = acc
    lower_solve(G, out, out, nk)
    upper_solve(G, out, out, nk)
    return True


@nb.njit(**INLINE)
def _centre(p, c, wp, wc, lp, lc, kv, rho, r, vel, h):
    """``r_c = r_p + rho`` and ``v_c = v_p + w_p x l_p + A_p k qd + w_c x l_c``."""
    cross(wp, lp, h)
    for k in range(3):
        r[c, k] = r[p, k] + rho[k]
        vel[c, k] = vel[p, k] + h[k] + kv[k]
    cross(wc, lc, h)
    for k in range(3):
        vel[c, k] += h[k]


@nb.njit(**INLINE)
def _spring_span(g, A, r, vel, om, v, with_rate):
    """A spring-damper's row ``g`` of ``geo``: the levers ``l_a``, ``l_b`` from the centres
    to its points (``v[0]``, ``v[1]``, inertial axes) and ``d = P_b - P_a`` (``v[2]``);
    returns ``(|d|^2, d . dd/dt)`` (the second zero unless ``with_rate``)."""
    la, lb, d, dd, h = v[0], v[1], v[2], v[3], v[4]
    a, b = int(g[S_A]), int(g[S_B])
    mv3(A[a], g[S_PA:S_PA + 3], la)
    mv3(A[b], g[S_PB:S_PB + 3], lb)
    L2, rate = 0.0, 0.0
    for k in range(3):
        d[k] = r[b, k] + lb[k] - r[a, k] - la[k]
        L2 += d[k] * d[k]
    if with_rate:
        cross(om[b], lb, dd)
        cross(om[a], la, h)
        for k in range(3):
            rate += d[k] * (vel[b, k] + dd[k] - vel[a, k] - h[k])
    return L2, rate


@nb.njit(**OPTS)
def spring_wrenches(geo, m, body, A, r, vel, om, Qs, v):
    """Add the spring-dampers' forces to ``Q_c`` (their rows of ``geo`` after the ``m``
    joints'): tension ``T = c_s (L - L0) + d dL/dt`` along ``u`` from point ``a`` to point
    ``b``, ``+T u`` on ``a`` and ``-T u`` on ``b`` with their moments about the centres (as
    :func:`mbcourse.forces.applied_wrenches`), from the bodies' orientations ``A``, centres
    ``r``, their velocities ``vel`` and angular velocities ``om``; ``v`` is scratch (5, 3).
    False where a spring's points coincide and its direction matters (the checked route
    then names the spring)."""
    la, lb, d, h = v[0], v[1], v[2], v[4]
    for s in range(int(body[0, B_SPRINGS])):
        g = geo[m + s]
        L2, rate = _spring_span(g, A, r, vel, om, v, g[S_C] > 0.0)
        L = np.sqrt(L2)
        big = max(abs(d[0]), abs(d[1]), abs(d[2]))
        if L <= 1e-12 * (1.0 + big) and (g[S_L0] > 0.0 or g[S_C] > 0.0):
            return False
        T = g[S_K] * (L - g[S_L0])
        if g[S_C] > 0.0:
            T += g[S_C] * rate / L
        for k in range(3):
            d[k] *= T / L if L > 0.0 else T            # the force on a, toward b
        _push(int(g[S_A]), la, d, 1.0, Qs, h)
        _push(int(g[S_B]), lb, d, -1.0, Qs, h)
    return True


@nb.njit(**INLINE)
def damping_power(ints, geo, body, A, r, vel, om, qd, v):
    """The power the dampers take out, ``sum d (dL/dt)^2`` over the spring-dampers (body
    states as in :func:`spring_wrenches`, which must have accepted them) plus ``sum d_j
    qd_j^2`` over the joint dampers: ``-`` :func:`mbcourse.forces.damping_power`."""
    m = ints.shape[0]
    P = 0.0
    for i in range(m):
        for j in range(ints[i, I_NV]):
            d_ = geo[i, G_SPRING + 3 * j + 2]
            if d_ != 0.0:
                P += d_ * qd[ints[i, 4] + j] ** 2
    for s in range(int(body[0, B_SPRINGS])):
        g = geo[m + s]
        if g[S_C] > 0.0:
            L2, rate = _spring_span(g, A, r, vel, om, v, True)
            if L2 > 0.0:
                P += g[S_C] * rate * rate / L2
    return P


@nb.njit(**INLINE)
def _push(c, lever, f, sign, Qs, h):
    """``Q_c += sign (f, lever x f)`` (not on the base)."""
    if c == 0:
        return
    cross(lever, f, h)
    for k in range(3):
        Qs[c, k] += sign * f[k]
        Qs[c, 3 + k] += sign * h[k]


@nb.njit(**INLINE)
def base_state(body, A, om, r, vel):
    """The prescribed motion of the base from row 0 of ``body`` (columns ``B_BASE:``): its
    orientation ``A_0``, angular velocity ``om_0``, and the position ``r_0`` and velocity
    ``vel_0`` of its origin, the base's reference point (inertial axes)."""
    for a in range(3):
        for b in range(3):
            A[0, a, b] = body[0, B_BASE + 3 * a + b]
        om[0, a] = body[0, B_BASE + 9 + a]
        r[0, a] = body[0, B_BASE + 18 + a]
        vel[0, a] = body[0, B_BASE + 21 + a]


@nb.njit(**OPTS)
def kinematics(ints, geo, body, q, qd, ws):
    """Outward pass shared by the recursions: orientations ``A`` and angular velocities
    ``om`` of the bodies, per joint ``rho`` (parent's centre -> child's) and ``w0_k`` of
    (3.174), per speed the column ``S`` (``w_k = C_k w_p + S_k qdd_k + w0_k``); per body
    ``M_k`` and ``Q_k`` about its centre of mass (3.172), gravity, the constant loads, the
    spring-dampers and the gyroscopic moment in ``Q_k``. Inertial axes throughout (the same
    quantities as ``mb.vereshchagin``'s NumPy recursion); each joint's own motion from
    :func:`joint_motion`; the base's ``A``, ``om`` (row 0) are set by :func:`workspace`, or
    by :func:`base_state` for a prescribed motion of the base. False for a quaternion far
    from unit norm or a spring whose points coincide."""
    A, om, rho, S, w0, R0, v, jw = ws.A, ws.om, ws.rho, ws.S, ws.w0, ws.R0, ws.v, ws.jw
    Pw, lp, lc, Om, kv, Kw, a0, e0, h = v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]
    if body[0, B_MOVING] != 0.0:
        base_state(body, A, om, ws.r, ws.vel)
    for i in range(ints.shape[0]):
        p, c, v0 = ints[i, 1], ints[i, 2], ints[i, 4]
        if not joint_motion(i, ints, geo, q, qd, R0, jw):
            return False
        mm3(A[p], jw[J_R:J_R + 3], A[c])                           # A_c = A_p R_a
        for k in range(3):
            h[k] = geo[i, 12 + k] + jw[J_Z, k]
        mv3(A[p], h, lp)                                # parent's centre -> joint point
        mv3(A[c], geo[i, 15:18], lc)
        mv3(A[p], jw[J_OM], Om)                            # relative angular velocity
        mv3(A[p], jw[J_KV], kv)                            # relative velocity of z_a
        for k in range(3):
            lc[k] = -lc[k]                              # joint point -> child's centre
            om[c, k] = om[p, k] + Om[k]
            rho[i, k] = lp[k] + lc[k]                   # parent's centre -> child's
        wp, wc = om[p], om[c]
        if body[0, B_SPRINGS] > 0:                      # centres and their velocities
            _centre(p, c, wp, wc, lp, lc, kv, rho[i], ws.r, ws.vel, h)
        cross(wp, Om, e0)                               # eps0 = w_p x Omega + A_p w_a
        mv3(A[p], jw[J_WA], h)
        for k in range(3):
            e0[k] += h[k]
        cross(wp, lp, h)
        cross(wp, h, a0)                                # a0 = w_p x (w_p x l_p)
        cross(e0, lc, h)                                #    + eps0 x l_c
        for k in range(3):
            a0[k] += h[k]
        cross(wc, lc, h)
        cross(wc, h, h)                                 #    + w_c x (w_c x l_c)
        for k in range(3):
            a0[k] += h[k]
        mv3(A[p], jw[J_SA], Kw)                            #    + A_p s_a
        cross(wp, kv, h)                                #    + 2 w_p x (A_p k v)
        for k in range(3):
            w0[i, k] = a0[k] + 2.0 * h[k] + Kw[k]
            w0[i, k + 3] = e0[k]
        for j in range(ints[i, I_NV]):                  # S_j = (A_p k_j + P_j x l_c, P_j)
            mv3(A[p], jw[J_P + j], Pw)
            mv3(A[p], jw[J_K + j], Kw)
            cross(Pw, lc, h)
            for k in range(3):
                S[v0 + j, k] = Kw[k] + h[k]
                S[v0 + j, k + 3] = Pw[k]
    body_terms(body, A, om, ws.J0, ws.Ms, ws.Qs, ws.t3, v)
    if body[0, B_SPRINGS] > 0:
        return spring_wrenches(geo, ints.shape[0], body, A, ws.r, ws.vel, om, ws.Qs, v)
    return True


# ---------------------------------------------------------------- dense Cholesky
@nb.njit(**OPTS)
def cholesky_factor(H):
    """``H = L L^T`` in place (lower triangle); False if ``H`` is not positive definite."""
    return cholesky_factor_n(H, H.shape[0])


@nb.njit(**OPTS)
def cholesky_factor_n(H, n):
    """:func:`cholesky_factor` of the leading ``n x n`` block of ``H``. A pivot below
    :data:`~mbcourse.spatial.PIVOT_RTOL` of its diagonal entry counts as zero: ``H`` is singular to working precision
    (a coordinate that moves no mass, a lost direction), and the factor would be noise."""
    for j in range(n):
        s = H[j, j]
        for k in range(j):
            s -= H[j, k] * H[j, k]
        if not s > PIVOT_RTOL * H[j, j]:
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
def lower_solve(L, b, out, n=-1):
    """``out = L^-1 b`` (``L`` lower triangular; its leading ``n x n`` block if ``n >= 0``)."""
    for i in range(L.shape[0] if n < 0 else n):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * out[k]
        out[i] = s / L[i, i]


@nb.njit(**OPTS)
def upper_solve(L, b, out, n=-1):
    """``out = L^-T b`` (the leading ``n x n`` block of ``L`` if ``n >= 0``)."""
    if n < 0:
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


@nb.njit(**OPTS)
def dissipation(ints, geo, body, q, qd):
    """:func:`damping_power` of one state ``q`` (nq,), ``qd`` (nv,) of a tree, after the
    outward pass of :func:`kinematics`; NaN where that pass declines (the checked route
    then explains)."""
    ws, keep = workspace(ints, geo, body)
    if not kinematics(ints, geo, body, q, qd, ws):
        return release(keep, np.nan)
    return release(keep, damping_power(ints, geo, body, ws.A, ws.r, ws.vel, ws.om, qd,
                                           ws.v))
