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

Every joint describes its own rows (:meth:`mbcourse.joints.Joint.rows`); in the spatial form:

============  ==============================================================  ====
kind          rows                                                            rows
============  ==============================================================  ====
spherical     3 point–plane (normals e1, e2, e3 of the parent)                   3
revolute      3 point–plane + 2 perpendicular (keep the axis)                    5
universal     3 point–plane + 1 perpendicular (axis1 . axis2)                    4
cylindrical   2 point–plane (point on the axis) + 2 perpendicular                4
screw         2 point–plane + 2 perpendicular + 1 screw (advance = h theta)      5
prismatic     2 point–plane + 3 perpendicular (no rotation)                      5
fixed         3 point–plane + 3 perpendicular                                    6
free          none                                                               0
============  ==============================================================  ====

Planar form (chosen automatically when every joint can be planar — revolute about z,
prismatic in the xy plane, fixed — gravity, constant loads and springs act in the plane and
the base does not move): revolute = 2 point–line rows, slider = 1 point–line + 1 rotation
row, fixed = 2 + 1.

Forces: gravity, loads, spring-dampers (:meth:`mbcourse.Model.applied_wrenches`) act on the
bodies; the joint forces ``tau`` plus the model's generalized forces (joint springs,
:meth:`mbcourse.Model.add_generalized_force`) act as equal and opposite wrenches on the two
bodies of each joint (:func:`joint_wrenches`).

Closed loops need nothing special: every joint, including the ones that close loops,
contributes its rows. The body coordinates are computed from ``q`` along a spanning tree;
the joints that close loops must then be satisfied by ``q`` (checked;
:func:`~mbcourse.cartesian.consistent_state` gives a consistent ``q, qd``).

The per-model constants (row parameters, planarity, the joints closing loops) are built
once per model version by :func:`prepare`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from ..kernels import route
from ..errors import InconsistentStateError, ModelError, ShapeError
from .. import forces as model_forces
from .. import poses as model_poses
from ..spatial import cross, mv, transpose
from . import constraints as C
from ..coupling import coupled

__all__ = [
    "prepare",
    "Prepared",
    "RowSet",
    "RowGroup",
    "is_planar",
    "resolve_planar",
    "body_states",
    "constraint_rows",
    "equations",
    "forward_dynamics",
    "solve",
    "Solution",
    "reactions",
    "joint_accelerations",
    "joint_coordinates",
    "joint_wrenches",
    "check_consistency",
    "Equations",
    "assemble",
    "BodyStates",
    "ROW_FUNCTIONS",
]

_E = np.eye(3)

#: Row type -> (function of :mod:`.constraints`, planar?). Each is called as
#: ``function(*params, s_i, s_j)`` with the parameters of :class:`RowGroup`.
ROW_FUNCTIONS = {
    "point_plane": (C.point_plane, False),
    "perpendicular": (C.perpendicular, False),
    "screw": (C.screw, False),
    "point_line": (C.planar_point_line, True),
    "rotation": (C.planar_rotation, True),
}


# ------------------------------------------------------------------ the rows
@dataclass
class RowGroup:
    """Rows of one elementary type, stacked: parameters and body indices (0 = base).

    ``params`` is the tuple of arrays the row function takes before the two body states
    (one entry per row along the first axis).
    """

    type: str
    rows: list = field(default_factory=list)  # row numbers in the full system
    i: list = field(default_factory=list)  # parent body of each row
    j: list = field(default_factory=list)  # child body
    joint: list = field(default_factory=list)
    params: list = field(default_factory=list)  # per row: tuple of parameters

    def freeze(self):
        for name in ("rows", "i", "j", "joint"):
            setattr(self, name, np.asarray(getattr(self, name), dtype=int))
        self.params = tuple(np.array(p, dtype=float) for p in zip(*self.params))
        return self


@dataclass
class RowSet:
    """All rows of a model in one form: ``groups`` (type -> :class:`RowGroup`),
    ``joint_rows`` (the row numbers of each joint), ``nc`` rows in all."""

    groups: dict
    joint_rows: list
    nc: int


