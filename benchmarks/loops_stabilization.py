"""Drift, energy error and cost of the cut-joint method's treatments of drift.

    python benchmarks/loops_stabilization.py                 # the table of mb.loops
    python benchmarks/loops_stabilization.py --t-end 1 --tol 1e-6

Systems: the crank-slider (``mb.models.crank_slider``) from ``theta = 0.3 rad``,
``omega = 5 rad/s`` with a spring of 200 N/m from the ground to the slider, and the
Grashof four-bar (``mb.models.four_bar``) from ``theta = 0.3 rad``, ``omega = 10 rad/s``
(gravity only): conservative, so the energy is a check. DOP853, 101 output points.
Columns: ``drift`` the largest ``|f|`` of the cut joint's rows, ``vdrift`` the largest
``|df/dt|``, ``dE`` the largest ``|E - E0| / max |E|``, ``nfev`` right-hand-side
evaluations, ``s`` wall time (seconds, this machine, noisy; after a first short run of each
treatment, so without the kernels' compilation).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import mbcourse as mb

TREATMENTS = ("none", "baumgarte", "projection", "partitioning")


def systems():
    crank = mb.models.crank_slider()
    crank.add_spring("s", "ground", "slider", point_a=(0.6, 0.1, 0.0), stiffness=200.0,
                     rest_length=0.1)
    four = mb.models.four_bar()
    return [("crank-slider", crank, mb.models.crank_slider_state(crank, 0.3, 5.0)),
            ("four-bar", four, mb.models.four_bar_state(four, 0.3, 10.0))]


def study(t_end=2.0, tols=(1e-6, 1e-8, 1e-10), treatments=TREATMENTS):
    """One row per (system, tolerance, treatment).

    Examples
    --------
    >>> rows = study(t_end=0.05, tols=(1e-6,), treatments=("projection",))
    >>> [(r["system"], r["drift"] < 1e-10) for r in rows]
    [('crank-slider', True), ('four-bar', True)]
    """
    out = []
    for name, model, (q0, qd0) in systems():
        for how in treatments:         # compile and load the kernels outside the timings
            mb.loops.simulate(model, (0.0, 1e-3), q0, qd0, stabilization=how)
        for tol in tols:
            for how in treatments:
                start = time.perf_counter()
                res = mb.loops.simulate(model, (0.0, t_end), q0, qd0, stabilization=how,
                                        rtol=tol, atol=tol,
                                        t_eval=np.linspace(0.0, t_end, 101))
                wall = time.perf_counter() - start
                E = res.energy
                out.append({"system": name, "tol": tol, "treatment": how,
                            "drift": float(res.position_drift.max()),
                            "vdrift": float(res.velocity_drift.max()),
                            "dE": float(np.abs(E - E[0]).max() / np.abs(E).max()),
                            "nfev": int(res.nfev), "seconds": wall})
    return out


def table(rows):
    lines = [f"{'system':13s} {'tol':>6s} {'treatment':13s} {'drift':>8s} {'vdrift':>8s} "
             f"{'dE':>8s} {'nfev':>6s} {'s':>6s}"]
    for r in rows:
        lines.append(f"{r['system']:13s} {r['tol']:6.0e} {r['treatment']:13s} "
                     f"{r['drift']:8.1e} {r['vdrift']:8.1e} {r['dE']:8.1e} {r['nfev']:6d} "
                     f"{r['seconds']:6.1f}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-end", type=float, default=2.0)
    parser.add_argument("--tol", type=float, nargs="+", default=[1e-6, 1e-8, 1e-10])
    args = parser.parse_args(argv)
    print(table(study(args.t_end, tuple(args.tol))))


if __name__ == "__main__":
    main()
