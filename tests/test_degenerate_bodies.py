"""Massless links and point masses (issue: every well-posed robot loads).

A leg whose hip is a ball joint built from three revolute joints with two massless links
between them (as humanoid robot files build it), a thigh, and a shin that is a point mass
(mass, no inertia). The mass matrix is positive definite, so every formulation that needs
only that agrees with every other; chapter 2's solvers that eliminate each body's own
inertia refuse it and name the body.
"""

import warnings

import numpy as np
import pytest

import mbcourse as mb
from mbcourse.errors import InertiaWarning, ModelError, SingularSystemError


def leg(floating=False):
    m = mb.Model()
    base = "ground"
    if floating:
        m.add_body("pelvis", 5.0, [0.1, 0.2, 0.15])
        m.add_joint("free", "free", "ground", "pelvis")
        base = "pelvis"
    m.add_body("v1", 0.0, [0.0, 0.0, 0.0])
    m.add_body("v2", 0.0, np.zeros((3, 3)))
    m.add_body("thigh", 2.0, [0.05, 0.04, 0.02])
    m.add_body("shin", 1.0, [0.0, 0.0, 0.0])
    m.add_joint("hip_z", "revolute", base, "v1", parent_point=(0, 0.1, -0.1), axis=(0, 0, 1))
    m.add_joint("hip_x", "revolute", "v1", "v2", axis=(1, 0, 0))
    m.add_joint("hip_y", "revolute", "v2", "thigh", child_point=(0, 0, 0.2), axis=(0, 1, 0))
    m.add_joint("knee", "revolute", "thigh", "shin", parent_point=(0, 0, -0.2),
                child_point=(0, 0, 0.2), axis=(0, 1, 0))
    return m


def _state(m, seed=1):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(3, m.nq))
    if m.nq != m.nv:
        q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1, keepdims=True)
    return q, rng.normal(size=(3, m.nv)), rng.normal(size=(3, m.nv))


@pytest.mark.parametrize("floating", [False, True])
def test_massless_links_and_a_point_mass_agree_in_every_formulation(floating):
    m = leg(floating)
    q, qd, tau = _state(m)
    ref = mb.tree.forward_dynamics(m, q, qd, tau, compiled=False)
    assert np.all(np.isfinite(ref))
    got = {
        "tree compiled": mb.tree.forward_dynamics(m, q, qd, tau, compiled=True),
        "composite bodies": mb.tree.forward_dynamics_composite(m, q, qd, tau),
        "vereshchagin": mb.vereshchagin.forward_dynamics(m, q, qd, tau, compiled=False),
        "vereshchagin compiled": mb.vereshchagin.forward_dynamics(m, q, qd, tau,
                                                                  compiled=True),
        "cut joints": mb.loops.forward_dynamics(m, q, qd, tau),
        "cartesian dense": mb.cartesian.forward_dynamics(m, q, qd, tau, solver="dense"),
    }
    for name, value in got.items():
        assert np.abs(value - ref).max() < 1e-10 * max(1.0, np.abs(ref).max()), name
    p, _ = mb.poisson.momenta(m, q, qd)                 # Ivanov's sweep inverts M q' = p
    assert np.abs(mb.poisson.velocities(m, q, p) - qd).max() < 1e-10


@pytest.mark.parametrize("solver", ["ldlt", "schur"])
def test_cartesian_solvers_that_eliminate_each_body_name_the_massless_one(solver):
    m = leg()
    q, qd, tau = _state(m)
    with pytest.raises(ModelError, match=rf"solver='{solver}' needs every body's own inertia "
                                         r"positive definite.*body 'v1' has no mass.*"
                                         r"solver='dense'.*mb\.vereshchagin"):
        mb.cartesian.forward_dynamics(m, q, qd, tau, solver=solver)
    m.body("v1").mass = 1.0                             # v1 now has mass but no inertia
    m.body("v2").mass = 1.0
    m.body("v2").inertia = [1.0, 1.0, 1.0]
    with pytest.raises(ModelError, match=r"body 'v1' has a point mass's inertia"):
        mb.cartesian.forward_dynamics(m, q, qd, tau, solver=solver)


def test_a_joint_that_moves_no_mass_is_named():
    m = leg()
    m.body("shin").mass = 0.0                           # the knee now moves nothing
    q, qd, tau = _state(m)
    for fd in (mb.vereshchagin.forward_dynamics, mb.tree.forward_dynamics):
        with pytest.raises(SingularSystemError, match="knee"):
            fd(m, q, qd, tau)


def test_an_impossible_inertia_is_refused_or_with_strict_false_warned_about():
    with pytest.raises(ModelError, match=r"body 'b': inertia violates the triangle "
                                         r"inequality of principal moments \(3 > 1 \+ 1\)"):
        mb.Model().add_body("b", 1.0, [1.0, 1.0, 3.0])
    with pytest.warns(InertiaWarning, match=r"body 'b': inertia violates.*strict=True"):
        body = mb.Model().add_body("b", 1.0, [1.0, 1.0, 3.0], strict=False)
    assert body.inertia[2, 2] == 3.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # a point mass is no warning
        mb.Model().add_body("p", 1.0, [0.0, 0.0, 0.0])


def test_a_configuration_that_loses_a_direction_is_named_not_answered():
    """At hip_x = 90 degrees the hip_y axis lies along hip_z's: the three angles lose a
    direction (gimbal lock) and the mass matrix is singular to rounding (its smallest
    eigenvalue ~1e-17). Every formulation refuses instead of returning rounding noise
    amplified 1e17 times (the dense KKT solve tests M on the motions the rows allow)."""
    m = leg()
    q = np.array([0.4, np.pi / 2, 0.6, -0.9])
    qd = np.array([1.0, -0.5, 0.3, 2.0])
    assert abs(np.linalg.eigvalsh(mb.tree.mass_matrix(m, q))[0]) < 1e-15
    for fd in (lambda: mb.tree.forward_dynamics(m, q, qd, compiled=False),
               lambda: mb.tree.forward_dynamics(m, q, qd, compiled=True),
               lambda: mb.vereshchagin.forward_dynamics(m, q, qd, compiled=False),
               lambda: mb.vereshchagin.forward_dynamics(m, q, qd, compiled=True),
               lambda: mb.tree.forward_dynamics_composite(m, q, qd),
               lambda: mb.loops.forward_dynamics(m, q, qd),
               lambda: mb.cartesian.forward_dynamics(m, q, qd, solver="dense")):
        with pytest.raises(SingularSystemError):
            fd()
    with pytest.raises(SingularSystemError, match="hip_z"):
        mb.vereshchagin.forward_dynamics(m, q, qd)
    p, _ = mb.poisson.momenta(m, q, qd)              # Ivanov's sweep and block Cholesky
    for solver in ("sweep", "cholesky"):
        with pytest.raises(SingularSystemError, match="hip_z"):
            mb.poisson.velocities(m, q, p, solver=solver)
    rng = np.random.default_rng(3)                  # the lock at any other pose: refused
    for _ in range(20):
        ql = rng.uniform(-3.0, 3.0, 4)
        ql[1] = np.pi / 2
        for fd in (mb.tree.forward_dynamics, mb.vereshchagin.forward_dynamics,
                   mb.loops.forward_dynamics, mb.tree.forward_dynamics_composite,
                   mb.cartesian.forward_dynamics):
            with pytest.raises(SingularSystemError):
                fd(m, ql, rng.normal(size=4))
    q[1] = np.pi / 2 - 1e-3                          # near it: answered
    assert np.all(np.isfinite(mb.vereshchagin.forward_dynamics(m, q, qd)))
