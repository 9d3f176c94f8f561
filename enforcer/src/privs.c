/* privs: see privs.h. */
#include "privs.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *const cap_names[] = {"chown",
					"dac_override",
					"dac_read_search",
					"fowner",
					"fsetid",
					"kill",
					"setgid",
					"setuid",
					"setpcap",
					"linux_immutable",
					"net_bind_service",
					"net_broadcast",
					"net_admin",
					"net_raw",
					"ipc_lock",
					"ipc_owner",
					"sys_module",
					"sys_rawio",
					"sys_chroot",
					"sys_ptrace",
					"sys_pacct",
					"sys_admin",
					"sys_boot",
					"sys_nice",
					"sys_resource",
					"sys_time",
					"sys_tty_config",
					"mknod",
					"lease",
					"audit_write",
					"audit_control",
					"setfcap",
					"mac_override",
					"mac_admin",
					"syslog",
					"wake_alarm",
					"block_suspend",
					"audit_read",
					"perfmon",
					"bpf",
					"checkpoint_restore"};
#define N_NAMES ((int)(sizeof(cap_names) / sizeof(cap_names[0])))

int privs_parse(const char *list, uint64_t *mask, char *err, size_t errsz)
{
	char buf[512], *save = NULL, *tok, *end;

	*mask = 0;
	snprintf(buf, sizeof(buf), "%s", list ? list : "");
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int i;

		while (*tok == ' ')
			tok++;
		end = tok + strlen(tok);
		while (end > tok && end[-1] == ' ')
			*--end = '\0';
		if (!*tok)
			continue;
		if (strncasecmp(tok, "cap_", 4) == 0)
			tok += 4;
		for (i = 0; i < N_NAMES && strcasecmp(tok, cap_names[i]) != 0; i++)
			;
		if (i == N_NAMES) {
			snprintf(err, errsz, "unknown capability '%s'", tok);
			return -EINVAL;
		}
		*mask |= 1ULL << i;
	}
	return 0;
}

void privs_names(uint64_t mask, char *out, size_t outsz)
{
	size_t l = 0;

	out[0] = '\0';
	for (int i = 0; i < 64 && l < outsz; i++)
		if (mask & (1ULL << i)) {
			snprintf(out + l, outsz - l, "%scap_%s", l ? "," : "",
				 i < N_NAMES ? cap_names[i] : "?");
			l = strlen(out);
		}
	if (!out[0])
		snprintf(out, outsz, "none");
}

static int last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int v = CAP_LAST_CAP;

	if (f) {
		if (fscanf(f, "%d", &v) != 1 || v < 0 || v > 63)
			v = CAP_LAST_CAP;
		fclose(f);
	}
	return v;
}

int privs_drop(uint64_t keep, char *err, size_t errsz)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[2];
	int last = last_cap(), kept_bounding = 0, rc;

	if (errsz)
		err[0] = '\0';
	/* The bounding set first: shrinking it takes CAP_SETPCAP, which goes with the capset below.
	 */
	for (int cap = 0; cap <= last; cap++) {
		if (keep & (1ULL << cap))
			continue;
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1 &&
		    prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
			if (errno != EPERM) {
				rc = -errno;
				snprintf(err, errsz, "drop capability %d from the bounding set: %s",
					 cap, strerror(errno));
				return rc;
			}
			kept_bounding++;
		}
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
		rc = -errno;
		snprintf(err, errsz, "clear the ambient capabilities: %s", strerror(errno));
		return rc;
	}
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) != 0) {
		rc = -errno;
		snprintf(err, errsz, "capget: %s", strerror(errno));
		return rc;
	}
	for (int i = 0; i < 2; i++) {
		uint32_t k = (uint32_t)(keep >> (32 * i));

		data[i].permitted &= k;
		data[i].effective = data[i].permitted;
		data[i].inheritable = 0;
	}
	if (syscall(SYS_capset, &hdr, data) != 0) {
		rc = -errno;
		snprintf(err, errsz, "capset: %s", strerror(errno));
		return rc;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		rc = -errno;
		snprintf(err, errsz, "set no_new_privs: %s", strerror(errno));
		return rc;
	}
	if (kept_bounding)
		snprintf(err, errsz,
			 "%d capabilities stay in the bounding set: no CAP_SETPCAP to drop them "
			 "(not root), "
			 "and none is held",
			 kept_bounding);
	return 0;
}
