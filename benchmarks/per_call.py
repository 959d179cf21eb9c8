"""Per-call forward-dynamics time of every formulation as a ratio to Pinocchio's ``aba``.

    python benchmarks/per_call.py [--sizes 2 50] [--structure chain]

One process, one machine state: each method is timed on the same pool of states as
``pin.aba`` (best of five repeats of a loop over the pool) and printed as a ratio to it.
The issue-26 closing note quotes these ratios for the code before and after the refactor
(``PYTHONPATH=<old checkout> python benchmarks/per_call.py`` runs the old library).
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import systems  # noqa: E402

import mbcourse as mb  # noqa: E402

POOL = 16


def per_call(fn, states, repeats=5, loops=20):
    """Best time of ``loops`` passes over ``states``, per call, in seconds."""
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(loops):
            for s in states:
                fn(*s)
        best = min(best, (time.perf_counter() - t0) / (loops * len(states)))
    return best


def methods():
    return {
        "vereshchagin": mb.vereshchagin.forward_dynamics,
        "tree": mb.tree.forward_dynamics,
        "cartesian ldlt": lambda m, q, v, t: mb.cartesian.forward_dynamics(m, q, v, t,
                                                                           solver="ldlt"),
        "loops": mb.loops.forward_dynamics,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[2, 50])
    ap.add_argument("--structure", default="chain")
    args = ap.parse_args(argv)
    import pinocchio as pin
    print(f"mbcourse from {pathlib.Path(mb.__file__).parent}")
    for n in args.sizes:
        model = systems.mbcourse_model(args.structure, n)
        pmodel = systems.pinocchio_model(args.structure, n)
        pdata = pmodel.createData()
        Q, V, T = systems.random_states(model, POOL)
        states = list(zip(Q, V, T))
        t_pin = per_call(lambda q, v, t: pin.aba(pmodel, pdata, q, v, t), states)
        row = [f"n = {n:3d}: aba {t_pin * 1e6:7.2f} us"]
        for name, fn in methods().items():
            fn(model, *states[0])                       # compile / prepare once
            t = per_call(lambda q, v, tau: fn(model, q, v, tau), states)
            row.append(f"{name} {t / t_pin:6.1f}x")
        print("  ".join(row), flush=True)


if __name__ == "__main__":
    main()
