"""Chapter 1: the graph of a system of bodies (Yudintsev, section 1).

A system of ``n + 1`` bodies ``s_0 .. s_n`` joined by ``m`` joints ``u_1 .. u_m`` is a
directed graph. Arc ``u_a`` leaves body ``i_plus(a)`` (the parent, i.e. the reference
body of the relative motion) and enters body ``i_minus(a)`` (the child).

Array conventions (the **contract** of the course):

* Bodies are numbered ``0..n`` as in the book; body 0 is the base ("ground").
* Arc ``u_a`` is stored at position ``a - 1``: ``i_plus[0]`` is ``i+(1)``.
* ``incidence_matrix`` returns the full ``(n+1) x m`` matrix; row 0 is the book's
  ``S_0`` (1.2) and rows ``1..n`` its ``S`` (1.3).
* ``path_matrix`` returns ``T`` (``n x n``, rows = arcs, columns = bodies 1..n) with
  ``T @ S[1:] == E`` and ``T.T @ S[0] == -1`` (identities (1.4), (1.5)).
* Maps between numberings (``vertex_map``, ``arc_map``) are arrays indexed by the old
  number/position and holding the new one; arc maps use positions (``a - 1``).

Every function validates its input and raises :class:`mbcourse.errors.TopologyError`
or :class:`mbcourse.errors.ShapeError` with the offending arc or body named.

Examples
--------
The tree of Fig. 1.3 (Table 1.1):

>>> import numpy as np
>>> import mbcourse as mb
>>> i_plus = [1, 6, 4, 6, 4, 6, 7]
>>> i_minus = [6, 2, 3, 4, 5, 7, 0]
>>> S = mb.graph.incidence_matrix(i_plus, i_minus)
>>> T = mb.graph.path_matrix(i_plus, i_minus)
>>> bool(np.array_equal(T @ S[1:], np.eye(7))), bool(np.all(T.T @ S[0] == -1))
(True, True)
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .errors import ShapeError, TopologyError

__all__ = [
    "reachable",
    "incidence_matrix",
    "path_matrix",
    "adjacency_matrix",
    "regular_numbering",
    "renumber",
    "is_regular",
    "predecessor",
    "path_from_base",
    "predecessors",
    "spanning_tree",
    "fundamental_cycles",
    "is_tree",
    "Graph",
    "draw",
    "matrix_table",
]


# --------------------------------------------------------------------------- input
def _int_array(value, name, wanted, allow_bool=False):
    """``value`` as an int array; a ShapeError saying what ``name`` must be when it is not
    integers (a ragged list, strings, None, fractions)."""
    try:
        a = np.asarray(value)
    except ValueError:  # a ragged list
        raise ShapeError(f"{name} must be {wanted}, got {value!r}") from None
    if a.size and not np.issubdtype(a.dtype, np.integer) \
            and not (allow_bool and a.dtype == bool):
        if not (np.issubdtype(a.dtype, np.floating) and np.all(np.isfinite(a))
                and np.all(a == np.round(a))):
            raise ShapeError(f"{name} must be {wanted}, got {value!r}")
    return a.astype(int)


def _arcs(i_plus, i_minus, n=None):
    """Validate ``i_plus``/``i_minus`` and return them as int arrays plus ``n``."""
    arrays = []
    for name, arr in (("i_plus", i_plus), ("i_minus", i_minus)):
        a = _int_array(arr, name, "a 1-D sequence of integer body numbers 0..n")
        if a.ndim != 1:
            raise ShapeError(f"{name} must be a 1-D sequence of body numbers, got shape {a.shape}")
        arrays.append(a)
    if n is not None and (isinstance(n, bool) or not isinstance(n, (int, np.integer))):
        raise ShapeError(f"n must be the number of bodies (an integer), got {n!r}")
    ip, im = arrays
    if ip.shape != im.shape:
        raise ShapeError(
            f"i_plus and i_minus must have one entry per arc, got {ip.size} and {im.size} entries"
        )
    if ip.size == 0:
        raise TopologyError("a system needs at least one joint (arc); i_plus and i_minus are empty")
    for name, a in (("i_plus", ip), ("i_minus", im)):
        bad = np.flatnonzero(a < 0)
        if bad.size:
            raise TopologyError(
                f"{name}[{bad[0]}] (arc u{bad[0] + 1}) is {a[bad[0]]}: body numbers are 0..n"
            )
    loops = np.flatnonzero(ip == im)
    if loops.size:
        a = loops[0]
        raise TopologyError(f"arc u{a + 1} joins body {ip[a]} to itself; a joint connects two bodies")
    n_found = int(max(ip.max(), im.max()))
    if n is None:
        n = n_found
    elif n < n_found:
        raise TopologyError(f"n={n} bodies, but the arcs mention body {n_found}")
    pairs = {}
    for a, (p, c) in enumerate(zip(ip, im)):
        key = (min(p, c), max(p, c))
        if key in pairs:
            raise TopologyError(
                f"arcs u{pairs[key] + 1} and u{a + 1} both join bodies {key[0]} and {key[1]}: "
                "the book's rule is one joint per pair of bodies (merge them into one joint)"
            )
        pairs[key] = a
    return ip, im, int(n)


def _neighbours(ip, im, n):
    """Adjacency lists: for each vertex, a list of (arc position, other vertex)."""
    adj = [[] for _ in range(n + 1)]
    for a, (p, c) in enumerate(zip(ip, im)):
        adj[p].append((a, c))
        adj[c].append((a, p))
    return adj


def _bfs_tree(ip, im, n):
    """Breadth-first search from body 0 over the undirected graph.

    Returns ``(pred_vertex, pred_arc, order, non_tree_arcs)``; unreachable bodies have
    ``pred_vertex == -1``.
    """
    adj = _neighbours(ip, im, n)
    pred_v = np.full(n + 1, -1)
    pred_a = np.full(n + 1, -1)
    seen = np.zeros(n + 1, bool)
    seen[0] = True
    order = [0]
    tree_arcs = set()
    queue = deque([0])
    while queue:
        v = queue.popleft()
        for a, w in adj[v]:
            if not seen[w]:
                seen[w] = True
                pred_v[w], pred_a[w] = v, a
                tree_arcs.add(a)
                order.append(w)
                queue.append(w)
    non_tree = [a for a in range(len(ip)) if a not in tree_arcs]
    return pred_v, pred_a, np.array(order), non_tree, seen


def reachable(i_plus, i_minus, n=None):
    """Which bodies ``0..n`` a chain of arcs connects to body 0 (boolean mask).

    Examples
    --------
    >>> reachable([0, 1], [1, 2], n=3).tolist()
    [True, True, True, False]
    """
    ip, im, n = _arcs(i_plus, i_minus, n)
    return _bfs_tree(ip, im, n)[4]


def _require_connected(seen, what="the system"):
    missing = np.flatnonzero(~seen)
    if missing.size:
        raise TopologyError(
            f"bodies {missing.tolist()} are not connected to body 0 in {what}; every body "
            "needs a chain of joints to the base"
        )


# ------------------------------------------------------------------------- matrices
def incidence_matrix(i_plus, i_minus, n=None):
    """Incidence matrix ``S`` of the graph, Yudintsev (1.1), with row 0 = ``S_0`` (1.2).

    Parameters
    ----------
    i_plus, i_minus : sequence of int, length m
        ``i_plus[a-1]`` is the body arc ``u_a`` leaves, ``i_minus[a-1]`` the body it enters.
    n : int, optional
        Number of bodies other than body 0 (default: the largest body number used).

    Returns
    -------
    S : ndarray of int, shape (n + 1, m)
        ``S[i, a-1] = +1`` if ``i = i+(a)``, ``-1`` if ``i = i-(a)``, 0 otherwise.
        Every column sums to zero (erratum E2 of the book's errata page fixes the printed sign).

    Examples
    --------
    >>> incidence_matrix([0, 1], [1, 2])
    array([[ 1,  0],
           [-1,  1],
           [ 0, -1]])
    """
    ip, im, n = _arcs(i_plus, i_minus, n)
    S = np.zeros((n + 1, ip.size), dtype=int)
    cols = np.arange(ip.size)
    S[ip, cols] = 1
    S[im, cols] = -1
    return S


def adjacency_matrix(i_plus, i_minus, n=None):
    """Symmetric boolean adjacency matrix of bodies ``0..n``.

    Two bodies are adjacent if a joint connects them. It equals ``|S| |S|^T`` with the
    diagonal (the vertex degrees) removed; the printed matrix of Fig. 1.3 has wrong
    rows for s2 and s3 (erratum E3).

    Examples
    --------
    >>> adjacency_matrix([0, 1], [1, 2]).astype(int)
    array([[0, 1, 0],
           [1, 0, 1],
           [0, 1, 0]])
    """
    ip, im, n = _arcs(i_plus, i_minus, n)
    M = np.zeros((n + 1, n + 1), dtype=bool)
    M[ip, im] = True
    M[im, ip] = True
    return M


def is_tree(i_plus, i_minus, n=None):
    """True if the graph is a tree: connected, ``m == n`` arcs, no cycle.

    Examples
    --------
    >>> is_tree([0, 1], [1, 2]), is_tree([0, 1, 0], [1, 2, 2])
    (True, False)
    """
    ip, im, n = _arcs(i_plus, i_minus, n)
    _, _, _, non_tree, seen = _bfs_tree(ip, im, n)
    return bool(seen.all() and not non_tree)


def predecessors(i_plus, i_minus, n=None):
    """Preceding body and preceding arc of every body of a tree.

    The preceding arc of ``s_k`` is the arc incident to ``s_k`` on the path from
    ``s_0``; the preceding body is its other end.

    Returns
    -------
    pred_body : ndarray of int, shape (n + 1,)
        ``pred_body[k]``; ``-1`` for body 0.
    pred_arc : ndarray of int, shape (n + 1,)
        Position (``a - 1``) of the preceding arc; ``-1`` for body 0.
    order : ndarray of int, shape (n + 1,)
        Bodies in breadth-first order from body 0 (parents before children).

    Raises
    ------
    TopologyError
        If the graph is not a tree (names the arcs closing loops, or the unreachable bodies).

    Examples
    --------
    >>> pb, pa, order = predecessors([2, 0], [1, 2])
    >>> pb.tolist(), pa.tolist(), order.tolist()
    ([-1, 2, 0], [-1, 0, 1], [0, 2, 1])
    """
    ip, im, n = _arcs(i_plus, i_minus, n)
    pred_v, pred_a, order, non_tree, seen = _bfs_tree(ip, im, n)
    _require_connected(seen)
    if non_tree:
        raise TopologyError(
            f"the graph has closed loops (arcs {['u%d' % (a + 1) for a in non_tree]} close them): "
            "use graph.spanning_tree() to choose cut joints"
        )
    return pred_v, pred_a, order


def path_matrix(i_plus, i_minus, n=None):
    """Path matrix ``T`` of a tree (Yudintsev, section 1).

    ``T[a-1, i-1] = +1`` if arc ``u_a`` lies on the path from ``s_0`` to ``s_i`` and
    points toward ``s_0``, ``-1`` if it lies on it and points toward ``s_i``, else 0.

    Parameters
    ----------
    i_plus, i_minus : sequence of int, length n
    n : int, optional

    Returns
    -------
    T : ndarray of int, shape (n, n)
        Satisfies ``T @ S[1:] == S[1:] @ T == E`` (1.5) and ``T.T @ S[0] == -1`` (1.4),
        i.e. ``T`` is the inverse of the square block of the incidence matrix.

    Raises
    ------
    TopologyError
        If the graph is not a tree; the path matrix exists only for the tree
        ("reduced system") of a closed structure, see :func:`spanning_tree`.

    Examples
    --------
    A chain 0 -> 1 -> 2 with arcs pointing away from the base gives ``-1`` entries:

    >>> path_matrix([0, 1], [1, 2])
    array([[-1, -1],
           [ 0, -1]])
    """
    ip, im, n = _arcs(i_plus, i_minus, n)
    if ip.size != n:
        pred_v, pred_a, order, non_tree, seen = _bfs_tree(ip, im, n)
        _require_connected(seen)
        raise TopologyError(
            f"the path matrix needs a tree with as many arcs as bodies (n = {n}), got m = {ip.size} "
            f"arcs; arcs {['u%d' % (a + 1) for a in non_tree]} close loops: cut them first "
            "(graph.spanning_tree)"
        )
    pred_v, pred_a, order = predecessors(ip, im, n)
    # sign of each arc: +1 if it points toward s_0 (its head is the predecessor side)
    T = np.zeros((n, n), dtype=int)
    for k in order[1:]:
        # column k = column of the predecessor plus the preceding arc
        a = pred_a[k]
        parent = pred_v[k]
        if parent != 0:
            T[:, k - 1] = T[:, parent - 1]
        T[a, k - 1] = 1 if im[a] == parent else -1
    return T


# ----------------------------------------------------------------------- numbering
def renumber(i_plus, i_minus, vertex_map, arc_map):
    """Apply a renumbering of bodies and arcs; arc directions are kept.

    Parameters
    ----------
    i_plus, i_minus : sequence of int, length m
    vertex_map : sequence of int, length n + 1
        ``vertex_map[old_body] = new_body``; must be a permutation with ``vertex_map[0] == 0``.
    arc_map : sequence of int, length m
        ``arc_map[old_position] = new_position`` (positions are ``a - 1``).

    Returns
    -------
    i_plus_new, i_minus_new : ndarray of int

    Examples
    --------
    >>> ip, im = renumber([0, 1], [1, 2], vertex_map=[0, 2, 1], arc_map=[1, 0])
    >>> ip.tolist(), im.tolist()
    ([2, 0], [1, 2])
    """
    ip, im, n = _arcs(i_plus, i_minus)
    vm = _int_array(vertex_map, "vertex_map", f"a permutation of 0..{n}")
    am = _int_array(arc_map, "arc_map", f"a permutation of 0..{ip.size - 1}")
    if vm.shape != (n + 1,) or vm[0] != 0 or sorted(vm.tolist()) != list(range(n + 1)):
        raise ShapeError(
            f"vertex_map must be a permutation of 0..{n} with vertex_map[0] == 0, got {vm.tolist()}"
        )
    if am.shape != ip.shape or sorted(am.tolist()) != list(range(ip.size)):
        raise ShapeError(f"arc_map must be a permutation of 0..{ip.size - 1}, got {am.tolist()}")
    ip_new = np.empty_like(ip)
    im_new = np.empty_like(im)
    ip_new[am] = vm[ip]
    im_new[am] = vm[im]
    return ip_new, im_new


def regular_numbering(i_plus, i_minus, n=None):
    """Regular ("правильная") numbering of a tree by leaf peeling (Yudintsev, section 1).

    In a regular numbering the arc preceding ``s_k`` is ``u_k`` and the body preceding
    ``s_k`` has a smaller number. Algorithm: the boundary bodies (degree 1, not ``s_0``)
    receive the largest free numbers, each together with its arc; they are removed and
    the step repeats. Within one layer the bodies keep their old relative order. Other
    orders within a layer are equally regular (the book's Fig. 1.6 uses one of them;
    :func:`renumber` applies any given map).

    Returns
    -------
    i_plus_new, i_minus_new : ndarray of int
        The renumbered arcs (directions unchanged).
    vertex_map : ndarray of int, shape (n + 1,)
        ``vertex_map[old] = new``, ``vertex_map[0] == 0``.
    arc_map : ndarray of int, shape (n,)
        ``arc_map[old_position] = new_position``.

    Examples
    --------
    >>> ip, im, vmap, amap = regular_numbering([2, 0], [1, 2])
    >>> ip.tolist(), im.tolist(), vmap.tolist(), amap.tolist()
    ([0, 1], [1, 2], [0, 2, 1], [1, 0])
    """
    ip, im, n = _arcs(i_plus, i_minus, n)
    pred_v, pred_a, _ = predecessors(ip, im, n)
    degree = np.bincount(np.concatenate([ip, im]), minlength=n + 1)
    vertex_map = np.zeros(n + 1, dtype=int)
    arc_map = np.zeros(n, dtype=int)
    alive = np.ones(n + 1, dtype=bool)
    free = n
    while free > 0:
        leaves = np.flatnonzero(alive & (degree == 1))
        leaves = leaves[leaves != 0]
        numbers = np.arange(free - leaves.size + 1, free + 1)
        vertex_map[leaves] = numbers
        arc_map[pred_a[leaves]] = numbers - 1
        alive[leaves] = False
        np.subtract.at(degree, pred_v[leaves], 1)
        degree[leaves] = 0
        free -= leaves.size
    ip_new, im_new = renumber(ip, im, vertex_map, arc_map)
    return ip_new, im_new, vertex_map, arc_map


def is_regular(i_plus, i_minus, n=None):
    """True if the numbering of a tree is regular.

    Examples
    --------
    >>> is_regular([0, 1], [1, 2]), is_regular([2, 0], [1, 2])
    (True, False)
    """
    ip, im, n = _arcs(i_plus, i_minus, n)
    pred_v, pred_a, _ = predecessors(ip, im, n)
    k = np.arange(1, n + 1)
    return bool(np.all(pred_a[1:] == k - 1) and np.all(pred_v[1:] < k))


# ------------------------------------------------------------------- path searches
def _check_ST(S, T):
    """``S`` and ``T`` as integer arrays of matching shapes (n+1, n) and (n, n)."""
    S = _int_array(S, "S", "the full incidence matrix (integers), shape (n+1, n)")
    T = _int_array(T, "T", "the path matrix (integers), shape (n, n)")
    if S.ndim != 2 or T.ndim != 2 or T.shape[0] != S.shape[1] or T.shape[1] != S.shape[0] - 1:
        raise ShapeError(
            "expected the full incidence matrix S of shape (n+1, n) (row 0 included) and the "
            f"path matrix T of shape (n, n); got S {S.shape} and T {T.shape}"
        )
    return S, T


def predecessor(S, T, k):
    """Preceding arc and body of body ``k``, found with ``S`` and ``T`` as in the book.

    The preceding arc is the unique ``a`` with ``S[k, a] != 0`` and ``T[a, k-1] != 0``
    (it is incident to ``s_k`` and lies on the path from ``s_0``).

    Parameters
    ----------
    S : ndarray, shape (n + 1, n)
        Full incidence matrix (row 0 included) of a tree.
    T : ndarray, shape (n, n)
        Its path matrix.
    k : int
        A body number 1..n.

    Returns
    -------
    arc : int
        Position of the preceding arc (``a - 1``).
    body : int
        The preceding body.

    Examples
    --------
    >>> S = incidence_matrix([0, 1], [1, 2]); T = path_matrix([0, 1], [1, 2])
    >>> predecessor(S, T, 2)
    (1, 1)
    """
    S, T = _check_ST(S, T)
    n = T.shape[1]
    if not (isinstance(k, (int, np.integer)) and 1 <= k <= n):
        raise ShapeError(f"k must be a body number 1..{n}, got {k!r}")
    hits = np.flatnonzero((S[k] != 0) & (T[:, k - 1] != 0))
    if hits.size != 1:
        raise TopologyError(
            f"body {k}: found {hits.size} arcs incident to it on its path from s_0 "
            "(S and T do not describe the same tree)"
        )
    a = int(hits[0])
    others = np.flatnonzero(S[:, a])
    return a, int(others[others != k][0])


def path_from_base(S, T, k):
    """Bodies and arcs on the path from ``s_0`` to ``s_k``, by repeated predecessor search.

    Returns
    -------
    bodies : list of int
        ``[0, ..., k]``.
    arcs : list of int
        Arc positions (``a - 1``) in path order, one fewer than ``bodies``.

    Examples
    --------
    >>> ip, im = [1, 6, 4, 6, 4, 6, 7], [6, 2, 3, 4, 5, 7, 0]
    >>> S, T = incidence_matrix(ip, im), path_matrix(ip, im)
    >>> bodies, arcs = path_from_base(S, T, 3)
    >>> bodies, [a + 1 for a in arcs]
    ([0, 7, 6, 4, 3], [7, 6, 4, 3])
    """
    S, T = _check_ST(S, T)
    bodies, arcs = [k], []
    while bodies[-1] != 0:
        if len(arcs) > T.shape[0]:
            raise TopologyError("predecessor search does not reach s_0: S and T are inconsistent")
        a, prev = predecessor(S, T, bodies[-1])
        arcs.append(a)
        bodies.append(prev)
    return bodies[::-1], arcs[::-1]


# ------------------------------------------------------------------ closed loops
def spanning_tree(i_plus, i_minus, n=None, cut=None):
    """Split a (possibly closed) structure into a spanning tree and cut joints.

    A breadth-first search from ``s_0`` keeps the first arc that reaches each body;
    every other arc closes a loop and becomes a cut joint (Yudintsev, section 3.6).

    Parameters
    ----------
    i_plus, i_minus : sequence of int, length m
    n : int, optional
    cut : sequence of int, optional
        Arc positions the caller wants cut (e.g. the book's u8..u10); the remaining arcs
        must then form a spanning tree.

    Returns
    -------
    tree_arcs : ndarray of int
        Positions of the arcs of the spanning tree (``n`` of them, ascending).
    cut_arcs : ndarray of int
        Positions of the cut arcs (``m - n`` of them, ascending).

    Examples
    --------
    A four-bar linkage: ground 0, crank 1, coupler 2, rocker 3:

    >>> tree, cut = spanning_tree([0, 1, 2, 0], [1, 2, 3, 3])
    >>> tree.tolist(), cut.tolist()
    ([0, 1, 3], [2])
    """
    ip, im, n = _arcs(i_plus, i_minus, n)
    if cut is None:
        _, _, _, non_tree, seen = _bfs_tree(ip, im, n)
        _require_connected(seen)
        cut_arcs = np.array(sorted(non_tree), dtype=int)
    else:
        cut_arcs = np.unique(_int_array(cut, "cut", f"arc positions 0..{ip.size - 1}"))
        if cut_arcs.size and (cut_arcs.min() < 0 or cut_arcs.max() >= ip.size):
            raise ShapeError(f"cut must hold arc positions 0..{ip.size - 1}, got {list(cut)}")
        keep = np.setdiff1d(np.arange(ip.size), cut_arcs)
        if keep.size != n or not is_tree(ip[keep], im[keep], n):
            raise TopologyError(
                f"cutting arcs {[f'u{a + 1}' for a in cut_arcs]} does not leave a spanning tree "
                f"({keep.size} arcs remain for {n} bodies)"
            )
    tree_arcs = np.setdiff1d(np.arange(ip.size), cut_arcs)
    return tree_arcs, cut_arcs


def fundamental_cycles(i_plus, i_minus, n=None, cut=None):
    """One closed loop per cut joint: the cut arc plus the tree path joining its ends.

    Parameters
    ----------
    i_plus, i_minus : sequence of int
    n : int, optional
    cut : sequence of int, optional
        Arc positions to cut (default: the breadth-first choice of :func:`spanning_tree`).

    Returns
    -------
    list of list of int
        For each cut arc (in the order of :func:`spanning_tree`), the arc positions of its
        loop in traversal order: the cut arc from i+ to i-, then the tree path back.

    Examples
    --------
    >>> fundamental_cycles([0, 1, 2, 0], [1, 2, 3, 3])
    [[2, 3, 0, 1]]
    """
    ip, im, n = _arcs(i_plus, i_minus, n)
    tree, cut = spanning_tree(ip, im, n, cut=cut)
    pred_v, pred_a, _ = predecessors(ip[tree], im[tree], n)
    pred_a = np.where(pred_a >= 0, tree[np.maximum(pred_a, 0)], -1)

    def to_root(v):
        path = []
        while v != 0:
            path.append(v)
            v = pred_v[v]
        return path + [0]

    cycles = []
    for c in cut:
        pa, pb = to_root(ip[c]), to_root(im[c])
        common = set(pa) & set(pb)
        up = [int(pred_a[v]) for v in pa if v not in common]
        down = [int(pred_a[v]) for v in pb if v not in common]
        cycles.append([int(c)] + down + up[::-1])
    return cycles


# ------------------------------------------------------------------- Graph object
def _readonly(a):
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class Graph:
    """The graph of a model: arrays ``i_plus``/``i_minus`` plus body and joint names.

    Obtained as ``model.graph``; every matrix is computed on demand from the arrays.

    Attributes
    ----------
    i_plus, i_minus : ndarray of int, shape (m,)
    body_names : tuple of str, length n + 1 (``body_names[0]`` is the base)
    joint_names : tuple of str, length m

    Examples
    --------
    >>> g = Graph([0, 1], [1, 2], ("ground", "a", "b"), ("J1", "J2"))
    >>> g.n, g.m, g.is_tree
    (2, 2, True)
    >>> g.S0.tolist()
    [1, 0]
    """

    i_plus: np.ndarray
    i_minus: np.ndarray
    body_names: tuple = field(default=())
    joint_names: tuple = field(default=())

    def __post_init__(self):
        n_named = len(self.body_names) - 1 if self.body_names else None
        ip, im, n = _arcs(self.i_plus, self.i_minus, n_named)
        object.__setattr__(self, "i_plus", _readonly(ip))
        object.__setattr__(self, "i_minus", _readonly(im))
        if not self.body_names:
            object.__setattr__(self, "body_names", tuple(f"s{i}" for i in range(n + 1)))
        if len(self.joint_names) not in (0, ip.size):
            raise ShapeError(f"{len(self.joint_names)} joint names for {ip.size} arcs")
        if not self.joint_names:
            object.__setattr__(self, "joint_names", tuple(f"u{a + 1}" for a in range(ip.size)))

    @property
    def n(self):
        """Number of bodies other than body 0."""
        return len(self.body_names) - 1

    @property
    def m(self):
        """Number of joints (arcs)."""
        return self.i_plus.size

    @cached_property
    def S(self):
        """Full incidence matrix, shape (n + 1, m); row 0 is ``S_0`` (read-only)."""
        return _readonly(incidence_matrix(self.i_plus, self.i_minus, self.n))

    @property
    def S0(self):
        """Row of body 0 of the incidence matrix (1.2)."""
        return self.S[0]

    @cached_property
    def T(self):
        """Path matrix of the tree (read-only; ``TopologyError`` for closed structures)."""
        return _readonly(path_matrix(self.i_plus, self.i_minus, self.n))

    @cached_property
    def adjacency(self):
        """Boolean adjacency matrix, shape (n + 1, n + 1) (read-only)."""
        return _readonly(adjacency_matrix(self.i_plus, self.i_minus, self.n))

    @cached_property
    def is_tree(self):
        """True if the structure has no closed loop."""
        return is_tree(self.i_plus, self.i_minus, self.n)

    def spanning_tree(self, cut=None):
        """Tree arcs and cut arcs, see :func:`spanning_tree`."""
        return spanning_tree(self.i_plus, self.i_minus, self.n, cut=cut)

    def regular_numbering(self):
        """See :func:`regular_numbering`."""
        return regular_numbering(self.i_plus, self.i_minus, self.n)

    def draw(self, ax=None, **kwargs):
        """Draw the graph with body and joint names (overridable), see :func:`draw`."""
        kwargs.setdefault("body_labels", self.body_names)
        kwargs.setdefault("arc_labels", self.joint_names)
        return draw(self.i_plus, self.i_minus, ax=ax, n=self.n, **kwargs)


# ------------------------------------------------------------------- printing
def matrix_table(M, rows=None, cols=None):
    """An integer matrix as a labelled table, signs written out (``+1``, ``-1``, ``0``).

    Parameters
    ----------
    M : array_like of int, shape (r, c)
    rows, cols : sequence of str, optional
        Row and column labels (default: ``0, 1, ...``).

    Returns
    -------
    str

    Examples
    --------
    >>> print(matrix_table(incidence_matrix([0, 1], [1, 2]), ["s0", "s1", "s2"], ["u1", "u2"]))
          u1  u2
    s0    +1   0
    s1    -1  +1
    s2     0  -1
    """
    M = _int_array(M, "M", "a 2-D integer matrix", allow_bool=True)
    if M.ndim != 2:
        raise ShapeError(f"matrix_table needs a 2-D integer matrix, got shape {M.shape}")
    rows = [str(r) for r in (rows if rows is not None else range(M.shape[0]))]
    cols = [str(c) for c in (cols if cols is not None else range(M.shape[1]))]
    if len(rows) != M.shape[0] or len(cols) != M.shape[1]:
        raise ShapeError(f"{len(rows)} row and {len(cols)} column labels for a matrix of shape "
                         f"{M.shape}")
    width = max(4, max((len(c) for c in cols), default=0) + 1)
    lead = max((len(r) for r in rows), default=0) + 1
    lines = [" " * lead + "".join(c.rjust(width) for c in cols)]
    for r, row in zip(rows, M):
        lines.append(r.ljust(lead) + "".join((f"{v:+d}" if v else "0").rjust(width) for v in row))
    return "\n".join(lines)


# --------------------------------------------------------------------- drawing
def _tree_layout(ip, im, n, tree):
    """Tidy layered layout of the spanning tree: depth from s_0 downward, leaves spread."""
    pred_v, _, order = predecessors(ip[tree], im[tree], n)
    children = [[] for _ in range(n + 1)]
    for v in order[1:]:
        children[pred_v[v]].append(int(v))
    x = np.zeros(n + 1)
    depth = np.zeros(n + 1)
    next_leaf = [0.0]

    def place(v, d):
        depth[v] = d
        if not children[v]:
            x[v] = next_leaf[0]
            next_leaf[0] += 1.0
        else:
            for c in sorted(children[v]):
                place(c, d + 1)
            x[v] = np.mean([x[c] for c in children[v]])

    place(0, 0)
    return np.column_stack([x, -depth])


def _arc_label_spot(pos, p, c, rad, placed, clear_vertex=0.45, clear_label=0.32, side=0.2):
    """Where to write an arc's label: beside the arc (``side`` off the curve), at the first
    of the points near its middle that keeps ``clear_vertex`` from every vertex and
    ``clear_label`` from the labels already placed (in layout units, vertices one unit
    apart); failing that, the point farthest from them."""
    d = pos[c] - pos[p]
    length = float(np.hypot(*d)) or 1.0
    control = 0.5 * (pos[p] + pos[c]) + rad * np.array([d[1], -d[0]])   # matplotlib's arc3
    best, best_score = None, -np.inf
    for t in (0.5, 0.42, 0.58, 0.34, 0.66, 0.27, 0.73):
        point = (1 - t) ** 2 * pos[p] + 2 * (1 - t) * t * control + t ** 2 * pos[c]
        tangent = 2 * (1 - t) * (control - pos[p]) + 2 * t * (pos[c] - control)
        normal = np.array([tangent[1], -tangent[0]]) / (np.hypot(*tangent) or length)
        for sign in (1.0, -1.0):
            spot = point + sign * side * normal
            gap_v = np.min(np.hypot(*(pos - spot).T)) / clear_vertex
            gap_l = min((np.hypot(*(q - spot)) for q in placed), default=np.inf) / clear_label
            score = min(gap_v, gap_l)
            if score >= 1.0:
                return spot
            if score > best_score:
                best, best_score = spot, score
    return best


def draw(i_plus, i_minus, ax=None, body_labels=None, arc_labels=None, n=None,
         highlight=(), cut=None, title=None):
    """Draw the directed graph of a system with matplotlib.

    Bodies are laid out by depth from ``s_0`` (top) along a spanning tree; each arc is an
    arrow from ``i+(a)`` to ``i-(a)`` labelled ``u_a``. Cut joints of closed structures are
    dashed and curved.

    Parameters
    ----------
    i_plus, i_minus : sequence of int
    ax : matplotlib Axes, optional
    body_labels, arc_labels : sequence of str, optional
        Defaults ``s0..sn`` and ``u1..um`` (LaTeX).
    n : int, optional
    highlight : sequence of int
        Arc positions to draw in colour (e.g. a path found by :func:`path_from_base`).
    cut : sequence of int, optional
        Arc positions to treat as cut joints (default: the breadth-first choice).
    title : str, optional

    Returns
    -------
    matplotlib Axes
        With the body positions in ``ax.mbcourse_positions`` (array (n + 1, 2)).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> ax = draw([1, 6, 4, 6, 4, 6, 7], [6, 2, 3, 4, 5, 7, 0])
    >>> len(ax.patches), ax.mbcourse_positions.shape
    (7, (8, 2))
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch

    ip, im, n = _arcs(i_plus, i_minus, n)
    tree, cut = spanning_tree(ip, im, n, cut=cut)
    pos = _tree_layout(ip, im, n, tree)
    body_labels = list(body_labels) if body_labels is not None else \
        [f"$s_{{{i}}}$" for i in range(n + 1)]
    arc_labels = list(arc_labels) if arc_labels is not None else \
        [f"$u_{{{a + 1}}}$" for a in range(ip.size)]
    if len(body_labels) != n + 1 or len(arc_labels) != ip.size:
        raise ShapeError(f"need {n + 1} body labels and {ip.size} arc labels, got "
                         f"{len(body_labels)} and {len(arc_labels)}")
    highlight = set(_int_array(list(highlight), "highlight",
                               f"arc positions 0..{ip.size - 1}").tolist())
    if highlight - set(range(ip.size)):
        raise ShapeError(f"highlight must hold arc positions 0..{ip.size - 1}, got "
                         f"{sorted(highlight)}")
    if ax is not None and not hasattr(ax, "add_patch"):
        raise ShapeError(f"ax must be a matplotlib Axes, got {ax!r}")
    if ax is None:
        width = max(3.0, 0.9 * (pos[:, 0].max() + 1))
        height = max(2.5, 1.1 * (1 - pos[:, 1].min()))
        _, ax = plt.subplots(figsize=(width, height))
    bend = {int(a): 0.3 * (-1) ** k for k, a in enumerate(cut)}  # alternate the curvature
    placed = []                                                   # arc labels written so far
    for a in range(ip.size):
        p, c = ip[a], im[a]
        dashed = a in bend
        color = "C3" if a in highlight else ("C0" if dashed else "0.15")
        rad = bend.get(a, 0.0)
        ax.add_patch(FancyArrowPatch(pos[p], pos[c], arrowstyle="-|>", mutation_scale=14,
                                     shrinkA=12, shrinkB=12, color=color,
                                     lw=2.0 if a in highlight else 1.3,
                                     linestyle="--" if dashed else "-",
                                     connectionstyle=f"arc3,rad={rad}"))
        spot = _arc_label_spot(pos, p, c, rad, placed)
        placed.append(spot)
        ax.annotate(arc_labels[a], spot, fontsize=9, color=color, ha="center", va="center",
                    zorder=3)
    for i in range(n + 1):
        short = len(re.sub(r"[${}_\\]", "", body_labels[i])) <= 3  # visible characters
        ax.annotate(body_labels[i], pos[i], ha="center", va="center", fontsize=9, zorder=4,
                    bbox=dict(boxstyle="circle,pad=0.35" if short else "round,pad=0.35",
                              fc="#f2d7a6" if i == 0 else "#cfe3f3", ec="0.2"))
    ax.set_xlim(pos[:, 0].min() - 0.7, pos[:, 0].max() + 0.7)
    ax.set_ylim(pos[:, 1].min() - 0.6, 0.6)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title)
    ax.mbcourse_positions = pos
    return ax
