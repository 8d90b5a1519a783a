/* simd.h — the trace reader's SIMD primitives, one implementation per level.
 *
 * Each translation unit gets the implementation of the target it is
 * compiled for: AVX-512 (BW and VL), AVX2, SSE2 (x86-64's baseline), NEON
 * (aarch64), or plain C when none is there or PP_SIMD_SCALAR is defined
 * before this header. The reader compiles its event parser once per level
 * (trace_events.h) and chooses one at run time (trace_read.c), so every
 * level is built and tested on one machine; this header needs only the
 * compiler's own headers, so its NEON half compiles for aarch64 anywhere
 * (t0307). Callers keep 64 readable bytes after every range they pass
 * (JS_PAD) and 64 writable bytes after every copy's end.
 */
#ifndef PP_SIMD_H
#define PP_SIMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(PP_SIMD_SCALAR)
#define SIMD_LEVEL "scalar"
#elif defined(__AVX512BW__) && defined(__AVX512VL__)
#define SIMD_AVX512 1
#define SIMD_LEVEL "avx512"
#include <immintrin.h>
#elif defined(__AVX2__)
#define SIMD_AVX2 1
#define SIMD_LEVEL "avx2"
#include <immintrin.h>
#elif defined(__SSE2__)
#define SIMD_SSE2 1
#define SIMD_LEVEL "sse2"
#include <emmintrin.h>
#elif defined(__ARM_NEON) && defined(__aarch64__)
#define SIMD_NEON 1
#define SIMD_LEVEL "neon"
#include <arm_neon.h>
#else
#define SIMD_LEVEL "scalar"
#endif

#define SIMD_INLINE inline __attribute__((always_inline))

static SIMD_INLINE uint64_t simd_load8(const void *p)
{
	uint64_t x;
	__builtin_memcpy(&x, p, 8);
	return x;
}

#if defined(SIMD_SSE2) || defined(SIMD_AVX2) || defined(SIMD_AVX512)
/* Vectors of one byte repeated, kept in memory: GCC builds a
 * _mm*_set1_epi8() of a constant from a general register at each use
 * (at AVX2 mov, vmovd and vpbroadcastb: three instructions per vector, on
 * every string scanned), where a load, or a compare's memory operand, costs
 * one or none. simd_bytes() hides the table's contents from the compiler
 * behind an empty asm, as it would otherwise build them again. */
enum { SIMD_K_QUOTE, SIMD_K_BACKSLASH, SIMD_K_ZERO, SIMD_K_NINE, SIMD_K_N };
static const uint8_t simd_k[SIMD_K_N][64] __attribute__((aligned(64))) = {
	[SIMD_K_QUOTE] = { [0 ... 63] = '"' },
	[SIMD_K_BACKSLASH] = { [0 ... 63] = '\\' },
	[SIMD_K_ZERO] = { [0 ... 63] = '0' },
	[SIMD_K_NINE] = { [0 ... 63] = 9 },
};

static SIMD_INLINE const void *simd_bytes(int which)
{
	const uint8_t *k = simd_k[which];
	__asm__("" : "+r"(k));
	return k;
}
#endif

/* AVX2 and SSE2 name one vector of SIMD_VEC bytes and its operations, so
 * that a primitive both do alike is written once. */
#if defined(SIMD_AVX2)
#define SIMD_VEC 32
typedef __m256i simd_vec;
#define SIMD_LOADU(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define SIMD_LOAD(p) _mm256_load_si256((const __m256i *)(p))
#define SIMD_STOREU(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), (v))
#define SIMD_EQ(a, b) _mm256_cmpeq_epi8((a), (b))
#define SIMD_OR(a, b) _mm256_or_si256((a), (b))
#define SIMD_MASK(v) (uint32_t) _mm256_movemask_epi8(v)
#define SIMD_UNROLL_BLOCK _Pragma("GCC unroll 16")
#elif defined(SIMD_SSE2)
#define SIMD_VEC 16
typedef __m128i simd_vec;
#define SIMD_LOADU(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define SIMD_LOAD(p) _mm_load_si128((const __m128i *)(p))
#define SIMD_STOREU(p, v) _mm_storeu_si128((__m128i *)(void *)(p), (v))
#define SIMD_EQ(a, b) _mm_cmpeq_epi8((a), (b))
#define SIMD_OR(a, b) _mm_or_si128((a), (b))
#define SIMD_MASK(v) (unsigned)_mm_movemask_epi8(v)
#define SIMD_UNROLL_BLOCK _Pragma("GCC unroll 32")
#endif

#if defined(SIMD_NEON)
/* A 64-bit mask with 4 bits per byte of a 0x00/0xff vector. */
static SIMD_INLINE uint64_t simd_neon_nibbles(uint8x16_t m)
{
	return vget_lane_u64(vreinterpret_u64_u8(vshrn_n_u16(vreinterpretq_u16_u8(m), 4)), 0);
}
#endif

