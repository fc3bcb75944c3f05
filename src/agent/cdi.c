/*
 * agent/cdi.c - render and write the node's CDI spec (see cdi.h).
 *
 * The document, for GPUs g0..gn-1 (CDI spec 0.6.0 fields only):
 *   { "cdiVersion": "0.6.0", "kind": "gpufleet.io/gpu",
 *     "devices": [ { "name": <uuid>, "containerEdits": { "deviceNodes": [<gpu node>] } }...,
 *                  { "name": "all", "containerEdits": { "deviceNodes": [every gpu node] } } ],
 *     "containerEdits": { "env": ["NVIDIA_VISIBLE_DEVICES=void"],
 *                         "deviceNodes": [<control nodes that exist>] } }
 * A node: { "path": "/dev/NAME", "type": "c", "major": M, "minor": m,
 *           "permissions": "rw" [, "hostPath": DEV_ROOT/NAME] }.
 * O(n) in the GPUs; cJSON builds it (escaping), one allocation per value.
 */
#include "agent/cdi.h"
#include "agent/agent_impl.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static bool cdi_name_ok(const char *s)
{
	if (!*s || strlen(s) > 253)
		return false;
	for (; *s; s++) {
		char c = *s;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
		      c == '_' || c == '.' || c == ':'))
			return false;
	}
	return true;
}

/* One device node; NULL when it is optional (gpu = false) and missing. */
static cJSON *node(const char *dev_root, const char *name, bool gpu, unsigned minor)
{
	char host[4096];
	struct stat st;
	unsigned maj = GF_CDI_NVIDIA_MAJOR, min = minor;
	bool custom_root = strcmp(dev_root, "/dev") != 0;

	snprintf(host, sizeof(host), "%s/%s", dev_root, name);
	if (stat(host, &st) == 0 && S_ISCHR(st.st_mode)) {
		maj = major(st.st_rdev);
		min = minor(st.st_rdev);
	} else if (!gpu) {
		return NULL;
	}
	cJSON *n = cJSON_CreateObject();
	char path[64];
	snprintf(path, sizeof(path), "/dev/%s", name);
	cJSON_AddStringToObject(n, "path", path);
	if (custom_root)
		cJSON_AddStringToObject(n, "hostPath", host);
	cJSON_AddStringToObject(n, "type", "c");
	cJSON_AddNumberToObject(n, "major", maj);
	cJSON_AddNumberToObject(n, "minor", min);
	cJSON_AddStringToObject(n, "permissions", "rw");
	return n;
}

static cJSON *gpu_node(const char *dev_root, unsigned minor)
{
	char name[32];
	snprintf(name, sizeof(name), "nvidia%u", minor);
	return node(dev_root, name, true, minor);
}

static cJSON *device(const char *name, cJSON *nodes)
{
	cJSON *d = cJSON_CreateObject(), *edits = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "name", name);
	cJSON_AddItemToObject(edits, "deviceNodes", nodes);
	cJSON_AddItemToObject(d, "containerEdits", edits);
	return d;
}

