/*
 * cli/cmd_agent.c - `gpufleet agent`: argument parsing and wiring only.
 *
 * Builds a gf_agent (src/agent), serves it with gfhttp on /metrics,
 * /health, /inventory and /, optionally publishes the inventory on the
 * Node object, and stops gracefully on SIGINT/SIGTERM.  The signals are
 * blocked before any thread starts and taken with sigtimedwait() in the
 * main thread, which also runs the periodic Node publish.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/cdi.h"
#include "agent/deviceplugin.h"
#include "agent/kube.h"
#include "agent/mig.h"
#include "agent/notice.h"
#include "cli/args.h"
#include "cli/files.h"
#include "cli/commands.h"
#include "core/build_info.h"
#include "core/duration.h"
#include "http/server.h"

/* Long options without a short letter. */
enum { OPT_ADDRESS = 256, OPT_INTERVAL, OPT_PUBLISH_INTERVAL, OPT_MIG_LAYOUT, OPT_MIG_FROM_NODE, OPT_MIG_INTERVAL,
       OPT_MIG_STATE, OPT_SPOT_NOTICE, OPT_METADATA_URL, OPT_NOTICE_INTERVAL };

#define METRICS_CAP (8u << 20) /* 8 MiB: 64 GPUs x 32 pods x 40 metrics fits */

