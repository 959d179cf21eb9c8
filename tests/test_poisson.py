"""Ivanov 2017: equations in Poisson impulses (generalized momenta) and the O(n) sweep and
Cholesky solvers (digest section 4, erratum E28, facts 25-28).

* p = A^T mu = dT/dqd = M qd on random trees of every joint kind (fact 25);
* dp/dt of (7) = dT/dq + Q by finite differences (fact 26), and = d/dt (M qd) along the
  true motion (tree / Vereshchagin forward dynamics), with loads and base motion;
* sweep and Cholesky return the qd that generated p, agree with each other and with a
  dense solve of (6), mu included (fact 27); structure of S, T = S^-1 and K (fact 28);
* batches equal single calls; integrating (q, p) reproduces the (q, qd) integration;
* bad input is refused.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mbcourse as mb
from mbcourse import poisson
from test_cartesian import ALL_SPATIAL, random_state, random_tree

METHODS = ["sweep", "cholesky"]
SAME_RATES = ["revolute", "prismatic", "universal", "cylindrical", "fixed"]  # nq == nv


def add_loads(model, rng):
    """A world-frame force off the centre of mass and a body-frame torque."""
    model.add_force(1, force=rng.normal(size=3), point=rng.normal(size=3))
    model.add_force(model.n, torque=rng.normal(size=3), frame="body")
    return model


def screw_tree(rng):
    model = mb.Model(gravity=rng.normal(size=3))
    for k, kind in enumerate(["revolute", "screw", "screw", "prismatic"], start=1):
        model.add_body(f"b{k}", 1.0 + k / 4, np.diag([0.2, 0.3, 0.4]) * k)
        extra = {"lead": 0.7} if kind == "screw" else {}
        model.add_joint(f"j{k}", kind, k - 1, f"b{k}", parent_point=rng.normal(size=3),
                        child_point=rng.normal(size=3), axis=rng.normal(size=3), **extra)
    return model


def base_motion(model):
    model.set_base_motion(position=lambda t: (0.1 * np.sin(3 * t), 0.2 * t * t, 0.0),
                          velocity=lambda t: (0.3 * np.cos(3 * t), 0.4 * t, 0.0),
                          acceleration=lambda t: (-0.9 * np.sin(3 * t), 0.4, 0.0),
                          orientation=lambda t: mb.spatial.axis_angle([0, 0, 1], 0.5 * t),
                          angular_velocity=(0, 0, 0.5))
    return model


# ---------------------------------------------------------------- fact 25: momenta
@settings(max_examples=15)
@given(st.lists(st.sampled_from(ALL_SPATIAL), min_size=1, max_size=7), st.integers(0, 2**31))
def test_momenta_equal_dT_dqd_and_mass_matrix(kinds, seed):
    rng = np.random.default_rng(seed)
    model = random_tree(rng, kinds, flip=False)
    q, qd = random_state(model, rng)
    p, mu = poisson.momenta(model, q, qd)
    expected = mb.tree.mass_matrix(model, q) @ qd
    scale = 1.0 + np.abs(expected).max(initial=0.0)
    np.testing.assert_allclose(p, expected, atol=1e-10 * scale)
    # dT/dqd by central differences of the model's kinetic energy (exact for a quadratic)
    h = 1e-3
    grad = [(model.kinetic_energy(q, qd + h * e) - model.kinetic_energy(q, qd - h * e)) / (2 * h)
            for e in np.eye(model.nv)]
    np.testing.assert_allclose(p, np.reshape(grad, model.nv), atol=1e-9 * scale)
    # mu_0: the whole system's linear and angular momentum about the (fixed) base origin
    P, H = mb.sim.momentum(model, q, qd)
    np.testing.assert_allclose(mu[0], np.r_[P, H], atol=1e-10 * (1 + np.abs(mu[0]).max()))


def test_momenta_screw_joints_and_kinetic_energy():
    rng = np.random.default_rng(7)
    model = screw_tree(rng)
    q, qd = rng.normal(size=(2, model.nv))
    p, mu = poisson.momenta(model, q, qd)
    np.testing.assert_allclose(p, mb.tree.mass_matrix(model, q) @ qd, atol=1e-10)
    # T = p . qd / 2 (E28: J about O_i makes T = sum v_i^T M_i v_i / 2)
    assert 0.5 * p @ qd == pytest.approx(float(model.kinetic_energy(q, qd)), rel=1e-12)
    for method in METHODS:
        np.testing.assert_allclose(poisson.velocities(model, q, p, method), qd, atol=1e-12)


def test_inertia_about_O_not_centre_of_mass_erratum_E28():
    """With the central J in M_i (the misreading of E28), v^T M v / 2 is not T."""
    model = mb.models.triple_pendulum()
    q, qd = np.array([0.2, 0.4, -0.3]), np.array([1.0, -0.5, 0.8])
    ds = poisson.dense_system(model, q)
    v = np.linalg.solve(ds.S, ds.A @ qd)  # (4): v = T A qd
    T = float(model.kinetic_energy(q, qd))
    assert 0.5 * v @ ds.M @ v == pytest.approx(T, rel=1e-13)
    wrong = ds.M.copy()
    for i in range(model.n):  # replace J_O by the central J_C = eye(3)
        wrong[6 * i + 3:6 * i + 6, 6 * i + 3:6 * i + 6] = np.eye(3)
    assert abs(0.5 * v @ wrong @ v - T) > 0.1


# ------------------------------------------------------------- fact 26: dp/dt
def _dT_dq(model, q, qd, h=1e-6):
    return np.array([(model.kinetic_energy(q + h * e, qd) - model.kinetic_energy(q - h * e, qd))
                     / (2 * h) for e in np.eye(model.nq)])


def _dV_dq(model, q, h=1e-6):
    return np.array([(model.potential_energy(q + h * e) - model.potential_energy(q - h * e))
                     / (2 * h) for e in np.eye(model.nq)])


@pytest.mark.parametrize("seed", range(12))
def test_pdot_equals_dT_dq_plus_forces(seed):
    """Fact 26 (nq = nv joints): (Adot^T - A^T Omega) mu = dT/dq; with gravity and tau,
    dp/dt = dT/dq - dV/dq + tau. The opposite sign of Omega fails."""
    rng = np.random.default_rng(seed)
    kinds = list(rng.choice(SAME_RATES, size=int(rng.integers(1, 7))))
    model = random_tree(rng, kinds, flip=False)
    q, qd = random_state(model, rng)
    tau = rng.normal(size=model.nv)
    p, _ = poisson.momenta(model, q, qd)
    dT = _dT_dq(model, q, qd)
    for method in METHODS:
        _, dp = poisson.pdot(model, q, p, tau, method=method)
        expected = dT - _dV_dq(model, q) + tau
        np.testing.assert_allclose(dp, expected, atol=1e-6 * (1 + np.abs(expected).max()))
    model.gravity = np.zeros(3)
    _, dp0 = poisson.pdot(model, q, p)
    np.testing.assert_allclose(dp0, dT, atol=1e-6 * (1 + np.abs(dT).max()))


@settings(max_examples=15)
@given(st.lists(st.sampled_from(ALL_SPATIAL), min_size=1, max_size=6), st.integers(0, 2**31))
def test_pdot_equals_d_dt_of_M_qd_along_the_motion(kinds, seed):
    """Every joint kind, gravity, loads, tau: dp/dt = M qdd + Mdot qd, qdd from mb.tree."""
    rng = np.random.default_rng(seed)
    model = add_loads(random_tree(rng, kinds, flip=False), rng)
    q, qd = random_state(model, rng)
    tau = rng.normal(size=model.nv)
    qdd = mb.tree.forward_dynamics(model, q, qd, tau)
    h = 1e-6
    dq = model.qdot(q, qd)
    Mdot = (mb.tree.mass_matrix(model, q + h * dq) - mb.tree.mass_matrix(model, q - h * dq)) / (2 * h)
    expected = mb.tree.mass_matrix(model, q) @ qdd + Mdot @ qd
    p = mb.tree.mass_matrix(model, q) @ qd
    for method in METHODS:
        got_qd, dp = poisson.pdot(model, q, p, tau, method=method)
        np.testing.assert_allclose(got_qd, qd, atol=1e-11 * (1 + np.abs(qd).max(initial=0)))
        np.testing.assert_allclose(dp, expected,
                                   atol=1e-7 * (1 + np.abs(expected).max(initial=0)))
    # Q = A^T T^T F is the tree's right-hand side at rest
    np.testing.assert_allclose(poisson.generalized_forces(model, q),
                               mb.tree.bias_forces(model, q, np.zeros(model.nv)),
                               atol=1e-10 * (1 + np.abs(expected).max(initial=0)))


def test_pdot_with_base_motion_is_the_time_derivative_of_p():
    rng = np.random.default_rng(11)
    model = base_motion(random_tree(rng, ["revolute", "spherical", "prismatic", "universal",
                                          "free", "fixed"], flip=False))
    q, qd = random_state(model, rng)
    tau = rng.normal(size=model.nv)
    t = 0.6
    qdd = mb.vereshchagin.forward_dynamics(model, q, qd, tau, t=t)
    h = 1e-6
    dq = model.qdot(q, qd)
    p_plus, _ = poisson.momenta(model, q + h * dq, qd + h * qdd, t + h)
    p_minus, _ = poisson.momenta(model, q - h * dq, qd - h * qdd, t - h)
    expected = (p_plus - p_minus) / (2 * h)
    p, _ = poisson.momenta(model, q, qd, t)
    # with base motion p = M qd + (base term), and the solvers undo exactly that
    assert np.abs(p - mb.tree.mass_matrix(model, q) @ qd).max() > 1e-3
    for method in METHODS:
        got_qd, dp = poisson.pdot(model, q, p, tau, t=t, method=method)
        np.testing.assert_allclose(got_qd, qd, atol=1e-11)
        np.testing.assert_allclose(dp, expected, atol=1e-6 * (1 + np.abs(expected).max()))


# --------------------------------------------------------- facts 27-28: solvers
@settings(max_examples=20)
@given(st.lists(st.sampled_from(ALL_SPATIAL), min_size=1, max_size=8), st.integers(0, 2**31))
def test_sweep_and_cholesky_recover_qd_and_mu(kinds, seed):
    rng = np.random.default_rng(seed)
    model = random_tree(rng, kinds, flip=False)
    q, qd = random_state(model, rng)
    p, mu = poisson.momenta(model, q, qd)
    scale = 1.0 + np.abs(qd).max(initial=0.0)
    out = {}
    for method in METHODS:
        got, got_mu = poisson.velocities(model, q, p, method=method, return_momenta=True)
        np.testing.assert_allclose(got, qd, atol=1e-12 * scale, err_msg=method)
        np.testing.assert_allclose(got_mu, mu, atol=1e-11 * (1.0 + np.abs(mu).max()),
                                   err_msg=method)
        out[method] = got
    np.testing.assert_allclose(out["sweep"], out["cholesky"], atol=1e-12 * scale)


@settings(max_examples=20)
@given(st.lists(st.sampled_from(ALL_SPATIAL), min_size=1, max_size=4), st.integers(0, 2**31))
def test_solvers_agree_with_dense_solve_of_6(kinds, seed):
    """Fact 27. (Small trees: the dense system has 12 n + nv rows, and a multithreaded BLAS
    can take 0.2 s per solve of ~100 rows on a loaded machine.)"""
    rng = np.random.default_rng(seed)
    model = random_tree(rng, kinds, flip=False)
    q, qd = random_state(model, rng)
    p, mu = poisson.momenta(model, q, qd)
    qd_dense, v_dense, mu_dense = poisson.dense_system(model, q).solve(p)
    scale = 1.0 + np.abs(qd).max(initial=0.0)
    for method in METHODS:
        got, got_mu = poisson.velocities(model, q, p, method=method, return_momenta=True)
        np.testing.assert_allclose(got, qd_dense, atol=1e-11 * scale, err_msg=method)
        np.testing.assert_allclose(got_mu[1:], mu_dense, atol=1e-10 * (1.0 + np.abs(mu).max()),
                                   err_msg=method)


@pytest.mark.parametrize("seed", range(5))
def test_structure_of_S_T_and_K(seed):
    """Fact 28: T = S^-1 has T_ii = E and T_ij = 0 off the path p_i; K is symmetric."""
    rng = np.random.default_rng(seed)
    model = random_tree(rng, list(rng.choice(ALL_SPATIAL, size=6)), flip=False)
    q, _ = random_state(model, rng)
    ds = poisson.dense_system(model, q)
    np.testing.assert_allclose(ds.K, ds.K.T, atol=0)
    np.testing.assert_allclose(ds.T @ ds.S, np.eye(6 * model.n), atol=1e-12)
    parent = {j.child: j.parent for j in model.joints}
    for i in range(1, model.n + 1):
        path, b = set(), i
        while b:
            path.add(b)
            b = parent[b]
        for j in range(1, model.n + 1):
            block = ds.T[6 * i - 6:6 * i, 6 * j - 6:6 * j]
            if i == j:
                np.testing.assert_array_equal(block, np.eye(6))
            elif j not in path:
                assert np.all(block == 0.0), (i, j)
            else:
                assert np.abs(block).max() > 0.5


def test_batches_equal_single_calls():
    rng = np.random.default_rng(3)
    model = add_loads(base_motion(random_tree(rng, ["revolute", "free", "universal", "spherical",
                                                    "cylindrical", "fixed"], flip=False)), rng)
    states = [random_state(model, rng) for _ in range(5)]
    Q = np.array([s[0] for s in states])
    V = np.array([s[1] for s in states])
    tau = rng.normal(size=(5, model.nv))
    P, MU = poisson.momenta(model, Q, V, t=0.4)
    assert P.shape == (5, model.nv) and MU.shape == (5, model.n + 1, 6)
    for method in METHODS:
        QD, DP = poisson.pdot(model, Q, P, tau, t=0.4, method=method)
        np.testing.assert_allclose(QD, V, atol=1e-11)
        for b in range(5):
            p, mu = poisson.momenta(model, Q[b], V[b], t=0.4)
            np.testing.assert_allclose(P[b], p, atol=1e-13)
            np.testing.assert_allclose(MU[b], mu, atol=1e-13)
            qd, dp = poisson.pdot(model, Q[b], P[b], tau[b], t=0.4, method=method)
            assert qd.shape == dp.shape == (model.nv,)
            np.testing.assert_allclose(QD[b], qd, atol=1e-13)
            np.testing.assert_allclose(DP[b], dp, atol=1e-12)
    # one configuration, many momenta
    QD = poisson.velocities(model, Q[0], P, method="cholesky", t=0.4)
    np.testing.assert_allclose(QD[0], V[0], atol=1e-11)
    np.testing.assert_allclose(poisson.generalized_forces(model, Q)[2],
                               poisson.generalized_forces(model, Q[2]), atol=1e-13)


# ---------------------------------------------------------------- simulation
def test_triple_pendulum_simulation_matches_vereshchagin_and_conserves_energy():
    model = mb.models.triple_pendulum()
    q0, qd0 = np.array([0.3, -0.5, 0.2]), np.array([0.0, 1.0, -0.5])
    ref = mb.sim.simulate(model, mb.vereshchagin.forward_dynamics, (0.0, 2.0), q0, qd0,
                          rtol=1e-11, atol=1e-11)
    for method in METHODS:
        res = poisson.simulate(model, (0.0, 2.0), q0, qd0, method=method, rtol=1e-11,
                               atol=1e-11, t_eval=np.linspace(0.0, 2.0, 21))
        assert res.t[-1] == 2.0
        np.testing.assert_allclose(res.q[-1], ref.q[-1], atol=1e-7)
        np.testing.assert_allclose(res.qd[-1], ref.v[-1], atol=1e-7)
        np.testing.assert_allclose(res.p, (mb.tree.mass_matrix(model, res.q)
                                           @ res.qd[..., None])[..., 0], atol=1e-12)
        assert np.ptp(res.energy) < 1e-8


def test_simulation_with_quaternions_and_torque():
    rng = np.random.default_rng(4)
    model = random_tree(rng, ["spherical", "revolute"], flip=False)
    q0, qd0 = random_state(model, rng)
    tau = lambda t, q, v: -0.5 * v  # noqa: E731 (damping)
    ref = mb.sim.simulate(model, mb.tree.forward_dynamics, (0.0, 0.5), q0, qd0, tau=tau)
    res = poisson.simulate(model, (0.0, 0.5), q0, qd0, tau=tau, method="cholesky")
    np.testing.assert_allclose(res.q[-1], ref.q[-1], atol=1e-7)
    np.testing.assert_allclose(res.qd[-1], ref.v[-1], atol=1e-7)
    assert res.energy[-1] < res.energy[0]


# ---------------------------------------------------------------- bad input
def test_refuses_loops_inward_joints_and_bad_input():
    with pytest.raises(mb.TopologyError, match="close loops"):
        poisson.velocities(mb.models.crank_slider(), np.zeros(4), np.zeros(4))
    model = mb.Model()
    model.add_body("a", 1.0, np.eye(3))
    model.add_body("b", 1.0, np.eye(3))
    model.add_joint("ja", "revolute", "ground", "a", axis=(0, 0, 1))
    model.add_joint("jb", "revolute", "b", "a", parent_point=(1, 0, 0), axis=(0, 0, 1))
    with pytest.raises(mb.TopologyError, match=r"\['jb'\] point toward the base"):
        poisson.momenta(model, [0, 0], [0, 0])
    model = mb.models.triple_pendulum()
    with pytest.raises(mb.ShapeError, match="method must be one of"):
        poisson.velocities(model, np.zeros(3), np.zeros(3), method="lu")
    with pytest.raises(mb.ShapeError, match="method must be one of"):
        poisson.simulate(model, (0, 1), np.zeros(3), np.zeros(3), method="LDLT")
    with pytest.raises(mb.ShapeError):
        poisson.velocities(model, np.zeros(2), np.zeros(3))
    with pytest.raises(mb.ShapeError):
        poisson.pdot(model, np.zeros(3), np.zeros(3), tau=np.zeros(4))
    with pytest.raises(mb.ShapeError):
        poisson.momenta(model, np.zeros(3), [0.0, np.nan, 0.0])
    with pytest.raises(mb.ShapeError):
        poisson.velocities(model, np.zeros((2, 3)), np.zeros((3, 3)))


def test_sweep_stays_accurate_on_long_cardan_chains():
    """Regression: the sweep's articulated inertia H M* must stay symmetric, or round-off
    grows along the chain (a 50-body chain of universal joints lost five digits)."""
    model = mb.Model(gravity=(0, 0, -9.81))
    for k in range(1, 51):
        model.add_body(f"b{k}", 1.0, mb.models.bar_inertia(1.0, 1.0))
        model.add_joint(f"u{k}", "universal", k - 1, k, parent_point=(0.5, 0, 0) if k > 1 else (0, 0, 0),
                        child_point=(-0.5, 0, 0), axes=((0, 0, 1), (0, 1, 0)))
    rng = np.random.default_rng(50)
    q, qd = rng.normal(size=model.nq), rng.normal(size=model.nv)
    p, _ = mb.poisson.momenta(model, q, qd)
    for method in ("sweep", "cholesky"):
        assert np.abs(mb.poisson.velocities(model, q, p, method=method) - qd).max() < 1e-8
