"""Systems whose joint points do not slide: Wittenburg's ``K`` form (Yudintsev 3.2–3.3).

With spherical joints the absolute angular accelerations are the unknowns (3.31)–(3.34)::

    sum_j K_ij domega_j = M0_i + M_i + sum_a S_ia Y_a

``K_ij`` (3.33) couples the augmented bodies through the barycentric vectors and
``M0_i`` (3.32) collects gyroscopic, centripetal, base-acceleration and force terms.
Revolute and universal joints add constraint moments orthogonal to their axes; projecting
on the axes with the matrix ``p`` (3.85) eliminates them (3.86)–(3.91)::

    A ddq = B,   A = (pT) K (pT)^T,   B = -(pT) [K (T^T f - domega_0 1) + M0 + M] - p Y

All vectors are rotated into inertial axes before they are combined (the note after
(3.34)). Joints allowed: spherical, revolute, universal, fixed (``z_a = 0``); the base may
have a prescribed motion (``r_0(t)``, ``omega_0(t)``).
"""

from __future__ import annotations

import numpy as np

from ..errors import SingularSystemError
from . import barycentre as bc
from .general import _structure

__all__ = ["K_matrix", "M0", "joint_axes", "forward_dynamics"]


def _mv(M, x):
    return (M @ x[..., None])[..., 0]


def _world(model, q, t):
    """Body orientations and the barycentric vectors in inertial axes."""
    q = np.atleast_2d(model.check_q(q))
    _, A = model.body_poses(q, t)
    Ab = A[:, 1:]  # (B, n, 3, 3)
    d = bc.d_vectors(model)  # (n, n, 3) body-i axes
    b0, _ = bc.barycentre_vectors(model)
    dW = np.einsum("bixy,ijy->bijx", Ab, d)
    b0W = _mv(Ab, b0)
    K = bc.augmented_inertias(model)
    KW = Ab @ K @ np.swapaxes(Ab, -1, -2)
    return q, A, dW, b0W, KW


def K_matrix(model, q, t=0.0):
    """The symmetric ``3n x 3n`` matrix of blocks ``K_ij`` (3.33), inertial axes.

    Returns
    -------
    ndarray, shape (B, 3n, 3n)

    Examples
    --------
    For a chain of spherical joints ``omega^T K omega / 2`` is the kinetic energy.

    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> K = K_matrix(m, [0.3, 0.4])[0]
    >>> bool(np.allclose(K, K.T))
    True
    """
    q, A, dW, b0W, KW = _world(model, q, t)
    B, n = dW.shape[0], model.n
    M = model.masses().sum()
    prec = bc.precedes(model)[None, :, :, None, None]
    E = np.eye(3)
    # s_i < s_j: M ((b_j0 . d_ij) E - b_j0 d_ij^T)
    bd = np.einsum("bjx,bijx->bij", b0W, dW)
    upper = M * (bd[..., None, None] * E - np.einsum("bjx,bijy->bijxy", b0W, dW))
    # s_j < s_i: M ((d_ji . b_i0) E - d_ji b_i0^T)
    db = np.einsum("bjix,bix->bij", dW, b0W)
    lower = M * (db[..., None, None] * E - np.einsum("bjix,biy->bijxy", dW, b0W))
    K = np.where(prec, upper, 0.0) + np.where(np.swapaxes(prec, 1, 2), lower, 0.0)
    K[:, np.arange(n), np.arange(n)] = KW
    return K.transpose(0, 1, 3, 2, 4).reshape(B, 3 * n, 3 * n)


