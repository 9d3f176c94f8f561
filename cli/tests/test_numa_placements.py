"""Important placements (seed 001 section 4, python/cpi2/numa): the paper's two example machines,
sysfs fixture trees, this machine's own tree, and the placement trial's skip on one node."""

import io
import json
import os

import pytest

from cpi2.numa import __main__ as numa_cli
from cpi2.numa import placements, topology, trial


def by_nodes(ps):
    out = {}
    for p in ps:
        out.setdefault(p.l3_score, []).append(p)
    return {k: len(v) for k, v in out.items()}


def test_intel_24_vcpus_seven_placements():
    topo = topology.load("intel-e7-4830-v3")
    assert [c.name for c in placements.concerns(topo)] == ["L2/SMT", "L3"]  # symmetric: no interconnect
    ps = placements.important_placements(topo, 24)
    assert len(ps) == 7
    # one node sharing L2 caches, two 2-node, two 3-node, two 4-node placements
    assert by_nodes(ps) == {1: 1, 2: 2, 3: 2, 4: 2}
    assert ps[0].l3_score == 1 and ps[0].shares_l2 and ps[0].l2_score == 12
    for p in ps:
        cpus = placements.cpus_of(topo, p, 24)
        assert len(cpus) == 24 and len(set(cpus)) == 24
        assert len({topo.node_of(c) for c in cpus}) == p.l3_score
        assert len({g for g in topo.l2 for c in cpus if c in g}) == p.l2_score


def test_amd_16_vcpus_thirteen_placements():
    topo = topology.load("amd-6272")
    assert [c.name for c in placements.concerns(topo)] == ["L2/SMT", "L3", "Interconnect"]
    ps = placements.important_placements(topo, 16)
    assert len(ps) == 13
    # two 8-node (sharing L2 caches and not), three 2-node, eight 4-node placements
    assert by_nodes(ps) == {2: 3, 4: 8, 8: 2}
    eight = [p for p in ps if p.l3_score == 8]
    assert sorted(p.shares_l2 for p in eight) == [False, True]
    two = [p for p in ps if p.l3_score == 2]
    assert all(p.shares_l2 for p in two)  # 16 vCPUs on 2 nodes of 8 threads: every module full
    four = [p for p in ps if p.l3_score == 4]
    assert sum(p.shares_l2 for p in four) == 4  # half sharing L2 caches, half not
    assert len({p.ic_score for p in four}) == 4
    # the paper's statements: {2,3,4,5} has the best 4-node interconnect score, so the packing
    # with {0,1,6,7} is kept; {0,2,4,6} with {1,3,5,7} beats {0,1,4,5} with {2,3,6,7}
    assert four[0].nodes == (2, 3, 4, 5)
    assert placements.packing_kept(topo, 16, [{2, 3, 4, 5}, {0, 1, 6, 7}])
    assert placements.packing_kept(topo, 16, [{0, 2, 4, 6}, {1, 3, 5, 7}])
    assert not placements.packing_kept(topo, 16, [{0, 1, 4, 5}, {2, 3, 6, 7}])
    assert topo.distance[(0, 5)] > topo.distance[(0, 1)] and topo.distance[(3, 6)] > topo.distance[(3, 2)]


