"""Symbolic equations of a small Model with sympy: ``H(q)``, energies, Lagrange's equations.

The kinematics of the Model (joint rotations, joint vectors and axes; parent/child points)
are rebuilt with sympy expressions, and

* ``H(q) = sum_i m_i Jv_i^T Jv_i + Jw_i^T A_i J_i A_i^T Jw_i`` (the mass matrix),
* ``T = qd^T H qd / 2``, ``U = -sum_i m_i g . r_i`` plus the energy of the springs,
  ``k (|P_b - P_a| - L0)^2 / 2`` for a spring between points ``P_a``, ``P_b``
  (:meth:`~mbcourse.Model.add_spring`) and ``k (q - q0)^2 / 2`` for a joint spring,
* Lagrange's equations ``H qdd + h = Q + tau`` with ``h = dH/dt qd - dT/dq`` and
  ``Q = -dU/dq`` plus the generalized forces of constant loads (:meth:`~mbcourse.Model.add_force`).

Only conservative, time-independent force elements have a closed form here: dampers,
loads given as functions ``f(t, q, qd)`` and generalized-force callables are refused with a
:class:`~mbcourse.errors.ModelError` naming the element (use a numeric formulation).

Numbers of the model become exact rationals (``nsimplify``); any of them can be replaced by
a symbol with ``parameters={"rod2.mass": m2, "elbow.parent_point": (L, 0, 0), ...}`` (keys:
``"<body>.mass"``, ``"<body>.inertia"`` (3x3 or 3 principal moments), ``"<joint>.parent_point"``,
``"<joint>.child_point"``). Joints: revolute, prismatic, screw, cylindrical, universal and
fixed (coordinates whose rates are the generalized speeds); each joint gives its own sympy
form (:meth:`mbcourse.joints.Joint.sympy_form`). Keep models small (up to about six joints):
symbolic expressions grow fast.

:func:`lambdify` turns the results into NumPy functions, checked against the numeric
formulations in the tests.
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass

import numpy as np

from .errors import ModelError, ShapeError
from .coupling import coupled

__all__ = ["SymbolicModel", "derive", "mass_matrix", "lambdify", "COMPILE_BASE",
           "COMPILE_PER_LINE"]

#: Largest entry of ``H`` (in sympy operations) that ``derive(simplify=True)`` simplifies.
_SIMPLIFY_OPS = 300


def _exact(x):
    import sympy as sp

    if isinstance(x, sp.Basic):
        return x
    return sp.nsimplify(float(x), tolerance=1e-12, rational=True)


def _vec(v):
    import sympy as sp

    return sp.Matrix([_exact(c) for c in v])


@dataclass
class SymbolicModel:
    """Symbolic equations of a Model.

    Attributes
    ----------
    q, qd : lists of sympy Symbols (``q1..qN``, ``dq1..dqN``)
    H : sympy Matrix (N, N), the mass matrix
    T, U : kinetic and potential energy
    h : sympy Matrix (N, 1), velocity-product forces ``dH/dt qd - dT/dq``, computed body by
        body in Kane's form ``m Jv^T (dJv/dt qd) + Jw^T (I dJw/dt qd + w x I w)`` (the same
        vector, with far smaller expressions than differentiating ``T``)
    Q : sympy Matrix (N, 1), generalized applied forces ``-dU/dq`` (gravity, springs) plus
        those of constant loads
    positions : list of sympy Matrix, centres of mass of bodies 1..n
    """

    q: list
    qd: list
    H: object
    T: object
    U: object
    h: object
    Q: object
    positions: list

    def equations(self, qdd=None, tau=None):
        """Lagrange's equations ``H qdd + h - Q - tau = 0`` as a sympy Matrix."""
        import sympy as sp

        N = len(self.q)
        qdd = sp.Matrix(qdd if qdd is not None else sp.symbols(f"ddq1:{N + 1}"))
        tau = sp.Matrix(tau if tau is not None else [0] * N)
        return self.H * qdd + self.h - self.Q - tau


