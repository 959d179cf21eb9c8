"""Chapter 2: Cartesian formulation.

* every elementary row equals the finite-difference derivatives of its position-level
  constraint (and the book's relative-rotation row (2.29));
* forward dynamics with all three solvers equals the independent reference (Jourdain's
  principle, tests/reference.py) on random spatial and planar trees;
* closed loops, reactions (action = reaction, no work), batches, bad input;
* screw joints: the screw row is the exact derivative of its position function, every
  joint's rows hold along its motion, screw trees agree with mb.tree, a loop closes
  through a screw joint;
* spring-dampers, joint springs and (t, q, qd) loads act as in mb.tree and the reference;
* to_generalized and consistent_state take absolute states back to the Model's coordinates.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.linalg import expm

import mbcourse as mb
from mbcourse.cartesian import constraints as C
from mbcourse.errors import (InconsistentStateError, ModelError, ShapeError,
                             SingularSystemError, TopologyError)
from mbcourse.spatial import skew, vee
import reference

SOLVERS = ["dense", "schur", "ldlt"]


# ------------------------------------------------------------------ row checks
def spatial_motion(rng):
    """A smooth random motion r(t), A(t) with known velocity and acceleration at t = 0."""
    r0, v, a = rng.normal(size=(3, 3))
    A0 = expm(skew(rng.normal(size=3)))
    w, dw = rng.normal(size=(2, 3))

    def at(t):
        return r0 + v * t + 0.5 * a * t * t, A0 @ expm(skew(w * t + 0.5 * dw * t * t))

    state = C.SpatialState(r0[None], A0[None], v[None], w[None])
    return at, state, np.concatenate([a, dw])


def planar_motion(rng):
    x0, v, a = rng.normal(size=(3, 2))
    phi0, w, dw = rng.normal(size=3)

    def at(t):
        return x0 + v * t + 0.5 * a * t * t, phi0 + w * t + 0.5 * dw * t * t

    state = C.PlanarState(x0[None], np.array([phi0]), v[None], np.array([w]))
    return at, state, np.array([a[0], a[1], dw])


def derivatives(fn, h=1e-4):
    """First and second central differences of a scalar function of t at t = 0."""
    f1, f0, fm = fn(h), fn(0.0), fn(-h)
    return (f1 - fm) / (2 * h), (f1 - 2 * f0 + fm) / (h * h)


@pytest.mark.parametrize("seed", range(10))
def test_point_plane_row_matches_finite_differences(seed):
    rng = np.random.default_rng(seed)
    mi, si, ai = spatial_motion(rng)
    mj, sj, aj = spatial_motion(rng)
    n = rng.normal(size=3)
    n /= np.linalg.norm(n)
    rho, d = rng.normal(size=3), rng.normal()

    def g(t):
        (ri, Ai), (rj, Aj) = mi(t), mj(t)
        return n @ (Ai.T @ (Aj @ rho + rj - ri)) - d

    g0, Qi, Qj, b = C.point_plane(n, rho, d, si, sj)
    gd, gdd = derivatives(g)
    assert g0[0] == pytest.approx(g(0.0), abs=1e-14)
    dXi = np.concatenate([si.v[0], si.w[0]])
    dXj = np.concatenate([sj.v[0], sj.w[0]])
    assert Qi[0] @ dXi + Qj[0] @ dXj == pytest.approx(gd, abs=1e-6)
    assert Qi[0] @ ai + Qj[0] @ aj - b[0] == pytest.approx(gdd, abs=1e-5)


@pytest.mark.parametrize("seed", range(10))
def test_perpendicular_row_matches_finite_differences(seed):
    rng = np.random.default_rng(100 + seed)
    mi, si, ai = spatial_motion(rng)
    mj, sj, aj = spatial_motion(rng)
    u, w, c0 = rng.normal(size=3), rng.normal(size=3), rng.normal()

    def g(t):
        return u @ (mi(t)[1].T @ mj(t)[1] @ w) - c0

    g0, Qi, Qj, b = C.perpendicular(u, w, c0, si, sj)
    gd, gdd = derivatives(g)
    assert g0[0] == pytest.approx(g(0.0), abs=1e-14)
    assert Qi[0] @ np.r_[si.v[0], si.w[0]] + Qj[0] @ np.r_[sj.v[0], sj.w[0]] == \
        pytest.approx(gd, abs=1e-6)
    assert Qi[0] @ ai + Qj[0] @ aj - b[0] == pytest.approx(gdd, abs=1e-5)


@pytest.mark.parametrize("seed", range(10))
def test_book_relative_rotation_row_2_29(seed):
    """n^T eps^(i) = -n^T dw_i + (A_j^T A_i n)^T dw_j - n^T w_i x A_i^T A_j w_j
    (Yudintsev (2.29)), and at an assembled configuration it is the perpendicular row about
    n = u x w."""
    rng = np.random.default_rng(200 + seed)
    mi, si, ai = spatial_motion(rng)
    mj, sj, aj = spatial_motion(rng)
    n = rng.normal(size=3)
    n /= np.linalg.norm(n)

    def rel_rate(t, h=1e-5):  # n^T (A_i^T A_j w_j - w_i) from the motion itself
        def w_body(m):
            A = m(t)[1]
            return vee(A.T @ (m(t + h)[1] - m(t - h)[1]) / (2 * h))
        return n @ (mi(t)[1].T @ mj(t)[1] @ w_body(mj) - w_body(mi))

    Qi, Qj, b = C.relative_rotation_row(n, si, sj)
    h = 1e-3
    rate_dot = (rel_rate(h) - rel_rate(-h)) / (2 * h)
    assert Qi[0] @ ai + Qj[0] @ aj - b[0] == pytest.approx(rate_dot, abs=1e-5)
    # equivalence with the perpendicular row: u, w with u . w = 0 and u x w = n
    u = np.cross(n, rng.normal(size=3))
    u /= np.linalg.norm(u)
    w_i = np.cross(n, u)  # in body-i axes; u x w_i = n
    w = si.A[0].T @ sj.A[0] if False else (sj.A[0].T @ si.A[0]) @ w_i  # same vector, j axes
    _, Pi, Pj, _ = C.perpendicular(u, w, 0.0, si, sj)
    np.testing.assert_allclose(Pi[0], -Qi[0], atol=1e-12)
    np.testing.assert_allclose(Pj[0], -Qj[0], atol=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_planar_rows_match_finite_differences(seed):
    rng = np.random.default_rng(300 + seed)
    mi, si, ai = planar_motion(rng)
    mj, sj, aj = planar_motion(rng)
    n = rng.normal(size=2)
    n /= np.linalg.norm(n)
    rho, d = rng.normal(size=2), rng.normal()

    def rot(phi):
        return np.array([[np.cos(phi), -np.sin(phi)], [np.sin(phi), np.cos(phi)]])

    def g(t):
        (xi, pi), (xj, pj) = mi(t), mj(t)
        return n @ (rot(pi).T @ (rot(pj) @ rho + xj - xi)) - d

    g0, Qi, Qj, b = C.planar_point_line(n, rho, d, si, sj)
    gd, gdd = derivatives(g)
    assert g0[0] == pytest.approx(g(0.0), abs=1e-14)
    dXi, dXj = np.r_[si.v[0], si.w[0]], np.r_[sj.v[0], sj.w[0]]
    assert Qi[0] @ dXi + Qj[0] @ dXj == pytest.approx(gd, abs=1e-6)
    assert Qi[0] @ ai + Qj[0] @ aj - b[0] == pytest.approx(gdd, abs=1e-5)
    g0, Qi, Qj, b = C.planar_rotation(0.3, si, sj)
    assert Qi[0] @ ai + Qj[0] @ aj - b[0] == pytest.approx(aj[2] - ai[2], abs=1e-14)


# ---------------------------------------------------------- random models
def box_inertia(rng, mass):
    a, b, c = rng.uniform(0.3, 1.5, 3)
    R = expm(skew(rng.normal(size=3)))
    return R @ np.diag([b * b + c * c, a * a + c * c, a * a + b * b]) * mass / 12 @ R.T


def unit(rng):
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def random_tree(rng, kinds, planar=False, flip=True):
    model = mb.Model(gravity=(rng.normal(), rng.normal(), 0.0 if planar else rng.normal()))
    for k, kind in enumerate(kinds, start=1):
        mass = rng.uniform(0.5, 2.0)
        model.add_body(f"b{k}", mass, box_inertia(rng, mass) if not planar
                       else np.diag([1.0, 1.0, 1.5]) * mass / 12 * rng.uniform(0.5, 2))
        parent = int(rng.integers(0, k))
        flipped = rng.random() < 0.3 and parent > 0 and flip  # some arcs point to the base
        a, c = (f"b{k}", parent) if flipped else (parent, f"b{k}")
        pp, cp = rng.normal(size=3), rng.normal(size=3)
        extra = {}
        if planar:
            pp[2] = cp[2] = 0.0
            if kind == "revolute":
                extra["axis"] = (0, 0, 1) if rng.random() < 0.7 else (0, 0, -1)
            else:
                extra["axis"] = (*rng.normal(size=2), 0.0)
            extra["orientation"] = mb.spatial.axis_angle([0, 0, 1], rng.normal())
        else:
            if kind in ("revolute", "prismatic", "cylindrical", "screw"):
                extra["axis"] = unit(rng)
            if kind == "screw":
                extra["lead"] = rng.uniform(0.05, 0.5) * rng.choice([-1.0, 1.0])
            if kind == "universal":
                extra["axes"] = (unit(rng), unit(rng))
            extra["orientation"] = expm(skew(rng.normal(size=3)))
        model.add_joint(f"j{k}", kind, a, c, parent_point=pp, child_point=cp, **extra)
    return model


def random_state(model, rng):
    q = []
    for j in model.joints:
        qa = rng.normal(size=j.nq)
        if j.quaternion is not None:
            qa[j.quaternion] /= np.linalg.norm(qa[j.quaternion])
        q.append(qa)
    return np.concatenate(q), rng.normal(size=model.nv)


SPATIAL = ["revolute", "prismatic"]
ALL_SPATIAL = ["revolute", "prismatic", "universal", "cylindrical", "spherical", "free", "fixed",
               "screw"]


@settings(max_examples=60)
@given(st.lists(st.sampled_from(SPATIAL), min_size=1, max_size=7), st.integers(0, 2**31))
def test_spatial_revolute_prismatic_trees_agree_with_reference(kinds, seed):
    rng = np.random.default_rng(seed)
    model = random_tree(rng, kinds)
    q, qd = random_state(model, rng)
    tau = rng.normal(size=model.nv)
    expected = reference.forward_dynamics(model, q, qd, tau)
    scale = 1.0 + np.abs(expected).max(initial=0.0)
    for solver in SOLVERS:
        got = mb.cartesian.forward_dynamics(model, q, qd, tau, solver=solver)
        np.testing.assert_allclose(got, expected, atol=1e-9 * scale, err_msg=solver)


@settings(max_examples=40)
@given(st.lists(st.sampled_from(ALL_SPATIAL), min_size=1, max_size=6), st.integers(0, 2**31))
def test_every_joint_kind_agrees_with_reference(kinds, seed):
    rng = np.random.default_rng(seed)
    model = random_tree(rng, kinds)
    q, qd = random_state(model, rng)
    tau = rng.normal(size=model.nv)
    expected = reference.forward_dynamics(model, q, qd, tau)
    scale = 1.0 + np.abs(expected).max(initial=0.0)
    for solver in SOLVERS:
        got = mb.cartesian.forward_dynamics(model, q, qd, tau, solver=solver)
        np.testing.assert_allclose(got, expected, atol=1e-9 * scale, err_msg=solver)


@settings(max_examples=40)
@given(st.lists(st.sampled_from(["revolute", "prismatic"]), min_size=1, max_size=8),
       st.integers(0, 2**31))
def test_planar_trees_agree_with_reference_and_spatial_form(kinds, seed):
    rng = np.random.default_rng(seed)
    model = random_tree(rng, kinds, planar=True)
    assert mb.cartesian.is_planar(model)
    q, qd = random_state(model, rng)
    tau = rng.normal(size=model.nv)
    expected = reference.forward_dynamics(model, q, qd, tau)
    scale = 1.0 + np.abs(expected).max(initial=0.0)
    for solver in SOLVERS:
        for planar in (True, False):
            got = mb.cartesian.forward_dynamics(model, q, qd, tau, solver=solver, planar=planar)
            np.testing.assert_allclose(got, expected, atol=1e-9 * scale,
                                       err_msg=f"{solver} planar={planar}")
    eq = mb.cartesian.equations(model, q, qd, planar=True)
    assert eq.nc == sum(2 if k == "revolute" else 2 for k in kinds)  # 2 rows per planar joint


def test_batches_equal_single_calls_and_base_motion():
    rng = np.random.default_rng(5)
    model = random_tree(rng, ["revolute", "universal", "prismatic", "spherical"])
    model.set_base_motion(position=lambda t: (np.sin(t), 0.2 * t * t, 0.0),
                          velocity=lambda t: (np.cos(t), 0.4 * t, 0.0),
                          acceleration=lambda t: (-np.sin(t), 0.4, 0.0),
                          orientation=lambda t: mb.spatial.axis_angle([0, 0, 1], 0.3 * t),
                          angular_velocity=(0, 0, 0.3))
    states = [random_state(model, rng) for _ in range(4)]
    Q = np.array([s[0] for s in states])
    V = np.array([s[1] for s in states])
    for solver in SOLVERS:
        batch = mb.cartesian.forward_dynamics(model, Q, V, solver=solver, t=0.7)
        assert batch.shape == (4, model.nv)
        for b, (q, v) in enumerate(states):
            single = mb.cartesian.forward_dynamics(model, q, v, solver=solver, t=0.7)
            np.testing.assert_allclose(batch[b], single, atol=1e-12)
            np.testing.assert_allclose(single, reference.forward_dynamics(model, q, v, t=0.7),
                                       atol=1e-8 * (1 + np.abs(single).max()))


# ---------------------------------------------------------------- closed loops
def four_bar(spatial_joints="revolute"):
    """A parallelogram four-bar: ground pivots at (0,0) and (2,0), crank and rocker of
    length 1, coupler of length 2; q = (th, -th, th, th) closes it for every th."""
    m = mb.Model(gravity=(0, -9.81, 0))
    m.add_body("crank", 1.0, [0.01, 1 / 12, 1 / 12])
    m.add_body("coupler", 2.0, [0.01, 8 / 12, 8 / 12])
    m.add_body("rocker", 1.0, [0.01, 1 / 12, 1 / 12])
    z = (0, 0, 1)
    m.add_joint("A", "revolute", "ground", "crank", child_point=(-0.5, 0, 0), axis=z)
    m.add_joint("B", "revolute", "crank", "coupler", parent_point=(0.5, 0, 0),
                child_point=(-1, 0, 0), axis=z)
    if spatial_joints == "revolute":
        m.add_joint("C", "revolute", "coupler", "rocker", parent_point=(1, 0, 0),
                    child_point=(0.5, 0, 0), axis=z)
        m.add_joint("D", "revolute", "ground", "rocker", parent_point=(2, 0, 0),
                    child_point=(-0.5, 0, 0), axis=z)
    else:  # R-R-U-S: 5 + 5 + 4 + 3 = 17 rows for 18 coordinates, one degree of freedom
        m.add_joint("C", "universal", "coupler", "rocker", parent_point=(1, 0, 0),
                    child_point=(0.5, 0, 0), axes=(z, (0, 1, 0)))
        m.add_joint("D", "spherical", "ground", "rocker", parent_point=(2, 0, 0),
                    child_point=(-0.5, 0, 0))
    return m


def four_bar_state(th, w, spherical=False):
    if spherical:
        quat = np.array([np.cos(th / 2), 0, 0, np.sin(th / 2)])
        return np.r_[th, -th, th, 0, quat], np.r_[w, -w, w, 0, 0, 0, w]
    return np.array([th, -th, th, th]), np.array([w, -w, w, w])


def test_four_bar_loop_planar_and_spatial():
    m = four_bar()
    assert not m.graph.is_tree
    q, qd = four_bar_state(0.7, 1.3)
    planar = {s: mb.cartesian.forward_dynamics(m, q, qd, solver=s) for s in ("dense", "schur")}
    np.testing.assert_allclose(planar["dense"], planar["schur"], atol=1e-12)
    # one degree of freedom: the parallelogram keeps its shape
    a = planar["dense"]
    np.testing.assert_allclose(a, [a[0], -a[0], a[0], a[0]], atol=1e-10)
    # energy route: the parallelogram is a 1-dof system with T = J th'^2/2, U = U(th)
    J = (1 / 12 + 0.25) * 2 + 2 * 1.0  # crank + rocker about pivots, coupler translates
    dU = 9.81 * (2 * 0.5 * np.cos(0.7) + 2.0 * 1.0 * np.cos(0.7))
    assert a[0] == pytest.approx(-dU / (J + 2 * (8 / 12) * 0), rel=1e-10)
    for redundant in ("raise", "lstsq"):
        with pytest.raises(TopologyError, match="closed loop"):
            mb.cartesian.forward_dynamics(m, q, qd, solver="ldlt", redundant=redundant)
    # spatial revolute joints over-constrain the planar loop: named, or least squares
    with pytest.raises(SingularSystemError, match="redundant.*'D'|redundant"):
        mb.cartesian.forward_dynamics(m, q, qd, planar=False)
    for s in ("dense", "schur"):
        ls = mb.cartesian.forward_dynamics(m, q, qd, planar=False, solver=s, redundant="lstsq")
        np.testing.assert_allclose(ls, a, atol=1e-9)
    # a spherical joint instead of the last revolute: no redundancy in space
    ms = four_bar("spherical")
    q2, qd2 = four_bar_state(0.7, 1.3, spherical=True)
    a2 = mb.cartesian.forward_dynamics(ms, q2, qd2, planar=False)
    np.testing.assert_allclose(a2[:3], a[:3], atol=1e-9)


def test_loop_with_inconsistent_coordinates_is_refused():
    m = four_bar()
    # the spanning tree holds A, B, D; a wrong angle of D breaks the loop at C
    with pytest.raises(InconsistentStateError, match="joint 'C' is violated at the position"):
        mb.cartesian.forward_dynamics(m, [0.7, -0.7, 0.7, 0.2], [1, -1, 1, 1])
    # a wrong coordinate of the loop-closing joint C itself
    with pytest.raises(InconsistentStateError, match="joint 'C' closes a loop"):
        mb.cartesian.forward_dynamics(m, [0.7, -0.7, 0.2, 0.7], [1, -1, 1, 1])
    with pytest.raises(InconsistentStateError, match="velocity level"):
        mb.cartesian.forward_dynamics(m, [0.7, -0.7, 0.7, 0.7], [1, 1, 1, 1])
    # the messages point to the helper that takes the Model's coordinates
    advice = r"mb.cartesian.consistent_state\(model, q, qd\)"
    with pytest.raises(InconsistentStateError, match=advice):
        mb.cartesian.forward_dynamics(m, [0.7, -0.7, 0.7, 0.2], [1, -1, 1, 1])
    q, qd = mb.cartesian.consistent_state(m, [0.7, -0.7, 0.7, 0.2], [1, 1, 1, 1])
    # the parallelogram closes again: q = (th, -th, th, th), qd along (1, -1, 1, 1)
    np.testing.assert_allclose(q, [q[0], -q[0], q[0], q[0]], atol=1e-10)
    np.testing.assert_allclose(qd, qd[0] * np.array([1, -1, 1, 1]), atol=1e-10)
    mb.cartesian.forward_dynamics(m, q, qd)  # accepted


# ------------------------------------------------------------------- reactions
@pytest.mark.parametrize("seed", range(5))
def test_reactions_action_reaction_and_no_work(seed):
    rng = np.random.default_rng(400 + seed)
    model = random_tree(rng, ["revolute", "prismatic", "universal", "spherical"])
    q, qd = random_state(model, rng)
    s = mb.cartesian.solve(model, q, qd)
    eq, ddX, lam = s.eq, s.ddX, s.lam
    # reactions do no work on any admissible velocity (Yudintsev (2.23)-(2.26))
    _, qd2 = random_state(model, rng)
    st2 = mb.cartesian.body_states(model, q, qd2)
    dX = np.concatenate([st2.v[0, 1:], st2.w[0, 1:]], axis=-1).ravel()
    R = (eq.dense_Q()[0].T @ lam[0])
    assert abs(R @ dX) < 1e-9 * (1 + np.abs(R).max() * np.abs(dX).max())
    # Newton-Euler of every body closes with the reactions
    F = eq.F[0] + R.reshape(model.n, 6)
    np.testing.assert_allclose((eq.M @ ddX[0][..., None])[..., 0], F, atol=1e-9)
    # the parent feels the opposite wrench about the joint point
    react = mb.cartesian.reactions(model, q, qd)
    st = eq.states
    for j in model.joints:
        rows = eq.joint_rows[j.index]
        wrench_i = eq.Qi[0, rows].T @ lam[0, rows]  # force (world), moment (parent axes)
        P = st.r[0, j.child] + st.A[0, j.child] @ j.child_point
        Ai = st.A[0, j.parent]
        moment_parent = Ai @ wrench_i[3:] - np.cross(P - st.r[0, j.parent], wrench_i[:3])
        np.testing.assert_allclose(Ai.T @ wrench_i[:3], -react[j.name]["force_parent"],
                                   atol=1e-9)
        np.testing.assert_allclose(Ai.T @ moment_parent, -react[j.name]["moment_parent"],
                                   atol=1e-9)


def test_pendulum_reaction_is_weight_plus_centripetal():
    m = mb.Model(gravity=(0, -9.81, 0))
    m.add_body("bob", 2.0, [1e-3, 1e-3, 1e-3])
    m.add_joint("pin", "revolute", "ground", "bob", child_point=(-1.5, 0, 0), axis=(0, 0, 1))
    # hanging straight down (angle -pi/2), moving at 2 rad/s: tension = m g + m w^2 l
    for planar in (True, False):
        r = mb.cartesian.reactions(m, [-np.pi / 2], [2.0], planar=planar)["pin"]
        np.testing.assert_allclose(r["force_parent"], [0, 2 * 9.81 + 2 * 4 * 1.5, 0],
                                   atol=1e-9)
        np.testing.assert_allclose(r["force_child"], [-(2 * 9.81 + 2 * 4 * 1.5), 0, 0],
                                   atol=1e-9)


# ----------------------------------------------------------------- sparsity
def test_ldlt_has_no_fill_in_in_tree_order():
    rng = np.random.default_rng(1)
    model = random_tree(rng, ["revolute"] * 8)
    eq = mb.cartesian.equations(model, *random_state(model, rng))
    nodes, edges = mb.cartesian.kkt_blocks(model, eq)
    P = np.eye(len(nodes), dtype=bool)
    for a, b in edges:
        P[a, b] = P[b, a] = True
    order, _ = mb.cartesian.solvers._tree_order(model, nodes, edges)
    assert mb.cartesian.fill_in(P, order)[0] == 0
    assert mb.cartesian.fill_in(P, order[::-1])[0] > 0  # parents first: fill-in


# ------------------------------------------------------------------- bad input
def test_bad_arguments():
    m = four_bar()
    q, qd = four_bar_state(0.3, 0.0)
    with pytest.raises(ShapeError, match="solver must be one of"):
        mb.cartesian.forward_dynamics(m, q, qd, solver="lu")
    with pytest.raises(ShapeError, match="redundant must be"):
        mb.cartesian.forward_dynamics(m, q, qd, redundant="ignore")
    with pytest.raises(ShapeError, match=r"q must have shape \(4,\)"):
        mb.cartesian.forward_dynamics(m, q[:3], qd)
    with pytest.raises(ShapeError, match="tau"):
        mb.cartesian.forward_dynamics(m, q, qd, tau=[1.0, np.nan, 0, 0])
    ms = mb.Model(gravity=(0, 0, -9.81))
    ms.add_body("a", 1.0, [1, 1, 1])
    ms.add_joint("j", "spherical", "ground", "a")
    with pytest.raises(ModelError, match="planar=True needs a planar model"):
        mb.cartesian.forward_dynamics(ms, [1, 0, 0, 0], [0, 0, 0], planar=True)
    moving = mb.Model(gravity=(0, -9.81, 0))
    moving.add_body("a", 1.0, [1, 1, 1])
    moving.add_joint("j", "revolute", "ground", "a", child_point=(-1, 0, 0), axis=(0, 0, 1))
    moving.add_force("a", force=lambda t, q, qd: (0.0, 0.0, t))  # in the plane only at t = 0
    assert mb.cartesian.is_planar(moving)
    with pytest.raises(ModelError, match="leaves the xy plane at t=1.0"):
        mb.cartesian.forward_dynamics(moving, [0.0], [0.0], t=1.0)
    mb.cartesian.forward_dynamics(moving, [0.0], [0.0], t=1.0, planar=False)
    screw = mb.Model()
    screw.add_body("nut", 1.0, [1, 1, 1])
    screw.add_joint("s", "screw", "ground", "nut", axis=(0, 0, 1), lead=0.1)
    assert not mb.cartesian.is_planar(screw)  # screws have Cartesian rows, but not planar ones
    with pytest.raises(ModelError, match="planar=True needs a planar model"):
        mb.cartesian.forward_dynamics(screw, [0.0], [0.0], planar=True)


# ------------------------------------------------------------------ screw rows
@pytest.mark.parametrize("seed", range(10))
def test_screw_row_matches_finite_differences(seed):
    """The screw row is the exact derivative of g = n . rho_ij - d - h theta everywhere
    (random motions, off the joint's manifold too); g is on the branch nearest to zero."""
    rng = np.random.default_rng(500 + seed)
    mi, si, ai = spatial_motion(rng)
    mj, sj, aj = spatial_motion(rng)
    n = unit(rng)
    u1, u2 = mb.joints.perpendicular_basis(n)
    w1 = expm(skew(rng.normal(size=3))).T @ u1
    rho, d, pitch = rng.normal(size=3), rng.normal(), 0.3 * rng.normal()
    lead = 2 * np.pi * pitch

    def g(t):
        (ri, Ai), (rj, Aj) = mi(t), mj(t)
        m = Ai.T @ Aj @ w1
        return n @ (Ai.T @ (Aj @ rho + rj - ri)) - d - pitch * np.arctan2(m @ u2, m @ u1)

    def wrap(x):  # theta jumps by 2 pi at the branch cut: g by one lead
        return x - lead * np.round(x / lead)

    g0, Qi, Qj, b = C.screw(n, rho, d, pitch, u1, u2, w1, si, sj)
    assert abs(wrap(g0[0] - g(0.0))) < 1e-14 and abs(g0[0]) <= abs(lead) / 2 + 1e-15
    h = 1e-4
    f1, f0, fm = g(h), g(0.0), g(-h)
    gd = wrap(f1 - fm) / (2 * h)
    gdd = (wrap(f1 - f0) - wrap(f0 - fm)) / (h * h)
    dXi, dXj = np.r_[si.v[0], si.w[0]], np.r_[sj.v[0], sj.w[0]]
    assert Qi[0] @ dXi + Qj[0] @ dXj == pytest.approx(gd, abs=1e-6)
    assert Qi[0] @ ai + Qj[0] @ aj - b[0] == pytest.approx(gdd, abs=1e-5)


def on_a_free_body(kind, rng):
    """Ground -free-> b1 -kind-> b2: the joint's bodies both move."""
    model = mb.Model(gravity=(0, 0, -9.81))
    model.add_body("b1", 1.0, box_inertia(rng, 1.0))
    model.add_body("b2", 1.0, box_inertia(rng, 1.0))
    model.add_joint("float", "free", "ground", "b1")
    extra = {"orientation": expm(skew(rng.normal(size=3)))}
    if kind in ("revolute", "prismatic", "cylindrical", "screw"):
        extra["axis"] = unit(rng)
    if kind == "screw":
        extra["lead"] = 0.3
    if kind == "universal":
        extra["axes"] = (unit(rng), unit(rng))
    model.add_joint("j", kind, "b1", "b2", parent_point=rng.normal(size=3),
                    child_point=rng.normal(size=3), **extra)
    return model


@pytest.mark.parametrize("kind", ALL_SPATIAL)
def test_joint_rows_vanish_along_the_joints_motion(kind):
    """On the manifold every row holds at all three levels: g = 0, Q dX = 0 and
    Q ddX = b for any q, qd, qdd, with the body accelerations from the independent
    reference (tests/reference.py); the screw row with several turns and both signs."""
    for seed in range(5):
        rng = np.random.default_rng(600 + seed)
        model = on_a_free_body(kind, rng)
        q, qd = random_state(model, rng)
        q = model.normalize_q(np.r_[q[:7], 4.0 * q[7:]])  # several turns
        qdd = rng.normal(size=model.nv)
        eq = mb.cartesian.equations(model, q, qd, planar=False)
        acc, alpha = reference.body_accelerations(model, q, qd, vdot=qdd)
        A = eq.states.A[0, 1:]
        ddX = np.concatenate([acc[1:], (np.swapaxes(A, -1, -2) @ alpha[1:, :, None])[..., 0]], -1)
        rows = eq.joint_rows[1]
        assert rows.size == {"revolute": 5, "prismatic": 5, "universal": 4, "cylindrical": 4,
                             "spherical": 3, "free": 0, "fixed": 6, "screw": 5}[kind]
        residual = (eq.dense_Q()[0] @ ddX.ravel() - eq.b[0])[rows]
        assert np.abs(eq.g[0, rows]).max(initial=0.0) < 1e-13
        assert np.abs(eq.gdot[0, rows]).max(initial=0.0) < 1e-13
        assert np.abs(residual).max(initial=0.0) < 1e-9 * (1 + np.abs(ddX).max())


@settings(max_examples=30)
@given(st.lists(st.sampled_from(ALL_SPATIAL), min_size=0, max_size=5), st.integers(0, 2**31))
def test_screw_trees_agree_with_the_tree_formulation(kinds, seed):
    """Trees with at least one screw joint: the Cartesian rows give mb.tree's accelerations
    (measured: at most 1.1e-12 relative on 150 random trees)."""
    rng = np.random.default_rng(seed)
    kinds = list(kinds)
    kinds.insert(int(rng.integers(0, len(kinds) + 1)), "screw")
    model = random_tree(rng, kinds)
    q, qd = random_state(model, rng)
    tau = rng.normal(size=model.nv)
    expected = mb.tree.forward_dynamics(model, q, qd, tau)
    scale = 1.0 + np.abs(expected).max()
    for solver in SOLVERS:
        got = mb.cartesian.forward_dynamics(model, q, qd, tau, solver=solver)
        np.testing.assert_allclose(got, expected, atol=1e-9 * scale, err_msg=solver)


def screw_jack(lead=0.5, screw_closes_loop=False):
    """A closed loop through a screw joint: a shaft turning about z on the ground, a nut on
    it (screw joint), and a rod from a ground point to the nut (spherical at the ground,
    universal at the nut). 3 bodies, 5 + 3 + 4 + 5 = 17 rows: one degree of freedom. The
    spanning tree reaches the nut through the shaft (the universal joint closes the loop)
    or, with the rod's joint added first, through the rod (the screw joint closes it)."""
    m = mb.Model(gravity=(0.3, -9.81, -2.0))
    m.add_body("shaft", 2.0, [0.05, 0.05, 0.01])
    m.add_body("rod", 0.3, [0.001, 0.03, 0.03])
    m.add_body("nut", 0.5, [0.01, 0.012, 0.02])
    z = (0, 0, 1)
    joints = [
        ("bearing", "revolute", "ground", "shaft", dict(axis=z)),
        ("ball", "spherical", "ground", "rod", dict(parent_point=(0.8, 0, -0.56),
                                                     child_point=(-0.5, 0, 0))),
        ("pin", "universal", "rod", "nut", dict(parent_point=(0.5, 0, 0),
                                                 child_point=(0.15, 0, 0), axes=((0, 1, 0), z))),
        ("thread", "screw", "shaft", "nut", dict(axis=z, lead=lead)),
    ]
    if screw_closes_loop:
        joints[0], joints[1] = joints[1], joints[0]
    for name, kind, parent, child, extra in joints:
        m.add_joint(name, kind, parent, child, **extra)
    return m


def screw_jack_state(m):
    """A rough guess (rod from the ground point to the nut at height 0.2), made
    consistent with mb.cartesian.consistent_state."""
    h = m.joint("thread").lead / (2 * np.pi)
    alpha = np.arctan2(-0.76, -0.65)  # the rod's x axis along (-0.65, 0, 0.76)
    guess = {"bearing": ([0.3], [2.0]), "ball": ([np.cos(alpha / 2), 0, np.sin(alpha / 2), 0],
                                                 [0, 0, 0]),
             "pin": ([-alpha, 0], [0, 0]), "thread": ([0.2 / h - 0.3], [0])}  # nut upright
    q = np.concatenate([guess[j.name][0] for j in m.joints])
    qd = np.concatenate([guess[j.name][1] for j in m.joints])
    return mb.cartesian.consistent_state(m, q, qd)


@pytest.mark.parametrize("screw_closes_loop", [False, True])
def test_closed_loop_through_a_screw_joint(screw_closes_loop):
    m = screw_jack(screw_closes_loop=screw_closes_loop)
    cut = [m.joints[a].name for a in mb.cartesian.prepare(m).loop_joints]
    assert cut == (["thread"] if screw_closes_loop else ["pin"])
    q, qd = screw_jack_state(m)
    assert np.abs(qd).max() > 0.1  # it moves
    # the loop closes: the nut's height is the pitch times its turn on the shaft
    st = mb.cartesian.body_states(m, q, qd)
    h = m.joint("thread").lead / (2 * np.pi)
    thread = m.joint("thread")
    assert st.r[0, 3, 2] == pytest.approx(h * q[thread.q_slice][0], abs=1e-12)
    dense = mb.cartesian.forward_dynamics(m, q, qd)
    schur = mb.cartesian.forward_dynamics(m, q, qd, solver="schur")
    np.testing.assert_allclose(schur, dense, atol=1e-10 * (1 + np.abs(dense).max()))
    with pytest.raises(TopologyError, match="closed loop"):
        mb.cartesian.forward_dynamics(m, q, qd, solver="ldlt")
    # the motion keeps energy and stays on the manifold without any stabilization: the
    # screw row's b is the exact second derivative
    sim = mb.cartesian.simulate(m, (0.0, 1.0), q, qd, baumgarte=None, rtol=1e-10, atol=1e-10,
                                t_eval=np.linspace(0, 1, 21))
    E = sim.energy
    assert np.abs(E - E[0]).max() < 1e-8 * (abs(E[0]) + sim.kinetic_energy.max())
    assert sim.position_drift.max() < 1e-8
    # and the accelerations are those of the simulated motion
    k = 10
    a = mb.cartesian.forward_dynamics(m, sim.q[k], sim.qd[k])
    fd = (sim.qd[k + 1] - sim.qd[k - 1]) / (sim.t[k + 1] - sim.t[k - 1])
    assert np.abs(a - fd).max() < 1e-2 * (1 + np.abs(a).max())


# ------------------------------------------------------------ force elements
def with_springs(model, rng):
    """Spring-dampers between body points (and to the ground), joint spring-dampers on the
    joints without quaternions, a generalized force and a load of (t, q, qd)."""
    n = model.n
    for k in range(3):
        a, b = rng.choice(n + 1, size=2, replace=False)
        model.add_spring(f"s{k}", int(a), int(b), point_a=rng.normal(size=3),
                         point_b=rng.normal(size=3), stiffness=rng.uniform(1, 20),
                         rest_length=rng.uniform(0, 1), damping=rng.uniform(0, 1))
    for j in model.joints:
        if j.nv and j.quaternion is None:
            model.add_joint_spring(j.name, stiffness=rng.uniform(0, 5, j.nv),
                                   rest=rng.normal(size=j.nv), damping=rng.uniform(0, 1))
    if model.nv == 0:  # the callables below index q[0] and qd[0]
        return model
    model.add_generalized_force(lambda t, q, qd: -0.2 * qd + np.sin(t), name="drag")
    model.add_force(model.bodies[n].name, force=lambda t, q, qd: (0.1 * q[0], -qd[0], np.cos(t)),
                    point=(0.1, 0.2, 0.0))
    return model


@settings(max_examples=25)
@given(st.lists(st.sampled_from(ALL_SPATIAL), min_size=1, max_size=5), st.integers(0, 2**31))
def test_spring_dampers_agree_with_the_tree_formulation_and_the_reference(kinds, seed):
    rng = np.random.default_rng(seed)
    model = with_springs(random_tree(rng, kinds), rng)
    q, qd = random_state(model, rng)
    tau = rng.normal(size=model.nv)
    expected = reference.forward_dynamics(model, q, qd, tau, t=0.4)
    scale = 1.0 + np.abs(expected).max(initial=0.0)
    np.testing.assert_allclose(mb.tree.forward_dynamics(model, q, qd, tau, t=0.4), expected,
                               atol=1e-9 * scale, err_msg="tree")
    for solver in SOLVERS:
        got = mb.cartesian.forward_dynamics(model, q, qd, tau, t=0.4, solver=solver)
        np.testing.assert_allclose(got, expected, atol=1e-9 * scale, err_msg=solver)


def test_planar_spring_model_uses_the_planar_form():
    """Springs at equal heights keep a planar model planar; a spring across heights would
    push it out of the plane, so the spatial form is chosen."""
    m = mb.models.double_pendulum()
    m.add_spring("k", "ground", "rod2", point_a=(1.0, 1.0, 0.0), point_b=(0.3, 0.0, 0.0),
                 stiffness=15.0, rest_length=0.4, damping=0.7)
    m.add_joint_spring("B", stiffness=3.0, rest=0.2, damping=0.1)
    assert mb.cartesian.is_planar(m)
    q, qd = np.array([0.4, 7.0]), np.array([1.0, -2.0])  # a wound joint spring
    expected = reference.forward_dynamics(m, q, qd)
    for planar in (True, False):
        np.testing.assert_allclose(mb.cartesian.forward_dynamics(m, q, qd, planar=planar),
                                   expected, atol=1e-9 * (1 + np.abs(expected).max()))
    m.springs[0].point_a = (1.0, 1.0, 0.3)
    assert not mb.cartesian.is_planar(m)
    expected = reference.forward_dynamics(m, q, qd)
    np.testing.assert_allclose(mb.cartesian.forward_dynamics(m, q, qd), expected,
                               atol=1e-9 * (1 + np.abs(expected).max()))


# ---------------------------------------------------- back to generalized coordinates
@settings(max_examples=40)
@given(st.lists(st.sampled_from(ALL_SPATIAL), min_size=1, max_size=6), st.integers(0, 2**31))
def test_to_generalized_round_trip(kinds, seed):
    rng = np.random.default_rng(seed)
    model = random_tree(rng, kinds)
    q, qd = random_state(model, rng)
    q = q * 3.0  # angles beyond pi: the reference keeps the turn counts
    q = model.normalize_q(q)
    y = mb.cartesian.to_absolute(model, q, qd, planar=False)
    q2, qd2 = mb.cartesian.to_generalized(model, y, q_ref=q)
    np.testing.assert_allclose(q2, q, atol=1e-9 * (1 + np.abs(q).max(initial=0.0)))
    np.testing.assert_allclose(qd2, qd, atol=1e-9 * (1 + np.abs(qd).max(initial=0.0)))
    # without a reference: the same poses and speeds (angles modulo full turns)
    Y = np.stack([y, y])
    q3, qd3 = mb.cartesian.to_generalized(model, Y)
    assert q3.shape == (2, model.nq) and qd3.shape == (2, model.nv)
    r, A = model.body_poses(q)
    r3, A3 = model.body_poses(q3[1])
    np.testing.assert_allclose(r3, r, atol=1e-9 * (1 + np.abs(r).max()))
    np.testing.assert_allclose(A3, A, atol=1e-9)
    np.testing.assert_allclose(qd3[1], qd, atol=1e-9 * (1 + np.abs(qd).max(initial=0.0)))
    # from BodyStates
    q4, qd4 = mb.cartesian.to_generalized(model, mb.cartesian.body_states(model, q, qd),
                                          q_ref=q)
    np.testing.assert_allclose(q4[0], q, atol=1e-9 * (1 + np.abs(q).max(initial=0.0)))


def test_to_generalized_planar_layout_and_loops():
    rng = np.random.default_rng(3)
    model = random_tree(rng, ["revolute", "prismatic", "revolute"], planar=True)
    q, qd = random_state(model, rng)
    y = mb.cartesian.to_absolute(model, q, qd)
    assert y.size == 6 * model.n
    q2, qd2 = mb.cartesian.to_generalized(model, y, q_ref=q)
    np.testing.assert_allclose(q2, q, atol=1e-12)
    np.testing.assert_allclose(qd2, qd, atol=1e-12)
    # the loop-closing joint of the four-bar comes back too
    m = four_bar()
    q, qd = four_bar_state(0.7 + 4 * np.pi, 1.3)
    q2, qd2 = mb.cartesian.to_generalized(m, mb.cartesian.to_absolute(m, q, qd), q_ref=q)
    np.testing.assert_allclose(q2, q, atol=1e-12)
    np.testing.assert_allclose(qd2, qd, atol=1e-12)
    with pytest.raises(ShapeError, match="absolute coordinates of this model"):
        mb.cartesian.to_generalized(m, np.zeros(7))


def test_consistent_state_of_a_tree_is_the_state():
    rng = np.random.default_rng(8)
    model = random_tree(rng, ALL_SPATIAL)
    q, qd = random_state(model, rng)
    q2, qd2 = mb.cartesian.consistent_state(model, q, qd)
    np.testing.assert_allclose(q2, q, atol=1e-12)
    np.testing.assert_allclose(qd2, qd, atol=1e-12)


def test_compiled_cartesian_route_equals_the_numpy_route():
    """Chapter 2's kernel (mbcourse.kernels.cartesian, eliminated in tree order) = chapter 2's
    NumPy route and the recursions."""
    from test_vereshchagin import _kernel_model
    rng = np.random.default_rng(95)
    for n, pri, weld in ((1, (), ()), (1, (1,), ()), (4, (2,), (3,)), (10, (3, 7), (5,))):
        model = _kernel_model(rng, n, pri, weld)
        B = mb.kernels.PARALLEL_BATCH + 5 if n == 10 else 3
        q, qd, tau = rng.normal(size=(3, B, model.nv))
        fast = mb.cartesian.forward_dynamics(model, q, qd, tau, solver="ldlt")
        slow = mb.cartesian.forward_dynamics(model, q, qd, tau, solver="ldlt", compiled=False)
        np.testing.assert_allclose(fast, slow, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(fast, mb.vereshchagin.forward_dynamics(model, q, qd, tau),
                                   rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(
            mb.cartesian.forward_dynamics(model, q[0].tolist(), qd[0], solver="ldlt"),
            mb.cartesian.forward_dynamics(model, q[0], qd[0], solver="dense"), rtol=1e-10,
            atol=1e-10)
    with pytest.raises(mb.ModelError, match="compiled Cartesian route needs solver='ldlt'"):
        mb.cartesian.forward_dynamics(model, q[0], qd[0], solver="dense", compiled=True)
    with pytest.raises(mb.ShapeError, match="solver"):
        mb.cartesian.forward_dynamics(model, q[0], qd[0], solver="lu")
