"""Forward dynamics of real robots, fixed and floating base, as ratios to Pinocchio's ``aba``.

    python benchmarks/robots.py                        # part of `make bench`
    python benchmarks/robots.py --shipped-only --repeats 1 --min-time 0 --batch 4 --out /tmp/r

Robots: the two shipped arms (``mb.urdf.robot("panda")``, ``mb.urdf.robot("so100")``) and,
when ``example_robot_data`` is installed (the ``bench`` extra), the quadruped Solo-12 and the
humanoid TALOS (``talos_reduced.urdf``), each with a fixed base and with a floating base (a
``free`` root joint). Pinocchio builds the same model from the same URDF file
(``pin.JointModelFreeFlyer()`` at the root for the floating base).

Writes ``robots.csv`` and ``robots.md`` into the output directory (``benchmarks/results``);
see benchmarks/README.md, "Real robots".

State conversion (checked: every method's ``q''`` must agree with Pinocchio's ``aba``, an
``assert`` before any timing). Joints are matched by name. The free joint of mbcourse is
``q = (x, y, z, qw, qx, qy, qz)`` (position in world axes), speeds ``(dz/dt in world axes,
angular velocity in body axes)``, forces dual to them (force in world axes, moment in body
axes); Pinocchio's free flyer is ``q = (x, y, z, qx, qy, qz, qw)`` with the speed, the
acceleration and the force all in body axes. With ``R`` the base orientation and ``w`` its
angular velocity: ``v_pin = R^T dz/dt``, ``f_pin = R^T f``, and the accelerations satisfy
``d2z/dt2 = R (a_pin + w x v_pin)`` (the derivative of ``R v_pin``).
"""

from __future__ import annotations

import argparse
import csv
import os
import pathlib
import platform
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run import _time, have_external  # noqa: E402  (the same timing loop as the synthetic systems)

import mbcourse as mb  # noqa: E402
from mbcourse.errors import ModelError  # noqa: E402

POOL = 16  # distinct random states cycled through by the per-call loops
#: (label, kind, where): a shipped robot's name, or a path inside example-robot-data
ROBOTS = [("panda", "arm", "panda"), ("so100", "arm", "so100"),
          ("solo12", "quadruped", "solo_description/robots/solo12.urdf"),
          ("talos_reduced", "humanoid", "talos_data/robots/talos_reduced.urdf")]
CSV_FIELDS = ["robot", "kind", "base", "nv", "method", "route", "batch", "seconds_per_config",
              "ratio_to_pinocchio", "repeats", "max_error", "note"]


def robot_files(shipped_only=False):
    """``[(label, kind, path)]`` of the robots to measure (example-robot-data if installed)."""
    out = [(label, kind, mb.urdf.robot_path(where)) for label, kind, where in ROBOTS
           if "/" not in where]
    if shipped_only:
        return out
    try:
        from example_robot_data.robots_loader import getModelPath
    except ImportError:
        print("note: example_robot_data is not installed (the bench extra); only the shipped "
              "robots are measured", file=sys.stderr)
        return out
    for label, kind, where in ROBOTS:
        if "/" in where:
            out.append((label, kind, pathlib.Path(getModelPath(where)) / where))
    return out


