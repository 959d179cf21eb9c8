"""The one description every formulation consumes: :class:`Model` (the **contract**).

A model is a set of rigid bodies joined by joints, plus gravity, applied loads and an
optional prescribed motion of body 0 (the base, called ``"ground"``).

Frames and vectors (Yudintsev 3.4.2, after Wittenburg):

* Each body's frame has its origin at the body's centre of mass ``C_i``; ``inertia`` is
  the central inertia tensor in body axes.
* ``parent_point`` is the book's ``c_{i+(a) a}``: from the parent's centre of mass to the
  joint point, in parent axes (for the base: the joint point in base axes).
  ``child_point`` is ``c_{i-(a) a}``: from the child's centre of mass to its joint point,
  in child axes.
* ``R_a(q)`` (:meth:`Joint.rotation`) maps child components to parent components,
  ``v_parent = R_a v_child``. The book's ``G_a`` (3.75), ``e^(i-) = G_a e^(i+)``, is its
  transpose (:meth:`Joint.G`); with ``A_i`` mapping body ``i`` axes to inertial axes,
  ``A_{i-} = A_{i+} G_a^T`` (3.123).
* ``z_a(q)`` (:meth:`Joint.z`) is the joint vector: from the joint point on the parent to
  the joint point on the child, in parent axes (zero for revolute, universal, spherical).
* ``p(q)`` and ``k(q)`` (:meth:`Joint.p`, :meth:`Joint.k`) are ``3 x nv`` matrices of the
  axis vectors ``p_{ai}``, ``k_{ai}`` in parent axes: the relative angular velocity of the
  child is ``Omega_a = p v_a`` (3.104) and the local (parent-frame) derivative of ``z_a``
  is ``k v_a`` (3.101). :meth:`Joint.bias` returns the velocity-product terms ``w_a``
  (3.106) and ``s_a`` (3.102) of their second derivatives.

Joint kinds and their coordinates (``q``: configuration, ``v``: generalized speeds):

==============  ====  ====  ==========================================================
kind            nq    nv    coordinates
==============  ====  ====  ==========================================================
revolute        1     1     angle about ``axis`` (right hand), ``v = dq/dt``
prismatic       1     1     displacement along ``axis`` (``z = axis q``)
screw           1     1     angle about ``axis``; advance ``lead * q / (2 pi)`` along it
cylindrical     2     2     (angle about ``axis``, displacement along ``axis``)
universal       2     2     angle ``q1`` about ``axes[0]``, then ``q2`` about the rotated ``axes[1]``
spherical       4     3     unit quaternion ``(w, x, y, z)``; ``v`` = relative angular
                            velocity in child axes
free            7     6     ``z`` (3, parent axes) then a quaternion; ``v`` = (dz/dt in
                            parent axes, relative angular velocity in child axes)
fixed           0     0     none: the child is welded to the parent
==============  ====  ====  ==========================================================

Axes are given in parent axes, where the child's axes coincide with the parent's at
``q = 0`` unless ``orientation=R0`` is given (then ``R_a(q) = R_joint(q) @ R0``).
Coordinates are stacked in the order the joints were added; ``tau`` holds generalized
forces in the order of ``v`` (torques for angles, forces for displacements).

Examples
--------
>>> import numpy as np
>>> import mbcourse as mb
>>> model = mb.Model(gravity=(0.0, -9.81, 0.0))
>>> model.add_body("crank", mass=1.0, inertia=np.diag([0.01, 0.1, 0.1]))
Body('crank', index=1, mass=1.0)
>>> model.add_joint("O", "revolute", parent="ground", child="crank",
...                 parent_point=(0.0, 0.0, 0.0), child_point=(-0.5, 0.0, 0.0),
...                 axis=(0.0, 0.0, 1.0))
Joint('O', 'revolute', parent='ground', child='crank')
>>> model.nq, model.nv
(1, 1)
>>> r, A = model.body_poses([np.pi / 2])
>>> np.round(r[1], 12) + 0.0        # centre of mass of the crank, straight up
array([0. , 0.5, 0. ])
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import graph as _graph
from .errors import ModelError, ShapeError, TopologyError
from .spatial import axis_angle, is_rotation, quat_rate_matrix, quat_to_matrix, vee

__all__ = ["Model", "Body", "Joint", "Load", "BaseMotion", "JOINT_KINDS"]

_EYE = np.eye(3)


# ------------------------------------------------------------------------ helpers
def _vector(value, what, length=3):
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ShapeError(f"{what} must be {length} numbers, got {value!r}") from None
    if arr.shape != (length,):
        raise ShapeError(f"{what} must have shape ({length},), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ShapeError(f"{what} must be finite, got {arr.tolist()}")
    return arr


def _unit(value, what):
    arr = _vector(value, what)
    norm = np.linalg.norm(arr)
    if norm < 1e-12:
        raise ModelError(f"{what} must be a nonzero direction vector, got {arr.tolist()}")
    return arr / norm


def _positive(value, what):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ModelError(f"{what} must be a positive finite number, got {value!r}")
    value = float(value)
    if not (np.isfinite(value) and value > 0.0):
        raise ModelError(f"{what} must be a positive finite number, got {value}")
    return value


def _inertia(value, body):
    what = f"body {body!r}: inertia"
    try:
        J = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ShapeError(f"{what} must be a 3x3 tensor or 3 principal moments, got {value!r}") \
            from None
    if J.shape == (3,):
        J = np.diag(J)
    if J.shape != (3, 3):
        raise ShapeError(
            f"{what} must be a 3x3 central inertia tensor (or 3 principal moments), "
            f"got shape {J.shape}"
        )
    if not np.all(np.isfinite(J)):
        raise ModelError(f"{what} must be finite, got {J.tolist()}")
    scale = max(np.abs(J).max(), 1e-300)
    if np.abs(J - J.T).max() > 1e-9 * scale:
        raise ModelError(f"{what} must be symmetric, got {J.tolist()}")
    J = 0.5 * (J + J.T)
    moments = np.linalg.eigvalsh(J)
    if moments[0] <= 1e-12 * scale:
        raise ModelError(
            f"{what} must be positive definite; its principal moments are "
            f"{np.round(moments, 12).tolist()}"
        )
    a, b, c = moments
    if c > a + b + 1e-9 * scale:
        raise ModelError(
            f"{what} violates the triangle inequality of principal moments "
            f"({c:g} > {a:g} + {b:g}): no rigid body has this inertia"
        )
    return J


def _time_function(value, what, shape):
    """Constant array or callable of t -> array; returns a callable, checked at t=0."""
    if value is None:
        return None
    if callable(value):
        fn = value
    else:
        const = np.asarray(value, dtype=float)
        fn = lambda t, _c=const: _c  # noqa: E731
    try:
        sample = np.asarray(fn(0.0), dtype=float)
    except Exception as exc:  # the user's function failed: say which one
        raise ModelError(f"{what}: calling it at t=0 failed: {exc}") from exc
    if sample.shape != shape or not np.all(np.isfinite(sample)):
        raise ShapeError(f"{what} must give a finite array of shape {shape}, got {sample!r}")
    return fn


# ------------------------------------------------------------------------- bodies
@dataclass(eq=False)
class Body:
    """A rigid body: name, index (1..n), mass and central inertia in body axes."""

    name: str
    index: int
    mass: float | None
    inertia: np.ndarray | None

    def __repr__(self):
        if self.index == 0:
            return f"Body({self.name!r}, index=0, base)"
        return f"Body({self.name!r}, index={self.index}, mass={self.mass})"


# ------------------------------------------------------------------------- joints
class Joint:
    """A joint ``u_a`` between ``parent = i+(a)`` and ``child = i-(a)``.

    Subclasses implement one joint kind each. All methods take ``q`` of shape
    ``(..., nq)`` (and ``v`` of shape ``(..., nv)``) and broadcast over leading dims.
    """

    kind = ""
    nq = 0
    nv = 0
    coordinate_names: tuple = ()

    def __init__(self, name, index, parent, child, parent_point, child_point, orientation):
        self.name = name
        self.index = index  # position a - 1
        self.parent = parent
        self.child = child
        self.parent_point = parent_point
        self.child_point = child_point
        self.orientation = orientation
        self.q_slice = slice(0, 0)
        self.v_slice = slice(0, 0)
        self._parent_name = self._child_name = ""

    def __repr__(self):
        return (f"Joint({self.name!r}, {self.kind!r}, parent={self._parent_name!r}, "
                f"child={self._child_name!r})")

    # -- to be provided by each kind ------------------------------------------
    def _joint_rotation(self, q):
        return np.broadcast_to(_EYE, q.shape[:-1] + (3, 3))

    def z(self, q):
        """Joint vector ``z_a(q)`` in parent axes, shape (..., 3)."""
        q = np.asarray(q, dtype=float)
        return np.zeros(q.shape[:-1] + (3,))

    def p(self, q):
        """Axis vectors ``p_{ai}`` as columns, parent axes, shape (..., 3, nv)."""
        q = np.asarray(q, dtype=float)
        return np.zeros(q.shape[:-1] + (3, self.nv))

    def k(self, q):
        """Axis vectors ``k_{ai} = dz/dq_{ai}`` as columns, parent axes, shape (..., 3, nv)."""
        q = np.asarray(q, dtype=float)
        return np.zeros(q.shape[:-1] + (3, self.nv))

    def bias(self, q, v):
        """Velocity-product terms ``(w_a, s_a)``, each shape (..., 3).

        ``w_a`` = (local derivative of ``p``) ``v`` (3.106) and ``s_a`` = (local derivative
        of ``k``) ``v`` (3.102), so that the relative angular acceleration is
        ``p dv/dt + w_a`` and the local second derivative of ``z_a`` is ``k dv/dt + s_a``.
        """
        q = np.asarray(q, dtype=float)
        zero = np.zeros(q.shape[:-1] + (3,))
        return zero, zero.copy()

    def qdot(self, q, v):
        """Time derivative of the configuration, shape (..., nq)."""
        return np.array(v, dtype=float)

    def neutral(self):
        """The configuration ``q = 0`` (identity quaternion for rotations), shape (nq,)."""
        return np.zeros(self.nq)

    # -- common -------------------------------------------------------------------
    def rotation(self, q):
        """``R_a(q)``: child axes to parent axes, shape (..., 3, 3)."""
        return self._joint_rotation(np.asarray(q, dtype=float)) @ self.orientation

    def G(self, q):
        """The book's ``G_a(q) = R_a(q)^T`` (3.75): ``e^(i-) = G_a e^(i+)``."""
        return np.swapaxes(self.rotation(q), -1, -2)


