/* stage1_index.c — what a simdjson-style structural index of a trace costs
 * alone (docs/reader.md, "Tried and dropped"): the file is mapped 4 MiB at
 * a time and every 64-byte block classified with AVX-512 (quotes with
 * escapes, in-string mask by carry-less multiply, the structural
 * characters and the starts of scalars outside strings), the structural
 * positions written out as 32-bit offsets, in chunks of 64 KiB (an index
 * that stays in L2). No event is parsed: this is the floor of stage 1.
 *
 *   cc -O2 -mavx512bw -mavx512vl -mavx512vbmi2 -mpclmul -o stage1_index \
 *      tests/bench/stage1_index.c
 *   ./stage1_index TRACE.json [loop|compress]
 *
 * "loop" writes the positions with a tzcnt loop (what AVX2 machines have),
 * "compress" with AVX-512 VBMI2's byte compress (64 at once). Prints the
 * user and system seconds and the structurals found. A measuring tool, not
 * part of the build.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

enum { WINDOW = 4 << 20, CHUNK = 64 << 10 };

static uint32_t idx[CHUNK + 64];

struct carry {
	uint64_t esc, in_str, scalar;
};

static uint64_t prefix_xor(uint64_t b)
{
	__m128i v = _mm_set_epi64x(0, (long long)b);
	return (uint64_t)_mm_cvtsi128_si64(_mm_clmulepi64_si128(v, _mm_set1_epi8((char)0xff), 0));
}

/* The structurals of the 64 bytes at p (bit i: byte i). */
static uint64_t block(const char *p, struct carry *c)
{
	/* nibble tables: bit0 ',' bit1 ':' bit2 []{} bit3 ' ' bit4 \t\n\v\f\r */
	const __m512i lo_t = _mm512_broadcast_i32x4(
		_mm_setr_epi8(8, 0, 0, 0, 0, 0, 0, 0, 0, 16, 18, 20, 17, 20, 0, 0));
	const __m512i hi_t = _mm512_broadcast_i32x4(
		_mm_setr_epi8(16, 0, 9, 2, 0, 4, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0));
	__m512i v = _mm512_loadu_si512(p);
	uint64_t bs = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('\\'));
	uint64_t q = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('"'));
	__m512i lo = _mm512_and_si512(v, _mm512_set1_epi8(15));
	__m512i hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), _mm512_set1_epi8(15));
	__m512i cl = _mm512_and_si512(_mm512_shuffle_epi8(lo_t, lo), _mm512_shuffle_epi8(hi_t, hi));
	uint64_t op = _mm512_test_epi8_mask(cl, _mm512_set1_epi8(7));
	uint64_t ws = _mm512_test_epi8_mask(cl, _mm512_set1_epi8(24));
	uint64_t escaped = 0;
	if (bs | c->esc) { /* odd runs of backslashes escape the byte after */
		const uint64_t even = 0x5555555555555555ull;
		uint64_t b = bs & ~c->esc, follows = (b << 1) | c->esc, seq_even;
		uint64_t odd_starts = b & ~even & ~follows;
		c->esc = __builtin_add_overflow(odd_starts, b, &seq_even);
		escaped = (even ^ (seq_even << 1)) & follows;
	}
	q &= ~escaped;
	uint64_t in = prefix_xor(q) ^ c->in_str;
	c->in_str = (uint64_t)((int64_t)in >> 63);
	uint64_t scalar = ~(op | ws | q | in);
	uint64_t start = scalar & ~((scalar << 1) | c->scalar);
	c->scalar = scalar >> 63;
	return q | ((op | start) & ~in);
}

static size_t flatten_loop(uint64_t m, uint32_t base, uint32_t *o)
{
	size_t n = (size_t)__builtin_popcountll(m);
	for (; m; o += 4) {
		o[0] = base + (uint32_t)__builtin_ctzll(m);
		m &= m - 1;
		o[1] = base + (uint32_t)__builtin_ctzll(m);
		m &= m - 1;
		o[2] = base + (uint32_t)__builtin_ctzll(m);
		m &= m - 1;
		o[3] = base + (uint32_t)__builtin_ctzll(m);
		m &= m - 1;
	}
	return n;
}

static size_t flatten_compress(uint64_t m, uint32_t base, uint32_t *o)
{
	size_t n = (size_t)__builtin_popcountll(m);
	__m512i iota = _mm512_set_epi8(
		63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43,
		42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22,
		21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
	__m512i c = _mm512_maskz_compress_epi8(m, iota), b = _mm512_set1_epi32((int)base);
	for (size_t i = 0; i < n; i += 16) /* each quarter of the compressed bytes */
		_mm512_storeu_si512(
			o + i,
			_mm512_add_epi32(b, _mm512_cvtepu8_epi32(_mm_loadu_si128(
						    (const __m128i *)((const char *)&c + i)))));
	return n;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return fprintf(stderr, "usage: stage1_index TRACE.json [loop|compress]\n"), 2;
	bool compress = argc > 2 && !strcmp(argv[2], "compress");
	int fd = open(argv[1], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st))
		return perror(argv[1]), 1;
	uint64_t total = 0, sum = 0;
	for (off_t off = 0; off < st.st_size; off += WINDOW) {
		size_t n = (size_t)(st.st_size - off < WINDOW ? st.st_size - off : WINDOW);
		const char *m = mmap(NULL, n, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, off);
		if (m == MAP_FAILED)
			return perror("mmap"), 1;
		struct carry c = { 0, 0, 0 };
		for (size_t ch = 0; ch + 64 <= n; ch += CHUNK) {
			size_t k = 0;
			for (size_t b = ch; b < ch + CHUNK && b + 64 <= n; b += 64) {
				uint64_t mask = block(m + b, &c);
				k += compress ? flatten_compress(mask, (uint32_t)b, idx + k)
					      : flatten_loop(mask, (uint32_t)b, idx + k);
			}
			total += k;
			for (size_t i = 0; i < k; i += 64)
				sum += idx[i]; /* the index is used */
		}
		munmap((void *)m, n);
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("%s: user %.3f s, sys %.3f s, %llu structurals (%.2f bytes each) [%llu]\n",
	       compress ? "compress" : "loop", ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, (unsigned long long)total,
	       (double)st.st_size / (double)total, (unsigned long long)sum);
	return 0;
}
