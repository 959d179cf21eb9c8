"""URDF import: the Panda and the SO-100 agree with Pinocchio (reference arrays computed from
the same files by ``benchmarks/robots_reference.py``) and across every formulation; bad files
get errors that name the link or joint."""

import pathlib
import warnings

import numpy as np
import pytest

import mbcourse as mb
from mbcourse.errors import ModelError
import reference

DATA = np.load(pathlib.Path(__file__).parent / "data" / "robots_pinocchio.npz")
ROBOTS = ("panda", "so100")


def _robot(name, floating_base=False):
    """The robot with every joint independent, as Pinocchio's reference (its aba takes no
    mimic joint); the coupled Panda is tested below."""
    return mb.urdf.robot(name, floating_base=floating_base, mimic=False)


def _cartesian(solver):
    return lambda m, q, v, tau: mb.cartesian.forward_dynamics(m, q, v, tau, solver=solver)


FORMULATIONS = {
    "tree": mb.tree.forward_dynamics,
    "tree.numpy": lambda m, q, v, tau: mb.tree.forward_dynamics(m, q, v, tau, compiled=False),
    "tree.spherical": mb.tree.spherical.forward_dynamics,
    "vereshchagin": mb.vereshchagin.forward_dynamics,
    "vereshchagin.numpy": lambda m, q, v, tau: mb.vereshchagin.forward_dynamics(
        m, q, v, tau, compiled=False),
    "cartesian-dense": _cartesian("dense"),
    "cartesian-ldlt": _cartesian("ldlt"),
    "loops": mb.loops.forward_dynamics,
}


def _relative(a, b):
    return np.abs(np.asarray(a) - b).max() / max(np.abs(b).max(), 1e-300)


@pytest.mark.parametrize("name", ROBOTS)
def test_the_file_maps_to_the_expected_tree(name):
    m = _robot(name)
    assert [j.name for j in m.joints] == [str(s) for s in DATA[f"{name}/joint_names"]]
    assert sum(b.mass for b in m.bodies[1:]) == pytest.approx(float(DATA[f"{name}/total_mass"]),
                                                              rel=1e-14)
    assert all(j.kind in ("revolute", "prismatic") for j in m.joints)


@pytest.mark.parametrize("formulation", list(FORMULATIONS))
@pytest.mark.parametrize("name", ROBOTS)
def test_forward_dynamics_agrees_with_pinocchio(name, formulation):
    m, fd = _robot(name), FORMULATIONS[formulation]
    for q, v, tau, qdd in zip(DATA[f"{name}/q"], DATA[f"{name}/v"], DATA[f"{name}/tau"],
                              DATA[f"{name}/qdd"]):
        assert _relative(fd(m, q, v, tau), qdd) < 1e-9


@pytest.mark.parametrize("name", ROBOTS)
def test_mass_matrix_and_inverse_dynamics_agree_with_pinocchio(name):
    m = _robot(name)
    for q, v, tau, M, rnea in zip(DATA[f"{name}/q"], DATA[f"{name}/v"], DATA[f"{name}/tau"],
                                  DATA[f"{name}/M"], DATA[f"{name}/rnea"]):
        assert _relative(mb.tree.mass_matrix(m, q), M) < 1e-12
        assert _relative(mb.tree.inverse_dynamics(m, q, v, tau), rnea) < 1e-12
        # the independent finite-difference route of the tests agrees too
        assert _relative(reference.mass_matrix(m, q), M) < 1e-9


@pytest.mark.parametrize("name", ROBOTS)
def test_link_frames_and_jacobians_agree_with_pinocchio(name):
    m = _robot(name)
    frames = [str(f) for f in DATA[f"{name}/frames"]]
    for i, q in enumerate(DATA[f"{name}/q"]):
        for k, frame in enumerate(frames):
            r, R = mb.urdf.link_pose(m, q, frame)
            np.testing.assert_allclose(r, DATA[f"{name}/frame_position"][i, k], atol=1e-14)
            np.testing.assert_allclose(R, DATA[f"{name}/frame_rotation"][i, k], atol=1e-14)
            body, point, _ = m.parameters["urdf"]["links"][frame]
            J = mb.kinematics.jacobian(m, q, body, point)
            np.testing.assert_allclose(J, DATA[f"{name}/frame_jacobian"][i, k], atol=1e-13)


