"""mb.symbolic.lambdify: the compiled single-call route equals the sympy/NumPy route and the
numeric formulations, and compiles itself only after repeated single calls."""
import numpy as np
import pytest

import mbcourse as mb


@pytest.fixture(scope="module")
def arm():
    model = mb.models.spatial_manipulator()
    return model, mb.symbolic.derive(model)


def test_compiled_equals_numpy_and_tree(arm):
    model, sym = arm
    plain = mb.symbolic.lambdify(sym, compiled=False)
    fast = mb.symbolic.lambdify(sym, compiled=True)
    assert fast.compiled and not plain.compiled and fast.compile_seconds > 0
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, qd, tau = rng.uniform(-2, 2, (3, model.nv))
        a = fast.forward_dynamics(q, qd, tau)
        b = plain.forward_dynamics(q, qd, tau)
        c = mb.tree.forward_dynamics(model, q, qd, tau)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(a, c, rtol=1e-10, atol=1e-10)
    # a batch still takes the NumPy route and agrees
    Q, QD = rng.uniform(-2, 2, (2, 4, model.nv))
    np.testing.assert_allclose(fast.forward_dynamics(Q, QD),
                               mb.tree.forward_dynamics(model, Q, QD), rtol=1e-10, atol=1e-10)


def test_compiles_once_the_calls_took_as_long_as_compiling(arm, monkeypatch):
    model, sym = arm
    monkeypatch.setattr(mb.symbolic, "COMPILE_BASE", 0.002)
    monkeypatch.setattr(mb.symbolic, "COMPILE_PER_LINE", 0.0)
    # a clock that advances 0.1 ms per reading, so the count of calls does not depend on how
    # busy the machine is (a loaded machine made each call slow and compiled after 2 calls)
    import time

    ticks = iter(range(10**9))
    monkeypatch.setattr(time, "perf_counter", lambda: next(ticks) * 1e-4)
    fns = mb.symbolic.lambdify(sym)
    assert fns.expected_compile_seconds == 0.002
    q, qd = np.full(model.nv, 0.2), np.full(model.nv, -0.1)
    first = fns.forward_dynamics(q, qd)
    calls = 1
    while not fns.compiled:
        fns.forward_dynamics(np.zeros((3, model.nv)), np.zeros((3, model.nv)))  # batches: free
        fns.forward_dynamics(q, qd)
        calls += 1
        assert calls < 10_000
    # a single call costs microseconds: compiling waited for the 2 ms worth of them
    assert calls > 5
    assert fns.compiled
    np.testing.assert_allclose(fns.forward_dynamics(q, qd), first, rtol=1e-12, atol=1e-12)
