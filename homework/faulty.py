"""Synthetic submissions for testing the grading pipeline: programmatic edits of a release.

* ``reference`` — every stub replaced by the source notebook's solution (markers removed):
  must score full marks.
* ``blank`` — the release untouched (the stubs raise ``NotImplementedError``): must score 0.
* ``faulty`` — every solution cell broken in one of the ways students break code
  (:data:`KINDS`): must score 0, and the grader must neither crash nor hang.

A notebook is an nbformat-4 ``dict`` (``json.load``); solution cells are recognized by their
nbgrader metadata.
"""

from __future__ import annotations

import copy

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
STUB = "raise NotImplementedError()"

KINDS = {
    "shape": "returns an array of the wrong shape",
    "nan": "returns the right shape full of NaN",
    "raise": "the cell raises before the function is defined",
    "loop": "the function never returns (stopped by check_call's time limit)",
    "hang": "the cell never ends (stopped by nbgrader's per-cell timeout)",
}

# One fault per task; every kind appears, the expensive `hang` once (it costs a full
# per-cell timeout).
FAULTS = {
    "ch1_graphs": ["hang", "shape", "nan"],
    "ch2_cartesian": ["nan", "raise", "shape"],
    "ch3_tree": ["shape", "loop", "nan"],
    "ch4_recursion": ["nan", "raise", "shape"],
    "ch5_inertial": ["nan", "shape", "loop"],
    "ch6_loops": ["nan", "raise", "shape"],
    "ch7_energy": ["nan", "raise", "shape"],
    "ch8_accuracy": ["nan", "raise", "shape"],
    "ch9_contact": ["raise", "nan", "shape"],
}


def _text(source):
    return "".join(source) if isinstance(source, list) else source


def _grade_id(cell):
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def _is_solution(cell):
    return cell["cell_type"] == "code" and cell.get("metadata", {}).get("nbgrader", {}).get("solution")


def solution_code(source_nb):
    """``{grade_id: solution cell source without the BEGIN/END markers}``."""
    out = {}
    for cell in source_nb["cells"]:
        if _is_solution(cell):
            lines = _text(cell["source"]).splitlines()
            out[_grade_id(cell)] = "\n".join(l for l in lines if l.strip() not in (BEGIN, END))
    return out


def solution_body(source):
    """The lines between the markers of a source cell (with their indentation)."""
    lines = _text(source).splitlines()
    i = next(k for k, l in enumerate(lines) if l.strip() == BEGIN)
    j = next(k for k, l in enumerate(lines) if l.strip() == END)
    return lines[i + 1:j]


def _replace_stub(release_source, body_lines):
    """Put ``body_lines`` where the release has its stub (``# YOUR CODE HERE`` + raise)."""
    lines = _text(release_source).splitlines()
    k = next(k for k, l in enumerate(lines) if l.strip() == STUB)
    start = k - 1 if k and lines[k - 1].strip() == "# YOUR CODE HERE" else k
    return "\n".join(lines[:start] + body_lines + lines[k + 1:])


_WRAP = {
    # the solution's result, flattened with one entry too many
    "shape": "@(lambda f: lambda *a, **k: np.append(np.ravel(f(*a, **k)), 0.0))  # wrong shape",
    # the solution's result, every entry NaN
    "nan": "@(lambda f: lambda *a, **k: np.asarray(f(*a, **k), dtype=float) * np.nan)  # NaN",
}


def break_cell(release_source, source_source, kind):
    """The release cell with the solution filled in and broken in the given way."""
    body = solution_body(source_source)
    indent = body[0][: len(body[0]) - len(body[0].lstrip())]
    if kind == "loop":
        return _replace_stub(release_source, [f"{indent}while True:  # waits forever",
                                              f"{indent}    pass"] + body)
    filled = _replace_stub(release_source, body)
    if kind in _WRAP:  # a decorator on the (top-level) function changes what it returns
        lines = filled.splitlines()
        k = next(i for i, l in enumerate(lines) if l.startswith("def "))
        return "\n".join(lines[:k] + [_WRAP[kind]] + lines[k:])
    if kind == "raise":
        return 'raise ValueError("not finished yet")\n' + filled
    if kind == "hang":
        return "while True:  # a cell that never ends\n    pass\n" + filled
    raise ValueError(f"unknown fault {kind!r}; known: {sorted(KINDS)}")


def _solution_pairs(release_nb, source_nb):
    sources = {_grade_id(c): c for c in source_nb["cells"] if _is_solution(c)}
    for cell in release_nb["cells"]:
        if _is_solution(cell):
            yield cell, sources[_grade_id(cell)]


def _clean(nb):
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    return nb


def reference(release_nb, source_nb):
    """The release with every stub replaced by the solution."""
    nb = copy.deepcopy(release_nb)
    for cell, src in _solution_pairs(nb, source_nb):
        cell["source"] = _replace_stub(cell["source"], solution_body(src["source"]))
    return _clean(nb)


def blank(release_nb, source_nb=None):
    """The release untouched."""
    return _clean(copy.deepcopy(release_nb))


def faulty(release_nb, source_nb, kinds):
    """The release with solution cell number ``i`` broken as ``kinds[i]``."""
    nb = copy.deepcopy(release_nb)
    pairs = list(_solution_pairs(nb, source_nb))
    if len(kinds) != len(pairs):
        raise ValueError(f"{len(pairs)} solution cells but {len(kinds)} faults")
    for (cell, src), kind in zip(pairs, kinds):
        cell["source"] = break_cell(cell["source"], src["source"], kind)
    return _clean(nb)




def solution_lines(source_nb, min_length=25):
    """Distinctive solution lines (long, and not also part of the other code) for leak
    checks."""
    out, other = [], []
    for cell in source_nb["cells"]:
        if _is_solution(cell):
            body = solution_body(cell["source"])
            out += [l.strip() for l in body if len(l.strip()) >= min_length]
            other += [l.strip() for l in _text(cell["source"]).splitlines() if l not in body]
        elif cell["cell_type"] == "code":
            other += [l.strip() for l in _text(cell["source"]).splitlines()]
    return [l for l in dict.fromkeys(out) if not any(l in o for o in other)]


def hidden_test_lines(source_nb, min_length=25):
    """Distinctive lines of the hidden tests (long, and not also in visible code), for leak
    checks of releases and feedback."""
    hidden, visible = [], set()
    for cell in source_nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        inside = False
        for line in _text(cell["source"]).splitlines():
            if "BEGIN HIDDEN TESTS" in line or "END HIDDEN TESTS" in line:
                inside = "BEGIN" in line
            elif inside:
                hidden.append(line.strip())
            else:
                visible.add(line.strip())
    return [l for l in dict.fromkeys(hidden)
            if len(l) >= min_length and not any(l in v for v in visible)]
