"""Augmented bodies and barycentres (Yudintsev 3.2, after Wittenburg).

For joints whose joint point does not move on the parent (``z_a = 0``: spherical,
revolute, universal, fixed) every vector below is **constant in the body frame** and can be
computed once, from the graph matrices and the hinge vectors ``c_ia`` (body ``i`` axes):

* ``C_ia = S_ia c_ia`` (3.5) and ``d_ij = (C T)_ij = sum_a C_ia T_aj`` (3.13): ``d_ii`` is the
  hinge vector of ``i``'s inboard joint, ``d_ij`` (``s_i < s_j``) runs in body ``i`` from the
  joint toward ``j`` to the inboard joint, otherwise ``d_ij = 0`` (3.15).
* The **augmented body** ``i``: body ``i`` plus, at the end of each hinge vector ``c_ia``, a
  point mass equal to all the mass (body 0 excluded) hanging on through joint ``a``. Its
  centre of mass is the **barycentre** ``B_i``; ``b_ij`` runs from ``B_i`` to the point
  where body ``j``'s mass sits, so ``sum_j m_j b_ij = 0`` (3.19), ``d_ij = b_i0 - b_ij``
  (3.20), ``sum_j m_j d_ij = M b_i0`` (3.26).
* ``K_i = J_i + sum_k m_k (|d_ik|^2 E - d_ik d_ik^T)`` (3.24): the inertia tensor of the
  augmented body about its inboard joint.
* Free-floating systems (3.44)–(3.65): with ``mu = E - m 1 1^T / M`` (3.48),
  ``b_ij = -(C T mu)_ij`` (3.59) and ``K*_i = J_i + sum_k m_k (|b_ik|^2 E - b_ik b_ik^T)``
  (3.65), the inertia of the augmented body about its barycentre.

Arrays: bodies ``1..n`` are stored at positions ``0..n-1``; ``d[i-1, j-1]`` is ``d_ij``.
The constants are the prepared data of this module (:func:`prepare`), built once per model
version; :mod:`mbcourse.tree.spherical` adds the hinge vectors ``z_a(q)`` of sliding joints
per state with :func:`barycentres_from_d` and :func:`augmented_inertias_from_d`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ModelError, ShapeError, TopologyError
from ..graph import predecessors
from ..joints import frozen

__all__ = ["Barycentres", "prepare", "hinge_vectors", "d_vectors", "precedes", "base_hinges",
           "barycentre_vectors", "augmented_inertias", "barycentres_from_d",
           "augmented_inertias_from_d", "floating_barycentre_vectors", "hinge_vectors_floating",
           "get_baricenter_vectors", "get_b"]


# ------------------------------------------------------------------ prepared data
@dataclass(frozen=True)
class Barycentres:
    """Prepared body-fixed constants of the augmented bodies, body axes (Yudintsev 3.2).

    Attributes
    ----------
    C : ndarray, shape (n, m, 3)
        Hinge vectors ``C_ia = S_ia c_ia`` (3.5). For a joint that moves its joint point
        (``z_a(q) != 0``) this is the constant part ``c_ia``; the actual hinge vector on the
        parent is ``c_ia + z_a(q)`` (3.150).
    d : ndarray, shape (n, n, 3)
        ``d_ij = (C T)_ij`` (3.13) (with ``z_a = 0`` for the sliding joints).
    precedes : ndarray of bool, shape (n, n)
        ``s_i < s_j``.
    base_hinges : ndarray, shape (n, 3)
        The base hinge vector ``c_0a`` of the subtree of every body, base axes.
    sliding : tuple of str
        Names of the joints that move their joint point (prismatic, screw, cylindrical,
        free): for them ``d``, ``b`` and ``K`` depend on ``q``.
    b0, b, K : ndarray or None
        ``b_i0`` (3.26), ``b_ij`` (3.20) and ``K_i`` (3.24); ``None`` when joints slide.
    """

    C: np.ndarray
    d: np.ndarray
    precedes: np.ndarray
    base_hinges: np.ndarray
    sliding: tuple
    b0: np.ndarray | None
    b: np.ndarray | None
    K: np.ndarray | None


def _frozen_bool(arr):
    out = np.array(arr, dtype=bool)
    out.flags.writeable = False
    return out


def _hinges(model, fictitious=None):
    """``C_ia = S_ia c_ia`` with the constant parts of the hinge vectors."""
    S = model.graph.S
    C = np.zeros((model.n, model.m, 3))
    for j in model.joints:
        if j.index == fictitious:
            continue
        if j.parent > 0:
            C[j.parent - 1, j.index] = S[j.parent, j.index] * j.parent_point
        if j.child > 0:
            C[j.child - 1, j.index] = S[j.child, j.index] * j.child_point
    return C


def _precedes(model):
    g = model.graph
    onpath = np.abs(g.T) > 0  # arc a lies on the path to j
    # s_i < s_j iff the inboard arc of i lies on the path to j, and i != j
    _, pred_arc, _ = predecessors(g.i_plus, g.i_minus, model.n)
    P = onpath[pred_arc[1:]]
    np.fill_diagonal(P, False)
    return P


def _base_hinges(model):
    T = model.graph.T
    out = np.zeros((model.n, 3))
    for j in model.joints:
        if 0 in (j.parent, j.child):
            out[np.abs(T[j.index]) > 0] = j.parent_point if j.parent == 0 else j.child_point
    return out


def barycentres_from_d(d, masses):
    """``b_i0 = sum_j m_j d_ij / M`` (3.26) and ``b_ij = b_i0 - d_ij`` (3.20).

    Parameters
    ----------
    d : array_like, shape (..., n, n, 3)
    masses : array_like, shape (n,)

    Returns
    -------
    b0 : ndarray, shape (..., n, 3)
    b : ndarray, shape (..., n, n, 3)
    """
    d = np.asarray(d, dtype=float)
    m = np.asarray(masses, dtype=float)
    b0 = np.einsum("j,...ijx->...ix", m, d) / m.sum()
    return b0, b0[..., :, None, :] - d


def augmented_inertias_from_d(d, masses, inertias):
    """``K_i = J_i + sum_k m_k (|d_ik|^2 E - d_ik d_ik^T)`` (3.24), shape (..., n, 3, 3)."""
    d = np.asarray(d, dtype=float)
    sq = np.einsum("...ikx,...ikx->...ik", d, d)
    outer = np.einsum("...ikx,...iky->...ikxy", d, d)
    return inertias + np.einsum("k,...ikxy->...ixy", masses,
                                sq[..., None, None] * np.eye(3) - outer)


def prepare(model):
    """Body-fixed constants of the augmented bodies, built once per model version.

    ``C`` (3.5), ``d = C T`` (3.13), ``s_i < s_j``, the base hinges and, when no joint
    moves its joint point, ``b_i0``, ``b_ij`` (3.20), (3.26) and ``K_i`` (3.24).

    Returns
    -------
    Barycentres

    Raises
    ------
    TopologyError
        For closed loops.

    Examples
    --------
    >>> import mbcourse as mb
    >>> data = prepare(mb.models.double_pendulum())
    >>> data.precedes.tolist(), data.sliding
    ([[False, True], [False, False]], ())
    """
    def build():
        g = model.require_tree("barycentric vectors (3.13)-(3.26)")
        C = _hinges(model)
        d = np.einsum("iax,aj->ijx", C, g.T)
        sliding = tuple(j.name for j in model.joints if j.moves_joint_point)
        b0 = b = K = None
        if not sliding:
            b0, b = (frozen(x) for x in barycentres_from_d(d, model.masses()))
            K = frozen(augmented_inertias_from_d(d, model.masses(), model.inertias()))
        return Barycentres(C=frozen(C), d=frozen(d), precedes=_frozen_bool(_precedes(model)),
                           base_hinges=frozen(_base_hinges(model)), sliding=sliding, b0=b0, b=b,
                           K=K)

    return model.prepared("tree.barycentre", build)


def _rotational(model, fictitious=None):
    """Refuse joints that move their joint point (except the fictitious one)."""
    for j in model.joints:
        if j.moves_joint_point and j.index != fictitious:
            raise ModelError(
                f"joint {j.name!r} moves its joint point (z_a != 0): barycentric vectors are "
                "constant only for joints that keep it (spherical, revolute, universal, fixed); "
                "use mbcourse.tree.general or mbcourse.tree.spherical, which add z_a(q)"
            )


def hinge_vectors(model, fictitious=None):
    """The matrix ``C`` of (3.5) with vector entries, shape (n, m, 3), body axes.

    ``C[i-1, a] = S_ia c_ia``; joints that move their joint point (``z_a`` not identically
    zero: prismatic, cylindrical, screw, free) are refused: their hinge vectors change with
    ``q`` (use :mod:`mbcourse.tree.general`). The joint named by ``fictitious`` (its index)
    is the free-floating system's fictitious joint at ``C_1``: its hinge vectors are zero.

    Examples
    --------
    >>> import mbcourse as mb
    >>> hinge_vectors(mb.models.double_pendulum())[:, :, 0].round(3).tolist()
    [[0.5, 0.5], [0.0, 0.5]]
    """
    _rotational(model, fictitious)
    if fictitious is None:
        return prepare(model).C
    model.require_tree("barycentric vectors (3.13)-(3.26)")
    return _hinges(model, fictitious)


def d_vectors(model):
    """``d_ij = (C T)_ij`` (3.13), shape (n, n, 3), in body-``i`` axes.

    Examples
    --------
    >>> import mbcourse as mb
    >>> d = d_vectors(mb.models.double_pendulum(l1=2.0, l2=1.0))
    >>> d[0, 0].tolist(), d[0, 1].tolist(), d[1, 0].tolist()   # d_11, d_12, d_21
    ([-1.0, 0.0, 0.0], [-2.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    """
    _rotational(model)
    return prepare(model).d


def precedes(model):
    """Boolean (n, n): ``precedes[i-1, j-1]`` is ``s_i < s_j`` (``s_i`` lies on the path
    from ``s_0`` to ``s_j``, ``i != j``).

    Examples
    --------
    >>> import mbcourse as mb
    >>> precedes(mb.models.triple_pendulum()).astype(int).tolist()
    [[0, 1, 1], [0, 0, 1], [0, 0, 0]]
    """
    return prepare(model).precedes


def base_hinges(model):
    """For every body, the hinge vector ``c_0a`` (base axes) of the base joint on its path.

    The book puts the single joint of body 0 at ``r_0`` (``c_0a = 0``); a model may hang
    several subtrees at different points of the base, so the base point of body ``i``'s
    subtree is ``r_0 + A_0 c_0a``.

    Returns
    -------
    ndarray, shape (n, 3)
    """
    return prepare(model).base_hinges


def barycentre_vectors(model):
    """Barycentric vectors ``b_i0`` (n, 3) and ``b_ij`` (n, n, 3), body-``i`` axes.

    ``b_i0 = sum_j m_j d_ij / M`` (3.26) and ``b_ij = b_i0 - d_ij`` (3.20).

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> model = mb.models.double_pendulum()
    >>> b0, b = barycentre_vectors(model)
    >>> bool(np.allclose(np.einsum("j,ijx->ix", model.masses(), b), 0))   # (3.19)
    True
    """
    _rotational(model)
    data = prepare(model)
    return data.b0, data.b


def augmented_inertias(model):
    """``K_i`` of (3.24): inertia of augmented body ``i`` about its inboard joint, body axes.

    Examples
    --------
    >>> import mbcourse as mb
    >>> K = augmented_inertias(mb.models.double_pendulum(m1=1.0, m2=1.0, l1=1.0, l2=1.0))
    >>> round(float(K[0][2, 2]), 6)   # J1 + m1 (l1/2)^2 + m2 l1^2
    1.333542
    """
    _rotational(model)
    return prepare(model).K


def floating_barycentre_vectors(model):
    """Free-floating system: ``mu`` (3.48), ``b_ij = -(C T mu)_ij`` (3.59) and ``K*_i`` (3.65).

    Body 1 is taken to hang from body 0 by the fictitious joint at its centre of mass
    (``c_11 = 0``, whatever the model says about that joint).

    Returns
    -------
    mu : (n, n)
    b : (n, n, 3) in body-``i`` axes
    K_star : (n, 3, 3) inertia of augmented body ``i`` about its barycentre, body axes

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> craft = mb.models.floating_spacecraft()
    >>> mu, b, K_star = floating_barycentre_vectors(craft)
    >>> bool(np.allclose(np.einsum("j,ijx->ix", craft.masses(), b), 0))   # (3.19)
    True
    """
    C = hinge_vectors_floating(model)
    m = model.masses()
    M = m.sum()
    mu = np.eye(model.n) - np.outer(m, np.ones(model.n)) / M
    b = -np.einsum("iax,aj,jk->ikx", C, model.graph.T, mu)
    return mu, b, augmented_inertias_from_d(b, m, model.inertias())


def hinge_vectors_floating(model):
    """``C`` with the fictitious joint at ``C_1``: the base joint's hinge vectors are zero."""
    root = [j for j in model.joints if 0 in (j.parent, j.child)]
    if len(root) != 1:
        raise TopologyError(
            "a free-floating system hangs from body 0 by exactly one (fictitious) joint; "
            f"this model has {len(root)} joints at the base"
        )
    return hinge_vectors(model, fictitious=root[0].index)


# --------------------------------------------------------------- MATLAB helpers
def get_baricenter_vectors(S, T, C, m):
    """The MATLAB helper ``GetBaricenterVectors(S, T, C, m)``, for regular numbering.

    Parameters
    ----------
    S : (n, n) incidence matrix without row 0 (regular numbering)
    T : (n, n) path matrix
    C : (n, n, 3) hinge vectors ``c_ia`` (``C[i-1, a-1]``, zero where ``S_ia = 0``)
    m : (n,) masses

    Returns
    -------
    B : (3, n)
        Column ``i`` is the position of the barycentre ``B_i`` relative to ``C_i``, that is
        ``-b_ii`` — not ``-b_i0`` as the source's comment says (erratum E13).

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> model = mb.models.double_pendulum()
    >>> g = model.graph
    >>> C = mb.tree.barycentre.hinge_vectors(model) * g.S[1:, :, None]  # c_ia = S_ia C_ia
    >>> B = get_baricenter_vectors(g.S[1:], g.T, C, model.masses())
    >>> b0, b = mb.tree.barycentre.barycentre_vectors(model)
    >>> bool(np.allclose(B.T, -b[[0, 1], [0, 1]]))
    True
    """
    S, T, C, m = (np.asarray(x, dtype=float) for x in (S, T, C, m))
    n = m.size
    if S.shape != (n, n) or T.shape != (n, n) or C.shape != (n, n, 3):
        raise ShapeError(f"expected S, T of shape ({n}, {n}) and C of shape ({n}, {n}, 3)")
    ma = np.abs(T @ m)  # mass outboard of each joint
    M = m.sum()
    B = np.zeros((3, n))
    for i in range(n):
        Bp = C[i, i] * (M - ma[i])  # inboard mass at the inboard hinge
        for a in range(i + 1, n):
            Bp = Bp + C[i, a] * ma[a] * abs(S[i, a])
        B[:, i] = Bp / M
    return B


def get_b(S, T, B, C):
    """The MATLAB helper ``Get_b(S, T, B, C)``: ``b_ij`` from the barycentre columns.

    ``b_ii = -B_i``; for ``j < i`` (inboard or another branch) ``b_ij = -B_i + c_ii`` (the
    inboard hinge, i.e. ``b_i0``); for ``j > i`` the joint ``a > i`` of body ``i`` leading to
    ``j`` gives ``b_ij = -B_i + c_ia`` (``a = i`` if there is none). Regular numbering.

    Returns
    -------
    (n, n, 3)
    """
    S, T, B, C = (np.asarray(x, dtype=float) for x in (S, T, B, C))
    n = S.shape[0]
    out = np.zeros((n, n, 3))
    for i in range(n):
        for j in range(n):
            if j <= i:
                out[i, j] = -B[:, i] + (C[i, i] if j < i else 0.0)
            else:
                hits = [a for a in range(i + 1, n) if S[i, a] != 0 and T[a, j] != 0]
                a = hits[0] if hits else i
                out[i, j] = -B[:, i] + C[i, a]
    return out
