/*
 * cli/main.c - the gpufleet binary: dispatch to a subcommand.
 *
 * Wiring only: every subcommand lives in its own cli/cmd_*.c file and is
 * listed once in the table below.  --version is answered here, the same
 * way for every command ("gpufleet --version", "gpufleet cost --version");
 * each command answers -h/--help itself.  Usage errors exit 2 everywhere.
 */
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "simulate", gf_cmd_simulate, "replay a trace against the cluster under each placement policy" },
	{ "replay", gf_cmd_replay, "replay jobs in virtual time through the engine's queue (waits, gangs, backfill),\n"
				   "               or --serving: inference autoscalers with a cold start" },
	{ "schedule", gf_cmd_schedule, "Kubernetes GPU scheduler (schedulerName: gpufleet) and kube-scheduler extender" },
	{ "agent", gf_cmd_agent, "GPU node agent: dcgm-exporter compatible /metrics, pod attribution, topology" },
	{ "metrics-api", gf_cmd_metrics_api, "Kubernetes external metrics API: HPA on GPU metrics" },
	{ "cost", gf_cmd_cost, "GPU cost per namespace/label with shares counted right; OpenCost-shaped API" },
	{ "queue", gf_cmd_queue, "pods waiting per Queue: position, estimated start, why (reads the API server)" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
	fprintf(out, "usage: gpufleet <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'gpufleet <command> --help' describes a command's options; --version says which\n"
		     "gpufleet this is.  docs/cli.md: the options every command shares.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		gf_cli_print_version();
		return 0;
	}
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		if (gf_cli_wants_version(argc - 1, argv + 1)) {
			gf_cli_print_version();
			return 0;
		}
		return commands[i].run(argc - 1, argv + 1);
	}
	fprintf(stderr, "gpufleet: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
