"""Real robots: a URDF file read into a :class:`~mbcourse.Model`.

URDF (the Unified Robot Description Format of ROS) describes a robot as *links* (rigid
bodies with an ``<inertial>``: mass, centre of mass and inertia tensor in the link's
frame) joined by *joints* (a pose of the joint frame in the parent link's frame, an axis
in the joint frame, a kind). The course's Model describes the same tree with the bodies'
centres of mass as origins (Wittenburg's convention), so the translation is short:

* the body of a link keeps the **link's axes**; its origin moves to the centre of mass
  ``c`` (so a URDF link frame is the point ``-c`` of its body, axes unchanged), and the
  inertia tensor is turned into link axes, ``R I R^T``;
* a joint with origin ``(p, R)`` in the parent link and axis ``a`` becomes
  ``parent_point = p - c_parent``, ``child_point = -c_child``, ``axis = R a`` (parent axes)
  and ``orientation = R``; URDF's child frame at ``q`` is ``R Rot(a, q)`` =
  ``Rot(R a, q) R``, which is the Model's ``rotation(q) = Rot(axis, q) orientation``;
* a ``fixed`` joint merges its child into the parent (masses, centres and inertias added,
  as Pinocchio does); the merged link stays reachable as a *frame* (below), so the Panda's
  massless ``panda_hand_tcp`` is a frame, not a body;
* with ``floating_base=False`` the root link is the ground (its inertia carries no
  dynamics), with ``floating_base=True`` it is a body on a ``free`` joint named
  ``root_joint`` whose coordinates are the root link frame's position and quaternion;
* ``continuous`` is a revolute joint, ``floating`` a free joint; ``planar`` joints are
  refused (the Model has no planar joint), naming the joint;
* a ``<mimic>`` joint is a coupled coordinate, ``q_j = multiplier q_i + offset``
  (:meth:`~mbcourse.Model.add_mimic`): the Panda has ``nq = nv = 8``, as Pinocchio built with
  ``mimic=True``; ``mimic=False`` loads it as an independent joint (Pinocchio's default).

What the Model does not use is kept in ``model.parameters["urdf"]``: the robot's name, the
file, every link's frame (``links[name] = (body, point, rotation)``: the body carrying it,
the link origin in body axes from the centre of mass, the link axes in body axes), joint
limits and damping, mimic relations, and the visual and collision geometry (primitives
with their pose in body axes, meshes by file name) for drawing.

The parser is the standard library's ``xml.etree.ElementTree``: URDF is a dozen element
kinds, and a dependency such as yourdfpy would bring trimesh, lxml and network-fetching
mesh loaders into a course environment that needs none of them.

Two robots ship with the package (their URDF files and the Panda's nine collision meshes,
128 kB; Apache-2.0, from example-robot-data 6.0.0, see ``mbcourse/robots/NOTICE.md``): the
Franka Emika Panda (7 arm joints and two prismatic fingers) and the SO-100 desktop arm (6
revolute joints). Installing example-robot-data instead would add 131 MB of wheel (414 MB
installed); when it is installed, :func:`example_robot_data` finds its 69 robot files and
:func:`mesh_path` their meshes.

Robot files in the wild have links without mass (a hip of three revolute joints with two
massless links between them), point masses (a mass without inertia) and inertias no rigid
body can have; they load as given (see :func:`load`, ``strict``).

Examples
--------
>>> import numpy as np, mbcourse as mb
>>> panda = mb.urdf.robot("panda")
>>> panda.n, panda.nv, [j.name for j in panda.joints][:2]   # the second finger mimics the first
(9, 8, ['panda_joint1', 'panda_joint2'])
>>> panda.mimics
(Mimic('panda_finger_joint2' = 1 * 'panda_finger_joint1' + 0),)
>>> body, point, axes = panda.parameters["urdf"]["links"]["panda_hand_tcp"]
>>> body
'panda_link7'
>>> r, R = mb.kinematics.frame_pose(panda, np.zeros(panda.nq), body, point)
>>> r.round(4)                      # the tool centre point at the zero pose
array([ 0.088 ,  0.    ,  0.8226])
"""

