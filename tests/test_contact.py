"""Chapter 9: joint stops, contacts and impacts (mbcourse.contact) against closed forms,
energy and an independent LCP solution."""

import itertools

import numpy as np
import pytest

import mbcourse as mb
from mbcourse.contact import GAP_TOL, impulse
from mbcourse.errors import IntegrationError, ModelError, ShapeError, TopologyError

G = 9.81


def ball(e=0.5, radius=0.1, friction=0.0, planar=False):
    """A ball on a vertical slide (or free in the x-z plane) over the floor z = 0."""
    m = mb.Model(gravity=(0, 0, -G))
    m.add_body("ball", 2.0, [0.008, 0.008, 0.008])
    if planar:
        m.add_body("carriage", 0.0, [0, 0, 0])
        m.add_joint("x", "prismatic", "ground", "carriage", axis=(1, 0, 0))
        m.add_joint("z", "prismatic", "carriage", "ball", axis=(0, 0, 1))
    else:
        m.add_joint("z", "prismatic", "ground", "ball", axis=(0, 0, 1))
    m.add_contact("floor", "ball", (0, 0, 0), radius=radius, restitution=e, friction=friction)
    return m


def rod(length=1.0, mass=1.0, e=0.0, friction=0.0):
    """A uniform rod free in the x-z plane (x, z slides, a turn about y), its lower end
    (body point (-l/2, 0, 0)) a contact with the floor."""
    m = mb.Model(gravity=(0, 0, -G))
    m.add_body("sx", 0.0, [0, 0, 0])
    m.add_body("sz", 0.0, [0, 0, 0])
    m.add_body("rod", mass, [1e-6, mass * length ** 2 / 12, mass * length ** 2 / 12])
    m.add_joint("x", "prismatic", "ground", "sx", axis=(1, 0, 0))
    m.add_joint("z", "prismatic", "sx", "sz", axis=(0, 0, 1))
    m.add_joint("turn", "revolute", "sz", "rod", axis=(0, 1, 0))
    m.add_contact("end", "rod", (-length / 2, 0, 0), restitution=e, friction=friction)
    return m


def pendulum_with_stop(e):
    m = mb.models.double_pendulum()
    m.add_joint_limit(m.joints[1].name, -0.4, 0.4, restitution=e)
    return m


def impact_jumps(res):
    """Energy before and after every impact (the samples share t there)."""
    E = res.energy
    same = np.flatnonzero(np.diff(res.t) == 0)
    return E[same], E[same + 1]


# ------------------------------------------------------------------ closed forms
def test_bouncing_ball_impact_times_heights_and_rest():
    e, h = 0.6, 1.2
    m = ball(e)
    res = mb.contact.simulate(m, (0.0, 4.0), [h + 0.1])
    t_imp = np.array([imp.t for imp in res.impacts])
    k = np.arange(len(t_imp))
    T0 = np.sqrt(2 * h / G)
    closed = T0 * (1 + 2 * e * (1 - e ** k) / (1 - e))
    assert len(t_imp) > 20
    assert np.abs(t_imp[:20] - closed[:20]).max() < 1e-10
    v0 = np.sqrt(2 * G * h)
    lam = np.array([imp.impulse for imp in res.impacts])
    assert np.abs(lam[:20] - 2.0 * (1 + e) * v0 * e ** k[:20]).max() < 1e-8
    # the apex after impact k: (e^k v0)^2 / 2g = e^(2k) h (sampled: the next test)
    heights = (e ** k[:10] * v0) ** 2 / (2 * G)
    assert np.allclose(heights, e ** (2 * k[:10]) * h, rtol=1e-12)
    # the Zeno sequence ends in rest: an apex below GAP_TOL, so within a few of its flights
    t_inf = T0 * (1 + 2 * e / (1 - e))
    v_end = np.sqrt(2 * G * GAP_TOL)
    assert t_inf - 2 * v_end / (G * (1 - e)) * 1.01 <= t_imp[-1] <= t_inf
    after = res.t > t_imp[-1] + 1e-6
    assert np.abs(res.q[after, 0] - 0.1).max() < 1e-9
    assert np.abs(res.qd[after, 0]).max() < 1e-9
    assert np.diff(res.energy).max() < 1e-9


