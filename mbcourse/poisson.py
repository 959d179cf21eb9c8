"""Equations in generalized momenta ("Poisson impulses") and their O(n) solvers
(Ivanov 2017; digest section 4, erratum E28).

The state integrated is ``(q, p)`` with the generalized momenta ``p = dT/dqdot = M(q) qdot``
instead of ``(q, qdot)``. Every step needs ``qdot`` from ``p`` (a linear solve with the mass
matrix, done here in O(n) by a recursion over the bodies) and ``dp/dt``.

**Notation.** Ivanov's ``qdot`` is the model's vector of generalized speeds ``v`` (length
``nv``). For revolute, prismatic, screw, cylindrical and universal joints ``v = dq/dt``; for
the quaternion joints (spherical, free) ``v`` holds angular velocities (see
:mod:`mbcourse.model`) and ``dq/dt = model.qdot(q, v)``. Then ``p = dT/dv``. Below, "qd"
always means ``v``.

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
  central one (erratum E28; with ``J_C`` here, ``T != v^T M v / 2``);
* ``Omega_i = [[omega~, 0], [V~, omega~]]`` (ordering ``(V, omega)``, E28).

**Equations** (Ivanov (6), (7))::

    M v - S^T mu = 0,   -S v + A qd = -v*,   A^T mu = p                (6)
    dp/dt = (Adot^T - A^T Omega) mu + Q + tau                          (7)

``mu_i = M_i v_i + sum_{children c} C_c^T mu_c`` is the spatial momentum of the subtree
rooted at ``i``, about ``O_i`` in body axes; ``Q = A^T T^T F`` the generalized applied
forces (gravity and loads, ``F_i`` about ``O_i`` in body axes); ``tau`` the joint forces.
(7) is the momentum balance of each subtree about the moving point ``O_i``,
``dmu/dt = F* - Omega mu`` in body axes, projected on the joint's axes (an ideal joint's
reaction has ``A_i^T R_i = 0``).

**Solvers** of (6) for ``qd`` given ``p``, both O(n), looping over the bodies and
vectorized over a batch of configurations:

* ``"sweep"`` (Ivanov, alg. of §3): Gaussian elimination from the leaves with the
  "articulated" ``M*_i``, ``phi*_i``, inverting the small ``A_i^T M*_i A_i`` (order
  ``n_i <= 6``);
* ``"cholesky"`` (Ivanov, alg. of §4): the block ``L^T D L`` factorization of the symmetric
  system; ``A_i^T M*_i A_i = L_i L_i^T`` and triangular solves replace the inverses.

They are algebraically identical. Loops in the graph and joints that point toward the base
are refused (:class:`~mbcourse.errors.TopologyError`), as in :mod:`mbcourse.vereshchagin`.

Examples
--------
>>> import numpy as np, mbcourse as mb
>>> model = mb.models.triple_pendulum()
>>> q, qd = np.array([0.3, -0.2, 0.5]), np.array([1.0, 0.5, -0.4])
>>> p, mu = momenta(model, q, qd)
>>> bool(np.allclose(p, mb.tree.mass_matrix(model, q) @ qd))
True
>>> bool(np.allclose(velocities(model, q, p, method="cholesky"), qd))
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from . import sim as _sim
from .errors import ShapeError, SingularSystemError
from .spatial import skew

__all__ = ["METHODS", "momenta", "velocities", "pdot", "generalized_forces", "simulate",
           "Trajectory", "dense_system", "DenseSystem"]

METHODS = ("sweep", "cholesky")


# ----------------------------------------------------------------------- structure
def _order(model):
    """Joints in base-to-leaves order; refuses loops and joints pointing toward the base."""
    return model.outward_joints("Ivanov's recursion")


def _check_method(method):
    if method not in METHODS:
        raise ShapeError(f"method must be one of {list(METHODS)}, got {method!r}")


def _mv(M, x):
    return (M @ x[..., None])[..., 0]


def _T(M):
    return np.swapaxes(M, -1, -2)


def _batch(model, q, second, name):
    """Validate ``q`` (nq) and a speed-like array (nv); broadcast to a common batch."""
    q = np.atleast_2d(model.check_q(q))
    x = np.atleast_2d(model.check_v(second, name=name))
    if q.ndim != 2 or x.ndim != 2:
        raise ShapeError(f"q and {name} must be 1-D or 2-D (batch, size) arrays")
    B = max(q.shape[0], x.shape[0])
    if q.shape[0] not in (1, B) or x.shape[0] not in (1, B):
        raise ShapeError(f"batch sizes of q {q.shape} and {name} {x.shape} do not match")
    return np.broadcast_to(q, (B, model.nq)), np.broadcast_to(x, (B, model.nv)), B


def _single(*arrays):
    return all(a is None or np.ndim(a) <= 1 for a in arrays)


@dataclass
class _Kinematics:
    """Per-call kinematic quantities of (1), body frames (see the module docstring)."""

    joints: list
    C: list  # per step (B, 6, 6)
    A: list  # per step (B, 6, n_i)
    R: np.ndarray  # (B, n + 1, 3, 3) absolute orientations (body axes -> inertial)
    M: np.ndarray  # (n + 1, 6, 6) body inertias about O_i, body axes (row 0: zero)
    rc: np.ndarray  # (n + 1, 3) centre of mass from O_i, body axes
    vstar: np.ndarray  # (B, n + 1, 6)
    ThT: dict  # joint index -> Theta_i^T (B, 3, 3)


def _body_inertias(model, joints):
    n = model.n
    M = np.zeros((n + 1, 6, 6))
    rc = np.zeros((n + 1, 3))
    for j in joints:
        b = model.bodies[j.child]
        r = -j.child_point
        rt = skew(r)
        M[j.child, :3, :3] = b.mass * np.eye(3)
        M[j.child, :3, 3:] = -b.mass * rt
        M[j.child, 3:, :3] = b.mass * rt
        M[j.child, 3:, 3:] = b.inertia - b.mass * rt @ rt  # about O_i (erratum E28)
        rc[j.child] = r
    return M, rc


def _kinematics(model, q, t=0.0):
    """``C_i``, ``A_i``, ``v*_i``, ``M_i`` of Ivanov's §1-2 for a batch ``q`` (B, nq)."""
    joints = _order(model)
    B = q.shape[0]
    n = model.n
    M, rc = _body_inertias(model, joints)
    # O_k relative to the centre of mass of k, body axes: the inboard child_point
    origin = np.zeros((n + 1, 3))
    for j in joints:
        origin[j.child] = j.child_point
    R = np.empty((B, n + 1, 3, 3))
    v0 = np.zeros((B, 6))
    if model.base_motion is not None:
        base = model.base_motion.state(t)
        R0 = np.asarray(base["orientation"], dtype=float)
        v0[:, :3] = R0.T @ np.asarray(base["velocity"], dtype=float)
        v0[:, 3:] = R0.T @ np.asarray(base["angular_velocity"], dtype=float)
    else:
        R0 = np.eye(3)
    R[:, 0] = R0
    vstar = np.zeros((B, n + 1, 6))
    Cs, As, ThTs = [], [], {}
    for j in joints:
        k, i = j.parent, j.child
        qa = q[:, j.q_slice]
        Th = np.broadcast_to(j.rotation(qa), (B, 3, 3))
        ThT = _T(Th)
        rho = j.parent_point - origin[k] + j.z(qa)  # O_i from O_k, parent axes
        C = np.zeros((B, 6, 6))
        C[:, :3, :3] = C[:, 3:, 3:] = ThT
        C[:, :3, 3:] = -ThT @ skew(rho)
        A = np.concatenate([ThT @ j.k(qa), ThT @ j.p(qa)], axis=1)  # columns a_ij
        R[:, i] = R[:, k] @ Th
        if k == 0:
            vstar[:, i] = _mv(C, v0)  # base motion goes into v*_i
        Cs.append(C)
        As.append(A)
        ThTs[j.index] = ThT
    return _Kinematics(joints, Cs, As, R, M, rc, vstar, ThTs)


