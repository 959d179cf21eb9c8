"""Open every page of the built site that holds a 3D view in headless Chromium, with the
network cut off, and check that each view draws, that animations move, and that no request
leaves the machine.

    python tools/check_3d.py _build/html [--min-animated-pages 4]

Each page is copied next to itself with a probe script appended (so its relative links to
the site's CSS and JavaScript still resolve), opened with ``--host-resolver-rules`` mapping
every host to nothing and a dead proxy, and read back with ``--dump-dom``. Chromium's net
log lists every request the page made; anything but ``file:`` and ``data:`` fails the check.
Exit status 1 on any failure. ``tests/test_viz3d.py`` uses the same functions on a page it
writes itself.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

PROBE = r"""
<pre id="mbc3d-probe-result">pending</pre>
<script>
(function () {
  var out = document.getElementById('mbc3d-probe-result');
  window.addEventListener('error', function (e) { out.textContent = 'error: ' + e.message; });
  function frame(v, t) {        // RGBA pixels of the canvas after drawing time t
    v.setTime(t); v.render();
    var gl = v.renderer.getContext(), w = gl.drawingBufferWidth, h = gl.drawingBufferHeight;
    var px = new Uint8Array(4 * w * h);
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, px);
    return px;
  }
  function away(p, i, r, g, b) { return Math.abs(p[i] - r) + Math.abs(p[i + 1] - g) + Math.abs(p[i + 2] - b) > 30; }
  function drawn(p) { var c = 0; for (var i = 0; i < p.length; i += 4) if (away(p, i, 247, 247, 247)) c++; return c; }
  function finish(views) {
    try {
      out.textContent = JSON.stringify(Array.prototype.map.call(views, function (e) {
        var v = e.mbc3d, T = v.times[v.times.length - 1];
        var a = frame(v, 0), b = frame(v, 0.37 * T), diff = 0;
        for (var i = 0; i < a.length; i += 4) if (away(a, i, b[i], b[i + 1], b[i + 2])) diff++;
        var readout = e.querySelector('.mbc3d-time');
        return {pixels: a.length / 4, drawn0: drawn(a), drawn1: drawn(b), diff: diff,
                frames: v.times.length, readout: readout ? readout.textContent : null,
                state: e.getAttribute('data-state'), meshes: e.getAttribute('data-meshes')};
      }));
    } catch (e) { out.textContent = 'error: ' + e; }
  }
  var waited = 0, poll = setInterval(function () {
    var views = document.querySelectorAll('.mbc3d');
    var s = Array.prototype.map.call(views, function (e) { return e.getAttribute('data-state'); });
    waited += 50;
    if (s.indexOf('error') >= 0) { clearInterval(poll); out.textContent = 'error: ' + document.body.textContent.slice(0, 400); }
    else if (views.length && s.every(function (x) { return x === 'ready'; }) &&
             Array.prototype.every.call(views, function (e) {   // meshes parsed, if any
               return !e.querySelector('.mbc3d-switch') || e.hasAttribute('data-meshes'); })) {
      clearInterval(poll); finish(views); }
    else if (waited > 15000) { clearInterval(poll); out.textContent = 'error: views not ready: ' + JSON.stringify(s); }
  }, 50);
})();
</script>
"""


def chromium():
    """Path of a Chromium-like browser, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run_page(browser, page, workdir, tag, result_id="mbc3d-probe-result"):
    """Open ``page`` offline; return (text of the element ``result_id``, net-log path)."""
    workdir = pathlib.Path(workdir)
    netlog = workdir / f"{tag}.netlog.json"
    cmd = [browser, "--headless=new", "--no-sandbox", "--disable-gpu",
           "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
           # no network: every host resolves to nothing, any proxy use goes nowhere
           "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=http://127.0.0.1:9",
           "--disable-background-networking", "--disable-component-update", "--no-first-run",
           "--disable-extensions", f"--user-data-dir={workdir / (tag + '-profile')}",
           f"--log-net-log={netlog}", "--window-size=900,1200",
           "--virtual-time-budget=20000", "--dump-dom", pathlib.Path(page).resolve().as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    m = re.search(rf'<pre id="{result_id}"[^>]*>([^<]*)</pre>', proc.stdout)  # themes add attributes
    return (m.group(1) if m else proc.stdout[-500:] + proc.stderr[-2000:]), netlog


def page_requests(netlog, local=False):
    """URLs the page asked for (not Chromium's own background services), from the net log;
    ``local=False`` leaves out ``file:`` and ``data:`` URLs."""
    log = json.loads(pathlib.Path(netlog).read_text())
    names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    urls = []
    for e in log["events"]:
        p = e.get("params") or {}
        if names.get(e["type"]) == "URL_REQUEST_START_JOB" and "url" in p:
            # browser-initiated requests (time sync, accounts, dictionaries) have no origin
            if p.get("initiator") != "not an origin" or "file://" in p.get("network_isolation_key", ""):
                if local or not p["url"].startswith(("file:", "data:")):
                    urls.append(p["url"])
    return urls


def check_site(site, min_animated_pages=4):
    """Check every page of ``site`` with a 3D view; return a list of failure messages."""
    browser = chromium()
    if browser is None:
        print("warning: Chromium is not installed (Debian: apt-get install chromium); the 3D "
              "views were not checked in a browser", file=sys.stderr)
        return []
    site = pathlib.Path(site)
    pages = sorted(p for p in site.rglob("*.html")
                   if "_static" not in p.parts and 'class="mbc3d"' in p.read_text("utf-8", "ignore"))
    failures, animated = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for page in pages:
            probe = page.with_name(".mbc3d-probe-" + page.name)
            html = page.read_text("utf-8")
            cut = html.rfind("</body>")                  # the page's own, not one in a string
            probe.write_text(html[:cut] + PROBE + html[cut:], "utf-8")
            start = time.perf_counter()
            try:
                result, netlog = run_page(browser, probe, tmp, page.stem)
            finally:
                probe.unlink()
            name = page.relative_to(site)
            if result.startswith(("error", "pending")) or not result.startswith("["):
                failures.append(f"{name}: {result[:300]}")
                continue
            views = json.loads(result)
            moving = 0
            for k, v in enumerate(views):
                if v["state"] != "ready" or v["drawn0"] < 0.005 * v["pixels"]:
                    failures.append(f"{name}: view {k} drew nothing ({v})")
                if v["frames"] > 1:
                    if v["diff"] < 0.001 * v["pixels"]:
                        failures.append(f"{name}: animation {k} does not move ({v})")
                    moving += 1
            leaks = page_requests(netlog)
            if leaks:
                failures.append(f"{name}: requests left the machine: {leaks[:5]}")
            if moving:
                animated.append(str(name))
            print(f"{name}: {len(views)} 3D view(s), {moving} animated, "
                  f"{time.perf_counter() - start:.1f} s, no network requests"
                  if not leaks else f"{name}: NETWORK {leaks[:3]}")
    if len(animated) < min_animated_pages:
        failures.append(f"only {len(animated)} pages play a 3D animation ({animated}); "
                        f"expected at least {min_animated_pages}")
    return failures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=pathlib.Path)
    parser.add_argument("--min-animated-pages", type=int, default=4)
    args = parser.parse_args(argv)
    failures = check_site(args.site, args.min_animated_pages)
    for f in failures:
        print("FAIL", f)
    if not failures:
        print("3D check: every view draws offline")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
