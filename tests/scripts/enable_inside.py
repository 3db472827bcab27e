"""A script that accelerates itself: wormhole_ns3.enable(), then an ordinary ns-3 script."""

import runpy
import sys
from pathlib import Path

import wormhole_ns3

session = wormhole_ns3.enable(theta=0.05)

example = Path(__file__).resolve().parents[2] / "wormhole_ns3" / "examples" / "dctcp_dumbbell.py"
sys.argv = [str(example), "--flows", "2", "--min-mb", "40", "--max-mb", "80", "--stagger-ms", "0"]
runpy.run_path(str(example), run_name="__main__")
print(f"skips {len(session.skips)} events {session.last_run.events}")
