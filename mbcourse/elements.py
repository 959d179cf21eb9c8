"""The parts a :class:`~mbcourse.model.Model` is built of: bodies, force elements and the
prescribed motion of the base (re-exported by :mod:`mbcourse.model`, so
``mbcourse.model.Body`` and ``mb.Body`` keep working).

Each element holds validated, read-only parameters; those named in ``_PARAMETERS`` may be
reassigned (validated again, and the owning model's version bumped, see
:class:`mbcourse.joints.Part`). The elements describe; they never evaluate a state: the
forces they produce are computed by :mod:`mbcourse.forces` (Pinocchio keeps the same split
between its ``Model`` and ``Data``).

Examples
--------
>>> import mbcourse as mb
>>> m = mb.models.double_pendulum()
>>> k = m.add_spring("k", "ground", "rod2", stiffness=10.0, rest_length=0.5)
>>> k
Spring('k', stiffness=10.0, rest_length=0.5, damping=0.0)
>>> k.energy(1.0)
1.25
"""

from __future__ import annotations

import inspect
import numbers
import warnings

import numpy as np

from .errors import InertiaWarning, ModelError, ShapeError
from .joints import Part, as_array, frozen, vector
from .spatial import is_rotation, vee

__all__ = ["Body", "Load", "Spring", "JointSpring", "GeneralizedForce", "BaseMotion",
           "JointLimit", "Contact", "positive", "inertia_tensor", "state_function",
           "restitution_value"]

_EYE = np.eye(3)


# ------------------------------------------------------------------------ helpers
def positive(value, what, allow_zero=False):
    """``value`` as a float, refused unless positive (non-negative) and finite."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ModelError(f"{what} must be a {'non-negative' if allow_zero else 'positive'} "
                         f"finite number, got {value!r}")
    value = float(value)
    if not (np.isfinite(value) and (value >= 0.0 if allow_zero else value > 0.0)):
        raise ModelError(f"{what} must be a {'non-negative' if allow_zero else 'positive'} "
                         f"finite number, got {value}")
    return value


def inertia_tensor(value, body, strict=True):
    """A checked central inertia tensor (3x3, or 3 principal moments) of ``body``:
    symmetric and positive semi-definite (a point mass has none, a massless link may have
    none). Principal moments that violate the triangle inequality (no rigid body has them)
    are refused, or with ``strict=False`` accepted with an
    :class:`~mbcourse.errors.InertiaWarning` naming the body and the inequality (robot files
    in the wild have them, and their mass matrix may still be positive definite)."""
    what = f"body {body!r}: inertia"
    if np.iscomplexobj(as_array(value, what, "a 3x3 tensor or 3 principal moments")):
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
    if moments[0] < -(1e-12 * scale + 1e-15):     # round-off, or -5e-20 in a robot file
        raise ModelError(
            f"{what} must be positive semi-definite (zero for a point mass); its principal "
            f"moments are {np.round(moments, 12).tolist()}"
        )
    a, b, c = moments
    if c > a + b + 1e-9 * scale + 1e-15:
        message = (f"{what} violates the triangle inequality of principal moments "
                   f"({c:g} > {a:g} + {b:g}): no rigid body has this inertia")
        if strict:
            raise ModelError(message)
        warnings.warn(message + "; loaded as given (strict=True refuses it)", InertiaWarning,
                      stacklevel=3)
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


def state_function(value, what, shape):
    """Constant array or callable ``f(t, q, qd)``: returns ``(callable or None, const)``."""
    if value is None:
        return None
    if callable(value):
        try:
            signature = inspect.signature(value)
        except (TypeError, ValueError):  # builtins without a signature: trust them
            return value
        try:
            signature.bind(0.0, None, None)  # can it be called as f(t, q, qd)?
        except TypeError:
            raise ModelError(
                f"{what}: a force callable takes (t, q, qd) and returns an array of shape "
                f"{shape}; got a function of {len(signature.parameters)} argument(s) "
                "(write lambda t, q, qd: ... even if it uses only t)"
            ) from None
        return value
    arr = as_array(value, what, f"an array of shape {shape} or a callable f(t, q, qd)")
    arr = np.asarray(arr, dtype=float) if not np.iscomplexobj(arr) else None
    if arr is None or arr.shape != shape or not np.all(np.isfinite(arr)):
        raise ShapeError(f"{what} must be a finite array of shape {shape} or a callable "
                         f"f(t, q, qd), got {value!r}")
    return frozen(arr)



class _Element(Part):
    """A part of the model whose parameters are set once, at creation (see
    :class:`mbcourse.joints.Part`)."""

    def _init(self, model, **values):
        object.__setattr__(self, "_model", model)
        for key, val in values.items():
            object.__setattr__(self, key, val)


# ------------------------------------------------------------------------- bodies
class Body(_Element):
    """A rigid body: name, index (1..n), mass and central inertia in body axes (a mass of
    zero, or an inertia of zero, is allowed: a massless link, a point mass).

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
            return positive(value, f"body {self.name!r}: mass", allow_zero=True)
        return inertia_tensor(value, self.name)

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
        return positive(value, what, allow_zero=True)

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
        if np.iscomplexobj(as_array(value, what, f"a number or {n} numbers")):
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


