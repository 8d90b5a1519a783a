/* gen_prog.c — builds each rank's program for one iteration: the slices
 * and kernels of Megatron-LM's training step in program order (schedule
 * from gen_sched), with Megatron's frame names, and the category, step and
 * recompute flag of every kernel by docs/semantics.md §5, decided from the steps open at
 * launch time in the order of the rules. Timing is gen_sim.c's job.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_int.h"
#include "gen_sched.h"
#include "util/pp.h"
#include "util/strbuf.h"

const int gen_stream_ids[GS_N] = { 7, 20, 24, 28 };

/* Names as Megatron-LM writes them (python_function frames). */
#define MG "megatron/core/"
static const char N_TRAIN_STEP[] = "megatron/training/training.py(1183): train_step";
static const char N_SCHED_1F1B[] =
	MG "pipeline_parallel/schedules.py(1623): forward_backward_pipelining_without_interleaving";
static const char N_SCHED_VPP[] =
	MG "pipeline_parallel/schedules.py(873): forward_backward_pipelining_with_interleaving";
static const char N_SCHED_NOPP[] =
	MG "pipeline_parallel/schedules.py(452): forward_backward_no_pipelining";
static const char N_FWD_STEP[] = MG "pipeline_parallel/schedules.py(290): forward_step";
static const char N_BWD_STEP[] = MG "pipeline_parallel/schedules.py(395): backward_step";
static const char N_FWD_HELPER[] = MG "pipeline_parallel/schedules.py(1108): forward_step_helper";
static const char N_BWD_HELPER[] = MG "pipeline_parallel/schedules.py(1203): backward_step_helper";
static const char N_GPT_FWD[] = "pretrain_gpt.py(226): forward_step";
static const char N_LOSS[] = "pretrain_gpt.py(168): loss_func";
static const char N_LAYER_FWD[] = MG "transformer/transformer_layer.py(642): forward";
static const char N_RECOMPUTE[] = MG "transformer/transformer_block.py(505): custom_forward";
static const char N_GRAD_SYNC[] = MG "distributed/param_and_grad_buffer.py(401): start_grad_sync";
static const char N_FINALIZE[] =
	MG "distributed/finalize_model_grads.py(256): finalize_model_grads";
static const char N_FINISH_SYNC[] =
	MG "distributed/distributed_data_parallel.py(452): finish_grad_sync";
static const char N_OPT_STEP[] = MG "optimizer/optimizer.py(470): step";
static const char N_OPT_READY[] = MG "optimizer/distrib_optimizer.py(2011): step_with_ready_grads";
static const char N_LN_GRADS[] =
	MG "distributed/finalize_model_grads.py(86): _allreduce_layernorm_grads";
static const char N_EMB_GRADS[] =
	MG "distributed/finalize_model_grads.py(160): _allreduce_embedding_grads";
static const char N_PARAM_SYNC[] =
	MG "distributed/distributed_data_parallel.py(389): finish_param_sync";
static const char N_CLIP[] = MG "optimizer/clip_grads.py(138): clip_grad_norm_fp32";
static const char N_GRAD_NORM[] = MG "optimizer/clip_grads.py(51): get_grad_norm_fp32";
static const char N_COMMUNICATE[] = MG "pipeline_parallel/p2p_communication.py(330): _communicate";
#define P2P MG "pipeline_parallel/p2p_communication.py"
static const char *const N_P2P[GF_NFN] = {
	[GF_RECV_F] = P2P "(518): recv_forward",
	[GF_SEND_F] = P2P "(560): send_forward",
	[GF_RECV_B] = P2P "(539): recv_backward",
	[GF_SEND_B] = P2P "(580): send_backward",
	[GF_SEND_F_RECV_B] = P2P "(600): send_forward_recv_backward",
	[GF_SEND_B_RECV_F] = P2P "(624): send_backward_recv_forward",
	[GF_SEND_F_RECV_F] = P2P "(648): send_forward_recv_forward",
	[GF_SEND_B_RECV_B] = P2P "(672): send_backward_recv_backward",
	[GF_SEND_F_B_RECV_F_B] = P2P "(696): send_forward_backward_recv_forward_backward",
};

static const char *const K_COMP[] = {
	"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
	"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
	"void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>, false, true, false, false, true, true, false, false>(Flash_fwd_params)",
	"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
	"void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)",
	"sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
	"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)",
	"void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 10, false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)",
};
static const int K_COMP_US[] = { 12, 180, 150, 90, 30, 210, 9, 20 };
static const char *const K_COMP_OP[] = { "aten::native_layer_norm",
					 "aten::mm",
					 "FlashAttnFunc",
					 "aten::mm",
					 "aten::gelu",
					 "aten::mm",
					 "aten::add",
					 "aten::_softmax" };