def _axis_column(axis, q):
    return np.broadcast_to(axis[:, None], q.shape[:-1] + (3, 1)).copy()


class Revolute(Joint):
    """One rotation about ``axis`` (the book's "цилиндрический шарнир")."""

    kind, nq, nv, coordinate_names = "revolute", 1, 1, ("angle",)

    def __init__(self, *args, axis):
        super().__init__(*args)
        self.axis = axis

    def _joint_rotation(self, q):
        return axis_angle(self.axis, q[..., 0])

    def p(self, q):
        return _axis_column(self.axis, np.asarray(q, dtype=float))


class Prismatic(Joint):
    """A translation along ``axis``: ``z = axis q``."""

    kind, nq, nv, coordinate_names = "prismatic", 1, 1, ("displacement",)

    def __init__(self, *args, axis):
        super().__init__(*args)
        self.axis = axis

    def z(self, q):
        return np.asarray(q, dtype=float)[..., :1] * self.axis

    def k(self, q):
        return _axis_column(self.axis, np.asarray(q, dtype=float))


class Screw(Joint):
    """Rotation ``q`` about ``axis`` with advance ``lead q / (2 pi)`` along it."""

    kind, nq, nv, coordinate_names = "screw", 1, 1, ("angle",)

    def __init__(self, *args, axis, lead):
        super().__init__(*args)
        self.axis = axis
        self.lead = lead

    def _joint_rotation(self, q):
        return axis_angle(self.axis, q[..., 0])

    def z(self, q):
        return np.asarray(q, dtype=float)[..., :1] * (self.lead / (2 * np.pi)) * self.axis

    def p(self, q):
        return _axis_column(self.axis, np.asarray(q, dtype=float))

    def k(self, q):
        return _axis_column(self.axis * (self.lead / (2 * np.pi)), np.asarray(q, dtype=float))


