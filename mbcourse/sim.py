"""Integration of the equations of motion in generalized coordinates, with monitors.

Any formulation's ``forward_dynamics(model, q, qd, tau=None, *, t=0.0, **options)`` can
drive :func:`simulate`: the state is ``(q, qd)`` with ``dq/dt = model.qdot(q, qd)``
(quaternions of spherical and free joints included) and ``dqd/dt`` from the formulation.
Quaternions are renormalized before every evaluation and in the output, so the
integrator's drift off the unit sphere never reaches the dynamics.

The model's force elements (springs, dampers, joint springs, loads and control laws of
``(t, q, qd)``) act through the formulation; ``tau(t, q, qd)`` adds generalized forces on
top of them.

Monitors on the result (:class:`Trajectory`): the total energy (kinetic plus
:meth:`~mbcourse.Model.potential_energy`, which holds gravity and the springs), the energy
``dissipated`` by the dampers (integrated with the motion, so that ``energy + dissipated``
stays constant for a passive model), linear and angular momentum.

Closed loops: the coordinates of a model whose joints close loops are not independent, and
integrating them as if they were drifts off the loop constraints. :func:`simulate` refuses
such models up front; integrate them with :func:`mbcourse.loops.simulate` (cut joints,
chapter 6) or :func:`mbcourse.cartesian.simulate` (absolute coordinates).

Examples
--------
>>> import numpy as np, mbcourse as mb
>>> model = mb.models.double_pendulum()
>>> res = simulate(model, mb.tree.forward_dynamics, (0.0, 1.0), [0.5, 0.0], [0.0, 0.0])
>>> bool(np.ptp(res.energy) < 1e-8)
True
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np

from .spatial import cross
from scipy.integrate import solve_ivp

from .errors import STOPPED_HINT, IntegrationError, ShapeError, TopologyError

__all__ = ["SimData", "prepare", "simulate", "initial_state", "Trajectory", "momentum"]


# ------------------------------------------------------------------ prepared data
@dataclass(frozen=True)
class SimData:
    """Prepared data of the integrator (see :func:`prepare`).

    Attributes
    ----------
    loop_joints : tuple of str
        The joints that close loops (empty for a tree).
    damped : bool
        Whether any spring or joint spring has damping: then the integrated state also
        carries the dissipated energy.
    quaternions : bool
        Whether any joint has a quaternion (then ``dq/dt`` differs from ``qd`` and the
        state is renormalized on every evaluation).
    """

    loop_joints: tuple
    damped: bool
    quaternions: bool = False


def prepare(model):
    """Per-model facts :func:`simulate` needs, built once per model version.

    Examples
    --------
    >>> import mbcourse as mb
    >>> prepare(mb.models.crank_slider()).loop_joints
    ('B',)
    >>> prepare(mb.models.double_pendulum())
    SimData(loop_joints=(), damped=False, quaternions=False)
    """
    def build():
        g = model.graph
        cut = () if g.is_tree else tuple(model.joints[a].name for a in g.spanning_tree()[1])
        damped = (any(s.damping > 0 for s in model.springs)
                  or any(np.any(s.damping > 0) for s in model.joint_springs))
        quaternions = any(j.quaternion is not None for j in model.joints)
        return SimData(loop_joints=cut, damped=bool(damped), quaternions=quaternions)

    return model.prepared("sim", build)


# ---------------------------------------------------------------------- monitors
def momentum(model, q, qd, *, t=0.0):
    """Linear momentum and angular momentum about the inertial origin.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd : array_like, shape (..., nv)
    t : float

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
    state = model.check_state(q, qd, t=t)
    r, A = model.body_poses(state.q, state.t)
    vel, omega = model.body_velocities(state.q, state.qd, state.t)
    m = model.masses()
    p_lin = m[:, None] * vel[..., 1:, :]
    J = A[..., 1:, :, :] @ model.inertias() @ np.swapaxes(A[..., 1:, :, :], -1, -2)
    spin = (J @ omega[..., 1:, :, None])[..., 0]
    P = p_lin.sum(axis=-2)
    H = (cross(r[..., 1:, :], p_lin) + spin).sum(axis=-2)
    return state.result(P, "mb.sim.momentum"), state.result(H, "mb.sim.momentum")


