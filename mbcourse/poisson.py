"""Equations in generalized momenta ("Poisson impulses") and their O(n) solvers
(Ivanov 2017; the errata page, E28).

The state integrated is ``(q, p)`` with the generalized momenta ``p = dT/dqd = M(q) qd``
instead of ``(q, qd)``. Every step needs ``qd`` from ``p`` (a linear solve with the mass
matrix, done here in O(n) by a recursion over the bodies) and ``dp/dt``.

**Notation.** Ivanov's ``qdot`` is the model's vector of generalized speeds ``qd`` (length
``nv``). For revolute, prismatic, screw, cylindrical and universal joints ``qd = dq/dt``;
for the quaternion joints (spherical, free) ``qd`` holds angular velocities (see
:mod:`mbcourse.model`) and ``dq/dt = model.qdot(q, qd)``. Then ``p = dT/dqd``.

**Frames (our choice of** ``O_i`` **).** Body ``i``'s frame has the body's axes and its
origin ``O_i`` at the **joint point of its inboard joint** (the child's point of the joint
whose child is ``i``), not at the centre of mass; the base frame is the base's origin and
axes. With that choice (Ivanov's §1):

* ``Theta_i = R_a(q)`` (child to parent axes), ``rho_i = c_{k,a} - c_{k} + z_a(q)``: the
  position of ``O_i`` from ``O_{k_i}`` in parent axes (``c_{k,a}`` = the joint's
  ``parent_point``, ``c_k`` = the parent's own inboard ``child_point``, zero for the base);
* body velocities ``v_i = (V_i; omega_i)`` in body axes, ``V_i`` the velocity of ``O_i``,
  obey (1) ``v_i = C_i v_{k_i} + A_i qd_i + v*_i`` with::

      C_i = [[Theta^T, -Theta^T rho~], [0, Theta^T]],     A_i = [[Theta^T k], [Theta^T p]]

  (the columns ``a_ij``: the joint's ``k`` and ``p`` matrices give the relative velocity
  of ``O_i`` and the relative angular velocity); ``v*_i = C_i v_0`` carries the prescribed
  base motion into the bodies attached to body 0, and ``v*_i = 0`` otherwise;
* ``M_i = [[m E, -m r~], [m r~, J_O]]`` with ``r = -child_point`` the centre of mass seen
  from ``O_i`` and ``J_O = J_C - m r~ r~`` the inertia tensor **about** ``O_i``, not the
  central one (the errata page, E28; with ``J_C`` here, ``T != v^T M v / 2``);
* ``Omega_i = [[omega~, 0], [V~, omega~]]`` (ordering ``(V, omega)``, E28).

**Equations** (Ivanov (6), (7))::

    M v - S^T mu = 0,   -S v + A qd = -v*,   A^T mu = p                (6)
    dp/dt = (Adot^T - A^T Omega) mu + Q + tau                          (7)

``mu_i = M_i v_i + sum_{children c} C_c^T mu_c`` is the spatial momentum of the subtree
rooted at ``i``, about ``O_i`` in body axes; ``Q`` the generalized applied forces:
``A^T T^T F`` of the body wrenches ``F_i`` about ``O_i`` (gravity, loads and spring-dampers
of :meth:`~mbcourse.Model.applied_wrenches`) plus the joint springs and control laws of
:meth:`~mbcourse.Model.generalized_forces`; ``tau`` the given generalized forces. (7) is the
momentum balance of each subtree about the moving point ``O_i``, ``dmu/dt = F* - Omega mu``
in body axes, projected on the joint's axes (an ideal joint's reaction has
``A_i^T R_i = 0``). ``Adot`` comes from the joints' own rates of ``p`` and ``k``
(:meth:`mbcourse.joints.Joint.rates`).

**Solvers** of (6) for ``qd`` given ``p`` (the ``solver=`` option), both O(n), looping over
the bodies and vectorized over a batch of configurations (any number of leading
dimensions):

* ``"sweep"`` (Ivanov, alg. of §3): Gaussian elimination from the leaves with the
  "articulated" ``M*_i``, ``phi*_i``, inverting the small ``A_i^T M*_i A_i`` (order
  ``n_i <= 6``);
* ``"cholesky"`` (Ivanov, alg. of §4): the block ``L^T D L`` factorization of the symmetric
  system; ``A_i^T M*_i A_i = L_i L_i^T`` and triangular solves replace the inverses.

They are algebraically identical. Loops in the graph and joints that point toward the base
are refused (:class:`~mbcourse.errors.TopologyError`), as in :mod:`mbcourse.vereshchagin`.

There is no ``forward_dynamics`` here: Ivanov's equations give ``(qd, dp/dt)``, the right
side of the first-order system in ``(q, p)``, never ``qdd``; ``M qdd = dp/dt - Mdot qd``
would need ``Mdot qd``, which (6)–(7) do not form. The O(n) route to ``qdd`` is
:func:`mbcourse.vereshchagin.forward_dynamics`.

The per-model constants (joint order, body inertias about ``O_i``) are prepared once per
model version by :func:`prepare`.

Examples
--------
>>> import numpy as np, mbcourse as mb
>>> model = mb.models.triple_pendulum()
>>> q, qd = np.array([0.3, -0.2, 0.5]), np.array([1.0, 0.5, -0.4])
>>> p, mu = momenta(model, q, qd)
>>> bool(np.allclose(p, mb.tree.mass_matrix(model, q) @ qd))
True
>>> bool(np.allclose(velocities(model, q, p, solver="cholesky"), qd))
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import sim as _sim
from .kernels import route
from .errors import ShapeError, SingularSystemError
from . import forces as model_forces
from . import poses as model_poses

from .spatial import PIVOT_RTOL, cross, mv, pivot_scale, skew, transpose
from .coupling import coupled

__all__ = ["SOLVERS", "ImpulseData", "prepare", "momenta", "velocities", "pdot",
           "generalized_forces", "simulate", "Trajectory", "dense_system", "DenseSystem",
           "compiled_system", "CompiledSystem"]

#: The linear-algebra choices of ``solver=``.
SOLVERS = ("sweep", "cholesky")

_E3 = np.eye(3)


# ------------------------------------------------------------------ prepared data
@dataclass(frozen=True)
class ImpulseData:
    """Prepared data of Ivanov's form (see :func:`prepare`).

    Attributes
    ----------
    joints : tuple of Joint
        Base-to-leaves order.
    M : ndarray, shape (n + 1, 6, 6)
        Body mass matrices about ``O_i``, body axes (row 0, the base: zero).
    rc : ndarray, shape (n + 1, 3)
        Centre of mass of each body seen from ``O_i``, body axes (``-child_point``).
    offset : ndarray, shape (m, 3)
        ``c_{k,a} - c_k`` of each joint (in ``joints`` order): ``rho = offset + z_a(q)``.
    springs, dampers, state_loads, generalized : bool
        Whether the model has spring-dampers (with any damping), loads that are callables
        of ``(t, q, qd)``, joint springs or generalized-force callables.
    """

    joints: tuple
    M: np.ndarray
    rc: np.ndarray
    offset: np.ndarray
    springs: bool
    dampers: bool
    state_loads: bool
    generalized: bool


def prepare(model):
    """The per-model constants of Ivanov's form, built once per model version.

    Returns
    -------
    ImpulseData

    Raises
    ------
    TopologyError
        For closed loops and for joints whose child is nearer the base than their parent.

    Examples
    --------
    A rod of mass 1 and central ``J_z = 1`` hinged 1 from its centre: about the hinge
    ``J_z = 1 + m l^2 = 2`` (E28).

    >>> import numpy as np, mbcourse as mb
    >>> m = mb.Model()
    >>> _ = m.add_body("rod", 1.0, np.eye(3))
    >>> _ = m.add_joint("j", "revolute", "ground", "rod", child_point=(-1, 0, 0),
    ...                 axis=(0, 0, 1))
    >>> data = prepare(m)
    >>> data.M[1, 5, 5], data.rc[1].tolist()
    (np.float64(2.0), [1.0, 0.0, 0.0])
    """
    def build():
        joints = tuple(model.outward_joints("Ivanov's recursion"))
        n = model.n
        M = np.zeros((n + 1, 6, 6))
        rc = np.zeros((n + 1, 3))
        origin = np.zeros((n + 1, 3))  # O_i from the centre of mass of i, body axes
        for j in joints:
            b = model.bodies[j.child]
            r = -j.child_point
            rt = skew(r)
            M[j.child, :3, :3] = b.mass * _E3
            M[j.child, :3, 3:] = -b.mass * rt
            M[j.child, 3:, :3] = b.mass * rt
            M[j.child, 3:, 3:] = b.inertia - b.mass * rt @ rt  # about O_i (E28)
            rc[j.child] = r
            origin[j.child] = j.child_point
        offset = np.array([j.parent_point - origin[j.parent] for j in joints]).reshape(-1, 3)
        return ImpulseData(
            joints=joints, M=M, rc=rc, offset=offset,
            springs=bool(model.springs),
            dampers=any(s.damping > 0 for s in model.springs),
            state_loads=any(callable(ld.force) or callable(ld.torque) for ld in model.loads),
            generalized=bool(model.joint_springs or model.generalized_force_elements),
        )

    return model.prepared("poisson", build)


def _check_solver(solver):
    if solver not in SOLVERS:
        raise ShapeError(f"solver must be one of {list(SOLVERS)}, got {solver!r}")


def _momentum_state(model, q, p, tau=None, t=0.0):
    """:meth:`Model.check_state` with the momenta ``p`` in the place of the speeds (and
    named ``p`` in the messages)."""
    return model.check_state(q, p, tau, t=t, qd_name="p")


def _base(model, t):
    return model.base_motion.state(t) if model.base_motion is not None else None


# ---------------------------------------------------------------------- kinematics
@dataclass
class _Kinematics:
    """Per-call kinematic quantities of (1), body frames (see the module docstring)."""

    joints: tuple
    C: list  # per step (B, 6, 6)
    A: list  # per step (B, 6, n_i)
    rho: list  # per step (B, 3): O_i from O_k, parent axes
    ThT: list  # per step Theta_i^T (B, 3, 3)
    R: np.ndarray  # (B, n + 1, 3, 3) absolute orientations (body axes -> inertial)
    M: np.ndarray  # (n + 1, 6, 6) body inertias about O_i, body axes (row 0: zero)
    rc: np.ndarray  # (n + 1, 3) centre of mass from O_i, body axes
    vstar: np.ndarray  # (B, n + 1, 6)


def _kinematics(k, q, base):
    """``C_i``, ``A_i``, ``v*_i`` of Ivanov's §1-2 for a batch ``q`` (B, nq)."""
    B = q.shape[0]
    n = k.M.shape[0] - 1
    R = np.empty((B, n + 1, 3, 3))
    v0 = np.zeros((B, 6))
    if base is not None:
        R0 = base["orientation"]
        v0[:, :3] = R0.T @ base["velocity"]
        v0[:, 3:] = R0.T @ base["angular_velocity"]
    else:
        R0 = _E3
    R[:, 0] = R0
    vstar = np.zeros((B, n + 1, 6))
    Cs, As, rhos, ThTs = [], [], [], []
    for j, offset in zip(k.joints, k.offset):
        kk, i = j.parent, j.child
        qa = q[:, j.q_slice]
        Th = np.broadcast_to(j.rotation(qa), (B, 3, 3))
        ThT = transpose(Th)
        rho = offset + j.z(qa)  # O_i from O_k, parent axes
        C = np.zeros((B, 6, 6))
        C[:, :3, :3] = C[:, 3:, 3:] = ThT
        C[:, :3, 3:] = -ThT @ skew(rho)
        A = np.concatenate([ThT @ j.k(qa), ThT @ j.p(qa)], axis=1)  # columns a_ij
        R[:, i] = R[:, kk] @ Th
        if kk == 0:
            vstar[:, i] = mv(C, v0)  # base motion goes into v*_i
        Cs.append(C)
        As.append(A)
        rhos.append(rho)
        ThTs.append(ThT)
    return _Kinematics(k.joints, Cs, As, rhos, ThTs, R, k.M, k.rc, vstar)


