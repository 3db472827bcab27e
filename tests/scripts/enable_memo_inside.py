"""A script that accelerates itself with a memo store: enable(memo=PATH), then flow_dag_ring.py.

Usage: enable_memo_inside.py STORE [flow_dag_ring.py options]. Prints the script's
own lines, then the memo's counters.
"""

import runpy
import sys
from pathlib import Path

import wormhole_ns3

session = wormhole_ns3.enable(memo=sys.argv[1])
from ns import ns  # noqa: E402,F401 - after enable(), as the docs say

ring = Path(__file__).resolve().parent / "flow_dag_ring.py"
sys.path.insert(0, str(ring.parent))
sys.argv = [str(ring), *sys.argv[2:]]
runpy.run_path(str(ring), run_name="__main__")
stats = session.report().memo
print(f"memo hits {stats.hits} misses {stats.misses} recorded {stats.recorded} diverged {stats.diverged}")
