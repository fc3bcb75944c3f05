/*
 * cli/cmd_replay.c - `gpufleet replay`: a tiny dispatcher.
 *
 * `replay --serving ...` replays an inference-serving trace
 * (gf_cmd_replay_serving, cli/cmd_replay_serving.c); `replay --spot` or
 * `--spot-trace FILE` replays jobs on spot capacity (gf_cmd_replay_spot,
 * cli/cmd_replay_spot.c); `replay --autoscale` buys nodes on request
 * (gf_cmd_replay_autoscale, cli/cmd_replay_autoscale.c); anything else replays
 * jobs through the engine's queue (gf_cmd_replay_jobs, cli/cmd_replay_jobs.c).
 */
#include <string.h>

#include "cli/commands.h"

int gf_cmd_replay(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--serving"))
			return gf_cmd_replay_serving(argc, argv);
		if (!strcmp(argv[i], "--spot") || !strncmp(argv[i], "--spot-trace", 12))
			return gf_cmd_replay_spot(argc, argv);
		if (!strcmp(argv[i], "--autoscale"))
			return gf_cmd_replay_autoscale(argc, argv);
	}
	return gf_cmd_replay_jobs(argc, argv);
}
