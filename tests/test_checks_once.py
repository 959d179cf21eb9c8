"""Every public call checks its state exactly once (issue 26, item 1).

``Model`` describes; the evaluation lives in free functions over already-checked arrays
(``mbcourse.poses``, ``mbcourse.forces``, ``mbcourse.energy``). A public entry calls
``mbcourse.state.check_q`` -- the one check -- once, then only the unchecked cores. This test
counts those calls for every public entry of every formulation, on a gravity-only model and
on a loaded one (a load, a spring-damper, a joint spring and a control law: the NumPy
routes), and checks that ragged lists are named errors.
"""

import numpy as np
import pytest

import mbcourse as mb
import mbcourse.state
from mbcourse.errors import ShapeError


@pytest.fixture
def count(monkeypatch):
    """Number of input checks during ``f(*args)``: calls of the one check function, plus the
    compiled route's fast acceptance of float64 arrays (``mbcourse.kernels.fast_arrays``
    returning arrays), which takes the place of the check on that route."""
    calls = {"n": 0}
    original = mbcourse.state.check_q

    def counted(model, q):
        calls["n"] += 1
        return original(model, q)

    monkeypatch.setattr(mbcourse.state, "check_q", counted)
    import mbcourse.kernels as kernels

    fast = getattr(kernels, "fast_arrays", None)
    if fast is not None:
        def counted_fast(*args, **kwargs):
            out = fast(*args, **kwargs)
            calls["n"] += out is not None
            return out

        monkeypatch.setattr(kernels, "fast_arrays", counted_fast)

    def run(f, *args, **kwargs):
        calls["n"] = 0
        f(*args, **kwargs)
        return calls["n"]

    return run


def _load(m, body):
    m.add_force(body, force=lambda t, q, qd: np.array([1.0, 0.5 * q[0], 0.0]),
                point=(0.1, 0.0, 0.0))
    m.add_spring("k", "ground", body, point_a=(0.3, 0.4, 0.0), stiffness=20.0,
                 rest_length=0.2, damping=0.3)
    m.add_joint_spring(m.joints[0].name, stiffness=2.0, rest=0.1, damping=0.2)
    m.add_generalized_force(lambda t, q, qd: -0.1 * qd)
    return m


def _pendulum(loaded):
    m = mb.models.double_pendulum()
    return _load(m, "rod2") if loaded else m


def _crank(loaded):
    m = mb.models.crank_slider()
    return _load(m, m.bodies[2].name) if loaded else m


