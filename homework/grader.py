"""The sandboxed grader: the student's kernel produces answers, a clean process scores them.

    python homework/grader.py COURSE ASSIGNMENT [--students a,b] [--jobs 2]

``COURSE`` is an nbgrader course directory (``source/<assignment>/<assignment>.ipynb`` and
``submitted/<student>/<assignment>/<assignment>.ipynb``). For each student the grader writes
``feedback/<student>/<assignment>/<assignment>.html`` and a row of
``grades-<assignment>.csv`` (``status`` says ``graded``, ``flagged: why`` or
``not graded: why``, so a failed run is never a silent 0).

How a submission is graded (threat model and limits: README, *For instructors*):

1. **Reference run** (once per assignment, this process): the assignment's source notebook
   runs with its solutions; every call a test cell makes to a student function through
   ``check_call`` is recorded (function name, arguments). The tests must pass.
2. **Answers** (the student's process, in a sandbox): a copy of the student's folder and
   nothing else of the course (no sources, no gradebook, no other student) is mounted in a
   bubblewrap sandbox with no network, as an unprivileged user, with limits on memory, CPU
   time, file size and processes, and a wall-clock limit. The student's solution cells (and
   cells they added) run there, with the assignment's own read-only cells restored from the
   source; test cells are not run. Then the recorded calls are made and each result is
   written as plain numbers (:mod:`runner`). The assignment can make library routines
   unavailable there (``metadata.mbcourse.implement``): their bodies are replaced in the
   sandbox's copy of ``mbcourse`` by an error that says the task asks the student to build
   them.
3. **Scoring** (this process, which never runs student code): the test cells of the
   *source* run again with ``check_call`` returning the student's recorded answers, and
   ``check`` comparing them with references computed here. A test cell scores its points
   if it passes. Patching NumPy, ``mbcourse.grading`` or IPython in the student's kernel,
   deleting or editing test cells, or reading files changes nothing here.

Warnings and output on stderr are reported in the feedback and never cost points.
"""

from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import html
import json
import os
import pathlib
import pickle
import pwd
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import redirect_stdout
from io import StringIO
from concurrent.futures import ThreadPoolExecutor

HERE = pathlib.Path(__file__).resolve().parent
RUNNER = HERE / "runner.py"

#: Limits of one student's run.
CELL_SECONDS = 20          # each cell (the runner's alarm)
CALL_SECONDS = 10          # each call of a student function
WALL_SECONDS = 240         # the whole run, enforced from outside (kills the sandbox)
CPU_SECONDS = 300          # RLIMIT_CPU of the student's process
MEMORY_BYTES = 4 << 30     # RLIMIT_AS
FILE_BYTES = 64 << 20      # RLIMIT_FSIZE: largest file the student may write
PROCESSES = 64             # RLIMIT_NPROC (of the sandbox's own uid)
READ_BYTES = 16 << 20      # most the grader reads of the student's answers

SANDBOX_UID = 61000          # first uid of the sandboxes (no passwd entry needed)
SCORING = threading.Lock()


class GraderError(RuntimeError):
    """The assignment (not the student) is broken: the reference run failed."""


# --- notebooks -----------------------------------------------------------------------------

def _text(source):
    return "".join(source) if isinstance(source, list) else str(source)


def _meta(cell):
    meta = cell.get("metadata", {})
    return meta.get("nbgrader", {}) if isinstance(meta, dict) else {}


def _role(cell):
    """``readonly``, ``solution``, ``test`` or ``markdown`` of a source cell."""
    m = _meta(cell)
    if cell.get("cell_type") != "code":
        return "markdown"
    if m.get("grade"):
        return "test"
    if m.get("solution"):
        return "solution"
    return "readonly"


def _strip_magics(code):
    return "\n".join("pass" if line.lstrip().startswith(("%", "!")) else line
                     for line in code.splitlines())


def implemented_routines(source_nb):
    """The library routines the assignment asks students to build (unavailable to them)."""
    return list(source_nb.get("metadata", {}).get("mbcourse", {}).get("implement", []))


# --- 1. the reference run -----------------------------------------------------------------

