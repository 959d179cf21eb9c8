"""Planar trees with parallel revolute axes in absolute angles (Yudintsev 3.2.2, (3.36)–(3.43)).

When every joint of a tree is a revolute joint about the same axis ``n = e_3`` (the
book's "cylindrical" joints with parallel axes), dotting the spherical-joint equations
(3.34) with ``n`` removes the unknown constraint moments and leaves one scalar equation per
body in the **absolute** angles ``phi_i`` (angle of body ``i``'s x axis from the inertial
x axis):

.. math::

    \\sum_j \\big(A_{ij}\\ddot\\varphi_j + B_{ij}\\dot\\varphi_j^2\\big) = R_i + \\sum_a S_{ia} Y_a
    \\quad (3.42), \\qquad A\\ddot\\varphi + B\\dot\\varphi^2 = R + SY \\quad (3.43).

All the geometry enters through body-fixed constants of the augmented bodies (section 3.2),
written in 2-D as magnitudes and body angles:

* ``d_ij = (C T)_ij`` (3.13) with ``C = S c`` (3.5): ``d_ij = d_ij (cos a_ij, sin a_ij)``;
* the barycentre vectors ``b_i0 = (1/M) sum_j m_j d_ij = b_i0 (cos beta_i, sin beta_i)``
  (3.26) and ``b_ij = b_i0 - d_ij`` (3.20);
* ``K_i3 = J_i,zz + sum_k m_k d_ik^2`` (the (3,3) entry of (3.24));
* the relation ``s_i < s_j`` ("``s_i`` lies on the path from ``s_0`` to ``s_j``").

The corrected coefficients (erratum **E16**: ``B`` uses **sin** and is **antisymmetric**;
``a_ji``, ``beta_i`` for ``s_j < s_i``; ``sin(phi_i + beta_i)`` in ``R_i``) are::

    A_ii = K_i3
    A_ij = M d_ij b_j0 cos(phi_i - phi_j + a_ij - beta_j)      s_i < s_j
    A_ij = M d_ji b_i0 cos(phi_i - phi_j - a_ji + beta_i)      s_j < s_i
    B_ij = M d_ij b_j0 sin(phi_i - phi_j + a_ij - beta_j)      s_i < s_j
    B_ij = M d_ji b_i0 sin(phi_i - phi_j - a_ji + beta_i)      s_j < s_i
    R_i  = M_i - M b_i0 (r0''_1 sin(phi_i + beta_i) - r0''_2 cos(phi_i + beta_i))
           + sum_{s_i <= s_j} d_ij (F_j1 sin(phi_i + a_ij) - F_j2 cos(phi_i + a_ij))

(all other entries zero). The printed text has ``cos`` in ``B`` and calls ``B``
symmetric; with that ``B`` the energy is not conserved (see the tests).

Scope (anything else raises :class:`~mbcourse.errors.ModelError`):

* every joint is a pure rotation (``joint.revolute_axis``) about ``+z`` or ``-z`` (a
  ``-z`` axis turns the child by ``-q``), and its ``orientation`` is the identity or a
  rotation about ``z`` (offset angle ``theta0_a``);
* the model is a tree (closed loops raise :class:`~mbcourse.errors.TopologyError`);
* body 0 is fixed or **translates** (a prescribed base motion with zero angular velocity
  and acceleration and an orientation about ``z``); its acceleration ``r0''`` enters
  ``R`` as in the book.

The z components of ``parent_point``/``child_point``, of gravity, of applied forces and
the x, y components of applied moments are carried by the hinges and do no work: they
are ignored. ``R`` uses every force element of the model at the state and time ``t``:
gravity, loads (constants or functions ``f(t, q, qd)``), spring-dampers between body points
(their tension from the true 3-D distance, :meth:`~mbcourse.Model.applied_wrenches`), and
joint spring-dampers and control laws (:meth:`~mbcourse.Model.generalized_forces`) as joint
moments ``S Y``; or the in-plane forces you pass.

Joint torques: the relative angle of joint ``a`` is ``sigma_a q_a + theta0_a =
phi_{i-(a)} - phi_{i+(a)}`` (``sigma_a = +-1`` the axis sign), so a generalized torque
``tau_a`` acts ``+sigma_a tau_a`` on ``i-(a)`` and ``-sigma_a tau_a`` on ``i+(a)``: the
book's joint moment (``+Y_a`` on ``i+(a)``) is ``Y_a = -sigma_a tau_a``.

Examples
--------
The two-leaf solar array of Fig. 3.7 (no gravity) in absolute angles:

>>> import numpy as np
>>> import mbcourse as mb
>>> model = mb.models.solar_array_leaves()
>>> A, B, R = planar_equations(model, [0.3, 1.2], [0.5, -0.2])
>>> bool(np.allclose(A, A.T)), bool(np.allclose(B, -B.T)), R.tolist()
(True, True, [0.0, 0.0])
>>> q = np.array([0.3, 0.9]); qd = np.array([0.5, -0.7])
>>> bool(np.allclose(forward_dynamics(model, q, qd), mb.tree.forward_dynamics(model, q, qd)))
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ModelError, ShapeError, SingularSystemError
from .. import forces as model_forces
from ..spatial import axis_angle, mv, transpose
from ..coupling import coupled

__all__ = ["PlanarParameters", "prepare", "planar_parameters", "planar_equations",
           "absolute_angles", "relative_coordinates", "relative_accelerations", "mass_matrix",
           "forward_dynamics", "is_planar"]

_TOL = 1e-9
_ALLOWED = ("a tree of revolute joints (pure rotations, joint.revolute_axis) whose axis is +z "
            "or -z and whose orientation is the identity or a rotation about z; body 0 fixed "
            "or translating (no base rotation)")


# -------------------------------------------------------------------- checks
def _planarity_problems(model):
    """List of reasons why ``model`` is not a planar revolute tree (empty: it is)."""
    problems = []
    for j in model.joints:
        axis = j.revolute_axis
        if axis is None:
            problems.append(f"joint {j.name!r} is not a revolute joint (a pure rotation about "
                            f"a fixed axis): {j!r}")
            continue
        if np.linalg.norm(axis[:2]) > _TOL:
            problems.append(f"joint {j.name!r} turns about {np.round(axis, 6).tolist()}, "
                            "not about z")
        R0 = j.orientation
        if abs(R0[2, 2] - 1.0) > _TOL or np.abs(R0[:2, 2]).max() > _TOL \
                or np.abs(R0[2, :2]).max() > _TOL:
            problems.append(f"joint {j.name!r} has an orientation that is not a rotation about z")
    return problems


def is_planar(model):
    """True if :mod:`planar` accepts ``model`` (ignoring closed loops and base motion).

    Examples
    --------
    >>> import mbcourse as mb
    >>> is_planar(mb.models.double_pendulum())
    True
    """
    return not _planarity_problems(model)


def _require_planar_tree(model):
    problems = _planarity_problems(model)
    if problems:
        raise ModelError(
            "the planar formulation (3.36)-(3.43) needs " + _ALLOWED + "; but "
            + "; ".join(problems) + ". Use mb.tree.forward_dynamics for spatial models"
        )
    return model.require_tree("the planar tree equations (3.43)")


def _base_state(model, t):
    """Base angle ``phi0`` and in-plane base acceleration ``r0''`` at time ``t``."""
    if model.base_motion is None:
        return 0.0, np.zeros(2)
    st = model.base_motion.state(t)
    A0 = st["orientation"]
    if abs(A0[2, 2] - 1.0) > _TOL or np.abs(st["angular_velocity"]).max() > _TOL \
            or np.abs(st["angular_acceleration"]).max() > _TOL:
        raise ModelError(
            "the planar formulation (3.42) allows a base that translates (acceleration r0'') "
            "but not one that rotates: give the base an orientation about z and zero angular "
            "velocity and acceleration, or use mb.tree.forward_dynamics"
        )
    return float(np.arctan2(A0[1, 0], A0[0, 0])), np.array(st["acceleration"][:2], dtype=float)


# ---------------------------------------------------------------- parameters
@dataclass(frozen=True)
class PlanarParameters:
    """Body-fixed constants of a planar tree (Yudintsev 3.2, 3.2.2), all 2-D.

    Body indices ``i, j`` run over ``1..n`` stored at ``0..n-1``; joints at ``a - 1``.
    The arrays are read-only (prepared once per model version).

    Attributes
    ----------
    S : ndarray of int, shape (n, m)
        Incidence matrix of bodies 1..n (1.3); ``S0`` (m,) is the row of body 0 (1.2).
    T : ndarray of int, shape (m, n)
        Path matrix, ``T S = S T = E``.
    c : ndarray, shape (n, m, 2)
        Hinge vectors ``c_ia`` (body ``i`` axes; zero where ``S_ia = 0``).
    C : ndarray, shape (n, m, 2)
        ``C_ia = S_ia c_ia`` (3.5).
    d : ndarray, shape (n, n, 2)
        ``d_ij = (C T)_ij`` (3.13), body ``i`` axes.
    d_mag, a : ndarray, shape (n, n)
        Magnitude ``d_ij`` and body angle ``a_ij`` in ``[0, 2 pi)`` (0 where ``d_ij = 0``).
    b0 : ndarray, shape (n, 2)
        ``b_i0 = (1/M) sum_j m_j d_ij`` (3.26): barycentre ``B_i`` to the inboard hinge.
    b0_mag, beta : ndarray, shape (n,)
        Magnitude and body angle of ``b_i0`` (angle in ``[0, 2 pi)``).
    b : ndarray, shape (n, n, 2)
        ``b_ij = b_i0 - d_ij`` (3.20): ``B_i`` to where body ``j``'s mass sits on body ``i``.
    less : ndarray of bool, shape (n, n)
        ``less[i, j]``: ``s_i < s_j`` (``s_i`` on the path from ``s_0`` to ``s_j``, ``i != j``),
        read off ``|S| |T|``: it counts the arcs of ``s_i`` on that path (2 inside, 1 at the
        end ``s_j``, 0 off the path).
    K3 : ndarray, shape (n,)
        ``K_i3 = J_i,zz + sum_k m_k d_ik^2`` (3.24), (3.42).
    masses, Jzz : ndarray, shape (n,)
    M : float
        Total mass of bodies 1..n.
    sigma : ndarray, shape (m,)
        ``+1`` for a joint axis ``+z``, ``-1`` for ``-z``.
    theta0 : ndarray, shape (m,)
        Orientation offset of each joint (rotation of ``R0`` about z).
    """

    S: np.ndarray
    S0: np.ndarray
    T: np.ndarray
    c: np.ndarray
    C: np.ndarray
    d: np.ndarray
    d_mag: np.ndarray
    a: np.ndarray
    b0: np.ndarray
    b0_mag: np.ndarray
    beta: np.ndarray
    b: np.ndarray
    less: np.ndarray
    K3: np.ndarray
    masses: np.ndarray
    Jzz: np.ndarray
    M: float
    sigma: np.ndarray
    theta0: np.ndarray


def _angle(v):
    return np.mod(np.arctan2(v[..., 1], v[..., 0]), 2 * np.pi)


def _readonly(arr):
    out = np.array(arr)
    out.flags.writeable = False
    return out


def planar_parameters(model):
    """Body-fixed constants ``d_ij, a_ij, b_i0, beta_i, K_i3, M`` and ``s_i < s_j``.

    Computed the book's way from the graph matrices: ``C = S c`` (3.5), ``d = C T`` (3.13),
    ``b_i0 = (1/M) sum_j m_j d_ij`` (3.26), ``b_ij = b_i0 - d_ij`` (3.20) and
    ``K_i3 = J_i,zz + sum_k m_k d_ik^2`` (3.24), in 2-D (z components of the hinge
    points are ignored). They are the prepared data of this module: built once per model
    version (:meth:`mbcourse.Model.prepared`).

    Parameters
    ----------
    model : Model
        A planar revolute tree (see the module docstring).

    Returns
    -------
    PlanarParameters

    Raises
    ------
    ModelError
        If a joint is not a revolute joint about ``+-z`` with an orientation about ``z``.
    TopologyError
        If the model has closed loops.

    Examples
    --------
    Two rods of length 1 hinged end to end (Yudintsev's double pendulum):

    >>> import numpy as np, mbcourse as mb
    >>> p = planar_parameters(mb.models.double_pendulum(m1=1.0, m2=1.0, l1=1.0, l2=1.0))
    >>> p.d_mag.round(12).tolist()    # d_11 = c_11, d_12 = c_11 - c_12, d_21 = 0, d_22 = c_22
    [[0.5, 1.0], [0.0, 0.5]]
    >>> p.b0.round(12).tolist()       # b_10 = (m1 d_11 + m2 d_12)/M, b_20 = m2 d_22 / M
    [[-0.75, 0.0], [-0.25, 0.0]]
    >>> p.less.tolist(), round(float(p.K3[0]), 12)   # s_1 < s_2; K_13 = J1 + 0.25 + 1
    ([[False, True], [False, False]], 1.333541666667)
    """
    def build():
        g = _require_planar_tree(model)
        S_full, T = g.S, g.T
        S, S0 = S_full[1:], S_full[0]
        n, m = model.n, model.m
        c = np.zeros((n, m, 2))
        for a, j in enumerate(model.joints):
            if j.parent > 0:
                c[j.parent - 1, a] = j.parent_point[:2]
            c[j.child - 1, a] = j.child_point[:2]
        C = S[:, :, None] * c                                   # (3.5)
        d = np.einsum("iak,aj->ijk", C, T)                      # (3.13) d = C T
        masses = model.masses()
        M = float(masses.sum())
        b0 = np.einsum("ijk,j->ik", d, masses) / M              # (3.26)
        b = b0[:, None, :] - d                                  # (3.20)
        d_mag = np.linalg.norm(d, axis=-1)
        a_ang = np.where(d_mag > 0, _angle(d), 0.0)
        b0_mag = np.linalg.norm(b0, axis=-1)
        beta = np.where(b0_mag > 0, _angle(b0), 0.0)
        count = np.abs(S) @ np.abs(T)  # arcs of s_i on the path s_0 -> s_j
        less = count == 2
        Jzz = model.inertias()[:, 2, 2]
        K3 = Jzz + np.einsum("k,ik->i", masses, d_mag**2)        # (3.24), (3,3) entry
        sigma = np.array([np.sign(j.revolute_axis[2]) for j in model.joints])
        theta0 = np.array([np.arctan2(j.orientation[1, 0], j.orientation[0, 0])
                           for j in model.joints])
        arrays = dict(S=S, S0=S0, T=T, c=c, C=C, d=d, d_mag=d_mag, a=a_ang, b0=b0,
                      b0_mag=b0_mag, beta=beta, b=b, less=less, K3=K3, masses=masses, Jzz=Jzz,
                      sigma=sigma, theta0=theta0)
        return PlanarParameters(M=M, **{k: _readonly(v) for k, v in arrays.items()})

    return model.prepared("tree.planar", build)


def prepare(model):
    """The prepared data of this module: :func:`planar_parameters` (once per model version).

    Examples
    --------
    >>> import mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> prepare(m) is planar_parameters(m)
    True
    """
    return planar_parameters(model)


# ---------------------------------------------------------- coordinate maps
def _check_angles(model, x, name):
    if np.iscomplexobj(x):
        raise ShapeError(f"{name} must be real numbers, got a complex array")
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ShapeError(f"{name} must be an array of {model.n} numbers, got {x!r}") from None
    if arr.ndim == 0 or arr.shape[-1] != model.n:
        raise ShapeError(
            f"{name} must have shape ({model.n},) or (..., {model.n}) (one absolute angle "
            f"per body {[b.name for b in model.bodies[1:]]}), got shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        raise ShapeError(f"{name} must be finite")
    return arr


def _absolute(p, phi0, q, qd=None):
    """``phi = phi_0 1 - T^T (sigma q + theta0)`` and ``phi' = -T^T (sigma q')`` on arrays."""
    phi = phi0 - (p.sigma * q + p.theta0) @ p.T
    return phi, None if qd is None else -(p.sigma * qd) @ p.T


def _relative(p, phi0, phi, dphi=None):
    """``q = sigma (-(S0 phi_0 + S^T phi) - theta0)``, ``q' = -sigma S^T phi'`` on arrays."""
    q = p.sigma * (-(p.S0 * phi0 + phi @ p.S) - p.theta0)
    return q, None if dphi is None else -p.sigma * (dphi @ p.S)


def absolute_angles(model, q, qd=None, *, t=0.0):
    """Absolute angles ``phi`` (and rates) from the model's relative joint angles.

    The relative angle of joint ``a`` is ``phi_{i-(a)} - phi_{i+(a)} = sigma_a q_a +
    theta0_a = -(S0_a phi_0 + sum_i S_ia phi_i)`` (3.76)-(3.77); multiplying by ``T^T``
    and using ``T^T S^T = E``, ``T^T S0^T = -1_n`` (1.4)-(1.5)::

        phi = phi_0 1_n - T^T (sigma q + theta0),      phi' = -T^T (sigma q')

    (``phi_0`` is the constant base angle).

    Parameters
    ----------
    q : array_like, shape (..., n)
    qd : array_like, shape (..., n), optional
    t : float

    Returns
    -------
    phi : ndarray, shape (..., n)
        Or ``(phi, dphi)`` if ``qd`` is given.

    Examples
    --------
    >>> import mbcourse as mb
    >>> absolute_angles(mb.models.double_pendulum(), [0.3, 0.2], [1.0, -0.5])
    (array([0.3, 0.5]), array([1. , 0.5]))
    """
    p = planar_parameters(model)
    phi0, _ = _base_state(model, t)
    state = model.check_state(q, qd, t=t)
    phi, dphi = _absolute(p, phi0, state.q, state.qd)
    what = "mb.tree.planar.absolute_angles"
    if qd is None:
        return state.result(phi, what)
    return state.result(phi, what), state.result(dphi, what)


def relative_coordinates(model, phi, dphi=None, *, t=0.0):
    """Inverse of :func:`absolute_angles`: ``q = sigma (-(S0 phi_0 + S^T phi) - theta0)``.

    Examples
    --------
    >>> import mbcourse as mb
    >>> relative_coordinates(mb.models.double_pendulum(), [0.3, 0.5], [1.0, 0.5])
    (array([0.3, 0.2]), array([ 1. , -0.5]))
    """
    p = planar_parameters(model)
    phi0, _ = _base_state(model, t)
    q, _ = _relative(p, phi0, _check_angles(model, phi, "phi"))
    if dphi is None:
        return q
    _, qd = _relative(p, phi0, np.zeros(model.n), _check_angles(model, dphi, "dphi"))
    return q, qd


def relative_accelerations(model, ddphi):
    """Joint accelerations ``q'' = -sigma S^T phi''`` from absolute ones (fixed base angle).

    Examples
    --------
    >>> import mbcourse as mb
    >>> relative_accelerations(mb.models.double_pendulum(), [1.0, 3.0])
    array([1., 2.])
    """
    p = planar_parameters(model)
    ddphi = _check_angles(model, ddphi, "ddphi")
    return -p.sigma * (ddphi @ p.S)


# ---------------------------------------------------------------- equations
def _rot_z(phi):
    return axis_angle(np.array([0.0, 0.0, 1.0]), phi)


def _model_forces(model, q, qd, t, phi, phi0):
    """In-plane forces ``F`` (B, n, 2) and moments ``Mz`` (B, n) of every force element
    through the centres of mass, and the joint moments ``Y = -sigma Q`` (B, m) of the
    generalized force elements."""
    Aw = np.empty(phi.shape[:-1] + (phi.shape[-1] + 1, 3, 3))
    Aw[..., 0, :, :] = _rot_z(phi0)
    Aw[..., 1:, :, :] = _rot_z(phi)
    # orientations suffice without springs; with them the model computes the true poses
    F3, M3 = model_forces.applied_wrenches(model, q, qd, t, orientations=Aw)
    return F3[..., 1:, :2], M3[..., 1:, 2]


def _A_B(p, phi):
    """``A`` (symmetric, cos) and ``B`` (antisymmetric, sin: erratum E16) of (3.42)."""
    less = p.less
    # angle of the coupling terms for i < j: phi_i - phi_j + a_ij - beta_j
    theta = phi[..., :, None] - phi[..., None, :] + p.a - p.beta[None, :]
    coef = p.M * p.d_mag * p.b0_mag[None, :] * less  # M d_ij b_j0 for s_i < s_j
    upper_cos = coef * np.cos(theta)
    upper_sin = coef * np.sin(theta)
    # s_j < s_i: M d_ji b_i0 cos/sin(phi_i - phi_j - a_ji + beta_i) = transposes of the above
    # with the argument's sign flipped: cos even -> symmetric, sin odd -> antisymmetric (E16)
    A = upper_cos + transpose(upper_cos) + np.diag(p.K3)
    B = upper_sin - transpose(upper_sin)
    return A, B


def _R(p, phi, F, Mz, acc0):
    """``R_i`` of (3.42): applied moments, lever terms of the forces, base acceleration."""
    n = phi.shape[-1]
    ang = phi[..., :, None] + p.a                      # phi_i + a_ij
    reach = p.less | np.eye(n, dtype=bool)             # s_i <= s_j
    lever = p.d_mag * reach * (F[..., None, :, 0] * np.sin(ang) - F[..., None, :, 1] * np.cos(ang))
    gb = phi + p.beta
    return (Mz + lever.sum(axis=-1)
            - p.M * p.b0_mag * (acc0[0] * np.sin(gb) - acc0[1] * np.cos(gb)))


def planar_equations(model, phi, dphi, forces=None, *, t=0.0):
    """The matrices ``A``, ``B`` and the vector ``R`` of (3.42)-(3.43) (erratum E16).

    ``A phi'' + B phi'^2 = R + S Y`` in absolute angles; see the module docstring for
    the entries.

    Parameters
    ----------
    model : Model
        A planar revolute tree.
    phi, dphi : array_like, shape (..., n)
        Absolute angles and their rates (``dphi`` enters ``R`` through dampers and forces
        that depend on the speeds; it also fixes the batch shape).
    forces : tuple (F, Mz), optional
        In-plane applied forces through the centres of mass ``F`` (shape (..., n, 2) or
        (..., n, 3), inertial axes; z ignored) and moments ``Mz`` (shape (..., n)): then
        ``R`` holds these only. Default: every force element of the model at this state and
        time (gravity, loads, springs and dampers; joint springs and generalized forces as
        the joint moments ``S Y``).
    t : float
        Time (loads and the base acceleration ``r0''``).

    Returns
    -------
    A : ndarray, shape (..., n, n)
        Symmetric positive-definite mass matrix in absolute angles (``A_ii = K_i3``).
    B : ndarray, shape (..., n, n)
        Antisymmetric, zero diagonal, with **sin** (erratum E16; the print has cos and
        calls it symmetric).
    R : ndarray, shape (..., n)
        Applied moments, lever terms of the applied forces and the base-acceleration term.

    Examples
    --------
    One uniform rod (length 2, hinge at one end) horizontal under gravity: ``A = J + m``,
    ``R = -m g`` (the moment of gravity about the hinge).

    >>> import numpy as np, mbcourse as mb
    >>> m = mb.Model(gravity=(0, -9.81, 0))
    >>> _ = m.add_body("rod", 1.0, [0.1, 1 / 3, 1 / 3])
    >>> _ = m.add_joint("O", "revolute", "ground", "rod", child_point=(-1, 0, 0), axis=(0, 0, 1))
    >>> A, B, R = planar_equations(m, [0.0], [0.0])
    >>> A.round(12).tolist(), B.tolist(), R.round(12).tolist()
    ([[1.333333333333]], [[0.0]], [-9.81])
    >>> _ = m.add_joint_spring("O", stiffness=2.0, rest=0.5)    # 2 (0.5 - 0) more on R
    >>> planar_equations(m, [0.0], [0.0])[2].round(12).tolist()
    [-8.81]
    """
    p = planar_parameters(model)
    phi0, acc0 = _base_state(model, t)
    phi = _check_angles(model, phi, "phi")
    dphi = _check_angles(model, dphi, "dphi")
    n = model.n
    batch = np.broadcast_shapes(phi.shape[:-1], dphi.shape[:-1])
    phi = np.broadcast_to(phi, batch + (n,))
    dphi = np.broadcast_to(dphi, batch + (n,))
    if forces is None:
        q, qd = _relative(p, phi0, phi, dphi)
        F, Mz = _model_forces(model, q, qd, t, phi, phi0)
        Y = -p.sigma * model_forces.generalized_forces(model, q, qd, t)  # book's joint moments
    else:
        F, Mz = forces
        F = np.asarray(F, dtype=float)[..., :2]
        Mz = np.asarray(Mz, dtype=float)
        if F.shape[-2:] != (n, 2) or Mz.shape[-1:] != (n,):
            raise ShapeError(f"forces must be (F of shape (..., {n}, 2 or 3), Mz of shape "
                             f"(..., {n})), got shapes {F.shape} and {Mz.shape}")
        Y = None
    A, B = _A_B(p, phi)
    R = _R(p, phi, F, Mz, acc0)
    if Y is not None:
        R = R + Y @ p.S.T
    shape = np.broadcast_shapes(phi.shape, R.shape)
    return (np.broadcast_to(A, shape[:-1] + (n, n)), np.broadcast_to(B, shape[:-1] + (n, n)),
            np.broadcast_to(R, shape))


@coupled("matrix")
def mass_matrix(model, q, *, t=0.0):
    """Mass matrix in the model's relative coordinates, ``J^T A J`` with ``J = -T^T sigma``.

    Equals :func:`mbcourse.tree.mass_matrix` for planar trees.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> bool(np.allclose(mass_matrix(m, [0.3, 0.2]), mb.tree.mass_matrix(m, [0.3, 0.2])))
    True
    """
    p = planar_parameters(model)
    phi0, _ = _base_state(model, t)
    state = model.check_state(q, t=t)
    phi, _ = _absolute(p, phi0, state.q)
    A, _ = _A_B(p, phi)
    J = -p.T.T * p.sigma[None, :]
    return state.result(J.T @ A @ J, "mb.tree.planar.mass_matrix")


@coupled("forward")
def forward_dynamics(model, q, qd, tau=None, *, t=0.0):
    """Joint accelerations of a planar tree from (3.43), in the model's coordinates.

    Converts ``(q, qd)`` to absolute angles (:func:`absolute_angles`), solves
    ``A phi'' = R + S Y - B phi'^2`` with ``Y_a = -sigma_a (tau_a + Q_a)`` (``Q`` the
    model's joint springs and generalized forces) and returns ``q'' = -sigma S^T phi''``
    (:func:`relative_accelerations`). Vectorized over any batch shape.

    Parameters
    ----------
    q, qd : array_like, shape (..., nv)
        Relative joint angles and rates (the model's coordinates).
    tau : array_like, shape (..., nv), optional
        Generalized joint torques.
    t : float

    Returns
    -------
    ndarray, shape (..., nv)

    Raises
    ------
    ModelError, TopologyError
        For a model outside the scope of (3.36)-(3.43) (see the module docstring).

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> q, qd, tau = np.array([0.3, 0.2]), np.array([1.0, -0.5]), np.array([0.4, -0.1])
    >>> bool(np.allclose(forward_dynamics(m, q, qd, tau), mb.tree.forward_dynamics(m, q, qd, tau)))
    True
    """
    p = planar_parameters(model)
    phi0, acc0 = _base_state(model, t)
    state = model.check_state(q, qd, tau, t=t)
    with np.errstate(over="ignore", invalid="ignore"):
        phi, dphi = _absolute(p, phi0, state.q, state.qd)
        F, Mz = _model_forces(model, state.q, state.qd, state.t, phi, phi0)
        A, B = _A_B(p, phi)
        tau_total = state.tau + model_forces.generalized_forces(model, state.q, state.qd, state.t)
        Y = -p.sigma * tau_total                 # book's joint moments, +Y_a on i+(a)
        rhs = _R(p, phi, F, Mz, acc0) + Y @ p.S.T - mv(B, dphi**2)
        try:
            L = np.linalg.cholesky(A)
        except np.linalg.LinAlgError:
            raise SingularSystemError(
                "mb.tree.planar.forward_dynamics: the planar mass matrix A of (3.42) is not "
                "positive definite"
            ) from None
        ddphi = np.linalg.solve(transpose(L), np.linalg.solve(L, rhs[..., None]))[..., 0]
        qdd = -p.sigma * (ddphi @ p.S)
    return state.result(qdd, "mb.tree.planar.forward_dynamics")
