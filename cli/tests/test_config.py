"""Where cpi2ctl connects: contexts of the config file, flags and environment over them; a
ClickHouse user with a password (a user the test adds to the local server through users.d) and
TLS (the local server's HTTP behind a TLS proxy with a throw-away CA)."""

import json
import os
import socket
import ssl
import subprocess
import threading
import time

import pytest
import yaml

from cpi2 import repo
from cpi2.cli import config, main

WINDOW = ["--from", "2100-01-01T00:00:00Z", "--to", "2100-01-01T00:20:00Z"]


@pytest.fixture
def cfg_path(tmp_path, monkeypatch):
    for env in (
        "CPI2_CONTEXT",
        "CPI2_CLICKHOUSE_URL",
        "CPI2_DATABASE",
        "CPI2_CLICKHOUSE_PASSWORD",
        "CPI2_KAFKA_BOOTSTRAP",
    ):
        monkeypatch.delenv(env, raising=False)
    p = tmp_path / "config.yaml"
    monkeypatch.setenv("CPI2_CONFIG", str(p))
    return p


def resolve(*argv):
    return config.resolve(main.parser().parse_args([*argv, "caps"]))


def test_contexts_and_precedence(cfg_path, monkeypatch, capsys):
    assert resolve().clickhouse == repo.default_clickhouse_url()  # no file: the local stack
    assert main.main(["config", "set-context", "a", "--clickhouse", "http://a:1", "--database", "da"]) == 0
    assert main.main(["config", "set-context", "b", "--clickhouse", "http://b:2", "--kafka", "b:9093"]) == 0
    assert "context b: set clickhouse.url, kafka.bootstrap" in capsys.readouterr().out
    assert oct(cfg_path.stat().st_mode & 0o777) == "0o600"
    doc = yaml.safe_load(cfg_path.read_text())
    assert doc["current-context"] == "a"  # the first one set
    s = resolve()
    assert (s.context, s.clickhouse, s.database) == ("a", "http://a:1", "da")
    assert s.kafka == repo.default_kafka_bootstrap()  # not in context a: the local stack's
    assert resolve("--context", "b").clickhouse == "http://b:2"
    monkeypatch.setenv("CPI2_CONTEXT", "b")
    assert resolve().context == "b"
    monkeypatch.setenv("CPI2_CLICKHOUSE_URL", "http://env:3")
    assert resolve().clickhouse == "http://env:3"  # environment over the context
    assert resolve("--clickhouse", "http://flag:4").clickhouse == "http://flag:4"  # flag over both
    # after the command too
    assert (
        config.resolve(main.parser().parse_args(["caps", "--clickhouse", "http://after:5"])).clickhouse
        == "http://after:5"
    )
    monkeypatch.delenv("CPI2_CONTEXT")
    assert main.main(["config", "use-context", "b"]) == 0 and resolve().context == "b"
    capsys.readouterr()
    assert main.main(["config", "get-contexts", "-o", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["current"], r["name"]) for r in rows] == [("", "a"), ("*", "b")]
    assert main.main(["config", "delete-context", "b"]) == 0
    assert main.main(["--context", "b", "caps"]) == 2
    assert "context 'b' is not in" in capsys.readouterr().err


def test_bad_files_are_refused(cfg_path, tmp_path, capsys):
    cfg_path.write_text("contexts:\n  x:\n    clickhouse:\n      url: http://x\n      pasword: typo\n")
    assert main.main(["--context", "x", "caps"]) == 2
    assert "unknown key clickhouse.pasword" in capsys.readouterr().err
    cfg_path.write_text("contexts:\n  x:\n    clickhouse:\n      url: http://x\n      password: s3cret\n")
    cfg_path.chmod(0o644)
    assert main.main(["--context", "x", "caps"]) == 2
    err = capsys.readouterr().err
    assert "mode 0644" in err and "chmod 600" in err and "s3cret" not in err
    cfg_path.chmod(0o600)
    assert main.main(["--context", "x", "config", "view"]) == 0
    out = capsys.readouterr().out
    assert "REDACTED" in out and "s3cret" not in out and "clickhouse_password: (set)" in out
    pw = tmp_path / "pw"
    pw.write_text("x\n")
    pw.chmod(0o640)
    assert main.main(["--clickhouse-password-file", str(pw), "caps"]) == 2
    assert "password file" in capsys.readouterr().err


