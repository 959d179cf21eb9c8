"""Homework checks with feedback that teaches, robust to any answer a notebook can produce.

A check compares a student's value with the reference computed by the library and, when
they differ, raises :class:`GradingFailure` (an ``AssertionError``, so nbgrader counts the
test as failed) with a message that says **what** is wrong: missing value, wrong type,
wrong shape (or a transposed matrix), NaN or infinity, the opposite sign, a constant
factor (degrees for radians, millimetres for metres ...), or which entries differ.

* :func:`check` — compare a value (number, array) with tolerances.
* :func:`check_call` — call a student's function safely: exceptions become feedback and a
  time limit stops a function that never returns.
* :func:`cell_metadata` and :func:`notebook_cell` — write nbgrader cell metadata, so
  assignment sources stay easy to author.

Examples
--------
>>> import numpy as np
>>> check("T", [[1, 0], [0, 1]], np.eye(2))
True
>>> check("S", np.eye(2).T * -1, np.eye(2))
Traceback (most recent call last):
...
mbcourse.grading.GradingFailure: `S` has the right magnitudes but the opposite sign: check the direction convention (+1 at i+(a), -1 at i-(a)).
"""

from __future__ import annotations

import signal
import threading

import numpy as np

__all__ = ["GradingFailure", "check", "check_call", "cell_metadata", "notebook_cell",
           "hidden_rng", "hidden_seed", "term_seed", "TERM_SEED_VARIABLE", "DEFAULT_TERM_SEED"]

#: The environment variable holding the term's seed (``make grade ... SEED=...`` sets it).
TERM_SEED_VARIABLE = "MBCOURSE_TERM_SEED"
#: The seed used when the instructor gives none (the grader says so in its log).
DEFAULT_TERM_SEED = 0


def term_seed():
    """The term's seed: the integer in ``$MBCOURSE_TERM_SEED``, else :data:`DEFAULT_TERM_SEED`.

    Hidden tests draw their inputs from it (:func:`hidden_rng`), so that inputs change from
    term to term when the instructor sets a new seed (``make grade ... SEED=20261``). The
    reference run and the scoring happen in the grader's own process and read the same value;
    the student's sandbox never sees it.

    >>> import os
    >>> os.environ.pop(TERM_SEED_VARIABLE, None) and None
    >>> term_seed() == DEFAULT_TERM_SEED
    True
    """
    import os

    text = os.environ.get(TERM_SEED_VARIABLE, "").strip()
    if not text:
        return DEFAULT_TERM_SEED
    try:
        value = int(text, 0)
    except ValueError:
        raise ValueError(f"{TERM_SEED_VARIABLE}={text!r}: the term seed must be a "
                         "non-negative integer (e.g. SEED=20261)") from None
    if value < 0:
        raise ValueError(f"{TERM_SEED_VARIABLE}={text!r}: the term seed must be non-negative")
    return value


def hidden_seed(k):
    """The seed ``[k, term_seed()]`` of the ``k``-th random draw of the hidden tests.

    Anything that accepts a NumPy seed takes it (``np.random.default_rng(hidden_seed(3))``,
    a helper's ``seed=`` argument). Different ``k`` give independent streams.

    >>> import os
    >>> os.environ[TERM_SEED_VARIABLE] = "7"
    >>> hidden_seed(3)
    [3, 7]
    >>> del os.environ[TERM_SEED_VARIABLE]
    """
    return [int(k), term_seed()]


def hidden_rng(k):
    """``np.random.default_rng(hidden_seed(k))``: the random generator of hidden test ``k``.

    Hidden tests (between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``) draw their
    inputs from it instead of a fixed seed, so a new term seed gives new inputs.

    >>> import os
    >>> os.environ[TERM_SEED_VARIABLE] = "1"
    >>> a = hidden_rng(5).normal()
    >>> os.environ[TERM_SEED_VARIABLE] = "2"
    >>> bool(a != hidden_rng(5).normal())
    True
    >>> del os.environ[TERM_SEED_VARIABLE]
    """
    return np.random.default_rng(hidden_seed(k))


class GradingFailure(AssertionError):
    """A homework check failed; the message is the feedback for the student."""


