"""Meshes in the offline 3D views: STL, OBJ and COLLADA files named by a URDF, found on
this machine (mb.urdf.mesh_path), embedded compressed with only the loaders they need,
drawn by three.js's own loaders in a headless browser, with the inertia boxes one switch
away."""

from __future__ import annotations

import importlib.util
import json
import re
import struct
import warnings
from pathlib import Path

import numpy as np
import pytest

import mbcourse as mb
from mbcourse.errors import ModelError, ShapeError

ROOT = Path(__file__).resolve().parents[1]
PANDA_MESH = "package://example-robot-data/robots/panda_description/meshes/collision/{}.stl"


def _data(html):
    return json.loads(re.search(r'class="mbc3d-data">(.*?)</script>', html).group(1))


def _loaders(html):
    return re.findall(r'class="mbc3d-loader" data-file="([^"]+)"', html)


@pytest.fixture(scope="module")
def panda():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                  # the mimic finger
        return mb.urdf.robot("panda")


def _tetrahedron_stl(path, size=0.1):
    """A binary STL file: a tetrahedron with edges ``size`` along the axes."""
    v = np.array([[0, 0, 0], [size, 0, 0], [0, size, 0], [0, 0, size]], dtype=np.float32)
    faces = [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]
    out = bytearray(80) + struct.pack("<I", len(faces))
    for f in faces:
        out += struct.pack("<3f", 0, 0, 0) + v[list(f)].tobytes() + b"\0\0"
    path.write_bytes(bytes(out))


def test_mesh_paths_are_found_where_urdf_puts_them(tmp_path):
    shipped = mb.urdf.mesh_path(PANDA_MESH.format("link3"))
    assert shipped == Path(mb.__file__).parent / "robots/meshes/panda_description/collision/link3.stl"
    package = tmp_path / "my_robot" / "urdf"
    package.mkdir(parents=True)
    (tmp_path / "my_robot" / "meshes").mkdir()
    _tetrahedron_stl(tmp_path / "my_robot" / "meshes" / "part.stl")
    urdf = package / "robot.urdf"
    urdf.write_text("<robot/>")
    assert mb.urdf.mesh_path("package://my_robot/meshes/part.stl", urdf) == \
        tmp_path / "my_robot" / "meshes" / "part.stl"
    assert mb.urdf.mesh_path("../meshes/part.stl", urdf).resolve() == \
        (tmp_path / "my_robot" / "meshes" / "part.stl").resolve()
    assert mb.urdf.mesh_path(f"file://{tmp_path}/my_robot/meshes/part.stl") is not None
    for missing in ("package://other/meshes/part.stl", "../meshes/none.stl", "", None):
        assert mb.urdf.mesh_path(missing, urdf) is None


def test_the_panda_is_drawn_with_its_shipped_collision_meshes(panda):
    q = np.zeros(panda.nq)
    html = mb.viz3d.view(panda, q).data
    data = _data(html)
    names = ["link0", "link1", "link2", "link3", "link4", "link5", "link6", "link7", "hand"]
    assert all(mb.urdf.mesh_path(PANDA_MESH.format(n)) is not None for n in names)
    assert len(data["meshes"]) == 9 and data["formats"] == ["stl"]  # the fingers have none
    solids = [s for b in data["bodies"] for s in b["solids"] if s["k"] == "mesh"]
    assert len(solids) == 9 and all(s["set"] == "mesh" for s in solids)
    meshed = [b for b in data["bodies"][1:] if any(s["k"] == "mesh" for s in b["solids"])]
    boxes = [s for b in meshed for s in b["solids"] if s["k"] == "box"]
    assert len(boxes) == 7 and all(s["set"] == "box" for s in boxes)   # for the switch
    fingers = [s for b in data["bodies"] if "finger" in b["name"] for s in b["solids"]]
    assert [s["k"] for s in fingers] == ["box", "box"] and not any("set" in s for s in fingers)
    assert _loaders(html) == ["STLLoader.js"] and 'class="mbc3d-switch"' in html
    assert "://" not in html
    plain = mb.viz3d.view(panda, q, meshes=None).data
    assert not _data(plain)["meshes"] and not _loaders(plain)
    assert 'class="mbc3d-switch"' not in plain
    weight = len(html) - len(plain)
    print(f"the Panda's collision meshes add {weight / 1e3:.0f} kB to a view")
    assert 40_000 < weight < 150_000