from __future__ import annotations

import os
import pathlib
import warnings
import xml.etree.ElementTree as ET

import numpy as np

from .errors import InertiaWarning, ModelError
from .model import Model

__all__ = ["load", "robot", "robot_path", "ROBOTS", "link_pose", "rpy_matrix",
           "example_robot_data", "mesh_path"]

_ROBOT_DIR = pathlib.Path(__file__).parent / "robots"

#: Robots shipped with the package: name -> URDF file in ``mbcourse/robots``.
ROBOTS = {"panda": "panda.urdf", "so100": "so100.urdf"}

_KINDS = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic",
          "floating": "free", "fixed": None}


def robot_path(name):
    """Path of a shipped robot's URDF file (``"panda"`` or ``"so100"``)."""
    if not isinstance(name, str) or name not in ROBOTS:
        raise ModelError(f"unknown robot {name!r}; shipped robots: {sorted(ROBOTS)} "
                         "(load any other file with mb.urdf.load(path))")
    return _ROBOT_DIR / ROBOTS[name]


def example_robot_data():
    """The ``robots`` folder of the ``example-robot-data`` package (69 URDF files of real
    robots, with their meshes) when it is installed, else None. It is found from the
    package's installed files, without importing it (its Python module needs Pinocchio;
    ``pip install --no-deps example-robot-data`` brings the files alone).

    Examples
    --------
    >>> import mbcourse as mb
    >>> folder = mb.urdf.example_robot_data()
    >>> folder is None or (folder / "ur_description" / "urdf" / "ur5_robot.urdf").is_file()
    True
    """
    from importlib import metadata

    try:
        dist = metadata.distribution("example-robot-data")
    except metadata.PackageNotFoundError:
        return None
    for file in dist.files or ():
        parts = file.parts
        if "example-robot-data" in parts and parts[-1].endswith(".urdf"):
            head = parts[:parts.index("example-robot-data") + 1]
            folder = pathlib.Path(dist.locate_file(pathlib.PurePosixPath(*head))) / "robots"
            return folder if folder.is_dir() else None
    return None


def mesh_path(filename, source=None):
    """The file a URDF ``<mesh filename=...>`` names, or None when it is not on this machine.

    * ``package://example-robot-data/robots/<rest>``: the copy shipped with mbcourse (the
      Panda's collision meshes) or, when example-robot-data is installed, its file
      (:func:`example_robot_data`);
    * ``package://<name>/<rest>``: ``<rest>`` under the nearest folder called ``<name>``
      above the URDF file ``source`` (how ROS packages sit on disk);
    * ``file://<path>``, an absolute path, or a path relative to the URDF file's folder.

    Parameters
    ----------
    filename : str
        The ``filename`` attribute.
    source : str or path-like, optional
        The URDF file (``model.parameters["urdf"]["source"]``); needed for relative paths
        and for ``package://`` names other than example-robot-data.

    Examples
    --------
    >>> import mbcourse as mb
    >>> name = "package://example-robot-data/robots/panda_description/meshes/collision/link0.stl"
    >>> mb.urdf.mesh_path(name).name
    'link0.stl'
    >>> mb.urdf.mesh_path("package://nowhere/mesh.stl") is None
    True
    """
    if not isinstance(filename, str) or not filename:
        return None
    here = None
    if source is not None and not str(source).lstrip().startswith("<"):
        here = pathlib.Path(source).resolve().parent
    candidates = []
    if filename.startswith("package://"):
        package, _, rest = filename[len("package://"):].partition("/")
        if package == "example-robot-data" and rest.startswith("robots/"):
            tail = rest[len("robots/"):]
            candidates.append(_ROBOT_DIR / "meshes" / tail.replace("/meshes/", "/", 1))
            folder = example_robot_data()
            if folder is not None:
                candidates.append(folder / tail)
        for parent in (here.parents if here is not None else ()):
            if parent.name == package:
                candidates.append(parent / rest)
                break
    elif filename.startswith("file://"):
        candidates.append(pathlib.Path(filename[len("file://"):]))
    else:
        path = pathlib.Path(filename)
        candidates.append(path if path.is_absolute() or here is None else here / path)
    return next((c for c in candidates if c.is_file()), None)


