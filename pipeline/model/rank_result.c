/* rank_result.c — names of the enums of rank_result.h (docs/contracts.md §2), the
 * --inspect description and the VPP label of a step. */
#include <stdio.h>
#include <string.h>

#include "rank_result.h"
#include "patterns.h"
#include "util/category.h"
#include "util/pp.h"
#include "util/strbuf.h"

_Static_assert(RR_NPATSETS == PAT_NSETS, "rank_result.h mirrors patterns.h");
_Static_assert(RR_NCATEGORIES == PP_NCATEGORY_NAMES, "enum rr_category indexes category.h");
_Static_assert(RR_NPHASES == PP_NPHASE_NAMES, "enum rr_phase indexes category.h");

const char *rr_category_name(enum rr_category c)
{
	return (unsigned)c < RR_NCATEGORIES ? pp_category_names[c] : "?";
}

const char *rr_phase_name(enum rr_phase p)
{
	return p >= 0 && p < RR_NPHASES ? pp_phase_names[p] : NULL;
}

const char *rr_mode_name(enum rr_mode m)
{
	return m == RR_GENERIC ? "generic" : "megatron";
}

const char *rr_pg_kind_name(enum rr_pg_kind k)
{
	static const char *const n[] = { "unknown", "tp", "pp", "dp", "ep", "cp" };
	return (unsigned)k < 6 ? n[k] : "unknown";
}

enum rr_pg_kind rr_pg_kind_of(const char *desc)
{
	static const struct {
		const char *word;
		enum rr_pg_kind kind;
	} words[] = {
		{ "EXPERT", RR_PG_EP },   { "CONTEXT", RR_PG_CP }, { "TENSOR", RR_PG_TP },
		{ "PIPELINE", RR_PG_PP }, { "DATA", RR_PG_DP },
	};
	/* Combined groups (TENSOR_AND_DATA_PARALLEL_GROUP, ...) are no one
	 * kind; EXPERT_DATA_PARALLEL_GROUP counts as ep (tested first). */
	if (!desc || strcasestr(desc, "_AND_"))
		return RR_PG_UNKNOWN;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcasestr(desc, words[i].word))
			return words[i].kind;
	return RR_PG_UNKNOWN;
}

const char *rr_role_rule_name(enum rr_role_rule r)
{
	static const char *const n[] = { "none",         "flows",
					 "forward_step", "pt_autograd_name",
					 "bwd_launches", "same_thread" };
	return (unsigned)r < 6 ? n[r] : "none";
}

static void describe_thread_text(struct strbuf *sb, const char *role, const struct rr_thread *t)
{
	if (!t->found) {
		strbuf_addf(sb, "  %s thread: none\n", role);
		return;
	}
	strbuf_addf(sb, "  %s thread: pid %s tid %s \"%s\" (rule: %s)\n", role, t->pid, t->tid,
		    t->name, rr_role_rule_name(t->rule));
}

static void describe_thread_json(struct strbuf *sb, const char *role, const struct rr_thread *t)
{
	strbuf_addf(sb, "\"%s_thread\":", role);
	if (!t->found) {
		strbuf_addstr(sb, "null,");
		return;
	}
	strbuf_addstr(sb, "{\"pid\":");
	strbuf_add_json_str(sb, t->pid, strlen(t->pid));
	strbuf_addstr(sb, ",\"tid\":");
	strbuf_add_json_str(sb, t->tid, strlen(t->tid));
	strbuf_addstr(sb, ",\"name\":");
	strbuf_add_json_str(sb, t->name, strlen(t->name));
	strbuf_addf(sb, ",\"rule\":\"%s\"},", rr_role_rule_name(t->rule));
}

