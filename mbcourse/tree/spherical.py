"""Wittenburg's ``K`` form: augmented bodies about their joints (Yudintsev 3.2–3.3).

With spherical joints the absolute angular accelerations are the unknowns (3.31)–(3.34)::

    sum_j K_ij domega_j = M0_i + M_i + sum_a S_ia Y_a

``K_ij`` (3.33) couples the augmented bodies through the barycentric vectors and
``M0_i`` (3.32) collects gyroscopic, centripetal, base-acceleration and force terms.
Revolute and universal joints add constraint moments orthogonal to their axes; projecting
on the axes with the matrix ``p`` (3.85) eliminates them (3.86)–(3.91)::

    A qdd = B,   A = (pT) K (pT)^T,   B = -(pT) [K (T^T f - domega_0 1) + M0 + M] - p Y

All vectors are rotated into inertial axes before they are combined (the note after
(3.34)). The base may have a prescribed motion (``r_0(t)``, ``omega_0(t)``).

Joints that move their joint point
----------------------------------
For prismatic, screw, cylindrical and free joints the hinge vector on the parent is
``c*_ia = c_ia + z_a(q)`` (3.150). The barycentric structure survives unchanged: ``d*_ij =
(C* T)_ij`` still vanishes unless ``s_i <= s_j`` and is the same for every ``j`` beyond one
joint of ``i``, so (3.24), (3.26), (3.32) and (3.33) hold with ``d*``, ``b*_i0`` and ``K*_i``
recomputed at each state (the body-fixed parts are prepared once). The relative
translations add one vector unknown per sliding joint, the acceleration of its joint point
relative to the parent, ``lambda_a = k_a qdd_a + 2 omega_{i+(a)} x k_a qd_a + s_a`` (the
terms of (3.101)–(3.102)). D'Alembert's principle with the virtual rotations ``delta pi_i``
of the augmented bodies and the virtual slides ``delta zeta_a = k_a delta q_a`` gives::

    [ K          [G_ia x] ] [ domega ]   [ M0 + M ]
    [ [G_ia x]^T    mu    ] [ lambda ] = [   R    ] + joint forces

with ``G_ia = sum_j m_j T_aj d*_ij`` (the first moment, about the inboard joint of ``i``,
of the masses beyond joint ``a``), ``mu_ab = sum_j m_j T_aj T_bj`` and ``R_a = sum_j T_aj
(m_j a0_j - F_j)`` (``a0_j`` the centre-of-mass accelerations at ``domega = lambda = 0``).
Projecting on ``-(pT)`` for the rotations and on ``k`` for the slides gives ``A qdd = B``,
which reduces to (3.89)–(3.91) when nothing slides.

Forces: gravity, loads, spring-dampers (:meth:`~mbcourse.Model.applied_wrenches`) enter
``M_i`` and ``F_j``; joint springs and control laws
(:meth:`~mbcourse.Model.generalized_forces`) enter as ``-p Y``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import SingularSystemError
from .. import forces as model_forces
from .. import poses as model_poses
from ..spatial import cross, mv, skew, transpose
from . import barycentre as bc
from . import general
from ..coupling import coupled

__all__ = ["KFormData", "prepare", "K_matrix", "M0", "joint_axes", "forward_dynamics"]


# ------------------------------------------------------------------ prepared data
@dataclass(frozen=True)
class KFormData:
    """Prepared data of the ``K`` form.

    Attributes
    ----------
    tree : mbcourse.tree.general.TreeStructure
        Graph matrices and index maps.
    bary : mbcourse.tree.barycentre.Barycentres
        Body-fixed parts of ``d_ij``, ``b_i0``, ``K_i``, ``s_i < s_j`` and the base hinges.
    sliding : tuple of Joint
        The joints that move their joint point.
    slide_parent : ndarray, shape (n, s)
        1 where body ``i`` is the parent of sliding joint ``a`` (its ``z_a`` adds to ``d_ij``).
    slide_base : ndarray, shape (s, n)
        ``|T_aj|`` for sliding joints on the base (their ``z_a`` moves the base hinge of ``j``).
    T_slide : ndarray, shape (s, n)
        The rows of ``T`` of the sliding joints.
    mu : ndarray, shape (s, s)
        ``mu_ab = sum_j m_j T_aj T_bj``.
    """

    tree: general.TreeStructure
    bary: bc.Barycentres
    sliding: tuple
    slide_parent: np.ndarray
    slide_base: np.ndarray
    T_slide: np.ndarray
    mu: np.ndarray


def prepare(model):
    """The per-model constants of the ``K`` form, built once per model version.

    Examples
    --------
    >>> import mbcourse as mb
    >>> data = prepare(mb.models.double_pendulum())
    >>> data.sliding, data.bary.K.shape
    ((), (2, 3, 3))
    """
    def build():
        tree = general.prepare(model)
        sliding = tuple(j for j in model.joints if j.moves_joint_point)
        T_slide = tree.T[[j.index for j in sliding]].astype(float).reshape(len(sliding), model.n)
        slide_parent = np.zeros((model.n, len(sliding)))
        slide_base = np.zeros((len(sliding), model.n))
        for s, j in enumerate(sliding):
            if j.parent > 0:
                slide_parent[j.parent - 1, s] = 1.0
            else:
                slide_base[s] = np.abs(T_slide[s])
        mu = (T_slide * model.masses()) @ T_slide.T
        return KFormData(tree=tree, bary=bc.prepare(model), sliding=sliding,
                         slide_parent=slide_parent, slide_base=slide_base, T_slide=T_slide, mu=mu)

    return model.prepared("tree.spherical", build)


# -------------------------------------------------------------------- kinematics
@dataclass
class _Kinematics:
    """Per-call arrays (B leading): poses, velocities, barycentric vectors in inertial axes."""

    q: np.ndarray
    qd: np.ndarray | None
    r: np.ndarray
    A: np.ndarray
    vel: np.ndarray | None
    omega: np.ndarray | None
    dW: np.ndarray      # d*_ij, (B, n, n, 3)
    b0W: np.ndarray     # b*_i0, (B, n, 3)
    KW: np.ndarray      # K*_i, (B, n, 3, 3)
    c0W: np.ndarray     # base hinge of each body's subtree, (B, n, 3)


def _kinematics(model, data, q, qd, t):
    r, A = model_poses.body_poses(model, q, t)
    vel, omega = (model_poses.body_velocities(model, q, qd, t, A) if qd is not None
                  else (None, None))
    bary = data.bary
    if data.sliding:  # hinge vectors c_ia + z_a(q) (3.150): d*, b*, K* at this state
        Z = np.stack([j.z(q[:, j.q_slice]) for j in data.sliding], axis=1)  # (B, s, 3)
        d = bary.d + np.einsum("ia,aj,bax->bijx", data.slide_parent, data.T_slide, Z)
        b0, _ = bc.barycentres_from_d(d, model.masses())
        K = bc.augmented_inertias_from_d(d, model.masses(), model.inertias())
        c0 = bary.base_hinges + np.einsum("aj,bax->bjx", data.slide_base, Z)
    else:
        d, b0, K, c0 = bary.d, bary.b0, bary.K, bary.base_hinges
    Ab = A[:, 1:]  # (B, n, 3, 3)
    dW = mv(Ab[:, :, None], d)  # d_ij in body-i axes -> inertial
    return _Kinematics(q, qd, r, A, vel, omega, dW, mv(Ab, b0), Ab @ K @ transpose(Ab),
                       mv(A[:, :1], c0))


def _K_matrix(model, data, kin):
    dW, b0W = kin.dW, kin.b0W
    B, n = dW.shape[0], model.n
    M = model.masses().sum()
    prec = data.bary.precedes[None, :, :, None, None]
    E = np.eye(3)
    # s_i < s_j: M ((b_j0 . d_ij) E - b_j0 d_ij^T)
    bd = np.einsum("bjx,bijx->bij", b0W, dW)
    upper = M * (bd[..., None, None] * E - np.einsum("bjx,bijy->bijxy", b0W, dW))
    # s_j < s_i: M ((d_ji . b_i0) E - d_ji b_i0^T)
    db = np.einsum("bjix,bix->bij", dW, b0W)
    lower = M * (db[..., None, None] * E - np.einsum("bjix,biy->bijxy", dW, b0W))
    K = np.where(prec, upper, 0.0) + np.where(np.swapaxes(prec, 1, 2), lower, 0.0)
    K[:, np.arange(n), np.arange(n)] = kin.KW
    return K.transpose(0, 1, 3, 2, 4).reshape(B, 3 * n, 3 * n)


def _base_accelerations(model, kin, t):
    """Acceleration of the base point each subtree hangs from (the book's ``ddr_0``)."""
    if not model.base_motion:
        return np.zeros_like(kin.c0W)
    base = model.base_motion.state(t)
    w0, dw0 = base["angular_velocity"], base["angular_acceleration"]
    c0 = kin.c0W
    return base["acceleration"] + cross(dw0, c0) + cross(w0, cross(w0, c0))


def _M0(model, data, kin, F, Mext, acc0):
    n = model.n
    dW, b0W = kin.dW, kin.b0W
    w = kin.omega[:, 1:]
    M = model.masses().sum()
    prec = data.bary.precedes
    cen_b = cross(w, cross(w, b0W))  # w_j x (w_j x b_j0)
    # sum over s_i < s_j of d_ij x (w_j x (w_j x b_j0))
    tot = np.einsum("ij,bijx->bix", prec, cross(dW, cen_b[:, None]))
    # -ddr_0 + sum over s_j < s_i of w_j x (w_j x d_ji)
    cen_d = cross(w[:, :, None], cross(w[:, :, None], dW))  # [b, j, i]
    acc = -acc0 + np.einsum("ji,bjix->bix", prec, cen_d)
    # sum over s_i <= s_j of d_ij x F_j
    reach = prec | np.eye(n, dtype=bool)
    force = np.einsum("ij,bijx->bix", reach, cross(dW, F[:, None, 1:]))
    return (-cross(w, mv(kin.KW, w)) + Mext[:, 1:]
            - M * (tot + cross(b0W, acc)) - force)


def _forces(model, kin, t):
    return model_forces.applied_wrenches(model, kin.q, kin.qd, t, poses=(kin.r, kin.A),
                                         velocities=(kin.vel, kin.omega))


def K_matrix(model, q, *, t=0.0):
    """The symmetric ``3n x 3n`` matrix of blocks ``K_ij`` (3.33), inertial axes.

    With joints that move their joint point, ``K`` is built from the actual hinge vectors
    ``c_ia + z_a(q)`` at this state.

    Returns
    -------
    ndarray, shape (..., 3n, 3n)

    Examples
    --------
    For a chain of spherical joints ``omega^T K omega / 2`` is the kinetic energy.

    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> K = K_matrix(m, [0.3, 0.4])
    >>> K.shape, bool(np.allclose(K, K.T))
    ((6, 6), True)
    """
    data = prepare(model)
    state = model.check_state(q, t=t)
    kin = _kinematics(model, data, state.q, None, state.t)
    return state.result(_K_matrix(model, data, kin), "mb.tree.spherical.K_matrix")


def M0(model, q, qd, *, t=0.0):
    """``M0_i + M_i`` of (3.32): all moments about the inboard joints except joint moments.

    ``M0_i = -w_i x K_i w_i - M (sum_{s_i<s_j} d_ij x (w_j x (w_j x b_j0))
    + b_i0 x (-ddr_0 + sum_{s_j<s_i} w_j x (w_j x d_ji))) - sum_{s_i<=s_j} d_ij x F_j``,
    plus the applied moments ``M_i`` (gravity, loads and springs of the model). ``ddr_0``
    is the acceleration of the base point the subtree of ``i`` hangs from
    (:func:`~mbcourse.tree.barycentre.base_hinges`).

    Returns
    -------
    ndarray, shape (..., n, 3), inertial axes

    Examples
    --------
    >>> import mbcourse as mb
    >>> M0(mb.models.double_pendulum(), [0.0, 0.0], [0.0, 0.0])[:, 2].round(4)
    array([-14.715,  -4.905])
    """
    data = prepare(model)
    state = model.check_state(q, qd, t=t)
    with np.errstate(over="ignore", invalid="ignore"):
        kin = _kinematics(model, data, state.q, state.qd, state.t)
        F, Mext = _forces(model, kin, state.t)
        out = _M0(model, data, kin, F, Mext, _base_accelerations(model, kin, state.t))
    return state.result(out, "mb.tree.spherical.M0")


def joint_axes(model, q, qd, A, omega):
    """Axis vectors ``p_al`` of every degree of freedom and ``f_a`` of (3.82), inertial axes.

    ``f_a = w_a + omega_{i-(a)} x Omega_a``: the velocity-product part of the relative
    angular acceleration (3.86). A kernel on checked arrays: ``q`` (B, nq), ``qd`` (B, nv),
    orientations ``A`` (B, n + 1, 3, 3) and angular velocities ``omega`` (B, n + 1, 3).

    Returns
    -------
    P : ndarray, shape (B, N, 3)
    f : ndarray, shape (B, m, 3)
    """
    B = q.shape[0]
    P = np.zeros((B, model.nv, 3))
    f = np.zeros((B, model.m, 3))
    for j in model.joints:
        if j.nv == 0:
            continue
        qa, va = q[:, j.q_slice], qd[:, j.v_slice]
        Ai = A[:, j.parent]
        Pa = Ai @ j.p(qa)
        P[:, j.v_slice] = transpose(Pa)
        wb, _ = j.bias(qa, va)
        f[:, j.index] = mv(Ai, wb) + cross(omega[:, j.child], mv(Pa, va))
    return P, f


def _slides(model, data, kin, F, acc0):
    """The sliding joints' part: ``[G x]`` (B, 3n, 3s), ``mu`` (3s, 3s), their columns of
    the projection (B, N, 3s), ``lambda`` at ``qdd = 0`` (B, 3s) and ``R`` (B, 3s)."""
    B, n, s = kin.q.shape[0], model.n, len(data.sliding)
    m = model.masses()
    G = np.einsum("j,aj,bijx->biax", m, data.T_slide, kin.dW)  # sum_j m_j T_aj d*_ij
    Gx = skew(G).transpose(0, 1, 3, 2, 4).reshape(B, 3 * n, 3 * s)
    proj = np.zeros((B, model.nv, 3 * s))
    lam = np.zeros((B, s, 3))
    for k, j in enumerate(data.sliding):
        qa, va = kin.q[:, j.q_slice], kin.qd[:, j.v_slice]
        Ai = kin.A[:, j.parent]
        Ka = Ai @ j.k(qa)  # (B, 3, nv_a)
        proj[:, j.v_slice, 3 * k:3 * k + 3] = transpose(Ka)
        _, sb = j.bias(qa, va)
        lam[:, k] = 2.0 * cross(kin.omega[:, j.parent], mv(Ka, va)) + mv(Ai, sb)
    # centre-of-mass accelerations at domega = lambda = 0: a0_j = ddr_0 - sum_k w_k x (w_k x d_kj)
    w = kin.omega[:, 1:]
    a0 = acc0 - np.sum(cross(w[:, :, None], cross(w[:, :, None], kin.dW)), axis=1)
    R = np.einsum("aj,bjx->bax", data.T_slide, m[:, None] * a0 - F[:, 1:])
    return Gx, np.kron(data.mu, np.eye(3)), proj, lam.reshape(B, 3 * s), R.reshape(B, 3 * s)


@coupled("forward")
def forward_dynamics(model, q, qd, tau=None, *, t=0.0):
    """Generalized accelerations through the ``K`` form and the projection (3.89)–(3.91).

    Same signature and result as :func:`mbcourse.tree.forward_dynamics`, for every joint
    kind (sliding joints through the augmented system of the module docstring).

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> bool(np.allclose(forward_dynamics(m, [0.3, 0.2], [1.0, -0.5]),
    ...                  mb.tree.forward_dynamics(m, [0.3, 0.2], [1.0, -0.5])))
    True
    """
    data = prepare(model)
    state = model.check_state(q, qd, tau, t=t)
    T, dof_joint = data.tree.T, data.tree.dof_joint
    Bn, n, N = state.q.shape[0], model.n, model.nv
    with np.errstate(over="ignore", invalid="ignore"):
        kin = _kinematics(model, data, state.q, state.qd, state.t)
        F, Mext = _forces(model, kin, state.t)
        acc0 = _base_accelerations(model, kin, state.t)
        K = _K_matrix(model, data, kin)
        rhs = _M0(model, data, kin, F, Mext, acc0).reshape(Bn, 3 * n)
        P, f = joint_axes(model, state.q, state.qd, kin.A, kin.omega)
        # -(pT): row (a l), block j = -T_aj p_al^T, so that domega = -(pT)^T qdd + bias
        proj = -(T[dof_joint][None, :, :, None] * P[:, :, None, :]).reshape(Bn, N, 3 * n)
        domega0 = (model.base_motion.state(state.t)["angular_acceleration"]
                   if model.base_motion else np.zeros(3))
        x0 = (domega0 - T.T @ f).reshape(Bn, 3 * n)  # domega at qdd = 0 (3.120)
        if data.sliding:
            Gx, mu, proj_s, lam0, R = _slides(model, data, kin, F, acc0)
            K = np.block([[K, Gx], [transpose(Gx), np.broadcast_to(mu, (Bn,) + mu.shape)]])
            proj = np.concatenate([proj, proj_s], axis=-1)
            x0 = np.concatenate([x0, lam0], axis=-1)
            rhs = np.concatenate([rhs, R], axis=-1)
        tau_total = state.tau + model_forces.generalized_forces(model, state.q, state.qd,
                                                                  state.t)  # -p Y
        Amat = proj @ K @ transpose(proj)  # (3.90)
        Bvec = mv(proj, rhs - mv(K, x0)) + tau_total  # (3.91)
        try:
            out = np.linalg.solve(Amat, Bvec[..., None])[..., 0]
        except np.linalg.LinAlgError:
            raise SingularSystemError(
                "mb.tree.spherical.forward_dynamics: the projected matrix (pT) K (pT)^T is "
                "singular (a coordinate moves no mass or the configuration is singular)"
            ) from None
    return state.result(out, "mb.tree.spherical.forward_dynamics")
