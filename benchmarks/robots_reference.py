"""Reference data for the shipped URDF robots, computed by Pinocchio from the same files.

Pinocchio reads the URDF with its own parser (urdfdom) and computes the dynamics with its
own algorithms (ABA, RNEA, CRBA, frame Jacobians), so agreement with it checks both
``mb.urdf.load`` and every formulation on a real robot. The test suite does not install
Pinocchio (it is a ``bench`` extra); it compares against the arrays this script writes to
``tests/data/robots_pinocchio.npz``. Run it again (``make robots-reference``) after a
change of the shipped files or of Pinocchio::

    .venv/bin/python benchmarks/robots_reference.py

Conventions: Pinocchio's joint angles are the Model's (rotation about the URDF axis from
the joint origin), the state is the same vector for revolute and prismatic joints; frame
velocities and Jacobians are LOCAL_WORLD_ALIGNED (world axes, at the frame origin), linear
rows first, which is the convention of :func:`mbcourse.kinematics.jacobian`.
"""

import pathlib
import sys

import numpy as np
import pinocchio as pin

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import mbcourse as mb  # noqa: E402  (only for the file paths)

FRAMES = {"panda": ["panda_hand_tcp", "panda_link5", "panda_leftfinger"],
          "so100": ["gripper", "jaw", "upper_arm"]}
STATES = 4


def reference(name, rng):
    model = pin.buildModelFromUrdf(str(mb.urdf.robot_path(name)))
    data = model.createData()
    out = {}
    lower = np.where(np.isfinite(model.lowerPositionLimit), model.lowerPositionLimit, -np.pi)
    upper = np.where(np.isfinite(model.upperPositionLimit), model.upperPositionLimit, np.pi)
    q = rng.uniform(lower, upper, size=(STATES, model.nq))
    v = rng.normal(size=(STATES, model.nv))
    tau = rng.normal(size=(STATES, model.nv))
    out["q"], out["v"], out["tau"] = q, v, tau
    out["joint_names"] = np.array(list(model.names)[1:])
    out["qdd"] = np.array([pin.aba(model, data, *x) for x in zip(q, v, tau)])
    out["rnea"] = np.array([pin.rnea(model, data, qi, vi, ti) for qi, vi, ti in zip(q, v, tau)])
    out["M"] = np.array([pin.crba(model, data, qi) for qi in q])
    for M in out["M"]:
        M[:] = np.triu(M) + np.triu(M, 1).T
    out["frames"] = np.array(FRAMES[name])
    pos, rot, jac = [], [], []
    for qi in q:
        pin.forwardKinematics(model, data, qi)
        pin.updateFramePlacements(model, data)
        pin.computeJointJacobians(model, data, qi)
        p_, r_, j_ = [], [], []
        for frame in FRAMES[name]:
            fid = model.getFrameId(frame, pin.BODY)
            p_.append(data.oMf[fid].translation.copy())
            r_.append(data.oMf[fid].rotation.copy())
            j_.append(pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED))
        pos.append(p_)
        rot.append(r_)
        jac.append(j_)
    out["frame_position"], out["frame_rotation"], out["frame_jacobian"] = (
        np.array(pos), np.array(rot), np.array(jac))
    out["total_mass"] = np.array(pin.computeTotalMass(model))
    return out


def main():
    rng = np.random.default_rng(20261125)
    arrays = {}
    for name in ("panda", "so100"):
        for key, value in reference(name, rng).items():
            arrays[f"{name}/{key}"] = value
    arrays["pinocchio_version"] = np.array(pin.__version__)
    target = ROOT / "tests" / "data" / "robots_pinocchio.npz"
    np.savez_compressed(target, **arrays)
    print(f"wrote {target.relative_to(ROOT)} (Pinocchio {pin.__version__})")


if __name__ == "__main__":
    main()
