/*
 * tests/agent/test_agent_mig_dp.c - the device plugin's MIG resources
 * (NVIDIA's mixed strategy) over the FAKE NVML's MIG driver, called over
 * its gRPC sockets as the kubelet would (no kubelet: registration fails,
 * the servers serve): nvidia.com/mig-<profile> sockets for the profiles of
 * the applied layout, Allocate of a MIG device answers its CDI name and
 * NVIDIA_VISIBLE_DEVICES=MIG-<uuid>, a MIG-mode GPU is refused as a whole
 * GPU, an unknown or other-profile ID is refused, and a MIG device given to
 * a container is never destroyed by a later layout.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/agent.h"
#include "agent/deviceplugin.h"
#include "agent/grpc.h"
#include "agent/mig.h"
#include "agent/proto/deviceplugin_v1beta1.pb-c.h"

#define H100 "GPU-1f3c2a9e-8d7b-4c6a-9e21-0a5b7c3d2e10"
#define BALANCED                                                                                     \
	"{\"" H100 "\":[{\"profile\":\"1g.10gb\",\"start\":0},{\"profile\":\"1g.10gb\",\"start\":1},"  \
	"{\"profile\":\"2g.20gb\",\"start\":2},{\"profile\":\"3g.40gb\",\"start\":4}]}"

static char dir[64], dpdir[96];

static void apply(gf_agent *a, const char *doc, struct gf_nodemig_state *st)
{
	static struct gf_nodemig_layout l;
	char err[256];
	if (gf_nodemig_layout_parse(doc, strlen(doc), &l, err, sizeof(err)))
		fail_msg("layout: %s", err);
	assert_int_equal(gf_agent_mig_apply(a, &l, st), GF_OK);
}

/* Allocate one container with ids on socket sock; the gRPC status, the response in *out. */
static int allocate(const char *sock, const char **ids, size_t n, V1beta1__AllocateResponse **out, char *msg,
		    size_t msglen)
{
	char path[200];
	snprintf(path, sizeof(path), "%s/%s", dpdir, sock);
	V1beta1__ContainerAllocateRequest c = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT, *cp = &c;
	c.n_devices_ids = n;
	c.devices_ids = (char **)ids;
	V1beta1__AllocateRequest rq = V1BETA1__ALLOCATE_REQUEST__INIT;
	rq.n_container_requests = 1;
	rq.container_requests = &cp;
	uint8_t buf[4096];
	size_t len = v1beta1__allocate_request__pack(&rq, buf);
	struct gf_obuf resp;
	gf_obuf_init(&resp, 1 << 20);
	int st = gf_grpc_call(path, "/v1beta1.DevicePlugin/Allocate", buf, len, &resp, 5000, msg, msglen);
	*out = st == GF_GRPC_OK ? v1beta1__allocate_response__unpack(NULL, resp.len, (const uint8_t *)resp.data) : NULL;
	gf_obuf_release(&resp);
	return st;
}

/* ListAndWatch's first list on socket sock: the device IDs, comma-joined. */
static void list_ids(const char *sock, char *out, size_t n)
{
	char path[200], msg[256] = "";
	snprintf(path, sizeof(path), "%s/%s", dpdir, sock);
	struct gf_obuf resp;
	gf_obuf_init(&resp, 1 << 22);
	uint8_t empty[1];
	int st = gf_grpc_call_first(path, "/v1beta1.DevicePlugin/ListAndWatch", empty, 0, &resp, 5000, msg, sizeof(msg));
	if (st != GF_GRPC_OK)
		fail_msg("ListAndWatch %s: status %d: %s", sock, st, msg);
	V1beta1__ListAndWatchResponse *r =
		v1beta1__list_and_watch_response__unpack(NULL, resp.len, (const uint8_t *)resp.data);
	assert_non_null(r);
	out[0] = '\0';
	for (size_t i = 0; i < r->n_devices; i++) {
		size_t l = strlen(out);
		assert_string_equal(r->devices[i]->health, "Healthy");
		snprintf(out + l, n - l, "%s%s", l ? "," : "", r->devices[i]->id);
	}
	v1beta1__list_and_watch_response__free_unpacked(r, NULL);
	gf_obuf_release(&resp);
}

