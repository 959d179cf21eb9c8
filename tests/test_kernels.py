"""The compiled route mirrors the chapters: each kernel's intermediate quantities equal the
NumPy route's (not only qdd), and the one front door ``mb.kernels.route``."""

import ast
from pathlib import Path

import numba as nb
import numpy as np
import pytest

import mbcourse as mb
from mbcourse import kernels
from mbcourse.kernels.composite import composite_matrices
from mbcourse.kernels.loops import loops_intermediates
from mbcourse.kernels.vereshchagin import vereshchagin_articulated
from test_vereshchagin import _inward_model, _kernel_model

ROOT = Path(mb.__file__).parent


def _trees():
    """Chains and trees of the catalogue and random trees with slides and welds."""
    rng = np.random.default_rng(2601)
    yield "double_pendulum", mb.models.double_pendulum()
    yield "triple_pendulum", mb.models.triple_pendulum()
    yield "spatial_manipulator", mb.models.spatial_manipulator()
    yield "telegin_cylindrical_3", mb.models.telegin_cylindrical_3()
    for n, pri, weld in ((1, (), ()), (6, (2, 5), (4,)), (15, (3, 7, 11), (9,))):
        yield f"random{n}", _kernel_model(rng, n, pri, weld)


def _forced_crank_slider():
    """The crank-slider with every force element the cut-joint kernel takes: a joint
    spring-damper on a tree joint, a spring-damper across the loop, a load in body axes at
    a point and one in inertial axes."""
    model = mb.models.crank_slider()
    model.add_joint_spring("O", stiffness=3.0, rest=0.2, damping=0.4)
    model.add_spring("s", "ground", "rod", point_a=(0.2, 0.3, 0), point_b=(0.05, 0, 0),
                     stiffness=50.0, rest_length=0.1, damping=2.0)
    model.add_force("rod", force=(1.0, -2.0, 0.0), torque=(0, 0, 0.3), point=(0.1, 0, 0),
                    frame="body")
    model.add_force("slider", force=(-4.0, 0.5, 0.0))
    return model


def _loops():
    for name in ("crank_slider", "four_bar", "n_four_bar"):
        model = getattr(mb.models, name)()
        q, qd = getattr(mb.models, f"{name}_state")(model, 0.3, 1.5)
        yield name, model, q, qd
    model = _forced_crank_slider()
    yield "crank_slider with forces", model, *mb.models.crank_slider_state(model, 0.3, 1.5)
    model = mb.models.andrews_squeezer()
    q, qd = mb.models.andrews_squeezer_state(model)
    yield "andrews_squeezer", model, *mb.loops.assemble(model, q, 100 * qd + 50.0,
                                                        independent=["O.angle"])


def _close(got, want, tol=1e-12, what=""):
    """Equal to ``tol`` relative to the size of the expected values."""
    scale = 1.0 + np.abs(want).max(initial=0.0)
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale, err_msg=what)


# ------------------------------------------------------------------ chapter 4: Vereshchagin
@pytest.mark.parametrize("name, model", list(_trees()))
def test_vereshchagin_kernel_articulated_quantities_equal_the_numpy_recursion(name, model):
    """w_k, M*_k and Q*_k of (3.176)-(3.179), body by body, and qdd."""
    data = kernels.model_data(model)
    assert data is not None, name
    rng = np.random.default_rng(len(name))
    B, n1 = 4, model.n + 1
    q, qd, tau = rng.normal(size=(3, B, model.nv))
    qdd, w = np.zeros((B, model.nv)), np.zeros((B, n1, 6))
    M_star, Q_star = np.zeros((B, n1, 6, 6)), np.zeros((B, n1, 6))
    assert vereshchagin_articulated(*data.args(), q, qd, tau, qdd, w, M_star, Q_star)
    qdd_np, w_np, M_np, Q_np = mb.vereshchagin.articulated(model, q, qd, tau)
    _close(qdd, qdd_np, what="qdd")
    _close(w, w_np, what="w")
    _close(M_star[:, 1:], M_np[:, 1:], what="M*")       # row 0 is the base
    _close(Q_star[:, 1:], Q_np[:, 1:], what="Q*")
    np.testing.assert_allclose(qdd, mb.vereshchagin.forward_dynamics(model, q, qd, tau),
                               rtol=0, atol=0)


