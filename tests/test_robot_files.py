"""Every robot of example-robot-data that Pinocchio can simulate loads in mbcourse and agrees.

The 69 URDF files of example-robot-data (installed by ``make test`` with ``pip install
--no-deps``: the files alone) include massless "virtual" links, point masses (mass without
inertia), inertias no rigid body can have and a root link called ``world``. For each file
and base (fixed, floating) ``tests/data/robot_files_pinocchio.npz`` holds Pinocchio's
verdict (a positive-definite mass matrix and a finite ``aba``: well posed) and its
``q''`` at two random states (``benchmarks/robot_files_reference.py``,
``make robots-reference``). Every well-posed file must load, and every formulation must
give Pinocchio's ``q''`` to 1e-9 (relative to the largest entry, or absolute below 1) or
refuse the model with a named mbcourse error: ``mb.cartesian`` with ``solver="ldlt"``
when a body has no mass or no inertia, the recursions on a robot with no joint at all.
"""

import pathlib
import warnings

import numpy as np
import pytest

import mbcourse as mb
from mbcourse.errors import MbcourseError, ModelError

FOLDER = mb.urdf.example_robot_data()
pytestmark = pytest.mark.skipif(
    FOLDER is None, reason="example-robot-data is not installed (make test installs the "
    "files with pip install --no-deps example-robot-data; the bench extra brings it too)")

DATA = pathlib.Path(__file__).parent / "data"
REFERENCE = np.load(DATA / "robot_files_pinocchio.npz") if FOLDER is not None else None
FILES = [str(f) for f in REFERENCE["files"]] if REFERENCE is not None else []
MIMIC = np.load(DATA / "robot_files_pinocchio_mimic.npz") if FOLDER is not None else None
MIMIC_FILES = [str(f) for f in MIMIC["files"]] if MIMIC is not None else []
TOL = 1e-9

METHODS = {
    "vereshchagin": lambda m, q, v, t: mb.vereshchagin.forward_dynamics(m, q, v, t),
    "vereshchagin (NumPy)": lambda m, q, v, t: mb.vereshchagin.forward_dynamics(
        m, q, v, t, compiled=False),
    "tree": lambda m, q, v, t: mb.tree.forward_dynamics(m, q, v, t),
    "tree (NumPy)": lambda m, q, v, t: mb.tree.forward_dynamics(m, q, v, t, compiled=False),
    "tree composite": lambda m, q, v, t: mb.tree.forward_dynamics_composite(m, q, v, t),
    "cut joints": lambda m, q, v, t: mb.loops.forward_dynamics(m, q, v, t),
    "cartesian dense": lambda m, q, v, t: mb.cartesian.forward_dynamics(m, q, v, t),
    "cartesian ldlt": lambda m, q, v, t: mb.cartesian.forward_dynamics(m, q, v, t,
                                                                       solver="ldlt"),
}


def _load(path, floating):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # inertia warnings (tested below)
        return mb.urdf.load(path, floating_base=floating, mimic=False)


def _singular_bodies(model):
    return [b.name for b in model.bodies[1:]
            if b.mass <= 0.0 or np.linalg.eigvalsh(b.inertia)[0] <= 1e-12 * max(
                np.abs(b.inertia).max(), 1e-300)]


@pytest.mark.parametrize("base", ["fixed", "floating"])
@pytest.mark.parametrize("name", FILES)
def test_every_well_posed_robot_file_loads_and_agrees_with_pinocchio(name, base):
    key = f"{name}|{base}"
    path = FOLDER / name
    if not bool(REFERENCE[f"{key}|well_posed"]):
        try:                                     # ill posed: refused by name, or loaded
            model = _load(path, base == "floating")
        except ModelError as exc:
            assert str(path) in str(exc)
            return
    else:
        model = _load(path, base == "floating")
        assert model.nv == int(REFERENCE[f"{key}|nv"])
    if f"{key}|q" not in REFERENCE.files:
        pytest.fail(f"{key}: mbcourse loads it but the reference has no states: run make "
                    "robots-reference")
    Q, V, T, A = (REFERENCE[f"{key}|{x}"] for x in ("q", "v", "tau", "qdd"))
    well_posed = bool(REFERENCE[f"{key}|well_posed"])
    scale = max(1.0, np.abs(A).max()) if A.size else 1.0
    for label, method in METHODS.items():
        try:
            got = method(model, Q, V, T)
        except MbcourseError as exc:
            if model.nv == 0:
                assert "no joints" in str(exc) or "away from the base" in str(exc), label
            elif label == "cartesian ldlt" and _singular_bodies(model):
                assert isinstance(exc, ModelError) and "solver='dense'" in str(exc)
                assert any(repr(b) in str(exc) for b in _singular_bodies(model))
            elif well_posed:
                raise AssertionError(f"{key}: {label} refuses a well-posed robot: {exc}")
            continue
        assert np.all(np.isfinite(got)), (key, label)
        if well_posed:
            err = np.abs(got - A).max() / scale
            assert err < TOL, f"{key}: {label} differs from Pinocchio by {err:.1e}"


