"""Wall times of whole simulations and of the compiled kernels' first call.

    python benchmarks/simulate.py [--out DIR]

Writes ``results/simulations.md``:

* the chapter 4 triple pendulum (5 s, rtol = atol = 1e-11, DOP853) and a 30-body tree
  (the benchmark ``tree`` system, 2 s, rtol = atol = 1e-10), integrated by
  ``mb.sim.simulate`` with ``mb.vereshchagin.forward_dynamics`` (compiled and NumPy) and
  ``mb.tree.forward_dynamics``, next to the same integrator driven by Pinocchio's ``aba`` and
  (triple pendulum) by the sympy-lambdified right-hand side of ``mb.symbolic`` (what a
  ``sympy.physics.mechanics`` user writes: Lagrange's equations, ``lambdify``, a solve);
  every route ends at the same state (checked);
* chapter 6's cut-joint method per call, compiled and NumPy;
* Andrews' squeezer (``mb.loops.simulate`` and ``mb.cartesian.simulate``, compiled and NumPy
  right-hand sides, against the
  test set's reference) and the stiff flyball governor (dampers) as whole simulations;
* ``mb.symbolic`` on a six-joint spatial arm: derive, lambdify and compile times, one call
  and batched calls;
* the compile time of the kernels in a fresh numba cache (a subprocess with an empty
  ``NUMBA_CACHE_DIR``) and their load time from the cache.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np
from scipy.integrate import solve_ivp

import mbcourse as mb

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import systems  # noqa: E402


def pinocchio_from_model(model):
    """A Pinocchio model of a Model whose joints are revolute and point away from the base,
    and ``perm``: Pinocchio's coordinate ``i`` is the Model's ``perm[i]``.

    Pinocchio's frame of a body sits at its inboard joint point with the axes the joint's
    rotation gives (before the fixed ``orientation`` ``R0``); the body's inertia and the
    next joint's placement are expressed in it (``R0`` applied). Joints are added base
    first, so Pinocchio's coordinates may come in another order than the Model's.
    """
    import pinocchio as pin

    pm = pin.Model()
    pm.gravity.linear = np.array(model.gravity, dtype=float)
    frame_of = {0: 0}
    R0_of = {0: np.eye(3)}
    cp_of = {0: np.zeros(3)}
    perm = []
    for joint in model.outward_joints("pinocchio_from_model"):
        perm.append(joint.q_slice.start)
        if joint.revolute_axis is None:
            raise ValueError(f"joint {joint.name!r}: revolute joints only")
        p, c = joint.parent, joint.child
        R0p = R0_of[p]
        placement = pin.SE3(R0p, R0p @ (joint.parent_point - cp_of[p]))
        jid = pm.addJoint(frame_of[p], pin.JointModelRevoluteUnaligned(joint.axis), placement,
                          joint.name)
        body = model.bodies[c]
        R0 = joint.orientation
        inertia = pin.Inertia(body.mass, R0 @ (-joint.child_point), R0 @ body.inertia @ R0.T)
        pm.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
        frame_of[c], R0_of[c], cp_of[c] = jid, R0, joint.child_point
    return pm, np.array(perm)


def integrate(rhs, y0, t1, rtol):
    t0 = time.perf_counter()
    sol = solve_ivp(rhs, (0.0, t1), y0, method="DOP853", rtol=rtol, atol=rtol)
    return time.perf_counter() - t0, sol


def case(name, model, q0, t1, rtol, sympy=False):
    nq = model.nq
    rows = []
    y0 = np.concatenate([q0, np.zeros(model.nv)])
    routes = {
        "mb.vereshchagin (compiled)": mb.vereshchagin.forward_dynamics,
        "mb.tree (compiled)": mb.tree.forward_dynamics,
        "mb.vereshchagin (NumPy)": lambda m, q, v, tau, t=0.0: mb.vereshchagin.forward_dynamics(
            m, q, v, tau, t=t, compiled=False),
    }
    finals = {}
    for label, fd in routes.items():
        fd(model, q0, np.zeros(model.nv), None)          # compiled (or loaded) before timing
        t0 = time.perf_counter()
        res = mb.sim.simulate(model, fd, (0.0, t1), q0, np.zeros(model.nv), rtol=rtol,
                              atol=rtol)
        rows.append((label, time.perf_counter() - t0, res.sol.nfev))
        finals[label] = np.concatenate([res.q[-1], res.qd[-1]])
    try:
        import pinocchio as pin

        pm, perm = pinocchio_from_model(model)
        data = pm.createData()
        zero = np.zeros(model.nv)
        out = np.empty(2 * nq)

        def rhs(t, y):
            out[:nq] = y[nq:]
            out[nq + perm] = pin.aba(pm, data, y[perm], y[nq + perm], zero)
            return out.copy()

        wall, sol = integrate(rhs, y0, t1, rtol)
        rows.append(("Pinocchio aba (C++) in the same integrator", wall, sol.nfev))
        finals["pinocchio"] = sol.y[:, -1]
    except ImportError:
        rows.append(("Pinocchio: not installed (make bench installs it)", float("nan"), 0))
    if sympy:
        t0 = time.perf_counter()
        fns = mb.symbolic.lambdify(mb.symbolic.derive(model))
        derive = time.perf_counter() - t0

        def rhs(t, y):
            return np.concatenate([y[nq:], fns.forward_dynamics(y[:nq], y[nq:])])

        wall, sol = integrate(rhs, y0, t1, rtol)
        rows.append((f"sympy-lambdified Lagrange equations (derived in {derive:.1f} s)", wall,
                     sol.nfev))
        finals["sympy"] = sol.y[:, -1]
    ref = finals["mb.vereshchagin (compiled)"]
    spread = max(float(np.abs(v - ref).max()) for v in finals.values())
    lines = [f"### {name}\n", "| route | wall time | right-hand sides |", "|---|---|---|"]
    lines += [f"| {label} | {wall:.3f} s | {nfev} |" for label, wall, nfev in rows]
    lines.append(f"\nAll routes end at the same state to {spread:.1e} (max abs difference).\n")
    return "\n".join(lines)


COMPILE_SNIPPET = """
import time, numpy as np, mbcourse as mb
m = mb.models.triple_pendulum()
q = np.zeros(3)
out = []
for B in (1, 100):
    for label, call in (("vereshchagin", lambda Q: mb.vereshchagin.forward_dynamics(m, Q, Q)),
                        ("tree", lambda Q: mb.tree.forward_dynamics(m, Q, Q))):
        t0 = time.perf_counter(); call(np.zeros((B, 3)) if B > 1 else q)
        out.append(f"{label}{' (batch, parallel kernel)' if B > 1 else ''}: "
                   f"{time.perf_counter() - t0:.2f}")