# ------------------------------------------------------------------ chapter 4: Ivanov
@pytest.mark.parametrize("name, model", list(_trees())[:4])
def test_ivanov_kernels_momenta_equal_the_numpy_sweep(name, model):
    """The compiled sweep and block Cholesky (alg. of §3, §4): qd and the subtree momenta
    mu_i equal the NumPy sweep's."""
    rng = np.random.default_rng(7)
    q, qd = rng.normal(size=(2, model.nv))
    p, _ = mb.poisson.momenta(model, q, qd)
    qd_np, mu_np = mb.poisson.velocities(model, q, p, return_momenta=True)
    system = mb.poisson.compiled_system(model, q)
    for solver in ("sweep", "cholesky"):
        qd_c, mu_c, _ = system.solve(p, solver)
        _close(qd_c, qd_np, what=solver)
        _close(mu_c[1:], mu_np[1:], what=solver)


# ------------------------------------------------------------------ composite bodies
@pytest.mark.parametrize("name, model", list(_trees()))
def test_composite_kernel_builds_chapter_3s_A_and_B(name, model):
    """The composite-body kernel's A and B equal chapter 3's Phi m Phi^T assembly; its
    public function equals the chapter's forward dynamics."""
    rng = np.random.default_rng(11)
    q, qd, tau = rng.normal(size=(3, 3, model.nv))
    H, hb = np.empty((3, model.nv, model.nv)), np.empty((3, model.nv))
    composite_matrices(*kernels.model_data(model).args(), q, qd, H, hb)
    _close(H, mb.tree.mass_matrix(model, q), what="A")
    _close(-hb, mb.tree.bias_forces(model, q, qd), tol=1e-11, what="B")
    _close(mb.tree.forward_dynamics_composite(model, q, qd, tau),
           mb.tree.forward_dynamics(model, q, qd, tau, compiled=False), tol=1e-10)


def test_forward_dynamics_composite_refuses_what_it_cannot_run():
    model = _kernel_model(np.random.default_rng(3), 3)
    with pytest.raises(mb.ShapeError, match=r"qd\[1\]"):
        mb.tree.forward_dynamics_composite(model, np.zeros(3), np.array([0.0, np.nan, 0.0]))
    with pytest.raises(mb.ModelError, match="forward_dynamics_composite: the compiled "
                                            "composite-body tree equations need"):
        mb.tree.forward_dynamics_composite(_inward_model(), np.zeros(2), np.zeros(2))


# ------------------------------------------------------------------ chapter 6: cut joints
def _numpy_row_order(model, data):
    """Where each of the kernel's rows (cut joint by cut joint, each joint's rows in the
    order of :meth:`mbcourse.joints.Joint.rows`) sits among ``mb.loops.solve``'s rows
    (grouped by row function)."""
    groups, joint_rows = mb.cartesian.constraint_rows(model, False)
    wanted = {int(r) for a in data.cut for r in joint_rows[a]}
    numpy_rows = [int(r) for g in groups.values() for r in g.rows if r in wanted]
    kernel_rows = [int(r) for a in data.cut for r in joint_rows[a]]
    return [numpy_rows.index(r) for r in kernel_rows]


@pytest.mark.parametrize("name, model, q, qd", list(_loops()))
def test_loops_kernel_A_rows_and_multipliers_equal_loops_solve(name, model, q, qd):
    """The reduced tree's A (3.186), the cut joints' rows H_c and gamma_c (3.188) and their
    multipliers lambda (3.189), row by row, equal mb.loops.solve's (spatial rows, chapter 2's
    form); the generalized reaction H_c^T lambda closes A qdd_T = B + H_c^T lambda."""
    data = mb.loops.prepare(model, None, False)
    packed = mb.loops._kernel_data(model, data)
    assert packed is not None
    tau = np.linspace(-0.5, 0.5, model.nv)
    N, K = len(packed.q_tree), len(packed.cints)
    H, lam = np.zeros((1, N, N)), np.zeros((1, 6 * K))
    qdd, reaction = np.zeros((1, model.nv)), np.zeros((1, N))
    rows = loops_intermediates(*packed.args(), q[None], qd[None], tau[None], qdd, H, lam,
                               reaction)
    order = _numpy_row_order(model, data)
    assert rows[0] == len(order) == data.nc
    sol = mb.loops.solve(model, q, qd, tau, planar=False)
    _close(H, sol.A, what="A")
    _close(lam[0, :rows[0]], sol.lam[0, order], what="lambda")
    assert np.all(lam[0, rows[0]:] == 0.0)
    _close(reaction[0], sol.Hc[0].T @ sol.lam[0], what="H_c^T lambda")
    _close(sol.A[0] @ qdd[0, data.v_tree], sol.rhs[0] + reaction[0], what="A qdd = B + H^T lam")
    for planar in (None, False):
        _close(qdd, mb.loops.solve(model, q, qd, tau, planar=planar).qdd, tol=1e-10, what="qdd")
    np.testing.assert_array_equal(qdd[0], mb.loops.forward_dynamics(model, q, qd, tau))


