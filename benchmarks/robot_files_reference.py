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

Conventions: Pinocchio's ``continuous`` joints have two coordinates ``(cos q, sin q)``
and one speed; its free joint's quaternion is ``(x, y, z, w)`` and its linear velocity
and force in the base's axes; mbcourse's free joint takes them in world axes
(:class:`PinocchioRobot` in benchmarks/robots.py does the same conversion).
"""

import pathlib
import sys
import warnings

import numpy as np
import pinocchio as pin

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import mbcourse as mb  # noqa: E402

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


def to_pinocchio(pm, model, q, v, tau):
    """Pinocchio's ``(q, v, tau)`` of an mbcourse state, and the map of speeds back."""
    qp, vp, tp = np.zeros(pm.nq), np.zeros(pm.nv), np.zeros(pm.nv)
    iv = np.zeros(pm.nv, int)
    free = None
    for joint in model.joints:
        pj = pm.joints[pm.getJointId(joint.name)]
        qs, vs = joint.q_slice, joint.v_slice
        if joint.floating:
            free = vs
            qp[pj.idx_q:pj.idx_q + 3] = q[qs][:3]
            qp[pj.idx_q + 3:pj.idx_q + 7] = q[qs][[4, 5, 6, 3]]
        elif pj.nq == 2 and joint.nq == 1:                  # continuous: (cos, sin)
            qp[pj.idx_q:pj.idx_q + 2] = np.cos(q[qs][0]), np.sin(q[qs][0])
        else:
            assert (pj.nq, pj.nv) == (joint.nq, joint.nv), joint.name
            qp[pj.idx_q:pj.idx_q + pj.nq] = q[qs]
        iv[pj.idx_v:pj.idx_v + pj.nv] = np.arange(vs.start, vs.stop)
    vp[:], tp[:] = v[iv], tau[iv]
    if free is not None:
        RT = mb.spatial.quat_to_matrix(q[3:7]).T
        vp[:3], tp[:3] = RT @ v[:3], RT @ tau[:3]
    return qp, vp, tp, iv, free is not None


def pinocchio_qdd(pm, model, q, v, tau):
    qp, vp, tp, iv, free = to_pinocchio(pm, model, q, v, tau)
    a = pin.aba(pm, pm.createData(), qp, vp, tp)
    out = np.empty_like(a)
    out[iv] = a
    if free:
        out[:3] = mb.spatial.quat_to_matrix(q[3:7]) @ (a[:3] + np.cross(vp[3:6], vp[:3]))
    return out


def random_states(model, rng):
    Q = rng.uniform(-np.pi, np.pi, size=(STATES, model.nq))
    for joint in model.joints:
        if joint.floating:
            Q[:, joint.q_slice][:, :3] = rng.normal(size=(STATES, 3))
            quat = rng.normal(size=(STATES, 4))
            Q[:, joint.q_slice.start + 3:joint.q_slice.stop] = (
                quat / np.linalg.norm(quat, axis=1, keepdims=True))
    return Q, rng.normal(size=(STATES, model.nv)), rng.normal(size=(STATES, model.nv))


def main():
    folder = mb.urdf.example_robot_data()
    if folder is None:
        sys.exit("example-robot-data is not installed (make robots-reference installs the "
                 "bench extra)")
    rng = np.random.default_rng(20261127)
    arrays = {}
    files = sorted(folder.rglob("*.urdf"))
    for path in files:
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
            Q, V, T = random_states(model, rng)
            arrays[f"{key}|q"], arrays[f"{key}|v"], arrays[f"{key}|tau"] = Q, V, T
            arrays[f"{key}|qdd"] = np.array([pinocchio_qdd(pm, model, *x)
                                             for x in zip(Q, V, T)])
    arrays["pinocchio_version"] = np.array(pin.__version__)
    arrays["files"] = np.array([p.relative_to(folder).as_posix() for p in files])
    np.savez_compressed(TARGET, **arrays)
    print(f"wrote {TARGET.relative_to(ROOT)}: {len(files)} files (Pinocchio {pin.__version__})")


if __name__ == "__main__":
    main()
