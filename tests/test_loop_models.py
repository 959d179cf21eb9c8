"""Closed-loop example systems: the four-bar and the multibody-benchmark problems A02 (N
four-bar), A04 (Bricard) and A05 (flyball governor) of ``mbcourse.models``.

Each ``*_state`` function must give an exactly assembled state: the Cartesian formulation
(which refuses states that violate a loop-closing joint) accepts it, its position and
velocity residuals vanish, its ``qd`` is the derivative of its ``q`` along the independent
coordinate (central differences), and the rank of the constraint Jacobian gives the
mechanism's mobility. The accelerations are checked against Lagrange's equation in the one
independent coordinate (an energy route: ``T`` and ``U`` from the model, never the
Cartesian code)."""

import numpy as np
import pytest

import mbcourse as mb
from mbcourse.errors import InconsistentStateError, ModelError, SingularSystemError

M = mb.models


def residuals(model, q, qd, planar=None):
    eq = mb.cartesian.equations(model, q, qd, planar=planar)
    return float(np.abs(eq.g).max()), float(np.abs(eq.gdot).max())


def mobility(model, q, planar=None):
    """Nullity of the Cartesian constraint Jacobian and its rank and number of rows."""
    eq = mb.cartesian.equations(model, q, np.zeros(model.nv), planar=planar)
    Q = eq.dense_Q()[0]
    s = np.linalg.svd(Q, compute_uv=False)
    rank = int(np.sum(s > 1e-9 * s[0]))
    return Q.shape[1] - rank, rank, Q.shape[0]


def fd_rate(state, angle, h=1e-5):
    """dq/d(angle) by central differences."""
    return (state(angle + h)[0] - state(angle - h)[0]) / (2 * h)


def lagrange_1dof(model, state, a, a_dot, h=1e-5):
    """d2a/dt2 of a one-degree-of-freedom system ``state(a, a_dot) -> (q, qd)``:
    ``m(a) a'' + m'(a) a'^2 / 2 + U'(a) = 0`` with ``m(a) = 2 T(q(a), qd(a, 1))``."""
    def mass(x):
        return 2.0 * float(model.kinetic_energy(*state(x, 1.0)))

    def U(x):
        return float(model.potential_energy(state(x, 0.0)[0]))

    def d(f, x):
        D = lambda s: (f(x + s) - f(x - s)) / (2 * s)  # noqa: E731
        return (4 * D(h / 2) - D(h)) / 3

    return -(0.5 * d(mass, a) * a_dot**2 + d(U, a)) / mass(a)


def joint_points(model, q):
    """World positions of every joint's point seen from its parent and from its child, and
    the joint axes (world), from the spanning tree's poses."""
    r, A = model.body_poses(q)
    out = {}
    for j in model.joints:
        P = r[j.parent] + A[j.parent] @ j.parent_point
        C = r[j.child] + A[j.child] @ j.child_point
        axis = A[j.parent] @ j.axis if hasattr(j, "axis") else None
        out[j.name] = (P, C, axis)
    return out


# ------------------------------------------------------------------ the four-bar
@pytest.mark.parametrize("theta", [0.0, 0.8, 2.5, 4.0, 7.5])
def test_four_bar_state_is_consistent(theta):
    model = M.four_bar()
    q, qd = M.four_bar_state(model, theta, 1.7)
    g, gdot = residuals(model, q, qd)
    assert g < 1e-14 and gdot < 1e-13
    ddq = mb.cartesian.forward_dynamics(model, q, qd)          # accepted: the loop is closed
    np.testing.assert_allclose(
        ddq, mb.cartesian.forward_dynamics(model, q, qd, planar=False, redundant="lstsq"),
        atol=1e-9)
    state = lambda x: M.four_bar_state(model, x, 1.0)  # noqa: E731
    np.testing.assert_allclose(fd_rate(state, theta), state(theta)[1], atol=1e-8)
    assert mobility(model, q) == (1, 8, 8)                     # 9 planar coordinates - 8 rows
    nullity, rank, rows = mobility(model, q, planar=False)     # in space: 20 rows, rank 17
    assert (nullity, rank, rows) == (1, 17, 20)
    expected = lagrange_1dof(model, lambda a, w: M.four_bar_state(model, a, w), theta, 1.7)
    assert ddq[0] == pytest.approx(expected, rel=1e-7, abs=1e-7)


