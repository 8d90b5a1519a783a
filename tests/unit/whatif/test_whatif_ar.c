/* The AR sample of the reference (the shared data folder, data/whatif):
 * trace-AR.csv.gz through the op-trace reader and the engine reproduces
 * every number of result-AR.json, ms-AR.json and mw-AR.json within the
 * tolerances of docs/whatif.md (1e-6 relative on ratios, 1e-5 s on step
 * times, 2e-6 absolute on M values), and the replay property holds. Skips,
 * saying why, when the data folder is absent. */
#include <ctype.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/pp.h"
#include "whatif/wi_optrace.h"
#include "whatif/whatif.h"
#include "util/strbuf.h"
#include "tests/unit/unit.h"

/* ---- a JSON flattener: every number as ("a/b/c", value) ------------------ */

struct kv {
	char path[160];
	double v;
};

struct flat {
	struct kv *kv;
	size_t n, cap;
	const char *p;
};

static void ws(struct flat *f)
{
	while (isspace((unsigned char)*f->p))
		f->p++;
}

static void value(struct flat *f, char *path, size_t plen);

static size_t string(struct flat *f, char *buf, size_t len)
{
	assert_true(*f->p == '"');
	size_t k = 0;
	for (f->p++; *f->p && *f->p != '"'; f->p++)
		if (k + 1 < len)
			buf[k++] = *f->p;
	buf[k] = '\0';
	assert_true(*f->p == '"');
	f->p++;
	return k;
}

static void value(struct flat *f, char *path, size_t plen)
{
	ws(f);
	if (*f->p == '{') {
		f->p++;
		for (;;) {
			ws(f);
			if (*f->p == '}') {
				f->p++;
				return;
			}
			char key[96];
			string(f, key, sizeof(key));
			ws(f);
			assert_true(*f->p == ':');
			f->p++;
			snprintf(path + plen, 160 - plen, "%s%s", plen ? "/" : "", key);
			value(f, path, strlen(path));
			path[plen] = '\0';
			ws(f);
			if (*f->p == ',')
				f->p++;
		}
	}
	if (*f->p == '"') {
		char tmp[96];
		string(f, tmp, sizeof(tmp));
		return;
	}
	if (!strncmp(f->p, "null", 4) || !strncmp(f->p, "true", 4)) {
		f->p += 4;
		return;
	}
	if (!strncmp(f->p, "false", 5)) {
		f->p += 5;
		return;
	}
	assert_true(*f->p != '[');
	char *end;
	double v = strtod(f->p, &end);
	assert_true(end != f->p);
	f->p = end;
	if (f->n == f->cap) {
		f->cap = f->cap ? 2 * f->cap : 1024;
		f->kv = realloc(f->kv, f->cap * sizeof(*f->kv));
		assert_non_null(f->kv);
	}
	snprintf(f->kv[f->n].path, sizeof(f->kv[f->n].path), "%s", path);
	f->kv[f->n++].v = v;
}

static void flatten(const char *file, struct flat *f)
{
	FILE *fp = fopen(file, "r");
	assert_non_null(fp);
	char *text = malloc(1 << 20);
	assert_non_null(text);
	size_t n = fread(text, 1, (1 << 20) - 1, fp);
	fclose(fp);
	text[n] = '\0';
	memset(f, 0, sizeof(*f));
	f->p = text;
	char path[160] = "";
	value(f, path, 0);
	free(text);
}

static bool get(const struct flat *f, const char *path, double *v)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->kv[i].path, path)) {
			*v = f->kv[i].v;
			return true;
		}
	return false;
}

static double need(const struct flat *f, const char *fmt, ...)
{
	char path[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	double v = NAN;
	if (!get(f, path, &v))
		fail_msg("reference has no %s", path);
	return v;
}

/* ---- checks -------------------------------------------------------------- */

static int checked;
static double worst_rel, worst_step, worst_m; /* largest differences seen */

static void close_rel(double got, double want, const char *what)
{
	double d = fabs(got - want) / fabs(want);
	worst_rel = d > worst_rel ? d : worst_rel;
	if (!(d <= 1e-6))
		fail_msg("%s: %.12g, reference %.12g (relative %.3g > 1e-6)", what, got, want, d);
	checked++;
}

static void close_abs(double got, double want, double tol, const char *what)
{
	double *w = tol < 2e-6 + 1e-12 ? &worst_m : &worst_step;
	*w = fabs(got - want) > *w ? fabs(got - want) : *w;
	if (!(fabs(got - want) <= tol))
		fail_msg("%s: %.12g, reference %.12g (difference %.3g > %g)", what, got, want,
			 fabs(got - want), tol);
	checked++;
}

static char dir[4096];

static int setup(void **state)
{
	(void)state;
	const char *shared = getenv("PP_SHARED");
	const char *root = getenv("PP_ROOT");
	if (shared)
		snprintf(dir, sizeof(dir), "%s/data/whatif", shared);
	else
		snprintf(dir, sizeof(dir), "%s/../shared/data/whatif", root ? root : ".");
	return 0;
}

static bool have_data(void)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/trace-AR.csv.gz", dir);
	if (access(p, R_OK) == 0)
		return true;
	print_message("# skip: no AR sample at %s (set PP_SHARED or PP_ROOT)\n", dir);
	return false;
}

