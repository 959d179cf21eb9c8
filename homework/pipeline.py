"""`make homework`: release, autograde and export the homework with nbgrader, then check it.

Steps (all inside the scratch course directory ``_build/homework``; the source tree is never
written to):

1. copy ``homework/source`` and ``homework/nbgrader_config.py`` there (fresh gradebook);
2. ``generate_assignment`` every assignment → ``_build/homework/release/<assignment>/``, and
   check that no release contains a solution, a hidden test or a solution line;
3. write three synthetic submissions per assignment (:mod:`faulty`): ``reference``,
   ``blank`` and ``faulty``;
4. ``autograde`` each submission (per-cell timeout from the config) and time it;
5. ``generate_feedback`` (HTML for the students) and ``export`` → ``grades.csv``;
6. check the scores — reference = max, blank = 0, faulty = 0 — and exit 1 otherwise
   (nbgrader's own exit codes say nothing about scores).

It also writes ``summary.json`` (timings, scores) and ``feedback.md`` (the sentences the
faulty submission receives). Run with ``python homework/pipeline.py [--out DIR]``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import pathlib
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


def _error_messages(nb):
    """``{test cell grade_id: 'Ename: message'}`` of a graded notebook's failing test cells."""
    out = {}
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] != "code" or not meta.get("grade"):
            continue
        for o in cell.get("outputs", []):
            if o.get("output_type") == "error":
                out[meta["grade_id"]] = f"{o['ename']}: {o['evalue']}".rstrip(": ")
    return out


