"""Chapter 6: the cut-joint method against chapter 2 (absolute coordinates), chapter 3 and
the laws of mechanics."""

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import mbcourse as mb
from mbcourse.errors import (InconsistentStateError, ModelError, ShapeError, TopologyError)

TOL = 1e-9


def crank_slider_with_spring():
    m = mb.models.crank_slider()
    m.add_spring("s", "ground", "slider", point_a=(0.6, 0.1, 0.0), stiffness=200.0,
                 rest_length=0.1)
    return m


def random_loop(seed, closing):
    """A random spatial chain of revolute joints closed to the ground by ``closing``, built at
    a random configuration so that it is assembled there (the closing joint's frame is
    placed where the chain ends)."""
    rng = np.random.default_rng(seed)
    m = mb.Model(gravity=(0.0, 0.0, -9.81))
    k = 7 if closing in ("revolute", "prismatic", "fixed") else 5
    prev = "ground"
    for i in range(k):
        name = f"b{i}"
        m.add_body(name, float(rng.uniform(0.5, 2.0)), np.diag(rng.uniform(0.1, 0.15, 3)))
        m.add_joint(f"j{i}", "revolute", prev, name,
                    parent_point=rng.normal(size=3) * 0.3 if i else (0.0, 0.0, 0.0),
                    child_point=rng.normal(size=3) * 0.3, axis=rng.normal(size=3))
        prev = name
    q = rng.uniform(-1, 1, m.nq)
    r, A = m.body_poses(q)
    tip = rng.normal(size=3) * 0.3
    P = r[-1] + A[-1] @ tip  # joint point on the last body, world
    kw = {}
    if closing in ("revolute", "prismatic", "cylindrical", "screw"):
        kw["axis"] = rng.normal(size=3)
    if closing == "screw":
        kw["lead"] = 0.2
    if closing == "universal":
        a1 = rng.normal(size=3)
        a2 = np.cross(a1, rng.normal(size=3))
        kw["axes"] = (a1, a2)
    m.add_joint("close", closing, "ground", prev, parent_point=P, child_point=tip,
                orientation=A[-1], **kw)
    q_full = np.concatenate([q, m.joint("close").neutral()])
    qd = rng.normal(size=m.nv)
    return m, q_full, qd


def consistent(m, q, qd):
    return mb.loops.assemble(m, q, qd)


# --------------------------------------------------------------- agreement
@pytest.mark.parametrize("theta, omega", [(0.3, 2.0), (2.0, -5.0), (4.0, 0.5)])
@pytest.mark.parametrize("cut", [None, ["A"], ["O"], ["guide"]])
def test_crank_slider_equals_cartesian_for_every_cut(theta, omega, cut):
    m = crank_slider_with_spring()
    q, qd = mb.models.crank_slider_state(m, theta, omega)
    tau = np.array([1.5, -0.3, 0.2, 4.0])
    ref = mb.cartesian.forward_dynamics(m, q, qd, tau)
    out = mb.loops.forward_dynamics(m, q, qd, tau, cut=cut)
    assert np.abs(out - ref).max() < TOL * (1 + np.abs(ref).max())


def test_spatial_rows_of_a_planar_loop_are_redundant_but_the_motion_is_unique():
    m = mb.models.crank_slider()
    q, qd = mb.models.crank_slider_state(m, 0.7, 3.0)
    sol = mb.loops.solve(m, q, qd, planar=False)
    assert sol.nullity[0] == 3 and sol.rank[0] == 2  # 5 spatial rows of joint B, rank 2
    ref = mb.cartesian.forward_dynamics(m, q, qd)
    assert np.abs(sol.qdd[0] - ref).max() < TOL * (1 + np.abs(ref).max())
    assert np.all(np.isfinite(sol.lam))


@pytest.mark.parametrize("closing", ["spherical", "revolute", "universal", "cylindrical",
                                     "prismatic", "screw", "fixed"])
