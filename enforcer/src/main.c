/* cpi2-enforcer: applies the caps that incidents and operators ask for on this host, lifts
 * them on time, and never leaves one behind (state file, restore on SIGTERM, recovery after
 * a crash). Every decision is published to cpi2.actions. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cpi2/config.h>
#include <cpi2/kafka.h>
#include <cpi2/log.h>
#include <cpi2/wire.h>

#include "conf.h"
#include "decide.h"
#include "latency.h"
#include "messages.h"

#define MAX_HOSTS 4096
#define MAX_ACTIONS 64

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static int64_t wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

struct enforcer {
	struct conf *conf;
	struct host_enforcer *hosts;
	int n_hosts;
	bool cluster_protection_off;
	struct cpi2_producer *producer;
	struct cpi2_consumer *consumer;
	struct cpi2_codec *incident_codec, *command_codec, *action_codec;
	long seq;
	int64_t started_us;
	struct latency latency; /* incident arrival in Kafka -> cgroup write */
	char buf[65536];
};

/* The enforcer's clock: the wall clock, or a simulator's clock read from clock_file. */
static int64_t now_us(struct enforcer *e)
{
	static bool warned;
	long long v;
	FILE *f;

	if (!e->conf->clock_file[0])
		return wall_us();
	f = fopen(e->conf->clock_file, "re");
	if (f) {
		int ok = fscanf(f, "%lld", &v) == 1;

		fclose(f);
		if (ok)
			return (int64_t)v;
	}
	if (!warned)
		cpi2_log(CPI2_LOG_WARN, "enforcer", "read clock %s: %s; using the wall clock", e->conf->clock_file,
			 strerror(errno));
	warned = true;
	return wall_us();
}

static void publish(struct enforcer *e, struct host_enforcer *h, const struct action *a)
{
	avro_value_t *v = cpi2_codec_value(e->action_codec);
	char id[384];
	size_t len;
	int rc;

	snprintf(id, sizeof(id), "%s-%lld-%ld", h->host, (long long)e->started_us, ++e->seq);
	cpi2_log(a->kind == ACT_FAILED ? CPI2_LOG_ERR : a->kind == ACT_REFUSED ? CPI2_LOG_WARN : CPI2_LOG_INFO,
		 "enforcer", "%s: %s %s (%s)%s%s", h->host, action_kind_names[a->kind], a->task,
		 action_cause_names[a->cause], a->reason[0] ? ": " : "", a->reason);
	if (messages_action(v, a, h->host, id, now_us(e)) != 0 ||
	    (rc = cpi2_codec_encode(e->action_codec, v, e->buf, sizeof(e->buf), &len)) != 0) {
		cpi2_log(CPI2_LOG_ERR, "enforcer", "cannot encode the action %s", id);
		return;
	}
	if (e->producer && cpi2_producer_send(e->producer, e->conf->actions_topic, h->host, strlen(h->host), e->buf, len) != 0)
		cpi2_log(CPI2_LOG_ERR, "enforcer", "producer queue full: action %s not published", id);
}

static void publish_all(struct enforcer *e, struct host_enforcer *h, const struct action *a, int n)
{
	for (int i = 0; i < n; i++)
		publish(e, h, &a[i]);
}

static struct host_enforcer *find_host(struct enforcer *e, const char *host)
{
	for (int i = 0; host && i < e->n_hosts; i++)
		if (strcmp(e->hosts[i].host, host) == 0)
			return &e->hosts[i];
	return NULL;
}

static void dead_letter(struct enforcer *e, const struct cpi2_message *m, const char *reason)
{
	cpi2_log(CPI2_LOG_WARN, "enforcer", "refused message %s[%d]@%lld: %s", m->topic, m->partition,
		 (long long)m->offset, reason);
	if (e->producer)
		cpi2_dead_letter(e->producer, "cpi2-enforcer", m, reason);
}