class _Patched:
    """``mbcourse.grading.check_call`` (and optionally ``check``) replaced while test code
    runs in this process: test cells import them with ``from mbcourse.grading import``."""

    def __init__(self, check_call, check=None):
        import mbcourse.grading as g

        self.g, self.new = g, {"check_call": check_call}
        if check is not None:
            self.new["check"] = check

    def __enter__(self):
        self.old = {k: getattr(self.g, k) for k in self.new}
        for k, v in self.new.items():
            setattr(self.g, k, v)

    def __exit__(self, *exc):
        for k, v in self.old.items():
            setattr(self.g, k, v)


def _digest(args, kwargs):
    return hashlib.sha256(pickle.dumps((args, kwargs), protocol=4)).hexdigest()


def reference_run(source_nb, name="assignment"):
    """Run the source notebook with its solutions; record the calls its tests make.

    Returns ``(calls, tests)``: ``calls`` a list of ``{"key", "name", "args", "kwargs",
    "digest"}`` (``key`` = ``"<test grade_id>/<k>"``), ``tests`` a list of
    ``(grade_id, points)`` in notebook order.
    """
    import mbcourse.grading as g

    real_check_call = g.check_call
    ns = {"__name__": "__main__"}
    calls, tests = [], []
    for cell in source_nb["cells"]:
        role = _role(cell)
        if role == "markdown":
            continue
        code = _strip_magics(_text(cell["source"]))
        gid = _meta(cell).get("grade_id", "?")
        if role != "test":
            with redirect_stdout(StringIO()):
                exec(compile(code, f"<{name}:{gid}>", "exec"), ns)  # noqa: S102 - the course's
            continue
        counter = [0]

        def recording(fname, fn, *args, timeout=10.0, _gid=gid, **kwargs):
            key = f"{_gid}/{counter[0]}"
            counter[0] += 1
            try:
                blob = pickle.dumps((args, kwargs), protocol=4)
            except Exception as exc:
                raise GraderError(f"{name}/{_gid}: the arguments of {fname}() cannot be "
                                  f"sent to the sandbox ({exc})") from None
            a, k = pickle.loads(blob)
            calls.append({"key": key, "name": fname, "args": a, "kwargs": k,
                          "digest": hashlib.sha256(blob).hexdigest()})
            return real_check_call(fname, fn, *args, timeout=timeout, **kwargs)

        with _Patched(recording), redirect_stdout(StringIO()):
            try:
                exec(compile(code, f"<{name}:{gid}>", "exec"), ns)  # noqa: S102
            except Exception as exc:
                raise GraderError(f"{name}: the source's test cell {gid!r} fails with its own "
                                  f"solution: {type(exc).__name__}: {exc}") from None
        tests.append((gid, float(_meta(cell).get("points", 0))))
    return calls, tests


# --- 2. the student's program and the sandbox ---------------------------------------------

_HIDDEN = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS[ \t]*\n?", re.S | re.M)
_KEYS = ("grade", "grade_id", "points", "solution")


def _released(text):
    """A source cell's text as the release shows it (hidden tests removed), normalized."""
    lines = [l.rstrip() for l in _HIDDEN.sub("", text).splitlines()]
    return "\n".join(lines).strip()


def student_program(source_nb, student_nb):
    """The cells to run for a student, and what was restored.

    Source order; each solution cell is the student's (same ``grade_id``), read-only cells
    are the source's, test cells are left out; cells the student added (no nbgrader id) run
    after the source cell they follow. Returns ``(cells, notes)``.
    """
    source = {(_meta(c).get("grade_id")): c for c in source_nb["cells"] if _meta(c).get("grade_id")}
    mine, added, last = {}, {}, None
    for cell in student_nb.get("cells", []):
        if not isinstance(cell, dict):
            continue
        gid = _meta(cell).get("grade_id")
        if gid in source:
            if gid not in mine:
                mine[gid] = cell
            last = gid
        elif cell.get("cell_type") == "code":
            added.setdefault(last, []).append(cell)
    notes, cells = [], []

    def add(cid, cell):
        cells.append({"id": cid, "source": _text(cell.get("source", ""))})

    for c in added.get(None, []):
        add("added cell", c)
    for cell in source_nb["cells"]:
        gid = _meta(cell).get("grade_id")
        role = _role(cell)
        theirs = mine.get(gid)
        if role in ("readonly", "test", "markdown") and gid is not None:
            if theirs is None:
                notes.append(f"the {'test ' if role == 'test' else ''}cell `{gid}` was missing "
                             "from your notebook; the assignment's own cell was used")
            elif (_released(_text(theirs.get("source", ""))) != _released(_text(cell["source"]))
                  or any(_meta(theirs).get(k) != _meta(cell).get(k) for k in _KEYS)):
                notes.append(f"the {'test ' if role == 'test' else 'read-only '}cell `{gid}` "
                             "was changed in your notebook; the assignment's own cell was used")
        if role == "readonly":
            add(gid, cell)
        elif role == "solution":
            if theirs is None:
                notes.append(f"your answer cell `{gid}` is missing from the notebook")
            else:
                add(gid, theirs)
        for c in added.get(gid, []) if gid is not None else []:
            add(f"added cell after {gid}", c)
    return cells, notes


