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


# --- issue 27: the run survives every submission; the channel; limits; no sandbox, no grading

def _grade(course, **kw):
    """grade_assignment in a thread with a deadline: a grader that blocks fails the test."""
    import threading

    box = {}

    def run():
        try:
            box["rows"] = {r["student"]: r for r in
                           grader.grade_assignment(course, "probe", log=lambda *a: None, **kw)}
        except BaseException as exc:  # noqa: BLE001
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(240)
    assert not t.is_alive(), "the grader blocked"
    if "error" in box:
        raise box["error"]
    return box["rows"]


HONEST = "def probe():\n    return [0] * 6"
needs_bwrap = pytest.mark.skipif(grader.sandbox_mode() != "bwrap", reason="bubblewrap not usable here")


def test_records_channel_is_bounded_and_skips_junk():
    import os
    import time

    r, w = os.pipe()
    rec = grader._Records(r, limit=1000)
    os.write(w, b'{"a": 1}\nnot json\n[1, 2]\n{"b": 2}\n')
    assert rec.get(time.monotonic() + 5) == {"a": 1}
    assert rec.get(time.monotonic() + 5) == {"b": 2}      # junk and non-dicts skipped
    with pytest.raises(TimeoutError):
        rec.get(time.monotonic() + 0.2)                   # nothing yet: no blocking
    os.write(w, b'{"c": "' + b"x" * 2000 + b'"}\n')       # over the bound
    os.close(w)
    assert rec.get(time.monotonic() + 5) is None
    assert rec.overflow
    assert rec.get(time.monotonic() + 5) is None          # EOF stays EOF


def test_read_untrusted_refuses_links_and_fifos(tmp_path):
    import os

    (tmp_path / "real").write_text("x" * 100)
    os.symlink("/etc/passwd", tmp_path / "link")
    os.mkfifo(tmp_path / "fifo")
    assert grader._read_untrusted(tmp_path / "real", 10) == b"x" * 10
    assert grader._read_untrusted(tmp_path / "link", 10) is None
    assert grader._read_untrusted(tmp_path / "fifo", 10) is None     # and it did not block
    assert grader._read_jsonl(tmp_path / "fifo") == []


def test_no_sandbox_no_grading(tmp_path, monkeypatch, capsys):
    course = _course(tmp_path, {"other": HONEST})
    monkeypatch.setattr(grader, "sandbox_mode", lambda: "none")
    with pytest.raises(grader.GraderError, match="apt-get install bubblewrap"):
        grader.grade_assignment(course, "probe", log=lambda *a: None)
    assert grader.main([str(course), "probe"]) == 2
    assert "UNSANDBOXED=1" in capsys.readouterr().err
    assert not (course / "grades-probe.csv").exists()     # nothing ran


@pytest.mark.skipif(__import__("os").geteuid() != 0, reason="needs root")
def test_unsandboxed_never_runs_student_code_as_root():
    import subprocess

    out = subprocess.run(["id", "-u"], preexec_fn=grader._limits((61000, 61000), drop=True),
                         capture_output=True, text=True)
    assert out.stdout.strip() == "61000"


def _cgroup_or_skip(**kw):
    import os

    if os.geteuid() != 0:
        pytest.skip("cgroups need root")
    try:
        return grader.Cgroup(f"mbgrade-test-{os.getpid()}", **kw)
    except OSError as exc:
        pytest.skip(f"no usable cgroup here: {exc}")


def test_cgroup_limits_the_whole_tree():
    import os
    import subprocess

    group = _cgroup_or_skip(memory=200 << 20, pids=8)
    dirs = list(group.dirs)
    try:
        # each process stays small; together they are over the group's 200 MB and 8 pids
        code = ("import os, time\nn = 0\nfor i in range(20):\n    try:\n        pid = os.fork()\n"
                "    except OSError:\n        break\n    if pid == 0:\n        os.close(1)\n        os.close(2)\n"
                "        x = b'x' * (60 << 20)\n        time.sleep(30)\n        os._exit(0)\n"
                "    n += 1\nprint(n, flush=True)\ntime.sleep(5)\n")
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           preexec_fn=lambda: group.join(os.getpid()), timeout=60)
        assert int(p.stdout.split()[0]) < 8           # forks refused by pids.max
        assert group.oom_killed()                      # the memory limit killed some
    finally:
        group.close()
    assert dirs and not any(d.exists() for d in dirs)  # removed