@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_random_closed_chains_equal_cartesian(closing, seed):
    m, q, qd = random_loop(seed, closing)
    q, qd = mb.loops.assemble(m, q, qd)
    tau = np.random.default_rng(seed).normal(size=m.nv)
    ref = mb.cartesian.forward_dynamics(m, q, qd, tau, redundant="lstsq")
    out = mb.loops.forward_dynamics(m, q, qd, tau)
    assert np.abs(out - ref).max() < 1e-8 * (1 + np.abs(ref).max())
    other = mb.loops.forward_dynamics(m, q, qd, tau, cut=["j3"])
    assert np.abs(other - ref).max() < 1e-8 * (1 + np.abs(ref).max())


def test_two_loops_and_subtrees_on_the_base():
    """A double four-bar: two loops, the reduced system is two subtrees on the ground."""
    m = mb.Model(gravity=(0, -9.81, 0))
    I = mb.models.bar_inertia
    for name, L in (("crank", 0.3), ("coupler", 1.0), ("rocker", 0.8), ("link2", 0.9),
                    ("rocker2", 0.7)):
        m.add_body(name, L, I(L, L))
    z = (0, 0, 1)
    m.add_joint("O", "revolute", "ground", "crank", child_point=(-0.15, 0, 0), axis=z)
    m.add_joint("A", "revolute", "crank", "coupler", parent_point=(0.15, 0, 0),
                child_point=(-0.5, 0, 0), axis=z)
    m.add_joint("D", "revolute", "ground", "rocker", parent_point=(1.0, 0, 0),
                child_point=(-0.4, 0, 0), axis=z)
    m.add_joint("B", "revolute", "coupler", "rocker", parent_point=(0.5, 0, 0),
                child_point=(0.4, 0, 0), axis=z)
    m.add_joint("E", "revolute", "crank", "link2", parent_point=(0.15, 0, 0),
                child_point=(-0.45, 0, 0), axis=z)
    m.add_joint("F", "revolute", "ground", "rocker2", parent_point=(0.2, -0.6, 0),
                child_point=(-0.35, 0, 0), axis=z)
    m.add_joint("G", "revolute", "link2", "rocker2", parent_point=(0.45, 0, 0),
                child_point=(0.35, 0, 0), axis=z)
    guess = np.array([1.2, -0.9, 2.0, -2.5, -1.9, 1.3, -1.0])
    q, qd = mb.loops.assemble(m, guess, np.r_[2.0, np.zeros(6)], independent=["O.angle"])
    assert len(mb.loops.prepare(m).cut) == 2
    ref = mb.cartesian.forward_dynamics(m, q, qd)
    out = mb.loops.forward_dynamics(m, q, qd)
    assert np.abs(out - ref).max() < TOL * (1 + np.abs(ref).max())
    assert mb.loops.independent_coordinates(m, q) and \
        len(mb.loops.independent_coordinates(m, q)) == 1


def test_batch_shapes_and_model_changes():
    m = mb.models.crank_slider()
    states = [mb.models.crank_slider_state(m, th, 1.0) for th in (0.1, 0.2, 0.3)]
    Q = np.array([s[0] for s in states]).reshape(3, 1, 4)
    QD = np.array([s[1] for s in states]).reshape(3, 1, 4)
    out = mb.loops.forward_dynamics(m, Q, QD)
    assert out.shape == (3, 1, 4)
    assert np.allclose(out, mb.cartesian.forward_dynamics(m, Q, QD), atol=1e-9)
    before = mb.loops.forward_dynamics(m, *states[0])
    m.body("slider").mass = 7.0  # a change after a call gives the fresh answer
    after = mb.loops.forward_dynamics(m, *states[0])
    assert not np.allclose(before, after)
    assert np.allclose(after, mb.cartesian.forward_dynamics(m, *states[0]), atol=1e-9)
    m.joint("B").child_point = (-0.16, 0.0, 0.0)  # geometry change: the state no longer closes
    with pytest.raises(InconsistentStateError, match="'B'"):
        mb.loops.forward_dynamics(m, *states[0])


