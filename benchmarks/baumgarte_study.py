"""Drift and energy error of absolute-coordinate simulation against the Baumgarte gains.

    python benchmarks/baumgarte_study.py                    # the table of the docstring of
                                                            # mbcourse/cartesian/simulate.py
    python benchmarks/baumgarte_study.py --t-end 2 --tol 1e-6 --gains 0,0 10,10

Double pendulum released at rest from ``q = (0.3, 0.5)`` and crank-slider from
``theta = 0.3 rad``, ``omega = 5 rad/s`` (``mb.models``), both in the planar form, DOP853,
201 output points. ``drift`` is the largest ``|g|`` over the run, ``dE`` the largest
``|E - E0| / (|E0| + max T)``, ``nfev`` the number of right-hand-side evaluations. The
default gains of ``mb.cartesian.DEFAULT_BAUMGARTE`` were chosen from this table.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import mbcourse as mb

GAINS = ((0, 0), (1, 1), (2, 2), (5, 5), (10, 10), (20, 20), (50, 50), (10, 0), (0, 10),
         (20, 10))


def baumgarte_study(gains=((0, 0), (1, 1), (5, 5), (10, 10), (20, 20), (50, 50)),
                    t_end=10.0, rtol=1e-8, atol=1e-8):
    """Measure drift and energy error against the Baumgarte gains.

    Returns
    -------
    list of dict
        ``{"system", "alpha", "beta", "drift", "velocity_drift", "energy_error", "nfev"}``
        (maxima over the 201 output points; energy error relative to the initial energy's
        magnitude plus the largest kinetic energy).

    Examples
    --------
    >>> rows = baumgarte_study(gains=[(10, 10)], t_end=0.2)
    >>> [(r["system"], r["drift"] < 1e-8) for r in rows]
    [('pendulum', True), ('crank-slider', True)]
    """
    pend = mb.models.double_pendulum()
    crank = mb.models.crank_slider()
    cases = [("pendulum", pend, (np.array([0.3, 0.5]), np.zeros(2))),
             ("crank-slider", crank, mb.models.crank_slider_state(crank, 0.3, 5.0))]
    out = []
    for name, model, (q, qd) in cases:
        for alpha, beta in gains:
            sim = mb.cartesian.simulate(model, (0.0, t_end), q, qd, baumgarte=(alpha, beta),
                                        rtol=rtol, atol=atol,
                                        t_eval=np.linspace(0.0, t_end, 201))
            E = sim.energy
            scale = abs(E[0]) + sim.kinetic_energy.max()
            out.append(dict(system=name, alpha=alpha, beta=beta,
                            drift=float(sim.position_drift.max()),
                            velocity_drift=float(sim.velocity_drift.max()),
                            energy_error=float(np.abs(E - E[0]).max() / scale),
                            nfev=sim.nfev))
    return out


def table(rows):
    """The rows as the docstring's table: one line per gain pair, both systems side by side."""
    by = {(r["system"], r["alpha"], r["beta"]): r for r in rows}
    pairs = list(dict.fromkeys((r["alpha"], r["beta"]) for r in rows))
    lines = ["                         double pendulum               crank-slider",
             "(alpha, beta) 1/s     drift     dE      nfev        drift     dE      nfev"]
    for a, b in pairs:
        p, c = by[("pendulum", a, b)], by[("crank-slider", a, b)]
        lines.append(f"{f'({a:g}, {b:g})':18s}{p['drift']:9.1e}{p['energy_error']:9.1e}"
                     f"{p['nfev']:7d}    {c['drift']:9.1e}{c['energy_error']:9.1e}{c['nfev']:7d}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-end", type=float, default=10.0)
    parser.add_argument("--tol", type=float, nargs="+", default=[1e-8, 1e-6],
                        help="rtol = atol values, one table each")
    parser.add_argument("--gains", nargs="+", default=None,
                        help="alpha,beta pairs (default: the docstring's)")
    args = parser.parse_args(argv)
    gains = GAINS if args.gains is None else [tuple(float(x) for x in g.split(","))
                                              for g in args.gains]
    for tol in args.tol:
        start = time.perf_counter()
        rows = baumgarte_study(gains, args.t_end, tol, tol)
        print(f"rtol = atol = {tol:g}  ({time.perf_counter() - start:.0f} s)")
        print(table(rows))
        print()


if __name__ == "__main__":
    main()
