"""Positions, orientations and velocities of the bodies of a model: the unchecked cores.

A :class:`~mbcourse.model.Model` describes the system; these functions evaluate it at a state
that was **already checked** (by :mod:`mbcourse.state`, once, at the public entry). This is
the split of Pinocchio's ``Model``/``Data`` (``forwardKinematics(model, data, q, v)``) and of
spatial_v2's ``model`` + ``jcalc``: each joint contributes its ``R_a``, ``z_a``, ``p``, ``k``
(:mod:`mbcourse.joints`) and the recursion here walks the spanning tree from the base
(Yudintsev (3.123): ``A_{i-} = A_{i+} G_a^T``; (3.104), (3.101) for the velocities).

:meth:`Model.body_poses <mbcourse.Model.body_poses>`, :meth:`~mbcourse.Model.body_velocities`,
:meth:`~mbcourse.Model.qdot` and :meth:`~mbcourse.Model.normalize_q` are the checked wrappers;
formulations, which have checked their state already, call these.

Examples
--------
>>> import numpy as np, mbcourse as mb
>>> from mbcourse import poses
>>> m = mb.models.double_pendulum()
>>> q = m.check_q([np.pi / 2, 0.0])            # the one check, then the core
>>> r, A = poses.body_poses(m, q)
>>> np.round(r[2], 12) + 0.0                   # centre of the second rod, straight up
array([0. , 1.5, 0. ])
"""

from __future__ import annotations

import numpy as np

from .joints import normalize_quaternions
from .spatial import cross
from .coupling import coupled

__all__ = ["body_poses", "body_velocities", "qdot", "normalize_q"]

_EYE = np.eye(3)


@coupled("state")
def body_poses(model, q, t=0.0):
    """Centre-of-mass positions ``r`` (..., n + 1, 3) and orientations ``A``
    (..., n + 1, 3, 3) of all bodies (base included) at a checked ``q`` (..., nq)."""
    batch = q.shape[:-1]
    r = np.zeros(batch + (model.n + 1, 3))
    A = np.zeros(batch + (model.n + 1, 3, 3))
    base = model.base_motion.state(t) if model.base_motion else None
    r[..., 0, :] = 0.0 if base is None else base["position"]
    A[..., 0, :, :] = _EYE if base is None else base["orientation"]
    for joint, forward in model.tree_traversal():
        qa = q[..., joint.q_slice]
        R = joint.rotation(qa)
        lever = joint.parent_point + joint.z(qa)
        i, c = joint.parent, joint.child
        if forward:  # parent known
            A[..., c, :, :] = A[..., i, :, :] @ R
            r[..., c, :] = (r[..., i, :] + (A[..., i, :, :] @ lever[..., None])[..., 0]
                            - (A[..., c, :, :] @ joint.child_point[..., None])[..., 0])
        else:  # child known: walk the joint backwards
            A[..., i, :, :] = A[..., c, :, :] @ np.swapaxes(R, -1, -2)
            r[..., i, :] = (r[..., c, :] + (A[..., c, :, :] @ joint.child_point[..., None])[..., 0]
                            - (A[..., i, :, :] @ lever[..., None])[..., 0])
    return r, A


@coupled("state")
def body_velocities(model, q, qd, t=0.0, A=None):
    """Centre-of-mass velocities ``vel`` and angular velocities ``omega`` (..., n + 1, 3),
    inertial axes, at a checked state; ``A`` are the orientations of :func:`body_poses`
    when already at hand."""
    if A is None:
        A = body_poses(model, q, t)[1]
    batch = np.broadcast_shapes(q.shape[:-1], qd.shape[:-1])
    vel = np.zeros(batch + (model.n + 1, 3))
    omega = np.zeros(batch + (model.n + 1, 3))
    if model.base_motion:
        base = model.base_motion.state(t)
        vel[..., 0, :] = base["velocity"]
        omega[..., 0, :] = base["angular_velocity"]
    for joint, forward in model.tree_traversal():
        qa, va = q[..., joint.q_slice], qd[..., joint.v_slice]
        i, c = joint.parent, joint.child
        Ai = A[..., i, :, :]
        rel_omega = (Ai @ (joint.p(qa) @ va[..., None]))[..., 0]
        rel_vel = (Ai @ (joint.k(qa) @ va[..., None]))[..., 0]
        lever_i = (Ai @ (joint.parent_point + joint.z(qa))[..., None])[..., 0]
        lever_c = (A[..., c, :, :] @ joint.child_point[..., None])[..., 0]
        if forward:
            omega[..., c, :] = omega[..., i, :] + rel_omega
            vel[..., c, :] = (vel[..., i, :] + cross(omega[..., i, :], lever_i) + rel_vel
                              - cross(omega[..., c, :], lever_c))
        else:
            omega[..., i, :] = omega[..., c, :] - rel_omega
            vel[..., i, :] = (vel[..., c, :] + cross(omega[..., c, :], lever_c) - rel_vel
                              - cross(omega[..., i, :], lever_i))
    return vel, omega


@coupled("q")
def qdot(model, q, qd):
    """``dq/dt`` (..., nq) at a checked state (differs from ``qd`` for quaternions)."""
    out = np.empty(np.broadcast_shapes(q.shape[:-1], qd.shape[:-1]) + (model.nq,))
    for j in model.joints:
        out[..., j.q_slice] = j.qdot(q[..., j.q_slice], qd[..., j.v_slice])
    return out


@coupled("q")
def normalize_q(model, q):
    """Scale the quaternions of a real finite ``q`` (..., nq) to unit length (a zero one is
    refused, naming the joint); returns a new array."""
    q = np.array(q, dtype=float)
    joints = model.joints
    for j in joints:
        if j.quaternion is not None:
            s = slice(j.q_slice.start + j.quaternion.start, j.q_slice.start + j.quaternion.stop)
            norm = np.linalg.norm(q[..., s], axis=-1, keepdims=True)
            q[..., s] /= np.where(norm > 0, norm, 1.0)  # a zero one stays zero: refused
    return normalize_quaternions(joints, q, model.q_names)