@needs_bwrap
def test_one_submission_never_stops_the_run(tmp_path):
    import os

    course = _course(tmp_path, {"honest": HONEST, "odd": HONEST, "forger": (
        "import os, json\nfor fd in range(1, 64):\n    try:\n"
        "        os.write(fd, b'{{\"done\": true}}\\n{{\"cells_done\": true}}\\n')\n"
        "    except OSError:\n        pass\nos._exit(0)\ndef probe():\n    return [0] * 6")})
    odd = course / "submitted" / "odd" / "probe"
    nb = json.loads((odd / "probe.ipynb").read_text())
    nb["cells"][0]["metadata"]["nbgrader"] = "a string"
    nb["cells"].append({"cell_type": "code", "metadata": {"nbgrader": 3}, "source": "x = 1"})
    (odd / "probe.ipynb").write_text(json.dumps(nb))
    for name in ("pycache", "kpycache", "runner.py", "program.json"):
        (odd / name).write_text("not what the grader expects")
    os.mkfifo(odd / "answers.jsonl")
    os.symlink("/etc/shadow", odd / "events.jsonl")
    fifo_nb = course / "submitted" / "fifo" / "probe"
    fifo_nb.mkdir(parents=True)
    os.mkfifo(fifo_nb / "probe.ipynb")                 # the notebook itself a FIFO
    rows = _grade(course)
    assert rows["honest"]["score"] == 1.0 and rows["honest"]["status"] == "graded"
    assert rows["odd"]["score"] == 1.0, rows["odd"]
    assert rows["forger"]["score"] == 0.0
    assert rows["forger"]["status"].startswith("not graded"), rows["forger"]
    assert rows["fifo"]["status"].startswith("not graded: the notebook could not be read")
    for s in rows:
        assert (course / "feedback" / s / "probe" / "probe.html").exists()
    assert len((course / "grades-probe.csv").read_text().splitlines()) == 5


@needs_bwrap
def test_a_grader_failure_is_one_row(tmp_path, monkeypatch):
    course = _course(tmp_path, {"a": HONEST, "b": HONEST})
    real = grader.student_program

    def broken(source_nb, student_nb):
        if student_nb["cells"][1]["source"].startswith("def probe():  # b"):
            raise KeyError("boom")
        return real(source_nb, student_nb)

    nb_path = course / "submitted" / "b" / "probe" / "probe.ipynb"
    nb_path.write_text(nb_path.read_text().replace("def probe():", "def probe():  # b"))
    monkeypatch.setattr(grader, "student_program", broken)
    rows = _grade(course)
    assert rows["a"]["score"] == 1.0
    assert rows["b"]["status"].startswith("not graded: the grader could not process")
    assert "KeyError" in (course / "feedback" / "b" / "probe" / "probe.html").read_text()


@needs_bwrap
def test_hidden_calls_are_not_in_the_sandbox_while_cells_run(tmp_path):
    # the cell looks everywhere the calls were (a file, the runner's locals, stdin) and
    # makes the answer wrong if it finds anything
    spy = ("import gc, os, sys, select\nfound = [p for p in ('calls.pkl', '/submission/calls.pkl')"
           " if os.path.exists(p)]\nf = sys._getframe()\nwhile f is not None:\n"
           "    found += [k for k in f.f_locals if k == 'calls']\n    f = f.f_back\n"
           "found += [o for o in gc.get_objects() if isinstance(o, dict) and 'kwargs' in o "
           "and 'args' in o and '/' in str(o.get('key'))]\nfound += [0] if select.select([0], [], [], 0)[0] and "
           "os.read(0, 1) else []\ndef probe():\n    return [0] * 6 if not found else [1] * 6")
    rows = _grade(_course(tmp_path, {"spy": spy}))
    assert rows["spy"]["score"] == 1.0, rows["spy"]


def test_time_limit_follows_the_notebooks_promise(monkeypatch):
    monkeypatch.setattr(grader, "WALL_SECONDS", None)
    # 8 cells, 73 calls of 3.4 s each (ch6): never stopped
    assert grader.wall_seconds(8, 73) >= 8 * grader.CELL_SECONDS + 73 * grader.CALL_SECONDS
    assert grader.wall_seconds(8, 73) > 73 * 3.4 + 30
    assert grader.wall_seconds(10 ** 6, 0) == grader.MAX_WALL_SECONDS
    monkeypatch.setattr(grader, "WALL_SECONDS", 30)
    assert grader.wall_seconds(8, 73) == 30


def test_late_submissions(tmp_path):
    deadline = grader._parse_time("2026-12-01T23:59")
    (tmp_path / "timestamp.txt").write_text("2026-12-02 02:04:00.123 UTC\n")
    assert grader._late(tmp_path, deadline) == ("2 h 6 min", None)
    (tmp_path / "timestamp.txt").write_text("2026-12-01 23:00:00 UTC\n")
    assert grader._late(tmp_path, deadline) == ("", None)
    (tmp_path / "timestamp.txt").write_text("2026-12-04 00:00:00 UTC\n")
    assert grader._late(tmp_path, deadline)[0] == "2 d 0 h 1 min"
    (tmp_path / "timestamp.txt").unlink()
    assert "no timestamp" in grader._late(tmp_path, deadline)[1]
    assert grader._late(tmp_path, None) == ("", None)


# --- issue 27, item 6: honest answers count whatever their type; a duplicated cell --------

