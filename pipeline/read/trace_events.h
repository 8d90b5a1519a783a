/* trace_events.h — the trace reader's event parser, compiled once per SIMD
 * level.
 *
 * Each trace_events_<level>.c defines TR_LEVEL and TR_NAME and includes
 * this file, compiled by the Makefile for its target (-mavx2 ...); it
 * defines tr_level_<level> (trace_int.h), and everything else here is
 * static, so each level has its own copy of the member loops and of what
 * they inline (simd.h, key_cache.h, json_scan.h, trace_values.h).
 * trace_read.c chooses a level when a reader opens.
 *
 * The member loops: an event or its args is a sequence of members; each
 * member's key (and, for a whole literal, its value) is predicted by the
 * key cache from the ones before (key_cache.h), so the common member costs
 * one 32-byte compare and a dispatch on its key's code; the value is read
 * by a fast path for its usual form (trace_values.h) and by the general
 * readers otherwise. Anything unusual in the structure (whitespace where
 * the cache had none, a key it never saw, the window's end) takes
 * tr_member_slow(), which reads the member byte by byte and teaches the
 * cache.
 */
#ifndef TR_LEVEL
#error "define TR_LEVEL and TR_NAME, then include trace_events.h once"
#endif

#include "trace_values.h"

/* ---- the event ---------------------------------------------------------- */

/* The args members an event keeps: what args_key() returns for them (0 for
 * every other key) and where each goes. */
enum {
	A_NAME = 1,
	A_DTYPE,
	A_STREAM,
	A_DEVICE,
	A_GROUP_SIZE,
	A_SORT_INDEX,
	A_CORRELATION,
	A_EXTERNAL_ID,
	A_IN_NELEMS,
	A_OUT_NELEMS,
	A_COLLECTIVE,
	A_PG_NAME,
	A_PG_RANKS,
	A_PG_DESC,
	A_NKEYS
};

static const struct arg_field {
	int slot;     /* a K_* text slot, or -1 */
	size_t field; /* else the int64_t field of struct trace_event ... */
	unsigned bit; /* ... and its TE_* bit */
} arg_fields[A_NKEYS] = {
	[0] = { -1, 0, 0 },
	[A_NAME] = { K_ARG_NAME, 0, 0 },
	[A_DTYPE] = { K_DTYPE, 0, 0 },
	[A_COLLECTIVE] = { K_COLLECTIVE, 0, 0 },
	[A_PG_NAME] = { K_PG_NAME, 0, 0 },
	[A_PG_RANKS] = { K_PG_RANKS, 0, 0 },
	[A_PG_DESC] = { K_PG_DESC, 0, 0 },
	[A_STREAM] = { -1, offsetof(struct trace_event, stream), TE_STREAM },
	[A_DEVICE] = { -1, offsetof(struct trace_event, device), TE_DEVICE },
	[A_GROUP_SIZE] = { -1, offsetof(struct trace_event, group_size), TE_GROUP_SIZE },
	[A_SORT_INDEX] = { -1, offsetof(struct trace_event, sort_index), TE_SORT_INDEX },
	[A_CORRELATION] = { -1, offsetof(struct trace_event, correlation), TE_CORRELATION },
	[A_EXTERNAL_ID] = { -1, offsetof(struct trace_event, external_id), TE_EXTERNAL_ID },
	[A_IN_NELEMS] = { -1, offsetof(struct trace_event, in_nelems), TE_IN_NELEMS },
	[A_OUT_NELEMS] = { -1, offsetof(struct trace_event, out_nelems), TE_OUT_NELEMS },
};

/* The code of key k[0..kn) in a table ending with { NULL, 0 }; 0 when it
 * is not there. A plain scan: the key cache leaves it the first sight of
 * each literal. */
struct key_code {
	const char *key;
	int code;
};

static int key_lookup(const struct key_code *t, const char *k, size_t kn)
{
	for (; t->key; t++)
		if (strlen(t->key) == kn && !memcmp(t->key, k, kn))
			return t->code;
	return 0;
}

