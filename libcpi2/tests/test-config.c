/* config: defaults, file, command line, -X pass-through, and errors that say what is wrong. */
#include <cpi2/config.h>
#include <cpi2/kafka.h>

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

struct conf {
	char brokers[64];
	long max_caps;
	double cap;
	bool dry_run;
};

static const struct cpi2_config_key keys[] = {
    {"brokers", CPI2_CFG_STR, offsetof(struct conf, brokers), sizeof(((struct conf *)0)->brokers),
     "127.0.0.1:9092", "Kafka", 'b'},
    {"max_caps", CPI2_CFG_INT, offsetof(struct conf, max_caps), 0, "4", "caps at once", 0},
    {"cap_cpu", CPI2_CFG_DOUBLE, offsetof(struct conf, cap), 0, "0.1", "cap", 0},
    {"dry_run", CPI2_CFG_BOOL, offsetof(struct conf, dry_run), 0, "false", "write nothing", 'n'},
    {NULL, 0, 0, 0, NULL, NULL, 0}};

static const char *file(const char *text)
{
	static char path[] = "/tmp/cpi2-config-test-XXXXXX";
	int fd;

	strcpy(path, "/tmp/cpi2-config-test-XXXXXX");
	fd = mkstemp(path);
	CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	return path;
}

/* props[0..] are exactly want[] (NULL-terminated). */
static int props_are(const char **props, const char *const *want)
{
	int i;

	for (i = 0; want[i]; i++)
		if (!props[i] || strcmp(props[i], want[i]))
			return 0;
	return props[i] == NULL;
}

/* --kafka-client-file PATH / kafka_client_file in --config: its properties come before the -X
 * ones; a file others may read is refused; secrets are refused with -X, taken from the file. */
static void client_file_tests(void)
{
	struct conf c;
	const char *props[CPI2_CONFIG_MAX_PROPS];
	char err[512], path[64], cfg[64];
	const char *const want[] = {"security.protocol=SASL_SSL", "sasl.username=collector",
				    "sasl.password=s3cret", "linger.ms=7", NULL};

	strcpy(
	    path,
	    file(
		"# client of collector\nsecurity.protocol=SASL_SSL\n\n  sasl.username=collector\r\n"
		"sasl.password=s3cret\n"));
	char *a1[] = {"p",  "-X",	  "linger.ms=7", "--kafka-client-file",
		      path, "--max-caps", "3",		 NULL};
	CHECK(cpi2_config_parse_args(keys, &c, 7, a1, "usage", props, err, sizeof(err)) == 0);
	CHECK(props_are(props, want) && c.max_caps == 3);
	char opt[96];
	snprintf(opt, sizeof(opt), "--kafka-client-file=%s", path);
	char *a2[] = {"p", opt, "-X", "linger.ms=7", NULL};
	CHECK(cpi2_config_parse_args(keys, &c, 4, a2, "usage", props, err, sizeof(err)) == 0 &&
	      props_are(props, want));
	char text[128];
	snprintf(text, sizeof(text), "max_caps = 5\nkafka_client_file = %s\n", path);
	strcpy(cfg, file(text));
	char *a3[] = {"p", "--config", cfg, "-X", "linger.ms=7", NULL};
	CHECK(cpi2_config_parse_args(keys, &c, 5, a3, "usage", props, err, sizeof(err)) == 0 &&
	      props_are(props, want));
	CHECK(c.max_caps == 5);
	/* readable by others: refused, whatever else is right */
	CHECK(chmod(path, 0640) == 0);
	CHECK(cpi2_config_parse_args(keys, &c, 7, a1, "usage", props, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, path) && strstr(err, "0640") && strstr(err, "chmod 600"));
	CHECK(chmod(path, 0604) == 0);
	CHECK(cpi2_config_parse_args(keys, &c, 4, a2, "usage", props, err, sizeof(err)) ==
		  -EINVAL &&
	      strstr(err, "0604"));
	unlink(path);
	CHECK(cpi2_config_parse_args(keys, &c, 7, a1, "usage", props, err, sizeof(err)) ==
		  -EINVAL &&
	      strstr(err, path));
	/* a line that is not key=value names its line */
	strcpy(path, file("security.protocol=SASL_SSL\nsasl.password\n"));
	char *a4[] = {"p", "--kafka-client-file", path, NULL};
	CHECK(cpi2_config_parse_args(keys, &c, 3, a4, "usage", props, err, sizeof(err)) ==
		  -EINVAL &&
	      strstr(err, ":2:"));
	unlink(path);
	char *a5[] = {"p", "--kafka-client-file", NULL};
	CHECK(cpi2_config_parse_args(keys, &c, 2, a5, "usage", props, err, sizeof(err)) ==
		  -EINVAL &&
	      strstr(err, "needs a file"));
	/* secrets on the command line: refused, pointing at the client file */
	static const char *const secret[] = {
	    "sasl.password=x",	       "ssl.key.password=x", "sasl.oauthbearer.client.secret=x",
	    "ssl.keystore.password=x", "ssl.key.pem=x",	     NULL};
	for (int i = 0; secret[i]; i++) {
		char *a[] = {"p", "-X", (char *)secret[i], NULL};

		CHECK(cpi2_kafka_prop_is_secret(secret[i]));
		CHECK(cpi2_config_parse_args(keys, &c, 3, a, "usage", props, err, sizeof(err)) ==
		      -EINVAL);
		CHECK(strstr(err, "--kafka-client-file") && !strstr(err, "=x"));
	}
	CHECK(!cpi2_kafka_prop_is_secret("sasl.username=u") &&
	      !cpi2_kafka_prop_is_secret("ssl.ca.location"));
	/* properties that load code into the (uid 0) agent or run a command: refused in the file
	 * and with -X */
	static const char *const code[] = {"plugin.library.paths=/tmp/evil.so",
					   "ssl.engine.location=/tmp/evil.so", "ssl.providers=x",
					   "sasl.kerberos.kinit.cmd=sh -c id", NULL};
	for (int i = 0; code[i]; i++) {
		char *a[] = {"p", "-X", (char *)code[i], NULL}, line[128];

		CHECK(cpi2_config_parse_args(keys, &c, 3, a, "usage", props, err, sizeof(err)) ==
			  -EINVAL &&
		      strstr(err, "loads code"));
		snprintf(line, sizeof(line), "security.protocol=SASL_SSL\n%s\n", code[i]);
		strcpy(path, file(line));
		char *b[] = {"p", "--kafka-client-file", path, NULL};
		CHECK(cpi2_config_parse_args(keys, &c, 3, b, "usage", props, err, sizeof(err)) ==
			  -EINVAL &&
		      strstr(err, ":2:") && strstr(err, "loads code"));
		unlink(path);
	}
	/* a file another user owns (it decides what the agent signs in as and loads): refused */
	if (geteuid() == 0) {
		strcpy(path, file("security.protocol=SASL_SSL\n"));
		CHECK(chown(path, 65534, 65534) == 0);
		char *d[] = {"p", "--kafka-client-file", path, NULL};
		CHECK(cpi2_config_parse_args(keys, &c, 3, d, "usage", props, err, sizeof(err)) ==
			  -EINVAL &&
		      strstr(err, "owned by uid 65534"));
		unlink(path);
	} else {
		printf("test-config: the owner row needs root (to give a file to another uid)\n");
	}
	unlink(cfg);
}

