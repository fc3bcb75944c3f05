/* cli/cmd_simulate.c - placeholder while the simulator lands (same commit series). */
#include <stdio.h>
#include "cli/commands.h"
int gf_cmd_simulate(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "gpufleet simulate: not built yet\n");
	return 1;
}