static const struct key_code args_keys[] = {
	{ "name", A_NAME },
	{ "dtype", A_DTYPE },
	{ "stream", A_STREAM },
	{ "device", A_DEVICE },
	{ "Group size", A_GROUP_SIZE },
	{ "sort_index", A_SORT_INDEX },
	{ "correlation", A_CORRELATION },
	{ "External id", A_EXTERNAL_ID },
	{ "In msg nelems", A_IN_NELEMS },
	{ "Out msg nelems", A_OUT_NELEMS },
	{ "Collective name", A_COLLECTIVE },
	{ "Process Group Name", A_PG_NAME },
	{ "Process Group Ranks", A_PG_RANKS },
	{ "Process Group Description", A_PG_DESC },
	{ NULL, 0 },
};

/* The A_* code of an args key, 0 when the reader does not keep it. */
static int args_key(const char *k, size_t kn)
{
	return key_lookup(args_keys, k, kn);
}

/* Runs a step that moves a position through its address on a copy q_ of
 * p, so that p itself never has its address taken and stays in a register
 * through the member loops below. */
#define STEP(call)                  \
	do {                        \
		const char *q_ = p; \
		if ((rc = (call)))  \
			return rc;  \
		p = q_;             \
	} while (0)

/* Moves *pp to the next member's value and returns its key's code. *pp is
 * at the first member's key, or else just after the previous member's
 * value. A member whose bytes from there (the separator, the key, the ':')
 * are an expected literal of the key cache costs one compare, and so does
 * the object's end; anything else takes tr_member_slow(). *at is the cache's
 * trie node, obj the object's first byte after '{', wholes the key codes
 * whose values may become part of a literal. Returns KC_END after the
 * closing '}' (with *pp after it), a code | KC_WHOLE after a whole literal
 * (*xp: its value), or M_FAIL with c->rc JS_MORE or JS_ERR: every code is
 * at most KC_END, so that a switch on it needs no range check. */
static ALWAYS_INLINE int next_member(struct cx *c, struct key_cache *kc, unsigned *at,
				     const char **pp, int (*code)(const char *, size_t),
				     const char *obj, unsigned wholes, const struct kc_next **xp)
{
	const struct kc_next *x = key_cache_find(kc, *at, *pp);
	if (x) {
		*pp += x->len;
		*at = x->node;
		*xp = x;
		return x->which;
	}
	const char *q = *pp;
	unsigned a = *at;
	int which = tr_member_slow(c, kc, &a, &q, code, obj, wholes);
	*pp = q;
	*at = a;
	return which;
}

/* Up to 8 bytes of s and its length, packed (for key_cache_branch()). A
 * kept string is followed by its NUL and the scratch's slack, so 8 bytes
 * are readable. */
static ALWAYS_INLINE uint64_t sv_key(struct pp_sv s)
{
	uint64_t x = load8(s.p);
	if (s.n < 8)
		x &= (1ull << (8 * s.n)) - 1;
	return x ^ (uint64_t)s.n << 56;
}

/* A string value kept in slot: JS_OK, or JS_MORE when the window cuts it. */
static ALWAYS_INLINE int keep_string(struct cx *c, const char **pp, int slot)
{
	const char *q;
	bool esc;
	if (js_string_end(*pp + 1, c->end, &q, &esc) != JS_OK)
		return JS_MORE;
	keep(c, slot, *pp + 1, (size_t)(q - *pp - 1), esc);
	*pp = q + 1;
	return JS_OK;
}

