"""Applied forces of a model at a state: the unchecked cores.

The force elements of a :class:`~mbcourse.model.Model` (gravity, loads of ``add_force``,
spring-dampers of ``add_spring`` and ``add_joint_spring``, ``add_generalized_force``
callables, :mod:`mbcourse.elements`) describe; these functions evaluate them at a state that
was **already checked** once at the public entry (:mod:`mbcourse.state`) -- the split of
Pinocchio's ``Model``/``Data`` and of spatial_v2's ``model`` + ``jcalc``.

* :func:`applied_wrenches` -- resultant force and moment about each centre of mass (inertial
  axes) of gravity, loads and spring-dampers: the book's ``F_i``, ``M_i``;
* :func:`generalized_forces` -- joint springs and control laws, added to every ``tau``
  (:func:`callable_forces`: the control laws alone);
* :func:`damping_power` -- the power of every damper (``d(T + U)/dt`` along a motion);
* :func:`spring_geometry`, :func:`spring_tension` -- one spring's lever arms, ``d``, tension.

``Model.applied_wrenches``, ``Model.generalized_forces`` and ``Model.damping_power`` are the
checked wrappers; formulations, which have checked their state already, call these.

Examples
--------
>>> import mbcourse as mb
>>> from mbcourse import forces
>>> m = mb.models.double_pendulum()
>>> q = m.check_q([0.3, 0.2])
>>> F, M = forces.applied_wrenches(m, q)
>>> F[:, 1].round(4).tolist()                 # gravity on the base (none) and the two rods
[0.0, -9.81, -9.81]
"""

from __future__ import annotations

import numpy as np

from .errors import ModelError, ShapeError, SingularSystemError
from .poses import body_poses, body_velocities
from .spatial import cross
from .coupling import coupled

__all__ = ["applied_wrenches", "generalized_forces", "callable_forces", "damping_power",
           "spring_geometry", "spring_tension", "evaluate"]


def evaluate(fn, t, q, qd, shape, what):
    """A constant or ``f(t, q, qd)`` at a state; batched states call ``f`` once per item with
    single ``q`` (nq,) and ``qd`` (nv,). Returns (..., *shape); a failing call or a result of
    the wrong shape is named ``what``'s fault."""
    batch = q.shape[:-1]
    if not callable(fn):
        return np.broadcast_to(fn, batch + shape)
    B = int(np.prod(batch, dtype=int))
    qf = q.reshape(B, q.shape[-1])
    qdf = qd.reshape(B, qd.shape[-1])
    out = np.empty((qf.shape[0],) + shape)
    for b in range(qf.shape[0]):
        try:
            val = np.asarray(fn(t, qf[b], qdf[b]), dtype=float)
        except Exception as exc:
            raise ModelError(f"{what}: calling it at t={t} failed: {exc!r}") from exc
        if val.shape != shape or not np.all(np.isfinite(val)):
            raise ShapeError(f"{what} must return a finite array of shape {shape}, got "
                             f"{np.array2string(val, precision=4)} at t={t}")
        out[b] = val
    return out.reshape(batch + shape)


def spring_geometry(s, r, A, vel=None, omega=None):
    """Spring ``s``'s attachment lever arms (inertial axes) and ``d = P_b - P_a``; with
    velocities also ``dd/dt``."""
    la = (A[..., s.body_a, :, :] @ s.point_a[:, None])[..., 0]
    lb = (A[..., s.body_b, :, :] @ s.point_b[:, None])[..., 0]
    d = r[..., s.body_b, :] + lb - r[..., s.body_a, :] - la
    if vel is None:
        return la, lb, d
    dd = (vel[..., s.body_b, :] + cross(omega[..., s.body_b, :], lb)
          - vel[..., s.body_a, :] - cross(omega[..., s.body_a, :], la))
    return la, lb, d, dd


def spring_tension(s, d, dd):
    """Tension ``T``, unit direction ``u`` from ``a`` to ``b`` and length ``L``; refuses
    coinciding points where the direction matters."""
    L = np.linalg.norm(d, axis=-1)
    scale = 1.0 + np.abs(d).max(initial=0.0)
    if np.any(L <= 1e-12 * scale) and (s.rest_length > 0 or s.damping > 0):
        raise SingularSystemError(
            f"spring {s.name!r}: its two points coincide, so the direction of its force is "
            "undefined (a spring with rest_length 0 and no damping is the only one defined "
            "there); move its attachment points apart"
        )
    u = d / np.where(L > 0, L, 1.0)[..., None]
    T = s.stiffness * (L - s.rest_length)
    if s.damping > 0 and dd is not None:
        T = T + s.damping * np.sum(u * dd, axis=-1)
    return T, u, L


def _add_loads(model, F, M, A, q, qd, t):
    """Add every :meth:`~mbcourse.Model.add_force` load to ``F``, ``M`` (in place)."""
    for load in model.loads:
        Ab = A[..., load.body, :, :]
        rot = (lambda x: (Ab @ x[..., None])[..., 0]) if load.frame == "body" else (lambda x: x)
        for value, is_force in ((load.force, True), (load.torque, False)):
            if value is None:
                continue
            if callable(value):
                vv = np.zeros(model.nv) if qd is None else qd
                bq = np.broadcast_shapes(q.shape[:-1], vv.shape[:-1])
                vec = evaluate(value, t, np.broadcast_to(q, bq + q.shape[-1:]),
                               np.broadcast_to(vv, bq + vv.shape[-1:]), (3,),
                               f"load {load.name!r}: {'force' if is_force else 'torque'}")
            else:
                vec = value
            f = np.broadcast_to(rot(np.asarray(vec, dtype=float)), F[..., 0, :].shape)
            if is_force:
                F[..., load.body, :] += f
                M[..., load.body, :] += cross((Ab @ load.point[..., None])[..., 0], f)
            else:
                M[..., load.body, :] += f


