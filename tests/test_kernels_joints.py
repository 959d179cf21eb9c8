"""Every joint kind, constant loads and joint springs on the compiled route.

The kernels read a joint's own motion (:meth:`mbcourse.joints.Joint.motion`: turns, a
quaternion, slides and per speed the axis vectors ``p``, ``k`` in a frame), never its kind.
Checked here by two independent routes:

* the description, evaluated in NumPy below, reproduces every kind's ``rotation``, ``z``,
  ``p``, ``k`` and ``bias`` (the methods the NumPy formulations use);
* chapter 3's and chapter 4's kernels and the composite-body kernel, on trees with every
  joint kind (free root, spherical, universal, cylindrical, screw, prismatic, revolute,
  fixed, a free joint in the middle), give the NumPy routes' intermediate quantities and
  accelerations, and Ivanov's sweep gives back the speeds from the momenta;
* with constant loads (inertial and body axes, at points), joint springs and spring-dampers
  packed into the kernels and control laws and loads given as callables handed in as
  numbers, the same, and a model edited after a call never gives the old answer.
"""

import numpy as np
import pytest

import mbcourse as mb
from mbcourse import kernels
from mbcourse.joints import CHILD, FIRST_TURN, PARENT, QUATERNION_TOL
from mbcourse.kernels.common import B_BASE, B_FORCE, B_SPRINGS, G_ROWS, G_SPRING
from mbcourse.kernels.tree import tree_matrices, tree_terms
from mbcourse.kernels.vereshchagin import vereshchagin_articulated
from mbcourse.spatial import axis_angle, quat_to_matrix

KINDS = [("revolute", dict(axis=(0, 0.6, 0.8))), ("prismatic", dict(axis=(0.6, 0, 0.8))),
         ("screw", dict(axis=(0, 1, 0), lead=0.2)), ("cylindrical", dict(axis=(0, 0, 1))),
         ("universal", dict(axes=((1, 0, 0), (0, 0.6, 0.8)))), ("spherical", {}),
         ("free", {}), ("fixed", {})]


def _close(got, want, tol=1e-12, what=""):
    """Equal to ``tol`` relative to the size of the expected values."""
    scale = 1.0 + np.abs(want).max(initial=0.0)
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale, err_msg=what)


def _rotation(rng):
    axis = rng.normal(size=3)
    return axis_angle(axis / np.linalg.norm(axis), rng.uniform(-1.5, 1.5))


def every_kind(floating=True, seed=0):
    """A tree with a joint of every kind, tilted joint frames, offset joint points: a free
    root (or a spherical one), then the kinds of ``KINDS`` and a free joint in the middle,
    hung partly in a chain and partly from the root."""
    rng = np.random.default_rng(seed)
    model = mb.Model(gravity=(0.3, -0.2, -9.81))

    def body(name):
        R = _rotation(rng)
        model.add_body(name, float(rng.uniform(0.5, 2.0)),
                       R @ np.diag(rng.uniform(0.8, 1.2, 3)) @ R.T)

    def joint(name, kind, parent, child, **kw):
        model.add_joint(name, kind, parent, child, parent_point=rng.normal(size=3) * 0.4,
                        child_point=rng.normal(size=3) * 0.4, orientation=_rotation(rng), **kw)

    body("root")
    joint("root", "free" if floating else "spherical", "ground", "root")
    parent = "root"
    for k, (kind, kw) in enumerate(KINDS + [("revolute", dict(axis=(1, 0, 0)))]):
        body(f"b{k}")
        joint(f"j{k}_{kind}", kind, parent if k % 3 else "root", f"b{k}", **kw)
        parent = f"b{k}"
    return model


def random_state(model, rng, batch):
    """Random ``q`` (unit quaternions), ``qd``, ``tau`` of shape (batch, ...)."""
    q = rng.normal(size=(batch, model.nq))
    qd, tau = rng.normal(size=(2, batch, model.nv))
    for j in model.joints:
        if j.quaternion is not None:
            at = slice(j.q_slice.start + j.quaternion.start, j.q_slice.start + j.quaternion.stop)
            q[:, at] /= np.linalg.norm(q[:, at], axis=-1, keepdims=True)
    return q, qd, tau


