"""``experiment export-chakra``: a preset as Chakra traces, which ``--chakra`` reads back as the preset."""

from wormhole_ns3.models.workloads import chakra_to_workload, preset_workload, read_chakra_trace


def test_a_preset_is_exported_once_and_replaced_only_with_force(tmp_path):
    from test_experiment_compare import experiment

    done = experiment(tmp_path, "export-chakra", "--preset", "moe-small", "--iterations", "1", "--out", "traces")
    assert done.returncode == 0, done.stderr
    assert done.stdout == ("wrote 16 traces traces/moe-small.<rank>.et: 896 flows, 0.211 GB, 1 iteration; "
                           "run them with --chakra traces/moe-small\n")
    assert {path.name for path in (tmp_path / "traces").iterdir()} == {f"moe-small.{r}.et" for r in range(16)}
    assert chakra_to_workload(read_chakra_trace(tmp_path / "traces")).tasks == preset_workload(
        "moe-small", iterations=1).tasks
    again = experiment(tmp_path, "export-chakra", "--preset", "moe-small", "--out", "traces")
    assert again.returncode == 2
    assert again.stderr.splitlines()[-1] == ("wormhole-ns3: error: traces already holds traces of moe-small "
                                             "(moe-small.0.et, ...): --force replaces them")
    forced = experiment(tmp_path, "export-chakra", "--preset", "moe-small", "--out", "traces", "--force")
    assert forced.returncode == 0 and "1,792 flows, 0.422 GB, 2 iterations" in forced.stdout
    unknown = experiment(tmp_path, "export-chakra", "--preset", "gpt-huge", "--out", "traces")
    assert unknown.returncode == 2 and unknown.stderr.splitlines()[-1].startswith(
        "wormhole-ns3: error: unknown workload preset 'gpt-huge'; known presets: gpt-small, moe-small")
