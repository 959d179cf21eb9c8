"""MyST markup of the book's notebooks, turned into what nbconvert's markdown renders.

The book's markdown is MyST (Jupyter Book); nbconvert renders CommonMark with ``$`` math and
raw HTML, so on a slide ``:::{dropdown}``, ``{glue:text}`x:.2f```, ``(label)=`` ... would
show as raw text. :func:`convert` rewrites the subset the book uses (and a little more):

* ``:::{dropdown} Title`` (colon or backtick fence): removed from the slide; its title and
  body go to the speaker notes (a deck sets the exercise, the lecturer keeps the solution);
* admonitions (``note``, ``tip``, ``warning``, ... , ``admonition``): a
  ``<div class="admonition NAME">`` box whose first paragraph is the title;
* ``{math}`` directives: display math; other directives: their body, converted;
* roles: ``{glue}``/``{glue:text}``/``{glue:md}`` the glued value (formatted with the
  role's format spec exactly as myst-nb does); ``{doc}`` the page title; ``{ref}``,
  ``{numref}`` the heading the label names; ``{cite}`` "(Author, year)"; ``{eq}``
  "(label)"; ``{term}`` and any other role: its text (``text <target>`` gives ``text``);
* targets ``(label)=``, MyST comments ``% ...`` and block breaks ``+++`` are dropped, and
  the label after a display equation's closing ``$$ (label)`` too (the equation stays).

Code fences and inline code are left alone. :func:`raw_myst` finds what would still show
as MyST markup in a rendered text (the tests and the builder use it on every deck).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

OPEN = re.compile(r"^ {0,3}(?P<fence>:{3,}|`{3,}|~{3,})(?P<info>.*)$")
DIRECTIVE = re.compile(r"^\{(?P<name>[\w:.-]+)\}\s*(?P<arg>.*?)\s*$")
TARGET = re.compile(r"^\s*\(([^()\s]+)\)=\s*$")
MATH_LABEL = re.compile(r"^(.*\$\$)\s*\([^()\s]+\)\s*$")
OPTION = re.compile(r"^\s*:[\w-]+:")
ROLE_OR_CODE = re.compile(r"\{(?P<role>[A-Za-z][\w:.-]*)\}`(?P<text>[^`]*)`"
                          r"|(?P<tick>`+).+?(?P=tick)")
EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
ADMONITIONS = {"admonition", "attention", "caution", "danger", "error", "hint", "important",
               "note", "seealso", "tip", "warning"}
FOLDED = {"dropdown", "toggle", "details"}
RAW_MYST = re.compile(r"\{[A-Za-z][\w:.-]*\}`"          # a role
                      r"|:{3,}"                           # a colon fence
                      r"|`{3,}\s*\{"                      # a backtick directive
                      r"|^\s*\([\w.:-]+\)=\s*$"           # a target
                      r"|\$\$[ \t]*\([\w.:-]+\)", re.M)   # a labelled equation


@dataclass
class BookIndex:
    """What the roles point at: page titles, labelled headings, references, glued values.

    Attributes
    ----------
    titles : dict
        ``{page: title}`` (first ``#`` heading of each page).
    labels : dict
        ``{label: text of the heading after the target}``.
    citations : dict
        ``{bibtex key: "Author, year"}``.
    glue : dict
        ``{name: mime bundle}`` of the notebook being converted (see :func:`glue_data`).
    """

    titles: dict = field(default_factory=dict)
    labels: dict = field(default_factory=dict)
    citations: dict = field(default_factory=dict)
    glue: dict = field(default_factory=dict)


@dataclass
class Converted:
    """A markdown cell's text for the slide, and what goes to the speaker notes."""

    slide: str
    notes: str


def book_index(book: Path, bib: Path | None = None) -> BookIndex:
    """Titles and labels of every page under ``book`` and the references of ``bib``.

    Parameters
    ----------
    book : Path
        The folder of the book's ``.ipynb`` and ``.md`` pages.
    bib : Path, optional
        A BibTeX file (default ``book/references.bib`` if it exists).

    Returns
    -------
    BookIndex
        Without glued values (those belong to one notebook: :func:`glue_data`).
    """
    index = BookIndex()
    for path in sorted(book.glob("*.ipynb")) + sorted(book.glob("*.md")):
        text = _page_markdown(path)
        heading = re.search(r"^# (.+)$", text, re.M)
        index.titles[path.stem] = heading.group(1).strip() if heading else path.stem
        for m in re.finditer(r"^\(([^()\s]+)\)=[ \t]*\n+(.*)$", text, re.M):
            label, nxt = m.group(1), m.group(2)
            index.labels[label] = nxt.lstrip("#").strip() if nxt.startswith("#") else label
    bib = bib or book / "references.bib"
    if bib.is_file():
        index.citations = citations(bib)
    return index


def _page_markdown(path: Path) -> str:
    """All markdown of a page (the markdown cells of a notebook, joined)."""
    if path.suffix == ".md":
        return path.read_text(encoding="utf-8")
    import nbformat

    nb = nbformat.read(path, as_version=4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def citations(bib: Path) -> dict:
    """``{key: "Author, year"}`` (author-year style, "A and B", "A et al.") of a BibTeX file."""
    from pybtex.database import parse_file

    out = {}
    for key, entry in parse_file(str(bib)).entries.items():
        names = [re.sub(r"[{}]", "", " ".join(p.last_names))
                 for p in entry.persons.get("author", entry.persons.get("editor", []))]
        who = (names[0] if len(names) == 1 else " and ".join(names) if len(names) == 2
               else f"{names[0]} et al." if names else key)
        out[key] = f"{who}, {entry.fields.get('year', 'n.d.')}"
    return out


def glue_data(nb) -> dict:
    """``{name: {mime: value}}`` of the values a notebook glues (myst-nb / scrapbook outputs)."""
    found = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            book = (out.get("metadata") or {}).get("scrapbook")
            if not book:
                continue
            prefix = book.get("mime_prefix", "")
            found[book["name"]] = {k[len(prefix):]: v for k, v in out.get("data", {}).items()
                                   if k.startswith(prefix)}
    return found


def convert(text: str, index: BookIndex) -> Converted:
    """Rewrite one markdown cell's MyST for the slide.

    Parameters
    ----------
    text : str
        The cell's source.
    index : BookIndex
        Titles, labels, references and the notebook's glued values.

    Returns
    -------
    Converted
        ``slide``: CommonMark with HTML and ``$`` math; ``notes``: the folded blocks
        (dropdowns) for the speaker notes, ``""`` if there are none.
    """
    slide, notes = _convert_lines(text.split("\n"), index)
    return Converted(_tidy(slide), _tidy(notes))


def _tidy(lines: list[str]) -> str:
    """Join lines, at most one blank line in a row outside code, no blank ends."""
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")


def _convert_lines(lines: list[str], index: BookIndex) -> tuple[list[str], list[str]]:
    """The slide lines and the notes lines of a list of MyST lines."""
    slide, notes, i = [], [], 0
    while i < len(lines):
        line = lines[i]
        m = OPEN.match(line)
        if m:
            body, close, i = take_block(lines, i + 1, m["fence"])
            d = DIRECTIVE.match(m["info"].strip())
            if d or m["fence"][0] == ":":            # ":::name" is a directive too
                name, arg = (d["name"], d["arg"]) if d else (m["info"].strip() + " ").split(" ", 1)
                s, n = _directive(name, arg.strip(), body, index)
                slide += s
                notes += n
            else:                                    # a code block: verbatim
                slide += [line, *body, close]
            continue
        i += 1
        if TARGET.match(line) or line.startswith("%") or line.strip() == "+++":
            continue
        label = MATH_LABEL.match(line)
        slide.append(label.group(1) if label else inline(line, index))
    return slide, notes


def take_block(lines: list[str], start: int, fence: str) -> tuple[list[str], str, int]:
    """The body of a fenced block whose opening fence is ``fence`` and whose body starts at
    ``lines[start]``: ``(body lines, closing line, index after the block)``. Inner fences
    (code in a dropdown, nested directives) are skipped whole; an unclosed block runs to
    the end of the text, as in CommonMark."""
    i = start
    while i < len(lines):
        if _closes(lines[i], fence):
            return lines[start:i], lines[i], i + 1
        m = OPEN.match(lines[i])
        if m and m["fence"][0] != fence[0] or m and len(m["fence"]) < len(fence):
            _, _, i = take_block(lines, i + 1, m["fence"])
            continue
        i += 1
    return lines[start:], fence, len(lines)


def _closes(line: str, fence: str) -> bool:
    s = line.strip()
    return len(s) >= len(fence) and set(s) == {fence[0]} and len(line) - len(line.lstrip()) < 4


def _directive(name: str, arg: str, body: list[str], index: BookIndex):
    """``(slide lines, notes lines)`` for one directive."""
    body = _drop_options(body)
    inner, inner_notes = _convert_lines(body, index)
    if name in FOLDED:
        title = inline(arg, index) or name.capitalize()
        return [], [f"**{title}**", "", *inner, "", *inner_notes]
    if name in ADMONITIONS:
        title = inline(arg, index) if arg else name.capitalize()
        return ([f'<div class="admonition {name}">', "", title, "", *inner, "", "</div>", ""],
                inner_notes)
    if name == "math":
        return ["$$", *body, "$$"], []
    if name.startswith("glue"):
        return [_glued(name, arg, index, block=True)], []
    if name in ("code", "code-block", "code-cell", "sourcecode"):
        return ["```" + arg, *body, "```"], []
    return inner, inner_notes                        # figure captions, epigraphs, ...


def _drop_options(body: list[str]) -> list[str]:
    """A directive's body without its leading ``:key: value`` lines or ``---`` YAML block."""
    if body and body[0].strip() == "---":
        end = next((k for k in range(1, len(body)) if body[k].strip() == "---"), 0)
        return body[end + 1:]
    k = 0
    while k < len(body) and OPTION.match(body[k]):
        k += 1
    return body[k:]


def inline(text: str, index: BookIndex) -> str:
    """Replace the roles of one line of text by readable text (inline code untouched)."""
    def one(m):
        if m["role"] is None:
            return m.group(0)
        return role(m["role"], m["text"], index)

    return ROLE_OR_CODE.sub(one, text)


def role(name: str, text: str, index: BookIndex) -> str:
    """The text that replaces ``{name}`text```."""
    explicit = EXPLICIT.match(text)
    label, target = (explicit["text"], explicit["target"]) if explicit else ("", text)
    if name.startswith("glue"):
        return _glued(name, text, index)
    if name.startswith("cite"):
        return _cite(name, target, index)
    if label:
        return label
    if name == "doc":
        return index.titles.get(Path(target).stem, target)
    if name in ("ref", "numref"):
        return index.labels.get(target, target)
    if name == "eq":
        return f"({target})"
    if name == "math":
        return f"${text}$"
    return text


def _cite(name: str, keys: str, index: BookIndex) -> str:
    """``(A, 2008; B, 1977)`` for ``{cite}`` / ``{cite:p}``; ``A (2008)`` for ``{cite:t}``."""
    refs = [index.citations.get(k.strip(), k.strip()) for k in keys.split(",")]
    if name in ("cite:t", "cite:ts"):
        return "; ".join(re.sub(r"^(.*), (\S+)$", r"\1 (\2)", r) for r in refs)
    return "(" + "; ".join(refs) + ")"


def _glued(name: str, text: str, index: BookIndex, block: bool = False) -> str:
    """A glued value as myst-nb shows it: ``{glue:text}`key:fmt``` formatted text/plain,
    ``{glue:md}`` text/markdown, ``{glue}`` the richest of markdown, HTML, plain text."""
    from myst_nb.core.variables import format_plain_text

    key, spec = text, ""
    if name == "glue:text" and ":" in text:
        key, spec = text.rsplit(":", 1)
    key = key.split("::")[-1].strip()
    if key not in index.glue:
        raise KeyError(f"{{{name}}}`{text}`: no value named {key!r} is glued in this notebook "
                       f"(glued: {sorted(index.glue) or 'none'})")
    data = index.glue[key]
    if name == "glue:text":
        return format_plain_text(data.get("text/plain", ""), spec or "s")
    for mime in ("text/markdown", "text/html", "text/latex", "text/plain"):
        if mime in data:
            value = data[mime]
            return format_plain_text(value, "") if mime == "text/plain" else value.strip()
    return ""


def raw_myst(text: str) -> list[str]:
    """The pieces of ``text`` that look like MyST markup (roles, fences, targets, labels)."""
    return [m.group(0).strip() for m in RAW_MYST.finditer(text)]
