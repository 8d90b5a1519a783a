/* Table-driven tests of the per-rank classifier (docs/semantics.md §4–6), jq.test
 * style: each case is a list of synthetic events and a list of expectations,
 * both in a one-line-per-item text form parsed below.
 *
 * Events (times in ns as written; ids "text" in quotes are string ids):
 *   T pid tid name...                 thread_name metadata
 *   X cat pid tid ts dur name...      CPU slice
 *   L pid tid ts corr [cat]           launch (cudaLaunchKernel, cuda_runtime)
 *   K cat ts dur corr|- name...       GPU event on device 0, stream 7
 *   G ts dur name...                  gpu_user_annotation range on stream 7
 *   F s|f pid tid id                  fwdbwd flow endpoint
 *   P desc|- ranks                    process-group args for the next event ("-": none)
 *   C collective                      "Collective name" arg of the next event
 *   B base_ns                         header baseTimeNanoseconds
 * Expectations:
 *   mode megatron|generic
 *   fwd|bwd pid tid rule              thread role and its rule ("-" = none)
 *   k i category phase seq [R]        kernel i (phase "-" = none)
 *   rank window_start window_end gpu_busy idle bubble comp comm overlap cov
 *   step phase seq cpu_s cpu_e start|- end|- wall comp comm overlap kernels
 *   nsteps n
 *   cat name kernels sum busy         category_stats row (others must be 0)
 *   pg i kind ranks                   kernel i's process group
 *   count field n                     counter (orphans, launches, ...)
 *   sets comm mem fwd bwd pp dp opt recompute loss   steps per pattern set
 *   iter i number kernels busy
 *   stepname phase seq name        name of a step
 *   name i name...                 kernel i's name
 *   warning text...                a warning of the result
 *   op optype seq start end mc mb step   the next what-if op (docs/contracts.md
 *                                  §4.1) in the result's order (type, seq_id);
 *                                  step = the seq that labels it, or -1
 *   nops n                         how many ops
 *   coll i name|-                  kernel i's collective ("-": none)
 *   ann name calls kernels gpu comp comm overlap   the annotation row of name
 *   nann n                         how many annotation rows
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "classify/classify.h"
#include "classify/classify_int.h"
#include "model/optype.h"
#include "model/patterns.h"
#include "read/trace_read.h"
#include "util/arena.h"
#include "util/config.h"
#include "util/htab.h"
#include "util/hugepage.h"
#include "util/pp.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

struct tcase {
	const char *name;
	const char *events;
	const char *expect;
};

/* --- a tiny tokenizer ----------------------------------------------------- */

#define MAXTOK 16

/* Splits line (modified in place) on spaces into at most max-1 tokens; the
 * last token takes the rest of the line (names with spaces). */
static int split(char *line, char **tok, int max)
{
	int n = 0;
	char *p = line;
	while (*p && n < max) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		tok[n++] = p;
		if (n == max)
			break;
		while (*p && *p != ' ')
			p++;
		if (*p)
			*p++ = '\0';
	}
	return n;
}

static struct pp_sv sv(const char *s)
{
	struct pp_sv v = { s, strlen(s) };
	return v;
}

static struct trace_id tid_of(const char *s)
{
	struct trace_id id = { 0, false, { "", 0 } };
	size_t n = strlen(s);
	if (s[0] == '"') {
		id.is_str = true;
		((char *)s)[n - 1] = '\0';
		id.str = sv(s + 1);
	} else {
		id.num = strtoll(s, NULL, 10);
	}
	return id;
}

static int64_t num(const char *s)
{
	return strtoll(s, NULL, 10);
}

/* Runs the events of a case through a classifier. */
/* Runs the events through a full classifier, or (survey) through a survey,
 * feeding them twice when it asks for its launch pass. */
static struct rank_result *run_events_as(const char *events, struct arena *a, struct patterns *pats,
					 bool survey)
{
	struct classify *c = survey ? classify_new_survey(pats, a) : classify_new(pats, a);
	struct trace_header h;
	char *text = arena_strndup(a, events, strlen(events));
	const char *pg_desc = "", *pg_ranks = "", *coll = "";
	size_t nev = 0, cap = 64;
	struct trace_event *evs = malloc(cap * sizeof(*evs));
	memset(&h, 0, sizeof(h));
	assert_non_null(c);
	assert_non_null(evs);
	for (char *line = text, *next; line && *line; line = next) {
		char *tok[MAXTOK];
		struct trace_event ev;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		memset(&ev, 0, sizeof(ev));
		ev.cat = ev.name = ev.arg_name = sv("");
		ev.pg_name = ev.pg_desc = ev.pg_ranks = sv("");
		ev.collective = ev.dtype = sv("");
		ev.pid.str = ev.tid.str = ev.id.str = sv("");
		static const char types[] = "BPTXLKFCG";
		static const int maxtok[] = { 2, 3, 4, 7, 6, 6, 5, 2, 4 };
		const char *ty = line[0] ? strchr(types, line[0]) : NULL;
		if (!ty)
			continue;
		int n = split(line, tok, maxtok[ty - types]);
		switch (tok[0][0]) {
		case 'B':
			h.has_base_time = true;
			h.base_time_ns = num(tok[1]);
			continue;
		case 'P':
			pg_desc = strcmp(tok[1], "-") ? tok[1] : "";
			pg_ranks = tok[2];
			continue;
		case 'C': coll = tok[1]; continue;
		case 'T':
			ev.ph = 'M';
			ev.name = sv("thread_name");
			ev.pid = tid_of(tok[1]);
			ev.tid = tid_of(tok[2]);
			ev.arg_name = sv(tok[3]);
			break;
		case 'X':
			ev.ph = 'X';
			ev.cat = sv(tok[1]);
			ev.pid = tid_of(tok[2]);
			ev.tid = tid_of(tok[3]);
			ev.ts_ns = num(tok[4]);
			ev.dur_ns = num(tok[5]);
			ev.name = sv(tok[6]);
			break;
		case 'L':
			ev.ph = 'X';
			ev.cat = sv(n > 5 ? tok[5] : "cuda_runtime");
			assert_true(n >= 5);
			ev.name = sv("cudaLaunchKernel");
			ev.pid = tid_of(tok[1]);
			ev.tid = tid_of(tok[2]);
			ev.ts_ns = num(tok[3]);
			ev.dur_ns = 5;
			ev.correlation = num(tok[4]);
			ev.has |= TE_CORRELATION;
			break;
		case 'K':
			ev.ph = 'X';
			ev.cat = sv(tok[1]);
			ev.pid.num = 0;
			ev.tid.num = 7;
			ev.has |= TE_PID | TE_TID | TE_STREAM | TE_DEVICE;
			ev.stream = 7;
			ev.ts_ns = num(tok[2]);
			ev.dur_ns = num(tok[3]);
			if (strcmp(tok[4], "-")) {
				ev.correlation = num(tok[4]);
				ev.has |= TE_CORRELATION;
			}
			ev.name = sv(tok[5]);
			break;
		case 'G':
			ev.ph = 'X';
			ev.cat = sv("gpu_user_annotation");
			ev.pid.num = 0;
			ev.tid.num = 7;
			ev.has |= TE_PID | TE_TID;
			ev.ts_ns = num(tok[1]);
			ev.dur_ns = num(tok[2]);
			ev.name = sv(tok[3]);
			break;
		case 'F':
			ev.ph = tok[1][0];
			ev.cat = sv("fwdbwd");
			ev.pid = tid_of(tok[2]);
			ev.tid = tid_of(tok[3]);
			ev.id = tid_of(tok[4]);
			break;
		default: fail_msg("bad event line '%s'", tok[0]);
		}
		ev.pg_desc = sv(pg_desc);
		ev.pg_ranks = sv(pg_ranks);
		ev.collective = sv(coll);
		pg_desc = pg_ranks = coll = "";
		if (nev == cap) {
			cap *= 2;
			evs = realloc(evs, cap * sizeof(*evs));
			assert_non_null(evs);
		}
		evs[nev++] = ev;
	}
	struct rank_result *res = NULL;
	int rc = CLASSIFY_AGAIN;
	for (int pass = 0; rc == CLASSIFY_AGAIN; pass++) {
		assert_true(pass < 2 && (survey || pass == 0));
		for (size_t i = 0; i < nev; i++)
			classify_feed(c, &evs[i]);
		rc = classify_finish(c, &h, &res);
	}
	assert_int_equal(rc, 0);
	free(evs);
	classify_free(c);
	assert_non_null(res);
	assert_int_equal(res->survey, survey);
	return res;
}

