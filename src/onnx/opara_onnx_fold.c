/* The ONNX importer's state and its constant folder (see opara_onnx.h).

   A node whose inputs are all constant (or a Shape whose input shape is known) is evaluated at
   import time into a new constant. Integer constants carry a per-element multiple of the symbolic
   batch ("value + k * batch"), so the Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains of
   batch-dynamic exports fold. Float32 arithmetic is done by the CPU kernels themselves, so that a
   folded constant holds the bits a session would compute; the shapes (and Slice offsets) of folded
   views and slices come from the shape engine, as the kernels' do. Operator parameters that ONNX
   passes as constant inputs (axes, pads, shapes) are read here too. */
#include "opara_onnx.h"
#include "../model/opara_model.h"
#include "../cpu/opara_cpu.h"

#include <math.h>

/* ---- importer state --------------------------------------------------------------------------- */

OPARA__PRIVATE opara__imp_side* opara__side(opara__imp* im, int32_t v) {
    size_t need = (size_t)v + 1, old = im->side_cap, i;
    if (need > im->side_cap) {
        if (opara__grow(im->rt, (void**)&im->side, &im->side_cap, need, sizeof *im->side) != OPARA_OK) return NULL;
        for (i = old; i < im->side_cap; ++i) {
            im->side[i].alias = -1;
            im->side[i].shape.ndim = -1;
            im->side[i].narrow = -1;
            im->side[i].onnx_f16 = 0;
        }
    }
    return &im->side[v];
}

OPARA__PRIVATE int32_t opara__imp_find(opara__imp* im, const char* name) {
    int32_t v = opara__graph_find_value(im->g, name);
    int guard = 0;
    while (v >= 0 && (size_t)v < im->side_cap && im->side[v].alias >= 0 && guard++ < 1000000) v = im->side[v].alias;
    return v;
}

OPARA__PRIVATE const opara__shape* opara__imp_shape(opara__imp* im, int32_t v) {
    const opara__value* val = &im->g->values[v];
    if (val->kind != OPARA__VALUE_ACTIVATION || (size_t)v >= im->side_cap) return &val->shape;
    return &im->side[v].shape;
}

OPARA__PRIVATE int opara__is_const(opara__imp* im, int32_t v) {
    return v >= 0 && im->g->values[v].kind == OPARA__VALUE_CONST;
}

OPARA__PRIVATE void opara__cv_of(opara__imp* im, int32_t v, opara__cv* cv) {
    const opara__value* val = &im->g->values[v];
    int32_t i;
    cv->dtype = val->dtype;
    cv->shape = val->shape;
    cv->data = (const uint8_t*)val->data;
    cv->coef = (size_t)v < im->side_cap ? im->side[v].coef : NULL;
    cv->count = 1;
    for (i = 0; i < val->shape.ndim; ++i) cv->count *= (uint64_t)val->shape.dims[i];
}

static void* opara__imp_alloc(opara__imp* im, uint64_t bytes) {
    if (bytes > (uint64_t)((size_t)-1 - 64)) return NULL;
    return opara__pool_alloc(im->rt, &im->g->pool, (size_t)bytes + 1, 64);
}

OPARA__PRIVATE opara_result opara__imp_oom(opara__imp* im) {
    return opara__fail(im->rt, OPARA_ERR_OUT_OF_MEMORY, "node '%s': out of memory", im->node_name);
}

/* A graph insertion failed with the detail set: out of memory stays so; anything else (a name
   defined twice, a rank beyond the limit) is the ONNX model's fault. */
OPARA__PRIVATE opara_result opara__onnx_insert_result(opara_result r) {
    return r == OPARA_ERR_OUT_OF_MEMORY ? r : OPARA_ERR_ONNX_INVALID;
}

/* Elements of a shape with known dims; UINT64_MAX when a dim is negative or the product overflows. */
OPARA__PRIVATE uint64_t opara__shape_count(const opara__shape* s) {
    uint64_t n = 1;
    int32_t i;
    for (i = 0; i < s->ndim; ++i) {
        if (s->dims[i] < 0 || (s->dims[i] && n > UINT64_MAX / (uint64_t)s->dims[i])) return UINT64_MAX;
        n *= (uint64_t)s->dims[i];
    }
    return n;
}

/* Constants larger than this are not folded (the node is imported as an operator instead). */
#define OPARA__FOLD_MAX_ELEMENTS (UINT64_C(1) << 26)

/* Creates (or reuses an existing undefined) value name as a constant; data is in the graph pool. */
OPARA__PRIVATE opara_result opara__imp_const(opara__imp* im, const char* name, opara_dtype dtype, const opara__shape* shape,
                                             const void* data, const int64_t* coef, int copy) {
    int32_t v = opara__graph_find_value(im->g, name);
    opara__imp_side* side;
    opara_result r;
    int has_coef = 0, widened = dtype == OPARA_DTYPE_F16;
    uint64_t i, n = opara__shape_count(shape);
    if (v >= 0) return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "tensor '%s' is defined twice", name);
    if (widened) { /* f16 constants are stored widened to f32, once, here (docs/ARCHITECTURE.md) */
        float* wide = n < UINT64_MAX / sizeof(float) ? (float*)opara__imp_alloc(im, n * sizeof(float)) : NULL;
        if (!wide) return opara__imp_oom(im);
        for (i = 0; i < n; ++i) wide[i] = opara__f16_to_f32(((const uint16_t*)data)[i]);
        data = wide;
        dtype = OPARA_DTYPE_F32;
        copy = 0;
    }
    r = opara__graph_insert_value(im->g, name, dtype, shape, &v);
    if (r != OPARA_OK) return opara__onnx_insert_result(r);
    r = opara__graph_set_const(im->g, v, data, n * opara_dtype_size(dtype), copy);
    if (r != OPARA_OK) return r;
    for (i = 0; coef && i < n; ++i) has_coef |= coef[i] != 0;
    side = opara__side(im, v);
    if (!side) return opara__imp_oom(im);
    side->coef = has_coef ? coef : NULL;
    side->onnx_f16 = widened;
    return OPARA_OK;
}

/* ---- element access --------------------------------------------------------------------------- */

static int opara__dtype_is_float(opara_dtype t) { return t == OPARA_DTYPE_F32 || t == OPARA_DTYPE_F64; }
static int opara__dtype_is_int(opara_dtype t) {
    return t == OPARA_DTYPE_I64 || t == OPARA_DTYPE_I32 || t == OPARA_DTYPE_I8 || t == OPARA_DTYPE_U8 ||
           t == OPARA_DTYPE_BOOL;
}
static int opara__dtype_numeric(opara_dtype t) { return opara__dtype_is_float(t) || opara__dtype_is_int(t); }

static double opara__get_f64(opara_dtype t, const uint8_t* p, uint64_t i) {
    switch (t) {
    case OPARA_DTYPE_F32: { float v; memcpy(&v, p + i * 4, 4); return v; }
    case OPARA_DTYPE_F64: { double v; memcpy(&v, p + i * 8, 8); return v; }
    case OPARA_DTYPE_I64: { int64_t v; memcpy(&v, p + i * 8, 8); return (double)v; }
    case OPARA_DTYPE_I32: { int32_t v; memcpy(&v, p + i * 4, 4); return v; }
    case OPARA_DTYPE_I8: return (double)(int8_t)p[i];
    default: return p[i];
    }
}

