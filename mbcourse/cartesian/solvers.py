"""Three solvers of the KKT system (2.49) that must agree to round-off.

* :func:`solve_dense` — the whole matrix ``H = [[M, Q^T], [Q, 0]]`` with NumPy.
* :func:`solve_schur` — the range-space method (2.51)–(2.54): a Cholesky factor of
  ``Q M^-1 Q^T``, whose size is the number of constraints.
* :func:`solve_ldlt` — Baraff's block ``LDL^T`` (2.55)–(2.61): for a tree, the graph of
  ``H`` (one node per body, one per joint) is a tree too; eliminating children before
  parents creates **no fill-in**, so the cost is linear in the number of bodies
  (corrected factorization of erratum E12).

Each takes the :class:`~mbcourse.cartesian.system.Equations` of a batch and returns
``(ddX, lam)`` with ``ddX`` of shape (B, n, dof) and the multipliers ``lam`` (B, nc) with
the sign of (2.26). Redundant rows are reported by name (:func:`redundancy`), or treated
with minimum-norm multipliers when ``redundant="lstsq"``.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ..errors import InconsistentStateError, ModelError, SingularSystemError, TopologyError
from ..spatial import definite_cholesky

__all__ = ["solve_dense", "solve_schur", "solve_ldlt", "redundancy", "kkt_blocks", "fill_in",
           "block_pattern", "tree_order", "SOLVERS"]


def redundancy(model, eq, item=0, rtol=1e-10):
    """Rank of the constraint matrix and the joints owning its dependent rows.

    Returns
    -------
    rank : int
    dependent : list of (joint name, row number)
    """
    Q = eq.dense_Q()[item]
    if Q.shape[0] == 0:
        return 0, []
    _, R, perm = scipy.linalg.qr(Q.T, pivoting=True, mode="economic")
    d = np.abs(np.diag(R))
    rank = int(np.sum(d > rtol * max(d[0], 1e-300)))
    dependent = [(model.joints[eq.row_joint[r]].name, int(r)) for r in sorted(perm[rank:])]
    return rank, dependent


def _raise_redundant(model, eq):
    rank, dependent = redundancy(model, eq)
    if not dependent:
        raise SingularSystemError(
            "the KKT matrix is singular although the constraint rows are independent; check "
            "masses and inertias"
        )
    joints = sorted({name for name, _ in dependent})
    raise SingularSystemError(
        f"the constraint rows are redundant: rank {rank} of {eq.nc}; rows "
        f"{[r for _, r in dependent]} of joints {joints} repeat the others, so the "
        "multipliers are not unique. A planar loop built from spatial revolute joints is "
        "over-constrained this way: use planar=True, or release as many constraint directions "
        "as there are redundant rows (a four-bar in space: make one revolute joint universal "
        "and another spherical), or pass redundant='lstsq' for minimum-norm multipliers (the "
        "accelerations stay unique). At a singular configuration (a dead point) the rows "
        "lose rank only there"
    )


def _is_deficient(eq, Q=None, rtol=1e-10):
    if eq.nc == 0:
        return False
    Q = eq.dense_Q() if Q is None else Q
    s = np.linalg.svd(Q, compute_uv=False)
    return bool(np.any(s[:, -1] <= rtol * np.maximum(s[:, 0], 1e-300)))


def _definite_on_motions(eq, Vt):
    """Refuse a KKT matrix that is singular to working precision although its rows are
    independent: ``M`` must be positive definite on the motions the rows allow
    (``Q dx = 0``), i.e. ``Z^T M Z`` with ``Z`` a basis of that null space, the last rows of
    ``Vt`` in the SVD ``Q = U S Vt`` (``Vt`` None: no rows, ``Z = E``). A Cholesky pivot
    below ``1e-12`` of its diagonal entry counts as zero, as in every other formulation.
    Without this test an LU solve returns the rounding noise divided by a zero eigenvalue
    (a joint that moves no mass only to rounding, three revolute axes in line)."""
    M = eq.dense_M()
    if Vt is None:
        K = M
    else:
        Z = np.swapaxes(Vt[..., eq.nc:, :], -1, -2)
        K = np.swapaxes(Z, -1, -2) @ M @ Z
    if K.shape[-1] == 0:
        return
    try:
        definite_cholesky(K)
    except np.linalg.LinAlgError:
        raise SingularSystemError(
            "the KKT matrix is singular to working precision although the constraint rows "
            "are independent: the masses do not resist every motion the joints allow (a "
            "joint coordinate that moves no mass, or a configuration that loses a direction, "
            "such as two revolute axes in line)") from None


def _check_solution(model, eq, ddX, lam):
    """A non-finite solution of finite equations means a singular matrix; non-finite
    equations (overflowing speeds) are passed on for the caller's check of the result."""
    if not (np.all(np.isfinite(ddX)) and np.all(np.isfinite(lam))):
        if np.all(np.isfinite(eq.F)) and np.all(np.isfinite(eq.b)):
            _raise_redundant(model, eq)
    return ddX, lam


