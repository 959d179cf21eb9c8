"""Interactive 3D views of a Model with three.js, working offline (re-exported by ``viz``).

:func:`view` shows a model at one configuration, :func:`animate3d` plays a motion (a
:class:`~mbcourse.sim.Trajectory` or ``(t, Q)`` arrays). Both return an
:class:`IPython.display.HTML` object: one self-contained piece of HTML that works in
Jupyter, in the built book, and saved as a file, without any network.

What is drawn, all from the Model (like :func:`mbcourse.viz.draw`):

* each body of a URDF model with its meshes (``meshes="collision"``, the default, or
  ``"visual"``: STL, OBJ and COLLADA files found on this machine by
  :func:`mbcourse.urdf.mesh_path`, embedded gzip-compressed and parsed in the page by
  three.js's own loaders, one colour per body; a switch under the picture turns them off);
  otherwise as a translucent solid: the primitive URDF visuals when given (boxes,
  cylinders, spheres), else the *equivalent uniform box* of its inertia, the box of the
  same mass and principal moments, side ``a_k^2 = 6 (J_i + J_j - J_k) / m`` along the
  principal axis ``k`` (a point mass is a small sphere);
* links as thick lines from each centre of mass to its joint points (
  :meth:`~mbcourse.Model.body_poses`, ``parent_point`` / ``child_point``), joint points as
  white dots, joint axes (``axis`` of revolute, prismatic, screw, cylindrical joints; the
  first axis of a universal joint) as arrows, small body frames (x red, y green, z blue),
  the travel of sliding joints and the springs as thin lines, a grid under the scene with
  the up direction opposite to gravity;
* an orbiting camera (drag: rotate, wheel: zoom, right drag: pan); for a motion also
  play/pause, a time slider to scrub and the time readout. Playback is in real time and
  loops; poses between stored frames are interpolated (positions linearly, orientations
  by slerp).

Data and page weight. Meshes add their compressed files once per view (the Panda's nine
collision meshes: about 80 kB; at most ``max_mesh_bytes``, 4 MB by default) and the loader
modules of their formats (STL 5 kB, OBJ 8 kB, COLLADA 33 kB, compressed and encoded).
Otherwise only body poses are embedded (position and unit quaternion per body
and frame, as JSON inside the page; a body that does not move is stored once). The motion
is resampled to at most ``max_frames`` (default 300) frames, positions are rounded to
``1e-4`` of the scene size and quaternions to 4 decimals. A 10 s triple pendulum (300
frames) is 35 kB of data; the whole output, three.js included, about 310 kB.

three.js: how it reaches the page
---------------------------------
three.js (version in ``mbcourse/_vendor/threejs/VERSION``, fetched from npm with a pinned
checksum by ``make vendor-threejs``; MIT license in the same folder) ships as ES modules:
``three.core.min.js``, ``three.module.min.js`` (imports the core) and
``examples/jsm/controls/OrbitControls.js`` (imports ``'three'``). Recent releases ship no
classic ``<script>`` build any more. Choices considered:

* a ``<script src="_static/offline/threejs/...">`` path works only in the built site (the
  notebook's output does not know the page's depth, and Jupyter does not serve that
  folder), so one output would not work everywhere;
* an import map must precede every module script of a document and there may be only
  one: impossible to add from a notebook output in JupyterLab or a Sphinx page;
* **chosen: inline the three files into the output**, gzip-compressed and base64-encoded
  (about 260 kB instead of 790 kB). The page decompresses them with the browser's
  ``DecompressionStream``, turns each into a ``blob:`` URL, rewrites the two import
  specifiers to those URLs and loads them with dynamic ``import()``. Every output then
  works alone (notebook, book page, saved file, exam computer). The decoded library is
  kept on ``window`` and shared by all views of a page, so a page with several views
  decodes it once; ``embed_library=False`` leaves the copy out of an output whose page
  already has a view that carries it (e.g. later views in one notebook).

Requirements of the browser: WebGL, ES modules, ``DecompressionStream`` (Chrome/Edge 80+,
Firefox 113+, Safari 16.4+). Otherwise the view says why instead of drawing.

The vendored files are package data (``mbcourse/_vendor/threejs``), so a 3D view works
wherever the package is installed, not only in a source checkout.
"""

from __future__ import annotations

import base64
import functools
import gzip
import zlib
import itertools
import json
import re
from pathlib import Path

import numpy as np
from .coupling import coupled

__all__ = ["view", "animate3d", "view_html", "THREEJS_DIR"]

#: Folder of the vendored three.js files (``make vendor-threejs``).
THREEJS_DIR = Path(__file__).resolve().parent / "_vendor" / "threejs"
_LIB_FILES = ("three.core.min.js", "three.module.min.js", "OrbitControls.js")
#: three.js's loader modules per mesh format, each after the modules it imports (the page
#: rewrites ``from 'three'`` and the relative imports to the inlined copies).
_LOADERS = {"stl": ("STLLoader.js",), "obj": ("OBJLoader.js",),
            "dae": ("TGALoader.js", "ColladaParser.js", "ColladaComposer.js", "ColladaLoader.js")}
#: Mesh files a view embeds at most (compressed bytes, all meshes together) by default.
MAX_MESH_BYTES = 4_000_000
# matplotlib's tab10, the colours of viz.draw: body b is C{(b-1) % 10} there and here.
_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
_counter = itertools.count()


# ------------------------------------------------------------------ the library
@functools.lru_cache(maxsize=1)
def _library():
    """``(version, [base64 gzip of the three module files])``, read once."""
    from .errors import MbcourseError

    missing = [f for f in _LIB_FILES + ("VERSION",) if not (THREEJS_DIR / f).is_file()]
    if missing:
        raise MbcourseError(
            f"three.js is not vendored: {', '.join(missing)} missing in {THREEJS_DIR}. "
            "The installation is incomplete: reinstall mbcourse (in a source checkout: "
            "`make vendor-threejs`, which needs npm, or restore the folder from git).")
    m = re.match(r"three@(\S+)", (THREEJS_DIR / "VERSION").read_text())
    version = m.group(1) if m else "unknown"
    packed = []
    for name in _LIB_FILES:
        raw = (THREEJS_DIR / name).read_bytes()
        packed.append(base64.b64encode(gzip.compress(raw, 9, mtime=0)).decode("ascii"))
    return version, packed


# ------------------------------------------------------------------ geometry helpers
def _quat(A):
    """Unit quaternions ``(x, y, z, w)`` (three.js order) of rotation matrices ``(..., 3, 3)``."""
    from scipy.spatial.transform import Rotation

    A = np.asarray(A, dtype=float)
    q = Rotation.from_matrix(A.reshape(-1, 3, 3)).as_quat()
    return q.reshape(A.shape[:-2] + (4,))


@functools.lru_cache(maxsize=8)
def _loader_sources(formats):
    """``[(file, base64 gzip)]`` of the loader modules for ``formats`` (a sorted tuple)."""
    files = [f for fmt in formats for f in _LOADERS[fmt]]
    return [(f, base64.b64encode(gzip.compress((THREEJS_DIR / f).read_bytes(), 9,
                                               mtime=0)).decode("ascii")) for f in files]


@functools.lru_cache(maxsize=64)
def _mesh_payload(path, mtime, size):
    """A mesh file's bytes gzip-compressed and base64-encoded, and its reach (the largest
    distance of a vertex from its origin, binary or ASCII STL; None for other formats)."""
    raw = Path(path).read_bytes()
    reach = None
    if path.lower().endswith(".stl"):
        reach = _stl_reach(raw)
    return base64.b64encode(gzip.compress(raw, 6, mtime=0)).decode("ascii"), reach


