"""Chapter 6's kernel on closed loops of every joint kind.

The cut joints are packed like a tree's joints (their motion and chapter 2's rows), so a
spherical, universal or cylindrical joint may close a loop, the reduced tree may hold any
kind (a free root, a ball joint, a screw) and its coordinates may outnumber its speeds
(quaternions). Checked against two routes: chapter 6's NumPy version of the same method,
and chapter 2's formulation in absolute coordinates, which never cuts a joint.

The mechanisms are closed by construction: a tree at a random configuration, then the
loop-closing joint placed where its bodies are at a chosen value of its own coordinates;
the speeds are made consistent by :func:`mbcourse.loops.assemble`.
"""

import numpy as np
import pytest

import mbcourse as mb
from mbcourse.poses import body_poses
from mbcourse.spatial import axis_angle


def _close(got, want, tol, what=""):
    scale = 1.0 + np.abs(want).max(initial=0.0)
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale, err_msg=what)


def _random_q(model, rng):
    q = rng.normal(size=model.nq) * 0.6
    for j in model.joints:
        if j.quaternion is not None:
            at = slice(j.q_slice.start + j.quaternion.start, j.q_slice.start + j.quaternion.stop)
            q[at] /= np.linalg.norm(q[at])
    return q


def _close_loop(model, q_tree, name, kind, parent, child, rng, **params):
    """Add joint ``name`` of ``kind`` between ``parent`` and ``child`` placed so that the
    tree's configuration ``q_tree`` closes it at a random value of its own coordinates;
    returns the Model's full ``q``."""
    scratch = mb.Model()
    scratch.add_body("x", 1.0, [1.0, 1.0, 1.0])
    shape = scratch.add_joint("j", kind, "ground", "x", **params)
    q_cut = _random_q(scratch, rng)
    r, A = body_poses(model, q_tree[None])
    i, j = model.body(parent).index, model.body(child).index
    Ai, Aj = A[0, i], A[0, j]
    p_i = rng.normal(size=3) * 0.3
    point = r[0, i] + Ai @ (p_i + shape.z(q_cut))
    model.add_joint(name, kind, parent, child, parent_point=p_i,
                    child_point=Aj.T @ (point - r[0, j]),
                    orientation=shape.rotation(q_cut).T @ Ai.T @ Aj, **params)
    return np.concatenate([q_tree, q_cut])


def _body(model, name, rng):
    R = axis_angle(rng.normal(size=3) / np.sqrt(3.0), rng.uniform(-1, 1))
    model.add_body(name, float(rng.uniform(0.5, 2.0)), R @ np.diag(rng.uniform(0.8, 1.2, 3)) @ R.T)


def rssr(seed=0):
    """A spatial four-bar: two cranks on revolute joints, a coupler on a ball joint, the loop
    closed by a second ball joint (the coupler spins freely about its axis)."""
    rng = np.random.default_rng(seed)
    model = mb.Model(gravity=(0.0, 0.0, -9.81))
    for name in ("crank", "coupler", "rocker"):
        _body(model, name, rng)
    model.add_joint("a", "revolute", "ground", "crank", axis=(0, 0, 1),
                    child_point=(-0.2, 0, 0))
    model.add_joint("b", "spherical", "crank", "coupler", parent_point=(0.2, 0, 0),
                    child_point=(-0.4, 0, 0))
    model.add_joint("c", "revolute", "ground", "rocker", parent_point=(0.9, 0.1, 0.0),
                    axis=(0, 1, 0), child_point=(0, 0, -0.2))
    q = _close_loop(model, _random_q(model, rng), "d", "spherical", "coupler", "rocker", rng)
    return model, q, "d"


def every_kind_loop(floating, seed=0):
    """Two branches of every kind closed by a cylindrical (or universal) joint, from a free
    root (``floating``) or from the ground: screw, cylindrical, universal and prismatic
    joints on the tree."""
    rng = np.random.default_rng(seed)
    model = mb.Model(gravity=(0.2, -0.1, -9.81))
    root = "ground"
    if floating:
        _body(model, "root", rng)
        model.add_joint("float", "free", "ground", "root")
        root = "root"
    for name in "ABCD":
        _body(model, name, rng)
    model.add_joint("cyl", "cylindrical", root, "A", axis=(0, 0, 1), child_point=(0, 0.2, 0))
    model.add_joint("screw", "screw", "A", "B", axis=(0.6, 0, 0.8), lead=0.3,
                    parent_point=(0.1, 0.3, 0))
    model.add_joint("uni", "universal", root, "C", axes=((1, 0, 0), (0, 1, 0)),
                    parent_point=(0.5, 0, 0))
    model.add_joint("slide", "prismatic", "C", "D", axis=(0, 0.6, 0.8),
                    parent_point=(0, 0.2, 0.1))
    kind, params = (("universal", dict(axes=((0, 0, 1), (0.6, 0.8, 0)))) if floating
                    else ("cylindrical", dict(axis=(0.0, 0.6, 0.8))))
    q = _close_loop(model, _random_q(model, rng), "close", kind, "B", "D", rng, **params)
    return model, q, "close"


MODELS = [("rssr", rssr), ("every_kind", lambda: every_kind_loop(False, 1)),
          ("floating", lambda: every_kind_loop(True, 2))]