_FACTORS = [
    (180 / np.pi, "degrees instead of radians"),
    (np.pi / 180, "radians where degrees were expected"),
    (1000.0, "millimetres (or grams) instead of metres (or kilograms)"),
    (1e-3, "metres where millimetres were expected"),
    (9.81, "a missing or extra factor g = 9.81"),
    (1 / 9.81, "a missing or extra factor g = 9.81"),
    (2.0, "a factor 2 (e.g. 1/2 of a kinetic energy, or a length for a half-length)"),
    (0.5, "a factor 1/2 (e.g. 1/2 of a kinetic energy, or a half-length for a length)"),
]


def _as_array(name, value, expected):
    if value is None:
        raise GradingFailure(
            f"`{name}` is None: assign your result to `{name}` (or `return` it) before the "
            f"check; expected {_describe(expected)}."
        )
    if isinstance(value, (str, bytes)):
        raise GradingFailure(f"`{name}` is text ({value!r:.40}); expected {_describe(expected)}.")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        if type(value).__name__ == "Unreadable":    # homework/grader.py's stand-in for an object
            raise GradingFailure(f"`{name}` cannot be read as numbers (what you returned: "
                                 f"{value!r:.200}); expected {_describe(expected)}.") from None
        raise GradingFailure(
            f"`{name}` is a {type(value).__name__} that cannot be read as numbers; expected "
            f"{_describe(expected)}."
        ) from None
    return arr


def _describe(expected):
    e = np.asarray(expected)
    return "a number" if e.ndim == 0 else f"an array of shape {e.shape}"


def _close(a, b, rtol, atol):
    return np.allclose(a, b, rtol=rtol, atol=atol)


def check(name, value, expected, rtol=1e-7, atol=1e-9, hint=None):
    """Compare ``value`` with ``expected``; raise :class:`GradingFailure` with feedback.

    Parameters
    ----------
    name : str
        The variable's name in the student's notebook (used in the message).
    value : any
        What the student produced.
    expected : array_like
        The reference value.
    rtol, atol : float
        Tolerances of :func:`numpy.allclose`.
    hint : str, optional
        Appended to every failure message.

    Returns
    -------
    True
        If the values agree.

    Examples
    --------
    >>> check("angle", 57.29577951308232, 1.0)
    Traceback (most recent call last):
    ...
    mbcourse.grading.GradingFailure: `angle` is off by a factor of 57.3: degrees instead of radians?
    """
    expected = np.asarray(expected, dtype=float)
    try:
        _compare(name, value, expected, rtol, atol)
    except GradingFailure as exc:
        if hint:
            raise GradingFailure(f"{exc} Hint: {hint}") from None
        raise
    return True


def _compare(name, value, expected, rtol, atol):
    arr = _as_array(name, value, expected)
    if arr.shape != expected.shape:
        if arr.size == expected.size and arr.ndim == 2 and arr.T.shape == expected.shape:
            if _close(arr.T, expected, rtol, atol):
                raise GradingFailure(
                    f"`{name}` is the transpose of the expected matrix: rows and columns are "
                    f"swapped (expected shape {expected.shape}, got {arr.shape})."
                )
        if arr.size == expected.size and _close(arr.reshape(expected.shape), expected, rtol, atol):
            raise GradingFailure(
                f"`{name}` has the right numbers but shape {arr.shape}; expected shape "
                f"{expected.shape} (use .reshape or build it with the right dimensions)."
            )
        raise GradingFailure(f"`{name}` has shape {arr.shape}; expected shape {expected.shape}.")
    bad = ~np.isfinite(arr)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0]) if arr.ndim else ()
        what = "NaN" if np.isnan(arr[where] if where else arr) else "infinity"
        raise GradingFailure(
            f"`{name}` contains {what}{' at index ' + str(list(where)) if where else ''}: look "
            "for 0/0, a division by zero or an entry that was never set."
        )
    if _close(arr, expected, rtol, atol):
        return
    if np.any(expected != 0) and _close(arr, -expected, rtol, atol):
        raise GradingFailure(
            f"`{name}` has the right magnitudes but the opposite sign: check the direction "
            "convention (+1 at i+(a), -1 at i-(a))."
        )
    if np.any(expected != 0) and np.any(arr != 0):
        for factor, meaning in _FACTORS:
            if _close(arr, factor * expected, rtol, atol):
                raise GradingFailure(f"`{name}` is off by a factor of {factor:.3g}: {meaning}?")
    if arr.ndim == 0:
        raise GradingFailure(f"`{name}` = {float(arr):.6g}, but the expected value is "
                             f"{float(expected):.6g}.")
    wrong = ~np.isclose(arr, expected, rtol=rtol, atol=atol)
    first = tuple(int(i) for i in np.argwhere(wrong)[0])
    raise GradingFailure(
        f"`{name}` differs from the expected value in {int(wrong.sum())} of {arr.size} entries; "
        f"e.g. at index {list(first)}: got {arr[first]:.6g}, expected {expected[first]:.6g}."
    )