static struct rank_result *run_events(const char *events, struct arena *a, struct patterns *pats)
{
	return run_events_as(events, a, pats, false);
}

static void same_thread(const struct rr_thread *x, const struct rr_thread *y)
{
	assert_int_equal(x->found, y->found);
	assert_int_equal(x->rule, y->rule);
	assert_string_equal(x->pid, y->pid);
	assert_string_equal(x->tid, y->tid);
	assert_string_equal(x->name, y->name);
}

/* A survey reports what the full classifier reports, minus the kernels. */
static void check_survey(const struct rank_result *full, const char *events, struct arena *a,
			 struct patterns *pats)
{
	struct rank_result *s = run_events_as(events, a, pats, true);
	assert_int_equal(s->mode, full->mode);
	same_thread(&s->fwd_thread, &full->fwd_thread);
	same_thread(&s->bwd_thread, &full->bwd_thread);
	for (int i = 0; i < RR_NPATSETS; i++)
		assert_int_equal(s->steps_per_set[i], full->steps_per_set[i]);
	assert_int_equal(s->nsteps, full->nsteps);
	assert_int_equal(s->niterations, full->niterations);
	assert_int_equal(s->nkernels, 0);
	assert_false(s->has_window);
	const struct rr_counters *x = &s->counters, *y = &full->counters;
	assert_int_equal(x->events, y->events);
	assert_int_equal(x->cpu_slices, y->cpu_slices);
	assert_int_equal(x->launches, y->launches);
	assert_int_equal(x->gpu_events, y->gpu_events);
	assert_int_equal(x->kept_slices, y->kept_slices);
	assert_int_equal(x->flows, y->flows);
	assert_int_equal(x->unmatched_flows, y->unmatched_flows);
	for (size_t i = 0; i < s->nsteps; i++) {
		assert_int_equal(s->steps[i].phase, full->steps[i].phase);
		assert_int_equal(s->steps[i].seq, full->steps[i].seq);
		assert_int_equal(s->steps[i].cpu_start_ns, full->steps[i].cpu_start_ns);
		assert_int_equal(s->steps[i].cpu_end_ns, full->steps[i].cpu_end_ns);
	}
}

static int category_by_name(const char *name)
{
	for (int i = 0; i < RR_NCATEGORIES; i++)
		if (!strcmp(rr_category_name(i), name))
			return i;
	fail_msg("unknown category '%s'", name);
	return -1;
}

static int phase_by_name(const char *name)
{
	for (int i = 0; i < RR_NPHASES; i++)
		if (!strcmp(rr_phase_name(i), name))
			return i;
	if (!strcmp(name, "-"))
		return RR_NOPHASE;
	fail_msg("unknown phase '%s'", name);
	return -2;
}

static const struct rr_step *find_step(const struct rank_result *r, int ph, int seq)
{
	for (size_t i = 0; i < r->nsteps; i++)
		if (r->steps[i].phase == ph && r->steps[i].seq == seq)
			return &r->steps[i];
	fail_msg("no step %s %d", rr_phase_name(ph), seq);
	return NULL;
}

static void expect_thread(const struct rr_thread *t, char **tok)
{
	if (!strcmp(tok[1], "-")) {
		assert_false(t->found);
		return;
	}
	assert_true(t->found);
	assert_string_equal(t->pid, tok[1]);
	assert_string_equal(t->tid, tok[2]);
	assert_string_equal(rr_role_rule_name(t->rule), tok[3]);
}

