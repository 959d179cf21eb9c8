"""Chapter 4: Vereshchagin's O(n) recursion against the tree form, the reference, and the
MATLAB triple pendulum of Yudintsev 3.5 (its initial values and energy plot, Fig. 3.21)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mbcourse as mb
import reference
from strategies import moving_base
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
    """Yudintsev 3.5: qdd(0) = (-0.5, 0, 0) in absolute angles; the Lagrangian mass matrix in
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
    """Yudintsev 3.5, Fig. 3.21: over 0-5 s the seed's E_k + E_p stays 0, min E_p ~ -8.963, and the state at
    t = 5 s matches the MATLAB program's run to ~1e-6."""
    model = mb.models.triple_pendulum()
    res = mb.sim.simulate(model, mb.vereshchagin.forward_dynamics, (0.0, 5.0), np.zeros(3),
                          np.zeros(3), rtol=1e-11, atol=1e-11, t_eval=np.linspace(0, 5, 501))
    phi, dphi = absolute(res.q), absolute(res.qd)
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


# -------------------------------------------------------------------- force elements
def sprung_tree(damping=0.3, loads=True, base_motion=False, springs=True):
    """Five bodies on revolute, universal, screw, prismatic and spherical joints, with
    spring-dampers (body to ground, body to body), joint spring-dampers and, with
    ``loads``, forces and a control law that depend on (t, q, qd); optionally a moving
    base (the ground spring's anchor moves with it)."""
    m = mb.Model(gravity=(0.0, -9.81, 0.0))
    m.add_body("b1", 1.5, [0.03, 0.1, 0.1])
    m.add_body("b2", 1.0, [0.02, 0.05, 0.05])
    m.add_body("b3", 0.7, [0.01, 0.02, 0.02])
    m.add_body("b4", 0.5, [0.01, 0.015, 0.02])
    m.add_body("b5", 0.8, [0.02, 0.03, 0.04])
    m.add_joint("j1", "revolute", "ground", "b1", child_point=(-0.4, 0, 0), axis=(0, 0, 1))
    m.add_joint("j2", "universal", "b1", "b2", parent_point=(0.5, 0, 0.1),
                child_point=(-0.3, 0, 0), axes=((0, 0, 1), (0, 1, 0)))
    m.add_joint("j3", "screw", "b2", "b3", parent_point=(0.3, 0, 0), axis=(1, 0, 0), lead=0.1)
    m.add_joint("j4", "prismatic", "b1", "b4", parent_point=(0.0, 0.2, 0.0),
                child_point=(0.0, -0.1, 0.05), axis=(0, 1, 1),
                orientation=mb.spatial.axis_angle([1, 0, 0], 0.3))
    m.add_joint("j5", "spherical", "b3", "b5", parent_point=(0.2, 0, 0),
                child_point=(0, 0, -0.3))
    if springs:
        m.add_spring("tether", "ground", "b3", point_a=(1.0, 1.0, 0.2),
                     point_b=(0.05, 0.0, 0.0), stiffness=30.0, rest_length=0.4, damping=damping)
        m.add_spring("link", "b1", "b5", point_a=(0.2, 0.0, 0.0), point_b=(0.0, 0.1, 0.1),
                     stiffness=12.0, rest_length=0.3, damping=0.5 * damping)
    m.add_joint_spring("j2", stiffness=(3.0, 4.0), rest=(0.1, -0.2), damping=damping)
    m.add_joint_spring("j4", stiffness=20.0, rest=0.05, damping=2 * damping)
    m.add_joint_spring("j1", stiffness=2.0)
    if loads:
        m.add_force("b2", force=lambda t, q, qd: (0.0, -qd[1], np.sin(t)),
                    torque=lambda t, q, qd: (0.1 * q[0], 0.0, 0.0), frame="body")
        m.add_force("b5", force=(0.3, 0.0, -0.2), point=(0.1, 0.0, 0.0))
        m.add_generalized_force(lambda t, q, qd: -0.1 * qd + 0.05 * np.cos(t), name="drag")
    if base_motion:
        moving_base(m)
    return m


def sprung_state(model, seed=0):
    rng = np.random.default_rng(seed)
    quat = rng.normal(size=4)
    q = np.r_[0.3, -0.4, 0.5, 1.2, 0.1, quat / np.linalg.norm(quat)]
    qd = np.r_[0.7, -0.2, 0.9, 1.1, -0.6, rng.normal(size=3)]
    return q + 0.1 * np.r_[rng.normal(size=5), np.zeros(4)], qd


