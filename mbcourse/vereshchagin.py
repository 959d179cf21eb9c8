"""Chapter 4: Vereshchagin's separate-bodies method, O(n) (Yudintsev 3.5, after
Vereshchagin 1974 and Dmitrochenko 2003).

Every body is kept separate, with its own Newton–Euler equations about its centre of mass
and the reaction ``R_k`` of its inboard joint (3.172)–(3.173)::

    M_k w_k = Q_k + R_k - sum_{children c} C_c^T R_c,       w_k = (a_k, eps_k)

and the kinematics of joint ``k`` (3.174): ``w_k = C_k w_{p(k)} + S_k qdd_k + w0_k`` with
``C_k = [[E, -rho~], [0, E]]`` (``rho`` from the parent's centre of mass to the child's).
An ideal joint's reaction does no work along the joint: ``S_k^T R_k = tau_k`` (3.175, with
the joint's own generalized force ``tau_k``). Eliminating the reactions from the leaves to
the root gives the **articulated** quantities (3.178)–(3.179)::

    U_k      = S_k^T M*_k S_k
    M*_p    += C_k^T (M*_k - M*_k S_k U_k^-1 S_k^T M*_k) C_k
    Q*_p    -= C_k^T [M*_k (S_k U_k^-1 (tau_k + S_k^T (Q*_k - M*_k w0_k)) ... )]

(the form the MATLAB program uses, not the sign-garbled print: the errata page, E17), and a
pass from the root to the leaves gives every acceleration (3.176)::

    qdd_k = U_k^-1 (tau_k + S_k^T (Q*_k - M*_k (C_k w_{p(k)} + w0_k)))

Each body is visited twice, so the cost grows linearly with the number of bodies; the
loops run over bodies and every step is vectorized over a **batch** of configurations
(any number of leading dimensions). Vectors are in inertial axes. The recursion walks from
the base along the arcs, so every joint's parent must be the body nearer the base (any
numbering; the arcs of a model built from the base outward point that way).

Forces: ``Q_k`` holds gravity, loads and spring-dampers
(:meth:`~mbcourse.Model.applied_wrenches`, fed with the orientations, angular velocities
and, when the model has springs, the positions and velocities the forward pass computes);
``tau_k`` adds the joint springs and control laws (:meth:`~mbcourse.Model.generalized_forces`)
to the given generalized forces.

The per-model constants (joint order, hinge points, the revolute joints' axes, masses and
inertias) are prepared once per model version by :func:`prepare`; a call does only the work
of its state.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .kernels import model_data, route
from . import sim as _sim
from .errors import SingularSystemError
from . import forces as model_forces
from .spatial import PIVOT_RTOL, cross, pivot_scale, skew
from .coupling import coupled

__all__ = ["RecursionData", "prepare", "forward_dynamics", "articulated", "simulate"]

_E3 = np.eye(3)


# ------------------------------------------------------------------ prepared data
@dataclass(frozen=True)
class RecursionData:
    """Prepared data of the separate-bodies recursion (see :func:`prepare`).

    Attributes
    ----------
    joints : tuple of Joint
        Base-to-leaves order (each joint after the joint of its parent body).
    parent, child : ndarray of int, shape (m,)
        ``i+(a)``, ``i-(a)`` of the joints in that order.
    parent_point, child_point : ndarray, shape (m, 3)
        Hinge vectors of the joints in that order.
    rev : ndarray of int
        Positions (in ``joints``) of the joints that turn about a fixed axis
        (``joint.revolute_axis`` is not ``None``): their rotations are built all at once.
    other : tuple of int
        Positions of the remaining joints (their kinematics come from the joint objects).
    rev_q, rev_v : ndarray of int
        Index of each such joint's angle in ``q`` and rate in ``qd``.
    rev_axis, rev_K, rev_K2, rev_R0 : ndarray
        Their axes, ``skew(axis)``, ``skew(axis)^2`` and fixed orientations.
    rev_twisted : bool
        Whether any of those orientations differs from the identity.
    masses, inertias : ndarray, shapes (n,) and (n, 3, 3)
    springs, dampers, state_loads, generalized : bool
        Whether the model has spring-dampers (with any damping), loads given as callables
        of ``(t, q, qd)``, joint springs or generalized-force callables: these decide which
        kinematic quantities the force evaluation receives.
    kernel : tuple or None
        The packed constants of the compiled recursion (:mod:`mbcourse.kernels`) when it
        applies: joints pointing away from the base (every kind; a prescribed motion of
        the base is packed at each call). ``None`` otherwise (the NumPy recursion runs).
    """

    joints: tuple
    parent: np.ndarray
    child: np.ndarray
    parent_point: np.ndarray
    child_point: np.ndarray
    rev: np.ndarray
    other: tuple
    rev_q: np.ndarray
    rev_v: np.ndarray
    rev_axis: np.ndarray
    rev_K: np.ndarray
    rev_K2: np.ndarray
    rev_R0: np.ndarray
    rev_twisted: bool
    masses: np.ndarray
    inertias: np.ndarray
    springs: bool
    dampers: bool
    state_loads: bool
    generalized: bool
    kernel: tuple | None = None


def prepare(model):
    """The per-model constants of the recursion, built once per model version.

    Any change of the model (a mass, a hinge point, an axis, a new spring ...) bumps
    ``model.version`` and the next call rebuilds them (:meth:`mbcourse.Model.prepared`).

    Returns
    -------
    RecursionData

    Raises
    ------
    TopologyError
        For closed loops (naming the joints that close them) and for joints whose child is
        nearer the base than their parent.

    Examples
    --------
    >>> import mbcourse as mb
    >>> data = prepare(mb.models.triple_pendulum())
    >>> data.rev.tolist(), data.other, data.rev_axis.tolist()[0]
    ([0, 1, 2], (), [0.0, 0.0, 1.0])
    """
    def build():
        joints = tuple(model.outward_joints("Vereshchagin's recursion"))
        rev = [i for i, j in enumerate(joints) if j.revolute_axis is not None]
        axes = np.array([joints[i].revolute_axis for i in rev], dtype=float).reshape(-1, 3)
        K = skew(axes)
        R0 = np.array([joints[i].orientation for i in rev], dtype=float).reshape(-1, 3, 3)
        loads = model.loads
        masses, inertias = model.masses(), model.inertias()
        return RecursionData(
            joints=joints,
            parent=np.array([j.parent for j in joints], dtype=int),
            child=np.array([j.child for j in joints], dtype=int),
            parent_point=np.array([j.parent_point for j in joints], dtype=float).reshape(-1, 3),
            child_point=np.array([j.child_point for j in joints], dtype=float).reshape(-1, 3),
            rev=np.array(rev, dtype=int),
            other=tuple(i for i, j in enumerate(joints) if j.revolute_axis is None),
            rev_q=np.array([joints[i].q_slice.start for i in rev], dtype=int),
            rev_v=np.array([joints[i].v_slice.start for i in rev], dtype=int),
            rev_axis=axes, rev_K=K, rev_K2=K @ K, rev_R0=R0,
            rev_twisted=bool(np.any(R0 != _E3)),
            masses=masses, inertias=inertias,
            springs=bool(model.springs),
            dampers=any(s.damping > 0 for s in model.springs),
            state_loads=any(callable(ld.force) or callable(ld.torque) for ld in loads),
            generalized=bool(model.joint_springs or model.generalized_force_elements),
            kernel=model_data(model),
        )

    return model.prepared("vereshchagin", build)


# -------------------------------------------------------------------- kinematics


def _joint_motion(k, q, qd):
    """Every joint's relative motion in parent axes: ``R_a``, ``z_a``, ``p v``, ``k v``,
    ``w_a``, ``s_a`` (3.101)-(3.106), stacked over joints (leading axis); ``p(q)``, ``k(q)``
    of the joints that do not turn about a fixed axis (for those ``p`` is the axis and
    ``z = k = 0``)."""
    m, B = len(k.joints), q.shape[0]
    R = np.empty((m, B, 3, 3))
    z, pv, kv, wb, sb = (np.zeros((m, B, 3)) for _ in range(5))
    if k.rev.size:  # Rodrigues for all of them at once, as spatial.axis_angle
        angle = q[:, k.rev_q].T[..., None, None]
        Rj = _E3 + np.sin(angle) * k.rev_K[:, None] + (1.0 - np.cos(angle)) * k.rev_K2[:, None]
        R[k.rev] = Rj @ k.rev_R0[:, None] if k.rev_twisted else Rj
        pv[k.rev] = k.rev_axis[:, None, :] * qd[:, k.rev_v].T[..., None]
    pk = {}
    for i in k.other:
        j = k.joints[i]
        qa, va = q[:, j.q_slice], qd[:, j.v_slice]
        R[i], z[i] = j.rotation(qa), j.z(qa)
        pk[i] = j.p(qa), j.k(qa)
        pv[i] = (pk[i][0] @ va[..., None])[..., 0]
        kv[i] = (pk[i][1] @ va[..., None])[..., 0]
        wb[i], sb[i] = j.bias(qa, va)
    return R, z, pv, kv, wb, sb, pk


@dataclass
class _Kinematics:
    """Per-call kinematic arrays, body- or joint-major (leading axis), inertial axes."""

    A: np.ndarray  # (n + 1, B, 3, 3) orientations
    omega: np.ndarray  # (n + 1, B, 3) angular velocities
    X: np.ndarray  # (m, B, 3, 3) -rho~, the corner of C_k
    S: dict  # joint position -> S_k, (B, 6) for one degree of freedom, else (B, 6, nv)
    w0: np.ndarray  # (m, B, 6)
    lever_p: np.ndarray  # (m, B, 3) parent's centre of mass -> child's joint point
    lever_c: np.ndarray  # (m, B, 3) joint point -> child's centre of mass
    Akv: object  # (m, B, 3) relative velocity of the joint point, or 0.0


def _kinematics(k, q, qd, base):
    """Forward pass over the joints: orientations ``A`` and angular velocities ``omega``
    of all bodies, then the joint kinematics (3.174) of every joint at once:
    ``X_k = -rho~`` (the corner of ``C_k = [[E, X_k], [0, E]]``), ``S_k`` and ``w0_k``."""
    R, z, pv, kv, wb, sb, pk = _joint_motion(k, q, qd)
    n, B = len(k.masses), q.shape[0]
    par, chi = k.parent, k.child
    A = np.empty((n + 1, B, 3, 3))
    omega = np.empty((n + 1, B, 3))
    A[0] = _E3 if base is None else base["orientation"]
    omega[0] = 0.0 if base is None else base["angular_velocity"]
    for i in range(len(par)):  # A_child = A_parent R_a
        A[chi[i]] = A[par[i]] @ R[i]
    Ap, Ac = A[par], A[chi]
    Omega = (Ap @ pv[..., None])[..., 0]  # relative angular velocities, inertial axes
    for i in range(len(par)):
        omega[chi[i]] = omega[par[i]] + Omega[i]
    lever_p = (Ap @ (k.parent_point[:, None] + z)[..., None])[..., 0]  # parent C -> joint
    # z, k v, w_a and s_a vanish when every joint turns about a fixed axis
    Akv, Awb, Asb = ((Ap @ x[..., None])[..., 0] if k.other else 0.0 for x in (kv, wb, sb))
    lever_c = -(Ac @ k.child_point[:, None, :, None])[..., 0]  # joint -> child C
    X = skew(-(lever_p + lever_c))  # -rho~, rho: parent C -> child C
    wp, wc = omega[par], omega[chi]
    eps0 = Awb + cross(wp, Omega)
    a0 = (cross(wp, cross(wp, lever_p)) + cross(eps0, lever_c) + cross(wc, cross(wc, lever_c))
          + Asb)
    if k.other:
        a0 += 2.0 * cross(wp, Akv)
    w0 = np.concatenate([a0, eps0], axis=-1)
    S = {}
    if k.rev.size:
        P = (Ap[k.rev] @ k.rev_axis[:, None, :, None])[..., 0]
        S_rev = np.concatenate([cross(P, lever_c[k.rev]), P], axis=-1)
        S.update(zip(k.rev.tolist(), S_rev))
    for i, (p, kk) in pk.items():
        P, K = Ap[i] @ p, Ap[i] @ kk
        Si = np.concatenate([K + np.cross(P, lever_c[i][..., None], axis=1), P], axis=1)
        S[i] = Si[..., 0] if Si.shape[-1] == 1 else Si
    return _Kinematics(A, omega, X, S, w0, lever_p, lever_c, Akv)


def _positions_velocities(k, kin, base, velocities):
    """Centres of mass ``r`` and their velocities (``None`` unless asked), body-major,
    inertial axes: ``r_c = r_p + lever_p + lever_c`` and its derivative
    ``v_c = v_p + omega_p x lever_p + A_p k v + omega_c x lever_c`` (3.101)."""
    r = np.empty(kin.omega.shape)
    r[0] = 0.0 if base is None else base["position"]
    for i, (p, c) in enumerate(zip(k.parent, k.child)):
        r[c] = r[p] + kin.lever_p[i] + kin.lever_c[i]
    if not velocities:
        return r, None
    rel = (cross(kin.omega[k.parent], kin.lever_p) + kin.Akv
           + cross(kin.omega[k.child], kin.lever_c))
    vel = np.empty(kin.omega.shape)
    vel[0] = 0.0 if base is None else base["velocity"]
    for i, (p, c) in enumerate(zip(k.parent, k.child)):
        vel[c] = vel[p] + rel[i]
    return r, vel


def _applied(model, k, kin, state, base):
    """Gravity, loads and spring-dampers: ``F``, ``M`` (n + 1, B, 3) about the centres of
    mass, inertial axes. Only models with springs pay for positions (and velocities with
    dampers); only state-dependent loads receive ``q`` and ``qd``."""
    swap = lambda x: np.swapaxes(x, 0, 1)  # noqa: E731  body-major <-> batch-major
    if k.springs:
        r, vel = _positions_velocities(k, kin, base, k.dampers)
        F, M = model_forces.applied_wrenches(
            model, state.q, qd=state.qd, t=state.t, poses=(swap(r), swap(kin.A)),
            velocities=(swap(vel), swap(kin.omega)) if k.dampers else None)
    elif k.state_loads:
        F, M = model_forces.applied_wrenches(model, state.q, qd=state.qd, t=state.t,
                                             orientations=swap(kin.A))
    else:
        F, M = model_forces.applied_wrenches(model, t=state.t, orientations=swap(kin.A))
    return swap(F), swap(M)


def _body_equations(model, k, kin, state, base):
    """Mass matrices ``M_k = diag(m_k E, J_k)`` and loads ``Q_k`` (gyroscopic moment
    included) of every body about its centre of mass, inertial axes (3.172)."""
    A, omega = kin.A, kin.omega
    n, B = A.shape[0] - 1, A.shape[1]
    F, Mo = _applied(model, k, kin, state, base)
    J = A[1:] @ k.inertias[:, None] @ A[1:].mT
    M = np.zeros((n + 1, B, 6, 6))
    M[1:, :, :3, :3] = k.masses[:, None, None, None] * _E3
    M[1:, :, 3:, 3:] = J
    Q = np.zeros((n + 1, B, 6))
    Q[1:, :, :3] = F[1:]
    Q[1:, :, 3:] = Mo[1:] - cross(omega[1:], (J @ omega[1:, ..., None])[..., 0])
    return M, Q


# --------------------------------------------------------------------- the passes
def _singular(j):
    return SingularSystemError(
        f"joint {j.name!r}: S^T M* S is singular (no mass moves along this joint, or the "
        "joints outboard of it already move along its direction)")


def _articulate(k, kin, tau, M_star, Q_star):
    """Backward pass, leaves to root (3.178)-(3.179): fold each body's articulated
    ``M*_k``, ``Q*_k`` into its parent (in place); returns ``U_k^-1`` per joint (a row of
    one array for the joints with one degree of freedom, a dict entry for the others)."""
    X, S, w0 = kin.X, kin.S, kin.w0
    B = tau.shape[0]
    U_scalar = np.ones((len(k.joints), B))  # U_k of the one-degree-of-freedom joints
    Uinv = {}
    C = np.zeros((B, 6, 6))  # C_k, one joint at a time
    C[:, :3, :3] = C[:, 3:, 3:] = _E3
    CT = C.mT
    for i in reversed(range(len(k.joints))):
        j, c, p = k.joints[i], k.child[i], k.parent[i]
        Mk = M_star[c]
        r = Q_star[c] - np.matvec(Mk, w0[i])  # Q*_k - M*_k w0_k
        if j.nv == 1:  # U_k is a scalar
            Sk = S[i]
            MS = np.matvec(Mk, Sk)
            U = np.vecdot(Sk, MS)
            U_scalar[i] = np.where(U > PIVOT_RTOL * pivot_scale(Mk, Sk), U, 0.0)
            gain = MS / U[:, None]  # M* S U^-1
            u = tau[:, j.v_slice.start] + np.vecdot(Sk, r)
            Ma = Mk - gain[:, :, None] * MS[:, None, :]
            Qa = r - gain * u[:, None]
        elif j.nv:
            Sk = S[i]
            ST = Sk.mT
            MS = Mk @ Sk
            try:
                Uinv[i] = np.linalg.inv(ST @ MS)
            except np.linalg.LinAlgError:
                raise _singular(j) from None
            gain = MS @ Uinv[i]
            u = tau[:, j.v_slice] + np.matvec(ST, r)
            Ma = Mk - gain @ MS.mT
            Qa = r - np.matvec(gain, u)
        else:  # a weld: the child is carried whole
            Ma, Qa = Mk, r
        C[:, :3, 3:] = X[i]
        M_star[p] += CT @ Ma @ C
        Q_star[p] += np.matvec(CT, Qa)
    if not U_scalar.all():  # one check for all the scalar U_k
        # the joint met first on the way in (a zero U makes every U inboard of it NaN)
        raise _singular(k.joints[int(np.argwhere(U_scalar == 0)[-1, 0])])
    return 1.0 / U_scalar, Uinv


def _accelerate(k, kin, tau, M_star, Q_star, Uinv, base):
    """Forward pass, root to leaves (3.176), (3.174): joint and body accelerations."""
    B, nv = tau.shape
    X, S, w0 = kin.X, kin.S, kin.w0
    Uinv_scalar, Uinv = Uinv
    w = np.zeros((len(k.masses) + 1, B, 6))
    if base is not None:
        w[0, :, :3], w[0, :, 3:] = base["acceleration"], base["angular_acceleration"]
    qdd = np.empty((B, nv))
    for i, j in enumerate(k.joints):
        c, p = k.child[i], k.parent[i]
        wp = w[p]
        pred = w0[i] + wp  # C_k w_p + w0_k, C_k w_p = (a_p + X_k eps_p, eps_p)
        pred[:, :3] += np.matvec(X[i], wp[:, 3:])
        if j.nv == 1:
            Sk = S[i]
            a = j.v_slice.start
            resid = Q_star[c] - np.matvec(M_star[c], pred)
            acc = qdd[:, a] = (tau[:, a] + np.vecdot(Sk, resid)) * Uinv_scalar[i]
            pred += Sk * acc[:, None]
        elif j.nv:
            Sk = S[i]
            resid = Q_star[c] - np.matvec(M_star[c], pred)
            acc = qdd[:, j.v_slice] = np.matvec(Uinv[i], tau[:, j.v_slice]
                                                + np.matvec(Sk.mT, resid))
            pred += np.matvec(Sk, acc)
        w[c] = pred
    return qdd, w


def _recursion(model, state):
    """Both passes for a checked state; body-major ``w``, ``M*``, ``Q*``."""
    k = prepare(model)
    base = model.base_motion.state(state.t) if model.base_motion is not None else None
    tau = state.tau
    if k.generalized:
        tau = tau + model_forces.generalized_forces(model, state.q, state.qd, state.t)
    with np.errstate(over="ignore", invalid="ignore"):
        kin = _kinematics(k, state.q, state.qd, base)
        M_star, Q_star = _body_equations(model, k, kin, state, base)
        Uinv = _articulate(k, kin, tau, M_star, Q_star)
        qdd, w = _accelerate(k, kin, tau, M_star, Q_star, Uinv, base)
    return qdd, w, M_star, Q_star


# --------------------------------------------------------------------- public API
def articulated(model, q, qd, tau=None, *, t=0.0):
    """Run the recursion; return ``(qdd, w, M_star, Q_star)``.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd : array_like, shape (..., nv)
    tau : array_like, shape (..., nv), optional
        Generalized forces in the order of ``qd`` (added to the model's joint springs and
        control laws).
    t : float
        Time (loads, base motion).

    Returns
    -------
    qdd : ndarray, shape (..., nv)
    w : ndarray, shape (..., n + 1, 6)
        Body accelerations ``(a_k, eps_k)`` (inertial axes, centre of mass; row 0 is the
        base).
    M_star, Q_star : ndarray, shapes (..., n + 1, 6, 6) and (..., n + 1, 6)
        The articulated mass matrices and forces of (3.177)–(3.179); the reaction of body
        ``k``'s inboard joint is ``R_k = M*_k w_k - Q*_k``.

    Examples
    --------
    One rod (mass 1, central inertia ``E``) hinged 1 from its centre, released horizontal
    under unit gravity: ``qdd = -m g l / (J + m l^2) = -0.5``, and the hinge reaction
    ``R = M* w - Q*`` of (3.177) does no work along the joint: with ``S = (0, 1, 0, 0, 0,
    1)``, ``S^T R = 0.5 - 0.5 = 0`` (3.175).

    >>> import numpy as np, mbcourse as mb
    >>> m = mb.Model(gravity=(0, -1, 0))
    >>> _ = m.add_body("rod", 1.0, np.eye(3))
    >>> _ = m.add_joint("j", "revolute", "ground", "rod", child_point=(-1, 0, 0),
    ...                 axis=(0, 0, 1))
    >>> qdd, w, M_star, Q_star = articulated(m, [0.0], [0.0])
    >>> qdd.round(12).tolist(), w.shape, M_star.shape
    ([-0.5], (2, 6), (2, 6, 6))
    >>> (M_star[1] @ w[1] - Q_star[1]).round(12).tolist()    # the hinge reaction
    [0.0, 0.5, 0.0, 0.0, 0.0, -0.5]
    """
    state = model.check_state(q, qd, tau, t=t)
    qdd, w, M_star, Q_star = _recursion(model, state)
    what = "mb.vereshchagin.articulated"
    return (state.result(qdd, what), state.result(np.swapaxes(w, 0, 1), what),
            state.result(np.swapaxes(M_star, 0, 1), what),
            state.result(np.swapaxes(Q_star, 0, 1), what))


@coupled("forward")
def forward_dynamics(model, q, qd, tau=None, *, t=0.0, compiled=None):
    """Generalized accelerations by the separate-bodies recursion (the **contract** function).

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    qd : array_like, shape (..., nv)
    tau : array_like, shape (..., nv), optional
        Generalized forces in the order of ``qd`` (added to the model's joint springs and
        control laws).
    t : float
        Time (loads, base motion).
    compiled : bool, optional
        ``None`` (default): the compiled recursion (:mod:`mbcourse.kernels`) when it
        applies (:func:`mbcourse.kernels.model_data`: every joint kind, floating bases
        included, every force element and a prescribed motion of the base),
        the NumPy recursion otherwise. ``False``: always
        the NumPy recursion. ``True``: refuse (``ModelError``) a model the kernel cannot run.

    Returns
    -------
    ndarray, shape (..., nv)

    Raises
    ------
    ShapeError, InconsistentStateError
        Bad inputs (see :meth:`mbcourse.Model.check_state`).
    TopologyError
        Closed loops or joints pointing toward the base (see :func:`prepare`).
    SingularSystemError
        A joint along which no mass moves, or a result that is not finite.

    Examples
    --------
    The triple pendulum of the MATLAB program (Yudintsev 3.5) at rest with the rods
    horizontal: the absolute angular accelerations are ``(-0.5, 0, 0)``, so the relative
    (joint) ones are:

    >>> import mbcourse as mb
    >>> forward_dynamics(mb.models.triple_pendulum(), [0, 0, 0], [0, 0, 0]).round(12) + 0.0
    array([-0.5,  0.5,  0. ])
    """
    k = prepare(model)
    out, state = route(model, "vereshchagin", q, qd, tau, t,
                       what="mb.vereshchagin.forward_dynamics",
                       check=lambda: model.check_state(q, qd, tau, t=t), compiled=compiled,
                       data=k.kernel, applies=k.kernel is not None,
                       generalized=lambda s: model_forces.callable_forces(model, s.q, s.qd, s.t))
    if out is not None:
        return out
    if state is None:
        state = model.check_state(q, qd, tau, t=t)
    qdd, _, _, _ = _recursion(model, state)
    return state.result(qdd, "mb.vereshchagin.forward_dynamics")


#: ``simulate(model, t_span, q0, qd0=None, tau=None, *, method, rtol, atol, t_eval,
#: **options)``: :func:`mbcourse.sim.simulate` with :func:`forward_dynamics` (the signature
#: of every formulation's ``simulate``), returning a :class:`mbcourse.sim.Trajectory`.
simulate = _sim.simulator(forward_dynamics, "mb.vereshchagin.simulate")