static void describe_text(const struct rank_result *r, struct strbuf *sb)
{
	const struct rr_counters *k = &r->counters;
	strbuf_addf(sb, "  mode: %s\n", rr_mode_name(r->mode));
	describe_thread_text(sb, "forward", &r->fwd_thread);
	describe_thread_text(sb, "backward", &r->bwd_thread);
	strbuf_addstr(sb, "  steps per pattern set:");
	for (int s = 0; s < PAT_NSETS; s++)
		strbuf_addf(sb, " %s=%lld", patterns_set_name(s), (long long)r->steps_per_set[s]);
	strbuf_addf(sb, "\n  ProfilerStep windows: %zu\n", r->niterations);
	strbuf_addf(sb,
		    "  events %lld, cpu slices %lld (kept %lld), launches "
		    "%lld, gpu events %lld",
		    (long long)k->events, (long long)k->cpu_slices, (long long)k->kept_slices,
		    (long long)k->launches, (long long)k->gpu_events);
	if (!r->survey)
		strbuf_addf(sb, " (orphans %lld)", (long long)k->orphans);
	strbuf_addf(sb, ", fwdbwd flow ends %lld\n", (long long)k->flows);
	if (r->survey)
		strbuf_addstr(sb, "  (a survey: kernel categories, orphans, rank metrics, user "
				  "annotations and unknown kernels with --full)\n");
	if (r->has_window)
		strbuf_addf(sb,
			    "  window %lld ns, gpu busy %lld, idle %lld, "
			    "bubble %lld, coverage %.2f%%\n",
			    (long long)(r->window_end_ns - r->window_start_ns),
			    (long long)r->gpu_busy_ns, (long long)r->idle_ns,
			    (long long)r->bubble_ns, 100.0 * r->coverage);
	for (size_t i = 0; i < r->nwarnings; i++)
		strbuf_addf(sb, "  warning: %s\n", r->warnings[i]);
}

static void describe_json(const struct rank_result *r, struct strbuf *sb)
{
	const struct rr_counters *k = &r->counters;
	strbuf_addf(sb, "{\"mode\":\"%s\",", rr_mode_name(r->mode));
	describe_thread_json(sb, "forward", &r->fwd_thread);
	describe_thread_json(sb, "backward", &r->bwd_thread);
	strbuf_addstr(sb, "\"steps_per_set\":{");
	for (int s = 0; s < PAT_NSETS; s++)
		strbuf_addf(sb, "%s\"%s\":%lld", s ? "," : "", patterns_set_name(s),
			    (long long)r->steps_per_set[s]);
	strbuf_addf(sb,
		    "},\"survey\":%s,\"profiler_steps\":%zu,"
		    "\"events\":%lld,\"cpu_slices\":%lld,\"launches\":%lld,"
		    "\"gpu_events\":%lld,",
		    r->survey ? "true" : "false", r->niterations, (long long)k->events,
		    (long long)k->cpu_slices, (long long)k->launches, (long long)k->gpu_events);
	if (r->survey)
		strbuf_addstr(sb, "\"orphans\":null,\"kernels\":null,");
	else
		strbuf_addf(sb, "\"orphans\":%lld,\"kernels\":%zu,", (long long)k->orphans,
			    r->nkernels);
	strbuf_addf(sb, "\"steps\":%zu,", r->nsteps);
	if (r->has_window)
		strbuf_addf(sb,
			    "\"window_ns\":%lld,\"gpu_busy_ns\":%lld,"
			    "\"bubble_ns\":%lld,\"coverage\":%.6f,",
			    (long long)(r->window_end_ns - r->window_start_ns),
			    (long long)r->gpu_busy_ns, (long long)r->bubble_ns, r->coverage);
	strbuf_addstr(sb, "\"warnings\":[");
	for (size_t i = 0; i < r->nwarnings; i++) {
		if (i)
			strbuf_addch(sb, ',');
		strbuf_add_json_str(sb, r->warnings[i], strlen(r->warnings[i]));
	}
	strbuf_addstr(sb, "]}");
}

void rank_result_describe(const struct rank_result *r, struct strbuf *sb, bool json)
{
	if (json)
		describe_json(r, sb);
	else
		describe_text(r, sb);
}

/* Megatron's get_model_chunk_id / get_microbatch_id_in_model_chunk with
 * microbatch_group_size_per_vp_stage = pp_size. */
int rr_vpp_label(int64_t seq, bool backward, int pp_size, int vpp, int32_t *chunk,
		 int32_t *microbatch)
{
	if (pp_size < 1 || vpp < 1)
		return PP_EINVAL;
	int64_t group = (int64_t)pp_size * vpp;
	if (vpp == 1) {
		*chunk = 0;
		*microbatch = (int32_t)seq;
		return 0;
	}
	int64_t c = (seq % group) / pp_size;
	*chunk = (int32_t)(backward ? vpp - 1 - c : c);
	*microbatch = (int32_t)((seq / group) * pp_size + seq % pp_size);
	return 0;
}
