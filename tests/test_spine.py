"""The spine every formulation stands on: a changed model never gives an old answer, one
input check refuses every bad input with a named error, force elements act in every
formulation, and the layering rules hold (checked by parsing the sources)."""

import ast
import pathlib

import numpy as np
import pytest

import mbcourse as mb
from mbcourse.errors import (InconsistentStateError, MbcourseError, ModelError, ShapeError,
                             SingularSystemError)
import reference

ROOT = pathlib.Path(mb.__file__).parent


def _cartesian(solver):
    def fd(model, q, qd, tau=None, *, t=0.0):
        return mb.cartesian.forward_dynamics(model, q, qd, tau, t=t, solver=solver)
    return fd


FORMULATIONS = {
    "tree": mb.tree.forward_dynamics,
    "tree.spherical": mb.tree.spherical.forward_dynamics,
    "vereshchagin": mb.vereshchagin.forward_dynamics,
    "cartesian-dense": _cartesian("dense"),
    "cartesian-ldlt": _cartesian("ldlt"),
    "loops": mb.loops.forward_dynamics,  # a tree is a mechanism with no cut joints
}


def spatial_arm(mass2=1.0, inertia2=(0.02, 0.05, 0.05), point=(0.5, 0.0, 0.1),
                axis=(0.0, 1.0, 0.0), gravity=(0.0, -9.81, 0.0), orientation=None,
                spring=None, load=False, child_point=(-0.3, 0, 0), lead=0.1, base=False):
    """Three bodies: revolute, universal, screw; parameters to change one at a time."""
    m = mb.Model(gravity=gravity)
    m.add_body("b1", 1.5, [0.03, 0.1, 0.1])
    m.add_body("b2", mass2, inertia2)
    m.add_body("b3", 0.7, [0.01, 0.02, 0.02])
    m.add_joint("j1", "revolute", "ground", "b1", child_point=(-0.4, 0, 0), axis=(0, 0, 1))
    m.add_joint("j2", "universal", "b1", "b2", parent_point=point, child_point=child_point,
                axes=((0, 0, 1), axis), orientation=orientation)
    m.add_joint("j3", "screw", "b2", "b3", parent_point=(0.3, 0, 0), axis=(1, 0, 0), lead=lead)
    if base:
        m.set_base_motion(**BASE)
    if spring is not None:
        m.add_spring("k", "ground", "b3", point_a=(1.0, 1.0, 0.0), stiffness=spring,
                     rest_length=0.5, damping=0.3)
    if load:
        m.add_force("b2", force=(0.0, 2.0, 1.0), point=(0.1, 0.0, 0.0))
    return m


BASE = dict(position=lambda t: (0.1 * t * t, 0.0, 0.0), velocity=lambda t: (0.2 * t, 0.0, 0.0),
            acceleration=(0.2, 0.0, 0.0))
Q = np.array([0.3, -0.4, 0.5, 1.2])
QD = np.array([0.7, -0.2, 0.9, 1.1])