# ----------------------------------------------------------------- direct recursion
def _body_twists(kin, qd):
    """``v_i = C_i v_{k_i} + A_i qd_i + v*_i`` (1), base-to-leaves; row 0 (base) is zero."""
    v = np.zeros(kin.vstar.shape)
    for j, C, A in zip(kin.joints, kin.C, kin.A):
        v[:, j.child] = mv(C, v[:, j.parent]) + mv(A, qd[:, j.v_slice]) + kin.vstar[:, j.child]
    return v


def _subtree_momenta(kin, v):
    """``mu_i = M_i v_i + sum_c C_c^T mu_c``, leaves-to-base; ``mu_0`` = total momentum."""
    mu = mv(kin.M, v)
    for j, C in zip(reversed(kin.joints), reversed(kin.C)):
        mu[:, j.parent] += mv(transpose(C), mu[:, j.child])
    return mu


def _project(kin, mu, nv):
    p = np.zeros((mu.shape[0], nv))
    for j, A in zip(kin.joints, kin.A):
        p[:, j.v_slice] = mv(transpose(A), mu[:, j.child])
    return p


@coupled("momenta")
def momenta(model, q, qd, *, t=0.0):
    """Generalized momenta ``p = A^T mu = dT/dqd`` and subtree momenta ``mu`` (Ivanov (6)).

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd : array_like, shape (..., nv)
        Generalized speeds (Ivanov's ``qdot``; angular velocities for quaternion joints).
    t : float
        Time (matters only with a prescribed base motion, which enters through ``v*``:
        then ``p = M(q) qd + A^T T^T M T v*``).

    Returns
    -------
    p : ndarray, shape (..., nv)
        ``p = M(q) qd`` without base motion.
    mu : ndarray, shape (..., n + 1, 6)
        ``mu[i]`` (``i >= 1``): linear and angular momentum of the subtree rooted at body
        ``i``, about ``O_i`` (its inboard joint point), in body ``i`` axes;
        ``mu[0]``: the whole system's momentum about the base origin, base axes.

    Examples
    --------
    One rod of mass 1 and central ``J_z = 1`` on a hinge 1 from its centre: ``p = (J + m l^2)
    qd`` and the angular momentum about the hinge is the same number.

    >>> import numpy as np, mbcourse as mb
    >>> m = mb.Model()
    >>> _ = m.add_body("rod", 1.0, np.eye(3))
    >>> _ = m.add_joint("j", "revolute", "ground", "rod", child_point=(-1, 0, 0),
    ...                 axis=(0, 0, 1))
    >>> p, mu = momenta(m, [0.3], [2.0])
    >>> p.round(12).tolist(), mu[1].round(12).tolist()
    ([4.0], [0.0, 2.0, 0.0, 0.0, 0.0, 4.0])
    """
    state = model.check_state(q, qd, t=t)
    k = prepare(model)
    with np.errstate(over="ignore", invalid="ignore"):
        kin = _kinematics(k, state.q, _base(model, state.t))
        mu = _subtree_momenta(kin, _body_twists(kin, state.qd))
        p = _project(kin, mu, model.nv)
    what = "mb.poisson.momenta"
    return state.result(p, what), state.result(mu, what)


