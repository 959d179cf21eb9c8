"""Chapter 7: the closed forms of kinetic energy against the definition (10) by quadrature,
and the errata's counterexamples."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mbcourse as mb
from mbcourse import kinetic as K
from mbcourse.spatial import axis_angle


def random_body(rng, kind):
    if kind == "box":
        R = axis_angle(rng.normal(size=3), rng.uniform(0, 3))
        return K.Box(rng.uniform(0.5, 3), rng.uniform(0.1, 2, 3), rng.normal(size=3), R)
    if kind == "cylinder":
        return K.Cylinder(rng.uniform(0.5, 3), rng.uniform(0.1, 1), rng.uniform(0.1, 2),
                          axis=["x", "y", "z"][rng.integers(3)], centre=rng.normal(size=3))
    return K.PointCloud(rng.uniform(0.1, 1, 7), rng.normal(size=(7, 3)))


def harmonic(rng):
    a, w, ph = rng.normal(), rng.uniform(0.5, 3), rng.uniform(0, 6)
    return lambda t: (a * np.sin(w * t + ph), a * w * np.cos(w * t + ph),
                      -a * w * w * np.sin(w * t + ph))


def random_motion(rng):
    parts = []
    for _ in range(int(rng.integers(1, 4))):
        axis = ["x", "y", "z"][rng.integers(3)]
        pole = rng.normal(size=3)
        if rng.uniform() < 0.5:
            c, v = rng.normal(size=3), rng.normal(size=3)
            pm = lambda t, c=c, v=v: (c + v * t, v, np.zeros(3))  # noqa: E731
            parts.append(K.PlaneRotation(axis, pole, harmonic(rng), pole_motion=pm))
        else:
            parts.append(K.PlaneRotation(axis, pole, harmonic(rng)))
    return K.compose(*parts)


def finite_velocity(motion, alpha, t, h=1e-6):
    return (motion.position(alpha, t + h) - motion.position(alpha, t - h)) / (2 * h)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), kind=st.sampled_from(["box", "cylinder", "cloud"]))
def test_closed_forms_equal_the_definition(seed, kind):
    rng = np.random.default_rng(seed)
    body, motion, t = random_body(rng, kind), random_motion(rng), rng.uniform(0, 2)
    E = K.kinetic_energy(motion, body, t)
    pts, w = body.quadrature()
    x = motion.position(pts, t)
    # the velocity field (4) is the time derivative of the motion law
    np.testing.assert_allclose(motion.velocity(pts, t), finite_velocity(motion, pts, t),
                               rtol=1e-6, atol=1e-6)
    m = w.sum()
    C = w @ x / m
    vC = w @ motion.velocity(pts, t) / m
    omega = motion.angular_velocity(t)
    J_C = K.moments(x, w, C)["J"]  # current central inertia
    scale = 1.0 + E
    assert abs(K.energy_koenig(m, vC, omega, J_C) - E) < 1e-10 * scale  # (40)
    # current inertia = R J(0) R^T (E31)
    m0, C0, J0 = K.mass_properties(body)
    R = motion.state(t)[0]
    np.testing.assert_allclose(J_C, R @ J0 @ R.T, atol=1e-10 * (1 + np.abs(J0).max()))
    # (39) about an arbitrary moving material point P misses exactly the cross term (E32)
    P_mat = rng.normal(size=3)
    P = motion.position(P_mat, t)
    vP = motion.velocity(P_mat, t)
    J_P = K.moments(x, w, P)["J"]
    wrong = K.energy_eq39(m, vP, omega, J_P)
    assert abs(wrong + K.cross_term(m, vP, omega, C - P) - E) < 1e-10 * scale


def test_rotation_about_a_fixed_pole_and_the_single_axis_forms():
    rng = np.random.default_rng(3)
    body = random_body(rng, "box")
    pole = rng.normal(size=3)
    rot = K.PlaneRotation("z", pole, K.uniform(0.4, 1.7))
    E = K.kinetic_energy(rot, body, 0.5)
    pts, w = body.quadrature()
    x = rot.position(pts, 0.5)
    mom = K.moments(x, w, rot.position(pole, 0.5))
    assert abs(K.energy_one_axis(1.7, mom["J"][2, 2]) - E) < 1e-12 * (1 + E)     # (35)
    assert abs(K.energy_about_pole([0, 0, 1.7], mom["J"]) - E) < 1e-12 * (1 + E)  # (30)
    # two axes through one fixed pole: observer-frame omega (E33)
    inner = K.PlaneRotation("y", pole, K.uniform(0.3, 0.8))
    both = K.compose(inner, K.PlaneRotation("z", pole, K.uniform(0.2, -1.1)))
    t = 0.7
    E2 = K.kinetic_energy(both, body, t)
    w2 = both.angular_velocity(t)
    x2 = both.position(pts, t)
    J2 = K.moments(x2, w, both.position(pole, t))["J"]
    assert abs(K.energy_about_pole(w2, J2) - E2) < 1e-12 * (1 + E2)
    # with the joint rates (0, th_y', th_z') in place of omega, (34) is wrong here (E33)
    rates = (0.8, -1.1)
    assert abs(K.energy_two_axes(*rates, J2[1, 1], J2[2, 2], -J2[1, 2]) - E2) > 1e-3
    assert np.isclose(w2[2], -1.1) and not np.isclose(w2[1], 0.8)


def test_planar_form_about_a_moving_pole():
    rng = np.random.default_rng(4)
    body = random_body(rng, "cloud")
    pole = np.array([0.3, -0.2, 0.0])
    pm = lambda t: (pole + np.array([0.5, 1.0, 0.0]) * t, np.array([0.5, 1.0, 0.0]), np.zeros(3))  # noqa: E731,E501
    mot = K.PlaneRotation("z", pole, K.uniform(0.1, 2.3), pole_motion=pm)
    t = 0.4
    E = K.kinetic_energy(mot, body, t)
    pts, w = body.quadrature()
    x = mot.position(pts, t)
    xP = pm(t)[0]
    m = w.sum()
    C = w @ x / m
    J_Pz = K.moments(x, w, xP)["J"][2, 2]
    assert abs(K.energy_planar(m, [0.5, 1.0], 2.3, J_Pz, C - xP) - E) < 1e-12 * (1 + E)  # (15)


def test_product_of_inertia_after_one_rotation_and_its_amplitude():
    rng = np.random.default_rng(5)
    body = random_body(rng, "box")
    pts, w = body.quadrature()
    m0 = K.moments(pts, w, np.zeros(3))
    Ia, Ib, Iab = m0["I"][0], m0["I"][1], m0["products"]["xy"]
    values = []
    for th in np.linspace(0, np.pi, 181):
        x = K.PlaneRotation("z", angle=th).position(pts, 0.0)
        Ixy = K.moments(x, w, np.zeros(3))["products"]["xy"]
        assert abs(K.product_after_rotation(Ia, Ib, Iab, th) - Ixy) < 1e-12 * (1 + abs(Ia))
        values.append(Ixy)
    amp = K.product_amplitude(Ia, Ib, Iab)
    assert abs(max(values) - amp) < 1e-3 * amp and abs(min(values) + amp) < 1e-3 * amp  # E36
    # the paper's "between I_ab and (I_a - I_b)/2" is not the range
    assert amp > max(abs(Iab), abs(Ia - Ib) / 2) + 1e-6


def test_polar_moments_are_not_constant_under_general_rotation():
    """E31: a thin rod along x turned 90 degrees about y lies along z: J^z drops to 0."""
    m, ell = 2.0, 1.5
    rod = K.Box(m, (ell, 0.0, 0.0))
    pts, w = rod.quadrature()
    assert np.isclose(K.moments(pts, w, np.zeros(3))["J"][2, 2], m * ell ** 2 / 12)
    turned = K.PlaneRotation("y", angle=np.pi / 2)
    Jz = K.moments(turned.position(pts, 0.0), w, np.zeros(3))["J"][2, 2]
    assert abs(Jz) < 1e-15
    # spinning about z, the vertical rod has no kinetic energy; (35) with the initial J^z
    # would give m l^2 w^2 / 24 (checkable fact 36)
    spin = K.compose(turned, K.PlaneRotation("z", angle=K.uniform(0.0, 3.0)))
    assert K.kinetic_energy(spin, rod, 0.2) < 1e-25
    assert np.isclose(K.energy_one_axis(3.0, m * ell ** 2 / 12), m * ell ** 2 * 9 / 24)


def test_bad_inputs():
    with pytest.raises(mb.errors.ModelError, match="axis"):
        K.PlaneRotation("w")
    with pytest.raises(mb.errors.ShapeError, match="pole"):
        K.PlaneRotation("x", pole=(1.0, 2.0))
    with pytest.raises(mb.errors.ModelError, match="mass"):
        K.Box(-1.0, (1, 1, 1))
    with pytest.raises(mb.errors.ShapeError, match="points"):
        K.PointCloud([1.0, 2.0], [[0, 0, 0]])
    with pytest.raises(mb.errors.ShapeError, match="finite"):
        K.uniform(np.nan)
    with pytest.raises(mb.errors.ShapeError):
        K.compose()


# --------------------------------------------------------------- the robot of Fig. 1
def robot_laws():
    return (lambda t: (0.6 * np.sin(1.3 * t), 0.78 * np.cos(1.3 * t), -1.014 * np.sin(1.3 * t)),
            lambda t: (0.4 * np.sin(0.9 * t + 0.2), 0.36 * np.cos(0.9 * t + 0.2),
                       -0.324 * np.sin(0.9 * t + 0.2)),
            K.uniform(0.3, 4.0, 1.5))


def robot_state(laws, t):
    vals = np.array([law(t) for law in laws])  # (3, 3): theta, rate, acceleration
    return vals[:, 0], vals[:, 1], vals[:, 2]


def test_robot_motion_laws_equal_the_model_and_do_not_deform():
    model = mb.models.alyushin_robot()
    p = model.parameters
    laws = robot_laws()
    motions = K.alyushin_motions(p["H"], p["L1"], p["lead"], *laws)
    for t in (0.0, 0.7, 1.9):
        q, qd, _ = robot_state(laws, t)
        r, A = model.body_poses(q)
        vel, omega = model.body_velocities(q, qd)
        for k, name in enumerate(("link1", "link2", "link3", "load"), start=1):
            mot = motions[min(k, 3) - 1]
            R, pp, *_ = mot.state(t)
            C0 = np.array(p["centres"][name])
            np.testing.assert_allclose(R, A[k], atol=1e-12)
            np.testing.assert_allclose(mot.position(C0, t), r[k], atol=1e-12)
            np.testing.assert_allclose(mot.velocity(C0, t), vel[k], atol=1e-12)
            np.testing.assert_allclose(mot.angular_velocity(t), omega[k], atol=1e-12)
            assert abs(np.linalg.det(R) - 1.0) < 1e-12


def test_robot_deformation_gradient_is_one_symbolically():
    import sympy as sp
    tz, ty, tx = sp.symbols("theta_z theta_y theta_x", real=True)
    Rz = sp.Matrix([[sp.cos(tz), -sp.sin(tz), 0], [sp.sin(tz), sp.cos(tz), 0], [0, 0, 1]])
    Ry = sp.Matrix([[sp.cos(ty), 0, sp.sin(ty)], [0, 1, 0], [-sp.sin(ty), 0, sp.cos(ty)]])
    Rx = sp.Matrix([[1, 0, 0], [0, sp.cos(tx), -sp.sin(tx)], [0, sp.sin(tx), sp.cos(tx)]])
    # link 3: x = Rz (A + Ry (B + u e_x - A + Rx (alpha - B))): d x / d alpha = Rz Ry Rx
    assert sp.simplify((Rz * Ry * Rx).det()) == 1


def test_robot_link_energies_by_the_closed_forms_equal_the_model():
    """Link 1 by (35), link 2 by (30) about A with observer-frame omega and current inertia
    (E31, E33), link 3 and the load by (40): their sum is Model.kinetic_energy."""
    model = mb.models.alyushin_robot()
    p = model.parameters
    laws = robot_laws()
    motions = K.alyushin_motions(p["H"], p["L1"], p["lead"], *laws)
    t = 1.1
    q, qd, _ = robot_state(laws, t)
    total = 0.0
    for name, mot in zip(("link1", "link2", "link3", "load"), motions + (motions[2],)):
        body = K.Box(model.body(name).mass, p["sizes"][name], p["centres"][name])
        pts, w = body.quadrature()
        x = mot.position(pts, t)
        omega = mot.angular_velocity(t)
        if name == "link1":
            E = K.energy_one_axis(omega[2], K.moments(x, w, np.zeros(3))["J"][2, 2])
        elif name == "link2":
            pole = mot.position([0.0, 0.0, p["H"]], t)
            E = K.energy_about_pole(omega, K.moments(x, w, pole)["J"])
        else:
            C = w @ x / w.sum()
            E = K.energy_koenig(w.sum(), mot.velocity(np.array(p["centres"][name]), t), omega,
                                K.moments(x, w, C)["J"])
        assert abs(E - K.kinetic_energy(mot, body, t)) < 1e-12 * (1 + E)
        total += E
    assert abs(total - model.kinetic_energy(q, qd)) < 1e-12 * (1 + total)


def test_robot_power_balance_with_the_actuators_of_inverse_dynamics():
    """E34: the actuators' power equals d/dt of the kinetic plus potential energy."""
    model = mb.models.alyushin_robot()
    laws = robot_laws()
    h = 1e-5
    for t in (0.3, 1.2):
        q, qd, qdd = robot_state(laws, t)
        tau = mb.tree.inverse_dynamics(model, q, qd, qdd)
        power = tau @ qd

        def energy(s):
            qs, qds, _ = robot_state(laws, s)
            return model.kinetic_energy(qs, qds) + model.potential_energy(qs)
        dE = (energy(t + h) - energy(t - h)) / (2 * h)
        assert abs(power - dE) < 1e-6 * (1 + abs(power))
        # every formulation drives the robot with these torques along the given laws
        for fd in (mb.tree.forward_dynamics, mb.vereshchagin.forward_dynamics,
                   mb.cartesian.forward_dynamics, mb.loops.forward_dynamics,
                   mb.tree.spherical.forward_dynamics):
            np.testing.assert_allclose(fd(model, q, qd, tau), qdd, atol=1e-9)


