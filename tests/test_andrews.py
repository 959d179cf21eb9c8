"""Andrews' squeezing mechanism (mb.models.andrews_squeezer) against the test set for IVP
solvers: its own equations of motion, written out here from Hairer & Wanner (section VII.7)
as an independent route, its consistent start and its reference solution at t = 0.03."""

import numpy as np
import pytest

import mbcourse as mb
from mbcourse.errors import ModelError
from mbcourse.kernels.loops import loops_forward

P = mb.models.ANDREWS_PARAMETERS
#: the test set's order (beta, Theta, gamma, Phi, delta, Omega, epsilon) -> the Model's first 7
TO_MODEL = [0, 1, 2, 4, 3, 6, 5]
#: the test set's reference at t = 0.03 (PSIDE at tolerance 1e-14): angles and their rates
REF_Q = np.array([0.1581077119629904e+2, -0.1575637105984298e+2, 0.4082224013073101e-1,
                  -0.5347301163226948, 0.5244099658805304, 0.5347301163226948,
                  0.1048080741042263e+1])
REF_QD = np.array([0.1139920302151208e+4, -0.1424379294994111e+4, 0.1103291221937134e+2,
                   0.1929337464421385e+2, 0.5735699284790808, -0.1929337464421385e+2,
                   0.3231791658026955])
#: the test set's accelerations at the start
START_QDD = np.array([14222.4439199541138705911625887, -10666.8329399655854029433719415,
                      0, 0, 0, 0, 0])


def reference_equations(y, yd):
    """The test set's ``M(y) ydd = f(y, yd) - G^T lam``, ``G ydd = -(d/dt G) yd``, solved
    as one KKT system: the accelerations in the test set's order and ``g(y)``. ``M`` and
    ``f`` are the test set's formulas; ``g``, ``G`` and ``(d/dt G) yd`` are written out from
    its constraints."""
    p = P
    be, th, ga, ph, de, om, ep = y
    bep, thp, gap, php, dep, omp, epp = yd
    m1, m2, m3, m4, m5, m6, m7 = (p[f"m{k}"] for k in range(1, 8))
    e_ea, zf_fa = p["e"] - p["ea"], p["zf"] - p["fa"]
    M = np.zeros((7, 7))
    M[0, 0] = (m1 * p["ra"] ** 2 + m2 * (p["rr"] ** 2 - 2 * p["da"] * p["rr"] * np.cos(th)
                                         + p["da"] ** 2) + p["i1"] + p["i2"])
    M[1, 0] = M[0, 1] = m2 * (p["da"] ** 2 - p["da"] * p["rr"] * np.cos(th)) + p["i2"]
    M[1, 1] = m2 * p["da"] ** 2 + p["i2"]
    M[2, 2] = m3 * (p["sa"] ** 2 + p["sb"] ** 2) + p["i3"]
    M[3, 3] = m4 * e_ea ** 2 + p["i4"]
    M[4, 3] = M[3, 4] = m4 * (e_ea ** 2 + p["zt"] * e_ea * np.sin(ph)) + p["i4"]
    M[4, 4] = (m4 * (p["zt"] ** 2 + 2 * p["zt"] * e_ea * np.sin(ph) + e_ea ** 2)
               + m5 * (p["ta"] ** 2 + p["tb"] ** 2) + p["i4"] + p["i5"])
    M[5, 5] = m6 * zf_fa ** 2 + p["i6"]
    M[6, 5] = M[5, 6] = m6 * (zf_fa ** 2 - p["u"] * zf_fa * np.sin(om)) + p["i6"]
    M[6, 6] = (m6 * (zf_fa ** 2 - 2 * p["u"] * zf_fa * np.sin(om) + p["u"] ** 2)
               + m7 * (p["ua"] ** 2 + p["ub"] ** 2) + p["i6"] + p["i7"])
    xd = p["sd"] * np.cos(ga) + p["sc"] * np.sin(ga) + p["xb"]
    yd_ = p["sd"] * np.sin(ga) - p["sc"] * np.cos(ga) + p["yb"]
    L = np.hypot(xd - p["xc"], yd_ - p["yc"])
    force = -p["c0"] * (L - p["l0"]) / L
    fx, fy = force * (xd - p["xc"]), force * (yd_ - p["yc"])
    f = np.array([
        p["mom"] - m2 * p["da"] * p["rr"] * thp * (thp + 2 * bep) * np.sin(th),
        m2 * p["da"] * p["rr"] * bep ** 2 * np.sin(th),
        fx * (p["sc"] * np.cos(ga) - p["sd"] * np.sin(ga))
        + fy * (p["sd"] * np.cos(ga) + p["sc"] * np.sin(ga)),
        m4 * p["zt"] * e_ea * dep ** 2 * np.cos(ph),
        -m4 * p["zt"] * e_ea * php * (php + 2 * dep) * np.cos(ph),
        -m6 * p["u"] * zf_fa * epp ** 2 * np.cos(om),
        m6 * p["u"] * zf_fa * omp * (omp + 2 * epp) * np.cos(om)])

    # each pair of rows is sum_k c_k (cos th_k, sin th_k) - point, th_k = a_k . y + phi_k:
    # E on K2 minus E on K3, on K4 and on K6 (in the test set's g, with sin x = cos(x - pi/2))
    q4 = -np.pi / 2
    E = [(p["rr"], [1, 0, 0, 0, 0, 0, 0], 0.0), (-p["d"], [1, 1, 0, 0, 0, 0, 0], 0.0)]
    pairs = [
        (E + [(-p["ss"], [0, 0, 1, 0, 0, 0, 0], q4)], (p["xb"], p["yb"])),
        (E + [(-p["e"], [0, 0, 0, 1, 1, 0, 0], q4), (-p["zt"], [0, 0, 0, 0, 1, 0, 0], 0.0)],
         (p["xa"], p["ya"])),
        (E + [(-p["zf"], [0, 0, 0, 0, 0, 1, 1], 0.0), (-p["u"], [0, 0, 0, 0, 0, 0, 1], q4)],
         (p["xa"], p["ya"]))]
    g, G, Gdot_yd = [], [], []
    for terms, point in pairs:
        gk, Gk, hk = -np.array(point, dtype=float), np.zeros((2, 7)), np.zeros(2)
        for c, a, phase in terms:
            a = np.array(a, dtype=float)
            th = a @ y + phase
            gk += c * np.array([np.cos(th), np.sin(th)])
            Gk += c * np.outer([-np.sin(th), np.cos(th)], a)
            hk += -c * np.array([np.cos(th), np.sin(th)]) * (a @ yd) ** 2
        g.append(gk)
        G.append(Gk)
        Gdot_yd.append(hk)
    g, G, Gdot_yd = np.concatenate(g), np.concatenate(G), np.concatenate(Gdot_yd)
    K = np.block([[M, G.T], [G, np.zeros((6, 6))]])
    sol = np.linalg.solve(K, np.concatenate([f, -Gdot_yd]))
    return sol[:7], g


