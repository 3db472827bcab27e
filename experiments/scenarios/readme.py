"""The sweep's findings in the README, written from ``results/summary.json`` between the README's markers.

    python experiments/scenarios/readme.py            # write them
    python experiments/scenarios/readme.py --check    # exit 1 if the README shows something else

So no number of the README's results is typed by hand: they are the kept sweep's.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from distribution import findings

HERE = Path(__file__).resolve().parent
BEGIN, END = "<!-- sweep:begin -->", "<!-- sweep:end -->"


class ReadmeError(Exception):
    """A README or summary that cannot be read or has no place for the block; the message says which in one line."""


def with_findings(text: str, block: str, readme: Path) -> str:
    """``text`` with what lies between its markers replaced by ``block``."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ReadmeError(f"{readme}: no {BEGIN} ... {END} markers to write the sweep's findings between")
    return text[:start + len(BEGIN)] + "\n" + block + text[end:]


def update(summary: Path, readme: Path, check: bool) -> bool:
    """Write the findings of ``summary`` into ``readme`` (with ``check``, only compare); whether it showed them."""
    try:
        document = json.loads(summary.read_text())
        text = readme.read_text()
    except OSError as error:
        raise ReadmeError(f"{error.filename}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise ReadmeError(f"{summary}: not a sweep's summary.json ({error.msg})") from None
    updated = with_findings(text, findings(document), readme)
    if updated != text and not check:
        readme.write_text(updated)
    return updated == text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--summary", type=Path, default=HERE / "results" / "summary.json",
                        help="the sweep's summary.json (default results/summary.json)")
    parser.add_argument("--readme", type=Path, default=HERE / "README.md", help="the README (default README.md)")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if the README differs")
    args = parser.parse_args(argv)
    try:
        shown = update(args.summary, args.readme, args.check)
    except ReadmeError as error:
        print(f"readme.py: error: {error}", file=sys.stderr)
        return 2
    if args.check and not shown:
        print(f"{args.readme}: its sweep findings differ from {args.summary}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