# ----------------------------------------------------------------------- Pinocchio
class PinocchioRobot:
    """Pinocchio's model of the same URDF file and the state conversion to and from it."""

    def __init__(self, path, model):
        import pinocchio as pin

        self.pin = pin
        floating = any(j.floating for j in model.joints)
        self.pm = (pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating
                   else pin.buildModelFromUrdf(str(path)))
        self.pdata = self.pm.createData()
        assert self.pm.nv == model.nv, (self.pm.nv, model.nv)
        self.free = None  # (mbcourse q index, v index, Pinocchio q index, v index)
        iq, iv = np.zeros(self.pm.nq, int), np.zeros(self.pm.nv, int)
        self.unbounded = []  # (Pinocchio q index, mbcourse q index): (cos q, sin q)
        for joint in model.joints:
            jid = self.pm.getJointId(joint.name)
            assert jid < self.pm.njoints, f"Pinocchio has no joint {joint.name!r}"
            pj = self.pm.joints[jid]
            qs, vs = joint.q_slice, joint.v_slice
            if (pj.nq, pj.nv, joint.nq, joint.nv) == (2, 1, 1, 1):   # URDF continuous
                self.unbounded.append((pj.idx_q, qs.start))
                iv[pj.idx_v] = vs.start
                continue
            assert (pj.nq, pj.nv) == (joint.nq, joint.nv), joint.name
            if joint.floating:
                assert pj.idx_q == 0 and pj.idx_v == 0 and qs.start == 0 and vs.start == 0
                self.free = True
            iq[pj.idx_q:pj.idx_q + pj.nq] = np.arange(qs.start, qs.stop)
            iv[pj.idx_v:pj.idx_v + pj.nv] = np.arange(vs.start, vs.stop)
        assert self.pm.nq == model.nq + len(self.unbounded), (self.pm.nq, model.nq)
        if self.free:  # Pinocchio's quaternion is (qx, qy, qz, qw)
            iq[3:7] = [4, 5, 6, 3]
        self.iq, self.iv = iq, iv

    def inputs(self, q, v, tau):
        """Pinocchio's ``(q, v, tau)`` of one mbcourse state."""
        qp, vp, tp = q[self.iq], v[self.iv], tau[self.iv]
        for k, j in self.unbounded:
            qp[k:k + 2] = np.cos(q[j]), np.sin(q[j])
        if self.free:
            RT = mb.spatial.quat_to_matrix(q[3:7]).T
            vp[:3], tp[:3] = RT @ v[:3], RT @ tau[:3]
        return qp, vp, tp

    def qdd(self, q, v, tau):
        """mbcourse's ``q''`` computed by Pinocchio's ``aba`` (converted back)."""
        qp, vp, tp = self.inputs(q, v, tau)
        a = self.pin.aba(self.pm, self.pdata, qp, vp, tp)
        out = np.empty_like(a)
        out[self.iv] = a
        if self.free:
            out[:3] = mb.spatial.quat_to_matrix(q[3:7]) @ (a[:3] + np.cross(vp[3:6], vp[:3]))
        return out


# ----------------------------------------------------------------------- states, methods
def random_states(model, count, seed=0):
    """``count`` random states: joint angles, speeds and forces ~ N(0, 1); a free joint's
    position ~ N(0, 1) and a random unit quaternion."""
    rng = np.random.default_rng(seed)
    Q = rng.normal(size=(count, model.nq))
    for joint in model.joints:
        if joint.floating:
            quat = Q[:, joint.q_slice][:, 3:7]
            Q[:, joint.q_slice.start + 3:joint.q_slice.stop] = (
                quat / np.linalg.norm(quat, axis=1, keepdims=True))
    return Q, rng.normal(size=(count, model.nv)), rng.normal(size=(count, model.nv))


def _ldlt(model, q, v, tau, **kw):
    return mb.cartesian.forward_dynamics(model, q, v, tau, solver="ldlt", **kw)


#: name -> (function, takes ``compiled=``); composite bodies run compiled or not at all
METHODS = {
    "vereshchagin": (mb.vereshchagin.forward_dynamics, True),
    "tree A q''=B": (mb.tree.forward_dynamics, True),
    "tree composite": (mb.tree.forward_dynamics_composite, False),
    "cartesian ldlt": (_ldlt, True),
}


def route(name, model, q, v, tau):
    """``"compiled"`` if the method's kernel takes the model (a call with ``compiled=True``
    does not raise ``ModelError``), ``"numpy"`` if it falls back, ``"unavailable"`` if the
    method runs compiled only and declines the model."""
    fn, has_flag = METHODS[name]
    try:
        fn(model, q, v, tau, **({"compiled": True} if has_flag else {}))
    except ModelError:
        return "numpy" if has_flag else "unavailable"
    return "compiled"


def _agree(name, label, got, expected, tol):
    err = float(np.abs(got - expected).max())
    assert err <= tol, (f"{name} on {label} disagrees with the reference by {err:.3g} "
                        f"(tolerance {tol:.3g})")
    return err


