/*
 * http/auth.c - the access rule of gpufleet's API servers (http/auth.h).
 * The token comparison touches every byte of both strings' common length
 * whatever they hold, so its time does not tell how much of a guess was right.
 */
#include "http/auth.h"

#include <string.h>

static bool token_equal(const char *given, const char *want)
{
	size_t lg = strlen(given), lw = strlen(want);
	unsigned char diff = lg != lw;
	for (size_t i = 0; i < lw; i++)
		diff |= (unsigned char)(want[i] ^ (i < lg ? given[i] : 0));
	return !diff;
}

bool gf_http_auth_allows(const struct gf_http_auth *a, bool peer_verified, const char *peer_cn,
			 const char *authorization)
{
	if (!a->required)
		return true;
	if (a->client_certs && peer_verified) {
		if (!a->nallowed)
			return true;
		for (size_t i = 0; i < a->nallowed; i++)
			if (peer_cn && !strcmp(a->allowed_cns[i], peer_cn))
				return true;
	}
	if (a->token && *a->token && authorization && !strncmp(authorization, "Bearer ", 7))
		return token_equal(authorization + 7, a->token);
	return false;
}
