"""Chapter 5: Telegin's split (formulas (1)-(17)), the numeric variant against the symbolic
one, and mbcourse.symbolic against the numeric formulations."""

import numpy as np
import pytest
import sympy as sp

import mbcourse as mb
from mbcourse.inertial import decompose, decompose_numeric, forming_bodies, powers
from test_cartesian import random_state, random_tree
import reference


def check_identities(H, q, qd):
    d = decompose(H, q, qd, simplify=False)
    v = sp.Matrix(qd)
    Hdot = H.applyfunc(lambda e: sum(sp.diff(e, a) * b for a, b in zip(q, qd)))
    T = (v.T * H * v)[0] / 2
    h = Hdot * v - sp.Matrix([sp.diff(T, a) for a in q])
    assert sp.simplify(d.total - h) == sp.zeros(len(q), 1)  # (1): the split is complete
    assert sp.simplify((d.gyroscopic.T * v)[0]) == 0  # no work
    assert sp.simplify(((d.centrifugal + d.coriolis).T * v)[0] - (v.T * Hdot * v)[0] / 2) == 0
    return d


def test_random_symmetric_mass_matrix():
    """Fact 22 for a generic symmetric H(q) of size 3."""
    q = sp.symbols("q1:4")
    qd = sp.symbols("dq1:4")
    rng = np.random.default_rng(0)
    terms = [sp.sin(q[0]), sp.cos(q[1]), q[2] ** 2, sp.cos(q[0] - q[2]), q[1] * q[2]]
    H = sp.zeros(3, 3)
    for i in range(3):
        for j in range(i, 3):
            e = int(rng.integers(1, 5)) + sum(int(rng.integers(-2, 3)) * t for t in terms)
            H[i, j] = H[j, i] = e
    check_identities(H, q, qd)


def test_example_1_polar_arm():
    q1, q2, dq1, dq2, m2, I = sp.symbols("q1 q2 dq1 dq2 m2 I")
    d = check_identities(sp.Matrix([[I + m2 * q2**2, 0], [0, m2]]), [q1, q2], [dq1, dq2])
    assert d.centrifugal == sp.zeros(2, 1)
    assert sp.simplify(d.coriolis - sp.Matrix([m2 * q2 * dq1 * dq2, 0])) == sp.zeros(2, 1)
    assert sp.simplify(d.gyroscopic - sp.Matrix([m2 * q2 * dq1 * dq2, -m2 * q2 * dq1**2])) == \
        sp.zeros(2, 1)


def test_example_2_cartesian_arm():
    q = sp.symbols("q1:4")
    qd = sp.symbols("dq1:4")
    m1, m2, I3, a3 = sp.symbols("m1 m2 I3 a3")
    c3, s3 = sp.cos(q[2]), sp.sin(q[2])
    H = sp.Matrix([[m1, 0, a3 * c3], [0, m2, -a3 * s3], [a3 * c3, -a3 * s3, I3]])
    d = check_identities(H, q, qd)
    assert d.gyroscopic == sp.zeros(3, 1) or sp.simplify(d.gyroscopic) == sp.zeros(3, 1)
    assert sp.simplify(d.centrifugal - sp.Matrix([-a3 * s3 * qd[2] ** 2, -a3 * c3 * qd[2] ** 2, 0])) \
        == sp.zeros(3, 1)


def test_example_6_universal_arm_and_erratum_E23_E24():
    q = sp.symbols("q1:7")
    dq = sp.symbols("dq1:7")
    m1, m2, m4, H55, I6, a, A, B = sp.symbols("m1 m2 m4 H55 I6 a A B")
    c3, s3, c5, s5 = sp.cos(q[2]), sp.sin(q[2]), sp.cos(q[4]), sp.sin(q[4])
    H = sp.zeros(6, 6)
    H[0, 0], H[1, 1], H[3, 3], H[4, 4], H[5, 5] = m1, m2, m4, H55, I6
    H[2, 0], H[2, 1], H[2, 2] = -a * c3 * s5, -a * s3 * s5, A - B * c5**2
    H[4, 0], H[4, 1], H[4, 3] = -a * s3 * c5, a * c3 * c5, -a * s5
    H[5, 2] = I6 * c5
    H = sp.Matrix(6, 6, lambda i, j: H[max(i, j), min(i, j)])
    d = check_identities(H, q, dq)
    assert sp.simplify(d.gyroscopic[2] - B * s5 * c5 * dq[2] * dq[4]) == 0  # E24
    assert sp.simplify(d.gyroscopic[4] - (I6 * dq[5] - B * c5 * dq[2]) * s5 * dq[2]) == 0
    assert sp.simplify(d.gyroscopic[5] + I6 * s5 * dq[2] * dq[4]) == 0
    # E23: h_o1 = -2 a c3 c5 dq3 dq5, while h^g_o1 = 1/2 dq1 dH11 = 0
    assert sp.simplify(d.coriolis[0] + 2 * a * c3 * c5 * dq[2] * dq[4]) == 0
    assert sp.simplify(d.centrifugal[0] - a * s3 * s5 * (dq[2] ** 2 + dq[4] ** 2)) == 0


