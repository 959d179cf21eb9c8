"""Every formulation still gives the answers it gave before the refactor of issue 26.

``tests/data/regression_snapshot.npz`` was written by ``tools/regression_snapshot.py`` with the
code as it stood before the Model/data split and the chapter kernels (commit cec9083): 158
answers (forward and inverse dynamics, mass matrices, momenta, energies, poses) of eleven
models, three states each. A refactor must reproduce each to 1e-12 relative to the entry's
size; a deliberate change of an answer needs a new snapshot and a reason in its commit.
"""

import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import regression_snapshot  # noqa: E402

SNAPSHOT = np.load(ROOT / "tests" / "data" / "regression_snapshot.npz")


@pytest.fixture(scope="module")
def current():
    return regression_snapshot.snapshot()


def test_the_snapshot_covers_every_route_and_model(current):
    routes = {k.split("/")[1] for k in SNAPSHOT.files}
    assert routes == {name for name, _ in regression_snapshot.routes()}
    assert len(SNAPSHOT.files) == 158
    assert set(current) == set(SNAPSHOT.files), "a route now refuses or accepts another model"


@pytest.mark.parametrize("key", SNAPSHOT.files)
def test_same_answer_as_before_the_refactor(current, key):
    old, new = SNAPSHOT[key], current[key]
    assert new.shape == old.shape
    scale = max(1.0, float(np.abs(old).max()))
    err = float(np.abs(new - old).max())
    assert err <= 1e-12 * scale, f"{key}: max |difference| {err:.3g} (tolerance {1e-12 * scale:.3g})"