/* An args member read from a whole literal: as parse_args() reads it. */
static ALWAYS_INLINE void whole_arg(struct trace_event *ev, const struct arg_field *f,
				    const struct kc_next *x)
{
	if (f->bit) { /* an integer, or else absent */
		if (x->vkind == KC_VNUM) {
			*(int64_t *)(void *)((char *)ev + f->field) = x->num;
			ev->has |= f->bit;
		} else {
			ev->has &= ~f->bit;
		}
	} else if (f->slot >= 0 && x->vkind != KC_VSKIP) { /* a string, or a number's text */
		struct pp_sv *dst = (struct pp_sv *)(void *)((char *)ev + slot_field[f->slot]);
		dst->p = x->val;
		dst->n = x->vlen;
	}
}

/* Parses the args object at *pp ('{'); at: the key cache's node to start
 * from (one per kind of event). Inlined in the event's parser: a call per
 * event with args cost a prologue and epilogue and ev, c through memory. */
static ALWAYS_INLINE int parse_args(struct cx *c, const char **pp, struct trace_event *ev,
				    unsigned at)
{
	const char *p = *pp + 1, *obj = p, *q;
	const struct kc_next *x = NULL;
	int rc;
	for (;;) {
		int which = next_member(c, c->r->kc_args, &at, &p, args_key, obj, ~0u, &x);
		if (which == KC_END)
			break;
		if (which == M_FAIL)
			return c->rc;
		if (which & KC_WHOLE) { /* most: a key skipped (code 0), nothing to set */
			if (which != KC_WHOLE)
				whole_arg(ev, &arg_fields[which & ~KC_WHOLE], x);
			continue;
		}
		const struct arg_field *f = &arg_fields[which];
		if (f->bit) {
			int64_t *v = (int64_t *)(void *)((char *)ev + f->field);
			bool ok;
			if (fast_int(&p, c->end, v)) {
				ev->has |= f->bit;
				continue;
			}
			STEP(read_int_field(c, &q_, v, &ok));
			ev->has = ok ? ev->has | f->bit : ev->has & ~f->bit;
		} else if (f->slot >= 0) {
			bool kept;
			if (*p == '"') {
				if ((rc = keep_string(c, &p, f->slot)))
					return rc;
				continue;
			}
			STEP(read_text_field(c, &q_, f->slot, &kept));
		} else if ((q = skip_fast(p, c->end))) {
			p = q;
		} else {
			STEP(js_skip_value(&q_, c->end, c->final, &c->r->st, &c->e));
		}
	}
	*pp = p;
	return JS_OK;
}

/* What an event holds before its members are read, copied 16 bytes at a
 * time: a memset or struct copy of its 320 bytes becomes `rep stos`, whose
 * start-up costs more than the event's other stores together. */
static const struct trace_event empty_event = {
	.cat.p = tr_none,
	.name.p = tr_none,
	.pid.str.p = tr_none,
	.tid.str.p = tr_none,
	.id.str.p = tr_none,
	.arg_name.p = tr_none,
	.pg_name.p = tr_none,
	.pg_desc.p = tr_none,
	.pg_ranks.p = tr_none,
	.collective.p = tr_none,
	.dtype.p = tr_none,
};

_Static_assert((int)KC_BRANCHES <= (int)TRACE_CAT_KEYS,
	       "trace_event.cat_key: one per branch entry");

