/* utf8.c — see utf8.h. The table of valid sequences is Unicode's
 * (The Unicode Standard, table 3-7, "well-formed UTF-8 byte sequences"). */
#include "utf8.h"

#include "strbuf.h"

/* Length of the valid sequence at s (n bytes left), or 0. */
static size_t seq_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;
	if (c >= 0x01 && c <= 0x7f)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

bool utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *e = p + n;
	while (p < e) {
		if (*p >= 0x01 && *p <= 0x7f) {
			p++;
			continue;
		}
		size_t len = seq_len(p, (size_t)(e - p));
		if (!len)
			return false;
		p += len;
	}
	return true;
}

void utf8_sanitize(struct strbuf *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *e = p + n;
	while (p < e) {
		size_t len = seq_len(p, (size_t)(e - p));
		if (len) {
			strbuf_add(out, p, len);
			p += len;
		} else {
			strbuf_add(out, "\xef\xbf\xbd", 3);
			p++;
		}
	}
}