def test_t_eval_with_phases_between_its_points():
    """Short flights between two t_eval points (a Zeno tail) give phases without samples."""
    t_eval = np.linspace(0.0, 2.0, 1500)
    res = mb.contact.simulate(ball(0.6), (0.0, 2.0), [1.0], t_eval=t_eval)
    assert np.array_equal(res.t, t_eval) and res.q.shape == (1500, 1)
    assert len(res.impacts) > 20


def test_ball_apex_heights_from_the_samples():
    e, h = 0.8, 1.0
    res = mb.contact.simulate(ball(e), (0.0, 2.5), [h + 0.1], t_eval=np.linspace(0, 2.5, 25001))
    t_imp = [imp.t for imp in res.impacts]
    for j in range(1, 4):
        w = (res.t > t_imp[j - 1]) & (res.t < t_imp[j])
        assert abs(res.q[w, 0].max() - 0.1 - e ** (2 * j) * h) < 2e-5  # sampled at 1e-4 s


def test_pendulum_stop_impulse_closed_form():
    m = mb.Model(gravity=(0, -G, 0))
    m.add_body("rod", 1.0, [1e-3, 1 / 12, 1 / 12])
    m.add_joint("pin", "revolute", "ground", "rod", child_point=(-0.5, 0, 0), axis=(0, 0, 1))
    m.add_joint_limit("pin", -np.pi / 2, np.pi, restitution=0.5)
    res = mb.contact.simulate(m, (0.0, 0.6), [0.0])
    t, name, lam = res.impacts[0]
    w = np.sqrt(3 * G)                       # (1/3) w^2 / 2 = g / 2
    assert name == "pin:lower"
    assert abs(lam - 1.5 * w / 3) < 1e-9
    i = np.flatnonzero(res.t == t)
    assert abs(res.qd[i[0], 0] + w) < 1e-9 and abs(res.qd[i[1], 0] - 0.5 * w) < 1e-9


@pytest.mark.parametrize("theta", [0.3, 0.7, 1.2])
@pytest.mark.parametrize("e", [0.0, 0.5, 1.0])
def test_rod_falling_on_its_end_closed_form(theta, e):
    """Frictionless floor: Lambda = (1 + e) v / (1/m + a^2 / I), a = l/2 cos(theta)."""
    l, mass, v = 1.0, 1.5, 2.0
    m = rod(l, mass, e)
    m.gravity = (0, 0, 0)
    z0 = 0.5 * l * np.sin(theta)          # a turn by -theta about y lowers the -x end
    q0 = np.array([0.0, z0, -theta])
    g, _ = mb.contact.gaps(m, q0)
    assert abs(g[0]) < 1e-15
    res = mb.contact.simulate(m, (0.0, 0.1), q0 + [0, 1e-3, 0], [0.0, -v, 0.0])
    I = mass * l ** 2 / 12
    a = 0.5 * l * np.cos(theta)
    lam = (1 + e) * v / (1 / mass + a * a / I)
    assert len(res.impacts) == 1
    assert abs(res.impacts[0].impulse - lam) < 1e-10
    after = res.qd[-1]
    assert abs(after[0]) < 1e-12                          # frictionless: no sideways push
    assert abs(after[1] - (-v + lam / mass)) < 1e-10
    assert abs(abs(after[2]) - lam * a / I) < 1e-10
    # the end leaves at e v (just after the impact: the samples at its time)
    i = np.flatnonzero(res.t == res.impacts[0].t)
    J = mb.contact.gap_jacobian(m, res.q[i[1]])
    assert abs(J[0] @ res.qd[i[1]] - e * v) < 1e-10