static void check(const struct rank_result *r, const char *expect, struct arena *a)
{
	char *text = arena_strndup(a, expect, strlen(expect));
	bool cat_seen[RR_NCATEGORIES] = { false };
	bool cats_listed = false;
	size_t nop = 0;
	for (char *line = text, *next; line && *line; line = next) {
		char *tok[MAXTOK] = { NULL };
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		int n = split(line, tok,
			      !strncmp(line, "name ", 5)      ? 3
			      : !strncmp(line, "warning ", 8) ? 2
			      : !strncmp(line, "coll ", 5)    ? 3
							      : MAXTOK);
		if (!n)
			continue;
		print_message("  expect: %s %s %s %s\n", tok[0], n > 1 ? tok[1] : "",
			      n > 2 ? tok[2] : "", n > 3 ? tok[3] : "");
		if (!strcmp(tok[0], "mode")) {
			assert_string_equal(rr_mode_name(r->mode), tok[1]);
		} else if (!strcmp(tok[0], "fwd")) {
			expect_thread(&r->fwd_thread, tok);
		} else if (!strcmp(tok[0], "bwd")) {
			expect_thread(&r->bwd_thread, tok);
		} else if (!strcmp(tok[0], "k")) {
			size_t i = (size_t)num(tok[1]);
			assert_true(i < r->nkernels);
			const struct rr_kernel *k = &r->kernels[i];
			assert_string_equal(rr_category_name(k->category), tok[2]);
			assert_int_equal(rr_kernel_phase(r, k), phase_by_name(tok[3]));
			assert_int_equal(rr_kernel_seq(r, k), num(tok[4]));
			assert_int_equal(k->recompute, n > 5 && !strcmp(tok[5], "R"));
		} else if (!strcmp(tok[0], "rank")) {
			char cov[32];
			assert_true(r->has_window);
			assert_int_equal(r->window_start_ns, num(tok[1]));
			assert_int_equal(r->window_end_ns, num(tok[2]));
			assert_int_equal(r->gpu_busy_ns, num(tok[3]));
			assert_int_equal(r->idle_ns, num(tok[4]));
			assert_int_equal(r->bubble_ns, num(tok[5]));
			assert_int_equal(r->comp_busy_ns, num(tok[6]));
			assert_int_equal(r->comm_busy_ns, num(tok[7]));
			assert_int_equal(r->overlap_ns, num(tok[8]));
			snprintf(cov, sizeof(cov), "%.6f", r->coverage);
			assert_string_equal(cov, tok[9]);
		} else if (!strcmp(tok[0], "step")) {
			const struct rr_step *s =
				find_step(r, phase_by_name(tok[1]), (int)num(tok[2]));
			assert_int_equal(s->cpu_start_ns, num(tok[3]));
			assert_int_equal(s->cpu_end_ns, num(tok[4]));
			if (!strcmp(tok[5], "-")) {
				assert_false(s->has_kernels);
			} else {
				assert_true(s->has_kernels);
				assert_int_equal(s->start_ns, num(tok[5]));
				assert_int_equal(s->end_ns, num(tok[6]));
			}
			assert_int_equal(s->wall_ns, num(tok[7]));
			assert_int_equal(s->comp_ns, num(tok[8]));
			assert_int_equal(s->comm_ns, num(tok[9]));
			assert_int_equal(s->overlap_ns, num(tok[10]));
			assert_int_equal(s->kernels, num(tok[11]));
		} else if (!strcmp(tok[0], "nsteps")) {
			assert_int_equal(r->nsteps, num(tok[1]));
		} else if (!strcmp(tok[0], "cat")) {
			int c = category_by_name(tok[1]);
			cats_listed = true;
			cat_seen[c] = true;
			assert_int_equal(r->categories[c].kernels, num(tok[2]));
			assert_int_equal(r->categories[c].sum_ns, num(tok[3]));
			assert_int_equal(r->categories[c].busy_ns, num(tok[4]));
		} else if (!strcmp(tok[0], "pg")) {
			size_t i = (size_t)num(tok[1]);
			assert_true(r->kernels[i].pg >= 0);
			const struct rr_group *g = &r->groups[r->kernels[i].pg];
			assert_string_equal(rr_pg_kind_name(g->kind), tok[2]);
			assert_string_equal(g->ranks, tok[3]);
		} else if (!strcmp(tok[0], "count")) {
			const struct rr_counters *k = &r->counters;
			int64_t v = !strcmp(tok[1], "orphans")           ? k->orphans
				    : !strcmp(tok[1], "launches")        ? k->launches
				    : !strcmp(tok[1], "gpu_events")      ? k->gpu_events
				    : !strcmp(tok[1], "unmatched_flows") ? k->unmatched_flows
				    : !strcmp(tok[1], "kept_slices")     ? k->kept_slices
									 : -999;
			assert_int_equal(v, num(tok[2]));
		} else if (!strcmp(tok[0], "sets")) {
			for (int s = 0; s < PAT_NSETS; s++)
				assert_int_equal(r->steps_per_set[s], num(tok[1 + s]));
		} else if (!strcmp(tok[0], "iter")) {
			size_t i = (size_t)num(tok[1]);
			assert_true(i < r->niterations);
			assert_int_equal(r->iterations[i].number, num(tok[2]));
			assert_int_equal(r->iterations[i].kernels, num(tok[3]));
			assert_int_equal(r->iterations[i].busy_ns, num(tok[4]));
		} else if (!strcmp(tok[0], "stepname")) {
			const struct rr_step *s =
				find_step(r, phase_by_name(tok[1]), (int)num(tok[2]));
			assert_string_equal(r->names[s->name_id], tok[3]);
		} else if (!strcmp(tok[0], "warning")) {
			bool found = false;
			for (size_t i = 0; i < r->nwarnings; i++)
				found |= !strcmp(r->warnings[i], tok[1]);
			if (!found)
				fail_msg("no warning '%s'", tok[1]);
		} else if (!strcmp(tok[0], "name")) {
			size_t i = (size_t)num(tok[1]);
			assert_string_equal(r->names[r->kernels[i].name_id], tok[2]);
		} else if (!strcmp(tok[0], "op")) {
			assert_true(nop < r->nops);
			const struct rr_op *o = &r->ops[nop++];
			assert_string_equal(op_type_name(o->optype), tok[1]);
			assert_int_equal(o->seq_id, num(tok[2]));
			assert_int_equal(o->start_ns, num(tok[3]));
			assert_int_equal(o->end_ns, num(tok[4]));
			assert_int_equal(o->mc, num(tok[5]));
			assert_int_equal(o->mb_id, num(tok[6]));
			assert_int_equal(o->step_seq, num(tok[7]));
		} else if (!strcmp(tok[0], "nops")) {
			assert_int_equal(r->nops, num(tok[1]));
		} else if (!strcmp(tok[0], "coll")) {
			size_t i = (size_t)num(tok[1]);
			assert_true(i < r->nkernels);
			const char *c = rr_coll_name(r->kernels[i].coll);
			assert_string_equal(c ? c : "-", tok[2]);
		} else if (!strcmp(tok[0], "ann")) {
			const struct rr_annotation *an = NULL;
			for (size_t i = 0; i < r->nannotations && !an; i++)
				if (!strcmp(r->names[r->annotations[i].name_id], tok[1]))
					an = &r->annotations[i];
			if (!an)
				fail_msg("no annotation '%s'", tok[1]);
			assert_int_equal(an->calls, num(tok[2]));
			assert_int_equal(an->kernels, num(tok[3]));
			assert_int_equal(an->gpu_ns, num(tok[4]));
			assert_int_equal(an->comp_ns, num(tok[5]));
			assert_int_equal(an->comm_ns, num(tok[6]));
			assert_int_equal(an->overlap_ns, num(tok[7]));
		} else if (!strcmp(tok[0], "nann")) {
			assert_int_equal(r->nannotations, num(tok[1]));
		} else {
			fail_msg("bad expectation '%s'", tok[0]);
		}
	}
	if (cats_listed) /* every unlisted category must be empty */
		for (int c = 0; c < RR_NCATEGORIES; c++)
			if (!cat_seen[c])
				assert_int_equal(r->categories[c].kernels, 0);
	/* Invariant: categories partition the GPU events. */
	int64_t sum = 0, total = 0, count = 0;
	for (int c = 0; c < RR_BWD_COMP_RECOMPUTE; c++) {
		sum += r->categories[c].sum_ns;
		count += r->categories[c].kernels;
	}
	for (size_t i = 0; i < r->nkernels; i++)
		total += r->kernels[i].dur_ns;
	assert_int_equal(sum, total);
	assert_int_equal(count, r->nkernels);
}

