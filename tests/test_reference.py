"""The independent reference dynamics (tests/reference.py) is itself trustworthy: closed-form
Lagrange equations, Euler's equations, a sympy derivation, energy balance, the Hessian of
the kinetic energy, prescribed base motion and a conservative integration."""

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

import mbcourse as mb
from reference import (
    bias_forces,
    body_accelerations,
    forward_dynamics,
    generalized_applied_forces,
    inverse_dynamics,
    jacobians,
    mass_matrix,
)
from strategies import random_body, random_model, random_rotation, random_state

KINDS = ["revolute", "prismatic", "screw", "cylindrical", "universal", "spherical", "free"]


# ------------------------------------------------- random trees (as in test_model.py)
def energy(model, q, v):
    return model.kinetic_energy(q, v) + model.potential_energy(q)


# ------------------------------------------------------------ double pendulum
M1, M2, L1, A1, A2, J1, J2, G = 1.3, 0.7, 1.1, 0.4, 0.6, 0.09, 0.05, 9.81


def double_pendulum():
    model = mb.Model(gravity=(0, -G, 0))
    model.add_body("upper", M1, [0.01, J1, J1])
    model.add_body("lower", M2, [0.02, J2, J2])
    model.add_joint("A", "revolute", "ground", "upper", child_point=(-A1, 0, 0), axis=(0, 0, 1))
    model.add_joint("B", "revolute", "upper", "lower", parent_point=(L1 - A1, 0, 0),
                    child_point=(-A2, 0, 0), axis=(0, 0, 1))
    return model


def double_pendulum_lagrange(q, v, tau):
    """Lagrange's equations written by hand: angles from the x axis, y up."""
    t1, t2 = q
    w1, w2 = v
    c, s = np.cos(t2), np.sin(t2)
    M = np.array([
        [J1 + M1 * A1**2 + J2 + M2 * (L1**2 + A2**2 + 2 * L1 * A2 * c),
         J2 + M2 * (A2**2 + L1 * A2 * c)],
        [J2 + M2 * (A2**2 + L1 * A2 * c), J2 + M2 * A2**2],
    ])
    h = M2 * L1 * A2 * s * np.array([-(2 * w1 * w2 + w2**2), w1**2])
    Q = -G * np.array([M1 * A1 * np.cos(t1) + M2 * (L1 * np.cos(t1) + A2 * np.cos(t1 + t2)),
                       M2 * A2 * np.cos(t1 + t2)])
    return M, h, Q, np.linalg.solve(M, tau + Q - h)


def test_double_pendulum_matches_lagrange():
    model = double_pendulum()
    rng = np.random.default_rng(0)
    for _ in range(10):
        q = rng.uniform(-np.pi, np.pi, 2)
        v = 3 * rng.normal(size=2)
        tau = rng.normal(size=2)
        M, h, Q, vdot = double_pendulum_lagrange(q, v, tau)
        np.testing.assert_allclose(mass_matrix(model, q), M, rtol=0, atol=1e-14)
        np.testing.assert_allclose(generalized_applied_forces(model, q), Q, rtol=0, atol=1e-13)
        np.testing.assert_allclose(bias_forces(model, q, v), h, rtol=0, atol=1e-10)
        np.testing.assert_allclose(forward_dynamics(model, q, v, tau), vdot, rtol=0, atol=1e-10)
        np.testing.assert_allclose(inverse_dynamics(model, q, v, vdot), tau, rtol=0, atol=1e-10)


# -------------------------------------------------------------- one free body
@pytest.mark.parametrize("seed", range(4))
def test_free_body_obeys_euler_equations(seed):
    rng = np.random.default_rng(seed)
    model = mb.Model()
    body = random_body(model, "top", rng)
    model.add_joint("float", "free", "ground", "top", parent_point=rng.normal(size=3),
                    orientation=random_rotation(rng))
    q, v = random_state(model, rng)
    v *= 2.0
    vdot = forward_dynamics(model, q, v)
    J = body.inertia
    w = v[3:]  # angular velocity in body axes
    np.testing.assert_allclose(vdot[:3], 0.0, atol=1e-10)
    np.testing.assert_allclose(vdot[3:], np.linalg.solve(J, -np.cross(w, J @ w)), atol=1e-10)


