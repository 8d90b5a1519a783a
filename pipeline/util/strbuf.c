/* strbuf.c — see strbuf.h. */
#include "strbuf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pp.h"

char strbuf_slopbuf[1];

void strbuf_init(struct strbuf *sb, size_t hint)
{
	sb->alloc = sb->len = 0;
	sb->buf = strbuf_slopbuf;
	if (hint)
		strbuf_grow(sb, hint);
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb, 0);
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;
	if (need <= sb->alloc)
		return;
	size_t alloc = sb->alloc ? sb->alloc : 64;
	while (alloc < need)
		alloc = alloc < (SIZE_MAX / 2) ? alloc * 2 : need;
	if (!sb->alloc) {
		sb->buf = xmalloc(alloc);
		sb->buf[0] = '\0';
	} else {
		sb->buf = xrealloc(sb->buf, alloc);
	}
	sb->alloc = alloc;
}

void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->alloc)
		sb->buf[0] = '\0';
}

void strbuf_setlen(struct strbuf *sb, size_t len)
{
	sb->len = len;
	if (sb->alloc)
		sb->buf[len] = '\0';
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	strbuf_grow(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_add_folder(struct strbuf *sb, const char *path)
{
	const char *slash = strrchr(path, '/');
	if (slash)
		strbuf_add(sb, path, slash == path ? 1 : (size_t)(slash - path));
	else
		strbuf_addch(sb, '.');
}

void strbuf_addch(struct strbuf *sb, int c)
{
	strbuf_grow(sb, 1);
	sb->buf[sb->len++] = (char)c;
	sb->buf[sb->len] = '\0';
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(sb->buf + sb->len, sb->alloc ? sb->alloc - sb->len : 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	if ((size_t)n >= (sb->alloc ? sb->alloc - sb->len : 0)) {
		strbuf_grow(sb, (size_t)n);
		vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, ap);
	}
	sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void strbuf_add_quoted(struct strbuf *sb, const char *s, char q)
{
	strbuf_addch(sb, q);
	for (; *s; s++) {
		if (*s == q)
			strbuf_addch(sb, q);
		strbuf_addch(sb, *s);
	}
	strbuf_addch(sb, q);
}

void strbuf_add_json_str(struct strbuf *sb, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	strbuf_grow(sb, len + 2);
	strbuf_addch(sb, '"');
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '"': strbuf_add(sb, "\\\"", 2); break;
		case '\\': strbuf_add(sb, "\\\\", 2); break;
		case '\n': strbuf_add(sb, "\\n", 2); break;
		case '\r': strbuf_add(sb, "\\r", 2); break;
		case '\t': strbuf_add(sb, "\\t", 2); break;
		default:
			if (c < 0x20) {
				char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
				strbuf_add(sb, u, 6);
			} else {
				strbuf_addch(sb, c);
			}
		}
	}
	strbuf_addch(sb, '"');
}

char *strbuf_detach(struct strbuf *sb, size_t *len)
{
	if (!sb->alloc)
		strbuf_grow(sb, 0);
	char *r = sb->buf;
	if (len)
		*len = sb->len;
	strbuf_init(sb, 0);
	return r;
}

int strbuf_read_file(struct strbuf *sb, const char *path, size_t pad, struct strbuf *err)
{
	FILE *f = fopen(path, "rb");
	size_t n;
	int rc = 0;
	if (!f)
		return pp_err(err, PP_EIO, "cannot open '%s': %s", path, strerror(errno));
	do {
		strbuf_grow(sb, 65536);
		n = fread(sb->buf + sb->len, 1, sb->alloc - sb->len - 1, f);
		sb->len += n;
	} while (n > 0);
	if (ferror(f)) {
		rc = pp_err(err, PP_EIO, "cannot read '%s': %s", path, strerror(errno));
	}
	fclose(f);
	strbuf_grow(sb, pad);
	memset(sb->buf + sb->len, 0, pad + 1);
	return rc;
}

int pp_err_prefix(struct strbuf *err, size_t mark, int code, const char *fmt, ...)
{
	struct strbuf ctx = STRBUF_INIT;
	va_list ap;
	size_t at = mark;
	if (at && at == err->len)
		strbuf_addch(err, '\n'); /* the callee said nothing */
	if (at && err->buf[at] == '\n')
		at++;
	va_start(ap, fmt);
	strbuf_vaddf(&ctx, fmt, ap);
	va_end(ap);
	strbuf_grow(err, ctx.len);
	memmove(err->buf + at + ctx.len, err->buf + at, err->len - at + 1);
	memcpy(err->buf + at, ctx.buf, ctx.len);
	err->len += ctx.len;
	strbuf_release(&ctx);
	return code;
}

int error_lines(const char *msgs)
{
	while (msgs && *msgs) {
		const char *nl = strchr(msgs, '\n');
		int n = nl ? (int)(nl - msgs) : (int)strlen(msgs);
		error("%.*s", n, msgs);
		msgs += n + (nl ? 1 : 0);
	}
	return -1;
}

int pp_verr(struct strbuf *err, int code, const char *fmt, va_list ap)
{
	if (err->len)
		strbuf_addch(err, '\n');
	strbuf_vaddf(err, fmt, ap);
	return code;
}

int pp_err(struct strbuf *err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pp_verr(err, code, fmt, ap);
	va_end(ap);
	return code;
}