def test_four_bar_dimensions_and_branch():
    model = M.four_bar()
    p = model.parameters
    assert (p["ground"], p["crank"], p["coupler"], p["rocker"]) == (0.4, 0.1, 0.35, 0.3)
    s, p2, p3, longest = sorted([p["ground"], p["crank"], p["coupler"], p["rocker"]])
    assert s == p["crank"] and s + longest < p2 + p3            # Grashof crank-rocker
    for theta in np.linspace(0, 2 * np.pi, 9):
        q, _ = M.four_bar_state(model, theta)
        pts = joint_points(model, q)
        O, A, B, C = (pts[k][0] for k in "OABC")
        for P, Q_, length in ((O, A, p["crank"]), (A, B, p["coupler"]), (C, B, p["rocker"]),
                              (O, C, p["ground"])):
            assert np.linalg.norm(P - Q_) == pytest.approx(length, abs=1e-14)
        assert B[1] > 0.0                                       # the open branch: B above OC
    with pytest.raises(ModelError, match="Grashof"):
        M.four_bar(crank=0.2, coupler=0.1)
    q, qd = M.four_bar_state(model, 1.0, 1.0)
    with pytest.raises(InconsistentStateError):
        mb.cartesian.forward_dynamics(model, q + [0, 0, 0, 0.01], qd)


# ------------------------------------------------------------------ Bricard (A04)
@pytest.mark.parametrize("angle", [0.0, 0.4, np.pi / 2, 2.8, -0.4])
def test_bricard_state_is_consistent(angle):
    model = M.bricard()
    q, qd = M.bricard_state(model, angle, 0.9)
    g, gdot = residuals(model, q, qd)
    assert g < 1e-12 and gdot < 1e-12
    with pytest.raises(SingularSystemError, match="redundant"):
        mb.cartesian.forward_dynamics(model, q, qd)             # overconstrained
    ddq = mb.cartesian.forward_dynamics(model, q, qd, redundant="lstsq")
    state = lambda x: M.bricard_state(model, x, 1.0)  # noqa: E731
    np.testing.assert_allclose(fd_rate(state, angle), state(angle)[1], atol=1e-8)
    # Grubler-Kutzbach: 5 x 6 - 6 x 5 = 0, but the Jacobian has rank 29: one mobility
    assert mobility(model, q) == (1, 29, 30)
    expected = lagrange_1dof(model, lambda a, w: M.bricard_state(model, a, w), angle, 0.9)
    assert ddq[0] == pytest.approx(expected, rel=1e-6, abs=1e-7)
    # the three-fold symmetry of the motion: (a, -b, a, -b, a, b)
    np.testing.assert_allclose(ddq[[0, 2, 4]], ddq[0], atol=1e-8)
    np.testing.assert_allclose(ddq[[1, 3]], -ddq[5], atol=1e-8)


def test_bricard_dimensions():
    model = M.bricard()
    assert model.parameters == dict(length=1.0, mass=1.0, width=0.1, g=9.81)
    assert [b.mass for b in model.bodies[1:]] == [1.0] * 5
    pts = joint_points(model, np.zeros(6))
    corners = dict(A=(0, 0, 0), B=(1, 0, 0), C=(1, -1, 0), D=(1, -1, 1), E=(0, -1, 1),
                   F=(0, 0, 1))
    axes = dict(A=(0, 1, 0), B=(0, 0, 1), C=(1, 0, 0), D=(0, 1, 0), E=(0, 0, 1), F=(1, 0, 0))
    for name, (P, C, axis) in pts.items():
        np.testing.assert_allclose(P, corners[name], atol=1e-15)
        np.testing.assert_allclose(C, corners[name], atol=1e-15)
        np.testing.assert_allclose(axis, axes[name], atol=1e-15)
    # along the motion: unit links, consecutive axes perpendicular to each other and to the
    # link between them (the orthogonal Bricard linkage)
    ring = "ABCDEF"
    for angle in (0.3, 1.2, 2.6):
        pts = joint_points(model, M.bricard_state(model, angle)[0])
        for k in range(6):
            (P, _, u), (Q_, _, w) = pts[ring[k]], pts[ring[(k + 1) % 6]]
            assert np.linalg.norm(Q_ - P) == pytest.approx(1.0, abs=1e-12)
            assert abs(u @ w) < 1e-12 and abs(u @ (Q_ - P)) < 1e-12 and abs(w @ (Q_ - P)) < 1e-12
    # the reference point P3 (joint C) sweeps x from 1 (a = 0) to -1 (a = pi)
    assert joint_points(model, M.bricard_state(model, np.pi)[0])["C"][0] == \
        pytest.approx([-1.0, -1.0, 0.0], abs=1e-12)
    with pytest.raises(InconsistentStateError):
        M.bricard_state(model, -np.pi / 2)