def test_free_body_with_offset_joint_gravity_and_load():
    """Centre of mass off the joint point: the joint speeds are not the CoM motion, but
    the CoM accelerates with g + F/m and the rotation obeys Euler with the load's moment."""
    rng = np.random.default_rng(11)
    g = np.array([0.3, -9.81, 0.5])
    model = mb.Model(gravity=g)
    body = random_body(model, "top", rng)
    model.add_joint("float", "free", "ground", "top", parent_point=rng.normal(size=3),
                    child_point=rng.normal(size=3), orientation=random_rotation(rng))
    f_body, point = np.array([0.4, -1.0, 2.0]), np.array([0.1, 0.3, -0.2])
    model.add_force("top", force=f_body, point=point, frame="body")
    q, v = random_state(model, rng)
    vdot = forward_dynamics(model, q, v)
    acc, alpha = body_accelerations(model, q, v, vdot)
    _, A = model.body_poses(q)
    A = A[1]
    np.testing.assert_allclose(acc[1], g + A @ f_body / body.mass, atol=1e-10)
    J = body.inertia
    w = A.T @ model.body_velocities(q, v)[1][1]
    wdot = np.linalg.solve(J, np.cross(point, f_body) - np.cross(w, J @ w))
    np.testing.assert_allclose(A.T @ alpha[1], wdot, atol=1e-10)


# ------------------------------------------------------------ sympy derivation
def test_revolute_prismatic_arm_matches_sympy_lagrange():
    """A planar arm: a link turning about z, a slider moving along it (CoM off the slide)."""
    m1, m2, a1, c, d, e, j1, j2, g = 1.7, 0.6, 0.35, 0.5, 0.2, 0.15, 0.08, 0.03, 9.81
    model = mb.Model(gravity=(0, -g, 0))
    model.add_body("link", m1, [0.01, j1, j1])
    model.add_body("slider", m2, [0.02, j2 + 0.01, j2])
    model.add_joint("A", "revolute", "ground", "link", child_point=(-a1, 0, 0), axis=(0, 0, 1))
    model.add_joint("B", "prismatic", "link", "slider", parent_point=(c, 0, 0),
                    child_point=(-d, -e, 0), axis=(1, 0, 0))

    t = sp.symbols("t")
    th, s = sp.Function("th")(t), sp.Function("s")(t)
    rot = sp.Matrix([[sp.cos(th), -sp.sin(th)], [sp.sin(th), sp.cos(th)]])
    r1 = rot * sp.Matrix([a1, 0])
    r2 = rot * sp.Matrix([a1 + c + s + d, e])
    T = (m1 * r1.diff(t).dot(r1.diff(t)) + m2 * r2.diff(t).dot(r2.diff(t))
         + (j1 + j2) * th.diff(t) ** 2) / 2
    U = g * (m1 * r1[1] + m2 * r2[1])
    L = T - U
    coords = [th, s]
    speeds = [x.diff(t) for x in coords]
    accels = [x.diff(t, 2) for x in coords]
    tau = sp.symbols("tau0:2")
    eqs = [sp.diff(L.diff(qd), t) - L.diff(x) - f for x, qd, f in zip(coords, speeds, tau)]
    Mmat = sp.Matrix([[eq.diff(a) for a in accels] for eq in eqs])
    rest = sp.Matrix(eqs).subs({a: 0 for a in accels})
    sol = Mmat.LUsolve(-rest)
    syms = sp.symbols("q0:2 v0:2")
    sol = sol.subs(dict(zip(speeds, syms[2:]))).subs(dict(zip(coords, syms[:2])))
    fd = sp.lambdify(syms + tau, list(sol), "numpy")

    rng = np.random.default_rng(5)
    for _ in range(3):
        q, v, f = rng.normal(size=2), 2 * rng.normal(size=2), rng.normal(size=2)
        expected = np.array(fd(*q, *v, *f), dtype=float)
        np.testing.assert_allclose(forward_dynamics(model, q, v, f), expected, rtol=0, atol=1e-9)


