"""Coupled coordinates (mimic joints, ``q_j = a q_i + b``): the Model's independent
coordinates, every formulation on them, closed forms, simulations, force callables, the
refusals by name and bad input. The Panda's coupled fingers against Pinocchio are in
tests/test_urdf.py and tests/test_robot_files.py."""

import numpy as np
import pytest

import mbcourse as mb
from mbcourse.errors import ModelError, ShapeError

G = 9.81


def _parallelogram(offset=0.0):
    """Chapter 3's double pendulum with the elbow coupled to the shoulder, q_B = -q_A + b:
    the lower rod keeps its absolute angle b (a parallelogram linkage)."""
    m = mb.models.double_pendulum()
    m.add_mimic("B", "A", multiplier=-1.0, offset=offset)
    return m


def _closed_form(m, qA, offset):
    """q_A'' from T = (J_O + m l^2) qA'^2 / 2 and V = m g (l/2 + l) sin qA (+ const): the
    lower rod translates with the upper rod's end. Both rods 1 kg, 1 m."""
    J_O = m.body("rod1").inertia[2, 2] + 0.25
    return -1.5 * G * np.cos(qA) / (J_O + 1.0)


FORWARD = {
    "vereshchagin": mb.vereshchagin.forward_dynamics,
    "vereshchagin numpy": lambda m, q, v, t=None: mb.vereshchagin.forward_dynamics(
        m, q, v, t, compiled=False),
    "tree": mb.tree.forward_dynamics,
    "tree numpy": lambda m, q, v, t=None: mb.tree.forward_dynamics(m, q, v, t, compiled=False),
    "composite": mb.tree.forward_dynamics_composite,
    "planar tree": mb.tree.planar.forward_dynamics,
    "cartesian dense": mb.cartesian.forward_dynamics,
    "cartesian ldlt": lambda m, q, v, t=None: mb.cartesian.forward_dynamics(m, q, v, t,
                                                                            solver="ldlt"),
    "cut joints": mb.loops.forward_dynamics,
}


@pytest.mark.parametrize("offset", [0.0, 0.4])
@pytest.mark.parametrize("name", sorted(FORWARD))
def test_every_formulation_gives_the_parallelograms_closed_form(name, offset):
    m = _parallelogram(offset)
    assert (m.nq, m.nv, m.q_names) == (1, 1, ["A.angle"])
    for qA in (0.3, -1.1):
        got = FORWARD[name](m, [qA], [0.0])
        assert got.shape == (1,)
        assert got[0] == pytest.approx(_closed_form(m, qA, offset), abs=1e-12)


def test_the_map_fills_in_the_mimic_joints_coordinate_speed_and_force():
    m = _parallelogram(0.4)
    c = m.coupling
    np.testing.assert_allclose(c.q([[0.3], [0.5]]), [[0.3, 0.1], [0.5, -0.1]], atol=1e-16)
    np.testing.assert_array_equal(c.qd([2.0]), [2.0, -2.0])
    np.testing.assert_array_equal(c.G, [[1.0], [-1.0]])
    np.testing.assert_array_equal(c.C, [[1.0, 1.0]])
    assert c.reduce_force([3.0, 1.0]).tolist() == [2.0]     # G^T tau_f
    np.testing.assert_array_equal(m.neutral_q(), [0.0])
    assert m.q_from_dict({"A.angle": 0.2}).tolist() == [0.2]


def test_batches_equal_single_calls_and_the_rates_follow_the_coupling():
    m = mb.urdf.robot("panda")
    rng = np.random.default_rng(0)
    Q, V, T = (rng.normal(size=(4, 3, 8)) for _ in range(3))
    for fd in (mb.vereshchagin.forward_dynamics, mb.tree.forward_dynamics,
               mb.cartesian.forward_dynamics):
        batch = fd(m, Q, V, T)
        assert batch.shape == (4, 3, 8)
        one = np.array([[fd(m, q, v, t) for q, v, t in zip(*x)] for x in zip(Q, V, T)])
        np.testing.assert_allclose(batch, one, rtol=0, atol=1e-11 * np.abs(one).max())
    # the full accelerations keep C qdd = 0: the mimic finger's equals its primary's
    c = m.coupling
    full = c.qd(mb.vereshchagin.forward_dynamics(m, Q[0, 0], V[0, 0], T[0, 0]), "qdd")
    assert full[8] == full[7]