def _model():
    return mb.models.andrews_squeezer()


def test_model_is_the_test_sets_mechanism_at_its_start():
    m = _model()
    q, qd = mb.models.andrews_squeezer_state(m)
    ydd, g = reference_equations(np.array(mb.models.ANDREWS_START), np.zeros(7))
    assert np.abs(g).max() < 1e-15                 # the start closes the loops
    scale = np.abs(START_QDD).max()
    assert np.abs(ydd - START_QDD).max() < 1e-12 * scale
    for compiled in (None, False):
        qdd = mb.loops.forward_dynamics(m, q, qd, compiled=compiled)
        assert np.abs(qdd[:7] - START_QDD[TO_MODEL]).max() < 1e-12 * scale
    qdd_c = mb.cartesian.forward_dynamics(m, q, qd)
    assert np.abs(qdd_c[:7] - START_QDD[TO_MODEL]).max() < 1e-12 * scale


@pytest.mark.parametrize("seed", range(3))
def test_every_route_equals_the_test_sets_equations_in_motion(seed):
    rng = np.random.default_rng(seed)
    m = _model()
    q0, _ = mb.models.andrews_squeezer_state(m)
    q0[0] += rng.uniform(-np.pi, np.pi)
    beta_rate = rng.uniform(-1500, 1500)
    qd0 = np.zeros(m.nv)
    qd0[0] = beta_rate
    q, qd = mb.loops.assemble(m, q0, qd0, independent=["O.angle"])
    y, yd = np.empty(7), np.empty(7)
    y[TO_MODEL], yd[TO_MODEL] = q[:7], qd[:7]
    ydd, g = reference_equations(y, yd)
    assert np.abs(g).max() < 1e-12                  # assemble's tolerance
    ref = ydd[TO_MODEL]
    scale = np.abs(ref).max()
    packed = mb.loops._kernel_data(m, mb.loops.prepare(m))
    fast = np.zeros((1, m.nv))
    assert loops_forward(*packed.args(), q[None], qd[None], np.zeros((1, m.nv)), fast)
    fast = fast[0]                                       # the kernel accepted the state
    np.testing.assert_array_equal(fast, mb.loops.forward_dynamics(m, q, qd))
    slow = mb.loops.forward_dynamics(m, q, qd, compiled=False)
    assert np.abs(fast - slow).max() < 1e-11 * scale     # the kernel, with the spring and load
    assert np.abs(slow[:7] - ref).max() < 1e-9 * scale    # the promise of ARCHITECTURE.md
    assert np.abs(mb.cartesian.forward_dynamics(m, q, qd) - slow).max() < 1e-9 * scale


def test_simulation_reproduces_the_reference_solution():
    m = _model()
    q, qd = mb.models.andrews_squeezer_state(m)
    res = mb.loops.simulate(m, (0.0, 0.03), q, qd, rtol=1e-8, atol=1e-8)
    err_q = np.abs(res.q[-1, :7] - REF_Q[TO_MODEL]).max()
    err_v = np.abs(res.qd[-1, :7] - REF_QD[TO_MODEL]).max() / np.abs(REF_QD).max()
    print(f"|q - ref| = {err_q:.1e}, |qd - ref| / max|qd| = {err_v:.1e}, nfev {res.nfev}")
    assert err_q < 1e-6
    assert err_v < 1e-6
    assert res.position_drift.max() < 1e-12


def test_compiled_right_hand_side_equals_the_numpy_one():
    m = _model()
    q, qd = mb.models.andrews_squeezer_state(m)
    fast = mb.loops.simulate(m, (0.0, 0.004), q, qd, rtol=1e-10, atol=1e-10, compiled=True)
    slow = mb.loops.simulate(m, (0.0, 0.004), q, qd, rtol=1e-10, atol=1e-10, compiled=False)
    assert np.abs(fast.q[-1] - slow.q[-1]).max() < 1e-9
    assert np.abs(fast.qd[-1] - slow.qd[-1]).max() < 1e-9 * np.abs(slow.qd[-1]).max()
    with pytest.raises(ModelError, match="no tau"):       # a drive needs the full state
        mb.loops.simulate(m, (0.0, 0.004), q, qd, np.zeros(m.nv), compiled=True)


@pytest.mark.parametrize("bad", [np.zeros(6), [0, 0, 0, 0, 0, 0, np.nan], "abc"])
def test_state_function_refuses_bad_angles(bad):
    with pytest.raises(ModelError, match="7 finite numbers"):
        mb.models.andrews_squeezer_state(_model(), bad)