static void on_incident(struct enforcer *e, const struct cpi2_message *m)
{
	struct incident_in in;
	struct host_enforcer *h;
	struct action a;
	avro_value_t *rec;
	char err[512];
	int64_t age_ms;

	if (cpi2_codec_decode(e->incident_codec, m->payload, m->len, &rec, err, sizeof(err)) != 0 ||
	    messages_incident(rec, &in, err, sizeof(err)) != 0) {
		dead_letter(e, m, err);
		return;
	}
	h = find_host(e, in.host);
	if (!h || !in.throttle)
		return; /* another host's incident, or one that asks for no cap */
	age_ms = wall_us() / 1000 - m->timestamp_ms;
	if (m->timestamp_ms > 0 && age_ms > (int64_t)e->conf->stale_after_s * 1000) {
		/* A replay of an old incident (e.g. after a long outage): its cap would be late. */
		memset(&a, 0, sizeof(a));
		a.kind = ACT_REFUSED;
		a.cause = CAUSE_INCIDENT;
		snprintf(a.task, sizeof(a.task), "%.*s", (int)in.antagonist_len, in.antagonist_task ? in.antagonist_task : "");
		a.incident_id = in.incident_id;
		snprintf(a.reason, sizeof(a.reason), "stale incident: it reached Kafka %lld s ago", (long long)(age_ms / 1000));
		publish(e, h, &a);
		return;
	}
	if (decide_incident(h, &in, now_us(e), &a) == 1) {
		if ((a.kind == ACT_APPLIED || a.kind == ACT_RENEWED) && m->timestamp_ms > 0)
			latency_add(&e->latency, (double)(wall_us() - m->timestamp_ms * 1000) / 1000.0);
		publish(e, h, &a);
	}
}

static void on_command(struct enforcer *e, const struct cpi2_message *m)
{
	struct action a[MAX_ACTIONS];
	struct command_in in;
	avro_value_t *rec;
	char err[512];
	int n;

	if (cpi2_codec_decode(e->command_codec, m->payload, m->len, &rec, err, sizeof(err)) != 0 ||
	    messages_command(rec, &in, err, sizeof(err)) != 0) {
		dead_letter(e, m, err);
		return;
	}
	if (!in.host) {
		/* The whole cluster: the shared kill switch, or a cap/uncap on every host we serve. */
		if (in.command == CMD_PROTECTION_OFF)
			e->cluster_protection_off = true;
		else if (in.command == CMD_PROTECTION_ON)
			e->cluster_protection_off = false;
		cpi2_log(CPI2_LOG_INFO, "enforcer", "cluster command %s", in.command_id);
		for (int i = 0; i < e->n_hosts; i++) {
			n = decide_command(&e->hosts[i], &in, now_us(e), a, MAX_ACTIONS);
			publish_all(e, &e->hosts[i], a, n);
		}
		return;
	}
	struct host_enforcer *h = find_host(e, in.host);

	if (!h)
		return;
	n = decide_command(h, &in, now_us(e), a, MAX_ACTIONS);
	publish_all(e, h, a, n);
}

static void expire(struct enforcer *e)
{
	struct action a;
	int64_t now = now_us(e);

	for (int i = 0; i < e->n_hosts; i++)
		while (decide_expiry(&e->hosts[i], now, &a) == 1)
			publish(e, &e->hosts[i], &a);
}

/* Which hosts this process serves: the one host, or every folder under sim_hosts_root. */
static int load_hosts(struct enforcer *e, char *err, size_t errsz)
{
	struct conf *c = e->conf;
	int cap = 1;
	DIR *d = NULL;
	struct dirent *de;

	if (c->sim_hosts_root[0]) {
		d = opendir(c->sim_hosts_root);
		if (!d) {
			snprintf(err, errsz, "open sim_hosts_root %s: %s", c->sim_hosts_root, strerror(errno));
			return -errno;
		}
		cap = MAX_HOSTS;
	}
	e->hosts = calloc((size_t)cap, sizeof(*e->hosts));
	if (!e->hosts)
		return -ENOMEM;
	for (;;) {
		struct host_enforcer *h = &e->hosts[e->n_hosts];
		char *root;

		if (d) {
			de = readdir(d);
			if (!de)
				break;
			if (de->d_name[0] == '.' || de->d_type != DT_DIR || e->n_hosts == cap)
				continue;
			snprintf(h->host, sizeof(h->host), "%s", de->d_name);
			if (asprintf(&root, "%s/%s", c->sim_hosts_root, de->d_name) < 0)
				return -ENOMEM;
		} else {
			snprintf(h->host, sizeof(h->host), "%s", c->host);
			root = strdup(c->cgroup_root);
		}
		h->policy.root = root;
		conf_policy(c, &h->policy);
		h->caps.max_caps = c->max_caps;
		h->caps.dry_run = c->dry_run;
		if (asprintf((char **)&h->caps.state_path, "%s/%s.caps", c->state_dir, h->host) < 0)
			return -ENOMEM;
		snprintf(h->protection_path, sizeof(h->protection_path), "%s/%s.protection", c->state_dir, h->host);
		h->version = c->cgroup_version;
		h->period_us = c->period_us;
		h->default_duration_s = c->default_duration_s;
		h->default_cap_cpu = c->default_cap_cpu;
		h->cluster_protection_off = &e->cluster_protection_off;
		decide_load_protection(h);
		e->n_hosts++;
		if (!d)
			break;
	}
	if (d)
		closedir(d);
	return 0;
}

