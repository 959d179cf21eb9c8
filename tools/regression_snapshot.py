"""Answers of every formulation on the course's models, to compare a refactor against.

    python tools/regression_snapshot.py tests/data/regression_snapshot.npz   # write
    (tests/test_regression.py recomputes every entry and compares)

The snapshot was written by the code before the Model/data split of issue 26; a refactor must
reproduce it to 1e-12 (relative to the size of the entry). Only the contract functions are
called, with their contract signatures, so that the same script runs on old and new code.
"""

from __future__ import annotations

import sys

import numpy as np

import mbcourse as mb
from mbcourse.errors import MbcourseError

B = 3  # states per model


def _loaded_pendulum():
    m = mb.models.double_pendulum()
    m.add_force("rod2", force=(0.5, -1.0, 0.0), point=(0.5, 0.0, 0.0))
    m.add_joint_spring(m.joints[1].name, stiffness=3.0, rest=0.2, damping=0.4)
    return m


def models():
    """(name, model, q, qd, tau): the test models with states they accept."""
    rng = np.random.default_rng(2026)
    out = []
    trees = {
        "double_pendulum": mb.models.double_pendulum(),
        "loaded_pendulum": _loaded_pendulum(),
        "triple_pendulum": mb.models.triple_pendulum(),
        "spatial_manipulator": mb.models.spatial_manipulator(),
        "telegin_universal": mb.models.telegin_universal(),
        "telegin_cylindrical_4": mb.models.telegin_cylindrical_4(),
        "alyushin_robot": mb.models.alyushin_robot(),
        "floating_spacecraft": mb.models.floating_spacecraft(),
        "solar_array_leaves": mb.models.solar_array_leaves(),
    }
    for name, m in trees.items():
        q = np.array([m.normalize_q(m.neutral_q() + 0.4 * rng.standard_normal(m.nq))
                      for _ in range(B)])
        out.append((name, m, q, rng.standard_normal((B, m.nv)), rng.standard_normal((B, m.nv))))
    loops = {
        "four_bar": (mb.models.four_bar(), mb.models.four_bar_state),
        "crank_slider": (mb.models.crank_slider(), mb.models.crank_slider_state),
    }
    for name, (m, state) in loops.items():
        qs, vs = zip(*(state(m, th, om) for th, om in ((0.3, 1.0), (1.2, -2.0), (2.5, 0.5))))
        out.append((name, m, np.array(qs), np.array(vs), np.zeros((B, m.nv))))
    return out


def routes():
    """(name, function(model, q, qd, tau)) for every contract function compared."""
    return [
        ("tree.forward_dynamics", lambda m, q, v, f: mb.tree.forward_dynamics(m, q, v, f)),
        ("tree.inverse_dynamics", lambda m, q, v, f: mb.tree.inverse_dynamics(m, q, v, f)),
        ("tree.mass_matrix", lambda m, q, v, f: mb.tree.mass_matrix(m, q)),
        ("tree.bias_forces", lambda m, q, v, f: mb.tree.bias_forces(m, q, v)),
        ("vereshchagin.forward_dynamics",
         lambda m, q, v, f: mb.vereshchagin.forward_dynamics(m, q, v, f)),
        ("cartesian.forward_dynamics",
         lambda m, q, v, f: mb.cartesian.forward_dynamics(m, q, v, f)),
        ("loops.forward_dynamics", lambda m, q, v, f: mb.loops.forward_dynamics(m, q, v, f)),
        ("poisson.momenta", lambda m, q, v, f: mb.poisson.momenta(m, q, v)[0]),
        ("poisson.subtree_momenta", lambda m, q, v, f: mb.poisson.momenta(m, q, v)[1]),
        ("poisson.pdot",
         lambda m, q, v, f: mb.poisson.pdot(m, q, mb.poisson.momenta(m, q, v)[0], f)),
        ("poisson.velocities",
         lambda m, q, v, f: mb.poisson.velocities(m, q, mb.poisson.momenta(m, q, v)[0])),
        ("kinetic_energy", lambda m, q, v, f: m.kinetic_energy(q, v)),
        ("potential_energy", lambda m, q, v, f: m.potential_energy(q)),
        ("generalized_forces", lambda m, q, v, f: m.generalized_forces(q, v)),
        ("body_positions", lambda m, q, v, f: m.body_poses(q)[0]),
        ("body_rotations", lambda m, q, v, f: m.body_poses(q)[1]),
    ]


def snapshot():
    """Every answer that the current code gives, keyed ``model/route``."""
    data = {}
    for mname, m, q, qd, tau in models():
        for rname, fn in routes():
            try:
                value = fn(m, q, qd, tau)
                data[f"{mname}/{rname}"] = np.asarray(value, dtype=float)
            except MbcourseError:
                continue        # the route refuses this model (a loop, a free joint ...)
    return data


if __name__ == "__main__":
    np.savez_compressed(sys.argv[1], **snapshot())
