"""The homework pipeline (homework/, `make homework`), run once for the module.

The pipeline releases the nine assignments with nbgrader, grades a reference, a blank and a
faulty submission of each with the sandboxed grader (homework/grader.py), grades every
attack of homework/attacks.py between two honest submissions, and writes grades.csv.
Checked here: the scores (reference = full marks, blank = faulty = 0), every attack's
outcome, that the course's files survive the attacks, that no release or feedback page leaks
a solution or a hidden test, that a faulty submission is told what is wrong in one
sentence, and that the source notebooks match homework/make_sources.py.
"""

import csv
import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
HOMEWORK = ROOT / "homework"
sys.path.insert(0, str(HOMEWORK))

import faulty  # noqa: E402  (homework/faulty.py)

ASSIGNMENTS = ["ch1_graphs", "ch2_cartesian", "ch3_tree", "ch4_recursion", "ch5_inertial",
               "ch6_loops", "ch7_energy", "ch8_accuracy", "ch9_contact"]
STUDENTS = ["reference", "blank", "faulty"]

# Solution code that must never reach a student (one distinctive line per assignment).
SOLUTION_SNIPPETS = {
    "ch1_graphs": "np.rint(np.linalg.inv(S[1:])).astype(int)",
    "ch2_cartesian": "H = np.block([[M, -Q.T], [Q, np.zeros((nc, nc))]])",
    "ch3_tree": 'np.einsum("iax,aj->ijx", C, T)',
    "ch4_recursion": "C.T @ (M_star - np.outer(MS, MS) / (S @ MS)) @ C",
    "ch5_inertial": 'dT = 0.5 * np.einsum("j,jik,i->k", qd, dH, qd)',
    "ch6_loops": "qd - H.T @ np.linalg.solve(H @ H.T, H @ qd)",
    "ch7_energy": "0.5 * m * v_C @ v_C + 0.5 * omega @ J_C @ omega",
    "ch8_accuracy": "np.cross(a[:, min(k, l)], b[:, max(k, l)])",
    "ch9_contact": "Lambda = -(1.0 + e) * approach / (j @ Minv_jt)",
}
HIDDEN_SNIPPETS = {
    "ch1_graphs": "random_tree(9, seed=hidden_seed(101))",
    "ch2_cartesian": "rng = hidden_rng(2024)",
    "ch3_tree": "branched_tree(hidden_seed(21)), branched_tree(hidden_seed(22))",
    "ch4_recursion": "rng = hidden_rng(9090)",
    "ch5_inertial": "rng = hidden_rng(77)",
    "ch6_loops": "rng = hidden_rng(636)",
    "ch7_energy": "rng = hidden_rng(737)",
    "ch8_accuracy": "rng = hidden_rng(828)",
    "ch9_contact": "rng = hidden_rng(939)",
}


