"""What the harness leaves behind once a script is done."""

import signal

from wormhole_ns3.run import harness


def test_a_periodic_timer_a_library_armed_is_stopped_once_the_script_is_done():
    previous = signal.signal(signal.SIGALRM, lambda *_: None)
    try:
        signal.setitimer(signal.ITIMER_REAL, 30, 0.1)  # as ns-3's OpenFlow clock does
        harness._stop_interval_timer()
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_a_one_shot_alarm_the_script_set_is_left_alone():
    previous = signal.signal(signal.SIGALRM, lambda *_: None)
    try:
        signal.setitimer(signal.ITIMER_REAL, 30)
        harness._stop_interval_timer()
        assert signal.getitimer(signal.ITIMER_REAL)[0] > 0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
