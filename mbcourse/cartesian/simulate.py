"""Simulation in absolute coordinates: the index-1 DAE of chapter 2 (Yudintsev section 2).

In absolute coordinates the equations of motion are the Newton–Euler equations of every
body plus the joints' constraint rows at the acceleration level (2.22), (2.49)::

    M ddX = F + Q^T lam,      Q ddX = b.

Solved for ``ddX`` at every instant, they are an ordinary differential equation for the
absolute coordinates of all moving bodies, which :func:`simulate` hands to
``scipy.integrate.solve_ivp``. Only the *second derivative* of the constraints (2.22) is
imposed, so this is an index-1 DAE: the initial positions and velocities must satisfy the
position and velocity constraints themselves (consistent initial conditions,
:func:`project`, :func:`consistent_state`), and the integration error lets the position
residual ``g`` and the velocity residual ``Q dX`` drift away from zero, the drift growing
roughly linearly (velocities) and quadratically (positions) in time.

**Baumgarte stabilization.** The acceleration-level rows are replaced by::

    Q ddX = b - 2 alpha Q dX - beta^2 g,   i.e.   g'' + 2 alpha g' + beta^2 g = 0,

a damped oscillator for the residual that pulls it back to zero (critically damped for
``alpha = beta``). The rows of :mod:`.constraints` are exact derivatives of their ``g``,
so ``Q dX`` is exactly ``g'``.

State vector ``y`` (our choice, used everywhere in this module): first the positions of the
moving bodies ``1..n`` in order, then their velocities:

* spatial: ``[r_1 (3), quat_1 (4), ..., r_n, quat_n, v_1 (3), w_1 (3), ..., v_n, w_n]``,
  13 numbers per body; ``r``, ``v`` inertial axes, ``quat`` the unit quaternion
  (scalar first) of ``A`` (body axes -> inertial axes), ``w`` the angular velocity in
  **body** axes (the book's ``omega``, so ``dX = (v, w)`` is exactly what the rows act on);
* planar: ``[x_1, y_1, phi_1, ..., x_n, y_n, phi_n, vx_1, vy_1, dphi_1, ...]``, 6 per body
  (the height ``z`` of every body is constant, :attr:`Prepared.z_levels`).

:func:`to_generalized` takes such states back to the Model's ``q, qd`` (every joint's
coordinates from the relative pose of its two bodies): the forces that depend on them
(joint springs, generalized forces, loads and ``tau`` as callables ``f(t, q, qd)``) act
during the simulation, and the result carries ``q``, ``qd``.

Quaternions: ``dquat/dt = W(quat) w`` (``spatial.quat_rate_matrix``) keeps ``|quat|`` in
exact arithmetic; the integrator does not. The orientation matrix is always built from the
*normalized* quaternion, and with ``normalize=True`` the derivative also gets the term
``-QUATERNION_GAIN (|quat|^2 - 1) quat`` (``QUATERNION_GAIN = 1 s^-1``), which vanishes on
unit quaternions and makes the unit sphere attracting (rate ``2 k``, far from stiff); the
output quaternions are normalized.

Choice of the default Baumgarte parameters, by measurement (``benchmarks/baumgarte_study.py``;
planar forms, DOP853, 10 s, 201 output points; double pendulum released at rest from
``q = (0.3, 0.5)``, crank-slider from ``theta = 0.3 rad``, ``omega = 5 rad/s``; re-run after
the spine refactoring: the same numbers, but for the crank-slider's (20, 20) row at 1e-6,
which moved within its noise from 2.9e-7, 5.2e-6, 6881). ``drift`` is
the largest ``|g|`` over the run, ``dE`` the largest ``|E - E0| / (|E0| + max T)``,
``nfev`` the number of right-hand-side evaluations::

    rtol = atol = 1e-8       double pendulum               crank-slider
    (alpha, beta) 1/s     drift     dE      nfev        drift     dE      nfev
    (0, 0)              6.0e-08  5.8e-09   5309       6.4e-08  4.6e-07   9641
    (1, 1)              1.5e-08  5.4e-09   5366       2.6e-09  2.3e-08   9533
    (2, 2)              2.0e-08  7.6e-09   5348       1.4e-09  2.0e-08   9605
    (5, 5)              1.9e-08  8.3e-09   5444       1.2e-09  3.8e-08   9845
    (10, 10)            8.8e-09  6.2e-09   5915       9.9e-10  4.3e-08   9953
    (20, 20)            6.5e-09  7.6e-09   7121       1.3e-09  3.2e-08   9773
    (50, 50)            5.4e-10  4.8e-09  14945       6.0e-10  3.4e-08  15197
    (10, 0)             1.0e-08  5.3e-09   6014       8.6e-10  2.7e-08   9869
    (0, 10)             1.0e-08  4.3e-08   5483       2.8e-09  3.5e-08   9593
    (20, 10)            2.2e-08  1.3e-08   7277       3.3e-09  2.8e-08  10169

    rtol = atol = 1e-6
    (0, 0)              3.6e-05  8.4e-06   3248       1.1e-05  5.7e-05   6335
    (1, 1)              4.6e-06  4.9e-06   3269       1.5e-07  1.4e-05   5906
    (2, 2)              1.8e-06  2.8e-06   3341       1.8e-07  8.9e-06   6005
    (5, 5)              2.2e-06  1.1e-06   3425       1.2e-06  1.6e-05   6350
    (10, 10)            1.2e-06  9.8e-07   3692       7.2e-08  2.0e-06   6488
    (20, 20)            1.0e-06  5.2e-07   4502       1.6e-07  6.1e-06   6893
    (50, 50)            1.2e-07  3.8e-07   7973       1.1e-07  2.0e-06   8801
    (10, 0)             1.2e-06  2.1e-06   3746       9.5e-08  4.9e-06   6383
    (0, 10)             2.5e-06  6.3e-06   3287       3.6e-07  9.9e-06   6230
    (20, 10)            8.8e-07  8.2e-07   4469       1.7e-07  7.6e-06   6905

Reading: stabilization cuts the position drift of the pendulum by 7x (rtol 1e-8) to 30x
(1e-6), of the crank-slider by 64x to 150x, and the energy error of the loosely integrated
crank-slider by 10x to 30x. Above about 20 s^-1 the gains start to cost evaluations (the
residual's eigenvalues ``-alpha`` must be resolved by the explicit method: 50 s^-1 doubles
``nfev``) and barely help; below about 5 s^-1 the correction is slow and erratic.
:data:`DEFAULT_BAUMGARTE` ``= (10, 10)`` (critical damping, time constant 0.1 s) is in the
flat part of both curves at +3..14 % evaluations. The velocity residual ``Q dX`` is at the
level of the local error tolerance (it is reset by every step's error, not accumulated) and
is not improved by any gain. The maxima at the loose tolerance are noisy (single steps).
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.integrate

from .. import sim as _sim
from .. import forces as model_forces
from .. import poses as model_poses
from ..errors import InconsistentStateError, MbcourseError, ModelError, ShapeError
from ..kernels import pack_absolute, with_base_motion
from ..kernels.absolute import absolute_rhs
from ..sim import Trajectory
from ..spatial import matrix_to_quat, mv, quat_multiply, quat_rate_matrix, quat_to_matrix
from .system import (BodyStates, assemble, joint_coordinates, joint_wrenches, prepare,
                     resolve_planar)

__all__ = [
    "DEFAULT_BAUMGARTE",
    "QUATERNION_GAIN",
    "to_absolute",
    "to_generalized",
    "states_from_y",
    "rhs",
    "project",
    "consistent_state",
    "simulate",
    "Simulation",
]

#: Default ``(alpha, beta)`` of Baumgarte stabilization in 1/s (see the module docstring).
DEFAULT_BAUMGARTE = (10.0, 10.0)
#: Gain ``k`` (1/s) of the term ``-k (|quat|^2 - 1) quat`` added to ``dquat/dt``.
QUATERNION_GAIN = 1.0


# ------------------------------------------------------------------ layout
def _sizes(planar):
    """Position and velocity entries per body."""
    return (3, 3) if planar else (7, 6)


def _check_y(model, y, planar, name="y"):
    npos, nvel = _sizes(planar)
    size = model.n * (npos + nvel)
    if np.iscomplexobj(y):
        raise ShapeError(f"{name} must be real numbers, got a complex array")
    y = np.asarray(y, dtype=float)
    if y.shape[-1:] != (size,) or y.ndim > 2:
        form = "planar: (x, y, phi) and rates, 6" if planar else \
            "spatial: r, quat, v, w, 13"
        raise ShapeError(
            f"{name} must have shape ({size},) for this model ({model.n} moving bodies, {form} "
            f"numbers per body), got shape {y.shape}"
        )
    if not np.all(np.isfinite(y)):
        raise ShapeError(f"{name} contains NaN or infinity")
    return y


def _split(model, Y, planar):
    """``Y`` (B, N) -> positions (B, n, 7|3) and velocities (B, n, 6|3) (views)."""
    npos, nvel = _sizes(planar)
    n = model.n
    B = Y.shape[0]
    return Y[:, :n * npos].reshape(B, n, npos), Y[:, n * npos:].reshape(B, n, nvel)


def _rot_z(phi):
    c, s = np.cos(phi), np.sin(phi)
    A = np.zeros(phi.shape + (3, 3))
    A[..., 0, 0], A[..., 0, 1], A[..., 1, 0], A[..., 1, 1] = c, -s, s, c
    A[..., 2, 2] = 1.0
    return A


def _base(model, t):
    """Base rows ``(r, A, v, w_body, a0, dw0)`` at time ``t``."""
    if model.base_motion is None:
        return (np.zeros(3), np.eye(3), np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3))
    s = model.base_motion.state(t)
    A0 = s["orientation"]
    return (s["position"], A0, s["velocity"], A0.T @ s["angular_velocity"],
            s["acceleration"], A0.T @ s["angular_acceleration"])


def _states(model, Y, t, planar):
    """BodyStates of a batch ``Y`` (B, N) at one time ``t`` (quaternions normalized)."""
    B = Y.shape[0]
    n = model.n
    pos, vel = _split(model, Y, planar)
    r = np.zeros((B, n + 1, 3))
    A = np.zeros((B, n + 1, 3, 3))
    v = np.zeros((B, n + 1, 3))
    w = np.zeros((B, n + 1, 3))
    r0, A0, v0, w0, a0, dw0 = _base(model, t)
    r[:, 0], A[:, 0], v[:, 0], w[:, 0] = r0, A0, v0, w0
    if planar:
        r[:, 1:, :2] = pos[..., :2]
        r[:, 1:, 2] = prepare(model).z_levels[1:]
        A[:, 1:] = _rot_z(pos[..., 2])
        v[:, 1:, :2] = vel[..., :2]
        w[:, 1:, 2] = vel[..., 2]
    else:
        quat = pos[..., 3:]
        r[:, 1:] = pos[..., :3]
        A[:, 1:] = quat_to_matrix(quat / np.linalg.norm(quat, axis=-1, keepdims=True))
        v[:, 1:] = vel[..., :3]
        w[:, 1:] = vel[..., 3:]
    a0b = np.broadcast_to(np.asarray(a0, float), (B, 3)).copy()
    dw0b = np.broadcast_to(np.asarray(dw0, float), (B, 3)).copy()
    return BodyStates(r, A, v, w, a0b, dw0b)


def _states_at_times(model, Y, ts, planar):
    """BodyStates of ``Y`` (B, N) at times ``ts`` (B,): one batch unless the base moves."""
    if model.base_motion is None or Y.shape[0] == 0:
        return _states(model, Y, 0.0, planar)
    parts = [_states(model, Y[k:k + 1], float(ts[k]), planar) for k in range(Y.shape[0])]
    return BodyStates(*(np.concatenate([getattr(p, name) for p in parts])
                        for name in ("r", "A", "v", "w", "a0", "dw0")))


def _dX(states, planar):
    """Velocity vectors ``dX`` of the moving bodies, (B, n, dof)."""
    if planar:
        return np.concatenate([states.v[:, 1:, :2], states.w[:, 1:, 2:3]], axis=-1)
    return np.concatenate([states.v[:, 1:], states.w[:, 1:]], axis=-1)


# ---------------------------------------------------------------- public helpers
def to_absolute(model, q, qd=None, t=0.0, planar=None):
    """Absolute coordinates ``y`` of a state given in generalized coordinates.

    Parameters
    ----------
    model : Model
    q : array_like, shape (nq,)
    qd : array_like, shape (nv,), optional
        Generalized speeds (default zero).
    t : float
        Time (for a prescribed base motion).
    planar : bool, optional
        Planar layout (default :func:`~mbcourse.cartesian.is_planar`).

    Returns
    -------
    ndarray, shape (13 n,) or (6 n,)
        See the module docstring for the layout.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> y = mb.cartesian.to_absolute(m, [np.pi / 2, 0.0], [1.0, 0.0])
    >>> y.reshape(4, 3).round(6) + 0.0     # (x, y, phi) of both rods, then their rates
    array([[ 0.      ,  0.5     ,  1.570796],
           [ 0.      ,  1.5     ,  1.570796],
           [-0.5     ,  0.      ,  1.      ],
           [-1.5     ,  0.      ,  1.      ]])
    """
    planar = resolve_planar(model, planar)
    state = model.check_state(q, np.zeros(model.nv) if qd is None else qd, t=t)
    if state.batch != ():
        raise ShapeError(f"to_absolute takes one state: q {np.shape(q)}, qd {np.shape(qd)}")
    r, A = model_poses.body_poses(model, state.q, t)
    vel, omega = model_poses.body_velocities(model, state.q, state.qd, t, A)
    w = mv(np.swapaxes(A, -1, -2), omega)
    if planar:
        phi = np.arctan2(A[0, 1:, 1, 0], A[0, 1:, 0, 0])
        pos = np.concatenate([r[0, 1:, :2], phi[:, None]], axis=-1)
        vel = np.concatenate([vel[0, 1:, :2], w[0, 1:, 2:3]], axis=-1)
    else:
        pos = np.concatenate([r[0, 1:], matrix_to_quat(A[0, 1:])], axis=-1)
        vel = np.concatenate([vel[0, 1:], w[0, 1:]], axis=-1)
    return np.concatenate([pos.ravel(), vel.ravel()])


def states_from_y(model, y, t=0.0, planar=None):
    """Body states (base included) of an absolute-coordinate state vector.

    Parameters
    ----------
    y : array_like, shape (N,) or (B, N)
    t : float
        Time: the base row follows ``model.base_motion`` at ``t``.
    planar : bool, optional

    Returns
    -------
    BodyStates
        Batch of 1 for a single ``y``; orientations from the normalized quaternions.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> y = mb.cartesian.to_absolute(m, [0.0, 0.0], [0.0, 0.0], planar=False)
    >>> st = mb.cartesian.states_from_y(m, 2 * y, planar=False)   # quaternions of norm 2
    >>> st.r[0, 2].tolist(), bool(np.allclose(st.A[0, 2], np.eye(3)))
    ([3.0, 0.0, 0.0], True)
    """
    planar = resolve_planar(model, planar)
    y = _check_y(model, y, planar)
    return _states(model, np.atleast_2d(y), t, planar)


def _layout_of(model, y):
    """The layout (planar?) of absolute coordinates from their length."""
    size = np.shape(y)[-1] if np.ndim(y) else -1
    if size == 6 * model.n and resolve_planar(model, None):
        return True
    if size == 13 * model.n:
        return False
    raise ShapeError(
        f"absolute coordinates of this model ({model.n} moving bodies) have {13 * model.n} "
        f"numbers per state (spatial){f' or {6 * model.n} (planar)' if model.n else ''}, got "
        f"shape {np.shape(y)}"
    )


def to_generalized(model, states_or_y, t=0.0, q_ref=None):
    """The Model's coordinates ``q`` and speeds ``qd`` of absolute body states.

    Every joint's coordinates come from the relative pose of its two bodies
    (:meth:`Joint.from_pose`) and its speeds from their relative velocity
    (:meth:`Joint.speeds_from_rates`), for the joints of the spanning tree and for the
    joints that close loops alike (:func:`~mbcourse.cartesian.system.joint_coordinates`).

    Parameters
    ----------
    states_or_y : BodyStates or array_like, shape (..., N)
        Absolute coordinates in the spatial (``N = 13 n``) or planar (``6 n``) layout of the
        module docstring.
    t : float
        Time (the base's motion, for ``y``).
    q_ref : array_like, shape (nq,) or (..., nq), optional
        Picks the branch: angles get the turn count nearest to ``q_ref`` and quaternions its
        sign (without it angles lie in (-pi, pi]; a screw joint counts its turns by its
        advance anyway).

    Returns
    -------
    q, qd : ndarray, shapes (..., nq) and (..., nv)
        The batch shape of ``y`` (``(B,)`` for BodyStates).

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> y = mb.cartesian.to_absolute(m, [7.0, -0.4], [1.0, 2.0])
    >>> q, qd = mb.cartesian.to_generalized(m, y)
    >>> q.round(12), qd.round(12)
    (array([ 0.716815, -0.4     ]), array([1., 2.]))
    >>> mb.cartesian.to_generalized(m, y, q_ref=[6.5, 0.0])[0].round(12)
    array([ 7. , -0.4])
    """
    if isinstance(states_or_y, BodyStates):
        states, batch = states_or_y, (states_or_y.r.shape[0],)
    else:
        if np.iscomplexobj(states_or_y):
            raise ShapeError("y must be real numbers, got a complex array")
        y = np.asarray(states_or_y, dtype=float)
        planar = _layout_of(model, y)
        if not np.all(np.isfinite(y)):
            raise ShapeError("y contains NaN or infinity")
        batch = y.shape[:-1]
        Y = y.reshape(-1, y.shape[-1])
        states = _states(model, Y, t, planar)
    B = states.r.shape[0]
    if q_ref is not None:
        q_ref = np.asarray(model.check_q(q_ref), dtype=float)
        try:
            q_ref = np.broadcast_to(q_ref, batch + (model.nq,)).reshape(B, model.nq)
        except ValueError:
            raise ShapeError(f"q_ref of shape {q_ref.shape} does not match the states' batch "
                             f"{batch}") from None
    q, qd = joint_coordinates(model, states, q_ref)
    return q.reshape(batch + (model.nq,)), qd.reshape(batch + (model.nv,))


def _check_baumgarte(baumgarte):
    if baumgarte is None:
        return 0.0, 0.0
    try:
        alpha, beta = (float(x) for x in baumgarte)
    except (TypeError, ValueError):
        raise ShapeError(
            f"baumgarte must be a pair (alpha, beta) of non-negative numbers in 1/s, or None, "
            f"got {baumgarte!r}"
        ) from None
    if not (np.isfinite(alpha) and np.isfinite(beta) and alpha >= 0 and beta >= 0):
        raise ModelError(
            f"baumgarte=(alpha, beta) must be finite and non-negative (a negative gain makes "
            f"the constraint residual grow exponentially), got {baumgarte!r}"
        )
    return alpha, beta


def _tau_function(model, tau):
    """``tau`` (None, a constant (nv,) or a callable ``tau(t, q, qd)``) as None or a
    callable returning a checked (nv,) array: :func:`mbcourse.sim.tau_function`, the rule
    of every ``simulate``."""
    return _sim.tau_function(model, tau)


#: What the compiled right-hand side (:func:`mbcourse.kernels.absolute.absolute_rhs`) needs.
COMPILED_NEEDS = ("mb.cartesian.simulate: the compiled right-hand side needs no tau, no joint "
                  "spring, control law or load given as a callable, joint kinds with "
                  "chapter 2's rows and, with solver='ldlt', no closed loop; use compiled=None")


def _compiled_rhs(model, planar, alpha, beta, k, fallback):
    """``(f, power)``: the right-hand side on chapter 2's simulation kernel, with
    ``fallback`` (the NumPy one) for a state the kernel declines (redundant rows: once
    declined, the rest of the run stays in NumPy), and the dampers' power at the last
    state ``f`` saw (``power()``, :func:`mbcourse.forces.damping_power`, NaN after the
    fallback); None when the kernel does not apply."""
    data = pack_absolute(model, planar, prepare(model).z_levels)
    if data is None:
        return None
    gains = np.array([alpha, beta, k])
    out = np.zeros(1)
    memory = {"numpy": False}

    def f(t, y):
        if not memory["numpy"]:
            y = np.ascontiguousarray(y, dtype=float)
            dy = np.empty_like(y)
            if absolute_rhs(*with_base_motion(model, data, t), gains, y, dy, out):
                return dy
            memory["numpy"] = True
        out[0] = np.nan                             # the NumPy route has no power here
        return fallback(t, y)

    return f, lambda: -out[0]                      # mb.forces.damping_power's sign


def _make_rhs(model, planar, solver="dense", baumgarte=DEFAULT_BAUMGARTE, tau=None,
              normalize=True, redundant="raise", q_ref=None, compiled=None, with_power=False):
    """The right-hand side ``f(t, y)`` with everything precomputed.

    When the forces need the generalized state (``tau``, joint springs, generalized
    forces, loads of ``(t, q, qd)``), ``q, qd`` are recovered from the body states at every
    evaluation with the previous evaluation's ``q`` as the branch reference (so angles keep
    their turn counts: the integrator moves a little between evaluations). Otherwise, and
    unless ``compiled`` is False, the right-hand side is chapter 2's compiled kernel (the
    same equations, :func:`_compiled_rhs`); ``compiled=True`` refuses a model it cannot
    run. ``with_power``: returns ``(f, power)`` (``power()`` the dampers' power at the
    state ``f`` last saw, or None for the NumPy route).
    """
    from .solvers import SOLVERS

    if solver not in SOLVERS:
        raise ShapeError(f"solver must be one of {sorted(SOLVERS)}, got {solver!r}")
    if redundant not in ("raise", "lstsq"):
        raise ShapeError(f"redundant must be 'raise' or 'lstsq', got {redundant!r}")
    alpha, beta = _check_baumgarte(baumgarte)
    tau_fn = _tau_function(model, tau)
    prep = prepare(model)
    needs_q = tau_fn is not None or model.joint_springs or model.generalized_force_elements
    solve = SOLVERS[solver]
    n = model.n
    npos, _ = _sizes(planar)
    k = QUATERNION_GAIN if normalize else 0.0
    memory = {"q": None if q_ref is None else np.asarray(q_ref, dtype=float)}

    def f(t, y):
        Y = y[None]
        states = _states(model, Y, t, planar)
        q = qd = extra = None
        if needs_q or prep.state_loads:
            q, qd = joint_coordinates(model, states, memory["q"])
            memory["q"] = q[0]
        if needs_q:
            tau_t = model_forces.generalized_forces(model, q, qd, t)
            if tau_fn is not None:
                tau_t = tau_t + tau_fn(t, q[0], qd[0])
            if np.any(tau_t):
                extra = joint_wrenches(model, states, q, tau_t)
        eq = assemble(model, states, t, planar, extra, q=q, qd=qd)
        if alpha or beta:
            eq.b = eq.b - 2.0 * alpha * eq.gdot - beta * beta * eq.g
        ddX, _ = solve(model, eq, redundant=redundant)
        pos, vel = _split(model, Y, planar)
        if planar:
            dpos = vel[0]
        else:
            quat = pos[0, :, 3:]
            dquat = mv(quat_rate_matrix(quat), vel[0, :, 3:])
            if k:
                dquat -= k * (np.sum(quat * quat, -1, keepdims=True) - 1.0) * quat
            dpos = np.concatenate([vel[0, :, :3], dquat], axis=-1)
        return np.concatenate([dpos.reshape(n * npos), ddX[0].ravel()])

    # Baraff's LDL^T has no closed loops (the NumPy route names them): no kernel for those
    fast = (None if compiled is False or needs_q or prep.state_loads
            or (solver == "ldlt" and prep.loop_joints)
            else _compiled_rhs(model, planar, alpha, beta, k, f))
    if compiled and fast is None:
        raise ModelError(COMPILED_NEEDS)
    if fast is None:
        return (f, None) if with_power else f
    return fast if with_power else fast[0]


def rhs(model, t, y, *, planar=None, solver="dense", baumgarte=DEFAULT_BAUMGARTE, tau=None,
        normalize=True, redundant="raise", q_ref=None, compiled=None):
    """Time derivative ``dy/dt`` of the absolute coordinates (the ODE of the index-1 DAE).

    Assembles ``M ddX = F + Q^T lam``, ``Q ddX = b - 2 alpha Q dX - beta^2 g`` at the state
    ``y`` (Baumgarte stabilization, module docstring) and solves it with ``solver``.

    Parameters
    ----------
    t : float
    y : array_like, shape (N,)
    planar : bool, optional
    solver : {"dense", "schur", "ldlt"}
    baumgarte : (alpha, beta) in 1/s, or None for none
    tau : None, array_like (nv,) or callable ``tau(t, q, qd)``
        Generalized joint forces (``q, qd`` recovered with :func:`to_generalized`); the
        model's joint springs and generalized forces are added.
    normalize : bool
        Add ``-QUATERNION_GAIN (|quat|^2 - 1) quat`` to ``dquat/dt``.
    redundant : {"raise", "lstsq"}
        Redundant constraint rows (see ``forward_dynamics``).
    q_ref : array_like (nq,), optional
        Branch of the angles for :func:`to_generalized` (turn counts of joint springs).
    compiled : bool, optional
        ``None`` (default): chapter 2's compiled kernel
        (:func:`mbcourse.kernels.absolute.absolute_rhs`, the same equations) when the
        forces need no generalized state (no ``tau``, joint springs, control laws or loads
        given as callables); ``False`` NumPy always; ``True`` refuse (``ModelError``) what
        the kernel cannot run.

    Returns
    -------
    ndarray, shape (N,)
        ``(v, dquat/dt)`` or ``(v, dphi/dt)`` for the positions, ``ddX`` for the velocities.

    Examples
    --------
    A double pendulum released horizontally: the rods' centres start to fall.

    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> y = mb.cartesian.to_absolute(m, [0.0, 0.0])
    >>> dy = mb.cartesian.rhs(m, 0.0, y)
    >>> dy[:6].round(6) + 0.0, bool(dy[7] < 0 and dy[10] < 0)
    (array([0., 0., 0., 0., 0., 0.]), True)
    """
    planar = resolve_planar(model, planar)
    y = _check_y(model, y, planar)
    if y.ndim != 1:
        raise ShapeError(f"rhs takes one state y of shape (N,), got {y.shape}")
    if q_ref is not None:
        q_ref = model.check_q(q_ref)
    return _make_rhs(model, planar, solver, baumgarte, tau, normalize, redundant,
                     q_ref, compiled)(float(t), y)


# ------------------------------------------------------------------ projection
def _apply_position_step(model, Y, dX, planar):
    """``r += dr``, ``A <- A expm(skew(dtheta))`` (quaternion product), ``phi += dphi``."""
    pos, _ = _split(model, Y, planar)
    if planar:
        pos += dX
        return
    pos[..., :3] += dX[..., :3]
    dtheta = dX[..., 3:]
    angle = np.linalg.norm(dtheta, axis=-1, keepdims=True)
    half = 0.5 * angle
    # sin(a/2)/a, safe at a = 0
    sinc = np.where(angle > 1e-12, np.sin(half) / np.where(angle > 0, angle, 1.0),
                    0.5 - angle**2 / 48.0)
    dq = np.concatenate([np.cos(half), sinc * dtheta], axis=-1)
    quat = pos[..., 3:]
    quat /= np.linalg.norm(quat, axis=-1, keepdims=True)
    pos[..., 3:] = quat_multiply(quat, dq)


def project(model, y, t=0.0, planar=None, tol=1e-12, max_iter=20):
    """The nearest consistent state: positions on ``g = 0``, velocities on ``Q dX = 0``.

    Newton iterations with minimum-norm corrections (Gauss–Newton on the manifold)::

        dX = -Q^T (Q Q^T)^-1 g      (least squares / pseudo-inverse if Q Q^T is singular)

    applied as ``r += dr``, ``A <- A expm(skew(dtheta))`` with the rotation increment in body
    axes (a quaternion product), or ``x += dx``, ``phi += dphi`` in the plane; then one
    linear projection of the velocities, ``dX <- dX - Q^T (Q Q^T)^-1 Q dX``. Quaternions
    are normalized. For a state in generalized coordinates use :func:`consistent_state`.

    Parameters
    ----------
    y : array_like, shape (N,)
    t : float
        Time (matters with a prescribed base motion).
    tol : float
        Accept ``max |g| <= tol * max(1, max |r|)``.
    max_iter : int

    Returns
    -------
    ndarray, shape (N,)

    Raises
    ------
    InconsistentStateError
        If the iterations do not converge (e.g. a linkage that cannot be assembled); the
        message names the joint with the largest residual.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.crank_slider()
    >>> y = mb.cartesian.to_absolute(m, *mb.models.crank_slider_state(m, 0.5, 2.0))
    >>> y_bad = y + 1e-3 * np.cos(np.arange(y.size))     # positions and velocities off
    >>> y_ok = mb.cartesian.project(m, y_bad)
    >>> st = mb.cartesian.states_from_y(m, y_ok)
    >>> eq = mb.cartesian.assemble(m, st)
    >>> bool(np.abs(eq.g).max() < 1e-12 and np.abs(eq.gdot).max() < 1e-12)
    True
    """
    planar = resolve_planar(model, planar)
    y = _check_y(model, y, planar)
    if y.ndim != 1:
        raise ShapeError(f"project takes one state y of shape (N,), got {y.shape}")
    if not (int(max_iter) == max_iter and max_iter >= 0):
        raise ShapeError(f"max_iter must be a non-negative integer, got {max_iter!r}")
    Y = np.array(y, dtype=float)[None]
    if not planar:  # unit quaternions
        pos, _ = _split(model, Y, planar)
        pos[..., 3:] /= np.linalg.norm(pos[..., 3:], axis=-1, keepdims=True)
    for it in range(int(max_iter) + 1):
        states = _states(model, Y, t, planar)
        eq = assemble(model, states, t, planar, forces=False)
        g = eq.g[0]
        if eq.nc == 0:
            return Y[0]
        scale = max(1.0, float(np.abs(states.r).max()))
        worst = float(np.abs(g).max()) if np.all(np.isfinite(g)) else np.inf
        if worst <= tol * scale:
            break
        if it == max_iter or not np.isfinite(worst):
            row = int(np.nanargmax(np.abs(g))) if np.isfinite(worst) else 0
            joint = model.joints[eq.row_joint[row]]
            raise InconsistentStateError(
                f"project: no consistent state found after {it} Newton iterations; joint "
                f"{joint.name!r} is still violated by {worst:.3g} (tolerance "
                f"{tol * scale:.3g}); the mechanism may not be assemblable here, or the "
                "state is too far from one (try max_iter larger or a better initial guess)"
            )
        Q = eq.dense_Q()[0]
        dX = -np.linalg.lstsq(Q, g, rcond=1e-10)[0]
        _apply_position_step(model, Y, dX.reshape(1, model.n, eq.dof), planar)
    Q = eq.dense_Q()[0]
    dX = _dX(states, planar)[0].ravel()
    dX = dX - np.linalg.lstsq(Q, Q @ dX, rcond=1e-10)[0]
    _, vel = _split(model, Y, planar)
    vel[0] = dX.reshape(model.n, eq.dof)
    return Y[0]


def consistent_state(model, q, qd, t=0.0, *, planar=None, tol=1e-12, max_iter=20):
    """The nearest state that closes every loop, in the Model's coordinates.

    ``q, qd`` are taken to absolute coordinates along the spanning tree
    (:func:`to_absolute`), projected onto the position and velocity constraints of every
    joint (:func:`project`) and taken back to every joint's coordinates
    (:func:`to_generalized`, with ``q`` as the branch reference). Tree models come back
    unchanged (to round-off).

    Parameters
    ----------
    q : array_like, shape (nq,)
    qd : array_like, shape (nv,)
    t : float
    planar, tol, max_iter
        As in :func:`project`.

    Returns
    -------
    q, qd : ndarray, shapes (nq,), (nv,)

    Raises
    ------
    InconsistentStateError
        When no nearby state closes the loops (naming the joint).

    Examples
    --------
    A crank-slider whose slider coordinate does not match the crank: the slider moves to
    where the connecting rod puts it.

    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.crank_slider()
    >>> q, qd = mb.models.crank_slider_state(m, 0.5, 2.0)
    >>> q2, qd2 = mb.cartesian.consistent_state(m, q + 0.01, qd)
    >>> a = mb.cartesian.forward_dynamics(m, q2, qd2)     # accepted: the loop is closed
    >>> bool(np.abs(q2 - q).max() < 0.05)
    True
    """
    planar = resolve_planar(model, planar)
    state = model.check_state(q, qd, t=t)
    if state.batch != ():
        raise ShapeError(f"consistent_state takes one state: q {np.shape(q)}, qd {np.shape(qd)}")
    y = project(model, to_absolute(model, state.q[0], state.qd[0], t, planar), t, planar, tol,
                max_iter)
    return to_generalized(model, y, t, q_ref=state.q[0])


# ------------------------------------------------------------------ simulation
def _generalized(model, Y, ts, planar, q_ref):
    """``q, qd`` output by output, each with the previous one carried forward
    (``q + dt qdot``) as the branch reference (:func:`to_generalized`)."""
    st = _states_at_times(model, Y, ts, planar)
    _, qd = joint_coordinates(model, st)  # speeds do not depend on the branch
    q = np.zeros((ts.size, model.nq))
    ref = q_ref
    for k in range(ts.size):
        one = BodyStates(*(getattr(st, name)[k:k + 1]
                           for name in ("r", "A", "v", "w", "a0", "dw0")))
        q[k] = joint_coordinates(model, one, ref)[0][0]
        if k + 1 < ts.size:  # trapezoidal prediction of the next output
            dt = ts[k + 1] - ts[k]
            qdot = model_poses.qdot(model, q[k], 0.5 * (qd[k] + qd[k + 1]))
            ref = model_poses.normalize_q(model, q[k] + dt * qdot)
    return q, qd


@dataclass
class Simulation(Trajectory):
    """The result of :func:`simulate`: a :class:`mbcourse.sim.Trajectory` (``model`` a
    frozen copy, ``t``, ``q``, ``qd``, ``sol``, ``dissipated``, ``energy`` ...) with the
    absolute coordinates.

    Attributes
    ----------
    q : ndarray, shape (nt, nq)
        Generalized coordinates of every output (:func:`to_generalized`; angles keep their
        turn counts from one output to the next).
    qd : ndarray, shape (nt, nv)
        Generalized speeds.
    planar : bool
    y : ndarray, shape (nt, N)
        Absolute coordinates (module-docstring layout), quaternions normalized when
        ``normalize=True``.
    sol : the ``scipy.integrate.solve_ivp`` result (``sol.y`` holds the raw states)
    y0 : ndarray, shape (N,)
        The initial state used (after projection).
    initial_residual : (float, float)
        ``max |g|`` and ``max |Q dX|`` of the initial state *before* projection.
    baumgarte : (alpha, beta)

    The arrays below are computed on first use: ``r`` (nt, n + 1, 3), ``A`` (nt, n + 1,
    3, 3), ``body_v`` (centre-of-mass velocities, inertial axes) and ``body_w`` (angular
    velocities, body axes) for plotting (row 0 is the base); ``energy``,
    ``kinetic_energy``, ``potential_energy`` (gravity and springs) (nt,), from the body
    states; ``position_drift`` = ``max |g|`` and ``velocity_drift`` = ``max |Q dX|`` (nt,)
    (``constraint_drift``, the name of earlier releases, is a deprecated alias).
    """

    planar: bool = False
    y: np.ndarray = None
    y0: np.ndarray = None
    initial_residual: tuple = None
    baumgarte: tuple = None
    q_ref: np.ndarray | None = None

    def states(self, k=None):
        """BodyStates at output index ``k`` (batch of 1), or of all outputs (``k=None``)."""
        model = self._model()
        if k is None:
            return self._all_states
        return _states(model, self.y[k][None], float(self.t[k]), self.planar)

    @functools.cached_property
    def _all_states(self):
        return _states_at_times(self._model(), self.y, self.t, self.planar)

    @functools.cached_property
    def _equations(self):
        model = self._model()
        if model.base_motion is None:
            return [assemble(model, self._all_states, 0.0, self.planar, forces=False)]
        return [assemble(model, self.states(k), float(self.t[k]), self.planar,
                         forces=False) for k in range(self.t.size)]

    @property
    def r(self):
        return self.states().r

    @property
    def A(self):
        return self.states().A

    @property
    def body_v(self):
        """Centre-of-mass velocities, inertial axes, (nt, n + 1, 3)."""
        return self.states().v

    @property
    def body_w(self):
        """Angular velocities in body axes, (nt, n + 1, 3)."""
        return self.states().w

    @property
    def kinetic_energy(self):
        """``sum m v^2 / 2 + w^T J w / 2`` over the moving bodies, (nt,)."""
        st, model = self.states(), self._model()
        Jw = mv(model.inertias(), st.w[:, 1:])
        return 0.5 * (np.sum(model.masses() * np.sum(st.v[:, 1:] ** 2, -1), -1)
                      + np.sum(st.w[:, 1:] * Jw, axis=(-1, -2)))

    @property
    def potential_energy(self):
        """Potential energy of gravity and of every spring, (nt,) (the terms of
        :meth:`mbcourse.Model.potential_energy`, evaluated at the integrated body states;
        joint springs at :attr:`q`)."""
        st, model = self.states(), self._model()
        U = -np.sum(model.masses() * (st.r[:, 1:] @ model.gravity), axis=-1)
        for s in model.springs:
            Pa = st.r[:, s.body_a] + mv(st.A[:, s.body_a], s.point_a)
            Pb = st.r[:, s.body_b] + mv(st.A[:, s.body_b], s.point_b)
            U = U + s.energy(np.linalg.norm(Pb - Pa, axis=-1))
        for s in model.joint_springs:
            dq = self.q[:, s.joint.q_slice] - s.rest
            U = U + 0.5 * np.sum(s.stiffness * dq * dq, axis=-1)
        return U

    @property
    def position_drift(self):
        """Position residual ``max |g|`` over the rows, (nt,)."""
        self._model()
        return np.concatenate([np.abs(e.g).max(-1, initial=0.0) for e in self._equations])

    @property
    def velocity_drift(self):
        """Velocity residual ``max |Q dX|`` over the rows, (nt,)."""
        self._model()
        return np.concatenate([np.abs(e.gdot).max(-1, initial=0.0) for e in self._equations])

    @property
    def constraint_drift(self):
        """Deprecated name of :attr:`position_drift`."""
        warnings.warn("Simulation.constraint_drift is deprecated: use position_drift (the name "
                      "of every simulate's result)", DeprecationWarning, stacklevel=2)
        return self.position_drift

    @property
    def nfev(self):
        """Number of right-hand-side evaluations."""
        return int(self.sol.nfev)


def _residuals(model, y, t, planar):
    eq = assemble(model, _states(model, y[None], t, planar), t, planar, forces=False)
    return float(np.abs(eq.g).max(initial=0.0)), float(np.abs(eq.gdot).max(initial=0.0))


#: ``solve_ivp`` options :func:`simulate` passes on (besides method, rtol, atol, t_eval).
IVP_OPTIONS = ("events", "dense_output", "max_step", "first_step")


def _initial_y(model, t_span, q0, qd0, y0, planar):
    """``(t0, t1, y_init, q_ref)`` from ``q0, qd0`` or ``y0``."""
    ts = np.asarray(t_span, dtype=float)
    if ts.shape != (2,) or not np.all(np.isfinite(ts)):
        raise ShapeError(f"t_span must be a pair (t0, t1) of finite times, got {t_span!r}")
    if not ts[1] > ts[0]:
        raise ShapeError(f"t_span must increase (t0 < t1), got {t_span!r}")
    if y0 is not None:
        if q0 is not None or qd0 is not None:
            raise ShapeError("give either y0 or (q0, qd0), not both")
        y_init = np.array(_check_y(model, y0, planar, "y0"), dtype=float)
        if y_init.ndim != 1:
            raise ShapeError(f"y0 must have shape (N,), got {y_init.shape}")
        return ts[0], ts[1], y_init, None
    q0 = model.neutral_q() if q0 is None else q0
    y_init = to_absolute(model, q0, qd0, ts[0], planar)
    return ts[0], ts[1], y_init, np.asarray(model.check_q(q0), dtype=float)


def _dissipating(model, f, planar, q_ref, N, power=None):
    """``f`` with one more state: the energy the dampers dissipated (``-damping_power``),
    from the compiled right-hand side's ``power()`` when it has it."""
    memory = {"q": q_ref}

    def g(t, y):
        dy = f(t, y[:N])
        P = np.nan if power is None else power()
        if not np.isfinite(P):
            states = _states(model, y[None, :N], t, planar)
            q, qd = joint_coordinates(model, states, memory["q"])
            memory["q"] = q[0]
            P = model_forces.damping_power(model, q[0], qd[0], t)
        return np.concatenate([dy, -np.atleast_1d(P)])

    return g


