"""General joints: d'Alembert's principle and ``A qdd = B`` (Yudintsev 3.4, after Wittenburg).

The equations of motion of a tree in the fewest coordinates are built from the graph
matrices of chapter 1 and the joint quantities of the Model (``G_a``, ``z_a``, ``p_a``,
``k_a``). With all vectors in inertial axes:

* relative angular velocity of joint ``a``: ``Omega_a = p_a v_a`` (3.104); absolute angular
  velocities ``omega = -T^T Omega + omega_0 1_n`` (3.114) and accelerations
  ``domega = -T^T (p^T qdd + f) + domega_0 1_n`` (3.120), ``f_a = w_a + omega_{i-(a)} x Omega_a``
  (3.82);
* actual hinge vectors ``c*_{ia} = c_{ia} + S+_{ia} z_a`` (3.150)–(3.151) and
  ``d*_{kj} = sum_a T_{aj} S_{ka} c*_{ka}`` (3.152), so ``r_j = r_0 - sum_k d*_{kj}`` (3.153);
* the Jacobian of the centres of mass (3.163)::

      Phi_{(a l), j} = p_{al} x sum_k T_{ak} d*_{kj} - k_{al} T_{aj},    dr = Phi^T dq

  and of the rotations ``dpi = -T^T p^T dq`` (3.122);
* d'Alembert's principle (3.95)–(3.97) then gives ``A qdd = B`` (3.167)::

      A = Phi m Phi^T + (pT) J (pT)^T
      B = Phi (F - m U) + (pT)-terms of moments, gyroscopic and bias accelerations + Q + tau

  where ``U`` are the centre-of-mass accelerations at ``qdd = 0``.

The applied forces ``F``, moments and ``Q`` are the model's: gravity, loads (constants or
functions ``f(t, q, qd)``), spring-dampers between body points
(:meth:`~mbcourse.Model.applied_wrenches`) and the generalized forces of joint springs and
control laws (:meth:`~mbcourse.Model.generalized_forces`), so :func:`inverse_dynamics`
returns the forces the actuators must add.

The graph matrices and index maps are the prepared data of this module (:func:`prepare`),
built once per model version; a call does only the work of its state. The contract
functions :func:`mass_matrix`, :func:`forward_dynamics` and :func:`inverse_dynamics` take
the same Model as every other chapter and accept any number of leading batch dimensions.
Closed loops are refused with a :class:`~mbcourse.errors.TopologyError` that points to the
Cartesian formulation. This module never calls the other formulations; its tests compare
them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from ..kernels import route
from ..errors import ShapeError, SingularSystemError
from .. import forces as model_forces
from .. import poses as model_poses
from ..state import State
from ..spatial import cross, definite_cholesky, mv, transpose
from ..coupling import coupled

__all__ = ["TreeStructure", "prepare", "TreeTerms", "terms", "mass_matrix", "bias_forces",
           "forward_dynamics", "forward_dynamics_composite", "inverse_dynamics", "driven",
           "jacobians", "equations_from_terms", "terms_unchecked", "mass_matrix_unchecked"]


# ------------------------------------------------------------------ prepared data
@dataclass(frozen=True)
class TreeStructure:
    """Prepared data of the tree formulation: graph matrices and index maps (chapter 1).

    Attributes
    ----------
    S : ndarray of int, shape (n + 1, m)
        Incidence matrix, row 0 for body 0 (1.2)–(1.3).
    T : ndarray of int, shape (m, n)
        Path matrix, ``T S[1:] = E`` (1.4).
    S_plus : ndarray of int, shape (n + 1, m)
        ``max(S, 0)``: 1 on the parent side ``i+(a)`` of each joint (3.151).
    dof_joint : ndarray of int, shape (nv,)
        The joint (position ``a - 1``) of every generalized speed.
    parent, child : ndarray of int, shape (m,)
        ``i+(a)`` and ``i-(a)``.
    """

    S: np.ndarray
    T: np.ndarray
    S_plus: np.ndarray
    dof_joint: np.ndarray
    parent: np.ndarray
    child: np.ndarray


def _readonly(arr):
    out = np.array(arr)
    out.flags.writeable = False
    return out


def prepare(model):
    """The per-model constants of the tree formulation, built once per model version.

    Every change of the model (a mass, a joint point, a new body...) bumps
    ``model.version`` and the next call rebuilds them (:meth:`mbcourse.Model.prepared`).

    Returns
    -------
    TreeStructure

    Raises
    ------
    TopologyError
        If joints close loops (naming them).

    Examples
    --------
    >>> import mbcourse as mb
    >>> data = prepare(mb.models.double_pendulum())
    >>> data.T.tolist(), data.dof_joint.tolist()
    ([[-1, -1], [0, -1]], [0, 1])
    >>> prepare(mb.models.double_pendulum()) is data      # another model: its own data
    False
    """
    def build():
        g = model.require_tree("the tree formulation")
        index = lambda values: _readonly(np.array(values, dtype=int))  # noqa: E731
        return TreeStructure(S=_readonly(g.S), T=_readonly(g.T),
                             S_plus=_readonly(np.maximum(g.S, 0)),
                             dof_joint=index([j.index for j in model.joints for _ in range(j.nv)]),
                             parent=index([j.parent for j in model.joints]),
                             child=index([j.child for j in model.joints]))

    return model.prepared("tree.general", build)


# -------------------------------------------------------------------- kinematics
@dataclass
class TreeTerms:
    """Per-call work arrays of the tree formulation (cf. Pinocchio's Data), inertial axes.

    Every array has the leading batch shape of the state (none for a single state).

    Attributes
    ----------
    r : (..., n+1, 3) centres of mass (row 0: the base origin)
    A : (..., n+1, 3, 3) body orientations
    vel : (..., n+1, 3) centre-of-mass velocities
    omega : (..., n+1, 3) angular velocities (3.114)
    P, K : (..., N, 3) axis vectors ``p_{al}``, ``k_{al}`` of every degree of freedom
    Cstar : (..., n+1, m, 3) actual hinge vectors ``c*_{ka}`` (zero where ``S_{ka} = 0``)
    dstar : (..., n+1, n, 3) the vectors ``d*_{kj}`` (3.152)
    Jv, Jw : (..., n, N, 3) Jacobians of centre-of-mass velocity (``Phi^T``) and angular
        velocity (``-(pT)^T``)
    acc_bias, alpha_bias : (..., n, 3) accelerations at ``qdd = 0`` (``U`` and (3.120))
    """

    r: np.ndarray
    A: np.ndarray
    vel: np.ndarray
    omega: np.ndarray
    P: np.ndarray
    K: np.ndarray
    Cstar: np.ndarray
    dstar: np.ndarray
    Jv: np.ndarray
    Jw: np.ndarray
    acc_bias: np.ndarray
    alpha_bias: np.ndarray


def _terms(model, data, q, qd, t):
    """The kernel of :func:`terms` on checked arrays ``q`` (B, nq), ``qd`` (B, nv)."""
    S, T = data.S, data.T
    B = q.shape[0]
    n, m, N = model.n, model.m, model.nv
    r, A = model_poses.body_poses(model, q, t)
    base = model.base_motion.state(t) if model.base_motion else None
    zero = np.zeros(3)
    omega0, domega0 = (zero, zero) if base is None else (base["angular_velocity"],
                                                         base["angular_acceleration"])
    vel0, acc0 = (zero, zero) if base is None else (base["velocity"], base["acceleration"])

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
            Pa, Ka = Ai @ j.p(qa), Ai @ j.k(qa)  # (B, 3, nv_a)
            P[:, j.v_slice], K[:, j.v_slice] = transpose(Pa), transpose(Ka)
            Omega[:, a], Kv[:, a] = mv(Pa, va), mv(Ka, va)  # (3.104), (3.101)
            wb, sb = j.bias(qa, va)
            w_bias[:, a], s_bias[:, a] = mv(Ai, wb), mv(Ai, sb)
        Cstar[:, i, a] = mv(Ai, j.parent_point + j.z(qa))  # (3.150): c + z on the parent
        Cstar[:, c, a] = A[:, c] @ j.child_point
    # absolute angular velocities (3.114): omega = omega_0 1 - T^T Omega
    omega = np.empty((B, n + 1, 3))
    omega[:, 0] = omega0
    omega[:, 1:] = omega0 - T.T @ Omega
    # f_a = w_a + omega_{i-(a)} x Omega_a (3.82); bias of (3.120)
    f = w_bias + cross(omega[:, data.child], Omega)
    alpha = np.empty((B, n + 1, 3))
    alpha[:, 0] = domega0
    alpha[:, 1:] = domega0 - T.T @ f
    # d*_{kj} = sum_a T_aj S_ka c*_ka (3.152)
    W = S[None, :, :, None] * Cstar  # (B, n+1, m, 3)
    dstar = T.T @ W  # (B, n+1, n, 3)
    # centre-of-mass accelerations at qdd = 0: second derivative of r_j = r_0 - sum_k d*_kj
    ddC = (cross(alpha[:, :, None], Cstar)
           + cross(omega[:, :, None], cross(omega[:, :, None], Cstar)))
    ddC[:, data.parent, np.arange(m)] += 2.0 * cross(omega[:, data.parent], Kv) + s_bias
    acc_bias = acc0 - T.T @ np.sum(S[None, :, :, None] * ddC, axis=1)
    # Jacobians: Phi_{(al), j} = p_al x sum_k T_ak d*_kj - k_al T_aj (3.163)
    TD = (T @ dstar[:, 1:].reshape(B, n, 3 * n)).reshape(B, m, n, 3)  # sum_k T_ak d*_kj
    Tdof = T[data.dof_joint]  # (N, n)
    Jv = cross(P[:, :, None], TD[:, data.dof_joint]) - Tdof[None, :, :, None] * K[:, :, None]
    Jw = -Tdof[None, :, :, None] * P[:, :, None]
    Jv, Jw = np.swapaxes(Jv, 1, 2), np.swapaxes(Jw, 1, 2)  # (B, n, N, 3)
    # velocities of the centres of mass: dr_j = v_0 + omega_0 x (r_j - r_0) + Phi^T qd
    vel = np.empty((B, n + 1, 3))
    vel[:, 0] = vel0
    vel[:, 1:] = (vel0 + cross(omega0, r[:, 1:] - r[:, :1])
                  + mv(transpose(Jv), qd[:, None, :]))
    return TreeTerms(r, A, vel, omega, P, K, Cstar, dstar, Jv, Jw, acc_bias, alpha[:, 1:])


def terms(model, q, qd=None, *, t=0.0):
    """Kinematic terms of the tree equations at a state (or a batch of states).

    Parameters
    ----------
    q : array_like, shape (..., nq)
    qd : array_like, shape (..., nv), optional
        Zero speeds if omitted.
    t : float
        Time (only matters with a prescribed base motion).

    Returns
    -------
    TreeTerms
        Arrays with the leading batch shape of ``q`` and ``qd``.

    Examples
    --------
    ``r_j = r_0 - sum_k d*_kj`` (3.153) for a double pendulum:

    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> tt = terms(m, [0.3, 0.2], [1.0, -0.5])
    >>> bool(np.allclose(tt.r[1:] - tt.r[0], -tt.dstar.sum(axis=0)))
    True
    >>> tt.Jv.shape                                   # (n, N, 3): rows of Phi^T body by body
    (2, 2, 3)
    """
    state = model.check_state(q, np.zeros(model.nv) if qd is None else qd, t=t)
    return _terms_result(model, state)


def terms_unchecked(model, q, qd, t=0.0):
    """:func:`terms` at arrays already checked (``q`` (B, nq), ``qd`` (B, nv), a float
    ``t``), without checking them again: for a formulation that builds on chapter 3 after
    its own input check (the reduced system of :mod:`mbcourse.loops`)."""
    return _terms_result(model, State(q, qd, None, None, (q.shape[0],), t, model))


def _terms_result(model, state):
    with np.errstate(over="ignore", invalid="ignore"):
        tt = _terms(model, prepare(model), state.q, state.qd, state.t)
    return TreeTerms(*(state.result(getattr(tt, f.name), "mb.tree.terms") for f in fields(tt)))


def jacobians(model, q, *, t=0.0):
    """Jacobians ``(Jv, Jw)`` of centre-of-mass and angular velocities, (..., n, 3, nv).

    ``Jv[..., j - 1, :, :]`` is ``Phi^T`` restricted to body ``j`` (3.163), ``Jw`` is
    ``-(pT)^T`` (3.122).

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> Jv, Jw = jacobians(m, [0.0, 0.0])
    >>> Jw[1].round(12).tolist()          # the lower rod turns with both joint rates
    [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]
    """
    tt = terms(model, q, t=t)
    return transpose(tt.Jv), transpose(tt.Jw)


# ------------------------------------------------------------------ the equations
def equations_from_terms(model, tt, F=None, M=None):
    """``A`` and ``B`` of (3.167) from the kinematic terms and the applied wrenches.

    d'Alembert's principle (3.95)–(3.97) with ``dr = Phi^T dq`` and ``dpi = -(pT)^T dq``:
    ``A = sum_j m_j Jv_j^T Jv_j + Jw_j^T I_j Jw_j`` and
    ``B = sum_j Jv_j^T (F_j - m_j U_j) + Jw_j^T (M_j - I_j eps_j - omega_j x I_j omega_j)``.
    The generalized forces of joint springs and control laws are *not* included (add
    :meth:`~mbcourse.Model.generalized_forces`); a formulation that evaluates the forces on
    another model (the cut-joint method evaluates them on the closed model) passes its own
    ``F, M``.

    Parameters
    ----------
    model : Model
        The tree whose masses and inertias ``tt`` belongs to.
    tt : TreeTerms
        With a leading batch dimension (from :func:`terms` on a batch of states).
    F, M : ndarray, shape (B, n + 1, 3), optional
        Applied forces and moments about the centres of mass, inertial axes; ``None`` for
        ``B`` without applied forces (inertial terms only).

    Returns
    -------
    A : ndarray, shape (B, nv, nv)
    B : ndarray, shape (B, nv)

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> tt = mb.tree.terms(m, [[0.3, 0.2]], [[1.0, -0.5]])
    >>> F, M = m.applied_wrenches([[0.3, 0.2]], qd=[[1.0, -0.5]])
    >>> A, B = equations_from_terms(m, tt, F, M)
    >>> qdd = np.linalg.solve(A, B[..., None])[..., 0]
    >>> bool(np.allclose(qdd, mb.tree.forward_dynamics(m, [[0.3, 0.2]], [[1.0, -0.5]])))
    True
    """
    m = model.masses()
    Ab = tt.A[:, 1:]
    I = Ab @ model.inertias() @ transpose(Ab)  # central inertias, inertial axes
    Jv, Jw = transpose(tt.Jv), transpose(tt.Jw)  # (B, n, 3, N)
    JvT, JwT = tt.Jv, tt.Jw
    Amat = np.sum(m[:, None, None] * (JvT @ Jv) + JwT @ I @ Jw, axis=1)  # (3.167)
    w = tt.omega[:, 1:]
    lin = -m[:, None] * tt.acc_bias
    ang = -mv(I, tt.alpha_bias) - cross(w, mv(I, w))
    if F is not None:
        lin = lin + F[:, 1:]
        ang = ang + M[:, 1:]
    Bvec = np.sum(mv(JvT, lin) + mv(JwT, ang), axis=1)
    return Amat, Bvec


def _assemble(model, q, qd, t, need_bias=True):
    """``A`` and ``B`` of (3.167) on checked arrays (B, nq), (B, nv); ``B`` holds every
    force except ``tau``."""
    data = prepare(model)
    tt = _terms(model, data, q, qd, t)
    if not need_bias:
        return equations_from_terms(model, tt)[0], None
    F, M = model_forces.applied_wrenches(model, q, qd, t, poses=(tt.r, tt.A),
                                         velocities=(tt.vel, tt.omega))
    Amat, Bvec = equations_from_terms(model, tt, F, M)
    return Amat, Bvec + model_forces.generalized_forces(model, q, qd, t)


def _solve_spd(Amat, rhs, what, names=None):
    """``Amat^-1 rhs`` by Cholesky; a mass matrix that is not positive definite is named
    with the speed that moves (almost) no mass: the largest entry of the eigenvector of
    its smallest eigenvalue."""
    try:
        L = definite_cholesky(Amat)
    except np.linalg.LinAlgError:
        culprit = ""
        flat = np.asarray(Amat).reshape(-1, *Amat.shape[-2:])
        if names is not None and np.all(np.isfinite(flat)):
            worst = int(np.argmin([np.linalg.eigvalsh(A)[0] for A in flat]))
            vector = np.linalg.eigh(flat[worst])[1][:, 0]
            culprit = f" ({names[int(np.argmax(np.abs(vector)))]} moves no mass)"
        raise SingularSystemError(
            f"{what}: the mass matrix is not positive definite{culprit}: a joint coordinate "
            "moves no mass (e.g. a joint between massless bodies) or the configuration is "
            "singular"
        ) from None
    return np.linalg.solve(transpose(L), np.linalg.solve(L, rhs[..., None]))[..., 0]


@coupled("matrix")
def mass_matrix(model, q, *, t=0.0):
    """The mass matrix ``A(q)`` of (3.167): ``Phi m Phi^T + (pT) J (pT)^T``.

    Parameters
    ----------
    q : array_like, shape (..., nq)
    t : float
        Time (only matters with a prescribed base motion).

    Returns
    -------
    ndarray, shape (..., nv, nv)
        Symmetric positive definite; ``qd^T A qd / 2`` is the kinetic energy.

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
    state = model.check_state(q, t=t)
    return state.result(mass_matrix_unchecked(model, state.q, state.t), "mb.tree.mass_matrix")


def mass_matrix_unchecked(model, q, t=0.0):
    """:func:`mass_matrix` at configurations already checked (``q`` (B, nq), a float
    ``t``), without checking them again: for a formulation that differentiates it after its
    own input check (:mod:`mbcourse.inertial`)."""
    Amat, _ = _assemble(model, q, np.zeros((q.shape[0], model.nv)), t, need_bias=False)
    return State(q, None, None, None, (q.shape[0],), t, model).result(Amat,
                                                                     "mb.tree.mass_matrix")


@coupled("force")
def bias_forces(model, q, qd, *, t=0.0):
    """``B`` of (3.167) without ``tau``: applied, spring, gyroscopic and velocity terms.

    ``A qdd = B + tau``; ``B`` includes the model's generalized forces (joint springs,
    control laws).

    Returns
    -------
    ndarray, shape (..., nv)

    Examples
    --------
    >>> import mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> bias_forces(m, [0.0, 0.0], [0.0, 0.0]).round(4)  # weights: moments about the joints
    array([-19.62 ,  -4.905])
    """
    state = model.check_state(q, qd, t=t)
    with np.errstate(over="ignore", invalid="ignore"):
        _, Bvec = _assemble(model, state.q, state.qd, state.t)
    return state.result(Bvec, "mb.tree.bias_forces")


@coupled("forward")
def forward_dynamics(model, q, qd, tau=None, *, t=0.0, compiled=None):
    """Generalized accelerations from ``A qdd = B + tau`` (3.167) (the **contract** function).

    Parameters
    ----------
    q : array_like, shape (..., nq)
    qd : array_like, shape (..., nv)
    tau : array_like, shape (..., nv), optional
        Generalized joint forces in the order of ``qd`` (added to the model's force
        elements).
    t : float
        Time (loads, base motion).
    compiled : bool, optional
        ``None`` (default): when the model allows (:func:`mbcourse.kernels.model_data`),
        the compiled kernel (:mod:`mbcourse.kernels.tree`) runs the same algorithm, the
        chapter's ``Phi m Phi^T`` (3.163)-(3.167) with its intermediate quantities, as loops
        that visit only the path matrix's nonzero entries, and solves by Cholesky; otherwise,
        and with ``False``, this module's NumPy assembly runs. ``True`` refuses
        (``ModelError``) a model the kernel cannot run. Composite bodies build the same
        ``A`` and ``B`` faster: :func:`forward_dynamics_composite`.

    Returns
    -------
    ndarray, shape (..., nv)

    Raises
    ------
    ShapeError, InconsistentStateError
        Bad inputs (see :meth:`mbcourse.Model.check_state`).
    SingularSystemError
        A singular mass matrix or a result that is not finite.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> bool(np.allclose(forward_dynamics(m, [0.3, 0.2], [1.0, -0.5]),
    ...                  mb.cartesian.forward_dynamics(m, [0.3, 0.2], [1.0, -0.5])))
    True
    """
    out, state = route(model, "tree", q, qd, tau, t, what="mb.tree.forward_dynamics",
                       check=lambda: model.check_state(q, qd, tau, t=t), compiled=compiled,
                       generalized=lambda s: model_forces.callable_forces(model, s.q, s.qd, s.t))
    if out is not None:
        return out
    if state is None:
        state = model.check_state(q, qd, tau, t=t)
    with np.errstate(over="ignore", invalid="ignore"):
        Amat, Bvec = _assemble(model, state.q, state.qd, state.t)
        out = _solve_spd(Amat, Bvec + state.tau, "mb.tree.forward_dynamics",
                         model.qd_names)
    return state.result(out, "mb.tree.forward_dynamics")


@coupled("forward")
def forward_dynamics_composite(model, q, qd, tau=None, *, t=0.0):
    """Generalized accelerations of ``A qdd = B + tau`` assembled by composite bodies.

    The composite-rigid-body algorithm (Featherstone's ``HandC``), compiled
    (:mod:`mbcourse.kernels.composite`): ``B`` by one outward and one inward pass with
    ``qdd = 0``, ``A_ij = S_i^T (C^T ... I_j S_j)`` from the composite inertias of the
    subtrees, in ``O(n d)`` (``d`` the depth of the tree), then Cholesky. The same ``A`` and
    ``B`` as chapter 3's ``Phi m Phi^T`` (3.163)-(3.167) that :func:`forward_dynamics`
    computes, by a different algorithm; it runs the models the kernels cover
    (:func:`mbcourse.kernels.model_data`: joints pointing away from the base, of every
    kind, a prescribed base motion included) and raises ``ModelError``
    otherwise (``SingularSystemError`` for a state it declines).

    Parameters and result as :func:`forward_dynamics`.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> bool(np.allclose(forward_dynamics_composite(m, [0.3, 0.2], [1.0, -0.5]),
    ...                  forward_dynamics(m, [0.3, 0.2], [1.0, -0.5], compiled=False)))
    True
    """
    what = "mb.tree.forward_dynamics_composite"
    out, state = route(model, "composite", q, qd, tau, t, what=what,
                       check=lambda: model.check_state(q, qd, tau, t=t), compiled=True,
                       generalized=lambda s: model_forces.callable_forces(model, s.q, s.qd, s.t))
    if out is None:
        raise SingularSystemError(f"{what}: the mass matrix is not positive definite or the "
                                  "accelerations are not finite")
    return out


@coupled("force")
def inverse_dynamics(model, q, qd, qdd, *, t=0.0):
    """Generalized actuator forces ``tau = A qdd - B`` that produce the accelerations ``qdd``.

    ``B`` holds every force element of the model, so ``forward_dynamics(model, q, qd,
    inverse_dynamics(model, q, qd, qdd)) == qdd``.

    Returns
    -------
    ndarray, shape (..., nv)

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> tau = inverse_dynamics(m, [0.3, 0.2], [1.0, -0.5], [0.0, 0.0])
    >>> bool(np.allclose(forward_dynamics(m, [0.3, 0.2], [1.0, -0.5], tau), 0.0))
    True
    """
    state = model.check_state(q, qd, qdd=qdd, t=t)
    with np.errstate(over="ignore", invalid="ignore"):
        Amat, Bvec = _assemble(model, state.q, state.qd, state.t)
        out = mv(Amat, state.qdd) - Bvec
    return state.result(out, "mb.tree.inverse_dynamics")


def driven(model, q, qd, prescribed, tau=None, *, t=0.0):
    """Driven (controlled) coordinates, Yudintsev (3.92)–(3.94).

    Some generalized accelerations are prescribed (a motor enforces ``q_k(t)``); the rest
    follow from the equations with rows and columns of the driven coordinates removed,
    ``A' qdd' = B' - eta qdd_k``, and the actuator gives the generalized force
    ``tau_k = (A qdd)_k - B_k`` that the drive applies to the child; the textbook's (3.93)
    ``M_k^m = B_k - (A qdd)_k`` is its reaction on the parent (``tau_k = -M_k^m``).

    Parameters
    ----------
    q : array_like, shape (..., nq)
    qd : array_like, shape (..., nv)
    prescribed : dict
        ``{index in qd: prescribed acceleration}`` (scalars or arrays of the batch shape).
    tau : array_like, shape (..., nv), optional
        Known generalized forces on the free coordinates.
    t : float

    Returns
    -------
    qdd : ndarray, shape (..., nv)
        All accelerations (the prescribed ones included).
    actuator : ndarray, shape (..., k)
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
    if any(isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < model.nv
           for k in idx):
        raise ShapeError(f"prescribed coordinates must be indices 0..{model.nv - 1}, got {idx}")
    free = [k for k in range(model.nv) if k not in prescribed]
    state = model.check_state(q, qd, tau, t=t)
    Bn = state.q.shape[0]
    qdd = np.zeros((Bn, model.nv))
    for k in idx:
        value = prescribed[k]
        if np.iscomplexobj(value) or not np.all(np.isfinite(np.asarray(value, dtype=float))):
            raise ShapeError(f"prescribed[{k}] ({model.qd_names[k]}) must be finite real "
                             f"numbers, got {value!r}")
        try:
            qdd[:, k] = np.broadcast_to(np.asarray(value, dtype=float), state.batch).reshape(Bn)
        except ValueError:
            raise ShapeError(f"prescribed[{k}] has shape {np.shape(value)}; it must be a number "
                             f"or broadcast to the batch shape {state.batch}") from None
    with np.errstate(over="ignore", invalid="ignore"):
        Amat, Bvec = _assemble(model, state.q, state.qd, state.t)
        Bvec = Bvec + state.tau
        if free:
            Af = Amat[:, free][:, :, free]
            rhs = Bvec[:, free] - mv(Amat[:, free][:, :, idx], qdd[:, idx])
            qdd[:, free] = _solve_spd(Af, rhs, "mb.tree.driven")
        actuator = mv(Amat[:, idx], qdd) - Bvec[:, idx]
    return state.result(qdd, "mb.tree.driven"), state.result(actuator, "mb.tree.driven")