def robot(name, floating_base=False, gravity=(0.0, 0.0, -9.81), *, strict=False, mimic=True,
          limits=False, restitution=0.0):
    """A shipped robot as a Model: ``"panda"`` (9 joints, the second finger a mimic joint:
    ``nq = nv = 8``) or ``"so100"`` (6 joints).

    See :func:`load` for the arguments.

    Examples
    --------
    >>> import mbcourse as mb
    >>> arm = mb.urdf.robot("so100")
    >>> [j.name for j in arm.joints]
    ['shoulder_pan', 'shoulder_lift', 'elbow_flex', 'wrist_flex', 'wrist_roll', 'gripper']
    """
    return load(robot_path(name), floating_base=floating_base, gravity=gravity, strict=strict,
                mimic=mimic, limits=limits, restitution=restitution)


# ----------------------------------------------------------------- small geometry
def rpy_matrix(rpy):
    """URDF's fixed-axis roll, pitch, yaw: ``R = Rz(yaw) Ry(pitch) Rx(roll)``.

    Examples
    --------
    >>> import numpy as np
    >>> rpy_matrix([0.0, 0.0, np.pi / 2]).round(12) + 0.0
    array([[ 0., -1.,  0.],
           [ 1.,  0.,  0.],
           [ 0.,  0.,  1.]])
    """
    r, p, y = (float(v) for v in rpy)
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _numbers(element, attr, count, what, default=None):
    text = element.get(attr) if element is not None else None
    if text is None:
        if default is None:
            raise ModelError(f"{what}: missing attribute {attr!r} ({count} numbers)")
        return np.array(default, dtype=float)
    try:
        values = np.array([float(v) for v in text.split()], dtype=float)
    except ValueError:
        raise ModelError(f"{what}: {attr}={text!r} is not {count} numbers") from None
    if values.shape != (count,) or not np.all(np.isfinite(values)):
        raise ModelError(f"{what}: {attr}={text!r} must be {count} finite numbers")
    return values


def _origin(element, what):
    """(xyz, R) of an optional ``<origin>`` child (identity when absent)."""
    origin = element.find("origin") if element is not None else None
    if origin is None:
        return np.zeros(3), np.eye(3)
    return (_numbers(origin, "xyz", 3, f"{what} <origin>", (0.0, 0.0, 0.0)),
            rpy_matrix(_numbers(origin, "rpy", 3, f"{what} <origin>", (0.0, 0.0, 0.0))))


# ----------------------------------------------------------------- parsing
class _Link:
    def __init__(self, element):
        self.name = element.get("name")
        what = f"link {self.name!r}"
        self.mass, self.com, self.inertia = 0.0, np.zeros(3), np.zeros((3, 3))
        inertial = element.find("inertial")
        if inertial is not None:
            mass = inertial.find("mass")
            self.mass = float(_numbers(mass, "value", 1, f"{what} <mass>")[0]) \
                if mass is not None else 0.0
            if self.mass < 0.0:
                raise ModelError(f"{what}: negative mass {self.mass}")
            xyz, R = _origin(inertial, f"{what} <inertial>")
            tensor = inertial.find("inertia")
            I = np.zeros((3, 3))
            if tensor is not None:
                names = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
                v = {}
                for key in names:
                    try:
                        v[key] = float(tensor.get(key, "0"))
                    except ValueError:
                        raise ModelError(f"{what} <inertia>: {key}={tensor.get(key)!r} "
                                         "is not a number") from None
                I = np.array([[v["ixx"], v["ixy"], v["ixz"]],
                              [v["ixy"], v["iyy"], v["iyz"]],
                              [v["ixz"], v["iyz"], v["izz"]]])
                if not np.all(np.isfinite(I)):
                    raise ModelError(f"{what} <inertia> must be finite")
            self.com, self.inertia = xyz, R @ I @ R.T
        self.shapes = []
        for role in ("visual", "collision"):
            for item in element.findall(role):
                shape = _shape(item, f"{what} <{role}>")
                if shape is not None:
                    shape["role"] = role
                    self.shapes.append(shape)


