"""`make homework`: release with nbgrader, grade in the sandbox, attack, and check it all.

Steps (all inside the scratch course directory ``_build/homework``; the source tree is never
written to):

1. copy ``homework/source`` and ``homework/nbgrader_config.py`` there (fresh gradebook);
2. ``generate_assignment`` every assignment → ``_build/homework/release/<assignment>/``, and
   check that no release contains a solution, a hidden test or a solution line;
3. write three synthetic submissions per assignment (:mod:`faulty`): ``reference``,
   ``blank`` and ``faulty``, and grade them with the sandboxed grader (:mod:`grader`):
   reference = full marks, blank = 0, faulty = 0, and no feedback page shows a hidden test;
4. grade every attack of :mod:`attacks` on chapter 1 (and the library-call attack where an
   assignment has one), between an honest submission graded before them and one graded
   after: each attack must get what :mod:`attacks` expects, the honest ones full marks, and
   the course's sources, releases, other students' work and earlier grades must be
   byte-for-byte unchanged;
5. write ``grades.csv`` (every assignment; ``status`` says graded / flagged / not graded),
   ``summary.json`` (timings, scores, outcomes) and ``feedback.md``.

It exits 1 when any check fails. Run with ``python homework/pipeline.py [--out DIR]``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import pathlib
import re
import shutil
import signal
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import faulty  # noqa: E402  (homework/faulty.py)

ASSIGNMENTS = list(faulty.FAULTS)
STUDENTS = ("reference", "blank", "faulty")
FORBIDDEN = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")


class PipelineError(RuntimeError):
    pass


def _environment(out):
    """Kernels inherit this: one BLAS thread, no display, and Jupyter/IPython state kept in
    the scratch directory (no user profile or config changes the grading)."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    os.environ["JUPYTER_CONFIG_DIR"] = str(out / ".jupyter" / "config")
    os.environ["JUPYTER_RUNTIME_DIR"] = str(out / ".jupyter" / "runtime")
    os.environ["IPYTHONDIR"] = str(out / ".ipython")
    # the kernel must be this interpreter's (the venv's): put its bin first
    os.environ["PATH"] = os.pathsep.join([str(pathlib.Path(sys.executable).parent),
                                          os.environ.get("PATH", "")])


def _read(path):
    return json.loads(pathlib.Path(path).read_text())


def _write(path, nb):
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


def check_release(release_nb, source_nb, name):
    """Problems of one released notebook: solution or hidden-test leftovers."""
    text = json.dumps(release_nb)
    problems = [f"{name}: release contains {marker!r}" for marker in FORBIDDEN if marker in text]
    cells = "\n".join("".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                      for c in release_nb["cells"])
    problems += [f"{name}: release contains the solution line {line!r}"
                 for line in faulty.solution_lines(source_nb) if line in cells]
    problems += [f"{name}: release contains the hidden test line {line!r}"
                 for line in faulty.hidden_test_lines(source_nb) if line in cells]
    return problems


def check_feedback(html, source_nb, name):
    """Problems of one feedback page: hidden tests shown to the student."""
    import html as _html

    text = _html.unescape(html)
    return [f"{name}: feedback shows the hidden test line {line!r}"
            for line in faulty.hidden_test_lines(source_nb) if line in text]


