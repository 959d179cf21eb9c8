"""The readable tables of a :class:`~mbcourse.model.Model` (``print(model)``, the notebook view).

Rendering only: :meth:`Model.summary <mbcourse.Model.summary>`, ``str(model)`` and
``model._repr_html_()`` call these, so ``model.py`` keeps only the description.

Examples
--------
>>> import mbcourse as mb
>>> from mbcourse import summary
>>> summary.header(mb.models.double_pendulum())
'Model: 2 bodies, 2 joints, nq=2, nv=2, gravity=[0.0, -9.81, 0.0]'
"""

from __future__ import annotations

from html import escape

import numpy as np

from .errors import TopologyError

__all__ = ["tables", "header", "text", "html"]


def tables(model):
    """(title, headers, rows) of the bodies and joints."""
    bodies = []
    for b in model.bodies:
        if b.index == 0:
            motion = "prescribed motion" if model.base_motion else "fixed"
            bodies.append(("0", b.name, "base", motion))
        else:
            J = b.inertia
            if np.abs(J - np.diag(np.diag(J))).max() <= 1e-12 * np.abs(J).max():
                text = "diag(" + ", ".join(f"{x:.4g}" for x in np.diag(J)) + ")"
            else:
                text = "principal " + ", ".join(f"{x:.4g}" for x in np.linalg.eigvalsh(J))
            bodies.append((str(b.index), b.name, f"{b.mass:g}", text))
    joints = []
    cut = set()
    try:
        if not model.graph.is_tree:
            cut = set(model.graph.spanning_tree()[1].tolist())
    except TopologyError:
        pass
    mimic = {c.joint: c for c in model.mimics}
    shift = [0, 0]                      # coordinates of the mimic joints met so far

    def where(s, k):
        start, stop = s.start - shift[k], s.stop - shift[k]
        return "-" if stop == start else (f"{start}" if stop == start + 1 else f"{start}:{stop}")
    for j in model.joints:
        kind, coords = j.summary_cells()
        kind += " (closes a loop)" if j.index in cut else ""
        if j.name in mimic:
            c = mimic[j.name]
            q = v = "-"
            coords += f" = {c.multiplier:g} {c.primary} + {c.offset:g} (mimic)"
            shift[0] += 1
            shift[1] += 1
        else:
            q, v = where(j.q_slice, 0), where(j.v_slice, 1)
        joints.append((str(j.index), j.name, kind, model.bodies[j.parent].name,
                       model.bodies[j.child].name, q, v, coords))
    out = [("Bodies", ("#", "name", "mass", "central inertia (body axes)"), bodies),
           ("Joints", ("#", "name", "kind", "parent", "child", "q", "v", "coordinates"),
            joints)]
    unilateral = [(lim.name, "stop", f"{lim.lower:.4g} <= q <= {lim.upper:.4g}",
                   f"{lim.restitution:g}", "") for lim in model.joint_limits]
    unilateral += [(c.name, f"contact of {model.bodies[c.body].name}",
                    f"n={_vec(c.normal)}, offset {c.offset:.4g}"
                    + (f", radius {c.radius:.4g}" if c.radius else ""),
                    f"{c.restitution:g}", f"{c.friction:g}") for c in model.contacts]
    if unilateral:
        out.append(("Stops and contacts (enforced by mb.contact.simulate)",
                    ("name", "what", "where", "restitution", "friction"), unilateral))
    return out


def _vec(v):
    return "(" + ", ".join(f"{x:.4g}" for x in v) + ")"


def header(model):
    """The first line: counts, sizes, gravity and the force elements."""
    extra = [f"{len(seq)} {label}" for seq, label in
             ((model.loads, "loads"), (model.springs, "springs"),
              (model.joint_springs, "joint springs"),
              (model.generalized_force_elements, "generalized forces")) if seq]
    return (f"Model: {model.n} bodies, {model.m} joints, nq={model.nq}, nv={model.nv}, "
            f"gravity={model.gravity.tolist()}" + ("; " + ", ".join(extra) if extra else ""))


def text(model):
    """The plain-text tables of :meth:`mbcourse.Model.summary`."""
    lines = [header(model)]
    for title, headers, rows in tables(model):
        lines.append(title)
        if not rows:
            lines.append("  (none)")
            continue
        widths = [max(len(str(r[k])) for r in rows + [headers])
                  for k in range(len(headers))]
        for r in [headers] + rows:
            lines.append(("  " + "  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
                         .rstrip())
    return "\n".join(lines)


def html(model):
    """The HTML tables a notebook shows for a model."""
    parts = [f"<p><b>{escape(header(model))}</b></p>"]
    for title, headers, rows in tables(model):
        head = "".join(f"<th>{escape(h)}</th>" for h in headers)
        body = "".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in r)
                       + "</tr>" for r in rows)
        parts.append(f"<p>{title}</p><table><thead><tr>{head}</tr></thead>"
                     f"<tbody>{body}</tbody></table>")
    return "\n".join(parts)
