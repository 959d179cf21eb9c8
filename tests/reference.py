"""Independent reference dynamics for tree models: Jourdain's principle (Kane's equations)
with finite-difference accelerations.

Every formulation of the course (Cartesian coordinates with multipliers, Wittenburg's tree
equations, Vereshchagin's recursion, ...) is checked against this module, which shares no
code with them. It uses only the public kinematics of :class:`mbcourse.Model`
(``body_poses``, ``body_velocities``, ``qdot``, ``applied_wrenches``, ``masses``,
``inertias``, ``nq``, ``nv``; ``normalize_q`` only on request) and numpy/scipy:

* Jacobians are exact: ``body_velocities`` is affine in ``v`` for fixed ``(q, t)``, so the
  columns are its values at the unit vectors ``e_k`` minus its value at ``v = 0``.
* Velocity-product accelerations come from central differences in time along the motion
  ``dq/dt = model.qdot(q, v)`` (``v`` and, with a prescribed base motion, the base
  functions of ``t`` follow the motion), with one Richardson step, accurate to about
  ``1e-12`` relative for well-scaled models (see :func:`body_accelerations`).
* Newton-Euler for every body, projected on the partial velocities (Jourdain):
  ``M dv/dt + h = tau + Q`` with ``M = sum m Jv^T Jv + Jw^T I Jw`` and
  ``h = sum Jv^T m a + Jw^T (I alpha + omega x I omega)`` at ``dv/dt = 0``.

It is slow (a handful of kinematic sweeps per call) and meant for tests, not simulation
of long runs.

Examples
--------
>>> import numpy as np
>>> import mbcourse as mb
>>> from reference import forward_dynamics
>>> m = mb.Model(gravity=(0, -9.81, 0))
>>> _ = m.add_body("rod", mass=2.0, inertia=[1e-3, 0.5, 0.5])
>>> _ = m.add_joint("O", "revolute", "ground", "rod", child_point=(-1, 0, 0), axis=(0, 0, 1))
>>> # horizontal rod, released: theta'' = -m g a / (J + m a^2) = -19.62 / 2.5
>>> round(float(forward_dynamics(m, [0.0], [0.0])[0]), 10)
-7.848
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

__all__ = [
    "jacobians",
    "world_inertias",
    "mass_matrix",
    "body_accelerations",
    "bias_forces",
    "generalized_applied_forces",
    "forward_dynamics",
    "inverse_dynamics",
]

#: Time step of the finite differences, divided by ``max(1, |dq/dt|_inf)``.
DEFAULT_STEP = 2e-3


def _single_state(model, q, v=None, name="v"):
    q = np.asarray(model.check_q(q), dtype=float)
    if q.ndim != 1:
        raise ValueError(f"the reference handles one state at a time: q has shape {q.shape}")
    if v is None:
        return q
    v = np.asarray(model.check_qd(v, name), dtype=float)
    if v.ndim != 1:
        raise ValueError(f"the reference handles one state at a time: {name} has shape {v.shape}")
    return q, v


def jacobians(model, q, t=0.0):
    """Partial velocities of every body (independent reference; exact).

    Parameters
    ----------
    model : mbcourse.Model
    q : array_like, shape (nq,)
    t : float
        Time (matters only with a prescribed base motion).

    Returns
    -------
    Jv, Jw : ndarray, shape (n + 1, 3, nv)
        Centre-of-mass velocity and angular velocity (inertial axes) of every body
        (row 0: the base) per unit generalized speed. Column ``k`` is
        ``body_velocities(q, e_k, t) - body_velocities(q, 0, t)``: exact, since the body
        velocities are affine in ``v`` (the constant part is the base motion).
    """
    Jv, Jw, _ = _affine(model, _single_state(model, q), t)
    return Jv, Jw


def _affine(model, q, t):
    """Jacobians and the angular velocities at ``v = 0`` (base motion only)."""
    nv = model.nv
    vel, omega = model.body_velocities(q, np.vstack([np.zeros(nv), np.eye(nv)]), t)
    Jv = np.moveaxis(vel[1:] - vel[0], 0, -1)
    Jw = np.moveaxis(omega[1:] - omega[0], 0, -1)
    return Jv, Jw, omega[0]


def world_inertias(model, q, t=0.0):
    """Central inertia tensors of bodies 1..n in inertial axes, ``A J A^T``, shape (n, 3, 3)."""
    _, A = model.body_poses(_single_state(model, q), t)
    A = A[1:]
    return A @ model.inertias() @ np.swapaxes(A, -1, -2)


def _velocity_derivative(model, q, v, t, step, renormalize):
    """Time derivative of ``body_velocities`` along the motion at constant ``v``."""
    qd = model.qdot(q, v)
    h = (DEFAULT_STEP if step is None else step) / max(1.0, float(np.abs(qd).max(initial=0.0)))
    signs = np.array([1.0, -1.0, 0.5, -0.5])  # steps h, -h, h/2, -h/2
    Q = q + (h * signs)[:, None] * qd
    if renormalize:
        Q = model.normalize_q(Q)
    if model.base_motion is None:  # one batched sweep
        vel, omega = model.body_velocities(Q, v, t)
    else:  # the time moves with the step
        pairs = [model.body_velocities(Qs, v, t + h * s) for Qs, s in zip(Q, signs)]
        vel = np.array([p[0] for p in pairs])
        omega = np.array([p[1] for p in pairs])

    def richardson(x):
        d1 = (x[0] - x[1]) / (2 * h)
        d2 = (x[2] - x[3]) / h
        return (4 * d2 - d1) / 3

    return richardson(vel), richardson(omega)


def _terms(model, q, v, t, step=None, renormalize=False, want=("M", "h", "Q")):
    """``M``, ``h`` and ``Q`` of one checked state with a single Jacobian evaluation."""
    Jv, Jw, omega0 = _affine(model, q, t)
    Jv, Jw, omega0 = Jv[1:], Jw[1:], omega0[1:]  # the base does not enter the equations
    out = {}
    if "M" in want or "h" in want:
        I = world_inertias(model, q, t)
    if "M" in want:
        M = (np.einsum("i,ikr,iks->rs", model.masses(), Jv, Jv)
             + np.einsum("ikr,ikl,ils->rs", Jw, I, Jw))
        out["M"] = 0.5 * (M + M.T)
    if "h" in want:
        acc, alpha = _velocity_derivative(model, q, v, t, step, renormalize)
        omega = omega0 + Jw @ v
        force = model.masses()[:, None] * acc[1:]
        moment = (I @ alpha[1:, :, None])[..., 0] + np.cross(omega, (I @ omega[..., None])[..., 0])
        out["h"] = np.einsum("ikr,ik->r", Jv, force) + np.einsum("ikr,ik->r", Jw, moment)
    if "Q" in want:
        F, Mo = model.applied_wrenches(q, qd=v, t=t)
        out["Q"] = (np.einsum("ikr,ik->r", Jv, F[1:]) + np.einsum("ikr,ik->r", Jw, Mo[1:])
                    + model.generalized_forces(q, v, t))
    return out


def mass_matrix(model, q, t=0.0):
    """Generalized mass matrix ``M(q)`` (independent reference; exact up to roundoff).

    ``M = sum_i m_i Jv_i^T Jv_i + Jw_i^T I_i Jw_i`` over bodies 1..n, with ``I_i`` the
    central inertia tensor in inertial axes. Symmetric; positive definite for a tree
    whose generalized speeds are independent.

    Returns
    -------
    ndarray, shape (nv, nv)
    """
    return _terms(model, _single_state(model, q), None, t, want=("M",))["M"]


def body_accelerations(model, q, v, vdot=None, t=0.0, step=None, renormalize=False):
    """Centre-of-mass and angular accelerations of all bodies (independent reference).

    The velocity-product part (``vdot = 0``) is the time derivative of
    ``body_velocities`` along the motion: ``q`` moves with ``dq/dt = model.qdot(q, v)``,
    ``v`` is held constant and ``t`` advances (prescribed base motion). It is computed by
    central differences with steps ``h`` and ``h/2`` combined by Richardson extrapolation,
    ``(4 D(h/2) - D(h)) / 3``: truncation ``O(h^4)``, about ``1e-12`` relative with the
    default ``h = 2e-3 / max(1, |dq/dt|)`` (``step`` overrides ``2e-3``). Quaternions leave
    the unit sphere only at ``O(h^2)`` along the straight step, which the central
    difference cancels; ``renormalize=True`` projects them back with ``model.normalize_q``
    (same result to ~1e-12). The part linear in ``vdot`` is added exactly with the
    Jacobians.

    Returns
    -------
    acc, alpha : ndarray, shape (n + 1, 3)
        Inertial axes; row 0 is the base.
    """
    q, v = _single_state(model, q, v)
    acc, alpha = _velocity_derivative(model, q, v, t, step, renormalize)
    if vdot is not None:
        vdot = np.asarray(model.check_qd(vdot, "vdot"), dtype=float)
        Jv, Jw = jacobians(model, q, t)
        acc += Jv @ vdot
        alpha += Jw @ vdot
    return acc, alpha


def bias_forces(model, q, v, t=0.0, step=None, renormalize=False):
    """Velocity-product generalized forces ``h(q, v, t)`` (independent reference).

    Defined by ``M(q) dv/dt + h = tau + Q_applied``. Computed by Jourdain's principle:
    ``h = sum_i Jv_i^T m_i a_i + Jw_i^T (I_i alpha_i + omega_i x I_i omega_i)`` with the
    accelerations at ``dv/dt = 0`` from :func:`body_accelerations` (finite differences
    with Richardson extrapolation, about ``1e-12`` relative). With a prescribed base motion
    ``h`` also holds the inertial forces of the base's motion.

    Returns
    -------
    ndarray, shape (nv,)
    """
    q, v = _single_state(model, q, v)
    return _terms(model, q, v, t, step, renormalize, want=("h",))["h"]


def generalized_applied_forces(model, q, t=0.0, v=None):
    """Generalized applied forces ``Q(q, v, t) = sum_i Jv_i^T F_i + Jw_i^T M_i`` plus the
    model's joint springs and generalized-force callables (exact).

    ``F_i, M_i`` are :meth:`Model.applied_wrenches` (force at the centre of mass and moment
    about it, inertial axes, gravity and springs included); ``v=None`` is at rest.

    Returns
    -------
    ndarray, shape (nv,)
    """
    if v is None:
        return _terms(model, _single_state(model, q), None, t, want=("Q",))["Q"]
    q, v = _single_state(model, q, v)
    return _terms(model, q, v, t, want=("Q",))["Q"]


def forward_dynamics(model, q, v, tau=None, t=0.0, step=None):
    """Generalized accelerations ``dv/dt`` (independent reference).

    Solves ``M dv/dt = tau + Q - h`` by Cholesky (:func:`mass_matrix`,
    :func:`generalized_applied_forces`, :func:`bias_forces`); accuracy about ``1e-12``
    relative times the condition number of ``M``. One state at a time.

    Returns
    -------
    ndarray, shape (nv,)
    """
    q, v = _single_state(model, q, v)
    tau = np.asarray(model.check_tau(tau), dtype=float)
    terms = _terms(model, q, v, t, step)
    return scipy.linalg.cho_solve(scipy.linalg.cho_factor(terms["M"]),
                                  tau + terms["Q"] - terms["h"])


def inverse_dynamics(model, q, v, vdot, t=0.0, step=None):
    """Generalized forces ``tau = M dv/dt + h - Q`` producing ``vdot`` (independent reference).

    Returns
    -------
    ndarray, shape (nv,)
    """
    q, v = _single_state(model, q, v)
    vdot = np.asarray(model.check_qd(vdot, "vdot"), dtype=float)
    terms = _terms(model, q, v, t, step)
    return terms["M"] @ vdot + terms["h"] - terms["Q"]
