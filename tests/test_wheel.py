"""The package works where users install it: a wheel, installed (not editable) into a
fresh environment, away from the source tree.

The wheel must carry three.js and its mesh loaders (the 3D views inline them), the two
robots' URDF files and the Panda's collision meshes as package data, and the compiled kernels must cache their machine code where they may: in
numba's user cache directory when the package folder is not writable, or in
``NUMBA_CACHE_DIR`` when it is set (:func:`mbcourse.kernels.machine_code_folder`). The
fresh environment borrows the dependencies (NumPy, numba, ...) of the project's
environment through a path file, without its editable install of mbcourse.
"""

import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent("""
    import sys, warnings
    from pathlib import Path
    import numpy as np
    import mbcourse as mb
    assert Path(mb.__file__).resolve().is_relative_to(Path(sys.argv[1]).resolve()), mb.__file__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")           # the Panda's mimic finger
        panda = mb.urdf.robot("panda")
    html = mb.viz3d.view(panda, np.zeros(panda.nq))._repr_html_()
    assert len(html) > 200_000 and "DecompressionStream" in html, len(html)
    assert 'class="mbc3d-loader" data-file="STLLoader.js"' in html   # the shipped meshes
    rng = np.random.default_rng(0)
    q, qd = rng.normal(size=panda.nq), rng.normal(size=panda.nv)
    fast = mb.vereshchagin.forward_dynamics(panda, q, qd, compiled=True)
    slow = mb.vereshchagin.forward_dynamics(panda, q, qd, compiled=False)
    assert np.abs(fast - slow).max() < 1e-10 * np.abs(slow).max()
    assert mb.grading.check("qdd", fast, slow)
    try:
        mb.grading.check("qdd", -slow, slow)
    except mb.grading.GradingFailure as exc:
        assert "opposite sign" in str(exc)
    else:
        raise AssertionError("a wrong answer passed")
    print(mb.kernels.machine_code_folder())
""")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A wheel built from the sources and installed into a fresh environment:
    ``(wheel, python, site-packages)``."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "mbcourse", src / "mbcourse",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--no-build-isolation", "-w", str(tmp / "dist"), str(src)],
                   check=True, capture_output=True)
    wheel = next((tmp / "dist").glob("mbcourse-*.whl"))
    env = tmp / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; "
                                "print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--target", str(site), str(wheel)], check=True, capture_output=True)
    return wheel, python, site


def test_an_installed_package_draws_loads_robots_runs_compiled_and_grades(installed, tmp_path):
    wheel, python, site = installed
    names = zipfile.ZipFile(wheel).namelist()
    for data in ("mbcourse/_vendor/threejs/three.module.min.js",
                 "mbcourse/_vendor/threejs/three.core.min.js",
                 "mbcourse/_vendor/threejs/OrbitControls.js",
                 "mbcourse/_vendor/threejs/LICENSE", "mbcourse/_vendor/threejs/VERSION",
                 "mbcourse/_vendor/threejs/STLLoader.js",
                 "mbcourse/_vendor/threejs/ColladaComposer.js",
                 "mbcourse/robots/meshes/panda_description/collision/link3.stl",
                 "mbcourse/robots/panda.urdf", "mbcourse/robots/so100.urdf"):
        assert data in names, data
    kernels = site / "mbcourse" / "kernels"
    shutil.rmtree(kernels / "__pycache__", ignore_errors=True)     # pip's byte code
    (kernels / "__pycache__").write_text("not a folder: numba cannot cache beside the kernels")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "PYTHON"))}
    env.update(XDG_CACHE_HOME=str(tmp_path / "cache"), HOME=str(tmp_path / "home"),
               MPLBACKEND="Agg")
    run = subprocess.run([str(python), "-c", SCRIPT, str(site)], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    folder = Path(run.stdout.strip().splitlines()[-1])
    assert folder.is_relative_to(tmp_path / "cache" / "numba"), folder
    assert list(folder.glob("vereshchagin.*.nbi")) and (folder / "kernel-sources.txt").is_file()
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba-cache")
    run = subprocess.run([str(python), "-c", "import mbcourse.kernels as k; "
                          "print(k.machine_code_folder())"], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    assert Path(run.stdout.strip()).is_relative_to(tmp_path / "numba-cache"), run.stdout
