"""One API (issue 26): the one ``simulate`` signature and its Trajectory in every formulation
module, ``solve`` results as dataclasses, reactions keyed by joint name, named errors for
the wrong calls a newcomer makes, deprecations of the old forms, results that do not change
after the model is edited."""

import inspect

import numpy as np
import pytest

import mbcourse as mb
from mbcourse.errors import IntegrationError, ModelError, ShapeError

SIMULATES = {
    "tree": mb.tree.simulate,
    "vereshchagin": mb.vereshchagin.simulate,
    "poisson": mb.poisson.simulate,
    "loops": mb.loops.simulate,
    "cartesian": mb.cartesian.simulate,
}


def pendulum_run(name, model=None, **kwargs):
    """Every simulate on the double pendulum (a tree: every formulation takes it)."""
    model = mb.models.double_pendulum() if model is None else model
    return SIMULATES[name](model, (0.0, 0.3), [0.4, -0.2], kwargs.pop("qd0", None),
                           kwargs.pop("tau", None), **kwargs)


# ------------------------------------------------------------------ the signature
@pytest.mark.parametrize("name", sorted(SIMULATES))
def test_one_simulate_signature(name):
    params = inspect.signature(SIMULATES[name]).parameters
    P = inspect.Parameter
    head = [(n, p.kind) for n, p in params.items()][:5]
    assert head == [("model", P.POSITIONAL_OR_KEYWORD), ("t_span", P.POSITIONAL_OR_KEYWORD),
                    ("q0", P.POSITIONAL_OR_KEYWORD), ("qd0", P.POSITIONAL_OR_KEYWORD),
                    ("tau", P.POSITIONAL_OR_KEYWORD)]
    assert params["qd0"].default is None and params["tau"].default is None
    for option, default in (("method", "DOP853"), ("rtol", 1e-10), ("atol", 1e-10),
                            ("t_eval", None)):
        assert params[option].kind is P.KEYWORD_ONLY and params[option].default == default
    assert list(params.values())[-1].kind is P.VAR_KEYWORD


def test_sim_simulate_takes_the_function_second():
    params = list(inspect.signature(mb.sim.simulate).parameters)
    assert params[:6] == ["model", "forward_dynamics", "t_span", "q0", "qd0", "tau"]


@pytest.mark.parametrize("name", sorted(SIMULATES))
def test_every_simulate_returns_a_trajectory_at_rest_by_default(name):
    """qd0=None is rest; the same motion (to the integration tolerance) from every module."""
    res = pendulum_run(name, t_eval=[0.0, 0.15, 0.3])
    assert isinstance(res, mb.sim.Trajectory)
    ref = mb.sim.simulate(mb.models.double_pendulum(), mb.tree.forward_dynamics, (0.0, 0.3),
                          [0.4, -0.2], np.zeros(2), t_eval=[0.0, 0.15, 0.3])
    assert res.t.tolist() == [0.0, 0.15, 0.3]
    np.testing.assert_allclose(res.qd[0], 0.0, atol=1e-12)
    np.testing.assert_allclose(res.q, ref.q, atol=1e-7)
    np.testing.assert_allclose(res.energy, ref.energy[0], atol=1e-7)
    assert res.dissipated.shape == res.t.shape
    if name in ("loops", "cartesian"):
        assert res.position_drift.shape == res.t.shape
        assert res.velocity_drift.shape == res.t.shape


def test_tree_and_vereshchagin_simulate_are_sim_simulate():
    model = mb.models.triple_pendulum()
    q0, qd0, tau = [0.3, -0.2, 0.5], [1.0, 0.0, -0.5], [0.1, 0.0, 0.2]
    for module in (mb.tree, mb.vereshchagin):
        a = module.simulate(model, (0.0, 0.5), q0, qd0, tau)
        b = mb.sim.simulate(model, module.forward_dynamics, (0.0, 0.5), q0, qd0, tau)
        assert np.array_equal(a.t, b.t) and np.array_equal(a.q, b.q)


