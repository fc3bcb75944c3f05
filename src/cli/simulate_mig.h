/*
 * cli/simulate_mig.h - `gpufleet simulate --mig`: the openb experiment on MIG GPUs.
 */
#ifndef GF_CLI_SIMULATE_MIG_H
#define GF_CLI_SIMULATE_MIG_H

#include <stdbool.h>
#include <stdint.h>

#include "core/features.h"

struct gf_cli_mig_opts {
	const char *nodes_path, *pods_path;
	const uint64_t *seeds;
	int nseeds;
	const char *seeds_arg;	/* as typed, for the title */
	double tune;
	int threads;
	bool quiet;
	const char *csv_path;	/* --mig-csv; NULL: none */
	struct gf_features feat;
};

/*
 * Run every layout (mig-parted's static ones, dynamic-first, dynamic, milli)
 * for every seed, print the table and write the CSV.  Returns the exit
 * status: 0, 1 (nothing placed), 2 (bad input, an engine error; a message
 * on stderr).
 */
int gf_cli_simulate_mig(const struct gf_cli_mig_opts *o);

#endif /* GF_CLI_SIMULATE_MIG_H */
