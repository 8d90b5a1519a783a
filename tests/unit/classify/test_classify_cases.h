/* The cases of test_classify.c (format described there). Each names the
 * rule of docs/semantics.md it pins down. */

/* clang-format off: a table laid out by hand */
/* Megatron's two threads, the main one (tid 1) and the autograd one (tid
 * 2), and a fwdbwd flow (id 100) from the first to the second. */
#define MEGATRON_THREADS        \
	"T 1 1 MainThread\n"    \
	"T 1 2 pt_autograd_0\n" \
	"F s 1 1 100\n"         \
	"F f 1 2 100\n"

/* The annotation cases' CPU ranges (a 1F1B range holding attn(F) twice,
 * with launches 1 to 3, then dispatch(F)) and the kernels of launches 1 to
 * 5. */
#define ANN_RANGES                                  \
	"X user_annotation 1 1 100 5000 1F1B\n"     \
	"X user_annotation 1 1 200 1000 attn(F)\n"  \
	"L 1 1 300 1\n"                             \
	"L 1 1 400 2\n"                             \
	"X user_annotation 1 1 1300 1000 attn(F)\n" \
	"L 1 1 1400 3\n"                            \
	"X user_annotation 1 1 2400 1000 dispatch(F)\n"
#define ANN_KERNELS                                                                           \
	"K kernel 6000 100 1 gemm_a\n"                                                        \
	"K kernel 6050 100 2 gemm_b\n"                                                        \
	"K kernel 6200 100 3 gemm_c\n"                                                        \
	"K kernel 6250 200 4 void dpsk::ep::internode::dispatch<false, 4, false, 4>(int4*)\n" \
	"K kernel 6500 100 5 elementwise\n"

