"""Compiled kernels (numba), one module per chapter, and the one front door :func:`route`.

A NumPy call costs about a microsecond of interpreter overhead whatever the size of its
arrays, and a recursion over a few bodies makes hundreds of them; written as loops over
bodies with scalar arithmetic on 3-vectors and 6x6 matrices and compiled by numba, the same
recursion costs a few microseconds per configuration. Each chapter's kernel computes that
chapter's algorithm with its intermediate quantities, and the tests compare those with the
NumPy route (tests/test_kernels.py, test_kernels_chapters.py, test_kernels_joints.py):

============================  ==================================================
:mod:`.common`                the jcalc (``joint_motion``), loads, springs, 3-vector/6x6
                              loops, the kinematics pass
:mod:`.cartesian`             chapter 2, the chapter's rows (2.22), KKT (2.49) by Baraff's
                              ``LDL^T`` (2.55)-(2.61), the multipliers ``lam``
:mod:`.absolute`              chapter 2's simulation: ``dy/dt`` of the absolute coordinates
                              (rows with Baumgarte's terms, the Schur complement (2.50))
:mod:`.tree`                  chapter 3, ``A = Phi m Phi^T`` and ``B`` (3.163)-(3.167)
:mod:`.vereshchagin`          chapter 4, Vereshchagin's recursion (3.172)-(3.179)
:mod:`.poisson`               chapter 4, Ivanov's sweep and block Cholesky
:mod:`.loops`                 chapter 6, the cut-joint method (3.186)-(3.201) on chapter
                              3's ``A``, ``B`` and chapter 2's rows
:mod:`.composite`             the tree equations by composite bodies (not chapter 3's
                              ``Phi m Phi^T``: :func:`mbcourse.tree.forward_dynamics_composite`)
============================  ==================================================

Compilation happens once per machine (``cache=True`` writes the machine code next to the
modules, or where ``NUMBA_CACHE_DIR`` says, or, in a read-only installation, to numba's user
cache directory: :func:`machine_code_folder`); the first call of a fresh installation pays
it (:data:`COMPILE_NOTE`).

Registering a chapter's kernel
------------------------------
A kernel is a plain numba function ``kernel(*args, q, qd, tau, qdd) -> bool`` over a batch
(``q`` (B, nq), ``qd``, ``tau``, ``qdd`` (B, nv), C-contiguous float64; it writes ``qdd`` and
returns False when it declines: a value not finite, a state it does not accept). ``args`` are
the packed constants, ``(ints, geo, body)`` of :func:`model_data` for a tree (see
:func:`pack_chain`). Register it once, at the end of its module::

    from . import register
    register("tree", tree_forward,
             refusal="the compiled tree equations need ...", moving_base=True)

and import the module at the bottom of this file. A formulation then calls
``out, state = route(model, "tree", q, qd, tau, t, what="mb.tree.forward_dynamics",
check=lambda: model.check_state(q, qd, tau, t=t), compiled=compiled)``, returns ``out``
when it is not None and otherwise runs its NumPy version on ``state`` (checked once).

Joints and forces
-----------------
No kernel switches on a joint's kind: each joint is packed as its own motion
(:meth:`mbcourse.joints.Joint.motion`: up to two turns about axes, a unit quaternion, up to
three slides, and per speed the axis vectors ``p``, ``k`` in the parent's, the first
turn's or the child's frame), and one jcalc (:func:`.common.joint_motion`) evaluates
``R_a``, ``z_a``, ``p``, ``k``, ``w_a`` and ``s_a`` (3.101)-(3.106) from it, for every kind
from a fixed joint to a free one; with it go chapter 2's rows of the joint
(:meth:`mbcourse.joints.Joint.row_parameters`: point-plane, perpendicular and the screw's
row), which chapter 2's kernel and chapter 6's cut joints read. From the motion come a
joint force's wrench ``J (J^T J)^-1 tau`` (:func:`.common.joint_force`) and a joint's
accelerations from its bodies' (:func:`.common.joint_acceleration`). Every kernel runs
every kind, floating bases included. (The kind column ``ints[:, 0]`` only labels a joint:
:data:`REVOLUTE`, :data:`PRISMATIC`, :data:`WELD`, :data:`GENERAL` for the others;
:func:`pack_chain` derives the motion and rows of the first three from it when they are
not given.) Constant loads (per body, :func:`.common.load_wrench`), joint springs (per speed,
:func:`.common.spring_torques`) and spring-dampers between bodies (rows of ``geo`` after the
joints', :func:`.common.spring_wrenches`) are packed too and applied inside Vereshchagin's,
chapter 3's, the composite-body, chapter 2's and chapter 6's kernels (chapter 6's on the
reduced tree, joint springs on the joints it keeps); :func:`.common.dissipation` gives the dampers' power
for the simulations' dissipated-energy channel. Generalized-force callables are evaluated
in Python once per configuration and added to ``tau`` (:func:`route`). Ivanov's sweep solves ``M qd = p`` with the inertia
alone. Loads given as callables are evaluated in Python once per configuration too, and
added to that configuration's packed loads. A prescribed motion of the base
(``set_base_motion``) is evaluated once per call and packed into row 0 of ``body``
(:data:`.common.B_BASE`) for the kernels registered with ``moving_base`` (all but the
sweep, which leaves it to its NumPy route).
"""

from __future__ import annotations

import math
import zlib
import pathlib
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, NamedTuple

import numba as nb
import numpy as np


