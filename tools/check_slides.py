"""Open every reveal.js deck of a folder in headless Chromium, with the network cut off, and
check each slide: nothing overflows the slide, math is typeset, 3D views draw, widgets render,
no request leaves the machine.

    python tools/check_slides.py _build/slides [--min-slides 20 --max-slides 40] [--list]

The approach and the browser functions are tools/check_3d.py's: each deck is copied next to
itself with a probe script appended, opened offline (``--host-resolver-rules``, a dead
proxy), read back with ``--dump-dom``, and Chromium's net log must list only ``file:`` and
``data:`` requests, all of files that exist. The probe waits for Reveal and MathJax, visits
every slide with ``Reveal.slide(h, v)`` and measures it against the deck's configured size,
then waits for the 3D views (``.mbc3d``, mbcourse.viz3d) and reads their pixels. Exit status
1 on any failure; a missing Chromium is a warning (as in check_3d.py).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from check_3d import chromium, page_requests, run_page  # noqa: E402

RESULT_ID = "slides-probe-result"
PROBE = r"""
(function () {
  var out = document.getElementById('slides-probe-result'), errors = [];
  window.addEventListener('error', function (e) { errors.push(e.message); });
  function fail(msg) { out.textContent = 'error: ' + msg; }
  function title(s) {                          // the slide's first heading, else its text
    var c = s.cloneNode(true);
    c.querySelectorAll('aside, script, style').forEach(function (e) { e.remove(); });
    var h = c.querySelector('h1, h2, h3, h4, h5, h6');
    var t = (h || c).textContent.replace(/\u00b6/g, '').replace(/\s+/g, ' ').trim();
    return t.slice(0, 70) || (c.querySelector('img, .mbc3d, canvas') ? '[figure]' : '[empty]');
  }
  function until(test, ms) {                   // resolves when test() holds, or after ms
    return new Promise(function (done) {
      var waited = 0, poll = setInterval(function () {
        waited += 50;
        if (test() || waited > ms) { clearInterval(poll); done(); }
      }, 50);
    });
  }
  function ready() {
    if (!window.Reveal) return Promise.reject('reveal.js is not loaded');
    if (!window.MathJax || !MathJax.startup) return Promise.reject('MathJax is not loaded');
    var loaded = new Promise(function (r) {
      if (document.readyState === 'complete') r(); else window.addEventListener('load', r); });
    var revealed = new Promise(function (r) {
      if (Reveal.isReady()) r(); else Reveal.on('ready', r); });
    return Promise.all([loaded, revealed, MathJax.startup.promise]);
  }
  function measure() {                         // every slide, at the deck's own size
    var slides = [];
    Reveal.configure({transition: 'none', backgroundTransition: 'none'});
    Reveal.getHorizontalSlides().forEach(function (hs, h) {
      var n = Math.max(hs.querySelectorAll(':scope > section').length, 1);
      for (var v = 0; v < n; v++) {
        Reveal.slide(h, v);
        var s = Reveal.getCurrentSlide();
        slides.push({h: h, v: v, title: title(s), scrollHeight: s.scrollHeight,
                     scrollWidth: s.scrollWidth, cut: cut(s)});
      }
    });
    return slides;
  }
  function cut(s) {                            // code, formulas, tables wider than their box
    return Array.prototype.filter.call(s.querySelectorAll('pre, mjx-container, table'),
      function (e) {
        if (e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0) return true;
        var p = e.parentElement && e.parentElement.getBoundingClientRect().width;
        return e.tagName === 'MJX-CONTAINER' && p > 0 &&   // a \tag widens the whole container
          e.getBoundingClientRect().width > p + 1; })
      .slice(0, 3).map(function (e) {
        return e.tagName.toLowerCase() + ' "' + e.textContent.replace(/\s+/g, ' ').trim()
          .slice(0, 40) + '": ' + Math.max(e.scrollWidth, Math.round(e.getBoundingClientRect().width)) +
          ' px wide in ' + Math.min(e.clientWidth, Math.round(e.parentElement.getBoundingClientRect().width)) + ' px'; });
  }
  function leaves() {
    return Array.prototype.filter.call(document.querySelectorAll('.reveal .slides section'),
      function (s) { return !s.querySelector('section'); }).length;
  }
  function math() {                            // what MathJax left as TeX, and its errors
    var c = document.querySelector('.reveal .slides').cloneNode(true);
    c.querySelectorAll('script, style, pre, code, textarea, aside, mjx-container, .mbc3d')
      .forEach(function (e) { e.remove(); });
    var left = c.textContent.match(/\$\$|\\\(|\\\)|\\\[|\\\]|\$[^$\n]+\$/g) || [];
    var errs = Array.prototype.map.call(document.querySelectorAll('mjx-merror'),
      function (e) { return e.getAttribute('data-mjx-error') || e.textContent; });
    return {leftover: left.slice(0, 10), errors: errs.slice(0, 10),
            typeset: document.querySelectorAll('.reveal mjx-container').length};
  }
  function away(p, i, r, g, b) {
    return Math.abs(p[i] - r) + Math.abs(p[i + 1] - g) + Math.abs(p[i + 2] - b) > 30; }
  function pixels(e) {                         // as tools/check_3d.py: drawn pixels at t = 0
    var v = e.mbc3d; v.setTime(0); v.render();
    var gl = v.renderer.getContext(), w = gl.drawingBufferWidth, h = gl.drawingBufferHeight;
    var px = new Uint8Array(4 * w * h), drawn = 0;
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, px);
    for (var i = 0; i < px.length; i += 4) if (away(px, i, 247, 247, 247)) drawn++;
    return {pixels: w * h, drawn: drawn};
  }
  function views() {
    var all = Array.prototype.slice.call(document.querySelectorAll('.reveal .slides .mbc3d'));
    var state = function (e) { return e.getAttribute('data-state'); };
    return until(function () { return all.every(function (e) {
      return state(e) === 'ready' || state(e) === 'error'; }); }, 15000).then(function () {
      return all.map(function (e) {
        var s = e.closest('section'), idx = Reveal.getIndices(s);
        Reveal.slide(idx.h, idx.v || 0);
        var r = {state: state(e), slide: (idx.h + 1) + '.' + ((idx.v || 0) + 1)};
        if (r.state === 'ready') { var p = pixels(e); r.pixels = p.pixels; r.drawn = p.drawn; }
        return r;
      });
    });
  }
  function widgets() {
    var views = document.querySelectorAll('.reveal div.jupyter-widgets.jp-OutputArea-output');
    var rendered = Array.prototype.filter.call(views, function (e) {
      return e.querySelector('.jupyter-widgets, .widget-container, .lm-Widget, .p-Widget'); });
    return {views: views.length, rendered: rendered.length};
  }
  function badFonts() {                        // web fonts that failed to load
    var bad = [];
    document.fonts.forEach(function (f) { if (f.status === 'error') bad.push(f.family); });
    return bad;
  }
  ready().then(function () {                   // the widget embedder renders asynchronously
    return until(function () { var w = widgets(); return w.rendered >= w.views; }, 5000);
  }).then(function () {
    var report = {slides: measure(), total: Reveal.getTotalSlides(), leaves: leaves(),
                  width: Reveal.getConfig().width, height: Reveal.getConfig().height,
                  math: math(), widgets: widgets()};
    return views().then(function (v) {
      report.views = v; report.errors = errors; report.badFonts = badFonts();
      out.textContent = JSON.stringify(report); });
  }).catch(function (e) { fail(e && e.message ? e.message : e); });
})();
"""


def probe_html() -> str:
    """The probe appended to a deck: a result element and the script that fills it."""
    return f'\n<pre id="{RESULT_ID}">pending</pre>\n<script>{PROBE}</script>\n'


def decks(folder: pathlib.Path) -> list[pathlib.Path]:
    """The decks of a folder: its top-level ``.html`` files that hold a reveal.js deck."""
    return sorted(p for p in folder.glob("*.html") if not p.name.startswith(".")
                  and '<div class="reveal">' in p.read_text("utf-8", "ignore"))


def open_deck(browser: str, deck: pathlib.Path, tmp: str) -> tuple[str, list, list]:
    """Open ``deck`` with the probe; return (probe result text, remote requests, missing
    local files)."""
    probe = deck.with_name(".slides-probe-" + deck.name)
    html = deck.read_text("utf-8")
    cut = html.rfind("</body>")
    probe.write_text(html[:cut] + probe_html() + html[cut:], "utf-8")
    try:
        result, netlog = run_page(browser, probe, tmp, deck.stem, result_id=RESULT_ID)
    finally:
        probe.unlink()
    return result, page_requests(netlog), missing_files(deck)


HTML_REF = re.compile(r"<(?:script|link|img|source)\b[^>]*?\s(?:src|href)=\"([^\"]+)\"", re.I)
CSS_IMPORT = re.compile(r"@import\s+(?:url\()?\s*[\"']?([^\"')\s]+)", re.I)
FONT_FACE = re.compile(r"@font-face\s*\{(.*?)\}", re.S | re.I)
CSS_URL = re.compile(r"url\(\s*[\"']?([^\"')]+?)[\"']?\s*\)", re.I)


def _local(url: str) -> bool:
    return not re.match(r"^(?:[a-z][\w+.-]*:|//|#)", url, re.I)


def missing_files(deck: pathlib.Path) -> list[str]:
    """Local files the deck loads that do not exist: its scripts, stylesheets and images,
    the stylesheets they import, and the fonts of each ``@font-face`` (one of the formats
    it lists must be there). Chromium's net log does not record ``file:`` loads."""
    html = deck.read_text("utf-8")
    refs = [deck.parent / u.split("?")[0].split("#")[0] for u in HTML_REF.findall(html)
            if _local(u)]
    missing, seen = [], set()
    while refs:
        path = refs.pop().resolve()
        if path in seen:
            continue
        seen.add(path)
        if not path.is_file():
            missing.append(str(path))
        elif path.suffix == ".css":
            css = path.read_text("utf-8", "ignore")
            refs += [path.parent / u for u in CSS_IMPORT.findall(css) if _local(u)]
            for face in FONT_FACE.findall(css):
                fonts = [path.parent / u.split("?")[0].split("#")[0]
                         for u in CSS_URL.findall(face) if _local(u)]
                if fonts and not any(f.is_file() for f in fonts):
                    missing.append(f"{path.name}: none of {[f.name for f in fonts]}")
    return sorted(missing)