def test_scores_balance_and_feasibility():
    assert placements.scores(16, 8, 8) == [2, 4, 8]  # AMD L3: 16/1 > 8 threads per node
    assert placements.scores(16, 32, 2) == [8, 16]
    assert placements.scores(24, 48, 2) == [12, 24]
    assert placements.scores(7, 4, 24) == [1]
    with pytest.raises(ValueError):
        placements.important_placements(topology.load("intel-e7-4830-v3"), 97)


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def fixture(root, nodes=2, cores=2, smt=2, l3=True):
    """nodes x cores x smt threads, numbered node by node, SMT siblings consecutive."""
    n = nodes * cores * smt
    write(root, "devices/system/node/online", "0-%d\n" % (nodes - 1))
    for k in range(nodes):
        lo = k * cores * smt
        write(root, "devices/system/node/node%d/cpulist" % k, "%d-%d\n" % (lo, lo + cores * smt - 1))
        write(
            root,
            "devices/system/node/node%d/distance" % k,
            " ".join("10" if j == k else "20" for j in range(nodes)) + "\n",
        )
    for c in range(n):
        base = "devices/system/cpu/cpu%d/cache" % c
        core = c - c % smt
        node = c // (cores * smt)
        write(root, base + "/index0/level", "1\n")
        write(root, base + "/index0/type", "Data\n")
        write(root, base + "/index0/shared_cpu_list", "%d-%d\n" % (core, core + smt - 1))
        write(root, base + "/index2/level", "2\n")
        write(root, base + "/index2/type", "Unified\n")
        write(root, base + "/index2/shared_cpu_list", "%d-%d\n" % (core, core + smt - 1))
        if l3:
            write(root, base + "/index3/level", "3\n")
            write(root, base + "/index3/type", "Unified\n")
            write(
                root, base + "/index3/shared_cpu_list", "%d-%d\n" % (node * cores * smt, (node + 1) * cores * smt - 1)
            )


def test_sysfs_fixture_two_nodes(tmp_path):
    fixture(str(tmp_path))
    topo = topology.from_sysfs(str(tmp_path))
    assert topo.nodes == [0, 1] and len(topo.l2) == 4 and len(topo.l3) == 2
    assert topo.distance[(0, 1)] == 20
    ps = placements.important_placements(topo, 4)
    # 4 vCPUs: one node (both cores, SMT shared) or two nodes (SMT shared or not)
    assert [(p.l3_score, p.l2_score) for p in ps] == [(1, 2), (2, 2), (2, 4)]
    out = io.StringIO()
    assert numa_cli.main(["placements", "--vcpus", "4", "--sysfs", str(tmp_path), "--json"], out) == 0
    doc = json.loads(out.getvalue())
    assert [p["cpus"] for p in doc["placements"]] == [[0, 1, 2, 3], [0, 1, 4, 5], [0, 2, 4, 6]]


def test_sysfs_fixture_without_l3_uses_nodes(tmp_path):
    fixture(str(tmp_path), l3=False)
    assert len(topology.from_sysfs(str(tmp_path)).l3) == 2


@pytest.mark.parametrize(
    "rel,text",
    [
        ("devices/system/node/online", "1-0\n"),
        ("devices/system/node/online", "zero\n"),
        ("devices/system/node/node0/distance", "10\n"),
        ("devices/system/node/node0/distance", "10 999\n"),
        ("devices/system/node/node1/cpulist", "0-3\n"),  # threads in two nodes
        ("devices/system/cpu/cpu0/cache/index2/shared_cpu_list", "0-x\n"),
    ],
)
def test_sysfs_hostile(tmp_path, rel, text):
    fixture(str(tmp_path))
    write(str(tmp_path), rel, text)
    with pytest.raises(topology.TopologyError):
        topology.from_sysfs(str(tmp_path))


def test_this_machine_and_trial():
    topo = topology.from_sysfs()
    assert topo.threads and placements.important_placements(topo, 1)
    if len(topo.nodes) > 1:
        results = trial.trial(topo, 1, seconds=1.0, buffer_bytes=1 << 20)
        assert len(results) == 2 and all(rate > 0 for _, _, rate, _ in results)
        return
    with pytest.raises(trial.TrialSkipped, match="one NUMA node"):
        trial.trial(topo, 1)
    out = io.StringIO()
    assert numa_cli.main(["trial", "--vcpus", "1"], out) == 0
    assert out.getvalue().startswith("trial skipped: ") and "one NUMA node" in out.getvalue()


def test_cli_text_and_errors(tmp_path):
    out = io.StringIO()
    assert numa_cli.main(["placements", "--vcpus", "16", "--machine", "amd-6272"], out) == 0
    assert "13 important placements for 16 vCPUs" in out.getvalue() and "Interconnect" in out.getvalue()
    assert numa_cli.main(["placements", "--vcpus", "16", "--machine", str(tmp_path / "none.json")], io.StringIO()) == 2