# --------------------------------------------------------------- reactions
def test_reactions_equal_cartesian_and_satisfy_newton_euler():
    m = crank_slider_with_spring()
    q, qd = mb.models.crank_slider_state(m, 1.1, -3.0)
    tau = np.array([2.0, 0.0, 0.0, 0.0])
    R = mb.loops.reactions(m, q, qd, tau)
    C = mb.cartesian.reactions(m, q, qd, tau)
    for j in C:
        for k in C[j]:
            assert np.allclose(R[j][k], C[j][k], atol=1e-8), (j, k)
    assert R.nullity == 0 and "nullity" not in R  # keyed by joint name only
    # Newton: m a = F + sum of reactions (drive wrenches included) on every body
    qdd = mb.loops.forward_dynamics(m, q, qd, tau)
    h = 1e-6
    v_plus = m.body_velocities(q + h * m.qdot(q, qd), qd + h * qdd)[0]
    v_minus = m.body_velocities(q - h * m.qdot(q, qd), qd - h * qdd)[0]
    acc = (v_plus - v_minus) / (2 * h)
    F, _ = m.applied_wrenches(q, qd=qd)
    r, A = m.body_poses(q)
    for b in range(1, m.n + 1):
        total = F[b].copy()
        for j in m.joints:
            f = A[j.child] @ R[j.name]["force_child"]
            total += f if j.child == b else (-f if j.parent == b else 0.0)
        # the drive of O is a moment only: no force
        assert np.allclose(m.masses()[b - 1] * acc[b], total, atol=1e-5), b


def test_inverse_dynamics_round_trip_and_refusals():
    m = crank_slider_with_spring()
    q, qd = mb.models.crank_slider_state(m, 0.8, 2.0)
    tau = np.array([0.0, 0.0, 0.0, 3.0])  # a force on the slider
    qdd = mb.loops.forward_dynamics(m, q, qd, tau)
    for act in (["guide.displacement"], ["O.angle"], ["B.angle"]):
        t_act = mb.loops.inverse_dynamics(m, q, qd, qdd, actuated=act)
        assert np.allclose(mb.loops.forward_dynamics(m, q, qd, t_act), qdd, atol=1e-9)
    with pytest.raises(mb.errors.SingularSystemError, match="not independent"):
        mb.loops.inverse_dynamics(m, q, qd, qdd, actuated=["O.angle", "A.angle"])
    with pytest.raises(InconsistentStateError, match="acceleration"):
        mb.loops.inverse_dynamics(m, q, qd, qdd + 1.0, actuated=["O.angle"])
    with pytest.raises(ShapeError, match="unknown coordinate"):
        mb.loops.inverse_dynamics(m, q, qd, qdd, actuated=["crank"])


# --------------------------------------------------------------- assembly
def test_assemble_holds_the_independent_coordinate_and_refuses_impossible_ones():
    m = mb.models.crank_slider()
    q, qd = mb.loops.assemble(m, [2.0, -2.0, 0.0, 0.2], [4.0, 0, 0, 0], independent=["O.angle"])
    q_ref, qd_ref = mb.models.crank_slider_state(m, 2.0, 4.0)
    assert np.allclose(q, q_ref, atol=1e-10) and np.allclose(qd, qd_ref, atol=1e-10)
    # the slider's coordinate held beyond the reach of crank and rod: cannot close
    with pytest.raises(InconsistentStateError, match="cannot be assembled"):
        mb.loops.assemble(m, [0.0, 0.0, 0.0, 2.0], independent=["guide.displacement"])
    # two independent speeds on a 1-DOF mechanism break the loop
    with pytest.raises(InconsistentStateError, match="independent speeds"):
        mb.loops.assemble(m, q, [1.0, 0, 0, 1.0], independent=["O.angle", "guide.displacement"])


def test_assembled_states_are_accepted_by_cartesian():
    m = mb.models.solar_array()
    assert not m.graph.is_tree  # its deployment linkage closes a loop
    q, qd = mb.loops.assemble(m, m.neutral_q() + 0.05, np.ones(m.nv) * 0.1)
    mb.cartesian.forward_dynamics(m, q, qd, redundant="lstsq")


