"""Chapter 2: equations of motion in absolute (Cartesian) coordinates.

Every body keeps its own coordinates, joints become constraint rows, reactions are the
Lagrange multipliers (Yudintsev section 2). This is the most general formulation of the
course: closed loops need nothing special.

* :mod:`.constraints` — elementary rows: point–plane, perpendicular (relative rotation),
  screw, planar point–line and rotation.
* :mod:`.system` — joints as rows (:meth:`mbcourse.joints.Joint.rows`), the prepared data
  (:func:`prepare`), the KKT system, ``forward_dynamics`` (contract), ``reactions``.
* :mod:`.solvers` — ``"dense"``, ``"schur"`` and ``"ldlt"`` (Baraff, no fill-in).
* :mod:`.simulate` — the index-1 DAE in absolute coordinates with Baumgarte
  stabilization, projection, and the way back to the Model's coordinates
  (``to_generalized``, ``consistent_state``).
"""

from . import constraints, simulate as simulation, solvers, system
from .solvers import block_pattern, fill_in, kkt_blocks, redundancy, tree_order
from .system import (BodyStates, Equations, Prepared, assemble, body_states, constraint_rows,
                     equations, forward_dynamics, is_planar, joint_accelerations, prepare,
                     reactions, solve, Solution)
from .simulate import (DEFAULT_BAUMGARTE, Simulation, consistent_state, project, rhs, simulate,
                       states_from_y, to_absolute, to_generalized)

__all__ = [
    "constraints", "solvers", "system",
    "forward_dynamics", "reactions", "solve", "Solution", "equations", "body_states",
    "constraint_rows",
    "prepare", "Prepared",
    "block_pattern", "tree_order", "is_planar", "joint_accelerations", "Equations", "BodyStates",
    "assemble", "fill_in", "kkt_blocks", "redundancy",
    "simulation", "simulate", "project", "rhs", "states_from_y", "to_absolute", "to_generalized",
    "consistent_state", "Simulation", "DEFAULT_BAUMGARTE",
]
