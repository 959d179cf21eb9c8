"""Numbers quoted in a chapter's prose must come from the chapter's own computation.

A number the text quotes from a result (a residual, an energy, a force, a ratio, a time)
goes stale the moment the code changes unless the notebook inserts it (myst-nb ``glue``)
or prints it in a cell. This module lists the numbers in a notebook's markdown that are
neither references (equation, figure, table, section, erratum and exercise numbers, years)
nor small counts, and that occur nowhere in the notebook's code or outputs.

What is checked
    * decimals with a fractional part (``0.40234``, ``2.60``), numbers in scientific
      notation (``3.5e-4``, ``2·10⁻⁹``, ``2\\times10^{-9}``) and integers of three digits or
      more (``200``); integers below 100 are counts and indices and are not checked, and
      four-digit years (1600-2099) are citations.
    * References are removed first: ``(3.33)``, ``(21)``, ``Fig. 3.22``, ``Table 3.1``,
      ``§3.6``, ``section 8.6``, ``E29``, headings, links, inline code, ``{cite}``/``{ref}``
      roles, ``\\tag{...}``, and a number followed directly by another ``)``-closed range of
      equation numbers (``(3.25)–(3.34)``).

When a quoted number is backed
    by a number of the notebook's code cells or text outputs (stream, ``text/plain``,
    ``text/markdown``, ``text/latex``) that rounds to it: ``6.30`` is backed by
    ``-6.2987`` (three significant digits, either sign), ``1e-9`` by ``1e-09``, ``2e-15`` by
    ``2.1e-15``. A number that also occurs in a code cell's source counts too (a parameter
    the text restates), except the numbers of a figure's layout (``figsize=(7, 3.6)``,
    ``fontsize=``, ``ax.text(...)``): they back nothing the text says.

Run it on one notebook (``--solutions`` first executes the notebook with every exercise
solution inserted, as ``tests/test_exercises.py`` does, so that numbers quoted in a
solution can be backed by that solution's output)::

    python tools/prose_numbers.py book/06_closed_loops.ipynb [--solutions]
"""
from __future__ import annotations

import math
import re
import sys
from pathlib import Path

SUPER = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
MINUS = str.maketrans({"−": "-", "‒": "-", "–": "-"})

# a number: mantissa with optional exponent, or "m × 10^k" forms (normalised first)
NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?![\w])")
TIMES_TEN = re.compile(
    r"(\d+(?:\.\d+)?)\s*(?:×|\\times|·|\\cdot|x)\s*10\s*(?:\^\s*\{?\s*([-+]?\d+)\s*\}?|"
    r"([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+))")
BARE_TEN = re.compile(r"(?<![\d.])10\s*(?:\^\s*\{\s*([-+]?\d+)\s*\}|\^\s*([-+]?\d)|([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+))")

REFERENCE = [
    r"^\s*#.*$",                                        # headings
    r"^\s*\([\w-]+\)=\s*$",                             # MyST labels
    r"```.*?```",                                      # fenced code (solutions are run, not read)
    r"`[^`\n]*`",                                      # inline code and roles' targets
    r"\{(?:cite|ref|doc|numref|eq|glue:\w+|glue)\}`[^`]*`",
    r"\\tag\{[^}]*\}",
    r"\]\([^)]*\)",                                    # link targets
    r"<[^>\n]*>",                                      # html tags and attributes
    r"\(\s*[A-Za-z]?\d+(?:\.\d+)*[a-z]?(?:\s*[,–\-/]\s*[A-Za-z]?\d+(?:\.\d+)*[a-z]?)*\s*\)",  # (3.33), (21)-(25)
    r"\b(?:Figs?\.|Figures?|Tables?|§|[Ss]ections?|[Cc]hapters?|[Ee]quations?|[Ee]qs?\.|"
    r"[Ee]xercises?|[Ee]xamples?|[Ss]teps?|[Ll]ines?|[Pp]ages?|[Pp]p?\.|[Aa]lg\.|[Aa]lgorithms?|"
    r"[Ss]tatements?|[Cc]ells?|[Ii]ssues?|r|version|v)\s*"
    r"\d+(?:\.\d+)*[a-z]?(?:\s*(?:,|–|-|and|to|or|/)\s*\d+(?:\.\d+)*[a-z]?)*",
    r"\bE\d+\b",
]
REFERENCE_RE = re.compile("|".join(f"(?:{r})" for r in REFERENCE), re.M | re.S)


def _normalise(text: str) -> str:
    text = text.translate(MINUS)

    def times(m):
        exp = m.group(2) if m.group(2) is not None else m.group(3).translate(SUPER)
        return f" {m.group(1)}e{exp} "

    def bare(m):
        exp = next(g for g in m.groups() if g is not None).translate(SUPER)
        return f" 1e{exp} "

    text = TIMES_TEN.sub(times, text)
    text = BARE_TEN.sub(bare, text)
    text = text.replace("\\,", "").replace("\u202f", "").replace("\u2009", "")
    return text


