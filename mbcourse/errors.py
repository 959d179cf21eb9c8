"""Exceptions of mbcourse.

Every bad input is refused at the boundary (``Model.add_*`` and the public
functions) with one of these classes. The message names the offending body,
joint or argument and says what would be valid, so that a student reading it
knows what to change.

All classes derive from :class:`MbcourseError`, so ``except mb.errors.MbcourseError``
catches everything the library raises on purpose. :class:`ShapeError` and
:class:`ModelError` also derive from :class:`ValueError`, so code written for
NumPy-style errors keeps working.

Examples
--------
>>> import mbcourse as mb
>>> model = mb.Model()
>>> model.add_body("arm", mass=-1.0, inertia=[1.0, 1.0, 1.0])
Traceback (most recent call last):
...
mbcourse.errors.ModelError: body 'arm': mass must be a non-negative finite number, got -1.0
"""

from __future__ import annotations

__all__ = [
    "MbcourseError",
    "ModelError",
    "TopologyError",
    "ShapeError",
    "SingularSystemError",
    "InconsistentStateError",
    "IntegrationError",
    "InertiaWarning",
    "STOPPED_HINT",
]


class MbcourseError(Exception):
    """Base class of every error raised on purpose by mbcourse."""


class ModelError(MbcourseError, ValueError):
    """A body, joint, force or parameter of a model is invalid.

    Examples: a negative mass, an inertia tensor that is not symmetric
    positive semi-definite or violates the triangle inequality, a zero joint axis,
    an unknown joint kind, a duplicate name.
    """


class InertiaWarning(UserWarning):
    """A body's inertia no rigid body can have (its principal moments violate the triangle
    inequality), accepted because the caller asked for it (``strict=False``: robot files
    in the wild have such inertias; their mass matrix may still be positive definite).

    Examples
    --------
    >>> import warnings, mbcourse as mb
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = mb.Model().add_body("link", 1.0, [1.0, 1.0, 3.0], strict=False)
    >>> print(caught[0].message)
    body 'link': inertia violates the triangle inequality of principal moments (3 > 1 + 1): no rigid body has this inertia; loaded as given (strict=True refuses it)
    """


class TopologyError(MbcourseError, ValueError):
    """The structure (graph) of a system does not suit the requested operation.

    Examples: a joint from a body to itself, a second joint between the same
    pair of bodies, a body connected to nothing, a closed loop given to a
    method that needs a tree.
    """


class ShapeError(MbcourseError, ValueError):
    """An array argument has the wrong shape or contains NaN or infinity."""


class SingularSystemError(MbcourseError, ArithmeticError):
    """A system of equations has no unique solution (singular mass or KKT matrix)."""


class InconsistentStateError(MbcourseError, ValueError):
    """A state violates the constraints it must satisfy (e.g. a closed loop that does not
    close, or velocities that break a loop), beyond the stated tolerance."""


class IntegrationError(MbcourseError, RuntimeError):
    """A time integration stopped before its end (the step size fell below the integrator's
    floor: a singular configuration, a stiff spring, or a tolerance the arithmetic cannot
    reach). The message says where it stopped and what to try (:data:`STOPPED_HINT`)."""


#: What to try when an integration stops early (appended to :class:`IntegrationError`).
STOPPED_HINT = ("A singular configuration (a joint along which no mass moves), a very stiff "
                "spring or a tolerance below about 1e-13 makes the step size collapse; try a "
                "looser rtol/atol, method='Radau' for stiff springs, or a shorter t_span")