int main(void)
{
	struct conf c;
	const char *props[CPI2_CONFIG_MAX_PROPS];
	char err[512];

	char *a1[] = {"p", NULL};
	CHECK(cpi2_config_parse_args(keys, &c, 1, a1, "usage", props, err, sizeof(err)) == 0);
	CHECK(!strcmp(c.brokers, "127.0.0.1:9092") && c.max_caps == 4 && c.cap == 0.1 &&
	      !c.dry_run && !props[0]);

	const char *f = file("# comment\nbrokers = k:1\n  max_caps=7\n");
	char *a2[] = {"p",	   "--config", (char *)f,     "--max-caps",	"9",
		      "--dry-run", "-X",       "linger.ms=1", "--cap_cpu=0.01", NULL};
	CHECK(cpi2_config_parse_args(keys, &c, 9, a2, "usage", props, err, sizeof(err)) == 0);
	CHECK(!strcmp(c.brokers, "k:1") && c.max_caps == 9 && c.dry_run && c.cap == 0.01);
	CHECK(props[0] && !strcmp(props[0], "linger.ms=1") && !props[1]);
	unlink(f);

	struct {
		const char *text;
		const char *want;
	} bad_files[] = {
	    {"brokers k:1\n", ":1: expected 'key = value'"},
	    {"\n\nnope = 1\n", ":3: unknown option 'nope'"},
	    {"max_caps = many\n", ":1: max_caps: 'many' is not an integer"},
	    {"cap_cpu = 0.1x\n", "is not a number"},
	    {"dry_run = maybe\n", "is not true or false"},
	    {"brokers = 0123456789012345678901234567890123456789012345678901234567890123456789\n",
	     "longer than"},
	};
	for (size_t i = 0; i < sizeof(bad_files) / sizeof(bad_files[0]); i++) {
		f = file(bad_files[i].text);
		CHECK(cpi2_config_load(keys, &c, f, err, sizeof(err)) == -EINVAL);
		if (!strstr(err, bad_files[i].want))
			fprintf(stderr, "got '%s', want '%s'\n", err, bad_files[i].want);
		CHECK(strstr(err, bad_files[i].want) != NULL);
		unlink(f);
	}
	CHECK(cpi2_config_load(keys, &c, "/nonexistent/x.conf", err, sizeof(err)) == -ENOENT &&
	      strstr(err, "x.conf"));
	char *a3[] = {"p", "--bogus", "1", NULL};
	CHECK(cpi2_config_parse_args(keys, &c, 3, a3, "usage", props, err, sizeof(err)) ==
		  -EINVAL &&
	      strstr(err, "--bogus"));
	char *a4[] = {"p", "--max-caps", NULL};
	CHECK(cpi2_config_parse_args(keys, &c, 2, a4, "usage", props, err, sizeof(err)) ==
		  -EINVAL &&
	      strstr(err, "needs a value"));
	char *a5[] = {"p", "-X", "novalue", NULL};
	CHECK(cpi2_config_parse_args(keys, &c, 3, a5, "usage", props, err, sizeof(err)) == -EINVAL);
	char *a6[] = {"p", "stray", NULL};
	CHECK(cpi2_config_parse_args(keys, &c, 2, a6, "usage", props, err, sizeof(err)) ==
		  -EINVAL &&
	      strstr(err, "stray"));
	char *a7[] = {"p", "--set", "max_caps=12", "--set", "dry-run=true", NULL};
	CHECK(cpi2_config_parse_args(keys, &c, 5, a7, "usage", props, err, sizeof(err)) == 0 &&
	      c.max_caps == 12 && c.dry_run);
	char *a8[] = {"p", "--set", "max_caps", NULL};
	CHECK(cpi2_config_parse_args(keys, &c, 3, a8, "usage", props, err, sizeof(err)) ==
		  -EINVAL &&
	      strstr(err, "--set needs key=value"));
	char *a9[] = {"p", "--set", "nope=1", NULL};
	CHECK(cpi2_config_parse_args(keys, &c, 3, a9, "usage", props, err, sizeof(err)) ==
		  -EINVAL &&
	      strstr(err, "unknown option 'nope'"));
	char *a10[] = {"p", "--set", NULL};
	CHECK(cpi2_config_parse_args(keys, &c, 2, a10, "usage", props, err, sizeof(err)) ==
	      -EINVAL);
	/* short names: -b value, -n for a boolean; unknown ones and a missing value refused; the
	 * help shows them beside the long names */
	char *a11[] = {"p", "-b", "h:1", "-n", "--max-caps", "3", NULL};
	CHECK(cpi2_config_parse_args(keys, &c, 6, a11, "usage", props, err, sizeof(err)) == 0 &&
	      !strcmp(c.brokers, "h:1") && c.dry_run && c.max_caps == 3);
	/* --no-flag sets a boolean false; not for other keys, nor with a value */
	char *n1[] = {"p", "--dry-run", "--no-dry-run", NULL};
	CHECK(cpi2_config_parse_args(keys, &c, 3, n1, "usage", props, err, sizeof(err)) == 0 &&
	      !c.dry_run);
	char *n2[] = {"p", "--no-max-caps", NULL};
	CHECK(cpi2_config_parse_args(keys, &c, 2, n2, "usage", props, err, sizeof(err)) ==
		  -EINVAL &&
	      strstr(err, "unknown option '--no-max-caps'"));
	char *n3[] = {"p", "--no-dry-run=true", NULL};
	CHECK(cpi2_config_parse_args(keys, &c, 2, n3, "usage", props, err, sizeof(err)) == -EINVAL);
	char *a12[] = {"p", "-q", "1", NULL};
	CHECK(cpi2_config_parse_args(keys, &c, 3, a12, "usage", props, err, sizeof(err)) ==
		  -EINVAL &&
	      strstr(err, "unknown option '-q'"));
	char *a13[] = {"p", "-b", NULL};
	CHECK(cpi2_config_parse_args(keys, &c, 2, a13, "usage", props, err, sizeof(err)) ==
		  -EINVAL &&
	      strstr(err, "option '-b' needs a value"));
	char help[4096] = "";
	FILE *h = fmemopen(help, sizeof(help) - 1, "w");
	CHECK(h != NULL);
	cpi2_config_help(keys, "usage", h);
	fclose(h);
	CHECK(strstr(help, "  -b, --brokers TEXT ") && strstr(help, "      --max-caps N ") &&
		  strstr(help, "  -n, --dry-run "),
	      "%s", help);
	/* --version: 1 (done, as --help), wherever it stands; the version is the project's */
	char *v1[] = {"p", "--brokers", "x", "--version", NULL};
	CHECK(cpi2_config_parse_args(keys, &c, 4, v1, "usage", props, err, sizeof(err)) == 1);
	char want[64] = "";
	FILE *vs = popen("sh " CPI2_SOURCE_DIR "/mk/version.sh", "r");
	CHECK(vs && fgets(want, sizeof(want), vs) && pclose(vs) == 0);
	want[strcspn(want, "\n")] = '\0';
	CHECK(want[0] && !strcmp(cpi2_version, want), "'%s' != '%s'", cpi2_version, want);
	client_file_tests();
	printf("test-config: ok\n");
	return 0;
}
