"""Example ns-3 scripts shipped with the package (the demo's workload)."""

from pathlib import Path

#: Arguments of the dumbbell script: the demo's two sizes (``demo --small`` and ``demo``), then
#: shapes that stress the steady-state rules (``experiment compare dctcp-dumbbell --preset P``):
#: arrivals closer together, a few mid-size flows whose shares wander for the rest of their
#: lives, many small flows, and a congestion control that never holds a rate (Cubic).
DUMBBELL_PRESETS = {
    "small": ("--flows", "4", "--min-mb", "30", "--max-mb", "60"),
    "default": (),
    "stagger-2ms": ("--stagger-ms", "2", "--min-mb", "100", "--max-mb", "200"),
    "four-10ms": ("--flows", "4", "--stagger-ms", "10", "--min-mb", "100", "--max-mb", "400"),
    "sixteen-1ms": ("--flows", "16", "--stagger-ms", "1", "--min-mb", "40", "--max-mb", "80"),
    "cubic": ("--tcp", "TcpCubic", "--min-mb", "50", "--max-mb", "100"),
}


def dumbbell_path() -> Path:
    """The DCTCP dumbbell script the demo runs."""
    return Path(__file__).with_name("dctcp_dumbbell.py")
