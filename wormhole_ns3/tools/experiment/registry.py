"""The experiments the runner knows by name: which script, and its arguments for each preset.

An experiment is an ordinary ns-3 script; a preset is a named list of its
arguments, so that ``experiment run llm-training --preset gpt-small`` means
the same run on every machine. Scripts shipped in the repository's
``experiments/`` folder are found there in a checkout and inside the package
in an installed wheel (``experiment_script``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path

from wormhole_ns3.examples import DUMBBELL_PRESETS, dumbbell_path
from wormhole_ns3.models.workloads import ChakraTraceError, list_presets
from wormhole_ns3.models.workloads.chakra import trace_files
from wormhole_ns3.runtime.packaged import packaged_dir
from wormhole_ns3.tools.experiment.iteration_lines import IterationLines

#: The option the runner gives a script that writes its results (``ResultWriter``) into a folder.
RESULTS_DIR_OPTION = "--results-dir"


class ExperimentError(Exception):
    """A problem with what the user asked for or with a run, said in one line.

    ``exit_code`` is what the command line exits with (2 for a bad request,
    the script's own code when it failed); ``details`` are further lines to
    show under the message, such as the last lines a failed script printed.
    """

    def __init__(self, message: str, exit_code: int = 2, details: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.details = details

    def __reduce__(self):
        """Pickled whole, so a failure on a Dask or Ray worker keeps its exit code and details."""
        return type(self), (str(self), self.exit_code, self.details)


class Input(Enum):
    """What the value of a script's input option is."""

    VALUE = "value"  #: given as it is
    FILE = "file"  #: a file, given to the script as an absolute path
    TRACE = "trace"  #: Chakra traces, <prefix>.<rank>.et: a folder of them or their prefix, given absolute


@dataclass(frozen=True)
class Experiment:
    """A named ns-3 script and the script arguments of each of its presets.

    ``results_dir_option`` is the option through which the script takes the
    folder for its ``ResultWriter``, or None for a script that writes no
    tables of its own (the runner then makes ``flows.csv`` from the flows the
    harness tracked). ``iteration_lines`` says how such a script prints its
    training iterations (the runner then makes ``iterations.csv`` of its
    output), or None if it prints none. ``inputs`` are the script's options
    through which a user gives inputs of their own (``with_inputs``), by
    option: what its value is. ``user_script``: a script written as ns-3's
    users write theirs (``experiments/zoo``), whose kept comparisons the
    scoreboard shows in a section of their own.
    """

    name: str
    script: Path
    description: str
    presets: dict[str, list[str]]
    default_preset: str
    results_dir_option: str | None = RESULTS_DIR_OPTION
    iteration_lines: IterationLines | None = None
    inputs: dict[str, Input] = field(default_factory=dict)
    user_script: bool = False

    def __post_init__(self) -> None:
        if self.default_preset not in self.presets:
            raise ValueError(
                f"experiment {self.name!r}: default preset {self.default_preset!r} is not one of its presets")

    def script_args(self, preset: str) -> list[str]:
        """The script's arguments for ``preset``; an unknown preset raises ExperimentError naming the known ones."""
        if preset not in self.presets:
            raise ExperimentError(
                f"experiment {self.name} has no preset {preset!r}; its presets: {', '.join(self.presets)}"
            )
        return list(self.presets[preset])

    def with_inputs(self, preset: str | None, given: dict[str, str]) -> tuple[Experiment, str]:
        """This experiment with one more preset: the user's inputs (option -> value), and that preset's name.

        A workload input (an option of ``WORKLOAD_INPUTS``) replaces the
        preset's arguments; other inputs (a topology file, say) come after
        them. Files must exist and are given to the script as absolute paths,
        so that the preset means the same files from any folder. The name says
        what was given: ``simai-microAllReduce``, ``gpt-small-Spectrum-X_8g``.
        """
        unknown = [option for option in given if option not in self.inputs]
        if unknown:
            raise ExperimentError(f"experiment {self.name} takes no {unknown[0]}")
        workload = [option for option in given if option in WORKLOAD_INPUTS]
        if workload and preset is not None:
            raise ExperimentError(f"--preset and {workload[0]} are alternatives: give one of them")
        base = preset or self.default_preset
        args = [] if workload else self.script_args(base)
        parts = [] if workload else [base]
        for option, value in given.items():
            kind = self.inputs[option]
            if kind is Input.VALUE:
                parts.append(NAMED_VALUES.get(option, "{}").format(value, "" if value == "1" else "s"))
            else:
                path = Path(value)
                _check_input(option, value, path, kind)
                value = str(path.resolve())
                parts.append(WORKLOAD_INPUTS.get(option, "") + (path.stem if kind is Input.FILE else path.name))
            args += [option, value]
        name = "-".join(parts)
        return replace(self, presets={**self.presets, name: args}), name


def _check_input(option: str, value: str, path: Path, kind: Input) -> None:
    """ExperimentError, in one line, unless ``path`` is the file or the Chakra traces ``option`` takes."""
    if kind is Input.TRACE:
        try:
            trace_files(path)
        except ChakraTraceError as error:
            raise ExperimentError(f"{option}: {error}") from None
    elif not path.is_file():
        raise ExperimentError(f"{option} {value}: {'is a directory, not a file' if path.is_dir() else 'no such file'}")


#: Inputs that are a workload of their own (instead of a preset's), and the prefix of the preset they make.
WORKLOAD_INPUTS = {"--simai": "simai-", "--hpcc-flows": "hpcc-", "--chakra": "chakra-"}
#: How an input's value reads in a preset's name, where the bare value would be ambiguous
#: (``moe-8x7b-64g-dcqcn-1-1bucket``: one iteration, one gradient bucket).
NAMED_VALUES = {"--dp-buckets": "{}bucket{}"}


def experiment_script(relative: str) -> Path:
    """A script of the repository's ``experiments/`` folder, in a checkout or an installed wheel."""
    return packaged_dir("experiments") / relative


def experiments() -> dict[str, Experiment]:
    """Every registered experiment by name."""
    registered = (
        Experiment(
            name="llm-training",
            script=experiment_script("llm_training.py"),
            description="LLM training iterations (GPT, MoE) on a datacenter fabric, one preset per workload "
                        "preset (DCTCP), and NAME-dcqcn / NAME-hpcc over RoCEv2",
            presets={
                f"{name}{suffix}": ["--preset", name, *transport]
                for suffix, transport in (("", []), ("-dcqcn", ["--transport", "dcqcn"]),
                                          ("-hpcc", ["--transport", "hpcc"]))
                for name in list_presets()
            },
            default_preset="gpt-small",
            inputs={"--simai": Input.FILE, "--hpcc-flows": Input.FILE, "--chakra": Input.TRACE,
                    "--topology-file": Input.FILE, "--intra-server": Input.VALUE, "--transport": Input.VALUE,
                    "--iterations": Input.VALUE, "--dp-buckets": Input.VALUE},
        ),
        Experiment(
            name="dctcp-dumbbell",
            script=dumbbell_path(),
            description="the demo: DCTCP flows sharing one 10 Gbps bottleneck",
            presets={name: list(args) for name, args in DUMBBELL_PRESETS.items()},
            default_preset="small",
            results_dir_option=None,
        ),
        *user_scripts(),
    )
    return {experiment.name: experiment for experiment in registered}


def user_scripts() -> tuple[Experiment, ...]:
    """The scripts of ``experiments/zoo``, written as ns-3's users write theirs, as experiments.

    Each has its own defaults as its ``default`` preset, and small presets of
    a few seconds in plain ns-3 that vary what a user varies (sizes, hosts,
    rates, marking); ``moe-alltoall``'s ``tiny``, one layer of two groups of
    two hosts, is what the end-to-end test compares in the time of two
    ns-3 start-ups. They write no tables: the runner takes
    their flows from the harness and their iterations from the
    ``iteration K end SECONDS`` lines they print.
    """
    zoo = (
        ("two-rings", "two_rings.py", "two ring all-reduces contending on a leaf-spine's uplinks", {
            "small": ["--hosts-per-leaf", "2", "--mb", "2", "--iterations", "2"],
            "small-3leaves-25g": ["--leaves", "3", "--hosts-per-leaf", "2", "--mb", "1.5", "--iterations", "2",
                                  "--rate", "25Gbps", "--k", "100"],
        }),
        ("moe-alltoall", "moe_alltoall.py", "expert-parallel all-to-alls of groups on a leaf-spine", {
            "small": ["--leaves", "2", "--hosts-per-leaf", "4", "--message-kb", "256", "--iterations", "2"],
            "tiny": ["--leaves", "2", "--hosts-per-leaf", "2", "--message-kb", "128", "--iterations", "2",
                     "--layers", "1"],
            "small-interleaved": ["--leaves", "2", "--hosts-per-leaf", "4", "--placement", "interleaved",
                                  "--message-kb", "128", "--iterations", "2", "--rate", "25Gbps"],
        }),
        ("hierarchical-allreduce", "hierarchical_allreduce.py",
         "reduce-scatter in each leaf, all-reduce across leaves, all-gather", {
             "small": ["--leaves", "2", "--hosts-per-leaf", "2", "--mb", "4", "--iterations", "2"],
             "small-3leaves-100g": ["--leaves", "3", "--hosts-per-leaf", "2", "--mb", "3", "--iterations", "2",
                                    "--rate", "100Gbps", "--delay", "1us"],
         }),
        ("pipeline-1f1b", "pipeline_1f1b.py", "a 1F1B pipeline across leaves with data-parallel gradient rings", {
            "small": ["--stages", "2", "--replicas", "2", "--micro-batches", "4", "--activation-mb", "0.5",
                      "--grad-mb", "2", "--iterations", "2"],
            "small-3stages-100g": ["--stages", "3", "--replicas", "2", "--micro-batches", "3", "--activation-mb",
                                   "0.5", "--grad-mb", "2", "--iterations", "2", "--rate", "100Gbps"],
        }),
        ("background-traffic", "background_traffic.py",
         "a ring all-reduce job beside Poisson web-search background flows", {
             "small": ["--leaves", "2", "--job-hosts", "4", "--mb", "4", "--iterations", "2",
                       "--background-ms", "10", "--marking", "step"],
             "small-red-defaults": ["--leaves", "2", "--job-hosts", "4", "--mb", "2", "--iterations", "2",
                                    "--background-ms", "5", "--load", "0.05"],
         }),
        ("two-jobs", "two_jobs.py", "a ring job and an all-to-all job sharing a leaf-spine, the second later", {
            "small": ["--leaves", "2", "--hosts-per-job", "4", "--ring-mb", "2", "--ring-iterations", "3",
                      "--a2a-kb", "64", "--a2a-iterations", "2", "--layers", "1", "--second-start-ms", "3"],
            "small-red-defaults": ["--leaves", "2", "--hosts-per-job", "4", "--ring-mb", "2",
                                   "--ring-iterations", "2", "--a2a-kb", "64", "--a2a-iterations", "2",
                                   "--layers", "1", "--second-start-ms", "2", "--marking", "red-defaults"],
        }),
    )
    return tuple(
        Experiment(name=name, script=experiment_script(f"zoo/{file}"), description=f"user script: {description}",
                   presets={"default": [], **small}, default_preset="default", results_dir_option=None,
                   iteration_lines=IterationLines(), user_script=True)
        for name, file, description, small in zoo
    )


def get_experiment(name: str) -> Experiment:
    """The experiment called ``name``; an unknown name raises ExperimentError listing the known ones."""
    known = experiments()
    if name not in known:
        raise ExperimentError(f"unknown experiment {name!r}; known experiments: {', '.join(known)}")
    return known[name]
