"""Integration of the equations of motion in generalized coordinates, with monitors.

Any formulation's ``forward_dynamics(model, q, qd, tau, t=...)`` can drive
:func:`simulate`: the state is ``(q, v)`` with ``dq/dt = model.qdot(q, v)`` (quaternions of
spherical and free joints included) and ``dv/dt`` from the formulation. Quaternions are
renormalized before every evaluation and in the output, so the integrator's drift off the
unit sphere never reaches the dynamics.

Monitors on the result: total energy (kinetic + gravity), linear and angular momentum.

Examples
--------
>>> import numpy as np, mbcourse as mb
>>> model = mb.models.double_pendulum()
>>> res = simulate(model, mb.tree.forward_dynamics, (0.0, 1.0), [0.5, 0.0], [0.0, 0.0])
>>> bool(np.ptp(res.energy) < 1e-8)
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from .errors import ShapeError

__all__ = ["simulate", "initial_state", "Trajectory", "momentum"]


def momentum(model, q, v, t=0.0):
    """Linear momentum and angular momentum about the inertial origin.

    Returns
    -------
    P, H : ndarray, shape (..., 3)
        ``P = sum m_i v_i``, ``H = sum (r_i x m_i v_i + A_i J_i A_i^T omega_i)``.

    Examples
    --------
    >>> import mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> P, H = momentum(m, [0.0, 0.0], [1.0, 0.0])
    >>> P.round(6).tolist(), round(float(H[2]), 6)   # H_z = 2 T / omega
    ([0.0, 2.0, 0.0], 2.667083)
    """
    r, A = model.body_poses(q, t)
    vel, omega = model.body_velocities(q, v, t)
    m = model.masses()
    p_lin = m[:, None] * vel[..., 1:, :]
    J = A[..., 1:, :, :] @ model.inertias() @ np.swapaxes(A[..., 1:, :, :], -1, -2)
    spin = (J @ omega[..., 1:, :, None])[..., 0]
    return p_lin.sum(axis=-2), (np.cross(r[..., 1:, :], p_lin) + spin).sum(axis=-2)


@dataclass
class Trajectory:
    """Result of :func:`simulate`: times ``t`` (nt,), ``q`` (nt, nq), ``v`` (nt, nv)."""

    model: object
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    sol: object

    @property
    def energy(self):
        """Kinetic plus gravitational potential energy, (nt,)."""
        return np.array([float(self.model.kinetic_energy(q, v, t) + self.model.potential_energy(q, t))
                         for t, q, v in zip(self.t, self.q, self.v)])

    @property
    def momentum(self):
        """Linear and angular momentum (about the origin), each (nt, 3)."""
        P, H = zip(*(momentum(self.model, q, v, t) for t, q, v in zip(self.t, self.q, self.v)))
        return np.array(P), np.array(H)

    def positions(self):
        """Centres of mass and orientations of all bodies, (nt, n+1, 3) and (nt, n+1, 3, 3)."""
        out = [self.model.body_poses(q, t) for t, q in zip(self.t, self.q)]
        return np.array([o[0] for o in out]), np.array([o[1] for o in out])


def initial_state(model, t_span, q0, v0, tau=None, v_name="v0"):
    """Check the arguments of a simulation: ``(t0, t1, q0, v0, tau_fn)``.

    ``q0`` is normalized (quaternions); ``tau`` (None, an array or a callable
    ``tau(t, q, v)``) becomes ``None`` or a callable.
    """
    t0, t1 = (float(x) for x in t_span)
    if not t1 > t0:
        raise ShapeError(f"t_span must increase, got {t_span}")
    q0 = model.normalize_q(q0)
    v0 = model.check_v(v0, name=v_name)
    if q0.ndim != 1 or v0.ndim != 1:
        raise ShapeError(f"simulate integrates one state: q0 of shape (nq,), {v_name} of shape "
                         "(nv,)")
    if tau is None or callable(tau):
        return t0, t1, q0, v0, tau
    const = model.check_tau(tau)
    return t0, t1, q0, v0, (lambda t, q, v: const)


def simulate(model, forward_dynamics, t_span, q0, v0, tau=None, method="DOP853", rtol=1e-10,
             atol=1e-10, t_eval=None, max_step=np.inf):
    """Integrate ``dq/dt = qdot(q, v)``, ``dv/dt = forward_dynamics(model, q, v, tau, t=t)``.

    Parameters
    ----------
    model : Model
    forward_dynamics : callable
        e.g. ``mb.tree.forward_dynamics``, ``mb.cartesian.forward_dynamics``.
    t_span : (float, float)
        Increasing start and end times.
    q0, v0 : array_like
        Initial state (quaternions are normalized).
    tau : None, array_like (nv,) or callable ``tau(t, q, v)``
        Generalized forces.
    method, rtol, atol, t_eval, max_step
        Passed to :func:`scipy.integrate.solve_ivp`.

    Returns
    -------
    Trajectory
    """
    t0, t1, q0, v0, tau_fn = initial_state(model, t_span, q0, v0, tau)
    nq = model.nq

    def rhs(t, y):
        q = model.normalize_q(y[:nq])
        v = y[nq:]
        forces = None if tau_fn is None else tau_fn(t, q, v)
        return np.concatenate([model.qdot(q, v), forward_dynamics(model, q, v, forces, t=t)])

    sol = solve_ivp(rhs, (t0, t1), np.concatenate([q0, v0]), method=method, rtol=rtol,
                    atol=atol, t_eval=t_eval, max_step=max_step)
    if sol.status < 0:
        raise ShapeError(f"the integration failed: {sol.message}")
    q = model.normalize_q(sol.y[:nq].T)
    return Trajectory(model, sol.t, q, sol.y[nq:].T, sol)
