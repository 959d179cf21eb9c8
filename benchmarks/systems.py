"""The benchmark systems, built identically in mbcourse, Pinocchio and modern_robotics.

Every body is a slender box of mass ``m_k`` whose centre of mass lies 0.5 along its own x
axis from its inboard joint; the joint to its children sits 0.5 further on (so hinge
points are +-0.5 along x from the centre of mass, rods of length 1). Gravity is
``(0, 0, -9.81)``.

* ``chain``: body ``k`` hangs from body ``k - 1`` by a revolute joint; axes alternate z, y
  (a spatial chain).
* ``tree``: body ``k`` hangs from a random earlier body (seeded), axis chosen among x, y, z.
* ``cardan``: a chain of universal (Cardan, 2-DOF) joints with axes (z, y), the systems of
  Ivanov's Cholesky-versus-sweep comparison (mbcourse only).

Frame conversion (checked numerically by :func:`check_agreement`):

* mbcourse: ``parent_point = (0.5, 0, 0)`` (parent centre of mass to joint, parent axes;
  ``(0, 0, 0)`` on the ground), ``child_point = (-0.5, 0, 0)``; the child's axes equal the
  parent's at ``q = 0``.
* Pinocchio: each joint frame sits at its joint point with the body's axes, so the
  placement of joint ``k`` in the parent *joint* frame is ``parent_point - child_point_of
  the parent = (1, 0, 0)`` (``(0, 0, 0)`` for a joint on the ground), and the inertia's
  centre-of-mass lever is ``-child_point = (0.5, 0, 0)``.
* modern_robotics: link frames at the centres of mass, all axes aligned at the home
  configuration; the chain lies along x, so ``M_{k-1,k}`` is a translation by 1 (0.5 for
  the first link) and the screw axis of joint k in the space frame is ``(w, -w x q_k)``
  with ``q_k = (k - 1, 0, 0)``; ``Glist_k = diag(I_k, m_k E)`` (angular first).
"""

from __future__ import annotations

import numpy as np

import mbcourse as mb

GRAVITY = (0.0, 0.0, -9.81)
AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}


def description(structure, n, seed=0):
    """Parents, axis letters, masses and central inertias of a benchmark system."""
    rng = np.random.default_rng(seed + 1000 * n + (0 if structure == "chain" else 7))
    masses = rng.uniform(0.8, 1.2, size=n)
    inertias = []
    for m in masses:  # a box 1 x a x b: central moments, slightly tilted principal axes
        a, b = rng.uniform(0.05, 0.15, size=2)
        J = m / 12 * np.diag([a * a + b * b, 1 + b * b, 1 + a * a])
        R = mb.spatial.axis_angle([1.0, 0.0, 0.0], rng.uniform(-0.3, 0.3))
        inertias.append(R @ J @ R.T)
    if structure in ("chain", "cardan"):
        parents = list(range(n))
        axes = ["z" if k % 2 == 0 else "y" for k in range(n)]
    elif structure == "tree":
        parents = [0] + [int(rng.integers(0, k + 1)) for k in range(1, n)]
        axes = [str(rng.choice(["x", "y", "z"])) for _ in range(n)]
    else:
        raise ValueError(f"unknown structure {structure!r}")
    return parents, axes, masses, inertias


def mbcourse_model(structure, n, seed=0):
    parents, axes, masses, inertias = description(structure, n, seed)
    model = mb.Model(gravity=GRAVITY)
    for k in range(n):
        model.add_body(f"b{k + 1}", float(masses[k]), inertias[k])
    for k in range(n):
        p = parents[k]
        pp = (0.0, 0.0, 0.0) if p == 0 else (0.5, 0.0, 0.0)
        if structure == "cardan":
            model.add_joint(f"j{k + 1}", "universal", p, k + 1, parent_point=pp,
                            child_point=(-0.5, 0.0, 0.0), axes=(AXES["z"], AXES["y"]))
        else:
            model.add_joint(f"j{k + 1}", "revolute", p, k + 1, parent_point=pp,
                            child_point=(-0.5, 0.0, 0.0), axis=AXES[axes[k]])
    return model


def pinocchio_model(structure, n, seed=0):
    import pinocchio as pin

    parents, axes, masses, inertias = description(structure, n, seed)
    joint_type = {"x": pin.JointModelRX, "y": pin.JointModelRY, "z": pin.JointModelRZ}
    model = pin.Model()
    model.gravity.linear = np.array(GRAVITY)
    for k in range(n):
        p = parents[k]  # body p is pinocchio joint p (the universe is 0)
        placement = pin.SE3(np.eye(3), np.array([0.0 if p == 0 else 1.0, 0.0, 0.0]))
        jid = model.addJoint(p, joint_type[axes[k]](), placement, f"j{k + 1}")
        model.appendBodyToJoint(jid, pin.Inertia(float(masses[k]), np.array([0.5, 0.0, 0.0]),
                                                 np.asarray(inertias[k])), pin.SE3.Identity())
    return model


def modern_robotics_chain(n, seed=0):
    """``(Mlist, Glist, Slist, g)`` of the chain for ``mr.ForwardDynamics``."""
    _, axes, masses, inertias = description("chain", n, seed)
    Mlist = []
    for k in range(n + 1):
        T = np.eye(4)
        T[0, 3] = 0.5 if k == 0 else (1.0 if k < n else 0.5)
        Mlist.append(T)
    Glist = []
    for m, J in zip(masses, inertias):
        G = np.zeros((6, 6))
        G[:3, :3] = J
        G[3:, 3:] = m * np.eye(3)
        Glist.append(G)
    Slist = np.zeros((6, n))
    for k in range(n):
        w = np.array(AXES[axes[k]])
        Slist[:3, k] = w
        Slist[3:, k] = -np.cross(w, [float(k), 0.0, 0.0])
    return Mlist, Glist, Slist, np.array(GRAVITY)


def random_states(model, count, seed=0):
    """``count`` random configurations and speeds (angles ~ N(0, 1), speeds ~ N(0, 1))."""
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(count, model.nq))
    if any(j.kind in ("spherical", "free") for j in model.joints):
        raise ValueError("benchmark systems have no quaternion joints")
    return q, rng.normal(size=(count, model.nv)), rng.normal(size=(count, model.nv))