def slide_failures(name: str, report: dict, min_slides: int, max_slides: int) -> list[str]:
    """Failures of the slide count and of each slide's size."""
    failures, n = [], report["total"]
    if report["leaves"] != n:
        failures.append(f"{name}: Reveal counts {n} slides, the deck has {report['leaves']} "
                        "<section> slides")
    if not min_slides <= n <= max_slides:
        failures.append(f"{name}: {n} slides, expected {min_slides} to {max_slides}")
    H, W = report["height"], report["width"]
    for k, s in enumerate(report["slides"]):
        where = f"{name}: slide {k + 1} (h={s['h']}, v={s['v']}) \"{s['title']}\""
        if s["scrollHeight"] > H:
            failures.append(f"{where} overflows: {s['scrollHeight']} px tall, "
                            f"{s['scrollHeight'] - H} px more than the deck's {H} px")
        for c in s["cut"]:
            failures.append(f"{where}: content cut off at the right, {c}")
        if s["scrollWidth"] > W:
            failures.append(f"{where} is {s['scrollWidth']} px wide, "
                            f"{s['scrollWidth'] - W} px more than the deck's {W} px")
    return failures


def content_failures(name: str, report: dict) -> list[str]:
    """Failures of math, 3D views, widgets and script errors."""
    failures = [f"{name}: script error: {e}" for e in report["errors"]]
    if report["badFonts"]:
        failures.append(f"{name}: fonts that did not load: {report['badFonts'][:5]}")
    math = report["math"]
    if math["leftover"]:
        failures.append(f"{name}: math not typeset, the text still holds {math['leftover'][:5]}")
    if math["errors"]:
        failures.append(f"{name}: MathJax errors: {math['errors'][:5]}")
    for k, v in enumerate(report["views"]):
        if v.get("state") != "ready" or v.get("drawn", 0) < 0.005 * max(v.get("pixels", 1), 1):
            failures.append(f"{name}: 3D view {k} on slide {v.get('slide')} drew nothing ({v})")
    w = report["widgets"]
    if w["views"] and w["rendered"] < w["views"]:
        failures.append(f"{name}: {w['views'] - w['rendered']} of {w['views']} widget views "
                        "did not render")
    return failures


