/*
 * cli/cmd_schedule.c - `gpufleet schedule`: argument parsing and wiring only.
 *
 * Reads the API server access (kubeconfig or service account), picks the
 * policy, and runs the daemon of k8s/scheduler.h until SIGINT/SIGTERM
 * (the handler only sets the stop flag the daemon polls).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/files.h"
#include "cli/kube.h"
#include "k8s/client.h"
#include "k8s/lease.h"
#include "k8s/scheduler.h"
#include "queue/loop.h"

static volatile int stop_flag;

/* Long options without a short letter. */
enum { OPT_ADDRESS = 256, OPT_EXT_LISTEN, OPT_SEEDS, OPT_PREEMPTION_TIMEOUT };

static void on_signal(int sig)
{
	(void)sig;
	gf_kube_stop(&stop_flag); /* an atomic store: async-signal-safe, and the threads see it */
}

/* A Lease name or namespace: a DNS subdomain (it goes into a URL path). */
static bool valid_lease_arg(const char *s)
{
	size_t n = strlen(s);
	if (!n || n > 253)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '.'))
			return false;
	return true;
}

/* The pod's namespace, from the service account mount; false outside a cluster. */
static bool service_account_namespace(char *out, size_t outlen)
{
	FILE *f = fopen("/var/run/secrets/kubernetes.io/serviceaccount/namespace", "r");
	if (!f)
		return false;
	bool ok = fgets(out, (int)outlen, f) != NULL;
	fclose(f);
	if (ok)
		out[strcspn(out, "\r\n")] = '\0';
	return ok && valid_lease_arg(out);
}

/* The hostname; the election appends "_<16 random hex digits>" to every identity
 * (k8s/lease.h), as kube-scheduler's hostname_<uuid>: two replicas never share it. */
static const char *default_identity(char *out, size_t outlen)
{
	if (gethostname(out, outlen - 1) || !out[0])
		snprintf(out, outlen, "gpufleet");
	out[outlen - 1] = '\0';
	return out;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet schedule [options]\n"
		"A Kubernetes scheduler for GPU pods (spec.schedulerName: gpufleet) and an extender\n"
		"for kube-scheduler, driven by the placement engine (docs/scheduler.md).\n\n"
		"      --kubeconfig PATH      API server access (default: $KUBECONFIG, else the in-cluster\n"
		"                             service account, else ~/.kube/config)\n"
		"      --scheduler-name NAME  schedule pods with this spec.schedulerName (default gpufleet)\n"
		"      --policy NAME          placement policy (default fgd; see gpufleet simulate --help)\n"
		"  -a, --listen [HOST]:PORT   HTTP: /metrics and /healthz (default :10260; port 0 = any)\n"
		"      --extender-listen [HOST]:PORT\n"
		"                             the extender verbs' own listener (default 127.0.0.1:10261);\n"
		"                             plain HTTP on loopback only, beyond it mutual TLS:\n"
		"      --extender-tls-cert-file PATH         its serving certificate (PEM)\n"
		"      --extender-tls-private-key-file PATH  its key (PEM)\n"
		"      --extender-client-ca-file PATH        CA bundle kube-scheduler's client certificate\n"
		"                                            must verify against (required with TLS)\n"
		"      --extender-allowed-names CN[,CN...]   client certificate CNs accepted (default: any\n"
		"                                            the CA signed)\n"
		"      --extender-profiles NAME[,NAME...]    schedulerNames whose pods the extender may bind\n"
		"                             (default default-scheduler)\n"
		"      --extender-prefix P    extender URL prefix, at most 127 bytes (default /gpusched:\n"
		"                             P/filter, P/prioritize, P/bind)\n"
		"      --extender-bind-wait D wait at most D (1s..60s, default 10s) for a bind's API\n"
		"                             calls before answering an error; keep it below\n"
		"                             kube-scheduler's extender httpTimeout\n"
		"      --no-standalone        extender only: do not schedule pods ourselves\n"
		"      --binders N            concurrent binding writers (default 16)\n"
		"      --bind-order O         node (default): GPU bindings to one node are posted one\n"
		"                             at a time, in gpufleet.io/assigned-at order, as\n"
		"                             gpufleet's device plugin needs to match pods to GPUs;\n"
		"                             none: in parallel (faster when a policy packs pods onto\n"
		"                             one node; only without gpufleet's device plugin)\n"
		"      --target-pct N         FGD target workload coverage, percent (default 95)\n"
		"      --seed N               random policies and tie-breaks (default 42; --seeds N too)\n"
		"      --queue-policy P       the engine loop's queue policy (as gpufleet replay): kube\n"
		"                             (default: per pod, FIFO with backoff), strict-fifo,\n"
		"                             best-effort-fifo, backfill, conservative-backfill, per-queue\n"
		"                             (each Queue's ordering; pods stay in the loop's queue in\n"
		"                             priority order; PodGroup gangs all or nothing)\n"
		"  -v, --verbose              one log line per binding\n"
		"      --leader-elect         run as one of several replicas: only the holder of a\n"
		"                             coordination.k8s.io/v1 Lease binds (docs/scheduler.md)\n"
		"      --leader-elect-lease-name NAME       (default gpufleet-scheduler)\n"
		"      --leader-elect-namespace NS          (default: the service account's, else kube-system)\n"
		"      --leader-elect-identity ID           (default: hostname; \"_<random>\" is appended)\n"
		"      --leader-elect-lease-duration D      (default 15s)\n"
		"      --leader-elect-renew-deadline D      (default 10s)\n"
		"      --leader-elect-retry-period D        (default 2s)\n"
		"      --watch-pod-groups     read coscheduling PodGroups (scheduling.x-k8s.io/v1alpha1; the\n"
		"                             CRD must exist): with a --queue-policy other than kube, each\n"
		"                             gang is placed all or nothing\n"
		"      --watch-workload-groups  read the Workload API's PodGroups (scheduling.k8s.io/v1alpha2,\n"
		"                             KEP-4671; feature gate GenericWorkload): the same gang store\n"
		"      --queues               quotas: watch GPUQueue objects (gpufleet.io/v1alpha1; the CRD must\n"
		"                             exist) and namespaces' gpufleet.io/queue labels; pods are admitted\n"
		"                             within their Queue's quota (needs a --queue-policy other than kube)\n"
		"      --preemption[=on|off]  a pod that fits only by evicting pods of lower priority (or of\n"
		"                             Queues borrowing from its cohort) evicts them and is bound once they\n"
		"                             are gone (needs a --queue-policy other than kube; default off)\n"
		"      --preemption-timeout D how long a preemptor holds its place waiting for its victims to\n"
		"                             go (1s..1h, default 2m)\n"
		"  -h, --help                 this text\n"
		"      --version              the version and commit\n"
		"Durations: 30s, 5m, 1h30m (a plain number is seconds).  Deprecated spellings, still\n"
		"read: --address (--listen), --extender-address (--extender-listen), --preemption-wait\n"
		"(--preemption-timeout).  docs/cli.md.\n");
}

