#!/usr/bin/env python3
"""Check that a built HTML site loads nothing from the network.

Usage::

    python tools/check_offline.py [SITE_DIR ...] [--links] [--show-allowed]

``SITE_DIR`` defaults to ``_build/html`` (the book); ``_build/slides`` (the
lecture decks of ``tools/slides.py``) is checked the same way: the decks keep
their assets in the book's ``_static`` layout (MathJax in ``_static/mathjax``,
the widget embedder in ``_static/offline/widgets``, reveal.js in
``_static/reveal``), so the same excuses below apply. Several directories may
be given; each is checked on its own. Every ``.html``/``.svg``, ``.css``,
``.js`` and ``.json`` file under it is scanned for references that a browser
would fetch by itself when a page is opened:

* HTML: ``src``/``srcset``/``poster``/``data`` of scripts, images, iframes,
  media, objects; ``<link href>`` (stylesheets, icons, preload, preconnect);
  ``<base href>``; ``<use href>``; and CSS in ``<style>`` and ``style=``.
* CSS: ``@import`` and ``url(...)`` pointing to ``http(s)://`` or ``//``.
* JavaScript (files and inline ``<script>``): ``http(s)://`` URLs of known
  CDN / web-font / analytics hosts, and any absolute URL of a script,
  stylesheet or font file.
* Attributes of any HTML element, and ``.json`` files: URLs on known CDN hosts.

Plain hyperlinks (``<a href="https://...">``, ``<link rel="canonical">``,
forms) are not loaded automatically and are not violations; ``--links`` lists
them. A few URLs inside vendored bundles are dead code when the site is used
offline in a current browser; they are listed in ``ALLOWED`` with the reason,
matched by file and exact URL (``--show-allowed`` prints them).

Exits 1 and prints ``file:line: url  (why)`` for each violation, 0 otherwise,
2 if the directory does not exist. Needs only the standard library.
"""

from __future__ import annotations

import argparse
import fnmatch
import re
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

# Hosts whose only purpose is serving assets: any mention of them in the
# built site is treated as something that may be loaded.
CDN_HOSTS = (
    "jsdelivr.net",
    "cdnjs.cloudflare.com",
    "cdnjs.com",
    "unpkg.com",
    "bootstrapcdn.com",  # maxcdn., stackpath., netdna.
    "maxcdn.com",
    "fonts.googleapis.com",
    "fonts.gstatic.com",
    "ajax.googleapis.com",
    "code.jquery.com",
    "cdn.mathjax.org",
    "use.fontawesome.com",
    "kit.fontawesome.com",
    "ka-f.fontawesome.com",
    "use.typekit.net",
    "p.typekit.net",
    "cdn.plot.ly",
    "cdn.bokeh.org",
    "polyfill.io",
    "esm.sh",
    "cdn.skypack.dev",
    "jspm.io",
    "githack.com",
    "gitcdn.xyz",
    "cdn.statically.io",
    "rawgit.com",
    "raw.githubusercontent.com",
    "cdn.datatables.net",
    "d3js.org",
    "cdn.tailwindcss.com",
    "googletagmanager.com",
    "google-analytics.com",
)

# (file glob relative to the site root, URL glob, why it cannot be loaded)
ALLOWED = (
    (
        "_static/mathjax/*",
        "https://cdn.jsdelivr.net/npm/speech-rule-engine@",
        "MathJax 3 speech-rule-engine default; MathJax points it at its own "
        "_static/mathjax/sre/mathmaps",
    ),
    (
        "_static/mathjax/*",
        "https://cdn.jsdelivr.net/npm/sre-mathmaps-ie@",
        "MathJax 3: Internet Explorer only",
    ),
    (
        "_static/mathjax/*",
        "https://cdn.jsdelivr.net/npm/wicked-good-xpath@1.3.0/dist/wgxpath.install.js",
        "MathJax 3: XPath polyfill for Internet Explorer / Node only",
    ),
    (
        "_static/offline/widgets/embed.js",
        "https://cdn.jsdelivr.net/npm/",
        "ipywidgets html-manager: default CDN for third-party widget modules; "
        "the built-in controls/output widgets are bundled",
    ),
    (
        "_static/offline/widgets/embed.js",
        "https://raw.githubusercontent.com/ajv-validator/ajv/master/lib/refs/data.json#",
        "ipywidgets html-manager: a JSON-schema $id, an identifier that is never fetched",
    ),
    (
        "_static/offline/widgets/embed.js",
        "https://fonts.googleapis.com/css?family=Roboto+Mono",
        "ipywidgets html-manager: inside a CSS comment",
    ),
)

