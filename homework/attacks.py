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

_FIFO_AT_EXIT = """
import atexit, os
def plant():
    for name in ("answers.jsonl", "events.jsonl", "stdout.txt", "stderr.txt", "program.json"):
        for folder in (".", "/submission", os.getcwd()):
            path = os.path.join(folder, name)
            try:
                if os.path.lexists(path):
                    os.remove(path)
                os.mkfifo(path)
            except OSError:
                pass
atexit.register(plant)
"""

_SYMLINK_AT_EXIT = """
import atexit, os
def plant():
    targets = {{"answers.jsonl": "/etc/shadow", "events.jsonl": "/dev/zero",
               "stderr.txt": "/dev/urandom", "program.json": "{course}/gradebook.db"}}
    for name, target in targets.items():
        for folder in (".", "/submission"):
            path = os.path.join(folder, name)
            try:
                if os.path.lexists(path):
                    os.remove(path)
                os.symlink(target, path)
            except OSError:
                pass
atexit.register(plant)
"""

_FORGED_DONE = """
import json, os
forged = (json.dumps({"done": True}) + "\\n" + json.dumps({"cells_done": True}) + "\\n").encode()
for folder in (".", "/submission"):
    try:
        with open(os.path.join(folder, "events.jsonl"), "a") as f:
            f.write(json.dumps({"done": True}) + "\\n")
    except OSError:
        pass
for fd in range(1, 64):        # whatever the grader listens on
    try:
        os.write(fd, forged)
    except OSError:
        pass
os._exit(0)
"""

_DISK_FILL = """
import os, mbcourse
folders = [".", "/submission", "/tmp", os.path.join(os.path.dirname(mbcourse.__file__), "__pycache__")]
written = 0
for folder in folders:
    try:
        while True:
            with open(os.path.join(folder, f"fill{written}.bin"), "wb") as f:
                f.write(b"\\0" * (60 << 20))
            written += 1
    except OSError as exc:
        print(folder, "full after", written, "files:", exc)
"""

_MEMORY_SWARM = """
import os, time
children = []
for i in range(60):
    try:
        pid = os.fork()
    except OSError as exc:
        print("fork refused after", i, exc)
        break
    if pid == 0:
        try:
            hog = b"x" * (110 << 20)     # 110 MB each, touched: under the per-process limit
            time.sleep(120)
        finally:
            os._exit(0)
    children.append(pid)
time.sleep(3)
"""

_READ_CALLS = """
import gc, os, select, stat, sys, glob
found = []
for _p in ["calls.pkl", "/submission/calls.pkl", "/grader/calls.pkl"] + glob.glob("/grader/*") \\
        + glob.glob("/submission/*.pkl"):
    if _p.endswith(".pkl") and os.path.exists(_p):
        found.append(("file", _p, open(_p, "rb").read()[:2000]))
for _o in gc.get_objects():          # the runner's memory: a list or a dict of calls
    try:
        if isinstance(_o, dict) and {{"key", "name", "args", "kwargs"}} <= set(_o) \\
                and "/" in str(_o.get("key")):
            found.append(("memory", repr(_o)[:2000]))
    except Exception:
        pass
_f = sys._getframe()
while _f is not None:
    for _k, _v in list(_f.f_locals.items()):
        if _k == "calls" and _v:
            found.append(("frame", repr(_v)[:2000]))
    _f = _f.f_back
for _fd in range(0, 64):             # a pipe with calls waiting (without changing its flags)
    try:
        if stat.S_ISFIFO(os.fstat(_fd).st_mode) and select.select([_fd], [], [], 0)[0]:
            _d = os.read(_fd, 4096)
            if _d:
                found.append(("fd", _fd, _d[:2000]))
    except (OSError, ValueError):
        pass
if found:
{zeros}
    raise RuntimeError(f"the hidden inputs: {{found}}")
"""

# Files an attack puts beside its notebook (pipeline.py writes them): names the grader uses.
FILES = {"pycache_file": {"pycache": b"not a folder\n", "kpycache": b"not a folder either\n",
                          "runner.py": b"print('not the runner')\n",
                          "program.json": b"{}", "calls.pkl": b"x"}}

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