def _source(a):
    return json.loads((HOMEWORK / "source" / a / f"{a}.ipynb").read_text())


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """Run `python homework/pipeline.py` once into a scratch directory."""
    out = tmp_path_factory.mktemp("homework") / "course"
    proc = subprocess.run(
        [sys.executable, str(HOMEWORK / "pipeline.py"), "--out", str(out), "--budget", "480"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    return out, proc


def test_pipeline_succeeds(course):
    out, proc = course
    assert proc.returncode == 0, f"stdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-4000:]}"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["problems"] == []


def _rows(out):
    with (out / "grades.csv").open() as f:
        return list(csv.DictReader(f))


def test_grades_csv(course):
    out, _ = course
    rows = _rows(out)
    assert {"assignment", "student", "score", "max_score", "status"} <= set(rows[0])
    scores = {(r["assignment"], r["student"]): (float(r["score"]), float(r["max_score"]))
              for r in rows if r["student"] in STUDENTS}
    assert set(scores) == {(a, s) for a in ASSIGNMENTS for s in STUDENTS}
    for a in ASSIGNMENTS:
        assert scores[a, "reference"] == (10.0, 10.0), a
        assert scores[a, "blank"] == (0.0, 10.0), a
        assert scores[a, "faulty"] == (0.0, 10.0), a
    # a run that was stopped is "not graded: why", never a bare 0
    status = {(r["assignment"], r["student"]): r["status"] for r in rows}
    if ("ch1_graphs", "attack_os_exit") in status:
        assert status["ch1_graphs", "attack_ignore_signals_loop"].startswith("not graded: stopped")
        assert "os._exit" in status["ch1_graphs", "attack_os_exit"]
    assert status["ch1_graphs", "reference"].startswith("graded")


# What each attack must get (homework/attacks.py), on chapter 1; the honest submissions
# graded before and after them keep full marks.
ATTACKS = {"patch_grader": "zero", "patch_numpy": "zero", "swallow_tests": "zero",
           "read_solutions": "zero", "gradebook": "zero", "destroy": "zero",
           "forge_answers": "zero", "noisy_correct": "full", "memory_hog": "full",
           "ignore_signals_loop": "stopped", "os_exit": "stopped", "fork_bomb": "zero",
           "delete_tests": "zero", "strip_metadata": "zero", "library_call": "zero",
           # honest answers in other types; a duplicated cell counts by its last copy
           "answer_matrix": "full", "answer_sympy": "full", "answer_namedtuple": "full",
           "duplicated_cell": "full",
           # one student never stops the run nor costs a classmate
           "metadata_string": "zero", "pycache_file": "full", "fifo_at_exit": "full",
           "symlink_at_exit": "full", "forged_done": "stopped",
           "disk_fill": "full",           # only the attacker's own tmpfs fills
           "memory_swarm": "zero",        # the cgroup limits the attacker's run only
           "read_calls": "full"}          # full marks = the cell found no hidden input


def test_attacks(course):
    out, _ = course
    summary = json.loads((out / "summary.json").read_text())
    if summary["sandbox"] != "bwrap":
        pytest.skip("bubblewrap is not usable here: the attacks are not run (README)")
    got = summary["attacks"]["ch1_graphs"]
    assert {k: v["expected"] for k, v in got.items()} == ATTACKS
    assert all(v["ok"] for v in got.values()), got
    assert summary["attacks"]["ch5_inertial"]["library_call"]["ok"]
    assert all(summary["attacks"][a]["library_route"]["ok"] for a in ("ch3_tree", "ch7_energy"))
    rows = {(r["assignment"], r["student"]): r for r in _rows(out)}
    for a in ("ch1_graphs", "ch5_inertial"):
        for who in ("honest_before", "honest_after"):
            assert float(rows[a, who]["score"]) == 10.0, (a, who)
    # the feedback says why, in words a student can act on
    fb = out / "feedback"
    page = (fb / "attack_library_call" / "ch1_graphs" / "ch1_graphs.html").read_text()
    assert "`mb.graph.path_matrix` is not available" in page
    page = (fb / "attack_noisy_correct" / "ch1_graphs" / "ch1_graphs.html").read_text()
    assert "no points lost" in page and "RuntimeWarning" in page
    page = (fb / "attack_delete_tests" / "ch1_graphs" / "ch1_graphs.html").read_text()
    assert "was missing from your notebook; the assignment" in page
    page = (fb / "attack_duplicated_cell" / "ch1_graphs" / "ch1_graphs.html").read_text()
    assert "2 copies of the answer cell `incidence_solution`; the last one was graded" in page
    page = (fb / "attack_ignore_signals_loop" / "ch1_graphs" / "ch1_graphs.html").read_text()
    assert "did not run to the end: stopped after 30 s" in page
    page = (fb / "attack_read_calls" / "ch1_graphs" / "ch1_graphs.html").read_text()
    assert "the hidden inputs" not in page          # the spying cell found nothing to raise
    page = (fb / "attack_forged_done" / "ch1_graphs" / "ch1_graphs.html").read_text()
    assert "did not run to the end" in page
    for a in ASSIGNMENTS:   # the course survived the destroy attack
        assert (out / "source" / a / f"{a}.ipynb").exists()
        assert (out / "release" / a / f"{a}.ipynb").exists()


def test_releases_have_no_solutions_or_hidden_tests(course):
    out, _ = course
    for a in ASSIGNMENTS:
        release = out / "release" / a / f"{a}.ipynb"
        text = release.read_text()
        for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
            assert marker not in text, (a, marker)
        code = "\n".join("".join(c["source"]) for c in json.loads(text)["cells"])
        assert SOLUTION_SNIPPETS[a] not in code, a
        assert HIDDEN_SNIPPETS[a] not in code, a
        for line in faulty.solution_lines(_source(a)) + faulty.hidden_test_lines(_source(a)):
            assert line not in code, (a, line)
        stubs = [c for c in json.loads(text)["cells"]
                 if c["metadata"].get("nbgrader", {}).get("solution")
                 and "raise NotImplementedError()" in "".join(c["source"])]
        assert len(stubs) == 3, a  # one stub per task
        # and the snippets really are in the source, so the checks above mean something
        source_code = "\n".join("".join(c["source"]) for c in _source(a)["cells"])
        assert SOLUTION_SNIPPETS[a] in source_code and HIDDEN_SNIPPETS[a] in source_code


def _failures(page):
    import re

    return re.findall(r"<li class='bad'><b>(.*?)</b>.*?failed<br>(.*?)</li>", page, re.S)


def test_faulty_feedback_is_one_sentence_per_task(course):
    out, _ = course
    joined = []
    for a in ASSIGNMENTS:
        page = (out / "feedback" / "faulty" / a / f"{a}.html").read_text()
        fails = _failures(page)
        assert len(fails) == 3, (a, fails)          # every test cell failed ...
        for test, msg in fails:                     # ... with one sentence, no traceback
            assert msg and "Traceback" not in msg, (a, test, msg)
        joined += [msg for _, msg in fails]
    joined = "\n".join(joined)
    assert "did not finish within 3 s" in joined   # an endless function, stopped
    assert "contains NaN" in joined
    assert "has shape" in joined
    assert "is not defined" in joined              # a raising cell / a cell cut by the limit
    page = (out / "feedback" / "faulty" / "ch1_graphs" / "ch1_graphs.html").read_text()
    assert "incidence_solution</code>: raised TimeoutError: did not finish within 20 s" in page


def test_feedback_pages_hide_hidden_tests(course):
    out, _ = course
    for a in ASSIGNMENTS:
        page = (out / "feedback" / "faulty" / a / f"{a}.html").read_text()
        assert HIDDEN_SNIPPETS[a] not in page, a
        assert "failed" in page


def test_grading_time(course):
    out, _ = course
    summary = json.loads((out / "summary.json").read_text())
    # a clean submission takes about a second in the sandbox; generous bound
    assert summary["seconds_per_reference_submission_mean"] < 30


def test_sources_match_make_sources():
    import make_sources

    assert make_sources.main(["--check"]) == 0
    for a in ASSIGNMENTS:
        cells = _source(a)["cells"]
        points = sum(c["metadata"]["nbgrader"].get("points", 0) for c in cells
                     if c["metadata"].get("nbgrader", {}).get("grade"))
        assert points == 10, a
        ids = [c["metadata"]["nbgrader"]["grade_id"] for c in cells if "nbgrader" in c["metadata"]]
        assert len(ids) == len(set(ids)), a
