"""Chapter 8: Eliseev & Khomenko's error model, held to the exact kinematics of the Model.

Every coefficient is checked by a second route: finite differences of ``Model.body_poses``
(first and second order), residual orders of the Taylor models (2, 3, 4), the two
recurrences against each other and against the closed forms, the bounds against Monte-Carlo
samples, and Gauss-Newton calibration against ``scipy.optimize.least_squares``.
"""

import itertools

import numpy as np
import pytest
from scipy.optimize import least_squares

import mbcourse as mb
from mbcourse import accuracy as acc
from mbcourse.spatial import axis_angle

from strategies import moving_base, random_model


def unit_rows(rng, n):
    v = rng.normal(size=(n, 3))
    return v / np.linalg.norm(v, axis=1)[:, None]


def random_chain_model(rng, kinds=("revolute", "revolute", "prismatic", "revolute",
                                   "revolute"), reverse=(1, 3)):
    """A random serial Model (each body hangs from the previous one), some joints reversed."""
    model = mb.Model()
    from strategies import joint_args, random_body, random_rotation
    for k, kind in enumerate(kinds, start=1):
        random_body(model, f"b{k}", rng)
        a, b = (f"b{k}", k - 1) if k - 1 in reverse else (k - 1, f"b{k}")
        model.add_joint(f"j{k}", kind, a, b, parent_point=rng.normal(size=3),
                        child_point=rng.normal(size=3), orientation=random_rotation(rng),
                        **joint_args(kind, rng))
    return model


def exact(model, q, body, point):
    r, A = model.body_poses(q)
    return A[..., body, :, :], r[..., body, :] + A[..., body, :, :] @ point


def exact_errors(model, q, dq, body, point):
    R0, r0 = exact(model, q, body, point)
    R1, r1 = exact(model, q + dq, body, point)
    return acc.rotation_vector(R1 @ np.swapaxes(R0, -1, -2)), r1 - r0


# ------------------------------------------------------------------ description
def test_rotation_vector_inverts_axis_angle():
    rng = np.random.default_rng(0)
    axes = unit_rows(rng, 50)
    angles = np.concatenate([rng.uniform(0, np.pi - 1e-6, 45), [1e-12, 1e-8, 1e-5, 0.0, 3.1]])
    theta = acc.rotation_vector(axis_angle(axes, angles))
    np.testing.assert_allclose(theta, axes * angles[:, None], atol=1e-12, rtol=1e-12)
    # tiny rotations keep full relative accuracy
    tiny = acc.rotation_vector(axis_angle([0.0, 0.0, 1.0], 1e-9))
    assert abs(tiny[2] - 1e-9) < 1e-22


def test_chain_from_model_reproduces_model_kinematics():
    rng = np.random.default_rng(1)
    for trial in range(5):
        model = random_chain_model(rng)
        point = rng.normal(size=3)
        q = rng.normal(size=(4, model.nq))
        for body in range(1, model.n + 1):
            ch = acc.chain(model, body, point)
            R, r = ch.pose(q)
            R0, r0 = exact(model, q, body, point)
            np.testing.assert_allclose(R, R0, atol=1e-13)
            np.testing.assert_allclose(r, r0, atol=1e-12)


def test_chain_from_model_with_moving_base_and_branches():
    rng = np.random.default_rng(2)
    model = moving_base(random_model(rng, ["revolute", "prismatic", "revolute", "revolute",
                                           "revolute"], reverse=(2,)))
    q = rng.normal(size=model.nq)
    point = rng.normal(size=3)
    t = 0.7
    for body in range(1, model.n + 1):
        ch = acc.chain(model, body, point, t=t)
        r, A = model.body_poses(q, t)
        R, rp = ch.pose(q)
        np.testing.assert_allclose(R, A[body], atol=1e-13)
        np.testing.assert_allclose(rp, r[body] + A[body] @ point, atol=1e-12)
        # joints off the path have zero columns
        a, b = acc.influence(model, q, body, point, t=t)
        on_path = np.zeros(model.nq, bool)
        on_path[[m.q for m in ch.motions if m.q is not None]] = True
        assert np.all(a[:, ~on_path] == 0) and np.all(b[:, ~on_path] == 0)
        assert np.any(b[:, on_path] != 0)


