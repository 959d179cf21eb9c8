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


def _gripper():
    """Chapter 1's gripper: two jaws hinged on the same pin at the arm's tip."""
    model = mb.Model(gravity=(0.0, -9.81, 0.0))
    for name in ("arm", "jawA", "jawB"):
        model.add_body(name, mass=1.0, inertia=[1e-3, 1 / 12, 1 / 12])
    z = (0.0, 0.0, 1.0)
    model.add_joint("shoulder", "revolute", parent="ground", child="arm",
                    child_point=(-0.5, 0.0, 0.0), axis=z)
    for jaw in ("jawA", "jawB"):
        model.add_joint(jaw, "revolute", parent="arm", child=jaw,
                        parent_point=(0.5, 0.0, 0.0), child_point=(-0.2, 0.0, 0.0), axis=z)
    return model


def _label_boxes(ax):
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return ({t.get_text(): t.get_window_extent(renderer) for t in ax.texts if t.get_text()},
            ax.get_window_extent(renderer))


@pytest.mark.parametrize("case", ["gripper", "gripper_then_equal", "four_bar"])
def test_labels_do_not_overprint_and_stay_inside(case):
    if case.startswith("gripper"):
        model, q = _gripper(), [0.5, 0.5, -0.5]
    else:
        model = mb.models.four_bar()
        q, _ = mb.models.four_bar_state(model, 0.6)
    fig, ax = plt.subplots(figsize=(6, 3.6))
    mb.viz.draw(model, q, ax=ax, plane="xy", hinge_vectors=True)
    if case == "gripper_then_equal":          # as chapter 1 uses it
        ax.set_aspect("equal")
        fig.tight_layout()
    boxes, frame = _label_boxes(ax)
    names = {b.name for b in model.bodies[1:]} | {j.name for j in model.joints}
    assert set(boxes) == names                 # every body and joint is labelled once
    items = list(boxes.items())
    for i, (a, box_a) in enumerate(items):
        for b, box_b in items[i + 1:]:
            assert not box_a.overlaps(box_b), f"labels {a!r} and {b!r} overprint"
        assert (frame.x0 <= box_a.x0 and box_a.x1 <= frame.x1 and frame.y0 <= box_a.y0
                and box_a.y1 <= frame.y1), f"label {a!r} leaves the axes"
    # a label stays next to what it names: within 60 points of its point
    r, A = model.body_poses(np.asarray(q, float))
    for k, j in enumerate(model.joints):
        p = ax.transData.transform((r[j.child] + A[j.child] @ j.child_point)[:2])
        box = boxes[j.name]
        nearest = np.clip(p, [box.x0, box.y0], [box.x1, box.y1])
        assert np.linalg.norm(nearest - p) < 60 * fig.dpi / 72


def test_animation_still_is_large_enough_to_print():
    """The PNG that stands for an animation in the PDF is at least 150 dpi and 1200 px wide."""
    import struct

    from matplotlib.animation import FuncAnimation

    fig, ax = plt.subplots(figsize=(6, 4), dpi=72)
    (line,) = ax.plot([], [])
    anim = FuncAnimation(fig, lambda i: line.set_data([0, i], [0, i]), frames=3)
    png = mb.viz.show_animation(anim)._repr_png_()
    width, height = struct.unpack(">II", png[16:24])
    assert width >= 1200 and height >= 800


def test_animation_player_before_its_script_runs():
    """A notebook fresh from git is not trusted: Jupyter shows its stored HTML without
    running any script. The player then shows its first frame (not a broken image), hides
    its dead buttons, and says in one line how to make it play; once the script runs, the
    controls appear and the line goes."""
    import base64
    import re

    from matplotlib.animation import FuncAnimation

    fig, ax = plt.subplots(figsize=(2, 2), dpi=30)
    (line,) = ax.plot([], [])
    anim = FuncAnimation(fig, lambda i: line.set_data([0, i], [0, i]), frames=4)
    html = mb.viz.show_animation(anim).data
    img = re.search(r'<img id="(_anim_img\w+)" src="data:image/png;base64,([^"]+)"', html)
    assert img is not None
    frame0 = re.search(r'frames\[0\] = "data:image/png;base64,([^"]+)"', html).group(1)
    assert img.group(2) == "".join(frame0.replace("\\", "").split())  # the first frame
    assert base64.b64decode(img.group(2))[:4] == b"\x89PNG"
    assert html.count('<div class="anim-controls" style="display:none">') == 1
    lines = re.findall(r'<div class="mbc-anim-untrusted">([^<]*)</div>', html)
    assert lines == ['Animation of 4 frames, not playing: the notebook is not trusted. Run this '
                     'cell, or trust the notebook (Command Palette: "Trust Notebook", or '
                     'jupyter trust NOTEBOOK.ipynb in a terminal).']
    tail = html[html.rindex("<script>"):]
    assert img.group(1) in tail and "e.style.display = ''" in tail
    assert mb.viz.until_trusted(html) == html                 # idempotent
