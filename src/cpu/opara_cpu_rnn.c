/* LSTM, GRU and RNN on the SGEMM: per direction and block of batch rows, the input projection of
   every time step is one GEMM (X * W^T + the biases, into scratch), then each step adds the
   recurrent term H * R^T with one GEMM over the block's rows and applies the gates' non-linearities
   row by row (the activation chosen once per row, never per element). Rows past their sequence
   length keep their state and write zeros to Y. */
#include "opara_cpu.h"

#include <math.h>
#include <string.h>

/* The per-worker scratch of one work item: the projection of every step [seq][rows][gates*hidden],
   the projection's bias [gates*hidden] and GRU's recurrent h-bias [hidden], the state h and c
   [rows][hidden], a temporary [rows][hidden] (GRU) and the built-in GEMM's packing space. */
typedef struct opara__rnn_scratch {
    float *proj, *bias, *rbh, *h, *c, *tmp, *gemm;
} opara__rnn_scratch;

static size_t opara__rnn_scratch_floats(const opara__rnn_params* r, size_t rows, size_t gemm) {
    size_t gh = (size_t)(r->gates * r->hidden_size), h = (size_t)r->hidden_size;
    return (size_t)r->seq_length * rows * gh + gh + h + 3 * rows * h + gemm;
}

static opara__rnn_scratch opara__rnn_carve(const opara__rnn_params* r, size_t rows, float* scratch) {
    size_t gh = (size_t)(r->gates * r->hidden_size), h = (size_t)r->hidden_size;
    opara__rnn_scratch s;
    s.proj = scratch;
    s.bias = s.proj + (size_t)r->seq_length * rows * gh;
    s.rbh = s.bias + gh;
    s.h = s.rbh + h;
    s.c = s.h + rows * h;
    s.tmp = s.c + rows * h;
    s.gemm = s.tmp + rows * h;
    return s;
}

/* x = act(min(max(x, -clip), clip)) over n values: one switch, then a plain loop. */
static void opara__rnn_activate(opara__rnn_act act, float alpha, float beta, float clip, float* x, size_t n) {
    size_t i;
    if (clip < HUGE_VALF)
        for (i = 0; i < n; ++i) x[i] = x[i] < -clip ? -clip : x[i] > clip ? clip : x[i];
    switch (act) {
    case OPARA__RNN_ACT_RELU: for (i = 0; i < n; ++i) x[i] = x[i] < 0.0f ? 0.0f : x[i]; break;
    case OPARA__RNN_ACT_TANH: for (i = 0; i < n; ++i) x[i] = tanhf(x[i]); break;
    case OPARA__RNN_ACT_SIGMOID: opara__vec_sigmoid(opara__cpu_isa_level(), x, x, n); break;
    case OPARA__RNN_ACT_AFFINE: for (i = 0; i < n; ++i) x[i] = alpha * x[i] + beta; break;
    case OPARA__RNN_ACT_LEAKY_RELU: for (i = 0; i < n; ++i) x[i] = x[i] < 0.0f ? alpha * x[i] : x[i]; break;
    case OPARA__RNN_ACT_THRESHOLDED_RELU: for (i = 0; i < n; ++i) x[i] = x[i] > alpha ? x[i] : 0.0f; break;
    case OPARA__RNN_ACT_SCALED_TANH: for (i = 0; i < n; ++i) x[i] = alpha * tanhf(beta * x[i]); break;
    case OPARA__RNN_ACT_HARD_SIGMOID:
        for (i = 0; i < n; ++i) {
            float v = alpha * x[i] + beta;
            x[i] = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v; /* NaN stays NaN */
        }
        break;
    case OPARA__RNN_ACT_ELU: for (i = 0; i < n; ++i) x[i] = x[i] < 0.0f ? alpha * (expf(x[i]) - 1.0f) : x[i]; break;
    case OPARA__RNN_ACT_SOFTSIGN: for (i = 0; i < n; ++i) x[i] = x[i] / (1.0f + fabsf(x[i])); break;
    case OPARA__RNN_ACT_SOFTPLUS:
        for (i = 0; i < n; ++i) x[i] = x[i] > 20.0f ? x[i] : log1pf(expf(x[i]));
        break;
    }
}