# ------------------------------------------------------------------------- solvers
def _lu_solve(V, b, joint):
    """``D b = V^-1 b`` by LU (np.linalg.solve); an explicit inverse loses ~10x accuracy on
    6-DOF joints, whose ``A^T M* A`` mixes mass and inertia units."""
    try:
        return np.linalg.solve(V, b)
    except np.linalg.LinAlgError:
        raise SingularSystemError(
            f"joint {joint.name!r}: A^T M* A is singular (no mass moves along this joint)"
        ) from None


def _singular_to_rounding(V, A, Ms, joint):
    """Refuse ``V = A^T M* A`` when it is singular to working precision: its smallest
    eigenvalue at or below :data:`~mbcourse.spatial.PIVOT_RTOL` of
    :func:`~mbcourse.spatial.pivot_scale` (as the recursion's pivots). A direction of
    ``M*`` lost to the joints outboard (two hip axes in line) leaves ``V`` at rounding
    level."""
    if np.any(np.linalg.eigvalsh(V)[..., 0] <= PIVOT_RTOL * pivot_scale(Ms, A)):
        raise SingularSystemError(
            f"joint {joint.name!r}: A^T M* A is singular (no mass moves along this joint, or "
            "the joints outboard of it already move along its direction)")


def _cholesky(V, joint):
    try:
        return np.linalg.cholesky(V)
    except np.linalg.LinAlgError:
        raise SingularSystemError(
            f"joint {joint.name!r}: A^T M* A is not positive definite (no mass moves along "
            "this joint)"
        ) from None


