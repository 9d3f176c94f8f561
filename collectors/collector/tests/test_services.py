#!/usr/bin/env python3
"""cpi2-collector's service signals against real services and the exporters operators run for
them (Debian's redis-server with prometheus-redis-exporter, nginx with prometheus-nginx-exporter),
each service and its exporter in a cgroup of their own as in a pod, driven at a steady rate by
an open-loop client of this test; 1-second windows back to back:

- cpu_per_op of both and redis' GET latency agree within 30% with what the services say of
  themselves over the same run (the cgroup's CPU time over redis' INFO total_commands_processed
  and nginx's stub_status requests; redis' INFO commandstats usec per GET call);
- the redis exporter killed: that task's values null, "connect" logged and counted; back once
  it runs again; redis restarted: the counters went back, "reset" logged, values again after;
- an endpoint that accepts but never answers: null every window ("timeout"), and the windows
  keep their second (never held up); one that answers with something else than the text format
  ("garbage"); the other tasks' samples carry no service signal (null).

Skipped with the reason where root, cgroup v2 or one of the four programs is missing.
Usage: test_services.py PATH/TO/cpi2-collector
"""

import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import cgtest  # this script's folder is on the path

PROGRAMS = ("redis-server", "prometheus-redis-exporter", "nginx", "prometheus-nginx-exporter")
RATE = 500  # requests per second to each service
PHASE_S = 4  # the least time each phase after the first lasts (restart, exporter gone, back)
WINDOWS = 26  # 1-second windows: the first phase's 9 s, three phases and slack for slow restarts


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def in_cgroup(cg, args, **kw):
    """Start args inside the cgroup cg (the shell joins it, then execs the program)."""
    cmd = 'echo $$ > "%s/cgroup.procs" && exec "$@"' % cg
    return subprocess.Popen(["sh", "-c", cmd, "sh", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)


def wait_port(port, timeout=10):
    end = time.time() + timeout
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("nothing listens on %d" % port)


def cpu_usec(cg):
    with open(os.path.join(cg, "cpu.stat")) as f:
        return int(f.readline().split()[1])


class OpenLoop(threading.Thread):
    """RATE requests a second on one connection, whatever the answers' speed (redis: GET k,
    inline; nginx: GET / keep-alive); reconnects when the server goes away."""

    def __init__(self, port, kind):
        super().__init__(daemon=True)
        self.port, self.kind, self.stop = port, kind, threading.Event()

    def connect(self):
        s = socket.create_connection(("127.0.0.1", self.port), 1)
        s.settimeout(1)
        return s

    def one(self, s, buf):
        if self.kind == "redis":
            s.sendall(b"GET k\r\n")
            while not buf[0].endswith(b"\r\n"):
                buf[0] += s.recv(4096) or b"x\r\n"
        else:
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            while b"\r\n\r\nok\n" not in buf[0]:
                chunk = s.recv(4096)
                if not chunk:
                    raise OSError("closed")
                buf[0] += chunk
        buf[0] = b""

    def run(self):
        s, n, t0 = None, 0, time.monotonic()
        while not self.stop.is_set():
            try:
                s = s or self.connect()
                self.one(s, [b""])
            except OSError:
                s = None
                time.sleep(0.05)
            n += 1
            delay = t0 + n / RATE - time.monotonic()
            if delay > 0:
                time.sleep(delay)


def redis_info(port, section):
    with socket.create_connection(("127.0.0.1", port), 2) as s:
        s.sendall(b"INFO %s\r\n" % section.encode())
        data = b""
        while True:
            data += s.recv(65536)
            m = re.match(rb"\$(\d+)\r\n", data)
            if m and len(data) >= m.end() + int(m.group(1)):
                return data[m.end() : m.end() + int(m.group(1))].decode()


def redis_stats(port):
    stats = redis_info(port, "stats") + redis_info(port, "commandstats")
    processed = int(re.search(r"total_commands_processed:(\d+)", stats).group(1))
    m = re.search(r"cmdstat_get:calls=(\d+),usec=(\d+)", stats)
    return processed, int(m.group(1)), int(m.group(2))


def nginx_requests(port):
    with socket.create_connection(("127.0.0.1", port), 2) as s:
        s.sendall(b"GET /stub_status HTTP/1.0\r\n\r\n")
        data = b""
        while chunk := s.recv(4096):
            data += chunk
    body = data.split(b"\r\n\r\n", 1)[1].decode()
    return int(body.split("\n")[2].split()[2])  # " accepts handled requests"


def main(binary):
    cgtest.skip_unless_real_cgroups()
    missing = [p for p in PROGRAMS if not shutil.which(p, path=os.environ.get("PATH", "") + ":/usr/sbin")]
    if missing:
        print(
            "SKIP: %s not installed (make -C collectors tools installs them from Debian's packages)"
            % ", ".join(missing)
        )
        sys.exit(cgtest.SKIP)
    top = "cpi2-test-services-%d" % os.getpid()
    root = cgtest.make_cgroup(top)
    tmp = tempfile.mkdtemp(prefix="cpi2-svc-")
    procs, loads = {}, []
    hang = socket.socket()
    try:
        cg = {n: cgtest.make_cgroup("%s/%s" % (top, n)) for n in ("redis", "nginx", "hang", "garbage", "plain")}
        rp, rx, np_, nx = free_port(), free_port(), free_port(), free_port()
        redis_args = ["redis-server", "--port", str(rp), "--save", "", "--appendonly", "no", "--bind", "127.0.0.1"]
        procs["redis"] = in_cgroup(cg["redis"], redis_args)

        def exporter(program, source, port):
            return in_cgroup(
                cg[program], ["prometheus-%s-exporter" % program, *source, "-web.listen-address", "127.0.0.1:%d" % port]
            )

        def start_exporter():
            return exporter("redis", ["-redis.addr", "redis://127.0.0.1:%d" % rp], rx)

        procs["redis-exporter"] = start_exporter()
        conf = os.path.join(tmp, "nginx.conf")
        with open(conf, "w") as f:
            f.write(
                "worker_processes 1; daemon off; pid %s/nginx.pid; error_log %s/error.log;\n"
                "events { worker_connections 64; }\n"
                "http { access_log off; client_body_temp_path %s; proxy_temp_path %s; fastcgi_temp_path %s;"
                " uwsgi_temp_path %s; scgi_temp_path %s;\n"
                ' server { listen 127.0.0.1:%d; location / { return 200 "ok\\n"; }'
                " location = /stub_status { stub_status; } } }\n" % ((tmp,) * 7 + (np_,))
            )
        procs["nginx"] = in_cgroup(cg["nginx"], ["nginx", "-c", conf, "-p", tmp])
        wait_port(np_)  # the exporter gives up when stub_status does not answer at its start
        procs["nginx-exporter"] = exporter("nginx", ["-nginx.scrape-uri", "http://127.0.0.1:%d/stub_status" % np_], nx)
        for name in ("hang", "garbage", "plain"):
            procs[name] = in_cgroup(cg[name], ["sleep", "300"])
        hang.bind(("127.0.0.1", 0))
        hang.listen(8)  # connections complete in the kernel; nothing is ever answered
        for port in (rp, rx, np_, nx):
            wait_port(port)
        loads = [OpenLoop(rp, "redis"), OpenLoop(np_, "nginx")]
        for t in loads:
            t.start()
        labels = os.path.join(tmp, "labels")
        with open(labels, "w") as f:
            f.write(
                "redis cache redis-0 latency_sensitive scrape=http://127.0.0.1:%d/metrics "
                'work=redis_commands_processed_total latency=redis_latency_percentiles_usec{cmd="get"}\n'
                "nginx web nginx-0 latency_sensitive scrape=http://127.0.0.1:%d/metrics work=nginx_http_requests_total\n"
                "hang hang hang-0 batch scrape=http://127.0.0.1:%d/metrics work=x\n"
                "garbage garbage garbage-0 batch scrape=http://127.0.0.1:%d/ work=x\n"
                "plain plain plain-0 batch\n" % (rx, nx, hang.getsockname()[1], np_)
            )
        time.sleep(1.5)  # the load and the exporters settle
        args = [binary, "--events", "task-clock", "--roots", root, "--max-depth", "1", "--labels-file", labels]
        args += ["--window-s", "1", "--period-s", "1", "--stdout", "--windows", str(WINDOWS)]
        col = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines, errs = [], []
        threading.Thread(target=lambda: errs.extend(col.stderr), daemon=True).start()
        t0 = time.time()
        ref0 = (cpu_usec(cg["redis"]), redis_stats(rp), cpu_usec(cg["nginx"]), nginx_requests(np_))
        ref1 = restarted = killed = back = None
        for line in col.stdout:
            lines.append(line)
            elapsed = time.time() - t0
            if elapsed > 9 and not restarted:
                # phase 2: redis restarts under its running exporter (its counters start again)
                ref1 = (cpu_usec(cg["redis"]), redis_stats(rp), cpu_usec(cg["nginx"]), nginx_requests(np_))
                procs["redis"].kill()
                procs["redis"].wait()
                procs["redis"] = in_cgroup(cg["redis"], redis_args)
                wait_port(rp)
                restarted = time.time()
            # each later phase lasts PHASE_S from when the one before began, however long a
            # restart took on a loaded machine, so whole windows fall inside each
            if restarted and time.time() - restarted > PHASE_S and not killed:
                procs["redis-exporter"].kill()  # phase 3: the exporter is gone
                procs["redis-exporter"].wait()
                killed = time.time()
            if killed and time.time() - killed > PHASE_S and not back:
                procs["redis-exporter"] = start_exporter()  # phase 4: back
                back = time.time()
        assert col.wait(timeout=30) == 0, "".join(errs)
        log = "".join(errs)
        got = cgtest.samples("".join(lines))
        by = {}
        for s in got:
            by.setdefault(s["task"], []).append(s)
        assert sorted(by) == ["garbage", "hang", "nginx", "plain", "redis"], sorted(by)

        # windows keep their second although one endpoint never answers
        starts = sorted({s["window_start_us"] for s in got})
        gaps = [(b - a) / 1e6 for a, b in zip(starts, starts[1:])]
        assert len(starts) == WINDOWS and max(gaps) < 1.2, gaps
        print("%d windows, gaps between window starts %.3f-%.3f s" % (WINDOWS, min(gaps), max(gaps)))

        # phase 1 against the services' own figures (the windows that ended before ref1)
        d_cpu = (ref1[0] - ref0[0]) / 1e6
        d_ops = ref1[1][0] - ref0[1][0]
        d_get_calls, d_get_usec = ref1[1][1] - ref0[1][1], ref1[1][2] - ref0[1][2]
        ref_redis, ref_lat = d_cpu / d_ops, d_get_usec / d_get_calls
        ref_nginx = (ref1[2] - ref0[2]) / 1e6 / (ref1[3] - ref0[3])
        end1 = t0 + 8  # whole windows before ref1
        first = [s for s in by["redis"] if s["window_start_us"] / 1e6 < end1]
        cpo = [s["cpu_per_op"] for s in first if s["cpu_per_op"] is not None]
        lat = [s["latency"] for s in first if s["latency"] is not None]
        assert len(cpo) >= 5 and len(lat) >= 5, first
        med = statistics.median(cpo)
        assert abs(med / ref_redis - 1) < 0.3, (med, ref_redis)
        med_lat = statistics.median(lat)
        assert abs(med_lat / ref_lat - 1) < 0.3, (med_lat, ref_lat)
        print(
            "redis: cpu_per_op median %.2f us (its own: %.2f us), GET latency median %.3f us (INFO commandstats %.3f us)"
            % (med * 1e6, ref_redis * 1e6, med_lat, ref_lat)
        )
        ng = [s["cpu_per_op"] for s in by["nginx"] if s["window_start_us"] / 1e6 < end1 and s["cpu_per_op"] is not None]
        assert len(ng) >= 5 and all(s["latency"] is None for s in by["nginx"]), by["nginx"]
        assert abs(statistics.median(ng) / ref_nginx - 1) < 0.3, (statistics.median(ng), ref_nginx)
        print("nginx: cpu_per_op median %.2f us (its own: %.2f us)" % (statistics.median(ng) * 1e6, ref_nginx * 1e6))

        # phase 2: redis restarted: its counters went back ("reset"), values again after
        seq = [(round(s["window_start_us"] / 1e6 - t0, 1), s["cpu_per_op"]) for s in by["redis"]]
        assert re.search(r"cpu_per_op of redis null: reset", log), (seq, restarted - t0, log)
        again = [s for s in by["redis"] if restarted + 1 < s["window_start_us"] / 1e6 < killed - 1]
        assert any(s["cpu_per_op"] is not None for s in again), again
        # phase 3: exporter gone: null, "connect"; phase 4: values again
        gone = [s for s in by["redis"] if killed + 1 < s["window_start_us"] / 1e6 < back - 1]
        assert gone and all(s["cpu_per_op"] is None and s["latency"] is None for s in gone), gone
        assert re.search(r"scrape of redis failed: connect", log), log
        assert re.search(r"failed \(connect \d+", log), log
        after = [s for s in by["redis"] if s["window_start_us"] / 1e6 > back + 2]
        assert any(s["cpu_per_op"] is not None for s in after), after
        print(
            "redis restarted: reset, then values; exporter killed: %d windows null (connect), then values" % len(gone)
        )

        # a silent endpoint and a wrong one, every window null with their reason; plain tasks none
        assert all(s["cpu_per_op"] is None for s in by["hang"] + by["garbage"])
        assert re.search(r"scrape of hang failed: timeout", log), log
        assert re.search(r"scrape of garbage failed: garbage \(line 1", log), log
        assert all(s["cpu_per_op"] is None and s["latency"] is None for s in by["plain"])
        print("never answering: timeout; not the text format: garbage; unscraped task: null")
    finally:
        for t in loads:
            t.stop.set()
        for p in procs.values():
            p.kill()
            p.wait()
        for name in os.listdir(root):  # what the services forked (nginx's worker) too
            if os.path.isfile(os.path.join(root, name, "cgroup.kill")):
                with open(os.path.join(root, name, "cgroup.kill"), "w") as f:
                    f.write("1")
        hang.close()
        time.sleep(0.2)
        cgtest.remove_tree(root)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1])