SCANNED_SUFFIXES = {
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".svg": "html",
    ".css": "css",
    ".js": "js",
    ".mjs": "js",
    ".cjs": "js",
    ".json": "text",
}

# <link rel=...> values that only describe a relation and fetch nothing.
NAVIGATION_RELS = {
    "alternate", "author", "bookmark", "canonical", "contents", "copyright",
    "edit", "external", "first", "glossary", "help", "index", "last",
    "license", "me", "next", "nofollow", "noopener", "noreferrer", "prev",
    "previous", "search", "start", "top", "up",
}
# Attributes that make the browser fetch a URL, per element ("*": any).
LOADING_ATTRS = {
    "script": ("src",),
    "img": ("src", "srcset", "lowsrc"),
    "source": ("src", "srcset"),
    "iframe": ("src",),
    "frame": ("src",),
    "embed": ("src",),
    "audio": ("src",),
    "video": ("src", "poster"),
    "track": ("src",),
    "input": ("src",),
    "object": ("data", "codebase"),
    "image": ("href", "xlink:href"),  # SVG
    "use": ("href", "xlink:href"),  # SVG
    "feimage": ("href", "xlink:href"),  # SVG
    "body": ("background",),
    "table": ("background",),
    "td": ("background",),
}
HYPERLINK_ATTRS = {"a": "href", "area": "href", "form": "action"}

# Code-hosting sites serve pages about files (comments in bundles cite them),
# not the files themselves; their raw hosts are in CDN_HOSTS.
SOURCE_PAGE_HOSTS = ("github.com", "gitlab.com", "bitbucket.org")

_EXTERNAL = re.compile(r"^\s*(?:https?:)?//", re.IGNORECASE)
_URL_IN_TEXT = re.compile(r"https?://[^\s\"'`()<>\\,;{}\[\]]+", re.IGNORECASE)
_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_CSS_URL = re.compile(r"url\(\s*([\"']?)(.*?)\1\s*\)", re.IGNORECASE | re.DOTALL)
_CSS_IMPORT = re.compile(r"@import\s+([\"'])(.*?)\1", re.IGNORECASE)
_ASSET_PATH = re.compile(
    r"\.(?:m?js|css|woff2?|ttf|otf|eot)(?:[?#].*)?$", re.IGNORECASE
)


@dataclass(frozen=True)
class Finding:
    """One URL found in the site."""

    path: str
    line: int
    url: str
    why: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.url}  ({self.why})"


def is_external(url: str) -> bool:
    """True for ``http://``, ``https://`` and protocol-relative ``//`` URLs."""
    return bool(_EXTERNAL.match(url))


def _on_host(url: str, hosts: tuple[str, ...]) -> str | None:
    try:
        host = (urlsplit(url.strip()).hostname or "").lower()
    except ValueError:
        return None
    for known in hosts:
        if host == known or host.endswith("." + known):
            return known
    return None


def cdn_host(url: str) -> str | None:
    """The known CDN host of *url*, or None."""
    return _on_host(url, CDN_HOSTS)


def _line(text: str, pos: int, first_line: int = 1) -> int:
    return first_line + text.count("\n", 0, pos)


def _blank_comments(css: str) -> str:
    """Replace CSS comments by whitespace, keeping line numbers."""
    return _CSS_COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), css)


