"""Barycentres, augmented bodies and the K form (Yudintsev 3.2–3.3, (3.13)–(3.69))."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mbcourse as mb
from mbcourse.tree import barycentre as bc
from test_cartesian import random_state, random_tree

ROT = ["revolute", "universal", "spherical", "fixed"]


def rotational_model(seed, k=5):
    rng = np.random.default_rng(seed)
    kinds = list(rng.choice(ROT, size=k))
    return rng, random_tree(rng, kinds)


@pytest.mark.parametrize("seed", range(8))
def test_barycentre_identities(seed):
    rng, model = rotational_model(seed)
    m = model.masses()
    M = m.sum()
    d = bc.d_vectors(model)
    b0, b = bc.barycentre_vectors(model)
    np.testing.assert_allclose(np.einsum("j,ijx->ix", m, b), 0, atol=1e-12)  # (3.19)
    np.testing.assert_allclose(d, b0[:, None] - b, atol=1e-14)  # (3.20)
    np.testing.assert_allclose(np.einsum("j,ijx->ix", m, d), M * b0, atol=1e-12)  # (3.26)
    # (3.15): d_ij = 0 unless s_i is on the path to s_j
    prec = bc.precedes(model)
    off = ~(prec | np.eye(model.n, dtype=bool))
    assert np.all(d[off] == 0)
    # (3.14): r_i = r_0 - sum_j d_ji, vectors rotated to inertial axes; r_0 is the point
    # of the base the subtree hangs from
    q, _ = random_state(model, rng)
    r, A = model.body_poses(q)
    dW = np.einsum("ixy,ijy->ijx", A[1:], d)
    r0 = r[0] + bc.base_hinges(model) @ A[0].T
    np.testing.assert_allclose(r[1:], r0 - dW.sum(axis=0), atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_K_is_the_kinetic_energy_of_free_angular_velocities(seed):
    """(3.33): with the base at rest, omega^T K omega / 2 is the kinetic energy of the
    motion in which each body turns with its own omega_j about its joints."""
    rng, model = rotational_model(seed)
    q, _ = random_state(model, rng)
    K = mb.tree.spherical.K_matrix(model, q)
    np.testing.assert_allclose(K, K.T, atol=1e-12)
    assert np.linalg.eigvalsh(K).min() > -1e-12
    r, A = model.body_poses(q)
    d = np.einsum("ixy,ijy->ijx", A[1:], bc.d_vectors(model))
    omega = rng.normal(size=(model.n, 3))
    vel = -np.einsum("jix->ix", np.cross(omega[:, None], d))  # dr_i = -sum_j w_j x d_ji
    J = A[1:] @ model.inertias() @ np.swapaxes(A[1:], -1, -2)
    T = 0.5 * (model.masses() @ np.sum(vel**2, -1) + np.einsum("ix,ixy,iy->", omega, J, omega))
    assert 0.5 * omega.ravel() @ K @ omega.ravel() == pytest.approx(T, rel=1e-12)


@settings(max_examples=40)
@given(st.lists(st.sampled_from(ROT), min_size=1, max_size=7), st.integers(0, 2**31))
def test_K_form_equals_general_form(kinds, seed):
    rng = np.random.default_rng(seed)
    model = random_tree(rng, kinds)
    q, qd = random_state(model, rng)
    tau = rng.normal(size=model.nv)
    a = mb.tree.spherical.forward_dynamics(model, q, qd, tau)
    b = mb.tree.forward_dynamics(model, q, qd, tau)
    np.testing.assert_allclose(a, b, atol=1e-10 * (1 + np.abs(b).max(initial=0)))


def test_K_form_with_prescribed_base_motion():
    rng, model = rotational_model(3)
    model.set_base_motion(position=lambda t: (0.3 * t * t, 0, 0), velocity=lambda t: (0.6 * t, 0, 0),
                          acceleration=(0.6, 0, 0),
                          orientation=lambda t: mb.spatial.axis_angle([0, 0, 1], 0.2 * t),
                          angular_velocity=(0, 0, 0.2))
    q, qd = random_state(model, rng)
    np.testing.assert_allclose(mb.tree.spherical.forward_dynamics(model, q, qd, t=1.3),
                               mb.tree.forward_dynamics(model, q, qd, t=1.3), atol=1e-10)


def test_floating_barycentres_and_mu_identities():
    """(3.48)-(3.60) on a floating chain of spherical joints."""
    rng = np.random.default_rng(0)
    model = mb.Model()
    for k in range(1, 5):
        model.add_body(f"b{k}", rng.uniform(0.5, 2), np.diag(rng.uniform(1, 1.5, 3)))
    model.add_joint("fictitious", "free", "ground", "b1")
    for k in range(2, 5):
        model.add_joint(f"s{k}", "spherical", f"b{int(rng.integers(1, k))}", f"b{k}",
                        parent_point=rng.normal(size=3), child_point=rng.normal(size=3))
    mu, b, K_star = bc.floating_barycentre_vectors(model)
    m = model.masses()
    n = model.n
    np.testing.assert_allclose(mu.T @ np.ones(n), 0, atol=1e-14)  # (3.54)
    np.testing.assert_allclose(mu @ np.diag(m) @ mu.T, np.diag(m) @ mu.T, atol=1e-14)  # (3.57)
    np.testing.assert_allclose(np.einsum("j,ijx->ix", m, b), 0, atol=1e-12)
    # R_i = r_i - r_C = sum_j b_ji (3.60) and sum m_i R_i = 0
    q = model.neutral_q()
    q[3:7] = [np.cos(0.2), np.sin(0.2), 0, 0]
    for k in range(3):
        quat = rng.normal(size=4)
        q[7 + 4 * k:11 + 4 * k] = quat / np.linalg.norm(quat)
    r, A = model.body_poses(q)
    rC = m @ r[1:] / m.sum()
    bW = np.einsum("jxy,jiy->jix", A[1:], b)
    np.testing.assert_allclose(r[1:] - rC, bW.sum(axis=0), atol=1e-12)
    # K*_i is symmetric positive definite
    assert all(np.linalg.eigvalsh(Ki).min() > 0 for Ki in K_star)


def test_matlab_helpers_regular_numbering():
    """GetBaricenterVectors returns -b_ii (erratum E13); Get_b returns b_ij."""
    rng = np.random.default_rng(4)
    model = mb.Model()
    parents = [0, 1, 1, 2, 2]
    for k in range(1, 6):
        model.add_body(f"b{k}", rng.uniform(0.5, 2), np.eye(3))
    for k, p in enumerate(parents, start=1):
        model.add_joint(f"u{k}", "spherical", p, k, parent_point=rng.normal(size=3) if p else
                        (0, 0, 0), child_point=rng.normal(size=3))
    g = model.graph
    assert mb.graph.is_regular(g.i_plus, g.i_minus)
    C = bc.hinge_vectors(model) * g.S[1:, :, None]  # c_ia
    B = bc.get_baricenter_vectors(g.S[1:], g.T, C, model.masses())
    _, b = bc.barycentre_vectors(model)
    np.testing.assert_allclose(B.T, -b[np.arange(5), np.arange(5)], atol=1e-12)
    np.testing.assert_allclose(bc.get_b(g.S[1:], g.T, B, C), b, atol=1e-12)


def test_sliding_joints_are_refused():
    model = random_tree(np.random.default_rng(0), ["revolute", "prismatic"])
    with pytest.raises(mb.ModelError, match="moves its joint point"):
        bc.d_vectors(model)


@pytest.mark.parametrize("seed", range(8))
def test_free_floating_form_equals_general_form(seed):
    """(3.44)-(3.69): motion about the centre of mass with K* about the barycentres."""
    rng = np.random.default_rng(seed)
    model = mb.Model(gravity=rng.normal(size=3))
    kinds = rng.choice(["revolute", "universal", "spherical"], size=4)
    model.add_body("b1", rng.uniform(1, 3), np.diag(rng.uniform(1, 1.5, 3)))
    model.add_joint("fictitious", "free", "ground", "b1", child_point=rng.normal(size=3))
    for k, kind in enumerate(kinds, start=2):
        model.add_body(f"b{k}", rng.uniform(0.5, 2), np.diag(rng.uniform(1, 1.5, 3)))
        extra = {"axis": rng.normal(size=3)} if kind == "revolute" else {}
        if kind == "universal":
            extra = {"axes": (rng.normal(size=3), rng.normal(size=3))}
        model.add_joint(f"j{k}", kind, f"b{int(rng.integers(1, k))}", f"b{k}",
                        parent_point=rng.normal(size=3), child_point=rng.normal(size=3), **extra)
    model.add_force("b2", force=(0.3, -0.2, 0.1), point=(0.2, 0, 0), frame="body")
    q, qd = random_state(model, rng)
    tau = rng.normal(size=model.nv)
    tau[:6] = 0.0  # nothing acts on the fictitious joint
    a = mb.tree.floating.forward_dynamics(model, q, qd, tau)
    b = mb.tree.forward_dynamics(model, q, qd, tau)
    np.testing.assert_allclose(a, b, atol=1e-10 * (1 + np.abs(b).max()))


def test_floating_form_refuses_attached_systems():
    with pytest.raises(mb.ModelError, match="fictitious joint"):
        mb.tree.floating.forward_dynamics(mb.models.double_pendulum(), [0, 0], [0, 0])
    sc = mb.models.floating_spacecraft()
    with pytest.raises(mb.ModelError, match="X_1 = Y_1 = 0"):
        mb.tree.floating.forward_dynamics(sc, sc.neutral_q(), np.zeros(8), tau=np.eye(8)[0])


# ------------------------------------------------- sliding joints in the K form
ALL_KINDS = ["revolute", "prismatic", "screw", "universal", "cylindrical", "spherical", "free",
             "fixed"]


@settings(max_examples=60)
@given(st.lists(st.sampled_from(ALL_KINDS), min_size=1, max_size=6), st.integers(0, 2**31))
def test_K_form_with_sliding_joints_equals_general_form(kinds, seed):
    """Hinge vectors c + z(q) (3.150) in d*, b*, K* and one translation unknown per sliding
    joint: every joint kind, arcs in both directions, a moving base."""
    from strategies import random_model, random_state as state_of
    rng = np.random.default_rng(seed)
    model = random_model(rng, kinds, reverse=tuple(k for k in range(len(kinds))
                                                   if rng.random() < 0.3))
    if model.nv == 0:
        return
    if rng.random() < 0.3:
        model.set_base_motion(position=lambda t: (0.1 * np.sin(2 * t), 0, 0),
                              velocity=lambda t: (0.2 * np.cos(2 * t), 0, 0),
                              acceleration=lambda t: (-0.4 * np.sin(2 * t), 0, 0),
                              orientation=lambda t: mb.spatial.axis_angle([0, 1, 0], 0.5 * t),
                              angular_velocity=(0, 0.5, 0))
    q, qd = state_of(model, rng)
    tau = rng.normal(size=model.nv)
    a = mb.tree.spherical.forward_dynamics(model, q, qd, tau, t=0.4)
    b = mb.tree.forward_dynamics(model, q, qd, tau, t=0.4)
    np.testing.assert_allclose(a, b, atol=1e-10 * (1 + np.abs(b).max()))


def test_K_of_sliding_joints_is_the_kinetic_energy_at_locked_slides():
    """With d* at the state, omega^T K omega / 2 is still the kinetic energy of free
    rotations about the (moved) joints, and the constants are not used for sliding models."""
    rng = np.random.default_rng(2)
    model = mb.Model()
    for k in range(1, 4):
        model.add_body(f"b{k}", rng.uniform(0.5, 2), np.diag(rng.uniform(1, 1.5, 3)))
    model.add_joint("s1", "spherical", "ground", "b1", child_point=rng.normal(size=3))
    model.add_joint("p2", "prismatic", "b1", "b2", parent_point=rng.normal(size=3),
                    child_point=rng.normal(size=3), axis=rng.normal(size=3))
    model.add_joint("s3", "spherical", "b2", "b3", parent_point=rng.normal(size=3),
                    child_point=rng.normal(size=3))
    assert mb.tree.spherical.prepare(model).bary.sliding == ("p2",)
    with pytest.raises(mb.ModelError, match="'p2' moves its joint point"):
        bc.augmented_inertias(model)
    quat = rng.normal(size=(2, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    q = np.concatenate([quat[0], [0.7], quat[1]])
    K = mb.tree.spherical.K_matrix(model, q)
    r, A = model.body_poses(q)
    tt = mb.tree.terms(model, q)
    d = tt.dstar[1:]  # d*_ij, inertial axes
    omega = rng.normal(size=(model.n, 3))
    vel = -np.einsum("jix->ix", np.cross(omega[:, None], d))
    J = A[1:] @ model.inertias() @ np.swapaxes(A[1:], -1, -2)
    T = 0.5 * (model.masses() @ np.sum(vel**2, -1) + np.einsum("ix,ixy,iy->", omega, J, omega))
    assert 0.5 * omega.ravel() @ K @ omega.ravel() == pytest.approx(T, rel=1e-12)


def test_prepared_constants_follow_the_model():
    model = mb.models.double_pendulum()
    K = bc.augmented_inertias(model)
    q, qd = np.array([0.3, -0.2]), np.array([0.5, 1.0])
    before = mb.tree.spherical.forward_dynamics(model, q, qd)
    assert bc.prepare(model) is bc.prepare(model)
    with pytest.raises(ValueError, match="read-only"):
        bc.d_vectors(model)[0, 0, 0] = 1.0
    model.body(2).mass = 3.0
    assert not np.allclose(bc.augmented_inertias(model), K)
    fresh = mb.models.double_pendulum()
    fresh.body(2).mass = 3.0
    np.testing.assert_allclose(bc.augmented_inertias(model), bc.augmented_inertias(fresh))
    after = mb.tree.spherical.forward_dynamics(model, q, qd)
    np.testing.assert_allclose(after, mb.tree.forward_dynamics(fresh, q, qd), atol=1e-12)
    assert np.abs(after - before).max() > 1e-3
    craft = mb.models.floating_spacecraft()
    qc = craft.neutral_q()
    vc = np.linspace(0.1, 0.8, craft.nv)
    a0 = mb.tree.floating.forward_dynamics(craft, qc, vc)
    craft.body(2).mass = 2.5
    np.testing.assert_allclose(mb.tree.floating.forward_dynamics(craft, qc, vc),
                               mb.tree.forward_dynamics(craft, qc, vc), atol=1e-10)
    assert np.abs(mb.tree.floating.forward_dynamics(craft, qc, vc) - a0).max() > 1e-6


@pytest.mark.parametrize("seed", range(4))
def test_free_floating_form_with_springs_and_state_dependent_loads(seed):
    """(3.45), (3.69) with internal spring-dampers, joint springs, a load f(t, q, qd) and a
    control law: the same accelerations as the general form and the reference."""
    import reference
    rng = np.random.default_rng(40 + seed)
    model = mb.Model(gravity=rng.normal(size=3))
    model.add_body("b1", rng.uniform(1, 3), np.diag(rng.uniform(1, 1.5, 3)))
    model.add_joint("fictitious", "free", "ground", "b1", child_point=rng.normal(size=3))
    for k, kind in enumerate(["revolute", "universal", "spherical"], start=2):
        model.add_body(f"b{k}", rng.uniform(0.5, 2), np.diag(rng.uniform(1, 1.5, 3)))
        extra = {"axis": rng.normal(size=3)} if kind == "revolute" else {}
        if kind == "universal":
            extra = {"axes": (rng.normal(size=3), rng.normal(size=3))}
        model.add_joint(f"j{k}", kind, f"b{k - 1}", f"b{k}", parent_point=rng.normal(size=3),
                        child_point=rng.normal(size=3), **extra)
    model.add_spring("k13", "b1", "b3", point_a=rng.normal(size=3), point_b=rng.normal(size=3),
                     stiffness=15.0, rest_length=0.3, damping=0.4)
    model.add_spring("k24", "b2", "b4", point_a=rng.normal(size=3), stiffness=8.0,
                     rest_length=0.5, damping=0.2)
    model.add_joint_spring("j2", stiffness=3.0, rest=0.2, damping=0.3)
    model.add_joint_spring("j3", stiffness=(2.0, 1.0), damping=0.1)
    model.add_force("b4", force=lambda t, q, qd: (np.sin(t), qd[6], 0.2), frame="body")
    model.add_generalized_force(lambda t, q, qd: np.r_[np.zeros(6), -0.2 * qd[6:]], name="law")
    q = model.neutral_q()
    quat = rng.normal(size=(2, 4))
    q[:3] = rng.normal(size=3)
    q[3:7] = quat[0] / np.linalg.norm(quat[0])
    q[7:10] = rng.normal(size=3)
    q[10:] = quat[1] / np.linalg.norm(quat[1])
    qd = rng.normal(size=model.nv)
    tau = np.r_[np.zeros(6), rng.normal(size=model.nv - 6)]
    a = mb.tree.floating.forward_dynamics(model, q, qd, tau, t=0.4)
    b = reference.forward_dynamics(model, q, qd, tau, t=0.4)
    np.testing.assert_allclose(a, b, atol=1e-9 * (1 + np.abs(b).max()))
    np.testing.assert_allclose(a, mb.tree.forward_dynamics(model, q, qd, tau, t=0.4),
                               atol=1e-10 * (1 + np.abs(b).max()))
    batch = mb.tree.floating.forward_dynamics(model, np.broadcast_to(q, (2, 3, model.nq)), qd,
                                              tau, t=0.4)
    assert batch.shape == (2, 3, model.nv)
    np.testing.assert_allclose(batch[1, 2], a, atol=1e-12)
    model.add_generalized_force(lambda t, q, qd: np.r_[1.0, np.zeros(model.nv - 1)], name="bad")
    with pytest.raises(mb.ModelError, match="X_1 = Y_1 = 0"):
        mb.tree.floating.forward_dynamics(model, q, qd)
