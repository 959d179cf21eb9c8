"""Chapter 1: graph functions against the book's Fig. 1.3 / 1.6 and on random trees."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from mbcourse import graph as g
from mbcourse.errors import ShapeError, TopologyError
from strategies import random_trees

# Fig. 1.3, Table 1.1
IP = [1, 6, 4, 6, 4, 6, 7]
IM = [6, 2, 3, 4, 5, 7, 0]

S_FIG13 = np.array([  # rows s0..s7, columns u1..u7 (digest 2.1)
    [0, 0, 0, 0, 0, 0, -1],
    [1, 0, 0, 0, 0, 0, 0],
    [0, -1, 0, 0, 0, 0, 0],
    [0, 0, -1, 0, 0, 0, 0],
    [0, 0, 1, -1, 1, 0, 0],
    [0, 0, 0, 0, -1, 0, 0],
    [-1, 1, 0, 1, 0, 1, 0],
    [0, 0, 0, 0, 0, -1, 1],
])
T_FIG13 = np.array([  # rows u1..u7, columns s1..s7
    [1, 0, 0, 0, 0, 0, 0],
    [0, -1, 0, 0, 0, 0, 0],
    [0, 0, -1, 0, 0, 0, 0],
    [0, 0, -1, -1, -1, 0, 0],
    [0, 0, 0, 0, -1, 0, 0],
    [1, 1, 1, 1, 1, 1, 0],
    [1, 1, 1, 1, 1, 1, 1],
])
ADJ_FIG13 = np.array([  # corrected (erratum E3)
    [0, 0, 0, 0, 0, 0, 0, 1],
    [0, 0, 0, 0, 0, 0, 1, 0],
    [0, 0, 0, 0, 0, 0, 1, 0],
    [0, 0, 0, 0, 1, 0, 0, 0],
    [0, 0, 0, 1, 0, 1, 1, 0],
    [0, 0, 0, 0, 1, 0, 0, 0],
    [0, 1, 1, 0, 1, 0, 0, 1],
    [1, 0, 0, 0, 0, 0, 1, 0],
])
# Fig. 1.6: the book's renumbering (old -> new)
VMAP_FIG16 = [0, 4, 7, 5, 3, 6, 2, 1]  # s1->4, s2->7, s3->5, s4->3, s5->6, s6->2, s7->1
AMAP_FIG16 = [3, 6, 4, 2, 5, 1, 0]  # u1->4, u2->7, u3->5, u4->3, u5->6, u6->2, u7->1 (positions)
S_FIG16 = np.array([  # rows s1..s7
    [1, -1, 0, 0, 0, 0, 0],
    [0, 1, 1, -1, 0, 0, 1],
    [0, 0, -1, 0, 1, 1, 0],
    [0, 0, 0, 1, 0, 0, 0],
    [0, 0, 0, 0, -1, 0, 0],
    [0, 0, 0, 0, 0, -1, 0],
    [0, 0, 0, 0, 0, 0, -1],
])
T_FIG16 = np.array([
    [1, 1, 1, 1, 1, 1, 1],
    [0, 1, 1, 1, 1, 1, 1],
    [0, 0, -1, 0, -1, -1, 0],
    [0, 0, 0, 1, 0, 0, 0],
    [0, 0, 0, 0, -1, 0, 0],
    [0, 0, 0, 0, 0, -1, 0],
    [0, 0, 0, 0, 0, 0, -1],
])


def test_fig13_incidence_path_adjacency():
    S = g.incidence_matrix(IP, IM)
    np.testing.assert_array_equal(S, S_FIG13)
    np.testing.assert_array_equal(S.sum(axis=0), 0)
    T = g.path_matrix(IP, IM)
    np.testing.assert_array_equal(T, T_FIG13)
    np.testing.assert_array_equal(T @ S[1:], np.eye(7))
    np.testing.assert_array_equal(S[1:] @ T, np.eye(7))
    np.testing.assert_array_equal(T.T @ S[0], -np.ones(7))
    A = g.adjacency_matrix(IP, IM)
    np.testing.assert_array_equal(A.astype(int), ADJ_FIG13)
    # E3's check: |S||S|^T minus the degree diagonal
    absS = np.abs(S)
    np.testing.assert_array_equal(absS @ absS.T - np.diag(absS.sum(axis=1)), ADJ_FIG13)


def test_fig16_book_renumbering_reproduces_printed_matrices():
    ip, im = g.renumber(IP, IM, VMAP_FIG16, AMAP_FIG16)
    S = g.incidence_matrix(ip, im)
    np.testing.assert_array_equal(S[1:], S_FIG16)
    np.testing.assert_array_equal(S[0], [-1, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(g.path_matrix(ip, im), T_FIG16)
    assert g.is_regular(ip, im)
    # E4: column 7 of T lists {u7} before and {u1, u2, u7} after renumbering
    assert np.flatnonzero(T_FIG13[:, 6]).tolist() == [6]
    assert np.flatnonzero(T_FIG16[:, 6]).tolist() == [0, 1, 6]
    # E5: above the diagonal only the first n - n0 = 3 rows are nonzero (n0 = 4)
    upper = np.triu(T_FIG16, 1)
    assert np.flatnonzero(np.abs(upper).sum(axis=1)).tolist() == [0, 1, 2]


def test_fig13_leaf_peeling_numbering():
    ip, im, vmap, amap = g.regular_numbering(IP, IM)
    assert g.is_regular(ip, im)
    # layers: leaves {1,2,3,5} -> 4..7, then s4 -> 3, s6 -> 2, s7 -> 1
    assert vmap[7] == 1 and vmap[6] == 2 and vmap[4] == 3
    assert sorted(vmap[[1, 2, 3, 5]].tolist()) == [4, 5, 6, 7]
    S = g.incidence_matrix(ip, im)
    T = g.path_matrix(ip, im)
    assert np.all(np.tril(S[1:], -1) == 0) and np.all(np.diag(S[1:]) != 0)
    assert np.all(np.tril(T, -1) == 0) and np.all(np.diag(T) != 0)
    # same structure as the book's Fig. 1.6: equal up to the order of tied leaves
    np.testing.assert_array_equal(np.sort(np.abs(T).sum(axis=0)), np.sort(np.abs(T_FIG16).sum(axis=0)))


def test_predecessor_search_fig13():
    S = g.incidence_matrix(IP, IM)
    T = g.path_matrix(IP, IM)
    assert g.predecessor(S, T, 3) == (2, 4)  # arc u3 from s4
    bodies, arcs = g.path_from_base(S, T, 3)
    assert bodies == [0, 7, 6, 4, 3]
    assert [a + 1 for a in arcs] == [7, 6, 4, 3]
    # under regular numbering the arc numbers increase along the path
    ip, im = g.renumber(IP, IM, VMAP_FIG16, AMAP_FIG16)
    S2, T2 = g.incidence_matrix(ip, im), g.path_matrix(ip, im)
    for k in range(1, 8):
        _, arcs = g.path_from_base(S2, T2, k)
        assert arcs == sorted(arcs) and arcs[-1] == k - 1


@given(random_trees())
def test_path_matrix_identities_random_trees(tree):
    ip, im = tree
    n = ip.size
    S = g.incidence_matrix(ip, im)
    T = g.path_matrix(ip, im)
    assert S.shape == (n + 1, n) and T.shape == (n, n)
    np.testing.assert_array_equal(S.sum(axis=0), 0)
    np.testing.assert_array_equal(T @ S[1:], np.eye(n))  # (1.5)
    np.testing.assert_array_equal(S[1:] @ T, np.eye(n))
    np.testing.assert_array_equal(T.T @ S[0], -np.ones(n))  # (1.4)
    # entries in {0, +-1} and constant sign within each row (an arc points one way)
    assert set(np.unique(T)) <= {-1, 0, 1}
    for row in T:
        assert len(set(row[row != 0])) == 1


@given(random_trees())
def test_predecessor_search_random_trees(tree):
    ip, im = tree
    S, T = g.incidence_matrix(ip, im), g.path_matrix(ip, im)
    pred_v, pred_a, _ = g.predecessors(ip, im)
    for k in range(1, ip.size + 1):
        a, prev = g.predecessor(S, T, k)
        assert (a, prev) == (pred_a[k], pred_v[k])
        bodies, arcs = g.path_from_base(S, T, k)
        assert bodies[0] == 0 and bodies[-1] == k and len(arcs) == len(bodies) - 1
        # column k of T holds exactly the arcs of the path
        assert sorted(arcs) == np.flatnonzero(T[:, k - 1]).tolist()


@given(random_trees())
def test_regular_numbering_random_trees(tree):
    ip, im = tree
    ip2, im2, vmap, amap = g.regular_numbering(ip, im)
    n = ip.size
    assert vmap[0] == 0 and sorted(vmap) == list(range(n + 1))
    assert sorted(amap) == list(range(n))
    assert g.is_regular(ip2, im2)
    # the map is applied consistently and keeps arc directions
    np.testing.assert_array_equal(ip2[amap], vmap[ip])
    np.testing.assert_array_equal(im2[amap], vmap[im])
    S, T = g.incidence_matrix(ip2, im2), g.path_matrix(ip2, im2)
    assert np.all(np.tril(S[1:], -1) == 0) and np.all(np.diag(S[1:]) != 0)
    assert np.all(np.tril(T, -1) == 0) and np.all(np.diag(T) != 0)
    # same tree: the renumbered T is the old one with rows and columns permuted
    T_old = g.path_matrix(ip, im)
    np.testing.assert_array_equal(T[np.ix_(amap, vmap[1:] - 1)], T_old)


@given(random_trees(min_bodies=2), st.integers(0, 1000))
def test_all_arcs_toward_base_gives_positive_T(tree, seed):
    ip, im = tree
    pred_v, pred_a, _ = g.predecessors(ip, im)
    # orient every arc toward s_0: head = predecessor side
    ip2, im2 = ip.copy(), im.copy()
    for k in range(1, ip.size + 1):
        a = pred_a[k]
        ip2[a], im2[a] = k, pred_v[k]
    T = g.path_matrix(ip2, im2)
    assert set(np.unique(T)) <= {0, 1}
    ip3, im3, _, _ = g.regular_numbering(ip2, im2)
    assert np.all(np.diag(g.incidence_matrix(ip3, im3)[1:]) == 1)


# Fig. 3.22 / Table 3.2: a closed structure with cut joints u8..u10
IP_322 = [5, 6, 0, 1, 1, 3, 0, 4, 0, 5]
IM_322 = [0, 4, 2, 2, 7, 2, 4, 3, 7, 6]


def test_fig322_closed_structure():
    S = g.incidence_matrix(IP_322, IM_322)
    np.testing.assert_array_equal(S.sum(axis=0), 0)
    np.testing.assert_array_equal(S[7], [0, 0, 0, 0, -1, 0, 0, 0, -1, 0])  # erratum E19
    assert not g.is_tree(IP_322, IM_322)
    tree, cut = g.spanning_tree(IP_322, IM_322, cut=[7, 8, 9])
    assert tree.tolist() == list(range(7)) and cut.tolist() == [7, 8, 9]
    S_tree, S_cut = S[:, :7], S[:, 7:]
    # S0*^T + S*^T 1 = 0 (every column sums to zero)
    np.testing.assert_array_equal(S_cut[0] + S_cut[1:].sum(axis=0), 0)
    # S0+ and S0*+ (3.183), (3.185)
    np.testing.assert_array_equal(np.maximum(S_tree[0], 0), [0, 0, 1, 0, 0, 0, 1])
    np.testing.assert_array_equal(np.maximum(S_cut[0], 0), [0, 1, 0])
    # three arcs at s_0 in the tree; the tree has a valid path matrix
    assert np.count_nonzero(S_tree[0]) == 3
    T = g.path_matrix(np.array(IP_322)[tree], np.array(IM_322)[tree])
    np.testing.assert_array_equal(T @ S_tree[1:], np.eye(7))
    with pytest.raises(TopologyError, match="u8"):
        g.path_matrix(IP_322, IM_322)
    # every fundamental cycle is closed: the signed arcs sum to a zero vertex balance
    for cycle in g.fundamental_cycles(IP_322, IM_322):
        assert len(set(cycle)) == len(cycle)
        sub = np.abs(S[:, cycle]).sum(axis=1)
        assert set(np.unique(sub)) <= {0, 2}


@given(random_trees(min_bodies=3), st.integers(0, 2**31))
def test_spanning_tree_random_closed_structures(tree, seed):
    ip, im = tree
    n = ip.size
    rng = np.random.default_rng(seed)
    # add up to 3 chords between non-adjacent bodies
    adj = g.adjacency_matrix(ip, im)
    extra = [(a, b) for a in range(n + 1) for b in range(a + 1, n + 1) if not adj[a, b]]
    if not extra:
        return
    picks = rng.choice(len(extra), size=min(3, len(extra)), replace=False)
    ip2 = np.concatenate([ip, [extra[p][0] for p in picks]])
    im2 = np.concatenate([im, [extra[p][1] for p in picks]])
    tree_arcs, cut = g.spanning_tree(ip2, im2)
    assert tree_arcs.size == n and cut.size == picks.size
    assert g.is_tree(ip2[tree_arcs], im2[tree_arcs], n)
    cycles = g.fundamental_cycles(ip2, im2)
    S = g.incidence_matrix(ip2, im2)
    for c, cycle in zip(cut, cycles):
        assert cycle[0] == c
        # every vertex on a cycle touches exactly two of its arcs
        assert set(np.unique(np.abs(S[:, cycle]).sum(axis=1))) <= {0, 2}


@pytest.mark.parametrize(
    "ip, im, error, match",
    [
        ([0, 1], [1, 1], TopologyError, "joins body 1 to itself"),
        ([0, 1, 0], [1, 0, 2], TopologyError, "one joint per pair"),
        ([0, 1], [1], ShapeError, "one entry per arc"),
        ([0, -1], [1, 2], TopologyError, "body numbers are 0..n"),
        ([0, 1.5], [1, 2], ShapeError, "integer"),
        ([[0, 1]], [[1, 2]], ShapeError, "1-D"),
        ([], [], TopologyError, "at least one joint"),
    ],
)
def test_bad_arc_arrays(ip, im, error, match):
    with pytest.raises(error, match=match):
        g.incidence_matrix(ip, im)


def test_path_matrix_refuses_disconnected_and_loops():
    with pytest.raises(TopologyError, match=r"bodies \[3\] are not connected"):
        g.path_matrix([0, 1], [1, 2], n=3)
    with pytest.raises(TopologyError, match="close"):
        g.path_matrix([0, 1, 2], [1, 2, 0])
    with pytest.raises(TopologyError, match="not connected"):
        g.path_matrix([0, 2], [1, 3])


def test_predecessor_bad_arguments():
    S, T = g.incidence_matrix(IP, IM), g.path_matrix(IP, IM)
    with pytest.raises(ShapeError, match="body number 1..7"):
        g.predecessor(S, T, 0)
    with pytest.raises(ShapeError, match="full incidence matrix"):
        g.predecessor(S[1:], T, 1)
    with pytest.raises(ShapeError, match="vertex_map"):
        g.renumber(IP, IM, [1, 0, 2, 3, 4, 5, 6, 7], list(range(7)))


def test_graph_object_and_drawing():
    graph = g.Graph(IP, IM)
    assert graph.n == 7 and graph.m == 7 and graph.is_tree
    np.testing.assert_array_equal(graph.S, S_FIG13)
    np.testing.assert_array_equal(graph.T, T_FIG13)
    ax = graph.draw(highlight=[6, 5])
    assert len(ax.patches) == 7
    texts = [t.get_text() for t in ax.texts]
    assert "u1" in texts and "s0" in texts
    ax = graph.draw(body_labels=[f"B{i}" for i in range(8)])
    assert "B3" in [t.get_text() for t in ax.texts]
    # parents are drawn above their children
    pos = ax.mbcourse_positions
    pred_v, _, _ = g.predecessors(IP, IM)
    assert all(pos[k, 1] < pos[pred_v[k], 1] for k in range(1, 8))
    ax2 = g.draw(IP_322, IM_322, cut=[7, 8, 9])
    dashed = [i for i, p in enumerate(ax2.patches) if p.get_linestyle() not in ("-", "solid")]
    assert dashed == [7, 8, 9]
    with pytest.raises(ShapeError, match="labels"):
        g.draw(IP, IM, body_labels=["a"])


def test_fundamental_cycles_with_a_chosen_cut():
    cycles = g.fundamental_cycles(IP_322, IM_322, cut=[7, 8, 9])
    assert [c[0] for c in cycles] == [7, 8, 9]
    S = g.incidence_matrix(IP_322, IM_322)
    T = g.path_matrix(IP_322[:7], IM_322[:7])
    TS = T @ S[1:, 7:]  # the tree path of each loop, by the route of Yudintsev (3.198)
    for j, cycle in enumerate(cycles):
        assert sorted(cycle[1:]) == np.flatnonzero(TS[:, j]).tolist()


@pytest.mark.parametrize("case", ["fig13", "fig13_renumbered", "fig322_cut", "four_bar"])
def test_drawing_keeps_arc_labels_off_vertices(case):
    """An arc's label (u5) must not sit under a vertex (s4), nor on another arc's label."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if case == "fig13":
        ax = g.draw(IP, IM)
    elif case == "fig13_renumbered":
        ip, im, _, _ = g.regular_numbering(IP, IM)
        ax = g.draw(ip, im)
    elif case == "fig322_cut":
        ax = g.draw(IP_322, IM_322, cut=[7, 8, 9])
    else:
        ax = g.draw([0, 1, 2, 0], [1, 2, 3, 3])
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    vertices = [t.get_bbox_patch().get_window_extent(renderer) for t in ax.texts
                if t.get_bbox_patch() is not None]
    arcs = [t.get_window_extent(renderer) for t in ax.texts if t.get_bbox_patch() is None]
    assert len(vertices) == len(ax.mbcourse_positions) and len(arcs) == len(ax.patches)
    for k, box in enumerate(arcs):
        assert not any(box.overlaps(v) for v in vertices), f"arc label {k + 1} on a vertex"
        assert not any(box.overlaps(other) for other in arcs[k + 1:]), f"arc label {k + 1}"
    plt.close(fig)