def _stl_reach(raw):
    """Largest vertex distance from the origin of an STL file (binary or ASCII)."""
    if len(raw) >= 84:
        count = int.from_bytes(raw[80:84], "little")
        if 84 + 50 * count == len(raw):                       # binary
            tri = np.frombuffer(raw, dtype=np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)),
                                                     ("a", "<u2")]), count=count, offset=84)
            v = tri["v"].reshape(-1, 3).astype(float)
            return float(np.linalg.norm(v, axis=1).max()) if len(v) else 0.0
    words = re.findall(rb"vertex\s+(\S+)\s+(\S+)\s+(\S+)", raw)
    if not words:
        return None
    v = np.array(words, dtype=float)
    return float(np.linalg.norm(v, axis=1).max())


def _urdf_meshes(model, name, role):
    """The ``<mesh>`` shapes of ``role`` ("collision" or "visual") of a body from
    :func:`mbcourse.urdf.load` as ``(path, format, scale, origin 4x4, rgba)``; None when
    it has none, or when one of its files is missing or of a format the viewer cannot
    read (the body is then drawn without meshes)."""
    from .urdf import mesh_path

    info = model.parameters.get("urdf")
    if not isinstance(info, dict) or role not in ("collision", "visual"):
        return None
    out = []
    for shape in info.get("shapes", {}).get(name, ()):
        if shape.get("role") != role or shape.get("type") != "mesh":
            continue
        path = mesh_path(shape.get("filename", ""), info.get("source"))
        fmt = path.suffix.lower().lstrip(".") if path is not None else ""
        if fmt not in _LOADERS:
            return None
        origin = np.eye(4)
        origin[:3, :3], origin[:3, 3] = shape["rotation"], shape["position"]
        out.append((str(path), fmt, np.asarray(shape.get("scale", (1, 1, 1)), float), origin,
                    shape.get("rgba")))
    return out or None


def _inertia_box(mass, inertia):
    """Sides and axes of the uniform box with the body's mass and principal moments."""
    J, V = np.linalg.eigh(np.asarray(inertia, dtype=float))
    if np.linalg.det(V) < 0:
        V[:, 2] *= -1.0
    if mass <= 0:
        return np.zeros(3), V
    s2 = 6.0 / mass * (J.sum() - 2.0 * J)          # a_k^2 = 6 (J_i + J_j - J_k) / m
    return np.sqrt(np.clip(s2, 0.0, None)), V


def _visual_shapes(name, entries):
    """Check URDF-style visuals of one body; return them as (kind, dims, origin, rgba)."""
    from .errors import ModelError

    shapes = []
    for k, e in enumerate(entries or ()):
        kind = str(e.get("type", "")).lower()
        if kind == "mesh":
            continue
        what = f"visual {k} of body {name!r}"
        origin = np.asarray(e.get("origin", np.eye(4)), dtype=float)
        if origin.shape != (4, 4) or not np.all(np.isfinite(origin)):
            raise ModelError(f"{what}: origin must be a finite 4x4 transform, got {origin!r}")
        if kind not in ("box", "cylinder", "sphere"):
            raise ModelError(f"{what}: type must be 'box', 'cylinder', 'sphere' or 'mesh' "
                             f"(skipped), got {e.get('type')!r}")
        try:
            if kind == "box":
                dims = np.asarray(e["size"], dtype=float).reshape(3)
            elif kind == "cylinder":
                dims = np.array([float(e["radius"]), float(e["length"])])
            else:
                dims = np.array([float(e["radius"])])
        except (KeyError, TypeError, ValueError) as exc:
            need = {"box": "size=(x, y, z)", "cylinder": "radius and length",
                    "sphere": "radius"}[kind]
            raise ModelError(f"{what}: a {kind} needs {need} ({exc})") from None
        if not np.all(np.isfinite(dims)) or np.any(dims < 0):
            raise ModelError(f"{what}: sizes must be finite and non-negative, got {dims}")
        rgba = e.get("rgba", e.get("color"))
        shapes.append((kind, dims, origin, None if rgba is None else list(map(float, rgba))))
    return shapes


def _urdf_visuals(model, name):
    """The primitive ``<visual>`` shapes of a body loaded by :func:`mbcourse.urdf.load`
    (``None`` when it has none, e.g. meshes only: the body is then drawn as its inertia box)."""
    info = model.parameters.get("urdf")
    if not isinstance(info, dict):
        return None
    entries = []
    for shape in info.get("shapes", {}).get(name, ()):
        if shape.get("role") != "visual" or shape.get("type") == "mesh":
            continue
        origin = np.eye(4)
        origin[:3, :3], origin[:3, 3] = shape["rotation"], shape["position"]
        entry = {k: shape[k] for k in ("type", "size", "radius", "length", "rgba") if k in shape}
        entry["origin"] = origin
        entries.append(entry)
    return entries or None


def _check_view(model, *, fps=30.0, max_frames=300, speed=1.0, height=420, visuals=None,
                t=0.0, meshes="collision", max_mesh_bytes=MAX_MESH_BYTES):
    """Refuse a model, number or ``visuals`` a 3D view cannot use, naming the argument."""
    import numbers

    from .errors import ModelError, ShapeError
    from .model import Model

    if not isinstance(model, Model):
        raise ModelError(f"model must be an mbcourse.Model (the first argument), got "
                         f"{type(model).__name__}")
    for name, value in (("fps", fps), ("max_frames", max_frames), ("speed", speed),
                        ("height", height), ("t", t)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) \
                or not np.isfinite(value):
            raise ShapeError(f"{name} must be a finite number, got {value!r}")
    if not (fps > 0 and max_frames >= 2 and speed > 0 and height > 0):
        raise ShapeError(f"fps, speed and height must be positive and max_frames >= 2, got "
                         f"fps={fps}, max_frames={max_frames}, speed={speed}, height={height}")
    if visuals is not None and not isinstance(visuals, dict):
        raise ModelError(f"visuals must be a dict {{body name: [shape, ...]}}, got {visuals!r}")
    if meshes not in ("collision", "visual", None, False):
        raise ModelError(f"meshes must be 'collision', 'visual' or None (inertia boxes and "
                         f"primitive visuals only), got {meshes!r}")
    if isinstance(max_mesh_bytes, bool) or not isinstance(max_mesh_bytes, numbers.Real) \
            or not max_mesh_bytes >= 0:
        raise ShapeError(f"max_mesh_bytes must be a non-negative number, got "
                         f"{max_mesh_bytes!r}")


