/* Shape and data-type inference for every IR operator, following the ONNX operator specs.
   Every attribute and shape is hostile until checked: arithmetic is overflow-checked and dims
   are bounded by OPARA__SHAPE_DIM_MAX, so no input can crash it. */
#include "../model/opara_model.h"

#include <math.h>
#include <stdio.h>

#define OPARA__SHAPE_DIM_MAX (INT64_C(1) << 40)
#define OPARA__SHAPE_NUMEL_MAX (INT64_C(1) << 56)

OPARA__PRIVATE int64_t opara__shape_numel(const opara__shape* s) {
    int64_t n = 1;
    int32_t i;
    if (s->ndim < 0) return -1;
    for (i = 0; i < s->ndim; ++i)
        if (!opara__mul_i64(n, s->dims[i], &n)) return -1;
    return n;
}

OPARA__PRIVATE const char* opara__shape_str(const opara__shape* s, char* buf, size_t cap) {
    size_t len;
    int32_t i;
    if (s->ndim < 0) {
        opara__format(buf, cap, "[?]");
        return buf;
    }
    len = opara__format(buf, cap, "[");
    for (i = 0; i < s->ndim && len < cap; ++i) {
        if (s->dims[i] == OPARA__DIM_BATCH) len += opara__format(buf + len, cap - len, "%sN", i ? ", " : "");
        else len += opara__format(buf + len, cap - len, "%s%lld", i ? ", " : "", (long long)s->dims[i]);
    }
    if (len < cap) opara__format(buf + len, cap - len, "]");
    return buf;
}

/* ---- context and failures -------------------------------------------------------------------- */

typedef struct opara__shape_ctx {
    opara_runtime* rt;
    uint32_t node_index;
    const opara__node* n;
    opara__shape_mode mode;
    int64_t batch; /* OPARA__DIM_BATCH (symbolic) in tolerant mode */
    const opara__shape* const* in; /* n->n_inputs entries, NULL for an omitted input */
    opara__shape* const* out;      /* n->n_outputs entries */
    opara__node_params* params;    /* NULL when the caller does not want them */
} opara__shape_ctx;

static opara_result opara__shape_fail(opara__shape_ctx* c, opara_result code, const char* fmt, ...) OPARA__PRINTF(3, 4);
static opara_result opara__shape_fail(opara__shape_ctx* c, opara_result code, const char* fmt, ...) {
    char detail[OPARA__DETAIL_MAX];
    va_list args;
    if (c->mode == OPARA__SHAPE_TOLERANT) return code; /* the outputs become unknown; nothing is reported */
    va_start(args, fmt);
    if (opara__vsnprintf(detail, sizeof detail, fmt, args) < 0) detail[0] = 0;
    va_end(args);
    return opara__fail(c->rt, code, "node %u '%s' (%s): %s", c->node_index, c->n->name ? c->n->name : "",
                       opara__op_name(c->n->op), detail);
}

/* Tolerant mode: a dim that is not known (< 0: unknown, or the symbolic batch) takes no part in
   checks and makes what is computed from it unknown. Strict mode has no such dims. */
static int opara__unknown(const opara__shape_ctx* c, int64_t d) {
    return c->mode == OPARA__SHAPE_TOLERANT && d < 0;
}

/* Two dims that must agree; in tolerant mode only two known ones can disagree. */
static int opara__dims_differ(const opara__shape_ctx* c, int64_t a, int64_t b) {
    return a != b && !opara__unknown(c, a) && !opara__unknown(c, b);
}

/* "input 0 [1, 3, 224, 224]" style fragments need a buffer per shape. */
typedef struct opara__sbuf {
    char s[4][160];
} opara__sbuf;

static const char* opara__sh(opara__sbuf* b, int slot, const opara__shape* s) {
    return opara__shape_str(s, b->s[slot], sizeof b->s[slot]);
}

static int opara__norm_axis(int64_t axis, int64_t rank, int64_t* out) {
    if (axis < -rank || axis >= rank) return 0;
    *out = axis < 0 ? axis + rank : axis;
    return 1;
}

static opara_result opara__axis_arg(opara__shape_ctx* c, const char* attr, int64_t fallback, int64_t rank,
                                    int64_t* axis) {
    int64_t a = opara__attr_int(c->n, attr, fallback);
    if (!opara__norm_axis(a, rank, axis))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "%s %lld is out of range for rank %lld", attr, (long long)a,
                                 (long long)rank);
    if (c->params) c->params->axis = *axis;
    return OPARA_OK;
}

/* Tolerant mode: unknown dims become -1 (the symbolic batch stays), absurd ones fail. */
static opara_result opara__set_out_tolerant(opara__shape_ctx* c, uint32_t k, const opara__shape* s) {
    opara__shape y = *s;
    int32_t i;
    for (i = 0; i < y.ndim; ++i) {
        if (y.dims[i] > OPARA__SHAPE_DIM_MAX) return OPARA_ERR_LIMIT_EXCEEDED;
        if (y.dims[i] < 0 && y.dims[i] != OPARA__DIM_BATCH) y.dims[i] = -1;
    }
    *c->out[k] = y;
    return OPARA_OK;
}

/* Checks an output shape's dims and element count and stores it. */
static opara_result opara__set_out(opara__shape_ctx* c, uint32_t k, const opara__shape* s) {
    int32_t i;
    int64_t numel;
    char buf[160];
    if (s->ndim > OPARA_MAX_DIMS)
        return opara__shape_fail(c, OPARA_ERR_LIMIT_EXCEEDED, "output %u would have rank %d (max %d)", k, (int)s->ndim,
                                 OPARA_MAX_DIMS);
    if (c->mode == OPARA__SHAPE_TOLERANT) return opara__set_out_tolerant(c, k, s);
    for (i = 0; i < s->ndim; ++i)
        if (s->dims[i] < 0 || s->dims[i] > OPARA__SHAPE_DIM_MAX)
            return opara__shape_fail(c, s->dims[i] < 0 ? OPARA_ERR_SHAPE : OPARA_ERR_LIMIT_EXCEEDED,
                                     "output %u would have shape %s", k, opara__shape_str(s, buf, sizeof buf));
    numel = opara__shape_numel(s);
    if (numel < 0 || numel > OPARA__SHAPE_NUMEL_MAX)
        return opara__shape_fail(c, OPARA_ERR_LIMIT_EXCEEDED, "output %u shape %s has too many elements", k,
                                 opara__shape_str(s, buf, sizeof buf));
    *c->out[k] = *s;
    return OPARA_OK;
}

/* ---- broadcasting ---------------------------------------------------------------------------- */

static int opara__broadcast_dim(int64_t a, int64_t b, opara__shape_mode mode, int64_t* out) {
    if (a == b || b == 1) *out = a;
    else if (a == 1) *out = b;
    else if (mode == OPARA__SHAPE_STRICT) return 0;
    else if (a >= 0 && b >= 0) *out = -1; /* incompatible: unknown, the graph's checker reports it */
    else *out = a >= 0 ? a : b >= 0 ? b : -1;
    return 1;
}

static void opara__broadcast_strides(const opara__shape* out, const opara__shape* in, int64_t* strides) {
    int64_t s = 1;
    int32_t d;
    for (d = out->ndim - 1; d >= 0; --d) {
        int32_t j = d - (out->ndim - in->ndim);
        int64_t dim = j >= 0 ? in->dims[j] : 1;
        strides[d] = dim == 1 ? 0 : s;
        s *= dim;
    }
}

OPARA__PRIVATE int opara__broadcast_shapes(const opara__shape* const* in, uint32_t n, opara__shape_mode mode,
                                           opara__shape* out, int64_t (*strides)[OPARA_MAX_DIMS]) {
    uint32_t k;
    int32_t d;
    out->ndim = 0;
    for (k = 0; k < n; ++k) {
        if (in[k]->ndim < 0 || in[k]->ndim > OPARA_MAX_DIMS) {
            out->ndim = -1;
            return mode == OPARA__SHAPE_TOLERANT;
        }
        out->ndim = OPARA__MAX(out->ndim, in[k]->ndim);
    }
    for (d = 0; d < out->ndim; ++d) {
        int64_t dim = 1;
        for (k = 0; k < n; ++k) {
            int32_t j = d - (out->ndim - in[k]->ndim);
            if (j >= 0 && !opara__broadcast_dim(dim, in[k]->dims[j], mode, &dim)) return 0;
        }
        out->dims[d] = dim;
    }
    for (k = 0; strides && k < n; ++k) opara__broadcast_strides(out, in[k], strides[k]);
    return 1;
}

OPARA__PRIVATE int opara__broadcast_to(const opara__shape* out, const opara__shape* in, int64_t* strides) {
    const opara__shape* pair[2];
    int64_t st[2][OPARA_MAX_DIMS];
    opara__shape b;
    int32_t d;
    pair[0] = out, pair[1] = in;
    if (in->ndim > out->ndim || !opara__broadcast_shapes(pair, 2, OPARA__SHAPE_STRICT, &b, st)) return 0;
    for (d = 0; d < out->ndim; ++d)
        if (b.dims[d] != out->dims[d]) return 0;
    memcpy(strides, st[1], (size_t)out->ndim * sizeof st[1][0]);
    return 1;
}

/* Broadcast of two shapes in the engine's mode. */
static int opara__broadcast(const opara__shape_ctx* c, const opara__shape* a, const opara__shape* b, opara__shape* out) {
    const opara__shape* pair[2];
    pair[0] = a, pair[1] = b;
    return opara__broadcast_shapes(pair, 2, c->mode, out, NULL);
}

/* Each input's broadcast strides over output y into the node's record (strict mode). */
static void opara__record_broadcast(opara__shape_ctx* c, const opara__shape* y) {
    uint32_t k;
    if (!c->params || c->mode != OPARA__SHAPE_STRICT) return;
    for (k = 0; k < c->n->n_inputs && k < 3; ++k) (void)opara__broadcast_to(y, c->in[k], c->params->u.broadcast.strides[k]);
}

static opara_result opara__shape_broadcast(opara__shape_ctx* c) {
    opara__shape acc = *c->in[0], next;
    opara__sbuf b;
    uint32_t k;
    for (k = 1; k < c->n->n_inputs; ++k) {
        if (!opara__broadcast(c, &acc, c->in[k], &next))
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "shapes %s and %s (input %u) do not broadcast", opara__sh(&b, 0, &acc),
                                     opara__sh(&b, 1, c->in[k]), k);
        acc = next;
    }
    opara__record_broadcast(c, &acc);
    return opara__set_out(c, 0, &acc);
}

/* BitShift: broadcast, with ONNX's required direction "LEFT" or "RIGHT". */
static opara_result opara__shape_bit_shift(opara__shape_ctx* c) {
    const char* dir = opara__attr_string(c->n, "direction", "");
    if (strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "direction '%s' is not LEFT or RIGHT", dir);
    return opara__shape_broadcast(c);
}

/* ---- convolution and pooling ----------------------------------------------------------------- */

OPARA__PRIVATE opara__auto_pad opara__node_auto_pad(const opara__node* n) {
    const char* ap = opara__attr_string(n, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") == 0) return OPARA__AUTO_PAD_NOTSET;
    if (strcmp(ap, "SAME_UPPER") == 0) return OPARA__AUTO_PAD_SAME_UPPER;
    if (strcmp(ap, "SAME_LOWER") == 0) return OPARA__AUTO_PAD_SAME_LOWER;
    if (strcmp(ap, "VALID") == 0) return OPARA__AUTO_PAD_VALID;
    return OPARA__AUTO_PAD_INVALID;
}

typedef struct opara__window {
    int64_t kernel[OPARA_MAX_DIMS], strides[OPARA_MAX_DIMS], dilations[OPARA_MAX_DIMS];
    int64_t pads[2 * OPARA_MAX_DIMS], out_pad[OPARA_MAX_DIMS];
    opara__auto_pad auto_pad;
} opara__window;

/* Reads an INTS attribute of exactly `count` values in [lo, hi], or fills `fallback`. */
static opara_result opara__ints_arg(opara__shape_ctx* c, const char* name, uint32_t count, int64_t lo, int64_t hi,
                                    int64_t fallback, int required, int64_t* dst) {
    uint32_t n, i;
    const int64_t* v = opara__attr_ints(c->n, name, &n);
    if (!v) {
        if (required) return opara__shape_fail(c, OPARA_ERR_SHAPE, "attribute '%s' is required", name);
        for (i = 0; i < count; ++i) dst[i] = fallback;
        return OPARA_OK;
    }
    if (n != count)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "attribute '%s' has %u values, expected %u", name, n, count);
    for (i = 0; i < n; ++i) {
        if (v[i] < lo || v[i] > hi)
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "attribute '%s'[%u] = %lld is outside [%lld, %lld]", name, i,
                                     (long long)v[i], (long long)lo, (long long)hi);
        dst[i] = v[i];
    }
    return OPARA_OK;
}

static opara_result opara__read_window(opara__shape_ctx* c, uint32_t k, int kernel_required, opara__window* w) {
    opara_result r;
    w->auto_pad = opara__node_auto_pad(c->n);
    if (w->auto_pad == OPARA__AUTO_PAD_INVALID)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "auto_pad '%s' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID",
                                 opara__attr_string(c->n, "auto_pad", ""));
    r = opara__ints_arg(c, "kernel_shape", k, 1, OPARA__SHAPE_DIM_MAX, 1, kernel_required, w->kernel);
    if (r == OPARA_OK) r = opara__ints_arg(c, "strides", k, 1, OPARA__SHAPE_DIM_MAX, 1, 0, w->strides);
    if (r == OPARA_OK) r = opara__ints_arg(c, "dilations", k, 1, OPARA__SHAPE_DIM_MAX, 1, 0, w->dilations);
    if (r == OPARA_OK) r = opara__ints_arg(c, "pads", 2 * k, 0, OPARA__SHAPE_DIM_MAX, 0, 0, w->pads);
    if (r == OPARA_OK) r = opara__ints_arg(c, "output_padding", k, 0, OPARA__SHAPE_DIM_MAX, 0, 0, w->out_pad);
    return r;
}

/* Total padding of spatial dim i that auto_pad SAME_* or ConvTranspose's output_shape implies, or
   -1 when the pads stand as given. Conv and pools: the output is ceil(in / stride); ConvTranspose:
   the pads trim the full size stride*(in-1) + output_padding + (kernel-1)*dilation + 1 to the target
   (output_shape, or in*stride). */
static int64_t opara__implied_padding(const opara__window* w, uint32_t i, int64_t in, int transpose,
                                      const int64_t* output_shape) {
    int same = w->auto_pad == OPARA__AUTO_PAD_SAME_UPPER || w->auto_pad == OPARA__AUTO_PAD_SAME_LOWER;
    int64_t s = w->strides[i], eff = (w->kernel[i] - 1) * w->dilations[i] + 1, total;
    if (transpose && (output_shape || same))
        total = s * (in - 1) + w->out_pad[i] + eff - (output_shape ? output_shape[i] : in * s);
    else if (!transpose && same) total = ((in + s - 1) / s - 1) * s + eff - in;
    else return -1;
    return total < 0 ? 0 : total;
}

/* The window into the node's record with its pads resolved: an implied total splits with the odd
   one at the end for SAME_UPPER, at the start otherwise (ONNX's rules); VALID pads nothing. */
static void opara__record_window(opara__shape_ctx* c, const opara__window* w, uint32_t k, const opara__shape* x,
                                 int transpose, const int64_t* output_shape) {
    opara__window_params* p = c->params ? &c->params->u.window : NULL;
    uint32_t i;
    if (!p) return;
    p->n_spatial = (int32_t)k;
    p->has_output_shape = output_shape != NULL;
    for (i = 0; i < k; ++i) {
        int64_t total = opara__implied_padding(w, i, x->dims[2 + i], transpose, output_shape);
        int64_t b = w->pads[i], e = w->pads[k + i];
        if (total >= 0) {
            b = w->auto_pad == OPARA__AUTO_PAD_SAME_UPPER ? total / 2 : total - total / 2;
            e = total - b;
        } else if (w->auto_pad == OPARA__AUTO_PAD_VALID) {
            b = e = 0;
        }
        p->kernel[i] = w->kernel[i], p->strides[i] = w->strides[i], p->dilations[i] = w->dilations[i];
        p->pads[i] = b, p->pads[k + i] = e;
        p->output_padding[i] = w->out_pad[i];
        p->output_shape[i] = output_shape ? output_shape[i] : 0;
    }
}

/* Spatial output size of a convolution/pool window (ONNX Conv/MaxPool/AveragePool). k is the
   number of spatial dims (pads holds k begins then k ends). With ceil_mode a last window that
   would start inside the end padding is dropped (ONNX >= 1.16, PyTorch, ONNX Runtime). */
static opara_result opara__window_out(opara__shape_ctx* c, const opara__window* w, uint32_t k, uint32_t i, int64_t in,
                                      int ceil_mode, int64_t* out) {
    int64_t eff, pb = w->pads[i], pe = w->pads[k + i], s = w->strides[i], padded;
    if (!opara__mul_i64(w->kernel[i] - 1, w->dilations[i], &eff) || eff >= OPARA__SHAPE_DIM_MAX)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "kernel %lld with dilation %lld is too large", (long long)w->kernel[i],
                                 (long long)w->dilations[i]);
    eff += 1;
    if (opara__unknown(c, in)) {
        *out = -1;
        return OPARA_OK;
    }
    if (w->auto_pad == OPARA__AUTO_PAD_SAME_UPPER || w->auto_pad == OPARA__AUTO_PAD_SAME_LOWER) {
        *out = (in + s - 1) / s;
        return OPARA_OK;
    }
    if (w->auto_pad == OPARA__AUTO_PAD_VALID) pb = 0, pe = 0;
    padded = in + pb + pe;
    if (padded < eff)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "spatial dim %u: input %lld (padded %lld) is smaller than the kernel extent %lld",
                                 i, (long long)in, (long long)padded, (long long)eff);
    if (ceil_mode) {
        *out = (padded - eff + s - 1) / s + 1;
        if (*out > 1 && *out - 1 >= (in + pb + s - 1) / s) --*out;
    } else {
        *out = (padded - eff) / s + 1;
    }
    return OPARA_OK;
}

static opara_result opara__spatial_rank(opara__shape_ctx* c, const opara__shape* x, uint32_t* k) {
    opara__sbuf b;
    if (x->ndim < 3)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %s needs rank >= 3 (N, C, spatial...)", opara__sh(&b, 0, x));
    *k = (uint32_t)x->ndim - 2;
    return OPARA_OK;
}

static opara_result opara__shape_pool(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    opara__window w;
    opara__shape y;
    uint32_t k = 0, i;
    opara_result r = opara__spatial_rank(c, x, &k);
    int64_t ceil_mode = opara__attr_int(c->n, "ceil_mode", 0);
    if (r == OPARA_OK) r = opara__read_window(c, k, 1, &w);
    if (r != OPARA_OK) return r;
    y = *x;
    for (i = 0; i < k && r == OPARA_OK; ++i) r = opara__window_out(c, &w, k, i, x->dims[2 + i], ceil_mode != 0, &y.dims[2 + i]);
    if (r != OPARA_OK) return r;
    opara__record_window(c, &w, k, x, 0, NULL);
    if (c->params) c->params->u.window.ceil_mode = ceil_mode != 0;
    for (i = 0; i < c->n->n_outputs && r == OPARA_OK; ++i) r = opara__set_out(c, i, &y); /* MaxPool Indices: same shape */
    return r;
}