def check_deck(browser, deck, tmp, min_slides, max_slides,
               listing=False) -> tuple[list[str], str]:
    """Open one deck; return (failures, summary line); ``listing`` prints every slide's
    height and title (to see how much room each slide has left)."""
    start = time.perf_counter()
    result, remote, missing = open_deck(browser, deck, tmp)
    name = deck.name
    if not result.startswith("{"):
        return [f"{name}: the deck did not open or Reveal/MathJax never got ready: "
                f"{result[:400]}"], f"{name}: FAILED to open"
    report = json.loads(result)
    for k, s in enumerate(report["slides"] if listing else []):
        print(f"  {k + 1:3d} (h={s['h']}, v={s['v']}) {s['scrollHeight']:5d} px  {s['title']}")
    failures = slide_failures(name, report, min_slides, max_slides)
    failures += content_failures(name, report)
    if remote:
        failures.append(f"{name}: requests left the machine: {remote[:5]}")
    if missing:
        failures.append(f"{name}: loads local files that do not exist: {missing[:5]}")
    summary = (f"{name}: {report['total']} slides ({report['width']}x{report['height']}), "
               f"{len(report['views'])} 3D view(s), {report['widgets']['views']} widget(s), "
               f"{report['math']['typeset']} formulas typeset, "
               f"{time.perf_counter() - start:.1f} s, "
               + ("no network requests" if not remote else f"NETWORK {remote[:3]}"))
    return failures, summary