def _honest_values():
    import collections
    import decimal
    import fractions

    import sympy

    Pair = collections.namedtuple("Pair", "a b")
    return {
        "matrix of ints": np.matrix([[1, 0], [-1, 1], [0, -1]]),
        "matrix of floats": np.matrix([[0.5, 2.0], [3.0, -4.25]]),
        "object array of sympy Floats": np.array([[sympy.Float(1.5), sympy.Float(-2)],
                                                  [sympy.Float("0.1"), sympy.Float(4)]],
                                                 dtype=object),
        "object array of sympy Integer/Rational": np.array([sympy.Integer(3),
                                                            sympy.Rational(1, 3)], dtype=object),
        "sympy Float": sympy.Float(2.5),
        "sympy Integer": sympy.Integer(-7),
        "sympy Rational": sympy.Rational(2, 3),
        "namedtuple of numbers": Pair(0.0275, 0.0002625),
        "namedtuple of arrays": Pair(np.arange(3.0), np.ones(3)),
        "list mixing types": [sympy.Float(1), np.float32(2.5), 3, np.int64(4), True,
                              fractions.Fraction(1, 2), decimal.Decimal("0.25")],
        "tuple of matrices": (np.matrix([[1.0, 2.0]]), np.matrix([[sympy.Float(3), 4]])),
        "list of sympy numbers and numpy scalars": [[sympy.Float(3), np.float32(1)],
                                                    (sympy.Integer(2), np.int8(-1))],
        "numpy scalars": [np.float64(1.5), np.int32(2), np.bool_(True), np.float16(0.5)],
        "a numpy bool": np.bool_(False),
        "a masked array": np.ma.array([1.0, 2.0, 3.0], mask=[0, 1, 0]),
        "a sympy Matrix": sympy.Matrix([[1, 2], [3, 4]]),
    }


@pytest.mark.parametrize("what", list(_honest_values()))
def test_honest_types_round_trip_as_numbers(what):
    from mbcourse.grading import check

    value = _honest_values()[what]
    sent = json.loads(json.dumps(runner.plain(value)))          # what crosses the pipe
    back = grader.decode(sent)
    want = np.asarray(value, dtype=float)
    got = np.asarray(back, dtype=float)
    assert got.shape == want.shape, (what, sent)
    np.testing.assert_array_equal(got, want)
    assert check(what, back, want)                               # and the grader accepts it
    assert "object" not in json.dumps(sent)                      # never the "object" fallback


def test_answers_that_are_not_numbers_stay_objects():
    import sympy

    for value in [sympy.Symbol("x") + 1, np.array([1 + 2j]), b"3.5", object(), lambda: 1,
                  np.array([np.zeros(2), np.zeros(3)], dtype=object), (x for x in [1.0])]:
        back = grader.decode(json.loads(json.dumps(runner.plain(value))))
        assert isinstance(back, grader.Unreadable), value
    assert grader.decode(runner.plain("3.5")) == "3.5"           # text stays text


class _Sleepy:
    def __array__(self, dtype=None, copy=None):
        import time

        time.sleep(60)


class _Raising:
    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("no")

    def __float__(self):
        raise KeyboardInterrupt          # a BaseException: must not escape as "numbers"

    def __repr__(self):
        return "Raising()"


class _Exiting:
    def __float__(self):
        raise SystemExit(0)


def test_hostile_conversions_are_contained():
    import time

    from mbcourse.grading import GradingFailure, check

    start = time.perf_counter()
    ok, exc = runner._limited(lambda: runner.plain(_Sleepy()), 0.5)
    assert not ok and isinstance(exc, runner._TimeLimit)
    assert time.perf_counter() - start < 5
    assert "did not finish" in repr(exc)
    sent = runner._limited(lambda: runner.plain(_Raising()), 2)
    assert sent == (True, {"object": "_Raising: Raising()"})
    back = grader.decode(sent[1])
    assert isinstance(back, grader.Unreadable)
    with pytest.raises(GradingFailure, match=r"cannot be read as numbers \(what you returned: "
                                               r"_Raising: Raising\(\)\)"):
        check("S", back, np.eye(2))
    ok, exc = runner._limited(lambda: runner.plain(_Exiting()), 2)
    assert not ok and isinstance(exc, SystemExit)
    # a namedtuple's own __iter__ / __len__ are not called: its items are read directly
    import collections

    class Tricky(collections.namedtuple("Tricky", "a b")):
        def __iter__(self):
            raise RuntimeError("student code")

        def __len__(self):
            return 10 ** 12

    assert runner.plain(Tricky(1.0, 2.0)) == {"tuple": [1.0, 2.0]}