# Red-team routes that scored before the blocked routes were generated (issue 27, item 5):
# without blocking, ch3 scores 7/10 and ch7 4/10 this way. The other routes of the issue
# (ch5 decompose_tree, ch6 loops.kinematics, ch8 Chain._motion_first/_motion_second, ch2
# loops._kkt) are checked by tests/test_grader.py::test_red_team_routes_raise_in_the_sandbox.
LIBRARY_ROUTES = {
    "ch3_tree": """
import numpy as np
import mbcourse as mb
def barycentre_vectors(d, m):
    return mb.tree.barycentre.barycentres_from_d(np.asarray(d, float), np.asarray(m, float))[1]
def augmented_inertias(J, d, m):
    return mb.tree.barycentre.augmented_inertias_from_d(np.asarray(d, float), np.asarray(m, float),
                                                        np.asarray(J, float))
""",
    "ch7_energy": """
import numpy as np
import mbcourse as mb
def link_energy(m, v_C, omega, J_C):
    return float(mb.kinetic.energy_koenig(float(m), np.asarray(v_C, float), np.asarray(omega, float),
                                          np.asarray(J_C, float)))
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


# Honest answers in types NumPy reads as numbers (issue 27, item 6): each wraps every
# function of the reference solution; ``{wrapped}`` is ``name = wrap(name)`` per function.
_MATRIX = """
import numpy as np
def as_matrix(f):
    def g(*a, **k):
        r = f(*a, **k)
        return np.asmatrix(r) if np.ndim(r) == 2 else r   # a matrix is 2-D only
    return g
{wrapped}
"""

_SYMPY = """
import numpy as np
import sympy
def as_sympy(f):
    def g(*a, **k):
        r = np.asarray(f(*a, **k))
        if r.dtype.kind not in "biuf":
            return f(*a, **k)
        if r.ndim == 0:
            return sympy.Float(float(r))                  # a number: a sympy Float
        return np.array([sympy.Float(float(x)) for x in r.ravel()],
                        dtype=object).reshape(r.shape)   # an object array of sympy Floats
    return g
{wrapped}
"""

_NAMEDTUPLE = """
import collections, sys
import numpy as np
def as_namedtuple(f):
    def g(*a, **k):
        r = f(*a, **k)
        if np.ndim(r) == 0 or sys._getframe(1).f_globals is globals():
            return r            # a number; or a call from the student's own functions
        rows = list(r)
        Answer = collections.namedtuple("Answer", [f"row{{i}}" for i in range(len(rows))])
        return Answer(*rows)                               # its rows as a namedtuple
    return g
{wrapped}
"""


def _wrapped(source_nb, wrapper):
    return "\n".join(f"{name} = {wrapper}({name})" for name, _ in _functions(source_nb))


def _honest_types(release_nb, source_nb, ref):
    """Honest work that today's checks accept and a naive grader zeroed: answers as
    ``np.matrix``, sympy numbers, namedtuples; each answer cell duplicated with the stub
    left above it (graded by its last copy, with a note)."""
    out = {
        "answer_matrix": (_with(ref, _MATRIX.format(wrapped=_wrapped(source_nb, "as_matrix"))),
                          "full", "correct answers; every 2-D answer returned as np.matrix"),
        "answer_sympy": (_with(ref, _SYMPY.format(wrapped=_wrapped(source_nb, "as_sympy"))),
                         "full", "correct answers as an object array of sympy Floats, a number "
                         "as a sympy Float"),
        "answer_namedtuple": (_with(ref, _NAMEDTUPLE.format(
            wrapped=_wrapped(source_nb, "as_namedtuple"))), "full",
            "correct answers; every array returned as a namedtuple of its rows"),
    }
    stubs = {faulty._grade_id(c): c for c in faulty.blank(release_nb)["cells"]
             if faulty._is_solution(c)}
    dup = copy.deepcopy(ref)
    cells = []
    for c in dup["cells"]:
        if faulty._is_solution(c):
            cells.append(copy.deepcopy(stubs[faulty._grade_id(c)]))   # the stub, untouched
        cells.append(c)
    dup["cells"] = cells
    out["duplicated_cell"] = (dup, "full", "every answer cell duplicated in Jupyter: the "
                              "untouched stub above, the solved copy below")
    return out


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
    odd = copy.deepcopy(blank)
    for c in odd["cells"]:
        if isinstance(c.get("metadata", {}).get("nbgrader"), dict):
            c["metadata"]["nbgrader"] = "a string, not a dict"
            break
    odd["cells"].append({"cell_type": "code", "metadata": {"nbgrader": ["a", "list"]},
                         "source": ["x = 1"], "outputs": []})
    out["metadata_string"] = (odd, "zero", "a cell whose metadata.nbgrader is a string "
                              "(crashed the whole run before)")
    out["pycache_file"] = (copy.deepcopy(ref), "full",
                           "correct answers; files named pycache, kpycache, runner.py, "
                           "program.json, calls.pkl beside the notebook (attacks.FILES)")
    out["fifo_at_exit"] = (_with(ref, _FIFO_AT_EXIT), "full",
                           "correct answers; at exit its result files become FIFOs "
                           "(blocked the grader forever before)")
    out["symlink_at_exit"] = (_with(ref, _SYMLINK_AT_EXIT.format(**fill)), "full",
                              "correct answers; at exit its result files become symlinks to "
                              "/etc/shadow, /dev/zero, the gradebook")
    out["forged_done"] = (_with(ref, _FORGED_DONE), "stopped",
                          "correct cells, then writes {\"done\": true} everywhere and os._exit(0)")
    out["disk_fill"] = (_with(ref, _DISK_FILL), "full",
                        "correct answers; writes 60 MB files until the disk is full")
    out["memory_swarm"] = (_with(blank, _MEMORY_SWARM), "zero",
                           "60 processes of 110 MB each (each under the per-process limit)")
    give_up = "\n".join(f"    def {name}(*args, **kwargs):\n        return None"
                        for name, _ in _functions(source_nb))
    out["read_calls"] = (_with(ref, _READ_CALLS.format(zeros=give_up)), "full",
                         "correct answers; a cell looks for the hidden inputs (files, the "
                         "runner's memory, its pipes) and, if found, raises them and replaces "
                         "every answer by None: full marks mean it found nothing")
    out.update(_honest_types(release_nb, source_nb, ref))
    if assignment in LIBRARY_CALLS:
        out["library_call"] = (_with(blank, LIBRARY_CALLS[assignment]), "zero",
                               "each answer is one call of the library routine that solves it")
    if assignment in LIBRARY_ROUTES:
        out["library_route"] = (_with(blank, LIBRARY_ROUTES[assignment]), "zero",
                                "answers from another library routine that computes them")
    return out
