"""The topology a :class:`~mbcourse.model.Model` derives from its joints (chapter 1): the
graph, the traversal of its spanning tree from the base, and the checks formulations ask
for (a connected model, a tree, joints that point outward).

``Model.graph``, ``Model.tree_traversal()``, ``Model.validate()``, ``Model.require_tree()``
and ``Model.outward_joints()`` call these and keep the results in the model's prepared data
(rebuilt after any change), so ``model.py`` keeps only the description.

Examples
--------
>>> import mbcourse as mb
>>> from mbcourse import topology
>>> m = mb.models.crank_slider()
>>> [(j.name, bool(forward)) for j, forward in topology.traversal(m)]
[('O', True), ('guide', True), ('A', True)]
"""

from __future__ import annotations

import numpy as np

from . import graph as _graph
from .errors import TopologyError

__all__ = ["validate", "build_graph", "traversal", "require_tree", "outward_joints"]


def validate(model):
    """Check the model is complete: at least one joint, every body connected to the base;
    a TopologyError names the bodies that hang in the air."""
    joints, bodies = model.joints, model.bodies
    if not joints:
        raise TopologyError("the model has no joints: connect every body to the base")
    ip = np.array([j.parent for j in joints])
    im = np.array([j.child for j in joints])
    seen = _graph.reachable(ip, im, model.n)
    if not seen.all():
        names = [bodies[i].name for i in np.flatnonzero(~seen)]
        raise TopologyError(
            f"bodies {names} are not connected to {bodies[0].name!r} by any chain of "
            "joints; add a joint (a 'free' joint for a floating body)"
        )


def build_graph(model):
    """The :class:`mbcourse.graph.Graph` of a validated model (i+ = parent, i- = child)."""
    validate(model)
    joints = model.joints
    return _graph.Graph(np.array([j.parent for j in joints]), np.array([j.child for j in joints]),
                        tuple(b.name for b in model.bodies), tuple(j.name for j in joints))


def traversal(model):
    """``(joint, forward)`` pairs of the spanning tree in parent-before-child order;
    ``forward`` tells whether the joint's parent is the body nearer the base."""
    g = model.graph
    tree, _ = g.spanning_tree()
    _, pred_a, order = _graph.predecessors(g.i_plus[tree], g.i_minus[tree], g.n)
    joints = model.joints
    steps = []
    for body in order[1:]:
        joint = joints[tree[pred_a[body]]]
        steps.append((joint, joint.child == body))
    return steps


def require_tree(model, method):
    """The graph, or a TopologyError naming the joints that close loops (``method`` names
    the caller)."""
    g = model.graph
    if not g.is_tree:
        _, cut = g.spanning_tree()
        raise TopologyError(
            f"{method} needs a tree, but joints {[model.joints[a].name for a in cut]} close "
            "loops; use mb.loops.forward_dynamics (the cut-joint method of section 3.6) or "
            "mb.cartesian.forward_dynamics (constraint rows handle loops)"
        )
    return g


def outward_joints(model, method):
    """Joints in base-to-leaves order for a recursion that walks outward from the base;
    a TopologyError for closed loops and for joints whose child is nearer the base."""
    require_tree(model, method)
    steps = model.tree_traversal()
    backward = [j.name for j, forward in steps if not forward]
    if backward:
        raise TopologyError(
            f"joints {backward} point toward the base (their child is nearer body 0); "
            f"{method} walks outward from the base: add those joints with parent and "
            "child swapped"
        )
    return [j for j, _ in steps]
