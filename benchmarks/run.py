"""Forward-dynamics time versus the number of bodies, every formulation of the course.

    python benchmarks/run.py                       # the full run (make bench)
    python benchmarks/run.py --sizes 2 3 --repeats 1 --out /tmp/b --no-external

Writes ``forward_dynamics.csv`` (method, structure, n, batch, seconds_per_config,
repeats, note), ``forward_dynamics.png`` (log-log) and ``summary.md`` (the target ratios)
into the output directory. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import pathlib
import platform
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import systems  # noqa: E402

import mbcourse as mb  # noqa: E402

try:
    from mbcourse import poisson
except ImportError as exc:  # being written: skip it with a note
    poisson, POISSON_MISSING = None, f"mbcourse.poisson not importable ({exc})"
else:
    POISSON_MISSING = ""

HERE = pathlib.Path(__file__).resolve().parent
POOL = 16  # distinct random states cycled through by the per-call loops


# ----------------------------------------------------------------------- methods
class Method:
    """One formulation: ``setup(structure, n)`` returns ``(one, many, prepare)`` where
    ``one(i)`` evaluates state ``i`` of the pool, ``many(Q, V, T)`` a batch (or None) and
    ``prepare(Q, V, T)`` turns states into the method's inputs (identity by default)."""

    def __init__(self, name, structures, setup, batched=True, note=""):
        self.name, self.structures, self.setup = name, structures, setup
        self.batched, self.note = batched, note


def _mb(fn):
    def setup(structure, n, model):
        return (lambda q, v, tau: fn(model, q, v, tau)), (lambda Q, V, T: fn(model, Q, V, T))
    return setup


def _poisson(solver):
    def setup(structure, n, model):
        # input: momenta p = M(q) qd (Poisson/Hamilton form); output: qd
        one = lambda q, p, tau: poisson.velocities(model, q, p, solver=solver)  # noqa: E731
        return one, one
    return setup


def _pinocchio(structure, n, model):
    import pinocchio as pin

    pm = systems.pinocchio_model(structure, n)
    data = pm.createData()
    one = lambda q, v, tau: pin.aba(pm, data, q, v, tau).copy()  # noqa: E731
    many = lambda Q, V, T: np.array([pin.aba(pm, data, Q[b], V[b], T[b])  # noqa: E731
                                     for b in range(len(Q))])
    return one, many


def _modern_robotics(structure, n, model):
    import modern_robotics as mr

    Mlist, Glist, Slist, g = systems.modern_robotics_chain(n)
    Ftip = np.zeros(6)
    one = lambda q, v, tau: mr.ForwardDynamics(q, v, tau, g, Ftip, Mlist, Glist,  # noqa: E731
                                               Slist)
    return one, None


def methods(external=True):
    out = [
        Method("vereshchagin", ("chain", "tree"), _mb(mb.vereshchagin.forward_dynamics),
               note="compiled kernel (mbcourse.kernels.vereshchagin)"),
        Method("tree A q''=B", ("chain", "tree"), _mb(mb.tree.forward_dynamics),
               note="compiled: chapter 3's A and B + Cholesky (mbcourse.kernels)"),
        Method("tree composite", ("chain", "tree"), _mb(mb.tree.forward_dynamics_composite),
               note="compiled: composite bodies + Cholesky (not chapter 3's algorithm)"),
        Method("vereshchagin numpy", ("chain", "tree"),
               _mb(lambda model, q, v, tau: mb.vereshchagin.forward_dynamics(
                   model, q, v, tau, compiled=False)), note="the batched NumPy recursion"),
        Method("tree numpy", ("chain", "tree"),
               _mb(lambda model, q, v, tau: mb.tree.forward_dynamics(
                   model, q, v, tau, compiled=False)), note="Phi m Phi^T assembly (3.163)"),
    ]
    for solver in ("dense", "schur", "ldlt"):
        out.append(Method(f"cartesian {solver}", ("chain", "tree"),
                          _mb(lambda model, q, v, tau, s=solver:
                              mb.cartesian.forward_dynamics(model, q, v, tau, solver=s))))
    if poisson is not None:
        for how in ("sweep", "cholesky"):
            out.append(Method(f"poisson {how}", ("chain", "tree", "cardan"), _poisson(how),
                              note="qd from momenta p (velocities(q, p)), not ddq"))
    if external:
        out.append(Method("pinocchio aba", ("chain", "tree"), _pinocchio,
                          note="C++; batch = aba per configuration from Python"))
        out.append(Method("modern_robotics", ("chain",), _modern_robotics, batched=False,
                          note="mr.ForwardDynamics (pure Python)"))
    return out


