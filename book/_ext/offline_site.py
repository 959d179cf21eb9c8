"""Sphinx extension: make the built book work without network.

Loaded from ``_config.yml`` (``sphinx: local_extensions: offline_site:
book/_ext``). The other half of the mechanism is configuration there:
``sphinx-mathjax-offline`` serves MathJax 3 from ``_static/mathjax`` and
``nb_ipywidgets_js`` points myst-nb at the widget embedder copied here.

What this extension does:

* copies ``book/_offline`` to ``_static/offline`` of the HTML output: the
  vendored ipywidgets embedder (``widgets/``: ``@jupyter-widgets/html-manager``
  ``dist/embed.js`` and its web fonts) and ``js/ipywidgets-mathjax3.js`` (lets
  it typeset with MathJax 3). It is copied at the end of the build, not put in
  a source ``_static`` folder, because Jupyter Book 1 adds a ``<script>`` to
  every page for each ``.js`` file found there;
* rewrites matplotlib ``to_jshtml()`` players in notebook outputs with
  :func:`mbcourse.viz.offline_jshtml` (no Font Awesome CDN; inline SVG
  icons), for notebooks that call ``anim.to_jshtml()`` directly;
* drops sphinx-thebe's scripts from the pages while thebe is off (Jupyter
  Book always loads sphinx-thebe, whose inline script names
  ``unpkg.com/thebe``; thebe needs a Binder server, so it cannot work offline);
* removes ``_static/mathjax/latest.js``, MathJax's "load the newest version
  from a CDN" loader that no page uses;
* fails early when ``mathjax_path`` or ``nb_ipywidgets_js`` name a URL.

``tools/check_offline.py`` (run by ``make book``) is the final check.
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from sphinx.errors import ConfigError
from sphinx.util import logging
from sphinx.util.fileutil import copy_asset

logger = logging.getLogger(__name__)

ASSETS = Path(__file__).resolve().parent.parent / "_offline"
WIDGETS_SRC = ASSETS / "widgets"
ASSETS_DEST = "_static/offline"  # relative to the HTML output folder


def _is_url(path: str) -> bool:
    return "://" in path or path.lstrip().startswith("//")


def check_config(app, config) -> None:
    """Refuse configurations that would make pages load from the network."""
    mathjax_path = getattr(config, "mathjax_path", "") or ""
    if _is_url(mathjax_path):
        raise ConfigError(
            f"mathjax_path is a URL ({mathjax_path}); the book must work offline. "
            "Load the 'sphinx-mathjax-offline' extension and do not set mathjax_path."
        )
    remote = [p for p in getattr(config, "nb_ipywidgets_js", {}) or {} if _is_url(p)]
    if remote:
        raise ConfigError(
            f"nb_ipywidgets_js loads {remote} from the network; point it at "
            "offline/widgets/embed.js (see _config.yml)."
        )
    if not (WIDGETS_SRC / "embed.js").is_file():
        raise ConfigError(
            f"{WIDGETS_SRC / 'embed.js'} is missing: run `make vendor-widgets` "
            "(needs npm) or restore it from git."
        )


def patch_animations(app, doctree, docname) -> None:
    """Make matplotlib ``to_jshtml()`` outputs self-contained."""
    from mbcourse.viz import offline_jshtml

    for node in list(doctree.findall(nodes.raw)):
        if "html" not in node.get("format", "").split():
            continue
        text = node.astext()
        if "anim-buttons" not in text:  # not a matplotlib animation player
            continue
        try:
            new = offline_jshtml(text)
        except ValueError as exc:
            logger.warning("%s", exc, location=node)
            continue
        if new != text:
            replacement = nodes.raw(new, new)
            replacement.attributes.update(node.attributes)
            node.replace_self(replacement)


def _thebe_enabled(app) -> bool:
    launch = (app.config.html_theme_options or {}).get("launch_buttons", {}) or {}
    return bool(launch.get("thebe"))


def drop_thebe(app, pagename, templatename, context, doctree) -> None:
    """Remove sphinx-thebe's CDN-naming scripts from pages when thebe is off."""
    if _thebe_enabled(app) or "script_files" not in context:
        return
    context["script_files"] = [
        js
        for js in context["script_files"]
        if "THEBE_JS_URL" not in (getattr(js, "attributes", {}) or {}).get("body", "")
        and Path(str(getattr(js, "filename", "") or "")).name != "sphinx-thebe.js"
    ]


def finish(app, exc) -> None:
    """Copy the offline assets; drop MathJax's CDN loader."""
    if exc is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    # reveal.js is for the lecture decks (make slides), not for the site's pages
    copy_asset(str(ASSETS), str(outdir / ASSETS_DEST),
               excluded=lambda rel: rel.lstrip("./").split("/")[0] == "reveal")
    (outdir / "_static" / "mathjax" / "latest.js").unlink(missing_ok=True)


_TAG = None


def latex_tags(app, doctree, docname):
    """For the PDF (``make pdf``): LaTeX's ``split``, which Sphinx puts around display math,
    refuses ``\\tag``; write the equation number as text at the right instead (MathJax in
    the HTML keeps the real tag)."""
    global _TAG
    if getattr(app.builder, "format", "") != "latex":
        return
    import re

    _TAG = _TAG or re.compile(r"\\tag\*?\{([^{}]*)\}")
    for node in doctree.findall(nodes.math_block):
        text = node.astext()
        if "\\tag" in text:
            node.children = [nodes.Text(_TAG.sub(r"\\qquad\\text{(\1)}", text))]


def setup(app):
    app.connect("config-inited", check_config, priority=900)
    app.connect("doctree-resolved", latex_tags)
    app.connect("doctree-resolved", patch_animations)
    app.connect("html-page-context", drop_thebe)
    # after sphinx-mathjax-offline has copied MathJax (default priority 500)
    app.connect("build-finished", finish, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