def machine_code_folder(folder=pathlib.Path(__file__).parent):
    """The folder numba caches the kernels' machine code in, found the way numba finds it:
    ``NUMBA_CACHE_DIR`` when it is set, else ``__pycache__`` beside the kernels when that
    is writable (a source checkout, or a virtual environment the user owns), else numba's
    user cache directory (``~/.cache/numba/...`` on Linux: a read-only installation).
    None when none is writable (then numba compiles in every new process).

    Examples
    --------
    >>> machine_code_folder().is_dir()
    True
    """
    from numba.core import caching

    source = next(iter(sorted(folder.glob("*.py"))), None)   # numba's path depends on the folder
    if source is None:
        return None
    for locator in (caching.UserProvidedCacheLocator, caching.InTreeCacheLocator,
                    caching.UserWideCacheLocator):
        try:
            found = locator.from_function(machine_code_folder, str(source))
        except Exception:                   # noqa: BLE001 (numba's locators changed)
            continue
        if found is not None:
            return pathlib.Path(found.get_cache_path())
    return None


def _drop_stale_machine_code(folder=pathlib.Path(__file__).parent):
    """numba's ``cache=True`` keys a function's machine code on its own source file only, so
    a kernel that calls one from another module (chapter 6's calls chapter 3's and chapter
    2's) would keep the callee's old code after that module changed. The cache of the
    kernels (:func:`machine_code_folder`) is therefore tied to all their sources at once: a
    fingerprint of them (each file's CRC-32 and size) is stamped in it, and its machine
    code is dropped when they differ."""
    cache = machine_code_folder(folder)
    if cache is None:
        return
    sources = [(p.name, p.read_bytes()) for p in sorted(folder.glob("*.py"))]
    want = " ".join(f"{name}:{zlib.crc32(text):08x}:{len(text)}" for name, text in sources)
    stamp = cache / "kernel-sources.txt"
    try:
        if stamp.read_text() == want:
            return
    except OSError:
        pass                            # no stamp: a fresh cache, or one from before stamps
    try:
        cache.mkdir(parents=True, exist_ok=True)
        for f in cache.glob("*.nb[ci]"):
            f.unlink()
        stamp.write_text(want)
    except OSError:
        pass


_drop_stale_machine_code()


class _CompileNote(nb.core.event.Listener):
    """One line on stderr when a kernel of this package starts compiling (numba found no
    machine code for it in the cache), so that a student whose first cell pauses for half a
    minute knows why. Said once per kernel and process, only for the outermost compilation
    (the functions a kernel calls compile inside it); ``MBCOURSE_COMPILE_MESSAGE=0`` turns it
    off (the Makefile does, for the book's pages and the tests)."""

    def __init__(self):
        self.depth, self.said = 0, set()

    def on_start(self, event):
        if not _ours(event):
            return
        func = event.data["dispatcher"].py_func
        self.depth += 1
        name = func.__name__
        if self.depth == 1 and name not in self.said and _os.environ.get(
                "MBCOURSE_COMPILE_MESSAGE", "1") != "0":
            self.said.add(name)
            print(f"mbcourse: compiling the kernel {name} for this machine, once (10 s to a "
                  "minute; later runs load it from the cache) ...", file=_sys.stderr, flush=True)

    def on_end(self, event):
        if _ours(event):
            self.depth -= 1


def _ours(event):
    """Whether a numba event is about a function of this package (a function made by
    ``exec``, as :mod:`mbcourse.symbolic` makes, may have no module at all)."""
    func = getattr((event.data or {}).get("dispatcher"), "py_func", None)
    return isinstance(getattr(func, "__module__", None), str) and func.__module__.startswith(
        __name__)


import os as _os  # noqa: E402
import sys as _sys  # noqa: E402

_COMPILE_NOTE = _CompileNote()
nb.core.event.register("numba:compile", _COMPILE_NOTE)

from ..errors import ModelError, TopologyError  # noqa: E402
from ..forces import evaluate  # noqa: E402
from ..joints import JOINT_KINDS  # noqa: E402
from .common import (B_BASE, B_BODY, B_FORCE, B_LEVER, B_MOVING, B_SPRINGS,  # noqa: E402
                     BODY_COLUMNS, GENERAL, GEO_COLUMNS, S_A, S_B, S_C, S_K, S_L0, S_PA, S_PB,
                     G_ROWS, G_SLIDE, G_SPEED, G_SPRING, G_TURN1, I_FRAME, I_NV, I_QUAT, I_ROWS,
                     I_SLIDE, I_TURN1, INT_COLUMNS, MAX_ROWS, OPTS, PERPENDICULAR, POINT_LINE,
                     POINT_PLANE, PRISMATIC, R_D, R_N, R_RHO, R_TYPE, REVOLUTE, ROTATION,
                     ROW_WIDTH, SCREW, WELD)

__all__ = ["REVOLUTE", "PRISMATIC", "WELD", "GENERAL", "OPTS", "COMPILE_NOTE", "PARALLEL_BATCH",
           "ModelData", "Kernel", "KERNELS", "register", "route", "pack_chain", "model_data",
           "rows_data", "AbsoluteData", "pack_absolute", "with_base_motion",
           "pack_cut",
           "fast_arrays", "state_arrays", "batch", "machine_code_folder"]

#: What a first call costs (measured on the reference machine, 2 cores, an empty cache:
#: Vereshchagin's kernel 18-20 s, chapter 3's 25 s, composite bodies 10 s, chapter 2's 46-59 s).
COMPILE_NOTE = ("the first call of a fresh installation compiles the kernel (10 s to a minute, "
                "depending on the formulation), once")

#: Batches at least this large are split over the cores (threads; the kernels release the GIL).
PARALLEL_BATCH = 64