PENDULUM_CALLS = {
    "tree.forward_dynamics": lambda m, q, qd: mb.tree.forward_dynamics(m, q, qd, [0.1, 0.0]),
    "tree.forward_dynamics_composite":
        lambda m, q, qd: mb.tree.forward_dynamics_composite(m, q, qd),
    "tree.inverse_dynamics": lambda m, q, qd: mb.tree.inverse_dynamics(m, q, qd, [0.2, 0.1]),
    "tree.mass_matrix": lambda m, q, qd: mb.tree.mass_matrix(m, q),
    "tree.bias_forces": lambda m, q, qd: mb.tree.bias_forces(m, q, qd),
    "tree.terms": lambda m, q, qd: mb.tree.terms(m, q, qd),
    "tree.jacobians": lambda m, q, qd: mb.tree.jacobians(m, q),
    "tree.driven": lambda m, q, qd: mb.tree.driven(m, q, qd, {0: 0.5}),
    "tree.planar.forward_dynamics": lambda m, q, qd: mb.tree.planar.forward_dynamics(m, q, qd),
    "tree.planar.mass_matrix": lambda m, q, qd: mb.tree.planar.mass_matrix(m, q),
    "tree.planar.absolute_angles": lambda m, q, qd: mb.tree.planar.absolute_angles(m, q, qd),
    "vereshchagin.forward_dynamics":
        lambda m, q, qd: mb.vereshchagin.forward_dynamics(m, q, qd, [0.1, 0.0]),
    "vereshchagin.articulated": lambda m, q, qd: mb.vereshchagin.articulated(m, q, qd),
    "cartesian.forward_dynamics": lambda m, q, qd: mb.cartesian.forward_dynamics(m, q, qd),
    "cartesian.reactions": lambda m, q, qd: mb.cartesian.reactions(m, q, qd),
    "cartesian.solve": lambda m, q, qd: mb.cartesian.solve(m, q, qd),
    "cartesian.equations": lambda m, q, qd: mb.cartesian.equations(m, q, qd),
    "cartesian.body_states": lambda m, q, qd: mb.cartesian.body_states(m, q, qd),
    "loops.forward_dynamics": lambda m, q, qd: mb.loops.forward_dynamics(m, q, qd),
    "loops.solve": lambda m, q, qd: mb.loops.solve(m, q, qd),
    "loops.reactions": lambda m, q, qd: mb.loops.reactions(m, q, qd),
    "loops.kinematics": lambda m, q, qd: mb.loops.kinematics(m, q, qd),
    "poisson.momenta": lambda m, q, qd: mb.poisson.momenta(m, q, qd),
    "poisson.velocities": lambda m, q, qd: mb.poisson.velocities(m, q, qd),
    "poisson.pdot": lambda m, q, qd: mb.poisson.pdot(m, q, qd),
    "poisson.generalized_forces": lambda m, q, qd: mb.poisson.generalized_forces(m, q, qd),
    "inertial.decompose_numeric": lambda m, q, qd: mb.inertial.decompose_numeric(m, q, qd),
    "inertial.mass_matrix_derivatives":
        lambda m, q, qd: mb.inertial.mass_matrix_derivatives(m, q),
    "kinematics.frame_pose": lambda m, q, qd: mb.kinematics.frame_pose(m, q, "rod2"),
    "kinematics.point_velocity": lambda m, q, qd: mb.kinematics.point_velocity(m, q, qd, "rod2"),
    "kinematics.point_acceleration":
        lambda m, q, qd: mb.kinematics.point_acceleration(m, q, qd, qd, "rod2"),
    "kinematics.frame_velocity": lambda m, q, qd: mb.kinematics.frame_velocity(m, q, qd, "rod2"),
    "kinematics.frame_acceleration":
        lambda m, q, qd: mb.kinematics.frame_acceleration(m, q, qd, qd, "rod2"),
    "kinematics.jacobian": lambda m, q, qd: mb.kinematics.jacobian(m, q, "rod2"),
    "kinematics.jacobian_dot": lambda m, q, qd: mb.kinematics.jacobian_dot(m, q, qd, "rod2"),
    "Model.body_poses": lambda m, q, qd: m.body_poses(q),
    "Model.body_velocities": lambda m, q, qd: m.body_velocities(q, qd),
    "Model.kinetic_energy": lambda m, q, qd: m.kinetic_energy(q, qd),
    "Model.potential_energy": lambda m, q, qd: m.potential_energy(q),
    "Model.applied_wrenches": lambda m, q, qd: m.applied_wrenches(q, qd=qd),
    "Model.generalized_forces": lambda m, q, qd: m.generalized_forces(q, qd),
    "Model.damping_power": lambda m, q, qd: m.damping_power(q, qd),
    "Model.qdot": lambda m, q, qd: m.qdot(q, qd),
    "Model.check_state": lambda m, q, qd: m.check_state(q, qd),
}

CRANK_CALLS = {
    "cartesian.forward_dynamics": lambda m, q, qd: mb.cartesian.forward_dynamics(m, q, qd),
    "cartesian.reactions": lambda m, q, qd: mb.cartesian.reactions(m, q, qd),
    "cartesian.solve": lambda m, q, qd: mb.cartesian.solve(m, q, qd),
    "loops.forward_dynamics": lambda m, q, qd: mb.loops.forward_dynamics(m, q, qd),
    "loops.solve": lambda m, q, qd: mb.loops.solve(m, q, qd),
    "loops.reactions": lambda m, q, qd: mb.loops.reactions(m, q, qd),
    "loops.kinematics": lambda m, q, qd: mb.loops.kinematics(m, q, qd),
}


GRAVITY_ONLY = {"tree.forward_dynamics_composite"}  # refuses other loads by design