def definite_bodies(model, eq, what):
    """Refuse (``ModelError``, naming the body) a body whose own mass block ``M_k`` is not
    positive definite: a massless link or a point mass. The dense KKT solve carries it (the
    rows hold it to bodies with mass), but ``what`` inverts or eliminates each ``M_k``
    first. The O(n) recursions and the tree equations need only a positive-definite mass
    matrix of the whole system.

    Examples
    --------
    >>> import mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> m.bodies[2].mass = 0.0                          # a massless second rod
    >>> eq = mb.cartesian.equations(m, [0.3, 0.2], [0.0, 0.0], planar=False)
    >>> definite_bodies(m, eq, "solver='schur'")
    Traceback (most recent call last):
    ...
    mbcourse.errors.ModelError: mb.cartesian with solver='schur' needs every body's own inertia positive definite (it eliminates each body's block M_k on its own), but body 'rod2' has no mass; use solver='dense' (the full KKT matrix), or mb.vereshchagin.forward_dynamics or mb.tree.forward_dynamics, which need only a positive-definite mass matrix of the whole system
    """
    d = eq.M.shape[-1]
    for k in range(eq.n):
        moments = np.linalg.eigvalsh(eq.M[k])
        if moments[0] > 1e-12 * max(moments[-1], 1e-300):
            continue
        body = model.bodies[k + 1]
        lack = ("no mass" if body.mass <= 0.0 else
                "a point mass's inertia (a zero principal moment)" if d == 6 else
                "no moment of inertia about the plane's normal")
        raise ModelError(
            f"mb.cartesian with {what} needs every body's own inertia positive definite (it "
            f"eliminates each body's block M_k on its own), but body {body.name!r} has {lack}; use "
            "solver='dense' (the full KKT matrix), or mb.vereshchagin.forward_dynamics or "
            "mb.tree.forward_dynamics, which need only a positive-definite mass matrix of the "
            "whole system")


def _minv(model, eq, what):
    definite_bodies(model, eq, what)
    return np.linalg.inv(eq.M)  # (n, d, d), body blocks


def _lstsq(model, eq):
    """Minimum-norm multipliers for redundant but consistent rows."""
    B = eq.F.shape[0]
    N = eq.n * eq.dof
    Q = eq.dense_Q()
    Minv = scipy.linalg.block_diag(*_minv(model, eq, "redundant='lstsq'")) if eq.n else np.zeros((0, 0))
    F = eq.F.reshape(B, N)
    QMinv = Q @ Minv
    rhs = eq.b - (QMinv @ F[..., None])[..., 0]
    # (Q M^-1 Q^T)^+ from the SVD of Y = Q L^-T (M = L L^T): the condition number of Y,
    # not its square, decides which rows are redundant
    Linv = np.linalg.inv(np.linalg.cholesky(scipy.linalg.block_diag(*eq.M))) if eq.n \
        else np.zeros((0, 0))
    U, sv, _ = np.linalg.svd(Q @ Linv.T, full_matrices=False)
    keep = sv > 1e-9 * sv[..., :1]
    inv2 = np.where(keep, 1.0 / np.where(keep, sv, 1.0) ** 2, 0.0)
    lam = (U @ (inv2 * (np.swapaxes(U, -1, -2) @ rhs[..., None])[..., 0])[..., None])[..., 0]
    ddX = ((F + (np.swapaxes(Q, -1, -2) @ lam[..., None])[..., 0]) @ Minv.T)
    residual = np.abs((Q @ ddX[..., None])[..., 0] - eq.b).max(initial=0.0)
    if residual > 1e-8 * (1.0 + np.abs(eq.b).max(initial=0.0)):
        raise InconsistentStateError(
            f"the redundant constraints contradict each other (residual {residual:.3g}): no "
            "acceleration satisfies them all"
        )
    return ddX.reshape(B, eq.n, eq.dof), lam