def _shape(item, what):
    geometry = item.find("geometry")
    if geometry is None or len(geometry) == 0:
        return None
    g = geometry[0]
    xyz, R = _origin(item, what)
    shape = {"position": xyz, "rotation": R}
    if g.tag == "box":
        shape.update(type="box", size=_numbers(g, "size", 3, f"{what} <box>"))
    elif g.tag == "cylinder":
        shape.update(type="cylinder",
                     radius=float(_numbers(g, "radius", 1, f"{what} <cylinder>")[0]),
                     length=float(_numbers(g, "length", 1, f"{what} <cylinder>")[0]))
    elif g.tag == "sphere":
        shape.update(type="sphere",
                     radius=float(_numbers(g, "radius", 1, f"{what} <sphere>")[0]))
    elif g.tag == "mesh":
        shape.update(type="mesh", filename=g.get("filename", ""),
                     scale=_numbers(g, "scale", 3, f"{what} <mesh>", (1.0, 1.0, 1.0)))
    else:
        return None
    material = item.find("material")
    if material is not None:
        colour = material.find("color")
        shape["material"] = material.get("name")
        if colour is not None:
            shape["rgba"] = _numbers(colour, "rgba", 4, f"{what} <color>", (0.7, 0.7, 0.7, 1))
    return shape


class _Joint:
    def __init__(self, element, links):
        self.name = element.get("name")
        what = f"joint {self.name!r}"
        if not self.name:
            raise ModelError("a URDF <joint> has no name attribute")
        self.type = element.get("type")
        if self.type not in _KINDS:
            valid = sorted(_KINDS)
            if self.type == "planar":
                raise ModelError(f"{what} is planar, which the Model cannot express (valid "
                                 f"URDF types: {valid}); build that body with "
                                 "mb.Model.add_joint instead")
            raise ModelError(f"{what} has type {self.type!r}; valid URDF types: {valid}")
        for role in ("parent", "child"):
            tag = element.find(role)
            link = tag.get("link") if tag is not None else None
            if link is None:
                raise ModelError(f"{what}: missing <{role} link=...>")
            if link not in links:
                raise ModelError(f"{what}: its {role} link {link!r} is not defined in the file")
            setattr(self, role, link)
        self.xyz, self.R = _origin(element, what)
        axis = _numbers(element.find("axis"), "xyz", 3, f"{what} <axis>", (1.0, 0.0, 0.0))
        if self.type in ("revolute", "continuous", "prismatic"):
            norm = np.linalg.norm(axis)
            if norm < 1e-12:
                raise ModelError(f"{what}: <axis xyz> must be a nonzero direction, got "
                                 f"{axis.tolist()}")
            axis = axis / norm
        self.axis = axis
        limit = element.find("limit")
        self.limit = {key: float(limit.get(key)) for key in ("lower", "upper", "effort",
                                                                   "velocity")
                      if limit is not None and limit.get(key) is not None}
        dynamics = element.find("dynamics")
        self.dynamics = {key: float(dynamics.get(key)) for key in ("damping", "friction")
                         if dynamics is not None and dynamics.get(key) is not None}
        mimic = element.find("mimic")
        self.mimic = None if mimic is None else {
            "joint": mimic.get("joint"), "multiplier": float(mimic.get("multiplier", "1")),
            "offset": float(mimic.get("offset", "0"))}


