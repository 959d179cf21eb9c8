"""mb.viz.draw: the drawing is the model's own kinematics, labelled, with named errors."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import mbcourse as mb  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _points(ax):
    return np.concatenate([np.column_stack(line.get_data()) for line in ax.lines])


def test_double_pendulum_drawn_at_its_pose():
    model = mb.models.double_pendulum()
    q = np.array([0.4, -1.1])
    ax = mb.viz.draw(model, q, plane="xy")
    r, A = model.body_poses(q)
    pts = _points(ax)
    # every centre of mass and every joint point appears among the drawn vertices
    for b in (1, 2):
        assert np.min(np.linalg.norm(pts - r[b, :2], axis=1)) < 1e-12
    for j in model.joints:
        p = r[j.child] + A[j.child] @ j.child_point
        assert np.min(np.linalg.norm(pts - p[:2], axis=1)) < 1e-12
    names = {t.get_text() for t in ax.texts}
    assert {"rod1", "rod2", "A", "B"} <= names or {b.name for b in model.bodies[1:]} <= names


def test_plane_projection_and_3d():
    model = mb.models.spatial_manipulator()
    q = np.array([0.3, 0.5, -0.7])
    r, _ = model.body_poses(q)
    ax = mb.viz.draw(model, q, plane="xz", labels=False)
    pts = _points(ax)
    assert np.min(np.linalg.norm(pts - r[3, [0, 2]], axis=1)) < 1e-12
    assert ax.get_xlabel() == "x [m]" and ax.get_ylabel() == "z [m]"
    ax3 = plt.figure().add_subplot(projection="3d")
    assert mb.viz.draw(model, q, ax=ax3) is ax3


def test_bad_input_named():
    model = mb.models.double_pendulum()
    with pytest.raises(mb.errors.ModelError, match="plane"):
        mb.viz.draw(model, [0.0, 0.0], plane="xw")
    with pytest.raises(mb.errors.ShapeError):
        mb.viz.draw(model, [0.0, 0.0, 0.0])
    with pytest.raises(mb.errors.ShapeError, match="one configuration"):
        mb.viz.draw(model, np.zeros((3, 2)))
    with pytest.raises(mb.errors.ShapeError, match="finite"):
        mb.viz.draw(model, [np.nan, 0.0])


def test_every_library_model_draws():
    for name in ("four_bar", "crank_slider", "floating_spacecraft", "solar_array",
                 "telegin_polar", "n_four_bar", "alyushin_robot", "flyball_governor"):
        model = getattr(mb.models, name)()
        ax = mb.viz.draw(model)
        assert len(ax.lines) >= model.n


def test_poses_instead_of_q():
    model = mb.models.double_pendulum()
    r, A = model.body_poses(np.array([0.3, 0.2]))
    r = r.copy()
    r[2] += [0.01, 0.0, 0.0]          # a drifted absolute state: the hinge opens
    ax = mb.viz.draw(model, poses=(r, A))
    pts = _points(ax)
    assert np.min(np.linalg.norm(pts - r[2, :2], axis=1)) < 1e-12
    with pytest.raises(mb.errors.ShapeError, match="poses"):
        mb.viz.draw(model, poses=(r[:2], A))