def test_seed_chain_to_model_and_back():
    rng = np.random.default_rng(3)
    n = 4
    ch = acc.revolute_chain(rng.uniform(0.3, 1.0, n), unit_rows(rng, n), unit_rows(rng, n))
    model, tip = ch.to_model()
    back = acc.chain(model, model.n, tip)
    q = rng.normal(size=(3, n))
    for x, y in zip(ch.pose(q), back.pose(q)):
        np.testing.assert_allclose(x, y, atol=1e-12)
    for x, y in zip(ch.influence(q), back.influence(q)):
        np.testing.assert_allclose(x, y, atol=1e-12)
    # every formulation runs on the seed's chain: Vereshchagin = the tree equations
    qd = rng.normal(size=n)
    np.testing.assert_allclose(mb.vereshchagin.forward_dynamics(model, q[0], qd),
                               mb.tree.forward_dynamics(model, q[0], qd), atol=1e-9)


# ------------------------------------------------------------------ first order
def test_influence_equals_finite_differences_batched():
    rng = np.random.default_rng(4)
    model = random_chain_model(rng)
    body, point = model.n, rng.normal(size=3)
    q = rng.normal(size=(3, model.nq))
    a, b = acc.influence(model, q, body, point)
    assert a.shape == b.shape == (3, 3, model.nv)
    h = 1e-6
    for k in range(model.nq):
        e = np.zeros(model.nq)
        e[k] = h
        tp, rp = exact_errors(model, q, e, body, point)
        tm, rm = exact_errors(model, q, -e, body, point)
        np.testing.assert_allclose(a[:, :, k], (tp - tm) / (2 * h), atol=1e-8)
        np.testing.assert_allclose(b[:, :, k], (rp - rm) / (2 * h), atol=1e-8)
    # a batch equals row-by-row calls
    for i in range(3):
        ai, bi = acc.influence(model, q[i], body, point)
        np.testing.assert_array_equal(ai, a[i])
        np.testing.assert_array_equal(bi, b[i])


def test_double_pendulum_by_hand():
    m = mb.models.double_pendulum(l1=1.0, l2=0.5)
    q = np.array([0.3, -0.7])
    a, b = acc.influence(m, q, "rod2", point=(0.25, 0.0, 0.0))
    np.testing.assert_allclose(a, [[0, 0], [0, 0], [1, 1]], atol=1e-15)
    tip = np.array([np.cos(0.3) + 0.5 * np.cos(-0.4), np.sin(0.3) + 0.5 * np.sin(-0.4), 0.0])
    elbow = np.array([np.cos(0.3), np.sin(0.3), 0.0])
    np.testing.assert_allclose(b[:, 0], np.cross([0, 0, 1], tip), atol=1e-14)
    np.testing.assert_allclose(b[:, 1], np.cross([0, 0, 1], tip - elbow), atol=1e-14)