def _cases(names):
    return [pytest.param(loaded, n, id=f"{n}-{'loaded' if loaded else 'gravity'}")
            for loaded in (False, True) for n in sorted(names)
            if not (loaded and n in GRAVITY_ONLY)]


@pytest.mark.parametrize("loaded, name", _cases(PENDULUM_CALLS))
def test_a_pendulum_call_checks_q_once(count, name, loaded):
    m = _pendulum(loaded)
    assert count(PENDULUM_CALLS[name], m, np.array([0.3, 0.2]), np.array([0.1, -0.2])) == 1


@pytest.mark.parametrize("batch", [False, True], ids=["single", "batch"])
@pytest.mark.parametrize("loaded, name", _cases(CRANK_CALLS))
def test_a_closed_loop_call_checks_q_once(count, name, loaded, batch):
    m = _crank(loaded)
    q, qd = mb.models.crank_slider_state(m, 0.3, 1.0)
    if batch:
        q, qd = np.stack([q, q]), np.stack([qd, qd])
    assert count(CRANK_CALLS[name], m, q, qd) == 1


@pytest.mark.parametrize("loaded", [False, True], ids=["gravity", "loaded"])
def test_a_floating_call_checks_q_once(count, loaded):
    m = mb.models.floating_spacecraft()
    if loaded:
        m.add_generalized_force(lambda t, q, qd: np.r_[np.zeros(6), -0.1 * qd[6:]])
    q, qd = m.neutral_q(), np.full(m.nv, 0.1)
    assert count(mb.tree.floating.forward_dynamics, m, q, qd) == 1
    assert count(mb.tree.floating.floating_matrices, m, q, qd) == 1
    assert count(mb.tree.forward_dynamics, m, q, qd) == 1


# ------------------------------------------------------------------ ragged lists
def test_a_ragged_inertia_is_a_named_shape_error():
    m = mb.models.double_pendulum()
    with pytest.raises(ShapeError, match=r"body 'x': inertia must be a 3x3 tensor.*ragged"):
        m.add_body("x", 1.0, [[1, 0, 0], [0, 1]])


@pytest.mark.parametrize("call", [
    lambda m, q: m.check_q(q),
    lambda m, q: m.body_poses(q),
    lambda m, q: mb.tree.forward_dynamics(m, q, [0.0, 0.0]),
    lambda m, q: mb.cartesian.forward_dynamics(m, q, [0.0, 0.0]),
    lambda m, q: m.normalize_q(q),
])
def test_a_ragged_q_is_a_named_shape_error(call):
    m = mb.models.double_pendulum()
    with pytest.raises(ShapeError, match=r"^q must be an array of 2 numbers \(A.angle, B.angle\)"
                                         r".*ragged list"):
        call(m, [[0.1, 0.2], [0.3]])


@pytest.mark.parametrize("call, what", [
    (lambda m: m.add_joint("j", "revolute", "ground", "rod2", axis=[[0, 0], [1]]), "axis"),
    (lambda m: m.add_joint("j", "revolute", "ground", "rod2", axis=(0, 0, 1),
                           orientation=[[1, 0, 0], [0, 1]]), "orientation"),
    (lambda m: m.add_force("rod1", force=[[1, 2], [3]]), "force"),
    (lambda m: m.add_spring("k", "ground", "rod1", point_a=[[1], [2, 3]]), "point_a"),
    (lambda m: m.add_joint_spring("A", stiffness=[[1], [2, 3]]), "stiffness"),
    (lambda m: mb.Model(gravity=[[1], [2, 3]]), "gravity"),
    (lambda m: m.q_from_dict({"A.angle": [[1, 2], [3]], "B.angle": 0.0}), "A.angle"),
    (lambda m: m.check_state([0.1, 0.2], [[0.1, 0.2], [0.3]]), "qd"),
    (lambda m: m.check_state([0.1, 0.2], [0.0, 0.0], [[0.1, 0.2], [0.3]]), "tau"),
])
def test_ragged_lists_anywhere_are_named_shape_errors(call, what):
    m = mb.models.double_pendulum()
    with pytest.raises(ShapeError, match=f"{what}.*ragged list"):
        call(m)
