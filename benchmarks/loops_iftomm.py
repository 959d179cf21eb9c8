"""The closed-loop benchmark problems (IFToMM / Coruña library, A02, A04, A05) by the
cut-joint method and by chapter 2's absolute coordinates, side by side.

    python benchmarks/loops_iftomm.py            # writes benchmarks/results/loops_iftomm.md

What is published for these problems is in ``benchmarks/iftomm_reference.md`` (no reference
time histories could be read; the specification's data and the OpenSim implementation's
figures). Each run reports wall time (this machine: 2 cores, shared, noisy), right-hand-side
evaluations, the largest constraint residual, the energy error ``max |E + D - E0| / max |E|``
(``D`` the energy dissipated by dampers) and a number to compare with the published figures:

* A02 N-four-bar (N = 2 as in the OpenSim study, 10 s; N = 40 of the specification, 2.5 s):
  the time of the crank's first full turn (the figures: about 1.95 s) and the lowest x
  velocity of B0 (about -6.8 m/s);
* A04 Bricard (10 s): from rest at joint A's angle 0 the linkage swings to pi and back
  (the figure: P3's x from 1 to -1 and back in 5 s);
* A05 stiff flyball governor (0.3 s, Radau): the largest sleeve coordinate s (figure: about
  0.745 m near t = 0.5 s, so 0.3 s shows the rise only).
"""

from __future__ import annotations

import argparse
import pathlib
import time

import numpy as np

import mbcourse as mb

OUT = pathlib.Path(__file__).resolve().parent / "results" / "loops_iftomm.md"


BUDGET = 120.0  # seconds of wall time per run; a route that stalls is stopped


class _OutOfTime(Exception):
    pass


def budget_tau(nv):
    """``tau(t, q, qd) = 0`` that stops the run after :data:`BUDGET` seconds (every route
    calls it once per right-hand side)."""
    start = time.perf_counter()
    zero = np.zeros(nv)
    last = {"t": 0.0}

    def tau(t, q, qd):
        last["t"] = t
        if time.perf_counter() - start > BUDGET:
            raise _OutOfTime(f"stopped after {BUDGET:.0f} s of wall time at t = {t:.3f} s")
        return zero
    return tau


def _run(label, route, fn):
    start = time.perf_counter()
    try:
        res = fn()
        return label, route, time.perf_counter() - start, res, None
    except _OutOfTime as err:
        return label, route, time.perf_counter() - start, None, str(err)
    except mb.errors.MbcourseError as err:
        return label, route, time.perf_counter() - start, None, str(err).split(":")[0][:90]


def _metrics(res, drift):
    E = res.energy + getattr(res, "dissipated", 0.0)
    nfev = getattr(res, "nfev", None)
    nfev = res.sol.nfev if nfev is None or not isinstance(nfev, (int, np.integer)) else nfev
    return int(nfev), float(drift.max()), \
        float(np.abs(E - E[0]).max() / np.abs(E).max())


def n_four_bar(N, t_end, rtol):
    m = mb.models.n_four_bar(N=N)
    q0, qd0 = mb.models.n_four_bar_state(m, 0.0, -1.0)
    te = np.linspace(0.0, t_end, int(100 * t_end) + 1)
    out = []
    for route, fn in (
            ("loops (projection)", lambda: mb.loops.simulate(m, (0, t_end), q0, qd0, budget_tau(m.nv),
                                                             rtol=rtol, atol=rtol, t_eval=te)),
            ("cartesian (Baumgarte)", lambda: mb.cartesian.simulate(
                m, (0, t_end), q0, qd0, rtol=rtol, atol=rtol, t_eval=te, tau=budget_tau(m.nv)))):
        label, route, wall, res, err = _run(f"A02 N-four-bar, N = {N}, {t_end} s", route, fn)
        if res is None:
            out.append((label, route, wall, None, None, None, err))
            continue
        drift = res.position_drift
        nfev, d, dE = _metrics(res, drift)
        turn = res.t[np.argmax(res.q[:, 0] <= -2 * np.pi)] if (res.q[:, 0] <= -2 * np.pi).any() \
            else float("nan")
        vel, _ = m.body_velocities(res.q, res.qd)
        # B0: the tip of the first crank (the crank's velocity at twice its centre's lever)
        vB0x = 2.0 * vel[:, 1, 0]
        out.append((label, route, wall, nfev, d, dE,
                    f"first turn {turn:.3f} s, min vB0x {vB0x.min():.2f} m/s"))
    return out