static const char K_BWD0[] =
	"sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas";
static const char K_ALLREDUCE[] =
	"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
static const char K_ALLREDUCE_F32[] =
	"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
static const char K_ALLGATHER[] =
	"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
static const char K_REDSCAT[] =
	"ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
static const char K_SENDRECV[] = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
static const char K_MEMCPY[] = "Memcpy HtoD (Pinned -> Device)";
static const char K_MEMSET[] = "Memset (Device)";
static const char K_FILL[] =
	"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)";
static const char K_ORPHAN[] =
	"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#8}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#8}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)";
static const char K_CE[] =
	"void at::native::(anonymous namespace)::cross_entropy_loss_kernel<c10::BFloat16, float>(float*, c10::BFloat16 const*, long const*, int, int)";
static const char K_L2NORM[] =
	"void multi_tensor_apply_kernel<TensorListMetadata<1>, L2NormFunctor<float, 512, 512>, float*, float*, bool, int>(long, int volatile*, TensorListMetadata<1>, L2NormFunctor<float, 512, 512>, float*, float*, bool, int)";
static const char K_SCALE[] =
	"void multi_tensor_apply_kernel<TensorListMetadata<2>, ScaleFunctor<float, float>, float>(long, int volatile*, TensorListMetadata<2>, ScaleFunctor<float, float>, float)";
static const char K_ADAM[] =
	"void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float, float, float, int>, float, float, float, float, float, float, adamMode_t, float>(long, int volatile*, TensorListMetadata<4>, AdamFunctor<float, float, float, int>, float, float, float, float, float, float, adamMode_t, float)";

struct bld {
	struct gen_cluster *cl;
	const struct gen_cfg *cfg;
	struct gen_rank *r;
	int step[GP_N]; /* open root-most step slice per phase, -1 none */
	bool recompute;
	unsigned p2p_dep; /* streams whose next kernel waits for the p2p stream */
	bool ag_dep;      /* the next compute-stream kernel waits for the DP stream */
	uint32_t corr;
	int seqn[GP_N];
	int coll_seq[GEN_NGROUPS];
	int fwd_done; /* bit c: chunk c ran a forward (param all-gathers) */
	int count;    /* kernels built, for "every n-th" choices */
	int layer_of_chunk;
};

static void push_item(struct gen_rank *r, uint32_t item)
{
	PP_GROW(r->items, r->nitems, r->capitems, 1024);
	r->items[r->nitems++] = item;
}

static void gap(struct bld *b, int ns)
{
	push_item(b->r, ITEM(IT_GAP, ns));
}

static int open_slice(struct bld *b, int thread, const char *name, int cat, unsigned mask)
{
	struct gen_rank *r = b->r;
	PP_GROW(r->s, r->ns, r->caps, 256);
	int idx = r->ns++;
	struct gen_slice *s = &r->s[idx];
	memset(s, 0, sizeof(*s));
	s->name = name;
	s->thread = (uint8_t)thread;
	s->cat = (uint8_t)cat;
	s->step_mask = (uint8_t)mask;
	s->call = -1;
	s->chunk = -1;
	s->mb = -1;
	for (int p = 0; p < GP_N; p++) {
		s->seq[p] = -1;
		if (mask & (1u << p)) {
			s->seq[p] = b->seqn[p]++;
			b->step[p] = idx;
		}
	}
	push_item(r, ITEM(IT_OPEN, idx));
	return idx;
}

static void close_slice(struct bld *b, int idx)
{
	if (idx < 0)
		return;
	for (int p = 0; p < GP_N; p++)
		if (b->r->s[idx].step_mask & (1u << p))
			b->step[p] = -1;
	push_item(b->r, ITEM(IT_CLOSE, idx));
}

static void set_phase(struct bld *b, struct gen_kernel *k, int p)
{
	k->phase = (int8_t)p;
	k->seq = b->r->s[b->step[p]].seq[p];
}

/* docs/semantics.md §5 attribution, decided from the steps open at launch time. */
static void classify(struct bld *b, struct gen_kernel *k)
{
	bool fwd = k->thread == GT_MAIN && b->step[GP_FWD] >= 0;
	bool bwd = k->thread == GT_BWD && b->step[GP_BWD] >= 0;
	k->phase = -1;
	k->seq = -1;
	if (k->launch == GL_NONE) {
		k->cat = GC_OTHER;
	} else if (k->type == GY_MEM) {
		k->cat = GC_MEM;
		if (fwd)
			set_phase(b, k, GP_FWD);
		else if (bwd)
			set_phase(b, k, GP_BWD);
		else
			for (int p = GP_PP; p < GP_N; p++)
				if (b->step[p] >= 0) {
					set_phase(b, k, p);
					break;
				}
	} else if (k->type == GY_COMM && b->step[GP_DP] >= 0) {
		k->cat = GC_DP;
		set_phase(b, k, GP_DP);
	} else if (fwd) {
		k->cat = k->type == GY_COMM ? GC_FWD_COMM : GC_FWD_COMP;
		set_phase(b, k, GP_FWD);
	} else if (bwd) {
		k->cat = k->type == GY_COMM ? GC_BWD_COMM : GC_BWD_COMP;
		set_phase(b, k, GP_BWD);
		if (b->recompute)
			k->flags |= GF_RECOMPUTE;
	} else if (k->type == GY_COMM && b->step[GP_PP] >= 0) {
		k->cat = GC_PP;
		set_phase(b, k, GP_PP);
	} else if (k->type == GY_COMP && b->step[GP_OPT] >= 0) {
		k->cat = GC_OPT;
		set_phase(b, k, GP_OPT);
	} else {
		k->cat = GC_OTHER;
	}
}

