"""Helpers shared by the tests: random trees (hypothesis strategy for graphs; random
Models with every joint kind, random hinge points, axes and orientations; random states)."""

import numpy as np
from hypothesis import strategies as st

import mbcourse as mb
from mbcourse.spatial import quat_to_matrix


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


def unit(rng):
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def random_rotation(rng):
    q = rng.normal(size=4)
    return quat_to_matrix(q / np.linalg.norm(q))


def joint_args(kind, rng):
    args = {}
    if kind in ("revolute", "prismatic", "screw", "cylindrical"):
        args["axis"] = unit(rng)
    if kind == "universal":
        args["axes"] = (unit(rng), unit(rng))
    if kind == "screw":
        args["lead"] = rng.uniform(0.1, 2.0)
    return args


def random_q(joint, rng):
    q = rng.normal(size=joint.nq)
    if joint.kind == "spherical":
        q /= np.linalg.norm(q)
    if joint.kind == "free":
        q[3:] /= np.linalg.norm(q[3:])
    return q


def random_body(model, name, rng):
    a, b, c = rng.uniform(0.3, 1.5, 3)  # a box: its moments satisfy the triangle inequality
    L = np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) / 12.0
    R = random_rotation(rng)
    return model.add_body(name, mass=rng.uniform(0.5, 2.0), inertia=R @ L @ R.T)


def random_model(rng, kinds, reverse=(), gravity=True):
    """A random tree: body k hangs from a random earlier body through kinds[k-1]."""
    model = mb.Model(gravity=rng.normal(size=3) if gravity else (0.0, 0.0, 0.0))
    for k, kind in enumerate(kinds, start=1):
        random_body(model, f"b{k}", rng)
        parent = int(rng.integers(0, k))
        a, b = (f"b{k}", parent) if k - 1 in reverse else (parent, f"b{k}")
        model.add_joint(f"j{k}", kind, a, b, parent_point=rng.normal(size=3),
                        child_point=rng.normal(size=3),
                        orientation=random_rotation(rng), **joint_args(kind, rng))
    return model


def random_state(model, rng):
    q = np.concatenate([random_q(j, rng) for j in model.joints])
    return q, rng.normal(size=model.nv)


def moving_base(model):
    """Give the model a translating, turning base (the same motion in every test)."""
    model.set_base_motion(position=lambda t: (0.1 * np.sin(3 * t), 0.2 * t * t, 0.0),
                          velocity=lambda t: (0.3 * np.cos(3 * t), 0.4 * t, 0.0),
                          acceleration=lambda t: (-0.9 * np.sin(3 * t), 0.4, 0.0),
                          orientation=lambda t: mb.spatial.axis_angle([0, 0, 1], 0.5 * t),
                          angular_velocity=(0, 0, 0.5))
    return model