OPARA__PRIVATE int64_t opara__get_i64(opara_dtype t, const uint8_t* p, uint64_t i) {
    switch (t) {
    case OPARA_DTYPE_I64: { int64_t v; memcpy(&v, p + i * 8, 8); return v; }
    case OPARA_DTYPE_I32: { int32_t v; memcpy(&v, p + i * 4, 4); return v; }
    case OPARA_DTYPE_I8: return (int8_t)p[i];
    case OPARA_DTYPE_U8: case OPARA_DTYPE_BOOL: return p[i];
    default: {
        double d = opara__get_f64(t, p, i);
        if (!(d > -9.2e18 && d < 9.2e18)) return 0;
        return (int64_t)d;
    }
    }
}

static void opara__put_f64(opara_dtype t, uint8_t* p, uint64_t i, double v) {
    switch (t) {
    case OPARA_DTYPE_F32: { float f = (float)v; memcpy(p + i * 4, &f, 4); break; }
    case OPARA_DTYPE_F64: memcpy(p + i * 8, &v, 8); break;
    default: break;
    }
}

static void opara__put_i64(opara_dtype t, uint8_t* p, uint64_t i, int64_t v) {
    switch (t) {
    case OPARA_DTYPE_I64: memcpy(p + i * 8, &v, 8); break;
    case OPARA_DTYPE_I32: { int32_t x = (int32_t)v; memcpy(p + i * 4, &x, 4); break; }
    case OPARA_DTYPE_BOOL: p[i] = (uint8_t)(v != 0); break;
    case OPARA_DTYPE_I8: case OPARA_DTYPE_U8: p[i] = (uint8_t)v; break;
    default: opara__put_f64(t, p, i, (double)v); break;
    }
}

/* Integer values of a 1-D (or scalar) constant with no batch terms; 0 if not so. */
static int opara__cv_ints(const opara__cv* cv, int64_t* out, uint32_t cap, uint32_t* n) {
    uint64_t i;
    if (!opara__dtype_is_int(cv->dtype) || cv->shape.ndim > 1 || cv->count > cap) return 0;
    for (i = 0; i < cv->count; ++i) {
        if (cv->coef && cv->coef[i]) return 0;
        out[i] = opara__get_i64(cv->dtype, cv->data, i);
    }
    *n = (uint32_t)cv->count;
    return 1;
}

OPARA__PRIVATE int64_t opara__onnx_axis(int64_t axis, int32_t rank) {
    return axis < 0 ? axis + rank : axis;
}

/* ---- attributes of the ONNX node being imported ------------------------------------------------ */

OPARA__PRIVATE const opara__onnx_attr* opara__oattr(const opara__onnx_node* n, const char* name) {
    uint32_t i;
    for (i = 0; i < n->n_attrs; ++i)
        if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}

OPARA__PRIVATE int64_t opara__oattr_int(const opara__onnx_node* n, const char* name, int64_t fallback) {
    const opara__onnx_attr* a = opara__oattr(n, name);
    return a && a->has_i ? a->i : fallback;
}

OPARA__PRIVATE const int64_t* opara__oattr_ints(const opara__onnx_node* n, const char* name, uint32_t* count) {
    const opara__onnx_attr* a = opara__oattr(n, name);
    *count = a ? a->n_ints : 0;
    return a && (a->n_ints || a->type == OPARA__ONNX_ATTR_INTS) ? a->ints : NULL;
}

/* ---- constant evaluator ----------------------------------------------------------------------- */

static int opara__cv_alloc(opara__imp* im, opara__cv* out, opara_dtype dtype, const opara__shape* shape,
                           int with_coef, uint8_t** data, int64_t** coef) {
    out->dtype = dtype;
    out->shape = *shape;
    out->count = opara__shape_count(shape);
    if (out->count > OPARA__FOLD_MAX_ELEMENTS || !opara_dtype_size(dtype)) return OPARA__NOFOLD;
    *data = (uint8_t*)opara__imp_alloc(im, out->count * opara_dtype_size(dtype));
    *coef = with_coef ? (int64_t*)opara__imp_alloc(im, out->count * 8) : NULL;
    if (!*data || (with_coef && !*coef)) return opara__imp_oom(im);
    if (*coef) memset(*coef, 0, (size_t)out->count * 8);
    out->data = *data;
    out->coef = *coef;
    return OPARA_OK;
}

static int opara__cv_broadcast(const opara__cv* const* in, uint32_t n, opara__shape* out, int64_t (*strides)[OPARA_MAX_DIMS]) {
    const opara__shape* shapes[3];
    uint32_t k;
    for (k = 0; k < n && k < 3; ++k) shapes[k] = &in[k]->shape;
    return n <= 3 && opara__broadcast_shapes(shapes, n, OPARA__SHAPE_STRICT, out, strides);
}

/* Element offset in an input (broadcast strides st) of the output's flat index idx. */
static uint64_t opara__bcast_src(const opara__shape* out, const int64_t* st, uint64_t idx) {
    uint64_t src = 0;
    int32_t d;
    for (d = out->ndim - 1; d >= 0; --d) {
        uint64_t od = (uint64_t)out->dims[d];
        src += (idx % od) * (uint64_t)st[d];
        idx /= od;
    }
    return src;
}

static int64_t opara__wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t opara__wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

/* value + k*batch arithmetic; returns 0 when the result is not of that form. */
static int opara__affine(char op, int64_t xa, int64_t ka, int64_t xb, int64_t kb, int64_t* x, int64_t* k) {
    switch (op) {
    case '+': *x = opara__wrap_add(xa, xb); *k = opara__wrap_add(ka, kb); return 1;
    case '-': *x = opara__wrap_add(xa, -xb); *k = opara__wrap_add(ka, -kb); return 1;
    case '*':
        if (ka && kb) return 0;
        *x = opara__wrap_mul(xa, xb);
        *k = opara__wrap_add(opara__wrap_mul(ka, xb), opara__wrap_mul(kb, xa));
        return 1;
    case '/':
        if (kb || xb == 0 || (xb == -1 && (xa == INT64_MIN || ka == INT64_MIN))) return 0;
        if (ka % xb || (ka && xa % xb)) return 0;
        *x = xa / xb;
        *k = ka / xb;
        return 1;
    default: return 0;
    }
}

/* A float32 copy of a constant that the CPU kernels may read (aligned; constants may sit anywhere
   in the file's bytes). */
static float* opara__cv_f32_copy(opara__imp* im, const opara__cv* x) {
    float* f = (float*)opara__calloc(im->rt, (size_t)(x->count ? x->count : 1), sizeof(float));
    if (f && x->count) memcpy(f, x->data, (size_t)x->count * sizeof(float));
    return f;
}

static void opara__cv_tensor(const opara__cv* x, const float* data, opara__cpu_tensor* t) {
    memset(t, 0, sizeof *t);
    t->dtype = OPARA_DTYPE_F32;
    t->ndim = x->shape.ndim;
    memcpy(t->dims, x->shape.dims, sizeof t->dims);
    t->data = (void*)(uintptr_t)data;
}

/* Float32 Add/Sub/Mul/Div/Pow folded by the CPU kernel itself, so that the constant holds the bits a
   session would compute (the kernels compute in float: Pow is powf, x^2 is x*x). */
