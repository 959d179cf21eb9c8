"""The course's example systems: consistent states, and the Cartesian formulation of the
closed loops against Lagrange's equations in the independent coordinates (an energy route:
the mass matrix and its derivatives come from the model's kinetic energy, by polarization
and finite differences, never from the Cartesian code)."""

import numpy as np
import pytest

import mbcourse as mb
import reference


def reduced_lagrange(model, state, u, ud, tau, h=1e-5):
    """ddu from Lagrange's equations in the independent coordinates u.

    ``state(u, ud) -> (q, qd)`` is linear in ``ud``; ``T = ud^T M(u) ud / 2``.
    """
    k = len(u)

    def Jq(u):  # dqd/dud, exact (linear)
        return np.column_stack([state(u, e)[1] for e in np.eye(k)])

    def M(u):
        J = Jq(u)
        q = state(u, np.zeros(k))[0]
        T = lambda x: float(model.kinetic_energy(q, J @ x))  # noqa: E731
        E = np.eye(k)
        return np.array([[T(E[a] + E[b]) - T(E[a] - E[b]) for b in range(k)]
                         for a in range(k)]) / 2.0

    def U(u):
        return float(model.potential_energy(state(u, np.zeros(k))[0]))

    def d(f, u, a):  # Richardson-extrapolated central difference along u_a
        e = np.eye(k)[a]
        D = lambda s: (f(u + s * e) - f(u - s * e)) / (2 * s)  # noqa: E731
        return (4 * D(h / 2) - D(h)) / 3

    dM = [d(M, u, a) for a in range(k)]
    Mdot_ud = sum(dM[a] * ud[a] for a in range(k)) @ ud
    dT = np.array([0.5 * ud @ dM[a] @ ud for a in range(k)])
    dU = np.array([d(U, u, a) for a in range(k)])
    Qu = Jq(u).T @ tau
    return np.linalg.solve(M(u), Qu - Mdot_ud + dT - dU)


@pytest.mark.parametrize("theta, omega", [(0.3, 2.0), (1.9, -5.0), (4.0, 0.5), (0.0, 3.0)])
@pytest.mark.parametrize("solver", ["dense", "schur"])
def test_crank_slider_against_reduced_lagrange(theta, omega, solver):
    model = mb.models.crank_slider()
    q, qd = mb.models.crank_slider_state(model, theta, omega)
    tau = np.array([0.7, 0.0, 0.0, -3.0])  # motor torque on the crank, force on the slider
    ddq = mb.cartesian.forward_dynamics(model, q, qd, tau, solver=solver)
    state = lambda u, ud: mb.models.crank_slider_state(model, u[0], ud[0])  # noqa: E731
    expected = reduced_lagrange(model, state, np.array([theta]), np.array([omega]), tau)
    assert ddq[0] == pytest.approx(expected[0], rel=1e-7, abs=1e-7)
    # the accelerations of the other joints follow the loop closure (differentiated)
    h = 1e-5
    q1, qd1 = mb.models.crank_slider_state(model, theta + h * omega, omega + h * ddq[0])
    q0, qd0 = mb.models.crank_slider_state(model, theta - h * omega, omega - h * ddq[0])
    np.testing.assert_allclose(ddq, (qd1 - qd0) / (2 * h), atol=1e-5 * (1 + abs(omega) ** 2))


@pytest.mark.parametrize("theta1, fold", [(0.3, 2.8), (0.9, 1.5), (1.5, 0.4)])
def test_solar_array_against_reduced_lagrange(theta1, fold):
    model = mb.models.solar_array()
    ud = np.array([0.4, -0.7])
    q, qd = mb.models.solar_array_state(model, theta1, fold, *ud)
    tau = np.array([0.0, 0.2, 1.5, 0.0, 0.0])  # spring torque at H2, motor on the arm at H3
    ddq = mb.cartesian.forward_dynamics(model, q, qd, tau)

    def state(u, ud):
        return mb.models.solar_array_state(model, u[0], u[1], ud[0], ud[1])

    expected = reduced_lagrange(model, state, np.array([theta1, fold]), ud, tau)
    np.testing.assert_allclose(ddq[:2], expected, rtol=1e-7, atol=1e-8)


def test_double_pendulum_matches_reference_and_lagrange():
    model = mb.models.double_pendulum(m1=1.2, m2=0.8, l1=1.1, l2=0.7)
    rng = np.random.default_rng(0)
    for _ in range(5):
        q, qd = rng.uniform(-3, 3, 2), rng.normal(size=2)
        for solver in ("dense", "schur", "ldlt"):
            np.testing.assert_allclose(mb.cartesian.forward_dynamics(model, q, qd, solver=solver),
                                       reference.forward_dynamics(model, q, qd), atol=1e-9)


def test_consistent_states_close_the_loops():
    cs = mb.models.crank_slider()
    for theta in np.linspace(0, 2 * np.pi, 9):
        q, qd = mb.models.crank_slider_state(cs, theta, 1.7)
        eq = mb.cartesian.equations(cs, q, qd)
        assert np.abs(eq.g).max() < 1e-14 and np.abs(eq.gdot).max() < 1e-13
    sa = mb.models.solar_array()
    for theta1 in (0.1, 0.7, 1.3):
        q, qd = mb.models.solar_array_state(sa, theta1, 2.0, 0.3, 0.1)
        eq = mb.cartesian.equations(sa, q, qd)
        assert np.abs(eq.g).max() < 1e-14 and np.abs(eq.gdot).max() < 1e-13
        assert eq.nc == 10 and 3 * sa.n - eq.nc == 2  # 12 coordinates, 10 rows, 2 dof


def test_model_builders_refuse_bad_dimensions():
    with pytest.raises(mb.ModelError, match="longer than the crank"):
        mb.models.crank_slider(r=0.3, l=0.2)
    with pytest.raises(mb.ModelError, match="m1 must be a positive"):
        mb.models.double_pendulum(m1=0.0)
    with pytest.raises(mb.InconsistentStateError, match="cannot be assembled"):
        mb.models.solar_array_state(mb.models.solar_array(), -np.pi / 2, 0.0)  # P on H3