def _build_rows(model, planar):
    types = ("point_line", "rotation") if planar else ("point_plane", "perpendicular", "screw")
    groups = {name: RowGroup(name) for name in types}
    joint_rows = []
    count = 0
    for joint in model.joints:
        rows = joint.row_parameters(planar)
        if rows is None:
            return None
        start = count
        for kind, params in rows:
            if kind not in groups:
                raise ModelError(
                    f"joint {joint.name!r}: a row of type {kind!r} does not belong to the "
                    f"{'planar' if planar else 'spatial'} form (types {list(types)})"
                )
            g = groups[kind]
            g.rows.append(count)
            g.i.append(joint.parent)
            g.j.append(joint.child)
            g.joint.append(joint.index)
            g.params.append(params)
            count += 1
        joint_rows.append(np.arange(start, count))
    return RowSet({k: g.freeze() for k, g in groups.items() if g.rows}, joint_rows, count)


@dataclass(frozen=True)
class Prepared:
    """Per-model constants of the Cartesian formulation (see :func:`prepare`).

    Attributes
    ----------
    spatial_rows : RowSet
    planar_rows : RowSet or None
        ``None`` if some joint cannot keep its body in the xy plane.
    planar : bool
        The planar form applies (:func:`is_planar`).
    z_levels : ndarray (n + 1,) or None
        The constant ``z`` of every centre of mass in the planar form.
    loop_joints : tuple of int
        Joints that close loops (not on the spanning tree the body coordinates follow).
    state_loads : bool
        Some load is a callable ``f(t, q, qd)``: the forces need the generalized state.
    needs_q : bool
        The forces need ``q, qd`` (state loads, joint springs, generalized-force callables);
        springs between body points need only the body states.
    """

    spatial_rows: RowSet
    planar_rows: RowSet | None
    planar: bool
    z_levels: np.ndarray | None
    loop_joints: tuple
    state_loads: bool
    needs_q: bool

    def rows(self, planar):
        return self.planar_rows if planar else self.spatial_rows


def _in_plane(model, z):
    """Gravity, constant loads and springs keep a planar model in its plane."""
    if abs(model.gravity[2]) > 0 or model.base_motion is not None:
        return False
    for load in model.loads:  # body z stays world z, so both frames are checked alike
        # callables are checked when evaluated (assemble refuses out-of-plane forces)
        f = np.zeros(3) if load.force is None or callable(load.force) else load.force
        m = np.zeros(3) if load.torque is None or callable(load.torque) else load.torque
        if abs(f[2]) > 0 or np.abs(m[:2]).max() > 0:
            return False
    scale = 1.0 + np.abs(z).max(initial=0.0)
    for s in model.springs:  # both attachment points at one height: the force is in-plane
        if abs(z[s.body_a] + s.point_a[2] - z[s.body_b] - s.point_b[2]) > 1e-12 * scale:
            return False
    return True


def prepare(model):
    """The Cartesian formulation's per-model constants, built once per model version.

    Row parameters of every joint in the spatial and (when possible) the planar form,
    whether the planar form applies, the constant heights of the bodies in the planar form
    and the joints that close loops. Any change of the model rebuilds them
    (:meth:`mbcourse.Model.prepared`).

    Returns
    -------
    Prepared

    Examples
    --------
    >>> import mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> p = prepare(m)
    >>> p.planar, p.spatial_rows.nc, p.planar_rows.nc, p.loop_joints
    (True, 10, 4, ())
    >>> prepare(m) is p
    True
    """
    def build():
        model.validate()
        _, cut = model.graph.spanning_tree()
        planar_rows = _build_rows(model, True)
        z = None
        if planar_rows is not None:
            r, _ = model_poses.body_poses(model, model.neutral_q())
            z = np.array(r[:, 2])
            z.flags.writeable = False
        state_loads = any(callable(f) for ld in model.loads for f in (ld.force, ld.torque))
        return Prepared(
            spatial_rows=_build_rows(model, False),
            planar_rows=planar_rows,
            planar=planar_rows is not None and _in_plane(model, z),
            z_levels=z,
            loop_joints=tuple(int(a) for a in cut),
            state_loads=state_loads,
            needs_q=bool(state_loads or model.joint_springs or model.generalized_force_elements),
        )

    return model.prepared("cartesian", build)


