"""Pinocchio's forward dynamics of every URDF file of example-robot-data, for the tests.

``tests/test_robot_files.py`` checks that every file whose Pinocchio model is well posed
(a positive-definite mass matrix and a finite ``aba`` at random states) loads with
``mb.urdf.load`` and that every formulation accepting it agrees with Pinocchio. The test
suite installs example-robot-data without its dependencies (the files alone) and not
Pinocchio, so Pinocchio's answers are computed here, once, and stored in
``tests/data/robot_files_pinocchio.npz``: per file and base (``fixed``, ``floating``) the
verdict ``well_posed``, Pinocchio's ``nv``, and for the files mbcourse loads two random
states in mbcourse's coordinates with Pinocchio's ``q''`` converted back. Run it again
(``make robots-reference``) after a change of example-robot-data or Pinocchio::

    .venv/bin/python benchmarks/robot_files_reference.py

The states and the conversion to Pinocchio's coordinates (``continuous`` joints as
``(cos q, sin q)``, the free joint's quaternion order and base-axes velocity) are those of
the robot benchmarks (:class:`robots.PinocchioRobot`, :func:`robots.random_states`). Those
models keep every joint independent (``mb.urdf.load(..., mimic=False)``, Pinocchio's
default), because Pinocchio's ``aba`` does not take mimic joints.

The files with ``<mimic>`` joints are also loaded coupled (``mb.urdf.load``'s default,
``nq = nv`` of the independent coordinates) and compared with Pinocchio built with
``mimic=True`` (fixed base): ``q'' = M^-1 (tau - h)`` from its ``crba`` and ``rnea``, stored
in ``tests/data/robot_files_pinocchio_mimic.npz``.
"""

import pathlib
import sys
import warnings

import numpy as np
import pinocchio as pin

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
import mbcourse as mb  # noqa: E402
from robots import PinocchioRobot, random_states  # noqa: E402

STATES = 2
TARGET = ROOT / "tests" / "data" / "robot_files_pinocchio.npz"
MIMIC_TARGET = ROOT / "tests" / "data" / "robot_files_pinocchio_mimic.npz"


def pinocchio_model(path, floating):
    return (pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating
            else pin.buildModelFromUrdf(str(path)))


def well_posed(pm, rng):
    """A positive-definite mass matrix and a finite ``aba`` at five random states."""
    data = pm.createData()
    for _ in range(5):
        q = pin.randomConfiguration(pm, -np.pi * np.ones(pm.nq), np.pi * np.ones(pm.nq))
        if pm.nv == 0:
            return True
        M = pin.crba(pm, data, q)
        M = np.triu(M) + np.triu(M, 1).T
        a = pin.aba(pm, data, q, rng.normal(size=pm.nv), rng.normal(size=pm.nv))
        if not (np.linalg.eigvalsh(M)[0] > 0.0 and np.all(np.isfinite(a))):
            return False
    return True


def main():
    folder = mb.urdf.example_robot_data()
    if folder is None:
        sys.exit("example-robot-data is not installed (make robots-reference installs the "
                 "bench extra)")
    rng = np.random.default_rng(20261127)
    arrays = {}
    files = sorted(folder.rglob("*.urdf"))
    for n, path in enumerate(files):
        rel = path.relative_to(folder).as_posix()
        for base in ("fixed", "floating"):
            key = f"{rel}|{base}"
            try:
                pm = pinocchio_model(path, base == "floating")
            except (RuntimeError, ValueError) as exc:      # urdfdom refuses the file
                arrays[f"{key}|well_posed"] = np.array(False)
                print(f"{key}: Pinocchio refuses it ({str(exc).splitlines()[0][:60]})")
                continue
            arrays[f"{key}|well_posed"] = np.array(well_posed(pm, rng))
            arrays[f"{key}|nv"] = np.array(pm.nv)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    model = mb.urdf.load(path, floating_base=base == "floating",
                                         mimic=False)
                except mb.errors.ModelError as exc:
                    print(f"{key}: mbcourse refuses it ({str(exc)[-80:]})")
                    continue
            Q, V, T = random_states(model, STATES, seed=2 * n + (base == "floating"))
            robot = PinocchioRobot(path, model)
            arrays[f"{key}|q"], arrays[f"{key}|v"], arrays[f"{key}|tau"] = Q, V, T
            arrays[f"{key}|qdd"] = np.array([robot.qdd(*x) for x in zip(Q, V, T)])
    arrays["pinocchio_version"] = np.array(pin.__version__)
    arrays["files"] = np.array([p.relative_to(folder).as_posix() for p in files])
    np.savez_compressed(TARGET, **arrays)
    print(f"wrote {TARGET.relative_to(ROOT)}: {len(files)} files (Pinocchio {pin.__version__})")