print("; ".join(out))
"""


def compile_times():
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        cold = subprocess.run([sys.executable, "-c", COMPILE_SNIPPET], env=env, text=True,
                              capture_output=True, check=True).stdout.strip()
        warm = subprocess.run([sys.executable, "-c", COMPILE_SNIPPET], env=env, text=True,
                              capture_output=True, check=True).stdout.strip()
    return cold, warm


def loops_per_call():
    """Chapter 6 per call: the compiled and NumPy cut-joint method, against Pinocchio's aba
    on the open chain with the same number of joints (a yardstick: Pinocchio has no
    cut-joint method; its constrained solvers cost more than aba)."""
    import timeit

    def best(f):
        out = []
        for _ in range(5):
            n, t = timeit.Timer(f).autorange()
            out.append(t / n)
        return min(out)

    try:
        import pinocchio as pin
    except ImportError:
        pin = None
    lines = ["## Closed loops (chapter 6), one call\n",
             "| mechanism | compiled | NumPy | Pinocchio aba, open chain | compiled / aba |",
             "|---|---|---|---|---|"]
    cases = (("crank-slider", mb.models.crank_slider(),
              lambda m: mb.models.crank_slider_state(m, 0.3, 2.0)),
             ("four-bar", mb.models.four_bar(), lambda m: mb.models.four_bar_state(m, 0.4, 1.3)),
             ("IFToMM N-four-bar, N = 10", mb.models.n_four_bar(10),
              lambda m: mb.models.n_four_bar_state(m, 0.3, 0.8)))
    for name, model, state in cases:
        q, qd = state(model)
        fast = best(lambda: mb.loops.forward_dynamics(model, q, qd))
        slow = best(lambda: mb.loops.forward_dynamics(model, q, qd, compiled=False))
        n_open = model.nv
        if pin is not None:
            pm = systems.pinocchio_model("chain", n_open)
            data = pm.createData()
            z = np.zeros(n_open)
            ref = best(lambda: pin.aba(pm, data, z, z, z))
            extra = f"{ref * 1e6:.1f} us (n = {n_open}) | {fast / ref:.0f}x"
        else:
            extra = "– | –"
        lines.append(f"| {name} | {fast * 1e6:.0f} us | {slow * 1e6:.0f} us | {extra} |")
    return "\n".join(lines) + "\n"


#: Andrews' squeezer: the test set's reference angles at t = 0.03 (PSIDE, tolerance 1e-14),
#: in its order (beta, Theta, gamma, Phi, delta, Omega, epsilon)
ANDREWS_REF = np.array([15.81077119629904, -15.75637105984298, 0.04082224013073101,
                        -0.5347301163226948, 0.5244099658805304, 0.5347301163226948,
                        1.048080741042263])


def loop_simulations():
    """Whole simulations of closed mechanisms with ``mb.loops.simulate`` (projection,
    DOP853) and ``mb.cartesian.simulate`` (Baumgarte), the compiled right-hand sides against
    the NumPy ones, and the stiff flyball governor (spring-dampers, a dissipated-energy
    channel) with ``mb.vereshchagin``."""
    lines = ["## Closed loops and dampers: whole simulations\n",
             "| system | route | wall time | right-hand sides | error |",
             "|---|---|---|---|---|"]
    m = mb.models.andrews_squeezer()
    q0, qd0 = mb.models.andrews_squeezer_state(m)
    runs = [(mb.loops.simulate, "", tol, tol, compiled)
            for tol in (1e-7, 1e-8) for compiled in (True, False)]
    runs += [(mb.cartesian.simulate, ", Baumgarte", 1e-7, 1e-8, compiled)   # chapter 2
             for compiled in (True, False)]
    for simulate, how, rtol, atol, compiled in runs:
        simulate(m, (0.0, 0.001), q0, qd0, compiled=compiled)   # warm
        t0 = time.perf_counter()
        res = simulate(m, (0.0, 0.03), q0, qd0, rtol=rtol, atol=atol, compiled=compiled)
        wall = time.perf_counter() - t0
        err = np.abs(res.q[-1, :7] - ANDREWS_REF[[0, 1, 2, 4, 3, 6, 5]]).max()
        route = ("compiled" if compiled else "NumPy") + how
        nfev = res.nfev if hasattr(res, "nfev") else res.sol.nfev
        lines.append(f"| Andrews' squeezer to t = 0.03, rtol {rtol:g}, atol {atol:g} | "
                     f"mb.{simulate.__module__.split('.')[1]}.simulate ({route}) | "
                     f"{wall:.2f} s | {nfev} | {err:.1e} (angles vs the test set) |")
    fly = mb.models.flyball_governor()
    q0, qd0 = mb.models.flyball_governor_state(fly)
    mb.vereshchagin.simulate(fly, (0.0, 0.01), q0, qd0)
    t0 = time.perf_counter()
    res = mb.vereshchagin.simulate(fly, (0.0, 2.0), q0, qd0, rtol=1e-9, atol=1e-9)
    wall = time.perf_counter() - t0
    balance = np.abs(res.energy + res.dissipated - res.energy[0]).max() / np.abs(res.energy).max()
    lines.append(f"| flyball governor (IFToMM A05), 2 s, rtol 1e-9 | mb.vereshchagin.simulate "
                 f"(compiled, dampers' power compiled) | {wall:.2f} s | {res.sol.nfev} | "
                 f"{balance:.1e} (energy + dissipated, relative) |")
    return "\n".join(lines) + "\n"


def symbolic_arm():
    """mb.symbolic on a six-joint spatial arm (the benchmark chain, n = 6): derive, lambdify,
    the numba compilation of the lambdified code, and the cost of a call, single and batched,
    next to Pinocchio's aba on the same arm."""
    import timeit

    def best(f, number=None):
        out = []
        for _ in range(5):
            if number is None:
                n, t = timeit.Timer(f).autorange()
            else:
                n, t = number, timeit.Timer(f).timeit(number)
            out.append(t / n)
        return min(out)

    model = systems.mbcourse_model("chain", 6)
    t0 = time.perf_counter()
    sym = mb.symbolic.derive(model)
    t1 = time.perf_counter()
    fns = mb.symbolic.lambdify(sym, compiled=False)
    t2 = time.perf_counter()
    fast = mb.symbolic.lambdify(sym, compiled=True)
    rng = np.random.default_rng(0)
    q, qd = rng.uniform(-1, 1, (2, 6))
    Q, QD = rng.uniform(-1, 1, (2, 1000, 6))
    err = np.max(np.abs(fast.forward_dynamics(q, qd) - mb.tree.forward_dynamics(model, q, qd)))
    single_math = best(lambda: fns.forward_dynamics(q, qd))
    single_fast = best(lambda: fast.forward_dynamics(q, qd))
    batched = best(lambda: fns.forward_dynamics(Q, QD), number=3) / 1000
    lines = ["## Symbolic: six-joint spatial arm (mb.symbolic)\n",
             f"* derive (Lagrange's equations, simplify where an entry has <= "
             f"{mb.symbolic._SIMPLIFY_OPS} operations): {t1 - t0:.1f} s; "
             f"lambdify with CSE: {t2 - t1:.1f} s; numba compilation of the CSE code "
             f"(once per function; by default it happens once the single calls have taken the "
             f"expected compile time, here {fns.expected_compile_seconds:.1f} s): "
             f"{fast.compile_seconds:.1f} s",
             f"* one call: compiled {single_fast * 1e6:.1f} us, math-module code "
             f"{single_math * 1e6:.0f} us; batched (B = 1000, NumPy): "
             f"{batched * 1e6:.1f} us per configuration; max |qdd - mb.tree| = {err:.1e}"]
    try:
        import pinocchio as pin

        pm = systems.pinocchio_model("chain", 6)
        data = pm.createData()
        z = np.zeros(6)
        ref = best(lambda: pin.aba(pm, data, q, qd, z))
        lines.append(f"* Pinocchio aba on the same arm: {ref * 1e6:.1f} us "
                     f"(compiled symbolic call / aba = {single_fast / ref:.1f}x)")
    except ImportError:
        pass
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(HERE / "results"))
    args = ap.parse_args(argv)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    text = ["# Simulations and compile times\n"]
    pend = mb.models.triple_pendulum()
    text.append(case("Chapter 4 triple pendulum, 5 s, rtol 1e-11", pend,
                     np.array([0.5, 0.3, -0.2]), 5.0, 1e-11, sympy=True))
    tree = systems.mbcourse_model("tree", 30)
    q0 = 0.3 * np.random.default_rng(0).normal(size=30)
    text.append(case("30-body tree (benchmark system), 2 s, rtol 1e-10", tree, q0, 2.0, 1e-10))
    text.append(loops_per_call())
    text.append(loop_simulations())
    text.append(symbolic_arm())
    cold, warm = compile_times()
    text.append("## Compiled kernels: first call, seconds\n")
    text.append(f"* empty numba cache (compiles): {cold}")
    text.append(f"* from the cache (every later process): {warm}\n")
    result = "\n".join(text)
    (out / "simulations.md").write_text(result)
    print(result)


if __name__ == "__main__":
    main()
