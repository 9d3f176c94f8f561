/* names: the generated C names agree with the schemas they come from: every enum's symbols and
 * every message's fields with the current schema in the schema table (a second generator
 * output), every topic macro with its line of schemas/topics.conf; cpi2_symbol_index. */
#include <cpi2/names.h>
#include <cpi2/wire.h>

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

/* The symbols of the enum called name anywhere in type, or NULL. */
static json_t *find_enum(json_t *type, const char *name)
{
	json_t *x, *r;
	size_t i;

	if (json_is_array(type)) {
		json_array_foreach(type, i, x) if ((r = find_enum(x, name))) return r;
		return NULL;
	}
	if (!json_is_object(type))
		return NULL;
	const char *t = json_string_value(json_object_get(type, "type"));
	if (t && !strcmp(t, "enum") &&
	    !strcmp(json_string_value(json_object_get(type, "name")), name))
		return json_object_get(type, "symbols");
	if ((x = json_object_get(type, "fields")))
		json_array_foreach(
		    x, i, r) if ((r = find_enum(json_object_get(r, "type"), name))) return r;
	if ((x = json_object_get(type, "items")) || (x = json_object_get(type, "values")))
		return find_enum(x, name);
	return NULL;
}

static json_t *current(const char *message)
{
	json_error_t e;
	json_t *s = json_loads(cpi2_schema_current(message)->json, 0, &e);

	CHECK(s != NULL, "%s: %s", message, e.text);
	return s;
}

static void check_enum(const char *message, const char *name, const char *const *symbols, size_t n)
{
	json_t *schema = current(message), *want = find_enum(schema, name);

	CHECK(want != NULL, "%s has no enum %s", message, name);
	CHECK(json_array_size(want) == n, "%s: %zu symbols, generated %zu", name,
	      json_array_size(want), n);
	for (size_t i = 0; i < n; i++)
		CHECK(!strcmp(json_string_value(json_array_get(want, i)), symbols[i]), "%s[%zu]",
		      name, i);
	json_decref(schema);
}

static void check_fields(const char *message, const char *const *fields, size_t n)
{
	json_t *schema = current(message), *want = json_object_get(schema, "fields");

	CHECK(json_array_size(want) == n, "%s: %zu fields, generated %zu", message,
	      json_array_size(want), n);
	for (size_t i = 0; i < n; i++)
		CHECK(!strcmp(json_string_value(json_object_get(json_array_get(want, i), "name")),
			      fields[i]),
		      "%s field %zu", message, i);
	CHECK(fields[n] == NULL);
	json_decref(schema);
}

/* The topic's line of topics.conf names record (or "-") in its seventh column. */
static void check_topic(const char *topic, const char *record)
{
	FILE *f = fopen(CPI2_SOURCE_DIR "/schemas/topics.conf", "r");
	char line[512], name[256], col[6][64];
	int found = 0;

	CHECK(f != NULL);
	while (fgets(line, sizeof(line), f))
		if (line[0] != '#' &&
		    sscanf(line, "%255s %63s %63s %63s %63s %63s %63s", name, col[0], col[1],
			   col[2], col[3], col[4], col[5]) == 7 &&
		    !strcmp(name, topic)) {
			found++;
			CHECK(!strcmp(col[5], record), "%s holds %s, not %s", topic, col[5],
			      record);
		}
	fclose(f);
	CHECK(found == 1, "%s is listed %d times in topics.conf", topic, found);
}

int main(void)
{
	check_enum("CpiSample", "TaskClass", cpi2_task_class_symbols, CPI2_TASK_CLASS_SYMBOLS_LEN);
	check_enum("CpiSample", "CounterSource", cpi2_counter_source_symbols,
		   CPI2_COUNTER_SOURCE_SYMBOLS_LEN);
	check_enum("Incident", "Decision", cpi2_decision_symbols, CPI2_DECISION_SYMBOLS_LEN);
	check_enum("EnforcementAction", "ActionKind", cpi2_action_kind_symbols,
		   CPI2_ACTION_KIND_SYMBOLS_LEN);
	check_enum("EnforcementAction", "ActionCause", cpi2_action_cause_symbols,
		   CPI2_ACTION_CAUSE_SYMBOLS_LEN);
	check_enum("ControlCommand", "CommandKind", cpi2_command_kind_symbols,
		   CPI2_COMMAND_KIND_SYMBOLS_LEN);
	check_enum("CapOutcome", "Verdict", cpi2_verdict_symbols, CPI2_VERDICT_SYMBOLS_LEN);
	CHECK(CPI2_TASK_CLASS_BEST_EFFORT == 2 && CPI2_COMMAND_KIND_PROTECTION_ON == 3);

	check_fields("CpiSample", cpi2_cpi_sample_fields, CPI2_CPI_SAMPLE_FIELDS_LEN);
	check_fields("CpiSpec", cpi2_cpi_spec_fields, CPI2_CPI_SPEC_FIELDS_LEN);
	check_fields("Incident", cpi2_incident_fields, CPI2_INCIDENT_FIELDS_LEN);
	check_fields("EnforcementAction", cpi2_enforcement_action_fields,
		     CPI2_ENFORCEMENT_ACTION_FIELDS_LEN);
	check_fields("ControlCommand", cpi2_control_command_fields,
		     CPI2_CONTROL_COMMAND_FIELDS_LEN);
	check_fields("CapOutcome", cpi2_cap_outcome_fields, CPI2_CAP_OUTCOME_FIELDS_LEN);
	check_fields("DeadLetter", cpi2_dead_letter_fields, CPI2_DEAD_LETTER_FIELDS_LEN);

	check_topic(CPI2_TOPIC_SAMPLES, "CpiSample");
	check_topic(CPI2_TOPIC_HOST_METRICS, "-");
	check_topic(CPI2_TOPIC_SPECS, "CpiSpec");
	check_topic(CPI2_TOPIC_INCIDENTS, "Incident");
	check_topic(CPI2_TOPIC_ACTIONS, "EnforcementAction");
	check_topic(CPI2_TOPIC_CONTROL, "ControlCommand");
	check_topic(CPI2_TOPIC_OUTCOMES, "CapOutcome");
	check_topic(CPI2_TOPIC_DEAD_LETTER, "DeadLetter");

	CHECK(cpi2_symbol_index(cpi2_command_kind_symbols, CPI2_COMMAND_KIND_SYMBOLS_LEN, "CAP") ==
	      CPI2_COMMAND_KIND_CAP);
	CHECK(cpi2_symbol_index(cpi2_command_kind_symbols, CPI2_COMMAND_KIND_SYMBOLS_LEN,
				"PROTECTION_ON") == CPI2_COMMAND_KIND_PROTECTION_ON);
	CHECK(cpi2_symbol_index(cpi2_command_kind_symbols, CPI2_COMMAND_KIND_SYMBOLS_LEN, "cap") ==
	      -ENOENT);
	CHECK(cpi2_symbol_index(cpi2_command_kind_symbols, CPI2_COMMAND_KIND_SYMBOLS_LEN, "") ==
	      -ENOENT);
	CHECK(cpi2_symbol_index(cpi2_command_kind_symbols, CPI2_COMMAND_KIND_SYMBOLS_LEN, NULL) ==
	      -ENOENT);
	printf("names: ok\n");
	return 0;
}