IMPLEMENT_MESSAGE = ("this homework asks you to build this yourself: `{name}` is not available "
                     "while your notebook is graded (the assignment lists what is not)")


def _stub_source(path, names):
    """Rewrite a module's source with the bodies of ``names`` (``{"f" or "Class.f": shown
    name}``) replaced by ``raise RuntimeError(IMPLEMENT_MESSAGE)``. Returns the names found."""
    tree = ast.parse(path.read_text())
    found = []

    def visit(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = prefix + node.name
                if qual in names:
                    text = IMPLEMENT_MESSAGE.format(name=names[qual])
                    node.body = ast.parse(
                        f"raise RuntimeError({text!r})").body
                    node.decorator_list = [d for d in node.decorator_list
                                           if isinstance(d, ast.Name) and d.id in
                                           ("staticmethod", "classmethod", "property")]
                    found.append(qual)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, prefix + node.name + ".")

    visit(tree.body, "")
    path.write_text(ast.unparse(tree) + "\n")
    return found


#: The package's folders whose ``__pycache__`` holds numba's compiled kernels: a writable copy
#: of each is bound into the sandbox, so that the kernels load instead of compiling.
CACHES = (("", "pycache"), ("kernels", "kpycache"))


def sandbox_library(routines, dest):
    """A copy of the installed ``mbcourse`` with ``routines`` (``"mbcourse.graph.path_matrix"``,
    ``"mbcourse.tree.barycentre.d_vectors"``, ``"mbcourse.graph.Graph.T"``) made unavailable.
    Returns the copy's path; numba's cache files are copied with their timestamps so that the
    compiled kernels load instead of compiling."""
    import importlib.util

    spec = importlib.util.find_spec("mbcourse")
    package = pathlib.Path(list(spec.submodule_search_locations)[0])
    shutil.copytree(package, dest, copy_function=shutil.copy2)
    for sub, _ in CACHES:          # numba's caches (PYTHONDONTWRITEBYTECODE may leave none)
        (dest / sub / "__pycache__").mkdir(parents=True, exist_ok=True)
    by_file = {}
    for r in routines:
        parts = r.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            rel = parts[1:cut]
            candidates = ([dest.joinpath(*rel).with_suffix(".py")] if rel else []) + \
                [dest.joinpath(*rel, "__init__.py")]
            hit = next((c for c in candidates if c.exists()), None)
            if hit is not None:
                by_file.setdefault(hit, {})[".".join(parts[cut:])] = "mb." + ".".join(parts[1:])
                break
        else:
            raise GraderError(f"implement: cannot find the module of {r!r}")
    for path, names in by_file.items():
        found = _stub_source(path, names)
        missing = set(names) - set(found)
        if missing:
            raise GraderError(f"implement: {sorted(missing)} not found in {path.name}")
        # the original bytecode must not stay readable next to the rewritten source
        for pyc in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
            pyc.unlink()
    return package, dest


def _ancestors(path):
    out, p = [], pathlib.Path(path).parent
    while str(p) != "/":
        out.append(str(p))
        p = p.parent
    return out[::-1]


_UID_POOL = None
_UID_LOCK = threading.Lock()


