/*
 * fuzz/fuzz_agent_notice.c - the spot-notice parsers of the node agent
 * (agent/notice.h): what a cloud metadata service answers, which the agent
 * believes only after these checks.  The first byte picks the parser ('A'
 * AWS instance-action, 'R' AWS rebalance, 'P' GCP preempted, 'M' GCP
 * maintenance-event, 'Z' Azure scheduled events for VM "vm1", 'D' an RFC 1123
 * date; any other byte: its value mod 6), the rest is the body.
 * Invariants: no crash; the answer is GF_OK, GF_NOENT, or GF_PARSE/GF_TOOBIG
 * with a message; a notice has a NUL-terminated signal and a time within a
 * day before to 30 days after now.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/notice.h"
#include "fuzzutil.h"

#define NOW 1764664200LL

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	static const char picks[] = "ARPMZD";
	const char *hit = memchr(picks, data[0], 6);
	int sel = hit ? (int)(hit - picks) : data[0] % 6;
	const char *body = (const char *)data + 1;
	size_t n = size - 1;
	struct gf_notice_signal s;
	char err[256] = "";
	gf_err e;
	memset(&s, 0, sizeof(s));
	switch (sel) {
	case 0: e = gf_notice_parse_aws_action(body, n, NOW, &s, err, sizeof(err)); break;
	case 1: e = gf_notice_parse_aws_rebalance(body, n, NOW, &s, err, sizeof(err)); break;
	case 2: e = gf_notice_parse_gcp_preempted(body, n, NOW, &s, err, sizeof(err)); break;
	case 3: e = gf_notice_parse_gcp_maintenance(body, n, NOW, &s, err, sizeof(err)); break;
	case 4: e = gf_notice_parse_azure(body, n, NOW, "vm1", &s, err, sizeof(err)); break;
	default: {
		char *c = gf_fuzz_cstr(body, n);
		int64_t t;
		/* four-digit years only: 0000-01-01 .. 9999-12-31 23:59:59 */
		if (c && gf_notice_parse_rfc1123(c, &t) && (t < -62167219200LL || t > 253402300799LL))
			abort();
		free(c);
		return 0;
	}
	}
	if (e == GF_OK) {
		size_t k = strnlen(s.signal, sizeof(s.signal));
		if (!k || k == sizeof(s.signal) || strnlen(s.detail, sizeof(s.detail)) == sizeof(s.detail) ||
		    s.at < NOW - 86400 || s.at > NOW + 30LL * 86400)
			abort();
	} else if (e == GF_PARSE || e == GF_TOOBIG) {
		if (!err[0])
			abort();
	} else if (e != GF_NOENT) {
		abort();
	}
	return 0;
}
