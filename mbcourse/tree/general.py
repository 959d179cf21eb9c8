"""General joints: d'Alembert's principle and ``A ddq = B`` (Yudintsev 3.4, after Wittenburg).

The equations of motion of a tree in the fewest coordinates are built from the graph
matrices of chapter 1 and the joint quantities of the Model (``G_a``, ``z_a``, ``p_a``,
``k_a``). With all vectors in inertial axes:

* relative angular velocity of joint ``a``: ``Omega_a = p_a v_a`` (3.104); absolute angular
  velocities ``omega = -T^T Omega + omega_0 1_n`` (3.114) and accelerations
  ``domega = -T^T (p^T dv + f) + domega_0 1_n`` (3.120), ``f_a = w_a + omega_{i-(a)} x Omega_a``
  (3.82);
* actual hinge vectors ``c*_{ia} = c_{ia} + S+_{ia} z_a`` (3.150)–(3.151) and
  ``d*_{kj} = sum_a T_{aj} S_{ka} c*_{ka}`` (3.152), so ``r_j = r_0 - sum_k d*_{kj}`` (3.153);
* the Jacobian of the centres of mass (3.163)::

      Phi_{(a l), j} = p_{al} x sum_k T_{ak} d*_{kj} - k_{al} T_{aj},    dr = Phi^T dq

  and of the rotations ``dpi = -T^T p^T dq`` (3.122);
* d'Alembert's principle (3.95)–(3.97) then gives ``A ddq = B`` (3.167)::

      A = Phi m Phi^T + (pT) J (pT)^T
      B = Phi (F - m U) + (pT)-terms of moments, gyroscopic and bias accelerations + tau

  where ``U`` are the centre-of-mass accelerations at ``ddq = 0``.

The contract functions :func:`mass_matrix`, :func:`forward_dynamics` and
:func:`inverse_dynamics` take the same Model as every other chapter and accept batches.
Closed loops are refused with a :class:`~mbcourse.errors.TopologyError` that points to the
Cartesian formulation. This module never calls the other formulations; its tests compare
them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ShapeError, SingularSystemError

__all__ = ["TreeTerms", "terms", "mass_matrix", "bias_forces", "forward_dynamics",
           "inverse_dynamics", "driven", "jacobians"]


def _require_tree(model):
    return model.require_tree("the tree formulation")


def _structure(model):
    """Graph matrices and index maps of a tree model (cached)."""
    if "tree_structure" not in model._cache:
        g = _require_tree(model)
        S = g.S  # (n+1, m)
        T = g.T  # (m, n): T[a, j-1]
        dof_joint = np.concatenate([np.full(j.nv, j.index) for j in model.joints]).astype(int) \
            if model.nv else np.zeros(0, int)
        model._cache["tree_structure"] = (S, T, np.maximum(S, 0), dof_joint)
    return model._cache["tree_structure"]


def _mv(M, x):
    return (M @ x[..., None])[..., 0]


@dataclass
class TreeTerms:
    """Per-call work arrays of the tree formulation (cf. Pinocchio's Data), inertial axes.

    Attributes
    ----------
    A : (B, n+1, 3, 3) body orientations
    omega : (B, n+1, 3) angular velocities (3.114)
    P, K : (B, N, 3) axis vectors ``p_{al}``, ``k_{al}`` of every degree of freedom
    Cstar : (B, n+1, m, 3) actual hinge vectors ``c*_{ka}`` (zero where ``S_{ka} = 0``)
    dstar : (B, n+1, n, 3) the vectors ``d*_{kj}`` (3.152)
    Jv, Jw : (B, n, N, 3) Jacobians of centre-of-mass velocity (``Phi^T``) and angular
        velocity (``-(pT)^T``)
    acc_bias, alpha_bias : (B, n, 3) accelerations at ``ddq = 0`` (``U`` and (3.120))
    """

    A: np.ndarray
    omega: np.ndarray
    P: np.ndarray
    K: np.ndarray
    Cstar: np.ndarray
    dstar: np.ndarray
    Jv: np.ndarray
    Jw: np.ndarray
    acc_bias: np.ndarray
    alpha_bias: np.ndarray


def terms(model, q, qd=None, t=0.0):
    """Kinematic terms of the tree equations at a batch of states.

    Parameters
    ----------
    q : (nq,) or (B, nq)
    qd : (nv,) or (B, nv), optional (zero velocities if omitted)

    Returns
    -------
    TreeTerms
    """
    S, T, Splus, dof_joint = _structure(model)
    q = np.atleast_2d(model.check_q(q))
    qd = np.zeros(model.nv) if qd is None else qd
    qd = np.atleast_2d(model.check_v(qd))
    B = max(q.shape[0], qd.shape[0])
    q = np.broadcast_to(q, (B, model.nq))
    qd = np.broadcast_to(qd, (B, model.nv))
    n, m, N = model.n, model.m, model.nv
    _, A = model.body_poses(q, t)
    base = model.base_motion.state(t) if model.base_motion else None
    omega0 = np.zeros(3) if base is None else base["angular_velocity"]
    domega0 = np.zeros(3) if base is None else base["angular_acceleration"]
    acc0 = np.zeros(3) if base is None else base["acceleration"]

    P = np.zeros((B, N, 3))
    K = np.zeros((B, N, 3))
    Omega = np.zeros((B, m, 3))
    Kv = np.zeros((B, m, 3))  # local rate of z_a, inertial axes
    w_bias = np.zeros((B, m, 3))
    s_bias = np.zeros((B, m, 3))
    Cstar = np.zeros((B, n + 1, m, 3))
    for j in model.joints:
        a, i, c = j.index, j.parent, j.child
        qa, va = q[:, j.q_slice], qd[:, j.v_slice]
        Ai = A[:, i]
        if j.nv:
            P[:, j.v_slice] = np.swapaxes(Ai @ j.p(qa), -1, -2)
            K[:, j.v_slice] = np.swapaxes(Ai @ j.k(qa), -1, -2)
            Omega[:, a] = np.einsum("bnx,bn->bx", P[:, j.v_slice], va)
            Kv[:, a] = np.einsum("bnx,bn->bx", K[:, j.v_slice], va)
            wb, sb = j.bias(qa, va)
            w_bias[:, a], s_bias[:, a] = _mv(Ai, wb), _mv(Ai, sb)
        Cstar[:, i, a] = _mv(Ai, j.parent_point + j.z(qa))  # (3.150): c + z on the parent
        Cstar[:, c, a] = A[:, c] @ j.child_point
    # absolute angular velocities (3.114): omega_j = omega_0 - sum_a T_aj Omega_a
    omega = np.empty((B, n + 1, 3))
    omega[:, 0] = omega0
    omega[:, 1:] = omega0 - np.einsum("aj,bax->bjx", T, Omega)
    # f_a = w_a + omega_{i-(a)} x Omega_a (3.82); bias of (3.120)
    child = np.array([j.child for j in model.joints], dtype=int)
    f = w_bias + np.cross(omega[:, child], Omega)
    alpha = np.empty((B, n + 1, 3))
    alpha[:, 0] = domega0
    alpha[:, 1:] = domega0 - np.einsum("aj,bax->bjx", T, f)
    # d*_{kj} = sum_a T_aj S_ka c*_ka (3.152)
    W = S[None, :, :, None] * Cstar  # (B, n+1, m, 3)
    dstar = np.einsum("aj,bkax->bkjx", T, W)
    # centre-of-mass accelerations at ddq = 0: second derivative of r_j = r_0 - sum_k d*_kj
    ddC = (np.cross(alpha[:, :, None], Cstar)
           + np.cross(omega[:, :, None], np.cross(omega[:, :, None], Cstar)))
    parent_of = np.array([j.parent for j in model.joints], dtype=int)
    extra = 2.0 * np.cross(omega[:, parent_of], Kv) + s_bias  # z-part, parent side only
    ddC[:, parent_of, np.arange(m)] += extra
    acc_bias = acc0 - np.einsum("aj,bkax->bjx", T, S[None, :, :, None] * ddC)
    # Jacobians: Phi_{(al), j} = p_al x sum_k T_ak d*_kj - k_al T_aj (3.163)
    TD = np.einsum("ak,bkjx->bajx", T, dstar[:, 1:])  # (B, m, n, 3)
    Tdof = T[dof_joint]  # (N, n)
    Jv = np.cross(P[:, :, None], TD[:, dof_joint]) - Tdof[None, :, :, None] * K[:, :, None]
    Jw = -Tdof[None, :, :, None] * P[:, :, None]
    return TreeTerms(A, omega, P, K, Cstar, dstar, np.swapaxes(Jv, 1, 2),
                     np.swapaxes(Jw, 1, 2), acc_bias, alpha[:, 1:])


def jacobians(model, q, t=0.0):
    """Jacobians ``(Jv, Jw)`` of centre-of-mass and angular velocities, (B, n, 3, nv).

    ``Jv[:, j - 1]`` is ``Phi^T`` restricted to body ``j`` (3.163), ``Jw`` is ``-(pT)^T``
    (3.122).
    """
    tt = terms(model, q, t=t)
    return np.swapaxes(tt.Jv, -1, -2), np.swapaxes(tt.Jw, -1, -2)


def _world_inertias(model, A):
    J = model.inertias()
    Ab = A[:, 1:]
    return Ab @ J @ np.swapaxes(Ab, -1, -2)


def _assemble(model, q, qd, t, need_bias=True):
    tt = terms(model, q, qd, t)
    m = model.masses()
    I = _world_inertias(model, tt.A)
    Jv = np.swapaxes(tt.Jv, -1, -2)  # (B, n, 3, N)
    Jw = np.swapaxes(tt.Jw, -1, -2)
    JvT, JwT = np.swapaxes(Jv, -1, -2), np.swapaxes(Jw, -1, -2)
    Amat = np.sum(m[:, None, None] * (JvT @ Jv) + JwT @ I @ Jw, axis=1)  # (3.167)
    if not need_bias:
        return Amat, None, tt
    qb = np.broadcast_to(np.atleast_2d(model.check_q(q)), (tt.A.shape[0], model.nq))
    F, M = model.applied_wrenches(qb, t)
    w = tt.omega[:, 1:]
    lin = F[:, 1:] - m[:, None] * tt.acc_bias
    ang = M[:, 1:] - _mv(I, tt.alpha_bias) - np.cross(w, _mv(I, w))
    Bvec = np.sum(_mv(JvT, lin) + _mv(JwT, ang), axis=1)
    return Amat, Bvec, tt


def _unbatch(out, *inputs):
    return out[0] if all(np.ndim(x) <= 1 for x in inputs if x is not None) else out


def mass_matrix(model, q, t=0.0):
    """The mass matrix ``A(q)`` of (3.167): ``Phi m Phi^T + (pT) J (pT)^T``.

    Parameters
    ----------
    q : (nq,) or (B, nq)

    Returns
    -------
    ndarray, shape (nv, nv) or (B, nv, nv)
        Symmetric positive definite; ``v^T A v / 2`` is the kinetic energy.

    Examples
    --------
    Two rods of the triple-pendulum program (unit masses and inertias, hinge vectors of
    length 1), stretched along x, in relative joint angles:

    >>> import numpy as np, mbcourse as mb
    >>> m = mb.Model()
    >>> for k in (1, 2):
    ...     _ = m.add_body(f"b{k}", 1.0, np.eye(3))
    >>> _ = m.add_joint("j1", "revolute", "ground", "b1", child_point=(-1, 0, 0), axis=(0, 0, 1))
    >>> _ = m.add_joint("j2", "revolute", "b1", "b2", parent_point=(1, 0, 0),
    ...                 child_point=(-1, 0, 0), axis=(0, 0, 1))
    >>> mass_matrix(m, [0.0, 0.0]).round(12)
    array([[12.,  4.],
           [ 4.,  2.]])
    """
    Amat, _, _ = _assemble(model, q, None, t, need_bias=False)
    return _unbatch(Amat, q)


def bias_forces(model, q, qd, t=0.0):
    """``B`` of (3.167) without joint forces: applied, gyroscopic and velocity terms."""
    _, Bvec, _ = _assemble(model, q, qd, t)
    return _unbatch(Bvec, q, qd)


def forward_dynamics(model, q, qd, tau=None, t=0.0):
    """Generalized accelerations from ``A ddq = B + tau`` (3.167) (the **contract** function).

    Parameters
    ----------
    q : (nq,) or (B, nq)
    qd : (nv,) or (B, nv)
    tau : (nv,) or (B, nv), optional
        Generalized joint forces in the order of ``qd``.
    t : float

    Returns
    -------
    ndarray, shape (nv,) or (B, nv)

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> bool(np.allclose(forward_dynamics(m, [0.3, 0.2], [1.0, -0.5]),
    ...                  mb.cartesian.forward_dynamics(m, [0.3, 0.2], [1.0, -0.5])))
    True
    """
    tau_arr = np.atleast_2d(model.check_tau(tau))
    Amat, Bvec, _ = _assemble(model, q, qd, t)
    try:
        L = np.linalg.cholesky(Amat)
    except np.linalg.LinAlgError:
        raise SingularSystemError(
            "the mass matrix is not positive definite: a joint coordinate moves no mass "
            "(e.g. a joint between massless bodies) or the configuration is singular"
        ) from None
    rhs = (Bvec + tau_arr)[..., None]
    out = np.linalg.solve(np.swapaxes(L, -1, -2), np.linalg.solve(L, rhs))[..., 0]
    return _unbatch(out, q, qd, tau)


def inverse_dynamics(model, q, qd, qdd, t=0.0):
    """Generalized forces ``tau = A ddq - B`` that produce the accelerations ``qdd``.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> tau = inverse_dynamics(m, [0.3, 0.2], [1.0, -0.5], [0.0, 0.0])
    >>> bool(np.allclose(forward_dynamics(m, [0.3, 0.2], [1.0, -0.5], tau), 0.0))
    True
    """
    qdd_arr = np.atleast_2d(model.check_v(qdd, name="qdd"))
    Amat, Bvec, _ = _assemble(model, q, qd, t)
    out = (Amat @ qdd_arr[..., None])[..., 0] - Bvec
    return _unbatch(out, q, qd, qdd)


def driven(model, q, qd, prescribed, tau=None, t=0.0):
    """Driven (controlled) coordinates, Yudintsev (3.92)–(3.94).

    Some generalized accelerations are prescribed (a motor enforces ``q_k(t)``); the rest
    follow from the equations with rows and columns of the driven coordinates removed,
    ``A' ddq' = B' - eta ddq_k``, and the actuator force is
    ``M_k = (A ddq)_k - B_k`` (3.93).

    Parameters
    ----------
    prescribed : dict
        ``{index in qd: prescribed acceleration}`` (scalars or (B,) arrays).
    tau : (nv,) or (B, nv), optional
        Known generalized forces on the free coordinates.

    Returns
    -------
    qdd : ndarray, shape (nv,) or (B, nv)
        All accelerations (the prescribed ones included).
    actuator : ndarray, shape (k,) or (B, k)
        The generalized forces the drives must supply, in the order of ``sorted(prescribed)``.

    Examples
    --------
    Hold the first joint of a double pendulum at rest: the drive carries the weight moment.

    >>> import mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> qdd, torque = driven(m, [0.0, 0.0], [0.0, 0.0], {0: 0.0})
    >>> qdd.round(6).tolist(), torque.round(4).tolist()
    ([0.0, -14.705809], [7.3621])
    """
    if not isinstance(prescribed, dict) or not prescribed:
        raise ShapeError("prescribed must be a non-empty dict {coordinate index: acceleration}")
    idx = sorted(prescribed)
    if any(not isinstance(k, (int, np.integer)) or not 0 <= k < model.nv for k in idx):
        raise ShapeError(f"prescribed coordinates must be indices 0..{model.nv - 1}, got {idx}")
    free = [k for k in range(model.nv) if k not in prescribed]
    tau_arr = np.atleast_2d(model.check_tau(tau))
    Amat, Bvec, _ = _assemble(model, q, qd, t)
    Bvec = Bvec + tau_arr
    batch = Amat.shape[0]
    qdd = np.zeros((batch, model.nv))
    for k in idx:
        qdd[:, k] = prescribed[k]
    if free:
        Af = Amat[:, free][:, :, free]
        rhs = Bvec[:, free] - np.einsum("bfk,bk->bf", Amat[:, free][:, :, idx], qdd[:, idx])
        qdd[:, free] = np.linalg.solve(Af, rhs[..., None])[..., 0]
    actuator = np.einsum("bkn,bn->bk", Amat[:, idx], qdd) - Bvec[:, idx]
    single = np.ndim(q) <= 1 and np.ndim(qd) <= 1
    return (qdd[0], actuator[0]) if single else (qdd, actuator)