_NDARRAY = np.ndarray
_REAL = (float, int, np.floating, np.integer)
_F8 = np.dtype(np.float64)
_KINDS = {"rotation": REVOLUTE, "translation": PRISMATIC}
_ROW_TYPES = {"point_plane": POINT_PLANE, "perpendicular": PERPENDICULAR, "screw": SCREW}
_PLANAR_ROW_TYPES = {"point_line": POINT_LINE, "rotation": ROTATION}


class ModelData(NamedTuple):
    """A tree's packed constants (:func:`model_data`): ``ints`` (m, 21), ``geo`` (m + S, 195)
    (S spring-dampers), ``body`` (n + 1, 55) (see :func:`pack_chain`), ``weightless``
    (``body`` with gravity, the loads and the spring-dampers switched off) and ``springless``
    (``geo`` without the joint springs), the numbers of speeds ``nv`` and coordinates
    ``nq``, ``rows``: every joint's chapter 2 rows are packed
    (:meth:`mbcourse.joints.Joint.row_parameters`; chapters 2 and 6's kernels need them, the
    recursions run every joint without), ``callables``: the model has generalized-force
    callables or loads given as callables (which :func:`route` evaluates at each
    configuration and hands to the kernel as numbers), ``state_loads``: it has loads given
    as callables, and ``base_moves``: it has a prescribed motion of the base (which
    :func:`route` packs at each call, for the kernels registered with ``moving_base``)."""
    ints: np.ndarray
    geo: np.ndarray
    body: np.ndarray
    weightless: np.ndarray
    nv: int
    nq: int = -1
    rows: bool = True
    springless: np.ndarray | None = None
    callables: bool = False
    state_loads: bool = False
    base_moves: bool = False

    def args(self, gravity=True):
        """The kernels' leading arguments ``(ints, geo, body)``; ``gravity=False``: the
        inertia alone (no gravity, loads, joint springs or spring-dampers)."""
        if gravity:
            return self.ints, self.geo, self.body
        return self.ints, (self.geo if self.springless is None else self.springless), \
            self.weightless


class Kernel(NamedTuple):
    """A registered kernel: its batch ``function``, the ``pack(model)`` that prepares its
    constants (or None when it does not apply), the ``refusal`` ``compiled=True`` raises and
    whether it takes a prescribed motion of the base (``moving_base``)."""
    function: Callable
    pack: Callable
    refusal: str
    moving_base: bool = False


#: The registered kernels by name (:func:`register`).
KERNELS: dict[str, Kernel] = {}


def register(name, function, *, refusal, pack=None, moving_base=False):
    """Register ``function`` (``kernel(*args, q, qd, tau, qdd) -> bool``) as kernel ``name``
    for :func:`route`; ``pack(model)`` prepares its leading arguments (by default
    :func:`model_data`, or None when it does not apply); ``refusal`` is the message
    ``compiled=True`` raises when it does not apply; ``moving_base``: it reads a prescribed
    motion of the base from ``body``'s row 0 (:data:`.common.B_BASE`).

    Examples
    --------
    >>> KERNELS["vereshchagin"].function.__name__
    'vereshchagin_forward'
    """
    KERNELS[name] = Kernel(function, pack or model_data, refusal, moving_base)
    return function


def rows_data(model):
    """:func:`model_data` when every joint's chapter 2 rows are packed (chapter 2's kernel;
    a joint kind without :meth:`~mbcourse.joints.Joint.spatial_rows` has none), else
    None."""
    data = model_data(model)
    return data if data is not None and data.rows else None


def _elementary(kind, axis):
    """The motion ``(turns, quaternion, slides, speeds)`` of a one-coordinate joint (the
    form of :class:`mbcourse.joints.Motion`)."""
    zero = np.zeros(3)
    if kind == REVOLUTE:
        return ((axis, 0, 0),), -1, (), ((0, axis, zero),)
    if kind == PRISMATIC:
        return (), -1, ((axis, 0),), ((0, zero, axis),)
    return (), -1, (), ()


def _elementary_rows(kind, axis, orientation, parent_point, child_point):
    """Chapter 2's rows (:meth:`mbcourse.joints.Joint.row_parameters`) of a one-coordinate
    joint given by its packed kind (``[]`` for :data:`GENERAL`, which needs its joint)."""
    name = {REVOLUTE: "revolute", PRISMATIC: "prismatic", WELD: "fixed"}.get(int(kind))
    if name is None:
        return []
    extra = {} if kind == WELD else {"axis": np.asarray(axis, dtype=float)}
    joint = JOINT_KINDS[name]("", 0, 0, 1, np.asarray(parent_point, dtype=float),
                              np.asarray(child_point, dtype=float),
                              np.asarray(orientation, dtype=float).reshape(3, 3), **extra)
    return joint.row_parameters()


def _pack_rows(row_i, row_g, rows):
    """Write a joint's rows ``[(type, params)]`` into ``ints[:, I_ROWS]`` and
    ``geo[:, G_ROWS:]`` (columns ``R_TYPE`` ... of :mod:`.common`)."""
    if len(rows) > MAX_ROWS:
        raise ModelError(f"a joint has at most {MAX_ROWS} rows of chapter 2")
    row_i[I_ROWS] = len(rows)
    for r, (kind, params) in enumerate(rows):
        g = row_g[G_ROWS + ROW_WIDTH * r:G_ROWS + ROW_WIDTH * (r + 1)]
        g[R_TYPE] = {**_ROW_TYPES, **_PLANAR_ROW_TYPES}[kind]
        if kind == "point_line":                    # a 2-vector normal and point, an offset
            g[R_N:R_N + 2], g[R_RHO:R_RHO + 2], g[R_D] = params
        elif kind == "rotation":
            g[R_D] = params[0]
        else:
            flat = np.concatenate([np.ravel(np.asarray(x, dtype=float)) for x in params])
            g[R_N:R_N + flat.size] = flat