def test_loops_kernel_hands_callables_in_as_numbers_and_leaves_a_cut_joint_spring():
    """A load given as a callable and a control law (with a drive on the cut joint's
    coordinate too) run compiled, evaluated once per configuration and handed in as
    numbers; a joint spring on a cut joint (it would act through B*) keeps the NumPy route,
    and compiled=True says why; every answer equals chapter 2's route."""
    calls = []

    def push(t, q, qd):
        calls.append(t)
        return np.array([1.0 + q[0], -0.5 * qd[1], 0.0])

    def spring_on_cut(m):
        m.add_joint_spring("B", stiffness=2.0)

    def callables(m):
        m.add_force("rod", force=push, point=(0.05, 0.0, 0.0))
        m.add_generalized_force(lambda t, q, qd: -0.3 * qd + np.sin(t), name="law")

    for change, compiled in ((spring_on_cut, False), (callables, True)):
        model = mb.models.crank_slider()
        change(model)
        q, qd = mb.models.crank_slider_state(model, 0.3, 1.5)
        q, qd = np.array([q, q]), np.array([qd, 1.2 * qd])
        packed = mb.loops._kernel_data(model, mb.loops.prepare(model))
        assert (packed is not None) == compiled, change.__name__
        want = mb.cartesian.forward_dynamics(model, q, qd, t=0.3)
        if not compiled:
            with pytest.raises(mb.ModelError, match="joint springs on uncut joints"):
                mb.loops.forward_dynamics(model, q, qd, t=0.3, compiled=True)
        calls.clear()
        got = mb.loops.forward_dynamics(model, q, qd, t=0.3, compiled=compiled or None)
        _close(got, want, tol=1e-10, what=change.__name__)
        assert len(calls) == (2 if compiled else 0)


def test_loops_kernel_declines_an_open_state_and_the_checked_route_names_the_joint():
    model = mb.models.four_bar()
    q, qd = mb.models.four_bar_state(model, 0.3, 1.5)
    q = q.copy()
    q[1] += 0.1
    with pytest.raises(mb.InconsistentStateError):
        mb.loops.forward_dynamics(model, q, qd)


# ------------------------------------------------------------------ the front door
def test_route_checks_the_inputs_once_and_only_when_needed():
    model = mb.models.triple_pendulum()
    calls = []

    def check(q, qd):
        calls.append(1)
        return model.check_state(q, qd)

    q, qd = np.array([0.3, -0.2, 0.1]), np.array([1.0, 0.5, -2.0])
    want = mb.vereshchagin.forward_dynamics(model, q, qd, compiled=False)
    out, state = kernels.route(model, "vereshchagin", q, qd, None, 0.0, what="t",
                               check=lambda: check(q, qd))
    assert calls == [] and state is None                 # float64 arrays: no conversion
    _close(out, want)
    out, state = kernels.route(model, "vereshchagin", q.tolist(), qd, None, 0.0, what="t",
                               check=lambda: check(q.tolist(), qd))
    assert calls == [1] and state is not None            # a list: checked once
    _close(out, want)
    assert kernels.route(model, "vereshchagin", q, qd, None, 0.0, what="t",
                         check=lambda: check(q, qd), compiled=False) == (None, None)
    assert calls == [1]


