"""The notebooks as a student opens them: JupyterLab from the project's environment, in
headless Chromium with the network cut off.

A copy of the book's robots page (a notebook fresh from git: not trusted) is opened in
JupyterLab. Before anything runs: jupyterlab-myst renders its MyST, so every exercise's
solution is a folded dropdown and no raw ``:::{dropdown}`` is on the page; its stored 3D
views say in one line how to make them draw, with no dead controls. Then Run All: no cell
raises, and every 3D view draws (its WebGL canvas has pixels that are not the background).
"""
import json
import os
import pathlib
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import cdp  # noqa: E402

PAGE = "robots.ipynb"
pytestmark = pytest.mark.skipif(cdp.chromium() is None,
                                reason="Chromium is not installed (Debian/Ubuntu: apt-get "
                                       "install chromium): JupyterLab is not checked in a browser")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_server(url, proc, timeout=90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("jupyter lab exited")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"jupyter lab did not answer {url} in {timeout} s")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on a copy of book/ with its own config, settings and workspace,
    and a browser tab on the robots page (yields the browser)."""
    tmp = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "book", tmp / "book", ignore=shutil.ignore_patterns("_build"))
    settings = tmp / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    # every cell in the DOM (JupyterLab otherwise draws only the cells near the viewport)
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp / "config"),
               JUPYTER_RUNTIME_DIR=str(tmp / "runtime"), JUPYTER_DATA_DIR=str(tmp / "data"))
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}",
           "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={tmp / 'book'}", f"--LabApp.user_settings_dir={tmp / 'settings'}",
           f"--LabApp.workspaces_dir={tmp / 'workspaces'}", "--LabApp.news_url=",
           "--LabApp.expose_app_in_browser=True", "--allow-root"]
    with open(tmp / "server.log", "w") as log:
        server = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_for_server(f"http://127.0.0.1:{port}/api/status?token={token}", server)
        with cdp.Browser(height=1200) as browser:
            browser.open(f"http://127.0.0.1:{port}/lab/tree/{PAGE}?token={token}")
            browser.wait(f"window.jupyterapp && {NOTEBOOK} && {NOTEBOOK}.widgets.length > 10",
                         timeout=120, what="the notebook to open in JupyterLab")
            browser.shot = tmp / "screenshot.png"
            yield browser
    finally:
        server.terminate()
        server.wait(timeout=30)


# the notebook panel's content (JupyterLab's Notebook widget) of the page
NOTEBOOK = ("(Array.from(window.jupyterapp.shell.widgets('main')).find(w => w.context && "
            f"w.context.path.endsWith('{PAGE}')) || {{}}).content")

DROPDOWNS = f"""(async () => {{
  const nb = {NOTEBOOK}, found = [];
  for (let i = 0; i < nb.widgets.length; i++) {{
    const cell = nb.widgets[i], src = cell.model.sharedModel.getSource();
    const want = (src.match(/^:::+\\{{dropdown\\}}/gm) || []).length;
    if (cell.model.type !== 'markdown' || !want) continue;
    await nb.scrollToItem(i, 'center');
    for (let k = 0; k < 100 && cell.node.querySelectorAll('details').length < want; k++)
      await new Promise(r => setTimeout(r, 50));
    const details = Array.from(cell.node.querySelectorAll('details'));
    found.push({{cell: i, want: want, details: details.length,
                 open: details.filter(d => d.open).length,
                 solutions: details.filter(d => /Solution/.test(d.querySelector('summary') ?
                                                 d.querySelector('summary').textContent : '')).length,
                 raw: cell.node.innerText.includes(':::')}});
  }}
  return found;
}})()"""


def test_solutions_are_folded_and_myst_renders(lab):
    cells = lab.js(DROPDOWNS, await_promise=True)
    expected = sum(c["cell_type"] == "markdown" and ":::{dropdown}" in "".join(c["source"])
                   for c in json.loads((ROOT / "book" / PAGE).read_text())["cells"])
    assert len(cells) == expected >= 5
    bad = [c for c in cells if c["details"] != c["want"] or c["open"] or c["raw"]]
    assert not bad, f"dropdowns not rendered folded (cell, wanted, found, open): {bad}"
    assert sum(c["solutions"] for c in cells) >= 10


def test_stored_3d_views_say_how_to_draw_them_before_trust(lab):
    views = lab.js("Array.from(document.querySelectorAll('.mbc3d')).map(e => ({"
                   "text: e.innerText, canvas: !!e.querySelector('canvas'), "
                   "bar: e.querySelector('.mbc3d-bar') ? e.querySelector('.mbc3d-bar').style.display === 'none' : null,"
                   "legend: e.querySelector('.mbc3d-legend').style.display === 'none'}))")
    assert len(views) == 2
    for v in views:
        assert not v["canvas"] and v["bar"] in (True, None) and v["legend"], v
        assert "not drawn: the notebook is not trusted" in v["text"]
        assert "Trust Notebook" in v["text"] and "jupyter trust" in v["text"]


# outputs cleared first: a cell's stored execution count would otherwise pass for done;
# Run All is not awaited (its promise ends with the last cell) and needs a started kernel
KERNEL_IDLE = (f"{NOTEBOOK}.parent.sessionContext.session && "
               f"{NOTEBOOK}.parent.sessionContext.session.kernel.status === 'idle'")
CLEAR = "window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs').then(() => 1)"
RUN_ALL = "void window.jupyterapp.commands.execute('notebook:run-all-cells')"
FINISHED = f"""(() => {{
  const nb = {NOTEBOOK};
  const code = nb.widgets.filter(c => c.model.type === 'code');
  const kernel = nb.parent.sessionContext.session && nb.parent.sessionContext.session.kernel;
  return kernel && kernel.status === 'idle' && code.every(c => c.model.executionCount !== null);
}})()"""
ERRORS = f"""{NOTEBOOK}.widgets.filter(c => c.model.type === 'code').flatMap(c => {{
  const out = []; for (let k = 0; k < c.model.outputs.length; k++) {{
    const o = c.model.outputs.get(k); if (o.type === 'error') out.push(o.toJSON().evalue); }}
  return out; }})"""
DRAWN = """Array.from(document.querySelectorAll('.mbc3d')).map(e => {
  const v = e.mbc3d; if (!v || e.getAttribute('data-state') !== 'ready') return null;
  v.setTime(0); v.render();
  const gl = v.renderer.getContext(), w = gl.drawingBufferWidth, h = gl.drawingBufferHeight;
  const px = new Uint8Array(4 * w * h); gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, px);
  let drawn = 0;
  for (let i = 0; i < px.length; i += 4)
    if (Math.abs(px[i] - 247) + Math.abs(px[i + 1] - 247) + Math.abs(px[i + 2] - 247) > 30) drawn++;
  return {pixels: w * h, drawn: drawn, bar: e.querySelector('.mbc3d-bar') ?
          e.querySelector('.mbc3d-bar').style.display === 'none' : null};
})"""


def test_run_all_draws_every_3d_view(lab):
    lab.wait(KERNEL_IDLE, timeout=120, what="the notebook's kernel to start")
    lab.js(CLEAR, await_promise=True)
    assert not lab.js(FINISHED)
    lab.js(RUN_ALL)
    try:
        lab.wait(FINISHED, timeout=400, every=1.0, what="Run All to finish")
        assert lab.js(ERRORS) == []
        views = lab.wait(f"(() => {{ const v = {DRAWN}; return v.length === 2 && "
                         "v.every(x => x) && v; })()", timeout=60,
                         what="both 3D views to be ready")
    except Exception:
        lab.screenshot(lab.shot)
        raise
    for v in views:
        assert v["drawn"] > 0.005 * v["pixels"] and v["bar"] in (False, None), v