# --------------------------------------------------------------- user rows
def test_velocity_constraint_equals_substitution():
    """A gear pair qd1 = 2 qd2 on a double pendulum, against substituting qd = E s."""
    m = mb.models.double_pendulum()
    q, s = np.array([0.4, 0.2]), 1.3
    E = np.array([2.0, 1.0])
    qd = E * s
    gear = mb.loops.VelocityConstraint([1.0, -2.0], name="gear")
    out = mb.loops.forward_dynamics(m, q, qd, constraints=[gear])
    A = mb.tree.mass_matrix(m, q)
    Bv = mb.tree.bias_forces(m, q, qd)
    sdd = (E @ Bv) / (E @ A @ E)
    assert np.allclose(out, E * sdd, atol=1e-12)
    # a configuration-dependent row a(q) qd = 0 with a(q) = (cos q2, -1): multipliers route
    a = mb.loops.VelocityConstraint(lambda t, q: [np.cos(q[1]), -1.0], name="a(q)")
    qd = np.array([1.0, np.cos(q[1])])
    out = mb.loops.forward_dynamics(m, q, qd, constraints=a)
    row = np.array([np.cos(q[1]), -1.0])
    rate = -np.sin(q[1]) * qd[1] * qd[0]  # d/dt(a) qd
    Bv = mb.tree.bias_forces(m, q, qd)
    K = np.block([[A, -row[:, None]], [row[None], np.zeros((1, 1))]])
    ref = np.linalg.solve(K, np.r_[Bv, -rate])[:2]
    assert np.allclose(out, ref, atol=1e-8)


# --------------------------------------------------------------- simulation
@pytest.mark.parametrize("stabilization", ["projection", "partitioning", "baumgarte"])
def test_simulation_conserves_energy_and_keeps_the_loop_closed(stabilization):
    m = crank_slider_with_spring()
    q0, qd0 = mb.models.crank_slider_state(m, 0.3, 4.0)
    res = mb.loops.simulate(m, (0.0, 1.0), q0, qd0, stabilization=stabilization,
                            t_eval=np.linspace(0, 1, 21))
    E = res.energy
    assert np.ptp(E) / np.abs(E).max() < 1e-8
    limit = 1e-9 if stabilization == "baumgarte" else 1e-10
    assert res.position_drift.max() < limit
    assert res.t.size == 21 and res.q.shape == (21, 4)
    ref = mb.cartesian.simulate(m, (0.0, 1.0), q0, qd0, t_eval=[1.0], planar=True)
    assert np.allclose(res.q[-1], ref.q[-1], atol=1e-6)


def test_simulation_with_damping_balances_energy():
    m = mb.models.crank_slider()
    m.add_spring("s", "ground", "slider", point_a=(0.6, 0.1, 0.0), stiffness=100.0,
                 damping=2.0, rest_length=0.1)
    q0, qd0 = mb.models.crank_slider_state(m, 0.3, 4.0)
    res = mb.loops.simulate(m, (0.0, 0.5), q0, qd0)
    total = res.energy + res.dissipated
    assert res.dissipated[-1] > 1e-3 and np.ptp(total) < 1e-8 * np.abs(total).max()


# --------------------------------------------------------------- errors
def test_bad_inputs_are_named():
    m = mb.models.crank_slider()
    q, qd = mb.models.crank_slider_state(m, 0.3, 1.0)
    with pytest.raises(ModelError, match="unknown joint"):
        mb.loops.forward_dynamics(m, q, qd, cut=["nope"])
    with pytest.raises(TopologyError, match="spanning tree"):
        mb.loops.forward_dynamics(m, q, qd, cut=["O", "A"])
    bad = q.copy()
    bad[1] += 0.1
    with pytest.raises(InconsistentStateError, match="closed by joint 'B'"):
        mb.loops.forward_dynamics(m, bad, qd)
    bad = q.copy()
    bad[2] += 0.1  # the cut joint's own coordinate disagrees with the bodies
    with pytest.raises(InconsistentStateError, match="'B' is cut"):
        mb.loops.forward_dynamics(m, bad, qd)
    with pytest.raises(ShapeError):
        mb.loops.forward_dynamics(m, q[:3], qd)
    with pytest.raises(ShapeError, match="stabilization"):
        mb.loops.simulate(m, (0, 1), q, qd, stabilization="magic")
    with pytest.raises(ShapeError, match="t_eval"):
        mb.loops.simulate(m, (0, 1), q, qd, t_eval=[0.5, 2.0])
    with pytest.raises(ShapeError, match="t_eval"):
        mb.loops.simulate(m, (0, 1), q, qd, t_eval=[0.5, 0.2])
    with pytest.raises(InconsistentStateError, match="assemble"):
        mb.loops.simulate(m, (0, 1), q + 0.1, qd)
    with pytest.raises(ShapeError, match="actuated"):
        mb.loops.inverse_dynamics(m, q, qd, np.zeros(4), actuated=[])
    with pytest.raises(ShapeError, match="VelocityConstraint"):
        mb.loops.forward_dynamics(m, q, qd, constraints=[[1, 0, 0, 0]])