/* Conv and the quantized convolutions (their input, weight and bias at other positions). */
static opara_result opara__shape_conv_of(opara__shape_ctx* c, const opara__shape* x, const opara__shape* wt,
                                         const opara__shape* bias) {
    int64_t group = opara__attr_int(c->n, "group", 1);
    opara__window w;
    opara__shape y;
    opara__sbuf b;
    uint32_t k = 0, i;
    opara_result r = opara__spatial_rank(c, x, &k);
    if (r != OPARA_OK) return r;
    if (wt->ndim != x->ndim)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "weight %s and input %s differ in rank", opara__sh(&b, 0, wt),
                                 opara__sh(&b, 1, x));
    if (group < 1 || wt->dims[0] % group ||
        (!opara__unknown(c, x->dims[1]) && (group > x->dims[1] || x->dims[1] % group || x->dims[1] / group != wt->dims[1])))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %s, weight %s and group %lld do not agree on channels",
                                 opara__sh(&b, 0, x), opara__sh(&b, 1, wt), (long long)group);
    if (bias && (bias->ndim != 1 || opara__dims_differ(c, bias->dims[0], wt->dims[0])))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "bias %s is not [%lld]", opara__sh(&b, 0, bias), (long long)wt->dims[0]);
    r = opara__read_window(c, k, 0, &w);
    if (r != OPARA_OK) return r;
    for (i = 0; i < k; ++i) {
        if (opara__node_attr(c->n, "kernel_shape") && w.kernel[i] != wt->dims[2 + i])
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "kernel_shape[%u] = %lld but the weight is %s", i,
                                     (long long)w.kernel[i], opara__sh(&b, 0, wt));
        w.kernel[i] = wt->dims[2 + i];
        if (w.kernel[i] < 1) return opara__shape_fail(c, OPARA_ERR_SHAPE, "weight %s has an empty kernel", opara__sh(&b, 0, wt));
    }
    y.ndim = x->ndim;
    y.dims[0] = x->dims[0];
    y.dims[1] = wt->dims[0];
    for (i = 0; i < k && r == OPARA_OK; ++i) r = opara__window_out(c, &w, k, i, x->dims[2 + i], 0, &y.dims[2 + i]);
    if (r != OPARA_OK) return r;
    opara__record_window(c, &w, k, x, 0, NULL);
    if (c->params) c->params->u.window.group = group;
    return opara__set_out(c, 0, &y);
}

static opara_result opara__shape_conv(opara__shape_ctx* c) {
    return opara__shape_conv_of(c, c->in[0], c->in[1], c->n->n_inputs > 2 ? c->in[2] : NULL);
}

/* Input k of a quantized operator, when present: one value (a scalar or [1]), or, where n >= 0 is
   allowed, a 1-D tensor of n values (per channel, row or column). */
static opara_result opara__quant_operand(opara__shape_ctx* c, uint32_t k, const char* what, int64_t n) {
    const opara__shape* s = k < c->n->n_inputs ? c->in[k] : NULL;
    opara__sbuf b;
    if (!s || (s->ndim == 0) || (s->ndim == 1 && s->dims[0] == 1)) return OPARA_OK;
    if (n >= 0 && s->ndim == 1 && !opara__dims_differ(c, s->dims[0], n)) return OPARA_OK;
    if (n >= 0)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "%s (input %u) is %s: neither one value nor [%lld]", what, k,
                                 opara__sh(&b, 0, s), (long long)n);
    return opara__shape_fail(c, OPARA_ERR_SHAPE, "%s (input %u) is %s, not one value", what, k, opara__sh(&b, 0, s));
}

/* ConvInteger (x, w, x_zero_point, w_zero_point) and QLinearConv (x, x_scale, x_zero_point, w,
   w_scale, w_zero_point, y_scale, y_zero_point, B): Conv's geometry; the weight's quantization per
   tensor or per output channel, the input's and output's per tensor. */
static opara_result opara__shape_quant_conv(opara__shape_ctx* c) {
    int q = c->n->op == OPARA__OP_QLINEAR_CONV;
    const opara__shape* wt = c->in[q ? 3 : 1];
    opara_result r = opara__shape_conv_of(c, c->in[0], wt, q && c->n->n_inputs > 8 ? c->in[8] : NULL);
    int64_t m = wt->ndim >= 1 ? wt->dims[0] : -1;
    if (r != OPARA_OK || !q) {
        if (r == OPARA_OK) r = opara__quant_operand(c, 2, "x_zero_point", -1);
        if (r == OPARA_OK) r = opara__quant_operand(c, 3, "w_zero_point", m);
        return r;
    }
    if (r == OPARA_OK) r = opara__quant_operand(c, 1, "x_scale", -1);
    if (r == OPARA_OK) r = opara__quant_operand(c, 2, "x_zero_point", -1);
    if (r == OPARA_OK) r = opara__quant_operand(c, 4, "w_scale", m);
    if (r == OPARA_OK) r = opara__quant_operand(c, 5, "w_zero_point", m);
    if (r == OPARA_OK) r = opara__quant_operand(c, 6, "y_scale", -1);
    if (r == OPARA_OK) r = opara__quant_operand(c, 7, "y_zero_point", -1);
    return r;
}

/* QuantizeLinear and DequantizeLinear (x, scale, zero_point): the output has x's shape; the scale is
   one value or 1-D along 'axis' (default 1), the zero point shaped like it. Blocked quantization
   (opset 21's block_size) is refused. */
static opara_result opara__shape_quantize(opara__shape_ctx* c) {
    const opara__shape *x = c->in[0], *scale = c->in[1], *zp = c->n->n_inputs > 2 ? c->in[2] : NULL;
    int64_t block = opara__attr_int(c->n, "block_size", 0), axis = 0;
    int per_axis = !(scale->ndim == 0 || (scale->ndim == 1 && scale->dims[0] == 1));
    opara__sbuf b;
    if (block != 0)
        return opara__shape_fail(c, OPARA_ERR_UNSUPPORTED, "blocked quantization (block_size %lld) is not supported",
                                 (long long)block);
    if (per_axis) {
        opara_result r = opara__axis_arg(c, "axis", 1, x->ndim, &axis);
        if (r != OPARA_OK) return r;
        if (scale->ndim != 1 || opara__dims_differ(c, scale->dims[0], x->dims[axis]))
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "scale %s is neither one value nor [%lld] along axis %lld of %s",
                                     opara__sh(&b, 0, scale), (long long)x->dims[axis], (long long)axis, opara__sh(&b, 1, x));
    }
    if (zp && (zp->ndim != scale->ndim || (zp->ndim == 1 && opara__dims_differ(c, zp->dims[0], scale->dims[0]))))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "zero point %s and scale %s differ in shape", opara__sh(&b, 0, zp),
                                 opara__sh(&b, 1, scale));
    if (c->params) c->params->u.quant.per_axis = per_axis, c->params->axis = axis;
    return opara__set_out(c, 0, x);
}

/* DynamicQuantizeLinear: y has x's shape, y_scale and y_zero_point are scalars. */
static opara_result opara__shape_dynamic_quantize(opara__shape_ctx* c) {
    opara__shape scalar;
    opara_result r = opara__set_out(c, 0, c->in[0]);
    uint32_t k;
    scalar.ndim = 0;
    for (k = 1; k < c->n->n_outputs && r == OPARA_OK; ++k) r = opara__set_out(c, k, &scalar);
    return r;
}

/* ConvTranspose: out = stride*(in-1) + output_padding + (kernel-1)*dilation + 1 - pad_begin - pad_end,
   or output_shape when given, or in*stride with SAME_* auto_pad. */
static opara_result opara__shape_conv_transpose(opara__shape_ctx* c) {
    const opara__shape *x = c->in[0], *wt = c->in[1], *bias = c->n->n_inputs > 2 ? c->in[2] : NULL;
    int64_t group = opara__attr_int(c->n, "group", 1), t;
    uint32_t k = 0, i, n_os;
    const int64_t* os = opara__attr_ints(c->n, "output_shape", &n_os);
    opara__window w;
    opara__shape y;
    opara__sbuf b;
    opara_result r = opara__spatial_rank(c, x, &k);
    if (r != OPARA_OK) return r;
    if (wt->ndim != x->ndim || group < 1 || opara__dims_differ(c, wt->dims[0], x->dims[1]) ||
        (!opara__unknown(c, x->dims[1]) && x->dims[1] % group))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %s, weight %s and group %lld do not agree", opara__sh(&b, 0, x),
                                 opara__sh(&b, 1, wt), (long long)group);
    r = opara__read_window(c, k, 0, &w);
    if (r != OPARA_OK) return r;
    y.ndim = x->ndim;
    y.dims[0] = x->dims[0];
    if (!opara__mul_i64(wt->dims[1], group, &y.dims[1]) || y.dims[1] > OPARA__SHAPE_DIM_MAX)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "weight %s with group %lld", opara__sh(&b, 0, wt), (long long)group);
    if (bias && (bias->ndim != 1 || opara__dims_differ(c, bias->dims[0], y.dims[1])))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "bias %s is not [%lld]", opara__sh(&b, 0, bias), (long long)y.dims[1]);
    if (os && n_os != k && n_os != k + 2)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "output_shape has %u values for %u spatial dims", n_os, k);
    for (i = 0; i < k; ++i) {
        int64_t eff;
        w.kernel[i] = wt->dims[2 + i];
        if (os) {
            y.dims[2 + i] = os[n_os - k + i];
            continue;
        }
        if (opara__unknown(c, x->dims[2 + i])) {
            y.dims[2 + i] = -1;
            continue;
        }
        if (w.auto_pad == OPARA__AUTO_PAD_SAME_UPPER || w.auto_pad == OPARA__AUTO_PAD_SAME_LOWER) {
            if (!opara__mul_i64(x->dims[2 + i], w.strides[i], &y.dims[2 + i])) y.dims[2 + i] = -1;
            continue;
        }
        if (w.auto_pad == OPARA__AUTO_PAD_VALID) w.pads[i] = w.pads[k + i] = 0;
        if (x->dims[2 + i] < 1 || w.kernel[i] < 1 || !opara__mul_i64(w.strides[i], x->dims[2 + i] - 1, &t) ||
            !opara__mul_i64(w.kernel[i] - 1, w.dilations[i], &eff) || t > OPARA__SHAPE_DIM_MAX || eff > OPARA__SHAPE_DIM_MAX)
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "spatial dim %u: input %s and weight %s", i, opara__sh(&b, 0, x),
                                     opara__sh(&b, 1, wt));
        y.dims[2 + i] = t + w.out_pad[i] + eff + 1 - w.pads[i] - w.pads[k + i];
    }
    opara__record_window(c, &w, k, x, 1, os ? os + (n_os - k) : NULL);
    if (c->params) c->params->u.window.group = group;
    return opara__set_out(c, 0, &y);
}

static opara_result opara__shape_global_pool(opara__shape_ctx* c) {
    opara__shape y = *c->in[0];
    uint32_t k = 0, i;
    opara_result r = opara__spatial_rank(c, c->in[0], &k);
    if (r != OPARA_OK) return r;
    for (i = 0; i < k; ++i) y.dims[2 + i] = 1;
    return opara__set_out(c, 0, &y);
}

static opara_result opara__shape_batch_norm(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    opara__sbuf b;
    uint32_t k;
    if (x->ndim < 2) return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %s needs rank >= 2", opara__sh(&b, 0, x));
    for (k = 1; k < 5; ++k)
        if (c->in[k]->ndim != 1 || opara__dims_differ(c, c->in[k]->dims[0], x->dims[1]))
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %u is %s, expected [%lld] for input %s", k,
                                     opara__sh(&b, 0, c->in[k]), (long long)x->dims[1], opara__sh(&b, 1, x));
    for (k = 0; k < c->n->n_outputs; ++k) {
        opara_result r = opara__set_out(c, k, k == 0 ? x : c->in[1]);
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

/* Two shapes that must agree dim by dim (tolerant: unknown dims agree with anything). */
static int opara__shapes_differ(const opara__shape_ctx* c, const opara__shape* a, const opara__shape* b) {
    int32_t d;
    if (a->ndim != b->ndim) return 1;
    for (d = 0; d < a->ndim; ++d)
        if (opara__dims_differ(c, a->dims[d], b->dims[d])) return 1;
    return 0;
}

/* PRelu: slope broadcasts to X (unidirectionally); the output is X's shape. */
static opara_result opara__shape_prelu(opara__shape_ctx* c) {
    opara__shape y;
    opara__sbuf b;
    if (!opara__broadcast(c, c->in[0], c->in[1], &y) || opara__shapes_differ(c, &y, c->in[0]))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "slope %s does not broadcast to X %s", opara__sh(&b, 0, c->in[1]),
                                 opara__sh(&b, 1, c->in[0]));
    opara__record_broadcast(c, c->in[0]);
    return opara__set_out(c, 0, c->in[0]);
}

/* InstanceNormalization: X [N, C, spatial...], scale and B [C]. */
static opara_result opara__shape_instance_norm(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    opara__sbuf b;
    uint32_t k = 0, i;
    opara_result r = opara__spatial_rank(c, x, &k);
    if (r != OPARA_OK) return r;
    for (i = 1; i < 3; ++i)
        if (c->in[i]->ndim != 1 || opara__dims_differ(c, c->in[i]->dims[0], x->dims[1]))
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %u is %s, expected [%lld] for input %s", i,
                                     opara__sh(&b, 0, c->in[i]), (long long)x->dims[1], opara__sh(&b, 1, x));
    return opara__set_out(c, 0, x);
}

/* LRN: X [N, C, ...], size required and >= 1. */
static opara_result opara__shape_lrn(opara__shape_ctx* c) {
    opara__sbuf b;
    if (c->in[0]->ndim < 2) return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %s needs rank >= 2", opara__sh(&b, 0, c->in[0]));
    if (!opara__node_attr(c->n, "size") || opara__attr_int(c->n, "size", 0) < 1)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "attribute 'size' is required and must be >= 1");
    if (c->params) {
        c->params->u.lrn.size = opara__attr_int(c->n, "size", 1);
        c->params->u.lrn.alpha = opara__attr_float(c->n, "alpha", 1e-4f);
        c->params->u.lrn.beta = opara__attr_float(c->n, "beta", 0.75f);
        c->params->u.lrn.bias = opara__attr_float(c->n, "bias", 1.0f);
    }
    return opara__set_out(c, 0, c->in[0]);
}

/* MaxUnpool: X and I [N, C, spatial...] alike; the output is output_shape (the canonical attribute)
   or, without it, (in - 1) * stride + kernel - pads per spatial dim. */
static opara_result opara__shape_max_unpool(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    opara__window w;
    opara__shape y;
    opara__sbuf b;
    uint32_t k = 0, i, n_os = 0;
    const int64_t* os = opara__attr_ints(c->n, "output_shape", &n_os);
    opara_result r = opara__spatial_rank(c, x, &k);
    if (r == OPARA_OK) r = opara__read_window(c, k, 1, &w);
    if (r != OPARA_OK) return r;
    if (opara__shapes_differ(c, c->in[1], x))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "indices %s and input %s differ", opara__sh(&b, 0, c->in[1]),
                                 opara__sh(&b, 1, x));
    if (os && (n_os != (uint32_t)x->ndim || opara__dims_differ(c, os[0], x->dims[0]) || opara__dims_differ(c, os[1], x->dims[1])))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "output_shape has %u values or other N, C than input %s", n_os,
                                 opara__sh(&b, 0, x));
    y = *x;
    for (i = 0; i < k; ++i) {
        int64_t full;
        if (os) {
            if (os[2 + i] < 1 || os[2 + i] > OPARA__SHAPE_DIM_MAX)
                return opara__shape_fail(c, OPARA_ERR_SHAPE, "output_shape[%u] = %lld", 2 + i, (long long)os[2 + i]);
            y.dims[2 + i] = os[2 + i];
            continue;
        }
        if (opara__unknown(c, x->dims[2 + i])) {
            y.dims[2 + i] = -1;
            continue;
        }
        if (!opara__mul_i64(x->dims[2 + i] - 1, w.strides[i], &full) || full > OPARA__SHAPE_DIM_MAX ||
            full + w.kernel[i] - w.pads[i] - w.pads[k + i] < 1)
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "spatial dim %u of input %s gives no output", i, opara__sh(&b, 0, x));
        y.dims[2 + i] = full + w.kernel[i] - w.pads[i] - w.pads[k + i];
    }
    w.auto_pad = OPARA__AUTO_PAD_NOTSET; /* MaxUnpool has none */
    opara__record_window(c, &w, k, x, 0, NULL);
    return opara__set_out(c, 0, &y);
}