def bricard(t_end, rtol):
    m = mb.models.bricard()
    q0, qd0 = mb.models.bricard_state(m, 0.0)
    te = np.linspace(0.0, t_end, int(100 * t_end) + 1)
    out = []
    for route, fn in (
            ("loops (projection)", lambda: mb.loops.simulate(m, (0, t_end), q0, qd0, budget_tau(m.nv),
                                                             rtol=rtol, atol=rtol, t_eval=te)),
            ("cartesian (Baumgarte, lstsq)", lambda: mb.cartesian.simulate(
                m, (0, t_end), q0, qd0, rtol=rtol, atol=rtol, t_eval=te, redundant="lstsq",
                tau=budget_tau(m.nv)))):
        label, route, wall, res, err = _run(f"A04 Bricard, {t_end} s", route, fn)
        if res is None:
            out.append((label, route, wall, None, None, None, err))
            continue
        drift = res.position_drift
        nfev, d, dE = _metrics(res, drift)
        a = res.q[:, 0]
        late = (res.t > 2.5) & (res.t < 7.5)  # released at rest at a = 0: its turning point
        back = res.t[late][np.argmin(np.abs(a[late]))] if late.any() else float("nan")
        out.append((label, route, wall, nfev, d, dE,
                    f"largest joint A angle {a.max():.3f} rad; back at 0 at t = {back:.2f} s"))
    return out


def governor(t_end, rtol):
    m = mb.models.flyball_governor()
    q0, qd0 = mb.models.flyball_governor_state(m)
    te = np.linspace(0.0, t_end, 61)
    k = m.q_names.index("slide.displacement")
    out = []
    for route, fn in (
            ("loops (Radau)", lambda: mb.loops.simulate(m, (0, t_end), q0, qd0, budget_tau(m.nv),
                                                        method="Radau", rtol=rtol, atol=rtol,
                                                        t_eval=te)),
            ("tree + mb.sim (Radau)", lambda: mb.sim.simulate(
                m, mb.tree.forward_dynamics, (0, t_end), q0, qd0, budget_tau(m.nv), method="Radau",
                rtol=rtol, atol=rtol, t_eval=te)),
            ("cartesian (Radau)", lambda: mb.cartesian.simulate(
                m, (0, t_end), q0, qd0, method="Radau", rtol=rtol, atol=rtol, t_eval=te,
                baumgarte=None, tau=budget_tau(m.nv)))):
        label, route, wall, res, err = _run(f"A05 stiff governor, {t_end} s", route, fn)
        if res is None:
            out.append((label, route, wall, None, None, None, err))
            continue
        drift = res.position_drift
        nfev, d, dE = _metrics(res, drift)
        s = res.q[:, k]
        out.append((label, route, wall, nfev, d, dE, f"s from {s[0]:.3f} to {s.max():.3f} m"))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short runs (a smoke test)")
    args = parser.parse_args(argv)
    rows = []
    if args.quick:
        rows += n_four_bar(2, 0.5, 1e-6) + bricard(0.5, 1e-7) + governor(0.02, 1e-6)
    else:
        rows += n_four_bar(2, 10.0, 1e-6) + n_four_bar(40, 2.5, 1e-6)
        rows += bricard(10.0, 1e-7) + governor(0.3, 1e-6)
    lines = ["| problem | route | wall s | nfev | max constraint residual | energy error | "
             "compare with the figures |", "|---|---|---|---|---|---|---|"]
    for label, route, wall, nfev, d, dE, note in rows:
        if nfev is None:
            lines.append(f"| {label} | {route} | {wall:.1f} | - | - | - | failed: {note} |")
        else:
            lines.append(f"| {label} | {route} | {wall:.1f} | {nfev} | {d:.1e} | {dE:.1e} | "
                         f"{note} |")
    text = "\n".join(lines)
    print(text)
    if not args.quick:
        OUT.write_text("# Closed-loop benchmarks (python benchmarks/loops_iftomm.py)\n\n"
                       + text + "\n")


if __name__ == "__main__":
    main()
