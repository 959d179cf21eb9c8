"""Wrong calls a newcomer makes get a named error, never a raw Python/NumPy traceback.

Each row of the table is a wrong call, the :mod:`mbcourse.errors` class it must raise and
words its message must contain (the offending argument, body, joint or file, and what would
be valid; ``{d}`` stands for the test's temporary directory). Modules: kinetic (chapter 7),
urdf, kinematics, accuracy, symbolic, inertial, graph, spatial, viz, viz3d.
"""
import functools
import pathlib

import numpy as np
import pytest

import mbcourse as mb
from mbcourse import accuracy as AC
from mbcourse import graph as G
from mbcourse import inertial as IN
from mbcourse import kinematics as KM
from mbcourse import kinetic as K
from mbcourse import spatial as S
from mbcourse import symbolic as SY
from mbcourse import viz as V
from mbcourse import viz3d as V3
from mbcourse.errors import MbcourseError, ModelError, ShapeError

import matplotlib  # noqa: E402  (a dependency of mbcourse: the viz cases need it)
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

Q2 = np.array([0.1, 0.2])
IP, IM = [0, 1, 1], [1, 2, 3]


@functools.lru_cache(maxsize=None)
def dp():
    return mb.models.double_pendulum()


@functools.lru_cache(maxsize=None)
def so100():
    return mb.urdf.robot("so100")


@functools.lru_cache(maxsize=None)
def fns():
    return SY.lambdify(SY.derive(dp()), compiled=False)


def box():
    return K.Box(2.0, (1.0, 2.0, 3.0))


def spin():
    return K.PlaneRotation("z", angle=K.uniform(0.0, 1.0))


def energy_with_angle(law):
    return K.kinetic_energy(K.PlaneRotation("z", angle=law), box(), 0.1)


def chain2():
    return AC.revolute_chain([1.0, 0.5])


def files(d):
    """A directory of files that are not URDFs."""
    (d / "text.urdf").write_text("hello, not XML")
    (d / "page.urdf").write_text("<html><body/></html>")
    (d / "empty.urdf").write_text("")
    (d / "nolinks.urdf").write_text('<robot name="r"></robot>')
    return d