def test_decode_is_safe_on_forged_descriptions():
    deep = []
    for _ in range(5000):
        deep = [deep]
    forged = [{"ndarray": [1, "x"], "shape": [2]}, {"ndarray": [1, 2], "shape": [3]},
              {"ndarray": [1, 2], "shape": "ab"}, {"ndarray": [1, 2], "shape": [-1, -2]},
              {"ndarray": [[1, 2]], "shape": [1]}, {"ndarray": "12", "shape": [2]},
              {"ndarray": [], "shape": [2 ** 40, 0, 2 ** 40] * 11},
              {"complex": ["1+2j"]}, {"complex": 5}, {"tuple": "abc"}, {"float": ["nan"]},
              {"dict": {"a": {"ndarray": [1], "shape": [5]}}}, {"object": ["x"] * 3}, deep,
              {"exec": "print(1)"}]
    def only_data(x, depth=0):
        if isinstance(x, (list, tuple)):
            return all(only_data(v, depth + 1) for v in x)
        if isinstance(x, dict):
            return all(isinstance(k, str) and only_data(v, depth + 1) for k, v in x.items())
        if isinstance(x, np.ndarray):
            return x.dtype.kind in "biuf"
        return x is None or isinstance(x, (bool, int, float, complex, str, grader.Unreadable))

    for value in forged:
        back = grader.decode(value)            # never raises, never more than data
        assert only_data(back), (value, back)
        assert not isinstance(back, np.ndarray), value     # none of them is a valid array
    inner = grader.decode(deep)
    for _ in range(grader.DECODE_DEPTH + 1):
        inner = inner[0]
    assert isinstance(inner, grader.Unreadable)
    assert grader.decode(10 ** 30) == 1e30
    big = grader.decode({"ndarray": [1e308] * 2, "shape": [2], "kind": "i"})
    assert big.dtype == float and big[0] == 1e308          # not an int overflow
    assert isinstance(grader.decode({"ndarray": [1] * (grader.DECODE_ELEMENTS + 1),
                                     "shape": [grader.DECODE_ELEMENTS + 1]}), grader.Unreadable)
    arr = grader.decode({"ndarray": [1.0, {"float": "nan"}, 3.0, 4.0], "shape": [2, 2],
                         "kind": "f"})
    assert arr.shape == (2, 2) and np.isnan(arr[0, 1])


def _dup_source():
    return {"cells": [
        notebook_cell("import numpy as np", "readonly", grade_id="setup"),
        notebook_cell("def gap():\n    ### BEGIN SOLUTION\n    return 1.0\n    ### END SOLUTION",
                      "solution", grade_id="gap"),
        notebook_cell("check_call('gap', gap)", "tests", grade_id="gap_tests", points=1)]}


def test_a_duplicated_answer_cell_counts_by_its_last_copy():
    src = _dup_source()
    stub = dict(src["cells"][1], source="def gap():\n    # YOUR CODE HERE\n"
                                        "    raise NotImplementedError()")
    answer = dict(src["cells"][1], source="def gap():\n    return 1.0")
    mine = {"cell_type": "code", "metadata": {}, "source": "helper = 2"}
    later = {"cell_type": "code", "metadata": {}, "source": "print(gap())"}
    student = {"cells": [src["cells"][0], stub, mine, answer, later, src["cells"][2]]}
    cells, notes = grader.student_program(src, student)
    assert [c["id"] for c in cells] == ["setup", "gap", "added cell after gap",
                                        "added cell after gap"]
    assert cells[1]["source"] == "def gap():\n    return 1.0"        # the last copy
    assert [c["source"] for c in cells[2:]] == ["helper = 2", "print(gap())"]  # in their order
    assert notes == ["your notebook has 2 copies of the answer cell `gap`; the last one was "
                     "graded (as \"Run All\" leaves it)"]
    # the other way round (the answer above, a fresh stub below) counts the stub, as Run All
    student["cells"] = [src["cells"][0], answer, stub, src["cells"][2], src["cells"][2]]
    cells, notes = grader.student_program(src, student)
    assert "NotImplementedError" in cells[1]["source"]
    assert any("2 copies of the answer cell `gap`" in n for n in notes)
    assert any("2 copies of the test cell `gap_tests`; the assignment's own cell" in n
               for n in notes)
    # one copy: no note
    student["cells"] = [src["cells"][0], answer, src["cells"][2]]
    assert grader.student_program(src, student)[1] == []


def test_program_survives_malformed_cells():
    src = _dup_source()
    student = {"cells": [{"cell_type": "code", "metadata": {"nbgrader": {"grade_id": ["x"]}},
                          "source": ["a = 1\n", 5, None]},
                         dict(src["cells"][1], source=["def gap():\n", "    return 1.0", 7]),
                         "not a cell"]}
    cells, notes = grader.student_program(src, student)
    assert [c["source"] for c in cells] == ["a = 1\n", "import numpy as np",
                                           "def gap():\n    return 1.0"]