/* The quotes and backslashes of the SIMD_SCAN bytes at p: SIMD_SCAN_BITS
 * bits per byte, the first byte lowest. */
#if defined(SIMD_AVX512)
#define SIMD_SCAN 64
#define SIMD_SCAN_BITS 1
static SIMD_INLINE uint64_t simd_quote_or_bs(const char *p)
{
	__m512i v = _mm512_loadu_si512((const void *)p);
	return _mm512_cmpeq_epi8_mask(v, _mm512_load_si512(simd_bytes(SIMD_K_QUOTE))) |
	       _mm512_cmpeq_epi8_mask(v, _mm512_load_si512(simd_bytes(SIMD_K_BACKSLASH)));
}
#elif defined(SIMD_AVX2) || defined(SIMD_SSE2)
#define SIMD_SCAN SIMD_VEC
#define SIMD_SCAN_BITS 1
static SIMD_INLINE uint64_t simd_quote_or_bs(const char *p)
{
	simd_vec v = SIMD_LOADU(p);
	return SIMD_MASK(SIMD_OR(SIMD_EQ(v, SIMD_LOAD(simd_bytes(SIMD_K_QUOTE))),
				 SIMD_EQ(v, SIMD_LOAD(simd_bytes(SIMD_K_BACKSLASH)))));
}
#elif defined(SIMD_NEON)
#define SIMD_SCAN 16
#define SIMD_SCAN_BITS 4
static SIMD_INLINE uint64_t simd_quote_or_bs(const char *p)
{
	uint8x16_t v = vld1q_u8((const uint8_t *)p);
	return simd_neon_nibbles(
		vorrq_u8(vceqq_u8(v, vdupq_n_u8('"')), vceqq_u8(v, vdupq_n_u8('\\'))));
}
#else
#define SIMD_SCAN 8
#define SIMD_SCAN_BITS 8
/* SWAR: the high bit of each byte that equals one of the two (exact up to
 * the first: a borrow only reaches the bytes after it). */
static SIMD_INLINE uint64_t simd_quote_or_bs(const char *p)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint64_t x = simd_load8(p), q = x ^ (ones * '"'), b = x ^ (ones * '\\');
	return (((q - ones) & ~q) | ((b - ones) & ~b)) & highs;
}
#endif

/* The first '"' or '\\' in [p, end), or end. */
static SIMD_INLINE const char *simd_find_quote_or_bs(const char *p, const char *end)
{
	while (p < end) {
		uint64_t m = simd_quote_or_bs(p);
		if (m) {
			p += __builtin_ctzll(m) / SIMD_SCAN_BITS;
			return p < end ? p : end;
		}
		p += SIMD_SCAN;
	}
	return end;
}

/* Whether the bytes at p equal lit (32 bytes) at every
 * byte that mask (bit i: byte i; its bits are the first len of 32) names:
 * one compare, without a branch on the length. */
static SIMD_INLINE bool simd_lit_eq(const char *p, const char *lit, uint32_t mask, unsigned len)
{
#if defined(SIMD_AVX512)
	(void)len;
	__m256i a = _mm256_loadu_si256((const __m256i *)(const void *)p);
	__m256i b = _mm256_loadu_si256((const __m256i *)(const void *)lit);
	return _mm256_mask_cmpneq_epi8_mask(mask, a, b) == 0;
#elif defined(SIMD_AVX2)
	(void)len;
	__m256i a = _mm256_loadu_si256((const __m256i *)(const void *)p);
	__m256i b = _mm256_loadu_si256((const __m256i *)(const void *)lit);
	uint32_t m = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, b));
	return (m & mask) == mask;
#elif defined(SIMD_SSE2)
	(void)len;
	__m128i a = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i b = _mm_loadu_si128((const __m128i *)(const void *)lit);
	__m128i c = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
	__m128i d = _mm_loadu_si128((const __m128i *)(const void *)(lit + 16));
	uint32_t m = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a, b)) |
		     (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(c, d)) << 16;
	return (m & mask) == mask;
#elif defined(SIMD_NEON)
	static const uint8_t ones[64] = { [0 ... 31] = 0xff };
	(void)mask;
	const uint8_t *keep = ones + 32 - len; /* 0xff for the first len bytes */
	uint8x16_t e0 =
		vorrq_u8(vceqq_u8(vld1q_u8((const uint8_t *)p), vld1q_u8((const uint8_t *)lit)),
			 vmvnq_u8(vld1q_u8(keep)));
	uint8x16_t e1 = vorrq_u8(
		vceqq_u8(vld1q_u8((const uint8_t *)p + 16), vld1q_u8((const uint8_t *)lit + 16)),
		vmvnq_u8(vld1q_u8(keep + 16)));
	return vminvq_u8(vandq_u8(e0, e1)) == 0xff;
