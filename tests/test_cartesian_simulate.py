"""Simulation in absolute coordinates (mbcourse.cartesian.simulate).

* the double pendulum (planar and spatial form) conserves energy, stays on the constraint
  manifold and agrees with an independent integration in generalized coordinates
  (tests/reference.py);
* the crank-slider (a closed loop) conserves energy; Baumgarte stabilization reduces the
  drift of a loosely integrated run;
* ``project`` finds consistent states and refuses impossible ones by joint name;
* a spatial top on a spherical joint conserves energy and keeps unit quaternions;
* Simulation.q, qd (generalized coordinates recovered from the body states) start at
  q0, qd0, keep turn counts and equal an integration in generalized coordinates, also with
  torque laws tau(t, q, qd) and spring-dampers (energy with springs, dissipation of dampers);
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
    assert pendulum_run.position_drift.max() < 1e-8
    assert pendulum_run.velocity_drift.max() < 1e-7
    assert pendulum_run.r.shape == (101, 3, 3) and pendulum_run.A.shape == (101, 3, 3, 3)


def test_pendulum_matches_generalized_coordinates(pendulum_run, pendulum, pendulum_reference):
    k = int(np.argmin(np.abs(pendulum_run.t - 1.0)))
    assert pendulum_run.t[k] == pytest.approx(1.0)
    r_ref, A_ref = pendulum.body_poses(pendulum_reference)
    # measured 1.4e-10 (both forms) against the reference at rtol 1e-9
    assert np.abs(pendulum_run.r[k] - r_ref).max() < 1e-8
    assert np.abs(pendulum_run.A[k] - A_ref).max() < 1e-8


def test_generalized_coordinates_of_the_run(pendulum_run, pendulum, pendulum_reference):
    """Simulation.q, qd: the initial state at t0, the reference at t = 1, body extras under
    their own names."""
    assert pendulum_run.q.shape == (101, 2) and pendulum_run.qd.shape == (101, 2)
    np.testing.assert_allclose(pendulum_run.q[0], Q0, atol=1e-14)
    np.testing.assert_allclose(pendulum_run.qd[0], 0.0, atol=1e-14)
    k = int(np.argmin(np.abs(pendulum_run.t - 1.0)))
    assert np.abs(pendulum_run.q[k] - pendulum_reference).max() < 1e-8
    assert pendulum_run.body_v.shape == (101, 3, 3) and pendulum_run.body_w.shape == (101, 3, 3)
    vel, omega = pendulum.body_velocities(pendulum_run.q[k], pendulum_run.qd[k])
    assert np.abs(pendulum_run.body_v[k] - vel).max() < 1e-8  # the drift


def test_turn_counts_are_kept(pendulum):
    """A pendulum started at 7 rad and spun fast: q starts at 7 and never jumps by 2 pi."""
    q0, qd0 = np.array([7.0, -0.4]), np.array([9.0, 0.0])
    sim = sim_fn(pendulum, (0.0, 2.0), q0, qd0, rtol=1e-9, atol=1e-9,
                 t_eval=np.linspace(0.0, 2.0, 21))
    np.testing.assert_allclose(sim.q[0], q0, atol=1e-14)
    np.testing.assert_allclose(sim.qd[0], qd0, atol=1e-13)
    steps = np.abs(np.diff(sim.q, axis=0)).max(axis=0)
    assert steps.max() < 2.0 and np.ptp(sim.q[:, 0]) > 2 * np.pi  # it does turn


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
    ddX = mb.cartesian.solve(pendulum, q, qd, planar=False).ddX
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
    sim2 = sim_fn(pendulum, (0.0, 1.0), Q0, tau=lambda t, q, qd: tau, rtol=1e-9, atol=1e-9,
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
    assert sim.position_drift.max() < 1e-8
    assert sim.velocity_drift.max() < 1e-8


def test_baumgarte_reduces_drift(crank):
    """Loose tolerance, 3 s: measured max |g| 1.1e-6 without, 7e-8 with (10, 10)."""
    model, (q, qd) = crank
    kw = dict(rtol=1e-6, atol=1e-6, t_eval=np.linspace(0.0, 3.0, 61))
    plain = sim_fn(model, (0.0, 3.0), q, qd, baumgarte=(0, 0), **kw)
    stab = sim_fn(model, (0.0, 3.0), q, qd, **kw)
    assert plain.position_drift.max() > 10 * stab.position_drift.max()
    assert plain.position_drift.max() > 1e-7  # the drift is real at this tolerance


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
    assert sim.initial_residual[0] > 1e-4 and sim.position_drift[0] < 1e-12


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
    assert sim.position_drift.max() < 1e-8
    raw_quat = sim.sol.y[3:7]
    assert np.abs(np.linalg.norm(raw_quat, axis=0) - 1.0).max() < 1e-9
    # the tip stays at the origin and the top precesses (its axis leaves the yz plane)
    tip = sim.r[:, 1] + (sim.A[:, 1] @ np.array([0, 0, -0.1]))
    assert np.abs(tip).max() < 1e-8
    assert np.abs(sim.A[:, 1, 0, 2]).max() > 0.01


def generalized_run(model, t_span, q0, qd0, tau, t_eval):
    """Independent integration in generalized coordinates with the reference dynamics."""
    nq = model.nq

    def f(t, x):
        q = model.normalize_q(x[:nq])
        qd = x[nq:]
        return np.concatenate([model.qdot(q, qd),
                               reference.forward_dynamics(model, q, qd, tau(t, q, qd), t=t)])

    sol = scipy.integrate.solve_ivp(f, t_span, np.concatenate([q0, qd0]), method="DOP853",
                                    rtol=1e-10, atol=1e-10, t_eval=t_eval)
    return model.normalize_q(sol.y[:nq].T), sol.y[nq:].T


def test_top_joint_torque_of_the_state():
    """A torque law tau(t, q, qd) on a spherical joint (its axes depend on q): the
    absolute-coordinate run equals the generalized-coordinate one."""
    m = mb.Model(gravity=(0.0, 0.0, -9.81))
    m.add_body("top", 1.0, [0.02, 0.02, 0.04])
    m.add_joint("tip", "spherical", "ground", "top", child_point=(0, 0, -0.1))
    q0 = mb.spatial.matrix_to_quat(mb.spatial.axis_angle([1, 0, 0], 0.3))
    qd0 = np.array([0.0, 0.5, 10.0])

    def tau(t, q, qd):
        return np.array([0.05 * q[1], -0.02 * qd[0], 0.1 * np.sin(3 * t)])

    t_eval = np.linspace(0.0, 1.0, 11)
    sim = sim_fn(m, (0.0, 1.0), q0, qd0, tau=tau, t_eval=t_eval)
    q_ref, qd_ref = generalized_run(m, (0.0, 1.0), q0, qd0, tau, t_eval)
    assert np.abs(sim.q - q_ref).max() < 1e-8  # same quaternion sign all along
    assert np.abs(sim.qd - qd_ref).max() < 1e-7


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


# ------------------------------------------------------------------ force elements
def sprung_pendulum(damping=0.0):
    m = mb.models.double_pendulum()
    m.add_spring("k", "ground", "rod2", point_a=(1.5, 1.0, 0.0), point_b=(0.4, 0.0, 0.0),
                 stiffness=25.0, rest_length=0.5, damping=damping)
    m.add_joint_spring("B", stiffness=4.0, rest=0.3, damping=0.5 * damping)
    return m


@pytest.mark.parametrize("planar", [True, False], ids=["planar", "spatial"])
def test_springs_conserve_energy(planar):
    """Undamped spring and joint spring: E = T + gravity + spring energies is conserved to
    1e-8 relative over 5 s (planar; the spatial form, 4x slower, over 2 s); the joint spring
    wound beyond a full turn."""
    m = sprung_pendulum()
    q0, qd0 = np.array([0.3, 7.0]), np.array([0.0, 1.0])
    t1 = 5.0 if planar else 2.0
    sim = sim_fn(m, (0.0, t1), q0, qd0, planar=planar, t_eval=np.linspace(0.0, t1, 51))
    assert sim.planar == planar
    E = sim.energy
    assert np.abs(E - E[0]).max() < 1e-8 * np.abs(E).max()
    # the monitor is the Model's energy at the recovered coordinates
    expected = m.kinetic_energy(sim.q, sim.qd) + m.potential_energy(sim.q)
    np.testing.assert_allclose(E, expected, atol=1e-8 * np.abs(E).max())
    np.testing.assert_allclose(sim.q[0], q0, atol=1e-14)


def test_damper_dissipates_its_power():
    """E(t) - E(0) = integral of the dampers' power (Model.damping_power), which is < 0
    (Simpson's rule on 1201 points; measured 6e-7 relative, 4e-8 on 2401 points)."""
    m = sprung_pendulum(damping=0.8)
    t_eval = np.linspace(0.0, 3.0, 1201)
    sim = sim_fn(m, (0.0, 3.0), [0.3, 0.5], [2.0, 0.0], t_eval=t_eval)
    power = m.damping_power(sim.q, sim.qd)
    assert power.max() <= 0 and power.min() < -0.1
    dissipated = scipy.integrate.cumulative_simpson(power, x=sim.t, initial=0.0)
    assert np.abs(sim.energy - sim.energy[0] - dissipated).max() < 1e-5 * np.abs(dissipated).max()


def test_control_law_matches_generalized_integration(pendulum):
    """tau(t, q, qd) (a PD law to a moving target) acts as in generalized coordinates."""
    def tau(t, q, qd):
        return -np.array([20.0, 10.0]) * (q - [np.sin(t), 0.5]) - 2.0 * qd

    t_eval = np.linspace(0.0, 1.0, 11)
    sim = sim_fn(pendulum, (0.0, 1.0), Q0, tau=tau, t_eval=t_eval)
    q_ref, qd_ref = generalized_run(pendulum, (0.0, 1.0), Q0, np.zeros(2), tau, t_eval)
    assert np.abs(sim.q - q_ref).max() < 1e-8
    assert np.abs(sim.qd - qd_ref).max() < 1e-7
    with pytest.raises(ShapeError, match=r"tau\(t, q, qd\) must return .*shape \(2,\)"):
        sim_fn(pendulum, (0.0, 1.0), Q0, tau=lambda t, q, qd: np.zeros(3))
    with pytest.raises(ShapeError, match=r"callable tau\(t, q, qd\)"):  # the old tau(t)
        sim_fn(pendulum, (0.0, 1.0), Q0, tau=lambda t: np.zeros(2))


def test_consistent_state_for_a_loop(crank):
    """The generalized state of a crank-slider whose slider does not follow the crank is
    refused, with advice; consistent_state gives the nearest consistent one."""
    model, (q, qd) = crank
    bad = q + np.array([0.0, 0.0, 0.0, 0.02])
    with pytest.raises(InconsistentStateError, match="consistent_state"):
        mb.cartesian.forward_dynamics(model, bad, qd)
    q2, qd2 = mb.cartesian.consistent_state(model, bad, qd)
    mb.cartesian.forward_dynamics(model, q2, qd2)  # accepted
    assert np.abs(q2 - q).max() < 0.05
    sim = sim_fn(model, (0.0, 0.2), q2, qd2, rtol=1e-9, atol=1e-9)
    assert sim.initial_residual[0] < 1e-12
    np.testing.assert_allclose(sim.q[0], q2, atol=1e-12)
    np.testing.assert_allclose(sim.qd[0], qd2, atol=1e-12)


def test_baumgarte_study_script_runs():
    """benchmarks/baumgarte_study.py (the measurement behind DEFAULT_BAUMGARTE) on 0.2 s."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "baumgarte_study.py"
    spec = importlib.util.spec_from_file_location("baumgarte_study", path)
    study = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(study)
    rows = study.baumgarte_study(gains=[(10, 10)], t_end=0.2)
    assert [(r["system"], r["drift"] < 1e-8) for r in rows] == [("pendulum", True),
                                                                 ("crank-slider", True)]
    assert "crank-slider" in study.table(rows)