/* Event categories: ASCII case folded, nothing else (the 6-character
 * ones are compared as one folded word). */
static void test_category_names(void **state)
{
	(void)state;
	static const struct {
		const char *cat;
		enum classify_cat want;
	} cases[] = {
		{ "kernel", CC_KERNEL },
		{ "Kernel", CC_KERNEL },
		{ "KERNEL", CC_KERNEL },
		{ "kErNeL", CC_KERNEL },
		{ "fwdbwd", CC_FWDBWD },
		{ "FwdBwd", CC_FWDBWD },
		{ "memcpy", CC_MEMCPY },
		{ "MEMSET", CC_MEMSET },
		{ "gpu_memcpy", CC_MEMCPY },
		{ "GPU_MEMSET", CC_MEMSET },
		{ "cuda_sync", CC_GPU_OTHER },
		{ "gpu_user_annotation", CC_GPU_ANNOTATION },
		{ "user_annotation", CC_ANNOTATION },
		{ "User_Annotation", CC_ANNOTATION },
		{ "cpu_op", CC_CPU },
		{ "kernels", CC_CPU },
		{ "kerne", CC_CPU },
		{ "", CC_CPU },
		/* Only A-Z fold: the bytes next to that range, and the same
		 * bytes with the high bit set, stay as they are. */
		{ "\xcb"
		  "ernel",
		  CC_CPU },                 /* 'K' | 0x80 */
		{ "k\x45rnel", CC_KERNEL }, /* 'E' */
		{ "k\x05rnel", CC_CPU },    /* 'E' - 0x40 */
		{ "kerne\x4c", CC_KERNEL }, /* 'L' */
		{ "kerne\x6c", CC_KERNEL },
		{ "kerne\xcc", CC_CPU },
		{ "\x40"
		  "emcpy",
		  CC_CPU },
		{ "\xff\xff\xff\xff\xff\xff", CC_CPU },
		{ "memcp\x59", CC_MEMCPY }, /* 'Y' */
		{ "memcp\x79", CC_MEMCPY },
		{ "memcp\x5b", CC_CPU }, /* '[': past 'Z' */
		{ "gpu\x7fmemcpy", CC_CPU },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pp_sv sv = { cases[i].cat, strlen(cases[i].cat) };
		if (classify_category(sv) != cases[i].want)
			fail_msg("category \"%s\": %d, want %d", cases[i].cat,
				 (int)classify_category(sv), (int)cases[i].want);
	}
}

/* roots_find_near() gives what roots_find() gives, whatever its hint:
 * random roots sorted by (thread, ts), overlapping ones included (input
 * that does not nest properly), queried in time order per thread (the
 * attribution's pattern), on any thread, and at random. */
static void test_roots_find_near(void **state)
{
	(void)state;
	uint64_t x = 88172645463325252ull;
#define RND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
	for (int round = 0; round < 200; round++) {
		struct croot v[64];
		size_t n = RND() % 64;
		uint32_t threads = 1 + RND() % 3;
		int64_t t = 0;
		for (size_t i = 0; i < n; i++) {
			uint32_t th = (uint32_t)(i * threads / (n ? n : 1));
			if (i && th != v[i - 1].thread)
				t = 0;
			t += (int64_t)(RND() % 20);
			v[i] = (struct croot){ .ts = t,
					       .end = t + (int64_t)(RND() % 40),
					       .thread = th,
					       .step = (int32_t)i };
		}
		struct croots r = { v, n };
		for (int mode = 0; mode < 3; mode++) {
			size_t hint = 0;
			for (int q = 0; q < 300; q++) {
				uint32_t th =
					mode == 1 ? UINT32_MAX : (uint32_t)(RND() % (threads + 1));
				int64_t ts = mode == 2 ? (int64_t)(RND() % 400) - 10 : q - 10;
				if (mode == 1) /* any thread: roots sorted by ts alone */
					r.n = n && threads == 1 ? n : 0;
				assert_int_equal(roots_find_near(&r, th, ts, &hint),
						 roots_find(&r, th, ts));
			}
			r.n = n;
		}
	}
#undef RND
}

#include "test_classify_cases.h"