@needs_bwrap
def test_honest_types_get_full_marks_in_the_sandbox(tmp_path, monkeypatch):
    monkeypatch.setattr(grader, "CALL_SECONDS", 2)
    students = {
        "fraction": "from fractions import Fraction\ndef probe():\n    return [Fraction(0)] * 6",
        "sympy": "import numpy as np, sympy\ndef probe():\n    return np.array([sympy.Float(0)] * 6, dtype=object)",
        "sympy_list": "import sympy\ndef probe():\n    return [sympy.Integer(0)] * 3 + [sympy.Float(0), sympy.Rational(0, 1), False]",
        "namedtuple": "import collections\nP = collections.namedtuple('P', 'a b c d e f')\n"
                      "def probe():\n    return P(0, 0.0, 0, 0, 0, 0)",
        "sleepy": "import time\nclass S:\n    def __array__(self, dtype=None, copy=None):\n"
                  "        time.sleep(60)\ndef probe():\n    return S()",
        "raising": "class R:\n    def __array__(self, dtype=None, copy=None):\n"
                   "        raise ValueError('no')\ndef probe():\n    return R()",
    }
    course = _course(tmp_path, students)
    nb_path = course / "submitted" / "namedtuple" / "probe" / "probe.ipynb"
    nb = json.loads(nb_path.read_text())       # the untouched stub duplicated above the answer
    stub = dict(nb["cells"][1], source="def probe():\n    raise NotImplementedError()")
    nb["cells"].insert(1, stub)
    nb_path.write_text(json.dumps(nb))
    rows = _grade(course)
    for who in ("fraction", "sympy", "sympy_list", "namedtuple"):
        assert (rows[who]["score"], rows[who]["status"]) == (1.0, "graded"), rows[who]
    page = (course / "feedback" / "namedtuple" / "probe" / "probe.html").read_text()
    assert "2 copies of the answer cell `probe_solution`; the last one was graded" in page
    for who in ("sleepy", "raising"):             # contained: a graded 0 with a reason
        assert rows[who]["score"] == 0.0 and rows[who]["status"] == "graded", rows[who]
    page = (course / "feedback" / "sleepy" / "probe" / "probe.html").read_text()
    assert "could not be read as numbers: it did not finish within the time limit" in page
    page = (course / "feedback" / "raising" / "probe" / "probe.html").read_text()
    assert "cannot be read as numbers (what you returned: R: " in page


def test_unsandboxed_mode_uses_the_same_channel(tmp_path, monkeypatch):
    # (the uid drop itself: test_unsandboxed_never_runs_student_code_as_root; here the
    # course's Python may be unreadable to that uid, so the run keeps this user)
    monkeypatch.setattr(grader, "_uid_pool", lambda: None)
    course = _course(tmp_path, {"honest": HONEST, "quitter": "import os\nos._exit(0)"})
    rows = _grade(course, mode="none", unsandboxed=True)
    assert rows["honest"]["score"] == 1.0
    assert rows["honest"]["status"] == "graded (not sandboxed)"
    assert rows["quitter"]["status"].startswith("not graded: the kernel ended in cell")


def test_cgroup_v2_layout(tmp_path):
    # a cgroup2 hierarchy as files: the group is made at its root with both limits
    (tmp_path / "cgroup.controllers").write_text("cpu memory pids\n")
    (tmp_path / "cgroup.subtree_control").write_text("")
    group = grader.Cgroup("run1", memory=123456789, pids=7, root=tmp_path)
    assert group.version == 2 and group.dirs == [tmp_path / "run1"]
    assert (tmp_path / "run1" / "memory.max").read_text() == "123456789"
    assert (tmp_path / "run1" / "pids.max").read_text() == "7"
    assert "+memory +pids" in (tmp_path / "cgroup.subtree_control").read_text()
    (tmp_path / "cgroup.controllers").write_text("cpu\n")
    with pytest.raises(OSError, match="no memory/pids"):
        grader.Cgroup("run2", root=tmp_path)


# --- issue 27 items 4-5 (H2): hidden tests stay hidden, blocked routes are generated ----------

HOMEWORK_SOURCE = ROOT / "homework" / "source"


def _hw(a):
    return json.loads((HOMEWORK_SOURCE / a / f"{a}.ipynb").read_text())


def test_route_generator_finds_the_red_team_routes():
    import routes

    got = {a: {r.replace(routes.GUARDED, "") for r in routes.routes(_hw(a))}
           for a in ("ch2_cartesian", "ch3_tree", "ch5_inertial", "ch6_loops", "ch7_energy",
                     "ch8_accuracy", "ch9_contact")}
    assert "mbcourse.inertial.decompose_tree" in got["ch5_inertial"]       # compared in the tests
    assert "mbcourse.inertial._parts" in got["ch5_inertial"]
    assert {"mbcourse.tree.barycentre.barycentres_from_d",
            "mbcourse.tree.barycentre.augmented_inertias_from_d"} <= got["ch3_tree"]
    assert "mbcourse.loops.kinematics" in got["ch6_loops"]
    assert {"mbcourse.accuracy.Chain._motion_first",
            "mbcourse.accuracy.Chain._motion_second"} <= got["ch8_accuracy"]
    assert "mbcourse.kinetic.energy_koenig" in got["ch7_energy"]
    assert "mbcourse.loops._kkt" in got["ch2_cartesian"]                   # the explicit list
    assert {"mbcourse.contact.impulse", "mbcourse.contact._solve_impact",
            "mbcourse.contact._lcp"} <= got["ch9_contact"]
    assert "mbcourse.contact.gap_jacobian" not in got["ch9_contact"]      # a read-only cell's
    for a, blocked in got.items():                # the general infrastructure stays available
        assert not {"mbcourse.model.Model.add_body", "mbcourse.model.Model.add_joint",
                    "mbcourse.models.crank_slider", "mbcourse.grading.check",
                    "mbcourse.spatial.rotation"} & blocked, a
        assert not any(r.startswith(("mbcourse.model.", "mbcourse.models.", "mbcourse.spatial."))
                       for r in blocked), a
    # what a read-only cell uses stays callable: hinge_vectors itself is not blocked, and what
    # it needs inside the library is only guarded
    ch3 = routes.routes(_hw("ch3_tree"))
    assert "mbcourse.tree.barycentre.hinge_vectors" not in got["ch3_tree"]
    assert routes.GUARDED + "mbcourse.tree.barycentre.barycentres_from_d" in ch3