@coupled("refuse")
def derive(model, parameters=None, simplify=True):
    """Derive the symbolic equations of a small tree Model.

    Parameters
    ----------
    model : Model
    parameters : dict, optional
        Symbols to use instead of the model's numbers (see the module docstring).
    simplify : bool
        Simplify ``H`` entry by entry (``expand`` then ``trigsimp``), where it pays: entries
        of more than ``_SIMPLIFY_OPS`` operations are kept as they are (``trigsimp`` of a
        six-joint arm's entries takes many minutes; :func:`lambdify` removes their common
        subexpressions instead).

    Returns
    -------
    SymbolicModel

    Examples
    --------
    A point-like bob on a rod of length ``L``, angle from the x axis, gravity ``-g y``:

    >>> import sympy as sp, mbcourse as mb
    >>> m = mb.Model(gravity=(0, -9.81, 0))
    >>> _ = m.add_body("bob", 1.0, [1e-3, 1e-3, 1e-3])
    >>> _ = m.add_joint("pin", "revolute", "ground", "bob", child_point=(-1, 0, 0),
    ...                 axis=(0, 0, 1))
    >>> L, M = sp.symbols("L M", positive=True)
    >>> s = derive(m, parameters={"bob.mass": M, "pin.child_point": (-L, 0, 0)})
    >>> s.H
    Matrix([[L**2*M + 1/1000]])
    >>> sp.simplify(s.Q[0])
    -981*L*M*cos(q1)/100
    """
    import sympy as sp

    params = _checked_parameters(model, parameters)
    N = model.nv
    q = list(sp.symbols(f"q1:{N + 1}"))
    qd = list(sp.symbols(f"dq1:{N + 1}"))
    r, A, Jw = _poses(model, q, params)
    H, h, U = _inertia_terms(model, q, qd, params, r, A, Jw)
    U += _spring_energy(model, q, r, A)
    if simplify:   # only where it pays: trigsimp's cost explodes on large entries
        H = H.applyfunc(lambda e: sp.trigsimp(sp.expand(e))
                        if sp.count_ops(e) <= _SIMPLIFY_OPS else e)
    qdv = sp.Matrix(qd)
    T = (qdv.T * H * qdv)[0] / 2
    Q = sp.Matrix([-sp.diff(U, qk) for qk in q]) + _load_forces(model, q, r, A, Jw)
    return SymbolicModel(q, qd, H, T, U, h, Q, [r[k] for k in range(1, model.n + 1)])


def _checked_parameters(model, parameters):
    """Refuse what has no symbolic form here; the ``parameters`` dict, its names checked."""
    from .model import Model

    if not isinstance(model, Model):
        raise ModelError(f"derive: model must be an mbcourse.Model, got {type(model).__name__}")
    if parameters is not None and not isinstance(parameters, dict):
        raise ModelError(f"parameters must be a dict {{'<body>.mass': symbol, ...}}, got "
                         f"{parameters!r}")
    if model.nq != model.nv:
        raise ModelError("symbolic equations need nq == nv (no spherical or free joints)")
    g = model.graph
    if not g.is_tree:
        raise ModelError("symbolic equations are derived for trees; the model has loops")
    if model.base_motion is not None:
        raise ModelError("symbolic equations assume a fixed base")
    _refuse_nonconservative(model)
    params = dict(parameters or {})
    known = {f"{b.name}.{k}" for b in model.bodies[1:] for k in ("mass", "inertia")}
    known |= {f"{j.name}.{k}" for j in model.joints for k in ("parent_point", "child_point")}
    unknown = sorted(set(params) - known)
    if unknown:
        raise ModelError(f"unknown parameter names {unknown}; valid: {sorted(known)}")
    for key, value in params.items():
        if key.endswith(".mass"):
            ok, wanted = _is_scalar(value), "one number or symbol"
        elif key.endswith(".inertia"):
            ok, wanted = np.shape(value) in ((3,), (3, 3)), "3 principal moments or a 3x3 tensor"
        else:
            ok, wanted = hasattr(value, "__len__") and len(value) == 3, "3 numbers or symbols"
        if not ok:
            raise ShapeError(f"parameters[{key!r}] must be {wanted}, got {value!r}")
    return params


def _is_scalar(value):
    """Whether ``value`` is one number or sympy expression."""
    import sympy as sp

    return isinstance(value, (numbers.Number, sp.Basic)) and not isinstance(value, sp.MatrixBase) \
        and not isinstance(value, bool)