def _add_springs(model, F, M, r, A, vel, omega):
    """Add every :meth:`~mbcourse.Model.add_spring` spring-damper to ``F``, ``M``."""
    for s in model.springs:
        geo = spring_geometry(s, r, A, vel, omega) if vel is not None else \
            spring_geometry(s, r, A) + (None,)
        la, lb, d, dd = geo
        T, u, _ = spring_tension(s, d, dd)
        f = T[..., None] * u  # on body a, toward b
        F[..., s.body_a, :] += f
        M[..., s.body_a, :] += cross(la, f)
        F[..., s.body_b, :] -= f
        M[..., s.body_b, :] -= cross(lb, f)
    F[..., 0, :] = 0.0
    M[..., 0, :] = 0.0


@coupled("state")
def applied_wrenches(model, q=None, qd=None, t=0.0, poses=None, velocities=None,
                     orientations=None):
    """Resultant applied force and moment about each centre of mass, inertial axes, at a
    checked state: gravity, every load and every spring-damper.

    Parameters
    ----------
    model : Model
    q : ndarray, shape (..., nq), checked
        The configuration (needed by springs and by callable loads).
    qd : ndarray, shape (..., nv), checked, optional
        The speeds (dampers and callable loads); ``None`` means at rest.
    t : float
    poses : (r, A), optional
        Body positions (..., n + 1, 3) and orientations (..., n + 1, 3, 3) already at
        hand (absolute-coordinate formulations); computed from ``q`` otherwise.
    velocities : (vel, omega), optional
        Body velocities and angular velocities (..., n + 1, 3), inertial axes.
    orientations : ndarray, shape (..., n + 1, 3, 3), optional
        Orientations alone: enough for a model without springs.

    Returns
    -------
    F, M : ndarray, shape (..., n + 1, 3)
        Row 0 (the base) is zero.
    """
    springs = bool(model.springs)
    dampers = any(s.damping > 0 for s in model.springs)
    state_loads = any(callable(f) for ld in model.loads for f in (ld.force, ld.torque))
    if (springs or state_loads) and q is None and (poses is None or state_loads):
        raise ShapeError("this model has springs or state-dependent loads: "
                         "applied_wrenches needs q (and qd for dampers)")
    if poses is not None:
        r, A = poses
    elif orientations is not None and not springs:
        r, A = None, np.asarray(orientations, dtype=float)
    elif q is None:
        raise ShapeError("applied_wrenches needs the configuration q (or the bodies' poses "
                         "or orientations): the loads act in the bodies' current axes")
    else:
        r, A = body_poses(model, q, t)
    F = np.zeros(A.shape[:-2] + (3,))
    M = np.zeros_like(F)
    F[..., 1:, :] = model.masses()[:, None] * model.gravity
    _add_loads(model, F, M, A, q, qd, t)
    if springs:
        if dampers and velocities is None and qd is not None:
            velocities = body_velocities(model, q, qd, t)
        vel, omega = velocities if velocities is not None else (None, None)
        _add_springs(model, F, M, r, A, vel, omega)
    return F, M


@coupled("force")
def generalized_forces(model, q, qd=None, t=0.0):
    """Generalized forces (..., nv) of the joint springs and ``add_generalized_force``
    callables at a checked state (``qd=None``: at rest); zero when the model has none."""
    if qd is None:
        qd = np.zeros(q.shape[:-1] + (model.nv,))
    batch = np.broadcast_shapes(q.shape[:-1], qd.shape[:-1])
    out = np.zeros(batch + (model.nv,))
    for s in model.joint_springs:
        j = s.joint
        out[..., j.v_slice] -= (s.stiffness * (q[..., j.q_slice] - s.rest)
                                + s.damping * qd[..., j.v_slice])
    if model.generalized_force_elements:
        out += callable_forces(model, np.broadcast_to(q, batch + q.shape[-1:]),
                               np.broadcast_to(qd, batch + qd.shape[-1:]), t)
    return out


def callable_forces(model, q, qd, t=0.0):
    """The generalized forces (..., nv) of the ``add_generalized_force`` callables alone, at
    a checked state (the compiled recursions add them to ``tau``, evaluated once per
    configuration here; the joint springs they apply themselves)."""
    out = np.zeros(q.shape[:-1] + (model.nv,))
    for g in model.generalized_force_elements:
        out += evaluate(g.fn, t, q, qd, (model.nv,), f"generalized force {g.name!r}")
    return out


@coupled("state")
def damping_power(model, q, qd, t=0.0):
    """Power of every damper, ``-sum c (dL/dt)^2 - sum c_j qd_j^2`` (<= 0), shape (...,), at
    a checked state."""
    P = np.zeros(np.broadcast_shapes(q.shape[:-1], qd.shape[:-1]))
    if any(s.damping > 0 for s in model.springs):
        r, A = body_poses(model, q, t)
        vel, omega = body_velocities(model, q, qd, t, A)
        for s in model.springs:
            _, _, d, dd = spring_geometry(s, r, A, vel, omega)
            L = np.linalg.norm(d, axis=-1)
            Ldot = np.sum(d * dd, axis=-1) / np.where(L > 0, L, 1.0)
            P = P - s.damping * Ldot ** 2
    for s in model.joint_springs:
        v = qd[..., s.joint.v_slice]
        P = P - np.sum(s.damping * v * v, axis=-1)
    return P