def test_fig_3_22_blocks():
    ip = [5, 6, 0, 1, 1, 3, 0, 4, 0, 5]
    im = [0, 4, 2, 2, 7, 2, 4, 3, 7, 6]
    b = mb.loops.blocks(ip, im, cut=[7, 8, 9])
    # (3.183)-(3.185) with E19: the row of body 7 has -1 at u5 and u9
    assert b["S"][6].tolist() == [0, 0, 0, 0, -1, 0, 0]
    assert b["S_star"][6].tolist() == [0, -1, 0]
    assert np.argwhere(b["S_plus"]).tolist() == [[0, 3], [0, 4], [2, 5], [4, 0], [5, 1]]
    assert np.argwhere(b["S_star_plus"]).tolist() == [[3, 0], [4, 2]]
    assert b["S0_star_plus"].tolist() == [0, 1, 0]
    assert (b["T"] @ b["S"] == np.eye(7)).all()


def test_partitioning_samples_stay_on_the_branch_of_the_motion():
    fb = mb.models.four_bar()
    q0, qd0 = mb.models.four_bar_state(fb, 0.0, 6.0)
    te = np.linspace(0, 1, 5)  # samples far apart: each must be rebuilt from its neighbours
    res = mb.loops.simulate(fb, (0, 1), q0, qd0, stabilization="partitioning", t_eval=te)
    ref = mb.loops.simulate(fb, (0, 1), q0, qd0, stabilization="projection", t_eval=te)
    assert res.position_drift.max() < 1e-10
    assert np.abs(res.q - ref.q).max() < 1e-8


def test_bricard_moves_with_one_degree_of_freedom_at_loose_tolerances():
    """Off the manifold a redundant row's zero singular value grows with the drift; the
    simulation keeps the rank found on the manifold (else the accelerations blow up)."""
    br = mb.models.bricard()
    q0, qd0 = mb.models.bricard_state(br, 0.0)
    sol = mb.loops.solve(br, q0, qd0)
    tree_speeds = mb.loops.prepare(br).reduced.nv
    assert sol.nullity[0] == 1 and tree_speeds - sol.rank[0] == 1  # 5 tree speeds, rank 4
    for how, tol in (("none", 1e-8), ("projection", 1e-6), ("baumgarte", 1e-6)):
        res = mb.loops.simulate(br, (0, 1.0), q0, qd0, rtol=tol, atol=tol, stabilization=how)
        assert np.ptp(res.energy) < 1e3 * tol * np.abs(res.energy).max()
    res = mb.loops.simulate(br, (0, 1.0), q0, qd0, t_eval=np.linspace(0, 1, 11))
    assert res.position_drift.max() < 1e-10 and np.ptp(res.energy) < 1e-8 * np.abs(res.energy).max()
    # it moves, and along the one-parameter family of the closed-form assembly
    angles = res.q[:, 0]
    assert np.ptp(angles) > 0.1
    for a, q in zip(angles, res.q):
        assert np.allclose(q, mb.models.bricard_state(br, a)[0], atol=1e-7)


