"""A progress bar of a running experiment: flows finished and simulated time reached.

The bar reads what the script itself appends to its result folder
(``flows.csv`` row by row, ``workload.json`` for the number of flows), so it
shows the same thing for a baseline and an accelerated run and adds no event
to the simulation.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from tqdm import tqdm

from wormhole_ns3.models.workloads import Workload
from wormhole_ns3.tools.experiment.results import FLOWS_FILE, WORKLOAD_FILE


class FlowsTail:
    """Follows a growing ``flows.csv``: rows completed so far and the latest finish time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows = 0
        self.sim_time = 0.0
        self._offset = 0
        self._pending = ""
        self._finish_column: int | None = None

    def poll(self) -> bool:
        """Read what was appended since the last poll; True if rows were added."""
        try:
            with self.path.open() as handle:
                handle.seek(self._offset)
                text = handle.read()
                self._offset = handle.tell()
        except FileNotFoundError:
            return False
        lines = (self._pending + text).split("\n")
        self._pending = lines.pop()  # an incomplete last line waits for the next poll
        added = 0
        for fields in csv.reader(lines):
            if self._finish_column is None:
                self._finish_column = fields.index("finish")
                continue
            added += 1
            self.sim_time = max(self.sim_time, float(fields[self._finish_column]))
        self.rows += added
        return added > 0


class RunProgress:
    """A tqdm bar on stderr for one run writing into ``folder``; a no-op when not ``enabled``."""

    def __init__(self, folder: Path, label: str, enabled: bool) -> None:
        self.folder = folder
        self.enabled = enabled
        self.flows = FlowsTail(folder / FLOWS_FILE)
        self._total_known = False
        self.bar = tqdm(
            desc=label, unit="flow", file=sys.stderr, disable=not enabled, dynamic_ncols=True,
            bar_format="{desc}: {n_fmt}/{total_fmt} flows |{bar}| {elapsed}{postfix}",
        )

    def poll(self) -> None:
        if not self.enabled:
            return
        if not self._total_known and (self.folder / WORKLOAD_FILE).exists():
            workload = Workload.from_json((self.folder / WORKLOAD_FILE).read_text())
            self.bar.total = len(workload.flows)
            self._total_known = True
        before = self.flows.rows
        if self.flows.poll():
            self.bar.set_postfix_str(f"simulated {self.flows.sim_time:.6f} s", refresh=False)
            self.bar.update(self.flows.rows - before)
        else:
            self.bar.refresh()

    def write(self, line: str) -> None:
        """Print a line on stderr without breaking the bar."""
        if self.enabled:
            self.bar.write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr, flush=True)

    def close(self) -> None:
        self.poll()
        self.bar.close()