def _poses(model, q, params):
    """Centres ``r``, rotations ``A`` and angular-velocity Jacobians ``Jw`` of every body."""
    import sympy as sp

    N, n = len(q), model.n
    A = [None] * (n + 1)
    r = [None] * (n + 1)
    Jw = [None] * (n + 1)
    A[0], r[0], Jw[0] = sp.eye(3), sp.zeros(3, 1), sp.zeros(3, N)
    for joint, forward in model.tree_traversal():
        qa = q[joint.q_slice]
        Rj, z, P = joint.sympy_form(qa)  # the joint's own rotation, vector and axes
        R = Rj * sp.Matrix(3, 3, [_exact(x) for x in joint.orientation.ravel()])
        pp = _vec(params.get(f"{joint.name}.parent_point", joint.parent_point))
        cp = _vec(params.get(f"{joint.name}.child_point", joint.child_point))
        i, c = joint.parent, joint.child
        cols = list(range(joint.v_slice.start, joint.v_slice.stop))
        if forward:
            A[c] = A[i] * R
            r[c] = r[i] + A[i] * (pp + z) - A[c] * cp
            Jw[c] = Jw[i].copy()
            for k, col in enumerate(cols):
                Jw[c][:, col] += A[i] * P[:, k]
        else:
            A[i] = A[c] * R.T
            r[i] = r[c] + A[c] * cp - A[i] * (pp + z)
            Jw[i] = Jw[c].copy()
            for k, col in enumerate(cols):
                Jw[i][:, col] -= A[i] * P[:, k]
    return r, A, Jw


def _rate(x, q, qd):
    """d/dt of an expression of q alone, along qd."""
    import sympy as sp

    return x.applyfunc(lambda e: sum(sp.diff(e, qk) * dqk for qk, dqk in zip(q, qd)))


def _inertia_terms(model, q, qd, params, r, A, Jw):
    """``H``, the velocity-product forces ``h`` and the gravity energy ``U``, body by body."""
    import sympy as sp

    N = len(q)
    H = sp.zeros(N, N)
    h = sp.zeros(N, 1)
    U = sp.Integer(0)
    gvec = _vec(model.gravity)
    qdv = sp.Matrix(qd)
    for body in model.bodies[1:]:
        k = body.index
        mass = _exact(params.get(f"{body.name}.mass", body.mass))
        Jb = params.get(f"{body.name}.inertia", body.inertia)
        Jb = sp.diag(*[_exact(x) for x in Jb]) if np.ndim(Jb) == 1 else \
            sp.Matrix(3, 3, [_exact(x) for x in np.asarray(Jb, dtype=object).ravel()])
        Jv = r[k].jacobian(q)
        I_k = A[k] * Jb * A[k].T                   # inertia tensor in inertial axes
        H += mass * Jv.T * Jv + Jw[k].T * I_k * Jw[k]
        # the velocity-product forces body by body (Kane's form of dH/dt qd - dT/dq):
        # h += m Jv^T (dJv/dt qd) + Jw^T (I (dJw/dt qd) + w x I w)
        v, w = Jv * qdv, Jw[k] * qdv
        h += mass * Jv.T * _rate(v, q, qd) + Jw[k].T * (I_k * _rate(w, q, qd)
                                                         + w.cross(I_k * w))
        U += -mass * (gvec.T * r[k])[0]
    return H, h, U


def _refuse_nonconservative(model):
    """Dampers, state- or time-dependent loads and generalized-force callables have no
    symbolic form here: refuse them by name."""
    for s in model.springs:
        if s.damping > 0:
            raise ModelError(f"spring {s.name!r} has damping {s.damping:g}: symbolic equations "
                             "hold gravity, springs and constant loads only; set its damping to "
                             "0 or use a numeric formulation (mb.tree.forward_dynamics)")
    for s in model.joint_springs:
        if np.any(s.damping > 0):
            raise ModelError(f"joint spring on {s.name!r} has damping {s.damping.tolist()}: "
                             "symbolic equations hold gravity, springs and constant loads only; "
                             "set its damping to 0 or use a numeric formulation")
    for g in model.generalized_force_elements:
        raise ModelError(f"generalized force {g.name!r} is a function f(t, q, qd): symbolic "
                         "equations hold gravity, springs and constant loads only; use a "
                         "numeric formulation (mb.tree.forward_dynamics)")
    for load in model.loads:
        if callable(load.force) or callable(load.torque):
            raise ModelError(f"load {load.name!r} is a function f(t, q, qd): symbolic equations "
                             "hold constant loads only; use a numeric formulation")


