"""The base of the accelerator's vocabularies: enum members that are also their own text.

Verdict limits, skip ends, flow kinds, trace row kinds, memo decisions: each is
an enum whose values are the exact words the skip trace, run.json and the
C++ shim use, so code decides on members and reports print the same text as
before (``str(member)`` and ``f"{member}"`` give the value on every Python).
"""

from __future__ import annotations

from enum import Enum


class Label(str, Enum):
    """An enum member that compares, hashes, prints and serialises as its value."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)
