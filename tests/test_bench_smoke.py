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