def constraint_rows(model, planar=False):
    """The elementary constraint rows of every joint (from :func:`prepare`).

    Returns
    -------
    groups : dict of str to RowGroup
        ``"point_plane"``, ``"perpendicular"``, ``"screw"`` (spatial) or ``"point_line"``
        and ``"rotation"`` (planar); types without rows are left out.
    joint_rows : list of ndarray
        For each joint, the numbers of its rows.

    Examples
    --------
    >>> import mbcourse as mb
    >>> m = mb.Model()
    >>> _ = m.add_body("nut", 1.0, [1, 1, 1])
    >>> _ = m.add_joint("thread", "screw", "ground", "nut", axis=(0, 0, 1), lead=0.01)
    >>> groups, joint_rows = constraint_rows(m)
    >>> {k: g.rows.tolist() for k, g in groups.items()}
    {'point_plane': [0, 1], 'perpendicular': [2, 3], 'screw': [4]}
    """
    rows = prepare(model).rows(planar)
    if rows is None:
        raise ModelError(_PLANAR_MESSAGE)
    return rows.groups, rows.joint_rows


# ----------------------------------------------------------------- planarity
_PLANAR_MESSAGE = (
    "planar=True needs a planar model: revolute joints about z, prismatic joints in the xy "
    "plane, fixed joints (orientations about z), in-plane gravity, loads and springs, no base "
    "motion"
)


def is_planar(model):
    """True if the model moves in the xy plane and can use the planar form.

    Every joint must be able to keep its body in the plane (:attr:`Joint.planar`: a
    revolute joint about ``+-z``, a prismatic joint with its axis in the xy plane or a fixed
    joint, orientations about ``z``); gravity and the constant loads must lie in the plane,
    the springs' attachment points at equal heights, and there must be no prescribed base
    motion.

    Examples
    --------
    >>> import mbcourse as mb
    >>> m = mb.Model(gravity=(0, -9.81, 0))
    >>> _ = m.add_body("a", 1.0, [1, 1, 1])
    >>> _ = m.add_joint("j", "revolute", "ground", "a", axis=(0, 0, 1))
    >>> is_planar(m)
    True
    """
    return prepare(model).planar


def resolve_planar(model, planar):
    """The form to use: ``planar=None`` chooses :func:`is_planar`; ``True`` is refused
    (ModelError) for a model that is not planar."""
    if planar is None:
        return is_planar(model)
    if planar and not is_planar(model):
        raise ModelError(_PLANAR_MESSAGE)
    return bool(planar)


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

    @property
    def omega(self):
        """Angular velocities in inertial axes, (B, n+1, 3)."""
        return mv(self.A, self.w)

    def spatial(self, idx):
        return C.SpatialState(self.r[:, idx], self.A[:, idx], self.v[:, idx], self.w[:, idx])

    def planar(self, idx):
        A = self.A[:, idx]
        return C.PlanarState(self.r[:, idx, :2], np.arctan2(A[..., 1, 0], A[..., 0, 0]),
                             self.v[:, idx, :2], self.w[:, idx, 2])


def _body_states(model, q, qd, t):
    """BodyStates of checked (B, nq), (B, nv) arrays."""
    B = q.shape[0]
    r, A = model_poses.body_poses(model, q, t)
    vel, omega = model_poses.body_velocities(model, q, qd, t, A)
    a0 = np.zeros((B, 3))
    dw0 = np.zeros((B, 3))
    if model.base_motion is not None:
        base = model.base_motion.state(t)
        a0[:] = base["acceleration"]
        dw0[:] = base["orientation"].T @ base["angular_acceleration"]
    return BodyStates(r, A, vel, mv(transpose(A), omega), a0, dw0)


def body_states(model, q, qd, t=0.0):
    """Generalized coordinates to absolute body coordinates (positions and velocities).

    Parameters
    ----------
    q : array_like, shape (..., nq)
    qd : array_like, shape (..., nv)
    t : float

    Returns
    -------
    BodyStates
        With the batch flattened to one leading dimension (1 for a single state).

    Examples
    --------
    >>> import mbcourse as mb
    >>> st = body_states(mb.models.double_pendulum(), [0.0, 0.0], [1.0, 0.0])
    >>> st.r[0, 2].tolist(), st.v[0, 2].tolist()
    ([1.5, 0.0, 0.0], [0.0, 1.5, 0.0])
    """
    state = _checked(model, q, qd, None, t)
    return _body_states(model, state.q, state.qd, t)


