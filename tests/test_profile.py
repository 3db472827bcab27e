"""The --profile split: exclusive section times and Python entries, against a clock that ticks per reading."""

import itertools
import sys

from wormhole_ns3.runtime.profile import RunProfile, Section


def ticking():
    """A clock that advances one second at every reading: a section's time counts the readings inside it."""
    return itertools.count().__next__


def test_a_section_is_charged_its_own_time_and_not_its_inner_sections():
    profile = RunProfile(clock=ticking())
    tracker = profile.timed_object(type("Tracker", (), {"GetState": lambda self, flow: flow * 2})(), Section.BOUNDARY)

    def decide():
        return tracker.GetState(3) + tracker.GetState(4)

    assert profile.timed(decide, Section.CONTROLLER)() == 14
    # controller: entered at 0, left at 5 (two boundary calls of 1 s each inside): 5 - 2
    assert profile.seconds == {Section.BOUNDARY: 2.0, Section.CONTROLLER: 3.0}
    assert profile.calls == {Section.BOUNDARY: 2, Section.CONTROLLER: 1}
    assert "GetState" in vars(tracker)  # wrapped once, then found without __getattr__


def test_a_raising_call_is_charged_and_the_sections_stay_balanced():
    profile = RunProfile(clock=ticking())

    def fail():
        raise ValueError("no flow 0")

    try:
        profile.timed(fail, Section.MEMO)()
    except ValueError:
        pass
    assert profile.seconds == {Section.MEMO: 1.0} and profile._open == []


def test_python_entered_from_the_run_is_split_between_the_accelerator_and_the_script():
    """``run`` plays Simulator::Run(): what it calls directly stands for what C++ calls."""
    profile = RunProfile(clock=ticking())
    hooks = []
    controller_work = profile.callback(lambda: hooks.append(sys.getprofile()), Section.CONTROLLER)

    def callback(body):  # the Boundary's guarded wrapper
        body()

    def script_callback():
        hooks.append(sys.getprofile())

    def run():
        callback(lambda: profile.run_started(callback.__code__))
        callback(controller_work)
        script_callback()
        callback(profile.run_ended)

    run()
    assert hooks[0] is None and hooks[1] is not None  # off inside the accelerator, on inside the script
    assert sys.getprofile() is None and not profile._watching
    split = profile.split(run_wall=100.0)
    # the controller's callback and the script's; not the two the hook was on for only half of
    assert (profile.callback_entries, profile.script_entries) == (1, 1)
    # the controller: its timed body (1 s) and the callback around it (its readings by the hook)
    assert split[Section.CONTROLLER] == profile.callbacks_s > 1.0
    assert split[Section.SCRIPT] == profile.script_s > 0
    assert split[Section.EVENTS] == 100.0 - profile.callbacks_s - profile.script_s
    assert split[Section.MEMO] == split[Section.BOUNDARY] == 0.0


def test_time_outside_run_is_not_in_the_split():
    profile = RunProfile(clock=ticking())
    profile.timed(lambda: None, Section.BOUNDARY)()  # a warm-up before Run()

    def callback(body):
        body()

    def run():
        callback(lambda: profile.run_started(callback.__code__))
        callback(profile.run_ended)

    run()
    assert profile.seconds[Section.BOUNDARY] == 1.0 and profile.split(10.0)[Section.BOUNDARY] == 0.0


def test_compare_and_the_experiment_summary_show_the_split_only_when_profiled():
    from wormhole_ns3.tools.report import profile_parts

    profile = {"seconds": {"controller (Python decisions)": 0.5, "events executed (C++)": 9.5}}
    shown = profile_parts({"profile": profile, "run_wall_accelerated_s": 10.0})
    assert shown == "controller (Python decisions) 0.50 s (5%), events executed (C++) 9.50 s (95%)"
    assert profile_parts({"profile": None, "run_wall_accelerated_s": 10.0}) is None
    started = profile_parts({"profile": {**profile, "startup_s": 3.25}, "run_wall_accelerated_s": 10.0})
    assert started == shown + "; start-up (process time outside Run()) 3.25 s"


def test_a_profiler_running_before_run_is_running_again_after_it():
    """``python -m cProfile -m wormhole_ns3 run --profile ...`` ended in an internal error."""
    import cProfile
    import sys

    outer = cProfile.Profile()
    outer.enable()
    try:
        profile = RunProfile(clock=ticking())
        profile.run_started(None)
        profile.run_ended()
        assert ticking()() == 0  # a Python call after Run(): TypeError if the profiler was put back as a function
        assert sys.getprofile() is outer
    finally:
        outer.disable()
