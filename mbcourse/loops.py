"""Chapter 6: closed loops in generalized coordinates — the cut-joint method (Yudintsev 3.6).

A mechanism whose graph has cycles is turned into a tree, the *reduced system*, by cutting
``n*`` joints (:func:`blocks` gives the incidence blocks ``S*``, ``S0*``, ``S*+`` of
(3.182)–(3.185), numbered as in Fig. 3.22 with the correction E19 of the book's errata page).
The reduced system has chapter 3's equations ``A qdd = B`` (3.167) in its own coordinates
``q`` (the Model's coordinates without those of the cut joints). Each cut joint says that
its two bodies, placed by the tree, keep the relative motion the joint allows: holonomic
constraints ``f(q, t) = 0`` (3.6.1) — chapter 2's elementary rows (point on plane,
perpendicular vectors, screw; in the plane point on line and rotation), now functions of the
tree coordinates — and, if the user gives them, velocity rows ``a0 + a qd = 0``. Their
Jacobian ``H = df/dq`` (3.191) turns the reactions of the cut joints into generalized
forces, and the equations of motion become (3.189)–(3.192)::

    -A qdd + B + B* + H^T lam = 0,      H qdd = gamma   (f differentiated twice)

``B*`` (3.196)–(3.201) is the virtual work of the *active* forces in the cut joints (a
drive, a joint spring of a cut joint): with the cut joint's speeds ``v* = J* qd``
(``J*`` from the relative twist of its two bodies, the matrix of (3.198)/(3.200)),
``B* = J*^T tau*``.

Solution: ``A = L L^T`` (Cholesky), ``Y = L^-1 H^T``; the multipliers solve
``Y^T Y lam = gamma - H A^-1 (B + B*)`` by a singular value decomposition of ``Y``, so
redundant rows (Bricard's linkage, a planar loop of spatial revolute joints: ``H`` rank
deficient) give the minimum-norm multipliers and the *unique* accelerations; the nullity is
reported (:class:`Solution`). A state that does not close the loops is refused with an
:class:`~mbcourse.errors.InconsistentStateError` naming the cut joint
(:func:`assemble` makes consistent states).

Every function takes the Model's own coordinates — every joint, the loop-closing ones
included, exactly what :func:`mbcourse.cartesian.forward_dynamics` takes — and returns
accelerations of every joint: those of the cut joints follow from the relative
acceleration of their bodies. Forces are those of the full Model (gravity, loads, springs,
joint springs, control laws ``f(t, q, qd)``).

Drift. Only the second derivative of ``f`` is imposed; integrated, ``f`` and ``H qd`` drift.
:func:`simulate` offers three treatments, measured against each other in its docstring
(``benchmarks/loops_stabilization.py`` reproduces the table):

* ``"baumgarte"``: ``H qdd = gamma - 2 alpha fdot - beta^2 f`` (Baumgarte 1972);
* ``"projection"``: after every step, Newton on ``f(q) = 0`` (minimum-norm corrections) and
  the velocities projected onto ``H qd = -f_t``;
* ``"partitioning"``: Wehage and Haug's coordinate partitioning (1982): integrate only the
  independent coordinates chosen by a pivoted QR of ``H``; the dependent ones are solved
  from ``f = 0`` at every evaluation; a new partition is chosen when the dependent block of
  ``H`` becomes ill-conditioned.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.integrate
import scipy.linalg

from . import tree as _tree_formulation
from .cartesian import system as _cartesian
from .kernels import KERNELS, model_data, pack_cut, route, with_base_motion
from .kernels.loops import loops_closure, loops_reduced
from .errors import (InconsistentStateError, MbcourseError, ModelError, ShapeError,
                     SingularSystemError, TopologyError)
from .graph import incidence_matrix, path_matrix, spanning_tree
from . import forces as model_forces
from . import poses as model_poses
from .model import State
from . import sim as _sim
from .sim import Trajectory, initial_state
from .spatial import cross, definite_cholesky, mv, skew, transpose
from .coupling import coupled

__all__ = [
    "blocks", "LoopData", "prepare", "VelocityConstraint", "Kinematics", "kinematics",
    "constraints", "Solution", "solve", "forward_dynamics", "reactions", "Reactions",
    "inverse_dynamics",
    "assemble", "independent_coordinates", "simulate", "LoopTrajectory", "STABILIZATIONS",
    "DEFAULT_STABILIZATION", "DEFAULT_BAUMGARTE",
]

#: The treatments of drift :func:`simulate` offers.
STABILIZATIONS = ("projection", "partitioning", "baumgarte", "none")
#: Chosen by the measurement in the docstring of :func:`simulate`.
DEFAULT_STABILIZATION = "projection"
#: ``(alpha, beta)`` in 1/s for ``stabilization="baumgarte"`` (as chapter 2's default).
DEFAULT_BAUMGARTE = (10.0, 10.0)

_MAX_STEP = 0.5  # largest Newton step of a coordinate (rad or m) in assembly
_RCOND = 1e-9  # singular values of L^-1 H^T below this fraction of the largest: redundant


# ------------------------------------------------------------------ graph blocks
def blocks(i_plus, i_minus, cut, n=None):
    """Incidence blocks of a closed structure split into a reduced tree and cut arcs.

    Yudintsev (3.180)–(3.185): with the arcs of the reduced system first and the cut arcs
    ``n+1 .. n+n*`` after them, the incidence matrix is ``[[S0, S0*], [S, S*]]``; the ``+``
    matrices keep the ``+1`` entries (the side ``i+(a)`` that carries the hinge vector).

    Parameters
    ----------
    i_plus, i_minus : sequence of int, length m
        Arcs as in chapter 1 (body 0 is the base).
    cut : sequence of int
        Positions (0-based) of the arcs to cut; the others must form a spanning tree.
    n : int, optional
        Number of bodies besides body 0.

    Returns
    -------
    dict
        ``S0, S, S0_star, S_star, S0_plus, S_plus, S0_star_plus, S_star_plus, T`` (``T`` the
        path matrix of the reduced tree), ``tree`` and ``cut`` (arc positions).

    Examples
    --------
    Fig. 3.22 / Table 3.2 (arcs u8..u10 cut); the row of body 7 reads as E19 corrects it:

    >>> ip = [5, 6, 0, 1, 1, 3, 0, 4, 0, 5]
    >>> im = [0, 4, 2, 2, 7, 2, 4, 3, 7, 6]
    >>> b = blocks(ip, im, cut=[7, 8, 9])
    >>> b["S_star"].tolist()
    [[0, 0, 0], [0, 0, 0], [-1, 0, 0], [1, 0, 0], [0, 0, 1], [0, 0, -1], [0, -1, 0]]
    >>> b["S0_star"].tolist(), b["S0_plus"].tolist()
    ([0, 1, 0], [0, 0, 1, 0, 0, 0, 1])
    >>> bool((b["S0_star"] + b["S_star"].sum(axis=0) == 0).all())   # columns sum to zero
    True
    """
    ip, im = np.asarray(i_plus, dtype=int), np.asarray(i_minus, dtype=int)
    tree, cut_arcs = spanning_tree(ip, im, n, cut=cut)
    S_full = incidence_matrix(ip, im, n)
    S_tree, S_cut = S_full[:, tree], S_full[:, cut_arcs]
    plus = lambda M: np.maximum(M, 0)  # noqa: E731
    return {
        "S0": S_tree[0], "S": S_tree[1:], "S0_star": S_cut[0], "S_star": S_cut[1:],
        "S0_plus": plus(S_tree[0]), "S_plus": plus(S_tree[1:]),
        "S0_star_plus": plus(S_cut[0]), "S_star_plus": plus(S_cut[1:]),
        "T": path_matrix(ip[tree], im[tree], n), "tree": tree, "cut": cut_arcs,
    }


# ------------------------------------------------------------------ prepared data
@dataclass(frozen=True)
class LoopData:
    """Prepared data of the cut-joint method (see :func:`prepare`).

    Attributes
    ----------
    cut : tuple of int
        Indices of the cut joints (their rows are the constraints).
    reduced : Model
        The reduced system (:meth:`mbcourse.Model.reduced_system`).
    q_tree, v_tree : ndarray of int
        Positions of the reduced system's coordinates and speeds in the Model's ``q``, ``qd``.
    planar : bool
        Planar rows (point on line, rotation) instead of spatial ones.
    groups : tuple
        ``(function, params, i, j, rows)`` per row type, for the cut joints' rows only.
    row_joint : ndarray of int
        The cut joint (Model index) of every row.
    nc : int
        Number of holonomic rows.
    """

    cut: tuple
    reduced: object
    q_tree: np.ndarray
    v_tree: np.ndarray
    planar: bool
    groups: tuple
    row_joint: np.ndarray
    nc: int

    @property
    def dof(self):
        """Width of a body's velocity vector in the rows (3 planar, 6 spatial)."""
        return 3 if self.planar else 6


def _cut_indices(model, cut):
    g = model.graph
    if cut is None:   # the default cut, once per model version
        return model.prepared(("loops", "default cut"),
                              lambda: tuple(int(a) for a in g.spanning_tree()[1]))
    if isinstance(cut, (str, int, np.integer)):
        cut = [cut]
    arcs = sorted({model.joints.index(model.joint(c)) if isinstance(c, str) else
                   _joint_index(model, c) for c in cut})
    try:
        g.spanning_tree(cut=arcs)
    except TopologyError:
        names = [model.joints[a].name for a in arcs]
        raise TopologyError(
            f"cutting joints {names} does not leave a spanning tree of the {model.n} bodies: "
            f"cut exactly one joint of every loop ({model.m - model.n} joints in all), and do "
            "not cut a joint whose removal disconnects a body from the base"
        ) from None
    return tuple(arcs)


def _joint_index(model, c):
    if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or not 0 <= c < model.m:
        raise ModelError(f"cut: unknown joint {c!r}; give joint names "
                         f"{[j.name for j in model.joints]} or indices 0..{model.m - 1}")
    return int(c)


