import pytest

from wormhole_ns3 import AcceleratorConfig
from wormhole_ns3.cli import config_argv, build_parser, config_from


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"theta": 0}, "theta"),
        ({"theta": 1.5}, "theta"),
        ({"window": 1}, "window"),
        ({"sample_period": -1.0}, "sample_period"),
        ({"tail_rtts": -1}, "tail_rtts"),
        ({"max_skip": 0}, "max_skip"),
    ],
)
def test_bad_settings_are_refused_with_their_name(settings, message):
    with pytest.raises(ValueError, match=message):
        AcceleratorConfig(**settings)


def test_config_survives_the_trip_through_child_process_arguments():
    config = AcceleratorConfig(theta=0.03, window=12, sample_period=2e-4, max_skip=0.5)
    args = build_parser().parse_args(["run", *config_argv(config), "script.py"])
    assert config_from(args) == config