def _parse(source):
    """The root element of a URDF file or text, and where it came from."""
    text_given = isinstance(source, str) and source.lstrip().startswith("<")
    if text_given:
        origin = "<string>"
        try:
            root = ET.fromstring(source)
        except ET.ParseError as exc:
            raise ModelError(f"URDF text is not well-formed XML: {exc}") from None
    else:
        path = _urdf_path(source)
        origin = str(path)
        try:
            root = ET.parse(path).getroot()
        except ET.ParseError as exc:
            raise ModelError(f"URDF file {origin!r} is not well-formed XML ({exc}); a URDF "
                             "file is XML text with a <robot> root element") from None
        except OSError as exc:
            raise ModelError(f"URDF file {origin!r} cannot be read: {exc.strerror or exc}") \
                from None
    if root.tag != "robot":
        raise ModelError(f"{origin}: the root element is <{root.tag}>, a URDF needs <robot> "
                         "(is this a URDF file?)")
    return _robot(root, origin)


def _urdf_path(source):
    """The path of a URDF file, checked: a non-empty path of an existing file."""
    if not isinstance(source, (str, os.PathLike)):
        raise ModelError(f"mb.urdf.load needs a file path or URDF text, got "
                         f"{type(source).__name__}")
    if isinstance(source, str) and not source.strip():
        raise ModelError(f"mb.urdf.load: the path is empty ({source!r}); give the path of a "
                         f"URDF file, URDF text (starting with '<'), or use mb.urdf.robot(name) "
                         f"for a shipped robot ({sorted(ROBOTS)})")
    path = pathlib.Path(source)
    if path.is_dir():
        found = sorted(p.name for p in path.glob("*.urdf"))[:10]
        raise ModelError(f"URDF path {str(path)!r} is a directory, not a file; give the path "
                         f"of a .urdf file" + (f" (this directory has {found})" if found else ""))
    if not path.is_file():
        raise ModelError(f"URDF file {str(path)!r} does not exist (shipped robots: "
                         f"mb.urdf.robot(name) with name in {sorted(ROBOTS)})")
    return path


def _robot(root, origin):
    """The robot's name, origin, links and joints from a parsed <robot> element."""
    links = {}
    for element in root.findall("link"):
        name = element.get("name")
        if not name:
            raise ModelError(f"{origin}: a <link> has no name attribute")
        if name in links:
            raise ModelError(f"{origin}: link {name!r} is defined twice")
        links[name] = _in_file(origin, _Link, element)
    if not links:
        raise ModelError(f"{origin}: the file defines no <link>")
    joints = []
    for element in root.findall("joint"):  # direct children only (not <transmission>'s)
        joints.append(_in_file(origin, _Joint, element, links))
    return root.get("name", ""), origin, links, joints


def _in_file(origin, parse, *args):
    """``parse(*args)`` with the file named in its ``ModelError``."""
    try:
        return parse(*args)
    except ModelError as exc:
        raise ModelError(f"{origin}: {exc}") from None


# ----------------------------------------------------------------- the tree
def _tree(links, joints, origin):
    parent_joint = {}
    names = set()
    for j in joints:
        if j.name in names:
            raise ModelError(f"{origin}: joint {j.name!r} is defined twice")
        names.add(j.name)
        if j.child in parent_joint:
            raise ModelError(f"{origin}: link {j.child!r} is the child of two joints "
                             f"({parent_joint[j.child].name!r} and {j.name!r}); URDF "
                             "describes trees, close loops with mb.Model.add_joint")
        parent_joint[j.child] = j
    roots = [name for name in links if name not in parent_joint]
    if len(roots) != 1:
        raise ModelError(f"{origin}: a URDF tree has one root link, found {len(roots)}: "
                         f"{roots if roots else 'none (the joints form a cycle)'}")
    children = {name: [] for name in links}
    for j in joints:
        children[j.parent].append(j)
    order, stack, seen = [], [roots[0]], set()
    while stack:  # depth first, children in file order
        name = stack.pop()
        seen.add(name)
        order.append(name)
        stack.extend(j.child for j in reversed(children[name]))
    if len(seen) != len(links):
        stray = sorted(set(links) - seen)
        raise ModelError(f"{origin}: links {stray} are not connected to the root "
                         f"{roots[0]!r} (the joints form a cycle)")
    return roots[0], order, parent_joint


