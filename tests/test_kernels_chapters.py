"""Chapters 3 and 2 compiled: the kernels compute the chapters' algorithms, and their
intermediate quantities equal the NumPy route's (not only qdd).

* chapter 3 (:mod:`mbcourse.kernels.tree`): the path structure ``T``, ``c*``, ``d*``,
  ``Phi`` (``Jv``, ``Jw``), ``omega``, ``eps``, ``U``, then ``A`` and ``B`` of (3.167);
* chapter 2 (:mod:`mbcourse.kernels.cartesian`): the rows ``Q_i, Q_j, b`` (2.22), ``M`` and
  ``F``, the body accelerations and the multipliers ``lam`` of ``mb.cartesian.solve``;
* ``qdd`` of both against the answers of the code before the kernels were rewritten
  (``tests/data/kernels_chapters_before.npz``, made by the pre-change
  ``mb.tree.forward_dynamics`` and ``mb.cartesian.forward_dynamics(solver="ldlt")``).
"""

from pathlib import Path

import numpy as np
import pytest

import mbcourse as mb
from mbcourse import kernels
from mbcourse.kernels.cartesian import cartesian_solve, cartesian_terms
from mbcourse.kernels.common import (G_ROWS, I_ROWS, MAX_ROWS, PERPENDICULAR, POINT_PLANE, R_TYPE,
                                     ROW_WIDTH)
from mbcourse.kernels.tree import tree_matrices, tree_terms
from test_vereshchagin import _kernel_model

BEFORE = np.load(Path(__file__).parent / "data" / "kernels_chapters_before.npz")


def _models():
    """Chains (revolute, spatial, with slides) and branched trees with slides and welds."""
    rng = np.random.default_rng(2626)
    for name in ("double_pendulum", "triple_pendulum", "spatial_manipulator",
                 "telegin_cartesian", "telegin_universal"):
        yield name, getattr(mb.models, name)()
    yield "branched6", _kernel_model(rng, 6, (2, 5), (4,))
    yield "branched15", _kernel_model(rng, 15, (3, 7, 11), (9,))


MODELS = list(_models())


def _close(got, want, tol=1e-12, what=""):
    """Equal to ``tol`` relative to the size of the expected values."""
    scale = 1.0 + np.abs(want).max(initial=0.0)
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale, err_msg=what)


def _states(name):
    return BEFORE[f"{name}/q"], BEFORE[f"{name}/qd"], BEFORE[f"{name}/tau"]


def _packed(model):
    """The packed constants and, per packed joint, its index in ``model.joints``."""
    data = kernels.model_data(model)
    assert data is not None
    order = [j.index for j in model.outward_joints("test")]
    return data, order


# ------------------------------------------------------------------ chapter 3
@pytest.mark.parametrize("name, model", MODELS)
def test_tree_kernel_path_structure_is_the_path_matrix(name, model):
    """``path[j]`` lists exactly the joints with ``T_aj = -1`` (1.4), base first."""
    data, order = _packed(model)
    q, qd, _ = _states(name)
    _, _, ws = tree_terms(*data.args(), q[0], qd[0])
    T = mb.tree.prepare(model).T
    for j in range(1, model.n + 1):
        on_path = [order[a] for a in ws.path[j, :ws.depth[j]]]
        assert sorted(on_path) == sorted(np.flatnonzero(T[:, j - 1] == -1).tolist())
        assert set(T[:, j - 1].tolist()) <= {-1, 0}
        parents = [model.joints[a].parent for a in on_path]
        assert parents[0] == 0 and model.joints[on_path[-1]].child == j