def test_robot_sympy_laws_their_derivatives_and_the_numeric_motions():
    """Checkable fact 34: (45), (47) are the time derivatives of (44), (46), the deformation
    gradient is 1, and the sympy laws equal the numeric material description."""
    import sympy as sp
    H, L1, lead = 1.0, 0.8, 0.1
    sym = K.sympy_alyushin(H, L1, lead)
    t, alpha, thetas = sym["t"], sym["alpha"], sym["theta"]
    laws = robot_laws()
    motions = K.alyushin_motions(H, L1, lead, *laws)
    t0, a0 = 0.8, np.array([0.9, -0.1, 1.05])
    vals = {}
    for th, law in zip(thetas, laws):
        v, v_t, _ = law(t0)
        vals[sp.Derivative(th, t)] = v_t
        vals[th] = v
    for x, mot in zip(sym["x"], motions):
        assert sp.simplify(x.jacobian(alpha).det()) == 1
        subs = dict(zip(alpha, a0))
        pos = np.array(x.subs(subs).subs(vals).evalf(), dtype=float).ravel()
        vel_expr = x.diff(t).subs(subs)
        vel = np.array(vel_expr.subs({k: vals[k] for k in vals if isinstance(k, sp.Derivative)})
                       .subs(vals).evalf(), dtype=float).ravel()
        np.testing.assert_allclose(pos, mot.position(a0, t0), atol=1e-12)
        np.testing.assert_allclose(vel, mot.velocity(a0, t0), atol=1e-12)


