/* utf8.h — keep text that goes into the database valid UTF-8.
 *
 * Trace names may hold bytes that are not UTF-8 (a known PyTorch export
 * quirk) or a NUL from "\u0000". SQLite stores them as given, and then a
 * user's Python (sqlite3, pandas) fails to decode the row. Text is checked
 * once when it is interned and, only when needed, copied with each bad byte
 * replaced by U+FFFD.
 */
#ifndef UTF8_H
#define UTF8_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf;

/* True when s[0..n) is valid UTF-8 (shortest forms, no surrogates, at most
 * U+10FFFF) without a NUL byte. */
bool utf8_valid(const char *s, size_t n);

/* Appends s[0..n) to out with every byte that does not start a valid
 * sequence (and every NUL) replaced by U+FFFD. */
void utf8_sanitize(struct strbuf *out, const char *s, size_t n);

#endif
