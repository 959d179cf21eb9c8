"""Every exercise of the book has a solution, and every solution's code runs.

nbval runs the notebooks as they are; the solutions sit in dropdowns (markdown), so nothing
else would notice a solution that no longer runs after a change of the library or of the
cells it builds on. Here each notebook is executed once more with the code of every
solution inserted as a cell right after its exercise, in the order a reader meets them.
The notebooks run two at a time (one kernel each) to keep ``make test`` short.
"""
from __future__ import annotations

import copy
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from prose_numbers import unbacked  # noqa: E402

BOOK = Path(__file__).resolve().parents[1] / "book"
CHAPTERS = sorted(p.name for p in BOOK.glob("[0-9][0-9]_*.ipynb")) + ["robots.ipynb"]
EXERCISE = re.compile(r"^\*\*Exercise (\d+)\b", re.M)
CODE = re.compile(r"```python\n(.*?)```", re.S)
TIMEOUT = 300  # seconds per cell


def exercises(nb):
    """``[(number, markdown source)]`` of the notebook's exercises, in order."""
    return [(int(m.group(1)), c.source) for c in nb.cells if c.cell_type == "markdown"
            for m in EXERCISE.finditer(c.source)]


def with_solutions(nb):
    """A copy of ``nb`` with each solution's code as a cell after the cell that holds it."""
    out = copy.deepcopy(nb)
    out.cells = []
    for cell in nb.cells:
        out.cells.append(copy.deepcopy(cell))
        if cell.cell_type == "markdown" and ":::{dropdown}" in cell.source:
            heading = cell.source.strip().split("\n", 1)[0][:70]
            for code in CODE.findall(cell.source):
                new = nbformat.v4.new_code_cell(code)
                new.metadata["solution_of"] = heading
                out.cells.append(new)
    return out


def execute(name):
    """Errors of ``name`` run with its solutions: ``[(where, error)]``, the count of
    solution cells, and the numbers its prose quotes that no code or output backs
    (tools/prose_numbers.py; the solutions' outputs count, so a solution may quote what
    its own code prints)."""
    from nbclient import NotebookClient

    nb = with_solutions(nbformat.read(BOOK / name, as_version=4))
    NotebookClient(nb, timeout=TIMEOUT, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(BOOK)}}).execute()
    errors = [(c.metadata.get("solution_of", f"code cell {k}"), f"{o['ename']}: {o['evalue']}")
              for k, c in enumerate(nb.cells) if c.cell_type == "code"
              for o in c.get("outputs", []) if o.get("output_type") == "error"]
    return errors, sum("solution_of" in c.metadata for c in nb.cells), unbacked(nb)


@pytest.fixture(scope="module")
def runs():
    with ThreadPoolExecutor(max_workers=2) as pool:
        names = CHAPTERS + ["errata.ipynb"]
        return dict(zip(names, pool.map(execute, names)))


@pytest.mark.parametrize("name", CHAPTERS)
def test_exercises_numbered_with_solutions(name):
    found = exercises(nbformat.read(BOOK / name, as_version=4))
    numbers = [k for k, _ in found]
    assert numbers == list(range(1, len(found) + 1)), f"{name}: exercises numbered {numbers}"
    assert len(found) >= 8, f"{name}: {len(found)} exercises, the course asks for at least 8"
    missing = [k for k, src in found if ":::{dropdown} Solution" not in src]
    assert not missing, f"{name}: exercises {missing} have no dropdown solution"


@pytest.mark.parametrize("name", CHAPTERS)
def test_solutions_run(runs, name):
    errors, count, _ = runs[name]
    assert count > 0, f"{name}: no solution carries code"
    assert not errors, f"{name}: " + "; ".join(f"[{w}] {e}" for w, e in errors)


@pytest.mark.parametrize("name", CHAPTERS + ["errata.ipynb"])
def test_prose_numbers_are_computed(runs, name):
    """Every number the text quotes from a result occurs in the notebook's code or outputs
    (or is glued): a number typed by hand goes stale when the code changes."""
    missing = runs[name][2]
    nb = nbformat.read(BOOK / name, as_version=4)
    lines = [f"cell {k}: {s}" for k, s in missing]
    assert not missing, (f"{name}: numbers in the prose that no code or output backs "
                         f"(glue them or print them above): " + "; ".join(lines[:40])
                         + f" [{len(nb.cells)} cells]")


def test_inserted_solution_is_executed():
    """The harness itself: a solution that raises is reported with its exercise."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1"),
                nbformat.v4.new_markdown_cell("**Exercise 1 (t).** Q\n\n:::{dropdown} Solution\n"
                                              "```python\nassert x == 2, 'wrong'\n```\n:::")]
    from nbclient import NotebookClient

    run = with_solutions(nb)
    assert [c.cell_type for c in run.cells] == ["code", "markdown", "code"]
    NotebookClient(run, timeout=60, kernel_name="python3", allow_errors=True).execute()
    (err,) = [o for o in run.cells[2].outputs if o.output_type == "error"]
    assert err.ename == "AssertionError" and err.evalue == "wrong"
    assert run.cells[2].metadata["solution_of"].startswith("**Exercise 1")