def test_a_missing_file_or_the_size_limit_falls_back_to_the_boxes(panda, tmp_path):
    if mb.urdf.example_robot_data() is None:                  # the visual DAE is not shipped
        html = mb.viz3d.view(panda, np.zeros(panda.nq), meshes="visual").data
        assert not _data(html)["meshes"]
    with pytest.warns(UserWarning, match="max_mesh_bytes=0"):
        html = mb.viz3d.view(panda, np.zeros(panda.nq), max_mesh_bytes=0).data
    assert not _data(html)["meshes"] and not _loaders(html)
    with pytest.raises(ModelError, match="meshes must be 'collision', 'visual' or None"):
        mb.viz3d.view(panda, meshes="stl")
    with pytest.raises(ShapeError, match="max_mesh_bytes"):
        mb.viz3d.view(panda, max_mesh_bytes=-1)


def test_a_body_given_its_visuals_keeps_them_without_meshes(panda):
    box = {"type": "box", "size": (0.1, 0.1, 0.2), "origin": np.eye(4)}
    data = _data(mb.viz3d.view(panda, np.zeros(panda.nq), visuals={"panda_link3": [box]}).data)
    kinds = {b["name"]: [s["k"] for s in b["solids"]] for b in data["bodies"]}
    assert kinds["panda_link3"] == ["box"] and "set" not in data["bodies"][3]["solids"][0]
    assert kinds["panda_link4"] == ["mesh", "box"]


def test_a_users_own_mesh_next_to_the_urdf_file(tmp_path):
    _tetrahedron_stl(tmp_path / "tip.stl", size=0.3)
    urdf = tmp_path / "arm.urdf"
    urdf.write_text("""<robot name="arm"><link name="base"/>
      <link name="rod"><inertial><origin xyz="0 0 -0.5"/><mass value="1"/>
        <inertia ixx="0.1" iyy="0.1" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
        <visual><origin xyz="0 0 -1"/><geometry><mesh filename="tip.stl" scale="2 2 2"/></geometry>
        <material name="red"><color rgba="1 0 0 1"/></material></visual></link>
      <joint name="j" type="continuous"><parent link="base"/><child link="rod"/>
        <axis xyz="0 1 0"/></joint></robot>""")
    model = mb.urdf.load(urdf)
    data = _data(mb.viz3d.view(model, [0.2], meshes="visual").data)
    (mesh,) = [s for s in data["bodies"][1]["solids"] if s["k"] == "mesh"]
    assert mesh["f"] == "stl" and mesh["s"] == [2, 2, 2] and mesh["rgba"] == [1, 0, 0, 1]
    assert mesh["r"] == [0, 0, -0.5]                    # link frame: 0.5 below the centre
    assert data["view"]["radius"] > 0.6                 # the camera sees the scaled mesh


def test_headless_browser_draws_the_meshes_offline(panda, tmp_path):
    spec = importlib.util.spec_from_file_location("check_3d", ROOT / "tools" / "check_3d.py")
    tools = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tools)
    browser = tools.chromium()
    if browser is None:
        pytest.skip("Chromium is not installed (Debian/Ubuntu: apt-get install chromium)")
    q = np.array([0, -0.5, 0, -2.0, 0, 1.6, 0.8, 0.02])          # the fingers move together
    views = [mb.viz3d.view(panda, q).data,
             mb.viz3d.view(panda, q, meshes=None, embed_library=False).data]
    page = tmp_path / "meshes.html"
    page.write_text("<!doctype html><html><head><meta charset='utf-8'></head><body>"
                    + "".join(views) + tools.PROBE + "</body></html>", encoding="utf-8")
    result, netlog = tools.run_page(browser, page, tmp_path, "meshes")
    assert result.startswith("["), result
    with_meshes, boxes = json.loads(result)
    assert with_meshes["state"] == boxes["state"] == "ready"
    assert with_meshes["meshes"] == "9" and boxes["meshes"] is None
    assert with_meshes["drawn0"] > 0.02 * with_meshes["pixels"]
    assert tools.page_requests(netlog) == []