def _pack_motion(row_i, row_g, motion, q0, v0):
    """Write a joint's motion (joint-local indices shifted to the model's ``q0``, ``v0``)
    into its packed rows (columns :data:`.common.I_NV` ... and :data:`.common.G_TURN1` ...)."""
    turns, quaternion, slides, speeds = motion
    if len(turns) > 2 or len(slides) > 3 or len(speeds) > 6:
        raise ModelError("a joint's motion has at most two turns, three slides and six speeds")
    row_i[I_NV] = len(speeds)
    row_i[I_TURN1:I_FRAME] = -1
    for t, (axis, qk, vk) in enumerate(turns):
        row_i[I_TURN1 + 2 * t:I_TURN1 + 2 * t + 2] = q0 + qk, v0 + vk
        row_g[G_TURN1 + 3 * t:G_TURN1 + 3 * t + 3] = axis
    if quaternion >= 0:
        row_i[I_QUAT] = q0 + quaternion
    for t, (vector, qk) in enumerate(slides):
        row_i[I_SLIDE + t] = q0 + qk
        row_g[G_SLIDE + 3 * t:G_SLIDE + 3 * t + 3] = vector
    for j, (frame, pv, kv) in enumerate(speeds):
        row_i[I_FRAME + j] = frame
        row_g[G_SPEED + 6 * j:G_SPEED + 6 * j + 6] = np.concatenate([pv, kv])


def pack_chain(kinds, parent, child, axis, orientation, parent_point, child_point, q_index,
               v_index, masses, inertias, gravity=(0.0, 0.0, 0.0), motions=None, loads=None,
               springs=None, spring_dampers=None, rows=None):
    """Pack a tree's constants for the kernels.

    ``motions`` (optional, one per joint): each joint's own motion ``(turns, quaternion,
    slides, speeds)`` (:meth:`mbcourse.joints.Joint.motion`); by default the one-coordinate
    motion of ``kinds`` and ``axis``. ``rows`` (optional, one per joint): its chapter 2
    rows ``[(type, params)]`` (:meth:`mbcourse.joints.Joint.row_parameters`); by default
    those of the one-coordinate kinds. ``loads`` (optional, (n, 21)): per body the constant
    loads' columns ``B_FORCE:`` of ``body`` (:func:`_pack_loads`); ``springs`` (optional,
    (m, 18)): per joint and speed ``(stiffness, stiffness rest, damping)`` summed over the
    joint's springs (:func:`_pack_joint_springs`);
    ``spring_dampers`` (optional, (S, 11)): one row per spring-damper between bodies,
    appended to ``geo`` after the joints' rows (their number in ``body[0, B_SPRINGS]``).

    Returns
    -------
    ints : ndarray of int64, shape (m, 21)
        ``kind, parent, child, q index, v index`` per joint, base-to-leaves order, then the
        joint's motion (:mod:`.common`: ``I_NV``, ``I_TURN1``, ... ``I_FRAME``) and its
        number of rows (``I_ROWS``).
    geo : ndarray, shape (m, 195)
        ``axis (3), orientation (9, row-major), parent_point (3), child_point (3)``, then
        the motion's turn axes, slide vectors and per speed ``(p, k)``, then per speed the
        joint springs (``G_SPRING``), then the rows (``G_ROWS``); then one row per
        spring-damper.
    body : ndarray, shape (n + 1, 55)
        ``mass, inertia (9, row-major, body axes)`` per body, then its constant loads
        (``B_FORCE``, ``B_LEVER``, ``B_BODY``); row 0 (the base) holds the gravity vector
        in columns 1..3, the number of spring-dampers in ``B_SPRINGS`` and 1 in ``B_FORCE``
        when some body carries a constant load; its columns ``B_MOVING`` and ``B_BASE:``
        stay zero here (:func:`route` fills them for a prescribed motion of the base).

    Examples
    --------
    >>> ints, geo, body = pack_chain([REVOLUTE], [0], [1], [(0, 0, 1)], [np.eye(3)],
    ...                              [(0, 0, 0)], [(-1, 0, 0)], [0], [0], [2.0], [np.eye(3)])
    >>> ints[:, :6].tolist(), geo.shape, body[1, 0], int(ints[0, I_ROWS])
    ([[0, 0, 1, 0, 0, 1]], (1, 195), np.float64(2.0), 5)
    """
    m = len(kinds)
    ints = np.zeros((m, INT_COLUMNS), dtype=np.int64)
    ints[:, :5] = np.stack([np.asarray(x, dtype=np.int64).reshape(m)
                            for x in (kinds, parent, child, q_index, v_index)], axis=1)
    geo = np.zeros((m, GEO_COLUMNS))
    geo[:, :18] = np.concatenate([np.asarray(axis, float).reshape(m, 3),
                                  np.asarray(orientation, float).reshape(m, 9),
                                  np.asarray(parent_point, float).reshape(m, 3),
                                  np.asarray(child_point, float).reshape(m, 3)], axis=1)
    for i in range(m):
        motion = (_elementary(ints[i, 0], geo[i, :3]) if motions is None
                  else motions[i])
        _pack_motion(ints[i], geo[i], motion, ints[i, 3], ints[i, 4])
        _pack_rows(ints[i], geo[i], _elementary_rows(ints[i, 0], geo[i, :3], geo[i, 3:12],
                                                     geo[i, 12:15], geo[i, 15:18])
                   if rows is None else rows[i])
    if springs is not None:
        geo[:, G_SPRING:G_ROWS] = springs
    S = 0 if spring_dampers is None else len(spring_dampers)
    if S:
        rows = np.zeros((S, GEO_COLUMNS))
        rows[:, :spring_dampers.shape[1]] = spring_dampers
        geo = np.concatenate([geo, rows])
    body = _body_array(masses, inertias, gravity, loads, S)
    for arr in (ints, geo, body):
        arr.flags.writeable = False
    return ints, geo, body