static int opara__fold_binary_f32(opara__imp* im, opara__op kind, const opara__cv* a, const opara__cv* b,
                                  const opara__shape* shape, int64_t (*st)[OPARA_MAX_DIMS], float* y) {
    opara__node node;
    opara__node_params params;
    opara__cpu_tensor t[3];
    opara__cpu_op op;
    char err[OPARA__DETAIL_MAX];
    float scratch[1];
    float *fa = opara__cv_f32_copy(im, a), *fb = opara__cv_f32_copy(im, b);
    int r = OPARA__NOFOLD;
    memset(&node, 0, sizeof node);
    memset(&params, 0, sizeof params);
    memset(&op, 0, sizeof op);
    node.op = kind, node.n_inputs = 2, node.n_outputs = 1;
    params.resolved = 1;
    memcpy(params.u.broadcast.strides, st, 2 * sizeof st[0]);
    if (fa && fb) {
        opara__cv_tensor(a, fa, &t[0]);
        opara__cv_tensor(b, fb, &t[1]);
        t[2].dtype = OPARA_DTYPE_F32, t[2].ndim = shape->ndim, t[2].data = y;
        memcpy(t[2].dims, shape->dims, sizeof t[2].dims);
        op.node = &node, op.params = &params, op.n_in = 2, op.n_out = 1, op.in = t, op.out = t + 2, op.workers = 1;
        if (opara__cpu_prepare(&op, err, sizeof err) == OPARA_OK &&
            (!op.work_items || op.fn(&op, 0, op.work_items, scratch) == OPARA_OK))
            r = OPARA_OK;
    }
    opara__free(im->rt, fa);
    opara__free(im->rt, fb);
    return r;
}

static int opara__eval_binary(opara__imp* im, char op, const opara__cv* a, const opara__cv* b, opara__cv* out) {
    const opara__cv* in[2];
    opara__shape shape;
    int64_t st[2][OPARA_MAX_DIMS];
    opara_dtype rt;
    uint8_t* data;
    int64_t* coef;
    uint64_t i;
    int r, is_float = opara__dtype_is_float(a->dtype);
    in[0] = a;
    in[1] = b;
    if (!opara__dtype_numeric(a->dtype) || a->dtype != b->dtype || !opara__cv_broadcast(in, 2, &shape, st)) return OPARA__NOFOLD;
    rt = op == '=' ? OPARA_DTYPE_BOOL : a->dtype;
    r = opara__cv_alloc(im, out, rt, &shape, (a->coef || b->coef) && rt == OPARA_DTYPE_I64, &data, &coef);
    if (r != OPARA_OK) return r;
    if (rt == OPARA_DTYPE_F32 && op != '=')
        return opara__fold_binary_f32(im, op == '+' ? OPARA__OP_ADD : op == '-' ? OPARA__OP_SUB : op == '*' ? OPARA__OP_MUL
                                          : op == '/' ? OPARA__OP_DIV : OPARA__OP_POW, a, b, &shape, st, (float*)data);
    for (i = 0; i < out->count; ++i) {
        uint64_t ia = opara__bcast_src(&shape, st[0], i), ib = opara__bcast_src(&shape, st[1], i);
        if (is_float) {
            double x = opara__get_f64(a->dtype, a->data, ia), y = opara__get_f64(b->dtype, b->data, ib), z;
            switch (op) {
            case '+': z = x + y; break;
            case '-': z = x - y; break;
            case '*': z = x * y; break;
            case '/': z = x / y; break;
            case '^': z = pow(x, y); break;
            default: opara__put_i64(rt, data, i, x == y); continue;
            }
            opara__put_f64(rt, data, i, z);
        } else {
            int64_t xa = opara__get_i64(a->dtype, a->data, ia), xb = opara__get_i64(b->dtype, b->data, ib);
            int64_t ka = a->coef ? a->coef[ia] : 0, kb = b->coef ? b->coef[ib] : 0, x, k;
            if (op == '=') {
                if (ka != kb) return OPARA__NOFOLD;
                opara__put_i64(rt, data, i, xa == xb);
                continue;
            }
            if (!opara__affine(op, xa, ka, xb, kb, &x, &k)) return OPARA__NOFOLD;
            opara__put_i64(rt, data, i, x);
            if (coef) coef[i] = k;
            else if (k) return OPARA__NOFOLD;
        }
    }
    return OPARA_OK;
}

static int opara__eval_where(opara__imp* im, const opara__cv* c, const opara__cv* x, const opara__cv* y,
                             opara__cv* out) {
    const opara__cv* in[3];
    opara__shape shape;
    int64_t st[3][OPARA_MAX_DIMS];
    uint8_t* data;
    int64_t* coef;
    uint64_t i;
    size_t es = opara_dtype_size(x->dtype);
    int r;
    in[0] = c, in[1] = x, in[2] = y;
    if (x->dtype != y->dtype || !opara__dtype_is_int(c->dtype) || !es || !opara__cv_broadcast(in, 3, &shape, st))
        return OPARA__NOFOLD;
    r = opara__cv_alloc(im, out, x->dtype, &shape, x->coef || y->coef, &data, &coef);
    if (r != OPARA_OK) return r;
    for (i = 0; i < out->count; ++i) {
        int pick = opara__get_i64(c->dtype, c->data, opara__bcast_src(&shape, st[0], i)) != 0;
        const opara__cv* src = pick ? x : y;
        uint64_t s = opara__bcast_src(&shape, st[pick ? 1 : 2], i);
        memcpy(data + i * es, src->data + s * es, es);
        if (coef) coef[i] = src->coef ? src->coef[s] : 0;
    }
    return OPARA_OK;
}

/* dst[n] = src[base + sum(idx_d * strides_d)] over the box dims, in row-major order. */
static void opara__strided_copy(uint8_t* dst, const uint8_t* src, size_t es, int32_t rank, const int64_t* dims,
                                const int64_t* strides, int64_t base) {
    int64_t idx[OPARA_MAX_DIMS], off = base;
    uint64_t n, total = 1;
    int32_t d;
    for (d = 0; d < rank; ++d) total *= (uint64_t)dims[d], idx[d] = 0;
    for (n = 0; n < total; ++n) {
        memcpy(dst + n * es, src + (size_t)off * es, es);
        for (d = rank - 1; d >= 0; --d) {
            off += strides[d];
            if (++idx[d] < dims[d]) break;
            off -= strides[d] * dims[d];
            idx[d] = 0;
        }
    }
}

static void opara__row_strides(const opara__shape* s, int64_t* strides) {
    int64_t st = 1;
    int32_t d;
    for (d = s->ndim - 1; d >= 0; --d) strides[d] = st, st *= s->dims[d];
}

/* Runs a strided copy of the data and, when present, of the batch coefficients. */
static int opara__eval_strided(opara__imp* im, const opara__cv* x, const opara__shape* out_shape,
                               const int64_t* strides, int64_t base, opara__cv* out) {
    uint8_t* data;
    int64_t* coef;
    size_t es = opara_dtype_size(x->dtype);
    int r = opara__cv_alloc(im, out, x->dtype, out_shape, x->coef != NULL, &data, &coef);
    if (r != OPARA_OK) return r;
    if (!out->count) return OPARA_OK;
    opara__strided_copy(data, x->data, es, out_shape->ndim, out_shape->dims, strides, base);
    if (coef) opara__strided_copy((uint8_t*)coef, (const uint8_t*)x->coef, 8, out_shape->ndim, out_shape->dims, strides, base);
    return OPARA_OK;
}

static int opara__eval_transpose(opara__imp* im, const opara__onnx_node* n, const opara__cv* x, opara__cv* out) {
    int64_t in_strides[OPARA_MAX_DIMS], strides[OPARA_MAX_DIMS];
    opara__shape shape;
    uint32_t count;
    const int64_t* perm = opara__oattr_ints(n, "perm", &count);
    int32_t d;
    if (perm && count != (uint32_t)x->shape.ndim) return OPARA__NOFOLD;
    opara__row_strides(&x->shape, in_strides);
    shape.ndim = x->shape.ndim;
    for (d = 0; d < shape.ndim; ++d) {
        int64_t p = perm ? perm[d] : shape.ndim - 1 - d;
        if (p < 0 || p >= shape.ndim) return OPARA__NOFOLD;
        shape.dims[d] = x->shape.dims[p];
        strides[d] = in_strides[p];
    }
    return opara__eval_strided(im, x, &shape, strides, 0, out);
}