# ----------------------------------------------------------------------- timing
def _time(fn, min_time, repeats, count):
    """Median over ``repeats`` of the time per item; each repeat calls ``fn(i)``
    (i = 0, 1, ...) until ``min_time`` has passed; one call handles ``count`` items."""
    samples = []
    for _ in range(repeats):
        loops, t0 = 0, time.perf_counter()
        while True:
            fn(loops)
            loops += 1
            elapsed = time.perf_counter() - t0
            if elapsed >= min_time:
                break
        samples.append(elapsed / loops / count)
    return statistics.median(samples)


def _predict(history, n):
    """Extrapolate the time of one call at size ``n`` from the last two sizes."""
    if not history:
        return 0.0
    if len(history) == 1:
        (n1, t1), = history
        return t1 * (n / n1) ** 2
    (n0, t0), (n1, t1) = history[-2:]
    slope = math.log(max(t1, 1e-9) / max(t0, 1e-9)) / math.log(n1 / n0)
    return t1 * (n / n1) ** min(max(slope, 1.0), 3.5)


class Runner:
    def __init__(self, args):
        self.args = args
        self.rows = []
        self.stopped = {}  # (method, structure, mode) -> note
        self.warmed = set()  # (method, structure, mode) called once before any timing

    def log(self, *text):
        if not self.args.quiet:
            print(*text, flush=True)

    def add(self, method, structure, n, batch, seconds, repeats, note):
        self.rows.append(dict(method=method, structure=structure, n=n, batch=batch,
                              seconds_per_config=seconds, repeats=repeats, note=note))
        shown = "   --   " if seconds is None else f"{seconds * 1e6:10.1f} us"
        self.log(f"  {method:18s} {structure:6s} n={n:4d} B={batch:5d} {shown}  {note}")

    def measure(self, method, structure, n, mode, model, inputs, expected, tol):
        """Check agreement, then time per call (mode 'call') or batched (mode 'batch')."""
        a = self.args
        key = (method.name, structure, mode)
        batch = 1 if mode == "call" else a.batch_for(n)
        if key in self.stopped:
            self.add(method.name, structure, n, batch, None, 0, self.stopped[key])
            return
        history = [(r["n"], r["seconds_per_config"] * r["batch"]) for r in self.rows
                   if (r["method"], r["structure"]) == key[:2] and r["seconds_per_config"]
                   and (r["batch"] == 1) == (mode == "call")]
        guess = _predict(history, n)
        if guess > 3 * a.cap:
            note = f"skipped: predicted {guess:.1f} s per call > cap {a.cap:g} s"
            self.stopped[key] = f"skipped (cap {a.cap:g} s reached at a smaller n)"
            self.add(method.name, structure, n, batch, None, 0, note)
            return
        one, many = method.setup(structure, n, model)
        Q, V, T = inputs
        if key not in self.warmed:  # compiled kernels compile (or load) on their first call
            self.warmed.add(key)
            if mode == "call":
                one(Q[0], V[0], T[0])
            elif many is not None:
                many(*(np.resize(x, (min(batch, 64), x.shape[1])) for x in (Q, V, T)))
        if mode == "batch":
            if many is None:
                return
            k = batch
            Qb, Vb, Tb = (np.resize(x, (k, x.shape[1])) for x in (Q, V, T))
            t0 = time.perf_counter()
            got = many(Qb, Vb, Tb)[:1]
            first = time.perf_counter() - t0
        else:
            t0 = time.perf_counter()
            got = one(Q[0], V[0], T[0])
            first = time.perf_counter() - t0
        err = float(np.abs(np.asarray(got).reshape(-1) - expected).max())
        note = method.note
        if err > tol:
            message = (f"{method.name} on the {structure} of n={n} disagrees with the "
                       f"reference by {err:.3g} (tolerance {tol:.3g})")
            # q'' methods must agree (the fairness proof); the Poisson solves are recorded
            assert method.name.startswith("poisson"), message
            print(f"WARNING: {message}", file=sys.stderr)
            note = f"INACCURATE: error {err:.2g} > tolerance {tol:.2g}; " + note
        if first > a.cap:
            note = f"capped: one call took {first:.2f} s > {a.cap:g} s; larger n skipped"
            self.stopped[key] = f"skipped (cap {a.cap:g} s reached at a smaller n)"
            self.add(method.name, structure, n, batch, first / batch, 1, note)
            return
        repeats = a.repeats if first < 0.5 else max(1, min(a.repeats, 3))
        if mode == "call":
            seconds = _time(lambda i: one(Q[i % POOL], V[i % POOL], T[i % POOL]), a.min_time,
                            repeats, 1)
        else:
            seconds = _time(lambda i: many(Qb, Vb, Tb), a.min_time, repeats, batch)
        self.add(method.name, structure, n, batch, seconds, repeats, note)

    def run_structure(self, structure, sizes, meths):
        for n in sizes:
            model = systems.mbcourse_model(structure, n)
            Q, V, T = systems.random_states(model, POOL, seed=n)
            # the reference accelerations: Vereshchagin, itself checked against Pinocchio
            ddq = mb.vereshchagin.forward_dynamics(model, Q[0], V[0], T[0])
            P = poisson.momenta(model, Q, V)[0] if poisson is not None else None
            for method in meths:
                if structure not in method.structures:
                    continue
                is_poisson = method.name.startswith("poisson")
                inputs = (Q, P, T) if is_poisson else (Q, V, T)
                expected = V[0] if is_poisson else ddq
                # the O(n^3) routes lose a few digits on long chains
                tol = 1e-9 * (1.0 + np.abs(expected).max()) * max(1.0, n / 10)
                for mode in ("call", "batch") if method.batched else ("call",):
                    self.measure(method, structure, n, mode, model, inputs, expected, tol)