@pytest.mark.parametrize("name, build", MODELS)
def test_chapter_6s_kernel_closes_loops_with_joints_of_every_kind(name, build):
    """The multi-coordinate cut joint's rows, its drive ``B*`` and its accelerations from
    its bodies': the kernel equals chapter 6's NumPy route and chapter 2's formulation."""
    model, q, cut = build()
    data = mb.loops.prepare(model)
    assert [model.joints[a].name for a in data.cut] == [cut]
    rng = np.random.default_rng(5)
    q, qd = mb.loops.assemble(model, q, rng.normal(size=model.nv))
    closure = mb.loops.constraints(model, q, qd)            # closed by construction
    assert np.abs(closure["f"]).max() < 1e-12 and np.abs(closure["fdot"]).max() < 1e-12
    tau = rng.normal(size=(3, model.nv))
    qs, qds = np.repeat(q[None], 3, axis=0), np.repeat(qd[None], 3, axis=0)
    want = mb.loops.forward_dynamics(model, qs, qds, tau, compiled=False)
    got = mb.loops.forward_dynamics(model, qs, qds, tau, compiled=True)
    _close(got, want, 1e-10, f"{name}: kernel against chapter 6's NumPy route")
    _close(mb.cartesian.forward_dynamics(model, qs, qds, tau), want, 1e-8,
           f"{name}: chapter 2 against chapter 6")
    single = mb.loops.forward_dynamics(model, q, qd, tau[0], compiled=True)
    _close(single, want[0], 1e-10, f"{name}: one state")


@pytest.mark.parametrize("name, build", MODELS[:2])
def test_a_loop_of_every_kind_simulates_on_the_compiled_right_hand_side(name, build):
    model, q, _ = build()
    q, qd = mb.loops.assemble(model, q, np.zeros(model.nv))
    runs = [mb.loops.simulate(model, (0.0, 0.05), q, qd, rtol=1e-10, atol=1e-10,
                              compiled=compiled) for compiled in (True, False)]
    _close(runs[0].q[-1], runs[1].q[-1], 1e-8, f"{name}: q")
    _close(runs[0].qd[-1], runs[1].qd[-1], 1e-7, f"{name}: qd")


def _moving(model):
    """A base turning about a tilted axis at a growing rate, its origin on a curve (every
    entry consistent with its derivative; the identity at t = 0, where the loops were
    closed: a motion of the base moves the closed mechanism as a whole)."""
    n = np.array([0.6, 0.0, 0.8])
    model.set_base_motion(
        orientation=lambda t: axis_angle(n, 0.4 * t * t),
        angular_velocity=lambda t: n * 0.8 * t,
        angular_acceleration=lambda t: n * 0.8,
        position=lambda t: np.array([0.1 * t, 0.2 * t * t, -0.05 * t ** 3]),
        velocity=lambda t: np.array([0.1, 0.4 * t, -0.15 * t * t]),
        acceleration=lambda t: np.array([0.0, 0.4, -0.3 * t]))
    return model


@pytest.mark.parametrize("name, build", MODELS[:2])
def test_chapter_6s_kernel_takes_a_prescribed_motion_of_the_base(name, build):
    """The base's motion starts the reduced tree's outward pass and gives the cut joints'
    rows on the base their right-hand side: the kernel equals chapter 6's NumPy route and
    chapter 2's formulation at several times, and a simulation equals the NumPy one."""
    model, q, _ = build()
    rng = np.random.default_rng(8)
    q, qd = mb.loops.assemble(model, q, rng.normal(size=model.nv))
    _moving(model)
    tau = rng.normal(size=model.nv)
    for t in (0.0, 0.7, 1.6):
        want = mb.loops.forward_dynamics(model, q, qd, tau, t=t, compiled=False)
        got = mb.loops.forward_dynamics(model, q, qd, tau, t=t, compiled=True)
        _close(got, want, 1e-10, f"{name}: kernel at t={t}")
        _close(mb.cartesian.forward_dynamics(model, q, qd, tau, t=t), want, 1e-8,
               f"{name}: chapter 2 at t={t}")
    runs = [mb.loops.simulate(model, (0.0, 0.05), q, qd, rtol=1e-10, atol=1e-10,
                              compiled=compiled) for compiled in (True, False)]
    _close(runs[0].q[-1], runs[1].q[-1], 1e-8, f"{name}: simulation")


@pytest.mark.parametrize("name, build", MODELS + [
    ("four-bar (planar: redundant spatial rows)",
     lambda: (mb.models.four_bar(), mb.models.four_bar_state(mb.models.four_bar(), 0.4)[0],
              None))])
def test_the_compiled_projection_keeps_the_loops_closed_like_the_numpy_one(name, build):
    """The Newton projection after each step on chapter 6's kernel (the cut joints' rows'
    residuals and Jacobian, ``mb.kernels.loops.loops_closure``): the loops stay closed to
    rounding (the NumPy route measures the drift), and the run equals the NumPy one."""
    model, q, _ = build()
    q, qd = mb.loops.assemble(model, q, np.random.default_rng(3).normal(size=model.nv))
    runs = [mb.loops.simulate(model, (0.0, 0.2), q, qd, rtol=1e-8, atol=1e-8,
                              t_eval=np.linspace(0.0, 0.2, 5), compiled=compiled)
            for compiled in (True, False)]
    assert runs[0].position_drift.max() < 1e-12
    assert runs[0].velocity_drift.max() < 1e-10
    _close(runs[0].q, runs[1].q, 1e-7, f"{name}: q")
    _close(runs[0].qd, runs[1].qd, 1e-6, f"{name}: qd")