def _trajectory(model, trajectory):
    """``(t, Q, V)`` from a Trajectory-like object (``.t``, ``.q``, optional ``.qd``) or a
    pair ``(t, Q)`` (then ``V`` is None)."""
    from .errors import ShapeError

    V = None
    if hasattr(trajectory, "t") and hasattr(trajectory, "q"):
        t, Q = trajectory.t, trajectory.q
        V = getattr(trajectory, "qd", None)
    else:
        try:
            t, Q = trajectory
        except (TypeError, ValueError):
            raise ShapeError("animate3d needs a Trajectory (from mb.sim.simulate) or a pair "
                             f"(t, Q), got {type(trajectory).__name__}") from None
    try:
        t = np.asarray(t, dtype=float).reshape(-1)
        Q = np.asarray(Q, dtype=float)
    except (TypeError, ValueError):
        raise ShapeError("trajectory: t must be times and Q an array (len(t), nq) of numbers, "
                         f"got t={t!r}, Q={Q!r}") from None
    if Q.ndim == 1 and model.nq == 1:
        Q = Q[:, None]
    if Q.shape != (len(t), model.nq) or len(t) == 0:
        raise ShapeError(f"trajectory: Q must have shape (len(t), nq) = ({len(t)}, {model.nq}), "
                         f"got {Q.shape}")
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(Q))):
        raise ShapeError("trajectory: t and Q must be finite")
    if np.any(np.diff(t) <= 0):
        raise ShapeError("trajectory: times t must be strictly increasing")
    if V is not None:
        try:
            V = np.asarray(V, dtype=float)
        except (TypeError, ValueError):
            raise ShapeError(f"trajectory: qd must be an array (len(t), nv) = ({len(t)}, "
                             f"{model.nv}) of numbers, got {V!r}") from None
        if V.shape != (len(t), model.nv) or not np.all(np.isfinite(V)):
            V = None
    return t, Q, V


def _resample(model, t, Q, V, fps, max_frames):
    """Frames ``1/fps`` apart, at most ``max_frames``.

    With the speeds ``V`` (a simulated Trajectory) the frames are interpolated by cubic
    Hermite splines through ``q`` and ``dq/dt = model.qdot(q, v)``: integrators take long
    steps, and this puts the frames on a uniform grid accurately. Without speeds, given
    samples are kept when there are fewer than that, else interpolated linearly.
    """
    if len(t) == 1:
        return t, Q
    n = max(2, int(min(max_frames, np.floor((t[-1] - t[0]) * fps) + 1)))
    if V is None and len(t) <= n:
        return t, Q
    tt = np.linspace(t[0], t[-1], n)
    if V is not None:
        from scipy.interpolate import CubicHermiteSpline

        QQ = CubicHermiteSpline(t, Q, np.asarray(model.qdot(Q, V)), axis=0)(tt)
    else:
        QQ = np.column_stack([np.interp(tt, t, Q[:, k]) for k in range(Q.shape[1])])
    return tt, model.normalize_q(QQ)


def _round(x, decimals):
    return (np.round(np.asarray(x, dtype=float), decimals) + 0.0).tolist()


def _scene(model, t, Q, visuals, shapes, body_frames, joint_axes, meshes=None,
           max_mesh_bytes=MAX_MESH_BYTES):
    """Everything the page needs, as a JSON-ready dict (with ``meshes``: the embedded mesh
    files and, under ``formats``, the formats whose loaders the page needs)."""
    r, A = _scene_poses(model, t, Q)
    vis = _checked_visuals(model, visuals)
    points, joints = _link_ends(model)
    springs = [dict(a=s.body_a, pa=np.asarray(s.point_a, float), b=s.body_b,
                    pb=np.asarray(s.point_b, float)) for s in model.springs]
    # world points over the motion give the scale
    world = _world_points(r, A, points, joints)
    lo, hi = world.min(0), world.max(0)
    size = float(np.linalg.norm(hi - lo)) / 2
    link = 0.012 * size if size > 0 else 0.01
    store = _MeshStore(max_mesh_bytes)
    bodies, reach = _scene_bodies(model, vis, shapes, points, link, meshes, store)
    lo = np.minimum(lo, (r - reach[None, :, None]).reshape(-1, 3).min(0))
    hi = np.maximum(hi, (r + reach[None, :, None]).reshape(-1, 3).max(0))
    centre = (lo + hi) / 2
    radius = max(float(np.linalg.norm(hi - lo)) / 2, 1e-3)
    if size == 0:
        link = 0.012 * radius
    pos_dec = int(np.clip(4 - np.floor(np.log10(radius)), 1, 8))
    up, eye = _camera(model, world)
    floor = float(np.min(world @ up)) - 0.05 * radius
    floor = min(floor, float(np.min((r - reach[None, :, None]).reshape(-1, 3) @ up)))
    frames = _body_frames(r, A, pos_dec)
    R6 = lambda x: _round(x, 6)  # noqa: E731  (geometry: small, exact enough)
    return dict(
        t=_round(t - t[0], 4), t0=float(t[0]),
        bodies=[dict(name=bd["name"], color=bd["color"], points=[R6(p) for p in bd["points"]],
                     solids=[_solid_json(s, R6) for s in bd["solids"]],
                     **frames[b]) for b, bd in enumerate(bodies)],
        joints=[dict(p=jd["p"], c=jd["c"], pp=R6(jd["pp"]), cp=R6(jd["cp"]),
                     axis=None if (jd["axis"] is None or not joint_axes) else R6(jd["axis"]),
                     slide=jd["slide"], base=jd["base"]) for jd in joints],
        springs=[dict(a=s["a"], pa=R6(s["pa"]), b=s["b"], pb=R6(s["pb"])) for s in springs],
        view=dict(centre=R6(centre), radius=R6(radius), lo=R6(lo), hi=R6(hi), up=R6(up),
                  eye=R6(eye), floor=R6(floor), link=R6(link), frames=bool(body_frames)),
        meshes=store.payloads, formats=sorted(store.formats), skipped=store.skipped,
    )


def _solid_json(s, R6):
    out = dict(k=s["k"], d=R6(s["d"]), r=R6(s["r"]), q=R6(s["q"]), rgba=s["rgba"])
    if s.get("set"):
        out["set"] = s["set"]
    if s["k"] == "mesh":
        out.update(m=s["m"], f=s["f"], s=R6(s["s"]))
    return out


class _MeshStore:
    """The mesh files of one view, each embedded once, up to ``limit`` compressed bytes."""

    def __init__(self, limit):
        self.limit, self.used, self.index, self.payloads, self.formats = limit, 0, {}, [], set()
        self.skipped = 0

    def add(self, path, fmt):
        """``(index, reach)`` of the file, or None when it would pass the limit."""
        stat = Path(path).stat()
        b64, reach = _mesh_payload(path, stat.st_mtime, stat.st_size)
        if path not in self.index:
            if self.used + len(b64) > self.limit:
                self.skipped += 1
                return None
            self.index[path] = len(self.payloads)
            self.payloads.append(b64)
            self.used += len(b64)
        self.formats.add(fmt)
        return self.index[path], reach


def _scene_poses(model, t, Q):
    """The bodies' centres ``r`` (T, n + 1, 3) and rotations ``A`` (T, n + 1, 3, 3)."""
    if model.base_motion is None:
        return model.body_poses(Q)
    poses = [model.body_poses(q, t=float(tk)) for tk, q in zip(t, Q)]
    return np.array([p[0] for p in poses]), np.array([p[1] for p in poses])


def _checked_visuals(model, visuals):
    """The ``visuals`` dict, its keys checked to be body names."""
    from .errors import ModelError

    names = [b.name for b in model.bodies]
    vis = dict(visuals or {})
    unknown = sorted(set(vis) - set(names))
    if unknown:
        raise ModelError(f"visuals name unknown bodies {unknown}; bodies: {names}")
    return vis


