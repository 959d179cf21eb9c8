"""mbcourse: dynamics of rigid-body systems, one Model and many formulations.

>>> import mbcourse as mb
>>> model = mb.Model(gravity=(0.0, -9.81, 0.0))
>>> model
Model(0 bodies, 0 joints, nq=0, nv=0, gravity=[0.0, -9.81, 0.0])
"""

from . import (accuracy, cartesian, compiled, contact, errors, grading, graph, inertial, joints,
               kinematics, kinetic, loops, models, poisson, sim, spatial, symbolic, tree,
               urdf, vereshchagin, viz)
from .errors import (InconsistentStateError, MbcourseError, ModelError, ShapeError,
                     SingularSystemError, TopologyError)
from .model import (JOINT_KINDS, BaseMotion, Body, Contact, GeneralizedForce, Joint, JointLimit,
                    JointSpring, Load, Model, Spring, State)

__version__ = "0.1.0"

__all__ = [
    "Model", "Body", "Joint", "Load", "Spring", "JointSpring", "GeneralizedForce", "BaseMotion",
    "JointLimit", "Contact",
    "State", "JOINT_KINDS",
    "accuracy", "cartesian", "compiled", "contact", "errors", "grading", "graph", "inertial", "joints",
    "kinematics", "kinetic", "loops", "models", "poisson", "sim", "spatial", "symbolic", "tree",
    "urdf", "vereshchagin", "viz",
    "MbcourseError", "ModelError", "TopologyError", "ShapeError", "SingularSystemError",
    "InconsistentStateError",
]
