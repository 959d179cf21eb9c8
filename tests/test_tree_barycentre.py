"""Barycentres, augmented bodies and the K form (Yudintsev 3.2–3.3, digest facts 6–9)."""

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
    """Fact 9: with the base at rest, omega^T K omega / 2 is the kinetic energy of the
    motion in which each body turns with its own omega_j about its joints."""
    rng, model = rotational_model(seed)
    q, _ = random_state(model, rng)
    K = mb.tree.spherical.K_matrix(model, q)[0]
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
    """(3.48)-(3.60), digest facts 6 and 7, on a floating chain of spherical joints."""
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