def _body_array(masses, inertias, gravity, loads, S):
    """``body`` (n + 1, 55) of :func:`pack_chain`: the masses, inertias, gravity, constant
    loads (or None) and the number ``S`` of spring-dampers."""
    n = len(masses)
    body = np.zeros((n + 1, BODY_COLUMNS))
    body[1:, 0] = masses
    body[1:, 1:10] = np.asarray(inertias, float).reshape(n, 9)
    body[0, 1:4] = gravity
    body[0, B_SPRINGS] = S
    if loads is not None:
        body[1:, B_FORCE:B_BASE] = loads
        body[0, B_FORCE] = float(np.any(loads != 0.0))  # the flag: some body carries a load
    return body


def _joint_kind(j):
    """``(kind, axis)`` of a joint, the label of ``ints[:, 0]``: a one-coordinate kind, or
    ``GENERAL`` (the kernels read the joint's packed motion and rows either way)."""
    described = j.elementary_motion
    if described is not None:
        return _KINDS[described[0]], described[1]
    if j.nq == 0 and j.nv == 0 and not j.moves_joint_point:
        return WELD, np.zeros(3)
    return GENERAL, np.zeros(3)


def model_data(model):
    """The packed constants of a Model for the kernels, or ``None`` when they do not apply.

    The kernels cover trees whose joints point away from the base; a floating body on a
    free joint is fine, and a prescribed motion of the base (``base_moves``) is taken by
    every kernel but the sweep (:func:`route` packs it at each call). Every kernel runs
    every joint kind (chapters 2 and 6's read the joints' packed rows, ``rows``), gravity,
    constant loads, joint springs (on joints whose coordinates are their speeds' integrals;
    chapter 6's on the joints the cut keeps), spring-dampers, generalized-force callables
    (:func:`route` adds them to ``tau``) and loads given as callables (:func:`route` adds
    them to the packed loads, configuration by configuration); Ivanov's sweep takes the
    inertia alone. The formulations run their NumPy versions otherwise. Prepared once per
    model version.

    Returns
    -------
    ModelData or None

    Examples
    --------
    >>> import mbcourse as mb
    >>> data = model_data(mb.models.double_pendulum())
    >>> data.nv, data.ints[:, 0].tolist() == [REVOLUTE, REVOLUTE]
    (2, True)
    """
    def build():
        try:
            joints = model.outward_joints("the compiled kernels")
        except TopologyError:
            return None
        loads, springs = _pack_loads(model), _pack_joint_springs(model, joints)
        if springs is None:
            return None
        described = [_joint_kind(j) for j in joints]
        rows = [_spatial_rows(j) for j in joints]
        ints, geo, body = pack_chain(
            [d[0] for d in described], [j.parent for j in joints], [j.child for j in joints],
            [d[1] for d in described], [j.orientation for j in joints],
            [j.parent_point for j in joints], [j.child_point for j in joints],
            [j.q_slice.start for j in joints], [j.v_slice.start for j in joints],
            model.masses(), model.inertias(), model.gravity,
            motions=[j.motion() for j in joints], loads=loads, springs=springs,
            spring_dampers=_pack_spring_dampers(model), rows=[r or [] for r in rows])
        state_loads = any(_is_state_load(load) for load in model.loads)
        weightless, springless = body.copy(), geo.copy()
        weightless[0, 1:4] = 0.0
        weightless[0, B_SPRINGS] = 0.0
        weightless[:, B_FORCE:] = 0.0
        springless[:, G_SPRING:G_ROWS] = 0.0
        for arr in (weightless, springless):
            arr.flags.writeable = False
        return ModelData(ints, geo, body, weightless, model.nv, model.nq,
                         all(r is not None for r in rows), springless,
                         bool(model.generalized_force_elements) or state_loads,
                         state_loads, model.base_motion is not None)

    return model.prepared("compiled", build)


def _spatial_rows(joint):
    """A joint's chapter 2 rows (:meth:`mbcourse.joints.Joint.row_parameters`), or None
    when its kind has none (a joint class that does not write them)."""
    try:
        rows = joint.row_parameters()
    except NotImplementedError:
        return None
    if len(rows) > MAX_ROWS or any(kind not in _ROW_TYPES for kind, _ in rows):
        return None
    return rows


def _pack_loads(model):
    """The constant loads as the columns ``B_FORCE:B_BASE`` of ``body`` (n, 21): per body the sums
    of the forces and torques given in inertial axes, ``G_k = sum P_k F`` of those forces
    (``P`` the point, body axes), and the forces and moments about the centre given in body
    axes. A load with a callable part is left out: :func:`route` adds it at each
    configuration (:func:`_state_load_body`)."""
    out = np.zeros((model.n, B_BASE - B_FORCE))
    for load in model.loads:
        if not _is_state_load(load):
            _add_load(out[load.body - 1], load, load.force, load.torque)
    return out


