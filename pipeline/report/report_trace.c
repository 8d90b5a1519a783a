/* report_trace.c — Chrome trace-event JSON for Perfetto's UI (report_int.h):
 * the what-if's step (report_whatif.c) and the merged timeline of chosen
 * ranks (report_why.c) are written through it.
 *
 * Times are int64 ns counted from the file's origin and written as µs with
 * three decimals, exact, never negative (a negative time is not JSON the
 * viewers accept: "ts":-11.-854). A track holds complete events that are
 * disjoint or nested (the format's rule); report_lane() sends an event that
 * would overlap another without nesting to the track's next lane.
 */
#include "report_int.h"

#include <string.h>

void report_trace_begin(struct report_trace *t, FILE *f, const char *other, long long origin)
{
	t->f = f;
	t->first = true;
	t->origin = origin;
	t->events = 0;
	strbuf_init(&t->sb, 0);
	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{%s},\n\"traceEvents\":[\n",
		other ? other : "");
}

void report_trace_meta(struct report_trace *t, int pid, int tid, const char *what, const char *key,
		       const char *value)
{
	fprintf(t->f, "%s{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"%s\",\"args\":{\"%s\":%s}}",
		t->first ? "" : ",\n", pid, tid, what, key, value);
	t->first = false;
}

void report_trace_name(struct report_trace *t, int pid, int tid, const char *name)
{
	strbuf_reset(&t->sb);
	strbuf_add_json_str(&t->sb, name, strlen(name));
	report_trace_meta(t, pid, tid < 0 ? 0 : tid, tid < 0 ? "process_name" : "thread_name",
			  "name", t->sb.buf);
}

void report_trace_order(struct report_trace *t, int pid, int tid, long sort_index)
{
	char v[32];
	snprintf(v, sizeof(v), "%ld", sort_index);
	report_trace_meta(t, pid, tid < 0 ? 0 : tid,
			  tid < 0 ? "process_sort_index" : "thread_sort_index", "sort_index", v);
}

void report_trace_slice(struct report_trace *t, int pid, int tid, long long s, long long e,
			const char *name, const char *cat, const char *args)
{
	s -= t->origin;
	e -= t->origin;
	if (s < 0)
		s = 0;
	if (e < s)
		e = s;
	strbuf_reset(&t->sb);
	strbuf_add_json_str(&t->sb, name, strlen(name));
	fprintf(t->f,
		"%s{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%lld.%03lld,\"dur\":%lld.%03lld,"
		"\"name\":%s,\"cat\":\"%s\"",
		t->first ? "" : ",\n", pid, tid, s / 1000, s % 1000, (e - s) / 1000, (e - s) % 1000,
		t->sb.buf, cat);
	if (args)
		fprintf(t->f, ",\"args\":{%s}", args);
	fputc('}', t->f);
	t->first = false;
	t->events++;
}

void report_trace_end(struct report_trace *t)
{
	fputs("\n]}\n", t->f);
	strbuf_release(&t->sb);
}

int report_lane(struct report_lanes *l, long long s, long long e)
{
	int k = 0;
	while (k < l->n && s < l->last[k])
		k++;
	if (k == REPORT_LANES)
		k = REPORT_LANES - 1; /* beyond them the last lane nests */
	if (k == l->n)
		l->n++;
	l->last[k] = e;
	return k;
}
