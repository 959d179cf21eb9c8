"""`make bench` works: the benchmark script on two tiny sizes, one repeat, without Pinocchio
and modern_robotics, into a temporary directory (the real run is not part of make test)."""

import csv
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_benchmark_script_runs(tmp_path):
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "benchmarks" / "run.py")
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    run.main(["--sizes", "2", "3", "--repeats", "1", "--min-time", "0", "--batch", "3",
              "--cardan-sizes", "--no-external", "--quiet", "--out", str(tmp_path)])
    with open(tmp_path / "forward_dynamics.csv") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["method", "structure", "n", "batch", "seconds_per_config",
                             "repeats", "note"]
    seen = {(r["method"], r["structure"], r["n"], r["batch"]) for r in rows}
    for structure in ("chain", "tree"):
        for n in ("2", "3"):
            assert ("vereshchagin", structure, n, "1") in seen
            assert ("vereshchagin", structure, n, "3") in seen
            assert ("tree A q''=B", structure, n, "1") in seen
            assert ("cartesian ldlt", structure, n, "3") in seen
    assert all(float(r["seconds_per_config"]) > 0 for r in rows)
    assert not any(r["method"] in ("pinocchio aba", "modern_robotics") for r in rows)
    assert (tmp_path / "forward_dynamics.png").stat().st_size > 1000
    assert "Linearity" in (tmp_path / "summary.md").read_text()


def test_robot_benchmark_runs(tmp_path):
    """benchmarks/robots.py on the two shipped robots, fixed and floating base, one repeat,
    batches of 3; against Pinocchio when it is installed, else without it."""
    spec = importlib.util.spec_from_file_location("bench_robots",
                                                  ROOT / "benchmarks" / "robots.py")
    robots = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(robots)
    external = importlib.util.find_spec("pinocchio") is not None
    robots.main(["--shipped-only", "--repeats", "1", "--min-time", "0", "--batch", "3",
                 "--quiet", "--out", str(tmp_path)] + ([] if external else ["--no-external"]))
    with open(tmp_path / "robots.csv") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == robots.CSV_FIELDS
    nv = {("panda", "fixed"): "9", ("panda", "floating"): "15",
          ("so100", "fixed"): "6", ("so100", "floating"): "12"}
    methods = list(robots.METHODS) + (["pinocchio aba"] if external else [])
    for (robot, base), n in nv.items():
        for method in methods:
            got = [r for r in rows
                   if (r["robot"], r["base"], r["method"]) == (robot, base, method)]
            if got and got[0]["route"] == "unavailable":  # a compiled-only method declined
                assert method == "tree composite" and len(got) == 1
                continue
            assert sorted(r["batch"] for r in got) == ["1", "3"], (robot, base, method)
            for r in got:
                assert r["nv"] == n and float(r["seconds_per_config"]) > 0
                assert r["route"] in (("C++",) if method == "pinocchio aba"
                                      else ("compiled", "numpy"))
                assert float(r["max_error"]) < 1e-8  # the agreement asserted before timing
                assert (r["ratio_to_pinocchio"] != "") == external
    # the fixed-base arms run every kernel (revolute, prismatic and fixed joints)
    assert all(r["route"] in ("compiled", "C++") for r in rows if r["base"] == "fixed")
    text = (tmp_path / "robots.md").read_text()
    assert "## Per call" in text and "## Batched (per configuration)" in text
    assert text.count("| panda | floating | 15 |") == 2  # a row per table
    assert text.count("| so100 | fixed | 6 |") == 2