/* Dropout (inference, with its mask): Y and the mask have X's shape. */
static opara_result opara__shape_dropout(opara__shape_ctx* c) {
    uint32_t k;
    for (k = 0; k < c->n->n_outputs; ++k) {
        opara_result r = opara__set_out(c, k, c->in[0]);
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

/* ---- Einsum ---------------------------------------------------------------------------------- */

/* Labels: a-z 0..25, A-Z 26..51, the dims an ellipsis covers 52.. (right-aligned across operands). */
#define OPARA__EINSUM_LABELS (52 + OPARA_MAX_DIMS)

typedef struct opara__einsum_term {
    int32_t n;
    int labels[OPARA_MAX_DIMS];
} opara__einsum_term;

static int opara__einsum_letter(char ch) {
    return ch >= 'a' && ch <= 'z' ? ch - 'a' : ch >= 'A' && ch <= 'Z' ? 26 + (ch - 'A') : -1;
}

/* Parses one term (up to ',', '-' or the end) for an operand of `rank` dims (-1: the output, whose
   ellipsis takes `ell` dims); the ellipsis dims of an operand are right-aligned among `ell`. */
static int opara__einsum_term_parse(const char** s, int32_t rank, int32_t ell, opara__einsum_term* t) {
    int32_t letters = 0, k, at = -1;
    const char* p;
    int labels[OPARA_MAX_DIMS];
    t->n = 0;
    for (p = *s; *p && *p != ',' && *p != '-'; ++p) {
        if (*p == ' ') continue;
        if (p[0] == '.' && p[1] == '.' && p[2] == '.' && at < 0) {
            at = letters, p += 2;
            continue;
        }
        if (opara__einsum_letter(*p) < 0 || letters >= OPARA_MAX_DIMS) return 0;
        labels[letters++] = opara__einsum_letter(*p);
    }
    *s = p;
    if (rank >= 0 && (at < 0 ? letters != rank : letters > rank)) return 0;
    {
        int32_t e = at < 0 ? 0 : rank >= 0 ? rank - letters : ell;
        if (letters + e > OPARA_MAX_DIMS) return 0;
        for (k = 0; k < letters + e; ++k) {
            int32_t j = at < 0 || k < at ? k : k < at + e ? -1 : k - e;
            t->labels[k] = j >= 0 ? labels[j] : 52 + (ell - e) + (k - at);
        }
        t->n = letters + e;
    }
    return 1;
}

/* The equation's operands and output (implicit: the ellipsis dims, then the labels used once, in
   ASCII order); 0 when it is malformed for these operands. */
static int opara__einsum_parse(opara__shape_ctx* c, opara__einsum_term* in, opara__einsum_term* out, int32_t* ell) {
    const char* s = opara__attr_string(c->n, "equation", "");
    uint32_t k, count[OPARA__EINSUM_LABELS] = {0};
    int32_t i, e = 0, l;
    const char* p = s;
    for (k = 0; k < c->n->n_inputs; ++k) { /* the ellipsis' width: the most dims any operand leaves to it */
        int32_t letters = 0, dots = 0;
        for (; *p && *p != ',' && *p != '-'; ++p) letters += opara__einsum_letter(*p) >= 0, dots += *p == '.';
        if (dots && c->in[k]->ndim - letters > e) e = c->in[k]->ndim - letters;
        if (*p == ',') ++p;
    }
    *ell = e;
    for (k = 0; k < c->n->n_inputs; ++k) {
        if (!opara__einsum_term_parse(&s, c->in[k]->ndim, e, &in[k])) return 0;
        if (k + 1 < c->n->n_inputs && *s++ != ',') return 0;
        for (i = 0; i < in[k].n; ++i) count[in[k].labels[i]]++;
    }
    if (*s == ',') return 0;
    if (*s == '-') {
        if (s[1] != '>') return 0;
        s += 2;
        return opara__einsum_term_parse(&s, -1, e, out) && *s == 0;
    }
    out->n = 0;
    for (l = 52; l < 52 + e; ++l) out->labels[out->n++] = l;
    for (i = 0; i < 52; ++i) { /* ASCII order: the upper-case letters first */
        l = i < 26 ? 26 + i : i - 26;
        if (count[l] == 1 && out->n < OPARA_MAX_DIMS) out->labels[out->n++] = l;
    }
    return 1;
}

/* Einsum with one or two operands: the label sizes (ellipsis dims broadcast), the output shape and
   the record's strides. */
static opara_result opara__shape_einsum(opara__shape_ctx* c) {
    opara__einsum_term in[2], out;
    int64_t size[OPARA__EINSUM_LABELS];
    int32_t ell = 0, i, o, n_sum = 0, sum_of[OPARA__EINSUM_LABELS], out_of[OPARA__EINSUM_LABELS];
    uint32_t k;
    opara__shape y;
    if (c->n->n_inputs > 2) return opara__shape_fail(c, OPARA_ERR_SHAPE, "Einsum of more than 2 operands is not supported");
    if (!opara__einsum_parse(c, in, &out, &ell))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "equation '%s' does not fit the operands",
                                 opara__attr_string(c->n, "equation", ""));
    for (i = 0; i < OPARA__EINSUM_LABELS; ++i) size[i] = -2, sum_of[i] = out_of[i] = -1; /* -2: unused */
    for (k = 0; k < c->n->n_inputs; ++k)
        for (i = 0; i < in[k].n; ++i) {
            int l = in[k].labels[i];
            int64_t d = c->in[k]->dims[i];
            if (size[l] == -2 || size[l] == 1 || (l >= 52 && d != 1 && size[l] < 0)) size[l] = d;
            else if (d != size[l] && !(l >= 52 && d == 1) && !opara__unknown(c, d) && !opara__unknown(c, size[l]))
                return opara__shape_fail(c, OPARA_ERR_SHAPE, "label '%c' has sizes %lld and %lld", l < 26 ? 'a' + l : l < 52 ? 'A' + l - 26 : '.',
                                         (long long)size[l], (long long)d);
        }
    y.ndim = out.n;
    for (o = 0; o < out.n; ++o) {
        if (size[out.labels[o]] == -2 || out_of[out.labels[o]] >= 0)
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "output label %d is not an operand's, or repeated", (int)o);
        out_of[out.labels[o]] = o;
        y.dims[o] = size[out.labels[o]];
    }
    for (i = 0; i < OPARA__EINSUM_LABELS; ++i)
        if (size[i] != -2 && out_of[i] < 0) {
            if (n_sum >= OPARA_MAX_DIMS) return opara__shape_fail(c, OPARA_ERR_SHAPE, "too many summed labels");
            sum_of[i] = n_sum++;
        }
    if (c->params && c->mode == OPARA__SHAPE_STRICT) {
        opara__einsum_params* p = &c->params->u.einsum;
        p->n_sum = n_sum;
        for (i = 0; i < OPARA__EINSUM_LABELS; ++i)
            if (sum_of[i] >= 0) p->sum_dims[sum_of[i]] = size[i];
        for (k = 0; k < c->n->n_inputs; ++k) {
            int64_t stride = 1;
            for (i = in[k].n - 1; i >= 0; --i) {
                int l = in[k].labels[i];
                int64_t st = c->in[k]->dims[i] == 1 ? 0 : stride; /* a broadcast ellipsis dim */
                if (out_of[l] >= 0) p->out_strides[k][out_of[l]] += st;
                else p->sum_strides[k][sum_of[l]] += st;
                stride *= c->in[k]->dims[i];
            }
        }
    }
    return opara__set_out(c, 0, &y);
}

/* ---- data movement --------------------------------------------------------------------------- */

static opara_result opara__shape_concat(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    opara__shape y = *x;
    int64_t axis;
    uint32_t k;
    int32_t d;
    opara__sbuf b;
    opara_result r;
    if (!opara__node_attr(c->n, "axis")) return opara__shape_fail(c, OPARA_ERR_SHAPE, "attribute 'axis' is required");
    r = opara__axis_arg(c, "axis", 0, x->ndim, &axis);
    if (r != OPARA_OK) return r;
    for (k = 1; k < c->n->n_inputs; ++k) {
        const opara__shape* s = c->in[k];
        int ok = s->ndim == x->ndim;
        for (d = 0; ok && d < x->ndim; ++d) ok = d == axis || !opara__dims_differ(c, s->dims[d], x->dims[d]);
        if (!ok)
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %u %s does not match input 0 %s outside axis %lld", k,
                                     opara__sh(&b, 0, s), opara__sh(&b, 1, x), (long long)axis);
        if (opara__unknown(c, y.dims[axis]) || opara__unknown(c, s->dims[axis])) {
            y.dims[axis] = -1;
            continue;
        }
        y.dims[axis] += s->dims[axis];
        if (y.dims[axis] > OPARA__SHAPE_DIM_MAX) return opara__shape_fail(c, OPARA_ERR_LIMIT_EXCEEDED, "concatenation too long");
    }
    return opara__set_out(c, 0, &y);
}

static opara_result opara__shape_split(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    uint32_t n_split, k, n_out = c->n->n_outputs;
    const int64_t* split = opara__attr_ints(c->n, "split", &n_split);
    int64_t axis, total = 0;
    opara__sbuf b;
    opara_result r = opara__axis_arg(c, "axis", 0, x->ndim, &axis);
    if (r != OPARA_OK) return r;
    if (split) {
        if (n_split != n_out)
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "'split' has %u values for %u outputs", n_split, n_out);
        for (k = 0; k < n_split; ++k) {
            if (split[k] < 0 || split[k] > OPARA__SHAPE_DIM_MAX)
                return opara__shape_fail(c, OPARA_ERR_SHAPE, "split[%u] = %lld", k, (long long)split[k]);
            total += split[k];
        }
        if (opara__dims_differ(c, total, x->dims[axis]))
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "'split' sums to %lld but input %s has %lld along axis %lld",
                                     (long long)total, opara__sh(&b, 0, x), (long long)x->dims[axis], (long long)axis);
    } else if (!opara__unknown(c, x->dims[axis]) && x->dims[axis] % n_out) {
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %s: axis %lld (%lld) does not split into %u equal parts",
                                 opara__sh(&b, 0, x), (long long)axis, (long long)x->dims[axis], n_out);
    }
    for (k = 0; k < n_out && r == OPARA_OK; ++k) {
        opara__shape y = *x;
        y.dims[axis] = split ? split[k] : opara__unknown(c, x->dims[axis]) ? -1 : x->dims[axis] / n_out;
        r = opara__set_out(c, k, &y);
    }
    return r;
}

/* Number of elements a slice start:end:step selects in a dim of size d, and the first of them
   (ONNX Slice clamping). */
static int64_t opara__slice_range(int64_t start, int64_t end, int64_t step, int64_t d, int64_t* first) {
    int64_t diff, mag;
    if (start < 0) start += d;
    if (end < 0) end += d;
    if (step > 0) {
        start = start < 0 ? 0 : start > d ? d : start;
        end = end < 0 ? 0 : end > d ? d : end;
        diff = end - start;
        mag = step;
    } else {
        start = start < 0 ? 0 : start > d - 1 ? d - 1 : start;
        end = end < -1 ? -1 : end > d - 1 ? d - 1 : end;
        diff = start - end;
        mag = step == INT64_MIN ? INT64_MAX : -step;
    }
    *first = start;
    return diff <= 0 ? 0 : 1 + (diff - 1) / mag;
}

static opara_result opara__shape_slice(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    uint32_t ns, ne, na, nst, k;
    const int64_t* starts = opara__attr_ints(c->n, "starts", &ns);
    const int64_t* ends = opara__attr_ints(c->n, "ends", &ne);
    const int64_t* axes = opara__attr_ints(c->n, "axes", &na);
    const int64_t* steps = opara__attr_ints(c->n, "steps", &nst);
    opara__shape y = *x;
    int seen[OPARA_MAX_DIMS];
    opara__sbuf b;
    if (!starts || !ends || ns != ne || (axes && na != ns) || (steps && nst != ns) || ns > (uint32_t)x->ndim)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "needs 'starts' and 'ends' (and optional 'axes', 'steps') of one length <= rank %d",
                                 (int)x->ndim);
    memset(seen, 0, sizeof seen);
    for (k = 0; c->params && k < (uint32_t)x->ndim; ++k) c->params->u.slice.start[k] = 0, c->params->u.slice.step[k] = 1;
    for (k = 0; k < ns; ++k) {
        int64_t axis, step = steps ? steps[k] : 1, first = 0;
        if (!opara__norm_axis(axes ? axes[k] : (int64_t)k, x->ndim, &axis) || seen[axis])
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "axes[%u] = %lld is out of range or repeated for input %s", k,
                                     (long long)(axes ? axes[k] : (int64_t)k), opara__sh(&b, 0, x));
        if (step == 0) return opara__shape_fail(c, OPARA_ERR_SHAPE, "steps[%u] is 0", k);
        seen[axis] = 1;
        y.dims[axis] = opara__unknown(c, x->dims[axis]) ? -1
                                                        : opara__slice_range(starts[k], ends[k], step, x->dims[axis], &first);
        if (c->params) c->params->u.slice.start[axis] = first, c->params->u.slice.step[axis] = step;
    }
    for (k = 0; c->params && k < (uint32_t)x->ndim; ++k) c->params->u.slice.count[k] = y.dims[k];
    return opara__set_out(c, 0, &y);
}

static opara_result opara__shape_gather(opara__shape_ctx* c) {
    const opara__shape *x = c->in[0], *idx = c->in[1];
    opara__shape y;
    int64_t axis;
    int32_t i;
    opara_result r = opara__axis_arg(c, "axis", 0, x->ndim, &axis);
    if (r != OPARA_OK) return r;
    if (x->ndim + idx->ndim - 1 > OPARA_MAX_DIMS)
        return opara__shape_fail(c, OPARA_ERR_LIMIT_EXCEEDED, "output rank %d exceeds %d", (int)(x->ndim + idx->ndim - 1),
                                 OPARA_MAX_DIMS);
    if (x->dims[axis] == 0 && opara__shape_numel(idx) > 0)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "gathers from an empty axis");
    y.ndim = 0;
    for (i = 0; i < axis; ++i) y.dims[y.ndim++] = x->dims[i];
    for (i = 0; i < idx->ndim; ++i) y.dims[y.ndim++] = idx->dims[i];
    for (i = (int32_t)axis + 1; i < x->ndim; ++i) y.dims[y.ndim++] = x->dims[i];
    return opara__set_out(c, 0, &y);
}

/* ---- GatherElements .. ReverseSequence (the gather/scatter and index-pattern operators) ---------- */

/* a * b where either may be unknown (tolerant mode): unknown gives -1. */
static int64_t opara__dim_times(const opara__shape_ctx* c, int64_t a, int64_t b) {
    int64_t r;
    if (opara__unknown(c, a) || opara__unknown(c, b) || !opara__mul_i64(a, b, &r)) return -1;
    return r;
}

/* GatherElements, ScatterElements, Scatter: indices (and updates) of the data's rank, no dim larger
   than the data's off the axis. */
static opara_result opara__check_elements_indices(opara__shape_ctx* c, const opara__shape* idx, int64_t axis) {
    const opara__shape* x = c->in[0];
    int32_t d;
    opara__sbuf b;
    if (idx->ndim != x->ndim)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "indices %s must have the rank of data %s", opara__sh(&b, 0, idx),
                                 opara__sh(&b, 1, x));
    for (d = 0; d < x->ndim; ++d)
        if (d != axis && idx->dims[d] > x->dims[d] && !opara__unknown(c, x->dims[d]))
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "indices %s exceed data %s on dim %d", opara__sh(&b, 0, idx),
                                     opara__sh(&b, 1, x), (int)d);
    return OPARA_OK;
}

static opara_result opara__scatter_reduction_arg(opara__shape_ctx* c) {
    const char* s = opara__attr_string(c->n, "reduction", "none");
    opara__scatter_reduction red = OPARA__SCATTER_NONE;
    if (strcmp(s, "add") == 0) red = OPARA__SCATTER_ADD;
    else if (strcmp(s, "mul") == 0) red = OPARA__SCATTER_MUL;
    else if (strcmp(s, "max") == 0) red = OPARA__SCATTER_MAX;
    else if (strcmp(s, "min") == 0) red = OPARA__SCATTER_MIN;
    else if (strcmp(s, "none") != 0)
        return opara__shape_fail(c, OPARA_ERR_INVALID_ARGS, "reduction '%s' is not one of none, add, mul, max, min", s);
    if (c->params) c->params->u.index.reduction = red;
    return OPARA_OK;
}

static opara_result opara__shape_gather_elements(opara__shape_ctx* c) {
    int64_t axis;
    int scatter = c->n->op != OPARA__OP_GATHER_ELEMENTS;
    opara__sbuf b;
    opara_result r = opara__axis_arg(c, "axis", 0, c->in[0]->ndim, &axis);
    if (r == OPARA_OK) r = opara__check_elements_indices(c, c->in[1], axis);
    if (r == OPARA_OK && scatter && c->n->op == OPARA__OP_SCATTER_ELEMENTS) r = opara__scatter_reduction_arg(c);
    if (r != OPARA_OK) return r;
    if (!scatter) return opara__set_out(c, 0, c->in[1]);
    if (c->in[2]->ndim != c->in[1]->ndim || (c->mode == OPARA__SHAPE_STRICT && opara__shape_numel(c->in[2]) != opara__shape_numel(c->in[1])))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "updates %s must have the shape of indices %s", opara__sh(&b, 0, c->in[2]),
                                 opara__sh(&b, 1, c->in[1]));
    for (axis = 0; axis < c->in[1]->ndim; ++axis)
        if (opara__dims_differ(c, c->in[1]->dims[axis], c->in[2]->dims[axis]))
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "updates %s must have the shape of indices %s",
                                     opara__sh(&b, 0, c->in[2]), opara__sh(&b, 1, c->in[1]));
    return opara__set_out(c, 0, c->in[0]);
}

/* GatherND and ScatterND: the tuple length k (the indices' last dim) and the batch dims b. */
static opara_result opara__nd_index_arg(opara__shape_ctx* c, int64_t b, int64_t* k) {
    const opara__shape *x = c->in[0], *idx = c->in[1];
    int32_t d;
    opara__sbuf sb;
    if (idx->ndim < 1 || b < 0 || b >= idx->ndim || b >= x->ndim)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "indices %s and batch_dims %lld do not fit data %s", opara__sh(&sb, 0, idx),
                                 (long long)b, opara__sh(&sb, 1, x));
    *k = idx->dims[idx->ndim - 1];
    if (opara__unknown(c, *k)) return OPARA_ERR_SHAPE; /* tolerant: the output's rank depends on it */
    if (*k < 1 || *k > x->ndim - b)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "index tuples of length %lld for data %s (batch_dims %lld)", (long long)*k,
                                 opara__sh(&sb, 0, x), (long long)b);
    for (d = 0; d < b; ++d)
        if (opara__dims_differ(c, idx->dims[d], x->dims[d]))
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "batch dim %d differs between indices %s and data %s", (int)d,
                                     opara__sh(&sb, 0, idx), opara__sh(&sb, 1, x));
    return OPARA_OK;
}

static opara_result opara__shape_gather_nd(opara__shape_ctx* c) {
    const opara__shape *x = c->in[0], *idx = c->in[1];
    int64_t b = opara__attr_int(c->n, "batch_dims", 0), k;
    opara__shape y;
    int32_t d;
    opara_result r = opara__nd_index_arg(c, b, &k);
    if (r != OPARA_OK) return r;
    if (c->params) c->params->u.index.batch_dims = b;
    y.ndim = 0;
    for (d = 0; d < idx->ndim - 1; ++d) y.dims[y.ndim++] = idx->dims[d];
    for (d = (int32_t)(b + k); d < x->ndim; ++d) y.dims[y.ndim++] = x->dims[d];
    return opara__set_out(c, 0, &y);
}

static opara_result opara__shape_scatter_nd(opara__shape_ctx* c) {
    const opara__shape *x = c->in[0], *idx = c->in[1], *upd = c->in[2];
    int64_t k;
    int32_t d, n = 0;
    opara__sbuf b;
    opara_result r = opara__nd_index_arg(c, 0, &k);
    if (r == OPARA_OK) r = opara__scatter_reduction_arg(c);
    if (r != OPARA_OK) return r;
    if (upd->ndim != idx->ndim - 1 + x->ndim - (int32_t)k) n = -1;
    for (d = 0; n == 0 && d < upd->ndim; ++d) {
        int64_t want = d < idx->ndim - 1 ? idx->dims[d] : x->dims[d - (idx->ndim - 1) + k];
        if (opara__dims_differ(c, upd->dims[d], want)) n = -1;
    }
    if (n < 0)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "updates %s do not fit indices %s and data %s", opara__sh(&b, 0, upd),
                                 opara__sh(&b, 1, idx), opara__sh(&b, 2, x));
    return opara__set_out(c, 0, x);
}

static opara_result opara__shape_size(opara__shape_ctx* c) {
    opara__shape y;
    y.ndim = 0;
    return opara__set_out(c, 0, &y);
}

/* Trilu's and EyeLike's diagonal k, clamped to +-OPARA__SHAPE_DIM_MAX: past every row and column
   either way it means the same, and the kernels add it to indices without overflow. */
static int64_t opara__diagonal_arg(const opara__shape_ctx* c) {
    int64_t k = opara__attr_int(c->n, "k", 0);
    return OPARA__MAX(-OPARA__SHAPE_DIM_MAX, OPARA__MIN(k, OPARA__SHAPE_DIM_MAX));
}

static opara_result opara__shape_trilu(opara__shape_ctx* c) {
    opara__sbuf b;
    if (c->in[0]->ndim < 2)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %s has rank < 2", opara__sh(&b, 0, c->in[0]));
    if (c->params) {
        c->params->u.index.upper = opara__attr_int(c->n, "upper", 1) != 0;
        c->params->u.index.k = opara__diagonal_arg(c);
    }
    return opara__set_out(c, 0, c->in[0]);
}