struct opts {
	struct gf_agent_config cfg;
	const char *address;
	const char *node;
	const char *kubeconfig;
	bool once, inventory, publish, no_hostname;
	unsigned long publish_s;
	const char *cdi_dir;  /* write the CDI spec there at start (NULL = not) */
	const char *cdi_dev_root;
	bool cdi_spec;        /* write (or print) the CDI spec and exit */
	bool device_plugin, match_pods;
	struct gf_dp_config dp;
	const char *mig_layout; /* --mig-layout FILE (NULL = none) */
	bool mig_from_node, mig_state;
	unsigned long mig_s;
	struct gf_notice_config notice; /* --spot-notice: cloud != GF_NOTICE_NONE_CLOUD */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpufleet agent [options]\n"
		"GPU node agent: dcgm-exporter compatible metrics on /metrics, pod attribution,\n"
		"GPU inventory and topology (docs/agent.md).\n\n"
		"  -a, --listen [HOST]:PORT   listen address (default :9400; env DCGM_EXPORTER_LISTEN)\n"
		"      --interval D           max age of served values (default 1s; 0 = per scrape;\n"
		"                             env DCGM_EXPORTER_INTERVAL, in ms)\n"
		"      --nvml-lib PATH        NVML library (default libnvidia-ml.so.1; env GF_NVML_LIB)\n"
		"      --allow-no-nvml        serve an empty set when NVML is missing or fails\n"
		"      --no-kubernetes        no pod/namespace/container labels\n"
		"      --proc-root DIR        host /proc (default /proc; needs hostPID in a pod)\n"
		"      --log-root DIR         kubelet log root with containers/ and pods/ (default /var/log)\n"
		"      --sys-root DIR         sysfs root for NUMA nodes (default /sys)\n"
		"      --node-name NAME       node name (default $NODE_NAME, else the host name)\n"
		"      --no-hostname          omit the hostname label\n"
		"      --old-hostname-label   name it Hostname, as dcgm-exporter did before May 2026\n"
		"      --no-pcie-throughput   no DCGM_FI_PROF_PCIE_{TX,RX}_BYTES (NVML samples 20 ms per GPU)\n"
		"      --once                 print the metrics once to stdout and exit\n"
		"      --inventory            print the inventory/topology JSON and exit\n"
		"      --publish-node         publish GPU labels and topology annotation on the Node\n"
		"      --kubeconfig PATH      API server access (default: in-cluster service account)\n"
		"      --publish-interval D   republish period (default 5m)\n"
		"      --cdi                  write the GPUs' CDI spec into /var/run/cdi at start\n"
		"      --cdi-dir DIR          ... into DIR instead (implies --cdi)\n"
		"      --cdi-dev-root DIR     host folder of the nvidia device nodes (default /dev)\n"
		"      --cdi-spec             write the CDI spec (to --cdi-dir, else stdout) and exit\n"
		"      --device-plugin        serve nvidia.com/gpu and gpufleet.io/gpu-milli to the kubelet\n"
		"      --device-plugin-dir DIR  the kubelet's device-plugin folder\n"
		"                             (default /var/lib/kubelet/device-plugins)\n"
		"      --match-pods           admit an allocation only for the pending pod the scheduler\n"
		"                             assigned those GPUs (API access as --kubeconfig)\n"
		"      --pod-resources-socket PATH  the kubelet's pod-resources API, reconciled every 5 s with\n"
		"                             --match-pods (default /var/lib/kubelet/pod-resources/kubelet.sock)\n"
		"      --memcap-lib PATH      host path of libgpufleet-memcap.so: cap shares' GPU memory\n"
		"      --memcap-dir DIR       host folder for the shares' limit files (default\n"
		"                             /var/run/gpufleet/memcap)\n"
		"      --mig-layout FILE      apply this MIG layout (docs/mig-node.md) at start and every\n"
		"                             --mig-interval (the file is read again each time)\n"
		"      --mig-from-node        apply the node's gpufleet.io/mig-layout annotation (API access\n"
		"                             as --kubeconfig); the result goes to gpufleet.io/mig-state\n"
		"                             with --publish-node\n"
		"      --mig-interval D       how often the MIG layout is applied again (default 30s)\n"
		"      --mig-state            print the MIG state JSON (after --mig-layout) and exit\n"
		"      --watchdog             report processes of capped shares whose NVML memory passes\n"
		"                             the cap (gpufleet_watchdog_* metrics; needs hostPID)\n"
		"      --watchdog-kill        ... and SIGKILL them, largest first (needs CAP_KILL)\n"
		"      --watchdog-slack-mib N memory per process beyond the cap before it counts\n"
		"                             (CUDA contexts; default 512)\n"
		"      --spot-notice CLOUD    aws, gcp or azure: poll the node's metadata service and on a\n"
		"                             spot/maintenance notice set gpufleet.io/notice (annotation and\n"
		"                             NoSchedule taint) on the Node (API access as --kubeconfig)\n"
		"      --metadata-url URL     the metadata service (default http://169.254.169.254)\n"
		"      --notice-interval D    between polls (default 2s)\n"
		"  -h, --help                 this text\n"
		"      --version              the version and commit\n"
		"Durations: 30s, 5m, 1h30m, 250ms (a plain number is seconds).  Deprecated spellings,\n"
		"still read: --address (--listen), --interval-ms MS and -c MS (--interval),\n"
		"--publish-interval-s N (--publish-interval).  docs/cli.md.\n");
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'a' },
		{ "address", required_argument, NULL, OPT_ADDRESS },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "interval-ms", required_argument, NULL, 'c' },
		{ "publish-interval", required_argument, NULL, OPT_PUBLISH_INTERVAL },
		{ "nvml-lib", required_argument, NULL, 'l' },
		{ "allow-no-nvml", no_argument, NULL, 'N' },
		{ "no-kubernetes", no_argument, NULL, 'K' },
		{ "proc-root", required_argument, NULL, 'P' },
		{ "log-root", required_argument, NULL, 'L' },
		{ "sys-root", required_argument, NULL, 'Y' },
		{ "node-name", required_argument, NULL, 'n' },
		{ "no-hostname", no_argument, NULL, 'H' },
		{ "old-hostname-label", no_argument, NULL, 'O' },
		{ "no-pcie-throughput", no_argument, NULL, 'T' },
		{ "once", no_argument, NULL, '1' },
		{ "inventory", no_argument, NULL, 'i' },
		{ "publish-node", no_argument, NULL, 'p' },
		{ "kubeconfig", required_argument, NULL, 'k' },
		{ "publish-interval-s", required_argument, NULL, 'I' },
		{ "cdi", no_argument, NULL, 'C' },
		{ "cdi-dir", required_argument, NULL, 'D' },
		{ "cdi-dev-root", required_argument, NULL, 'R' },
		{ "cdi-spec", no_argument, NULL, 'S' },
		{ "device-plugin", no_argument, NULL, 'G' },
		{ "device-plugin-dir", required_argument, NULL, 'g' },
		{ "memcap-lib", required_argument, NULL, 'M' },
		{ "match-pods", no_argument, NULL, 'X' },
		{ "pod-resources-socket", required_argument, NULL, 'Q' },
		{ "memcap-dir", required_argument, NULL, 'm' },
		{ "watchdog", no_argument, NULL, 'W' },
		{ "watchdog-kill", no_argument, NULL, 'Z' },
		{ "watchdog-slack-mib", required_argument, NULL, 'z' },
		{ "mig-layout", required_argument, NULL, OPT_MIG_LAYOUT },
		{ "mig-from-node", no_argument, NULL, OPT_MIG_FROM_NODE },
		{ "mig-interval", required_argument, NULL, OPT_MIG_INTERVAL },
		{ "mig-state", no_argument, NULL, OPT_MIG_STATE },
		{ "spot-notice", required_argument, NULL, OPT_SPOT_NOTICE },
		{ "metadata-url", required_argument, NULL, OPT_METADATA_URL },
		{ "notice-interval", required_argument, NULL, OPT_NOTICE_INTERVAL },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};

	memset(o, 0, sizeof(*o));
	o->cfg.interval_ms = 1000;
	o->cfg.kubernetes = true;
	o->publish_s = 300;
	o->mig_s = 30;
	o->cfg.watchdog_slack = 512ull << 20;
	o->address = getenv("DCGM_EXPORTER_LISTEN");
	if (!o->address || !*o->address)
		o->address = ":9400";
	o->cfg.nvml_path = getenv("GF_NVML_LIB");
	const char *iv = getenv("DCGM_EXPORTER_INTERVAL"); /* dcgm-exporter's, in ms */
	unsigned long ivn;
	if (iv && *iv) {
		if (!gf_cli_parse_ulong(iv, 3600000, &ivn)) {
			fprintf(stderr, "gpufleet agent: DCGM_EXPORTER_INTERVAL: '%s' is not 0..3600000\n", iv);
			return 2;
		}
		o->cfg.interval_ms = (unsigned)ivn;
	}
	o->node = getenv("NODE_NAME");
	optind = 1;
	opterr = 0; /* ':' and '?' below say it in the words scripts and tests know */
	for (;;) {
		int at = optind; /* for gf_cli_option_error() */
		int opt = getopt_long(argc, argv, ":a:c:h", longopts, NULL);
		unsigned long n;

		if (opt == -1)
			break;
		switch (opt) {
		case 'h':
			usage(stdout);
			return -1;
		case OPT_ADDRESS:
			gf_cli_deprecated("agent", "--address", "--listen");
			/* fall through */
		case 'a': o->address = optarg; break;
		case 'l': o->cfg.nvml_path = optarg; break;
		case 'N': o->cfg.allow_no_nvml = true; break;
		case 'K': o->cfg.kubernetes = false; break;
		case 'P': o->cfg.proc_root = optarg; break;
		case 'L': o->cfg.log_root = optarg; break;
		case 'Y': o->cfg.sys_root = optarg; break;
		case 'n': o->node = optarg; break;
		case 'H': o->no_hostname = true; break;
		case 'O': o->cfg.old_hostname_label = true; break;
		case 'T': o->cfg.no_pcie_throughput = true; break;
		case '1': o->once = true; break;
		case 'i': o->inventory = true; break;
		case 'p': o->publish = true; break;
		case 'k': o->kubeconfig = optarg; break;
		case 'C': if (!o->cdi_dir) o->cdi_dir = "/var/run/cdi"; break;
		case 'D': o->cdi_dir = optarg; break;
		case 'R': o->cdi_dev_root = optarg; break;
		case 'S': o->cdi_spec = true; break;
		case 'G': o->device_plugin = true; break;
		case 'g': o->dp.plugin_dir = optarg; break;
		case 'M': o->dp.memcap_lib = optarg; break;
		case 'X': o->match_pods = true; break;
		case 'Q': o->dp.podres_socket = optarg; break;
		case 'm': o->dp.memcap_dir = optarg; break;
		case 'W': o->cfg.watchdog = true; break;
		case 'Z': o->cfg.watchdog = o->cfg.watchdog_kill = true; break;
		case 'z':
			if (!gf_cli_parse_ulong(optarg, 1u << 20, &n)) {
				fprintf(stderr, "gpufleet agent: --watchdog-slack-mib: '%s' is not 0..1048576\n", optarg);
				return 2;
			}
			o->cfg.watchdog_slack = (unsigned long long)n << 20;
			break;
		case OPT_SPOT_NOTICE:
			if (!gf_notice_cloud_parse(optarg, &o->notice.cloud)) {
				fprintf(stderr, "gpufleet agent: --spot-notice: '%s' is not aws, gcp or azure\n", optarg);
				return 2;
			}
			break;
		case OPT_METADATA_URL: o->notice.metadata_url = optarg; break;
		case OPT_NOTICE_INTERVAL: {
			int64_t ms;
			if (!gf_cli_duration("agent", "--notice-interval", optarg, GF_MS_PER_S, 100, 60 * GF_MS_PER_S, &ms))
				return 2;
			o->notice.interval_ms = (unsigned)ms;
			break;
		}
		case 'c':
		case OPT_INTERVAL: {
			bool old = opt == 'c'; /* --interval-ms or -c: a plain number is milliseconds */
			int64_t ms;
			if (old)
				gf_cli_deprecated("agent", "--interval-ms (-c)", "--interval (e.g. --interval 500ms)");
			if (!gf_cli_duration("agent", old ? "--interval-ms" : "--interval", optarg,
					     old ? 1 : GF_MS_PER_S, 0, GF_MS_PER_H, &ms))
				return 2;
			o->cfg.interval_ms = (unsigned)ms;
			break;
		}
		case 'I':
		case OPT_PUBLISH_INTERVAL: {
			int64_t sec;
			if (opt == 'I')
				gf_cli_deprecated("agent", "--publish-interval-s", "--publish-interval");
			if (!gf_cli_whole_seconds("agent", opt == 'I' ? "--publish-interval-s" : "--publish-interval", optarg,
					    1, 86400, &sec))
				return 2;
			o->publish_s = (unsigned long)sec;
			break;
		}
		case OPT_MIG_LAYOUT: o->mig_layout = optarg; break;
		case OPT_MIG_FROM_NODE: o->mig_from_node = true; break;
		case OPT_MIG_STATE: o->mig_state = true; break;
		case OPT_MIG_INTERVAL: {
			int64_t sec;
			if (!gf_cli_whole_seconds("agent", "--mig-interval", optarg, 1, 86400, &sec))
				return 2;
			o->mig_s = (unsigned long)sec;
			break;
		}
		default: /* ':' no value, '?' unknown */
			return gf_cli_option_error("agent", opt, argv, at);
		}
	}
	if (gf_cli_operands("agent", argc, argv))
		return 2;
	if ((o->notice.metadata_url || o->notice.interval_ms) && !o->notice.cloud) {
		fprintf(stderr, "gpufleet agent: --metadata-url and --notice-interval need --spot-notice\n");
		return 2;
	}
	return 0;
}