static ALWAYS_INLINE void clear_event(struct trace_event *ev)
{
	_Static_assert(sizeof(*ev) % 64 == 0, "struct trace_event: whole 64-byte blocks");
#if !defined(SIMD_AVX2) && !defined(SIMD_SSE2)
	simd_copy_block(ev, &empty_event, sizeof(*ev));
#else
	/* Its ten 32-byte blocks hold three kinds of contents, as only its
	 * texts' pointers (tr_none) are not zeros: at 16 bytes into block 0
	 * (cat), at the start of blocks 1 to 4 (name, the ids' texts), at 0
	 * and 16 in blocks 7 to 9 (the args' texts); blocks 5 and 6 are the
	 * args' integers. Each block is copied from the first of its kind,
	 * so the loads are those of three blocks and a zero, not ten. (The
	 * AVX-512 level copies 64 bytes a step: five kinds of five blocks;
	 * the scalar level ran more instructions so, and NEON's is untried.) */
	_Static_assert(sizeof(*ev) == 320 && offsetof(struct trace_event, cat) == 16 &&
			       offsetof(struct trace_event, name) == 32 &&
			       offsetof(struct trace_event, pid) == 48 &&
			       offsetof(struct trace_event, tid) == 80 &&
			       offsetof(struct trace_event, id) == 112 &&
			       offsetof(struct trace_id, str) == 16 &&
			       offsetof(struct trace_event, ts_ns) == 144 &&
			       offsetof(struct trace_event, arg_name) == 224 &&
			       offsetof(struct trace_event, dtype) == 304,
		       "struct trace_event: the blocks clear_event() copies");
	static const unsigned char from[10] = { 0, 1, 1, 1, 1, 5, 5, 7, 7, 7 };
#pragma GCC unroll 10
	for (int k = 0; k < 10; k++)
		simd_copy_block((char *)ev + 32 * k, (const char *)&empty_event + 32 * from[k], 32);
#endif
}

/* The codes parse_event() dispatches on; 0 for a key it skips. */
enum { E_PH = 1, E_TS, E_ID, E_BP, E_CAT, E_PID, E_TID, E_DUR, E_NAME, E_ARGS };

static const struct key_code event_keys[] = {
	{ "ph", E_PH },     { "ts", E_TS },     { "id", E_ID },   { "bp", E_BP },
	{ "cat", E_CAT },   { "pid", E_PID },   { "tid", E_TID }, { "dur", E_DUR },
	{ "name", E_NAME }, { "args", E_ARGS }, { NULL, 0 },
};

/* A ts or dur member's value into *t, and its bit into *has (cleared by
 * null). */
static ALWAYS_INLINE int time_member(struct cx *c, const char **pp, int64_t *t, unsigned bit,
				     const char *what, unsigned *has)
{
	const char *q = *pp;
	bool present;
	int rc;
	if (fast_time(pp, c->end, t)) {
		*has |= bit;
		return JS_OK;
	}
	if ((rc = read_time(c, &q, t, &present, what)))
		return rc;
	*pp = q;
	*has = present ? *has | bit : *has & ~bit;
	return JS_OK;
}

/* An id member (pid, tid, id) into *id, its text kept in slot. */
static ALWAYS_INLINE int id_member(struct cx *c, const char **pp, struct trace_id *id, unsigned bit,
				   int slot, unsigned *has)
{
	const char *q = *pp;
	bool present;
	int rc;
	if (fast_int(pp, c->end, &id->num)) {
		id_num_reset(id);
		*has |= bit;
		return JS_OK;
	}
	if ((rc = read_id(c, &q, slot, id, &present)))
		return rc;
	*pp = q;
	*has = present ? *has | bit : *has & ~bit;
	return JS_OK;
}

/* The event keys whose values a whole literal may hold (not the times,
 * which change from event to event, nor args, an object). */
#define EVENT_WHOLES (~0u & ~(1u << E_TS | 1u << E_DUR | 1u << E_ARGS))

/* An id member read from a whole literal: as id_member() reads it. */
static ALWAYS_INLINE unsigned whole_id(struct trace_id *id, const struct kc_next *x, unsigned bit)
{
	if (x->vkind == KC_VNUM) {
		id->num = x->num;
		id_num_reset(id);
	} else {
		id->is_str = true;
		id->num = 0;
		id->str.p = x->val;
		id->str.n = x->vlen;
	}
	return bit;
}

static int event_key(const char *k, size_t kn)
{
	return key_lookup(event_keys, k, kn);
}

/* The args' first key cache node for an event whose cat value, packed, is
 * kind; catb: the event cache's branch on that value, or NULL. The branch
 * keeps the node, found once (key_cache_branch() gives the same node for
 * the same value ever after), so most events look up their cat once. */
