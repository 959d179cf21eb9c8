"""Free-floating systems: motion about the centre of mass (Yudintsev 3.2.3, (3.44)–(3.69)).

A system not attached to a body with prescribed motion (a spacecraft with appendages) is
hung from the inertial frame by a **fictitious joint** at the centre of mass ``C_1`` of body 1
(``c_11 = 0``). The centre of mass of the whole system moves as a particle (3.45)::

    M ddr_C = sum_i F_i

and the rotations follow from the augmented bodies taken about their **barycentres**
(``K*_i``, (3.65)) with the barycentric vectors ``b_ij = -(C T mu)_ij`` (3.59)::

    sum_j K_ij domega_j = M'_i + M_i + sum_a S_ia Y_a                        (3.69)
    K_ii = K*_i,   K_ij = M (b_ji b_ij^T - (b_ji . b_ij) E)   (i != j)         (3.68)
    M'_i = -w_i x K*_i w_i + M sum_{j != i} b_ij x (w_j x (w_j x b_ji)) + sum_j b_ij x F_j

Revolute and universal joints are projected on their axes as in (3.89)–(3.91). In the
model the fictitious joint is a ``"free"`` joint from the base to body 1; every other joint
must keep its joint point fixed (spherical, revolute, universal, fixed).
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError, SingularSystemError
from . import barycentre as bc
from .general import _structure
from .spherical import joint_axes

__all__ = ["floating_matrices", "forward_dynamics"]


def _mv(M, x):
    return (M @ x[..., None])[..., 0]


def _check(model):
    root = [j for j in model.joints if 0 in (j.parent, j.child)]
    if len(root) != 1 or root[0].kind != "free" or root[0].parent != 0:
        raise ModelError(
            "a free-floating system needs exactly one joint at the base: a 'free' joint from "
            "the base (parent) to body 1, the fictitious joint of (3.44)"
        )
    if model.base_motion is not None:
        raise ModelError("a free-floating system has no prescribed base motion")
    return root[0]


def floating_matrices(model, q, qd, t=0.0):
    """The ``3n x 3n`` matrix of (3.68) and the right-hand sides ``M'_i + M_i`` (3.67).

    Returns
    -------
    K : (B, 3n, 3n)
    rhs : (B, n, 3)
    F : (B, n + 1, 3) applied forces (for ``ddr_C``)
    A, omega : orientations and angular velocities (inertial axes)
    """
    _check(model)
    q = np.atleast_2d(model.check_q(q))
    _, A = model.body_poses(q, t)
    _, omega = model.body_velocities(q, qd, t)
    mu, b, K_star = bc.floating_barycentre_vectors(model)
    Ab = A[:, 1:]
    bW = np.einsum("bixy,ijy->bijx", Ab, b)  # b_ij in inertial axes
    KW = Ab @ K_star @ np.swapaxes(Ab, -1, -2)
    M = model.masses().sum()
    n = model.n
    E = np.eye(3)
    bji = np.swapaxes(bW, 1, 2)  # [b, i, j] -> b_ji
    dot = np.einsum("bijx,bijx->bij", bji, bW)
    K = M * (np.einsum("bijx,bijy->bijxy", bji, bW) - dot[..., None, None] * E)
    K[:, np.arange(n), np.arange(n)] = KW
    K = K.transpose(0, 1, 3, 2, 4).reshape(-1, 3 * n, 3 * n)
    w = omega[:, 1:]
    F, Mext = model.applied_wrenches(t=t, orientations=A)
    cen = np.cross(w[:, None], np.cross(w[:, None], bji))  # w_j x (w_j x b_ji) at [b, i, j]
    offdiag = ~np.eye(n, dtype=bool)
    rhs = (-np.cross(w, _mv(KW, w))
           + M * np.einsum("ij,bijx->bix", offdiag, np.cross(bW, cen))
           + np.einsum("bijx->bix", np.cross(bW, F[:, None, 1:]))
           + Mext[:, 1:])
    return K, rhs, F, A, omega


def forward_dynamics(model, q, qd, tau=None, t=0.0):
    """Generalized accelerations of a free-floating system from (3.45) and (3.69).

    Same signature and result as :func:`mbcourse.tree.forward_dynamics`.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.floating_spacecraft()
    >>> q = m.neutral_q(); q[7:] = [0.4, -0.9]
    >>> v = np.array([0.1, 0, 0, 0.02, 0.3, -0.1, 0.5, 0.2])
    >>> bool(np.allclose(forward_dynamics(m, q, v), mb.tree.forward_dynamics(m, q, v)))
    True
    """
    root = _check(model)
    S, T, _, dof_joint = _structure(model)
    qb = np.atleast_2d(model.check_q(q))
    qdb = np.atleast_2d(model.check_v(qd))
    tau_b = np.atleast_2d(model.check_tau(tau))
    if np.any(tau_b[:, root.v_slice]):
        raise ModelError(
            f"joint {root.name!r} is the fictitious joint of a free-floating system: no force "
            "or moment acts through it (X_1 = Y_1 = 0); apply external loads with add_force"
        )
    Bn = max(qb.shape[0], qdb.shape[0])
    qb = np.broadcast_to(qb, (Bn, model.nq))
    qdb = np.broadcast_to(qdb, (Bn, model.nv))
    n, N = model.n, model.nv
    K, rhs, F, A, omega = floating_matrices(model, qb, qdb, t)
    # rotational degrees of freedom: the fictitious joint's rotations and all other joints
    rot = np.array([k for k in range(N) if not (dof_joint[k] == root.index
                                                and k - root.v_slice.start < 3)])
    P, f = joint_axes(model, qb, qdb, A, omega)
    pT = (T[dof_joint[rot]][None, :, :, None] * P[:, rot, None, :]).reshape(Bn, rot.size, 3 * n)
    bias = np.einsum("aj,bax->bjx", T, f).reshape(Bn, 3 * n)  # T^T f
    Amat = pT @ K @ np.swapaxes(pT, -1, -2)
    Bvec = -_mv(pT, _mv(K, bias) + rhs.reshape(Bn, 3 * n)) + tau_b[:, rot]
    try:
        ddq_rot = np.linalg.solve(Amat, Bvec[..., None])[..., 0]
    except np.linalg.LinAlgError:
        raise SingularSystemError("the projected barycentric matrix is singular") from None
    out = np.zeros((Bn, N))
    out[:, rot] = ddq_rot
    # angular accelerations of all bodies (3.120), then the translation of the fictitious
    # joint from the motion of the centre of mass (3.45) and R_1 = sum_j b_j1 (3.60)
    full = np.zeros((Bn, N))
    full[:, rot] = ddq_rot
    eps = -np.einsum("aj,bax->bjx", T, f + _segment_sum(P * full[..., None], dof_joint, model.m))
    M = model.masses().sum()
    acc_C = F[:, 1:].sum(axis=1) / M
    _, b, _ = bc.floating_barycentre_vectors(model)
    b_j1 = np.einsum("bjxy,jy->bjx", A[:, 1:], b[:, 0])
    body1 = root.child - 1
    c11 = _mv(A[:, root.child], root.child_point)
    w = omega[:, 1:]
    acc_1 = acc_C + np.sum(np.cross(eps, b_j1) + np.cross(w, np.cross(w, b_j1)), axis=1)
    ddz = acc_1 + np.cross(eps[:, body1], c11) + np.cross(w[:, body1], np.cross(w[:, body1], c11))
    base = A[:, 0]
    out[:, root.v_slice.start:root.v_slice.start + 3] = _mv(np.swapaxes(base, -1, -2), ddz)
    single = np.ndim(q) <= 1 and np.ndim(qd) <= 1 and (tau is None or np.ndim(tau) <= 1)
    return out[0] if single else out


def _segment_sum(x, owner, m):
    """Sum rows of ``x`` (B, N, 3) into their joints: (B, m, 3)."""
    out = np.zeros((x.shape[0], m, 3))
    np.add.at(out, (slice(None), owner), x)
    return out
