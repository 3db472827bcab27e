"""A training workload as a dependency graph of tasks: flows between ranks and compute on a rank.

This is the contract between the generators (collectives, model presets,
SimAI and HPCC inputs) and whatever runs the graph (the ns-3 ``FlowDag``):
a task starts once every task it depends on has finished, a flow then waits
its ``duration`` and moves ``bytes`` from ``src`` to ``dst``, a compute task
occupies its rank for ``duration`` seconds. Nothing here knows about the
network; ranks are GPUs, and a fabric decides which host each one is.

Iteration k ends when task ``iteration_ends[k]`` finishes, so the runner can
report per-iteration times without knowing how the graph was made.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import InitVar, dataclass, field, fields
from operator import attrgetter

FLOW = "flow"
COMPUTE = "compute"
KINDS = (FLOW, COMPUTE)

#: Labels a task can be given; everything else about a task is structural.
LABELS = ("iteration", "collective", "group", "step", "phase")

FORMAT = "wormhole-ns3-workload"
VERSION = 1


@dataclass(frozen=True, slots=True)
class Task:
    """One node of the graph.

    ``src``/``dst`` are ranks; a compute task has ``dst == src`` and 0 bytes.
    ``duration`` is how long a compute task takes, or how long a flow waits
    after its prerequisites before it starts (usually 0). ``deps`` are ids of
    earlier tasks. The labels (``iteration``, ``collective`` such as
    "allreduce", ``group`` such as "dp/pp0/tp3", ``step`` inside the
    collective or -1, ``phase`` such as "backward") only describe the task
    for reports.
    """

    id: int
    kind: str
    src: int
    dst: int
    bytes: int
    duration: float
    deps: tuple[int, ...] = ()
    iteration: int = 0
    collective: str = ""
    group: str = ""
    step: int = -1
    phase: str = ""

    def check(self, ranks: int) -> None:
        """Raise ValueError naming this task and its first problem."""
        problem = self._problem(ranks)
        if problem:
            raise ValueError(f"task {self.id}: {problem}")

    def _problem(self, ranks: int) -> str | None:
        if self.kind not in KINDS:
            return f"kind must be 'flow' or 'compute', got {self.kind!r}"
        for end, rank in (("src", self.src), ("dst", self.dst)):
            if not 0 <= rank < ranks:
                return f"{end} rank {rank} outside 0..{ranks - 1}"
        if not isinstance(self.deps, tuple):
            return f"deps must be a tuple of task ids, got {type(self.deps).__name__}"
        if not (math.isfinite(self.duration) and self.duration >= 0):
            return f"duration must be a finite number >= 0, got {self.duration!r}"
        for dep in self.deps:
            if not 0 <= dep < self.id:
                return f"depends on task {dep}, which is not an earlier task"
        if self.kind == FLOW:
            if self.src == self.dst:
                return f"flow from rank {self.src} to itself"
            if not isinstance(self.bytes, int) or self.bytes <= 0:
                return f"flow size must be > 0 bytes, got {self.bytes}"
        else:
            if self.src != self.dst:
                return f"compute task has src {self.src} != dst {self.dst}"
            if self.bytes != 0:
                return f"compute task must carry 0 bytes, got {self.bytes}"
        return None


_LABEL_SET = frozenset(LABELS)
#: A task's fields in order: the columns of the JSON form and of the DataFrame.
_COLUMNS = [f.name for f in fields(Task)]
_DEPS = _COLUMNS.index("deps")
_task_values = attrgetter(*_COLUMNS)


@dataclass(frozen=True)
class Workload:
    """A validated task graph over ``ranks`` ranks; tasks are numbered 0..n-1 in order.

    ``metadata`` holds the parameters the workload was generated from
    (model, parallelism, sizes) so that reports can show them; it must be
    plain JSON (str keys, lists not tuples) to survive the JSON round trip.
    """

    name: str
    ranks: int
    tasks: tuple[Task, ...]
    iteration_ends: tuple[int, ...]
    metadata: dict = field(default_factory=dict)
    #: True when every task was checked as it was made (``WorkloadBuilder``): the graph is then not walked again,
    #: which at millions of tasks would take as long as building it.
    checked: InitVar[bool] = False

    def __post_init__(self, checked: bool) -> None:
        try:
            plain = json.loads(json.dumps(self.metadata, sort_keys=True, allow_nan=False))
        except (TypeError, ValueError) as problem:
            raise ValueError(f"workload {self.name!r}: metadata must be plain JSON ({problem})") from None
        object.__setattr__(self, "metadata", plain)
        if not checked:
            self.validate()

    def validate(self) -> None:
        """Every rule of the graph, checked in one place; the first broken one raises ValueError."""
        if self.ranks < 1:
            raise ValueError(f"workload {self.name!r}: needs at least 1 rank, got {self.ranks}")
        for position, task in enumerate(self.tasks):
            if task.id != position:
                raise ValueError(f"task at position {position} has id {task.id}; ids must be 0..n-1 in order")
            task.check(self.ranks)
        previous = -1
        for k, end in enumerate(self.iteration_ends):
            if not previous < end < len(self.tasks):
                raise ValueError(
                    f"iteration {k} ends at task {end}; ends must be increasing task ids below {len(self.tasks)}"
                )
            previous = end

    @property
    def iterations(self) -> int:
        return len(self.iteration_ends)

    @property
    def flows(self) -> list[Task]:
        return [t for t in self.tasks if t.kind == FLOW]

    @property
    def total_bytes(self) -> int:
        return sum(t.bytes for t in self.tasks)

    def to_json(self) -> str:
        """The workload as JSON text, one task per line; equal workloads give equal bytes."""
        return "".join(self.json_parts())

    def json_parts(self) -> Iterator[str]:
        """``to_json`` in pieces (the head, then a task per piece), to write a workload of millions of tasks
        without holding its text."""
        head = {
            "format": FORMAT,
            "version": VERSION,
            "name": self.name,
            "ranks": self.ranks,
            "iteration_ends": list(self.iteration_ends),
            "metadata": self.metadata,
            "columns": _COLUMNS,
        }
        header = json.dumps(head, sort_keys=True, separators=(",", ":"), allow_nan=False)
        yield header[:-1] + ',"tasks":[\n'
        for position, task in enumerate(self.tasks):
            yield (",\n" if position else "") + json.dumps(_task_row(task), separators=(",", ":"))
        yield "\n]}\n"

    @classmethod
    def from_json(cls, text: str) -> Workload:
        """Read what ``to_json`` wrote; anything else raises ValueError saying what is wrong."""
        try:
            document = json.loads(text)
        except json.JSONDecodeError as problem:
            raise ValueError(f"not a workload: invalid JSON ({problem})") from None
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise ValueError(f"not a workload: expected \"format\": \"{FORMAT}\"")
        if document.get("version") != VERSION:
            raise ValueError(f"workload version {document.get('version')!r} is not supported (expected {VERSION})")
        if document.get("columns") != _COLUMNS:
            raise ValueError(f"workload columns must be {_COLUMNS}")
        tasks = []
        for position, row in enumerate(document["tasks"]):
            if len(row) != len(_COLUMNS):
                raise ValueError(f"task at position {position} has {len(row)} fields, expected {len(_COLUMNS)}")
            row[_DEPS] = tuple(row[_DEPS])
            tasks.append(Task(*row))
        return cls(
            name=document["name"],
            ranks=document["ranks"],
            tasks=tuple(tasks),
            iteration_ends=tuple(document["iteration_ends"]),
            metadata=document["metadata"],
        )

    def to_frame(self):
        """One row per task (pandas DataFrame indexed by task id), for analysis and joins with results."""
        import pandas as pd  # here, not at the top: generating and running workloads should not pay for pandas

        frame = pd.DataFrame.from_records([_task_values(t) for t in self.tasks], columns=_COLUMNS)
        return frame.set_index("id", drop=False)


def _task_row(task: Task) -> list:
    """The task's values as a JSON-ready list (deps as a list)."""
    row = list(_task_values(task))
    row[_DEPS] = list(task.deps)
    return row


