/* opara__cpu_prepare (validation + dispatch to each operator's prepare) and the constant weights'
   packing: the top of the CPU kernel files. The kernels by kind: element-wise in
   opara_cpu_elementwise.c, data movement in opara_cpu_movement.c, normalization in opara_cpu_norm.c,
   reductions and Softmax in opara_cpu_reduce.c, TopK in opara_cpu_sort.c, GridSample in opara_cpu_sample.c, Conv and pools in opara_cpu_conv.c (Winograd in
   opara_cpu_winograd.c), GEMM in opara_cpu_gemm.c, Det in opara_cpu_linalg.c, vector math in opara_cpu_math.c, the helpers
   they all share in opara_cpu_base.c. */
#include "opara_cpu.h"

/* ---- dispatch --------------------------------------------------------------------------------- */

static opara_result opara__prepare_dispatch(opara__cpu_op* op, char* err, size_t cap) {
    switch (op->node->op) {
    case OPARA__OP_CONV: return opara__cpu_prepare_conv(op, err, cap);
    case OPARA__OP_CONV_TRANSPOSE: return opara__cpu_prepare_conv_transpose(op, err, cap);
    case OPARA__OP_QUANTIZE_LINEAR: return opara__cpu_prepare_quantize(op, err, cap);
    case OPARA__OP_DEQUANTIZE_LINEAR: return opara__cpu_prepare_dequantize(op, err, cap);
    case OPARA__OP_DYNAMIC_QUANTIZE_LINEAR: return opara__cpu_prepare_dynamic_quantize(op, err, cap);
    case OPARA__OP_CONV_INTEGER: case OPARA__OP_QLINEAR_CONV: return opara__cpu_prepare_quant_conv(op, err, cap);
    case OPARA__OP_MATMUL_INTEGER: case OPARA__OP_QLINEAR_MATMUL: return opara__cpu_prepare_quant_matmul(op, err, cap);
    case OPARA__OP_MAX_POOL: case OPARA__OP_AVERAGE_POOL: return opara__cpu_prepare_pool(op, err, cap);
    case OPARA__OP_GLOBAL_AVERAGE_POOL: return opara__cpu_prepare_global_avg(op, err, cap);
    case OPARA__OP_BATCH_NORM: return opara__cpu_prepare_batch_norm(op, err, cap);
    case OPARA__OP_PRELU: return opara__cpu_prepare_binary(op, OPARA__BIN_PRELU, err, cap);
    case OPARA__OP_INSTANCE_NORM: return opara__cpu_prepare_instance_norm(op, err, cap);
    case OPARA__OP_LRN: return opara__cpu_prepare_lrn(op, err, cap);
    case OPARA__OP_MVN: return opara__cpu_prepare_mvn(op, err, cap);
    case OPARA__OP_SHRINK: return opara__cpu_prepare_unary(op, OPARA__UN_SHRINK, err, cap);
    case OPARA__OP_GLOBAL_MAX_POOL: return opara__cpu_prepare_global_avg(op, err, cap);
    case OPARA__OP_MAX_UNPOOL: return opara__cpu_prepare_max_unpool(op, err, cap);
    case OPARA__OP_DROPOUT: return opara__cpu_prepare_dropout(op, err, cap);
    case OPARA__OP_EINSUM: return opara__cpu_prepare_einsum(op, err, cap);
    case OPARA__OP_RELU: return opara__cpu_prepare_unary(op, OPARA__UN_RELU, err, cap);
    case OPARA__OP_LEAKY_RELU: return opara__cpu_prepare_unary(op, OPARA__UN_LEAKY_RELU, err, cap);
    case OPARA__OP_SIGMOID: return opara__cpu_prepare_unary(op, OPARA__UN_SIGMOID, err, cap);
    case OPARA__OP_TANH: return opara__cpu_prepare_unary(op, OPARA__UN_TANH, err, cap);
    case OPARA__OP_HARD_SIGMOID: return opara__cpu_prepare_unary(op, OPARA__UN_HARD_SIGMOID, err, cap);
    case OPARA__OP_HARD_SWISH: return opara__cpu_prepare_unary(op, OPARA__UN_HARD_SWISH, err, cap);
    case OPARA__OP_CLIP: return opara__cpu_prepare_unary(op, OPARA__UN_CLIP, err, cap);
    case OPARA__OP_SQRT: return opara__cpu_prepare_unary(op, OPARA__UN_SQRT, err, cap);
    case OPARA__OP_ERF: return opara__cpu_prepare_unary(op, OPARA__UN_ERF, err, cap);
    case OPARA__OP_GELU: return opara__cpu_prepare_unary(op, OPARA__UN_GELU, err, cap);
    case OPARA__OP_NEG: return opara__cpu_prepare_signed(op, OPARA__UN_NEG, err, cap);
    case OPARA__OP_ABS: return opara__cpu_prepare_signed(op, OPARA__UN_ABS, err, cap);
    case OPARA__OP_EXP: return opara__cpu_prepare_unary(op, OPARA__UN_EXP, err, cap);
    case OPARA__OP_LOG: return opara__cpu_prepare_unary(op, OPARA__UN_LOG, err, cap);
    case OPARA__OP_RECIPROCAL: return opara__cpu_prepare_unary(op, OPARA__UN_RECIPROCAL, err, cap);
    case OPARA__OP_FLOOR: return opara__cpu_prepare_unary(op, OPARA__UN_FLOOR, err, cap);
    case OPARA__OP_CEIL: return opara__cpu_prepare_unary(op, OPARA__UN_CEIL, err, cap);
    case OPARA__OP_ROUND: return opara__cpu_prepare_unary(op, OPARA__UN_ROUND, err, cap);
    case OPARA__OP_SIGN: return opara__cpu_prepare_signed(op, OPARA__UN_SIGN, err, cap);
    case OPARA__OP_SIN: return opara__cpu_prepare_unary(op, OPARA__UN_SIN, err, cap);
    case OPARA__OP_COS: return opara__cpu_prepare_unary(op, OPARA__UN_COS, err, cap);
    case OPARA__OP_TAN: return opara__cpu_prepare_unary(op, OPARA__UN_TAN, err, cap);
    case OPARA__OP_SOFTPLUS: return opara__cpu_prepare_unary(op, OPARA__UN_SOFTPLUS, err, cap);
    case OPARA__OP_SOFTSIGN: return opara__cpu_prepare_unary(op, OPARA__UN_SOFTSIGN, err, cap);
    case OPARA__OP_ELU: return opara__cpu_prepare_unary(op, OPARA__UN_ELU, err, cap);
    case OPARA__OP_SELU: return opara__cpu_prepare_unary(op, OPARA__UN_SELU, err, cap);
    case OPARA__OP_CELU: return opara__cpu_prepare_unary(op, OPARA__UN_CELU, err, cap);
    case OPARA__OP_THRESHOLDED_RELU: return opara__cpu_prepare_unary(op, OPARA__UN_THRESHOLDED_RELU, err, cap);
    case OPARA__OP_ASIN: return opara__cpu_prepare_unary(op, OPARA__UN_ASIN, err, cap);
    case OPARA__OP_ACOS: return opara__cpu_prepare_unary(op, OPARA__UN_ACOS, err, cap);
    case OPARA__OP_ATAN: return opara__cpu_prepare_unary(op, OPARA__UN_ATAN, err, cap);
    case OPARA__OP_SINH: return opara__cpu_prepare_unary(op, OPARA__UN_SINH, err, cap);
    case OPARA__OP_COSH: return opara__cpu_prepare_unary(op, OPARA__UN_COSH, err, cap);
    case OPARA__OP_ASINH: return opara__cpu_prepare_unary(op, OPARA__UN_ASINH, err, cap);
    case OPARA__OP_ACOSH: return opara__cpu_prepare_unary(op, OPARA__UN_ACOSH, err, cap);
    case OPARA__OP_ATANH: return opara__cpu_prepare_unary(op, OPARA__UN_ATANH, err, cap);
    case OPARA__OP_ADD: return opara__cpu_prepare_binary(op, OPARA__BIN_ADD, err, cap);
    case OPARA__OP_SUB: return opara__cpu_prepare_binary(op, OPARA__BIN_SUB, err, cap);
    case OPARA__OP_MUL: return opara__cpu_prepare_binary(op, OPARA__BIN_MUL, err, cap);
    case OPARA__OP_DIV: return opara__cpu_prepare_binary(op, OPARA__BIN_DIV, err, cap);
    case OPARA__OP_POW: return opara__cpu_prepare_binary(op, OPARA__BIN_POW, err, cap);
    OPARA__CASE_COMPARE: OPARA__CASE_LOGIC_BINARY: OPARA__CASE_INT_BINARY: return opara__cpu_prepare_logic_binary(op, err, cap);
    OPARA__CASE_LOGIC_UNARY: return opara__cpu_prepare_logic_unary(op, err, cap);
    OPARA__CASE_VARIADIC: return opara__cpu_prepare_variadic(op, err, cap);
    case OPARA__OP_CONCAT: case OPARA__OP_SPLIT: return opara__cpu_prepare_concat_split(op, err, cap);
    case OPARA__OP_SLICE: return opara__cpu_prepare_slice(op, err, cap);
    case OPARA__OP_GATHER: return opara__cpu_prepare_gather(op, err, cap);
    case OPARA__OP_GATHER_ELEMENTS: case OPARA__OP_SCATTER_ELEMENTS: case OPARA__OP_SCATTER:
        return opara__cpu_prepare_elements(op, err, cap);
    case OPARA__OP_GATHER_ND: case OPARA__OP_SCATTER_ND: return opara__cpu_prepare_nd(op, err, cap);
    case OPARA__OP_SIZE: return opara__cpu_prepare_size(op, err, cap);
    case OPARA__OP_TRILU: case OPARA__OP_EYE_LIKE: return opara__cpu_prepare_trilu_eye(op, err, cap);
    case OPARA__OP_TILE: return opara__cpu_prepare_tile(op, err, cap);
    case OPARA__OP_DEPTH_TO_SPACE: case OPARA__OP_SPACE_TO_DEPTH: return opara__cpu_prepare_depth_space(op, err, cap);
    case OPARA__OP_ONE_HOT: return opara__cpu_prepare_one_hot(op, err, cap);
    case OPARA__OP_REVERSE_SEQUENCE: return opara__cpu_prepare_reverse_sequence(op, err, cap);
    case OPARA__OP_RESHAPE: case OPARA__OP_FLATTEN: case OPARA__OP_SQUEEZE: case OPARA__OP_UNSQUEEZE:
        return opara__cpu_prepare_reshape(op, err, cap);
    case OPARA__OP_TRANSPOSE: return opara__cpu_prepare_transpose(op, err, cap);
    case OPARA__OP_EXPAND: return opara__cpu_prepare_expand(op, err, cap);
    case OPARA__OP_GEMM: return opara__cpu_prepare_gemm(op, err, cap);
    case OPARA__OP_LSTM: case OPARA__OP_GRU: case OPARA__OP_RNN: return opara__cpu_prepare_rnn(op, err, cap);
    case OPARA__OP_MATMUL: return opara__cpu_prepare_matmul(op, err, cap);
    case OPARA__OP_SOFTMAX: return opara__cpu_prepare_softmax(op, err, cap);
    case OPARA__OP_TOPK: return opara__cpu_prepare_topk(op, err, cap);
    case OPARA__OP_GRID_SAMPLE: return opara__cpu_prepare_grid_sample(op, err, cap);
    case OPARA__OP_DET: return opara__cpu_prepare_det(op, err, cap);
    case OPARA__OP_LAYER_NORM: return opara__cpu_prepare_layer_norm(op, err, cap);
    case OPARA__OP_REDUCE_MEAN: OPARA__CASE_REDUCE_KINDS: return opara__cpu_prepare_reduce(op, err, cap);
    case OPARA__OP_ARG_MAX: case OPARA__OP_ARG_MIN: return opara__cpu_prepare_arg_reduce(op, err, cap);
    case OPARA__OP_LOG_SOFTMAX: case OPARA__OP_HARDMAX: return opara__cpu_prepare_log_softmax(op, err, cap);
    case OPARA__OP_CUM_SUM: return opara__cpu_prepare_cum_sum(op, err, cap);
    case OPARA__OP_WHERE: return opara__cpu_prepare_where(op, err, cap);
    case OPARA__OP_CAST: return opara__cpu_prepare_cast(op, err, cap);
    case OPARA__OP_PAD: return opara__cpu_prepare_pad(op, err, cap);
    case OPARA__OP_RESIZE: return opara__cpu_prepare_resize(op, err, cap);
    case OPARA__OP_COUNT: break;
    }
    return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED_OP, "operator %s has no CPU kernel",
                             opara__op_name(op->node->op));
}

