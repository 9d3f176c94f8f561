/* config: one table of keys per program gives its defaults, its config file, its command line
 * (--key value, --key=value, -k value for a key with a short name, --set key=value, --flag and
 * --no-flag for booleans, -X kafka.property=value, --config FILE) and its --help. Errors name the
 * file and line, or the option, and what is wrong.
 */
#ifndef CPI2_CONFIG_H
#define CPI2_CONFIG_H

#include <stddef.h>
#include <stdio.h>

enum { CPI2_CFG_STR, CPI2_CFG_INT, CPI2_CFG_DOUBLE, CPI2_CFG_BOOL };

struct cpi2_config_key {
	const char *name;	   /* "cgroup_root"; on the command line also --cgroup-root */
	int type;		   /* CPI2_CFG_* */
	size_t offset;		   /* of the field in the program's conf struct */
	size_t size;		   /* CPI2_CFG_STR: size of the char array */
	const char *default_value; /* as it would be written in the file */
	const char *help;
	char short_name; /* 0, or 's' for -s value (-s alone for a boolean) */
};
/* Field types: STR char[size], INT long, DOUBLE double, BOOL bool. */

/* Size of the props array of cpi2_config_parse_args: at most 64 properties and the NULL. */
#define CPI2_CONFIG_MAX_PROPS 65

/* Set every key to its default. Returns 0 or -EINVAL (a bad default: a bug). */
int cpi2_config_defaults(const struct cpi2_config_key *keys, void *conf, char *err, size_t errsz);

/* Set one key from its text. Returns 0, -ENOENT (unknown key) or -EINVAL (bad value). */
int cpi2_config_set(const struct cpi2_config_key *keys, void *conf, const char *key,
		    const char *value, char *err, size_t errsz);

/* Read "key = value" lines ('#' comments) from path. Returns 0 or -errno naming path:line. */
int cpi2_config_load(const struct cpi2_config_key *keys, void *conf, const char *path, char *err,
		     size_t errsz);

/* Defaults, then --config FILE, then the other options in order; -X key=value pairs are
 * collected into props (NULL-terminated, pointers into argv). Returns 0, 1 for --help or
 * --version (the help, or the program's name and the project's version, was printed to stdout),
 * or -EINVAL with a reason. */
int cpi2_config_parse_args(const struct cpi2_config_key *keys, void *conf, int argc, char **argv,
			   const char *usage, const char **props, char *err, size_t errsz);

/* s without the blanks (spaces, tabs) before it and the blanks and line ends after it; the end
 * is cut in place. */
char *cpi2_config_trim(char *s);

/* The project's version (mk/version.sh), as --version prints it. */
extern const char cpi2_version[];

/* Print the options table. */
void cpi2_config_help(const struct cpi2_config_key *keys, const char *usage, FILE *out);

#endif