# ------------------------------------------------------------ unilateral constraints
def restitution_value(value, what):
    """A coefficient of restitution: a number in [0, 1] (0 plastic, 1 elastic)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ModelError(f"{what} must be a number in [0, 1], got {value!r}")
    e = float(value)
    if not 0.0 <= e <= 1.0:
        raise ModelError(f"{what} must lie in [0, 1] (0: plastic, 1: elastic; above 1 an "
                         f"impact would create energy), got {e}")
    return e


class JointLimit(_Element):
    """Stops of a one-coordinate joint: ``lower <= q <= upper`` (chapter 9).

    Reaching a stop is an impact with Newton's coefficient ``restitution``; ``lower``,
    ``upper`` and ``restitution`` may be reassigned (``-inf``/``inf`` leave a side open).
    """

    _PARAMETERS = ("lower", "upper", "restitution")
    _label = "joint limit"

    def __init__(self, joint, lower, upper, restitution, model=None):
        self._init(model, joint=joint, name=joint.name)
        lower, upper = self._bound(lower, "lower"), self._bound(upper, "upper")
        self._order(lower, upper)
        if not (np.isfinite(lower) or np.isfinite(upper)):
            raise ModelError(f"joint limit on {self.joint.name!r}: lower and upper are both "
                             "infinite, so it would stop nothing; give at least one side")
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)
        object.__setattr__(self, "restitution", self._validate("restitution", restitution))

    def _bound(self, value, attr):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or np.isnan(value):
            raise ModelError(f"joint limit on {self.joint.name!r}: {attr} must be a number "
                             f"(-inf or inf for an open side), got {value!r}")
        return float(value)

    def _order(self, lower, upper):
        if not lower < upper:
            raise ModelError(f"joint limit on {self.joint.name!r}: lower ({lower:g}) must be "
                             f"below upper ({upper:g})")

    def _validate(self, attr, value):
        if attr == "restitution":
            return restitution_value(value, f"joint limit on {self.joint.name!r}: restitution")
        value = self._bound(value, attr)
        self._order(*((value, self.upper) if attr == "lower" else (self.lower, value)))
        return value

    def __repr__(self):
        return (f"JointLimit({self.name!r}, lower={self.lower:g}, upper={self.upper:g}, "
                f"restitution={self.restitution:g})")


class Contact(_Element):
    """A point of a body (or a sphere of ``radius`` about it) that may not pass below the
    plane ``normal . x = offset`` (world axes; chapter 9).

    The gap is ``normal . (r + A point) - offset - radius``; an impact obeys Newton's
    ``restitution`` and Coulomb's ``friction`` coefficient. Every parameter but the body may
    be reassigned.
    """

    _PARAMETERS = ("point", "normal", "offset", "radius", "restitution", "friction")
    _label = "contact"

    def __init__(self, name, body, model=None, **params):
        self._init(model, name=name, body=body)
        for key in self._PARAMETERS:
            object.__setattr__(self, key, self._validate(key, params[key]))

    def _validate(self, attr, value):
        what = f"contact {self.name!r}: {attr}"
        if attr == "point":
            return vector(value, what)
        if attr == "normal":
            n = vector(value, what)
            length = float(np.linalg.norm(n))
            if not length > 1e-12:
                raise ModelError(f"{what} must be a non-zero vector (the plane's outward "
                                 f"normal, world axes), got {n.tolist()}")
            return frozen(n / length)
        if attr == "offset":
            if isinstance(value, bool) or not isinstance(value, numbers.Real) \
                    or not np.isfinite(value):
                raise ModelError(f"{what} must be a finite number, got {value!r}")
            return float(value)
        if attr == "restitution":
            return restitution_value(value, what)
        return positive(value, what, allow_zero=True)

    def __repr__(self):
        return (f"Contact({self.name!r}, restitution={self.restitution:g}, "
                f"friction={self.friction:g})")


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