static opara_result opara__shape_tile(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    uint32_t n, d;
    const int64_t* repeats = opara__attr_ints(c->n, "repeats", &n);
    opara__shape y = *x;
    opara__sbuf b;
    if (!repeats || n != (uint32_t)x->ndim)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "'repeats' needs one value per dim of input %s", opara__sh(&b, 0, x));
    for (d = 0; d < n; ++d) {
        if (repeats[d] < 0 || repeats[d] > OPARA__SHAPE_DIM_MAX)
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "repeats[%u] = %lld", d, (long long)repeats[d]);
        y.dims[d] = opara__dim_times(c, x->dims[d], repeats[d]);
        if (y.dims[d] < 0 && c->mode == OPARA__SHAPE_STRICT)
            return opara__shape_fail(c, OPARA_ERR_LIMIT_EXCEEDED, "dim %u times %lld overflows", d, (long long)repeats[d]);
    }
    return opara__set_out(c, 0, &y);
}

/* DepthToSpace and SpaceToDepth: [N, C, H, W] and a blocksize b; the record gets b and the mode. */
static opara_result opara__shape_depth_space(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    int64_t bs = opara__attr_int(c->n, "blocksize", 0), b2;
    int to_space = c->n->op == OPARA__OP_DEPTH_TO_SPACE;
    const char* mode = opara__attr_string(c->n, "mode", "DCR");
    opara__shape y = *x;
    opara__sbuf sb;
    if (x->ndim != 4 || bs < 1 || bs > 65536)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "needs a 4-D input (not %s) and a blocksize >= 1 (not %lld)",
                                 opara__sh(&sb, 0, x), (long long)bs);
    if (to_space && strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
        return opara__shape_fail(c, OPARA_ERR_INVALID_ARGS, "mode '%s' is not DCR or CRD", mode);
    b2 = bs * bs;
    if (to_space) {
        if (!opara__unknown(c, x->dims[1]) && x->dims[1] % b2)
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "channels of %s are not a multiple of blocksize^2 = %lld",
                                     opara__sh(&sb, 0, x), (long long)b2);
        y.dims[1] = opara__unknown(c, x->dims[1]) ? -1 : x->dims[1] / b2;
        y.dims[2] = opara__dim_times(c, x->dims[2], bs);
        y.dims[3] = opara__dim_times(c, x->dims[3], bs);
    } else {
        if ((!opara__unknown(c, x->dims[2]) && x->dims[2] % bs) || (!opara__unknown(c, x->dims[3]) && x->dims[3] % bs))
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "height and width of %s are not multiples of blocksize %lld",
                                     opara__sh(&sb, 0, x), (long long)bs);
        y.dims[1] = opara__dim_times(c, x->dims[1], b2);
        y.dims[2] = opara__unknown(c, x->dims[2]) ? -1 : x->dims[2] / bs;
        y.dims[3] = opara__unknown(c, x->dims[3]) ? -1 : x->dims[3] / bs;
    }
    if (c->params) c->params->u.index.blocksize = bs, c->params->u.index.crd = to_space && strcmp(mode, "CRD") == 0;
    return opara__set_out(c, 0, &y);
}

OPARA__PRIVATE void opara__depth_space_view(const int64_t* x_dims, int64_t b, int to_space, int crd, int64_t* dims,
                                            int64_t* strides) {
    int64_t n = x_dims[0], c = x_dims[1], h = x_dims[2], w = x_dims[3], hw = h * w, cp = c / (b * b);
    if (to_space) { /* [N, C', H, b, W, b] from [N, b, b, C', H, W] (DCR) or [N, C', b, b, H, W] (CRD) */
        dims[0] = n, dims[1] = cp, dims[2] = h, dims[3] = b, dims[4] = w, dims[5] = b;
        strides[0] = c * hw, strides[2] = w, strides[4] = 1;
        strides[1] = crd ? b * b * hw : hw;
        strides[3] = crd ? b * hw : b * cp * hw;
        strides[5] = crd ? hw : cp * hw;
    } else { /* [N, b, b, C, H / b, W / b] from [N, C, H / b, b, W / b, b] */
        dims[0] = n, dims[1] = b, dims[2] = b, dims[3] = c, dims[4] = h / b, dims[5] = w / b;
        strides[0] = c * hw, strides[1] = w, strides[2] = 1, strides[3] = hw, strides[4] = b * w, strides[5] = b;
    }
}

OPARA__PRIVATE uint64_t opara__dtype_one_bits(opara_dtype t) {
    switch (t) {
    case OPARA_DTYPE_F32: return 0x3F800000u;
    case OPARA_DTYPE_F64: return UINT64_C(0x3FF0000000000000);
    case OPARA_DTYPE_F16: return 0x3C00u;
    case OPARA_DTYPE_U8: case OPARA_DTYPE_I8: case OPARA_DTYPE_I32: case OPARA_DTYPE_I64: case OPARA_DTYPE_BOOL: return 1;
    case OPARA_DTYPE_UNDEFINED: case OPARA_DTYPE_FORCE_U32: break;
    }
    return 0;
}

static opara_result opara__shape_eye_like(opara__shape_ctx* c) {
    opara__sbuf b;
    if (c->in[0]->ndim != 2) return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %s is not 2-D", opara__sh(&b, 0, c->in[0]));
    if (c->params) c->params->u.index.k = opara__diagonal_arg(c);
    return opara__set_out(c, 0, c->in[0]);
}

/* OneHot in canonical form: inputs indices and values (2 elements), depth an attribute. */
static opara_result opara__shape_one_hot(opara__shape_ctx* c) {
    const opara__shape *idx = c->in[0], *values = c->in[1];
    int64_t depth = opara__attr_int(c->n, "depth", -1), axis = opara__attr_int(c->n, "axis", -1);
    opara__shape y;
    int32_t d;
    opara__sbuf b;
    if (depth < 1 || depth > OPARA__SHAPE_DIM_MAX)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "depth %lld is not positive", (long long)depth);
    if (values->ndim != 1 || opara__dims_differ(c, values->dims[0], 2))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "values %s must hold 2 elements (off, on)", opara__sh(&b, 0, values));
    if (!opara__norm_axis(axis, idx->ndim + 1, &axis))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "axis %lld is out of range for rank %d", (long long)axis,
                                 (int)idx->ndim + 1);
    y.ndim = 0;
    for (d = 0; d <= idx->ndim; ++d) y.dims[y.ndim++] = d == axis ? depth : idx->dims[d < axis ? d : d - 1];
    if (c->params) c->params->axis = axis, c->params->u.index.depth = depth;
    return opara__set_out(c, 0, &y);
}

static opara_result opara__shape_reverse_sequence(opara__shape_ctx* c) {
    const opara__shape *x = c->in[0], *lens = c->in[1];
    int64_t batch_axis = opara__attr_int(c->n, "batch_axis", 1), time_axis = opara__attr_int(c->n, "time_axis", 0);
    opara__sbuf b;
    if (x->ndim < 2 || (batch_axis != 0 && batch_axis != 1) || (time_axis != 0 && time_axis != 1) || batch_axis == time_axis)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "needs rank >= 2 (not %s) and batch_axis, time_axis 0 and 1 in some order",
                                 opara__sh(&b, 0, x));
    if (lens->ndim != 1 || opara__dims_differ(c, lens->dims[0], x->dims[batch_axis]))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "sequence_lens %s must have one length per batch of %s",
                                 opara__sh(&b, 0, lens), opara__sh(&b, 1, x));
    if (c->params) c->params->u.index.batch_axis = batch_axis, c->params->u.index.time_axis = time_axis;
    return opara__set_out(c, 0, x);
}

/* Tolerant Reshape: the -1 is inferred when the known dims and the symbolic batches of the input
   and the target match up (then it is a number, or the batch itself); otherwise it is unknown. */
static opara_result opara__reshape_tolerant(opara__shape_ctx* c, const opara__shape* x, opara__shape* y, int infer,
                                            int64_t out_known) {
    int64_t in_known = 1;
    int in_batch = 0, out_batch = 0, unknown = 0;
    int32_t d;
    for (d = 0; d < x->ndim; ++d) {
        if (x->dims[d] == OPARA__DIM_BATCH) in_batch++;
        else if (!opara__mul_i64(in_known, x->dims[d], &in_known) || in_known > OPARA__SHAPE_NUMEL_MAX) unknown = 1;
    }
    for (d = 0; d < y->ndim; ++d) {
        if (d == infer) continue;
        if (y->dims[d] == OPARA__DIM_BATCH) out_batch++;
        else if (y->dims[d] < 0) unknown = 1;
    }
    if (infer < 0) return opara__set_out(c, 0, y);
    if (!unknown && in_batch == out_batch && out_known && in_known % out_known == 0) y->dims[infer] = in_known / out_known;
    else if (!unknown && in_batch == 1 && out_batch == 0 && in_known == out_known) y->dims[infer] = OPARA__DIM_BATCH;
    else y->dims[infer] = -1;
    return opara__set_out(c, 0, y);
}

static opara_result opara__shape_reshape(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    uint32_t n, k;
    const int64_t* shape = opara__attr_ints(c->n, "shape", &n);
    int64_t allowzero = opara__attr_int(c->n, "allowzero", 0), known = 1, numel = opara__shape_numel(x);
    int infer = -1;
    opara__shape y;
    opara__sbuf b;
    if (!shape) return opara__shape_fail(c, OPARA_ERR_SHAPE, "attribute 'shape' is required");
    if (n > OPARA_MAX_DIMS) return opara__shape_fail(c, OPARA_ERR_LIMIT_EXCEEDED, "'shape' has %u dims", n);
    y.ndim = (int32_t)n;
    for (k = 0; k < n; ++k) {
        int64_t d = shape[k];
        if (d == OPARA__DIM_BATCH) d = c->batch;
        else if (d == 0 && !allowzero) {
            if ((int32_t)k >= x->ndim)
                return opara__shape_fail(c, OPARA_ERR_SHAPE, "shape[%u] = 0 copies a dim input %s does not have", k,
                                         opara__sh(&b, 0, x));
            d = x->dims[k];
        } else if (d == -1) {
            if (infer >= 0) return opara__shape_fail(c, OPARA_ERR_SHAPE, "'shape' has more than one -1");
            infer = (int)k;
            continue;
        } else if (d < 0 || d > OPARA__SHAPE_DIM_MAX) {
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "shape[%u] = %lld", k, (long long)shape[k]);
        }
        y.dims[k] = d;
        if (opara__unknown(c, d)) continue; /* the symbolic batch or an unknown dim copied by a 0 */
        if (!opara__mul_i64(known, d, &known) || known > OPARA__SHAPE_NUMEL_MAX)
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "'shape' has too many elements");
    }
    if (c->mode == OPARA__SHAPE_TOLERANT) return opara__reshape_tolerant(c, x, &y, infer, known);
    if (infer >= 0) {
        if (known == 0 || numel % known)
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "cannot infer the -1 of 'shape' for input %s (%lld elements)",
                                     opara__sh(&b, 0, x), (long long)numel);
        y.dims[infer] = numel / known;
    } else if (known != numel) {
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %s has %lld elements, the target %s has %lld", opara__sh(&b, 0, x),
                                 (long long)numel, opara__sh(&b, 1, &y), (long long)known);
    }
    return opara__set_out(c, 0, &y);
}

/* acc * d where either may be unknown (-1) or the symbolic batch: the batch times ones stays the
   batch; any other product with an unknown is unknown. */
static int64_t opara__times_tolerant(int64_t acc, int64_t d) {
    if (acc == OPARA__DIM_BATCH || d == OPARA__DIM_BATCH) return acc == 1 || d == 1 ? OPARA__MIN(acc, d) : -1;
    if (acc < 0 || d < 0 || !opara__mul_i64(acc, d, &acc) || acc > OPARA__SHAPE_DIM_MAX) return -1;
    return acc;
}

static opara_result opara__shape_flatten(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    int64_t axis = opara__attr_int(c->n, "axis", 1), outer = 1, inner = 1;
    int32_t i;
    opara__shape y;
    if (axis < -(int64_t)x->ndim || axis > x->ndim)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "axis %lld is out of range for rank %d", (long long)axis, (int)x->ndim);
    if (axis < 0) axis += x->ndim;
    if (c->params) c->params->axis = axis;
    for (i = 0; i < x->ndim; ++i) {
        int64_t* acc = i < axis ? &outer : &inner;
        if (c->mode == OPARA__SHAPE_TOLERANT) *acc = opara__times_tolerant(*acc, x->dims[i]);
        else (void)opara__mul_i64(*acc, x->dims[i], acc);
    }
    y.ndim = 2;
    y.dims[0] = outer;
    y.dims[1] = inner;
    return opara__set_out(c, 0, &y);
}

static opara_result opara__shape_transpose(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    uint32_t n, k;
    const int64_t* perm = opara__attr_ints(c->n, "perm", &n);
    int seen[OPARA_MAX_DIMS];
    opara__shape y;
    opara__sbuf b;
    memset(seen, 0, sizeof seen);
    if (perm && n != (uint32_t)x->ndim)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "'perm' has %u values for input %s", n, opara__sh(&b, 0, x));
    y.ndim = x->ndim;
    for (k = 0; k < (uint32_t)x->ndim; ++k) {
        int64_t p = perm ? perm[k] : x->ndim - 1 - (int64_t)k;
        if (p < 0 || p >= x->ndim || seen[p])
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "'perm' is not a permutation of 0..%d", (int)x->ndim - 1);
        seen[p] = 1;
        y.dims[k] = x->dims[p];
        if (c->params) c->params->u.transpose.perm[k] = p;
    }
    return opara__set_out(c, 0, &y);
}

/* Marks normalized axes (against rank) in flags; 0 when out of range or repeated. */
static int opara__axes_flags(const int64_t* axes, uint32_t n, int64_t rank, int* flags) {
    uint32_t k;
    memset(flags, 0, sizeof(int) * OPARA_MAX_DIMS);
    for (k = 0; k < n; ++k) {
        int64_t a;
        if (!opara__norm_axis(axes[k], rank, &a) || flags[a]) return 0;
        flags[a] = 1;
    }
    return 1;
}

/* MeanVarianceNormalization: the moments over 'axes' (default 0, 2, 3), the output X's shape. */
static opara_result opara__shape_mvn(opara__shape_ctx* c) {
    static const int64_t default_axes[3] = {0, 2, 3};
    const opara__shape* x = c->in[0];
    uint32_t n = 3, i;
    const int64_t* axes = opara__attr_ints(c->n, "axes", &n);
    int flags[OPARA_MAX_DIMS];
    opara__sbuf b;
    if (!axes) axes = default_axes, n = 3;
    if (!opara__axes_flags(axes, n, x->ndim, flags))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "'axes' out of range or repeated for input %s", opara__sh(&b, 0, x));
    for (i = 0; c->params && i < (uint32_t)x->ndim; ++i) c->params->u.reduce.axes[i] = (uint8_t)flags[i];
    return opara__set_out(c, 0, x);
}

static opara_result opara__shape_squeeze(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    uint32_t n;
    const int64_t* axes = opara__attr_ints(c->n, "axes", &n);
    int flags[OPARA_MAX_DIMS];
    int32_t i;
    opara__shape y;
    opara__sbuf b;
    if (axes && !opara__axes_flags(axes, n, x->ndim, flags))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "'axes' out of range or repeated for input %s", opara__sh(&b, 0, x));
    y.ndim = 0;
    for (i = 0; i < x->ndim; ++i) {
        int drop = axes ? flags[i] : x->dims[i] == 1;
        if (drop && opara__dims_differ(c, x->dims[i], 1))
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "axis %d of input %s is not 1", (int)i, opara__sh(&b, 0, x));
        if (!drop) y.dims[y.ndim++] = x->dims[i];
    }
    return opara__set_out(c, 0, &y);
}

static opara_result opara__shape_unsqueeze(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    uint32_t n;
    const int64_t* axes = opara__attr_ints(c->n, "axes", &n);
    int flags[OPARA_MAX_DIMS];
    int32_t i, src = 0;
    opara__shape y;
    opara__sbuf b;
    if (!axes) return opara__shape_fail(c, OPARA_ERR_SHAPE, "attribute 'axes' is required");
    if ((int64_t)x->ndim + n > OPARA_MAX_DIMS)
        return opara__shape_fail(c, OPARA_ERR_LIMIT_EXCEEDED, "output rank %d exceeds %d", (int)(x->ndim + (int32_t)n),
                                 OPARA_MAX_DIMS);
    y.ndim = x->ndim + (int32_t)n;
    if (!opara__axes_flags(axes, n, y.ndim, flags))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "'axes' out of range or repeated for input %s", opara__sh(&b, 0, x));
    for (i = 0; i < y.ndim; ++i) y.dims[i] = flags[i] ? 1 : x->dims[src++];
    return opara__set_out(c, 0, &y);
}

static opara_result opara__shape_expand(opara__shape_ctx* c) {
    uint32_t n, k;
    const int64_t* shape = opara__attr_ints(c->n, "shape", &n);
    opara__shape target, y;
    opara__sbuf b;
    if (!shape) return opara__shape_fail(c, OPARA_ERR_SHAPE, "attribute 'shape' is required");
    if (n > OPARA_MAX_DIMS) return opara__shape_fail(c, OPARA_ERR_LIMIT_EXCEEDED, "'shape' has %u dims", n);
    target.ndim = (int32_t)n;
    for (k = 0; k < n; ++k) {
        target.dims[k] = shape[k] == OPARA__DIM_BATCH ? c->batch : shape[k];
        if ((target.dims[k] < 0 && !opara__unknown(c, target.dims[k])) || target.dims[k] > OPARA__SHAPE_DIM_MAX)
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "shape[%u] = %lld", k, (long long)shape[k]);
    }
    if (!opara__broadcast(c, c->in[0], &target, &y))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %s does not broadcast with %s", opara__sh(&b, 0, c->in[0]),
                                 opara__sh(&b, 1, &target));
    opara__record_broadcast(c, &y);
    return opara__set_out(c, 0, &y);
}