@dataclass
class Trajectory:
    """Result of :func:`simulate`.

    Attributes
    ----------
    model : Model
    t : ndarray, shape (nt,)
    q : ndarray, shape (nt, nq)
        Configurations (unit quaternions).
    qd : ndarray, shape (nt, nv)
        Generalized speeds.
    sol : OdeResult
        The result of :func:`scipy.integrate.solve_ivp` (``sol.sol`` is the dense output
        of the integrated state when asked for).
    dissipated : ndarray, shape (nt,)
        Energy dissipated by the model's dampers since ``t[0]``, ``-integral of
        model.damping_power dt >= 0`` (zeros without dampers).
    """

    model: object
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    sol: object = None
    dissipated: np.ndarray = None

    def __post_init__(self):
        if self.dissipated is None:
            self.dissipated = np.zeros(len(self.t))

    def _samples(self, fn):
        """``fn(q, qd, t)`` at every sample: one batched call when nothing depends on the
        time (no base motion), else one call per sample."""
        if self.model.base_motion is None:
            return np.asarray(fn(self.q, self.qd, 0.0), dtype=float)
        return np.array([fn(q, qd, float(t)) for t, q, qd in zip(self.t, self.q, self.qd)],
                        dtype=float)

    @property
    def kinetic_energy(self):
        """Kinetic energy, (nt,)."""
        return self._samples(lambda q, qd, t: self.model.kinetic_energy(q, qd, t))

    @property
    def potential_energy(self):
        """Potential energy of gravity and springs, (nt,)."""
        return self._samples(lambda q, qd, t: self.model.potential_energy(q, t))

    @property
    def energy(self):
        """Kinetic plus potential energy (gravity and springs), (nt,).

        For a model without dampers or other non-conservative forces it is constant;
        with dampers ``energy + dissipated`` is.
        """
        return self.kinetic_energy + self.potential_energy

    @property
    def damping_power(self):
        """Power of the dampers (<= 0) at the samples, (nt,)."""
        return self._samples(lambda q, qd, t: self.model.damping_power(q, qd, t))

    @property
    def momentum(self):
        """Linear and angular momentum (about the origin), each (nt, 3)."""
        if self.model.base_motion is None:
            return momentum(self.model, self.q, self.qd)
        P, H = zip(*(momentum(self.model, q, qd, t=float(t))
                     for t, q, qd in zip(self.t, self.q, self.qd)))
        return np.array(P), np.array(H)

    def positions(self):
        """Centres of mass and orientations of all bodies, (nt, n+1, 3) and (nt, n+1, 3, 3)."""
        if self.model.base_motion is None:
            return self.model.body_poses(self.q)
        out = [self.model.body_poses(q, float(t)) for t, q in zip(self.t, self.q)]
        return np.array([o[0] for o in out]), np.array([o[1] for o in out])


# -------------------------------------------------------------------- integration
def _force_callback(tau):
    """Refuse a ``tau`` callable that cannot be called as ``tau(t, q, qd)``."""
    try:
        signature = inspect.signature(tau)
    except (TypeError, ValueError):  # builtins without a signature: trust them
        return
    try:
        signature.bind(0.0, None, None)
    except TypeError:
        raise ShapeError(f"tau must be an array of generalized forces or a callable "
                         f"tau(t, q, qd); got a function {signature}") from None


def initial_state(model, t_span, q0, qd0, tau=None):
    """Check the arguments of a simulation: ``(t0, t1, q0, qd0, tau_fn)``.

    ``q0`` (nq,) is normalized (quaternions), ``qd0`` (nv,) checked; ``tau`` (None, an
    array (nv,) or a callable ``tau(t, q, qd)``) becomes ``None`` or a callable.

    Examples
    --------
    >>> import mbcourse as mb
    >>> t0, t1, q0, qd0, tau = initial_state(mb.models.double_pendulum(), (0, 2), [0.1, 0],
    ...                                      [0, 0], tau=[1.0, 0.0])
    >>> (t0, t1), tau(0.0, q0, qd0).tolist()
    ((0.0, 2.0), [1.0, 0.0])
    """
    try:
        t0, t1 = (float(x) for x in t_span)
    except (TypeError, ValueError):
        raise ShapeError(f"t_span must be two times (t0, t1), got {t_span!r}") from None
    if not (np.isfinite(t0) and np.isfinite(t1) and t1 > t0):
        raise ShapeError(f"t_span must increase between finite times, got {t_span}")
    q0 = model.normalize_q(q0)
    qd0 = model.check_v(qd0, name="qd0")
    if q0.ndim != 1 or qd0.ndim != 1:
        raise ShapeError(f"simulate integrates one state: q0 of shape ({model.nq},), qd0 of "
                         f"shape ({model.nv},); got {q0.shape} and {qd0.shape}")
    model.check_state(q0, qd0, t=t0)
    if tau is None:
        return t0, t1, q0, qd0, None
    if callable(tau):
        _force_callback(tau)
        return t0, t1, q0, qd0, tau
    const = model.check_tau(tau)
    if const.ndim != 1:
        raise ShapeError(f"a constant tau must have shape ({model.nv},), got {const.shape}")
    return t0, t1, q0, qd0, (lambda t, q, qd: const)


