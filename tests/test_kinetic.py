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