def _tree_digest(root, skip=()):
    """``{relative path: sha256}`` of every file under ``root`` (what an attack might touch)."""
    import hashlib

    out = {}
    for path in sorted(pathlib.Path(root).rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_file() and not any(rel.startswith(s) for s in skip):
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _submit(out, student, assignment, nb):
    _write(out / "submitted" / student / assignment / f"{assignment}.ipynb", nb)
    (out / "submitted" / student / assignment / "timestamp.txt").write_text(
        "2026-01-15 12:00:00 UTC\n")


def run(out, cell_timeout=None, feedback=True, attack_assignments=("ch1_graphs",), jobs=2):
    import grader
    import attacks

    t_start = time.perf_counter()
    out = pathlib.Path(out).resolve()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    _environment(out)
    shutil.copytree(HERE / "source", out / "source")
    shutil.copy(HERE / "nbgrader_config.py", out / "nbgrader_config.py")
    if cell_timeout is not None:
        grader.CELL_SECONDS = int(cell_timeout)
    # Shorter limits than a course's (grader.py): the faults and attacks that never stop
    # cost this much each, and the synthetic honest work needs about a second. (A course's
    # whole-run limit is derived from the cells and calls; WALL_SECONDS fixes it instead.)
    grader.WALL_SECONDS, grader.CALL_SECONDS = 30, 3

    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(out)).load_config()
    cfg.CourseDirectory.root = str(out)
    cfg.Exchange.root = str(out / "exchange")  # unused here; keeps nbgrader off /srv
    (out / "exchange").mkdir()
    api = NbGraderAPI(coursedir=CourseDirectory(config=cfg), config=cfg)

    timings = {"generate_assignment": {}, "grade": {}, "attacks": {}}
    problems = []
    for a in ASSIGNMENTS:
        t = time.perf_counter()
        res = api.generate_assignment(a)
        if not res.get("success"):
            raise PipelineError(f"nbgrader generate_assignment {a} failed:\n"
                                f"{res.get('error', '')}\n{res.get('log', '')}")
        timings["generate_assignment"][a] = time.perf_counter() - t
        release = out / "release" / a / f"{a}.ipynb"
        if not release.exists():
            raise PipelineError(f"nbgrader generate_assignment {a} wrote no {release}")
        problems += check_release(_read(release), _read(out / "source" / a / f"{a}.ipynb"), a)

    mode = grader.sandbox_mode()
    rows, scores, messages = [], {}, {}
    for a in ASSIGNMENTS:
        rel, src = _read(out / "release" / a / f"{a}.ipynb"), _read(out / "source" / a / f"{a}.ipynb")
        subs = {"reference": faulty.reference(rel, src), "blank": faulty.blank(rel),
                "faulty": faulty.faulty(rel, src, faulty.FAULTS[a])}
        for student, nb in subs.items():
            _submit(out, student, a, nb)

    def grade(a):
        t = time.perf_counter()
        got = grader.grade_assignment(out, a, list(STUDENTS), jobs=len(STUDENTS), mode=mode,
                                      unsandboxed=mode != "bwrap")   # our own submissions
        return a, got, time.perf_counter() - t

    # most of a faulty run is waiting for a time limit: several assignments at once
    from concurrent.futures import ThreadPoolExecutor

    try:
        with ThreadPoolExecutor(max_workers=3) as pool:
            graded_all = list(pool.map(grade, ASSIGNMENTS))
    except grader.GraderError as exc:
        raise PipelineError(str(exc)) from None
    for a, got, seconds in graded_all:
        src = _read(out / "source" / a / f"{a}.ipynb")
        timings["grade"][a] = seconds
        rows += got
        for r in got:
            scores.setdefault(a, {})[r["student"]] = (r["score"], r["max_score"])
            want = r["max_score"] if r["student"] == "reference" else 0.0
            if r["max_score"] <= 0 or r["score"] != want:
                problems.append(f"{a}/{r['student']}: score {r['score']:g} of "
                                f"{r['max_score']:g}, expected {want:g} ({r['status']})")
            page = out / "feedback" / r["student"] / a / f"{a}.html"
            if not page.exists():
                problems.append(f"{a}/{r['student']}: no feedback page {page}")
            else:
                problems += check_feedback(page.read_text(), src, f"{a}/{r['student']}")
                if r["student"] != "reference":
                    messages.setdefault(r["student"], {})[a] = _failures(page.read_text())

    # --- attacks, between two honest submissions ------------------------------------
    outcomes = {}
    if mode != "bwrap":
        print("warning: no sandbox (bubblewrap): the attacks are not run", file=sys.stderr)
        attack_assignments = ()
    for a in ASSIGNMENTS if mode == "bwrap" else ():
        rel, src = _read(out / "release" / a / f"{a}.ipynb"), _read(out / "source" / a / f"{a}.ipynb")
        built = attacks.build(a, rel, src, out)
        if a not in attack_assignments:
            built = {k: v for k, v in built.items() if k in ("library_call", "library_route")}
        if not built:
            continue
        honest = faulty.reference(rel, src)
        _submit(out, "honest_before", a, honest)
        before = grader.grade_assignment(out, a, ["honest_before"], jobs=1, mode=mode)[0]
        protected = _tree_digest(out, skip=("submitted/attack_", "feedback/attack_",
                                            "grades-", ".jupyter", ".ipython"))
        for name, (nb, _, _) in built.items():
            _submit(out, f"attack_{name}", a, nb)
            for fname, data in getattr(attacks, "FILES", {}).get(name, {}).items():
                (out / "submitted" / f"attack_{name}" / a / fname).write_bytes(data)
        t = time.perf_counter()
        graded = grader.grade_assignment(out, a, [f"attack_{n}" for n in built], jobs=4,
                                         mode=mode)
        timings["attacks"][a] = time.perf_counter() - t
        _submit(out, "honest_after", a, honest)
        after = grader.grade_assignment(out, a, ["honest_after"], jobs=1, mode=mode)[0]
        changed = [k for k, v in protected.items()
                   if _tree_digest(out, skip=()).get(k) != v and not k.startswith("feedback/honest_after")]
        if changed:
            problems.append(f"{a}: the attacks changed the course's files: {changed[:5]}")
        for r, (name, (_, expect, what)) in zip(graded, built.items()):
            ok = {"zero": r["score"] == 0,
                  "full": r["score"] == r["max_score"] and r["status"].startswith("graded"),
                  "stopped": r["score"] == 0 and r["status"].startswith("not graded")}[expect]
            outcomes.setdefault(a, {})[name] = {"expected": expect, "score": r["score"],
                                                "status": r["status"], "seconds": r["seconds"],
                                                "what": what, "ok": ok}
            if not ok:
                problems.append(f"{a}/attack {name} ({what}): score {r['score']:g}, status "
                                f"{r['status']!r}; expected {expect}")
            page = out / "feedback" / r["student"] / a / f"{a}.html"
            if not page.exists():
                problems.append(f"{a}/attack {name}: no feedback page")
        for r in (before, after):
            if r["score"] != r["max_score"]:
                problems.append(f"{a}/{r['student']}: honest work scored {r['score']:g} of "
                                f"{r['max_score']:g} around the attacks ({r['status']})")
        rows += [before, after] + graded

    grades_csv = out / "grades.csv"
    with open(grades_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["student", "assignment", "score", "max_score",
                                          "status", "seconds", "late", "note"],
                           extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)

    lines = ["# Feedback of the synthetic submissions", ""]
    for student, per in messages.items():
        lines.append(f"## {student}")
        for a, msgs in per.items():
            for test, msg in msgs:
                lines.append(f"- `{a}` / `{test}`: {msg}")
        lines.append("")
    lines += ["## Attacks", "", "| assignment | attack | expected | score | status | seconds |",
              "|---|---|---|---|---|---|"]
    for a, per in outcomes.items():
        for name, o in per.items():
            lines.append(f"| {a} | {name}: {o['what']} | {o['expected']} | {o['score']:g} | "
                         f"{o['status']} | {o['seconds']:.1f} |")
    (out / "feedback.md").write_text("\n".join(lines) + "\n")

    graded_rows = [r for r in rows if r["student"] in STUDENTS]
    ref = [r["seconds"] for r in graded_rows if r["student"] == "reference"]
    summary = {
        "sandbox": mode,
        "scores": scores,
        "attacks": outcomes,
        "timings": timings,
        "seconds_total": time.perf_counter() - t_start,
        "seconds_per_submission_mean": sum(r["seconds"] for r in graded_rows) / len(graded_rows),
        "seconds_per_reference_submission_mean": sum(ref) / len(ref),
        "cell_timeout": grader.CELL_SECONDS,
        "problems": problems,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")

    print(f"\n{'assignment':15s} " + " ".join(f"{s:>10s}" for s in STUDENTS))
    for a in ASSIGNMENTS:
        print(f"{a:15s} " + " ".join(
            f"{scores.get(a, {}).get(s, (float('nan'), 0))[0]:>5g}/{scores.get(a, {}).get(s, (0, 0))[1]:<4g}"
            for s in STUDENTS))
    print(f"\nsandbox: {mode}; one submission: {summary['seconds_per_reference_submission_mean']:.1f} s "
          f"(reference, mean), {summary['seconds_per_submission_mean']:.1f} s (all, mean); "
          f"total {summary['seconds_total']:.0f} s")
    print(f"releases: {out / 'release'}\ngrades:   {grades_csv}\nfeedback: {out / 'feedback'}")
    return summary


def _failures(page):
    """``[(test, message)]`` of the failed tests on a feedback page."""
    import html as _html

    out = []
    for m in re.finditer(r"<li class='bad'><b>(.*?)</b>.*?failed(?:<br>(.*?))?</li>", page, re.S):
        out.append((_html.unescape(m.group(1)), _html.unescape(m.group(2) or "")))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(REPO / "_build" / "homework"),
                   help="scratch course directory (deleted and rebuilt)")
    p.add_argument("--cell-timeout", type=int, default=None,
                   help="override the grader's per-cell time limit (seconds)")
    p.add_argument("--budget", type=int, default=900,
                   help="abort (exit 2) if the whole pipeline takes longer (seconds)")
    args = p.parse_args(argv)

    def watchdog(signum, frame):
        raise PipelineError(f"the homework pipeline exceeded its budget of {args.budget} s")

    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, watchdog)
        signal.alarm(args.budget)
    try:
        summary = run(args.out, args.cell_timeout)
    except PipelineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if hasattr(signal, "SIGALRM"):
            signal.alarm(0)
    if summary["problems"]:
        print("\nFAILED:", *summary["problems"], sep="\n  ", file=sys.stderr)
        return 1
    print("\nOK: reference = full marks, blank = 0, faulty = 0; every attack gets what it "
          "should; honest work keeps full marks; no release or feedback leaks a solution")
    return 0


if __name__ == "__main__":
    sys.exit(main())
