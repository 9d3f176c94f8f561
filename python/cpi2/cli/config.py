"""Where cpi2ctl connects, and as whom: a config file of named contexts, like a kubeconfig, beside
flags and environment variables. For each setting the first of these wins: the flag, the
environment variable, the context (--context, else $CPI2_CONTEXT, else the file's
current-context), the local stack (stack/stack.env and .stack/secrets).

The file ($CPI2_CONFIG, else ~/.config/cpi2/config.yaml) is YAML:

    current-context: prod
    contexts:
      prod:
        clickhouse:
          url: https://clickhouse.example:8443
          database: cpi2
          user: operator
          password-file: ~/.config/cpi2/prod-clickhouse.password   # or password: ... (file 0600)
          ca-file: /etc/ssl/certs/example-ca.pem                   # checks the server's certificate
          cert-file: ...                                           # a client certificate, if asked
          key-file: ...
        kafka:
          bootstrap: kafka-0.example:9093,kafka-1.example:9093
          client-file: ~/.config/cpi2/prod-kafka.properties          # SASL, TLS, password (0600)

A file or password file that holds a password must be readable by its owner alone (0600), as the
Kafka client file must."""

import os
import pathlib
import tempfile
from dataclasses import dataclass, fields

from cpi2 import repo
from cpi2.clickhouse import chclient

DEFAULT_PATH = pathlib.Path("~/.config/cpi2/config.yaml")
# setting -> (section, key in the context's section, environment variable)
SETTINGS = {
    "clickhouse": ("clickhouse", "url", "CPI2_CLICKHOUSE_URL"),
    "database": ("clickhouse", "database", "CPI2_DATABASE"),
    "clickhouse_user": ("clickhouse", "user", "CPI2_CLICKHOUSE_USER"),
    "clickhouse_password_file": ("clickhouse", "password-file", "CPI2_CLICKHOUSE_PASSWORD_FILE"),
    "clickhouse_ca": ("clickhouse", "ca-file", "CPI2_CLICKHOUSE_CA"),
    "clickhouse_cert": ("clickhouse", "cert-file", "CPI2_CLICKHOUSE_CERT"),
    "clickhouse_key": ("clickhouse", "key-file", "CPI2_CLICKHOUSE_KEY"),
    "kafka": ("kafka", "bootstrap", "CPI2_KAFKA_BOOTSTRAP"),
    "kafka_client_file": ("kafka", "client-file", "CPI2_KAFKA_CLIENT_FILE"),
}
PATH_SETTINGS = ("clickhouse_password_file", "clickhouse_ca", "clickhouse_cert", "clickhouse_key", "kafka_client_file")


class ConfigError(Exception):
    """The config file, a context or a password file cannot be used; str() says why."""


@dataclass
class Settings:
    context: str = ""  # the context used, '' when none
    clickhouse: str = ""
    database: str = "cpi2"
    clickhouse_user: str = ""
    clickhouse_password: str = ""
    clickhouse_password_file: str = ""
    clickhouse_ca: str = ""
    clickhouse_cert: str = ""
    clickhouse_key: str = ""
    kafka: str = ""
    kafka_client_file: str = ""

    def clickhouse_client(self):
        return chclient.connect(
            self.clickhouse,
            user=self.clickhouse_user or None,
            password=self.clickhouse_password or None,
            ca_file=self.clickhouse_ca or None,
            cert_file=self.clickhouse_cert or None,
            key_file=self.clickhouse_key or None,
        )


def path(explicit=None):
    return pathlib.Path(explicit or os.environ.get("CPI2_CONFIG") or DEFAULT_PATH).expanduser()


def _private(p, what):
    """Refuses a file group or others may read: it holds a password."""
    mode = os.stat(p).st_mode
    if mode & 0o077:
        raise ConfigError(f"{what} {p}: mode {mode & 0o7777:04o} lets group or others read it: chmod 600 it")


