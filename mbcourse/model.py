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

Joint kinds and their coordinates (``q``: configuration, ``qd``: generalized speeds):

==============  ====  ====  ==========================================================
kind            nq    nv    coordinates
==============  ====  ====  ==========================================================
revolute        1     1     angle about ``axis`` (right hand), ``qd = dq/dt``
prismatic       1     1     displacement along ``axis`` (``z = axis q``)
screw           1     1     angle about ``axis``; advance ``lead * q / (2 pi)`` along it
cylindrical     2     2     (angle about ``axis``, displacement along ``axis``)
universal       2     2     angle ``q1`` about ``axes[0]``, then ``q2`` about the rotated ``axes[1]``
spherical       4     3     unit quaternion ``(w, x, y, z)``; ``qd`` = relative angular
                            velocity in child axes
free            7     6     ``z`` (3, parent axes) then a quaternion; ``qd`` = (dz/dt in
                            parent axes, relative angular velocity in child axes)
fixed           0     0     none: the child is welded to the parent
==============  ====  ====  ==========================================================

Axes are given in parent axes, where the child's axes coincide with the parent's at
``q = 0`` unless ``orientation=R0`` is given (then ``R_a(q) = R_joint(q) @ R0``).
Coordinates are stacked in the order the joints were added; ``tau`` holds generalized
forces in the order of ``qd`` (torques for angles, forces for displacements).

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

Description and evaluation
--------------------------
A ``Model`` describes; it does not compute (Pinocchio's ``Model``/``Data`` split, spatial_v2's
``model`` + ``jcalc``). The evaluation lives in free functions over **already-checked**
arrays, in modules of their own:

* :mod:`mbcourse.state` -- the one input check (:meth:`Model.check_state`: shapes with any
  number of leading batch dimensions, real finite numbers, unit quaternions renormalized
  within ``mbcourse.joints.QUATERNION_TOL``, refused beyond) and the checked ``State``;
* :mod:`mbcourse.poses` -- body positions, orientations and velocities, ``dq/dt``;
* :mod:`mbcourse.forces` -- applied wrenches, generalized forces, damping power;
* :mod:`mbcourse.energy` -- kinetic and potential energy;
* :mod:`mbcourse.elements` -- the parts (bodies, loads, springs, base motion), re-exported
  here; :mod:`mbcourse.topology` -- the graph and the spanning-tree traversal;
  :mod:`mbcourse.summary` -- the printed tables.

Formulations call the cores on the state they checked (``mbcourse.tree.general`` offers
``terms_unchecked`` and ``mass_matrix_unchecked`` for formulations built on chapter 3).

``Model.body_poses``, ``Model.kinetic_energy``, ... are thin wrappers: they check their
inputs once and call the core; a formulation checks its state once at its public entry and
then calls the cores, so one call checks ``q`` exactly once.

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
import warnings

import numpy as np

from . import energy as _energy
from . import forces as _forces
from . import poses as _poses
from . import state as _state
from . import summary as _summary
from . import topology as _topology
from .elements import (BaseMotion, Body, Contact, GeneralizedForce, JointLimit, JointSpring,
                       Load, Spring,
                       inertia_tensor, positive, state_function)
from .errors import InertiaWarning, ModelError, TopologyError
from .joints import (JOINT_KINDS, QUATERNION_TOL, Joint, frozen, joint_parameters,
                     rotation_matrix, vector)
from .state import State

__all__ = ["Model", "Body", "Joint", "Load", "Spring", "JointSpring", "GeneralizedForce",
           "JointLimit", "Contact",
           "BaseMotion", "State", "JOINT_KINDS", "QUATERNION_TOL"]

_EYE = np.eye(3)


#: Prepared items a model with mimic joints builds for itself; any other is a formulation's
#: (which runs on ``model.coupling.full``), refused by name (:func:`mbcourse.coupling.refusal`).
_COUPLED_KEYS = frozenset({"counts", "coupling", "graph", "tree", ("outward_joints",), "masses",
                           "inertias"})


