"""Kinematics of any point of any body: poses, velocities, accelerations and Jacobians.

What a new user of a robotics library expects first: where is this point of this body, how
fast does it move, and which matrix maps the joint speeds to its motion. Every function
takes the same :class:`~mbcourse.Model` as the formulations, a body (name, index or
:class:`~mbcourse.model.Body`) and a point fixed in that body.

Conventions
-----------
* ``point`` is given in **body axes, from the body's centre of mass** (the Model's
  convention for ``child_point`` and for loads); the default ``(0, 0, 0)`` is the centre of
  mass. For the base (body 0) it is a point of the base frame.
* Every result is in **inertial (world) axes**. Rotations map body axes to world axes
  (``A`` of :meth:`~mbcourse.Model.body_poses`).
* ``qd`` and ``qdd`` are the generalized speeds and their rates, of length ``nv``: for
  spherical and free joints these are angular velocities, not quaternion rates (``nq !=
  nv``; see :meth:`~mbcourse.Model.qdot`).
* The point Jacobian ``J`` (``jacobian``; not the "spatial Jacobian" of screw theory, whose
  linear rows give the velocity of the point at the world origin) has shape ``(..., 6, nv)``; **rows 0-2 give the
  linear velocity of the point, rows 3-5 the angular velocity of the body**, both in world
  axes: ``[v_P; omega] = J qd`` (the "local world aligned" Jacobian of Pinocchio, the
  ``(Phi^T, -(pT)^T)`` rows of Yudintsev (3.163), (3.122) for a point other than the centre
  of mass). ``jacobian_dot`` is its total time derivative, so ``[a_P; eps] = J qdd + Jdot qd``.
* With a prescribed base motion (:meth:`~mbcourse.Model.set_base_motion`) the velocities and
  accelerations include the base's motion, and ``J`` is still the derivative with respect to
  ``qd``: ``v_P = J qd + v_0 + omega_0 x (P - r_0)``.
* Closed loops: like :meth:`~mbcourse.Model.body_poses`, the spanning tree is walked (the
  cut joints are ignored; give a state that closes the loops).
* All functions broadcast over leading batch dimensions of ``q``, ``qd``, ``qdd``.

How it is computed
------------------
One walk along the spanning-tree path from the base to the body, joint by joint, with the
joint's own ``R_a``, ``z_a``, ``p``, ``k`` and bias terms (Yudintsev (3.101)-(3.106)): the
pose, velocity and acceleration recursions are those of :meth:`~mbcourse.Model.body_poses`
and :meth:`~mbcourse.Model.body_velocities` (differentiated once more). The Jacobian column of
a joint ``a`` whose parent has orientation ``A_{i+}`` and whose joint point on the child is
``O_a`` is ``omega: s A_{i+} p``, ``v_P: s A_{i+} k + (s A_{i+} p) x (P - O_a)`` with ``s =
+1`` when the walk goes from parent to child and ``-1`` when it walks the joint backwards.
``jacobian_dot`` differentiates these columns in time. The velocities and accelerations do
**not** use the Jacobians, so ``J qd`` and ``J qdd + Jdot qd`` are independent checks.

Examples
--------
>>> import numpy as np, mbcourse as mb
>>> m = mb.models.double_pendulum()
>>> P, R = mb.kinematics.frame_pose(m, [0.0, 0.0], "rod2", point=(0.5, 0.0, 0.0))
>>> P.round(12) + 0.0                       # the tip of the lower rod
array([2., 0., 0.])
>>> J = mb.kinematics.jacobian(m, [0.0, 0.0], "rod2", point=(0.5, 0.0, 0.0))
>>> J.round(12)[[1, 5]] + 0.0                # v_y of the tip and omega_z, per joint rate
array([[2., 1.],
       [1., 1.]])
"""

from __future__ import annotations

import numbers

import numpy as np

from .errors import ModelError, ShapeError
from .model import Body, Model
from .spatial import cross, mv, skew, transpose
from .coupling import coupled

__all__ = ["frame_pose", "point_velocity", "point_acceleration", "frame_velocity",
           "frame_acceleration", "jacobian", "jacobian_dot"]


