"""The concordance of the sources: where the book teaches each numbered equation.

``book/_data/concordance.csv`` (a contract: outside checks read it) has one row per numbered
equation of each of the five sources, in the source's own numbering::

    source,equation,status,where,note

* ``source``: ``yudintsev``, ``telegin``, ``ivanov``, ``eliseev-khomenko`` or ``alyushin``;
* ``equation``: the number as printed, without parentheses (``3.193``, ``21``);
* ``status``: ``derived`` (derived on the page), ``implemented`` (on the page as code,
  tested equal to the library), ``checked`` (evaluated and compared with an independent
  route), ``stated`` (only written down) or ``omitted`` (the reason in ``note``);
* ``where``: tokens separated by spaces: ``page#label`` (a book page without its suffix and
  a MyST label ``(label)=`` defined on that page), then ``mb.`` names of the functions that
  compute the equation;
* ``note``: free text; for ``omitted`` the reason. An erratum is a reason only together with
  the corrected form's row: such a note names the erratum (``E16``) and the row that carries
  the corrected form (``corrected: 3.42``).

``python tools/concordance.py --fragment part.csv yudintsev:3.172-3.179`` checks a part
written for one chapter (its rows, and that it covers the ranges named).
``python tools/concordance.py`` checks the file and writes the book's page
``book/concordance.md`` from it (``--check`` only checks, and fails when the page is stale).
"""
from __future__ import annotations

import csv
import importlib
import io
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
CSV = BOOK / "_data" / "concordance.csv"
PAGE = BOOK / "concordance.md"
HEADER = ["source", "equation", "status", "where", "note"]
SHORT = {"yudintsev": "Yudintsev", "telegin": "Telegin", "ivanov": "Ivanov",
         "eliseev-khomenko": "Eliseev, Khomenko", "alyushin": "Alyushin"}
STATUSES = ("derived", "implemented", "checked", "stated", "omitted")

SOURCES = {
    "yudintsev": "V.V. Yudintsev, *Dynamics of rigid-body systems* (2008)",
    "telegin": "A.I. Telegin, gyroscopic inertial forces (2024)",
    "ivanov": "V.N. Ivanov, Poisson impulses and O(N) solvers (2017)",
    "eliseev-khomenko": "S.V. Eliseev and A.P. Khomenko, the accuracy model of a manipulator chain",
    "alyushin": "Yu.A. Alyushin, kinetic energy in material variables (2022)",
}


def source_equations() -> dict[str, list[str]]:
    """Every numbered equation of each source, in the source's order.

    Yudintsev numbers by chapter: (1.1)-(1.5), (2.1)-(2.61), (3.1)-(3.201); the papers
    number consecutively: Telegin (1)-(18), Ivanov (1)-(11), Eliseev and Khomenko (1)-(32)
    (the extracted text has lost the label of (20), the bound between (19) and (21)),
    Alyushin (1)-(47). ``tests/test_concordance.py`` re-reads the sources when they are at
    hand and checks that no other number occurs.
    """
    yud = [f"1.{k}" for k in range(1, 6)] + [f"2.{k}" for k in range(1, 62)] + \
          [f"3.{k}" for k in range(1, 202)]
    return {"yudintsev": yud,
            "telegin": [str(k) for k in range(1, 19)],
            "ivanov": [str(k) for k in range(1, 12)],
            "eliseev-khomenko": [str(k) for k in range(1, 33)],
            "alyushin": [str(k) for k in range(1, 48)]}


def read(path: Path = CSV) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != HEADER:
            raise ValueError(f"{path}: header {reader.fieldnames}, expected {HEADER}")
        return [dict(r) for r in reader]


def page_labels(page: str) -> dict[str, str]:
    """``{label: heading text}`` of the MyST labels ``(label)=`` defined on a book page."""
    path = BOOK / f"{page}.ipynb"
    if path.exists():
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    elif (BOOK / f"{page}.md").exists():
        text = (BOOK / f"{page}.md").read_text(encoding="utf-8")
    else:
        return {}
    labels = {}
    for m in re.finditer(r"^\(([\w.-]+)\)=[ \t]*\n+(.*)$", text, re.M):
        heading = m.group(2).lstrip("#").strip()
        labels[m.group(1)] = heading
    return labels


def page_title(page: str) -> str:
    path = BOOK / f"{page}.ipynb"
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    for c in cells:
        for line in "".join(c["source"]).splitlines():
            if line.startswith("# "):
                return line[2:].strip()
    return page