RED_TEAM = {
    "ch5_inertial": "import sympy as sp\nmb.inertial.decompose_tree(sp.eye(2), sp.symbols('q1 q2'), "
                    "sp.symbols('u1 u2'))",
    "ch3_tree": "mb.tree.barycentre.barycentres_from_d(np.zeros((2, 2, 3)), np.ones(2))",
    "ch6_loops": "m = mb.models.crank_slider()\nq, qd = mb.models.crank_slider_state(m, 0.3, 1.0)\n"
                 "mb.loops.kinematics(m, q, qd)",
    "ch8_accuracy": "mb.accuracy.revolute_chain([1.0, 0.5])._motion_first(np.zeros(2))",
    "ch7_energy": "mb.kinetic.energy_koenig(1.0, np.zeros(3), np.zeros(3), np.eye(3))",
    "ch2_cartesian": "from mbcourse import loops\nloops._kkt(np.eye(2)[None], np.ones((1, 2)), "
                     "np.ones((1, 1, 2)), np.ones((1, 1)), 'x')",
    "ch9_contact": "from mbcourse import contact\ncontact._lcp(np.eye(1), np.array([-1.0]))",
}


@pytest.mark.parametrize("a", sorted(RED_TEAM))
def test_red_team_routes_raise_in_the_sandbox(tmp_path, a):
    """The sandbox's copy of mbcourse: the route raises the 'build this yourself' error when
    a student's code calls it; the library's own use of a guarded routine still works."""
    import os
    import subprocess

    _, lib = grader.sandbox_library(grader.implemented_routines(_hw(a)), tmp_path / "mbcourse")
    head = (f"import numpy as np, mbcourse as mb\nassert mb.__file__.startswith({str(lib)!r})\n")

    def run(code):
        return subprocess.run([sys.executable, "-c", head + code], cwd=tmp_path, text=True,
                              env=dict(os.environ, PYTHONPATH=str(tmp_path)),
                              capture_output=True, timeout=300)

    p = run(RED_TEAM[a])
    assert p.returncode == 1 and "asks you to build this yourself" in p.stderr, p.stderr[-2000:]
    if a == "ch3_tree":           # hinge_vectors uses the guarded prepare/barycentres_from_d
        p = run("C = mb.tree.barycentre.hinge_vectors(mb.models.spatial_manipulator())\n"
                "assert np.asarray(C).ndim == 3")
        assert p.returncode == 0, p.stderr[-2000:]
        # mbcourse.grading.check_call calls whatever it is handed: not a way round the guard
        p = run("mb.grading.check_call('x', mb.tree.barycentre.barycentres_from_d, "
                "np.zeros((2, 2, 3)), np.ones(2))")
        assert p.returncode == 1 and "asks you to build this yourself" in p.stderr, \
            p.stderr[-2000:]
    if a == "ch9_contact":        # the read-only falling_rod needs gap_jacobian (guarded inside)
        p = run("m = mb.Model()\n_ = m.add_body('b', 1.0, [1, 1, 1])\n"
                "_ = m.add_joint('z', 'prismatic', 'ground', 'b', axis=(0, 0, 1))\n"
                "_ = m.add_contact('floor', 'b', (0, 0, 0))\n"
                "assert np.allclose(mb.contact.gap_jacobian(m, [0.5]), [[1.0]])")
        assert p.returncode == 0, p.stderr[-2000:]


def test_reference_run_marks_the_hidden_calls_and_they_are_sent_last():
    """Each recorded call knows whether it comes from a hidden block; the sandbox gets every
    visible call before any hidden one, so a function that saved a hidden input cannot raise
    it in a visible test's (detailed) message."""
    calls, _ = grader.reference_run(_hw("ch1_graphs"), "ch1_graphs")
    flags = [c["hidden"] for c in calls]
    assert any(flags) and not all(flags)             # both kinds of call
    first_hidden = flags.index(True)
    assert flags[first_hidden:].count(False) > 0           # notebook order interleaves them
    ordered = sorted(calls, key=lambda c: bool(c.get("hidden")))
    flags = [c["hidden"] for c in ordered]
    assert flags == sorted(flags)                          # all visible calls first
    assert {c["key"] for c in ordered} == {c["key"] for c in calls}