def _lower_solve(L, b):
    """Forward substitution ``L x = b`` for small lower-triangular ``L`` (B, n, n), b (B, n, r)."""
    n = L.shape[-1]
    if n == 1:
        return b / L[:, :1, :1]
    x = np.empty(np.broadcast_shapes(L.shape[:-2], b.shape[:-2]) + b.shape[-2:])
    for r in range(n):
        s = b[:, r] - np.einsum("bk,bkc->bc", L[:, r, :r], x[:, :r])
        x[:, r] = s / L[:, r, r, None]
    return x


def _upper_solve_T(L, b):
    """Back substitution ``L^T x = b`` with ``L`` lower triangular."""
    n = L.shape[-1]
    if n == 1:
        return b / L[:, :1, :1]
    x = np.empty(np.broadcast_shapes(L.shape[:-2], b.shape[:-2]) + b.shape[-2:])
    for r in range(n - 1, -1, -1):
        s = b[:, r] - np.einsum("bk,bkc->bc", L[:, r + 1:, r], x[:, r + 1:])
        x[:, r] = s / L[:, r, r, None]
    return x


def _sweep(kin, p, nv):
    """Ivanov, alg. of §3 (Gaussian elimination): returns ``qd, v, mu``."""
    B = p.shape[0]
    Mstar = np.array(np.broadcast_to(kin.M, (B,) + kin.M.shape))
    phi = np.zeros(kin.vstar.shape)
    D = {}
    steps = list(zip(kin.joints, kin.C, kin.A))
    for j, C, A in reversed(steps):  # backward: leaves to base
        c, k = j.child, j.parent
        Ms = Mstar[:, c]
        w = mv(Ms, kin.vstar[:, c]) + phi[:, c]  # M*_j v*_j + phi*_j
        if j.nv:
            MA = Ms @ A
            Vj = transpose(A) @ MA  # D_j = Vj^-1 (applied by LU solves)
            _singular_to_rounding(Vj, A, Ms, j)
            G = transpose(_lu_solve(Vj, transpose(MA), j))  # M* A D (D symmetric)
            # H_j = E - M* A D A^T, applied without forming it (fewer operations, and
            # H M* = M* - G (M* A)^T stays symmetric):
            #   M* A D p + H (M* v* + phi*) = w + G (p - A^T w)
            contrib = w + mv(G, p[:, j.v_slice] - mv(transpose(A), w))
            HM = Ms - G @ transpose(MA)
            # H M* is symmetric in exact arithmetic; its round-off asymmetry otherwise grows
            # along a chain (a 50-body Cardan chain lost 5 digits: 6e-5 instead of 1e-10)
            HM = 0.5 * (HM + transpose(HM))
            D[j.index] = Vj
        else:
            contrib, HM = w, Ms
        CT = transpose(C)
        Mstar[:, k] += CT @ HM @ C
        phi[:, k] += mv(CT, contrib)
    v = np.zeros(kin.vstar.shape)
    mu = np.zeros(kin.vstar.shape)
    mu[:, 0] = phi[:, 0]  # v_0 = 0: the base motion is in v*
    qd = np.zeros((B, nv))
    for j, C, A in steps:  # forward: base to leaves
        c = j.child
        pred = mv(C, v[:, j.parent]) + kin.vstar[:, c]
        Ms = Mstar[:, c]
        if j.nv:
            rhs = p[:, j.v_slice] - mv(transpose(A), phi[:, c] + mv(Ms, pred))
            x = _lu_solve(D[j.index], rhs[..., None], j)[..., 0]  # D (p - A^T(...))
            qd[:, j.v_slice] = x
            pred = pred + mv(A, x)
        v[:, c] = pred
        mu[:, c] = mv(Ms, pred) + phi[:, c]
    return qd, v, mu


def _cholesky_solve(kin, p, nv):
    """Ivanov, alg. of §4 (block L^T D L with Cholesky factors): returns ``qd, v, mu``."""
    B = p.shape[0]
    Mstar = np.array(np.broadcast_to(kin.M, (B,) + kin.M.shape))
    phi = np.zeros(kin.vstar.shape)
    saved = {}
    steps = list(zip(kin.joints, kin.C, kin.A))
    for j, C, A in reversed(steps):
        c, k = j.child, j.parent
        Ms = Mstar[:, c]
        w = mv(Ms, kin.vstar[:, c]) + phi[:, c]
        CT = transpose(C)
        MC = Ms @ C
        Mstar[:, k] += CT @ MC
        phi[:, k] += mv(CT, w)
        if j.nv:
            AT = transpose(A)
            V = AT @ Ms @ A
            _singular_to_rounding(V, A, Ms, j)
            L = _cholesky(V, j)  # L L^T = A^T M* A
            x = _lower_solve(L, (p[:, j.v_slice] - mv(AT, w))[..., None])[..., 0]
            V = _lower_solve(L, AT @ MC)  # L V = A^T M* C
            Mstar[:, k] -= transpose(V) @ V
            phi[:, k] += mv(transpose(V), x)
            saved[j.index] = (L, x, V)
    v = np.zeros(kin.vstar.shape)
    mu = np.zeros(kin.vstar.shape)
    mu[:, 0] = phi[:, 0]
    qd = np.zeros((B, nv))
    for j, C, A in steps:
        c, k = j.child, j.parent
        pred = mv(C, v[:, k]) + kin.vstar[:, c]
        if j.nv:
            L, x, V = saved[j.index]
            y = _upper_solve_T(L, (x - mv(V, v[:, k]))[..., None])[..., 0]  # L^T qd = x - V v_k
            qd[:, j.v_slice] = y
            pred = pred + mv(A, y)
        v[:, c] = pred
        mu[:, c] = mv(Mstar[:, c], pred) + phi[:, c]
    return qd, v, mu


