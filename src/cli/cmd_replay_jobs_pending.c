/*
 * cli/cmd_replay_jobs_pending.c - stand-in for the job replay on the
 * wip/serving branch only: the job replay (cmd_replay_jobs.c) comes from
 * another branch.  The definition is weak so that branch's real one replaces
 * it at link time; the integrator deletes this file when both are merged.
 */
#include <stdio.h>

#include "cli/commands.h"

__attribute__((weak)) int gf_cmd_replay_jobs(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "gpufleet replay: the job replay is not in this build; "
			"'gpufleet replay --serving' replays serving traces\n");
	return 2;
}
