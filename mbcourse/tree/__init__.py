"""Chapter 3: tree systems in generalized coordinates (Wittenburg; Yudintsev 3.1–3.4).

* :mod:`.general` — general joints through d'Alembert's principle, ``A qdd = B``
  (3.95)–(3.167): the **contract** functions ``mass_matrix``, ``forward_dynamics``,
  ``inverse_dynamics`` and the driven coordinates ``driven`` (3.92)–(3.94).
* :mod:`.barycentre` — augmented bodies and barycentres: ``d_ij`` (3.13), ``b_ij``
  (3.19)–(3.20), ``K_i`` (3.24), the MATLAB helpers ``GetBaricenterVectors`` and ``Get_b``
  (erratum E13), and their free-floating versions (3.55)–(3.65).
* :mod:`.spherical` — Wittenburg's ``K`` form, ``sum_j K_ij domega_j = ...``
  (3.31)–(3.34), attached to a body with prescribed motion, projected on the joint axes
  (3.89)–(3.91); sliding joints through the actual hinge vectors ``c + z(q)``.
* :mod:`.floating` — free-floating systems about their centre of mass (3.44)–(3.69).
* :mod:`.planar` — planar systems with parallel revolute axes, ``A ddphi + B dphi^2 = R``
  (3.36)–(3.43) with the corrections of erratum E16.

Every module builds its per-model constants in a public ``prepare(model)`` (once per model
version) and has the one signature ``forward_dynamics(model, q, qd, tau=None, *, t=0.0)``;
every formulation sees the model's force elements (springs, dampers, joint springs, loads
and generalized forces given as functions of ``(t, q, qd)``). ``simulate`` integrates with
:func:`.general.forward_dynamics` (the one ``simulate`` signature of :mod:`mbcourse.sim`).
"""

from . import barycentre, floating, general, planar, spherical
from .general import (TreeTerms, bias_forces, driven, equations_from_terms, forward_dynamics,
                      forward_dynamics_composite, inverse_dynamics, jacobians, mass_matrix,
                      prepare, terms)
from ..sim import simulator as _simulator

#: ``simulate(model, t_span, q0, qd0=None, tau=None, *, method, rtol, atol, t_eval,
#: **options)``: :func:`mbcourse.sim.simulate` with :func:`forward_dynamics` (the signature
#: of every formulation's ``simulate``), returning a :class:`mbcourse.sim.Trajectory`.
simulate = _simulator(forward_dynamics, "mb.tree.simulate")

__all__ = ["barycentre", "floating", "general", "planar", "spherical", "TreeTerms", "prepare",
           "terms", "mass_matrix", "bias_forces", "forward_dynamics",
           "forward_dynamics_composite", "inverse_dynamics",
           "driven", "jacobians", "equations_from_terms", "simulate"]