def _solve(model, state, solver):
    """Kinematics and the solve of (6) for a checked ``(q, p)`` state."""
    k = prepare(model)
    base = _base(model, state.t)
    kin = _kinematics(k, state.q, base)
    run = _sweep if solver == "sweep" else _cholesky_solve
    qd, v, mu = run(kin, state.qd, model.nv)
    return k, base, kin, qd, v, mu


@coupled("velocities")
def velocities(model, q, p, *, t=0.0, solver="sweep", return_momenta=False):
    """Generalized speeds from generalized momenta: solve (6) for ``qd`` (the **contract**).

    Given ``p``, returns ``qd`` with ``p = M(q) qd`` (plus the base-motion term, see
    :func:`momenta`), in O(n) operations.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    p : array_like, shape (..., nv)
    t : float
    solver : {"sweep", "cholesky"}
        ``"sweep"``: Ivanov, alg. of §3 (elimination with inverses of ``A_i^T M*_i A_i``);
        ``"cholesky"``: Ivanov, alg. of §4 (block ``L^T D L``, triangular solves). For
        models the compiled kernels cover (:func:`mbcourse.kernels.model_data`) the sweep
        runs compiled: the same elimination from the leaves, as chapter 4's recursion with
        the velocity terms and gravity switched off.
    return_momenta : bool
        Also return the subtree momenta ``mu`` (..., n + 1, 6) the solver produces.

    Returns
    -------
    qd : ndarray, shape (..., nv)
        Generalized speeds (Ivanov's ``qdot``).

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> model = mb.models.double_pendulum()
    >>> q, qd = np.array([0.4, -1.0]), np.array([0.3, 2.0])
    >>> p = mb.tree.mass_matrix(model, q) @ qd
    >>> velocities(model, q, p).round(12).tolist()
    [0.3, 2.0]
    >>> velocities(model, np.array([q, q]), np.array([p, 2 * p]), solver="cholesky").round(12)
    array([[0.3, 2. ],
           [0.6, 4. ]])
    """
    _check_solver(solver)
    # the compiled sweep: chapter 4's articulated elimination with the velocity terms and
    # gravity switched off solves M qd = p in O(n) (mbcourse.kernels.poisson)
    out, state = route(model, "poisson", q, p, None, t, what="mb.poisson.velocities",
                       check=lambda: _momentum_state(model, q, p, t=t), gravity=False,
                       applies=solver == "sweep" and not return_momenta)
    if out is not None:
        return out
    if state is None:
        state = _momentum_state(model, q, p, t=t)
    with np.errstate(over="ignore", invalid="ignore"):
        _, _, _, qd, _, mu = _solve(model, state, solver)
    what = "mb.poisson.velocities"
    qd = state.result(qd, what)
    return (qd, state.result(mu, what)) if return_momenta else qd


# -------------------------------------------------------------------------- forces
def _poses(kin, base):
    """Centres of mass (B, n + 1, 3), inertial axes: ``O_i = O_k + R_k rho_i``,
    ``C_i = O_i + R_i r_i``."""
    O = np.empty(kin.vstar.shape[:2] + (3,))
    O[:, 0] = 0.0 if base is None else base["position"]
    for j, rho in zip(kin.joints, kin.rho):
        O[:, j.child] = O[:, j.parent] + mv(kin.R[:, j.parent], rho)
    return O + mv(kin.R, kin.rc)


def _velocities(kin, v, base):
    """Centre-of-mass velocities and angular velocities (B, n + 1, 3), inertial axes, from
    the body twists ``v`` (body axes, velocity of ``O_i``)."""
    V, w = v[..., :3], v[..., 3:]
    vel = mv(kin.R, V + cross(w, kin.rc))
    omega = mv(kin.R, w)
    vel[:, 0] = 0.0 if base is None else base["velocity"]
    omega[:, 0] = 0.0 if base is None else base["angular_velocity"]
    return vel, omega


def _forces(model, k, kin, q, qd, t, base, v=None):
    """Applied wrenches ``F_i`` about ``O_i`` in body axes (gravity, loads, springs),
    (B, n + 1, 6). ``v``: the body twists, needed with dampers (``qd`` not ``None``)."""
    if k.springs:
        damped = k.dampers and qd is not None
        F, Mc = model_forces.applied_wrenches(
            model, q, qd=qd, t=t, poses=(_poses(kin, base), kin.R),
            velocities=_velocities(kin, v, base) if damped else None)
    elif k.state_loads:
        F, Mc = model_forces.applied_wrenches(model, q, qd=qd, t=t, orientations=kin.R)
    else:
        F, Mc = model_forces.applied_wrenches(model, t=t, orientations=kin.R)
    RT = transpose(kin.R)
    f = mv(RT, F)
    out = np.empty(f.shape[:-1] + (6,))
    out[..., :3] = f
    out[..., 3:] = mv(RT, Mc) + cross(kin.rc, f)  # moment about O_i: M_C + (C - O) x f
    out[:, 0] = 0.0
    return out