/* What one work item (a direction and a block of batch rows) reads and writes. */
typedef struct opara__rnn_item {
    const opara__rnn_params* r;
    size_t dir, b0, rows;
    const float *w, *rw, *bias, *p; /* this direction's W, R, B (NULL: zero) and P (NULL: none) */
    const float* packed_r;          /* R packed for the built-in GEMM (opara__cpu_rnn_pack), or NULL */
    const int32_t* lens;            /* sequence_lens, or NULL: every row runs seq_length steps */
    const float *init_h, *init_c;
    float *y, *yh, *yc;             /* outputs, NULL when absent */
} opara__rnn_item;

/* Element offset of row b's state of this direction in initial_h / Y_h ([dirs][batch][H], layout 1
   [batch][dirs][H]) and of step t's in Y ([seq][dirs][batch][H], layout 1 [batch][seq][dirs][H]). */
static size_t opara__rnn_state_at(const opara__rnn_item* it, size_t b) {
    const opara__rnn_params* r = it->r;
    size_t dirs = (size_t)r->num_directions, batch = (size_t)r->batch_size;
    return (r->layout ? b * dirs + it->dir : it->dir * batch + b) * (size_t)r->hidden_size;
}

static size_t opara__rnn_y_at(const opara__rnn_item* it, size_t t, size_t b) {
    const opara__rnn_params* r = it->r;
    size_t dirs = (size_t)r->num_directions, batch = (size_t)r->batch_size, seq = (size_t)r->seq_length;
    return (r->layout ? (b * seq + t) * dirs + it->dir : (t * dirs + it->dir) * batch + b) * (size_t)r->hidden_size;
}

/* The projection's bias (Wb + Rb per gate; GRU with linear_before_reset keeps Rb of h apart, in rbh,
   since it is added inside the reset gate's product). */
static void opara__rnn_biases(const opara__rnn_item* it, const opara__rnn_scratch* s) {
    const opara__rnn_params* r = it->r;
    size_t gh = (size_t)(r->gates * r->hidden_size), h = (size_t)r->hidden_size, j;
    for (j = 0; j < gh; ++j) s->bias[j] = it->bias ? it->bias[j] + it->bias[gh + j] : 0.0f;
    for (j = 0; j < h; ++j) s->rbh[j] = 0.0f;
    if (!r->linear_before_reset || !it->bias) return;
    for (j = 0; j < h; ++j) {
        s->bias[2 * h + j] = it->bias[2 * h + j];
        s->rbh[j] = it->bias[gh + 2 * h + j];
    }
}

/* proj[t][b] = X[t][b0 + b] * W^T + bias for every step: one GEMM when the rows of all steps are
   contiguous in X, else one per step (layout 0) or per batch row (layout 1, ldc skipping the block). */
static void opara__rnn_project(const opara__cpu_op* op, const opara__rnn_item* it, const opara__rnn_scratch* s) {
    const opara__rnn_params* r = it->r;
    const float* x = (const float*)op->in[0].data;
    size_t gh = (size_t)(r->gates * r->hidden_size), in = (size_t)r->input_size, seq = (size_t)r->seq_length;
    size_t batch = (size_t)r->batch_size, t, b;
    opara__gemm_epilogue epi;
    memset(&epi, 0, sizeof epi);
    epi.col_bias = s->bias;
    if (!r->layout && it->rows == batch) {
        opara__sgemm_ex(op->blas, 0, 1, seq * batch, gh, in, 1.0f, x, in, it->w, in, 0.0f, s->proj, gh, s->gemm, &epi, NULL);
    } else if (!r->layout) {
        for (t = 0; t < seq; ++t)
            opara__sgemm_ex(op->blas, 0, 1, it->rows, gh, in, 1.0f, x + (t * batch + it->b0) * in, in, it->w, in, 0.0f,
                            s->proj + t * it->rows * gh, gh, s->gemm, &epi, NULL);
    } else {
        for (b = 0; b < it->rows; ++b)
            opara__sgemm_ex(op->blas, 0, 1, seq, gh, in, 1.0f, x + (it->b0 + b) * seq * in, in, it->w, in, 0.0f,
                            s->proj + b * gh, it->rows * gh, s->gemm, &epi, NULL);
    }
}