def test_sliding_block_stops_after_v_over_mu_g():
    """A point on the floor sliding at v with Coulomb friction mu: deceleration mu g, stop
    at v / (mu g) after v^2 / (2 mu g), then sticks."""
    mu, v = 0.4, 3.0
    m = ball(0.0, radius=0.0, friction=mu, planar=True)
    res = mb.contact.simulate(m, (0.0, 1.5), [0.0, 0.0], [v, 0.0])
    t_stop = v / (mu * G)
    x_stop = v * v / (2 * mu * G)
    assert not res.impacts
    assert abs(res.q[-1, 0] - x_stop) < 1e-8
    k = np.searchsorted(res.t, 0.5 * t_stop)
    assert abs(res.qd[k, 0] - (v - mu * G * res.t[k])) < 1e-8
    assert np.abs(res.qd[res.t > t_stop + 1e-6, 0]).max() < 1e-9
    assert np.abs(res.q[:, 1]).max() < 1e-9                # it stays on the floor


@pytest.mark.parametrize("mu", [0.1, 2.0])
def test_oblique_impact_with_friction(mu):
    """A point mass arrives at (vx, -vz): the normal impulse (1 + e) m vz; the tangential one
    mu times that if it saturates, else m vx (sticking)."""
    e, vx, vz, mass = 0.5, 1.0, 2.0, 2.0
    m = ball(e, radius=0.0, friction=mu, planar=True)
    m.gravity = (0, 0, 0)
    res = mb.contact.simulate(m, (0.0, 0.2), [0.0, 0.1], [vx, -vz])
    lam_n = (1 + e) * mass * vz
    lam_t = min(mu * lam_n, mass * vx)
    assert abs(res.impacts[0].impulse - lam_n) < 1e-9
    assert abs(np.linalg.norm(res.tangential[0]) - lam_t) < 1e-9
    assert abs(res.qd[-1, 0] - (vx - lam_t / mass)) < 1e-9
    assert abs(res.qd[-1, 1] - e * vz) < 1e-9


# ------------------------------------------------------------------------ energy
@pytest.mark.parametrize("seed", range(4))
def test_energy_never_grows_at_an_impact(seed):
    rng = np.random.default_rng(seed)
    m = pendulum_with_stop(float(rng.uniform(0, 1)))
    m.add_contact("tip", m.bodies[2].name, (0.5, 0, 0), normal=(0, 1, 0), offset=-1.9,
                  restitution=float(rng.uniform(0, 1)))
    res = mb.contact.simulate(m, (0.0, 2.0), [-0.3, 0.0], rng.normal(size=2))
    before, after = impact_jumps(res)
    scale = np.abs(res.energy).max()
    assert len(before) >= 2
    assert np.all(after <= before + 1e-12 * scale)
    assert np.diff(res.energy).max() < 1e-8 * scale      # between impacts: rtol 1e-10


def test_elastic_impacts_conserve_energy():
    m = pendulum_with_stop(1.0)
    res = mb.contact.simulate(m, (0.0, 3.0), [0.2, 0.0], [0.0, 3.0])
    before, after = impact_jumps(res)
    assert len(before) >= 3
    assert np.abs(after - before).max() < 1e-10
    assert np.ptp(res.energy) < 1e-8


def test_simultaneous_newton_energy_and_cradle():
    J = np.array([[-1.0, 1.0, 0.0], [0.0, -1.0, 1.0]])
    v, lam = impulse(np.eye(3), J, [1.0, 0.0, 0.0], 1.0)
    assert np.allclose(v, [-1 / 3, 2 / 3, 2 / 3], atol=1e-15)
    assert abs(v @ v - 1.0) < 1e-14
    # sequential pairwise impacts: the cradle's answer
    w = np.array([1.0, 0.0, 0.0])
    for row in J:
        w, _ = impulse(np.eye(3), row[None], w, 1.0)
    assert np.allclose(w, [0, 0, 1], atol=1e-15)
    # one contact: Newton and Poisson agree; energy lost (1 - e^2) W Lambda_c^2 / 2
    for e in (0.0, 0.3, 1.0):
        a, la = impulse(np.diag([1.0, 3.0]), [[-1.0, 1.0]], [2.0, 0.0], e)
        b, lb = impulse(np.diag([1.0, 3.0]), [[-1.0, 1.0]], [2.0, 0.0], e, law="poisson")
        assert np.allclose(a, b, atol=1e-14) and np.allclose(la, lb, atol=1e-14)
        W = 1.0 + 1 / 3
        lam_c = 2.0 / W
        T = lambda v: 0.5 * (v[0] ** 2 + 3 * v[1] ** 2)  # noqa: E731
        assert abs(T([2.0, 0.0]) - T(a) - 0.5 * (1 - e * e) * W * lam_c ** 2) < 1e-13