def _evaluate(joint, q, v):
    """A joint's ``rotation``, ``z``, ``p``, ``k``, ``w_a``, ``s_a`` from its Motion alone."""
    motion = joint.motion()
    Rj, first, rate1 = np.eye(3), np.eye(3), np.zeros(3)
    for t, (axis, qk, vk) in enumerate(motion.turns):
        turn = axis_angle(axis, q[qk])
        Rj = Rj @ turn
        if t == 0:
            first, rate1 = turn, np.asarray(axis) * v[vk]
    if motion.quaternion >= 0:
        quat = q[motion.quaternion:motion.quaternion + 4]
        Rj = Rj @ quat_to_matrix(quat / np.linalg.norm(quat))
    R = Rj @ joint.orientation
    z = sum((np.asarray(vec) * q[k] for vec, k in motion.slides), np.zeros(3))
    frames = {PARENT: np.eye(3), FIRST_TURN: first, CHILD: R}
    P = np.array([frames[f] @ p for f, p, _ in motion.speeds]).reshape(-1, 3).T
    K = np.array([frames[f] @ k for f, _, k in motion.speeds]).reshape(-1, 3).T
    rates = {PARENT: np.zeros(3), FIRST_TURN: rate1, CHILD: P @ v}
    w = sum((np.cross(rates[f], P[:, j]) * v[j] for j, (f, _, _) in enumerate(motion.speeds)),
            np.zeros(3))
    s = sum((np.cross(rates[f], K[:, j]) * v[j] for j, (f, _, _) in enumerate(motion.speeds)),
            np.zeros(3))
    return R, z, P, K, w, s


@pytest.mark.parametrize("kind, params", KINDS)
def test_a_joints_motion_reproduces_its_rotation_axes_and_bias(kind, params):
    rng = np.random.default_rng(len(kind))
    model = mb.Model()
    model.add_body("b", 1.0, [1.0, 1.0, 1.0])
    joint = model.add_joint("j", kind, "ground", "b", orientation=_rotation(rng), **params)
    assert len(joint.motion().speeds) == joint.nv
    for _ in range(5):
        q, v = rng.normal(size=joint.nq), rng.normal(size=joint.nv)
        if joint.quaternion is not None:
            q[joint.quaternion] /= np.linalg.norm(q[joint.quaternion])
        R, z, P, K, w, s = _evaluate(joint, q, v)
        w_ref, s_ref = joint.bias(q, v)
        for got, want, what in ((R, joint.rotation(q), "R"), (z, joint.z(q), "z"),
                                (P, joint.p(q), "p"), (K, joint.k(q), "k"), (w, w_ref, "w_a"),
                                (s, s_ref, "s_a")):
            _close(got, want, tol=1e-14, what=f"{kind}: {what}")


def test_the_kernels_quaternion_tolerance_is_the_models():
    assert kernels.common.QUATERNION_TOL == QUATERNION_TOL


def few_bodies():
    """More speeds than bodies on a path (a free root and a ball joint below it): the
    kernels' per-path scratch is sized by speeds, not bodies."""
    model = mb.Model()
    model.add_body("a", 2.0, [1.0, 2.0, 2.5])
    model.add_body("b", 1.0, [0.5, 0.6, 0.9])
    model.add_joint("float", "free", "ground", "a", child_point=(0.1, 0.2, 0.0))
    model.add_joint("ball", "spherical", "a", "b", parent_point=(0.5, 0, 0),
                    child_point=(-0.4, 0.1, 0.0))
    return model


MODELS = [("floating", every_kind(True)), ("spherical_root", every_kind(False, seed=1)),
          ("few_bodies", few_bodies())]


@pytest.mark.parametrize("name, model", MODELS)
def test_every_joint_kind_is_packed_for_every_kernel(name, model):
    data = kernels.model_data(model)
    assert data is not None and data.rows
    assert (data.nq, data.nv) == (model.nq, model.nv)
    assert kernels.KERNELS["vereshchagin"].pack(model) is data
    assert kernels.KERNELS["cartesian"].pack(model) is data
    rows = [len(j.spatial_rows()) for j in model.outward_joints("the kernels")]
    assert data.ints[:, kernels.common.I_ROWS].tolist() == rows


