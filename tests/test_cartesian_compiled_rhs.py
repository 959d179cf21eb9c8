"""Chapter 2's simulation on the compiled right-hand side
(:func:`mbcourse.kernels.absolute.absolute_rhs`).

The kernel assembles the same index-1 DAE as :func:`mbcourse.cartesian.rhs` (the rows and
their position residuals for Baumgarte's terms, ``M`` and ``F`` with the loads and
spring-dampers) and solves it by the Schur complement. Checked against the NumPy right-hand
side off the constraint manifold (where the residuals and Baumgarte's terms matter), in
the planar and the spatial form, on trees and closed loops of every joint kind, then whole
simulations with their drift and dissipated energy; what it cannot run is named or left
to NumPy.
"""

import numpy as np
import pytest

import mbcourse as mb
from mbcourse.kernels import pack_absolute, with_base_motion
from mbcourse.kernels.absolute import absolute_rhs
from test_kernels_joints import every_kind, random_state
from test_kernels_loop_joints import _moving, every_kind_loop, rssr


def _close(got, want, tol, what=""):
    scale = 1.0 + np.abs(want).max(initial=0.0)
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale, err_msg=what)


def _kernel(model, t, y, planar, gains):
    """The kernel itself (no fallback): ``(accepted, dy)``."""
    planar = mb.cartesian.system.resolve_planar(model, planar)
    data = pack_absolute(model, planar, mb.cartesian.prepare(model).z_levels)
    assert data is not None
    dy = np.empty_like(y)
    ok = absolute_rhs(*with_base_motion(model, data, t), np.array([*gains, 1.0]),
                      np.ascontiguousarray(y), dy, np.zeros(1))
    return ok, dy


def _tree(seed):
    model = every_kind(True, seed)
    q, qd, _ = random_state(model, np.random.default_rng(seed), 1)
    return model, q[0], qd[0]


def _looped(build):
    def make():
        model, q, _ = build()
        q, qd = mb.loops.assemble(model, q, np.random.default_rng(1).normal(size=model.nv))
        return model, q, qd
    return make


def _four_bar():
    model = mb.models.four_bar()
    return (model, *mb.models.four_bar_state(model, 0.4, 1.3))


def _andrews():
    model = mb.models.andrews_squeezer()
    return (model, *mb.models.andrews_squeezer_state(model))


def _double():
    return mb.models.double_pendulum(), np.array([0.3, -0.5]), np.array([0.2, 0.7])


CASES = [("double pendulum, planar", _double, None),
         ("double pendulum, spatial", _double, False),
         ("four-bar, planar loop", _four_bar, None),
         ("Andrews' squeezer (spring)", _andrews, None),
         ("every kind, free root (screw, universal, ...)", lambda: _tree(0), None),
         ("spatial four-bar, ball joints", _looped(rssr), None),
         ("loop of every kind on a free root", _looped(lambda: every_kind_loop(True, 2)), None)]


@pytest.mark.parametrize("name, build, planar", CASES)
def test_the_kernels_right_hand_side_equals_the_numpy_one(name, build, planar):
    model, q, qd = build()
    y = mb.cartesian.to_absolute(model, q, qd, planar=planar)
    rng = np.random.default_rng(4)
    for shift in (0.0, 1e-3):                       # on and off the constraint manifold
        y_ = y + shift * rng.normal(size=y.shape)
        for gains in ((0.0, 0.0), (3.0, 5.0)):
            want = mb.cartesian.rhs(model, 0.0, y_, planar=planar, baumgarte=gains,
                                    compiled=False)
            ok, got = _kernel(model, 0.0, y_, planar, gains)
            assert ok, f"{name}: the kernel declined"
            _close(got, want, 1e-12, f"{name}: shift {shift}, Baumgarte {gains}")
            _close(mb.cartesian.rhs(model, 0.0, y_, planar=planar, baumgarte=gains), got, 0.0)


@pytest.mark.parametrize("name, build, planar", [CASES[1], CASES[4], CASES[5]])
def test_the_kernel_takes_a_prescribed_motion_of_the_base(name, build, planar):
    """The base's pose and velocity in the rows on it, its acceleration on their
    right-hand side: equal to the NumPy right-hand side at several times."""
    model, q, qd = build()
    _moving(model)
    rng = np.random.default_rng(6)
    for t in (0.3, 1.1):
        y = mb.cartesian.to_absolute(model, q, qd, t=t, planar=planar)
        y = y + 1e-3 * rng.normal(size=y.shape)
        want = mb.cartesian.rhs(model, t, y, planar=planar, compiled=False)
        ok, got = _kernel(model, t, y, planar, mb.cartesian.DEFAULT_BAUMGARTE)
        assert ok, f"{name}: the kernel declined"
        _close(got, want, 1e-12, f"{name} at t={t}")


