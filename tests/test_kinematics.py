"""mb.kinematics: poses, velocities, accelerations and Jacobians of any body point, held to
finite differences, to the Model's own body kinematics and to the tree formulation; and the
Model's summary and coordinate dictionaries."""

import numpy as np
import pytest

import mbcourse as mb
from mbcourse.errors import InconsistentStateError, ModelError, ShapeError
from mbcourse.spatial import vee
from strategies import moving_base, random_model, random_state

kin = mb.kinematics

ALL = ["revolute", "prismatic", "screw", "cylindrical", "universal", "spherical", "free",
       "fixed"]
# each list holds a spherical, a free, a prismatic and a universal joint; reverse= makes
# some joints point toward the base, so the walk goes through them backwards
CASES = [
    (ALL, ()),
    (["free", "spherical", "universal", "prismatic", "revolute", "screw"], (2, 4)),
    (["spherical", "prismatic", "universal", "free", "cylindrical", "fixed", "revolute"],
     (0, 3, 5)),
]
H = 1e-6


def shift(model, q, v, h):
    """``q`` moved by ``h`` along the speeds ``v`` (quaternions renormalized)."""
    return model.normalize_q(q + h * model.qdot(q, v))


def case(i, seed):
    rng = np.random.default_rng(seed)
    kinds, reverse = CASES[i]
    model = random_model(rng, kinds, reverse=reverse)
    q, qd = random_state(model, rng)
    return model, q, qd, rng.normal(size=model.nv), rng.normal(size=3), rng


MAX = {}  # largest deviations seen, printed by the last test (pytest -s)


def record(name, err):
    MAX[name] = max(MAX.get(name, 0.0), float(err))
    return err


# ------------------------------------------------------------------ Jacobians
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("i", range(len(CASES)))
def test_jacobian_equals_finite_differences_of_the_pose(i, seed):
    model, q, _, _, point, _ = case(i, seed)
    for body in range(model.n + 1):
        J = kin.jacobian(model, q, body, point)
        assert J.shape == (6, model.nv)
        P, R = kin.frame_pose(model, q, body, point)
        for k, e in enumerate(np.eye(model.nv)):
            Pp, Rp = kin.frame_pose(model, shift(model, q, e, H), body, point)
            Pm, Rm = kin.frame_pose(model, shift(model, q, e, -H), body, point)
            lin = (Pp - Pm) / (2 * H)
            ang = vee((Rp - Rm) / (2 * H) @ R.T)
            assert record("J linear vs FD", np.abs(J[:3, k] - lin).max()) < 1e-7
            assert record("J angular vs FD", np.abs(J[3:, k] - ang).max()) < 1e-7


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("i", range(len(CASES)))
def test_velocity_is_J_qd_and_the_models_body_velocities(i, seed):
    model, q, qd, _, point, _ = case(i, seed)
    r, A = model.body_poses(q)
    vel, omega = model.body_velocities(q, qd)
    for body in range(model.n + 1):
        J = kin.jacobian(model, q, body, point)
        v, w = kin.frame_velocity(model, q, qd, body, point)
        np.testing.assert_allclose(v, kin.point_velocity(model, q, qd, body, point), rtol=0,
                                   atol=0)
        assert record("v vs J qd", np.abs(np.concatenate([v, w]) - J @ qd).max()) < 1e-12
        vc, wc = kin.frame_velocity(model, q, qd, model.bodies[body].name)
        assert record("COM v vs body_velocities", np.abs(vc - vel[body]).max()) < 1e-12
        assert np.abs(wc - omega[body]).max() < 1e-12
        P, R = kin.frame_pose(model, q, body, point)
        assert record("pose vs body_poses",
                      max(np.abs(P - r[body] - A[body] @ point).max(),
                          np.abs(R - A[body]).max())) < 1e-12


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("i", range(len(CASES)))
def test_jacobian_dot_equals_finite_differences_of_J_along_qd(i, seed):
    model, q, qd, qdd, point, _ = case(i, seed)
    for body in range(1, model.n + 1):
        Jd = kin.jacobian_dot(model, q, qd, body, point)
        fd = (kin.jacobian(model, shift(model, q, qd, H), body, point)
              - kin.jacobian(model, shift(model, q, qd, -H), body, point)) / (2 * H)
        assert record("Jdot vs FD", np.abs(Jd - fd).max()) < 1e-6 * (1 + np.abs(fd).max())
        # and the accelerations are J qdd + Jdot qd
        a, eps = kin.frame_acceleration(model, q, qd, qdd, body, point)
        J = kin.jacobian(model, q, body, point)
        assert record("a vs J qdd + Jdot qd",
                      np.abs(np.concatenate([a, eps]) - J @ qdd - Jd @ qd).max()) < 1e-11