def _accumulate(kin, F):
    """``F*_i = F_i + sum_c C_c^T F*_c`` (the subtree's applied wrench about ``O_i``)."""
    Fs = np.array(F)
    for j, C in zip(reversed(kin.joints), reversed(kin.C)):
        Fs[:, j.parent] += mv(transpose(C), Fs[:, j.child])
    return Fs


@coupled("force")
def generalized_forces(model, q, qd=None, *, t=0.0):
    """Generalized applied forces ``Q = A^T T^T F`` plus the model's generalized forces, O(n).

    ``F`` holds gravity, loads and spring-dampers (:meth:`~mbcourse.Model.applied_wrenches`);
    the joint springs and control laws (:meth:`~mbcourse.Model.generalized_forces`) are
    added. Dampers and loads that depend on the speeds need ``qd`` (``None``: at rest).

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd : array_like, shape (..., nv), optional
    t : float

    Returns
    -------
    ndarray, shape (..., nv)

    Examples
    --------
    The rod of :func:`momenta` held horizontal under unit gravity along ``-y``: ``Q = -m g l``;
    a joint spring of stiffness 2 wound by 0.5 rad adds ``-1``.

    >>> import numpy as np, mbcourse as mb
    >>> m = mb.Model(gravity=(0, -1, 0))
    >>> _ = m.add_body("rod", 1.0, np.eye(3))
    >>> _ = m.add_joint("j", "revolute", "ground", "rod", child_point=(-1, 0, 0),
    ...                 axis=(0, 0, 1))
    >>> generalized_forces(m, [0.0]).round(12).tolist()
    [-1.0]
    >>> _ = m.add_joint_spring("j", stiffness=2.0, rest=-0.5)
    >>> generalized_forces(m, [0.0]).round(12).tolist()
    [-2.0]
    """
    state = model.check_state(q, qd, t=t)
    k = prepare(model)
    base = _base(model, state.t)
    with np.errstate(over="ignore", invalid="ignore"):
        kin = _kinematics(k, state.q, base)
        v = _body_twists(kin, state.qd) if k.dampers and state.qd is not None else None
        Fs = _accumulate(kin, _forces(model, k, kin, state.q, state.qd, state.t, base, v))
        Q = _project(kin, Fs, model.nv)
        if k.generalized:
            Q = Q + model_forces.generalized_forces(model, state.q, state.qd, state.t)
    return state.result(Q, "mb.poisson.generalized_forces")


def _pdot_terms(model, k, kin, q, qd, v, mu, t, base):
    """Right side of Ivanov (7) without ``tau``: ``(Adot^T - A^T Omega) mu + Q``."""
    Fs = _accumulate(kin, _forces(model, k, kin, q, qd, t, base, v))
    out = np.zeros(qd.shape)
    for j, A, ThT in zip(kin.joints, kin.A, kin.ThT):
        if not j.nv:
            continue
        c = j.child
        va = qd[:, j.v_slice]
        pd, kd = j.rates(q[:, j.q_slice], va)
        Ahat = np.concatenate([ThT @ kd, ThT @ pd], axis=1)  # Theta^T [dk/dt; dp/dt]
        w_rel = mv(A[:, 3:], va)  # relative angular velocity, child axes
        # Adot = Ahat - blockdiag(w_rel~) A, so Adot^T mu = Ahat^T mu + A^T (w_rel x mu)
        m_f, m_m = mu[:, c, :3], mu[:, c, 3:]
        V, om = v[:, c, :3], v[:, c, 3:]
        dw = w_rel - om
        r = np.concatenate([cross(dw, m_f), cross(dw, m_m) - cross(V, m_f)], axis=-1)
        out[:, j.v_slice] = mv(transpose(Ahat), mu[:, c]) + mv(transpose(A), r + Fs[:, c])
    if k.generalized:
        out += model_forces.generalized_forces(model, q, qd, t)
    return out


def pdot(model, q, p, tau=None, *, t=0.0, solver="sweep"):
    """Right-hand side of the equations in Poisson impulses: ``(qd, dp/dt)``, Ivanov (6), (7).

    ``qd`` solves (6) by ``solver``; ``dp/dt = (Adot^T - A^T Omega) mu + Q + tau`` (7), with
    ``mu`` the subtree momenta from the same pass and ``Q`` the generalized applied forces
    (gravity, loads, springs and dampers, joint springs, control laws: see
    :func:`generalized_forces`). With ``dq/dt = model.qdot(q, qd)`` this is a complete
    first-order system for ``(q, p)``.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    p : array_like, shape (..., nv)
    tau : array_like, shape (..., nv), optional
        Generalized forces in the order of the speeds.
    t : float
    solver : {"sweep", "cholesky"}

    Returns
    -------
    qd, dp : ndarray, shape (..., nv) each

    Examples
    --------
    The triple pendulum of Yudintsev 3.5 at rest with the rods horizontal: ``p`` starts
    changing at the weight moments about each joint (the gravity gradient (5, 3, 1) in
    absolute angles, i.e. (9, 4, 1) about the joints).

    >>> import mbcourse as mb
    >>> qd, dp = pdot(mb.models.triple_pendulum(), [0, 0, 0], [0, 0, 0])
    >>> (dp.round(12) + 0.0).tolist()
    [-9.0, -4.0, -1.0]
    """
    _check_solver(solver)
    state = _momentum_state(model, q, p, tau, t=t)
    with np.errstate(over="ignore", invalid="ignore"):
        k, base, kin, qd, v, mu = _solve(model, state, solver)
        dp = _pdot_terms(model, k, kin, state.q, qd, v, mu, state.t, base) + state.tau
    what = "mb.poisson.pdot"
    return state.result(qd, what), state.result(dp, what)