def _is_state_load(load):
    return callable(load.force) or callable(load.torque)


def _add_load(row, load, force, torque):
    """Add one load, ``force`` and ``torque`` given as numbers (or None), to its body's row
    of ``body[:, B_FORCE:]``."""
    F = np.zeros(3) if force is None else np.asarray(force, dtype=float)
    M = np.zeros(3) if torque is None else np.asarray(torque, dtype=float)
    if load.frame == "body":
        at = B_BODY - B_FORCE
        row[at:at + 3] += F
        row[at + 3:at + 6] += M + np.cross(load.point, F)
    else:
        row[0:3] += F
        row[3:6] += M
        row[B_LEVER - B_FORCE:B_BODY - B_FORCE] += np.outer(load.point, F).ravel()


def _state_load_body(model, body, state):
    """``body`` (n + 1, 55) once per configuration of a checked ``state``, (B, n + 1, 55),
    with the loads that are callables of ``(t, q, qd)`` evaluated there (each callable once
    per configuration, as :func:`mbcourse.forces.applied_wrenches` does) and added."""
    out = np.repeat(np.array(body)[None], state.q.shape[0], axis=0)
    out[:, 0, B_FORCE] = 1.0                       # the flag: some body carries a load
    for load in model.loads:
        if not _is_state_load(load):
            continue
        values = [None if v is None else
                  np.broadcast_to(evaluate(v, state.t, state.q, state.qd, (3,),
                                           f"load {load.name!r}: {part}"),
                                  (state.q.shape[0], 3))
                  for v, part in ((load.force, "force"), (load.torque, "torque"))]
        for b in range(out.shape[0]):
            _add_load(out[b, load.body, B_FORCE:B_BASE], load,
                      *(None if v is None else v[b] for v in values))
    out.flags.writeable = False                    # the packed arrays' type: one compilation
    return out


def _pack_spring_dampers(model):
    """One row per spring-damper: ``a, b, point_a, point_b, stiffness, rest_length,
    damping`` (columns ``S_A`` ... ``S_C`` of :mod:`.common`), or None without any."""
    if not model.springs:
        return None
    out = np.zeros((len(model.springs), S_C + 1))
    for row, s in zip(out, model.springs):
        row[S_A], row[S_B] = s.body_a, s.body_b
        row[S_PA:S_PA + 3], row[S_PB:S_PB + 3] = s.point_a, s.point_b
        row[S_K], row[S_L0], row[S_C] = s.stiffness, s.rest_length, s.damping
    return out


def _pack_joint_springs(model, joints):
    """Per joint and speed ``(c, c rest, d)`` of the joint springs, summed (m, 18); None when
    a spring sits on a joint whose coordinates are not its speeds' integrals."""
    out = np.zeros((len(joints), G_ROWS - G_SPRING))
    row = {j.index: i for i, j in enumerate(joints)}
    for s in model.joint_springs:
        j = s.joint
        if j.nq != j.nv:
            return None
        c, rest, d = (np.broadcast_to(np.asarray(x, dtype=float), (j.nv,))
                      for x in (s.stiffness, s.rest, s.damping))
        per_speed = out[row[j.index]].reshape(6, 3)
        per_speed[:j.nv, 0] += c
        per_speed[:j.nv, 1] += c * rest
        per_speed[:j.nv, 2] += d
    return out


def pack_cut(model, joints, tree, q_tree, v_tree, limits):
    """The cut-joint kernel's constants (:class:`~mbcourse.kernels.loops.CutData`): the
    reduced tree's :func:`model_data` ``tree``, the cut ``joints`` of ``model`` packed as
    :func:`pack_chain` packs a tree's (their motion and chapter 2's rows, indices into the
    Model's vectors), the positions ``q_tree``, ``v_tree`` of the tree's coordinates in the
    Model's and ``limits`` ``(rcond, tol)``; None if a cut joint's kind has no chapter 2
    rows."""
    rows = [_spatial_rows(j) for j in joints]
    if any(r is None for r in rows):
        return None
    described = [_joint_kind(j) for j in joints]
    cints, cgeo, _ = pack_chain(
        [d[0] for d in described], [j.parent for j in joints], [j.child for j in joints],
        [d[1] for d in described], [j.orientation for j in joints],
        [j.parent_point for j in joints], [j.child_point for j in joints],
        [j.q_slice.start for j in joints], [j.v_slice.start for j in joints], [], [],
        motions=[j.motion() for j in joints], rows=rows)
    arrays = (cints, cgeo, np.asarray(q_tree, dtype=np.int64),
              np.asarray(v_tree, dtype=np.int64), np.asarray(limits, dtype=float))
    for arr in arrays[2:]:
        arr.flags.writeable = False
    return loops.CutData(tree.ints, tree.geo, tree.body, *arrays, model.nv,
                         bool(model.generalized_force_elements) or tree.state_loads,
                         tree.state_loads, model.base_motion is not None, model.nq)


class AbsoluteData(NamedTuple):
    """Packed constants of chapter 2's simulation kernel
    (:func:`mbcourse.kernels.absolute.absolute_rhs`): every joint's rows ``rints``,
    ``rgeo`` (parent, child and rows as :func:`pack_chain` packs them, any topology), the
    bodies ``body``, the spring-dampers ``sgeo`` (S, 11), the planar form's heights
    ``zlev`` and ``planar``."""
    rints: np.ndarray
    rgeo: np.ndarray
    body: np.ndarray
    sgeo: np.ndarray
    zlev: np.ndarray
    planar: int


