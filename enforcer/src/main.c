/* cpi2-enforcer: applies the caps that incidents and operators ask for on this host, lifts
 * them on time, and never leaves one behind (state file, restore on SIGTERM, recovery after
 * a crash). Every decision is published to cpi2.actions. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cpi2/clock.h>
#include <cpi2/config.h>
#include <cpi2/httpd.h>
#include <cpi2/kafka.h>
#include <cpi2/log.h>
#include <cpi2/metrics.h>
#include <cpi2/signals.h>
#include <cpi2/textfile.h>
#include <cpi2/wire.h>

#include "conf.h"
#include "decide.h"
#include "latency.h"
#include "messages.h"
#include "optin.h"
#include "persist.h"
#include "privs.h"
#include "sampler.h"
#include "seen.h"
#include "sim.h"
#include "statefile.h"
#include "text.h"

#define MAX_ACTIONS (CAPS_MAX + 1) /* a release of every cap fits */

struct enforcer {
	struct conf *conf;
	struct host_enforcer *hosts;
	int n_hosts;
	bool cluster_protection_off;
	char cluster_switch_path[PATH_MAX];
	struct seen seen;	 /* ids acted on, against replays */
	struct persist *persist; /* durable writes off the incident-to-cap path */
	struct sampler sampler;	 /* bound on dead letters and repeated refusals */
	struct freshness incident_fresh, command_fresh;
	struct optin optin; /* the cgroups incidents may cap (enforce_file) */
	int64_t mono_us;    /* CLOCK_BOOTTIME: the hosts' rate limits, and caps' durations with the
			     * wall clock (a clock set back does not lengthen a cap) */
	char boot_id[40];
	int lock_fd;
	struct cpi2_producer *producer;
	struct cpi2_consumer *consumer;
	struct cpi2_codec *incident_codec, *command_codec, *action_codec;
	long seq;
	int64_t started_us;
	struct latency latency; /* incident arrival in Kafka -> cgroup write */
	struct latency inside;	/* the message received from the consumer -> cgroup write */
	/* /metrics and /healthz (NULL: off), and what they count since the start */
	struct cpi2_httpd *httpd;
	struct cpi2_metrics text;
	int64_t next_metrics_us; /* CLOCK_BOOTTIME: the text is made again at most once a second */
	uint64_t actions[CPI2_ACTION_KIND_SYMBOLS_LEN][CPI2_ACTION_CAUSE_SYMBOLS_LEN];
	uint64_t messages[2], dead_letters, suppressed;
	struct cpi2_histogram to_cap; /* incident in Kafka -> cgroup write, seconds */
	char buf[65536];
};

/* incident-to-cap latency buckets, seconds */
static const double to_cap_bounds[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
				       0.25,  0.5,    1,     2.5,  5,	  10,	30};

