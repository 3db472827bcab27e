"""experiments/profile/dumbbell_shares.py: plain ns-3's shares of the demo bottleneck over time."""

import csv
import subprocess
import sys

import pytest

from conftest import REPO

TOOL = REPO / "experiments" / "profile" / "dumbbell_shares.py"


def test_shares_sample_every_sinks_bytes_and_tabulate_them_against_the_fair_share(tmp_path):
    out = tmp_path / "shares.csv"
    done = subprocess.run(
        [sys.executable, TOOL, "--out", out, "--table", "--until", "0.2", "--",
         "--flows", "2", "--min-mb", "5", "--max-mb", "10", "--stagger-ms", "2"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    with out.open() as rows:
        samples = list(csv.DictReader(rows))
    assert [float(row["time"]) for row in samples[:2]] == [0.1, 0.1005]
    assert float(samples[-1]["time"]) <= 0.2
    # every byte arrives (the script's own check line), and the sampled counters end there
    assert "flow 0 bytes 5000000" in done.stdout and "flow 1 bytes 10000000" in done.stdout
    assert (int(samples[-1]["flow0"]), int(samples[-1]["flow1"])) == (5_000_000, 10_000_000)
    assert all(int(a["flow1"]) <= int(b["flow1"]) for a, b in zip(samples, samples[1:]))
    table = done.stdout.splitlines()[2:]
    assert table[0].split() == ["time", "(s)", "flows", "Gb/s", "f0", "f1"]
    # the first bin: flow 0 alone, its whole share; the next: flow 1 joins, below its share at first
    # (DCTCP starts with alpha 1: every mark halves its window), and the shares sum to the two flows
    first, second = table[1].split(), table[2].split()
    assert first[1] == "1" and first[3:] == ["1.00", "-"] and float(first[2]) > 8
    assert second[1] == "2" and float(second[3]) > 1.2 > 0.8 > float(second[4])
    assert float(second[3]) + float(second[4]) == pytest.approx(2, abs=0.011)