def prepare(model, cut=None, planar=None):
    """The constants of the cut-joint method, built once per model version and cut.

    Parameters
    ----------
    model : Model
    cut : sequence of str or int, optional
        The joints to cut (default: the joints that close loops after the breadth-first
        spanning tree of :func:`mbcourse.graph.spanning_tree`).
    planar : bool, optional
        Planar rows; default :func:`mbcourse.cartesian.is_planar`.

    Returns
    -------
    LoopData

    Examples
    --------
    >>> import mbcourse as mb
    >>> d = prepare(mb.models.crank_slider())
    >>> [j.name for j in d.reduced.joints], d.nc, d.planar     # joint B is cut: 2 rows
    (['O', 'A', 'guide'], 2, True)
    """
    model.graph  # validates the model (once per version)
    cut_idx = _cut_indices(model, cut)
    if planar is None:
        planar = _cartesian.is_planar(model)
    else:
        planar = _cartesian.resolve_planar(model, planar)

    def build():
        reduced = model.reduced_system(cut_idx)
        tree = [j for j in model.joints if j.index not in cut_idx]
        q_tree = np.array([k for j in tree for k in range(j.q_slice.start, j.q_slice.stop)],
                          dtype=int)
        v_tree = np.array([k for j in tree for k in range(j.v_slice.start, j.v_slice.stop)],
                          dtype=int)
        groups, joint_rows = _cartesian.constraint_rows(model, planar)
        wanted = {r: a for a in cut_idx for r in joint_rows[a]}
        out, row_joint, count = [], [], 0
        for name, g in groups.items():
            sel = np.array([k for k, r in enumerate(g.rows) if r in wanted], dtype=int)
            if sel.size == 0:
                continue
            fn, _ = _cartesian.ROW_FUNCTIONS[name]
            params = tuple(p[sel] for p in g.params)
            rows = np.arange(count, count + sel.size)
            out.append((fn, params, g.i[sel], g.j[sel], rows))
            row_joint.extend(int(g.joint[k]) for k in sel)
            count += sel.size
        for arr in (q_tree, v_tree):
            arr.flags.writeable = False
        return LoopData(cut_idx, reduced, q_tree, v_tree, bool(planar), tuple(out),
                        np.array(row_joint, dtype=int), count)

    return model.prepared(("loops", cut_idx, bool(planar)), build)


