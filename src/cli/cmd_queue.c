/*
 * cli/cmd_queue.c - `gpufleet queue`: argument parsing and wiring only.
 *
 * Reads the API server and nothing else (the same access as `schedule`:
 * --kubeconfig, else $KUBECONFIG, the service account, ~/.kube/config):
 * LISTs of the Queue objects, the namespaces, the pending pods and the FailedScheduling
 * events, fed to the view of k8s/queueview.h, printed as a table or JSON.
 * Queues and namespaces that cannot be listed (no Queue CRD, no right to
 * list namespaces) are said on stderr and the view goes on without them;
 * pods that cannot be listed are an error (exit 1).
 */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/kube.h"
#include "core/obuf.h"
#include "k8s/client.h"
#include "k8s/queues.h"
#include "k8s/queueview.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet queue [options]\n"
		"\n"
		"The pods waiting for the scheduler, per GPUQueue (gpufleet.io/v1alpha1): position, GPUs,\n"
		"priority, time waiting, estimated start (the scheduler's gpufleet.io/EstimatedStart\n"
		"pod condition, else an older scheduler's gpufleet.io/estimated-start annotation; '-'\n"
		"when no scheduler wrote one) and why (that condition's message, else the annotation\n"
		"gpufleet.io/waiting-reason, else the newest FailedScheduling event, else the\n"
		"PodScheduled condition). A pod's queue is its\n"
		"gpufleet.io/queue label, else its namespace's. Reads only the API server.\n"
		"\n"
		"      --kubeconfig PATH      API server access (default: $KUBECONFIG, else the in-cluster\n"
		"                             service account, else ~/.kube/config)\n"
		"  -o, --output FORMAT        table (default) or json\n"
		"      --scheduler-name NAME  pods of this schedulerName (default gpufleet)\n"
		"      --all-schedulers       pods of any scheduler\n"
		"  -h, --help                 this text\n"
		"      --version              the version and commit\n");
}

struct feed {
	gf_qview *v;
	gf_err (*add)(gf_qview *, const cJSON *, char *, size_t);
	gf_err err;		/* GF_NOMEM stops */
	unsigned skipped;
};

static void on_item(void *ud, const char *type, const cJSON *obj)
{
	struct feed *f = ud;
	char err[600];
	if (strcmp(type, "SYNC") || f->err)
		return;
	gf_err e = f->add(f->v, obj, err, sizeof(err));
	if (e == GF_PARSE) {
		fprintf(stderr, "gpufleet queue: skipping %s\n", err);
		f->skipped++;
	} else if (e) {
		f->err = e;
	}
}

#define MAX_QUEUES 10000
#define MAX_NAMESPACES 50000
#define MAX_PODS 200000
#define MAX_EVENTS 200000

/* LIST path into the view, at most max objects; false (said on stderr) when it failed. */
static bool list(gf_kube_client *k, const char *path, const char *what, size_t max, gf_qview *v,
		 gf_err (*add)(gf_qview *, const cJSON *, char *, size_t), bool required)
{
	struct feed f = { .v = v, .add = add };
	char err[512] = "";
	gf_err e = gf_kube_list_max(k, path, max, on_item, &f, err, sizeof(err));
	if (!e && f.err)
		e = f.err, snprintf(err, sizeof(err), "%s", gf_strerror(e));
	if (e)
		fprintf(stderr, "gpufleet queue: %s %s: %s%s\n", required ? "cannot list" : "warning: cannot list", what,
			err[0] ? err : gf_strerror(e), required ? "" : "; going on without them");
	return !e;
}

int gf_cmd_queue(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "kubeconfig", required_argument, NULL, 'k' },
		{ "output", required_argument, NULL, 'o' },
		{ "scheduler-name", required_argument, NULL, 'n' },
		{ "all-schedulers", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *kubeconfig = NULL, *sched = "gpufleet";
	bool json = false;
	optind = 1;
	opterr = 0;
	for (;;) {
		int at = optind;
		int opt = getopt_long(argc, argv, ":o:h", longopts, NULL);
		if (opt == -1)
			break;
		switch (opt) {
		case 'h':
			usage(stdout);
			return 0;
		case 'k': kubeconfig = optarg; break;
		case 'n': sched = optarg; break;
		case 'A': sched = NULL; break;
		case 'o':
			if (strcmp(optarg, "json") && strcmp(optarg, "table")) {
				fprintf(stderr, "gpufleet queue: --output wants table or json, got '%s'\n", optarg);
				return 2;
			}
			json = !strcmp(optarg, "json");
			break;
		default:
			return gf_cli_option_error("queue", opt, argv, at);
		}
	}
	if (gf_cli_operands("queue", argc, argv))
		return 2;

	struct gf_kube_conn conn;
	if (gf_cli_kube_conn("queue", kubeconfig, &conn))
		return 1;
	int rc = 1;
	gf_err e;
	gf_kube_client *k = NULL;
	gf_qview *v = NULL;
	struct gf_obuf out;
	gf_obuf_init(&out, 256u << 20);
	struct gf_kube_client_opts co = { .timeout_ms = 60000, .retries = 2 };
	if ((e = gf_kube_client_create(&conn, &co, &k)) || (e = gf_qview_create(sched, &v))) {
		fprintf(stderr, "gpufleet queue: %s\n", gf_strerror(e));
		goto done;
	}
	/* Budgets: Kubernetes' own scalability limits (150,000 pods, 10,000
	 * namespaces a cluster) with room; an API server that pages forever or
	 * sends more stops here, not in the memory of the machine. */
	list(k, GF_K8S_QUEUE_PATH, "GPUQueues (gpufleet.io/v1alpha1)", MAX_QUEUES, v, gf_qview_add_queue,
	     false);
	list(k, "/api/v1/namespaces", "namespaces (their gpufleet.io/queue labels)", MAX_NAMESPACES, v,
	     gf_qview_add_namespace, false);
	if (!list(k, "/api/v1/pods?fieldSelector=status.phase%3DPending,spec.nodeName%3D", "pending pods", MAX_PODS, v,
		  gf_qview_add_pod, true))
		goto done;
	list(k, "/api/v1/events?fieldSelector=reason%3DFailedScheduling", "FailedScheduling events", MAX_EVENTS, v,
	     gf_qview_add_event, false);
	gf_qview_build(v, (int64_t)time(NULL));
	e = json ? gf_qview_render_json(v, &out) : gf_qview_render_table(v, &out);
	if (e) {
		fprintf(stderr, "gpufleet queue: %s\n", gf_strerror(e));
		goto done;
	}
	fwrite(out.data, 1, out.len, stdout);
	rc = fflush(stdout) ? 1 : 0;
done:
	gf_obuf_release(&out);
	gf_qview_destroy(v);
	gf_kube_client_destroy(k);
	gf_kube_conn_release(&conn);
	return rc;
}