def _spring_energy(model, q, r, A):
    """``k (|P_b - P_a| - L0)^2 / 2`` of every spring, ``k (q - q0)^2 / 2`` of joint springs."""
    import sympy as sp

    U = sp.Integer(0)
    for s in model.springs:
        Pa = r[s.body_a] + A[s.body_a] * _vec(s.point_a)
        Pb = r[s.body_b] + A[s.body_b] * _vec(s.point_b)
        d = Pb - Pa
        L2 = (d.T * d)[0]
        k, L0 = _exact(s.stiffness), _exact(s.rest_length)
        U += k * L2 / 2 if s.rest_length == 0 else k * (sp.sqrt(L2) - L0) ** 2 / 2
    for s in model.joint_springs:
        for qk, k, q0 in zip(q[s.joint.q_slice], s.stiffness, s.rest):
            U += _exact(k) * (qk - _exact(q0)) ** 2 / 2
    return U


def _load_forces(model, q, r, A, Jw):
    """Generalized forces of constant loads: ``Jv_P^T F + Jw^T M`` (inertial axes)."""
    import sympy as sp

    Q = sp.zeros(len(q), 1)
    for load in model.loads:
        k = load.body
        turn = A[k] if load.frame == "body" else sp.eye(3)
        if load.force is not None:
            F = turn * _vec(load.force)
            Q += (r[k] + A[k] * _vec(load.point)).jacobian(q).T * F
        if load.torque is not None:
            Q += Jw[k].T * (turn * _vec(load.torque))
    return Q


@coupled("refuse")
def mass_matrix(model, parameters=None, simplify=True):
    """The symbolic mass matrix ``H(q)`` and its coordinates: ``(H, q)``.

    Examples
    --------
    >>> import mbcourse as mb
    >>> H, q = mass_matrix(mb.models.triple_pendulum())
    >>> H[2, 2]
    2
    """
    s = derive(model, parameters, simplify)
    return s.H, s.q


def lambdify(sym, cse=True, compiled=None):
    """NumPy functions ``mass_matrix(q)`` and ``forward_dynamics(q, qd, tau=None)``.

    Both accept one configuration, shape (N,), or a batch, shape (..., N). The expressions
    of ``H`` and of ``Q - h`` go through common-subexpression elimination (``cse=True``) and
    become two functions each: one on Python floats with the ``math`` module (a single
    configuration: no per-operation NumPy overhead) and one on NumPy arrays (a batch).

    A simulation calls ``forward_dynamics`` on one configuration thousands of times. The
    same common-subexpression code can be compiled with numba, together with a Cholesky
    solve: a six-joint arm then costs about 3 microseconds a call instead of about sixty, but
    the compilation takes seconds (about 0.25 s plus 6 ms per line of generated code, once
    per function; ``fns.compile_seconds`` records it). By default (``compiled=None``) the
    functions compile themselves once the single calls have spent as much time as the
    compilation is expected to take, the rule that never costs more than twice the better
    choice made in hindsight: one-off calls and short simulations never wait for a compiler,
    long ones get the compiled code. ``compiled=True`` compiles at once, ``False`` never.

    Parameters
    ----------
    sym : SymbolicModel
        From :func:`derive`.
    cse : bool
        Common-subexpression elimination in the generated code.
    compiled : bool or None
        ``None``: compile when the single calls have taken as long as compiling would;
        ``True``: now; ``False``: never.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> model = mb.models.double_pendulum()
    >>> fns = lambdify(derive(model))
    >>> bool(np.allclose(fns.forward_dynamics([0.3, 0.2], [1.0, -0.5]),
    ...                  mb.tree.forward_dynamics(model, [0.3, 0.2], [1.0, -0.5])))
    True
    >>> fns.forward_dynamics(np.zeros((4, 2)), np.zeros((4, 2))).shape
    (4, 2)
    >>> fast = lambdify(derive(model), compiled=True)
    >>> bool(np.allclose(fast.forward_dynamics([0.3, 0.2], [1.0, -0.5]),
    ...                  fns.forward_dynamics([0.3, 0.2], [1.0, -0.5]), rtol=1e-13))
    True
    """
    import sympy as sp

    if not isinstance(sym, SymbolicModel):
        raise ModelError(f"lambdify needs the SymbolicModel that derive(model) returns, got "
                         f"{type(sym).__name__}" + (" (call derive(model) first)"
                                                    if hasattr(sym, "bodies") else ""))
    N = len(sym.q)
    H_flat = [sym.H[i, j] for i in range(N) for j in range(i, N)]   # upper triangle
    b_flat = list(sym.Q - sym.h)
    args = list(sym.q) + list(sym.qd)
    scalar = sp.lambdify(args, H_flat + b_flat, "math", cse=cse)
    vector = sp.lambdify(args, H_flat + b_flat, "numpy", cse=cse)
    fns = _Functions(N, scalar, vector, H_flat + b_flat, args, cse, compiled)
    if compiled:
        fns._compile_now()
    return fns