struct serve_ctx {
	gf_agent *agent;
	const char *node;
	gf_dp *dp; /* NULL without --device-plugin; set before serving */
	gf_notice *notice; /* NULL without --spot-notice */
};

static void h_metrics(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	struct serve_ctx *c = ud;
	(void)req;
	resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
	gf_err e = gf_agent_render_metrics(c->agent, &resp->body);
	if (!e)
		gf_dp_render_metrics(c->dp, &resp->body);
	if (!e)
		gf_notice_render_metrics(c->notice, &resp->body);
	if (!e)
		gf_build_info_render(&resp->body);
	if (e)
		gf_http_response_error(resp, 500, "metrics: %s", gf_strerror(e));
}

static void h_inventory(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	struct serve_ctx *c = ud;
	(void)req;
	resp->content_type = "application/json";
	gf_err e = gf_agent_render_inventory(c->agent, c->node, &resp->body);
	if (e)
		gf_http_response_error(resp, 500, "inventory: %s", gf_strerror(e));
}

static void h_health(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	(void)ud;
	(void)req;
	gf_obuf_puts(&resp->body, "ok\n");
}

static void h_index(void *ud, const struct gf_http_request *req, struct gf_http_response *resp)
{
	(void)ud;
	(void)req;
	resp->content_type = "text/html; charset=utf-8";
	gf_obuf_puts(&resp->body, "<html><head><title>gpufleet agent</title></head><body>"
				  "<h1>gpufleet agent</h1><p><a href=\"/metrics\">Metrics</a> "
				  "<a href=\"/inventory\">Inventory</a> "
				  "<a href=\"/health\">Health</a></p></body></html>\n");
}