# ------------------------------------------------------------------ orders of the models
def measured_orders(model, q, body, point, direction, hs=(4e-2, 2e-2, 1e-2, 5e-3)):
    a, b = acc.influence(model, q, body, point)
    a2, b2 = acc.second_order(model, q, body, point)
    a3, b3 = acc.third_order(model, q, body, point)
    res = []
    for h in hs:
        dq = h * direction
        th, dr = exact_errors(model, q, dq, body, point)
        row = []
        for X, X2, X3, e in ((a, a2, a3, th), (b, b2, b3, dr)):
            lin = X @ dq
            quad = lin + 0.5 * np.einsum("xkl,k,l->x", X2, dq, dq)
            cub = quad + np.einsum("xkls,k,l,s->x", X3, dq, dq, dq) / 6.0
            row += [np.linalg.norm(e - lin), np.linalg.norm(e - quad), np.linalg.norm(e - cub)]
        res.append(row)
    res = np.array(res)
    return np.log2(res[:-1] / res[1:]).min(axis=0), res


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_residual_orders_on_random_chains(seed):
    """Linear residual ~ D^2, quadratic ~ D^3 (order >= 2.8), cubic ~ D^4."""
    rng = np.random.default_rng(seed)
    model = random_chain_model(rng, ("revolute",) * 3 + ("prismatic", "revolute", "revolute"))
    q = rng.normal(size=model.nq)
    d = rng.normal(size=model.nq)
    orders, res = measured_orders(model, q, model.n, rng.normal(size=3), d / np.linalg.norm(d))
    theta_lin, theta_quad, theta_cub, r_lin, r_quad, r_cub = orders
    assert 1.9 <= theta_lin <= 2.2 and 1.9 <= r_lin <= 2.2
    assert theta_quad >= 2.8 and r_quad >= 2.8
    assert theta_cub >= 3.7 and r_cub >= 3.7
    assert res[-1, 2] < 1e-9 and res[-1, 5] < 1e-9


def test_planar_chain_orientation_is_exactly_linear():
    """Fact 33: parallel axes, chi1 = chi2 = 0."""
    rng = np.random.default_rng(8)
    ch = acc.revolute_chain(rng.uniform(0.2, 1.0, 5), np.tile([0, 0, 1.0], (5, 1)),
                            unit_rows(rng, 5) * [1, 1, 0] / np.linalg.norm(
                                unit_rows(rng, 5) * [1, 1, 0], axis=1)[:, None])
    mc = acc.monte_carlo(ch, rng.normal(size=5), 0.3, samples=200)
    assert mc.chi1.max() < 1e-14 and mc.chi2.max() < 1e-14
    assert mc.rho1.max() > 1e-3            # the position is not linear


# ------------------------------------------------------------------ recurrences and closed forms
@pytest.mark.parametrize("seed", [9, 10])
def test_forward_backward_closed_form_and_exact_agree(seed):
    rng = np.random.default_rng(seed)
    model = random_chain_model(rng)
    ch = acc.chain(model, model.n, rng.normal(size=3))
    q = rng.normal(size=model.nq)
    dq, dp, dpt = (rng.normal(size=s) for s in (model.nq, ch.n_p, 3))
    fw = ch.propagate(q, 1e-3 * dq, 1e-3 * dp, 1e-3 * dpt)
    bw = ch.propagate(q, 1e-3 * dq, 1e-3 * dp, 1e-3 * dpt, direction="backward")
    for x, y in ((fw.theta1, bw.theta1), (fw.theta2, bw.theta2), (fw.dr1, bw.dr1),
                 (fw.dr2, bw.dr2)):
        np.testing.assert_allclose(x, y, atol=1e-15)
    # the closed forms (15) and (16) from the coefficients, mixed term with coefficient 1
    c = ch.coefficients(q)
    x, y, u = 1e-3 * dq, 1e-3 * dp, 1e-3 * dpt
    th = (c.a @ x + c.c @ y + 0.5 * np.einsum("ikl,k,l->i", c.a_kl, x, x)
          + 0.5 * np.einsum("ikl,k,l->i", c.c_kl, y, y)
          + 0.5 * np.einsum("ikl,k,l->i", c.f_kl + np.swapaxes(c.h_kl, 1, 2), y, x))
    R = ch.frames(q)[0][-1]
    w = R @ u
    dr = (w + c.b @ x + c.d @ y + 0.5 * np.einsum("ikl,k,l->i", c.b_kl, x, x)
          + 0.5 * np.einsum("ikl,k,l->i", c.d_kl, y, y)
          + np.einsum("ikl,k,l->i", c.g_kl, y, x) + np.cross(c.a @ x + c.c @ y, w))
    np.testing.assert_allclose(th, fw.theta, atol=1e-15)
    np.testing.assert_allclose(dr, fw.dr, atol=1e-15)
    # and the second-order model is the exact error to O(D^3), parameters included
    orders = []
    for h in (1e-2, 5e-3, 2.5e-3):
        e = ch.propagate(q, h * dq, h * dp, h * dpt)
        t_ex, r_ex = ch.exact_errors(q, h * dq, h * dp, h * dpt)
        orders.append([np.linalg.norm(t_ex - e.theta), np.linalg.norm(r_ex - e.dr),
                       np.linalg.norm(r_ex - e.dr1)])
    orders = np.log2(np.array(orders[:-1]) / np.array(orders[1:])).min(axis=0)
    assert orders[0] >= 2.8 and orders[1] >= 2.8 and 1.9 <= orders[2] <= 2.2


