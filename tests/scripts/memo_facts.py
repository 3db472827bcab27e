"""``wormhole-ns3 ARGS`` in this process, then the memo's events with their typed facts, pickled.

Usage: ``python memo_facts.py FACTS ARGS...``. The run and its outputs are the
CLI's; a trace file holds only the prose rendered from the facts, so tests that
check why the memo decided something read the facts here instead (the
``memo_facts`` fixture of conftest.py).
"""

import pickle
import sys

from wormhole_ns3.run import harness
from wormhole_ns3.tools.cli import main

out, args = sys.argv[1], sys.argv[2:]
finish = harness._finish


def keeping_the_facts(session, *rest):
    events = [record for record in session.report().trace if record.facts is not None]
    with open(out, "wb") as kept:
        pickle.dump(events, kept)
    return finish(session, *rest)


harness._finish = keeping_the_facts
raise SystemExit(main(args))