class Cylindrical(Joint):
    """Rotation ``q[0]`` about and translation ``q[1]`` along the same ``axis``."""

    kind, nq, nv, coordinate_names = "cylindrical", 2, 2, ("angle", "displacement")

    def __init__(self, *args, axis):
        super().__init__(*args)
        self.axis = axis

    def _joint_rotation(self, q):
        return axis_angle(self.axis, q[..., 0])

    def z(self, q):
        return np.asarray(q, dtype=float)[..., 1:2] * self.axis

    def p(self, q):
        q = np.asarray(q, dtype=float)
        out = np.zeros(q.shape[:-1] + (3, 2))
        out[..., :, 0] = self.axis
        return out

    def k(self, q):
        q = np.asarray(q, dtype=float)
        out = np.zeros(q.shape[:-1] + (3, 2))
        out[..., :, 1] = self.axis
        return out


class Universal(Joint):
    """Cardan joint: ``q[0]`` about ``axes[0]`` (parent-fixed), then ``q[1]`` about the
    rotated ``axes[1]`` (child-fixed)."""

    kind, nq, nv, coordinate_names = "universal", 2, 2, ("angle1", "angle2")

    def __init__(self, *args, axes):
        super().__init__(*args)
        self.axes = axes

    def _joint_rotation(self, q):
        return axis_angle(self.axes[0], q[..., 0]) @ axis_angle(self.axes[1], q[..., 1])

    def p(self, q):
        q = np.asarray(q, dtype=float)
        out = np.empty(q.shape[:-1] + (3, 2))
        out[..., :, 0] = self.axes[0]
        out[..., :, 1] = axis_angle(self.axes[0], q[..., 0]) @ self.axes[1]
        return out

    def bias(self, q, v):
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        p2 = axis_angle(self.axes[0], q[..., 0]) @ self.axes[1]
        w = (v[..., 0] * v[..., 1])[..., None] * np.cross(self.axes[0], p2)
        return w, np.zeros_like(w)


class Spherical(Joint):
    """Ball joint: a unit quaternion ``(w, x, y, z)``; speeds = relative angular
    velocity in child axes (so ``p = R_a`` and ``w_a = 0``)."""

    kind, nq, nv, coordinate_names = "spherical", 4, 3, ("qw", "qx", "qy", "qz")

    def _joint_rotation(self, q):
        return quat_to_matrix(q[..., :4])

    def p(self, q):
        return self.rotation(q)

    def qdot(self, q, v):
        q = np.asarray(q, dtype=float)
        omega_joint = np.asarray(v, dtype=float) @ self.orientation.T  # R0 v
        return (quat_rate_matrix(q) @ omega_joint[..., None])[..., 0]

    def neutral(self):
        return np.array([1.0, 0.0, 0.0, 0.0])


class Free(Joint):
    """Six degrees of freedom: ``z`` (3, parent axes) then a unit quaternion."""

    kind, nq, nv = "free", 7, 6
    coordinate_names = ("x", "y", "z", "qw", "qx", "qy", "qz")

    def _joint_rotation(self, q):
        return quat_to_matrix(q[..., 3:7])

    def z(self, q):
        return np.array(np.asarray(q, dtype=float)[..., :3])

    def p(self, q):
        q = np.asarray(q, dtype=float)
        out = np.zeros(q.shape[:-1] + (3, 6))
        out[..., :, 3:] = self.rotation(q)
        return out

    def k(self, q):
        q = np.asarray(q, dtype=float)
        out = np.zeros(q.shape[:-1] + (3, 6))
        out[..., :, :3] = _EYE
        return out

    def qdot(self, q, v):
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        omega_joint = v[..., 3:] @ self.orientation.T
        quat_dot = (quat_rate_matrix(q[..., 3:7]) @ omega_joint[..., None])[..., 0]
        return np.concatenate([v[..., :3], quat_dot], axis=-1)

    def neutral(self):
        return np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])


