/*
 * cli/kube.h - the API server access of the commands that talk to it with
 * nothing else to say on failure (`schedule`, `queue`): their --kubeconfig
 * PATH, else the in-cluster service account.
 */
#ifndef GF_CLI_KUBE_H
#define GF_CLI_KUBE_H

#include "k8s/conn.h"

/*
 * Fill *conn by gf_kube_conn_open() (kubeconfig NULL: the service account).
 * Returns 0 (the caller releases *conn with gf_kube_conn_release()), or -1
 * after printing "gpufleet CMD: reason" to stderr (*conn then holds nothing).
 */
int gf_cli_kube_conn(const char *cmd, const char *kubeconfig, struct gf_kube_conn *conn);

#endif /* GF_CLI_KUBE_H */
