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

if TYPE_CHECKING:  # pragma: no cover - imports for type checkers only
    from IPython.display import HTML
    from matplotlib.animation import Animation

__all__ = ["draw", "jshtml", "offline_jshtml", "show_animation", "view", "animate3d"]

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
    return _FA_ICON.sub(_icon, _FA_LINK.sub("", html))


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
    return offline_jshtml(anim.to_jshtml(**kwargs))


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
    """
    import io

    from IPython.display import HTML

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
    fig.savefig(buf, format="png")
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


_PLANES = {"xy": (0, 1), "xz": (0, 2), "yz": (1, 2), "zx": (2, 0), "zy": (2, 1), "yx": (1, 0)}


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
    if not three_d and plane not in _PLANES:
        raise ModelError(f"plane must be one of {sorted(_PLANES)}, got {plane!r}")
    from .errors import ShapeError

    if poses is not None:
        r, A = (np.asarray(x, dtype=float) for x in poses)
        if r.shape != (model.n + 1, 3) or A.shape != (model.n + 1, 3, 3):
            raise ShapeError(f"poses must be (r, A) of shapes ({model.n + 1}, 3) and "
                             f"({model.n + 1}, 3, 3), got {r.shape} and {A.shape}")
        if not (np.isfinite(r).all() and np.isfinite(A).all()):
            raise ShapeError("poses contain NaN or infinity: every entry must be finite")
        q = None
    else:
        q = model.neutral_q() if q is None else q
        q = model.check_q(q)
        if q.ndim != 1:
            raise ShapeError(f"draw takes one configuration q of shape ({model.nq},), "
                             f"got shape {q.shape}")
        r, A = model.body_poses(q, t=t)
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 4))
    h, v = _PLANES.get(plane, (0, 1))

    def xy(p):
        return (p[0], p[1], p[2]) if three_d else (p[h], p[v])

    def seg(a, b, **kw):
        if three_d:
            ax.plot([a[0], b[0]], [a[1], b[1]], [a[2], b[2]], **kw)
        else:
            ax.plot([a[h], b[h]], [a[v], b[v]], **kw)

    def text(p, s, **kw):
        if three_d:
            ax.text(p[0], p[1], p[2], s, **kw)
        else:
            ax.annotate(s, (p[h], p[v]), textcoords="offset points", **kw)

    on_parent = [r[j.parent] + A[j.parent] @ (j.parent_point + (0.0 if q is None else
                                                                 j.z(q[j.q_slice])))
                 for j in model.joints]
    anchor = [r[j.parent] + A[j.parent] @ j.parent_point for j in model.joints]
    on_child = [r[j.child] + A[j.child] @ j.child_point for j in model.joints]
    for b in range(1, model.n + 1):
        c = color if color is not None else f"C{(b - 1) % 10}"
        points = ([on_child[k] for k, j in enumerate(model.joints) if j.child == b]
                  + [anchor[k] for k, j in enumerate(model.joints) if j.parent == b])
        for s in model.springs:
            for body, point in ((s.body_a, s.point_a), (s.body_b, s.point_b)):
                if body == b:
                    points.append(r[b] + A[b] @ point)
        if not points or max(np.linalg.norm(p - r[b]) for p in points) < 1e-12:
            # a point mass or a body whose joints sit at its centre: a block
            ax.plot(*xy(r[b]), "s", ms=3 * lw, color=c, alpha=alpha,
                    label=model.bodies[b].name)
        else:
            first = True
            for p in points:
                seg(r[b], p, color=c, lw=lw, alpha=alpha, solid_capstyle="round",
                    label=model.bodies[b].name if first else None)
                first = False
        if centres:
            ax.plot(*xy(r[b]), "o", ms=lw + 2, mfc=c, mec="k", alpha=alpha, zorder=4)
        if labels:
            extra = {} if three_d else {"xytext": (6, 6)}
            text(r[b], model.bodies[b].name, color=c, fontsize=9, **extra)
        if hinge_vectors and not three_d:
            for p in points:
                ax.annotate("", (p[h], p[v]), (r[b][h], r[b][v]),
                            arrowprops=dict(arrowstyle="->", color="k", lw=1), zorder=5)
    for k, j in enumerate(model.joints):
        if j.parent == 0 and j.nv < 6:      # held by the base (a free joint holds nothing)
            ax.plot(*xy(anchor[k]), "^", ms=12, color="0.55", zorder=1)
        if np.linalg.norm(on_parent[k] - anchor[k]) > 1e-12:      # a slide
            seg(anchor[k], on_parent[k], color="0.4", lw=1.5, ls=":")
        ax.plot(*xy(on_child[k]), "o", ms=6, mfc="white", mec="k", zorder=6,
                alpha=alpha)
        if labels:
            if three_d:
                text(on_child[k], j.name, fontsize=8)
            else:
                text(on_child[k], j.name, xytext=(5, -12), fontsize=8)
    for s in model.springs:
        a = r[s.body_a] + A[s.body_a] @ s.point_a
        b = r[s.body_b] + A[s.body_b] @ s.point_b
        seg(a, b, color="k", lw=1, ls="--", alpha=alpha)
    if not three_d:
        ax.set_aspect("equal", adjustable="datalim")
        names = "xyz"
        ax.set_xlabel(f"{names[h]} [m]")
        ax.set_ylabel(f"{names[v]} [m]")
    return ax


from .viz3d import animate3d, view  # noqa: E402  (3D views, three.js)
