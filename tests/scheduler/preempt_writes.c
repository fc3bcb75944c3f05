/* tests/scheduler/preempt_writes.c - a test tool for sched-preempt-writes: the preemption
 * writes of k8s/preempt.h against a real API server.
 *
 *   preempt_writes KUBECONFIG NS VICTIM VICTIM_UID PREEMPTOR NODE
 *
 * Evicts VICTIM (DisruptionTarget condition, graceful delete with the uid precondition) and
 * nominates NODE for PREEMPTOR; prints "gone" when the victim was already gone. Exit 0 on
 * success, 1 with the error on stderr. */
#include <stdio.h>
#include <time.h>

#include "k8s/conn.h"
#include "k8s/preempt.h"

int main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: preempt_writes KUBECONFIG NS VICTIM VICTIM_UID PREEMPTOR NODE\n");
		return 2;
	}
	struct gf_kube_conn c;
	char err[512] = "";
	if (gf_kube_conn_from_kubeconfig(&c, argv[1], err, sizeof(err))) {
		fprintf(stderr, "preempt_writes: %s\n", err);
		return 1;
	}
	struct gf_kube_client_opts o = { 0 };
	gf_kube_client *k;
	if (gf_kube_client_create(&c, &o, &k)) {
		gf_kube_conn_release(&c);
		return 1;
	}
	char ts[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	bool gone = false;
	int rc = 0;
	if (gf_kube_evict(k, "gpufleet", argv[2], argv[3], argv[4], ts, &gone, err, sizeof(err)) ||
	    gf_kube_nominate(k, argv[2], argv[5], argv[6], err, sizeof(err))) {
		fprintf(stderr, "preempt_writes: %s\n", err);
		rc = 1;
	} else if (gone) {
		printf("gone\n");
	}
	gf_kube_client_destroy(k);
	gf_kube_conn_release(&c);
	return rc;
}
