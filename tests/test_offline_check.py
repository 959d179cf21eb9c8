"""The offline checker (tools/check_offline.py) and offline animation HTML (mbcourse.viz)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load_checker():
    spec = importlib.util.spec_from_file_location("check_offline", ROOT / "tools" / "check_offline.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up
    spec.loader.exec_module(module)
    return module


co = _load_checker()


def urls(findings):
    return [f.url for f in findings]


def page(head: str = "", body: str = "") -> str:
    return f"<!DOCTYPE html>\n<html><head>\n{head}\n</head><body>\n{body}\n</body></html>\n"


# --- HTML -------------------------------------------------------------------


def test_cdn_script_is_a_violation_with_its_line():
    html = page(head='<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"></script>')
    bad, links = co.scan_html(html, "p.html")
    assert urls(bad) == ["https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"]
    assert bad[0].line == 3 and links == []
    assert str(bad[0]).startswith("p.html:3: https://cdn.jsdelivr.net/")


def test_cdn_stylesheet_and_protocol_relative_urls():
    html = page(
        head='<link rel="stylesheet" href="https://maxcdn.bootstrapcdn.com/font-awesome/4.4.0/css/font-awesome.min.css">\n'
        '<link rel="preconnect" href="//fonts.gstatic.com">'
    )
    bad, _ = co.scan_html(html, "p.html")
    assert urls(bad) == [
        "https://maxcdn.bootstrapcdn.com/font-awesome/4.4.0/css/font-awesome.min.css",
        "//fonts.gstatic.com",
    ]


@pytest.mark.parametrize(
    "body",
    [
        '<img src="http://example.org/a.png">',
        '<img srcset="local.png 1x, https://example.org/a@2x.png 2x">',
        '<iframe src="https://www.youtube.com/embed/x"></iframe>',
        '<video poster="https://example.org/p.jpg"></video>',
        '<svg><use href="https://example.org/icons.svg#play"/></svg>',
        '<div style="background: url(https://example.org/bg.png)"></div>',
        "<style>@import url('https://fonts.googleapis.com/css?family=Roboto');</style>",
        '<script>var s = document.createElement("script"); s.src = "https://unpkg.com/thebe@0.8.2/lib/index.js";</script>',
        '<script data-cdn="https://cdn.jsdelivr.net/npm/" src="local.js"></script>',
    ],
)
def test_loading_references_are_violations(body):
    bad, _ = co.scan_html(page(body=body), "p.html")
    assert len(bad) == 1, bad
    assert bad[0].line == 5


def test_plain_hyperlinks_and_local_files_are_fine():
    html = page(
        head='<link rel="stylesheet" href="_static/theme.css"><script src="_static/mathjax/tex-chtml.js"></script>\n'
        '<link rel="canonical" href="https://example.org/book/">',
        body='<a href="https://doi.org/10.1007/978-3-540-73914-2">Wittenburg</a>\n'
        '<p>Text naming https://cdn.jsdelivr.net/npm/ is only displayed.</p>\n'
        '<pre>&lt;script src="https://unpkg.com/x.js"&gt;</pre>\n'
        '<!-- <script src="https://unpkg.com/commented.js"></script> -->\n'
        '<img src="data:image/png;base64,iVBORw0KGgo=">',
    )
    bad, links = co.scan_html(html, "p.html")
    assert bad == []
    assert urls(links) == ["https://example.org/book/", "https://doi.org/10.1007/978-3-540-73914-2"]


# --- CSS and JS files -------------------------------------------------------


def test_css_url_and_import_but_not_comments_or_local():
    css = (
        "/* @import url('https://fonts.googleapis.com/css?family=Roboto+Mono'); */\n"
        "@font-face { src: url(../fonts/a.woff2) format('woff2'); }\n"
        '@import "https://example.org/more.css";\n'
        ".x { background: url( 'https://example.org/bg.png' ); }\n"
    )
    bad = co.scan_css(css, "s.css")
    assert [(f.line, f.url) for f in bad] == [
        (3, "https://example.org/more.css"),
        (4, "https://example.org/bg.png"),
    ]


def test_js_cdn_hosts_and_remote_assets_but_not_documentation_urls():
    js = (
        "// see https://github.com/jupyterlab/jupyterlab/blob/master/src/variables.css\n"
        'const ns = "http://www.w3.org/2000/svg", help = "https://www.mathjax.org";\n'
        'load("https://cdnjs.cloudflare.com/ajax/libs/require.js/2.3.4/require.min.js");\n'
        'load("https://example.org/lib/widget.js");\n'
    )
    assert [(f.line, f.url) for f in co.scan_js(js, "a.js")] == [
        (3, "https://cdnjs.cloudflare.com/ajax/libs/require.js/2.3.4/require.min.js"),
        (4, "https://example.org/lib/widget.js"),
    ]


# --- the whole site, allowlist, command line --------------------------------


def _site(tmp_path: Path) -> Path:
    (tmp_path / "_static" / "mathjax").mkdir(parents=True)
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "ok.html").write_text(page(body='<a href="https://example.org">x</a>'))
    (tmp_path / "_static" / "mathjax" / "tex-chtml.js").write_text(
        'r.url="https://cdn.jsdelivr.net/npm/speech-rule-engine@"+r.VERSION+"/lib/mathmaps"'
    )
    return tmp_path


def test_site_ok_with_allowlisted_vendored_url(tmp_path, capsys):
    site = _site(tmp_path)
    bad, allowed, links = co.check_site(site)
    assert bad == [] and len(allowed) == 1 and urls(links) == ["https://example.org"]
    assert co.main([str(site)]) == 0
    assert "OK" in capsys.readouterr().out


def test_site_fails_listing_file_line_url(tmp_path, capsys):
    site = _site(tmp_path)
    (site / "book" / "bad.html").write_text(
        page(head='<link rel="stylesheet" href="https://maxcdn.bootstrapcdn.com/fa.css">')
    )
    # the allowlist is per file: the same URL elsewhere is a violation
    (site / "_static" / "other.js").write_text('x="https://cdn.jsdelivr.net/npm/speech-rule-engine@"')
    assert co.main([str(site)]) == 1
    err = capsys.readouterr().err
    assert "/book/bad.html:3: https://maxcdn.bootstrapcdn.com/fa.css" in err
    assert "/_static/other.js:1: https://cdn.jsdelivr.net/npm/speech-rule-engine@" in err


def test_missing_site_directory(tmp_path):
    assert co.main([str(tmp_path / "nope")]) == 2


# --- mbcourse.viz -----------------------------------------------------------


@pytest.fixture(scope="module")
def animation_html():
    import matplotlib                     # a dependency of mbcourse: never skipped

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.animation import FuncAnimation

    from mbcourse.viz import jshtml

    fig, ax = plt.subplots(figsize=(1, 1), dpi=20)
    anim = FuncAnimation(fig, lambda i: ax.set_title(str(i)), frames=3, interval=100)
    try:
        return anim.to_jshtml(), jshtml(anim)
    finally:
        plt.close(fig)


def test_jshtml_has_no_network_reference(animation_html):
    original, html = animation_html
    assert "maxcdn" in original  # what is being fixed (matplotlib's template)
    assert not re.search(r"(https?:)?//[a-z]", html.replace("http://www.w3.org", ""))
    assert "://" not in html
    assert "font-awesome" not in html and 'class="fa' not in html
    bad, _ = co.scan_html(page(body=html), "anim.html")
    assert bad == []


def test_jshtml_keeps_the_animation_controls(animation_html):
    original, html = animation_html
    for title in (
        "Decrease speed", "First frame", "Previous frame", "Play backwards", "Pause",
        "Play", "Next frame", "Last frame", "Increase speed",
    ):
        assert f'title="{title}"' in html
    assert html.count("<svg") == 9 == original.count('<i class="fa')
    assert "anim-slider" in html and "new Animation(" in html
    # three frames, and the first again as the image shown before the player's script runs
    assert html.count("data:image/png;base64,") == 3 + 1
    assert 'value="loop"' in html


def test_offline_jshtml_rejects_unknown_icons():
    from mbcourse.viz import offline_jshtml

    with pytest.raises(ValueError, match="fa-rocket"):
        offline_jshtml('<div class="anim-buttons"><i class="fa fa-rocket"></i></div>')
    assert offline_jshtml("<p>no player</p>") == "<p>no player</p>"
