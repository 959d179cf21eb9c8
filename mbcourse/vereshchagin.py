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

from .errors import SingularSystemError
from .spatial import skew

__all__ = ["forward_dynamics", "articulated"]

_E3 = np.eye(3)


def _order(model):
    """Joints in base-to-leaves order; refuses loops and joints pointing toward the base."""
    return model.outward_joints("Vereshchagin's recursion")


def _constants(model):
    """Per-model constants, cached: joint order, parents/children, hinge points, the
    revolute joints' axes (their rotations are built for all of them at once), masses and
    inertias."""
    if "vereshchagin_constants" not in model._cache:
        joints = _order(model)
        rev = [i for i, j in enumerate(joints) if j.kind == "revolute"]
        axes = np.array([joints[i].axis for i in rev]).reshape(-1, 3)
        K = skew(axes)
        model._cache["vereshchagin_constants"] = dict(
            joints=joints,
            parent=np.array([j.parent for j in joints], dtype=int),
            child=np.array([j.child for j in joints], dtype=int),
            parent_point=np.array([j.parent_point for j in joints]).reshape(-1, 3),
            child_point=np.array([j.child_point for j in joints]).reshape(-1, 3),
            rev=np.array(rev, dtype=int),
            other=[i for i, j in enumerate(joints) if j.kind != "revolute"],
            rev_q=np.array([joints[i].q_slice.start for i in rev], dtype=int),
            rev_v=np.array([joints[i].v_slice.start for i in rev], dtype=int),
            rev_axis=axes, rev_K=K, rev_K2=K @ K,
            rev_R0=np.array([joints[i].orientation for i in rev]).reshape(-1, 3, 3),
            rev_twisted=any(np.any(joints[i].orientation != _E3) for i in rev),
            masses=model.masses(), inertias=model.inertias(),
        )
    return model._cache["vereshchagin_constants"]


