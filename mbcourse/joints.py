"""One description per joint kind: everything a formulation needs from a joint.

In the spirit of Featherstone's ``jcalc``, each joint class answers, for its own kind:

=======================  ==================================================================
method                   what it gives (parent axes unless said)
=======================  ==================================================================
``rotation(q)``          ``R_a(q)``, child axes to parent axes; ``G(q) = R_a^T`` (3.75)
``z(q)``                 joint vector ``z_a`` from the parent's joint point to the child's
``p(q)``, ``k(q)``       ``3 x nv`` axis matrices: ``Omega_a = p v`` (3.104), local
                         derivative of ``z_a`` is ``k v`` (3.101)
``rates(q, v)``          local time derivatives ``(dp/dt, dk/dt)`` along ``v``
``bias(q, v)``           ``(w_a, s_a) = (dp/dt v, dk/dt v)`` (3.106), (3.102)
``qdot(q, v)``           ``dq/dt`` (differs from ``v`` for quaternions)
``rows(planar)``         the elementary constraint rows of chapter 2 (Cartesian form)
``from_pose(R, z)``      the coordinates ``q`` that give a relative pose (inverse of the above)
``sympy_form(q)``        ``(R_joint, z, p)`` as sympy matrices, for :mod:`mbcourse.symbolic`
=======================  ==================================================================

and a few facts formulations ask about: ``moves_joint_point`` (``z_a`` depends on ``q``),
``revolute_axis`` (a pure rotation about a fixed axis, or ``None``), ``quaternion`` (the
slice of ``q`` holding a unit quaternion, or ``None``), ``planar`` (the joint keeps a body
in the xy plane). No code outside this module looks at a joint's ``kind``.

Joints are created by :meth:`mbcourse.Model.add_joint`, which validates the parameters.
Their geometric attributes (``parent_point``, ``child_point``, ``orientation``, ``axis``,
``axes``, ``lead``) may be reassigned afterwards: the value is validated again and every
formulation's prepared data is rebuilt on its next call. Their arrays are read-only.

Examples
--------
>>> import numpy as np, mbcourse as mb
>>> m = mb.Model()
>>> _ = m.add_body("nut", 1.0, [1.0, 1.0, 1.0])
>>> s = m.add_joint("thread", "screw", "ground", "nut", axis=(0, 0, 1), lead=0.01)
>>> s.z([2 * np.pi]).round(12)                  # one turn advances one lead
array([0.  , 0.  , 0.01])
>>> q = s.from_pose(s.rotation([7.0]), s.z([7.0]))   # turns are recovered from z
>>> q.round(12)
array([7.])
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from .errors import InconsistentStateError, ModelError, ShapeError
from .spatial import (axis_angle, cross, is_rotation, matrix_to_quat, quat_rate_matrix,
                      quat_to_matrix, skew)

__all__ = ["Joint", "Revolute", "Prismatic", "Screw", "Cylindrical", "Universal", "Spherical",
           "Free", "Fixed", "JOINT_KINDS", "QUATERNION_TOL", "perpendicular_basis", "as_array",
           "joint_parameters", "Motion", "PARENT", "FIRST_TURN", "CHILD"]

_EYE = np.eye(3)
_ZERO3 = np.zeros(3)
_ZERO3.flags.writeable = False
_EYE.flags.writeable = False

#: A quaternion of a spherical or free joint whose norm differs from 1 by at most this is
#: renormalized at every public entry; a larger deviation (or a zero quaternion) is refused.
QUATERNION_TOL = 1e-3


#: Frames a speed's axis vectors are fixed in (:class:`Motion`): the parent, the frame after
#: the joint's first turn, the child (``R_a``).
PARENT, FIRST_TURN, CHILD = 0, 1, 2


class Motion(NamedTuple):
    """A joint's own motion as data, the form the compiled kernels read (no switch per kind).

    ``R_a(q) = rot(turns[0]) rot(turns[1]) quat(q[quaternion:quaternion + 4]) orientation``
    (absent factors are the identity), ``z_a(q) = sum(vector q[index] for vector, index in
    slides)``, and speed ``j`` has the axis vectors ``p_j = F_j p`` and ``k_j = F_j k``
    (3.101), (3.104) with ``(frame, p, k) = speeds[j]`` and ``F_j`` the rotation of that
    frame relative to the parent (:data:`PARENT` E, :data:`FIRST_TURN` ``rot(turns[0])``,
    :data:`CHILD` ``R_a``). The frames turn relative to the parent with ``0``, the first
    turn's ``axis qd[speed]`` and ``Omega_a``; that rate crossed with ``p_j`` (``k_j``)
    is the local derivative of the column, so ``w_a = sum_j (W_j x p_j) qd_j`` (3.106) and
    ``s_a = sum_j (W_j x k_j) qd_j`` (3.102).

    Attributes
    ----------
    turns : tuple of (axis, q index, speed index)
        Rotations about axes fixed in the frame before them, by an angle ``q[q index]``
        whose rate is ``qd[speed index]`` (the joint's own indices).
    quaternion : int
        Where a unit quaternion ``(w, x, y, z)`` starts in the joint's ``q``, or -1.
    slides : tuple of (vector, q index)
    speeds : tuple of (frame, p, k), one per speed
    """
    turns: tuple = ()
    quaternion: int = -1
    slides: tuple = ()
    speeds: tuple = ()


# ----------------------------------------------------------------- validation
def frozen(arr):
    """A read-only float copy (the model's arrays cannot be changed in place)."""
    out = np.array(arr, dtype=float)
    out.flags.writeable = False
    return out


def as_array(value, what, expected):
    """``np.asarray(value)``, or a ShapeError naming ``what`` when ``value`` is a ragged
    list (rows of different lengths); ``expected`` says what would be valid.

    Examples
    --------
    >>> as_array([[1, 0, 0], [0, 1]], "inertia", "a 3x3 tensor")
    Traceback (most recent call last):
    ...
    mbcourse.errors.ShapeError: inertia must be a 3x3 tensor; got a ragged list [[1, 0, 0], [0, 1]] (its rows differ in length)
    """
    try:
        return np.asarray(value)
    except ValueError:
        raise ShapeError(f"{what} must be {expected}; got a ragged list {value!r} (its rows "
                         "differ in length)") from None


def vector(value, what, length=3):
    """A finite real vector of the given length, or ShapeError naming ``what``."""
    if np.iscomplexobj(as_array(value, what, f"{length} numbers")):
        raise ShapeError(f"{what} must be real numbers, got complex {value!r}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ShapeError(f"{what} must be {length} numbers, got {value!r}") from None
    if arr.shape != (length,):
        raise ShapeError(f"{what} must have shape ({length},), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ShapeError(f"{what} must be finite, got {arr.tolist()}")
    return frozen(arr)


def unit(value, what):
    """A nonzero vector normalized to unit length."""
    arr = vector(value, what)
    norm = np.linalg.norm(arr)
    if norm < 1e-12:
        raise ModelError(f"{what} must be a nonzero direction vector, got {arr.tolist()}")
    return frozen(arr / norm)


def rotation_matrix(value, what):
    """A proper rotation matrix (orthonormal, determinant +1)."""
    value = as_array(value, what, "a 3x3 rotation matrix")
    R = np.asarray(value, dtype=float) if not np.iscomplexobj(value) else None
    if R is None or R.shape != (3, 3) or not is_rotation(R, 1e-9):
        raise ModelError(f"{what} must be a 3x3 rotation matrix (orthonormal, determinant +1)")
    return frozen(R)


def joint_parameters(cls, name, **given):
    """The kind-specific parameters (``axis``, ``axes``, ``lead``) a joint class ``cls``
    takes, from those ``given`` to ``Model.add_joint``: a missing one or one the kind does
    not take is a ModelError naming the joint and what would be valid."""
    extra = {}
    for key, value in given.items():
        if key in cls._PARAMETERS:
            if value is None:
                example = {"axis": "axis=(x, y, z)", "axes": "axes=(axis1, axis2)",
                           "lead": "a finite nonzero lead= (advance per turn)"}[key]
                raise ModelError(f"joint {name!r} ({cls.kind}) needs {example}")
            extra[key] = value
        elif value is not None:
            owners = {"axis": "revolute, prismatic, screw and cylindrical", "axes": "universal",
                      "lead": "screw"}[key]
            raise ModelError(f"joint {name!r}: only {owners} joints take {key}= "
                             f"(a {cls.kind} joint got {key}={value!r})")
    return extra


def perpendicular_basis(a):
    """Two unit vectors completing the unit vector ``a`` to a right-handed basis."""
    trial = _EYE[np.argmin(np.abs(a))]
    u1 = cross(a, trial)
    u1 /= np.linalg.norm(u1)
    return u1, cross(a, u1)


def _angle_about(axis, Rj):
    """Angle of a rotation ``Rj`` about the unit ``axis`` (batched), in (-pi, pi]."""
    u1, u2 = perpendicular_basis(axis)
    Ru1 = Rj @ u1
    return np.arctan2(Ru1 @ u2, Ru1 @ u1)


def _unwrap(angle, ref):
    """``angle + 2 pi k`` nearest to ``ref`` (keeps the turn count of a reference)."""
    if ref is None:
        return angle
    return angle + 2 * np.pi * np.round((ref - angle) / (2 * np.pi))


def _column(vec, q, nv=1, col=0):
    out = np.zeros(q.shape[:-1] + (3, nv))
    out[..., :, col] = vec
    return out


# ------------------------------------------------------------------ model parts
class Part:
    """Shared guard of a model's parts (joints here; bodies and force elements in
    :mod:`mbcourse.model`): the names in ``_PARAMETERS`` may be reassigned, validated by
    ``_validate`` and bumping the owning model's version; everything else is fixed once the
    part is added (until then, while ``_ready`` is False, attributes are set freely)."""

    _PARAMETERS: tuple = ()
    _label = "part"

    def __setattr__(self, attr, value):
        if not self.__dict__.get("_ready", True):
            object.__setattr__(self, attr, value)
            return
        if attr not in self._PARAMETERS:
            raise ModelError(
                f"{self._label} {self.__dict__.get('name', '')!r}: {attr!r} cannot be changed "
                f"(changeable: {', '.join(self._PARAMETERS) or 'nothing'}); use model.copy() "
                "and build it differently"
            )
        object.__setattr__(self, attr, self._validate(attr, value))
        if self._model is not None:
            self._model._touch()


# --------------------------------------------------------------------- joints
class Joint(Part):
    """A joint ``u_a`` between ``parent = i+(a)`` and ``child = i-(a)``.

    Subclasses implement one joint kind each. All methods take ``q`` of shape
    ``(..., nq)`` (and ``v`` of shape ``(..., nv)``) and broadcast over leading dims.

    Attributes
    ----------
    q_slice : slice
        Where this joint's ``nq`` coordinates sit in the model's configuration vector:
        ``q[..., joint.q_slice]`` is the joint's own ``q`` (names ``model.q_names[q_slice]``).
        Set by :meth:`mbcourse.Model.add_joint` (joints are stacked in the order added).
    v_slice : slice
        Where its ``nv`` generalized speeds sit in ``qd`` (and ``qdd``, ``tau``):
        ``qd[..., joint.v_slice]``. It differs from ``q_slice`` once a spherical or free
        joint (``nq != nv``) comes before it.

    Examples
    --------
    >>> import mbcourse as mb
    >>> m = mb.Model()
    >>> _ = m.add_body("a", 1.0, [1, 1, 1]); _ = m.add_body("b", 1.0, [1, 1, 1])
    >>> ball = m.add_joint("ball", "spherical", "ground", "a")
    >>> hinge = m.add_joint("hinge", "revolute", "a", "b", axis=(0, 0, 1))
    >>> ball.q_slice, ball.v_slice, hinge.q_slice, hinge.v_slice
    (slice(0, 4, None), slice(0, 3, None), slice(4, 5, None), slice(3, 4, None))
    """

    kind = ""
    nq = 0
    nv = 0
    coordinate_names: tuple = ()
    #: names of the generalized speeds (default: the coordinates' names)
    speed_names: tuple | None = None
    #: slice of the joint's own q holding a unit quaternion, or None
    quaternion: slice | None = None
    #: True when z_a depends on q (the joint point moves on the parent)
    moves_joint_point = False
    #: True for the six-degree-of-freedom joint of a free-flying body
    floating = False
    _PARAMETERS = ("parent_point", "child_point", "orientation")
    _label = "joint"

    def __init__(self, name, index, parent, child, parent_point, child_point, orientation,
                 model=None):
        object.__setattr__(self, "_model", model)
        object.__setattr__(self, "_ready", False)
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

    def _freeze(self):
        object.__setattr__(self, "_ready", True)

    def _validate(self, attr, value):
        what = f"joint {self.name!r}: {attr}"
        if attr in ("parent_point", "child_point"):
            return vector(value, what)
        if attr == "orientation":
            return rotation_matrix(value, what)
        if attr == "axis":
            return unit(value, what)
        if attr == "lead":
            if isinstance(value, bool) or not isinstance(value, numbers.Real) \
                    or not np.isfinite(value) or value == 0:
                raise ModelError(f"{what} must be a finite nonzero number (advance per turn), "
                                 f"got {value!r}")
            return float(value)
        if attr == "axes":
            if value is None or len(value) != 2:
                raise ModelError(f"{what} must be a pair (axis1, axis2)")
            a1, a2 = unit(value[0], f"{what}[0]"), unit(value[1], f"{what}[1]")
            if np.linalg.norm(cross(a1, a2)) < 1e-6:
                raise ModelError(f"{what}: the two universal-joint axes must not be parallel")
            return (a1, a2)
        raise AssertionError(attr)  # pragma: no cover

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

    def rates(self, q, v):
        """Local time derivatives ``(dp/dt, dk/dt)`` along ``v``, each (..., 3, nv).

        Zero for joints whose axes are fixed in the parent (revolute, prismatic, screw,
        cylindrical, fixed).
        """
        q = np.asarray(q, dtype=float)
        zero = np.zeros(np.broadcast_shapes(q.shape[:-1], np.shape(v)[:-1]) + (3, self.nv))
        return zero, zero.copy()

    def bias(self, q, v):
        """Velocity-product terms ``(w_a, s_a)``, each shape (..., 3).

        ``w_a`` = (local derivative of ``p``) ``v`` (3.106) and ``s_a`` = (local derivative
        of ``k``) ``v`` (3.102), so that the relative angular acceleration is
        ``p dv/dt + w_a`` and the local second derivative of ``z_a`` is ``k dv/dt + s_a``.
        """
        v = np.asarray(v, dtype=float)
        pdot, kdot = self.rates(q, v)
        return (pdot @ v[..., None])[..., 0], (kdot @ v[..., None])[..., 0]

    def qdot(self, q, v):
        """Time derivative of the configuration, shape (..., nq)."""
        return np.array(v, dtype=float)

    def neutral(self):
        """The configuration ``q = 0`` (identity quaternion for rotations), shape (nq,)."""
        return np.zeros(self.nq)

    @property
    def revolute_axis(self):
        """The axis (parent axes) if the joint is a pure rotation about a fixed axis with
        ``z_a = 0``; otherwise ``None``."""
        return None

    def motion(self):
        """The joint's own motion as data (:class:`Motion`), what the compiled kernels read:
        ``rotation``, ``z``, ``p``, ``k`` and ``bias`` follow from it (tests check they agree
        with the methods above). A fixed joint's motion is empty (``R_a`` = orientation);
        a joint kind that does not describe itself raises ``NotImplementedError``.

        Examples
        --------
        >>> import mbcourse as mb
        >>> m = mb.Model()
        >>> _ = m.add_body("b", 1.0, [1, 1, 1])
        >>> j = m.add_joint("s", "cylindrical", "ground", "b", axis=(0, 0, 1))
        >>> [(frame, p.tolist(), k.tolist()) for frame, p, k in j.motion().speeds]
        [(0, [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]), (0, [0.0, 0.0, 0.0], [0.0, 0.0, 1.0])]
        """
        raise NotImplementedError(f"{type(self).__name__} does not describe its motion")

    @property
    def elementary_motion(self):
        """``("rotation", axis)`` or ``("translation", axis)`` (parent axes) when the joint's
        coordinate drives one elementary motion of Eliseev and Khomenko's description
        (chapter 8); otherwise ``None``."""
        return None

    def planar_rows(self):
        """Rows of the planar form (2.32)-(2.43), or ``None`` if the joint cannot keep a
        body in the xy plane. Each row is ``(type, p1, p2, p3)`` as in :meth:`rows`."""
        return None

    def spatial_rows(self):
        """Rows of the spatial form: a list of ``(type, p1, p2, p3)`` with ``type``
        ``"point_plane"`` (normal ``n`` in parent axes, child point ``rho``, offset
        ``n . parent_point``), ``"perpendicular"`` (vector ``u`` of the parent, ``w`` of
        the child, ``cos`` of their angle) or ``"screw"`` (axis, child point, pitch = lead /
        2 pi)."""
        raise NotImplementedError  # pragma: no cover

    def rows(self, planar=False):
        """The elementary constraint rows of chapter 2 that make this joint.

        Parameters
        ----------
        planar : bool
            Rows of the planar form (``None`` if the joint cannot be planar).
        """
        return self.planar_rows() if planar else self.spatial_rows()

    def row_parameters(self, planar=False):
        """:meth:`rows` as ``(type, params)``: the parameters each row's constraint function
        of :mod:`mbcourse.cartesian.constraints` takes before the two body states (what the
        NumPy route stacks and chapter 2's kernel reads packed). A ``"screw"`` row adds to
        its axis ``n``, point and pitch the offset ``d = n . parent_point`` and the basis
        ``u1, u2`` across the axis with the child's vector ``w1`` along ``u1`` at zero
        angle; a planar ``"rotation"`` row keeps its angle. ``None`` where :meth:`rows` is.

        Examples
        --------
        >>> import mbcourse as mb
        >>> m = mb.Model()
        >>> _ = m.add_body("nut", 1.0, [1, 1, 1])
        >>> j = m.add_joint("thread", "screw", "ground", "nut", axis=(0, 0, 1), lead=0.01)
        >>> [(kind, len(params)) for kind, params in j.row_parameters()]
        ... # doctest: +NORMALIZE_WHITESPACE
        [('point_plane', 3), ('point_plane', 3), ('perpendicular', 3), ('perpendicular', 3),
         ('screw', 7)]
        """
        rows = self.rows(planar)
        if rows is None:
            return None
        out = []
        for kind, p1, p2, p3 in rows:
            if kind == "rotation":
                params = (p3,)
            elif kind == "screw":
                u1, u2 = perpendicular_basis(p1)
                params = (p1, p2, float(p1 @ self.parent_point), p3, u1, u2,
                          self.orientation.T @ u1)
            else:
                params = (p1, p2, p3)
            out.append((kind, params))
        return out

    @property
    def planar(self):
        """True if the joint keeps the child in the xy plane of its parent."""
        return self.planar_rows() is not None

    def _point_rows(self, normals):
        return [("point_plane", n, self.child_point, float(n @ self.parent_point))
                for n in normals]

    def _angle_rows(self, axis):
        return [("perpendicular", u, self.orientation.T @ axis, 0.0)
                for u in perpendicular_basis(axis)]

    def _lock_rows(self):
        return [("perpendicular", _EYE[k], self.orientation.T @ _EYE[(k + 1) % 3], 0.0)
                for k in range(3)]

    def from_pose(self, R, z, q_ref=None):
        """The coordinates ``q`` (..., nq) of a relative pose: ``R`` (..., 3, 3) child to
        parent axes and ``z`` (..., 3) the joint vector in parent axes (the inverse of
        :meth:`rotation` and :meth:`z` on the joint's own motions).

        ``q_ref`` (..., nq), optional, picks the branch: the turn count of angles and the
        sign of quaternions nearest to it.
        """
        return np.zeros(np.shape(z)[:-1] + (0,))

    def pose_error(self, q, r_parent, A_parent, r_child, A_child):
        """How far the joint's own pose at ``q`` is from the relative pose of its bodies.

        Parameters
        ----------
        q : (B, nq)
        r_parent, r_child : (B, 3) centres of mass, inertial axes
        A_parent, A_child : (B, 3, 3) body to inertial axes

        Returns
        -------
        rotation, vector : float
            Largest entry of ``A_p^T A_c - R(q)`` and of the joint vector's mismatch
            ``A_p^T (P_c - P_p) - z(q)`` (P the joint points on the two bodies).
        """
        ApT = np.swapaxes(A_parent, -1, -2)
        rot = np.abs(ApT @ A_child - self.rotation(q)).max(initial=0.0)
        P_p = r_parent + (A_parent @ self.parent_point[:, None])[..., 0]
        P_c = r_child + (A_child @ self.child_point[:, None])[..., 0]
        vec = np.abs((ApT @ (P_c - P_p)[..., None])[..., 0] - self.z(q)).max(initial=0.0)
        return float(rot), float(vec)

    def speeds_from_rates(self, q, omega, zdot):
        """Generalized speeds from the relative angular velocity ``omega`` and the local
        rate ``zdot`` of the joint vector (both parent axes): least squares on
        ``[p; k] v = [omega; zdot]`` (exact for admissible motions)."""
        Jm = np.concatenate([self.p(q), self.k(q)], axis=-2)
        rhs = np.concatenate([omega, zdot], axis=-1)
        Jt = np.swapaxes(Jm, -1, -2)
        return np.linalg.solve(Jt @ Jm, (Jt @ rhs[..., None]))[..., 0]

    def sympy_form(self, q):
        """``(R_joint, z, P)``: sympy ``3x3``, ``3x1`` and ``3 x nv`` matrices of the joint's
        own rotation (before ``orientation``), vector and angular-axis columns, for the
        symbols ``q`` (a list of length ``nq``).

        Raises ModelError for joints whose generalized speeds are not coordinate rates.
        """
        import sympy as sp

        return sp.eye(3), sp.zeros(3, 1), sp.zeros(3, self.nv)

    # -- common -------------------------------------------------------------------
    def rotation(self, q):
        """``R_a(q)``: child axes to parent axes, shape (..., 3, 3)."""
        return self._joint_rotation(np.asarray(q, dtype=float)) @ self.orientation

    def G(self, q):
        """The book's ``G_a(q) = R_a(q)^T`` (3.75): ``e^(i-) = G_a e^(i+)``."""
        return np.swapaxes(self.rotation(q), -1, -2)

    @property
    def qd_names(self):
        """Names of this joint's generalized speeds."""
        return self.speed_names or self.coordinate_names

    def summary_cells(self):
        """``(kind, coordinates)`` as :meth:`mbcourse.Model.summary` prints them."""
        coords = ", ".join(self.coordinate_names) or "(welded)"
        if self.qd_names != self.coordinate_names:
            coords += "; speeds " + ", ".join(self.qd_names)
        return self.kind, coords

    @property
    def v_names(self):
        """Deprecated name of :attr:`qd_names` (kept for one release)."""
        import warnings

        warnings.warn("Joint.v_names is deprecated: use Joint.qd_names (qd names the speeds)",
                      DeprecationWarning, stacklevel=2)
        return self.qd_names


def _sym_vec(v):
    import sympy as sp

    return sp.Matrix([sp.nsimplify(float(c), tolerance=1e-12, rational=True) for c in v])


def sym_axis_angle(axis, angle):
    """Sympy rotation matrix about an axis (Rodrigues), for :meth:`Joint.sympy_form`."""
    import sympy as sp

    a = sp.Matrix(axis)
    K = sp.Matrix([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return sp.eye(3) + sp.sin(angle) * K + (1 - sp.cos(angle)) * K * K


class _AxisJoint(Joint):
    """A joint with one axis (revolute, prismatic, screw, cylindrical)."""

    _PARAMETERS = Joint._PARAMETERS + ("axis",)

    def __init__(self, *args, axis, model=None):
        super().__init__(*args, model=model)
        self.axis = axis


class Revolute(_AxisJoint):
    """One rotation about ``axis`` (the book's "цилиндрический шарнир")."""

    kind, nq, nv, coordinate_names = "revolute", 1, 1, ("angle",)

    def _joint_rotation(self, q):
        return axis_angle(self.axis, q[..., 0])

    def p(self, q):
        return _column(self.axis, np.asarray(q, dtype=float))

    @property
    def revolute_axis(self):
        return self.axis

    @property
    def elementary_motion(self):
        return ("rotation", self.axis)

    def spatial_rows(self):
        return self._point_rows(_EYE) + self._angle_rows(self.axis)

    def planar_rows(self):
        if abs(abs(self.axis[2]) - 1.0) > 1e-12 or abs(self.orientation[2, 2] - 1.0) > 1e-12:
            return None
        pp, cp = self.parent_point, self.child_point
        return [("point_line", n, cp[:2], float(n @ pp[:2])) for n in (_EYE[0, :2], _EYE[1, :2])]

    def from_pose(self, R, z, q_ref=None):
        Rj = np.asarray(R) @ self.orientation.T
        ref = None if q_ref is None else np.asarray(q_ref)[..., 0]
        return _unwrap(_angle_about(self.axis, Rj), ref)[..., None]

    def sympy_form(self, q):
        import sympy as sp

        axis = _sym_vec(self.axis)
        P = sp.zeros(3, 1)
        P[:, 0] = axis
        return sym_axis_angle(axis, q[0]), sp.zeros(3, 1), P

    def motion(self):
        return Motion(turns=((self.axis, 0, 0),), speeds=((PARENT, self.axis, _ZERO3),))


class Prismatic(_AxisJoint):
    """A translation along ``axis``: ``z = axis q``."""

    kind, nq, nv, coordinate_names = "prismatic", 1, 1, ("displacement",)
    moves_joint_point = True

    def z(self, q):
        return np.asarray(q, dtype=float)[..., :1] * self.axis

    def k(self, q):
        return _column(self.axis, np.asarray(q, dtype=float))

    @property
    def elementary_motion(self):
        return ("translation", self.axis)

    def spatial_rows(self):
        return self._point_rows(perpendicular_basis(self.axis)) + self._lock_rows()

    def planar_rows(self):
        if abs(self.axis[2]) > 1e-12 or abs(self.orientation[2, 2] - 1.0) > 1e-12:
            return None
        a = self.axis[:2] / np.linalg.norm(self.axis[:2])
        n = np.array([-a[1], a[0]])
        R0 = self.orientation
        return [("point_line", n, self.child_point[:2], float(n @ self.parent_point[:2])),
                ("rotation", np.zeros(2), np.zeros(2), float(np.arctan2(R0[1, 0], R0[0, 0])))]

    def from_pose(self, R, z, q_ref=None):
        return (np.asarray(z) @ self.axis)[..., None]

    def sympy_form(self, q):
        import sympy as sp

        return sp.eye(3), _sym_vec(self.axis) * q[0], sp.zeros(3, 1)

    def motion(self):
        return Motion(slides=((self.axis, 0),), speeds=((PARENT, _ZERO3, self.axis),))


class Screw(_AxisJoint):
    """Rotation ``q`` about ``axis`` with advance ``lead q / (2 pi)`` along it."""

    kind, nq, nv, coordinate_names = "screw", 1, 1, ("angle",)
    moves_joint_point = True
    _PARAMETERS = _AxisJoint._PARAMETERS + ("lead",)

    def __init__(self, *args, axis, lead, model=None):
        super().__init__(*args, axis=axis, model=model)
        self.lead = lead

    @property
    def pitch(self):
        """Advance per radian, ``lead / (2 pi)``."""
        return self.lead / (2 * np.pi)

    def _joint_rotation(self, q):
        return axis_angle(self.axis, q[..., 0])

    def z(self, q):
        return np.asarray(q, dtype=float)[..., :1] * self.pitch * self.axis

    def p(self, q):
        return _column(self.axis, np.asarray(q, dtype=float))

    def k(self, q):
        return _column(self.axis * self.pitch, np.asarray(q, dtype=float))

    def spatial_rows(self):
        # the point stays on the axis, the child turns only about it, and the advance
        # along the axis is the pitch times the angle turned
        return (self._point_rows(perpendicular_basis(self.axis)) + self._angle_rows(self.axis)
                + [("screw", self.axis, self.child_point, self.pitch)])

    def from_pose(self, R, z, q_ref=None):
        # the advance along the axis fixes the number of turns
        Rj = np.asarray(R) @ self.orientation.T
        return _unwrap(_angle_about(self.axis, Rj), (np.asarray(z) @ self.axis) / self.pitch
                       )[..., None]

    def sympy_form(self, q):
        import sympy as sp

        axis = _sym_vec(self.axis)
        P = sp.zeros(3, 1)
        P[:, 0] = axis
        lead = sp.nsimplify(self.lead, tolerance=1e-12, rational=True)
        return sym_axis_angle(axis, q[0]), axis * lead * q[0] / (2 * sp.pi), P

    def motion(self):
        lead = self.axis * self.pitch
        return Motion(turns=((self.axis, 0, 0),), slides=((lead, 0),),
                      speeds=((PARENT, self.axis, lead),))


class Cylindrical(_AxisJoint):
    """Rotation ``q[0]`` about and translation ``q[1]`` along the same ``axis``."""

    kind, nq, nv, coordinate_names = "cylindrical", 2, 2, ("angle", "displacement")
    moves_joint_point = True

    def _joint_rotation(self, q):
        return axis_angle(self.axis, q[..., 0])

    def z(self, q):
        return np.asarray(q, dtype=float)[..., 1:2] * self.axis

    def p(self, q):
        return _column(self.axis, np.asarray(q, dtype=float), 2, 0)

    def k(self, q):
        return _column(self.axis, np.asarray(q, dtype=float), 2, 1)

    def spatial_rows(self):
        return self._point_rows(perpendicular_basis(self.axis)) + self._angle_rows(self.axis)

    def from_pose(self, R, z, q_ref=None):
        Rj = np.asarray(R) @ self.orientation.T
        ref = None if q_ref is None else np.asarray(q_ref)[..., 0]
        angle = _unwrap(_angle_about(self.axis, Rj), ref)
        return np.stack([angle, np.asarray(z) @ self.axis], axis=-1)

    def sympy_form(self, q):
        import sympy as sp

        axis = _sym_vec(self.axis)
        P = sp.zeros(3, 2)
        P[:, 0] = axis
        return sym_axis_angle(axis, q[0]), axis * q[1], P

    def motion(self):
        return Motion(turns=((self.axis, 0, 0),), slides=((self.axis, 1),),
                      speeds=((PARENT, self.axis, _ZERO3), (PARENT, _ZERO3, self.axis)))


class Universal(Joint):
    """Cardan joint: ``q[0]`` about ``axes[0]`` (parent-fixed), then ``q[1]`` about the
    rotated ``axes[1]`` (child-fixed)."""

    kind, nq, nv, coordinate_names = "universal", 2, 2, ("angle1", "angle2")
    _PARAMETERS = Joint._PARAMETERS + ("axes",)

    def __init__(self, *args, axes, model=None):
        super().__init__(*args, model=model)
        self.axes = axes

    def _joint_rotation(self, q):
        return axis_angle(self.axes[0], q[..., 0]) @ axis_angle(self.axes[1], q[..., 1])

    def p(self, q):
        q = np.asarray(q, dtype=float)
        out = np.empty(q.shape[:-1] + (3, 2))
        out[..., :, 0] = self.axes[0]
        out[..., :, 1] = axis_angle(self.axes[0], q[..., 0]) @ self.axes[1]
        return out

    def rates(self, q, v):
        pdot, kdot = super().rates(q, v)
        v = np.asarray(v, dtype=float)
        p2 = axis_angle(self.axes[0], np.asarray(q, dtype=float)[..., 0]) @ self.axes[1]
        pdot[..., :, 1] = v[..., :1] * cross(self.axes[0], p2)
        return pdot, kdot

    def spatial_rows(self):
        a1, a2 = self.axes
        return self._point_rows(_EYE) + [("perpendicular", a1, self.orientation.T @ a2,
                                          float(a1 @ a2))]

    def from_pose(self, R, z, q_ref=None):
        a1, a2 = self.axes
        Rj = np.asarray(R) @ self.orientation.T
        # R_j a2 = R(a1, q1) a2: q1 turns a2 about a1
        u = a2 - (a2 @ a1) * a1
        moved = Rj @ a2
        q1 = np.arctan2(cross(u, moved) @ a1, moved @ u)
        R2 = np.swapaxes(axis_angle(a1, q1), -1, -2) @ Rj
        q2 = _angle_about(a2, R2)
        if q_ref is not None:
            q1, q2 = _unwrap(q1, q_ref[..., 0]), _unwrap(q2, q_ref[..., 1])
        return np.stack([q1, q2], axis=-1)

    def sympy_form(self, q):
        import sympy as sp

        a1, a2 = _sym_vec(self.axes[0]), _sym_vec(self.axes[1])
        R1 = sym_axis_angle(a1, q[0])
        P = sp.zeros(3, 2)
        P[:, 0], P[:, 1] = a1, R1 * a2
        return R1 * sym_axis_angle(a2, q[1]), sp.zeros(3, 1), P

    def motion(self):
        a1, a2 = self.axes
        return Motion(turns=((a1, 0, 0), (a2, 1, 1)),
                      speeds=((PARENT, a1, _ZERO3), (FIRST_TURN, a2, _ZERO3)))


class Spherical(Joint):
    """Ball joint: a unit quaternion ``(w, x, y, z)``; speeds = relative angular
    velocity in child axes (so ``p = R_a``)."""

    kind, nq, nv, coordinate_names = "spherical", 4, 3, ("qw", "qx", "qy", "qz")
    speed_names = ("wx", "wy", "wz")
    quaternion = slice(0, 4)

    def _joint_rotation(self, q):
        return quat_to_matrix(q[..., :4])

    def p(self, q):
        return self.rotation(q)

    def rates(self, q, v):  # dR_a/dt = R_a skew(v)
        pdot = self.rotation(q) @ skew(np.asarray(v, dtype=float))
        return pdot, np.zeros_like(pdot)

    def bias(self, q, v):
        zero = np.zeros(np.broadcast_shapes(np.shape(q)[:-1], np.shape(v)[:-1]) + (3,))
        return zero, zero.copy()  # (R_a skew(v)) v = R_a (v x v) = 0

    def qdot(self, q, v):
        q = np.asarray(q, dtype=float)
        omega_joint = np.asarray(v, dtype=float) @ self.orientation.T  # R0 v
        return (quat_rate_matrix(q) @ omega_joint[..., None])[..., 0]

    def neutral(self):
        return np.array([1.0, 0.0, 0.0, 0.0])

    def spatial_rows(self):
        return self._point_rows(_EYE)

    def from_pose(self, R, z, q_ref=None):
        quat = matrix_to_quat(np.asarray(R) @ self.orientation.T)
        if q_ref is not None:
            quat = quat * np.where(np.sum(quat * q_ref[..., :4], -1) < 0, -1.0, 1.0)[..., None]
        return quat

    def sympy_form(self, q):
        raise ModelError(f"joint {self.name!r} ({self.kind}): its speeds are angular velocities, "
                         "not coordinate rates; symbolic equations need revolute, prismatic, "
                         "screw, cylindrical, universal or fixed joints")

    def motion(self):
        # speeds: the relative angular velocity in the child's axes, so p = R_a
        return Motion(quaternion=0, speeds=tuple((CHILD, e, _ZERO3) for e in _EYE))


class Free(Joint):
    """Six degrees of freedom: ``z`` (3, parent axes) then a unit quaternion; speeds
    ``(dz/dt in parent axes, relative angular velocity in child axes)``."""

    kind, nq, nv = "free", 7, 6
    coordinate_names = ("x", "y", "z", "qw", "qx", "qy", "qz")
    speed_names = ("vx", "vy", "vz", "wx", "wy", "wz")
    quaternion = slice(3, 7)
    moves_joint_point = True
    floating = True

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

    def rates(self, q, v):
        pdot, kdot = super().rates(q, v)
        pdot[..., :, 3:] = self.rotation(q) @ skew(np.asarray(v, dtype=float)[..., 3:])
        return pdot, kdot

    def qdot(self, q, v):
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        omega_joint = v[..., 3:] @ self.orientation.T
        quat_dot = (quat_rate_matrix(q[..., 3:7]) @ omega_joint[..., None])[..., 0]
        return np.concatenate([v[..., :3], quat_dot], axis=-1)

    def neutral(self):
        return np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])

    def spatial_rows(self):
        return []

    def from_pose(self, R, z, q_ref=None):
        quat = Spherical.from_pose(self, R, z, None if q_ref is None else q_ref[..., 3:7])
        return np.concatenate([np.asarray(z, dtype=float), quat], axis=-1)

    sympy_form = Spherical.sympy_form

    def motion(self):
        # z = the first three coordinates in parent axes (k = E), then the quaternion
        return Motion(quaternion=3, slides=tuple((e, i) for i, e in enumerate(_EYE)),
                      speeds=tuple((PARENT, _ZERO3, e) for e in _EYE)
                      + tuple((CHILD, e, _ZERO3) for e in _EYE))


class Fixed(Joint):
    """No relative motion (a weld): ``R_a = orientation``, ``z = 0``; ``nq = nv = 0``."""

    kind, nq, nv, coordinate_names = "fixed", 0, 0, ()

    def motion(self):
        return Motion()

    def spatial_rows(self):
        return self._point_rows(_EYE) + self._lock_rows()

    def planar_rows(self):
        if abs(self.orientation[2, 2] - 1.0) > 1e-12:
            return None
        R0 = self.orientation
        return ([("point_line", n, self.child_point[:2], float(n @ self.parent_point[:2]))
                 for n in (_EYE[0, :2], _EYE[1, :2])]
                + [("rotation", np.zeros(2), np.zeros(2), float(np.arctan2(R0[1, 0], R0[0, 0])))])


JOINT_KINDS = {
    cls.kind: cls
    for cls in (Revolute, Prismatic, Screw, Cylindrical, Universal, Spherical, Free, Fixed)
}


def normalize_quaternions(joints, q, names):
    """Renormalize the quaternions in ``q`` (..., nq) in place; refuse a zero or far from
    unit one (|norm - 1| > QUATERNION_TOL) naming the joint."""
    for j in joints:
        if j.quaternion is None:
            continue
        s = slice(j.q_slice.start + j.quaternion.start, j.q_slice.start + j.quaternion.stop)
        norm = np.linalg.norm(q[..., s], axis=-1, keepdims=True)
        bad = np.abs(norm - 1.0) > QUATERNION_TOL
        if bad.any():
            where = np.argwhere(bad[..., 0])
            item = f" (batch item {tuple(int(x) for x in where[0])})" if q.ndim > 1 else ""
            raise InconsistentStateError(
                f"joint {j.name!r}: the quaternion q[{s.start}:{s.stop}] ({', '.join(names[s])})"
                f" has norm {float(norm[tuple(where[0])][0]):.6g}{item}; a rotation needs a unit "
                f"quaternion (norms within {QUATERNION_TOL:g} of 1 are renormalized)"
            )
        q[..., s] /= norm
    return q