# ------------------------------------------------------------------ N four-bar (A02)
@pytest.mark.parametrize("N", [1, 3])
@pytest.mark.parametrize("angle", [0.0, 0.7, -2.0])
def test_n_four_bar_state_is_consistent(N, angle):
    model = M.n_four_bar(N=N)
    q, qd = M.n_four_bar_state(model, angle, -1.0)
    g, gdot = residuals(model, q, qd)
    assert g < 1e-14 and gdot < 1e-14
    ddq = mb.cartesian.forward_dynamics(model, q, qd)
    state = lambda x: M.n_four_bar_state(model, x, 1.0)  # noqa: E731
    np.testing.assert_allclose(fd_rate(state, angle), state(angle)[1], atol=1e-9)
    assert mobility(model, q) == (1, 6 * N + 2, 6 * N + 2)
    # a compound pendulum: cranks turn about their pivots, couplers translate
    m, L, g0 = 1.0, 1.0, 9.81
    inertia = (N + 1) * m * L**2 / 3 + N * m * L**2
    moment = g0 * m * L * ((N + 1) / 2 + N)
    assert ddq[0] == pytest.approx(moment * np.sin(angle) / inertia, abs=1e-10)
    sign = np.where(np.array([name[0] for name in model.q_names]) == "P", -1.0, 1.0)
    np.testing.assert_allclose(ddq, sign * ddq[0], atol=1e-10)      # every crank alike


def test_n_four_bar_singular_positions_and_benchmark_start():
    N = 3
    model = M.n_four_bar(N=N)
    # bars aligned horizontally: the Jacobian loses N ranks, N + 1 instantaneous DOF
    for angle in (np.pi / 2, -np.pi / 2):
        q, qd = M.n_four_bar_state(model, angle, 0.0)
        assert mobility(model, q) == (N + 1, 5 * N + 2, 6 * N + 2)
    # the benchmark (N = 40): 2N + 1 bars of 1 m and 1 kg, cranks vertical, dB0x/dt = 1 m/s
    model = M.n_four_bar()
    assert model.parameters == dict(N=40, length=1.0, mass=1.0, g=9.81)
    assert model.n == 81 and [b.mass for b in model.bodies[1:]] == [1.0] * 81
    q, qd = M.n_four_bar_state(model, 0.0, -1.0)
    pts = joint_points(model, q)
    for i in range(41):
        np.testing.assert_allclose(pts[f"A{i}"][0], (i, 0, 0), atol=1e-15)
        np.testing.assert_allclose(pts[f"A{i}"][1], (i, 0, 0), atol=1e-14)
    for i in range(1, 41):
        np.testing.assert_allclose(pts[f"P{i}"][0], (i - 1, 1, 0), atol=1e-14)
        np.testing.assert_allclose(pts[f"Q{i}"][1], (i, 1, 0), atol=1e-14)
    r, A = model.body_poses(q)
    v, w = model.body_velocities(q, qd)
    B0 = A[1] @ model.joint("P1").parent_point
    np.testing.assert_allclose(v[1] + np.cross(w[1], B0), (1.0, 0.0, 0.0), atol=1e-15)
    assert mb.cartesian.forward_dynamics(model, q, qd)[0] == pytest.approx(0.0, abs=1e-10)