def test_stiff_spring_governor_with_an_implicit_method():
    m = mb.models.flyball_governor(couplers="rigid")
    q0, qd0 = mb.models.flyball_governor_state(m)
    res = mb.loops.simulate(m, (0.0, 0.05), q0, qd0, method="Radau", rtol=1e-8, atol=1e-8)
    total = res.energy + res.dissipated
    assert res.position_drift.max() < 1e-10
    assert np.ptp(total) < 1e-8 * np.abs(total).max()


SHIPPED_LOOPS = {
    "crank_slider": (lambda: mb.models.crank_slider(), mb.models.crank_slider_state, (0.7, 3.0)),
    "four_bar": (lambda: mb.models.four_bar(), mb.models.four_bar_state, (1.1, -4.0)),
    "bricard": (lambda: mb.models.bricard(), mb.models.bricard_state, (0.8, 1.5)),
    "n_four_bar": (lambda: mb.models.n_four_bar(N=3), mb.models.n_four_bar_state, (0.4, -1.0)),
    "governor_rigid": (lambda: mb.models.flyball_governor(couplers="rigid"),
                       lambda m, a, r: mb.models.flyball_governor_state(m, a, r, spin=0.3),
                       (0.6, 0.5)),
}


@pytest.mark.parametrize("name", sorted(SHIPPED_LOOPS))
def test_every_shipped_loop_model_equals_cartesian(name):
    build, state, args = SHIPPED_LOOPS[name]
    m = build()
    q, qd = state(m, *args)
    tau = np.random.default_rng(5).normal(size=m.nv)
    ref = mb.cartesian.forward_dynamics(m, q, qd, tau, redundant="lstsq")
    out = mb.loops.forward_dynamics(m, q, qd, tau)
    assert np.abs(out - ref).max() < TOL * (1 + np.abs(ref).max())
    spatial = mb.loops.forward_dynamics(m, q, qd, tau, planar=False)  # redundant rows if planar
    assert np.abs(spatial - ref).max() < 1e-8 * (1 + np.abs(ref).max())
    sol = mb.loops.solve(m, q, qd, tau)
    if sol.nullity[0] == 0:  # unique reactions: equal to chapter 2's multipliers
        R, C = mb.loops.reactions(m, q, qd, tau), mb.cartesian.reactions(m, q, qd, tau)
        for j in C:
            scale = 1 + max(np.abs(C[j][k]).max() for k in C[j])
            for k in C[j]:
                assert np.abs(R[j][k] - C[j][k]).max() < 1e-8 * scale, (j, k)


def test_the_n_four_bar_passes_its_singular_positions_on_the_parallelogram_branch():
    """IFToMM A02: at the horizontal position the mobility jumps from 1 to N + 1; the
    projection keeps the rank of H found on the manifold and passes through."""
    m = mb.models.n_four_bar(N=2)
    q0, qd0 = mb.models.n_four_bar_state(m, 0.0, -1.0)
    res = mb.loops.simulate(m, (0.0, 1.5), q0, qd0, rtol=1e-10, atol=1e-10)
    assert res.q[-1, 0] < -np.pi  # beyond the first horizontal position (about -pi/2)
    assert res.position_drift.max() < 1e-10
    E = res.energy
    assert np.abs(E - E[0]).max() < 1e-7 * np.abs(E).max()
    r, A = m.body_poses(res.q)
    cranks = [k for k, b in enumerate(m.bodies) if b.name.startswith("crank")]
    angle = np.arctan2(A[:, cranks, 1, 0], A[:, cranks, 0, 0])
    spread = np.angle(np.exp(1j * (angle - angle[:, :1])))
    assert np.abs(spread).max() < 1e-8  # all cranks stay parallel


