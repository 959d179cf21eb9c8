"""Planar trees in absolute angles, Yudintsev (3.36)-(3.43) with erratum E16: mb.tree.planar
against the general tree formulation, the independent reference, Lagrange's equations
(kinetic energy), energy conservation and Table 3.1 (erratum E14)."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import mbcourse as mb
from mbcourse.errors import ModelError, TopologyError
from mbcourse.tree import planar
import reference

Z = (0.0, 0.0, 1.0)


def random_planar_tree(rng, n, gravity=True, loads=True, base=False):
    """Random revolute-about-z tree: random parents, ~30% of arcs pointing toward the base,
    axes +z or -z, joint orientation offsets about z, hinge points with (ignored) z parts,
    gravity with a z part, world and body loads, optionally a translating, turned base."""
    g = (rng.normal(), rng.normal(), rng.normal()) if gravity else (0.0, 0.0, 0.0)
    model = mb.Model(gravity=g)
    for k in range(1, n + 1):
        mass = rng.uniform(0.5, 2.0)
        jx, jy = rng.uniform(0.1, 0.2, size=2) * mass
        model.add_body(f"b{k}", mass, np.diag([jx, jy, (jx + jy) * rng.uniform(0.6, 1.0)]))
        parent = int(rng.integers(0, k))
        flip = parent > 0 and rng.random() < 0.3
        a, c = (f"b{k}", parent) if flip else (parent, f"b{k}")
        model.add_joint(f"j{k}", "revolute", a, c, parent_point=rng.normal(size=3),
                        child_point=rng.normal(size=3),
                        axis=Z if rng.random() < 0.7 else (0, 0, -1),
                        orientation=mb.spatial.axis_angle(Z, rng.normal())
                        if rng.random() < 0.6 else None)
    if loads:
        model.add_force(int(rng.integers(1, n + 1)), force=rng.normal(size=3),
                        point=rng.normal(size=3), frame="body")
        model.add_force(int(rng.integers(1, n + 1)), force=rng.normal(size=3),
                        torque=rng.normal(size=3), point=rng.normal(size=3))
        model.add_force(int(rng.integers(1, n + 1)), frame="body",
                        torque=lambda t, q, qd: np.array([0.1, 0.2, np.cos(t)]))
    if base:
        acc, v0 = rng.normal(size=3), rng.normal(size=3)
        model.set_base_motion(position=lambda t: v0 * t + 0.5 * acc * t * t,
                              velocity=lambda t: v0 + acc * t, acceleration=acc,
                              orientation=mb.spatial.axis_angle(Z, rng.normal()))
    return model


def state(model, rng):
    return rng.normal(size=model.nq), rng.normal(size=model.nv)


# ---------------------------------------------------------------- agreement
@pytest.mark.parametrize("seed", range(24))
def test_agrees_with_general_tree_and_reference(seed):
    rng = np.random.default_rng(seed)
    model = random_planar_tree(rng, int(rng.integers(1, 7)), base=seed % 3 == 0)
    q, qd = state(model, rng)
    tau = rng.normal(size=model.nv)
    t = float(rng.uniform(0, 2))
    got = planar.forward_dynamics(model, q, qd, tau, t=t)
    expected = reference.forward_dynamics(model, q, qd, tau, t=t)
    scale = 1.0 + np.abs(expected).max()
    np.testing.assert_allclose(got, expected, atol=1e-9 * scale)
    np.testing.assert_allclose(got, mb.tree.forward_dynamics(model, q, qd, tau, t=t),
                               atol=1e-9 * scale)
    A = mb.tree.mass_matrix(model, q, t=t)
    np.testing.assert_allclose(planar.mass_matrix(model, q, t=t), A, atol=1e-11 * np.abs(A).max())


def test_batched_and_coordinate_maps():
    rng = np.random.default_rng(7)
    model = random_planar_tree(rng, 6)
    q, qd, tau = rng.normal(size=(3, 5, model.nv))
    batch = planar.forward_dynamics(model, q, qd, tau)
    assert batch.shape == (5, model.nv)
    for k in range(5):
        np.testing.assert_allclose(batch[k], planar.forward_dynamics(model, q[k], qd[k], tau[k]),
                                   atol=1e-12)
    np.testing.assert_allclose(batch, mb.tree.forward_dynamics(model, q, qd, tau), atol=1e-9)
    # absolute angles are the body orientations, and the maps are inverse to each other
    phi, dphi = planar.absolute_angles(model, q, qd)
    _, Aw = model.body_poses(q)
    np.testing.assert_allclose(np.cos(phi), Aw[:, 1:, 0, 0], atol=1e-12)
    np.testing.assert_allclose(np.sin(phi), Aw[:, 1:, 1, 0], atol=1e-12)
    _, omega = model.body_velocities(q, qd)
    np.testing.assert_allclose(dphi, omega[:, 1:, 2], atol=1e-12)
    q_back, qd_back = planar.relative_coordinates(model, phi, dphi)
    np.testing.assert_allclose(q_back, q, atol=1e-12)
    np.testing.assert_allclose(qd_back, qd, atol=1e-12)


# ----------------------------------------------------- fact 10: Lagrange form
def _energy(model, phi, dphi):
    q, qd = planar.relative_coordinates(model, phi, dphi)
    return float(model.kinetic_energy(q, qd))


@pytest.mark.parametrize("seed", range(8))
def test_A_is_hessian_and_B_is_antisymmetric_lagrange(seed):
    rng = np.random.default_rng(100 + seed)
    model = random_planar_tree(rng, int(rng.integers(2, 7)), gravity=False, loads=False)
    n = model.n
    phi, dphi = rng.normal(size=n), rng.normal(size=n)
    A, B, R = planar.planar_equations(model, phi, dphi)
    # T is quadratic in dphi: polarization gives the Hessian exactly
    E = np.eye(n)
    Tk = np.array([_energy(model, phi, E[k]) for k in range(n)])
    H = np.array([[_energy(model, phi, E[i] + E[j]) - Tk[i] - Tk[j] if i != j else 2 * Tk[i]
                   for j in range(n)] for i in range(n)])
    np.testing.assert_allclose(A, H, atol=1e-10 * np.abs(H).max())
    np.testing.assert_allclose(A, A.T, atol=0)
    assert np.linalg.eigvalsh(A).min() > 0
    np.testing.assert_allclose(B, -B.T, atol=0)
    np.testing.assert_allclose(np.diag(B), 0.0, atol=0)
    np.testing.assert_allclose(R, 0.0, atol=0)
    # B dphi^2 = A' dphi - dT/dphi (finite differences along the motion / in phi)
    h = 1e-5
    Ap = (planar.planar_equations(model, phi + h * dphi, dphi)[0]
          - planar.planar_equations(model, phi - h * dphi, dphi)[0]) / (2 * h)
    dT = np.array([(_energy(model, phi + h * E[k], dphi) - _energy(model, phi - h * E[k], dphi))
                   / (2 * h) for k in range(n)])
    lhs = B @ dphi**2
    np.testing.assert_allclose(lhs, Ap @ dphi - dT, atol=1e-6 * (1 + np.abs(lhs).max()))


# --------------------------------------------------- fact 11: energy, E16
def _wrong_B(model, phi):
    """The printed (3.41): cos instead of sin in B (symmetric) -- erratum E16."""
    p = planar.planar_parameters(model)
    theta = phi[:, None] - phi[None, :] + p.a - p.beta[None, :]
    upper = p.M * p.d_mag * p.b0_mag[None, :] * p.less * np.cos(theta)
    return upper + upper.T


def _simulate(model, phi0, dphi0, wrong=False):
    n = model.n

    def rhs(t, y):
        phi, dphi = y[:n], y[n:]
        A, B, R = planar.planar_equations(model, phi, dphi)
        if wrong:
            B = _wrong_B(model, phi)
        return np.concatenate([dphi, np.linalg.solve(A, R - B @ dphi**2)])

    sol = solve_ivp(rhs, (0.0, 3.0), np.concatenate([phi0, dphi0]), method="DOP853",
                    rtol=1e-10, atol=1e-12, dense_output=False, t_eval=np.linspace(0, 3, 61))
    assert sol.success or wrong  # the printed B may even blow up: use the steps made
    energy = []
    for y in sol.y.T:
        q, qd = planar.relative_coordinates(model, y[:n], y[n:])
        energy.append(float(model.kinetic_energy(q, qd) + model.potential_energy(q)))
    energy = np.array(energy)
    return np.abs(energy - energy[0]).max() / (np.abs(energy).max())


def test_energy_is_conserved_and_printed_B_breaks_it():
    rng = np.random.default_rng(3)
    model = mb.Model(gravity=(0.0, -9.81, 0.0))
    prev = "ground"
    for k in range(1, 4):  # a triple pendulum of offset plates
        model.add_body(f"b{k}", 1.0 + 0.3 * k, [0.05, 0.1, 0.12])
        model.add_joint(f"j{k}", "revolute", prev, f"b{k}",
                        parent_point=(0.0, 0.0, 0.0) if k == 1 else (0.5, 0.1, 0.0),
                        child_point=(-0.5, 0.05 * k, 0.0), axis=Z)
        prev = f"b{k}"
    phi0, dphi0 = rng.normal(size=3), 2 * rng.normal(size=3)
    assert _simulate(model, phi0, dphi0) < 1e-8
    assert _simulate(model, phi0, dphi0, wrong=True) > 1e-3


# ------------------------------------------------- Table 3.1 and erratum E14
def test_table_3_1():
    s10, h10, s12, h12, s21, h21, m1, m2 = 1.0, 0.3, 1.2, 0.2, 0.9, 0.25, 2.0, 3.0
    M = m1 + m2
    model = mb.models.solar_array_leaves(s10, h10, s12, h12, s21, h21, m1, m2)
    tab = mb.models.table_3_1(model)
    expected = {
        "d11": np.hypot(s10, h10),
        "d12": np.hypot(s10 + s12, h10 + h12),
        "d21": 0.0,
        "d22": np.hypot(s21, h21),
        "b11": m2 / M * np.hypot(s12, h12),
        "b10": np.hypot(m2 * s12 / M + s10, -m2 * h12 / M - h10),
        "b12": np.hypot(m2 * s12 / M - s12, -m2 * h12 / M + h12),
        "b22": m1 / M * np.hypot(s21, h21),
        "b20": np.hypot(-m1 * s21 / M + s21, -m1 * h21 / M + h21),
        "a11": np.pi - np.arctan(h10 / s10),
        "a12": np.pi - np.arctan((h10 + h12) / (s10 + s12)),
        "a22": np.pi + np.arctan(h21 / s21),
        "beta1": np.arctan2(h10 + m2 * h12 / M, -s10 - m2 * s12 / M),
    }
    expected["beta2"] = expected["a22"]
    assert set(tab) == set(expected)
    for key, value in expected.items():
        assert tab[key] == pytest.approx(value, abs=1e-13), key
    assert tab["b12"] == pytest.approx(m1 / M * np.hypot(s12, h12), abs=1e-13)
    assert tab["b20"] == pytest.approx(m2 / M * np.hypot(s21, h21), abs=1e-13)
    assert tab["d21"] == 0.0
    assert np.degrees(tab["beta1"]) == pytest.approx(166.28, abs=0.01)
    assert np.degrees(tab["beta2"]) == pytest.approx(195.52, abs=0.01)
    assert tab["beta2"] == pytest.approx(tab["a22"], abs=1e-14)
    # the panel itself: no gravity, nothing applied -> R = 0, and the dynamics agree
    q, qd = np.array([0.4, 2.0]), np.array([0.3, -0.8])
    np.testing.assert_allclose(planar.forward_dynamics(model, q, qd),
                               mb.tree.forward_dynamics(model, q, qd), atol=1e-12)


# ------------------------------------------------- fact 6 (+ fact 8), barycentres
@pytest.mark.parametrize("seed", range(10))
def test_barycentre_identities(seed):
    rng = np.random.default_rng(200 + seed)
    model = random_planar_tree(rng, int(rng.integers(1, 8)), loads=False)
    p = planar.planar_parameters(model)
    m, n = p.masses, model.n
    np.testing.assert_allclose(np.einsum("j,ijk->ik", m, p.b), 0.0, atol=1e-12)   # (3.19)
    np.testing.assert_allclose(p.d, p.b0[:, None, :] - p.b, atol=1e-14)          # (3.20)
    # independent construction of b_i0 from the augmented body (Fig. 3.4): point masses at
    # the hinges = total mass reached through that hinge; b_i0 = inboard hinge - B_i
    pred_body, pred_arc, _ = mb.graph.predecessors(model.graph.i_plus, model.graph.i_minus)
    subtree = [{i} for i in range(n + 1)]
    for i in range(1, n + 1):
        k = i
        while k > 0:
            subtree[k].add(i)
            k = pred_body[k]
    for i in range(1, n + 1):
        mass_point = np.zeros(2)
        for a, joint in enumerate(model.joints):
            if i not in (joint.parent, joint.child):
                continue
            other = joint.child if joint.parent == i else joint.parent
            c = (joint.parent_point if joint.parent == i else joint.child_point)[:2]
            reached = (sum(m[j - 1] for j in subtree[other]) if pred_body[other] == i
                       else p.M - sum(m[j - 1] for j in subtree[i]))
            mass_point += reached * c
        B_rel = mass_point / p.M                     # C_i -> B_i
        joint = model.joints[pred_arc[i]]
        inboard = (joint.parent_point if joint.parent == i else joint.child_point)[:2]
        np.testing.assert_allclose(p.b0[i - 1], inboard - B_rel, atol=1e-12)
        np.testing.assert_allclose(p.b[i - 1, i - 1], -B_rel, atol=1e-12)
    # fact 8, (3.14): r_i = r_0 - sum_j d_ji, r_0 the base hinge point of i's branch
    q = rng.normal(size=model.nq)
    phi = planar.absolute_angles(model, q)
    r, _ = model.body_poses(q)
    rot = np.stack([np.cos(phi), -np.sin(phi), np.sin(phi), np.cos(phi)], -1).reshape(n, 2, 2)
    dw = np.einsum("ikl,ijl->ijk", rot, p.d)
    for i in range(1, n + 1):
        k = i
        while pred_body[k] != 0:
            k = pred_body[k]
        r0 = model.joints[pred_arc[k]].parent_point[:2] if model.joints[pred_arc[k]].parent == 0 \
            else model.joints[pred_arc[k]].child_point[:2]
        np.testing.assert_allclose(r[i, :2], r0 - dw[:, i - 1].sum(axis=0), atol=1e-12)


# ----------------------------------------------------------------- bad input
def test_spatial_models_and_loops_are_refused():
    m = mb.Model()
    m.add_body("a", 1.0, [1, 1, 1])
    m.add_joint("u", "universal", "ground", "a", axes=((1, 0, 0), (0, 1, 0)))
    with pytest.raises(ModelError, match="revolute"):
        planar.forward_dynamics(m, [0.0, 0.0], [0.0, 0.0])
    m = mb.Model()
    m.add_body("a", 1.0, [1, 1, 1])
    m.add_joint("x", "revolute", "ground", "a", axis=(1, 0, 0))
    with pytest.raises(ModelError, match="not about z"):
        planar.planar_parameters(m)
    m = mb.Model()
    m.add_body("a", 1.0, [1, 1, 1])
    m.add_joint("o", "revolute", "ground", "a", axis=Z,
                orientation=mb.spatial.axis_angle((1, 0, 0), 0.3))
    with pytest.raises(ModelError, match="orientation"):
        planar.absolute_angles(m, [0.0])
    m = mb.models.double_pendulum()
    m.set_base_motion(angular_velocity=(0, 0, 1.0))
    with pytest.raises(ModelError, match="rotates"):
        planar.forward_dynamics(m, [0.0, 0.0], [0.0, 0.0])
    loop = mb.models.solar_array()
    with pytest.raises(TopologyError, match="loops"):
        planar.planar_parameters(loop)
    assert not planar.is_planar(mb.models.crank_slider())


def test_planar_constants_agree_with_the_barycentre_module():
    """Two implementations of d_ij and b_i0 (2D in planar.py, 3D in barycentre.py)."""
    from mbcourse.tree import barycentre as bc
    model = mb.models.solar_array_leaves()
    pp = mb.tree.planar.planar_parameters(model)
    d3 = bc.d_vectors(model)
    b0, _ = bc.barycentre_vectors(model)
    np.testing.assert_allclose(np.linalg.norm(d3, axis=-1), pp.d_mag, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(b0, axis=-1), pp.b0_mag, atol=1e-12)


# ------------------------------------------------------------- force elements
def add_planar_springs(model, rng, damping=True):
    """Spring-dampers with attachment points off the plane (their tension uses the 3-D
    distance), joint spring-dampers, a load and a control law of (t, q, qd)."""
    n = model.n
    c = 1.0 if damping else 0.0
    model.add_spring("tether", "ground", n, point_a=(2.0, 1.0, 0.3), point_b=rng.normal(size=3),
                     stiffness=12.0, rest_length=0.5, damping=0.6 * c)
    if n > 1:
        model.add_spring("link", 1, n, point_a=rng.normal(size=3), point_b=rng.normal(size=3),
                         stiffness=7.0, rest_length=0.2, damping=0.3 * c)
    model.add_joint_spring(model.joints[0].name, stiffness=4.0, rest=0.3, damping=0.5 * c)
    if damping:
        model.add_force(n, frame="body", point=(0.3, 0.1, 0.2),
                        force=lambda t, q, qd: np.array([np.sin(t), -qd[0], 0.4]))
        model.add_generalized_force(lambda t, q, qd: -0.2 * qd + 0.1 * q, name="law")
    return model


@pytest.mark.parametrize("seed", range(10))
def test_springs_and_dampers_in_absolute_angles(seed):
    """The planar form sees every force element: same accelerations as the general and
    K forms and the independent reference."""
    rng = np.random.default_rng(500 + seed)
    model = add_planar_springs(random_planar_tree(rng, int(rng.integers(1, 6)),
                                                  base=seed % 3 == 0), rng)
    q, qd = state(model, rng)
    tau = rng.normal(size=model.nv)
    t = float(rng.uniform(0, 2))
    expected = reference.forward_dynamics(model, q, qd, tau, t=t)
    scale = 1.0 + np.abs(expected).max()
    np.testing.assert_allclose(planar.forward_dynamics(model, q, qd, tau, t=t), expected,
                               atol=1e-9 * scale)
    np.testing.assert_allclose(mb.tree.forward_dynamics(model, q, qd, tau, t=t), expected,
                               atol=1e-9 * scale)
    np.testing.assert_allclose(mb.tree.spherical.forward_dynamics(model, q, qd, tau, t=t),
                               expected, atol=1e-9 * scale)
    # planar_equations holds them by default: A phi'' + B phi'^2 = R + S Y(tau)
    p = planar.planar_parameters(model)
    phi, dphi = planar.absolute_angles(model, q, qd, t=t)
    A, B, R = planar.planar_equations(model, phi, dphi, t=t)
    ddphi = -(p.sigma * expected) @ p.T
    np.testing.assert_allclose(A @ ddphi + B @ dphi**2, R + (-p.sigma * tau) @ p.S.T,
                               atol=1e-9 * scale * (1 + np.abs(A).max()))
    # 3-D batch shapes
    Q, QD = q + 0.1 * rng.normal(size=(2, 3, model.nq)), qd + rng.normal(size=(3, model.nv))
    batch = planar.forward_dynamics(model, Q, QD, tau, t=t)
    assert batch.shape == (2, 3, model.nv)
    np.testing.assert_allclose(batch[1, 2], planar.forward_dynamics(model, Q[1, 2], QD[2], tau,
                                                                    t=t), atol=1e-12)
    np.testing.assert_allclose(batch, mb.tree.forward_dynamics(model, Q, QD, tau, t=t),
                               atol=1e-9 * (1 + np.abs(batch).max()))
    assert planar.mass_matrix(model, Q, t=t).shape == (2, 3, model.nv, model.nv)
    assert planar.absolute_angles(model, Q, t=t).shape == (2, 3, model.n)


def test_energy_with_springs_is_conserved_in_absolute_angles():
    """Undamped springs and joint springs in R: T + U (springs included) is constant."""
    rng = np.random.default_rng(9)
    model = add_planar_springs(random_planar_tree(rng, 3, loads=False), rng, damping=False)
    phi0, dphi0 = rng.normal(size=3), rng.normal(size=3)
    assert _simulate(model, phi0, dphi0) < 1e-8