def planar_arm():
    """A planar revolute-prismatic-revolute arm (Telegin-like, with gravity)."""
    m = mb.Model(gravity=(0, -9.81, 0))
    m.add_body("base_link", 2.0, mb.models.bar_inertia(2.0, 0.5))
    m.add_body("slider", 1.0, mb.models.bar_inertia(1.0, 0.3))
    m.add_body("tool", 0.5, mb.models.bar_inertia(0.5, 0.2))
    m.add_joint("q1", "revolute", "ground", "base_link", child_point=(-0.25, 0, 0), axis=(0, 0, 1))
    m.add_joint("q2", "prismatic", "base_link", "slider", parent_point=(0.25, 0, 0),
                axis=(1, 0, 0))
    m.add_joint("q3", "revolute", "slider", "tool", parent_point=(0.15, 0, 0),
                child_point=(-0.1, 0, 0), axis=(0, 0, 1))
    return m


def test_symbolic_model_matches_numeric_formulations():
    model = planar_arm()
    s = mb.symbolic.derive(model)
    fns = mb.symbolic.lambdify(s)
    rng = np.random.default_rng(1)
    for _ in range(4):
        q, qd = rng.normal(size=3), rng.normal(size=3)
        np.testing.assert_allclose(fns.mass_matrix(q), mb.tree.mass_matrix(model, q), atol=1e-12)
        np.testing.assert_allclose(fns.forward_dynamics(q, qd),
                                   mb.vereshchagin.forward_dynamics(model, q, qd), atol=1e-10)
    # the numeric split equals the symbolic one at random states
    d = decompose(s.H, s.q, s.qd, simplify=False)
    parts = [sp.lambdify([s.q, s.qd], x, "numpy") for x in (d.centrifugal, d.coriolis,
                                                            d.gyroscopic)]
    for _ in range(3):
        q, qd = rng.normal(size=3), rng.normal(size=3)
        dn = decompose_numeric(model, q, qd)
        for f, got in zip(parts, (dn.centrifugal, dn.coriolis, dn.gyroscopic)):
            np.testing.assert_allclose(got, np.ravel(f(q, qd)).astype(float), atol=1e-9)
        pc, po, pg = powers(dn, qd)
        assert abs(pg) < 1e-9
        assert pc + po == pytest.approx(0.5 * qd @ (dn.H_dot @ qd), abs=1e-9)


@pytest.mark.parametrize("seed", range(2))
def test_symbolic_mass_matrix_random_spatial_trees(seed):
    """Random axes and points become large exact rationals: keep these trees small."""
    rng = np.random.default_rng(seed)
    model = random_tree(rng, [("revolute", "prismatic"), ("prismatic", "revolute")][seed])
    H, q = mb.symbolic.mass_matrix(model, simplify=False)
    f = sp.lambdify([q], H, "numpy")
    for _ in range(3):
        qv, _ = random_state(model, rng)
        np.testing.assert_allclose(np.array(f(qv), dtype=float), mb.tree.mass_matrix(model, qv),
                                   atol=1e-10)


def test_forming_bodies_and_bad_input():
    model = mb.Model()
    for name in "abcd":
        model.add_body(name, 1.0, np.eye(3))
    model.add_joint("ja", "revolute", "ground", "a", axis=(0, 0, 1))
    model.add_joint("jb", "revolute", "a", "b", axis=(0, 0, 1), parent_point=(1, 0, 0))
    model.add_joint("jc", "revolute", "b", "c", axis=(0, 0, 1), parent_point=(1, 0, 0))
    model.add_joint("jd", "revolute", "a", "d", axis=(0, 1, 0), parent_point=(0, 1, 0))
    assert forming_bodies(model, 1) == {"carrying": ["ja"], "carried": ["jc"]}
    assert forming_bodies(model, 0) == {"carrying": [], "carried": ["jb", "jc", "jd"]}
    with pytest.raises(mb.ShapeError):
        forming_bodies(model, 7)
    with pytest.raises(mb.ModelError, match="nq == nv"):
        decompose_numeric(mb.models.floating_spacecraft(), np.r_[np.zeros(3), 1, 0, 0, 0, 0, 0],
                          np.zeros(8))
    with pytest.raises(mb.ShapeError, match="symmetric"):
        x = sp.symbols("x")
        decompose(sp.Matrix([[1, x], [0, 1]]), [x, sp.Symbol("y")], sp.symbols("a b"))
    with pytest.raises(mb.ModelError, match="unknown parameter"):
        mb.symbolic.derive(planar_arm(), parameters={"tool.length": 1})


