"""RDMA in the workload path: FlowDag queue pairs, the RoCEv2 fabric transport, the LLM script."""

import pytest

from wormhole_ns3.core.flows import FlowKind

from conftest import REPO, load_json

RING = REPO / "tests" / "scripts" / "rdma_dag_ring.py"
LLM = REPO / "experiments" / "llm_training.py"


def _iteration_times(stdout):
    return [float(line.split()[3]) for line in stdout.splitlines() if line.startswith("iteration")]


@pytest.mark.slow
def test_flowdag_rdma_flows_complete_with_their_ports_and_ring_timing(plain_python):
    done = plain_python(RING, "--iterations", "2", "--mb", "8")
    assert done.returncode == 0, done.stderr_lines[-5:]
    lines = done.stdout.splitlines()
    assert "tasks finished 58 of 58" in lines
    fcts = [int(line.split()[2]) for line in lines if line.startswith("flow")]
    assert len(fcts) == 2 * 24  # 6 steps (reduce-scatter, all-gather) of 4 flows per iteration
    # 2 MB per flow at 100 Gb/s, each flow alone on its links: 160 us of payload, ~2% headers,
    # plus the first packet's path
    assert all(160_000 < fct < 185_000 for fct in fcts)
    times = _iteration_times(done.stdout)
    assert len(times) == 2 and times[0] == pytest.approx(times[1], rel=1e-6)


def test_rdma_transport_installs_nics_and_dcqcn_switch_queues(ns):  # noqa: F811
    from wormhole_ns3.models.fabric import LeafSpine, RdmaTransportConfig, build_fabric

    transport = RdmaTransportConfig(kmin_bytes=100_000, kmax_bytes=400_000, pmax=0.1, pfc=True)
    fabric = build_fabric(ns, LeafSpine(leaves=2, hosts_per_leaf=2), transport=transport)
    assert all(host.GetObject[ns.RdmaNic]() for host in fabric.hosts)
    assert fabric.ecn_thresholds == {}
    for port in fabric.ports:
        if port.node.startswith("host"):
            assert port.queue_disc is None  # the NIC owns the device
            continue
        assert port.queue_disc.GetInstanceTypeId().GetName() == "ns3::RdmaEgressQueueDisc"
        red = port.queue_disc.GetQueueDiscClass(1).GetQueueDisc()
        value = ns.DoubleValue()
        red.GetAttribute("MinTh", value)
        assert value.Get() == 100_000
        red.GetAttribute("LInterm", value)
        assert value.Get() == pytest.approx(10)
    assert all(switch.GetObject[ns.RdmaPfcSwitch]() for switch in fabric.switches)
    assert "queues of the transport" in fabric.describe()
    assert "RDMA dcqcn" in fabric.describe() and "PFC XOFF 200 KB" in fabric.describe()


@pytest.mark.parametrize("options, problem", [
    ({"congestion_control": "timely"}, "congestion_control must be one of dcqcn, hpcc"),
    ({"kmin_bytes": 1000}, "give both kmin_bytes and kmax_bytes"),
    ({"kmin_bytes": 5000, "kmax_bytes": 1000}, "need 0 < kmin_bytes <= kmax_bytes"),
    ({"pmax": 0.5}, "pmax goes with kmin_bytes and kmax_bytes"),
    ({"pfc": True, "pfc_xon_bytes": 300_000}, "PFC needs 0 < pfc_xon_bytes < pfc_xoff_bytes"),
])
def test_rdma_transport_options_are_checked_with_one_clear_line(options, problem):
    from wormhole_ns3.models.fabric import FabricSpecError, RdmaTransportConfig

    with pytest.raises(FabricSpecError, match=problem):
        RdmaTransportConfig(**options)


@pytest.mark.slow
def test_the_llm_script_runs_gpt_small_over_dcqcn_plain_and_accelerated(wormhole, tmp_path):
    args = ("--preset", "gpt-small", "--transport", "dcqcn")
    baseline = wormhole("run", "--baseline", "--results", tmp_path / "base.json", LLM, *args)
    accelerated = wormhole("run", "--results", tmp_path / "accel.json", LLM, *args)
    assert baseline.returncode == accelerated.returncode == 0, accelerated.stderr_lines[-5:]
    for done in (baseline, accelerated):
        assert "transport RDMA dcqcn" in done.stdout
        assert "tasks finished 610 of 610" in done.stdout
    assert _iteration_times(accelerated.stdout) == pytest.approx(_iteration_times(baseline.stdout), rel=1e-3)
    run = load_json(tmp_path / "accel.json")
    assert len(run["flows"]) == 320 and all(f["kind"] == FlowKind.RDMA_DCQCN for f in run["flows"])
    assert all(f["rx_bytes"] == f["bytes"] for f in run["flows"])


@pytest.mark.slow
def test_the_llm_script_refuses_a_dctcp_threshold_with_rdma(plain_python):
    done = plain_python(LLM, "--transport", "dcqcn", "--ecn-k", "20")
    assert done.returncode == 2
    assert "--ecn-k is DCTCP's marking threshold" in done.stderr
