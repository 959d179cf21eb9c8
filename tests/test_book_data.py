"""The committed benchmark results that chapter 4 reads are one run: the rows of
``benchmarks/results/summary.md``'s table "Linearity on chains" (t(50) and t(500) per call,
rounded to microseconds) equal the per-call times of ``forward_dynamics.csv``."""

import csv
import pathlib

RESULTS = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "results"


def test_summary_linearity_table_is_the_csv_run():
    with (RESULTS / "forward_dynamics.csv").open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["seconds_per_config"]]
    per_call = {(r["method"], int(r["n"])): float(r["seconds_per_config"]) for r in rows
                if r["structure"] == "chain" and r["batch"] == "1"}
    table = (RESULTS / "summary.md").read_text().split("## Linearity on chains")[1].split("##")[0]
    checked = 0
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[1].endswith(" ms"):
            method, t50, t500 = cells[0], float(cells[1][:-3]), float(cells[2][:-3])
            assert abs(per_call[method, 50] * 1e3 - t50) < 6e-4, method
            assert abs(per_call[method, 500] * 1e3 - t500) < 6e-4, method
            checked += 1
    assert checked >= 3
    for method in ("vereshchagin", "tree A q''=B", "pinocchio aba"):
        assert (method, 50) in per_call and (method, 500) in per_call
