/* config: see cpi2/config.h. */
#include <cpi2/config.h>
#include <cpi2/kafka.h>

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

const char cpi2_version[] = CPI2_VERSION;

static const struct cpi2_config_key *find(const struct cpi2_config_key *keys, const char *name,
					  size_t len)
{
	for (; keys->name; keys++) {
		if (strlen(keys->name) != len)
			continue;
		size_t i;

		for (i = 0; i < len; i++) {
			char a = keys->name[i], b = name[i] == '-' ? '_' : name[i];

			if (a != b)
				break;
		}
		if (i == len)
			return keys;
	}
	return NULL;
}

static int set_key(const struct cpi2_config_key *k, void *conf, const char *value, char *err,
		   size_t errsz)
{
	char *field = (char *)conf + k->offset, *end;

	switch (k->type) {
	case CPI2_CFG_STR:
		if (strlen(value) >= k->size) {
			snprintf(err, errsz, "%s: value longer than %zu characters", k->name,
				 k->size - 1);
			return -EINVAL;
		}
		strcpy(field, value);
		return 0;
	case CPI2_CFG_INT: {
		long v;

		errno = 0;
		v = strtol(value, &end, 10);
		if (errno || end == value || *end) {
			snprintf(err, errsz, "%s: '%s' is not an integer", k->name, value);
			return -EINVAL;
		}
		*(long *)field = v;
		return 0;
	}
	case CPI2_CFG_DOUBLE: {
		double v;

		errno = 0;
		v = strtod(value, &end);
		if (errno || end == value || *end) {
			snprintf(err, errsz, "%s: '%s' is not a number", k->name, value);
			return -EINVAL;
		}
		*(double *)field = v;
		return 0;
	}
	case CPI2_CFG_BOOL:
		if (!strcmp(value, "true") || !strcmp(value, "1") || !strcmp(value, "yes")) {
			*(bool *)field = true;
		} else if (!strcmp(value, "false") || !strcmp(value, "0") || !strcmp(value, "no")) {
			*(bool *)field = false;
		} else {
			snprintf(err, errsz, "%s: '%s' is not true or false", k->name, value);
			return -EINVAL;
		}
		return 0;
	}
	return -EINVAL;
}

int cpi2_config_set(const struct cpi2_config_key *keys, void *conf, const char *key,
		    const char *value, char *err, size_t errsz)
{
	const struct cpi2_config_key *k = find(keys, key, strlen(key));

	if (!k) {
		snprintf(err, errsz, "unknown option '%s' (see --help)", key);
		return -ENOENT;
	}
	return set_key(k, conf, value, err, errsz);
}

int cpi2_config_defaults(const struct cpi2_config_key *keys, void *conf, char *err, size_t errsz)
{
	for (; keys->name; keys++)
		if (set_key(keys, conf, keys->default_value, err, errsz))
			return -EINVAL;
	return 0;
}

char *cpi2_config_trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* The key every program has, handled here: the Kafka client file (cpi2/kafka.h). */
#define CLIENT_FILE_KEY "kafka_client_file"

/* cpi2_config_load, and kafka_client_file into client_file (PATH_MAX) when it is not NULL. */
static int load(const struct cpi2_config_key *keys, void *conf, const char *path, char *client_file,
		char *err, size_t errsz)
{
	char line[4096], msg[512];
	FILE *f = fopen(path, "re");
	int lineno = 0, rc = 0;

	if (!f) {
		rc = -errno;
		snprintf(err, errsz, "config file %s: %s", path, strerror(errno));
		return rc;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s = cpi2_config_trim(line), *eq, *key, *value;

		lineno++;
		if (*s == '#' || *s == '\0')
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			snprintf(err, errsz, "%s:%d: expected 'key = value', got '%s'", path,
				 lineno, s);
			rc = -EINVAL;
			break;
		}
		*eq = '\0';
		key = cpi2_config_trim(s);
		value = cpi2_config_trim(eq + 1);
		if (client_file && !strcmp(key, CLIENT_FILE_KEY)) {
			if (strlen(value) >= PATH_MAX) {
				snprintf(err, errsz, "%s:%d: %s: path too long", path, lineno,
					 CLIENT_FILE_KEY);
				rc = -EINVAL;
				break;
			}
			strcpy(client_file, value);
			continue;
		}
		if (cpi2_config_set(keys, conf, key, value, msg, sizeof(msg))) {
			snprintf(err, errsz, "%s:%d: %s", path, lineno, msg);
			rc = -EINVAL;
			break;
		}
	}
	fclose(f);
	return rc;
}