class Fixed(Joint):
    """No relative motion (a weld): ``R_a = orientation``, ``z = 0``; ``nq = nv = 0``."""

    kind, nq, nv, coordinate_names = "fixed", 0, 0, ()


JOINT_KINDS = {
    cls.kind: cls
    for cls in (Revolute, Prismatic, Screw, Cylindrical, Universal, Spherical, Free, Fixed)
}
_NEEDS_AXIS = {"revolute", "prismatic", "screw", "cylindrical"}


# ------------------------------------------------------------------ loads, base
@dataclass(eq=False)
class Load:
    """A force and/or moment applied to a body (constant or a function of time).

    ``force`` acts at ``point`` (body axes, from the centre of mass); ``frame`` says
    whether the vectors are given in inertial (``"world"``) or body (``"body"``) axes.
    """

    body: int
    force: Callable | None
    torque: Callable | None
    point: np.ndarray
    frame: str
    name: str


class BaseMotion:
    """Prescribed motion of body 0: each entry a constant or a callable of time ``t``.

    ``position`` (3,), ``orientation`` (3, 3) base axes to inertial axes, ``velocity``,
    ``acceleration`` (3,) of the base origin and ``angular_velocity``,
    ``angular_acceleration`` (3,), all in inertial axes. Missing entries mean zero
    (identity for the orientation).
    """

    _SHAPES = {"position": (3,), "orientation": (3, 3), "velocity": (3,), "acceleration": (3,),
               "angular_velocity": (3,), "angular_acceleration": (3,)}

    def __init__(self, **entries):
        for key, value in entries.items():
            if key not in self._SHAPES:
                raise ModelError(
                    f"unknown base-motion entry {key!r}; valid entries: {sorted(self._SHAPES)}"
                )
            setattr(self, "_" + key, _time_function(value, f"base motion {key}", self._SHAPES[key]))
        for key in self._SHAPES:
            if not hasattr(self, "_" + key):
                setattr(self, "_" + key, None)
        if self._orientation is not None and not is_rotation(self._orientation(0.0), 1e-8):
            raise ModelError("base motion orientation must be a rotation matrix at t=0")
        self._check_derivatives()

    def _check_derivatives(self):
        """Refuse a position/velocity/acceleration triple that contradicts itself."""
        pairs = [("position", "velocity"), ("velocity", "acceleration"),
                 ("angular_velocity", "angular_acceleration")]
        h = 1e-5
        for f_name, d_name in pairs:
            f = getattr(self, "_" + f_name)
            d = getattr(self, "_" + d_name)
            if f is None and d is None:
                continue
            if f is None:  # missing means constant zero, so its derivative must vanish
                f = lambda t: np.zeros(3)  # noqa: E731
            for t in (0.0, 0.37):
                fd = (np.asarray(f(t + h)) - np.asarray(f(t - h))) / (2 * h)
                given = np.zeros(3) if d is None else np.asarray(d(t), dtype=float)
                if np.abs(fd - given).max() > 1e-4 * (1.0 + np.abs(fd).max()):
                    raise ModelError(
                        f"base motion: {d_name} at t={t} is {given.tolist()} but the derivative "
                        f"of {f_name} is {np.round(fd, 6).tolist()}; give consistent functions"
                    )
        if self._orientation is not None:  # dA/dt A^T = skew(angular velocity)
            for t in (0.0, 0.37):
                dA = (np.asarray(self._orientation(t + h)) - np.asarray(self._orientation(t - h)))
                fd = vee(dA / (2 * h) @ np.asarray(self._orientation(t)).T)
                given = (np.zeros(3) if self._angular_velocity is None
                         else np.asarray(self._angular_velocity(t), dtype=float))
                if np.abs(fd - given).max() > 1e-4 * (1.0 + np.abs(fd).max()):
                    raise ModelError(
                        f"base motion: angular_velocity at t={t} is {given.tolist()} but the "
                        f"orientation turns at {np.round(fd, 6).tolist()}; give consistent "
                        "functions"
                    )

    def state(self, t=0.0):
        """Dict with the six entries evaluated at time ``t``."""
        out = {}
        for key, shape in self._SHAPES.items():
            fn = getattr(self, "_" + key)
            default = _EYE if key == "orientation" else np.zeros(shape)
            out[key] = default if fn is None else np.asarray(fn(t), dtype=float)
        return out


