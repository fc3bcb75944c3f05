/*
 * agent/mig.h - the node side of MIG: the desired layout of a node's MIG
 * GPUs, applied through NVML's MIG calls, and the state reported back.
 *
 * Layout (node annotation gpufleet.io/mig-layout, or `gpufleet agent
 * --mig-layout FILE`): a JSON object, one member per managed GPU, named by
 * its UUID, holding the GPU instances it must have:
 *
 *   {"GPU-5b2c...":[{"profile":"3g.40gb","start":4},{"profile":"1g.10gb","start":0}]}
 *
 * Validated strictly (gf_nodemig_layout_parse): at most GF_NODEMIG_LAYOUT_MAX
 * bytes, an object of at most GF_NODEMIG_MAX_GPUS distinct GPU UUIDs
 * ("GPU-" + letters, digits, '-'), each an array of at most
 * GF_NODEMIG_MAX_INST objects with exactly the members "profile" (NVIDIA's
 * name, <1-8>g.<N>gb with an optional "+me") and "start" (an integer
 * 0..7), no two at the same start.  Whether a start is legal for the
 * profile, and overlaps, are the GPU model's (NVML's) to say, at apply
 * time.  A GPU left out of the layout is not touched.
 *
 * Apply (gf_nodemig_apply), per GPU of the layout: MIG mode enabled if it is
 * not; instances not in the layout destroyed (compute instances first)
 * unless in use (a process in the GPU instance per NVML, or the caller's
 * in_use callback says a container holds its MIG device): an instance in
 * use is kept, and said so in the log and the state; then the missing
 * instances created at their start (nvmlDeviceCreateGpuInstanceWithPlacement)
 * with one compute instance of the full size.  Applying the same layout
 * again changes nothing: this is what keeps the layout across agent
 * restarts (the instances themselves live in the driver).
 *
 * State (node annotation gpufleet.io/mig-state, gf_nodemig_state_render): the
 * layout's shape for every MIG-enabled GPU, each instance with its MIG
 * device UUID, GPU-instance id and whether it is in use; an instance kept
 * against the layout carries "unwanted":true and "reason"; one the layout
 * asks for but that could not be made carries no UUID and "error".
 *
 *   {"GPU-5b2c...":[{"profile":"3g.40gb","start":4,"gi":1,"uuid":"MIG-...","inUse":false}]}
 *
 * Ownership: all structs are plain values, no heap; NVML must be open.
 * gf_nodemig_apply and gf_nodemig_read use static scratch space: one call at a
 * time (the agent makes them under its lock).
 */
#ifndef GF_AGENT_MIG_H
#define GF_AGENT_MIG_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/nvml.h"
#include "core/error.h"
#include "core/obuf.h"

#define GF_NODEMIG_MAX_GPUS 64
#define GF_NODEMIG_MAX_INST 8         /* per GPU: 7 on A100/H100/H200 */
#define GF_NODEMIG_LAYOUT_MAX 65536   /* bytes of layout JSON */
#define GF_NODEMIG_PROFILE_LEN 32

struct gf_nodemig_want {
	char profile[GF_NODEMIG_PROFILE_LEN]; /* "3g.40gb" */
	unsigned start;                   /* memory slice 0..7 */
};

struct gf_nodemig_gpu {
	char uuid[GF_NVML_UUID_LEN];
	struct gf_nodemig_want inst[GF_NODEMIG_MAX_INST];
	unsigned n;
};

struct gf_nodemig_layout {
	struct gf_nodemig_gpu gpu[GF_NODEMIG_MAX_GPUS];
	unsigned n;
};

/* Parse and validate a layout (len bytes, need not be NUL-terminated).
 * GF_OK, or GF_INVAL with err naming the JSON path and what was expected
 * (e.g. "$[\"GPU-1\"][2].start: expected an integer 0..7"). */
gf_err gf_nodemig_layout_parse(const char *text, size_t len, struct gf_nodemig_layout *out, char *err, size_t errlen);

/* Render a layout back as compact JSON (parse(render(l)) == l). */
gf_err gf_nodemig_layout_render(const struct gf_nodemig_layout *l, struct gf_obuf *out);

struct gf_nodemig_inst {
	char profile[GF_NODEMIG_PROFILE_LEN];
	unsigned start;
	unsigned gi;                 /* GPU instance id; meaningless when !made */
	bool made;                   /* exists on the GPU (else: wanted, not made) */
	char uuid[GF_NVML_UUID_LEN]; /* "MIG-..."; "" without a compute instance */
	bool in_use;
	bool unwanted;               /* not in the layout, kept (reason says why) */
	char reason[160];            /* why kept, or why not made ("error" in JSON) */
};

struct gf_nodemig_gpu_state {
	char uuid[GF_NVML_UUID_LEN];
	struct gf_nodemig_inst inst[GF_NODEMIG_MAX_INST * 2];
	unsigned n;
};

struct gf_nodemig_state {
	struct gf_nodemig_gpu_state gpu[GF_NODEMIG_MAX_GPUS];
	unsigned n;
	/* What the last gf_nodemig_apply did. */
	unsigned created, destroyed, refused, failed;
};

/* Whether a container holds the MIG device `mig_uuid` (beyond the processes
 * NVML sees): the device plugin's allocations.  NULL = none known. */
typedef bool (*gf_nodemig_in_use_fn)(void *ud, const char *mig_uuid);

/* Apply the layout (see above); log lines ("gpufleet agent: MIG: ...") go
 * to stderr.  out gets the state after the changes (as gf_nodemig_read).
 * GF_OK even when some instances were refused or failed (counted in out and
 * described per instance); GF_NOENT when a GPU of the layout is not on this
 * node (the others are still applied). */
gf_err gf_nodemig_apply(struct gf_nvml *n, const struct gf_nodemig_layout *want, gf_nodemig_in_use_fn in_use, void *ud,
		    struct gf_nodemig_state *out);

/* Read the MIG instances of every MIG-enabled GPU (no layout: none unwanted). */
void gf_nodemig_read(struct gf_nvml *n, gf_nodemig_in_use_fn in_use, void *ud, struct gf_nodemig_state *out);

/* The state as compact JSON (the gpufleet.io/mig-state annotation). */
gf_err gf_nodemig_state_render(const struct gf_nodemig_state *s, struct gf_obuf *out);

#endif /* GF_AGENT_MIG_H */