# ----------------------------------------------------------------------- outputs
def write_csv(rows, path):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["method", "structure", "n", "batch",
                                          "seconds_per_config", "repeats", "note"])
        w.writeheader()
        for r in rows:
            r = dict(r)
            s = r["seconds_per_config"]
            r["seconds_per_config"] = "" if s is None else f"{s:.6e}"
            w.writerow(r)


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    structures = [s for s in ("chain", "tree", "cardan") if any(r["structure"] == s for r in rows)]
    fig, axes = plt.subplots(1, len(structures), figsize=(6.2 * len(structures), 5.2),
                             squeeze=False)
    names = list(dict.fromkeys(r["method"] for r in rows))
    colors = {m: f"C{i % 10}" for i, m in enumerate(names)}
    for ax, structure in zip(axes[0], structures):
        for m in names:
            for batched in (False, True):
                pts = [r for r in rows if r["method"] == m and r["structure"] == structure
                       and (r["batch"] > 1) == batched and r["seconds_per_config"]]
                if not pts:
                    continue
                ok = [r for r in pts if not r["note"].startswith("capped")]
                capped = [r for r in pts if r["note"].startswith("capped")]
                label = m + (" (batched, per config)" if batched else "")
                ax.loglog([r["n"] for r in ok], [r["seconds_per_config"] for r in ok],
                          "--" if batched else "-", marker="o", ms=3, color=colors[m],
                          label=label, alpha=0.6 if batched else 1.0)
                if capped:
                    ax.loglog([r["n"] for r in capped],
                              [r["seconds_per_config"] for r in capped], "x", ms=9,
                              color=colors[m])
        ax.set_title(f"{structure}: forward dynamics (x = capped, one call)")
        ax.set_xlabel("number of bodies n")
        ax.set_ylabel("seconds per configuration (median)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _t(rows, method, structure, n, batched=False):
    for r in rows:
        if (r["method"], r["structure"], r["n"]) == (method, structure, n) \
                and (r["batch"] > 1) == batched and r["seconds_per_config"] \
                and not r["note"].startswith("capped"):
            return r["seconds_per_config"], r["batch"]
    return None, None


def summary(rows, args):
    lines = [f"# Benchmark summary\n",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
             f"{platform.python_version()}, NumPy {np.__version__}; repeats {args.repeats}, "
             f"cap {args.cap:g} s per call.\n"]
    ver = "vereshchagin"
    pin = "pinocchio aba"
    ns = sorted({r["n"] for r in rows if r["structure"] == "chain"})
    meths = [m for m in dict.fromkeys(r["method"] for r in rows if r["structure"] == "chain")
             if m != pin]
    ratio = lambda a, b: f"{a / b:.2f}" if a and b else "–"  # noqa: E731
    # the targets: ratios to Pinocchio, per call and batched
    for batched in (False, True):
        what = "batched (time per configuration)" if batched else "per call"
        lines.append(f"## Chains, {what}: time / Pinocchio's aba\n")
        lines.append("| method | " + " | ".join(f"n={n}" for n in ns) + " |\n|---|"
                     + "---|" * len(ns))
        for m in meths:
            cells = [ratio(_t(rows, m, "chain", n, batched)[0],
                           _t(rows, pin, "chain", n, batched)[0]) for n in ns]
            if any(c != "–" for c in cells):
                lines.append(f"| {m} | " + " | ".join(cells) + " |")
        p_ = [_t(rows, pin, "chain", n, batched)[0] for n in ns]
        lines.append("| *pinocchio aba (us)* | " + " | ".join(
            f"{x * 1e6:.1f}" if x else "–" for x in p_) + " |\n")
    # linearity
    lines.append("## Linearity on chains: t(500) / t(50), per call (target <= 12 for O(n))\n")
    lines.append("| method | t(50) | t(500) | ratio |\n|---|---|---|---|")
    for m in dict.fromkeys(r["method"] for r in rows):
        a, _ = _t(rows, m, "chain", 50)
        b, _ = _t(rows, m, "chain", 500)
        if a and b:
            lines.append(f"| {m} | {a * 1e3:.3f} ms | {b * 1e3:.3f} ms | {b / a:.1f} |")
    # per call vs modern_robotics and the tree route
    lines.append("\n## Per call (chain): Vereshchagin versus modern_robotics, the dense tree "
                 "route and Pinocchio\n")
    lines.append("| n | vereshchagin | tree A q''=B | modern_robotics | pinocchio | "
                 "mr / ver | tree / ver | ver / pin |\n|---|---|---|---|---|---|---|---|")
    for n in sorted({r["n"] for r in rows if r["structure"] == "chain"}):
        v, _ = _t(rows, ver, "chain", n)
        tr, _ = _t(rows, "tree A q''=B", "chain", n)
        mr_, _ = _t(rows, "modern_robotics", "chain", n)
        p, _ = _t(rows, "pinocchio aba", "chain", n)
        f = lambda x: f"{x * 1e3:.3f} ms" if x else "–"  # noqa: E731
        g = lambda x, y: f"{x / y:.2f}" if x and y else "–"  # noqa: E731
        lines.append(f"| {n} | {f(v)} | {f(tr)} | {f(mr_)} | {f(p)} | {g(mr_, v)} | "
                     f"{g(tr, v)} | {g(v, p)} |")
    for structure in ("chain", "tree"):
        for batched in (False, True):
            ns = sorted({r["n"] for r in rows if r["structure"] == structure})
            faster = [n for n in ns if (_t(rows, ver, structure, n, batched)[0] or 0)
                      and (_t(rows, "tree A q''=B", structure, n, batched)[0] or math.inf)
                      > _t(rows, ver, structure, n, batched)[0]]
            cross = next((n for n in ns if all(m in faster for m in ns if m >= n)), None)
            lines.append(f"\nCrossover against the dense tree route ({structure}, "
                         f"{'batched' if batched else 'per call'}): Vereshchagin is faster "
                         f"from n = {cross} on" if cross else
                         f"\nCrossover ({structure}, {'batched' if batched else 'per call'}): "
                         "none in the measured range")
    # cholesky vs sweep
    lines.append("\n## Poisson: Cholesky versus sweep on Cardan chains (universal joints)\n")
    if poisson is None:
        lines.append(f"Not measured: {POISSON_MISSING}.")
    else:
        lines.append("| n | sweep | cholesky | sweep / cholesky (per call) | "
                     "sweep / cholesky (batched) |\n|---|---|---|---|---|")
        for n in sorted({r["n"] for r in rows if r["structure"] == "cardan"}):
            s, _ = _t(rows, "poisson sweep", "cardan", n)
            c, _ = _t(rows, "poisson cholesky", "cardan", n)
            sb, _ = _t(rows, "poisson sweep", "cardan", n, True)
            cb, _ = _t(rows, "poisson cholesky", "cardan", n, True)
            if s and c:
                lines.append(f"| {n} | {s * 1e3:.3f} ms | {c * 1e3:.3f} ms | {s / c:.2f} | "
                             + (f"{sb / cb:.2f} |" if sb and cb else "– |"))
    return "\n".join(lines) + "\n"


def have_external(*modules):
    """Whether the external libraries ``modules`` import; a note on stderr when not (the
    scripts then run without them)."""
    import importlib

    try:
        for name in modules:
            importlib.import_module(name)
    except ImportError as exc:
        print(f"note: {exc}; run `make bench` (installs the bench extra) or pass "
              "--no-external", file=sys.stderr)
        return False
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[2, 7, 25, 50, 200, 500])
    ap.add_argument("--cardan-sizes", type=int, nargs="*", default=[5, 10, 20, 50])
    ap.add_argument("--structures", nargs="+", default=["chain", "tree"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.05,
                    help="each repeat loops at least this long (s)")
    ap.add_argument("--batch", type=int, default=1000, help="batch size up to n = 50")
    ap.add_argument("--batch-work", type=int, default=50000,
                    help="beyond n = 50 the batch is batch-work / n configurations")
    ap.add_argument("--cap", type=float, default=2.0,
                    help="stop a method once one call takes longer (s)")
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--no-external", action="store_true",
                    help="skip Pinocchio and modern_robotics")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    args.batch_for = lambda n: args.batch if n <= 50 else max(10, min(args.batch,
                                                                     args.batch_work // n))
    external = not args.no_external and have_external("modern_robotics", "pinocchio")
    if POISSON_MISSING:
        print(f"note: {POISSON_MISSING}; the Poisson methods are skipped", file=sys.stderr)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    runner = Runner(args)
    meths = methods(external)
    t0 = time.perf_counter()
    for structure in args.structures:
        runner.log(f"{structure}:")
        runner.run_structure(structure, args.sizes, meths)
    if poisson is not None and args.cardan_sizes:
        runner.log("cardan:")
        runner.run_structure("cardan", args.cardan_sizes, meths)
    write_csv(runner.rows, out / "forward_dynamics.csv")
    plot(runner.rows, out / "forward_dynamics.png")
    text = summary(runner.rows, args)
    text += f"\nTotal benchmark time: {time.perf_counter() - t0:.0f} s.\n"
    (out / "summary.md").write_text(text)
    runner.log("\n" + text)
    return runner.rows


if __name__ == "__main__":
    main()