static void run_case(void **state)
{
	struct strbuf cerr = STRBUF_INIT;
	const struct tcase *tc = *state;
	struct arena a = ARENA_INIT;
	struct patterns *pats = patterns_new(NULL, &cerr);
	assert_non_null(pats);
	print_message("case: %s\n", tc->name);
	struct rank_result *r = run_events(tc->events, &a, pats);
	check(r, tc->expect, &a);
	check_survey(r, tc->events, &a, pats);
	patterns_free(pats);
	arena_release(&a);
}

static void test_patterns_defaults_and_config(void **state)
{
	struct strbuf cerr = STRBUF_INIT;
	(void)state;
	struct patterns *p = patterns_new(NULL, &cerr);
	assert_non_null(p);
	assert_int_equal(patterns_match(p, "ncclDevKernel_AllReduce"), 1u << PAT_COMM_KERNEL);
	assert_int_equal(patterns_match(p, "Memcpy DtoD (Device -> Device)"), 1u << PAT_MEM_KERNEL);
	assert_int_equal(patterns_match(p, "a/recomupte_x_forward"), 1u << PAT_RECOMPUTE);
	assert_int_equal(patterns_match(p, "megatron/training.py(1): "
					   "pretrain_gpt_loss_func"),
			 (1u << PAT_DP_COMM) | (1u << PAT_LOSS_FUNC));
	assert_int_equal(patterns_match(p, "torch/optim/optimizer.py(9): step"),
			 (1u << PAT_DP_COMM) | (1u << PAT_OPTIMIZER));
	/* GLOB is case-sensitive */
	assert_int_equal(patterns_match(p, "Optimizer.step#Adam.step"), 0);
	assert_int_equal(patterns_match(p, "FORWARD_STEP"), 0);
	patterns_free(p);

	FILE *f = fopen("test_classify.ini", "w");
	assert_non_null(f);
	fputs("[patterns]\nforward_step = *fwd_[0-9]* *my_forward\n"
	      "comm_kernel =\n",
	      f);
	fclose(f);
	struct config *cfg = config_load("test_classify.ini", &cerr);
	assert_non_null(cfg);
	p = patterns_new(cfg, &cerr);
	assert_non_null(p);
	assert_int_equal(patterns_match(p, "x_fwd_3"), 1u << PAT_FORWARD_STEP);
	assert_int_equal(patterns_match(p, "x_fwd_a"), 0);
	assert_int_equal(patterns_match(p, "the_my_forward"), 1u << PAT_FORWARD_STEP);
	assert_int_equal(patterns_match(p, "forward_step"), 0);
	assert_int_equal(patterns_match(p, "ncclKernel"), 0);
	const char *const *globs;
	assert_int_equal(patterns_globs(p, PAT_FORWARD_STEP, &globs), 2);
	assert_string_equal(globs[1], "*my_forward");
	patterns_free(p);
	config_free(cfg);
	remove("test_classify.ini");
}

/* Globs with blanks ("nn.Module: X" without '?' for the blank):
 * quoted globs, one glob per indented line, a repeated key adds to the
 * list; the old whitespace lists still work; an unclosed quote is an
 * error naming the key. */
static void test_patterns_with_blanks(void **state)
{
	struct strbuf cerr = STRBUF_INIT;
	(void)state;
	FILE *f = fopen("test_blanks.ini", "w");
	assert_non_null(f);
	fputs("[patterns]\n"
	      "forward_step = *forward_step* \"nn.Module: Linear*\"\n"
	      "    \"file.py(12): fn\"\n"
	      "    *plain\n"
	      "backward_step = *backward_step*\n"
	      "backward_step = \"my bwd\"\n",
	      f);
	fclose(f);
	struct config *cfg = config_load("test_blanks.ini", &cerr);
	assert_non_null(cfg);
	struct patterns *p = patterns_new(cfg, &cerr);
	assert_non_null(p);
	const char *const *globs;
	assert_int_equal(patterns_globs(p, PAT_FORWARD_STEP, &globs), 4);
	assert_string_equal(globs[1], "nn.Module: Linear*");
	assert_string_equal(globs[2], "file.py(12): fn");
	assert_int_equal(patterns_match(p, "nn.Module: Linear_3"), 1u << PAT_FORWARD_STEP);
	assert_int_equal(patterns_match(p, "file.py(12): fn"), 1u << PAT_FORWARD_STEP);
	assert_int_equal(patterns_match(p, "a_forward_step"), 1u << PAT_FORWARD_STEP);
	assert_int_equal(patterns_match(p, "x_plain"), 1u << PAT_FORWARD_STEP);
	assert_int_equal(patterns_match(p, "nn.Module:"), 0);
	assert_int_equal(patterns_globs(p, PAT_BACKWARD_STEP, &globs), 2);
	assert_int_equal(patterns_match(p, "my bwd"), 1u << PAT_BACKWARD_STEP);
	patterns_free(p);
	config_free(cfg);

	f = fopen("test_blanks.ini", "w");
	assert_non_null(f);
	fputs("[patterns]\nforward_step = \"nn.Module: X\n", f);
	fclose(f);
	assert_non_null(cfg = config_load("test_blanks.ini", &cerr));
	assert_null(patterns_new(cfg, &cerr));
	assert_string_equal(cerr.buf,
			    "test_blanks.ini: config key patterns.forward_step: a quote is "
			    "not closed in '\"nn.Module: X'");
	strbuf_release(&cerr);
	config_free(cfg);
	remove("test_blanks.ini");
}

/* config.example.ini documents every set with its default: keep them equal. */
static void test_example_config_matches_defaults(void **state)
{
	struct strbuf cerr = STRBUF_INIT;
	(void)state;
	char path[4096];
	const char *root = getenv("PP_ROOT");
	snprintf(path, sizeof(path), "%s/config.example.ini", root ? root : ".");
	struct config *cfg = config_load(path, &cerr);
	assert_non_null(cfg);
	struct patterns *def = patterns_new(NULL, &cerr);
	struct patterns *ex = patterns_new(cfg, &cerr);
	for (int s = 0; s < PAT_NSETS; s++) {
		char key[64];
		const char *const *g1, *const *g2;
		snprintf(key, sizeof(key), "patterns.%s", patterns_set_name(s));
		assert_non_null(config_get(cfg, key));
		size_t n1 = patterns_globs(def, s, &g1);
		size_t n2 = patterns_globs(ex, s, &g2);
		assert_int_equal(n1, n2);
		for (size_t i = 0; i < n1; i++)
			assert_string_equal(g1[i], g2[i]);
	}
	for (int c = RR_COLL_NONE + 1; c < RR_NCOLLS; c++) {
		const char *const *g1, *const *g2;
		size_t n1 = patterns_coll_globs(def, c, &g1);
		size_t n2 = patterns_coll_globs(ex, c, &g2);
		assert_int_equal(n1, n2);
		for (size_t i = 0; i < n1; i++)
			assert_string_equal(g1[i], g2[i]);
	}
	patterns_free(def);
	patterns_free(ex);
	config_free(cfg);
}