#else
	/* words of the text XOR the literal, kept only where the literal is */
	uint64_t diff = 0;
	(void)mask;
	for (unsigned i = 0; i < 32; i += 8) {
		uint64_t w = simd_load8(p + i) ^ simd_load8(lit + i);
		unsigned k = len > i ? len - i : 0; /* bytes of the literal in this word */
		diff |= k >= 8 ? w : w & ((1ull << (8 * k)) - 1);
	}
	return diff == 0;
#endif
}

/* The copy step: copies write and read up to SIMD_STEP - 1 bytes past n. */
#if defined(SIMD_AVX512)
#define SIMD_STEP 64
#elif defined(SIMD_AVX2)
#define SIMD_STEP 32
#else
#define SIMD_STEP 16
#endif

/* Copies n bytes from s to o, SIMD_STEP at a time. */
static SIMD_INLINE void simd_copy(char *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i += SIMD_STEP) {
#if defined(SIMD_AVX512)
		_mm512_storeu_si512((void *)(o + i), _mm512_loadu_si512((const void *)(s + i)));
#elif defined(SIMD_AVX2)
		_mm256_storeu_si256((__m256i *)(void *)(o + i),
				    _mm256_loadu_si256((const __m256i *)(const void *)(s + i)));
#else
		__builtin_memcpy(o + i, s + i, 16);
#endif
	}
}

/* Copies a block of n bytes (a multiple of 64) in whole vector steps: a
 * struct copy or memset of this size becomes `rep movs`/`rep stos`, whose
 * start-up costs more than the copy. */
static SIMD_INLINE void simd_copy_block(void *dst, const void *src, size_t n)
{
#if defined(SIMD_AVX512)
#pragma GCC unroll 8
	for (size_t i = 0; i < n; i += 64)
		_mm512_storeu_si512((char *)dst + i, _mm512_loadu_si512((const char *)src + i));
#elif defined(SIMD_AVX2) || defined(SIMD_SSE2)
	SIMD_UNROLL_BLOCK
	for (size_t i = 0; i < n; i += SIMD_VEC)
		SIMD_STOREU((char *)dst + i, SIMD_LOADU((const char *)src + i));
#elif defined(SIMD_NEON)
	for (size_t i = 0; i < n; i += 16)
		vst1q_u8((uint8_t *)dst + i, vld1q_u8((const uint8_t *)src + i));
#else
	for (size_t i = 0; i < n; i += 8) {
		uint64_t w = simd_load8((const char *)src + i);
		__builtin_memcpy((char *)dst + i, &w, 8);
	}
#endif
}

/* Whether the 16 bytes at p are ASCII digits, and then their value: with
 * SSSE3/SSE4.1 (the AVX2 and AVX-512 levels), pairs, quads and eights
 * combined by multiply-adds in one register; elsewhere false, and the
 * caller reads them 8 at a time. */
static SIMD_INLINE bool simd_digits16(const char *p, uint64_t *v)
{
#if (defined(SIMD_AVX2) || defined(SIMD_AVX512)) && defined(__SSE4_1__)
	__m128i d = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)p),
				 _mm_load_si128((const __m128i *)simd_bytes(SIMD_K_ZERO)));
	__m128i nine = _mm_load_si128((const __m128i *)simd_bytes(SIMD_K_NINE));
	if (_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(d, nine), nine)) != 0xffff)
		return false;
	__m128i t = _mm_maddubs_epi16(
		d, _mm_setr_epi8(10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1));
	t = _mm_madd_epi16(t, _mm_setr_epi16(100, 1, 100, 1, 100, 1, 100, 1));
	t = _mm_packus_epi32(t, t);
	t = _mm_madd_epi16(t, _mm_setr_epi16(10000, 1, 10000, 1, 10000, 1, 10000, 1));
	uint64_t r = (uint64_t)_mm_cvtsi128_si64(t);
	*v = (r & 0xffffffffu) * 100000000u + (r >> 32);
	return true;
#else
	(void)p;
	(void)v;
	return false;
#endif
}

/* After a ',' at p - 1: the position of the '{' that follows within 16
 * bytes after JSON whitespace only (the next event's start), or NULL. */
static SIMD_INLINE const char *simd_brace_after_ws(const char *p)
{
#if defined(SIMD_SSE2) || defined(SIMD_AVX2) || defined(SIMD_AVX512)
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
	unsigned brace = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('{')));
	unsigned ws = (unsigned)_mm_movemask_epi8(
		_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
					  _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
			     _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')),
					  _mm_cmpeq_epi8(v, _mm_set1_epi8('\t')))));
	if (!brace)
		return NULL;
	unsigned k = (unsigned)__builtin_ctz(brace), before = (1u << k) - 1;
	return (ws & before) == before ? p + k : NULL;
#else
	for (int i = 0; i < 16; i++, p++) {
		if (*p == '{')
			return p;
		if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t')
			return NULL;
	}
	return NULL;
#endif
}

#endif
