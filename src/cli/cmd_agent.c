/* cli/cmd_agent.c - placeholder while the node agent lands (same commit series). */
#include <stdio.h>
#include "cli/commands.h"
int gf_cmd_agent(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "gpufleet agent: not built yet\n");
	return 1;
}