def solve_dense(model, eq, redundant="raise"):
    """Solve the full KKT system with ``numpy.linalg.solve`` (LU), batch-wise.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.Model(gravity=(0, 0, -9.81))
    >>> _ = m.add_body("box", 2.0, [1, 1, 1])
    >>> _ = m.add_joint("slide", "prismatic", "ground", "box", axis=(0, 0, 1))
    >>> eq = mb.cartesian.equations(m, [0.0], [0.0])
    >>> ddX, lam = solve_dense(m, eq)
    >>> ddX[0, 0].round(12) + 0.0       # falls freely along the guide
    array([ 0.  ,  0.  , -9.81,  0.  ,  0.  ,  0.  ])
    """
    B = eq.F.shape[0]
    N = eq.n * eq.dof
    Q = eq.dense_Q()
    sv, Vt = np.linalg.svd(Q, full_matrices=True)[1:] if eq.nc else (None, None)
    if eq.nc and np.any(sv[:, -1] <= 1e-10 * np.maximum(sv[:, 0], 1e-300)):  # _is_deficient
        if redundant == "lstsq":
            return _lstsq(model, eq)
        _raise_redundant(model, eq)
    _definite_on_motions(eq, Vt)
    H = np.zeros((B, N + eq.nc, N + eq.nc))
    H[:, :N, :N] = eq.dense_M()
    H[:, :N, N:] = np.swapaxes(Q, -1, -2)
    H[:, N:, :N] = Q
    rhs = np.concatenate([eq.F.reshape(B, N), eq.b], axis=-1)
    try:
        sol = np.linalg.solve(H, rhs[..., None])[..., 0]
    except np.linalg.LinAlgError:
        _raise_redundant(model, eq)
    return _check_solution(model, eq, sol[:, :N].reshape(B, eq.n, eq.dof), -sol[:, N:])


def solve_schur(model, eq, redundant="raise"):
    """Range-space solution (2.51)–(2.54).

    ``lam = (Q M^-1 Q^T)^-1 (b - Q M^-1 F)`` (Cholesky), then
    ``ddX = M^-1 (F + Q^T lam)``; ``M`` is block diagonal, so ``M^-1`` costs nothing.
    """
    if eq.nc and redundant == "lstsq" and _is_deficient(eq):
        return _lstsq(model, eq)
    B, n, d = eq.F.shape
    Minv = _minv(model, eq, "solver='schur'")
    # Q M^-1 block by block, without forming Q
    QMi = np.zeros_like(eq.Qi)
    QMj = np.zeros_like(eq.Qj)
    keep_i, keep_j = eq.row_i > 0, eq.row_j > 0
    QMi[:, keep_i] = (eq.Qi[:, keep_i, None, :] @ Minv[eq.row_i[keep_i] - 1])[:, :, 0]
    QMj[:, keep_j] = (eq.Qj[:, keep_j, None, :] @ Minv[eq.row_j[keep_j] - 1])[:, :, 0]
    Q = eq.dense_Q()
    QM = np.zeros_like(Q)
    rows = np.arange(eq.nc)
    for body, block, keep in ((eq.row_i, QMi, keep_i), (eq.row_j, QMj, keep_j)):
        cols = (body[keep] - 1)[:, None] * d + np.arange(d)
        QM[:, rows[keep][:, None], cols] += block[:, keep]
    F = eq.F.reshape(B, n * d)
    S = QM @ np.swapaxes(Q, -1, -2)
    rhs = eq.b - (QM @ F[..., None])[..., 0]
    try:
        L = np.linalg.cholesky(S)
    except np.linalg.LinAlgError:
        _raise_redundant(model, eq)
    y = np.linalg.solve(L, rhs[..., None])
    lam = np.linalg.solve(np.swapaxes(L, -1, -2), y)[..., 0]
    force = eq.F + (np.swapaxes(Q, -1, -2) @ lam[..., None])[..., 0].reshape(B, n, d)
    ddX = (Minv @ force[..., None])[..., 0]
    return _check_solution(model, eq, ddX, lam)


