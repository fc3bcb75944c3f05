/*
 * fuzz/fuzz_mig_layout.c - the MIG layout parser (agent/mig.h,
 * gf_nodemig_layout_parse: the gpufleet.io/mig-layout node annotation and
 * --mig-layout files).  Invariants: no crash or leak; a rejection's message
 * names a JSON path ("$..."); an accepted layout has at most 64 distinct
 * GPU UUIDs starting "GPU-", at most 8 instances each at distinct starts
 * 0..7, and renders to a document that parses back to the same layout.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/mig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gf_nodemig_layout l, l2;
	char err[512];
	if (gf_nodemig_layout_parse((const char *)data, size, &l, err, sizeof(err)) != GF_OK) {
		if (err[0] != '$' || l.n != 0)
			abort();
		return 0;
	}
	if (l.n > GF_NODEMIG_MAX_GPUS)
		abort();
	for (unsigned i = 0; i < l.n; i++) {
		if (strncmp(l.gpu[i].uuid, "GPU-", 4) || l.gpu[i].n > GF_NODEMIG_MAX_INST)
			abort();
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(l.gpu[i].uuid, l.gpu[j].uuid))
				abort();
		for (unsigned k = 0; k < l.gpu[i].n; k++) {
			if (l.gpu[i].inst[k].start > 7 || !l.gpu[i].inst[k].profile[0])
				abort();
			for (unsigned m = 0; m < k; m++)
				if (l.gpu[i].inst[m].start == l.gpu[i].inst[k].start)
					abort();
		}
	}
	struct gf_obuf b;
	gf_obuf_init(&b, 1 << 20);
	if (gf_nodemig_layout_render(&l, &b) != GF_OK ||
	    gf_nodemig_layout_parse(b.data, b.len, &l2, err, sizeof(err)) != GF_OK || memcmp(&l, &l2, sizeof(l)))
		abort();
	gf_obuf_release(&b);
	return 0;
}
