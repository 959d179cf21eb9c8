"""Rotation helpers: identities checked by independent routes."""

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra.numpy import arrays

from mbcourse import spatial as sp

vec = arrays(float, 3, elements=st.floats(-10, 10))


@given(vec, vec)
def test_skew_is_cross_product_and_vee_inverts_it(a, b):
    np.testing.assert_allclose(sp.skew(a) @ b, np.cross(a, b), atol=1e-12)
    np.testing.assert_allclose(sp.vee(sp.skew(a)), a)
    np.testing.assert_allclose(sp.skew(a), -sp.skew(a).T)


@given(vec.filter(lambda v: np.linalg.norm(v) > 1e-3), st.floats(-10, 10))
def test_axis_angle_against_matrix_exponential(axis, angle):
    from scipy.linalg import expm

    u = axis / np.linalg.norm(axis)
    R = sp.axis_angle(u, angle)
    np.testing.assert_allclose(R, expm(angle * sp.skew(u)), atol=1e-11)
    assert sp.is_rotation(R)


@given(arrays(float, 4, elements=st.floats(-1, 1)).filter(lambda q: np.linalg.norm(q) > 0.1),
       arrays(float, 4, elements=st.floats(-1, 1)).filter(lambda q: np.linalg.norm(q) > 0.1))
def test_quaternion_product_composes_rotations(a, b):
    a, b = a / np.linalg.norm(a), b / np.linalg.norm(b)
    np.testing.assert_allclose(
        sp.quat_to_matrix(sp.quat_multiply(a, b)), sp.quat_to_matrix(a) @ sp.quat_to_matrix(b),
        atol=1e-12)
    q = sp.matrix_to_quat(sp.quat_to_matrix(a))
    assert min(np.abs(q - a).max(), np.abs(q + a).max()) < 1e-10  # q and -q: same rotation
    assert q[0] >= 0.0


def test_quaternion_rate_against_finite_differences():
    rng = np.random.default_rng(0)
    for _ in range(20):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        w = rng.normal(size=3)
        qdot = sp.quat_rate_matrix(q) @ w
        h = 1e-6
        Rdot = (sp.quat_to_matrix(q + h * qdot) - sp.quat_to_matrix(q - h * qdot)) / (2 * h)
        R = sp.quat_to_matrix(q)
        np.testing.assert_allclose(Rdot, R @ sp.skew(w), atol=1e-8)


def test_matrix_to_quat_batches_and_half_turns():
    R = np.stack([sp.axis_angle(ax, np.pi) for ax in np.eye(3)] + [np.eye(3)])
    q = sp.matrix_to_quat(R)
    assert q.shape == (4, 4)
    np.testing.assert_allclose(sp.quat_to_matrix(q), R, atol=1e-14)


@pytest.mark.parametrize("R, ok", [(np.eye(3), True), (np.diag([1, 1, -1]), False),
                                   (2 * np.eye(3), False), (np.eye(2), False),
                                   (np.full((3, 3), np.nan), False)])
def test_is_rotation(R, ok):
    assert sp.is_rotation(R) is ok