@pytest.mark.parametrize("base_motion", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_force_elements_agree_with_the_reference(seed, base_motion):
    """Springs, dampers, joint springs, (t, q, qd) loads and a control law: the same
    accelerations as the independent reference (Jourdain's principle)."""
    model = sprung_tree(base_motion=base_motion)
    q, qd = sprung_state(model, seed)
    tau = np.random.default_rng(seed).normal(size=model.nv)
    for t in (0.0, 0.7):
        expected = reference.forward_dynamics(model, q, qd, tau, t=t)
        got = mb.vereshchagin.forward_dynamics(model, q, qd, tau, t=t)
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())
    # without springs: (t, q, qd) loads receive the recursion's orientations only
    model = sprung_tree(base_motion=base_motion, springs=False)
    expected = reference.forward_dynamics(model, q, qd, tau, t=0.7)
    np.testing.assert_allclose(mb.vereshchagin.forward_dynamics(model, q, qd, tau, t=0.7),
                               expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())


def test_batches_with_force_elements_and_any_number_of_dimensions():
    model = sprung_tree(base_motion=True)
    rng = np.random.default_rng(5)
    states = [sprung_state(model, s) for s in range(6)]
    Q = np.array([s[0] for s in states]).reshape(2, 3, model.nq)
    V = np.array([s[1] for s in states])[:3]  # (3, nv): broadcasts against (2, 3, nq)
    T = rng.normal(size=(model.nv,))
    qdd = mb.vereshchagin.forward_dynamics(model, Q, V, T, t=0.4)
    assert qdd.shape == (2, 3, model.nv)
    out = mb.vereshchagin.articulated(model, Q, V, T, t=0.4)
    assert [x.shape for x in out] == [(2, 3, model.nv), (2, 3, model.n + 1, 6),
                                      (2, 3, model.n + 1, 6, 6), (2, 3, model.n + 1, 6)]
    # articulated is the NumPy recursion; forward_dynamics runs the kernel (which takes
    # the moving base)
    np.testing.assert_array_equal(out[0], mb.vereshchagin.forward_dynamics(
        model, Q, V, T, t=0.4, compiled=False))
    np.testing.assert_allclose(qdd, out[0], rtol=1e-12, atol=1e-12)
    for a in range(2):
        for b in range(3):
            np.testing.assert_allclose(qdd[a, b], mb.vereshchagin.forward_dynamics(
                model, Q[a, b], V[b], T, t=0.4), rtol=1e-12, atol=1e-12)
    single = mb.vereshchagin.articulated(model, Q[1, 2], V[2], T, t=0.4)
    for x, y in zip(single, out):
        np.testing.assert_allclose(x, y[1, 2], rtol=1e-12, atol=1e-12)
    with pytest.raises(mb.ShapeError, match=r"q has shape \(2, 3, 9\), qd has shape \(2, 8\)"):
        mb.vereshchagin.forward_dynamics(model, Q, V[:2])
    with pytest.raises(mb.SingularSystemError, match="not finite"):
        mb.vereshchagin.forward_dynamics(model, Q, np.full(model.nv, 1e200))


def test_a_changed_model_gives_the_fresh_answer():
    model = sprung_tree()
    q, qd = sprung_state(model)
    mb.vereshchagin.forward_dynamics(model, q, qd)
    data = mb.vereshchagin.prepare(model)
    model.joint("j1").axis = (0.0, 1.0, 1.0)  # the revolute fast path's axis
    model.body("b4").mass = 2.0
    model.springs[0].stiffness = 50.0
    assert mb.vereshchagin.prepare(model) is not data
    np.testing.assert_allclose(mb.vereshchagin.forward_dynamics(model, q, qd),
                               reference.forward_dynamics(model, q, qd), rtol=1e-9, atol=1e-9)


# ------------------------------------------------------------------ the compiled recursion
def _inward_model():
    """Two bodies, the second hung by a joint pointing toward the base (which the kernels,
    walking outward, do not take)."""
    model = mb.Model()
    model.add_body("a", 1.0, np.eye(3))
    model.add_body("b", 1.0, np.eye(3))
    model.add_joint("ja", "revolute", "ground", "a", axis=(0, 0, 1))
    model.add_joint("jb", "revolute", "b", "a", parent_point=(1, 0, 0), axis=(0, 0, 1))
    return model


def _kernel_model(rng, n, prismatic=(), weld=()):
    from strategies import random_body, random_rotation
    model = mb.Model(gravity=rng.normal(size=3))
    for k in range(1, n + 1):
        random_body(model, f"b{k}", rng)
        kind = "prismatic" if k in prismatic else "fixed" if k in weld else "revolute"
        extra = {} if kind == "fixed" else {"axis": rng.normal(size=3)}
        model.add_joint(f"j{k}", kind, int(rng.integers(0, k)), f"b{k}",
                        parent_point=rng.normal(size=3), child_point=rng.normal(size=3),
                        orientation=random_rotation(rng), **extra)
    return model