@pytest.mark.parametrize("name, model", MODELS)
def test_chapter_2s_kernel_runs_every_joint_kind(name, model):
    """Chapter 2's kernel reads each joint's packed rows (point-plane, perpendicular and
    the screw's row) and recovers every kind's accelerations from its bodies': the
    accelerations and the multipliers equal the NumPy route's (Baraff's LDL^T of the
    assembled KKT system), with joint forces ``tau`` on every kind."""
    q, qd, tau = random_state(model, np.random.default_rng(3), 4)
    want = mb.cartesian.forward_dynamics(model, q, qd, tau, solver="ldlt", compiled=False)
    got = mb.cartesian.forward_dynamics(model, q, qd, tau, solver="ldlt", compiled=True)
    _close(got, want, tol=1e-11, what=f"{name}: qdd")
    _close(mb.vereshchagin.forward_dynamics(model, q, qd, tau), want, tol=1e-11,
           what=f"{name}: chapter 4 against chapter 2")
    order = [j.index for j in model.outward_joints("the kernels")]     # the packed order
    for b in range(q.shape[0]):
        sol = mb.cartesian.solve(model, q[b], qd[b], tau[b], planar=False, solver="ldlt")
        rows = np.concatenate([sol.eq.joint_rows[a] for a in order])
        qdd, lam = np.zeros((1, model.nv)), np.zeros((1, sol.lam.size))
        assert kernels.cartesian.cartesian_solve(*kernels.model_data(model).args(), q[b:b + 1],
                                                 qd[b:b + 1], tau[b:b + 1], qdd, lam)
        _close(lam[0], sol.lam[0, rows], tol=1e-10, what=f"{name}: multipliers")
        _close(qdd[0], want[b], tol=1e-11, what=f"{name}: qdd of cartesian_solve")


@pytest.mark.parametrize("name, model", MODELS)
def test_tree_kernel_runs_every_joint_kind_with_the_chapters_quantities(name, model):
    """p, k per speed (3.101), (3.104), c* (3.150), omega (3.114), eps (3.120) with
    ``w_a``, the centre-of-mass accelerations with ``s_a``, Phi (3.163), A and B (3.167)."""
    q, qd, _ = random_state(model, np.random.default_rng(3), 3)
    data = kernels.model_data(model)
    order = [j.index for j in model.outward_joints("test")]
    for b in range(q.shape[0]):
        _, _, ws = tree_terms(*data.args(), q[b], qd[b])
        tt = mb.tree.terms(model, q[b], qd[b])
        for got, want, what in ((ws.P, tt.P, "p"), (ws.K, tt.K, "k"), (ws.Ab, tt.A, "A"),
                                (ws.Cstar, tt.Cstar[:, order], "c*"),
                                (ws.omega, tt.omega, "omega"),
                                (ws.eps[1:], tt.alpha_bias, "eps"),
                                (ws.U[1:], tt.acc_bias, "U"), (ws.Jv[1:], tt.Jv, "Phi^T"),
                                (ws.Jw[1:], tt.Jw, "-(pT)^T")):
            _close(got, want, what=f"{name}: {what}")
    A, B = np.zeros((3, model.nv, model.nv)), np.zeros((3, model.nv))
    tree_matrices(*data.args(), q, qd, A, B)
    _close(A, mb.tree.mass_matrix(model, q), what="A")
    _close(B, mb.tree.bias_forces(model, q, qd), what="B")


@pytest.mark.parametrize("name, model", MODELS)
def test_vereshchagin_kernel_runs_every_joint_kind_with_the_articulated_quantities(name, model):
    """Multi-speed joints: ``U_k = S^T M* S`` is a block, the articulated ``M*``, ``Q*``
    (3.177)-(3.179) and the accelerations ``w`` equal the NumPy recursion's."""
    q, qd, tau = random_state(model, np.random.default_rng(4), 4)
    n1 = model.n + 1
    qdd, w = np.zeros((4, model.nv)), np.zeros((4, n1, 6))
    M_star, Q_star = np.zeros((4, n1, 6, 6)), np.zeros((4, n1, 6))
    assert vereshchagin_articulated(*kernels.model_data(model).args(), q, qd, tau, qdd, w,
                                    M_star, Q_star)
    qdd_np, w_np, M_np, Q_np = mb.vereshchagin.articulated(model, q, qd, tau)
    _close(qdd, qdd_np, what="qdd")
    _close(w, w_np, what="w")
    _close(M_star[:, 1:], M_np[:, 1:], what="M*")
    _close(Q_star[:, 1:], Q_np[:, 1:], what="Q*")


