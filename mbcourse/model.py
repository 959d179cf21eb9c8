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

Changing a model
----------------
A model is a description; every formulation derives its constants from it once, in a
*prepared-data* step (:meth:`Model.prepared`), and keeps them until the model changes.
Every change goes through a validated assignment that bumps :attr:`Model.version` and
drops the prepared data, so a changed model never gives an old answer::

    model.body("upper").mass = 5.0          # validated like add_body, then every
    model.joint("elbow").parent_point = ... # formulation rebuilds its constants
    model.gravity = (0, 0, -9.81)

The stored arrays are read-only (``model.body("upper").inertia[0, 0] = 1`` is refused:
assign a whole new tensor); names, indices, kinds and the graph are fixed once added
(:meth:`Model.copy` gives an independent model to build differently).

Force elements
--------------
Besides gravity, a model carries loads (:meth:`Model.add_force`), linear spring-dampers
between two body points (:meth:`Model.add_spring`), spring-dampers along joint coordinates
(:meth:`Model.add_joint_spring`) and generalized forces (:meth:`Model.add_generalized_force`).
Every callable has the one signature ``f(t, q, qd)``. :meth:`Model.applied_wrenches` and
:meth:`Model.generalized_forces` evaluate them at a state for every formulation; the springs'
energy is part of :meth:`Model.potential_energy`.

States
------
:meth:`Model.check_state` is the one input check of every public function: shapes with any
number of leading batch dimensions, real finite numbers, unit quaternions (renormalized
within ``mbcourse.joints.QUATERNION_TOL``, refused beyond), and a result that is not finite
is refused with :class:`~mbcourse.errors.SingularSystemError`.

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

import copy as _copy
import inspect
import numbers
from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import graph as _graph
from .errors import ModelError, ShapeError, SingularSystemError, TopologyError
from .joints import (JOINT_KINDS, QUATERNION_TOL, Joint, Part, frozen, normalize_quaternions,
                     rotation_matrix, unit, vector)
from .spatial import cross, is_rotation, vee

__all__ = ["Model", "Body", "Joint", "Load", "Spring", "JointSpring", "GeneralizedForce",
           "BaseMotion", "State", "JOINT_KINDS", "QUATERNION_TOL"]

_EYE = np.eye(3)


# ------------------------------------------------------------------------ helpers
def _positive(value, what, allow_zero=False):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ModelError(f"{what} must be a {'non-negative' if allow_zero else 'positive'} "
                         f"finite number, got {value!r}")
    value = float(value)
    if not (np.isfinite(value) and (value >= 0.0 if allow_zero else value > 0.0)):
        raise ModelError(f"{what} must be a {'non-negative' if allow_zero else 'positive'} "
                         f"finite number, got {value}")
    return value


def _inertia(value, body):
    what = f"body {body!r}: inertia"
    if np.iscomplexobj(value):
        raise ShapeError(f"{what} must be real, got complex {value!r}")
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
    return frozen(J)


def _time_function(value, what, shape):
    """Constant array or callable of t -> array (base motion); checked at t=0."""
    if value is None:
        return None
    if callable(value):
        fn = value
    else:
        const = frozen(value)
        fn = lambda t, _c=const: _c  # noqa: E731
    try:
        sample = np.asarray(fn(0.0), dtype=float)
    except Exception as exc:  # the user's function failed: say which one
        raise ModelError(f"{what}: calling it at t=0 failed: {exc}") from exc
    if sample.shape != shape or not np.all(np.isfinite(sample)):
        raise ShapeError(f"{what} must give a finite array of shape {shape}, got {sample!r}")
    return fn


def _state_function(value, what, shape):
    """Constant array or callable ``f(t, q, qd)``: returns ``(callable or None, const)``."""
    if value is None:
        return None
    if callable(value):
        try:
            params = inspect.signature(value).parameters.values()
            positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                          p.POSITIONAL_OR_KEYWORD)]
            takes_var = any(p.kind == p.VAR_POSITIONAL for p in params)
        except (TypeError, ValueError):  # builtins without a signature: trust them
            positional, takes_var = [None] * 3, False
        if len(positional) < 3 and not takes_var:
            raise ModelError(
                f"{what}: a force callable takes (t, q, qd) and returns an array of shape "
                f"{shape}; got a function of {len(positional)} argument(s) "
                "(write lambda t, q, qd: ... even if it uses only t)"
            )
        return value
    arr = np.asarray(value, dtype=float) if not np.iscomplexobj(value) else None
    if arr is None or arr.shape != shape or not np.all(np.isfinite(arr)):
        raise ShapeError(f"{what} must be a finite array of shape {shape} or a callable "
                         f"f(t, q, qd), got {value!r}")
    return frozen(arr)


def _evaluate(fn, t, q, qd, shape, what):
    """Evaluate a constant or ``f(t, q, qd)`` at a state; batched states call ``f`` once per
    item with single ``q`` (nq,) and ``qd`` (nv,). Returns (..., *shape)."""
    batch = q.shape[:-1]
    if not callable(fn):
        return np.broadcast_to(fn, batch + shape)
    B = int(np.prod(batch, dtype=int))
    qf = q.reshape(B, q.shape[-1])
    qdf = qd.reshape(B, qd.shape[-1])
    out = np.empty((qf.shape[0],) + shape)
    for b in range(qf.shape[0]):
        try:
            val = np.asarray(fn(t, qf[b], qdf[b]), dtype=float)
        except Exception as exc:
            raise ModelError(f"{what}: calling it at t={t} failed: {exc!r}") from exc
        if val.shape != shape or not np.all(np.isfinite(val)):
            raise ShapeError(f"{what} must return a finite array of shape {shape}, got "
                             f"{np.array2string(val, precision=4)} at t={t}")
        out[b] = val
    return out.reshape(batch + shape)


class _Element(Part):
    """A part of the model whose parameters are set once, at creation (see
    :class:`mbcourse.joints.Part`)."""

    def _init(self, model, **values):
        object.__setattr__(self, "_model", model)
        for key, val in values.items():
            object.__setattr__(self, key, val)


# ------------------------------------------------------------------------- bodies
class Body(_Element):
    """A rigid body: name, index (1..n), mass and central inertia in body axes.

    ``mass`` and ``inertia`` may be reassigned (validated as in :meth:`Model.add_body`).
    """

    _PARAMETERS = ("mass", "inertia")
    _label = "body"

    def __init__(self, name, index, mass, inertia, model=None):
        self._init(model, name=name, index=index, mass=mass, inertia=inertia)

    def _validate(self, attr, value):
        if self.index == 0:
            raise ModelError(f"body {self.name!r} is the base: it has no {attr}")
        if attr == "mass":
            return _positive(value, f"body {self.name!r}: mass")
        return _inertia(value, self.name)

    def __repr__(self):
        if self.index == 0:
            return f"Body({self.name!r}, index=0, base)"
        return f"Body({self.name!r}, index={self.index}, mass={self.mass})"


