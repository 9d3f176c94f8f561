"""Simulated Kubernetes nodes end to end (issue 21), both cgroup drivers.

cpi2-fleetsim plays the scenario k8s (collectors/fleetsim/scenarios/k8s.scn): three nodes with
the cgroupfs driver and three with systemd's, whose tasks are pods of Deployments with the
kubelet's cgroups. The pods go into a real kube-apiserver (over Debian's etcd) as a Deployment's
controller would make them (Deployment, ReplicaSet, pods on their nodes; QoS classes set by the
API server); cpi2-k8s-identity --once writes each node's labels file from it, with only the
namespaces shop and batch opted in. The simulator maps its pods through those files with the
collector's own rules code (collector_rules), as each node's collector would: a pod the file
does not name (namespace other) is not published. Then Kafka, the Flink job, the enforcer on the
simulator's cgroup tree, ClickHouse.

Asserts: samples carry job = namespace/deployment/name and never a pod of namespace other; the
specs of the scenario's platform are one per Deployment (not per pod), usable; the batch pod
that bursts on a node of each driver is capped at its kubepods cgroup; no pod of another
Deployment is capped.
"""

import collections
import json
import os
import subprocess

import pytest

from cpi2.e2e import pipeline
from cpi2.testing import kube, stack

pytestmark = pytest.mark.usefixtures("stack_up")

SCENARIO = os.path.join(stack.ROOT, "collectors", "fleetsim", "scenarios", "k8s.scn")
IDENTITY = os.path.join(stack.ROOT, "build", "k8s", "cpi2-k8s-identity")
OPTED_IN = ("shop", "batch")
DRIVER = {"node-cgfs": "cgroupfs", "node-sd": "systemd"}


def pods_of_scenario(seed):
    """The pods the simulator plays (names and uids follow the seed)."""
    args = [pipeline.FLEETSIM, "-s", SCENARIO, "--seed", str(seed), "--list-pods"]
    r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


def create_workloads(api, pods):
    """What the Deployment and ReplicaSet controllers would have made (no controllers run)."""
    for ns in sorted({p["namespace"] for p in pods}):
        api.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    replicasets = {}
    for p in pods:
        rs_name = p["pod"].rsplit("-", 1)[0]  # <deployment>-<template hash>
        key = (p["namespace"], rs_name)
        if key not in replicasets:
            labels = {"app": p["deployment"]}
            template = {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "registry.invalid/app:1"}]},
            }
            spec = {"replicas": 1, "selector": {"matchLabels": labels}, "template": template}
            apps = "/apis/apps/v1/namespaces/%s/" % p["namespace"]
            dep = api.create(
                apps + "deployments",
                {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": p["deployment"]}, "spec": spec},
            )
            meta = {"name": rs_name, "ownerReferences": [kube.owner(dep)]}
            replicasets[key] = api.create(
                apps + "replicasets", {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta, "spec": spec}
            )
        meta = {"name": p["pod"], "labels": {"app": p["deployment"]}, "ownerReferences": [kube.owner(replicasets[key])]}
        if p["protected"]:
            meta["annotations"] = {"cpi2.io/protected": "true"}
        container = {"name": "c", "image": "registry.invalid/app:1", "resources": kube.resources(p["qos"])}
        stored = api.create(
            "/api/v1/namespaces/%s/pods" % p["namespace"],
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": meta,
                "spec": {"nodeName": p["node"], "containers": [container]},
            },
        )
        assert stored["status"]["qosClass"] == p["qos"], stored["status"]