def test_tau_is_positional_in_every_simulate():
    tau = [0.5, 0.0]
    for name in sorted(SIMULATES):
        res = pendulum_run(name, tau=tau, t_eval=[0.3])
        ref = mb.tree.simulate(mb.models.double_pendulum(), (0.0, 0.3), [0.4, -0.2], None,
                               tau, t_eval=[0.3])
        np.testing.assert_allclose(res.q, ref.q, atol=1e-7, err_msg=name)


# ------------------------------------------------------------------ results stay put
@pytest.mark.parametrize("name", sorted(SIMULATES))
def test_results_do_not_change_after_the_model_is_edited(name):
    model = mb.models.double_pendulum()
    res = pendulum_run(name, model=model)
    E, (P, H) = res.energy.copy(), res.momentum
    r, _ = res.positions()
    version = model.version
    model.body(1).mass = 3.0
    model.gravity = (0.0, -1.0, 0.0)
    assert model.version > version and res.model_version == version
    assert np.array_equal(res.energy, E)
    assert np.array_equal(res.momentum[0], P) and np.array_equal(res.positions()[0], r)
    assert np.ptp(res.energy) < 1e-7 * np.abs(E).max()  # the original model's numbers
    # the frozen copy refuses edits of its own: a named error, never new numbers
    res.model.body(2).mass = 4.0
    with pytest.raises(ModelError, match="edited afterwards"):
        res.energy


def test_solutions_hold_arrays_not_the_model():
    m = mb.models.crank_slider()
    q, qd = mb.models.crank_slider_state(m, 0.3, 2.0)
    s = mb.cartesian.solve(m, q, qd)
    ls = mb.loops.solve(m, q, qd)
    qdd, lam = s.qdd.copy(), ls.lam.copy()
    m.body("rod").mass = 7.0
    assert np.array_equal(s.qdd, qdd) and np.array_equal(ls.lam, lam)
    np.testing.assert_allclose(s.qdd, ls.qdd, atol=1e-8)


# ------------------------------------------------------------------ solve, reactions
def test_cartesian_solve_is_a_dataclass_and_unpacking_is_deprecated():
    m = mb.models.double_pendulum()
    s = mb.cartesian.solve(m, [0.3, 0.2], [1.0, -2.0])
    assert isinstance(s, mb.cartesian.Solution)
    assert s.ddX.shape == (1, 2, 3) and s.lam.shape == (1, 4) and s.qdd.shape == (1, 2)
    np.testing.assert_allclose(s.qdd[0], mb.tree.forward_dynamics(m, [0.3, 0.2], [1.0, -2.0]),
                               atol=1e-10)
    with pytest.warns(DeprecationWarning, match="unpacking"):
        eq, ddX, lam = s
    assert eq is s.eq and ddX is s.ddX and lam is s.lam
    with pytest.warns(DeprecationWarning, match="unpacking"):
        assert s[2] is s.lam


def test_loops_reactions_keyed_by_joint_name_only():
    m = mb.models.crank_slider()
    q, qd = mb.models.crank_slider_state(m, 0.3, 2.0)
    R = mb.loops.reactions(m, q, qd)
    assert sorted(R) == sorted(j.name for j in m.joints)
    assert int(R.nullity) == 0
    with pytest.warns(DeprecationWarning, match="nullity"):
        assert int(R["nullity"]) == 0
    with pytest.raises(KeyError):
        R["no such joint"]


def test_constraint_drift_is_a_deprecated_alias():
    sim = mb.cartesian.simulate(mb.models.double_pendulum(), (0.0, 0.2), [0.3, 0.0])
    with pytest.warns(DeprecationWarning, match="position_drift"):
        old = sim.constraint_drift
    assert np.array_equal(old, sim.position_drift)


