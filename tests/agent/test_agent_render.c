/*
 * tests/agent/test_agent_render.c - the agent over the FAKE NVML: values
 * under dcgm-exporter's names and labels, per-pod attribution from a fake
 * node tree, a GPU lost mid-run, the old-API fallbacks, NVML missing or
 * failing, label escaping, the output cap, and the inventory document.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/agent.h"
#include "agent/kube.h"
#include "cluster/model.h"

#define SRC_STATE GF_AGENT_DATA "/two_gpus.state"
#define LABELS0                                                                         \
	"gpu=\"0\",UUID=\"GPU-1f3c2a9e-8d7b-4c6a-9e21-0a5b7c3d2e10\",pci_bus_id=\"00000000:3B:00.0\"," \
	"device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",hostname=\"node-a\","       \
	"DCGM_FI_DRIVER_VERSION=\"550.54.15\""
#define LABELS1                                                                         \
	"gpu=\"1\",UUID=\"GPU-77aa0c41-2b3e-4f55-8a10-6c9d0e4f1a22\",pci_bus_id=\"00000000:5E:00.0\"," \
	"device=\"nvidia1\",modelName=\"NVIDIA H100 80GB HBM3\",hostname=\"node-a\","       \
	"DCGM_FI_DRIVER_VERSION=\"550.54.15\""
#define POD_LLM ",container=\"server\",namespace=\"ml\",pod=\"llm-7d9f-abcde\""
#define POD_TRAINER ",container=\"main\",namespace=\"research\",pod=\"trainer-0\""
#define POD_NB ",container=\"jupyter\",namespace=\"team-b\",pod=\"notebook-x\""

struct fx {
	char dir[64];
	char root[128], proc[160], log[160], state[160];
};

static void ms_sleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/gf-agent-test-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->proc, sizeof(f->proc), "%s/proc", f->dir);
	snprintf(f->log, sizeof(f->log), "%s/log", f->dir);
	snprintf(f->state, sizeof(f->state), "%s/state", f->dir);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "%s/../make-fake-node %s/two_gpus.node %s && cp %s %s", GF_AGENT_DATA,
		 GF_AGENT_DATA, f->dir, SRC_STATE, f->state);
	if (system(cmd) != 0)
		return -1;
	setenv("GF_FAKE_NVML_STATE", f->state, 1);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static gf_agent *make(struct fx *f, const char *lib, unsigned interval)
{
	struct gf_agent_config cfg = {
		.nvml_path = lib,
		.proc_root = f->proc,
		.log_root = f->log,
		.kubernetes = true,
		.hostname = "node-a",
		.interval_ms = interval,
	};
	gf_agent *a = NULL;
	char err[512] = "";
	gf_err e = gf_agent_create(&cfg, &a, err, sizeof(err));
	if (e)
		print_message("create: %s\n", err);
	assert_int_equal(e, GF_OK);
	return a;
}

static char *render(gf_agent *a)
{
	struct gf_obuf b;
	gf_obuf_init(&b, 1 << 20);
	assert_int_equal(gf_agent_render_metrics(a, &b), GF_OK);
	return gf_obuf_detach(&b, NULL);
}

static void has(const char *text, const char *line)
{
	if (!strstr(text, line)) {
		print_message("missing line:\n%s\nin:\n%s\n", line, text);
		fail();
	}
}

static void lacks(const char *text, const char *frag)
{
	if (strstr(text, frag)) {
		print_message("unexpected:\n%s\n", frag);
		fail();
	}
}

static void test_values_names_labels(void **state)
{
	struct fx *f = *state;
	gf_agent *a = make(f, GF_FAKE_NVML, 0);
	char *t = render(a);
	/* Scripted values under dcgm-exporter's names, types and units. */
	has(t, "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n");
	has(t, "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n");
	has(t, "DCGM_FI_DEV_GPU_UTIL{" LABELS0 POD_LLM "} 87\n");
	has(t, "DCGM_FI_DEV_MEM_COPY_UTIL{" LABELS0 POD_LLM "} 41\n");
	has(t, "DCGM_FI_DEV_POWER_USAGE{" LABELS0 POD_LLM "} 412.318000\n");
	has(t, "DCGM_FI_DEV_SM_CLOCK{" LABELS0 POD_LLM "} 1980\n");
	has(t, "DCGM_FI_DEV_MEM_CLOCK{" LABELS0 POD_LLM "} 2619\n");
	has(t, "DCGM_FI_DEV_GPU_TEMP{" LABELS0 POD_LLM "} 64\n");
	has(t, "DCGM_FI_DEV_MEMORY_TEMP{" LABELS0 POD_LLM "} 71\n");
	has(t, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{" LABELS0 POD_LLM "} 123456789\n");
	has(t, "DCGM_FI_DEV_FB_USED{" LABELS0 POD_LLM "} 61234\n");
	has(t, "DCGM_FI_DEV_FB_FREE{" LABELS0 POD_LLM "} 19813\n"); /* 81559-61234-512 */
	has(t, "DCGM_FI_DEV_FB_RESERVED{" LABELS0 POD_LLM "} 512\n");
	has(t, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER{" LABELS0 POD_LLM "} 2\n");
	has(t, "DCGM_FI_PROF_PCIE_TX_BYTES{" LABELS0 POD_LLM "} 1024000\n");
	has(t, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL{" LABELS0 POD_LLM "} 300\n");
	has(t, "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS{" LABELS0 POD_LLM "} 3\n");
	has(t, "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL{" LABELS0 POD_LLM "} 5\n");
	has(t, "DCGM_FI_DEV_XID_ERRORS{" LABELS0 ",err_code=\"79\",err_msg=\"GPU has fallen off the bus\"" POD_LLM "} 79\n");
	has(t, "gpufleet_gpu_up{" LABELS0 "} 1\n");
	/* Unsupported readings are omitted for that GPU, not printed as 0. */
	lacks(t, "DCGM_FI_DEV_ENC_UTIL{" LABELS1);
	lacks(t, "DCGM_FI_DEV_MEMORY_TEMP{" LABELS1);
	has(t, "DCGM_FI_DEV_RETIRED_SBE{" LABELS0 POD_LLM "} 2\n");
	has(t, "DCGM_FI_DEV_RETIRED_DBE{" LABELS0 POD_LLM "} 1\n");
	has(t, "DCGM_FI_DEV_RETIRED_PENDING{" LABELS0 POD_LLM "} 0\n");
	lacks(t, "DCGM_FI_DEV_RETIRED_SBE{" LABELS1);
	free(t);
	gf_agent_destroy(a);
}

static void test_no_pcie_throughput(void **state)
{
	struct fx *f = *state;
	struct gf_agent_config cfg = { .nvml_path = GF_FAKE_NVML, .no_pcie_throughput = true };
	gf_agent *a;
	char err[256];
	assert_int_equal(gf_agent_create(&cfg, &a, err, sizeof(err)), GF_OK);
	char *t = render(a);
	lacks(t, "DCGM_FI_PROF_PCIE_TX_BYTES");
	has(t, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER{");
	free(t);
	gf_agent_destroy(a);
	(void)f;
}

static void test_old_hostname_label(void **state)
{
	struct fx *f = *state;
	struct gf_agent_config cfg = { .nvml_path = GF_FAKE_NVML, .hostname = "node-a",
				       .old_hostname_label = true };
	gf_agent *a;
	char err[256];
	assert_int_equal(gf_agent_create(&cfg, &a, err, sizeof(err)), GF_OK);
	char *t = render(a);
	has(t, "modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node-a\",DCGM_FI_DRIVER_VERSION=");
	lacks(t, "hostname=");
	free(t);
	gf_agent_destroy(a);
	(void)f;
}

static void test_shared_gpu_per_pod_memory(void **state)
{
	struct fx *f = *state;
	gf_agent *a = make(f, GF_FAKE_NVML, 0);
	char *t = render(a);
	/* GPU 1 is shared by two pods (and a host process): one series per pod,
	 * FB_USED is each pod's own process memory, not the device's 30000. */
	has(t, "DCGM_FI_DEV_FB_USED{" LABELS1 POD_TRAINER "} 10000\n");
	has(t, "DCGM_FI_DEV_FB_USED{" LABELS1 POD_NB "} 12000\n");
	lacks(t, "} 30000\n");
	has(t, "DCGM_FI_DEV_GPU_UTIL{" LABELS1 POD_TRAINER "} 55\n");
	has(t, "DCGM_FI_DEV_GPU_UTIL{" LABELS1 POD_NB "} 55\n");
	has(t, "gpufleet_gpu_process_memory_used_bytes{" LABELS1 POD_NB "} 12582912000\n");
	/* The host process (pid 7171) belongs to no pod: no empty pod label. */
	lacks(t, "pod=\"\"");
	free(t);
	gf_agent_destroy(a);
}

static void test_no_kubernetes_no_pod_labels(void **state)
{
	struct fx *f = *state;
	struct gf_agent_config cfg = { .nvml_path = GF_FAKE_NVML, .hostname = "node-a" };
	gf_agent *a;
	char err[256];
	assert_int_equal(gf_agent_create(&cfg, &a, err, sizeof(err)), GF_OK);
	char *t = render(a);
	has(t, "DCGM_FI_DEV_FB_USED{" LABELS1 "} 30000\n");
	lacks(t, "pod=");
	free(t);
	gf_agent_destroy(a);
	(void)f;
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void test_gpu_lost_mid_run(void **state)
{
	struct fx *f = *state;
	/* GPU 1 answers its first 40 calls (a few collections), then is lost. */
	write_file(f->state,
		   "driver 550.54.15\n"
		   "gpu 0 uuid=GPU-a name=A mem_total_mib=100 mem_used_mib=10 util_gpu=7 util_mem=1\n"
		   "gpu 1 uuid=GPU-b name=B mem_total_mib=100 mem_used_mib=20 util_gpu=9 util_mem=2 lost_after=40\n");
	gf_agent *a = make(f, GF_FAKE_NVML, 0);
	char *t = render(a);
	has(t, "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-b\"");
	has(t, "gpufleet_gpu_up{gpu=\"1\",UUID=\"GPU-b\"");
	free(t);
	int seen_down = 0;
	for (int i = 0; i < 20 && !seen_down; i++) {
		t = render(a);
		seen_down = strstr(t, "gpufleet_gpu_up{gpu=\"1\",UUID=\"GPU-b\",pci_bus_id=\"00000000:02:00.0\","
				      "device=\"nvidia1\",modelName=\"B\",hostname=\"node-a\","
				      "DCGM_FI_DRIVER_VERSION=\"550.54.15\"} 0\n") != NULL;
		if (seen_down) {
			lacks(t, "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\"");
			has(t, "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-a\"");
			assert_non_null(strstr(t, "} 7\n"));
			has(t, "gpufleet_gpu_up{gpu=\"0\",UUID=\"GPU-a\",");
		}
		free(t);
	}
	assert_true(seen_down);
	assert_int_equal(gf_agent_gpus_up(a), 1);
	gf_agent_destroy(a);
}

static void test_gpu_lost_then_back(void **state)
{
	struct fx *f = *state;
	write_file(f->state, "gpu 0 uuid=GPU-a mem_total_mib=100 mem_used_mib=10 util_gpu=7 util_mem=1\n"
			     "gpu 1 uuid=GPU-b mem_total_mib=100 mem_used_mib=20 util_gpu=9 util_mem=2\n");
	gf_agent *a = make(f, GF_FAKE_NVML, 0);
	assert_int_equal(gf_agent_gpus_up(a), 2);
	ms_sleep(30); /* the fake checks the file at most every 20 ms */
	write_file(f->state, "gpu 0 uuid=GPU-a mem_total_mib=100 mem_used_mib=10 util_gpu=7 util_mem=1\n"
			     "gpu 1 uuid=GPU-b mem_total_mib=100 mem_used_mib=20 util_gpu=9 util_mem=2 lost=1\n");
	ms_sleep(30);
	assert_int_equal(gf_agent_gpus_up(a), 1);
	ms_sleep(30);
	write_file(f->state, "gpu 0 uuid=GPU-a mem_total_mib=100 mem_used_mib=10 util_gpu=7 util_mem=1\n"
			     "gpu 1 uuid=GPU-b mem_total_mib=100 mem_used_mib=20 util_gpu=9 util_mem=2\n");
	ms_sleep(30);
	assert_int_equal(gf_agent_gpus_up(a), 2);
	gf_agent_destroy(a);
}

static void test_gpu_lost_at_a_time(void **state)
{
	struct fx *f = *state;
	char text[512];
	long long now = (long long)time(NULL);
	snprintf(text, sizeof(text),
		 "gpu 0 uuid=GPU-a mem_total_mib=100 mem_used_mib=10 lost_at=%lld\n"
		 "gpu 1 uuid=GPU-b mem_total_mib=100 mem_used_mib=20 lost_at=%lld\n",
		 now - 5, now + 3600);
	write_file(f->state, text);
	gf_agent *a = make(f, GF_FAKE_NVML, 0);
	assert_int_equal(gf_agent_gpu_count(a), 2); /* GPU 0 was lost before start-up */
	assert_int_equal(gf_agent_gpus_up(a), 1);
	char *t = render(a);
	has(t, "gpufleet_gpu_up{gpu=\"0\",UUID=\"\"");
	has(t, "DCGM_FI_DEV_FB_USED{gpu=\"1\",UUID=\"GPU-b\"");
	free(t);
	/* It comes back: the agent asks for its handle again and identifies it. */
	ms_sleep(30);
	write_file(f->state, "gpu 0 uuid=GPU-a mem_total_mib=100 mem_used_mib=10\n"
			     "gpu 1 uuid=GPU-b mem_total_mib=100 mem_used_mib=20\n");
	ms_sleep(30);
	assert_int_equal(gf_agent_gpus_up(a), 2);
	t = render(a);
	has(t, "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\"");
	free(t);
	gf_agent_destroy(a);
}

static void test_old_api_fallbacks(void **state)
{
	struct fx *f = *state;
	gf_agent *a = make(f, GF_FAKE_NVML_OLD, 0);
	char *t = render(a);
	/* nvmlDeviceGetMemoryInfo (v1): used includes the 512 MiB reserved, no FB_RESERVED. */
	has(t, "DCGM_FI_DEV_FB_USED{" LABELS0 POD_LLM "} 61746\n");
	lacks(t, "DCGM_FI_DEV_FB_RESERVED");
	/* nvmlDeviceGetTemperature fallback, v1 process structs, nvmlEventSetWait. */
	has(t, "DCGM_FI_DEV_GPU_TEMP{" LABELS0 POD_LLM "} 64\n");
	has(t, "DCGM_FI_DEV_FB_USED{" LABELS1 POD_NB "} 12000\n");
	has(t, "err_code=\"79\"");
	free(t);
	gf_agent_destroy(a);
}

static void test_missing_library(void **state)
{
	(void)state;
	struct gf_agent_config cfg = { .nvml_path = "/nonexistent/libnvidia-ml.so.1" };
	gf_agent *a = (gf_agent *)1;
	char err[512] = "";
	assert_int_equal(gf_agent_create(&cfg, &a, err, sizeof(err)), GF_NOENT);
	assert_null(a);
	assert_non_null(strstr(err, "cannot load NVML from /nonexistent/libnvidia-ml.so.1"));
	cfg.allow_no_nvml = true;
	assert_int_equal(gf_agent_create(&cfg, &a, err, sizeof(err)), GF_OK);
	assert_false(gf_agent_has_nvml(a));
	assert_int_equal(gf_agent_gpu_count(a), 0);
	char *t = render(a);
	has(t, "gpufleet_agent_nvml_loaded 0\n");
	lacks(t, "DCGM_");
	free(t);
	gf_agent_destroy(a);
}

static void test_init_failure(void **state)
{
	struct fx *f = *state;
	write_file(f->state, "init_error 9\ngpu 0\n");
	struct gf_agent_config cfg = { .nvml_path = GF_FAKE_NVML };
	gf_agent *a;
	char err[512] = "";
	assert_int_equal(gf_agent_create(&cfg, &a, err, sizeof(err)), GF_UNAVAILABLE);
	print_message("err: %s\n", err);
	assert_non_null(strstr(err, "nvmlInit failed"));
	assert_non_null(strstr(err, "Driver Not Loaded"));
}

static void test_library_without_nvml(void **state)
{
	(void)state;
	/* A loadable library that is not NVML: the missing required symbol is named. */
	struct gf_agent_config cfg = { .nvml_path = "libm.so.6" };
	gf_agent *a;
	char err[512] = "";
	assert_int_equal(gf_agent_create(&cfg, &a, err, sizeof(err)), GF_UNSUPPORTED);
	assert_non_null(strstr(err, "lacks the required function nvmlInit_v2"));
}

static void test_label_escaping_and_cap(void **state)
{
	struct fx *f = *state;
	write_file(f->state, "gpu 0 uuid=GPU-q name=\"Weird \\ model\" mem_total_mib=1 mem_used_mib=1\n");
	gf_agent *a = make(f, GF_FAKE_NVML, 0);
	char *t = render(a);
	has(t, "modelName=\"Weird \\\\ model\"");
	free(t);
	struct gf_obuf small;
	gf_obuf_init(&small, 200);
	assert_int_equal(gf_agent_render_metrics(a, &small), GF_TOOBIG);
	assert_true(small.len <= 200);
	gf_obuf_release(&small);
	gf_agent_destroy(a);
}

static void test_interval_cache(void **state)
{
	struct fx *f = *state;
	gf_agent *a = make(f, GF_FAKE_NVML, 60000);
	char *t1 = render(a);
	ms_sleep(30);
	write_file(f->state, "driver 550.54.15\ngpu 0 uuid=GPU-1f3c2a9e-8d7b-4c6a-9e21-0a5b7c3d2e10 mem_total_mib=1 mem_used_mib=1 util_gpu=1 util_mem=1\n"
			     "gpu 1 uuid=GPU-77aa0c41-2b3e-4f55-8a10-6c9d0e4f1a22 mem_total_mib=1 mem_used_mib=1\n");
	ms_sleep(30);
	char *t2 = render(a); /* within the 60 s interval: served from the cache */
	assert_string_equal(t1, t2);
	free(t1);
	free(t2);
	gf_agent_destroy(a);
	a = make(f, GF_FAKE_NVML, 0); /* interval 0: read per scrape */
	t1 = render(a);
	has(t1, "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"");
	lacks(t1, "} 87\n");
	free(t1);
	gf_agent_destroy(a);
}

static void test_inventory_and_patch(void **state)
{
	struct fx *f = *state;
	gf_agent *a = make(f, GF_FAKE_NVML, 0);
	struct gf_obuf b;
	gf_obuf_init(&b, 1 << 20);
	assert_int_equal(gf_agent_render_inventory(a, "node-a", &b), GF_OK);
	has(b.data, "\"node\":\"node-a\"");
	has(b.data, "\"memory_mib\":81559");
	has(b.data, "\"numa_node\":1");
	has(b.data, "\"matrix\":[[\"X\",\"NV18\"],[\"NV18\",\"X\"]]");
	has(b.data, "\"links\":[[0,18],[18,0]]");
	has(b.data, "\"mig\":{\"mode\":\"disabled\",\"instances\":[]}");
	gf_obuf_reset(&b);
	assert_int_equal(gf_agent_node_patch_body(a, "node-a", &b), GF_OK);
	has(b.data, "\"gpufleet.io/gpu.count\":\"2\"");
	has(b.data, "\"gpufleet.io/gpu.product\":\"NVIDIA-H100-80GB-HBM3\"");
	has(b.data, "\"gpufleet.io/gpu.nvlink\":\"true\"");
	has(b.data, "\"gpufleet.io/gpu.memory-mib\":\"81559\"");
	has(b.data, "\"gpufleet.io/gpu-topology\":\"{\\\"version\\\":1");
	lacks(b.data, "gpufleet.io/models-seen");	/* no served model seen yet */

	/* Served models: most recent first, bounded, one entry per identity. */
	char seen[4096];
	gf_agent_served_add(a, "llama-7b");
	gf_agent_served_add(a, "registry.example/vllm:0.6");
	gf_agent_served_add(a, "llama-7b");
	gf_agent_served_add(a, "a,b");	/* the separator: refused */
	gf_agent_served_add(a, "");
	gf_agent_served_render(a, seen, sizeof(seen));
	assert_string_equal(seen, "llama-7b,registry.example/vllm:0.6");
	for (int i = 0; i < GF_SERVED_SEEN_MAX + 2; i++) {
		char id[16];
		snprintf(id, sizeof(id), "m%d", i);
		gf_agent_served_add(a, id);
	}
	gf_agent_served_render(a, seen, sizeof(seen));
	assert_string_equal(seen, "m9,m8,m7,m6,m5,m4,m3,m2");
	gf_agent_served_render(a, seen, 8);	/* whole entries only: "m9,m8,m7" needs 9 */
	assert_string_equal(seen, "m9,m8");
	gf_obuf_reset(&b);
	assert_int_equal(gf_agent_node_patch_body(a, "node-a", &b), GF_OK);
	has(b.data, "\"gpufleet.io/models-seen\":\"m9,m8,m7,m6,m5,m4,m3,m2\"");
	gf_obuf_release(&b);
	gf_agent_destroy(a);
}

static void test_numa_from_sysfs(void **state)
{
	struct fx *f = *state;
	/* No numa= key: NVML says NOT_SUPPORTED, the agent reads sysfs instead. */
	write_file(f->state, "gpu 0 uuid=GPU-s bus=00000000:3B:00.0 mem_total_mib=1 mem_used_mib=1\n"
			     "gpu 1 uuid=GPU-t bus=00000000:5E:00.0 mem_total_mib=1 mem_used_mib=1\n");
	char cmd[512], sys[128];
	snprintf(sys, sizeof(sys), "%s/sys", f->dir);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/bus/pci/devices/0000:3b:00.0 && echo 1 > %s/bus/pci/devices/0000:3b:00.0/numa_node",
		 sys, sys);
	assert_int_equal(system(cmd), 0);
	struct gf_agent_config cfg = { .nvml_path = GF_FAKE_NVML, .sys_root = sys };
	gf_agent *a;
	char err[256];
	assert_int_equal(gf_agent_create(&cfg, &a, err, sizeof(err)), GF_OK);
	struct gf_obuf b;
	gf_obuf_init(&b, 1 << 20);
	assert_int_equal(gf_agent_render_inventory(a, "n", &b), GF_OK);
	has(b.data, "\"uuid\":\"GPU-s\",\"model\":\"Fake GPU\",\"pci_bus_id\":\"00000000:3B:00.0\",\"memory_mib\":1,\"numa_node\":1,");
	has(b.data, "\"pci_bus_id\":\"00000000:5E:00.0\",\"memory_mib\":1,\"numa_node\":-1,"); /* no sysfs entry */
	has(b.data, "\"matrix\":[[\"X\",\"SYS\"],[\"SYS\",\"X\"]]");
	gf_obuf_release(&b);
	gf_agent_destroy(a);
}

static void test_mig_inventory(void **state)
{
	struct fx *f = *state;
	write_file(f->state,
		   "gpu 0 uuid=GPU-m name=\"NVIDIA A100-SXM4-40GB\" mem_total_mib=40960 mem_used_mib=0 mig=1\n"
		   "mig 0 gi=1 uuid=MIG-aaaa profile=3g.20gb mem_mib=19968\n"
		   "mig 0 gi=2 uuid=MIG-bbbb profile=1g.5gb mem_mib=4864\n"
		   "proc 0 pid=5151 mem_mib=10000 gi=1\n"
		   "proc 0 pid=6161 mem_mib=5000 gi=1\n"
		   "proc 0 pid=4242 mem_mib=1000 gi=2\n");
	gf_agent *a = make(f, GF_FAKE_NVML, 0);
	struct gf_obuf b;
	gf_obuf_init(&b, 1 << 20);
	assert_int_equal(gf_agent_render_inventory(a, "n", &b), GF_OK);
	has(b.data, "\"mode\":\"enabled\"");
	has(b.data, "{\"uuid\":\"MIG-aaaa\",\"gpu_instance_id\":1,\"profile\":\"3g.20gb\",\"memory_mib\":19968}");
	has(b.data, "\"profile\":\"1g.5gb\"");
	gf_obuf_release(&b);
	char *t = render(a);
	lacks(t, "DCGM_FI_DEV_GPU_UTIL"); /* NOT_SUPPORTED on a MIG-enabled GPU */
	/* One framebuffer series per MIG device; the 3g.20gb one is shared by two
	 * pods (each its own memory), the 1g.5gb one used by one pod. */
	has(t, "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-m\",pci_bus_id=\"00000000:01:00.0\","
	       "device=\"nvidia0\",modelName=\"NVIDIA A100-SXM4-40GB\",hostname=\"node-a\","
	       "DCGM_FI_DRIVER_VERSION=\"999.99.99-fake\",GPU_I_PROFILE=\"3g.20gb\",GPU_I_ID=\"1\"" POD_TRAINER "} 10000\n");
	has(t, ",GPU_I_PROFILE=\"3g.20gb\",GPU_I_ID=\"1\"" POD_NB "} 5000\n");
	has(t, "DCGM_FI_DEV_FB_FREE{gpu=\"0\",UUID=\"GPU-m\"");
	has(t, ",GPU_I_PROFILE=\"3g.20gb\",GPU_I_ID=\"1\"" POD_NB "} 4968\n"); /* 19968-15000 */
	has(t, ",GPU_I_PROFILE=\"1g.5gb\",GPU_I_ID=\"2\"" POD_LLM "} 1000\n");
	has(t, "gpufleet_gpu_process_memory_used_bytes{gpu=\"0\"");
	has(t, ",GPU_I_PROFILE=\"3g.20gb\",GPU_I_ID=\"1\"" POD_NB "} 5242880000\n");
	has(t, "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-m\",pci_bus_id=\"00000000:01:00.0\","
	       "device=\"nvidia0\",modelName=\"NVIDIA A100-SXM4-40GB\",hostname=\"node-a\","
	       "DCGM_FI_DRIVER_VERSION=\"999.99.99-fake\"} 0\n"); /* the whole GPU, no pod */
	free(t);
	gf_agent_destroy(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_values_names_labels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shared_gpu_per_pod_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_hostname_label, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_pcie_throughput, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_kubernetes_no_pod_labels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpu_lost_mid_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpu_lost_then_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpu_lost_at_a_time, setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_api_fallbacks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_library, setup, teardown),
		cmocka_unit_test_setup_teardown(test_init_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_library_without_nvml, setup, teardown),
		cmocka_unit_test_setup_teardown(test_label_escaping_and_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interval_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inventory_and_patch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_numa_from_sysfs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mig_inventory, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
