"""homework/grader.py on its own: what the sandbox lets a student's code see and do, and the
pieces of the clean scoring (decoding answers, rebuilding the program from a notebook)."""
import json
import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "homework"))

import grader  # noqa: E402  (homework/grader.py)
import runner  # noqa: E402  (homework/runner.py)
from mbcourse.grading import notebook_cell  # noqa: E402

PROBE = '''
def probe():
    import os, socket
    seen = []
    for path in [{course!r} + "/source/probe/probe.ipynb", {repo!r} + "/homework/source",
                 {course!r} + "/submitted/other/probe/probe.ipynb"]:
        seen.append(int(os.path.exists(path)))
    try:
        socket.create_connection(("1.1.1.1", 53), timeout=1).close()
        seen.append(1)
    except OSError:
        seen.append(0)
    seen.append(int(os.getuid() == 0))
    try:
        open({course!r} + "/evil.txt", "w").write("x")
        seen.append(1)
    except OSError:
        seen.append(0)
    return seen
'''


def _course(tmp_path, students):
    course = tmp_path / "course"
    src = {"cells": [
        notebook_cell("import numpy as np", "readonly", grade_id="setup"),
        notebook_cell("def probe():\n    ### BEGIN SOLUTION\n    return [0] * 6\n"
                      "    ### END SOLUTION", "solution", grade_id="probe_solution"),
        notebook_cell("from mbcourse.grading import check, check_call\n"
                      "v = check_call('probe', globals().get('probe'))\n"
                      "check('what the sandbox lets you see', v, [0] * 6)",
                      "tests", grade_id="probe_tests", points=1)],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (course / "source" / "probe").mkdir(parents=True)
    (course / "source" / "probe" / "probe.ipynb").write_text(json.dumps(src))
    for name, code in students.items():
        nb = json.loads(json.dumps(src))
        nb["cells"][1]["source"] = code.format(course=str(course), repo=str(ROOT))
        folder = course / "submitted" / name / "probe"
        folder.mkdir(parents=True)
        (folder / "probe.ipynb").write_text(json.dumps(nb))
    return course


@pytest.mark.skipif(grader.sandbox_mode() != "bwrap", reason="bubblewrap not usable here")
def test_the_sandbox_hides_the_course_the_network_and_root(tmp_path):
    course = _course(tmp_path, {"prober": PROBE, "other": "def probe():\n    return [0] * 6"})
    rows = {r["student"]: r for r in grader.grade_assignment(course, "probe", log=lambda *a: None)}
    page = (course / "feedback" / "prober" / "probe" / "probe.html").read_text()
    assert rows["prober"]["score"] == 1.0, page        # every probe came back 0
    assert rows["prober"]["status"] == "graded"
    assert not (course / "evil.txt").exists()
    assert rows["other"]["score"] == 1.0
    # the same probe outside the sandbox does see the course (the test means something)
    ns = {}
    exec(PROBE.format(course=str(course), repo=str(ROOT)), ns)
    assert ns["probe"]()[:2] == [1, 1]
    (course / "evil.txt").unlink()


def test_decode_never_returns_code():
    plain = runner.plain
    values = [np.arange(6).reshape(2, 3), [1.5, None, "x"], (1, 2), {"a": np.nan},
              3 + 4j, np.float32(2.5), np.ones(3, dtype=bool), lambda: 1, object()]
    for v in values:
        back = grader.decode(json.loads(json.dumps(plain(v))))
        if isinstance(v, np.ndarray):
            np.testing.assert_array_equal(back, v)
            assert back.dtype.kind == v.dtype.kind
        elif callable(v) or type(v) is object:
            assert isinstance(back, grader.Unreadable)
        elif isinstance(v, dict):
            assert np.isnan(back["a"])
        else:
            assert back == v or (isinstance(v, tuple) and back == v)
    big = plain(np.zeros(runner.MAX_ELEMENTS + 1))
    assert isinstance(grader.decode(big), grader.Unreadable)


def test_program_restores_the_assignments_cells():
    src = {"cells": [
        notebook_cell("x = 1", "readonly", grade_id="given"),
        notebook_cell("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION",
                      "solution", grade_id="f_solution"),
        notebook_cell("check_call('f', f)\n### BEGIN HIDDEN TESTS\nsecret()\n"
                      "### END HIDDEN TESTS", "tests", grade_id="f_tests", points=1)]}
    student = json.loads(json.dumps(src))
    student["cells"][0]["source"] = "x = 2  # changed"
    student["cells"][1]["source"] = "def f():\n    return 2"
    student["cells"][2]["source"] = "check_call('f', f)\n"          # as released: kept
    student["cells"].append({"cell_type": "code", "metadata": {}, "source": "y = 3"})
    cells, notes = grader.student_program(src, student)
    assert [c["id"] for c in cells] == ["given", "f_solution", "added cell after f_tests"]
    assert cells[0]["source"] == "x = 1" and cells[1]["source"] == "def f():\n    return 2"
    assert notes == ["the read-only cell `given` was changed in your notebook; the "
                     "assignment's own cell was used"]
    student["cells"] = student["cells"][:2]
    _, notes = grader.student_program(src, student)
    assert any("test cell `f_tests` was missing" in n for n in notes)