# ------------------------------------------------------------- random trees
@pytest.mark.parametrize("seed", range(6))
def test_mass_matrix_is_the_hessian_of_kinetic_energy(seed):
    rng = np.random.default_rng(seed)
    kinds = list(rng.choice(KINDS, size=4))
    model = random_model(rng, kinds, reverse={1} if seed % 2 else ())
    q, v = random_state(model, rng)
    M = mass_matrix(model, q)
    assert np.array_equal(M, M.T)
    assert np.linalg.eigvalsh(M).min() > 0
    # T is quadratic in v: T(e_k + e_l) - T(e_k - e_l) = 2 M_kl exactly (polarization)
    E = np.eye(model.nv)
    plus = model.kinetic_energy(q, E[:, None, :] + E[None, :, :])
    minus = model.kinetic_energy(q, E[:, None, :] - E[None, :, :])
    np.testing.assert_allclose(M, (plus - minus) / 2, rtol=0, atol=1e-13 * np.abs(M).max())
    assert 0.5 * v @ M @ v == pytest.approx(float(model.kinetic_energy(q, v)), rel=1e-13)
    # the Jacobians reproduce body_velocities for any speeds
    Jv, Jw = jacobians(model, q)
    vel, omega = model.body_velocities(q, v)
    np.testing.assert_allclose(Jv @ v, vel, atol=1e-13)
    np.testing.assert_allclose(Jw @ v, omega, atol=1e-13)


@pytest.mark.parametrize("seed", range(8))
def test_power_balance_on_random_trees(seed):
    """d(T + U)/dt = tau . v along the motion computed by forward_dynamics."""
    rng = np.random.default_rng(100 + seed)
    kinds = list(rng.choice(KINDS, size=int(rng.integers(2, 6))))
    model = random_model(rng, kinds, reverse={0, 2} if seed % 3 == 0 else ())
    q, v = random_state(model, rng)
    tau = rng.normal(size=model.nv)
    vdot = forward_dynamics(model, q, v, tau)
    qd = model.qdot(q, v)

    def derivative(h):  # of E along the straight line (q + h qd, v + h vdot)
        s = np.array([h, -h])[:, None]
        e = energy(model, q + s * qd, v + s * vdot)
        return (e[0] - e[1]) / (2 * h)

    h = 1e-3
    dE = (4 * derivative(h / 2) - derivative(h)) / 3
    scale = 1.0 + np.abs(tau * v).sum()
    assert dE == pytest.approx(tau @ v, abs=1e-7 * scale)


def test_quaternion_renormalization_and_step_do_not_matter():
    rng = np.random.default_rng(21)
    model = random_model(rng, ["spherical", "free", "revolute", "spherical"])
    q, v = random_state(model, rng)
    v *= 3.0
    h = bias_forces(model, q, v)
    scale = np.abs(h).max()
    np.testing.assert_allclose(bias_forces(model, q, v, renormalize=True), h, atol=1e-10 * scale)
    np.testing.assert_allclose(bias_forces(model, q, v, step=1e-3), h, atol=1e-10 * scale)
    np.testing.assert_allclose(bias_forces(model, q, v, step=4e-3), h, atol=1e-10 * scale)


def test_inverse_dynamics_inverts_forward_dynamics():
    rng = np.random.default_rng(8)
    model = random_model(rng, KINDS)
    model.add_force("b3", torque=lambda t, q, qd: (np.sin(t), 0.0, 1.0), force=(0.0, 2.0, 0.0),
                    point=(0.1, 0.0, 0.2), frame="body")
    q, v = random_state(model, rng)
    tau = rng.normal(size=model.nv)
    vdot = forward_dynamics(model, q, v, tau, t=0.7)
    np.testing.assert_allclose(inverse_dynamics(model, q, v, vdot, t=0.7), tau, atol=1e-10)
    with pytest.raises(ValueError, match="one state at a time"):
        forward_dynamics(model, np.array([q, q]), np.array([v, v]))


