"""The pins of pyproject.toml and environment.yml agree; the two commands are documented."""

import pathlib
import re
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def pyproject_pins():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    reqs = list(data["project"]["dependencies"])
    for name, extra in data["project"]["optional-dependencies"].items():
        if name == "bench":  # benchmarks only (make bench), not the course environment.yml
            continue
        reqs += extra
    pins = {}
    for req in reqs:
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([^;\s]+)", req.strip())
        assert m, f"pyproject.toml: {req!r} is not pinned with '=='"
        name, version = m.group(1).lower(), m.group(2)
        assert pins.get(name, version) == version, f"{name} pinned twice differently"
        pins[name] = version
    return pins


def environment_pins():
    pins = {}
    for line in (ROOT / "environment.yml").read_text().splitlines():
        m = re.fullmatch(r"\s*-\s+([A-Za-z0-9_.\-]+)\s*(==|=)\s*([^\s#]+)\s*(#.*)?", line)
        if m and m.group(1).lower() != "python":
            pins[m.group(1).lower()] = m.group(3)
    return pins


def test_environment_yml_matches_pyproject():
    py, env = pyproject_pins(), environment_pins()
    assert py == env, (
        f"only in pyproject: {sorted(set(py.items()) - set(env.items()))}; "
        f"only in environment.yml: {sorted(set(env.items()) - set(py.items()))}"
    )


def test_constraints_agree_with_pins():
    constraints = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            constraints[name.strip().lower().replace("_", "-")] = version.strip()
    for name, version in pyproject_pins().items():
        key = name.replace("_", "-")
        assert constraints.get(key, version) == version, f"constraints.txt pins {name} differently"


def test_readme_and_ci_name_the_two_commands():
    readme = (ROOT / "README.md").read_text()
    assert "make book" in readme and "make test" in readme
    assert "environment.yml" in readme
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_make_test_installs_the_example_robot_data_the_bench_extra_pins():
    root = ROOT
    make = re.search(r"^EXAMPLE_ROBOT_DATA\s*:=\s*(\S+)", (root / "Makefile").read_text(), re.M)
    pin = re.search(r'"example-robot-data==([^"]+)"', (root / "pyproject.toml").read_text())
    assert make and pin and make.group(1) == pin.group(1)