def _link_ends(model):
    """Points of each body in body axes where joints attach (as viz.draw), and the joints."""
    points = [[] for _ in range(model.n + 1)]
    joints = []
    for j in model.joints:
        points[j.child].append(np.asarray(j.child_point, float))
        if j.parent != 0:
            points[j.parent].append(np.asarray(j.parent_point, float))
        axis = getattr(j, "axis", None)
        if axis is None and getattr(j, "axes", None) is not None:
            axis = j.axes[0]
        joints.append(dict(p=j.parent, c=j.child, pp=np.asarray(j.parent_point, float),
                           cp=np.asarray(j.child_point, float),
                           axis=None if axis is None else np.asarray(axis, float),
                           slide=bool(j.moves_joint_point and not j.floating),
                           base=bool(j.parent == 0 and j.nv < 6)))
    return points, joints


def _world_points(r, A, points, joints):
    """Centres, link ends and joint points in world axes over the whole motion, (k, 3)."""
    world = [r.reshape(-1, 3)]
    for b in range(len(points)):
        for p in points[b]:
            world.append((r[:, b] + A[:, b] @ p))
    for jd in joints:
        world.append(r[:, jd["p"]] + A[:, jd["p"]] @ jd["pp"])
    return np.concatenate(world)


def _scene_bodies(model, vis, shapes, points, link, meshes=None, store=None):
    """Each body's name, colour, link ends and solids, and how far its solids reach."""
    nb = model.n + 1
    bodies = []
    reach = np.zeros(nb)
    for b in range(nb):
        body = model.bodies[b]
        solids, reach[b] = _body_solids(model, b, vis, shapes, link)
        if meshes and body.name not in vis:      # a body given its visuals keeps them
            drawn = _mesh_solids(model, body.name, meshes, store)
            if drawn is not None:
                for s in solids:
                    s["set"] = "box"        # shown when the reader switches meshes off
                solids = drawn[0] + solids
                reach[b] = max(reach[b], drawn[1])
        bodies.append(dict(name=body.name, solids=solids, points=points[b],
                           color=_COLORS[(b - 1) % 10] if b > 0 else "#8c8c8c"))
    return bodies, reach


def _body_solids(model, b, vis, shapes, link):
    """Solids of body ``b`` (its visuals, else its inertia box or a sphere) and their reach."""
    body = model.bodies[b]
    solids, reach = [], 0.0
    entries = vis.get(body.name, getattr(body, "visuals", None))
    if entries is None:
        entries = _urdf_visuals(model, body.name)
    if entries is not None:
        for kind, dims, origin, rgba in _visual_shapes(body.name, entries):
            solids.append(dict(k=kind, d=dims, r=origin[:3, 3], q=_quat(origin[:3, :3]),
                               rgba=rgba))
            reach = max(reach, np.linalg.norm(origin[:3, 3]) + (
                np.linalg.norm(dims) / 2 if kind == "box" else np.hypot(*dims[:2])
                if kind == "cylinder" else dims[0]))
    elif shapes and b > 0:
        sides, V = _inertia_box(body.mass, body.inertia)
        if sides.max() > 1e-9:
            sides = np.maximum(sides, 2 * link)
            solids.append(dict(k="box", d=sides, r=np.zeros(3), q=_quat(V), rgba=None))
            reach = np.linalg.norm(sides) / 2
        elif body.mass > 0:
            solids.append(dict(k="sphere", d=np.array([4 * link]), r=np.zeros(3),
                               q=np.array([0, 0, 0, 1.0]), rgba=None))
            reach = 4 * link
    return solids, reach


def _mesh_solids(model, name, role, store):
    """The mesh solids of body ``name`` (``set="mesh"``) and their reach; None when the
    body has no usable meshes of ``role`` or they would pass the view's size limit."""
    entries = _urdf_meshes(model, name, role)
    if entries is None:
        return None
    solids, reach = [], 0.0
    for path, fmt, scale, origin, rgba in entries:
        added = store.add(path, fmt)
        if added is None:
            return None
        index, extent = added
        solids.append(dict(k="mesh", m=index, f=fmt, s=scale, d=np.zeros(0),
                           r=origin[:3, 3], q=_quat(origin[:3, :3]), set="mesh",
                           rgba=None if rgba is None else list(map(float, rgba))))
        if extent is not None:
            reach = max(reach, np.linalg.norm(origin[:3, 3]) + extent * np.abs(scale).max())
    return solids, reach


def _camera(model, world):
    """The up direction (against gravity) and the unit direction to the eye: along the
    direction in which the scene is thinnest, tilted for depth."""
    g = np.asarray(model.gravity, float)
    up = -g / np.linalg.norm(g) if np.linalg.norm(g) > 0 else np.array([0.0, 1.0, 0.0])
    cloud = world - world.mean(0)
    _, vecs = np.linalg.eigh(cloud.T @ cloud + 1e-12 * np.eye(3))
    normal = vecs[:, 0] if np.sum(vecs[:, 0]) >= 0 else -vecs[:, 0]
    side = np.cross(up, normal)
    if np.linalg.norm(side) < 0.3:                 # scene lies flat: look down at an angle
        side = np.cross(up, [1.0, 0, 0] if abs(up[0]) < 0.9 else [0, 0, 1.0])
        side /= np.linalg.norm(side)
        eye = normal * np.sign(normal @ up or 1.0) + 0.9 * side
    else:
        side /= np.linalg.norm(side)
        eye = normal + 0.35 * up + 0.35 * side
    eye /= np.linalg.norm(eye)
    return up, eye


def _body_frames(r, A, pos_dec):
    """Each body's positions and quaternions over the frames (one entry when it stays put)."""
    frames = []
    for b in range(r.shape[1]):
        rb, qb = r[:, b], _quat(A[:, b])
        # consistent quaternion signs from frame to frame (for interpolation)
        for k in range(1, len(qb)):
            if qb[k] @ qb[k - 1] < 0:
                qb[k] = -qb[k]
        moving = np.ptp(rb, axis=0).max() > 0 or np.ptp(qb, axis=0).max() > 0
        rb, qb = (rb, qb) if moving else (rb[:1], qb[:1])
        frames.append(dict(r=_round(rb.ravel(), pos_dec), q=_round(qb.ravel(), 4)))
    return frames


# ------------------------------------------------------------------ HTML
_CSS = (".mbc3d{font:13px/1.4 system-ui,sans-serif;max-width:100%;margin:0.5em 0}"
        ".mbc3d-canvas{position:relative;width:100%;border:1px solid #ddd;border-radius:4px;"
        "overflow:hidden;background:#f7f7f7}"
        ".mbc3d-canvas canvas{display:block}"
        ".mbc3d-msg{position:absolute;left:8px;top:6px;color:#555}"
        ".mbc3d-bar{display:flex;align-items:center;gap:8px;margin-top:4px}"
        ".mbc3d-bar input[type=range]{flex:1}"
        ".mbc3d-bar button{width:2.2em;height:1.8em;padding:0;cursor:pointer}"
        ".mbc3d-time{font-variant-numeric:tabular-nums;min-width:6.5em;text-align:right}"
        ".mbc3d-switch{display:block;color:#444;font-size:12px;margin-top:2px}"
        ".mbc3d-legend{display:flex;flex-wrap:wrap;gap:10px;color:#444;font-size:12px}"
        ".mbc3d-legend span::before{content:'';display:inline-block;width:10px;height:10px;"
        "margin-right:4px;background:var(--c);border-radius:2px}")
_PLAY = '<svg viewBox="0 0 16 16" width="14" height="14"><polygon points="4,2 14,8 4,14"/></svg>'
_PAUSE = ('<svg viewBox="0 0 16 16" width="14" height="14"><rect x="3" y="2" width="4" '
          'height="12"/><rect x="9" y="2" width="4" height="12"/></svg>')

