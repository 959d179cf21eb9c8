"""Chapter 5: generalized inertial forces split into centrifugal, Coriolis and gyroscopic
parts (Telegin 2024).

Lagrange's equations of a holonomic, scleronomic system with mass matrix ``H(q)`` are
``H qdd + h = Q`` with the velocity-product forces ``h = dH/dt qd - dT/dq``. With
``H_jik = dH_ji/dq_k`` (``j >= i``, erratum E25) Telegin splits ``h`` into three parts
(formulas (1)–(5), reconstructed and verified symbolically; see the errata page, E22)::

    h_ci = 1/2 H_iii dq_i^2 + sum_{j>i} H_jij dq_j^2                      (2) centrifugal
    h_oi = 1/2 dq_i sum_{k!=i} H_iik dq_k + sum_{j>i} dq_j sum_{k!=j} H_jik dq_k   (3) Coriolis
    h_gi = sum_{j<i} dH_ij dq_j + 1/2 dH_ii dq_i - dT/dq_i                   (5) gyroscopic

The centrifugal forces contain squares of velocities only, the Coriolis forces products of
different velocities, and the gyroscopic forces do **no work**: ``sum_i h_gi dq_i = 0``
identically (the Thomson–Tait definition). So a drive's power splits as
``tau . qd = d/dt(T + U) ...`` with the gyroscopic part absent.

* :func:`decompose` — symbolic, from a sympy matrix ``H(q)``.
* :func:`decompose_numeric` — numbers, from a Model at a state (derivatives of ``H`` from
  the library's mass matrix, no sympy).
* :func:`forming_bodies` — the carrying and carried bodies of a coordinate (Telegin's
  statements 2 and 3, (7)–(17)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import ModelError, ShapeError
from .coupling import coupled

__all__ = ["Decomposition", "decompose", "decompose_tree", "subsystem_ends",
           "decompose_numeric", "forming_bodies", "powers"]


@dataclass
class Decomposition:
    """The parts of the generalized inertial forces (column vectors).

    Attributes
    ----------
    centrifugal, coriolis, gyroscopic : sympy Matrix (N, 1) or ndarray (N,)
    dT_dq : the partial derivatives of the kinetic energy, (4)
    H_dot : the time derivative of the mass matrix
    """

    centrifugal: object
    coriolis: object
    gyroscopic: object
    dT_dq: object
    H_dot: object

    @property
    def total(self):
        """``h = h_c + h_o + h_g = dH/dt qd - dT/dq``."""
        return self.centrifugal + self.coriolis + self.gyroscopic


def _parts(H, dH, dq, add, zero, half, simplify=lambda e: e):
    """Formulas (2)–(5) for any arithmetic (sympy or numpy scalars).

    ``H[j][i]``, ``dH[j][i][k] = dH_ji/dq_k`` and ``dq[i]`` with 0-based indices.
    """
    N = len(dq)
    Hdot = [[add(dH[j][i][k] * dq[k] for k in range(N)) for i in range(N)] for j in range(N)]
    hc, ho, hg, dT = [], [], [], []
    for i in range(N):
        c = half * dH[i][i][i] * dq[i] ** 2 + add(dH[j][i][j] * dq[j] ** 2 for j in range(i + 1, N))
        o = (half * dq[i] * add(dH[i][i][k] * dq[k] for k in range(N) if k != i)
             + add(dq[j] * add(dH[j][i][k] * dq[k] for k in range(N) if k != j)
                   for j in range(i + 1, N)))
        t = (half * add(dH[j][j][i] * dq[j] ** 2 for j in range(N))
             + add(dq[k] * add(dH[k][j][i] * dq[j] for j in range(k)) for k in range(1, N)))
        g = add(Hdot[i][j] * dq[j] for j in range(i)) + half * Hdot[i][i] * dq[i] - t
        hc.append(simplify(c))
        ho.append(simplify(o))
        hg.append(simplify(g))
        dT.append(simplify(t))
    return hc, ho, hg, dT, Hdot


def _symbolic_input(H, q, qd):
    """``H`` as a sympy Matrix; ``q`` and ``qd`` checked to be sequences of Symbols."""
    import sympy as sp

    try:
        H = sp.Matrix(H)
    except (TypeError, ValueError, sp.SympifyError):
        raise ShapeError(f"H must be a square sympy Matrix (the mass matrix), got {H!r}") \
            from None
    for name, symbols in (("q", q), ("qd", qd)):
        if isinstance(symbols, (str, bytes)) or not hasattr(symbols, "__len__") \
                or not all(isinstance(x, sp.Symbol) for x in symbols):
            raise ShapeError(f"{name} must be a sequence of sympy Symbols (one per row of H), "
                             f"got {symbols!r}")
    return H


def decompose(H, q, qd, simplify=True):
    """Telegin's split of the inertial forces of a symbolic mass matrix, (1)–(5).

    Parameters
    ----------
    H : sympy Matrix (N, N)
        Symmetric mass matrix, a function of the symbols ``q``.
    q, qd : sequence of sympy Symbols, length N
        Coordinates and velocities.
    simplify : bool
        Apply ``sympy.simplify`` to each entry.

    Returns
    -------
    Decomposition
        With sympy column matrices.

    Examples
    --------
    Telegin's example 1: a polar arm, rotation ``q1`` and extension ``q2``:

    >>> import sympy as sp
    >>> q1, q2, dq1, dq2, m2, I = sp.symbols("q1 q2 dq1 dq2 m2 I")
    >>> H = sp.Matrix([[I + m2 * q2**2, 0], [0, m2]])
    >>> d = decompose(H, [q1, q2], [dq1, dq2])
    >>> d.centrifugal.T, d.coriolis.T, d.gyroscopic.T
    (Matrix([[0, 0]]), Matrix([[dq1*dq2*m2*q2, 0]]), Matrix([[dq1*dq2*m2*q2, -dq1**2*m2*q2]]))
    """
    import sympy as sp

    H = _symbolic_input(H, q, qd)
    N = H.shape[0]
    if H.shape != (N, N) or len(q) != N or len(qd) != N:
        raise ShapeError(f"H must be square with one coordinate and velocity per row; got "
                         f"H {H.shape}, {len(q)} coordinates, {len(qd)} velocities")
    if sp.simplify(H - H.T) != sp.zeros(N, N):
        raise ShapeError("H must be symmetric (a mass matrix)")
    dH = [[[sp.diff(H[j, i], q[k]) for k in range(N)] for i in range(N)] for j in range(N)]
    simp = sp.simplify if simplify else (lambda e: e)
    hc, ho, hg, dT, Hdot = _parts(H.tolist(), dH, list(qd), lambda xs: sp.Add(*list(xs)),
                                  sp.Integer(0), sp.Rational(1, 2), simp)
    col = lambda xs: sp.Matrix(xs)  # noqa: E731
    return Decomposition(col(hc), col(ho), col(hg), col(dT), sp.Matrix(Hdot))


def decompose_tree(H, q, qd, ends=None, simplify=True):
    """Telegin's statements 2 and 3: the split for trees and single chains, (7)–(17).

    Coordinates are numbered depth-first, so the subsystem of coordinate ``i`` (its body
    and everything it carries) is the range ``i..N_i``. Then only carried coordinates
    enter the centrifugal force and only carrying ones the squared-velocity part of the
    gyroscopic force::

        h_ci   = sum_{j=i+1}^{N_i} H_jij dq_j^2                                   (7)
        hg_oi  = 1/2 dq_i sum_{j=i+1}^{N_i} H_iij dq_j                             (10)
        h_oi   = hg_oi + sum_{j=i+1}^{N_i} dq_j sum_{k=i+1, k!=j}^{N_j} H_jik dq_k  (8)
        h_gi   = hg_oi + sum_{j carrying i} dH_ij dq_j - dT/dq_i                    (9)

    Parameters
    ----------
    H, q, qd : as in :func:`decompose`
    ends : sequence of int, optional
        ``N_i`` (0-based: the last coordinate of subsystem ``i``); default a single chain
        (``N_i = N - 1``, statement 3, (12)–(17)). See :func:`subsystem_ends`.

    Returns
    -------
    Decomposition
        Equal term by term to :func:`decompose` when ``H`` has the tree structure (tests);
        ``hg_oi`` is in the attribute ``coriolis_gyroscopic``.

    Examples
    --------
    >>> import sympy as sp
    >>> q1, q2, dq1, dq2, m2, I = sp.symbols("q1 q2 dq1 dq2 m2 I")
    >>> d = decompose_tree(sp.Matrix([[I + m2 * q2**2, 0], [0, m2]]), [q1, q2], [dq1, dq2])
    >>> d.coriolis_gyroscopic.T        # h^g_o1 = h_g1 = h_o1 for the polar arm (17)
    Matrix([[dq1*dq2*m2*q2, 0]])
    """
    import sympy as sp

    H = _symbolic_input(H, q, qd)
    N = H.shape[0]
    try:
        ends = [N - 1] * N if ends is None else [int(e) for e in ends]
    except (TypeError, ValueError):
        raise ShapeError(f"ends must be {N} integers, got {ends!r}") from None
    if len(ends) != N or any(not i <= e < N for i, e in enumerate(ends)):
        raise ShapeError(f"ends must give, for each coordinate i, its last carried coordinate "
                         f"N_i with i <= N_i < {N}; got {ends}")
    dH = lambda j, i, k: sp.diff(H[j, i], q[k])  # noqa: E731  (H_jik, j >= i)
    Hdot = H.applyfunc(lambda e: sum(sp.diff(e, a) * b for a, b in zip(q, qd)))
    v = sp.Matrix(qd)
    T = (v.T * H * v)[0] / 2
    simp = sp.simplify if simplify else (lambda e: e)
    hc, ho, hg, hgo, dT = [], [], [], [], []
    for i in range(N):
        carried = range(i + 1, ends[i] + 1)
        carrying = [j for j in range(i) if ends[j] >= i]
        hgo_i = sp.Rational(1, 2) * qd[i] * sum((dH(i, i, j) * qd[j] for j in carried), 0)
        hc_i = sum((dH(j, i, j) * qd[j] ** 2 for j in carried), 0)
        ho_i = hgo_i + sum((qd[j] * sum((dH(j, i, k) * qd[k] for k in range(i + 1, ends[j] + 1)
                                         if k != j), 0) for j in carried), 0)
        dT_i = sp.diff(T, q[i])
        hg_i = hgo_i + sum((Hdot[i, j] * qd[j] for j in carrying), 0) - dT_i
        hc.append(simp(hc_i))
        ho.append(simp(ho_i))
        hg.append(simp(hg_i))
        hgo.append(simp(hgo_i))
        dT.append(simp(dT_i))
    out = Decomposition(sp.Matrix(hc), sp.Matrix(ho), sp.Matrix(hg), sp.Matrix(dT), Hdot)
    out.coriolis_gyroscopic = sp.Matrix(hgo)
    return out


@coupled("refuse")
def subsystem_ends(model):
    """``N_i`` for every generalized speed of a tree model: the last coordinate carried by it.

    Requires the depth-first numbering of Telegin's statement 2 (each joint's subtree
    occupies consecutive coordinates after it).

    Examples
    --------
    >>> import mbcourse as mb
    >>> subsystem_ends(mb.models.triple_pendulum())
    [2, 2, 2]
    """
    _require_model(model, "subsystem_ends")
    T = np.abs(model.graph.T)
    ends = []
    for j in model.joints:
        if not j.nv:
            continue
        block = sorted(c for k in model.joints if k.nv and (k is j or T[j.index, k.child - 1])
                       for c in range(k.v_slice.start, k.v_slice.stop))
        if block != list(range(j.v_slice.start, j.v_slice.start + len(block))):
            raise ModelError(
                f"joint {j.name!r}: the coordinates it carries are not numbered right after it; "
                "add the joints depth-first (each subtree after its root joint)"
            )
        ends += [block[-1]] * j.nv
    return ends


def _require_model(model, fn):
    """Refuse anything but an mbcourse.Model as ``model``."""
    from .model import Model

    if not isinstance(model, Model):
        raise ModelError(f"{fn}: model must be an mbcourse.Model (the first argument), got "
                         f"{type(model).__name__}")


def _single_state(model, q, qd, what):
    """One checked state ``q`` (N,), ``qd`` (N,) or None."""
    state = model.check_state(q, qd)
    if state.batch != ():
        raise ShapeError(f"{what} takes one state: q of shape ({model.nq},), got a batch of "
                         f"shape {state.batch}")
    return state.q[0], None if qd is None else state.qd[0]


@coupled("refuse")
def mass_matrix_derivatives(model, q, h=1e-5, mass_matrix=None):
    """``dH/dq_k`` of a Model's mass matrix, shape (N, N, N) with ``[j, i, k]``.

    Central differences of the library's mass matrix with Richardson extrapolation
    (accuracy ~1e-10 relative); needs ``nq == nv`` (no quaternion joints).
    """
    _require_model(model, "mass_matrix_derivatives")
    q = _single_state(model, q, None, "mass_matrix_derivatives")[0]
    return _derivatives(model, q, h, mass_matrix)


def _derivatives(model, q, h, mass_matrix):
    """:func:`mass_matrix_derivatives` at a checked ``q`` (N,)."""
    if mass_matrix is not None and not callable(mass_matrix):
        raise ShapeError(f"mass_matrix must be a callable mass_matrix(model, q) (e.g. "
                         f"mb.tree.mass_matrix), got {type(mass_matrix).__name__}")
    if model.nq != model.nv:
        raise ModelError(
            "the inertial-force split needs coordinates whose rates are the generalized speeds "
            "(no spherical or free joints: nq == nv)"
        )
    if mass_matrix is None:  # the library's, on the checked q: no second check
        from .tree.general import mass_matrix_unchecked

        mass_matrix = lambda model, x: mass_matrix_unchecked(model, x[None])[0]  # noqa: E731
    N = q.size
    out = np.zeros((N, N, N))
    for k in range(N):
        e = np.zeros(N)
        e[k] = 1.0
        D = lambda s: (mass_matrix(model, q + s * e) - mass_matrix(model, q - s * e)) / (2 * s)  # noqa: E731
        out[:, :, k] = (4 * D(h / 2) - D(h)) / 3
    return out


@coupled("refuse")
def decompose_numeric(model, q, qd, mass_matrix=None):
    """Telegin's split at a state of a Model, with numbers (no sympy).

    Parameters
    ----------
    model : Model
        Joints with ``nq == nv`` (revolute, prismatic, screw, cylindrical, universal).
    q, qd : array_like, shape (N,)
        One state (checked with :meth:`mbcourse.Model.check_state`).
    mass_matrix : callable, optional
        ``mass_matrix(model, q)``; default :func:`mbcourse.tree.mass_matrix`.

    Returns
    -------
    Decomposition
        With ndarrays.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> d = decompose_numeric(m, [0.3, 0.4], [1.0, -2.0])
    >>> bool(abs(d.gyroscopic @ [1.0, -2.0]) < 1e-9)      # gyroscopic forces do no work
    True
    """
    _require_model(model, "decompose_numeric")
    q, qd = _single_state(model, q, qd, "decompose_numeric")
    dH = _derivatives(model, q, 1e-5, mass_matrix)
    N = q.size
    hc, ho, hg, dT, Hdot = _parts(None, dH.tolist(), qd.tolist(), lambda xs: float(sum(xs)),
                                  0.0, 0.5)
    arr = lambda xs: np.array(xs, dtype=float)  # noqa: E731
    return Decomposition(arr(hc), arr(ho), arr(hg), arr(dT), np.array(Hdot).reshape(N, N))


def powers(decomposition, qd):
    """Power of each part: ``(P_centrifugal, P_coriolis, P_gyroscopic)``.

    The gyroscopic power vanishes; the other two add up to ``1/2 qd^T dH/dt qd``.
    """
    if not isinstance(decomposition, Decomposition):
        raise ShapeError(f"decomposition must be a Decomposition (from decompose or "
                         f"decompose_numeric), got {type(decomposition).__name__}")
    parts = (decomposition.centrifugal, decomposition.coriolis, decomposition.gyroscopic)
    try:
        import sympy as sp
        if isinstance(decomposition.centrifugal, sp.MatrixBase):
            v = sp.Matrix(qd)
            return tuple(sp.simplify((p.T * v)[0]) for p in parts)
    except ImportError:  # pragma: no cover - sympy is a dependency
        pass
    N = len(decomposition.centrifugal)
    try:
        v = np.asarray(qd, dtype=float)
    except (TypeError, ValueError):
        v = None
    if v is None or v.shape != (N,) or not np.isfinite(v).all():
        raise ShapeError(f"qd must be {N} finite numbers (one speed per coordinate), got {qd!r}")
    return tuple(float(p @ v) for p in parts)


@coupled("refuse")
def forming_bodies(model, coordinate):
    """The bodies whose motions form the inertial forces of a coordinate (Telegin 2, 3).

    For a tree in relative coordinates, coordinate ``i`` of joint ``a`` moves body
    ``i-(a)`` with everything it carries. Its **carrying** bodies are those on the path
    from the base to the joint (their coordinates come first in a depth-first numbering);
    its **carried** bodies are the ones outboard of the joint. The centrifugal force on
    ``q_i`` comes from squared velocities of carried coordinates; the gyroscopic force from
    squared velocities of carrying coordinates and products with carried ones (7)–(10).

    Returns
    -------
    dict
        ``{"carrying": [joint names], "carried": [joint names]}``.

    Examples
    --------
    >>> import mbcourse as mb
    >>> forming_bodies(mb.models.triple_pendulum(), 1)
    {'carrying': ['j1'], 'carried': ['j3']}
    """
    _require_model(model, "forming_bodies")
    if isinstance(coordinate, bool) or not isinstance(coordinate, (int, np.integer)) \
            or not 0 <= coordinate < model.nv:
        raise ShapeError(f"coordinate must be an index 0..{model.nv - 1}, got {coordinate!r}")
    g = model.graph
    T = np.abs(g.T)
    joint = next(j for j in model.joints
                 if j.v_slice.start <= coordinate < j.v_slice.stop)
    body = joint.child
    inboard = [model.joints[a].name for a in np.flatnonzero(T[:, body - 1]) if a != joint.index]
    outboard = [j.name for j in model.joints
                if j.index != joint.index and j.child > 0 and T[joint.index, j.child - 1]]
    return {"carrying": inboard, "carried": outboard}
