/*
 * cli/kube.c - a command's API server access, or the one line that says why
 * there is none (cli/kube.h).  The choice between kubeconfig and service
 * account is k8s/conn.c's (gf_kube_conn_open); this adds the message.
 */
#include <stdio.h>

#include "cli/kube.h"

int gf_cli_kube_conn(const char *cmd, const char *kubeconfig, struct gf_kube_conn *conn)
{
	char err[512] = "";
	if (gf_kube_conn_open(conn, kubeconfig, err, sizeof(err))) {
		fprintf(stderr, "gpufleet %s: %s\n", cmd, err);
		return -1;
	}
	return 0;
}
