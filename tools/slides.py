"""Build one reveal.js deck per chapter page from the notebooks as stored in git.

    python tools/slides.py [--out _build/slides] [pages...]

``pages`` are page names such as ``01_graphs`` (default: every chapter and application page
of ``_toc.yml``). Each deck, ``<out>/<page>.html``, is exported by nbconvert's
``SlidesExporter`` with the project template ``tools/slides_template`` from the stored,
executed notebook, so it shows exactly the outputs nbval tests. Which cells appear and how
they split into slides is each cell's ``metadata.slideshow.slide_type``; a cell without it is
skipped (tools/slides_template/README.md tells how to tag a notebook). The MyST markup of
the markdown cells is rewritten first (tools/slides_myst.py). Everything a deck loads is
copied to ``<out>/_static``: reveal.js (book/_offline/reveal), MathJax 3 (the pip package
sphinx-mathjax-offline), the ipywidgets embedder (book/_offline/widgets). Nothing comes
from the network.

Prints the slide count of each deck; an untagged notebook gets no deck and is reported.
Exit status 1 if a page cannot be built (unknown page, MyST left on a slide, a glue role
without a value).
"""

from __future__ import annotations

import argparse
import copy
import html.parser
import shutil
import sys
import time
from pathlib import Path

import nbformat

TOOLS = Path(__file__).resolve().parent
sys.path.insert(0, str(TOOLS))
import slides_myst  # noqa: E402

ROOT = TOOLS.parent
BOOK = ROOT / "book"
TEMPLATE = "slides_template"
REVEAL_SRC = BOOK / "_offline" / "reveal"
OFFLINE_SRC = BOOK / "_offline"
DECK_PARTS = ("Chapters", "Applications")     # captions of _toc.yml's parts that get decks
WIDTH, HEIGHT = 1280, 720                     # the slide size (reveal.js scales it)
SLIDE_TYPES = {"slide", "subslide", "fragment", "-", "notes", "skip"}
REMOVE_INPUT_TAGS = {"hide-input", "remove-input"}
REMOVE_OUTPUT_TAGS = {"hide-output", "remove-output"}
REMOVE_CELL_TAGS = {"remove-cell", "hide-cell"}


def toc_pages(toc: Path = ROOT / "_toc.yml") -> list[str]:
    """Names of the notebook pages in the chapter and application parts of ``_toc.yml``."""
    import yaml

    pages = []
    for part in yaml.safe_load(toc.read_text(encoding="utf-8")).get("parts", []):
        if part.get("caption") in DECK_PARTS:
            for ch in part.get("chapters", []):
                if (ROOT / f"{ch['file']}.ipynb").is_file():
                    pages.append(Path(ch["file"]).name)
    return pages


def slide_type(cell) -> str:
    """The cell's slide type; a cell without slideshow metadata is ``"skip"``."""
    kind = (cell.metadata.get("slideshow") or {}).get("slide_type", "skip")
    if kind not in SLIDE_TYPES:
        raise ValueError(f"cell {cell.get('id', '?')}: slide_type {kind!r} is not one of "
                         f"{sorted(SLIDE_TYPES)}")
    return kind


def prepare(nb, index: slides_myst.BookIndex):
    """A copy of ``nb`` with only the cells of the deck, their MyST rewritten.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        The stored notebook.
    index : slides_myst.BookIndex
        Titles, labels and references of the book (glued values are set here).

    Returns
    -------
    nbformat.NotebookNode
        Cells without slideshow metadata and ``skip``/``remove-cell`` cells are dropped; a
        dropdown of a markdown cell becomes a ``notes`` cell after it; code cells lose
        the input or outputs their tags hide on the page, and glued (scrapbook) outputs.
    """
    index.glue = slides_myst.glue_data(nb)
    out = copy.deepcopy(nb)
    out.cells = []
    for cell in nb.cells:
        kind = slide_type(cell)
        tags = set(cell.metadata.get("tags", []))
        if kind == "skip" or tags & REMOVE_CELL_TAGS:
            continue
        cell = copy.deepcopy(cell)
        cell.metadata["slideshow"] = {**cell.metadata.get("slideshow", {}), "slide_type": kind}
        if cell.cell_type == "markdown":
            out.cells += _markdown_cells(cell, kind, index)
        elif cell.cell_type == "code":
            out.cells.append(_code_cell(cell, tags))
    return out