static const struct tcase cases[] = {
	{ "all_rules_megatron",
	  /* rule 0 (loss_func inside forward_step, start_grad_sync inside the
   * backward window), 1, 2 (+recompute), 3, 4, 5, memory keeps its step,
   * orphan, zero duration, flows decide the roles. */
	  MEGATRON_THREADS
	  "X python_function 1 1 1000 1000 megatron/core/pipeline_parallel/schedules.py(412): forward_step\n"
	  "L 1 1 1100 1\n"
	  "L 1 1 1200 2\n"
	  "X python_function 1 1 1300 200 pretrain_gpt.py(100): loss_func\n"
	  "L 1 1 1350 3\n"
	  "X python_function 1 1 3000 1000 megatron/core/pipeline_parallel/schedules.py(500): backward_step\n"
	  "L 1 2 3100 4\n"
	  "X python_function 1 2 3150 100 tensor_parallel/random.py(1): recompute_forward\n"
	  "L 1 2 3160 5\n"
	  "X python_function 1 2 3300 100 distributed/param_and_grad_buffer.py(1): start_grad_sync\n"
	  "L 1 2 3310 6\n"
	  "L 1 2 3400 7\n"
	  "X python_function 1 1 4500 100 p2p_communication.py(1): send_forward\n"
	  "L 1 1 4550 8\n"
	  "X python_function 1 1 4700 300 megatron/core/optimizer/optimizer.py(1): step\n"
	  "L 1 1 4750 9\n"
	  "L 1 1 4800 10\n"
	  "L 1 1 5100 11\n"
	  "K kernel 5000 100 1 sm90_gemm\n"
	  "K kernel 5050 100 2 ncclDevKernel_AllReduce_Sum\n"
	  "K kernel 5200 50 3 ncclDevKernel_AllReduce_Sum\n"
	  "K kernel 6000 100 4 sm90_gemm_bwd\n"
	  "K kernel 6100 100 5 sm90_gemm\n"
	  "K kernel 6200 100 6 ncclKernel_ReduceScatter\n"
	  "K gpu_memcpy 6300 100 7 Memcpy DtoD (Device -> Device)\n"
	  "K kernel 7000 200 8 ncclDevKernel_SendRecv\n"
	  "K kernel 7300 100 9 multi_tensor_apply_kernel\n"
	  "K kernel 7400 10 10 ncclDevKernel_AllReduce_Sum\n"
	  "K kernel 8000 100 99 orphan_kernel\n"
	  "K kernel 8200 0 11 zero_kernel\n",
	  "mode megatron\n"
	  "fwd 1 1 flows\n"
	  "bwd 1 2 flows\n"
	  "k 0 fwd_computation fwd 0\n"
	  "k 1 fwd_communication fwd 0\n"
	  "k 2 dp_communication dp 0\n"
	  "k 3 bwd_computation bwd 0\n"
	  "k 4 bwd_computation bwd 0 R\n"
	  "k 5 dp_communication dp 1\n"
	  "k 6 memory bwd 0\n"
	  "k 7 pp_communication pp 0\n"
	  "k 8 optimizer_computation opt 0\n"
	  "k 9 dp_communication dp 2\n"
	  "k 10 other - -1\n"
	  "k 11 other - -1\n"
	  "rank 5000 8200 1010 2190 2390 500 460 50 0.900990\n"
	  "step fwd 0 1000 2000 5000 5150 150 100 100 50 2\n"
	  "step bwd 0 3000 4000 6000 6200 200 200 0 0 2\n"
	  "step pp 0 4500 4600 7000 7200 200 0 200 0 1\n"
	  "step dp 0 1300 1500 5200 5250 50 0 50 0 1\n"
	  "step dp 1 3300 3400 6200 6300 100 0 100 0 1\n"
	  "step dp 2 4700 5000 7400 7410 10 0 10 0 1\n"
	  "step opt 0 4700 5000 7300 7400 100 100 0 0 1\n"
	  "nsteps 7\n"
	  "cat fwd_computation 1 100 100\n"
	  "cat fwd_communication 1 100 100\n"
	  "cat bwd_computation 2 200 200\n"
	  "cat bwd_computation_recompute 1 100 100\n"
	  "cat dp_communication 3 160 160\n"
	  "cat memory 1 100 100\n"
	  "cat pp_communication 1 200 200\n"
	  "cat optimizer_computation 1 100 100\n"
	  "cat other 2 100 100\n"
	  "count orphans 1\n"
	  "warning 1 GPU events have no launch (orphans): category other, or memory "
	  "for copies and sets\n"
	  "count launches 11\n"
	  "count gpu_events 12\n"
	  "count unmatched_flows 0\n"
	  "sets 5 1 1 1 1 3 1 1 1\n"
	  "name 6 Memcpy DtoD (Device -> Device)\n" },

	{ "root_most_and_autograd_name",
	  /* forward_step_helper swallows its forward_step; no flows: forward =
   * thread with forward_step slices, backward = pt_autograd_* thread. */
	  "T 1 2 pt_autograd_0\n"
	  "X python_function 1 1 100 900 forward_step_helper\n"
	  "X python_function 1 1 200 300 forward_step\n"
	  "L 1 1 250 1\n"
	  "X python_function 1 1 1100 400 forward_step_helper\n"
	  "L 1 1 1200 2\n"
	  "X python_function 1 1 2000 1000 backward_step\n"
	  "L 1 2 2500 3\n"
	  "L 1 1 2600 4\n"
	  "K kernel 10000 10 1 k_a\n"
	  "K kernel 10020 10 2 k_b\n"
	  "K kernel 10040 10 3 k_c\n"
	  "K kernel 10060 10 4 k_d\n",
	  "mode megatron\n"
	  "fwd 1 1 forward_step\n"
	  "bwd 1 2 pt_autograd_name\n"
	  "k 0 fwd_computation fwd 0\n"
	  "k 1 fwd_computation fwd 1\n"
	  "k 2 bwd_computation bwd 0\n"
	  "k 3 other - -1\n"
	  "nsteps 3\n"
	  "stepname fwd 0 forward_step_helper\n"
	  "step fwd 0 100 1000 10000 10010 10 10 0 0 1\n"
	  "step fwd 1 1100 1500 10020 10030 10 10 0 0 1\n"
	  "sets 0 0 2 1 0 0 0 0 0\n" },

	{ "backward_thread_by_launches",
	  /* no flows, no pt_autograd name: the other thread with most launches
   * inside backward windows; a step without kernels. */
	  "X python_function 1 1 100 100 forward_step\n"
	  "X python_function 1 1 1000 1000 backward_step\n"
	  "L 1 3 1100 1\n"
	  "L 1 3 1200 2\n"
	  "L 1 4 1300 3\n"
	  "L 1 3 3000 4\n"
	  "K kernel 5000 10 1 a\n"
	  "K kernel 5010 10 2 b\n"
	  "K kernel 5020 10 3 c\n"
	  "K kernel 5030 10 4 d\n",
	  "fwd 1 1 forward_step\n"
	  "bwd 1 3 bwd_launches\n"
	  "k 0 bwd_computation bwd 0\n"
	  "k 1 bwd_computation bwd 0\n"
	  "k 2 other - -1\n"
	  "k 3 other - -1\n"
	  "step fwd 0 100 200 - - 0 0 0 0 0\n"
	  "step bwd 0 1000 2000 5000 5020 20 20 0 0 2\n" },

	{ "backward_thread_by_launches_counts_repeated_correlations",
	  /* The launch-count rule counts launch events (docs/semantics.md §4: CPU events with a
   * correlation), also ones repeating a correlation: thread 4 launches 3
   * times under one id, thread 3 twice; the first launch of an id still
   * owns its kernel. */
	  "X python_function 1 1 100 100 forward_step\n"
	  "X python_function 1 1 1000 1000 backward_step\n"
	  "L 1 3 1100 1\n"
	  "L 1 3 1200 2\n"
	  "L 1 4 1300 7\n"
	  "L 1 4 1400 7\n"
	  "L 1 4 1500 7\n"
	  "K kernel 5000 10 7 a\n",
	  "fwd 1 1 forward_step\n"
	  "bwd 1 4 bwd_launches\n"
	  "count launches 5\n"
	  "k 0 bwd_computation bwd 0\n" },

	{ "backward_thread_is_forward_thread",
	  "X python_function 1 1 100 100 forward_step\n"
	  "L 1 1 150 1\n"
	  "X python_function 1 1 1000 1000 backward_step\n"
	  "L 1 1 1500 2\n"
	  "K kernel 5000 10 1 a\n"
	  "K kernel 5010 10 2 b\n",
	  "mode megatron\n"
	  "fwd 1 1 forward_step\n"
	  "bwd 1 1 same_thread\n"
	  "k 0 fwd_computation fwd 0\n"
	  "k 1 bwd_computation bwd 0\n" },

	{ "flow_share_decides_roles",
	  /* thread 5 has most endpoints but mostly incoming: backward; thread 7
   * (one endpoint) is third and ignored; three ids have one end. */
	  "F s 1 5 1\n"
	  "F f 1 5 2\n"
	  "F f 1 5 3\n"
	  "F f 1 5 4\n"
	  "F f 1 5 9\n"
	  "F s 1 6 2\n"
	  "F s 1 6 3\n"
	  "F s 1 6 4\n"
	  "F s 1 7 5\n"
	  "X python_function 1 6 0 100 forward_step\n"
	  "L 1 6 50 1\n"
	  "K kernel 500 10 1 a\n",
	  "mode megatron\n"
	  "fwd 1 6 flows\n"
	  "bwd 1 5 flows\n"
	  "count unmatched_flows 3\n"
	  "k 0 fwd_computation fwd 0\n" },

	{ "string_ids_and_cuda_graph",
	  /* pid/tid given as strings; one cudaGraphLaunch owns three kernels. */
	  "F s \"host\" \"main\" 1\n"
	  "F f \"host\" \"autograd\" 1\n"
	  "X python_function \"host\" \"main\" 100 1000 forward_step\n"
	  "L \"host\" \"main\" 200 20\n"
	  "K kernel 5000 10 20 graph_k1\n"
	  "K kernel 5010 10 20 graph_k2\n"
	  "K kernel 5020 10 20 graph_k3\n",
	  "fwd host main flows\n"
	  "bwd host autograd flows\n"
	  "k 0 fwd_computation fwd 0\n"
	  "k 1 fwd_computation fwd 0\n"
	  "k 2 fwd_computation fwd 0\n"
	  "step fwd 0 100 1100 5000 5030 30 30 0 0 3\n"
	  "count launches 1\n"
	  "count orphans 0\n" },

	{ "generic_mode_profiler_steps",
	  /* no forward/backward steps: types only, ProfilerStep windows, coverage
   * = non-orphan share. */
	  "X user_annotation 1 1 0 1000 ProfilerStep#5\n"
	  "L 1 1 100 1\n"
	  "L 1 1 200 2\n"
	  "X user_annotation 1 1 1000 1000 ProfilerStep#6\n"
	  "L 1 1 1500 3\n"
	  "L 1 2 2500 4\n"
	  "K kernel 3000 100 1 volta_sgemm\n"
	  "K kernel 3050 100 2 ncclKernel_AllReduce\n"
	  "K gpu_memset 3200 50 3 Memset (Device)\n"
	  "K kernel 3300 100 - orphan\n"
	  "K kernel 3500 100 4 late\n",
	  "mode generic\n"
	  "fwd -\n"
	  "bwd -\n"
	  "nsteps 0\n"
	  "k 0 computation - -1\n"
	  "k 1 communication - -1\n"
	  "k 2 memory - -1\n"
	  "k 3 computation - -1\n"
	  "k 4 computation - -1\n"
	  "cat computation 3 300 300\n"
	  "cat communication 1 100 100\n"
	  "cat memory 1 50 50\n"
	  "rank 3000 3600 400 200 200 300 100 50 0.750000\n"
	  "iter 0 5 2 150\n"
	  "iter 1 6 1 50\n"
	  /* not "category other", which generic mode does not have */
	  "warning 1 GPU events have no launch (orphans): counted by their kernel "
	  "type, outside coverage\n" },

	{ "category_names_case_insensitive",
	  /* 2021 traces: Kernel, Runtime, Memcpy, Operator. */
	  "X Operator 1 1 0 1000 forward_step\n"
	  "L 1 1 100 1 Runtime\n"
	  "L 1 1 200 2 Runtime\n"
	  "K Kernel 500 100 1 gemm\n"
	  "K Memcpy 600 100 2 Memcpy HtoD (Pageable -> Device)\n",
	  "mode megatron\n"
	  "k 0 fwd_computation fwd 0\n"
	  "k 1 memory fwd 0\n"
	  "step fwd 0 0 1000 500 600 100 100 0 0 1\n"
	  "count launches 2\n"
	  "count gpu_events 2\n" },

	{ "rule_order_fwd_before_pp",
	  /* comm inside a pp_comm slice nested in a forward step is fwd; comp in a
   * pp slice is other; a mem-named kernel keeps its pp step. */
	  "F s 1 1 1\n"
	  "F f 1 2 1\n"
	  "X python_function 1 1 0 1000 forward_step\n"
	  "X python_function 1 1 100 100 recv_forward\n"
	  "L 1 1 150 1\n"
	  "X python_function 1 1 2000 100 send_backward\n"
	  "L 1 1 2050 2\n"
	  "L 1 1 2060 3\n"
	  "L 1 1 2070 4\n"
	  "K kernel 100 10 1 ncclDevKernel_SendRecv\n"
	  "K kernel 200 10 2 some_comp_kernel\n"
	  "K kernel 300 10 3 ncclDevKernel_SendRecv\n"
	  "K kernel 400 10 4 memcpy_kernel_custom\n",
	  "k 0 fwd_communication fwd 0\n"
	  "k 1 other - -1\n"
	  "k 2 pp_communication pp 1\n"
	  "k 3 memory pp 1\n"
	  "step pp 0 100 200 - - 0 0 0 0 0\n"
	  "step pp 1 2000 2100 300 310 10 0 10 0 1\n"
	  "step fwd 0 0 1000 100 110 10 0 10 0 1\n" },

	{ "process_groups",
	  /* pg args on the kernel itself, or on its record_param_comms parent. */
	  "F s 1 1 1\n"
	  "F f 1 2 1\n"
	  "X python_function 1 1 0 1000 forward_step\n"
	  "P TENSOR_MODEL_PARALLEL_GROUP [0,1]\n"
	  "X cpu_op 1 1 100 100 record_param_comms\n"
	  "L 1 1 150 1\n"
	  "L 1 1 300 2\n"
	  "K kernel 100 10 1 ncclDevKernel_AllReduce\n"
	  "P DATA_PARALLEL_GROUP [0,8,16,24]\n"
	  "K kernel 200 10 2 ncclDevKernel_ReduceScatter\n"
	  "P TENSOR_AND_DATA_PARALLEL_GROUP [0,1,8,9]\n"
	  "K kernel 300 10 - ncclDevKernel_AllGather\n"
	  "P EXPERT_DATA_PARALLEL_GROUP [0,2]\n"
	  "K kernel 400 10 - ncclDevKernel_AllGather\n"
	  "P default_pg [0,1,2,3]\n"
	  "K kernel 500 10 - ncclDevKernel_AllGather\n"
	  "P CONTEXT_PARALLEL_GROUP [0,4]\n"
	  "K kernel 600 10 - ncclDevKernel_AllGather\n"
	  "P PIPELINE_MODEL_PARALLEL_GROUP [0,16]\n"
	  "K kernel 700 10 - ncclDevKernel_SendRecv\n",
	  "k 0 fwd_communication fwd 0\n"
	  "k 1 fwd_communication fwd 0\n"
	  "pg 0 tp [0,1]\n"
	  "pg 1 dp [0,8,16,24]\n"
	  "pg 2 unknown [0,1,8,9]\n"
	  "pg 3 ep [0,2]\n"
	  "pg 4 unknown [0,1,2,3]\n"
	  "pg 5 cp [0,4]\n"
	  "pg 6 pp [0,16]\n" },

	{ "base_time_and_zero_duration",
	  "B 1000000\n"
	  "X python_function 1 1 0 100 forward_step\n"
	  "L 1 1 10 1\n"
	  "L 1 1 20 2\n"
	  "K kernel 500 0 1 zero\n"
	  "K kernel 600 10 2 ten\n",
	  "rank 1000500 1000610 10 100 100 10 0 0 1.000000\n"
	  "step fwd 0 1000000 1000100 1000500 1000610 110 10 0 0 2\n"
	  "cat fwd_computation 2 10 10\n" },

	{ "recompute_subset_rows",
	  "F s 1 1 1\n"
	  "F f 1 2 1\n"
	  "X python_function 1 1 0 1000 backward_step\n"
	  "X python_function 1 2 100 200 checkpoint.py(1):_custom_forward\n"
	  "L 1 2 150 1\n"
	  "L 1 2 160 2\n"
	  "L 1 2 400 3\n"
	  "K kernel 100 10 1 gemm\n"
	  "K kernel 105 10 2 ncclDevKernel_AllGather\n"
	  "K kernel 200 10 3 gemm\n",
	  "mode megatron\n"
	  "k 0 bwd_computation bwd 0 R\n"
	  "k 1 bwd_communication bwd 0 R\n"
	  "k 2 bwd_computation bwd 0\n"
	  "cat bwd_computation 2 20 20\n"
	  "cat bwd_communication 1 10 10\n"
	  "cat bwd_computation_recompute 1 10 10\n"
	  "cat bwd_communication_recompute 1 10 10\n"
	  "step bwd 0 0 1000 100 210 110 20 10 5 3\n" },

	{ "kernels_out_of_time_order",
	  /* the metrics sort by start (radix path) when the file is not in order */
	  "X python_function 1 1 0 100 forward_step\n"
	  "L 1 1 10 1\n"
	  "L 1 1 20 2\n"
	  "L 1 1 30 3\n"
	  "K kernel 900000 10 3 late\n"
	  "K kernel 600 100 2 mid\n"
	  "K kernel 500 150 1 early\n",
	  "rank 500 900010 210 899300 899300 210 0 0 1.000000\n"
	  "step fwd 0 0 100 500 900010 899510 210 0 0 3\n"
	  "cat fwd_computation 3 260 210\n" },

	{ "steps_not_on_forward_thread_is_generic",
	  /* flows name thread 1 forward, but the forward_step slices are on
   * thread 3: no fwd/bwd steps on the forward thread, generic mode. */
	  "F s 1 1 1\n"
	  "F f 1 2 1\n"
	  "X python_function 1 3 0 100 forward_step\n"
	  "L 1 3 10 1\n"
	  "K kernel 500 10 1 gemm\n",
	  "mode generic\n"
	  "fwd 1 1 flows\n"
	  "nsteps 0\n"
	  "k 0 computation - -1\n"
	  "warning 1 forward/backward step slices, none on the forward thread (rule flows): generic mode (types only)\n" },

	{ "whatif_ops_megatron",
	  /* docs/contracts.md §4.1: the collective from the kernel's
	   * Collective name arg (ncclDevKernel_Generic names none), the
	   * computes' spans (the forward's TP
	   * all-reduce in it), a combined p2p call's two rows, a call without
	   * a kernel none, an overlapped reduce-scatter labelled by its
	   * backward step, finalize_model_grads' TP and EMBEDDING all-reduces,
	   * the clip frame's norm and all-reduce, the optimizer with its DP
	   * all-gather, and the placeholders gc, separate all-reduce (at the
	   * end of finalize's rows) and params-all-gather (at the origin). */
	  MEGATRON_THREADS
	  "X python_function 1 1 1000 1000 megatron/core/pipeline_parallel/schedules.py(290): forward_step\n"
	  "L 1 1 1100 1\n"
	  "P TENSOR_MODEL_PARALLEL_GROUP [0, 1]\n"
	  "L 1 1 1200 2\n"
	  "X python_function 1 1 2100 300 p2p_communication.py(600): send_forward_recv_backward\n"
	  "L 1 1 2150 3\n"
	  "X python_function 1 1 2500 50 p2p_communication.py(518): recv_forward\n"
	  "X python_function 1 1 3000 1000 megatron/core/pipeline_parallel/schedules.py(395): backward_step\n"
	  "L 1 2 3100 4\n"
	  "X python_function 1 2 3300 100 distributed/param_and_grad_buffer.py(401): start_grad_sync\n"
	  "P DATA_PARALLEL_GROUP [0, 2]\n"
	  "L 1 2 3310 5\n"
	  "X python_function 1 1 4100 400 megatron/core/distributed/finalize_model_grads.py(256): finalize_model_grads\n"
	  "P TENSOR_MODEL_PARALLEL_GROUP [0, 1]\n"
	  "L 1 1 4150 6\n"
	  "P EMBEDDING_GROUP [0, 6]\n"
	  "L 1 1 4200 7\n"
	  "X python_function 1 1 4600 400 megatron/core/optimizer/optimizer.py(470): step\n"
	  "X python_function 1 1 4610 50 megatron/core/optimizer/clip_grads.py(138): clip_grad_norm_fp32\n"
	  "L 1 1 4620 8\n"
	  "P default_pg [0, 1, 2, 3]\n"
	  "L 1 1 4630 9\n"
	  "L 1 1 4700 10\n"
	  "P DATA_PARALLEL_GROUP [0, 2]\n"
	  "L 1 1 4800 11\n"
	  "K kernel 5000 100 1 sm90_gemm\n"
	  "C allreduce\n"
	  "K kernel 5100 50 2 ncclDevKernel_AllReduce_Sum\n"
	  "K kernel 5200 300 3 ncclDevKernel_SendRecv\n"
	  "K kernel 6000 200 4 sm90_gemm_bwd\n"
	  "C reduce_scatter\n"
	  "K kernel 6300 100 5 ncclDevKernel_Generic\n"
	  "K kernel 6500 20 6 ncclDevKernel_AllReduce_Sum\n"
	  "K kernel 6530 30 7 ncclDevKernel_AllReduce_Sum\n"
	  "K kernel 6600 10 8 l2norm_kernel\n"
	  "K kernel 6610 40 9 ncclDevKernel_AllReduce_Sum\n"
	  "K kernel 6700 100 10 multi_tensor_apply_kernel\n"
	  "C _allgather_base\n"
	  "K kernel 6800 50 11 ncclDevKernel_Generic\n",
	  "mode megatron\n"
	  "op forward-compute 0 5000 5150 -1 -1 0\n"
	  "op backward-compute 0 6000 6200 -1 -1 0\n"
	  "op forward-send 0 5200 5500 -1 -1 -1\n"
	  "op backward-recv 0 5200 5500 -1 -1 -1\n"
	  "op params-all-gather 0 5000 5000 0 -1 -1\n"
	  "op grads-reduce-scatter 0 6300 6400 -1 -1 0\n"
	  "op separate-grads-all-reduce 0 6560 6560 -1 -1 -1\n"
	  "op layernorm-grads-all-reduce 0 6500 6520 -1 -1 -1\n"
	  "op embedding-grads-all-reduce 0 6530 6560 -1 -1 -1\n"
	  "op optimizer-clip-main-grad 0 6600 6650 -1 -1 -1\n"
	  "op optimizer 0 6700 6850 -1 -1 -1\n"
	  "op gc 0 6200 6200 -1 -1 -1\n"
	  "nops 12\n" },

	{ "whatif_ops_without_descriptions",
	  /* docs/contracts.md §4.1 without Process Group Descriptions nor
	   * Collective names: the collective from the kernel's name; a
	   * reduce-scatter in a dp_comm frame and plain DDP's all-reduce in
	   * finish_grad_sync are the DP group's (mc: the finish_grad_sync
	   * frame's index); in finalize_model_grads an all-reduce over the
	   * pipeline's ends (the p2p kernel's ranks) is the embedding group's,
	   * another the tensor-parallel one's; a forward step's all-reduce
	   * is no op. */
	  MEGATRON_THREADS
	  "X python_function 1 1 1000 1000 schedules.py(290): forward_step\n"
	  "L 1 1 1100 1\n"
	  "P - [0, 1]\n"
	  "L 1 1 1200 2\n"
	  "X python_function 1 1 2100 300 p2p_communication.py(560): send_forward\n"
	  "P - [0, 2, 4, 6]\n"
	  "L 1 1 2150 3\n"
	  "X python_function 1 1 3000 1000 schedules.py(395): backward_step\n"
	  "L 1 2 3100 4\n"
	  "X python_function 1 2 3300 100 param_and_grad_buffer.py(401): start_grad_sync\n"
	  "P - [0, 8]\n"
	  "L 1 2 3310 5\n"
	  "X python_function 1 1 4100 400 finalize_model_grads.py(256): finalize_model_grads\n"
	  "X python_function 1 1 4110 50 distributed_data_parallel.py(452): finish_grad_sync\n"
	  "P - [0, 8]\n"
	  "L 1 1 4120 6\n"
	  "P - [0, 1]\n"
	  "L 1 1 4200 7\n"
	  "P - [6, 0]\n"
	  "L 1 1 4250 8\n"
	  "X python_function 1 1 4600 400 optimizer.py(470): step\n"
	  "L 1 1 4700 9\n"
	  "K kernel 5000 100 1 sm90_gemm\n"
	  "K kernel 5100 50 2 ncclKernel_AllReduce_RING_LL_Sum_float\n"
	  "K kernel 5200 300 3 ncclKernel_SendRecv\n"
	  "K kernel 6000 200 4 sm90_gemm_bwd\n"
	  "K kernel 6300 100 5 ncclKernel_ReduceScatter_RING_LL_Sum_float\n"
	  "K kernel 6400 50 6 ncclKernel_AllReduce_RING_LL_Sum_float\n"
	  "K kernel 6500 20 7 ncclKernel_AllReduce_RING_LL_Sum_float\n"
	  "K kernel 6530 30 8 ncclKernel_AllReduce_RING_LL_Sum_float\n"
	  "K kernel 6700 100 9 multi_tensor_apply_kernel\n",
	  "mode megatron\n"
	  "op forward-compute 0 5000 5150 -1 -1 0\n"
	  "op backward-compute 0 6000 6200 -1 -1 0\n"
	  "op forward-send 0 5200 5500 -1 -1 -1\n"
	  "op params-all-gather 0 5000 5000 0 -1 -1\n"
	  "op grads-reduce-scatter 0 6300 6400 -1 -1 0\n"
	  "op grads-reduce-scatter 1 6400 6450 0 -1 -1\n"
	  "op separate-grads-all-reduce 0 6560 6560 -1 -1 -1\n"
	  "op layernorm-grads-all-reduce 0 6500 6520 -1 -1 -1\n"
	  "op embedding-grads-all-reduce 0 6530 6560 -1 -1 -1\n"
	  "op optimizer 0 6700 6800 -1 -1 -1\n"
	  "op gc 0 6200 6200 -1 -1 -1\n"
	  "nops 11\n" },

	{ "whatif_ops_one_stage",
	  /* No pipeline call launched anything: a one-stage pipeline, first
	   * and last stage at once (the embedding placeholder after the
	   * layernorm one, both at the last compute's end); no DP, so no
	   * all-gather placeholder and no separate all-reduce. */
	  MEGATRON_THREADS "X python_function 1 1 1000 1000 schedules.py(290): forward_step\n"
			   "L 1 1 1100 1\n"
			   "X python_function 1 1 2100 30 p2p_communication.py(518): recv_forward\n"
			   "X python_function 1 1 3000 1000 schedules.py(395): backward_step\n"
			   "L 1 2 3100 2\n"
			   "K kernel 5000 100 1 sm90_gemm\n"
			   "K kernel 6000 200 2 sm90_gemm_bwd\n",
	  "mode megatron\n"
	  "op forward-compute 0 5000 5100 -1 -1 0\n"
	  "op backward-compute 0 6000 6200 -1 -1 0\n"
	  "op layernorm-grads-all-reduce 0 6200 6200 -1 -1 -1\n"
	  "op embedding-grads-all-reduce 0 6200 6200 -1 -1 -1\n"
	  "op gc 0 6200 6200 -1 -1 -1\n"
	  "nops 5\n" },

	{ "no_gpu_events", "X python_function 1 1 0 100 forward_step\n",
	  "mode megatron\n"
	  "nsteps 1\n"
	  "step fwd 0 0 100 - - 0 0 0 0 0\n" },

	{ "names_sharing_ends_and_length",
	  /* Six names with the same length and first and last 8 bytes (one
	   * key of the name cache, more ways than a set holds), interleaved:
	   * each kernel keeps its own name. */
	  "K kernel 1000 10 - sm90_xmma_gemm_tn_n_128x128_cublas\n"
	  "K kernel 1100 10 - sm90_xmma_gemm_nt_n_128x128_cublas\n"
	  "K kernel 1200 10 - sm90_xmma_gemm_nn_n_256x128_cublas\n"
	  "K kernel 1300 10 - sm90_xmma_gemm_tn_n_128x256_cublas\n"
	  "K kernel 1400 10 - sm90_xmma_gemm_nt_n_256x128_cublas\n"
	  "K kernel 1500 10 - sm90_xmma_gemm_tt_n_128x128_cublas\n"
	  "K kernel 1600 10 - sm90_xmma_gemm_tn_n_128x128_cublas\n"
	  "K kernel 1700 10 - sm90_xmma_gemm_tt_n_128x128_cublas\n"
	  "K kernel 1800 10 - sm90_xmma_gemm_nt_n_128x128_cublas\n"
	  "K kernel 1900 10 - sm90_xmma_gemm_nt_n_256x128_cublas\n"
	  "K kernel 2000 10 - sm90_xmma_gemm_nn_n_256x128_cublas\n"
	  "K kernel 2100 10 - sm90_xmma_gemm_tn_n_128x256_cublas\n"
	  "K kernel 2200 10 - sm90_xmma_gemm_tn_n_128x128_cublas\n"
	  "K kernel 2300 10 - sm90_xmma_gemm_tn_n_128x128_cublas\n",
	  "name 0 sm90_xmma_gemm_tn_n_128x128_cublas\n"
	  "name 1 sm90_xmma_gemm_nt_n_128x128_cublas\n"
	  "name 2 sm90_xmma_gemm_nn_n_256x128_cublas\n"
	  "name 3 sm90_xmma_gemm_tn_n_128x256_cublas\n"
	  "name 4 sm90_xmma_gemm_nt_n_256x128_cublas\n"
	  "name 5 sm90_xmma_gemm_tt_n_128x128_cublas\n"
	  "name 6 sm90_xmma_gemm_tn_n_128x128_cublas\n"
	  "name 7 sm90_xmma_gemm_tt_n_128x128_cublas\n"
	  "name 8 sm90_xmma_gemm_nt_n_128x128_cublas\n"
	  "name 9 sm90_xmma_gemm_nt_n_256x128_cublas\n"
	  "name 10 sm90_xmma_gemm_nn_n_256x128_cublas\n"
	  "name 11 sm90_xmma_gemm_tn_n_128x256_cublas\n"
	  "name 12 sm90_xmma_gemm_tn_n_128x128_cublas\n"
	  "name 13 sm90_xmma_gemm_tn_n_128x128_cublas\n" },
	{ "collective_cpu_side_then_name",
	  /* A comm kernel's collective: its own arg, else the innermost CPU
	   * range that names one (nccl:<op>, record_param_comms' Collective
	   * name), else a [collectives] glob, else the words of its name; a
	   * SendRecv under an all-to-all is an all-to-all. */
	  "X user_annotation 1 1 1000 1000 nccl:all_to_all\n"
	  "L 1 1 1100 1\n"
	  "C allreduce\n"
	  "X cpu_op 1 1 2000 500 record_param_comms\n"
	  "L 1 1 2100 2\n"
	  "X user_annotation 1 1 2900 500 nccl:coalesced\n"
	  "L 1 1 3000 3\n"
	  "L 1 1 4000 4\n"
	  "K kernel 5000 100 1 ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)\n"
	  "K kernel 5200 100 2 ncclDevKernel_Generic\n"
	  "K kernel 5400 100 3 ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)\n"
	  "K kernel 5600 100 4 void dpsk::ep::internode::dispatch<false, 8, true, 8>(int4*, float*)\n"
	  "C batch_isend_irecv\n"
	  "K kernel 5800 100 - ncclDevKernel_AllReduce_Sum_bf16\n"
	  "K kernel 6000 100 - void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*)\n"
	  "K kernel 6200 100 - void dpsk::ep::internode::cached_notify<false>(int, int)\n"
	  "K kernel 6400 100 - void (anonymous namespace)::two_shot_all_reduce_kernel_inplace<c10::BFloat16, 16, 2>(c10::BFloat16**)\n"
	  "K kernel 6600 100 - multimem_all_gather_kernel\n"
	  "K kernel 6800 100 - ncclDevKernel_Broadcast_RING_LL\n"
	  "K kernel 7000 100 - sm90_gemm\n"
	  "K kernel 7200 100 - void dpsk::ep::cuda::get_dispatch_layout<256, 32, 8>(long const*)\n",
	  "mode generic\n"
	  "coll 0 all_to_all\n"
	  "coll 1 all_reduce\n"
	  "coll 2 send_recv\n"
	  "coll 3 all_to_all\n"
	  "coll 4 send_recv\n"
	  "coll 5 all_reduce\n"
	  "coll 6 all_to_all\n"
	  "coll 7 all_reduce\n"
	  "coll 8 all_gather\n"
	  "coll 9 broadcast\n"
	  "coll 10 -\n"
	  "coll 11 -\n"
	  "cat communication 10 1000 1000\n"
	  "cat computation 2 200 200\n"
	  "nann 0\n" },
	{ "collective_not_p2p_inside_pp_comm",
	  /* Rule 3 takes a pipeline call's sends and receives, never an
	   * all-to-all the CPU side names, whatever its kernel's name. */
	  "X python_function 1 1 1000 1000 schedules.py(1): forward_step\n"
	  "L 1 1 1100 1\n"
	  "X python_function 1 1 4500 100 p2p_communication.py(1): send_forward\n"
	  "C all_to_all\n"
	  "X cpu_op 1 1 4510 50 record_param_comms\n"
	  "L 1 1 4520 2\n"
	  "L 1 1 4570 3\n"
	  "K kernel 5000 100 1 sm90_gemm\n"
	  "K kernel 7000 100 2 ncclKernel_SendRecv_RING_SIMPLE\n"
	  "K kernel 7200 100 3 ncclKernel_SendRecv_RING_SIMPLE\n",
	  "mode megatron\n"
	  "k 0 fwd_computation fwd 0\n"
	  "k 1 other - -1\n"
	  "k 2 pp_communication pp 0\n"
	  "coll 1 all_to_all\n"
	  "coll 2 send_recv\n" },
	{ "annotations_innermost_cpu_range",
	  /* GPU time per user annotation: the innermost user_annotation range
	   * holding the launch (ProfilerStep#N and nccl:<op> are not
	   * annotations); calls = ranges that hold one of its kernels; unions
	   * by type. */
	  "X user_annotation 1 1 0 10000 ProfilerStep#3\n" ANN_RANGES
	  "X user_annotation 1 1 2450 100 nccl:all_to_all\n"
	  "L 1 1 2500 4\n"
	  "X user_annotation 1 1 3500 500 mlp(F)\n"
	  "L 1 1 4200 5\n"
	  "L 2 2 4300 6\n" ANN_KERNELS "K kernel 6700 100 6 elementwise\n"
	  "K gpu_memcpy 6900 100 - Memcpy HtoD (Pageable -> Device)\n",
	  "mode generic\n"
	  "nann 3\n"
	  "ann attn(F) 2 3 250 250 0 0\n"
	  "ann dispatch(F) 1 1 200 0 200 0\n"
	  "ann 1F1B 1 1 100 100 0 0\n"
	  "iter 0 3 6 600\n" },
	{ "annotations_gpu_ranges",
	  /* gpu_user_annotation ranges add the kernels of their stream that
	   * start inside them, once per name; a call is a CPU or a GPU range,
	   * whichever are more. */
	  ANN_RANGES "L 1 1 2500 4\n"
		     "L 1 1 4200 5\n"
		     "G 5990 510 1F1B\n"
		     "G 6000 150 attn(F)\n"
		     "G 6500 100 mlp(B)\n" ANN_KERNELS "K kernel 6600 100 - orphan_in_no_range\n",
	  "mode generic\n"
	  "nann 4\n"
	  "ann 1F1B 1 5 500 350 200 50\n"
	  "ann attn(F) 2 3 250 250 0 0\n"
	  "ann dispatch(F) 1 1 200 0 200 0\n"
	  "ann mlp(B) 1 1 100 100 0 0\n" },
};