def _axis_rates(joint, qa, va):
    """Time derivatives of the joint's ``k`` and ``p`` (parent axes) along ``v``, (B, 3, nv)."""
    B = qa.shape[0]
    zero = np.zeros((B, 3, joint.nv))
    kind = joint.kind
    if kind in ("revolute", "prismatic", "screw", "cylindrical", "fixed"):
        return zero, zero
    if kind == "universal":
        pdot = zero.copy()
        p2 = joint.p(qa)[:, :, 1]
        pdot[:, :, 1] = va[:, :1] * np.cross(joint.axes[0], p2)
        return zero, pdot
    if kind == "spherical":  # p = R_a, dR_a/dt = R_a v~
        return zero, joint.rotation(qa) @ skew(va)
    if kind == "free":
        pdot = zero.copy()
        pdot[:, :, 3:] = joint.rotation(qa) @ skew(va[:, 3:])
        return zero, pdot
    # another joint class: central difference along dq/dt (accuracy ~1e-10)
    h = 1e-6
    qd = joint.qdot(qa, va)
    kp, km = joint.k(qa + h * qd), joint.k(qa - h * qd)
    pp, pm = joint.p(qa + h * qd), joint.p(qa - h * qd)
    return (kp - km) / (2 * h), (pp - pm) / (2 * h)