def _markdown_cells(cell, kind: str, index) -> list:
    """The converted cell (kept even if empty: it may start a slide), and a speaker-notes
    cell for its dropdowns (if any)."""
    converted = slides_myst.convert(cell.source, index)
    cell.source = converted.slide
    if not converted.notes:
        return [cell]
    if kind == "notes":
        cell.source = "\n\n".join(filter(None, [converted.slide, converted.notes]))
        return [cell]
    note = nbformat.v4.new_markdown_cell(converted.notes)
    note.metadata["slideshow"] = {"slide_type": "notes"}
    note["id"] = f"{cell.get('id', 'cell')}-notes"[:64]
    return [cell, note]


def _code_cell(cell, tags: set):
    """A code cell as its deck shows it (see :func:`prepare`)."""
    from mbcourse.viz import offline_jshtml

    if tags & REMOVE_INPUT_TAGS:
        cell.metadata["transient"] = {"remove_source": True}
    outputs = [] if tags & REMOVE_OUTPUT_TAGS else cell.get("outputs", [])
    kept = []
    for o in outputs:
        if (o.get("metadata") or {}).get("scrapbook"):
            continue
        html_out = o.get("data", {}).get("text/html")
        if html_out and "anim-buttons" in "".join(html_out):
            o["data"]["text/html"] = offline_jshtml("".join(html_out))
        kept.append(o)
    cell["outputs"] = kept
    return cell


class _SectionCounter(html.parser.HTMLParser):
    """Counts the slides of a deck: ``<section>`` elements without a ``<section>`` inside."""

    def __init__(self):
        super().__init__()
        self.stack, self.slides = [], 0

    def handle_starttag(self, tag, attrs):
        if tag == "section":
            if self.stack:
                self.stack[-1] = True              # the parent has a child section
            self.stack.append(False)

    def handle_endtag(self, tag):
        if tag == "section" and self.stack:
            self.slides += not self.stack.pop()


def count_slides(deck_html: str) -> int:
    """Number of slides of a deck (horizontal and vertical: the leaf ``<section>`` s)."""
    counter = _SectionCounter()
    counter.feed(deck_html)
    counter.close()
    return counter.slides


class _TextExtractor(html.parser.HTMLParser):
    """The text a reader sees in a deck (no scripts, styles or speaker notes)."""

    HIDDEN = {"script", "style", "aside"}

    def __init__(self):
        super().__init__()
        self.depth, self.parts = 0, []

    def handle_starttag(self, tag, attrs):
        self.depth += tag in self.HIDDEN

    def handle_endtag(self, tag):
        self.depth -= tag in self.HIDDEN and self.depth > 0

    def handle_data(self, data):
        if not self.depth:
            self.parts.append(data)


def deck_text(deck_html: str) -> str:
    """The visible text of a deck's slides, as a browser shows it before MathJax runs."""
    parser = _TextExtractor()
    parser.feed(deck_html)
    parser.close()
    return "".join(parser.parts)


def exporter():
    """nbconvert's SlidesExporter with the project template (no prompts)."""
    from nbconvert import SlidesExporter

    return SlidesExporter(template_name=TEMPLATE, extra_template_basedirs=[str(TOOLS)],
                          exclude_input_prompt=True, exclude_output_prompt=True)