@pytest.mark.parametrize("name, model", MODELS)
def test_every_compiled_route_agrees_on_every_joint_kind(name, model):
    q, qd, tau = random_state(model, np.random.default_rng(5), 70)   # > PARALLEL_BATCH
    want = mb.tree.forward_dynamics(model, q, qd, tau, compiled=False)
    runs = {"vereshchagin": mb.vereshchagin.forward_dynamics(model, q, qd, tau, compiled=True),
            "tree": mb.tree.forward_dynamics(model, q, qd, tau, compiled=True),
            "composite": mb.tree.forward_dynamics_composite(model, q, qd, tau),
            "one state": mb.vereshchagin.forward_dynamics(model, q[0], qd[0], tau[0],
                                                         compiled=True)[None]}
    for what, got in runs.items():
        _close(got, want[:len(got)], tol=1e-11, what=what)
    p, _ = mb.poisson.momenta(model, q[:3], qd[:3])
    _close(mb.poisson.velocities(model, q[:3], p), qd[:3], tol=1e-11, what="sweep")


def test_the_compiled_route_renormalizes_a_quaternion_or_refuses_it_by_name():
    model = MODELS[0][1]
    q, qd, tau = random_state(model, np.random.default_rng(6), 1)
    q, qd, tau = q[0], qd[0], tau[0]
    near = q.copy()
    near[3:7] *= 1 + 0.5 * QUATERNION_TOL                  # the root's quaternion
    _close(mb.vereshchagin.forward_dynamics(model, near, qd, tau),
           mb.vereshchagin.forward_dynamics(model, q, qd, tau), tol=1e-13)
    _close(mb.tree.forward_dynamics(model, near, qd, tau),
           mb.tree.forward_dynamics(model, q, qd, tau), tol=1e-13)
    far = q.copy()
    far[3:7] *= 1.1
    for f in (mb.vereshchagin.forward_dynamics, mb.tree.forward_dynamics,
              mb.tree.forward_dynamics_composite):
        with pytest.raises(mb.InconsistentStateError, match="quaternion"):
            f(model, far, qd, tau)


@pytest.mark.filterwarnings("ignore:.*mimic joints:UserWarning")
def test_a_floating_base_robot_runs_compiled_and_agrees_with_the_numpy_routes():
    robot = mb.urdf.robot("panda", floating_base=True)
    q, qd, tau = random_state(robot, np.random.default_rng(7), 4)
    want = mb.vereshchagin.forward_dynamics(robot, q, qd, tau, compiled=False)
    _close(mb.vereshchagin.forward_dynamics(robot, q, qd, tau, compiled=True), want, tol=1e-11)
    _close(mb.tree.forward_dynamics(robot, q, qd, tau, compiled=True), want, tol=1e-11)


def _loaded(model):
    """``model`` with constant loads in inertial and body axes at points, a pure torque and
    a joint spring (a stiffness per speed) on every joint whose coordinates are its speeds'
    integrals."""
    bodies = [b.name for b in model.bodies[1:]]
    model.add_force(bodies[2], force=(1.0, 2.0, -0.5), point=(0.1, 0.2, 0.3))
    model.add_force(bodies[2], force=(0.3, -1.0, 0.5), torque=(0.2, 0.1, 0.0),
                    point=(-0.1, 0.4, 0.3), frame="body")
    model.add_force(bodies[-1], torque=(0.5, -0.1, 0.2))
    model.add_force(bodies[0], force=(0.0, 0.0, 3.0), point=(0.2, 0.0, 0.0), frame="body")
    for j in model.joints:
        if j.nq == j.nv and j.nv:
            model.add_joint_spring(j.name, stiffness=2.0 * np.arange(1, j.nv + 1), rest=0.3,
                                   damping=0.4)
    return model