def test_energy_is_conserved_by_an_integration():
    rng = np.random.default_rng(3)
    model = random_model(rng, ["revolute"] * 3)
    q0, v0 = random_state(model, rng)
    nq = model.nq

    def rhs(t, y):
        q, v = y[:nq], y[nq:]
        return np.concatenate([model.qdot(q, v), forward_dynamics(model, q, v)])

    sol = solve_ivp(rhs, (0.0, 1.0), np.concatenate([q0, v0]), method="DOP853",
                    rtol=1e-10, atol=1e-10)
    assert sol.success
    e0 = float(energy(model, q0, v0))
    e1 = float(energy(model, sol.y[:nq, -1], sol.y[nq:, -1]))
    scale = abs(e0) + float(model.kinetic_energy(q0, v0))
    assert abs(e1 - e0) < 1e-7 * scale
    assert np.abs(sol.y[nq:, -1] - v0).max() > 1e-2  # it really moved


# ------------------------------------------------------------ prescribed base
def test_pendulum_on_a_shaking_base():
    """Base moving as x_b(t) = 0.3 sin(2t): (m a^2 + J) th'' - m a x_b'' sin th = -m g a cos th."""
    m, a, J, g = 1.4, 0.7, 0.06, 9.81
    model = mb.Model(gravity=(0, -g, 0))
    model.add_body("bob", m, [0.01, J, J])
    model.add_joint("O", "revolute", "ground", "bob", child_point=(-a, 0, 0), axis=(0, 0, 1))
    model.set_base_motion(position=lambda t: (0.3 * np.sin(2 * t), 0, 0),
                          velocity=lambda t: (0.6 * np.cos(2 * t), 0, 0),
                          acceleration=lambda t: (-1.2 * np.sin(2 * t), 0, 0))
    rng = np.random.default_rng(2)
    for t in (0.0, 0.4, 1.9):
        th, w = rng.normal(size=2)
        xdd = -1.2 * np.sin(2 * t)
        assert mass_matrix(model, [th], t)[0, 0] == pytest.approx(m * a**2 + J, rel=1e-14)
        np.testing.assert_allclose(bias_forces(model, [th], [w], t), [-m * a * xdd * np.sin(th)],
                                   atol=1e-10)
        np.testing.assert_allclose(generalized_applied_forces(model, [th], t),
                                   [-m * g * a * np.cos(th)], atol=1e-12)


def test_pendulum_on_a_turntable():
    """Base turning by phi(t) about z, pendulum hinged at (d, 0, 0) on it:
    h = (m a^2 + J) phi'' + m d a (phi'' cos th + phi'^2 sin th)."""
    m, a, d, J = 0.9, 0.5, 0.8, 0.04
    model = mb.Model(gravity=(0, 0, -9.81))  # along the hinge: no torque
    model.add_body("bob", m, [J, J, J])
    model.add_joint("O", "revolute", "ground", "bob", parent_point=(d, 0, 0),
                    child_point=(-a, 0, 0), axis=(0, 0, 1))

    def phi(t):
        return 0.7 * np.sin(1.3 * t), 0.91 * np.cos(1.3 * t), -1.183 * np.sin(1.3 * t)

    def rz(angle):
        c, s = np.cos(angle), np.sin(angle)
        return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])

    model.set_base_motion(orientation=lambda t: rz(phi(t)[0]),
                          angular_velocity=lambda t: (0, 0, phi(t)[1]),
                          angular_acceleration=lambda t: (0, 0, phi(t)[2]))
    rng = np.random.default_rng(4)
    for t in (0.3, 1.1, 2.5):
        th, w = rng.normal(size=2)
        _, dphi, ddphi = phi(t)
        expected = (m * a**2 + J) * ddphi + m * d * a * (ddphi * np.cos(th) + dphi**2 * np.sin(th))
        np.testing.assert_allclose(bias_forces(model, [th], [w], t), [expected], atol=1e-10)
        np.testing.assert_allclose(generalized_applied_forces(model, [th], t), [0.0], atol=1e-12)
