"""Example ns-3 scripts shipped with the package (the demo's workload)."""

from pathlib import Path


def dumbbell_path() -> Path:
    """The DCTCP dumbbell script the demo runs."""
    return Path(__file__).with_name("dctcp_dumbbell.py")