/* Through the real reader: keys in any order, decimal µs, base time after
 * traceEvents, string pid, flows, metadata, pg args on the kernel. */
static const char json_fixture[] =
	"{\"schemaVersion\": 1, \"traceEvents\": [\n"
	"{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 9, \"tid\": 2,"
	" \"args\": {\"name\": \"pt_autograd_0\"}},\n"
	"{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": "
	"\"schedules.py(1): forward_step\", \"pid\": 9, \"tid\": 1, "
	"\"ts\": 1.000, \"dur\": 10.5},\n"
	"{\"name\": \"cudaLaunchKernel\", \"ph\": \"X\", \"cat\": "
	"\"cuda_runtime\", \"pid\": 9, \"tid\": 1, \"ts\": 2.5, \"dur\": 1,"
	" \"args\": {\"correlation\": 7}},\n"
	"{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": "
	"\"schedules.py(2): backward_step\", \"pid\": 9, \"tid\": 1, "
	"\"ts\": 20, \"dur\": 10},\n"
	"{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": "
	"\"cudaLaunchKernel\", \"pid\": 9, \"tid\": 2, \"ts\": 25, "
	"\"dur\": 1, \"args\": {\"correlation\": 8}},\n"
	"{\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"gemm\", "
	"\"pid\": 0, \"tid\": 7, \"ts\": 100.001, \"dur\": 2.5, "
	"\"args\": {\"correlation\": 7, \"stream\": 7, \"device\": 0}},\n"
	"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
	"\"ncclDevKernel_AllReduce\", \"pid\": 0, \"tid\": 7, \"ts\": 101, "
	"\"dur\": 3, \"args\": {\"correlation\": 8, \"Process Group "
	"Description\": \"DATA_PARALLEL_GROUP\", \"Process Group Ranks\": "
	"\"[0, 8]\"}}\n"
	"], \"baseTimeNanoseconds\": 1000000000}";

/* A trace classified from memory: the reader, the default patterns and the
 * arena the result lives in (mem_trace_release() frees them). */
struct mem_trace {
	struct arena a;
	struct trace_reader *rd;
	struct patterns *pats;
};

/* Classifies the n bytes of JSON json with the default patterns; pgs, when
 * not NULL, replaces the header's pg_config (unit_classify_reader()). */
static struct rank_result *mem_trace_classify(struct mem_trace *m, const char *json, size_t n,
					      const struct trace_pg *pgs, size_t npgs)
{
	struct trace_reader_opts o = { .salvage = false };
	struct strbuf err = STRBUF_INIT; /* the default patterns: nothing to say */
	m->a = (struct arena)ARENA_INIT;
	m->rd = trace_reader_open_mem(json, n, &o);
	m->pats = patterns_new(NULL, &err);
	assert_non_null(m->pats);
	return unit_classify_reader("json", m->rd, m->pats, &m->a, pgs, npgs);
}

static void mem_trace_release(struct mem_trace *m)
{
	trace_reader_close(m->rd);
	patterns_free(m->pats);
	arena_release(&m->a);
}

/* A kernel with only "Process Group Name" takes the description and ranks
 * of the header's pg_config entry of its name (the header after the
 * events); a kernel's own description stays; groups equal once filled are
 * one; a name the header lacks stays as it is. */
static void test_groups_from_header(void **state)
{
	(void)state;
#define K(ts, args)                                                                              \
	"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_Sum_f32_RING_LL\"," \
	"\"ts\":" #ts ",\"dur\":1,\"args\":{\"stream\":7,\"Process Group Name\":" args "}}"
	static const char json[] = "{\"traceEvents\":[" K(10, "\"1\"") "," K(
		20,
		"\"1\",\"Process Group Description\":"
		"\"DATA_PARALLEL_GROUP\",\"Process Group "
		"Ranks\":\"[0, 8]\"") "," K(30,
					    "\"1\",\"Process Group "
					    "Description\":\"mine\"") "," K(40,
									    "\"9\"") "],\"distributedInfo\":{\"pg_config\":[{\"pg_name\":\"1\",\"pg_desc\":"
										     "\"DATA_PARALLEL_GROUP\",\"ranks\":[0,8]}]}}";
#undef K
	struct mem_trace m;
	struct rank_result *r = mem_trace_classify(&m, json, sizeof(json) - 1, NULL, 0);
	assert_int_equal(r->nkernels, 4);
	assert_int_equal(r->ngroups, 3);
	const struct rr_group *g0 = &r->groups[r->kernels[0].pg];
	assert_int_equal(r->kernels[0].pg, r->kernels[1].pg);
	assert_string_equal(g0->name, "1");
	assert_string_equal(g0->desc, "DATA_PARALLEL_GROUP");
	assert_string_equal(g0->ranks, "[0, 8]");
	assert_int_equal(g0->kind, RR_PG_DP);
	assert_int_equal(g0->kernels, 2);
	assert_string_equal(r->groups[r->kernels[2].pg].desc, "mine");
	assert_string_equal(r->groups[r->kernels[2].pg].ranks, "[0, 8]");
	assert_string_equal(r->groups[r->kernels[3].pg].name, "9");
	assert_string_equal(r->groups[r->kernels[3].pg].desc, "");
	assert_string_equal(r->groups[r->kernels[3].pg].ranks, "");
	mem_trace_release(&m);
}

/* Of several pg_config entries of one name, the first in the header fills
 * the group (regression: the lookup sorted by name with qsort, which is not
 * stable, so any of the equal names could win). */