def test_identities_14_and_derivative_meaning():
    rng = np.random.default_rng(11)
    model = random_chain_model(rng, ("revolute", "revolute", "prismatic", "revolute"))
    ch = acc.chain(model, model.n, rng.normal(size=3))
    q = rng.normal(size=model.nq)
    c = ch.coefficients(q)
    n, P = model.nq, ch.n_p
    for k, l in itertools.product(range(n), range(n)):
        np.testing.assert_allclose(c.a_kl[:, k, l] - c.a_kl[:, l, k],
                                   np.cross(c.a[:, k], c.a[:, l]), atol=1e-14)
    for k, l in itertools.product(range(P), range(P)):
        np.testing.assert_allclose(c.c_kl[:, k, l] - c.c_kl[:, l, k],
                                   np.cross(c.c[:, k], c.c[:, l]), atol=1e-14)
    for k, l in itertools.product(range(P), range(n)):
        np.testing.assert_allclose(c.f_kl[:, k, l] - c.h_kl[:, l, k],
                                   np.cross(c.c[:, k], c.a[:, l]), atol=1e-14)
    np.testing.assert_allclose(c.b_kl, np.swapaxes(c.b_kl, 1, 2), atol=1e-15)
    np.testing.assert_allclose(c.d_kl, np.swapaxes(c.d_kl, 1, 2), atol=1e-15)
    # a_kl is the (absolute) derivative of a_l with respect to q_k; b_kl of b_l; g_kl of
    # b_l with respect to p_k; f_kl of a_l with respect to p_k
    h = 1e-6
    for k in range(n):
        e = np.zeros(n)
        e[k] = h
        ap, bp = ch.influence(q + e)
        am, bm = ch.influence(q - e)
        np.testing.assert_allclose((ap - am) / (2 * h), c.a_kl[:, k, :], atol=1e-8)
        np.testing.assert_allclose((bp - bm) / (2 * h), c.b_kl[:, k, :], atol=1e-8)
    for k in range(P):
        e = np.zeros(P)
        e[k] = h
        ap, bp = ch.influence(q, ch.p + e)
        am, bm = ch.influence(q, ch.p - e)
        np.testing.assert_allclose((ap - am) / (2 * h), c.f_kl[:, k, :], atol=1e-8)
        np.testing.assert_allclose((bp - bm) / (2 * h), c.g_kl[:, k, :], atol=1e-8)
    # the contract's Hessians are the symmetric parts
    a2, b2 = acc.second_order(model, q, model.n, ch.point)
    np.testing.assert_allclose(a2, 0.5 * (c.a_kl + np.swapaxes(c.a_kl, 1, 2)), atol=1e-15)
    np.testing.assert_allclose(b2, c.b_kl, atol=1e-15)


def test_third_order_position_coefficients():
    """b3 = d b_kl / d q_s (finite differences) = a_N1 x (a_N2 x b_N3)."""
    rng = np.random.default_rng(12)
    ch = acc.revolute_chain(rng.uniform(0.3, 1, 4), unit_rows(rng, 4), unit_rows(rng, 4))
    q = rng.normal(size=4)
    a, b = ch.influence(q)
    _, b3 = ch.third_order(q)
    h = 1e-6
    for s in range(4):
        e = np.zeros(4)
        e[s] = h
        fd = (ch.second_order(q + e)[1] - ch.second_order(q - e)[1]) / (2 * h)
        np.testing.assert_allclose(b3[..., s], fd, atol=1e-8)
    for k, l, s in itertools.product(range(4), repeat=3):
        n1, n2, n3 = sorted((k, l, s))
        np.testing.assert_allclose(b3[:, k, l, s], np.cross(a[:, n1], np.cross(a[:, n2],
                                                                                b[:, n3])),
                                   atol=1e-14)


