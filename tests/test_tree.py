"""Chapter 3 (general joints): mb.tree against the independent reference, the Cartesian
formulation, the kinetic energy and the book's identities."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mbcourse as mb
from mbcourse.errors import ShapeError, TopologyError
import reference
from test_cartesian import ALL_SPATIAL, random_state, random_tree, four_bar, four_bar_state
from test_vereshchagin import _inward_model


@settings(max_examples=60)
@given(st.lists(st.sampled_from(ALL_SPATIAL), min_size=1, max_size=7), st.integers(0, 2**31))
def test_tree_agrees_with_reference_and_cartesian(kinds, seed):
    rng = np.random.default_rng(seed)
    model = random_tree(rng, kinds)
    q, qd = random_state(model, rng)
    tau = rng.normal(size=model.nv)
    A = mb.tree.mass_matrix(model, q)
    np.testing.assert_allclose(A, reference.mass_matrix(model, q), atol=1e-11 * (1 + np.abs(A).max(initial=0)))
    expected = reference.forward_dynamics(model, q, qd, tau)
    scale = 1.0 + np.abs(expected).max(initial=0.0)
    got = mb.tree.forward_dynamics(model, q, qd, tau)
    np.testing.assert_allclose(got, expected, atol=1e-9 * scale)
    np.testing.assert_allclose(got, mb.cartesian.forward_dynamics(model, q, qd, tau),
                               atol=1e-9 * scale)
    np.testing.assert_allclose(mb.tree.inverse_dynamics(model, q, qd, got), tau,
                               atol=1e-8 * (1 + np.abs(tau).max(initial=0)))


@settings(max_examples=30)
@given(st.lists(st.sampled_from(["revolute", "prismatic"]), min_size=1, max_size=8),
       st.integers(0, 2**31))
def test_planar_trees(kinds, seed):
    rng = np.random.default_rng(seed)
    model = random_tree(rng, kinds, planar=True)
    q, qd = random_state(model, rng)
    expected = reference.forward_dynamics(model, q, qd)
    np.testing.assert_allclose(mb.tree.forward_dynamics(model, q, qd), expected,
                               atol=1e-9 * (1 + np.abs(expected).max()))


@pytest.mark.parametrize("seed", range(6))
def test_mass_matrix_energy_and_positions(seed):
    rng = np.random.default_rng(seed)
    model = random_tree(rng, ["revolute", "universal", "prismatic", "spherical", "cylindrical",
                              "free"])
    q, qd = random_state(model, rng)
    A = mb.tree.mass_matrix(model, q)
    np.testing.assert_allclose(A, A.T, atol=1e-12)
    assert np.linalg.eigvalsh(A).min() > 0
    assert 0.5 * qd @ A @ qd == pytest.approx(float(model.kinetic_energy(q, qd)), rel=1e-12)
    # (3.14)/(3.153): r_j = r_0 - sum_k d*_kj, and the angular velocities of (3.114)
    tt = mb.tree.terms(model, q, qd)
    r, _ = model.body_poses(q)
    np.testing.assert_allclose(r[1:] - r[0], -tt.dstar.sum(axis=0), atol=1e-12)
    _, omega = model.body_velocities(q, qd)
    np.testing.assert_allclose(tt.omega, omega, atol=1e-12)


def test_batches_and_base_motion():
    rng = np.random.default_rng(11)
    model = random_tree(rng, ["revolute", "spherical", "prismatic", "universal"])
    model.set_base_motion(position=lambda t: (0.1 * np.sin(2 * t), 0, 0),
                          velocity=lambda t: (0.2 * np.cos(2 * t), 0, 0),
                          acceleration=lambda t: (-0.4 * np.sin(2 * t), 0, 0),
                          orientation=lambda t: mb.spatial.axis_angle([0, 1, 0], 0.5 * t),
                          angular_velocity=(0, 0.5, 0))
    states = [random_state(model, rng) for _ in range(5)]
    Q = np.array([s[0] for s in states])
    V = np.array([s[1] for s in states])
    batch = mb.tree.forward_dynamics(model, Q, V, t=0.4)
    assert batch.shape == (5, model.nv)
    for b, (q, v) in enumerate(states):
        single = mb.tree.forward_dynamics(model, q, v, t=0.4)
        np.testing.assert_allclose(batch[b], single, atol=1e-12)
        np.testing.assert_allclose(single, reference.forward_dynamics(model, q, v, t=0.4),
                                   atol=1e-8 * (1 + np.abs(single).max()))
    assert mb.tree.mass_matrix(model, Q).shape == (5, model.nv, model.nv)


@pytest.mark.parametrize("seed", range(4))
def test_driven_coordinates_reproduce_the_prescribed_motion(seed):
    """(3.92)-(3.94): feeding the actuator force back gives the prescribed acceleration."""
    rng = np.random.default_rng(seed)
    model = random_tree(rng, ["revolute", "revolute", "prismatic", "revolute"])
    q, qd = random_state(model, rng)
    tau = rng.normal(size=model.nv)
    prescribed = {1: 0.7, 2: -1.3}
    qdd, actuator = mb.tree.driven(model, q, qd, prescribed, tau=tau)
    assert qdd[1] == 0.7 and qdd[2] == -1.3
    full_tau = tau.copy()
    full_tau[[1, 2]] += actuator
    np.testing.assert_allclose(mb.tree.forward_dynamics(model, q, qd, full_tau), qdd, atol=1e-9)
    np.testing.assert_allclose(reference.inverse_dynamics(model, q, qd, qdd), full_tau,
                               atol=1e-8 * (1 + np.abs(full_tau).max()))


def test_loops_and_bad_input_are_refused():
    m = four_bar()
    q, qd = four_bar_state(0.3, 0.1)
    with pytest.raises(TopologyError, match=r"joints \['C'\] close loops.*mb.cartesian"):
        mb.tree.forward_dynamics(m, q, qd)
    dp = mb.models.double_pendulum()
    with pytest.raises(ShapeError, match="qd must have shape"):
        mb.tree.forward_dynamics(dp, [0, 0], [0, 0, 0])
    with pytest.raises(ShapeError, match="qdd"):
        mb.tree.inverse_dynamics(dp, [0, 0], [0, 0], [np.nan, 0])
    with pytest.raises(ShapeError, match="prescribed"):
        mb.tree.driven(dp, [0, 0], [0, 0], {5: 1.0})


# ------------------------------------------------------------------ force elements
ALL_KINDS = ["revolute", "prismatic", "screw", "universal", "cylindrical", "spherical", "free",
             "fixed"]


def add_force_elements(model, rng):
    """Spring-dampers (ground-body and body-body), joint spring-dampers on every joint whose
    speeds are coordinate rates, a load and a generalized force that depend on (t, q, qd)."""
    n = model.n
    model.add_spring("tether", "ground", n, point_a=rng.normal(size=3) + 2.0,
                     point_b=rng.normal(size=3), stiffness=rng.uniform(5, 20),
                     rest_length=rng.uniform(0.2, 1.0), damping=rng.uniform(0.2, 1.0))
    if n > 1:
        model.add_spring("link", 1, n, point_a=rng.normal(size=3), point_b=rng.normal(size=3),
                         stiffness=rng.uniform(5, 20), rest_length=rng.uniform(0.1, 0.5),
                         damping=rng.uniform(0.2, 1.0))
    for j in model.joints:
        if j.nv and j.quaternion is None:
            model.add_joint_spring(j.name, stiffness=rng.uniform(1, 5, j.nv),
                                   rest=rng.normal(size=j.nv), damping=rng.uniform(0.1, 0.5))
    model.add_force(int(rng.integers(1, n + 1)), frame="body", point=rng.normal(size=3),
                    force=lambda t, q, qd: np.array([np.sin(t), q[0], -0.5 * qd[0]]),
                    torque=lambda t, q, qd: np.array([0.2, -0.1 * qd[-1], np.cos(t) * q[-1]]))
    model.add_generalized_force(lambda t, q, qd: -0.3 * qd + 0.1 * np.sin(t), name="drive")
    return model


@pytest.mark.parametrize("seed", range(8))
def test_force_elements_agree_in_every_tree_form(seed):
    """Springs with dampers, joint springs and (t, q, qd) loads: the general form, the K
    form and the independent Jourdain reference give the same accelerations."""
    from strategies import random_model, random_state as state_of
    rng = np.random.default_rng(300 + seed)
    kinds = [str(k) for k in rng.choice(ALL_KINDS, size=int(rng.integers(2, 6)))]
    if all(k == "fixed" for k in kinds):
        kinds[0] = "screw"
    model = add_force_elements(random_model(rng, kinds, reverse=(1,)), rng)
    q, qd = state_of(model, rng)
    tau = rng.normal(size=model.nv)
    t = 0.7
    expected = reference.forward_dynamics(model, q, qd, tau, t=t)
    scale = 1.0 + np.abs(expected).max()
    np.testing.assert_allclose(mb.tree.forward_dynamics(model, q, qd, tau, t=t), expected,
                               atol=1e-9 * scale)
    np.testing.assert_allclose(mb.tree.spherical.forward_dynamics(model, q, qd, tau, t=t),
                               expected, atol=1e-9 * scale)
    # the actuators' share: inverse(forward) is the identity with every force element present
    np.testing.assert_allclose(mb.tree.inverse_dynamics(model, q, qd, expected, t=t), tau,
                               atol=1e-8 * (1 + np.abs(tau).max()))
    qdd = rng.normal(size=model.nv)
    tau_qdd = mb.tree.inverse_dynamics(model, q, qd, qdd, t=t)
    np.testing.assert_allclose(tau_qdd, reference.inverse_dynamics(model, q, qd, qdd, t=t),
                               atol=1e-8 * (1 + np.abs(tau_qdd).max()))
    np.testing.assert_allclose(mb.tree.forward_dynamics(model, q, qd, tau_qdd, t=t), qdd,
                               atol=1e-9 * (1 + np.abs(qdd).max()))
    # B holds every force element: A qdd = B + tau
    A = mb.tree.mass_matrix(model, q, t=t)
    np.testing.assert_allclose(A @ expected, mb.tree.bias_forces(model, q, qd, t=t) + tau,
                               atol=1e-9 * scale * (1 + np.abs(A).max()))
    # driven coordinates see the springs too: feeding the actuator back reproduces qdd
    qdd_d, act = mb.tree.driven(model, q, qd, {0: 0.3}, tau=tau, t=t)
    full = tau.copy()
    full[0] += act[0]
    np.testing.assert_allclose(mb.tree.forward_dynamics(model, q, qd, full, t=t), qdd_d,
                               atol=1e-9 * (1 + np.abs(qdd_d).max()))


def test_batches_of_any_shape_in_every_public_function():
    rng = np.random.default_rng(5)
    model = add_force_elements(random_tree(rng, ["revolute", "universal", "prismatic",
                                                 "spherical"]), rng)
    states = [random_state(model, rng) for _ in range(6)]
    Q = np.array([s[0] for s in states]).reshape(2, 3, model.nq)
    QD = np.array([s[1] for s in states]).reshape(2, 3, model.nv)
    tau = rng.normal(size=(3, model.nv))  # broadcasts against (2, 3)
    nv, n = model.nv, model.n
    fd = mb.tree.forward_dynamics(model, Q, QD, tau, t=0.2)
    assert fd.shape == (2, 3, nv)
    np.testing.assert_allclose(fd[1, 2], mb.tree.forward_dynamics(model, Q[1, 2], QD[1, 2],
                                                                  tau[2], t=0.2), atol=1e-12)
    np.testing.assert_allclose(mb.tree.spherical.forward_dynamics(model, Q, QD, tau, t=0.2), fd,
                               atol=1e-9 * (1 + np.abs(fd).max()))
    assert mb.tree.inverse_dynamics(model, Q, QD, fd, t=0.2).shape == (2, 3, nv)
    np.testing.assert_allclose(mb.tree.inverse_dynamics(model, Q, QD, fd, t=0.2),
                               np.broadcast_to(tau, (2, 3, nv)), atol=1e-8)
    assert mb.tree.mass_matrix(model, Q).shape == (2, 3, nv, nv)
    assert mb.tree.bias_forces(model, Q, QD).shape == (2, 3, nv)
    qdd, act = mb.tree.driven(model, Q, QD, {0: np.arange(6.0).reshape(2, 3), 2: 0.5})
    assert qdd.shape == (2, 3, nv) and act.shape == (2, 3, 2)
    assert qdd[1, 2, 0] == 5.0 and np.all(qdd[..., 2] == 0.5)
    tt = mb.tree.terms(model, Q, QD)
    assert tt.Jv.shape == (2, 3, n, nv, 3) and tt.dstar.shape == (2, 3, n + 1, n, 3)
    Jv, Jw = mb.tree.jacobians(model, Q)
    assert Jv.shape == Jw.shape == (2, 3, n, 3, nv)
    assert mb.tree.spherical.K_matrix(model, Q).shape == (2, 3, 3 * n, 3 * n)
    assert mb.tree.spherical.M0(model, Q, QD).shape == (2, 3, n, 3)
    with pytest.raises(ShapeError, match=r"q has shape \(2, 3, 8\), qd has shape \(4, 7\)"):
        mb.tree.spherical.forward_dynamics(model, Q, np.zeros((4, nv)))
    with pytest.raises(ShapeError, match="prescribed"):
        mb.tree.driven(model, Q, QD, {0: np.zeros(4)})


def test_keyword_only_time_and_one_vocabulary():
    dp = mb.models.double_pendulum()
    with pytest.raises(TypeError):
        mb.tree.forward_dynamics(dp, [0, 0], [0, 0], None, 0.5)   # t is keyword-only
    with pytest.raises(TypeError):
        mb.tree.mass_matrix(dp, [0, 0], 0.5)
    import inspect
    for fn in (mb.tree.forward_dynamics, mb.tree.spherical.forward_dynamics,
               mb.tree.floating.forward_dynamics, mb.tree.planar.forward_dynamics):
        params = inspect.signature(fn).parameters
        assert list(params)[:4] == ["model", "q", "qd", "tau"]
        assert params["t"].kind is inspect.Parameter.KEYWORD_ONLY
    assert list(inspect.signature(mb.tree.inverse_dynamics).parameters)[:4] == \
        ["model", "q", "qd", "qdd"]


def test_prepared_data_follows_the_model():
    """A change after a call gives the fresh answer (prepared data keyed on the version)."""
    rng = np.random.default_rng(8)
    model = random_tree(rng, ["revolute", "prismatic", "universal"])
    q, qd = random_state(model, rng)
    data = mb.tree.prepare(model)
    assert mb.tree.prepare(model) is data
    before = mb.tree.forward_dynamics(model, q, qd)
    model.body("b1").mass = 3.1
    model.joint("j3").child_point = (0.3, -0.2, 0.9)
    assert mb.tree.prepare(model) is not data
    after = mb.tree.forward_dynamics(model, q, qd)
    np.testing.assert_allclose(after, reference.forward_dynamics(model, q, qd),
                               atol=1e-9 * (1 + np.abs(after).max()))
    assert np.abs(after - before).max() > 1e-6


def test_compiled_tree_equations_equal_the_numpy_assembly():
    """The composite-body kernel's A and B = the Phi m Phi^T assembly of (3.167)."""
    from mbcourse.kernels.composite import composite_matrices
    from test_vereshchagin import _kernel_model
    rng = np.random.default_rng(91)
    for n, pri, weld in ((1, (), ()), (3, (2,), ()), (9, (2, 5), (4, 7)), (20, (3, 11), (8,))):
        model = _kernel_model(rng, n, pri, weld)
        data = mb.kernels.model_data(model)
        assert data is not None
        q, qd, tau = rng.normal(size=(3, 4, model.nv))
        H = np.empty((4, model.nv, model.nv))
        hb = np.empty((4, model.nv))
        composite_matrices(*data[:3], q, qd, H, hb)
        np.testing.assert_allclose(H, mb.tree.mass_matrix(model, q), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(-hb, mb.tree.bias_forces(model, q, qd), rtol=1e-11,
                                   atol=1e-11)
        fast = mb.tree.forward_dynamics(model, q, qd, tau)
        np.testing.assert_allclose(fast, mb.tree.forward_dynamics(model, q, qd, tau,
                                                                   compiled=False),
                                   rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(mb.tree.forward_dynamics(model, q[0], qd[0]),
                                   mb.tree.forward_dynamics(model, q[0].tolist(), qd[0],
                                                            compiled=False), atol=1e-10)
    inward = _inward_model()            # a joint pointing toward the base: NumPy only
    with pytest.raises(mb.ModelError, match="compiled tree equations need"):
        mb.tree.forward_dynamics(inward, np.zeros(2), np.zeros(2), compiled=True)
    assert np.all(np.isfinite(mb.tree.forward_dynamics(inward, np.zeros(2), np.ones(2))))