def _ch1_answers(calls, hidden_mode):
    """Answers of a student who is right on the visible calls of ch1 and, on the hidden ones,
    raises ValueError(str(args)) (``raise``) or returns wrong numbers (``wrong``)."""
    import runner
    from mbcourse import graph

    visible = {"incidence_tests": 2, "path_tests": 2, "preceding_arc_tests": 4}
    fns = {"incidence": graph.incidence_matrix, "path": graph.path_matrix,
           "preceding_arc": lambda S, T, k: graph.predecessor(S, T, k)[0] + 1}
    out = []
    for c in calls:
        test, k = c["key"].split("/")
        value = fns[c["name"]](*c["args"], **c["kwargs"])
        if int(k) < visible[test]:
            out.append({"key": c["key"], "value": runner.plain(value)})
        elif hidden_mode == "raise":
            out.append({"key": c["key"], "error": "ValueError", "message": str(c["args"])})
        else:
            out.append({"key": c["key"], "value": runner.plain(np.asarray(value) + 7)})
    return json.loads(json.dumps(out))


def _hidden_texts(calls):
    """Text forms of the hidden inputs and expected values that must not reach a student."""
    texts = set()
    for c in calls:
        if c["name"] in ("incidence", "path") and len(c["args"][0]) >= 8:
            texts.add(str(c["args"][0]))
            texts.add(str(c["args"][1]))
            texts.add(str(c["args"]))
    return texts


@pytest.mark.parametrize("mode", ["raise", "wrong"])
def test_hidden_failures_name_the_test_not_the_inputs(mode):
    nb = _hw("ch1_graphs")
    calls, tests = grader.reference_run(nb, "ch1_graphs")
    results = grader.score(nb, calls, tests, _ch1_answers(calls, mode), "ch1_graphs")
    assert [r["score"] for r in results] == [0.0, 0.0, 0.0]
    for r in results:
        assert r["message"].startswith("hidden test "), r
        assert ("it raised ValueError" if mode == "raise" else "wrong values") in r["message"]
        assert "[" not in r["message"] and "expected" not in r["message"], r["message"]
    assert "hidden test 1 of `incidence_tests` (`incidence()`) failed" in results[0]["message"]
    # a student's own exception class (its name could carry the inputs) is not named
    ans = [dict(a, error="Leak_1_2_3") if "error" in a else a for a in _ch1_answers(calls, "raise")]
    msg = grader.score(nb, calls, tests, ans, "ch1_graphs")[0]["message"]
    assert "Leak" not in msg and "raised an exception" in msg
    # a visible failure keeps its detailed message
    ans = _ch1_answers(calls, "raise")
    ans[0] = {"key": ans[0]["key"], "error": "ValueError", "message": "visible detail"}
    assert "raised ValueError: visible detail" in grader.score(nb, calls, tests, ans,
                                                               "ch1_graphs")[0]["message"]


def test_hidden_inputs_follow_the_term_seed(monkeypatch):
    from mbcourse.grading import TERM_SEED_VARIABLE

    nb = _hw("ch2_cartesian")
    runs = {}
    for seed in ("", "1", "2"):
        monkeypatch.setenv(TERM_SEED_VARIABLE, seed)
        calls, _ = grader.reference_run(nb, "ch2_cartesian")
        runs[seed] = {c["key"]: c["digest"] for c in calls}
        assert ("default term seed" in grader.term_seed_note()) == (seed == "")
    visible = ["gap_tests/0", "row_tests/0", "kkt_tests/0"]
    assert all(runs["1"][k] == runs["2"][k] == runs[""][k] for k in visible)
    hidden = [k for k in runs["1"] if k not in visible]
    assert all(runs["1"][k] != runs["2"][k] for k in hidden), hidden
    monkeypatch.setenv(TERM_SEED_VARIABLE, "spring")
    with pytest.raises(ValueError, match="term seed"):
        grader.term_seed_note()


@needs_bwrap
def test_hidden_inputs_never_reach_the_feedback(tmp_path):
    """End to end in the sandbox: the hidden inputs of ch1 appear in no feedback page."""
    course = tmp_path / "course"
    src = _hw("ch1_graphs")
    (course / "source" / "ch1_graphs").mkdir(parents=True)
    (course / "source" / "ch1_graphs" / "ch1_graphs.ipynb").write_text(json.dumps(src))
    visible_guard = "if len(i_plus) >= 8 and len(set(i_plus)) > 3:\n        {act}\n    "
    students = {
        "raising": "raise ValueError(str((i_plus, i_minus)))",
        "wrong": "return np.ones((len(i_plus), len(i_plus)), dtype=int) * 3",
    }
    for who, act in students.items():
        nb = json.loads(json.dumps(src))              # the source's solutions, then the twist
        for c in nb["cells"]:
            text = "".join(c["source"])
            for fn in ("def incidence(i_plus, i_minus):", "def path(i_plus, i_minus):"):
                if fn in text and c["metadata"].get("nbgrader", {}).get("solution"):
                    head, _, body = text.partition(fn)
                    doc, nl, rest = body.partition("\n")
                    c["source"] = head + fn + nl + "    " + visible_guard.format(act=act) + rest.lstrip(" ")
        folder = course / "submitted" / who / "ch1_graphs"
        folder.mkdir(parents=True)
        (folder / "ch1_graphs.ipynb").write_text(json.dumps(nb))
    rows = {r["student"]: r for r in grader.grade_assignment(course, "ch1_graphs",
                                                             log=lambda *a: None)}
    calls, _ = grader.reference_run(src, "ch1_graphs")
    secrets = _hidden_texts(calls)
    assert secrets
    for who in students:
        assert rows[who]["status"] == "graded" and rows[who]["score"] == 3.0, rows[who]
        page = (course / "feedback" / who / "ch1_graphs" / "ch1_graphs.html").read_text()
        assert "hidden test" in page
        leaked = [s for s in secrets if s in page]
        assert not leaked, (who, leaked)


