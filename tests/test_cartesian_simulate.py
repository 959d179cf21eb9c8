"""Simulation in absolute coordinates (mbcourse.cartesian.simulate).

* the double pendulum (planar and spatial form) conserves energy, stays on the constraint
  manifold and agrees with an independent integration in generalized coordinates
  (tests/reference.py);
* the crank-slider (a closed loop) conserves energy; Baumgarte stabilization reduces the
  drift of a loosely integrated run;
* ``project`` finds consistent states and refuses impossible ones by joint name;
* a spatial top on a spherical joint conserves energy and keeps unit quaternions;
* bad input is refused with a clear message.
"""

import numpy as np
import pytest
import scipy.integrate

import mbcourse as mb
import reference
from mbcourse.cartesian import simulate as sim_fn
from mbcourse.errors import InconsistentStateError, ModelError, ShapeError

Q0 = np.array([0.3, 0.5])  # double pendulum released at rest from here


def rel_energy_error(sim):
    E = sim.energy
    return np.abs(E - E[0]).max() / abs(E[0])


@pytest.fixture(scope="module")
def pendulum():
    return mb.models.double_pendulum()


@pytest.fixture(scope="module", params=[True, False], ids=["planar", "spatial"])
def pendulum_run(request, pendulum):
    t_eval = np.linspace(0.0, 10.0, 101)  # includes t = 1
    return sim_fn(pendulum, (0.0, 10.0), Q0, planar=request.param, t_eval=t_eval)


@pytest.fixture(scope="module")
def pendulum_reference(pendulum):
    """Generalized coordinates, Jourdain reference dynamics, t = 1 s."""
    nq = pendulum.nq

    def f(t, x):
        return np.concatenate([x[nq:], reference.forward_dynamics(pendulum, x[:nq], x[nq:])])

    sol = scipy.integrate.solve_ivp(f, (0.0, 1.0), np.concatenate([Q0, np.zeros(2)]),
                                    method="DOP853", rtol=1e-9, atol=1e-9)
    return sol.y[:nq, -1]


# ------------------------------------------------------------------ double pendulum
def test_pendulum_conserves_energy_and_constraints(pendulum_run):
    assert pendulum_run.planar == (pendulum_run.y.shape[1] == 12)
    assert rel_energy_error(pendulum_run) < 1e-6
    assert pendulum_run.constraint_drift.max() < 1e-8
    assert pendulum_run.velocity_drift.max() < 1e-7
    assert pendulum_run.r.shape == (101, 3, 3) and pendulum_run.A.shape == (101, 3, 3, 3)


def test_pendulum_matches_generalized_coordinates(pendulum_run, pendulum, pendulum_reference):
    k = int(np.argmin(np.abs(pendulum_run.t - 1.0)))
    assert pendulum_run.t[k] == pytest.approx(1.0)
    r_ref, A_ref = pendulum.body_poses(pendulum_reference)
    # measured 1.4e-10 (both forms) against the reference at rtol 1e-9
    assert np.abs(pendulum_run.r[k] - r_ref).max() < 1e-8
    assert np.abs(pendulum_run.A[k] - A_ref).max() < 1e-8


def test_to_absolute_round_trip_and_rhs(pendulum):
    q, qd = np.array([0.2, -0.4]), np.array([1.0, 2.0])
    for planar in (True, False):
        y = mb.cartesian.to_absolute(pendulum, q, qd, planar=planar)
        st = mb.cartesian.states_from_y(pendulum, y, planar=planar)
        ref = mb.cartesian.body_states(pendulum, q, qd)
        for name in ("r", "A", "v", "w"):
            assert np.allclose(getattr(st, name), getattr(ref, name), atol=1e-14)
    # rhs at a consistent state: body accelerations of the contract forward dynamics
    y = mb.cartesian.to_absolute(pendulum, q, qd, planar=False)
    dy = mb.cartesian.rhs(pendulum, 0.0, y, planar=False)
    eq, ddX, _ = mb.cartesian.solve(pendulum, q, qd, planar=False)
    assert np.allclose(dy[14:].reshape(2, 6), ddX[0], atol=1e-12)