gf_err gf_cdi_render(const struct gf_cdi_gpu *gpus, unsigned n, const char *dev_root, struct gf_obuf *out,
		     char *err, size_t errlen)
{
	if (!dev_root)
		dev_root = "/dev";
	for (unsigned i = 0; i < n; i++) {
		if (!cdi_name_ok(gpus[i].uuid)) {
			snprintf(err, errlen, "GPU %u: UUID '%.80s' is not a valid CDI device name", i, gpus[i].uuid);
			return GF_INVAL;
		}
	}
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "cdiVersion", "0.6.0");
	cJSON_AddStringToObject(doc, "kind", GF_CDI_KIND);
	cJSON *devs = cJSON_AddArrayToObject(doc, "devices");
	cJSON *all = cJSON_CreateArray();
	for (unsigned i = 0; i < n; i++) {
		cJSON *one = cJSON_CreateArray();
		cJSON_AddItemToArray(one, gpu_node(dev_root, gpus[i].minor));
		cJSON_AddItemToArray(devs, device(gpus[i].uuid, one));
		cJSON_AddItemToArray(all, gpu_node(dev_root, gpus[i].minor));
	}
	cJSON_AddItemToArray(devs, device("all", all));

	cJSON *edits = cJSON_CreateObject();
	cJSON *env = cJSON_AddArrayToObject(edits, "env");
	cJSON_AddItemToArray(env, cJSON_CreateString("NVIDIA_VISIBLE_DEVICES=void"));
	cJSON *ctl = cJSON_CreateArray();
	static const char *const control[] = { "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools" };
	for (size_t i = 0; i < sizeof(control) / sizeof(control[0]); i++) {
		cJSON *c = node(dev_root, control[i], false, 0);
		if (c)
			cJSON_AddItemToArray(ctl, c);
	}
	if (cJSON_GetArraySize(ctl) > 0)
		cJSON_AddItemToObject(edits, "deviceNodes", ctl);
	else
		cJSON_Delete(ctl);
	cJSON_AddItemToObject(doc, "containerEdits", edits);

	char *text = cJSON_Print(doc);
	cJSON_Delete(doc);
	if (!text) {
		snprintf(err, errlen, "CDI spec: out of memory");
		return GF_NOMEM;
	}
	gf_obuf_puts(out, text);
	gf_obuf_puts(out, "\n");
	free(text);
	if (out->err)
		snprintf(err, errlen, "CDI spec: %s", gf_strerror(out->err));
	return out->err;
}

gf_err gf_cdi_write(const char *dir, const char *spec, size_t len, char *err, size_t errlen)
{
	char path[4096], tmp[4200];
	snprintf(path, sizeof(path), "%s/%s", dir, GF_CDI_SPEC_FILE);
	/* A name the CDI loaders skip (.json/.yaml only) while it is written. */
	snprintf(tmp, sizeof(tmp), "%s/.%s.%ld.tmp", dir, GF_CDI_SPEC_FILE, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		return GF_IO;
	}
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, spec + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			snprintf(err, errlen, "%s: write: %s", tmp, strerror(errno));
			goto fail_close;
		}
		off += (size_t)w;
	}
	if (fsync(fd) != 0) {
		snprintf(err, errlen, "%s: fsync: %s", tmp, strerror(errno));
		goto fail_close;
	}
	close(fd);
	if (rename(tmp, path) != 0) {
		snprintf(err, errlen, "%s: rename to %s: %s", tmp, path, strerror(errno));
		unlink(tmp);
		return GF_IO;
	}
	return GF_OK;

fail_close:
	close(fd);
	unlink(tmp);
	return GF_IO;
}

gf_err gf_agent_render_cdi(gf_agent *a, const char *dev_root, struct gf_obuf *out, char *err, size_t errlen)
{
	/* Each GPU, then each MIG device (named by its MIG- UUID, with its
	 * parent's /dev/nvidiaN). */
	struct gf_cdi_gpu gpus[GF_AGENT_MAX_GPUS * (GF_AGENT_MAX_MIG + 1)];
	unsigned n = 0;
	pthread_mutex_lock(&a->lock);
	gf_agent_maybe_collect_locked(a);
	for (unsigned i = 0; i < a->ngpus; i++) {
		struct gf_agent_gpu *g = &a->gpus[i];
		unsigned minor = g->index;
		if (!g->identified)
			continue;
		if (a->nvml.minor_number && a->nvml.minor_number(g->dev, &minor) != 0)
			minor = g->index;
		gpus[n++] = (struct gf_cdi_gpu){ g->uuid, minor };
		for (unsigned k = 0; g->mig_on && k < g->nmig; k++)
			if (g->mig[k].uuid[0])
				gpus[n++] = (struct gf_cdi_gpu){ g->mig[k].uuid, minor };
	}
	gf_err e = gf_cdi_render(gpus, n, dev_root, out, err, errlen);
	pthread_mutex_unlock(&a->lock);
	return e;
}
