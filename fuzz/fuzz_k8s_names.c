/*
 * fuzz/fuzz_k8s_names.c - libFuzzer harness for the names that reach API paths.
 *
 * The input is a namespace and a name separated by a NUL byte, as an
 * extender request (PodNamespace, PodName) may carry them.  gf_kube_path()
 * must build a path only from names Kubernetes would accept, so a built
 * path is exactly /api/v1/namespaces/NS/pods/NAME/binding with NS and NAME
 * made of [a-z0-9.-] (no "..", '/', '?', '#', '%' or control byte can
 * steer the request); a refusal must say which name and why.  The rules
 * themselves are checked against a direct reading of the DNS-1123 grammar.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "k8s/client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* DNS-1123 label, read straight from the grammar (no length limit). */
static int label(const char *s, size_t n)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int an = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9');
		if (!an && (s[i] != '-' || i == 0 || i == n - 1))
			return 0;
	}
	return 1;
}

static int subdomain(const char *s)
{
	size_t n = strlen(s), start = 0;
	if (!n || n > 253)
		return 0;
	for (size_t i = 0; i <= n; i++)
		if (i == n || s[i] == '.') {
			if (!label(s + start, i - start))
				return 0;
			start = i + 1;
		}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 2);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = buf[size + 1] = '\0';
	const char *ns = buf, *name = buf + strlen(buf) + 1; /* "" when no NUL was given */
	if ((size_t)(name - buf) > size)
		name = buf + size + 1;
	if (gf_k8s_dns_label(ns) != (strlen(ns) <= 63 && label(ns, strlen(ns))) ||
	    gf_k8s_dns_subdomain(name) != subdomain(name))
		abort();
	char path[700], err[300] = "";
	gf_err e = gf_kube_path(path, sizeof(path), ns, "pods", name, "binding", err, sizeof(err));
	if (e == GF_OK) {
		char want[700];
		size_t w = 0;
		w += (size_t)snprintf(want, sizeof(want), "/api/v1/namespaces/%s/pods/%s/binding", ns, name);
		if (strcmp(path, want) || w >= sizeof(want) || strstr(path, "..") || strpbrk(path, "?#%\\ "))
			abort();
		for (const char *p = path; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '/'))
				abort();
	} else if (e != GF_INVAL || (strncmp(err, "invalid namespace", 17) && strncmp(err, "invalid name", 12))) {
		abort();
	}
	free(buf);
	return 0;
}