static void opara__rnn_load_state(const opara__rnn_item* it, const float* init, float* state) {
    size_t h = (size_t)it->r->hidden_size, b;
    for (b = 0; b < it->rows; ++b) {
        if (init) memcpy(state + b * h, init + opara__rnn_state_at(it, it->b0 + b), h * sizeof *state);
        else memset(state + b * h, 0, h * sizeof *state);
    }
}

static void opara__rnn_store_state(const opara__rnn_item* it, const float* state, float* out) {
    size_t h = (size_t)it->r->hidden_size, b;
    for (b = 0; out && b < it->rows; ++b) memcpy(out + opara__rnn_state_at(it, it->b0 + b), state + b * h, h * sizeof *state);
}

/* R packed once for the built-in GEMM (the step GEMMs read it every step): per direction, the
   recurrent weights of the gates one GEMM reads together, each part in its own panels (GRU: z and r,
   then h; the others: all gates). Part `part` of direction d starts at opara__rnn_packed_at. */
static size_t opara__rnn_part_cols(const opara__rnn_params* r, int part) {
    size_t h = (size_t)r->hidden_size;
    return r->gates == 3 ? (part == 0 ? 2 * h : h) : (part == 0 ? (size_t)r->gates * h : 0);
}

static size_t opara__rnn_packed_dir_floats(const opara__rnn_params* r, size_t nr) {
    size_t h = (size_t)r->hidden_size;
    return opara__gemm_packed_floats(h, opara__rnn_part_cols(r, 0), nr) +
           (opara__rnn_part_cols(r, 1) ? opara__gemm_packed_floats(h, opara__rnn_part_cols(r, 1), nr) : 0);
}

OPARA__PRIVATE void opara__cpu_rnn_pack(opara__cpu_op* op) {
    const opara__rnn_params* r = &op->params->u.rnn;
    size_t h = (size_t)r->hidden_size, gh = (size_t)r->gates * h, nr = op->packed_nr, d;
    for (d = 0; d < (size_t)r->num_directions; ++d) {
        const float* rw = (const float*)op->in[2].data + d * gh * h;
        float* dst = op->packed + d * opara__rnn_packed_dir_floats(r, nr);
        opara__gemm_pack_b_all(1, rw, h, h, opara__rnn_part_cols(r, 0), nr, dst);
        if (opara__rnn_part_cols(r, 1))
            opara__gemm_pack_b_all(1, rw + opara__rnn_part_cols(r, 0) * h, h, h, opara__rnn_part_cols(r, 1), nr,
                                   dst + opara__gemm_packed_floats(h, opara__rnn_part_cols(r, 0), nr));
    }
}

/* The packed panels of part `part` of the item's R, or NULL when R is not packed. */
static const opara__gemm_packed* opara__rnn_packed(const opara__cpu_op* op, const opara__rnn_item* it, int part,
                                                   opara__gemm_packed* out) {
    size_t h = (size_t)it->r->hidden_size, nr = op->packed_nr;
    if (!it->packed_r) return NULL;
    out->data = it->packed_r + (part ? opara__gemm_packed_floats(h, opara__rnn_part_cols(it->r, 0), nr) : 0);
    out->nr = nr;
    out->np = (opara__rnn_part_cols(it->r, part) + nr - 1) / nr * nr;
    out->col0 = 0;
    return out;
}

/* One RNN row: h = f(g). */
static void opara__rnn_cell(const opara__rnn_params* r, size_t d, float* g, float* h) {
    opara__rnn_activate(r->act[d], r->act_alpha[d], r->act_beta[d], r->clip, g, (size_t)r->hidden_size);
    memcpy(h, g, (size_t)r->hidden_size * sizeof *h);
}