def write_labels(api, pods, folder):
    """cpi2-k8s-identity --once for each node: its labels file, folder/<node>."""
    os.makedirs(folder)
    kubeconfig = api.kubeconfig()
    for node in sorted({p["node"] for p in pods}):
        r = subprocess.run(
            [
                IDENTITY,
                "--kubeconfig",
                kubeconfig,
                "--node",
                node,
                "--cgroup-driver",
                DRIVER[node.rsplit("-", 1)[0]],
                "--namespaces",
                ",".join(OPTED_IN),
                "--labels-file",
                os.path.join(folder, node),
                "--once",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert r.returncode == 0, r.stderr


def test_deployments_get_specs_and_the_antagonist_pod_is_capped():
    if kube.missing():
        pytest.skip(kube.missing())
    assert os.path.exists(IDENTITY), "%s is not built (make build)" % IDENTITY
    pods = pods_of_scenario(5)
    run = pipeline.Run("k8s", speed=240, seed=5, sample_hosts=sorted({p["node"] for p in pods}))
    with kube.APIServer() as api:
        pipeline.log("kube-apiserver ready in %.1f s" % api.ready_s)
        create_workloads(api, pods)
        write_labels(api, pods, os.path.join(run.dir, "labels"))
    run.fleetsim_args = ["--labels-dir", os.path.join(run.dir, "labels")]
    labels = {}
    for node in os.listdir(os.path.join(run.dir, "labels")):
        for line in open(os.path.join(run.dir, "labels", node)):
            if not line.startswith("#"):
                task, job, task_id = line.split()[:3]
                labels[(node, task)] = (job, task_id)
    run.start()
    try:
        run.wait(600, settle=20)
    finally:
        run.stop()
    m = run.monitor
    sim_log = open(run.sim_log.name).read()

    # every pod of an opted-in namespace was labelled, by identity, with its Deployment's job
    opted = [p for p in pods if p["namespace"] in OPTED_IN]
    by_name = {task_id: (node, task, job) for (node, task), (job, task_id) in labels.items()}
    assert sorted(by_name) == sorted(p["pod"] for p in opted), sorted(by_name)
    for p in opted:
        assert by_name[p["pod"]][2] == "%s/deployment/%s" % (p["namespace"], p["deployment"])
    # what was published: Deployment jobs only, at the labels' cgroups; the other namespace's
    # pods reported by the simulator and never published
    platform = "GenuineIntel/6/85/Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz (simulated Kubernetes nodes)"
    truth = run.truth()
    # the run's cgroups: the labelled pods (uids of this run's API server) and the others
    # (the simulator's own uids, the same in every run of this seed)
    others = [p for p in pods if p["namespace"] not in OPTED_IN]
    cgroups = ",".join("'%s'" % t for t in {t for _, t in labels} | {p["cgroup"] for p in others})
    this_run = "platform = '%s' AND window_start_us >= %d AND task IN (%s)" % (platform, truth[0]["start_us"], cgroups)
    n = run.published()
    assert n > 0, sim_log[-3000:]
    stack.wait_until(
        lambda: (
            int(stack.query("SELECT uniqExact(host, task, window_start_us) FROM cpi2.samples WHERE " + this_run)) >= n
        ),
        120,
        "ClickHouse to store the run's %d samples" % n,
        interval=2,
    )
    rows = stack.query("SELECT DISTINCT host, task, job, task_id FROM cpi2.samples WHERE %s FORMAT TSV" % this_run)
    published = {(h, t): (j, i) for h, t, j, i in (r.split("\t") for r in rows.splitlines())}
    assert set(published) == set(labels), set(published) ^ set(labels)
    assert all(published[k] == labels[k] for k in published)
    assert set(m.samples) == set(labels), "the monitor saw samples of other cgroups"
    assert others and all(("pod other/%s " % p["pod"]) in sim_log for p in others), sim_log[-3000:]
    assert "%d of %d Kubernetes pods named" % (len(opted), len(pods)) in sim_log
    for (node, task), _ in published.items():
        assert task.startswith("kubepods/" if DRIVER[node.rsplit("-", 1)[0]] == "cgroupfs" else "kubepods.slice/")

    # specs per Deployment, not per pod
    rows = stack.query(
        "SELECT job, max(num_tasks), max(usable) FROM cpi2.specs WHERE platform = '%s' AND period_end_us >= %d "
        "GROUP BY job ORDER BY job FORMAT TSV" % (platform, truth[0]["start_us"])
    )
    specs = {job: (int(n), int(u)) for job, n, u in (r.split("\t") for r in rows.splitlines())}
    replicas = collections.Counter("%s/deployment/%s" % (p["namespace"], p["deployment"]) for p in opted)
    assert set(specs) == set(replicas), specs
    for job, (tasks, usable) in specs.items():
        assert tasks == replicas[job] and tasks >= 5 and usable == 1, (job, tasks, usable)

    # the bursting crawler pod is capped on a node of each driver, nothing else is
    antagonists = {(t["host"], t["antagonist"]) for t in truth if t["type"] == "antagonism"}
    assert {h.rsplit("-", 1)[0] for h, _ in antagonists} == set(DRIVER), antagonists
    applied = {(a["host"], a["task"]) for a in m.actions if a["kind"] == "APPLIED"}
    assert antagonists <= applied, "applied: %s; decisions: %s; logs in %s" % (applied, dict(m.decisions()), run.dir)
    for host, task in applied:
        assert labels[(host, task)][0] == "batch/deployment/crawler", (host, task, labels[(host, task)])
    for host, task in antagonists:
        with open(os.path.join(run.cgroot, host, task, "cpu.max")) as f:
            assert f.read().strip() == "max 100000"  # lifted again at the end
        assert any(t["type"] == "cap" and t["host"] == host and t["task"] == task for t in truth)
    pipeline.log(
        "k8s nodes: %d pods (%d published), specs %s, capped %s"
        % (len(pods), len(published), sorted(specs), sorted(applied))
    )
    run.cleanup()