def quoted_numbers(markdown: str) -> list[str]:
    """The numbers of ``markdown`` that quote a result (see the module docstring)."""
    text = REFERENCE_RE.sub(" ", markdown)
    text = _normalise(text)
    out = []
    for m in NUMBER.finditer(text):
        s = m.group(1)
        if "e" in s.lower() or "." in s:
            if float(s) == 0.0:
                continue
            out.append(s)
        else:
            v = int(s)
            if v >= 100 and not (1600 <= v <= 2099 and len(s) == 4):
                out.append(s)
    return out


def _sig(s: str) -> int:
    mant = s.lower().split("e")[0].lstrip("0").replace(".", "")
    mant = mant.lstrip("0")
    return max(len(mant), 1)


def _round_sig(x: float, sig: int) -> float:
    if x == 0 or not math.isfinite(x):
        return x
    return round(x, sig - 1 - int(math.floor(math.log10(abs(x)))))


def numbers_in(text: str) -> list[float]:
    """Every number of a code cell or an output, as a float (sign dropped)."""
    text = _normalise(text)
    vals = []
    for m in re.finditer(r"\d*\.?\d+(?:[eE][-+]?\d+)?", text):
        try:
            vals.append(abs(float(m.group(0))))
        except ValueError:
            pass
    return vals


def backed(number: str, pool: set[float]) -> bool:
    """Whether ``number`` (as written in the prose) is some value of ``pool`` rounded."""
    p = abs(float(number))
    sig = _sig(number)
    # "2.60" claims three digits, "1e-9" one; an integer like 200 is compared exactly
    for x in pool:
        if x == p:
            return True
        if x != 0 and abs(x - p) <= 0.5 * 10 ** (math.floor(math.log10(p)) - sig + 1) * (1 + 1e-9):
            if _round_sig(x, sig) == _round_sig(p, sig):
                return True
    return False


# numbers of a figure's layout (sizes, positions of labels, styles) back nothing in the prose
LAYOUT = re.compile(
    r"\b(?:figsize|dpi|fontsize|alpha|lw|linewidth|linewidths|ms|markersize|size|s|width|"
    r"height|pad|labelpad|zorder|rotation|wspace|hspace|xytext|xy|bbox_to_anchor|"
    r"head_width|head_length|shrink|fraction|aspect|ncol|loc|frameon|offset|dx|dy)"
    r"\s*=\s*(?:\([^()]*\)|\[[^\[\]]*\]|[-+\d.eE]+)"
    r"|\.(?:text|annotate|set_xlim|set_ylim|set_zlim|set_position|subplots_adjust|"
    r"set_size_inches)\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\)")


def pool_of(nb) -> set[float]:
    pool: set[float] = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        pool.update(numbers_in(LAYOUT.sub(" ", cell.source)))
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                pool.update(numbers_in(out.get("text", "")))
            elif "data" in out:
                # glued values are stored as application/papermill.record/text/plain
                for mime, value in out["data"].items():
                    if mime.endswith(("text/plain", "text/markdown", "text/latex")):
                        text = "".join(value) if isinstance(value, list) else str(value)
                        pool.update(numbers_in(text))
            elif out.get("output_type") == "error":
                continue
    return pool


def numpy_glues(nb) -> list[tuple[int, str]]:
    """Glued values stored as a NumPy repr (``np.float64(0.5)``): myst-nb cannot format
    them (``{glue:text}`name:.3g``` fails the build) and shows the repr where no format is
    given. Glue ``float(x)`` instead."""
    bad = []
    for k, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            text = out.get("data", {}).get("application/papermill.record/text/plain")
            if name and isinstance(text, str) and re.match(r"\s*\(?np\.", text):
                bad.append((k, f"glue {name!r} stores {text[:40]}: glue float(x)"))
    return bad


def unbacked(nb) -> list[tuple[int, str]]:
    """``[(cell index, number)]`` of the quoted numbers no code or output of ``nb`` backs,
    and the glued values myst-nb cannot format (``numpy_glues``)."""
    pool = pool_of(nb)
    missing = numpy_glues(nb)
    for k, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        for s in quoted_numbers(cell.source):
            if not backed(s, pool):
                missing.append((k, s))
    return missing


def main(argv: list[str]) -> int:
    import nbformat

    solutions = "--solutions" in argv
    paths = [a for a in argv if not a.startswith("--")]
    bad = 0
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        if solutions:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
            from nbclient import NotebookClient
            from test_exercises import with_solutions

            nb = with_solutions(nb)
            NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                           resources={"metadata": {"path": str(Path(path).parent)}}).execute()
            for k, c in enumerate(nb.cells):
                for o in c.get("outputs", []) if c.cell_type == "code" else []:
                    if o.get("output_type") == "error":
                        where = c.metadata.get("solution_of", f"code cell {k}")
                        print(f"{path}: ERROR in [{where}] {o['ename']}: {o['evalue']}")
                        bad += 1
        for k, s in unbacked(nb):
            line = next((ln for ln in nb.cells[k].source.splitlines() if s in _normalise(ln)
                         or s in ln), "")
            print(f"{path}: cell {k}: {s}   | {line.strip()[:110]}")
            bad += 1
    print(f"{bad} unbacked number(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