def joint_coordinates(model, states, q_ref=None):
    """Generalized coordinates and speeds of absolute body states (every joint).

    For joint ``a`` between parent ``i`` and child ``c`` the relative pose ``R = A_i^T A_c``
    and the joint vector ``z = A_i^T (r_c + A_c c_c - r_i - A_i c_i)`` give its
    coordinates (:meth:`Joint.from_pose`); the relative angular velocity and the local rate
    of ``z`` (3.101), (3.104) give its speeds (:meth:`Joint.speeds_from_rates`). Joints on
    the spanning tree and loop-closing joints are treated alike; off the constraint manifold
    (drift) the result is the joint's best fit.

    Parameters
    ----------
    states : BodyStates
    q_ref : array_like, shape (nq,) or (B, nq), optional
        Picks the branch of every joint: the turn count of angles and the sign of
        quaternions nearest to it.

    Returns
    -------
    q : (B, nq)
    qd : (B, nv)
    """
    B = states.r.shape[0]
    q = np.zeros((B, model.nq))
    qd = np.zeros((B, model.nv))
    if q_ref is not None:
        q_ref = np.broadcast_to(np.asarray(q_ref, dtype=float), (B, model.nq))
    omega = states.omega
    for j in model.joints:
        i, c = j.parent, j.child
        Ai, Ac = states.A[:, i], states.A[:, c]
        AiT = transpose(Ai)
        lever_i, lever_c = mv(Ai, j.parent_point), mv(Ac, j.child_point)
        d = states.r[:, c] + lever_c - states.r[:, i] - lever_i
        qa = j.from_pose(AiT @ Ac, mv(AiT, d), None if q_ref is None else q_ref[:, j.q_slice])
        q[:, j.q_slice] = qa
        if j.nv == 0:
            continue
        dd = (states.v[:, c] + cross(omega[:, c], lever_c)
              - states.v[:, i] - cross(omega[:, i], lever_i))
        zdot = mv(AiT, dd - cross(omega[:, i], d))
        qd[:, j.v_slice] = j.speeds_from_rates(qa, mv(AiT, omega[:, c] - omega[:, i]), zdot)
    return q, qd