def _uid_pool():
    """Unprivileged uids for the sandboxes (as root), one per run at a time in this process,
    so that the process limit of one student's run never starves another's; None when not
    root (the sandbox then runs as the grading user)."""
    global _UID_POOL
    if os.geteuid() != 0:
        return None
    with _UID_LOCK:
        if _UID_POOL is None:
            import queue

            taken = {p.pw_uid for p in pwd.getpwall()}
            _UID_POOL = queue.Queue()
            for u in [u for u in range(SANDBOX_UID, SANDBOX_UID + 1000) if u not in taken][:32]:
                _UID_POOL.put((u, u))
    return _UID_POOL


def sandbox_mode():
    """``"bwrap"`` when bubblewrap works here, else ``"none"`` (see README)."""
    exe = shutil.which("bwrap")
    if exe is None:
        return "none"
    probe = subprocess.run([exe, "--unshare-net", "--unshare-pid", "--ro-bind", "/", "/",
                            "--die-with-parent", "true"], capture_output=True)
    return "bwrap" if probe.returncode == 0 else "none"


def _limits(uid_gid):
    def apply():
        os.setsid()
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
        resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_BYTES, FILE_BYTES))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if uid_gid is None:  # not root: the limit counts all of this user's processes
            n = len([p for p in os.listdir("/proc") if p.isdigit()]) + PROCESSES
        else:
            n = PROCESSES
        resource.setrlimit(resource.RLIMIT_NPROC, (n, n))
    return apply


def _command(mode, work, library, package, uid_gid):
    python = pathlib.Path(sys.executable)
    env = {"HOME": "/tmp", "PATH": f"{python.parent}:/usr/bin:/bin", "MPLBACKEND": "Agg",
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.UTF-8", "NUMBA_NUM_THREADS": "1",
           "PYTHONHASHSEED": "0"}
    if mode == "none":
        envs = dict(env, MBCOURSE_LIBRARY=str(library))
        return [str(python), "-I", str(work / "runner.py"), str(work)], envs
    venv = pathlib.Path(sys.prefix)
    base = pathlib.Path(sys.base_prefix)
    args = [shutil.which("bwrap") or "bwrap", "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-net",
            "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--tmpfs", "/tmp",
            "--proc", "/proc", "--dev", "/dev", "--clearenv"]
    for k, v in env.items():
        args += ["--setenv", k, v]
    for d in ("/usr", "/bin", "/lib", "/lib64", "/lib32", "/etc/alternatives"):
        if os.path.exists(d):
            args += ["--ro-bind", d, d]
    made = set()
    for target in (base, venv, package):
        for a in _ancestors(target):
            if a not in made and a not in ("/usr", "/tmp"):
                args += ["--perms", "0755", "--dir", a]
                made.add(a)
    args += ["--ro-bind", str(base), str(base), "--ro-bind", str(venv), str(venv),
             "--ro-bind", str(library), str(package),
             *[a for sub, cache in CACHES
               for a in ("--bind", str(work / cache), str(package / sub / "__pycache__"))],
             "--bind", str(work), "/submission", "--chdir", "/submission"]
    inner = [str(python), "-I", "/submission/runner.py", "/submission"]
    if uid_gid is not None:
        inner = ["setpriv", f"--reuid={uid_gid[0]}", f"--regid={uid_gid[1]}", "--clear-groups",
                 "--inh-caps=-all", "--bounding-set=-all"] + inner
    return args + ["--"] + inner, None


