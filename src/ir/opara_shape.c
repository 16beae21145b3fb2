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
    if (vsnprintf(detail, sizeof detail, fmt, args) < 0) detail[0] = 0;
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

static opara_result opara__shape_conv(opara__shape_ctx* c) {
    const opara__shape *x = c->in[0], *wt = c->in[1], *bias = c->n->n_inputs > 2 ? c->in[2] : NULL;
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

/* numpy matmul: 1-D operands get a dim prepended (A) / appended (B) that is removed again. */
static opara_result opara__shape_matmul(opara__shape_ctx* c) {
    opara__shape a = *c->in[0], bm = *c->in[1], ba, bb, batch, y;
    opara__sbuf b;
    int a1 = a.ndim == 1, b1 = bm.ndim == 1;
    if (a.ndim < 1 || bm.ndim < 1)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "operands %s and %s must not be scalars", opara__sh(&b, 0, c->in[0]),
                                 opara__sh(&b, 1, c->in[1]));
    if (a1) a.ndim = 2, a.dims[1] = a.dims[0], a.dims[0] = 1;
    if (b1) bm.ndim = 2, bm.dims[1] = 1;
    if (opara__dims_differ(c, a.dims[a.ndim - 1], bm.dims[bm.ndim - 2]))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "%s x %s: inner dims differ", opara__sh(&b, 0, c->in[0]),
                                 opara__sh(&b, 1, c->in[1]));
    ba = a, bb = bm;
    ba.ndim -= 2, bb.ndim -= 2;
    if (!opara__broadcast(c, &ba, &bb, &batch))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "%s x %s: batch dims do not broadcast", opara__sh(&b, 0, c->in[0]),
                                 opara__sh(&b, 1, c->in[1]));
    y = batch;
    if (!a1) y.dims[y.ndim++] = a.dims[a.ndim - 2];
    if (!b1) y.dims[y.ndim++] = bm.dims[bm.ndim - 1];
    return opara__set_out(c, 0, &y);
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