def test_tree_and_chain_forms_equal_the_general_split():
    """Fact 23: (7)-(10) and (12)-(17) equal (2)-(5) term by term for tree-structured H,
    and the chain identities (17) hold."""
    for model in (mb.models.triple_pendulum(), planar_arm()):
        s = mb.symbolic.derive(model)
        general = decompose(s.H, s.q, s.qd)
        ends = mb.inertial.subsystem_ends(model)
        tree = mb.inertial.decompose_tree(s.H, s.q, s.qd, ends)
        for a, b in [(general.centrifugal, tree.centrifugal), (general.coriolis, tree.coriolis),
                     (general.gyroscopic, tree.gyroscopic)]:
            assert sp.simplify(a - b) == sp.zeros(len(s.q), 1)
        N = len(s.q)
        assert sp.simplify(general.centrifugal[N - 1]) == 0 and sp.simplify(general.coriolis[N - 1]) == 0
        assert sp.simplify(general.dT_dq[0]) == 0  # (17): dT/dq_1 = 0 for a chain
        assert sp.simplify(general.gyroscopic[0] - tree.coriolis_gyroscopic[0]) == 0


def test_tree_form_on_a_branched_tree():
    model = mb.Model()
    for name in "abc":
        model.add_body(name, 1.0, np.diag([0.1, 0.2, 0.25]))
    model.add_joint("ja", "revolute", "ground", "a", child_point=(-0.5, 0, 0), axis=(0, 0, 1))
    model.add_joint("jb", "revolute", "a", "b", parent_point=(0.5, 0, 0), child_point=(-0.3, 0, 0),
                    axis=(0, 1, 0))
    model.add_joint("jc", "prismatic", "a", "c", parent_point=(0, 0.2, 0), axis=(1, 0, 0))
    assert mb.inertial.subsystem_ends(model) == [2, 1, 2]
    s = mb.symbolic.derive(model)
    general = decompose(s.H, s.q, s.qd)
    tree = mb.inertial.decompose_tree(s.H, s.q, s.qd, [2, 1, 2])
    assert sp.simplify(general.total - tree.total) == sp.zeros(3, 1)
    assert sp.simplify(general.gyroscopic - tree.gyroscopic) == sp.zeros(3, 1)
    with pytest.raises(mb.ShapeError, match="ends must give"):
        mb.inertial.decompose_tree(s.H, s.q, s.qd, [2, 1])


# ------------------------------------------------ symbolic: joints' own forms, springs
def screw_arm():
    """A screw on the base, a revolute and a cylindrical joint (every joint gives its own
    sympy form: no switch on the kind)."""
    m = mb.Model(gravity=(0.0, -9.81, 0.0))
    m.add_body("nut", 1.5, [0.05, 0.08, 0.08])
    m.add_body("arm", 1.0, mb.models.bar_inertia(1.0, 0.6))
    m.add_body("rod", 0.4, mb.models.bar_inertia(0.4, 0.3))
    m.add_joint("thread", "screw", "ground", "nut", axis=(0, 1, 0), lead=0.25,
                child_point=(0.0, -0.1, 0.0))
    m.add_joint("elbow", "revolute", "nut", "arm", parent_point=(0.1, 0.0, 0.0),
                child_point=(-0.3, 0.0, 0.0), axis=(0, 0, 1))
    m.add_joint("sleeve", "cylindrical", "arm", "rod", parent_point=(0.3, 0.0, 0.0),
                axis=(1, 0, 0))
    return m


def test_screw_joints_agree_in_the_symbolic_and_tree_forms():
    model = screw_arm()
    s = mb.symbolic.derive(model, simplify=False)
    fns = mb.symbolic.lambdify(s)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, qd, tau = rng.normal(size=4), rng.normal(size=4), rng.normal(size=4)
        np.testing.assert_allclose(fns.mass_matrix(q), mb.tree.mass_matrix(model, q), atol=1e-12)
        np.testing.assert_allclose(fns.forward_dynamics(q, qd, tau),
                                   mb.tree.forward_dynamics(model, q, qd, tau), atol=1e-10)
    # one turn of the thread raises the nut by one lead
    r1 = s.positions[0].subs({s.q[0]: 2 * sp.pi, s.q[1]: 0, s.q[2]: 0, s.q[3]: 0})
    r0 = s.positions[0].subs({s.q[0]: 0, s.q[1]: 0, s.q[2]: 0, s.q[3]: 0})
    assert sp.simplify(r1 - r0) == sp.Matrix([0, sp.Rational(1, 4), 0])


