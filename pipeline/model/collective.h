/* collective.h — the collectives a communication kernel runs: their codes
 * (the database's collective_codes), names and the words that name them
 * (docs/classification.md "Collectives"). The one definition: the
 * classifier decides each comm kernel's collective with these, the
 * pattern sets' [collectives] keys are their names, and storage writes the
 * code table from rr_coll_name().
 */
#ifndef MODEL_COLLECTIVE_H
#define MODEL_COLLECTIVE_H

#include <stdbool.h>
#include <stddef.h>

/* The collective a comm kernel runs (docs/classification.md "Collectives"):
 * from the CPU side when the trace records it (its own `Collective name`
 * arg, the innermost enclosing `record_param_comms` with one or `nccl:<op>`
 * annotation), else from its name (patterns_collective(): a [collectives]
 * glob, then rr_coll_of()). RR_COLL_NONE for every kernel that is not
 * communication. Names via rr_coll_name(); the database stores these values
 * (its collective_codes table is written from the names). The first five
 * keep their values: the what-if ops read only them. */
enum rr_coll {
	RR_COLL_NONE,           /* not communication: NULL */
	RR_COLL_ALLREDUCE,      /* all_reduce */
	RR_COLL_REDUCE_SCATTER, /* reduce_scatter */
	RR_COLL_ALLGATHER,      /* all_gather */
	RR_COLL_OTHER,          /* other: a comm kernel whose collective is not known */
	RR_COLL_ALLTOALL,       /* all_to_all (also MoE dispatch/combine) */
	RR_COLL_BROADCAST,      /* broadcast */
	RR_COLL_REDUCE,         /* reduce */
	RR_COLL_GATHER,         /* gather */
	RR_COLL_SCATTER,        /* scatter */
	RR_COLL_SEND,           /* send (point to point) */
	RR_COLL_RECV,           /* recv */
	RR_COLL_SENDRECV,       /* send_recv: a batch of sends and receives */
	RR_COLL_BARRIER,        /* barrier */
	RR_NCOLLS
};

/* Whether a comm kernel of collective c may be a pipeline send or receive
 * (rule 3 of docs/semantics.md §5): send, recv, send_recv or other (not
 * known), never a collective such as an all-to-all. */
static inline bool rr_coll_p2p(unsigned c)
{
	return c == RR_COLL_SEND || c == RR_COLL_RECV || c == RR_COLL_SENDRECV ||
	       c == RR_COLL_OTHER;
}

/* The collective that the words of a text say: a `Collective name` arg, an
 * `nccl:<op>` annotation or a kernel's name (ASCII case and underscores
 * ignored: "reduce_scatter", "ReduceScatter", "_reduce_scatter_base",
 * "ncclDevKernel_SendRecv", "batch_isend_irecv"); RR_COLL_OTHER when it
 * names none (ncclDevKernel_Generic, "coalesced"). Tried in the order
 * reduce-scatter, all-gather, all-reduce, all-to-all, broadcast, send_recv
 * (both words), send, recv, barrier, reduce, gather, scatter. */
enum rr_coll rr_coll_of(const char *text, size_t n);
/* "all_reduce", ...; NULL for RR_COLL_NONE or an invalid value. */
const char *rr_coll_name(enum rr_coll c);
/* The collective spelled s as rr_coll_name() spells it, or RR_COLL_NONE. */
enum rr_coll rr_coll_by_name(const char *s);

#endif