def test_route_refuses_with_the_kernels_reason_and_falls_back():
    model = mb.Model()                        # the second joint points toward the base
    model.add_body("a", 1.0, np.eye(3))
    model.add_body("b", 1.0, np.eye(3))
    model.add_joint("ja", "revolute", "ground", "a", axis=(0, 0, 1))
    model.add_joint("jb", "revolute", "b", "a", parent_point=(1, 0, 0), axis=(0, 0, 1))
    q = np.zeros(2)
    with pytest.raises(mb.ModelError,
                       match=r"^mb\.x: the compiled Cartesian route needs solver='ldlt', "
                             r"planar=None, joints pointing away .* rows; use compiled=None$"):
        kernels.route(model, "cartesian", q, q, None, 0.0, what="mb.x",
                      check=lambda: model.check_state(q, q), compiled=True)
    assert kernels.route(model, "cartesian", q, q, None, 0.0, what="mb.x",
                         check=lambda: model.check_state(q, q)) == (None, None)
    ok = _kernel_model(np.random.default_rng(5), 2)
    with pytest.raises(mb.ModelError, match="compiled Cartesian route needs solver='ldlt'"):
        mb.cartesian.forward_dynamics(ok, q, q, solver="schur", compiled=True)


@nb.njit(nogil=True)
def _twice_tau(scale, q, qd, tau, qdd):
    for b in range(q.shape[0]):
        for k in range(q.shape[1]):
            qdd[b, k] = scale[0] * tau[b, k]
    return True


class _Scale(tuple):
    nv = 2

    def args(self, gravity=True):
        return (np.array([2.0 if gravity else 3.0]),)


def test_a_registered_kernel_runs_through_the_front_door_batched_on_every_core():
    kernels.register("test-twice", _twice_tau, refusal="the test kernel needs nothing",
                     pack=lambda model: _Scale())
    try:
        model = mb.models.double_pendulum()
        B = kernels.PARALLEL_BATCH + 5                   # the batch is split over threads
        q, tau = np.zeros((B, 2)), np.arange(2.0 * B).reshape(B, 2)
        out, _ = kernels.route(model, "test-twice", q, q, tau, 0.0, what="t", check=None)
        np.testing.assert_array_equal(out, 2 * tau)
        out, _ = kernels.route(model, "test-twice", q[0], q[0], tau[3], 0.0, what="t",
                               check=None, gravity=False)
        np.testing.assert_array_equal(out, 3 * tau[3])
    finally:
        del kernels.KERNELS["test-twice"]