int cpi2_config_load(const struct cpi2_config_key *keys, void *conf, const char *path, char *err,
		     size_t errsz)
{
	return load(keys, conf, path, NULL, err, errsz);
}

void cpi2_config_help(const struct cpi2_config_key *keys, const char *usage, FILE *out)
{
	static const char *const types[] = {"TEXT", "N", "X", ""};
	bool shorts = false;

	fprintf(out,
		"%s\n\nOptions (also as 'key = value' lines in --config FILE; underscores or "
		"dashes):\n",
		usage);
	fprintf(out, "  %-32s %s\n", "--config FILE", "read options from FILE first");
	fprintf(out, "  %-32s %s\n", "--set key=value", "set an option as in the file");
	fprintf(out, "  %-32s %s\n", "-X key=value",
		"librdkafka property, passed through unchanged (no secrets: they go in the client "
		"file)");
	fprintf(out, "  %-32s %s\n", "--kafka-client-file PATH",
		"librdkafka properties of the Kafka principal (SASL, TLS, password), under the -X "
		"ones; mode 0600 "
		"(key " CLIENT_FILE_KEY " in --config FILE; default: none)");
	fprintf(out, "  %-32s %s\n", "--help", "this text");
	fprintf(out, "  %-32s %s\n", "--version", "the program's name and version");
	for (const struct cpi2_config_key *k = keys; k->name; k++)
		shorts |= k->short_name != 0;
	for (; keys->name; keys++) {
		char opt[96], *c;

		/* "-s, --scenario TEXT"; long-only keys line up when the program has short ones */
		if (keys->short_name)
			snprintf(opt, sizeof(opt), "-%c, --%s %s", keys->short_name, keys->name,
				 types[keys->type]);
		else
			snprintf(opt, sizeof(opt), "%s--%s %s", shorts ? "    " : "", keys->name,
				 types[keys->type]);
		for (c = strstr(opt, "--") + 2; *c && *c != ' '; c++)
			if (*c == '_')
				*c = '-';
		fprintf(out, "  %-32s %s (default: %s)\n", opt, keys->help,
			keys->default_value[0] ? keys->default_value : "none");
	}
}