/* One LSTM row: g holds i o f c pre-activations (without peepholes), h and c the state. */
static void opara__lstm_cell(const opara__rnn_params* r, size_t d, const float* p, float* g, float* h, float* c) {
    size_t n = (size_t)r->hidden_size, j, a = d * 3;
    float *gi = g, *go = g + n, *gf = g + 2 * n, *gc = g + 3 * n;
    if (p)
        for (j = 0; j < n; ++j) gi[j] += p[j] * c[j], gf[j] += p[2 * n + j] * c[j];
    opara__rnn_activate(r->act[a], r->act_alpha[a], r->act_beta[a], r->clip, gi, n);
    if (r->input_forget)
        for (j = 0; j < n; ++j) gf[j] = 1.0f - gi[j];
    else opara__rnn_activate(r->act[a], r->act_alpha[a], r->act_beta[a], r->clip, gf, n);
    opara__rnn_activate(r->act[a + 1], r->act_alpha[a + 1], r->act_beta[a + 1], r->clip, gc, n);
    for (j = 0; j < n; ++j) c[j] = gf[j] * c[j] + gi[j] * gc[j];
    if (p)
        for (j = 0; j < n; ++j) go[j] += p[n + j] * c[j];
    opara__rnn_activate(r->act[a], r->act_alpha[a], r->act_beta[a], r->clip, go, n);
    memcpy(h, c, n * sizeof *h);
    opara__rnn_activate(r->act[a + 2], r->act_alpha[a + 2], r->act_beta[a + 2], HUGE_VALF, h, n);
    for (j = 0; j < n; ++j) h[j] *= go[j];
}

/* One GRU row after the gates' GEMMs: g holds z r h pre-activations, z and r already activated. */
static void opara__gru_cell(const opara__rnn_params* r, size_t d, float* g, float* h) {
    size_t n = (size_t)r->hidden_size, j, a = d * 2;
    float *gz = g, *gh = g + 2 * n;
    opara__rnn_activate(r->act[a + 1], r->act_alpha[a + 1], r->act_beta[a + 1], r->clip, gh, n);
    for (j = 0; j < n; ++j) h[j] = (1.0f - gz[j]) * gh[j] + gz[j] * h[j];
}

/* GRU's recurrent terms of one step over the block's rows: z and r (one GEMM, then activated), then
   h's, whose product takes r * H (default) or is multiplied by r afterwards (linear_before_reset). */
static void opara__gru_recurrent(const opara__cpu_op* op, const opara__rnn_item* it, const opara__rnn_scratch* s, float* g) {
    const opara__rnn_params* r = it->r;
    size_t n = (size_t)r->hidden_size, gh = 3 * n, b, j, a = it->dir * 2;
    const float* rh = it->rw + 2 * n * n;
    opara__gemm_packed pk;
    opara__sgemm_ex(op->blas, 0, 1, it->rows, 2 * n, n, 1.0f, s->h, n, it->rw, n, 1.0f, g, gh, s->gemm, NULL,
                    opara__rnn_packed(op, it, 0, &pk));
    for (b = 0; b < it->rows; ++b) opara__rnn_activate(r->act[a], r->act_alpha[a], r->act_beta[a], r->clip, g + b * gh, 2 * n);
    if (!r->linear_before_reset) {
        for (b = 0; b < it->rows; ++b)
            for (j = 0; j < n; ++j) s->tmp[b * n + j] = g[b * gh + n + j] * s->h[b * n + j];
        opara__sgemm_ex(op->blas, 0, 1, it->rows, n, n, 1.0f, s->tmp, n, rh, n, 1.0f, g + 2 * n, gh, s->gemm, NULL,
                        opara__rnn_packed(op, it, 1, &pk));
        return;
    }
    {
        opara__gemm_epilogue epi;
        memset(&epi, 0, sizeof epi);
        epi.col_bias = s->rbh;
        opara__sgemm_ex(op->blas, 0, 1, it->rows, n, n, 1.0f, s->h, n, rh, n, 0.0f, s->tmp, n, s->gemm, &epi,
                        opara__rnn_packed(op, it, 1, &pk));
    }
    for (b = 0; b < it->rows; ++b)
        for (j = 0; j < n; ++j) g[b * gh + 2 * n + j] += g[b * gh + n + j] * s->tmp[b * n + j];
}

