"""Writes the seed corpus of fuzz-enforcer (tests/fuzz-seeds/): inputs made of records (kind,
clock step in 10 s, length as 2 bytes little-endian, bytes) whose messages are valid Incidents and
ControlCommands for host "fuzz-host", so the fuzzer starts from the paths that reach the cgroups.
Run again after a schema change: python enforcer/tests/fuzz_seeds.py"""

import os
import struct

from cpi2.schemas import wire

HERE = os.path.dirname(os.path.abspath(__file__))

HOST = "fuzz-host"
T = 1700000000 * 10**6
INCIDENT, COMMAND, CLOCK, RESTART, KUBELET = 0, 1, 2, 3, 4
# the kubelet's record: the task (0 batch/a, 1 batch/c, 2 kube/pod/ctr) and what it does (0 or 1
# a weight of its own, refused while cpu.idle is 1; 2 clear cpu.idle)
KUBELET_WEIGHT, KUBELET_CLEAR_IDLE = 0, 2


def incident(task, cap=0.1, duration=300, iid="i-1", host=HOST, decision="THROTTLE"):
    return wire.encode(
        "Incident",
        {
            "incident_id": iid,
            "host": host,
            "detected_at_us": T,
            "round": 1,
            "victim_task": "ls/v",
            "victim_job": "ls",
            "victim_platform": "p",
            "victim_class": "LATENCY_SENSITIVE",
            "victim_protected": False,
            "victim_cpi": 2.5,
            "victim_cpu_usage": 0.9,
            "cpi_threshold": 2.0,
            "spec_mean": 1.6,
            "spec_stddev": 0.2,
            "window_start_us": T - 600 * 10**6,
            "window_end_us": T,
            "suspects": [{"task": task, "job": "batch", "task_class": "BATCH", "correlation": 0.5, "cpu_usage": 2.0}],
            "excluded_tasks": [],
            "decision": decision,
            "antagonist_task": task,
            "antagonist_job": "batch",
            "antagonist_class": "BATCH",
            "correlation": 0.5,
            "cap_cpu": cap,
            "cap_duration_s": duration,
            "machine_cpu_utilization": None,
        },
    )


def command(kind, task=None, cap=None, duration=None, host=HOST, cid="c-1"):
    return wire.encode(
        "ControlCommand",
        {
            "command_id": cid,
            "issued_at_us": T,
            "command": kind,
            "host": host,
            "task": task,
            "cap_cpu": cap,
            "duration_s": duration,
            "operator": "fuzz",
            "reason": "",
        },
    )


def record(kind, payload=b"", step=0):
    return struct.pack("<BBH", kind, step, len(payload)) + payload


SEEDS = {
    "cap-and-expire": [record(INCIDENT, incident("batch/a")), record(CLOCK, step=31)],
    "renew-lower-then-uncap": [
        record(INCIDENT, incident("batch/b", 0.2)),
        record(INCIDENT, incident("batch/b", 0.01), 1),
        record(COMMAND, command("UNCAP", "batch/b")),
    ],
    "raise-1024": [record(INCIDENT, incident("batch/b", 1024)), record(INCIDENT, incident("kube/pod/ctr", 0.5))],
    "v1-cap-restart": [
        record(COMMAND, command("CAP", "batch/c", 0.05, 60)),
        record(RESTART, step=2),
        record(CLOCK, step=10),
    ],
    "floor": [record(INCIDENT, incident("batch/a", 0.00001))],
    "hostile-paths": [
        record(INCIDENT, incident(t))
        for t in (
            "kube/pod",
            "kube",
            "system.slice/sshd",
            "link/x",
            "batch/alias",
            "../outside/x",
            "batch/a/evil",
            "batch",
        )
    ],
    "kill-switch": [
        record(INCIDENT, incident("batch/a")),
        record(COMMAND, command("PROTECTION_OFF", host=None)),
        record(RESTART),
        record(INCIDENT, incident("batch/b", 0.1, iid="i-2")),
        record(COMMAND, command("PROTECTION_ON", host=None, cid="c-2")),
    ],
    "rate-and-budget": [
        record(INCIDENT, incident(t, 0.1, 86400, iid="i-%d" % i))
        for i, t in enumerate(["batch/a", "batch/b", "batch/c", "kube/pod/ctr"] * 3)
    ]
    + [record(CLOCK, step=200)],
    "kubelet-clears-idle-under-cap": [
        record(INCIDENT, incident("batch/c")),
        record(KUBELET, bytes([1, KUBELET_WEIGHT])),  # refused: cpu.idle is set
        record(KUBELET, bytes([1, KUBELET_CLEAR_IDLE])),
        record(KUBELET, bytes([1, KUBELET_WEIGHT])),
        record(INCIDENT, incident("batch/c", iid="i-2"), 1),
        record(CLOCK, step=31),
    ],
    "kubelet-resize-then-restart": [
        record(KUBELET, bytes([0, KUBELET_WEIGHT])),
        record(INCIDENT, incident("batch/a")),
        record(RESTART, step=1),
        record(KUBELET, bytes([0, KUBELET_CLEAR_IDLE])),
        record(RESTART, step=1),
        record(CLOCK, step=31),
    ],
    "other-host": [
        record(INCIDENT, incident("batch/a", host="elsewhere")),
        record(INCIDENT, incident("batch/a", host="fuzz-host\0x")),
    ],
}


def main():
    out = os.path.join(HERE, "fuzz-seeds")
    os.makedirs(out, exist_ok=True)
    for name, records in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(b"".join(records))
    print("fuzz seeds: %d written to %s" % (len(SEEDS), out))


if __name__ == "__main__":
    main()