@pytest.mark.parametrize("name, seed", [("floating", 0), ("spherical_root", 1)])
def test_constant_loads_and_joint_springs_run_inside_the_recursions(name, seed):
    model = _loaded(every_kind(name == "floating", seed=seed))
    data = kernels.model_data(model)
    assert data is not None and model.joint_springs
    assert data.body[1:, B_FORCE:B_BASE].any() and data.geo[:, G_SPRING:G_ROWS].any()  # packed
    assert kernels.KERNELS["cartesian"].pack(model) is data
    q, qd, tau = random_state(model, np.random.default_rng(8), 5)
    want = mb.vereshchagin.forward_dynamics(model, q, qd, tau, compiled=False)
    _close(mb.tree.forward_dynamics(model, q, qd, tau, compiled=False), want, tol=1e-11)
    for what, got in (
            ("vereshchagin", mb.vereshchagin.forward_dynamics(model, q, qd, tau, compiled=True)),
            ("tree", mb.tree.forward_dynamics(model, q, qd, tau, compiled=True)),
            ("composite", mb.tree.forward_dynamics_composite(model, q, qd, tau)),
            ("cartesian", mb.cartesian.forward_dynamics(model, q, qd, tau, solver="ldlt",
                                                        compiled=True))):
        _close(got, want, tol=1e-11, what=what)
    A, B = np.zeros((5, model.nv, model.nv)), np.zeros((5, model.nv))
    tree_matrices(*data.args(), q, qd, A, B)          # B: the loads, not the joint springs
    _close(B, mb.tree.bias_forces(model, q, qd) - model.generalized_forces(q, qd), what="B")
    p, _ = mb.poisson.momenta(model, q, qd)           # the sweep sees the inertia alone
    _close(mb.poisson.velocities(model, q, p), qd, tol=1e-11, what="sweep")


def test_an_edited_load_or_spring_never_gives_the_old_answer():
    model = _loaded(every_kind(True, seed=2))
    q, qd, tau = random_state(model, np.random.default_rng(9), 1)
    before = mb.vereshchagin.forward_dynamics(model, q, qd, tau)
    model.joint_springs[0].stiffness = 50.0
    model.add_force(model.bodies[3].name, force=(0.0, 7.0, 0.0), point=(0.3, 0.0, 0.0))
    after = mb.vereshchagin.forward_dynamics(model, q, qd, tau)
    assert np.abs(after - before).max() > 1e-3
    _close(after, mb.vereshchagin.forward_dynamics(model, q, qd, tau, compiled=False),
           tol=1e-11)


def test_loads_given_as_callables_are_evaluated_once_per_configuration_and_run_compiled():
    """Loads that are functions of ``(t, q, qd)`` (inertial and body axes, at a point, a
    callable force beside a constant torque) next to the constant loads and joint springs:
    evaluated in Python on the checked state, added to that configuration's packed loads;
    the recursions give the NumPy routes' answer, a bad callable is named, chapter 2's
    and chapter 6's kernels decline."""
    model = _loaded(every_kind(True, seed=4))
    bodies = [b.name for b in model.bodies[1:]]
    calls = []

    def push(t, q, qd):
        calls.append(t)
        return np.array([np.sin(t) + q[0], -qd[1], 0.5 * q[2]])

    model.add_force(bodies[1], force=push, torque=(0.1, -0.2, 0.3), point=(0.2, -0.1, 0.1),
                    name="push")
    model.add_force(bodies[3], torque=lambda t, q, qd: (qd[0], 0.0, np.cos(t)), frame="body",
                    name="twist")
    data = kernels.model_data(model)
    assert data is not None and data.state_loads and data.callables
    q, qd, tau = random_state(model, np.random.default_rng(11), 4)
    want = mb.vereshchagin.forward_dynamics(model, q, qd, tau, t=0.4, compiled=False)
    _close(mb.tree.forward_dynamics(model, q, qd, tau, t=0.4, compiled=False), want, tol=1e-11)
    calls.clear()
    for what, got in (
            ("vereshchagin", mb.vereshchagin.forward_dynamics(model, q, qd, tau, t=0.4,
                                                              compiled=True)),
            ("tree", mb.tree.forward_dynamics(model, q, qd, tau, t=0.4, compiled=True)),
            ("composite", mb.tree.forward_dynamics_composite(model, q, qd, tau, t=0.4)),
            ("cartesian", mb.cartesian.forward_dynamics(model, q, qd, tau, t=0.4,
                                                        solver="ldlt", compiled=True))):
        _close(got, want, tol=1e-11, what=what)
    assert len(calls) == 4 * 4                          # once per configuration and call
    single = mb.vereshchagin.forward_dynamics(model, q[0], qd[0], tau[0], t=0.4)
    _close(single, want[0], tol=1e-11, what="one configuration")
    model.add_force(bodies[2], force=lambda t, q, qd: np.zeros(2), name="bad")
    with pytest.raises(mb.errors.ShapeError, match="load 'bad': force"):
        mb.vereshchagin.forward_dynamics(model, q, qd, tau, compiled=True)