def test_a_change_of_the_model_after_a_call_is_seen():
    m = _parallelogram()
    before = mb.vereshchagin.forward_dynamics(m, [0.3], [0.0])[0]
    m.body("rod2").mass = 3.0        # the translating rod: T = (J_O + 3) qA'^2/2, V: 3.5 m g sin
    J_O = m.body("rod1").inertia[2, 2] + 0.25
    after = mb.vereshchagin.forward_dynamics(m, [0.3], [0.0])[0]
    assert after != before
    assert after == pytest.approx(-G * np.cos(0.3) * (0.5 + 3.0) / (J_O + 3.0), abs=1e-12)
    m.add_mimic  # the coupling itself is part of the model: a copy keeps it
    assert m.copy().mimics == m.mimics and m.uncoupled().nq == 2


def test_a_simulation_keeps_the_coupling_and_the_energy():
    m = mb.urdf.robot("panda")
    q0 = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8, 0.03])
    res = mb.tree.simulate(m, (0.0, 0.5), q0, rtol=1e-10, atol=1e-10,
                           t_eval=np.linspace(0, 0.5, 11))
    assert res.q.shape == (11, 8) and res.qd.shape == (11, 8)
    assert np.ptp(res.energy) < 1e-7
    np.testing.assert_allclose(res.q[0], q0)
    # against the uncoupled model driven along the same motion: the same accelerations
    c = m.coupling
    free = m.uncoupled()
    for q, v in zip(res.q[::5], res.qd[::5]):
        qdd = mb.tree.forward_dynamics(m, q, v)
        A = mb.tree.mass_matrix(free, c.q(q))
        B = mb.tree.bias_forces(free, c.q(q), c.qd(v))
        np.testing.assert_allclose(c.G.T @ A @ c.G @ qdd, c.G.T @ B, atol=1e-9)


def test_force_callables_see_the_independent_coordinates():
    m = _parallelogram()
    seen = []

    def law(t, q, qd):
        seen.append(np.shape(q))
        return -2.0 * np.asarray(q)                 # a torsion spring on the coordinate

    m.add_generalized_force(law, name="law")
    m.add_force("rod2", force=lambda t, q, qd: [0.0, 1.0 + 0.0 * q[0], 0.0])
    J_O = m.body("rod1").inertia[2, 2] + 0.25
    got = mb.vereshchagin.forward_dynamics(m, [0.3], [0.0])[0]
    # the upward 1 N on rod 2 (which translates with the upper rod's end) adds cos(qA) N m
    expected = (-1.5 * G * np.cos(0.3) - 2.0 * 0.3 + np.cos(0.3)) / (J_O + 1.0)
    assert got == pytest.approx(expected, abs=1e-12)
    assert set(seen) == {(1,)}
    res = mb.sim.simulate(m, mb.vereshchagin.forward_dynamics, (0.0, 0.2), [0.3],
                          tau=lambda t, q, qd: np.array([0.5 * q[0]]), rtol=1e-10, atol=1e-10)
    assert res.q.shape[1] == 1


def test_ivanov_momenta_and_velocities_in_the_independent_coordinates():
    m = mb.urdf.robot("panda")
    rng = np.random.default_rng(2)
    q, v = rng.normal(size=8), rng.normal(size=8)
    p, _ = mb.poisson.momenta(m, q, v)
    np.testing.assert_allclose(p, mb.tree.mass_matrix(m, q) @ v, atol=1e-12)
    np.testing.assert_allclose(mb.poisson.velocities(m, q, p), v, atol=1e-10)


