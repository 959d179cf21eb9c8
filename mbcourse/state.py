"""The one input check of every public function, and the checked :class:`State`.

A :class:`~mbcourse.model.Model` describes; the functions that evaluate it (:mod:`mbcourse.poses`,
:mod:`mbcourse.forces`, :mod:`mbcourse.energy` and every formulation's internals) take arrays
that were **already checked**, once, at the public entry. This module is that check (the split
of Pinocchio's ``Model``/``Data`` and of spatial_v2's ``model`` + ``jcalc``: the description is
validated when it is built, a state when it enters):

* :func:`check_q` -- configurations (..., nq): real, finite, unit quaternions (renormalized
  within ``mbcourse.joints.QUATERNION_TOL``, refused beyond);
* :func:`check_qd` -- speeds, accelerations or forces (..., nv): real and finite;
* :func:`check_tau` -- generalized forces (``None`` means zero);
* :func:`check_state` -- all of them together, broadcast to one batch and flattened into a
  :class:`State` whose :meth:`State.result` restores the batch shape.

``Model.check_q``, ``Model.check_qd``, ``Model.check_tau`` and ``Model.check_state`` call these.
A public function calls :func:`check_q` exactly once per call (``tests/test_checks_once.py``
counts it).

Examples
--------
>>> import mbcourse as mb
>>> from mbcourse.state import check_state
>>> m = mb.models.double_pendulum()
>>> s = check_state(m, [[0.1, 0.2]] * 3, [0.0, 1.0])
>>> s.q.shape, s.qd.shape, s.tau.shape, s.batch
((3, 2), (3, 2), (3, 2), (3,))
>>> check_state(m, [[0.1, 0.2], [0.3]])
Traceback (most recent call last):
...
mbcourse.errors.ShapeError: q must be an array of 2 numbers (A.angle, B.angle) or a batch of them; got a ragged list [[0.1, 0.2], [0.3]] (its rows differ in length)
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .errors import ShapeError, SingularSystemError
from .joints import as_array, normalize_quaternions

__all__ = ["State", "check_array", "check_q", "check_qd", "check_tau", "check_state", "to_dict",
           "from_dict"]


@dataclass
class State:
    """A checked state (see :func:`check_state`): arrays flattened to one batch axis.

    Attributes
    ----------
    q : (B, nq) with unit quaternions; qd, tau, qdd : (B, nv) or None
    batch : tuple
        The broadcast leading shape of the inputs (``()`` for single states).
    t : float
    """

    q: np.ndarray
    qd: np.ndarray | None
    tau: np.ndarray | None
    qdd: np.ndarray | None
    batch: tuple
    t: float
    model: object = None

    def result(self, out, what="the result"):
        """Reshape a (B, ...) result to ``batch + (...)``; refuse non-finite values with
        :class:`~mbcourse.errors.SingularSystemError` naming the likely cause."""
        out = np.asarray(out)
        if not np.all(np.isfinite(out)):
            item = int(np.argwhere(~np.isfinite(out.reshape(out.shape[0], -1)))[0, 0])
            speeds = 0.0 if self.qd is None else float(np.abs(self.qd[item]).max(initial=0.0))
            cause = (f"the speeds are too large to square (max |qd| = {speeds:.3g})"
                     if speeds > 1e100 else
                     "the mass matrix is singular at this configuration or the forces overflow")
            where = f" (batch item {np.unravel_index(item, self.batch)})" if self.batch else ""
            raise SingularSystemError(f"{what} is not finite{where}: {cause}")
        return out.reshape(self.batch + out.shape[1:])


def check_array(name, value, size, labels):
    """A real finite float array of shape (..., size), or ShapeError naming ``name`` and the
    coordinate; ``labels`` is a function giving the coordinate names (built only for a
    message)."""
    expected = f"an array of {size} numbers ({', '.join(labels()) or 'no coordinates'}) " \
               "or a batch of them"
    if np.iscomplexobj(as_array(value, name, expected)):
        raise ShapeError(f"{name} must be real numbers, got a complex array "
                         f"({', '.join(labels()) or 'no coordinates'})")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ShapeError(f"{name} must be an array of {size} numbers, got {value!r}") from None
    if arr.ndim == 0 or arr.shape[-1] != size:
        raise ShapeError(
            f"{name} must have shape ({size},) or (..., {size}) for this model "
            f"({', '.join(labels()) or 'no coordinates'}), got shape {arr.shape}"
        )
    bad = ~np.isfinite(arr)
    if bad.any():
        where = np.argwhere(bad)[0]
        idx = int(where[-1])
        raise ShapeError(
            f"{name}[{', '.join(map(str, where))}] ({labels()[idx]}) is {arr[tuple(where)]}: "
            "every entry must be finite"
        )
    return arr


def _refuse_coupled(model):
    """A model with mimic joints reaches the checks only through a function that does not
    take its independent coordinates (those that do run on ``model.coupling.full``)."""
    if getattr(model, "_mimics", None):
        from .coupling import caller, refusal
        raise refusal(model, caller())


def check_q(model, q):
    """A configuration of shape (..., nq) as floats with unit quaternions (renormalized
    within ``QUATERNION_TOL``, refused beyond): **the** check of every public entry."""
    _refuse_coupled(model)
    q = check_array("q", q, model.nq, lambda: model.q_names)
    joints = model.joints
    if model.prepared("has_quaternions", lambda: any(j.quaternion is not None for j in joints)):
        q = normalize_quaternions(joints, np.array(q), model.q_names)
    return q


def check_qd(model, qd, name="qd"):
    """Generalized speeds (or accelerations, forces: ``name`` says which) of shape
    (..., nv), real and finite."""
    _refuse_coupled(model)
    return check_array(name, qd, model.nv, lambda: model.qd_names)


def check_tau(model, tau):
    """Generalized forces of shape (..., nv); ``None`` means zero."""
    _refuse_coupled(model)
    if tau is None:
        return np.zeros(model.nv)
    return check_array("tau", tau, model.nv, lambda: model.qd_names)


def check_state(model, q, qd=None, tau=None, *, qdd=None, t=0.0, qd_name="qd"):
    """The one input check of every public function.

    Parameters
    ----------
    q : array_like, shape (..., nq)
    qd, tau, qdd : array_like, shape (..., nv), optional
        ``tau=None`` gives zeros; ``qd``/``qdd`` left ``None`` stay ``None``.
    t : float
    qd_name : str
        The name of ``qd`` in messages (``"p"`` where momenta take its place).

    Returns
    -------
    State
        Arrays broadcast to one common batch and flattened to ``(B, n)``;
        ``State.result`` restores the batch shape.

    Raises
    ------
    ShapeError
        Wrong last dimension, ragged lists, batch shapes that do not broadcast (naming
        both), complex, NaN or infinite entries (naming the coordinate), a time that is
        not a real number.
    InconsistentStateError
        A zero or far-from-unit quaternion (naming the joint).

    Examples
    --------
    >>> import mbcourse as mb
    >>> from mbcourse.state import check_state
    >>> m = mb.models.double_pendulum()
    >>> s = check_state(m, [[0.1, 0.2]] * 5, [0.0, 1.0])
    >>> s.q.shape, s.qd.shape, s.batch
    ((5, 2), (5, 2), (5,))
    >>> check_state(m, [[0.1, 0.2]] * 5, [[0.0, 1.0]] * 4)
    Traceback (most recent call last):
    ...
    mbcourse.errors.ShapeError: batch shapes do not match: q has shape (5, 2), qd has shape (4, 2)
    """
    if isinstance(t, bool) or not isinstance(t, numbers.Real) or not np.isfinite(t):
        raise ShapeError(f"t must be a finite real number (the time), got {t!r}")
    arrays = {"q": check_q(model, q)}
    for name, value in ((qd_name, qd), ("tau", tau), ("qdd", qdd)):
        if value is not None:
            arrays[name] = check_qd(model, value, name)
    try:
        batch = np.broadcast_shapes(*(a.shape[:-1] for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k} has shape {a.shape}" for k, a in arrays.items())
        raise ShapeError(f"batch shapes do not match: {shapes}") from None
    B = int(np.prod(batch, dtype=int))
    flat = {k: np.broadcast_to(a, batch + a.shape[-1:]).reshape(B, a.shape[-1])
            for k, a in arrays.items()}
    if "tau" not in flat:
        flat["tau"] = np.zeros((B, model.nv))
    return State(flat["q"], flat.get(qd_name), flat["tau"], flat.get("qdd"), tuple(batch),
                 float(t), model)


def to_dict(name, value, size, labels):
    """A checked array (..., size) as ``{label: value}`` (floats for one state, arrays for a
    batch)."""
    arr = check_array(name, value, size, lambda: labels)
    if arr.ndim == 1:
        return {label: float(x) for label, x in zip(labels, arr)}
    return {label: arr[..., k].copy() for k, label in enumerate(labels)}

def from_dict(name, values, labels, default, partial):
    """The array (..., len(labels)) of ``{label: value}``; missing labels take ``default``
    when ``partial``, otherwise they (and unknown ones) are a ShapeError naming them.
    Not yet checked: pass the result to :func:`check_q` or :func:`check_qd`."""
    if not isinstance(values, Mapping):
        raise ShapeError(f"{name} must be a dict {{coordinate name: value}} with the names "
                         f"{labels}, got {type(values).__name__}")
    unknown = [key for key in values if key not in labels]
    missing = [label for label in labels if label not in values]
    if unknown:
        raise ShapeError(f"{name}: unknown coordinate name(s) {unknown}; the names of this "
                         f"model are {labels}")
    if missing and not partial:
        raise ShapeError(f"{name}: missing coordinate(s) {missing}; give every one of "
                         f"{labels} or pass partial=True to default the missing ones to "
                         f"{'neutral_q()' if name == 'q' else 'zero'}")
    entries = []
    for k, label in enumerate(labels):
        value = values.get(label, default[k])
        if np.iscomplexobj(as_array(value, f"{name}[{label!r}]", "a number or an array")):
            raise ShapeError(f"{name}[{label!r}] must be real, got {value!r}")
        try:
            entries.append(np.asarray(value, dtype=float))
        except (TypeError, ValueError):
            raise ShapeError(f"{name}[{label!r}] must be a number (or an array of numbers "
                             f"for a batch), got {value!r}") from None
    try:
        batch = np.broadcast_shapes(*(e.shape for e in entries))
    except ValueError:
        shapes = {label: e.shape for label, e in zip(labels, entries) if e.shape}
        raise ShapeError(f"{name}: the values' shapes do not broadcast: {shapes}") from None
    if not entries:
        return np.zeros(0)
    return np.stack([np.broadcast_to(e, batch) for e in entries], axis=-1)