def _composite(parts):
    """Mass, centre and central inertia of point-placed parts ``(m, c, I)``."""
    mass = sum(m for m, _, _ in parts)
    if mass <= 0.0:         # massless: a rotational inertia (if any) is the same about any point
        return 0.0, np.array(parts[0][1], dtype=float), sum(I for _, _, I in parts)
    centre = sum(m * c for m, c, _ in parts) / mass
    inertia = np.zeros((3, 3))
    for m, c, I in parts:
        d = c - centre
        inertia += I + m * (d @ d * np.eye(3) - np.outer(d, d))
    return mass, centre, inertia


def load(source, floating_base=False, gravity=(0.0, 0.0, -9.81), *, strict=False, mimic=True,
         limits=False, restitution=0.0):
    """Read a URDF robot into a :class:`~mbcourse.Model`.

    Parameters
    ----------
    source : str or path-like
        A URDF file, or URDF text (a string starting with ``<``).
    floating_base : bool
        ``False``: the root link is the ground (named as in the file). ``True``: the root
        link is a body on a free joint ``root_joint`` from a ground named ``"world"``
        (``"universe"`` if the root link is itself called ``"world"``).
    gravity : array_like, shape (3,)
        Gravity in the root link's axes (URDF robots stand on z up).
    strict : bool
        ``False`` (default): an inertia no rigid body can have (principal moments that
        violate the triangle inequality, as in several published robot files) is loaded
        with an :class:`~mbcourse.errors.InertiaWarning` naming the file, the link and the
        inequality. ``True``: refused (``ModelError``).
    mimic : bool
        ``True`` (default): a ``<mimic>`` joint's coordinate is coupled to its primary's
        (:meth:`~mbcourse.Model.add_mimic`), so ``nq`` and ``nv`` count the independent
        coordinates. ``False``: every joint keeps its own coordinate.
    limits : bool
        ``True``: every revolute and prismatic joint with ``<limit lower upper>`` gets
        :meth:`~mbcourse.Model.add_joint_limit` (continuous joints and mimic joints none,
        nor a ``<limit>`` whose lower bound is not below its upper one, which robot files use
        for "no limit"), enforced by :func:`mbcourse.contact.simulate`. ``False`` (default): the limits are
        only recorded in ``model.parameters["urdf"]["limits"]``.
    restitution : float
        The stops' coefficient of restitution with ``limits=True`` (in [0, 1]).

    Returns
    -------
    Model
        Bodies named as the URDF's moving links, joints as its non-fixed joints (in
        depth-first order from the root), ``model.parameters["urdf"]`` as described in
        the module docstring.

    Raises
    ------
    ModelError
        Naming the file, link or joint: an empty path, a directory or a missing file,
        malformed XML, a root element other than ``<robot>``, unknown links, two roots or a
        cycle, planar joints, a negative mass, an inertia that is not positive
        semi-definite (or, with ``strict=True``, one no rigid body can have);
        ``floating_base`` not a bool.

    Notes
    -----
    Links without mass (robot files build a spherical hip of three revolute joints with
    two massless links between them) and links with mass but no inertia (point masses)
    load as bodies of that mass and inertia. The O(n) recursion, the tree equations,
    Ivanov's sweep, the cut-joint method and chapter 2's dense KKT solve need only a
    positive-definite mass matrix; ``mb.cartesian`` with ``solver="schur"`` or ``"ldlt"``
    needs every body's own inertia positive definite and names the body that lacks it.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> text = '''<robot name="pendulum">
    ...   <link name="base"/>
    ...   <link name="rod"><inertial><origin xyz="0 0 -0.5"/><mass value="2"/>
    ...     <inertia ixx="0.2" iyy="0.2" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
    ...   <joint name="hinge" type="continuous"><parent link="base"/><child link="rod"/>
    ...     <origin xyz="0 0 1"/><axis xyz="0 1 0"/></joint>
    ... </robot>'''
    >>> m = mb.urdf.load(text)
    >>> m.joint("hinge").parent_point.tolist(), m.joint("hinge").child_point.tolist()
    ([0.0, 0.0, 1.0], [0.0, 0.0, 0.5])
    >>> mb.vereshchagin.forward_dynamics(m, [0.3], [0.0]).round(6)   # -m g l sin q / (I + m l^2)
    array([-4.141505])
    """
    for flag, value in (("floating_base", floating_base), ("strict", strict), ("mimic", mimic),
                        ("limits", limits)):
        if not isinstance(value, (bool, np.bool_)):
            raise ModelError(f"{flag} must be True or False, got {value!r}")
    name, origin, links, joints = _parse(source)
    root, order, parent_joint = _tree(links, joints, origin)
    owner = _owners(order, root, parent_joint)
    # the ground of a floating robot is "world", or Pinocchio's "universe" when the file
    # calls its root link "world" (the UR arms and the Z1 do)
    ground = ("world" if root != "world" else "universe") if floating_base else root
    model = Model(gravity=gravity, base=ground)
    centre = _add_bodies(model, _composites(order, owner, links), order, owner, parent_joint,
                         root, floating_base, origin, strict=bool(strict))
    if floating_base:
        model.add_joint("root_joint", "free", ground, root, child_point=-centre[root])
    mimics = _add_joints(model, order, owner, parent_joint, centre)
    for joint, relation in mimics.items() if mimic else ():
        if relation["joint"] not in model._joint_index:
            raise ModelError(f"{origin}: joint {joint!r}: <mimic joint="
                             f"{relation['joint']!r}> names no moving joint of the file; "
                             "load it with mimic=False to keep every joint independent")
        try:
            model.add_mimic(joint, relation["joint"], relation["multiplier"],
                            relation["offset"])
        except ModelError as exc:
            raise ModelError(f"{origin}: joint {joint!r}, <mimic>: {exc}") from None
    if limits:
        from .elements import restitution_value
        restitution_value(restitution, "mb.urdf.load: restitution")
        followers = {c.joint for c in model.mimics}
        for j in joints:
            if j.type in ("revolute", "prismatic") and j.name not in followers \
                    and "lower" in j.limit and "upper" in j.limit \
                    and j.limit["lower"] < j.limit["upper"]:
                try:
                    model.add_joint_limit(j.name, j.limit["lower"], j.limit["upper"],
                                          restitution=restitution)
                except ModelError as exc:
                    raise ModelError(f"{origin}: joint {j.name!r}, <limit>: {exc}") from None
    frames, shapes = _placements(order, owner, links, centre)
    model.parameters["urdf"] = {
        "name": name, "source": origin, "root": root, "floating_base": bool(floating_base),
        "links": frames, "shapes": shapes, "mimic": mimics,
        "limits": {j.name: j.limit for j in joints if j.limit},
        "dynamics": {j.name: j.dynamics for j in joints if j.dynamics},
    }
    return model