@pytest.mark.parametrize("call, name", [
    (lambda m: mb.loops.simulate(m, (0, 0.1), [0.1]), "mb.loops.simulate"),
    (lambda m: mb.cartesian.simulate(m, (0, 0.1), [0.1]), "mb.cartesian.simulate"),
    (lambda m: mb.vereshchagin.articulated(m, [0.1], [0.0]), "mb.vereshchagin.articulated"),
    (lambda m: mb.symbolic.derive(m), "mb.symbolic.derive"),
])
def test_functions_without_coupled_coordinates_refuse_by_name(call, name):
    m = _parallelogram()
    with pytest.raises(ModelError, match=rf"{name} works on the joints' own coordinates.*"
                                         r"'B' = -1 \* 'A' \+ 0.*model\.uncoupled\(\)"):
        call(m)


def test_bad_couplings_and_bad_input_are_named():
    m = mb.models.double_pendulum()
    with pytest.raises(ModelError, match=r"unknown joint 'C'"):
        m.add_mimic("C", "A")
    with pytest.raises(ModelError, match=r"cannot mimic itself"):
        m.add_mimic("A", "A")
    with pytest.raises(ModelError, match=r"multiplier of 'B' must be a finite number"):
        m.add_mimic("B", "A", multiplier=np.nan)
    with pytest.raises(ModelError, match=r"offset of 'B' must be a finite number"):
        m.add_mimic("B", "A", offset="1")
    m.add_mimic("B", "A")
    with pytest.raises(ModelError, match=r"'B' already mimics 'A'"):
        m.add_mimic("B", "A")
    with pytest.raises(ModelError, match=r"primary 'B' is itself a mimic joint"):
        m.add_mimic("A", "B")
    with pytest.raises(ShapeError, match=r"q has 2 entries, the joints' own coordinates.*"
                                         r"1 independent ones \(A\.angle\)"):
        mb.tree.forward_dynamics(m, [0.1, 0.2], [0.0])
    with pytest.raises(ShapeError, match=r"qd\[0\] \(A\.angle\) is nan"):
        mb.vereshchagin.forward_dynamics(m, [0.1], [np.nan])
    ball = mb.Model()
    ball.add_body("a", 1.0, [1, 1, 1])
    ball.add_body("b", 1.0, [1, 1, 1])
    ball.add_joint("s", "spherical", "ground", "a")
    ball.add_joint("h", "revolute", "a", "b", axis=(0, 0, 1))
    with pytest.raises(ModelError, match=r"primary 's' is a spherical joint with 3 speeds"):
        ball.add_mimic("h", "s")


def test_the_summary_names_the_coupling():
    text = str(_parallelogram(0.4))
    assert "nq=1, nv=1" in text
    assert "B     revolute  rod1    rod2   -  -  angle = -1 A + 0.4 (mimic)" in text


def test_a_trajectorys_ode_result_is_in_the_independent_coordinates():
    m = _parallelogram(0.2)
    m.add_joint_spring("A", stiffness=3.0, damping=0.5)
    res = mb.sim.simulate(m, mb.vereshchagin.forward_dynamics, (0.0, 0.5), [0.3], [0.1],
                          dense_output=True, rtol=1e-10, atol=1e-10)
    assert res.sol.y.shape == (3, len(res.t))            # q, qd and the dissipated energy
    np.testing.assert_array_equal(res.sol.y[0], res.q[:, 0])
    np.testing.assert_array_equal(res.sol.y[1], res.qd[:, 0])
    assert res.sol.sol(0.25).shape == (3,)
    np.testing.assert_allclose(res.sol.sol(res.t[-1])[:2], [res.q[-1, 0], res.qd[-1, 0]],
                               atol=1e-12)
    full = res.sol.full.y                                # as integrated: q_A, q_B, speeds, E
    assert full.shape == (5, len(res.t))
    np.testing.assert_allclose(full[1], -full[0] + 0.2, atol=1e-13)


def test_a_coupling_and_the_uncoupled_working_copy_cannot_be_edited_behind_the_models_back():
    m = _parallelogram()
    mimic = m.mimics[0]
    before = mb.vereshchagin.forward_dynamics(m, [0.3], [0.0])
    with pytest.raises(ModelError, match=r"a coupling is fixed once added"):
        mimic.multiplier = 2.0
    m.coupling.full.body("rod2").mass = 10.0              # the working copy, not the model
    np.testing.assert_array_equal(mb.vereshchagin.forward_dynamics(m, [0.3], [0.0]), before)
    assert m.coupling.full.body("rod2").mass == 1.0