/* Step t for the block's rows: the recurrent GEMM(s) into the step's projection, then each row
   still inside its sequence updates its state and writes Y; the others write zeros. */
static void opara__rnn_step(const opara__cpu_op* op, const opara__rnn_item* it, const opara__rnn_scratch* s, size_t t) {
    const opara__rnn_params* r = it->r;
    opara__op kind = op->node->op;
    size_t n = (size_t)r->hidden_size, gh = (size_t)r->gates * n, b;
    float* g = s->proj + t * it->rows * gh;
    opara__gemm_packed pk;
    if (kind == OPARA__OP_GRU) opara__gru_recurrent(op, it, s, g);
    else
        opara__sgemm_ex(op->blas, 0, 1, it->rows, gh, n, 1.0f, s->h, n, it->rw, n, 1.0f, g, gh, s->gemm, NULL,
                        opara__rnn_packed(op, it, 0, &pk));
    for (b = 0; b < it->rows; ++b) {
        int active = !it->lens || (int64_t)t < (int64_t)it->lens[it->b0 + b];
        float* y = it->y ? it->y + opara__rnn_y_at(it, t, it->b0 + b) : NULL;
        if (!active) {
            if (y) memset(y, 0, n * sizeof *y);
            continue;
        }
        if (kind == OPARA__OP_LSTM) opara__lstm_cell(r, it->dir, it->p, g + b * gh, s->h + b * n, s->c + b * n);
        else if (kind == OPARA__OP_GRU) opara__gru_cell(r, it->dir, g + b * gh, s->h + b * n);
        else opara__rnn_cell(r, it->dir, g + b * gh, s->h + b * n);
        if (y) memcpy(y, s->h + b * n, n * sizeof *y);
    }
}

static const float* opara__rnn_input(const opara__cpu_op* op, uint32_t k) {
    return k < op->n_in ? (const float*)op->in[k].data : NULL;
}

static float* opara__rnn_output(const opara__cpu_op* op, uint32_t k) {
    return k < op->n_out ? (float*)op->out[k].data : NULL;
}

/* A sequence length outside [0, seq_length]: the row index, or -1 when all are valid. */
static int64_t opara__rnn_bad_length(const opara__cpu_op* op) {
    const opara__rnn_params* r = &op->params->u.rnn;
    const int32_t* lens = op->n_in > 4 ? (const int32_t*)op->in[4].data : NULL;
    int64_t b;
    for (b = 0; lens && b < r->batch_size; ++b)
        if (lens[b] < 0 || lens[b] > r->seq_length) return b;
    return -1;
}

OPARA__PRIVATE void opara__cpu_rnn_explain(const opara__cpu_op* op, char* buf, size_t cap) {
    int64_t b = opara__rnn_bad_length(op);
    if (b >= 0)
        opara__format(buf, cap, "%s: sequence_lens[%lld] = %d is outside [0, seq_length %lld]", opara__op_name(op->node->op),
                      (long long)b, (int)((const int32_t*)op->in[4].data)[b], (long long)op->params->u.rnn.seq_length);
}

