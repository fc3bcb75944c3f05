/*
 * tests/agent/fake_state.h - the scripted state of the FAKE NVML.
 *
 * The fake libnvidia-ml (fake_nvml.c) answers NVML calls from a text file
 * named by $GF_FAKE_NVML_STATE.  One directive per line, '#' comments,
 * tokens separated by blanks, values "quoted" when they hold blanks:
 *
 *   driver 550.54.15
 *   init_error 9                       nvmlInit returns this NVML code
 *   gpu IDX key=value ...              a GPU (IDX 0..63, in order)
 *       uuid name bus numa mem_total_mib mem_used_mib mem_reserved_mib
 *       util_gpu util_mem enc_util dec_util sm_clock mem_clock power_mw
 *       energy_mj temp mem_temp pcie_replay pcie_tx_kbps pcie_rx_kbps
 *       ecc_sbe_vol ecc_dbe_vol ecc_sbe_agg ecc_dbe_agg remap_corr
 *       remap_unc remap_pending remap_failed retired_sbe retired_dbe
 *       retired_pending nvlink_tx_kib nvlink_rx_kib mig
 *       lost=1                         every call on it: GPU_IS_LOST
 *       lost_after=N                   GPU_IS_LOST after N calls on it
 *       lost_at=T                      GPU_IS_LOST from Unix time T (seconds) on
 *     A numeric key left out means NOT_SUPPORTED for that reading.
 *   proc GPU pid=PID mem_mib=N [gi=ID] a compute process on GPU (in MIG instance ID)
 *   nvlink GPU_A GPU_B links=N         N active NVLinks between them
 *   topo GPU_A GPU_B LEVEL             common ancestor (10,20,30,40,50)
 *   xid GPU CODE                       an XID event, delivered once
 *   mig GPU gi=ID uuid=MIG-... profile=1g.10gb mem_mib=N
 *                                      a scripted (read-only) MIG instance
 *
 * MIG made through the API (nvmlDeviceSetMigMode, GPU and compute
 * instances) is the fake driver's own state, kept in a second file
 * ($GF_FAKE_NVML_MIG_STATE, default "<this file>.mig"): see fake_mig.h.
 * The `mig` key of a gpu is its MIG mode until the API sets one.
 *
 * The fake re-reads the file when its mtime or size changes (checked at
 * most every 20 ms), so a test can change the GPUs while the agent runs.
 * Limits: 64 GPUs, 64 processes and 8 MIG instances per GPU, 64 pending
 * XIDs, 4 KiB lines.
 */
#ifndef GF_TESTS_FAKE_STATE_H
#define GF_TESTS_FAKE_STATE_H

#include <stdbool.h>
#include <stddef.h>

#define FAKE_MAX_GPUS 64
#define FAKE_MAX_PROCS 64
#define FAKE_MAX_MIG 8
#define FAKE_MAX_XID 64
#define FAKE_MAX_LINE 4096

#define FAKE_NUM_KEYS(X)                                                              \
	X(numa) X(mem_total_mib) X(mem_used_mib) X(mem_reserved_mib) X(util_gpu)     \
	X(util_mem) X(enc_util) X(dec_util) X(sm_clock) X(mem_clock) X(power_mw)      \
	X(energy_mj) X(temp) X(mem_temp) X(pcie_replay) X(pcie_tx_kbps)               \
	X(pcie_rx_kbps) X(ecc_sbe_vol) X(ecc_dbe_vol) X(ecc_sbe_agg) X(ecc_dbe_agg)  \
	X(remap_corr) X(remap_unc) X(remap_pending) X(remap_failed) X(retired_sbe)    \
	X(retired_dbe) X(retired_pending) X(nvlink_tx_kib) X(nvlink_rx_kib) X(mig)   \
	X(lost) X(lost_after) X(lost_at)

enum fake_key {
#define FAKE_KEY_ENUM_(k) FK_##k,
	FAKE_NUM_KEYS(FAKE_KEY_ENUM_)
#undef FAKE_KEY_ENUM_
	FK_COUNT
};

struct fake_proc {
	unsigned pid;
	unsigned long long mem_mib;
	long long gi; /* MIG GPU instance, -1 = none */
};

struct fake_mig {
	unsigned gi;
	char uuid[96];
	char profile[32];
	unsigned long long mem_mib;
};

struct fake_gpu {
	bool defined;
	char uuid[96], name[96], bus[32];
	long long v[FK_COUNT];
	unsigned long long set; /* bit k: v[k] given */
	struct fake_proc procs[FAKE_MAX_PROCS];
	unsigned nprocs;
	struct fake_mig mig[FAKE_MAX_MIG];
	unsigned nmig;
	unsigned nvlinks[FAKE_MAX_GPUS]; /* active links to GPU j */
	int topo[FAKE_MAX_GPUS];         /* 0 = not given */
};

struct fake_state {
	char driver[80];
	int init_error;
	unsigned ngpus;
	struct fake_gpu gpus[FAKE_MAX_GPUS];
	unsigned xid_gpu[FAKE_MAX_XID];
	unsigned long long xid_code[FAKE_MAX_XID];
	unsigned nxid;
};

/* Parse the state text (len bytes).  Returns 0, or -1 with err set to
 * "<name>:<line>: <what>" naming the directive or key at fault. */
int fake_state_parse(const char *text, size_t len, const char *name, struct fake_state *st,
		     char *err, size_t errlen);

#endif