@pytest.mark.parametrize("name, model", MODELS)
def test_tree_kernel_intermediates_equal_the_numpy_terms(name, model):
    """``c*`` (3.150), ``d*`` (3.152), ``sum_k T_ak d*_kj``, ``Phi`` (3.163), ``-(pT)^T``
    (3.122), ``omega`` (3.114), ``eps`` (3.120), ``U`` and ``p``, ``k`` (3.101), (3.104)."""
    data, order = _packed(model)
    q, qd, _ = _states(name)
    for b in range(q.shape[0]):
        _, _, ws = tree_terms(*data.args(), q[b], qd[b])
        tt = mb.tree.terms(model, q[b], qd[b])
        T = mb.tree.prepare(model).T
        _close(ws.Cstar, tt.Cstar[:, order], what=f"{name}: c*")
        _close(ws.dstar[:, 1:], tt.dstar, what=f"{name}: d*")
        TD = np.einsum("ak,kjx->ajx", T, tt.dstar[1:])
        _close(ws.TD[:, 1:], TD[order], what=f"{name}: sum_k T_ak d*_kj")
        _close(ws.Jv[1:], tt.Jv, what=f"{name}: Phi^T")
        _close(ws.Jw[1:], tt.Jw, what=f"{name}: -(pT)^T")
        _close(ws.omega, tt.omega, what=f"{name}: omega")
        _close(ws.eps[1:], tt.alpha_bias, what=f"{name}: eps at qdd = 0")
        _close(ws.U[1:], tt.acc_bias, what=f"{name}: U")
        _close(ws.Ab, tt.A, what=f"{name}: orientations")
        _close(ws.P, tt.P, what=f"{name}: p")               # per speed
        _close(ws.K, tt.K, what=f"{name}: k")


@pytest.mark.parametrize("name, model", MODELS)
def test_tree_kernel_A_and_B_equal_mass_matrix_and_bias_forces(name, model):
    """``A = Phi m Phi^T + (pT) J (pT)^T`` and ``B`` of (3.167), batch by batch."""
    data, _ = _packed(model)
    q, qd, _ = _states(name)
    A = np.zeros((q.shape[0], model.nv, model.nv))
    B = np.zeros((q.shape[0], model.nv))
    tree_matrices(*data.args(), q, qd, A, B)
    _close(A, mb.tree.mass_matrix(model, q), what=f"{name}: A")
    _close(B, mb.tree.bias_forces(model, q, qd), what=f"{name}: B")
    assert np.abs(A - np.swapaxes(A, 1, 2)).max() == 0.0


@pytest.mark.parametrize("name, model", MODELS)
def test_tree_forward_dynamics_runs_chapter_3s_kernel_and_keeps_its_answers(name, model):
    """The default route is chapter 3's kernel; qdd equals the NumPy route and the
    answers before the rewrite."""
    assert kernels.KERNELS["tree"].function is kernels.tree.tree_forward
    q, qd, tau = _states(name)
    fast = mb.tree.forward_dynamics(model, q, qd, tau)
    _close(fast, BEFORE[f"{name}/tree"], what=f"{name}: qdd against before")
    _close(fast, mb.tree.forward_dynamics(model, q, qd, tau, compiled=False),
           what=f"{name}: qdd against NumPy")
    qdd = np.zeros_like(q)
    assert kernels.tree.tree_forward(*kernels.model_data(model).args(), q, qd, tau, qdd)
    np.testing.assert_array_equal(qdd, fast)
    _close(mb.tree.forward_dynamics_composite(model, q, qd, tau), fast,
           what=f"{name}: composite bodies")


def _massless_slider():
    """A slider moving no mass (a packed model the Model itself would refuse)."""
    return kernels.pack_chain([kernels.PRISMATIC], [0], [1], [(0.0, 0.0, 1.0)], [np.eye(3)],
                              [(0.0, 0.0, 0.0)], [(0.0, 0.0, 0.0)], [0], [0], [0.0],
                              [np.eye(3)], (0.0, 0.0, -9.81))


def test_tree_kernel_declines_a_singular_mass_matrix_and_an_overflow():
    """``A = 0`` (a joint moving no mass) or speeds that overflow: the kernel returns
    False (the front door then runs the NumPy route, which names the fault)."""
    zero = np.zeros((1, 1))
    assert not kernels.tree.tree_forward(*_massless_slider(), zero, zero, zero, zero.copy())
    model = mb.models.double_pendulum()
    huge = np.full((1, 2), 1e200)
    assert not kernels.tree.tree_forward(*kernels.model_data(model).args(), huge, huge,
                                         huge, np.zeros((1, 2)))


