"""The nbgrader homework pipeline (homework/, `make homework`), run once for the module.

The pipeline releases the eight assignments, autogrades a reference, a blank and a faulty
submission of each, and exports grades.csv. Checked here: the scores (reference = full
marks, blank = faulty = 0; nbgrader's exit codes are not trusted), that no release or
feedback page leaks a solution or a hidden test, that a faulty submission is told what is
wrong in one sentence, and that the source notebooks match homework/make_sources.py.
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
               "ch6_loops", "ch7_energy", "ch8_accuracy"]
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
}
HIDDEN_SNIPPETS = {
    "ch1_graphs": "random_tree(9, seed=101)",
    "ch2_cartesian": "np.random.default_rng(2024)",
    "ch3_tree": "branched_tree(21), branched_tree(22)",
    "ch4_recursion": "np.random.default_rng(9090)",
    "ch5_inertial": "np.random.default_rng(77)",
    "ch6_loops": "np.random.default_rng(636)",
    "ch7_energy": "np.random.default_rng(737)",
    "ch8_accuracy": "np.random.default_rng(828)",
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


def test_grades_csv(course):
    out, _ = course
    with (out / "grades.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert {"assignment", "student_id", "score", "max_score"} <= set(rows[0])
    scores = {(r["assignment"], r["student_id"]): (float(r["score"]), float(r["max_score"]))
              for r in rows}
    assert set(scores) == {(a, s) for a in ASSIGNMENTS for s in STUDENTS}
    for a in ASSIGNMENTS:
        assert scores[a, "reference"] == (10.0, 10.0), a
        assert scores[a, "blank"] == (0.0, 10.0), a
        assert scores[a, "faulty"] == (0.0, 10.0), a


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


def test_faulty_feedback_is_one_sentence_per_task(course):
    out, _ = course
    summary = json.loads((out / "summary.json").read_text())
    msgs = summary["feedback"]["faulty"]
    for a in ASSIGNMENTS:
        assert len(msgs[a]) == 3, (a, msgs[a])  # every test cell failed ...
        for cell, msg in msgs[a].items():      # ... with a sentence from mbcourse.grading
            assert msg.startswith("GradingFailure: "), (a, cell, msg)
            assert "Traceback" not in msg
    joined = "\n".join(m for per in msgs.values() for m in per.values())
    assert "did not finish within 5 s" in joined  # endless function, stopped by check_call
    assert "contains NaN" in joined
    assert "has shape" in joined
    assert "is not a function" in joined          # raising cell / cell cut by the timeout
    graded = json.loads((out / "autograded" / "faulty" / "ch1_graphs" / "ch1_graphs.ipynb").read_text())
    hung = next(c for c in graded["cells"]
                if c["metadata"].get("nbgrader", {}).get("grade_id") == "incidence_solution")
    assert any(o.get("ename") == "CellTimeoutError" for o in hung["outputs"])


def test_feedback_pages_hide_hidden_tests(course):
    out, _ = course
    for a in ASSIGNMENTS:
        page = (out / "feedback" / "faulty" / a / f"{a}.html").read_text()
        assert HIDDEN_SNIPPETS[a] not in page, a
        assert "GradingFailure" in page


def test_grading_time(course):
    out, _ = course
    summary = json.loads((out / "summary.json").read_text())
    # a clean submission takes a few seconds (kernel start + imports); generous bound
    assert summary["seconds_per_reference_submission_mean"] < 60


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