def _source_lines(function):
    """Lines of a generated function's source (1000 when the source was not kept)."""
    import inspect

    try:
        return len(inspect.getsource(function).splitlines())
    except (OSError, TypeError):  # pragma: no cover - source not kept
        return 1000


class _Functions:
    """The NumPy functions :func:`lambdify` returns: ``mass_matrix(q)`` and
    ``forward_dynamics(q, qd, tau=None)``, with their compile-when-it-pays state."""

    def __init__(self, N, scalar, vector, exprs, args, cse, compiled):
        """``N`` coordinates; the ``math`` and NumPy functions of ``exprs`` (H's upper triangle
        and Q - h) of ``args`` (q, qd); ``compiled`` as in :func:`lambdify`."""
        self._N, self._scalar, self._vector = N, scalar, vector
        self._exprs, self._args, self._cse, self._auto = exprs, args, cse, compiled is None
        self._upper = np.triu_indices(N)
        self._nH = N * (N + 1) // 2
        self._spent, self._kernel, self._seconds, self._error = 0.0, None, None, None
        self._expected = COMPILE_BASE + COMPILE_PER_LINE * _source_lines(scalar)

    def _evaluate(self, q, qd):
        """``H`` and ``Q - h`` at one configuration (``math`` code) or a batch (NumPy code)."""
        N = self._N
        q, qd = self._array(q, "q"), self._array(qd, "qd")
        try:
            batch = np.broadcast_shapes(q.shape[:-1], qd.shape[:-1])
        except ValueError:
            raise ShapeError(f"the batches of q and qd do not broadcast: q has shape {q.shape}, "
                             f"qd has shape {qd.shape}") from None
        if batch == ():
            values = np.array(self._scalar(*q.tolist(), *qd.tolist()), dtype=float)
            return self._unpack(values, batch)
        q = np.broadcast_to(q, batch + (N,))
        qd = np.broadcast_to(qd, batch + (N,))
        values = self._vector(*np.moveaxis(q, -1, 0), *np.moveaxis(qd, -1, 0))
        values = np.stack([np.broadcast_to(np.asarray(v, dtype=float), batch) for v in values],
                          axis=-1)
        return self._unpack(values, batch)

    def _array(self, value, name):
        """``value`` as a float array of shape (N,) or (..., N), finite."""
        N = self._N
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            arr = None
        if value is None or arr is None or arr.shape[-1:] != (N,):
            raise ShapeError(f"{name} must have shape ({N},) or (..., {N}) (numbers), got "
                             f"{value!r}")
        if not np.isfinite(arr).all():
            raise ShapeError(f"{name} must be finite, got {value!r}")
        return arr

    def _unpack(self, values, batch):
        """The symmetric ``H`` from its upper triangle, and ``Q - h``."""
        nH, (i, j) = self._nH, self._upper
        H = np.empty(batch + (self._N, self._N))
        H[..., i, j] = values[..., :nH]
        H[..., j, i] = values[..., :nH]
        return H, values[..., nH:]

    def _compile_now(self):
        """Compile the numba kernel (remember the seconds it took, or numba's refusal)."""
        start = time.perf_counter()
        try:
            self._kernel = _compile(self._exprs, self._args, self._N, self._cse)
        except Exception as exc:  # pragma: no cover - numba refuses an expression
            self._error = f"{type(exc).__name__}: {exc}"
            self._kernel = False
        self._seconds = time.perf_counter() - start

    def _slow(self, q, qd, tau):
        """``qdd`` by the NumPy route: solve ``H qdd = Q - h + tau``."""
        H, b = self._evaluate(q, qd)
        if tau is not None:
            tau = self._array(tau, "tau")
            try:
                b = b + tau
            except ValueError:
                raise ShapeError(f"tau of shape {tau.shape} does not match the batch of q and "
                                 f"qd {b.shape}") from None
        return np.linalg.solve(H, b[..., None])[..., 0]

    def _fast(self, q, qd, tau):
        """``qdd`` by the compiled kernel for one configuration; None where it does not apply."""
        N = self._N
        try:
            q = np.asarray(q, dtype=float)
            qd = np.asarray(qd, dtype=float)
        except (TypeError, ValueError):
            return None  # the checked route names the fault
        if q.shape == (N,) and qd.shape == (N,) and (tau is None or np.shape(tau) == (N,)):
            out = np.zeros(N) if tau is None else np.array(tau, dtype=float)
            if self._kernel(np.concatenate((q, qd)), out) and np.isfinite(out).all():
                return out
        return None

    def mass_matrix(self, q):
        """``H(q)``, shape (N, N) or (..., N, N)."""
        q = self._array(q, "q")
        return self._evaluate(q, np.zeros(q.shape))[0]

    def forward_dynamics(self, q, qd, tau=None):
        """``qdd`` from ``H qdd = Q - h + tau``; compiles itself once single calls have taken
        as long as compiling is expected to (``compiled=None``)."""
        if self._kernel is None and self._auto:
            if self._spent >= self._expected:
                self._compile_now()
            else:
                start = time.perf_counter()
                result = self._slow(q, qd, tau)
                if np.ndim(result) == 1:
                    self._spent += time.perf_counter() - start
                return result
        if self._kernel:
            out = self._fast(q, qd, tau)
            if out is not None:
                return out
        return self._slow(q, qd, tau)

    @property
    def compile_seconds(self):
        """Seconds the numba compilation took (None: not compiled)."""
        return self._seconds

    @property
    def expected_compile_seconds(self):
        """The compile time the functions expect (their rule for compiling by themselves)."""
        return self._expected

    @property
    def compiled(self):
        """Whether single calls run the compiled code."""
        return bool(self._kernel)


