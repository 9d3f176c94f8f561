"""A machine's topology for placement: NUMA nodes, the hardware threads of each, the groups of
threads that share an L2 cache (SMT siblings, or an AMD module's two cores) and an L3 cache, the
node distance table, and where the interconnect is asymmetric, the bandwidth of each link.

Read from sysfs (`from_sysfs`: /sys/devices/system/node and /sys/devices/system/cpu, every file
checked) or from a described machine (`from_description`: a JSON object, see `machines/`)."""

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

MACHINES = Path(__file__).resolve().parent / "machines"


class TopologyError(ValueError):
    """A sysfs file or a description that does not make a machine."""


@dataclass
class Topology:
    name: str
    node_cpus: dict  # node id -> sorted list of hardware thread ids
    l2: list  # frozensets of threads sharing an L2 cache
    l3: list  # frozensets of threads sharing an L3 cache
    distance: dict = field(default_factory=dict)  # (node, node) -> distance
    links: dict = field(default_factory=dict)  # (node, node), node < node -> link bandwidth

    @property
    def nodes(self):
        return sorted(self.node_cpus)

    @property
    def threads(self):
        return sorted(c for cs in self.node_cpus.values() for c in cs)

    def node_of(self, cpu):
        for n, cs in self.node_cpus.items():
            if cpu in cs:
                return n
        raise KeyError(cpu)

    def l3_domains(self):
        """The L3 caches, each as (index, frozenset of threads), ordered by their first thread."""
        return list(enumerate(sorted(self.l3, key=min)))

    def check(self):
        threads = self.threads
        if not threads or len(set(threads)) != len(threads):
            raise TopologyError("%s: no threads, or a thread in two nodes" % self.name)
        for kind, groups in (("L2", self.l2), ("L3", self.l3)):
            seen = sorted(c for g in groups for c in g)
            if seen != threads:
                raise TopologyError("%s: the %s groups do not cover each thread once" % (self.name, kind))
        for g in self.l3:
            if len({self.node_of(c) for c in g}) != 1:
                raise TopologyError("%s: an L3 cache spans two nodes" % self.name)
        for a, b in self.links:
            if a not in self.node_cpus or b not in self.node_cpus or a >= b:
                raise TopologyError("%s: link %s-%s names no pair of nodes" % (self.name, a, b))
        return self


def parse_list(text):
    """A kernel CPU or node list ("0-3,8,10-11") into a list of ints; TopologyError if malformed."""
    text = text.strip()
    out = []
    if not text:
        return out
    for part in text.split(","):
        a, sep, b = part.partition("-")
        if not a.isdigit() or (sep and not b.isdigit()):
            raise TopologyError("malformed list %r" % text[:64])
        lo, hi = int(a), int(b) if sep else int(a)
        if hi < lo or hi - lo > 65536:
            raise TopologyError("malformed range %r" % part[:64])
        out.extend(range(lo, hi + 1))
    return out


def _read(path):
    try:
        with open(path) as f:
            return f.read(65536)
    except OSError as e:
        raise TopologyError("%s: %s" % (path, e.strerror)) from e


def from_sysfs(root="/sys"):
    """The machine under root (a real /sys or a fixture tree of the same layout)."""
    node_dir = os.path.join(root, "devices/system/node")
    cpu_dir = os.path.join(root, "devices/system/cpu")
    nodes = parse_list(_read(os.path.join(node_dir, "online")))
    if not nodes:
        raise TopologyError("%s/online: no node" % node_dir)
    node_cpus, distance = {}, {}
    for n in nodes:
        node_cpus[n] = parse_list(_read(os.path.join(node_dir, "node%d" % n, "cpulist")))
        row = _read(os.path.join(node_dir, "node%d" % n, "distance")).split()
        if len(row) != len(nodes) or not all(d.isdigit() and 0 < int(d) < 256 for d in row):
            raise TopologyError("%s/node%d/distance: not %d distances of 1-255" % (node_dir, n, len(nodes)))
        for m, d in zip(nodes, row):
            distance[(n, m)] = int(d)
    l2, l3 = set(), set()
    for c in sorted(c for cs in node_cpus.values() for c in cs):
        groups = {}
        cache = os.path.join(cpu_dir, "cpu%d" % c, "cache")
        for index in sorted(os.listdir(cache)) if os.path.isdir(cache) else []:
            if not index.startswith("index"):
                continue
            level = _read(os.path.join(cache, index, "level")).strip()
            kind = _read(os.path.join(cache, index, "type")).strip()
            if level in ("2", "3") and kind in ("Unified", "Data"):
                groups[level] = frozenset(parse_list(_read(os.path.join(cache, index, "shared_cpu_list"))))
        if "2" not in groups:  # no cache information: the SMT siblings share the core's L2
            sib = os.path.join(cpu_dir, "cpu%d" % c, "topology", "thread_siblings_list")
            groups["2"] = frozenset(parse_list(_read(sib))) if os.path.exists(sib) else frozenset([c])
        if "3" not in groups:  # no L3 described: the node is the unit
            groups["3"] = frozenset(node_cpus[next(n for n in nodes if c in node_cpus[n])])
        l2.add(groups["2"])
        l3.add(groups["3"])
    topo = Topology("sysfs:%s" % root, node_cpus, sorted(l2, key=min), sorted(l3, key=min), distance)
    return topo.check()


def from_description(d):
    """A described machine: {"name", "nodes", "threads_per_node", "threads_per_l2", optional
    "l3_per_node" (default 1), "distance" (rows), "links" ([[a, b, bandwidth], ...])}. Threads are
    numbered node by node, L2 groups consecutive."""
    try:
        name = str(d["name"])
        n, tpn, tpl2 = int(d["nodes"]), int(d["threads_per_node"]), int(d["threads_per_l2"])
        l3pn = int(d.get("l3_per_node", 1))
    except (KeyError, TypeError, ValueError) as e:
        raise TopologyError("machine description: %s" % e) from e
    if n < 1 or tpn < 1 or tpl2 < 1 or tpn % tpl2 or l3pn < 1 or tpn % l3pn or (tpn // l3pn) % tpl2:
        raise TopologyError("%s: threads per node must split evenly into L3 and L2 groups" % name)
    node_cpus = {k: list(range(k * tpn, (k + 1) * tpn)) for k in range(n)}
    l2 = [frozenset(range(s, s + tpl2)) for s in range(0, n * tpn, tpl2)]
    per_l3 = tpn // l3pn
    l3 = [frozenset(range(s, s + per_l3)) for s in range(0, n * tpn, per_l3)]
    distance = {}
    rows = d.get("distance")
    if rows is not None:
        if len(rows) != n or any(len(r) != n for r in rows):
            raise TopologyError("%s: distance is not %d rows of %d" % (name, n, n))
        distance = {(i, j): int(rows[i][j]) for i in range(n) for j in range(n)}
    links = {}
    for link in d.get("links", []):
        a, b, bw = int(link[0]), int(link[1]), float(link[2])
        links[(min(a, b), max(a, b))] = bw
    return Topology(name, node_cpus, l2, l3, distance, links).check()


def load(name_or_path):
    """A described machine by file path, or by the name of one in machines/ (e.g. amd-6272)."""
    path = Path(name_or_path)
    if not path.exists():
        path = MACHINES / ("%s.json" % name_or_path)
    try:
        with open(path) as f:
            return from_description(json.load(f))
    except (OSError, json.JSONDecodeError) as e:
        raise TopologyError("%s: %s" % (name_or_path, e)) from e


def described_machines():
    return sorted(p.stem for p in MACHINES.glob("*.json"))