def test_constant_joint_torque_does_work(pendulum):
    """tau enters as joint wrenches: the energy grows by the work of the torque."""
    tau = np.array([0.5, 0.0])
    sim = sim_fn(pendulum, (0.0, 1.0), Q0, tau=tau, rtol=1e-9, atol=1e-9,
                 t_eval=[0.0, 1.0])
    alpha1 = np.arctan2(sim.A[:, 1, 1, 0], sim.A[:, 1, 0, 0])
    work = tau[0] * (alpha1[-1] - alpha1[0])  # joint A turns by the absolute angle of rod 1
    assert sim.energy[-1] - sim.energy[0] == pytest.approx(work, abs=1e-7)
    # and a callable gives the same motion
    sim2 = sim_fn(pendulum, (0.0, 1.0), Q0, tau=lambda t: tau, rtol=1e-9, atol=1e-9,
                  t_eval=[0.0, 1.0])
    assert np.allclose(sim.y, sim2.y, atol=1e-12)


# ------------------------------------------------------------------ crank-slider
@pytest.fixture(scope="module")
def crank():
    model = mb.models.crank_slider()
    return model, mb.models.crank_slider_state(model, 0.3, 5.0)


def test_crank_slider_conserves_energy(crank):
    model, (q, qd) = crank
    sim = sim_fn(model, (0.0, 2.0), q, qd, t_eval=np.linspace(0.0, 2.0, 41))
    assert sim.planar and sim.initial_residual[0] < 1e-14
    assert rel_energy_error(sim) < 1e-6
    assert sim.constraint_drift.max() < 1e-8
    assert sim.velocity_drift.max() < 1e-8


def test_baumgarte_reduces_drift(crank):
    """Loose tolerance, 3 s: measured max |g| 1.1e-6 without, 7e-8 with (10, 10)."""
    model, (q, qd) = crank
    kw = dict(rtol=1e-6, atol=1e-6, t_eval=np.linspace(0.0, 3.0, 61))
    plain = sim_fn(model, (0.0, 3.0), q, qd, baumgarte=(0, 0), **kw)
    stab = sim_fn(model, (0.0, 3.0), q, qd, **kw)
    assert plain.constraint_drift.max() > 10 * stab.constraint_drift.max()
    assert plain.constraint_drift.max() > 1e-7  # the drift is real at this tolerance


# ------------------------------------------------------------------ projection
def test_project_finds_consistent_state(crank):
    model, (q, qd) = crank
    y = mb.cartesian.to_absolute(model, q, qd)
    rng = np.random.default_rng(1)
    bad = y + 1e-3 * rng.standard_normal(y.size)
    good = mb.cartesian.project(model, bad)
    eq = mb.cartesian.assemble(model, mb.cartesian.states_from_y(model, good))
    assert np.abs(eq.g).max() < 1e-12 and np.abs(eq.gdot).max() < 1e-12
    assert np.abs(good - bad)[:9].max() < 1e-2  # a nearby state
    # simulate projects a bad start and reports the residual it had
    sim = sim_fn(model, (0.0, 0.1), y0=bad, rtol=1e-9, atol=1e-9)
    assert sim.initial_residual[0] > 1e-4 and sim.constraint_drift[0] < 1e-12


def test_project_spatial_quaternion_step(pendulum):
    y = mb.cartesian.to_absolute(pendulum, [0.4, 0.3], [1.0, -1.0], planar=False)
    bad = y + 1e-3 * np.sin(np.arange(y.size))
    good = mb.cartesian.project(pendulum, bad, planar=False)
    eq = mb.cartesian.assemble(pendulum, mb.cartesian.states_from_y(pendulum, good, planar=False),
                               planar=False)
    assert np.abs(eq.g).max() < 1e-12 and np.abs(eq.gdot).max() < 1e-12
    assert np.allclose(np.linalg.norm(good[:14].reshape(2, 7)[:, 3:], axis=1), 1.0)