class _Timeout(Exception):
    pass


def check_call(name, fn, *args, timeout=10.0, **kwargs):
    """Call a student's function; turn exceptions and endless loops into feedback.

    Parameters
    ----------
    name : str
        The function's name for the message.
    fn : callable
        The student's function (anything: a missing definition shows up as None).
    timeout : float
        Seconds before the call is stopped (main thread only; elsewhere no limit).

    Returns
    -------
    The function's result.

    Examples
    --------
    >>> check_call("double", lambda x: 2 * x, 21)
    42
    >>> check_call("broken", lambda: 1 / 0)
    Traceback (most recent call last):
    ...
    mbcourse.grading.GradingFailure: calling `broken()` raised ZeroDivisionError: division by zero
    """
    if not callable(fn):
        raise GradingFailure(f"`{name}` is not a function (it is {type(fn).__name__}): define "
                             f"it with `def {name}(...):` and run its cell.")
    use_alarm = (threading.current_thread() is threading.main_thread()
                 and hasattr(signal, "SIGALRM") and timeout)

    def handler(signum, frame):
        raise _Timeout()

    if use_alarm:
        previous = signal.signal(signal.SIGALRM, handler)
        signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        return fn(*args, **kwargs)
    except _Timeout:
        raise GradingFailure(f"calling `{name}()` did not finish within {timeout:g} s: look for "
                             "a loop that never ends.") from None
    except GradingFailure:
        raise
    except Exception as exc:  # the student's code may raise anything: report it
        raise GradingFailure(f"calling `{name}()` raised {type(exc).__name__}: {exc}") from None
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def cell_metadata(grade_id, kind, points=0, locked=None):
    """nbgrader metadata of a cell.

    Parameters
    ----------
    grade_id : str
        Unique id of the cell in the assignment.
    kind : {"solution", "tests", "task", "readonly"}
        ``solution``: the student writes code here; ``tests``: an autograded test cell
        worth ``points``; ``readonly``: locked text or code.
    points : float
        Points of a test cell.

    Returns
    -------
    dict
        ``{"nbgrader": {...}}`` to merge into a cell's metadata.

    Examples
    --------
    >>> cell_metadata("build_S_tests", "tests", points=2)["nbgrader"]["points"]
    2
    """
    flags = {"solution": (True, False), "tests": (False, True), "readonly": (False, False),
             "task": (False, False)}
    if kind not in flags:
        raise ValueError(f"kind must be one of {sorted(flags)}, got {kind!r}")
    solution, grade = flags[kind]
    meta = {"grade_id": grade_id, "solution": solution, "grade": grade,
            "locked": (kind != "solution") if locked is None else locked,
            "schema_version": 3}
    if grade:
        meta["points"] = points
    return {"nbgrader": meta}


def notebook_cell(source, kind="readonly", grade_id=None, points=0, cell_type=None):
    """A notebook cell (dict, nbformat 4), with nbgrader metadata if ``grade_id`` is given.

    ``cell_type`` is ``"code"`` (default) or ``"markdown"``.

    Examples
    --------
    >>> notebook_cell("x = 1", "solution", grade_id="x")["metadata"]["nbgrader"]["solution"]
    True
    """
    cell_type = cell_type or "code"
    cell = {"cell_type": cell_type, "metadata": {}, "source": source}
    if cell_type == "code":
        cell.update({"execution_count": None, "outputs": []})
    if grade_id is not None:
        cell["metadata"].update(cell_metadata(grade_id, kind, points))
    return cell