/* The index of s in names, -1 when it is none of them (attribute strings parsed once, here). */
static int opara__name_index(const char* s, const char* const* names, int count) {
    int i;
    for (i = 0; i < count; ++i)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

static const char* const opara__pad_mode_names[] = {"constant", "reflect", "edge", "wrap"};

OPARA__PRIVATE const char* opara__pad_mode_name(opara__pad_mode mode) {
    switch (mode) {
    case OPARA__PAD_CONSTANT: case OPARA__PAD_REFLECT: case OPARA__PAD_EDGE: case OPARA__PAD_WRAP:
        return opara__pad_mode_names[mode];
    }
    return "?";
}

static opara_result opara__shape_pad(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    uint32_t n, na = 0, k;
    const int64_t* pads = opara__attr_ints(c->n, "pads", &n);
    const int64_t* axes = opara__attr_ints(c->n, "axes", &na);
    const char* mode = opara__attr_string(c->n, "mode", "constant");
    int flags[OPARA_MAX_DIMS], m = opara__name_index(mode, opara__pad_mode_names, (int)OPARA__ARRAY_COUNT(opara__pad_mode_names));
    opara__pad_params pp;
    opara__shape y = *x;
    opara__sbuf b;
    if (m < 0) return opara__shape_fail(c, OPARA_ERR_SHAPE, "mode '%s' is not constant, reflect, edge or wrap", mode);
    memset(&pp, 0, sizeof pp);
    pp.mode = (opara__pad_mode)m;
    pp.value = opara__attr_float(c->n, "value", opara__attr_float(c->n, "constant_value", 0.0f));
    if (!axes) na = (uint32_t)x->ndim;
    else if (!opara__axes_flags(axes, na, x->ndim, flags))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "'axes' out of range or repeated for input %s", opara__sh(&b, 0, x));
    if (!pads || n != 2 * na)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "'pads' needs %u values for input %s", 2 * na, opara__sh(&b, 0, x));
    for (k = 0; k < na; ++k) {
        int64_t axis = axes ? (axes[k] < 0 ? axes[k] + x->ndim : axes[k]) : (int64_t)k;
        int64_t pb = pads[k], pe = pads[na + k];
        if (pb < -OPARA__SHAPE_DIM_MAX || pb > OPARA__SHAPE_DIM_MAX || pe < -OPARA__SHAPE_DIM_MAX || pe > OPARA__SHAPE_DIM_MAX)
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "pads for axis %lld are out of range", (long long)axis);
        pp.begin[axis] = pb, pp.end[axis] = pe;
        if (opara__unknown(c, x->dims[axis])) {
            y.dims[axis] = pb + pe == 0 ? x->dims[axis] : -1;
            continue;
        }
        y.dims[axis] = x->dims[axis] + pb + pe;
        if (pp.mode == OPARA__PAD_REFLECT && (pb >= x->dims[axis] || pe >= x->dims[axis]) && (pb > 0 || pe > 0))
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "reflect pads %lld/%lld need a dim larger than %lld", (long long)pb,
                                     (long long)pe, (long long)x->dims[axis]);
    }
    if (c->params) c->params->u.pad = pp;
    return opara__set_out(c, 0, &y);
}

/* Resize's modes, parsed once; a coordinate or nearest mode ONNX does not name is kept as UNKNOWN
   for the backends to refuse (the shape does not depend on it). */
static opara_result opara__resize_modes(opara__shape_ctx* c, opara__resize_params* rp) {
    static const char* const modes[] = {"nearest", "linear", "cubic"};
    static const char* const coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                         "tf_half_pixel_for_nn", "tf_crop_and_resize", "half_pixel_symmetric"};
    static const char* const nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    const char* mode = opara__attr_string(c->n, "mode", "nearest");
    int m = opara__name_index(mode, modes, (int)OPARA__ARRAY_COUNT(modes)), k;
    if (m < 0) return opara__shape_fail(c, OPARA_ERR_SHAPE, "mode '%s' is not nearest, linear or cubic", mode);
    memset(rp, 0, sizeof *rp);
    rp->mode = (opara__resize_mode)m;
    k = opara__name_index(opara__attr_string(c->n, "coordinate_transformation_mode", "half_pixel"), coords,
                          (int)OPARA__ARRAY_COUNT(coords));
    rp->coord = k < 0 ? OPARA__RESIZE_COORD_UNKNOWN : (opara__resize_coord_mode)k;
    k = opara__name_index(opara__attr_string(c->n, "nearest_mode", "round_prefer_floor"), nearest, (int)OPARA__ARRAY_COUNT(nearest));
    rp->nearest = k < 0 ? OPARA__NEAREST_UNKNOWN : (opara__resize_nearest_mode)k;
    rp->antialias = opara__attr_int(c->n, "antialias", 0) != 0;
    rp->extrapolation_value = opara__attr_float(c->n, "extrapolation_value", 0.0f);
    rp->cubic_coeff_a = opara__attr_float(c->n, "cubic_coeff_a", -0.75f);
    rp->exclude_outside = opara__attr_int(c->n, "exclude_outside", 0) != 0;
    return OPARA_OK;
}

/* The input dim each of the n given values of 'scales'/'sizes' (and 'roi') applies to: 'axes' in
   order (ONNX), else every dim. */
static opara_result opara__resize_dims(opara__shape_ctx* c, const char* what, uint32_t n, int64_t* dim) {
    const opara__shape* x = c->in[0];
    uint32_t na = 0, k;
    const int64_t* axes = opara__attr_ints(c->n, "axes", &na);
    int flags[OPARA_MAX_DIMS];
    opara__sbuf b;
    if (axes && !opara__axes_flags(axes, na, x->ndim, flags))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "'axes' out of range or repeated for input %s", opara__sh(&b, 0, x));
    if (n != (axes ? na : (uint32_t)x->ndim))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "'%s' has %u values for input %s%s", what, n, opara__sh(&b, 0, x),
                                 axes ? " and its 'axes'" : "");
    for (k = 0; k < n; ++k) dim[k] = axes ? (axes[k] < 0 ? axes[k] + x->ndim : axes[k]) : (int64_t)k;
    return OPARA_OK;
}

/* tf_crop_and_resize's roi: n starts then n ends, for the dims of opara__resize_dims. */
static opara_result opara__resize_roi(opara__shape_ctx* c, uint32_t n, const int64_t* dim, opara__resize_params* rp) {
    const opara__attr* roi = opara__node_attr(c->n, "roi");
    uint32_t k;
    if (!roi || roi->type != OPARA__ATTR_FLOATS || roi->count == 0) return OPARA_OK;
    if (roi->count != 2 * n) return opara__shape_fail(c, OPARA_ERR_SHAPE, "'roi' has %u values, not %u", roi->count, 2 * n);
    for (k = 0; k < n; ++k) rp->roi_lo[dim[k]] = roi->v.floats[k], rp->roi_hi[dim[k]] = roi->v.floats[n + k];
    return OPARA_OK;
}

OPARA__PRIVATE double opara__resize_source(opara__resize_coord_mode mode, double s, double roi_lo, double roi_hi, int64_t x,
                                          int64_t in, int64_t out) {
    switch (mode) {
    case OPARA__RESIZE_PYTORCH_HALF_PIXEL: return out > 1 ? ((double)x + 0.5) / s - 0.5 : 0.0;
    case OPARA__RESIZE_ALIGN_CORNERS: return out > 1 ? (double)x * (double)(in - 1) / (double)(out - 1) : 0.0;
    case OPARA__RESIZE_ASYMMETRIC: return (double)x / s;
    case OPARA__RESIZE_TF_HALF_PIXEL_FOR_NN: return ((double)x + 0.5) / s;
    case OPARA__RESIZE_TF_CROP_AND_RESIZE:
        return out > 1 ? roi_lo * (double)(in - 1) + (double)x * (roi_hi - roi_lo) * (double)(in - 1) / (double)(out - 1)
                       : 0.5 * (roi_lo + roi_hi) * (double)(in - 1);
    case OPARA__RESIZE_HALF_PIXEL_SYMMETRIC: {
        double adj = (double)out / (s * (double)in), center = (double)in / 2.0;
        return center * (1.0 - adj) + ((double)x + 0.5) / s - 0.5;
    }
    case OPARA__RESIZE_HALF_PIXEL: case OPARA__RESIZE_COORD_UNKNOWN: break;
    }
    return ((double)x + 0.5) / s - 0.5;
}

/* The cubic convolution kernel of ONNX's Resize (Keys, with a = cubic_coeff_a) at distance t. */
static double opara__cubic_weight(double t, double a) {
    t = fabs(t);
    if (t <= 1.0) return ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
    if (t < 2.0) return ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a;
    return 0.0;
}

OPARA__PRIVATE int opara__resize_cubic_taps(const opara__resize_params* rp, int32_t d, int64_t x, int64_t in, int64_t out,
                                           int64_t* idx, float* w) {
    double c = opara__resize_source(rp->coord, rp->scale[d], rp->roi_lo[d], rp->roi_hi[d], x, in, out);
    double f = floor(c), r = c - f, wd[4], sum = 0.0;
    int k;
    if (rp->coord == OPARA__RESIZE_TF_CROP_AND_RESIZE && (c < 0.0 || c > (double)(in - 1))) return 0;
    for (k = 0; k < 4; ++k) {
        int64_t i = (int64_t)f - 1 + k;
        wd[k] = opara__cubic_weight(r + 1.0 - (double)k, (double)rp->cubic_coeff_a);
        if (rp->exclude_outside && (i < 0 || i >= in)) wd[k] = 0.0;
        sum += wd[k];
        idx[k] = i < 0 ? 0 : (i > in - 1 ? in - 1 : i);
    }
    for (k = 0; k < 4; ++k) w[k] = (float)(rp->exclude_outside && sum != 0.0 ? wd[k] / sum : wd[k]);
    return 1;
}

static opara_result opara__shape_resize(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    const opara__attr* scales = opara__node_attr(c->n, "scales");
    uint32_t ns = 0, n, k;
    const int64_t* sizes = opara__attr_ints(c->n, "sizes", &ns);
    int64_t dim[OPARA_MAX_DIMS];
    int32_t d;
    opara__resize_params rp;
    opara__shape y = *x;
    opara_result r = opara__resize_modes(c, &rp);
    if (r != OPARA_OK) return r;
    if (scales && scales->type != OPARA__ATTR_FLOATS) scales = NULL;
    if (!scales == !sizes)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "exactly one of 'scales' and 'sizes' is needed");
    n = scales ? scales->count : ns;
    r = opara__resize_dims(c, scales ? "scales" : "sizes", n, dim);
    if (r != OPARA_OK) return r;
    for (k = 0; k < n; ++k) {
        int64_t a = dim[k];
        if (sizes) {
            y.dims[a] = sizes[k];
            continue;
        }
        {
            double s = (double)scales->v.floats[k], v;
            if (!(s > 0.0) || s > 1e9) return opara__shape_fail(c, OPARA_ERR_SHAPE, "scales[%u] = %g", k, s);
            if (opara__unknown(c, x->dims[a])) {
                y.dims[a] = s == 1.0 ? x->dims[a] : -1;
                continue;
            }
            v = (double)x->dims[a] * s;
            if (v > (double)OPARA__SHAPE_DIM_MAX) return opara__shape_fail(c, OPARA_ERR_LIMIT_EXCEEDED, "scales[%u] = %g", k, s);
            y.dims[a] = (int64_t)v; /* floor: v >= 0 */
        }
    }
    for (d = 0; d < x->ndim; ++d) { /* output / input where no scale is given; the roi is the whole dim */
        rp.scale[d] = x->dims[d] > 0 && y.dims[d] >= 0 ? (float)((double)y.dims[d] / (double)x->dims[d]) : 1.0f;
        rp.roi_lo[d] = 0.0f, rp.roi_hi[d] = 1.0f;
    }
    for (k = 0; scales && k < n; ++k) rp.scale[dim[k]] = scales->v.floats[k];
    r = opara__resize_roi(c, n, dim, &rp);
    if (r == OPARA_OK && c->params) c->params->u.resize = rp;
    return r == OPARA_OK ? opara__set_out(c, 0, &y) : r;
}

/* ---- linear algebra and normalization -------------------------------------------------------- */

static opara_result opara__shape_gemm(opara__shape_ctx* c) {
    const opara__shape *a = c->in[0], *bm = c->in[1], *cc = c->n->n_inputs > 2 ? c->in[2] : NULL;
    int ta = opara__attr_int(c->n, "transA", 0) != 0, tb = opara__attr_int(c->n, "transB", 0) != 0;
    opara__shape y, tmp;
    opara__sbuf b;
    int64_t k1, k2;
    if (a->ndim != 2 || bm->ndim != 2)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "A %s and B %s must be matrices", opara__sh(&b, 0, a), opara__sh(&b, 1, bm));
    y.ndim = 2;
    y.dims[0] = ta ? a->dims[1] : a->dims[0];
    k1 = ta ? a->dims[0] : a->dims[1];
    k2 = tb ? bm->dims[1] : bm->dims[0];
    y.dims[1] = tb ? bm->dims[0] : bm->dims[1];
    if (opara__dims_differ(c, k1, k2))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "A %s (transA %d) and B %s (transB %d) disagree on K", opara__sh(&b, 0, a),
                                 ta, opara__sh(&b, 1, bm), tb);
    if (cc && c->mode == OPARA__SHAPE_STRICT &&
        (!opara__broadcast(c, &y, cc, &tmp) || tmp.ndim != 2 || tmp.dims[0] != y.dims[0] || tmp.dims[1] != y.dims[1]))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "C %s does not broadcast to %s", opara__sh(&b, 0, cc), opara__sh(&b, 1, &y));
    return opara__set_out(c, 0, &y);
}

/* ---- LSTM, GRU, RNN ------------------------------------------------------------------------- */

/* Case-insensitive equality of an activation name of length len with an ONNX name (ONNX Runtime
   accepts any case). */
static char opara__ascii_lower(char ch) { return ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch; }

static int opara__rnn_name_is(const char* s, size_t len, const char* name) {
    size_t i;
    for (i = 0; i < len; ++i)
        if (!name[i] || opara__ascii_lower(s[i]) != opara__ascii_lower(name[i])) return 0;
    return name[len] == 0;
}

/* One activation name (not NUL-terminated) to its kind and how many of activation_alpha/beta it
   takes, with ONNX Runtime's defaults for those it does not get; 0 when ONNX defines no such name. */
static int opara__rnn_parse_act(const char* s, size_t len, opara__rnn_act* act, int* n_args, float* alpha, float* beta) {
    static const struct { const char* name; opara__rnn_act act; int n_args; float alpha, beta; } acts[] = {
        {"Relu", OPARA__RNN_ACT_RELU, 0, 0, 0}, {"Tanh", OPARA__RNN_ACT_TANH, 0, 0, 0},
        {"Sigmoid", OPARA__RNN_ACT_SIGMOID, 0, 0, 0}, {"Affine", OPARA__RNN_ACT_AFFINE, 2, 1.0f, 0.0f},
        {"LeakyRelu", OPARA__RNN_ACT_LEAKY_RELU, 1, 0.01f, 0}, {"ThresholdedRelu", OPARA__RNN_ACT_THRESHOLDED_RELU, 1, 1.0f, 0},
        {"ScaledTanh", OPARA__RNN_ACT_SCALED_TANH, 2, 1.0f, 1.0f}, {"HardSigmoid", OPARA__RNN_ACT_HARD_SIGMOID, 2, 0.2f, 0.5f},
        {"Elu", OPARA__RNN_ACT_ELU, 1, 1.0f, 0}, {"Softsign", OPARA__RNN_ACT_SOFTSIGN, 0, 0, 0},
        {"Softplus", OPARA__RNN_ACT_SOFTPLUS, 0, 0, 0}};
    size_t i;
    for (i = 0; i < OPARA__ARRAY_COUNT(acts); ++i) {
        if (!opara__rnn_name_is(s, len, acts[i].name)) continue;
        *act = acts[i].act, *n_args = acts[i].n_args, *alpha = acts[i].alpha, *beta = acts[i].beta;
        return 1;
    }
    return 0;
}

/* 'activations' (canonical form: the names joined by commas, docs/FORMAT.md) with their
   activation_alpha/beta consumed in order by the functions that take them; the op's defaults when
   absent, one direction's list repeated for the other when bidirectional names only one. */
static opara_result opara__rnn_activations(opara__shape_ctx* c, opara__rnn_params* r) {
    static const opara__rnn_act defaults[3][3] = {
        {OPARA__RNN_ACT_SIGMOID, OPARA__RNN_ACT_TANH, OPARA__RNN_ACT_TANH}, /* LSTM f g h */
        {OPARA__RNN_ACT_SIGMOID, OPARA__RNN_ACT_TANH, OPARA__RNN_ACT_TANH}, /* GRU f g */
        {OPARA__RNN_ACT_TANH, OPARA__RNN_ACT_TANH, OPARA__RNN_ACT_TANH}};   /* RNN f */
    const opara__attr* alphas = opara__node_attr(c->n, "activation_alpha");
    const opara__attr* betas = opara__node_attr(c->n, "activation_beta");
    const char* s = opara__attr_string(c->n, "activations", "");
    int kind = c->n->op == OPARA__OP_LSTM ? 0 : c->n->op == OPARA__OP_GRU ? 1 : 2;
    uint32_t ia = 0, ib = 0;
    int32_t n = 0, i;
    while (*s) {
        size_t len = strcspn(s, ",");
        int n_args;
        float alpha, beta;
        if (n >= OPARA__RNN_MAX_ACTS || !opara__rnn_parse_act(s, len, &r->act[n], &n_args, &alpha, &beta))
            return opara__shape_fail(c, OPARA_ERR_UNSUPPORTED, "activation '%.*s' is not one ONNX defines for %s (or too many)",
                                     (int)len, s, opara__op_name(c->n->op));
        if (n_args >= 1 && alphas && alphas->type == OPARA__ATTR_FLOATS && ia < alphas->count) alpha = alphas->v.floats[ia++];
        if (n_args >= 2 && betas && betas->type == OPARA__ATTR_FLOATS && ib < betas->count) beta = betas->v.floats[ib++];
        r->act_alpha[n] = alpha, r->act_beta[n] = beta;
        n++;
        s += len + (s[len] == ',');
    }
    if (n == 0)
        for (i = 0; i < r->n_acts * r->num_directions; ++i)
            r->act[i] = defaults[kind][i % r->n_acts], r->act_alpha[i] = r->act_beta[i] = 0;
    else if (n == r->n_acts && r->num_directions == 2)
        for (i = 0; i < r->n_acts; ++i)
            r->act[n + i] = r->act[i], r->act_alpha[n + i] = r->act_alpha[i], r->act_beta[n + i] = r->act_beta[i];
    else if (n != r->n_acts * r->num_directions)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "%d activations (needs %d per direction, %d directions)", (int)n,
                                 (int)r->n_acts, (int)r->num_directions);
    return OPARA_OK;
}

/* The scalar attributes of LSTM, GRU and RNN into r (sizes come from the inputs). */
static opara_result opara__rnn_attributes(opara__shape_ctx* c, opara__rnn_params* r) {
    const char* dir = opara__attr_string(c->n, "direction", "forward");
    opara__op op = c->n->op;
    r->direction = strcmp(dir, "forward") == 0 ? 0 : strcmp(dir, "reverse") == 0 ? 1 : strcmp(dir, "bidirectional") == 0 ? 2 : -1;
    if (r->direction < 0) return opara__shape_fail(c, OPARA_ERR_SHAPE, "direction '%s' is not forward, reverse or bidirectional", dir);
    r->num_directions = r->direction == 2 ? 2 : 1;
    r->gates = op == OPARA__OP_LSTM ? 4 : op == OPARA__OP_GRU ? 3 : 1;
    r->n_acts = op == OPARA__OP_LSTM ? 3 : op == OPARA__OP_GRU ? 2 : 1;
    r->layout = (int)opara__attr_int(c->n, "layout", 0);
    if (r->layout != 0 && r->layout != 1) return opara__shape_fail(c, OPARA_ERR_SHAPE, "layout %d is not 0 or 1", r->layout);
    r->input_forget = op == OPARA__OP_LSTM && opara__attr_int(c->n, "input_forget", 0) != 0;
    r->linear_before_reset = op == OPARA__OP_GRU && opara__attr_int(c->n, "linear_before_reset", 0) != 0;
    r->clip = opara__node_attr(c->n, "clip") ? opara__attr_float(c->n, "clip", 0) : HUGE_VALF;
    if (!(r->clip > 0)) return opara__shape_fail(c, OPARA_ERR_SHAPE, "clip %g is not positive", (double)r->clip);
    return opara__rnn_activations(c, r);
}