static int64_t jitter(struct bld *b, int64_t base_ns)
{
	uint64_t u = gen_rand(&b->r->rng) % 2001; /* 0.9 .. 1.1 */
	return base_ns * (int64_t)(9000 + u) / 10000;
}

static struct gen_kernel *kernel(struct bld *b, int thread, const char *name, const char *op,
				 int kind, int launch, int stream, int type, int64_t dur)
{
	struct gen_rank *r = b->r;
	PP_GROW(r->k, r->nk, r->capk, 1024);
	struct gen_kernel *k = &r->k[r->nk];
	memset(k, 0, sizeof(*k));
	k->name = name;
	k->op = op;
	k->kind = (uint8_t)kind;
	k->launch = (uint8_t)launch;
	k->stream = (uint8_t)stream;
	k->type = (uint8_t)type;
	k->thread = (uint8_t)thread;
	k->pg_dim = -1;
	k->coll = -1;
	k->send_tag[0] = k->send_tag[1] = k->recv_tag[0] = k->recv_tag[1] = -1;
	k->wchunk = -1;
	if (launch != GL_GRAPH_FOLLOW)
		b->corr += 1 + (uint32_t)(gen_rand(&r->rng) % 3);
	k->corr = b->corr;
	/* The first kernel of each stream after a receive needs the received
	 * tensor. */
	if ((b->p2p_dep & (1u << stream)) && launch != GL_NONE) {
		k->depmask |= 1u << GS_PP;
		b->p2p_dep &= ~(1u << stream);
	}
	if (b->ag_dep && stream == GS_COMP && launch != GL_NONE) {
		k->depmask |= 1u << GS_DP;
		b->ag_dep = false;
	}
	if (type == GY_COMP) {
		dur = jitter(b, dur);
		dur = (int64_t)((double)dur * r->straggle);
	} else if (type == GY_MEM) {
		dur = jitter(b, dur);
	}
	k->dur = dur;
	if (++b->count % 13 == 0)
		k->flags |= GF_NO_AC2G_F;
	classify(b, k);
	push_item(r, ITEM(IT_KERNEL, r->nk));
	r->nk++;
	return k;
}

static int64_t us(int v)
{
	return (int64_t)v * 1000;
}

/* A collective on rank's group along dim: all members agree on its seq and
 * duration. */
static struct gen_kernel *collective(struct bld *b, int thread, const char *name,
				     const char *coll_name, enum gen_dim dim, int stream,
				     unsigned depmask, int base_us, int nelems)
{
	const struct gen_cfg *c = b->cfg;
	int g = gen_layout_group_of(&c->lay, b->r->rank, dim);
	int seq = b->coll_seq[dim]++;
	uint64_t h = gen_hash(c->seed, (uint64_t)c->iteration, (uint64_t)(dim * 1000003 + g),
			      (uint64_t)seq);
	int64_t dur = us(base_us) * (int64_t)(9000 + h % 2001) / 10000;
	if (dim == GEN_DP && c->dp_slow) /* the same factor on every member */
		dur = (int64_t)((double)dur * c->dp_slow[b->r->rank]);
	struct gen_kernel *k = kernel(b, thread, name, "record_param_comms", GK_KERNEL, GL_KERNEL,
				      stream, GY_COMM, dur);
	k->coll_name = coll_name;
	k->pg_dim = (int8_t)dim;
	k->pg_idx = g;
	k->coll = seq;
	k->nelems = nelems;
	k->depmask |= (uint8_t)depmask;
	return k;
}

int64_t gen_xfer_ns(const struct gen_cfg *c, int tag)
{
	return us(35) +
	       (int64_t)(gen_hash(c->seed, (uint64_t)c->iteration, (uint64_t)tag, 7) % 10000);
}

static int p2p_tag(const struct gen_cfg *c, int group, int vs, int mb, int dir)
{
	int PV = c->lay.size[GEN_PP] * c->vpp;
	return ((group * PV + vs) * c->microbatches + mb) * 2 + dir;
}