int main(int argc, char **argv)
{
	static struct enforcer e;
	static struct conf conf;
	struct action a[MAX_ACTIONS];
	struct cpi2_message m;
	char err[1024];
	int rc, n;

	rc = conf_parse(&conf, argc, argv, err, sizeof(err));
	if (rc == 1)
		return 0; /* --help */
	if (rc) {
		fprintf(stderr, "cpi2-enforcer: %s\n", err);
		return 2;
	}
	e.conf = &conf;
	e.started_us = wall_us();
	if (mkdir(conf.state_dir, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "cpi2-enforcer: create state_dir %s: %s\n", conf.state_dir, strerror(errno));
		return 1;
	}
	if (load_hosts(&e, err, sizeof(err)) != 0 || e.n_hosts == 0) {
		fprintf(stderr, "cpi2-enforcer: %s\n", e.n_hosts == 0 && !err[0] ? "no host to serve" : err);
		return 1;
	}
	if (cpi2_codec_open(&e.incident_codec, "Incident", err, sizeof(err)) ||
	    cpi2_codec_open(&e.command_codec, "ControlCommand", err, sizeof(err)) ||
	    cpi2_codec_open(&e.action_codec, "EnforcementAction", err, sizeof(err))) {
		fprintf(stderr, "cpi2-enforcer: %s\n", err);
		return 1;
	}
	const char *const topics[] = {conf.incidents_topic, conf.control_topic, NULL};
	if (cpi2_producer_new(&e.producer, conf.brokers, (const char *const *)conf.kafka_props, err, sizeof(err)) ||
	    cpi2_consumer_new(&e.consumer, conf.brokers, conf.group_id, topics, (const char *const *)conf.kafka_props,
			      err, sizeof(err))) {
		fprintf(stderr, "cpi2-enforcer: kafka: %s\n", err);
		return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	cpi2_log(CPI2_LOG_INFO, "enforcer", "serving %d host%s (first %s, cgroup root %s)%s, brokers %s", e.n_hosts,
		 e.n_hosts == 1 ? "" : "s", e.hosts[0].host, e.hosts[0].policy.root, conf.dry_run ? ", DRY RUN" : "",
		 conf.brokers);

	/* Caps left by a previous run (crash, kill -9): release or resume every one. */
	for (int i = 0; i < e.n_hosts; i++) {
		n = decide_recover(&e.hosts[i], now_us(&e), a, MAX_ACTIONS, err, sizeof(err));
		if (n < 0) {
			cpi2_log(CPI2_LOG_ERR, "enforcer", "%s: state file: %s", e.hosts[i].host, err);
			return 1;
		}
		publish_all(&e, &e.hosts[i], a, n);
	}

	while (!stopping) {
		rc = cpi2_consumer_poll(e.consumer, conf.poll_ms, &m);
		if (rc == 1) {
			if (strcmp(m.topic, conf.incidents_topic) == 0)
				on_incident(&e, &m);
			else
				on_command(&e, &m);
			cpi2_consumer_commit(e.consumer);
		} else if (rc < 0) {
			cpi2_log(CPI2_LOG_WARN, "enforcer", "kafka consumer: %s", strerror(-rc));
		}
		expire(&e);
		cpi2_producer_poll(e.producer);
	}

	cpi2_log(CPI2_LOG_INFO, "enforcer", "stopping: lifting every cap");
	for (int i = 0; i < e.n_hosts; i++) {
		n = decide_release_all(&e.hosts[i], CAUSE_SHUTDOWN, a, MAX_ACTIONS);
		publish_all(&e, &e.hosts[i], a, n);
	}
	latency_report(&e.latency, "incident-to-cap latency (Kafka arrival to cgroup write)");
	cpi2_consumer_close(e.consumer);
	cpi2_producer_close(e.producer, 10000);
	cpi2_codec_close(e.incident_codec);
	cpi2_codec_close(e.command_codec);
	cpi2_codec_close(e.action_codec);
	return 0;
}