def test_a_control_law_is_evaluated_once_per_configuration_and_handed_to_the_recursions():
    """A generalized-force callable (a PD law on every speed): evaluated in Python on the
    checked state, added to ``tau``; the kernels give the NumPy routes' answer, the sweep
    ignores it (the inertia alone)."""
    model = every_kind(True, seed=3)
    calls = []

    def law(t, q, qd):
        calls.append(t)
        return -3.0 * qd - 0.5 * np.sin(t) * np.ones(model.nv)

    model.add_generalized_force(law, name="pd")
    q, qd, tau = random_state(model, np.random.default_rng(10), 6)
    want = mb.vereshchagin.forward_dynamics(model, q, qd, tau, t=0.7, compiled=False)
    calls.clear()
    for what, f in (("vereshchagin", mb.vereshchagin.forward_dynamics),
                    ("tree", mb.tree.forward_dynamics)):
        _close(f(model, q, qd, tau, t=0.7, compiled=True), want, tol=1e-11, what=what)
    _close(mb.tree.forward_dynamics_composite(model, q, qd, tau, t=0.7), want, tol=1e-11)
    _close(mb.cartesian.forward_dynamics(model, q, qd, tau, t=0.7, solver="ldlt",
                                         compiled=True), want, tol=1e-11, what="cartesian")
    assert len(calls) == 4 * 6                          # once per configuration and call
    p, _ = mb.poisson.momenta(model, q, qd)
    _close(mb.poisson.velocities(model, q, p), qd, tol=1e-11, what="sweep")
    with pytest.raises(mb.errors.ModelError, match="generalized force 'pd'"):
        bad = every_kind(True, seed=3)
        bad.add_generalized_force(lambda t, q, qd: 1 / 0, name="pd")
        mb.vereshchagin.forward_dynamics(bad, q[0], qd[0])


def test_spring_dampers_run_inside_the_recursions():
    """Spring-dampers between bodies (and to the ground), with the loads and joint springs:
    Vereshchagin's, chapter 3's and the composite-body kernels equal the NumPy routes (B
    too, with the centres' velocities from the derivatives of (3.150)-(3.153)); coinciding
    points are named."""
    model = _loaded(every_kind(True, seed=4))
    model.add_spring("tether", "ground", "b3", point_a=(1.0, 1.0, 0.2), point_b=(0.1, 0, 0),
                     stiffness=20.0, rest_length=0.5, damping=1.5)
    model.add_spring("link", "b1", "b5", point_a=(0.2, 0.0, 0.0), point_b=(0.0, 0.1, 0.1),
                     stiffness=7.0, rest_length=0.3, damping=0.4)
    model.add_spring("soft", "root", "b7", stiffness=3.0)
    data = kernels.model_data(model)
    assert data.body[0, B_SPRINGS] == 3 and kernels.KERNELS["tree"].pack(model) is data
    q, qd, tau = random_state(model, np.random.default_rng(11), 5)
    want = mb.tree.forward_dynamics(model, q, qd, tau, compiled=False)
    _close(mb.vereshchagin.forward_dynamics(model, q, qd, tau, compiled=False), want, tol=1e-11)
    _close(mb.vereshchagin.forward_dynamics(model, q, qd, tau, compiled=True), want, tol=1e-11)
    _close(mb.tree.forward_dynamics_composite(model, q, qd, tau), want, tol=1e-11)
    _close(mb.tree.forward_dynamics(model, q, qd, tau, compiled=True), want, tol=1e-11)
    A, B = np.zeros((5, model.nv, model.nv)), np.zeros((5, model.nv))
    tree_matrices(*data.args(), q, qd, A, B)
    _close(B, mb.tree.bias_forces(model, q, qd) - model.generalized_forces(q, qd), what="B")
    p, _ = mb.poisson.momenta(model, q, qd)
    _close(mb.poisson.velocities(model, q, p), qd, tol=1e-11, what="sweep")
    governor = mb.models.flyball_governor()
    assert governor.springs and kernels.model_data(governor) is not None
    qg, qdg = mb.models.flyball_governor_state(governor, spin=3.0)
    _close(mb.vereshchagin.forward_dynamics(governor, qg, qdg, compiled=True),
           mb.vereshchagin.forward_dynamics(governor, qg, qdg, compiled=False), tol=1e-11)
    bad = mb.models.double_pendulum()                   # a spring whose ends meet
    bad.add_spring("zero", 1, 2, point_a=(0.5, 0, 0), point_b=(-0.5, 0, 0), stiffness=1.0,
                   rest_length=0.2)
    for f in (mb.vereshchagin.forward_dynamics, mb.tree.forward_dynamics):
        with pytest.raises(mb.SingularSystemError, match="spring 'zero'"):
            f(bad, np.zeros(2), np.zeros(2))


