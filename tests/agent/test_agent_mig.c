/*
 * tests/agent/test_agent_mig.c - the node side of MIG over the FAKE NVML:
 * the layout parser (strict, errors naming the JSON path), the fake's
 * driver rules (wrong slot, overlap, in-use destroy refused), applying a
 * layout (created with MIG UUIDs; a wrong slot refused; an instance in use
 * never destroyed; applying again after an NVML restart changes nothing,
 * the instances kept by the driver state) and the metrics (dcgm-exporter's
 * GPU_I_PROFILE / GPU_I_ID per instance).
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
#include "agent/mig.h"
#include "agent/nvml.h"

#define H100 "GPU-1f3c2a9e-8d7b-4c6a-9e21-0a5b7c3d2e10"
#define A100 "GPU-77aa0c41-2b3e-4f55-8a10-6c9d0e4f1a22"
#define BASE_STATE                                                                                   \
	"driver 550.54.15\n"                                                                         \
	"gpu 0 uuid=" H100 " name=\"NVIDIA H100 80GB HBM3\" mem_total_mib=81559 mem_used_mib=0\n"   \
	"gpu 1 uuid=" A100 " name=\"NVIDIA A100-SXM4-40GB\" mem_total_mib=40960 mem_used_mib=0\n"
/* mig-parted's all-balanced on an 80 GB H100 */
#define BALANCED                                                                                     \
	"{\"" H100 "\":[{\"profile\":\"1g.10gb\",\"start\":0},{\"profile\":\"1g.10gb\",\"start\":1},"  \
	"{\"profile\":\"2g.20gb\",\"start\":2},{\"profile\":\"3g.40gb\",\"start\":4}]}"

struct fx {
	char dir[64], state[160];
	struct gf_nvml n;
};

static void write_state(struct fx *f, const char *extra)
{
	FILE *fp = fopen(f->state, "w");
	assert_non_null(fp);
	fputs(BASE_STATE, fp);
	fputs(extra, fp);
	fclose(fp);
	struct timespec ts = { 0, 60 * 1000000L }; /* the fake re-reads at most every 20 ms */
	nanosleep(&ts, NULL);
}

static void nvml_open(struct fx *f)
{
	char err[256];
	gf_err e = gf_nvml_open(&f->n, GF_FAKE_NVML, err, sizeof(err));
	if (e)
		fail_msg("gf_nvml_open: %s", err);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/gf-mig-test-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->state, sizeof(f->state), "%s/state", f->dir);
	setenv("GF_FAKE_NVML_STATE", f->state, 1);
	unsetenv("GF_FAKE_NVML_MIG_STATE");
	write_state(f, "");
	nvml_open(f);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	gf_nvml_close(&f->n);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

/* ---- the parser ---- */

static void test_parse_valid_and_roundtrip(void **state)
{
	(void)state;
	struct gf_nodemig_layout l;
	char err[256] = "";
	const char *doc = " {\"" H100 "\":[{\"start\":4,\"profile\":\"3g.40gb\"},{\"profile\":\"1g.10gb+me\",\"start\":0}],"
			  "\"" A100 "\":[]}\n";
	assert_int_equal(gf_nodemig_layout_parse(doc, strlen(doc), &l, err, sizeof(err)), GF_OK);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.gpu[0].uuid, H100);
	assert_int_equal(l.gpu[0].n, 2);
	assert_string_equal(l.gpu[0].inst[0].profile, "3g.40gb");
	assert_int_equal(l.gpu[0].inst[0].start, 4);
	assert_string_equal(l.gpu[0].inst[1].profile, "1g.10gb+me");
	assert_int_equal(l.gpu[1].n, 0);
	struct gf_obuf b;
	gf_obuf_init(&b, 1 << 16);
	assert_int_equal(gf_nodemig_layout_render(&l, &b), GF_OK);
	struct gf_nodemig_layout l2;
	assert_int_equal(gf_nodemig_layout_parse(b.data, b.len, &l2, err, sizeof(err)), GF_OK);
	assert_memory_equal(&l, &l2, sizeof(l));
	gf_obuf_release(&b);
}