# The viewer: a classic script (so that document.currentScript finds its container) that
# loads three.js from the inline copy into blob: module URLs, once per page.
_JS = r"""
(function () {
  var script = document.currentScript;
  var root = (script && script.closest && script.closest('.mbc3d')) ||
             document.getElementById('__ID__');
  var box = root.querySelector('.mbc3d-canvas');
  function fail(e) {
    root.setAttribute('data-state', 'error');
    var m = box.querySelector('.mbc3d-msg') || box.appendChild(document.createElement('div'));
    m.className = 'mbc3d-msg';
    m.textContent = '3D view unavailable in this browser (needs WebGL, ES modules and ' +
      'DecompressionStream): ' + (e && e.message ? e.message : e);
  }
  var KEY = 'three@__VERSION__';
  var reg = window.__mbc3d || (window.__mbc3d = {});
  function unzipped(b64) {
    var bin = atob(b64), u = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) u[i] = bin.charCodeAt(i);
    return new Response(new Blob([u]).stream().pipeThrough(new DecompressionStream('gzip')));
  }
  function gunzip(b64) { return unzipped(b64).text(); }
  function blobUrl(text) {
    return URL.createObjectURL(new Blob([text], {type: 'text/javascript'}));
  }
  function library() {
    if (reg[KEY]) return reg[KEY];
    var parts = root.querySelectorAll('script.mbc3d-lib');
    if (!parts.length) {       // embed_library=False: wait for a view that carries it
      return new Promise(function (ok, no) {
        var t = setTimeout(function () {
          no(new Error('no view on this page carries ' + KEY + ' (embed_library=False)'));
        }, 30000);
        window.addEventListener('mbc3d-library', function () {
          clearTimeout(t); reg[KEY].then(ok, no);
        }, {once: true});
      });
    }
    reg[KEY] = Promise.all(Array.prototype.map.call(parts, function (p) {
      return gunzip(p.textContent.trim());
    })).then(function (src) {
      var core = blobUrl(src[0]);
      var mod = blobUrl(src[1].split('"./three.core.min.js"').join(JSON.stringify(core)));
      var orbit = blobUrl(src[2].replace(/from\s*['"]three['"]/g, 'from ' + JSON.stringify(mod)));
      return Promise.all([import(mod), import(orbit), mod]);
    }).then(function (m) { return {THREE: m[0], OrbitControls: m[1].OrbitControls, url: m[2]}; });
    window.dispatchEvent(new Event('mbc3d-library'));
    return reg[KEY];
  }
  var D = JSON.parse(root.querySelector('script.mbc3d-data').textContent);
  try { library().then(function (lib) { start(lib.THREE, lib.OrbitControls, lib.url); }).catch(fail); }
  catch (e) { fail(e); }
  function loaders(url) {          // this view's mesh loaders, their imports rewritten
    var urls = {}, chain = Promise.resolve();
    root.querySelectorAll('script.mbc3d-loader').forEach(function (p) {
      chain = chain.then(function () { return gunzip(p.textContent.trim()); }).then(function (src) {
        src = src.replace(/from\s*['"]three['"]/g, 'from ' + JSON.stringify(url))
          .replace(/from\s*['"](?:[.\/\w]*\/)?(\w+\.js)['"]/g, function (m, name) {
            return urls[name] ? 'from ' + JSON.stringify(urls[name]) : m; });
        urls[p.getAttribute('data-file')] = blobUrl(src);
      });
    });
    return chain.then(function () {
      return Promise.all(['STLLoader.js', 'OBJLoader.js', 'ColladaLoader.js'].map(function (f) {
        return urls[f] ? import(urls[f]) : {}; }));
    }).then(function (m) {
      return {STLLoader: m[0].STLLoader, OBJLoader: m[1].OBJLoader, ColladaLoader: m[2].ColladaLoader};
    });
  }

  function start(THREE, OrbitControls, threeUrl) {
    var V = D.view, H = D.height, nf = D.t.length;
    var msg = box.querySelector('.mbc3d-msg'); if (msg) msg.remove();
    root.querySelectorAll('.mbc3d-bar, .mbc3d-switch, .mbc3d-legend').forEach(function (e) {
      e.style.display = ''; });            // the controls work now; hidden until the script runs
    var W = box.clientWidth || 640;
    var renderer = new THREE.WebGLRenderer({antialias: true, preserveDrawingBuffer: true});
    renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
    renderer.setSize(W, H);
    box.appendChild(renderer.domElement);
    var scene = new THREE.Scene();
    scene.background = new THREE.Color(0xf7f7f7);
    var v3 = function (a) { return new THREE.Vector3(a[0], a[1], a[2]); };
    var up = v3(V.up), centre = v3(V.centre), R = V.radius;
    var camera = new THREE.PerspectiveCamera(40, W / H, R / 100, R * 100);
    camera.up.copy(up);
    function fit() {                   // distance at which the motion's box fills the view
      var e = v3(V.eye), right = new THREE.Vector3().crossVectors(up, e).normalize();
      var u = new THREE.Vector3().crossVectors(e, right), tv = Math.tan(Math.PI * 20 / 180);
      var d = 0, p = new THREE.Vector3();
      for (var i = 0; i < 8; i++) {
        p.set(i & 1 ? V.hi[0] : V.lo[0], i & 2 ? V.hi[1] : V.lo[1], i & 4 ? V.hi[2] : V.lo[2]).sub(centre);
        d = Math.max(d, p.dot(e) + Math.max(Math.abs(p.dot(u)) / tv,
                                            Math.abs(p.dot(right)) / (tv * camera.aspect)));
      }
      camera.position.copy(centre).addScaledVector(e, 1.06 * d);
    }
    fit();
    scene.add(new THREE.HemisphereLight(0xffffff, 0x8899aa, 2.2));
    var sun = new THREE.DirectionalLight(0xffffff, 1.6);
    sun.position.copy(centre).addScaledVector(up, 3 * R).addScaledVector(v3(V.eye), 2 * R);
    scene.add(sun);
    var grid = new THREE.GridHelper(4 * R, 20, 0xbbbbbb, 0xdddddd);
    grid.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), up);
    grid.position.copy(centre).addScaledVector(up, V.floor - centre.dot(up));
    scene.add(grid);

    var link = V.link, Y = new THREE.Vector3(0, 1, 0);
    var dot = new THREE.SphereGeometry(1, 16, 12);
    function rod(a, b, r, mat) {       // a cylinder from a to b, radius r
      var d = new THREE.Vector3().subVectors(b, a), L = d.length();
      var m = new THREE.Mesh(new THREE.CylinderGeometry(r, r, L, 10), mat);
      m.position.addVectors(a, b).multiplyScalar(0.5);
      if (L > 0) m.quaternion.setFromUnitVectors(Y, d.normalize());
      return m;
    }
    var groups = D.bodies.map(function (B, b) {
      var g = new THREE.Group(), col = new THREE.Color(B.color);
      var mat = new THREE.MeshStandardMaterial({color: col, roughness: 0.6});
      B.solids.forEach(function (s) {
        if (s.k === 'mesh') return;      // added when its loader is ready (meshes())
        var geo = s.k === 'box' ? new THREE.BoxGeometry(s.d[0], s.d[1], s.d[2]) :
          s.k === 'sphere' ? new THREE.SphereGeometry(s.d[0], 24, 16) :
          new THREE.CylinderGeometry(s.d[0], s.d[0], s.d[1], 24).rotateX(Math.PI / 2);
        var c = s.rgba ? new THREE.Color(s.rgba[0], s.rgba[1], s.rgba[2]) : col;
        var op = s.rgba && s.rgba.length > 3 ? Math.min(s.rgba[3], 0.5) : 0.35;
        var m = new THREE.Mesh(geo, new THREE.MeshStandardMaterial(
          {color: c, transparent: true, opacity: op, depthWrite: false, roughness: 0.7}));
        m.position.set(s.r[0], s.r[1], s.r[2]);
        m.quaternion.set(s.q[0], s.q[1], s.q[2], s.q[3]);
        m.renderOrder = 1;
        m.userData.set = s.set;
        m.visible = s.set !== 'box';
        g.add(m);
      });
      var o = new THREE.Vector3();
      B.points.forEach(function (p) {
        var e = v3(p);
        if (e.length() > 1e-12) g.add(rod(o, e, link, mat));
        var w = new THREE.Mesh(dot, new THREE.MeshStandardMaterial({color: 0xffffff}));
        w.position.copy(e); w.scale.setScalar(1.8 * link); g.add(w);
      });
      if (b > 0) {
        var c = new THREE.Mesh(dot, new THREE.MeshStandardMaterial({color: 0x222222}));
        c.scale.setScalar(1.4 * link); g.add(c);
        if (V.frames) g.add(new THREE.AxesHelper(0.12 * R));
      }
      scene.add(g);
      return g;
    });
    var gray = new THREE.MeshStandardMaterial({color: 0x8c8c8c});
    D.joints.forEach(function (j) {
      if (j.base) {
        var s = new THREE.Mesh(new THREE.BoxGeometry(1, 1, 1), gray);
        s.scale.setScalar(4 * link); s.position.copy(v3(j.pp)); groups[0].add(s);
      }
      if (j.axis) {
        var a = v3(j.axis).normalize();
        groups[j.p].add(new THREE.ArrowHelper(a, v3(j.pp).addScaledVector(a, -0.09 * R),
          0.18 * R, 0x555555, 0.04 * R, 0.02 * R));
      }
    });
    var pairs = D.joints.filter(function (j) { return j.slide; })
      .map(function (j) { return [j.p, j.pp, j.c, j.cp]; })
      .concat(D.springs.map(function (s) { return [s.a, s.pa, s.b, s.pb]; }));
    var lineGeo = new THREE.BufferGeometry();
    lineGeo.setAttribute('position', new THREE.Float32BufferAttribute(6 * pairs.length, 3));
    scene.add(new THREE.LineSegments(lineGeo, new THREE.LineBasicMaterial({color: 0x333333})));

    var qa = new THREE.Quaternion(), qb = new THREE.Quaternion(), tmp = new THREE.Vector3();
    function pose(b, k, a) {           // body b between frames k and k+1 (fraction a)
      var B = D.bodies[b], g = groups[b], r = B.r, q = B.q;
      if (r.length === 3) { k = 0; a = 0; }
      var k1 = Math.min(k + 1, r.length / 3 - 1);
      g.position.set(r[3 * k], r[3 * k + 1], r[3 * k + 2]);
      tmp.set(r[3 * k1], r[3 * k1 + 1], r[3 * k1 + 2]);
      g.position.lerp(tmp, a);
      qa.set(q[4 * k], q[4 * k + 1], q[4 * k + 2], q[4 * k + 3]);
      qb.set(q[4 * k1], q[4 * k1 + 1], q[4 * k1 + 2], q[4 * k1 + 3]);
      g.quaternion.slerpQuaternions(qa, qb, a);
    }
    var time = 0, T = D.t[nf - 1];
    function setTime(t) {
      time = Math.min(Math.max(t, 0), T);
      var lo = 0, hi = nf - 1;
      while (hi - lo > 1) { var mid = (lo + hi) >> 1; if (D.t[mid] <= time) lo = mid; else hi = mid; }
      var a = nf > 1 && D.t[hi] > D.t[lo] ? (time - D.t[lo]) / (D.t[hi] - D.t[lo]) : 0;
      if (nf === 1) { lo = 0; a = 0; } else if (time >= D.t[hi]) { lo = hi; a = 0; }
      for (var b = 0; b < groups.length; b++) pose(b, lo, a);
      var P = lineGeo.attributes.position;
      pairs.forEach(function (p, i) {
        groups[p[0]].updateMatrixWorld(); groups[p[2]].updateMatrixWorld();
        tmp.copy(v3(p[1])).applyMatrix4(groups[p[0]].matrixWorld); P.setXYZ(2 * i, tmp.x, tmp.y, tmp.z);
        tmp.copy(v3(p[3])).applyMatrix4(groups[p[2]].matrixWorld); P.setXYZ(2 * i + 1, tmp.x, tmp.y, tmp.z);
      });
      P.needsUpdate = true;
      if (slider) { slider.value = T > 0 ? Math.round(1000 * time / T) : 0;
                    readout.textContent = 't = ' + (time + D.t0).toFixed(2) + ' s'; }
    }
    function render() { renderer.render(scene, camera); }
    var controls = new OrbitControls(camera, renderer.domElement);
    controls.target.copy(centre);
    controls.update();
    controls.addEventListener('change', render);

    var slider = root.querySelector('.mbc3d-bar input'), readout = root.querySelector('.mbc3d-time');
    var button = root.querySelector('.mbc3d-bar button');
    var playing = false, last = 0, visible = true;
    function icon() { button.innerHTML = playing ? '__PAUSE__' : '__PLAY__';
                      button.title = playing ? 'Pause' : 'Play'; }
    function tick(now) {
      if (!playing) return;
      var dt = last ? (now - last) / 1000 : 0; last = now;
      var t = time + dt * D.speed;
      setTime(T > 0 ? t % T : 0);
      if (visible) render();
      requestAnimationFrame(tick);
    }
    if (slider) {
      button.addEventListener('click', function () {
        playing = !playing; last = 0; icon();
        if (playing) requestAnimationFrame(tick);
      });
      slider.addEventListener('input', function () {
        setTime(T * slider.value / 1000); render();
      });
    }
    if (window.ResizeObserver) new ResizeObserver(function () {
      var w = box.clientWidth;
      if (w && Math.abs(w - W) > 1) { W = w; renderer.setSize(W, H);
        camera.aspect = W / H; camera.updateProjectionMatrix(); render(); }
    }).observe(box);
    if (window.IntersectionObserver) new IntersectionObserver(function (e) {
      visible = e[0].isIntersecting;
    }).observe(box);
    function meshes() {               // the bodies' mesh files, parsed by three.js's loaders
      return loaders(threeUrl).then(function (L) {
        var jobs = [];
        D.bodies.forEach(function (B, b) {
          var col = new THREE.Color(B.color);
          B.solids.forEach(function (s) {
            if (s.k !== 'mesh') return;
            var raw = unzipped(D.meshes[s.m]);
            jobs.push((s.f === 'stl' ? raw.arrayBuffer() : raw.text()).then(function (data) {
              var c = s.rgba ? new THREE.Color(s.rgba[0], s.rgba[1], s.rgba[2]) : col;
              var mat = new THREE.MeshStandardMaterial({color: c, roughness: 0.55, metalness: 0.1});
              var obj = s.f === 'stl' ? new THREE.Mesh(new L.STLLoader().parse(data), mat) :
                s.f === 'obj' ? new L.OBJLoader().parse(data) :
                new L.ColladaLoader().parse(data, '').scene;
              if (s.f === 'dae') obj.rotation.set(0, 0, 0);   // URDF: the file's own axes
              obj.traverse(function (o) { if (o.isMesh) o.material = mat; });
              var h = new THREE.Group();
              h.position.set(s.r[0], s.r[1], s.r[2]);
              h.quaternion.set(s.q[0], s.q[1], s.q[2], s.q[3]);
              obj.scale.set(s.s[0], s.s[1], s.s[2]);
              h.add(obj);
              h.userData.set = 'mesh';
              h.visible = !toggle || toggle.checked;
              groups[b].add(h);
            }));
          });
        });
        return Promise.all(jobs).then(function () {
          root.setAttribute('data-meshes', String(jobs.length)); render();
        });
      }).catch(function (e) {
        root.setAttribute('data-meshes', 'error: ' + (e && e.message ? e.message : e));
      });
    }
    var toggle = root.querySelector('.mbc3d-switch input');
    if (toggle) toggle.addEventListener('change', function () {
      groups.forEach(function (g) {
        g.children.forEach(function (o) {
          if (o.userData.set === 'mesh') o.visible = toggle.checked;
          if (o.userData.set === 'box') o.visible = !toggle.checked;
        });
      });
      render();
    });
    if (D.meshes && D.meshes.length) meshes();
    setTime(0); render();
    root.mbc3d = {setTime: setTime, render: render, renderer: renderer, camera: camera,
                  controls: controls, times: D.t, THREE: THREE};
    root.setAttribute('data-state', 'ready');
    root.dispatchEvent(new CustomEvent('mbc3d-ready', {bubbles: true}));
    if (slider && D.autoplay) button.click();
  }
})();
"""