static int print_once(gf_agent *a, const struct opts *o)
{
	struct gf_obuf b;
	gf_obuf_init(&b, METRICS_CAP);
	gf_err e = o->inventory ? gf_agent_render_inventory(a, o->node, &b)
				: gf_agent_render_metrics(a, &b);
	if (!e && b.len)
		fwrite(b.data, 1, b.len, stdout);
	if (o->inventory)
		putchar('\n');
	gf_obuf_release(&b);
	if (e) {
		fprintf(stderr, "gpufleet agent: %s\n", gf_strerror(e));
		return 1;
	}
	return 0;
}

/* The CDI spec: printed (no --cdi-dir) or written atomically into the
 * folder.  0, or 1 after one message naming the cause. */
static int cdi(gf_agent *a, const struct opts *o)
{
	char err[512];
	struct gf_obuf b;
	gf_obuf_init(&b, 1u << 20);
	gf_err e = gf_agent_render_cdi(a, o->cdi_dev_root, &b, err, sizeof(err));
	if (!e && o->cdi_dir)
		e = gf_cdi_write(o->cdi_dir, b.data, b.len, err, sizeof(err));
	else if (!e)
		fwrite(b.data, 1, b.len, stdout);
	if (!e && o->cdi_dir)
		fprintf(stderr, "gpufleet agent: CDI spec for %u GPU(s) written to %s/%s\n", gf_agent_gpu_count(a),
			o->cdi_dir, GF_CDI_SPEC_FILE);
	gf_obuf_release(&b);
	if (e) {
		fprintf(stderr, "gpufleet agent: CDI: %s\n", err);
		return 1;
	}
	return 0;
}

