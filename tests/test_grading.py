"""Homework checks: every kind of wrong answer gets its own feedback, nothing crashes."""

import time

import numpy as np
import pytest

from mbcourse.grading import GradingFailure, cell_metadata, check, check_call, notebook_cell

S = np.array([[1, 0], [-1, 1], [0, -1]])


@pytest.mark.parametrize("value, message", [
    (None, "is None: assign your result"),
    ("S", "is text"),
    ({"a": 1}, "cannot be read as numbers"),
    (object(), "cannot be read as numbers"),
    (S.T, "is the transpose"),
    (S.ravel(), "right numbers but shape (6,)"),
    (np.zeros((2, 2)), "has shape (2, 2); expected shape (3, 2)"),
    (np.where(S == 1, np.nan, S), "contains NaN at index [0, 0]"),
    (np.where(S == 1, np.inf, S), "contains infinity"),
    (-S, "opposite sign"),
    (S * 1000.0, "factor of 1e+03"),
    (np.array([[1, 0], [-1, 1], [0, 1]]), "1 of 6 entries; e.g. at index [2, 1]: got 1, expected -1"),
])
def test_feedback_names_what_is_wrong(value, message):
    with pytest.raises(GradingFailure) as info:
        check("S", value, S)
    assert message in str(info.value)
    assert isinstance(info.value, AssertionError)  # nbgrader counts it as a failed test


def test_scalars_units_and_hints():
    assert check("T", 0.5, 0.5 + 1e-12)
    with pytest.raises(GradingFailure, match="degrees instead of radians"):
        check("angle", np.degrees(0.3), 0.3)
    with pytest.raises(GradingFailure, match=r"`T` = 2.001, but the expected value is 0.5"):
        check("T", 2.0 + 1e-3, 0.5)
    with pytest.raises(GradingFailure, match="Hint: T is 1/2 v\\^T M v"):
        check("T", 3.0, 0.5, hint="T is 1/2 v^T M v")
    assert check("list", [[1, 0], [-1, 1], [0, -1]], S)  # lists and ints are fine


def test_check_call_reports_exceptions_and_endless_loops():
    assert check_call("f", lambda x: x + 1, 1) == 2
    with pytest.raises(GradingFailure, match="raised KeyError"):
        check_call("f", lambda: {}["x"])
    with pytest.raises(GradingFailure, match="not a function"):
        check_call("build_S", None)

    def forever():
        while True:
            time.sleep(0.01)

    start = time.perf_counter()
    with pytest.raises(GradingFailure, match="did not finish within 0.3 s"):
        check_call("forever", forever, timeout=0.3)
    assert time.perf_counter() - start < 3


def test_nbgrader_metadata():
    meta = cell_metadata("t1", "tests", points=3)["nbgrader"]
    assert meta == {"grade_id": "t1", "solution": False, "grade": True, "locked": True,
                    "schema_version": 3, "points": 3}
    sol = notebook_cell("def f():\n    ### BEGIN SOLUTION\n    pass\n    ### END SOLUTION",
                        "solution", grade_id="f")
    assert sol["metadata"]["nbgrader"]["solution"] and not sol["metadata"]["nbgrader"]["locked"]
    md = notebook_cell("# Task", cell_type="markdown")
    assert "outputs" not in md and md["metadata"] == {}
    with pytest.raises(ValueError, match="kind must be one of"):
        cell_metadata("x", "answer")
