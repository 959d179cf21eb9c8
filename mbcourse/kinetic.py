"""Chapter 7: kinetic energy of a rigid body in general motion (Alyushin 2022), checked.

Alyushin describes a motion in *material* (Lagrange) coordinates: every particle is labelled
by its initial position ``alpha = (alpha, beta, gamma)`` and the motion is a map
``x(alpha, t)``. A plane rotation about an axis parallel to ``x``, ``y`` or ``z`` through a
pole ``P`` (fixed, (2)–(6), or translating, (8)–(9)) is such a map; motions are superposed by
composition (7): the inner motion's current coordinates are the outer motion's material
ones. Every map here is rigid, ``x = R(t) alpha + p(t)``, with the velocity field (4)
``v(alpha, t) = omega x (x - x_P) + v_P``.

Kinetic energy is the definition (10), ``E = 1/2 int |v|^2 dm``, evaluated by a quadrature
over a body's mass distribution (:class:`Box`, :class:`Cylinder`, :class:`PointCloud`; exact
for their uniform densities because ``|v|^2`` is quadratic in ``alpha``), and the closed
forms of the paper:

* planar motion about a moving pole (11)–(15), König's form (16);
* general rotation about a pole with the polar and product moments (26)/(30), taken with the
  **current** inertia about the pole (erratum E31) and the observer-frame components of the
  angular velocity (E33), :func:`energy_about_pole`; the two- and one-axis cases (34), (35);
* with translation: (40), König's theorem, :func:`energy_koenig`, and the printed (39),
  :func:`energy_eq39`, which lacks the cross term ``m v_P . (omega x r_PC)`` (E32,
  :func:`cross_term`);
* the product of inertia after a rotation about one axis (33), :func:`product_after_rotation`,
  and its true amplitude (E36), :func:`product_amplitude`.

Sympy forms: :func:`sympy_plane_rotation` (a rotation of given points, so that the
superposition (7) is a substitution) and :func:`sympy_alyushin` (the robot's laws (41)–(47)).

The tests hold every closed form to the definition (10) at 1e-10 on random bodies and
motions; the errata's counterexamples are computed in chapter 7 of the book.
"""

from __future__ import annotations

import inspect
import numbers

import numpy as np

from .errors import ModelError, ShapeError
from .spatial import cross

__all__ = [
    "AXES", "uniform", "PlaneRotation", "Translation", "Composite", "compose",
    "Box", "Cylinder", "PointCloud", "kinetic_energy", "moments", "mass_properties",
    "energy_planar", "energy_about_pole", "energy_two_axes", "energy_one_axis",
    "energy_koenig", "energy_eq39", "cross_term", "product_after_rotation",
    "product_amplitude", "alyushin_motions", "sympy_plane_rotation", "sympy_alyushin",
]

#: Axis names of the plane rotations (2)–(6).
AXES = {"x": 0, "y": 1, "z": 2}


def _wanted(shape):
    """Words for what an array argument of ``shape`` must be."""
    if shape is None:
        return "real numbers"
    if shape == ():
        return "a real number"
    if len(shape) == 1:
        return f"{shape[0]} real numbers"
    return f"a {'x'.join(map(str, shape))} array of real numbers"


def _refuse(value, what, wanted):
    """A ShapeError saying what ``what`` must be, naming a motion or body given by mistake."""
    if isinstance(value, (_Rigid, _Body)) or callable(value):
        kind = "a motion law" if callable(value) and not isinstance(value, _Rigid) else \
            f"a {type(value).__name__}"
        return ShapeError(f"{what} must be {wanted}, got {kind} ({value!r}): are the "
                          "arguments swapped?")
    return ShapeError(f"{what} must be {wanted}, got {value!r}")