# ------------------------------------------------------------------ force elements
class Load(_Element):
    """A force and/or moment applied to a body: constants or callables ``f(t, q, qd)``.

    ``force`` acts at ``point`` (body axes, from the centre of mass); ``frame`` says
    whether the vectors are given in inertial (``"world"``) or body (``"body"``) axes.
    """

    _label = "load"

    def __init__(self, body, force, torque, point, frame, name, model=None):
        self._init(model, body=body, force=force, torque=torque, point=point, frame=frame,
                   name=name)


class Spring(_Element):
    """A linear spring-damper between a point of ``body_a`` and a point of ``body_b``.

    Tension ``T = stiffness (L - rest_length) + damping dL/dt`` (positive pulls the points
    together), ``L`` the distance between the points. ``stiffness``, ``rest_length``,
    ``damping``, ``point_a`` and ``point_b`` may be reassigned.
    """

    _PARAMETERS = ("stiffness", "rest_length", "damping", "point_a", "point_b")
    _label = "spring"

    def __init__(self, name, body_a, body_b, model=None, **params):
        self._init(model, name=name, body_a=body_a, body_b=body_b)
        for key in self._PARAMETERS:
            object.__setattr__(self, key, self._validate(key, params[key]))

    def _validate(self, attr, value):
        what = f"spring {self.name!r}: {attr}"
        if attr.startswith("point"):
            return vector(value, what)
        return _positive(value, what, allow_zero=True)

    def energy(self, length):
        """Elastic energy ``stiffness (L - rest_length)^2 / 2``."""
        return 0.5 * self.stiffness * (length - self.rest_length) ** 2

    def __repr__(self):
        return (f"Spring({self.name!r}, stiffness={self.stiffness}, "
                f"rest_length={self.rest_length}, damping={self.damping})")


class JointSpring(_Element):
    """Spring-dampers along the coordinates of one joint: generalized forces
    ``-stiffness (q - rest) - damping qd`` (one value per coordinate)."""

    _PARAMETERS = ("stiffness", "rest", "damping")
    _label = "joint spring"

    def __init__(self, joint, model=None, **params):
        self._init(model, joint=joint, name=joint.name)
        for key in self._PARAMETERS:
            object.__setattr__(self, key, self._validate(key, params[key]))

    def _validate(self, attr, value):
        what = f"joint spring on {self.joint.name!r}: {attr}"
        n = self.joint.nv
        if np.iscomplexobj(value):
            raise ShapeError(f"{what} must be real")
        try:
            arr = np.broadcast_to(np.asarray(value, dtype=float), (n,))
        except (TypeError, ValueError):
            raise ShapeError(f"{what} must be a number or {n} numbers (one per coordinate "
                             f"{list(self.joint.coordinate_names)}), got {value!r}") from None
        if not np.all(np.isfinite(arr)):
            raise ModelError(f"{what} must be finite, got {arr.tolist()}")
        if attr != "rest" and np.any(arr < 0):
            raise ModelError(f"{what} must be non-negative, got {arr.tolist()}")
        return frozen(arr)


class GeneralizedForce(_Element):
    """Generalized forces ``fn(t, q, qd)`` of shape (nv,) (e.g. a control law)."""

    _label = "generalized force"

    def __init__(self, name, fn, model=None):
        self._init(model, name=name, fn=fn)


# -------------------------------------------------------------------- base motion
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


