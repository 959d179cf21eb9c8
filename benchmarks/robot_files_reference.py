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
the robot benchmarks (:class:`robots.PinocchioRobot`, :func:`robots.random_states`).
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
                    model = mb.urdf.load(path, floating_base=base == "floating")
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


if __name__ == "__main__":
    main()