static void test_mig_resources(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gf-migdp-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(dpdir, sizeof(dpdir), "%s/dp", dir);
	assert_int_equal(mkdir(dpdir, 0755), 0);
	char statef[128];
	snprintf(statef, sizeof(statef), "%s/state", dir);
	FILE *f = fopen(statef, "w");
	assert_non_null(f);
	fputs("driver 550.54.15\ngpu 0 uuid=" H100 " name=\"NVIDIA H100 80GB HBM3\" mem_total_mib=81559 mem_used_mib=0\n", f);
	fclose(f);
	setenv("GF_FAKE_NVML_STATE", statef, 1);
	unsetenv("GF_FAKE_NVML_MIG_STATE");

	struct gf_agent_config cfg = { .nvml_path = GF_FAKE_NVML, .interval_ms = 0 };
	gf_agent *a;
	char err[512];
	assert_int_equal(gf_agent_create(&cfg, &a, err, sizeof(err)), GF_OK);
	static struct gf_nodemig_state st;
	apply(a, BALANCED, &st);
	assert_int_equal(st.created, 4);
	char u3[96] = "", u1[96] = "";
	for (unsigned k = 0; k < st.gpu[0].n; k++) {
		if (!strcmp(st.gpu[0].inst[k].profile, "3g.40gb"))
			snprintf(u3, sizeof(u3), "%s", st.gpu[0].inst[k].uuid);
		if (!strcmp(st.gpu[0].inst[k].profile, "1g.10gb") && st.gpu[0].inst[k].start == 1)
			snprintf(u1, sizeof(u1), "%s", st.gpu[0].inst[k].uuid);
	}
	assert_true(u3[0] && u1[0]);

	struct gf_dp_config dc = { .plugin_dir = dpdir, .podres_socket = "/nonexistent/kubelet.sock" };
	gf_dp *dp = NULL;
	gf_dp_start(a, &dc, &dp, err, sizeof(err)); /* no kubelet: GF_UNAVAILABLE, serving anyway */
	assert_non_null(dp);
	char sock[200];
	static const char *const socks[] = { "gpufleet-mig-1g.10gb.sock", "gpufleet-mig-2g.20gb.sock",
					     "gpufleet-mig-3g.40gb.sock" };
	for (size_t i = 0; i < 3; i++) {
		struct stat sb;
		snprintf(sock, sizeof(sock), "%s/%s", dpdir, socks[i]);
		if (stat(sock, &sb) != 0)
			fail_msg("no socket %s", sock);
	}

	/* ListAndWatch: the MIG-mode GPU is no whole GPU; each profile lists its devices */
	char list[1024];
	list_ids("gpufleet-gpu.sock", list, sizeof(list));
	assert_string_equal(list, "");
	list_ids("gpufleet-mig-3g.40gb.sock", list, sizeof(list));
	assert_string_equal(list, u3);
	list_ids("gpufleet-mig-1g.10gb.sock", list, sizeof(list));
	assert_non_null(strstr(list, u1));
	assert_non_null(strchr(list, ','));

	V1beta1__AllocateResponse *r = NULL;
	const char *ids[1] = { u3 };
	char msg[512] = "";
	int g = allocate("gpufleet-mig-3g.40gb.sock", ids, 1, &r, msg, sizeof(msg));
	if (g != GF_GRPC_OK || !r)
		fail_msg("Allocate 3g: status %d: %s", g, msg);
	assert_int_equal(r->n_container_responses, 1);
	V1beta1__ContainerAllocateResponse *c = r->container_responses[0];
	assert_int_equal(c->n_cdi_devices, 1);
	char want[128];
	snprintf(want, sizeof(want), "gpufleet.io/gpu=%s", u3);
	assert_string_equal(c->cdi_devices[0]->name, want);
	assert_int_equal(c->n_envs, 1);
	assert_string_equal(c->envs[0]->key, "NVIDIA_VISIBLE_DEVICES");
	assert_string_equal(c->envs[0]->value, u3);
	v1beta1__allocate_response__free_unpacked(r, NULL);

	/* another profile's device, an unknown one, the MIG-mode GPU as a whole GPU */
	ids[0] = u1;
	assert_int_equal(allocate("gpufleet-mig-3g.40gb.sock", ids, 1, &r, msg, sizeof(msg)), GF_GRPC_INVALID_ARGUMENT);
	assert_non_null(strstr(msg, "not a 3g.40gb MIG device of this node"));
	ids[0] = H100;
	assert_int_equal(allocate("gpufleet-gpu.sock", ids, 1, &r, msg, sizeof(msg)), GF_GRPC_FAILED_PRECONDITION);
	assert_non_null(strstr(msg, "is in MIG mode"));

	/* the 3g was given to a container (the kubelet could not be asked): a
	 * layout without it keeps it; the unused 1g at slot 1 goes */
	apply(a, "{\"" H100 "\":[{\"profile\":\"1g.10gb\",\"start\":0},{\"profile\":\"2g.20gb\",\"start\":2}]}", &st);
	assert_int_equal(st.destroyed, 1);
	assert_int_equal(st.refused, 1);
	bool kept = false;
	for (unsigned k = 0; k < st.gpu[0].n; k++)
		kept |= !strcmp(st.gpu[0].inst[k].uuid, u3) && st.gpu[0].inst[k].in_use && st.gpu[0].inst[k].unwanted;
	assert_true(kept);

	gf_dp_stop(dp);
	gf_agent_destroy(a);
	snprintf(sock, sizeof(sock), "rm -rf %s", dir);
	assert_int_equal(system(sock), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mig_resources),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