def run(out, cell_timeout=None, feedback=True):
    t_start = time.perf_counter()
    out = pathlib.Path(out).resolve()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    _environment(out)
    shutil.copytree(HERE / "source", out / "source")
    shutil.copy(HERE / "nbgrader_config.py", out / "nbgrader_config.py")

    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.plugins.export import CsvExportPlugin
    from traitlets.config.loader import PyFileConfigLoader

    import warnings

    # nbgrader 0.9.6 with SQLAlchemy 2.1 warns on every autograde that an autoflush skipped
    # a backref ("... not in session, add operation along ... will not proceed"); the
    # grades are stored all the same (they are checked below).
    warnings.filterwarnings("ignore", message=".*not in session, add operation along")

    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(out)).load_config()
    cfg.CourseDirectory.root = str(out)
    cfg.Exchange.root = str(out / "exchange")  # unused here; keeps nbgrader off /srv
    (out / "exchange").mkdir()
    if cell_timeout is not None:
        cfg.Execute.timeout = int(cell_timeout)
    api = NbGraderAPI(coursedir=CourseDirectory(config=cfg), config=cfg)

    def call(what, fn, *args):
        res = fn(*args)
        if not res.get("success"):
            raise PipelineError(f"nbgrader {what} {' '.join(args)} failed:\n"
                                f"{res.get('error', '')}\n{res.get('log', '')}")
        return res

    timings = {"generate_assignment": {}, "autograde": {}, "generate_feedback": {}}
    problems = []
    for a in ASSIGNMENTS:
        t = time.perf_counter()
        call("generate_assignment", api.generate_assignment, a)
        timings["generate_assignment"][a] = time.perf_counter() - t
        release = out / "release" / a / f"{a}.ipynb"
        if not release.exists():
            raise PipelineError(f"nbgrader generate_assignment {a} wrote no {release}")
        problems += check_release(_read(release), _read(out / "source" / a / f"{a}.ipynb"), a)

    for a in ASSIGNMENTS:
        rel, src = _read(out / "release" / a / f"{a}.ipynb"), _read(out / "source" / a / f"{a}.ipynb")
        subs = {"reference": faulty.reference(rel, src), "blank": faulty.blank(rel),
                "faulty": faulty.faulty(rel, src, faulty.FAULTS[a])}
        for student, nb in subs.items():
            _write(out / "submitted" / student / a / f"{a}.ipynb", nb)
            (out / "submitted" / student / a / "timestamp.txt").write_text("2026-01-15 12:00:00 UTC\n")

    for a in ASSIGNMENTS:
        timings["autograde"][a] = {}
        for student in STUDENTS:
            t = time.perf_counter()
            call("autograde", api.autograde, a, student)
            timings["autograde"][a][student] = time.perf_counter() - t
            print(f"autograde {a:14s} {student:9s} {timings['autograde'][a][student]:6.1f} s",
                  flush=True)
        if feedback:
            t = time.perf_counter()
            call("generate_feedback", api.generate_feedback, a)
            timings["generate_feedback"][a] = time.perf_counter() - t

    if feedback:
        for a in ASSIGNMENTS:
            src = _read(out / "source" / a / f"{a}.ipynb")
            for student in STUDENTS:
                page = out / "feedback" / student / a / f"{a}.html"
                if not page.exists():
                    problems.append(f"{a}/{student}: no feedback page {page}")
                else:
                    problems += check_feedback(page.read_text(), src, f"{a}/{student}")

    grades_csv = out / "grades.csv"
    with api.gradebook as gb:
        CsvExportPlugin(to=str(grades_csv), parent=api).export(gb)
    rows = list(csv.DictReader(grades_csv.open()))

    scores = {}
    for r in rows:
        scores.setdefault(r["assignment"], {})[r["student_id"]] = (float(r["score"]),
                                                                   float(r["max_score"]))
    for a in ASSIGNMENTS:
        for student in STUDENTS:
            if student not in scores.get(a, {}):
                problems.append(f"{a}/{student}: no grade in grades.csv")
                continue
            score, max_score = scores[a][student]
            want = max_score if student == "reference" else 0.0
            if max_score <= 0 or score != want:
                problems.append(f"{a}/{student}: score {score:g} of {max_score:g}, expected {want:g}")

    messages = {}
    for student in ("blank", "faulty"):
        for a in ASSIGNMENTS:
            graded = out / "autograded" / student / a / f"{a}.ipynb"
            messages.setdefault(student, {})[a] = _error_messages(_read(graded)) if graded.exists() else {}
    lines = ["# Feedback of the synthetic submissions", ""]
    for student, per in messages.items():
        lines.append(f"## {student}")
        for a, msgs in per.items():
            kinds = dict(zip([c for c in msgs], faulty.FAULTS[a])) if student == "faulty" else {}
            for cell, msg in msgs.items():
                tag = f" ({kinds[cell]}: {faulty.KINDS[kinds[cell]]})" if cell in kinds else ""
                lines.append(f"- `{a}` / `{cell}`{tag}: {msg}")
        lines.append("")
    (out / "feedback.md").write_text("\n".join(lines))

    auto = [t for per in timings["autograde"].values() for t in per.values()]
    ref = [per["reference"] for per in timings["autograde"].values()]
    summary = {
        "scores": scores,
        "timings": timings,
        "seconds_total": time.perf_counter() - t_start,
        "seconds_per_submission_mean": sum(auto) / len(auto),
        "seconds_per_reference_submission_mean": sum(ref) / len(ref),
        "cell_timeout": cfg.Execute.timeout,
        "feedback": messages,
        "problems": problems,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")

    print(f"\n{'assignment':15s} " + " ".join(f"{s:>10s}" for s in STUDENTS))
    for a in ASSIGNMENTS:
        print(f"{a:15s} " + " ".join(
            f"{scores.get(a, {}).get(s, (float('nan'), 0))[0]:>5g}/{scores.get(a, {}).get(s, (0, 0))[1]:<4g}"
            for s in STUDENTS))
    print(f"\ngrading one submission: {summary['seconds_per_reference_submission_mean']:.1f} s "
          f"(reference, mean), {summary['seconds_per_submission_mean']:.1f} s (all, mean); "
          f"total {summary['seconds_total']:.0f} s")
    print(f"releases: {out / 'release'}\ngrades:   {grades_csv}\nfeedback: {out / 'feedback'}")
    return summary


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(REPO / "_build" / "homework"),
                   help="scratch course directory (deleted and rebuilt)")
    p.add_argument("--cell-timeout", type=int, default=None,
                   help="override nbgrader's per-cell timeout (seconds)")
    p.add_argument("--no-feedback", action="store_true", help="skip generate_feedback")
    p.add_argument("--budget", type=int, default=900,
                   help="abort (exit 2) if the whole pipeline takes longer (seconds)")
    args = p.parse_args(argv)

    def watchdog(signum, frame):
        raise PipelineError(f"the homework pipeline exceeded its budget of {args.budget} s")

    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, watchdog)
        signal.alarm(args.budget)
    try:
        summary = run(args.out, args.cell_timeout, feedback=not args.no_feedback)
    except PipelineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if hasattr(signal, "SIGALRM"):
            signal.alarm(0)
    if summary["problems"]:
        print("\nFAILED:", *summary["problems"], sep="\n  ", file=sys.stderr)
        return 1
    print("\nOK: reference = full marks, blank = 0, faulty = 0; no release leaks a solution")
    return 0


if __name__ == "__main__":
    sys.exit(main())