# ------------------------------------------------------------- Baraff's LDL^T
def kkt_blocks(model, eq):
    """The block graph of ``H``: nodes (bodies, then joints with rows) and their edges.

    Returns
    -------
    nodes : list of (kind, index)
        ``("body", k)`` for bodies 1..n and ``("joint", a)`` for joints with rows.
    edges : list of (node, node)
        A joint node is linked with the moving bodies it constrains.
    """
    nodes = [("body", k) for k in range(1, model.n + 1)]
    edges = []
    for j in model.joints:
        if eq.joint_rows[j.index].size == 0:
            continue
        nodes.append(("joint", j.index))
        me = len(nodes) - 1
        for body in (j.parent, j.child):
            if body > 0:
                edges.append((me, body - 1))
    return nodes, edges


def block_pattern(model, eq):
    """Block sparsity pattern of ``H`` (bodies first, then joints) and the node list.

    Examples
    --------
    >>> import mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> P, nodes = block_pattern(m, mb.cartesian.equations(m, [0, 0], [0, 0]))
    >>> P.astype(int)
    array([[1, 0, 1, 1],
           [0, 1, 0, 1],
           [1, 0, 1, 0],
           [1, 1, 0, 1]])
    >>> nodes
    [('body', 1), ('body', 2), ('joint', 0), ('joint', 1)]
    """
    nodes, edges = kkt_blocks(model, eq)
    P = np.eye(len(nodes), dtype=bool)
    for a, b in edges:
        P[a, b] = P[b, a] = True
    return P, nodes


def tree_order(model, eq):
    """Baraff's elimination order (children before parents) of the nodes of
    :func:`block_pattern`; raises ``TopologyError`` for closed loops."""
    nodes, edges = kkt_blocks(model, eq)
    return _tree_order(model, nodes, edges)[0]


def _tree_order(model, nodes, edges):
    """Children-before-parents order of the block graph, with each node's parent.

    A joint node with a single body (a joint to the base) must not be a leaf: its diagonal
    block is zero, and a leaf is eliminated with its own block. So each such node is made
    the root of its component; every other joint node joins two bodies and always has a
    body child, whose block makes its ``D`` invertible.
    """
    adj = [[] for _ in nodes]
    for a, b in edges:
        adj[a].append(b)
        adj[b].append(a)
    parent = np.full(len(nodes), -1)
    seen = np.zeros(len(nodes), bool)
    order = []
    base_joints = [v for v, (kind, _) in enumerate(nodes) if kind == "joint" and len(adj[v]) == 1]
    loop = TopologyError(
        "solver='ldlt' needs a tree structure, but the joints form a closed loop; use "
        "solver='dense' or solver='schur' (or the cut-joint method)"
    )
    for root in base_joints + list(range(len(nodes))):
        if seen[root]:
            continue
        seen[root] = True
        stack = [root]
        while stack:
            v = stack.pop()
            order.append(v)
            for w in adj[v]:
                if w == parent[v]:
                    continue
                if seen[w] or w in base_joints:  # a cycle, or a second path to the base
                    raise loop
                seen[w] = True
                parent[w] = v
                stack.append(w)
    return order[::-1], parent  # reversed pre-order: every child before its parent


def _node_sign(nodes, v):
    """``+1`` for a body node (its ``D`` is positive definite), ``-1`` for a joint node
    (``D_a = -Q D_c^-1 Q^T`` is negative definite on a tree)."""
    return 1.0 if nodes[v][0] == "body" else -1.0