static void load(struct wi_table *t, struct whatif **e)
{
	char p[4200];
	struct strbuf err = STRBUF_INIT;
	wi_table_init(t);
	snprintf(p, sizeof(p), "%s/trace-AR.csv.gz", dir);
	strbuf_reset(&err);
	int rc = wi_optrace_read(p, t, &err);
	if (rc)
		fail_msg("%s", err.buf);
	snprintf(p, sizeof(p), "%s/meta-AR.yaml", dir);
	strbuf_reset(&err);
	assert_int_equal(wi_optrace_read_meta(p, &t->meta, &err), 0);
	t->has_meta = true;
	snprintf(p, sizeof(p), "%s/trace-AR.schema.json", dir);
	strbuf_reset(&err);
	assert_int_equal(wi_optrace_read_schema(p, t, &err), 0);
	assert_int_equal(t->n, 117216);
	strbuf_reset(&err);
	rc = whatif_new(t, NULL, e, &err);
	if (rc)
		fail_msg("%s", err.buf);
	strbuf_release(&err);
}

static void check_decomp(const struct whatif_result *r, const struct flat *ref,
			 const struct wi_decomp *d, const char *name, bool groups)
{
	char key[64], what[160];
	assert_true(d->present);
	for (size_t i = 0; i < d->n; i++) {
		if (groups)
			snprintf(key, sizeof(key), "%s", wi_group_name(d->key[i]));
		else
			snprintf(key, sizeof(key), "%d", d->key[i]);
		snprintf(what, sizeof(what), "%s %s", name, key);
		close_rel(d->ratio[i], need(ref, "%s/%s", name, key), what);
		for (size_t s = 0; s < r->nsteps; s++) {
			snprintf(what, sizeof(what), "%s step %lld %s", name, (long long)r->step[s],
				 key);
			close_rel(
				d->per_step[s * d->n + i],
				need(ref, "%s_per_step/%lld/%s", name, (long long)r->step[s], key),
				what);
		}
	}
	/* The reference has exactly these keys. */
	size_t nref = 0;
	char prefix[96];
	snprintf(prefix, sizeof(prefix), "%s/", name);
	for (size_t i = 0; i < ref->n; i++)
		nref += !strncmp(ref->kv[i].path, prefix, strlen(prefix));
	assert_int_equal(nref, d->n);
}