def resolve_mb(name: str) -> bool:
    """Whether ``mb.a.b.c`` names an attribute of the installed package."""
    parts = name.split(".")[1:]
    obj = importlib.import_module("mbcourse")
    for k, part in enumerate(parts):
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        try:
            obj = importlib.import_module("mbcourse." + ".".join(parts[:k + 1]))
        except ImportError:
            return False
    return True


def problems(rows: list[dict[str, str]] | None = None, complete: bool = True) -> list[str]:
    """Everything wrong with the concordance, as readable lines (empty when it is sound).

    ``complete=False`` checks a part of the file (its rows only, not that every equation
    of every source has one)."""
    rows = read() if rows is None else rows
    out = []
    expected = source_equations()
    seen = defaultdict(list)
    labels_cache: dict[str, dict[str, str]] = {}
    for k, r in enumerate(rows, start=2):
        where = f"line {k} ({r['source']} {r['equation']})"
        if r["source"] not in SOURCES:
            out.append(f"{where}: source {r['source']!r} is not one of {sorted(SOURCES)}")
            continue
        seen[r["source"]].append(r["equation"])
        if r["status"] not in STATUSES:
            out.append(f"{where}: status {r['status']!r} is not one of {STATUSES}")
        tokens = r["where"].split()
        anchors = [t for t in tokens if "#" in t]
        names = [t for t in tokens if t.startswith("mb.")]
        other = [t for t in tokens if t not in anchors and t not in names]
        if other:
            out.append(f"{where}: 'where' tokens {other} are neither page#label nor mb.name")
        if r["status"] != "omitted" and not anchors:
            out.append(f"{where}: status {r['status']} needs a page#label in 'where'")
        if r["status"] == "implemented" and not names:
            out.append(f"{where}: 'implemented' names the mb. function it is tested equal to")
        for a in anchors:
            page, label = a.split("#", 1)
            if page not in labels_cache:
                labels_cache[page] = page_labels(page)
            if not labels_cache[page]:
                out.append(f"{where}: page {page!r} does not exist or defines no label")
            elif label not in labels_cache[page]:
                out.append(f"{where}: label {label!r} is not defined on page {page!r}")
        for name in names:
            if not resolve_mb(name):
                out.append(f"{where}: {name} does not resolve in the installed mbcourse")
        if r["status"] == "omitted":
            if not r["note"].strip():
                out.append(f"{where}: omitted without a reason in 'note'")
            m = re.search(r"\bE\d+\b", r["note"])
            if m:
                c = re.search(r"corrected:\s*([\d.]+)", r["note"])
                target = [x for x in rows if c and x["source"] == r["source"]
                          and x["equation"] == c.group(1)]
                if not target or target[0]["status"] == "omitted":
                    out.append(f"{where}: omitted because of {m.group(0)}, but the note names no "
                               "row of the corrected form ('corrected: <equation>') that is "
                               "itself taught")
    for src, eqs in expected.items():
        if not complete:
            break
        got = seen.get(src, [])
        dup = sorted({e for e in got if got.count(e) > 1})
        missing = [e for e in eqs if e not in got]
        extra = [e for e in got if e not in eqs]
        if dup:
            out.append(f"{src}: equations with more than one row: {dup}")
        if missing:
            out.append(f"{src}: equations with no row: {missing}")
        if extra:
            out.append(f"{src}: rows for numbers the source does not have: {extra}")
        if got:
            n_om = sum(1 for r in rows if r["source"] == src and r["status"] == "omitted")
            if n_om >= 0.1 * len(eqs):
                out.append(f"{src}: {n_om} of {len(eqs)} equations omitted (the limit is 10 %)")
    order = {s: {e: k for k, e in enumerate(v)} for s, v in expected.items()}
    keys = [(list(SOURCES).index(r["source"]), order[r["source"]].get(r["equation"], 10**6))
            for r in rows if r["source"] in SOURCES]
    if complete and keys != sorted(keys):
        out.append("rows are not in the sources' order (source, then equation)")
    return out


def counts(rows: list[dict[str, str]]) -> dict[str, dict[str, int]]:
    c = {s: {st: 0 for st in STATUSES} for s in SOURCES}
    for r in rows:
        c[r["source"]][r["status"]] += 1
    return c


def _where_md(r: dict[str, str]) -> str:
    parts = []
    for t in r["where"].split():
        if "#" in t:
            parts.append(f"{{ref}}`{t.split('#', 1)[1]}`")
        else:
            parts.append(f"`{t}`")
    return ", ".join(parts) if parts else ""


