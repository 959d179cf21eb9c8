"""Simulation in generalized coordinates: conservation laws as an independent check of
every formulation (energy, momentum of free-floating systems), driven coordinates."""

import numpy as np
import pytest

import mbcourse as mb


@pytest.mark.parametrize("fd, span", [(mb.tree.forward_dynamics, 5.0),
                                      (mb.tree.spherical.forward_dynamics, 2.0),
                                      (mb.tree.planar.forward_dynamics, 10.0)])
def test_double_pendulum_energy(fd, span):
    model = mb.models.double_pendulum(m1=1.3, m2=0.7, l1=1.0, l2=0.8)
    res = mb.sim.simulate(model, fd, (0.0, span), [1.2, -0.4], [0.0, 2.0],
                          t_eval=np.linspace(0, span, 51))
    E = res.energy
    assert np.abs(E - E[0]).max() < 1e-6 * np.abs(E).max()


def test_free_floating_spacecraft_conserves_momentum_while_deploying():
    """Internal motor torques deploy the panels; linear and angular momentum stay put."""
    model = mb.models.floating_spacecraft()
    q0 = model.neutral_q()
    q0[7:] = [1.2, -1.2]  # panels folded
    v0 = np.array([0.05, -0.02, 0.01, 0.01, 0.02, -0.03, 0.0, 0.0])
    tau = lambda t, q, v: np.r_[np.zeros(6), -2.0 * np.cos(t), 2.0 * np.cos(t)]  # noqa: E731
    res = mb.sim.simulate(model, mb.tree.forward_dynamics, (0.0, 3.0), q0, v0, tau=tau,
                          t_eval=np.linspace(0, 3, 31), rtol=1e-12, atol=1e-12)
    P, H = res.momentum
    assert np.abs(P - P[0]).max() < 1e-9 * (1 + np.abs(P).max())
    assert np.abs(H - H[0]).max() < 1e-9 * (1 + np.abs(H).max())
    assert np.ptp(res.q[:, 7]) > 0.3  # the panels did move
    # the centre of mass moves uniformly
    r, _ = res.positions()
    m = model.masses()
    rC = np.einsum("i,tix->tx", m, r[:, 1:]) / m.sum()
    np.testing.assert_allclose(rC, rC[0] + np.outer(res.t, P[0] / m.sum()), atol=1e-9)


def test_driven_joint_follows_its_trajectory():
    """Yudintsev (3.93): the actuator moment of (3.93) fed back reproduces phi_k(t)."""
    model = mb.models.spatial_manipulator()
    k = 1  # the shoulder follows 0.3 sin(2t)
    phi = lambda t: 0.3 * np.sin(2 * t)  # noqa: E731
    dphi = lambda t: 0.6 * np.cos(2 * t)  # noqa: E731
    ddphi = lambda t: -1.2 * np.sin(2 * t)  # noqa: E731

    def motor(t, q, v):
        _, torque = mb.tree.driven(model, q, v, {k: ddphi(t)}, t=t)
        tau = np.zeros(model.nv)
        tau[k] = torque[0]
        return tau

    res = mb.sim.simulate(model, mb.tree.forward_dynamics, (0.0, 2.0), [0.2, phi(0), 0.5],
                          [0.4, dphi(0), 0.0], tau=motor, t_eval=np.linspace(0, 2, 21))
    np.testing.assert_allclose(res.q[:, k], phi(res.t), atol=1e-8)


def test_simulate_refuses_bad_spans():
    model = mb.models.double_pendulum()
    with pytest.raises(mb.ShapeError, match="must increase"):
        mb.sim.simulate(model, mb.tree.forward_dynamics, (1.0, 0.0), [0, 0], [0, 0])
    with pytest.raises(mb.ShapeError, match="qd0"):
        mb.sim.simulate(model, mb.tree.forward_dynamics, (0.0, 1.0), [0, 0], [0, 0, 0])


# ---------------------------------------------------------------- force elements
from test_vereshchagin import sprung_state, sprung_tree  # noqa: E402


def test_undamped_springs_conserve_energy():
    """Springs between bodies and to the ground, joint springs, gravity: T + U (springs
    included) stays constant to 1e-8 relative over 5 s."""
    model = sprung_tree(damping=0.0, loads=False)
    q0, qd0 = sprung_state(model, 2)
    res = mb.sim.simulate(model, mb.vereshchagin.forward_dynamics, (0.0, 5.0), q0, qd0,
                          method="DOP853", rtol=1e-11, atol=1e-11, t_eval=np.linspace(0, 5, 101))
    E = res.energy
    assert np.ptp(res.potential_energy) > 1.0  # the springs did work back and forth
    assert np.abs(E - E[0]).max() < 1e-8 * np.abs(E).max()
    assert np.all(res.dissipated == 0.0)