def test_a_zero_dimensional_input_is_named_not_an_index_error():
    model = mb.models.double_pendulum()
    for q, qd in ((np.zeros(2), np.array(0.0)), (np.array(0.0), np.zeros(2))):
        with pytest.raises(mb.ShapeError):
            mb.vereshchagin.forward_dynamics(model, q, qd)


def _rz(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _moving_base(model):
    """A base turning about z with a growing rate and its origin on a cubic path, every
    entry consistent with its derivative (``BaseMotion`` checks)."""
    model.set_base_motion(
        orientation=lambda t: _rz(0.3 * t * t),
        angular_velocity=lambda t: np.array([0.0, 0.0, 0.6 * t]),
        angular_acceleration=lambda t: np.array([0.0, 0.0, 0.6]),
        position=lambda t: np.array([0.1 * t, 0.2 * t * t, -0.05 * t ** 3]),
        velocity=lambda t: np.array([0.1, 0.4 * t, -0.15 * t * t]),
        acceleration=lambda t: np.array([0.0, 0.4, -0.3 * t]))
    return model


def test_a_prescribed_base_motion_runs_in_the_kernels():
    """The base's orientation, angular velocity and the position and velocity of its origin
    start the kinematics pass, its accelerations the outward pass (chapter 2's kernel moves
    them to the right-hand side of the rows on the base): Vereshchagin's, chapter 3's, the
    composite-body and chapter 2's kernels equal both NumPy recursions (every joint kind,
    loads, joint springs, a spring-damper to the moving ground) at several times, one state
    or a batch; the sweep leaves the model to its NumPy route, and a simulation (with the
    dissipated energy) equals the NumPy one."""
    model = _moving_base(_loaded(every_kind(False, seed=5)))
    model.add_spring("to ground", "ground", model.bodies[2].name, point_a=(0.2, 0.1, 0.3),
                     point_b=(0.1, 0.0, 0.0), stiffness=30.0, rest_length=0.2, damping=1.5)
    data = kernels.model_data(model)
    assert data.base_moves
    q, qd, tau = random_state(model, np.random.default_rng(12), 4)
    for t in (0.0, 0.7, 1.9):
        want = mb.vereshchagin.forward_dynamics(model, q, qd, tau, t=t, compiled=False)
        _close(mb.tree.forward_dynamics(model, q, qd, tau, t=t), want, tol=1e-11, what="tree")
        _close(mb.vereshchagin.forward_dynamics(model, q, qd, tau, t=t, compiled=True), want,
               tol=1e-11, what=f"kernel at t={t}")
        _close(mb.vereshchagin.forward_dynamics(model, q[1], qd[1], tau[1], t=t), want[1],
               tol=1e-11, what=f"one state at t={t}")
        _close(mb.tree.forward_dynamics(model, q, qd, tau, t=t, compiled=True), want,
               tol=1e-11, what=f"tree kernel at t={t}")
        _close(mb.tree.forward_dynamics_composite(model, q, qd, tau, t=t), want,
               tol=1e-11, what=f"composite kernel at t={t}")
        cartesian = [mb.cartesian.forward_dynamics(model, q, qd, tau, t=t, solver="ldlt",
                                                   compiled=compiled) for compiled in (True, False)]
        _close(cartesian[0], want, tol=1e-11, what=f"chapter 2's kernel at t={t}")
        _close(cartesian[1], want, tol=1e-11, what=f"chapter 2's NumPy route at t={t}")
    assert kernels.route(model, "poisson", q, qd, tau, 0.7, what="x",
                         check=lambda: None) == (None, None)
    q0, qd0 = q[0], qd[0]
    runs = [mb.vereshchagin.simulate(model, (0.0, 0.2), q0, qd0, rtol=1e-10, atol=1e-10,
                                     compiled=compiled) for compiled in (True, False)]
    _close(runs[0].q[-1], runs[1].q[-1], tol=1e-8, what="simulation")
    assert runs[0].dissipated[-1] > 0.0
    _close(runs[0].dissipated[-1:], runs[1].dissipated[-1:], tol=1e-8, what="dissipated")