void gen_p2p_tag_decode(const struct gen_cfg *c, int tag, int *group, int *vs, int *mb, int *dir)
{
	int PV = c->lay.size[GEN_PP] * c->vpp;
	*dir = tag % 2;
	tag /= 2;
	*mb = tag % c->microbatches;
	tag /= c->microbatches;
	*vs = tag % PV;
	*group = tag / PV;
}

/* One p2p_communication call: its frame, _communicate unless the call
 * returns early, and one batched send/receive kernel when it transfers
 * anything (tags: gen_xfer_ns()). */
static void p2p(struct bld *b, const struct gen_act *a)
{
	const struct gen_cfg *c = b->cfg;
	int P = c->lay.size[GEN_PP];
	int g = gen_layout_group_of(&c->lay, b->r->rank, GEN_PP);
	int tag[GX_N], nsend = 0, nrecv = 0;
	int64_t dur = us(4);
	for (int d = 0; d < GX_N; d++) {
		tag[d] = -1;
		if (a->x[d].chunk < 0)
			continue;
		int vs = gen_sched_vstage(P, b->r->stage, a->x[d].chunk);
		int bwd = d == GX_SEND_B || d == GX_RECV_B;
		/* Tags name the producing virtual stage. */
		int from = d == GX_RECV_F ? vs - 1 : d == GX_RECV_B ? vs + 1 : vs;
		tag[d] = p2p_tag(c, g, from, a->x[d].mb, bwd);
		if (d == GX_SEND_F || d == GX_SEND_B) {
			int64_t x = gen_xfer_ns(c, tag[d]);
			dur = nsend++ ? (x > dur ? x : dur) : x;
		} else {
			nrecv++;
		}
	}
	int s = open_slice(b, GT_MAIN, N_P2P[a->fn], GSC_PYTHON, 1u << GP_PP);
	b->r->s[s].call = (int8_t)a->fn;
	int in = a->communicate ? open_slice(b, GT_MAIN, N_COMMUNICATE, GSC_PYTHON, 0) : -1;
	if (nsend + nrecv) {
		struct gen_kernel *k = kernel(b, GT_MAIN, K_SENDRECV, "record_param_comms",
					      GK_KERNEL, GL_KERNEL, GS_PP, GY_COMM, dur);
		k->coll_name = nsend + nrecv > 1 ? "batch_isend_irecv" : nsend ? "send" : "recv";
		k->pg_dim = GEN_PP;
		k->pg_idx = g;
		k->send_tag[0] = tag[GX_SEND_F];
		k->send_tag[1] = tag[GX_SEND_B];
		k->recv_tag[0] = tag[GX_RECV_F];
		k->recv_tag[1] = tag[GX_RECV_B];
		k->nelems = 4096 * 1024;
		/* A send needs the step's output: after the last compute kernel
		 * and the last TP/CP/EP collective. Megatron's batched calls end
		 * in torch.cuda.synchronize() (batch_p2p_sync). */
		k->depmask |= 1u << GS_COMP | 1u << GS_TP;
		k->flags |= GF_SYNC;
	}
	close_slice(b, in);
	close_slice(b, s);
	if (nrecv)
		b->p2p_dep = 1u << GS_COMP | 1u << GS_TP | 1u << GS_DP;
}

/* One transformer layer's forward kernels on `thread` (the main thread, or
 * the autograd thread when recomputing). */
static void layer_fwd(struct bld *b, int thread, int chunk, int mb, int layer, bool graphs)
{
	const struct gen_cfg *c = b->cfg;
	const struct gen_layout *lay = &c->lay;
	int K = c->kpl, half = K / 2;
	int lslice = open_slice(b, thread, N_LAYER_FWD, GSC_PYTHON, 0);
	bool graph = graphs && layer % 4 == 3 && half >= 3;
	unsigned wait_tp = 0;
	for (int j = 0; j < K; j++) {
		if (j == 0 && lay->size[GEN_CP] > 1)
			collective(b, thread, K_ALLGATHER, "allgather_into_tensor_coalesced",
				   GEN_CP, GS_TP, 1u << GS_COMP, 25, 1 << 20);
		if (j == half && lay->size[GEN_EP] > 1)
			collective(b, thread, K_SENDRECV, "all_to_all", GEN_EP, GS_TP,
				   1u << GS_COMP, 45, 1 << 21);
		int launch = GL_KERNEL;
		const char *op = K_COMP_OP[j % 8];
		if (graph && j >= 1 && j < half) {
			launch = j == 1 ? GL_GRAPH : GL_GRAPH_FOLLOW;
			op = NULL;
		}
		struct gen_kernel *k = kernel(b, thread, K_COMP[j % 8], op, GK_KERNEL, launch,
					      GS_COMP, GY_COMP, us(K_COMP_US[j % 8]));
		/* The first kernel after a TP all-reduce overlaps it; the next waits. */
		if (j == 1 || j == half + 1)
			k->depmask |= (uint8_t)wait_tp;
		if (j == 0 && thread == GT_MAIN && c->vpp * c->microbatches * c->layers < 1 << 30) {
			k->flags |= GF_FWDBWD_S;
			k->flow = (uint32_t)(1 +
					     ((chunk * c->microbatches + mb) * c->layers + layer));
		}
		if ((j == half - 1 || j == K - 1) && lay->size[GEN_TP] > 1) {
			collective(b, thread, K_ALLREDUCE, "allreduce", GEN_TP, GS_TP,
				   1u << GS_COMP, 40, 1 << 22);
			wait_tp = 1u << GS_TP;
		}
		if (j == K / 3 && (c->nasty & GN_ZERO_DUR))
			kernel(b, thread, K_COMP[6], "aten::add", GK_KERNEL, GL_KERNEL, GS_COMP,
			       GY_COMP, 0)
				->dur = 0;
	}
	close_slice(b, lslice);
}