def run_student(folder, program, calls, library, package, mode, uid_gid):
    """Run one student's program in the sandbox; returns (answers, events, report)."""
    work = pathlib.Path(tempfile.mkdtemp(prefix="mbgrade-"))
    try:
        for item in folder.iterdir():            # a copy of the student's own folder only
            if item.is_file() and not item.is_symlink() and item.stat().st_size < FILE_BYTES:
                shutil.copy(item, work / item.name)
        shutil.copy(RUNNER, work / "runner.py")
        (work / "program.json").write_text(json.dumps(program))
        with open(work / "calls.pkl", "wb") as f:
            pickle.dump([{k: c[k] for k in ("key", "name", "args", "kwargs")} for c in calls], f)
        if mode == "bwrap":
            for sub, cache in CACHES:
                shutil.copytree(library / sub / "__pycache__", work / cache,
                                copy_function=shutil.copy2)
        if uid_gid is not None:
            for root, dirs, files in os.walk(work):
                for n in dirs + files:
                    os.chown(os.path.join(root, n), *uid_gid)
            os.chown(work, *uid_gid)
        cmd, env = _command(mode, work, library, package, uid_gid)
        start = time.perf_counter()
        with open(work / "stdout.txt", "wb") as out, open(work / "stderr.txt", "wb") as err:
            proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                    env=env if env is not None else {}, cwd=work,
                                    preexec_fn=_limits(uid_gid))
            try:
                code = proc.wait(WALL_SECONDS)
                stopped = None
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                code, stopped = proc.returncode, f"stopped after {WALL_SECONDS} s (time limit)"
        seconds = time.perf_counter() - start
        answers = _read_jsonl(work / "answers.jsonl")
        events = _read_jsonl(work / "events.jsonl")
        report = {"exit": code, "seconds": round(seconds, 2), "stopped": stopped,
                  "stderr": _tail(work / "stderr.txt"), "finished": any(e.get("done") for e in events)}
        if stopped is None and code not in (0, None):
            report["stopped"] = _why(code, report["stderr"])
        return answers, events, report
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _why(code, stderr):
    if code < 0:
        sig = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else -code
        extra = {"SIGXCPU": " (CPU time limit)", "SIGKILL": " (killed: memory or time limit)",
                 "SIGXFSZ": " (file size limit)"}.get(sig, "")
        return f"the kernel was killed by {sig}{extra}"
    if "MemoryError" in stderr:
        return "the kernel ran out of memory"
    return f"the kernel exited early with status {code}"


def _tail(path, limit=4000):
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - limit))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _read_jsonl(path):
    """Untrusted lines of JSON: at most READ_BYTES, each a dict, anything else skipped."""
    out = []
    try:
        with open(path, "rb") as f:
            data = f.read(READ_BYTES)
    except OSError:
        return out
    for line in data.splitlines():
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out


# --- 3. scoring in this (clean) process ---------------------------------------------------

class Unreadable:
    """A student's value that is not numbers (an object, a function, ...)."""

    def __init__(self, text):
        self.text = str(text)[:300]

    def __repr__(self):
        return self.text


def decode(value):
    """A runner's plain description back to Python/NumPy values (never code)."""
    import numpy as np

    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "ndarray" in value and "shape" in value:
        flat = [decode(v) for v in value["ndarray"]]
        try:
            arr = np.array(flat, dtype=float).reshape(value["shape"])
        except (ValueError, TypeError):
            return Unreadable("an array that could not be rebuilt")
        kind = value.get("kind")
        if kind in ("i", "u", "b") and np.all(np.isfinite(arr)):
            arr = arr.astype(int if kind != "b" else bool)
        return arr
    if "float" in value:
        return {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}.get(
            value["float"], float("nan"))
    if "complex" in value:
        return complex(*value["complex"][:2])
    if "tuple" in value:
        return tuple(decode(v) for v in value["tuple"])
    if "dict" in value and isinstance(value["dict"], dict):
        return {k: decode(v) for k, v in value["dict"].items()}
    if "ndarray_object" in value:
        return Unreadable("an array of Python objects")
    return Unreadable(value.get("object", "an unreadable value"))


