"""What every reader of a text input file shares: numbered fields and errors that say where."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path


class WorkloadFileError(ValueError):
    """A malformed input file; the message names the file and line."""

    def __init__(self, path: Path, line: int, problem: str) -> None:
        super().__init__(f"{path}:{line}: {problem}")
        self.path, self.line, self.problem = path, line, problem


def numbered_fields(path: Path) -> Iterator[tuple[int, list[str]]]:
    """Non-empty lines as (line number, fields); '#' starts a comment."""
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        fields = line.split("#", 1)[0].split()
        if fields:
            yield number, fields


def parse_int(path: Path, line: int, text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise WorkloadFileError(path, line, f"{what} must be an integer, got {text!r}") from None
