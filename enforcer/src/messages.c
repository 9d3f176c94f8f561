/* messages: see messages.h. */
#include "messages.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cpi2/names.h>
#include <cpi2/wire.h>

#include "text.h"

/* A string field with its length (Avro strings may hold NUL bytes: cgpath checks them). */
static int get_string_len(avro_value_t *rec, const char *field, const char **s, size_t *len)
{
	avro_value_t v, branch;
	size_t size = 0;

	*s = NULL;
	*len = 0;
	if (avro_value_get_by_name(rec, field, &v, NULL) != 0)
		return -ENOENT;
	if (avro_value_get_type(&v) == AVRO_UNION) {
		if (avro_value_get_current_branch(&v, &branch) != 0)
			return -EINVAL;
		if (avro_value_get_type(&branch) == AVRO_NULL)
			return 0;
		v = branch;
	}
	if (avro_value_get_string(&v, s, &size) != 0)
		return -EINVAL;
	*len = size > 0 ? size - 1 : 0; /* size counts the terminating NUL */
	return 0;
}

/* A string from the message that the enforcer matches or keeps (host, ids): no NUL inside
 * (a C string would end there: "host-1\0x" must not match "host-1"), no control character,
 * at most max bytes. Returns 0, or -EINVAL with a reason. */
static int check_text(const char *field, const char *s, size_t len, size_t max, bool required,
		      char *err, size_t errsz)
{
	if (!s) {
		if (!required)
			return 0;
		snprintf(err, errsz, "%s is missing", field);
		return -EINVAL;
	}
	if (required && len == 0) {
		snprintf(err, errsz, "%s is empty", field);
		return -EINVAL;
	}
	if (len > max) {
		snprintf(err, errsz, "%s is longer than %zu bytes", field, max);
		return -EINVAL;
	}
	if (memchr(s, '\0', len)) {
		snprintf(err, errsz, "%s contains a NUL byte", field);
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
			snprintf(err, errsz, "%s contains a control character", field);
			return -EINVAL;
		}
	return 0;
}

int messages_incident(avro_value_t *rec, struct incident_in *in, char *err, size_t errsz)
{
	const char *decision = NULL;
	size_t idlen, hostlen;
	bool is_null;
	int32_t dur;
	int64_t detected;

	memset(in, 0, sizeof(*in));
	if (get_string_len(rec, "incident_id", &in->incident_id, &idlen) ||
	    get_string_len(rec, "host", &in->host, &hostlen) ||
	    cpi2_value_get_enum(rec, "decision", &decision) ||
	    get_string_len(rec, "antagonist_task", &in->antagonist_task, &in->antagonist_len) ||
	    cpi2_value_get_string(rec, "victim_task", &in->victim_task, &is_null) ||
	    cpi2_value_get_string(rec, "victim_job", &in->victim_job, &is_null)) {
		snprintf(err, errsz, "Incident lacks a field the enforcer needs");
		return -EINVAL;
	}
	if (check_text("incident_id", in->incident_id, idlen, MESSAGES_ID_MAX, true, err, errsz) ||
	    check_text("host", in->host, hostlen, MESSAGES_HOST_MAX, true, err, errsz))
		return -EINVAL;
	in->throttle =
	    decision && strcmp(decision, cpi2_decision_symbols[CPI2_DECISION_THROTTLE]) == 0;
	if (cpi2_value_get_double(rec, "cap_cpu", &in->cap_cpu, &is_null) == 0)
		in->has_cap = !is_null;
	if (cpi2_value_get_int(rec, "cap_duration_s", &dur, &is_null) == 0 && !is_null) {
		in->has_duration = true;
		in->cap_duration_s = dur;
	}
	if (cpi2_value_get_long(rec, "detected_at_us", &detected, &is_null) == 0 && !is_null)
		in->detected_at_us = detected;
	return 0;
}

int messages_command(avro_value_t *rec, struct command_in *in, char *err, size_t errsz)
{
	const char *kind = NULL;
	int idx;
	size_t idlen, hostlen;
	bool is_null;
	int32_t dur;
	int64_t issued;

	memset(in, 0, sizeof(*in));
	if (get_string_len(rec, "command_id", &in->command_id, &idlen) ||
	    cpi2_value_get_enum(rec, "command", &kind) ||
	    get_string_len(rec, "host", &in->host, &hostlen) ||
	    get_string_len(rec, "task", &in->task, &in->task_len)) {
		snprintf(err, errsz, "ControlCommand lacks a field the enforcer needs");
		return -EINVAL;
	}
	if (check_text("command_id", in->command_id, idlen, MESSAGES_ID_MAX, true, err, errsz) ||
	    check_text("host", in->host, hostlen, MESSAGES_HOST_MAX, false, err, errsz))
		return -EINVAL;
	idx = cpi2_symbol_index(cpi2_command_kind_symbols, CPI2_COMMAND_KIND_SYMBOLS_LEN, kind);
	if (idx < 0) {
		snprintf(err, errsz, "unknown command %s", kind ? kind : "(none)");
		return -EINVAL;
	}
	in->command = (enum cpi2_command_kind)idx;
	if (cpi2_value_get_double(rec, "cap_cpu", &in->cap_cpu, &is_null) == 0)
		in->has_cap = !is_null;
	if (cpi2_value_get_int(rec, "duration_s", &dur, &is_null) == 0 && !is_null) {
		in->has_duration = true;
		in->duration_s = dur;
	}
	if (cpi2_value_get_long(rec, "issued_at_us", &issued, &is_null) == 0 && !is_null)
		in->issued_at_us = issued;
	return 0;
}

static void opt_string(avro_value_t *rec, const char *field, const char *s)
{
	if (s)
		cpi2_value_set_opt_string(rec, field, s);
	else
		cpi2_value_set_null(rec, field);
}

int messages_action(avro_value_t *rec, const struct action *a, const char *host,
		    const char *action_id, int64_t at_us)
{
	char reason[sizeof(a->reason)];
	int rc = 0;

	avro_value_reset(rec);
	rc |= cpi2_value_set_string(rec, "action_id", action_id);
	rc |= cpi2_value_set_string(rec, "host", host);
	rc |= cpi2_value_set_long(rec, "at_us", at_us);
	rc |= cpi2_value_set_enum(rec, "kind", cpi2_action_kind_symbols[a->kind]);
	rc |= cpi2_value_set_enum(rec, "cause", cpi2_action_cause_symbols[a->cause]);
	rc |= cpi2_value_set_string(rec, "task", a->task);
	opt_string(rec, "incident_id", a->incident_id);
	opt_string(rec, "command_id", a->command_id);
	opt_string(rec, "victim_task", a->victim_task);
	opt_string(rec, "victim_job", a->victim_job);
	if (a->has_cap) {
		rc |= cpi2_value_set_opt_double(rec, "cap_cpu", a->cap_cpu);
		rc |= cpi2_value_set_opt_long(rec, "period_us", a->period_us);
	} else {
		rc |= cpi2_value_set_null(rec, "cap_cpu");
		rc |= cpi2_value_set_null(rec, "period_us");
	}
	if (a->expires_at_us)
		rc |= cpi2_value_set_opt_long(rec, "expires_at_us", a->expires_at_us);
	else
		rc |= cpi2_value_set_null(rec, "expires_at_us");
	opt_string(rec, "previous_limit", a->previous_limit[0] ? a->previous_limit : NULL);
	/* a reason cut by its buffer inside a character: up to that character */
	text_printable(reason, sizeof(reason), a->reason, strlen(a->reason));
	rc |= cpi2_value_set_string(rec, "reason", reason);
	return rc ? -EINVAL : 0;
}
