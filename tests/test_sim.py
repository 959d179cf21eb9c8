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
    """Digest fact 37: the actuator moment of (3.93) fed back reproduces phi_k(t)."""
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
    with pytest.raises(mb.ShapeError, match="v0"):
        mb.sim.simulate(model, mb.tree.forward_dynamics, (0.0, 1.0), [0, 0], [0, 0, 0])