def measure(fn, Q, V, T, reference, args, label):
    """``[(batch, seconds per configuration, repeats, max error, note)]``: per call, then
    batched; each after checking ``q''`` against ``reference`` (POOL rows)."""
    tol = 1e-9 * (1.0 + np.abs(reference).max())
    out = []
    err = max(_agree(label[0], label[1], fn(Q[i], V[i], T[i]), reference[i], tol)
              for i in range(len(reference)))
    t0 = time.perf_counter()
    fn(Q[0], V[0], T[0])
    first = time.perf_counter() - t0
    if first > args.cap:
        out.append((1, first, 1, err, f"capped: one call took {first:.2f} s"))
    else:
        reps = args.repeats if first < 0.5 else min(args.repeats, 3)
        s = _time(lambda i: fn(Q[i % POOL], V[i % POOL], T[i % POOL]), args.min_time, reps, 1)
        out.append((1, s, reps, err, ""))
    B = args.batch
    Qb, Vb, Tb = (np.resize(x, (B, x.shape[1])) for x in (Q, V, T))
    t0 = time.perf_counter()
    got = fn(Qb, Vb, Tb)
    first = time.perf_counter() - t0
    k = min(B, len(reference))
    err = _agree(label[0] + " (batched)", label[1], got[:k], reference[:k], tol)
    if first > args.cap:
        out.append((B, first / B, 1, err, f"capped: one batch took {first:.2f} s"))
    else:
        reps = args.repeats if first < 0.5 else min(args.repeats, 3)
        out.append((B, _time(lambda i: fn(Qb, Vb, Tb), args.min_time, reps, B), reps, err, ""))
    return out


def time_pinocchio(pr, Q, V, T, args):
    """Pinocchio's ``aba`` on the converted states: per call, and a Python loop over the
    batch (as benchmarks/run.py), ``[(batch, seconds per configuration, repeats)]``."""
    aba, pm, data = pr.pin.aba, pr.pm, pr.pdata
    P = [pr.inputs(q, v, t) for q, v, t in zip(Q, V, T)]
    one = _time(lambda i: aba(pm, data, *P[i % POOL]), args.min_time, args.repeats, 1)
    B = args.batch
    Pb = [P[b % POOL] for b in range(B)]
    many = _time(lambda i: [aba(pm, data, *x) for x in Pb], args.min_time, args.repeats, B)
    return [(1, one, args.repeats), (B, many, args.repeats)]


def run_robot(label, kind, path, floating, args, external):
    """The rows of one robot with one base: Pinocchio first, then every method."""
    # the fingers' mimic joints independent in both (Pinocchio's aba takes no mimic joint)
    model = mb.urdf.load(path, floating_base=floating, mimic=False)
    base = "floating" if floating else "fixed"
    Q, V, T = random_states(model, POOL, seed=len(label) + floating)
    common = dict(robot=label, kind=kind, base=base, nv=model.nv)
    rows, floor = [], {}
    if external:
        pr = PinocchioRobot(path, model)
        reference = np.array([pr.qdd(*s) for s in zip(Q, V, T)])
        for batch, s, reps in time_pinocchio(pr, Q, V, T, args):
            floor[batch] = s
            rows.append(dict(common, method="pinocchio aba", route="C++", batch=batch,
                             seconds_per_config=s, ratio_to_pinocchio=1.0, repeats=reps,
                             max_error=0.0, note="the yardstick"))
    else:  # no Pinocchio: the NumPy recursion of chapter 3 is the reference
        reference = np.array([mb.tree.forward_dynamics(model, *s, compiled=False)
                              for s in zip(Q, V, T)])
    for name, (fn, _) in METHODS.items():
        how = route(name, model, Q[0], V[0], T[0])
        if how == "unavailable":
            rows.append(dict(common, method=name, route=how, batch=1, seconds_per_config=None,
                             ratio_to_pinocchio=None, repeats=0, max_error=None,
                             note="compiled only; the kernel declines this model"))
            continue
        f = lambda q, v, t, fn=fn: fn(model, q, v, t)  # noqa: E731
        for batch, s, reps, err, note in measure(f, Q, V, T, reference, args, (name, label)):
            ratio = s / floor[batch] if batch in floor else None
            rows.append(dict(common, method=name, route=how, batch=batch, seconds_per_config=s,
                             ratio_to_pinocchio=ratio, repeats=reps, max_error=err, note=note))
    for r in rows:
        _log(args, r)
    return rows