static ALWAYS_INLINE unsigned args_node(struct key_cache *kc_args, struct kc_branch *catb,
					uint64_t kind)
{
	if (!catb)
		return key_cache_branch(kc_args, 0, kind);
	if (!catb->then)
		catb->then = (uint16_t)key_cache_branch(kc_args, 0, kind);
	return catb->then;
}

/* Parses the event object at *pp ('{') into ev. Inlined in next_event(),
 * the common case, which then has one call less per event; parse_event()
 * below is the same for parse_unit(). */
static ALWAYS_INLINE int parse_event_inline(struct cx *c, const char **pp, struct trace_event *ev)
{
	const char *p = *pp + 1, *obj = p, *q, *s;
	size_t n;
	bool esc;
	unsigned at = 0;      /* key cache trie node */
	unsigned has = 0;     /* TE_* bits of the members read here (args: ev->has) */
	unsigned args_at = 0; /* the args' first node, chosen by the cat value;
			       * 0: no cat value read */
	const struct kc_next *x = NULL;
	int rc;

	clear_event(ev);
	ev->offset = off_of(c->r, *pp);
	c->ev = ev;
	c->r->scr = c->r->scratch;
	for (;;) {
		int which =
			next_member(c, c->r->kc_event, &at, &p, event_key, obj, EVENT_WHOLES, &x);
		switch (which & KC_END) {
		case KC_END:
			ev->has |= has;
			*pp = p;
			return JS_OK;
		case E_PH:
		case E_BP:
			if (*p == '"' && p[1] != '"' && p[1] != '\\' && p[2] == '"' &&
			    p + 2 < c->end) { /* "X" */
				*(which == E_PH ? &ev->ph : &ev->bp) = p[1];
				p += 3;
				if (which == E_PH) /* the keys that follow depend on it */
					at = key_cache_branch_byte(c->r->kc_event, at,
								   (unsigned char)ev->ph);
			} else if (*p == '"') {
				STEP(read_string(c, &q_, &s, &n, &esc));
				char v = n ? s[0] : 0;
				if (esc) {
					char t[8];
					v = n <= sizeof(t) && js_unescape(s, n, t) ? t[0] : 0;
				}
				*(which == E_PH ? &ev->ph : &ev->bp) = v;
			} else {
				STEP(skip_value(c, &q_));
			}
			break;
		case E_TS:
			if ((rc = time_member(c, &p, &ev->ts_ns, TE_TS, "a number of µs in ts",
					      &has)))
				return rc;
			break;
		case E_DUR:
			if ((rc = time_member(c, &p, &ev->dur_ns, TE_DUR, "a number of µs in dur",
					      &has)))
				return rc;
			break;
		/* one case per id, so that each passes constants: one case
		 * choosing among the three ran more instructions per id */
		case E_PID:
			if ((rc = id_member(c, &p, &ev->pid, TE_PID, K_PID, &has)))
				return rc;
			break;
		case E_TID:
			if ((rc = id_member(c, &p, &ev->tid, TE_TID, K_TID, &has)))
				return rc;
			break;
		case E_ID:
			if ((rc = id_member(c, &p, &ev->id, TE_ID, K_ID, &has)))
				return rc;
			break;
		case E_CAT:
			if (*p == '"') {
				s = p + 1;
				if ((rc = keep_string(c, &p, K_CAT)))
					return rc;
				/* and on it (the window's bytes, not the copy just
				 * written), the keys that follow, and those of args */
				size_t raw = (size_t)(p - 1 - s);
				uint64_t kind = sv_key((struct pp_sv){ s, raw });
				struct kc_branch *catb;
				at = key_cache_branch_at(c->r->kc_event, at, kind, &catb);
				args_at = args_node(c->r->kc_args, catb, kind);
				/* The entry stands for its (node, kind) for good,
				 * and a kind of up to 7 bytes is the whole text;
				 * set either way, as a second cat member replaces
				 * the first one's text */
				ev->cat_key =
					catb && raw < 8
						? (uint16_t)(catb - c->r->kc_event->branch + 1)
						: 0;
			} else {
				STEP(skip_value(c, &q_));
			}
			break;
		case E_NAME:
			if (*p == '"') {
				if ((rc = keep_string(c, &p, K_NAME)))
					return rc;
			} else {
				STEP(skip_value(c, &q_));
			}
			break;
		case E_ARGS:
			if (*p == '{') {
				has |= TE_ARGS;
				STEP(parse_args(c, &q_, ev,
						args_at ? args_at
							: key_cache_branch(c->r->kc_args, 0, 0)));
			} else {
				STEP(skip_value(c, &q_));
			}
			break;
		case 0:
			if ((q = skip_fast(p, c->end)))
				p = q;
			else
				STEP(js_skip_value(&q_, c->end, c->final, &c->r->st, &c->e));
			break;
		case KC_WHOLE | E_PH:
		case KC_WHOLE | E_BP:
			if (x->vkind == KC_VSTR) /* else skipped */
				*(which == (KC_WHOLE | E_PH) ? &ev->ph : &ev->bp) = x->val[0];
			break;
		case KC_WHOLE | E_ID: has |= whole_id(&ev->id, x, TE_ID); break;
		case KC_WHOLE | E_PID: has |= whole_id(&ev->pid, x, TE_PID); break;
		case KC_WHOLE | E_TID: has |= whole_id(&ev->tid, x, TE_TID); break;
		case KC_WHOLE | E_CAT:
			if (x->vkind == KC_VSTR) { /* else skipped */
				ev->cat.p = x->val;
				ev->cat.n = x->vlen;
				ev->cat_key = 0;
				args_at = key_cache_branch(c->r->kc_args, 0, sv_key(ev->cat));
			}
			break;
		case KC_WHOLE | E_NAME:
			if (x->vkind == KC_VSTR) {
				ev->name.p = x->val;
				ev->name.n = x->vlen;
			}
			break;
		case KC_WHOLE: break;
		case M_FAIL: return c->rc;
		default: /* cannot happen: event_key() knows no other code */
			return fail_at(c, p, "internal key code", "none");
		}
	}
}