class WorkloadBuilder:
    """Adds tasks in dependency order and hands out their ids; ``build()`` freezes the graph.

    Tasks get the builder's current iteration unless a label says otherwise;
    ``end_iteration`` closes the current one and starts the next. Each task
    is checked when it is added, so a generator's mistake surfaces at the
    call that made it.
    """

    def __init__(self, name: str, ranks: int, metadata: dict | None = None) -> None:
        if ranks < 1:
            raise ValueError(f"workload {name!r}: needs at least 1 rank, got {ranks}")
        self.name = name
        self.ranks = ranks
        self.metadata = dict(metadata or {})
        self.iteration = 0
        self._tasks: list[Task] = []
        self._iteration_ends: list[int] = []

    def __len__(self) -> int:
        return len(self._tasks)

    def add_flow(
        self, src: int, dst: int, bytes: int, deps: Iterable[int] = (), delay: float = 0.0, **labels
    ) -> int:
        """A flow of ``bytes`` from rank ``src`` to ``dst``, starting ``delay`` s after ``deps`` finish."""
        return self._add(FLOW, src, dst, bytes, delay, deps, labels)

    def add_compute(self, rank: int, duration: float, deps: Iterable[int] = (), **labels) -> int:
        """``duration`` seconds of computation on ``rank`` once ``deps`` have finished."""
        labels.setdefault("collective", "compute")
        return self._add(COMPUTE, rank, rank, 0, duration, deps, labels)

    def end_iteration(self, deps: Iterable[int], rank: int = 0) -> int:
        """Close the current iteration when all of ``deps`` have finished; later tasks belong to the next.

        The end is a zero-length compute task on ``rank``: its finish time is
        the iteration's end, and the next iteration's tasks depend on its id.
        """
        end = self.add_compute(rank, 0.0, deps, phase="iteration-end")
        self._iteration_ends.append(end)
        self.iteration += 1
        return end

    def tasks_from(self, first: int) -> tuple[Task, ...]:
        """The tasks added since task ``first``: what a generator's last calls made, to check or to show."""
        return tuple(self._tasks[first:])

    def build(self) -> Workload:
        return Workload(self.name, self.ranks, tuple(self._tasks), tuple(self._iteration_ends), dict(self.metadata),
                        checked=True)

    def _add(self, kind: str, src: int, dst: int, size: int, duration: float, deps: Iterable[int], labels) -> int:
        unknown = sorted(labels.keys() - _LABEL_SET)
        if unknown:
            raise TypeError(f"unknown task label(s) {', '.join(unknown)}; labels are {', '.join(LABELS)}")
        labels.setdefault("iteration", self.iteration)
        task = Task(len(self._tasks), kind, src, dst, size, float(duration), tuple(sorted(set(deps))), **labels)
        task.check(self.ranks)
        self._tasks.append(task)
        return task.id