/* One MIG pass: the layout from --mig-layout FILE or the node's annotation,
 * applied; its summary logged.  0, 1 when there was nothing valid to apply
 * (logged), -1 when a --mig-layout file is unreadable or invalid. */
static int mig_pass(gf_agent *a, const struct opts *o, const struct gf_kube_conn *kc)
{
	char err[600];
	struct gf_nodemig_layout *l = malloc(sizeof(*l));
	struct gf_nodemig_state *st = malloc(sizeof(*st));
	int rc = 1;
	if (!l || !st)
		goto out;
	if (o->mig_layout) {
		char *text = NULL;
		size_t len = 0;
		rc = -1;
		if (gf_read_file(o->mig_layout, &text, &len) != 0)
			goto out;
		gf_err e = gf_nodemig_layout_parse(text, len, l, err, sizeof(err));
		free(text);
		if (e) {
			fprintf(stderr, "gpufleet agent: --mig-layout %s: %s\n", o->mig_layout, err);
			goto out;
		}
	} else {
		bool present = false;
		gf_err e = gf_agent_fetch_mig_layout(kc, o->node, l, &present, err, sizeof(err));
		if (e || !present) {
			if (e)
				fprintf(stderr, "gpufleet agent: MIG layout not applied: %s\n", err);
			goto out;
		}
	}
	gf_err e = gf_agent_mig_apply(a, l, st);
	fprintf(stderr,
		"gpufleet agent: MIG layout from %s applied: %u created, %u destroyed, %u kept in use, %u failed%s\n",
		o->mig_layout ? o->mig_layout : "the node annotation " GF_ANN_MIG_LAYOUT, st->created, st->destroyed,
		st->refused, st->failed, e == GF_NOENT ? " (a GPU of the layout is not on this node)" : "");
	if (o->cdi_dir && (st->created || st->destroyed))
		cdi(a, o); /* the MIG devices' CDI names changed */
	rc = 0;
out:
	free(l);
	free(st);
	return rc;
}