/* The shape engine's output shape of IR operator op with attributes attrs on one constant input of
   shape in, and its resolved record when params is not NULL (tolerant mode: nothing is reported).
   0 when the engine cannot say or a dim is not a known size: the node then does not fold. */
static int opara__fold_shape(opara__imp* im, opara__op op, opara__attr* attrs, uint32_t n_attrs, const opara__shape* in,
                             opara__shape* out, opara__node_params* params) {
    int32_t io[2] = {0, 1}, d;
    const opara__shape* ins[1];
    opara__shape* outs[1];
    opara__node node;
    opara__graph g;
    memset(&node, 0, sizeof node);
    memset(&g, 0, sizeof g);
    node.op = op, node.name = im->node_name, node.n_inputs = 1, node.n_outputs = 1;
    node.inputs = &io[0], node.outputs = &io[1], node.attrs = attrs, node.n_attrs = n_attrs;
    g.rt = im->rt, g.nodes = &node, g.n_nodes = 1;
    ins[0] = in, outs[0] = out;
    if (opara__infer_node_shapes(im->rt, &g, 0, OPARA__SHAPE_TOLERANT, OPARA__DIM_BATCH, ins, outs, params) != OPARA_OK ||
        out->ndim < 0)
        return 0;
    for (d = 0; d < out->ndim; ++d)
        if (out->dims[d] < 0) return 0;
    return 1;
}

/* Attributes of the node handed to the shape engine; the values stay the caller's. */
static void opara__ints_attr(opara__attr* a, const char* name, const opara__param* p) {
    memset(a, 0, sizeof *a);
    a->name = name, a->type = OPARA__ATTR_INTS, a->count = p->n, a->v.ints = p->ints;
}

static void opara__int_attr(opara__attr* a, const char* name, int64_t v) {
    memset(a, 0, sizeof *a);
    a->name = name, a->type = OPARA__ATTR_INT, a->v.i = v;
}

/* A slice of x as the shape engine resolved it (first element, step and count per axis). */
static int opara__eval_slice(opara__imp* im, const opara__cv* x, const opara__node_params* p, const opara__shape* shape,
                             opara__cv* out) {
    int64_t in_strides[OPARA_MAX_DIMS], strides[OPARA_MAX_DIMS], base = 0;
    int32_t d;
    opara__row_strides(&x->shape, in_strides);
    for (d = 0; d < shape->ndim; ++d) {
        strides[d] = p->u.slice.step[d] * in_strides[d];
        if (shape->dims[d]) base += p->u.slice.start[d] * in_strides[d];
    }
    return opara__eval_strided(im, x, shape, strides, base, out);
}

static int opara__eval_gather(opara__imp* im, const opara__cv* x, const opara__cv* idx, int64_t axis, opara__cv* out) {
    opara__shape shape;
    uint8_t* data;
    int64_t* coef;
    uint64_t outer = 1, inner = 1, o, j;
    int64_t dim;
    int32_t d;
    size_t es = opara_dtype_size(x->dtype);
    int r;
    axis = opara__onnx_axis(axis, x->shape.ndim);
    if (axis < 0 || axis >= x->shape.ndim || !opara__dtype_is_int(idx->dtype) || idx->coef ||
        x->shape.ndim + idx->shape.ndim - 1 > OPARA_MAX_DIMS)
        return OPARA__NOFOLD;
    dim = x->shape.dims[axis];
    shape.ndim = 0;
    for (d = 0; d < axis; ++d) shape.dims[shape.ndim++] = x->shape.dims[d], outer *= (uint64_t)x->shape.dims[d];
    for (d = 0; d < idx->shape.ndim; ++d) shape.dims[shape.ndim++] = idx->shape.dims[d];
    for (d = (int32_t)axis + 1; d < x->shape.ndim; ++d) shape.dims[shape.ndim++] = x->shape.dims[d], inner *= (uint64_t)x->shape.dims[d];
    r = opara__cv_alloc(im, out, x->dtype, &shape, x->coef != NULL, &data, &coef);
    if (r != OPARA_OK) return r;
    for (o = 0; o < outer; ++o)
        for (j = 0; j < idx->count; ++j) {
            int64_t k = opara__get_i64(idx->dtype, idx->data, j);
            uint64_t src, dst = (o * idx->count + j) * inner;
            if (k < 0) k += dim;
            if (k < 0 || k >= dim)
                return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Gather): index %lld out of range [0, %lld)",
                                   im->node_name, (long long)opara__get_i64(idx->dtype, idx->data, j), (long long)dim);
            src = (o * (uint64_t)dim + (uint64_t)k) * inner;
            memcpy(data + dst * es, x->data + src * es, (size_t)(inner * es));
            if (coef) memcpy(coef + dst, x->coef + src, (size_t)(inner * 8));
        }
    return OPARA_OK;
}

static int opara__eval_concat(opara__imp* im, const opara__cv* in, uint32_t n, int64_t axis, opara__cv* out) {
    opara__shape shape = in[0].shape;
    uint8_t* data;
    int64_t* coef;
    uint64_t outer = 1, o, pos = 0;
    uint32_t k;
    int32_t d;
    int any_coef = 0, r;
    size_t es = opara_dtype_size(in[0].dtype);
    axis = opara__onnx_axis(axis, shape.ndim);
    if (axis < 0 || axis >= shape.ndim) return OPARA__NOFOLD;
    shape.dims[axis] = 0;
    for (k = 0; k < n; ++k) {
        if (in[k].dtype != in[0].dtype || in[k].shape.ndim != shape.ndim) return OPARA__NOFOLD;
        for (d = 0; d < shape.ndim; ++d)
            if (d != axis && in[k].shape.dims[d] != shape.dims[d]) return OPARA__NOFOLD;
        shape.dims[axis] += in[k].shape.dims[axis];
        any_coef |= in[k].coef != NULL;
    }
    for (d = 0; d < axis; ++d) outer *= (uint64_t)shape.dims[d];
    r = opara__cv_alloc(im, out, in[0].dtype, &shape, any_coef, &data, &coef);
    if (r != OPARA_OK) return r;
    for (o = 0; o < outer; ++o)
        for (k = 0; k < n; ++k) {
            uint64_t block = outer ? in[k].count / outer : 0;
            memcpy(data + pos * es, in[k].data + o * block * es, (size_t)(block * es));
            if (coef && in[k].coef) memcpy(coef + pos, in[k].coef + o * block, (size_t)(block * 8));
            pos += block;
        }
    return OPARA_OK;
}

static int opara__eval_cast(opara__imp* im, const opara__cv* x, int64_t to, opara__cv* out) {
    opara_dtype t = opara__onnx_dtype((int32_t)to);
    uint8_t* data;
    int64_t* coef;
    uint64_t i;
    int r;
    if (!opara__dtype_numeric(t) || !opara__dtype_numeric(x->dtype)) return OPARA__NOFOLD;
    if (x->coef && t != OPARA_DTYPE_I64) return OPARA__NOFOLD;
    r = opara__cv_alloc(im, out, t, &x->shape, x->coef != NULL, &data, &coef);
    if (r != OPARA_OK) return r;
    for (i = 0; i < x->count; ++i) {
        if (opara__dtype_is_float(t)) opara__put_f64(t, data, i, opara__get_f64(x->dtype, x->data, i));
        else if (t == OPARA_DTYPE_BOOL) opara__put_i64(t, data, i, opara__get_f64(x->dtype, x->data, i) != 0);
        else opara__put_i64(t, data, i, opara__get_i64(x->dtype, x->data, i));
    }
    if (coef) memcpy(coef, x->coef, (size_t)x->count * 8);
    return OPARA_OK;
}