# -------------------------------------------------------------------------- model
class Model:
    """A system of rigid bodies: the input of every formulation of the course.

    Parameters
    ----------
    gravity : array_like, shape (3,)
        Gravitational acceleration in inertial axes (default zero).
    base : str
        Name of body 0 (default ``"ground"``).

    Examples
    --------
    A double pendulum of two uniform rods:

    >>> import numpy as np
    >>> import mbcourse as mb
    >>> m = mb.Model(gravity=(0, -9.81, 0))
    >>> for name in ("upper", "lower"):
    ...     _ = m.add_body(name, mass=1.0, inertia=[1e-3, 1 / 12, 1 / 12])
    >>> _ = m.add_joint("shoulder", "revolute", "ground", "upper", child_point=(-0.5, 0, 0),
    ...                 axis=(0, 0, 1))
    >>> _ = m.add_joint("elbow", "revolute", "upper", "lower", parent_point=(0.5, 0, 0),
    ...                 child_point=(-0.5, 0, 0), axis=(0, 0, 1))
    >>> m.graph.S.tolist()
    [[1, 0], [-1, 1], [0, -1]]
    >>> # both rods turn about the shoulder: (1/12 + 0.5**2)/2 + (1/12 + 1.5**2)/2 = 4/3
    >>> round(float(m.kinetic_energy([0.0, 0.0], [1.0, 0.0])), 12)
    1.333333333333
    """

    def __init__(self, gravity=(0.0, 0.0, 0.0), base="ground"):
        if not isinstance(base, str) or not base:
            raise ModelError(f"base must be a non-empty name, got {base!r}")
        self.gravity = _vector(gravity, "gravity")
        self.bodies = [Body(base, 0, None, None)]
        self.joints = []
        self.loads = []
        self.base_motion = None
        self.parameters = {}  # free-form: the dimensions a model builder used
        self._body_index = {base: 0}
        self._joint_index = {}
        self._cache = {}

    # -------------------------------------------------------------- building
    def add_body(self, name, mass, inertia):
        """Add a rigid body; returns the :class:`Body`.

        Parameters
        ----------
        name : str
            Unique name.
        mass : float
            Positive mass.
        inertia : array_like, shape (3, 3) or (3,)
            Central inertia tensor in body axes (or its three principal moments): symmetric,
            positive definite, satisfying the triangle inequality.
        """
        if not isinstance(name, str) or not name:
            raise ModelError(f"a body needs a non-empty string name, got {name!r}")
        if name in self._body_index:
            raise ModelError(
                f"body {name!r} already exists (body names must be unique; "
                f"existing: {list(self._body_index)})"
            )
        body = Body(name, len(self.bodies), _positive(mass, f"body {name!r}: mass"),
                    _inertia(inertia, name))
        self.bodies.append(body)
        self._body_index[name] = body.index
        self._cache.clear()
        return body

    def _resolve_body(self, ref, role, joint):
        if isinstance(ref, Body):
            ref = ref.name
        if isinstance(ref, str) and ref in self._body_index:
            return self._body_index[ref]
        if isinstance(ref, (int, np.integer)) and not isinstance(ref, bool) \
                and 0 <= ref < len(self.bodies):
            return int(ref)
        raise ModelError(
            f"joint {joint!r}: unknown {role} {ref!r}; known bodies: {list(self._body_index)}"
        )

    def add_joint(self, name, kind, parent, child, parent_point=(0.0, 0.0, 0.0),
                  child_point=(0.0, 0.0, 0.0), axis=None, axes=None, orientation=None,
                  lead=None):
        """Add a joint from ``parent`` (i+) to ``child`` (i-); returns the :class:`Joint`.

        Parameters
        ----------
        name : str
            Unique joint name.
        kind : str
            One of ``revolute, prismatic, screw, cylindrical, universal, spherical, free,
            fixed``.
        parent, child : str or int
            Body names (or numbers); ``"ground"`` is body 0.
        parent_point : array_like, shape (3,)
            ``c_{i+(a) a}``: parent centre of mass to joint point, parent axes.
        child_point : array_like, shape (3,)
            ``c_{i-(a) a}``: child centre of mass to joint point, child axes.
        axis : array_like, shape (3,)
            Joint axis in parent axes (revolute, prismatic, screw, cylindrical);
            normalized here.
        axes : pair of array_like
            The two non-parallel axes of a universal joint (parent axes at ``q = 0``).
        orientation : array_like, shape (3, 3), optional
            Rotation of child axes relative to parent axes at ``q = 0`` (default identity).
        lead : float
            Screw joints: advance along the axis per full turn.

        A joint that closes a loop is allowed; tree formulations then refuse the model.
        """
        if not isinstance(name, str) or not name:
            raise ModelError(f"a joint needs a non-empty string name, got {name!r}")
        if name in self._joint_index:
            raise ModelError(f"joint {name!r} already exists (joint names must be unique)")
        if kind not in JOINT_KINDS:
            raise ModelError(
                f"joint {name!r}: unknown kind {kind!r}; valid kinds: {sorted(JOINT_KINDS)}"
            )
        ip = self._resolve_body(parent, "parent", name)
        im = self._resolve_body(child, "child", name)
        if ip == im:
            raise TopologyError(
                f"joint {name!r} connects body {self.bodies[ip].name!r} to itself; "
                "a joint joins two different bodies"
            )
        for other in self.joints:
            if {other.parent, other.child} == {ip, im}:
                raise TopologyError(
                    f"joint {name!r}: bodies {self.bodies[ip].name!r} and {self.bodies[im].name!r} "
                    f"are already joined by {other.name!r}; the book's rule is one joint per pair "
                    "of bodies (combine them into one joint of more degrees of freedom)"
                )
        pp = _vector(parent_point, f"joint {name!r}: parent_point")
        cp = _vector(child_point, f"joint {name!r}: child_point")
        if orientation is None:
            R0 = _EYE.copy()
        else:
            R0 = np.asarray(orientation, dtype=float)
            if R0.shape != (3, 3) or not is_rotation(R0, 1e-9):
                raise ModelError(
                    f"joint {name!r}: orientation must be a 3x3 rotation matrix "
                    "(orthonormal, determinant +1)"
                )
        extra = {}
        if kind in _NEEDS_AXIS:
            if axis is None:
                raise ModelError(f"joint {name!r} ({kind}) needs axis=(x, y, z)")
            extra["axis"] = _unit(axis, f"joint {name!r}: axis")
        elif axis is not None:
            raise ModelError(f"joint {name!r}: a {kind} joint takes no axis (got axis={axis!r})")
        if kind == "universal":
            if axes is None or len(axes) != 2:
                raise ModelError(f"joint {name!r} (universal) needs axes=(axis1, axis2)")
            a1 = _unit(axes[0], f"joint {name!r}: axes[0]")
            a2 = _unit(axes[1], f"joint {name!r}: axes[1]")
            if np.linalg.norm(np.cross(a1, a2)) < 1e-6:
                raise ModelError(f"joint {name!r}: the two universal-joint axes must not be parallel")
            extra["axes"] = (a1, a2)
        elif axes is not None:
            raise ModelError(f"joint {name!r}: only universal joints take axes=")
        if kind == "screw":
            if lead is None or isinstance(lead, bool) or not isinstance(lead, numbers.Real) \
                    or not np.isfinite(lead) or lead == 0:
                raise ModelError(
                    f"joint {name!r} (screw) needs a finite nonzero lead (advance per turn), "
                    f"got {lead!r}"
                )
            extra["lead"] = float(lead)
        elif lead is not None:
            raise ModelError(f"joint {name!r}: only screw joints take lead=")
        joint = JOINT_KINDS[kind](name, len(self.joints), ip, im, pp, cp, R0, **extra)
        joint._parent_name, joint._child_name = self.bodies[ip].name, self.bodies[im].name
        joint.q_slice = slice(self.nq, self.nq + joint.nq)
        joint.v_slice = slice(self.nv, self.nv + joint.nv)
        self.joints.append(joint)
        self._joint_index[name] = joint.index
        self._cache.clear()
        return joint

    def add_force(self, body, force=None, torque=None, point=(0.0, 0.0, 0.0), frame="world",
                  name=None):
        """Apply a force (at ``point``) and/or a moment to a body; returns the :class:`Load`.

        ``force`` and ``torque`` are arrays of shape (3,) or callables ``f(t)``; ``frame`` is
        ``"world"`` (inertial axes) or ``"body"`` (body axes, turning with the body).
        Gravity is added automatically from ``Model(gravity=...)``.
        """
        idx = self._resolve_body(body, "body", name or "force")
        if idx == 0:
            raise ModelError("a load on the base body has no effect; apply it to a moving body")
        if frame not in ("world", "body"):
            raise ModelError(f"load frame must be 'world' or 'body', got {frame!r}")
        if force is None and torque is None:
            raise ModelError("add_force needs force= and/or torque=")
        label = name or f"load{len(self.loads) + 1}"
        load = Load(idx, _time_function(force, f"load {label!r}: force", (3,)),
                    _time_function(torque, f"load {label!r}: torque", (3,)),
                    _vector(point, f"load {label!r}: point"), frame, label)
        self.loads.append(load)
        return load

    def set_base_motion(self, **entries):
        """Prescribe the motion of body 0, see :class:`BaseMotion` (``None`` entries: fixed)."""
        self.base_motion = BaseMotion(**entries)
        return self.base_motion

    # ------------------------------------------------------------ structure
    @property
    def n(self):
        """Number of bodies other than the base."""
        return len(self.bodies) - 1

    @property
    def m(self):
        """Number of joints."""
        return len(self.joints)

    @property
    def nq(self):
        """Length of the configuration vector ``q``."""
        return sum(j.nq for j in self.joints)

    @property
    def nv(self):
        """Length of the generalized-speed vector ``v`` (= degrees of freedom of a tree)."""
        return sum(j.nv for j in self.joints)

    def body(self, name):
        """The :class:`Body` with this name (or number)."""
        return self.bodies[self._resolve_body(name, "body", "lookup")]

    def joint(self, name):
        """The :class:`Joint` with this name."""
        if name not in self._joint_index:
            raise ModelError(f"unknown joint {name!r}; known joints: {list(self._joint_index)}")
        return self.joints[self._joint_index[name]]

    @property
    def q_names(self):
        """Names of the configuration coordinates, e.g. ``'shoulder.angle'``."""
        return [f"{j.name}.{c}" for j in self.joints for c in j.coordinate_names]

    @property
    def v_names(self):
        """Names of the generalized speeds."""
        names = []
        for j in self.joints:
            if j.kind == "spherical":
                names += [f"{j.name}.wx", f"{j.name}.wy", f"{j.name}.wz"]
            elif j.kind == "free":
                names += [f"{j.name}.{c}" for c in ("vx", "vy", "vz", "wx", "wy", "wz")]
            else:
                names += [f"{j.name}.{c}" for c in j.coordinate_names]
        return names

    def validate(self):
        """Check the model is complete: at least one joint, every body connected to the base.

        Raises
        ------
        TopologyError
            Naming the bodies that hang in the air.
        """
        if not self.joints:
            raise TopologyError("the model has no joints: connect every body to the base")
        ip = np.array([j.parent for j in self.joints])
        im = np.array([j.child for j in self.joints])
        _, _, _, _, seen = _graph._bfs_tree(ip, im, self.n)
        if not seen.all():
            names = [self.bodies[i].name for i in np.flatnonzero(~seen)]
            raise TopologyError(
                f"bodies {names} are not connected to {self.bodies[0].name!r} by any chain of "
                "joints; add a joint (a 'free' joint for a floating body)"
            )

    @property
    def graph(self):
        """The :class:`mbcourse.graph.Graph` of the model (i+ = parent, i- = child)."""
        if "graph" not in self._cache:
            self.validate()
            self._cache["graph"] = _graph.Graph(
                np.array([j.parent for j in self.joints]),
                np.array([j.child for j in self.joints]),
                tuple(b.name for b in self.bodies),
                tuple(j.name for j in self.joints),
            )
        return self._cache["graph"]

    def _tree(self):
        """Traversal of the spanning tree from the base (cached).

        Returns a list of ``(joint, forward)`` in parent-before-child order, where
        ``forward`` tells whether the joint's parent is the body nearer the base.
        """
        if "tree" not in self._cache:
            g = self.graph
            tree, _ = g.spanning_tree()
            pred_v, pred_a, order = _graph.predecessors(g.i_plus[tree], g.i_minus[tree], g.n)
            steps = []
            for body in order[1:]:
                joint = self.joints[tree[pred_a[body]]]
                steps.append((joint, joint.child == body))
            self._cache["tree"] = steps
        return self._cache["tree"]

    def require_tree(self, method):
        """Return the graph, or raise ``TopologyError`` naming the joints that close loops.

        Parameters
        ----------
        method : str
            Name of the method that needs a tree, for the message.
        """
        g = self.graph
        if not g.is_tree:
            _, cut = g.spanning_tree()
            raise TopologyError(
                f"{method} needs a tree, but joints {[self.joints[a].name for a in cut]} close "
                "loops; use mb.cartesian.forward_dynamics (constraint rows handle loops) or cut "
                "those joints (the cut-joint method of section 3.6)"
            )
        return g

    def outward_joints(self, method):
        """Joints in base-to-leaves order for a recursion that walks outward from the base.

        Parameters
        ----------
        method : str
            Name of the recursion, for the error messages.

        Raises
        ------
        TopologyError
            For closed loops (naming the joints that close them) and for joints whose child
            is nearer the base (a recursion needs each body after its parent).
        """
        key = ("outward_joints",)
        if key not in self._cache:
            self.require_tree(method)
            steps = self._tree()
            backward = [j.name for j, forward in steps if not forward]
            if backward:
                raise TopologyError(
                    f"joints {backward} point toward the base (their child is nearer body 0); "
                    f"{method} walks outward from the base: add those joints with parent and "
                    "child swapped"
                )
            self._cache[key] = [j for j, _ in steps]
        return self._cache[key]

    # ---------------------------------------------------------- state checks
    def _check_array(self, name, value, size, labels):
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise ShapeError(f"{name} must be an array of {size} numbers, got {value!r}") from None
        if arr.ndim == 0 or arr.shape[-1] != size:
            raise ShapeError(
                f"{name} must have shape ({size},) or (batch, {size}) for this model "
                f"({', '.join(labels) or 'no coordinates'}), got shape {arr.shape}"
            )
        bad = ~np.isfinite(arr)
        if bad.any():
            where = np.argwhere(bad)[0]
            idx = int(where[-1])
            raise ShapeError(
                f"{name}[{', '.join(map(str, where))}] ({labels[idx]}) is {arr[tuple(where)]}: "
                "every entry must be finite"
            )
        return arr

    def check_q(self, q):
        """Validate a configuration of shape (nq,) or (B, nq); returns it as floats."""
        return self._check_array("q", q, self.nq, self.q_names)

    def check_v(self, v, name="qd"):
        """Validate generalized speeds (or accelerations) of shape (nv,) or (B, nv)."""
        return self._check_array(name, v, self.nv, self.v_names)

    def check_tau(self, tau):
        """Validate generalized forces (``None`` means zero)."""
        if tau is None:
            return np.zeros(self.nv)
        return self._check_array("tau", tau, self.nv, self.v_names)

    def neutral_q(self):
        """The configuration with every joint at ``q = 0`` (identity quaternions)."""
        return np.concatenate([j.neutral() for j in self.joints]) if self.joints else np.zeros(0)

    def qdot(self, q, v):
        """Derivative of the configuration, ``dq/dt`` (differs from ``v`` for quaternions)."""
        q = self.check_q(q)
        v = self.check_v(v)
        out = np.empty(np.broadcast_shapes(q.shape[:-1], v.shape[:-1]) + (self.nq,))
        for j in self.joints:
            out[..., j.q_slice] = j.qdot(q[..., j.q_slice], v[..., j.v_slice])
        return out

    def normalize_q(self, q):
        """Renormalize the quaternions of spherical and free joints."""
        q = np.array(self.check_q(q), dtype=float)
        for j in self.joints:
            if j.kind in ("spherical", "free"):
                s = slice(j.q_slice.stop - 4, j.q_slice.stop)
                q[..., s] /= np.linalg.norm(q[..., s], axis=-1, keepdims=True)
        return q

    # ------------------------------------------------------------ kinematics
    def body_poses(self, q, t=0.0):
        """Centre-of-mass positions and orientations of all bodies (base included).

        Parameters
        ----------
        q : array_like, shape (nq,) or (B, nq)
        t : float
            Time (only matters with a prescribed base motion).

        Returns
        -------
        r : ndarray, shape (..., n + 1, 3)
            Centres of mass in inertial axes (``r[..., 0]`` is the base origin).
        A : ndarray, shape (..., n + 1, 3, 3)
            Body axes to inertial axes.
        """
        q = self.check_q(q)
        batch = q.shape[:-1]
        r = np.zeros(batch + (self.n + 1, 3))
        A = np.zeros(batch + (self.n + 1, 3, 3))
        base = self.base_motion.state(t) if self.base_motion else None
        r[..., 0, :] = 0.0 if base is None else base["position"]
        A[..., 0, :, :] = _EYE if base is None else base["orientation"]
        for joint, forward in self._tree():
            qa = q[..., joint.q_slice]
            R = joint.rotation(qa)
            lever = joint.parent_point + joint.z(qa)
            i, c = joint.parent, joint.child
            if forward:  # parent known
                A[..., c, :, :] = A[..., i, :, :] @ R
                r[..., c, :] = (r[..., i, :] + (A[..., i, :, :] @ lever[..., None])[..., 0]
                                - (A[..., c, :, :] @ joint.child_point[..., None])[..., 0])
            else:  # child known: walk the joint backwards
                A[..., i, :, :] = A[..., c, :, :] @ np.swapaxes(R, -1, -2)
                r[..., i, :] = (r[..., c, :] + (A[..., c, :, :] @ joint.child_point[..., None])[..., 0]
                                - (A[..., i, :, :] @ lever[..., None])[..., 0])
        return r, A

    def body_velocities(self, q, v, t=0.0):
        """Centre-of-mass velocities and angular velocities, inertial axes.

        Returns
        -------
        vel : ndarray, shape (..., n + 1, 3)
        omega : ndarray, shape (..., n + 1, 3)
        """
        q = self.check_q(q)
        v = self.check_v(v)
        r, A = self.body_poses(q, t)
        batch = np.broadcast_shapes(q.shape[:-1], v.shape[:-1])
        vel = np.zeros(batch + (self.n + 1, 3))
        omega = np.zeros(batch + (self.n + 1, 3))
        if self.base_motion:
            base = self.base_motion.state(t)
            vel[..., 0, :] = base["velocity"]
            omega[..., 0, :] = base["angular_velocity"]
        for joint, forward in self._tree():
            qa, va = q[..., joint.q_slice], v[..., joint.v_slice]
            i, c = joint.parent, joint.child
            Ai = A[..., i, :, :]
            rel_omega = (Ai @ (joint.p(qa) @ va[..., None]))[..., 0]
            rel_vel = (Ai @ (joint.k(qa) @ va[..., None]))[..., 0]
            lever_i = (Ai @ (joint.parent_point + joint.z(qa))[..., None])[..., 0]
            lever_c = (A[..., c, :, :] @ joint.child_point[..., None])[..., 0]
            if forward:
                omega[..., c, :] = omega[..., i, :] + rel_omega
                vel[..., c, :] = (vel[..., i, :] + np.cross(omega[..., i, :], lever_i) + rel_vel
                                  - np.cross(omega[..., c, :], lever_c))
            else:
                omega[..., i, :] = omega[..., c, :] - rel_omega
                vel[..., i, :] = (vel[..., c, :] + np.cross(omega[..., c, :], lever_c) - rel_vel
                                  - np.cross(omega[..., i, :], lever_i))
        return vel, omega

    def masses(self):
        """Masses of bodies 1..n, shape (n,)."""
        return np.array([b.mass for b in self.bodies[1:]])

    def inertias(self):
        """Central inertia tensors of bodies 1..n in body axes, shape (n, 3, 3)."""
        return np.array([b.inertia for b in self.bodies[1:]])

    def kinetic_energy(self, q, v, t=0.0):
        """Kinetic energy ``sum(m v^2 / 2 + omega^T J omega / 2)``, shape (...,)."""
        _, A = self.body_poses(q, t)
        vel, omega = self.body_velocities(q, v, t)
        omega_body = (np.swapaxes(A[..., 1:, :, :], -1, -2) @ omega[..., 1:, :, None])[..., 0]
        J_omega = (self.inertias() @ omega_body[..., None])[..., 0]
        return 0.5 * (np.sum(self.masses() * np.sum(vel[..., 1:, :] ** 2, axis=-1), axis=-1)
                      + np.sum(omega_body * J_omega, axis=(-1, -2)))

    def potential_energy(self, q, t=0.0):
        """Potential energy of gravity, ``-sum(m g . r)``, shape (...,)."""
        r, _ = self.body_poses(q, t)
        return -np.sum(self.masses() * (r[..., 1:, :] @ self.gravity), axis=-1)

    def applied_wrenches(self, q=None, t=0.0, orientations=None):
        """Resultant applied force and moment about each centre of mass, inertial axes.

        Includes gravity and every :meth:`add_force` load.

        Parameters
        ----------
        q : array_like, shape (nq,) or (B, nq)
        t : float
        orientations : ndarray, shape (..., n + 1, 3, 3), optional
            Body orientations to use instead of ``q`` (absolute-coordinate formulations).

        Returns
        -------
        F, M : ndarray, shape (..., n + 1, 3)
            Row 0 (the base) is zero.
        """
        if orientations is None:
            _, A = self.body_poses(self.check_q(q), t)
        else:
            A = np.asarray(orientations, dtype=float)
        F = np.zeros(A.shape[:-2] + (3,))
        M = np.zeros_like(F)
        F[..., 1:, :] = self.masses()[:, None] * self.gravity
        for load in self.loads:
            Ab = A[..., load.body, :, :]
            rot = (lambda x: (Ab @ x[..., None])[..., 0]) if load.frame == "body" else (lambda x: x)
            if load.force is not None:
                f = np.broadcast_to(rot(np.asarray(load.force(t), dtype=float)), F[..., 0, :].shape)
                F[..., load.body, :] += f
                M[..., load.body, :] += np.cross((Ab @ load.point[..., None])[..., 0], f)
            if load.torque is not None:
                M[..., load.body, :] += rot(np.asarray(load.torque(t), dtype=float))
        return F, M

    def __repr__(self):
        return (f"Model({self.n} bodies, {self.m} joints, nq={self.nq}, nv={self.nv}, "
                f"gravity={self.gravity.tolist()})")
