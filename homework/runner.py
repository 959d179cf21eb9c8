"""Inside the sandbox: run one student's notebook code and write its answers as plain data.

    python runner.py WORKDIR

``WORKDIR`` holds ``program.json`` (the cells to run, prepared by :mod:`grader`: the
student's solution cells and added cells, the assignment's own read-only cells, no test
cells) and ``calls.pkl`` (the calls the hidden and visible tests make: function name,
arguments). The runner executes the cells in an IPython shell (magics work, as in Jupyter),
each with a time limit, then calls the student's functions with those arguments, each with
a time limit, and appends one JSON line per call to ``answers.jsonl``: the result as plain
numbers, lists and strings, or the exception it raised. ``events.jsonl`` records what
happened to each cell (ran, raised, timed out) and the warnings it printed.

This process is the student's: anything here can be patched by their code. It decides
nothing. The grader reads these files as untrusted data, and a separate clean process with
its own imports compares the answers with references it computes itself.
"""

from __future__ import annotations

import io
import json
import math
import os
import pickle
import signal
import sys
import time
import traceback
import warnings

MAX_ELEMENTS = 200_000      # largest array an answer may contain
MAX_TEXT = 2_000            # longest text kept from an answer, a message or an output


class _TimeLimit(BaseException):
    """Raised by the alarm: a cell or a call ran past its time limit."""


def _alarm(signum, frame):
    raise _TimeLimit()


def _clip(text, limit=MAX_TEXT):
    text = str(text)
    return text if len(text) <= limit else text[:limit] + f" ... [{len(text) - limit} more characters]"


def plain(value, depth=0):
    """A JSON-able description of ``value``: numbers, lists, arrays and text, never code."""
    import numpy as np

    if depth > 8:
        return {"object": "nesting deeper than 8 levels"}
    if value is None or isinstance(value, (bool, str)):
        return _clip(value) if isinstance(value, str) else value
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        v = int(value)
        return v if abs(v) < 2 ** 63 else float(v)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else {"float": repr(v)}
    if isinstance(value, (complex, np.complexfloating)):
        return {"complex": [float(value.real), float(value.imag)]}
    if isinstance(value, np.ndarray) and type(value) is np.ndarray:
        if value.size > MAX_ELEMENTS:
            return {"object": f"an array of {value.size} elements (more than {MAX_ELEMENTS})"}
        if value.dtype.kind in "biuf":
            flat = [plain(x) for x in value.astype(float).ravel().tolist()]
            return {"ndarray": flat, "shape": list(value.shape), "kind": value.dtype.kind}
        return {"ndarray_object": [plain(x, depth + 1) for x in value.ravel().tolist()[:1000]],
                "shape": list(value.shape)}
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        if len(value) > MAX_ELEMENTS:
            return {"object": f"a sequence of {len(value)} items"}
        items = [plain(x, depth + 1) for x in value]
        return items if isinstance(value, list) else {"tuple": items}
    if type(value) is dict and all(isinstance(k, str) for k in value):
        return {"dict": {_clip(k, 100): plain(v, depth + 1) for k, v in list(value.items())[:1000]}}
    try:
        shown = repr(value)
    except BaseException:  # noqa: BLE001 - a hostile __repr__
        shown = "?"
    return {"object": _clip(f"{type(value).__name__}: {shown}", 300)}


def _append(path, record):
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()
        os.fsync(f.fileno())


def _limited(fn, seconds):
    """Run ``fn()`` with an alarm after ``seconds``; returns (ok, value or exception)."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return True, fn()
    except _TimeLimit as exc:
        return False, exc
    except BaseException as exc:  # noqa: BLE001 - the student's exception, reported
        return False, exc
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _describe(exc, seconds):
    if isinstance(exc, _TimeLimit):
        return {"error": "TimeoutError", "message": f"did not finish within {seconds:g} s"}
    if isinstance(exc, SystemExit):
        return {"error": "SystemExit", "message": "called exit()"}
    return {"error": type(exc).__name__, "message": _clip(exc)}


def main(workdir):
    os.chdir(workdir)
    library = os.environ.get("MBCOURSE_LIBRARY")   # without a sandbox: the graded copy
    if library:
        sys.path.insert(0, os.path.dirname(library))
    program = json.load(open("program.json", encoding="utf-8"))
    with open("calls.pkl", "rb") as f:
        calls = pickle.load(f)
    os.remove("calls.pkl")
    events, answers = os.path.abspath("events.jsonl"), os.path.abspath("answers.jsonl")
    cell_seconds = float(program["cell_seconds"])
    call_seconds = float(program["call_seconds"])

    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.showtraceback = lambda *a, **k: None      # errors are reported as events instead
    shell.showsyntaxerror = lambda *a, **k: None
    real_out, real_err = sys.stdout, sys.stderr
    for cell in program["cells"]:
        out, err = io.StringIO(), io.StringIO()
        sys.stdout, sys.stderr = out, err
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ok, result = _limited(lambda: shell.run_cell(cell["source"], store_history=False),
                                  cell_seconds)
        sys.stdout, sys.stderr = real_out, real_err
        record = {"cell": cell["id"], "seconds": round(time.perf_counter() - start, 3),
                  "stdout": _clip(out.getvalue()), "stderr": _clip(err.getvalue()),
                  "warnings": [_clip(f"{w.category.__name__}: {w.message}", 300)
                               for w in caught[:20]]}
        if not ok:
            record.update(_describe(result, cell_seconds))
        elif result.error_in_exec is not None or result.error_before_exec is not None:
            exc = result.error_in_exec or result.error_before_exec
            record.update(_describe(exc, cell_seconds))
        _append(events, record)

    namespace = shell.user_ns
    for call in calls:
        fn = namespace.get(call["name"])
        out, err = io.StringIO(), io.StringIO()
        sys.stdout, sys.stderr = out, err
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if not callable(fn):
                ok, result = False, None
            else:
                ok, result = _limited(lambda: fn(*call["args"], **call["kwargs"]), call_seconds)
        sys.stdout, sys.stderr = real_out, real_err
        record = {"key": call["key"], "name": call["name"],
                  "stderr": _clip(err.getvalue(), 500),
                  "warnings": [_clip(f"{w.category.__name__}: {w.message}", 300)
                               for w in caught[:5]]}
        if not callable(fn):
            record.update({"error": "NameError",
                           "message": f"no function `{call['name']}` is defined"})
        elif ok:
            ok, value = _limited(lambda: plain(result), call_seconds)
            if ok:
                record["value"] = value
            else:
                record.update({"error": "ValueError", "message": _clip(
                    f"the result could not be read as numbers: {value!r}")})
        else:
            record.update(_describe(result, call_seconds))
        _append(answers, record)
    _append(events, {"done": True})


if __name__ == "__main__":
    try:
        main(sys.argv[1])
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        sys.exit(3)