def _lcp_brute(W, c):
    m = len(c)
    for r in range(m + 1):
        for S in itertools.combinations(range(m), r):
            S = list(S)
            x = np.zeros(m)
            if S:
                x[S] = np.linalg.lstsq(W[np.ix_(S, S)], -c[S], rcond=None)[0]
            w = W @ x + c
            if np.all(x >= -1e-12) and np.all(w >= -1e-10):
                return x
    raise AssertionError("no solution")


@pytest.mark.parametrize("seed", range(40))
def test_impulse_lcp_against_enumeration(seed):
    """The impact LCP's answer equals an enumeration of the active sets; the speeds it
    gives satisfy Newton's law with complementarity."""
    rng = np.random.default_rng(seed)
    nv, k = rng.integers(2, 6), rng.integers(1, 5)
    A = rng.normal(size=(nv, nv))
    M = A @ A.T + nv * np.eye(nv)
    J = rng.normal(size=(k, nv))
    v = rng.normal(size=nv)
    e = rng.uniform(0, 1, size=k)
    vp, lam = impulse(M, J, v, e)
    u = J @ v
    c = u + e * np.minimum(u, 0)
    W = J @ np.linalg.solve(M, J.T)
    ref = _lcp_brute(W, c)
    assert np.allclose(J @ vp, J @ (v + np.linalg.solve(M, J.T @ ref)), atol=1e-10)
    w = J @ vp + e * np.minimum(u, 0)
    # more rows than speeds: W is singular and the solver adds 1e-13 of its largest
    # eigenvalue, so w is exact to that times the impulses
    scale = np.abs(c).max() + np.linalg.eigvalsh(W)[-1] * np.abs(lam).max()
    assert lam.min() >= 0 and w.min() >= -1e-11 * scale
    assert abs(lam @ w) <= 1e-11 * scale * np.abs(lam).max()
    assert np.allclose(M @ (vp - v), J.T @ lam, atol=1e-10)


def test_momentum_jump_is_J_transpose_lambda():
    m = pendulum_with_stop(0.7)
    res = mb.contact.simulate(m, (0.0, 1.0), [0.0, 0.0], [0.0, 4.0])
    assert res.impacts
    t = res.impacts[0].t
    i = np.flatnonzero(res.t == t)
    M = mb.tree.mass_matrix(m, res.q[i[0]])
    dp = M @ (res.qd[i[1]] - res.qd[i[0]])
    J = mb.contact.gap_jacobian(m, res.q[i[0]])
    row = mb.contact.gaps(m, res.q[i[0]])[1].index(res.impacts[0].name)
    assert np.allclose(dp, J[row] * res.impacts[0].impulse, atol=1e-12)
    assert np.allclose(dp, res.dp[0], atol=1e-12)


# ---------------------------------------------------------------- compliant law
@pytest.mark.parametrize("case", ["ball", "stop"])
def test_compliant_tends_to_impulsive(case):
    """The first impact's impulse under Hunt-Crossley forces tends to the impulsive law's as
    the stiffness grows (a contact on a body; a joint's stop between two moving bodies)."""
    if case == "ball":
        m, args = ball(0.5), ((0.0, 0.6), [1.0])
    else:
        m, args = pendulum_with_stop(0.5), ((0.0, 0.3), [0.0, 0.0], [0.0, 4.0])
    rigid = mb.contact.simulate(m, *args).impacts[0].impulse
    errors = []
    for k in (1e5, 1e7, 1e9):
        res = mb.contact.simulate(m, *args, law="compliant", stiffness=k, rtol=1e-9,
                                  atol=1e-12)
        errors.append(abs(res.impacts[0].impulse - rigid) / rigid)
    assert errors[0] > errors[1] > errors[2] and errors[2] < 2e-3