/* An optional input of the given rank and dims (-2: any); 1 when absent or matching. */
static int opara__rnn_input_ok(const opara__shape_ctx* c, uint32_t k, int32_t rank, const int64_t* dims) {
    const opara__shape* s = k < c->n->n_inputs ? c->in[k] : NULL;
    int32_t i;
    if (!s) return 1;
    if (s->ndim != rank) return 0;
    for (i = 0; i < rank; ++i)
        if (dims[i] != -2 && opara__dims_differ(c, s->dims[i], dims[i])) return 0;
    return 1;
}

/* X [seq, batch, input] (layout 1: [batch, seq, input]), W [dirs, gates*hidden, input], R [dirs,
   gates*hidden, hidden], B [dirs, 2*gates*hidden], sequence_lens [batch], initial_h and initial_c
   [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]), P [dirs, 3*hidden]; outputs Y [seq, dirs,
   batch, hidden] (layout 1: [batch, seq, dirs, hidden]), Y_h and Y_c as initial_h. */
static opara_result opara__shape_rnn(opara__shape_ctx* c) {
    const opara__shape *x = c->in[0], *w = c->in[1], *rr = c->in[2];
    opara__rnn_params r;
    opara__shape y, yh;
    opara__sbuf b;
    int64_t gh, state[3], bias[2], lens[1], peep[2];
    uint32_t k;
    opara_result res;
    memset(&r, 0, sizeof r);
    if ((res = opara__rnn_attributes(c, &r)) != OPARA_OK) return res;
    if (x->ndim != 3 || w->ndim != 3 || rr->ndim != 3)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "X %s, W %s and R %s must have rank 3", opara__sh(&b, 0, x),
                                 opara__sh(&b, 1, w), opara__sh(&b, 2, rr));
    r.seq_length = x->dims[r.layout ? 1 : 0];
    r.batch_size = x->dims[r.layout ? 0 : 1];
    r.input_size = x->dims[2];
    r.hidden_size = opara__attr_int(c->n, "hidden_size", rr->dims[2]);
    gh = r.hidden_size < 0 ? -1 : r.gates * r.hidden_size;
    if (r.hidden_size == 0 || opara__dims_differ(c, w->dims[0], r.num_directions) ||
        opara__dims_differ(c, rr->dims[0], r.num_directions) || opara__dims_differ(c, w->dims[1], gh) ||
        opara__dims_differ(c, rr->dims[1], gh) || opara__dims_differ(c, w->dims[2], r.input_size) ||
        opara__dims_differ(c, rr->dims[2], r.hidden_size))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "W %s and R %s do not fit X %s, %d direction(s), %d gates and hidden_size %lld",
                                 opara__sh(&b, 0, w), opara__sh(&b, 1, rr), opara__sh(&b, 2, x), (int)r.num_directions,
                                 (int)r.gates, (long long)r.hidden_size);
    bias[0] = r.num_directions, bias[1] = gh < 0 ? -1 : 2 * gh;
    lens[0] = r.batch_size;
    state[0] = r.layout ? r.batch_size : r.num_directions;
    state[1] = r.layout ? r.num_directions : r.batch_size;
    state[2] = r.hidden_size;
    peep[0] = r.num_directions, peep[1] = r.hidden_size < 0 ? -1 : 3 * r.hidden_size;
    for (k = 3; k < c->n->n_inputs; ++k) {
        int ok = k == 3 ? opara__rnn_input_ok(c, k, 2, bias) : k == 4 ? opara__rnn_input_ok(c, k, 1, lens) :
                 k == 7 ? opara__rnn_input_ok(c, k, 2, peep) : opara__rnn_input_ok(c, k, 3, state);
        if (!ok) return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %u %s does not fit X %s and hidden_size %lld", k,
                                          opara__sh(&b, 0, c->in[k]), opara__sh(&b, 1, x), (long long)r.hidden_size);
    }
    y.ndim = 4;
    y.dims[0] = r.layout ? r.batch_size : r.seq_length;
    y.dims[1] = r.layout ? r.seq_length : r.num_directions;
    y.dims[2] = r.layout ? r.num_directions : r.batch_size;
    y.dims[3] = r.hidden_size;
    yh.ndim = 3;
    memcpy(yh.dims, state, sizeof state);
    if (c->params) c->params->u.rnn = r;
    res = opara__set_out(c, 0, &y);
    for (k = 1; k < c->n->n_outputs && res == OPARA_OK; ++k) res = opara__set_out(c, k, &yh);
    return res;
}

/* numpy matmul: 1-D operands get a dim prepended (A) / appended (B) that is removed again. */
static opara_result opara__shape_matmul_of(opara__shape_ctx* c, const opara__shape* in_a, const opara__shape* in_b) {
    opara__shape a = *in_a, bm = *in_b, ba, bb, batch, y;
    opara__sbuf b;
    int a1 = a.ndim == 1, b1 = bm.ndim == 1;
    if (a.ndim < 1 || bm.ndim < 1)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "operands %s and %s must not be scalars", opara__sh(&b, 0, in_a),
                                 opara__sh(&b, 1, in_b));
    if (a1) a.ndim = 2, a.dims[1] = a.dims[0], a.dims[0] = 1;
    if (b1) bm.ndim = 2, bm.dims[1] = 1;
    if (opara__dims_differ(c, a.dims[a.ndim - 1], bm.dims[bm.ndim - 2]))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "%s x %s: inner dims differ", opara__sh(&b, 0, in_a),
                                 opara__sh(&b, 1, in_b));
    ba = a, bb = bm;
    ba.ndim -= 2, bb.ndim -= 2;
    if (!opara__broadcast(c, &ba, &bb, &batch))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "%s x %s: batch dims do not broadcast", opara__sh(&b, 0, in_a),
                                 opara__sh(&b, 1, in_b));
    y = batch;
    if (!a1) y.dims[y.ndim++] = a.dims[a.ndim - 2];
    if (!b1) y.dims[y.ndim++] = bm.dims[bm.ndim - 1];
    return opara__set_out(c, 0, &y);
}

static opara_result opara__shape_matmul(opara__shape_ctx* c) { return opara__shape_matmul_of(c, c->in[0], c->in[1]); }

/* MatMulInteger (A, B, a_zero_point, b_zero_point) and QLinearMatMul (a, a_scale, a_zero_point, b,
   b_scale, b_zero_point, y_scale, y_zero_point): MatMul's shapes; A's quantization per tensor or per
   row, B's per tensor or per column, the output's per tensor. */
static opara_result opara__shape_quant_matmul(opara__shape_ctx* c) {
    int q = c->n->op == OPARA__OP_QLINEAR_MATMUL;
    const opara__shape *a = c->in[0], *bm = c->in[q ? 3 : 1];
    int64_t rows = a->ndim >= 2 ? a->dims[a->ndim - 2] : 1, cols = bm->ndim >= 2 ? bm->dims[bm->ndim - 1] : 1;
    opara_result r = opara__shape_matmul_of(c, a, bm);
    if (r == OPARA_OK && !q) {
        r = opara__quant_operand(c, 2, "a_zero_point", rows);
        if (r == OPARA_OK) r = opara__quant_operand(c, 3, "b_zero_point", cols);
        return r;
    }
    if (r == OPARA_OK) r = opara__quant_operand(c, 1, "a_scale", rows);
    if (r == OPARA_OK) r = opara__quant_operand(c, 2, "a_zero_point", rows);
    if (r == OPARA_OK) r = opara__quant_operand(c, 4, "b_scale", cols);
    if (r == OPARA_OK) r = opara__quant_operand(c, 5, "b_zero_point", cols);
    if (r == OPARA_OK) r = opara__quant_operand(c, 6, "y_scale", -1);
    if (r == OPARA_OK) r = opara__quant_operand(c, 7, "y_zero_point", -1);
    return r;
}

static opara_result opara__shape_softmax(opara__shape_ctx* c) {
    int64_t axis;
    opara_result r = opara__axis_arg(c, "axis", -1, c->in[0]->ndim, &axis);
    return r == OPARA_OK ? opara__set_out(c, 0, c->in[0]) : r;
}

static opara_result opara__shape_layer_norm(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    int64_t axis;
    uint32_t k;
    int32_t i;
    opara__shape stat = *x;
    opara__sbuf b;
    opara_result r = opara__axis_arg(c, "axis", -1, x->ndim, &axis);
    if (r != OPARA_OK) return r;
    for (k = 1; k < c->n->n_inputs && c->mode == OPARA__SHAPE_STRICT; ++k) {
        opara__shape tmp, tail;
        if (!c->in[k]) continue;
        tail.ndim = x->ndim - (int32_t)axis;
        for (i = 0; i < tail.ndim; ++i) tail.dims[i] = x->dims[axis + i];
        if (!opara__broadcast(c, &tail, c->in[k], &tmp) || tmp.ndim != tail.ndim || opara__shape_numel(&tmp) != opara__shape_numel(&tail))
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %u %s does not broadcast to the normalized dims %s", k,
                                     opara__sh(&b, 0, c->in[k]), opara__sh(&b, 1, &tail));
    }
    for (i = (int32_t)axis; i < stat.ndim; ++i) stat.dims[i] = 1;
    r = opara__set_out(c, 0, x);
    for (k = 1; k < c->n->n_outputs && r == OPARA_OK; ++k) r = opara__set_out(c, k, &stat);
    return r;
}

/* ReduceMean .. ReduceSumSquare. */
static opara_result opara__shape_reduce(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    uint32_t n;
    const int64_t* axes = opara__attr_ints(c->n, "axes", &n);
    int keep = opara__attr_int(c->n, "keepdims", 1) != 0, flags[OPARA_MAX_DIMS];
    int32_t i;
    opara__shape y;
    opara__sbuf b;
    if (!axes || n == 0) {
        if (opara__attr_int(c->n, "noop_with_empty_axes", 0)) return opara__set_out(c, 0, x);
        for (i = 0; i < OPARA_MAX_DIMS; ++i) flags[i] = 1;
    } else if (!opara__axes_flags(axes, n, x->ndim, flags)) {
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "'axes' out of range or repeated for input %s", opara__sh(&b, 0, x));
    }
    y.ndim = 0;
    for (i = 0; i < x->ndim; ++i) {
        if (!flags[i]) y.dims[y.ndim++] = x->dims[i];
        else if (keep) y.dims[y.ndim++] = 1;
        if (c->params) c->params->u.reduce.axes[i] = (uint8_t)flags[i];
    }
    return opara__set_out(c, 0, &y);
}

/* TopK: values and indices, the input's shape with k along the axis; k no larger than that dim. */
static opara_result opara__shape_topk(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    int64_t axis, k = opara__attr_int(c->n, "k", -1);
    opara__shape y = *x;
    opara_result r = opara__axis_arg(c, "axis", -1, x->ndim, &axis);
    if (r != OPARA_OK) return r;
    if (k < 0 || (!opara__unknown(c, x->dims[axis]) && k > x->dims[axis]))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "k %lld is not in [0, %lld] (the dim of axis %lld)", (long long)k,
                                 (long long)x->dims[axis], (long long)axis);
    y.dims[axis] = k;
    if (c->params) {
        c->params->u.topk.k = k;
        c->params->u.topk.largest = opara__attr_int(c->n, "largest", 1) != 0;
        c->params->u.topk.sorted = opara__attr_int(c->n, "sorted", 1) != 0;
    }
    r = opara__set_out(c, 0, &y);
    return r == OPARA_OK && c->n->n_outputs > 1 ? opara__set_out(c, 1, &y) : r;
}

/* Index of s in names (n of them), or -1. */
static int opara__string_index(const char* s, const char* const* names, int n) {
    int i;
    for (i = 0; i < n; ++i)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

/* GridSample over 2-D images: X [N, C, H, W], grid [N, Ho, Wo, 2] -> [N, C, Ho, Wo]. */
static opara_result opara__shape_grid_sample(opara__shape_ctx* c) {
    static const char* const modes[5] = {"bilinear", "linear", "nearest", "bicubic", "cubic"};
    static const opara__grid_mode mode_of[5] = {OPARA__GRID_LINEAR, OPARA__GRID_LINEAR, OPARA__GRID_NEAREST,
                                                OPARA__GRID_CUBIC, OPARA__GRID_CUBIC};
    static const char* const paddings[3] = {"zeros", "border", "reflection"};
    const opara__shape *x = c->in[0], *grid = c->in[1];
    const char* mode = opara__attr_string(c->n, "mode", "bilinear");
    const char* padding = opara__attr_string(c->n, "padding_mode", "zeros");
    int m = opara__string_index(mode, modes, 5), pad = opara__string_index(padding, paddings, 3);
    opara__shape y;
    opara__sbuf b;
    if (x->ndim != 4 || grid->ndim != 4)
        return opara__shape_fail(c, OPARA_ERR_UNSUPPORTED, "input %s and grid %s: only 2-D images (rank 4) are supported",
                                 opara__sh(&b, 0, x), opara__sh(&b, 1, grid));
    if (opara__dims_differ(c, grid->dims[3], 2) || opara__dims_differ(c, grid->dims[0], x->dims[0]))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "grid %s does not fit input %s (needs [N, H_out, W_out, 2])",
                                 opara__sh(&b, 0, grid), opara__sh(&b, 1, x));
    if (m < 0 || pad < 0)
        return opara__shape_fail(c, OPARA_ERR_UNSUPPORTED, "mode '%s' / padding_mode '%s' is not one of ONNX's", mode,
                                 padding);
    if (c->params) {
        c->params->u.grid.mode = mode_of[m];
        c->params->u.grid.padding = (opara__grid_padding)pad;
        c->params->u.grid.align_corners = opara__attr_int(c->n, "align_corners", 0) != 0;
    }
    y.ndim = 4;
    y.dims[0] = x->dims[0], y.dims[1] = x->dims[1], y.dims[2] = grid->dims[1], y.dims[3] = grid->dims[2];
    return opara__set_out(c, 0, &y);
}

/* Det: [..., M, M] -> [...]. */
static opara_result opara__shape_det(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    opara__shape y = *x;
    opara__sbuf b;
    if (x->ndim < 2 || opara__dims_differ(c, x->dims[x->ndim - 1], x->dims[x->ndim - 2]))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %s is not a (batch of) square matrices", opara__sh(&b, 0, x));
    y.ndim -= 2;
    return opara__set_out(c, 0, &y);
}

/* ArgMax, ArgMin: the axis removed, or kept as 1 (keepdims). */
static opara_result opara__shape_arg_reduce(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    int64_t axis;
    int keep = opara__attr_int(c->n, "keepdims", 1) != 0;
    int32_t i;
    opara__shape y;
    opara_result r = opara__axis_arg(c, "axis", 0, x->ndim, &axis);
    if (r != OPARA_OK) return r;
    y.ndim = 0;
    for (i = 0; i < x->ndim; ++i) {
        if (i != axis) y.dims[y.ndim++] = x->dims[i];
        else if (keep) y.dims[y.ndim++] = 1;
    }
    return opara__set_out(c, 0, &y);
}

/* CumSum: its (canonical) axis attribute is required; the output has the input's shape. */
static opara_result opara__shape_cum_sum(opara__shape_ctx* c) {
    int64_t axis;
    opara_result r;
    if (!opara__node_attr(c->n, "axis")) return opara__shape_fail(c, OPARA_ERR_SHAPE, "no 'axis'");
    r = opara__axis_arg(c, "axis", 0, c->in[0]->ndim, &axis);
    return r == OPARA_OK ? opara__set_out(c, 0, c->in[0]) : r;
}

/* ---- dispatch -------------------------------------------------------------------------------- */

typedef struct opara__arity {
    uint16_t min_in, max_in, min_out, max_out;
    uint8_t none_omitted; /* variadic inputs that are all required (Concat) */
} opara__arity;

#define OPARA__ANY 0xFFFFu

static opara__arity opara__op_arity(opara__op op) {
    opara__arity a;
    a.min_in = a.max_in = a.min_out = a.max_out = 1;
    a.none_omitted = 0;
    switch (op) {
    case OPARA__OP_CONV: case OPARA__OP_CONV_TRANSPOSE: case OPARA__OP_GEMM: a.min_in = 2, a.max_in = 3; break;
    case OPARA__OP_QUANTIZE_LINEAR: case OPARA__OP_DEQUANTIZE_LINEAR: a.min_in = 2, a.max_in = 3; break;
    case OPARA__OP_DYNAMIC_QUANTIZE_LINEAR: a.min_out = a.max_out = 3; break;
    case OPARA__OP_CONV_INTEGER: case OPARA__OP_MATMUL_INTEGER: a.min_in = 2, a.max_in = 4; break;
    case OPARA__OP_QLINEAR_CONV: a.min_in = 8, a.max_in = 9; break;
    case OPARA__OP_QLINEAR_MATMUL: a.min_in = a.max_in = 8; break;
    case OPARA__OP_LSTM: a.min_in = 3, a.max_in = 8, a.max_out = 3; break;
    case OPARA__OP_GRU: case OPARA__OP_RNN: a.min_in = 3, a.max_in = 6, a.max_out = 2; break;
    case OPARA__OP_MAX_POOL: a.max_out = 2; break;
    case OPARA__OP_BATCH_NORM: a.min_in = a.max_in = 5; break;
    case OPARA__OP_PRELU: case OPARA__OP_MAX_UNPOOL: a.min_in = a.max_in = 2; break;
    case OPARA__OP_INSTANCE_NORM: a.min_in = a.max_in = 3; break;
    case OPARA__OP_DROPOUT: a.max_out = 2; break;
    case OPARA__OP_EINSUM: a.max_in = 2; break;
    case OPARA__OP_LRN: case OPARA__OP_MVN: case OPARA__OP_SHRINK: case OPARA__OP_GLOBAL_MAX_POOL: break;
    case OPARA__OP_ADD: case OPARA__OP_SUB: case OPARA__OP_MUL: case OPARA__OP_DIV: case OPARA__OP_POW:
    OPARA__CASE_COMPARE: OPARA__CASE_LOGIC_BINARY: OPARA__CASE_INT_BINARY:
    case OPARA__OP_GATHER: case OPARA__OP_MATMUL: a.min_in = a.max_in = 2; break;
    case OPARA__OP_GATHER_ELEMENTS: case OPARA__OP_GATHER_ND: case OPARA__OP_ONE_HOT: case OPARA__OP_REVERSE_SEQUENCE:
        a.min_in = a.max_in = 2; break;
    case OPARA__OP_SCATTER_ELEMENTS: case OPARA__OP_SCATTER: case OPARA__OP_SCATTER_ND: a.min_in = a.max_in = 3; break;
    case OPARA__OP_SIZE: case OPARA__OP_TRILU: case OPARA__OP_TILE: case OPARA__OP_DEPTH_TO_SPACE: case OPARA__OP_SPACE_TO_DEPTH:
    case OPARA__OP_EYE_LIKE: break; /* one input, one output */
    OPARA__CASE_VARIADIC: a.max_in = OPARA__ANY, a.none_omitted = 1; break;
    case OPARA__OP_CONCAT: a.max_in = OPARA__ANY, a.none_omitted = 1; break;
    case OPARA__OP_SPLIT: a.max_out = OPARA__ANY; break;
    case OPARA__OP_LAYER_NORM: a.min_in = 2, a.max_in = 3, a.max_out = 3; break;
    case OPARA__OP_WHERE: a.min_in = a.max_in = 3; break;
    case OPARA__OP_TOPK: a.max_out = 2; break;
    case OPARA__OP_GRID_SAMPLE: a.min_in = a.max_in = 2; break;
    case OPARA__OP_GLOBAL_AVERAGE_POOL: case OPARA__OP_AVERAGE_POOL: case OPARA__OP_RELU: case OPARA__OP_LEAKY_RELU:
    case OPARA__OP_SIGMOID: case OPARA__OP_TANH: case OPARA__OP_HARD_SIGMOID: case OPARA__OP_HARD_SWISH: case OPARA__OP_CLIP:
    case OPARA__OP_SQRT: case OPARA__OP_ERF: case OPARA__OP_GELU: case OPARA__OP_SLICE: case OPARA__OP_RESHAPE:
    case OPARA__OP_FLATTEN: case OPARA__OP_TRANSPOSE: case OPARA__OP_SQUEEZE: case OPARA__OP_UNSQUEEZE: case OPARA__OP_EXPAND:
    case OPARA__OP_SOFTMAX: case OPARA__OP_REDUCE_MEAN: OPARA__CASE_REDUCE_KINDS: case OPARA__OP_ARG_MAX:
    case OPARA__OP_ARG_MIN: case OPARA__OP_LOG_SOFTMAX: case OPARA__OP_HARDMAX: case OPARA__OP_CUM_SUM:
    case OPARA__OP_CAST: case OPARA__OP_PAD: case OPARA__OP_RESIZE:
    OPARA__CASE_LOGIC_UNARY: OPARA__CASE_MATH_UNARY: case OPARA__OP_DET: case OPARA__OP_COUNT: break; /* one input, one output */
    }
    return a;
}