CHANGES = {  # attribute change on a built model -> the same model built fresh
    "body mass": (lambda m: setattr(m.body("b2"), "mass", 4.0), dict(mass2=4.0)),
    "body inertia": (lambda m: setattr(m.body("b2"), "inertia", [0.1, 0.2, 0.25]),
                     dict(inertia2=(0.1, 0.2, 0.25))),
    "parent_point": (lambda m: setattr(m.joint("j2"), "parent_point", (0.6, 0.1, 0.0)),
                     dict(point=(0.6, 0.1, 0.0))),
    "axes": (lambda m: setattr(m.joint("j2"), "axes", ((0, 0, 1), (1, 1, 0))),
             dict(axis=(1, 1, 0))),
    "orientation": (lambda m: setattr(m.joint("j2"), "orientation",
                                      mb.spatial.axis_angle([0, 1, 0], 0.4)),
                    dict(orientation=mb.spatial.axis_angle([0, 1, 0], 0.4))),
    "child_point": (lambda m: setattr(m.joint("j2"), "child_point", (-0.4, 0.1, 0.0)),
                    dict(child_point=(-0.4, 0.1, 0.0))),
    "lead": (lambda m: setattr(m.joint("j3"), "lead", 0.5), dict(lead=0.5)),
    "base motion": (lambda m: m.set_base_motion(**BASE), dict(base=True)),
    "gravity": (lambda m: setattr(m, "gravity", (0.0, 0.0, -9.81)),
                dict(gravity=(0.0, 0.0, -9.81))),
    "spring added": (lambda m: m.add_spring("k", "ground", "b3", point_a=(1.0, 1.0, 0.0),
                                            stiffness=20.0, rest_length=0.5, damping=0.3),
                     dict(spring=20.0)),
    "load added": (lambda m: m.add_force("b2", force=(0.0, 2.0, 1.0), point=(0.1, 0.0, 0.0)),
                   dict(load=True)),
}


@pytest.mark.parametrize("change", list(CHANGES))
@pytest.mark.parametrize("name", list(FORMULATIONS))
def test_a_changed_model_gives_the_fresh_answer(name, change):
    fd = FORMULATIONS[name]
    model = spatial_arm()
    before = fd(model, Q, QD)
    apply, params = CHANGES[change]
    version = model.version
    apply(model)
    assert model.version > version
    after = fd(model, Q, QD)
    fresh = fd(spatial_arm(**params), Q, QD)
    np.testing.assert_allclose(after, fresh, rtol=1e-12, atol=1e-12)
    assert np.abs(after - before).max() > 1e-6  # the change mattered


def test_spring_parameters_changed_after_a_call():
    model = spatial_arm(spring=20.0)
    fd = mb.vereshchagin.forward_dynamics
    fd(model, Q, QD)
    model.springs[0].stiffness = 50.0
    np.testing.assert_allclose(fd(model, Q, QD), fd(spatial_arm(spring=50.0), Q, QD), rtol=1e-12)


def test_what_cannot_change_is_refused_with_a_named_error():
    model = spatial_arm()
    with pytest.raises(ModelError, match=r"joint 'j1': 'kind' cannot be changed"):
        model.joint("j1").kind = "prismatic"
    with pytest.raises(ModelError, match=r"joint 'j1': 'parent' cannot be changed"):
        model.joint("j1").parent = 2
    with pytest.raises(ModelError, match=r"body 'b1': 'name' cannot be changed"):
        model.body("b1").name = "x"
    with pytest.raises(ModelError, match=r"body 'b1': mass must be a non-negative"):
        model.body("b1").mass = -1.0
    with pytest.raises(ModelError, match=r"joint 'j1': axis must be a nonzero"):
        model.joint("j1").axis = (0, 0, 0)
    with pytest.raises(ModelError, match=r"body 'ground' is the base"):
        model.bodies[0].mass = 1.0
    with pytest.raises(ModelError, match="Model.n cannot be assigned"):
        model.n = 3
    with pytest.raises(ValueError, match="read-only"):
        model.body("b2").inertia[0, 0] = 7.0
    with pytest.raises(ValueError, match="read-only"):
        model.joint("j2").parent_point[0] = 7.0
    with pytest.raises(AttributeError):
        model.bodies.append(None)  # a tuple: bodies are added with add_body
    # the refusals changed nothing
    np.testing.assert_allclose(mb.tree.forward_dynamics(model, Q, QD),
                               mb.tree.forward_dynamics(spatial_arm(), Q, QD), rtol=1e-14)