# ---------------------------------------------------------------------- simulation
@dataclass
class Trajectory(_sim.Trajectory):
    """Result of :func:`simulate`: ``t``, ``q``, ``qd`` (recovered from ``p`` by the
    solver), ``p`` (nt, nv); ``energy``, ``dissipated`` etc. as
    :class:`mbcourse.sim.Trajectory`."""

    p: np.ndarray = None


def simulate(model, t_span, q0, qd0=None, tau=None, *, method="DOP853", rtol=1e-10,
             atol=1e-10, t_eval=None, solver="sweep", max_step=np.inf, dense_output=False,
             **options):
    """Integrate ``dq/dt = qdot(q, qd(q, p))``, ``dp/dt`` of Ivanov (7), state ``(q, p)``.

    The one ``simulate`` signature of :mod:`mbcourse.sim`.

    Parameters
    ----------
    model : Model
    t_span : (float, float)
    q0, qd0 : array_like, shapes (nq,), (nv,)
        Initial configuration and speeds (``qd0=None`` is rest); ``p0 = momenta(model, q0,
        qd0)``.
    tau : None, array_like (nv,) or callable ``tau(t, q, qd)``
        Generalized forces besides the model's own force elements.
    method, rtol, atol, t_eval, max_step, dense_output
        The ODE integrator and its options (:func:`scipy.integrate.solve_ivp`). With
        dampers in the model the state also carries the dissipated energy (see
        :func:`mbcourse.sim.simulate`).
    solver : {"sweep", "cholesky"}
        Solver for ``qd`` from ``p`` at every evaluation.

    Returns
    -------
    Trajectory
        With ``t``, ``q``, ``qd``, ``p``, ``energy`` and ``dissipated``.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> res = simulate(mb.models.double_pendulum(), (0.0, 1.0), [0.5, 0.0])
    >>> bool(np.ptp(res.energy) < 1e-8)
    True
    """
    _sim.refuse_options("mb.poisson.simulate", options,
                        ["solver", "max_step", "dense_output"])
    _check_solver(solver)
    if method in SOLVERS:
        raise ShapeError(f"method= is the ODE integrator (e.g. 'DOP853', 'Radau'); the solver "
                         f"of (6) is chosen with solver={method!r}")
    t0, t1, q0, qd0, tau_fn = _sim.initial_state(model, t_span, q0, qd0, tau)
    method, t_eval = _sim.check_method(method), _sim.check_t_eval(t_eval, t0, t1)
    prepare(model)  # loops and inward joints are refused before anything is integrated
    damped = _sim.prepare(model).damped
    p0, _ = momenta(model, q0, qd0, t=t0)
    nq, nv = model.nq, model.nv

    def rhs(t, y):
        q = model.normalize_q(y[:nq])
        qd, dp = pdot(model, q, y[nq:nq + nv], t=t, solver=solver)
        if tau_fn is not None:
            dp = dp + tau_fn(t, q, qd)
        parts = [model_poses.qdot(model, q, qd), dp]
        if damped:
            parts.append(-np.atleast_1d(model_forces.damping_power(model, q, qd, t)))
        return np.concatenate(parts)

    def speeds(y):  # for the blow-up test (at t0: the base's motion barely matters there)
        return velocities(model, model.normalize_q(y[:nq]), y[nq:nq + nv], t=t0)

    y0 = np.concatenate([q0, p0] + ([np.zeros(1)] if damped else []))
    sol = _sim.integrate("mb.poisson.simulate", rhs, t0, t1, y0, speeds, method=method,
                         rtol=rtol, atol=atol, t_eval=t_eval, max_step=max_step,
                         dense_output=dense_output)
    return _trajectory(model, sol, damped, solver)


def _trajectory(model, sol, damped, solver):
    nq, nv = model.nq, model.nv
    q = model.normalize_q(sol.y[:nq].T)
    p = sol.y[nq:nq + nv].T
    if model.base_motion is None:
        qd = velocities(model, q, p, solver=solver)
    else:
        qd = np.array([velocities(model, qi, pi, t=float(ti), solver=solver)
                       for ti, qi, pi in zip(sol.t, q, p)]).reshape(len(sol.t), nv)
    dissipated = sol.y[-1] if damped else np.zeros(len(sol.t))
    return Trajectory(model, sol.t, q, qd, sol, dissipated, p=p)


# ------------------------------------------------------------ the dense system (6)
@dataclass
class DenseSystem:
    """The block system (6) of one configuration, assembled densely (for teaching/tests).

    Unknowns ``(v, qd, mu)`` with ``v``, ``mu`` stacked over bodies 1..n (6 each)::

        K = [[M,  0,  -S^T],      K [v; qd; mu] = [0; p; -v*]
             [0,  0,   A^T],
             [-S, A,   0  ]]

    ``K`` is symmetric (Ivanov (6)); ``T = S^-1`` has ``T_ii = E``, ``T_ij`` = product of
    ``C``'s on the path from ``j`` to ``i`` and zero off the path (Ivanov (5)).
    """

    K: np.ndarray
    S: np.ndarray
    T: np.ndarray
    A: np.ndarray
    M: np.ndarray
    vstar: np.ndarray

    def solve(self, p):
        """Dense solve of (6): returns ``qd, v, mu`` (v, mu of shape (n, 6))."""
        N6, nv = self.S.shape[0], self.A.shape[1]
        rhs = np.concatenate([np.zeros(N6), np.asarray(p, dtype=float), -self.vstar])
        x = np.linalg.solve(self.K, rhs)
        return x[N6:N6 + nv], x[:N6].reshape(-1, 6), x[N6 + nv:].reshape(-1, 6)


