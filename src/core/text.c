/*
 * core/text.c - UTF-8 aware cutting, and the byte-order mark.
 *
 * UTF-8 continuation bytes are 10xxxxxx; every other byte starts a character.
 * So a cut before byte i is on a character boundary exactly when s[i] is not
 * a continuation byte, and the nearest boundary at or before max is at most
 * 3 bytes back in valid UTF-8 (the longest character is 4 bytes).
 */
#include <string.h>

#include "core/text.h"

static int is_continuation(unsigned char c)
{
	return (c & 0xC0) == 0x80;
}

size_t gf_utf8_cut(const char *s, size_t len, size_t max)
{
	size_t n = max;

	if (len <= max)
		return len;
	for (int back = 0; back < 3 && n > 0 && is_continuation((unsigned char)s[n]); back++)
		n--;
	/* Still inside a run of continuation bytes: not UTF-8; cut bytes at max. */
	return is_continuation((unsigned char)s[n]) ? max : n;
}

size_t gf_utf8_bom_len(const char *data, size_t len)
{
	return len >= 3 && !memcmp(data, GF_UTF8_BOM, 3) ? 3 : 0;
}
