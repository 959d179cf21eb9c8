"""Deprecated: the compiled kernels' former single module. Its names now live in
:mod:`mbcourse.kernels` (one module per chapter, one front door
:func:`~mbcourse.kernels.route`); reading one here still works for this release and warns
with the new name.

Examples
--------
>>> import warnings, mbcourse as mb
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     f = mb.compiled.vereshchagin_forward
>>> f is mb.kernels.vereshchagin.vereshchagin_forward, caught[0].category.__name__
(True, 'DeprecationWarning')
>>> print(caught[0].message)
mbcourse.compiled.vereshchagin_forward is deprecated; use mbcourse.kernels.vereshchagin.vereshchagin_forward
"""

from __future__ import annotations

import importlib
import warnings

#: old name -> (module under mbcourse.kernels, its name there)
_MOVED = {
    **{name: ("", name) for name in ("REVOLUTE", "PRISMATIC", "WELD", "pack_chain",
                                     "model_data", "fast_arrays", "state_arrays", "route",
                                     "batch", "PARALLEL_BATCH", "COMPILE_NOTE")},
    "cartesian_forward": ("cartesian", "cartesian_forward"),
    "loops_forward": ("loops", "loops_forward"),
    "vereshchagin_forward": ("vereshchagin", "vereshchagin_forward"),
    "tree_forward": ("composite", "composite_forward"),
    "tree_matrices": ("composite", "composite_matrices"),
    "cholesky_solve": ("common", "cholesky_solve"),
    "ivanov_sweep_solve": ("poisson", "ivanov_sweep_solve"),
    "ivanov_cholesky_solve": ("poisson", "ivanov_cholesky_solve"),
}

__all__ = sorted(_MOVED) + ["run"]


def _new_name(module, name):
    return ".".join(filter(None, ("mbcourse.kernels", module, name)))


def __getattr__(name):
    if name not in _MOVED:
        raise AttributeError(f"module 'mbcourse.compiled' has no attribute {name!r}")
    module, new = _MOVED[name]
    warnings.warn(f"mbcourse.compiled.{name} is deprecated; use {_new_name(module, new)}",
                  DeprecationWarning, stacklevel=2)
    return getattr(importlib.import_module(".".join(filter(None, ("mbcourse.kernels",
                                                                  module)))), new)


def run(kernel, data, q, qd, tau, qdd, gravity=True):
    """Deprecated: :func:`mbcourse.kernels.batch` with ``data.args(gravity)``."""
    from .kernels import batch
    warnings.warn("mbcourse.compiled.run is deprecated; use "
                  "mbcourse.kernels.batch(kernel, data.args(gravity), q, qd, tau, qdd)",
                  DeprecationWarning, stacklevel=2)
    return batch(kernel, data.args(gravity), q, qd, tau, qdd)
