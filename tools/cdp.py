"""A few lines of the Chrome DevTools Protocol: drive headless Chromium from Python.

``tools/check_3d.py`` reads a page once with ``--dump-dom``; a JupyterLab session needs a
browser that stays open while the test clicks and waits. This module starts Chromium with
a remote-debugging port, opens one tab and evaluates JavaScript in it, over the WebSocket
client that Jupyter Server already depends on (``websocket-client``).

    with Browser() as b:
        b.open("http://127.0.0.1:8888/lab?token=...")
        b.wait("document.querySelector('.jp-Notebook') !== null", timeout=60)
        print(b.js("document.title"))

The network is cut off except for the local machine: every host but 127.0.0.1 resolves
to nothing (``--host-resolver-rules``), so a page that reaches for a CDN fails visibly.
"""

from __future__ import annotations

import itertools
import json
import pathlib
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from check_3d import chromium  # noqa: E402  (the one place that finds the browser)


class BrowserError(RuntimeError):
    """The browser did not start, or a script raised, or a wait timed out."""


class Browser:
    """Headless Chromium with one tab, driven over the DevTools protocol.

    Parameters
    ----------
    width, height : int
        Window size in CSS pixels.
    offline : bool
        Resolve every host except 127.0.0.1 and localhost to nothing.
    """

    def __init__(self, width=1280, height=900, offline=True):
        self.width, self.height, self.offline = width, height, offline
        self._ids = itertools.count(1)
        self._proc = self._ws = self._tmp = None

    def __enter__(self):
        path = chromium()
        if path is None:
            raise BrowserError("Chromium is not installed (Debian/Ubuntu: apt-get install chromium)")
        self._tmp = tempfile.TemporaryDirectory(prefix="mbc-cdp-", ignore_cleanup_errors=True)
        cmd = [path, "--headless=new", "--no-sandbox", "--disable-gpu",
               "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
               "--disable-background-networking", "--disable-component-update",
               "--no-first-run", "--disable-extensions", "--remote-debugging-port=0",
               f"--user-data-dir={self._tmp.name}", f"--window-size={self.width},{self.height}",
               "about:blank"]
        if self.offline:
            cmd.insert(1, "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, "
                          "EXCLUDE localhost")
        self._proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._ws = self._connect(pathlib.Path(self._tmp.name) / "DevToolsActivePort")
        self.call("Page.enable")
        self.call("Runtime.enable")
        return self

    def _connect(self, port_file, timeout=30):
        import websocket

        deadline = time.monotonic() + timeout
        while not port_file.exists() or len(port_file.read_text().split()) < 2:
            if time.monotonic() > deadline or self._proc.poll() is not None:
                raise BrowserError("Chromium did not open its debugging port")
            time.sleep(0.05)
        port = port_file.read_text().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list") as r:
            pages = [t for t in json.load(r) if t["type"] == "page"]
        return websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=120,
                                           suppress_origin=True)

    def __exit__(self, *exc):
        try:
            if self._ws is not None:
                self._ws.close()
        finally:
            if self._proc is not None:
                self._proc.kill()
                self._proc.wait()
            if self._tmp is not None:
                self._tmp.cleanup()

    def call(self, method, **params):
        """Send one protocol command and return its result (events in between are dropped)."""
        ident = next(self._ids)
        self._ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            msg = json.loads(self._ws.recv())
            if msg.get("id") == ident:
                if "error" in msg:
                    raise BrowserError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def js(self, expression, await_promise=False):
        """The value of a JavaScript expression in the tab (JSON-serialisable values)."""
        res = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                        awaitPromise=await_promise)
        if "exceptionDetails" in res:
            d = res["exceptionDetails"]
            raise BrowserError(f"script raised: {d.get('exception', {}).get('description', d)}")
        return res["result"].get("value")

    def open(self, url):
        """Navigate the tab to ``url``."""
        self.call("Page.navigate", url=url)

    def wait(self, expression, timeout=60, every=0.25, what=None):
        """Poll ``expression`` until it is truthy; return its value or raise after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = self.js(expression)
            except BrowserError:
                value = None
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(f"timed out after {timeout} s waiting for {what or expression}")
            time.sleep(every)

    def screenshot(self, path):
        """Save a PNG of the viewport (for a failing test's report)."""
        import base64

        data = self.call("Page.captureScreenshot", format="png")["data"]
        pathlib.Path(path).write_bytes(base64.b64decode(data))
