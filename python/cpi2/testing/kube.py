"""A real Kubernetes API server for tests: Debian's etcd and the kube-apiserver that `make -C k8s
tools` builds from the Kubernetes Go modules (k8s/apiserver), with a static admin token and no
controllers, as k8s/identity's TestAgainstARealAPIServer runs them. Objects are created over
its REST API; nothing here is a fake."""

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time

import requests
import urllib3

from cpi2.testing import stack

KUBE_APISERVER = os.environ.get("CPI2_KUBE_APISERVER") or os.path.join(stack.STACK_DIR, "bin", "kube-apiserver")


def missing():
    """Why a real API server cannot run here, or None."""
    if not os.access(KUBE_APISERVER, os.X_OK):
        return "no kube-apiserver at %s (make -C k8s tools builds it from k8s/apiserver/go.mod)" % KUBE_APISERVER
    if not shutil.which("etcd"):
        return "no etcd on the PATH (make -C k8s tools installs Debian's etcd-server)"
    return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class APIServer:
    """etcd and kube-apiserver in a temporary folder; use as a context manager."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="cpi2-kube-")
        self.token = secrets.token_hex(16)
        self.port = free_port()
        self.url = "https://127.0.0.1:%d" % self.port
        self.procs = []
        self.session = requests.Session()
        self.session.trust_env = False  # a CA bundle from the environment would override verify
        self.session.verify = False  # the server's self-signed certificate, on loopback
        self.session.headers["Authorization"] = "Bearer " + self.token
        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)

    def _spawn(self, name, args):
        log = open(os.path.join(self.dir, name + ".log"), "w")
        self.procs.append(subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT))
        return self.procs[-1]

    def __enter__(self):
        client, peer = free_port(), free_port()
        etcd = ["--listen-client-urls", "--advertise-client-urls"]
        args = [shutil.which("etcd"), "--data-dir", os.path.join(self.dir, "etcd"), "--name", "default"]
        for flag in etcd:
            args += [flag, "http://127.0.0.1:%d" % client]
        args += ["--listen-peer-urls", "http://127.0.0.1:%d" % peer]
        args += ["--initial-advertise-peer-urls", "http://127.0.0.1:%d" % peer]
        args += ["--initial-cluster", "default=http://127.0.0.1:%d" % peer]
        self._spawn("etcd", args)
        key = os.path.join(self.dir, "sa.key")
        subprocess.run(["openssl", "genrsa", "-out", key, "2048"], check=True, capture_output=True)
        tokens = os.path.join(self.dir, "tokens.csv")
        with open(tokens, "w") as f:
            f.write("%s,admin,admin,system:masters\n" % self.token)
        kas = self._spawn(
            "kube-apiserver",
            [
                KUBE_APISERVER,
                "--etcd-servers=http://127.0.0.1:%d" % client,
                "--secure-port=%d" % self.port,
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                "--endpoint-reconciler-type=none",
                "--cert-dir=" + os.path.join(self.dir, "certs"),
                "--token-auth-file=" + tokens,
                "--authorization-mode=RBAC",
                "--service-account-issuer=https://cpi2.test",
                "--service-account-key-file=" + key,
                "--service-account-signing-key-file=" + key,
                "--service-cluster-ip-range=10.0.0.0/24",
                "--disable-admission-plugins=ServiceAccount",  # no controller makes accounts
            ],
        )

        def ready():
            if kas.poll() is not None:
                raise RuntimeError("kube-apiserver exited:\n" + self.log_tail("kube-apiserver"))
            try:
                return self.session.get(self.url + "/readyz", timeout=2).status_code == 200
            except requests.RequestException:
                return False

        t0 = time.time()
        try:
            stack.wait_until(ready, 90, "kube-apiserver /readyz")
        except AssertionError as e:
            log = self.log_tail("kube-apiserver")
            self.__exit__()
            raise AssertionError("%s\nkube-apiserver's log:\n%s" % (e, log)) from None
        self.ready_s = time.time() - t0
        return self

    def __exit__(self, *exc):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.kill()
                p.wait(30)
        self.procs = []
        shutil.rmtree(self.dir, ignore_errors=True)

    def log_tail(self, name, n=3000):
        with open(os.path.join(self.dir, name + ".log")) as f:
            return f.read()[-n:]

    def kubeconfig(self):
        """A kubeconfig file for the admin token."""
        path = os.path.join(self.dir, "kubeconfig")
        with open(path, "w") as f:
            f.write(
                "apiVersion: v1\nkind: Config\n"
                "clusters: [{name: t, cluster: {server: %s, insecure-skip-tls-verify: true}}]\n"
                "users: [{name: admin, user: {token: %s}}]\n"
                "contexts: [{name: t, context: {cluster: t, user: admin}}]\ncurrent-context: t\n"
                % (self.url, self.token)
            )
        return path

    def create(self, path, obj):
        """POSTs obj to path (e.g. /api/v1/namespaces); returns the object the server stored."""
        r = self.session.post(self.url + path, json=obj, timeout=30)
        if r.status_code not in (200, 201):
            raise RuntimeError("POST %s: %d %s" % (path, r.status_code, r.text[:2000]))
        return r.json()


def owner(obj):
    """A controller owner reference to a stored object."""
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
        "controller": True,
    }


def resources(qos):
    """A container's resources that give a pod this QoS class."""
    q = {"cpu": "500m", "memory": "64Mi"}
    return {"Guaranteed": {"requests": q, "limits": q}, "Burstable": {"requests": q}}.get(qos, {})
