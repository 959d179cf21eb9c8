"""Coupled coordinates: mimic joints, ``q_j = a q_i + b``.

A mimic joint (the Panda's second finger follows the first) has no coordinate of its own: a
Model with mimic joints (:meth:`mbcourse.Model.add_mimic`) has the *independent*
coordinates only, ``nq`` and ``nv`` count them, ``q_names`` names them, and the
formulations, the simulations of :mod:`mbcourse.sim`, the energies, poses, kinematics and
views take and return them. The joints keep their own coordinates (the *full* ones,
``joint.q_slice``): a formulation runs on the model without the couplings
(:attr:`Coupling.full`, the same bodies and joints) and this module maps its input and
output:

* the configuration and the speeds expand, ``q_full = expand(q)`` (the mimic joint's
  coordinate is ``a q_i + b``), ``qd_full = G qd``, ``qdd_full = G qdd`` with the constant
  ``G`` (nv_full, nv): one column per independent speed, ``a`` in the mimic joint's row;
* generalized forces reduce, ``tau = G^T tau_full`` (a mass matrix ``G^T M G``, a Jacobian
  ``J G``); a force given in the independent coordinates acts on its own joint;
* forward dynamics keeps the couplings by one multiplier per mimic joint. With ``C``
  (m, nv_full) the rows ``qdd_j - a qdd_i`` (so ``C G = 0``) and ``f(tau)`` the formulation's
  own ``qdd`` on the full model, which is affine in ``tau`` (``M qdd = tau + ...``):

  ``qdd_full = f(tau + C^T lam)``,  ``C qdd_full = 0``  ->  ``(C W) lam = -C f(tau)``,
  ``W = M^-1 C^T``, each column the formulation's own answer to the force ``C^T e_r``
  (``(f(tau + s C^T e_r) - f(tau)) / s``). Multiplying ``M qdd = tau + C^T lam`` by ``G^T``
  gives ``G^T M G qdd = G^T tau`` (Lagrange's equations in the independent coordinates,
  with ``qdd_full = G qdd`` from ``C qdd_full = 0``). The formulation runs once, on the
  ``1 + m`` states of the answer and the ``m`` probes in one batch, whatever the
  formulation, so every formulation keeps its own algorithm (the O(n) recursion stays O(n)).

Functions that do not take coupled coordinates refuse a model with mimic joints by name
(:func:`refusal`) and point to ``model.uncoupled()``.

Examples
--------
>>> import numpy as np, mbcourse as mb
>>> m = mb.Model(gravity=(0, 0, -9.81))
>>> for name in ("left", "right"):
...     _ = m.add_body(name, 0.1, [1e-4, 1e-4, 1e-4])
...     _ = m.add_joint(name, "prismatic", "ground", name, axis=(1, 0, 0))
>>> _ = m.add_mimic("right", "left", multiplier=-1.0)
>>> m.nq, m.q_names, m.uncoupled().nq
(1, ['left.displacement'], 2)
>>> m.coupling.q([0.02]).tolist()
[0.02, -0.02]
>>> float(mb.tree.forward_dynamics(m, [0.0], [0.0], [0.2])[0])   # two fingers, 0.2 kg
1.0
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from .errors import ModelError, ShapeError, SingularSystemError

__all__ = ["Mimic", "Coupling", "coupled", "constrained", "refusal", "simulate"]

#: The scale of the probing force ``s C^T e_r`` relative to ``1 + max|tau|``: large, so that
#: ``f(tau + s C^T e_r) - f(tau)`` loses no digits to the answer ``f(tau)`` (any ``s`` is exact
#: in exact arithmetic, ``f`` being affine in ``tau``); a power of two.
PROBE = 2.0 ** 20


class Mimic:
    """``joint``'s coordinate is ``multiplier * primary + offset`` (names of one-coordinate
    joints)."""

    __slots__ = ("joint", "primary", "multiplier", "offset")

    def __init__(self, joint, primary, multiplier, offset):
        for key, value in zip(self.__slots__, (joint, primary, multiplier, offset)):
            object.__setattr__(self, key, value)

    def __setattr__(self, attr, value):
        raise ModelError(f"a coupling is fixed once added (Mimic.{attr}); build the model "
                         "again, or start from model.uncoupled() and add_mimic anew")

    def __reduce__(self):                      # copies (Model.copy) rebuild it
        return (Mimic, tuple(getattr(self, k) for k in self.__slots__))

    def __repr__(self):
        return (f"Mimic({self.joint!r} = {self.multiplier:g} * {self.primary!r} "
                f"{'+' if self.offset >= 0 else '-'} {abs(self.offset):g})")

    def __eq__(self, other):
        return isinstance(other, Mimic) and all(getattr(self, k) == getattr(other, k)
                                                for k in self.__slots__)


class Coupling:
    """The map between a coupled model's independent coordinates and its joints' own
    (built by :attr:`mbcourse.Model.coupling`, once per model version).

    Attributes
    ----------
    full : Model
        The model without the couplings (its joints' own coordinates); the one the
        formulations run on. Force callables of the coupled model see the independent
        coordinates in it, as they were written for. Editing it does not edit the model:
        the next use of ``model.coupling`` builds it again from the model.
    iq, iv : ndarray of int
        Positions of the independent coordinates and speeds in the full ones.
    G : ndarray, shape (nv_full, nv)
        ``qd_full = G qd``.
    C : ndarray, shape (m, nv_full)
        The coupling rows, ``C qd_full = 0``.
    """

    def __init__(self, model):
        joints = {j.name: j for j in model.joints}
        mimics = model.mimics
        self.mimics = mimics
        self.full = model._uncoupled(self)
        self.full_version = self.full.version    # an edit of ``full`` is not the model's
        nqf, nvf = self.full.nq, self.full.nv
        dq = [joints[c.joint].q_slice.start for c in mimics]
        dv = [joints[c.joint].v_slice.start for c in mimics]
        self.iq = np.setdiff1d(np.arange(nqf), dq)
        self.iv = np.setdiff1d(np.arange(nvf), dv)
        self.nq, self.nv = self.iq.size, self.iv.size
        self._dq, self._pq = np.array(dq, int), np.array(
            [joints[c.primary].q_slice.start for c in mimics], int)
        self._dv, self._pv = np.array(dv, int), np.array(
            [joints[c.primary].v_slice.start for c in mimics], int)
        self._a = np.array([c.multiplier for c in mimics])
        self._b = np.array([c.offset for c in mimics])
        G = np.zeros((nvf, self.nv))
        G[self.iv, np.arange(self.nv)] = 1.0
        column = {v: k for k, v in enumerate(self.iv)}
        for r, (d, p) in enumerate(zip(self._dv, self._pv)):
            G[d, column[p]] = self._a[r]
        self.G = G
        self.C = np.zeros((len(mimics), nvf))
        self.C[np.arange(len(mimics)), self._dv] = 1.0
        self.C[np.arange(len(mimics)), self._pv] = -self._a
        self.G.flags.writeable = self.C.flags.writeable = False
        self.q_names = [self.full.q_names[k] for k in self.iq]
        self.qd_names = [self.full.qd_names[k] for k in self.iv]

    # ----------------------------------------------------------- the coordinates
    def check(self, name, value, speeds):
        """``value`` as a real finite array (..., nv) or (..., nq) of the independent
        coordinates (ShapeError naming ``name`` and the coordinates otherwise)."""
        from .state import check_array
        names = self.qd_names if speeds else self.q_names
        full = self.full.nv if speeds else self.full.nq
        if np.shape(value)[-1:] == (full,) != (len(names),):
            raise ShapeError(
                f"{name} has {full} entries, the joints' own coordinates; this model's mimic "
                f"joints ({self.describe()}) leave {len(names)} independent ones "
                f"({', '.join(names)}). Pass those, or use model.uncoupled() for independent "
                "joints")
        return check_array(name, value, len(names), lambda: names)

    def q(self, q):
        """Full configuration from the independent one, (..., nq) -> (..., nq_full)."""
        q = self.check("q", q, False)
        out = np.empty(q.shape[:-1] + (self.full.nq,))
        out[..., self.iq] = q
        out[..., self._dq] = self._a * out[..., self._pq] + self._b
        return out

    def qd(self, qd, name="qd"):
        """Full speeds (or accelerations) from the independent ones, ``G qd``."""
        qd = self.check(name, qd, True)
        out = np.empty(qd.shape[:-1] + (self.full.nv,))
        out[..., self.iv] = qd
        out[..., self._dv] = self._a * out[..., self._pv]
        return out

    def tau(self, tau):
        """A generalized force of the independent coordinates as one on the full ones (on
        the independent joints, zero on the mimic joints: ``G^T`` of it is ``tau``)."""
        if tau is None:
            return None
        tau = self.check("tau", tau, True)
        out = np.zeros(tau.shape[:-1] + (self.full.nv,))
        out[..., self.iv] = tau
        return out

    def force_function(self, tau):
        """``tau`` for a simulation: None, an array or a callable ``tau(t, q, qd)`` of the
        independent coordinates, as one of the full coordinates."""
        if tau is None or not callable(tau):
            return self.tau(tau)

        @functools.wraps(tau)
        def full(t, q, qd):
            out = tau(t, self.reduce_q(q), self.reduce_qd(qd))
            if out is None or np.shape(out) != (self.nv,):
                raise ShapeError(
                    f"tau(t, q, qd) must return the generalized forces of the independent "
                    f"coordinates, an array of shape ({self.nv},) ({', '.join(self.qd_names)});"
                    f" it returned {'None' if out is None else f'shape {np.shape(out)}'} at "
                    f"t={t}")
            return self.tau(out)
        return full

    def reduce_q(self, q):
        """The independent coordinates of a full configuration, (..., nq_full) -> (..., nq)."""
        return np.asarray(q)[..., self.iq]

    def reduce_qd(self, qd):
        """The independent speeds (or accelerations) of full ones."""
        return np.asarray(qd)[..., self.iv]

    def reduce_force(self, tau_full):
        """``G^T tau_full``: a generalized force of the full coordinates in the independent
        ones (the same power for every motion that keeps the couplings)."""
        return np.asarray(tau_full) @ self.G

    def describe(self):
        """The couplings in words, for messages."""
        return ", ".join(f"{c.joint!r} = {c.multiplier:g} * {c.primary!r} + {c.offset:g}"
                         for c in self.mimics)


# --------------------------------------------------------------- forward dynamics
def constrained(forward, coupling, q, qd, tau, *, t=0.0, what="forward dynamics",
                batched=True, **options):
    """Accelerations of the full coordinates that keep the couplings, ``G qdd``: the
    formulation ``forward(model, q, qd, tau, t=t, **options)`` on ``coupling.full`` with one
    multiplier per mimic joint (the module's derivation). ``q``, ``qd``, ``tau`` are full
    arrays (any batch); ``tau`` may be None. ``batched=False`` calls ``forward`` once per
    state (a user's function of one state)."""
    full, C = coupling.full, coupling.C
    m, nv = C.shape
    q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    tau = np.zeros(nv) if tau is None else np.asarray(tau, dtype=float)
    batch = _batch(what, q=q, qd=qd, tau=tau)
    scale = PROBE * (1.0 + np.abs(tau).max(initial=0.0))
    # one call of the formulation on 1 + m states: the answer and the m probing forces
    Q = np.empty((m + 1,) + batch + q.shape[-1:])
    Q[...] = q
    QD = np.empty((m + 1,) + batch + (nv,))
    QD[...] = qd
    T = np.empty(QD.shape)
    T[...] = tau
    T[1:] += (scale * C).reshape((m,) + (1,) * len(batch) + (nv,))
    try:
        if batched:
            out = np.asarray(forward(full, Q, QD, T, t=t, **options), dtype=float)
        else:
            out = np.array([forward(full, *x, t=t, **options) for x in zip(Q, QD, T)],
                           dtype=float)
    except SingularSystemError as exc:
        raise SingularSystemError(
            f"{what}: the couplings ({coupling.describe()}) are kept by multipliers, which "
            "need the mass matrix of the joints' own coordinates to be regular, and it is "
            f"singular here ({exc}). The coupled model's own mass matrix "
            "(mb.tree.mass_matrix(model, q)) may still be regular: solve "
            "G^T A G q'' = G^T (B + tau) with it (robots page R.9)") from None
    f0 = out[0]
    W = (out[1:] - f0) / scale                    # (m, ..., nv): M^-1 C^T, one row per mimic
    if m == 1 and not batch:                        # one mimic joint, one state
        c0, w0 = C[0], W[0]
        out = f0 - (c0 @ f0) / (c0 @ w0) * w0
        return _finite(out, coupling, what)
    CW = np.moveaxis(W @ C.T, 0, -1)               # (..., m, m): C M^-1 C^T
    rhs = -(f0 @ C.T)
    if m == 1:
        lam = rhs / CW[..., 0]
    else:
        try:
            lam = np.linalg.solve(CW, rhs[..., None])[..., 0]
        except np.linalg.LinAlgError:
            lam = np.full(rhs.shape, np.nan)
    return _finite(f0 + sum(W[r] * lam[..., r, None] for r in range(m)), coupling, what)


def _batch(what, **arrays):
    """The common batch shape of the arrays (ShapeError naming them when they differ)."""
    try:
        return np.broadcast_shapes(*(np.shape(a)[:-1] for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k} {np.shape(a)}" for k, a in arrays.items())
        raise ShapeError(f"{what}: batch shapes do not match ({shapes}): give one state or "
                         "batches that broadcast") from None


def _finite(out, coupling, what):
    if not np.isfinite(out).all():
        raise SingularSystemError(
            f"{what}: the couplings {coupling.describe()} could not be kept (C M^-1 C^T is "
            "singular: a mimic joint or its primary moves no mass here)")
    return out


# ------------------------------------------------------------------ the wrapper
def caller():
    """``mb.module.function`` of the outermost mbcourse function on the stack that is not
    the model's or the checks' own (for a refusal's message)."""
    name = "this function"
    for frame in inspect.stack(context=0)[1:]:
        module = frame.frame.f_globals.get("__name__", "")
        if not module.startswith("mbcourse"):
            break
        if module.split(".")[-1] not in ("state", "model", "coupling") and \
                not frame.function.startswith("_"):
            parts = module.split(".")[1:]
            if parts and parts[-1] == frame.function:      # mb.cartesian.simulate.simulate
                parts = parts[:-1]
            name = "mb." + ".".join(parts + [frame.function])
    return name


def refusal(model, what):
    """The ModelError for a function that does not take coupled coordinates."""
    return ModelError(
        f"{what} works on the joints' own coordinates, and this model has mimic joints "
        f"({model.coupling.describe()}): its nq = {model.nq} counts the independent ones. "
        "Call it with model.uncoupled() (independent joints, nq = "
        f"{model.coupling.full.nq}) and model.coupling.q(q), model.coupling.qd(qd); the "
        "forward dynamics of every formulation, the simulations of mb.sim, the energies, "
        "poses, kinematics and views take the coupled model itself")


_INPUTS = {"q": "q", "Q": "q", "qd": "qd", "v": "qd", "qdd": "qdd", "tau": "tau"}


def coupled(kind, what=None):
    """Decorate a public function ``fn(model, ...)`` so that a model with mimic joints is
    handled in its independent coordinates; a model without them passes straight through.

    ``kind`` says what the function returns:

    * ``"state"``: quantities that do not count coordinates (energies, poses, wrenches,
      views): only the inputs ``q``, ``qd``, ``qdd``, ``tau`` are expanded;
    * ``"q"``: a configuration or its rate, the independent entries of the full one;
    * ``"momenta"``: Ivanov's ``(p, mu)``, ``p`` reduced as a force;
    * ``"velocities"``: Ivanov's speeds from the momenta ``p`` (``G^T`` of the full ones),
      :func:`constrained` on ``f(p) = M^-1 p``;
    * ``"forward"``: accelerations, :func:`constrained`, then the independent ones;
    * ``"force"``: generalized forces, ``G^T`` of the full ones;
    * ``"matrix"``: a square matrix of the speeds, ``G^T M G``;
    * ``"columns"``: a matrix with a column per speed (a Jacobian), ``J G``;
    * ``"refuse"``: a function that does not take coupled coordinates (:func:`refusal`).
    """
    def decorate(fn):
        signature = inspect.signature(fn)
        name = what or f"mb.{fn.__module__.split('.', 1)[1]}.{fn.__name__}"

        @functools.wraps(fn)
        def wrapper(model, *args, **kwargs):
            if not getattr(model, "_mimics", None):
                return fn(model, *args, **kwargs)
            if kind == "refuse":
                raise refusal(model, name)
            if kind == "forward" and 2 <= len(args) <= 3 and not kwargs.keys() - {"t"}:
                c = model.coupling                 # the common call, without binding
                tau = args[2] if len(args) > 2 else None
                return c.reduce_qd(constrained(
                    fn, c, c.q(args[0]), c.qd(args[1]), None if tau is None else c.tau(tau),
                    t=kwargs.get("t", 0.0), what=name))
            return _call(fn, kind, name, signature, model, args, kwargs)
        wrapper.__signature__ = signature     # inspect.getfullargspec sees fn's options
        return wrapper
    return decorate


def _call(fn, kind, name, signature, model, args, kwargs):
    try:
        bound = signature.bind(model, *args, **kwargs)
    except TypeError as exc:
        raise ShapeError(f"{name}: {exc}") from None
    c = model.coupling
    values = bound.arguments
    for arg, role in _INPUTS.items():
        if arg not in values or values[arg] is None:
            continue
        if role == "q":
            values[arg] = c.q(values[arg])
        elif role == "tau":
            values[arg] = c.tau(values[arg])
        else:
            values[arg] = c.qd(values[arg], arg)
    present = {k: values[k] for k in _INPUTS if values.get(k) is not None}
    if len(present) > 1:
        _batch(name, **present)
    values["model"] = c.full
    if kind == "forward":
        rest = {k: v for k, v in values.items() if k not in ("model", "q", "qd", "tau")}
        t = rest.pop("t", 0.0)
        q, qd = values["q"], values.get("qd")
        if qd is None:
            qd = np.zeros(np.shape(q)[:-1] + (c.full.nv,))
        return c.reduce_qd(constrained(fn, c, q, qd, values.get("tau"), t=t, what=name,
                                       **rest))
    if kind == "velocities":       # Ivanov's qd from p: f(p) = M^-1 p, linear
        rest = {k: v for k, v in values.items() if k not in ("model", "q", "p")}
        if rest.get("return_momenta"):
            raise refusal(model, f"{name}(..., return_momenta=True)")
        t = rest.pop("t", 0.0)

        def solve(full, q, qd, p, *, t=0.0, **options):
            return fn(full, q, p, t=t, **options)
        p = c.tau(values["p"])
        return c.reduce_qd(constrained(solve, c, values["q"], np.zeros_like(p), p, t=t,
                                       what=name, **rest))
    out = fn(*bound.args, **bound.kwargs)
    if kind == "q":
        return c.reduce_q(out)
    if kind == "force":
        return c.reduce_force(out)
    if kind == "momenta":          # (p, mu): the momenta reduce, the bodies' stay
        return (c.reduce_force(out[0]),) + tuple(out[1:])
    if kind == "matrix":
        return c.G.T @ np.asarray(out) @ c.G
    if kind == "columns":
        return np.asarray(out) @ c.G
    return out


# -------------------------------------------------------------------- simulation
def simulate(run, model, forward_dynamics, t_span, q0, qd0=None, tau=None, **options):
    """:func:`mbcourse.sim.simulate` (``run``) of a model with mimic joints: the full model
    integrated with the couplings kept by :func:`constrained` (``C qdd = 0`` from a state
    with ``C qd = 0``; a Runge-Kutta step keeps a linear invariant, so the coordinates stay
    coupled to rounding), the result in the independent coordinates (``sol.full``: the ODE
    result as integrated, in the joints' own coordinates)."""
    from .sim import Trajectory
    c = model.coupling
    # the library's formulations take batches; a user's function gets one state per call
    batched = getattr(forward_dynamics, "__module__", "").startswith("mbcourse")

    @functools.wraps(forward_dynamics)
    def keep_couplings(full, q, qd, tau=None, *, t=0.0, **kw):
        return constrained(forward_dynamics, c, q, qd, tau, t=t, what="mb.sim.simulate",
                           batched=batched, **kw)

    qd0 = None if qd0 is None else c.qd(qd0, "qd0")
    res = run(c.full, keep_couplings, t_span, c.q(q0), qd0, c.force_function(tau), **options)
    return Trajectory(model, res.t, c.reduce_q(res.q), c.reduce_qd(res.qd),
                      _reduced_result(res.sol, c), res.dissipated)


def _reduced_result(sol, c):
    """The ODE result with its state ``y`` (and dense output) in the independent
    coordinates: ``q``, ``qd`` and, with dampers, the dissipated energy; ``full`` is the
    result as integrated, in the joints' own coordinates."""
    nqf = c.full.nq
    rows = np.concatenate([c.iq, nqf + c.iv, np.arange(nqf + c.full.nv, len(sol.y))])
    out = type(sol)(sol)
    out.full = sol
    out.y = sol.y[rows]
    if getattr(sol, "sol", None) is not None:
        dense = sol.sol
        out.sol = lambda t: np.asarray(dense(t))[rows]
    return out
