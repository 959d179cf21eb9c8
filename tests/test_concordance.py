"""The concordance of the sources (book/_data/concordance.csv, a contract read by outside
checks): one row per numbered equation of each source, every status valid, every anchor a
label on its page, every ``mb.`` name a function of the library, few omissions, and the
book's page ``book/concordance.md`` written from the current file."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import concordance  # noqa: E402

SEEDS = ROOT.parent / "shared" / "seeds"
SEED_FILES = {"yudintsev": "000_", "telegin": "001_", "ivanov": "002_",
              "eliseev-khomenko": "003_", "alyushin": "004_"}


def test_concordance_is_sound():
    bad = concordance.problems()
    assert not bad, "\n".join(bad[:60]) + (f"\n... {len(bad)} in all" if len(bad) > 60 else "")


def test_page_is_written_from_the_csv():
    rows = concordance.read()
    assert concordance.PAGE.read_text(encoding="utf-8") == concordance.render(rows), \
        "book/concordance.md is stale: run python tools/concordance.py"
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    assert "book/concordance" in toc


def test_checker_catches_what_it_should():
    """The checker itself: a bad status, a missing label, an unknown mb. name, a missing
    equation and an erratum given as the only reason are each reported."""
    rows = concordance.read()
    bad = [dict(r) for r in rows]
    bad[0]["status"] = "proved"
    bad[1]["where"] = "01_graphs#no-such-label"
    bad[2]["where"] += " mb.graph.no_such_function"
    om = dict(bad[3], status="omitted", note="wrong in print, see E2")
    bad[3] = om
    del bad[4]
    found = "\n".join(concordance.problems(bad))
    assert "status 'proved'" in found
    assert "label 'no-such-label'" in found
    assert "mb.graph.no_such_function does not resolve" in found
    assert "omitted because of E2" in found
    assert f"equations with no row: ['{rows[4]['equation']}']" in found


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the sources (shared/seeds) are not beside the "
                    "checkout; the equation list in tools/concordance.py stands")
@pytest.mark.parametrize("source", list(SEED_FILES))
def test_equation_list_matches_the_sources(source):
    """Every equation number that occurs in the source's text is in the list (the list may
    hold a number whose label the extracted text lost, like Eliseev-Khomenko's (20))."""
    (path,) = SEEDS.glob(SEED_FILES[source] + "*.txt")
    text = path.read_text(encoding="utf-8")
    pattern = r"(?<![\w])\((\d\.\d{1,3})\)" if source == "yudintsev" else r"(?<![\w])\((\d{1,2})\)"
    found = set(re.findall(pattern, text))
    if source == "telegin":
        found.discard("0")  # "(0)" is a table's indicator value, not an equation
    listed = set(concordance.source_equations()[source])
    assert found <= listed, sorted(found - listed)
    assert len(listed - found) <= 1, sorted(listed - found)