static opara_result opara__shape_reduce_mean(opara__shape_ctx* c) {
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
    case OPARA__OP_MAX_POOL: a.max_out = 2; break;
    case OPARA__OP_BATCH_NORM: a.min_in = a.max_in = 5; break;
    case OPARA__OP_PRELU: case OPARA__OP_MAX_UNPOOL: a.min_in = a.max_in = 2; break;
    case OPARA__OP_INSTANCE_NORM: a.min_in = a.max_in = 3; break;
    case OPARA__OP_DROPOUT: a.max_out = 2; break;
    case OPARA__OP_EINSUM: a.max_in = 2; break;
    case OPARA__OP_LRN: case OPARA__OP_MVN: case OPARA__OP_SHRINK: case OPARA__OP_GLOBAL_MAX_POOL: break;
    case OPARA__OP_ADD: case OPARA__OP_SUB: case OPARA__OP_MUL: case OPARA__OP_DIV: case OPARA__OP_POW:
    case OPARA__OP_GATHER: case OPARA__OP_MATMUL: a.min_in = a.max_in = 2; break;
    case OPARA__OP_CONCAT: a.max_in = OPARA__ANY, a.none_omitted = 1; break;
    case OPARA__OP_SPLIT: a.max_out = OPARA__ANY; break;
    case OPARA__OP_LAYER_NORM: a.min_in = 2, a.max_in = 3, a.max_out = 3; break;
    case OPARA__OP_WHERE: a.min_in = a.max_in = 3; break;
    case OPARA__OP_GLOBAL_AVERAGE_POOL: case OPARA__OP_AVERAGE_POOL: case OPARA__OP_RELU: case OPARA__OP_LEAKY_RELU:
    case OPARA__OP_SIGMOID: case OPARA__OP_TANH: case OPARA__OP_HARD_SIGMOID: case OPARA__OP_HARD_SWISH: case OPARA__OP_CLIP:
    case OPARA__OP_SQRT: case OPARA__OP_ERF: case OPARA__OP_GELU: case OPARA__OP_SLICE: case OPARA__OP_RESHAPE:
    case OPARA__OP_FLATTEN: case OPARA__OP_TRANSPOSE: case OPARA__OP_SQUEEZE: case OPARA__OP_UNSQUEEZE: case OPARA__OP_EXPAND:
    case OPARA__OP_SOFTMAX: case OPARA__OP_REDUCE_MEAN: case OPARA__OP_CAST: case OPARA__OP_PAD: case OPARA__OP_RESIZE:
    OPARA__CASE_MATH_UNARY: case OPARA__OP_COUNT: break; /* one input, one output */
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
    case OPARA__OP_WHERE: return opara__shape_broadcast(c);
    case OPARA__OP_CONCAT: return opara__shape_concat(c);
    case OPARA__OP_SPLIT: return opara__shape_split(c);
    case OPARA__OP_SLICE: return opara__shape_slice(c);
    case OPARA__OP_GATHER: return opara__shape_gather(c);
    case OPARA__OP_RESHAPE: return opara__shape_reshape(c);
    case OPARA__OP_FLATTEN: return opara__shape_flatten(c);
    case OPARA__OP_TRANSPOSE: return opara__shape_transpose(c);
    case OPARA__OP_SQUEEZE: return opara__shape_squeeze(c);
    case OPARA__OP_UNSQUEEZE: return opara__shape_unsqueeze(c);
    case OPARA__OP_EXPAND: return opara__shape_expand(c);
    case OPARA__OP_GEMM: return opara__shape_gemm(c);
    case OPARA__OP_MATMUL: return opara__shape_matmul(c);
    case OPARA__OP_SOFTMAX: return opara__shape_softmax(c);
    case OPARA__OP_LAYER_NORM: return opara__shape_layer_norm(c);
    case OPARA__OP_REDUCE_MEAN: return opara__shape_reduce_mean(c);
    case OPARA__OP_PAD: return opara__shape_pad(c);
    case OPARA__OP_RESIZE: return opara__shape_resize(c);
    case OPARA__OP_RELU: case OPARA__OP_LEAKY_RELU: case OPARA__OP_SIGMOID: case OPARA__OP_TANH: case OPARA__OP_HARD_SIGMOID:
    case OPARA__OP_HARD_SWISH: case OPARA__OP_CLIP: case OPARA__OP_SQRT: case OPARA__OP_ERF: case OPARA__OP_GELU:
    case OPARA__OP_CAST: OPARA__CASE_MATH_UNARY:
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
    return a[0] == 0 ? OPARA__FUSED_NONE : strcmp(a, "Relu") == 0 ? OPARA__FUSED_RELU : OPARA__FUSED_UNKNOWN;
}

/* The scalar attributes the backends read, with ONNX's defaults, into the node's record (the
   family its shape rule filled, or the op's own). */