def _json_script(obj):
    text = json.dumps(obj, separators=(",", ":"), allow_nan=False)
    text = re.sub(r"(?<=\d)\.0(?=[,\]}])", "", text)      # 2.0 -> 2
    return text.replace("<", "\\u003c")              # no </script> or <!-- inside


class _Motion:
    def __init__(self, t, q, qd):
        self.t, self.q, self.qd = t, q, qd


@coupled("state")
def view_html(model, t, Q, qd=None, *, fps=30.0, max_frames=300, speed=1.0, height=420,
              visuals=None, shapes=True, body_frames=True, joint_axes=True,
              embed_library=True, autoplay=False, legend=True, meshes="collision",
              max_mesh_bytes=MAX_MESH_BYTES):
    """The HTML text of a 3D view (what :func:`view` and :func:`animate3d` wrap).

    Parameters are those of :func:`animate3d`, with the motion as ``t`` (nt,) and
    ``Q`` (nt, nq), optionally the speeds ``qd`` (nt, nv) for smooth resampling; one
    sample gives a still view without the player bar.

    Returns
    -------
    str

    Examples
    --------
    >>> import mbcourse as mb
    >>> html = view_html(mb.models.double_pendulum(), [0.0], [[0.3, 0.5]])
    >>> html.startswith('<div class="mbc3d"'), '<div class="mbc3d-bar"' in html
    (True, False)
    """
    _check_view(model, fps=fps, max_frames=max_frames, speed=speed, height=height,
                visuals=visuals, meshes=meshes, max_mesh_bytes=max_mesh_bytes)
    t, Q, V = _trajectory(model, (t, Q) if qd is None else _Motion(t, Q, qd))
    t, Q = _resample(model, t, Q, V, fps, max_frames)
    data = _scene(model, t, Q, visuals, shapes, body_frames, joint_axes, meshes,
                  max_mesh_bytes)
    data.update(height=int(height), speed=float(speed), autoplay=bool(autoplay))
    if data.pop("skipped"):
        import warnings

        warnings.warn(f"3D view: some bodies are drawn without their {meshes} meshes, which "
                      f"would pass max_mesh_bytes={max_mesh_bytes:g} (compressed) in the page; "
                      "raise it, or pass meshes=None", UserWarning, stacklevel=3)
    payload = _json_script(data)
    version, lib = _library()
    ident = "mbc3d-" + f"{zlib.crc32(payload.encode()):08x}" + f"-{next(_counter)}"
    out = [f'<div class="mbc3d" id="{ident}" data-three="{version}">',
           f"<style>{_CSS}</style>",
           f'<div class="mbc3d-canvas" style="height:{int(height)}px">'
           f'<div class="mbc3d-msg">{_escape(_not_run(model, t))}</div></div>']
    if len(t) > 1:
        out.append(f'<div class="mbc3d-bar" style="display:none"><button type="button" title="Play">{_PLAY}'
                   '</button><input type="range" min="0" max="1000" value="0" '
                   'aria-label="time"><span class="mbc3d-time">t = '
                   f"{t[0]:.2f} s</span></div>")
    if data["meshes"]:
        out.append('<label class="mbc3d-switch" style="display:none"><input type="checkbox" checked> '
                   f'{_escape(str(meshes))} meshes (off: inertia boxes)</label>')
    if legend:
        out.append('<div class="mbc3d-legend" style="display:none">' + "".join(
            f'<span style="--c:{b["color"]}">{_escape(b["name"])}</span>'
            for b in data["bodies"][1:]) + "</div>")
    out.append(f'<script type="application/json" class="mbc3d-data">{payload}</script>')
    if embed_library:
        out += [f'<script type="application/octet-stream" class="mbc3d-lib" '
                f'data-file="{name}">{b64}</script>' for name, b64 in zip(_LIB_FILES, lib)]
    out += [f'<script type="application/octet-stream" class="mbc3d-loader" '
            f'data-file="{name}">{b64}</script>'
            for name, b64 in _loader_sources(tuple(data["formats"]))]
    js = (_JS.replace("__ID__", ident).replace("__VERSION__", version)
          .replace("__PLAY__", _PLAY).replace("__PAUSE__", _PAUSE))
    out.append(f"<script>{js}</script></div>")
    return "\n".join(out)