def test_the_former_module_keeps_its_names_with_a_deprecation_warning():
    from mbcourse import compiled
    for name in set(compiled.__all__) - {"run"}:        # run warns when it is called
        with pytest.warns(DeprecationWarning, match=f"mbcourse.compiled.{name} is deprecated; "
                                                    "use mbcourse.kernels"):
            assert getattr(compiled, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        compiled.nothing
    with pytest.warns(DeprecationWarning):
        assert compiled.tree_forward is mb.kernels.composite.composite_forward
        data = compiled.model_data(mb.models.double_pendulum())
        out = np.zeros((1, 2))
        assert compiled.run(compiled.vereshchagin_forward, data, np.zeros((1, 2)),
                            np.zeros((1, 2)), np.zeros((1, 2)), out)
    _close(out[0], mb.vereshchagin.forward_dynamics(mb.models.double_pendulum(), [0, 0],
                                                    [0, 0], compiled=False))


def test_kernels_name_the_joint_kinds():
    """No bare ``kind == 0``: the kernels compare joint kinds with REVOLUTE, PRISMATIC, WELD."""
    bare = []
    for path in sorted((ROOT / "kernels").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                left = ast.unparse(node.left)
                if ("kind" in left or left.endswith(", 0]")) and any(
                        isinstance(c, ast.Constant) and isinstance(c.value, int)
                        for c in node.comparators):
                    bare.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    assert bare == []


def test_cached_machine_code_is_dropped_when_any_kernel_source_changes(tmp_path):
    """numba keys a cached function on its own file only; the kernels' cache is tied to all
    their sources (a stamp of their fingerprint), so a kernel never runs a changed callee's old
    code from the cache."""
    from mbcourse.kernels import _drop_stale_machine_code as drop
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 2\n")
    drop(tmp_path)                                      # a fresh folder: the stamp only
    cache = tmp_path / "__pycache__"
    stamp = (cache / "kernel-sources.txt").read_text()
    code = [cache / "a.f-1.py311.nbi", cache / "a.f-1.py311.1.nbc", cache / "a.pyc"]
    for f in code:
        f.write_text("machine code")
    drop(tmp_path)                                      # unchanged sources: kept
    assert all(f.exists() for f in code)
    (tmp_path / "b.py").write_text("y = 3\n")           # another module changed: dropped
    drop(tmp_path)
    assert [f.exists() for f in code] == [False, False, True]
    assert (cache / "kernel-sources.txt").read_text() not in ("", stamp)


# ------------------------------------------------------------------ simulation right-hand sides
def test_compiled_damping_power_equals_the_numpy_one():
    """The dissipated-energy channel's rate: spring-dampers (the flyball governor) and joint
    dampers on every kind of joint that takes them, at random states."""
    from mbcourse.kernels.common import dissipation
    flyball = mb.models.flyball_governor()
    damped = mb.models.telegin_cylindrical_3()
    for j in damped.joints:
        damped.add_joint_spring(j.name, stiffness=1.0, damping=0.3 + j.index)
    rng = np.random.default_rng(7)
    for model in (flyball, damped):
        packed = kernels.model_data(model)
        for _ in range(5):
            q, qd = rng.normal(size=model.nq), rng.normal(size=model.nv)
            want = -mb.forces.damping_power(model, q, qd)
            assert want > 0.0
            _close(dissipation(*packed.args(), q, qd), want)


def test_loops_simulation_compiled_and_numpy_right_hand_sides_agree_with_dampers():
    """The crank-slider with a joint damper and a spring-damper across the loop, by every
    stabilization: the compiled right-hand side and the NumPy one integrate the same motion
    and dissipate the same energy."""
    model = _forced_crank_slider()
    q, qd = mb.models.crank_slider_state(model, 0.3, 5.0)
    for stabilization in ("projection", "partitioning", "none"):
        runs = [mb.loops.simulate(model, (0.0, 0.1), q, qd, rtol=1e-10, atol=1e-10,
                                  stabilization=stabilization, compiled=compiled)
                for compiled in (True, False)]
        fast, slow = runs
        assert fast.dissipated[-1] > 1e-3
        _close(fast.q[-1], slow.q[-1], tol=1e-9, what=stabilization)
        _close(fast.dissipated[-1:], slow.dissipated[-1:], tol=1e-9, what=stabilization)


def test_borrowed_views_share_the_data_and_count_no_reference():
    """``common.borrow``: a view of the same memory (writes reach the owner) whose
    ``meminfo`` is null, so numba counts no references on it or on views taken of it."""
    from mbcourse.kernels.common import borrow

    @nb.njit
    def write_through(a):
        b = borrow(a)
        b[1:3] = 7.0
        return b[1:].sum()

    a = np.arange(5.0)
    assert write_through(a) == 7.0 + 7.0 + 3.0 + 4.0
    assert a.tolist() == [0.0, 7.0, 7.0, 3.0, 4.0]


def test_kernels_free_what_they_allocate():
    """Every forward kernel returns its work arrays to numba's allocator (borrowed views
    keep no buffer alive and free none twice): allocations and frees balance over 50 calls,
    single states and batches split over the threads."""
    from numba.core.runtime import _nrt_python, rtsys

    cases = [(mb.vereshchagin.forward_dynamics, {"compiled": True}),
             (mb.tree.forward_dynamics, {"compiled": True}),
             (mb.tree.forward_dynamics_composite, {}),        # compiled only
             (mb.cartesian.forward_dynamics, {"solver": "ldlt", "compiled": True})]
    model = mb.models.spatial_manipulator()
    rng = np.random.default_rng(7)
    q, qd = rng.normal(size=(2, 100, model.nv))
    loop = mb.models.crank_slider()
    lq, lqd = mb.models.crank_slider_state(loop, 0.3, 1.5)
    for f, options in cases:                       # compiled, warm
        f(model, q, qd, **options)
    mb.loops.forward_dynamics(loop, lq, lqd, compiled=True)
    counting = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()               # what NUMBA_NRT_STATS=1 switches on
    try:
        before = rtsys.get_allocation_stats()
        for _ in range(50):
            for f, options in cases:
                f(model, q[0], qd[0], **options)
                f(model, q, qd, **options)
            mb.loops.forward_dynamics(loop, lq, lqd, compiled=True)
        after = rtsys.get_allocation_stats()
    finally:
        if not counting:
            _nrt_python.memsys_disable_stats()
    assert after.alloc - before.alloc > 0                       # the kernels did allocate
    assert after.alloc - before.alloc == after.free - before.free
    assert after.mi_alloc - before.mi_alloc == after.mi_free - before.mi_free
