"""The Model contract: validation of every bad input, joint kinematics (G, z, p, k, w, s)
against finite differences, body kinematics and energy against independent routes."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import mbcourse as mb
from mbcourse.errors import MbcourseError, ModelError, ShapeError, TopologyError
from mbcourse.spatial import is_rotation, vee
from strategies import random_model, random_q, random_state, unit

KINDS = ["revolute", "prismatic", "screw", "cylindrical", "universal", "spherical", "free",
         "fixed"]


# ---------------------------------------------------------------- joint kinematics
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(8))
def test_joint_axis_vectors_match_finite_differences(kind, seed):
    rng = np.random.default_rng(seed)
    model = random_model(rng, [kind])
    joint = model.joints[0]
    q = random_q(joint, rng)
    v = rng.normal(size=joint.nv)
    h = 1e-6

    def moved(sign):
        return q + sign * h * joint.qdot(q, v)

    R = joint.rotation(q)
    assert is_rotation(R)
    np.testing.assert_allclose(joint.G(q), R.T)
    Rdot = (joint.rotation(moved(1)) - joint.rotation(moved(-1))) / (2 * h)
    omega = vee(Rdot @ R.T)  # relative angular velocity, parent axes
    np.testing.assert_allclose(joint.p(q) @ v, omega, atol=1e-7)
    zdot = (joint.z(moved(1)) - joint.z(moved(-1))) / (2 * h)
    np.testing.assert_allclose(joint.k(q) @ v, zdot, atol=1e-7)
    # bias terms: time derivative of p(q) v and k(q) v at constant v
    w, s = joint.bias(q, v)
    pdot_v = (joint.p(moved(1)) @ v - joint.p(moved(-1)) @ v) / (2 * h)
    kdot_v = (joint.k(moved(1)) @ v - joint.k(moved(-1)) @ v) / (2 * h)
    np.testing.assert_allclose(w, pdot_v, atol=1e-6)
    np.testing.assert_allclose(s, kdot_v, atol=1e-6)
    # the neutral configuration is the given orientation with z = 0
    np.testing.assert_allclose(joint.rotation(joint.neutral()), joint.orientation, atol=1e-15)
    np.testing.assert_allclose(joint.z(joint.neutral()), 0.0, atol=1e-15)


@pytest.mark.parametrize("kind", KINDS)
def test_joint_functions_broadcast_over_a_batch(kind):
    rng = np.random.default_rng(1)
    joint = random_model(rng, [kind]).joints[0]
    Q = np.array([random_q(joint, rng) for _ in range(5)])
    V = rng.normal(size=(5, joint.nv))
    for fn, shape in [(joint.rotation, (3, 3)), (joint.z, (3,)), (joint.p, (3, joint.nv)),
                      (joint.k, (3, joint.nv))]:
        batch = fn(Q)
        assert batch.shape == (5,) + shape
        np.testing.assert_allclose(batch[3], fn(Q[3]), atol=1e-15)
    w, s = joint.bias(Q, V)
    np.testing.assert_allclose(w[2], joint.bias(Q[2], V[2])[0], atol=1e-15)
    np.testing.assert_allclose(joint.qdot(Q, V)[4], joint.qdot(Q[4], V[4]), atol=1e-15)


def test_revolute_and_prismatic_conventions():
    model = mb.Model()
    model.add_body("a", 1.0, [1, 1, 1])
    model.add_body("b", 1.0, [1, 1, 1])
    rev = model.add_joint("r", "revolute", "ground", "a", axis=(0, 0, 2))
    pri = model.add_joint("p", "prismatic", "a", "b", axis=(3, 0, 0))
    np.testing.assert_allclose(rev.rotation([np.pi / 2]) @ [1, 0, 0], [0, 1, 0], atol=1e-15)
    np.testing.assert_allclose(pri.z([0.7]), [0.7, 0, 0])
    assert model.q_names == ["r.angle", "p.displacement"]
    screw = mb.Model()
    screw.add_body("nut", 1.0, [1, 1, 1])
    j = screw.add_joint("s", "screw", "ground", "nut", axis=(0, 0, 1), lead=0.01)
    np.testing.assert_allclose(j.z([2 * np.pi]), [0, 0, 0.01])


# ----------------------------------------------------------------- body kinematics
@given(st.lists(st.sampled_from(KINDS), min_size=1, max_size=6), st.integers(0, 2**31),
       st.sets(st.integers(0, 5), max_size=3))
def test_body_velocities_match_finite_differences(kinds, seed, reverse):
    rng = np.random.default_rng(seed)
    model = random_model(rng, kinds, reverse={r for r in reverse if r < len(kinds)})
    q, v = random_state(model, rng)
    h = 1e-6
    qd = model.qdot(q, v)
    r1, A1 = model.body_poses(q + h * qd)
    r0, A0 = model.body_poses(q - h * qd)
    r, A = model.body_poses(q)
    vel, omega = model.body_velocities(q, v)
    scale = 1.0 + np.abs(vel).max()
    np.testing.assert_allclose(vel, (r1 - r0) / (2 * h), atol=2e-6 * scale)
    Adot = (A1 - A0) / (2 * h)
    np.testing.assert_allclose(omega, vee(Adot @ np.swapaxes(A, -1, -2)), atol=2e-6 * scale)
    # every joint closes: the two joint points coincide up to z (3.8)
    for j in model.joints:
        pj = r[j.parent] + A[j.parent] @ (j.parent_point + j.z(q[j.q_slice]))
        cj = r[j.child] + A[j.child] @ j.child_point
        np.testing.assert_allclose(pj, cj, atol=1e-12)
        np.testing.assert_allclose(A[j.child], A[j.parent] @ j.rotation(q[j.q_slice]), atol=1e-12)


def test_kinetic_energy_double_pendulum_closed_form():
    m1, m2, L1, a1, a2, J1, J2 = 1.3, 0.7, 1.1, 0.4, 0.6, 0.09, 0.05
    model = mb.Model(gravity=(0, -9.81, 0))
    model.add_body("upper", m1, [0.01, J1, J1])
    model.add_body("lower", m2, [0.01, J2, J2])
    model.add_joint("A", "revolute", "ground", "upper", child_point=(-a1, 0, 0), axis=(0, 0, 1))
    model.add_joint("B", "revolute", "upper", "lower", parent_point=(L1 - a1, 0, 0),
                    child_point=(-a2, 0, 0), axis=(0, 0, 1))
    rng = np.random.default_rng(0)
    Q = rng.uniform(-3, 3, size=(50, 2))
    V = rng.normal(size=(50, 2))
    t1, t2 = Q.T
    w1, w2 = V.T
    T = (0.5 * (J1 + m1 * a1**2) * w1**2 + 0.5 * J2 * (w1 + w2) ** 2
         + 0.5 * m2 * (L1**2 * w1**2 + a2**2 * (w1 + w2) ** 2
                       + 2 * L1 * a2 * w1 * (w1 + w2) * np.cos(t2)))
    np.testing.assert_allclose(model.kinetic_energy(Q, V), T, rtol=1e-13)
    U = 9.81 * (m1 * a1 * np.sin(t1) + m2 * (L1 * np.sin(t1) + a2 * np.sin(t1 + t2)))
    np.testing.assert_allclose(model.potential_energy(Q), U, rtol=1e-12, atol=1e-12)


def test_reversed_joint_gives_the_same_motion():
    """Walking a joint against its direction (i- nearer the base) is consistent."""
    rng = np.random.default_rng(3)
    fwd = mb.Model()
    rev = mb.Model()
    for m in (fwd, rev):
        m.add_body("a", 1.0, [1, 2, 2.5])
    axis, pp, cp = unit(rng), rng.normal(size=3), rng.normal(size=3)
    fwd.add_joint("j", "revolute", "ground", "a", parent_point=pp, child_point=cp, axis=axis)
    # the same joint seen from the body: parent and child swap, R -> R^T (angle -> -angle)
    rev.add_joint("j", "revolute", "a", "ground", parent_point=cp, child_point=pp, axis=axis)
    for angle in (0.3, -1.2):
        r1, A1 = fwd.body_poses([angle])
        r2, A2 = rev.body_poses([-angle])
        np.testing.assert_allclose(r1, r2, atol=1e-14)
        np.testing.assert_allclose(A1, A2, atol=1e-14)
        v1 = fwd.body_velocities([angle], [0.8])
        v2 = rev.body_velocities([-angle], [-0.8])
        np.testing.assert_allclose(v1[0], v2[0], atol=1e-14)
        np.testing.assert_allclose(v1[1], v2[1], atol=1e-14)


def test_batches_equal_single_calls():
    rng = np.random.default_rng(7)
    model = random_model(rng, ["revolute", "spherical", "prismatic", "universal", "free"])
    states = [random_state(model, rng) for _ in range(4)]
    Q = np.array([s[0] for s in states])
    V = np.array([s[1] for s in states])
    r, A = model.body_poses(Q)
    vel, omega = model.body_velocities(Q, V)
    T = model.kinetic_energy(Q, V)
    assert r.shape == (4, 6, 3) and A.shape == (4, 6, 3, 3) and T.shape == (4,)
    for b, (q, v) in enumerate(states):
        np.testing.assert_allclose(r[b], model.body_poses(q)[0], atol=1e-14)
        np.testing.assert_allclose(omega[b], model.body_velocities(q, v)[1], atol=1e-14)
        assert T[b] == pytest.approx(float(model.kinetic_energy(q, v)), rel=1e-14)


def test_applied_wrenches_gravity_and_loads():
    model = mb.Model(gravity=(0, 0, -9.81))
    model.add_body("a", 2.0, [1, 1, 1])
    model.add_joint("j", "revolute", "ground", "a", child_point=(-1, 0, 0), axis=(0, 0, 1))
    model.add_force("a", force=(0, 1.0, 0), point=(1, 0, 0), frame="body")
    model.add_force("a", torque=lambda t, q, qd: (0, 0, t))
    F, M = model.applied_wrenches([np.pi / 2], t=2.0)
    # body x axis points along world y at q = pi/2: the body force (0,1,0) is world (-1,0,0)
    np.testing.assert_allclose(F[1], [-1.0, 0, -2 * 9.81], atol=1e-12)
    # moment of the offset force: arm (0,1,0) x (-1,0,0) = (0,0,1), plus the torque (0,0,2)
    np.testing.assert_allclose(M[1], [0, 0, 3.0], atol=1e-12)
    np.testing.assert_allclose(F[0], 0.0)


def test_prescribed_base_motion():
    model = mb.Model()
    model.add_body("a", 1.0, [1, 1, 1])
    model.add_joint("j", "revolute", "ground", "a", child_point=(-1, 0, 0), axis=(0, 0, 1))
    model.set_base_motion(position=lambda t: (np.sin(t), 0, 0),
                          velocity=lambda t: (np.cos(t), 0, 0),
                          acceleration=lambda t: (-np.sin(t), 0, 0))
    r, _ = model.body_poses([0.0], t=np.pi / 2)
    np.testing.assert_allclose(r[1], [2.0, 0, 0], atol=1e-12)
    vel, _ = model.body_velocities([0.0], [1.0], t=0.0)
    np.testing.assert_allclose(vel[1], [1.0, 1.0, 0.0], atol=1e-12)
    with pytest.raises(ModelError, match="velocity at t=0"):
        model.set_base_motion(position=lambda t: (t, 0, 0))  # velocity missing: inconsistent
    with pytest.raises(ModelError, match="orientation turns at"):
        model.set_base_motion(orientation=lambda t: mb.spatial.axis_angle([0, 0, 1], t))
    spin = model.set_base_motion(orientation=lambda t: mb.spatial.axis_angle([0, 0, 1], t),
                                 angular_velocity=(0, 0, 1.0))
    assert spin.state(1.0)["orientation"][1, 0] == pytest.approx(np.sin(1.0))
    with pytest.raises(ModelError, match="unknown base-motion entry"):
        model.set_base_motion(speed=(1, 0, 0))


def test_a_loop_is_allowed_and_visible_in_the_graph():
    model = mb.Model()
    for name in ("crank", "coupler", "rocker"):
        model.add_body(name, 1.0, [0.1, 0.1, 0.1])
    model.add_joint("A", "revolute", "ground", "crank", axis=(0, 0, 1))
    model.add_joint("B", "revolute", "crank", "coupler", axis=(0, 0, 1))
    model.add_joint("C", "revolute", "coupler", "rocker", axis=(0, 0, 1))
    model.add_joint("D", "revolute", "ground", "rocker", parent_point=(1, 0, 0), axis=(0, 0, 1))
    g = model.graph
    assert not g.is_tree and g.spanning_tree()[1].tolist() == [2]
    with pytest.raises(TopologyError, match="spanning_tree"):
        g.T
    r, _ = model.body_poses(np.zeros(4))  # poses follow the spanning tree
    assert r.shape == (4, 3)


# ----------------------------------------------------------------------- bad input
def _model():
    m = mb.Model()
    m.add_body("a", 1.0, [1, 1, 1])
    m.add_body("b", 1.0, [1, 1, 1])
    return m


BAD_BODIES = [
    (dict(name="a", mass=1.0, inertia=[1, 1, 1]), ModelError, "body 'a' already exists"),
    (dict(name="ground", mass=1.0, inertia=[1, 1, 1]), ModelError, "'ground' already exists"),
    (dict(name="", mass=1.0, inertia=[1, 1, 1]), ModelError, "non-empty"),
    (dict(name="c", mass=-2, inertia=[1, 1, 1]), ModelError,
     "body 'c': mass must be a non-negative finite number, got -2"),
    (dict(name="c", mass=float("nan"), inertia=[1, 1, 1]), ModelError, "non-negative finite"),
    (dict(name="c", mass="1", inertia=[1, 1, 1]), ModelError, "non-negative finite number"),
    (dict(name="c", mass=1.0, inertia=[[1, 0.1, 0], [0, 1, 0], [0, 0, 1]]), ModelError,
     "body 'c': inertia must be symmetric"),
    (dict(name="c", mass=1.0, inertia=[1, -1, 1]), ModelError, "positive semi-definite"),
    (dict(name="c", mass=1.0, inertia=[1, 1, -1e-9]), ModelError, "positive semi-definite"),
    (dict(name="c", mass=1.0, inertia=[1, 1, 3]), ModelError, "triangle inequality"),
    (dict(name="c", mass=1.0, inertia=np.eye(2)), ShapeError, "body 'c': inertia must be a 3x3"),
    (dict(name="c", mass=1.0, inertia=[1, 1, np.inf]), ModelError, "finite"),
    (dict(name="c", mass=1.0, inertia="heavy"), ShapeError, "3x3"),
]


@pytest.mark.parametrize("kwargs, error, match", BAD_BODIES)
def test_bad_bodies(kwargs, error, match):
    with pytest.raises(error, match=match):
        _model().add_body(**kwargs)


BAD_JOINTS = [
    (dict(name="j", kind="hinge", parent="ground", child="a", axis=(0, 0, 1)), ModelError,
     "unknown kind 'hinge'; valid kinds"),
    (dict(name="j", kind="revolute", parent="sky", child="a", axis=(0, 0, 1)), ModelError,
     "joint 'j': unknown parent 'sky'"),
    (dict(name="j", kind="revolute", parent="ground", child="c", axis=(0, 0, 1)), ModelError,
     "unknown child 'c'"),
    (dict(name="j", kind="revolute", parent="a", child="a", axis=(0, 0, 1)), TopologyError,
     "joint 'j' connects body 'a' to itself"),
    (dict(name="j", kind="revolute", parent="ground", child="a", axis=(0, 0, 0)), ModelError,
     "joint 'j': axis must be a nonzero"),
    (dict(name="j", kind="revolute", parent="ground", child="a"), ModelError, "needs axis"),
    (dict(name="j", kind="revolute", parent="ground", child="a", axis=(0, 1)), ShapeError,
     "axis must have shape"),
    (dict(name="j", kind="spherical", parent="ground", child="a", axis=(0, 0, 1)), ModelError,
     "only revolute, prismatic, screw and cylindrical joints take axis="),
    (dict(name="j", kind="universal", parent="ground", child="a", axes=((0, 0, 1), (0, 0, 2))),
     ModelError, "must not be parallel"),
    (dict(name="j", kind="universal", parent="ground", child="a"), ModelError, "needs axes"),
    (dict(name="j", kind="screw", parent="ground", child="a", axis=(0, 0, 1)), ModelError,
     "nonzero lead"),
    (dict(name="j", kind="revolute", parent="ground", child="a", axis=(0, 0, 1),
          parent_point=(0, np.nan, 0)), ShapeError, "parent_point must be finite"),
    (dict(name="j", kind="revolute", parent="ground", child="a", axis=(0, 0, 1),
          orientation=np.diag([1, 1, -1])), ModelError, "rotation matrix"),
    (dict(name="j", kind="revolute", parent="ground", child="a", axis=(0, 0, 1), lead=1.0),
     ModelError, "only screw joints"),
]


@pytest.mark.parametrize("kwargs, error, match", BAD_JOINTS)
def test_bad_joints(kwargs, error, match):
    with pytest.raises(error, match=match):
        _model().add_joint(**kwargs)


def test_second_joint_between_the_same_pair_and_duplicate_names():
    m = _model()
    m.add_joint("j", "revolute", "ground", "a", axis=(0, 0, 1))
    with pytest.raises(TopologyError, match="already joined by 'j'; the book's rule"):
        m.add_joint("k", "prismatic", "a", "ground", axis=(1, 0, 0))
    with pytest.raises(ModelError, match="joint 'j' already exists"):
        m.add_joint("j", "revolute", "a", "b", axis=(0, 0, 1))


def test_unconnected_body_is_named():
    m = _model()
    m.add_joint("j", "revolute", "ground", "a", axis=(0, 0, 1))
    with pytest.raises(TopologyError, match=r"bodies \['b'\] are not connected to 'ground'"):
        m.graph
    with pytest.raises(TopologyError, match="not connected"):
        m.body_poses([0.0])
    with pytest.raises(TopologyError, match="no joints"):
        mb.Model().validate()


def test_bad_state_vectors_are_named():
    m = _model()
    m.add_joint("j", "revolute", "ground", "a", axis=(0, 0, 1))
    m.add_joint("k", "spherical", "a", "b")
    assert (m.nq, m.nv) == (5, 4)
    with pytest.raises(ShapeError, match=r"q must have shape \(5,\) or \(\.\.\., 5\)"):
        m.body_poses(np.zeros(4))
    with pytest.raises(ShapeError, match=r"q\[2\] \(k.qx\) is nan"):
        m.body_poses([0, 1, np.nan, 0, 0])
    with pytest.raises(ShapeError, match=r"qd\[1, 3\] \(k.wz\) is inf"):
        m.body_velocities(m.neutral_q(), [[0, 0, 0, 0], [0, 0, 0, np.inf]])
    with pytest.raises(ShapeError, match="tau must have shape"):
        m.check_tau(np.zeros(5))
    with pytest.raises(ShapeError, match="array of 4 numbers"):
        m.check_qd("fast")
    with pytest.raises(ShapeError):
        m.check_q(3.0)
    assert np.array_equal(m.check_tau(None), np.zeros(4))


def test_bad_loads_and_base():
    m = _model()
    with pytest.raises(ModelError, match="no effect"):
        m.add_force("ground", force=(1, 0, 0))
    with pytest.raises(ModelError, match="'world' or 'body'"):
        m.add_force("a", force=(1, 0, 0), frame="space")
    with pytest.raises(ModelError, match=r"load 'push': force: a force callable takes \(t, q, qd\)"):
        m.add_force("a", force=lambda t: (1, 0, 0), name="push")
    m.add_force("a", force=lambda t, q, qd: (1, 0), name="short")
    with pytest.raises(ShapeError, match=r"load 'short': force must return a finite array of shape \(3,\)"):
        m.add_joint("j", "revolute", "ground", "a", axis=(0, 0, 1))
        m.add_joint("k", "revolute", "a", "b", axis=(0, 0, 1))
        m.applied_wrenches(m.neutral_q())
    with pytest.raises(ModelError, match="already exists"):
        m.add_force("a", force=(1, 0, 0), name="short")
    with pytest.raises(ModelError, match="needs force"):
        m.add_force("a")
    with pytest.raises(ModelError, match="non-empty"):
        mb.Model(base="")


def test_every_error_is_an_mbcourse_error():
    for cls in (ModelError, TopologyError, ShapeError, mb.errors.SingularSystemError,
                mb.errors.InconsistentStateError):
        assert issubclass(cls, MbcourseError)


def test_the_old_speed_names_still_work_with_a_deprecation_warning():
    """``qd`` names the speeds everywhere; ``v_names`` and ``check_v`` stay one release."""
    m = mb.models.double_pendulum()
    assert m.qd_names == ["A.angle", "B.angle"]
    with pytest.warns(DeprecationWarning, match="use Model.qd_names"):
        assert m.v_names == m.qd_names
    with pytest.warns(DeprecationWarning, match="use Model.check_qd"):
        assert m.check_v([1.0, 2.0]).tolist() == [1.0, 2.0]
    with pytest.warns(DeprecationWarning, match="use Joint.qd_names"):
        assert m.joints[0].v_names == ("angle",)
    q, qd = [0.3, 0.2], [1.0, -0.5]
    T = m.kinetic_energy(q, qd)
    assert m.kinetic_energy(q=q, qd=qd) == T
    assert np.array_equal(m.body_velocities(q=q, qd=qd)[0], m.body_velocities(q, qd)[0])
    assert np.array_equal(m.qdot(q=q, qd=qd), qd)


def test_model_wrappers_equal_the_cores_on_checked_arrays():
    """The Model/data split: each wrapper checks once and returns exactly the core's answer."""
    from mbcourse import energy, forces, poses

    m = mb.models.double_pendulum()
    m.add_spring("k", "ground", "rod2", point_a=(0.3, 0.4, 0.0), stiffness=20.0,
                 rest_length=0.2, damping=0.3)
    m.add_joint_spring("A", stiffness=2.0, rest=0.1, damping=0.2)
    q, qd = m.check_q([[0.3, 0.2], [0.1, -0.4]]), m.check_qd([1.0, -0.5])
    assert np.array_equal(m.body_poses(q)[0], poses.body_poses(m, q)[0])
    assert np.array_equal(m.body_velocities(q, qd)[1], poses.body_velocities(m, q, qd)[1])
    assert np.array_equal(m.kinetic_energy(q, qd), energy.kinetic_energy(m, q, qd))
    assert np.array_equal(m.potential_energy(q), energy.potential_energy(m, q))
    assert np.array_equal(m.applied_wrenches(q, qd=qd)[0], forces.applied_wrenches(m, q, qd)[0])
    assert np.array_equal(m.generalized_forces(q, qd), forces.generalized_forces(m, q, qd))
    assert np.array_equal(m.damping_power(q, qd), forces.damping_power(m, q, qd))
    assert np.all(m.damping_power(q, qd) < 0)