static void test_groups_from_header_first_wins(void **state)
{
	(void)state;
	static const char json[] =
		"{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":"
		"\"ncclDevKernel_AllReduce_Sum_f32_RING_LL\",\"ts\":10,\"dur\":1,\"args\":"
		"{\"stream\":7,\"Process Group Name\":\"1\"}}]}";
	struct trace_pg pgs[64];
	char names[64][16];
	for (int i = 0; i < 64; i++) {
		snprintf(names[i], sizeof(names[i]), "%d", i % 3 ? 1 : i + 2);
		pgs[i] = (struct trace_pg){ names[i], i == 1 ? "DATA_PARALLEL_GROUP" : "other",
					    i == 1 ? "[0, 8]" : "[1]" };
	}
	struct mem_trace m;
	struct rank_result *r = mem_trace_classify(&m, json, sizeof(json) - 1, pgs, 64);
	assert_int_equal(r->nkernels, 1);
	assert_int_equal(r->ngroups, 1);
	assert_string_equal(r->groups[0].desc, "DATA_PARALLEL_GROUP");
	assert_string_equal(r->groups[0].ranks, "[0, 8]");
	mem_trace_release(&m);
}

static void test_reader_fixture(void **state)
{
	(void)state;
	struct mem_trace m;
	struct rank_result *r =
		mem_trace_classify(&m, json_fixture, sizeof(json_fixture) - 1, NULL, 0);
	assert_string_equal(rr_mode_name(r->mode), "megatron");
	assert_string_equal(r->fwd_thread.tid, "1");
	assert_int_equal(r->fwd_thread.rule, RR_ROLE_FORWARD_STEP);
	assert_string_equal(r->bwd_thread.name, "pt_autograd_0");
	assert_int_equal(r->nkernels, 2);
	assert_int_equal(r->kernels[0].category, RR_FWD_COMP);
	assert_int_equal(r->kernels[0].start_ns, 1000000000 + 100001);
	assert_int_equal(r->kernels[0].dur_ns, 2500);
	assert_int_equal(r->kernels[1].category, RR_BWD_COMM);
	assert_string_equal(r->groups[r->kernels[1].pg].ranks, "[0, 8]");
	assert_int_equal(r->groups[r->kernels[1].pg].kind, RR_PG_DP);
	assert_int_equal(r->steps[0].cpu_start_ns, 1000001000);
	assert_int_equal(r->steps[0].cpu_end_ns, 1000011500);
	assert_int_equal(r->overlap_ns, 1501);
	assert_int_equal(r->window_end_ns - r->window_start_ns, 3999);
	mem_trace_release(&m);
}

/* The correlation map: dense ids, ids below the first, far and sparse ids. */
static void test_cmap_dense_and_sparse(void **state)
{
	(void)state;
	struct cmap m;
	cmap_init(&m);
	for (int64_t k = 1000; k < 201000; k += 3)
		assert_int_equal(*cmap_ref(&m, k, (uint32_t)k), (uint32_t)k);
	assert_int_equal(*cmap_ref(&m, 5, 7), 7);         /* below base */
	assert_int_equal(*cmap_ref(&m, INT64_MAX, 9), 9); /* far away */
	assert_int_equal(*cmap_ref(&m, INT64_MIN, 11), 11);
	assert_int_equal(*cmap_ref(&m, 1003, 1), 1003); /* kept: first wins */
	for (int64_t k = 1000; k < 201000; k++)
		assert_int_equal(cmap_get(&m, k), (k - 1000) % 3 ? IMAP_EMPTY : (uint32_t)k);
	assert_int_equal(cmap_get(&m, 5), 7);
	assert_int_equal(cmap_get(&m, 6), IMAP_EMPTY);
	assert_int_equal(cmap_get(&m, INT64_MAX), 9);
	assert_int_equal(cmap_get(&m, INT64_MIN), 11);
	assert_int_equal(m.n, 66667 + 3);
	assert_true(m.cap < 1u << 20);
	cmap_release(&m);
}

/* Ids too far ahead for the dense array's density rule, inside the array's
 * capacity (grown by doubling for an earlier id) or covered by a later
 * growth: stored, each must be found again (they stayed in the sparse map,
 * where cmap_get() never looked for ids below the capacity: kernels whose
 * launch was there counted as orphans). */
static void test_cmap_far_id_inside_capacity(void **state)
{
	(void)state;
	struct cmap m;
	cmap_init(&m);
	assert_int_equal(*cmap_ref(&m, 0, 1), 1);
	assert_int_equal(*cmap_ref(&m, 65000, 2), 2);
	assert_int_equal(*cmap_ref(&m, 65540, 3), 3); /* capacity 131072 */
	assert_true(m.cap > 100000);
	assert_int_equal(*cmap_ref(&m, 100000, 4), 4); /* 8 * 3 + 65536 <= 100000 */
	assert_int_equal(cmap_get(&m, 100000), 4);
	assert_int_equal(*cmap_ref(&m, 100000, 5), 4); /* kept: first wins */
	assert_int_equal(cmap_get(&m, 0), 1);
	assert_int_equal(cmap_get(&m, 65540), 3);
	assert_int_equal(cmap_get(&m, 99999), IMAP_EMPTY);
	assert_int_equal(m.n, 4);
	/* Past the capacity and too far ahead: sparse; then enough ids that
	 * the array grows over it. */
	assert_int_equal(*cmap_ref(&m, 200000, 6), 6);
	for (int64_t k = 1; k <= 20000; k++)
		assert_int_equal(*cmap_ref(&m, k, 100), 100);
	assert_int_equal(*cmap_ref(&m, 150000, 7), 7); /* capacity 262144 */
	assert_true(m.cap > 200000);
	assert_int_equal(cmap_get(&m, 200000), 6);
	assert_int_equal(*cmap_ref(&m, 200000, 8), 6);
	assert_int_equal(cmap_get(&m, 100000), 4);
	assert_int_equal(m.n, 4 + 1 + 20000 + 1);
	cmap_release(&m);
}

/* An id copied from the sparse map into the array when the array grew
 * over it, then changed through cmap_ref(): a later growth keeps the new
 * value (it copied the sparse map's stale one over it). */
