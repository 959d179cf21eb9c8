"""Integration of the equations of motion in generalized coordinates, with monitors.

Any formulation's ``forward_dynamics(model, q, qd, tau=None, *, t=0.0, **options)`` can
drive :func:`simulate`: the state is ``(q, qd)`` with ``dq/dt = model.qdot(q, qd)``
(quaternions of spherical and free joints included) and ``dqd/dt`` from the formulation.
Quaternions are renormalized before every evaluation and in the output, so the
integrator's drift off the unit sphere never reaches the dynamics.

The model's force elements (springs, dampers, joint springs, loads and control laws of
``(t, q, qd)``) act through the formulation; ``tau(t, q, qd)`` adds generalized forces on
top of them.

**One API.** Every formulation module that simulates has the one signature
``simulate(model, t_span, q0, qd0=None, tau=None, *, method, rtol, atol, t_eval, **options)``
and returns a :class:`Trajectory` (``qd0=None`` is rest, ``tau`` a constant or a callable
``tau(t, q, qd)``): :func:`mbcourse.tree.simulate` and :func:`mbcourse.vereshchagin.simulate`
(this module's :func:`simulate` with their ``forward_dynamics``, made by :func:`simulator`),
:func:`mbcourse.poisson.simulate`, :func:`mbcourse.loops.simulate` and
:func:`mbcourse.cartesian.simulate`. They share the checks of this module
(:func:`check_model`, :func:`initial_state`, :func:`tau_function`, :func:`check_t_eval`,
:func:`check_method`, :func:`refuse_options`, :func:`integrate`,
:func:`integration_error`), so a wrong call gets the same named error from every one.
:func:`simulate` itself takes the ``forward_dynamics`` function second.

Monitors on the result (:class:`Trajectory`): the total energy (kinetic plus
:meth:`~mbcourse.Model.potential_energy`, which holds gravity and the springs), the energy
``dissipated`` by the dampers (integrated with the motion, so that ``energy + dissipated``
stays constant for a passive model), linear and angular momentum. A result keeps a frozen
copy of the model as it was when it was computed (``Trajectory.model``; the version it had in
``Trajectory.model_version``): editing the model afterwards does not change its numbers.

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
import sys
import types
from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import OdeSolver, solve_ivp

from .errors import (STOPPED_HINT, IntegrationError, MbcourseError, ModelError, ShapeError,
                     TopologyError)
from . import forces as model_forces
from . import poses as model_poses
from .kernels import model_data
from .kernels.common import dissipation
from .model import Model
from .spatial import cross
from . import coupling as _coupling
from .coupling import coupled

__all__ = ["SimData", "prepare", "simulate", "simulator", "initial_state", "Trajectory",
           "momentum", "check_model", "tau_function", "check_t_eval", "check_method",
           "refuse_options", "integration_error", "integrate", "METHODS", "BLOWUP_SPEED"]

#: The integrators of :func:`scipy.integrate.solve_ivp` (``method=`` also takes an
#: ``OdeSolver`` subclass).
METHODS = ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA")

#: Speeds (rad/s or m/s) beyond which a stopped integration is reported as a blow-up of the
#: motion (huge forces) rather than a step-size collapse (stiffness, a singular position).
BLOWUP_SPEED = 1e6


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
@coupled("state")
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
    r, A = model_poses.body_poses(model, state.q, state.t)
    vel, omega = model_poses.body_velocities(model, state.q, state.qd, state.t)
    m = model.masses()
    p_lin = m[:, None] * vel[..., 1:, :]
    J = A[..., 1:, :, :] @ model.inertias() @ np.swapaxes(A[..., 1:, :, :], -1, -2)
    spin = (J @ omega[..., 1:, :, None])[..., 0]
    P = p_lin.sum(axis=-2)
    H = (cross(r[..., 1:, :], p_lin) + spin).sum(axis=-2)
    return state.result(P, "mb.sim.momentum"), state.result(H, "mb.sim.momentum")


@dataclass
class Trajectory:
    """Result of :func:`simulate` (and of every formulation's ``simulate``).

    Attributes
    ----------
    model : Model
        A frozen copy of the model as it was when the trajectory was computed: editing the
        model afterwards does not change ``energy`` and the other monitors (editing this
        copy makes them raise :class:`~mbcourse.errors.ModelError`).
    model_version : int
        :attr:`Model.version` of the simulated model at that time.
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

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> res = mb.tree.simulate(m, (0.0, 0.5), [0.5, 0.0])
    >>> E = res.energy
    >>> m.body(1).mass = 3.0              # an edit after the fact ...
    >>> bool(np.array_equal(res.energy, E)), res.model.body(1).mass   # ... changes nothing
    (True, 1.0)
    """

    model: object
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    sol: object = None
    dissipated: np.ndarray = None
    model_version: int = field(default=None, init=False)

    def __post_init__(self):
        if self.dissipated is None:
            self.dissipated = np.zeros(len(self.t))
        self.model_version = self.model.version
        self.model = self.model.copy()
        self._frozen_version = self.model.version

    def _model(self):
        """The frozen copy, refused once it has been edited."""
        if self.model.version != self._frozen_version:
            raise ModelError(
                f"{type(self).__name__}.model (the copy of the model this result was computed "
                "with) was edited afterwards: its energy, momentum and positions would mix two "
                "models. Edit the original model and simulate again (model.copy() gives a "
                "model to experiment with)")
        return self.model

    def _samples(self, fn):
        """``fn(model, q, qd, t)`` at every sample: one batched call when nothing depends on
        the time (no base motion), else one call per sample."""
        model = self._model()
        if model.base_motion is None:
            return np.asarray(fn(model, self.q, self.qd, 0.0), dtype=float)
        return np.array([fn(model, q, qd, float(t)) for t, q, qd in zip(self.t, self.q, self.qd)],
                        dtype=float)

    @property
    def kinetic_energy(self):
        """Kinetic energy, (nt,)."""
        return self._samples(lambda m, q, qd, t: m.kinetic_energy(q, qd, t))

    @property
    def potential_energy(self):
        """Potential energy of gravity and springs, (nt,)."""
        return self._samples(lambda m, q, qd, t: m.potential_energy(q, t))

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
        return self._samples(lambda m, q, qd, t: m.damping_power(q, qd, t))

    @property
    def momentum(self):
        """Linear and angular momentum (about the origin), each (nt, 3)."""
        model = self._model()
        if model.base_motion is None:
            return momentum(model, self.q, self.qd)
        P, H = zip(*(momentum(model, q, qd, t=float(t))
                     for t, q, qd in zip(self.t, self.q, self.qd)))
        return np.array(P), np.array(H)

    def positions(self):
        """Centres of mass and orientations of all bodies, (nt, n+1, 3) and (nt, n+1, 3, 3)."""
        model = self._model()
        if model.base_motion is None:
            return model_poses.body_poses(model, self.q)
        out = [model_poses.body_poses(model, q, float(t)) for t, q in zip(self.t, self.q)]
        return np.array([o[0] for o in out]), np.array([o[1] for o in out])


# ------------------------------------------------------------ the shared checks
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
                         f"tau(t, q, qd); got a function {signature} (a function of t alone "
                         "becomes lambda t, q, qd: f(t))") from None


def _tau_value(model, value, t):
    """The checked value of a ``tau`` callable: shape (nv,), finite numbers."""
    nv = model.nv
    fault = f"tau(t, q, qd) must return the generalized forces, an array of shape ({nv},)"
    if value is None:
        raise ShapeError(f"{fault}; it returned None at t={t:.6g} (a function without a "
                         f"return statement returns None; return np.zeros({nv}) for none)")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ShapeError(f"{fault}; it returned {type(value).__name__} {value!r:.60} at "
                         f"t={t:.6g}") from None
    if arr.shape != (nv,):
        raise ShapeError(f"{fault}; it returned shape {arr.shape} at t={t:.6g}")
    if not np.all(np.isfinite(arr)):
        bad = [model.qd_names[i] for i in np.flatnonzero(~np.isfinite(arr))]
        raise ShapeError(f"{fault}; it returned NaN or infinity at t={t:.6g} for {bad}")
    return arr


def tau_function(model, tau):
    """``tau`` (None, a constant (nv,) or a callable ``tau(t, q, qd)``) as ``None`` or a
    callable whose every value is checked (shape (nv,), finite; ``None`` refused): the one
    rule of every ``simulate``.

    Examples
    --------
    >>> import mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> tau_function(m, [1.0, 0.0])(0.0, None, None).tolist()
    [1.0, 0.0]
    >>> tau_function(m, lambda t, q, qd: None)(0.5, [0, 0], [0, 0])
    Traceback (most recent call last):
    ...
    mbcourse.errors.ShapeError: tau(t, q, qd) must return the generalized forces, an array of shape (2,); it returned None at t=0.5 (a function without a return statement returns None; return np.zeros(2) for none)
    """
    if tau is None:
        return None
    if callable(tau):
        _force_callback(tau)
        return lambda t, q, qd: _tau_value(model, tau(t, q, qd), t)
    const = model.check_tau(tau)
    if const.ndim != 1:
        raise ShapeError(f"a constant tau must have shape ({model.nv},), got {const.shape}")
    return lambda t, q, qd: const


def check_t_eval(t_eval, t0, t1):
    """``t_eval`` as increasing finite times within ``[t0, t1]`` (or ``None``).

    Examples
    --------
    >>> check_t_eval([0.0, 0.5, 1.0], 0.0, 1.0).tolist()
    [0.0, 0.5, 1.0]
    >>> check_t_eval([0.5, 2.0], 0.0, 1.0)
    Traceback (most recent call last):
    ...
    mbcourse.errors.ShapeError: t_eval must be increasing times within t_span = (0, 1); got times outside it: [2.0]
    """
    if t_eval is None:
        return None
    try:
        te = np.asarray(t_eval, dtype=float)
    except (TypeError, ValueError):
        raise ShapeError(f"t_eval must be increasing times within t_span, got {t_eval!r:.80}") \
            from None
    if te.ndim != 1 or not np.all(np.isfinite(te)):
        raise ShapeError(f"t_eval must be a 1-D array of finite times, got shape {te.shape}")
    outside = te[(te < t0) | (te > t1)]
    if outside.size:
        raise ShapeError(f"t_eval must be increasing times within t_span = ({t0:g}, {t1:g}); "
                         f"got times outside it: {outside[:5].tolist()}")
    if np.any(np.diff(te) <= 0):
        raise ShapeError("t_eval must be increasing times within t_span; it is not increasing")
    return te


def check_method(method):
    """``method`` must name an integrator of :func:`scipy.integrate.solve_ivp`.

    >>> check_method("Radua")
    Traceback (most recent call last):
    ...
    mbcourse.errors.ShapeError: method must be one of ['RK45', 'RK23', 'DOP853', 'Radau', 'BDF', 'LSODA'] (the integrators of scipy.integrate.solve_ivp) or an OdeSolver class, got 'Radua'
    """
    if isinstance(method, str) and method in METHODS:
        return method
    if isinstance(method, type) and issubclass(method, OdeSolver):
        return method
    raise ShapeError(f"method must be one of {list(METHODS)} (the integrators of "
                     f"scipy.integrate.solve_ivp) or an OdeSolver class, got {method!r}")


def refuse_options(what, options, valid):
    """Refuse keyword options ``what`` does not take, naming them and the valid ones.

    >>> refuse_options("mb.tree.simulate", {"solver": "ldlt"}, ["max_step", "dense_output"])
    Traceback (most recent call last):
    ...
    mbcourse.errors.ShapeError: mb.tree.simulate does not take the option solver=; its options are ['dense_output', 'max_step'] besides method, rtol, atol and t_eval
    """
    if options:
        bad = ", ".join(f"{k}=" for k in sorted(options))
        s = "s" if len(options) > 1 else ""
        raise ShapeError(f"{what} does not take the option{s} {bad}; its options are "
                         f"{sorted(valid)} besides method, rtol, atol and t_eval")


def integration_error(what, t_stop, t1, message, qd=None, blowup=False):
    """The :class:`~mbcourse.errors.IntegrationError` of an integration stopped at
    ``t_stop``: a blow-up (``blowup=True``, or speeds ``qd`` beyond :data:`BLOWUP_SPEED` or
    not finite: huge forces) is named as such; otherwise :data:`~mbcourse.errors.STOPPED_HINT`.

    >>> str(integration_error("mb.tree.simulate", 0.5, 1.0, "Required step size is less "
    ...                       "than spacing between numbers.", qd=[3e7, 0.0]))[:97]
    'mb.tree.simulate: the integration stopped at t=0.5 of 1: the motion blew up (speeds reached 3e+07'
    """
    speed = np.inf if qd is None else np.abs(np.asarray(qd, dtype=float)).max(initial=0.0)
    head = f"{what}: the integration stopped at t={t_stop:.6g} of {t1:g}: "
    if blowup or qd is not None and not speed <= BLOWUP_SPEED:
        reached = (f"speeds reached {speed:.3g}, beyond {BLOWUP_SPEED:g}" if np.isfinite(speed)
                   else "the speeds overflowed")
        return IntegrationError(
            head + f"the motion blew up ({reached}). "
            "The cause is huge forces, not stiffness: a tau or force law that feeds energy in "
            "(a sign, a gain, units), a spring far too stiff for its masses; check the forces "
            "-- a looser rtol/atol or another method will not help")
    return IntegrationError(head + f"{str(message).rstrip('.')}. " + STOPPED_HINT)


def integrate(what, rhs, t0, t1, y0, speeds, *, events=None, **options):
    """:func:`scipy.integrate.solve_ivp` with a terminal event at a blow-up (``speeds(y)``
    beyond :data:`BLOWUP_SPEED`); a stop raises :func:`integration_error`.

    ``events`` (the caller's own) keep their places in ``sol.t_events``.

    Examples
    --------
    >>> sol = integrate("demo", lambda t, y: y * y, 0.0, 2.0, [1.0], lambda y: y)
    Traceback (most recent call last):
    ...
    mbcourse.errors.IntegrationError: demo: the integration stopped at t=0.99... of 2: the motion blew up (speeds reached 1e+06, beyond 1e+06). The cause is huge forces, ...
    """
    def speed(y):
        try:
            return np.abs(speeds(y)).max(initial=0.0)
        except (MbcourseError, FloatingPointError):  # too large to evaluate
            return np.inf

    def blowup(t, y):
        return BLOWUP_SPEED - speed(y)

    def guarded(t, y):
        # A formulation's error at a state far beyond BLOWUP_SPEED can only come from a trial
        # stage of a step too long (the accepted steps stop at the blow-up event): NaN
        # rejects that step and a shorter one is tried. The flyball governor's first step
        # tries speeds of 1e10, where Vereshchagin's pivot test refuses the configuration.
        try:
            return rhs(t, y)
        except MbcourseError:
            if speed(y) <= BLOWUP_SPEED:
                raise
            return np.full(np.shape(y), np.nan)

    blowup.terminal = True
    own = [] if events is None else list(events) if isinstance(events, (list, tuple)) \
        else [events]
    sol = solve_ivp(guarded, (t0, t1), y0, events=own + [blowup], **options)
    if sol.status == 1 and sol.t_events[-1].size:
        raise integration_error(what, sol.t_events[-1][0], t1, sol.message,
                                speeds(sol.y_events[-1][0]), blowup=True)
    if sol.status < 0:
        raise integration_error(what, sol.t[-1], t1, sol.message, speeds(sol.y[:, -1]))
    sol.t_events = sol.t_events[:-1] if own else None
    sol.y_events = sol.y_events[:-1] if own else None
    return sol


def check_model(model):
    """Refuse a first argument that is not a :class:`~mbcourse.Model` (arguments swapped).

    >>> check_model((0.0, 1.0))
    Traceback (most recent call last):
    ...
    mbcourse.errors.ShapeError: simulate(model, t_span, q0, ...): the first argument must be the Model to simulate, got tuple
    """
    if not isinstance(model, Model):
        raise ShapeError(f"simulate(model, t_span, q0, ...): the first argument must be the "
                         f"Model to simulate, got {type(model).__name__}")


def initial_state(model, t_span, q0, qd0=None, tau=None):
    """Check the arguments of a simulation: ``(t0, t1, q0, qd0, tau_fn)``.

    ``q0`` (nq,) is normalized (quaternions), ``qd0`` (nv,) checked (``None`` is rest);
    ``tau`` (None, an array (nv,) or a callable ``tau(t, q, qd)``) becomes ``None`` or a
    checked callable (:func:`tau_function`).

    Examples
    --------
    >>> import mbcourse as mb
    >>> t0, t1, q0, qd0, tau = initial_state(mb.models.double_pendulum(), (0, 2), [0.1, 0],
    ...                                      None, tau=[1.0, 0.0])
    >>> (t0, t1), qd0.tolist(), tau(0.0, q0, qd0).tolist()
    ((0.0, 2.0), [0.0, 0.0], [1.0, 0.0])
    """
    check_model(model)
    try:
        t0, t1 = (float(x) for x in t_span)
    except (TypeError, ValueError):
        raise ShapeError(f"t_span must be two times (t0, t1), got {t_span!r}") from None
    if not (np.isfinite(t0) and np.isfinite(t1) and t1 > t0):
        raise ShapeError(f"t_span must increase between finite times, got {t_span}")
    q0 = model.normalize_q(q0)
    qd0 = np.zeros(model.nv) if qd0 is None else model.check_qd(qd0, name="qd0")
    if q0.ndim != 1 or qd0.ndim != 1:
        raise ShapeError(f"simulate integrates one state: q0 of shape ({model.nq},), qd0 of "
                         f"shape ({model.nv},); got {q0.shape} and {qd0.shape}")
    model.check_state(q0, qd0, t=t0)
    return t0, t1, q0, qd0, tau_function(model, tau)


def _check_forward_dynamics(model, forward_dynamics, options):
    """Named errors for a formulation given as a string or a module, arguments swapped,
    options the function does not take."""
    if isinstance(forward_dynamics, Model) and callable(model):
        raise ShapeError("mb.sim.simulate(model, forward_dynamics, t_span, q0, ...): the model "
                         "and the function are swapped")
    if isinstance(forward_dynamics, (str, types.ModuleType)):
        name = forward_dynamics if isinstance(forward_dynamics, str) else \
            forward_dynamics.__name__.replace("mbcourse.", "mb.")
        raise ShapeError(
            f"mb.sim.simulate takes a forward_dynamics function second, got "
            f"{type(forward_dynamics).__name__} {name!r}: pass e.g. mb.tree.forward_dynamics, "
            f"or call the formulation's own simulate, e.g. mb.tree.simulate(model, t_span, q0, "
            "qd0, tau)")
    if not callable(forward_dynamics):
        raise ShapeError(f"forward_dynamics must be a function forward_dynamics(model, q, qd, "
                         f"tau, *, t) such as mb.tree.forward_dynamics, got "
                         f"{type(forward_dynamics).__name__}")
    try:
        spec = inspect.getfullargspec(forward_dynamics)
    except TypeError:  # no signature to inspect: trust it
        return
    if spec.varkw is not None:
        return
    valid = [n for n in spec.kwonlyargs if n != "t"]
    name = getattr(forward_dynamics, "__qualname__", "forward_dynamics")
    module = getattr(forward_dynamics, "__module__", None) or ""
    if module.startswith("mbcourse"):      # the public name: mb.tree, not mb.tree.general
        parent = module.rsplit(".", 1)[0]
        if getattr(sys.modules.get(parent), name, None) is forward_dynamics:
            module = parent
        name = f"{module.replace('mbcourse', 'mb', 1)}.{name}"
    refuse_options(f"simulate with {name}",
                   {k: v for k, v in options.items() if k not in valid},
                   valid + ["max_step", "dense_output"])


# -------------------------------------------------------------------- integration
def simulate(model, forward_dynamics, t_span, q0, qd0=None, tau=None, *, method="DOP853",
             rtol=1e-10, atol=1e-10, t_eval=None, max_step=np.inf, dense_output=False,
             **options):
    """Integrate ``dq/dt = qdot(q, qd)``, ``dqd/dt = forward_dynamics(model, q, qd, tau, t=t)``.

    Parameters
    ----------
    model : Model
        A tree (closed loops are refused, see below).
    forward_dynamics : callable
        ``forward_dynamics(model, q, qd, tau, *, t, **options)``, e.g.
        ``mb.tree.forward_dynamics``, ``mb.vereshchagin.forward_dynamics`` (a string or a
        module is refused: ``mb.tree.simulate(model, ...)`` is the formulation's own).
    t_span : (float, float)
        Increasing start and end times.
    q0, qd0 : array_like, shapes (nq,), (nv,)
        Initial state (quaternions are normalized); ``qd0=None`` is rest.
    tau : None, array_like (nv,) or callable ``tau(t, q, qd)``
        Generalized forces besides the model's own force elements (:func:`tau_function`).
    method : str
        The ODE integrator of :func:`scipy.integrate.solve_ivp` (:data:`METHODS`).
    rtol, atol, t_eval, max_step, dense_output
        Passed to :func:`scipy.integrate.solve_ivp` (``t_eval`` within ``t_span``).
    **options
        Passed to ``forward_dynamics`` (e.g. ``solver="ldlt"`` for
        ``mb.cartesian.forward_dynamics``); an option it does not take is refused.

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
    ShapeError
        A wrong argument (named), e.g. the formulation given as a string or a module.
    IntegrationError
        The integration stopped early (the message says whether the motion blew up).
    """
    if getattr(model, "_mimics", None):
        _check_forward_dynamics(model, forward_dynamics, options)
        return _coupling.simulate(simulate, model, forward_dynamics, t_span, q0, qd0, tau,
                                  method=method, rtol=rtol, atol=atol, t_eval=t_eval,
                                  max_step=max_step, dense_output=dense_output, **options)
    _check_forward_dynamics(model, forward_dynamics, options)
    t0, t1, q0, qd0, tau_fn = initial_state(model, t_span, q0, qd0, tau)
    method, t_eval = check_method(method), check_t_eval(t_eval, t0, t1)
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
    sol = integrate("mb.sim.simulate", rhs, t0, t1, y0, lambda y: y[nq:nq + nv],
                    method=method, rtol=rtol, atol=atol, t_eval=t_eval, max_step=max_step,
                    dense_output=dense_output)
    q = model.normalize_q(sol.y[:nq].T)
    dissipated = sol.y[-1] if data.damped else None
    return Trajectory(model, sol.t, q, sol.y[nq:nq + nv].T, sol, dissipated)


def _full_rhs(model, forward_dynamics, data, tau_fn, options):
    nq, nv = model.nq, model.nv
    dissipated = _dissipation(model) if data.damped else None

    def rhs(t, y):
        q = model.normalize_q(y[:nq])
        qd = y[nq:nq + nv]
        forces = None if tau_fn is None else tau_fn(t, q, qd)
        parts = [model_poses.qdot(model, q, qd),
                 forward_dynamics(model, q, qd, forces, t=t, **options)]
        if dissipated is not None:
            parts.append(np.atleast_1d(dissipated(q, qd, t)))
        return np.concatenate(parts)

    return rhs


def _dissipation(model):
    """``(q, qd, t) -> `` the power the dampers take out (the rate of the dissipated-energy
    channel): compiled (:func:`mbcourse.kernels.common.dissipation`) for the models the
    kernels pack, :func:`mbcourse.forces.damping_power` otherwise or where the kernel
    declines."""
    packed = model_data(model)
    if packed is not None and packed.base_moves:    # the kernel's base would stand still
        packed = None

    def power(q, qd, t):
        if packed is not None:
            P = dissipation(*packed.args(), np.ascontiguousarray(q, dtype=float),
                            np.ascontiguousarray(qd, dtype=float))
            if np.isfinite(P):
                return P
        return -model_forces.damping_power(model, q, qd, t)

    return power


def simulator(forward_dynamics, name):
    """The formulation's own ``simulate(model, t_span, q0, qd0=None, tau=None, *, method,
    rtol, atol, t_eval, **options)``: :func:`simulate` with ``forward_dynamics``.

    ``name`` is the function's public name (``"mb.tree.simulate"``), used in its docstring.

    Examples
    --------
    >>> import mbcourse as mb
    >>> run = simulator(mb.tree.forward_dynamics, "mb.tree.simulate")
    >>> run(mb.models.double_pendulum(), (0.0, 0.1), [0.3, 0.0]).q.shape[1]
    2
    """
    def simulate_(model, t_span, q0, qd0=None, tau=None, *, method="DOP853", rtol=1e-10,
                  atol=1e-10, t_eval=None, max_step=np.inf, dense_output=False, **options):
        return simulate(model, forward_dynamics, t_span, q0, qd0, tau, method=method,
                        rtol=rtol, atol=atol, t_eval=t_eval, max_step=max_step,
                        dense_output=dense_output, **options)

    simulate_.__name__ = simulate_.__qualname__ = "simulate"
    simulate_.__doc__ = (
        f"Integrate the motion with ``{forward_dynamics.__module__.replace('mbcourse', 'mb')}."
        f"forward_dynamics``: :func:`mbcourse.sim.simulate` with that function.\n\n"
        f"    ``{name}(model, t_span, q0, qd0=None, tau=None, *, method, rtol, atol, t_eval, "
        "**options)`` -- the signature of every formulation's ``simulate``; returns a\n"
        "    :class:`mbcourse.sim.Trajectory`. ``**options`` go to ``forward_dynamics``.\n")
    return simulate_