def _node_blocks(eq, nodes, v, w):
    """``H_vv``, ``H_{v,w}`` (``w`` the parent node, or -1) and the right-hand side of
    node ``v``, batch-wise."""
    B, _, d = eq.F.shape
    kind, idx = nodes[v]
    if kind == "body":
        diag, rhs = np.broadcast_to(eq.M[idx - 1], (B, d, d)), eq.F[:, idx - 1]
    else:
        rows = eq.joint_rows[idx]
        diag, rhs = np.zeros((B, rows.size, rows.size)), eq.b[:, rows]
    if w < 0:
        return diag, None, rhs
    joint, body = (idx, nodes[w][1]) if kind == "joint" else (nodes[w][1], idx)
    rows = eq.joint_rows[joint]
    block = np.where((eq.row_i[rows] == body)[None, :, None], eq.Qi[:, rows], 0.0)
    block = block + np.where((eq.row_j[rows] == body)[None, :, None], eq.Qj[:, rows], 0.0)
    return diag, (block if kind == "joint" else np.swapaxes(block, -1, -2)), rhs


def _ldlt_factor(eq, nodes, order, parent):
    """Children first: ``sign_v D_v = C_v C_v^T`` (Cholesky), ``W_v = C_v^-1 H_{v,par}``,
    ``u_v = C_v^-1 y_v``; the parent gets ``D_p -= sign_v W_v^T W_v`` (``= L_v^T D_v
    L_v``) and ``y_p -= sign_v W_v^T u_v`` (``= L_v^T y_v``). Raises ``LinAlgError`` for
    a block that is not definite."""
    children = [[] for _ in nodes]
    for v in order:
        if parent[v] >= 0:
            children[parent[v]].append(v)
    C, W, u = {}, {}, {}
    for v in order:
        Dv, Hvp, yv = _node_blocks(eq, nodes, v, parent[v])
        Dv, yv = Dv.copy(), yv.copy()
        for c in children[v]:
            s = _node_sign(nodes, c)
            Wt = np.swapaxes(W[c], -1, -2)
            Dv -= s * (Wt @ W[c])
            yv -= s * (Wt @ u[c][..., None])[..., 0]
        C[v] = np.linalg.cholesky(_node_sign(nodes, v) * Dv)
        u[v] = _lower_solve(C[v], yv[..., None])[..., 0]
        if Hvp is not None:
            W[v] = _lower_solve(C[v], Hvp)
    return C, W, u


def _lower_solve(C, X):
    """``C^-1 X`` for lower-triangular ``C`` (B, k, k) and ``X`` (B, k, m): forward
    substitution, batch-wise."""
    out = np.empty(C.shape[:-1] + X.shape[-1:])
    for i in range(C.shape[-1]):
        acc = X[..., i, :] - (C[..., i, None, :i] @ out[..., :i, :])[..., 0, :]
        out[..., i, :] = acc / C[..., i, i, None]
    return out


def _upper_solve(C, Z):
    """``C^-T Z`` for lower-triangular ``C`` (B, k, k) and ``Z`` (B, k): back substitution."""
    out = np.empty(C.shape[:-1])
    for i in range(C.shape[-1] - 1, -1, -1):
        acc = Z[..., i] - (C[..., i + 1:, i] * out[..., i + 1:]).sum(-1)
        out[..., i] = acc / C[..., i, i]
    return out