def score(source_nb, calls, tests, answers, name="assignment"):
    """Run the source's test cells on the recorded answers; returns per-test results."""
    import mbcourse.grading as g

    by_key = {}
    for rec in answers:
        key = rec.get("key")
        if isinstance(key, str) and key not in by_key:
            by_key[key] = rec
    digests = {c["key"]: (c["name"], c["digest"]) for c in calls}
    ns = {"__name__": "__main__"}
    results = []
    for cell in source_nb["cells"]:
        role = _role(cell)
        if role == "markdown" or role == "solution":
            continue
        code = _strip_magics(_text(cell["source"]))
        gid = _meta(cell).get("grade_id", "?")
        if role == "readonly":
            with redirect_stdout(StringIO()):
                exec(compile(code, f"<{name}:{gid}>", "exec"), ns)  # noqa: S102 - the course's
            continue
        counter = [0]
        flagged = []

        def replay(fname, fn, *args, timeout=10.0, _gid=gid, **kwargs):
            key = f"{_gid}/{counter[0]}"
            counter[0] += 1
            want = digests.get(key)
            if want is None or want[0] != fname or want[1] != _digest(args, kwargs):
                flagged.append(f"{key}: the test's call differs from the recorded one")
                raise g.GradingFailure("this test could not be matched with your run "
                                       "(flagged for review)")
            rec = by_key.get(key)
            if rec is None:
                raise g.GradingFailure(f"`{fname}()` was never called: your notebook stopped "
                                       "before this test (see the notes above)")
            if "error" in rec:
                err, msg = str(rec.get("error"))[:80], str(rec.get("message", ""))[:1000]
                if err == "NameError":
                    raise g.GradingFailure(f"`{fname}` is not defined: define it with "
                                           f"`def {fname}(...):` in its answer cell.")
                if err == "TimeoutError":
                    raise g.GradingFailure(f"calling `{fname}()` did not finish within "
                                           f"{CALL_SECONDS} s: look for a loop that never ends.")
                raise g.GradingFailure(f"calling `{fname}()` raised {err}: {msg}")
            return decode(rec.get("value"))

        namespace = dict(ns)
        with _Patched(replay, g.check), redirect_stdout(StringIO()):
            try:
                exec(compile(code, f"<{name}:{gid}>", "exec"), namespace)  # noqa: S102
                ok, message = True, ""
            except g.GradingFailure as exc:
                ok, message = False, str(exc)
            except Exception as exc:  # the test code met a value it could not handle
                ok, message = False, f"your answer could not be checked ({type(exc).__name__}: {exc})"
        points = float(_meta(cell).get("points", 0))
        results.append({"test": gid, "points": points, "score": points if ok else 0.0,
                        "message": message, "flagged": flagged})
    return results


# --- the whole assignment -----------------------------------------------------------------

def grade_assignment(course, assignment, students=None, jobs=2, mode=None, log=print):
    """Grade every submission of one assignment; returns the rows written to the CSV."""
    course = pathlib.Path(course).resolve()
    source_nb = json.loads((course / "source" / assignment / f"{assignment}.ipynb").read_text())
    with SCORING:     # the reference run patches mbcourse.grading too
        calls, tests = reference_run(source_nb, assignment)
    max_score = sum(p for _, p in tests)
    mode = mode or sandbox_mode()
    jobs = max(1, jobs)
    free = _uid_pool() if mode == "bwrap" else None
    if mode == "none":
        log("warning: bubblewrap is not available: student code runs in a separate process with "
            "resource limits but can read what this user can read (see README)")
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="mbgrade-lib-"))
    try:
        package, library = sandbox_library(implemented_routines(source_nb), scratch / "mbcourse")
        if free is not None:
            os.chmod(scratch, 0o755)
        submitted = course / "submitted"
        names = sorted(p.name for p in submitted.iterdir() if (p / assignment).is_dir()) \
            if students is None else list(students)

        def one(student):
            folder = submitted / student / assignment
            nb_path = folder / f"{assignment}.ipynb"
            row = {"student": student, "assignment": assignment, "score": 0.0,
                   "max_score": max_score, "status": "graded", "seconds": 0.0}
            try:
                student_nb = json.loads(nb_path.read_text(errors="replace")[:READ_BYTES])
                if not isinstance(student_nb, dict) or not isinstance(student_nb.get("cells"), list):
                    raise ValueError("not a notebook")
            except (OSError, ValueError, RecursionError) as exc:
                row["status"] = f"not graded: the notebook could not be read ({exc})"
                return row, [], [], {}, []
            cells, notes = student_program(source_nb, student_nb)
            program = {"cells": cells, "cell_seconds": CELL_SECONDS, "call_seconds": CALL_SECONDS}
            uid_gid = free.get() if free is not None else None
            try:
                answers, events, report = run_student(folder, program, calls, library, package,
                                                      mode, uid_gid)
            finally:
                if uid_gid is not None:
                    free.put(uid_gid)
            with SCORING:   # scoring patches mbcourse.grading: one at a time
                results = score(source_nb, calls, tests, answers, assignment)
            row["score"] = sum(r["score"] for r in results)
            row["seconds"] = report["seconds"]
            flags = [f for r in results for f in r["flagged"]]
            if flags:
                row["status"] = "flagged: " + "; ".join(flags)[:300]
            elif not report["finished"]:
                ran = sum(1 for e in events if "cell" in e)
                where = (f"in cell `{cells[ran]['id']}`" if ran < len(cells)
                         else "while your functions were called")
                why = report["stopped"] or ("the kernel ended " + where +
                                            " (os._exit, exit(), a crash or a resource limit)")
                report["stopped"] = why
                row["status"] = f"not graded: {why}"
            if mode == "none" and row["status"] == "graded":
                row["status"] = "graded (not sandboxed)"
            return row, results, events, report, notes

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            outcomes = list(pool.map(one, names))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    rows = []
    for row, results, events, report, notes in outcomes:
        rows.append(row)
        page = course / "feedback" / row["student"] / assignment / f"{assignment}.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(feedback_html(assignment, row, results, events, report, notes))
        log(f"graded {assignment:14s} {row['student']:16s} {row['score']:5g}/{max_score:g}  "
            f"{row['seconds']:5.1f} s  {row['status']}")
    with open(course / f"grades-{assignment}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["student", "assignment", "score", "max_score",
                                          "status", "seconds"])
        w.writeheader()
        w.writerows(rows)
    return rows