def random_tree_with_loops(seed):
    """A random tree (each body hinged to a random earlier body) closed by a spherical joint
    to the ground and a universal joint between two moving bodies, assembled by placing the
    closing joints where the tree puts them at a random configuration."""
    rng = np.random.default_rng(seed)
    m = mb.Model(gravity=(0.0, -9.81, 0.0))
    names = ["ground"]
    for i in range(10):
        m.add_body(f"b{i}", float(rng.uniform(0.5, 2.0)), np.diag(rng.uniform(0.1, 0.15, 3)))
        parent = names[int(rng.integers(0, len(names)))] if i else "ground"
        m.add_joint(f"j{i}", "revolute", parent, f"b{i}",
                    parent_point=rng.normal(size=3) * 0.3 if parent != "ground" else (0, 0, 0),
                    child_point=rng.normal(size=3) * 0.3, axis=rng.normal(size=3))
        names.append(f"b{i}")
    q = rng.uniform(-1, 1, m.nq)
    r, A = m.body_poses(q)
    a, b = 10, int(rng.integers(1, 6))  # a leaf-ish body to the ground, and two moving ones
    tip = rng.normal(size=3) * 0.3
    m.add_joint("ball", "spherical", "ground", f"b{a - 1}", parent_point=r[a] + A[a] @ tip,
                child_point=tip, orientation=A[a])
    c = 8 if b != 8 else 7
    tip2 = rng.normal(size=3) * 0.3
    P = r[c] + A[c] @ tip2
    u1 = rng.normal(size=3)
    m.add_joint("cardan", "universal", f"b{b - 1}", f"b{c - 1}",
                parent_point=A[b].T @ (P - r[b]), child_point=tip2,
                orientation=A[b].T @ A[c], axes=(u1, np.cross(u1, rng.normal(size=3))))
    q_full = np.concatenate([q, m.joint("ball").neutral(), m.joint("cardan").neutral()])
    return m, q_full, rng.normal(size=m.nv)


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_random_trees_with_two_loops_equal_cartesian(seed):
    try:
        m, q, qd = random_tree_with_loops(seed)
    except TopologyError:  # the random pair was already joined: no such mechanism
        assume(False)
    q, qd = mb.loops.assemble(m, q, qd)
    tau = np.random.default_rng(seed).normal(size=m.nv)
    ref = mb.cartesian.forward_dynamics(m, q, qd, tau, redundant="lstsq")
    out = mb.loops.forward_dynamics(m, q, qd, tau)
    assert len(mb.loops.prepare(m).cut) == 2
    assert np.abs(out - ref).max() < 1e-8 * (1 + np.abs(ref).max())


def test_compiled_cut_joint_method_equals_the_numpy_route():
    """Chapter 6's kernel (mbcourse.kernels.loops) = the NumPy cut-joint method and chapter 2's
    route."""
    rng = np.random.default_rng(97)
    cases = [(mb.models.four_bar(), mb.models.four_bar_state, (0.4, 1.3)),
             (mb.models.crank_slider(), mb.models.crank_slider_state, (0.3, 2.0)),
             (mb.models.n_four_bar(8), mb.models.n_four_bar_state, (0.3, 0.8))]
    for model, state, args in cases:
        q, qd = state(model, *args)
        tau = rng.normal(size=model.nv)
        assert mb.loops._kernel_data(model, mb.loops.prepare(model)) is not None
        fast = mb.loops.forward_dynamics(model, q, qd, tau)
        np.testing.assert_allclose(fast, mb.loops.forward_dynamics(model, q, qd, tau,
                                                                   compiled=False),
                                   rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(fast, mb.cartesian.forward_dynamics(model, q, qd, tau),
                                   rtol=1e-8, atol=1e-8)
        # batches (every row checked) and lists take the kernel too
        Q, QD = np.array([q, q]), np.array([qd, -qd])
        np.testing.assert_allclose(mb.loops.forward_dynamics(model, Q, QD),
                                   mb.loops.forward_dynamics(model, Q, QD, compiled=False),
                                   rtol=1e-10, atol=1e-10)
    # an open loop is refused by name, whichever route runs first
    model = mb.models.four_bar()
    q, qd = mb.models.four_bar_state(model, 0.4, 1.3)
    q_open = q.copy()
    q_open[0] += 0.05
    with pytest.raises(mb.InconsistentStateError, match="open at the position level"):
        mb.loops.forward_dynamics(model, q_open, qd)
    with pytest.raises(mb.ModelError, match="compiled cut-joint method needs"):
        mb.loops.forward_dynamics(model, q, qd, cut=[1], compiled=True)