#: Expected numba compile time of :func:`lambdify`'s code, seconds: base + per generated
#: line (measured: 4.4 s for the 740 lines of a six-joint arm, 0.3 s for a triple pendulum).
COMPILE_BASE, COMPILE_PER_LINE = 0.25, 0.006


def _compile(exprs, args, N, cse):
    """numba kernel ``kernel(x, b) -> ok``: ``x = (q, qd)``; ``b`` holds ``tau`` on entry and
    ``qdd`` on exit (``H qdd = Q - h + tau`` solved by Cholesky)."""
    import math

    import numba as nb
    import sympy as sp
    from sympy.printing.pycode import PythonCodePrinter

    from .kernels.common import cholesky_solve

    names = {a: sp.Symbol(f"_in{k}") for k, a in enumerate(args)}
    exprs = [sp.sympify(e).xreplace(names) for e in exprs]
    repl, red = sp.cse(exprs, symbols=sp.numbered_symbols("_t")) if cse else ([], exprs)
    printer = PythonCodePrinter({"fully_qualified_modules": True})
    lines = ["def kernel(_x, _b):"]
    lines += [f"    _in{k} = _x[{k}]" for k in range(len(args))]
    lines += [f"    {v} = {printer.doprint(e)}" for v, e in repl]
    lines += ["    _H = np.empty((N, N))"]
    k = 0
    for i in range(N):
        for j in range(i, N):
            lines.append(f"    _H[{i}, {j}] = _H[{j}, {i}] = {printer.doprint(red[k])}")
            k += 1
    lines += [f"    _b[{i}] += {printer.doprint(red[k + i])}" for i in range(N)]
    lines += ["    return _cholesky_solve(_H, _b)"]
    namespace = {"math": math, "np": np, "N": N, "_cholesky_solve": cholesky_solve}
    exec("\n".join(lines), namespace)  # noqa: S102 - our own generated code
    kernel = nb.njit(error_model="numpy")(namespace["kernel"])
    x = np.zeros(len(args))
    kernel(x, np.zeros(N))  # compile now, not in the caller's first step
    return kernel