/* Same data, new shape (Reshape, Flatten, Squeeze, Unsqueeze). */
static int opara__eval_view(const opara__cv* x, const opara__shape* shape, opara__cv* out) {
    if (opara__shape_count(shape) != x->count) return OPARA__NOFOLD;
    *out = *x;
    out->shape = *shape;
    return OPARA_OK;
}

static int opara__eval_constant_of_shape(opara__imp* im, const opara__cv* shp, opara__cv* out) {
    const opara__onnx_attr* a = opara__oattr(im->node, "value");
    opara__tensor_data value;
    opara__shape shape;
    uint8_t* data;
    int64_t* coef;
    uint64_t i;
    uint32_t n;
    int r;
    size_t es;
    if (!opara__cv_ints(shp, shape.dims, OPARA_MAX_DIMS, &n)) return OPARA__NOFOLD;
    shape.ndim = (int32_t)n;
    for (i = 0; i < n; ++i)
        if (shape.dims[i] < 0) return OPARA__NOFOLD;
    memset(&value, 0, sizeof value);
    if (a && a->t) {
        r = opara__onnx_tensor_load(im->rt, a->t, NULL, im->node_name, &value);
        if (r != OPARA_OK) return r;
        if (value.count != 1) {
            opara__tensor_data_free(im->rt, &value);
            return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (ConstantOfShape): value must have one element",
                               im->node_name);
        }
    }
    r = opara__cv_alloc(im, out, a && a->t ? value.dtype : OPARA_DTYPE_F32, &shape, 0, &data, &coef);
    es = opara_dtype_size(out->dtype);
    for (i = 0; r == OPARA_OK && i < out->count; ++i) {
        if (value.data) memcpy(data + i * es, value.data, es);
        else memset(data + i * es, 0, es);
    }
    opara__tensor_data_free(im->rt, &value);
    return r;
}

static int opara__eval_range(opara__imp* im, const opara__cv* start, const opara__cv* limit, const opara__cv* delta,
                             opara__cv* out) {
    opara__shape shape;
    uint8_t* data;
    int64_t* coef;
    double s, l, d, n;
    uint64_t i;
    int r;
    if (start->count != 1 || limit->count != 1 || delta->count != 1 || start->coef || limit->coef || delta->coef ||
        !opara__dtype_numeric(start->dtype))
        return OPARA__NOFOLD;
    s = opara__get_f64(start->dtype, start->data, 0);
    l = opara__get_f64(limit->dtype, limit->data, 0);
    d = opara__get_f64(delta->dtype, delta->data, 0);
    if (d == 0) return OPARA__NOFOLD;
    n = ceil((l - s) / d);
    if (!(n < 1e9)) return OPARA__NOFOLD;
    shape.ndim = 1;
    shape.dims[0] = n > 0 ? (int64_t)n : 0;
    r = opara__cv_alloc(im, out, start->dtype, &shape, 0, &data, &coef);
    for (i = 0; r == OPARA_OK && i < out->count; ++i) {
        if (opara__dtype_is_float(start->dtype)) opara__put_f64(start->dtype, data, i, s + (double)i * d);
        else
            opara__put_i64(start->dtype, data, i,
                           opara__wrap_add(opara__get_i64(start->dtype, start->data, 0),
                                           opara__wrap_mul((int64_t)i, opara__get_i64(delta->dtype, delta->data, 0))));
    }
    return r;
}

static int opara__eval_sqrt(opara__imp* im, const opara__cv* x, opara__cv* out) {
    uint8_t* data;
    int64_t* coef;
    uint64_t i;
    int r;
    if (!opara__dtype_is_float(x->dtype)) return OPARA__NOFOLD;
    r = opara__cv_alloc(im, out, x->dtype, &x->shape, 0, &data, &coef);
    for (i = 0; r == OPARA_OK && i < x->count; ++i) opara__put_f64(x->dtype, data, i, sqrt(opara__get_f64(x->dtype, x->data, i)));
    return r;
}

/* The signal windows (opset 17) of length `size`: sum_k a[k] cos(2 pi k i / N) with N = size
   (periodic) or size - 1 (symmetric), computed in double like ONNX's reference, then stored in the
   output_datatype. a is {a0, a1, a2} with the signs folded in. */
static int opara__eval_window(opara__imp* im, const opara__cv* size, const double* a, opara__cv* out) {
    const opara__onnx_node* n = im->node;
    opara_dtype t = opara__onnx_dtype((int32_t)opara__oattr_int(n, "output_datatype", 1));
    opara__shape shape;
    uint8_t* data;
    int64_t* coef;
    int64_t len, i;
    double period;
    int r;
    if (size->count != 1 || size->coef || !opara__dtype_is_int(size->dtype) || !opara__dtype_is_float(t)) return OPARA__NOFOLD;
    len = opara__get_i64(size->dtype, size->data, 0);
    if (len < 0 || len > ((int64_t)1 << 30)) return OPARA__NOFOLD;
    period = (double)(opara__oattr_int(n, "periodic", 1) ? len : len - 1);
    shape.ndim = 1;
    shape.dims[0] = len;
    r = opara__cv_alloc(im, out, t, &shape, 0, &data, &coef);
    for (i = 0; r == OPARA_OK && i < len; ++i) {
        double x = 2.0 * 3.14159265358979323846 * (double)i / period;
        opara__put_f64(t, data, (uint64_t)i, a[0] + a[1] * cos(x) + a[2] * cos(2.0 * x));
    }
    return r;
}

static int opara__fold_window(opara__imp* im, const opara__cv* size, opara__cv* out) {
    static const double hann[3] = {0.5, -0.5, 0}, hamming[3] = {25.0 / 46.0, -(1.0 - 25.0 / 46.0), 0},
                        blackman[3] = {0.42, -0.5, 0.08};
    const opara__onnx_node* n = im->node;
    if (opara__op_is(n, "HannWindow")) return opara__eval_window(im, size, hann, out);
    if (opara__op_is(n, "HammingWindow")) return opara__eval_window(im, size, hamming, out);
    if (opara__op_is(n, "BlackmanWindow")) return opara__eval_window(im, size, blackman, out);
    return OPARA__NOFOLD;
}

/* A scalar of any numeric type as double; 0 when it is not a plain scalar. */
static int opara__cv_scalar(const opara__cv* x, double* v) {
    if (x->count != 1 || x->coef || !opara__dtype_numeric(x->dtype)) return 0;
    *v = opara__get_f64(x->dtype, x->data, 0);
    return 1;
}

/* MelWeightMatrix (opset 17): [dft_length / 2 + 1, num_mel_bins] triangular filters between mel-spaced
   band edges, each edge rounded down to a DFT bin as ONNX's reference computes it. */