def simulate(model, t_span, q0=None, qd0=None, tau=None, *, method="DOP853", rtol=1e-10,
             atol=1e-10, t_eval=None, y0=None, solver="dense", planar=None,
             baumgarte=DEFAULT_BAUMGARTE, project_initial=True, normalize=True,
             redundant="raise", compiled=None, **options):
    """Integrate the equations of motion in absolute coordinates (index-1 DAE).

    The one ``simulate`` signature of :mod:`mbcourse.sim` (``q0`` may be left out here).

    Parameters
    ----------
    model : Model
    t_span : (t0, t1)
        Increasing times.
    q0, qd0 : array_like, optional
        Initial state in generalized coordinates (``qd0=None`` is rest; ``q0=None`` the
        neutral configuration). Taken to absolute coordinates with :func:`to_absolute`.
    tau : None, array_like (nv,) or callable ``tau(t, q, qd)``
        Generalized joint forces (:func:`mbcourse.sim.tau_function`); ``q, qd`` are
        recovered from the body states (:func:`to_generalized`). The model's joint springs,
        generalized forces and loads act as well.
    method, rtol, atol, t_eval
        The integrator of ``scipy.integrate.solve_ivp`` (explicit methods suit the default
        gains) and its tolerances and output times.
    y0 : array_like, shape (N,), optional
        Initial state in absolute coordinates instead of ``q0, qd0``.
    solver : {"dense", "schur", "ldlt"}
        The linear algebra of the KKT system (see ``forward_dynamics``).
    planar : bool, optional
        Planar form (default :func:`~mbcourse.cartesian.is_planar`).
    baumgarte : (alpha, beta) or None
        Stabilization gains in 1/s; ``None`` or ``(0, 0)`` integrates the plain
        acceleration-level equations. Default :data:`DEFAULT_BAUMGARTE`.
    project_initial : bool
        Start from the nearest consistent state (:func:`project`): for a closed loop whose
        ``q0`` does not close it, the simulation starts from the closest state that does;
        ``initial_residual`` reports the residual of the given state.
    normalize : bool
        Quaternion norm control (module docstring); output quaternions normalized.
    redundant : {"raise", "lstsq"}
    compiled : bool, optional
        The right-hand side on chapter 2's compiled kernel (as in :func:`rhs`): ``None``
        when it applies, ``False`` NumPy, ``True`` refuse what it cannot run.
    **options
        :data:`IVP_OPTIONS` for ``scipy.integrate.solve_ivp`` (``events``,
        ``dense_output``, ``max_step``, ``first_step``); any other is refused.

    Returns
    -------
    Simulation
        A :class:`mbcourse.sim.Trajectory` with the absolute extras.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> sim = mb.cartesian.simulate(m, (0.0, 1.0), [0.0, 0.0], rtol=1e-9, atol=1e-9)
    >>> bool(np.ptp(sim.energy) < 1e-6), bool(sim.position_drift.max() < 1e-9)
    (True, True)
    >>> sim.q.shape == (sim.t.size, 2), bool(np.abs(sim.q[0]).max() < 1e-15)
    (True, True)
    """
    _sim.refuse_options("mb.cartesian.simulate",
                        {k: v for k, v in options.items() if k not in IVP_OPTIONS},
                        ["y0", "solver", "planar", "baumgarte", "project_initial", "normalize",
                         "redundant", "compiled", *IVP_OPTIONS])
    _sim.check_model(model)
    planar = resolve_planar(model, planar)
    t0, t1, y_init, q_ref = _initial_y(model, t_span, q0, qd0, y0, planar)
    method, t_eval = _sim.check_method(method), _sim.check_t_eval(t_eval, t0, t1)
    f, power = _make_rhs(model, planar, solver, baumgarte, tau, normalize, redundant, q_ref,
                         compiled, with_power=True)
    initial = _residuals(model, y_init, t0, planar)
    if project_initial:
        y_init = project(model, y_init, t0, planar)
    f(t0, y_init)  # bad forces are refused here, before the integrator starts
    N, damped = y_init.size, _sim.prepare(model).damped
    npos = model.n * _sizes(planar)[0]
    sol = _sim.integrate("mb.cartesian.simulate", _dissipating(model, f, planar, q_ref, N, power)
                         if damped else f, t0, t1,
                         np.concatenate([y_init, np.zeros(1)]) if damped else y_init,
                         lambda y: y[npos:N], method=method, rtol=rtol, atol=atol,
                         t_eval=t_eval, **options)
    Y = np.array(sol.y[:N].T)
    if normalize and not planar:
        pos, _ = _split(model, Y, planar)
        pos[..., 3:] /= np.linalg.norm(pos[..., 3:], axis=-1, keepdims=True)
    q, qd = _generalized(model, Y, sol.t, planar, q_ref)
    return Simulation(model, sol.t, q, qd, sol, sol.y[N] if damped else None, planar=planar,
                      y=Y, y0=y_init, initial_residual=initial,
                      baumgarte=_check_baumgarte(baumgarte), q_ref=q_ref)
