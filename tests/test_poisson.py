"""Ivanov 2017: equations in Poisson impulses (generalized momenta) and the O(n) sweep and
Cholesky solvers (the errata page, E28).

* p = A^T mu = dT/dqd = M qd on random trees of every joint kind;
* dp/dt of (7) = dT/dq + Q by finite differences, and = d/dt (M qd) along the
  true motion (tree / Vereshchagin forward dynamics), with loads and base motion;
* sweep and Cholesky return the qd that generated p, agree with each other and with a
  dense solve of (6), mu included; structure of S, T = S^-1 and K;
* batches equal single calls; integrating (q, p) reproduces the (q, qd) integration;
* bad input is refused.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mbcourse as mb
from mbcourse import poisson
from strategies import moving_base
from test_cartesian import ALL_SPATIAL, box_inertia, random_state, random_tree
import reference
from test_vereshchagin import sprung_state, sprung_tree

SOLVERS = ["sweep", "cholesky"]
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


# ---------------------------------------------------------------- momenta
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
    for solver in SOLVERS:
        np.testing.assert_allclose(poisson.velocities(model, q, p, solver=solver), qd, atol=1e-12)


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


# ------------------------------------------------------------- dp/dt
def _dT_dq(model, q, qd, h=1e-6):
    return np.array([(model.kinetic_energy(q + h * e, qd) - model.kinetic_energy(q - h * e, qd))
                     / (2 * h) for e in np.eye(model.nq)])


def _dV_dq(model, q, h=1e-6):
    return np.array([(model.potential_energy(q + h * e) - model.potential_energy(q - h * e))
                     / (2 * h) for e in np.eye(model.nq)])


@pytest.mark.parametrize("seed", range(12))
def test_pdot_equals_dT_dq_plus_forces(seed):
    """nq = nv joints: (Adot^T - A^T Omega) mu = dT/dq; with gravity and tau,
    dp/dt = dT/dq - dV/dq + tau. The opposite sign of Omega fails."""
    rng = np.random.default_rng(seed)
    kinds = list(rng.choice(SAME_RATES, size=int(rng.integers(1, 7))))
    model = random_tree(rng, kinds, flip=False)
    q, qd = random_state(model, rng)
    tau = rng.normal(size=model.nv)
    p, _ = poisson.momenta(model, q, qd)
    dT = _dT_dq(model, q, qd)
    for solver in SOLVERS:
        _, dp = poisson.pdot(model, q, p, tau, solver=solver)
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
    for solver in SOLVERS:
        got_qd, dp = poisson.pdot(model, q, p, tau, solver=solver)
        np.testing.assert_allclose(got_qd, qd, atol=1e-11 * (1 + np.abs(qd).max(initial=0)))
        np.testing.assert_allclose(dp, expected,
                                   atol=1e-7 * (1 + np.abs(expected).max(initial=0)))
    # Q = A^T T^T F is the tree's right-hand side at rest
    np.testing.assert_allclose(poisson.generalized_forces(model, q),
                               mb.tree.bias_forces(model, q, np.zeros(model.nv)),
                               atol=1e-10 * (1 + np.abs(expected).max(initial=0)))


def test_pdot_with_base_motion_is_the_time_derivative_of_p():
    rng = np.random.default_rng(11)
    model = moving_base(random_tree(rng, ["revolute", "spherical", "prismatic", "universal",
                                          "free", "fixed"], flip=False))
    q, qd = random_state(model, rng)
    tau = rng.normal(size=model.nv)
    t = 0.6
    qdd = mb.vereshchagin.forward_dynamics(model, q, qd, tau, t=t)
    h = 1e-6
    dq = model.qdot(q, qd)
    p_plus, _ = poisson.momenta(model, q + h * dq, qd + h * qdd, t=t + h)
    p_minus, _ = poisson.momenta(model, q - h * dq, qd - h * qdd, t=t - h)
    expected = (p_plus - p_minus) / (2 * h)
    p, _ = poisson.momenta(model, q, qd, t=t)
    # with base motion p = M qd + (base term), and the solvers undo exactly that
    assert np.abs(p - mb.tree.mass_matrix(model, q) @ qd).max() > 1e-3
    for solver in SOLVERS:
        got_qd, dp = poisson.pdot(model, q, p, tau, t=t, solver=solver)
        np.testing.assert_allclose(got_qd, qd, atol=1e-11)
        np.testing.assert_allclose(dp, expected, atol=1e-6 * (1 + np.abs(expected).max()))


# --------------------------------------------------------- solvers
@settings(max_examples=20)
@given(st.lists(st.sampled_from(ALL_SPATIAL), min_size=1, max_size=8), st.integers(0, 2**31))
def test_sweep_and_cholesky_recover_qd_and_mu(kinds, seed):
    rng = np.random.default_rng(seed)
    model = random_tree(rng, kinds, flip=False)
    q, qd = random_state(model, rng)
    p, mu = poisson.momenta(model, q, qd)
    scale = 1.0 + np.abs(qd).max(initial=0.0)
    out = {}
    for solver in SOLVERS:
        got, got_mu = poisson.velocities(model, q, p, solver=solver, return_momenta=True)
        np.testing.assert_allclose(got, qd, atol=1e-12 * scale, err_msg=solver)
        np.testing.assert_allclose(got_mu, mu, atol=1e-11 * (1.0 + np.abs(mu).max()),
                                   err_msg=solver)
        out[solver] = got
    np.testing.assert_allclose(out["sweep"], out["cholesky"], atol=1e-12 * scale)


@settings(max_examples=20)
@given(st.lists(st.sampled_from(ALL_SPATIAL), min_size=1, max_size=4), st.integers(0, 2**31))
def test_solvers_agree_with_dense_solve_of_6(kinds, seed):
    """Ivanov (6) solved densely. (Small trees: the dense system has 12 n + nv rows, and a
    multithreaded BLAS can take 0.2 s per solve of ~100 rows on a loaded machine.)"""
    rng = np.random.default_rng(seed)
    model = random_tree(rng, kinds, flip=False)
    q, qd = random_state(model, rng)
    p, mu = poisson.momenta(model, q, qd)
    qd_dense, v_dense, mu_dense = poisson.dense_system(model, q).solve(p)
    scale = 1.0 + np.abs(qd).max(initial=0.0)
    for solver in SOLVERS:
        got, got_mu = poisson.velocities(model, q, p, solver=solver, return_momenta=True)
        np.testing.assert_allclose(got, qd_dense, atol=1e-11 * scale, err_msg=solver)
        np.testing.assert_allclose(got_mu[1:], mu_dense, atol=1e-10 * (1.0 + np.abs(mu).max()),
                                   err_msg=solver)


@pytest.mark.parametrize("seed", range(5))
def test_structure_of_S_T_and_K(seed):
    """Ivanov (5)-(6): T = S^-1 has T_ii = E and T_ij = 0 off the path p_i; K is symmetric."""
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
    model = add_loads(moving_base(random_tree(rng, ["revolute", "free", "universal", "spherical",
                                                    "cylindrical", "fixed"], flip=False)), rng)
    states = [random_state(model, rng) for _ in range(5)]
    Q = np.array([s[0] for s in states])
    V = np.array([s[1] for s in states])
    tau = rng.normal(size=(5, model.nv))
    P, MU = poisson.momenta(model, Q, V, t=0.4)
    assert P.shape == (5, model.nv) and MU.shape == (5, model.n + 1, 6)
    for solver in SOLVERS:
        QD, DP = poisson.pdot(model, Q, P, tau, t=0.4, solver=solver)
        np.testing.assert_allclose(QD, V, atol=1e-11)
        for b in range(5):
            p, mu = poisson.momenta(model, Q[b], V[b], t=0.4)
            np.testing.assert_allclose(P[b], p, atol=1e-13)
            np.testing.assert_allclose(MU[b], mu, atol=1e-13)
            qd, dp = poisson.pdot(model, Q[b], P[b], tau[b], t=0.4, solver=solver)
            assert qd.shape == dp.shape == (model.nv,)
            np.testing.assert_allclose(QD[b], qd, atol=1e-13)
            np.testing.assert_allclose(DP[b], dp, atol=1e-12)
    # one configuration, many momenta
    QD = poisson.velocities(model, Q[0], P, solver="cholesky", t=0.4)
    np.testing.assert_allclose(QD[0], V[0], atol=1e-11)
    np.testing.assert_allclose(poisson.generalized_forces(model, Q)[2],
                               poisson.generalized_forces(model, Q[2]), atol=1e-13)


# ---------------------------------------------------------------- simulation
def test_triple_pendulum_simulation_matches_vereshchagin_and_conserves_energy():
    model = mb.models.triple_pendulum()
    q0, qd0 = np.array([0.3, -0.5, 0.2]), np.array([0.0, 1.0, -0.5])
    ref = mb.sim.simulate(model, mb.vereshchagin.forward_dynamics, (0.0, 2.0), q0, qd0,
                          rtol=1e-11, atol=1e-11)
    for solver in SOLVERS:
        res = poisson.simulate(model, (0.0, 2.0), q0, qd0, solver=solver, rtol=1e-11,
                               atol=1e-11, t_eval=np.linspace(0.0, 2.0, 21))
        assert res.t[-1] == 2.0
        np.testing.assert_allclose(res.q[-1], ref.q[-1], atol=1e-7)
        np.testing.assert_allclose(res.qd[-1], ref.qd[-1], atol=1e-7)
        np.testing.assert_allclose(res.p, (mb.tree.mass_matrix(model, res.q)
                                           @ res.qd[..., None])[..., 0], atol=1e-12)
        assert np.ptp(res.energy) < 1e-8


def test_simulation_with_quaternions_and_torque():
    rng = np.random.default_rng(4)
    model = random_tree(rng, ["spherical", "revolute"], flip=False)
    q0, qd0 = random_state(model, rng)
    tau = lambda t, q, qd: -0.5 * qd  # noqa: E731 (damping)
    ref = mb.sim.simulate(model, mb.tree.forward_dynamics, (0.0, 0.5), q0, qd0, tau=tau)
    res = poisson.simulate(model, (0.0, 0.5), q0, qd0, tau=tau, solver="cholesky")
    np.testing.assert_allclose(res.q[-1], ref.q[-1], atol=1e-7)
    np.testing.assert_allclose(res.qd[-1], ref.qd[-1], atol=1e-7)
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
    with pytest.raises(mb.ShapeError, match="solver must be one of"):
        poisson.velocities(model, np.zeros(3), np.zeros(3), solver="lu")
    with pytest.raises(mb.ShapeError, match="solver must be one of"):
        poisson.simulate(model, (0, 1), np.zeros(3), np.zeros(3), solver="LDLT")
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
    for solver in ("sweep", "cholesky"):
        assert np.abs(mb.poisson.velocities(model, q, p, solver=solver) - qd).max() < 1e-8


# ---------------------------------------------------------------- force elements
def dp_dt_along(model, q, qd, qdd, t, h=1e-3):
    """d/dt p(q(t), qd(t), t) along a curve with the tangent (dq/dt, qdd, 1): central
    differences with one Richardson step (truncation O(h^4))."""
    dq = model.qdot(q, qd)

    def p_at(s):
        return poisson.momenta(model, q + s * dq, qd + s * qdd, t=t + s)[0]

    d1 = (p_at(h) - p_at(-h)) / (2 * h)
    d2 = (p_at(h / 2) - p_at(-h / 2)) / h
    return (4 * d2 - d1) / 3


@pytest.mark.parametrize("base_motion", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_force_elements_agree_with_the_reference(seed, base_motion):
    """Springs, dampers, joint springs, (t, q, qd) loads and a control law: Q equals the
    reference's generalized forces, and dp/dt of (7) equals the derivative of p along the
    motion whose accelerations the reference computes."""
    model = sprung_tree(base_motion=base_motion)
    q, qd = sprung_state(model, seed)
    tau = np.random.default_rng(seed).normal(size=model.nv)
    for t in (0.0, 0.7):
        Q = reference.generalized_applied_forces(model, q, t=t, v=qd)
        np.testing.assert_allclose(poisson.generalized_forces(model, q, qd, t=t), Q,
                                   rtol=1e-12, atol=1e-12 * np.abs(Q).max())
        qdd = reference.forward_dynamics(model, q, qd, tau, t=t)
        expected = dp_dt_along(model, q, qd, qdd, t)
        p, _ = poisson.momenta(model, q, qd, t=t)
        for solver in SOLVERS:
            got_qd, dp = poisson.pdot(model, q, p, tau, t=t, solver=solver)
            np.testing.assert_allclose(got_qd, qd, rtol=1e-11, atol=1e-11)
            np.testing.assert_allclose(dp, expected, rtol=1e-9,
                                       atol=1e-9 * np.abs(expected).max())
    # at rest (qd = None) the dampers and speed-dependent loads see zero speeds
    np.testing.assert_allclose(poisson.generalized_forces(model, q, t=0.2),
                               reference.generalized_applied_forces(model, q, t=0.2),
                               rtol=1e-12, atol=1e-11)


def test_batches_of_any_number_of_dimensions():
    model = sprung_tree(base_motion=True)
    states = [sprung_state(model, s) for s in range(6)]
    Q = np.array([s[0] for s in states]).reshape(2, 3, model.nq)
    V = np.array([s[1] for s in states])[:3]  # (3, nv) broadcasts against (2, 3, nq)
    tau = np.linspace(-1.0, 1.0, model.nv)
    P, MU = poisson.momenta(model, Q, V, t=0.4)
    assert P.shape == (2, 3, model.nv) and MU.shape == (2, 3, model.n + 1, 6)
    for solver in SOLVERS:
        QD, DP = poisson.pdot(model, Q, P, tau, t=0.4, solver=solver)
        assert QD.shape == DP.shape == (2, 3, model.nv)
        np.testing.assert_allclose(QD, np.broadcast_to(V, QD.shape), atol=1e-11)
        qd, mu = poisson.velocities(model, Q, P, t=0.4, solver=solver, return_momenta=True)
        assert qd.shape == (2, 3, model.nv) and mu.shape == (2, 3, model.n + 1, 6)
        qd1, dp1 = poisson.pdot(model, Q[1, 2], P[1, 2], tau, t=0.4, solver=solver)
        np.testing.assert_allclose(DP[1, 2], dp1, rtol=1e-12, atol=1e-12)
    G = poisson.generalized_forces(model, Q, V, t=0.4)
    assert G.shape == (2, 3, model.nv)
    np.testing.assert_allclose(G[1, 0], poisson.generalized_forces(model, Q[1, 0], V[0], t=0.4),
                               rtol=1e-12, atol=1e-12)
    with pytest.raises(mb.ShapeError, match=r"q has shape \(2, 3, 9\), p has shape \(2, 8\)"):
        poisson.velocities(model, Q, P[0, :2])
    with pytest.raises(mb.ShapeError, match=r"p\[1\] \(j2.angle1\) is nan"):
        poisson.pdot(model, Q[0, 0], np.r_[0.0, np.nan, np.zeros(6)])
    with pytest.raises(mb.SingularSystemError, match="not finite"):
        poisson.pdot(model, Q, np.full(model.nv, 1e200))  # (Adot^T - A^T Omega) mu overflows


def test_a_changed_model_gives_the_fresh_answer():
    model = sprung_tree()
    q, qd = sprung_state(model)
    p, _ = poisson.momenta(model, q, qd)
    model.joint("j1").axis = (0.0, 1.0, 1.0)
    model.body("b4").mass = 2.0
    model.springs[0].stiffness = 50.0
    p, _ = poisson.momenta(model, q, qd)
    np.testing.assert_allclose(p, reference.mass_matrix(model, q) @ qd, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(poisson.generalized_forces(model, q, qd),
                               reference.generalized_applied_forces(model, q, v=qd),
                               rtol=1e-12, atol=1e-12)


def test_simulation_with_springs_dampers_and_a_state_feedback_tau():
    """tau(t, q, qd) on top of the model's own force elements: the (q, p) integration
    follows the (q, qd) one, and the dissipated energies agree."""
    model = sprung_tree(loads=False)
    q0, qd0 = sprung_state(model, 1)
    tau = lambda t, q, qd: -0.3 * qd + 0.2 * np.sin(2 * t) + 0.1 * q[:model.nv]  # noqa: E731
    span, t_eval = (0.0, 0.6), np.linspace(0.0, 0.6, 7)
    ref = mb.sim.simulate(model, mb.vereshchagin.forward_dynamics, span, q0, qd0, tau=tau,
                          rtol=1e-11, atol=1e-11, t_eval=t_eval)
    res = poisson.simulate(model, span, q0, qd0, tau=tau, solver="cholesky", rtol=1e-11,
                           atol=1e-11, t_eval=t_eval)
    np.testing.assert_allclose(res.q, ref.q, atol=1e-8)
    np.testing.assert_allclose(res.qd, ref.qd, atol=1e-8)
    np.testing.assert_allclose(res.p, poisson.momenta(model, res.q, res.qd)[0], atol=1e-12)
    assert res.dissipated[-1] > 0.01
    np.testing.assert_allclose(res.dissipated, ref.dissipated, atol=1e-8)


def test_simulate_names_the_integrator_and_the_solver():
    model = mb.models.double_pendulum()
    with pytest.raises(mb.ShapeError, match="solver='cholesky'"):
        poisson.simulate(model, (0, 1), [0, 0], [0, 0], method="cholesky")
    with pytest.raises(mb.TopologyError, match="close loops"):
        poisson.simulate(mb.models.crank_slider(), (0, 1), np.zeros(4), np.zeros(4))
    res = poisson.simulate(model, (0, 0.2), [0.3, 0], [0, 0], method="Radau", rtol=1e-9,
                           atol=1e-9)
    assert res.t[-1] == 0.2 and res.sol.status == 0


def test_undamped_springs_conserve_energy_in_q_p():
    model = sprung_tree(damping=0.0, loads=False)
    q0, qd0 = sprung_state(model, 2)
    res = poisson.simulate(model, (0.0, 5.0), q0, qd0, rtol=1e-11, atol=1e-11,
                           t_eval=np.linspace(0, 5, 51))
    E = res.energy
    assert np.ptp(res.potential_energy) > 1.0
    assert np.abs(E - E[0]).max() < 1e-8 * np.abs(E).max()


def test_compiled_sweep_equals_ivanovs_sweep():
    """The compiled sweep (chapter 4's elimination, velocity terms and gravity off) solves the
    same system as Ivanov's sweep and Cholesky in NumPy."""
    from test_vereshchagin import _kernel_model
    rng = np.random.default_rng(93)
    for n, pri, weld in ((1, (), ()), (5, (2,), (4,)), (18, (3, 9), (12,))):
        model = _kernel_model(rng, n, pri, weld)
        q, qd = rng.normal(size=(2, 3, model.nv))
        p, _ = mb.poisson.momenta(model, q, qd)
        fast = mb.poisson.velocities(model, q, p)
        np.testing.assert_allclose(fast, qd, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(fast, mb.poisson.velocities(model, q, p, solver="cholesky"),
                                   rtol=1e-10, atol=1e-10)
        qd2, mu = mb.poisson.velocities(model, q, p, return_momenta=True)   # NumPy sweep
        np.testing.assert_allclose(fast, qd2, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(mb.poisson.velocities(model, q[0].tolist(), p[0]), qd[0],
                                   rtol=1e-10, atol=1e-10)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(ALL_SPATIAL), min_size=1, max_size=6), st.booleans(),
       st.integers(0, 2**31))
def test_compiled_cholesky_equals_sweep_and_dense_solve(kinds, chain, seed):
    """Ivanov's two algorithms compiled alike (mb.poisson.compiled_system: alg. of §3 and of
    §4 as printed) return the same qd and mu as each other, as the NumPy sweep and as a dense
    solve of (6), on random chains and trees of every joint kind; the block-Cholesky route
    counts fewer operations whenever some joint moves."""
    rng = np.random.default_rng(seed)
    model = random_tree(rng, kinds, flip=False)
    if chain:                                  # every joint's parent is the previous body
        model = mb.Model(gravity=rng.normal(size=3))
        for k, kind in enumerate(kinds, start=1):
            mass = rng.uniform(0.5, 2.0)
            model.add_body(f"b{k}", mass, box_inertia(rng, mass))
            extra = ({"axes": (rng.normal(size=3), rng.normal(size=3))} if kind == "universal"
                     else {"axis": rng.normal(size=3)}
                     if kind in ("revolute", "prismatic", "cylindrical", "screw") else {})
            if kind == "screw":
                extra["lead"] = 0.3
            model.add_joint(f"j{k}", kind, k - 1, k, parent_point=rng.normal(size=3),
                            child_point=rng.normal(size=3), **extra)
    q, qd = random_state(model, rng)
    p, mu = poisson.momenta(model, q, qd)
    qd_dense, _, mu_dense = poisson.dense_system(model, q).solve(p)
    system = poisson.compiled_system(model, q)
    got = {s: system.solve(p, s) for s in SOLVERS}
    scale = 1.0 + np.abs(qd).max(initial=0.0)
    mscale = 1.0 + np.abs(mu).max()
    for s, (qd_s, mu_s, _) in got.items():
        np.testing.assert_allclose(qd_s, qd_dense, atol=1e-10 * scale, err_msg=s)
        np.testing.assert_allclose(qd_s, poisson.velocities(model, q, p, solver="sweep"),
                                   atol=1e-10 * scale, err_msg=s)
        np.testing.assert_allclose(mu_s[1:], mu_dense, atol=1e-10 * mscale, err_msg=s)
    np.testing.assert_allclose(got["cholesky"][0], got["sweep"][0], atol=1e-10 * scale)
    if model.nv:
        assert got["cholesky"][2].sum() < got["sweep"][2].sum()