_WHERE = "interactive in Jupyter and in the web version of the book"


def _caption(model, t):
    """One line that says what a 3D view shows and where it is interactive: the text a
    reader sees where the viewer's script has not run (and, in brackets, the plain-text
    form that a PDF or a terminal prints).

    >>> import mbcourse as mb
    >>> _caption(mb.models.double_pendulum(), [0.0])
    '3D view of 2 bodies: interactive in Jupyter and in the web version of the book'
    >>> _caption(mb.models.double_pendulum(), [0.0, 0.5, 2.0])
    '3D animation of 2 bodies over 2 s: interactive in Jupyter and in the web version of the book'
    """
    t = np.asarray(t, dtype=float).ravel()
    if t.size > 1:
        return f"3D animation of {model.n} bodies over {float(t[-1] - t[0]):g} s: {_WHERE}"
    return f"3D view of {model.n} bodies: {_WHERE}"


def _not_run(model, t):
    """The line a 3D view shows where its script has not run: in Jupyter, a notebook that is
    not trusted yet (fresh from git or a download), whose stored outputs run no JavaScript.
    It says what the view is and how to make it draw; the controls stay hidden meanwhile.

    >>> import mbcourse as mb
    >>> print(_not_run(mb.models.double_pendulum(), [0.0]))
    3D view of 2 bodies, not drawn: the notebook is not trusted. Run this cell, or trust the notebook (Command Palette: "Trust Notebook", or jupyter trust NOTEBOOK.ipynb in a terminal).
    """
    what = _caption(model, t).split(":")[0]
    return (f"{what}, not drawn: the notebook is not trusted. Run this cell, or trust the "
            'notebook (Command Palette: "Trust Notebook", or jupyter trust NOTEBOOK.ipynb in '
            "a terminal).")


