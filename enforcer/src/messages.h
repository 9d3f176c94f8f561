/* messages: Avro records in and out of the enforcer (Incident, ControlCommand in;
 * EnforcementAction out), through libcpi2's codec. */
#ifndef CPI2_ENFORCER_MESSAGES_H
#define CPI2_ENFORCER_MESSAGES_H

#include <avro.h>
#include <stddef.h>

#include "decide.h"

#define MESSAGES_ID_MAX 127   /* longest incident_id / command_id accepted */
#define MESSAGES_HOST_MAX 255 /* longest host name accepted */

/* Fill in from a decoded Incident. Strings point into the decoded value. The id and the host
 * must be non-empty, bounded, without NUL or control characters. Returns 0 or -EINVAL with a
 * reason. */
int messages_incident(avro_value_t *rec, struct incident_in *in, char *err, size_t errsz);

/* Fill in from a decoded ControlCommand (id and host checked as for an Incident; no host =
 * the whole cluster). Returns 0 or -EINVAL with a reason. */
int messages_command(avro_value_t *rec, struct command_in *in, char *err, size_t errsz);

/* Fill the EnforcementAction value rec (of the codec's current schema) from a. */
int messages_action(avro_value_t *rec, const struct action *a, const char *host,
		    const char *action_id, int64_t at_us);

#endif