static void layer_bwd(struct bld *b, int chunk, int mb, int layer, bool grad_sync)
{
	const struct gen_cfg *c = b->cfg;
	const struct gen_layout *lay = &c->lay;
	int K = c->kpl, half = K / 2;
	unsigned wait_tp = 0;
	for (int j = 0; j < K; j++) {
		const char *name = j == 0 ? K_BWD0 : K_COMP[(K - 1 - j) % 8];
		const char *op = j == 0 ? "autograd::engine::evaluate_function: MmBackward0"
					: K_COMP_OP[(K - 1 - j) % 8];
		struct gen_kernel *k = kernel(b, GT_BWD, name, op, GK_KERNEL, GL_KERNEL, GS_COMP,
					      GY_COMP, 2 * us(K_COMP_US[(K - 1 - j) % 8]));
		if (j == 1 || j == half + 1)
			k->depmask |= (uint8_t)wait_tp;
		if (j == 0 && c->vpp * c->microbatches * c->layers < 1 << 30) {
			k->flags |= GF_FWDBWD_F;
			k->flow = (uint32_t)(1 +
					     ((chunk * c->microbatches + mb) * c->layers + layer));
		}
		if ((j == half - 1 || j == K - 1) && lay->size[GEN_TP] > 1) {
			collective(b, GT_BWD, K_ALLREDUCE, "allreduce", GEN_TP, GS_TP,
				   1u << GS_COMP, 40, 1 << 22);
			wait_tp = 1u << GS_TP;
		}
	}
	if (grad_sync && lay->size[GEN_DP] > 1) {
		int s = open_slice(b, GT_BWD, N_GRAD_SYNC, GSC_PYTHON, 1u << GP_DP);
		struct gen_kernel *k =
			collective(b, GT_BWD, K_REDSCAT, "reduce_scatter_tensor_coalesced", GEN_DP,
				   GS_DP, 1u << GS_COMP, 300, 1 << 24);
		k->wop = GW_RS;
		k->wchunk = (int8_t)chunk;
		close_slice(b, s);
	}
}

/* Marks the fwd / bwd step slice (and its helper) with chunk and micro-batch. */
static void label(struct bld *b, int slice, const struct gen_act *a)
{
	if (slice < 0)
		return;
	b->r->s[slice].chunk = (int16_t)a->chunk;
	b->r->s[slice].mb = a->mb;
}

/* --param-gather forward: the forward pre-hook of a chunk's first forward
 * waits for that chunk's parameter all-gather (finish_param_sync). */
static void param_gather(struct bld *b, int chunk)
{
	int s = open_slice(b, GT_MAIN, N_PARAM_SYNC, GSC_PYTHON, 1u << GP_DP);
	struct gen_kernel *k =
		collective(b, GT_MAIN, K_ALLGATHER, "allgather_into_tensor_coalesced", GEN_DP,
			   GS_DP, 0, 250, 1 << 23);
	k->wop = GW_AG;
	k->wchunk = (int8_t)chunk;
	close_slice(b, s);
	b->ag_dep = true; /* the chunk's first kernel waits for it */
}