def test_a_box_with_a_polynomial_density_is_integrated_exactly():
    """A rod of length L whose density grows linearly, rho = 1 + x / L (x from the middle):
    m = rho_0 L, centre at x = L / 12 from the middle, J about the centre 11 m L^2 / 144."""
    L, m = 1.2, 3.0
    rod = K.Box(m, (L, 0.0, 0.0), density=lambda u: 1.0 + u[..., 0] / L, degree=1)
    mass, C, J = K.mass_properties(rod)
    assert np.isclose(mass, m) and np.isclose(C[0], L / 12, atol=1e-14)
    assert np.isclose(J[2, 2], 11 * m * L ** 2 / 144, rtol=1e-13)
    # its energy spinning about the middle: 1/2 w^2 (J_C + m (L/12)^2)
    E = K.kinetic_energy(K.PlaneRotation("z", angle=K.uniform(0.0, 2.0)), rod, 0.0)
    assert np.isclose(E, 0.5 * 4.0 * (J[2, 2] + m * (L / 12) ** 2), rtol=1e-13)
    # a quadratic density needs the degree: the rule is exact for density * |v|^2
    quad = K.Box(m, (L, 0.0, 0.0), density=lambda u: 1.0 + (u[..., 0] / L) ** 2, degree=2)
    # J about the middle: int x^2 (1 + x^2/L^2) dx / int (1 + x^2/L^2) dx * m
    num = L ** 3 / 12 + L ** 3 / 80
    den = L + L / 12
    pts, w = quad.quadrature()
    assert np.isclose(K.moments(pts, w, np.zeros(3))["J"][2, 2], m * num / den, rtol=1e-13)
    with pytest.raises(mb.errors.ShapeError, match="density"):
        K.Box(1.0, (1, 1, 1), density=lambda u: -np.ones(len(u))).quadrature()


