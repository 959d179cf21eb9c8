"""The compiled kernels' former single module: the names it exported, now in
:mod:`mbcourse.kernels` (one module per chapter, one front door :func:`~mbcourse.kernels.route`).

Kept so that ``mb.compiled.<name>`` (the book, the benchmarks, older code) keeps working.

Examples
--------
>>> import mbcourse as mb
>>> mb.compiled.vereshchagin_forward is mb.kernels.vereshchagin.vereshchagin_forward
True
"""

from __future__ import annotations

from .kernels import (COMPILE_NOTE, PARALLEL_BATCH, PRISMATIC, REVOLUTE, WELD, batch,
                      fast_arrays, model_data, pack_chain, route, state_arrays)
from .kernels.cartesian import cartesian_forward
from .kernels.common import cholesky_solve
from .kernels.composite import composite_forward as tree_forward
from .kernels.composite import composite_matrices as tree_matrices
from .kernels.loops import loops_forward
from .kernels.poisson import ivanov_cholesky_solve, ivanov_sweep_solve
from .kernels.vereshchagin import vereshchagin_forward

__all__ = ["REVOLUTE", "PRISMATIC", "WELD", "pack_chain", "model_data", "fast_arrays",
           "state_arrays", "run", "route", "PARALLEL_BATCH", "cartesian_forward",
           "loops_forward", "vereshchagin_forward", "tree_forward", "tree_matrices",
           "cholesky_solve", "ivanov_sweep_solve", "ivanov_cholesky_solve", "COMPILE_NOTE"]


def run(kernel, data, q, qd, tau, qdd, gravity=True):
    """Call a tree kernel (``kernel(ints, geo, body, q, qd, tau, qdd)``) with a model's
    :func:`model_data` on a batch, on every core when the batch has at least
    :data:`PARALLEL_BATCH` configurations; ``gravity=False`` switches gravity off."""
    return batch(kernel, data.args(gravity), q, qd, tau, qdd)