def pack_absolute(model, planar, z_levels=None):
    """:class:`AbsoluteData` of a Model in the spatial or ``planar`` form (the heights
    ``z_levels`` (n + 1,) of the planar form), or None when the kernel does not apply:
    forces that need the generalized state (joint springs, control laws, loads given as
    callables), or a joint kind without chapter 2's rows. A prescribed base motion is
    packed at each time by :func:`with_base_motion`. Prepared once per model version and
    form."""
    def build():
        if (model.joint_springs
                or model.generalized_force_elements
                or any(_is_state_load(load) for load in model.loads)):
            return None
        types = _PLANAR_ROW_TYPES if planar else _ROW_TYPES
        m = len(model.joints)
        rints = np.zeros((m, INT_COLUMNS), dtype=np.int64)
        rgeo = np.zeros((m, GEO_COLUMNS))
        for a, j in enumerate(model.joints):
            try:
                rows = j.row_parameters(planar)
            except NotImplementedError:
                return None
            if (rows is None or len(rows) > MAX_ROWS
                    or any(kind not in types for kind, _ in rows)):
                return None
            rints[a, 1], rints[a, 2] = j.parent, j.child
            _pack_rows(rints[a], rgeo[a], rows)
        springs = _pack_spring_dampers(model)
        sgeo = np.zeros((0, S_C + 1)) if springs is None else springs
        body = _body_array(model.masses(), model.inertias(), model.gravity, _pack_loads(model),
                           len(sgeo))
        zlev = np.zeros(model.n + 1) if z_levels is None else np.asarray(z_levels, float)
        arrays = (rints, rgeo, body, sgeo, zlev)
        for arr in arrays:
            arr.flags.writeable = False
        return AbsoluteData(*arrays, int(bool(planar)))

    return model.prepared(("absolute", bool(planar)), build)


def fast_arrays(nv, q, qd, tau, t, nq=-1):
    """``(q, qd, tau, single)`` as (B, nq) and (B, nv) arrays when the inputs need no
    conversion (float64, C-contiguous, aligned, writeable ndarrays of shape (nq,) or (B, nq)
    and (nv,) or (B, nv), ``tau`` like ``qd`` or None, a finite ``t``; ``nq = nv`` by
    default); ``None`` otherwise (the caller then checks them the long way)."""
    if (q.__class__ is not _NDARRAY or qd.__class__ is not _NDARRAY or q.dtype is not _F8
            or qd.dtype is not _F8):
        return None
    if t.__class__ is not float and (t.__class__ is bool or not isinstance(t, _REAL)):
        return None
    shape, qshape = qd.shape, q.shape
    single = len(shape) == 1
    if (len(qshape) != len(shape) or not 0 < len(shape) <= 2 or shape[-1] != nv
            or qshape[-1] != (nv if nq < 0 else nq) or (not single and qshape[0] != shape[0])
            or not math.isfinite(t) or not (q.flags.carray and qd.flags.carray)):
        return None
    if tau is None:
        tau = np.zeros(shape)
    elif (tau.__class__ is not _NDARRAY or tau.dtype is not _F8 or tau.shape != shape
          or not tau.flags.carray):
        return None
    if single:
        return q[None], qd[None], tau[None], True
    return q, qd, tau, False


def state_arrays(state):
    """A checked :class:`~mbcourse.model.State`'s arrays as fresh C-contiguous float64
    copies (one kernel signature for every input)."""
    return tuple(np.array(x, dtype=np.float64, order="C")
                 for x in (state.q, state.qd, state.tau))


_POOL = []


def _split(function, args, q, qd, tau, qdd):
    """Run ``function`` on contiguous slices of the batch, one per numba thread, in
    parallel (the kernels release the GIL)."""
    threads = max(1, nb.get_num_threads())
    if not _POOL:
        _POOL.append(ThreadPoolExecutor(max_workers=threads))
    B = q.shape[0]
    chunk = (B + threads - 1) // threads
    parts = [slice(lo, min(B, lo + chunk)) for lo in range(0, B, chunk)]
    done = _POOL[0].map(lambda s: function(*args, q[s], qd[s], tau[s], qdd[s]), parts)
    return all(list(done))


def batch(function, args, q, qd, tau, qdd):
    """Call a kernel on a batch, on every core when it has at least :data:`PARALLEL_BATCH`
    configurations."""
    if q.shape[0] >= PARALLEL_BATCH:
        return _split(function, args, q, qd, tau, qdd)
    return function(*args, q, qd, tau, qdd)


