"""Chapter 3 (general joints): mb.tree against the independent reference, the Cartesian
formulation, the kinetic energy and the book's identities."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mbcourse as mb
from mbcourse.errors import ShapeError, TopologyError
import reference
from test_cartesian import ALL_SPATIAL, random_state, random_tree, four_bar, four_bar_state


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
    np.testing.assert_allclose(r[1:] - r[0], -tt.dstar[0].sum(axis=0), atol=1e-12)
    _, omega = model.body_velocities(q, qd)
    np.testing.assert_allclose(tt.omega[0], omega, atol=1e-12)


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
