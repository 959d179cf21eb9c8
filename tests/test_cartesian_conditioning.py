"""Chapter 2's LDL^T on bodies whose inertias span seven decades (issue 28, item 4).

A human-like tree of 24 bodies: heavy trunk and limbs (up to 50 kg, 10 kg m^2) joined by
light links (1e-3 kg, 1e-6 kg m^2) that make multi-axis joints out of revolute ones (neck,
shoulders, wrists, hips, ankles) -- the light link sits *between* heavy bodies, so each
joint block ``Q D^-1 Q^T`` of Baraff's factorization spans many decades. Baraff's ``LDL^T``
(NumPy and compiled) must agree with the dense KKT solve and with Vereshchagin's recursion
to 1e-10 of the answer's size, fixed base and floating base (a ``free`` root joint). Before
the square-root form of :func:`mbcourse.cartesian.solvers.solve_ldlt` the NumPy route was
off by up to 1e-8 in qdd and 6e-8 in lam (fixed base), 9e-9 and 8e-7 (floating base) on
these states; now 6e-13 and 2e-12.
"""

import numpy as np
import pytest

import mbcourse as mb

LIGHT = (1e-3, (1e-6, 1e-6, 1e-6))
TOL = 1e-10


def _bodies():
    """(name, parent, (mass, principal moments), parent point, child point)."""
    out = [("pelvis", None, (15.0, (1.0, 0.8, 0.6)), None, None),
           ("torso", "pelvis", (50.0, (10.0, 8.0, 4.0)), (0, 0, 0.1), (0, 0, -0.3)),
           ("neck", "torso", LIGHT, (0, 0, 0.3), (0, 0, 0)),
           ("head", "neck", (5.0, (0.03, 0.03, 0.02)), (0, 0, 0.05), (0, 0, -0.1))]
    for side, y in (("l", 1), ("r", -1)):
        out += [(f"shoulder_{side}", "torso", LIGHT, (0, 0.2 * y, 0.25), (0, 0, 0)),
                (f"uarm_{side}", f"shoulder_{side}", (3.0, (0.02, 0.02, 0.004)), (0, 0, 0),
                 (0, 0, 0.15)),
                (f"farm_{side}", f"uarm_{side}", (2.0, (0.01, 0.01, 0.002)), (0, 0, -0.15),
                 (0, 0, 0.13)),
                (f"wrist_{side}", f"farm_{side}", LIGHT, (0, 0, -0.13), (0, 0, 0)),
                (f"hand_{side}", f"wrist_{side}", (0.4, (3e-4, 3e-4, 1e-4)), (0, 0, 0),
                 (0, 0, 0.04)),
                (f"hip_{side}", "pelvis", LIGHT, (0, 0.1 * y, -0.1), (0, 0, 0)),
                (f"thigh_{side}", f"hip_{side}", (10.0, (1.0, 1.0, 0.2)), (0, 0, 0),
                 (0, 0, 0.2)),
                (f"shank_{side}", f"thigh_{side}", (4.0, (0.3, 0.3, 0.02)), (0, 0, -0.2),
                 (0, 0, 0.2)),
                (f"ankle_{side}", f"shank_{side}", LIGHT, (0, 0, -0.2), (0, 0, 0)),
                (f"foot_{side}", f"ankle_{side}", (1.0, (0.004, 0.003, 0.002)), (0, 0, 0),
                 (-0.05, 0, 0.03))]
    return out


def humanoid(floating, seed=0):
    """The tree with revolute joints about random axes; the root revolute (fixed base) or
    free (floating base)."""
    rng = np.random.default_rng(seed)
    m = mb.Model(gravity=(0, 0, -9.81))
    for name, parent, (mass, inertia), pp, cp in _bodies():
        m.add_body(name, mass, inertia)
        if parent is None and floating:
            m.add_joint("root", "free", "ground", name)
        elif parent is None:
            m.add_joint("root", "revolute", "ground", name, parent_point=(0, 0, 1.0),
                        axis=(0, 0, 1))
        else:
            m.add_joint(f"j_{name}", "revolute", parent, name, parent_point=pp,
                        child_point=cp, axis=rng.normal(size=3))
    return m


def _states(model, floating, seed, B=5):
    rng = np.random.default_rng(seed)
    q = 0.7 * rng.normal(size=(B, model.nq))
    if floating:  # the free joint's unit quaternion
        q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1, keepdims=True)
    qd, tau = rng.normal(size=(2, B, model.nv))
    return q, qd, tau


def _close(got, want, what):
    err = np.abs(got - want).max() / np.abs(want).max()
    assert err <= TOL, f"{what}: relative error {err:.2e} > {TOL:g}"


def test_the_model_spans_the_inertias():
    inertia = np.array([np.linalg.eigvalsh(b.inertia) for b in humanoid(False).bodies[1:]])
    mass = np.array([b.mass for b in humanoid(False).bodies[1:]])
    assert inertia.min() == pytest.approx(1e-6) and inertia.max() == pytest.approx(10.0)
    assert mass.min() == pytest.approx(1e-3) and mass.max() == pytest.approx(50.0)


@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ldlt_multipliers_and_body_accelerations_equal_the_dense_solve(floating, seed):
    model = humanoid(floating, seed)
    q, qd, tau = _states(model, floating, seed)
    dense = mb.cartesian.solve(model, q, qd, tau, solver="dense", planar=False)
    ldlt = mb.cartesian.solve(model, q, qd, tau, solver="ldlt", planar=False)
    _close(ldlt.ddX, dense.ddX, "ddX, ldlt against dense")
    _close(ldlt.lam, dense.lam, "lam, ldlt against dense")
    _close(ldlt.qdd, dense.qdd, "qdd, ldlt against dense")


@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("compiled", [None, False], ids=["compiled", "numpy"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ldlt_qdd_equals_vereshchagin_and_the_dense_solve(floating, compiled, seed):
    model = humanoid(floating, seed)
    q, qd, tau = _states(model, floating, seed)
    ver = mb.vereshchagin.forward_dynamics(model, q, qd, tau, compiled=False)
    dense = mb.cartesian.forward_dynamics(model, q, qd, tau, solver="dense")
    _close(dense, ver, "dense against Vereshchagin (the references agree)")
    got = mb.cartesian.forward_dynamics(model, q, qd, tau, solver="ldlt", compiled=compiled)
    _close(got, ver, "ldlt against Vereshchagin")
    _close(got, dense, "ldlt against dense")


def test_the_compiled_multipliers_equal_the_numpy_route():
    """The kernel's multipliers (packed joints' order) on the fixed-base tree."""
    from mbcourse.kernels import model_data
    from mbcourse.kernels.cartesian import cartesian_solve
    model = humanoid(False, 4)
    q, qd, tau = _states(model, False, 4)
    data = model_data(model)
    assert data is not None
    order = [j.index for j in model.outward_joints("test")]
    qdd, lam = np.zeros((len(q), model.nv)), np.zeros((len(q), 5 * len(order)))
    assert cartesian_solve(*data.args(), q, qd, tau, qdd, lam)
    dense = mb.cartesian.solve(model, q, qd, tau, solver="dense", planar=False)
    want = np.concatenate([dense.lam[:, dense.eq.joint_rows[a]] for a in order], axis=1)
    _close(lam, want, "compiled lam against dense")
