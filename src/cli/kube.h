/*
 * cli/kube.h - the API server access of the commands that talk to it with
 * nothing else to say on failure (`schedule`, `queue`): their --kubeconfig
 * PATH, else $KUBECONFIG, else the in-cluster service account, else
 * ~/.kube/config (cli/kube.c says why that order).
 */
#ifndef GF_CLI_KUBE_H
#define GF_CLI_KUBE_H

#include "k8s/conn.h"

/*
 * The kubeconfig file to read, given the command's --kubeconfig (flag, may
 * be NULL): flag, $KUBECONFIG's first entry (copied into buf), NULL when the
 * in-cluster service account applies, ~/.kube/config when it exists (in
 * buf), else NULL (the service account's error then says why).
 */
const char *gf_cli_kubeconfig(const char *flag, char *buf, size_t n);

/*
 * Fill *conn by gf_kube_conn_open() from gf_cli_kubeconfig(kubeconfig).
 * Returns 0 (the caller releases *conn with gf_kube_conn_release()), or -1
 * after printing "gpufleet CMD: reason" to stderr (*conn then holds nothing).
 */
int gf_cli_kube_conn(const char *cmd, const char *kubeconfig, struct gf_kube_conn *conn);

#endif /* GF_CLI_KUBE_H */
