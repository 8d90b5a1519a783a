/* collective.c — the names and words of the collectives (collective.h). */
#include "collective.h"

#include <string.h>

static const char *const coll_names[RR_NCOLLS] = {
	NULL,     "all_reduce", "reduce_scatter", "all_gather", "other", "all_to_all", "broadcast",
	"reduce", "gather",     "scatter",        "send",       "recv",  "send_recv",  "barrier",
};

const char *rr_coll_name(enum rr_coll c)
{
	return (unsigned)c < RR_NCOLLS ? coll_names[c] : NULL;
}

enum rr_coll rr_coll_by_name(const char *s)
{
	for (int c = RR_COLL_NONE + 1; c < RR_NCOLLS; c++)
		if (!strcmp(s, coll_names[c]))
			return (enum rr_coll)c;
	return RR_COLL_NONE;
}

enum rr_coll rr_coll_of(const char *text, size_t n)
{
	/* The first three come first, as the what-if ops always read them. */
	static const struct {
		const char *word;
		enum rr_coll coll;
	} words[] = {
		{ "reducescatter", RR_COLL_REDUCE_SCATTER },
		{ "allgather", RR_COLL_ALLGATHER },
		{ "allreduce", RR_COLL_ALLREDUCE },
		{ "alltoall", RR_COLL_ALLTOALL },
		{ "all2all", RR_COLL_ALLTOALL },
		{ "broadcast", RR_COLL_BROADCAST },
		{ "sendrecv", RR_COLL_SENDRECV },
	};
	static const struct {
		const char *word;
		enum rr_coll coll;
	} later[] = {
		{ "send", RR_COLL_SEND },       { "recv", RR_COLL_RECV },
		{ "barrier", RR_COLL_BARRIER }, { "reduce", RR_COLL_REDUCE },
		{ "gather", RR_COLL_GATHER },   { "scatter", RR_COLL_SCATTER },
	};
	char low[160]; /* the collective is named early in a kernel's name */
	size_t k = 0;
	for (size_t i = 0; i < n && k + 1 < sizeof(low); i++) {
		unsigned char ch = (unsigned char)text[i];
		if (ch != '_')
			low[k++] = (char)(ch >= 'A' && ch <= 'Z' ? ch | 0x20 : ch);
	}
	low[k] = '\0';
	for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++)
		if (strstr(low, words[w].word))
			return words[w].coll;
	if (strstr(low, "send") && strstr(low, "recv")) /* batch_isend_irecv */
		return RR_COLL_SENDRECV;
	for (size_t w = 0; w < sizeof(later) / sizeof(later[0]); w++)
		if (strstr(low, later[w].word))
			return later[w].coll;
	return RR_COLL_OTHER;
}
