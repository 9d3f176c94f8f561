"""What docker-compose.yml and the Containerfiles of docker/ must satisfy, as functions of the resolved
project (compose-check's JSON) that list what breaks the rule. The tests run each rule on the real
file (no problem) and on broken copies (the problem is named)."""

import pathlib
import re

HOST_PATHS = {"/proc", "/sys", "/sys/fs/cgroup"}  # bind mounts of the host itself (agents, Telegraf)
ONE_SHOT = {"kafka-secrets", "kafka-topics", "clickhouse-schema", "flink-submit"}
HEALTHY = {"kafka", "clickhouse", "jobmanager", "taskmanager", "grafana"}  # long-running servers others wait on


def pinned(image):
    repo, _, tag = image.rpartition(":")
    return bool(repo and "/" not in tag and tag != "latest" and re.search(r"\d", tag))


def dockerfile_stages(path):
    """[(name, base, [instruction lines])] of a Dockerfile; continuation lines joined."""
    text = re.sub(r"\\\n\s*", " ", path.read_text())
    stages = []
    for line in text.splitlines():
        if line.startswith("FROM "):
            words = line.split()
            stages.append((words[3] if len(words) > 3 and words[2].upper() == "AS" else None, words[1], []))
        elif line.strip() and not line.startswith("#") and stages:
            stages[-1][2].append(line.strip())
    return stages


def image_problems(project, env, built):
    """BUILT: {image: Containerfile} of docker/images.sh --list (the project's images)."""
    images = {n: s["image"] for n, s in project["services"].items()}
    out = [f"{n}: image {i} is not pinned" for n, i in images.items() if not pinned(i)]
    want = {
        "kafka": f"apache/kafka:{env['KAFKA_VERSION']}",
        "kafka-topics": f"apache/kafka:{env['KAFKA_VERSION']}",
        "telegraf": f"telegraf:{env['TELEGRAF_VERSION'].lstrip('v')}",
    }
    out += [f"{n}: image {images.get(n)} is not {i} (stack/stack.env)" for n, i in want.items() if images.get(n) != i]
    for n, i in images.items():
        if i.startswith("cpi2/") and i not in built:
            out.append(f"{n}: image {i} is not one make images builds ({sorted(built)})")
        if "build" in project["services"][n]:
            out.append(f"{n}: builds its image itself (make images builds every cpi2/ image)")
    return out


def mount_problems(project, root):
    out = []
    for name, s in project["services"].items():
        for v in s.get("volumes", []):
            if v["type"] != "bind" or v["source"] in HOST_PATHS:
                continue
            p = pathlib.Path(v["source"])
            if not p.exists():
                out.append(f"{name}: bind mount {p} does not exist")
            elif p.resolve() != root and root not in p.resolve().parents:
                out.append(f"{name}: bind mount {p} is outside the repository")
    return out


def depends_on_problems(project):
    services, out = project["services"], []
    for name, s in services.items():
        for target, dep in s.get("depends_on", {}).items():
            if dep["condition"] == "service_healthy" and not services.get(target, {}).get("healthcheck", {}).get(
                "test"
            ):
                out.append(f"{name} waits for {target} to be healthy, but it has no healthcheck")
            if dep["condition"] == "service_completed_successfully" and target not in ONE_SHOT:
                out.append(f"{name} waits for {target} to complete, but it is not a one-shot service")
    out += [f"one-shot {n} must not restart" for n in ONE_SHOT if services[n].get("restart", "no") != "no"]
    waited = {
        t
        for s in services.values()
        for t, d in s.get("depends_on", {}).items()
        if d["condition"] == "service_completed_successfully"
    }
    out += [f"nothing waits for the one-shot {n}" for n in sorted(ONE_SHOT - waited)]
    out += [f"{n} has no healthcheck" for n in sorted(HEALTHY) if not services[n].get("healthcheck", {}).get("test")]
    return out


def port_problems(project, env):
    published = {
        (n, int(p["target"])): int(p["published"]) for n, s in project["services"].items() for p in s.get("ports", [])
    }
    want = {
        ("kafka", 9092): int(env["KAFKA_PORT"]),
        ("clickhouse", 8123): int(env["CLICKHOUSE_HTTP_PORT"]),
        ("clickhouse", 9000): int(env["CLICKHOUSE_TCP_PORT"]),
        ("jobmanager", 8081): int(env["FLINK_REST_PORT"]),
        ("grafana", 3000): 3000,
    }
    out = [
        f"{s} port {t} is published as {published.get((s, t))}, stack/stack.env says {p}"
        for (s, t), p in want.items()
        if published.get((s, t)) != p
    ]
    out += [f"{s} publishes port {t}, not one of the stack's" for (s, t) in published if (s, t) not in want]
    listeners = project["services"]["kafka"]["environment"]["KAFKA_ADVERTISED_LISTENERS"]
    if f"EXTERNAL://127.0.0.1:{env['KAFKA_PORT']}" not in listeners:
        out.append(f"kafka advertises {listeners}, not port {env['KAFKA_PORT']}")
    return out
