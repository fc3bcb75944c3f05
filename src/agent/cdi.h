/*
 * agent/cdi.h - the CDI (Container Device Interface) spec of the node's GPUs,
 * written by the agent so that a CDI-enabled runtime (containerd 2.x, CRI-O,
 * Podman; runc through a CDI library) injects exactly the GPUs a container
 * was given.  Kind `gpufleet.io/gpu`; one device per GPU named by its UUID
 * (`gpufleet.io/gpu=GPU-...`) plus `gpufleet.io/gpu=all`.  Each device
 * carries its /dev/nvidiaN node; the spec-wide edits carry the control nodes
 * (/dev/nvidiactl, /dev/nvidia-uvm, /dev/nvidia-uvm-tools, those that exist)
 * and NVIDIA_VISIBLE_DEVICES=void, so that an nvidia-container-runtime hook,
 * if one is installed too, does not add every GPU.  The driver's user-space
 * libraries are not injected (see docs/agent.md).
 */
#ifndef GF_AGENT_CDI_H
#define GF_AGENT_CDI_H

#include <stddef.h>

#include "core/error.h"
#include "core/obuf.h"

#define GF_CDI_KIND "gpufleet.io/gpu"
#define GF_CDI_SPEC_FILE "gpufleet.io-gpu.json"
#define GF_CDI_NVIDIA_MAJOR 195 /* /dev/nvidiaN and /dev/nvidiactl (255) */

struct gf_cdi_gpu {
	const char *uuid; /* "GPU-..." (CDI device names allow [A-Za-z0-9_.:-]) */
	unsigned minor;   /* N of /dev/nvidiaN */
};

/* Renders the spec as JSON into out.  dev_root: the host folder holding the
 * device nodes (NULL = "/dev"); nodes are stat()ed there for their numbers
 * (a GPU node that is missing is written as char 195:minor; a control node
 * that is missing is left out), and when dev_root is not /dev each node
 * gets hostPath = dev_root/name.  GF_INVAL (message in err) for a UUID a
 * CDI device name cannot hold; GF_NOMEM / GF_TOOBIG from the buffer. */
gf_err gf_cdi_render(const struct gf_cdi_gpu *gpus, unsigned n, const char *dev_root, struct gf_obuf *out,
		     char *err, size_t errlen);

/* Writes spec (len bytes) to dir/GF_CDI_SPEC_FILE atomically: a temporary
 * file in dir, fsync, rename.  dir must exist.  GF_IO with "path: why" in err. */
gf_err gf_cdi_write(const char *dir, const char *spec, size_t len, char *err, size_t errlen);

#endif
