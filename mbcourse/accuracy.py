"""Chapter 8: accuracy of manipulator chains (Eliseev & Khomenko), to second order.

A serial chain is described, as in the paper, by a sequence of **elementary motions**: motion
``i`` is a rotation (``delta_i = 1``) about, or a translation (``delta_i = 0``) along, a unit
vector ``e_i`` fixed in the frame that precedes it, by the value ``phi_i``; the value is a
joint coordinate ``q`` (``lambda_i = 1``) or a constant geometric parameter ``p``
(``lambda_i = 0``). :class:`Chain` holds that description; :meth:`Chain.from_model` builds it
from the path of a :class:`mbcourse.Model` between the ground and a body (revolute and
prismatic joints), and :func:`revolute_chain` builds the paper's example of ``n`` revolute
pairs and ``n`` links (its Fig. 2).

Errors of the values, ``dphi = lambda dq + (1 - lambda) dp`` (1), move the last frame by a
small rotation ``theta`` (``R' = exp(theta~) R`` in fixed axes) and the point ``R_m`` by
``dr``. The chain gives them

* exactly, from its own kinematics (:meth:`Chain.exact_errors`);
* to second order by the forward recurrences (4) and (7) or the backward recurrence (8)
  (:meth:`Chain.propagate`);
* in closed form (15)/(16) from the influence coefficients of first order (9) ``a_k, b_k``
  (coordinates), ``c_k, d_k`` (parameters) and of second order (10) ``a_kl, b_kl, c_kl,
  d_kl, f_kl, h_kl`` and the mixed position coefficient, which the paper leaves unnamed and
  we call ``g_kl`` (:meth:`Chain.coefficients`);
* to third order (:meth:`Chain.third_order`): position coefficients by differentiating
  ``b_kl`` (they are ``a_N1 x (a_N2 x b_N3)``), and the rotation's third-order term from the
  Baker-Campbell-Hausdorff series of the product of the motions' small rotations.

A-priori bounds (17)-(28) are :func:`bounds` (any chain, from the majorants (18)/(19)) and
:func:`revolute_bounds` (the closed forms (26)-(28) of the example); velocity and
acceleration errors (29)-(31) are :meth:`Chain.motion_errors`; Monte-Carlo comparison of the
models with the exact errors is :func:`monte_carlo`, and :func:`calibrate` identifies
parameter errors and joint offsets from measured gripper positions by Gauss-Newton steps
whose Jacobian is made of the influence coefficients.

On a Model, the contract is :func:`influence` ``-> (a, b)``, :func:`second_order` ``->
(a2, b2)`` and :func:`third_order`, all batched over configurations. ``a2`` and ``b2`` are
the symmetric second derivatives (Hessians) of ``theta`` and ``dr`` with respect to ``dq``:
``b2`` is the paper's ``b_kl``; ``a2 = (a_kl + a_lk) / 2`` (the paper's ``a_kl`` is not
symmetric; the quadratic forms agree, and :meth:`Chain.coefficients` returns it as printed).

Conventions (the book's errata page, E29): the order of the finite-rotation composition is
the one of recurrence (4), with fixed-frame axes ``e_i`` at the nominal configuration and
``R' = exp(theta~) R``; the mixed ``dp dq`` term of the Taylor series has coefficient 1; the
chi^1 bound of (26) is sharp and is exceeded by about ``0.03 Delta^2`` relative.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from .errors import ModelError, ShapeError, SingularSystemError
from .spatial import axis_angle, cross, is_rotation, matrix_to_quat
from .coupling import coupled

__all__ = [
    "ROTATION", "TRANSLATION", "Motion", "Chain", "Coefficients", "Errors", "Bounds",
    "MotionErrors", "MonteCarlo", "Calibration", "rotation_vector", "revolute_chain",
    "chain", "influence", "second_order", "third_order", "motion_errors", "bounds",
    "revolute_bounds", "monte_carlo", "calibrate",
]

ROTATION, TRANSLATION = "rotation", "translation"
_EYE = np.eye(3)


def rotation_vector(R):
    """The rotation vector ``theta`` (axis times angle, ``|theta| <= pi``) of ``R = exp(theta~)``.

    Parameters
    ----------
    R : array_like, shape (..., 3, 3)

    Examples
    --------
    >>> import numpy as np
    >>> from mbcourse.spatial import axis_angle
    >>> rotation_vector(axis_angle([0.0, 0.6, 0.8], 0.5)).round(12).tolist()
    [0.0, 0.3, 0.4]
    """
    R = _as_float(R, "R", "(3, 3) or (..., 3, 3)")
    if R.shape[-2:] != (3, 3) or not is_rotation(R, tol=1e-6):
        raise ShapeError(f"R must be a rotation matrix (orthonormal, det +1), shape (..., 3, 3); "
                         f"got {'shape ' + str(R.shape) if R.shape[-2:] != (3, 3) else R.tolist()}")
    return _rotation_vector(R)


def _rotation_vector(R):
    """:func:`rotation_vector` of checked rotation matrices."""
    quat = matrix_to_quat(R)
    w, v = quat[..., 0], quat[..., 1:]
    s = np.linalg.norm(v, axis=-1)
    angle = 2.0 * np.arctan2(s, w)
    # angle / s = 2 atan(s / w) / s = (2 / w) (1 - (s / w)^2 / 3 + ...) for tiny rotations
    small = s < 1e-6
    w_safe = np.where(small, w, 1.0)
    factor = np.where(small, 2.0 / w_safe * (1.0 - (s / w_safe) ** 2 / 3.0),
                      angle / np.where(small, 1.0, s))
    return factor[..., None] * v


# ---------------------------------------------------------------- the description
@dataclass(frozen=True)
class Motion:
    """One elementary motion: a rotation about, or translation along, ``axis`` (unit,
    components in the preceding frame) by a joint coordinate ``q[q]`` or a constant ``p``.

    Exactly one of ``q`` (the coordinate's index, ``lambda = 1``) and ``p`` (the nominal
    value of a geometric parameter, ``lambda = 0``) is given.

    Examples
    --------
    >>> Motion("rotation", (0, 0, 1), q=0)
    Motion('rotation', axis=[0.0, 0.0, 1.0], q=0)
    >>> Motion("translation", (1, 0, 0), p=0.5, name="l1")
    Motion('translation', axis=[1.0, 0.0, 0.0], p=0.5, name='l1')
    """

    kind: str
    axis: tuple
    q: int | None = None
    p: float | None = None
    name: str | None = None

    def __post_init__(self):
        label = f"motion {self.name!r}" if self.name else "a motion"
        if self.kind not in (ROTATION, TRANSLATION):
            raise ModelError(f"{label}: kind must be 'rotation' or 'translation', "
                             f"got {self.kind!r}")
        try:
            axis = np.asarray(self.axis, dtype=float)
        except (TypeError, ValueError):
            raise ShapeError(f"{label}: axis must be 3 numbers, got {self.axis!r}") from None
        if axis.shape != (3,) or not np.all(np.isfinite(axis)):
            raise ShapeError(f"{label}: axis must be 3 finite numbers, got {self.axis!r}")
        norm = float(np.linalg.norm(axis))
        if norm < 1e-12:
            raise ModelError(f"{label}: the axis must be a nonzero vector")
        object.__setattr__(self, "axis", tuple(float(c) + 0.0 for c in axis / norm))
        if (self.q is None) == (self.p is None):
            raise ModelError(f"{label}: give exactly one of q= (a coordinate index) and "
                             "p= (a parameter's nominal value)")
        if self.q is not None and (isinstance(self.q, bool) or not isinstance(
                self.q, numbers.Integral) or self.q < 0):
            raise ModelError(f"{label}: q must be a coordinate index >= 0, got {self.q!r}")
        if self.p is not None:
            if isinstance(self.p, bool) or not isinstance(self.p, numbers.Real) \
                    or not np.isfinite(self.p):
                raise ModelError(f"{label}: p must be a finite number, got {self.p!r}")
            object.__setattr__(self, "p", float(self.p))

    @property
    def delta(self):
        """1 for a rotation, 0 for a translation."""
        return 1 if self.kind == ROTATION else 0

    def __repr__(self):
        value = f"q={self.q}" if self.q is not None else f"p={self.p:g}"
        name = f", name={self.name!r}" if self.name else ""
        return f"Motion({self.kind!r}, axis={list(self.axis)}, {value}{name})"


@dataclass(frozen=True)
class Coefficients:
    """Influence coefficients (9) and (10) at one configuration (or a batch).

    First order, shape (..., 3, nq) or (..., 3, np): ``a``, ``b`` for the coordinates, ``c``,
    ``d`` for the parameters. Second order, (..., 3, K, L), index ``[..., :, k, l]`` as printed
    in (10): ``a_kl`` (q, q), ``b_kl`` (q, q), ``c_kl`` (p, p), ``d_kl`` (p, p), ``f_kl``
    (p_k, q_l), ``h_kl`` (q_k, p_l), ``g_kl`` (p_k, q_l; the mixed position coefficient).
    """

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    d: np.ndarray
    a_kl: np.ndarray
    b_kl: np.ndarray
    c_kl: np.ndarray
    d_kl: np.ndarray
    f_kl: np.ndarray
    h_kl: np.ndarray
    g_kl: np.ndarray


@dataclass(frozen=True)
class Errors:
    """First- and second-order parts of the orientation error ``theta`` and of the point's
    displacement ``dr`` (fixed axes), each of shape (..., 3)."""

    theta1: np.ndarray
    theta2: np.ndarray
    dr1: np.ndarray
    dr2: np.ndarray

    @property
    def theta(self):
        """``theta1 + theta2``."""
        return self.theta1 + self.theta2

    @property
    def dr(self):
        """``dr1 + dr2``."""
        return self.dr1 + self.dr2


def _as_float(value, what, shape_text):
    """``value`` as a finite float array; a ShapeError naming ``what`` otherwise."""
    try:
        complex_given = np.iscomplexobj(value)
        arr = None if complex_given else np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ShapeError(f"{what} must be an array of shape {shape_text}, got {value!r}") \
            from None
    if complex_given:
        raise ShapeError(f"{what} must be real numbers, got a complex array")
    if not np.all(np.isfinite(arr)):
        raise ShapeError(f"{what} must be finite, got {value!r}")
    return arr


def _vector(value, what, size, names=None):
    """An array of shape (..., size) (a batch allowed), checked."""
    arr = _as_float(value, what, f"({size},) or (..., {size})")
    if arr.ndim == 0 or arr.shape[-1] != size:
        named = f" ({', '.join(names)})" if names else ""
        raise ShapeError(f"{what} must have shape ({size},) or (..., {size}){named}, "
                         f"got shape {arr.shape}")
    return arr


class Chain:
    """The elementary-motion description of a serial chain (Eliseev & Khomenko, section 1).

    Parameters
    ----------
    motions : sequence of :class:`Motion`
        From the base outward. Each coordinate index appears at most once; the parameters
        are numbered in the order they appear (the paper's ``mu``).
    point : array_like, shape (3,)
        The point ``R_m``: its constant coordinates ``O_m R_m`` in the last frame.
    nq : int, optional
        Length of ``q`` (default: one more than the largest coordinate index used).
    q_names : sequence of str, optional
        Names of the coordinates (default ``q0, q1, ...``).
    base : (R0, r0), optional
        Orientation and position of the frame ``s_0`` in fixed axes (default: identity, 0).

    Examples
    --------
    A planar two-link arm, ``q = (q0, q1)``, links of 1.0 and 0.5 along x:

    >>> import numpy as np
    >>> arm = Chain([Motion("rotation", (0, 0, 1), q=0), Motion("translation", (1, 0, 0), p=1.0),
    ...              Motion("rotation", (0, 0, 1), q=1), Motion("translation", (1, 0, 0), p=0.5)])
    >>> arm
    Chain(4 motions, nq=2, np=2, point=[0.0, 0.0, 0.0])
    >>> R, r = arm.pose([0.0, np.pi / 2])
    >>> r.round(12).tolist()
    [1.0, 0.5, 0.0]
    >>> a, b = arm.influence([0.0, np.pi / 2])
    >>> b.round(12).tolist()              # b_k = e_k x O_k R (9)
    [[-0.5, -0.5], [1.0, 0.0], [0.0, 0.0]]
    """

    def __init__(self, motions, point=(0.0, 0.0, 0.0), *, nq=None, q_names=None, base=None):
        if isinstance(motions, (str, bytes, Motion)) or not hasattr(motions, "__iter__"):
            raise ModelError(f"motions must be a sequence of mb.accuracy.Motion, got "
                             f"{motions!r}")
        motions = tuple(motions)
        for i, m in enumerate(motions):
            if not isinstance(m, Motion):
                raise ModelError(f"motions[{i}] must be an mb.accuracy.Motion, got {m!r}")
        used = [m.q for m in motions if m.q is not None]
        if len(set(used)) != len(used):
            twice = sorted({k for k in used if used.count(k) > 1})
            raise ModelError(f"coordinates {twice} drive more than one elementary motion; each "
                             "coordinate moves one motion (the paper's nu_k)")
        if nq is None:
            nq = max(used) + 1 if used else 0
        if isinstance(nq, bool) or not isinstance(nq, numbers.Integral) or nq < 0 \
                or (used and max(used) >= nq):
            raise ModelError(f"nq must be an integer larger than every coordinate index "
                             f"{sorted(used)}, got {nq!r}")
        self.motions = motions
        self.nq = int(nq)
        self.point = _vector(point, "point", 3)
        if self.point.shape != (3,):
            raise ShapeError(f"point must have shape (3,), got {self.point.shape}")
        M = len(motions)
        self.delta = np.array([m.delta for m in motions], dtype=float)
        self.lam = np.array([m.q is not None for m in motions], dtype=float)
        self.axes = np.array([m.axis for m in motions], dtype=float).reshape(M, 3)
        self.nu = np.full(self.nq, M, dtype=int)        # motion of q_k (M: none)
        mu = []
        for i, m in enumerate(motions):
            if m.q is not None:
                self.nu[m.q] = i
            else:
                mu.append(i)
        self.mu = np.array(mu, dtype=int)               # motion of p_k
        self.p = np.array([motions[i].p for i in mu], dtype=float)
        self.p_names = tuple(motions[i].name or f"p{k}" for k, i in enumerate(mu))
        if q_names is None:
            q_names = tuple(f"q{k}" for k in range(self.nq))
        if len(q_names) != self.nq:
            raise ModelError(f"q_names must name the {self.nq} coordinates, got {q_names!r}")
        self.q_names = tuple(q_names)
        if base is None:
            base = (_EYE, np.zeros(3))
        self.base = (_as_float(base[0], "base rotation", "(3, 3)").reshape(3, 3),
                     _vector(base[1], "base position", 3).reshape(3))
        for arr in (self.delta, self.lam, self.axes, self.nu, self.mu, self.p, self.point):
            arr.flags.writeable = False

    def __repr__(self):
        return (f"Chain({len(self.motions)} motions, nq={self.nq}, np={self.n_p}, "
                f"point={self.point.tolist()})")

    @property
    def n_p(self):
        """Number of geometric parameters."""
        return len(self.mu)

    # -- constructors --------------------------------------------------------------
    @classmethod
    def from_model(cls, model, body, point=(0.0, 0.0, 0.0), *, t=0.0):
        """The chain of motions from the ground to ``body`` of a tree Model.

        Every joint on the path must be revolute, prismatic or fixed (a joint walked from
        child to parent moves about, or along, the reversed axis; a fixed joint gives
        constant motions only). Constant offsets between joints
        become one translation each (parameter ``'<body>.link'``, nominal value its length;
        a zero offset gives no parameter), a joint's constant ``orientation`` one rotation
        (``'<joint>.orientation'``, nominal value its angle). The point is in ``body`` axes,
        from its centre of mass. The coordinates are the Model's (``nq = model.nq``); joints
        off the path have zero coefficients.

        Examples
        --------
        >>> import mbcourse as mb
        >>> m = mb.models.double_pendulum()
        >>> ch = Chain.from_model(m, "rod2", point=(0.5, 0.0, 0.0))
        >>> ch.p_names, ch.p.round(12).tolist()
        (('rod1.link', 'rod2.link'), [1.0, 0.5])
        """
        return _chain_from_model(model, body, point, t)

    def to_model(self, mass=1.0, gravity=(0.0, 0.0, 0.0)):
        """A Model with one body per coordinate (at the frame of its motion), so that every
        formulation of the course runs on this chain; the point stays with the chain.

        The last body's frame is the frame of the last coordinate; the constant motions after
        it go to :attr:`point`'s side: use :meth:`Chain.from_model` on the result with
        ``point=`` the returned ``tip`` to recover the same point.

        Returns
        -------
        model : Model
        tip : ndarray, shape (3,)
            The chain's point in the last body's axes.
        """
        from .model import Model

        if self.nq == 0 or np.any(self.nu == len(self.motions)):
            raise ModelError("to_model needs every coordinate to move a motion")
        if list(self.nu) != sorted(self.nu):
            raise ModelError("to_model needs the coordinates numbered from the base outward")
        m = _as_float(mass, "mass", "()")
        if m.ndim != 0 or not m > 0:
            raise ModelError(f"mass must be a positive number, got {mass!r}")
        mass = float(m)
        model = Model(gravity=gravity)
        R0, r0 = self.base
        if not np.allclose(R0, _EYE) or np.any(r0 != 0):
            raise ModelError("to_model needs a chain whose base frame is the fixed frame")
        C, t = _EYE, np.zeros(3)      # constant rotation and translation since the last joint
        parent = "ground"
        inertia = np.diag([0.1, 0.1, 0.1]) * mass
        for i, m in enumerate(self.motions):
            e = np.asarray(m.axis)
            if m.q is None:
                if not m.delta:
                    t = t + C @ e * m.p
                else:
                    C = C @ axis_angle(e, m.p)
                continue
            name = f"body{m.q + 1}"
            model.add_body(name, mass, inertia)
            kind = "revolute" if m.delta else "prismatic"
            model.add_joint(self.q_names[m.q], kind, parent, name, parent_point=t,
                            child_point=(0.0, 0.0, 0.0), axis=C @ e, orientation=C)
            parent, C, t = name, _EYE, np.zeros(3)
        tip = t + C @ self.point
        return model, tip

    # -- kinematics -----------------------------------------------------------------
    def _check(self, q, p=None):
        q = _vector(q, "q", self.nq, self.q_names)
        p = self.p if p is None else _vector(p, "p", self.n_p, self.p_names)
        return q, p

    def values(self, q, p=None):
        """The motions' values ``phi = lambda q + (1 - lambda) p``, shape (..., M).

        ``p=None`` means the nominal parameters: for the values of *errors* (1), pass
        ``dp`` explicitly (zeros when the parameters are exact).
        """
        q, p = self._check(q, p)
        batch = np.broadcast_shapes(q.shape[:-1], p.shape[:-1])
        qz = np.concatenate([q, np.zeros(q.shape[:-1] + (1,))], axis=-1)
        phi = np.zeros(batch + (len(self.motions),))
        phi[..., self.nu[self.nu < len(self.motions)]] = qz[..., np.flatnonzero(
            self.nu < len(self.motions))]
        phi[..., self.mu] = p
        return phi

    def frames(self, q, p=None):
        """Frames after each motion: ``R`` (..., M + 1, 3, 3) and origins ``O`` (..., M + 1, 3)
        in fixed axes (index 0 is ``s_0``), recurrence (2)/(5)."""
        phi = self.values(q, p)
        return self._frames(phi)

    def _frames(self, phi):
        batch, M = phi.shape[:-1], len(self.motions)
        R = np.empty(batch + (M + 1, 3, 3))
        O = np.empty(batch + (M + 1, 3))
        R[..., 0, :, :], O[..., 0, :] = self.base
        for i in range(M):
            e = self.axes[i]
            if self.delta[i]:
                R[..., i + 1, :, :] = R[..., i, :, :] @ axis_angle(e, phi[..., i])
                O[..., i + 1, :] = O[..., i, :]
            else:
                R[..., i + 1, :, :] = R[..., i, :, :]
                O[..., i + 1, :] = O[..., i, :] + (R[..., i, :, :] @ e) * phi[..., i, None]
        return R, O

    def pose(self, q, p=None, point=None):
        """Orientation ``R`` (..., 3, 3) of the last frame and position (..., 3) of the point."""
        R, O = self.frames(q, p)
        point = self.point if point is None else _vector(point, "point", 3)
        return R[..., -1, :, :], O[..., -1, :] + (R[..., -1, :, :] @ point[..., None])[..., 0]

    def exact_errors(self, q, dq, dp=None, dpoint=None, p=None):
        """The exact orientation error ``theta`` (``R' = exp(theta~) R``) and the point's
        displacement ``dr`` caused by the errors ``dq``, ``dp`` and ``dpoint`` (the point's
        own error, in last-frame axes), each (..., 3)."""
        q, p = self._check(q, p)
        dq = _vector(dq, "dq", self.nq, self.q_names)
        dp = np.zeros(self.n_p) if dp is None else _vector(dp, "dp", self.n_p, self.p_names)
        dpoint = np.zeros(3) if dpoint is None else _vector(dpoint, "dpoint", 3)
        R, r = self.pose(q, p)
        R1, r1 = self.pose(q + dq, p + dp, self.point + dpoint)
        return _rotation_vector(R1 @ np.swapaxes(R, -1, -2)), r1 - r

    # -- the influence coefficients ----------------------------------------------------
    def _motion_first(self, phi, point=None):
        """Fixed-axes ``e_i`` (..., M, 3), first-order coefficients of every motion
        ``a_i = delta e_i``, ``b_i`` (..., M, 3), the frames and the lever ``O_last R``."""
        R, O = self._frames(phi)
        point = self.point if point is None else point
        e = (R[..., :-1, :, :] @ self.axes[..., None])[..., 0]             # (..., M, 3)
        r = O[..., -1, :] + (R[..., -1, :, :] @ point[..., None])[..., 0]
        lever = r[..., None, :] - O[..., :-1, :]                            # O_i R, (..., M, 3)
        d = self.delta[:, None]
        a = d * e
        b = (1.0 - d) * e + d * cross(e, lever)
        return e, a, b, R, O, r

    def _motion_second(self, a, b):
        """Motion-level (10): ``A[..., i, j, :] = a_i x a_j`` for ``i < j``, else 0, and the
        symmetric ``B[..., i, j, :] = a_min x b_max``."""
        M = a.shape[-2]
        upper = np.triu(np.ones((M, M)), 1)[..., None]
        A = upper * cross(a[..., :, None, :], a[..., None, :, :])
        axb = cross(a[..., :, None, :], b[..., None, :, :])               # a_i x b_j
        # a_min x b_max: for i <= j it is a_i x b_j; for i > j it is a_j x b_i
        upper_eq = np.triu(np.ones((M, M)))[..., None]
        Bm = upper_eq * axb + (1.0 - upper_eq) * np.swapaxes(axb, -3, -2)
        return A, Bm

    def _columns(self, X, which, axis):
        """Select the coordinate (``'q'``) or parameter (``'p'``) columns of a motion-level
        array along ``axis`` (missing coordinates give zeros)."""
        if which == "p":
            return np.take(X, self.mu, axis=axis)
        pad = [(0, 0)] * X.ndim
        pad[axis] = (0, 1)
        return np.take(np.pad(X, pad), self.nu, axis=axis)

    def influence(self, q, p=None, point=None):
        """First-order coefficients of the coordinates (9): ``(a, b)``, each (..., 3, nq)."""
        q, p = self._check(q, p)
        point = self.point if point is None else _vector(point, "point", 3)
        _, a, b, *_ = self._motion_first(self.values(q, p), point)
        return (np.swapaxes(self._columns(a, "q", -2), -1, -2),
                np.swapaxes(self._columns(b, "q", -2), -1, -2))

    def coefficients(self, q, p=None):
        """All influence coefficients of (9) and (10) as printed (:class:`Coefficients`)."""
        q, p = self._check(q, p)
        _, a, b, *_ = self._motion_first(self.values(q, p))
        A, B = self._motion_second(a, b)

        def first(X, which):
            return np.swapaxes(self._columns(X, which, -2), -1, -2)

        def second(X, w1, w2):
            X = self._columns(self._columns(X, w1, -3), w2, -2)
            return np.moveaxis(X, -1, -3)

        return Coefficients(
            a=first(a, "q"), b=first(b, "q"), c=first(a, "p"), d=first(b, "p"),
            a_kl=second(A, "q", "q"), b_kl=second(B, "q", "q"), c_kl=second(A, "p", "p"),
            d_kl=second(B, "p", "p"), f_kl=second(A, "p", "q"), h_kl=second(A, "q", "p"),
            g_kl=second(B, "p", "q"))

    def second_order(self, q, p=None, point=None):
        """Symmetric second derivatives ``(a2, b2)``, each (..., 3, nq, nq), of ``theta`` and
        ``dr`` with respect to ``dq``: ``a2 = (a_kl + a_lk) / 2`` and ``b2 = b_kl``."""
        q, p = self._check(q, p)
        point = self.point if point is None else _vector(point, "point", 3)
        _, a, b, *_ = self._motion_first(self.values(q, p), point)
        A, B = self._motion_second(a, b)
        A = 0.5 * (A + np.swapaxes(A, -3, -2))
        sel = [np.moveaxis(self._columns(self._columns(X, "q", -3), "q", -2), -1, -3)
               for X in (A, B)]
        return sel[0], sel[1]

    @staticmethod
    def _position_third(a, b, A, B):
        """``Tb[..., i, j, s, :] = d b_ij / d phi_s`` (symmetric: the third derivative of the
        point's position), with ``b_ij = a_m x b_M`` (``m``, ``M`` the smaller and larger of
        ``i``, ``j``) and ``d a_m / d phi_s = A[s, m]`` (the axis turns with the motions
        before it: the second-order coefficient itself)."""
        M = a.shape[-2]
        idx = np.arange(M)
        mn = np.minimum(idx[:, None], idx[None, :])
        mx = np.maximum(idx[:, None], idx[None, :])
        Tb = cross(A[..., :, mn, :], b[..., None, mx, :]) + cross(a[..., None, mn, :],
                                                                 B[..., :, mx, :])
        return np.moveaxis(Tb, -4, -2)            # (..., i, j, s, 3)

    def _rotation_third(self, a):
        """``Ta``: the third-order Taylor coefficient of ``theta`` by the Baker-Campbell-
        Hausdorff series ``Z = X + Y + X x Y / 2 + (X x (X x Y) + Y x (Y x X)) / 12`` applied
        motion by motion, symmetrized so that the term is ``Ta[i, j, s] dphi_i dphi_j dphi_s
        / 6`` (..., M, M, M, 3)."""
        M = a.shape[-2]
        batch = a.shape[:-2]
        T1 = np.zeros(batch + (M, 3))             # theta: linear, quadratic, cubic parts
        T2 = np.zeros(batch + (M, M, 3))
        T3 = np.zeros(batch + (M, M, M, 3))
        for j in range(M):
            if not self.delta[j]:
                continue
            aj = a[..., j, :]
            T3[..., :, :, j, :] += 0.5 * cross(T2, aj[..., None, None, :])
            T3[..., :, :, j, :] += cross(T1[..., :, None, :],
                                         cross(T1[..., None, :, :], aj[..., None, None, :])) / 12
            T3[..., j, j, :, :] += cross(aj[..., None, :], cross(aj[..., None, :], T1)) / 12
            T2[..., :, j, :] += 0.5 * cross(T1, aj[..., None, :])
            T1[..., j, :] += aj
        perms = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
        nb = len(batch)
        return sum(np.transpose(T3, tuple(range(nb)) + tuple(nb + k for k in pm) + (nb + 3,))
                   for pm in perms)               # 6 sym(T3): the Taylor coefficient

    def third_order(self, q, p=None, point=None):
        """Third-order Taylor coefficients ``(a3, b3)``, each (..., 3, nq, nq, nq), symmetric:
        ``theta ~ a dq + a2[dq, dq] / 2 + a3[dq, dq, dq] / 6``, and likewise ``dr``.

        ``b3[k, l, s] = d b_kl / d q_s = a_N1 x (a_N2 x b_N3)`` with ``N1 <= N2 <= N3`` the
        indices ordered along the chain; ``a3`` comes from the Baker-Campbell-Hausdorff
        series, because beyond second order ``theta`` is not the integral of ``a``.
        """
        q, p = self._check(q, p)
        point = self.point if point is None else _vector(point, "point", 3)
        _, a, b, *_ = self._motion_first(self.values(q, p), point)
        A, B = self._motion_second(a, b)
        out = []
        for T in (self._rotation_third(a), self._position_third(a, b, A, B)):
            for ax in (-4, -3, -2):
                T = self._columns(T, "q", ax)
            out.append(np.moveaxis(T, -1, -4))
        return out[0], out[1]

    # -- the recurrences (4), (7), (8) ---------------------------------------------------
    def propagate(self, q, dq, dp=None, dpoint=None, p=None, *, direction="forward"):
        """Second-order errors by the recurrences: ``"forward"`` (4)/(7) or ``"backward"`` (8).

        Returns
        -------
        Errors
            ``theta1, theta2, dr1, dr2`` of the last frame and of the point.
        """
        q, p = self._check(q, p)
        dq = _vector(dq, "dq", self.nq, self.q_names)
        dp = np.zeros(self.n_p) if dp is None else _vector(dp, "dp", self.n_p, self.p_names)
        dpoint = np.zeros(3) if dpoint is None else _vector(dpoint, "dpoint", 3)
        if direction not in ("forward", "backward"):
            raise ModelError(f"direction must be 'forward' or 'backward', got {direction!r}")
        phi = self.values(q, p)
        dphi = self.values(dq, dp)
        R, O = self._frames(phi)
        e = (R[..., :-1, :, :] @ self.axes[..., None])[..., 0]
        batch = np.broadcast_shapes(e.shape[:-2], dphi.shape[:-1], dpoint.shape[:-1])
        d_last = (R[..., -1, :, :] @ dpoint[..., None])[..., 0]        # Delta O_m R_m, fixed axes
        w = (R[..., -1, :, :] @ self.point[..., None])[..., 0]          # O_m R_m, fixed axes
        z = np.zeros(batch + (3,))
        if direction == "forward":
            t1, t2, r1, r2 = z, z, z, z
            for i in range(len(self.motions)):
                u = e[..., i, :] * dphi[..., i, None]                   # dphi_i e_i
                if self.delta[i]:
                    t2 = t2 + 0.5 * cross(t1, u)                        # (4)
                    t1 = t1 + u
                else:
                    v = e[..., i, :] * phi[..., i, None]                # phi_i e_i
                    r2 = r2 + cross(t2, v) + 0.5 * cross(t1, cross(t1, v)) + cross(t1, u)
                    r1 = r1 + cross(t1, v) + u                          # (7)
            r1 = r1 + cross(t1, w) + d_last
            r2 = r2 + cross(t2, w) + 0.5 * cross(t1, cross(t1, w)) + cross(t1, d_last)
            return Errors(t1, t2, r1, r2)
        # backward (8): errors of s_m relative to s_*i, from the last motion to the first
        t1, t2 = z, z
        r1, r2 = d_last + z, z                                          # Delta O_m R_m
        lever = w + z                                                   # O_i R_m
        for i in reversed(range(len(self.motions))):
            u = e[..., i, :] * dphi[..., i, None]
            if self.delta[i]:
                ei = e[..., i, :]
                r2 = r2 + cross(u, r1) + 0.5 * dphi[..., i, None] ** 2 * cross(ei, cross(ei, lever))
                r1 = r1 + cross(u, lever)
                t2 = t2 + 0.5 * cross(u, t1)
                t1 = t1 + u
            else:
                r1 = r1 + u
                lever = lever + e[..., i, :] * phi[..., i, None]
        return Errors(t1, t2, r1, r2)

    # -- velocity and acceleration errors (29)-(31) ------------------------------------------
    def motion_errors(self, q, qd, qdd, dq, dqd=None, dqdd=None, dp=None, p=None):
        """First-order errors of the last frame's angular velocity and acceleration and of
        the point's velocity and acceleration, (31): :class:`MotionErrors`.

        ``dq``, ``dqd``, ``dqdd`` are errors of the coordinates and their rates, ``dp`` of
        the (constant) parameters.
        """
        q, p = self._check(q, p)
        qd = _vector(qd, "qd", self.nq, self.q_names)
        qdd = _vector(qdd, "qdd", self.nq, self.q_names)
        dq = _vector(dq, "dq", self.nq, self.q_names)
        dqd = np.zeros(self.nq) if dqd is None else _vector(dqd, "dqd", self.nq, self.q_names)
        dqdd = np.zeros(self.nq) if dqdd is None else _vector(dqdd, "dqdd", self.nq,
                                                               self.q_names)
        dp = np.zeros(self.n_p) if dp is None else _vector(dp, "dp", self.n_p, self.p_names)
        zero_p = np.zeros(self.n_p)
        phi = self.values(q, p)
        v, acc = self.values(qd, zero_p), self.values(qdd, zero_p)
        dphi, dv, dacc = self.values(dq, dp), self.values(dqd, zero_p), self.values(dqdd, zero_p)
        _, a, b, *_ = self._motion_first(phi)
        A, B = self._motion_second(a, b)          # A[i, j] = d a_j / d phi_i
        Ta = _derivative_of_A(a, A)               # [i, j, s] = d A_js / d phi_i
        Tb = self._position_third(a, b, A, B)     # d b_js / d phi_i (symmetric)

        def lin(X, x):          # sum_j X_j x_j
            return np.einsum("...jx,...j->...x", X, x)

        def bil(X, x, y):       # sum_ij X_ij x_i y_j
            return np.einsum("...ijx,...i,...j->...x", X, x, y)

        def tri(X, x, y, z):    # sum_ijs X_ijs x_i y_j z_s
            return np.einsum("...ijsx,...i,...j,...s->...x", X, x, y, z)

        d_omega = lin(a, dv) + bil(A, dphi, v)
        d_velocity = lin(b, dv) + bil(B, dphi, v)
        d_eps = (lin(a, dacc) + bil(A + np.swapaxes(A, -3, -2), dv, v) + bil(A, dphi, acc)
                 + tri(Ta, dphi, v, v))
        d_accel = (lin(b, dacc) + 2.0 * bil(B, dv, v) + bil(B, dphi, acc)
                   + tri(Tb, dphi, v, v))
        return MotionErrors(d_omega, d_velocity, d_eps, d_accel)


@dataclass(frozen=True)
class MotionErrors:
    """First-order errors (31) of the angular velocity ``omega`` and acceleration ``epsilon``
    of the last frame and of the point's velocity ``velocity`` and acceleration
    ``acceleration`` (fixed axes), each (..., 3)."""

    omega: np.ndarray
    velocity: np.ndarray
    epsilon: np.ndarray
    acceleration: np.ndarray


def _derivative_of_A(a, A):
    """``T[..., i, j, s, :] = d A_js / d phi_i`` with ``A_js = a_j x a_s`` (j < s) and
    ``d a_j / d phi_i = a_i x a_j`` (i < j): the paper's third-order ``a_kls`` of (31)."""
    M = a.shape[-2]
    up = np.triu(np.ones((M, M)), 1)                                    # [j, s]: j < s
    # d(a_j x a_s)/d phi_i = A[i, j] x a_s + a_j x A[i, s] (A[i, j] = d a_j / d phi_i), j < s
    T = (cross(A[..., :, :, None, :], a[..., None, None, :, :])
         + cross(a[..., None, :, None, :], A[..., :, None, :, :]))
    return up[None, :, :, None] * T


# ---------------------------------------------------------------- chains from Models
def _chain_from_model(model, body, point, t):
    from .model import Model

    if not isinstance(model, Model):
        raise ModelError(f"expected an mbcourse.Model, got {type(model).__name__}")
    model.require_tree("mb.accuracy")
    try:
        target = model.body(body)
    except (ModelError, KeyError, IndexError, TypeError):
        names = [b.name for b in model.bodies]
        raise ModelError(f"unknown body {body!r}; the model's bodies are {names} "
                         "(or their numbers 0..n)") from None
    point = _vector(point, "point", 3)
    if point.shape != (3,):
        raise ShapeError(f"point must have shape (3,) (body axes, from the centre of mass), "
                         f"got {point.shape}")
    if not isinstance(t, numbers.Real) or not np.isfinite(t):
        raise ShapeError(f"t must be a finite real number, got {t!r}")
    # the motions depend on the model (prepared data is dropped when it changes), the body
    # and, with a prescribed base motion, on t; the point is attached per call
    key = ("accuracy.chain", target.name, float(t) if model.base_motion else 0.0)
    template = model.prepared(key, lambda: _build_chain(model, target, t))
    out = object.__new__(Chain)
    out.__dict__.update(template.__dict__)
    out.point = point.copy()
    out.point.flags.writeable = False
    return out


def _build_chain(model, target, t):
    """The chain of ``target``: the motions met walking the spanning tree from the ground."""
    names = [b.name for b in model.bodies]
    walk = _ChainWalk(names)
    for joint, forward in _path_from_ground(model, names.index(target.name)):
        walk.joint(joint, forward, target.name)
    walk.translation()
    if t != 0.0 or model.base_motion:
        r, A = model.body_poses(model.neutral_q(), t)
        base = (A[0], r[0])
    else:
        base = None
    return Chain(walk.motions, nq=model.nq, q_names=model.q_names, base=base)


def _path_from_ground(model, index):
    """The spanning-tree steps ``(joint, forward)`` from the ground out to body ``index``."""
    via = {}
    for joint, forward in model.tree_traversal():
        via[joint.child if forward else joint.parent] = (joint, forward)
    path = []
    while index != 0:
        joint, forward = via[index]
        path.append((joint, forward))
        index = joint.parent if forward else joint.child
    path.reverse()
    return path


class _ChainWalk:
    """The motions met on a walk from the ground: constant offsets gathered into one
    translation per body, each joint's motion and constant orientations, in order."""

    def __init__(self, names):
        self.names = names
        self.motions = []
        self.offset = np.zeros(3)
        self.frame_name = names[0]

    def translation(self):
        """Append the offset gathered so far (when not zero) and start a new one."""
        length = float(np.linalg.norm(self.offset))
        if length > 1e-15:
            self.motions.append(Motion(TRANSLATION, self.offset / length, p=length,
                                       name=f"{self.frame_name}.link"))
        self.offset = np.zeros(3)

    def rotation(self, R, name):
        """Append the constant rotation ``R`` (when not the identity)."""
        theta = _rotation_vector(R)
        angle = float(np.linalg.norm(theta))
        if angle > 1e-15:
            self.motions.append(Motion(ROTATION, theta / angle, p=angle, name=name))

    def joint(self, joint, forward, target_name):
        """Cross one joint: into it from the inner body, its motion, out to the outer body.

        Walked from child to parent (``forward`` False), a joint's motion is about (along)
        the reversed axis and comes after its constant orientation.
        """
        described = joint.elementary_motion
        fixed = described is None and joint.nq == 0 and not joint.moves_joint_point
        if described is None and not fixed:
            raise ModelError(
                f"joint {joint.name!r} on the path to body {target_name!r} is "
                f"{joint!r}; the elementary-motion description needs revolute and "
                "prismatic joints (model a universal or spherical joint as revolute joints "
                "between massless bodies)")
        if forward:
            inner_point, outer_point, R, outer = (joint.parent_point, joint.child_point,
                                                  joint.orientation, joint.child)
        else:
            inner_point, outer_point, R, outer = (joint.child_point, joint.parent_point,
                                                  joint.orientation.T, joint.parent)
        self.offset = self.offset + inner_point
        self.translation()
        name = f"{joint.name}.orientation"
        if fixed:  # a fixed joint: constant offsets and orientation only
            self.rotation(R, name)
        elif forward:
            kind, axis = described
            self.motions.append(Motion(kind, axis, q=joint.q_slice.start))
            self.rotation(R, name)
        else:
            kind, axis = described
            self.rotation(R, name)
            self.motions.append(Motion(kind, -np.asarray(axis), q=joint.q_slice.start))
        self.frame_name, self.offset = self.names[outer], -outer_point


@coupled("refuse")
def chain(model, body, point=(0.0, 0.0, 0.0), *, t=0.0):
    """The elementary-motion :class:`Chain` from the ground to ``body`` of ``model``
    (see :meth:`Chain.from_model`)."""
    return _chain_from_model(model, body, point, t)


def _model_call(model, q, body, point, t):
    ch = _chain_from_model(model, body, point, t)
    q = model.check_q(q)
    if model.nq != model.nv:
        raise ModelError("mb.accuracy needs nq == nv (revolute and prismatic joints)")
    return ch, q


@coupled("refuse")
def influence(model, q, body, point=(0.0, 0.0, 0.0), *, t=0.0):
    """First-order influence coefficients of the joint coordinates (9) on a Model: **contract**.

    Parameters
    ----------
    model : Model
        A tree; the joints between the ground and ``body`` are revolute or prismatic.
    q : array_like, shape (nq,) or (B, nq)
    body : str or int
    point : array_like, shape (3,)
        In ``body`` axes, from its centre of mass.
    t : float
        Time (only matters with a prescribed base motion).

    Returns
    -------
    a : ndarray, shape (..., 3, nv)
        ``theta ~ a dq``, where ``R(q + dq) = exp(theta~) R(q)`` (fixed axes).
    b : ndarray, shape (..., 3, nv)
        ``dr ~ b dq`` for the point (fixed axes).

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.double_pendulum()
    >>> a, b = mb.accuracy.influence(m, [0.0, 0.0], "rod2", point=(0.5, 0.0, 0.0))
    >>> a.round(12).tolist()              # both joints turn the lower rod about z
    [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]
    >>> b.round(12).tolist()              # rods along x: the tip moves along y, 2 and 1 per rad
    [[0.0, 0.0], [2.0, 1.0], [0.0, 0.0]]
    """
    ch, q = _model_call(model, q, body, point, t)
    return ch.influence(q)


@coupled("refuse")
def second_order(model, q, body, point=(0.0, 0.0, 0.0), *, t=0.0):
    """Second-order coefficients (10) on a Model: **contract**.

    Returns
    -------
    a2, b2 : ndarray, each of shape (..., 3, nv, nv), symmetric in the last two indices
        ``theta ~ a dq + dq^T a2 dq / 2`` and ``dr ~ b dq + dq^T b2 dq / 2`` to ``O(dq^3)``.
        ``b2`` is the paper's ``b_kl = a_min x b_max``; ``a2 = (a_kl + a_lk) / 2`` where
        ``a_kl = a_k x a_l`` for ``k`` before ``l`` on the chain.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> m = mb.models.spatial_manipulator()
    >>> a2, b2 = mb.accuracy.second_order(m, [0.1, 0.2, 0.3], "forearm", (0.2, 0.0, 0.0))
    >>> a2.shape, bool(np.allclose(b2, np.swapaxes(b2, -1, -2)))
    ((3, 3, 3), True)
    """
    ch, q = _model_call(model, q, body, point, t)
    return ch.second_order(q)


@coupled("refuse")
def third_order(model, q, body, point=(0.0, 0.0, 0.0), *, t=0.0):
    """Third-order Taylor coefficients ``(a3, b3)``, each (..., 3, nv, nv, nv)
    (see :meth:`Chain.third_order`)."""
    ch, q = _model_call(model, q, body, point, t)
    return ch.third_order(q)


@coupled("refuse")
def motion_errors(model, q, qd, qdd, body, point=(0.0, 0.0, 0.0), *, dq, dqd=None, dqdd=None,
                  t=0.0):
    """Velocity and acceleration errors (31) of a body and a point of a Model
    (see :meth:`Chain.motion_errors`)."""
    ch, q = _model_call(model, q, body, point, t)
    return ch.motion_errors(q, model.check_qd(qd), model.check_qd(qdd, "qdd"),
                            model.check_qd(dq, "dq"),
                            None if dqd is None else model.check_qd(dqd, "dqd"),
                            None if dqdd is None else model.check_qd(dqdd, "dqdd"))


# ---------------------------------------------------------------- the paper's example
def revolute_chain(lengths, axes=None, links=None):
    """The paper's example (Fig. 2): ``n`` revolute pairs and ``n`` links.

    Motion ``2i - 1`` turns about ``axes[i]`` by ``q_i``; motion ``2i`` translates along
    ``links[i]`` by the link length ``l_i`` (a parameter). The gripper is at ``O_2n``.

    Parameters
    ----------
    lengths : array_like, shape (n,)
    axes, links : array_like, shape (n, 3), optional
        Unit vectors in the preceding frames (default: all axes along z, links along x, a
        planar arm).

    Examples
    --------
    >>> arm = revolute_chain([1.0, 1.0])
    >>> arm.pose([0.0, 0.0])[1].tolist()
    [2.0, 0.0, 0.0]
    """
    lengths = _as_float(lengths, "lengths", "(n,)")
    if lengths.ndim != 1 or len(lengths) == 0:
        raise ShapeError(f"lengths must have shape (n,), n >= 1, got {lengths.shape}")
    n = len(lengths)
    axes = np.tile([0.0, 0.0, 1.0], (n, 1)) if axes is None else _as_float(axes, "axes", "(n, 3)")
    links = np.tile([1.0, 0.0, 0.0], (n, 1)) if links is None else _as_float(links, "links",
                                                                              "(n, 3)")
    for name, arr in (("axes", axes), ("links", links)):
        if arr.shape != (n, 3):
            raise ShapeError(f"{name} must have shape ({n}, 3) for {n} lengths, got {arr.shape}")
    motions = []
    for i in range(n):
        motions.append(Motion(ROTATION, axes[i], q=i))
        motions.append(Motion(TRANSLATION, links[i], p=float(lengths[i]), name=f"l{i + 1}"))
    return Chain(motions, q_names=tuple(f"q{i + 1}" for i in range(n)))


# ---------------------------------------------------------------- bounds (17)-(28)
@dataclass(frozen=True)
class Bounds:
    """A-priori bounds for coordinate errors ``|dq_k| <= dq_max[k]``.

    ``alpha``, ``beta``: the majorants (18)/(19) of ``|a_k|`` and ``|b_k|``; ``theta`` and
    ``position``: (24)/(25) (for the paper's example, (28)); ``chi1`` and ``rho1``: the
    remainders of the linear model (20)-(22) ((26)); ``chi2`` and ``rho2``: of the quadratic
    model (23) ((27)).
    """

    alpha: np.ndarray
    beta: np.ndarray
    theta: float
    position: float
    chi1: float
    rho1: float
    chi2: float
    rho2: float


def bounds(chain_, dq_max, q_max=None):
    """A-priori bounds (18)-(25) of a chain's errors, independent of the configuration.

    Parameters
    ----------
    chain_ : Chain
    dq_max : float or array_like, shape (nq,)
        Largest error of each coordinate (the paper's ``Delta`` for identical drives).
    q_max : array_like, shape (nq,), optional
        Largest ``|q|`` of each coordinate, for translations by coordinates in ``beta``
        (19) (the paper's ``phi*``); required when the chain has prismatic coordinates.

    Returns
    -------
    Bounds

    Notes
    -----
    ``alpha_k = delta`` (18); ``beta_k`` (19) is ``1`` for a translation and, for a
    rotation, ``|O_m R_m|`` plus the lengths of the translations after it. Second order:
    ``|a_kl| <= alpha_k alpha_l`` (``k`` before ``l``), ``|b_kl| <= alpha_N1 beta_N2``
    (20)/(21); third order ``|b_kls| <= alpha_N1 alpha_N2 beta_N3`` (23), and for the
    rotation the BCH recurrence's magnitudes (this course's derivation: the paper's case
    rule is illegible).

    Examples
    --------
    >>> bd = bounds(revolute_chain([1.0, 1.0]), 0.1)
    >>> [round(float(x), 12) for x in (bd.theta, bd.position, bd.chi1, bd.rho1)]
    [0.2, 0.3, 0.005, 0.025]
    """
    if not isinstance(chain_, Chain):
        raise ModelError(f"bounds needs an mb.accuracy.Chain, got {type(chain_).__name__}")
    nq = chain_.nq
    dq = np.broadcast_to(_as_float(dq_max, "dq_max", f"() or ({nq},)"), (nq,)).copy() \
        if np.ndim(dq_max) == 0 else _vector(dq_max, "dq_max", nq, chain_.q_names)
    if dq.shape != (nq,) or np.any(dq < 0):
        raise ShapeError(f"dq_max must be >= 0, a number or shape ({nq},), got {dq_max!r}")
    M = len(chain_.motions)
    lam = chain_.lam.astype(bool)
    if np.any(lam & (chain_.delta == 0)):
        if q_max is None:
            raise ModelError("the chain has translations by coordinates: give q_max (largest "
                             "|q| of each coordinate) for the bound (19)")
        q_max = np.abs(_vector(q_max, "q_max", nq, chain_.q_names))
    # phi*: length bound of each motion
    phis = np.zeros(M)
    for i, m in enumerate(chain_.motions):
        phis[i] = abs(m.p) if m.q is None else (0.0 if m.delta else q_max[m.q])
    r_star = float(np.linalg.norm(chain_.point))
    reach = np.array([r_star + sum(phis[j] for j in range(i + 1, M) if not chain_.delta[j])
                      for i in range(M)])                # |O_i R| <= reach_i
    present = chain_.nu < M
    nu = np.where(present, chain_.nu, 0)
    alpha = np.where(present, chain_.delta[nu], 0.0)
    beta = np.where(present, np.where(chain_.delta[nu] == 1, reach[nu], 1.0), 0.0)
    x = dq
    order = np.argsort(np.where(present, chain_.nu, -1))
    theta = float(alpha @ x)
    position = float(beta @ x)
    # second order
    chi1 = rho1 = 0.0
    for k in range(nq):
        for l in range(nq):
            if not (present[k] and present[l]):
                continue
            first, last = (k, l) if chain_.nu[k] <= chain_.nu[l] else (l, k)
            if chain_.nu[k] < chain_.nu[l]:
                chi1 += alpha[k] * alpha[l] * x[k] * x[l]
            rho1 += alpha[first] * beta[last] * x[k] * x[l]
    chi1 *= 0.5
    rho1 *= 0.5
    # third order, position: (1/6) sum alpha_N1 alpha_N2 beta_N3 |dq|^3
    ordered = [k for k in order if present[k]]
    rho2 = 0.0
    for i1, k in enumerate(ordered):
        for i2, l in enumerate(ordered):
            for i3, s in enumerate(ordered):
                n1, n2, n3 = sorted((i1, i2, i3))
                rho2 += (alpha[ordered[n1]] * alpha[ordered[n2]] * beta[ordered[n3]]
                         * x[k] * x[l] * x[s])
    rho2 /= 6.0
    # third order, rotation: magnitudes of the BCH recurrence
    m1 = m2 = m3 = 0.0
    for k in ordered:
        y = alpha[k] * x[k]
        m3 += 0.5 * m2 * y + (m1 * m1 * y + y * y * m1) / 12.0
        m2 += 0.5 * m1 * y
        m1 += y
    return Bounds(alpha, beta, float(theta), float(position), float(chi1), float(rho1),
                  float(m3), float(rho2))


def revolute_bounds(lengths, delta):
    """The closed-form bounds (26)-(28) of the paper's example (``n`` revolute pairs, links
    ``l_k``, every ``|dq_k| <= delta``).

    Returns
    -------
    dict
        ``rho1 = delta^2/2 sum k^2 l_k``, ``chi1 = delta^2 n(n-1)/4`` (26);
        ``rho2 = delta^3/6 sum k^3 l_k``, ``chi2 = delta^3 n(n-1)(2n-1)/36`` (27);
        ``theta = n delta``, ``position = delta sum k l_k`` (28).

    Examples
    --------
    >>> {k: round(v, 12) for k, v in revolute_bounds([1.0, 1.0], 1.0).items()}
    {'theta': 2.0, 'position': 3.0, 'chi1': 0.5, 'rho1': 2.5, 'chi2': 0.166666666667, 'rho2': 1.5}
    """
    l = _as_float(lengths, "lengths", "(n,)")
    if l.ndim != 1:
        raise ShapeError(f"lengths must have shape (n,), got {l.shape}")
    n = len(l)
    k = np.arange(1, n + 1)
    d = float(delta)
    return {"theta": n * d, "position": d * float(k @ l),
            "chi1": d * d * n * (n - 1) / 4.0, "rho1": d * d / 2.0 * float(k ** 2 @ l),
            "chi2": d ** 3 * n * (n - 1) * (2 * n - 1) / 36.0,
            "rho2": d ** 3 / 6.0 * float(k ** 3 @ l)}


# ---------------------------------------------------------------- Monte-Carlo
@dataclass(frozen=True)
class MonteCarlo:
    """Random errors and the three answers to them: exact, linear model, quadratic model.

    ``dq`` (S, nq), ``dp`` (S, np); ``theta``, ``dr`` (S, 3) exact; ``theta_linear``,
    ``dr_linear`` the first-order model (9); ``theta_quadratic``, ``dr_quadratic`` the
    second-order model (15)/(16).
    """

    dq: np.ndarray
    dp: np.ndarray
    theta: np.ndarray
    dr: np.ndarray
    theta_linear: np.ndarray
    dr_linear: np.ndarray
    theta_quadratic: np.ndarray
    dr_quadratic: np.ndarray

    @property
    def chi1(self):
        """``|theta - theta_linear|`` per sample (the remainder chi^1 of (17))."""
        return np.linalg.norm(self.theta - self.theta_linear, axis=-1)

    @property
    def rho1(self):
        """``|dr - dr_linear|`` per sample (rho^1 of (17))."""
        return np.linalg.norm(self.dr - self.dr_linear, axis=-1)

    @property
    def chi2(self):
        """``|theta - theta_quadratic|`` per sample (chi^2 of (23))."""
        return np.linalg.norm(self.theta - self.theta_quadratic, axis=-1)

    @property
    def rho2(self):
        """``|dr - dr_quadratic|`` per sample (rho^2 of (23))."""
        return np.linalg.norm(self.dr - self.dr_quadratic, axis=-1)


def _bounded(value, what, size, names):
    arr = np.abs(_as_float(value, what, f"() or ({size},)"))
    if arr.ndim == 0:
        return np.full(size, float(arr))
    return _vector(arr, what, size, names)


def monte_carlo(chain_, q, dq_max, *, dp_max=0.0, samples=1000, seed=0, extreme=False):
    """Exact errors against the linear and quadratic models over random errors.

    Parameters
    ----------
    chain_ : Chain
    q : array_like, shape (nq,)
        The nominal configuration.
    dq_max, dp_max : float or array_like
        The errors are uniform in ``[-dq_max, dq_max]`` (and ``[-dp_max, dp_max]``).
    samples : int
    seed : int
        Of ``numpy.random.default_rng`` (the result is deterministic).
    extreme : bool
        Draw every error at ``+-dq_max`` (the corners, where the bounds are approached).

    Examples
    --------
    >>> import numpy as np
    >>> mc = monte_carlo(revolute_chain([1.0, 1.0]), [0.3, 0.4], 1e-2, samples=200)
    >>> bool(mc.rho2.max() < 1e-2 * mc.rho1.max())
    True
    """
    if not isinstance(chain_, Chain):
        raise ModelError(f"monte_carlo needs an mb.accuracy.Chain, got {type(chain_).__name__}")
    q, _ = chain_._check(q)
    if q.shape != (chain_.nq,):
        raise ShapeError(f"q must be one configuration of shape ({chain_.nq},), got {q.shape}")
    if isinstance(samples, bool) or not isinstance(samples, numbers.Integral) or samples < 1:
        raise ModelError(f"samples must be a positive integer, got {samples!r}")
    dqm = _bounded(dq_max, "dq_max", chain_.nq, chain_.q_names)
    dpm = _bounded(dp_max, "dp_max", chain_.n_p, chain_.p_names)
    if isinstance(seed, bool) or not isinstance(seed, (numbers.Integral, type(None))):
        raise ModelError(f"seed must be an integer (or None), got {seed!r}")
    rng = np.random.default_rng(seed)
    if extreme:
        dq = rng.choice([-1.0, 1.0], size=(samples, chain_.nq)) * dqm
        dp = rng.choice([-1.0, 1.0], size=(samples, chain_.n_p)) * dpm
    else:
        dq = rng.uniform(-1.0, 1.0, (samples, chain_.nq)) * dqm
        dp = rng.uniform(-1.0, 1.0, (samples, chain_.n_p)) * dpm
    theta, dr = chain_.exact_errors(q, dq, dp)
    _, a, b, *_ = chain_._motion_first(chain_.values(q))
    A, B = chain_._motion_second(a, b)
    dphi = chain_.values(dq, dp)
    t_lin = dphi @ a
    r_lin = dphi @ b
    t_quad = t_lin + 0.5 * np.einsum("sij,ijx->sx", dphi[:, :, None] * dphi[:, None, :], A)
    r_quad = r_lin + 0.5 * np.einsum("sij,ijx->sx", dphi[:, :, None] * dphi[:, None, :], B)
    return MonteCarlo(dq, dp, theta, dr, t_lin, r_lin, t_quad, r_quad)


# ---------------------------------------------------------------- calibration
@dataclass(frozen=True)
class Calibration:
    """Result of :func:`calibrate`.

    ``dp`` (np,) and ``dq0`` (nq,): the identified parameter errors and joint offsets (zero
    where not identified); ``names`` and ``x``: the unknowns and their values;
    ``std``: their standard deviations from the residual and ``(J^T J)^-1``; ``rms``: the
    root-mean-square position residual at the start (``rms[0]``, the nominal chain) and after
    each iteration (``iterations + 1`` entries); ``iterations``.
    """

    dp: np.ndarray
    dq0: np.ndarray
    names: tuple
    x: np.ndarray
    std: np.ndarray
    rms: tuple
    iterations: int
    singular_values: np.ndarray


def _select(requested, names, what):
    if requested is None:
        return list(range(len(names)))
    out = []
    for item in requested:
        if isinstance(item, str):
            if item not in names:
                raise ModelError(f"unknown {what} {item!r}; known: {list(names)}")
            out.append(names.index(item))
        elif isinstance(item, numbers.Integral) and not isinstance(item, bool) \
                and 0 <= item < len(names):
            out.append(int(item))
        else:
            raise ModelError(f"{what} must be names from {list(names)} or indices, got {item!r}")
    if len(set(out)) != len(out):
        raise ModelError(f"{what} lists an unknown twice: {requested!r}")
    return out


def calibrate(chain_, q, measured, *, parameters=None, offsets=(), tol=1e-12, max_iter=50):
    """Identify parameter errors and joint offsets from measured positions of the point.

    Minimizes ``sum |r(q_j + dq0, p + dp) - measured_j|^2`` by Gauss-Newton steps whose
    Jacobian is made of the influence coefficients ``d_k`` (parameters) and ``b_k``
    (offsets), evaluated at the current estimate; the residuals use the exact kinematics.

    Parameters
    ----------
    chain_ : Chain
        The nominal chain.
    q : array_like, shape (N, nq)
        The commanded (read) joint coordinates of the N measurements.
    measured : array_like, shape (N, 3)
        The measured positions of the point (fixed axes).
    parameters : sequence of str or int, optional
        The parameters to identify (default: all).
    offsets : sequence of str or int
        The coordinates whose constant offset ``dq0`` is identified (default: none).

    Raises
    ------
    SingularSystemError
        When the measurements cannot tell the unknowns apart, naming the combination.

    Examples
    --------
    >>> import numpy as np
    >>> arm = revolute_chain([1.0, 0.8])
    >>> q = np.random.default_rng(0).uniform(-2, 2, (20, 2))
    >>> true = revolute_chain([1.01, 0.79])
    >>> fit = calibrate(arm, q, true.pose(q)[1])
    >>> fit.dp.round(9).tolist(), fit.iterations <= 3
    ([0.01, -0.01], True)
    """
    if not isinstance(chain_, Chain):
        raise ModelError(f"calibrate needs an mb.accuracy.Chain, got {type(chain_).__name__}")
    q = _vector(q, "q", chain_.nq, chain_.q_names)
    if q.ndim != 2:
        raise ShapeError(f"q must have shape (N, {chain_.nq}), got {q.shape}")
    measured = _vector(measured, "measured", 3)
    if measured.shape != (q.shape[0], 3):
        raise ShapeError(f"measured must have shape ({q.shape[0]}, 3), one position per row of "
                         f"q, got {measured.shape}")
    ip = _select(parameters, list(chain_.p_names), "parameters")
    iq = _select(offsets, list(chain_.q_names), "offsets")
    names = tuple(chain_.p_names[i] for i in ip) + tuple(f"{chain_.q_names[i]}.offset"
                                                       for i in iq)
    nx = len(names)
    if nx == 0:
        raise ModelError("nothing to identify: give parameters= or offsets=")
    if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 1:
        raise ModelError(f"max_iter must be a positive integer, got {max_iter!r}")
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not tol >= 0:
        raise ModelError(f"tol must be a non-negative number, got {tol!r}")
    if 3 * q.shape[0] < nx:
        raise SingularSystemError(f"{q.shape[0]} positions give {3 * q.shape[0]} equations for "
                                  f"{nx} unknowns {list(names)}: measure more configurations")
    x = np.zeros(nx)
    rms = []
    for iteration in range(1, max_iter + 1):
        dp = np.zeros(chain_.n_p)
        dq0 = np.zeros(chain_.nq)
        dp[ip] = x[:len(ip)]
        dq0[iq] = x[len(ip):]
        phi = chain_.values(q + dq0, chain_.p + dp)
        _, a, b, _, _, r = chain_._motion_first(phi)
        res = (r - measured).reshape(-1)
        J = np.concatenate([b[:, chain_.mu[ip], :], b[:, chain_.nu[iq], :]], axis=1)
        J = np.swapaxes(J, 1, 2).reshape(-1, nx)
        U, s, Vt = np.linalg.svd(J, full_matrices=False)
        if s[-1] <= 1e-9 * s[0]:
            v = Vt[-1] * np.sign(Vt[-1][np.flatnonzero(np.abs(Vt[-1]) > 0.05)[0]])  # fix sign
            terms = [f"{c:+.2f} {n}" for c, n in zip(v, names) if abs(c) > 0.05]
            combo = " ".join(terms).lstrip("+")
            raise SingularSystemError(
                f"the measurements do not determine {list(names)}: changing them along "
                f"({combo}) leaves every measured position unchanged (the Jacobian's smallest "
                f"singular value is below 1e-9 of its largest, {s[0]:.3g}); identify fewer of "
                "these unknowns, or measure configurations (or quantities) that tell them apart")
        step = -(Vt.T @ ((U.T @ res) / s))
        rms.append(float(np.sqrt(np.mean(np.sum((r - measured) ** 2, axis=-1)))))
        x = x + step
        if np.linalg.norm(step) <= tol * (1.0 + np.linalg.norm(x)):
            break
    dp = np.zeros(chain_.n_p)
    dq0 = np.zeros(chain_.nq)
    dp[ip] = x[:len(ip)]
    dq0[iq] = x[len(ip):]
    r = chain_.pose(q + dq0, chain_.p + dp)[1]
    ssr = float(np.sum((r - measured) ** 2))
    rms.append(float(np.sqrt(ssr / q.shape[0])))
    dof = max(3 * q.shape[0] - nx, 1)
    std = np.sqrt(ssr / dof * np.sum((Vt.T / s) ** 2, axis=1))   # diag of s^2 (J^T J)^-1
    return Calibration(dp, dq0, names, x, std, tuple(rms), iteration, s)
