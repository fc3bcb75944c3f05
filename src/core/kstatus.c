/*
 * core/kstatus.c - the Kubernetes Status body (see kstatus.h).
 *
 * Strings are escaped as cJSON does: '"' and '\\' with a backslash, \b \f
 * \n \r \t by name, other bytes below 0x20 as \u00XX (lowercase hex), all
 * other bytes (UTF-8 included) as they are.  O(length of the strings).
 */
#include "core/kstatus.h"

#include <stdio.h>
#include <string.h>

static void put_str(struct gf_obuf *o, const char *s)
{
	gf_obuf_append(o, "\"", 1);
	for (const char *p = s ? s : ""; *p; p++) {
		unsigned char c = (unsigned char)*p;
		const char *esc = NULL;
		switch (c) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\b': esc = "\\b"; break;
		case '\f': esc = "\\f"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		default: break;
		}
		if (esc)
			gf_obuf_puts(o, esc);
		else if (c < 0x20)
			gf_obuf_printf(o, "\\u%04x", c);
		else
			gf_obuf_append(o, p, 1);
	}
	gf_obuf_append(o, "\"", 1);
}

void gf_kstatus_render(struct gf_obuf *o, unsigned code, const char *reason, const char *msg)
{
	gf_obuf_puts(o, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":");
	put_str(o, msg);
	gf_obuf_puts(o, ",\"reason\":");
	put_str(o, reason);
	gf_obuf_printf(o, ",\"code\":%u}", code);
}