def test_motion_errors_equal_finite_differences():
    rng = np.random.default_rng(13)
    model = random_chain_model(rng, ("revolute", "prismatic", "revolute", "revolute"),
                               reverse=(2,))
    body, point = model.n, rng.normal(size=3)
    q, qd, qdd, dq, dqd, dqdd = rng.normal(size=(6, model.nq))
    me = acc.motion_errors(model, q, qd, qdd, body, point, dq=dq, dqd=dqd, dqdd=dqdd)

    def kinematics(q, qd, qdd, h=1e-4):
        def at(t):
            qt, vt = q + qd * t + 0.5 * qdd * t * t, qd + qdd * t
            v, w = model.body_velocities(qt, vt)
            A = model.body_poses(qt)[1][body]
            return w[body], v[body] + np.cross(w[body], A @ point)
        (w0, v0), (wp, vp), (wm, vm) = at(0.0), at(h), at(-h)
        return np.array([w0, v0, (wp - wm) / (2 * h), (vp - vm) / (2 * h)])

    e = 1e-5
    fd = (kinematics(q + e * dq, qd + e * dqd, qdd + e * dqdd)
          - kinematics(q - e * dq, qd - e * dqd, qdd - e * dqdd)) / (2 * e)
    np.testing.assert_allclose(me.omega, fd[0], atol=1e-9)
    np.testing.assert_allclose(me.velocity, fd[1], atol=1e-8)
    np.testing.assert_allclose(me.epsilon, fd[2], atol=1e-6)
    np.testing.assert_allclose(me.acceleration, fd[3], atol=2e-6)


def test_motion_errors_parameter_terms():
    """Delta omega = sum f_kl qd_l dp_k: the angular velocity a(q, p) qd differentiated in p."""
    rng = np.random.default_rng(14)
    ch = acc.revolute_chain(rng.uniform(0.3, 1, 3), unit_rows(rng, 3), unit_rows(rng, 3))
    ch = acc.Chain(ch.motions[:1] + (acc.Motion("rotation", unit_rows(rng, 1)[0], p=0.4),)
                   + ch.motions[1:], nq=3)
    q, qd, qdd, dp = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3), \
        rng.normal(size=ch.n_p)
    me = ch.motion_errors(q, qd, qdd, np.zeros(3), dp=dp)
    h = 1e-6
    a_p, b_p = ch.influence(q, ch.p + h * dp)
    a_m, b_m = ch.influence(q, ch.p - h * dp)
    np.testing.assert_allclose(me.omega, (a_p - a_m) @ qd / (2 * h), atol=1e-8)
    np.testing.assert_allclose(me.velocity, (b_p - b_m) @ qd / (2 * h), atol=1e-8)


# ------------------------------------------------------------------ bounds
def test_bound_algebra_fact_32():
    bd = acc.revolute_bounds([1.0, 1.0], 1.0)
    assert bd == pytest.approx({"rho1": 2.5, "chi1": 0.5, "rho2": 1.5, "chi2": 1 / 6,
                                "theta": 2.0, "position": 3.0}, abs=1e-15)
    rng = np.random.default_rng(15)
    for n in range(1, 8):
        lengths = rng.uniform(0.1, 2.0, n)
        k = np.arange(1, n + 1)
        beta = np.cumsum(lengths[::-1])[::-1]
        assert (2 * k - 1) @ beta == pytest.approx(k ** 2 @ lengths, rel=1e-13)
        assert (3 * k ** 2 - 3 * k + 1) @ beta == pytest.approx(k ** 3 @ lengths, rel=1e-13)
        ch = acc.revolute_chain(lengths, unit_rows(rng, n), unit_rows(rng, n))
        general = acc.bounds(ch, 0.1)
        closed = acc.revolute_bounds(lengths, 0.1)
        np.testing.assert_allclose(general.beta, beta, rtol=1e-13)
        for key in ("theta", "position", "chi1", "rho1", "rho2"):
            assert getattr(general, key) == pytest.approx(closed[key], rel=1e-12), key
        # our BCH bound for chi2 is never tighter than the paper's (27)
        assert general.chi2 >= closed["chi2"] * (1 - 1e-12)


