import pytest

from wormhole_ns3.models.workloads import WorkloadFileError, read_simai_workload

# a two-layer workload in SimAI's format (tab or space separated)
WORKLOAD = (
    "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 2 ga: 4 all_gpus: 64\n"
    "2\n"
    "embedding\t-1\t1\tNONE\t0\t1\tNONE\t0\t1\tALLREDUCE\t4194304\t100\n"
    "mlp_row -1 5 REDUCESCATTER 1048576 5 NONE 0 5 ALLGATHER_DP_EP 2048 100\n"
)


def test_a_workload_is_read_layer_by_layer(tmp_path):
    path = tmp_path / "w.txt"
    path.write_text(WORKLOAD)
    workload = read_simai_workload(path)
    assert workload.policy == "HYBRID_TRANSFORMER_FWD_IN_BCKWD"
    assert workload.gpus == 64 and workload.tensor_parallel == 8
    assert workload.parallelism["pp"] == 2
    first, second = workload.layers
    assert not first.forward.communicates
    assert (first.weight_gradient.collective, first.weight_gradient.bytes) == ("ALLREDUCE", 4194304)
    assert second.forward.collective == "REDUCESCATTER" and second.forward.compute_time == 5
    assert second.weight_gradient.collective == "ALLGATHER_DP_EP"


@pytest.mark.parametrize(
    "broken, line, problem",
    [
        (WORKLOAD.replace("REDUCESCATTER 1048576", "SCATTERALL 1048576"), 4, "unknown collective 'SCATTERALL'"),
        (WORKLOAD.replace("\n2\n", "\n3\n"), 4, "line 2 says 3 layers, file has 2"),
        (WORKLOAD.replace("ga: 4", "ga: four"), 1, "ga: must be an integer, got 'four'"),
        (WORKLOAD.replace(" 100\n", "\n"), 4, "a layer has 12 fields, this line has 11"),
    ],
)
def test_a_malformed_workload_names_file_line_and_problem(tmp_path, broken, line, problem):
    path = tmp_path / "w.txt"
    path.write_text(broken)
    with pytest.raises(WorkloadFileError) as error:
        read_simai_workload(path)
    assert str(error.value) == f"{path}:{line}: {problem}"


@pytest.mark.parametrize(
    "content, line, problem",
    [
        (WORKLOAD.replace("\n2\n", "\n\u00b2\n").encode(), 2, "the number of layers must be an integer, got '²'"),
        (WORKLOAD.replace("\n2\n", "\n" + "9" * 5000 + "\n").encode(), 2,
         f"the number of layers must be an integer, got {'9' * 40!r}... (5000 characters)"),
        (WORKLOAD.replace("ga: 4", "ga: " + "4" * 5000).encode(), 1,
         f"ga: must be an integer, got {'4' * 40!r}... (5000 characters)"),
        (WORKLOAD.replace("REDUCESCATTER 1048576", "REDUCESCATTER 1048576\u00b2").encode(), 4,
         "the forward bytes must be an integer, got '1048576²'"),
        (WORKLOAD.replace("mlp_row -1 5", "mlp_row -1 " + "5" * 5000).encode(), 4,
         f"the forward compute time must be an integer, got {'5' * 40!r}... (5000 characters)"),
        (WORKLOAD.encode().replace(b"mlp_row", b"mlp\xe9row"), 4, "not UTF-8 text (byte 0xe9)"),
        (b"\x80" + WORKLOAD.encode(), 1, "not UTF-8 text (byte 0x80)"),
        (b"\xef\xbb\xbf\n\x80" + WORKLOAD.encode(), 2, "not UTF-8 text (byte 0x80)"),  # after a BOM
    ],
)
def test_bad_numbers_and_bytes_are_file_errors(tmp_path, content, line, problem):
    path = tmp_path / "w.txt"
    path.write_bytes(content)
    with pytest.raises(WorkloadFileError) as error:
        read_simai_workload(path)
    assert str(error.value) == f"{path}:{line}: {problem}"