# --------------------------------------------------------- user velocity rows
class VelocityConstraint:
    """User rows ``a(t, q) qd + a0(t, q) = 0`` (3.6.1: nonholonomic, or holonomic given at
    the velocity level, e.g. a gear pair), over the Model's speeds ``qd``.

    Parameters
    ----------
    a : array_like (k, nv) or (nv,), or callable ``a(t, q)``
    a0 : array_like (k,) or float, or callable ``a0(t, q)``
    rate : callable ``rate(t, q, qd)``, optional
        ``d/dt(a) qd + d/dt(a0)`` along the motion, (k,). Zero for constant rows; for
        callables without ``rate`` it is taken by central differences along
        ``(t + h, q + h dq/dt)`` (``h = 1e-5``: errors about 1e-10 relative).
    name : str

    Examples
    --------
    A gear pair: the second joint turns at half the rate of the first.

    >>> import mbcourse as mb
    >>> gear = VelocityConstraint([1.0, -2.0], name="gear")
    >>> gear.rows(mb.models.double_pendulum(), 0.0, [0.0, 0.0])[0].tolist()
    [[1.0, -2.0]]
    """

    def __init__(self, a, a0=0.0, *, rate=None, name="velocity constraint"):
        self.a, self.a0, self.rate, self.name = a, a0, rate, str(name)

    def _eval(self, value, t, q, shape, what):
        out = value(t, q) if callable(value) else value
        try:
            arr = np.asarray(out, dtype=float)
            arr = np.broadcast_to(arr.reshape(shape) if arr.size == np.prod(shape) else arr,
                                  shape)
        except (TypeError, ValueError):
            raise ShapeError(f"{self.name}: {what} must have shape {shape}, got "
                             f"{np.shape(out)}") from None
        if not np.all(np.isfinite(arr)):
            raise ShapeError(f"{self.name}: {what} is not finite at t={t}")
        return arr

    def rows(self, model, t, q):
        """``(a (k, nv), a0 (k,))`` at one state."""
        a_val = self.a(t, q) if callable(self.a) else self.a
        k = max(1, np.size(a_val) // model.nv) if np.ndim(a_val) >= 1 else 1
        a = self._eval(a_val, t, q, (k, model.nv), "a")
        a0 = self._eval(self.a0, t, q, (k,), "a0")
        return a, a0

    def derivative(self, model, t, q, qd):
        """``da/dt qd + da0/dt``, shape (k,)."""
        a, _ = self.rows(model, t, q)
        if self.rate is not None:
            return self._eval(self.rate(t, q, qd), t, q, (a.shape[0],), "rate")
        if not callable(self.a) and not callable(self.a0):
            return np.zeros(a.shape[0])
        h = 1e-5
        qdot = model_poses.qdot(model, q, qd)
        ap, a0p = self.rows(model, t + h, model_poses.normalize_q(model, q + h * qdot))
        am, a0m = self.rows(model, t - h, model_poses.normalize_q(model, q - h * qdot))
        return ((ap - am) @ qd + a0p - a0m) / (2 * h)


def _check_user_rows(model, constraints):
    if constraints is None:
        return ()
    if isinstance(constraints, VelocityConstraint):
        constraints = (constraints,)
    constraints = tuple(constraints)
    for c in constraints:
        if not isinstance(c, VelocityConstraint):
            raise ShapeError(f"constraints must be mb.loops.VelocityConstraint objects, got "
                             f"{type(c).__name__}")
    return constraints


# ------------------------------------------------------------------ kinematics
@dataclass
class Kinematics:
    """Per-call arrays of the cut-joint method (batch first), cf. Pinocchio's Data.

    Attributes
    ----------
    terms : mbcourse.tree.TreeTerms
        Chapter 3's kinematic terms of the reduced system.
    states : mbcourse.cartesian.BodyStates
        The bodies' absolute states (for chapter 2's rows).
    X : (B, n+1, dof, nvT) body velocity Jacobians in the rows' convention (row 0 zero)
    Xdd0 : (B, n+1, dof) body accelerations at ``qdd = 0``
    f : (B, nc) holonomic residuals;  fdot : (B, nc) their rates
    H : (B, nc, nvT) the Jacobian (3.191);  gamma : (B, nc) ``H qdd = gamma``
    Qi, Qj : (B, nc, dof) the rows' body coefficients (reactions ``Q^T lam``)
    """

    terms: object
    states: object
    X: np.ndarray
    Xdd0: np.ndarray
    f: np.ndarray
    fdot: np.ndarray
    H: np.ndarray
    gamma: np.ndarray
    Qi: np.ndarray
    Qj: np.ndarray


def _kinematics(model, data, q, qd, t):
    """Kinematics at checked full states (B, nq), (B, nv)."""
    red = data.reduced
    qT, vT = q[:, data.q_tree], qd[:, data.v_tree]
    tt = _tree_formulation.general.terms_unchecked(red, qT, vT, t)
    B, n, N = q.shape[0], model.n, red.nv
    base = model.base_motion.state(t) if model.base_motion else None
    a0 = np.zeros((B, 3))
    dw0 = np.zeros((B, 3))
    if base is not None:
        a0[:] = base["acceleration"]
        dw0[:] = base["orientation"].T @ base["angular_acceleration"]
    A = tt.A
    w_body = mv(transpose(A), tt.omega)
    states = _cartesian.BodyStates(tt.r, A, tt.vel, w_body, a0, dw0)
    dof = data.dof
    X = np.zeros((B, n + 1, dof, N))
    Xdd0 = np.zeros((B, n + 1, dof))
    Jv, Jw = transpose(tt.Jv), transpose(tt.Jw)  # (B, n, 3, N)
    if data.planar:
        X[:, 1:, :2], X[:, 1:, 2] = Jv[:, :, :2], Jw[:, :, 2]
        Xdd0[:, 1:, :2], Xdd0[:, 1:, 2] = tt.acc_bias[..., :2], tt.alpha_bias[..., 2]
        Xdd0[:, 0, :2], Xdd0[:, 0, 2] = a0[:, :2], dw0[:, 2]
        dX = np.concatenate([tt.vel[..., :2], w_body[..., 2:]], axis=-1)
    else:
        AT = transpose(A[:, 1:])
        X[:, 1:, :3], X[:, 1:, 3:] = Jv, AT @ Jw
        Xdd0[:, 1:, :3], Xdd0[:, 1:, 3:] = tt.acc_bias, mv(AT, tt.alpha_bias)
        Xdd0[:, 0, :3], Xdd0[:, 0, 3:] = a0, dw0
        dX = np.concatenate([tt.vel, w_body], axis=-1)
    nc = data.nc
    f = np.zeros((B, nc))
    fdot = np.zeros((B, nc))
    H = np.zeros((B, nc, N))
    gamma = np.zeros((B, nc))
    Qi = np.zeros((B, nc, dof))
    Qj = np.zeros((B, nc, dof))
    pick = states.planar if data.planar else states.spatial
    for fn, params, gi, gj, rows in data.groups:
        g, qi, qj, b = fn(*params, pick(gi), pick(gj))
        f[:, rows], Qi[:, rows], Qj[:, rows] = g, qi, qj
        # H = Q_i X_i + Q_j X_j;  gamma = b - Q_i Xdd0_i - Q_j Xdd0_j   (2.22) on the tree
        H[:, rows] = (qi[:, :, None, :] @ X[:, gi])[:, :, 0] + (qj[:, :, None, :] @ X[:, gj])[:, :, 0]
        gamma[:, rows] = (b - np.sum(qi * Xdd0[:, gi], axis=-1)
                          - np.sum(qj * Xdd0[:, gj], axis=-1))
        fdot[:, rows] = np.sum(qi * dX[:, gi], axis=-1) + np.sum(qj * dX[:, gj], axis=-1)
    return Kinematics(tt, states, X, Xdd0, f, fdot, H, gamma, Qi, Qj)


def _relative(model, kin, joint, qa, va):
    """Relative twist Jacobian ``G`` (B, 6, nvT) of a joint's two bodies, parent axes
    ``[Omega; zdot]``, its acceleration at ``qdd = 0`` minus the joint's own bias ``g0``
    (B, 6), and ``P = [p; k]`` (B, 6, nv_a): the joint's accelerations are
    ``P^+ (G qdd + g0)`` (3.101)–(3.107); its speeds ``P^+ G qd`` (3.198), (3.200)."""
    tt = kin.terms
    i, c = joint.parent, joint.child
    B, N = kin.X.shape[0], kin.X.shape[-1]
    A, r, omega = tt.A, tt.r, tt.omega

    def jac(k):
        if k == 0:
            return np.zeros((B, 3, N)), np.zeros((B, 3, N))
        return transpose(tt.Jv[:, k - 1]), transpose(tt.Jw[:, k - 1])

    def acc0(k):
        if k == 0:
            return kin.states.a0, mv(A[:, 0], kin.states.dw0)
        return tt.acc_bias[:, k - 1], tt.alpha_bias[:, k - 1]

    Jvi, Jwi = jac(i)
    Jvc, Jwc = jac(c)
    Ai, AiT = A[:, i], transpose(A[:, i])
    lc = mv(A[:, c], joint.child_point)
    Pc = r[:, c] + lc
    L = Pc - r[:, i]
    G = np.concatenate([AiT @ (Jwc - Jwi),
                        AiT @ (Jvc - Jvi - skew(lc) @ Jwc + skew(L) @ Jwi)], axis=1)
    P = np.concatenate([joint.p(qa), joint.k(qa)], axis=-2)
    if va is None:
        return G, None, P
    wi, wc = omega[:, i], omega[:, c]
    ai, al_i = acc0(i)
    ac, al_c = acc0(c)
    zdot = tt.vel[:, c] + cross(wc, lc) - tt.vel[:, i] - cross(wi, L)
    w_bias, s_bias = joint.bias(qa, va)
    d_omega = al_c - al_i - cross(wi, wc - wi) - mv(Ai, w_bias)
    d_z = (ac + cross(al_c, lc) + cross(wc, cross(wc, lc))
           - ai - cross(al_i, L) - cross(wi, cross(wi, L)) - 2.0 * cross(wi, zdot)
           - mv(Ai, s_bias))
    g0 = np.concatenate([mv(AiT, d_omega), mv(AiT, d_z)], axis=-1)
    return G, g0, P


def _pinv_columns(P):
    """``(P^T P)^-1 P^T`` for full-column-rank ``P`` (B, 6, k)."""
    PT = transpose(P)
    return np.linalg.solve(PT @ P, PT)


def _checked(model, q, qd, tau, t):
    state = model.check_state(q, qd, tau, t=t)
    if state.qd is None:
        state.qd = np.zeros((state.q.shape[0], model.nv))
    return state


def kinematics(model, q, qd=None, *, t=0.0, cut=None, planar=None):
    """The cut-joint method's kinematic arrays at a state (a batch of states).

    Returns
    -------
    Kinematics
        Batch flattened to one leading dimension.

    Examples
    --------
    >>> import mbcourse as mb
    >>> m = mb.models.crank_slider()
    >>> q, qd = mb.models.crank_slider_state(m, 0.3, 2.0)
    >>> kin = kinematics(m, q, qd)
    >>> kin.H.shape, bool(abs(kin.f).max() < 1e-12), bool(abs(kin.fdot).max() < 1e-12)
    ((1, 2, 3), True, True)
    """
    data = prepare(model, cut, planar)
    state = _checked(model, q, qd, None, t)
    with np.errstate(over="ignore", invalid="ignore"):
        return _kinematics(model, data, state.q, state.qd, state.t)


def constraints(model, q, qd=None, *, t=0.0, cut=None, planar=None):
    """The cut joints' constraints ``f(q)``, their Jacobian ``H`` (3.191) and rates.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd : array_like, shape (..., nv), optional
    t : float
    cut, planar
        As in :func:`prepare`.

    Returns
    -------
    dict
        ``f`` (..., nc), ``H`` (..., nc, nvT) over the reduced system's speeds ``qd[v_tree]``,
        ``fdot`` (..., nc) ``= H qd`` (+ base motion terms), ``gamma`` (..., nc) with
        ``H qdd = gamma``, ``joints`` (the cut joint of every row), ``v_tree``.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.crank_slider()
    >>> q, qd = mb.models.crank_slider_state(m, 0.3, 2.0)
    >>> c = constraints(m, q, qd)
    >>> c["joints"], bool(np.allclose(c["H"] @ qd[c["v_tree"]], c["fdot"]))
    (['B', 'B'], True)
    """
    data = prepare(model, cut, planar)
    state = _checked(model, q, qd, None, t)
    with np.errstate(over="ignore", invalid="ignore"):
        kin = _kinematics(model, data, state.q, state.qd, state.t)
    what = "mb.loops.constraints"
    return {"f": state.result(kin.f, what), "H": state.result(kin.H, what),
            "fdot": state.result(kin.fdot, what), "gamma": state.result(kin.gamma, what),
            "joints": [model.joints[a].name for a in data.row_joint],
            "v_tree": np.array(data.v_tree)}


# ------------------------------------------------------------------ consistency
def _check_consistency(model, data, kin, q, qd, tol=1e-8):
    advice = ("mb.loops.assemble(model, q, qd) gives the nearest consistent state")
    scale = 1.0 + np.abs(kin.states.r).max()
    vscale = 1.0 + np.abs(kin.states.v).max() + np.abs(kin.states.w).max() * scale
    for level, arr, sc in (("position", kin.f, scale), ("velocity", kin.fdot, vscale)):
        bad = np.abs(arr) > tol * sc
        if bad.any():
            b, r = np.argwhere(bad)[0]
            joint = model.joints[data.row_joint[r]]
            raise InconsistentStateError(
                f"the loop closed by joint {joint.name!r} is open at the {level} level by "
                f"{arr[b, r]:.3g} (batch item {b}); {advice}")
    for a in data.cut:
        j = model.joints[a]
        qa = q[:, j.q_slice]
        st = kin.states
        rot_err, z_err = j.pose_error(qa, st.r[:, j.parent], st.A[:, j.parent],
                                      st.r[:, j.child], st.A[:, j.child])
        err = max(rot_err, z_err / scale)
        if err > tol:
            raise InconsistentStateError(
                f"joint {j.name!r} is cut, but its coordinates q[{j.q_slice.start}:"
                f"{j.q_slice.stop}] do not match the relative pose of "
                f"{model.bodies[j.parent].name!r} and {model.bodies[j.child].name!r} "
                f"(error {err:.3g}); {advice}")
        if j.nv:
            G, _, P = _relative(model, kin, j, qa, qd[:, j.v_slice])
            vT = qd[:, data.v_tree]
            rel = mv(G, vT) - mv(P, qd[:, j.v_slice])
            err = np.abs(rel).max() / vscale
            if err > tol:
                raise InconsistentStateError(
                    f"joint {j.name!r} is cut, but its speeds qd[{j.v_slice.start}:"
                    f"{j.v_slice.stop}] do not match the relative motion of its bodies "
                    f"(error {err:.3g}); {advice}")


# ------------------------------------------------------------------ the solution
@dataclass
class Solution:
    """Result of :func:`solve` (batch first).

    Attributes
    ----------
    qdd : (B, nv) accelerations of every joint (cut joints included)
    lam : (B, nc + k) multipliers of the holonomic rows, then of the velocity rows
    rank : (B,) rank of ``H`` (with the user rows)
    nullity : (B,) ``rows - rank``: redundant constraints (0 for independent rows)
    kin : Kinematics
    A, rhs : the reduced system's mass matrix and ``B + B* + tau``
    Hc, gammac : all rows (holonomic and user) and their right-hand sides
    singular_values : (B, k) of ``L^-T H^T`` (the rank is decided on them)
    """

    qdd: np.ndarray
    lam: np.ndarray
    rank: np.ndarray
    nullity: np.ndarray
    kin: Kinematics
    A: np.ndarray
    rhs: np.ndarray
    Hc: np.ndarray
    gammac: np.ndarray
    singular_values: np.ndarray


def _cut_map(model, data, kin, q, qd):
    """Per cut joint: ``(joint, Pplus G, Pplus g0)`` — its speeds ``J* qd_T`` and
    accelerations ``J* qdd_T + c*``."""
    out = []
    for a in data.cut:
        j = model.joints[a]
        if j.nv == 0:
            continue
        G, g0, P = _relative(model, kin, j, q[:, j.q_slice], qd[:, j.v_slice])
        Pp = _pinv_columns(P)
        out.append((j, Pp @ G, mv(Pp, g0)))
    return out


def _equations(model, data, q, qd, tau, t, user, baumgarte=None, kin=None):
    """Assemble everything at checked full states: (kin, A, rhs, Hc, gammac, cutmap)."""
    if kin is None:
        kin = _kinematics(model, data, q, qd, t)
    tt = kin.terms
    F, M = model_forces.applied_wrenches(model, q, qd=qd, t=t, poses=(tt.r, tt.A),
                                         velocities=(tt.vel, tt.omega))
    Amat, Bvec = _tree_formulation.equations_from_terms(data.reduced, tt, F, M)
    Q = tau + model_forces.generalized_forces(model, q, qd, t)
    rhs = Bvec + Q[:, data.v_tree]
    cutmap = _cut_map(model, data, kin, q, qd)
    for j, Jstar, _ in cutmap:  # B* = J*^T tau*: virtual work of the cut joints' forces
        rhs = rhs + mv(transpose(Jstar), Q[:, j.v_slice])
    gamma = kin.gamma
    if baumgarte is not None:
        alpha, beta = baumgarte
        gamma = gamma - 2.0 * alpha * kin.fdot - beta ** 2 * kin.f
    Hc, gammac = kin.H, gamma
    if user:
        Hu, gu = _user_rows(model, data, q, qd, t, user, cutmap)
        Hc = np.concatenate([Hc, Hu], axis=1)
        gammac = np.concatenate([gammac, gu], axis=1)
    return kin, Amat, rhs, Hc, gammac, cutmap


def _user_rows(model, data, q, qd, t, user, cutmap):
    """The user rows over the reduced speeds: ``a_T qdd_T = -(a_cut c* + rate)``."""
    B = q.shape[0]
    Hs, gs = [], []
    for c in user:
        rows_a, rows_g = [], []
        for b in range(B):
            a, _ = c.rows(model, t, q[b])
            rate = c.derivative(model, t, q[b], qd[b])
            aT = a[:, data.v_tree].copy()
            g = -rate
            for j, Jstar, cstar in cutmap:
                aT += a[:, j.v_slice] @ Jstar[b]
                g = g - a[:, j.v_slice] @ cstar[b]
            rows_a.append(aT)
            rows_g.append(g)
        Hs.append(np.array(rows_a))
        gs.append(np.array(rows_g))
    return np.concatenate(Hs, axis=1), np.concatenate(gs, axis=1)


def _kkt(Amat, rhs, Hc, gammac, what, rank=None):
    """Range-space solution with an SVD of ``L^-1 H^T`` (minimum-norm multipliers).

    The rank is decided by the cutoff ``_RCOND`` at a consistent state; a simulation passes
    the ``rank`` it found on the constraint manifold instead (off the manifold a redundant
    row's zero singular value grows with the drift and must not be taken for a constraint;
    near a singular configuration a true constraint's small singular value must be kept)."""
    try:
        L = definite_cholesky(Amat)
    except np.linalg.LinAlgError:
        raise SingularSystemError(
            f"{what}: the reduced system's mass matrix is not positive definite (a joint "
            "coordinate moves no mass, or the configuration loses a direction)") from None
    x0 = _chol_solve(L, rhs)
    if Hc.shape[1] == 0:
        B = rhs.shape[0]
        return (x0, np.zeros((B, 0)), np.zeros(B, dtype=int), np.zeros(B, dtype=int),
                np.zeros((B, 0)))
    Y = np.linalg.solve(L, transpose(Hc))  # L^-1 H^T, (B, N, nc)
    U, s, Vt = np.linalg.svd(Y, full_matrices=False)  # Y = U s Vt
    if rank is None:
        keep = s > _RCOND * s[:, :1]
    else:
        keep = (np.arange(s.shape[1]) < rank) & (s > 1e-14 * s[:, :1])
    rank = keep.sum(axis=1)
    sinv2 = np.where(keep, 1.0 / np.where(keep, s, 1.0) ** 2, 0.0)
    r = gammac - mv(Hc, x0)
    lam = mv(transpose(Vt), sinv2 * mv(Vt, r))  # (Y^T Y)^+ r
    qdd = x0 + _chol_solve(L, mv(transpose(Hc), lam))
    return qdd, lam, rank, Hc.shape[1] - rank, s


def _chol_solve(L, b):
    return np.linalg.solve(transpose(L), np.linalg.solve(L, b[..., None]))[..., 0]


def _full_qdd(model, data, qddT, cutmap):
    out = np.zeros((qddT.shape[0], model.nv))
    out[:, data.v_tree] = qddT
    for j, Jstar, cstar in cutmap:
        out[:, j.v_slice] = mv(Jstar, qddT) + cstar
    return out


def _solve(model, data, state, user, check, what, baumgarte=None, kin=None, rank=None):
    with np.errstate(over="ignore", invalid="ignore"):
        kin, Amat, rhs, Hc, gammac, cutmap = _equations(
            model, data, state.q, state.qd, state.tau, state.t, user, baumgarte, kin)
        if check:
            _check_consistency(model, data, kin, state.q, state.qd)
        qddT, lam, rank, nullity, svals = _kkt(Amat, rhs, Hc, gammac, what, rank)
        qdd = _full_qdd(model, data, qddT, cutmap)
    if not np.all(np.isfinite(qdd)):
        raise SingularSystemError(f"{what}: the accelerations are not finite")
    return Solution(qdd, lam, rank, nullity, kin, Amat, rhs, Hc, gammac, svals)


def solve(model, q, qd, tau=None, *, t=0.0, cut=None, planar=None, constraints=(),
          check=True):
    """Accelerations, multipliers and the rank of the constraints (batch flattened).

    Parameters as :func:`forward_dynamics`; ``check=False`` skips the test that the state
    closes every loop.

    Returns
    -------
    Solution

    Examples
    --------
    >>> import mbcourse as mb
    >>> m = mb.models.crank_slider()
    >>> q, qd = mb.models.crank_slider_state(m, 0.3, 2.0)
    >>> s = solve(m, q, qd)
    >>> s.qdd.shape, s.lam.shape, s.rank.tolist(), s.nullity.tolist()
    ((1, 4), (1, 2), [2], [0])
    """
    data = prepare(model, cut, planar)
    user = _check_user_rows(model, constraints)
    state = _checked(model, q, qd, tau, t)
    return _solve(model, data, state, user, check, "mb.loops.solve")


@coupled("forward")
def forward_dynamics(model, q, qd, tau=None, *, t=0.0, cut=None, planar=None, constraints=(),
                     compiled=None):
    """Generalized accelerations of a closed mechanism by the cut-joint method (**contract**).

    Parameters
    ----------
    model : Model
        Any Model (a tree is a mechanism with no cut joints).
    q : array_like, shape (..., nq)
        The Model's coordinates, the loop-closing joints' included, closing every loop
        (:func:`assemble` makes such states).
    qd : array_like, shape (..., nv)
        Consistent speeds.
    tau : array_like, shape (..., nv), optional
        Generalized forces on every joint's coordinates (a force on a cut joint's coordinate
        acts through ``B*`` (3.201)).
    t : float
    cut : sequence of str or int, optional
        The joints to cut (default: those closing loops after a breadth-first spanning
        tree). The answer does not depend on the choice.
    planar : bool, optional
        Planar rows; default automatic (:func:`mbcourse.cartesian.is_planar`).
    constraints : sequence of VelocityConstraint
        User velocity rows ``a qd + a0 = 0``.
    compiled : bool, optional
        ``None`` (default): with the default cut, no extra constraints and no joint spring
        on a cut joint, the compiled kernel
        :func:`mbcourse.kernels.loops.loops_forward` runs, on every joint kind (loads given
        as callables and control laws evaluated in Python once per configuration and
        handed in as numbers; the same equations; a state it cannot accept takes the
        checked route, which names what is open). ``False``: always
        the NumPy route; ``True``: refuse (``ModelError``) what the kernel cannot run.

    Returns
    -------
    ndarray, shape (..., nv)
        Equal to :func:`mbcourse.cartesian.forward_dynamics` (the tests hold them to 1e-9).

    Raises
    ------
    InconsistentStateError
        The state does not close a loop (names the cut joint).
    SingularSystemError
        The reduced system's mass matrix is singular.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.crank_slider()
    >>> q, qd = mb.models.crank_slider_state(m, 0.3, 2.0)
    >>> qdd = forward_dynamics(m, q, qd)
    >>> bool(np.allclose(qdd, mb.cartesian.forward_dynamics(m, q, qd), atol=1e-9))
    True
    >>> bool(np.allclose(qdd, forward_dynamics(m, q, qd, cut=["A"]), atol=1e-9))
    True
    """
    data = prepare(model, cut, planar)
    user = _check_user_rows(model, constraints)
    kernel = (_kernel_data(model, data) if compiled is not False and cut is None
              and planar is None and not user else None)
    out, state = route(model, "loops", q, qd, tau, t, what="mb.loops.forward_dynamics",
                       check=lambda: _checked(model, q, qd, tau, t), compiled=compiled,
                       data=kernel, applies=kernel is not None,
                       generalized=lambda s: model_forces.callable_forces(model, s.q, s.qd, s.t))
    if out is not None:
        return out
    if state is None:
        state = _checked(model, q, qd, tau, t)
    sol = _solve(model, data, state, user, True, "mb.loops.forward_dynamics")
    return state.result(sol.qdd, "mb.loops.forward_dynamics")


#: The compiled route accepts states that close the loops to this (relative) tolerance; any
#: other state goes the checked way, which explains what is open (its tolerance is 1e-8).
_KERNEL_TOL = 1e-9


def _kernel_data(model, data):
    """Packed constants of the compiled cut-joint method (:func:`mbcourse.kernels.pack_cut`),
    or ``None`` (prepared once per model version).

    The reduced tree is packed with the Model's constant loads, spring-dampers and the
    joint springs of its own joints (the kernel evaluates them on the tree's bodies, which
    are the Model's; loads given as callables and generalized-force elements are evaluated
    by :func:`mbcourse.kernels.route`, a prescribed base motion packed by it at each call);
    a joint spring on a cut joint keeps the NumPy route."""
    def build():
        if any(s.joint.index in data.cut for s in model.joint_springs):
            return None
        tree = model_data(_reduced_with_forces(model, data))
        if tree is None:
            return None
        return pack_cut(model, [model.joints[a] for a in data.cut], tree, data.q_tree,
                        data.v_tree, (_RCOND, _KERNEL_TOL))

    return model.prepared(("loops", "kernel", data.cut), build)


def _reduced_with_forces(model, data):
    """The reduced system with copies of the Model's loads, spring-dampers and the joint
    springs of the joints it keeps (bodies keep their numbers, so the elements act on the
    same bodies)."""
    red = model.reduced_system(data.cut)
    for load in model.loads:
        red.add_force(load.body, force=load.force, torque=load.torque, point=load.point,
                      frame=load.frame, name=load.name)
    for s in model.springs:
        red.add_spring(s.name, s.body_a, s.body_b, point_a=s.point_a, point_b=s.point_b,
                       stiffness=s.stiffness, rest_length=s.rest_length, damping=s.damping)
    for s in model.joint_springs:
        red.add_joint_spring(s.joint.name, stiffness=s.stiffness, rest=s.rest,
                             damping=s.damping)
    return red


# ------------------------------------------------------------------ reactions
def reactions(model, q, qd, tau=None, *, t=0.0, cut=None, planar=None):
    """Constraint forces and moments of every joint (cut joints from the multipliers).

    The multipliers of a cut joint's rows are its reaction (3.189): the wrench
    ``Q_j^T lam`` on the child, ``Q_i^T lam`` on the parent. A tree joint carries what the
    bodies beyond it need (Newton–Euler, ``m a - F`` and ``I eps + omega x I omega - M``),
    less the applied forces, the cut joints' reactions and the drives of every joint; the
    drive of a joint (``tau``, joint springs, control laws) is not part of its reaction, as
    in :func:`mbcourse.cartesian.reactions`.

    Returns
    -------
    Reactions
        A dict ``{joint name: {"force_child", "moment_child", "force_parent",
        "moment_parent"}}``: the reaction on the child reduced to the joint point, in child
        and in parent axes (the parent feels the opposite), batch shape of the inputs; its
        attribute ``nullity`` counts the redundant rows (then the multipliers are the
        minimum-norm ones and the reactions of the redundant loop are one choice among many).

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.crank_slider()
    >>> q, qd = mb.models.crank_slider_state(m, 0.3, 2.0)
    >>> R, C = reactions(m, q, qd), mb.cartesian.reactions(m, q, qd)
    >>> bool(all(np.allclose(R[j][k], C[j][k], atol=1e-8) for j in C for k in C[j]))
    True
    >>> sorted(R) == sorted(j.name for j in m.joints), int(R.nullity)   # no redundant row
    (True, 0)
    """
    data = prepare(model, cut, planar)
    state = _checked(model, q, qd, tau, t)
    sol = _solve(model, data, state, (), True, "mb.loops.reactions")
    kin, tt = sol.kin, sol.kin.terms
    B, n = state.q.shape[0], model.n
    qddT = sol.qdd[:, data.v_tree]
    r, A, omega = tt.r, tt.A, tt.omega
    with np.errstate(over="ignore", invalid="ignore"):
        acc = mv(transpose(tt.Jv), qddT[:, None]) + tt.acc_bias  # (B, n, 3)
        alpha = mv(transpose(tt.Jw), qddT[:, None]) + tt.alpha_bias
        I = A[:, 1:] @ model.inertias() @ transpose(A[:, 1:])
        w = omega[:, 1:]
        need_f = np.zeros((B, n + 1, 3))
        need_m = np.zeros((B, n + 1, 3))
        need_f[:, 1:] = model.masses()[:, None] * acc
        need_m[:, 1:] = mv(I, alpha) + cross(w, mv(I, w))
        F, M = model_forces.applied_wrenches(model, state.q, qd=state.qd, t=state.t,
                                             poses=(r, A), velocities=(tt.vel, omega))
        Q = state.tau + model_forces.generalized_forces(model, state.q, state.qd, state.t)
        Fd, Md = _cartesian.joint_wrenches(model, kin.states, state.q, Q)
        ext_f, ext_m = F + Fd, M + Md
        out = {}
        cut_wrench = {}
        for a in data.cut:  # wrench on the child about its centre of mass, inertial axes
            rows = np.flatnonzero(data.row_joint == a)
            j = model.joints[a]
            f_c, m_c = _row_wrench(kin.Qj[:, rows], sol.lam[:, rows], A[:, j.child], data.planar)
            f_p, m_p = _row_wrench(kin.Qi[:, rows], sol.lam[:, rows], A[:, j.parent],
                                   data.planar)
            ext_f[:, j.child] += f_c
            ext_m[:, j.child] += m_c
            ext_f[:, j.parent] += f_p
            ext_m[:, j.parent] += m_p
            cut_wrench[a] = (f_c, m_c)
        # what every body needs from its tree joints, moments about the origin
        Wf = need_f - ext_f
        Wm = need_m - ext_m + cross(r, Wf)
        tree_wrench = {}
        for j, forward in reversed(data.reduced.tree_traversal()):
            outer, inner = (j.child, j.parent) if forward else (j.parent, j.child)
            sign = 1.0 if forward else -1.0  # the reaction on the child
            tree_wrench[j.name] = (sign * Wf[:, outer], sign * Wm[:, outer])
            Wf[:, inner] += Wf[:, outer]
            Wm[:, inner] += Wm[:, outer]
    return Reactions(_joint_reactions(model, state, r, A, cut_wrench, tree_wrench),
                     state.result(sol.nullity, "mb.loops.reactions"))


def _joint_reactions(model, state, r, A, cut_wrench, tree_wrench):
    """The reaction on each joint's child at the joint point, in child and parent axes."""
    out = {}
    for j in model.joints:
        Ac, Ai = A[:, j.child], A[:, j.parent]
        P = r[:, j.child] + mv(Ac, j.child_point)
        if j.index in cut_wrench:
            f, m_c = cut_wrench[j.index]
            m_P = m_c - cross(P - r[:, j.child], f)
        else:
            f, m_O = tree_wrench[j.name]
            m_P = m_O - cross(P, f)
        what = f"mb.loops.reactions (joint {j.name!r})"
        out[j.name] = {
            "force_child": state.result(mv(transpose(Ac), f), what),
            "moment_child": state.result(mv(transpose(Ac), m_P), what),
            "force_parent": state.result(mv(transpose(Ai), f), what),
            "moment_parent": state.result(mv(transpose(Ai), m_P), what),
        }
    return out


class Reactions(dict):
    """The result of :func:`reactions`: ``{joint name: {...}}`` (joint names only) and the
    number of redundant rows in :attr:`nullity`.

    Attributes
    ----------
    nullity : ndarray of int, batch shape
        ``rows - rank``: redundant loop constraints (then the multipliers are the
        minimum-norm ones and the reactions of the redundant loop are one choice among
        many). ``R["nullity"]``, the key of earlier releases, still works with a
        ``DeprecationWarning``.
    """

    def __init__(self, joints, nullity):
        super().__init__(joints)
        self.nullity = nullity

    def __missing__(self, key):
        if key == "nullity":
            warnings.warn("mb.loops.reactions(...)['nullity'] is deprecated (the result is keyed "
                          "by joint name only): use mb.loops.reactions(...).nullity",
                          DeprecationWarning, stacklevel=2)
            return self.nullity
        raise KeyError(key)


def _row_wrench(Qrows, lam, Abody, planar):
    """``Q^T lam`` of some rows as (force, moment about the centre of mass), inertial."""
    w = np.sum(Qrows * lam[..., None], axis=1)
    B = w.shape[0]
    f, m = np.zeros((B, 3)), np.zeros((B, 3))
    if planar:
        f[:, :2], m[:, 2] = w[:, :2], w[:, 2]
    else:
        f, m = w[:, :3], mv(Abody, w[:, 3:])
    return f, m


# ------------------------------------------------------------------ inverse dynamics
def _coordinate(model, ref, what):
    """Index in ``qd`` of a coordinate given by name (``qd_names``, or ``q_names`` of a joint
    whose speeds are its coordinate rates) or by index."""
    if isinstance(ref, str):
        if ref in model.qd_names:
            return model.qd_names.index(ref)
        for j in model.joints:
            names = model.q_names[j.q_slice]
            if ref in names and j.nq == j.nv:
                return j.v_slice.start + names.index(ref)
        raise ShapeError(f"{what}: unknown coordinate {ref!r}; speeds: {list(model.qd_names)}")
    if isinstance(ref, bool) or not isinstance(ref, (int, np.integer)) or not 0 <= ref < model.nv:
        raise ShapeError(f"{what}: coordinate indices are 0..{model.nv - 1}, got {ref!r}")
    return int(ref)


def inverse_dynamics(model, q, qd, qdd, *, actuated, t=0.0, cut=None, planar=None):
    """Drive forces that make a closed mechanism move with the accelerations ``qdd``.

    A driven mechanism (a motor on the crank of a four-bar): the motion is given and the
    generalized forces ``tau`` on the ``actuated`` coordinates are unknown, together with the
    multipliers: ``A qdd - B - B* = E tau + H^T lam`` (3.189) with ``E`` the actuated
    columns (a drive on a cut joint acts through ``J*^T``, (3.201)).

    Parameters
    ----------
    q, qd, qdd : array_like, shapes (..., nq), (..., nv), (..., nv)
        A consistent state and accelerations that satisfy the loops' acceleration
        constraints (e.g. from :func:`forward_dynamics` or from differentiating an assembled
        motion).
    actuated : sequence of str or int
        The coordinates that carry drives (names of ``model.qd_names`` or indices).

    Returns
    -------
    ndarray, shape (..., nv)
        ``tau`` with zeros off the actuated coordinates;
        ``forward_dynamics(model, q, qd, tau) == qdd``.

    Raises
    ------
    InconsistentStateError
        ``qdd`` violates the loops' acceleration constraints.
    SingularSystemError
        The actuated coordinates cannot produce the motion, or not uniquely (more drives
        than degrees of freedom, or drives on coordinates the loops lock).

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.crank_slider()
    >>> q, qd = mb.models.crank_slider_state(m, 0.3, 2.0)
    >>> qdd = forward_dynamics(m, q, qd, [1.5, 0, 0, 0])
    >>> inverse_dynamics(m, q, qd, qdd, actuated=["O.angle"]).round(9).tolist()[0]
    1.5
    """
    data = prepare(model, cut, planar)
    if isinstance(actuated, (str, int, np.integer)):
        actuated = [actuated]
    idx = [_coordinate(model, a, "actuated") for a in actuated]
    if not idx or len(set(idx)) != len(idx):
        raise ShapeError(f"actuated must name distinct coordinates, got {actuated!r}")
    state = model.check_state(q, qd, qdd=qdd, t=t)
    what = "mb.loops.inverse_dynamics"
    with np.errstate(over="ignore", invalid="ignore"):
        Bn = state.q.shape[0]
        kin, Amat, rhs, Hc, gammac, cutmap = _equations(
            model, data, state.q, state.qd, np.zeros((Bn, model.nv)), state.t, ())
        _check_consistency(model, data, kin, state.q, state.qd)
        qddT = state.qdd[:, data.v_tree]
        full = _full_qdd(model, data, qddT, cutmap)
        scale = 1.0 + np.abs(state.qdd).max()
        err = max(np.abs(mv(Hc, qddT) - gammac).max(initial=0.0),
                  np.abs(full - state.qdd).max()) / scale
        if err > 1e-8:
            raise InconsistentStateError(
                f"{what}: qdd violates the loops' acceleration constraints (error {err:.3g}); "
                "take accelerations from forward_dynamics or from an assembled motion")
        N = data.reduced.nv
        E = np.zeros((Bn, N, len(idx)))
        pos = {int(v): k for k, v in enumerate(data.v_tree)}
        cut_of = {k: (j, Jstar) for j, Jstar, _ in cutmap
                  for k in range(j.v_slice.start, j.v_slice.stop)}
        for col, k in enumerate(idx):
            if k in pos:
                E[:, pos[k], col] = 1.0
            else:
                j, Jstar = cut_of[k]
                E[:, :, col] = Jstar[:, k - j.v_slice.start]
        lhs = mv(Amat, qddT) - rhs
        tau = np.zeros((Bn, model.nv))
        for b in range(Bn):
            K = np.concatenate([E[b], transpose(Hc[b])], axis=1)
            sv = np.linalg.svd(K, compute_uv=False)
            svH = np.linalg.svd(Hc[b], compute_uv=False) if Hc.shape[1] else np.zeros(0)
            rank_K = int(np.sum(sv > _RCOND * sv[0])) if sv.size else 0
            rank_H = int(np.sum(svH > _RCOND * svH[0])) if svH.size and svH[0] > 0 else 0
            if rank_K < rank_H + len(idx):
                raise SingularSystemError(
                    f"{what}: the drives on {[model.qd_names[k] for k in idx]} are not "
                    "independent of the loops' reactions (more drives than degrees of freedom, "
                    "or a drive on a coordinate the loops lock): their forces are not unique")
            sol, *_ = np.linalg.lstsq(K, lhs[b], rcond=None)
            if np.abs(K @ sol - lhs[b]).max() > 1e-8 * (1.0 + np.abs(lhs[b]).max()):
                raise SingularSystemError(
                    f"{what}: drives on {[model.qd_names[k] for k in idx]} cannot produce this "
                    "motion (too few drives for the degrees of freedom)")
            tau[b, idx] = sol[:len(idx)]
    return state.result(tau, what)


# ------------------------------------------------------------------ assembly
def _prefer_tree(model, keep):
    """A cut that keeps the joints ``keep`` on the tree (Kruskal, those joints first)."""
    parent = list(range(model.n + 1))

    def root(v):
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    order = sorted(range(model.m), key=lambda a: (a not in keep, a))
    cut = []
    for a in order:
        j = model.joints[a]
        ra, rb = root(j.parent), root(j.child)
        if ra == rb:
            cut.append(a)
        else:
            parent[ra] = rb
    return tuple(sorted(cut))


def _complete(model, data, qT, vT, t, q_ref=None, with_kinematics=False):
    """Full ``(q, qd)`` (B, nq), (B, nv) from the reduced system's state: the cut joints'
    coordinates from the relative pose of their bodies, their speeds ``J* qd_T`` (and the
    :class:`Kinematics`, which do not read the cut joints' coordinates)."""
    B = qT.shape[0]
    q = np.zeros((B, model.nq))
    qd = np.zeros((B, model.nv))
    q[:, data.q_tree], qd[:, data.v_tree] = qT, vT
    with np.errstate(over="ignore", invalid="ignore"):
        kin = _kinematics(model, data, q, qd, t)
    r, A = kin.terms.r, kin.terms.A
    for a in data.cut:
        j = model.joints[a]
        Ai, Ac = A[:, j.parent], A[:, j.child]
        AiT = transpose(Ai)
        d = r[:, j.child] + mv(Ac, j.child_point) - r[:, j.parent] - mv(Ai, j.parent_point)
        ref = None if q_ref is None else np.broadcast_to(q_ref, (B, model.nq))[:, j.q_slice]
        q[:, j.q_slice] = j.from_pose(AiT @ Ac, mv(AiT, d), ref)
        if j.nv:
            G, _, P = _relative(model, kin, j, q[:, j.q_slice], None)
            qd[:, j.v_slice] = mv(_pinv_columns(P) @ G, vT)
    return (q, qd, kin) if with_kinematics else (q, qd)


def _lstsq(M, rhs):
    sol, *_ = np.linalg.lstsq(M, rhs, rcond=_RCOND)
    return sol


def _closure(model, data, qT, t):
    """``(f, H, f_t, scale)`` at the tree's configuration ``qT``: the loops' residuals, their
    Jacobian in the tree's speeds, their rates at rest and ``1 + max |r|`` over the centres
    (the NumPy route; a simulation on the compiled route uses :meth:`_System.closure`)."""
    kin = _kinematics(model, data, _full_from_tree(model, data, qT),
                      np.zeros((1, model.nv)), t)
    return kin.f[0], kin.H[0], kin.fdot[0], 1.0 + np.abs(kin.states.r).max()


def _newton(model, data, qT, t, free, tol, max_iter, closure=None):
    """Newton (Gauss–Newton, minimum-norm steps) on ``f(q_T) = 0`` moving the speeds
    ``free`` (indices into the reduced system's speeds), ``closure(qT) -> (f, H, f_t,
    scale)`` (default :func:`_closure`). Returns ``(qT, |f|, iterations)``."""
    red = data.reduced
    N = red.nv
    if closure is None:
        def closure(q_):
            return _closure(model, data, q_, t)
    for it in range(max_iter + 1):
        f, H, _, scale = closure(qT)
        err = np.abs(f).max(initial=0.0)
        if err <= tol * scale or it == max_iter:
            return qT, err, it
        dv = np.zeros(N)
        dv[free] = -_lstsq(H[:, free], f)
        step = np.abs(dv).max(initial=0.0)
        if step > _MAX_STEP:  # a damped step far from the solution: no jump of turns
            dv *= _MAX_STEP / step
        qT = model_poses.normalize_q(red, qT + model_poses.qdot(red, qT, dv))
    return qT, err, max_iter  # pragma: no cover


def _full_from_tree(model, data, qT):
    """A full ``q`` (1, nq) with the tree coordinates set (the cut ones neutral: the rows
    do not read them)."""
    q = np.array(model.neutral_q(), dtype=float)[None]
    q[:, data.q_tree] = qT
    return q


def assemble(model, q, qd=None, *, independent=(), t=0.0, cut=None, planar=None, tol=1e-12,
             max_iter=50):
    """A consistent state near ``q``, ``qd``: Newton on ``f(q) = 0`` and the velocity rows.

    The coordinates named in ``independent`` keep their values (and speeds); the others
    move by the smallest corrections that close every loop (Gauss–Newton with
    minimum-norm steps, so redundant rows are harmless). The cut joints' coordinates and
    speeds follow from the relative motion of their bodies. Works for any looped Model.

    Parameters
    ----------
    model : Model
    q : array_like, shape (nq,)
        A guess (e.g. the mechanism sketched by eye), or a batch (B, nq).
    qd : array_like, shape (nv,), optional
        Guessed speeds (default zero): the independent ones are kept.
    independent : sequence of str or int
        Coordinates to hold (names of ``model.qd_names``/``q_names`` or speed indices); when
        one of them belongs to a joint the default cut removes, a cut that keeps it on the
        tree is chosen.
    t, cut, planar
        As in :func:`forward_dynamics`.
    tol : float
        Residual tolerance relative to ``1 + max |r|``.
    max_iter : int

    Returns
    -------
    q, qd : ndarray
        Consistent: accepted by :func:`forward_dynamics` and by
        :func:`mbcourse.cartesian.forward_dynamics`.

    Raises
    ------
    InconsistentStateError
        The mechanism cannot be assembled with the independent coordinates at these values
        (names the loop that stays open and by how much), or the independent speeds break
        the loops.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.crank_slider()
    >>> q, qd = assemble(m, [0.5, -0.5, 0.0, 0.0], [3.0, 0, 0, 0], independent=["O.angle"])
    >>> q0, qd0 = mb.models.crank_slider_state(m, 0.5, 3.0)
    >>> bool(np.allclose(q, q0) and np.allclose(qd, qd0))
    True
    """
    ind = [_coordinate(model, k, "independent") for k in
           ([independent] if isinstance(independent, (str, int, np.integer)) else independent)]
    joints_of = {k: j.index for j in model.joints for k in range(j.v_slice.start, j.v_slice.stop)}
    if cut is None:
        cut = _prefer_tree(model, {joints_of[k] for k in ind})
    data = prepare(model, cut, planar)
    for k in ind:
        if joints_of[k] in data.cut:
            raise ModelError(
                f"assemble: the independent coordinate {model.qd_names[k]!r} belongs to the cut "
                f"joint {model.joints[joints_of[k]].name!r}; cut another joint of its loop")
    state = _checked(model, q, qd, None, t)
    pos = {int(v): i for i, v in enumerate(data.v_tree)}
    ind_T = [pos[k] for k in ind]
    N = data.reduced.nv
    free = np.array([i for i in range(N) if i not in ind_T], dtype=int)
    for j in data.reduced.joints:
        if j.nq != j.nv and any(pos[k] in ind_T for k in range(
                model.joint(j.name).v_slice.start, model.joint(j.name).v_slice.stop)):
            raise ModelError(f"assemble: joint {j.name!r} has quaternion coordinates; hold "
                             "scalar coordinates only")
    Q, QD = [], []
    for b in range(state.q.shape[0]):
        qT = state.q[b, data.q_tree]
        qT, err, it = _newton(model, data, qT, state.t, free, tol, max_iter)
        q_full = _full_from_tree(model, data, qT)
        kin = _kinematics(model, data, q_full, np.zeros((1, model.nv)), state.t)
        scale = 1.0 + np.abs(kin.states.r).max()
        if err > tol * scale * 10:
            r = int(np.argmax(np.abs(kin.f[0])))
            joint = model.joints[data.row_joint[r]]
            held = {model.qd_names[k]: float(state.q[b, model.joints[joints_of[k]].q_slice.start
                                                   + k - model.joints[joints_of[k]].v_slice.start])
                    for k in ind}
            raise InconsistentStateError(
                f"assemble: the loop closed by joint {joint.name!r} stays open by {err:.3g} "
                f"after {it} Newton steps with {held or 'no coordinate'} held: the mechanism "
                "cannot be assembled there (or the guess is too far from an assembly)")
        # speeds: hold the independent ones, solve H v = -(fdot at v = 0) for the rest
        vT = state.qd[b, data.v_tree].copy()
        base_rate = kin.fdot[0]  # (kin is at zero speeds) the rows' rates from the base alone
        H = kin.H[0]
        if H.shape[0]:
            vT[free] = _lstsq(H[:, free], -(base_rate + H[:, ind_T] @ vT[ind_T]))
            res = np.abs(H @ vT + base_rate).max()
            vscale = 1.0 + np.abs(vT).max() * scale
            if res > 1e-9 * vscale:
                raise InconsistentStateError(
                    f"assemble: the independent speeds {[model.qd_names[k] for k in ind]} break "
                    f"the loops (velocity residual {res:.3g}): too many independent "
                    "coordinates for the mechanism's degrees of freedom")
        qf, qdf = _complete(model, data, qT[None], vT[None], state.t, state.q[b])
        Q.append(qf[0])
        QD.append(qdf[0])
    return state.result(np.array(Q), "mb.loops.assemble"), \
        state.result(np.array(QD), "mb.loops.assemble")


def independent_coordinates(model, q, *, t=0.0, cut=None, planar=None):
    """Wehage and Haug's partition: independent speeds by a QR of ``H`` with column pivoting.

    The pivot columns (largest first) are the dependent coordinates: the loops determine
    them well; the rest are independent, as many as the mechanism's degrees of freedom at
    ``q`` (the nullity of ``H``).

    Returns
    -------
    list of str
        Names (``model.qd_names``) of the independent speeds.

    Examples
    --------
    >>> import mbcourse as mb
    >>> m = mb.models.crank_slider()
    >>> q, _ = mb.models.crank_slider_state(m, 0.3)
    >>> len(independent_coordinates(m, q))        # one degree of freedom
    1
    """
    data = prepare(model, cut, planar)
    state = _checked(model, q, None, None, t)
    if state.q.shape[0] != 1:
        raise ShapeError("independent_coordinates takes one configuration q of shape "
                         f"({model.nq},)")
    kin = _kinematics(model, data, state.q, state.qd, state.t)
    ind_T = _partition(kin.H[0])[1]
    return [model.qd_names[int(data.v_tree[i])] for i in ind_T]


def _partition(H):
    """``(dependent, independent)`` indices of the columns of ``H`` (pivoted QR)."""
    N = H.shape[1]
    if H.shape[0] == 0:
        return np.zeros(0, dtype=int), np.arange(N)
    _, R, piv = scipy.linalg.qr(H, pivoting=True, mode="economic")
    d = np.abs(np.diag(R))
    rank = int(np.sum(d > _RCOND * max(d[0], 1e-300))) if d.size else 0
    return np.sort(piv[:rank]), np.sort(piv[rank:])


# ------------------------------------------------------------------ simulation
@dataclass
class LoopTrajectory(Trajectory):
    """Result of :func:`simulate`: a :class:`mbcourse.sim.Trajectory` (``t, q, qd``, energy,
    momentum ...) of the Model's own coordinates plus the constraint monitors.

    Attributes
    ----------
    position_drift : (nt,) largest ``|f|`` of the cut joints' rows at every sample
    velocity_drift : (nt,) largest ``|df/dt|``
    nfev : int
        Right-hand-side evaluations.
    stabilization : str
    partitions : list of (float, list of str)
        ``"partitioning"``: the time each partition started and its independent speeds.
    corrections : float
        ``"projection"``: the largest position correction of one step (the drift the
        projection removed).
    """

    position_drift: np.ndarray = None
    velocity_drift: np.ndarray = None
    nfev: int = 0
    stabilization: str = ""
    partitions: list = None
    corrections: float = 0.0


def _check_stabilization(stabilization, baumgarte):
    if stabilization not in STABILIZATIONS:
        raise ShapeError(f"stabilization must be one of {list(STABILIZATIONS)}, got "
                         f"{stabilization!r}")
    if stabilization == "baumgarte":
        try:
            alpha, beta = (float(x) for x in baumgarte)
        except (TypeError, ValueError):
            raise ShapeError(f"baumgarte must be two gains (alpha, beta) in 1/s, got "
                             f"{baumgarte!r}") from None
        if not (np.isfinite(alpha) and np.isfinite(beta) and alpha >= 0 and beta >= 0):
            raise ShapeError(f"baumgarte gains must be finite and >= 0, got {baumgarte!r}")
        return alpha, beta
    return None


class _System:
    """The reduced system's ODE: state ``(q_T, v_T)`` and the full Model's forces."""

    def __init__(self, model, data, tau_fn, gains, damped, q_ref, compiled=True):
        self.model, self.data, self.tau_fn, self.gains = model, data, tau_fn, gains
        self.red = data.reduced
        self.nq, self.nv = self.red.nq, self.red.nv
        self.damped = damped
        self.q_ref = q_ref  # branch of the cut joints' angles, follows the motion
        self.nfev = 0
        self.rank = None  # rank of H on the manifold: the largest seen at consistent states
        # the compiled right-hand side (the same equations, chapter 6's kernel, and the
        # dampers' power): without drive forces or Baumgarte terms, whose evaluation needs
        # the full state
        kernel = (_kernel_data(model, data) if compiled and tau_fn is None and gains is None
                  else None)
        self.kernel = kernel if kernel is not None and not kernel.callables else None
        if self.kernel is not None:
            self._tau = np.zeros(self.nv)
            self._sv = np.zeros(6 * len(self.kernel.cints))
            self._power = np.zeros(1)

    def observe_rank(self):
        """Update the rank from the last evaluation, made at a consistent state (the start,
        a projected state)."""
        s = self.singular_values
        found = int(np.sum(s > _RCOND * s[0])) if s.size else 0
        self.rank = found if self.rank is None else max(self.rank, found)

    def accelerations(self, t, qT, vT):
        """``(qdd_T, q, qd)``; the compiled route leaves ``q, qd`` None (it never completes the
        cut joints' coordinates) and hands a state it declines to the NumPy route."""
        if self.kernel is not None:
            qdd = np.empty(self.nv)
            args = with_base_motion(self.model, self.kernel.args(), t)
            rows = loops_reduced(*args, np.ascontiguousarray(qT, dtype=float),
                                 np.ascontiguousarray(vT, dtype=float), self._tau,
                                 -1 if self.rank is None else self.rank, qdd, self._sv,
                                 self._power)
            if rows >= 0:
                self.singular_values = self._sv
                return qdd, None, None
        q, qd, kin = _complete(self.model, self.data, qT[None], vT[None], t, self.q_ref, True)
        self.q_ref = q[0]
        tau = np.zeros((1, self.model.nv))
        if self.tau_fn is not None:
            tau[0] = self.tau_fn(t, q[0], qd[0])
        # the integrator's own arrays: checked once, in simulate
        state = State(q, qd, tau, None, (1,), float(t), self.model)
        sol = _solve(self.model, self.data, state, (), False, "mb.loops.simulate",
                     baumgarte=self.gains, kin=kin, rank=self.rank)
        self.singular_values = sol.singular_values[0]
        return sol.qdd[0, self.data.v_tree], q[0], qd[0]

    def dissipated(self, t, q, qd):
        """The dampers' power at the state of the last :meth:`accelerations` (``q`` None:
        the kernel computed it)."""
        if q is None:
            return self._power.copy()
        return -np.atleast_1d(model_forces.damping_power(self.model, q, qd, t))

    def speeds(self, y):
        """The reduced system's speeds in an integrated state (for the blow-up test)."""
        return y[self.nq:self.nq + self.nv]

    def speed(self, y):
        return np.abs(self.speeds(y)).max(initial=0.0)

    def rhs(self, t, y):
        self.nfev += 1
        qT = self.red.normalize_q(y[:self.nq])
        vT = y[self.nq:self.nq + self.nv]
        qddT, q, qd = self.accelerations(t, qT, vT)
        parts = [model_poses.qdot(self.red, qT, vT), qddT]
        if self.damped:
            parts.append(self.dissipated(t, q, qd))
        return np.concatenate(parts)

    def closure(self, qT, t):
        """``(f, H, f_t, scale)`` of :func:`_closure`, on chapter 6's kernel when the
        right-hand side is (:func:`mbcourse.kernels.loops.loops_closure`: the cut joints'
        spatial rows, redundant ones included, which the minimum-norm steps tolerate), the
        NumPy route where it declines."""
        if self.kernel is not None:
            rows = 6 * len(self.kernel.cints)
            f, ft, H, scale = np.zeros(rows), np.zeros(rows), np.zeros((rows, self.nv)), \
                np.zeros(1)
            nc = loops_closure(*with_base_motion(self.model, self.kernel.args(), t),
                               np.ascontiguousarray(qT, dtype=float), f, H, ft, scale)
            if nc >= 0:
                return f[:nc], H[:nc], ft[:nc], scale[0]
        return _closure(self.model, self.data, qT, t)

    def project(self, y, t, tol=1e-13):
        """Newton on the positions, then the velocities onto ``H v = -f_t``."""
        qT = self.red.normalize_q(y[:self.nq])
        qT_new, _, _ = _newton(self.model, self.data, qT, t, np.arange(self.nv), tol, 20,
                               lambda q_: self.closure(q_, t))
        _, H, ft, _ = self.closure(qT_new, t)
        vT = y[self.nq:self.nq + self.nv].copy()
        if H.shape[0]:
            vT -= _lstsq(H, H @ vT + ft)
        out = y.copy()
        out[:self.nq], out[self.nq:self.nq + self.nv] = qT_new, vT
        return out, float(np.abs(qT_new - qT).max(initial=0.0))


def simulate(model, t_span, q0, qd0=None, tau=None, *, method="DOP853", rtol=1e-10,
             atol=1e-10, t_eval=None, stabilization=DEFAULT_STABILIZATION, cut=None,
             planar=None, baumgarte=DEFAULT_BAUMGARTE, max_step=np.inf, cond_limit=1e4,
             compiled=None, **options):
    """Integrate a closed mechanism in the reduced system's coordinates.

    Parameters
    ----------
    model : Model
    t_span : (t0, t1)
    q0, qd0 : array_like, shapes (nq,), (nv,)
        A consistent initial state (:func:`assemble`); ``qd0=None`` is rest.
    tau : None, array_like (nv,) or callable ``tau(t, q, qd)``
        Generalized forces on the Model's coordinates (the one ``simulate`` signature of
        :mod:`mbcourse.sim`).
    stabilization : {"projection", "partitioning", "baumgarte", "none"}
        The treatment of drift (module docstring and :data:`STABILIZATION_TABLE`).
    method, rtol, atol, t_eval, max_step
        Of :func:`scipy.integrate.solve_ivp`; ``"projection"`` steps with ``"DOP853"``,
        ``"RK45"``, ``"RK23"`` or, for stiff mechanisms (stiff springs), ``"Radau"`` and
        ``"BDF"``.
    cut, planar
        As in :func:`forward_dynamics`.
    baumgarte : (alpha, beta)
        Gains in 1/s for ``stabilization="baumgarte"``.
    cond_limit : float
        ``"partitioning"``: a new partition when the dependent block's condition number
        passes this.
    compiled : bool, optional
        ``None`` (default): the right-hand side runs chapter 6's kernel
        (:func:`mbcourse.kernels.loops.loops_reduced`: the reduced tree's accelerations and
        the dampers' power, the cut joints' rows from the bodies' poses) for the models
        :func:`forward_dynamics` compiles, when there is no ``tau``, no Baumgarte term and
        no force given as a callable (these need the full state);
        ``False``: the NumPy route; ``True``: refuse (``ModelError``) what the kernel cannot
        run. Projection and partitioning's Newton solves take the loops' residuals and
        Jacobian from the kernel too (:func:`mbcourse.kernels.loops.loops_closure`).

    Returns
    -------
    LoopTrajectory

    Notes
    -----
    The default, ``"projection"``, was chosen by this measurement
    (``python benchmarks/loops_stabilization.py``: the crank-slider with a spring of
    200 N/m, 5 rad/s, and the Grashof four-bar, 10 rad/s, 2 s each, DOP853 at
    ``rtol = atol = tol``, 101 output points; ``drift`` largest ``|f|``, ``vdrift`` largest
    ``|df/dt|``, ``dE`` largest ``|E - E0| / max |E|``, ``nfev`` right-hand-side
    evaluations, ``s`` wall seconds on a 2-core machine shared with other jobs, the
    kernels already compiled)::

        system           tol treatment        drift   vdrift       dE   nfev      s
        crank-slider   1e-06 none           1.1e-06  5.8e-06  1.1e-05   2072    0.3
        crank-slider   1e-06 baumgarte      5.6e-08  2.4e-06  1.7e-06   2015    4.6
        crank-slider   1e-06 projection     4.2e-15  1.4e-15  8.0e-06   2177    0.2
        crank-slider   1e-06 partitioning   1.4e-13  2.8e-15  1.6e-06   2207    0.9
        crank-slider   1e-08 none           1.9e-09  1.3e-08  2.1e-08   3074    0.3
        crank-slider   1e-08 baumgarte      4.7e-10  9.4e-09  1.6e-08   3164    6.2
        crank-slider   1e-08 projection     8.3e-17  1.3e-15  1.4e-08   3250    0.4
        crank-slider   1e-08 partitioning   1.2e-13  3.1e-15  3.2e-08   3566    1.3
        crank-slider   1e-10 none           4.0e-11  8.9e-11  4.4e-10   4889    0.5
        crank-slider   1e-10 baumgarte      3.7e-12  1.6e-10  2.6e-10   4865    7.9
        crank-slider   1e-10 projection     1.3e-13  1.5e-15  1.7e-10   5191    0.4
        crank-slider   1e-10 partitioning   1.1e-13  2.9e-15  2.7e-10   5840    1.9
        four-bar       1e-06 none           5.8e-07  7.2e-06  1.4e-06   1241    0.2
        four-bar       1e-06 baumgarte      1.5e-07  9.5e-07  4.7e-07   1286    1.6
        four-bar       1e-06 projection     2.4e-14  1.4e-15  1.6e-06   1305    0.2
        four-bar       1e-06 partitioning   1.3e-13  3.8e-15  7.8e-06   1340    0.5
        four-bar       1e-08 none           2.2e-09  1.5e-08  5.3e-09   1907    0.2
        four-bar       1e-08 baumgarte      8.4e-10  1.2e-08  3.3e-09   2105    2.5
        four-bar       1e-08 projection     2.4e-16  2.0e-15  3.3e-09   2012    0.2
        four-bar       1e-08 partitioning   1.3e-13  4.5e-15  7.8e-08   2147    0.8
        four-bar       1e-10 none           3.2e-11  9.5e-11  6.7e-11   3149    0.3
        four-bar       1e-10 baumgarte      6.3e-12  1.1e-10  3.8e-11   3248    3.9
        four-bar       1e-10 projection     1.3e-13  2.8e-15  5.6e-11   3333    0.2
        four-bar       1e-10 partitioning   9.1e-14  5.4e-15  1.7e-09   3623    1.1

    Reading: projection holds the loops closed to rounding (``|f|`` <= 1e-13, ``df/dt``
    <= 3e-15) for 3–7 % more evaluations than none, with the same energy error as the
    plain integration, at about the wall time of none (0.6–1.3x; the right-hand sides and
    the Newton projection's residuals and Jacobian are compiled). Baumgarte cuts the drift
    4–20x but leaves it at the level of the tolerance, and its terms need the full state,
    so it runs the NumPy right-hand side (8–21x the time of none). Partitioning also closes
    the loops to rounding but pays a Newton solve per evaluation (2.5–4.5x the wall time of
    none), and its energy error is up to 30x larger at tight tolerances (the error control
    sees only the independent coordinates).

    Redundant rows and singular configurations: the rank of ``H`` is decided at consistent
    states (the start and every projected step) and the largest rank seen is kept for the
    evaluations in between, which lie a little off the manifold. Off it, a redundant row's
    zero singular value grows with the drift and would be taken for a constraint
    (Bricard's linkage then blows up); near a singular configuration, where the mobility
    jumps (the IFToMM N-four-bar with its bars horizontal), a true constraint's small
    singular value is kept, so the motion passes through on its branch (the tests follow
    the N-four-bar through its horizontal positions with the cranks parallel to 1e-8).

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.crank_slider()
    >>> q0, qd0 = mb.models.crank_slider_state(m, 0.3, 5.0)
    >>> res = simulate(m, (0.0, 0.5), q0, qd0)
    >>> bool(res.position_drift.max() < 1e-10), bool(np.ptp(res.energy) < 1e-8)
    (True, True)
    """
    _sim.refuse_options("mb.loops.simulate", options, ["stabilization", "cut", "planar",
                                                       "baumgarte", "max_step", "cond_limit",
                                                       "compiled"])
    _sim.check_model(model)
    gains = _check_stabilization(stabilization, baumgarte)
    data = prepare(model, cut, planar)
    t0, t1, q0, qd0, tau_fn = initial_state(model, t_span, q0, qd0, tau)
    method, t_eval = _sim.check_method(method), _sim.check_t_eval(t_eval, t0, t1)
    with np.errstate(over="ignore", invalid="ignore"):
        kin = _kinematics(model, data, q0[None], qd0[None], t0)
        _check_consistency(model, data, kin, q0[None], qd0[None])
    system = _System(model, data, tau_fn, gains, _sim.prepare(model).damped, q0,
                     compiled is not False)
    if compiled and system.kernel is None:
        raise ModelError("mb.loops.simulate: the compiled right-hand side needs no tau, no "
                         "Baumgarte term, no force given as a callable and a model "
                         "mb.loops.forward_dynamics compiles ("
                         f"{KERNELS['loops'].refusal}); use compiled=None")
    qT0, vT0 = q0[data.q_tree], qd0[data.v_tree]
    system.accelerations(t0, qT0, vT0)  # bad forces are refused here, before integrating
    system.observe_rank()
    ts, QT, VT, diss, extra = _integrate(system, stabilization, t0, t1, qT0, vT0, t_eval,
                                         dict(method=method, rtol=rtol, atol=atol,
                                              max_step=max_step), cond_limit)
    q, qd = _sequential_complete(model, data, QT, VT, ts, q0)
    pdrift, vdrift = _drifts(model, data, q, qd, ts)
    return LoopTrajectory(model, ts, q, qd, None, diss, position_drift=pdrift,
                          velocity_drift=vdrift, nfev=system.nfev, stabilization=stabilization,
                          **extra)


def _integrate(system, stabilization, t0, t1, qT0, vT0, t_eval, ivp, cond_limit):
    """``(ts, QT, VT, dissipated, extra)`` of the reduced system with the stabilization."""
    extra = dict(partitions=None, corrections=0.0)
    if stabilization == "partitioning":
        ts, QT, VT, diss, extra["partitions"] = _partitioned(system, t0, t1, qT0, vT0, t_eval,
                                                             ivp, cond_limit)
        return ts, QT, VT, diss, extra
    y0 = np.concatenate([qT0, vT0] + ([np.zeros(1)] if system.damped else []))
    if stabilization == "projection":
        ts, Y, extra["corrections"] = _projected(system, t0, t1, y0, t_eval, **ivp)
    else:
        sol = _sim.integrate("mb.loops.simulate", system.rhs, t0, t1, y0, system.speeds,
                             t_eval=t_eval, **ivp)
        ts, Y = sol.t, sol.y.T
    QT = system.red.normalize_q(Y[:, :system.nq])
    VT = Y[:, system.nq:system.nq + system.nv]
    return ts, QT, VT, (Y[:, -1] if system.damped else None), extra


def _drifts(model, data, q, qd, ts):
    """Largest ``|f|`` and ``|df/dt|`` at every sample."""
    with np.errstate(over="ignore", invalid="ignore"):
        if model.base_motion is None:
            kin = _kinematics(model, data, q, qd, 0.0)
            return (np.abs(kin.f).max(axis=1, initial=0.0),
                    np.abs(kin.fdot).max(axis=1, initial=0.0))
        pairs = [_kinematics(model, data, q[k:k + 1], qd[k:k + 1], float(tk))
                 for k, tk in enumerate(ts)]
        return (np.array([np.abs(p.f).max(initial=0.0) for p in pairs]),
                np.array([np.abs(p.fdot).max(initial=0.0) for p in pairs]))


def _sequential_complete(model, data, QT, VT, ts, q0):
    """Full states of the samples, each cut joint's branch following the previous sample."""
    out_q = np.zeros((len(ts), model.nq))
    out_qd = np.zeros((len(ts), model.nv))
    ref = q0
    for k, tk in enumerate(ts):
        q, qd = _complete(model, data, QT[k:k + 1], VT[k:k + 1], float(tk), ref)
        out_q[k], out_qd[k] = q[0], qd[0]
        ref = q[0]
    return out_q, out_qd


_STEPPERS = {"DOP853": scipy.integrate.DOP853, "RK45": scipy.integrate.RK45,
             "RK23": scipy.integrate.RK23, "Radau": scipy.integrate.Radau,
             "BDF": scipy.integrate.BDF}


def _projected(system, t0, t1, y0, t_eval, method, rtol, atol, max_step):
    """Runge–Kutta steps, each accepted state projected onto the constraint manifolds."""
    if method not in _STEPPERS:
        raise ShapeError(f"stabilization='projection' steps with {sorted(_STEPPERS)}, got "
                         f"{method!r}")
    solver = _STEPPERS[method](system.rhs, t0, y0, t1, rtol=rtol, atol=atol, max_step=max_step)
    ts, Y = [t0], [y0]
    worst = 0.0
    while solver.status == "running":
        t_prev = solver.t
        message = solver.step()
        if solver.status == "failed" or not system.speed(solver.y) <= _sim.BLOWUP_SPEED:
            raise _sim.integration_error("mb.loops.simulate", solver.t, t1, message,
                                         system.speeds(solver.y))
        if t_eval is not None:
            inside = t_eval[(t_eval > t_prev) & (t_eval <= solver.t)]
            if inside.size:
                dense = solver.dense_output()
                for te in inside:
                    ts.append(float(te))
                    Y.append(system.project(dense(te), float(te))[0])
        y, moved = system.project(solver.y, solver.t)
        worst = max(worst, moved)
        solver.y = y
        if isinstance(solver, scipy.integrate.BDF):
            solver.D[0] = y  # the backward differences start from the projected state
        f = system.rhs(solver.t, y)
        if hasattr(solver, "f"):
            solver.f = f  # first stage of the next Runge-Kutta step (FSAL)
        system.observe_rank()
        if t_eval is None:
            ts.append(solver.t)
            Y.append(y)
    ts, Y = np.array(ts), np.array(Y)
    if t_eval is not None:
        keep = np.isin(ts, t_eval)
        ts, Y = ts[keep], Y[keep]
    return ts, Y, worst


class _Partition:
    """One partition of the reduced speeds (Wehage–Haug): the independent ones ``ind`` are
    integrated, the dependent ones ``dep`` solved from the loop constraints."""

    def __init__(self, system, t, qT, cond_limit):
        model, data = system.model, system.data
        self.dep, self.ind = _partition(_closure(model, data, qT, t)[1])
        self.names = [model.qd_names[int(data.v_tree[i])] for i in self.ind]
        self.system, self.qT, self.cond_limit = system, qT.copy(), cond_limit
        self.k = self.ind.size

        def ill(tk, y):  # the dependent block's condition number passes cond_limit
            if not self.dep.size:
                return 1.0
            H = self.dependent(tk, y)[2]
            return np.log10(self.cond_limit) - np.log10(np.linalg.cond(H[:, self.dep]))
        ill.terminal = True
        self.event = ill if self.dep.size else None

    def y0(self, qT, vT):
        return np.concatenate([qT[self.ind], vT[self.ind]]
                              + ([np.zeros(1)] if self.system.damped else []))

    def speeds(self, y):
        return y[self.k:2 * self.k]

    def dependent(self, tk, y, start=None):
        """``(qT, vT, H)`` from the independent coordinates and speeds in ``y``."""
        model, data = self.system.model, self.system.data
        ind, dep = self.ind, self.dep
        qT_k = (self.qT if start is None else start).copy()
        qT_k[ind] = y[:self.k]
        qT_k, err, _ = _newton(model, data, qT_k, tk, dep, 1e-13, 20,
                               lambda q_: self.system.closure(q_, tk))
        if err > 1e-9:
            raise SingularSystemError(
                f"mb.loops.simulate: the dependent coordinates cannot be solved at "
                f"t={tk:.6g} (residual {err:.3g}); use stabilization='projection'")
        self.qT = qT_k
        _, H, ft, _ = self.system.closure(qT_k, tk)
        v = np.zeros(self.system.nv)
        v[ind] = self.speeds(y)
        if dep.size:
            v[dep] = _lstsq(H[:, dep], -(ft + H[:, ind] @ v[ind]))
        return qT_k, v, H

    def rhs(self, tk, y):
        system = self.system
        qT_k, v, _ = self.dependent(tk, y)
        system.nfev += 1
        qdd, qf, qdf = system.accelerations(tk, qT_k, v)
        parts = [v[self.ind], qdd[self.ind]]
        if system.damped:
            parts.append(system.dissipated(tk, qf, qdf))
        return np.concatenate(parts)

    def collect(self, sol, t, start, dissipated, out):
        """Append the samples of one segment to ``out = (ts, QT, VT, D)``, marching through
        the integrator's steps so that every Newton solve starts next to its answer (same
        assembly branch)."""
        ts_all, Q_all, V_all, D_all = out
        samples = {float(tk): i for i, tk in enumerate(sol.t)}
        grid = np.union1d(sol.sol.ts[(sol.sol.ts >= t) & (sol.sol.ts <= sol.t[-1])], sol.t)
        previous = start
        for tk in grid:
            qk, vk, _ = self.dependent(tk, sol.sol(tk), previous)
            previous = qk
            i = samples.get(float(tk))
            if i is None or (ts_all and tk <= ts_all[-1]):
                continue
            ts_all.append(tk)
            Q_all.append(qk)
            V_all.append(vk)
            D_all.append(dissipated + (sol.y[-1, i] if self.system.damped else 0.0))


def _partitioned(system, t0, t1, qT0, vT0, t_eval, ivp, cond_limit):
    """Wehage–Haug: integrate the independent coordinates; a new partition when needed."""
    red = system.red
    if red.nq != red.nv:
        raise ModelError("stabilization='partitioning' integrates coordinates one by one; "
                         "this mechanism has quaternion coordinates: use 'projection'")
    t, qT, vT = t0, qT0.copy(), vT0.copy()
    out, partitions, dissipated = ([], [], [], []), [], 0.0
    while True:
        part = _Partition(system, t, qT, cond_limit)
        partitions.append((t, part.names))
        te = None if t_eval is None else t_eval[(t_eval >= t) & (t_eval <= t1)]
        sol = _sim.integrate("mb.loops.simulate", part.rhs, t, t1, part.y0(qT, vT),
                             part.speeds, t_eval=te, dense_output=True, events=part.event,
                             **ivp)
        part.collect(sol, t, qT.copy(), dissipated, out)
        if not (sol.status == 1 and sol.t_events[0].size):
            break
        t_new, y_new = float(sol.t_events[0][0]), sol.y_events[0][0]  # re-partition
        qT, vT, _ = part.dependent(t_new, y_new)
        if system.damped:
            dissipated += y_new[-1]
        if t_new <= t + 1e-12 * (1 + abs(t)):
            raise SingularSystemError(
                f"mb.loops.simulate: no well-conditioned partition at t={t:.6g}: the "
                "mechanism is at a singular configuration; use 'projection'")
        t = t_new
    ts, Q, V, D = (np.array(x) for x in out)
    return ts, Q, V, (D if system.damped else None), partitions