@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_bounds_hold_on_monte_carlo_samples(n):
    rng = np.random.default_rng(100 + n)
    D = 0.1
    worst = dict.fromkeys(["theta", "position", "chi1", "rho1", "chi2", "rho2"], 0.0)
    for trial in range(6):
        lengths = rng.uniform(0.2, 1.0, n)
        ch = acc.revolute_chain(lengths, unit_rows(rng, n), unit_rows(rng, n))
        closed = acc.revolute_bounds(lengths, D)
        for extreme in (False, True):
            mc = acc.monte_carlo(ch, rng.uniform(-np.pi, np.pi, n), D, samples=400,
                                 seed=trial, extreme=extreme)
            for key, err in (("theta", np.linalg.norm(mc.theta, axis=1)),
                             ("position", np.linalg.norm(mc.dr, axis=1)),
                             ("chi1", mc.chi1), ("rho1", mc.rho1), ("chi2", mc.chi2),
                             ("rho2", mc.rho2)):
                worst[key] = max(worst[key], err.max() / closed[key])
    assert worst["chi1"] <= 1 + D * D            # E29: sharp, exceeded by O(D^2) relative
    for key in ("theta", "position", "rho1", "chi2", "rho2"):
        assert worst[key] <= 1.0, (key, worst[key])
    assert min(worst.values()) > 0.05            # the samples are not trivially small


def test_chi1_bound_is_sharp_e29():
    """n = 2, orthogonal axes, corner errors: the linear model's orientation remainder
    reaches the bound (26) and exceeds it by about 0.03 D^2 relative."""
    ch = acc.revolute_chain([1.0, 1.0], [[0, 0, 1.0], [1.0, 0, 0]], [[1.0, 0, 0], [0, 1.0, 0]])
    for D, expected in ((0.1, 1.0003), (0.3, 1.0025)):
        dq = D * np.array([[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0]])
        th, _ = ch.exact_errors(np.zeros(2), dq)
        a, _ = ch.influence(np.zeros(2))
        ratio = np.linalg.norm(th - dq @ a.T, axis=1).max() / acc.revolute_bounds([1, 1], D)["chi1"]
        assert ratio == pytest.approx(expected, abs=1e-4)
        assert 1.0 < ratio <= 1 + D * D


def test_general_bounds_with_prismatic_coordinates():
    rng = np.random.default_rng(16)
    model = random_chain_model(rng, ("revolute", "prismatic", "revolute", "revolute"),
                               reverse=())
    ch = acc.chain(model, model.n, rng.normal(size=3))
    with pytest.raises(mb.ModelError, match="q_max"):
        acc.bounds(ch, 0.05)
    q_max = np.full(model.nq, 1.0)
    bd = acc.bounds(ch, 0.05, q_max=q_max)
    for trial in range(5):
        q = rng.uniform(-1, 1, model.nq)
        mc = acc.monte_carlo(ch, q, 0.05, samples=300, seed=trial, extreme=True)
        assert np.linalg.norm(mc.dr, axis=1).max() <= bd.position
        assert np.linalg.norm(mc.theta, axis=1).max() <= bd.theta
        assert mc.rho1.max() <= bd.rho1 and mc.rho2.max() <= bd.rho2
        assert mc.chi1.max() <= bd.chi1 * (1 + 0.05 ** 2) and mc.chi2.max() <= bd.chi2


