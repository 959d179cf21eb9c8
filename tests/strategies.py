"""Hypothesis strategies shared by the tests: random trees with random arc directions
and random numbering of bodies and arcs."""

import numpy as np
from hypothesis import strategies as st


@st.composite
def random_trees(draw, min_bodies=1, max_bodies=25):
    """(i_plus, i_minus) of a random tree on bodies 0..n, arcs in random order and
    random directions, bodies numbered at random (body 0 stays the root)."""
    n = draw(st.integers(min_bodies, max_bodies))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    # a random recursive tree on a random labelling
    labels = np.concatenate([[0], rng.permutation(np.arange(1, n + 1))])
    parents = [int(labels[rng.integers(0, k)]) for k in range(1, n + 1)]
    children = labels[1:].tolist()
    order = rng.permutation(n)
    flip = rng.random(n) < 0.5
    ip = np.where(flip, children, parents)[order]
    im = np.where(flip, parents, children)[order]
    return ip.astype(int), im.astype(int)
