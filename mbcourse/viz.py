"""Drawings of a Model, and offline-safe HTML for matplotlib animations.

:func:`draw` draws any :class:`~mbcourse.Model` at a configuration: each body as
lines from its centre of mass to the points of its joints, the joints, the
ground, the springs, and (on request) the hinge vectors. Because the picture is
computed from the Model, the drawing and the equations can never disagree.

:meth:`matplotlib.animation.Animation.to_jshtml` produces a self-contained
player, except for its buttons: the template loads Font Awesome 4 from a CDN
(``maxcdn.bootstrapcdn.com``) and draws every icon as ``<i class="fa ...">``.
Without a network the buttons are then blank. The functions here return the
same player with that stylesheet link removed and every icon drawn as a small
inline SVG, so the HTML needs nothing but itself: in a notebook, in the built
book, on an exam computer without network.

Use :func:`show_animation` in notebooks and :func:`jshtml` where a string is
needed; :func:`offline_jshtml` rewrites HTML that was already produced by
``to_jshtml()`` (the book's Sphinx extension applies it as a safety net).

Interactive 3D (three.js, vendored and inlined, so also offline): :func:`view` (one
configuration) and :func:`animate3d` (a motion), defined in :mod:`mbcourse.viz3d`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

from .coupling import coupled

if TYPE_CHECKING:  # pragma: no cover - imports for type checkers only
    from IPython.display import HTML
    from matplotlib.animation import Animation

__all__ = ["draw", "jshtml", "offline_jshtml", "until_trusted", "show_animation", "view", "animate3d"]

# The <link> to Font Awesome that matplotlib's HTMLWriter template puts first.
_FA_LINK = re.compile(
    r"<link\b[^>]*\bhref\s*=\s*[\"'][^\"']*font-awesome[^\"']*[\"'][^>]*>\s*",
    re.IGNORECASE,
)
# An icon of the template, e.g. <i class="fa fa-play fa-flip-horizontal"></i>.
_FA_ICON = re.compile(r"<i\s+class\s*=\s*\"(fa(?:\s+fa-[\w-]+)+)\"\s*>\s*</i>")

# 16x16 drawings of the nine icons matplotlib uses, filled with the button's
# text colour. Shapes only, so no font and no network is needed.
_SHAPES = {
    "fa-minus": '<rect x="2" y="7" width="12" height="2"/>',
    "fa-plus": '<rect x="2" y="7" width="12" height="2"/>'
    '<rect x="7" y="2" width="2" height="12"/>',
    "fa-play": '<polygon points="4,2 14,8 4,14"/>',
    "fa-play fa-flip-horizontal": '<polygon points="12,2 2,8 12,14"/>',
    "fa-pause": '<rect x="3" y="2" width="4" height="12"/>'
    '<rect x="9" y="2" width="4" height="12"/>',
    "fa-step-forward": '<polygon points="3,2 11,8 3,14"/>'
    '<rect x="11" y="2" width="2" height="12"/>',
    "fa-step-backward": '<rect x="3" y="2" width="2" height="12"/>'
    '<polygon points="13,2 5,8 13,14"/>',
    "fa-fast-forward": '<polygon points="1,2 7,8 1,14"/>'
    '<polygon points="7,2 13,8 7,14"/><rect x="13" y="2" width="2" height="12"/>',
    "fa-fast-backward": '<rect x="1" y="2" width="2" height="12"/>'
    '<polygon points="9,2 3,8 9,14"/><polygon points="15,2 9,8 15,14"/>',
}
_SVG = (
    '<svg class="mbc-anim-icon" viewBox="0 0 16 16" width="1em" height="1em" '
    'fill="currentColor" aria-hidden="true" focusable="false" '
    'style="vertical-align:-0.125em">{}</svg>'
)


def _icon(match: re.Match[str]) -> str:
    key = " ".join(match.group(1).split()[1:])
    try:
        return _SVG.format(_SHAPES[key])
    except KeyError:
        raise ValueError(
            f"unknown Font Awesome icon {match.group(1)!r} in matplotlib's "
            "animation template; add a shape for it to mbcourse.viz._SHAPES"
        ) from None


def offline_jshtml(html: str) -> str:
    """Make HTML from ``Animation.to_jshtml()`` independent of any network.

    Removes the Font Awesome stylesheet link (a CDN) and replaces each
    ``<i class="fa fa-...">`` icon by an equivalent inline SVG. Everything
    else (frames, script, slider, loop mode) is left as it is.

    Parameters
    ----------
    html : str
        HTML as returned by :meth:`matplotlib.animation.Animation.to_jshtml`.
        Text without Font Awesome references comes back unchanged.

    Returns
    -------
    str
        The same player, with self-contained button icons.

    Raises
    ------
    ValueError
        If the HTML uses an icon that has no SVG replacement here (which
        would mean matplotlib changed its template).

    Examples
    --------
    >>> old = ('<link rel="stylesheet" href="https://maxcdn.bootstrapcdn.com/'
    ...        'font-awesome/4.4.0/css/font-awesome.min.css">'
    ...        '<button title="Play"><i class="fa fa-play"></i></button>')
    >>> new = offline_jshtml(old)
    >>> "://" in new, "fa-play" in new, new.count("<svg")
    (False, False, 1)
    """
    if not isinstance(html, str):
        from .errors import ShapeError

        raise ShapeError(f"offline_jshtml needs the HTML text of Animation.to_jshtml() (a str), "
                         f"got {type(html).__name__}")
    return _FA_ICON.sub(_icon, _FA_LINK.sub("", html))


_PLAYER_IMG = re.compile(r'<img id="(_anim_img\w+)">')
# matplotlib continues the base64 text over lines with a backslash (a JavaScript string)
_FIRST_FRAME = re.compile(r'frames\[0\] = "(data:image/[\w+]+;base64,[A-Za-z0-9+/=\s\\]*)"')
_UNTRUSTED = "mbc-anim-untrusted"


def until_trusted(html: str, anim: Animation | None = None) -> str:
    """What a matplotlib player shows where its script does not run: in Jupyter, a
    notebook that is not trusted yet (fresh from git or a download) runs no JavaScript of
    its stored outputs. The player's image then shows the first frame (not a broken image),
    its nine buttons and slider stay hidden, and one line says how to make it play. The
    player's own script is unchanged; a short script after it shows the controls and
    removes the line. Applying it twice changes nothing.

    Parameters
    ----------
    html : str
        A player from :meth:`~matplotlib.animation.Animation.to_jshtml` (or :func:`jshtml`).
    anim : matplotlib.animation.Animation, optional
        Only for the frame count in the line.

    Returns
    -------
    str

    Examples
    --------
    >>> old = ('<img id="_anim_imgA1">\\n<div class="anim-controls">...</div>'
    ...        '<script>frames[0] = "data:image/png;base64,iVBO"</script>')
    >>> new = until_trusted(old)
    >>> '<img id="_anim_imgA1" src="data:image/png;base64,iVBO"' in new
    True
    >>> '<div class="anim-controls" style="display:none">' in new, until_trusted(new) == new
    (True, True)
    """
    img = _PLAYER_IMG.search(html)
    first = _FIRST_FRAME.search(html)
    if img is None or first is None or _UNTRUSTED in html:
        return html
    count = getattr(anim, "_save_count", None) if anim is not None else None
    what = f"Animation of {count} frames" if count else "Animation"
    line = (f'<div class="{_UNTRUSTED}">{what}, not playing: the notebook is not trusted. '
            'Run this cell, or trust the notebook (Command Palette: "Trust Notebook", or '
            "jupyter trust NOTEBOOK.ipynb in a terminal).</div>")
    src = "".join(first.group(1).replace("\\", "").split())
    html = (html[:img.start()] + f'<img id="{img.group(1)}" src="{src}" alt="first frame">'
            + line + html[img.end():])
    # a style, not the hidden attribute, which Jupyter's sanitizer removes
    html = html.replace('<div class="anim-controls">', '<div class="anim-controls" '
                        'style="display:none">', 1)
    show = ("<script>(function () { var i = document.getElementById('%s'), "
            "a = i && i.closest('.animation'); if (!a) return; "
            "a.querySelectorAll('.anim-controls').forEach(function (e) { "
            "e.style.display = ''; }); "
            "a.querySelectorAll('.%s').forEach(function (e) { e.remove(); }); })();</script>"
            % (img.group(1), _UNTRUSTED))
    return html + show


def _require_animation(anim, fn):
    """Refuse anything but a matplotlib Animation."""
    from matplotlib.animation import Animation as _Animation

    if not isinstance(anim, _Animation):
        from .errors import ShapeError

        raise ShapeError(f"{fn} needs a matplotlib Animation (e.g. FuncAnimation), got "
                         f"{type(anim).__name__}")


def jshtml(anim: Animation, **kwargs: Any) -> str:
    """Return the JavaScript HTML player of an animation, safe to use offline.

    Same as ``anim.to_jshtml(**kwargs)`` but the player's buttons are drawn
    with inline SVG instead of Font Awesome loaded from a CDN (see
    :func:`offline_jshtml`). The frames are embedded as ``data:`` images.

    Parameters
    ----------
    anim : matplotlib.animation.Animation
        The animation, e.g. a :class:`~matplotlib.animation.FuncAnimation`.
    **kwargs
        Passed on to :meth:`~matplotlib.animation.Animation.to_jshtml`:
        ``fps``, ``embed_frames`` (keep the default ``True`` for a
        self-contained page) and ``default_mode`` (``'loop'``, ``'once'`` or
        ``'reflect'``).

    Returns
    -------
    str
        HTML with the frames, the slider and the nine control buttons.

    See Also
    --------
    show_animation : the same, displayed in a notebook.

    Examples
    --------
    A three-frame animation of a tiny figure is quick to render:

    >>> import matplotlib.pyplot as plt
    >>> from matplotlib.animation import FuncAnimation
    >>> fig, ax = plt.subplots(figsize=(1, 1), dpi=20)
    >>> (line,) = ax.plot([], [])
    >>> anim = FuncAnimation(fig, lambda i: line.set_data([0, i], [0, i]),
    ...                      frames=3, interval=200)
    >>> html = jshtml(anim)
    >>> plt.close(fig)
    >>> "://" in html            # no link to any host, CDN or other
    False
    >>> html.count("<svg"), 'title="Play"' in html, "anim-slider" in html
    (9, True, True)
    """
    _require_animation(anim, "jshtml")
    return until_trusted(offline_jshtml(anim.to_jshtml(**kwargs)), anim)


def show_animation(anim: Animation, *, close: bool = True, **kwargs: Any) -> HTML:
    """Display an animation as an offline-safe HTML player in a notebook.

    Make it the last expression of a cell (or pass it to ``display``).

    Parameters
    ----------
    anim : matplotlib.animation.Animation
        The animation to show.
    close : bool, default True
        Close the animation's figure, so that the notebook does not show a
        static copy of its last frame under the player.
    **kwargs
        Passed on to :func:`jshtml`.

    Returns
    -------
    IPython.display.HTML
        The player, rendered by Jupyter and by the book. It also carries a PNG of
        the animation's first frame and a one-line text form, which is what the
        PDF version of the book (and a terminal) shows instead of the player.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from matplotlib.animation import FuncAnimation
    >>> fig, ax = plt.subplots(figsize=(1, 1), dpi=20)
    >>> anim = FuncAnimation(fig, lambda i: ax.set_title(str(i)), frames=2)
    >>> player = show_animation(anim)
    >>> plt.fignum_exists(fig.number), "<svg" in player.data
    (False, True)
    >>> player._repr_png_()[:4], repr(player)
    (b'\x89PNG', '[animation: 2 frames; it plays in the HTML version of the book]')
    >>> import struct
    >>> struct.unpack(">II", player._repr_png_()[16:24])    # width, height of the still
    (300, 300)
    """
    import io

    from IPython.display import HTML

    _require_animation(anim, "show_animation")
    fig = anim._fig
    html = jshtml(anim, **kwargs)
    # The still for the PDF: the first frame, drawn again after the player is made.
    frames = getattr(anim, "_save_count", None)
    try:
        first = next(iter(anim.new_saved_frame_seq()))
        anim._draw_frame(first)
    except Exception:  # pragma: no cover - an animation without a frame sequence
        pass
    buf = io.BytesIO()
    # the still is what a printed page shows: at least 150 dpi and 1200 pixels across
    # (an animation's own dpi is chosen for a light player, often 72-100)
    width = fig.get_size_inches()[0]
    fig.savefig(buf, format="png", dpi=min(300.0, max(150.0, 1200.0 / width)))
    png = buf.getvalue()
    if close:
        import matplotlib.pyplot as plt

        plt.close(fig)
    count = f"{frames} frames; " if frames else ""
    text = f"[animation: {count}it plays in the HTML version of the book]"

    class AnimationPlayer(HTML):
        def _repr_png_(self):
            return png

        def __repr__(self):
            return text

    return AnimationPlayer(html)


def _place_labels(ax, items, *, rounds=3):
    """Write labels next to points of a 2D drawing without overprinting.

    ``items`` are ``(point, text, style, neighbours)``: the data point a label names, its
    text and ``annotate`` style, and the points the drawing joins it to (the label
    prefers the side away from them). Each label tries positions around its point on
    rings of growing radius (in points, so independent of the data's scale) and takes the
    cheapest: overlapping a label already placed costs most, then covering a marker or
    a drawn line, then leaving the axes, then straying from the preferred side and from
    the point. A label moved off the first ring gets a thin leader line. Afterwards the
    axes' limits grow until every label lies inside them; the placement is then redone
    at the new scale (``rounds`` times at most).
    """
    fig = ax.figure
    placed_artists, sizes = [], {}
    for _ in range(rounds if len(items) <= 40 else 1):    # a crowd gets one round
        for artist in placed_artists:
            artist.remove()
        ax.autoscale_view()
        ax.apply_aspect()
        renderer = fig.canvas.get_renderer()
        px_per_pt = fig.dpi / 72.0
        axes_box = ax.get_window_extent(renderer)
        obstacles = _obstacles(ax, px_per_pt)
        placed_artists, boxes = [], []
        for point, label, style, neighbours in items:
            w, hgt = _label_size(ax, sizes, renderer, point, label, style)
            p = ax.transData.transform(point)
            away = _away_direction(ax, p, neighbours)
            boxes_c, rings, dirs = _candidates(p, w, hgt, px_per_pt)
            cost = 3.0 * (1.0 - dirs @ away) + 6.0 * rings
            _add_collision_costs(cost, boxes_c, boxes, obstacles, p, w, hgt, px_per_pt,
                                 axes_box)
            k = int(np.argmin(cost))
            ring, box = int(rings[k]), tuple(boxes_c[k])
            boxes.append(box)
            placed_artists.append(_annotate_at(ax, point, label, style, box, p, ring, px_per_pt))
        if _grow_limits(ax, boxes, axes_box, px_per_pt):
            break
    return placed_artists


def _obstacles(ax, px_per_pt):
    """What a label should not cover, in display pixels: the drawn lines' markers (centres
    and radii) and segments (as a list and as the arrays of their ends)."""
    to_px = ax.transData.transform
    segments, markers = [], []
    for line in ax.lines:
        xy = np.column_stack(line.get_data()).astype(float)
        if len(xy) == 0 or not np.isfinite(xy).all():
            continue
        d = to_px(xy)
        if line.get_marker() not in (None, "None", "", " "):
            rad = 0.5 * line.get_markersize() * px_per_pt + 1.0
            markers += [(p, rad) for p in d]
        if line.get_linestyle() not in ("None", "", " ") and len(d) > 1:
            segments += [(d[i], d[i + 1]) for i in range(len(d) - 1)]
    m_c = np.array([c for c, _ in markers]).reshape(-1, 2)
    m_r = np.array([rad for _, rad in markers])
    seg_a = np.array([a for a, _ in segments]).reshape(-1, 2)
    seg_b = np.array([b for _, b in segments]).reshape(-1, 2)
    return dict(m_c=m_c, m_r=m_r, segments=segments, seg_a=seg_a, seg_b=seg_b)


def _label_size(ax, sizes, renderer, point, label, style):
    """Width and height of a label in pixels (measured once per text and font size)."""
    key = (label, style.get("fontsize"))
    if key not in sizes:
        probe = ax.annotate(label, point, xytext=(0, 0), textcoords="offset points",
                            ha="left", va="bottom", **style)
        ext = probe.get_window_extent(renderer)
        probe.remove()
        sizes[key] = (ext.width, ext.height)
    return sizes[key]


def _away_direction(ax, p, neighbours):
    """The unit direction pointing away from the points a label's point is joined to
    (sideways, upwards, when it lies between them)."""
    to_px = ax.transData.transform
    away = np.zeros(2)
    for n in neighbours:
        u = to_px(n) - p
        norm = np.linalg.norm(u)
        if norm > 1.0:
            away -= u / norm
    if np.linalg.norm(away) < 0.3:        # between its neighbours: go sideways
        u = to_px(neighbours[0]) - p if neighbours else np.zeros(2)
        away = np.array([-u[1], u[0]]) if np.linalg.norm(u) > 1.0 else np.array([1.0, 1.0])
        if away[1] < 0:
            away = -away
    return away / np.linalg.norm(away)


def _add_collision_costs(cost, boxes_c, boxes, obstacles, p, w, hgt, px_per_pt, axes_box):
    """Add to ``cost`` (in place) what each candidate box costs: overlapping the labels
    already placed, covering markers and lines, leaving the axes."""
    m_c, m_r, segments = obstacles["m_c"], obstacles["m_r"], obstacles["segments"]
    seg_a, seg_b = obstacles["seg_a"], obstacles["seg_b"]
    reach = _RINGS[-1] * px_per_pt + w + hgt        # only what is near can collide
    near_m = np.flatnonzero((np.abs(m_c - p).max(1) < reach + m_r)) if len(m_r) else []
    near_s = [segments[i] for i in np.flatnonzero(
        (np.minimum(seg_a, seg_b) <= p + reach).all(1)
        & (np.maximum(seg_a, seg_b) >= p - reach).all(1))] if segments else []
    if boxes:
        cost += 1000.0 * _overlaps(boxes_c, np.array(boxes)).sum(1) / (w * hgt)
    if len(near_m):
        centres, radii = m_c[near_m], m_r[near_m]
        near = np.clip(centres[None], boxes_c[:, None, :2], boxes_c[:, None, 2:])
        cost += 60.0 * (np.linalg.norm(near - centres[None], axis=2) < radii).sum(1)
    if near_s:
        cost += 25.0 * _segment_hits_box(boxes_c, near_s).sum(1)
    cost += 0.3 * (np.maximum(0.0, axes_box.x0 - boxes_c[:, 0])
                   + np.maximum(0.0, boxes_c[:, 2] - axes_box.x1)
                   + np.maximum(0.0, axes_box.y0 - boxes_c[:, 1])
                   + np.maximum(0.0, boxes_c[:, 3] - axes_box.y1))


def _annotate_at(ax, point, label, style, box, p, ring, px_per_pt):
    """Write the label in its box; a thin leader line when it left the first ring."""
    x0, y0 = box[0] - p[0], box[1] - p[1]
    leader = dict(arrowstyle="-", lw=0.6, color="0.45", shrinkA=0, shrinkB=3) \
        if ring > 0 else None
    return ax.annotate(
        label, point, xytext=(x0 / px_per_pt, y0 / px_per_pt), textcoords="offset points",
        ha="left", va="bottom", arrowprops=leader, annotation_clip=False, zorder=7, **style)


def _grow_limits(ax, boxes, axes_box, px_per_pt):
    """Whether every label lies inside the axes (with a margin of a few points); if not,
    grow the data limits to take them in."""
    margin = 4.0 * px_per_pt
    corners = np.array([[b[0] - margin, b[1] - margin] for b in boxes]
                       + [[b[2] + margin, b[3] + margin] for b in boxes])
    inside = ((corners[:, 0] >= axes_box.x0).all() and (corners[:, 0] <= axes_box.x1).all()
              and (corners[:, 1] >= axes_box.y0).all() and (corners[:, 1] <= axes_box.y1).all())
    if not inside:
        ax.update_datalim(ax.transData.inverted().transform(corners))
    return inside


_RINGS = (7.0, 13.0, 22.0, 34.0, 50.0)        # radii of the candidate positions [points]
_ANGLES = np.linspace(0.0, 2.0 * np.pi, 24, endpoint=False)


def _candidates(p, w, h, px_per_pt):
    """Boxes (x0, y0, x1, y1) of a w x h label around the display point p, on each ring at
    each angle, touching the ring on the side facing p; with their ring and direction."""
    u = np.column_stack([np.cos(_ANGLES), np.sin(_ANGLES)])
    rings = np.repeat(np.arange(len(_RINGS)), len(_ANGLES))
    dirs = np.tile(u, (len(_RINGS), 1))
    off = np.repeat(np.array(_RINGS), len(_ANGLES))[:, None] * px_per_pt * dirs
    lo = p + off - np.array([w, h]) * (0.5 - 0.5 * np.clip(2.0 * dirs, -1.0, 1.0))
    return np.hstack([lo, lo + [w, h]]), rings, dirs


def _overlaps(a, b):
    """Areas shared by boxes a (k, 4) and b (m, 4): (k, m)."""
    dx = np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0])
    dy = np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1])
    return np.maximum(dx, 0.0) * np.maximum(dy, 0.0)


def _segment_hits_box(boxes, segments, samples=7):
    """(k, s): whether segment s passes through box k (sampled: labels are small)."""
    a = np.array([s[0] for s in segments])
    b = np.array([s[1] for s in segments])
    t = np.linspace(0.0, 1.0, samples)[None, :, None]
    pts = a[:, None] + t * (b - a)[:, None]                      # (s, samples, 2)
    x, y = pts[None, ..., 0], pts[None, ..., 1]
    bx = boxes[:, None, None]
    inside = (x > bx[..., 0]) & (x < bx[..., 2]) & (y > bx[..., 1]) & (y < bx[..., 3])
    return inside.any(axis=2)


_PLANES = {"xy": (0, 1), "xz": (0, 2), "yz": (1, 2), "zx": (2, 0), "zy": (2, 1), "yx": (1, 0)}


@coupled("state")
def draw(model, q=None, *, ax=None, plane="xy", t=0.0, labels=True, centres=True,
         hinge_vectors=False, color=None, alpha=1.0, lw=4.0, poses=None):
    """Draw a model at a configuration, labelled, with matplotlib.

    Every moving body is drawn as thick lines from its centre of mass to the
    points where its joints attach (for a link hinged at both ends with its
    centre between them, a straight bar); a joint is a small circle at its
    point on the child, and a sliding joint's travel is a dotted line from its
    point on the parent; a joint held by the base is marked by a grey triangle;
    a spring is a dashed line.
    All positions come from :meth:`Model.body_poses`, so the picture is the
    model's, not a sketch of it.

    Parameters
    ----------
    model : Model
    q : array_like, shape (nq,), optional
        Configuration; default :meth:`Model.neutral_q`.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted. A 3D axes (``projection='3d'``)
        gets the three-dimensional picture and ``plane`` is ignored.
    plane : {'xy', 'xz', 'yz', 'zx', 'zy', 'yx'}
        Which inertial coordinates become the horizontal and vertical axes.
    t : float
        Time, for a prescribed base motion.
    labels : bool
        Write the bodies' and joints' names.
    centres : bool
        Mark the centres of mass.
    hinge_vectors : bool
        Draw Wittenburg's hinge vectors (from a body's centre of mass to each of
        its joint points) as arrows.
    color : colour, optional
        One colour for every body (for ghost images of earlier poses); default
        a distinct colour per body.
    alpha, lw : float
        Transparency and width of the bodies' lines.
    poses : (r, A), optional
        The bodies' centres ``r`` (n + 1, 3) and orientations ``A`` (n + 1, 3, 3), as
        :meth:`Model.body_poses` returns them, instead of ``q``: absolute coordinates that
        need not satisfy the joints (chapter 2's drifting states). Sliding joints then draw
        no travel.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ModelError
        ``plane`` is not one of the names above.
    ShapeError
        ``q`` is not a finite vector of length ``model.nq``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import mbcourse as mb
    >>> model = mb.models.double_pendulum()
    >>> ax = draw(model, [0.5, 1.0])
    >>> sorted(t.get_text() for t in ax.texts)[:2]
    ['A', 'B']
    >>> len(ax.lines) > 0
    True
    """
    import matplotlib.pyplot as plt

    from .errors import ModelError

    three_d = ax is not None and getattr(ax, "name", "") == "3d"
    if not three_d and (not isinstance(plane, str) or plane not in _PLANES):
        raise ModelError(f"plane must be one of {sorted(_PLANES)}, got {plane!r}")
    _check_style(model, ax, t, color, alpha, lw)
    r, A, q = _drawn_poses(model, q, poses, t)
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 4))
    pen = _Pen(ax, three_d, *_PLANES.get(plane, (0, 1)))
    on_parent = [r[j.parent] + A[j.parent] @ (j.parent_point + (0.0 if q is None else
                                                                 j.z(q[j.q_slice])))
                 for j in model.joints]
    anchor = [r[j.parent] + A[j.parent] @ j.parent_point for j in model.joints]
    on_child = [r[j.child] + A[j.child] @ j.child_point for j in model.joints]
    style = dict(color=color, alpha=alpha, lw=lw, labels=labels, centres=centres,
                 hinge_vectors=hinge_vectors)
    pending = []                 # 2D labels: (point, text, style, points it is joined to)
    for b in range(1, model.n + 1):
        _draw_body(pen, model, b, r, A, anchor, on_child, style, pending)
    for k, j in enumerate(model.joints):
        _draw_joint(pen, j, r, anchor[k], on_parent[k], on_child[k], alpha, labels, pending)
    for s in model.springs:
        a = r[s.body_a] + A[s.body_a] @ s.point_a
        b = r[s.body_b] + A[s.body_b] @ s.point_b
        pen.seg(a, b, color="k", lw=1, ls="--", alpha=alpha)
    if not three_d:
        _finish_plane(pen, pending)
    return ax


def _check_style(model, ax, t, color, alpha, lw):
    """Refuse a model, axes, time or line style that :func:`draw` cannot use, by name."""
    import numbers

    from matplotlib.colors import is_color_like

    from .errors import ModelError, ShapeError
    from .model import Model

    if not isinstance(model, Model):
        raise ModelError(f"draw: model must be an mbcourse.Model (the first argument: "
                         f"draw(model, q)), got {type(model).__name__}")
    if ax is not None and not hasattr(ax, "plot"):
        raise ShapeError(f"ax must be a matplotlib Axes, got {ax!r}")
    if isinstance(t, bool) or not isinstance(t, numbers.Real) or not np.isfinite(t):
        raise ShapeError(f"t must be a finite real number (the time), got {t!r}")
    if color is not None and not is_color_like(color):
        raise ShapeError(f"color must be a matplotlib colour ('C0', 'red', '#1f77b4', (r, g, b)) "
                         f"or None, got {color!r}")
    for name, value, ok in (("alpha", alpha, lambda x: 0 <= x <= 1),
                            ("lw", lw, lambda x: x > 0)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not ok(value):
            raise ShapeError(f"{name} must be a number {'in [0, 1]' if name == 'alpha' else '> 0'}"
                             f", got {value!r}")


def _drawn_poses(model, q, poses, t):
    """The bodies' ``r``, ``A`` to draw, from checked ``poses`` or a checked ``q`` (and the
    ``q``, None when poses were given)."""
    from .errors import ShapeError

    if poses is not None:
        try:
            r, A = (np.asarray(x, dtype=float) for x in poses)
        except (TypeError, ValueError):
            raise ShapeError(f"poses must be a pair (r, A) of arrays of numbers, shapes "
                             f"({model.n + 1}, 3) and ({model.n + 1}, 3, 3)") from None
        if r.shape != (model.n + 1, 3) or A.shape != (model.n + 1, 3, 3):
            raise ShapeError(f"poses must be (r, A) of shapes ({model.n + 1}, 3) and "
                             f"({model.n + 1}, 3, 3), got {r.shape} and {A.shape}")
        if not (np.isfinite(r).all() and np.isfinite(A).all()):
            raise ShapeError("poses contain NaN or infinity: every entry must be finite")
        return r, A, None
    q = model.neutral_q() if q is None else q
    q = model.check_q(q)
    if q.ndim != 1:
        raise ShapeError(f"draw takes one configuration q of shape ({model.nq},), "
                         f"got shape {q.shape}")
    r, A = model.body_poses(q, t=t)
    return r, A, q


class _Pen:
    """Draws inertial points on 2D axes (the plane's coordinates ``h``, ``v``) or 3D axes."""

    def __init__(self, ax, three_d, h, v):
        """A pen on ``ax``; ``h``, ``v`` index the plane's coordinates (2D)."""
        self.ax, self.three_d, self.h, self.v = ax, three_d, h, v

    def xy(self, p):
        """The point's plotted coordinates."""
        return (p[0], p[1], p[2]) if self.three_d else (p[self.h], p[self.v])

    def seg(self, a, b, **kw):
        """A line from ``a`` to ``b``."""
        h, v = self.h, self.v
        if self.three_d:
            self.ax.plot([a[0], b[0]], [a[1], b[1]], [a[2], b[2]], **kw)
        else:
            self.ax.plot([a[h], b[h]], [a[v], b[v]], **kw)

    def text(self, p, s, **kw):
        """A text at ``p`` (3D only; 2D labels are placed by :func:`_place_labels`)."""
        self.ax.text(p[0], p[1], p[2], s, **kw)


def _draw_body(pen, model, b, r, A, anchor, on_child, style, pending):
    """Body ``b``: lines from its centre to its joint and spring points (a block when it has
    none), its centre, its label, its hinge vectors."""
    ax, lw, alpha = pen.ax, style["lw"], style["alpha"]
    c = style["color"] if style["color"] is not None else f"C{(b - 1) % 10}"
    points = ([on_child[k] for k, j in enumerate(model.joints) if j.child == b]
              + [anchor[k] for k, j in enumerate(model.joints) if j.parent == b])
    for s in model.springs:
        for body, point in ((s.body_a, s.point_a), (s.body_b, s.point_b)):
            if body == b:
                points.append(r[b] + A[b] @ point)
    if not points or max(np.linalg.norm(p - r[b]) for p in points) < 1e-12:
        # a point mass or a body whose joints sit at its centre: a block
        ax.plot(*pen.xy(r[b]), "s", ms=3 * lw, color=c, alpha=alpha,
                label=model.bodies[b].name)
    else:
        first = True
        for p in points:
            pen.seg(r[b], p, color=c, lw=lw, alpha=alpha, solid_capstyle="round",
                    label=model.bodies[b].name if first else None)
            first = False
    if style["centres"]:
        ax.plot(*pen.xy(r[b]), "o", ms=lw + 2, mfc=c, mec="k", alpha=alpha, zorder=4)
    if style["labels"]:
        if pen.three_d:
            pen.text(r[b], model.bodies[b].name, color=c, fontsize=9)
        else:
            pending.append((r[b], model.bodies[b].name, dict(color=c, fontsize=9),
                            [p for p in points]))
    if style["hinge_vectors"] and not pen.three_d:
        h, v = pen.h, pen.v
        for p in points:
            ax.annotate("", (p[h], p[v]), (r[b][h], r[b][v]),
                        arrowprops=dict(arrowstyle="->", color="k", lw=1), zorder=5)


def _draw_joint(pen, j, r, anchor, on_parent, on_child, alpha, labels, pending):
    """Joint ``j``: the base's triangle, a slide's travel, its circle, its label."""
    ax = pen.ax
    if j.parent == 0 and j.nv < 6:      # held by the base (a free joint holds nothing)
        ax.plot(*pen.xy(anchor), "^", ms=12, color="0.55", zorder=1)
    if np.linalg.norm(on_parent - anchor) > 1e-12:      # a slide
        pen.seg(anchor, on_parent, color="0.4", lw=1.5, ls=":")
    ax.plot(*pen.xy(on_child), "o", ms=6, mfc="white", mec="k", zorder=6, alpha=alpha)
    if labels:
        if pen.three_d:
            pen.text(on_child, j.name, fontsize=8)
        else:
            pending.append((on_child, j.name, dict(fontsize=8),
                            [r[j.child], anchor] + ([r[j.parent]] if j.parent else [])))


def _finish_plane(pen, pending):
    """A 2D drawing: equal scales, axis names, the labels placed."""
    ax, h, v = pen.ax, pen.h, pen.v
    ax.set_aspect("equal", adjustable="datalim")
    names = "xyz"
    ax.set_xlabel(f"{names[h]} [m]")
    ax.set_ylabel(f"{names[v]} [m]")
    if pending:
        _place_labels(ax, [(np.array([p[h], p[v]]), s, kw,
                            [np.array([n[h], n[v]]) for n in nb]) for p, s, kw, nb in pending])


from .viz3d import animate3d, view  # noqa: E402  (3D views, three.js)