def _owners(order, root, parent_joint):
    """``owner[link] = (body link, xyz, R)``: the moving link whose body carries ``link``
    (fixed joints merge a link into its parent's body) and the link's place in it."""
    owner = {}
    for link in order:
        j = parent_joint.get(link)
        if link == root:
            owner[link] = (root, np.zeros(3), np.eye(3))
        elif j.type == "fixed":
            body, p, R = owner[j.parent]
            owner[link] = (body, p + R @ j.xyz, R @ j.R)
        else:
            owner[link] = (link, np.zeros(3), np.eye(3))
    return owner


def _composites(order, owner, links):
    """Mass, centre and central inertia of each body, from the links it carries."""
    parts = {}
    for link in order:
        body, p, R = owner[link]
        L = links[link]
        parts.setdefault(body, []).append((L.mass, p + R @ L.com, R @ L.inertia @ R.T))
    return {body: _composite(items) for body, items in parts.items()}


def _add_bodies(model, composite, order, owner, parent_joint, root, floating_base, origin,
                strict=False):
    """Add the moving bodies; their centres of mass in link axes (zero for the ground). A
    body without mass (a "virtual" link) or without inertia (a point mass) is added as it
    is: the recursions and the tree equations need only the mass matrix positive definite,
    and a joint that moves no mass at all is named when a formulation meets it."""
    centre = {}
    bodies = [root] if floating_base else []
    bodies += [link for link in order if link != root and owner[link][0] == link]
    for body in bodies:
        mass, c, inertia = composite[body]
        merged = [link for link in order if owner[link][0] == body and link != body]
        element = (f"link {body!r} <inertial>" if not merged else
                   f"link {body!r} <inertial> (with the links fixed to it: {merged})")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", InertiaWarning)
            try:
                model.add_body(body, mass, inertia, strict=strict)
            except ModelError as exc:
                raise ModelError(f"{origin}: {element}: "
                                 f"{str(exc).removeprefix(f'body {body!r}: ')}") from None
        for w in caught:
            if issubclass(w.category, InertiaWarning):
                text = str(w.message).removeprefix(f"body {body!r}: ")
                warnings.warn(f"{origin}: {element}: {text}", InertiaWarning,
                              stacklevel=3)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        centre[body] = c
    if not floating_base:
        centre[root] = np.zeros(3)
    return centre