static opara_result opara__rnn_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__rnn_params* r = &op->params->u.rnn;
    size_t gh = (size_t)(r->gates * r->hidden_size), n = (size_t)r->hidden_size, blocks = (size_t)op->p.m_blocks;
    size_t block_rows = (size_t)op->p.m, seq = (size_t)r->seq_length, item, s_i;
    const float* b = opara__rnn_input(op, 3);
    const float* p = op->node->op == OPARA__OP_LSTM ? opara__rnn_input(op, 7) : NULL;
    if (opara__rnn_bad_length(op) >= 0) return OPARA_ERR_INVALID_ARGS;
    for (item = begin; item < end; ++item) {
        opara__rnn_item it;
        opara__rnn_scratch s;
        it.r = r;
        it.dir = item / blocks;
        it.b0 = item % blocks * block_rows;
        it.rows = OPARA__MIN(block_rows, (size_t)r->batch_size - it.b0);
        it.w = (const float*)op->in[1].data + it.dir * gh * (size_t)r->input_size;
        it.rw = (const float*)op->in[2].data + it.dir * gh * n;
        it.packed_r = op->packed ? op->packed + it.dir * opara__rnn_packed_dir_floats(r, op->packed_nr) : NULL;
        it.bias = b ? b + it.dir * 2 * gh : NULL;
        it.p = p ? p + it.dir * 3 * n : NULL;
        it.lens = op->n_in > 4 ? (const int32_t*)op->in[4].data : NULL;
        it.init_h = opara__rnn_input(op, 5);
        it.init_c = op->node->op == OPARA__OP_LSTM ? opara__rnn_input(op, 6) : NULL;
        it.y = opara__rnn_output(op, 0);
        it.yh = opara__rnn_output(op, 1);
        it.yc = op->node->op == OPARA__OP_LSTM ? opara__rnn_output(op, 2) : NULL;
        s = opara__rnn_carve(r, it.rows, scratch);
        opara__rnn_biases(&it, &s);
        opara__rnn_project(op, &it, &s);
        opara__rnn_load_state(&it, it.init_h, s.h);
        opara__rnn_load_state(&it, it.init_c, s.c);
        /* reverse runs t = seq-1 .. 0: a row shorter than seq starts at its own last step */
        for (s_i = 0; s_i < seq; ++s_i) opara__rnn_step(op, &it, &s, r->direction == 1 || it.dir == 1 ? seq - 1 - s_i : s_i);
        opara__rnn_store_state(&it, s.h, it.yh);
        opara__rnn_store_state(&it, s.c, it.yc);
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_rnn(opara__cpu_op* op, char* err, size_t cap) {
    const opara__rnn_params* r;
    const char* name = opara__op_name(op->node->op);
    size_t gemm = op->blas && op->blas->sgemm ? 0 : OPARA__GEMM_SCRATCH, blocks, rows, workers;
    uint32_t k;
    if (!op->params || !op->params->resolved) return opara__cpu_reject(err, cap, OPARA_ERR_INVALID_STATE, "%s: unresolved", name);
    r = &op->params->u.rnn;
    for (k = 1; k < op->n_in; ++k)
        if (op->in[k].data && op->in[k].dtype != (k == 4 ? OPARA_DTYPE_I32 : OPARA_DTYPE_F32))
            return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "%s: input %u has the wrong data type", name, k);
    if (r->batch_size <= 0 || r->seq_length <= 0 || r->hidden_size <= 0 || r->input_size <= 0) {
        op->work_items = 0; /* zero-sized: nothing to compute */
        return OPARA_OK;
    }
    /* batch blocks only where each keeps a GEMM of several rows: fewer rows per step GEMM cost more
       than the workers they feed */
    workers = op->workers ? op->workers : 1;
    blocks = OPARA__MAX((size_t)1, (workers + (size_t)r->num_directions - 1) / (size_t)r->num_directions);
    blocks = OPARA__MIN(blocks, OPARA__MAX((size_t)1, (size_t)r->batch_size / 4));
    rows = ((size_t)r->batch_size + blocks - 1) / blocks;
    op->p.m = (int64_t)rows;
    op->p.m_blocks = (int64_t)(((size_t)r->batch_size + rows - 1) / rows);
    op->p.n = r->gates * r->hidden_size;
    op->p.k = r->gates * (r->input_size + r->hidden_size); /* multiply-adds per output element */
    op->work_items = (size_t)r->num_directions * (size_t)op->p.m_blocks;
    op->scratch_floats = opara__rnn_scratch_floats(r, rows, gemm);
    op->fn = opara__rnn_kernel;
    /* a constant R is packed once at creation for the built-in GEMM (an external BLAS takes it as is) */
    if (op->in[2].is_const && !op->keep_weights && gemm) {
        op->packed_nr = opara__gemm_pack_width();
        op->packed_floats = (size_t)r->num_directions * opara__rnn_packed_dir_floats(r, op->packed_nr);
    }
    return OPARA_OK;
}