def _evaluate(rowset, states, planar):
    """Evaluate every row group: ``(group, g, Qi, Qj, b)`` tuples."""
    out = []
    for group in rowset.groups.values():
        fn, _ = ROW_FUNCTIONS[group.type]
        pick = states.planar if planar else states.spatial
        out.append((group, *fn(*group.params, pick(group.i), pick(group.j))))
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
    M : (n, dof, dof) body mass matrices (configuration-independent); None when assembled
        with ``forces=False``
    F : (B, n, dof) applied forces, gyroscopic terms and joint forces; None likewise
    row_i, row_j : (nc,) bodies of each row (0 = base)
    row_joint : (nc,) joint index of each row
    Qi, Qj : (B, nc, dof) row blocks
    b : (B, nc) right-hand side (base accelerations already moved here)
    g : (B, nc) position-level residual
    gdot : (B, nc) velocity-level residual ``Q dX``
    states : BodyStates
    joint_rows : list of ndarray
    """

    planar: bool
    dof: int
    M: np.ndarray | None
    F: np.ndarray | None
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
        return self.states.r.shape[1] - 1

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


def joint_wrenches(model, states, q, tau):
    """Forces and moments (inertial axes, about the centres of mass) of joint forces.

    The generalized force ``tau_a`` of joint ``a`` acts as the wrench
    ``J (J^T J)^-1 tau_a``, ``J = [A_i k; A_i p]`` (3.101), (3.104), on the child at its joint
    point and the opposite wrench on the parent: its power on any relative motion
    ``[A_i k; A_i p] v_a`` is ``tau_a . v_a``.

    Parameters
    ----------
    states : BodyStates
    q : (B, nq)
    tau : (B, nv)

    Returns
    -------
    F, M : ndarray, shape (B, n + 1, 3)
    """
    B = states.r.shape[0]
    F = np.zeros((B, model.n + 1, 3))
    Mo = np.zeros((B, model.n + 1, 3))
    tau = np.broadcast_to(tau, (B, model.nv))
    q = np.broadcast_to(q, (B, model.nq))
    for j in model.joints:
        if j.nv == 0:
            continue
        ta = tau[:, j.v_slice]
        if not np.any(ta):
            continue
        qa = q[:, j.q_slice]
        Ai = states.A[:, j.parent]
        Jm = np.concatenate([Ai @ j.k(qa), Ai @ j.p(qa)], axis=-2)  # (B, 6, nv)
        JtJ = transpose(Jm) @ Jm
        wrench = mv(Jm, np.linalg.solve(JtJ, ta[..., None])[..., 0])  # J (J^T J)^-1 tau
        f, m = wrench[:, :3], wrench[:, 3:]
        P = states.r[:, j.child] + mv(states.A[:, j.child], j.child_point)
        for body, sign in ((j.child, 1.0), (j.parent, -1.0)):
            F[:, body] += sign * f
            Mo[:, body] += sign * (cross(P - states.r[:, body], f) + m)
    return F, Mo


def _applied(model, prep, states, t, q, qd):
    """Applied wrenches at the body states (q, qd recovered if the loads need them)."""
    if prep.state_loads and q is None:
        q, qd = joint_coordinates(model, states)
    return model_forces.applied_wrenches(model, q, qd=qd, t=t,
                                         poses=(states.r, states.A),
                                         velocities=(states.v, states.omega))


def assemble(model, states, t=0.0, planar=None, joint_wrenches=None, *, q=None, qd=None,
             forces=True):
    """Assemble the equations from absolute body states.

    This is the entry point of absolute-coordinate simulation: the states are whatever the
    integrator holds, the rows measure how far they are from the constraint manifold.

    Parameters
    ----------
    states : BodyStates
    joint_wrenches : (F, M) of shape (B, n + 1, 3) each, optional
        Extra forces and moments (inertial axes, about the centres of mass), e.g. from
        joint forces (:func:`joint_wrenches`).
    q, qd : (B, nq), (B, nv), optional
        The generalized state, if known, for loads that are callables of ``(t, q, qd)``
        (recovered with :func:`joint_coordinates` otherwise).
    forces : bool
        ``False`` evaluates only the rows (``M`` and ``F`` are None): for residuals and
        projection.

    Returns
    -------
    Equations

    Examples
    --------
    >>> import mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> eq = assemble(m, body_states(m, [0.3, 0.2], [1.0, -2.0]))
    >>> eq.nc, float(abs(eq.g).max()) < 1e-15, float(abs(eq.gdot).max()) < 1e-14
    (4, True, True)
    """
    prep = prepare(model)
    planar = resolve_planar(model, planar)
    rowset = prep.rows(planar)
    B = states.r.shape[0]
    n = model.n
    dof = 3 if planar else 6
    nc = rowset.nc
    row_i, row_j, row_joint = (np.zeros(nc, int) for _ in range(3))
    Qi, Qj = np.zeros((B, nc, dof)), np.zeros((B, nc, dof))
    b, g = np.zeros((B, nc)), np.zeros((B, nc))
    for group, g_, Qi_, Qj_, b_ in _evaluate(rowset, states, planar):
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
    M = F = None
    if forces:
        M, F = _mass_and_forces(model, prep, states, t, planar, joint_wrenches, q, qd)
    return Equations(planar, dof, M, F, row_i, row_j, row_joint, Qi, Qj, b, g, gdot, states,
                     rowset.joint_rows)


def _mass_and_forces(model, prep, states, t, planar, extra, q, qd):
    """Body mass matrices (2.5)–(2.9) and the right-hand sides ``F``."""
    n = model.n
    masses, inertias = model.masses(), model.inertias()
    Fw, Mw = _applied(model, prep, states, t, q, qd)
    if extra is not None:
        Fw, Mw = Fw + extra[0], Mw + extra[1]
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
        return M, np.concatenate([Fw[:, 1:, :2], Mw[:, 1:, 2:3]], axis=-1)
    M = np.zeros((n, 6, 6))
    M[:, :3, :3] = masses[:, None, None] * _E
    M[:, 3:, 3:] = inertias
    w = states.w[:, 1:]
    M_body = mv(transpose(states.A[:, 1:]), Mw[:, 1:])
    gyro = cross(w, mv(inertias, w))
    return M, np.concatenate([Fw[:, 1:], M_body - gyro], axis=-1)


def _equations(model, q, qd, tau, t, planar):
    """Equations at checked (B, nq), (B, nv) states; ``tau`` includes the model's
    generalized forces."""
    states = _body_states(model, q, qd, t)
    return assemble(model, states, t, planar, joint_wrenches(model, states, q, tau), q=q, qd=qd)


def _total_tau(model, state):
    return state.tau + model_forces.generalized_forces(model, state.q, state.qd, state.t)


def _checked(model, q, qd, tau, t):
    state = model.check_state(q, qd, tau, t=t)
    if state.qd is None:
        state.qd = np.zeros((state.q.shape[0], model.nv))
    return state


def equations(model, q, qd, tau=None, *, t=0.0, planar=None):
    """Assemble the equations of motion in absolute coordinates at a batch of states.

    Parameters
    ----------
    model : Model
    q, qd : array_like, shapes (..., nq) and (..., nv)
    tau : array_like, shape (..., nv), optional
        Generalized joint forces; the model's joint springs and generalized forces
        (:meth:`mbcourse.Model.generalized_forces`) are added.
    t : float
    planar : bool, optional
        Use the planar form (default: :func:`is_planar`).

    Returns
    -------
    Equations
        Batch flattened to one leading dimension.

    Examples
    --------
    >>> import mbcourse as mb
    >>> eq = equations(mb.models.double_pendulum(), [0.3, 0.2], [1.0, -2.0], planar=False)
    >>> eq.Qi.shape, eq.F.shape
    ((1, 10, 6), (1, 2, 6))
    """
    state = _checked(model, q, qd, tau, t)
    planar = resolve_planar(model, planar)
    with np.errstate(over="ignore", invalid="ignore"):
        return _equations(model, state.q, state.qd, _total_tau(model, state), state.t, planar)


def check_consistency(model, eq, q, tol=1e-8):
    """Refuse states that violate the loop-closing joints (positions or velocities).

    Joints on the spanning tree hold by construction; the others must be satisfied by the
    given ``q`` and ``qd`` (:func:`~mbcourse.cartesian.consistent_state` finds consistent
    ones), and their own coordinates must describe the relative motion of their bodies.
    """
    scale = 1.0 + np.abs(eq.states.r).max()
    bad = np.abs(eq.g) > tol * scale
    level = "position"
    if not bad.any():
        vscale = 1.0 + np.abs(eq.states.v).max() + np.abs(eq.states.w).max() * scale
        bad = np.abs(eq.gdot) > tol * vscale
        level = "velocity"
    advice = ("use mb.cartesian.consistent_state(model, q, qd) for consistent coordinates "
              "(or mb.cartesian.project() for absolute ones)")
    if bad.any():
        b_idx, r_idx = np.argwhere(bad)[0]
        joint = model.joints[eq.row_joint[r_idx]]
        value = (eq.g if level == "position" else eq.gdot)[b_idx, r_idx]
        raise InconsistentStateError(
            f"joint {joint.name!r} is violated at the {level} level by {value:.3g} "
            f"(batch item {b_idx}): the coordinates of a closed loop must close it; {advice}"
        )
    # loop-closing joints: their own coordinates must describe the relative motion
    for a in prepare(model).loop_joints:
        j = model.joints[a]
        st = eq.states
        rot_err, z_err = j.pose_error(q[:, j.q_slice], st.r[:, j.parent], st.A[:, j.parent],
                                      st.r[:, j.child], st.A[:, j.child])
        err = max(rot_err, z_err / scale)
        if err > tol:
            raise InconsistentStateError(
                f"joint {j.name!r} closes a loop, but its coordinates q[{j.q_slice.start}:"
                f"{j.q_slice.stop}] do not match the relative pose of "
                f"{model.bodies[j.parent].name!r} and {model.bodies[j.child].name!r} "
                f"(error {err:.3g}); {advice}"
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
    q, qd : (B, nq), (B, nv)

    Returns
    -------
    ndarray, shape (B, nv)
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
        alpha[:, 1:] = mv(states.A[:, 1:], ddX[..., 3:])
    acc[:, 0] = states.a0
    alpha[:, 0] = mv(states.A[:, 0], states.dw0)
    omega = states.omega
    q = np.broadcast_to(q, (B, model.nq))
    qd = np.broadcast_to(qd, (B, model.nv))
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
        rel_omega = mv(Ai, mv(p, va))
        d_omega = alpha[:, c] - alpha[:, i] - cross(wi, rel_omega) - mv(Ai, w_bias)
        L = mv(Ai, j.parent_point + j.z(qa))
        lc = mv(Ac, j.child_point)
        wc = omega[:, c]
        acc_child_point = acc[:, c] + cross(alpha[:, c], lc) + cross(wc, cross(wc, lc))
        acc_carried = (acc[:, i] + cross(alpha[:, i], L) + cross(wi, cross(wi, L))
                       + 2.0 * cross(wi, mv(Ai, mv(k, va))) + mv(Ai, s_bias))
        d_z = acc_child_point - acc_carried
        AiT = transpose(Ai)
        rhs = np.concatenate([mv(AiT, d_omega), mv(AiT, d_z)], axis=-1)
        Jm = np.concatenate([p, k], axis=-2)  # (B, 6, nv) parent axes
        Jt = transpose(Jm)
        out[:, j.v_slice] = np.linalg.solve(Jt @ Jm, mv(Jt, rhs)[..., None])[..., 0]
    return out


# ------------------------------------------------------------- public API
def _check_options(solver, redundant):
    from .solvers import SOLVERS

    if solver not in SOLVERS:
        raise ShapeError(f"solver must be one of {sorted(SOLVERS)}, got {solver!r}")
    if redundant not in ("raise", "lstsq"):
        raise ShapeError(f"redundant must be 'raise' or 'lstsq', got {redundant!r}")
    return SOLVERS[solver]


def _solve_state(model, state, solver, planar, redundant, check):
    solve_kkt = _check_options(solver, redundant)
    planar = resolve_planar(model, planar)
    eq = _equations(model, state.q, state.qd, _total_tau(model, state), state.t, planar)
    if check:
        check_consistency(model, eq, state.q)
    ddX, lam = solve_kkt(model, eq, redundant=redundant)
    return eq, ddX, lam


@dataclass
class Solution:
    """Result of :func:`solve` (batch flattened to one leading dimension), named like
    :class:`mbcourse.loops.Solution`.

    Attributes
    ----------
    eq : Equations
        The assembled system (2.49) (its arrays: the values at the time of the call).
    ddX : (B, n, dof)
        Body accelerations.
    lam : (B, nc)
        Multipliers with the sign of (2.26): the reactions ``Q^T lam`` are added to the
        applied forces.
    qdd : (B, nv)
        The joints' generalized accelerations (:func:`joint_accelerations`).

    ``eq, ddX, lam = solve(...)`` (the tuple of earlier releases) still works with a
    ``DeprecationWarning``.
    """

    eq: Equations
    ddX: np.ndarray
    lam: np.ndarray
    qdd: np.ndarray

    def _tuple(self):
        warnings.warn("mb.cartesian.solve returns a Solution: unpacking it as (eq, ddX, lam) "
                      "is deprecated; use its fields .eq, .ddX, .lam (and .qdd)",
                      DeprecationWarning, stacklevel=3)
        return self.eq, self.ddX, self.lam

    def __iter__(self):
        return iter(self._tuple())

    def __getitem__(self, index):
        return self._tuple()[index]


def solve(model, q, qd, tau=None, *, t=0.0, solver="dense", planar=None, redundant="raise",
          check=True):
    """Solve the KKT system (2.49): body accelerations and multipliers.

    Parameters as :func:`forward_dynamics`; ``check=False`` skips the test that ``q, qd``
    close every loop.

    Returns
    -------
    Solution
        ``eq``, ``ddX`` (B, n, dof), ``lam`` (B, nc) with the sign of (2.26) and the joints'
        ``qdd`` (B, nv); the batch is flattened to one leading dimension.

    Examples
    --------
    >>> import mbcourse as mb
    >>> s = solve(mb.models.double_pendulum(), [0.3, 0.2], [1.0, -2.0])
    >>> s.ddX.shape, s.lam.shape, s.qdd.shape
    ((1, 2, 3), (1, 4), (1, 2))
    """
    state = _checked(model, q, qd, tau, t)
    with np.errstate(over="ignore", invalid="ignore"):
        eq, ddX, lam = _solve_state(model, state, solver, planar, redundant, check)
        qdd = joint_accelerations(model, eq.states, ddX, state.q, state.qd, eq.planar)
    return Solution(eq, ddX, lam, qdd)


@coupled("forward")
def forward_dynamics(model, q, qd, tau=None, *, t=0.0, solver="dense", planar=None,
                     redundant="raise", compiled=None):
    """Generalized accelerations from the Cartesian formulation (the **contract** function).

    The model is taken to absolute body coordinates, every joint becomes constraint rows,
    the KKT system (2.49) is solved with the chosen solver and the body accelerations are
    taken back to the joints' generalized accelerations.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd : array_like, shape (..., nv)
    tau : array_like, shape (..., nv), optional
        Generalized forces along the joint coordinates (torques, forces); the model's joint
        springs and generalized forces are added.
    t : float
        Time (for prescribed base motion and time-dependent loads).
    solver : {"dense", "schur", "ldlt"}
        ``"dense"``: the whole KKT matrix with NumPy; ``"schur"``: the range-space method
        (2.51)–(2.54) with a Cholesky factor of ``Q M^-1 Q^T``; ``"ldlt"``: Baraff's block
        ``LDL^T`` in tree order without fill-in (2.55)–(2.61), for tree structures.
    planar : bool, optional
        Force the planar (True) or spatial (False) form; default automatic.
    redundant : {"raise", "lstsq"}
        What to do with redundant constraint rows (e.g. a planar loop modelled with spatial
        revolute joints): raise :class:`~mbcourse.errors.SingularSystemError` naming the
        joints, or use minimum-norm multipliers (accelerations stay unique).
    compiled : bool, optional
        With ``solver="ldlt"`` and ``planar=None``, ``None`` (default) runs the compiled
        kernel (:mod:`mbcourse.kernels.cartesian`: the same rows in the same axes as the
        spatial form, the KKT system by Baraff's ``LDL^T`` (2.55)-(2.61)) when the model
        allows (:func:`mbcourse.kernels.model_data`); ``False`` always runs this module's
        NumPy route; ``True`` refuses (``ModelError``) a model or solver the kernel cannot
        run.

    Returns
    -------
    ndarray, shape (..., nv)
        The batch shape of the inputs.

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
    _check_options(solver, redundant)
    out, state = route(model, "cartesian", q, qd, tau, t, what="mb.cartesian.forward_dynamics",
                       check=lambda: _checked(model, q, qd, tau, t), compiled=compiled,
                       applies=solver == "ldlt" and planar is None,
                       generalized=lambda s: model_forces.callable_forces(model, s.q, s.qd, s.t))
    if out is not None:
        return out
    if state is None:
        state = _checked(model, q, qd, tau, t)
    with np.errstate(over="ignore", invalid="ignore"):
        eq, ddX, _ = _solve_state(model, state, solver, planar, redundant, True)
        out = joint_accelerations(model, eq.states, ddX, state.q, state.qd, eq.planar)
    return state.result(out, "mb.cartesian.forward_dynamics")


def reactions(model, q, qd, tau=None, *, t=0.0, solver="dense", planar=None,
              redundant="raise"):
    """Reaction force and moment of every joint, from the multipliers (2.23)–(2.26).

    For joint ``a`` the reaction acting on the child ``i-(a)`` is reduced to the joint point;
    the parent feels the opposite. Values are given in child and in parent axes.

    Returns
    -------
    dict
        ``{joint name: {"force_child": (..., 3), "moment_child": (..., 3),
        "force_parent": (..., 3), "moment_parent": (..., 3)}}`` with the batch shape of the
        inputs (moment about the joint point; planar models give zero out-of-plane
        components from their rows).

    Examples
    --------
    >>> import mbcourse as mb
    >>> m = mb.Model(gravity=(0, -9.81, 0))
    >>> _ = m.add_body("bob", 2.0, [1e-3, 1e-3, 1e-3])
    >>> _ = m.add_joint("pin", "revolute", "ground", "bob", child_point=(0, 1, 0), axis=(0, 0, 1))
    >>> reactions(m, [0.0], [0.0])["pin"]["force_parent"].round(9) + 0.0   # hangs still
    array([ 0.  , 19.62,  0.  ])
    """
    state = _checked(model, q, qd, tau, t)
    with np.errstate(over="ignore", invalid="ignore"):
        eq, ddX, lam = _solve_state(model, state, solver, planar, redundant, True)
    st = eq.states
    B = lam.shape[0]
    out = {}
    for j in model.joints:
        rows = eq.joint_rows[j.index]
        Ac, Ai = st.A[:, j.child], st.A[:, j.parent]
        wrench = (lam[:, None, rows] @ eq.Qj[:, rows])[:, 0]  # sum of lam Q_j over the rows
        force = np.zeros((B, 3))
        moment_c = np.zeros((B, 3))  # about C_child, inertial axes
        if eq.planar:
            force[:, :2], moment_c[:, 2] = wrench[:, :2], wrench[:, 2]
        else:
            force, moment_c = wrench[:, :3], mv(Ac, wrench[:, 3:])
        moment_P = moment_c - cross(mv(Ac, j.child_point), force)
        to_child, to_parent = transpose(Ac), transpose(Ai)
        what = f"mb.cartesian.reactions (joint {j.name!r})"
        out[j.name] = {
            "force_child": state.result(mv(to_child, force), what),
            "moment_child": state.result(mv(to_child, moment_P), what),
            "force_parent": state.result(mv(to_parent, force), what),
            "moment_parent": state.result(mv(to_parent, moment_P), what),
        }
    return out
