"""Offline-safe HTML for matplotlib animations.

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
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - imports for type checkers only
    from IPython.display import HTML
    from matplotlib.animation import Animation

__all__ = ["jshtml", "offline_jshtml", "show_animation"]

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
        The player, rendered by Jupyter and by the book.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from matplotlib.animation import FuncAnimation
    >>> fig, ax = plt.subplots(figsize=(1, 1), dpi=20)
    >>> anim = FuncAnimation(fig, lambda i: ax.set_title(str(i)), frames=2)
    >>> player = show_animation(anim)
    >>> plt.fignum_exists(fig.number), "<svg" in player.data
    (False, True)
    """
    from IPython.display import HTML

    html = jshtml(anim, **kwargs)
    if close:
        import matplotlib.pyplot as plt

        plt.close(anim._fig)
    return HTML(html)