def test_the_files_the_issue_named_load_with_warnings_that_name_file_link_and_inequality():
    """icub_reduced (point masses, massless links), romeo_small and tiago (inertias that
    violate the triangle inequality: a warning by default, refused with strict=True)."""
    icub = FOLDER / "icub_description/robots/icub_reduced.urdf"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = mb.urdf.load(icub)
    masses = {b.name: b.mass for b in model.bodies[1:]}
    assert masses["r_hip_1"] > 0 and not np.any(model.body("r_hip_1").inertia)   # a point mass
    romeo = FOLDER / "romeo_description/urdf/romeo_small.urdf"
    with pytest.warns(mb.errors.InertiaWarning) as caught:
        mb.urdf.load(romeo)
    text = str(caught[0].message)
    assert str(romeo) in text and "link 'RShoulderYawLink' <inertial>" in text
    assert "violates the triangle inequality" in text and "strict=True" in text
    with pytest.raises(ModelError, match=r"romeo_small\.urdf: link 'RShoulderYawLink' "
                                         r"<inertial>.*triangle inequality"):
        mb.urdf.load(romeo, strict=True)


def test_refusals_name_the_file_and_the_element():
    falcon = FOLDER / "falcon_description/urdf/falcon.urdf"
    with pytest.raises(ModelError, match=r"falcon\.urdf: joint 'top_propeller_joint': its "
                                         r"child link 'Z_propeller' is not defined"):
        mb.urdf.load(falcon)
    laas = FOLDER / "romeo_description/urdf/romeo_laas_small.urdf"
    with pytest.raises(ModelError, match=r"romeo_laas_small\.urdf: link 'LHipPitch_link' "
                                         r"<inertial>.*positive semi-definite"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.errors.InertiaWarning)   # its other links
        mb.urdf.load(laas)



def _reduced_lagrange(model, q, v, tau):
    """``q''`` of a coupled model from the uncoupled model's ``A``, ``B`` (chapter 3) and
    the map ``G``: ``G^T A G q'' = G^T (tau_full + B)`` (not the multipliers of the library)."""
    c = model.coupling
    qf, vf = c.q(q), c.qd(v)
    A = mb.tree.mass_matrix(c.full, qf)
    B = mb.tree.bias_forces(c.full, qf, vf)
    return np.linalg.solve(c.G.T @ A @ c.G, tau + c.G.T @ B)


@pytest.mark.parametrize("name", MIMIC_FILES)
def test_mimic_joints_agree_with_pinocchio_built_with_mimic(name):
    model = mb.urdf.load(FOLDER / name)
    assert model.nv == model.uncoupled().nv - len(model.mimics) > 0
    Q, V, T, A = (MIMIC[f"{name}|{x}"] for x in ("q", "v", "tau", "qdd"))
    scale = max(1.0, np.abs(A).max())
    for label, method in METHODS.items():
        if label == "cartesian ldlt" and _singular_bodies(model):
            continue
        got = method(model, Q, V, T)
        assert got.shape == A.shape
        err = np.abs(got - A).max() / scale
        assert err < TOL, f"{name}: {label} differs from Pinocchio (mimic=True) by {err:.1e}"
    lagrange = np.array([_reduced_lagrange(model, *x) for x in zip(Q, V, T)])
    assert np.abs(lagrange - A).max() / scale < TOL


@pytest.mark.parametrize("name", ["talos_data/robots/talos_full_v2_box.urdf",
                                  "talos_data/robots/talos_full_v2.urdf"])
def test_mimic_joints_pinocchio_refuses_keep_lagranges_equations(name):
    """Pinocchio 4.1 refuses these with mimic=True (a mimic joint met before its primary);
    the coupling does not depend on the joints' order."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mb.errors.InertiaWarning)
        model = mb.urdf.load(FOLDER / name)
    assert len(model.mimics) >= 12 and model.nv == model.uncoupled().nv - len(model.mimics)
    rng = np.random.default_rng(5)
    q, v, tau = (rng.normal(size=model.nv) for _ in range(3))
    ref = _reduced_lagrange(model, q, v, tau)
    scale = max(1.0, np.abs(ref).max())
    for label in ("vereshchagin", "tree composite", "cartesian dense"):
        got = METHODS[label](model, q, v, tau)
        assert np.abs(got - ref).max() / scale < TOL, label
    full = model.coupling.q(q)                  # the coupled coordinates follow the primary
    for c in model.mimics:
        qj = full[model.joint(c.joint).q_slice.start]
        assert qj == pytest.approx(c.multiplier * full[model.joint(c.primary).q_slice.start]
                                   + c.offset, abs=1e-15)


def test_a_mimic_of_a_joint_the_file_does_not_have_is_refused_by_name():
    alex = FOLDER / "alex_description/urdf/alex_psyonic_hands.urdf"
    with pytest.raises(ModelError, match=r"alex_psyonic_hands\.urdf: joint 'Left_index_q2': "
                                         r"<mimic joint='index_q1'> names no moving joint.*"
                                         r"mimic=False"):
        mb.urdf.load(alex)
    assert mb.urdf.load(alex, mimic=False).nv == int(REFERENCE[
        "alex_description/urdf/alex_psyonic_hands.urdf|fixed|nv"])