/* The MIG state JSON on stdout. */
static int print_mig_state(gf_agent *a)
{
	struct gf_nodemig_state *st = malloc(sizeof(*st));
	struct gf_obuf b;
	gf_obuf_init(&b, 1u << 20);
	if (!st)
		return 1;
	gf_agent_mig_state(a, st);
	gf_err e = gf_nodemig_state_render(st, &b);
	if (!e)
		printf("%s\n", b.data);
	gf_obuf_release(&b);
	free(st);
	return e ? 1 : 0;
}

static void publish(gf_agent *a, const struct opts *o, const struct gf_kube_conn *kc)
{
	char err[512];
	gf_agent_learn_served(a, kc);	/* the served models for gpufleet.io/models-seen */
	gf_err e = gf_agent_publish_node(a, kc, o->node, err, sizeof(err));
	if (e)
		fprintf(stderr, "gpufleet agent: publishing on node %s failed: %s\n", o->node, err);
	else
		fprintf(stderr, "gpufleet agent: published GPU labels and topology on node %s\n", o->node);
}

int gf_cmd_agent(int argc, char **argv)
{
	struct opts o;
	int rc = parse_opts(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;
	char hostbuf[256] = "";
	if (!o.node || !*o.node) {
		if (gethostname(hostbuf, sizeof(hostbuf) - 1) == 0)
			o.node = hostbuf;
		else
			o.node = "";
	}
	o.cfg.hostname = o.no_hostname ? NULL : o.node;
	char host[64];
	uint16_t port;
	if (!gf_cli_parse_address(o.address, host, sizeof(host), &port)) {
		fprintf(stderr, "gpufleet agent: --listen: '%s' is not [HOST]:PORT\n", o.address);
		return 2;
	}

	/* Block the stop signals before any thread exists; taken below. */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);

	char err[512];
	gf_agent *agent;
	gf_err e = gf_agent_create(&o.cfg, &agent, err, sizeof(err));
	if (e) {
		/* One line: the cause, and for NVML problems what to check. */
		bool nvml = e == GF_NOENT || e == GF_UNAVAILABLE || e == GF_UNSUPPORTED;
		fprintf(stderr, "gpufleet agent: %s%s\n", err,
			nvml ? " (is the NVIDIA driver installed and its library visible: NVIDIA runtime, "
			       "--nvml-lib, LD_LIBRARY_PATH? --allow-no-nvml serves an empty set instead)"
			     : "");
		return 1;
	}
	bool mig = o.mig_layout || o.mig_from_node;
	if (o.mig_layout && mig_pass(agent, &o, NULL) < 0) {
		gf_agent_destroy(agent);
		return 2;
	}
	if (o.mig_state) {
		rc = print_mig_state(agent);
		gf_agent_destroy(agent);
		return rc;
	}
	if (o.once || o.inventory || o.cdi_spec) {
		rc = o.cdi_spec ? cdi(agent, &o) : print_once(agent, &o);
		gf_agent_destroy(agent);
		return rc;
	}
	if (o.cdi_dir && cdi(agent, &o) != 0) {
		gf_agent_destroy(agent);
		return 1;
	}

	struct gf_kube_conn kc;
	bool have_kube = false;
	if (o.publish || (o.device_plugin && o.match_pods) || o.mig_from_node || o.notice.cloud) {
		e = gf_kube_conn_open(&kc, o.kubeconfig, err, sizeof(err));
		if (e) {
			fprintf(stderr, "gpufleet agent: %s: %s\n",
				o.publish ? "--publish-node" : o.mig_from_node ? "--mig-from-node"
				: o.notice.cloud ? "--spot-notice" : "--match-pods", err);
			gf_agent_destroy(agent);
			return 1;
		}
		have_kube = true;
	}
	if (o.mig_from_node && !o.mig_layout)
		mig_pass(agent, &o, &kc); /* before the device plugin lists the MIG devices */

	gf_dp *dp = NULL;
	if (o.device_plugin) {
		if (o.match_pods) {
			o.dp.kube = &kc;
			o.dp.node = o.node;
		}
		e = gf_dp_start(agent, &o.dp, &dp, err, sizeof(err));
		if (e && !dp) {
			fprintf(stderr, "gpufleet agent: device plugin: %s\n", err);
			if (have_kube)
				gf_kube_conn_release(&kc);
			gf_agent_destroy(agent);
			return 1;
		}
		if (e) /* the kubelet is not there (yet): retried every second */
			fprintf(stderr, "gpufleet agent: device plugin: %s (retrying every second)\n", err);
	}

	gf_notice *notice = NULL;
	if (o.notice.cloud) {
		o.notice.kube = &kc;
		o.notice.node = o.node;
		e = gf_notice_create(&o.notice, &notice, err, sizeof(err));
		if (!e && (e = gf_notice_start(notice)) != GF_OK)
			snprintf(err, sizeof(err), "%s", gf_strerror(e));
		if (e) {
			fprintf(stderr, "gpufleet agent: --spot-notice: %s\n", err);
			gf_notice_destroy(notice);
			gf_dp_stop(dp);
			gf_kube_conn_release(&kc);
			gf_agent_destroy(agent);
			return 1;
		}
	}

	struct serve_ctx ctx = { agent, o.node, dp, notice };
	const struct gf_http_route routes[] = {
		{ "GET", "/metrics", h_metrics, &ctx },
		{ "GET", "/inventory", h_inventory, &ctx },
		{ "GET", "/health", h_health, &ctx },
		{ "GET", "/", h_index, &ctx },
	};
	struct gf_http_config hc = {
		.bind_addr = host,
		.port = port,
		.routes = routes,
		.nroutes = sizeof(routes) / sizeof(routes[0]),
		.max_body = 4096,
		.max_response = METRICS_CAP,
	};
	gf_http_server *srv;
	e = gf_http_server_create(&hc, &srv);
	if (e) {
		fprintf(stderr, "gpufleet agent: cannot listen on %s: %s\n", o.address, gf_strerror(e));
		gf_notice_destroy(notice);
		gf_dp_stop(dp);
		if (have_kube)
			gf_kube_conn_release(&kc);
		gf_agent_destroy(agent);
		return 1;
	}
	fprintf(stderr, "gpufleet agent: %u GPUs, serving on http://%s:%u/metrics\n",
		gf_agent_gpu_count(agent), host[0] ? host : "0.0.0.0", gf_http_server_port(srv));

	if (o.publish)
		publish(agent, &o, &kc);
	/* Two periods on one wait: the node publish and the MIG pass (which
	 * publishes at once when it changed something, so the scheduler reads
	 * gpufleet.io/mig-state without waiting for the next publish). */
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	time_t next_pub = t0.tv_sec + (time_t)o.publish_s, next_mig = t0.tv_sec + (time_t)o.mig_s;
	for (;;) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		time_t wait = o.publish ? next_pub - now.tv_sec : 3600;
		if (mig && next_mig - now.tv_sec < wait)
			wait = next_mig - now.tv_sec;
		struct timespec ts = { wait > 0 ? wait : 0, wait > 0 ? 0 : 1000000 };
		int sig = sigtimedwait(&sigs, NULL, &ts);
		if (sig == SIGINT || sig == SIGTERM)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (mig && now.tv_sec >= next_mig) {
			next_mig = now.tv_sec + (time_t)o.mig_s;
			if (mig_pass(agent, &o, have_kube ? &kc : NULL) == 0 && o.publish)
				next_pub = now.tv_sec; /* report the applied state now */
		}
		if (o.publish && now.tv_sec >= next_pub) {
			next_pub = now.tv_sec + (time_t)o.publish_s;
			publish(agent, &o, &kc);
		}
	}
	fprintf(stderr, "gpufleet agent: stopping\n");
	gf_notice_destroy(notice);
	gf_dp_stop(dp);
	gf_http_server_destroy(srv);
	if (have_kube)
		gf_kube_conn_release(&kc);
	gf_agent_destroy(agent);
	return 0;
}