def test_project_refuses_impossible_linkage():
    """Two unit rods pinned to the ground 10 m apart cannot meet: no state closes the loop."""
    m = mb.Model(gravity=(0, -9.81, 0))
    for name in ("left", "right"):
        m.add_body(name, 1.0, mb.models.bar_inertia(1.0, 1.0))
    z = (0, 0, 1)
    m.add_joint("L", "revolute", "ground", "left", child_point=(-0.5, 0, 0), axis=z)
    m.add_joint("R", "revolute", "ground", "right", parent_point=(10, 0, 0),
                child_point=(-0.5, 0, 0), axis=z)
    m.add_joint("meet", "revolute", "left", "right", parent_point=(0.5, 0, 0),
                child_point=(-0.5, 0, 0), axis=z)
    y = np.zeros(12)
    y[0], y[3] = 0.5, 10.5
    with pytest.raises(InconsistentStateError, match="joint '(L|R|meet)'"):
        mb.cartesian.project(m, y)


def test_project_max_iter_reached(crank):
    model, (q, qd) = crank
    y = mb.cartesian.to_absolute(model, q, qd)
    y[:9] += 0.05
    with pytest.raises(InconsistentStateError, match="after 1 Newton iterations; joint"):
        mb.cartesian.project(model, y, max_iter=1)


# ------------------------------------------------------------------ spatial top
def test_spinning_top_energy_and_quaternion_norm():
    m = mb.Model(gravity=(0.0, 0.0, -9.81))
    m.add_body("top", 1.0, [0.02, 0.02, 0.04])
    m.add_joint("tip", "spherical", "ground", "top", child_point=(0, 0, -0.1))
    assert not mb.cartesian.is_planar(m)
    tilt = mb.spatial.matrix_to_quat(mb.spatial.axis_angle([1, 0, 0], 0.3))
    sim = sim_fn(m, (0.0, 5.0), tilt, [0.0, 0.0, 10.0], rtol=1e-10, atol=1e-10,
                 t_eval=np.linspace(0.0, 5.0, 51))
    assert rel_energy_error(sim) < 1e-6
    assert sim.constraint_drift.max() < 1e-8
    raw_quat = sim.sol.y[3:7]
    assert np.abs(np.linalg.norm(raw_quat, axis=0) - 1.0).max() < 1e-9
    # the tip stays at the origin and the top precesses (its axis leaves the yz plane)
    tip = sim.r[:, 1] + (sim.A[:, 1] @ np.array([0, 0, -0.1]))
    assert np.abs(tip).max() < 1e-8
    assert np.abs(sim.A[:, 1, 0, 2]).max() > 0.01


def test_top_joint_torque_refused():
    m = mb.Model(gravity=(0.0, 0.0, -9.81))
    m.add_body("top", 1.0, [0.02, 0.02, 0.04])
    m.add_joint("tip", "spherical", "ground", "top", child_point=(0, 0, -0.1))
    with pytest.raises(ModelError, match="spherical joint 'tip'"):
        sim_fn(m, (0.0, 0.1), [1, 0, 0, 0], [0, 0, 0], tau=[0, 0, 1.0])


# ------------------------------------------------------------------ bad input
def test_bad_input(pendulum):
    with pytest.raises(ShapeError, match=r"y0 must have shape \(12,\)"):
        sim_fn(pendulum, (0.0, 1.0), y0=np.zeros(7))
    with pytest.raises(ShapeError, match="t_span must increase"):
        sim_fn(pendulum, (1.0, 0.0), Q0)
    with pytest.raises(ShapeError, match="t_span"):
        sim_fn(pendulum, (0.0, np.nan), Q0)
    with pytest.raises(ModelError, match="non-negative"):
        sim_fn(pendulum, (0.0, 1.0), Q0, baumgarte=(-1.0, 5.0))
    with pytest.raises(ShapeError, match="baumgarte"):
        sim_fn(pendulum, (0.0, 1.0), Q0, baumgarte=5.0)
    with pytest.raises(ShapeError, match="either y0 or"):
        sim_fn(pendulum, (0.0, 1.0), Q0, y0=np.zeros(12))
    with pytest.raises(ShapeError, match="solver"):
        sim_fn(pendulum, (0.0, 1.0), Q0, solver="magic")
    with pytest.raises(ShapeError, match="tau"):
        sim_fn(pendulum, (0.0, 1.0), Q0, tau=[1.0, 2.0, 3.0])
    with pytest.raises(ShapeError, match=r"shape \(12,\)"):
        mb.cartesian.rhs(pendulum, 0.0, np.zeros(5))