static void test_cmap_growth_keeps_changed_value(void **state)
{
	(void)state;
	struct cmap m;
	cmap_init(&m);
	assert_int_equal(*cmap_ref(&m, 0, 1), 1);
	assert_int_equal(*cmap_ref(&m, 200000, 2), 2); /* too far ahead: sparse */
	for (int64_t k = 1; k <= 20000; k++)
		*cmap_ref(&m, k, 100) = 100;
	assert_int_equal(*cmap_ref(&m, 150000, 3), 3); /* the array grows over 200000 */
	assert_true(m.cap > 200000 && m.cap < 300000);
	*cmap_ref(&m, 200000, 4) = 5;
	for (int64_t k = 20001; k <= 40000; k++)
		*cmap_ref(&m, k, 100) = 100;
	assert_int_equal(*cmap_ref(&m, 300000, 6), 6); /* and grows again */
	assert_true(m.cap > 300000);
	assert_int_equal(cmap_get(&m, 200000), 5);
	assert_int_equal(cmap_get(&m, 300000), 6);
	cmap_release(&m);
}

/* JSON "\u0000" inside a kernel name: the stored name keeps what follows
 * (NUL becomes U+FFFD), and the same raw name interns to one id. */
static void test_name_with_nul(void **state)
{
	struct strbuf cerr = STRBUF_INIT;
	(void)state;
	static const char raw[] = "bad\0name'; DROP TABLE kernels; --";
	struct arena a = ARENA_INIT;
	struct patterns *p = patterns_new(NULL, &cerr);
	struct classify *c = classify_new(p, &a);
	struct trace_event ev;
	struct rank_result *r;
	for (int i = 0; i < 3; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.cat = sv("kernel");
		ev.arg_name = ev.pg_name = ev.pg_desc = ev.pg_ranks = sv("");
		ev.pid.str = ev.tid.str = ev.id.str = sv("");
		ev.name.p = raw;
		ev.name.n = sizeof(raw) - 1;
		ev.ph = 'X';
		ev.ts_ns = 10 * i;
		ev.dur_ns = 5;
		classify_feed(c, &ev);
	}
	assert_int_equal(classify_finish(c, NULL, &r), 0);
	classify_free(c);
	assert_int_equal(r->nnames, 1);
	assert_string_equal(r->names[0], "bad\xef\xbf\xbdname'; DROP TABLE kernels; --");
	patterns_free(p);
	arena_release(&a);
}

static void test_arena_adopt(void **state)
{
	(void)state;
	struct arena a = ARENA_INIT;
	char *big = hugepage_realloc(NULL, 0, 0, 8 << 20);   /* a mapping of its own */
	char *small = hugepage_realloc(NULL, 0, 0, 1 << 20); /* a heap block */
	memset(big, 1, 8 << 20);
	memset(small, 1, 1 << 20);
	arena_adopt(&a, big, 8 << 20);
	arena_adopt(&a, small, 1 << 20);
	assert_true(a.reserved >= 9 << 20);
	assert_non_null(arena_alloc(&a, 10));
	arena_release(&a); /* frees big: ASan reports a leak otherwise */
	assert_null(a.owned);
	assert_int_equal(a.reserved, 0);
}

static void test_label_vpp_interleaved(void **state)
{
	static const int fwd_chunk[8] = { 0, 0, 1, 1, 0, 0, 1, 1 };
	static const int fwd_mb[8] = { 0, 1, 0, 1, 2, 3, 2, 3 };
	int32_t chunk, mb;
	(void)state;
	for (int i = 0; i < 8; i++) {
		assert_int_equal(rr_vpp_label(i, false, 2, 2, &chunk, &mb), 0);
		assert_int_equal(chunk, fwd_chunk[i]);
		assert_int_equal(mb, fwd_mb[i]);
	}
	assert_int_equal(rr_vpp_label(0, true, 2, 2, &chunk, &mb), 0);
	assert_int_equal(chunk, 1);
	assert_int_equal(mb, 0);
	assert_int_equal(rr_vpp_label(5, false, 4, 1, &chunk, &mb), 0);
	assert_int_equal(chunk, 0);
	assert_int_equal(mb, 5);
	assert_int_equal(rr_vpp_label(0, false, 0, 1, &chunk, &mb), PP_EINVAL);
}

static void test_describe_for_inspect(void **state)
{
	struct strbuf cerr = STRBUF_INIT;
	(void)state;
	struct arena a = ARENA_INIT;
	struct strbuf sb = STRBUF_INIT;
	struct patterns *pats = patterns_new(NULL, &cerr);
	struct rank_result *r = run_events(cases[0].events, &a, pats);
	rank_result_describe(r, &sb, false);
	assert_non_null(strstr(sb.buf, "  forward thread: pid 1 tid 1 "
				       "\"MainThread\" (rule: flows)\n"));
	assert_non_null(strstr(sb.buf, "forward_step=1 backward_step=1 "
				       "pp_comm=1 dp_comm=3"));
	assert_non_null(strstr(sb.buf, "warning: 1 GPU events have no launch"));
	strbuf_reset(&sb);
	rank_result_describe(r, &sb, true);
	assert_non_null(strstr(sb.buf, "{\"mode\":\"megatron\",\"forward_thread"
				       "\":{\"pid\":\"1\",\"tid\":\"1\",\"name\":"
				       "\"MainThread\",\"rule\":\"flows\"},"));
	assert_non_null(strstr(sb.buf, "\"coverage\":0.900990,"));
	strbuf_release(&sb);
	patterns_free(pats);
	arena_release(&a);
}

int main(void)
{
	struct CMUnitTest tests[sizeof(cases) / sizeof(cases[0]) + 16];
	size_t n = 0;
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_patterns_defaults_and_config);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_label_vpp_interleaved);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_reader_fixture);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_groups_from_header);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_groups_from_header_first_wins);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_arena_adopt);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_name_with_nul);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_cmap_dense_and_sparse);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_patterns_with_blanks);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_example_config_matches_defaults);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_describe_for_inspect);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_roots_find_near);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_category_names);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_cmap_far_id_inside_capacity);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_cmap_growth_keeps_changed_value);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tests[n].name = cases[i].name;
		tests[n].test_func = run_case;
		tests[n].setup_func = NULL;
		tests[n].teardown_func = NULL;
		tests[n].initial_state = (void *)&cases[i];
		n++;
	}
	return _cmocka_run_group_tests("classify", tests, n, NULL, NULL);
}
