"""Getting ns-3 and the native modules into the process, and running a user's script under them.

``loader`` loads ns-3's modules lazily, ``native`` compiles and loads the C++
modules of ``native/``, ``harness`` runs a script (Python, or a C++ program
through ``cxx``) plain or accelerated, ``boundary`` is the one place that
reads the C++ objects from Python, and ``trampoline`` makes the script's Python
callbacks cost a call, not a compilation, under the accelerator.
"""
