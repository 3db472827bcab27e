from dataclasses import fields

import pytest

from wormhole_ns3 import AcceleratorConfig
from wormhole_ns3.core.draws import Fidelity
from wormhole_ns3.tools.cli import build_parser
from wormhole_ns3.tools.options import config_argv, config_from


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"theta": 0}, "theta"),
        ({"theta": 1.5}, "theta"),
        ({"window": 1}, "window"),
        ({"min_window": 1}, "min_window"),
        ({"convergence_budget": -0.01}, "convergence_budget"),
        ({"convergence_budget": 1.0}, "convergence_budget"),
        ({"sample_period": -1.0}, "sample_period"),
        ({"tail_rtts": -1}, "tail_rtts"),
        ({"max_skip": 0}, "max_skip"),
        ({"verify": 1.5}, "verify"),
        ({"verify": -0.1}, "verify"),
        ({"verify_bound": 0}, "verify_bound"),
    ],
)
def test_bad_settings_are_refused_with_their_name(settings, message):
    with pytest.raises(ValueError, match=message):
        AcceleratorConfig(**settings)


def test_config_survives_the_trip_through_child_process_arguments():
    config = AcceleratorConfig(theta=0.03, window=12, sample_period=2e-4, max_skip=0.5)
    args = build_parser().parse_args(["run", *config_argv(config), "script.py"])
    assert config_from(args) == config


def test_every_setting_is_an_option_and_reaches_a_child_process():
    """No setting is left behind: each field, set away from its default, survives config_argv -> parser."""
    changed = AcceleratorConfig(theta=0.07, window=7, min_window=3, sample_period=1e-4, fairness=0.2,
                                convergence_budget=0.01, congestion_cycles=1, idle_share=0.01,
                                settle_rtts=12.0, tail_rtts=9.0, min_skip_samples=2.5, max_skip=0.25, enabled=False,
                                skip_cubic=False, transient_memo=True, keep_undisturbed=True,
                                profile=True, queues=True, rtt=True, verify=0.1, verify_bound=0.05,
                                    fidelity=Fidelity.STATISTICAL)
    defaults = AcceleratorConfig()
    assert all(getattr(changed, f.name) != getattr(defaults, f.name) for f in fields(AcceleratorConfig))
    argv = config_argv(changed)
    assert len(argv) == len(fields(AcceleratorConfig))
    for command in ("run", "compare"):
        assert config_from(build_parser().parse_args([command, *argv, "script.py"])) == changed


def test_the_defaults_need_no_options():
    assert config_argv(AcceleratorConfig()) == []
    assert config_from(build_parser().parse_args(["run", "script.py"])) == AcceleratorConfig()


def test_experiment_runs_take_the_same_options():
    argv = ["experiment", "run", "llm-training", "--min-skip-samples", "3", "--no-fast-forward"]
    config = config_from(build_parser().parse_args(argv))
    assert (config.min_skip_samples, config.enabled) == (3.0, False)


def test_a_neutral_setting_leaves_the_memo_context_alone_and_a_decisive_one_does_not():
    from wormhole_ns3.run.harness import memo_context

    assert memo_context(AcceleratorConfig(profile=True)) == memo_context(AcceleratorConfig())
    assert memo_context(AcceleratorConfig(verify=0.5, verify_bound=0.02)) == memo_context(AcceleratorConfig())
    assert memo_context(AcceleratorConfig(theta=0.04)) != memo_context(AcceleratorConfig())
    assert "profile" not in AcceleratorConfig().decisive() and "theta" in AcceleratorConfig().decisive()


def test_a_run_memoizes_within_itself_unless_told_otherwise_and_children_are_told_explicitly():
    from pathlib import Path

    from wormhole_ns3.memo.store import RUN_ONLY
    from wormhole_ns3.tools.options import run_command

    parse = build_parser().parse_args
    assert parse(["run", "script.py"]).memo == Path(RUN_ONLY)
    assert parse(["compare", "script.py"]).memo == Path(RUN_ONLY)
    assert parse(["run", "--no-memo", "script.py"]).memo is None
    assert parse(["run", "--memo", "store", "script.py"]).memo == Path("store")
    accelerated = run_command("s.py", [], Path("r.json"), False, AcceleratorConfig(), memo=None)
    assert "--no-memo" in accelerated  # a child's own default would memoize
    baseline = run_command("s.py", [], Path("r.json"), True, AcceleratorConfig(), memo=None)
    assert "--no-memo" not in baseline and "--memo" not in baseline