static int opara__eval_mel_weights(opara__imp* im, const opara__cv* cv, opara__cv* out) {
    opara_dtype t = opara__onnx_dtype((int32_t)opara__oattr_int(im->node, "output_datatype", 1));
    double bins, dft, rate, lo, hi, lo_mel, step;
    int64_t n_mel, n_spec, i, j, *edge;
    opara__shape shape;
    uint8_t* data;
    int64_t* coef;
    int r;
    if (!opara__cv_scalar(&cv[0], &bins) || !opara__cv_scalar(&cv[1], &dft) || !opara__cv_scalar(&cv[2], &rate) ||
        !opara__cv_scalar(&cv[3], &lo) || !opara__cv_scalar(&cv[4], &hi) || !opara__dtype_is_float(t) || rate <= 0 ||
        !(bins >= 1 && bins <= 65536 && dft >= 1 && dft <= 1 << 24))
        return OPARA__NOFOLD;
    n_mel = (int64_t)bins;
    n_spec = (int64_t)dft / 2 + 1;
    shape.ndim = 2;
    shape.dims[0] = n_spec;
    shape.dims[1] = n_mel;
    r = opara__cv_alloc(im, out, t, &shape, 0, &data, &coef);
    edge = r == OPARA_OK ? (int64_t*)opara__calloc(im->rt, (size_t)n_mel + 2, sizeof(int64_t)) : NULL;
    if (r != OPARA_OK) return r;
    if (!edge) return opara__imp_oom(im);
    memset(data, 0, (size_t)out->count * opara_dtype_size(t)); /* the filters write only their triangles */
    lo_mel = 2595.0 * log10(1.0 + lo / 700.0);
    step = (2595.0 * log10(1.0 + hi / 700.0) - lo_mel) / (double)(n_mel + 2);
    for (i = 0; i < n_mel + 2; ++i) {
        double hz = 700.0 * (pow(10.0, ((double)i * step + lo_mel) / 2595.0) - 1.0);
        edge[i] = (int64_t)floor(((double)(int64_t)dft + 1.0) * hz / rate);
    }
    for (i = 0; i < n_mel && r == OPARA_OK; ++i) {
        int64_t left = edge[i], center = edge[i + 1], right = edge[i + 2];
        if (left < 0 || right >= n_spec || center < left || right < center) r = OPARA__NOFOLD;
        else if (center == left) opara__put_f64(t, data, (uint64_t)(center * n_mel + i), 1.0);
        else
            for (j = left; j <= center; ++j)
                opara__put_f64(t, data, (uint64_t)(j * n_mel + i), (double)(j - left) / (double)(center - left));
        for (j = center; r == OPARA_OK && j < right; ++j)
            opara__put_f64(t, data, (uint64_t)(j * n_mel + i), (double)(right - j) / (double)(right - center));
    }
    opara__free(im->rt, edge);
    return r;
}

/* Shape of an input whose dims are all known or the batch. */
static int opara__eval_shape(opara__imp* im, int32_t v, opara__cv* out) {
    const opara__shape* s = opara__imp_shape(im, v);
    opara__shape shape;
    uint8_t* data;
    int64_t* coef;
    int64_t start = opara__oattr_int(im->node, "start", 0), end = opara__oattr_int(im->node, "end", INT64_MAX), i;
    int r;
    if (s->ndim < 0) return OPARA__NOFOLD;
    start = start < 0 ? OPARA__MAX(0, start + s->ndim) : OPARA__MIN(start, s->ndim);
    end = end < 0 ? OPARA__MAX(0, end + s->ndim) : OPARA__MIN(end, s->ndim);
    for (i = start; i < end; ++i)
        if (s->dims[i] < 0 && s->dims[i] != OPARA__DIM_BATCH) return OPARA__NOFOLD;
    shape.ndim = 1;
    shape.dims[0] = end > start ? end - start : 0;
    r = opara__cv_alloc(im, out, OPARA_DTYPE_I64, &shape, 1, &data, &coef);
    for (i = start; r == OPARA_OK && i < end; ++i) {
        int batch = s->dims[i] == OPARA__DIM_BATCH;
        opara__put_i64(OPARA_DTYPE_I64, data, (uint64_t)(i - start), batch ? 0 : s->dims[i]);
        coef[i - start] = batch;
    }
    return r;
}

/* Size of an input whose dims are all known. With the symbolic batch it stays a node: a folded
   value's batch coefficient serves shape parameters only, not data a kernel or the caller reads. */
static int opara__eval_size(opara__imp* im, int32_t v, opara__cv* out) {
    const opara__shape* s = opara__imp_shape(im, v);
    opara__shape scalar;
    uint8_t* data;
    int64_t* coef;
    int64_t known = 1;
    int32_t i;
    int r;
    if (s->ndim < 0) return OPARA__NOFOLD;
    for (i = 0; i < s->ndim; ++i)
        if (s->dims[i] < 0 || !opara__mul_i64(known, s->dims[i], &known)) return OPARA__NOFOLD;
    scalar.ndim = 0;
    r = opara__cv_alloc(im, out, OPARA_DTYPE_I64, &scalar, 0, &data, &coef);
    if (r == OPARA_OK) opara__put_i64(OPARA_DTYPE_I64, data, 0, known);
    return r;
}

/* ---- operator parameters: attribute or constant input ------------------------------------------ */

static const char* opara__input_name(opara__imp* im, uint32_t i) {
    return i < im->node->n_inputs ? im->node->inputs[i] : "";
}

static opara_result opara__not_const(opara__imp* im, uint32_t i, const char* what) {
    return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP,
                       "node '%s' (%s): input %u '%s' (%s) must be a constant (it is computed at run time)",
                       im->node_name, im->node->op_type, i, opara__input_name(im, i), what);
}

/* Reads integer parameter `what` from attribute attr (when the node has it) or from constant
   input i. allow_batch: batch terms become OPARA__DIM_BATCH (exactly one batch) or -1. */
OPARA__PRIVATE opara_result opara__ints_param(opara__imp* im, const int32_t* in, uint32_t n_in, uint32_t i, const char* attr,
                                              int allow_batch, opara__param* p) {
    const opara__onnx_attr* a = attr ? opara__oattr(im->node, attr) : NULL;
    opara__cv cv;
    uint64_t k;
    int minus_one = 0;
    memset(p, 0, sizeof *p);
    if (a) {
        if (a->n_ints > OPARA__PARAM_CAP) goto too_many;
        p->present = 1;
        p->n = a->n_ints;
        if (a->n_ints) memcpy(p->ints, a->ints, a->n_ints * sizeof(int64_t));
        else if (a->has_i) p->n = 1, p->ints[0] = a->i;
        return OPARA_OK;
    }
    if (i >= n_in || in[i] < 0) return OPARA_OK;
    if (!opara__is_const(im, in[i])) return opara__not_const(im, i, attr ? attr : "parameter");
    opara__cv_of(im, in[i], &cv);
    if (cv.count > OPARA__PARAM_CAP) goto too_many;
    if (!opara__dtype_is_int(cv.dtype) || cv.shape.ndim > 1)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (%s): input %u must be a 1-D integer tensor",
                           im->node_name, im->node->op_type, i);
    p->present = 1;
    p->n = (uint32_t)cv.count;
    for (k = 0; k < cv.count; ++k) {
        int64_t x = opara__get_i64(cv.dtype, cv.data, k), c = cv.coef ? cv.coef[k] : 0;
        if (c && !allow_batch) return opara__not_const(im, i, "depends on the batch size");
        if (c == 1 && x == 0) x = OPARA__DIM_BATCH;
        else if (c) x = -1, minus_one++;
        else if (x == -1) minus_one++;
        p->ints[k] = x;
    }
    if (minus_one > 1)
        return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP,
                           "node '%s' (%s): the target shape has %d unknown dims (only one -1 is allowed)",
                           im->node_name, im->node->op_type, minus_one);
    return OPARA_OK;
too_many:
    return opara__fail(im->rt, OPARA_ERR_LIMIT_EXCEEDED, "node '%s' (%s): more than %d values in '%s'", im->node_name,
                       im->node->op_type, OPARA__PARAM_CAP, attr ? attr : "parameter");
}

OPARA__PRIVATE opara_result opara__floats_param(opara__imp* im, const int32_t* in, uint32_t n_in, uint32_t i,
                                                opara__param* p) {
    opara__cv cv;
    uint64_t k;
    memset(p, 0, sizeof *p);
    if (i >= n_in || in[i] < 0) return OPARA_OK;
    if (!opara__is_const(im, in[i])) return opara__not_const(im, i, "float parameter");
    opara__cv_of(im, in[i], &cv);
    if (cv.count > OPARA__PARAM_CAP || !opara__dtype_numeric(cv.dtype))
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (%s): input %u must be a small numeric tensor",
                           im->node_name, im->node->op_type, i);
    p->present = 1;
    p->n = (uint32_t)cv.count;
    for (k = 0; k < cv.count; ++k) p->floats[k] = (float)opara__get_f64(cv.dtype, cv.data, k);
    return OPARA_OK;
}

