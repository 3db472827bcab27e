"""Running a user's script: the harness (plain or accelerated, Python or C++) and the session of its simulations.

Where the accelerator (``accel``), the memo and the loaded ns-3 (``runtime``)
are put together for one script: a fresh controller per simulation, one report
of them all.
"""