def trajectory(model, q, qd, qdd, h):
    """A state at time ``h`` along q + qd h + qdd h^2 / 2 (through qdot for quaternions)."""
    return shift(model, q, qd + 0.5 * h * qdd, h), qd + h * qdd


@pytest.mark.parametrize("base", [False, True])
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("i", range(len(CASES)))
def test_accelerations_equal_finite_differences_of_velocities(i, seed, base):
    model, q, qd, qdd, point, _ = case(i, seed)
    if base:
        moving_base(model)
    t, h = 0.4, 1e-5
    for body in range(model.n + 1):
        a, eps = kin.frame_acceleration(model, q, qd, qdd, body, point, t=t)
        assert np.array_equal(a, kin.point_acceleration(model, q, qd, qdd, body, point, t=t))
        vp, wp = kin.frame_velocity(model, *trajectory(model, q, qd, qdd, h), body, point,
                                    t=t + h)
        vm, wm = kin.frame_velocity(model, *trajectory(model, q, qd, qdd, -h), body, point,
                                    t=t - h)
        scale = 1 + np.abs(a).max() + np.abs(eps).max()
        assert record("a vs FD of v", np.abs(a - (vp - vm) / (2 * h)).max()) < 1e-7 * scale
        assert record("eps vs FD of omega",
                      np.abs(eps - (wp - wm) / (2 * h)).max()) < 1e-7 * scale