def scan_css(css: str, path: str = "<css>", first_line: int = 1) -> list[Finding]:
    """Violations in a stylesheet (file, ``<style>`` or ``style=``)."""
    css = _blank_comments(css)
    found = []
    for regex, why in ((_CSS_URL, "CSS url()"), (_CSS_IMPORT, "CSS @import")):
        for m in regex.finditer(css):
            url = m.group(2).strip()
            if is_external(url):
                found.append(Finding(path, _line(css, m.start(), first_line), url, why))
    return sorted(found, key=lambda f: f.line)


def scan_js(js: str, path: str = "<js>", first_line: int = 1) -> list[Finding]:
    """Violations in JavaScript: CDN URLs and absolute URLs of assets."""
    found = []
    for m in _URL_IN_TEXT.finditer(js):
        url = m.group()
        host = cdn_host(url)
        if host:
            why = f"CDN host {host} in script"
        elif _ASSET_PATH.search(urlsplit(url).path or "") and not _on_host(
            url, SOURCE_PAGE_HOSTS
        ):
            why = "absolute URL of a script/style/font in script"
        else:
            continue
        found.append(Finding(path, _line(js, m.start(), first_line), url, why))
    return found


def scan_text(text: str, path: str = "<text>") -> list[Finding]:
    """Violations in any text: URLs on known CDN hosts."""
    return [
        Finding(path, _line(text, m.start()), m.group(), f"CDN host {cdn_host(m.group())}")
        for m in _URL_IN_TEXT.finditer(text)
        if cdn_host(m.group())
    ]


def _srcset_urls(value: str) -> list[str]:
    return [part.split()[0] for part in value.split(",") if part.split()]


class _PageScanner(HTMLParser):
    def __init__(self, path: str):
        super().__init__(convert_charrefs=True)
        self.path = path
        self.violations: list[Finding] = []
        self.links: list[Finding] = []
        self._raw: tuple[str, int, list[str]] | None = None  # tag, line, chunks

    def _add(self, url: str, why: str, line: int | None = None) -> None:
        line = self.getpos()[0] if line is None else line
        self.violations.append(Finding(self.path, line, url.strip(), why))

    def handle_starttag(self, tag, attrs):
        self._check_tag(tag, attrs)
        if tag in ("script", "style"):
            self._raw = (tag, self.getpos()[0], [])

    def handle_startendtag(self, tag, attrs):
        self._check_tag(tag, attrs)

    def _check_tag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k.lower(): (v or "") for k, v in attrs}
        line = self.getpos()[0]
        for name in LOADING_ATTRS.get(tag, ()):
            if name not in a:
                continue
            urls = _srcset_urls(a[name]) if name.endswith("srcset") else [a[name]]
            for url in urls:
                if is_external(url):
                    self._add(url, f"<{tag} {name}>")
        if tag == "link" and is_external(a.get("href", "")):
            rels = set(a.get("rel", "").lower().split())
            if rels and rels <= NAVIGATION_RELS:
                self.links.append(Finding(self.path, line, a["href"].strip(), f"<link rel={a['rel']}>"))
            else:
                self._add(a["href"], f"<link rel={a.get('rel', '')!s}>")
        if tag == "base" and is_external(a.get("href", "")):
            self._add(a["href"], "<base href> makes relative URLs remote")
        if tag in HYPERLINK_ATTRS and is_external(a.get(HYPERLINK_ATTRS[tag], "")):
            url = a[HYPERLINK_ATTRS[tag]].strip()
            self.links.append(Finding(self.path, line, url, f"<{tag}> hyperlink"))
        if "style" in a:
            self.violations.extend(scan_css(a["style"], self.path, line))
        # Any other attribute (data-*, JSON config, ...) naming a CDN.
        for name, value in a.items():
            if name in LOADING_ATTRS.get(tag, ()) or name in ("href", "style", "action"):
                continue
            for m in _URL_IN_TEXT.finditer(value):
                if cdn_host(m.group()):
                    self._add(m.group(), f"CDN host in <{tag} {name}>")

    def handle_data(self, data):
        if self._raw is not None:
            self._raw[2].append(data)

    def handle_endtag(self, tag):
        if self._raw is not None and tag == self._raw[0]:
            kind, line, chunks = self._raw
            body = "".join(chunks)
            if kind == "style":
                self.violations.extend(scan_css(body, self.path, line))
            else:
                self.violations.extend(scan_js(body, self.path, line))
            self._raw = None


