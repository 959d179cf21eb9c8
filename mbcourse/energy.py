"""Kinetic and potential energy of a model at a state: the unchecked cores.

Like :mod:`mbcourse.poses` and :mod:`mbcourse.forces`, these evaluate a
:class:`~mbcourse.model.Model` (which only describes) at a state **already checked** once at
the public entry (:mod:`mbcourse.state`): Pinocchio's ``computeKineticEnergy(model, data,
q, v)`` split. ``Model.kinetic_energy`` and ``Model.potential_energy`` are the checked
wrappers; formulations and the simulation monitors call these.

Examples
--------
>>> import mbcourse as mb
>>> from mbcourse import energy
>>> m = mb.models.double_pendulum()
>>> q, qd = m.check_q([0.0, 0.0]), m.check_qd([1.0, 0.0])
>>> round(float(energy.kinetic_energy(m, q, qd)), 6)
1.333542
"""

from __future__ import annotations

import numpy as np

from .forces import spring_geometry
from .poses import body_poses, body_velocities
from .coupling import coupled

__all__ = ["kinetic_energy", "potential_energy"]


@coupled("state")
def kinetic_energy(model, q, qd, t=0.0):
    """``sum(m v^2 / 2 + omega^T J omega / 2)`` (...,) at a checked state."""
    _, A = body_poses(model, q, t)
    vel, omega = body_velocities(model, q, qd, t, A)
    omega_body = (np.swapaxes(A[..., 1:, :, :], -1, -2) @ omega[..., 1:, :, None])[..., 0]
    J_omega = (model.inertias() @ omega_body[..., None])[..., 0]
    return 0.5 * (np.sum(model.masses() * np.sum(vel[..., 1:, :] ** 2, axis=-1), axis=-1)
                  + np.sum(omega_body * J_omega, axis=(-1, -2)))


@coupled("state")
def potential_energy(model, q, t=0.0):
    """Gravity ``-sum(m g . r)`` plus every spring's ``stiffness (L - rest_length)^2 / 2``
    and every joint spring's ``stiffness (q - rest)^2 / 2``, shape (...,), at a checked
    ``q``."""
    r, A = body_poses(model, q, t)
    U = -np.sum(model.masses() * (r[..., 1:, :] @ model.gravity), axis=-1)
    for s in model.springs:
        U = U + s.energy(np.linalg.norm(spring_geometry(s, r, A)[2], axis=-1))
    for s in model.joint_springs:
        dq = q[..., s.joint.q_slice] - s.rest
        U = U + 0.5 * np.sum(s.stiffness * dq * dq, axis=-1)
    return U
