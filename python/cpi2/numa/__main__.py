"""python -m cpi2.numa: the scheduling concerns and important placements of a machine (seed 001
section 4), and a placement trial where the machine has more than one NUMA node.

  python -m cpi2.numa placements --vcpus 24 --machine intel-e7-4830-v3
  python -m cpi2.numa placements --vcpus 16 --machine amd-6272 --json
  python -m cpi2.numa placements --vcpus 2                 # this machine, from /sys
  python -m cpi2.numa trial --vcpus 2 --seconds 3          # skipped, with the reason, on one node

Exit status: 0 done (a skipped trial says why), 2 bad arguments or an unreadable topology."""

import argparse
import json
import sys

from cpi2.numa import placements, topology, trial


def machine(args):
    if args.machine:
        return topology.load(args.machine)
    return topology.from_sysfs(args.sysfs)


def cmd_placements(args, out):
    topo = machine(args)
    ps = placements.important_placements(topo, args.vcpus)
    cs = placements.concerns(topo)
    if args.json:
        doc = {
            "machine": topo.name,
            "vcpus": args.vcpus,
            "concerns": [c.__dict__ for c in cs],
            "placements": [
                {
                    "nodes": list(p.nodes),
                    "l3": p.l3_score,
                    "l2": p.l2_score,
                    "interconnect": p.ic_score,
                    "shares_l2": p.shares_l2,
                    "cpus": placements.cpus_of(topo, p, args.vcpus),
                }
                for p in ps
            ],
        }
        json.dump(doc, out, indent=1)
        out.write("\n")
        return 0
    out.write(
        "%s: %d nodes, %d hardware threads; scheduling concerns:\n" % (topo.name, len(topo.nodes), len(topo.threads))
    )
    for c in cs:
        out.write(
            "  %-12s %s (%s); count %d, capacity %s; cost %s, inverse performance %s\n"
            % (
                c.name,
                c.score,
                c.resources,
                c.count,
                c.capacity or "-",
                "Y" if c.cost else "N",
                "Y" if c.inverse else "N",
            )
        )
    out.write("%d important placements for %d vCPUs:\n" % (len(ps), args.vcpus))
    for i, p in enumerate(ps, 1):
        out.write("  %2d  %s\n" % (i, placements.describe(p)))
    return 0


def cmd_trial(args, out):
    topo = machine(args)
    try:
        results = trial.trial(topo, args.vcpus, args.seconds)
    except trial.TrialSkipped as e:
        out.write("trial skipped: %s\n" % e)
        return 0
    for p, cpus, rate, took in results:
        out.write("%s on CPUs %s: %.1f passes/s (%.1f s)\n" % (placements.describe(p), cpus, rate, took))
    return 0


def parser():
    p = argparse.ArgumentParser(
        prog="python -m cpi2.numa", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = p.add_subparsers(dest="command", required=True)
    for name, fn, helptext in (
        ("placements", cmd_placements, "scheduling concerns and important placements"),
        ("trial", cmd_trial, "run a workload in two important placements (more than one node)"),
    ):
        s = sub.add_parser(name, help=helptext)
        s.add_argument("--vcpus", type=int, required=True, help="virtual CPUs of the container")
        g = s.add_mutually_exclusive_group()
        g.add_argument(
            "--machine", help="a described machine: %s, or a JSON file" % ", ".join(topology.described_machines())
        )
        g.add_argument("--sysfs", default="/sys", help="read this machine from a sysfs tree (default %(default)s)")
        s.set_defaults(func=fn)
        if name == "placements":
            s.add_argument("--json", action="store_true", help="one JSON document")
        else:
            s.add_argument("--seconds", type=float, default=3.0, help="per placement (default %(default)s)")
    return p


def main(argv=None, out=None):
    out = out or sys.stdout
    args = parser().parse_args(argv)
    try:
        return args.func(args, out)
    except (topology.TopologyError, ValueError) as e:
        sys.stderr.write("cpi2.numa: %s\n" % e)
        return 2


if __name__ == "__main__":
    sys.exit(main())