BAD = [
    # ---------------------------------------------------------- kinetic: laws (chapter 7)
    ("law returns None", lambda d: energy_with_angle(lambda t: None), ShapeError,
     ["angle", "(theta, theta_t, theta_tt)", "three finite numbers", "None"]),
    ("law returns two values", lambda d: energy_with_angle(lambda t: (1.0, 2.0)), ShapeError,
     ["angle", "(theta, theta_t, theta_tt)", "(1.0, 2.0)"]),
    ("law returns NaN", lambda d: energy_with_angle(lambda t: (np.nan, 1.0, 0.0)), ShapeError,
     ["angle", "three finite numbers", "nan"]),
    ("law returns a vector", lambda d: energy_with_angle(lambda t: ([1, 2], 1.0, 0.0)),
     ShapeError, ["angle", "three finite numbers"]),
    ("law returns a string", lambda d: energy_with_angle(lambda t: "abc"), ShapeError,
     ["angle", "'abc'"]),
    ("law takes no t", lambda d: K.PlaneRotation("z", angle=lambda: (1, 2, 3)), ShapeError,
     ["angle", "one argument", "t ->"]),
    ("pole_motion returns None",
     lambda d: K.kinetic_energy(K.PlaneRotation("z", pole_motion=lambda t: None), box(), 0.1),
     ShapeError, ["pole_motion", "(x_P, v_P, a_P)", "vectors of 3"]),
    ("pole_motion returns a 2-vector",
     lambda d: K.kinetic_energy(K.PlaneRotation(
         "z", pole_motion=lambda t: ((0, 0), (0, 0, 0), (0, 0, 0))), box(), 0.1),
     ShapeError, ["pole_motion", "vectors of 3"]),
    ("translation law returns None",
     lambda d: K.kinetic_energy(K.Translation(lambda t: None), box(), 0.1), ShapeError,
     ["Translation", "(s, s_t, s_tt)"]),
    ("translation law returns scalars",
     lambda d: K.kinetic_energy(K.Translation(lambda t: (1.0, 2.0, 3.0)), box(), 0.1),
     ShapeError, ["Translation", "vectors of 3"]),
    ("translation law returns NaN",
     lambda d: K.kinetic_energy(K.Translation(
         lambda t: ((1, 2, 3), (1, np.nan, 3), (0, 0, 0))), box(), 0.1),
     ShapeError, ["Translation", "finite"]),
    ("alyushin law returns None",
     lambda d: K.kinetic_energy(K.alyushin_motions(1.0, 0.8, 0.1, lambda t: None, 0, 0)[2],
                                box(), 0.1), ShapeError, ["waist", "None"]),
    ("alyushin screw returns None",
     lambda d: K.kinetic_energy(K.alyushin_motions(1.0, 0.8, 0.1, 0, 0, lambda t: None)[2],
                                box(), 0.1), ShapeError, ["screw", "None"]),
    ("density returns None",
     lambda d: K.kinetic_energy(spin(), K.Box(1.0, (1, 2, 3), density=lambda u: None), 0.1),
     ShapeError, ["density(u)", "None"]),
    # ---------------------------------------------------------- kinetic: swapped arguments
    ("kinetic_energy body and motion swapped", lambda d: K.kinetic_energy(box(), spin(), 0.1),
     ShapeError, ["motion must be", "PlaneRotation", "swapped"]),
    ("kinetic_energy time first", lambda d: K.kinetic_energy(0.1, spin(), box()), ShapeError,
     ["motion must be", "got 0.1"]),
    ("kinetic_energy t a string", lambda d: K.kinetic_energy(spin(), box(), "a"), ShapeError,
     ["t (the time)", "finite real number", "'a'"]),
    ("kinetic_energy t None", lambda d: K.kinetic_energy(spin(), box(), None), ShapeError,
     ["t (the time)", "None"]),
    ("kinetic_energy t a list", lambda d: K.kinetic_energy(spin(), box(), [0.1, 0.2]),
     ShapeError, ["t (the time)", "one finite real number"]),
    ("kinetic_energy t NaN", lambda d: K.kinetic_energy(spin(), box(), np.nan), ShapeError,
     ["t (the time)", "nan"]),
    ("position t a string", lambda d: spin().position([0, 0, 0], "a"), ShapeError,
     ["t (the time)"]),
    ("position alpha of 2", lambda d: spin().position([0, 0], 0.1), ShapeError,
     ["alpha", "(..., 3)", "(2,)"]),
    ("velocity alpha ragged", lambda d: spin().velocity([[0, 0, 0], [1, 2]], 0.1), ShapeError,
     ["alpha", "real numbers"]),
    ("angular_velocity t None", lambda d: spin().angular_velocity(None), ShapeError,
     ["t (the time)"]),
    ("compose with a number", lambda d: K.compose(spin(), 2.0), ShapeError,
     ["motion must be", "got 2.0"]),
    ("mass_properties of a motion", lambda d: K.mass_properties(spin()), ShapeError,
     ["body must be", "Box", "swapped"]),
    ("uniform given a law", lambda d: K.uniform(K.uniform(1.0)), ShapeError,
     ["theta0", "a real number", "motion law", "swapped"]),
    ("uniform given a string", lambda d: K.uniform("a"), ShapeError, ["theta0", "'a'"]),
    ("alyushin laws before lengths",
     lambda d: K.alyushin_motions(K.uniform(0), K.uniform(0), K.uniform(0), 1.0, 0.8, 0.1),
     ShapeError, ["H must be a real number", "motion law"]),
    ("plane rotation pole given a law", lambda d: K.PlaneRotation("z", K.uniform(1.0)),
     ShapeError, ["pole must be 3 real numbers", "motion law"]),
    ("plane rotation axis a list", lambda d: K.PlaneRotation([0, 0, 1]), ModelError,
     ["axis must be one of", "'x'"]),
    ("plane rotation angle a string", lambda d: K.PlaneRotation("z", angle="a"), ShapeError,
     ["angle", "'a'"]),
    ("plane rotation pole ragged", lambda d: K.PlaneRotation("z", pole=[[1, 2], [3]]),
     ShapeError, ["pole must be 3 real numbers"]),
    ("box mass and size swapped", lambda d: K.Box((1, 2, 3), 1.0), ShapeError,
     ["mass", "a real number"]),
    ("box size ragged", lambda d: K.Box(1.0, [[1, 2], [3]]), ShapeError, ["size", "3 real"]),
    ("cylinder radius a string", lambda d: K.Cylinder(1.0, "a", 1.0), ShapeError,
     ["radius", "'a'"]),
    ("cylinder radius NaN", lambda d: K.Cylinder(1.0, np.nan, 1.0), ShapeError,
     ["radius", "finite"]),
    ("cylinder axis a list", lambda d: K.Cylinder(1.0, 1.0, 1.0, axis=[0, 0, 1]), ModelError,
     ["axis must be one of"]),
    ("point cloud ragged", lambda d: K.PointCloud([1.0, 2.0], [[1, 0, 0], [1, 2]]), ShapeError,
     ["points"]),
    ("moments points and masses swapped", lambda d: K.moments([1, 1], [[1, 0, 0], [0, 1, 0]],
                                                              (0, 0, 0)), ShapeError,
     ["points must have shape (K, 3)"]),
    ("moments one mass for two points",
     lambda d: K.moments([[1, 0, 0], [0, 1, 0]], [1.0], (0, 0, 0)), ShapeError,
     ["masses", "one per point"]),
    ("moments pole of 2", lambda d: K.moments([[1, 0, 0]], [1.0], (0, 0)), ShapeError,
     ["pole", "(3,)"]),
    ("energy_about_pole arguments swapped", lambda d: K.energy_about_pole(np.eye(3), [1, 2, 3]),
     ShapeError, ["omega", "(3,)"]),
    ("energy_koenig velocity of 2", lambda d: K.energy_koenig(1.0, [1, 2], [1, 2, 3], np.eye(3)),
     ShapeError, ["v_C", "(3,)"]),
    ("energy_eq39 velocity of 2", lambda d: K.energy_eq39(1.0, [1, 2], [1, 2, 3], np.eye(3)),
     ShapeError, ["v_P", "(3,)"]),
    ("energy_planar velocity of 1", lambda d: K.energy_planar(1.0, [1.0], 1.0, 1.0, [0, 1]),
     ShapeError, ["v_P", "2 or 3"]),
    ("cross_term a string", lambda d: K.cross_term(1.0, "abc", [1, 2, 3], [1, 2, 3]),
     ShapeError, ["v_P", "'abc'"]),
    ("energy_one_axis None", lambda d: K.energy_one_axis(None, 1.0), ShapeError,
     ["theta_t", "None"]),
    ("product_after_rotation a string", lambda d: K.product_after_rotation("a", 1, 1, 1),
     ShapeError, ["I_a"]),
    ("sympy rotation axis a list",
     lambda d: K.sympy_plane_rotation([0, 0, 1], [1, 2, 3], 0.1, (0, 0, 0)), ModelError,
     ["axis must be one of"]),
    ("sympy rotation of 2 coordinates",
     lambda d: K.sympy_plane_rotation("z", [1, 2], 0.1, (0, 0, 0)), ShapeError,
     ["x must be 3 coordinates"]),
    # ---------------------------------------------------------- urdf
    ("urdf empty path", lambda d: mb.urdf.load(""), ModelError,
     ["the path is empty", "URDF file", "mb.urdf.robot"]),
    ("urdf blank path", lambda d: mb.urdf.load("   "), ModelError, ["the path is empty"]),
    ("urdf directory", lambda d: mb.urdf.load(str(files(d))), ModelError,
     ["'{d}'", "is a directory", ".urdf file", "text.urdf"]),
    ("urdf directory as a Path", lambda d: mb.urdf.load(files(d)), ModelError,
     ["is a directory"]),
    ("urdf missing file", lambda d: mb.urdf.load(str(d / "nope.urdf")), ModelError,
     ["'{d}/nope.urdf'", "does not exist", "shipped robots"]),
    ("urdf not XML", lambda d: mb.urdf.load(files(d) / "text.urdf"), ModelError,
     ["text.urdf", "not well-formed XML", "<robot> root"]),
    ("urdf empty file", lambda d: mb.urdf.load(files(d) / "empty.urdf"), ModelError,
     ["empty.urdf", "not well-formed XML"]),
    ("urdf XML that is not a URDF", lambda d: mb.urdf.load(files(d) / "page.urdf"), ModelError,
     ["page.urdf", "<html>", "a URDF needs <robot>"]),
    ("urdf robot without links", lambda d: mb.urdf.load(files(d) / "nolinks.urdf"), ModelError,
     ["nolinks.urdf", "no <link>"]),
    ("urdf text that is not a URDF", lambda d: mb.urdf.load("<html/>"), ModelError,
     ["<string>", "<html>", "<robot>"]),
    ("urdf None", lambda d: mb.urdf.load(None), ModelError, ["file path or URDF text",
                                                             "NoneType"]),
    ("urdf a Model", lambda d: mb.urdf.load(dp()), ModelError, ["file path or URDF text",
                                                                "Model"]),
    ("urdf floating_base a string",
     lambda d: mb.urdf.load(mb.urdf.robot_path("so100"), floating_base="yes"), ModelError,
     ["floating_base must be True or False", "'yes'"]),
    ("urdf robot name a list", lambda d: mb.urdf.robot(["so100"]), ModelError,
     ["unknown robot", "panda", "so100"]),
    ("urdf link name a list", lambda d: mb.urdf.link_pose(so100(), np.zeros(6), ["gripper"]),
     ModelError, ["unknown link", "gripper"]),
    ("urdf link_pose q and link swapped",
     lambda d: mb.urdf.link_pose(so100(), "gripper", np.zeros(6)), ModelError,
     ["unknown link"]),
    # ---------------------------------------------------------- kinematics
    ("kinematics model None", lambda d: KM.frame_pose(None, Q2, "rod2"), ModelError,
     ["frame_pose", "model must be an mbcourse.Model", "NoneType"]),
    ("kinematics model and q swapped", lambda d: KM.jacobian(Q2, dp(), "rod2"), ModelError,
     ["jacobian", "model must be an mbcourse.Model", "ndarray"]),
    ("kinematics body a list", lambda d: KM.frame_pose(dp(), Q2, ["rod2"]), ModelError,
     ["unknown body", "rod1"]),
    ("kinematics point ragged", lambda d: KM.frame_pose(dp(), Q2, "rod2", [[1, 2], 3]),
     ShapeError, ["point on body 'rod2'", "3 numbers"]),
    ("kinematics qd and body swapped", lambda d: KM.point_velocity(dp(), Q2, "rod2", Q2),
     MbcourseError, []),
    # ---------------------------------------------------------- accuracy
    ("accuracy rotation_vector of a non-rotation", lambda d: AC.rotation_vector(np.ones((3, 3))),
     ShapeError, ["R must be a rotation matrix"]),
    ("accuracy rotation_vector of a 2x2", lambda d: AC.rotation_vector(np.eye(2)), ShapeError,
     ["R must be a rotation matrix", "(2, 2)"]),
    ("accuracy Chain of a number", lambda d: AC.Chain(3), ModelError,
     ["motions must be a sequence", "Motion"]),
    ("accuracy Chain of None", lambda d: AC.Chain(None), ModelError, ["motions"]),
    ("accuracy to_model mass a string", lambda d: chain2().to_model(mass="a"), ShapeError,
     ["mass"]),
    ("accuracy revolute_chain ragged", lambda d: AC.revolute_chain([1, [2]]), ShapeError,
     ["lengths"]),
    ("accuracy monte_carlo seed a string",
     lambda d: AC.monte_carlo(chain2(), [1, 2], 0.1, seed="a"), ModelError,
     ["seed must be an integer"]),
    ("accuracy calibrate measured ragged",
     lambda d: AC.calibrate(chain2(), [[1, 2]], [[1, 2, [3]]]), ShapeError, ["measured"]),
    ("accuracy calibrate tol a string",
     lambda d: AC.calibrate(chain2(), [[1, 2]] * 5, np.zeros((5, 3)), parameters=["l1"],
                            tol="a"), ModelError, ["tol must be a non-negative number"]),
    ("accuracy calibrate max_iter a string",
     lambda d: AC.calibrate(chain2(), [[1, 2]] * 5, np.zeros((5, 3)), parameters=["l1"],
                            max_iter="a"), ModelError, ["max_iter must be a positive integer"]),
    # ---------------------------------------------------------- symbolic
    ("derive None", lambda d: SY.derive(None), ModelError, ["model must be an mbcourse.Model"]),
    ("derive parameters a list", lambda d: SY.derive(dp(), parameters=["rod1.mass"]),
     ModelError, ["parameters must be a dict"]),
    ("derive a point of 2", lambda d: SY.derive(dp(), parameters={"A.child_point": (1, 2)}),
     ShapeError, ["parameters['A.child_point']", "3 numbers or symbols"]),
    ("derive a mass string", lambda d: SY.derive(dp(), parameters={"rod1.mass": "abc def"}),
     ShapeError, ["parameters['rod1.mass']", "one number or symbol"]),
    ("lambdify a Model", lambda d: SY.lambdify(dp()), ModelError,
     ["SymbolicModel", "derive(model) first"]),
    ("lambdified tau of 3", lambda d: fns().forward_dynamics(Q2, Q2, [1.0, 2.0, 3.0]),
     ShapeError, ["tau must have shape (2,)"]),
    ("lambdified q a string", lambda d: fns().forward_dynamics("ab", Q2), ShapeError,
     ["q must have shape (2,)", "'ab'"]),
    ("lambdified q ragged", lambda d: fns().forward_dynamics([1, [2]], Q2), ShapeError,
     ["q must have shape (2,)"]),
    ("lambdified qd None", lambda d: fns().forward_dynamics(Q2, None), ShapeError,
     ["qd must have shape (2,)", "None"]),
    ("lambdified q NaN", lambda d: fns().forward_dynamics([np.nan, 0.0], Q2), ShapeError,
     ["q must be finite"]),
    ("lambdified batches differ",
     lambda d: fns().forward_dynamics(np.zeros((3, 2)), np.zeros((4, 2))), ShapeError,
     ["do not broadcast", "(3, 2)", "(4, 2)"]),
    ("lambdified mass matrix of 1", lambda d: fns().mass_matrix([1.0]), ShapeError,
     ["q must have shape (2,)"]),
    # ---------------------------------------------------------- inertial
    ("decompose None", lambda d: IN.decompose(None, None, None), ShapeError,
     ["H must be a square sympy Matrix"]),
    ("decompose numbers for symbols", lambda d: IN.decompose(np.eye(2), [1, 2], [3, 4]),
     ShapeError, ["q must be a sequence of sympy Symbols"]),
    ("decompose_numeric model and q swapped", lambda d: IN.decompose_numeric(Q2, dp(), Q2),
     ModelError, ["decompose_numeric", "model must be an mbcourse.Model"]),
    ("decompose_numeric mass_matrix an array",
     lambda d: IN.decompose_numeric(dp(), Q2, Q2, mass_matrix=np.eye(2)), ShapeError,
     ["mass_matrix must be a callable"]),
    ("subsystem_ends None", lambda d: IN.subsystem_ends(None), ModelError,
     ["subsystem_ends", "mbcourse.Model"]),
    ("powers arguments swapped", lambda d: IN.powers(Q2, IN.decompose_numeric(dp(), Q2, Q2)),
     ShapeError, ["decomposition must be a Decomposition"]),
    ("powers qd of 1", lambda d: IN.powers(IN.decompose_numeric(dp(), Q2, Q2), [1.0]),
     ShapeError, ["qd must be 2 finite numbers"]),
    ("forming_bodies a name", lambda d: IN.forming_bodies(dp(), "A.angle"), ShapeError,
     ["coordinate must be an index 0..1"]),
    # ---------------------------------------------------------- graph
    ("graph ragged i_plus", lambda d: G.incidence_matrix([[0, 1], [1]], IM), ShapeError,
     ["i_plus", "integer body numbers"]),
    ("graph n a string", lambda d: G.incidence_matrix(IP, IM, n="3"), ShapeError,
     ["n must be the number of bodies"]),
    ("graph renumber None", lambda d: G.renumber(IP, IM, None, None), ShapeError,
     ["vertex_map", "permutation"]),
    ("graph renumber strings", lambda d: G.renumber(IP, IM, "abc", "abc"), ShapeError,
     ["vertex_map", "permutation"]),
    ("graph S ragged", lambda d: G.predecessor([[1, 0], [1]], G.path_matrix(IP, IM), 1),
     ShapeError, ["S must be the full incidence matrix"]),
    ("graph cut a string", lambda d: G.spanning_tree(IP, IM, cut="a"), ShapeError,
     ["cut must be arc positions"]),
    ("graph cut None", lambda d: G.fundamental_cycles(IP, IM, cut=[None]), ShapeError,
     ["cut must be arc positions"]),
    ("graph draw highlight a string", lambda d: G.draw(IP, IM, highlight="a"), ShapeError,
     ["highlight"]),
    ("graph draw highlight out of range", lambda d: G.draw(IP, IM, highlight=[9]), ShapeError,
     ["highlight must hold arc positions 0..2"]),
    ("graph draw ax a string", lambda d: G.draw(IP, IM, ax="a"), ShapeError,
     ["ax must be a matplotlib Axes"]),
    ("graph matrix_table ragged", lambda d: G.matrix_table([[1, 2], [3]]), ShapeError,
     ["M must be a 2-D integer matrix"]),
    # ---------------------------------------------------------- spatial
    ("cross of a 2-vector", lambda d: S.cross([1, 2], [1, 2, 3]), ShapeError,
     ["cross", "a must be 3-vectors", "(2,)"]),
    ("cross of a string", lambda d: S.cross("abc", [1, 2, 3]), ShapeError, ["cross", "'abc'"]),
    ("cross ragged", lambda d: S.cross([[1, 2, 3], [1]], [1, 2, 3]), ShapeError,
     ["cross", "3-vectors"]),
    ("skew None", lambda d: S.skew(None), ShapeError, ["skew", "a must be 3-vectors"]),
    ("vee of a vector", lambda d: S.vee([1, 2, 3]), ShapeError, ["vee", "3x3 matrices"]),
    ("axis_angle arguments swapped", lambda d: S.axis_angle(1.0, [0, 0, 1]), ShapeError,
     ["axis_angle", "axis must be a 3-vector"]),
    ("axis_angle angle None", lambda d: S.axis_angle([0, 0, 1], None), ShapeError,
     ["axis_angle", "angle must be a number"]),
    ("quat_to_matrix of 3", lambda d: S.quat_to_matrix([1, 0, 0]), ShapeError,
     ["quat_to_matrix", "(w, x, y, z)"]),
    ("matrix_to_quat of a quaternion", lambda d: S.matrix_to_quat([1, 0, 0, 0]), ShapeError,
     ["matrix_to_quat", "rotation matrices"]),
    ("quat_multiply of 3", lambda d: S.quat_multiply([1, 0, 0], [1, 0, 0, 0]), ShapeError,
     ["quat_multiply", "a must be quaternions"]),
    ("quat_rate_matrix of 3", lambda d: S.quat_rate_matrix([1, 0, 0]), ShapeError,
     ["quat_rate_matrix"]),
    ("is_rotation of a string", lambda d: S.is_rotation("abc"), ShapeError, ["is_rotation"]),
    ("mv shapes disagree", lambda d: S.mv(np.eye(3), np.ones(2)), ShapeError,
     ["mv", "(3, 3)", "(2,)"]),
    ("transpose of a vector", lambda d: S.transpose([1, 2, 3]), ShapeError,
     ["transpose", "matrices"]),
    # ---------------------------------------------------------- viz, viz3d
    ("draw model None", lambda d: V.draw(None), ModelError, ["draw", "mbcourse.Model"]),
    ("draw model and q swapped", lambda d: V.draw(Q2, dp()), ModelError,
     ["model must be an mbcourse.Model", "ndarray"]),
    ("draw ax a string", lambda d: V.draw(dp(), Q2, ax="a"), ShapeError,
     ["ax must be a matplotlib Axes"]),
    ("draw plane a list", lambda d: V.draw(dp(), Q2, plane=["x", "y"]), ModelError,
     ["plane must be one of", "'xy'"]),
    ("draw unknown colour", lambda d: V.draw(dp(), Q2, color="notacolour"), ShapeError,
     ["color must be a matplotlib colour", "notacolour"]),
    ("draw alpha a string", lambda d: V.draw(dp(), Q2, alpha="a"), ShapeError,
     ["alpha must be a number in [0, 1]"]),
    ("draw lw a string", lambda d: V.draw(dp(), Q2, lw="a"), ShapeError,
     ["lw must be a number > 0"]),
    ("draw t a string", lambda d: V.draw(dp(), Q2, t="a"), ShapeError,
     ["t must be a finite real number"]),
    ("draw poses ragged", lambda d: V.draw(dp(), poses=([1, [2]], 3)), ShapeError,
     ["poses must be a pair (r, A)"]),
    ("draw poses one array", lambda d: V.draw(dp(), poses=np.zeros((3, 3))), ShapeError,
     ["poses must be a pair (r, A)"]),
    ("jshtml of None", lambda d: V.jshtml(None), ShapeError,
     ["jshtml needs a matplotlib Animation", "NoneType"]),
    ("offline_jshtml of a number", lambda d: V.offline_jshtml(3), ShapeError,
     ["offline_jshtml", "a str", "int"]),
    ("show_animation of None", lambda d: V.show_animation(None), ShapeError,
     ["show_animation needs a matplotlib Animation"]),
    ("view model None", lambda d: V3.view(None), ModelError, ["model must be an mbcourse.Model"]),
    ("view model and q swapped", lambda d: V3.view(Q2, dp()), ModelError,
     ["model must be an mbcourse.Model"]),
    ("view height a string", lambda d: V3.view(dp(), Q2, height="a"), ShapeError,
     ["height must be a finite number"]),
    ("view visuals a list", lambda d: V3.view(dp(), Q2, visuals=["rod1"]), ModelError,
     ["visuals must be a dict"]),
    ("view t a string", lambda d: V3.view(dp(), Q2, t="a"), ShapeError,
     ["t must be a finite number"]),
    ("animate3d ragged pair", lambda d: V3.animate3d(dp(), ([0, 1], [[1, 2], [3]])),
     ShapeError, ["trajectory", "(len(t), nq)"]),
    ("animate3d fps a string",
     lambda d: V3.animate3d(dp(), ([0.0, 1.0], np.zeros((2, 2))), fps="a"), ShapeError,
     ["fps must be a finite number"]),
    ("animate3d max_frames a string",
     lambda d: V3.animate3d(dp(), ([0.0, 1.0], np.zeros((2, 2))), max_frames="a"), ShapeError,
     ["max_frames must be a finite number"]),
    ("animate3d speed a string",
     lambda d: V3.animate3d(dp(), ([0.0, 1.0], np.zeros((2, 2))), speed="a"), ShapeError,
     ["speed must be a finite number"]),
    ("view_html qd a string", lambda d: V3.view_html(dp(), [0, 1], np.zeros((2, 2)), qd="a"),
     ShapeError, ["qd", "(len(t), nv)"]),
]