def test_hunt_crossley_damping_gives_the_restitution():
    from scipy.integrate import solve_ivp
    for e in (0.2, 0.8):
        d = mb.contact.hunt_crossley_damping(e)
        k, mass, v = 5e4, 0.3, 1.7        # any mass, stiffness and speed

        def rhs(_, y):
            x = max(y[0], 0.0)
            return [y[1], -max(k * x ** 1.5 * (1 + d * y[1] / v), 0.0) / mass]
        out = lambda _, y: y[0]  # noqa: E731
        out.terminal, out.direction = True, -1
        sol = solve_ivp(rhs, (0, 1), [0.0, v], events=out, rtol=1e-12, atol=1e-14,
                        first_step=1e-8)
        assert abs(-sol.y_events[0][0][1] / v - e) < 1e-8


# --------------------------------------------------------------- robots, URDF
def test_urdf_limits_load_and_hold():
    arm = mb.urdf.robot("so100", limits=True, restitution=0.2)
    assert [lim.name for lim in arm.joint_limits] == [j.name for j in arm.joints]
    free = mb.urdf.robot("so100")
    assert not free.joint_limits
    res = mb.contact.simulate(arm, (0.0, 0.4), arm.neutral_q(), rtol=1e-7, atol=1e-8)
    g, _ = mb.contact.gaps(arm, res.q[-1])
    assert g.min() > -1e-9 and res.impacts
    before, after = impact_jumps(res)
    assert np.all(after <= before + 1e-9)
    panda = mb.urdf.robot("panda", limits=True)
    assert all(lim.joint.name != c.joint for lim in panda.joint_limits for c in panda.mimics)


# ------------------------------------------------------------------- bad input
def test_bad_input_names_what_is_wrong():
    m = mb.models.double_pendulum()
    A, B = (j.name for j in m.joints)
    with pytest.raises(ModelError, match="restitution must lie in"):
        m.add_joint_limit(A, -1, 1, restitution=-0.1)
    with pytest.raises(ModelError, match="restitution must lie in"):
        m.add_joint_limit(A, -1, 1, restitution=1.5)
    with pytest.raises(ModelError, match="lower .* must be below upper"):
        m.add_joint_limit(A, 1, -1)
    with pytest.raises(ModelError, match="unknown joint"):
        m.add_joint_limit("nope", -1, 1)
    body = m.bodies[1].name
    with pytest.raises(ModelError, match="friction must be a non-negative"):
        m.add_contact("c", body, (0, 0, 0), friction=-0.2)
    with pytest.raises(ModelError, match="is the base"):
        m.add_contact("c", "ground", (0, 0, 0))
    with pytest.raises(ModelError, match="non-zero vector"):
        m.add_contact("c", body, (0, 0, 0), normal=(0, 0, 0))
    with pytest.raises(ShapeError, match="point"):
        m.add_contact("c", body, (0, 0))
    lim = m.add_joint_limit(A, -1, 1)
    with pytest.raises(ModelError, match="already has a limit"):
        m.add_joint_limit(A, -2, 2)
    with pytest.raises(ModelError, match="must be below upper"):
        lim.lower = 3.0
    m.add_contact("c", body, (0, 0, 0))
    with pytest.raises(ModelError, match="already exists"):
        m.add_contact("c", body, (0, 0, 0))
    ball3 = mb.Model()
    ball3.add_body("b", 1.0, [1, 1, 1])
    ball3.add_joint("ball", "spherical", "ground", "b")
    with pytest.raises(ModelError, match="one-coordinate joint"):
        ball3.add_joint_limit("ball", -1, 1)
    with pytest.raises(ModelError, match="violates gaps"):
        mb.contact.simulate(m, (0, 1), [2.0, 0.0])
    with pytest.raises(ModelError, match="law must be one of"):
        mb.contact.simulate(m, (0, 1), [0.0, 0.0], law="soft")
    with pytest.raises(ModelError, match="rest_speed must be a positive"):
        mb.contact.simulate(m, (0, 1), [0.0, 0.0], rest_speed=-1.0)
    with pytest.raises(ShapeError, match="first argument must be the Model"):
        mb.contact.simulate((0, 1), m, [0.0])


