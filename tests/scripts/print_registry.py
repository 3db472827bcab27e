"""ns-3's CommandLine, as every example parses it: ``--PrintGlobals`` and the like print and exit."""

import sys

from ns import ns

ns.CommandLine().Parse(sys.argv)
print("no --Print option: the script goes on")