def _reduced_state(fn, coupling, generalized):
    """``fn(t, q, qd)`` of the independent coordinates as a function of the full ones (a
    generalized force's result on the full speeds, zero on the mimic joints)."""
    def full(t, q, qd):
        out = fn(t, coupling.reduce_q(q), None if qd is None else coupling.reduce_qd(qd))
        return coupling.tau(out) if generalized else out
    full.__wrapped__ = fn
    full.takes_full_coordinates = True     # wrapped once: a later coupling leaves it alone
    return full


def _deprecated(old, new):
    warnings.warn(f"{old} is deprecated: use {new} (qd names the speeds everywhere)",
                  DeprecationWarning, stacklevel=3)


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
        d["_joint_limits"] = []  # unilateral constraints (chapter 9, mbcourse.contact)
        d["_contacts"] = []
        d["_mimics"] = []  # coupled coordinates, mbcourse.coupling
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
            if self._mimics and key not in _COUPLED_KEYS:
                from .coupling import caller, refusal
                raise refusal(self, caller()) from None
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
        for part in (new._bodies + new._joints + new._springs + new._joint_springs + new._loads
                     + new._contacts):
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
        with warnings.catch_warnings():        # the bodies were checked (and warned about) once
            warnings.simplefilter("ignore", InertiaWarning)
            for b in self._bodies[1:]:
                new.add_body(b.name, b.mass, b.inertia, strict=False)
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
    def joint_limits(self):
        """The joint stops of :meth:`add_joint_limit` (a tuple)."""
        return tuple(self._joint_limits)

    @property
    def contacts(self):
        """The contact points of :meth:`add_contact` (a tuple)."""
        return tuple(self._contacts)

    @property
    def generalized_force_elements(self):
        """The callables of :meth:`add_generalized_force` (a tuple)."""
        return tuple(self._generalized_forces)

    # -------------------------------------------------------------- building
    def add_body(self, name, mass, inertia, *, strict=True):
        """Add a rigid body; returns the :class:`Body`.

        Parameters
        ----------
        name : str
            Unique name.
        mass : float
            Mass, non-negative (zero: a massless link, as robot files have).
        inertia : array_like, shape (3, 3) or (3,)
            Central inertia tensor in body axes (or its three principal moments): symmetric,
            positive semi-definite (zero: a point mass), satisfying the triangle inequality.
        strict : bool
            ``False``: an inertia that violates the triangle inequality (no rigid body has
            it) is accepted with an :class:`~mbcourse.errors.InertiaWarning` instead of
            refused (:func:`mbcourse.urdf.load` does this for robot files).

        Notes
        -----
        The O(n) recursions and the tree equations need only a positive-definite mass
        matrix, which a massless link or a point mass can keep (the links after them carry
        the mass); chapter 2's absolute coordinates need every body's own inertia positive
        definite and say so, naming the body. A joint that moves no mass at all is named
        when a formulation meets it (``SingularSystemError``).

        Examples
        --------
        >>> import mbcourse as mb
        >>> m = mb.Model()
        >>> m.add_body("frame", 0.0, [0.0, 0.0, 0.0])        # a massless link
        Body('frame', index=1, mass=0.0)
        """
        if not isinstance(name, str) or not name:
            raise ModelError(f"a body needs a non-empty string name, got {name!r}")
        if name in self._body_index:
            raise ModelError(
                f"body {name!r} already exists (body names must be unique; "
                f"existing: {list(self._body_index)})"
            )
        body = Body(name, len(self._bodies),
                    positive(mass, f"body {name!r}: mass", allow_zero=True),
                    inertia_tensor(inertia, name, strict=strict), self)
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
        extra = joint_parameters(cls, name, axis=axis, axes=axes, lead=lead)
        joint = cls(name, len(self._joints), ip, im, pp, cp, R0, model=self, **extra)
        for key in extra:  # validated like a later assignment
            object.__setattr__(joint, key, joint._validate(key, extra[key]))
        joint._parent_name, joint._child_name = self._bodies[ip].name, self._bodies[im].name
        nq, nv = self._full_counts()
        joint.q_slice = slice(nq, nq + joint.nq)
        joint.v_slice = slice(nv, nv + joint.nv)
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
        load = Load(idx, state_function(force, f"load {label!r}: force", (3,)),
                    state_function(torque, f"load {label!r}: torque", (3,)),
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
        element = GeneralizedForce(label, state_function(fn, f"generalized force {label!r}",
                                                          (self.nv,)), self)
        if not callable(element.fn):
            raise ModelError(f"generalized force {label!r} must be a callable f(t, q, qd); "
                             "pass constant forces as tau")
        self._generalized_forces.append(element)
        self._touch()
        return element

    def add_joint_limit(self, joint, lower, upper, *, restitution=0.0):
        """Stops ``lower <= q <= upper`` on a one-coordinate joint (chapter 9); returns the
        :class:`JointLimit`.

        Only :func:`mbcourse.contact.simulate` enforces them (every other formulation treats
        the joint as free). Reaching a stop is an impact with Newton's ``restitution`` in
        [0, 1]; ``-inf`` or ``inf`` leaves one side open.

        Examples
        --------
        >>> import mbcourse as mb
        >>> m = mb.models.double_pendulum()
        >>> m.add_joint_limit("B", -0.5, 0.5, restitution=0.3)
        JointLimit('B', lower=-0.5, upper=0.5, restitution=0.3)
        >>> m.add_joint_limit("A", 1.0, -1.0)
        Traceback (most recent call last):
        ...
        mbcourse.errors.ModelError: joint limit on 'A': lower (1) must be below upper (-1)
        """
        j = self.joint(joint.name if isinstance(joint, Joint) else joint)
        if j.nq != 1 or j.nv != 1:
            raise ModelError(f"joint {j.name!r} ({j.kind}) has {j.nv} coordinates: a joint "
                             "limit bounds a one-coordinate joint (revolute, prismatic, screw)")
        if any(lim.joint is j for lim in self._joint_limits):
            raise ModelError(f"joint {j.name!r} already has a limit; assign its lower, upper "
                             "or restitution instead")
        if any(mimic.joint == j.name for mimic in self._mimics):
            raise ModelError(f"joint {j.name!r} follows another joint (a mimic joint): limit "
                             "the joint it follows")
        element = JointLimit(j, lower, upper, restitution, self)
        self._joint_limits.append(element)
        self._touch()
        return element

    def add_contact(self, name, body, point, *, normal=(0.0, 0.0, 1.0), offset=0.0,
                    radius=0.0, restitution=0.0, friction=0.0):
        """A point of ``body`` (or a sphere of ``radius`` about it) that may not pass below the
        plane ``normal . x = offset`` (chapter 9); returns the :class:`Contact`.

        Parameters
        ----------
        name : str
            Unique contact name (it labels the impacts of :func:`mbcourse.contact.simulate`).
        body : str or int
            A moving body (not the base).
        point : array_like, shape (3,)
            Body axes, from the centre of mass.
        normal : array_like, shape (3,)
            The plane's outward normal, world axes (normalized here).
        offset : float
            The plane is ``normal . x = offset``.
        radius : float
            Non-negative: a sphere about ``point`` rolls and bounces on the plane.
        restitution : float
            Newton's coefficient, in [0, 1].
        friction : float
            Coulomb's coefficient, non-negative.

        Only :func:`mbcourse.contact.simulate` enforces contacts.

        Examples
        --------
        >>> import mbcourse as mb
        >>> m = mb.Model(gravity=(0, 0, -9.81))
        >>> _ = m.add_body("ball", 1.0, [0.004, 0.004, 0.004])
        >>> _ = m.add_joint("drop", "prismatic", "ground", "ball", axis=(0, 0, 1))
        >>> m.add_contact("floor", "ball", (0, 0, 0), radius=0.1, restitution=0.8)
        Contact('floor', restitution=0.8, friction=0)
        >>> m.add_contact("wall", "ground", (0, 0, 0))
        Traceback (most recent call last):
        ...
        mbcourse.errors.ModelError: contact 'wall': body 'ground' is the base; a contact belongs to a moving body
        """
        if not isinstance(name, str) or not name:
            raise ModelError(f"a contact needs a non-empty string name, got {name!r}")
        if any(c.name == name for c in self._contacts):
            raise ModelError(f"contact {name!r} already exists (names must be unique)")
        idx = self._resolve_body(body, "body", f"contact {name!r}")
        if idx == 0:
            raise ModelError(f"contact {name!r}: body {self._bodies[0].name!r} is the base; a "
                             "contact belongs to a moving body")
        element = Contact(name, idx, self, point=point, normal=normal, offset=offset,
                          radius=radius, restitution=restitution, friction=friction)
        self._contacts.append(element)
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

    def _full_counts(self):
        """``(nq, nv)`` of the joints' own coordinates (mimic joints included)."""
        return self.prepared("counts", lambda: (sum(j.nq for j in self._joints),
                                                sum(j.nv for j in self._joints)))

    @property
    def nq(self):
        """Length of the configuration vector ``q`` (the independent coordinates: a mimic
        joint, :meth:`add_mimic`, has none of its own)."""
        return self.coupling.nq if self._mimics else self._full_counts()[0]

    @property
    def nv(self):
        """Length of the generalized-speed vector ``qd`` (= degrees of freedom of a tree;
        Pinocchio's name ``nv``)."""
        return self.coupling.nv if self._mimics else self._full_counts()[1]

    # ------------------------------------------------------ coupled coordinates
    def add_mimic(self, joint, primary, multiplier=1.0, offset=0.0):
        """Couple a joint's coordinate to another's, ``q_joint = multiplier * q_primary +
        offset`` (URDF ``<mimic>``; the Panda's second finger follows the first).

        The model then has the independent coordinates only: ``nq`` and ``nv`` drop by one,
        :attr:`q_names` lose the mimic joint's, and every formulation takes and returns
        the independent coordinates (:mod:`mbcourse.coupling` explains how: the joints keep
        their own coordinates, ``model.coupling`` maps them). :meth:`uncoupled` gives the
        model with independent joints again.

        Parameters
        ----------
        joint, primary : str or Joint
            Two different joints with one coordinate each (revolute, prismatic, screw);
            ``primary`` may not itself be a mimic joint, and a joint mimics one joint.
        multiplier, offset : float
            Finite numbers (units of ``joint`` per unit of ``primary``, and of ``joint``).

        Returns
        -------
        mbcourse.coupling.Mimic

        Examples
        --------
        >>> import mbcourse as mb
        >>> m = mb.models.double_pendulum()
        >>> m.add_mimic("B", "A", multiplier=-2.0)
        Mimic('B' = -2 * 'A' + 0)
        >>> m.nq, m.q_names
        (1, ['A.angle'])
        """
        from .coupling import Mimic
        names = []
        for ref, role in ((joint, "joint"), (primary, "primary")):
            j = self._joints[self._joint_number(ref.name if isinstance(ref, Joint) else ref,
                                                f"add_mimic: {role}")]
            if j.nq != 1 or j.nv != 1:
                raise ModelError(
                    f"add_mimic: {role} {j.name!r} is a {j.kind} joint with {j.nv} speeds; a "
                    "mimic couples joints of one coordinate (revolute, prismatic, screw)")
            names.append(j.name)
        joint, primary = names
        if joint == primary:
            raise ModelError(f"add_mimic: joint {joint!r} cannot mimic itself")
        taken = {c.joint: c for c in self._mimics}
        if joint in taken:
            raise ModelError(f"add_mimic: joint {joint!r} already mimics "
                             f"{taken[joint].primary!r}")
        if primary in taken:
            raise ModelError(
                f"add_mimic: primary {primary!r} is itself a mimic joint (of "
                f"{taken[primary].primary!r}); couple {joint!r} to {taken[primary].primary!r}")
        if any(c.primary == joint for c in self._mimics):
            raise ModelError(f"add_mimic: joint {joint!r} is the primary of another mimic "
                             "joint; a primary keeps its own coordinate")
        values = []
        for value, what in ((multiplier, "multiplier"), (offset, "offset")):
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer,
                                                                  np.floating)) \
                    or not np.isfinite(value):
                raise ModelError(f"add_mimic: {what} of {joint!r} must be a finite number, "
                                 f"got {value!r}")
            values.append(float(value))
        mimic = Mimic(joint, primary, *values)
        self._mimics.append(mimic)
        self._touch()
        return mimic

    @property
    def mimics(self):
        """The coupled coordinates (:meth:`add_mimic`), a tuple of
        :class:`mbcourse.coupling.Mimic`."""
        return tuple(self._mimics)

    @property
    def coupling(self):
        """The map between the independent coordinates and the joints' own
        (:class:`mbcourse.coupling.Coupling`); None without mimic joints."""
        if not self._mimics:
            return None
        from .coupling import Coupling
        c = self.prepared("coupling", lambda: Coupling(self))
        if c.full.version != c.full_version:     # coupling.full was edited: built again
            del self._prepared["coupling"]
            c = self.prepared("coupling", lambda: Coupling(self))
        return c

    def uncoupled(self):
        """A copy whose mimic joints are independent joints again (the joints' own
        coordinates; e.g. the Panda's two fingers moving separately).

        Examples
        --------
        >>> import mbcourse as mb
        >>> m = mb.models.double_pendulum()
        >>> _ = m.add_mimic("B", "A")
        >>> m.nq, m.uncoupled().nq
        (1, 2)
        """
        return self._uncoupled(self.coupling) if self._mimics else self.copy()

    def _uncoupled(self, coupling):
        """The copy without couplings; force callables written for the independent
        coordinates are handed those (and a generalized force acts on its own joints)."""
        new = self.copy()
        new.__dict__["_mimics"] = []
        if coupling is None:
            return new
        def wrap(fn, generalized):
            if getattr(fn, "takes_full_coordinates", False):
                return fn
            return _reduced_state(fn, coupling, generalized)
        for load in new._loads:
            for key in ("force", "torque"):
                if callable(getattr(load, key)):
                    object.__setattr__(load, key, wrap(getattr(load, key), False))
        for element in new._generalized_forces:
            object.__setattr__(element, "fn", wrap(element.fn, True))
        return new

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
        if self._mimics:
            return list(self.coupling.q_names)
        return [f"{j.name}.{c}" for j in self._joints for c in j.coordinate_names]

    @property
    def qd_names(self):
        """Names of the generalized speeds (of ``qd``, ``qdd`` and ``tau``)."""
        if self._mimics:
            return list(self.coupling.qd_names)
        return [f"{j.name}.{c}" for j in self._joints for c in j.qd_names]

    @property
    def v_names(self):
        """Deprecated name of :attr:`qd_names` (kept for one release)."""
        _deprecated("Model.v_names", "Model.qd_names")
        return self.qd_names

    # ----------------------------------------------------- coordinates by name
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
        return _state.to_dict("q", q, self.nq, self.q_names)

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
        return self.check_q(_state.from_dict("q", values, self.q_names, self.neutral_q(),
                                            partial))

    def qd_to_dict(self, qd):
        """The generalized speeds as ``{name: value}`` with the names of :attr:`qd_names`.

        Examples
        --------
        >>> import mbcourse as mb
        >>> m = mb.Model()
        >>> _ = m.add_body("top", 1.0, [1.0, 1.0, 2.0])
        >>> _ = m.add_joint("ball", "spherical", "ground", "top")
        >>> m.qd_to_dict([0.0, 0.0, 3.0])
        {'ball.wx': 0.0, 'ball.wy': 0.0, 'ball.wz': 3.0}
        """
        return _state.to_dict("qd", qd, self.nv, self.qd_names)

    def qd_from_dict(self, values, partial=False):
        """The generalized speeds (..., nv) from ``{name: value}`` (names of
        :attr:`qd_names`); with ``partial=True`` missing speeds are zero.

        Examples
        --------
        >>> import mbcourse as mb
        >>> m = mb.models.double_pendulum()
        >>> m.qd_from_dict({"A.angle": [1.0, 2.0]}, partial=True).tolist()
        [[1.0, 0.0], [2.0, 0.0]]
        """
        return self.check_qd(_state.from_dict("qd", values, self.qd_names, np.zeros(self.nv),
                                            partial))

    # ----------------------------------------------------------------- summary
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
        return _summary.text(self)

    def __str__(self):
        return _summary.text(self)

    def _repr_html_(self):
        return _summary.html(self)

    def validate(self):
        """Check the model is complete: at least one joint, every body connected to the base
        (a :class:`~mbcourse.errors.TopologyError` names the bodies that hang in the air)."""
        _topology.validate(self)

    @property
    def graph(self):
        """The :class:`mbcourse.graph.Graph` of the model (i+ = parent, i- = child)."""
        return self.prepared("graph", lambda: _topology.build_graph(self))

    def _tree(self):
        """Traversal of the spanning tree from the base (prepared once per version): a list
        of ``(joint, forward)`` in parent-before-child order, ``forward`` telling whether
        the joint's parent is the body nearer the base."""
        return self.prepared("tree", lambda: _topology.traversal(self))

    tree_traversal = _tree

    def require_tree(self, method):
        """Return the graph, or raise ``TopologyError`` naming the joints that close loops
        (``method``: the name of the caller, for the message)."""
        return _topology.require_tree(self, method)

    def outward_joints(self, method):
        """Joints in base-to-leaves order for a recursion that walks outward from the base;
        ``TopologyError`` for closed loops (naming the joints that close them) and for
        joints whose child is nearer the base (``method`` names the recursion)."""
        return self.prepared(("outward_joints",), lambda: _topology.outward_joints(self, method))

    # ---------------------------------------------------------- state checks
    def check_q(self, q):
        """Validate a configuration of shape (..., nq); returns floats with unit
        quaternions (renormalized within ``QUATERNION_TOL``, refused beyond).
        See :func:`mbcourse.state.check_q`."""
        if self._mimics:
            c = self.coupling
            return c.reduce_q(c.full.check_q(c.q(q)))
        return _state.check_q(self, q)

    def check_qd(self, qd, name="qd"):
        """Validate generalized speeds (or accelerations: ``name``) of shape (..., nv)."""
        if self._mimics:
            return self.coupling.check(name, qd, True)
        return _state.check_qd(self, qd, name)

    def check_v(self, v, name="qd"):
        """Deprecated name of :meth:`check_qd` (kept for one release)."""
        _deprecated("Model.check_v", "Model.check_qd")
        return _state.check_qd(self, v, name)

    def check_tau(self, tau):
        """Validate generalized forces (``None`` means zero)."""
        if self._mimics:
            return np.zeros(self.nv) if tau is None else self.coupling.check("tau", tau, True)
        return _state.check_tau(self, tau)

    def check_state(self, q, qd=None, tau=None, *, qdd=None, t=0.0, qd_name="qd"):
        """The one input check of every public function: shapes (any leading batch), real
        finite numbers, unit quaternions; returns a :class:`~mbcourse.state.State` of arrays
        flattened to ``(B, n)``. See :func:`mbcourse.state.check_state`.

        Examples
        --------
        >>> import mbcourse as mb
        >>> s = mb.models.double_pendulum().check_state([[0.1, 0.2]] * 5, [0.0, 1.0])
        >>> s.q.shape, s.qd.shape, s.batch
        ((5, 2), (5, 2), (5,))
        """
        return _state.check_state(self, q, qd, tau, qdd=qdd, t=t, qd_name=qd_name)

    # ------------------------------------------- evaluation: checked wrappers
    def neutral_q(self):
        """The configuration with every joint at ``q = 0`` (identity quaternions)."""
        if self._mimics:
            return self.coupling.full.neutral_q()[self.coupling.iq]
        return np.concatenate([j.neutral() for j in self._joints]) if self._joints else np.zeros(0)

    def qdot(self, q, qd):
        """Derivative of the configuration, ``dq/dt`` (differs from ``qd`` for quaternions);
        see :func:`mbcourse.poses.qdot`."""
        return _poses.qdot(self, self.check_q(q), self.check_qd(qd))

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
        return _poses.normalize_q(self, _state.check_array("q", q, self.nq,
                                                           lambda: self.q_names))

    def body_poses(self, q, t=0.0):
        """Centre-of-mass positions ``r`` (..., n + 1, 3), inertial axes, and orientations
        ``A`` (..., n + 1, 3, 3), body axes to inertial axes, of all bodies (base included;
        ``t`` matters only with a prescribed base motion): :func:`mbcourse.poses.body_poses`."""
        return _poses.body_poses(self, self.check_q(q), t)

    def body_velocities(self, q, qd, t=0.0):
        """Centre-of-mass velocities and angular velocities, inertial axes.

        Returns
        -------
        vel : ndarray, shape (..., n + 1, 3)
        omega : ndarray, shape (..., n + 1, 3)
        """
        return _poses.body_velocities(self, self.check_q(q), self.check_qd(qd), t)

    def masses(self):
        """Masses of bodies 1..n, shape (n,)."""
        return self.prepared("masses", lambda: frozen([b.mass for b in self._bodies[1:]]))

    def inertias(self):
        """Central inertia tensors of bodies 1..n in body axes, shape (n, 3, 3)."""
        return self.prepared("inertias", lambda: frozen(
            np.array([b.inertia for b in self._bodies[1:]]).reshape(-1, 3, 3)))

    def kinetic_energy(self, q, qd, t=0.0):
        """Kinetic energy ``sum(m v^2 / 2 + omega^T J omega / 2)``, shape (...,)."""
        return _energy.kinetic_energy(self, self.check_q(q), self.check_qd(qd), t)

    def potential_energy(self, q, t=0.0):
        """Potential energy of gravity and of every spring, shape (...,).

        ``-sum(m g . r)`` plus ``stiffness (L - rest_length)^2 / 2`` of each
        :meth:`add_spring` and ``stiffness (q - rest)^2 / 2`` of each joint spring.
        """
        return _energy.potential_energy(self, self.check_q(q), t)

    def applied_wrenches(self, q=None, *, qd=None, t=0.0, poses=None, velocities=None,
                         orientations=None):
        """Resultant applied force and moment ``F, M`` (..., n + 1, 3) about each centre of
        mass, inertial axes: gravity, every :meth:`add_force` load and every
        :meth:`add_spring` spring-damper (:func:`mbcourse.forces.applied_wrenches` documents
        the parameters; ``qd=None`` means at rest)."""
        q = None if q is None else self.check_q(q)
        qd = None if qd is None else self.check_qd(qd)
        return _forces.applied_wrenches(self, q, qd, t, poses, velocities, orientations)

    def generalized_forces(self, q, qd=None, t=0.0):
        """Generalized forces of the joint springs and :meth:`add_generalized_force`
        callables, shape (..., nv) (zero when the model has none).

        Every formulation adds them to its ``tau``.
        """
        q = self.check_q(q)
        return _forces.generalized_forces(self, q, None if qd is None else self.check_qd(qd), t)

    def damping_power(self, q, qd, t=0.0):
        """Power of every damper, ``-sum c (dL/dt)^2 - sum c_j qd_j^2`` (<= 0), shape (...,).

        Along a motion without other non-conservative forces, ``d(T + U)/dt`` equals it.
        """
        return _forces.damping_power(self, self.check_q(q), self.check_qd(qd), t)

    def __repr__(self):
        return (f"Model({self.n} bodies, {self.m} joints, nq={self.nq}, nv={self.nv}, "
                f"gravity={self.gravity.tolist()})")