static void publish(struct enforcer *e, struct host_enforcer *h, const struct action *a)
{
	avro_value_t *v = cpi2_codec_value(e->action_codec);
	char id[384];
	size_t len;
	int rc;

	snprintf(id, sizeof(id), "%s-%lld-%ld", h->host, (long long)e->started_us, ++e->seq);
	e->actions[a->kind][a->cause]++;
	cpi2_log(a->kind == CPI2_ACTION_KIND_FAILED    ? CPI2_LOG_ERR
		 : a->kind == CPI2_ACTION_KIND_REFUSED ? CPI2_LOG_WARN
						       : CPI2_LOG_INFO,
		 "enforcer", "%s: %s %s (%s%s%s)%s%s", text_log(0, h->host),
		 cpi2_action_kind_symbols[a->kind], a->task, cpi2_action_cause_symbols[a->cause],
		 a->incident_id || a->command_id ? " " : "",
		 text_log(1, a->incident_id ? a->incident_id : a->command_id),
		 a->reason[0] ? ": " : "", text_log(2, a->reason));
	if (messages_action(v, a, h->host, id, sim_now_us(e->conf)) != 0 ||
	    (rc = cpi2_codec_encode(e->action_codec, v, e->buf, sizeof(e->buf), &len)) != 0) {
		cpi2_log(CPI2_LOG_ERR, "enforcer", "cannot encode the action %s", id);
		return;
	}
	if (e->producer && cpi2_producer_send(e->producer, e->conf->actions_topic, h->host,
					      strlen(h->host), e->buf, len) != 0)
		cpi2_log(CPI2_LOG_ERR, "enforcer", "producer queue full: action %s not published",
			 id);
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

/* May a report with this reason go out (at most dead_letters_per_min a minute per kind)? */
static bool sample(struct enforcer *e, const char *reason)
{
	char key[SAMPLER_KEY];

	sampler_class(reason, key);
	return sampler_allow(&e->sampler, key, cpi2_clock_us(CLOCK_REALTIME));
}

/* Log how many reports the sampler left out, once their minute is over. */
static void report_suppressed(struct enforcer *e)
{
	char key[SAMPLER_KEY];
	long n;

	while (sampler_due(&e->sampler, cpi2_clock_us(CLOCK_REALTIME), &key[0], &n) &&
	       (e->suppressed += (uint64_t)n, 1))
		cpi2_log(CPI2_LOG_WARN, "enforcer",
			 "%ld more reports like '%s...' left out in the last minute "
			 "(dead_letters_per_min %ld)",
			 n, text_log(0, key), (long)e->conf->dead_letters_per_min);
}

static void dead_letter(struct enforcer *e, const struct cpi2_message *m, const char *reason)
{
	e->dead_letters++;
	if (!sample(e, reason))
		return;
	cpi2_log(CPI2_LOG_WARN, "enforcer", "refused message %s[%d]@%lld: %s", m->topic,
		 m->partition, (long long)m->offset, text_log(0, reason));
	if (e->producer)
		cpi2_dead_letter(e->producer, "cpi2-enforcer", m, reason);
}

/* A refusal that is an action of host h (stale or replayed messages), sampled. */
static void refuse(struct enforcer *e, struct host_enforcer *h, enum cpi2_action_cause cause,
		   const char *task, size_t len, const char *incident_id, const char *command_id,
		   const char *reason)
{
	struct action a;

	if (!sample(e, reason))
		return;
	memset(&a, 0, sizeof(a));
	a.kind = CPI2_ACTION_KIND_REFUSED;
	a.cause = cause;
	text_printable(a.task, sizeof(a.task), task, len);
	a.incident_id = incident_id;
	a.command_id = command_id;
	snprintf(a.reason, sizeof(a.reason), "%s", reason);
	publish(e, h, &a);
}

/* Cheap checks before decoding: a message whose Kafka key names another host is skipped (every
 * enforcer of the fleet reads every message: another host's costs a key comparison); one over
 * max_message_bytes is refused. Returns 1 to go on, 0 to skip, or -1 after a dead letter. */
static int precheck(struct enforcer *e, const struct cpi2_message *m, bool command)
{
	char key[MESSAGES_HOST_MAX + 1], reason[128];

	if (m->key && m->keylen > 0) {
		if (m->keylen > MESSAGES_HOST_MAX || memchr(m->key, '\0', m->keylen))
			return 0; /* no host of ours has such a name */
		memcpy(key, m->key, m->keylen);
		key[m->keylen] = '\0';
		if (!(command && strcmp(key, "*") == 0) && !find_host(e, key))
			return 0;
	}
	if (m->len > (size_t)e->conf->max_message_bytes) {
		snprintf(reason, sizeof(reason),
			 "message of %zu bytes is over max_message_bytes %ld (not decoded)", m->len,
			 (long)e->conf->max_message_bytes);
		dead_letter(e, m, reason);
		return -1;
	}
	return 1; /* no key: the host in the message decides */
}

/* The message's Kafka key, when it has one, must name the host its payload names ("*" for a
 * cluster command). Returns 0 or -EINVAL with a reason. */
static int key_matches(const struct cpi2_message *m, const char *host, char *reason,
		       size_t reasonsz)
{
	const char *want = host ? host : "*";

	if (!m->key || m->keylen == 0)
		return 0;
	if (m->keylen == strlen(want) && memcmp(m->key, want, m->keylen) == 0)
		return 0;
	snprintf(reason, reasonsz,
		 "the Kafka key and the message name different hosts (message: %s)",
		 text_log(0, want));
	return -EINVAL;
}

/* Remember an id acted on (written to state_dir/seen-ids, so a restart remembers it too). It is
 * written after the action, off the incident-to-cap path: the state file, written before the
 * cap, names the incident, and a restart remembers the ids it names (remember_capped), so a
 * crash in between lets no replay act again on a cap it made. */
static void remember(struct enforcer *e, char kind, const char *id)
{
	char err[512];

	if (seen_add(&e->seen, kind, id, cpi2_clock_us(CLOCK_REALTIME), err, sizeof(err)) != 0)
		cpi2_log(CPI2_LOG_ERR, "enforcer",
			 "ids seen: %s (a replay after a restart may act again)", err);
}

/* At start, before the caps left by a previous run are resumed or released: remember the ids of
 * the incidents they came from (a crash may have come between a cap and remember()). Operator
 * commands are remembered before they act, so an id already seen as one is left alone. */
static void remember_capped(struct enforcer *e, struct host_enforcer *h)
{
	char err[512];

	if (caps_load(&h->caps, err, sizeof(err)) < 0)
		return; /* decide_recover reads it again and says why */
	for (int i = 0; i < h->caps.n; i++) {
		const char *id = h->caps.caps[i].incident_id;

		if (id[0] && !seen_has(&e->seen, 'i', id) && !seen_has(&e->seen, 'c', id))
			remember(e, 'i', id);
	}
}

/* Read enforce_file again if it changed, and say so. */
static void refresh_optin(struct enforcer *e)
{
	char err[512];
	int rc = optin_refresh(&e->optin, err, sizeof(err));

	if (rc < 0)
		cpi2_log(CPI2_LOG_WARN, "enforcer", "%s", text_log(0, err));
	else if (rc == 1)
		cpi2_log(err[0] ? CPI2_LOG_WARN : CPI2_LOG_INFO, "enforcer",
			 "enforce_file %s: %d cgroups may be capped by incidents%s%s",
			 e->optin.path, e->optin.n, err[0] ? "; " : "", text_log(0, err));
}

static void on_incident(struct enforcer *e, const struct cpi2_message *m)
{
	int64_t received_us = cpi2_clock_us(CLOCK_REALTIME);
	struct incident_in in;
	struct host_enforcer *h;
	struct action a;
	avro_value_t *rec;
	char err[512];

	if (precheck(e, m, false) <= 0)
		return;
	if (cpi2_codec_decode(e->incident_codec, m->payload, m->len, &rec, err, sizeof(err)) != 0 ||
	    messages_incident(rec, &in, err, sizeof(err)) != 0) {
		dead_letter(e, m, err);
		return;
	}
	h = find_host(e, in.host);
	if (!h)
		return; /* another host's incident */
	if (key_matches(m, in.host, err, sizeof(err)) != 0) {
		dead_letter(e, m, err);
		return;
	}
	if (!in.throttle)
		return; /* an incident that asks for no cap */
	if (decide_check_fresh(&e->incident_fresh, m->timestamp_ms, cpi2_clock_us(CLOCK_REALTIME),
			       "detected_at_us", in.detected_at_us, sim_now_us(e->conf), err,
			       sizeof(err)) != 0) {
		/* e.g. a replay of old incidents after a long outage: their caps would be late */
		refuse(e, h, CPI2_ACTION_CAUSE_INCIDENT, in.antagonist_task, in.antagonist_len,
		       in.incident_id, NULL, err);
		return;
	}
	if (seen_has(&e->seen, 'i', in.incident_id)) {
		refuse(e, h, CPI2_ACTION_CAUSE_INCIDENT, in.antagonist_task, in.antagonist_len,
		       in.incident_id, NULL,
		       "replayed incident: this incident_id was acted on already");
		return;
	}
	refresh_optin(e);
	if (decide_incident(h, &in, sim_now_us(e->conf), &a) == 1) {
		if ((a.kind == CPI2_ACTION_KIND_APPLIED || a.kind == CPI2_ACTION_KIND_RENEWED) &&
		    m->timestamp_ms > 0) {
			int64_t now = cpi2_clock_us(CLOCK_REALTIME);

			latency_add(&e->latency, (double)(now - m->timestamp_ms * 1000) / 1000.0);
			cpi2_histogram_observe(&e->to_cap,
					       (double)(now - m->timestamp_ms * 1000) / 1e6);
			latency_add(&e->inside, (double)(now - received_us) / 1000.0);
		}
		remember(e, 'i', in.incident_id);
		if (a.kind != CPI2_ACTION_KIND_REFUSED || sample(e, a.reason))
			publish(e, h, &a);
	}
}

static void set_cluster_switch(struct enforcer *e, bool off)
{
	char err[512];

	e->cluster_protection_off = off;
	/* remembered before any cap is lifted: a crash right after still knows the switch */
	if (statefile_save_switch(e->cluster_switch_path, off, err, sizeof(err)) != 0)
		cpi2_log(CPI2_LOG_ERR, "enforcer",
			 "cluster kill switch: %s (it is %s in memory, but a restart will "
			 "not remember it)",
			 err, off ? "OFF" : "ON");
}

static void on_command(struct enforcer *e, const struct cpi2_message *m)
{
	static struct action a[MAX_ACTIONS];
	struct host_enforcer *h = NULL;
	struct command_in in;
	avro_value_t *rec;
	char err[512];
	int n;

	if (precheck(e, m, true) <= 0)
		return;
	if (cpi2_codec_decode(e->command_codec, m->payload, m->len, &rec, err, sizeof(err)) != 0 ||
	    messages_command(rec, &in, err, sizeof(err)) != 0) {
		dead_letter(e, m, err);
		return;
	}
	if (in.host && !(h = find_host(e, in.host)))
		return; /* another host's command */
	if (key_matches(m, in.host, err, sizeof(err)) != 0 ||
	    decide_check_fresh(&e->command_fresh, m->timestamp_ms, cpi2_clock_us(CLOCK_REALTIME),
			       "issued_at_us", in.issued_at_us, cpi2_clock_us(CLOCK_REALTIME), err,
			       sizeof(err)) != 0) {
		if (h)
			refuse(e, h, CPI2_ACTION_CAUSE_OPERATOR, in.task, in.task_len, NULL,
			       in.command_id, err);
		else
			dead_letter(e, m, err);
		return;
	}
	if (seen_has(&e->seen, 'c', in.command_id)) {
		snprintf(err, sizeof(err),
			 "replayed command: this command_id was acted on already");
		if (h)
			refuse(e, h, CPI2_ACTION_CAUSE_OPERATOR, in.task, in.task_len, NULL,
			       in.command_id, err);
		else
			dead_letter(e, m, err);
		return;
	}
	remember(e, 'c', in.command_id);
	if (!h) {
		/* The whole cluster: the shared kill switch, or a cap/uncap on every host we serve.
		 */
		if (in.command == CPI2_COMMAND_KIND_PROTECTION_OFF ||
		    in.command == CPI2_COMMAND_KIND_PROTECTION_ON)
			set_cluster_switch(e, in.command == CPI2_COMMAND_KIND_PROTECTION_OFF);
		cpi2_log(CPI2_LOG_INFO, "enforcer", "cluster command %s",
			 text_log(0, in.command_id));
		for (int i = 0; i < e->n_hosts; i++) {
			n = decide_command(&e->hosts[i], &in, sim_now_us(e->conf), a, MAX_ACTIONS);
			publish_all(e, &e->hosts[i], a, n);
		}
		return;
	}
	n = decide_command(h, &in, sim_now_us(e->conf), a, MAX_ACTIONS);
	publish_all(e, h, a, n);
}

/* What the enforcer did, for /metrics (at most once a second), and that its loop goes on. */
static void publish_metrics(struct enforcer *e)
{
	struct cpi2_metrics *m = &e->text;
	int caps = 0, off = 0;

	if (!e->httpd)
		return;
	cpi2_httpd_alive(e->httpd);
	if (e->mono_us < e->next_metrics_us)
		return;
	e->next_metrics_us = e->mono_us + 1000000;
	for (int i = 0; i < e->n_hosts; i++) {
		caps += e->hosts[i].caps.n;
		off += e->hosts[i].protection_off;
	}
	cpi2_metrics_reset(m);
	cpi2_metrics_family(m, "cpi2_enforcer_actions_total", "counter",
			    "Actions published, by kind and cause");
	for (int k = 0; k < CPI2_ACTION_KIND_SYMBOLS_LEN; k++)
		for (int c = 0; c < CPI2_ACTION_CAUSE_SYMBOLS_LEN; c++)
			cpi2_metrics_value(
			    m, "cpi2_enforcer_actions_total",
			    (const char *const[]){"kind", cpi2_action_kind_symbols[k], "cause",
						  cpi2_action_cause_symbols[c], NULL},
			    (double)e->actions[k][c]);
	cpi2_metrics_family(m, "cpi2_enforcer_caps_in_force", "gauge",
			    "Caps in force on the hosts served");
	cpi2_metrics_value(m, "cpi2_enforcer_caps_in_force", NULL, caps);
	cpi2_metrics_family(m, "cpi2_enforcer_protection_off", "gauge",
			    "Kill switches off: the cluster's (0 or 1), and hosts served with "
			    "theirs off");
	cpi2_metrics_value(m, "cpi2_enforcer_protection_off",
			   (const char *const[]){"scope", "cluster", NULL},
			   e->cluster_protection_off);
	cpi2_metrics_value(m, "cpi2_enforcer_protection_off",
			   (const char *const[]){"scope", "host", NULL}, off);
	cpi2_metrics_family(m, "cpi2_enforcer_hosts", "gauge", "Hosts served");
	cpi2_metrics_value(m, "cpi2_enforcer_hosts", NULL, e->n_hosts);
	cpi2_metrics_family(m, "cpi2_enforcer_messages_total", "counter",
			    "Messages read from Kafka, by topic");
	cpi2_metrics_value(m, "cpi2_enforcer_messages_total",
			   (const char *const[]){"topic", "incidents", NULL},
			   (double)e->messages[0]);
	cpi2_metrics_value(m, "cpi2_enforcer_messages_total",
			   (const char *const[]){"topic", "commands", NULL},
			   (double)e->messages[1]);
	cpi2_metrics_family(m, "cpi2_enforcer_dead_letters_total", "counter",
			    "Messages refused as malformed, oversized or inconsistent");
	cpi2_metrics_value(m, "cpi2_enforcer_dead_letters_total", NULL, (double)e->dead_letters);
	cpi2_metrics_family(m, "cpi2_enforcer_reports_suppressed_total", "counter",
			    "Dead letters and refusals left out by dead_letters_per_min");
	cpi2_metrics_value(m, "cpi2_enforcer_reports_suppressed_total", NULL,
			   (double)e->suppressed);
	cpi2_metrics_histogram(
	    m, "cpi2_enforcer_incident_to_cap_seconds",
	    "From the incident's arrival in Kafka to the cgroup write of its cap", &e->to_cap);
	if (!m->failed)
		cpi2_httpd_publish(e->httpd, m->text, m->len);
}

static void expire(struct enforcer *e)
{
	struct action a;
	int64_t now = sim_now_us(e->conf);

	for (int i = 0; i < e->n_hosts; i++)
		while (decide_expiry(&e->hosts[i], now, &a) == 1)
			publish(e, &e->hosts[i], &a);
}

/* Every limit_check_s: the caps whose limit another writer changed (the kubelet's resize, ...)
 * are dropped, that limit left in force. */
static void check_limits(struct enforcer *e)
{
	static struct action a[MAX_ACTIONS];
	int n;

	for (int i = 0; i < e->n_hosts; i++) {
		n = decide_check_limits(&e->hosts[i], a, MAX_ACTIONS);
		publish_all(e, &e->hosts[i], a, n);
	}
}

/* The hosts this process serves (sim_hosts), each with the configuration's policy, limits and
 * state files. */
static int load_hosts(struct enforcer *e, char *err, size_t errsz)
{
	struct conf *c = e->conf;
	struct sim_host *found;
	int n;

	/* one host_enforcer (its cap records) per host served: allocated by need */
	n = sim_hosts(c, &found, err, errsz);
	if (n > 0 && !(e->hosts = calloc((size_t)n, sizeof(*e->hosts))))
		n = -ENOMEM;

	for (int i = 0; i < n; i++) {
		struct host_enforcer *h = &e->hosts[e->n_hosts];

		snprintf(h->host, sizeof(h->host), "%s", found[i].name);
		h->policy.root = found[i].root;
		conf_policy(c, &h->policy);
		h->caps.max_caps = c->max_caps;
		h->caps.dry_run = c->dry_run;
		h->caps.cap_weight = c->cap_weight;
		h->caps.cap_idle = c->cap_idle;
		h->caps.policy = &h->policy;
		h->min_cap_cpu = c->min_cap_cpu;
		h->max_cap_us_per_day = (int64_t)c->max_cap_s_per_task_day * 1000000;
		decide_bucket_init(&h->new_caps, c->cap_rate_per_s, c->cap_burst);
		decide_bucket_init(&h->renewals, c->renew_rate_per_s, c->renew_burst);
		h->rate_clock_us = &e->mono_us;
		if (!c->clock_file[0]) /* simulated time runs at its own speed */
			h->caps.mono_clock_us = &e->mono_us;
		snprintf(h->caps.boot_id, sizeof(h->caps.boot_id), "%s", e->boot_id);

		if (asprintf((char **)&h->caps.state_path, "%s/%s.caps", c->state_dir, h->host) <
		    0) {
			n = -ENOMEM;
			break;
		}
		snprintf(h->protection_path, sizeof(h->protection_path), "%s/%s.protection",
			 c->state_dir, h->host);
		h->version = c->cgroup_version;
		h->period_us = c->period_us;
		h->default_duration_s = c->default_duration_s;
		h->default_cap_cpu = c->default_cap_cpu;
		h->cluster_protection_off = &e->cluster_protection_off;
		h->optin = c->enforce_file[0] ? &e->optin : NULL;
		decide_load_protection(h);
		e->n_hosts++;
	}
	free(found);
	return n < 0 ? n : 0;
}

int main(int argc, char **argv)
{
	static struct enforcer e;
	static struct conf conf;
	static struct action a[MAX_ACTIONS];
	const char *consumer_props[CPI2_CONFIG_MAX_PROPS + 2];
	struct cpi2_message m;
	char err[1024], path[PATH_MAX + 32], kept[512];
	uint64_t keep;
	int64_t next_check = 0;
	int rc, n;

	rc = conf_parse(&conf, argc, argv, err, sizeof(err));
	if (rc == 0 && privs_parse(conf.keep_capabilities, &keep, err, sizeof(err)) != 0)
		rc = -EINVAL;
	if (rc == 1)
		return 0; /* --help */
	if (rc) {
		fprintf(stderr, "cpi2-enforcer: %s\n", err);
		return 2;
	}
	e.conf = &conf;
	e.started_us = cpi2_clock_us(CLOCK_REALTIME);
	e.mono_us = cpi2_clock_us(CLOCK_BOOTTIME);
	/* the boot the monotonic deadlines in the state files are of (another boot: none kept) */
	if (cpi2_read_text("/proc/sys/kernel/random/boot_id", e.boot_id, sizeof(e.boot_id)) > 0)
		e.boot_id[strcspn(e.boot_id, "\n")] = '\0';
	if (mkdir(conf.state_dir, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "cpi2-enforcer: create state_dir %s: %s\n", conf.state_dir,
			strerror(errno));
		return 1;
	}
	/* One enforcer per state folder: two would restore each other's caps wrongly. */
	if (statefile_lock(conf.state_dir, &e.lock_fd, err, sizeof(err)) != 0) {
		fprintf(stderr, "cpi2-enforcer: %s\n", err);
		return 1;
	}
	err[0] = '\0';
	if (load_hosts(&e, err, sizeof(err)) != 0 || e.n_hosts == 0) {
		fprintf(stderr, "cpi2-enforcer: %s\n",
			e.n_hosts == 0 && !err[0] ? "no host to serve" : err);
		return 1;
	}
	e.optin.path = conf.enforce_file;
	refresh_optin(&e);
	snprintf(e.cluster_switch_path, sizeof(e.cluster_switch_path), "%s/cluster.protection",
		 conf.state_dir);
	e.cluster_protection_off = statefile_load_switch(e.cluster_switch_path);
	e.incident_fresh =
	    (struct freshness){conf.stale_after_s, conf.max_detection_age_s, conf.clock_skew_s};
	e.command_fresh =
	    (struct freshness){conf.stale_after_s, conf.stale_after_s, conf.clock_skew_s};
	e.sampler.per_min = (int)conf.dead_letters_per_min;
	snprintf(path, sizeof(path), "%s/seen-ids", conf.state_dir);
	rc = seen_open(
	    &e.seen, path, (int)conf.seen_ids_max,
	    (int64_t)((conf.stale_after_s > conf.max_detection_age_s ? conf.stale_after_s
								     : conf.max_detection_age_s) +
		      conf.clock_skew_s) *
		1000000,
	    cpi2_clock_us(CLOCK_REALTIME), NULL, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "cpi2-enforcer: %s\n", err);
		return 1;
	}
	if (rc > 0)
		cpi2_log(CPI2_LOG_WARN, "enforcer", "ids seen: %s", err);

	/* Nothing below needs a capability: drop them before any thread (librdkafka's) starts, so
	 * every thread has the reduced sets. */
	rc = privs_drop(keep, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "cpi2-enforcer: dropping capabilities: %s\n", err);
		return 1;
	}
	/* the writer thread, once the capabilities are gone (a thread keeps its own) */
	rc = persist_start(&e.persist, e.n_hosts);
	if (rc) {
		fprintf(stderr, "cpi2-enforcer: start the writer thread: %s\n", strerror(-rc));
		return 1;
	}
	for (int i = 0; i < e.n_hosts; i++) {
		e.hosts[i].caps.persist = e.persist;
		e.hosts[i].caps.persist_slot = i;
	}
	e.seen.persist = e.persist;
	persist_set_log(e.persist, e.seen.fd);
	privs_names(keep, kept, sizeof(kept));
	cpi2_log(CPI2_LOG_INFO, "enforcer", "capabilities kept: %s; no_new_privs set%s%s", kept,
		 err[0] ? "; " : "", err);

	if (cpi2_codec_open(&e.incident_codec, "Incident", err, sizeof(err)) ||
	    cpi2_codec_open(&e.command_codec, "ControlCommand", err, sizeof(err)) ||
	    cpi2_codec_open(&e.action_codec, "EnforcementAction", err, sizeof(err))) {
		fprintf(stderr, "cpi2-enforcer: %s\n", err);
		return 1;
	}
	/* A new consumer group starts at the latest offset, not at 30 days of old commands (which
	 * the stale check would refuse anyway); -X auto.offset.reset=... overrides. */
	consumer_props[0] = "auto.offset.reset=latest";
	for (n = 0; conf.kafka_props[n] && n < CPI2_CONFIG_MAX_PROPS; n++)
		consumer_props[n + 1] = conf.kafka_props[n];
	consumer_props[n + 1] = NULL;
	const char *const topics[] = {conf.incidents_topic, conf.control_topic, NULL};
	if (cpi2_producer_new(&e.producer, conf.brokers, (const char *const *)conf.kafka_props, err,
			      sizeof(err)) ||
	    cpi2_consumer_new(&e.consumer, conf.brokers, conf.group_id, topics, consumer_props, err,
			      sizeof(err))) {
		fprintf(stderr, "cpi2-enforcer: kafka: %s\n", err);
		return 1;
	}
	cpi2_signal_install();
	e.to_cap = (struct cpi2_histogram){.bounds = to_cap_bounds,
					   .n_bounds = sizeof(to_cap_bounds) / sizeof(double)};
	if (conf.metrics_address[0] && cpi2_httpd_start(&e.httpd, conf.metrics_address, "enforcer",
							conf.health_timeout_s, err, sizeof(err))) {
		fprintf(stderr, "cpi2-enforcer: %s\n", err);
		return 1;
	}
	cpi2_log(CPI2_LOG_INFO, "enforcer",
		 "serving %d host%s (first %s, cgroup root %s)%s%s, brokers %s", e.n_hosts,
		 e.n_hosts == 1 ? "" : "s", text_log(0, e.hosts[0].host), e.hosts[0].policy.root,
		 conf.dry_run ? ", DRY RUN" : "",
		 e.cluster_protection_off ? ", cluster protection OFF" : "", conf.brokers);

	/* Caps left by a previous run (crash, kill -9): release or resume every one. */
	for (int i = 0; i < e.n_hosts; i++) {
		remember_capped(&e, &e.hosts[i]);
		n = decide_recover(&e.hosts[i], sim_now_us(e.conf), a, MAX_ACTIONS, err,
				   sizeof(err));
		if (n < 0) {
			cpi2_log(CPI2_LOG_ERR, "enforcer", "%s: state file: %s",
				 text_log(0, e.hosts[i].host), err);
			return 1;
		}
		if (err[0]) /* malformed lines, skipped: every other cap is still restored */
			cpi2_log(CPI2_LOG_ERR, "enforcer", "%s: state file: %s",
				 text_log(0, e.hosts[i].host), err);
		publish_all(&e, &e.hosts[i], a, n);
	}

	while (!cpi2_signal_stop) {
		cpi2_signal_hangups("enforcer",
				    "the configuration is read at start only (restart to "
				    "change it); caps in force are kept");
		rc = cpi2_consumer_poll(e.consumer, conf.poll_ms, &m);
		e.mono_us = cpi2_clock_us(CLOCK_BOOTTIME);
		if (rc == 1) {
			bool incident = strcmp(m.topic, conf.incidents_topic) == 0;

			e.messages[!incident]++;
			if (incident)
				on_incident(&e, &m);
			else
				on_command(&e, &m);
			cpi2_consumer_commit(e.consumer);
		} else if (rc < 0) {
			cpi2_log(CPI2_LOG_WARN, "enforcer", "kafka consumer: %s", strerror(-rc));
		}
		expire(&e);
		if (conf.limit_check_s > 0 && e.mono_us >= next_check) {
			check_limits(&e);
			next_check = e.mono_us + (int64_t)conf.limit_check_s * 1000000;
		}
		report_suppressed(&e);
		cpi2_producer_poll(e.producer);
		publish_metrics(&e);
	}

	cpi2_log(CPI2_LOG_INFO, "enforcer", "stopping: lifting every cap");
	for (int i = 0; i < e.n_hosts; i++) {
		n = decide_release_all(&e.hosts[i], CPI2_ACTION_CAUSE_SHUTDOWN, a, MAX_ACTIONS);
		publish_all(&e, &e.hosts[i], a, n);
		if (e.hosts[i].caps.n)
			cpi2_log(CPI2_LOG_ERR, "enforcer",
				 "%s: %d caps could not be lifted; the next start retries them",
				 text_log(0, e.hosts[i].host), e.hosts[i].caps.n);
	}
	latency_report(&e.latency, "incident-to-cap latency (Kafka arrival to cgroup write)");
	latency_report(&e.inside, "of which in the enforcer (message received to cgroup write)");
	cpi2_consumer_close(e.consumer);
	cpi2_producer_close(e.producer, 10000);
	cpi2_codec_close(e.incident_codec);
	cpi2_codec_close(e.command_codec);
	cpi2_codec_close(e.action_codec);
	seen_close(&e.seen);
	persist_stop(e.persist); /* every write asked for is on disk */
	cpi2_httpd_stop(e.httpd);
	cpi2_metrics_free(&e.text);
	optin_free(&e.optin);
	return 0;
}
