"""Chapter 2: a Model in absolute coordinates — joints as constraint rows, the KKT system,
forward dynamics and joint reactions (Yudintsev section 2).

Every moving body ``k`` gets the Newton–Euler equations of a free body (2.5)–(2.9)::

    M_k ddX_k = F_k + sum of reactions,   M_k = diag(m_k E, J_k),
    F_k = (applied force, applied moment in body axes - w_k x J_k w_k)

(planar: ``M_k = diag(m_k, m_k, J_zz)``, ``F_k = (F_x, F_y, M_z)``). Each joint becomes
elementary constraint rows (:mod:`.constraints`); together ``Q ddX = b``. The reactions are
``Q^T lam`` (2.26), so the unknowns solve the symmetric KKT system (2.49)::

    [ M   Q^T ] [ ddX  ]   [ F ]
    [ Q   0   ] [ -lam ] = [ b ]

(the sign of the multipliers follows (2.26): reactions are *added* to the applied forces;
see erratum E10).

Joints and their rows (spatial form):

============  =============================================  ====
kind          rows                                           rows
============  =============================================  ====
spherical     3 point–plane (normals e1, e2, e3 of the parent)  3
revolute      3 point–plane + 2 perpendicular (keep the axis)   5
universal     3 point–plane + 1 perpendicular (axis1 . axis2)   4
cylindrical   2 point–plane (point on the axis) + 2 perpendicular 4
prismatic     2 point–plane + 3 perpendicular (no rotation)     5
fixed         3 point–plane + 3 perpendicular                   6
free          none                                              0
============  =============================================  ====

Planar form (chosen automatically when every joint is a revolute joint about z, a
prismatic joint in the xy plane or a fixed joint, gravity and loads lie in the plane):
revolute = 2 point–line rows, slider = 1 point–line + 1 rotation row, fixed = 2 + 1.

Closed loops need nothing special: every joint, including the ones that close loops,
contributes its rows. The body coordinates are computed from ``q`` along a spanning tree;
the joints that close loops must then be satisfied by ``q`` (checked).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InconsistentStateError, ModelError, ShapeError
from . import constraints as C

__all__ = [
    "is_planar",
    "body_states",
    "constraint_rows",
    "equations",
    "forward_dynamics",
    "solve",
    "reactions",
    "joint_accelerations",
    "Equations",
    "assemble",
    "BodyStates",
]

_E = np.eye(3)
_EZ = np.array([0.0, 0.0, 1.0])


# ----------------------------------------------------------------- planarity
def is_planar(model):
    """True if the model moves in the xy plane and can use the planar form.

    Every joint must be a revolute joint about ``+-z``, a prismatic joint with its axis in
    the xy plane, or a fixed joint, with joint orientations about ``z``; gravity and the
    constant loads must lie in the plane and there must be no prescribed base motion.

    Examples
    --------
    >>> import mbcourse as mb
    >>> m = mb.Model(gravity=(0, -9.81, 0))
    >>> _ = m.add_body("a", 1.0, [1, 1, 1])
    >>> _ = m.add_joint("j", "revolute", "ground", "a", axis=(0, 0, 1))
    >>> is_planar(m)
    True
    """
    if abs(model.gravity[2]) > 0 or model.base_motion is not None:
        return False
    for j in model.joints:
        if abs(j.orientation[2, 2] - 1.0) > 1e-12:
            return False
        if j.kind == "revolute" and abs(abs(j.axis[2]) - 1.0) < 1e-12:
            continue
        if j.kind == "prismatic" and abs(j.axis[2]) < 1e-12:
            continue
        if j.kind == "fixed":
            continue
        return False
    for load in model.loads:  # body z stays world z, so both frames are checked alike
        f = np.zeros(3) if load.force is None else np.asarray(load.force(0.0), float)
        m = np.zeros(3) if load.torque is None else np.asarray(load.torque(0.0), float)
        if abs(f[2]) > 0 or np.abs(m[:2]).max() > 0:
            return False
    return True


# ------------------------------------------------------------------ the rows
@dataclass
class RowGroup:
    """Rows of one elementary type, stacked: parameters and body indices (0 = base)."""

    kind: str
    rows: list = field(default_factory=list)  # row numbers in the full system
    i: list = field(default_factory=list)  # parent body of each row
    j: list = field(default_factory=list)  # child body
    joint: list = field(default_factory=list)
    p1: list = field(default_factory=list)  # n or u
    p2: list = field(default_factory=list)  # rho_j or w
    p3: list = field(default_factory=list)  # d or c0

    def freeze(self):
        for name in ("rows", "i", "j", "joint"):
            setattr(self, name, np.asarray(getattr(self, name), dtype=int))
        for name in ("p1", "p2", "p3"):
            setattr(self, name, np.asarray(getattr(self, name), dtype=float))
        return self


def _perp_basis(a):
    """Two unit vectors completing the unit vector ``a`` to a right-handed basis."""
    trial = _E[np.argmin(np.abs(a))]
    u1 = np.cross(a, trial)
    u1 /= np.linalg.norm(u1)
    return u1, np.cross(a, u1)


def constraint_rows(model, planar=False):
    """The elementary constraint rows of every joint (cached on the model).

    Returns
    -------
    groups : dict of str to RowGroup
        ``"point_plane"`` and ``"perpendicular"`` (spatial) or ``"point_line"`` and
        ``"rotation"`` (planar).
    joint_rows : list of ndarray
        For each joint, the numbers of its rows.
    """
    key = ("rows", planar)
    if key in model._cache:
        return model._cache[key]
    model.validate()
    names = ("point_line", "rotation") if planar else ("point_plane", "perpendicular")
    groups = {name: RowGroup(name) for name in names}
    joint_rows = []
    count = 0

    def add(kind, joint, p1, p2, p3):
        nonlocal count
        g = groups[kind]
        g.rows.append(count)
        g.i.append(joint.parent)
        g.j.append(joint.child)
        g.joint.append(joint.index)
        g.p1.append(p1)
        g.p2.append(p2)
        g.p3.append(p3)
        count += 1

    for joint in model.joints:
        start = count
        pp, cp, R0 = joint.parent_point, joint.child_point, joint.orientation
        kind = joint.kind
        if planar:
            theta0 = np.arctan2(R0[1, 0], R0[0, 0])
            if kind in ("revolute", "fixed"):
                for n in (_E[0, :2], _E[1, :2]):
                    add("point_line", joint, n, cp[:2], n @ pp[:2])
            if kind == "prismatic":
                a = joint.axis[:2] / np.linalg.norm(joint.axis[:2])
                n = np.array([-a[1], a[0]])
                add("point_line", joint, n, cp[:2], n @ pp[:2])
            if kind in ("prismatic", "fixed"):
                add("rotation", joint, np.zeros(2), np.zeros(2), theta0)
        else:
            if kind in ("spherical", "revolute", "universal", "fixed"):
                normals = list(_E)
            elif kind in ("prismatic", "cylindrical"):
                normals = list(_perp_basis(joint.axis))
            elif kind == "free":
                normals = []
            else:
                raise ModelError(
                    f"joint {joint.name!r}: the Cartesian formulation has no constraint rows for "
                    f"{kind!r} joints yet; model it with the tree formulations"
                )
            for n in normals:
                add("point_plane", joint, n, cp, n @ pp)
            if kind in ("revolute", "cylindrical"):
                for u in _perp_basis(joint.axis):
                    add("perpendicular", joint, u, R0.T @ joint.axis, 0.0)
            elif kind == "universal":
                a1, a2 = joint.axes
                add("perpendicular", joint, a1, R0.T @ a2, a1 @ a2)
            elif kind in ("prismatic", "fixed"):
                for k in range(3):
                    add("perpendicular", joint, _E[k], R0.T @ _E[(k + 1) % 3], 0.0)
        joint_rows.append(np.arange(start, count))
    result = ({k: g.freeze() for k, g in groups.items()}, joint_rows)
    model._cache[key] = result
    return result


# ----------------------------------------------------------- body coordinates
@dataclass
class BodyStates:
    """Absolute coordinates of all bodies (base included, index 0), batch first.

    ``r`` (B, n+1, 3), ``A`` (B, n+1, 3, 3), ``v`` (B, n+1, 3) inertial axes, ``w``
    (B, n+1, 3) angular velocity in body axes, and the base's known accelerations ``a0``
    (B, 3, inertial) and ``dw0`` (B, 3, base axes).
    """

    r: np.ndarray
    A: np.ndarray
    v: np.ndarray
    w: np.ndarray
    a0: np.ndarray
    dw0: np.ndarray

    def spatial(self, idx):
        return C.SpatialState(self.r[:, idx], self.A[:, idx], self.v[:, idx], self.w[:, idx])

    def planar(self, idx):
        A = self.A[:, idx]
        return C.PlanarState(self.r[:, idx, :2], np.arctan2(A[..., 1, 0], A[..., 0, 0]),
                             self.v[:, idx, :2], self.w[:, idx, 2])


def body_states(model, q, qd, t=0.0):
    """Generalized coordinates to absolute body coordinates (positions and velocities).

    Parameters
    ----------
    q : (nq,) or (B, nq)
    qd : (nv,) or (B, nv)

    Returns
    -------
    BodyStates
        Always with a batch dimension.
    """
    q = np.atleast_2d(model.check_q(q))
    qd = np.atleast_2d(model.check_v(qd))
    B = max(q.shape[0], qd.shape[0])
    q = np.broadcast_to(q, (B, model.nq))
    qd = np.broadcast_to(qd, (B, model.nv))
    r, A = model.body_poses(q, t)
    vel, omega = model.body_velocities(q, qd, t)
    w_body = (np.swapaxes(A, -1, -2) @ omega[..., None])[..., 0]
    a0 = np.zeros((B, 3))
    dw0 = np.zeros((B, 3))
    if model.base_motion is not None:
        base = model.base_motion.state(t)
        a0[:] = base["acceleration"]
        dw0[:] = base["orientation"].T @ base["angular_acceleration"]
    return BodyStates(r, A, vel, w_body, a0, dw0)


def _evaluate(groups, states, planar):
    """Evaluate every row group: ``(rows, i, j, g, Qi, Qj, b)`` lists."""
    out = []
    for group in groups.values():
        if group.rows.size == 0:
            continue
        if planar:
            si, sj = states.planar(group.i), states.planar(group.j)
            if group.kind == "point_line":
                res = C.planar_point_line(group.p1, group.p2, group.p3, si, sj)
            else:
                res = C.planar_rotation(group.p3, si, sj)
        else:
            si, sj = states.spatial(group.i), states.spatial(group.j)
            if group.kind == "point_plane":
                res = C.point_plane(group.p1, group.p2, group.p3, si, sj)
            else:
                res = C.perpendicular(group.p1, group.p2, group.p3, si, sj)
        out.append((group, *res))
    return out


# ------------------------------------------------------------ the equations
@dataclass
class Equations:
    """The equations of motion in absolute coordinates for a batch of states.

    Attributes
    ----------
    planar : bool
    dof : int
        Coordinates per body (6 spatial, 3 planar).
    M : (n, dof, dof) body mass matrices (configuration-independent)
    F : (B, n, dof) applied forces, gyroscopic terms and joint forces ``tau``
    row_i, row_j : (nc,) bodies of each row (0 = base)
    row_joint : (nc,) joint index of each row
    Qi, Qj : (B, nc, dof) row blocks
    b : (B, nc) right-hand side (base accelerations already moved here)
    g : (B, nc) position-level residual
    gdot : (B, nc) velocity-level residual ``Q dX``
    states : BodyStates
    """

    planar: bool
    dof: int
    M: np.ndarray
    F: np.ndarray
    row_i: np.ndarray
    row_j: np.ndarray
    row_joint: np.ndarray
    Qi: np.ndarray
    Qj: np.ndarray
    b: np.ndarray
    g: np.ndarray
    gdot: np.ndarray
    states: BodyStates
    joint_rows: list

    @property
    def n(self):
        return self.M.shape[0]

    @property
    def nc(self):
        return self.row_i.size

    def dense_Q(self):
        """The full constraint matrix ``Q``, shape (B, nc, n * dof)."""
        B, nc, d = self.Qi.shape
        Q = np.zeros((B, nc, self.n * d))
        rows = np.arange(nc)
        for body, block in ((self.row_i, self.Qi), (self.row_j, self.Qj)):
            keep = body > 0
            cols = (body[keep] - 1)[:, None] * d + np.arange(d)
            Q[:, rows[keep][:, None], cols] += block[:, keep]
        return Q

    def dense_M(self):
        """Block-diagonal mass matrix, shape (n * dof, n * dof)."""
        d = self.dof
        M = np.zeros((self.n * d, self.n * d))
        for k in range(self.n):
            M[k * d:(k + 1) * d, k * d:(k + 1) * d] = self.M[k]
        return M


def _velocities(states, planar, idx):
    """Body velocity vectors dX of bodies ``idx``: (B, len(idx), dof)."""
    if planar:
        return np.concatenate([states.v[:, idx, :2], states.w[:, idx, 2:3]], axis=-1)
    return np.concatenate([states.v[:, idx], states.w[:, idx]], axis=-1)


def _base_accelerations(states, planar):
    if planar:
        return np.concatenate([states.a0[:, :2], states.dw0[:, 2:3]], axis=-1)
    return np.concatenate([states.a0, states.dw0], axis=-1)


def _joint_wrenches(model, states, q, tau):
    """World forces and moments (about centres of mass) of the joint forces ``tau``."""
    B = states.r.shape[0]
    F = np.zeros((B, model.n + 1, 3))
    Mo = np.zeros((B, model.n + 1, 3))
    for j in model.joints:
        if j.nv == 0:
            continue
        ta = tau[:, j.v_slice]
        if not np.any(ta):
            continue
        qa = q[:, j.q_slice]
        Ai = states.A[:, j.parent]
        Jm = np.concatenate([Ai @ j.k(qa), Ai @ j.p(qa)], axis=-2)  # (B, 6, nv)
        JtJ = np.swapaxes(Jm, -1, -2) @ Jm
        wrench = (Jm @ np.linalg.solve(JtJ, ta[..., None]))[..., 0]  # J (J^T J)^-1 tau
        f, m = wrench[:, :3], wrench[:, 3:]
        P = states.r[:, j.child] + (states.A[:, j.child] @ j.child_point)
        for body, sign in ((j.child, 1.0), (j.parent, -1.0)):
            F[:, body] += sign * f
            Mo[:, body] += sign * (np.cross(P - states.r[:, body], f) + m)
    return F, Mo


def _choose_planar(model, planar):
    if planar is None:
        return is_planar(model)
    if planar and not is_planar(model):
        raise ModelError(
            "planar=True needs a planar model: revolute joints about z, prismatic joints in "
            "the xy plane, fixed joints, in-plane gravity and loads, no base motion"
        )
    return bool(planar)


def equations(model, q, qd, tau=None, t=0.0, planar=None):
    """Assemble the equations of motion in absolute coordinates at a batch of states.

    Parameters
    ----------
    model : Model
    q, qd : generalized coordinates and speeds, (nq,)/(nv,) or batches
    tau : generalized forces (nv,) or (B, nv), optional
    t : float
    planar : bool, optional
        Use the planar form (default: :func:`is_planar`).

    Returns
    -------
    Equations
    """
    planar = _choose_planar(model, planar)
    qb = np.atleast_2d(model.check_q(q))
    tau_b = np.atleast_2d(model.check_tau(tau))
    states = body_states(model, q, qd, t)
    B = states.r.shape[0]
    qb = np.broadcast_to(qb, (B, model.nq))
    tau_b = np.broadcast_to(tau_b, (B, model.nv))
    return assemble(model, states, t, planar, _joint_wrenches(model, states, qb, tau_b))


def assemble(model, states, t=0.0, planar=None, joint_wrenches=None):
    """Assemble the equations from absolute body states (no generalized coordinates).

    This is the entry point of absolute-coordinate simulation: the states are whatever the
    integrator holds, the rows measure how far they are from the constraint manifold.

    Parameters
    ----------
    states : BodyStates
    joint_wrenches : (F, M) of shape (B, n + 1, 3) each, optional
        Extra forces and moments (inertial axes, about the centres of mass), e.g. from
        joint forces.

    Returns
    -------
    Equations
    """
    planar = _choose_planar(model, planar)
    groups, joint_rows = constraint_rows(model, planar)
    B = states.r.shape[0]
    n = model.n
    dof = 3 if planar else 6
    masses, inertias = model.masses(), model.inertias()
    Fw, Mw = model.applied_wrenches(t=t, orientations=states.A)
    if joint_wrenches is not None:
        Fw, Mw = Fw + joint_wrenches[0], Mw + joint_wrenches[1]
    if planar:
        out_of_plane = np.abs(Fw[..., 1:, 2])
        if out_of_plane.max(initial=0.0) > 1e-12 * (1.0 + np.abs(Fw).max(initial=0.0)):
            body = model.bodies[1 + int(np.argmax(out_of_plane.max(axis=0)))].name
            raise ModelError(
                f"a load on body {body!r} leaves the xy plane at t={t}: the planar form would "
                "drop it; use planar=False"
            )
        M = np.zeros((n, 3, 3))
        M[:, 0, 0] = M[:, 1, 1] = masses
        M[:, 2, 2] = inertias[:, 2, 2]
        F = np.concatenate([Fw[:, 1:, :2], Mw[:, 1:, 2:3]], axis=-1)
    else:
        M = np.zeros((n, 6, 6))
        M[:, :3, :3] = masses[:, None, None] * _E
        M[:, 3:, 3:] = inertias
        A = states.A[:, 1:]
        w = states.w[:, 1:]
        M_body = (np.swapaxes(A, -1, -2) @ Mw[:, 1:, :, None])[..., 0]
        gyro = np.cross(w, (inertias @ w[..., None])[..., 0])
        F = np.concatenate([Fw[:, 1:], M_body - gyro], axis=-1)
    nc = sum(g.rows.size for g in groups.values())
    row_i, row_j, row_joint = (np.zeros(nc, int) for _ in range(3))
    Qi, Qj = np.zeros((B, nc, dof)), np.zeros((B, nc, dof))
    b, g = np.zeros((B, nc)), np.zeros((B, nc))
    for group, g_, Qi_, Qj_, b_ in _evaluate(groups, states, planar):
        r = group.rows
        row_i[r], row_j[r], row_joint[r] = group.i, group.j, group.joint
        Qi[:, r], Qj[:, r], b[:, r], g[:, r] = Qi_, Qj_, b_, g_
    dX_i = _velocities(states, planar, row_i)
    dX_j = _velocities(states, planar, row_j)
    gdot = np.sum(Qi * dX_i, -1) + np.sum(Qj * dX_j, -1)
    # known base accelerations move to the right-hand side
    ddX0 = _base_accelerations(states, planar)
    b = b - np.where(row_i == 0, np.sum(Qi * ddX0[:, None], -1), 0.0)
    b = b - np.where(row_j == 0, np.sum(Qj * ddX0[:, None], -1), 0.0)
    return Equations(planar, dof, M, F, row_i, row_j, row_joint, Qi, Qj, b, g, gdot, states,
                     joint_rows)


def check_consistency(model, eq, q, qd, tol=1e-8):
    """Refuse states that violate the loop-closing joints (positions or velocities).

    Joints on the spanning tree hold by construction; the others must be satisfied by the
    given ``q`` and ``qd``.
    """
    scale = 1.0 + np.abs(eq.states.r).max()
    bad = np.abs(eq.g) > tol * scale
    kind = "position"
    if not bad.any():
        vscale = 1.0 + np.abs(eq.states.v).max() + np.abs(eq.states.w).max() * scale
        bad = np.abs(eq.gdot) > tol * vscale
        kind = "velocity"
    if bad.any():
        b_idx, r_idx = np.argwhere(bad)[0]
        joint = model.joints[eq.row_joint[r_idx]]
        value = (eq.g if kind == "position" else eq.gdot)[b_idx, r_idx]
        raise InconsistentStateError(
            f"joint {joint.name!r} is violated at the {kind} level by {value:.3g} "
            f"(batch item {b_idx}): the coordinates of a closed loop must close it; use "
            "mb.cartesian.project() for consistent initial conditions"
        )
    # loop-closing joints: their own coordinates must describe the relative motion
    tree, cut = model.graph.spanning_tree()
    qb = np.atleast_2d(q)
    for a in cut:
        j = model.joints[a]
        Ai, Ac = eq.states.A[:, j.parent], eq.states.A[:, j.child]
        R = np.swapaxes(Ai, -1, -2) @ Ac
        qa = np.broadcast_to(qb, (R.shape[0], model.nq))[:, j.q_slice]
        err = np.abs(R - j.rotation(qa)).max()
        P_i = eq.states.r[:, j.parent] + (Ai @ j.parent_point)
        P_c = eq.states.r[:, j.child] + (Ac @ j.child_point)
        z = (np.swapaxes(Ai, -1, -2) @ (P_c - P_i)[..., None])[..., 0]
        err = max(err, np.abs(z - j.z(qa)).max() / scale)
        if err > tol:
            raise InconsistentStateError(
                f"joint {j.name!r} closes a loop, but its coordinates q[{j.q_slice.start}:"
                f"{j.q_slice.stop}] do not match the relative pose of "
                f"{j._parent_name!r} and {j._child_name!r} (error {err:.3g})"
            )


# ---------------------------------------------------- back to joint coordinates
def joint_accelerations(model, states, ddX, q, qd, planar=False):
    """Body accelerations to generalized accelerations ``dv/dt`` of every joint.

    For joint ``a`` between parent ``i`` and child ``c`` (either may be nearer the base)
    the relative angular acceleration and the acceleration of the child's joint point
    relative to the parent's frame give ``[p; k] dv_a = [dOmega; dz]`` (3.104)–(3.107),
    solved in the least-squares sense (exact for consistent accelerations).

    Parameters
    ----------
    states : BodyStates
    ddX : (B, n, dof) body accelerations (centre of mass, inertial axes; angular, body axes)
    """
    B = ddX.shape[0]
    n = model.n
    acc = np.zeros((B, n + 1, 3))
    alpha = np.zeros((B, n + 1, 3))  # inertial axes
    if planar:
        acc[:, 1:, :2] = ddX[..., :2]
        alpha[:, 1:, 2] = ddX[..., 2]
    else:
        acc[:, 1:] = ddX[..., :3]
        alpha[:, 1:] = (states.A[:, 1:] @ ddX[..., 3:, None])[..., 0]
    acc[:, 0] = states.a0
    alpha[:, 0] = (states.A[:, 0] @ states.dw0[..., None])[..., 0]
    omega = (states.A @ states.w[..., None])[..., 0]  # inertial axes
    q = np.broadcast_to(np.atleast_2d(q), (B, model.nq))
    qd = np.broadcast_to(np.atleast_2d(qd), (B, model.nv))
    out = np.zeros((B, model.nv))
    for j in model.joints:
        if j.nv == 0:
            continue
        i, c = j.parent, j.child
        qa, va = q[:, j.q_slice], qd[:, j.v_slice]
        Ai, Ac = states.A[:, i], states.A[:, c]
        p, k = j.p(qa), j.k(qa)
        w_bias, s_bias = j.bias(qa, va)
        wi = omega[:, i]
        rel_omega = (Ai @ (p @ va[..., None]))[..., 0]
        d_omega = alpha[:, c] - alpha[:, i] - np.cross(wi, rel_omega) - (Ai @ w_bias[..., None])[..., 0]
        L = (Ai @ (j.parent_point + j.z(qa))[..., None])[..., 0]
        lc = Ac @ j.child_point
        wc = omega[:, c]
        acc_child_point = acc[:, c] + np.cross(alpha[:, c], lc) + np.cross(wc, np.cross(wc, lc))
        acc_carried = (acc[:, i] + np.cross(alpha[:, i], L) + np.cross(wi, np.cross(wi, L))
                       + 2.0 * np.cross(wi, (Ai @ (k @ va[..., None]))[..., 0])
                       + (Ai @ s_bias[..., None])[..., 0])
        d_z = acc_child_point - acc_carried
        rhs = np.concatenate([d_omega, d_z], axis=-1)
        rhs = np.concatenate([(np.swapaxes(Ai, -1, -2) @ rhs[:, :3, None])[..., 0],
                              (np.swapaxes(Ai, -1, -2) @ rhs[:, 3:, None])[..., 0]], axis=-1)
        Jm = np.concatenate([p, k], axis=-2)  # (B, 6, nv) parent axes
        Jt = np.swapaxes(Jm, -1, -2)
        out[:, j.v_slice] = np.linalg.solve(Jt @ Jm, (Jt @ rhs[..., None]))[..., 0]
    return out


# ------------------------------------------------------------- public API
def solve(model, q, qd, tau=None, solver="dense", t=0.0, planar=None, redundant="raise",
          check=True):
    """Solve the KKT system: body accelerations and multipliers.

    Returns
    -------
    eq : Equations
    ddX : (B, n, dof)
    lam : (B, nc)
        Multipliers with the sign of (2.26): the reactions ``Q^T lam`` are added to the
        applied forces.
    """
    from .solvers import SOLVERS

    if solver not in SOLVERS:
        raise ShapeError(f"solver must be one of {sorted(SOLVERS)}, got {solver!r}")
    if redundant not in ("raise", "lstsq"):
        raise ShapeError(f"redundant must be 'raise' or 'lstsq', got {redundant!r}")
    eq = equations(model, q, qd, tau, t, planar)
    if check:
        check_consistency(model, eq, q, qd)
    ddX, lam = SOLVERS[solver](model, eq, redundant=redundant)
    return eq, ddX, lam


def forward_dynamics(model, q, qd, tau=None, solver="dense", t=0.0, planar=None,
                     redundant="raise"):
    """Generalized accelerations from the Cartesian formulation (the **contract** function).

    The model is taken to absolute body coordinates, every joint becomes constraint rows,
    the KKT system (2.49) is solved with the chosen solver and the body accelerations are
    taken back to the joints' generalized accelerations.

    Parameters
    ----------
    model : Model
    q : array_like, shape (nq,) or (B, nq)
    qd : array_like, shape (nv,) or (B, nv)
    tau : array_like, shape (nv,) or (B, nv), optional
        Generalized forces along the joint coordinates (torques, forces).
    solver : {"dense", "schur", "ldlt"}
        ``"dense"``: the whole KKT matrix with NumPy; ``"schur"``: the range-space method
        (2.51)–(2.54) with a Cholesky factor of ``Q M^-1 Q^T``; ``"ldlt"``: Baraff's block
        ``LDL^T`` in tree order without fill-in (2.55)–(2.61), for tree structures.
    t : float
        Time (for prescribed base motion and time-dependent loads).
    planar : bool, optional
        Force the planar (True) or spatial (False) form; default automatic.
    redundant : {"raise", "lstsq"}
        What to do with redundant constraint rows (e.g. a planar loop modelled with spatial
        revolute joints): raise :class:`~mbcourse.errors.SingularSystemError` naming the
        joints, or use minimum-norm multipliers (accelerations stay unique).

    Returns
    -------
    ndarray, shape (nv,) or (B, nv)

    Examples
    --------
    A pendulum of length 1 (point mass at the end of a massless-looking rod) released
    horizontally: ``dv/dt = -g m l / (J + m l^2)``.

    >>> import numpy as np
    >>> import mbcourse as mb
    >>> m = mb.Model(gravity=(0, -9.81, 0))
    >>> _ = m.add_body("bob", mass=1.0, inertia=[1e-3, 1e-3, 1e-3])
    >>> _ = m.add_joint("pin", "revolute", "ground", "bob", child_point=(-1, 0, 0), axis=(0, 0, 1))
    >>> forward_dynamics(m, [0.0], [0.0]).round(6)
    array([-9.80020])
    >>> bool(np.allclose(forward_dynamics(m, [0.0], [0.0], solver="ldlt", planar=False),
    ...                  forward_dynamics(m, [0.0], [0.0], solver="schur")))
    True
    """
    eq, ddX, _ = solve(model, q, qd, tau, solver, t, planar, redundant)
    out = joint_accelerations(model, eq.states, ddX, q, qd, eq.planar)
    q_arr, qd_arr = np.asarray(q, float), np.asarray(qd, float)
    if q_arr.ndim == 1 and qd_arr.ndim == 1 and (tau is None or np.ndim(tau) == 1):
        return out[0]
    return out


def reactions(model, q, qd, tau=None, solver="dense", t=0.0, planar=None, redundant="raise"):
    """Reaction force and moment of every joint, from the multipliers (2.23)–(2.26).

    For joint ``a`` the reaction acting on the child ``i-(a)`` is reduced to the joint point;
    the parent feels the opposite. Values are given in child and in parent axes.

    Returns
    -------
    dict
        ``{joint name: {"force_child": (B, 3), "moment_child": (B, 3),
        "force_parent": (B, 3), "moment_parent": (B, 3)}}`` (moment about the joint point;
        planar models give zero out-of-plane components from their rows).
    """
    eq, ddX, lam = solve(model, q, qd, tau, solver, t, planar, redundant)
    st = eq.states
    out = {}
    for j in model.joints:
        rows = eq.joint_rows[j.index]
        Ac, Ai = st.A[:, j.child], st.A[:, j.parent]
        if eq.planar:
            f2 = np.einsum("br,brk->bk", lam[:, rows], eq.Qj[:, rows, :2]) if rows.size else 0
            mz = np.einsum("br,br->b", lam[:, rows], eq.Qj[:, rows, 2]) if rows.size else 0
            force = np.zeros((lam.shape[0], 3))
            force[:, :2] = f2
            moment_c = np.zeros_like(force)
            moment_c[:, 2] = mz
        else:
            wrench = np.einsum("br,brk->bk", lam[:, rows], eq.Qj[:, rows]) if rows.size else \
                np.zeros((lam.shape[0], 6))
            force = wrench[:, :3]  # inertial axes
            moment_c = (Ac @ wrench[:, 3:, None])[..., 0]  # about C_child, inertial axes
        arm = Ac @ j.child_point  # C_child -> joint point
        moment_P = moment_c - np.cross(arm, force)
        to_child = np.swapaxes(Ac, -1, -2)
        to_parent = np.swapaxes(Ai, -1, -2)
        out[j.name] = {
            "force_child": (to_child @ force[..., None])[..., 0],
            "moment_child": (to_child @ moment_P[..., None])[..., 0],
            "force_parent": (to_parent @ force[..., None])[..., 0],
            "moment_parent": (to_parent @ moment_P[..., None])[..., 0],
        }
    return out