def test_copy_is_independent():
    a = spatial_arm(spring=10.0)
    b = a.copy()
    b.body("b2").mass = 3.0
    b.springs[0].damping = 0.0
    assert a.body("b2").mass == 1.0 and a.springs[0].damping == 0.3
    with pytest.raises(ValueError, match="read-only"):
        b.body("b2").inertia[0, 0] = 1.0
    np.testing.assert_allclose(mb.tree.forward_dynamics(a, Q, QD),
                               mb.tree.forward_dynamics(spatial_arm(spring=10.0), Q, QD),
                               rtol=1e-14)


# ------------------------------------------------------------------- bad input
def pendulum():
    return mb.models.double_pendulum()


@pytest.mark.parametrize("name", list(FORMULATIONS))
def test_overflowing_speeds_raise_instead_of_nan(name):
    with pytest.raises(SingularSystemError, match="not finite.*speeds are too large"):
        FORMULATIONS[name](pendulum(), [0.1, 0.2], [1e200, 0.0])


@pytest.mark.parametrize("name", list(FORMULATIONS))
def test_mismatched_batches_name_both_shapes(name):
    with pytest.raises(ShapeError, match=r"q has shape \(5, 2\), qd has shape \(4, 2\)"):
        FORMULATIONS[name](pendulum(), np.zeros((5, 2)), np.zeros((4, 2)))


@pytest.mark.parametrize("name", list(FORMULATIONS))
def test_complex_and_nan_inputs_are_refused(name):
    fd = FORMULATIONS[name]
    with pytest.raises(ShapeError, match="q must be real"):
        fd(pendulum(), np.array([0.1 + 1j, 0.2]), [0.0, 0.0])
    with pytest.raises(ShapeError, match=r"qd\[1\] \(B.angle\) is nan"):
        fd(pendulum(), [0.1, 0.2], [0.0, np.nan])
    with pytest.raises(ShapeError, match="t must be a finite real number"):
        fd(pendulum(), [0.1, 0.2], [0.0, 0.0], t=np.inf)


@pytest.mark.parametrize("name", list(FORMULATIONS))
def test_any_number_of_batch_dimensions(name):
    fd = FORMULATIONS[name]
    rng = np.random.default_rng(0)
    model = spatial_arm()
    q = Q + 0.2 * rng.normal(size=(2, 3, 4))
    qd = QD + rng.normal(size=(3, 4))  # broadcasts against (2, 3, 4)
    out = fd(model, q, qd)
    assert out.shape == (2, 3, 4)
    np.testing.assert_allclose(out[1, 2], fd(model, q[1, 2], qd[2]), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["tree", "tree.spherical", "vereshchagin", "cartesian-dense"])
def test_quaternions_of_any_norm_are_not_silently_used(name):
    fd = FORMULATIONS[name]
    m = mb.Model(gravity=(0, 0, -9.81))
    m.add_body("top", 1.0, [0.5, 0.5, 0.8])
    m.add_joint("ball", "spherical", "ground", "top", child_point=(0, 0, -0.5))
    quat = np.array([np.cos(0.2), np.sin(0.2), 0.0, 0.0])
    w = np.array([0.1, 0.2, 3.0])
    unit_answer = fd(m, quat, w)
    np.testing.assert_allclose(fd(m, quat * (1 + 1e-4), w), unit_answer, rtol=1e-12, atol=1e-12)
    for bad in (5 * quat, np.zeros(4)):
        with pytest.raises(InconsistentStateError, match="joint 'ball'"):
            fd(m, bad, w)


def test_lookups_name_what_is_wrong():
    m = pendulum()
    with pytest.raises(ModelError, match=r"Model.body: unknown body 'nosuch'; known bodies"):
        m.body("nosuch")
    with pytest.raises(ModelError, match=r"unknown joint 'nosuch'; known joints"):
        m.joint("nosuch")