def test_uncoupling_and_coupling_again_keeps_the_force_laws_consistent():
    m = mb.models.double_pendulum()
    m.add_mimic("B", "A", multiplier=-2.0, offset=0.1)
    m.add_generalized_force(lambda t, q, qd: -3.0 * q - 0.5 * qd, name="law")
    u = m.uncoupled()                                    # the law reads the independent q
    np.testing.assert_allclose(u.generalized_forces([0.3, -0.5], [0.2, -0.4]), [-1.0, 0.0])
    u.add_mimic("B", "A", multiplier=-2.0, offset=0.1)
    np.testing.assert_allclose(mb.tree.forward_dynamics(u, [0.3], [0.2]),
                               mb.tree.forward_dynamics(m, [0.3], [0.2]), atol=1e-13)


def test_batch_shapes_functions_and_callbacks_are_checked_in_the_models_terms():
    m = mb.urdf.robot("panda")
    q, v = np.zeros((3, 8)), np.zeros((2, 8))
    for call in (lambda: mb.vereshchagin.forward_dynamics(m, q, v),
                 lambda: mb.tree.forward_dynamics(m, q, v, compiled=False),
                 lambda: m.kinetic_energy(q, v)):
        with pytest.raises(ShapeError, match=r"batch shapes do not match"):
            call()
    with pytest.raises(ShapeError, match=r"forward_dynamics function second"):
        mb.sim.simulate(m, "tree", (0, 0.1), np.zeros(8))
    with pytest.raises(ShapeError, match=r"independent coordinates, an array of shape \(8,\)"):
        mb.sim.simulate(m, mb.tree.forward_dynamics, (0, 0.1), np.zeros(8),
                        tau=lambda t, q, qd: np.zeros((1, 8)))


def test_a_students_one_state_formulation_runs_a_coupled_simulation():
    m = _parallelogram()

    def mine(model, q, qd, tau=None, *, t=0.0):          # one state only, as written in class
        A = mb.tree.mass_matrix(model, q)
        return np.linalg.solve(A, mb.tree.bias_forces(model, q, qd)
                               + (0.0 if tau is None else tau))

    ours = mb.sim.simulate(m, mine, (0.0, 0.3), [0.3], rtol=1e-10, atol=1e-10)
    lib = mb.sim.simulate(m, mb.tree.forward_dynamics, (0.0, 0.3), [0.3], rtol=1e-10,
                          atol=1e-10)
    np.testing.assert_allclose(ours.q[-1], lib.q[-1], atol=1e-9)


def test_a_massless_mimic_link_names_the_reduced_route():
    m = mb.models.double_pendulum()
    m.body("rod2").mass = 0.0
    m.body("rod2").inertia = np.zeros((3, 3))
    m.add_mimic("B", "A", multiplier=2.0)
    assert np.linalg.eigvalsh(mb.tree.mass_matrix(m, [0.3]))[0] > 0.1   # regular when coupled
    with pytest.raises(mb.errors.SingularSystemError,
                       match=r"couplings \('B' = 2 \* 'A' \+ 0\) are kept by multipliers.*"
                             r"G\^T A G q'' = G\^T \(B \+ tau\)"):
        mb.vereshchagin.forward_dynamics(m, [0.3], [0.0])


def test_applied_wrenches_without_a_configuration_is_a_named_error():
    for m in (mb.models.double_pendulum(), _parallelogram()):
        with pytest.raises(ShapeError, match=r"applied_wrenches needs the configuration q"):
            m.applied_wrenches()
        F, M = m.applied_wrenches([0.3] * m.nq)
        assert F.shape == (3, 3) and F[1, 1] == pytest.approx(-G)


def test_an_extra_positional_argument_is_refused_as_without_a_coupling():
    m = _parallelogram()
    with pytest.raises(ShapeError, match=r"too many positional arguments"):
        mb.vereshchagin.forward_dynamics(m, [0.3], [0.0], [0.0], 5.0)
