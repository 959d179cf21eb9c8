"""Chapter 4: Vereshchagin's O(n) recursion against the tree form, the reference, and the
MATLAB triple pendulum of Yudintsev 3.5 (digest facts 19-20)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mbcourse as mb
import reference
from test_cartesian import ALL_SPATIAL, random_state, random_tree


@settings(max_examples=60)
@given(st.lists(st.sampled_from(ALL_SPATIAL), min_size=1, max_size=8), st.integers(0, 2**31))
def test_agrees_with_reference_and_tree(kinds, seed):
    rng = np.random.default_rng(seed)
    model = random_tree(rng, kinds, flip=False)
    q, qd = random_state(model, rng)
    tau = rng.normal(size=model.nv)
    got = mb.vereshchagin.forward_dynamics(model, q, qd, tau)
    expected = reference.forward_dynamics(model, q, qd, tau)
    scale = 1.0 + np.abs(expected).max(initial=0.0)
    np.testing.assert_allclose(got, expected, atol=1e-9 * scale)
    np.testing.assert_allclose(got, mb.tree.forward_dynamics(model, q, qd, tau), atol=1e-10 * scale)


def test_batch_equals_single_calls_with_base_motion():
    rng = np.random.default_rng(2)
    model = random_tree(rng, ["revolute", "spherical", "prismatic", "universal", "free"], flip=False)
    model.set_base_motion(position=lambda t: (0, 0.1 * np.sin(3 * t), 0),
                          velocity=lambda t: (0, 0.3 * np.cos(3 * t), 0),
                          acceleration=lambda t: (0, -0.9 * np.sin(3 * t), 0),
                          orientation=lambda t: mb.spatial.axis_angle([1, 0, 0], 0.4 * t),
                          angular_velocity=(0.4, 0, 0))
    states = [random_state(model, rng) for _ in range(6)]
    Q = np.array([s[0] for s in states])
    V = np.array([s[1] for s in states])
    T = rng.normal(size=(6, model.nv))
    batch = mb.vereshchagin.forward_dynamics(model, Q, V, T, t=0.9)
    for b in range(6):
        np.testing.assert_allclose(batch[b], mb.vereshchagin.forward_dynamics(model, Q[b], V[b],
                                                                               T[b], t=0.9),
                                   atol=1e-12)
        np.testing.assert_allclose(batch[b], mb.tree.forward_dynamics(model, Q[b], V[b], T[b], t=0.9),
                                   atol=1e-9 * (1 + np.abs(batch[b]).max()))


def absolute(q):
    """The MATLAB program's absolute rod angles from the model's relative joint angles."""
    return np.cumsum(q, axis=-1)


def test_triple_pendulum_initial_values():
    """Fact 19: ddq(0) = (-0.5, 0, 0) in absolute angles; the Lagrangian mass matrix in
    absolute angles is [[10, 6, 2], [6, 6, 2], [2, 2, 2]] and the gravity gradient (5, 3, 1)."""
    model = mb.models.triple_pendulum()
    ddq = mb.vereshchagin.forward_dynamics(model, np.zeros(3), np.zeros(3))
    np.testing.assert_allclose(absolute(ddq), [-0.5, 0, 0], atol=1e-14)
    L = np.tril(np.ones((3, 3)))  # phi = L q
    Linv = np.linalg.inv(L)
    M_abs = Linv.T @ mb.tree.mass_matrix(model, np.zeros(3)) @ Linv
    np.testing.assert_allclose(M_abs, [[10, 6, 2], [6, 6, 2], [2, 2, 2]], atol=1e-12)
    h = 1e-6
    grad = [(model.potential_energy(Linv @ (h * e)) - model.potential_energy(Linv @ (-h * e))) / (2 * h)
            for e in np.eye(3)]
    np.testing.assert_allclose(grad, [5, 3, 1], atol=1e-8)


def test_triple_pendulum_energy_and_reference_state():
    """Fact 20: over 0-5 s the seed's E_k + E_p stays 0, min E_p ~ -8.963, and the state at
    t = 5 s matches the digest's reference to ~1e-6."""
    model = mb.models.triple_pendulum()
    res = mb.sim.simulate(model, mb.vereshchagin.forward_dynamics, (0.0, 5.0), np.zeros(3),
                          np.zeros(3), rtol=1e-11, atol=1e-11, t_eval=np.linspace(0, 5, 501))
    phi, dphi = absolute(res.q), absolute(res.v)
    y1, y2, y3, y4, y5, y6 = phi.T[0], phi.T[1], phi.T[2], dphi.T[0], dphi.T[1], dphi.T[2]
    # the seed's start.m energy formulas (absolute angles, unit data)
    v12 = y4**2
    v22 = 4 * y4**2 + 4 * np.cos(y1 - y2) * y4 * y5 + y5**2
    v32 = ((2 * np.cos(y1) * y4 + 2 * np.cos(y2) * y5 + np.cos(y3) * y6) ** 2
           + (2 * np.sin(y1) * y4 + 2 * np.sin(y2) * y5 + np.sin(y3) * y6) ** 2)
    Ek = 0.5 * (v12 + v22 + v32) + 0.5 * (y4**2 + y5**2 + y6**2)
    Ep = 5 * np.sin(y1) + 3 * np.sin(y2) + np.sin(y3)
    assert np.abs(Ek + Ep).max() < 1e-8
    np.testing.assert_allclose(Ek + Ep, res.energy, atol=1e-12)  # the model's own energy
    assert Ep.min() == pytest.approx(-8.963, abs=2e-3)
    state = np.r_[phi[-1], dphi[-1]]
    np.testing.assert_allclose(state, [-2.20650, -2.22922, -3.25888, -0.41138, -0.81107, -0.73648],
                               atol=2e-5)


def test_refuses_loops_and_inward_arcs():
    with pytest.raises(mb.TopologyError, match="close loops"):
        mb.vereshchagin.forward_dynamics(mb.models.crank_slider(), np.zeros(4), np.zeros(4))
    model = mb.Model()
    model.add_body("a", 1.0, np.eye(3))
    model.add_body("b", 1.0, np.eye(3))
    model.add_joint("ja", "revolute", "ground", "a", axis=(0, 0, 1))
    model.add_joint("jb", "revolute", "b", "a", parent_point=(1, 0, 0), axis=(0, 0, 1))
    with pytest.raises(mb.TopologyError, match=r"joints \['jb'\] point toward the base"):
        mb.vereshchagin.forward_dynamics(model, [0, 0], [0, 0])
