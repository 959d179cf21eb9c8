"""Chapter 4: Vereshchagin's separate-bodies method, O(n) (Yudintsev 3.5, after
Vereshchagin 1974 and Dmitrochenko 2003).

Every body is kept separate, with its own Newton–Euler equations about its centre of mass
and the reaction ``R_k`` of its inboard joint (3.172)–(3.173)::

    M_k w_k = Q_k + R_k - sum_{children c} C_c^T R_c,       w_k = (a_k, eps_k)

and the kinematics of joint ``k`` (3.174): ``w_k = C_k w_{p(k)} + S_k ddq_k + w0_k`` with
``C_k = [[E, -rho~], [0, E]]`` (``rho`` from the parent's centre of mass to the child's).
An ideal joint's reaction does no work along the joint: ``S_k^T R_k = tau_k`` (3.175, with
the joint's own actuator force ``tau_k``). Eliminating the reactions from the leaves to the
root gives the **articulated** quantities (3.178)–(3.179)::

    U_k      = S_k^T M*_k S_k
    M*_p    += C_k^T (M*_k - M*_k S_k U_k^-1 S_k^T M*_k) C_k
    Q*_p    -= C_k^T [M*_k (S_k U_k^-1 (tau_k + S_k^T (Q*_k - M*_k w0_k)) ... )]

(the form the MATLAB program uses, not the sign-garbled print: erratum E17), and a pass
from the root to the leaves gives every acceleration (3.176)::

    ddq_k = U_k^-1 (tau_k + S_k^T (Q*_k - M*_k (C_k w_{p(k)} + w0_k)))

Each body is visited twice, so the cost grows linearly with the number of bodies; the
loops run over bodies and every step is vectorized over a **batch** of configurations.
Vectors are in inertial axes. The recursion walks from the base along the arcs, so every
joint's parent must be the body nearer the base (any numbering; the arcs of a model built
from the base outward point that way).
"""

from __future__ import annotations

import numpy as np

from .errors import SingularSystemError, TopologyError
from .spatial import skew

__all__ = ["forward_dynamics", "articulated"]


def _order(model):
    """Joints in base-to-leaves order; refuses loops and arcs pointing toward the base."""
    if "vereshchagin_order" not in model._cache:
        g = model.graph
        if not g.is_tree:
            _, cut = g.spanning_tree()
            raise TopologyError(
                f"Vereshchagin's recursion needs a tree; joints "
                f"{[model.joints[a].name for a in cut]} close loops (use mb.cartesian)"
            )
        steps = model._tree()
        backward = [j.name for j, forward in steps if not forward]
        if backward:
            raise TopologyError(
                f"joints {backward} point toward the base (their child is nearer body 0); the "
                "separate-bodies recursion walks outward from the base: add those joints with "
                "parent and child swapped"
            )
        model._cache["vereshchagin_order"] = [j for j, _ in steps]
    return model._cache["vereshchagin_order"]


def _mv(M, x):
    return (M @ x[..., None])[..., 0]