# -------------------------------------------------------------- force elements
def sprung(damping=0.4):
    """A spatial tree with a body-to-body spring-damper, a ground spring, joint springs and
    a state-dependent load."""
    m = spatial_arm()
    m.add_spring("tether", "ground", "b3", point_a=(1.0, 1.0, 0.2), point_b=(0.05, 0.0, 0.0),
                 stiffness=30.0, rest_length=0.4, damping=damping)
    m.add_spring("link", "b1", "b3", point_a=(0.2, 0.0, 0.0), stiffness=12.0, rest_length=0.3,
                 damping=0.5 * damping)
    m.add_joint_spring("j2", stiffness=(3.0, 4.0), rest=(0.1, -0.2), damping=damping)
    m.add_joint_spring("j1", stiffness=2.0, damping=damping)
    return m


@pytest.mark.parametrize("name", list(FORMULATIONS))
def test_springs_and_dampers_act_in_every_formulation(name):
    model = sprung()
    model.add_force("b2", force=lambda t, q, qd: (0.0, -qd[1], np.sin(t)),
                    torque=lambda t, q, qd: (0.1 * q[0], 0.0, 0.0), frame="body")
    model.add_generalized_force(lambda t, q, qd: -0.1 * qd, name="drag")
    expected = reference.forward_dynamics(model, Q, QD, t=0.3)
    np.testing.assert_allclose(FORMULATIONS[name](model, Q, QD, t=0.3), expected, rtol=1e-9,
                               atol=1e-9)


def test_spring_forces_are_minus_the_gradient_of_their_energy():
    model = sprung(damping=0.0)
    h = 1e-6
    grad = np.array([(model.potential_energy(Q + h * e) - model.potential_energy(Q - h * e))
                     / (2 * h) for e in np.eye(4)])
    np.testing.assert_allclose(reference.generalized_applied_forces(model, Q), -grad,
                               rtol=1e-7, atol=1e-7)


def test_coinciding_spring_points_are_refused_where_the_direction_matters():
    m = mb.Model()
    m.add_body("a", 1.0, [1, 1, 1])
    m.add_joint("slide", "prismatic", "ground", "a", axis=(1, 0, 0))
    s = m.add_spring("k", "ground", "a", stiffness=5.0)
    F, _ = m.applied_wrenches([0.0])  # rest length 0, no damper: force zero, defined
    assert np.all(F == 0)
    s.rest_length = 0.1
    with pytest.raises(SingularSystemError, match="spring 'k': its two points coincide"):
        m.applied_wrenches([0.0])
    with pytest.raises(ModelError, match="spring 'k': stiffness must be a non-negative"):
        s.stiffness = -1.0
    with pytest.raises(ModelError, match="spring 'j': damping must be a non-negative"):
        m.add_spring("j", "ground", "a", damping=-0.1)
    with pytest.raises(mb.errors.TopologyError, match="connects body 'a' to itself"):
        m.add_spring("self", "a", "a")


def test_joint_springs_refuse_quaternion_joints():
    m = mb.Model()
    m.add_body("a", 1.0, [1, 1, 1])
    m.add_joint("ball", "spherical", "ground", "a")
    with pytest.raises(ModelError, match="joint 'ball' \\(spherical\\): a joint spring"):
        m.add_joint_spring("ball", stiffness=1.0)


def test_sim_refuses_closed_loops_with_a_useful_message():
    model = mb.models.crank_slider()
    q, qd = mb.models.crank_slider_state(model, 0.3, 1.0)
    with pytest.raises(MbcourseError, match="mb.cartesian.simulate"):
        mb.sim.simulate(model, mb.cartesian.forward_dynamics, (0.0, 0.1), q, qd)


# -------------------------------------------------------------------- layering
FORMULATION_MODULES = ["cartesian", "tree", "vereshchagin.py", "poisson.py", "inertial.py",
                       "symbolic.py", "sim.py", "graph.py", "spatial.py", "joints.py",
                       "model.py", "state.py", "poses.py", "forces.py", "energy.py",
                       "elements.py", "summary.py", "topology.py", "kernels", "loops.py",
                       "kinetic.py", "accuracy.py", "kinematics.py", "urdf.py", "viz.py",
                       "viz3d.py", "compiled.py", "errors.py", "grading.py"]