def _finite(value, what, shape=None):
    """``value`` as a float array of ``shape`` (any shape when None), finite; else a
    ShapeError naming ``what``."""
    if value is None or isinstance(value, (str, bytes)) or callable(value) \
            or isinstance(value, (_Rigid, _Body)):
        raise _refuse(value, what, _wanted(shape))
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise _refuse(value, what, _wanted(shape)) from None
    if shape is not None and arr.shape != shape:
        raise ShapeError(f"{what} must have shape {shape} ({_wanted(shape)}), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ShapeError(f"{what} must be finite, got {value!r}")
    return arr


def _number(value, what):
    """``value`` as a finite float; else a ShapeError naming ``what``."""
    return float(_finite(value, what, ()))


def _vector(value, what, sizes=(3,)):
    """A finite vector of one of the lengths ``sizes``."""
    arr = _finite(value, what)
    if arr.ndim != 1 or arr.shape[0] not in sizes:
        words = " or ".join(str(k) for k in sizes)
        raise ShapeError(f"{what} must be {words} real numbers, got shape {arr.shape}")
    return arr


def _time(t):
    """The time ``t``, checked to be one finite real number (returned unchanged)."""
    if isinstance(t, (bool, np.bool_)) or not isinstance(t, numbers.Real) \
            or not np.isfinite(t):
        raise _refuse(t, "t (the time)", "one finite real number")
    return t


def _axis(axis):
    """The index of an axis name; a ModelError for anything but 'x', 'y', 'z'."""
    if not isinstance(axis, str) or axis not in AXES:
        raise ModelError(f"axis must be one of {sorted(AXES)}, got {axis!r}")
    return AXES[axis]


def _motion(value, what="motion"):
    """Refuse anything but a motion of this module."""
    if not isinstance(value, _Rigid):
        hint = " (motion and body swapped?)" if isinstance(value, _Body) else ""
        raise ShapeError(f"{what} must be a mbcourse.kinetic motion (PlaneRotation, "
                         f"Translation, compose(...)), got {value!r}{hint}")
    return value


def _body(value, what="body"):
    """Refuse anything but a body of this module."""
    if not isinstance(value, _Body):
        hint = " (motion and body swapped?)" if isinstance(value, _Rigid) else ""
        raise ShapeError(f"{what} must be a mbcourse.kinetic body (Box, Cylinder, "
                         f"PointCloud), got {value!r}{hint}")
    return value


# ------------------------------------------------------------------ angle laws
def uniform(theta0=0.0, rate=0.0, acceleration=0.0):
    """The law ``theta(t) = theta0 + rate t + acceleration t^2 / 2`` as a callable
    ``t -> (theta, theta_t, theta_tt)`` (a rotation's angle, or a pole's coordinate).

    Examples
    --------
    >>> uniform(0.5, 2.0)(1.0)
    (2.5, 2.0, 0.0)
    """
    theta0, rate, acceleration = (_number(v, f"uniform's {name}") for v, name in
                                  ((theta0, "theta0"), (rate, "rate"),
                                   (acceleration, "acceleration")))
    return lambda t: (theta0 + rate * t + 0.5 * acceleration * t * t,
                      rate + acceleration * t, acceleration)


def _law(value, what, size=None, returns="(theta, theta_t, theta_tt)"):
    """A checked law ``t -> (x, x_t, x_tt)``: a callable, or a constant number (``size``
    None only)."""
    if callable(value):
        return _Law(value, what, size, returns)
    if size is not None:
        raise ShapeError(f"{what} must be a callable t -> {returns}, got {value!r}")
    if value is None:
        raise ShapeError(f"{what} must be a number or a callable t -> {returns}, got None")
    return uniform(_number(value, what))


class _Law:
    """A user's law ``t -> (x, x_t, x_tt)``, its values checked at every call: three finite
    numbers (``size`` None) or three vectors of ``size`` numbers."""

    def __init__(self, fn, what, size, returns):
        try:
            inspect.signature(fn).bind(0.0)
        except TypeError:
            raise ShapeError(f"{what} must be a callable of one argument, t -> {returns}; "
                             f"{fn!r} cannot be called with one argument t") from None
        except ValueError:  # pragma: no cover - no signature to inspect (a builtin)
            pass
        self.fn, self.what, self.size, self.returns = fn, what, size, returns

    def __call__(self, t):
        """The law's ``(x, x_t, x_tt)`` at ``t``, checked (floats, or (size,) arrays)."""
        out = self.fn(t)
        shape = () if self.size is None else (self.size,)
        wanted = "three finite numbers" if self.size is None else \
            f"three vectors of {self.size} finite numbers"
        try:
            values = tuple(np.asarray(v, dtype=float) for v in out)
        except (TypeError, ValueError):
            values = ()
        if len(values) != 3 or any(v.shape != shape or not np.isfinite(v).all()
                                   for v in values):
            raise ShapeError(f"{self.what}: the law must return {self.returns}, {wanted}; "
                             f"at t = {t!r} it returned {out!r}")
        return tuple(float(v) for v in values) if self.size is None else values


def _rot(axis, angle):
    c, s = np.cos(angle), np.sin(angle)
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    R = np.eye(3)
    R[i, i], R[i, j], R[j, i], R[j, j] = c, -s, s, c
    return R


# ------------------------------------------------------------------ motions
class _Rigid:
    """A rigid map ``x = R(t) alpha + p(t)``; subclasses give ``_state`` (:meth:`state` at a
    checked time)."""

    def state(self, t):
        """``(R, p, omega, v0, domega, a0)``: rotation, translation, observer-frame angular
        velocity and acceleration, and the velocity and acceleration of the material point
        at the origin (``alpha = 0``)."""
        return self._state(_time(t))

    def _state(self, t):
        """:meth:`state` at a checked time (subclasses give it)."""
        raise NotImplementedError  # pragma: no cover

    def position(self, alpha, t):
        """Current positions ``x(alpha, t)`` of material points ``alpha`` (..., 3)."""
        alpha = _points(alpha)
        R, p, *_ = self._state(_time(t))
        return alpha @ R.T + p

    def velocity(self, alpha, t):
        """The velocity field (4), ``v = v0 + omega x (x - p)``, at material points."""
        return self._velocity(_points(alpha), _time(t))

    def _velocity(self, alpha, t):
        """:meth:`velocity` of checked points at a checked time."""
        R, p, w, v0, _, _ = self._state(t)
        x = alpha @ R.T + p
        return v0 + cross(np.broadcast_to(w, x.shape), x - p)

    def angular_velocity(self, t):
        """Observer-frame (fixed axes) angular velocity ``omega`` (3,)."""
        return self._state(_time(t))[2]

    def then(self, outer):
        """This motion carried by ``outer``: the superposition (7), ``outer(self(alpha))``."""
        return Composite(outer, self)


def _points(alpha):
    """Material points ``alpha``, checked: finite, shape (3,) or (..., 3)."""
    alpha = _finite(alpha, "alpha (material points)")
    if alpha.ndim == 0 or alpha.shape[-1] != 3:
        raise ShapeError(f"alpha (material points) must have shape (3,) or (..., 3), got "
                         f"{alpha.shape}")
    return alpha


class PlaneRotation(_Rigid):
    """A plane rotation about an axis parallel to ``x``, ``y`` or ``z`` through a pole,
    Alyushin (2)–(6) (fixed pole) and (8)–(9) (translating pole).

    Parameters
    ----------
    axis : {"x", "y", "z"}
    pole : array_like, shape (3,)
        The pole's material coordinates ``(alpha_P, beta_P, gamma_P)``.
    angle : float or callable ``t -> (theta, theta_t, theta_tt)``
        The angle turned, ``Delta theta`` (a constant is a fixed turn).
    pole_motion : callable ``t -> (x_P, v_P, a_P)``, optional
        The pole's current position, velocity and acceleration (each (3,)); default fixed.

    Examples
    --------
    A quarter turn about ``z`` through ``P = (1, 0, 0)``: the origin goes to ``(1, -1, 0)``.

    >>> import numpy as np
    >>> rot = PlaneRotation("z", (1.0, 0.0, 0.0), np.pi / 2)
    >>> rot.position([0.0, 0.0, 0.0], 0.0).round(12).tolist()
    [1.0, -1.0, 0.0]
    """

    def __init__(self, axis, pole=(0.0, 0.0, 0.0), angle=0.0, pole_motion=None):
        self.k = _axis(axis)
        self.axis = axis
        self.pole = _finite(pole, "pole", (3,))
        self.angle = _law(angle, "angle")
        if pole_motion is not None and not callable(pole_motion):
            raise ShapeError("pole_motion must be a callable t -> (x_P, v_P, a_P)")
        self.pole_motion = None if pole_motion is None else \
            _law(pole_motion, "pole_motion", 3, "(x_P, v_P, a_P)")

    def _state(self, t):
        """:meth:`state` at a checked time."""
        th, th_t, th_tt = self.angle(t)
        R = _rot(self.k, th)
        e = np.eye(3)[self.k]
        w, dw = th_t * e, th_tt * e
        if self.pole_motion is None:
            xP, vP, aP = self.pole, np.zeros(3), np.zeros(3)
        else:
            xP, vP, aP = (np.asarray(v, dtype=float) for v in self.pole_motion(t))
        p = xP - R @ self.pole  # x = x_P + R (alpha - alpha_P)
        # material origin: x0 = p; v0 = v_P + omega x (p - x_P)
        v0 = vP + cross(w, p - xP)
        a0 = aP + cross(dw, p - xP) + cross(w, cross(w, p - xP))
        return R, p, w, v0, dw, a0


class Translation(_Rigid):
    """A translation ``x = alpha + s(t)`` with ``s`` a callable ``t -> (s, s_t, s_tt)``."""

    def __init__(self, law):
        if not callable(law):
            raise ShapeError("a Translation needs a callable t -> (s, s_t, s_tt)")
        self.law = _law(law, "Translation's law", 3, "(s, s_t, s_tt)")

    def _state(self, t):
        """:meth:`state` at a checked time."""
        s, v, a = self.law(t)
        return np.eye(3), s, np.zeros(3), v, np.zeros(3), a


class Composite(_Rigid):
    """The superposition (7): ``x = outer(inner(alpha, t), t)``.

    Rotations and translations compose (``R = R_o R_i``, ``p = R_o p_i + p_o``) and
    velocities add geometrically: ``omega = omega_o + R_o omega_i`` (observer frame).
    """

    def __init__(self, outer, inner):
        for m, what in ((outer, "outer"), (inner, "inner")):
            if not isinstance(m, _Rigid):
                raise ShapeError(f"the {what} motion must be a mbcourse.kinetic motion "
                                 f"(PlaneRotation, Translation, compose(...)), got {m!r}")
        self.outer, self.inner = outer, inner

    def _state(self, t):
        """:meth:`state` at a checked time."""
        Ro, po, wo, vo, dwo, ao = self.outer._state(t)
        Ri, pi, wi, vi, dwi, ai = self.inner._state(t)
        R = Ro @ Ri
        p = Ro @ pi + po
        w_rel = Ro @ wi
        w = wo + w_rel
        dw = dwo + Ro @ dwi + cross(wo, w_rel)
        # the material origin sits at x_i = p_i in the outer motion's material coordinates
        v_carry = vo + cross(wo, Ro @ pi)
        v0 = v_carry + Ro @ vi
        a_carry = ao + cross(dwo, Ro @ pi) + cross(wo, cross(wo, Ro @ pi))
        a0 = a_carry + 2.0 * cross(wo, Ro @ vi) + Ro @ ai
        return R, p, w, v0, dw, a0


def compose(*motions):
    """Superpose motions, innermost first: ``compose(m1, m2, m3)`` is
    ``m3(m2(m1(alpha)))`` (7).

    Examples
    --------
    >>> import numpy as np
    >>> a = PlaneRotation("z", angle=np.pi / 2)
    >>> b = PlaneRotation("x", angle=np.pi / 2)
    >>> compose(a, b).position([1.0, 0.0, 0.0], 0.0).round(12).tolist()   # x -> y -> z
    [0.0, 0.0, 1.0]
    """
    if not motions:
        raise ShapeError("compose needs at least one motion")
    out = motions[0]
    for m in motions[1:]:
        out = Composite(m, out)
    return out


# ------------------------------------------------------------------ bodies
class _Body:
    def quadrature(self):
        """Material points ``(K, 3)`` and masses ``(K,)`` integrating polynomials of degree
        <= 3 in ``alpha`` exactly against the body's mass distribution."""
        raise NotImplementedError  # pragma: no cover


def _gauss(n):
    x, w = np.polynomial.legendre.leggauss(n)
    return x, w


class Box(_Body):
    """A box: ``mass``, edge lengths ``size`` along its own axes, centre ``centre`` and axes
    ``orientation`` (material frame); uniform, or with a polynomial ``density``.

    ``density(u)`` takes the box's own coordinates ``u`` (..., 3) (from its centre, along its
    edges) and returns a relative density (scaled to ``mass``); ``degree`` is its
    polynomial degree: the Gauss rule then has ``degree // 2 + 2`` points per axis and
    integrates ``density * |v|^2`` exactly.

    Examples
    --------
    >>> m, c, J = mass_properties(Box(12.0, (1.0, 2.0, 3.0)))
    >>> J.round(12).tolist()[0]                      # m (b^2 + c^2) / 12
    [13.0, 0.0, 0.0]
    """

    def __init__(self, mass, size, centre=(0.0, 0.0, 0.0), orientation=None, density=None,
                 degree=0):
        if density is not None and not callable(density):
            raise ShapeError("density must be a callable of the box's own coordinates")
        if isinstance(degree, bool) or not isinstance(degree, (int, np.integer)) or degree < 0:
            raise ShapeError(f"degree must be a non-negative integer, got {degree!r}")
        self.density, self.degree = density, int(degree)
        self.mass = _number(mass, "mass")
        if self.mass <= 0:
            raise ModelError(f"a body's mass must be positive, got {mass!r}")
        self.size = _finite(size, "size", (3,))
        if np.any(self.size < 0):
            raise ModelError(f"a box's edge lengths must be >= 0, got {size!r}")
        self.centre = _finite(centre, "centre", (3,))
        self.orientation = np.eye(3) if orientation is None else \
            _finite(orientation, "orientation", (3, 3))

    def quadrature(self):
        x, w = _gauss(self.degree // 2 + 2)
        g = np.stack(np.meshgrid(x, x, x, indexing="ij"), -1).reshape(-1, 3)
        wg = np.prod(np.stack(np.meshgrid(w, w, w, indexing="ij"), -1).reshape(-1, 3), axis=1)
        local = g * self.size / 2
        if self.density is not None:
            rho = _finite(self.density(local), "density(u)")
            if rho.shape != wg.shape or np.any(rho < 0) or not np.any(rho > 0):
                raise ShapeError("density(u) must return one non-negative value per point, "
                                 "not all zero")
            wg = wg * rho
        pts = local @ self.orientation.T + self.centre
        return pts, self.mass * wg / wg.sum()


class Cylinder(_Body):
    """A uniform solid cylinder: ``mass``, ``radius``, ``length`` along ``axis``, centre
    ``centre`` (material frame)."""

    def __init__(self, mass, radius, length, axis="z", centre=(0.0, 0.0, 0.0)):
        self.mass = _number(mass, "mass")
        radius, length = _number(radius, "radius"), _number(length, "length")
        if self.mass <= 0 or radius < 0 or length < 0:
            raise ModelError("a cylinder needs a positive mass and non-negative radius and "
                             f"length, got {mass!r}, {radius!r}, {length!r}")
        self.radius, self.length, self.k = radius, length, _axis(axis)
        self.centre = _finite(centre, "centre", (3,))

    def quadrature(self):
        # r with weight r dr on [0, R]: 2-point Gauss in r^2; angle: 6 equal steps
        xs, ws = _gauss(2)
        r = self.radius * np.sqrt((xs + 1) / 2)
        phi = np.arange(6) * np.pi / 3
        zs, wz = _gauss(2)
        pts, wts = [], []
        for ri, wr in zip(r, ws):
            for ph in phi:
                for zi, wzi in zip(zs, wz):
                    local = np.array([ri * np.cos(ph), ri * np.sin(ph), zi * self.length / 2])
                    pts.append(np.roll(local, self.k - 2))
                    wts.append(wr * wzi)
        wts = np.array(wts)
        return np.array(pts) + self.centre, self.mass * wts / wts.sum()


class PointCloud(_Body):
    """Point masses ``masses`` (K,) at material points ``points`` (K, 3)."""

    def __init__(self, masses, points):
        self.masses = _finite(masses, "masses")
        self.points = _finite(points, "points")
        if self.points.ndim != 2 or self.points.shape[1] != 3 or \
                self.points.shape[0] != self.masses.shape[0] or self.masses.ndim != 1:
            raise ShapeError(f"points must be (K, 3) and masses (K,), got {self.points.shape} "
                             f"and {self.masses.shape}")
        if np.any(self.masses <= 0):
            raise ModelError("point masses must be positive")

    def quadrature(self):
        return self.points.copy(), self.masses.copy()


# ------------------------------------------------------------------ definitions
def kinetic_energy(motion, body, t):
    """The definition (10), ``1/2 int |v|^2 dm``, by quadrature over the body.

    Examples
    --------
    A unit point mass on a unit radius turning at 2 rad/s: ``E = 2``.

    >>> kinetic_energy(PlaneRotation("z", angle=uniform(0.0, 2.0)),
    ...                PointCloud([1.0], [[1.0, 0.0, 0.0]]), 0.3).round(12)
    np.float64(2.0)
    """
    _motion(motion), _body(body), _time(t)
    pts, w = body.quadrature()
    v = motion._velocity(pts, t)
    return 0.5 * np.sum(w * np.sum(v * v, axis=-1))


def moments(points, masses, pole):
    """Axial moments, products and polar moments about ``pole`` (22), (27), (29).

    Returns
    -------
    dict
        ``I`` (3,) with ``I[k] = int (x_k - x_Pk)^2 dm`` (the paper's ``I^z_y`` for k = y
        ...), ``products`` ``{"xy", "yz", "zx"}`` ``int (x_i - x_Pi)(x_j - x_Pj) dm`` and
        ``J`` (3, 3), the inertia tensor about the pole (polar moments ``J^x = I_y + I_z``
        ... on the diagonal, minus the products off it).
    """
    points = _finite(points, "points")
    if points.ndim != 2 or points.shape[1] != 3:
        raise ShapeError(f"points must have shape (K, 3), got {points.shape}")
    w = _finite(masses, "masses")
    if w.shape != points.shape[:1]:
        raise ShapeError(f"masses must have shape ({points.shape[0]},), one per point, got "
                         f"{w.shape}")
    d = points - _finite(pole, "pole", (3,))
    second = np.einsum("k,ki,kj->ij", w, d, d)
    J = np.trace(second) * np.eye(3) - second
    return {"I": np.diag(second).copy(),
            "products": {"xy": second[0, 1], "yz": second[1, 2], "zx": second[2, 0]},
            "J": J}


def mass_properties(body):
    """``(m, C, J_C)``: mass, centre of mass and central inertia tensor (material frame)."""
    pts, w = _body(body).quadrature()
    m = w.sum()
    C = w @ pts / m
    return m, C, moments(pts, w, C)["J"]


# ------------------------------------------------------------------ closed forms
def energy_planar(m, v_P, omega_z, J_Pz, r_PC):
    """Planar motion about a moving pole, Alyushin (15):
    ``1/2 m v_P^2 + 1/2 omega^2 J_P - omega m (v_Px r_PCy - v_Py r_PCx)``."""
    _finite(m, "m", ()), _finite(omega_z, "omega_z", ()), _finite(J_Pz, "J_Pz", ())
    v_P, r_PC = _vector(v_P, "v_P", (2, 3)), _vector(r_PC, "r_PC", (2, 3))
    return (0.5 * m * (v_P[0] ** 2 + v_P[1] ** 2) + 0.5 * omega_z ** 2 * J_Pz
            - omega_z * m * (v_P[0] * r_PC[1] - v_P[1] * r_PC[0]))


def energy_about_pole(omega, J_P):
    """Rotation about a fixed pole, Alyushin (26)/(30): ``1/2 omega^T J_P omega`` written
    with the polar moments ``J^x, J^y, J^z`` and the products ``I_xy, I_yz, I_zx``. Correct
    only with the **current** inertia about the pole and observer-frame ``omega`` (E31,
    E33)."""
    w = _finite(omega, "omega", (3,))
    J = _finite(J_P, "J_P", (3, 3))
    polar = 0.5 * (J[0, 0] * w[0] ** 2 + J[1, 1] * w[1] ** 2 + J[2, 2] * w[2] ** 2)
    products = w[1] * w[2] * (-J[1, 2]) + w[0] * w[2] * (-J[0, 2]) + w[1] * w[0] * (-J[0, 1])
    return polar - products


def energy_two_axes(theta_y_t, theta_z_t, J_Py, J_Pz, I_yz):
    """Two rotation axes (34): ``1/2 th_z'^2 J^z + 1/2 th_y'^2 J^y - th_y' th_z' I_yz``."""
    for value, what in ((theta_y_t, "theta_y_t"), (theta_z_t, "theta_z_t"), (J_Py, "J_Py"),
                        (J_Pz, "J_Pz"), (I_yz, "I_yz")):
        _finite(value, what)
    return 0.5 * theta_z_t ** 2 * J_Pz + 0.5 * theta_y_t ** 2 * J_Py - theta_y_t * theta_z_t * I_yz


def energy_one_axis(theta_t, J_P):
    """One rotation axis (35): ``1/2 theta'^2 J_P`` (polar moment about that axis)."""
    _finite(theta_t, "theta_t"), _finite(J_P, "J_P")
    return 0.5 * theta_t ** 2 * J_P


def energy_koenig(m, v_C, omega, J_C):
    """Translation with rotation, Alyushin (40) (König's theorem (1)):
    ``1/2 m v_C^2 + 1/2 omega^T J_C omega`` with the current central inertia."""
    _finite(m, "m", ())
    v = _finite(v_C, "v_C", (3,))
    return 0.5 * m * v @ v + energy_about_pole(omega, J_C)


def energy_eq39(m, v_P, omega, J_P):
    """The printed (39), ``1/2 m v_P^2 + (30)`` about a moving pole ``P`` — wrong unless
    ``P = C``, ``v_P = 0`` or the cross term vanishes (erratum E32)."""
    _finite(m, "m", ())
    v = _finite(v_P, "v_P", (3,))
    return 0.5 * m * v @ v + energy_about_pole(omega, J_P)


def cross_term(m, v_P, omega, r_PC):
    """The term (39) misses (E32): ``m v_P . (omega x r_PC)``; the true energy is
    ``energy_eq39 + cross_term``."""
    _finite(m, "m", ())
    v_P, omega = _finite(v_P, "v_P", (3,)), _finite(omega, "omega", (3,))
    return m * np.dot(v_P, np.cross(omega, _finite(r_PC, "r_PC", (3,))))


def product_after_rotation(I_a, I_b, I_ab, dtheta):
    """The product of inertia after a turn ``dtheta`` about the third axis, Alyushin (33):
    ``1/2 sin(2 dtheta) (I_a - I_b) + cos(2 dtheta) I_ab`` (``I_a``, ``I_b`` the initial
    axial second moments ``int alpha^2 dm``, ``int beta^2 dm``; ``I_ab`` the initial
    product)."""
    for value, what in ((I_a, "I_a"), (I_b, "I_b"), (I_ab, "I_ab"), (dtheta, "dtheta")):
        _finite(value, what)
    return 0.5 * np.sin(2 * dtheta) * (I_a - I_b) + np.cos(2 * dtheta) * I_ab


def product_amplitude(I_a, I_b, I_ab):
    """The amplitude of (33) over a turn (E36): ``sqrt((I_a - I_b)^2 / 4 + I_ab^2)``, not
    the two values the paper's conclusion names."""
    for value, what in ((I_a, "I_a"), (I_b, "I_b"), (I_ab, "I_ab")):
        _finite(value, what)
    return np.sqrt(0.25 * (I_a - I_b) ** 2 + I_ab ** 2)


# ------------------------------------------------------------------ the robot of Fig. 1
def alyushin_motions(H, L1, lead, waist, shoulder, screw):
    """The motion laws (41)–(47) of Alyushin's robot in the material description.

    Parameters
    ----------
    H, L1, lead : float
        Height of ``A = (0, 0, H)``, arm length to ``B = (L1, 0, H)`` and the screw's lead
        (as in :func:`mbcourse.models.alyushin_robot`).
    waist, shoulder, screw : callables ``t -> (theta, theta_t, theta_tt)``
        The joint laws: ``Delta theta_z`` of link 1, ``Delta theta_y`` of link 2 (about
        link 1's ``y`` axis) and ``Delta theta_x`` of link 3 (about link 2's ``x`` axis).

    Returns
    -------
    link1, link2, link3 : motions
        Link 1 turns about ``z`` through the origin (41); link 2 turns about ``y`` through
        ``A`` and is carried by link 1 (42), (44); link 3 turns about ``x`` through ``B``
        while ``B`` advances by ``u = h Delta theta_x / (2 pi)`` (43), carried by link 2
        (46). The load moves with link 3.

    Examples
    --------
    >>> import numpy as np
    >>> l1, l2, l3 = alyushin_motions(1.0, 0.8, 0.1, uniform(0.0), uniform(0.0),
    ...                               uniform(2 * np.pi))
    >>> l3.position([0.8, 0.0, 1.0], 0.0).round(12).tolist()   # B advanced by one lead
    [0.9, 0.0, 1.0]
    """
    H, L1, lead = _number(H, "H"), _number(L1, "L1"), _number(lead, "lead")
    A = np.array([0.0, 0.0, H])
    B = np.array([L1, 0.0, H])
    k = lead / (2 * np.pi)
    waist, shoulder, screw = (_law(law, name) for law, name in
                              ((waist, "waist"), (shoulder, "shoulder"), (screw, "screw")))
    ex = np.array([1.0, 0.0, 0.0])

    def advance(t):
        th, th_t, th_tt = screw(t)
        return B + k * th * ex, k * th_t * ex, k * th_tt * ex

    link1 = PlaneRotation("z", (0.0, 0.0, 0.0), waist)
    turn2 = PlaneRotation("y", A, shoulder)
    turn3 = PlaneRotation("x", B, screw, pole_motion=advance)
    return link1, compose(turn2, link1), compose(turn3, turn2, link1)


# ------------------------------------------------------------------ sympy forms
def sympy_plane_rotation(axis, x, theta, pole, pole_now=None):
    """A plane rotation (2)–(6), (8)–(9) as sympy: the current position of the points ``x``.

    Parameters
    ----------
    axis : {"x", "y", "z"}
    x : sympy Matrix (3, 1)
        The points' coordinates before this motion (material symbols, or an inner
        motion's current coordinates: the superposition (7) is this substitution).
    theta : sympy expression
        The angle turned (e.g. ``sympy.Function("theta_z")(t)``).
    pole : sequence of 3 sympy expressions
        The pole's coordinates before the motion.
    pole_now : sequence of 3 sympy expressions, optional
        The pole's current position (a translating pole, (8)–(9)); default ``pole``.

    Returns
    -------
    sympy Matrix (3, 1)

    Examples
    --------
    >>> import sympy as sp
    >>> a, b, c, th = sp.symbols("alpha beta gamma theta")
    >>> sympy_plane_rotation("z", sp.Matrix([a, b, c]), th, (0, 0, 0)).T
    Matrix([[alpha*cos(theta) - beta*sin(theta), alpha*sin(theta) + beta*cos(theta), gamma]])
    """
    import sympy as sp

    k = _axis(axis)
    for value, what in ((x, "x"), (pole, "pole"), (pole_now, "pole_now")):
        if value is not None and (not hasattr(value, "__len__") or len(value) != 3):
            raise ShapeError(f"{what} must be 3 coordinates (a sympy Matrix (3, 1) or a "
                             f"sequence of 3 expressions), got {value!r}")
    i, j = [(1, 2), (2, 0), (0, 1)][k]
    c, s_ = sp.cos(theta), sp.sin(theta)
    R = sp.eye(3)
    R[i, i], R[i, j], R[j, i], R[j, j] = c, -s_, s_, c
    P0 = sp.Matrix(list(pole))
    P1 = P0 if pole_now is None else sp.Matrix(list(pole_now))
    return P1 + R * (sp.Matrix(x) - P0)


def sympy_alyushin(H, L1, lead):
    """The robot's motion laws (41), (44), (46) in sympy, material symbols and joint-angle
    functions of ``t``.

    Returns
    -------
    dict
        ``t``, ``alpha`` (Matrix of the symbols alpha, beta, gamma), ``theta`` (the functions
        ``theta_z(t), theta_y(t), theta_x(t)``) and ``x`` (the three links' current
        positions, Matrices (3, 1)); their time derivatives are (45), (47).

    Examples
    --------
    >>> import sympy as sp
    >>> laws = sympy_alyushin(1, sp.Rational(4, 5), sp.Rational(1, 10))
    >>> J = laws["x"][2].jacobian(laws["alpha"])
    >>> sp.simplify(J.det())                  # no deformation
    1
    """
    import sympy as sp

    t = sp.Symbol("t", real=True)
    alpha = sp.Matrix(sp.symbols("alpha beta gamma", real=True))
    tz, ty, tx = (sp.Function(f"theta_{a}", real=True)(t) for a in "zyx")
    A = (0, 0, H)
    B = (L1, 0, H)
    u = lead * tx / (2 * sp.pi)
    x1 = sympy_plane_rotation("z", alpha, tz, (0, 0, 0))
    x2 = sympy_plane_rotation("z", sympy_plane_rotation("y", alpha, ty, A), tz, (0, 0, 0))
    inner = sympy_plane_rotation("x", alpha, tx, B, (B[0] + u, B[1], B[2]))
    x3 = sympy_plane_rotation("z", sympy_plane_rotation("y", inner, ty, A), tz, (0, 0, 0))
    return {"t": t, "alpha": alpha, "theta": (tz, ty, tx), "x": (x1, x2, x3)}