def mimic_qdd(pm, model, q, v, tau):
    """Pinocchio's ``q''`` (``crba``, ``rnea``; its ``aba`` has no mimic joints) of a state
    of a coupled mbcourse model (independent coordinates, fixed base)."""
    data, c = pm.createData(), model.coupling
    full = c.full
    qp, vp, tp, where = np.zeros(pm.nq), np.zeros(pm.nv), np.zeros(pm.nv), []
    position = {int(f): k for k, f in enumerate(c.iv)}
    for joint in full.joints:
        pj = pm.joints[pm.getJointId(joint.name)]
        if pj.nv == 0:                                 # Pinocchio's mimic joint
            continue
        k = position[joint.v_slice.start]
        x = q[k]                                       # one-coordinate joints here
        if pj.nq == 2:
            qp[pj.idx_q:pj.idx_q + 2] = np.cos(x), np.sin(x)
        else:
            qp[pj.idx_q] = x
        vp[pj.idx_v], tp[pj.idx_v] = v[k], tau[k]
        where.append((pj.idx_v, k))
    M = pin.crba(pm, data, qp)
    M = np.triu(M) + np.triu(M, 1).T
    a = np.linalg.solve(M, tp - pin.rnea(pm, data, qp, vp, np.zeros(pm.nv)))
    out = np.empty(model.nv)
    for i, k in where:
        out[k] = a[i]
    return out


def mimic_reference(folder):
    """The files with mimic joints that Pinocchio builds with ``mimic=True``."""
    arrays, names = {}, []
    for n, path in enumerate(sorted(folder.rglob("*.urdf"))):
        if "<mimic" not in path.read_text(errors="replace"):
            continue
        rel = path.relative_to(folder).as_posix()
        try:
            pm = pin.buildModelFromUrdf(str(path), mimic=True)
        except (RuntimeError, ValueError) as exc:
            print(f"{rel}: Pinocchio refuses mimic=True ({str(exc).splitlines()[0][:60]})")
            continue
        pm.gravity.linear[:] = (0.0, 0.0, -9.81)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = mb.urdf.load(path)
        assert model.nv == pm.nv, (rel, model.nv, pm.nv)
        if not model.mimics:                               # "<mimic" in a comment only
            continue
        Q, V, T = random_states(model, STATES, seed=n)
        arrays[f"{rel}|q"], arrays[f"{rel}|v"], arrays[f"{rel}|tau"] = Q, V, T
        arrays[f"{rel}|qdd"] = np.array([mimic_qdd(pm, model, *x) for x in zip(Q, V, T)])
        names.append(rel)
    arrays["files"] = np.array(names)
    arrays["pinocchio_version"] = np.array(pin.__version__)
    np.savez_compressed(MIMIC_TARGET, **arrays)
    print(f"wrote {MIMIC_TARGET.relative_to(ROOT)}: {len(names)} files with mimic joints")


if __name__ == "__main__":
    if sys.argv[1:] == ["--mimic"]:
        mimic_reference(mb.urdf.example_robot_data())
    else:
        main()
        mimic_reference(mb.urdf.example_robot_data())