def _cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def render(rows: list[dict[str, str]]) -> str:
    """The book page, grouped by source, then by the book's page that teaches the equation."""
    out = io.StringIO()
    w = out.write
    w("(concordance)=\n# Sources equation by equation\n\n")
    w("Every numbered equation of the five sources has a row here, in the source's own "
      "numbering, with what this book does with it and where. The status says how far the "
      "book goes:\n\n")
    w("- **derived**: derived on the page;\n"
      "- **implemented**: written on the page as code and tested equal to the library "
      "function named beside it;\n"
      "- **checked**: evaluated and compared with an independent route (a second formulation, "
      "finite differences, a conservation law or sympy);\n"
      "- **stated**: written down, neither derived nor checked;\n"
      "- **omitted**: not in the book, for the reason given.\n\n")
    w("Where a source prints an equation wrongly, the row points to the {doc}`errata` page "
      "and the corrected form. The same table, as data, is `book/_data/concordance.csv` in "
      "the repository.\n\n")
    c = counts(rows)
    w("| source | equations | derived | implemented | checked | stated | omitted |\n")
    w("|---|---|---|---|---|---|---|\n")
    for s in SOURCES:
        n = sum(c[s].values())
        w(f"| {SHORT[s]} | {n} | " + " | ".join(str(c[s][st]) for st in STATUSES) + " |\n")
    w("\n")
    for s in SOURCES:
        srows = [r for r in rows if r["source"] == s]
        w(f"## {SOURCES[s]}\n\n")
        groups: dict[str, list[dict[str, str]]] = defaultdict(list)
        order = []
        for r in srows:
            first = next((t for t in r["where"].split() if "#" in t), "#")
            page = first.split("#")[0] or "(not in the book)"
            if page not in groups:
                order.append(page)
            groups[page].append(r)
        for page in order:
            title = page_title(page) if page != "(not in the book)" else page
            ref = f"{{doc}}`{title} <{page}>`" if page != "(not in the book)" else title
            w(f"### {title}\n\nTaught in {ref}.\n\n" if page != "(not in the book)"
              else f"### Not in the book\n\n")
            # the PDF's column widths (LaTeX would otherwise let the note run off the page)
            w("```{tabularcolumns} \\Y{0.08}\\Y{0.12}\\Y{0.42}\\Y{0.38}\n```\n\n")
            w("| eq. | status | where | note |\n|---|---|---|---|\n")
            for r in groups[page]:
                w(f"| ({r['equation']}) | {r['status']} | {_where_md(r)} | {_cell(r['note'])} |\n")
            w("\n")
    return out.getvalue()


def check_fragment(path: str, expect: list[str]) -> int:
    """Check a part of the concordance written by one chapter's author.

    ``expect`` holds ``source:first-last`` ranges (``yudintsev:3.172-3.179``) the fragment
    must cover completely."""
    rows = read(Path(path))
    bad = problems(rows, complete=False)
    eqs = source_equations()
    for spec in expect:
        src, rng = spec.split(":")
        first, last = rng.split("-")
        lst = eqs[src]
        want = lst[lst.index(first):lst.index(last) + 1]
        have = {r["equation"] for r in rows if r["source"] == src}
        miss = [e for e in want if e not in have]
        if miss:
            bad.append(f"{src}: no row for {miss}")
        dup = sorted({r["equation"] for r in rows if r["source"] == src
                      and sum(1 for x in rows if x["source"] == src
                              and x["equation"] == r["equation"]) > 1})
        if dup:
            bad.append(f"{src}: more than one row for {dup}")
    for line in bad:
        print(line)
    c = counts(rows)
    print({s: {k: v for k, v in c[s].items() if v} for s in c if sum(c[s].values())})
    print(f"{len(bad)} problem(s)")
    return 1 if bad else 0


def main(argv: list[str]) -> int:
    if "--fragment" in argv:
        k = argv.index("--fragment")
        return check_fragment(argv[k + 1], argv[k + 2:])
    rows = read()
    bad = problems(rows)
    for line in bad:
        print(line)
    text = render(rows)
    if "--check" in argv:
        stale = not PAGE.exists() or PAGE.read_text(encoding="utf-8") != text
        if stale:
            print(f"{PAGE.relative_to(ROOT)} is stale: run python tools/concordance.py")
        return 1 if bad or stale else 0
    PAGE.write_text(text, encoding="utf-8")
    c = counts(rows)
    for s in SOURCES:
        print(s, c[s])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