def simulate(model, forward_dynamics, t_span, q0, qd0, tau=None, *, method="DOP853",
             rtol=1e-10, atol=1e-10, t_eval=None, max_step=np.inf, dense_output=False,
             **options):
    """Integrate ``dq/dt = qdot(q, qd)``, ``dqd/dt = forward_dynamics(model, q, qd, tau, t=t)``.

    Parameters
    ----------
    model : Model
        A tree (closed loops are refused, see below).
    forward_dynamics : callable
        ``forward_dynamics(model, q, qd, tau, *, t, **options)``, e.g.
        ``mb.tree.forward_dynamics``, ``mb.vereshchagin.forward_dynamics``.
    t_span : (float, float)
        Increasing start and end times.
    q0, qd0 : array_like, shapes (nq,), (nv,)
        Initial state (quaternions are normalized).
    tau : None, array_like (nv,) or callable ``tau(t, q, qd)``
        Generalized forces besides the model's own force elements.
    method : str
        The ODE integrator of :func:`scipy.integrate.solve_ivp` (``"DOP853"``, ``"RK45"``,
        ``"Radau"`` ...).
    rtol, atol, t_eval, max_step, dense_output
        Passed to :func:`scipy.integrate.solve_ivp`.
    **options
        Passed to ``forward_dynamics`` (e.g. ``solver="ldlt"`` for
        ``mb.cartesian.forward_dynamics``).

    Returns
    -------
    Trajectory
        With a model that has dampers, the integrated state ``sol.y`` has one more row
        (last): the dissipated energy.

    Raises
    ------
    TopologyError
        For a model whose joints close loops: integrate it with
        :func:`mbcourse.loops.simulate` or :func:`mbcourse.cartesian.simulate`.
    """
    data = prepare(model)
    if data.loop_joints:
        raise TopologyError(
            f"mb.sim.simulate integrates independent generalized coordinates, but joints "
            f"{list(data.loop_joints)} close loops: their coordinates are tied by the loop "
            "constraints and would drift off them. Integrate closed loops with "
            "mb.loops.simulate (the cut-joint method of chapter 6, with projection, "
            "coordinate partitioning or Baumgarte stabilization) or mb.cartesian.simulate "
            "(absolute coordinates)"
        )
    t0, t1, q0, qd0, tau_fn = initial_state(model, t_span, q0, qd0, tau)
    nq, nv = model.nq, model.nv

    if not (data.quaternions or data.damped or tau_fn is not None):
        def rhs(t, y):  # dq/dt = qd: no quaternion to renormalize, nothing to add
            out = np.empty(nq + nv)
            out[:nq] = y[nq:]
            out[nq:] = forward_dynamics(model, y[:nq], y[nq:], None, t=t, **options)
            return out
    else:
        rhs = _full_rhs(model, forward_dynamics, data, tau_fn, options)
    y0 = np.concatenate([q0, qd0] + ([np.zeros(1)] if data.damped else []))
    sol = solve_ivp(rhs, (t0, t1), y0, method=method, rtol=rtol, atol=atol, t_eval=t_eval,
                    max_step=max_step, dense_output=dense_output)
    if sol.status < 0:
        raise IntegrationError(f"mb.sim.simulate: the integration stopped at t={sol.t[-1]:.6g} "
                               f"of {t1:g}: {sol.message.rstrip('.')}. " + STOPPED_HINT)
    q = model.normalize_q(sol.y[:nq].T)
    dissipated = sol.y[-1] if data.damped else None
    return Trajectory(model, sol.t, q, sol.y[nq:nq + nv].T, sol, dissipated)


def _full_rhs(model, forward_dynamics, data, tau_fn, options):
    nq, nv = model.nq, model.nv

    def rhs(t, y):
        q = model.normalize_q(y[:nq])
        qd = y[nq:nq + nv]
        forces = None if tau_fn is None else tau_fn(t, q, qd)
        parts = [model.qdot(q, qd), forward_dynamics(model, q, qd, forces, t=t, **options)]
        if data.damped:
            parts.append(-np.atleast_1d(model.damping_power(q, qd, t)))
        return np.concatenate(parts)

    return rhs