def M0(model, q, qd, t=0.0):
    """``M0_i + M_i`` of (3.32): all moments about the inboard joints except joint moments.

    ``M0_i = -w_i x K_i w_i - M (sum_{s_i<s_j} d_ij x (w_j x (w_j x b_j0))
    + b_i0 x (-ddr_0 + sum_{s_j<s_i} w_j x (w_j x d_ji))) - sum_{s_i<=s_j} d_ij x F_j``,
    plus the applied moments ``M_i`` (gravity and loads from the model). ``ddr_0`` is the
    acceleration of the base point the subtree of ``i`` hangs from (:func:`base_hinges`).

    Returns
    -------
    ndarray, shape (B, n, 3), inertial axes
    """
    q, A, dW, b0W, KW = _world(model, q, t)
    n = model.n
    _, omega = model.body_velocities(q, qd, t)
    w = omega[:, 1:]
    M = model.masses().sum()
    # acceleration of the base point each subtree hangs from (the book's ddr_0)
    c0 = _mv(A[:, :1], bc.base_hinges(model))  # (B, n, 3) inertial axes
    if model.base_motion:
        base = model.base_motion.state(t)
        w0, dw0 = base["angular_velocity"], base["angular_acceleration"]
        acc0 = base["acceleration"] + np.cross(dw0, c0) + np.cross(w0, np.cross(w0, c0))
    else:
        acc0 = np.zeros_like(c0)
    F, Mext = model.applied_wrenches(t=t, orientations=A)
    prec = bc.precedes(model)
    cen_b = np.cross(w, np.cross(w, b0W))  # w_j x (w_j x b_j0)
    # sum over s_i < s_j of d_ij x (w_j x (w_j x b_j0))
    tot = np.einsum("ij,bijx->bix", prec, np.cross(dW, cen_b[:, None]))
    # -ddr_0 + sum over s_j < s_i of w_j x (w_j x d_ji)
    cen_d = np.cross(w[:, :, None], np.cross(w[:, :, None], dW))  # [b, j, i]
    acc = -acc0 + np.einsum("ji,bjix->bix", prec, cen_d)
    # sum over s_i <= s_j of d_ij x F_j
    reach = prec | np.eye(n, dtype=bool)
    force = np.einsum("ij,bijx->bix", reach, np.cross(dW, F[:, None, 1:]))
    return (-np.cross(w, _mv(KW, w)) + Mext[:, 1:]
            - M * (tot + np.cross(b0W, acc)) - force)


def joint_axes(model, q, qd, A, omega):
    """Axis vectors ``p_al`` of every degree of freedom and ``f_a`` of (3.82), inertial axes.

    ``f_a = w_a + omega_{i-(a)} x Omega_a``: the velocity-product part of the relative
    angular acceleration (3.86). Returns ``P`` (B, N, 3) and ``f`` (B, m, 3).
    """
    B = q.shape[0]
    P = np.zeros((B, model.nv, 3))
    f = np.zeros((B, model.m, 3))
    for j in model.joints:
        if j.nv == 0:
            continue
        qa, va = q[:, j.q_slice], qd[:, j.v_slice]
        Ai = A[:, j.parent]
        P[:, j.v_slice] = np.swapaxes(Ai @ j.p(qa), -1, -2)
        Omega = np.einsum("bnx,bn->bx", P[:, j.v_slice], va)
        wb, _ = j.bias(qa, va)
        f[:, j.index] = _mv(Ai, wb) + np.cross(omega[:, j.child], Omega)
    return P, f


def forward_dynamics(model, q, qd, tau=None, t=0.0):
    """Generalized accelerations through the ``K`` form and the projection (3.89)–(3.91).

    Same signature and result as :func:`mbcourse.tree.forward_dynamics`, for models whose
    joints are spherical, revolute, universal or fixed.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> bool(np.allclose(forward_dynamics(m, [0.3, 0.2], [1.0, -0.5]),
    ...                  mb.tree.forward_dynamics(m, [0.3, 0.2], [1.0, -0.5])))
    True
    """
    S, T, _, dof_joint = _structure(model)
    qb = np.atleast_2d(model.check_q(q))
    qdb = np.atleast_2d(model.check_v(qd))
    tau_b = np.atleast_2d(model.check_tau(tau))
    Bn = max(qb.shape[0], qdb.shape[0])
    qb = np.broadcast_to(qb, (Bn, model.nq))
    qdb = np.broadcast_to(qdb, (Bn, model.nv))
    n, N = model.n, model.nv
    K = K_matrix(model, qb, t)
    rhs = M0(model, qb, qdb, t).reshape(Bn, 3 * n)
    _, A = model.body_poses(qb, t)
    _, omega = model.body_velocities(qb, qdb, t)
    P, f = joint_axes(model, qb, qdb, A, omega)
    # (pT): row (a l), block j = T_aj p_al^T
    pT = (T[dof_joint][None, :, :, None] * P[:, :, None, :]).reshape(Bn, N, 3 * n)
    domega0 = (model.base_motion.state(t)["angular_acceleration"] if model.base_motion
               else np.zeros(3))
    bias = np.einsum("aj,bax->bjx", T, f) - domega0  # T^T f - domega_0 1
    Amat = pT @ K @ np.swapaxes(pT, -1, -2)  # (3.90)
    Bvec = -_mv(pT, _mv(K, bias.reshape(Bn, 3 * n)) + rhs) + tau_b  # (3.91), -pY = tau
    try:
        out = np.linalg.solve(Amat, Bvec[..., None])[..., 0]
    except np.linalg.LinAlgError:
        raise SingularSystemError("the projected matrix (pT) K (pT)^T is singular") from None
    single = np.ndim(q) <= 1 and np.ndim(qd) <= 1 and (tau is None or np.ndim(tau) <= 1)
    return out[0] if single else out