def test_the_tool_point_jacobian_agrees_with_finite_differences():
    m = _robot("panda")
    body, point, _ = m.parameters["urdf"]["links"]["panda_hand_tcp"]
    q = DATA["panda/q"][0]
    J = mb.kinematics.jacobian(m, q, body, point)[:3]
    h = 1e-6
    Jfd = np.empty_like(J)
    for j in range(m.nq):
        e = np.zeros(m.nq)
        e[j] = h
        Jfd[:, j] = (mb.kinematics.frame_pose(m, q + e, body, point)[0]
                     - mb.kinematics.frame_pose(m, q - e, body, point)[0]) / (2 * h)
    np.testing.assert_allclose(J, Jfd, atol=1e-9)


def test_symbolic_lagrange_equations_of_the_so100_agree():
    m = _robot("so100")
    fns = mb.symbolic.lambdify(mb.symbolic.derive(m, simplify=False), compiled=False)
    for q, v, tau, qdd in zip(DATA["so100/q"][:2], DATA["so100/v"][:2], DATA["so100/tau"][:2],
                              DATA["so100/qdd"][:2]):
        assert _relative(fns.forward_dynamics(q, v, tau), qdd) < 1e-9


@pytest.mark.parametrize("name", ROBOTS)
def test_ivanov_momenta_route_inverts_the_mass_matrix(name):
    m = _robot(name)
    q, v = DATA[f"{name}/q"][1], DATA[f"{name}/v"][1]
    p, _ = mb.poisson.momenta(m, q, v)
    assert _relative(p, DATA[f"{name}/M"][1] @ v) < 1e-12
    for solver in ("sweep", "cholesky"):
        assert _relative(mb.poisson.velocities(m, q, p, solver=solver), v) < 1e-10


@pytest.mark.parametrize("name", ROBOTS)
def test_a_floating_base_robot_agrees_across_formulations(name):
    m = _robot(name, floating_base=True)
    assert m.joints[0].name == "root_joint" and m.joints[0].kind == "free"
    rng = np.random.default_rng(7)
    n = len(m.joints) - 1
    quat = rng.normal(size=4)
    q = np.concatenate([[0.1, -0.2, 0.3], quat / np.linalg.norm(quat), DATA[f"{name}/q"][2]])
    assert q.size == m.nq == 7 + n
    v = rng.normal(size=m.nv)
    tau = np.concatenate([np.zeros(6), rng.normal(size=n)])
    expected = reference.forward_dynamics(m, q, v, tau)
    for formulation, fd in FORMULATIONS.items():
        if formulation == "tree.spherical":
            continue  # the spherical route takes spherical and revolute joints only
        assert _relative(fd(m, q, v, tau), expected) < 1e-8, formulation
    # the root link frame is the free joint's position and quaternion
    r, R = mb.urdf.link_pose(m, q, m.parameters["urdf"]["root"])
    np.testing.assert_allclose(r, q[:3], atol=1e-14)
    np.testing.assert_allclose(R, mb.spatial.quat_to_matrix(q[3:7]), atol=1e-14)
    # the fixed-base model is the floating one with the root held still
    fixed = _robot(name)
    rest = np.concatenate([[0, 0, 0, 1, 0, 0, 0], q[7:]])
    still = np.concatenate([np.zeros(6), v[6:]])
    M = mb.tree.mass_matrix(m, rest)
    h = mb.tree.inverse_dynamics(m, rest, still, np.zeros(m.nv))
    qdd = mb.tree.forward_dynamics(fixed, q[7:], v[6:], tau[6:])
    # holding the base still takes a base wrench; the joint rows alone give the fixed model
    np.testing.assert_allclose(M[6:, 6:] @ qdd + h[6:], tau[6:], atol=1e-9)


def test_fixed_links_merge_into_their_parent_body():
    panda = _robot("panda")
    links = panda.parameters["urdf"]["links"]
    for merged in ("panda_link8", "panda_hand", "panda_hand_tcp"):
        assert links[merged][0] == "panda_link7"
    assert "panda_hand" not in [b.name for b in panda.bodies]
    # link7 carries the hand: 0.735522 + 0.73 kg, centre between the two
    assert panda.body("panda_link7").mass == pytest.approx(0.735522 + 0.73, rel=1e-15)


URDF = """<robot name="t">
  <link name="base"/>
  <link name="a"><inertial><origin xyz="0.1 0 0" rpy="0 0.3 0"/><mass value="2"/>
    <inertia ixx="0.02" iyy="0.03" izz="0.04" ixy="0.001" ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0.2 0 0"/><geometry><box size="0.4 0.05 0.05"/></geometry></visual>
  </link>
  <link name="b"><inertial><mass value="1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="continuous"><parent link="base"/><child link="a"/>
    <origin xyz="0 0 0.5" rpy="0.1 0.2 0.3"/><axis xyz="0 0 2"/></joint>
  <joint name="j2" type="prismatic"><parent link="a"/><child link="b"/>
    <origin xyz="0.4 0 0"/><axis xyz="1 0 0"/><limit lower="-0.1" upper="0.2"/>
    <dynamics damping="0.5"/></joint>
  <transmission name="tr"><joint name="j1"/></transmission>
</robot>"""