@pytest.mark.parametrize("seed", range(3))
def test_a_moving_base_adds_its_own_motion_to_J_qd(seed):
    model, q, qd, _, point, _ = case(1, seed)
    moving_base(model)
    t = 0.7
    base = model.base_motion.state(t)
    for body in range(model.n + 1):
        P, _ = kin.frame_pose(model, q, body, point, t=t)
        v, w = kin.frame_velocity(model, q, qd, body, point, t=t)
        J = kin.jacobian(model, q, body, point, t=t)
        expected_v = J[:3] @ qd + base["velocity"] + np.cross(base["angular_velocity"],
                                                              P - base["position"])
        np.testing.assert_allclose(v, expected_v, atol=1e-12)
        np.testing.assert_allclose(w, J[3:] @ qd + base["angular_velocity"], atol=1e-12)
        vel, omega = model.body_velocities(q, qd, t=t)
        np.testing.assert_allclose(kin.point_velocity(model, q, qd, body, t=t), vel[body],
                                   atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_agrees_with_the_tree_jacobians(seed):
    rng = np.random.default_rng(seed)
    model = random_model(rng, ALL)
    q, _ = random_state(model, rng)
    Jv, Jw = mb.tree.general.jacobians(model, q)
    for body in range(1, model.n + 1):
        J = kin.jacobian(model, q, body)
        assert record("J vs tree.general.jacobians",
                      max(np.abs(J[:3] - Jv[body - 1]).max(),
                          np.abs(J[3:] - Jw[body - 1]).max())) < 1e-12


@pytest.mark.parametrize("name", ["spatial_manipulator", "double_pendulum", "triple_pendulum",
                                  "floating_spacecraft"])
def test_catalogue_models(name):
    model = getattr(mb.models, name)()
    rng = np.random.default_rng(3)
    q = model.normalize_q(model.neutral_q() + 0.3 * rng.normal(size=model.nq))
    qd = rng.normal(size=model.nv)
    Jv, Jw = mb.tree.general.jacobians(model, q)
    vel, omega = model.body_velocities(q, qd)
    for body in model.bodies[1:]:
        J = kin.jacobian(model, q, body.name)
        np.testing.assert_allclose(J[:3], Jv[body.index - 1], atol=1e-12)
        np.testing.assert_allclose(J[3:], Jw[body.index - 1], atol=1e-12)
        np.testing.assert_allclose(kin.point_velocity(model, q, qd, body), vel[body.index],
                                   atol=1e-12)


def test_closed_loops_use_the_spanning_tree_like_body_poses():
    model = mb.models.four_bar()
    q, qd = mb.models.four_bar_state(model, 0.4, 1.3)
    r, A = model.body_poses(q)
    vel, omega = model.body_velocities(q, qd)
    for body in range(model.n + 1):
        P, R = kin.frame_pose(model, q, body)
        np.testing.assert_allclose(P, r[body], atol=1e-12)
        np.testing.assert_allclose(R, A[body], atol=1e-12)
        v, w = kin.frame_velocity(model, q, qd, body)
        np.testing.assert_allclose(v, vel[body], atol=1e-12)
        np.testing.assert_allclose(w, omega[body], atol=1e-12)
        np.testing.assert_allclose(kin.jacobian(model, q, body) @ qd, np.concatenate([v, w]),
                                   atol=1e-12)


def test_batches_of_any_shape():
    model, q, qd, qdd, point, rng = case(0, 7)
    Q = np.array([[shift(model, q, rng.normal(size=model.nv), 0.3) for _ in range(3)]
                  for _ in range(2)])
    QD = qd + rng.normal(size=(3, model.nv))  # broadcasts against (2, 3)
    body = "b5"
    out = {
        "pose": kin.frame_pose(model, Q, body, point),
        "vel": kin.frame_velocity(model, Q, QD, body, point),
        "acc": kin.frame_acceleration(model, Q, QD, qdd, body, point),
        "J": (kin.jacobian(model, Q, body, point),),
        "Jd": (kin.jacobian_dot(model, Q, QD, body, point),),
    }
    assert out["pose"][0].shape == (2, 3, 3) and out["pose"][1].shape == (2, 3, 3, 3)
    assert out["J"][0].shape == (2, 3, 6, model.nv) == out["Jd"][0].shape
    single = {
        "pose": kin.frame_pose(model, Q[1, 2], body, point),
        "vel": kin.frame_velocity(model, Q[1, 2], QD[2], body, point),
        "acc": kin.frame_acceleration(model, Q[1, 2], QD[2], qdd, body, point),
        "J": (kin.jacobian(model, Q[1, 2], body, point),),
        "Jd": (kin.jacobian_dot(model, Q[1, 2], QD[2], body, point),),
    }
    for key in out:
        for batched, one in zip(out[key], single[key]):
            np.testing.assert_allclose(batched[1, 2], one, rtol=1e-13, atol=1e-13)


def test_the_ground_and_bodies_off_the_path():
    model = mb.models.double_pendulum()
    J = kin.jacobian(model, [0.3, 0.2], "rod1")
    assert np.all(J[:, 1] == 0)  # the elbow does not move the upper rod
    assert np.all(kin.jacobian(model, [0.3, 0.2], "ground") == 0)
    P, R = kin.frame_pose(model, [0.3, 0.2], "ground", point=(1.0, 2.0, 3.0))
    np.testing.assert_array_equal(P, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(R, np.eye(3))


def test_a_changed_model_gives_the_fresh_answer():
    model = mb.models.double_pendulum()
    before = kin.frame_pose(model, [0.0, 0.0], "rod2")[0]
    model.joint("B").parent_point = (0.8, 0.0, 0.0)
    after = kin.frame_pose(model, [0.0, 0.0], "rod2")[0]
    np.testing.assert_allclose(after - before, [0.3, 0.0, 0.0], atol=1e-14)


# ------------------------------------------------------------------ bad input
def test_bad_input_names_the_argument_and_what_is_valid():
    m = mb.models.double_pendulum()
    with pytest.raises(ModelError, match=r"jacobian: unknown body 'rod3'; known bodies: "
                                         r"\['ground', 'rod1', 'rod2'\]"):
        kin.jacobian(m, [0.0, 0.0], "rod3")
    for bad in (3, -1, True, 1.0, None):
        with pytest.raises(ModelError, match="unknown body"):
            kin.frame_pose(m, [0.0, 0.0], bad)
    with pytest.raises(ModelError, match="unknown body"):  # a body of another model
        kin.frame_pose(m, [0.0, 0.0], mb.models.triple_pendulum().bodies[1])
    with pytest.raises(ShapeError, match=r"point_velocity: point on body 'rod2' must have "
                                         r"shape \(3,\).*got shape \(2,\)"):
        kin.point_velocity(m, [0.0, 0.0], [0.0, 0.0], "rod2", (1.0, 2.0))
    with pytest.raises(ShapeError, match=r"frame_pose: point on body 'rod1' must be finite"):
        kin.frame_pose(m, [0.0, 0.0], "rod1", (np.nan, 0.0, 0.0))
    with pytest.raises(ShapeError, match="must be 3 numbers"):
        kin.frame_pose(m, [0.0, 0.0], "rod1", "abc")
    with pytest.raises(ShapeError, match="point on body 'rod1' must be 3 real numbers"):
        kin.frame_pose(m, [0.0, 0.0], "rod1", (1j, 0, 0))
    with pytest.raises(ShapeError, match=r"q\[1\] \(B.angle\) is nan"):
        kin.jacobian(m, [0.0, np.nan], "rod2")
    with pytest.raises(ShapeError, match=r"qdd\[0\] \(A.angle\) is inf"):
        kin.point_acceleration(m, [0.0, 0.0], [0.0, 0.0], [np.inf, 0.0], "rod2")
    with pytest.raises(ShapeError, match=r"q must have shape \(2,\) or \(\.\.\., 2\)"):
        kin.jacobian_dot(m, [0.0], [0.0, 0.0], "rod2")
    with pytest.raises(ShapeError, match=r"q has shape \(5, 2\), qd has shape \(4, 2\)"):
        kin.frame_velocity(m, np.zeros((5, 2)), np.zeros((4, 2)), "rod2")
    with pytest.raises(ShapeError, match="t must be a finite real number"):
        kin.frame_pose(m, [0.0, 0.0], "rod2", t=np.nan)
    ball = mb.Model()
    ball.add_body("a", 1.0, [1, 1, 1])
    ball.add_joint("ball", "spherical", "ground", "a")
    with pytest.raises(InconsistentStateError, match="joint 'ball'"):
        kin.jacobian(ball, [2.0, 0.0, 0.0, 0.0], "a")
    with pytest.raises(ShapeError, match=r"qd must have shape \(3,\)"):  # qd is nv long
        kin.point_velocity(ball, [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], "a")


# ------------------------------------------------------- summary and dictionaries
def test_summary_lists_bodies_and_joints():
    model = random_model(np.random.default_rng(0), ALL)
    text = model.summary()
    assert str(model) == text
    assert text.splitlines()[0] == (f"Model: 8 bodies, 8 joints, nq={model.nq}, "
                                    f"nv={model.nv}, gravity={model.gravity.tolist()}")
    for j in model.joints:
        line = next(line for line in text.splitlines() if line.split()[1:2] == [j.name])
        assert j.kind in line and model.bodies[j.child].name in line
        assert ", ".join(j.coordinate_names) in line
    for b in model.bodies[1:]:
        assert any(line.split()[1:3] == [b.name, f"{b.mass:g}"] for line in text.splitlines())
    html = model._repr_html_()
    assert html.count("<table>") == 2 and "spherical" in html
    loop = mb.models.four_bar().summary()
    assert "(closes a loop)" in loop
    assert "Model: 0 bodies, 0 joints" in mb.Model().summary()
    assert repr(model).startswith("Model(8 bodies")  # repr unchanged


def test_coordinate_dictionaries_round_trip():
    model, q, qd, _, _, rng = case(1, 0)
    d = model.q_to_dict(q)
    assert list(d) == model.q_names and all(isinstance(x, float) for x in d.values())
    np.testing.assert_allclose(model.q_from_dict(d), q, rtol=1e-15)
    np.testing.assert_allclose(model.q_from_dict(dict(reversed(d.items()))), q, rtol=1e-15)
    dv = model.qd_to_dict(qd)
    assert list(dv) == model.qd_names
    np.testing.assert_array_equal(model.qd_from_dict(dv), qd)
    Q = np.array([q, q, q])
    dq = model.q_to_dict(Q)
    assert all(x.shape == (3,) for x in dq.values())
    np.testing.assert_allclose(model.q_from_dict(dq), Q, rtol=1e-15)
    # partial: missing coordinates take neutral_q, missing speeds zero
    name = model.qd_names[2]
    qd_partial = model.qd_from_dict({name: 2.5}, partial=True)
    assert qd_partial[2] == 2.5 and np.count_nonzero(qd_partial) == 1
    np.testing.assert_array_equal(model.q_from_dict({}, partial=True), model.neutral_q())


def test_coordinate_dictionaries_name_missing_and_unknown_coordinates():
    m = mb.models.double_pendulum()
    with pytest.raises(ShapeError, match=r"q: missing coordinate\(s\) \['A.angle'\]; give "
                                         r"every one of \['A.angle', 'B.angle'\] or pass "
                                         r"partial=True"):
        m.q_from_dict({"B.angle": 0.1})
    with pytest.raises(ShapeError, match=r"qd: unknown coordinate name\(s\) \['C.angle'\]; "
                                         r"the names of this model are"):
        m.qd_from_dict({"A.angle": 0.0, "B.angle": 0.0, "C.angle": 1.0})
    with pytest.raises(ShapeError, match=r"unknown coordinate name\(s\) \['C.angle'\]"):
        m.q_from_dict({"C.angle": 1.0}, partial=True)  # partial never hides a typo
    with pytest.raises(ShapeError, match=r"q\['A.angle'\] must be a number"):
        m.q_from_dict({"A.angle": "x", "B.angle": 0.0})
    with pytest.raises(ShapeError, match=r"q\[0\] \(A.angle\) is nan"):
        m.q_from_dict({"A.angle": np.nan, "B.angle": 0.0})
    with pytest.raises(ShapeError, match="must be a dict"):
        m.q_from_dict([0.1, 0.2])
    with pytest.raises(ShapeError, match="do not broadcast"):
        m.q_from_dict({"A.angle": [1.0, 2.0], "B.angle": [1.0, 2.0, 3.0]})
    with pytest.raises(ShapeError, match=r"qd must have shape \(2,\)"):
        m.qd_to_dict([1.0, 2.0, 3.0])
    ball = mb.Model()
    ball.add_body("a", 1.0, [1, 1, 1])
    ball.add_joint("ball", "spherical", "ground", "a")
    with pytest.raises(InconsistentStateError, match="joint 'ball'"):
        ball.q_from_dict({"ball.qx": 1.0}, partial=True)  # (1, 1, 0, 0) is no unit quaternion


def test_report_largest_deviations():
    """Runs last: prints the largest deviations recorded above (visible with pytest -s)."""
    for name, err in sorted(MAX.items()):
        print(f"{name:32s} {err:.2e}")