def _log(args, r):
    if args.quiet:
        return
    s, ratio = r["seconds_per_config"], r["ratio_to_pinocchio"]
    print(f"  {r['robot']:14s} {r['base']:8s} nv={r['nv']:3d} {r['method']:15s} "
          f"{r['route']:11s} B={r['batch']:5d} "
          + ("     --     " if s is None else f"{s * 1e6:10.1f} us")
          + ("" if ratio is None else f" {ratio:7.1f}x") + f"  {r['note']}", flush=True)


# ----------------------------------------------------------------------- outputs
def write_csv(rows, path):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        w.writeheader()
        for r in rows:
            r = dict(r)
            for key, fmt in (("seconds_per_config", "{:.6e}"), ("ratio_to_pinocchio", "{:.3f}"),
                             ("max_error", "{:.2e}")):
                r[key] = "" if r[key] is None else fmt.format(r[key])
            w.writerow(r)


def _cell(r, external):
    """A table cell: the ratio to Pinocchio (or the time without it), ``numpy`` marked."""
    if r is None or r["seconds_per_config"] is None:
        return "–" if r is None else r["route"]
    text = (f"{r['ratio_to_pinocchio']:.1f}" if external
            else f"{r['seconds_per_config'] * 1e6:.1f} us")
    return text + (" (numpy)" if r["route"] == "numpy" else "")


def markdown(rows, args, external, seconds):
    title = ("time / Pinocchio's aba (same run)" if external
             else "time per configuration (no Pinocchio)")
    lines = [f"# Real robots: forward dynamics, {title}\n",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
             f"{platform.python_version()}; repeats {args.repeats}, at least "
             f"{args.min_time:g} s a repeat; batched: B = {args.batch} configurations per "
             "call, time per configuration (Pinocchio: `aba` in a Python loop).\n",
             "Every method's q'' agreed with " + ("Pinocchio's `aba`" if external else
                                                 "the NumPy tree route (no Pinocchio)")
             + " on 16 random states before timing (max error in robots.csv). "
             "`(numpy)`: the compiled kernel declines the model (a call with `compiled=True` "
             "raises `ModelError`), the NumPy route ran; `unavailable`: compiled only and "
             "declined.\n"]
    cases = list(dict.fromkeys((r["robot"], r["base"], r["nv"]) for r in rows))
    names = list(METHODS)
    for batched in (False, True):
        lines.append(f"## {'Batched (per configuration)' if batched else 'Per call'}\n")
        lines.append("| robot | base | nv | aba (us) | " + " | ".join(names) + " |\n|---|---|"
                     + "---|" * (len(names) + 2))
        for robot, base, nv in cases:
            pick = {r["method"]: r for r in rows if (r["robot"], r["base"]) == (robot, base)
                    and (r["batch"] > 1) == batched or
                    ((r["robot"], r["base"]) == (robot, base) and r["route"] == "unavailable")}
            p = pick.get("pinocchio aba")
            lines.append(f"| {robot} | {base} | {nv} | "
                         + (f"{p['seconds_per_config'] * 1e6:.2f}" if p else "–") + " | "
                         + " | ".join(_cell(pick.get(m), external) for m in names) + " |")
        lines.append("")
    lines.append(f"Total time of the robot benchmarks: {seconds:.0f} s.")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.05,
                    help="each repeat loops at least this long (s)")
    ap.add_argument("--batch", type=int, default=1000, help="configurations per batched call")
    ap.add_argument("--cap", type=float, default=5.0,
                    help="a call (or batch) longer than this is timed once (s)")
    ap.add_argument("--shipped-only", action="store_true",
                    help="the two shipped robots only (no example-robot-data)")
    ap.add_argument("--no-external", action="store_true", help="without Pinocchio")
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    external = not args.no_external and have_external("pinocchio")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0, rows = time.perf_counter(), []
    for label, kind, path in robot_files(args.shipped_only):
        for floating in (False, True):
            rows += run_robot(label, kind, path, floating, args, external)
    write_csv(rows, out / "robots.csv")
    text = markdown(rows, args, external, time.perf_counter() - t0)
    (out / "robots.md").write_text(text)
    if not args.quiet:
        print("\n" + text)
    return rows


if __name__ == "__main__":
    main()
