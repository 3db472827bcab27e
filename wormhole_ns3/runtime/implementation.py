"""How the harness selects its simulator implementation, so that ``Config::Reset()`` keeps it.

ns-3 reads the environment variable ``NS_GLOBAL_VALUE`` once, when its core
library is loaded, into each global value's *initial* value, and
``Config::Reset()`` returns every global value to its initial value. ns-3's
``TestCase::Run`` calls it around every test case, and so may any script. A
``GlobalValue::Bind`` changes only the current value: after a reset the simulator
was ns-3's DefaultSimulatorImpl again, and the accelerator had stepped out without
a word. With the harness's implementation in the environment while the library
loads, it is the initial value: a reset returns to it, and a script that binds an
implementation of its own still gets its own (``run.session`` then says that
those runs were not accelerated).

The variable is put back as it was once the library is loaded (ns-3 keeps what it
read): a program the script starts in a child process must not inherit it, as it
has no such implementation registered. A user's own ``NS_GLOBAL_VALUE`` is kept,
and one that names the implementation wins.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

#: The environment variable ns-3 reads global values from ("name=value;name=value").
GLOBAL_VALUES = "NS_GLOBAL_VALUE"
#: The global value naming the simulator implementation.
IMPLEMENTATION = "SimulatorImplementationType"


def chosen_by_user(environment: str | None) -> bool:
    """Whether a user's ``NS_GLOBAL_VALUE`` already names the simulator implementation."""
    entries = (environment or "").split(";")
    return any(entry.partition("=")[0].strip() == IMPLEMENTATION for entry in entries)


@dataclass(frozen=True)
class Selection:
    """The harness's simulator implementation (a TypeId name), made ns-3's initial choice."""

    type_name: str

    @contextmanager
    def preselected(self) -> Iterator[None]:
        """While ns-3's core library loads, the environment names this implementation (unless the user's does)."""
        saved = os.environ.get(GLOBAL_VALUES)
        if not chosen_by_user(saved):
            os.environ[GLOBAL_VALUES] = ";".join(filter(None, [saved, f"{IMPLEMENTATION}={self.type_name}"]))
        try:
            yield
        finally:
            if saved is None:
                os.environ.pop(GLOBAL_VALUES, None)
            else:
                os.environ[GLOBAL_VALUES] = saved

    def confirm(self, ns: Any) -> None:
        """Bind the implementation if ns-3 was loaded before the harness (the environment came too late).

        The script then runs as before this module existed: accelerated until a
        ``Config::Reset()``, which the session would report.
        """
        if chosen_by_user(os.environ.get(GLOBAL_VALUES)):
            return
        value = ns.StringValue()
        ns.GlobalValue.GetValueByName(IMPLEMENTATION, value)
        if str(value.Get()) != self.type_name:
            ns.GlobalValue.Bind(IMPLEMENTATION, ns.StringValue(self.type_name))
