"""What every reader of a text input file shares: numbered fields and errors that say where."""

from __future__ import annotations

import codecs
import math
from collections.abc import Iterator
from pathlib import Path

#: How much of a bad field an error message repeats (a field may be thousands of characters).
SHOWN_CHARS = 40


class WorkloadFileError(ValueError):
    """A malformed input file; the message names the file and line (only the file when it cannot be read)."""

    def __init__(self, path: Path, line: int | None, problem: str) -> None:
        super().__init__(f"{path}:{line}: {problem}" if line is not None else f"{path}: {problem}")
        self.path, self.line, self.problem = path, line, problem


def read_lines(path: Path) -> list[str]:
    """The file's lines, decoded as UTF-8 (a leading BOM is dropped).

    Bytes that are not UTF-8 are a WorkloadFileError naming the line they are
    on, not a bare UnicodeDecodeError: the file is the user's, the fault is in it.
    """
    if path.is_dir():
        raise WorkloadFileError(path, None, "is a directory, not a file")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise WorkloadFileError(path, None, error.strerror or str(error)) from None
    body = data.removeprefix(codecs.BOM_UTF8)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        before = body[: error.start].decode("utf-8")  # valid up to the bad byte, by definition
        line = len((before + "x").splitlines())
        raise WorkloadFileError(path, line, f"not UTF-8 text (byte 0x{body[error.start]:02x})") from None
    return text.splitlines()


def numbered_fields(path: Path) -> Iterator[tuple[int, list[str]]]:
    """Non-empty lines as (line number, fields); '#' starts a comment."""
    for number, line in enumerate(read_lines(path), start=1):
        fields = line.split("#", 1)[0].split()
        if fields:
            yield number, fields


def shown(text: str) -> str:
    """A field as an error message repeats it: quoted, and cut short when it is long."""
    return repr(text) if len(text) <= SHOWN_CHARS else f"{text[:SHOWN_CHARS]!r}... ({len(text)} characters)"


def parse_int(path: Path, line: int, text: str, what: str) -> int:
    """``int(text)``, or a WorkloadFileError (also for '²', which int() refuses, and for more than 4300 digits)."""
    try:
        return int(text)
    except ValueError:
        raise WorkloadFileError(path, line, f"{what} must be an integer, got {shown(text)}") from None


def parse_count(path: Path, line: int, text: str, what: str) -> int:
    """A count or a size: an integer that is not negative."""
    value = parse_int(path, line, text, what)
    if value < 0:
        raise WorkloadFileError(path, line, f"{what} must not be negative, got {value}")
    return value


def parse_float(path: Path, line: int, text: str, what: str) -> float:
    """``float(text)`` if it is a finite number ('nan' and '1e999' are not), else a WorkloadFileError."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise WorkloadFileError(path, line, f"{what} must be a number, got {shown(text)}")
    return value
