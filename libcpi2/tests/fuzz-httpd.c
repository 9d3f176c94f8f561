/* Fuzz target: the metrics server's request parser (cpi2_http_parse_request), on whatever
 * bytes a client sends. Invariants (abort on violation): the result is whole (a length within
 * the input and the bound), more-please (only below the bound) or one of the refusals; a whole
 * request's path is an origin path without its query, its method GET or HEAD; the same bytes
 * give the same result, and no shorter prefix of a whole request is whole already. */
#include <cpi2/httpd.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cpi2_http_request req, again;
	const char *buf = (const char *)data;
	int rc = cpi2_http_parse_request(buf, size, &req);

	if (rc > 0) {
		if ((size_t)rc > size || rc > CPI2_HTTPD_MAX_REQUEST)
			abort();
		if (req.method != CPI2_HTTP_GET && req.method != CPI2_HTTP_HEAD)
			abort();
		if (req.path[0] != '/' || strlen(req.path) >= sizeof(req.path) ||
		    strpbrk(req.path, "?# \r\n"))
			abort();
		if (cpi2_http_parse_request(buf, (size_t)rc, &again) != rc ||
		    memcmp(&req, &again, sizeof(req)))
			abort();
		if (cpi2_http_parse_request(buf, (size_t)rc - 1, &again) > 0)
			abort();
	} else if (rc == 0) {
		if (size >= CPI2_HTTPD_MAX_REQUEST)
			abort();
	} else if (rc != -400 && rc != -405 && rc != -414 && rc != -431 && rc != -505) {
		abort();
	}
	return 0;
}