static void test_parse_rejects(void **state)
{
	(void)state;
	static const struct {
		const char *doc, *want;
	} bad[] = {
		{ "[]", "$: expected an object" },
		{ "{\"gpu0\":[]}", "expected a GPU UUID" },
		{ "{\"GPU-../x\":[]}", "expected a GPU UUID" },
		{ "{\"" H100 "\":[],\"" H100 "\":[]}", "GPU given twice" },
		{ "{\"" H100 "\":{}}", "expected an array" },
		{ "{\"" H100 "\":[1]}", "[0]: expected an object" },
		{ "{\"" H100 "\":[{\"profile\":\"3g.40gb\",\"start\":8}]}", "[0].start: expected an integer 0..7" },
		{ "{\"" H100 "\":[{\"profile\":\"3g.40gb\",\"start\":1.5}]}", "[0].start: expected an integer" },
		{ "{\"" H100 "\":[{\"profile\":\"3g.40gb\",\"start\":\"4\"}]}", "[0].start: expected an integer" },
		{ "{\"" H100 "\":[{\"profile\":\"3g.40gb\"}]}", "[0].start: expected an integer" },
		{ "{\"" H100 "\":[{\"profile\":\"3g\",\"start\":0}]}", "[0].profile: expected a MIG profile" },
		{ "{\"" H100 "\":[{\"profile\":\"9g.40gb\",\"start\":0}]}", "[0].profile" },
		{ "{\"" H100 "\":[{\"profile\":\"1g.10gb\",\"start\":0,\"x\":1}]}", "[0].x: unknown member" },
		{ "{\"" H100 "\":[{\"profile\":\"1g.10gb\",\"start\":0,\"start\":1}]}", "[0].start: given twice" },
		{ "{\"" H100 "\":[{\"profile\":\"1g.10gb\",\"start\":0},{\"profile\":\"1g.10gb\",\"start\":0}]}",
		  "[1].start: slot 0 already taken by [0]" },
		{ "{\"" H100 "\":[]} x", "text after the JSON document" },
		{ "{\"" H100 "\":[", "not valid JSON" },
		{ "{\"" H100 "\":[{\"profile\":\"1g.10gb\",\"start\":0},{\"profile\":\"1g.10gb\",\"start\":1},"
		  "{\"profile\":\"1g.10gb\",\"start\":2},{\"profile\":\"1g.10gb\",\"start\":3},"
		  "{\"profile\":\"1g.10gb\",\"start\":4},{\"profile\":\"1g.10gb\",\"start\":5},"
		  "{\"profile\":\"1g.10gb\",\"start\":6},{\"profile\":\"1g.10gb\",\"start\":7},"
		  "{\"profile\":\"1g.10gb\",\"start\":0}]}",
		  "more than 8 instances" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gf_nodemig_layout l;
		char err[256] = "";
		gf_err e = gf_nodemig_layout_parse(bad[i].doc, strlen(bad[i].doc), &l, err, sizeof(err));
		if (e != GF_INVAL || !strstr(err, bad[i].want))
			fail_msg("case %zu (%s): got %d '%s', want GF_INVAL '%s'", i, bad[i].doc, e, err, bad[i].want);
		assert_int_equal(l.n, 0);
	}
}

/* ---- the fake's driver rules, called directly ---- */

/* Profile ids on A100/H100 80 GB (nvidia-smi mig -lgip). */
#define ID_1G 19
#define ID_3G 9
#define ID_4G 5

static void test_fake_driver_rules(void **state)
{
	struct fx *f = *state;
	struct gf_nvml *n = &f->n;
	gf_nvml_device d;
	gf_nvml_gpu_instance gi, gi2;
	gf_nvml_return act;
	assert_int_equal(n->handle_by_index(0, &d), GF_NVML_SUCCESS);
	/* MIG off: no instance can be made */
	gf_nvml_gi_placement at = { 0, 1 };
	assert_int_equal(n->gi_create_at(d, ID_1G, &at, &gi), GF_NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(n->set_mig_mode(d, GF_NVML_MIG_ENABLE, &act), GF_NVML_SUCCESS);
	/* the profile ids (info.id) the create/placement calls take, from the index */
	gf_nvml_gi_profile_info_v2 info = { .version = GF_NVML_GI_PROFILE_INFO_V2_VERSION };
	assert_int_equal(n->gi_profile_info(d, GF_NVML_GI_PROFILE_3_SLICE, &info), GF_NVML_SUCCESS);
	assert_string_equal(info.name, "MIG 3g.40gb");
	assert_int_equal(info.id, ID_3G);
	assert_int_equal(info.instanceCount, 2);
	/* 3g.40gb may start at 0 or 4 only */
	gf_nvml_gi_placement pl[8];
	unsigned np = 8;
	assert_int_equal(n->gi_placements(d, ID_3G, pl, &np), GF_NVML_SUCCESS);
	assert_int_equal(np, 2);
	assert_int_equal(pl[0].start, 0);
	assert_int_equal(pl[1].start, 4);
	assert_int_equal(pl[1].size, 4);
	at = (gf_nvml_gi_placement){ 2, 4 };
	assert_int_equal(n->gi_create_at(d, ID_3G, &at, &gi), GF_NVML_ERROR_INVALID_ARGUMENT);
	at = (gf_nvml_gi_placement){ 7, 1 }; /* 1g: starts 0..6 */
	assert_int_equal(n->gi_create_at(d, ID_1G, &at, &gi), GF_NVML_ERROR_INVALID_ARGUMENT);
	/* a 1g at slot 0 makes the 4g impossible */
	at = (gf_nvml_gi_placement){ 0, 1 };
	assert_int_equal(n->gi_create_at(d, ID_1G, &at, &gi), GF_NVML_SUCCESS);
	at = (gf_nvml_gi_placement){ 0, 4 };
	assert_int_equal(n->gi_create_at(d, ID_4G, &at, &gi2),
			 GF_NVML_ERROR_INSUFFICIENT_RESOURCES);
	/* a compute instance makes a MIG device with a MIG- UUID */
	gf_nvml_ci_profile_info ci;
	gf_nvml_compute_instance c;
	assert_int_equal(n->ci_profile_info(gi, 0, GF_NVML_CI_ENGINE_PROFILE_SHARED, &ci), GF_NVML_SUCCESS);
	assert_int_equal(n->ci_create(gi, ci.id, &c), GF_NVML_SUCCESS);
	gf_nvml_device md;
	char u[96];
	assert_int_equal(n->mig_handle(d, 0, &md), GF_NVML_SUCCESS);
	assert_int_equal(n->uuid(md, u, sizeof(u)), GF_NVML_SUCCESS);
	assert_true(strncmp(u, "MIG-", 4) == 0 && strlen(u) == 40);
	/* a GPU instance with its compute instance is in use; MIG cannot be disabled */
	assert_int_equal(n->gi_destroy(gi), GF_NVML_ERROR_IN_USE);
	assert_int_equal(n->set_mig_mode(d, GF_NVML_MIG_DISABLE, &act), GF_NVML_ERROR_IN_USE);
	assert_int_equal(n->ci_destroy(c), GF_NVML_SUCCESS);
	assert_int_equal(n->gi_destroy(gi), GF_NVML_SUCCESS);
	assert_int_equal(n->mig_handle(d, 0, &md), GF_NVML_ERROR_NOT_FOUND);
	assert_int_equal(n->set_mig_mode(d, GF_NVML_MIG_DISABLE, &act), GF_NVML_SUCCESS);
}

/* ---- applying layouts ---- */

static void apply_text(struct fx *f, const char *doc, struct gf_nodemig_state *st, gf_nodemig_in_use_fn fn, void *ud)
{
	static struct gf_nodemig_layout l;
	char err[256];
	if (gf_nodemig_layout_parse(doc, strlen(doc), &l, err, sizeof(err)))
		fail_msg("layout: %s", err);
	assert_int_equal(gf_nodemig_apply(&f->n, &l, fn, ud, st), GF_OK);
}

static const struct gf_nodemig_inst *find(const struct gf_nodemig_state *st, const char *gpu, const char *prof,
				      unsigned start)
{
	for (unsigned i = 0; i < st->n; i++)
		for (unsigned k = 0; !strcmp(st->gpu[i].uuid, gpu) && k < st->gpu[i].n; k++)
			if (!strcmp(st->gpu[i].inst[k].profile, prof) && st->gpu[i].inst[k].start == start)
				return &st->gpu[i].inst[k];
	return NULL;
}

static void test_apply_balanced_and_restart(void **state)
{
	struct fx *f = *state;
	static struct gf_nodemig_state st, st2;
	apply_text(f, BALANCED, &st, NULL, NULL);
	assert_int_equal(st.created, 4);
	assert_int_equal(st.failed, 0);
	assert_int_equal(st.n, 1);
	assert_int_equal(st.gpu[0].n, 4);
	const struct gf_nodemig_inst *m3 = find(&st, H100, "3g.40gb", 4);
	assert_non_null(m3);
	assert_true(m3->made && !m3->in_use && !strncmp(m3->uuid, "MIG-", 4));
	char uuid3[96];
	snprintf(uuid3, sizeof(uuid3), "%s", m3->uuid);
	/* the agent restarts: NVML closed and opened again; the driver kept the instances */
	gf_nvml_close(&f->n);
	nvml_open(f);
	apply_text(f, BALANCED, &st2, NULL, NULL);
	assert_int_equal(st2.created, 0);
	assert_int_equal(st2.destroyed, 0);
	assert_int_equal(st2.gpu[0].n, 4);
	assert_string_equal(find(&st2, H100, "3g.40gb", 4)->uuid, uuid3);
	/* the state document */
	struct gf_obuf b;
	gf_obuf_init(&b, 1 << 16);
	assert_int_equal(gf_nodemig_state_render(&st2, &b), GF_OK);
	assert_non_null(strstr(b.data, "{\"profile\":\"3g.40gb\",\"start\":4,\"gi\":"));
	assert_non_null(strstr(b.data, uuid3));
	assert_non_null(strstr(b.data, "\"inUse\":false"));
	gf_obuf_release(&b);
	/* a layout without the 1g instances: those are destroyed, the others kept */
	apply_text(f,
		   "{\"" H100 "\":[{\"profile\":\"2g.20gb\",\"start\":2},{\"profile\":\"3g.40gb\",\"start\":4}]}",
		   &st2, NULL, NULL);
	assert_int_equal(st2.destroyed, 2);
	assert_int_equal(st2.created, 0);
	assert_int_equal(st2.gpu[0].n, 2);
	assert_string_equal(find(&st2, H100, "3g.40gb", 4)->uuid, uuid3);
}

static void test_apply_wrong_slot_refused(void **state)
{
	struct fx *f = *state;
	static struct gf_nodemig_state st;
	apply_text(f,
		   "{\"" H100 "\":[{\"profile\":\"3g.40gb\",\"start\":2},{\"profile\":\"1g.10gb\",\"start\":0}],"
		   "\"" A100 "\":[{\"profile\":\"3g.40gb\",\"start\":0}]}",
		   &st, NULL, NULL);
	assert_int_equal(st.created, 1);
	assert_int_equal(st.failed, 2);
	const struct gf_nodemig_inst *bad = find(&st, H100, "3g.40gb", 2);
	assert_non_null(bad);
	assert_false(bad->made);
	assert_non_null(strstr(bad->reason, "slot 2 is not a legal start of 3g.40gb (legal: 0,4)"));
	assert_true(find(&st, H100, "1g.10gb", 0)->made);
	/* the 40 GB A100 names its profiles 3g.20gb, ...: 3g.40gb is not offered */
	const struct gf_nodemig_inst *a = find(&st, A100, "3g.40gb", 0);
	assert_non_null(a);
	assert_non_null(strstr(a->reason, "profile not offered by this GPU (offers: 1g.5gb"));
	/* overlapping instances in one layout: the second is refused by the driver, reported */
	apply_text(f,
		   "{\"" H100 "\":[{\"profile\":\"1g.10gb\",\"start\":1},{\"profile\":\"2g.20gb\",\"start\":0}]}",
		   &st, NULL, NULL);
	assert_int_equal(st.destroyed, 1);
	assert_int_equal(st.created, 1);
	assert_int_equal(st.failed, 1);
	assert_true(find(&st, H100, "1g.10gb", 1)->made);
	assert_false(find(&st, H100, "2g.20gb", 0)->made);
	assert_non_null(strstr(find(&st, H100, "2g.20gb", 0)->reason, "overlap"));
}

static bool uuid_in_use(void *ud, const char *mig_uuid)
{
	return !strcmp((const char *)ud, mig_uuid);
}

static void test_in_use_never_destroyed(void **state)
{
	struct fx *f = *state;
	static struct gf_nodemig_state st;
	apply_text(f, BALANCED, &st, NULL, NULL);
	const struct gf_nodemig_inst *m3 = find(&st, H100, "3g.40gb", 4), *m1 = find(&st, H100, "1g.10gb", 0);
	char u1[96], line[64];
	snprintf(u1, sizeof(u1), "%s", m1->uuid);
	/* a process runs in the 3g instance (NVML sees it) */
	snprintf(line, sizeof(line), "proc 0 pid=4242 mem_mib=1000 gi=%u\n", m3->gi);
	write_state(f, line);
	/* the scheduler wants the whole GPU as one 7g; the device plugin holds the 1g at slot 0 */
	apply_text(f, "{\"" H100 "\":[{\"profile\":\"7g.80gb\",\"start\":0}]}", &st, uuid_in_use, u1);
	assert_int_equal(st.refused, 2);
	assert_int_equal(st.destroyed, 2); /* the 1g at slot 1, the 2g at slot 2 */
	assert_int_equal(st.created, 0);
	const struct gf_nodemig_inst *k3 = find(&st, H100, "3g.40gb", 4), *k1 = find(&st, H100, "1g.10gb", 0);
	assert_non_null(k3);
	assert_non_null(k1);
	assert_true(k3->made && k3->in_use && k3->unwanted);
	assert_true(k1->made && k1->in_use && k1->unwanted);
	assert_string_equal(k1->uuid, u1);
	assert_non_null(strstr(k3->reason, "in use"));
	assert_null(find(&st, H100, "1g.10gb", 1));
	assert_false(find(&st, H100, "7g.80gb", 0)->made);
	struct gf_obuf b;
	gf_obuf_init(&b, 1 << 16);
	assert_int_equal(gf_nodemig_state_render(&st, &b), GF_OK);
	assert_non_null(strstr(b.data, "\"inUse\":true,\"unwanted\":true,\"reason\":\"in use by a container"));
	gf_obuf_release(&b);
	/* the process ends, the device plugin lets go: now the 7g comes */
	write_state(f, "");
	apply_text(f, "{\"" H100 "\":[{\"profile\":\"7g.80gb\",\"start\":0}]}", &st, NULL, NULL);
	assert_int_equal(st.destroyed, 2);
	assert_int_equal(st.created, 1);
	assert_int_equal(st.gpu[0].n, 1);
}

/* ---- metrics: dcgm-exporter's MIG labels on every instance ---- */

static void test_metrics_labels(void **state)
{
	struct fx *f = *state;
	static struct gf_nodemig_state st;
	apply_text(f, BALANCED, &st, NULL, NULL);
	struct gf_agent_config cfg = { .nvml_path = GF_FAKE_NVML, .hostname = "node-a" };
	gf_agent *a;
	char err[256];
	assert_int_equal(gf_agent_create(&cfg, &a, err, sizeof(err)), GF_OK);
	struct gf_obuf b;
	gf_obuf_init(&b, 1 << 20);
	assert_int_equal(gf_agent_render_metrics(a, &b), GF_OK);
	for (unsigned k = 0; k < st.gpu[0].n; k++) {
		char want[128];
		snprintf(want, sizeof(want), "GPU_I_PROFILE=\"%s\",GPU_I_ID=\"%u\"} ", st.gpu[0].inst[k].profile,
			 st.gpu[0].inst[k].gi);
		if (!strstr(b.data, want))
			fail_msg("no DCGM_FI_DEV_FB_FREE series with %s in:\n%s", want, b.data);
	}
	assert_non_null(strstr(b.data, "DCGM_FI_DEV_FB_FREE{gpu=\"0\",UUID=\"" H100 "\""));
	gf_obuf_release(&b);
	gf_agent_destroy(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_valid_and_roundtrip),
		cmocka_unit_test(test_parse_rejects),
		cmocka_unit_test_setup_teardown(test_fake_driver_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_balanced_and_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_wrong_slot_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_in_use_never_destroyed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_metrics_labels, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
