/*
 * core/text.h - small helpers for text the engine shows or writes: cutting
 * UTF-8 on a character boundary, and the byte-order mark of CSV files.
 */
#ifndef GF_CORE_TEXT_H
#define GF_CORE_TEXT_H

#include <stddef.h>

#define GF_UTF8_BOM "\xEF\xBB\xBF"

/*
 * The length of the longest prefix of s[0..len) that is at most max bytes
 * and does not end inside a UTF-8 character: a cut at max that would split
 * a multi-byte character moves back to the character's first byte.  Bytes
 * that are not UTF-8 are treated as one-byte characters (the cut moves back
 * at most 3 bytes).  Returns len when len <= max.
 */
size_t gf_utf8_cut(const char *s, size_t len, size_t max);

/* 3 if data[0..len) starts with the UTF-8 byte-order mark, else 0. */
size_t gf_utf8_bom_len(const char *data, size_t len);

#endif /* GF_CORE_TEXT_H */