static void forward(struct bld *b, const struct gen_act *a)
{
	const struct gen_cfg *c = b->cfg;
	int P = c->lay.size[GEN_PP];
	int vs = gen_sched_vstage(P, b->r->stage, a->chunk);
	int helper = -1;
	if (c->vpp > 1)
		helper = open_slice(b, GT_MAIN, N_FWD_HELPER, GSC_PYTHON, 1u << GP_FWD);
	int fs = open_slice(b, GT_MAIN, N_FWD_STEP, GSC_PYTHON, helper < 0 ? 1u << GP_FWD : 0);
	label(b, helper, a);
	label(b, fs, a);
	int gs = open_slice(b, GT_MAIN, N_GPT_FWD, GSC_PYTHON, 0);
	if ((c->variant & GEN_PARAM_GATHER_FORWARD) && c->lay.size[GEN_DP] > 1 &&
	    !(b->fwd_done & (1 << a->chunk)))
		param_gather(b, a->chunk);
	b->fwd_done |= 1 << a->chunk;
	if (vs == 0)
		kernel(b, GT_MAIN, K_MEMCPY, "aten::copy_", GK_MEMCPY, GL_MEMCPY, GS_COMP, GY_MEM,
		       us(18));
	for (int l = 0; l < c->layers; l++)
		layer_fwd(b, GT_MAIN, a->chunk, a->mb, l, true);
	if (vs == P * c->vpp - 1) {
		int ls = open_slice(b, GT_MAIN, N_LOSS, GSC_PYTHON, 1u << GP_DP);
		kernel(b, GT_MAIN, K_CE, "aten::cross_entropy_loss", GK_KERNEL, GL_KERNEL, GS_COMP,
		       GY_COMP, us(25));
		if (c->lay.size[GEN_DP] > 1)
			collective(b, GT_MAIN, K_ALLREDUCE_F32, "allreduce", GEN_DP, GS_DP,
				   1u << GS_COMP, 15, 2);
		close_slice(b, ls);
	}
	close_slice(b, gs);
	close_slice(b, fs);
	close_slice(b, helper);
}

static void backward(struct bld *b, const struct gen_act *a, bool last_of_chunk)
{
	const struct gen_cfg *c = b->cfg;
	int helper = -1;
	if (c->vpp > 1)
		helper = open_slice(b, GT_MAIN, N_BWD_HELPER, GSC_PYTHON, 1u << GP_BWD);
	int bs = open_slice(b, GT_MAIN, N_BWD_STEP, GSC_PYTHON, helper < 0 ? 1u << GP_BWD : 0);
	label(b, helper, a);
	label(b, bs, a);
	gap(b, 3000);
	bool grad_sync = last_of_chunk && !(c->variant & GEN_GRAD_REDUCE_FINISH);
	for (int l = c->layers - 1; l >= 0; l--) {
		if (c->recompute) {
			int rs = open_slice(b, GT_BWD, N_RECOMPUTE, GSC_PYTHON, 0);
			b->recompute = true;
			layer_fwd(b, GT_BWD, a->chunk, a->mb, l, false);
			b->recompute = false;
			close_slice(b, rs);
		}
		layer_bwd(b, a->chunk, a->mb, l, grad_sync && l % 2 == 0);
	}
	kernel(b, GT_BWD, K_MEMSET, "aten::zero_", GK_MEMSET, GL_MEMSET, GS_COMP, GY_MEM, us(3));
	gap(b, 2000);
	close_slice(b, bs);
	close_slice(b, helper);
}

/* A DP reduce-scatter of chunk's gradients inside finish_grad_sync. */
static void finish_reduce(struct bld *b, int chunk)
{
	struct gen_kernel *k = collective(b, GT_MAIN, K_REDSCAT, "reduce_scatter_tensor_coalesced",
					  GEN_DP, GS_DP, 1u << GS_COMP, 300, 1 << 24);
	k->wop = GW_RS;
	k->wchunk = (int8_t)chunk;
}

/* finalize_model_grads: the DP gradient reduce-scatters (finish_grad_sync:
 * one, or with --grad-reduce finish one per chunk through start_grad_sync),
 * the TP all-reduce of layer-norm gradients, the all-reduce of the embedding
 * gradients between the first and the last stage. */
static void finalize(struct bld *b)
{
	const struct gen_cfg *c = b->cfg;
	const struct gen_layout *lay = &c->lay;
	int P = lay->size[GEN_PP];
	int fin = open_slice(b, GT_MAIN, N_FINALIZE, GSC_PYTHON, 1u << GP_DP);
	if (c->variant & GEN_GRAD_REDUCE_FINISH) {
		for (int ch = 0; ch < c->vpp; ch++) {
			int fs = open_slice(b, GT_MAIN, N_FINISH_SYNC, GSC_PYTHON, 0);
			int ss = open_slice(b, GT_MAIN, N_GRAD_SYNC, GSC_PYTHON, 0);
			if (lay->size[GEN_DP] > 1)
				finish_reduce(b, ch);
			close_slice(b, ss);
			close_slice(b, fs);
		}
	} else {
		int fs = open_slice(b, GT_MAIN, N_FINISH_SYNC, GSC_PYTHON, 0);
		if (lay->size[GEN_DP] > 1)
			finish_reduce(b, 0);
		close_slice(b, fs);
	}
	int ln = open_slice(b, GT_MAIN, N_LN_GRADS, GSC_PYTHON, 0);
	if (lay->size[GEN_TP] > 1)
		collective(b, GT_MAIN, K_ALLREDUCE, "allreduce", GEN_TP, GS_TP,
			   1u << GS_COMP | 1u << GS_DP, 20, 1 << 16)
			->wop = GW_LN;
	close_slice(b, ln);
	int emb = open_slice(b, GT_MAIN, N_EMB_GRADS, GSC_PYTHON, 0);
	if (P > 1 && (b->r->stage == 0 || b->r->stage == P - 1))
		collective(b, GT_MAIN, K_ALLREDUCE, "allreduce", GEN_EMB, GS_TP,
			   1u << GS_COMP | 1u << GS_DP, 60, 1 << 22)
			->wop = GW_EMB;
	close_slice(b, emb);
	close_slice(b, fin);
}