/* Arity: the first min_in inputs are present, inputs past max_in are omitted (-1). */
static opara_result opara__check_arity(opara__shape_ctx* c) {
    opara__arity a = opara__op_arity(c->n->op);
    uint32_t k;
    if (c->n->n_inputs < a.min_in || c->n->n_outputs < a.min_out || c->n->n_outputs > a.max_out)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "%u inputs and %u outputs (needs at least %u inputs and %u to %u outputs)",
                                 c->n->n_inputs, c->n->n_outputs, a.min_in, a.min_out, a.max_out);
    for (k = 0; k < c->n->n_inputs; ++k) {
        if ((k < a.min_in || a.none_omitted) && !c->in[k])
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "required input %u is omitted", k);
        if (k >= a.max_in && c->in[k])
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %u is not supported (the IR takes at most %u; constant "
                                     "inputs belong in attributes)", k, a.max_in);
        if (c->in[k] && c->in[k]->ndim < 0) return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %u has no shape", k);
    }
    return OPARA_OK;
}

static opara_result opara__shape_node(opara__shape_ctx* c) {
    opara_result r = opara__check_arity(c);
    if (r != OPARA_OK) return r;
    switch (c->n->op) {
    case OPARA__OP_CONV: return opara__shape_conv(c);
    case OPARA__OP_CONV_TRANSPOSE: return opara__shape_conv_transpose(c);
    case OPARA__OP_QUANTIZE_LINEAR: case OPARA__OP_DEQUANTIZE_LINEAR: return opara__shape_quantize(c);
    case OPARA__OP_DYNAMIC_QUANTIZE_LINEAR: return opara__shape_dynamic_quantize(c);
    case OPARA__OP_CONV_INTEGER: case OPARA__OP_QLINEAR_CONV: return opara__shape_quant_conv(c);
    case OPARA__OP_MATMUL_INTEGER: case OPARA__OP_QLINEAR_MATMUL: return opara__shape_quant_matmul(c);
    case OPARA__OP_MAX_POOL: case OPARA__OP_AVERAGE_POOL: return opara__shape_pool(c);
    case OPARA__OP_GLOBAL_AVERAGE_POOL: return opara__shape_global_pool(c);
    case OPARA__OP_BATCH_NORM: return opara__shape_batch_norm(c);
    case OPARA__OP_PRELU: return opara__shape_prelu(c);
    case OPARA__OP_INSTANCE_NORM: return opara__shape_instance_norm(c);
    case OPARA__OP_LRN: return opara__shape_lrn(c);
    case OPARA__OP_MVN: return opara__shape_mvn(c);
    case OPARA__OP_SHRINK: return opara__set_out(c, 0, c->in[0]);
    case OPARA__OP_GLOBAL_MAX_POOL: return opara__shape_global_pool(c);
    case OPARA__OP_MAX_UNPOOL: return opara__shape_max_unpool(c);
    case OPARA__OP_DROPOUT: return opara__shape_dropout(c);
    case OPARA__OP_EINSUM: return opara__shape_einsum(c);
    case OPARA__OP_ADD: case OPARA__OP_SUB: case OPARA__OP_MUL: case OPARA__OP_DIV: case OPARA__OP_POW:
    OPARA__CASE_COMPARE: OPARA__CASE_LOGIC_BINARY: case OPARA__OP_MOD: OPARA__CASE_VARIADIC:
    case OPARA__OP_WHERE: return opara__shape_broadcast(c);
    case OPARA__OP_BIT_SHIFT: return opara__shape_bit_shift(c);
    case OPARA__OP_CONCAT: return opara__shape_concat(c);
    case OPARA__OP_SPLIT: return opara__shape_split(c);
    case OPARA__OP_SLICE: return opara__shape_slice(c);
    case OPARA__OP_GATHER: return opara__shape_gather(c);
    case OPARA__OP_GATHER_ELEMENTS: case OPARA__OP_SCATTER_ELEMENTS: case OPARA__OP_SCATTER:
        return opara__shape_gather_elements(c);
    case OPARA__OP_GATHER_ND: return opara__shape_gather_nd(c);
    case OPARA__OP_SCATTER_ND: return opara__shape_scatter_nd(c);
    case OPARA__OP_SIZE: return opara__shape_size(c);
    case OPARA__OP_TRILU: return opara__shape_trilu(c);
    case OPARA__OP_TILE: return opara__shape_tile(c);
    case OPARA__OP_DEPTH_TO_SPACE: case OPARA__OP_SPACE_TO_DEPTH: return opara__shape_depth_space(c);
    case OPARA__OP_EYE_LIKE: return opara__shape_eye_like(c);
    case OPARA__OP_ONE_HOT: return opara__shape_one_hot(c);
    case OPARA__OP_REVERSE_SEQUENCE: return opara__shape_reverse_sequence(c);
    case OPARA__OP_RESHAPE: return opara__shape_reshape(c);
    case OPARA__OP_FLATTEN: return opara__shape_flatten(c);
    case OPARA__OP_TRANSPOSE: return opara__shape_transpose(c);
    case OPARA__OP_SQUEEZE: return opara__shape_squeeze(c);
    case OPARA__OP_UNSQUEEZE: return opara__shape_unsqueeze(c);
    case OPARA__OP_EXPAND: return opara__shape_expand(c);
    case OPARA__OP_GEMM: return opara__shape_gemm(c);
    case OPARA__OP_LSTM: case OPARA__OP_GRU: case OPARA__OP_RNN: return opara__shape_rnn(c);
    case OPARA__OP_MATMUL: return opara__shape_matmul(c);
    case OPARA__OP_SOFTMAX: return opara__shape_softmax(c);
    case OPARA__OP_LAYER_NORM: return opara__shape_layer_norm(c);
    case OPARA__OP_REDUCE_MEAN: OPARA__CASE_REDUCE_KINDS: return opara__shape_reduce(c);
    case OPARA__OP_ARG_MAX: case OPARA__OP_ARG_MIN: return opara__shape_arg_reduce(c);
    case OPARA__OP_LOG_SOFTMAX: case OPARA__OP_HARDMAX: return opara__shape_softmax(c);
    case OPARA__OP_CUM_SUM: return opara__shape_cum_sum(c);
    case OPARA__OP_PAD: return opara__shape_pad(c);
    case OPARA__OP_RESIZE: return opara__shape_resize(c);
    case OPARA__OP_TOPK: return opara__shape_topk(c);
    case OPARA__OP_GRID_SAMPLE: return opara__shape_grid_sample(c);
    case OPARA__OP_DET: return opara__shape_det(c);
    case OPARA__OP_RELU: case OPARA__OP_LEAKY_RELU: case OPARA__OP_SIGMOID: case OPARA__OP_TANH: case OPARA__OP_HARD_SIGMOID:
    case OPARA__OP_HARD_SWISH: case OPARA__OP_CLIP: case OPARA__OP_SQRT: case OPARA__OP_ERF: case OPARA__OP_GELU:
    case OPARA__OP_CAST: OPARA__CASE_LOGIC_UNARY: OPARA__CASE_MATH_UNARY:
        return opara__set_out(c, 0, c->in[0]); /* elementwise: the shape of input 0 */
    case OPARA__OP_COUNT: break;
    }
    return opara__shape_fail(c, OPARA_ERR_CORRUPT, "unknown operator");
}

/* Input dims a tolerant caller may hand in: known and within bounds, unknown (-1) or the batch. */
static int opara__shape_in_range(const opara__shape* s) {
    int32_t d;
    if (s->ndim > OPARA_MAX_DIMS) return 0;
    for (d = 0; d < s->ndim; ++d)
        if (s->dims[d] > OPARA__SHAPE_DIM_MAX || (s->dims[d] < -1 && s->dims[d] != OPARA__DIM_BATCH)) return 0;
    return 1;
}

static opara__fused_act opara__fused_activation(const opara__node* n) {
    const char* a = opara__attr_string(n, "activation", "");
    if (a[0] == 0) return OPARA__FUSED_NONE;
    if (strcmp(a, "Relu") == 0) return OPARA__FUSED_RELU;
    if (strcmp(a, "Gelu") == 0) return OPARA__FUSED_GELU;
    return strcmp(a, "GeluTanh") == 0 ? OPARA__FUSED_GELU_TANH : OPARA__FUSED_UNKNOWN;
}

/* Conv and Gemm take Relu only (the importer fuses no other into them). */
static opara__fused_act opara__fused_relu_only(const opara__node* n) {
    opara__fused_act act = opara__fused_activation(n);
    return act == OPARA__FUSED_NONE || act == OPARA__FUSED_RELU ? act : OPARA__FUSED_UNKNOWN;
}

/* The scalar attributes the backends read, with ONNX's defaults, into the node's record (the
   family its shape rule filled, or the op's own). */
static void opara__record_scalars(opara__shape_ctx* c) {
    const opara__node* n = c->n;
    opara__node_params* p = c->params;
    opara__op op = n->op;
    if (!p) return;
    if (op == OPARA__OP_CONV || op == OPARA__OP_CONV_TRANSPOSE) p->u.window.activation = opara__fused_relu_only(n);
    if (op == OPARA__OP_ADD || op == OPARA__OP_SUB || op == OPARA__OP_MUL || op == OPARA__OP_DIV)
        p->u.broadcast.activation = opara__fused_activation(n);
    if (op == OPARA__OP_QUANTIZE_LINEAR || op == OPARA__OP_DEQUANTIZE_LINEAR) {
        p->u.quant.saturate = opara__attr_int(n, "saturate", 1) != 0;
        p->u.quant.output_dtype = opara__attr_int(n, "output_dtype", 0);
    }
    if (op == OPARA__OP_MAX_POOL || op == OPARA__OP_AVERAGE_POOL) {
        p->u.window.count_include_pad = opara__attr_int(n, "count_include_pad", 0) != 0;
        p->u.window.storage_order = opara__attr_int(n, "storage_order", 0) != 0;
    }
    if (op == OPARA__OP_GEMM) {
        p->u.gemm.trans_a = opara__attr_int(n, "transA", 0) != 0;
        p->u.gemm.trans_b = opara__attr_int(n, "transB", 0) != 0;
        p->u.gemm.alpha = opara__attr_float(n, "alpha", 1.0f);
        p->u.gemm.beta = opara__attr_float(n, "beta", 1.0f);
        p->u.gemm.activation = opara__fused_relu_only(n);
    }
    if (op == OPARA__OP_LEAKY_RELU) p->u.activation.alpha = opara__attr_float(n, "alpha", 0.01f);
    if (op == OPARA__OP_HARD_SIGMOID) {
        p->u.activation.alpha = opara__attr_float(n, "alpha", 0.2f);
        p->u.activation.beta = opara__attr_float(n, "beta", 0.5f);
    }
    if (op == OPARA__OP_CLIP) {
        p->u.activation.min = opara__attr_float(n, "min", -HUGE_VALF);
        p->u.activation.max = opara__attr_float(n, "max", HUGE_VALF);
    }
    if (op == OPARA__OP_ELU || op == OPARA__OP_CELU || op == OPARA__OP_THRESHOLDED_RELU)
        p->u.activation.alpha = opara__attr_float(n, "alpha", 1.0f);
    if (op == OPARA__OP_SELU) {
        p->u.activation.alpha = opara__attr_float(n, "alpha", 1.67326319217681884765625f);
        p->u.activation.gamma = opara__attr_float(n, "gamma", 1.05070102214813232421875f);
    }
    if (op == OPARA__OP_GELU) p->u.activation.gelu_tanh = strcmp(opara__attr_string(n, "approximate", "none"), "tanh") == 0;
    if (op == OPARA__OP_BATCH_NORM || op == OPARA__OP_LAYER_NORM || op == OPARA__OP_INSTANCE_NORM)
        p->u.epsilon = opara__attr_float(n, "epsilon", 1e-5f);
    if (op == OPARA__OP_SHRINK) {
        p->u.activation.alpha = opara__attr_float(n, "lambd", 0.5f);
        p->u.activation.beta = opara__attr_float(n, "bias", 0.0f);
    }
    if (opara__reduce_kind_of(op, NULL)) p->u.reduce.keepdims = opara__attr_int(n, "keepdims", 1) != 0;
    if (op == OPARA__OP_ARG_MAX || op == OPARA__OP_ARG_MIN) {
        p->u.reduce.keepdims = opara__attr_int(n, "keepdims", 1) != 0;
        p->u.reduce.select_last_index = opara__attr_int(n, "select_last_index", 0) != 0;
    }
    if (op == OPARA__OP_CUM_SUM) {
        p->u.reduce.exclusive = opara__attr_int(n, "exclusive", 0) != 0;
        p->u.reduce.reverse = opara__attr_int(n, "reverse", 0) != 0;
    }
    if (op == OPARA__OP_CAST) p->u.cast_to = opara__attr_int(n, "to", -1);
    if (op == OPARA__OP_MOD) p->u.broadcast.fmod = opara__attr_int(n, "fmod", 0) != 0;
    if (op == OPARA__OP_BIT_SHIFT) p->u.broadcast.shift_left = strcmp(opara__attr_string(n, "direction", ""), "LEFT") == 0;
    if (op == OPARA__OP_IS_INF) {
        p->u.is_inf.detect_negative = opara__attr_int(n, "detect_negative", 1) != 0;
        p->u.is_inf.detect_positive = opara__attr_int(n, "detect_positive", 1) != 0;
    }
}

OPARA__PRIVATE opara_result opara__infer_node_shapes(opara_runtime* rt, const opara__graph* g, uint32_t node,
                                                    opara__shape_mode mode, int64_t batch, const opara__shape* const* in,
                                                    opara__shape* const* out, opara__node_params* params) {
    opara__shape_ctx c;
    opara_result r = OPARA_OK;
    uint32_t k;
    memset(&c, 0, sizeof c);
    c.rt = rt;
    c.node_index = node;
    c.n = &g->nodes[node];
    c.mode = mode;
    c.batch = mode == OPARA__SHAPE_TOLERANT ? OPARA__DIM_BATCH : batch;
    c.in = in;
    c.out = out;
    c.params = params;
    if (params) memset(params, 0, sizeof *params);
    if (c.n->n_inputs > OPARA_MAX_NODE_IO || c.n->n_outputs > OPARA_MAX_NODE_IO)
        r = opara__shape_fail(&c, OPARA_ERR_LIMIT_EXCEEDED, "too many inputs or outputs");
    for (k = 0; r == OPARA_OK && mode == OPARA__SHAPE_TOLERANT && k < c.n->n_inputs; ++k)
        if (in[k] && !opara__shape_in_range(in[k])) r = OPARA_ERR_SHAPE;
    if (r == OPARA_OK) r = opara__shape_node(&c);
    if (r == OPARA_OK) opara__record_scalars(&c);
    if (params) params->resolved = r == OPARA_OK;
    if (r == OPARA_OK || mode == OPARA__SHAPE_STRICT) return r;
    for (k = 0; k < c.n->n_outputs; ++k) out[k]->ndim = -1; /* tolerant: what could not be inferred is unknown */
    return OPARA_OK;
}

static opara_result opara__declared_shape(opara_runtime* rt, const opara__value* v, int64_t batch, opara__shape* s) {
    int32_t i;
    char buf[160];
    *s = v->shape;
    for (i = 0; i < s->ndim; ++i) {
        if (s->dims[i] == OPARA__DIM_BATCH) s->dims[i] = batch;
        if (s->dims[i] < 0 || s->dims[i] > OPARA__SHAPE_DIM_MAX)
            return opara__fail(rt, OPARA_ERR_SHAPE, "tensor '%s' has shape %s", v->name, opara__shape_str(&v->shape, buf, sizeof buf));
    }
    return OPARA_OK;
}


OPARA__PRIVATE opara_result opara__infer_shapes(opara_runtime* rt, const opara__graph* g, int64_t batch,
                                               opara__shape* shapes) {
    return opara__infer_shapes_params(rt, g, batch, shapes, NULL);
}

OPARA__PRIVATE opara_result opara__infer_shapes_params(opara_runtime* rt, const opara__graph* g, int64_t batch,
                                                      opara__shape* shapes, opara__node_params* params) {
    const opara__shape** in;
    opara__shape** out;
    uint32_t i, k;
    opara_result r = OPARA_OK;
    if (!g->finalized) return opara__fail(rt, OPARA_ERR_INVALID_STATE, "shape inference needs a finalized graph");
    if (batch < 1 || batch > OPARA__SHAPE_DIM_MAX)
        return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "batch size %lld", (long long)batch);
    for (i = 0; i < g->n_values && r == OPARA_OK; ++i) {
        if (g->values[i].kind == OPARA__VALUE_ACTIVATION) shapes[i].ndim = -1;
        else r = opara__declared_shape(rt, &g->values[i], batch, &shapes[i]);
    }
    if (r != OPARA_OK) return r;
    in = (const opara__shape**)opara__calloc(rt, OPARA_MAX_NODE_IO, sizeof *in);
    out = (opara__shape**)opara__calloc(rt, OPARA_MAX_NODE_IO, sizeof *out);
    if (!in || !out) r = opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory inferring shapes");
    for (i = 0; i < g->n_nodes && r == OPARA_OK; ++i) {
        const opara__node* n = &g->nodes[g->topo[i]];
        for (k = 0; k < n->n_inputs && k < OPARA_MAX_NODE_IO; ++k) in[k] = n->inputs[k] >= 0 ? &shapes[n->inputs[k]] : NULL;
        for (k = 0; k < n->n_outputs && k < OPARA_MAX_NODE_IO; ++k) out[k] = &shapes[n->outputs[k]];
        r = opara__infer_node_shapes(rt, g, g->topo[i], OPARA__SHAPE_STRICT, batch, in, out,
                                     params ? &params[g->topo[i]] : NULL);
    }
    opara__free(rt, (void*)in);
    opara__free(rt, out);
    return r;
}