# ------------------------------------------------------------------ input checks
def _body_index(model, body, fn):
    """The index of ``body`` (name, index or Body of this model), or ModelError."""
    if not isinstance(model, Model):
        raise ModelError(f"{fn}: model must be an mbcourse.Model (the first argument: "
                         f"{fn}(model, q, ..., body, point)), got {type(model).__name__}")
    names = [b.name for b in model.bodies]
    if isinstance(body, Body) and body.index < len(names) and model.bodies[body.index] is body:
        return body.index
    if isinstance(body, str) and body in names:
        return names.index(body)
    if isinstance(body, (numbers.Integral, np.integer)) and not isinstance(body, bool) \
            and 0 <= int(body) < len(names):
        return int(body)
    raise ModelError(f"{fn}: unknown body {body!r}; known bodies: {names} (or their indices "
                     f"0..{len(names) - 1})")


def _point(model, point, index, fn):
    """A finite point of shape (3,) (body axes, from the centre of mass), or ShapeError."""
    what = f"{fn}: point on body {model.bodies[index].name!r}"
    try:
        complex_given = np.iscomplexobj(point)
        arr = None if complex_given else np.asarray(point, dtype=float)
    except (TypeError, ValueError):
        raise ShapeError(f"{what} must be 3 numbers (body axes, from the centre of mass), "
                         f"got {point!r}") from None
    if complex_given:
        raise ShapeError(f"{what} must be 3 real numbers (body axes, from the centre of mass), "
                         f"got complex {point!r}")
    if arr.shape != (3,):
        raise ShapeError(f"{what} must have shape (3,) (x, y, z in body axes, from the centre "
                         f"of mass), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ShapeError(f"{what} must be finite, got {arr.tolist()}")
    return arr


def _path(model, index):
    """The spanning-tree steps ``(joint, forward)`` from the base out to body ``index``
    (prepared once per model version)."""
    def build():
        reach = {}
        for joint, forward in model.tree_traversal():
            reach[joint.child if forward else joint.parent] = (joint, forward)
        steps, b = [], index
        while b != 0:
            joint, forward = reach[b]
            steps.append((joint, forward))
            b = joint.parent if forward else joint.child
        return tuple(reversed(steps))
    if index == 0:
        return ()
    return model.prepared(("kinematics.path", index), build)


def _setup(model, fn, body, point, q, qd=None, qdd=None, t=0.0):
    index = _body_index(model, body, fn)
    rho = _point(model, point, index, fn)
    state = model.check_state(q, qd, qdd=qdd, t=t)
    return index, rho, state


# ------------------------------------------------------------------- the walk
def _walk(model, index, state, order):
    """Walk the path from the base to body ``index``.

    ``order`` 0: poses; 1: and velocities; 2: and accelerations (of the body's centre of
    mass). Returns the body's ``(r, A, vel, omega, acc, alpha)`` (missing orders ``None``)
    and, per joint of the path, ``(joint, s, A_par, O, Pw, Kw, omega_par, vO, Pdot, Kdot)``
    (velocity entries ``None`` below order 1), all of one batch axis ``B``.
    """
    q, v, vd = state.q, state.qd, state.qdd
    B = q.shape[0]
    r, A, vel, om, acc, al = _base_state(model, state.t, B, order)
    steps = []
    for joint, forward in _path(model, index):
        qa = q[:, joint.q_slice]
        step, r, A = _step_pose(joint, forward, qa, r, A, B)
        if order >= 1:
            va = v[:, joint.v_slice]
            vel, om = _step_velocity(step, qa, va, vel, om)
        if order >= 2:
            acc, al = _step_acceleration(step, qa, va, vd[:, joint.v_slice], acc, al)
        steps.append(step)
    return (r, A, vel, om, acc, al), steps


def _base_state(model, t, B, order):
    """The base's ``(r, A, vel, omega, acc, alpha)`` at time ``t`` (orders above ``order`` None)."""
    base = model.base_motion.state(t) if model.base_motion else None
    zero = np.zeros(3)

    def entry(key, default):
        """The base's ``key`` entry (``default`` without a base motion), one per batch row."""
        return np.broadcast_to(default if base is None else base[key],
                               (B,) + np.shape(default)).copy()

    r, A = entry("position", zero), entry("orientation", np.eye(3))
    vel = entry("velocity", zero) if order >= 1 else None
    om = entry("angular_velocity", zero) if order >= 1 else None
    acc = entry("acceleration", zero) if order >= 2 else None
    al = entry("angular_acceleration", zero) if order >= 2 else None
    return r, A, vel, om, acc, al


def _step_pose(joint, forward, qa, r, A, B):
    """One joint of the path, poses: the step's record, the outer body's ``r`` and ``A``.

    ``L`` is the lever from the parent's centre to the joint point, ``C`` from the child's
    centre to it (both world axes); walking backwards the inner body is the child.
    """
    R = joint.rotation(qa)
    lever = joint.parent_point + joint.z(qa)  # parent axes
    if forward:  # inner body is the parent
        A_par, A_ch = A, A @ R
        L = mv(A_par, lever)
        C = mv(A_ch, np.broadcast_to(joint.child_point, (B, 3)))
        O = r + L
        r = O - C
    else:  # inner body is the child: walk the joint backwards
        A_ch, A_par = A, A @ transpose(R)
        L = mv(A_par, lever)
        C = mv(A_ch, np.broadcast_to(joint.child_point, (B, 3)))
        O = r + C
        r = O - L
    A = A_ch if forward else A_par
    s = 1.0 if forward else -1.0
    Pw, Kw = A_par @ joint.p(qa), A_par @ joint.k(qa)
    step = dict(joint=joint, s=s, A_par=A_par, O=O, Pw=Pw, Kw=Kw, L=L, C=C)
    return step, r, A


def _step_velocity(step, qa, va, vel, om):
    """One joint of the path, velocities: fills the step's ``om_par, vO, Pdot, Kdot`` (and the
    relative motion) and returns the outer body's ``vel`` and ``omega``."""
    joint, A_par, L, C = step["joint"], step["A_par"], step["L"], step["C"]
    rel_om, rel_v = mv(step["Pw"], va), mv(step["Kw"], va)
    if step["s"] > 0:
        om_par = om
        om_ch = om_par + rel_om
        vO = vel + cross(om_par, L) + rel_v
        vel = vO - cross(om_ch, C)
        om = om_ch
    else:
        om_ch = om
        vO = vel + cross(om_ch, C)
        om_par = om_ch - rel_om
        vel = vO - rel_v - cross(om_par, L)
        om = om_par
    pdot, kdot = joint.rates(qa, va)
    step.update(om_par=om_par, vO=vO, Pdot=A_par @ pdot, Kdot=A_par @ kdot, om_ch=om_ch,
                rel_om=rel_om, rel_v=rel_v)
    return vel, om


def _step_acceleration(step, qa, va, aa, acc, al):
    """One joint of the path, accelerations: the outer body's ``acc`` and ``alpha``."""
    joint, A_par, L, C = step["joint"], step["A_par"], step["L"], step["C"]
    om_par, om_ch = step["om_par"], step["om_ch"]
    w_a, s_a = joint.bias(qa, va)
    # d/dt of the relative angular velocity and of the lever's local motion
    rel_al = cross(om_par, step["rel_om"]) + mv(step["Pw"], aa) + mv(A_par, w_a)
    rel_acc = 2 * cross(om_par, step["rel_v"]) + mv(step["Kw"], aa) + mv(A_par, s_a)
    if step["s"] > 0:
        aO = acc + cross(al, L) + cross(om_par, cross(om_par, L)) + rel_acc
        al = al + rel_al
        acc = aO - cross(al, C) - cross(om_ch, cross(om_ch, C))
    else:
        aO = acc + cross(al, C) + cross(om_ch, cross(om_ch, C))
        al = al - rel_al
        acc = aO - rel_acc - cross(al, L) - cross(om_par, cross(om_par, L))
    return acc, al


def _point_motion(body_state, rho):
    """Position, velocity, acceleration of the point ``rho`` (body axes) and the body's
    rotation, angular velocity and angular acceleration."""
    r, A, vel, om, acc, al = body_state
    lever = mv(A, np.broadcast_to(rho, r.shape))
    P = r + lever
    vP = None if vel is None else vel + cross(om, lever)
    aP = None if acc is None else acc + cross(al, lever) + cross(om, cross(om, lever))
    return P, A, vP, om, aP, al


def _columns(model, steps, P, B, vP=None):
    """The Jacobian (B, 6, nv) and, given the point's velocity, its time derivative."""
    J = np.zeros((B, 6, model.nv))
    Jd = None if vP is None else np.zeros((B, 6, model.nv))
    for st in steps:
        cols = st["joint"].v_slice
        s = st["s"]
        ang = s * st["Pw"]
        d = skew(P - st["O"])
        J[:, 3:, cols] = ang
        J[:, :3, cols] = s * st["Kw"] - d @ ang
        if vP is not None:
            W = skew(st["om_par"])
            ang_dot = s * (W @ st["Pw"] + st["Pdot"])
            Jd[:, 3:, cols] = ang_dot
            Jd[:, :3, cols] = (s * (W @ st["Kw"] + st["Kdot"]) - d @ ang_dot
                               - skew(vP - st["vO"]) @ ang)
    return J, Jd


# ------------------------------------------------------------------ public API
@coupled("state")
def frame_pose(model, q, body, point=(0.0, 0.0, 0.0), t=0.0):
    """World position of a body point and the body's orientation.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    body : str, int or Body
        The body (``"ground"`` or 0 is the base).
    point : array_like, shape (3,)
        The point in body axes, from the body's centre of mass (default: the centre of mass).
    t : float
        Time (matters only with a prescribed base motion).

    Returns
    -------
    position : ndarray, shape (..., 3)
        The point in world axes.
    rotation : ndarray, shape (..., 3, 3)
        Body axes to world axes (``x_world = rotation @ x_body``).

    Raises
    ------
    ModelError
        An unknown body (the message lists the known ones).
    ShapeError
        A ``point`` that is not 3 finite numbers, a ``q`` of the wrong length or with NaN.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> P, R = frame_pose(m, [np.pi / 2, 0.0], "rod1", point=(0.5, 0.0, 0.0))
    >>> P.round(12) + 0.0                    # the elbow, with the upper rod turned up
    array([0., 1., 0.])
    >>> frame_pose(m, [[0.0, 0.0]] * 4, "rod2")[1].shape      # batched
    (4, 3, 3)
    """
    index, rho, state = _setup(model, "frame_pose", body, point, q, t=t)
    P, A, *_ = _point_motion(_walk(model, index, state, 0)[0], rho)
    return state.result(P, "frame_pose"), state.result(A, "frame_pose")


@coupled("state")
def frame_velocity(model, q, qd, body, point=(0.0, 0.0, 0.0), t=0.0):
    """Linear velocity of a body point and angular velocity of the body, world axes.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd : array_like, shape (..., nv)
        Generalized speeds (angular velocities for spherical and free joints).
    body : str, int or Body
    point : array_like, shape (3,)
        Body axes, from the centre of mass.
    t : float

    Returns
    -------
    linear, angular : ndarray, shape (..., 3)

    Examples
    --------
    >>> import mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> v, w = frame_velocity(m, [0.0, 0.0], [1.0, 0.0], "rod2", point=(0.5, 0.0, 0.0))
    >>> v.round(12) + 0.0, w.round(12) + 0.0     # the tip 2 m from the pivot
    (array([0., 2., 0.]), array([0., 0., 1.]))
    """
    return _velocity(model, q, qd, body, point, t, "frame_velocity")


def _velocity(model, q, qd, body, point, t, fn):
    index, rho, state = _setup(model, fn, body, point, q, qd, t=t)
    _, _, vP, om, _, _ = _point_motion(_walk(model, index, state, 1)[0], rho)
    return state.result(vP, fn), state.result(om, fn)


@coupled("state")
def point_velocity(model, q, qd, body, point=(0.0, 0.0, 0.0), t=0.0):
    """Velocity of a point fixed in a body, world axes, shape (..., 3).

    See :func:`frame_velocity` for the parameters (this is its linear part).

    Examples
    --------
    >>> import mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> point_velocity(m, [0.0, 0.0], [0.0, 2.0], "rod2", (0.5, 0.0, 0.0)).round(12) + 0.0
    array([0., 2., 0.])
    """
    return _velocity(model, q, qd, body, point, t, "point_velocity")[0]


@coupled("state")
def frame_acceleration(model, q, qd, qdd, body, point=(0.0, 0.0, 0.0), t=0.0):
    """Linear acceleration of a body point and angular acceleration of the body, world axes.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd, qdd : array_like, shape (..., nv)
        Generalized speeds and their time derivatives.
    body : str, int or Body
    point : array_like, shape (3,)
        Body axes, from the centre of mass.
    t : float

    Returns
    -------
    linear, angular : ndarray, shape (..., 3)

    Examples
    --------
    A point 2 m from the pivot turning at 1 rad/s accelerates toward it at 2 m/s^2:

    >>> import mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> a, e = frame_acceleration(m, [0.0, 0.0], [1.0, 0.0], [0.0, 0.0], "rod2",
    ...                           point=(0.5, 0.0, 0.0))
    >>> a.round(12) + 0.0, e.round(12) + 0.0
    (array([-2.,  0.,  0.]), array([0., 0., 0.]))
    """
    return _acceleration(model, q, qd, qdd, body, point, t, "frame_acceleration")


def _acceleration(model, q, qd, qdd, body, point, t, fn):
    index, rho, state = _setup(model, fn, body, point, q, qd, qdd, t=t)
    *_, aP, al = _point_motion(_walk(model, index, state, 2)[0], rho)
    return state.result(aP, fn), state.result(al, fn)


@coupled("state")
def point_acceleration(model, q, qd, qdd, body, point=(0.0, 0.0, 0.0), t=0.0):
    """Acceleration of a point fixed in a body, world axes, shape (..., 3).

    See :func:`frame_acceleration` for the parameters (this is its linear part).

    Examples
    --------
    >>> import mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> point_acceleration(m, [0.0, 0.0], [0.0, 0.0], [1.0, 0.0], "rod1").round(12) + 0.0
    array([0. , 0.5, 0. ])
    """
    return _acceleration(model, q, qd, qdd, body, point, t, "point_acceleration")[0]


@coupled("columns")
def jacobian(model, q, body, point=(0.0, 0.0, 0.0), t=0.0):
    """Jacobian of a body point in world axes: ``[v_P; omega] = J qd``, shape (..., 6, nv).

    Rows 0-2: the linear velocity of the point; rows 3-5: the angular velocity of the body;
    both in world axes. Column ``k`` is the motion per unit of the generalized speed ``k``
    (``model.qd_names[k]``); joints off the path from the base to the body give zero columns.
    With a prescribed base motion, ``J qd`` leaves out the base's own motion.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    body : str, int or Body
    point : array_like, shape (3,)
        Body axes, from the centre of mass.
    t : float

    Returns
    -------
    ndarray, shape (..., 6, nv)

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> J = jacobian(m, [0.3, -0.2], "rod2", point=(0.5, 0.0, 0.0))
    >>> qd = np.array([1.0, 2.0])
    >>> bool(np.allclose(J @ qd, np.concatenate(frame_velocity(m, [0.3, -0.2], qd, "rod2",
    ...                                                         point=(0.5, 0.0, 0.0)))))
    True
    """
    index, rho, state = _setup(model, "jacobian", body, point, q, t=t)
    body_state, steps = _walk(model, index, state, 0)
    P = _point_motion(body_state, rho)[0]
    return state.result(_columns(model, steps, P, P.shape[0])[0], "jacobian")


@coupled("columns")
def jacobian_dot(model, q, qd, body, point=(0.0, 0.0, 0.0), t=0.0):
    """Time derivative of :func:`jacobian` along the motion, shape (..., 6, nv).

    ``[a_P; eps] = J qdd + Jdot qd`` (plus the base's own acceleration terms when a base
    motion is prescribed; ``Jdot`` is the total derivative, base rotation included).

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd : array_like, shape (..., nv)
    body : str, int or Body
    point : array_like, shape (3,)
        Body axes, from the centre of mass.
    t : float

    Returns
    -------
    ndarray, shape (..., 6, nv)

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> q, qd, qdd = [0.3, -0.2], np.array([1.0, 2.0]), np.array([0.5, -1.0])
    >>> a = (jacobian(m, q, "rod2") @ qdd + jacobian_dot(m, q, qd, "rod2") @ qd)
    >>> bool(np.allclose(a, np.concatenate(frame_acceleration(m, q, qd, qdd, "rod2"))))
    True
    """
    index, rho, state = _setup(model, "jacobian_dot", body, point, q, qd, t=t)
    body_state, steps = _walk(model, index, state, 1)
    P, _, vP, *_ = _point_motion(body_state, rho)
    return state.result(_columns(model, steps, P, P.shape[0], vP)[1], "jacobian_dot")
