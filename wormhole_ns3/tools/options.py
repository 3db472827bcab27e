"""Command-line options derived from ``AcceleratorConfig``, and the argv of a ``wormhole-ns3 run`` child.

Every field of the config becomes one option (``settle_rtts`` ->
``--settle-rtts``; a bool ``--flag/--no-flag``), with the help text declared
next to the field. ``config_argv`` is the inverse of ``config_from``, so a
child process of ``compare`` or ``experiment`` runs with exactly the parent's
settings, every field included.
"""

from __future__ import annotations

import argparse
import sys
import types
import typing
from dataclasses import Field, fields
from enum import Enum
from pathlib import Path

from wormhole_ns3.config import AcceleratorConfig
from wormhole_ns3.memo.store import RUN_ONLY


def _flag(spec: Field) -> str:
    return spec.metadata.get("flag") or spec.name.replace("_", "-")


def _value_type(spec: Field) -> type:
    """The non-None type of a field (``float | None`` -> float)."""
    hints = typing.get_type_hints(AcceleratorConfig)[spec.name]
    if isinstance(hints, types.UnionType):
        return next(t for t in typing.get_args(hints) if t is not type(None))
    return hints


def add_config_options(parser: argparse.ArgumentParser) -> None:
    """Add one option per AcceleratorConfig field, in a group of its own."""
    group = parser.add_argument_group("fast-forwarding")
    for spec in fields(AcceleratorConfig):
        kind = _value_type(spec)
        name = f"--{_flag(spec)}"
        if kind is bool:
            group.add_argument(name, dest=spec.name, action=argparse.BooleanOptionalAction,
                               default=spec.default, help=spec.metadata["help"])
        elif issubclass(kind, Enum):
            group.add_argument(name, dest=spec.name, type=kind, default=spec.default, choices=list(kind),
                               metavar="{" + ",".join(map(str, kind)) + "}", help=spec.metadata["help"])
        else:
            group.add_argument(name, dest=spec.name, type=kind, default=spec.default,
                               metavar=spec.metadata.get("metavar"), help=spec.metadata["help"])


def config_from(args: argparse.Namespace) -> AcceleratorConfig:
    """The config the parsed options describe (ValueError if a value is out of range)."""
    return AcceleratorConfig(**{spec.name: getattr(args, spec.name) for spec in fields(AcceleratorConfig)})


def config_argv(config: AcceleratorConfig) -> list[str]:
    """The options that reproduce ``config`` (defaults left out): the inverse of config_from."""
    argv = []
    for spec in fields(AcceleratorConfig):
        value = getattr(config, spec.name)
        if value == spec.default:
            continue
        if isinstance(value, bool):
            argv.append(f"--{'' if value else 'no-'}{_flag(spec)}")
        elif isinstance(value, Enum):
            argv.append(f"--{_flag(spec)}={value.value}")
        else:
            argv.append(f"--{_flag(spec)}={value!r}")
    return argv


def add_memo_options(parser: argparse.ArgumentParser, kept: str) -> None:
    """``--memo PATH`` (by default ``:memory:``, a store of the run only), ``--no-memo`` and ``--memo-key``."""
    parser.add_argument("--memo", type=Path, metavar="PATH", default=Path(RUN_ONLY),
                        help=f"{kept} (default {RUN_ONLY}: record and replay within this run only)")
    parser.add_argument("--no-memo", dest="memo", action="store_const", const=None,
                        help="no memoization: fast-forwarding only")
    parser.add_argument("--memo-key", type=Path, metavar="KEYFILE",
                        help="file holding the shared secret that seals the memo store with HMAC-SHA256"
                             " (default: the file $WORMHOLE_NS3_MEMO_KEY names)")


def add_seed_options(parser: argparse.ArgumentParser) -> None:
    """``--seeds N``: plain ns-3 under N RngRun values too, for its own seed-to-seed spread (``tools/seeds.py``)."""
    parser.add_argument("--seeds", type=int, metavar="N",
                        help="also run plain ns-3 under N-1 more RngRun values (N runs with the baseline) and report "
                             "its seed-to-seed spread per flow (and iteration) beside the accelerated run's error")


def run_command(script: str, argv: list[str], results: Path, baseline: bool, config: AcceleratorConfig,
                trace: Path | None = None, progress: bool = False, memo: Path | None = None,
                memo_key: Path | None = None) -> list[str]:
    """``wormhole-ns3 run`` of one side; the accelerator's settings and memo store only for the accelerated one."""
    command = [sys.executable, "-m", "wormhole_ns3", "run", "--results", str(results)]
    if trace is not None:
        command += ["--trace", str(trace)]
    if progress:
        command.append("--progress")
    if baseline:
        command.append("--baseline")
        # observed on both sides alike
        command += [flag for flag, on in (("--queues", config.queues), ("--rtt", config.rtt)) if on]
    else:
        command += config_argv(config)
        command += ["--memo", str(memo)] if memo is not None else ["--no-memo"]
        if memo_key is not None:
            command += ["--memo-key", str(memo_key)]
    return command + [script, *argv]