def test_a_changed_model_is_seen_and_results_keep_theirs():
    m = ball(0.5)
    first = mb.contact.simulate(m, (0.0, 0.6), [1.0])
    m.contacts[0].restitution = 1.0
    second = mb.contact.simulate(m, (0.0, 0.6), [1.0])
    assert second.impacts[0].impulse > first.impacts[0].impulse
    assert first.model.contacts[0].restitution == 0.5
    m.contacts[0].offset = -0.5                    # the floor moved down
    third = mb.contact.simulate(m, (0.0, 0.6), [1.0])
    assert third.impacts[0].t > second.impacts[0].t


def test_closed_loops_and_coupled_models_are_refused():
    loop = mb.models.four_bar() if hasattr(mb.models, "four_bar") else None
    if loop is not None:
        with pytest.raises(TopologyError, match="close loops"):
            mb.contact.simulate(loop, (0, 1), loop.neutral_q())
    panda = mb.urdf.robot("panda")
    with pytest.raises(ModelError, match="mimic joints"):
        mb.contact.simulate(panda, (0, 1), panda.neutral_q())


def test_too_many_impacts_is_an_integration_error():
    with pytest.raises(IntegrationError, match="max_impacts"):
        mb.contact.simulate(ball(0.9), (0.0, 5.0), [1.0], max_impacts=5)


def test_summary_lists_stops_and_contacts():
    m = pendulum_with_stop(0.5)
    m.add_contact("tip", m.bodies[2].name, (0.5, 0, 0), normal=(0, 1, 0), offset=-1.5,
                  friction=0.3)
    text = m.summary()
    assert "Stops and contacts" in text
    assert "-0.4 <= q <= 0.4" in text and "n=(0, 1, 0), offset -1.5" in text
    assert "Stops" not in mb.models.double_pendulum().summary()


def test_box_on_four_corners_floating_base():
    """A box on a free joint (quaternion) lands flat on four corners with friction: the
    corners' normal impulses add up to (1 + e) m v, the sideways speed is stopped (enough
    friction), and the box comes to rest on the floor (redundant contacts: least-norm
    forces)."""
    m = mb.Model(gravity=(0, 0, -G))
    a, b, c, mass, e = 0.4, 0.3, 0.2, 2.0, 0.3
    m.add_body("box", mass, [mass * (b * b + c * c) / 12, mass * (a * a + c * c) / 12,
                             mass * (a * a + b * b) / 12])
    m.add_joint("free", "free", "ground", "box")
    for i, (sx, sy) in enumerate([(1, 1), (1, -1), (-1, 1), (-1, -1)]):
        m.add_contact(f"c{i}", "box", (sx * a / 2, sy * b / 2, -c / 2), restitution=e,
                      friction=0.5)
    q0 = m.neutral_q()
    q0[2] = 0.5
    res = mb.contact.simulate(m, (0.0, 1.0), q0, [0.5, 0, 0, 0, 0, 0])
    first = [imp for imp in res.impacts if imp.t == res.impacts[0].t]
    v = np.sqrt(2 * G * 0.4)
    assert len(first) == 4
    assert abs(sum(imp.impulse for imp in first) - (1 + e) * mass * v) < 1e-9
    g, _ = mb.contact.gaps(m, res.q[-1])
    assert np.abs(g).max() < 1e-9
    assert np.abs(res.qd[-1]).max() < 1e-9
    before, after = impact_jumps(res)
    assert np.all(after <= before + 1e-12 * np.abs(res.energy).max())