int cpi2_config_parse_args(const struct cpi2_config_key *keys, void *conf, int argc, char **argv,
			   const char *usage, const char **props, char *err, size_t errsz)
{
	static const char client_opt[] = "--kafka-client-file";
	char client_file[PATH_MAX] = "";
	int nprops = 0, rc;

	if (cpi2_config_defaults(keys, conf, err, errsz))
		return -EINVAL;
	/* First --help, the config files and the client file (the command line's wins), so that
	 * the client file's properties come before the -X ones, which override them. */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			cpi2_config_help(keys, usage, stdout);
			return 1;
		}
		if (!strcmp(argv[i], "--version")) {
			const char *slash = strrchr(argv[0], '/');

			printf("%s %s\n", slash ? slash + 1 : argv[0], cpi2_version);
			return 1;
		}
		if (!strcmp(argv[i], "--config")) {
			if (i + 1 >= argc) {
				snprintf(err, errsz, "--config needs a file");
				return -EINVAL;
			}
			rc = load(keys, conf, argv[i + 1], client_file, err, errsz);
			if (rc)
				return -EINVAL;
		}
	}
	for (int i = 1; i < argc; i++) {
		const char *v = NULL;

		if (!strcmp(argv[i], client_opt)) {
			if (i + 1 >= argc) {
				snprintf(err, errsz, "%s needs a file", client_opt);
				return -EINVAL;
			}
			v = argv[++i];
		} else if (!strncmp(argv[i], client_opt, sizeof(client_opt) - 1) &&
			   argv[i][sizeof(client_opt) - 1] == '=') {
			v = argv[i] + sizeof(client_opt);
		} else if (!strcmp(argv[i], "--config") || !strcmp(argv[i], "-X") ||
			   !strcmp(argv[i], "--set")) {
			i++;
		}
		if (v && strlen(v) >= sizeof(client_file)) {
			snprintf(err, errsz, "%s: path too long", client_opt);
			return -EINVAL;
		}
		if (v)
			strcpy(client_file, v);
	}
	if (client_file[0] && cpi2_kafka_client_file(client_file, props, CPI2_CONFIG_MAX_PROPS - 1,
						     &nprops, err, errsz))
		return -EINVAL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *name, *eq, *value;
		const struct cpi2_config_key *k;

		if (!strcmp(a, "--config") || !strcmp(a, client_opt)) {
			i++;
			continue;
		}
		if (!strncmp(a, client_opt, sizeof(client_opt) - 1) &&
		    a[sizeof(client_opt) - 1] == '=')
			continue;
		if (!strcmp(a, "-X")) {
			if (i + 1 >= argc || !strchr(argv[i + 1], '=')) {
				snprintf(err, errsz, "-X needs key=value");
				return -EINVAL;
			}
			if (cpi2_kafka_prop_is_secret(argv[i + 1])) {
				snprintf(err, errsz,
					 "-X %.*s=...: a secret is not taken on the command line, "
					 "where every local user "
					 "reads it (ps, /proc): put it in the --kafka-client-file "
					 "(mode 0600)",
					 (int)strcspn(argv[i + 1], "="), argv[i + 1]);
				return -EINVAL;
			}
			if (cpi2_kafka_prop_loads_code(argv[i + 1])) {
				snprintf(err, errsz,
					 "-X %.*s: loads code or runs a command in this process: "
					 "refused",
					 (int)strcspn(argv[i + 1], "="), argv[i + 1]);
				return -EINVAL;
			}
			if (nprops == CPI2_CONFIG_MAX_PROPS - 1) {
				snprintf(
				    err, errsz,
				    "too many -X properties (with the client file's: at most %d)",
				    CPI2_CONFIG_MAX_PROPS - 1);
				return -EINVAL;
			}
			props[nprops++] = argv[++i];
			continue;
		}
		if (!strcmp(a,
			    "--set")) { /* --set key=value: the file's syntax on the command line */
			const char *kv = i + 1 < argc ? argv[++i] : "";
			char key[128];

			eq = strchr(kv, '=');
			if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof(key)) {
				snprintf(err, errsz, "--set needs key=value, got '%s'", kv);
				return -EINVAL;
			}
			memcpy(key, kv, (size_t)(eq - kv));
			key[eq - kv] = '\0';
			if (cpi2_config_set(keys, conf, key, eq + 1, err, errsz))
				return -EINVAL;
			continue;
		}
		if (a[0] == '-' && a[1] && a[1] != '-' && !a[2]) { /* -k value */
			for (k = keys; k->name && k->short_name != a[1]; k++)
				;
			if (!k->name) {
				snprintf(err, errsz, "unknown option '%s' (see --help)", a);
				return -EINVAL;
			}
			if (k->type != CPI2_CFG_BOOL && i + 1 >= argc) {
				snprintf(err, errsz, "option '%s' needs a value", a);
				return -EINVAL;
			}
			if (set_key(k, conf, k->type == CPI2_CFG_BOOL ? "true" : argv[++i], err,
				    errsz))
				return -EINVAL;
			continue;
		}
		if (strncmp(a, "--", 2) != 0) {
			snprintf(err, errsz, "unexpected argument '%s' (see --help)", a);
			return -EINVAL;
		}
		name = a + 2;
		eq = strchr(name, '=');
		k = find(keys, name, eq ? (size_t)(eq - name) : strlen(name));
		if (!k && !eq && strncmp(name, "no-", 3) == 0) {
			/* --no-flag: a boolean set to false */
			k = find(keys, name + 3, strlen(name + 3));
			if (k && k->type == CPI2_CFG_BOOL) {
				if (set_key(k, conf, "false", err, errsz))
					return -EINVAL;
				continue;
			}
			k = NULL;
		}
		if (!k) {
			snprintf(err, errsz, "unknown option '%s' (see --help)", a);
			return -EINVAL;
		}
		if (eq) {
			value = eq + 1;
		} else if (k->type == CPI2_CFG_BOOL) {
			value = "true";
		} else if (i + 1 < argc) {
			value = argv[++i];
		} else {
			snprintf(err, errsz, "option '%s' needs a value", a);
			return -EINVAL;
		}
		if (set_key(k, conf, value, err, errsz))
			return -EINVAL;
	}
	props[nprops] = NULL;
	return 0;
}