def test_urdf_text_loads_with_limits_shapes_and_rotated_inertia():
    m = mb.urdf.load(URDF)
    assert [j.kind for j in m.joints] == ["revolute", "prismatic"]
    np.testing.assert_allclose(m.joint("j1").axis, mb.urdf.rpy_matrix([0.1, 0.2, 0.3])[:, 2])
    info = m.parameters["urdf"]
    assert info["limits"]["j2"] == {"lower": -0.1, "upper": 0.2}
    assert info["dynamics"]["j2"] == {"damping": 0.5}
    shape = info["shapes"]["a"][0]
    assert shape["type"] == "box" and shape["role"] == "visual"
    np.testing.assert_allclose(shape["position"], [0.1, 0.0, 0.0])   # from the centre of mass
    Ry = mb.urdf.rpy_matrix([0.0, 0.3, 0.0])
    I = np.array([[0.02, 0.001, 0], [0.001, 0.03, 0], [0, 0, 0.04]])
    np.testing.assert_allclose(m.body("a").inertia, Ry @ I @ Ry.T, atol=1e-15)
    # every formulation agrees on this file too (inclined axes, rotated inertia)
    q, v, tau = np.array([0.7, 0.05]), np.array([1.0, -0.3]), np.array([0.2, 1.0])
    expected = reference.forward_dynamics(m, q, v, tau)
    for formulation, fd in FORMULATIONS.items():
        assert _relative(fd(m, q, v, tau), expected) < 1e-9, formulation


def test_rpy_is_the_fixed_axis_roll_pitch_yaw_of_urdf():
    r, p, y = 0.3, -0.4, 1.1
    axis = mb.spatial.axis_angle
    np.testing.assert_allclose(mb.urdf.rpy_matrix([r, p, y]),
                               axis([0, 0, 1], y) @ axis([0, 1, 0], p) @ axis([1, 0, 0], r),
                               atol=1e-15)


def test_the_panda_mimic_finger_is_a_coupled_coordinate():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = mb.urdf.robot("panda")
    assert m.parameters["urdf"]["mimic"]["panda_finger_joint2"]["joint"] == "panda_finger_joint1"
    assert (m.nq, m.nv, m.uncoupled().nq) == (8, 8, 9)
    assert m.mimics == (mb.coupling.Mimic("panda_finger_joint2", "panda_finger_joint1", 1.0, 0.0),)
    assert m.q_names[-1] == "panda_finger_joint1.displacement"
    assert "panda_finger_joint1 + 0 (mimic)" in str(m)
    free = _robot("panda")
    assert free.nq == 9 and not free.mimics


def test_the_coupled_panda_equals_lagranges_equations_of_the_independent_coordinates():
    """Every formulation on the coupled Panda against G^T A G q'' = G^T (B + tau_f) built
    from the uncoupled Panda's A (chapter 3, equal to Pinocchio's above) and the reference
    module's B, and inverse dynamics, the mass matrix, the Jacobian and the energies
    through the map G."""
    m, free = mb.urdf.robot("panda"), _robot("panda")
    c = m.coupling
    G = c.G
    assert G.shape == (9, 8) and G[8, 7] == 1.0 and np.all(c.C @ G == 0)
    rng = np.random.default_rng(3)
    for q9 in DATA["panda/q"][:2]:
        q = c.reduce_q(q9)                     # the second finger then follows the first
        v, tau = rng.normal(size=8), rng.normal(size=8)
        A9 = mb.tree.mass_matrix(free, c.q(q))
        B9 = -reference.inverse_dynamics(free, c.q(q), c.qd(v), np.zeros(9))
        ref = np.linalg.solve(G.T @ A9 @ G, tau + G.T @ B9)
        for name, fd in FORMULATIONS.items():
            np.testing.assert_allclose(fd(m, q, v, tau), ref, rtol=0, atol=1e-9 * (1 + np.abs(
                ref).max()), err_msg=name)
        np.testing.assert_allclose(mb.tree.mass_matrix(m, q), G.T @ A9 @ G, atol=1e-12)
        np.testing.assert_allclose(mb.tree.inverse_dynamics(m, q, v, ref), tau, atol=1e-9)
        body, point, _ = m.parameters["urdf"]["links"]["panda_hand_tcp"]
        np.testing.assert_allclose(mb.kinematics.jacobian(m, q, body, point),
                                   mb.kinematics.jacobian(free, c.q(q), body, point) @ G,
                                   atol=1e-15)
        assert m.kinetic_energy(q, v) == pytest.approx(free.kinetic_energy(c.q(q), c.qd(v)),
                                                       rel=1e-14)
        p = mb.poisson.momenta(m, q, v)[0]
        np.testing.assert_allclose(mb.poisson.velocities(m, q, p), v, atol=1e-9)