# -------------------------------------------------------------------------- state
@dataclass
class State:
    """A checked state (see :meth:`Model.check_state`): arrays flattened to one batch axis.

    Attributes
    ----------
    q : (B, nq) with unit quaternions; qd, tau, qdd : (B, nv) or None
    batch : tuple
        The broadcast leading shape of the inputs (``()`` for single states).
    t : float
    """

    q: np.ndarray
    qd: np.ndarray | None
    tau: np.ndarray | None
    qdd: np.ndarray | None
    batch: tuple
    t: float
    model: object = None

    def result(self, out, what="the result"):
        """Reshape a (B, ...) result to ``batch + (...)``; refuse non-finite values with
        :class:`~mbcourse.errors.SingularSystemError` naming the likely cause."""
        out = np.asarray(out)
        if not np.all(np.isfinite(out)):
            item = int(np.argwhere(~np.isfinite(out.reshape(out.shape[0], -1)))[0, 0])
            speeds = 0.0 if self.qd is None else float(np.abs(self.qd[item]).max(initial=0.0))
            cause = (f"the speeds are too large to square (max |qd| = {speeds:.3g})"
                     if speeds > 1e100 else
                     "the mass matrix is singular at this configuration or the forces overflow")
            where = f" (batch item {np.unravel_index(item, self.batch)})" if self.batch else ""
            raise SingularSystemError(f"{what} is not finite{where}: {cause}")
        return out.reshape(self.batch + out.shape[1:])


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
    >>> m.body("lower").mass = 2.0     # a change: every formulation sees it on its next call
    >>> round(float(m.kinetic_energy([0.0, 0.0], [1.0, 0.0])), 12)
    2.458333333333
    """

    _SETTABLE = ("gravity", "base_motion")

    def __init__(self, gravity=(0.0, 0.0, 0.0), base="ground"):
        if not isinstance(base, str) or not base:
            raise ModelError(f"base must be a non-empty name, got {base!r}")
        d = self.__dict__
        d["_version"] = 0
        d["_prepared"] = {}
        d["gravity"] = vector(gravity, "gravity")
        d["base_motion"] = None
        d["_bodies"] = [Body(base, 0, None, None, self)]
        d["_joints"] = []
        d["_loads"] = []
        d["_springs"] = []
        d["_joint_springs"] = []
        d["_generalized_forces"] = []
        d["parameters"] = {}  # free-form: the dimensions a model builder used
        d["_body_index"] = {base: 0}
        d["_joint_index"] = {}

    def __setattr__(self, attr, value):
        if attr == "gravity":
            value = vector(value, "gravity")
        elif attr == "base_motion":
            if value is not None and not isinstance(value, BaseMotion):
                raise ModelError("base_motion must be None (a fixed base) or set with "
                                 "model.set_base_motion(...)")
        elif attr == "parameters":
            if not isinstance(value, dict):
                raise ModelError(f"Model.parameters must be a dict, got {type(value).__name__}")
        elif not attr.startswith("_"):
            raise ModelError(
                f"Model.{attr} cannot be assigned; change a model through add_body, add_joint, "
                "add_force, add_spring, add_joint_spring, set_base_motion, by assigning a "
                "body's or joint's parameters, or the gravity"
            )
        self.__dict__[attr] = value
        self._touch()

    # ----------------------------------------------------- version, prepared data
    @property
    def version(self):
        """A counter bumped by every change of the model (prepared data is keyed on it)."""
        return self._version

    def _touch(self):
        self.__dict__["_version"] += 1
        self._prepared.clear()

    def prepared(self, key, build):
        """Prepared data of a formulation: ``build()`` once per model version.

        Formulations derive their constant arrays (graph matrices, joint order, hinge and
        barycentric vectors, row patterns) in a function ``prepare(model)`` that calls this;
        any change of the model drops every prepared item, so no answer is ever stale.

        Examples
        --------
        >>> import mbcourse as mb
        >>> m = mb.models.double_pendulum()
        >>> masses = m.prepared("masses", m.masses)
        >>> m.prepared("masses", lambda: None) is masses   # built once per version
        True
        >>> m.body(1).mass = 3.0
        >>> m.prepared("masses", m.masses).tolist()
        [3.0, 1.0]
        """
        try:
            return self._prepared[key]
        except KeyError:
            value = self._prepared[key] = build()
            return value

    def copy(self):
        """An independent deep copy (same names and parameters, fresh prepared data).

        Examples
        --------
        >>> import mbcourse as mb
        >>> a = mb.models.double_pendulum()
        >>> b = a.copy()
        >>> b.body(2).mass = 5.0
        >>> a.body(2).mass, b.body(2).mass
        (1.0, 5.0)
        """
        new = _copy.deepcopy(self)
        new._prepared.clear()
        for part in new._bodies + new._joints + new._springs + new._joint_springs + new._loads:
            for key, value in vars(part).items():
                for arr in (value if isinstance(value, tuple) else (value,)):
                    if isinstance(arr, np.ndarray):
                        arr.flags.writeable = False
        return new

    def reduced_system(self, cut):
        """The tree left when the joints ``cut`` are removed: the reduced system of a closed
        loop (Yudintsev 3.6, (3.180)–(3.185)).

        The copy keeps the bodies, the other joints (in their order, so the coordinates of
        the reduced system are the Model's coordinates without those of the cut joints),
        gravity and the base motion, but **no force elements**: a formulation that works on
        the reduced system evaluates forces on the full model (whose loads and control laws
        are functions of the full ``q``).

        Parameters
        ----------
        cut : sequence of str or int
            Names or indices of the joints to remove.

        Returns
        -------
        Model

        Examples
        --------
        >>> import mbcourse as mb
        >>> m = mb.models.crank_slider()
        >>> red = m.reduced_system(["B"])
        >>> [j.name for j in red.joints], red.graph.is_tree
        (['O', 'A', 'guide'], True)
        """
        drop = {self._joints[self._joint_number(c, "cut")].index for c in cut}
        new = Model(gravity=self.gravity, base=self._bodies[0].name)
        for b in self._bodies[1:]:
            new.add_body(b.name, b.mass, b.inertia)
        for j in self._joints:
            if j.index in drop:
                continue
            extra = {key: getattr(j, key) for key in type(j)._PARAMETERS
                     if key in ("axis", "axes", "lead")}
            new.add_joint(j.name, j.kind, j.parent, j.child, parent_point=j.parent_point,
                          child_point=j.child_point, orientation=j.orientation, **extra)
        new.base_motion = self.base_motion
        return new

    def _joint_number(self, ref, role):
        """Index of a joint given by name or number (``role`` names the argument)."""
        if isinstance(ref, str) and ref in self._joint_index:
            return self._joint_index[ref]
        if isinstance(ref, (int, np.integer)) and not isinstance(ref, bool) \
                and 0 <= ref < len(self._joints):
            return int(ref)
        raise ModelError(f"{role}: unknown joint {ref!r}; joints: "
                         f"{[j.name for j in self._joints]} (or their indices 0..{len(self._joints) - 1})")

    # ------------------------------------------------------------- the parts
    @property
    def bodies(self):
        """The bodies, base first (a tuple: add bodies with :meth:`add_body`)."""
        return tuple(self._bodies)

    @property
    def joints(self):
        """The joints in the order they were added (a tuple)."""
        return tuple(self._joints)

    @property
    def loads(self):
        """The loads of :meth:`add_force` (a tuple)."""
        return tuple(self._loads)

    @property
    def springs(self):
        """The spring-dampers of :meth:`add_spring` (a tuple)."""
        return tuple(self._springs)

    @property
    def joint_springs(self):
        """The joint spring-dampers of :meth:`add_joint_spring` (a tuple)."""
        return tuple(self._joint_springs)

    @property
    def generalized_force_elements(self):
        """The callables of :meth:`add_generalized_force` (a tuple)."""
        return tuple(self._generalized_forces)

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
        body = Body(name, len(self._bodies), _positive(mass, f"body {name!r}: mass"),
                    _inertia(inertia, name), self)
        self._bodies.append(body)
        self._body_index[name] = body.index
        self._touch()
        return body

    def _resolve_body(self, ref, role, owner):
        if isinstance(ref, Body):
            ref = ref.name
        if isinstance(ref, str) and ref in self._body_index:
            return self._body_index[ref]
        if isinstance(ref, (int, np.integer)) and not isinstance(ref, bool) \
                and 0 <= ref < len(self._bodies):
            return int(ref)
        raise ModelError(
            f"{owner}: unknown {role} {ref!r}; known bodies: {list(self._body_index)}"
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
        ip = self._resolve_body(parent, "parent", f"joint {name!r}")
        im = self._resolve_body(child, "child", f"joint {name!r}")
        if ip == im:
            raise TopologyError(
                f"joint {name!r} connects body {self._bodies[ip].name!r} to itself; "
                "a joint joins two different bodies"
            )
        for other in self._joints:
            if {other.parent, other.child} == {ip, im}:
                raise TopologyError(
                    f"joint {name!r}: bodies {self._bodies[ip].name!r} and "
                    f"{self._bodies[im].name!r} are already joined by {other.name!r}; the "
                    "book's rule is one joint per pair of bodies (combine them into one joint "
                    "of more degrees of freedom)"
                )
        pp = vector(parent_point, f"joint {name!r}: parent_point")
        cp = vector(child_point, f"joint {name!r}: child_point")
        R0 = frozen(_EYE) if orientation is None else \
            rotation_matrix(orientation, f"joint {name!r}: orientation")
        cls = JOINT_KINDS[kind]
        extra = {}
        for key, value in (("axis", axis), ("axes", axes), ("lead", lead)):
            if key in cls._PARAMETERS:
                if value is None:
                    example = {"axis": "axis=(x, y, z)", "axes": "axes=(axis1, axis2)",
                               "lead": "a finite nonzero lead= (advance per turn)"}[key]
                    raise ModelError(f"joint {name!r} ({kind}) needs {example}")
                extra[key] = value
            elif value is not None:
                owners = {"axis": "revolute, prismatic, screw and cylindrical", "axes": "universal",
                          "lead": "screw"}[key]
                raise ModelError(f"joint {name!r}: only {owners} joints take {key}= "
                                 f"(a {kind} joint got {key}={value!r})")
        joint = cls(name, len(self._joints), ip, im, pp, cp, R0, model=self, **extra)
        for key in extra:  # validated like a later assignment
            object.__setattr__(joint, key, joint._validate(key, extra[key]))
        joint._parent_name, joint._child_name = self._bodies[ip].name, self._bodies[im].name
        joint.q_slice = slice(self.nq, self.nq + joint.nq)
        joint.v_slice = slice(self.nv, self.nv + joint.nv)
        joint._freeze()
        self._joints.append(joint)
        self._joint_index[name] = joint.index
        self._touch()
        return joint

    def _new_name(self, name, prefix, existing):
        label = name or f"{prefix}{len(existing) + 1}"
        if not isinstance(label, str):
            raise ModelError(f"a {prefix} name must be a string, got {label!r}")
        if any(e.name == label for e in existing):
            raise ModelError(f"{prefix} {label!r} already exists (names must be unique)")
        return label

    def add_force(self, body, force=None, torque=None, point=(0.0, 0.0, 0.0), frame="world",
                  name=None):
        """Apply a force (at ``point``) and/or a moment to a body; returns the :class:`Load`.

        ``force`` and ``torque`` are arrays of shape (3,) or callables ``f(t, q, qd)``
        returning (3,) (called once per state, with ``q`` (nq,) and ``qd`` (nv,));
        ``frame`` is ``"world"`` (inertial axes) or ``"body"`` (body axes, turning with the
        body). Gravity is added automatically from ``Model(gravity=...)``.
        """
        label = self._new_name(name, "load", self._loads)
        idx = self._resolve_body(body, "body", f"load {label!r}")
        if idx == 0:
            raise ModelError(f"load {label!r}: a load on the base body has no effect; apply "
                             "it to a moving body")
        if frame not in ("world", "body"):
            raise ModelError(f"load {label!r}: frame must be 'world' or 'body', got {frame!r}")
        if force is None and torque is None:
            raise ModelError(f"load {label!r}: add_force needs force= and/or torque=")
        load = Load(idx, _state_function(force, f"load {label!r}: force", (3,)),
                    _state_function(torque, f"load {label!r}: torque", (3,)),
                    vector(point, f"load {label!r}: point"), frame, label, self)
        self._loads.append(load)
        self._touch()
        return load

    def add_spring(self, name, body_a, body_b, point_a=(0.0, 0.0, 0.0), point_b=(0.0, 0.0, 0.0),
                   stiffness=0.0, rest_length=0.0, damping=0.0):
        """A linear spring-damper along the line between a point of each body.

        Parameters
        ----------
        name : str
        body_a, body_b : str or int
            Two different bodies (``"ground"`` allowed).
        point_a, point_b : array_like, shape (3,)
            Attachment points in body axes from the centre of mass (inertial axes for the
            base).
        stiffness, rest_length, damping : float
            Non-negative. Tension ``T = stiffness (L - rest_length) + damping dL/dt``.

        Returns
        -------
        Spring

        Examples
        --------
        A mass on a vertical spring hangs still where ``k (L - L0) = m g``:

        >>> import numpy as np, mbcourse as mb
        >>> m = mb.Model(gravity=(0, -9.81, 0))
        >>> _ = m.add_body("mass", 1.0, [0.1, 0.1, 0.1])
        >>> _ = m.add_joint("slide", "prismatic", "ground", "mass", axis=(0, 1, 0))
        >>> _ = m.add_spring("k", "ground", "mass", point_a=(0, 1, 0), stiffness=100.0,
        ...                  rest_length=0.5)
        >>> y = 1.0 - 0.5 - 9.81 / 100.0
        >>> float(mb.tree.forward_dynamics(m, [y], [0.0])[0]) + 0.0
        0.0
        """
        label = self._new_name(name, "spring", self._springs)
        a = self._resolve_body(body_a, "body_a", f"spring {label!r}")
        b = self._resolve_body(body_b, "body_b", f"spring {label!r}")
        if a == b:
            raise TopologyError(f"spring {label!r} connects body {self._bodies[a].name!r} to "
                                "itself; a spring joins two different bodies")
        spring = Spring(label, a, b, self, point_a=point_a, point_b=point_b, stiffness=stiffness,
                        rest_length=rest_length, damping=damping)
        self._springs.append(spring)
        self._touch()
        return spring

    def add_joint_spring(self, joint, stiffness=0.0, rest=0.0, damping=0.0):
        """Spring-dampers along a joint's coordinates: ``tau = -stiffness (q - rest) -
        damping qd`` (numbers, or one per coordinate).

        Joints whose speeds are not coordinate rates (spherical, free) are refused.
        """
        j = self.joint(joint.name if isinstance(joint, Joint) else joint)
        if j.nq != j.nv or j.quaternion is not None:
            raise ModelError(f"joint {j.name!r} ({j.kind}): a joint spring acts along "
                             "coordinates whose rates are the speeds; use add_spring or "
                             "add_generalized_force for spherical and free joints")
        if j.nv == 0:
            raise ModelError(f"joint {j.name!r} is fixed: it has no coordinates for a spring")
        if any(s.joint is j for s in self._joint_springs):
            raise ModelError(f"joint {j.name!r} already has a joint spring; assign its "
                             "stiffness, rest or damping instead")
        element = JointSpring(j, self, stiffness=stiffness, rest=rest, damping=damping)
        self._joint_springs.append(element)
        self._touch()
        return element

    def add_generalized_force(self, fn, name=None):
        """Generalized forces ``fn(t, q, qd)`` -> (nv,), added to every formulation's ``tau``
        (a control law, friction, ...)."""
        label = self._new_name(name, "generalized force", self._generalized_forces)
        element = GeneralizedForce(label, _state_function(fn, f"generalized force {label!r}",
                                                          (self.nv,)), self)
        if not callable(element.fn):
            raise ModelError(f"generalized force {label!r} must be a callable f(t, q, qd); "
                             "pass constant forces as tau")
        self._generalized_forces.append(element)
        self._touch()
        return element

    def set_base_motion(self, **entries):
        """Prescribe the motion of body 0, see :class:`BaseMotion` (``None`` entries: fixed)."""
        self.base_motion = BaseMotion(**entries)
        return self.base_motion

    # ------------------------------------------------------------ structure
    @property
    def n(self):
        """Number of bodies other than the base."""
        return len(self._bodies) - 1

    @property
    def m(self):
        """Number of joints."""
        return len(self._joints)

    @property
    def nq(self):
        """Length of the configuration vector ``q``."""
        return self.prepared("nq", lambda: sum(j.nq for j in self._joints))

    @property
    def nv(self):
        """Length of the generalized-speed vector ``v`` (= degrees of freedom of a tree)."""
        return self.prepared("nv", lambda: sum(j.nv for j in self._joints))

    def body(self, name):
        """The :class:`Body` with this name (or number)."""
        return self._bodies[self._resolve_body(name, "body", "Model.body")]

    def joint(self, name):
        """The :class:`Joint` with this name."""
        if name not in self._joint_index:
            raise ModelError(f"unknown joint {name!r}; known joints: {list(self._joint_index)}")
        return self._joints[self._joint_index[name]]

    @property
    def q_names(self):
        """Names of the configuration coordinates, e.g. ``'shoulder.angle'``."""
        return [f"{j.name}.{c}" for j in self._joints for c in j.coordinate_names]

    @property
    def v_names(self):
        """Names of the generalized speeds."""
        return [f"{j.name}.{c}" for j in self._joints for c in j.v_names]

    # ----------------------------------------------------- coordinates by name
    def _to_dict(self, name, value, size, labels):
        arr = self._check_array(name, value, size, lambda: labels)
        if arr.ndim == 1:
            return {label: float(x) for label, x in zip(labels, arr)}
        return {label: arr[..., k].copy() for k, label in enumerate(labels)}

    def _from_dict(self, name, values, labels, default, partial):
        from collections.abc import Mapping

        if not isinstance(values, Mapping):
            raise ShapeError(f"{name} must be a dict {{coordinate name: value}} with the names "
                             f"{labels}, got {type(values).__name__}")
        unknown = [key for key in values if key not in labels]
        missing = [label for label in labels if label not in values]
        if unknown:
            raise ShapeError(f"{name}: unknown coordinate name(s) {unknown}; the names of this "
                             f"model are {labels}")
        if missing and not partial:
            raise ShapeError(f"{name}: missing coordinate(s) {missing}; give every one of "
                             f"{labels} or pass partial=True to default the missing ones to "
                             f"{'neutral_q()' if name == 'q' else 'zero'}")
        entries = []
        for k, label in enumerate(labels):
            value = values.get(label, default[k])
            if np.iscomplexobj(value):
                raise ShapeError(f"{name}[{label!r}] must be real, got {value!r}")
            try:
                entries.append(np.asarray(value, dtype=float))
            except (TypeError, ValueError):
                raise ShapeError(f"{name}[{label!r}] must be a number (or an array of numbers "
                                 f"for a batch), got {value!r}") from None
        try:
            batch = np.broadcast_shapes(*(e.shape for e in entries))
        except ValueError:
            shapes = {label: e.shape for label, e in zip(labels, entries) if e.shape}
            raise ShapeError(f"{name}: the values' shapes do not broadcast: {shapes}") from None
        if not entries:
            return np.zeros(0)
        return np.stack([np.broadcast_to(e, batch) for e in entries], axis=-1)

    def q_to_dict(self, q):
        """The configuration as ``{name: value}`` with the names of :attr:`q_names`.

        A single ``q`` (nq,) gives floats; a batch (..., nq) gives arrays of the batch shape.

        Examples
        --------
        >>> import mbcourse as mb
        >>> m = mb.models.double_pendulum()
        >>> m.q_to_dict([0.1, 0.2])
        {'A.angle': 0.1, 'B.angle': 0.2}
        """
        return self._to_dict("q", q, self.nq, self.q_names)

    def q_from_dict(self, values, partial=False):
        """The configuration vector from ``{name: value}`` (names of :attr:`q_names`).

        Parameters
        ----------
        values : dict
            One number per coordinate (or arrays of one batch shape).
        partial : bool
            Let coordinates be missing: they take their :meth:`neutral_q` value (identity
            quaternions). Otherwise a missing name is an error.

        Returns
        -------
        ndarray, shape (..., nq)
            Checked like every input (:meth:`check_q`: unit quaternions).

        Raises
        ------
        ShapeError
            Naming the unknown or missing coordinates, and the valid names.

        Examples
        --------
        >>> import mbcourse as mb
        >>> m = mb.models.double_pendulum()
        >>> m.q_from_dict({"B.angle": 0.5, "A.angle": 0.1}).tolist()
        [0.1, 0.5]
        >>> m.q_from_dict({"B.angle": 0.5}, partial=True).tolist()
        [0.0, 0.5]
        >>> m.q_from_dict({"B.angle": 0.5})
        Traceback (most recent call last):
        ...
        mbcourse.errors.ShapeError: q: missing coordinate(s) ['A.angle']; give every one of ... or
        pass partial=True to default the missing ones to neutral_q()
        """
        return self.check_q(self._from_dict("q", values, self.q_names, self.neutral_q(),
                                            partial))

    def qd_to_dict(self, qd):
        """The generalized speeds as ``{name: value}`` with the names of :attr:`v_names`.

        Examples
        --------
        >>> import mbcourse as mb
        >>> m = mb.Model()
        >>> _ = m.add_body("top", 1.0, [1.0, 1.0, 2.0])
        >>> _ = m.add_joint("ball", "spherical", "ground", "top")
        >>> m.qd_to_dict([0.0, 0.0, 3.0])
        {'ball.wx': 0.0, 'ball.wy': 0.0, 'ball.wz': 3.0}
        """
        return self._to_dict("qd", qd, self.nv, self.v_names)

    def qd_from_dict(self, values, partial=False):
        """The generalized speeds (..., nv) from ``{name: value}`` (names of
        :attr:`v_names`); with ``partial=True`` missing speeds are zero.

        Examples
        --------
        >>> import mbcourse as mb
        >>> m = mb.models.double_pendulum()
        >>> m.qd_from_dict({"A.angle": [1.0, 2.0]}, partial=True).tolist()
        [[1.0, 0.0], [2.0, 0.0]]
        """
        return self.check_v(self._from_dict("qd", values, self.v_names, np.zeros(self.nv),
                                            partial))

    # ----------------------------------------------------------------- summary
    def _summary_tables(self):
        """(title, headers, rows) of the bodies and joints, for :meth:`summary`."""
        bodies = []
        for b in self._bodies:
            if b.index == 0:
                motion = "prescribed motion" if self.base_motion else "fixed"
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
            if not self.graph.is_tree:
                cut = set(self.graph.spanning_tree()[1].tolist())
        except TopologyError:
            pass
        for j in self._joints:
            def where(s):
                return "-" if s.stop == s.start else (
                    f"{s.start}" if s.stop == s.start + 1 else f"{s.start}:{s.stop}")
            coords = ", ".join(j.coordinate_names) or "(welded)"
            if j.v_names != j.coordinate_names:
                coords += "; speeds " + ", ".join(j.v_names)
            kind = j.kind + (" (closes a loop)" if j.index in cut else "")
            joints.append((str(j.index), j.name, kind, self._bodies[j.parent].name,
                           self._bodies[j.child].name, where(j.q_slice), where(j.v_slice),
                           coords))
        return [("Bodies", ("#", "name", "mass", "central inertia (body axes)"), bodies),
                ("Joints", ("#", "name", "kind", "parent", "child", "q", "v", "coordinates"),
                 joints)]

    def _summary_header(self):
        extra = [f"{len(seq)} {label}" for seq, label in
                 ((self._loads, "loads"), (self._springs, "springs"),
                  (self._joint_springs, "joint springs"),
                  (self._generalized_forces, "generalized forces")) if seq]
        return (f"Model: {self.n} bodies, {self.m} joints, nq={self.nq}, nv={self.nv}, "
                f"gravity={self.gravity.tolist()}" + ("; " + ", ".join(extra) if extra else ""))

    def summary(self):
        """A readable table of the bodies (masses, principal moments of inertia) and joints
        (kind, parent, child, slices of ``q`` and ``v``, coordinate names).

        ``print(model)`` prints it too; in a notebook the model shows it as an HTML table.

        Examples
        --------
        >>> import mbcourse as mb
        >>> print(mb.models.double_pendulum().summary())
        Model: 2 bodies, 2 joints, nq=2, nv=2, gravity=[0.0, -9.81, 0.0]
        Bodies
          #  name    mass  central inertia (body axes)
          0  ground  base  fixed
          1  rod1    1     diag(0.0004167, 0.08354, 0.08354)
          2  rod2    1     diag(0.0004167, 0.08354, 0.08354)
        Joints
          #  name  kind      parent  child  q  v  coordinates
          0  A     revolute  ground  rod1   0  0  angle
          1  B     revolute  rod1    rod2   1  1  angle

        A ball joint has four coordinates (a quaternion) and three speeds:

        >>> m = mb.Model()
        >>> _ = m.add_body("top", 2.0, [1.0, 1.0, 1.5])
        >>> _ = m.add_joint("ball", "spherical", "ground", "top", child_point=(0, 0, -0.5))
        >>> print(m)
        Model: 1 bodies, 1 joints, nq=4, nv=3, gravity=[0.0, 0.0, 0.0]
        Bodies
          #  name    mass  central inertia (body axes)
          0  ground  base  fixed
          1  top     2     diag(1, 1, 1.5)
        Joints
          #  name  kind       parent  child  q    v    coordinates
          0  ball  spherical  ground  top    0:4  0:3  qw, qx, qy, qz; speeds wx, wy, wz
        """
        lines = [self._summary_header()]
        for title, headers, rows in self._summary_tables():
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

    def __str__(self):
        return self.summary()

    def _repr_html_(self):
        import html

        parts = [f"<p><b>{html.escape(self._summary_header())}</b></p>"]
        for title, headers, rows in self._summary_tables():
            head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
            body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r)
                           + "</tr>" for r in rows)
            parts.append(f"<p>{title}</p><table><thead><tr>{head}</tr></thead>"
                         f"<tbody>{body}</tbody></table>")
        return "\n".join(parts)

    def validate(self):
        """Check the model is complete: at least one joint, every body connected to the base.

        Raises
        ------
        TopologyError
            Naming the bodies that hang in the air.
        """
        if not self._joints:
            raise TopologyError("the model has no joints: connect every body to the base")
        ip = np.array([j.parent for j in self._joints])
        im = np.array([j.child for j in self._joints])
        seen = _graph.reachable(ip, im, self.n)
        if not seen.all():
            names = [self._bodies[i].name for i in np.flatnonzero(~seen)]
            raise TopologyError(
                f"bodies {names} are not connected to {self._bodies[0].name!r} by any chain of "
                "joints; add a joint (a 'free' joint for a floating body)"
            )

    @property
    def graph(self):
        """The :class:`mbcourse.graph.Graph` of the model (i+ = parent, i- = child)."""
        def build():
            self.validate()
            return _graph.Graph(
                np.array([j.parent for j in self._joints]),
                np.array([j.child for j in self._joints]),
                tuple(b.name for b in self._bodies),
                tuple(j.name for j in self._joints),
            )
        return self.prepared("graph", build)

    def _tree(self):
        """Traversal of the spanning tree from the base (prepared once per version).

        Returns a list of ``(joint, forward)`` in parent-before-child order, where
        ``forward`` tells whether the joint's parent is the body nearer the base.
        """
        def build():
            g = self.graph
            tree, _ = g.spanning_tree()
            pred_v, pred_a, order = _graph.predecessors(g.i_plus[tree], g.i_minus[tree], g.n)
            steps = []
            for body in order[1:]:
                joint = self._joints[tree[pred_a[body]]]
                steps.append((joint, joint.child == body))
            return steps
        return self.prepared("tree", build)

    tree_traversal = _tree

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
                f"{method} needs a tree, but joints {[self._joints[a].name for a in cut]} close "
                "loops; use mb.loops.forward_dynamics (the cut-joint method of section 3.6) or "
                "mb.cartesian.forward_dynamics (constraint rows handle loops)"
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
        def build():
            self.require_tree(method)
            steps = self._tree()
            backward = [j.name for j, forward in steps if not forward]
            if backward:
                raise TopologyError(
                    f"joints {backward} point toward the base (their child is nearer body 0); "
                    f"{method} walks outward from the base: add those joints with parent and "
                    "child swapped"
                )
            return [j for j, _ in steps]
        return self.prepared(("outward_joints",), build)

    # ---------------------------------------------------------- state checks
    def _check_array(self, name, value, size, labels):
        """``labels`` is a function giving the coordinate names (built only for a message)."""
        if np.iscomplexobj(value):
            raise ShapeError(f"{name} must be real numbers, got a complex array "
                             f"({', '.join(labels()) or 'no coordinates'})")
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise ShapeError(f"{name} must be an array of {size} numbers, got {value!r}") from None
        if arr.ndim == 0 or arr.shape[-1] != size:
            raise ShapeError(
                f"{name} must have shape ({size},) or (..., {size}) for this model "
                f"({', '.join(labels()) or 'no coordinates'}), got shape {arr.shape}"
            )
        bad = ~np.isfinite(arr)
        if bad.any():
            where = np.argwhere(bad)[0]
            idx = int(where[-1])
            raise ShapeError(
                f"{name}[{', '.join(map(str, where))}] ({labels()[idx]}) is {arr[tuple(where)]}: "
                "every entry must be finite"
            )
        return arr

    def check_q(self, q):
        """Validate a configuration of shape (..., nq); returns floats with unit
        quaternions (renormalized within ``QUATERNION_TOL``, refused beyond)."""
        q = self._check_array("q", q, self.nq, lambda: self.q_names)
        if self.prepared("has_quaternions",
                         lambda: any(j.quaternion is not None for j in self._joints)):
            q = normalize_quaternions(self._joints, np.array(q), self.q_names)
        return q

    def check_v(self, v, name="qd"):
        """Validate generalized speeds (or accelerations) of shape (..., nv)."""
        return self._check_array(name, v, self.nv, lambda: self.v_names)

    def check_tau(self, tau):
        """Validate generalized forces (``None`` means zero)."""
        if tau is None:
            return np.zeros(self.nv)
        return self._check_array("tau", tau, self.nv, lambda: self.v_names)

    def check_state(self, q, qd=None, tau=None, *, qdd=None, t=0.0, qd_name="qd"):
        """The one input check of every public function.

        Parameters
        ----------
        q : array_like, shape (..., nq)
        qd, tau, qdd : array_like, shape (..., nv), optional
            ``tau=None`` gives zeros; ``qd``/``qdd`` left ``None`` stay ``None``.
        t : float
        qd_name : str
            The name of ``qd`` in messages (``"p"`` where momenta take its place).

        Returns
        -------
        State
            Arrays broadcast to one common batch and flattened to ``(B, n)``;
            ``State.result`` restores the batch shape.

        Raises
        ------
        ShapeError
            Wrong last dimension, batch shapes that do not broadcast (naming both), complex,
            NaN or infinite entries (naming the coordinate), a time that is not a real number.
        InconsistentStateError
            A zero or far-from-unit quaternion (naming the joint).

        Examples
        --------
        >>> import mbcourse as mb
        >>> m = mb.models.double_pendulum()
        >>> s = m.check_state([[0.1, 0.2]] * 5, [0.0, 1.0])
        >>> s.q.shape, s.qd.shape, s.batch
        ((5, 2), (5, 2), (5,))
        >>> m.check_state([[0.1, 0.2]] * 5, [[0.0, 1.0]] * 4)
        Traceback (most recent call last):
        ...
        mbcourse.errors.ShapeError: batch shapes do not match: q has shape (5, 2), qd has shape (4, 2)
        """
        if isinstance(t, bool) or not isinstance(t, numbers.Real) or not np.isfinite(t):
            raise ShapeError(f"t must be a finite real number (the time), got {t!r}")
        arrays = {"q": self.check_q(q)}
        for name, value in ((qd_name, qd), ("tau", tau), ("qdd", qdd)):
            if value is not None:
                arrays[name] = self.check_v(value, name)
        try:
            batch = np.broadcast_shapes(*(a.shape[:-1] for a in arrays.values()))
        except ValueError:
            shapes = ", ".join(f"{k} has shape {a.shape}" for k, a in arrays.items())
            raise ShapeError(f"batch shapes do not match: {shapes}") from None
        B = int(np.prod(batch, dtype=int))
        flat = {k: np.broadcast_to(a, batch + a.shape[-1:]).reshape(B, a.shape[-1])
                for k, a in arrays.items()}
        if "tau" not in flat:
            flat["tau"] = np.zeros((B, self.nv))
        return State(flat["q"], flat.get(qd_name), flat["tau"], flat.get("qdd"), tuple(batch),
                     float(t), self)

    def neutral_q(self):
        """The configuration with every joint at ``q = 0`` (identity quaternions)."""
        return np.concatenate([j.neutral() for j in self._joints]) if self._joints else np.zeros(0)

    def qdot(self, q, v):
        """Derivative of the configuration, ``dq/dt`` (differs from ``v`` for quaternions)."""
        q = self.check_q(q)
        v = self.check_v(v)
        out = np.empty(np.broadcast_shapes(q.shape[:-1], v.shape[:-1]) + (self.nq,))
        for j in self._joints:
            out[..., j.q_slice] = j.qdot(q[..., j.q_slice], v[..., j.v_slice])
        return out

    def normalize_q(self, q):
        """Scale the quaternions of spherical and free joints to unit length (any nonzero
        quaternion; a zero one is refused). Unlike :meth:`check_q`, which every formulation
        calls and which refuses quaternions far from unit, this is the explicit request.

        Examples
        --------
        >>> import mbcourse as mb
        >>> m = mb.Model()
        >>> _ = m.add_body("a", 1.0, [1, 1, 1])
        >>> _ = m.add_joint("ball", "spherical", "ground", "a")
        >>> m.normalize_q([0.0, 0.0, 0.0, 5.0]).tolist()
        [0.0, 0.0, 0.0, 1.0]
        """
        q = np.array(self._check_array("q", q, self.nq, lambda: self.q_names), dtype=float)
        for j in self._joints:
            if j.quaternion is not None:
                s = slice(j.q_slice.start + j.quaternion.start, j.q_slice.start + j.quaternion.stop)
                norm = np.linalg.norm(q[..., s], axis=-1, keepdims=True)
                q[..., s] /= np.where(norm > 0, norm, 1.0)  # a zero one stays zero: refused
        return normalize_quaternions(self._joints, q, self.q_names)

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
                vel[..., c, :] = (vel[..., i, :] + cross(omega[..., i, :], lever_i) + rel_vel
                                  - cross(omega[..., c, :], lever_c))
            else:
                omega[..., i, :] = omega[..., c, :] - rel_omega
                vel[..., i, :] = (vel[..., c, :] + cross(omega[..., c, :], lever_c) - rel_vel
                                  - cross(omega[..., i, :], lever_i))
        return vel, omega

    def masses(self):
        """Masses of bodies 1..n, shape (n,)."""
        return self.prepared("masses", lambda: frozen([b.mass for b in self._bodies[1:]]))

    def inertias(self):
        """Central inertia tensors of bodies 1..n in body axes, shape (n, 3, 3)."""
        return self.prepared("inertias", lambda: frozen(
            np.array([b.inertia for b in self._bodies[1:]]).reshape(-1, 3, 3)))

    def kinetic_energy(self, q, v, t=0.0):
        """Kinetic energy ``sum(m v^2 / 2 + omega^T J omega / 2)``, shape (...,)."""
        _, A = self.body_poses(q, t)
        vel, omega = self.body_velocities(q, v, t)
        omega_body = (np.swapaxes(A[..., 1:, :, :], -1, -2) @ omega[..., 1:, :, None])[..., 0]
        J_omega = (self.inertias() @ omega_body[..., None])[..., 0]
        return 0.5 * (np.sum(self.masses() * np.sum(vel[..., 1:, :] ** 2, axis=-1), axis=-1)
                      + np.sum(omega_body * J_omega, axis=(-1, -2)))

    def potential_energy(self, q, t=0.0):
        """Potential energy of gravity and of every spring, shape (...,).

        ``-sum(m g . r)`` plus ``stiffness (L - rest_length)^2 / 2`` of each
        :meth:`add_spring` and ``stiffness (q - rest)^2 / 2`` of each joint spring.
        """
        q = self.check_q(q)
        r, A = self.body_poses(q, t)
        U = -np.sum(self.masses() * (r[..., 1:, :] @ self.gravity), axis=-1)
        for s in self._springs:
            U = U + s.energy(np.linalg.norm(self._spring_geometry(s, r, A)[2], axis=-1))
        for s in self._joint_springs:
            dq = q[..., s.joint.q_slice] - s.rest
            U = U + 0.5 * np.sum(s.stiffness * dq * dq, axis=-1)
        return U

    def _spring_geometry(self, s, r, A, vel=None, omega=None):
        """Attachment points' lever arms (inertial axes) and ``d = P_b - P_a``; with
        velocities also ``dd/dt``."""
        la = (A[..., s.body_a, :, :] @ s.point_a[:, None])[..., 0]
        lb = (A[..., s.body_b, :, :] @ s.point_b[:, None])[..., 0]
        d = r[..., s.body_b, :] + lb - r[..., s.body_a, :] - la
        if vel is None:
            return la, lb, d
        dd = (vel[..., s.body_b, :] + cross(omega[..., s.body_b, :], lb)
              - vel[..., s.body_a, :] - cross(omega[..., s.body_a, :], la))
        return la, lb, d, dd

    def _spring_tension(self, s, d, dd):
        """Tension and unit direction from ``a`` to ``b``; refuses coinciding points where
        the direction matters."""
        L = np.linalg.norm(d, axis=-1)
        scale = 1.0 + np.abs(d).max(initial=0.0)
        if np.any(L <= 1e-12 * scale) and (s.rest_length > 0 or s.damping > 0):
            raise SingularSystemError(
                f"spring {s.name!r}: its two points coincide, so the direction of its force is "
                "undefined (a spring with rest_length 0 and no damping is the only one defined "
                "there); move its attachment points apart"
            )
        u = d / np.where(L > 0, L, 1.0)[..., None]
        T = s.stiffness * (L - s.rest_length)
        if s.damping > 0 and dd is not None:
            T = T + s.damping * np.sum(u * dd, axis=-1)
        return T, u, L

    def _needs_state(self):
        """Whether force elements need body positions (springs) and velocities (dampers)."""
        springs = bool(self._springs)
        dampers = any(s.damping > 0 for s in self._springs)
        return springs, dampers

    def applied_wrenches(self, q=None, *, qd=None, t=0.0, poses=None, velocities=None,
                         orientations=None):
        """Resultant applied force and moment about each centre of mass, inertial axes.

        Gravity, every :meth:`add_force` load and every :meth:`add_spring` spring-damper.

        Parameters
        ----------
        q : array_like, shape (..., nq)
            The configuration (needed by springs and by callable loads).
        qd : array_like, shape (..., nv), optional
            The speeds (dampers and callable loads); ``None`` means at rest.
        t : float
        poses : (r, A), optional
            Body positions (..., n + 1, 3) and orientations (..., n + 1, 3, 3) already at
            hand (absolute-coordinate formulations); computed from ``q`` otherwise.
        velocities : (vel, omega), optional
            Body velocities and angular velocities (..., n + 1, 3), inertial axes.
        orientations : ndarray, shape (..., n + 1, 3, 3), optional
            Orientations alone: enough for a model without springs.

        Returns
        -------
        F, M : ndarray, shape (..., n + 1, 3)
            Row 0 (the base) is zero.
        """
        springs, dampers = self._needs_state()
        state_loads = any(callable(f) for ld in self._loads for f in (ld.force, ld.torque))
        if q is not None:
            q = self.check_q(q)
        if (springs or state_loads) and q is None and (poses is None or state_loads):
            raise ShapeError("this model has springs or state-dependent loads: "
                             "applied_wrenches needs q (and qd for dampers)")
        if poses is not None:
            r, A = poses
        elif orientations is not None and not springs:
            r, A = None, np.asarray(orientations, dtype=float)
        else:
            r, A = self.body_poses(q, t)
        if qd is not None:
            qd = self.check_v(qd)
        F = np.zeros(A.shape[:-2] + (3,))
        M = np.zeros_like(F)
        F[..., 1:, :] = self.masses()[:, None] * self.gravity
        for load in self._loads:
            Ab = A[..., load.body, :, :]
            rot = (lambda x: (Ab @ x[..., None])[..., 0]) if load.frame == "body" else (lambda x: x)
            for value, is_force in ((load.force, True), (load.torque, False)):
                if value is None:
                    continue
                if callable(value):
                    vv = np.zeros(self.nv) if qd is None else qd
                    bq = np.broadcast_shapes(q.shape[:-1], vv.shape[:-1])
                    vec = _evaluate(value, t, np.broadcast_to(q, bq + q.shape[-1:]),
                                    np.broadcast_to(vv, bq + vv.shape[-1:]), (3,),
                                    f"load {load.name!r}: {'force' if is_force else 'torque'}")
                else:
                    vec = value
                f = np.broadcast_to(rot(np.asarray(vec, dtype=float)), F[..., 0, :].shape)
                if is_force:
                    F[..., load.body, :] += f
                    M[..., load.body, :] += cross((Ab @ load.point[..., None])[..., 0], f)
                else:
                    M[..., load.body, :] += f
        if springs:
            if dampers and velocities is None and qd is not None:
                velocities = self.body_velocities(q, qd, t)
            vel, omega = velocities if velocities is not None else (None, None)
            for s in self._springs:
                geo = self._spring_geometry(s, r, A, vel, omega) if vel is not None else \
                    self._spring_geometry(s, r, A) + (None,)
                la, lb, d, dd = geo
                T, u, _ = self._spring_tension(s, d, dd)
                f = T[..., None] * u  # on body a, toward b
                F[..., s.body_a, :] += f
                M[..., s.body_a, :] += cross(la, f)
                F[..., s.body_b, :] -= f
                M[..., s.body_b, :] -= cross(lb, f)
            F[..., 0, :] = 0.0
            M[..., 0, :] = 0.0
        return F, M

    def generalized_forces(self, q, qd=None, t=0.0):
        """Generalized forces of the joint springs and :meth:`add_generalized_force`
        callables, shape (..., nv) (zero when the model has none).

        Every formulation adds them to its ``tau``.
        """
        q = self.check_q(q)
        qd = np.zeros(q.shape[:-1] + (self.nv,)) if qd is None else self.check_v(qd)
        batch = np.broadcast_shapes(q.shape[:-1], qd.shape[:-1])
        out = np.zeros(batch + (self.nv,))
        for s in self._joint_springs:
            j = s.joint
            out[..., j.v_slice] -= (s.stiffness * (q[..., j.q_slice] - s.rest)
                                    + s.damping * qd[..., j.v_slice])
        for g in self._generalized_forces:
            out += _evaluate(g.fn, t, np.broadcast_to(q, batch + q.shape[-1:]),
                             np.broadcast_to(qd, batch + qd.shape[-1:]), (self.nv,),
                             f"generalized force {g.name!r}")
        return out

    def damping_power(self, q, qd, t=0.0):
        """Power of every damper, ``-sum c (dL/dt)^2 - sum c_j qd_j^2`` (<= 0), shape (...,).

        Along a motion without other non-conservative forces, ``d(T + U)/dt`` equals it.
        """
        q, qd = self.check_q(q), self.check_v(qd)
        P = np.zeros(np.broadcast_shapes(q.shape[:-1], qd.shape[:-1]))
        if any(s.damping > 0 for s in self._springs):
            r, A = self.body_poses(q, t)
            vel, omega = self.body_velocities(q, qd, t)
            for s in self._springs:
                _, _, d, dd = self._spring_geometry(s, r, A, vel, omega)
                L = np.linalg.norm(d, axis=-1)
                Ldot = np.sum(d * dd, axis=-1) / np.where(L > 0, L, 1.0)
                P = P - s.damping * Ldot ** 2
        for s in self._joint_springs:
            v = qd[..., s.joint.v_slice]
            P = P - np.sum(s.damping * v * v, axis=-1)
        return P

    def __repr__(self):
        return (f"Model({self.n} bodies, {self.m} joints, nq={self.nq}, nv={self.nv}, "
                f"gravity={self.gravity.tolist()})")