int gf_cmd_schedule(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "kubeconfig", required_argument, NULL, 'k' },
		{ "scheduler-name", required_argument, NULL, 'n' },
		{ "policy", required_argument, NULL, 'p' },
		{ "listen", required_argument, NULL, 'a' },
		{ "address", required_argument, NULL, OPT_ADDRESS },
		{ "extender-listen", required_argument, NULL, OPT_EXT_LISTEN },
		{ "extender-prefix", required_argument, NULL, 'e' },
		{ "extender-address", required_argument, NULL, 'E' },
		{ "extender-tls-cert-file", required_argument, NULL, 'C' },
		{ "extender-tls-private-key-file", required_argument, NULL, 'K' },
		{ "extender-client-ca-file", required_argument, NULL, 'A' },
		{ "extender-allowed-names", required_argument, NULL, 'N' },
		{ "extender-profiles", required_argument, NULL, 'P' },
		{ "extender-bind-wait", required_argument, NULL, 'W' },
		{ "no-standalone", no_argument, NULL, 'S' },
		{ "binders", required_argument, NULL, 'b' },
		{ "bind-order", required_argument, NULL, 'B' },
		{ "target-pct", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 's' },
		{ "seeds", required_argument, NULL, OPT_SEEDS },
		{ "verbose", no_argument, NULL, 'v' },
		{ "leader-elect", no_argument, NULL, 'L' },
		{ "leader-elect-lease-name", required_argument, NULL, 'Y' },
		{ "leader-elect-namespace", required_argument, NULL, 'M' },
		{ "leader-elect-identity", required_argument, NULL, 'I' },
		{ "leader-elect-lease-duration", required_argument, NULL, 'D' },
		{ "leader-elect-renew-deadline", required_argument, NULL, 'R' },
		{ "leader-elect-retry-period", required_argument, NULL, 'Q' },
		{ "watch-pod-groups", no_argument, NULL, 'G' },
		{ "watch-workload-groups", no_argument, NULL, 'J' },
		{ "queue-policy", required_argument, NULL, 'O' },
		{ "queues", no_argument, NULL, 'U' },
		{ "preemption", optional_argument, NULL, 'X' },
		{ "preemption-timeout", required_argument, NULL, OPT_PREEMPTION_TIMEOUT },
		{ "preemption-wait", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct gf_kube_sched_opts o = { .standalone = true, .seed = 42, .port = 10260, .ext_port = 10261 };
	const char *kubeconfig = NULL, *policy = "fgd";
	const char *tls_file[3] = { NULL, NULL, NULL }; /* cert, key, client CA */
	static const char *cns[64], *profiles[64];
	char host[256] = "", ehost[256] = "127.0.0.1";
	bool elect = false;
	const char *lease_name = "gpufleet-scheduler", *lease_ns = NULL, *identity = NULL;

	optind = 1;
	opterr = 0; /* ':' and '?' below say it in the words scripts and tests know */
	for (;;) {
		int at = optind; /* for gf_cli_option_error() */
		int opt = getopt_long(argc, argv, ":a:vh", longopts, NULL);
		unsigned long n;
		int64_t sec;

		if (opt == -1)
			break;
		switch (opt) {
		case 'h':
			usage(stdout);
			return 0;
		case 'k': kubeconfig = optarg; break;
		case 'n': o.scheduler_name = optarg; break;
		case 'p': policy = optarg; break;
		case 'S': o.standalone = false; break;
		case 'v': o.verbose = true; break;
		case OPT_ADDRESS:
			gf_cli_deprecated("schedule", "--address", "--listen");
			/* fall through */
		case 'a':
			if (!gf_cli_parse_address(optarg, host, sizeof(host), &o.port)) {
				fprintf(stderr, "gpufleet schedule: --%s wants [HOST]:PORT, got '%s'\n",
					opt == 'a' ? "listen" : "address", optarg);
				return 2;
			}
			break;
		case 'e':
			if (optarg[0] != '/' || strlen(optarg) > GF_EXT_PREFIX_MAX) {
				fprintf(stderr, "gpufleet schedule: --extender-prefix must start with '/' and be at most "
					"%d bytes (got %zu)\n", GF_EXT_PREFIX_MAX, strlen(optarg));
				return 2;
			}
			o.extender_prefix = optarg;
			break;
		case 'E':
			gf_cli_deprecated("schedule", "--extender-address", "--extender-listen");
			/* fall through */
		case OPT_EXT_LISTEN:
			if (!gf_cli_parse_address(optarg, ehost, sizeof(ehost), &o.ext_port)) {
				fprintf(stderr, "gpufleet schedule: --extender-%s wants [HOST]:PORT, got '%s'\n",
					opt == 'E' ? "address" : "listen", optarg);
				return 2;
			}
			break;
		case 'C': tls_file[0] = optarg; break;
		case 'K': tls_file[1] = optarg; break;
		case 'A': tls_file[2] = optarg; break;
		case 'N':
		case 'P':
			if (!gf_cli_parse_list(optarg, opt == 'N' ? cns : profiles,
					       opt == 'N' ? &o.n_ext_allowed_cns : &o.n_ext_profiles, 64)) {
				fprintf(stderr, "gpufleet schedule: --extender-%s: more than 64 names\n",
					opt == 'N' ? "allowed-names" : "profiles");
				return 2;
			}
			break;
		case 'W':
			if (!gf_cli_whole_seconds("schedule", "--extender-bind-wait", optarg, 1, GF_EXT_BIND_WAIT_MAX_S, &sec))
				return 2;
			o.ext_bind_wait_s = (int)sec;
			break;
		case 'b':
			if (!gf_cli_parse_ulong(optarg, 256, &n) || !n) {
				fprintf(stderr, "gpufleet schedule: --binders wants 1..256\n");
				return 2;
			}
			o.binders = (int)n;
			break;
		case 'B':
			if (strcmp(optarg, "node") && strcmp(optarg, "none")) {
				fprintf(stderr, "gpufleet schedule: --bind-order wants node or none, got '%s'\n", optarg);
				return 2;
			}
			o.unordered_binds = !strcmp(optarg, "none");
			break;
		case 't':
			if (!gf_cli_parse_ulong(optarg, 100, &n) || !n) {
				fprintf(stderr, "gpufleet schedule: --target-pct wants 1..100\n");
				return 2;
			}
			o.target_pct = (int)n;
			break;
		case 's':
		case OPT_SEEDS: {
			uint64_t seed;
			if (!gf_cli_one_seed("schedule", opt == 's' ? "--seed" : "--seeds", optarg, &seed) ||
			    seed > (unsigned long)-1)
				return 2;
			o.seed = (unsigned long)seed;
			break;
		}
		case 'L': elect = true; break;
		case 'G': o.pod_groups = true; break;
		case 'J': o.workload_groups = true; break;
		case 'U': o.queues = true; break;
		case 'X':
			if (!gf_cli_onoff("schedule", "--preemption", optarg, argc, argv, &o.preemption))
				return 2;
			break;
		case 'w':
			gf_cli_deprecated("schedule", "--preemption-wait", "--preemption-timeout");
			/* fall through */
		case OPT_PREEMPTION_TIMEOUT:
			if (!gf_cli_whole_seconds("schedule", opt == 'w' ? "--preemption-wait" : "--preemption-timeout",
						  optarg, 1, 3600, &sec))
				return 2;
			o.preempt_wait_s = (int)sec;
			break;
		case 'O': {
			enum gf_queue_policy qp;
			if (!gf_queue_policy_find(optarg, &qp)) {
				fprintf(stderr, "gpufleet schedule: --queue-policy: expected kube, strict-fifo, "
						"best-effort-fifo, backfill, conservative-backfill or per-queue, found \"%s\"\n", optarg);
				return 2;
			}
			o.queue_policy = (int)qp;
			break;
		}
		case 'Y': lease_name = optarg; break;
		case 'M': lease_ns = optarg; break;
		case 'I': identity = optarg; break;
		case 'D': case 'R': case 'Q': {
			if (!gf_cli_whole_seconds("schedule", opt == 'D' ? "--leader-elect-lease-duration"
						  : opt == 'R' ? "--leader-elect-renew-deadline" : "--leader-elect-retry-period",
						  optarg, 1, 3600, &sec))
				return 2;
			*(opt == 'D' ? &o.lease_s : opt == 'R' ? &o.renew_s : &o.retry_s) = (int)sec;
			break;
		}
		default: /* ':' no value, '?' unknown */
			return gf_cli_option_error("schedule", opt, argv, at);
		}
	}
	if (gf_cli_operands("schedule", argc, argv))
		return 2;
	if (o.queues && o.queue_policy == GF_QP_KUBE) {
		fprintf(stderr, "gpufleet schedule: --queues needs --queue-policy strict-fifo, best-effort-fifo, "
				"backfill, conservative-backfill or per-queue (kube places pod by pod, without quotas)\n");
		return 2;
	}
	if (o.preemption && o.queue_policy == GF_QP_KUBE) {
		fprintf(stderr, "gpufleet schedule: --preemption needs --queue-policy strict-fifo, best-effort-fifo, "
				"backfill, conservative-backfill or per-queue (kube places pod by pod, as kube-scheduler "
				"without preemption)\n");
		return 2;
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
	char ns_buf[256], id_buf[GF_LEASE_ID_MAX];
	if (elect) {
		int ls = o.lease_s ? o.lease_s : 15, rs = o.renew_s ? o.renew_s : 10, ps = o.retry_s ? o.retry_s : 2;
		if (rs >= ls - 1 || ps >= rs) {
			fprintf(stderr, "gpufleet schedule: leader election wants retry period < renew deadline "
					"< lease duration - 1 s (got %d, %d, %d)\n", ps, rs, ls);
			return 2;
		}
		if (!valid_lease_arg(lease_name) || (lease_ns && !valid_lease_arg(lease_ns))) {
			fprintf(stderr, "gpufleet schedule: --leader-elect-lease-name and --leader-elect-namespace "
					"want DNS names (lowercase letters, digits, '-', '.')\n");
			return 2;
		}
		if (!lease_ns)
			lease_ns = service_account_namespace(ns_buf, sizeof(ns_buf)) ? ns_buf : "kube-system";
		if (!identity)
			identity = default_identity(id_buf, sizeof(id_buf));
		o.lease_name = lease_name;
		o.lease_namespace = lease_ns;
		o.identity = identity;
	}
	o.ext_addr = ehost;
	o.ext_allowed_cns = cns;
	o.ext_profiles = profiles;
	char *pem[3] = { NULL, NULL, NULL };
	int rc = 1;
	for (int i = 0; i < 3; i++) {
		size_t len;
		if (tls_file[i] && gf_read_file(tls_file[i], &pem[i], &len))
			goto done;
	}
	o.ext_tls_cert_pem = pem[0];
	o.ext_tls_key_pem = pem[1];
	o.ext_client_ca_pem = pem[2];
	struct gf_kube_conn conn;
	if (gf_cli_kube_conn("schedule", kubeconfig, &conn))
		goto done;
	o.conn = &conn;
	o.stop = &stop_flag;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	char err[512] = "";
	gf_err e = gf_kube_scheduler_run(&o, err, sizeof(err));
	gf_kube_conn_release(&conn);
	if (e)
		fprintf(stderr, "gpufleet schedule: %s\n", err);
	else
		rc = 0;
done:
	for (int i = 0; i < 3; i++)
		free(pem[i]);
	return rc;
}