def dense_system(model, q, *, t=0.0):
    """Assemble Ivanov's (2)-(6) densely for one configuration ``q`` (nq,); O(n^3) to solve.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> ds = dense_system(mb.models.triple_pendulum(), [0.1, 0.2, 0.3])
    >>> ds.K.shape, bool(np.allclose(ds.K, ds.K.T)), bool(np.allclose(ds.T @ ds.S, np.eye(18)))
    ((39, 39), True, True)
    """
    state = model.check_state(q, t=t)
    if state.batch != ():
        raise ShapeError(f"dense_system assembles one configuration: q of shape ({model.nq},), "
                         f"got batch shape {state.batch}")
    kin = _kinematics(prepare(model), state.q, _base(model, state.t))
    n, nv = model.n, model.nv
    S = np.eye(6 * n)
    A = np.zeros((6 * n, nv))
    for j, C, Aj in zip(kin.joints, kin.C, kin.A):
        i, k = j.child - 1, j.parent - 1
        if k >= 0:
            S[6 * i:6 * i + 6, 6 * k:6 * k + 6] = -C[0]
        A[6 * i:6 * i + 6, j.v_slice] = Aj[0]
    # (5): T_ii = E, T_ij = C_i T_{k_i j} for j on the path p_i, zero otherwise
    T = np.zeros((6 * n, 6 * n))
    for j, C in zip(kin.joints, kin.C):
        i, k = j.child - 1, j.parent - 1
        T[6 * i:6 * i + 6, 6 * i:6 * i + 6] = np.eye(6)
        if k >= 0:
            T[6 * i:6 * i + 6] += C[0] @ T[6 * k:6 * k + 6]
    M = np.zeros((6 * n, 6 * n))
    for i in range(n):
        M[6 * i:6 * i + 6, 6 * i:6 * i + 6] = kin.M[i + 1]
    K = np.zeros((12 * n + nv, 12 * n + nv))
    a, b = 6 * n, 6 * n + nv
    K[:a, :a] = M
    K[:a, b:] = -S.T
    K[a:b, b:] = A.T
    K[b:, :a] = -S
    K[b:, a:b] = A
    return DenseSystem(K, S, T, A, M, kin.vstar[0, 1:].reshape(-1))


# ------------------------------------------- the two solvers compiled alike (numba)
@dataclass
class CompiledSystem:
    """The kinematics of (6) for one configuration, packed for the compiled solvers
    :func:`mbcourse.kernels.poisson.ivanov_sweep_solve` and
    :func:`mbcourse.kernels.poisson.ivanov_cholesky_solve` (see :func:`compiled_system`)."""

    ints: np.ndarray
    C: np.ndarray
    A: np.ndarray
    M: np.ndarray
    vstar: np.ndarray
    nv: int

    def solve(self, p, solver="cholesky", repeats=1):
        """``qd, mu, count`` from ``p`` (nv,) by Ivanov's ``solver`` ("sweep": alg. of §3;
        "cholesky": alg. of §4), both compiled as plain loops. ``count`` = [multiplications,
        additions] of one solve (divisions and square roots counted as multiplications,
        subtractions as additions); ``repeats`` runs the same solve that many times (for
        timing) and ``count`` still describes one."""
        _check_solver(solver)
        from .kernels.poisson import ivanov_cholesky_solve, ivanov_sweep_solve

        kernel = ivanov_sweep_solve if solver == "sweep" else ivanov_cholesky_solve
        p = np.ascontiguousarray(p, dtype=float).reshape(self.nv)
        qd = np.zeros(self.nv)
        mu = np.zeros(self.M.shape[:1] + (6,))
        count = np.zeros(2, dtype=np.int64)
        if not kernel(self.ints, self.C, self.A, self.M, self.vstar, p, qd, mu, count,
                      int(repeats)):
            raise SingularSystemError("A^T M* A is not positive definite at some joint (no "
                                      "mass moves along it)")
        return qd, mu, count // max(int(repeats), 1)


def compiled_system(model, q, *, t=0.0):
    """Ivanov's ``C_i``, ``A_i``, ``M_i``, ``v*_i`` of one configuration ``q`` (nq,), packed
    for the compiled sweep and block-Cholesky solvers (every joint kind).

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> model = mb.models.triple_pendulum()
    >>> q, qd = np.array([0.3, -0.2, 0.5]), np.array([1.0, 0.5, -0.4])
    >>> system = compiled_system(model, q)
    >>> p = mb.tree.mass_matrix(model, q) @ qd
    >>> [system.solve(p, s)[0].round(12).tolist() for s in ("sweep", "cholesky")]
    [[1.0, 0.5, -0.4], [1.0, 0.5, -0.4]]
    """
    state = model.check_state(q, t=t)
    if state.batch != ():
        raise ShapeError(f"compiled_system packs one configuration: q of shape ({model.nq},), "
                         f"got batch shape {state.batch}")
    kin = _kinematics(prepare(model), state.q, _base(model, state.t))
    m = len(kin.joints)
    ints = np.zeros((m, 4), dtype=np.int64)
    C = np.zeros((m, 6, 6))
    A = np.zeros((m, 6, 6))
    for i, (j, Cj, Aj) in enumerate(zip(kin.joints, kin.C, kin.A)):
        ints[i] = (j.parent, j.child, j.v_slice.start, j.nv)
        C[i] = Cj[0]
        A[i, :, :j.nv] = Aj[0]
    return CompiledSystem(ints, C, A, np.ascontiguousarray(kin.M, dtype=float),
                          np.ascontiguousarray(kin.vstar[0]), model.nv)
