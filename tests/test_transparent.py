"""Scripts with nothing to skip print exactly what plain ns-3 prints."""

import pytest

from conftest import SCRIPTS


@pytest.mark.slow
@pytest.mark.parametrize("script", ["udp_echo.py", "csma_bus.py", "routing_global.py"])
def test_output_is_byte_identical_to_plain_ns3(wormhole, plain_python, script):
    plain = plain_python(SCRIPTS / script)
    ours = wormhole("run", SCRIPTS / script)
    assert plain.returncode == 0, plain.stderr
    assert ours.returncode == 0, ours.stderr
    assert plain.stdout  # the script does print something to compare
    assert ours.stdout == plain.stdout
    assert ours.stderr_lines == plain.stderr_lines
