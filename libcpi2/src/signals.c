/* signals: see cpi2/signals.h. */
#include <cpi2/log.h>
#include <cpi2/signals.h>

#include <errno.h>
#include <string.h>

volatile sig_atomic_t cpi2_signal_stop;
static volatile sig_atomic_t hangups;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		hangups++;
	else
		cpi2_signal_stop = 1;
}

int cpi2_signal_install(void)
{
	static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL) != 0)
			return -errno;
	return 0;
}

int cpi2_signal_hangups(const char *module, const char *why)
{
	int n = hangups;

	if (n == 0)
		return 0;
	hangups = 0;
	cpi2_log(CPI2_LOG_WARN, module, "SIGHUP ignored: %s", why);
	return n;
}
