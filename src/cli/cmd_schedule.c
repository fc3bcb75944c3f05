/*
 * cli/cmd_schedule.c - `gpufleet schedule`: argument parsing and wiring only.
 *
 * Reads the API server access (kubeconfig or service account), picks the
 * policy, and runs the daemon of k8s/scheduler.h until SIGINT/SIGTERM
 * (the handler only sets the stop flag the daemon polls).
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "k8s/client.h"
#include "k8s/conn.h"
#include "k8s/scheduler.h"

static volatile int stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	gf_kube_stop(&stop_flag); /* an atomic store: async-signal-safe, and the threads see it */
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet schedule [options]\n"
		"A Kubernetes scheduler for GPU pods (spec.schedulerName: gpufleet) and an extender\n"
		"for kube-scheduler, driven by the placement engine (docs/scheduler.md).\n\n"
		"      --kubeconfig PATH      API server access (default: in-cluster service account)\n"
		"      --scheduler-name NAME  schedule pods with this spec.schedulerName (default gpufleet)\n"
		"      --policy NAME          placement policy (default fgd; see gpufleet simulate --help)\n"
		"  -a, --address [HOST]:PORT  HTTP: /metrics, /healthz, extender (default :10260; port 0 = any)\n"
		"      --extender-prefix P    extender URL prefix (default /gpusched: P/filter, P/prioritize, P/bind)\n"
		"      --no-standalone        extender only: do not schedule pods ourselves\n"
		"      --binders N            concurrent binding writers (default 16)\n"
		"      --target-pct N         FGD target workload coverage, percent (default 95)\n"
		"      --seed N               random policies and tie-breaks (default 42)\n"
		"  -v, --verbose              one log line per binding\n");
}

int gf_cmd_schedule(int argc, char **argv)
{
	struct gf_kube_sched_opts o = { .standalone = true, .seed = 42, .port = 10260 };
	const char *kubeconfig = NULL, *policy = "fgd";
	char host[256] = "";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		unsigned long n;
#define NEED_VALUE()                                                              \
	do {                                                                      \
		if (!v) {                                                         \
			fprintf(stderr, "gpufleet schedule: %s needs a value\n", a); \
			return 2;                                                 \
		}                                                                 \
		i++;                                                              \
	} while (0)
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--kubeconfig")) {
			NEED_VALUE();
			kubeconfig = v;
		} else if (!strcmp(a, "--scheduler-name")) {
			NEED_VALUE();
			o.scheduler_name = v;
		} else if (!strcmp(a, "--policy")) {
			NEED_VALUE();
			policy = v;
		} else if (!strcmp(a, "-a") || !strcmp(a, "--address")) {
			NEED_VALUE();
			if (!gf_cli_parse_address(v, host, sizeof(host), &o.port)) {
				fprintf(stderr, "gpufleet schedule: --address wants [HOST]:PORT, got '%s'\n", v);
				return 2;
			}
		} else if (!strcmp(a, "--extender-prefix")) {
			NEED_VALUE();
			if (v[0] != '/') {
				fprintf(stderr, "gpufleet schedule: --extender-prefix must start with '/'\n");
				return 2;
			}
			o.extender_prefix = v;
		} else if (!strcmp(a, "--no-standalone")) {
			o.standalone = false;
		} else if (!strcmp(a, "--binders")) {
			NEED_VALUE();
			if (!gf_cli_parse_ulong(v, 256, &n) || !n) {
				fprintf(stderr, "gpufleet schedule: --binders wants 1..256\n");
				return 2;
			}
			o.binders = (int)n;
		} else if (!strcmp(a, "--target-pct")) {
			NEED_VALUE();
			if (!gf_cli_parse_ulong(v, 100, &n) || !n) {
				fprintf(stderr, "gpufleet schedule: --target-pct wants 1..100\n");
				return 2;
			}
			o.target_pct = (int)n;
		} else if (!strcmp(a, "--seed")) {
			NEED_VALUE();
			if (!gf_cli_parse_ulong(v, (unsigned long)-1, &n)) {
				fprintf(stderr, "gpufleet schedule: --seed wants a number\n");
				return 2;
			}
			o.seed = n;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			o.verbose = true;
		} else {
			fprintf(stderr, "gpufleet schedule: unknown option '%s'\n", a);
			usage(stderr);
			return 2;
		}
#undef NEED_VALUE
	}
	o.policy = gf_policy_find(policy);
	if (!o.policy) {
		fprintf(stderr, "gpufleet schedule: unknown policy '%s'; one of:", policy);
		size_t np;
		const struct gf_policy_ops *const *all = gf_policy_all(&np);
		for (size_t i = 0; i < np; i++)
			fprintf(stderr, " %s", all[i]->name);
		fprintf(stderr, "\n");
		return 2;
	}
	o.listen_addr = host[0] ? host : NULL;
	struct gf_kube_conn conn;
	char err[512] = "";
	gf_err e = kubeconfig ? gf_kube_conn_from_kubeconfig(&conn, kubeconfig, err, sizeof(err))
			      : gf_kube_conn_in_cluster(&conn, err, sizeof(err));
	if (e) {
		fprintf(stderr, "gpufleet schedule: %s\n", err);
		return 1;
	}
	o.conn = &conn;
	o.stop = &stop_flag;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	e = gf_kube_scheduler_run(&o, err, sizeof(err));
	gf_kube_conn_release(&conn);
	if (e) {
		fprintf(stderr, "gpufleet schedule: %s\n", err);
		return 1;
	}
	return 0;
}
