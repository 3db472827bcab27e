"""Subtract two callgrind profiles function by function: what one side does more.

Usage: python experiments/profile/callgrind_diff.py BASE.callgrind OTHER.callgrind [--self] [--top N]

Runs ``callgrind_annotate`` (inclusive costs, or exclusive with ``--self``) on both
files, sums each function's cost over its files and objects, and prints the functions
whose cost differs most (OTHER minus BASE), with both sides' costs. Recursive frames
(``'2`` and deeper) are left out: their inclusive costs count the same calls again.
"""

import argparse
import re
import subprocess
from collections import defaultdict

LINE = re.compile(r"^\s*([\d,]+) \([ \d.]+%\)\s+(?:\S*:)?(.*?)(?: \[[^\]]*\])?\s*$")


def costs(path: str, inclusive: bool) -> dict[str, int]:
    """Each function's cost in one callgrind file."""
    text = subprocess.run(
        ["callgrind_annotate", "--threshold=100", *(["--inclusive=yes"] if inclusive else []), path],
        check=True, capture_output=True, text=True).stdout
    result: dict[str, int] = defaultdict(int)
    for line in text.splitlines():
        match = LINE.match(line)
        if not match or "PROGRAM TOTALS" in line:
            continue
        name = match.group(2)
        if re.search(r"'\d+$", name):
            continue
        result[name] += int(match.group(1).replace(",", ""))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("other")
    parser.add_argument("--self", dest="exclusive", action="store_true", help="exclusive costs")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--width", type=int, default=150)
    args = parser.parse_args()
    base = costs(args.base, not args.exclusive)
    other = costs(args.other, not args.exclusive)
    rows = sorted(set(base) | set(other), key=lambda f: -abs(other.get(f, 0) - base.get(f, 0)))
    print(f"{'other - base':>15} {'base':>15} {'other':>15}  function")
    for name in rows[: args.top]:
        b, o = base.get(name, 0), other.get(name, 0)
        print(f"{o - b:>15,} {b:>15,} {o:>15,}  {name[: args.width]}")


if __name__ == "__main__":
    main()
