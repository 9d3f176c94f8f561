"""The real-service lab's parts (`make lab SERVICES=...`, `python -m cpi2.lab calibrate`): real
servers from Debian's packages with the exporters operators run beside them, an open-loop load
generator outside their cgroups, and real batch antagonists.

- victims: `redis-server` + `prometheus-redis-exporter`, `nginx` + `prometheus-nginx-exporter`;
  each replica (server and exporter, as one pod with a sidecar) in its own cgroup
  `cpi2-lab/<kind>-N` (v2 and the v1 cpu hierarchy, the same path), pinned to the victims' CPU;
- load: `cpi2-lab-load` (lab/src/load.c) in `cpi2-lab/load` on another CPU, Poisson arrivals at a
  set rate to every replica, each request's latency from when it was due (one CSV);
- antagonists: `stress-ng` stressors (cpu, cache, l1cache, stream, memcpy) or `cpi2-ibench`
  kernels (`ibench:<kernel>`), in their own cgroup, pinned to the victims' CPU (`same`) or to
  another one (`other`, the cross-core case).

The packages are installed with apt-get when the lab runs and one is missing (never by make demo
or make build). Ports are free ones the kernel picks on the loopback.
"""

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request

from cpi2 import lab

# Debian's packages of each part, and the program each installs (what tells it is there)
PACKAGES = {
    "redis": {"redis-server": "redis-server", "prometheus-redis-exporter": "prometheus-redis-exporter"},
    "nginx": {"nginx": "nginx", "prometheus-nginx-exporter": "prometheus-nginx-exporter"},
    "stress-ng": {"stress-ng": "stress-ng"},
}
KINDS = ("redis", "nginx")
# stress-ng stressors the lab runs as antagonists (the issue's: CPU, cache, memory bandwidth)
STRESSORS = ("cpu", "cache", "l1cache", "stream", "memcpy")
PLACEMENTS = ("same", "other")
LOAD_RT_PRIORITY = 10  # the load generator's SCHED_FIFO priority: other work on its CPU delays
# the servers' answers, not their measurement (a client on another machine, as users are)


def missing_packages(parts):
    """The Debian packages of parts (PACKAGES keys) whose program is not installed."""
    return [pkg for part in parts for pkg, prog in PACKAGES[part].items() if not shutil.which(prog)]