static void opara__record_scalars(opara__shape_ctx* c) {
    const opara__node* n = c->n;
    opara__node_params* p = c->params;
    opara__op op = n->op;
    if (!p) return;
    if (op == OPARA__OP_CONV || op == OPARA__OP_CONV_TRANSPOSE) p->u.window.activation = opara__fused_activation(n);
    if (op == OPARA__OP_MAX_POOL || op == OPARA__OP_AVERAGE_POOL) {
        p->u.window.count_include_pad = opara__attr_int(n, "count_include_pad", 0) != 0;
        p->u.window.storage_order = opara__attr_int(n, "storage_order", 0) != 0;
    }
    if (op == OPARA__OP_GEMM) {
        p->u.gemm.trans_a = opara__attr_int(n, "transA", 0) != 0;
        p->u.gemm.trans_b = opara__attr_int(n, "transB", 0) != 0;
        p->u.gemm.alpha = opara__attr_float(n, "alpha", 1.0f);
        p->u.gemm.beta = opara__attr_float(n, "beta", 1.0f);
        p->u.gemm.activation = opara__fused_activation(n);
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
    if (op == OPARA__OP_REDUCE_MEAN) p->u.reduce.keepdims = opara__attr_int(n, "keepdims", 1) != 0;
    if (op == OPARA__OP_CAST) p->u.cast_to = opara__attr_int(n, "to", -1);
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

/* Output dtypes of one node from its input dtypes (0 = omitted input). */
static opara_result opara__dtype_node(opara_runtime* rt, const opara__graph* g, uint32_t node, opara_dtype* dt) {
    const opara__node* n = &g->nodes[node];
    opara_dtype in0 = n->n_inputs && n->inputs[0] >= 0 ? dt[n->inputs[0]] : OPARA_DTYPE_UNDEFINED, out = in0;
    uint32_t k;
    if (n->n_inputs == 0 || n->inputs[0] < 0) /* the graph's structure, not a data type, is wrong */
        return opara__fail(rt, OPARA_ERR_CORRUPT, "node %u '%s' (%s): input 0 is missing", node, n->name ? n->name : "",
                           opara__op_name(n->op));
    switch (n->op) {
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
    case OPARA__OP_GATHER:
        if (n->n_inputs < 2 || n->inputs[1] < 0 || !opara__is_index_type(dt[n->inputs[1]]))
            return opara__dtype_fail(rt, g, node, "indices must be i32 or i64");
        break;
    case OPARA__OP_PRELU:
        if (n->n_inputs < 2 || n->inputs[1] < 0 || dt[n->inputs[1]] != in0)
            return opara__dtype_fail(rt, g, node, "X and slope have different data types");
        break;
    case OPARA__OP_MAX_UNPOOL:
        if (n->n_inputs < 2 || n->inputs[1] < 0 || dt[n->inputs[1]] != OPARA_DTYPE_I64)
            return opara__dtype_fail(rt, g, node, "indices must be i64");
        break;
    case OPARA__OP_ADD: case OPARA__OP_SUB: case OPARA__OP_MUL: case OPARA__OP_DIV: case OPARA__OP_CONCAT:
        for (k = 1; k < n->n_inputs; ++k)
            if (n->inputs[k] >= 0 && dt[n->inputs[k]] != in0)
                return opara__dtype_fail(rt, g, node, "inputs have different data types");
        break;
    case OPARA__OP_CONV: case OPARA__OP_CONV_TRANSPOSE: case OPARA__OP_MAX_POOL: case OPARA__OP_AVERAGE_POOL:
    case OPARA__OP_GLOBAL_AVERAGE_POOL: case OPARA__OP_BATCH_NORM: case OPARA__OP_INSTANCE_NORM: case OPARA__OP_LRN:
    case OPARA__OP_MVN: case OPARA__OP_SHRINK: case OPARA__OP_GLOBAL_MAX_POOL: case OPARA__OP_DROPOUT: case OPARA__OP_EINSUM:
    case OPARA__OP_RELU: case OPARA__OP_LEAKY_RELU:
    case OPARA__OP_SIGMOID: case OPARA__OP_TANH: case OPARA__OP_HARD_SIGMOID: case OPARA__OP_HARD_SWISH: case OPARA__OP_CLIP:
    case OPARA__OP_POW: case OPARA__OP_SQRT: case OPARA__OP_ERF: case OPARA__OP_GELU: case OPARA__OP_SPLIT: case OPARA__OP_SLICE:
    case OPARA__OP_RESHAPE: case OPARA__OP_FLATTEN: case OPARA__OP_TRANSPOSE: case OPARA__OP_SQUEEZE: case OPARA__OP_UNSQUEEZE:
    case OPARA__OP_EXPAND: case OPARA__OP_GEMM: case OPARA__OP_MATMUL: case OPARA__OP_SOFTMAX: case OPARA__OP_LAYER_NORM:
    case OPARA__OP_REDUCE_MEAN: case OPARA__OP_PAD: case OPARA__OP_RESIZE: OPARA__CASE_MATH_UNARY: case OPARA__OP_COUNT:
        break; /* the type of input 0 */
    }
    for (k = 0; k < n->n_outputs; ++k) {
        opara_dtype t = out;
        if (n->op == OPARA__OP_MAX_POOL && k == 1) t = OPARA_DTYPE_I64;
        if (n->op == OPARA__OP_DROPOUT && k == 1) t = OPARA_DTYPE_BOOL;
        if (n->op == OPARA__OP_LAYER_NORM && k > 0) t = OPARA_DTYPE_F32;
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