def scan_html(html: str, path: str = "<html>") -> tuple[list[Finding], list[Finding]]:
    """Return ``(violations, hyperlinks)`` of an HTML (or SVG) document."""
    scanner = _PageScanner(path)
    scanner.feed(html)
    scanner.close()
    # Text between tags is only displayed (a URL in prose or a code block is
    # not fetched), so it is not scanned; comments are skipped by the parser.
    return _dedupe(scanner.violations), scanner.links


def _dedupe(findings: list[Finding]) -> list[Finding]:
    return list(dict.fromkeys(findings))


def scan_file(path: Path, rel: str) -> tuple[list[Finding], list[Finding]]:
    """Return ``(violations, hyperlinks)`` of one file; *rel* names it."""
    kind = SCANNED_SUFFIXES.get(path.suffix.lower())
    if kind is None:
        return [], []
    text = path.read_text(encoding="utf-8", errors="replace")
    if kind == "html":
        return scan_html(text, rel)
    if kind == "css":
        return _dedupe(scan_css(text, rel) + scan_text(_blank_comments(text), rel)), []
    if kind == "js":
        return _dedupe(scan_js(text, rel)), []
    return scan_text(text, rel), []


def is_allowed(finding: Finding) -> str | None:
    """The reason from ``ALLOWED`` that excuses *finding*, or None."""
    for file_glob, url_glob, why in ALLOWED:
        if fnmatch.fnmatchcase(finding.path, file_glob) and fnmatch.fnmatchcase(
            finding.url, url_glob
        ):
            return why
    return None


def check_site(root: Path) -> tuple[list[Finding], list[Finding], list[Finding]]:
    """Scan a site; return ``(violations, allowed, hyperlinks)``."""
    violations, allowed, links = [], [], []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        bad, hyper = scan_file(path, rel)
        links.extend(hyper)
        for f in bad:
            why = is_allowed(f)
            if why:
                allowed.append(Finding(f.path, f.line, f.url, why))
            else:
                violations.append(f)
    return violations, allowed, links


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", nargs="*", default=[Path("_build/html")], type=Path,
                        help="built site(s): _build/html (default), _build/slides")
    parser.add_argument("--links", action="store_true", help="list external hyperlinks")
    parser.add_argument("--show-allowed", action="store_true", help="list excused URLs")
    args = parser.parse_args(argv)
    missing = [s for s in args.site if not s.is_dir()]
    for site in missing:
        print(f"check_offline: {site} is not a directory (build it first: make book, "
              "make slides)", file=sys.stderr)
    if missing:
        return 2
    return max(check_one(site, args.links, args.show_allowed) for site in args.site)


def check_one(site: Path, links_wanted: bool = False, show_allowed: bool = False) -> int:
    """Check one built site and print the outcome; 0 if it is offline, 1 otherwise."""
    violations, allowed, links = check_site(site)
    if links_wanted:
        hosts = sorted({urlsplit(f.url).hostname or f.url for f in links})
        print(f"{len(links)} external hyperlinks (not loaded automatically) to: {', '.join(hosts)}")
        for f in links:
            print(f"  {f}")
    if show_allowed:
        for f in allowed:
            print(f"  allowed {f}")
    if violations:
        print(
            f"check_offline: {len(violations)} reference(s) in {site} would load "
            "from the network; the site must work offline:",
            file=sys.stderr,
        )
        for f in violations:
            print(f"  {site.as_posix().rstrip('/')}/{f}", file=sys.stderr)
        return 1
    print(
        f"check_offline: OK, {site} loads nothing from the network "
        f"({len(links)} external hyperlinks, {len(allowed)} excused URLs in vendored bundles)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