def _sources(names):
    for name in names:
        path = ROOT / name
        yield from (sorted(path.glob("*.py")) if path.is_dir() else [path])


def _module_of(path):
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path):
    """(imported module, imported names) of every import, relative ones resolved."""
    tree = ast.parse(path.read_text())
    package = _module_of(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            yield mod, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, []


def _module_aliases(path):
    """Local names bound to mbcourse modules by the imports of a file."""
    here = _module_of(path)
    aliases = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level and node.module is None:
            for a in node.names:  # from . import graph as _graph
                aliases[a.asname or a.name] = a.name
        elif isinstance(node, ast.ImportFrom) and node.level:
            for a in node.names:  # from .. import spatial; from . import barycentre as bc
                aliases.setdefault(a.asname or a.name, a.name)
    aliases.pop(here.rsplit(".", 1)[-1], None)
    return aliases


def test_formulations_never_import_the_catalogue_or_private_names():
    problems = []
    for path in _sources(FORMULATION_MODULES):
        here = _module_of(path)
        for mod, names in _imports(path):
            if mod == "mbcourse.models" or (mod.startswith("mbcourse") and "models" in names):
                problems.append(f"{path.name}: imports the example catalogue")
            if mod.startswith("mbcourse") and mod != here:
                problems += [f"{path.name}: imports private {mod}.{n}" for n in names
                             if n.startswith("_") and not n.startswith("__")]
        aliases = _module_aliases(path)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id in aliases and node.attr.startswith("_") \
                    and not node.attr.startswith("__"):
                problems.append(f"{path.name}:{node.lineno}: uses private "
                                f"{node.value.id}.{node.attr}")
    assert problems == []


def test_the_catalogue_imports_no_private_functions():
    problems = [f"models.py: {mod}.{n}" for mod, names in _imports(ROOT / "models.py")
                for n in names if n.startswith("_")]
    assert problems == []


def test_no_switch_on_joint_kind_and_no_private_model_data_outside_the_spine():
    problems = []
    for path in ROOT.rglob("*.py"):
        if path.name in ("joints.py", "model.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute):
                if node.attr == "kind" and not (isinstance(node.value, ast.Name)
                                                and node.value.id in ("group", "self")):
                    problems.append(f"{path.relative_to(ROOT)}:{node.lineno}: .kind")
                if node.attr in ("_cache", "_prepared", "_tree", "_bodies", "_joints"):
                    problems.append(f"{path.relative_to(ROOT)}:{node.lineno}: .{node.attr}")
    assert problems == []


def test_matrix_vector_helper_is_defined_once():
    defs = [f"{p.relative_to(ROOT)}" for p in ROOT.rglob("*.py")
            for node in ast.walk(ast.parse(p.read_text()))
            if isinstance(node, ast.FunctionDef) and node.name in ("_mv", "mv")]
    assert defs == ["spatial.py"]


def test_library_cites_the_book_errata_not_an_outside_digest():
    hits = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py")
            if "digest" in p.read_text().lower()]
    assert hits == []


def _code_lines(node, lines):
    """Lines of code of a function: its docstring, blank and comment lines not counted."""
    body = node.body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        if len(body) == 1:
            return 0
        body = body[1:]
    text = lines[body[0].lineno - 1:node.end_lineno]
    return sum(1 for line in text if line.strip() and not line.strip().startswith("#"))


def test_no_function_is_longer_than_sixty_lines_of_code():
    """One algorithm per short function (ARCHITECTURE.md): nested helpers count on their own
    and inside their parent, so a parent cannot hide a long body in an inner function."""
    long = []
    for path in ROOT.rglob("*.py"):
        lines = path.read_text().splitlines()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = _code_lines(node, lines)
                if n > 60:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({n} lines)")
    assert long == []