# ------------------------------------------------------------------ chapter 2
def _numpy_solution(model, q, qd, tau, order):
    """``mb.cartesian.solve``'s equations and multipliers, rows in the packed joints' order."""
    sol = mb.cartesian.solve(model, q, qd, tau, planar=False, solver="ldlt")
    eq, ddX, lam = sol.eq, sol.ddX, sol.lam
    rows = np.concatenate([eq.joint_rows[a] for a in order])
    return eq, ddX, lam, rows


@pytest.mark.parametrize("name, model", MODELS)
def test_cartesian_kernel_rows_and_multipliers_equal_the_numpy_route(name, model):
    """``Q_i``, ``Q_j``, ``b`` (2.22) in the chapter's axes, ``M``, ``F`` (2.5)-(2.9), the
    body accelerations and ``lam`` of (2.49), joint by joint."""
    data, order = _packed(model)
    q, qd, tau = _states(name)
    for b in range(q.shape[0]):
        eq, ddX, lam, rows = _numpy_solution(model, q[b], qd[b], tau[b], order)
        qdd, lam_k = np.zeros(model.nv), np.zeros(eq.nc)
        ok, cw = cartesian_terms(*data.args(), q[b], qd[b], tau[b], qdd, lam_k)
        assert ok
        nr = data.ints[:, I_ROWS]
        stack = lambda X: np.concatenate([X[a, :nr[a]] for a in range(len(order))])  # noqa
        point_plane = set(mb.cartesian.constraint_rows(model)[0]["point_plane"].rows.tolist())
        types = data.geo[:, G_ROWS + R_TYPE::ROW_WIDTH][:, :MAX_ROWS]
        assert stack(types).tolist() == [POINT_PLANE if r in point_plane else PERPENDICULAR
                                         for r in rows]
        _close(stack(cw.Qi), eq.Qi[0, rows], what=f"{name}: Q_i")
        _close(stack(cw.Qj), eq.Qj[0, rows], what=f"{name}: Q_j")
        _close(stack(cw.b), eq.b[0, rows], what=f"{name}: b")
        _close(cw.M[1:], eq.M, what=f"{name}: M")
        _close(cw.F[1:], eq.F[0], what=f"{name}: F")
        _close(cw.x[1:], ddX[0], what=f"{name}: ddX")
        _close(lam_k, lam[0, rows], what=f"{name}: lam")
        _close(qdd, mb.cartesian.forward_dynamics(model, q[b], qd[b], tau[b], compiled=False),
               what=f"{name}: qdd")


@pytest.mark.parametrize("name, model", MODELS)
def test_cartesian_solve_writes_the_multipliers_of_a_batch(name, model):
    """``cartesian_solve``: qdd and ``lam`` of a batch, the multipliers of
    ``mb.cartesian.solve`` (sign of (2.26)) in the packed joints' order."""
    data, order = _packed(model)
    q, qd, tau = _states(name)
    eq, _, lam, rows = _numpy_solution(model, q, qd, tau, order)
    qdd, lam_k = np.zeros_like(q), np.zeros((q.shape[0], eq.nc))
    assert cartesian_solve(*data.args(), q, qd, tau, qdd, lam_k)
    _close(lam_k, lam[:, rows], what=f"{name}: lam")
    _close(qdd, BEFORE[f"{name}/cartesian"], what=f"{name}: qdd against before")


@pytest.mark.parametrize("name, model", MODELS)
def test_cartesian_forward_dynamics_runs_chapter_2s_kernel_and_keeps_its_answers(name, model):
    """``solver="ldlt"`` runs chapter 2's kernel through the front door; qdd equals the
    NumPy route (dense and ldlt) and the answers before the rewrite."""
    assert kernels.KERNELS["cartesian"].function is kernels.cartesian.cartesian_forward
    q, qd, tau = _states(name)
    fast = mb.cartesian.forward_dynamics(model, q, qd, tau, solver="ldlt")
    _close(fast, BEFORE[f"{name}/cartesian"], what=f"{name}: qdd against before")
    for solver in ("ldlt", "dense"):
        slow = mb.cartesian.forward_dynamics(model, q, qd, tau, solver=solver, compiled=False)
        _close(fast, slow, what=f"{name}: qdd against NumPy {solver}")
    qdd = np.zeros_like(q)
    assert kernels.cartesian.cartesian_forward(*kernels.model_data(model).args(), q, qd, tau,
                                               qdd)
    np.testing.assert_array_equal(qdd, fast)