OPARA__PRIVATE opara_result opara__cpu_prepare(opara__cpu_op* op, char* err, size_t err_cap) {
    const opara__op_info* info = opara__op_info_of(op->node->op);
    uint32_t min_in = info->min_inputs, min_out = 1, k;
    opara__op kind = op->node->op;
    opara_result r;
    op->fn = NULL;
    op->work_items = 0;
    op->scratch_floats = 0;
    op->min_items_per_task = 1;
    op->packed_floats = 0;
    memset(&op->p, 0, sizeof op->p);
    if (op->n_in < min_in || op->n_out < min_out)
        return opara__cpu_reject(err, err_cap, OPARA_ERR_INVALID_ARGS, "%s needs %u inputs and %u outputs",
                                 opara__op_name(kind), min_in, min_out);
    for (k = 0; k < min_in; ++k) {
        if (op->in[k].data) continue;
        if (opara__cpu_numel(&op->in[k]) == 0) /* an empty tensor has no buffer, but it is there */
            return opara__cpu_reject(err, err_cap, OPARA_ERR_SHAPE, "%s: input %u has 0 elements, which this kernel "
                                     "cannot take", opara__op_name(kind), k);
        return opara__cpu_reject(err, err_cap, OPARA_ERR_INVALID_ARGS, "%s: input %u is missing", opara__op_name(kind), k);
    }
    if (!op->out[0].data && opara__cpu_numel(&op->out[0]) > 0)
        return opara__cpu_reject(err, err_cap, OPARA_ERR_INVALID_ARGS, "%s: output 0 has no buffer", opara__op_name(kind));
    if ((info->flags & OPARA__OPF_F32) && (op->in[0].dtype != OPARA_DTYPE_F32 || op->out[0].dtype != OPARA_DTYPE_F32))
        return opara__cpu_reject(err, err_cap, OPARA_ERR_BAD_DTYPE, "%s: only f32 is supported", opara__op_name(kind));
    r = opara__prepare_dispatch(op, err, err_cap);
    for (k = 0; k < op->n_out; ++k)
        if (opara__cpu_numel(&op->out[k]) > 0) return r;
    op->work_items = 0; /* every output is empty */
    return r;
}

/* Constant weights repacked once at creation: a Winograd convolution's transformed filters, else a
   Gemm/MatMul B in the micro-kernel's panels (the layer above both, so neither calls the other). */
OPARA__PRIVATE void opara__cpu_pack_weights(opara__cpu_op* op) {
    const opara__cpu_params* p = &op->p;
    if (!op->packed) return;
    if (op->node->op == OPARA__OP_CONV) {
        opara__winograd_pack(op);
        return;
    }
    if (op->node->op == OPARA__OP_LSTM || op->node->op == OPARA__OP_GRU || op->node->op == OPARA__OP_RNN) {
        opara__cpu_rnn_pack(op);
        return;
    }
    opara__gemm_pack_b_all(p->trans_b, (const float*)op->in[1].data, (size_t)(p->trans_b ? p->k : p->n), (size_t)p->k,
                           (size_t)p->n, op->packed_nr, op->packed);
}