@pytest.mark.parametrize("edit, message", [
    (lambda s: s.replace('type="prismatic"', 'type="planar"'), "joint 'j2' is planar"),
    (lambda s: s.replace('type="prismatic"', 'type="hinge"'), "joint 'j2' has type 'hinge'"),
    (lambda s: s.replace('<child link="b"/>', '<child link="c"/>'), "link 'c' is not defined"),
    (lambda s: s.replace('<child link="b"/>', '<child link="a"/>'),
     "link 'a' is the child of two joints"),
    (lambda s: s.replace('<axis xyz="1 0 0"/>', '<axis xyz="0 0 0"/>'),
     "joint 'j2': <axis xyz> must be a nonzero"),
    (lambda s: s.replace('xyz="0.4 0 0"', 'xyz="0.4 0"'), "joint 'j2' <origin>: xyz"),
    (lambda s: s.replace('</robot>', '<link name="stray"/></robot>'), "one root link"),
    (lambda s: s.replace('ixx="0.02" iyy="0.03" izz="0.04"', 'ixx="0.02" iyy="0.03" izz="-0.04"'),
     "<string>: link 'a' <inertial>: inertia must be positive semi-definite"),
    (lambda s: s.replace('<mass value="1"/>', '<mass value="-1"/>'),
     "<string>: link 'b': negative mass"),
    (lambda s: s.replace("</robot>", ""), "not well-formed XML"),
    (lambda s: s.replace("<robot", "<robo").replace("</robot>", "</robo>"),
     "needs <robot>"),
])
def test_bad_files_name_the_link_or_joint(edit, message):
    with pytest.raises(ModelError, match=message):
        mb.urdf.load(edit(URDF))


def test_an_impossible_inertia_warns_and_strict_refuses_it():
    """Principal moments that violate the triangle inequality (as published robot files
    have): loaded with a warning naming the file, the link and the inequality; refused
    with ``strict=True``."""
    text = URDF.replace('ixx="0.02" iyy="0.03" izz="0.04"', 'ixx="0.02" iyy="0.03" izz="0.09"')
    with pytest.warns(mb.errors.InertiaWarning,
                      match=r"<string>: link 'a' <inertial>: inertia violates the triangle "
                            r"inequality of principal moments \(0\.09 > .*strict=True"):
        m = mb.urdf.load(text)
    assert np.linalg.eigvalsh(m.body("a").inertia)[-1] == pytest.approx(0.09, rel=1e-3)
    with pytest.raises(ModelError, match=r"<string>: link 'a' <inertial>: inertia violates"):
        mb.urdf.load(text, strict=True)
    with pytest.raises(ModelError, match="strict must be True or False"):
        mb.urdf.load(text, strict="yes")


def test_a_massless_link_loads_and_a_joint_that_moves_no_mass_is_named():
    """A link without mass is a body of mass zero (robot files use them to build
    spherical hips); here it ends the chain on a prismatic joint, so no mass moves along
    that joint and the formulations name it."""
    m = mb.urdf.load(URDF.replace('<mass value="1"/>', '<mass value="0"/>'))
    assert m.body("b").mass == 0.0
    for fd in (mb.vereshchagin.forward_dynamics, mb.tree.forward_dynamics):
        with pytest.raises(mb.errors.SingularSystemError, match="j2"):
            fd(m, [0.1, 0.0], [0.0, 0.0])


def test_missing_file_and_unknown_robot_and_link():
    with pytest.raises(ModelError, match="does not exist"):
        mb.urdf.load("/nonexistent/robot.urdf")
    with pytest.raises(ModelError, match="shipped robots"):
        mb.urdf.robot("talos")
    with pytest.raises(ModelError, match="unknown link 'hand'"):
        mb.urdf.link_pose(_robot("so100"), np.zeros(6), "hand")
    with pytest.raises(ModelError, match="loaded by mb.urdf.load"):
        mb.urdf.link_pose(mb.models.double_pendulum(), np.zeros(2), "a")