@needs_bwrap
def test_hidden_inputs_saved_by_one_function_do_not_leak_through_another(tmp_path):
    """A student whose `incidence` keeps every input it sees and whose `path` raises them in
    its message: the visible tests' calls all come before the hidden ones, so the visible
    `path` message holds visible inputs only, and the hidden messages hold no message."""
    course = tmp_path / "course"
    src = _hw("ch1_graphs")
    (course / "source" / "ch1_graphs").mkdir(parents=True)
    (course / "source" / "ch1_graphs" / "ch1_graphs.ipynb").write_text(json.dumps(src))
    nb = json.loads(json.dumps(src))
    twist = {"def incidence(i_plus, i_minus):": "SEEN.append([int(x) for x in i_plus])",
             "def path(i_plus, i_minus):": "raise ValueError(repr(SEEN))"}
    for c in nb["cells"]:
        text = "".join(c["source"])
        for fn, act in twist.items():
            if fn in text and c["metadata"].get("nbgrader", {}).get("solution"):
                head, _, body = text.partition(fn)
                doc, nl, rest = body.partition("\n")
                c["source"] = (head + "SEEN = globals().get('SEEN', [])\n" + fn + nl + "    "
                               + act + "\n    " + rest.lstrip(" "))
    folder = course / "submitted" / "hoarder" / "ch1_graphs"
    folder.mkdir(parents=True)
    (folder / "ch1_graphs.ipynb").write_text(json.dumps(nb))
    rows = {r["student"]: r for r in grader.grade_assignment(course, "ch1_graphs",
                                                             log=lambda *a: None)}
    assert rows["hoarder"]["status"] == "graded", rows["hoarder"]
    page = (course / "feedback" / "hoarder" / "ch1_graphs" / "ch1_graphs.html").read_text()
    assert "raised ValueError: [" in page                  # the visible message is shown
    calls, _ = grader.reference_run(src, "ch1_graphs")
    hidden = {repr([int(x) for x in c["args"][0]]) for c in calls
              if c["name"] == "incidence" and c["hidden"]}
    visible = {repr([int(x) for x in c["args"][0]]) for c in calls
               if c["name"] == "incidence" and not c["hidden"]}
    assert hidden and not hidden & visible
    assert any(t in page for t in visible)                 # what it saw before: shown
    leaked = [t for t in hidden if t in page]
    assert not leaked, leaked


@needs_bwrap
def test_a_call_that_ignores_its_alarm_is_stopped_by_the_grader(tmp_path, monkeypatch):
    import time

    monkeypatch.setattr(grader, "CALL_SECONDS", 1)
    stubborn = ("import signal\ndef probe():\n    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
                "    while True:\n        pass")
    start = time.monotonic()
    rows = _grade(_course(tmp_path, {"stubborn": stubborn, "honest": HONEST}))
    assert time.monotonic() - start < 60
    assert rows["stubborn"]["status"].startswith(
        "not graded: stopped: a call of `probe()` ran past its 1 s limit"), rows["stubborn"]
    assert rows["honest"]["score"] == 1.0


def test_a_visible_helper_called_from_hidden_tests_stays_hidden():
    tests = ("from mbcourse.grading import check, check_call\n"
             "def run(x):\n"
             "    check('y', check_call('f', globals().get('f'), x), 2 * x)\n"
             "run(1.0)\n"
             "### BEGIN HIDDEN TESTS\n"
             "run(123.456)\n"
             "### END HIDDEN TESTS\n")
    src = {"cells": [notebook_cell("def f(x):\n    return 2 * x", "solution", grade_id="f_solution"),
                     notebook_cell(tests, "tests", grade_id="f_tests", points=1)],
           "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    calls, tests_ = grader.reference_run(src, "h")
    for answer in ({"error": "ValueError", "message": "(123.456,)"}, {"value": 7.0}):
        answers = [{"key": "f_tests/0", "value": 2.0}, dict(answer, key="f_tests/1")]
        msg = grader.score(src, calls, tests_, answers, "h")[0]["message"]
        assert msg.startswith("hidden test 1 of `f_tests` (`f()`) failed"), msg
        assert "123" not in msg and "246" not in msg and "7" not in msg, msg
    answers = [{"key": "f_tests/0", "value": 5.0}, {"key": "f_tests/1", "value": 246.912}]
    assert "expected value is 2" in grader.score(src, calls, tests_, answers, "h")[0]["message"]