def feedback_html(assignment, row, results, events, report, notes):
    e = html.escape
    out = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{e(assignment)}</title>",
           "<style>body{font-family:sans-serif;max-width:50em;margin:2em auto}"
           ".ok{color:#1a7f37}.bad{color:#b42318}pre{background:#f6f8fa;padding:.5em;"
           "white-space:pre-wrap}</style></head><body>",
           f"<h1>{e(assignment)}: {row['score']:g} / {row['max_score']:g}</h1>",
           f"<p>Status: {e(row['status'])}</p>"]
    if report.get("stopped"):
        out.append(f"<p class='bad'>Your notebook did not run to the end: "
                   f"{e(report['stopped'])}. Tests after that point could not be graded.</p>")
    out.append("<h2>Tests</h2><ul>")
    for r in results:
        cls, mark = ("ok", "passed") if r["score"] == r["points"] else ("bad", "failed")
        msg = f"<br>{e(r['message'])}" if r["message"] else ""
        out.append(f"<li class='{cls}'><b>{e(r['test'])}</b> ({r['score']:g} / "
                   f"{r['points']:g}): {mark}{msg}</li>")
    out.append("</ul>")
    if notes:
        out.append("<h2>Notes</h2><ul>" + "".join(f"<li>{e(n)}</li>" for n in notes) + "</ul>")
    cell_notes = []
    for ev in events:
        if "cell" not in ev:
            continue
        bits = []
        if ev.get("error"):
            bits.append(f"raised {ev['error']}: {ev.get('message', '')}")
        for w in ev.get("warnings", [])[:5]:
            bits.append(f"warning (no points lost): {w}")
        if ev.get("stderr"):
            bits.append(f"wrote to stderr (no points lost): {ev['stderr'][:500]}")
        if bits:
            cell_notes.append(f"<li>cell <code>{e(str(ev['cell']))}</code>: "
                              + "<br>".join(e(str(b)) for b in bits) + "</li>")
    if cell_notes:
        out.append("<h2>Your cells</h2><ul>" + "".join(cell_notes) + "</ul>")
    out.append("</body></html>")
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("course", help="nbgrader course directory")
    p.add_argument("assignment")
    p.add_argument("--students", help="comma-separated student ids (default: all)")
    p.add_argument("--jobs", type=int, default=2, help="submissions graded at once")
    p.add_argument("--mode", choices=["bwrap", "none"], default=None,
                   help="force the sandbox mode (default: bwrap when it works)")
    a = p.parse_args(argv)
    students = a.students.split(",") if a.students else None
    try:
        grade_assignment(a.course, a.assignment, students, a.jobs, a.mode)
    except GraderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