def test_stick_then_slip_under_a_growing_push():
    """A 2 kg point resting on the floor (mu = 0.3) pushed by tau = 5 t sticks until
    5 t = mu m g, then slides: x(t) from integrating (5 t - mu m g) / m twice."""
    mu, mass = 0.3, 2.0
    m = ball(0.0, radius=0.0, friction=mu, planar=True)
    res = mb.contact.simulate(m, (0.0, 2.0), [0.0, 0.0], tau=lambda t, q, qd: [5.0 * t, 0.0])
    F = mu * mass * G
    ts = F / 5.0
    x = lambda t: (5 / 6 * (t ** 3 - ts ** 3) - 2.5 * ts ** 2 * (t - ts)   # noqa: E731
                   - F / 2 * (t - ts) ** 2) / mass
    assert np.abs(res.q[res.t <= ts, 0]).max() < 1e-12
    assert abs(res.q[-1, 0] - x(2.0)) < 1e-8


def test_two_shut_contacts_elastic_keep_energy():
    """A rod lying on the floor on both ends, turning: one end approaches, the other
    leaves; with e = 1 and no friction no energy is lost or gained."""
    m = rod(1.0, 1.0, 1.0)
    m.add_contact("other end", "rod", (0.5, 0, 0), restitution=1.0)
    m.gravity = (0, 0, 0)
    res = mb.contact.simulate(m, (0.0, 0.5), [0.0, 0.0, 0.0], [0.0, 0.0, 2.0])
    E = res.energy
    assert res.impacts and np.abs(E - E[0]).max() < 1e-10


def test_friction_on_a_point_that_cannot_slide():
    """A ball on a vertical slide has no tangential motion: friction changes nothing."""
    plain = mb.contact.simulate(ball(0.5), (0.0, 1.0), [1.0])
    rough = mb.contact.simulate(ball(0.5, friction=0.5), (0.0, 1.0), [1.0])
    assert np.isfinite(rough.qd).all()
    assert np.allclose([i.impulse for i in rough.impacts],
                       [i.impulse for i in plain.impacts], rtol=1e-12)


def test_slide_stops_on_an_incline():
    """A point sliding down a 30 degree incline at 2 m/s with mu = 0.8 decelerates at
    g (mu cos a - sin a), stops after v^2 / (2 that) and sticks (without the step size
    crawling at the stop)."""
    a, mu, v = np.radians(30.0), 0.8, 2.0
    n = np.array([np.sin(a), 0.0, np.cos(a)])
    down = np.array([np.cos(a), 0.0, -np.sin(a)])
    m = mb.Model(gravity=(0, 0, -G))
    m.add_body("sx", 0.0, [0, 0, 0])
    m.add_body("p", 1.0, [0, 0, 0])
    m.add_joint("x", "prismatic", "ground", "sx", axis=(1, 0, 0))
    m.add_joint("z", "prismatic", "sx", "p", axis=(0, 0, 1))
    m.add_contact("slope", "p", (0, 0, 0), normal=n, friction=mu)
    res = mb.contact.simulate(m, (0.0, 1.5), [0.0, 0.0], v * down[[0, 2]])
    dec = G * (mu * np.cos(a) - np.sin(a))
    s = res.q[-1] @ down[[0, 2]]
    assert abs(s - v * v / (2 * dec)) < 1e-8 and np.abs(res.qd[-1]).max() < 1e-9
    assert len(res.t) < 2000


def test_two_samples_at_each_impact_and_one_at_the_start():
    m = rod(1.0, 1.0, 0.5)
    m.gravity = (0, 0, 0)
    q0 = np.array([0.0, 0.5 * np.sin(0.7), -0.7])
    qd0 = np.array([0.0, -2.0, 0.0])
    res = mb.contact.simulate(m, (0.0, 0.1), q0, qd0)       # the impact is at t0
    assert res.impacts[0].t == 0.0
    assert np.array_equal(res.qd[0], qd0) and res.t[1] == 0.0
    times, counts = np.unique(res.t, return_counts=True)
    assert counts.max() == 2 and set(times[counts == 2]) == {i.t for i in res.impacts}