def test_dampers_dissipate_the_integral_of_their_power():
    """E(t) - E(0) equals the integral of model.damping_power along the motion (dense
    output, Gauss-Legendre on every step), and Trajectory.dissipated is that integral."""
    model = sprung_tree(damping=0.4, loads=False)
    q0, qd0 = sprung_state(model, 3)
    res = mb.sim.simulate(model, mb.vereshchagin.forward_dynamics, (0.0, 2.0), q0, qd0,
                          rtol=1e-11, atol=1e-11, dense_output=True)
    nq, nv = model.nq, model.nv

    def state(t):
        y = res.sol.sol(t)
        return model.normalize_q(y[:nq].T), y[nq:nq + nv].T

    def energy(t):
        q, qd = state(t)
        return model.kinetic_energy(q, qd) + model.potential_energy(q)

    x, w = np.polynomial.legendre.leggauss(8)
    ts = res.sol.sol.ts
    work = [0.0]
    for a, b in zip(ts[:-1], ts[1:]):
        tt = 0.5 * (b - a) * x + 0.5 * (a + b)
        q, qd = state(tt)
        work.append(work[-1] + 0.5 * (b - a) * w @ model.damping_power(q, qd))
    work = np.array(work)
    change = energy(ts) - energy(ts[0])
    assert -work[-1] > 0.1  # the dampers did dissipate
    assert np.abs(change - work).max() < 1e-7 * abs(work[-1])
    # the dissipated energy integrated with the motion
    np.testing.assert_allclose(res.dissipated, -np.interp(res.t, ts, work),
                               atol=1e-7 * abs(work[-1]))
    E = res.energy
    assert np.abs(E + res.dissipated - E[0]).max() < 1e-7 * abs(work[-1])


def test_options_go_to_the_formulation_and_method_to_the_integrator():
    model = mb.models.double_pendulum()
    seen = {}

    def fd(model, q, qd, tau=None, *, t=0.0, solver="dense"):
        seen["solver"] = solver
        return mb.tree.forward_dynamics(model, q, qd, tau, t=t)

    res = mb.sim.simulate(model, fd, (0.0, 0.5), [0.3, 0.1], [0.0, 0.0], method="Radau",
                          solver="ldlt", t_eval=[0.0, 0.25, 0.5])
    assert seen["solver"] == "ldlt"
    assert res.q.shape == (3, 2) and res.qd.shape == (3, 2) and res.t.tolist() == [0, 0.25, 0.5]
    assert np.ptp(res.energy) < 1e-6


def test_simulate_refuses_closed_loops_up_front():
    model = mb.models.crank_slider()
    calls = []

    def fd(*args, **kwargs):
        calls.append(1)
        return mb.tree.forward_dynamics(*args, **kwargs)

    with pytest.raises(mb.TopologyError,
                       match=r"joints \['B'\] close loops.*mb.loops.simulate"):
        mb.sim.simulate(model, fd, (0.0, 0.1), np.zeros(4), np.zeros(4))
    assert calls == []


def test_force_callbacks_take_t_q_qd():
    model = mb.models.double_pendulum()
    with pytest.raises(mb.ShapeError, match=r"tau\(t, q, qd\)"):
        mb.sim.simulate(model, mb.tree.forward_dynamics, (0.0, 1.0), [0, 0], [0, 0],
                        tau=lambda t: np.zeros(2))
    with pytest.raises(mb.ShapeError, match="tau"):
        mb.sim.simulate(model, mb.tree.forward_dynamics, (0.0, 1.0), [0, 0], [0, 0],
                        tau=np.zeros(3))


def test_integration_failure_is_named_not_a_shape_error():
    # qd' = 50 qd^3 blows up in finite time: the integrator's step collapses near t = 0.01
    model = mb.models.double_pendulum()
    with pytest.raises(mb.errors.IntegrationError, match=r"stopped at t=0\.00\d+ of 1.*rtol"):
        mb.sim.simulate(model, mb.tree.forward_dynamics, (0, 1), [0.0, 0.0], [1.0, 0.0],
                        tau=lambda t, q, qd: np.array([50 * qd[0] ** 3, 0.0]))


def test_a_refused_trial_state_rejects_the_step_not_the_run():
    """The flyball governor's first trial step reaches speeds of 1e10, where Vereshchagin's
    pivot test refuses the configuration (the tree equations answer noise there): the step
    is rejected and a shorter one tried, so both formulations integrate the same motion."""
    fly = mb.models.flyball_governor()
    q0, qd0 = mb.models.flyball_governor_state(fly)
    ends = [simulate(fly, (0.0, 0.01), q0, qd0, rtol=1e-9, atol=1e-9)
            for simulate in (mb.vereshchagin.simulate, mb.tree.simulate)]
    assert ends[0].t[-1] == ends[1].t[-1] == 0.01
    np.testing.assert_allclose(ends[0].q[-1], ends[1].q[-1], rtol=0, atol=1e-9)
    np.testing.assert_allclose(ends[0].qd[-1], ends[1].qd[-1], rtol=0, atol=1e-7)