def load(p):
    """The config file as a dict ({} when it does not exist)."""
    import yaml

    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise ConfigError(f"config file {p}: {e.strerror}") from None
    try:
        cfg = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        raise ConfigError(f"config file {p}: not YAML: {e}") from None
    if not isinstance(cfg, dict) or not isinstance(cfg.get("contexts", {}), dict):
        raise ConfigError(f"config file {p}: expected a mapping with 'contexts: {{NAME: {{...}}}}'")
    for name, ctx in cfg.get("contexts", {}).items():
        if not isinstance(ctx, dict) or any(
            s not in ("clickhouse", "kafka") or not isinstance(v, dict) for s, v in ctx.items()
        ):
            raise ConfigError(f"config file {p}: context {name!r}: expected 'clickhouse:' and 'kafka:' mappings")
        known = {(sec, key) for sec, key, _ in SETTINGS.values()} | {("clickhouse", "password")}
        for sec, values in ctx.items():
            for key in values:
                if (sec, key) not in known:
                    raise ConfigError(f"config file {p}: context {name!r}: unknown key {sec}.{key}")
        if "password" in ctx.get("clickhouse", {}):
            _private(p, "config file")
    return cfg


def save(p, cfg):
    """Writes the config file atomically, mode 0600 (it may hold a password)."""
    import yaml

    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".config-", dir=p.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            yaml.safe_dump(cfg, f, sort_keys=False, default_flow_style=False)
        os.chmod(tmp, 0o600)
        os.replace(tmp, p)
    except BaseException:
        os.unlink(tmp)
        raise


def context_name(cfg, explicit=None):
    return explicit or os.environ.get("CPI2_CONTEXT") or cfg.get("current-context") or ""


def resolve(args):
    """Settings from args (attributes named as SETTINGS, absent or None when not given, plus
    context and config), the environment, the context and the local stack."""
    p = path(getattr(args, "config", None))
    cfg = load(p)
    name = context_name(cfg, getattr(args, "context", None))
    contexts = cfg.get("contexts", {})
    if name and name not in contexts:
        known = ", ".join(sorted(contexts)) or "none"
        raise ConfigError(f"context {name!r} is not in {p} (contexts: {known})")
    ctx = contexts.get(name, {})
    local = {
        "clickhouse": repo.default_clickhouse_url(),
        "kafka": repo.default_kafka_bootstrap(),
        "kafka_client_file": repo.kafka_client_file("operator") or "",
    }
    s = Settings(context=name)
    for attr, (sec, key, env) in SETTINGS.items():
        v = getattr(args, attr, None)
        if v is None:
            v = os.environ.get(env)
        if v is None:
            v = ctx.get(sec, {}).get(key)
        if v is None:
            v = local.get(attr)
        if v is not None:
            v = str(v)
            setattr(s, attr, os.path.expanduser(v) if attr in PATH_SETTINGS and v else v)
    s.clickhouse_password = _password(s, ctx, p)
    return s


def _password(s, ctx, p):
    """The ClickHouse password: $CPI2_CLICKHOUSE_PASSWORD, the password file, the context's password."""
    if os.environ.get("CPI2_CLICKHOUSE_PASSWORD") is not None:
        return os.environ["CPI2_CLICKHOUSE_PASSWORD"]
    if s.clickhouse_password_file:
        f = s.clickhouse_password_file
        try:
            _private(f, "password file")
            with open(f, encoding="utf-8") as fh:
                return fh.read().strip("\r\n")
        except OSError as e:
            raise ConfigError(f"password file {f}: {e.strerror}") from None
    return str(ctx.get("clickhouse", {}).get("password", ""))


def redacted(cfg):
    """The config with every password replaced, to show."""
    out = {k: v for k, v in cfg.items() if k != "contexts"}
    out["contexts"] = {}
    for name, ctx in cfg.get("contexts", {}).items():
        c = {sec: dict(values) for sec, values in ctx.items()}
        if "password" in c.get("clickhouse", {}):
            c["clickhouse"]["password"] = "REDACTED"
        out["contexts"][name] = c
    return out


def shown(s):
    """Settings as a dict to show: the password only as whether there is one."""
    d = {f.name: getattr(s, f.name) for f in fields(s) if f.name != "clickhouse_password"}
    d["clickhouse_password"] = "(set)" if s.clickhouse_password else ""
    return d


