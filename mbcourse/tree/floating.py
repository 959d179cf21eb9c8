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

Forces: gravity, loads and spring-dampers (:meth:`~mbcourse.Model.applied_wrenches`) enter
``F_j`` and ``M_i``; joint springs and control laws
(:meth:`~mbcourse.Model.generalized_forces`) act on the joints, never on the fictitious one.
The barycentric constants are the prepared data of this module (:func:`prepare`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ModelError, SingularSystemError
from .. import forces as model_forces
from .. import poses as model_poses
from ..spatial import cross, mv, transpose
from . import barycentre as bc
from . import general
from .spherical import joint_axes
from ..coupling import coupled

__all__ = ["FloatingData", "prepare", "floating_matrices", "forward_dynamics"]


@dataclass(frozen=True)
class FloatingData:
    """Prepared data of a free-floating system.

    Attributes
    ----------
    root : Joint
        The fictitious joint (a floating joint from the base to body 1).
    tree : mbcourse.tree.general.TreeStructure
    rot : ndarray of int
        The rotational degrees of freedom: every speed except the three translations of
        the fictitious joint.
    mu : (n, n) (3.48);  b : (n, n, 3) ``b_ij = -(C T mu)_ij`` (3.59), body-``i`` axes;
    K_star : (n, 3, 3) (3.65), body axes
    """

    root: object
    tree: general.TreeStructure
    rot: np.ndarray
    mu: np.ndarray
    b: np.ndarray
    K_star: np.ndarray


def prepare(model):
    """The per-model constants of a free-floating system, built once per model version.

    Raises
    ------
    ModelError
        Unless exactly one joint touches the base: a floating joint from the base (parent)
        to body 1, and the base has no prescribed motion.

    Examples
    --------
    >>> import mbcourse as mb
    >>> data = prepare(mb.models.floating_spacecraft())
    >>> data.root.name, data.rot.tolist()
    ('float', [3, 4, 5, 6, 7])
    """
    def build():
        root = [j for j in model.joints if 0 in (j.parent, j.child)]
        if len(root) != 1 or not root[0].floating or root[0].parent != 0:
            raise ModelError(
                "a free-floating system needs exactly one joint at the base: a 'free' joint "
                "from the base (parent) to body 1, the fictitious joint of (3.44)"
            )
        tree = general.prepare(model)
        root = root[0]
        rot = np.array([k for k in range(model.nv)
                        if not (tree.dof_joint[k] == root.index and k - root.v_slice.start < 3)],
                       dtype=int)
        mu, b, K_star = bc.floating_barycentre_vectors(model)
        return FloatingData(root=root, tree=tree, rot=rot, mu=mu, b=b, K_star=K_star)

    data = model.prepared("tree.floating", build)
    if model.base_motion is not None:
        raise ModelError("a free-floating system has no prescribed base motion")
    return data


def _kinematics(model, q, qd, t):
    r, A = model_poses.body_poses(model, q, t)
    vel, omega = model_poses.body_velocities(model, q, qd, t, A)
    return r, A, vel, omega


def _matrices(model, data, q, qd, t, kin):
    r, A, vel, omega = kin
    Ab = A[:, 1:]
    bW = mv(Ab[:, :, None], data.b)  # b_ij in inertial axes
    KW = Ab @ data.K_star @ transpose(Ab)
    M = model.masses().sum()
    n = model.n
    E = np.eye(3)
    bji = np.swapaxes(bW, 1, 2)  # [b, i, j] -> b_ji
    dot = np.einsum("bijx,bijx->bij", bji, bW)
    K = M * (np.einsum("bijx,bijy->bijxy", bji, bW) - dot[..., None, None] * E)
    K[:, np.arange(n), np.arange(n)] = KW
    K = K.transpose(0, 1, 3, 2, 4).reshape(-1, 3 * n, 3 * n)
    w = omega[:, 1:]
    F, Mext = model_forces.applied_wrenches(model, q, qd, t, poses=(r, A),
                                             velocities=(vel, omega))
    cen = cross(w[:, None], cross(w[:, None], bji))  # w_j x (w_j x b_ji) at [b, i, j]
    offdiag = ~np.eye(n, dtype=bool)
    rhs = (-cross(w, mv(KW, w))
           + M * np.einsum("ij,bijx->bix", offdiag, cross(bW, cen))
           + np.einsum("bijx->bix", cross(bW, F[:, None, 1:]))
           + Mext[:, 1:])
    return K, rhs, F


def floating_matrices(model, q, qd, *, t=0.0):
    """The ``3n x 3n`` matrix of (3.68) and the right-hand sides ``M'_i + M_i`` (3.67).

    Returns
    -------
    K : (..., 3n, 3n)
    rhs : (..., n, 3)
    F : (..., n + 1, 3) applied forces (for ``ddr_C``)
    A, omega : orientations (..., n + 1, 3, 3) and angular velocities (..., n + 1, 3),
        inertial axes

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.floating_spacecraft()
    >>> K, rhs, F, A, omega = floating_matrices(m, m.neutral_q(), np.zeros(m.nv))
    >>> K.shape, bool(np.allclose(K, K.T))
    ((9, 9), True)
    """
    data = prepare(model)
    state = model.check_state(q, qd, t=t)
    with np.errstate(over="ignore", invalid="ignore"):
        kin = _kinematics(model, state.q, state.qd, state.t)
        K, rhs, F = _matrices(model, data, state.q, state.qd, state.t, kin)
    what = "mb.tree.floating.floating_matrices"
    return (state.result(K, what), state.result(rhs, what), state.result(F, what),
            state.result(kin[1], what), state.result(kin[3], what))


@coupled("forward")
def forward_dynamics(model, q, qd, tau=None, *, t=0.0):
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
    data = prepare(model)
    state = model.check_state(q, qd, tau, t=t)
    root, T, dof_joint, rot = data.root, data.tree.T, data.tree.dof_joint, data.rot
    if np.any(state.tau[:, root.v_slice]):
        raise ModelError(
            f"joint {root.name!r} is the fictitious joint of a free-floating system: no force "
            "or moment acts through it (X_1 = Y_1 = 0); apply external loads with add_force"
        )
    qb, qdb = state.q, state.qd
    Bn, n, N = qb.shape[0], model.n, model.nv
    with np.errstate(over="ignore", invalid="ignore"):
        tau_total = state.tau + model_forces.generalized_forces(model, qb, qdb, state.t)
        if np.any(tau_total[:, root.v_slice]):
            raise ModelError(
                f"joint {root.name!r} is the fictitious joint of a free-floating system: a "
                "generalized force element acts through it, but X_1 = Y_1 = 0; apply external "
                "loads with add_force"
            )
        kin = _kinematics(model, qb, qdb, state.t)
        _, A, _, omega = kin
        K, rhs, F = _matrices(model, data, qb, qdb, state.t, kin)
        # rotational degrees of freedom: the fictitious joint's rotations and all other joints
        P, f = joint_axes(model, qb, qdb, A, omega)
        pT = (T[dof_joint[rot]][None, :, :, None] * P[:, rot, None, :]).reshape(Bn, rot.size,
                                                                                3 * n)
        bias = (T.T @ f).reshape(Bn, 3 * n)  # T^T f
        Amat = pT @ K @ transpose(pT)
        Bvec = -mv(pT, mv(K, bias) + rhs.reshape(Bn, 3 * n)) + tau_total[:, rot]
        try:
            qdd_rot = np.linalg.solve(Amat, Bvec[..., None])[..., 0]
        except np.linalg.LinAlgError:
            raise SingularSystemError("mb.tree.floating.forward_dynamics: the projected "
                                      "barycentric matrix is singular") from None
        out = np.zeros((Bn, N))
        out[:, rot] = qdd_rot
        # angular accelerations of all bodies (3.120), then the translation of the fictitious
        # joint from the motion of the centre of mass (3.45) and R_1 = sum_j b_j1 (3.60)
        eps = -T.T @ (f + _segment_sum(P * out[..., None], dof_joint, model.m))
        M = model.masses().sum()
        acc_C = F[:, 1:].sum(axis=1) / M
        b_j1 = mv(A[:, 1:], data.b[:, 0])
        body1 = root.child - 1
        c11 = mv(A[:, root.child], root.child_point)
        w = omega[:, 1:]
        acc_1 = acc_C + np.sum(cross(eps, b_j1) + cross(w, cross(w, b_j1)), axis=1)
        ddz = (acc_1 + cross(eps[:, body1], c11)
               + cross(w[:, body1], cross(w[:, body1], c11)))
        out[:, root.v_slice.start:root.v_slice.start + 3] = mv(transpose(A[:, 0]), ddz)
    return state.result(out, "mb.tree.floating.forward_dynamics")


def _segment_sum(x, owner, m):
    """Sum rows of ``x`` (B, N, 3) into their joints: (B, m, 3)."""
    out = np.zeros((x.shape[0], m, 3))
    np.add.at(out, (slice(None), owner), x)
    return out