def build_deck(page: str, out: Path, index: slides_myst.BookIndex, source: Path | None = None,
               export=None) -> int:
    """Write ``out/<page>.html``; return its slide count (0: untagged, no deck written).

    Parameters
    ----------
    page : str
        The page name, e.g. ``"01_graphs"``.
    out : Path
        The folder of the decks.
    index : slides_myst.BookIndex
        See :func:`slides_myst.book_index`.
    source : Path, optional
        The notebook (default ``book/<page>.ipynb``).
    export : SlidesExporter, optional
        An exporter to reuse (see :func:`exporter`).

    Raises
    ------
    ValueError
        If MyST markup is left in the deck's text.
    """
    source = source or BOOK / f"{page}.ipynb"
    nb = prepare(nbformat.read(source, as_version=4), index)
    target = out / f"{page}.html"
    if not any(slide_type(c) not in ("notes", "skip") for c in nb.cells):
        target.unlink(missing_ok=True)            # no stale deck of an untagged page
        return 0
    title = index.titles.get(page, page)
    resources = {"metadata": {"name": title},
                 "deck": {"title": title, "width": WIDTH, "height": HEIGHT,
                          "widgets": has_widgets(nb)}}
    body, _ = (export or exporter()).from_notebook_node(nb, resources=resources)
    raw = slides_myst.raw_myst(deck_text(body))
    if raw:
        raise ValueError(f"MyST markup left on the slides: {raw[:5]}")
    target.write_text(body, encoding="utf-8")
    return count_slides(body)


def has_widgets(nb) -> bool:
    """Whether a cell of ``nb`` shows a widget (then the deck loads the widget embedder)."""
    return "widgets" in nb.metadata and any(
        "application/vnd.jupyter.widget-view+json" in o.get("data", {})
        for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))


def mathjax_dir() -> Path:
    """MathJax 3 of the pip package sphinx-mathjax-offline."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution("sphinx-mathjax-offline")
    except PackageNotFoundError as exc:
        raise SystemExit("slides: the pip package sphinx-mathjax-offline is not installed "
                         "(it is in the book extra: pip install -e '.[book]')") from exc
    return Path(dist.locate_file("sphinx-mathjax-offline/static/mathjax"))


def copy_static(out: Path) -> None:
    """Copy what the decks load into ``out/_static``: reveal.js, MathJax (the one script and
    its CHTML fonts), the ipywidgets embedder and its MathJax 3 shim."""
    static = out / "_static"
    if not (REVEAL_SRC / "dist" / "reveal.js").is_file():
        raise SystemExit(f"slides: {REVEAL_SRC}/dist/reveal.js is missing: run "
                         "`make vendor-revealjs` (needs npm) or restore it from git")
    shutil.copytree(REVEAL_SRC, static / "reveal", dirs_exist_ok=True)
    mathjax = mathjax_dir()
    fonts = Path("output/chtml/fonts/woff-v2")
    (static / "mathjax" / fonts).mkdir(parents=True, exist_ok=True)
    shutil.copy2(mathjax / "tex-chtml-full.js", static / "mathjax")
    for font in (mathjax / fonts).glob("*.woff"):
        shutil.copy2(font, static / "mathjax" / fonts)
    for sub in ("widgets", "js"):
        shutil.copytree(OFFLINE_SRC / sub, static / "offline" / sub, dirs_exist_ok=True)


def build(pages: list[str], out: Path) -> dict[str, int]:
    """Build the decks of ``pages`` into ``out``; print and return ``{page: slide count}``."""
    unknown = [p for p in pages if not (BOOK / f"{p}.ipynb").is_file()]
    if unknown:
        raise SystemExit(f"slides: no notebook book/<page>.ipynb for {unknown}")
    out.mkdir(parents=True, exist_ok=True)
    copy_static(out)
    index = slides_myst.book_index(BOOK)
    export, counts = exporter(), {}
    for page in pages:
        start = time.perf_counter()
        try:
            counts[page] = n = build_deck(page, out, index, export=export)
        except (ValueError, KeyError) as exc:
            raise ValueError(f"book/{page}.ipynb: {exc.args[0] if exc.args else exc}") from exc
        took = f"{time.perf_counter() - start:.1f} s"
        print(f"{page}: {n} slides -> {out / (page + '.html')} ({took})" if n else
              f"{page}: 0 slides: no cell has slideshow metadata yet, no deck written")
    return counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="*", help="page names (default: the chapters of _toc.yml)")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "slides")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        counts = build(args.pages or toc_pages(), args.out)
    except ValueError as exc:
        print(f"slides: {exc}", file=sys.stderr)
        return 1
    tagged = [p for p, n in counts.items() if n]
    print(f"slides: {len(tagged)} deck(s) in {args.out}, {len(counts) - len(tagged)} page(s) "
          f"not tagged yet, {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