def articulated(model, q, qd, tau=None, t=0.0):
    """Run the recursion; return ``(ddq, w, M_star, Q_star)`` for a batch.

    ``w`` (B, n + 1, 6) are the body accelerations ``(a_k, eps_k)`` (inertial axes, centre of
    mass; row 0 is the base), ``M_star``/``Q_star`` (B, n + 1, 6, 6)/(B, n + 1, 6) the
    articulated mass matrices and forces of (3.177).
    """
    joints = _order(model)
    q = np.atleast_2d(model.check_q(q))
    qd = np.atleast_2d(model.check_v(qd))
    tau = np.atleast_2d(model.check_tau(tau))
    B = max(q.shape[0], qd.shape[0], tau.shape[0])
    q, qd, tau = (np.broadcast_to(x, (B, x.shape[1])) for x in (q, qd, tau))
    n = model.n
    r, A = model.body_poses(q, t)
    vel, omega = model.body_velocities(q, qd, t)
    F, Mo = model.applied_wrenches(t=t, orientations=A)
    m = model.masses()
    J = A[:, 1:] @ model.inertias() @ np.swapaxes(A[:, 1:], -1, -2)
    # body mass matrices M_k and loads Q_k (gyroscopic term included), (3.172)
    M_star = np.zeros((B, n + 1, 6, 6))
    M_star[:, 1:, :3, :3] = m[:, None, None] * np.eye(3)
    M_star[:, 1:, 3:, 3:] = J
    Q_star = np.zeros((B, n + 1, 6))
    Q_star[:, 1:, :3] = F[:, 1:]
    Q_star[:, 1:, 3:] = Mo[:, 1:] - np.cross(omega[:, 1:], _mv(J, omega[:, 1:]))
    # joint kinematics (3.174): C_k, S_k, w0_k
    geo = []
    for j in joints:
        p, c = j.parent, j.child
        qa, va = q[:, j.q_slice], qd[:, j.v_slice]
        Ap = A[:, p]
        lever_p = _mv(Ap, j.parent_point + j.z(qa))  # parent centre -> joint point
        lever_c = -_mv(A[:, c], j.child_point)  # joint point -> child centre
        rho = lever_p + lever_c
        C = np.zeros((B, 6, 6))
        C[:, :3, :3] = C[:, 3:, 3:] = np.eye(3)
        C[:, :3, 3:] = -skew(rho)
        P = Ap @ j.p(qa)  # (B, 3, nv)
        K = Ap @ j.k(qa)
        S = np.concatenate([K + np.cross(P, lever_c[..., None], axis=1), P], axis=1)
        Omega = (P @ va[..., None])[..., 0]
        wb, sb = j.bias(qa, va)
        wp = omega[:, p]
        eps0 = _mv(Ap, wb) + np.cross(wp, Omega)
        a0 = (np.cross(wp, np.cross(wp, lever_p)) + 2.0 * np.cross(wp, (K @ va[..., None])[..., 0])
              + _mv(Ap, sb) + np.cross(eps0, lever_c)
              + np.cross(omega[:, c], np.cross(omega[:, c], lever_c)))
        geo.append((j, C, S, np.concatenate([a0, eps0], axis=-1)))
    # backward pass: leaves to root (3.178), (3.179)
    saved = {}
    for j, C, S, w0 in reversed(geo):
        c, p = j.child, j.parent
        Mk, Qk = M_star[:, c], Q_star[:, c]
        ST = np.swapaxes(S, -1, -2)
        MS = Mk @ S
        U = ST @ MS
        try:
            Uinv = np.linalg.inv(U) if j.nv else np.zeros((B, 0, 0))
        except np.linalg.LinAlgError:
            raise SingularSystemError(
                f"joint {j.name!r}: S^T M* S is singular (no mass moves along this joint)"
            ) from None
        gain = MS @ Uinv  # M* S U^-1
        Ma = Mk - gain @ np.swapaxes(MS, -1, -2)
        u = tau[:, j.v_slice] + _mv(ST, Qk - _mv(Mk, w0))
        Qa = Qk - _mv(Mk, w0) - _mv(gain, u)
        CT = np.swapaxes(C, -1, -2)
        M_star[:, p] += CT @ Ma @ C
        Q_star[:, p] += _mv(CT, Qa)
        saved[j.index] = (Uinv, ST, S)
    # forward pass: root to leaves (3.176), (3.174)
    w = np.zeros((B, n + 1, 6))
    if model.base_motion is not None:
        base = model.base_motion.state(t)
        w[:, 0, :3], w[:, 0, 3:] = base["acceleration"], base["angular_acceleration"]
    ddq = np.zeros((B, model.nv))
    for j, C, S, w0 in geo:
        Uinv, ST, S = saved[j.index]
        c, p = j.child, j.parent
        pred = _mv(C, w[:, p]) + w0
        if j.nv:
            acc = _mv(Uinv, tau[:, j.v_slice] + _mv(ST, Q_star[:, c] - _mv(M_star[:, c], pred)))
            ddq[:, j.v_slice] = acc
            pred = pred + _mv(S, acc)
        w[:, c] = pred
    return ddq, w, M_star, Q_star


def forward_dynamics(model, q, qd, tau=None, t=0.0):
    """Generalized accelerations by the separate-bodies recursion (the **contract** function).

    Parameters
    ----------
    q : (nq,) or (B, nq)
    qd : (nv,) or (B, nv)
    tau : (nv,) or (B, nv), optional
    t : float

    Returns
    -------
    ndarray, shape (nv,) or (B, nv)

    Examples
    --------
    The triple pendulum of the MATLAB program at rest, rods horizontal: the absolute
    angular accelerations are ``(-0.5, 0, 0)`` (digest fact 19), so the relative ones are:

    >>> import mbcourse as mb
    >>> forward_dynamics(mb.models.triple_pendulum(), [0, 0, 0], [0, 0, 0]).round(12) + 0.0
    array([-0.5,  0.5,  0. ])
    """
    ddq, _, _, _ = articulated(model, q, qd, tau, t)
    single = np.ndim(q) <= 1 and np.ndim(qd) <= 1 and (tau is None or np.ndim(tau) <= 1)
    return ddq[0] if single else ddq
