"""Symbolic equations of a small Model with sympy: ``H(q)``, energies, Lagrange's equations.

The kinematics of the Model (joint rotations, joint vectors and axes; parent/child points)
are rebuilt with sympy expressions, and

* ``H(q) = sum_i m_i Jv_i^T Jv_i + Jw_i^T A_i J_i A_i^T Jw_i`` (the mass matrix),
* ``T = dq^T H dq / 2``, ``U = -sum_i m_i g . r_i``,
* Lagrange's equations ``H ddq + h = Q + tau`` with ``h = dH/dt dq - dT/dq``, ``Q = -dU/dq``.

Numbers of the model become exact rationals (``nsimplify``); any of them can be replaced by
a symbol with ``parameters={"rod2.mass": m2, "elbow.parent_point": (L, 0, 0), ...}`` (keys:
``"<body>.mass"``, ``"<body>.inertia"`` (3x3 or 3 principal moments), ``"<joint>.parent_point"``,
``"<joint>.child_point"``). Joints: revolute, prismatic, screw, cylindrical, universal and
fixed (coordinates whose rates are the generalized speeds). Keep models small (up to about
six joints): symbolic expressions grow fast.

:func:`lambdify` turns the results into NumPy functions, checked against the numeric
formulations in the tests.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import ModelError

__all__ = ["SymbolicModel", "derive", "mass_matrix", "lambdify"]


def _exact(x):
    import sympy as sp

    if isinstance(x, sp.Basic):
        return x
    return sp.nsimplify(float(x), tolerance=1e-12, rational=True)


def _vec(v):
    import sympy as sp

    return sp.Matrix([_exact(c) for c in v])


def _axis_angle(axis, angle):
    import sympy as sp

    a = sp.Matrix(axis)
    K = sp.Matrix([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return sp.eye(3) + sp.sin(angle) * K + (1 - sp.cos(angle)) * K * K


def _unit(axis):
    """The model's (already normalized) axis as exact rationals, within 1e-12 of unit."""
    return _vec(axis)


@dataclass
class SymbolicModel:
    """Symbolic equations of a Model.

    Attributes
    ----------
    q, qd : lists of sympy Symbols (``q1..qN``, ``dq1..dqN``)
    H : sympy Matrix (N, N), the mass matrix
    T, U : kinetic and potential energy
    h : sympy Matrix (N, 1), velocity-product forces ``dH/dt dq - dT/dq``
    Q : sympy Matrix (N, 1), generalized gravity forces ``-dU/dq``
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
        """Lagrange's equations ``H ddq + h - Q - tau = 0`` as a sympy Matrix."""
        import sympy as sp

        N = len(self.q)
        qdd = sp.Matrix(qdd if qdd is not None else sp.symbols(f"ddq1:{N + 1}"))
        tau = sp.Matrix(tau if tau is not None else [0] * N)
        return self.H * qdd + self.h - self.Q - tau