static int parse_event(struct cx *c, const char **pp, struct trace_event *ev)
{
	return parse_event_inline(c, pp, ev);
}

/* The separator between two events: ',' then whitespace up to the next '{'
 * within 16 bytes, or NULL (parse_unit() then reads it, or fails). */
static ALWAYS_INLINE const char *next_event_start(const char *p)
{
	return *p == ',' ? simd_brace_after_ws(p + 1) : NULL;
}

static int next_event(struct trace_reader *r, struct trace_event *ev)
{
	const char *end = r->buf + r->len, *p = r->buf + r->pos, *q;
	/* The separator the last events had (",\n  {"), one compare; its '{'
	 * is not a zero, so when it matches it is inside the window. */
	if ((load8(p) & r->sep_mask) == r->sep) {
		p += r->sep_len - 1;
	} else {
		if (!(q = next_event_start(p)) || q >= end)
			return tr_next_unit(r, ev);
		if (q - p < 8) { /* learn it */
			r->sep_len = (unsigned)(q - p + 1);
			r->sep_mask = r->sep_len == 8 ? ~0ull : (1ull << (8 * r->sep_len)) - 1;
			r->sep = load8(p) & r->sep_mask;
		}
		p = q;
	}
	struct cx c; /* e, ev and rc are set where they are used */
	c.r = r;
	c.end = end;
	c.final = r->eof && !r->gz_bad && !r->gz_cut;
	if (parse_event_inline(&c, &p, ev) != JS_OK)
		return tr_next_unit(r, ev); /* from the event's start again */
	r->pos = (size_t)(p - r->buf);
	r->events++;
	return 1;
}

#define TR_CAT2(a, b) a##b
#define TR_CAT(a, b) TR_CAT2(a, b)

const struct tr_level TR_CAT(tr_level_, TR_LEVEL) = { TR_NAME, next_event, parse_event };
