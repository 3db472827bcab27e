"""Example ns-3 scripts shipped with the package (the demo's workload)."""

from pathlib import Path

#: Arguments of the dumbbell script for the demo's two sizes (``demo --small`` and ``demo``).
DUMBBELL_PRESETS = {
    "small": ("--flows", "4", "--min-mb", "30", "--max-mb", "60"),
    "default": (),
}


def dumbbell_path() -> Path:
    """The DCTCP dumbbell script the demo runs."""
    return Path(__file__).with_name("dctcp_dumbbell.py")
