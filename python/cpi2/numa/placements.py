"""Scheduling concerns and important placements (seed 001, section 4) for a container of v
virtual CPUs on a machine (`topology.Topology`).

A concern scores a placement by the shared resource it stands for: L2/SMT (L2 caches in use),
L3 (L3 caches in use: with one L3 per node, the NUMA nodes) and, where the machine describes an
asymmetric interconnect, Interconnect (aggregate bandwidth of the links between the nodes in use).
Placements with the same vector of scores are the same to the model. The important placements:
balanced (v mod score = 0) and feasible (v / score <= the resource's capacity) L3 and L2 scores
(Algorithm 1); every packing of the machine's L3 domains into placements of those sizes
(Algorithm 2); duplicates by score and packings that another of the same sizes beats on every
interconnect score dropped (Algorithm 3); then each placement left with each L2 score that fits
in its L3 caches."""

import itertools
from dataclasses import dataclass

# L3 domains beyond which the exhaustive packing (Algorithm 2) is refused
MAX_L3_DOMAINS = 12


@dataclass(frozen=True)
class Concern:
    name: str
    score: str
    resources: str
    cost: bool  # a lower score costs the user less (fewer resources held)
    inverse: bool  # a lower score can perform better (cooperative sharing)
    count: int  # instances on the machine (0: not counted)
    capacity: int  # hardware threads per instance (0: not bounded)


@dataclass(frozen=True)
class Placement:
    nodes: tuple  # the NUMA nodes in use (one representative set of them)
    l3_score: int
    l2_score: int
    ic_score: float | None  # None where the machine has no interconnect concern
    l3_domains: tuple  # indices of the L3 caches in use
    vcpus: int

    @property
    def shares_l2(self):
        """More than one vCPU on an L2 cache (SMT siblings or a module's cores)."""
        return self.vcpus > self.l2_score

    def vector(self):
        return (self.l2_score, self.l3_score) + (() if self.ic_score is None else (self.ic_score,))


def concerns(topo):
    """The scheduling concerns of a machine (Table 1 of seed 001)."""
    l2cap = max(len(g) for g in topo.l2)
    l3cap = max(len(g) for g in topo.l3)
    out = [
        Concern("L2/SMT", "number of L2 caches in use", "L2 cache, instruction fetch and decode, floating point units",
                True, True, len(topo.l2), l2cap),
        Concern("L3", "number of L3 caches in use", "L3 cache, memory controller, bandwidth to DRAM",
                True, True, len(topo.l3), l3cap),
    ]  # fmt: skip
    if topo.links and len(set(topo.links.values())) > 1 or _missing_links(topo):
        out.append(Concern("Interconnect", "aggregate bandwidth of the links between the nodes in use",
                           "interconnect bandwidth", False, False, len(topo.links), 0))  # fmt: skip
    return out


def _missing_links(topo):
    n = len(topo.nodes)
    return bool(topo.links) and len(topo.links) < n * (n - 1) // 2