OPARA__PRIVATE int opara__op_is(const opara__onnx_node* n, const char* op) { return strcmp(n->op_type, op) == 0; }

static int opara__fold_slice(opara__imp* im, const int32_t* in, uint32_t n_in, const opara__cv* x, opara__cv* out) {
    static const char* const names[4] = {"starts", "ends", "axes", "steps"};
    opara__param p[4];
    opara__attr attrs[4];
    opara__node_params params;
    opara__shape shape;
    uint32_t i, n_attrs = 0;
    for (i = 0; i < 4; ++i) {
        int r = im->opset < 10 ? opara__ints_param(im, in, 0, 0, i < 3 ? names[i] : NULL, 0, &p[i])
                               : opara__ints_param(im, in, n_in, i + 1, NULL, 0, &p[i]);
        if (r != OPARA_OK) return r;
        if (p[i].present) opara__ints_attr(&attrs[n_attrs++], names[i], &p[i]);
    }
    if (!opara__fold_shape(im, OPARA__OP_SLICE, attrs, n_attrs, &x->shape, &shape, &params)) return OPARA__NOFOLD;
    return opara__eval_slice(im, x, &params, &shape, out);
}

/* Reshape, Flatten, Squeeze, Unsqueeze: the same data under the shape the engine gives. */
static int opara__fold_view(opara__imp* im, const int32_t* in, uint32_t n_in, const opara__cv* x, opara__cv* out) {
    const opara__onnx_node* n = im->node;
    opara__attr attrs[2];
    opara__shape shape;
    opara__param p;
    opara__op op = opara__op_from_name(n->op_type);
    uint32_t n_attrs = 0;
    int r = OPARA_OK;
    if (op == OPARA__OP_RESHAPE) {
        r = opara__ints_param(im, in, n_in, 1, NULL, 0, &p);
        if (r != OPARA_OK || !p.present) return r != OPARA_OK ? r : OPARA__NOFOLD;
        opara__ints_attr(&attrs[n_attrs++], "shape", &p);
        opara__int_attr(&attrs[n_attrs++], "allowzero", opara__oattr_int(n, "allowzero", 0));
    } else if (op == OPARA__OP_FLATTEN) {
        opara__int_attr(&attrs[n_attrs++], "axis", opara__oattr_int(n, "axis", 1));
    } else if (op == OPARA__OP_SQUEEZE || op == OPARA__OP_UNSQUEEZE) {
        r = opara__ints_param(im, in, n_in, 1, "axes", 0, &p);
        if (r != OPARA_OK) return r;
        if (p.present) opara__ints_attr(&attrs[n_attrs++], "axes", &p);
    } else {
        return OPARA__NOFOLD;
    }
    if (!opara__fold_shape(im, op, attrs, n_attrs, &x->shape, &shape, NULL)) return OPARA__NOFOLD;
    return opara__eval_view(x, &shape, out);
}

/* The IR operators folded by their CPU kernel: the comparisons (but Equal, folded above with batch terms),
   the logical operators, Mod, BitShift, Max, Min, Mean, Sum, and the attribute-free math operators shape
   arithmetic uses (Neg, Abs, Sign, Floor, Ceil, Round, Reciprocal, Exp, Log). */
static int opara__folds_by_kernel(opara__op op) {
    return (OPARA__OP_GIVES_BOOL(op) && op != OPARA__OP_EQUAL) || op == OPARA__OP_MOD || op == OPARA__OP_BIT_SHIFT ||
           op == OPARA__OP_MAX || op == OPARA__OP_MIN || op == OPARA__OP_MEAN || op == OPARA__OP_SUM ||
           op == OPARA__OP_NEG || op == OPARA__OP_ABS || op == OPARA__OP_SIGN || op == OPARA__OP_FLOOR ||
           op == OPARA__OP_CEIL || op == OPARA__OP_ROUND || op == OPARA__OP_RECIPROCAL || op == OPARA__OP_EXP ||
           op == OPARA__OP_LOG;
}

/* The record the shape engine would give node `kind` with the ONNX node's attributes (the broadcast strides of
   the first inputs, Mod's fmod, BitShift's direction, IsInf's detections). */
static void opara__fold_record(opara__imp* im, opara__op kind, const opara__cv* in, uint32_t n, const opara__shape* y,
                               opara__node_params* params) {
    const opara__onnx_attr* dir = opara__oattr(im->node, "direction");
    uint32_t k;
    memset(params, 0, sizeof *params);
    params->resolved = 1;
    for (k = 0; k < n && k < 3; ++k) (void)opara__broadcast_to(y, &in[k].shape, params->u.broadcast.strides[k]);
    if (kind == OPARA__OP_MOD) params->u.broadcast.fmod = opara__oattr_int(im->node, "fmod", 0) != 0;
    if (kind == OPARA__OP_BIT_SHIFT)
        params->u.broadcast.shift_left = dir && dir->s.size == 4 && memcmp(dir->s.data, "LEFT", 4) == 0;
    if (kind == OPARA__OP_IS_INF) {
        params->u.is_inf.detect_negative = opara__oattr_int(im->node, "detect_negative", 1) != 0;
        params->u.is_inf.detect_positive = opara__oattr_int(im->node, "detect_positive", 1) != 0;
    }
}

/* Node `kind` over n constants evaluated by its CPU kernel, so that the folded constant holds the bits a
   session computes. Inputs with batch terms, and what the kernel refuses, do not fold. */
static int opara__fold_by_kernel(opara__imp* im, opara__op kind, const opara__cv* in, uint32_t n, opara__cv* out) {
    const opara__shape** shapes = (const opara__shape**)opara__calloc(im->rt, n, sizeof *shapes);
    opara__cpu_tensor* t = (opara__cpu_tensor*)opara__calloc(im->rt, (size_t)n + 1, sizeof *t);
    opara__node node;
    opara__node_params params;
    opara__cpu_op op;
    opara__shape shape;
    char err[OPARA__DETAIL_MAX];
    float scratch[1];
    uint8_t* data;
    int64_t* coef;
    uint32_t k;
    int r = shapes && t ? OPARA_OK : opara__imp_oom(im);
    for (k = 0; r == OPARA_OK && k < n; ++k) {
        shapes[k] = &in[k].shape;
        if (in[k].coef || !opara__dtype_numeric(in[k].dtype)) r = OPARA__NOFOLD;
    }
    if (r == OPARA_OK && !opara__broadcast_shapes(shapes, n, OPARA__SHAPE_STRICT, &shape, NULL)) r = OPARA__NOFOLD;
    if (r == OPARA_OK)
        r = opara__cv_alloc(im, out, OPARA__OP_GIVES_BOOL(kind) ? OPARA_DTYPE_BOOL : in[0].dtype, &shape, 0, &data, &coef);
    for (k = 0; r == OPARA_OK && k < n; ++k) { /* aligned copies: constants may sit anywhere in the file's bytes */
        size_t bytes = (size_t)in[k].count * opara_dtype_size(in[k].dtype);
        t[k].dtype = in[k].dtype, t[k].ndim = in[k].shape.ndim, t[k].is_const = 1;
        memcpy(t[k].dims, in[k].shape.dims, sizeof t[k].dims);
        t[k].data = opara__calloc(im->rt, bytes ? bytes : 1, 1);
        if (!t[k].data) r = opara__imp_oom(im);
        else if (bytes) memcpy(t[k].data, in[k].data, bytes);
    }
    if (r == OPARA_OK) {
        memset(&node, 0, sizeof node);
        memset(&op, 0, sizeof op);
        node.op = kind, node.n_inputs = n, node.n_outputs = 1;
        opara__fold_record(im, kind, in, n, &shape, &params);
        t[n].dtype = out->dtype, t[n].ndim = shape.ndim, t[n].data = data;
        memcpy(t[n].dims, shape.dims, sizeof t[n].dims);
        op.node = &node, op.params = &params, op.n_in = n, op.n_out = 1, op.in = t, op.out = t + n, op.workers = 1;
        if (opara__cpu_prepare(&op, err, sizeof err) != OPARA_OK ||
            (op.work_items && op.fn(&op, 0, op.work_items, scratch) != OPARA_OK))
            r = OPARA__NOFOLD;
    }
    for (k = 0; t && k < n; ++k) opara__free(im->rt, t[k].data);
    opara__free(im->rt, t);
    opara__free(im->rt, (void*)shapes);
    return r;
}