def derive(model, parameters=None, simplify=True):
    """Derive the symbolic equations of a small tree Model.

    Parameters
    ----------
    model : Model
    parameters : dict, optional
        Symbols to use instead of the model's numbers (see the module docstring).
    simplify : bool
        Simplify ``H`` entry by entry (``expand`` then ``trigsimp``).

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

    if model.nq != model.nv:
        raise ModelError("symbolic equations need nq == nv (no spherical or free joints)")
    g = model.graph
    if not g.is_tree:
        raise ModelError("symbolic equations are derived for trees; the model has loops")
    if model.base_motion is not None:
        raise ModelError("symbolic equations assume a fixed base")
    params = dict(parameters or {})
    known = {f"{b.name}.{k}" for b in model.bodies[1:] for k in ("mass", "inertia")}
    known |= {f"{j.name}.{k}" for j in model.joints for k in ("parent_point", "child_point")}
    unknown = sorted(set(params) - known)
    if unknown:
        raise ModelError(f"unknown parameter names {unknown}; valid: {sorted(known)}")
    N = model.nv
    q = list(sp.symbols(f"q1:{N + 1}"))
    qd = list(sp.symbols(f"dq1:{N + 1}"))
    n = model.n
    A = [None] * (n + 1)
    r = [None] * (n + 1)
    Jw = [None] * (n + 1)
    A[0], r[0], Jw[0] = sp.eye(3), sp.zeros(3, 1), sp.zeros(3, N)
    for joint, forward in model._tree():
        qa = q[joint.q_slice]
        R0 = sp.Matrix(3, 3, [_exact(x) for x in joint.orientation.ravel()])
        kind = joint.kind
        z = sp.zeros(3, 1)
        P = sp.zeros(3, joint.nv)
        if kind in ("revolute", "screw", "cylindrical"):
            axis = _unit(joint.axis)
            Rj = _axis_angle(axis, qa[0])
            P[:, 0] = axis
            if kind == "screw":
                z = axis * _exact(joint.lead) * qa[0] / (2 * sp.pi)
            if kind == "cylindrical":
                z = axis * qa[1]
        elif kind == "prismatic":
            axis = _unit(joint.axis)
            Rj, z = sp.eye(3), axis * qa[0]
        elif kind == "universal":
            a1, a2 = (_unit(a) for a in joint.axes)
            R1 = _axis_angle(a1, qa[0])
            Rj = R1 * _axis_angle(a2, qa[1])
            P[:, 0], P[:, 1] = a1, R1 * a2
        elif kind == "fixed":
            Rj = sp.eye(3)
        else:  # pragma: no cover - excluded by nq == nv
            raise ModelError(f"joint {joint.name!r}: kind {kind!r} is not supported")
        R = Rj * R0
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
    H = sp.zeros(N, N)
    U = sp.Integer(0)
    gvec = _vec(model.gravity)
    for body in model.bodies[1:]:
        k = body.index
        mass = _exact(params.get(f"{body.name}.mass", body.mass))
        Jb = params.get(f"{body.name}.inertia", body.inertia)
        Jb = sp.diag(*[_exact(x) for x in Jb]) if np.ndim(Jb) == 1 else \
            sp.Matrix(3, 3, [_exact(x) for x in np.asarray(Jb, dtype=object).ravel()])
        Jv = r[k].jacobian(q)
        H += mass * Jv.T * Jv + Jw[k].T * (A[k] * Jb * A[k].T) * Jw[k]
        U += -mass * (gvec.T * r[k])[0]
    if simplify:
        H = H.applyfunc(lambda e: sp.trigsimp(sp.expand(e)))
    qdv = sp.Matrix(qd)
    T = (qdv.T * H * qdv)[0] / 2
    Hdot = H.applyfunc(lambda e: sum(sp.diff(e, qk) * dqk for qk, dqk in zip(q, qd)))
    h = Hdot * qdv - sp.Matrix([sp.diff(T, qk) for qk in q])
    Q = sp.Matrix([-sp.diff(U, qk) for qk in q])
    return SymbolicModel(q, qd, H, T, U, h, Q, [r[k] for k in range(1, n + 1)])


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


def lambdify(sym):
    """NumPy functions ``mass_matrix(q)`` and ``forward_dynamics(q, qd, tau=None)``.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> model = mb.models.double_pendulum()
    >>> fns = lambdify(derive(model))
    >>> bool(np.allclose(fns.forward_dynamics([0.3, 0.2], [1.0, -0.5]),
    ...                  mb.tree.forward_dynamics(model, [0.3, 0.2], [1.0, -0.5])))
    True
    """
    import sympy as sp

    Hf = sp.lambdify([sym.q], sym.H, "numpy")
    rhs = sp.lambdify([sym.q, sym.qd], sym.Q - sym.h, "numpy")

    class Functions:
        @staticmethod
        def mass_matrix(q):
            return np.array(Hf(np.asarray(q, dtype=float)), dtype=float)

        @staticmethod
        def forward_dynamics(q, qd, tau=None):
            q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
            b = np.array(rhs(q, qd), dtype=float).ravel()
            if tau is not None:
                b = b + np.asarray(tau, dtype=float)
            return np.linalg.solve(np.array(Hf(q), dtype=float), b)

    return Functions()