def _escape(s):
    import html

    return html.escape(str(s))


def _display(html, text):
    """An ``IPython.display.HTML`` whose plain-text form (what a PDF or a terminal shows)
    says what the picture is, instead of ``<IPython.core.display.HTML object>``."""
    from IPython.display import HTML

    class View3D(HTML):
        def __repr__(self):
            return text

    return View3D(html)


@coupled("state")
def view(model, q=None, *, t=0.0, height=420, visuals=None, shapes=True, body_frames=True,
         joint_axes=True, embed_library=True, legend=True, meshes="collision",
         max_mesh_bytes=MAX_MESH_BYTES):
    """Interactive 3D view of a model at one configuration (three.js, works offline).

    Bodies are drawn as their URDF visuals or as the uniform box of their inertia, links
    from each centre of mass to its joint points, joint axes and small body frames; drag to
    orbit, scroll to zoom. See the module docstring for how three.js is embedded.

    Parameters
    ----------
    model : Model
    q : array_like, shape (nq,), optional
        Configuration; default :meth:`Model.neutral_q`.
    t : float
        Time, for a prescribed base motion.
    height : int
        Height of the picture in pixels (the width follows the page).
    visuals : dict, optional
        ``{body_name: [{"type": "box", "size": (x, y, z), "origin": T}, {"type":
        "cylinder", "radius": r, "length": l, "origin": T}, {"type": "sphere", "radius":
        r}, ...]}`` with ``T`` a 4x4 transform from the body's frame (origin at its centre
        of mass) to the shape's (a cylinder's axis is the shape's z, as in URDF); optional
        ``"rgba"``. ``"mesh"`` entries are skipped. A body named here is drawn with these
        shapes only (no mesh). Bodies not named keep their ``visuals`` attribute if they
        have one, then the primitive URDF visuals of a model from
        :func:`mbcourse.urdf.load`, else their inertia box (under their meshes, see
        ``meshes``).
    shapes : bool
        Draw inertia boxes for bodies without visuals.
    body_frames, joint_axes, legend : bool
        Draw the body frames, the joint axes, the list of body colours.
    embed_library : bool
        Put the compressed three.js into the output (default). ``False`` makes the output
        about 260 kB lighter, but it then draws only on a page where another view carries
        the library.
    meshes : {"collision", "visual", None}
        Draw the bodies of a URDF model with their ``<collision>`` (default) or
        ``<visual>`` meshes (STL, OBJ or COLLADA files, found by
        :func:`mbcourse.urdf.mesh_path`; the Panda's collision meshes ship with the
        package, 135 kB in the page), with a switch under the picture back to the inertia
        boxes. A body whose mesh files are not on this machine keeps its box. Meshes are
        drawn in one colour per body (their own materials and textures are not read).
    max_mesh_bytes : int
        Embed at most this many compressed bytes of mesh files (default 4 MB; the Panda's
        visual COLLADA meshes are 11 MB raw); bodies past it keep their boxes, with a
        warning.

    Returns
    -------
    IPython.display.HTML

    Raises
    ------
    ShapeError
        ``q`` is not a finite vector of length ``model.nq``.
    ModelError
        ``visuals`` names an unknown body or has a malformed entry.

    Examples
    --------
    >>> import mbcourse as mb
    >>> html = view(mb.models.double_pendulum(), [0.3, 0.5]).data
    >>> "://" in html                          # loads nothing from any host
    False
    >>> 'class="mbc3d-lib"' in html, '<div class="mbc3d-bar"' in html  # three.js, no player
    (True, False)
    """
    from .errors import ShapeError

    _check_view(model, height=height, visuals=visuals, t=t, meshes=meshes,
                max_mesh_bytes=max_mesh_bytes)
    q = model.neutral_q() if q is None else q
    q = model.check_q(q)
    if q.ndim != 1:
        raise ShapeError(f"view takes one configuration q of shape ({model.nq},), "
                         f"got shape {q.shape}; use animate3d for a motion")
    return _display(view_html(model, [t], q[None], height=height, visuals=visuals,
                              shapes=shapes, body_frames=body_frames, joint_axes=joint_axes,
                              embed_library=embed_library, legend=legend, meshes=meshes,
                              max_mesh_bytes=max_mesh_bytes),
                    f"[{_caption(model, [t])}]")


def animate3d(model, trajectory, *, fps=30.0, max_frames=300, speed=1.0, height=420,
              visuals=None, shapes=True, body_frames=True, joint_axes=True,
              embed_library=True, autoplay=False, legend=True, meshes="collision",
              max_mesh_bytes=MAX_MESH_BYTES):
    """Interactive 3D animation of a motion (three.js, works offline).

    The page holds the body poses of every frame as JSON and plays them in real time
    (looping), with play/pause, a time slider and the time; drag to orbit the camera.

    Parameters
    ----------
    model : Model
    trajectory : Trajectory or (t, Q)
        A :class:`~mbcourse.sim.Trajectory` (anything with ``.t`` and ``.q``), or times
        ``t`` (nt,) and configurations ``Q`` (nt, nq).
    fps : float
        Frames per second of motion time to embed; at most ``max_frames`` frames in all
        (a longer motion gets sparser frames). A Trajectory (which has speeds) is
        resampled onto a uniform grid by cubic Hermite interpolation; bare ``(t, Q)``
        samples are never multiplied. Between frames the page interpolates.
    max_frames : int
        Cap on the embedded frames (page weight grows by about 7 numbers per moving body
        and frame).
    speed : float
        Playback speed (1: real time).
    height, visuals, shapes, body_frames, joint_axes, legend, embed_library, meshes, max_mesh_bytes
        As in :func:`view`.
    autoplay : bool
        Start playing when shown.

    Returns
    -------
    IPython.display.HTML

    Raises
    ------
    ShapeError
        ``Q`` does not have shape ``(len(t), nq)``, times do not increase, or values are
        not finite.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> model = mb.models.double_pendulum()
    >>> t = np.linspace(0.0, 2.0, 1001)
    >>> Q = np.column_stack([np.sin(t), np.cos(t)])
    >>> html = animate3d(model, (t, Q), fps=25).data
    >>> import json, re
    >>> data = json.loads(re.search(r'class="mbc3d-data">(.*?)</script>', html).group(1))
    >>> len(data["t"]), data["t"][-1]        # 2 s at 25 frames per second
    (51, 2)
    >>> len(data["bodies"][1]["r"]) == 3 * 51, len(data["bodies"][0]["r"])  # ground is still
    (True, 3)
    >>> '<div class="mbc3d-bar"' in html, "://" in html
    (True, False)
    """
    _check_view(model, fps=fps, max_frames=max_frames, speed=speed, height=height,
                visuals=visuals, meshes=meshes, max_mesh_bytes=max_mesh_bytes)
    t, Q, V = _trajectory(model, trajectory)
    return _display(view_html(model, t, Q, V, fps=fps, max_frames=max_frames, speed=speed,
                              height=height, visuals=visuals, shapes=shapes,
                              body_frames=body_frames, joint_axes=joint_axes,
                              embed_library=embed_library, autoplay=autoplay, legend=legend,
                              meshes=meshes, max_mesh_bytes=max_mesh_bytes),
                    f"[{_caption(model, t)}]")