# ------------------------------------------------------------------ named errors
def test_formulation_given_as_a_string_or_a_module():
    model = mb.models.double_pendulum()
    with pytest.raises(ShapeError, match=r"forward_dynamics function second.*'tree'"):
        mb.sim.simulate(model, "tree", (0, 1), [0, 0])
    with pytest.raises(ShapeError, match=r"module 'mb.tree'.*mb.tree.simulate"):
        mb.sim.simulate(model, mb.tree, (0, 1), [0, 0])


def test_model_and_function_swapped():
    model = mb.models.double_pendulum()
    with pytest.raises(ShapeError, match="swapped"):
        mb.sim.simulate(mb.tree.forward_dynamics, model, (0, 1), [0, 0])
    for name in sorted(SIMULATES):
        with pytest.raises(ShapeError, match="Model"):
            SIMULATES[name]((0, 1), model, [0, 0])


@pytest.mark.parametrize("name", sorted(SIMULATES))
def test_unknown_method_and_t_eval_outside_t_span(name):
    with pytest.raises(ShapeError, match=r"method must be one of \['RK45'.*got 'Radua'"):
        pendulum_run(name, method="Radua")
    with pytest.raises(ShapeError, match=r"t_eval .* outside it: \[2.0\]"):
        pendulum_run(name, t_eval=[0.1, 2.0])


@pytest.mark.parametrize("name", ["tree", "vereshchagin", "loops"])
def test_an_option_the_formulation_does_not_take(name):
    with pytest.raises(ShapeError, match=r"does not take the option solver=; its options are"):
        pendulum_run(name, solver="ldlt")
    with pytest.raises(ShapeError, match=r"simulate with mb.tree.forward_dynamics does not take "
                                         r"the option solver="):
        mb.sim.simulate(mb.models.double_pendulum(), mb.tree.forward_dynamics, (0, 1), [0, 0],
                        solver="ldlt")


def test_options_named_by_the_formulation_are_refused_elsewhere():
    with pytest.raises(ShapeError, match=r"stabilization=.*'solver'"):
        pendulum_run("poisson", stabilization="projection")
    with pytest.raises(ShapeError, match=r"cond_limit=.*'baumgarte'"):
        pendulum_run("cartesian", cond_limit=10.0)


BAD_TAUS = [
    (lambda t, q, qd: None, r"it returned None at t=0"),
    (lambda t, q, qd: np.zeros(3), r"it returned shape \(3,\)"),
    (lambda t, q, qd: np.array([np.nan, 0.0]), r"it returned NaN or infinity .*\['A.angle'\]"),
    (lambda t, q, qd: "ab", r"it returned str"),
]


@pytest.mark.parametrize("name", sorted(SIMULATES))
@pytest.mark.parametrize("tau, message", BAD_TAUS)
def test_a_bad_tau_callable_is_named_the_same_everywhere(name, tau, message):
    with pytest.raises(ShapeError, match=r"^tau\(t, q, qd\) must return the generalized forces, "
                                         r"an array of shape \(2,\); " + message):
        pendulum_run(name, tau=tau)


@pytest.mark.parametrize("name", sorted(SIMULATES))
def test_a_blow_up_is_named_as_such(name):
    """qd' ~ 1e4 qd^3 blows up in finite time: huge forces, not stiffness."""
    def tau(t, q, qd):
        return np.array([1e4 * qd[0] ** 3, 0.0])

    with pytest.raises(IntegrationError,
                       match=r"stopped at t=\S+ of 0.3: the motion blew up .*not stiffness"):
        pendulum_run(name, qd0=[3.0, 0.0], tau=tau, rtol=1e-8, atol=1e-8)


def test_a_stop_without_blow_up_keeps_the_stiffness_hint():
    err = mb.sim.integration_error("mb.tree.simulate", 0.2, 1.0, "Required step size is less "
                                   "than spacing between numbers.", qd=[3.0, 1.0])
    assert isinstance(err, IntegrationError)
    assert "blew up" not in str(err) and "Radau" in str(err)