# ------------------------------------------------------------------ calibration
def calibration_problem(rng, sigma, N=40):
    model = mb.models.spatial_manipulator()
    ch = acc.chain(model, "forearm", (0.2, 0.0, 0.0))
    dp_true = rng.normal(scale=2e-3, size=ch.n_p)
    dq0_true = rng.normal(scale=2e-3, size=ch.nq)
    Q = rng.uniform(-2, 2, (N, ch.nq))
    measured = ch.pose(Q + dq0_true, ch.p + dp_true)[1] + sigma * rng.normal(size=(N, 3))
    return ch, Q, measured, dp_true, dq0_true


def test_calibration_recovers_parameters_exactly_without_noise():
    ch, Q, measured, dp_true, dq0_true = calibration_problem(np.random.default_rng(17), 0.0)
    fit = acc.calibrate(ch, Q, measured, offsets=ch.q_names)
    np.testing.assert_allclose(fit.dp, dp_true, atol=1e-12)
    np.testing.assert_allclose(fit.dq0, dq0_true, atol=1e-12)
    assert fit.iterations <= 6 and fit.rms[-1] < 1e-13
    # Gauss-Newton converges quadratically: the rms falls by orders of magnitude per step
    assert fit.rms[1] < 1e-2 * fit.rms[0] and fit.rms[2] < 1e-3 * fit.rms[1]


def test_calibration_with_noise_matches_least_squares_and_its_std():
    rng = np.random.default_rng(18)
    sigma = 1e-5
    ch, Q, measured, dp_true, dq0_true = calibration_problem(rng, sigma)
    fit = acc.calibrate(ch, Q, measured, offsets=ch.q_names)
    truth = np.concatenate([dp_true, dq0_true])
    err = fit.x - truth
    assert np.all(np.abs(err) <= 4 * fit.std)
    assert np.all(fit.std < 30 * sigma)            # the noise level, not the prior errors
    assert fit.rms[-1] == pytest.approx(sigma * np.sqrt(3), rel=0.3)

    def residual(x):
        return (ch.pose(Q + x[3:], ch.p + x[:3])[1] - measured).ravel()

    ref = least_squares(residual, np.zeros(6), xtol=1e-15, ftol=1e-15, gtol=1e-15)
    np.testing.assert_allclose(fit.x, ref.x, atol=1e-9)


def test_calibration_reports_unidentifiable_parameters():
    ch = acc.Chain([acc.Motion("translation", (1, 0, 0), p=0.5, name="base_x"),
                    acc.Motion("rotation", (0, 0, 1), q=0),
                    acc.Motion("translation", (1, 0, 0), p=1.0, name="link"),
                    acc.Motion("translation", (0, 0, 1), p=0.2, name="up1"),
                    acc.Motion("translation", (0, 0, 1), p=0.1, name="up2")])
    Q = np.linspace(-2, 2, 10)[:, None]
    measured = ch.pose(Q)[1]
    with pytest.raises(mb.SingularSystemError, match="up1.*up2"):
        acc.calibrate(ch, Q, measured)
    fit = acc.calibrate(ch, Q, measured + [0.0, 0.0, 0.01], parameters=["base_x", "up1"])
    np.testing.assert_allclose(fit.dp, [0.0, 0.0, 0.01, 0.0], atol=1e-12)
    with pytest.raises(mb.SingularSystemError, match="equations"):
        acc.calibrate(ch, Q[:1], measured[:1], parameters=["base_x", "link", "up1", "up2"])