def check_folder(folder, min_slides=20, max_slides=40, listing=False) -> list[str]:
    """Check every deck of ``folder``; return a list of failure messages."""
    browser = chromium()
    if browser is None:
        print("warning: Chromium is not installed (Debian: apt-get install chromium); the "
              "decks were not checked in a browser", file=sys.stderr)
        return []
    found = decks(pathlib.Path(folder))
    if not found:
        return [f"no reveal.js decks in {folder} (build them: python tools/slides.py)"]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for deck in found:
            bad, summary = check_deck(browser, deck, tmp, min_slides, max_slides, listing)
            print(summary)
            failures += bad
    return failures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=pathlib.Path)
    parser.add_argument("--min-slides", type=int, default=20)
    parser.add_argument("--max-slides", type=int, default=40)
    parser.add_argument("--list", action="store_true",
                        help="print the height and title of every slide")
    args = parser.parse_args(argv)
    if not args.folder.is_dir():
        print(f"check_slides: {args.folder} is not a directory (build the decks first: "
              "python tools/slides.py)", file=sys.stderr)
        return 1
    failures = check_folder(args.folder, args.min_slides, args.max_slides, args.list)
    for f in failures:
        print("FAIL", f)
    if not failures:
        print("slides check: every deck opens offline, no slide overflows, math typeset")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