/* The optimizer step: the gradient norm (a world all-reduce: the distributed
 * optimizer's shards span every rank) and the clip, then the Adam kernels
 * and, by default, the DP all-gather of the updated parameters. */
static void optimizer(struct bld *b)
{
	const struct gen_cfg *c = b->cfg;
	const struct gen_layout *lay = &c->lay;
	int opt = open_slice(b, GT_MAIN, N_OPT_STEP, GSC_PYTHON, 1u << GP_DP | 1u << GP_OPT);
	int clip = open_slice(b, GT_MAIN, N_CLIP, GSC_PYTHON, 0);
	int norm = open_slice(b, GT_MAIN, N_GRAD_NORM, GSC_PYTHON, 0);
	struct gen_kernel *k = kernel(b, GT_MAIN, K_L2NORM, "aten::_foreach_norm", GK_KERNEL,
				      GL_KERNEL, GS_COMP, GY_COMP, us(40));
	k->depmask |= 1u << GS_DP | 1u << GS_TP;
	k->wop = GW_CLIP;
	if (lay->world > 1)
		collective(b, GT_MAIN, K_ALLREDUCE_F32, "allreduce", GEN_WORLD, GS_TP,
			   1u << GS_COMP, 12, 1)
			->wop = GW_CLIP;
	close_slice(b, norm);
	k = kernel(b, GT_MAIN, K_SCALE, "aten::_foreach_mul_", GK_KERNEL, GL_KERNEL, GS_COMP,
		   GY_COMP, us(15));
	k->depmask |= 1u << GS_TP;
	k->wop = GW_CLIP;
	close_slice(b, clip);
	int ready = open_slice(b, GT_MAIN, N_OPT_READY, GSC_PYTHON, 0);
	for (int i = 0; i < 4; i++)
		kernel(b, GT_MAIN, K_ADAM, "aten::_fused_adam_", GK_KERNEL, GL_KERNEL, GS_COMP,
		       GY_COMP, us(60))
			->wop = GW_OPT;
	kernel(b, GT_MAIN, K_MEMSET, "aten::zero_", GK_MEMSET, GL_MEMSET, GS_COMP, GY_MEM, us(3));
	if (lay->size[GEN_DP] > 1 && !(c->variant & GEN_PARAM_GATHER_FORWARD))
		collective(b, GT_MAIN, K_ALLGATHER, "allgather_into_tensor_coalesced", GEN_DP,
			   GS_DP, 1u << GS_COMP, 250, 1 << 23)
			->wop = GW_AG_OPT;
	close_slice(b, ready);
	close_slice(b, opt);
}

