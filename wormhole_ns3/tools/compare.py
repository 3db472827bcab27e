"""``wormhole-ns3 compare``: the same script, baseline and accelerated, in separate processes."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from wormhole_ns3.config import AcceleratorConfig
from wormhole_ns3.tools.experiment.child import die_with_parent_hook
from wormhole_ns3.tools.options import run_command
from wormhole_ns3.tools.report import comparison, format_table


def run_child(command: list[str], label: str) -> tuple[int, str]:
    """Run one side; its stdout is captured (compared later), its stderr passes through.

    The child dies with this process (a ``kill -9`` of compare leaves no ns-3 run behind, on Linux).
    """
    print(f"[wormhole] running {label} ...", file=sys.stderr, flush=True)
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, preexec_fn=die_with_parent_hook())
    return done.returncode, done.stdout


def compare_script(
    script: str,
    argv: list[str],
    config: AcceleratorConfig,
    json_out: Path | None,
    trace: Path | None,
    progress: bool = False,
    memo: Path | None = None,
    memo_key: Path | None = None,
) -> int:
    """Run baseline then accelerated; print the table; write the JSON; return an exit code."""
    if not Path(script).is_file():
        print(f"wormhole-ns3: can't open file '{script}': no such file", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="wormhole-compare-") as tmp:
        results = {side: Path(tmp) / f"{side}.json" for side in ("baseline", "accelerated")}
        outputs = {}
        for side in ("baseline", "accelerated"):
            accelerated = side == "accelerated"
            command = run_command(
                script, argv, results[side], not accelerated, config,
                trace if accelerated else None, progress and accelerated, memo, memo_key,
            )
            code, outputs[side] = run_child(command, side)
            if code != 0 or not results[side].exists():
                print(f"wormhole-ns3: the {side} run failed (exit code {code})", file=sys.stderr)
                return code or 1
        baseline = json.loads(results["baseline"].read_text())
        accelerated = json.loads(results["accelerated"].read_text())
    summary = comparison(baseline, accelerated)
    summary["stdout_identical"] = outputs["baseline"] == outputs["accelerated"]
    print(format_table(summary))
    if json_out is not None:
        partial = Path(json_out).with_name(Path(json_out).name + ".partial")
        partial.write_text(json.dumps(summary, indent=1))
        partial.replace(json_out)
    return 0