@pytest.mark.parametrize("call, error, words", [case[1:] for case in BAD],
                         ids=[case[0] for case in BAD])
def test_a_wrong_call_gets_a_named_error(call, error, words, tmp_path):
    assert issubclass(error, MbcourseError)
    try:
        call(tmp_path)
    except MbcourseError as exc:
        assert isinstance(exc, error), f"{type(exc).__name__}: {exc}"
        missing = [w for w in (w.replace("{d}", str(tmp_path)) for w in words)
                   if w not in str(exc)]
        assert not missing, f"message {str(exc)!r} lacks {missing}"
    except Exception as exc:  # a raw Python/NumPy/SciPy exception: the failure this suite finds
        pytest.fail(f"raw {type(exc).__name__}: {exc}")
    else:
        pytest.fail("the wrong call was accepted")
    finally:
        plt.close("all")


def test_the_table_has_no_duplicate_names():
    names = [case[0] for case in BAD]
    assert len(names) == len(set(names))


def test_right_calls_still_work(tmp_path):
    """The checks refuse only wrong calls: the corrected calls of the table run."""
    E = K.kinetic_energy(K.PlaneRotation("z", angle=lambda t: (0.0, 2.0, 0.0)),
                         K.PointCloud([1.0], [[1.0, 0.0, 0.0]]), 0.3)
    assert E == pytest.approx(2.0, rel=1e-12)
    moved = K.Translation(lambda t: (np.array([t, 0.0, 0.0]), np.array([1.0, 0.0, 0.0]),
                                     np.zeros(3)))
    np.testing.assert_allclose(moved.velocity([[1.0, 2.0, 3.0]], 0.4), [[1.0, 0.0, 0.0]])
    text = mb.urdf.robot_path("so100").read_text()
    (tmp_path / "arm.urdf").write_text(text)
    assert mb.urdf.load(tmp_path / "arm.urdf").nq == so100().nq
    assert mb.urdf.load(str(tmp_path / "arm.urdf"), floating_base=np.bool_(False)).nq == 6
    np.testing.assert_allclose(S.cross([[1, 0, 0]], [0, 1, 0]), [[0, 0, 1]])
    assert G.matrix_table(np.eye(2, dtype=bool)).count("+1") == 2
    np.testing.assert_allclose(fns().forward_dynamics(Q2, [0.0, 0.0], [0.5, 0.0]),
                               mb.tree.forward_dynamics(dp(), Q2, [0.0, 0.0], [0.5, 0.0]),
                               rtol=1e-10)
    assert isinstance(pathlib.Path(mb.urdf.robot_path("so100")), pathlib.Path)