static int build_rank(struct bld *b)
{
	const struct gen_cfg *c = b->cfg;
	struct gen_rank *r = b->r;
	int P = c->lay.size[GEN_PP];
	struct gen_act *acts;
	int n = gen_sched_build(P, c->vpp, c->microbatches, r->stage,
				!(c->variant & GEN_WARMUP_CORE), &acts);
	if (n < 0)
		return n;
	int norphan = c->nasty & GN_ORPHANS ? 5 : 2;
	for (int i = 0; i < norphan; i++)
		kernel(b, GT_MAIN, K_ORPHAN, NULL, GK_KERNEL, GL_NONE, GS_COMP, GY_COMP, us(6));
	int ann = open_slice(b, GT_MAIN, b->cl->annotation, GSC_ANNOTATION, 0);
	int train = open_slice(b, GT_MAIN, N_TRAIN_STEP, GSC_PYTHON, 0);
	kernel(b, GT_MAIN, K_MEMSET, "aten::zero_", GK_MEMSET, GL_MEMSET, GS_COMP, GY_MEM, us(4));
	kernel(b, GT_MAIN, K_FILL, "aten::fill_", GK_KERNEL, GL_KERNEL, GS_COMP, GY_COMP, us(3));
	int sched = open_slice(b, GT_MAIN,
			       P == 1       ? N_SCHED_NOPP
			       : c->vpp > 1 ? N_SCHED_VPP
					    : N_SCHED_1F1B,
			       GSC_PYTHON, 0);
	/* The last backward of each chunk launches the overlapped grad sync. */
	int *bwd_left = xcalloc((size_t)c->vpp, sizeof(int));
	for (int i = 0; i < n; i++)
		if (acts[i].kind == GA_BWD)
			bwd_left[acts[i].chunk]++;
	for (int i = 0; i < n; i++) {
		const struct gen_act *a = &acts[i];
		gap(b, 2000 + (int)(gen_rand(&r->rng) % 3000));
		switch (a->kind) {
		case GA_FWD: forward(b, a); break;
		case GA_BWD: backward(b, a, --bwd_left[a->chunk] == 0); break;
		case GA_CALL: p2p(b, a); break;
		}
		if ((c->nasty & GN_ORPHANS) && i % 7 == 3)
			kernel(b, GT_MAIN, K_ORPHAN, NULL, GK_KERNEL, GL_NONE, GS_COMP, GY_COMP,
			       us(5));
	}
	free(bwd_left);
	free(acts);
	close_slice(b, sched);
	gap(b, 10000);
	finalize(b);
	gap(b, 20000);
	optimizer(b);
	close_slice(b, train);
	gap(b, 5000);
	close_slice(b, ann);
	return 0;
}

struct gen_cluster *gen_sim_build(const struct gen_cfg *cfg, struct strbuf *err)
{
	const struct gen_layout *lay = &cfg->lay;
	int P = lay->size[GEN_PP];
	if (cfg->vpp > 1 && P == 1) { /* Megatron runs one stage without model chunks */
		pp_err(err, PP_EINVAL, "--vpp %d needs --pp > 1 (one stage runs no model chunks)",
		       cfg->vpp);
		return NULL;
	}
	if (cfg->vpp > 1 && cfg->microbatches % P) {
		pp_err(err, PP_EINVAL, "--vpp needs --microbatches to be a multiple of --pp (%d)",
		       P);
		return NULL;
	}
	if (cfg->layers < 1 || cfg->kpl < 1 || cfg->microbatches < 1 || cfg->vpp < 1) {
		pp_err(err, PP_EINVAL,
		       "layers, kernels per layer, micro-batches and vpp must be >= 1");
		return NULL;
	}
	struct gen_cluster *c = xcalloc(1, sizeof(*c));
	c->cfg = *cfg;
	snprintf(c->annotation, sizeof(c->annotation), "ProfilerStep#%d", cfg->iteration);
	c->ranks = xcalloc((size_t)lay->world, sizeof(*c->ranks));
	c->ntags = gen_layout_ngroups(lay, GEN_PP) * P * cfg->vpp * cfg->microbatches * 2;
	c->pub = xcalloc((size_t)c->ntags, sizeof(*c->pub));
	c->rstart = xcalloc((size_t)c->ntags, sizeof(*c->rstart));
	for (int d = 0; d < GEN_NGROUPS; d++) {
		int ng = gen_layout_ngroups(lay, d);
		c->coll[d] = xcalloc((size_t)ng, sizeof(*c->coll[d]));
		c->ncoll[d] = xcalloc((size_t)ng, sizeof(*c->ncoll[d]));
	}
	for (int rank = 0; rank < lay->world; rank++) {
		struct gen_rank *r = &c->ranks[rank];
		struct bld b = { .cl = c, .cfg = &c->cfg, .r = r };
		for (int p = 0; p < GP_N; p++)
			b.step[p] = -1;
		r->rank = rank;
		r->stage = gen_layout_coord(lay, rank, GEN_PP);
		r->straggle = cfg->straggle ? cfg->straggle[rank] : 1.0;
		r->rng = gen_hash(cfg->seed, (uint64_t)rank, (uint64_t)cfg->iteration, 1);
		b.corr = (uint32_t)(gen_rand(&r->rng) % 1000) + 10;
		int rc = build_rank(&b);
		if (rc < 0) {
			pp_err(err, PP_EINVAL, "cannot build the schedule: %s", pp_strerror(rc));
			gen_sim_free(c);
			return NULL;
		}
		for (int d = 0; d < GEN_NGROUPS; d++) {
			int g = gen_layout_group_of(lay, rank, d);
			if (b.coll_seq[d] > c->ncoll[d][g])
				c->ncoll[d][g] = b.coll_seq[d];
		}
	}
	for (int d = 0; d < GEN_NGROUPS; d++)
		for (int g = 0; g < gen_layout_ngroups(lay, d); g++)
			c->coll[d][g] = xcalloc((size_t)c->ncoll[d][g] + 1, sizeof(struct coll));
	return c;
}