def test_robot_screw_pair_keeps_link3_on_link2s_axis_at_the_advance():
    # the joint point seen from both links: link 3's particle that started at B lies on
    # link 2's x axis through link 2's particle at B, at the advance u = h theta_x / 2 pi
    model = mb.models.alyushin_robot()
    p = model.parameters
    laws = robot_laws()
    _, link2, link3 = K.alyushin_motions(p["H"], p["L1"], p["lead"], *laws)
    B = np.array([p["L1"], 0.0, p["H"]])
    for t in (0.0, 0.7, 1.5, 1.9):
        R2, R3 = link2.state(t)[0], link3.state(t)[0]
        gap = link3.position(B, t) - link2.position(B, t)
        u = p["lead"] * laws[2](t)[0] / (2 * np.pi)
        np.testing.assert_allclose(gap, u * R2[:, 0], atol=1e-12)
        np.testing.assert_allclose(R3[:, 0], R2[:, 0], atol=1e-12)


def test_rotation_invariants_of_the_inertia_tensor():
    # E31: the trace, the moment about a single turn's axis, and a body with equal principal
    # moments are unchanged by rotation about the pole; the individual moments are not
    P = np.array([0.2, -0.1, 0.3])
    three = K.compose(*[K.PlaneRotation(a, P, K.uniform(0.0, r)) for a, r in zip("zyx", (0.7, -1.1, 0.9))])
    single = K.PlaneRotation("y", P, K.uniform(0.0, 1.3))

    def J(motion, body, t):
        pts, w = body.quadrature()
        return K.moments(motion.position(pts, t), w, P)["J"]

    brick = K.Box(2.0, (0.9, 0.4, 0.2), centre=(0.5, 0.3, -0.2))
    cube = K.Box(2.0, (0.5, 0.5, 0.5), centre=P)
    assert abs(np.trace(J(three, brick, 1.0)) - np.trace(J(three, brick, 0.0))) < 1e-12
    assert abs(J(single, brick, 1.0)[1, 1] - J(single, brick, 0.0)[1, 1]) < 1e-12
    np.testing.assert_allclose(J(three, cube, 1.0), J(three, cube, 0.0), atol=1e-12)
    assert np.abs(np.diag(J(three, brick, 1.0)) - np.diag(J(three, brick, 0.0))).max() > 0.1
