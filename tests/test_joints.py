"""The one joint description (mbcourse.joints): every method of every kind against an
independent route (finite differences, the forward map, numeric vs symbolic)."""

import numpy as np
import pytest

import mbcourse as mb
from mbcourse.errors import InconsistentStateError
from strategies import random_model, random_q

KINDS = list(mb.JOINT_KINDS)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(6))
def test_rates_are_time_derivatives_of_the_axes(kind, seed):
    rng = np.random.default_rng(seed)
    joint = random_model(rng, [kind]).joints[0]
    q, v = random_q(joint, rng), rng.normal(size=joint.nv)
    h = 1e-6
    qp, qm = q + h * joint.qdot(q, v), q - h * joint.qdot(q, v)
    pdot, kdot = joint.rates(q, v)
    np.testing.assert_allclose(pdot, (joint.p(qp) - joint.p(qm)) / (2 * h), atol=1e-7)
    np.testing.assert_allclose(kdot, (joint.k(qp) - joint.k(qm)) / (2 * h), atol=1e-7)
    w, s = joint.bias(q, v)
    np.testing.assert_allclose(w, pdot @ v, atol=1e-12)
    np.testing.assert_allclose(s, kdot @ v, atol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(6))
def test_from_pose_inverts_the_joint(kind, seed):
    rng = np.random.default_rng(seed)
    joint = random_model(rng, [kind]).joints[0]
    Q = np.array([random_q(joint, rng) for _ in range(4)]) * (0.9 if joint.quaternion is None
                                                              else 1.0)
    R, z = joint.rotation(Q), joint.z(Q)
    back = joint.from_pose(R, z, q_ref=Q)
    np.testing.assert_allclose(back, Q, atol=1e-10)
    # without a reference the pose is still reproduced (angles modulo 2 pi, q or -q)
    free = joint.from_pose(R, z)
    np.testing.assert_allclose(joint.rotation(free), R, atol=1e-10)
    np.testing.assert_allclose(joint.z(free), z, atol=1e-10)


def test_turn_counts_come_from_the_reference_or_the_screw_advance():
    m = mb.Model()
    m.add_body("a", 1.0, [1, 1, 1])
    m.add_body("b", 1.0, [1, 1, 1])
    rev = m.add_joint("r", "revolute", "ground", "a", axis=(0, 0, 1))
    scr = m.add_joint("s", "screw", "a", "b", axis=(1, 0, 0), lead=0.2)
    angle = np.array([9.0])  # more than a turn
    assert rev.from_pose(rev.rotation(angle), rev.z(angle))[0] == pytest.approx(9.0 - 2 * np.pi)
    assert rev.from_pose(rev.rotation(angle), rev.z(angle), q_ref=[8.0])[0] == pytest.approx(9.0)
    assert scr.from_pose(scr.rotation(angle), scr.z(angle))[0] == pytest.approx(9.0)


@pytest.mark.parametrize("kind", KINDS)
def test_speeds_from_rates_inverts_p_and_k(kind):
    rng = np.random.default_rng(3)
    joint = random_model(rng, [kind]).joints[0]
    q, v = random_q(joint, rng), rng.normal(size=joint.nv)
    if joint.nv == 0:
        return
    back = joint.speeds_from_rates(q, joint.p(q) @ v, joint.k(q) @ v)
    np.testing.assert_allclose(back, v, atol=1e-11)


@pytest.mark.parametrize("kind", ["revolute", "prismatic", "screw", "cylindrical", "universal",
                                  "fixed"])
def test_sympy_form_equals_the_numeric_joint(kind):
    import sympy as sp

    rng = np.random.default_rng(5)
    joint = random_model(rng, [kind]).joints[0]
    syms = sp.symbols(f"q0:{joint.nq}") if joint.nq else []
    Rj, z, P = joint.sympy_form(list(syms))
    q = random_q(joint, rng)
    subs = dict(zip(syms, q))
    R0 = joint.orientation
    np.testing.assert_allclose(np.array(Rj.subs(subs), dtype=float) @ R0, joint.rotation(q),
                               atol=1e-12)
    np.testing.assert_allclose(np.array(z.subs(subs), dtype=float).ravel(), joint.z(q),
                               atol=1e-12)
    np.testing.assert_allclose(np.array(P.subs(subs), dtype=float).reshape(3, joint.nv),
                               joint.p(q), atol=1e-12)


@pytest.mark.parametrize("kind", ["spherical", "free"])
def test_sympy_form_refuses_angular_velocity_speeds(kind):
    joint = random_model(np.random.default_rng(0), [kind]).joints[0]
    with pytest.raises(mb.ModelError, match="angular velocities"):
        joint.sympy_form([None] * joint.nq)


def test_rows_of_every_kind_count_the_constrained_freedoms():
    rng = np.random.default_rng(2)
    for kind in KINDS:
        joint = random_model(rng, [kind]).joints[0]
        assert len(joint.rows()) == 6 - joint.nv, kind
    planar = mb.Model()
    planar.add_body("a", 1.0, [1, 1, 1])
    j = planar.add_joint("p", "prismatic", "ground", "a", axis=(1, 1, 0))
    assert j.planar and len(j.rows(planar=True)) == 2
    j.axis = (0, 0, 1)  # now out of the plane
    assert not j.planar and j.rows(planar=True) is None


def test_quaternions_are_renormalized_within_tolerance_and_refused_beyond():
    m = mb.Model(gravity=(0, 0, -9.81))
    m.add_body("top", 1.0, [0.5, 0.5, 0.8])
    m.add_joint("ball", "spherical", "ground", "top", child_point=(0, 0, -0.5))
    quat = np.array([np.cos(0.2), np.sin(0.2), 0.0, 0.0])
    tol = mb.joints.QUATERNION_TOL
    near = quat * (1 + 0.5 * tol)
    np.testing.assert_allclose(m.check_q(near), quat, atol=1e-15)
    for bad in (5 * quat, np.zeros(4), quat * (1 + 2 * tol)):
        with pytest.raises(InconsistentStateError, match=r"joint 'ball': the quaternion q\[0:4\]"):
            m.check_q(bad)
    with pytest.raises(InconsistentStateError, match="batch item"):
        m.check_q([quat, 5 * quat])