def scores(vcpus, count, capacity):
    """Algorithm 1: the balanced and feasible scores of one concern."""
    return [i for i in range(1, count + 1) if vcpus % i == 0 and vcpus // i <= capacity]


def packings(sizes, domains):
    """Algorithm 2: every way to cover the domains with disjoint placements of the given sizes,
    each as a frozenset of frozensets (the same packing in another order is one)."""
    out = set()

    def rec(left, current):
        for s in sizes:
            if s > len(left):
                continue
            for combo in itertools.combinations(sorted(left), s):
                rest = left - set(combo)
                new = current + (frozenset(combo),)
                if rest:
                    rec(rest, new)
                else:
                    out.add(frozenset(new))

    rec(frozenset(domains), ())
    return out


def _kept(topo, vcpus):
    """Algorithms 1-3 up to the kept packings: (kept keys -> one packing, key of a packing, L2
    scores, L3 domain -> node)."""
    if vcpus < 1:
        raise ValueError("vcpus must be at least 1")
    cs = {c.name: c for c in concerns(topo)}
    l3 = topo.l3_domains()
    if len(l3) > MAX_L3_DOMAINS:
        raise ValueError("%d L3 domains: more than %d to pack exhaustively" % (len(l3), MAX_L3_DOMAINS))
    l3_scores = scores(vcpus, cs["L3"].count, cs["L3"].capacity)
    l2_scores = scores(vcpus, cs["L2/SMT"].count, cs["L2/SMT"].capacity)
    if not l3_scores or not l2_scores:
        raise ValueError("%d vCPUs cannot be placed balanced and feasible on %s" % (vcpus, topo.name))
    nodes_of = {i: topo.node_of(min(g)) for i, g in l3}
    with_ic = "Interconnect" in cs

    def ic(placement):
        nodes = {nodes_of[i] for i in placement}
        return sum(bw for (a, b), bw in topo.links.items() if a in nodes and b in nodes) if with_ic else None

    def key(packing):
        return tuple(sorted((len(p), ic(p) or 0) for p in packing))

    # duplicates: packings whose placements have the same scores
    keyed = {}
    for pk in sorted(packings(l3_scores, [i for i, _ in l3]), key=lambda p: sorted(sorted(x) for x in p)):
        keyed.setdefault(key(pk), sorted(pk, key=lambda p: (len(p), -(ic(p) or 0), sorted(p))))
    # Pareto: a packing that another of the same sizes matches or beats on every interconnect score
    alive = set(keyed)
    if with_ic:
        for a in sorted(keyed):
            for b in sorted(keyed):
                if a == b or a not in alive or b not in alive or [s for s, _ in a] != [s for s, _ in b]:
                    continue
                if all(x[1] <= y[1] for x, y in zip(a, b)):
                    alive.discard(a)
                    break
    return {k: keyed[k] for k in sorted(alive)}, key, ic, l2_scores, nodes_of, cs


def packing_kept(topo, vcpus, node_sets):
    """Whether a packing of the machine (a list of node sets, one L3 per node) is among the kept
    ones (not a duplicate dropped for another, nor beaten on every interconnect score)."""
    kept, key, _, _, nodes_of, _ = _kept(topo, vcpus)
    domain = {n: i for i, n in nodes_of.items()}
    return key([frozenset(domain[n] for n in s) for s in node_sets]) in kept


def important_placements(topo, vcpus):
    """The important placements of a container of vcpus virtual CPUs, ordered by nodes in use,
    then interconnect score (best first), then L2 caches in use. ValueError when none is
    feasible or the machine has too many L3 domains to pack exhaustively."""
    kept, _, ic, l2_scores, nodes_of, cs = _kept(topo, vcpus)
    distinct = {}
    for members in kept.values():
        for p in members:  # one representative of each score: the lowest-numbered
            k = (len(p), ic(p))
            if k not in distinct or sorted(p) < sorted(distinct[k]):
                distinct[k] = p
    per_l3 = cs["L2/SMT"].count // max(1, cs["L3"].count)
    out = []
    for (l3s, score), p in distinct.items():
        for l2s in l2_scores:
            if per_l3 * l3s >= l2s and l2s >= l3s and l2s % l3s == 0:
                nodes = tuple(sorted({nodes_of[i] for i in p}))
                out.append(Placement(nodes, l3s, l2s, score, tuple(sorted(p)), vcpus))
    out.sort(key=lambda x: (x.l3_score, -(x.ic_score or 0), x.l2_score, x.nodes))
    return out


def cpus_of(topo, placement, vcpus):
    """The hardware threads of one concrete instance of a placement: vcpus spread evenly over its
    L3 domains and, in each, over l2_score / l3_score of its L2 caches."""
    l3 = dict(topo.l3_domains())
    per_l3, l2_per_l3 = vcpus // placement.l3_score, placement.l2_score // placement.l3_score
    per_l2 = per_l3 // l2_per_l3
    out = []
    for i in placement.l3_domains:
        l2s = sorted((g for g in topo.l2 if g <= l3[i]), key=min)[:l2_per_l3]
        for g in l2s:
            out.extend(sorted(g)[:per_l2])
    return sorted(out)


def describe(placement):
    """One line: nodes, L3 and L2 caches in use, whether vCPUs share L2 caches, interconnect."""
    ic = "" if placement.ic_score is None else ", interconnect %g" % placement.ic_score
    return "nodes %s: %d L3, %d L2%s%s" % (
        ",".join(map(str, placement.nodes)),
        placement.l3_score,
        placement.l2_score,
        " (vCPUs share L2 caches)" if placement.shares_l2 else "",
        ic,
    )