@pytest.fixture(scope="module")
def ch_user(ch):
    """A user with a password on the local server, added through users.d (read again by the
    server within seconds) and removed afterwards."""
    d = repo.STACK_DIR / "clickhouse" / "users.d"
    d.mkdir(exist_ok=True)
    user, password = f"cpi2ctl_test_{os.getpid()}", f"pw-{os.getpid()}-{time.time_ns()}"
    f = d / f"{user}.xml"
    import hashlib

    digest = hashlib.sha256(password.encode()).hexdigest()
    f.write_text(
        f"<yandex><users><{user}><password_sha256_hex>{digest}</password_sha256_hex>"
        "<networks><ip>::1</ip><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota>"
        f"<allow_databases><database>{ch_db_name()}</database></allow_databases></{user}></users></yandex>"
    )
    from cpi2.clickhouse import chclient

    client = chclient.HttpClickHouse(ch.url, user=user, password=password)
    deadline = time.time() + 30
    while not client.answers():
        assert time.time() < deadline, f"the server did not take {f} within 30 s"
        time.sleep(1)
    yield user, password
    f.unlink()


def ch_db_name():
    from cpi2.testing import fixtures

    return fixtures.database_name("cpi2ctl_test")  # the conftest's db


def test_clickhouse_password(cli, db, ch_user, tmp_path, monkeypatch, capsys):
    user, password = ch_user
    monkeypatch.setenv("CPI2_CONFIG", str(tmp_path / "none.yaml"))
    pw = tmp_path / "pw"
    pw.write_text(password + "\n")
    pw.chmod(0o600)
    code, out, err = cli(
        "--database", db, "--clickhouse-user", user, "--clickhouse-password-file", str(pw), "incidents", *WINDOW
    )
    assert code == 0, err
    assert out.splitlines()[-1] == "(9 rows)"
    # a database this user may not read
    code, out, err = cli(
        "--database", "system", "--clickhouse-user", user, "--clickhouse-password-file", str(pw), "caps"
    )
    assert code == 1
    monkeypatch.setenv("CPI2_CLICKHOUSE_PASSWORD", "wrong")
    code, out, err = cli("--database", db, "--clickhouse-user", user, "incidents", *WINDOW)
    assert code == 1 and f"refused the sign-in of user {user}" in err and "wrong" not in err.replace("Wrong", "")


def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def tls_proxy(ch, tmp_path_factory):
    """https://127.0.0.1:PORT in front of the local server's HTTP port: a certificate for
    127.0.0.1 signed by a CA made here. Yields (url, ca_path)."""
    d = tmp_path_factory.mktemp("tls")
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "1",
        "-subj",
        "/CN=cpi2ctl test CA",
        cwd=d,
    )
    _openssl(
        "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "srv.key", "-out", "srv.csr", "-subj", "/CN=127.0.0.1", cwd=d
    )
    (d / "ext").write_text("subjectAltName=IP:127.0.0.1\n")
    _openssl(
        "x509",
        "-req",
        "-in",
        "srv.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "srv.pem",
        "-days",
        "1",
        "-extfile",
        "ext",
        cwd=d,
    )
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(d / "srv.pem", d / "srv.key")
    target = ch.url.split("//", 1)[1].rstrip("/")
    thost, tport = target.rsplit(":", 1)
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(8)
    stop = threading.Event()

    def pipe(a, b):
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def serve():
        lsock.settimeout(0.5)
        while not stop.is_set():
            try:
                conn, _ = lsock.accept()
            except OSError:
                continue
            try:
                tls = ctx.wrap_socket(conn, server_side=True)
            except (ssl.SSLError, OSError):
                conn.close()  # a client that refused the certificate
                continue
            up = socket.create_connection((thost, int(tport)))
            threading.Thread(target=pipe, args=(tls, up), daemon=True).start()
            threading.Thread(target=pipe, args=(up, tls), daemon=True).start()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield f"https://127.0.0.1:{lsock.getsockname()[1]}", str(d / "ca.pem")
    stop.set()
    t.join(5)
    lsock.close()


def test_clickhouse_over_tls(db, tls_proxy, tmp_path, monkeypatch, capsys):
    url, ca = tls_proxy
    monkeypatch.setenv("CPI2_CONFIG", str(tmp_path / "none.yaml"))
    assert (
        main.main(["--clickhouse", url, "--clickhouse-ca", ca, "--database", db, "incidents", *WINDOW, "-o", "json"])
        == 0
    )
    assert len(json.loads(capsys.readouterr().out)) == 9
    # the system's CAs do not know this one: refused, and said so
    assert main.main(["--clickhouse", url, "--database", db, "incidents", *WINDOW]) == 1
    assert "CERTIFICATE_VERIFY_FAILED" in capsys.readouterr().err
    # from a context
    assert (
        main.main(["config", "set-context", "tls", "--clickhouse", url, "--clickhouse-ca", ca, "--database", db]) == 0
    )
    capsys.readouterr()
    assert main.main(["--context", "tls", "caps", "--at", "2100-01-01T00:17:30Z", "-o", "json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 3
    # TLS files for a plain http URL are a mistake, said so
    assert main.main(["--clickhouse", "http://127.0.0.1:1", "--clickhouse-ca", ca, "caps"]) == 1
    assert "not https" in capsys.readouterr().err
