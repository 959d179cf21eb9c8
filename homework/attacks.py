"""Submissions written by a student who would rather cheat than solve, and by one whose
correct work is noisy: every attack the grader must withstand (homework/grader.py).

Each attack turns a release (and the source, for the honest parts) into a submission and
says what the grader must make of it:

* ``zero`` — no points (the attack gains nothing);
* ``full`` — full marks (honest work that a naive grader would have zeroed);
* ``stopped`` — the run was stopped (no points), the grade says ``not graded: why`` and the
  feedback page explains what happened.

``make homework`` (pipeline.py) grades them all on one assignment between two honest
submissions, checks these outcomes, and checks that the course's files (sources, releases,
other students' work, earlier grades) are untouched.
"""

from __future__ import annotations

import copy
import re

import faulty

# The student's own code cells these attacks add. ``{course}`` is the absolute course path
# (an attacker may guess it), ``{a}`` the assignment.
_PATCH_GRADER = """
import mbcourse.grading as g
g.check = lambda *a, **k: True
g.check_call = lambda *a, **k: None
"""

_PATCH_NUMPY = """
import numpy
numpy.allclose = lambda *a, **k: True
numpy.array_equal = lambda *a, **k: True
numpy.testing.assert_allclose = lambda *a, **k: None
{zeros}
"""

_SWALLOW = """
import ast
class Swallow(ast.NodeTransformer):
    def visit_Module(self, node):
        handler = ast.ExceptHandler(type=ast.Name("BaseException", ast.Load()), name=None,
                                    body=[ast.Pass()])
        node.body = [ast.Try(body=node.body or [ast.Pass()], handlers=[handler], orelse=[],
                             finalbody=[])]
        return ast.fix_missing_locations(node)
get_ipython().ast_transformers.append(Swallow())
"""

_READ_SOLUTIONS = """
import glob, json, os
found = []
for pattern in ["../../../source/{a}/{a}.ipynb", "{course}/source/{a}/{a}.ipynb",
                "/**/source/{a}/{a}.ipynb", "{course}/gradebook.db"]:
    found += glob.glob(pattern, recursive=True)
for path in found:
    if path.endswith(".ipynb"):
        for cell in json.load(open(path))["cells"]:
            if cell.get("metadata", {{}}).get("nbgrader", {{}}).get("solution"):
                exec("".join(cell["source"]))
print("found", found)
"""

_GRADEBOOK = """
import sqlite3, glob
for path in ["../../../gradebook.db", "{course}/gradebook.db"] + glob.glob("/**/gradebook.db", recursive=True):
    try:
        db = sqlite3.connect(path)
        for table in ("grade", "submitted_notebook", "submitted_assignment"):
            db.execute(f"UPDATE {{table}} SET manual_score = 1000")
        db.commit()
    except Exception as exc:
        print(path, exc)
for path in ["{course}/grades.csv", "{course}/grades-{a}.csv", "../../../grades.csv"]:
    try:
        open(path, "w").write("student,assignment,score,max_score,status\\nattacker,{a},10,10,graded\\n")
    except Exception as exc:
        print(path, exc)
"""

_DESTROY = """
import os, shutil
for root in ["../../..", "{course}"]:
    for name in ["source", "release", "submitted", "autograded", "feedback", "gradebook.db",
                 "grades.csv", "grades-{a}.csv"]:
        path = os.path.join(root, name)
        try:
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
        except Exception as exc:
            print(path, exc)
"""

_NOISY = """
import sys, warnings
import numpy as np
print("a long progress message on stderr", file=sys.stderr)
warnings.warn("a warning from the student's cell", UserWarning)
np.log(np.zeros(1))          # RuntimeWarning: divide by zero
{wrapped}
"""

_LOOP = """
import signal
for s in (signal.SIGINT, signal.SIGALRM, signal.SIGTERM):
    signal.signal(s, signal.SIG_IGN)
while True:
    try:
        pass
    except BaseException:
        pass
"""

_EXIT = """
import os
os._exit(0)
"""

_MEMORY = """
try:
    hog = bytearray(6 * 2 ** 30)      # 6 GB
except MemoryError:
    hog = None
import numpy as np
try:
    big = np.ones(800_000_000)        # 6.4 GB
except MemoryError:
    big = None
"""

_FORK = """
import os
children = 0
try:
    while children < 100_000:
        if os.fork() == 0:
            while True:
                pass
        children += 1
except OSError as exc:
    print("fork refused after", children, exc)
"""

_FORGE = """
import atexit, json
def forge():
    with open("answers.jsonl", "w") as f:
        for test in {tests}:
            for k in range(60):
                f.write(json.dumps({{"key": f"{{test}}/{{k}}", "value": [[1, 0], [-1, 1], [0, -1]]}}) + "\\n")
atexit.register(forge)
"""