def test_spring_energy_and_constant_loads_enter_the_symbolic_equations():
    model = screw_arm()
    model.add_spring("k", "ground", "rod", point_a=(0.5, 1.0, 0.2), point_b=(0.1, 0.0, 0.0),
                     stiffness=20.0, rest_length=0.4)
    model.add_spring("k0", "nut", "arm", point_a=(0.0, 0.1, 0.0), point_b=(0.2, 0, 0),
                     stiffness=5.0)  # rest length 0: a polynomial energy
    model.add_joint_spring("elbow", stiffness=3.0, rest=0.5)
    model.add_joint_spring("sleeve", stiffness=(1.0, 6.0), rest=(0.0, 0.1))
    model.add_force("arm", force=(0.3, 0.0, -0.2), point=(0.1, 0.05, 0.0))
    model.add_force("rod", force=(0.0, 1.0, 0.0), torque=(0.1, 0.0, 0.4), frame="body")
    s = mb.symbolic.derive(model, simplify=False)
    fns = mb.symbolic.lambdify(s)
    U = sp.lambdify([s.q], s.U, "numpy")
    rng = np.random.default_rng(4)
    for _ in range(3):
        q, qd = rng.normal(size=4), rng.normal(size=4)
        assert float(U(q)) == pytest.approx(float(model.potential_energy(q)), rel=1e-12)
        np.testing.assert_allclose(fns.forward_dynamics(q, qd),
                                   mb.tree.forward_dynamics(model, q, qd), atol=1e-9)
        np.testing.assert_allclose(fns.forward_dynamics(q, qd),
                                   reference.forward_dynamics(model, q, qd), atol=1e-9)


def test_symbolic_refuses_what_has_no_closed_form():
    for add, name in [
        (lambda m: m.add_spring("damped", "ground", "rod", point_a=(1, 1, 0), stiffness=2.0,
                                damping=0.1), "spring 'damped' has damping"),
        (lambda m: m.add_joint_spring("elbow", stiffness=1.0, damping=0.2),
         "joint spring on 'elbow' has damping"),
        (lambda m: m.add_generalized_force(lambda t, q, qd: -qd, name="law"),
         "generalized force 'law'"),
        (lambda m: m.add_force("arm", force=lambda t, q, qd: (np.sin(t), 0, 0), name="push"),
         "load 'push'"),
    ]:
        model = screw_arm()
        add(model)
        with pytest.raises(mb.ModelError, match=name):
            mb.symbolic.derive(model)
    with pytest.raises(mb.ModelError, match="nq == nv"):
        mb.symbolic.derive(mb.models.floating_spacecraft())


def test_numeric_split_checks_its_state():
    model = planar_arm()
    with pytest.raises(mb.ShapeError, match="one state"):
        decompose_numeric(model, np.zeros((2, 3)), np.zeros(3))
    with pytest.raises(mb.ShapeError, match=r"qd\[1\].*nan"):
        decompose_numeric(model, np.zeros(3), [0.0, np.nan, 0.0])
    with pytest.raises(mb.ShapeError, match="one state"):
        mb.inertial.mass_matrix_derivatives(model, np.zeros((2, 3)))


def test_symbolic_functions_of_a_spatial_arm_accept_batches():
    """A five-joint spatial arm: Kane's form of h and the CSE'd functions equal the tree
    equations, one configuration at a time and batched."""
    rng = np.random.default_rng(31)
    model = mb.Model(gravity=(0.0, 0.0, -9.81))
    for k in range(1, 6):
        model.add_body(f"b{k}", rng.uniform(0.5, 2.0), np.diag(rng.uniform(0.1, 0.15, 3)))
        model.add_joint(f"j{k}", "revolute", k - 1, k, parent_point=(0.4, 0.0, 0.1) if k > 1
                        else (0.0, 0.0, 0.0), child_point=(-0.3, 0.05, 0.0),
                        axis=[(0, 0, 1), (0, 1, 0), (1, 0, 0)][k % 3])
    fns = mb.symbolic.lambdify(mb.symbolic.derive(model))
    q, qd, tau = rng.normal(size=(3, 7, 5))
    batch = fns.forward_dynamics(q, qd, tau)
    np.testing.assert_allclose(batch, mb.tree.forward_dynamics(model, q, qd, tau), rtol=1e-10,
                               atol=1e-10)
    np.testing.assert_allclose(fns.forward_dynamics(q[3], qd[3], tau[3]), batch[3], rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(fns.mass_matrix(q), mb.tree.mass_matrix(model, q), rtol=1e-11,
                               atol=1e-11)
    with pytest.raises(mb.ShapeError, match=r"q must have shape \(5,\)"):
        fns.forward_dynamics(q[0, :4], qd[0])