def ensure_packages(parts):
    """Install the packages of parts that are missing, with apt-get (update first when the
    install fails for want of an index). Raises SystemExit naming what could not be installed."""
    missing = missing_packages(parts)
    if not missing:
        return
    print("lab: installing %s (apt-get)" % " ".join(missing), flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    cmd = ["apt-get", "install", "-y", "--no-install-recommends", *missing]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        subprocess.run(["apt-get", "update"], env=env, capture_output=True, text=True)
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    still = missing_packages(parts)
    if r.returncode != 0 or still:
        raise SystemExit(
            "lab: apt-get install %s failed (exit %d): %s"
            % (" ".join(missing), r.returncode, (r.stderr or r.stdout).strip().splitlines()[-1:])
        )


def free_port():
    """A TCP port of the loopback no one listens on now (the kernel's pick)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def http_get(port, path, timeout=5):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=timeout) as r:
        return r.read().decode("utf-8", "replace")


def redis_command(port, *args, timeout=5):
    """One RESP command; the reply's bulk string (or simple string) as text."""
    req = "*%d\r\n" % len(args) + "".join("$%d\r\n%s\r\n" % (len(a.encode()), a) for a in args)
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(req.encode())
        buf = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                raise OSError("redis on port %d closed the connection" % port)
            buf += chunk
            if buf[:1] in (b"+", b"-") and buf.endswith(b"\r\n"):
                if buf[:1] == b"-":
                    raise OSError("redis: %s" % buf[1:].decode().strip())
                return buf[1:-2].decode()
            if buf[:1] == b"$":
                head, _, rest = buf.partition(b"\r\n")
                n = int(head[1:])
                if len(rest) >= n + 2:
                    return rest[:n].decode()
            elif buf[:1] not in (b"+", b"-", b"$"):
                raise OSError("redis on port %d: not a RESP reply: %r" % (port, buf[:40]))


class Replica:
    """One replica of a kind: its cgroup (task name), server port, exporter port, processes."""

    def __init__(self, kind, index, workdir, ports=None):
        self.kind, self.index = kind, index
        self.name = "%s-%d" % (kind, index)
        self.cgroup = lab.Cgroup(self.name)
        self.port, self.exporter_port = ports or (free_port(), free_port())
        self.workdir = os.path.join(workdir, self.name)
        os.makedirs(self.workdir, exist_ok=True)
        # nginx's worker drops root for nobody, who must reach its files
        for d in (workdir, self.workdir):
            os.chmod(d, 0o755)
        self.procs = []

    def stats(self):
        """The server's own counters: {"ops": requests served, "usec": its own time serving
        them, or None where the server does not measure it}."""
        if self.kind == "redis":
            info = redis_command(self.port, "INFO", "commandstats")
            for line in info.splitlines():
                if line.startswith("cmdstat_get:"):
                    kv = dict(x.split("=", 1) for x in line.split(":", 1)[1].split(","))
                    return {"ops": int(kv["calls"]), "usec": int(kv["usec"])}
            return {"ops": 0, "usec": 0}
        text = http_get(self.port, "/stub_status")
        # Active connections: N \n server accepts handled requests \n A H R \n ...
        return {"ops": int(text.splitlines()[2].split()[2]), "usec": None}

    def cpu_usec(self):
        """The replica's CPU time (its v2 cgroup's cpu.stat usage_usec)."""
        with open(os.path.join(self.cgroup.dirs[0], "cpu.stat")) as f:
            return int(f.readline().split()[1])


NGINX_CONF = """daemon off;
master_process on;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    default_type text/html;
    keepalive_requests 100000000;
    keepalive_timeout 3600s;
    client_body_temp_path {dir}/tmp/body;
    proxy_temp_path {dir}/tmp/proxy;
    fastcgi_temp_path {dir}/tmp/fastcgi;
    uwsgi_temp_path {dir}/tmp/uwsgi;
    scgi_temp_path {dir}/tmp/scgi;
    server {{
        listen 127.0.0.1:{port};
        root {dir}/html;
        location = /stub_status {{ stub_status; allow 127.0.0.1; deny all; }}
    }}
}}
"""


def server_argv(r):
    """The server's command line (pinned by the caller)."""
    if r.kind == "redis":
        return ["redis-server", "--port", str(r.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"] + [
            "--dir",
            r.workdir,
            "--daemonize",
            "no",
            "--logfile",
            os.path.join(r.workdir, "redis.log"),
            "--protected-mode",
            "no",
        ]
    os.makedirs(os.path.join(r.workdir, "tmp"), exist_ok=True)
    os.makedirs(os.path.join(r.workdir, "html"), exist_ok=True)
    with open(os.path.join(r.workdir, "html", "index.html"), "w") as f:
        f.write("<html><body>%s</body></html>\n" % ("cpi2 lab " * 100))
    conf = os.path.join(r.workdir, "nginx.conf")
    with open(conf, "w") as f:
        f.write(NGINX_CONF.format(dir=r.workdir, port=r.port))
    return ["nginx", "-p", r.workdir, "-c", conf, "-e", os.path.join(r.workdir, "error.log")]


def exporter_argv(r):
    if r.kind == "redis":
        return [
            "prometheus-redis-exporter",
            "--redis.addr",
            "redis://127.0.0.1:%d" % r.port,
            "--web.listen-address",
            "127.0.0.1:%d" % r.exporter_port,
        ]
    return [
        "prometheus-nginx-exporter",
        "-nginx.scrape-uri",
        "http://127.0.0.1:%d/stub_status" % r.port,
        "-web.listen-address",
        "127.0.0.1:%d" % r.exporter_port,
    ]


# The work counter each kind's exporter publishes (what cpu_per_op divides by: redis' GETs, not
# the exporter's own commands), and its latency metric where the exporter has one (nginx's
# stub_status has none; redis' is its own execution time per GET, from LATENCYSTATS)
WORK_COUNTER = {"redis": "redis_commands_total", "nginx": "nginx_http_requests_total"}
WORK_SELECTOR = {"redis": 'redis_commands_total{cmd="get"}', "nginx": "nginx_http_requests_total"}
LATENCY_SELECTOR = {"redis": 'redis_latency_percentiles_usec{cmd="get"}'}


def scrape_options(kind, exporter_port):
    """The collector's labels-file options that make it scrape the exporter of a replica of kind
    each window (collectors/collector/README.md)."""
    opts = ["scrape=http://127.0.0.1:%d/metrics" % exporter_port, "work=" + WORK_SELECTOR[kind]]
    if kind in LATENCY_SELECTOR:
        opts.append("latency=" + LATENCY_SELECTOR[kind])
    return opts


class Services:
    """The replicas of the victims' kinds, started in their cgroups on one CPU, and their
    exporters; stop() ends every process it started."""

    def __init__(self, kinds, replicas, cpu, workdir, ports=None):
        """ports: {replica name: (server port, exporter port)} chosen before (default: free ones)."""
        self.cpu, self.workdir = cpu, workdir
        ports = ports or {}
        self.replicas = [Replica(k, i, workdir, ports.get("%s-%d" % (k, i))) for k in kinds for i in range(replicas)]
        self.procs = []

    def _start(self, r, argv, log):
        p = lab.start_in(
            r.cgroup,
            ["taskset", "-c", str(self.cpu), *argv],
            stdout=open(os.path.join(r.workdir, log), "w"),
            stderr=subprocess.STDOUT,
        )
        r.procs.append(p)
        self.procs.append(p)
        return p

    def start(self, timeout=30):
        for r in self.replicas:
            self._start(r, server_argv(r), "server.log")
        for r in self.replicas:
            if not wait_port(r.port, timeout):
                raise RuntimeError("lab: %s does not answer on port %d (see %s)" % (r.name, r.port, r.workdir))
            self._start(r, exporter_argv(r), "exporter.log")
        for r in self.replicas:
            if not wait_port(r.exporter_port, timeout):
                raise RuntimeError("lab: %s's exporter does not answer on port %d" % (r.name, r.exporter_port))
            metrics = http_get(r.exporter_port, "/metrics")
            if WORK_COUNTER[r.kind] not in metrics:
                raise RuntimeError("lab: %s's exporter publishes no %s" % (r.name, WORK_COUNTER[r.kind]))

    def of(self, kind):
        return [r for r in self.replicas if r.kind == kind]

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def load_argv(binary, kind, replicas, rate, cpu, out, seed=1, duration_s=0):
    """cpi2-lab-load's command line for the replicas of one kind."""
    return [
        binary,
        "--targets",
        ",".join("127.0.0.1:%d" % r.port for r in replicas),
        "--protocol",
        "redis" if kind == "redis" else "http",
        "--rate",
        str(rate),
        "--cpu",
        str(cpu),
        "--rt-priority",
        str(LOAD_RT_PRIORITY),
        "--seed",
        str(seed),
        "--duration-s",
        str(duration_s),
        "--path",
        "/index.html",
        "--out",
        out,
    ]


def read_load(path, start_unix_s):
    """[(due wall s, latency us, target, ok)] of a load generator's CSV, whose times run from its
    start at start_unix_s."""
    out = []
    with open(path) as f:
        next(f)
        for line in f:
            t, sched, lat, _lag, ok = line.rstrip("\n").split(",")
            out.append((start_unix_s + int(sched) / 1e6, int(lat), int(t), ok == "1"))
    return out


def load_report(stdout):
    """The load generator's JSON report (its last line on stdout)."""
    lines = [ln for ln in stdout.splitlines() if ln.startswith("{")]
    if not lines:
        raise RuntimeError("lab: the load generator wrote no report")
    return json.loads(lines[-1])


def antagonist_argv(spec, threads, cpu, ibench, tmp):
    """The command line of an antagonist: a stress-ng stressor (STRESSORS) or ibench:<kernel>,
    with threads workers, pinned to cpu."""
    if spec.startswith("ibench:"):
        kernel = spec.split(":", 1)[1]
        return ["taskset", "-c", str(cpu), ibench, kernel, "--intensity", "100", "--threads", str(threads)]
    if spec not in STRESSORS:
        raise SystemExit("lab: unknown antagonist %r (%s, or ibench:<kernel>)" % (spec, ", ".join(STRESSORS)))
    return ["taskset", "-c", str(cpu), "stress-ng", "--%s" % spec, str(threads), "--temp-path", tmp, "-q"]