def test_a_simulation_on_the_kernel_equals_the_numpy_one_with_its_dissipated_energy():
    """A damped spring-damper on the four-bar: the trajectory, the drift and the energy
    the damper took out, compiled against NumPy; the energy balance closes."""
    model = mb.models.four_bar()
    model.add_spring("damper", "ground", model.bodies[2].name, point_a=(0.2, 0.3, 0.0),
                     point_b=(0.0, 0.0, 0.0), stiffness=15.0, rest_length=0.1, damping=0.8)
    q, qd = mb.models.four_bar_state(model, 0.4, 1.3)
    runs = [mb.cartesian.simulate(model, (0.0, 0.5), q, qd, rtol=1e-10, atol=1e-10,
                                  t_eval=np.linspace(0.0, 0.5, 11), compiled=compiled)
            for compiled in (True, False)]
    _close(runs[0].y[-1], runs[1].y[-1], 1e-8, "state")
    _close(runs[0].position_drift, runs[1].position_drift, 1e-8, "drift")
    assert runs[0].dissipated[-1] > 1e-3
    _close(runs[0].dissipated, runs[1].dissipated, 1e-8, "dissipated energy")
    total = runs[0].energy + runs[0].dissipated
    assert np.ptp(total) < 1e-7 * (1.0 + np.abs(runs[0].energy).max())


def test_what_the_kernel_cannot_run_is_named_or_left_to_numpy():
    model, q, qd = _double()
    with pytest.raises(mb.ModelError, match="compiled right-hand side needs no tau"):
        mb.cartesian.simulate(model, (0.0, 0.1), q, qd, tau=np.ones(2), compiled=True)
    runs = [mb.cartesian.simulate(model, (0.0, 0.1), q, qd, tau=np.ones(2), compiled=c)
            for c in (None, False)]
    np.testing.assert_array_equal(runs[0].y, runs[1].y)     # tau: NumPy either way
    sprung = _double()[0]
    sprung.add_joint_spring(sprung.joints[0].name, stiffness=3.0)
    with pytest.raises(mb.ModelError, match="compiled right-hand side needs"):
        mb.cartesian.rhs(sprung, 0.0, mb.cartesian.to_absolute(sprung, q, qd), compiled=True)
    # redundant rows (the planar four-bar's spatial rows), on the manifold and drifted off
    # it: the kernel declines at every state, the NumPy route names them, or takes least
    # squares
    model = mb.models.four_bar()
    rng = np.random.default_rng(2)
    for theta in np.linspace(0.0, 2.0 * np.pi, 25):
        q, qd = mb.models.four_bar_state(model, theta, 1.3)
        y = mb.cartesian.to_absolute(model, q, qd, planar=False)
        for y_ in (y, y + 1e-6 * rng.normal(size=y.shape)):
            assert not _kernel(model, 0.0, y_, False, (0.0, 0.0))[0], theta
    with pytest.raises(mb.errors.SingularSystemError, match="redundant"):
        mb.cartesian.rhs(model, 0.0, y, planar=False)
    _close(mb.cartesian.rhs(model, 0.0, y, planar=False, redundant="lstsq"),
           mb.cartesian.rhs(model, 0.0, y, planar=False, redundant="lstsq", compiled=False),
           0.0)
    # Baraff's LDL^T on a closed loop: named by the NumPy route, not run by the kernel
    with pytest.raises(mb.errors.TopologyError, match="closed loop"):
        mb.cartesian.rhs(model, 0.0, mb.cartesian.to_absolute(model, q, qd), solver="ldlt")


def test_a_model_changed_after_a_call_never_gives_the_old_answer():
    model, q, qd = _double()
    y = mb.cartesian.to_absolute(model, q, qd)
    before = mb.cartesian.rhs(model, 0.0, y)
    model.bodies[2].mass = 3.0
    after = mb.cartesian.rhs(model, 0.0, y)
    assert np.abs(after - before).max() > 1e-3
    _close(after, mb.cartesian.rhs(model, 0.0, y, compiled=False), 1e-13)