static void test_ar_reference(void **state)
{
	(void)state;
	SKIP_UNLESS(have_data());
	struct wi_table t;
	struct whatif *e;
	struct whatif_result r;
	struct flat res, ms, mw;
	char p[4200], what[128];
	load(&t, &e);
	struct whatif_shape sh;
	whatif_shape(e, &sh);
	/* docs/whatif.md: 666 nodes, 1229 edges, 202 groups. */
	assert_int_equal(sh.nodes, 666);
	assert_int_equal(sh.edges, 1229);
	assert_int_equal(sh.groups, 202);
	assert_string_equal(whatif_notes(e), "");
	whatif_run(e, &r);
	snprintf(p, sizeof(p), "%s/result-AR.json", dir);
	flatten(p, &res);
	snprintf(p, sizeof(p), "%s/ms-AR.json", dir);
	flatten(p, &ms);
	snprintf(p, sizeof(p), "%s/mw-AR.json", dir);
	flatten(p, &mw);

	assert_int_equal(r.nsteps, 44);
	for (size_t s = 0; s < r.nsteps; s++) {
		long long st = (long long)r.step[s];
		snprintf(what, sizeof(what), "step %lld", st);
		close_abs(r.t_base[s] / 1e9, need(&res, "step_t_base/%lld", st), 1e-5, what);
		close_abs(r.t_nodelay[s] / 1e9, need(&res, "step_t_nodelay/%lld", st), 1e-5, what);
		close_abs(r.t_ideal[s] / 1e9, need(&res, "step_t_noblk/%lld", st), 1e-5, what);
		close_rel(r.slowdown[s], need(&res, "blocking_step_slowdown/%lld", st), what);
		close_rel(r.launch_slowdown[s], need(&res, "launch_step_slowdown/%lld", st), what);
	}
	close_rel(r.s, need(&res, "blocking_slowdown"), "S");
	close_rel(r.s_launch, need(&res, "launch_slowdown"), "launch_slowdown");
	check_decomp(&r, &res, &r.by_group, "blocking_decompose_by_optype", true);
	check_decomp(&r, &res, &r.by_dp, "blocking_decompose_by_dp_rank", false);
	check_decomp(&r, &res, &r.by_stage, "blocking_decompose_by_stage", false);
	/* Launch slowdown 1.0068 < 1.03: no launch decomposition (null). */
	assert_false(r.l_by_group.present);
	double unused;
	assert_false(get(&res, "launch_decompose_by_optype/gc", &unused));

	/* S_w, M_W and M_S. */
	assert_int_equal(r.workers[0].rank, 0);
	assert_int_equal(r.n_mw, 1);
	static const int top[5] = { 0, 8, 12, 4, 48 };
	for (int i = 0; i < 5; i++)
		assert_int_equal(r.workers[i].rank, top[i]);
	close_abs(r.m_w, need(&mw, "Mw"), 2e-6, "M_W");
	close_abs(r.mw.add, need(&mw, "add"), 2e-6, "M_W add");
	close_abs(r.mw.trem / 1e9, need(&mw, "trem"), 1e-5, "M_W trem");
	close_abs(r.mw.tadd / 1e9, need(&mw, "tadd"), 1e-5, "M_W tadd");
	close_abs(r.mw.tori / 1e9, need(&mw, "tori"), 1e-5, "M_W tori");
	close_abs(r.mw.tideal / 1e9, need(&mw, "tideal"), 1e-5, "M_W tideal");
	close_abs(r.m_s, need(&ms, "Ms"), 2e-6, "M_S");
	close_abs(r.ms.add, need(&ms, "add"), 2e-6, "M_S add");
	close_abs(r.ms.trem / 1e9, need(&ms, "trem"), 1e-5, "M_S trem");
	close_abs(r.ms.tadd / 1e9, need(&ms, "tadd"), 1e-5, "M_S tadd");
	assert_int_equal(r.verdict, WI_VERDICT_WORKER);
	print_message(
		"%d values within tolerance; largest differences: %.3g relative on ratios, %.3g s on step times, %.3g on M values\n",
		checked, worst_rel, worst_step, worst_m);
	/* 5 per step, S, launch, 19 decomposition keys × (1 + 44 steps), 10 M
	 * values. */
	assert_int_equal(checked, 5 * 44 + 2 + 19 * 45 + 10);

	free(res.kv);
	free(ms.kv);
	free(mw.kv);
	whatif_result_release(&r);
	whatif_free(e);
	wi_table_release(&t);
}

/* The replay of the recorded trace gives back every start and end (the
 * sample has no launch delay or transfer at or below -10 ms). */
static void test_ar_replay(void **state)
{
	(void)state;
	SKIP_UNLESS(have_data());
	struct wi_table t;
	struct whatif *e;
	load(&t, &e);
	struct whatif_shape sh;
	whatif_shape(e, &sh);
	size_t n = sh.nsteps * (size_t)sh.dp * sh.nodes;
	double *a = malloc(4 * n * sizeof(double));
	assert_non_null(a);
	whatif_recorded(e, a, a + n);
	whatif_timeline(e, WI_SCEN_BASE, a + 2 * n, a + 3 * n);
	assert_memory_equal(a, a + 2 * n, 2 * n * sizeof(double));
	/* And the recorded times are the rows' own, relative to the step. */
	size_t i = 0;
	while (t.ops[i].step != 16 || t.ops[i].dp_rank != 0 || t.ops[i].optype != OP_OPTIMIZER)
		i++;
	long v = whatif_find(e, t.ops[i].stage, OP_OPTIMIZER, 0);
	int64_t t0 = INT64_MAX;
	for (size_t k = 0; k < t.n; k++)
		if (t.ops[k].step == 16 && t.ops[k].start_ns < t0)
			t0 = t.ops[k].start_ns;
	assert_true(a[n + (size_t)v] == (double)(t.ops[i].end_ns - t0));
	free(a);
	whatif_free(e);
	wi_table_release(&t);
}

UNIT_MAIN(NULL, NULL,
	  {
		  cmocka_unit_test_setup(test_ar_reference, setup),
		  cmocka_unit_test_setup(test_ar_replay, setup),
	  })
