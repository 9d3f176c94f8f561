"""Tasks as an operator names them. A task is a cgroup path below its host's root; on Kubernetes
that is the kubelet's `kubepods/burstable/pod<uid>`, which no one reads, while the sample has the
pod's name (task_id) and its job the namespace first (`shop/deployment/web`, cpi2-k8s-identity).
cpi2ctl shows such a task as `namespace/pod` and takes that name where it takes a task, looking
the cgroup up in the samples of the host."""

import re

from cpi2.clickhouse import forensics

_KUBELET = re.compile(r"(^|/)kubepods[./]")
# A namespace (DNS label) and a pod name (DNS subdomain), as cpi2-k8s-identity checks them.
_POD_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
DAY_US = 86_400_000_000


def is_pod_cgroup(task):
    return isinstance(task, str) and bool(_KUBELET.search(task))


def _day_range(from_us, to_us):
    """A WHERE on the samples' partition key for [from_us, to_us) (the whole table when None)."""
    if from_us is None or to_us is None:
        return "1"
    return "event_date >= toDate(toDateTime(%d)) AND event_date <= toDate(toDateTime(%d))" % (
        max(from_us, 0) // 1_000_000,
        max(to_us, 0) // 1_000_000,
    )


def pod_names(ch, database, cgroups, from_us=None, to_us=None, hosts=()):
    """{cgroup: 'namespace/pod'} for the kubelet cgroups among cgroups, from their samples in the
    days of [from_us, to_us) (on hosts, when given: the first column of the samples' key); a cgroup
    without samples there keeps its path."""
    wanted = sorted({c for c in cgroups if is_pod_cgroup(c)})
    if not wanted:
        return {}
    lit = lambda v: forensics.literal("String", v)  # noqa: E731
    on_hosts = "host IN (%s)" % ", ".join(lit(h) for h in sorted(set(hosts))) if hosts else "1"
    sql = (
        "SELECT task, any(job) AS job, any(task_id) AS pod FROM %s.samples WHERE %s AND %s AND task IN (%s) GROUP BY task"
        % (
            database,
            _day_range(from_us, to_us),
            on_hosts,
            ", ".join(lit(c) for c in wanted),
        )
    )
    _, rows = forensics.select(ch, sql, "pod names")
    return {task: "%s/%s" % (job.split("/", 1)[0], pod) for task, job, pod in rows if pod and "/" in job}


def show(ch, database, cols, rows, from_us=None, to_us=None):
    """rows with every task column (named task or *_task) holding a kubelet cgroup shown as
    namespace/pod."""
    idx = [i for i, c in enumerate(cols) if c == "task" or c.endswith("_task")]
    if not idx or not rows:
        return rows
    hosts = [r[cols.index("host")] for r in rows] if "host" in cols else ()
    names = pod_names(ch, database, [r[i] for r in rows for i in idx], from_us, to_us, hosts)
    if not names:
        return rows
    return [tuple(names.get(v, v) if i in idx else v for i, v in enumerate(r)) for r in rows]


def cgroup(ch, database, host, name, now_us):
    """The cgroup of task `name` on host: a `namespace/pod` name whose pod has samples on host in
    the 7 days before now_us gives its cgroup; any other name, or no host (the lookup reads one
    host's samples, the first column of their key), leaves name as it is."""
    if not host or not _POD_NAME.match(name):
        return name
    ns, pod = name.split("/", 1)
    sql = (
        "SELECT task FROM %s.samples WHERE %s AND host = %s AND task_id = %s AND job LIKE %s "
        "ORDER BY window_start_us DESC LIMIT 1"
        % (
            database,
            _day_range(now_us - 7 * DAY_US, now_us),
            forensics.literal("String", host),
            forensics.literal("String", pod),
            forensics.literal("String", ns.replace("_", "\\_") + "/%"),
        )
    )
    _, rows = forensics.select(ch, sql, "the pod's cgroup")
    return rows[0][0] if rows and is_pod_cgroup(rows[0][0]) else name