# ----------------------------------------------------------------- direct recursion
def _body_twists(kin, qd):
    """``v_i = C_i v_{k_i} + A_i qd_i + v*_i`` (1), base-to-leaves; row 0 (base) is zero."""
    v = np.zeros(kin.vstar.shape)
    for j, C, A in zip(kin.joints, kin.C, kin.A):
        v[:, j.child] = _mv(C, v[:, j.parent]) + _mv(A, qd[:, j.v_slice]) + kin.vstar[:, j.child]
    return v


def _subtree_momenta(kin, v):
    """``mu_i = M_i v_i + sum_c C_c^T mu_c``, leaves-to-base; ``mu_0`` = total momentum."""
    mu = _mv(kin.M, v)
    for j, C in zip(reversed(kin.joints), reversed(kin.C)):
        mu[:, j.parent] += _mv(_T(C), mu[:, j.child])
    return mu


def _project(kin, mu, nv):
    p = np.zeros((mu.shape[0], nv))
    for j, A in zip(kin.joints, kin.A):
        p[:, j.v_slice] = _mv(_T(A), mu[:, j.child])
    return p


def momenta(model, q, qd, t=0.0):
    """Generalized momenta ``p = A^T mu = dT/dqd`` and subtree momenta ``mu`` (Ivanov (6)).

    Parameters
    ----------
    q : (nq,) or (B, nq)
    qd : (nv,) or (B, nv)
        Generalized speeds ``v`` (Ivanov's ``qdot``; angular velocities for quaternion
        joints).
    t : float
        Time (matters only with a prescribed base motion, which enters through ``v*``:
        then ``p = M(q) qd + A^T T^T M T v*``).

    Returns
    -------
    p : ndarray, shape (nv,) or (B, nv)
        ``p = M(q) qd`` without base motion.
    mu : ndarray, shape (n + 1, 6) or (B, n + 1, 6)
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
    qb, vb, _ = _batch(model, q, qd, "qd")
    kin = _kinematics(model, qb, t)
    mu = _subtree_momenta(kin, _body_twists(kin, vb))
    p = _project(kin, mu, model.nv)
    return (p[0], mu[0]) if _single(q, qd) else (p, mu)


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
        w = _mv(Ms, kin.vstar[:, c]) + phi[:, c]  # M*_j v*_j + phi*_j
        if j.nv:
            MA = Ms @ A
            Vj = _T(A) @ MA  # D_j = Vj^-1 (applied by LU solves)
            G = _T(_lu_solve(Vj, _T(MA), j))  # M* A D (D symmetric)
            # H_j = E - M* A D A^T, applied without forming it (fewer operations, and
            # H M* = M* - G (M* A)^T stays symmetric):
            #   M* A D p + H (M* v* + phi*) = w + G (p - A^T w)
            contrib = w + _mv(G, p[:, j.v_slice] - _mv(_T(A), w))
            HM = Ms - G @ _T(MA)
            # H M* is symmetric in exact arithmetic; its round-off asymmetry otherwise grows
            # along a chain (a 50-body Cardan chain lost 5 digits: 6e-5 instead of 1e-10)
            HM = 0.5 * (HM + _T(HM))
            D[j.index] = Vj
        else:
            contrib, HM = w, Ms
        CT = _T(C)
        Mstar[:, k] += CT @ HM @ C
        phi[:, k] += _mv(CT, contrib)
    v = np.zeros(kin.vstar.shape)
    mu = np.zeros(kin.vstar.shape)
    mu[:, 0] = phi[:, 0]  # v_0 = 0: the base motion is in v*
    qd = np.zeros((B, nv))
    for j, C, A in steps:  # forward: base to leaves
        c = j.child
        pred = _mv(C, v[:, j.parent]) + kin.vstar[:, c]
        Ms = Mstar[:, c]
        if j.nv:
            rhs = p[:, j.v_slice] - _mv(_T(A), phi[:, c] + _mv(Ms, pred))
            x = _lu_solve(D[j.index], rhs[..., None], j)[..., 0]  # D (p - A^T(...))
            qd[:, j.v_slice] = x
            pred = pred + _mv(A, x)
        v[:, c] = pred
        mu[:, c] = _mv(Ms, pred) + phi[:, c]
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
        w = _mv(Ms, kin.vstar[:, c]) + phi[:, c]
        CT = _T(C)
        MC = Ms @ C
        Mstar[:, k] += CT @ MC
        phi[:, k] += _mv(CT, w)
        if j.nv:
            AT = _T(A)
            L = _cholesky(AT @ Ms @ A, j)  # L L^T = A^T M* A
            x = _lower_solve(L, (p[:, j.v_slice] - _mv(AT, w))[..., None])[..., 0]
            V = _lower_solve(L, AT @ MC)  # L V = A^T M* C
            Mstar[:, k] -= _T(V) @ V
            phi[:, k] += _mv(_T(V), x)
            saved[j.index] = (L, x, V)
    v = np.zeros(kin.vstar.shape)
    mu = np.zeros(kin.vstar.shape)
    mu[:, 0] = phi[:, 0]
    qd = np.zeros((B, nv))
    for j, C, A in steps:
        c, k = j.child, j.parent
        pred = _mv(C, v[:, k]) + kin.vstar[:, c]
        if j.nv:
            L, x, V = saved[j.index]
            y = _upper_solve_T(L, (x - _mv(V, v[:, k]))[..., None])[..., 0]  # L^T qd = x - V v_k
            qd[:, j.v_slice] = y
            pred = pred + _mv(A, y)
        v[:, c] = pred
        mu[:, c] = _mv(Mstar[:, c], pred) + phi[:, c]
    return qd, v, mu


def _solve(model, q, p, method, t):
    _check_method(method)
    qb, pb, _ = _batch(model, q, p, "p")
    kin = _kinematics(model, qb, t)
    solver = _sweep if method == "sweep" else _cholesky_solve
    qd, v, mu = solver(kin, pb, model.nv)
    return kin, qb, qd, v, mu


def velocities(model, q, p, method="sweep", t=0.0, return_momenta=False):
    """Generalized speeds from generalized momenta: solve (6) for ``qd`` (the **contract**).

    Given ``p``, returns ``qd`` with ``p = M(q) qd`` (plus the base-motion term, see
    :func:`momenta`), in O(n) operations.

    Parameters
    ----------
    q : (nq,) or (B, nq)
    p : (nv,) or (B, nv)
    method : {"sweep", "cholesky"}
        ``"sweep"``: Ivanov, alg. of §3 (elimination with inverses of ``A_i^T M*_i A_i``);
        ``"cholesky"``: Ivanov, alg. of §4 (block ``L^T D L``, triangular solves).
    t : float
    return_momenta : bool
        Also return the subtree momenta ``mu`` (n + 1, 6) the solver produces.

    Returns
    -------
    qd : ndarray, shape (nv,) or (B, nv)
        Generalized speeds ``v`` (Ivanov's ``qdot``).

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> model = mb.models.double_pendulum()
    >>> q, qd = np.array([0.4, -1.0]), np.array([0.3, 2.0])
    >>> p = mb.tree.mass_matrix(model, q) @ qd
    >>> velocities(model, q, p).round(12).tolist()
    [0.3, 2.0]
    >>> velocities(model, np.array([q, q]), np.array([p, 2 * p]), method="cholesky").round(12)
    array([[0.3, 2. ],
           [0.6, 4. ]])
    """
    _, _, qd, _, mu = _solve(model, q, p, method, t)
    if _single(q, p):
        qd, mu = qd[0], mu[0]
    return (qd, mu) if return_momenta else qd


def _forces(kin, model, q, t):
    """Applied wrenches ``F_i`` about ``O_i`` in body axes (gravity and loads), (B, n+1, 6)."""
    F, Mc = model.applied_wrenches(q, t=t, orientations=kin.R)
    RT = _T(kin.R)
    f = _mv(RT, F)
    out = np.empty(f.shape[:-1] + (6,))
    out[..., :3] = f
    out[..., 3:] = _mv(RT, Mc) + np.cross(kin.rc, f)  # moment about O_i: M_C + (C - O) x f
    out[:, 0] = 0.0
    return out


def _accumulate(kin, F):
    """``F*_i = F_i + sum_c C_c^T F*_c`` (the subtree's applied wrench about ``O_i``)."""
    Fs = np.array(F)
    for j, C in zip(reversed(kin.joints), reversed(kin.C)):
        Fs[:, j.parent] += _mv(_T(C), Fs[:, j.child])
    return Fs


def generalized_forces(model, q, t=0.0):
    """Generalized applied forces ``Q = A^T T^T F`` (gravity and loads), O(n).

    Examples
    --------
    The rod of :func:`momenta` held horizontal under unit gravity along ``-y``: ``Q = -m g l``.

    >>> import numpy as np, mbcourse as mb
    >>> m = mb.Model(gravity=(0, -1, 0))
    >>> _ = m.add_body("rod", 1.0, np.eye(3))
    >>> _ = m.add_joint("j", "revolute", "ground", "rod", child_point=(-1, 0, 0),
    ...                 axis=(0, 0, 1))
    >>> generalized_forces(m, [0.0]).round(12).tolist()
    [-1.0]
    """
    qb = np.atleast_2d(model.check_q(q))
    kin = _kinematics(model, qb, t)
    Fs = _accumulate(kin, _forces(kin, model, qb, t))
    Q = _project(kin, Fs, model.nv)
    return Q[0] if _single(q) else Q


def _pdot_terms(kin, model, q, qd, v, mu, t):
    """Right side of Ivanov (7) without ``tau``: ``(Adot^T - A^T Omega) mu + A^T F*``."""
    Fs = _accumulate(kin, _forces(kin, model, q, t))
    out = np.zeros(qd.shape)
    for j, A in zip(kin.joints, kin.A):
        if not j.nv:
            continue
        c = j.child
        qa, va = q[:, j.q_slice], qd[:, j.v_slice]
        kd, pd = _axis_rates(j, qa, va)
        ThT = kin.ThT[j.index]
        Ahat = np.concatenate([ThT @ kd, ThT @ pd], axis=1)  # Theta^T [dk/dt; dp/dt]
        w_rel = _mv(A[:, 3:], va)  # relative angular velocity, child axes
        # Adot = Ahat - blockdiag(w_rel~) A, so Adot^T mu = Ahat^T mu + A^T (w_rel x mu)
        m_f, m_m = mu[:, c, :3], mu[:, c, 3:]
        V, om = v[:, c, :3], v[:, c, 3:]
        dw = w_rel - om
        r = np.concatenate([np.cross(dw, m_f), np.cross(dw, m_m) - np.cross(V, m_f)], axis=-1)
        out[:, j.v_slice] = _mv(_T(Ahat), mu[:, c]) + _mv(_T(A), r + Fs[:, c])
    return out


def pdot(model, q, p, tau=None, t=0.0, method="sweep"):
    """Right-hand side of the equations in Poisson impulses: ``(qd, dp/dt)``, Ivanov (6), (7).

    ``qd`` solves (6) by ``method``; ``dp/dt = (Adot^T - A^T Omega) mu + Q + tau`` (7), with
    ``mu`` the subtree momenta from the same pass and ``Q`` the generalized applied forces
    (gravity and :meth:`Model.add_force` loads). With ``dq/dt = model.qdot(q, qd)`` this is
    a complete first-order system for ``(q, p)``.

    Parameters
    ----------
    q : (nq,) or (B, nq)
    p : (nv,) or (B, nv)
    tau : (nv,) or (B, nv), optional
        Joint forces in the order of the speeds.
    t : float
    method : {"sweep", "cholesky"}

    Returns
    -------
    qd, dp : ndarray, shape (nv,) or (B, nv) each

    Examples
    --------
    The triple pendulum at rest with the rods horizontal: ``p`` starts changing at the
    weight moments about each joint (digest fact 19: gravity gradient (5, 3, 1) in absolute
    angles, i.e. (9, 4, 1) about the joints).

    >>> import mbcourse as mb
    >>> qd, dp = pdot(mb.models.triple_pendulum(), [0, 0, 0], [0, 0, 0])
    >>> (dp.round(12) + 0.0).tolist()
    [-9.0, -4.0, -1.0]
    """
    kin, qb, qd, v, mu = _solve(model, q, p, method, t)
    tau_arr = np.atleast_2d(model.check_tau(tau))
    dp = _pdot_terms(kin, model, qb, qd, v, mu, t) + tau_arr
    if _single(q, p, tau):
        return qd[0], dp[0]
    return qd, dp


# ---------------------------------------------------------------------- simulation
@dataclass
class Trajectory(_sim.Trajectory):
    """Result of :func:`simulate`: ``t``, ``q``, ``v`` (= ``qd``), ``p``; ``energy`` etc. as
    :class:`mbcourse.sim.Trajectory`."""

    p: np.ndarray = None

    @property
    def qd(self):
        """Generalized speeds (nt, nv), recovered from ``p`` by the solver."""
        return self.v


def simulate(model, t_span, q0, qd0, tau=None, method="sweep", integrator="DOP853",
             rtol=1e-10, atol=1e-10, **options):
    """Integrate ``dq/dt = qdot(q, qd(q, p))``, ``dp/dt`` of Ivanov (7), state ``(q, p)``.

    Parameters
    ----------
    model : Model
    t_span : (float, float)
    q0, qd0 : array_like
        Initial configuration and speeds; ``p0 = momenta(model, q0, qd0)``.
    tau : None, array_like (nv,) or callable ``tau(t, q, qd)``
    method : {"sweep", "cholesky"}
        Solver for ``qd`` from ``p`` at every evaluation.
    integrator, rtol, atol, **options
        ``method``, ``rtol``, ``atol`` and any other option (``t_eval``, ``max_step`` ...)
        of :func:`scipy.integrate.solve_ivp`.

    Returns
    -------
    Trajectory
        With ``t``, ``q``, ``qd`` (= ``v``), ``p`` and ``energy``.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> res = simulate(mb.models.double_pendulum(), (0.0, 1.0), [0.5, 0.0], [0.0, 0.0])
    >>> bool(np.ptp(res.energy) < 1e-8)
    True
    """
    _check_method(method)
    t0, t1, q0, qd0, tau_fn = _sim.initial_state(model, t_span, q0, qd0, tau, v_name="qd0")
    p0, _ = momenta(model, q0, qd0, t0)
    nq = model.nq

    def rhs(t, y):
        q = model.normalize_q(y[:nq])
        qd, dp = pdot(model, q, y[nq:], None, t, method)
        if tau_fn is not None:
            dp = dp + model.check_tau(tau_fn(t, q, qd))
        return np.concatenate([model.qdot(q, qd), dp])

    sol = solve_ivp(rhs, (t0, t1), np.concatenate([q0, p0]), method=integrator, rtol=rtol,
                    atol=atol, **options)
    if sol.status < 0:
        raise ShapeError(f"the integration failed: {sol.message}")
    q = model.normalize_q(sol.y[:nq].T)
    p = sol.y[nq:].T
    qd = np.array([velocities(model, qi, pi, method, ti) for ti, qi, pi in zip(sol.t, q, p)])
    qd = qd.reshape(len(sol.t), model.nv)
    return Trajectory(model, sol.t, q, qd, sol, p)


# ------------------------------------------------------------ the dense system (6)
@dataclass
class DenseSystem:
    """The block system (6) of one configuration, assembled densely (for teaching/tests).

    Unknowns ``(v, qd, mu)`` with ``v``, ``mu`` stacked over bodies 1..n (6 each)::

        K = [[M,  0,  -S^T],      K [v; qd; mu] = [0; p; -v*]
             [0,  0,   A^T],
             [-S, A,   0  ]]

    ``K`` is symmetric (digest fact 28); ``T = S^-1`` has ``T_ii = E``, ``T_ij`` = product of
    ``C``'s on the path from ``j`` to ``i`` and zero off the path.
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


def dense_system(model, q, t=0.0):
    """Assemble Ivanov's (2)-(6) densely for one configuration ``q`` (nq,); O(n^3) to solve.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> ds = dense_system(mb.models.triple_pendulum(), [0.1, 0.2, 0.3])
    >>> ds.K.shape, bool(np.allclose(ds.K, ds.K.T)), bool(np.allclose(ds.T @ ds.S, np.eye(18)))
    ((39, 39), True, True)
    """
    q = model.check_q(q)
    if q.ndim != 1:
        raise ShapeError("dense_system assembles one configuration: q of shape (nq,)")
    kin = _kinematics(model, q[None], t)
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