# One library call per task (the routine that solves it), where the library has one.
LIBRARY_CALLS = {
    "ch1_graphs": """
import mbcourse as mb
def incidence(i_plus, i_minus):
    return mb.graph.incidence_matrix(i_plus, i_minus)
def path(i_plus, i_minus):
    return mb.graph.path_matrix(i_plus, i_minus)
def preceding_arc(S, T, k):
    return int(mb.graph.predecessor(S, T, k)[0])
""",
    "ch5_inertial": """
import mbcourse as mb
from mbcourse import inertial
import numpy as np
def _split(dH, qd):
    hc, ho, hg, _, _ = inertial._parts(None, np.asarray(dH, float).tolist(),
                                       np.asarray(qd, float).tolist(),
                                       lambda xs: float(sum(xs)), 0.0, 0.5)
    return np.array(hc), np.array(ho), np.array(hg)
def centrifugal(dH, qd):
    return _split(dH, qd)[0]
def coriolis(dH, qd):
    return _split(dH, qd)[1]
def gyroscopic(dH, qd):
    return _split(dH, qd)[2]
""",
}


def _cell(source):
    return {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
            "source": source.strip("\n")}


def _functions(source_nb):
    """``[(name, signature)]`` of the functions the assignment asks for."""
    out = []
    for cell in source_nb["cells"]:
        if faulty._is_solution(cell):
            m = re.search(r"^def (\w+)\((.*?)\):", faulty._text(cell["source"]), re.M)
            if m:
                out.append((m.group(1), m.group(2)))
    return out


def _tests(source_nb):
    return [cell["metadata"]["nbgrader"]["grade_id"] for cell in source_nb["cells"]
            if cell.get("metadata", {}).get("nbgrader", {}).get("grade")]


def _with(nb, *sources):
    nb = copy.deepcopy(nb)
    nb["cells"] += [_cell(s) for s in sources]
    return nb


def _noisy_wrappers(source_nb):
    lines = ["import functools", "def noisy(f):", "    @functools.wraps(f)",
             "    def g(*a, **k):", "        print('working...', file=sys.stderr)",
             "        warnings.warn('inside the function', RuntimeWarning)",
             "        np.sqrt(-np.ones(1))", "        return f(*a, **k)", "    return g"]
    lines += [f"{name} = noisy({name})" for name, _ in _functions(source_nb)]
    return "\n".join(lines)


def build(assignment, release_nb, source_nb, course):
    """``{attack: (notebook, expected outcome, description)}`` for one assignment."""
    ref = faulty.reference(release_nb, source_nb)
    blank = faulty.blank(release_nb)
    fill = {"course": str(course), "a": assignment}
    zeros = "\n".join(f"def {name}(*args, **kwargs):\n    return numpy.zeros((3, 3))"
                      for name, _ in _functions(source_nb))
    out = {
        "patch_grader": (_with(blank, _PATCH_GRADER), "zero",
                         "replaces mbcourse.grading.check and check_call by functions that pass"),
        "patch_numpy": (_with(blank, _PATCH_NUMPY.format(zeros=zeros)), "zero",
                        "numpy.allclose always True, answers all zeros"),
        "swallow_tests": (_with(blank, _SWALLOW), "zero",
                          "an IPython AST transformer wraps every later cell in try/except"),
        "read_solutions": (_with(blank, _READ_SOLUTIONS.format(**fill)), "zero",
                           "looks for the source notebook and runs its solution cells"),
        "gradebook": (_with(blank, _GRADEBOOK.format(**fill)), "zero",
                      "edits gradebook.db and writes grades files"),
        "destroy": (_with(blank, _DESTROY.format(**fill)), "zero",
                    "deletes the course's sources, releases, submissions and grades"),
        "forge_answers": (_with(blank, _FORGE.format(tests=_tests(source_nb))), "zero",
                          "writes its own answers file at exit"),
        "noisy_correct": (_with(ref, _NOISY.format(wrapped=_noisy_wrappers(source_nb))), "full",
                          "correct answers; the cells and functions warn and write to stderr"),
        "memory_hog": (_with(ref, _MEMORY), "full",
                       "correct answers, then tries to allocate 6 GB"),
        "ignore_signals_loop": (_with(ref, _LOOP), "stopped",
                                "correct answers, then a loop that ignores every signal"),
        "os_exit": (_with(ref, _EXIT), "stopped", "correct answers, then os._exit(0)"),
        "fork_bomb": (_with(blank, _FORK), "zero", "forks until refused"),
    }
    tests_gone = copy.deepcopy(blank)
    tests_gone["cells"] = [c for c in tests_gone["cells"]
                           if not c.get("metadata", {}).get("nbgrader", {}).get("grade")]
    out["delete_tests"] = (tests_gone, "zero", "test cells deleted from a blank notebook")
    stripped = copy.deepcopy(blank)
    for c in stripped["cells"]:
        c.get("metadata", {}).pop("nbgrader", None)
    out["strip_metadata"] = (stripped, "zero", "every cell's nbgrader metadata removed")
    if assignment in LIBRARY_CALLS:
        out["library_call"] = (_with(blank, LIBRARY_CALLS[assignment]), "zero",
                               "each answer is one call of the library routine that solves it")
    return out