def solve_ldlt(model, eq, redundant="raise"):
    """Baraff's tree-ordered block ``LDL^T`` (2.55)–(2.61), no fill-in, O(n).

    ``H = U^T D U`` with ``U`` unit upper-triangular holding ``L_i = D_i^-1 H_{i,par(i)}``
    at ``(i, par(i))``; ``D_i = H_ii - sum_children L_c^T D_c L_c`` (E12). Then
    ``U^T y = rhs`` leaves to root, ``D z = y``, ``U x = z`` root to leaves (2.56)–(2.58).

    **In square-root form** (robust to tiny inertias). Each ``D_i`` is definite: a body's
    positive, a joint's ``D_a = -Q_j D_c^-1 Q_j^T`` negative. So ``D_i`` is kept as the
    Cholesky factor ``C_i`` of ``sign_i D_i`` and never inverted: ``W_i = C_i^-1
    H_{i,par(i)}`` gives ``L_i^T D_i L_i = sign_i W_i^T W_i``, ``L_i^T y_i = sign_i W_i^T
    C_i^-1 y_i`` and ``x_i = sign_i C_i^-T (C_i^-1 y_i - W_i x_par(i))``. The plain form
    ``L_i = D_i^-1 H`` (an LU solve), then ``L_i^T D_i L_i``, multiplies a solve's forward
    error by ``D_i`` again: for a light link (1e-3 kg, 1e-6 kg m^2) between heavy ones its
    ``D`` has eigenvalues 1e-6..17 and the joint's above it ``Q D^-1 Q^T`` 0.07..8e5
    (condition 1e7), and the result lost 8 digits (6e-8 against the dense solve on a
    24-body human-like tree, 8e-7 with a floating base); the square-root form stays near 1e-12
    (tests/test_cartesian_conditioning.py). Symmetric scaling of ``H`` does not help (block
    elimination in a fixed order is invariant to it; measured: equilibrating every body's
    block and every row left the plain form at 6e-8).

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> eq = mb.cartesian.equations(m, [0.3, 0.2], [1.0, -2.0], planar=False)
    >>> (ddX, lam), (ddX0, lam0) = solve_ldlt(m, eq), solve_dense(m, eq)
    >>> bool(np.allclose(ddX, ddX0, atol=1e-12) and np.allclose(lam, lam0, atol=1e-12))
    True
    """
    nodes, edges = kkt_blocks(model, eq)
    order, parent = _tree_order(model, nodes, edges)  # refuses loops first
    if redundant == "lstsq" and _is_deficient(eq):
        return _lstsq(model, eq)
    definite_bodies(model, eq, "solver='ldlt'")
    B, n, d = eq.F.shape
    try:
        C, W, u = _ldlt_factor(eq, nodes, order, parent)
    except np.linalg.LinAlgError:  # a block not definite: singular H
        _raise_redundant(model, eq)
    x = {}
    for v in reversed(order):  # x_v = sign_v C_v^-T (u_v - W_v x_parent), root to leaves
        z = u[v] if parent[v] < 0 else u[v] - (W[v] @ x[parent[v]][..., None])[..., 0]
        x[v] = _node_sign(nodes, v) * _upper_solve(C[v], z)
    ddX = np.stack([x[k] for k in range(n)], axis=1) if n else np.zeros((B, 0, d))
    lam = np.zeros((B, eq.nc))
    for v in range(n, len(nodes)):
        lam[:, eq.joint_rows[nodes[v][1]]] = -x[v]
    return _check_solution(model, eq, ddX, lam)


def fill_in(pattern, order):
    """Number of new nonzero blocks created by block elimination in the given order.

    Parameters
    ----------
    pattern : (N, N) bool
        Block sparsity pattern of a symmetric matrix.
    order : sequence of int
        Elimination order (a permutation of 0..N-1).

    Returns
    -------
    fill : int
        Off-diagonal blocks that become nonzero although they were zero (counted once per
        symmetric pair).
    filled : (N, N) bool
        The pattern of the factor, in the original numbering.

    Examples
    --------
    A star (node 0 joined to 1, 2, 3): eliminating the hub first fills everything;
    eliminating the leaves first fills nothing.

    >>> import numpy as np
    >>> P = np.eye(4, dtype=bool); P[0, 1:] = P[1:, 0] = True
    >>> fill_in(P, [0, 1, 2, 3])[0], fill_in(P, [1, 2, 3, 0])[0]
    (3, 0)
    """
    P = np.array(pattern, dtype=bool)
    N = P.shape[0]
    order = list(order)
    filled = P.copy()
    eliminated = np.zeros(N, bool)
    for v in order:
        nbrs = np.flatnonzero(filled[v] & ~eliminated)
        nbrs = nbrs[nbrs != v]
        filled[np.ix_(nbrs, nbrs)] = True
        eliminated[v] = True
    new = filled & ~P
    return int(np.triu(new, 1).sum()), filled


SOLVERS = {"dense": solve_dense, "schur": solve_schur, "ldlt": solve_ldlt}