/* Split of a constant: one constant per output, the parts along the axis ('split' sizes, or chunks of
   ceil(dim / outputs) with the last one smaller, as Split-18's num_outputs). OPARA_OK when every output
   was made, OPARA__NOFOLD, or an error. */
OPARA__PRIVATE int opara__try_fold_split(opara__imp* im, const int32_t* in, uint32_t n_in) {
    const opara__onnx_node* n = im->node;
    int64_t in_strides[OPARA_MAX_DIMS], axis, dim, chunk, at = 0;
    uint32_t k, n_out = n->n_outputs;
    opara__param p;
    opara__cv x;
    int r;
    if (n_in == 0 || !opara__is_const(im, in[0]) || n_out == 0) return OPARA__NOFOLD;
    opara__cv_of(im, in[0], &x);
    axis = opara__onnx_axis(opara__oattr_int(n, "axis", 0), x.shape.ndim);
    if (x.shape.ndim == 0 || axis < 0 || axis >= x.shape.ndim) return OPARA__NOFOLD;
    r = opara__ints_param(im, in, n_in, 1, "split", 0, &p);
    if (r != OPARA_OK) return r;
    dim = x.shape.dims[axis];
    chunk = (dim + (int64_t)n_out - 1) / (int64_t)n_out;
    if (p.present && p.n != n_out) return OPARA__NOFOLD;
    for (k = 0; k < n_out; ++k) {
        int64_t size = p.present ? p.ints[k] : k + 1 < n_out ? chunk : dim - chunk * (int64_t)k;
        if (size < 0 || size > dim - at) return OPARA__NOFOLD; /* the shape engine names what is wrong */
        at += size;
    }
    if (at != dim) return OPARA__NOFOLD;
    opara__row_strides(&x.shape, in_strides);
    for (k = 0, at = 0; k < n_out; ++k) {
        opara__shape shape = x.shape;
        opara__cv part;
        shape.dims[axis] = p.present ? p.ints[k] : k + 1 < n_out ? chunk : dim - chunk * (int64_t)k;
        r = opara__eval_strided(im, &x, &shape, in_strides, at * in_strides[axis], &part);
        if (r == OPARA_OK && n->outputs[k][0])
            r = opara__imp_const(im, n->outputs[k], part.dtype, &part.shape, part.data, part.coef, 0);
        if (r != OPARA_OK) return r;
        at += shape.dims[axis];
    }
    return OPARA_OK;
}

/* Evaluates the node when its inputs allow it. OPARA_OK with *out filled, OPARA__NOFOLD, or an error. */
OPARA__PRIVATE int opara__try_fold(opara__imp* im, const int32_t* in, uint32_t n_in, opara__cv* out) {
    const opara__onnx_node* n = im->node;
    opara__cv cv[4];
    uint32_t i;
    int r;
    if (opara__op_is(n, "Shape")) return n_in >= 1 && in[0] >= 0 ? opara__eval_shape(im, in[0], out) : OPARA__NOFOLD;
    if (opara__op_is(n, "Size")) return n_in >= 1 && in[0] >= 0 ? opara__eval_size(im, in[0], out) : OPARA__NOFOLD;
    if (n_in == 0 || in[0] < 0) return OPARA__NOFOLD;
    for (i = 0; i < n_in; ++i)
        if (in[i] >= 0 && !opara__is_const(im, in[i])) return OPARA__NOFOLD;
    if (opara__op_is(n, "Concat")) {
        opara__cv* all = (opara__cv*)opara__calloc(im->rt, n_in, sizeof(opara__cv));
        if (!all) return opara__imp_oom(im);
        for (i = 0; i < n_in; ++i) {
            if (in[i] < 0) break;
            opara__cv_of(im, in[i], &all[i]);
        }
        r = i == n_in ? opara__eval_concat(im, all, n_in, opara__oattr_int(n, "axis", 0), out) : OPARA__NOFOLD;
        opara__free(im->rt, all);
        return r;
    }
    if (opara__folds_by_kernel(opara__op_from_name(n->op_type))) {
        opara__cv* all = (opara__cv*)opara__calloc(im->rt, n_in, sizeof(opara__cv));
        if (!all) return opara__imp_oom(im);
        for (i = 0; i < n_in && in[i] >= 0; ++i) opara__cv_of(im, in[i], &all[i]);
        r = i == n_in ? opara__fold_by_kernel(im, opara__op_from_name(n->op_type), all, n_in, out) : OPARA__NOFOLD;
        opara__free(im->rt, all);
        return r;
    }
    for (i = 0; i < 4; ++i) {
        if (i < n_in && in[i] >= 0) opara__cv_of(im, in[i], &cv[i]);
        else memset(&cv[i], 0, sizeof cv[i]);
    }
    if (n_in >= 2 && in[1] >= 0) {
        static const char* const ops[] = {"Add", "Sub", "Mul", "Div", "Pow", "Equal"};
        static const char codes[] = "+-*/^=";
        for (i = 0; i < 6; ++i)
            if (opara__op_is(n, ops[i])) return opara__eval_binary(im, codes[i], &cv[0], &cv[1], out);
    }
    if (opara__op_is(n, "Where") && n_in == 3 && in[1] >= 0 && in[2] >= 0)
        return opara__eval_where(im, &cv[0], &cv[1], &cv[2], out);
    if (opara__op_is(n, "Transpose")) return opara__eval_transpose(im, n, &cv[0], out);
    if (opara__op_is(n, "Cast")) return opara__eval_cast(im, &cv[0], opara__oattr_int(n, "to", 0), out);
    if (opara__op_is(n, "Sqrt")) return opara__eval_sqrt(im, &cv[0], out);
    if (opara__op_is(n, "ConstantOfShape")) return opara__eval_constant_of_shape(im, &cv[0], out);
    if (opara__op_is(n, "Range") && n_in == 3 && in[1] >= 0 && in[2] >= 0)
        return opara__eval_range(im, &cv[0], &cv[1], &cv[2], out);
    if (opara__op_is(n, "Gather") && n_in >= 2 && in[1] >= 0)
        return opara__eval_gather(im, &cv[0], &cv[1], opara__oattr_int(n, "axis", 0), out);
    if (opara__op_is(n, "Slice")) return opara__fold_slice(im, in, n_in, &cv[0], out);
    if (opara__op_is(n, "MelWeightMatrix") && n_in == 5) {
        opara__cv all[5];
        for (i = 0; i < 5; ++i) {
            if (in[i] < 0) return OPARA__NOFOLD;
            opara__cv_of(im, in[i], &all[i]);
        }
        return opara__eval_mel_weights(im, all, out);
    }
    if ((r = opara__fold_window(im, &cv[0], out)) != OPARA__NOFOLD) return r;
    return opara__fold_view(im, in, n_in, &cv[0], out);
}