# ------------------------------------------------------------------ flyball governor (A05)
def test_flyball_governor_benchmark_data():
    model = M.flyball_governor()
    p = model.parameters
    assert (p["stiffness"], p["damping"], p["rest_length"], p["density"]) == (8e5, 4e4, 0.5, 3000)
    masses = [b.mass for b in model.bodies[1:]]
    np.testing.assert_allclose(masses, [0.3, 3.0, 5.3, 5.3], rtol=1e-12)
    q, qd = M.flyball_governor_state(model)
    np.testing.assert_allclose(q, [0.0, 0.5, np.pi / 6, np.pi / 6], atol=1e-15)
    np.testing.assert_allclose(qd, [2 * np.pi, 0.0, 0.0, 0.0], atol=1e-15)
    r, A = model.body_poses(q)
    # the balls at the rods' far ends, 30 degrees below the horizontal from the shaft's top
    c = p["arm_centre"]
    for k, sign in ((3, 1.0), (4, -1.0)):
        ball = r[k] + A[k] @ (sign * np.array([1.0 - c, 0, 0]))
        np.testing.assert_allclose(ball, (sign * (0.05 + np.cos(np.pi / 6)), 0, 0.5), atol=1e-14)
    # both springs at their rest length at the start
    for s in model.springs:
        a = r[s.body_a] + A[s.body_a] @ s.point_a
        b = r[s.body_b] + A[s.body_b] @ s.point_b
        assert np.linalg.norm(b - a) == pytest.approx(0.5, abs=1e-14)
    # a tree: four degrees of freedom; spinning at 2 pi rad/s throws the balls out
    assert mobility(model, q) == (4, 20, 20)
    ddq = mb.cartesian.forward_dynamics(model, q, qd)
    assert ddq[2] < 0 and ddq[3] < 0                    # alpha decreases: the balls rise
    np.testing.assert_allclose(ddq, mb.tree.forward_dynamics(model, q, qd), atol=1e-8)
    with pytest.raises(ModelError):
        M.flyball_governor(couplers="chain")


@pytest.mark.parametrize("couplers", ["spring", "rigid"])
@pytest.mark.parametrize("alpha", [np.pi / 6, 0.1, 1.1])
def test_flyball_governor_state_is_consistent(couplers, alpha):
    model = M.flyball_governor(couplers)
    q, qd = M.flyball_governor_state(model, alpha, 0.8, spin=0.3, spin_rate=2.0)
    g, gdot = residuals(model, q, qd)
    assert g < 1e-14 and gdot < 1e-13
    mb.cartesian.forward_dynamics(model, q, qd, redundant="lstsq")
    state = lambda x: M.flyball_governor_state(model, x, 1.0, spin=0.3, spin_rate=0.0)  # noqa: E731
    np.testing.assert_allclose(fd_rate(state, alpha), state(alpha)[1], atol=1e-8)
    r, A = model.body_poses(q)
    if couplers == "spring":
        assert mobility(model, q) == (4, 20, 20)
        return
    # two planar loops of revolute joints in space: 6 repeated rows, 2 degrees of freedom
    assert mobility(model, q) == (2, 34, 40)
    for k in (1, 2):
        pin, elbow = model.joint(f"pin{k}"), model.joint(f"elbow{k}")
        a = r[pin.parent] + A[pin.parent] @ pin.parent_point
        b = r[elbow.child] + A[elbow.child] @ elbow.child_point
        assert np.linalg.norm(b - a) == pytest.approx(0.5, abs=1e-14)
    # with the shaft at rest the arms swing in their plane: one-coordinate Lagrange
    q0, qd0 = M.flyball_governor_state(model, alpha, 0.8, spin_rate=0.0)
    ddq = mb.cartesian.forward_dynamics(model, q0, qd0, redundant="lstsq")
    expected = lagrange_1dof(
        model, lambda a, w: M.flyball_governor_state(model, a, w, spin_rate=0.0), alpha, 0.8)
    assert ddq[2] == pytest.approx(expected, rel=1e-6, abs=1e-7)
    # no torque spins the shaft, by symmetry. Chapter 2's minimum-norm solve of these
    # redundant spatial loops (thin rods: a badly scaled KKT system) is accurate to a few
    # 1e-9; the cut-joint method, with 5 tree speeds, to rounding
    assert ddq[0] == pytest.approx(0.0, abs=1e-8)
    assert mb.loops.forward_dynamics(model, q0, qd0)[0] == pytest.approx(0.0, abs=1e-14)
