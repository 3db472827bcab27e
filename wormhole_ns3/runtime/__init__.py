"""Getting ns-3 and the native modules into the process, and the one place Python reads them.

``loader`` loads ns-3's modules lazily, ``native`` compiles and loads the C++
modules of ``native/``, ``cxx`` builds and runs a script's C++ program,
``boundary`` is the one place that reads the C++ objects from Python, and
``trampoline`` makes the script's Python callbacks cost a call, not a
compilation, under the accelerator. Running a script under them is ``run/``'s.
"""