/* Zero-sized tensors (a dim of 0, which ONNX allows and the inference above follows) are refused
   rather than run: no kernel has to plan for empty work, and the caller learns at load which input,
   constant or node made one. Inputs first (their declared shapes), then per node in order its
   constant inputs and (when shapes is not NULL) its outputs, so the first cause is named. */
OPARA__PRIVATE opara_result opara__refuse_zero_sized(opara_runtime* rt, const opara__graph* g, const opara__shape* shapes) {
    uint32_t i, k;
    int32_t d;
    char buf[160];
    for (i = 0; i < g->n_values; ++i) {
        if (g->values[i].kind != OPARA__VALUE_INPUT) continue;
        for (d = 0; d < g->values[i].shape.ndim; ++d)
            if (g->values[i].shape.dims[d] == 0)
                return opara__fail(rt, OPARA_ERR_SHAPE, "input '%s' has shape %s: dim %d is 0 (zero-sized tensors are not supported)",
                                   g->values[i].name, opara__shape_str(&g->values[i].shape, buf, sizeof buf), (int)d);
    }
    for (i = 0; i < g->n_nodes; ++i) {
        const opara__node* n = &g->nodes[g->topo[i]];
        for (k = 0; k < n->n_inputs; ++k) {
            const opara__value* v = n->inputs[k] >= 0 ? &g->values[n->inputs[k]] : NULL;
            if (v && v->kind == OPARA__VALUE_CONST && opara__shape_numel(&v->shape) == 0)
                return opara__fail(rt, OPARA_ERR_SHAPE, "node %u '%s' (%s): constant input %u '%s' has shape %s (zero-sized "
                                   "tensors are not supported)", g->topo[i], n->name ? n->name : "", opara__op_name(n->op), k,
                                   v->name, opara__shape_str(&v->shape, buf, sizeof buf));
        }
        for (k = 0; shapes && k < n->n_outputs; ++k)
            if (opara__shape_numel(&shapes[n->outputs[k]]) == 0)
                return opara__fail(rt, OPARA_ERR_SHAPE, "node %u '%s' (%s): output %u '%s' has shape %s (zero-sized tensors are not "
                                   "supported)", g->topo[i], n->name ? n->name : "", opara__op_name(n->op), k,
                                   g->values[n->outputs[k]].name, opara__shape_str(&shapes[n->outputs[k]], buf, sizeof buf));
    }
    return OPARA_OK;
}

/* ---- data types ------------------------------------------------------------------------------ */

static opara_result opara__dtype_fail(opara_runtime* rt, const opara__graph* g, uint32_t node, const char* what) {
    const opara__node* n = &g->nodes[node];
    return opara__fail(rt, OPARA_ERR_BAD_DTYPE, "node %u '%s' (%s): %s", node, n->name ? n->name : "", opara__op_name(n->op),
                       what);
}

static int opara__is_index_type(opara_dtype t) {
    return t == OPARA_DTYPE_I32 || t == OPARA_DTYPE_I64;
}

static int opara__is_quant_type(opara_dtype t) { return t == OPARA_DTYPE_U8 || t == OPARA_DTYPE_I8; }

/* The dtype of input k (in_dt: by input position; UNDEFINED when omitted). */
static opara_dtype opara__in_dtype(const opara__node* n, const opara_dtype* in_dt, uint32_t k) {
    return k < n->n_inputs ? in_dt[k] : OPARA_DTYPE_UNDEFINED;
}

/* Inputs that must be f32 (a mask of input positions; omitted ones pass). */
static int opara__f32_inputs(const opara__node* n, const opara_dtype* in_dt, uint32_t mask) {
    uint32_t k;
    for (k = 0; k < n->n_inputs && k < 32; ++k)
        if ((mask >> k & 1u) && in_dt[k] != OPARA_DTYPE_UNDEFINED && in_dt[k] != OPARA_DTYPE_F32) return 0;
    return 1;
}

/* The quantized operators: integer operands u8/i8 with zero points of their type, scales f32;
   QuantizeLinear's output is its zero point's type (else output_dtype, else u8), DequantizeLinear's
   f32, ConvInteger's and MatMulInteger's i32, QLinearConv's and QLinearMatMul's y_zero_point's.
   Returns what is wrong, or NULL. */
static const char* opara__dtype_quant(const opara__node* n, const opara_dtype* in_dt, opara_dtype* out) {
    int q = n->op == OPARA__OP_QLINEAR_CONV || n->op == OPARA__OP_QLINEAR_MATMUL;
    opara_dtype x = opara__in_dtype(n, in_dt, 0), zp = opara__in_dtype(n, in_dt, 2), w, wzp;
    if (n->op == OPARA__OP_QUANTIZE_LINEAR) {
        int64_t want = opara__attr_int(n, "output_dtype", 0);
        *out = zp != OPARA_DTYPE_UNDEFINED ? zp : want ? (opara_dtype)want : OPARA_DTYPE_U8;
        if (x != OPARA_DTYPE_F32 || !opara__f32_inputs(n, in_dt, 2u)) return "x and y_scale must be f32";
        if (!opara__is_quant_type(*out) || (want && want != (int64_t)*out))
            return "the output (y_zero_point's type or output_dtype) must be u8 or i8, and both agree";
        return NULL;
    }
    if (n->op == OPARA__OP_DEQUANTIZE_LINEAR) {
        *out = OPARA_DTYPE_F32;
        if (!opara__is_quant_type(x) && x != OPARA_DTYPE_I32) return "x must be u8, i8 or i32";
        if (zp != OPARA_DTYPE_UNDEFINED && zp != x) return "x_zero_point's type differs from x's";
        return opara__f32_inputs(n, in_dt, 2u) ? NULL : "x_scale must be f32";
    }
    if (n->op == OPARA__OP_DYNAMIC_QUANTIZE_LINEAR) {
        *out = OPARA_DTYPE_U8;
        return x == OPARA_DTYPE_F32 ? NULL : "x must be f32";
    }
    w = opara__in_dtype(n, in_dt, q ? 3 : 1);
    wzp = opara__in_dtype(n, in_dt, q ? 5 : 3);
    *out = q ? opara__in_dtype(n, in_dt, 7) : OPARA_DTYPE_I32;
    if (!opara__is_quant_type(x) || !opara__is_quant_type(w)) return "the integer operands must be u8 or i8";
    if ((zp != OPARA_DTYPE_UNDEFINED && zp != x) || (wzp != OPARA_DTYPE_UNDEFINED && wzp != w))
        return "a zero point's type differs from its operand's";
    if (q && (!opara__is_quant_type(*out) || !opara__f32_inputs(n, in_dt, 0x52u))) /* scales: inputs 1, 4, 6 */
        return "the scales must be f32 and y_zero_point u8 or i8";
    if (q && opara__in_dtype(n, in_dt, 8) != OPARA_DTYPE_UNDEFINED && opara__in_dtype(n, in_dt, 8) != OPARA_DTYPE_I32)
        return "the bias must be i32";
    return NULL;
}

static int opara__is_quant_op(opara__op op) {
    return op == OPARA__OP_QUANTIZE_LINEAR || op == OPARA__OP_DEQUANTIZE_LINEAR || op == OPARA__OP_DYNAMIC_QUANTIZE_LINEAR ||
           op == OPARA__OP_CONV_INTEGER || op == OPARA__OP_MATMUL_INTEGER || op == OPARA__OP_QLINEAR_CONV ||
           op == OPARA__OP_QLINEAR_MATMUL;
}

OPARA__PRIVATE int opara__op_out_dtype(const opara__node* n, const opara_dtype* in_dt, uint32_t k, opara_dtype* out) {
    if (n->op == OPARA__OP_TOPK && k == 1) {
        *out = OPARA_DTYPE_I64; /* the indices */
        return 1;
    }
    if (!opara__is_quant_op(n->op)) return 0;
    if (opara__dtype_quant(n, in_dt, out)) *out = OPARA_DTYPE_UNDEFINED;
    if (n->op == OPARA__OP_DYNAMIC_QUANTIZE_LINEAR && k == 1) *out = OPARA_DTYPE_F32;
    return 1;
}

/* The comparisons and the logical operators: inputs of one type (bool for And, Or, Xor and Not; a
   float type for IsNaN and IsInf), a bool output. */
static opara_result opara__dtype_logic(opara_runtime* rt, const opara__graph* g, uint32_t node, opara_dtype* dt) {
    const opara__node* n = &g->nodes[node];
    opara_dtype in0 = dt[n->inputs[0]];
    opara__op op = n->op;
    uint32_t k;
    for (k = 1; k < n->n_inputs; ++k)
        if (n->inputs[k] < 0 || dt[n->inputs[k]] != in0) return opara__dtype_fail(rt, g, node, "inputs have different data types");
    if ((op == OPARA__OP_AND || op == OPARA__OP_OR || op == OPARA__OP_XOR || op == OPARA__OP_NOT) && in0 != OPARA_DTYPE_BOOL)
        return opara__dtype_fail(rt, g, node, "the inputs are not bool");
    if ((op == OPARA__OP_IS_NAN || op == OPARA__OP_IS_INF) && in0 != OPARA_DTYPE_F32 && in0 != OPARA_DTYPE_F64 &&
        in0 != OPARA_DTYPE_F16)
        return opara__dtype_fail(rt, g, node, "the input is not a floating-point type");
    for (k = 0; k < n->n_outputs; ++k) dt[n->outputs[k]] = OPARA_DTYPE_BOOL;
    return OPARA_OK;
}

/* Output dtypes of one node from its input dtypes (0 = omitted input). */
static opara_result opara__dtype_node(opara_runtime* rt, const opara__graph* g, uint32_t node, opara_dtype* dt) {
    const opara__node* n = &g->nodes[node];
    opara_dtype in0 = n->n_inputs && n->inputs[0] >= 0 ? dt[n->inputs[0]] : OPARA_DTYPE_UNDEFINED, out = in0;
    uint32_t k;
    if (n->n_inputs == 0 || n->inputs[0] < 0) /* the graph's structure, not a data type, is wrong */
        return opara__fail(rt, OPARA_ERR_CORRUPT, "node %u '%s' (%s): input 0 is missing", node, n->name ? n->name : "",
                           opara__op_name(n->op));
    switch (n->op) {
    case OPARA__OP_QUANTIZE_LINEAR: case OPARA__OP_DEQUANTIZE_LINEAR: case OPARA__OP_DYNAMIC_QUANTIZE_LINEAR:
    case OPARA__OP_CONV_INTEGER: case OPARA__OP_MATMUL_INTEGER: case OPARA__OP_QLINEAR_CONV: case OPARA__OP_QLINEAR_MATMUL:
    {
        opara_dtype in_dt[16];
        const char* why;
        for (k = 0; k < n->n_inputs && k < 16; ++k)
            in_dt[k] = n->inputs[k] >= 0 ? dt[n->inputs[k]] : OPARA_DTYPE_UNDEFINED;
        why = n->n_inputs <= 16 ? opara__dtype_quant(n, in_dt, &out) : "too many inputs";
        if (why) return opara__dtype_fail(rt, g, node, why);
    }
        break;
    case OPARA__OP_CAST:
    {
        int64_t to = opara__attr_int(n, "to", 0);
        if (to < 1 || to > 64 || opara_dtype_size((opara_dtype)to) == 0)
            return opara__dtype_fail(rt, g, node, "attribute 'to' is not a supported data type");
        out = (opara_dtype)to;
    }
        break;
    case OPARA__OP_WHERE:
        if (n->n_inputs < 3 || n->inputs[1] < 0 || n->inputs[2] < 0) return opara__dtype_fail(rt, g, node, "needs 3 inputs");
        if (in0 != OPARA_DTYPE_BOOL) return opara__dtype_fail(rt, g, node, "the condition is not bool");
        out = dt[n->inputs[1]];
        if (dt[n->inputs[2]] != out) return opara__dtype_fail(rt, g, node, "inputs 1 and 2 have different types");
        break;
    case OPARA__OP_LSTM: case OPARA__OP_GRU: case OPARA__OP_RNN:
        for (k = 1; k < n->n_inputs; ++k)
            if (n->inputs[k] >= 0 && dt[n->inputs[k]] != (k == 4 ? OPARA_DTYPE_I32 : in0))
                return opara__dtype_fail(rt, g, node, k == 4 ? "sequence_lens must be i32" : "inputs have different data types");
        break;
    case OPARA__OP_GATHER:
        if (n->n_inputs < 2 || n->inputs[1] < 0 || !opara__is_index_type(dt[n->inputs[1]]))
            return opara__dtype_fail(rt, g, node, "indices must be i32 or i64");
        break;
    case OPARA__OP_GATHER_ELEMENTS: case OPARA__OP_GATHER_ND: case OPARA__OP_SCATTER_ELEMENTS: case OPARA__OP_SCATTER:
    case OPARA__OP_SCATTER_ND:
        if (n->n_inputs < 2 || n->inputs[1] < 0 || !opara__is_index_type(dt[n->inputs[1]]))
            return opara__dtype_fail(rt, g, node, "indices must be i32 or i64");
        if (n->op != OPARA__OP_GATHER_ELEMENTS && n->op != OPARA__OP_GATHER_ND &&
            (n->n_inputs < 3 || n->inputs[2] < 0 || dt[n->inputs[2]] != in0))
            return opara__dtype_fail(rt, g, node, "updates must have the data's type");
        break;
    case OPARA__OP_SIZE: out = OPARA_DTYPE_I64; break;
    case OPARA__OP_EYE_LIKE:
    {
        int64_t to = opara__attr_int(n, "dtype", (int64_t)in0);
        if (to < 1 || to > 64 || opara_dtype_size((opara_dtype)to) == 0)
            return opara__dtype_fail(rt, g, node, "attribute 'dtype' is not a supported data type");
        out = (opara_dtype)to;
    }
        break;
    case OPARA__OP_ONE_HOT:
        if (n->n_inputs < 2 || n->inputs[1] < 0 || in0 == OPARA_DTYPE_BOOL)
            return opara__dtype_fail(rt, g, node, "needs numeric indices and a values input");
        out = dt[n->inputs[1]];
        break;
    case OPARA__OP_REVERSE_SEQUENCE:
        if (n->n_inputs < 2 || n->inputs[1] < 0 || !opara__is_index_type(dt[n->inputs[1]]))
            return opara__dtype_fail(rt, g, node, "sequence_lens must be i32 or i64");
        break;
    case OPARA__OP_TRILU: case OPARA__OP_TILE: case OPARA__OP_DEPTH_TO_SPACE: case OPARA__OP_SPACE_TO_DEPTH:
        break; /* the type of input 0 */
    case OPARA__OP_PRELU:
        if (n->n_inputs < 2 || n->inputs[1] < 0 || dt[n->inputs[1]] != in0)
            return opara__dtype_fail(rt, g, node, "X and slope have different data types");
        break;
    case OPARA__OP_MAX_UNPOOL:
        if (n->n_inputs < 2 || n->inputs[1] < 0 || dt[n->inputs[1]] != OPARA_DTYPE_I64)
            return opara__dtype_fail(rt, g, node, "indices must be i64");
        break;
    case OPARA__OP_ADD: case OPARA__OP_SUB: case OPARA__OP_MUL: case OPARA__OP_DIV: case OPARA__OP_CONCAT:
    OPARA__CASE_INT_BINARY: OPARA__CASE_VARIADIC:
        for (k = 1; k < n->n_inputs; ++k)
            if (n->inputs[k] >= 0 && dt[n->inputs[k]] != in0)
                return opara__dtype_fail(rt, g, node, "inputs have different data types");
        break;
    OPARA__CASE_COMPARE: OPARA__CASE_LOGIC_BINARY: OPARA__CASE_LOGIC_UNARY:
        return opara__dtype_logic(rt, g, node, dt);
    case OPARA__OP_CONV: case OPARA__OP_CONV_TRANSPOSE: case OPARA__OP_MAX_POOL: case OPARA__OP_AVERAGE_POOL:
    case OPARA__OP_GLOBAL_AVERAGE_POOL: case OPARA__OP_BATCH_NORM: case OPARA__OP_INSTANCE_NORM: case OPARA__OP_LRN:
    case OPARA__OP_MVN: case OPARA__OP_SHRINK: case OPARA__OP_GLOBAL_MAX_POOL: case OPARA__OP_DROPOUT: case OPARA__OP_EINSUM:
    case OPARA__OP_RELU: case OPARA__OP_LEAKY_RELU:
    case OPARA__OP_SIGMOID: case OPARA__OP_TANH: case OPARA__OP_HARD_SIGMOID: case OPARA__OP_HARD_SWISH: case OPARA__OP_CLIP:
    case OPARA__OP_POW: case OPARA__OP_SQRT: case OPARA__OP_ERF: case OPARA__OP_GELU: case OPARA__OP_SPLIT: case OPARA__OP_SLICE:
    case OPARA__OP_RESHAPE: case OPARA__OP_FLATTEN: case OPARA__OP_TRANSPOSE: case OPARA__OP_SQUEEZE: case OPARA__OP_UNSQUEEZE:
    case OPARA__OP_EXPAND: case OPARA__OP_GEMM: case OPARA__OP_MATMUL: case OPARA__OP_SOFTMAX: case OPARA__OP_LAYER_NORM:
    case OPARA__OP_REDUCE_MEAN: OPARA__CASE_REDUCE_KINDS: case OPARA__OP_ARG_MAX: case OPARA__OP_ARG_MIN:
    case OPARA__OP_LOG_SOFTMAX: case OPARA__OP_HARDMAX: case OPARA__OP_CUM_SUM:
    case OPARA__OP_PAD: case OPARA__OP_RESIZE: OPARA__CASE_MATH_UNARY: case OPARA__OP_TOPK:
    case OPARA__OP_GRID_SAMPLE: case OPARA__OP_DET: case OPARA__OP_COUNT:
        break; /* the type of input 0 (ArgMax, ArgMin: i64, below) */
    }
    for (k = 0; k < n->n_outputs; ++k) {
        opara_dtype t = out;
        if ((n->op == OPARA__OP_MAX_POOL || n->op == OPARA__OP_TOPK) && k == 1) t = OPARA_DTYPE_I64;
        if (n->op == OPARA__OP_DROPOUT && k == 1) t = OPARA_DTYPE_BOOL;
        if (n->op == OPARA__OP_LAYER_NORM && k > 0) t = OPARA_DTYPE_F32;
        if (n->op == OPARA__OP_DYNAMIC_QUANTIZE_LINEAR && k == 1) t = OPARA_DTYPE_F32;
        if (n->op == OPARA__OP_ARG_MAX || n->op == OPARA__OP_ARG_MIN) t = OPARA_DTYPE_I64;
        dt[n->outputs[k]] = t;
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__infer_dtypes(opara_runtime* rt, const opara__graph* g, opara_dtype* dtypes) {
    uint32_t i;
    if (!g->finalized) return opara__fail(rt, OPARA_ERR_INVALID_STATE, "dtype inference needs a finalized graph");
    for (i = 0; i < g->n_values; ++i)
        dtypes[i] = g->values[i].kind == OPARA__VALUE_ACTIVATION ? OPARA_DTYPE_UNDEFINED : g->values[i].dtype;
    for (i = 0; i < g->n_nodes; ++i) {
        opara_result r = opara__dtype_node(rt, g, g->topo[i], dtypes);
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}
