"""Two ways to run SQL on ClickHouse with the same interface: a server over HTTP
(the local 18.16 or any current one) and chdb-core in-process (ClickHouse 26.x).

Both return the result as text in the requested format (TabSeparated by default) and
raise ClickHouseError with the server's message on any failure."""

import re
import ssl
import urllib.error
import urllib.parse
import urllib.request


class ClickHouseError(Exception):
    """A statement failed or the server could not be reached."""


class HttpClickHouse:
    """A ClickHouse server's HTTP interface, e.g. http://127.0.0.1:8123 or https://ch:8443.
    user and password sign in (X-ClickHouse-User/-Key headers; the server's default user when
    user is None). Over https the server's certificate is checked against ca_file (else the
    system's CAs); cert_file and key_file are a client certificate for servers that ask one."""

    def __init__(
        self,
        url="http://127.0.0.1:8123",
        timeout=60.0,
        user=None,
        password=None,
        ca_file=None,
        cert_file=None,
        key_file=None,
    ):
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.user = user
        self._headers = {}
        if user:
            self._headers["X-ClickHouse-User"] = user
        if password:
            self._headers["X-ClickHouse-Key"] = password
        self._ssl = None
        if self.url.startswith("https:"):
            try:
                self._ssl = ssl.create_default_context(cafile=ca_file or None)
                if cert_file:
                    self._ssl.load_cert_chain(cert_file, key_file or None)
            except (OSError, ssl.SSLError) as e:
                raise ClickHouseError(f"TLS files for {self.url}: {e}") from None
        elif ca_file or cert_file:
            raise ClickHouseError(f"TLS files given for {self.url}, which is not https: use an https:// URL")

    def __repr__(self):
        return f"HttpClickHouse({self.url})"

    def query(self, sql, fmt="TabSeparated", data=None):
        """Runs one statement; data (str) is sent as the body after the statement (for INSERT ... FORMAT)."""
        text = sql.strip()
        if fmt and _returns_rows(text):
            text += f"\nFORMAT {fmt}"
        if data is None:
            req = urllib.request.Request(self.url + "/", data=text.encode(), method="POST", headers=self._headers)
        else:
            params = urllib.parse.urlencode({"query": text, "input_format_skip_unknown_fields": 1})
            req = urllib.request.Request(
                f"{self.url}/?{params}", data=data.encode(), method="POST", headers=self._headers
            )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self._ssl) as resp:
                return resp.read().decode()
        except urllib.error.HTTPError as e:
            body = e.read().decode(errors="replace").strip()
            if re.match(r"Code: (192|193|194|516)\b", body):  # unknown user, wrong or missing password
                who = f"user {self.user}" if self.user else "the default user"
                raise ClickHouseError(f"ClickHouse at {self.url} refused the sign-in of {who}: {body}") from None
            raise ClickHouseError(f"{self.url}: {body}\nstatement: {_short(text)}") from None
        except (urllib.error.URLError, OSError) as e:
            raise ClickHouseError(f"ClickHouse unreachable at {self.url}: {e}") from None

    def answers(self):
        try:
            return self.query("SELECT 1").strip() == "1"
        except ClickHouseError:
            return False


class ChdbClickHouse:
    """chdb-core: ClickHouse in this process, state kept in a directory (temporary if path is None)."""

    def __init__(self, path=None):
        from chdb import session  # imported here: the HTTP client must not need chdb

        self._session = session.Session(path) if path else session.Session()
        self.url = f"chdb:{path or 'temporary'}"

    def __repr__(self):
        return f"ChdbClickHouse({self.url})"

    def query(self, sql, fmt="TabSeparated", data=None):
        text = sql.strip()
        if data is not None:
            text = f"{text}\n{data}"
            fmt = None
        try:
            res = self._session.query(text, fmt or "TabSeparated")
        except Exception as e:  # chdb raises its own RuntimeError subclasses
            raise ClickHouseError(f"chdb: {e}\nstatement: {_short(text)}") from None
        return "" if res is None else res.bytes().decode() if hasattr(res, "bytes") else str(res)

    def close(self):
        self._session.close()


def connect(url, **sign_in):
    """'chdb:' (temporary), 'chdb:/some/dir' or an http(s) URL; sign_in: HttpClickHouse's user,
    password, ca_file, cert_file, key_file (ignored by chdb)."""
    if url.startswith("chdb:"):
        return ChdbClickHouse(url[5:] or None)
    return HttpClickHouse(url, **sign_in)


def _returns_rows(sql):
    head = sql.lstrip("( \n\t").split(None, 1)[0].upper() if sql.strip() else ""
    return head in ("SELECT", "WITH", "SHOW", "DESCRIBE", "DESC", "EXISTS") and " FORMAT " not in sql.upper().replace(
        "\n", " "
    )


def _short(sql, n=300):
    s = " ".join(sql.split())
    return s if len(s) <= n else s[:n] + " ..."