# `cpi2ctl config ...`: the config file's contexts.


def add_parsers(sub, parents=()):
    from cpi2.cli import output

    p = sub.add_parser("config", help="contexts: where cpi2ctl connects, and as whom (like a kubeconfig)")
    s = p.add_subparsers(dest="config_cmd", metavar="COMMAND", required=True)
    cmds = {
        "view": ("the config file (passwords redacted) and the settings in use", _view),
        "get-contexts": ("every context, * before the current one", _get_contexts),
        "current-context": ("the context in use", _current_context),
        "use-context": ("make NAME the current context", _use_context),
        "set-context": ("create or update context NAME from the connection flags given", _set_context),
        "delete-context": ("remove context NAME", _delete_context),
    }
    for name, (help_text, func) in cmds.items():
        c = s.add_parser(name, help=help_text, description=help_text, parents=list(parents))
        if name in ("use-context", "set-context", "delete-context"):
            c.add_argument("name", metavar="NAME")
        output.add_option(c)
        c.set_defaults(func=func, no_settings=True)


def _print(args, out, obj, line):
    from cpi2.cli import output

    print(output.record_text(args.output, obj, line), file=out)


def _view(args, out):
    from cpi2.cli import output

    p = path(args.config)
    try:
        in_use = shown(resolve(args))
    except ConfigError as e:  # shown, not fatal: view is where one looks for what is wrong
        in_use = {"error": str(e)}
    doc = {"file": str(p), "in_use": in_use, "config": redacted(load(p))}
    print(output.record_text(args.output, doc, output.as_yaml(doc)), file=out)
    return 0


def _get_contexts(args, out):
    from cpi2.cli import output

    p = path(args.config)
    cfg = load(p)
    current = context_name(cfg, args.context)
    rows = []
    for name, ctx in cfg.get("contexts", {}).items():
        ch, kafka = ctx.get("clickhouse", {}), ctx.get("kafka", {})
        rows.append(
            ("*" if name == current else "", name, ch.get("url", ""), ch.get("user", ""), kafka.get("bootstrap", ""))
        )
    cols = ["current", "name", "clickhouse", "user", "kafka"]
    print(output.rows_text(args.output, cols, rows), file=out)
    return 0


def _current_context(args, out):
    cfg = load(path(args.config))
    name = context_name(cfg, args.context)
    _print(args, out, {"current-context": name}, name or "(none: the local stack)")
    return 0


def _change(args, change):
    p = path(args.config)
    cfg = load(p)
    cfg.setdefault("contexts", {})
    change(cfg)
    save(p, cfg)
    return p


def _use_context(args, out):
    def change(cfg):
        if args.name not in cfg["contexts"]:
            raise ConfigError(f"context {args.name!r} is not in {path(args.config)}")
        cfg["current-context"] = args.name

    p = _change(args, change)
    _print(args, out, {"current-context": args.name, "file": str(p)}, f"current context: {args.name} ({p})")
    return 0


def _set_context(args, out):
    given = {a: getattr(args, a) for a in SETTINGS if getattr(args, a, None) is not None}

    def change(cfg):
        ctx = cfg["contexts"].setdefault(args.name, {})
        for attr, v in given.items():
            sec, key, _ = SETTINGS[attr]
            ctx.setdefault(sec, {})[key] = os.path.abspath(os.path.expanduser(v)) if attr in PATH_SETTINGS else v
        cfg.setdefault("current-context", args.name)

    p = _change(args, change)
    keys = ", ".join("%s.%s" % SETTINGS[a][:2] for a in given) or "nothing"
    _print(
        args,
        out,
        {"context": args.name, "set": sorted(given), "file": str(p)},
        f"context {args.name}: set {keys} ({p})",
    )
    return 0


def _delete_context(args, out):
    def change(cfg):
        if cfg["contexts"].pop(args.name, None) is None:
            raise ConfigError(f"context {args.name!r} is not in {path(args.config)}")
        if cfg.get("current-context") == args.name:
            cfg.pop("current-context")

    p = _change(args, change)
    _print(args, out, {"deleted": args.name, "file": str(p)}, f"context {args.name} deleted ({p})")
    return 0
