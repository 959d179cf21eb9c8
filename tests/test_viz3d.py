"""mb.viz.view / animate3d: offline three.js views, checked in the HTML and in a real browser.

The browser test opens a page with two views in headless Chromium (software WebGL, no
network: every host resolves to nothing and the proxy points nowhere), reads the WebGL
canvas back at two times and checks the frames are drawn and differ; Chromium's net log
proves the page requested nothing but itself. Skipped when Chromium is not installed
(Debian/Ubuntu: ``apt-get install chromium``).
"""

from __future__ import annotations

import base64
import gzip
import importlib.util
import json
import re
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import mbcourse as mb
from mbcourse import viz3d
from mbcourse.errors import ModelError, ShapeError

ROOT = Path(__file__).resolve().parents[1]


def _checker():
    spec = importlib.util.spec_from_file_location("check_offline", ROOT / "tools" / "check_offline.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _data(html):
    return json.loads(re.search(r'class="mbc3d-data">(.*?)</script>', html, re.S).group(1))


@pytest.fixture(scope="module")
def pendulum():
    model = mb.models.triple_pendulum()
    traj = mb.sim.simulate(model, mb.tree.forward_dynamics, (0.0, 10.0), [1.0, 0.5, -0.3],
                           [0.0, 0.0, 0.0])
    return model, traj


def test_html_is_offline_and_carries_three_js(pendulum):
    model, traj = pendulum
    html = mb.viz.animate3d(model, traj).data
    libs = dict(re.findall(r'class="mbc3d-lib" data-file="([^"]+)">([^<]+)</script>', html))
    page = re.sub(r'(class="mbc3d-lib"[^>]*>)[^<]+', r"\1", html)   # base64 may hold "//"
    assert not re.search(r"https?:|//[a-z0-9]", page, re.I)   # no URL at all, not even a licence
    violations, _ = _checker().scan_html(html)
    assert violations == []
    # the inline library is exactly the vendored files
    assert sorted(libs) == sorted(viz3d._LIB_FILES)
    for name, b64 in libs.items():
        assert gzip.decompress(base64.b64decode(b64)) == (viz3d.THREEJS_DIR / name).read_bytes()
    version = (viz3d.THREEJS_DIR / "VERSION").read_text().split()[0]
    assert f'data-three="{version[len("three@"):]}"' in html
    assert (viz3d.THREEJS_DIR / "LICENSE").read_text().startswith("The MIT License")


def test_trajectory_embedded_resampled_and_light(pendulum):
    model, traj = pendulum
    html = mb.viz.animate3d(model, traj, fps=30).data
    d = _data(html)
    assert len(d["t"]) == 300 and d["t"][0] == 0 and d["t"][-1] == 10
    assert [b["name"] for b in d["bodies"]] == ["ground", "rod1", "rod2", "rod3"]
    assert len(d["bodies"][0]["r"]) == 3                       # the ground is stored once
    assert all(len(b["r"]) == 3 * 300 and len(b["q"]) == 4 * 300 for b in d["bodies"][1:])
    # Hermite resampling of the integrator's long steps matches the dense solution
    dense = mb.sim.simulate(model, mb.tree.forward_dynamics, (0.0, 10.0), [1.0, 0.5, -0.3],
                            [0.0, 0.0, 0.0], t_eval=np.linspace(0, 10, 300))
    r, A = model.body_poses(dense.q)
    got = np.array(d["bodies"][3]["r"]).reshape(-1, 3)
    assert np.abs(got - r[:, 3]).max() < 2e-3
    from scipy.spatial.transform import Rotation
    quat = np.array(d["bodies"][3]["q"]).reshape(-1, 4)
    assert np.allclose(Rotation.from_quat(quat).as_matrix(), A[:, 3], atol=2e-3)
    # page weight: the compressed library plus tens of kilobytes of poses
    data_bytes = len(re.search(r'class="mbc3d-data">(.*?)</script>', html).group(1))
    assert data_bytes < 60_000 and len(html) < 400_000
    lighter = mb.viz.animate3d(model, traj, embed_library=False).data
    assert 'class="mbc3d-lib"' not in lighter
    assert len(lighter) < 60_000


def test_pairs_of_arrays_and_limits():
    model = mb.models.double_pendulum()
    t = np.linspace(0.0, 100.0, 5001)
    Q = np.column_stack([np.sin(t), np.cos(t)])
    d = _data(mb.viz.animate3d(model, (t, Q), fps=60, max_frames=120).data)
    assert len(d["t"]) == 120
    d = _data(mb.viz.animate3d(model, (t[:7], Q[:7]), fps=100).data)  # few samples: as given
    assert d["t"] == [round(x, 4) for x in t[:7]]
    with pytest.raises(ShapeError, match="shape"):
        mb.viz.animate3d(model, (t, Q[:, :1]))
    with pytest.raises(ShapeError, match="increasing"):
        mb.viz.animate3d(model, (t[::-1], Q))
    with pytest.raises(ShapeError, match="Trajectory"):
        mb.viz.animate3d(model, 3.0)
    with pytest.raises(ShapeError):
        mb.viz.view(model, [0.0])


def test_still_view_inertia_boxes_and_visuals():
    model = mb.models.triple_pendulum()
    shown = mb.viz.view(model, [0.1, 0.2, 0.3])
    assert repr(shown).startswith("[3D view of 3 bodies")   # what a PDF or a terminal prints
    html = shown.data
    assert '<div class="mbc3d-bar"' not in html
    d = _data(html)
    assert len(d["t"]) == 1
    # the uniform box of mass 1 and unit principal moments: sides sqrt(6)
    box = d["bodies"][1]["solids"][0]
    assert box["k"] == "box" and np.allclose(box["d"], np.sqrt(6.0), atol=1e-6)
    assert d["bodies"][1]["points"] == [[-1, 0, 0], [1, 0, 0]]
    assert d["joints"][0]["axis"] == [0, 0, 1] and d["joints"][0]["base"]
    origin = np.eye(4)
    origin[:3, 3] = (0.5, 0.0, 0.0)
    visuals = {"rod2": [{"type": "cylinder", "radius": 0.05, "length": 2.0, "origin": origin},
                        {"type": "mesh", "filename": "package://arm/link.stl"},
                        {"type": "sphere", "radius": 0.1, "rgba": (1, 0, 0, 1)}]}
    d = _data(mb.viz.view(model, visuals=visuals).data)
    solids = d["bodies"][2]["solids"]
    assert [s["k"] for s in solids] == ["cylinder", "sphere"]
    assert solids[0]["r"] == [0.5, 0, 0] and solids[0]["d"] == [0.05, 2]
    assert d["bodies"][1]["solids"][0]["k"] == "box"             # others keep inertia boxes
    with pytest.raises(ModelError, match="unknown bodies"):
        mb.viz.view(model, visuals={"nope": []})
    with pytest.raises(ModelError, match="type must be"):
        mb.viz.view(model, visuals={"rod1": [{"type": "cone"}]})
    with pytest.raises(ModelError, match="needs radius"):
        mb.viz.view(model, visuals={"rod1": [{"type": "sphere"}]})


def test_urdf_primitive_visuals_are_drawn_and_meshes_fall_back_to_inertia_boxes():
    text = """<robot name="t"><link name="base"/>
      <link name="a"><inertial><origin xyz="0.1 0 0"/><mass value="2"/>
        <inertia ixx="0.02" iyy="0.03" izz="0.04" ixy="0" ixz="0" iyz="0"/></inertial>
        <visual><origin xyz="0.2 0 0"/><geometry><box size="0.4 0.05 0.05"/></geometry>
          <material name="m"><color rgba="1 0 0 1"/></material></visual>
        <collision><geometry><sphere radius="0.3"/></geometry></collision></link>
      <link name="b"><inertial><mass value="1"/>
        <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
        <visual><geometry><mesh filename="package://x/b.stl"/></geometry></visual></link>
      <joint name="j1" type="revolute"><parent link="base"/><child link="a"/>
        <axis xyz="0 0 1"/></joint>
      <joint name="j2" type="revolute"><parent link="a"/><child link="b"/>
        <origin xyz="0.4 0 0"/><axis xyz="0 0 1"/></joint></robot>"""
    d = _data(mb.viz.view(mb.urdf.load(text), [0.0, 0.0]).data)
    a, b = d["bodies"][1]["solids"], d["bodies"][2]["solids"]
    assert [s["k"] for s in a] == ["box"]                      # the visual, not the collision
    assert a[0]["r"] == [0.1, 0, 0] and a[0]["d"] == [0.4, 0.05, 0.05]   # from the centre
    assert a[0]["rgba"] == [1, 0, 0, 1]
    assert [s["k"] for s in b] == ["box"] and np.allclose(b[0]["d"], np.sqrt(6 * 0.01), atol=1e-6)  # a^2 = 6 (J + J - J) / m


# ------------------------------------------------------------------ a real browser
def _browser_tools():
    spec = importlib.util.spec_from_file_location("check_3d", ROOT / "tools" / "check_3d.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_headless_browser_draws_offline(pendulum, tmp_path):
    tools = _browser_tools()
    browser = tools.chromium()
    if browser is None:
        pytest.skip("Chromium is not installed (Debian/Ubuntu: apt-get install chromium); "
                    "the browser test of the three.js viewer needs it")
    model, traj = pendulum
    first = mb.viz.animate3d(model, traj).data
    second = mb.viz.view(model, [0.3, -0.4, 0.8], embed_library=False, height=200).data
    page = tmp_path / "view3d.html"
    page.write_text("<!doctype html><html><head><meta charset='utf-8'><title>3D</title></head>"
                    f"<body>{first}{second}{tools.PROBE}</body></html>", encoding="utf-8")
    # a page that does load from the network, to show the net-log check sees it
    bad = tmp_path / "bad.html"
    bad.write_text('<html><body><img src="http://example.com/x.png"><script>'
                   'fetch("https://cdn.example.org/three.js").catch(function () {});'
                   "</script></body></html>")
    start = time.perf_counter()
    result, netlog = tools.run_page(browser, page, tmp_path, "view")
    _, badlog = tools.run_page(browser, bad, tmp_path, "bad")
    seconds = time.perf_counter() - start
    assert not result.startswith(("error", "pending")), result
    anim, still = json.loads(result)
    print(f"browser test: {seconds:.1f} s, {anim}, {still}")
    assert anim["state"] == still["state"] == "ready"
    assert anim["drawn0"] > 0.01 * anim["pixels"] and anim["drawn1"] > 0.01 * anim["pixels"]
    assert anim["diff"] > 0.002 * anim["pixels"]                 # the bodies moved
    assert still["drawn0"] > 0.01 * still["pixels"] / 3          # shared library drew it
    assert still["frames"] == 1 and still["readout"] is None
    assert anim["readout"] == "t = 3.70 s"
    assert tools.page_requests(netlog) == []
    assert {"http://example.com/x.png", "https://cdn.example.org/three.js"} <= set(
        tools.page_requests(badlog))


def test_fallback_text_is_one_clean_line(pendulum):
    """Where the viewer's script has not run (a notebook not yet trusted in Jupyter), a
    reader sees one clean line saying what the view is and how to make it draw, and no dead
    controls; a PDF or a terminal prints what the view is and where it is interactive."""
    import html as html_lib

    model, traj = pendulum
    for shown, what in ((mb.viz.view(model, [0.1, 0.2, 0.3]), "3D view of 3 bodies"),
                        (mb.viz.animate3d(model, traj), "3D animation of 3 bodies over 10 s")):
        msgs = re.findall(r'<div class="mbc3d-msg">(.*?)</div>', shown.data, re.S)
        assert len(msgs) == 1
        line = html_lib.unescape(msgs[0])
        assert "<" not in msgs[0] and "&" not in line and "hellip" not in line and "\n" not in line
        assert line.startswith(what + ", not drawn: the notebook is not trusted")
        assert "Trust Notebook" in line and "jupyter trust" in line
        # the player bar, the mesh switch and the legend wait hidden for the script
        for cls, count in (("mbc3d-bar", int("animation" in what)), ("mbc3d-legend", 1)):
            tags = re.findall(rf'<(?:div|label) class="{cls}"[^>]*>', shown.data)
            assert len(tags) == count and all(t.endswith(' style="display:none">')
                                              for t in tags), (cls, tags)
        text = repr(shown)
        assert text == f"[{what}: interactive in Jupyter and in the web version of the book]"