# ------------------------------------------------------------------ bad input
def test_bad_input_is_refused_with_clear_errors():
    m = mb.models.spatial_manipulator()
    with pytest.raises(mb.ModelError, match="unknown body 'hand'.*column"):
        acc.influence(m, [0, 0, 0], "hand")
    with pytest.raises(mb.ShapeError, match="q must have shape"):
        acc.influence(m, [0, 0], "forearm")
    with pytest.raises(mb.ShapeError, match="elbow"):
        acc.influence(m, [0, 0, np.nan], "forearm")
    with pytest.raises(mb.ShapeError, match="point"):
        acc.influence(m, [0, 0, 0], "forearm", point=(1, 2))
    with pytest.raises(mb.TopologyError, match="mb.accuracy needs a tree"):
        acc.influence(mb.models.four_bar(), np.zeros(mb.models.four_bar().nq), 2)
    u = mb.Model()
    u.add_body("a", 1.0, np.eye(3))
    u.add_joint("U", "universal", "ground", "a", axes=((1, 0, 0), (0, 1, 0)))
    with pytest.raises(mb.ModelError, match="joint 'U'.*universal.*revolute and prismatic"):
        acc.influence(u, [0, 0], "a")
    with pytest.raises(mb.ModelError, match="kind must be"):
        acc.Motion("screw", (0, 0, 1), q=0)
    with pytest.raises(mb.ModelError, match="nonzero"):
        acc.Motion("rotation", (0, 0, 0), q=0)
    with pytest.raises(mb.ModelError, match="exactly one"):
        acc.Motion("rotation", (0, 0, 1), q=0, p=1.0)
    with pytest.raises(mb.ModelError, match="more than one"):
        acc.Chain([acc.Motion("rotation", (0, 0, 1), q=0), acc.Motion("rotation", (1, 0, 0),
                                                                      q=0)])
    ch = acc.revolute_chain([1.0, 1.0])
    with pytest.raises(mb.ShapeError, match=r"dq must have shape \(2,\).*q1, q2"):
        ch.exact_errors([0, 0], [0.1])
    with pytest.raises(mb.ModelError, match="unknown parameters 'l9'"):
        acc.calibrate(ch, np.zeros((5, 2)), np.zeros((5, 3)), parameters=["l9"])
    with pytest.raises(mb.ShapeError, match=r"measured must have shape \(5, 3\)"):
        acc.calibrate(ch, np.zeros((5, 2)), np.zeros((4, 3)))
    with pytest.raises(mb.ModelError, match="direction"):
        ch.propagate([0, 0], [0, 0], direction="sideways")


def test_a_changed_model_gives_the_new_answer():
    m = mb.models.double_pendulum()
    b_before = acc.influence(m, [0.2, 0.3], "rod2")[1]
    m.joint("B").parent_point = (1.0, 0.0, 0.0)          # the elbow moves outward
    b_after = acc.influence(m, [0.2, 0.3], "rod2")[1]
    assert not np.allclose(b_before, b_after)
    r, A = m.body_poses([0.2, 0.3])
    np.testing.assert_allclose(b_after[:, 0], np.cross([0, 0, 1], r[2]), atol=1e-14)


def test_fixed_joints_on_the_path_are_constant_offsets():
    rng = np.random.default_rng(19)
    m = mb.models.spatial_manipulator()
    m.add_body("hand", 0.5, np.eye(3) * 0.01)
    m.add_joint("wrist", "fixed", "forearm", "hand", parent_point=(0.2, 0.05, 0.0),
                child_point=(-0.1, 0.0, 0.02), orientation=axis_angle(unit_rows(rng, 1)[0], 0.7))
    m.add_body("base_plate", 1.0, np.eye(3))
    m.add_joint("bolt", "fixed", "base_plate", "ground", parent_point=(0.0, 0.0, 0.1))
    ch = acc.chain(m, "hand", (0.1, 0.0, 0.0))
    assert "wrist.orientation" in ch.p_names and ch.nq == 3
    q = rng.normal(size=(5, 3))
    R, r = ch.pose(q)
    R0, r0 = exact(m, q, m.n - 1, np.array([0.1, 0.0, 0.0]))
    np.testing.assert_allclose(R, R0, atol=1e-14)
    np.testing.assert_allclose(r, r0, atol=1e-14)
    R, r = acc.chain(m, "base_plate").pose(q)          # a fixed joint walked backwards
    R0, r0 = exact(m, q, m.n, np.zeros(3))
    np.testing.assert_allclose(r, r0, atol=1e-14)