def test_cartesian_kernel_declines_a_singular_block():
    """A body without mass: ``D_c = M_c`` is not positive definite, the kernel returns
    False."""
    zero = np.zeros((1, 1))
    assert not cartesian_solve(*_massless_slider(), zero, zero, zero, zero.copy(),
                               np.zeros((1, 5)))


def _forced(model, seed):
    """``model`` with constant loads (inertial and body axes, at points, a pure torque), a
    spring-damper to the ground and between bodies, and a joint spring-damper on every
    joint that moves."""
    rng = np.random.default_rng(seed)
    bodies = [b.name for b in model.bodies[1:]]
    model.add_force(bodies[-1], force=rng.normal(size=3), point=rng.normal(size=3) * 0.2)
    model.add_force(bodies[0], force=rng.normal(size=3), torque=rng.normal(size=3),
                    point=rng.normal(size=3) * 0.2, frame="body")
    model.add_force(bodies[len(bodies) // 2], torque=rng.normal(size=3))
    model.add_spring("to ground", "ground", bodies[-1], point_a=(0.3, 0.2, 0.5),
                     point_b=(0.1, 0.0, 0.0), stiffness=40.0, rest_length=0.2, damping=3.0)
    model.add_spring("between", bodies[0], bodies[-1], point_a=(0.0, 0.1, 0.0),
                     point_b=(-0.1, 0.0, 0.05), stiffness=25.0, rest_length=0.1, damping=0.5)
    for j in model.joints:
        if j.nv:
            model.add_joint_spring(j.name, stiffness=2.0 + j.index, rest=0.3, damping=0.4)
    return model


@pytest.mark.parametrize("name, model", [
    ("spatial_manipulator", _forced(mb.models.spatial_manipulator(), 1)),
    ("branched6", _forced(_kernel_model(np.random.default_rng(2626), 6, (2, 5), (4,)), 2))])
def test_cartesian_kernel_applies_loads_spring_dampers_and_joint_springs(name, model):
    """Chapter 2's ``F`` (2.5)-(2.9) with the constant loads and spring-dampers, the joint
    springs as joint wrenches, the multipliers and qdd: equal to the NumPy route's, and qdd
    to Vereshchagin's NumPy recursion (an independent route), also with a load and a
    control law given as callables."""
    data, order = _packed(model)
    assert kernels.KERNELS["cartesian"].pack(model) is data
    rng = np.random.default_rng(3)
    q, qd, tau = rng.normal(size=(3, 4, model.nv))
    for b in range(q.shape[0]):
        eq, ddX, lam, rows = _numpy_solution(model, q[b], qd[b], tau[b], order)
        qdd, lam_k = np.zeros(model.nv), np.zeros(eq.nc)
        ok, cw = cartesian_terms(*data.args(), q[b], qd[b], tau[b], qdd, lam_k)
        assert ok
        _close(cw.F[1:], eq.F[0], what=f"{name}: F")
        _close(lam_k, lam[0, rows], tol=1e-11, what=f"{name}: lam")
    fast = mb.cartesian.forward_dynamics(model, q, qd, tau, solver="ldlt", compiled=True)
    _close(fast, mb.cartesian.forward_dynamics(model, q, qd, tau, solver="ldlt",
                                               compiled=False), tol=1e-11, what=name)
    _close(fast, mb.vereshchagin.forward_dynamics(model, q, qd, tau, compiled=False),
           tol=1e-11, what=f"{name}: against Vereshchagin")
    # forces given as callables: evaluated once per configuration, handed in as numbers
    model.add_force(model.bodies[1].name, force=lambda t, q, qd: (0.0, np.cos(t), q[0]),
                    point=(0.1, 0.0, 0.0))
    model.add_generalized_force(lambda t, q, qd: -0.2 * qd, name="law")
    fast = mb.cartesian.forward_dynamics(model, q, qd, tau, t=0.2, solver="ldlt",
                                         compiled=True)
    _close(fast, mb.vereshchagin.forward_dynamics(model, q, qd, tau, t=0.2, compiled=False),
           tol=1e-11, what=f"{name}: with callables")