def test_compiled_recursion_equals_the_numpy_recursion():
    """One source per algorithm: mbcourse.compiled's loops = the batched NumPy recursion."""
    rng = np.random.default_rng(77)
    for n, pri, weld in ((1, (), ()), (2, (), ()), (6, (2, 5), (4,)), (15, (3, 7, 11), (9,))):
        model = _kernel_model(rng, n, pri, weld)
        assert mb.vereshchagin.prepare(model).kernel is not None
        nv = model.nv
        q, qd, tau = rng.normal(size=(3, 5, nv))
        fast = mb.vereshchagin.forward_dynamics(model, q, qd, tau)
        slow = mb.vereshchagin.forward_dynamics(model, q, qd, tau, compiled=False)
        np.testing.assert_allclose(fast, slow, rtol=1e-11, atol=1e-11)
        # single states, lists, broadcasting and tau=None take the same kernel
        np.testing.assert_allclose(mb.vereshchagin.forward_dynamics(model, q[0], qd[0]),
                                   mb.vereshchagin.forward_dynamics(model, q[0], qd[0],
                                                                    compiled=False),
                                   rtol=1e-11, atol=1e-11)
        np.testing.assert_allclose(
            mb.vereshchagin.forward_dynamics(model, q[0].tolist(), qd, tau),
            mb.vereshchagin.forward_dynamics(model, q[0], qd, tau, compiled=False),
            rtol=1e-11, atol=1e-11)
        # and the tree equations agree (a second route)
        np.testing.assert_allclose(fast, mb.tree.forward_dynamics(model, q, qd, tau),
                                   rtol=1e-9, atol=1e-9)


def test_compiled_recursion_refuses_and_falls_back_cleanly():
    rng = np.random.default_rng(78)
    model = _kernel_model(rng, 3)
    with pytest.raises(mb.ShapeError, match=r"qd\[1\]"):
        mb.vereshchagin.forward_dynamics(model, np.zeros(3), np.array([0.0, np.nan, 0.0]))
    with pytest.raises(mb.ShapeError, match="q must have shape"):
        mb.vereshchagin.forward_dynamics(model, np.zeros(4), np.zeros(3))
    # a prescribed base motion runs compiled, packed at each call
    model.set_base_motion(position=lambda t: np.array([0.1 * t, 0.0, 0.0]),
                          velocity=np.array([0.1, 0.0, 0.0]))
    assert mb.vereshchagin.prepare(model).kernel.base_moves
    np.testing.assert_allclose(
        mb.vereshchagin.forward_dynamics(model, np.zeros(3), np.zeros(3), compiled=True),
        mb.tree.forward_dynamics(model, np.zeros(3), np.zeros(3)), atol=1e-9)
    # every model the NumPy recursion runs, the kernel runs; a joint pointing toward the
    # base is refused by name on both routes
    inward = _inward_model()
    for compiled in (True, None, False):
        with pytest.raises(mb.TopologyError, match=r"\['jb'\] point toward the base"):
            mb.vereshchagin.forward_dynamics(inward, np.zeros(2), np.zeros(2),
                                             compiled=compiled)
    # a changed model gives the new answer through the kernel
    m2 = _kernel_model(np.random.default_rng(79), 2)
    before = mb.vereshchagin.forward_dynamics(m2, np.zeros(2), np.zeros(2))
    m2.body("b2").mass *= 3.0
    after = mb.vereshchagin.forward_dynamics(m2, np.zeros(2), np.zeros(2))
    np.testing.assert_allclose(after, mb.vereshchagin.forward_dynamics(
        m2, np.zeros(2), np.zeros(2), compiled=False), atol=1e-12)
    assert not np.allclose(before, after)


def test_compiled_path_checks_time_like_the_checked_route():
    model = _kernel_model(np.random.default_rng(80), 2)
    q = np.zeros(2)
    for bad in (True, float("nan"), "0", 1j):
        with pytest.raises(mb.ShapeError, match="t must be a finite real number"):
            mb.vereshchagin.forward_dynamics(model, q, q, t=bad)
    a = mb.vereshchagin.forward_dynamics(model, q, q, t=np.float64(0.5))
    np.testing.assert_array_equal(a, mb.vereshchagin.forward_dynamics(model, q, q, t=0.5))


def test_compiled_batches_split_over_the_cores_equal_the_numpy_recursion():
    rng = np.random.default_rng(81)
    model = _kernel_model(rng, 6, (3,), (5,))
    B = mb.kernels.PARALLEL_BATCH + 37                    # runs the parallel kernel, uneven slices
    q, qd, tau = rng.normal(size=(3, B, model.nv))
    for fd in (mb.vereshchagin.forward_dynamics, mb.tree.forward_dynamics):
        np.testing.assert_allclose(fd(model, q, qd, tau), fd(model, q, qd, tau, compiled=False),
                                   rtol=1e-10, atol=1e-10)
    p, _ = mb.poisson.momenta(model, q, qd)
    np.testing.assert_allclose(mb.poisson.velocities(model, q, p), qd, rtol=1e-10, atol=1e-10)
    # a NaN in one configuration of a large batch is still named by the checked route
    q[50, 2] = np.nan
    with pytest.raises(mb.ShapeError, match=r"q\[50, 2\]"):
        mb.vereshchagin.forward_dynamics(model, q, qd, tau)