def _cross(a, b):
    """``a x b`` over the last axis (explicit components: ``np.cross`` is slow on small
    arrays)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a1 * b2 - a2 * b1
    out[..., 1] = a2 * b0 - a0 * b2
    out[..., 2] = a0 * b1 - a1 * b0
    return out


def _joint_motion(k, q, qd):
    """Every joint's relative motion in parent axes: ``R_a``, ``z_a``, ``p v``, ``k v``,
    ``w_a``, ``s_a`` (3.101)-(3.106), stacked over joints (leading axis); ``p(q)``, ``k(q)``
    of the joints that are not revolute (a revolute joint's ``p`` is its axis, ``k = 0``)."""
    m, B = len(k["joints"]), q.shape[0]
    R = np.empty((m, B, 3, 3))
    z, pv, kv, wb, sb = (np.zeros((m, B, 3)) for _ in range(5))
    if k["rev"].size:  # Rodrigues for all revolute joints at once, as spatial.axis_angle
        angle = q[:, k["rev_q"]].T[..., None, None]
        Rj = _E3 + np.sin(angle) * k["rev_K"][:, None] + (1.0 - np.cos(angle)) * k["rev_K2"][:, None]
        R[k["rev"]] = Rj @ k["rev_R0"][:, None] if k["rev_twisted"] else Rj
        pv[k["rev"]] = k["rev_axis"][:, None, :] * qd[:, k["rev_v"]].T[..., None]
    pk = {}
    for i in k["other"]:
        j = k["joints"][i]
        qa, va = q[:, j.q_slice], qd[:, j.v_slice]
        R[i], z[i] = j.rotation(qa), j.z(qa)
        pk[i] = j.p(qa), j.k(qa)
        pv[i] = (pk[i][0] @ va[..., None])[..., 0]
        kv[i] = (pk[i][1] @ va[..., None])[..., 0]
        wb[i], sb[i] = j.bias(qa, va)
    return R, z, pv, kv, wb, sb, pk


def _kinematics(model, k, q, qd, t):
    """Forward pass over the joints: orientations ``A`` and angular velocities ``omega``
    of all bodies, then the joint kinematics (3.174) of every joint at once:
    ``X_k = -rho~`` (the corner of ``C_k = [[E, X_k], [0, E]]``), ``S_k`` and ``w0_k``
    (body-major arrays)."""
    R, z, pv, kv, wb, sb, pk = _joint_motion(k, q, qd)
    n, B = model.n, q.shape[0]
    par, chi = k["parent"], k["child"]
    A = np.empty((n + 1, B, 3, 3))
    omega = np.empty((n + 1, B, 3))
    base = model.base_motion.state(t) if model.base_motion is not None else None
    A[0] = _E3 if base is None else base["orientation"]
    omega[0] = 0.0 if base is None else base["angular_velocity"]
    for i in range(len(par)):  # A_child = A_parent R_a
        A[chi[i]] = A[par[i]] @ R[i]
    Ap, Ac = A[par], A[chi]
    Omega = (Ap @ pv[..., None])[..., 0]  # relative angular velocities, inertial axes
    for i in range(len(par)):
        omega[chi[i]] = omega[par[i]] + Omega[i]
    lever_p = (Ap @ (k["parent_point"][:, None] + z)[..., None])[..., 0]  # parent C -> joint
    # z, k v, w_a and s_a vanish when every joint is revolute
    Akv, Awb, Asb = ((Ap @ x[..., None])[..., 0] if k["other"] else 0.0 for x in (kv, wb, sb))
    lever_c = -(Ac @ k["child_point"][:, None, :, None])[..., 0]  # joint -> child C
    X = skew(-(lever_p + lever_c))  # -rho~, rho: parent C -> child C
    wp, wc = omega[par], omega[chi]
    eps0 = Awb + _cross(wp, Omega)
    a0 = (_cross(wp, _cross(wp, lever_p)) + _cross(eps0, lever_c) + _cross(wc, _cross(wc, lever_c))
          + Asb)
    if k["other"]:
        a0 += 2.0 * _cross(wp, Akv)
    w0 = np.concatenate([a0, eps0], axis=-1)
    S = {}  # joint position -> S_k, (B, 6) for one degree of freedom, else (B, 6, nv)
    if k["rev"].size:
        P = (Ap[k["rev"]] @ k["rev_axis"][:, None, :, None])[..., 0]
        S_rev = np.concatenate([_cross(P, lever_c[k["rev"]]), P], axis=-1)
        S.update(zip(k["rev"].tolist(), S_rev))
    for i, (p, kk) in pk.items():
        P, K = Ap[i] @ p, Ap[i] @ kk
        Si = np.concatenate([K + np.cross(P, lever_c[i][..., None], axis=1), P], axis=1)
        S[i] = Si[..., 0] if Si.shape[-1] == 1 else Si
    return A, omega, X, S, w0


def _body_equations(model, k, A, omega, t):
    """Mass matrices ``M_k = diag(m_k E, J_k)`` and loads ``Q_k`` (gyroscopic moment
    included) of every body about its centre of mass, inertial axes (3.172)."""
    n, B = model.n, A.shape[1]
    F, Mo = model.applied_wrenches(t=t, orientations=np.swapaxes(A, 0, 1))
    J = A[1:] @ k["inertias"][:, None] @ np.swapaxes(A[1:], -1, -2)
    M = np.zeros((n + 1, B, 6, 6))
    M[1:, :, :3, :3] = k["masses"][:, None, None, None] * _E3
    M[1:, :, 3:, 3:] = J
    Q = np.zeros((n + 1, B, 6))
    Q[1:, :, :3] = np.swapaxes(F[:, 1:], 0, 1)
    Q[1:, :, 3:] = (np.swapaxes(Mo[:, 1:], 0, 1)
                    - _cross(omega[1:], (J @ omega[1:, ..., None])[..., 0]))
    return M, Q


def _singular(j):
    return SingularSystemError(
        f"joint {j.name!r}: S^T M* S is singular (no mass moves along this joint)")


def _articulate(k, X, S, w0, tau, M_star, Q_star):
    """Backward pass, leaves to root (3.178)-(3.179): fold each body's articulated
    ``M*_k``, ``Q*_k`` into its parent (in place); returns ``U_k^-1`` per joint."""
    Uinv = {}
    C = np.zeros((tau.shape[0], 6, 6))  # C_k, one joint at a time
    C[:, :3, :3] = C[:, 3:, 3:] = _E3
    for i in reversed(range(len(k["joints"]))):
        j, c, p = k["joints"][i], k["child"][i], k["parent"][i]
        Mk, Sk = M_star[c], S[i]
        r = Q_star[c] - np.matvec(Mk, w0[i])  # Q*_k - M*_k w0_k
        if j.nv == 1:  # U_k is a scalar
            MS = np.matvec(Mk, Sk)
            U = np.vecdot(Sk, MS)
            if not U.all():
                raise _singular(j)
            Uinv[i] = 1.0 / U
            gain = MS * Uinv[i][:, None]  # M* S U^-1
            u = tau[:, j.v_slice.start] + np.vecdot(Sk, r)
            Ma = Mk - gain[:, :, None] @ MS[:, None, :]
            Qa = r - gain * u[:, None]
        elif j.nv:
            ST = np.swapaxes(Sk, -1, -2)
            MS = Mk @ Sk
            try:
                Uinv[i] = np.linalg.inv(ST @ MS)
            except np.linalg.LinAlgError:
                raise _singular(j) from None
            gain = MS @ Uinv[i]
            u = tau[:, j.v_slice] + np.matvec(ST, r)
            Ma = Mk - gain @ np.swapaxes(MS, -1, -2)
            Qa = r - np.matvec(gain, u)
        else:  # a weld: the child is carried whole
            Ma, Qa = Mk, r
        C[:, :3, 3:] = X[i]
        CT = np.swapaxes(C, -1, -2)
        M_star[p] += CT @ Ma @ C
        Q_star[p] += np.matvec(CT, Qa)
    return Uinv


def _accelerate(model, k, X, S, w0, tau, M_star, Q_star, Uinv, t):
    """Forward pass, root to leaves (3.176), (3.174): joint and body accelerations."""
    B = tau.shape[0]
    w = np.zeros((model.n + 1, B, 6))
    if model.base_motion is not None:
        base = model.base_motion.state(t)
        w[0, :, :3], w[0, :, 3:] = base["acceleration"], base["angular_acceleration"]
    ddq = np.empty((B, model.nv))
    for i, j in enumerate(k["joints"]):
        c, p = k["child"][i], k["parent"][i]
        pred = w0[i] + w[p]  # C_k w_p + w0_k, C_k w_p = (a_p + X_k eps_p, eps_p)
        pred[:, :3] += np.matvec(X[i], w[p, :, 3:])
        if j.nv:
            Sk = S[i]
            resid = Q_star[c] - np.matvec(M_star[c], pred)
            if j.nv == 1:
                acc = (tau[:, j.v_slice.start] + np.vecdot(Sk, resid)) * Uinv[i]
                ddq[:, j.v_slice.start] = acc
                pred += Sk * acc[:, None]
            else:
                acc = np.matvec(Uinv[i], tau[:, j.v_slice]
                                + np.matvec(np.swapaxes(Sk, -1, -2), resid))
                ddq[:, j.v_slice] = acc
                pred += np.matvec(Sk, acc)
        w[c] = pred
    return ddq, w


def articulated(model, q, qd, tau=None, t=0.0):
    """Run the recursion; return ``(ddq, w, M_star, Q_star)`` for a batch.

    ``w`` (B, n + 1, 6) are the body accelerations ``(a_k, eps_k)`` (inertial axes, centre of
    mass; row 0 is the base), ``M_star``/``Q_star`` (B, n + 1, 6, 6)/(B, n + 1, 6) the
    articulated mass matrices and forces of (3.177).
    """
    k = _constants(model)
    q = np.atleast_2d(model.check_q(q))
    qd = np.atleast_2d(model.check_v(qd))
    tau = np.atleast_2d(model.check_tau(tau))
    B = max(q.shape[0], qd.shape[0], tau.shape[0])
    q, qd, tau = (np.broadcast_to(x, (B, x.shape[1])) for x in (q, qd, tau))
    A, omega, X, S, w0 = _kinematics(model, k, q, qd, t)
    M_star, Q_star = _body_equations(model, k, A, omega, t)
    Uinv = _articulate(k, X, S, w0, tau, M_star, Q_star)
    ddq, w = _accelerate(model, k, X, S, w0, tau, M_star, Q_star, Uinv, t)
    return ddq, np.swapaxes(w, 0, 1), np.swapaxes(M_star, 0, 1), np.swapaxes(Q_star, 0, 1)


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