def route(model, kernel, q, qd, tau, t, *, what, check, compiled=None, gravity=True,
          data=None, applies=True, generalized=None):
    """The front door of the compiled route: try kernel ``kernel`` on a formulation's inputs.

    The kernel runs on the inputs as they are when they need no conversion
    (:func:`fast_arrays`), otherwise on the state ``check()`` returns (the formulation's
    own input check, which also names bad inputs).

    Parameters
    ----------
    model : Model
    kernel : str
        A registered kernel's name (:data:`KERNELS`).
    q, qd, tau, t
        The formulation's inputs, unchecked (``tau`` may be None).
    what : str
        The public function's name, for messages.
    check : callable
        ``check() -> State``: the formulation's input check.
    compiled : bool, optional
        ``None`` try the kernel when it applies, ``False`` skip it, ``True`` raise
        :class:`~mbcourse.errors.ModelError` (the kernel's refusal) when it does not apply.
    gravity : bool
        ``False`` runs the kernel on the inertia alone (gravity, loads and springs
        switched off, no callables).
    data : optional
        The kernel's packed constants when the formulation prepares them (default
        ``pack(model)`` of the registered kernel).
    applies : bool
        ``False`` when the call's options rule the kernel out.
    generalized : callable, optional
        ``generalized(state) -> (B, nv)``: the model's generalized-force callables at a
        checked state (:func:`mbcourse.forces.callable_forces`). A model that has them, or
        loads given as callables, runs the kernel only when this is given: on the checked
        state, with them added to ``tau`` and the loads to the bodies' packed loads
        (evaluated once per configuration in Python, handed in as numbers).

    Returns
    -------
    (out, state)
        ``out`` in the inputs' batch shape, or ``None`` when the kernel does not apply or
        declined: then the caller runs its NumPy route on ``state`` (``None`` if ``check``
        has not run yet).

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> out, state = route(m, "vereshchagin", np.zeros(2), np.zeros(2), None, 0.0,
    ...                    what="example", check=lambda: m.check_state(np.zeros(2), np.zeros(2)))
    >>> out.shape, state is None
    ((2,), True)
    """
    if compiled is False:
        return None, None
    entry = KERNELS[kernel]
    if applies and data is None:
        data = entry.pack(model)
    moving = getattr(data, "base_moves", False)
    if not applies or data is None or (moving and not entry.moving_base):
        if compiled:
            raise ModelError(f"{what}: {entry.refusal}; use compiled=None")
        return None, None
    args = data.args(gravity)
    if gravity and getattr(data, "callables", False):
        if generalized is None:                     # the caller cannot evaluate them
            if compiled:
                raise ModelError(f"{what}: {entry.refusal}; use compiled=None")
            return None, None
        state = check()
        args = with_base_motion(model, args, state.t) if moving else args
        q_, qd_, tau_ = state_arrays(state)
        tau_ += np.asarray(generalized(state), dtype=float).reshape(tau_.shape)
        out = np.zeros(qd_.shape)
        if getattr(data, "state_loads", False):         # one body array per configuration
            bodies = _state_load_body(model, args[2], state)
            ok = all(entry.function(args[0], args[1], bodies[b], *args[3:], q_[b:b + 1],
                                    qd_[b:b + 1], tau_[b:b + 1], out[b:b + 1])
                     for b in range(out.shape[0]))
        else:
            ok = batch(entry.function, args, q_, qd_, tau_, out)
        if ok:
            return state.result(out, what), state
        return None, state
    fast = fast_arrays(data.nv, q, qd, tau, t, getattr(data, "nq", -1))
    if fast is not None:
        args = with_base_motion(model, args, t) if moving else args
        out = np.zeros(fast[1].shape)
        if fast[3]:                                     # one state: the kernel directly
            if entry.function(*args, *fast[:3], out):
                return out[0], None
        elif batch(entry.function, args, *fast[:3], out):
            return out, None
        return None, check()            # declined; the checked arrays are these, so no rerun
    state = check()
    args = with_base_motion(model, args, state.t) if moving else args
    out = np.zeros(state.qd.shape)
    if batch(entry.function, args, *state_arrays(state), out):
        return state.result(out, what), state
    return None, state


def with_base_motion(model, args, t):
    """``args`` (a kernel's leading arguments, ``body`` third) with ``body``'s row 0
    holding the prescribed motion of the base at time ``t`` (:data:`.common.B_BASE`),
    read-only like the packed arrays (one compilation); for a model without one, ``args``.
    :func:`route` calls it for the kernels registered with ``moving_base``, a simulation's
    right-hand side at each of its times.

    Examples
    --------
    >>> import mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> args = model_data(m).args()
    >>> with_base_motion(m, args, 0.0) is args                # the base does not move
    True
    >>> _ = m.set_base_motion(position=lambda t: (0.0, 0.1 * t, 0.0), velocity=(0.0, 0.1, 0.0))
    >>> moved = with_base_motion(m, model_data(m).args(), 2.0)
    >>> moved[2][0, B_BASE + 18:B_BASE + 24].tolist()       # the origin's position, velocity
    [0.0, 0.2, 0.0, 0.0, 0.1, 0.0]
    """
    if model.base_motion is None:
        return args
    s = model.base_motion.state(float(t))
    body = np.array(args[2])
    body[0, B_MOVING] = 1.0
    body[0, B_BASE:B_BASE + 24] = np.concatenate(
        [np.asarray(s[key], dtype=float).ravel() for key in
         ("orientation", "angular_velocity", "acceleration", "angular_acceleration",
          "position", "velocity")])
    body.flags.writeable = False
    return (args[0], args[1], body) + tuple(args[3:])


# ---------------------------------------------------------------- the registered kernels
from . import composite, loops, poisson, vereshchagin  # noqa: E402

_TREE_JOINTS = ("joints pointing away from the base and no prescribed base motion (a free "
                "joint is fine)")
register("vereshchagin", vereshchagin.vereshchagin_forward, moving_base=True,
         refusal="the compiled recursion needs joints pointing away from the base")
register("poisson", poisson.sweep_velocities,
         refusal=f"the compiled sweep needs solver='sweep', {_TREE_JOINTS}")
register("composite", composite.composite_forward, moving_base=True,
         refusal="the compiled composite-body tree equations need joints pointing away from "
                 "the base")
register("loops", loops.loops_forward, pack=lambda model: None, moving_base=True,
         refusal="the compiled cut-joint method needs the default cut, planar=None, no extra "
                 "constraints, cut joints whose kinds have chapter 2's rows and joint springs "
                 "on uncut joints only")

# chapter 3's and chapter 2's own kernels register "tree" and "cartesian" when imported
from . import absolute, cartesian, tree  # noqa: E402