def _add_joints(model, order, owner, parent_joint, centre):
    """Add the non-fixed joints in depth-first order; the mimic joints met."""
    mimics = {}
    for link in order:
        j = parent_joint.get(link)
        if j is None or j.type == "fixed":
            continue
        body, p, R = owner[j.parent]
        xyz, Rj = p + R @ j.xyz, R @ j.R
        kind = _KINDS[j.type]
        kwargs = {"orientation": Rj}
        if kind in ("revolute", "prismatic"):
            kwargs["axis"] = Rj @ j.axis
        model.add_joint(j.name, kind, body, link, parent_point=xyz - centre[body],
                        child_point=-centre[link], **kwargs)
        if j.mimic is not None:
            mimics[j.name] = j.mimic
    return mimics


def _placements(order, owner, links, centre):
    """Each link's frame ``(body, point, axes)`` in its body and the bodies' visual shapes."""
    frames = {}
    for link in order:
        body, p, R = owner[link]
        frames[link] = (body, p - centre[body], R)
    shapes = {}
    for link in order:
        body, p, R = owner[link]
        for shape in links[link].shapes:
            placed = dict(shape, link=link, position=R @ shape["position"] + p - centre[body],
                          rotation=R @ shape["rotation"])
            shapes.setdefault(body, []).append(placed)
    return frames, shapes


def link_pose(model, q, link, t=0.0):
    """Position and axes of a URDF link frame (also a fixed, merged one) at ``q``.

    Returns
    -------
    position : ndarray, shape (..., 3)
    rotation : ndarray, shape (..., 3, 3)
        Link axes to world axes.

    Examples
    --------
    >>> import numpy as np, mbcourse as mb
    >>> arm = mb.urdf.robot("so100")
    >>> r, R = mb.urdf.link_pose(arm, np.zeros(6), "gripper")
    >>> r.shape, R.shape
    ((3,), (3, 3))
    """
    from .kinematics import frame_pose

    info = model.parameters.get("urdf") if isinstance(model, Model) else None
    if info is None:
        raise ModelError("link_pose needs a Model loaded by mb.urdf.load (it has no URDF "
                         "links); use mb.kinematics.frame_pose(model, q, body, point)")
    if not isinstance(link, str) or link not in info["links"]:
        raise ModelError(f"unknown link {link!r}; links: {list(info['links'])}")
    body, point, axes = info["links"][link]
    r, R = frame_pose(model, q, body, point, t=t)
    return r, R @ axes