def test_compliant_reports_friction_and_a_contact_still_on():
    """Compliant law: the friction impulse of an oblique impact tends to the impulsive
    law's; a plastic contact still on at t1 is reported with what it delivered."""
    m = ball(0.5, radius=0.0, friction=0.2, planar=True)
    m.gravity = (0, 0, 0)
    args = ((0.0, 0.1), [0.0, 0.01], [1.0, -2.0])
    rigid = mb.contact.simulate(m, *args)
    soft = mb.contact.simulate(m, *args, law="compliant", stiffness=1e9, rtol=1e-9,
                               atol=1e-12)
    assert abs(np.linalg.norm(soft.tangential[0]) - np.linalg.norm(rigid.tangential[0])) \
        < 1e-3 * np.linalg.norm(rigid.tangential[0])
    assert np.allclose(soft.dp[0], rigid.dp[0], rtol=1e-3, atol=1e-6)
    plastic = mb.contact.simulate(ball(0.0), (0.0, 0.6), [1.0], law="compliant")
    assert len(plastic.impacts) == 1 and plastic.impacts[0].impulse > 2.0 * np.sqrt(2 * G * 1.0)


def test_bad_input_of_impulse_damping_and_urdf_limits():
    with pytest.raises(ShapeError, match="J must be finite"):
        impulse(np.eye(2), [[1.0, np.nan]], [1.0, 0.0], 0.5)
    with pytest.raises(ShapeError, match="qd_minus must be finite"):
        impulse(np.eye(2), [[1.0, 0.0]], [np.inf, 0.0], 0.5)
    with pytest.raises(ModelError, match="symmetric"):
        impulse([[1.0, 5.0], [0.0, 1.0]], [[1.0, 0.0]], [1.0, 0.0], 0.5)
    with pytest.raises(ShapeError, match="one per row of J"):
        impulse(np.eye(2), [[1.0, 0.0]], [1.0, 0.0], [0.5, 0.2])
    with pytest.raises(ModelError, match="restitution must be a number"):
        impulse(np.eye(2), [[1.0, 0.0]], [1.0, 0.0], True)
    with pytest.raises(ShapeError, match="M must be an array of numbers"):
        impulse("M", [[1.0]], [1.0], 0.5)
    with pytest.raises(ModelError, match="restitution must be a number"):
        mb.contact.hunt_crossley_damping("a")
    with pytest.raises(ModelError, match="exponent must lie in"):
        mb.contact.hunt_crossley_damping(0.5, np.inf)
    with pytest.raises(ModelError, match="restitution must lie in"):
        mb.urdf.robot("so100", limits=True, restitution=2.0)
    with pytest.raises(ModelError, match="both infinite"):
        mb.models.double_pendulum().add_joint_limit("A", -np.inf, np.inf)


def test_mixed_restitution_poisson_can_gain_and_the_simulator_never_does():
    """Poisson's law with different coefficients on the rows can gain energy (the cradle's
    rows with e = (1, 0.5): T 0.5 -> 0.50694); the simulator's impact (Newton, then Poisson,
    then the smallest e for all rows) never does, on random mixed-e impacts."""
    from mbcourse.contact import _energy_safe_impact
    J = np.array([[-1.0, 1.0, 0.0], [0.0, -1.0, 1.0]])
    v, _ = impulse(np.eye(3), J, [1.0, 0.0, 0.0], [1.0, 0.5], law="poisson")
    assert np.allclose(v, [-1 / 3, 7 / 12, 3 / 4], atol=1e-14) and 0.5 * v @ v > 0.5069
    rng = np.random.default_rng(7)
    for _ in range(200):
        nv = rng.integers(2, 6)
        k = rng.integers(2, nv + 1)         # no more rows than speeds: nothing is wedged
        A = rng.normal(size=(nv, nv))
        M = A @ A.T + nv * np.eye(nv)
        rows = rng.normal(size=(k, nv))
        qd = rng.normal(size=nv)
        e = np.where(rng.uniform(size=k) < 0.5, 0.0, rng.uniform(0, 1, size=k))
        new, lam = _energy_safe_impact(M, np.linalg.cholesky(M), rows, qd, e, "newton", None)
        assert new @ M @ new <= qd @ M @ qd * (1 + 1e-12)
        assert lam.min() >= 0 and (rows @ new).min() >= -1e-9 * np.abs(rows @ qd).max()
