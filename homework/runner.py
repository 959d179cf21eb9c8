"""Inside the sandbox: run one student's notebook code and send its answers as plain data.

    python runner.py PROGRAM_JSON RECORD_FD

``PROGRAM_JSON`` (read-only here) holds the cells to run, prepared by :mod:`grader`: the
student's solution cells and added cells, the assignment's own read-only cells, no test
cells; and what to copy into the sandbox's private tmpfs first (the student's files into
``/submission``). The runner executes the cells in an IPython shell (magics work, as in
Jupyter), each with a time limit, and writes one JSON line per cell to ``RECORD_FD``, a pipe
the grader made (ran, raised, timed out, the warnings it printed), then ``{"cells_done":
true}``. Only then does the grader send the calls the hidden and visible tests make, one at
a time on stdin (function name, arguments, a random token): the runner calls the student's
function, with a time limit, and writes the result on the pipe as plain numbers, lists and
strings, or the exception it raised, with the call's token. The calls are never in a file
or in memory while the student's cells run.

This process is the student's: anything here can be patched by their code. It decides
nothing: the grader counts the answers to the calls it sent, reads the pipe as untrusted
data, and a separate clean process with its own imports compares the answers with
references it computes itself.
"""

from __future__ import annotations

import io
import json
import math
import numbers
import os
import pickle
import shutil
import signal
import sys
import time
import traceback
import warnings

MAX_ELEMENTS = 200_000      # largest array an answer may contain
MAX_TEXT = 2_000            # longest text kept from an answer, a message or an output


class _TimeLimit(BaseException):
    """Raised by the alarm: a cell or a call ran past its time limit."""

    def __repr__(self):   # shown when reading a result as numbers (its __array__ ...) timed out
        return "it did not finish within the time limit"


def _alarm(signum, frame):
    raise _TimeLimit()


def _clip(text, limit=MAX_TEXT):
    text = str(text)
    return text if len(text) <= limit else text[:limit] + f" ... [{len(text) - limit} more characters]"


def _as_floats(value):
    """``np.asarray(value, dtype=float)``, a plain float ndarray of at most MAX_ELEMENTS
    entries, or None when NumPy refuses ``value`` (or would drop an imaginary part).

    The student's code may run here (``__array__``, ``__float__``, ``__len__`` of their
    objects): the caller runs :func:`plain` under the call's time limit, and the alarm
    (:class:`_TimeLimit`, a BaseException) is not caught here."""
    import numpy as np

    if isinstance(value, (str, bytes, bytearray, memoryview)):
        return None                        # text is not a number, even "3.5"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", np.exceptions.ComplexWarning)
            arr = np.asarray(value, dtype=float)
    except Exception:  # noqa: BLE001 - whatever the student's conversion raises: not numbers
        return None
    if type(arr) is not np.ndarray or arr.dtype != np.float64 or arr.size > MAX_ELEMENTS:
        return None
    return arr


def plain(value, depth=0):
    """A JSON-able description of ``value``: numbers, lists, arrays and text, never code.

    Builtin numbers, text, lists, tuples, dicts and plain ndarrays are described as they
    are; anything else NumPy reads as numbers (``np.matrix``, sympy numbers, an object
    array of them, ``Fraction``, ``Decimal`` ...) is described as ``np.asarray(value,
    dtype=float)``, its shape kept (a 0-d result as a number); tuple, list and dict
    subclasses (a namedtuple) as their items. What is none of these is an ``object``."""
    import numpy as np

    if depth > 8:
        return {"object": "nesting deeper than 8 levels"}
    if isinstance(value, np.bool_):
        return bool(value)
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
        arr = _as_floats(value)             # an object array of sympy Floats, of arrays ...
        if arr is not None:
            return plain(arr, depth)
        return {"ndarray_object": [plain(x, depth + 1) for x in value.ravel().tolist()[:1000]],
                "shape": list(value.shape)}
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        arr = np.asarray(value)             # np.matrix, a masked array ...: the plain array
        if type(arr) is np.ndarray:
            return plain(arr, depth)
    if isinstance(value, (list, tuple)):    # and their subclasses (a namedtuple): the items
        base = list if isinstance(value, list) else tuple
        if base.__len__(value) > MAX_ELEMENTS:
            return {"object": f"a sequence of {base.__len__(value)} items"}
        items = [plain(x, depth + 1) for x in base.__iter__(value)]
        return items if base is list else {"tuple": items}
    if isinstance(value, dict):
        items = list(dict.items(value))[:1000]
        if all(isinstance(k, str) for k, _ in items):
            return {"dict": {_clip(k, 100): plain(v, depth + 1) for k, v in items}}
    arr = _as_floats(value)                 # sympy numbers, Fraction, Decimal, __array__ ...
    if arr is not None:
        if arr.ndim:
            return plain(arr, depth)
        number = float(arr)
        if isinstance(value, numbers.Integral) and math.isfinite(number) and number.is_integer():
            return int(number) if abs(number) < 2 ** 63 else number
        return plain(number)
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


def _emit(fd, record):
    """One record, a line of JSON, on the grader's pipe."""
    data = (json.dumps(record) + "\n").encode()
    while data:
        data = data[os.write(fd, data):]


def _receive(fd):
    """The grader's next call (a length-prefixed pickle on the pipe it made), None at EOF."""
    def exactly(n):
        buf = b""
        while len(buf) < n:
            chunk = os.read(fd, n - len(buf))
            if not chunk:
                return None
            buf += chunk
        return buf

    head = exactly(8)
    body = exactly(int.from_bytes(head, "big")) if head else None
    return pickle.loads(body) if body is not None else None


def _copy_into(src, dst):
    """The files under ``src`` into the existing folder ``dst`` (timestamps kept: numba's
    caches check them), leaving ``dst``'s own mode alone (a tmpfs root)."""
    for name in os.listdir(src):
        s, d = os.path.join(src, name), os.path.join(dst, name)
        if os.path.isdir(s) and not os.path.islink(s):
            os.makedirs(d, exist_ok=True)
            _copy_into(s, d)
        elif os.path.isfile(s) and not os.path.islink(s):
            shutil.copy2(s, d)


def main(program_path, record_fd):
    library = os.environ.get("MBCOURSE_LIBRARY")   # without a sandbox: the graded copy
    if library:
        sys.path.insert(0, os.path.dirname(library))
    with open(program_path, encoding="utf-8") as f:
        program = json.load(f)
    for src, dst in program.get("copy", []):        # into the sandbox's private tmpfs
        _copy_into(src, dst)
    os.chdir(program["cwd"])
    sys.path.insert(0, program["cwd"])
    # the calls come on stdin only after the cells ran; the cells see an empty stdin
    calls_fd = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    emit = lambda record: _emit(record_fd, record)  # noqa: E731
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
        emit(record)
    emit({"cells_done": True})

    namespace = shell.user_ns
    while True:
        call = _receive(calls_fd)
        if call is None:
            break
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
        record = {"key": call["key"], "token": call["token"], "name": call["name"],
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
        emit(record)


if __name__ == "__main__":
    try:
        main(sys.argv[1], int(sys.argv[2]))
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        sys.exit(3)
