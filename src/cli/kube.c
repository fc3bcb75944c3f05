/*
 * cli/kube.c - a command's API server access, or the one line that says why
 * there is none (cli/kube.h).
 *
 * Which access, in the order controller-runtime's GetConfig and kubectl's
 * users expect: --kubeconfig PATH; else $KUBECONFIG (its first entry: a
 * colon-separated list is not merged, as kubectl would, only its first file
 * is read); else the in-cluster service account when the pod's environment
 * names the API server; else ~/.kube/config when it exists.  Reading either
 * is k8s/conn.c's (gf_kube_conn_open); this picks and adds the message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/kube.h"

/* $KUBECONFIG's first entry, or NULL (unset, empty, or too long for buf). */
static const char *env_kubeconfig(char *buf, size_t n)
{
	const char *v = getenv("KUBECONFIG");
	if (!v || !*v)
		return NULL;
	size_t len = strcspn(v, ":");
	if (!len || len >= n)
		return NULL;
	memcpy(buf, v, len);
	buf[len] = '\0';
	return buf;
}

/* ~/.kube/config when it exists, or NULL. */
static const char *home_kubeconfig(char *buf, size_t n)
{
	const char *home = getenv("HOME");
	if (!home || !*home)
		return NULL;
	int w = snprintf(buf, n, "%s/.kube/config", home);
	if (w < 0 || (size_t)w >= n || access(buf, R_OK))
		return NULL;
	return buf;
}

const char *gf_cli_kubeconfig(const char *flag, char *buf, size_t n)
{
	if (flag)
		return flag;
	const char *p = env_kubeconfig(buf, n);
	if (p)
		return p;
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	if (host && *host)
		return NULL;
	return home_kubeconfig(buf, n);
}

int gf_cli_kube_conn(const char *cmd, const char *kubeconfig, struct gf_kube_conn *conn)
{
	char err[512] = "", path[4096];
	const char *use = gf_cli_kubeconfig(kubeconfig, path, sizeof(path));
	if (gf_kube_conn_open(conn, use, err, sizeof(err))) {
		if (!use)
			fprintf(stderr, "gpufleet %s: %s (no $KUBECONFIG and no readable ~/.kube/config either)\n",
				cmd, err);
		else
			fprintf(stderr, "gpufleet %s: %s\n", cmd, err);
		return -1;
	}
	return 0;
}
