/* ONNX import (see opara_onnx.h).

   Nodes are taken in dependency order (real exports are not always sorted). Each node either
   folds (all inputs constant and the op has a constant evaluator, or it is a Shape whose input
   shape is known: opara_onnx_fold.c), disappears (Constant, Identity, Dropout) or becomes one IR
   node whose constant inputs (axes, pads, shape, ...) move into canonical attributes. The folded
   Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains of batch-dynamic exports end in a
   Reshape whose "shape" holds OPARA__DIM_BATCH or -1. Afterwards BatchNormalization folds
   into the preceding Conv, a Relu fuses into its Conv/Gemm, a zero Pad into its AveragePool and
   the element-wise chains exporters write for GELU (erf and tanh forms) become one Gelu, and the
   graph is rebuilt in topological order with only what the outputs need. */
#include "opara_onnx.h"
#include "../model/opara_model.h"

#include <math.h>
#include <stdlib.h>

/* ---- shape inference while importing (only so that Shape nodes can fold) ---------------------- */

/* Output shapes of an imported node from the shape engine in tolerant mode (unknown dims and the
   symbolic batch propagate), and output dtypes: input 0's, Where's input 1, Cast's 'to', ArgMax/ArgMin's
   i64, the operators with their own rule (opara__op_out_dtype). What the engine cannot infer stays
   unknown; only running out of memory is a failure. */
static opara_result opara__infer_node(opara__imp* im, int32_t node) {
    const opara__node* n = &im->g->nodes[node];
    const opara__shape** in;
    opara__shape** out;
    opara_dtype dt;
    uint32_t k;
    if (n->n_inputs == 0 || n->inputs[0] < 0) return OPARA_OK;
    for (k = 0; k < n->n_outputs; ++k) /* grow the side table first: the inputs may point into it */
        if (!opara__side(im, n->outputs[k])) return opara__imp_oom(im);
    in = (const opara__shape**)opara__calloc(im->rt, (size_t)n->n_inputs + n->n_outputs, sizeof *in);
    if (!in) return opara__imp_oom(im);
    out = (opara__shape**)(void*)(in + n->n_inputs);
    for (k = 0; k < n->n_inputs; ++k) in[k] = n->inputs[k] >= 0 ? opara__imp_shape(im, n->inputs[k]) : NULL;
    for (k = 0; k < n->n_outputs; ++k) out[k] = &opara__side(im, n->outputs[k])->shape;
    (void)opara__infer_node_shapes(im->rt, im->g, (uint32_t)node, OPARA__SHAPE_TOLERANT, OPARA__DIM_BATCH, in, out, NULL);
    opara__free(im->rt, (void*)in);
    dt = im->g->values[n->inputs[0]].dtype;
    if (n->op == OPARA__OP_WHERE && n->n_inputs > 1 && n->inputs[1] >= 0) dt = im->g->values[n->inputs[1]].dtype;
    if (n->op == OPARA__OP_ONE_HOT && n->n_inputs > 1 && n->inputs[1] >= 0) dt = im->g->values[n->inputs[1]].dtype;
    if (n->op == OPARA__OP_SIZE) dt = OPARA_DTYPE_I64;
    if (n->op == OPARA__OP_EYE_LIKE && opara__node_attr(n, "dtype"))
        dt = opara__onnx_dtype((int32_t)opara__attr_int(n, "dtype", 1));
    if (n->op == OPARA__OP_CAST) dt = opara__onnx_dtype((int32_t)opara__attr_int(n, "to", 1));
    if (n->op == OPARA__OP_ARG_MAX || n->op == OPARA__OP_ARG_MIN) dt = OPARA_DTYPE_I64;
    if (OPARA__OP_GIVES_BOOL(n->op)) dt = OPARA_DTYPE_BOOL;
    for (k = 0; k < n->n_outputs; ++k) im->g->values[n->outputs[k]].dtype = dt;
    if (n->n_inputs <= 16) { /* the operators with their own output dtype rule (at most 16 inputs) */
        opara_dtype in_dt[16];
        for (k = 0; k < n->n_inputs; ++k) in_dt[k] = n->inputs[k] >= 0 ? im->g->values[n->inputs[k]].dtype : OPARA_DTYPE_UNDEFINED;
        for (k = 0; k < n->n_outputs; ++k)
            if (opara__op_out_dtype(n, in_dt, k, &dt)) im->g->values[n->outputs[k]].dtype = dt;
    }
    /* MaxPool's Indices, Dropout's mask */
    if (n->op == OPARA__OP_MAX_POOL && n->n_outputs > 1) im->g->values[n->outputs[1]].dtype = OPARA_DTYPE_I64;
    if (n->op == OPARA__OP_DROPOUT && n->n_outputs > 1) im->g->values[n->outputs[1]].dtype = OPARA_DTYPE_BOOL;
    return OPARA_OK;
}

/* ---- f16 models: compute in f32 (docs/ARCHITECTURE.md, "f16 models") --------------------------- */

/* A name no value of the graph has yet: base + suffix, then base + suffix + a number. */
static const char* opara__fresh_name(opara__imp* im, const char* base, const char* suffix) {
    char buf[OPARA__DETAIL_MAX];
    uint32_t k;
    opara__format(buf, sizeof buf, "%s%s", base, suffix);
    for (k = 2; opara__graph_find_value(im->g, buf) >= 0 && k < 1000000; ++k)
        opara__format(buf, sizeof buf, "%s%s%u", base, suffix, k);
    return opara__pool_strdup(im->rt, &im->g->pool, buf);
}

/* A Cast of value src to dtype into a new value named name; its index in *out. */
static opara_result opara__insert_cast(opara__imp* im, int32_t src, opara_dtype to, const char* name, int32_t* out) {
    int32_t node;
    opara_result r;
    if (!name) return opara__imp_oom(im);
    r = opara__graph_insert_value(im->g, name, OPARA_DTYPE_UNDEFINED, NULL, out);
    if (r != OPARA_OK) return opara__onnx_insert_result(r);
    r = opara__graph_insert_node(im->g, OPARA__OP_CAST, name, 1, &src, 1, out, &node);
    if (r != OPARA_OK) return opara__onnx_insert_result(r);
    if (opara__node_set_int(im->g, node, "to", (int64_t)to) != OPARA_OK) return opara__imp_oom(im);
    return opara__infer_node(im, node);
}

/* An f16 value (an f16 graph input, a Cast to f16) gets an f32 twin that every later consumer
   reads instead: the ONNX name resolves to the twin (an alias), the twin remembers the f16 value
   for a graph output that wants f16. */
static opara_result opara__widen_f16(opara__imp* im, int32_t v) {
    int32_t wide;
    opara_result r = opara__insert_cast(im, v, OPARA_DTYPE_F32, opara__fresh_name(im, im->g->values[v].name, "::f32"),
                                        &wide);
    if (r != OPARA_OK) return r;
    if (!opara__side(im, v) || !opara__side(im, wide)) return opara__imp_oom(im);
    im->side[v].alias = wide;
    im->side[wide].narrow = v;
    im->side[wide].onnx_f16 = 1;
    return OPARA_OK;
}

/* A graph output declared f16 whose value *v is f32 here: the f16 value it widens, or a Cast to f16
   that takes the output's name (the f32 value gives its name up). */
static opara_result opara__narrow_output(opara__imp* im, const char* name, int32_t* v, int32_t* direct) {
    int32_t f16;
    opara_result r;
    if (im->side[*v].narrow >= 0) {
        *v = im->side[*v].narrow;
        return OPARA_OK;
    }
    if (im->g->values[*v].dtype != OPARA_DTYPE_F32) return OPARA_OK;
    r = opara__insert_cast(im, *v, OPARA_DTYPE_F16, opara__fresh_name(im, name, "::f16"), &f16);
    if (r != OPARA_OK) return r;
    if (!opara__side(im, f16)) return opara__imp_oom(im);
    if (strcmp(im->g->values[*v].name, name) == 0 && !im->side[*v].rename &&
        !(im->side[*v].rename = opara__fresh_name(im, name, "::f32")))
        return opara__imp_oom(im);
    im->side[f16].rename = opara__pool_strdup(im->rt, &im->g->pool, name);
    if (!im->side[f16].rename) return opara__imp_oom(im);
    *v = *direct = f16;
    return OPARA_OK;
}

/* CastLike becomes a Cast to the dtype of its second input (as the ONNX model has it: an f16 tensor
   widened here still means f16). */
static opara_result opara__import_castlike(opara__imp* im, const int32_t* in) {
    const opara__onnx_node* n = im->node;
    int32_t out;
    opara_dtype to;
    opara_result r;
    if (n->n_inputs < 2 || in[0] < 0 || in[1] < 0 || !n->n_outputs || !n->outputs[0][0])
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (CastLike): needs 2 inputs and an output",
                           im->node_name);
    if (opara__graph_find_value(im->g, n->outputs[0]) >= 0)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s': tensor '%s' is defined twice", im->node_name,
                           n->outputs[0]);
    if (!opara__side(im, in[1])) return opara__imp_oom(im);
    to = im->side[in[1]].onnx_f16 ? OPARA_DTYPE_F16 : im->g->values[in[1]].dtype;
    r = opara__insert_cast(im, in[0], to, opara__pool_strdup(im->rt, &im->g->pool, n->outputs[0]), &out);
    if (r == OPARA_OK && to == OPARA_DTYPE_F16) r = opara__widen_f16(im, out);
    return r;
}

/* ---- importing one node ----------------------------------------------------------------------- */

/* ONNX attributes that opara__canonicalize turns into others: Split's num_outputs (the split
   sizes), Resize's axes (full-rank scales, sizes and roi). */
static int opara__attr_is_replaced(const opara__onnx_node* n, const char* name) {
    return (opara__op_is(n, "Split") && strcmp(name, "num_outputs") == 0) ||
           (opara__op_is(n, "Resize") && strcmp(name, "axes") == 0);
}

static opara_result opara__copy_onnx_attrs(opara__imp* im, int32_t node) {
    const opara__onnx_node* n = im->node;
    uint32_t i;
    opara_result r = OPARA_OK;
    for (i = 0; i < n->n_attrs && r == OPARA_OK; ++i) {
        const opara__onnx_attr* a = &n->attrs[i];
        int32_t type = a->type;
        if (opara__attr_is_replaced(n, a->name)) continue;
        if (!type) /* IR < 2 files leave the type out */
            type = a->has_f ? OPARA__ONNX_ATTR_FLOAT : a->has_i ? OPARA__ONNX_ATTR_INT : a->has_s ? OPARA__ONNX_ATTR_STRING :
                   a->n_floats ? OPARA__ONNX_ATTR_FLOATS : a->n_ints ? OPARA__ONNX_ATTR_INTS : 0;
        switch (type) {
        case OPARA__ONNX_ATTR_FLOAT: r = opara__node_set_float(im->g, node, a->name, a->f); break;
        case OPARA__ONNX_ATTR_INT: r = opara__node_set_int(im->g, node, a->name, a->i); break;
        case OPARA__ONNX_ATTR_FLOATS: r = opara__node_set_floats(im->g, node, a->name, a->floats, a->n_floats); break;
        case OPARA__ONNX_ATTR_INTS: r = opara__node_set_ints(im->g, node, a->name, a->ints, a->n_ints); break;
        case OPARA__ONNX_ATTR_STRING: {
            char buf[256];
            if (a->s.size >= sizeof buf)
                return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s': attribute '%s' is too long",
                                   im->node_name, a->name);
            if (a->s.size) memcpy(buf, a->s.data, a->s.size);
            buf[a->s.size] = 0;
            r = opara__node_set_string(im->g, node, a->name, buf);
            break;
        }
        default: break; /* tensors, graphs, string lists: no IR operator uses them */
        }
    }
    return r;
}

static opara_result opara__set_ints_param(opara__imp* im, int32_t node, const char* name, const opara__param* p) {
    return p->present ? opara__node_set_ints(im->g, node, name, p->ints, p->n) : OPARA_OK;
}

static opara_result opara__canon_slice(opara__imp* im, int32_t node, const int32_t* in, uint32_t n_in) {
    static const char* const names[4] = {"starts", "ends", "axes", "steps"};
    opara__param p[4];
    opara_result r = OPARA_OK;
    uint32_t i;
    for (i = 0; i < 4 && r == OPARA_OK; ++i)
        r = im->opset < 10 ? opara__ints_param(im, in, 0, 0, i < 3 ? names[i] : NULL, 0, &p[i])
                           : opara__ints_param(im, in, n_in, i + 1, NULL, 0, &p[i]);
    if (r != OPARA_OK) return r;
    if (!p[0].present || !p[1].present || p[0].n != p[1].n || (p[2].present && p[2].n != p[0].n) ||
        (p[3].present && p[3].n != p[0].n))
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Slice): starts/ends/axes/steps disagree",
                           im->node_name);
    for (i = 0; i < p[0].n; ++i) {
        if (!p[2].present) p[2].ints[i] = (int64_t)i;
        if (!p[3].present) p[3].ints[i] = 1;
    }
    p[2].present = p[3].present = 1;
    p[2].n = p[3].n = p[0].n;
    for (i = 0; i < 4 && r == OPARA_OK; ++i) r = opara__set_ints_param(im, node, names[i], &p[i]);
    return r;
}

/* Split-18's num_outputs becomes the canonical split sizes: chunks of ceil(dim / num_outputs), the
   last one smaller. Where the dim is unknown at import no sizes are set (equal parts): the shape
   engine then refuses a dim that does not divide, where ONNX would make the last chunk smaller. */
static opara_result opara__canon_split(opara__imp* im, int32_t node, const int32_t* in, uint32_t n_in) {
    const opara__onnx_attr* num = opara__oattr(im->node, "num_outputs");
    const opara__shape* x = opara__imp_shape(im, in[0]);
    uint32_t n_out = im->g->nodes[node].n_outputs, k;
    int64_t axis, dim, chunk;
    opara__param p;
    opara_result r = opara__ints_param(im, in, n_in, 1, "split", 0, &p);
    if (r != OPARA_OK || !num) return r == OPARA_OK ? opara__set_ints_param(im, node, "split", &p) : r;
    if (p.present)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Split): both the 'split' input and 'num_outputs' are given",
                           im->node_name);
    if (num->i < 1)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Split): num_outputs %lld is below 1", im->node_name,
                           (long long)num->i);
    if (num->i != (int64_t)n_out)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Split): num_outputs %lld but the node has %u outputs",
                           im->node_name, (long long)num->i, n_out);
    axis = opara__onnx_axis(opara__oattr_int(im->node, "axis", 0), x->ndim);
    if (x->ndim < 0 || axis < 0 || axis >= x->ndim) return OPARA_OK; /* the shape engine names a bad axis */
    dim = x->dims[axis];
    if (dim < 0) return OPARA_OK; /* unknown or the symbolic batch */
    chunk = (dim + num->i - 1) / num->i;
    if (chunk * (num->i - 1) >= dim) /* also num_outputs > dim */
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID,
                           "node '%s' (Split): num_outputs %lld does not split axis %lld of size %lld into chunks of "
                           "ceil(size / num_outputs) with a non-empty last one",
                           im->node_name, (long long)num->i, (long long)axis, (long long)dim);
    p.present = 1;
    p.n = n_out;
    for (k = 0; k < n_out; ++k) p.ints[k] = k + 1 < n_out ? chunk : dim - chunk * (int64_t)k;
    return opara__set_ints_param(im, node, "split", &p);
}

/* Resize-18's axes: scales, sizes and roi name only these axes. They become full rank, the form
   the shape engine and both backends read: the other axes keep their size (scale 1, their dim,
   roi 0..1). Sizes for an axis whose dim is unknown at import cannot be written so: refused. */
static opara_result opara__resize_full_rank(opara__imp* im, int32_t x, opara__param* scales, opara__param* sizes,
                                            opara__param* roi) {
    const opara__shape* xs = opara__imp_shape(im, x);
    uint32_t na = 0, pos[OPARA_MAX_DIMS] = {0}, k, n = scales->present && scales->n ? scales->n : sizes->n;
    const int64_t* axes = opara__oattr_ints(im->node, "axes", &na);
    opara__param s = *scales, z = *sizes, q = *roi;
    int32_t d;
    if (!axes) return OPARA_OK;
    if (xs->ndim < 0)
        return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP, "node '%s' (Resize): 'axes' needs the input's rank at import",
                           im->node_name);
    if (na != n || (roi->present && roi->n && roi->n != 2 * na))
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Resize): 'axes' has %u values, scales/sizes %u, roi %u",
                           im->node_name, na, n, roi->present ? roi->n : 0);
    for (k = 0; k < na; ++k) {
        int64_t a = opara__onnx_axis(axes[k], xs->ndim);
        if (a < 0 || a >= xs->ndim || pos[a])
            return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Resize): axes[%u] = %lld for a rank-%d input",
                               im->node_name, k, (long long)axes[k], (int)xs->ndim);
        pos[a] = k + 1;
    }
    for (d = 0; d < xs->ndim; ++d) {
        k = pos[d];
        s.floats[d] = k ? scales->floats[k - 1] : 1.0f;
        z.ints[d] = k ? sizes->ints[k - 1] : xs->dims[d];
        q.floats[d] = k ? roi->floats[k - 1] : 0.0f;
        q.floats[d + xs->ndim] = k ? roi->floats[k - 1 + na] : 1.0f;
        if (!k && sizes->present && sizes->n && xs->dims[d] < 0)
            return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP,
                               "node '%s' (Resize): 'sizes' with 'axes' needs the size of axis %d, unknown at import",
                               im->node_name, (int)d);
    }
    s.n = z.n = (uint32_t)xs->ndim;
    q.n = 2 * (uint32_t)xs->ndim;
    if (scales->present && scales->n) *scales = s;
    if (sizes->present && sizes->n) *sizes = z;
    if (roi->present && roi->n) *roi = q;
    return OPARA_OK;
}

/* What Resize-18 added beyond 'axes' and we do not implement: antialiasing, and sizes that keep
   the aspect ratio (keep_aspect_ratio_policy applies to sizes only). */
static opara_result opara__resize_check_18(opara__imp* im, const opara__node* n, const opara__param* sizes) {
    const char* policy = opara__attr_string(n, "keep_aspect_ratio_policy", "stretch");
    int64_t antialias = opara__attr_int(n, "antialias", 0);
    if (antialias != 0)
        return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP, "node '%s' (Resize): antialias=%lld is not supported (only 0)",
                           im->node_name, (long long)antialias);
    if (sizes->present && sizes->n && strcmp(policy, "stretch") != 0)
        return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP,
                           "node '%s' (Resize): keep_aspect_ratio_policy '%s' is not supported (only 'stretch')",
                           im->node_name, policy);
    return OPARA_OK;
}

/* Upsample as Resize: asymmetric coordinates and, for nearest, rounding down; its scales (an
   attribute before opset 9, then input 1) are Resize's canonical 'scales' already or moved there. */
static opara_result opara__canon_upsample(opara__imp* im, int32_t node, const int32_t* in, uint32_t n_in) {
    const char* mode = opara__attr_string(&im->g->nodes[node], "mode", "nearest");
    opara__param scales;
    opara_result r;
    if (strcmp(mode, "nearest") != 0 && strcmp(mode, "linear") != 0)
        return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP, "node '%s' (Upsample): mode '%s' is not supported "
                           "(nearest or linear)", im->node_name, mode);
    r = opara__floats_param(im, in, n_in, 1, &scales);
    if (r == OPARA_OK && scales.present) r = opara__node_set_floats(im->g, node, "scales", scales.floats, scales.n);
    if (r == OPARA_OK && !opara__node_attr(&im->g->nodes[node], "scales"))
        r = opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Upsample): no scales", im->node_name);
    if (r == OPARA_OK) r = opara__node_set_string(im->g, node, "coordinate_transformation_mode", "asymmetric");
    if (r == OPARA_OK) r = opara__node_set_string(im->g, node, "nearest_mode", "floor");
    return r;
}

static opara_result opara__canon_resize(opara__imp* im, int32_t node, const int32_t* in, uint32_t n_in) {
    opara__param scales, sizes, roi;
    opara_result r;
    uint32_t si = im->opset < 11 ? 1 : 2;
    if (opara__op_is(im->node, "Upsample")) return opara__canon_upsample(im, node, in, n_in);
    r = opara__floats_param(im, in, n_in, si, &scales);
    if (r == OPARA_OK && im->opset >= 11) r = opara__ints_param(im, in, n_in, 3, NULL, 0, &sizes);
    else memset(&sizes, 0, sizeof sizes);
    if (r == OPARA_OK && im->opset >= 11 &&
        strcmp(opara__attr_string(&im->g->nodes[node], "coordinate_transformation_mode", ""), "tf_crop_and_resize") == 0)
        r = opara__floats_param(im, in, n_in, 1, &roi);
    else memset(&roi, 0, sizeof roi);
    if (r == OPARA_OK) r = opara__resize_check_18(im, &im->g->nodes[node], &sizes);
    if (r == OPARA_OK) r = opara__resize_full_rank(im, in[0], &scales, &sizes, &roi);
    if (r != OPARA_OK) return r;
    if (scales.present && scales.n) r = opara__node_set_floats(im->g, node, "scales", scales.floats, scales.n);
    if (r == OPARA_OK && sizes.present && sizes.n) r = opara__node_set_ints(im->g, node, "sizes", sizes.ints, sizes.n);
    if (r == OPARA_OK && roi.present && roi.n) r = opara__node_set_floats(im->g, node, "roi", roi.floats, roi.n);
    if (r == OPARA_OK && !(scales.present && scales.n) && !(sizes.present && sizes.n))
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Resize): neither scales nor sizes given",
                           im->node_name);
    return r;
}

static opara_result opara__canon_clip(opara__imp* im, int32_t node, const int32_t* in, uint32_t n_in) {
    opara__param lo, hi;
    opara_result r;
    if (im->opset < 11) return OPARA_OK; /* min/max are attributes already */
    r = opara__floats_param(im, in, n_in, 1, &lo);
    if (r == OPARA_OK) r = opara__floats_param(im, in, n_in, 2, &hi);
    if (r == OPARA_OK && lo.present && lo.n == 1) r = opara__node_set_float(im->g, node, "min", lo.floats[0]);
    if (r == OPARA_OK && hi.present && hi.n == 1) r = opara__node_set_float(im->g, node, "max", hi.floats[0]);
    return r;
}

static opara_result opara__canon_pad(opara__imp* im, int32_t node, const int32_t* in, uint32_t n_in) {
    opara__param pads, value, axes;
    opara_result r;
    if (im->opset < 11) {
        uint32_t n;
        if (!opara__oattr_ints(im->node, "pads", &n) && opara__oattr(im->node, "paddings")) {
            const int64_t* p = opara__oattr_ints(im->node, "paddings", &n);
            return opara__node_set_ints(im->g, node, "pads", p, n);
        }
        return OPARA_OK;
    }
    r = opara__ints_param(im, in, n_in, 1, NULL, 0, &pads);
    if (r == OPARA_OK) r = opara__floats_param(im, in, n_in, 2, &value);
    if (r == OPARA_OK) r = opara__ints_param(im, in, n_in, 3, NULL, 0, &axes); /* opset 18+: pads name these axes */
    if (r == OPARA_OK) r = opara__set_ints_param(im, node, "pads", &pads);
    if (r == OPARA_OK) r = opara__set_ints_param(im, node, "axes", &axes);
    if (r == OPARA_OK && value.present && value.n == 1) r = opara__node_set_float(im->g, node, "value", value.floats[0]);
    return r;
}

/* LSTM, GRU, RNN: the string list 'activations' becomes one string, the names joined by commas
   (the IR's attributes have no string lists; docs/FORMAT.md). */
static opara_result opara__canon_rnn(opara__imp* im, int32_t node) {
    const opara__onnx_attr* a = opara__oattr(im->node, "activations");
    char buf[256];
    size_t len = 0;
    uint32_t i;
    if (!a || !a->n_strings) return OPARA_OK;
    for (i = 0; i < a->n_strings; ++i) {
        size_t n = a->strings[i].size;
        if (n + 2 > sizeof buf - len || memchr(a->strings[i].data, ',', n) || memchr(a->strings[i].data, 0, n))
            return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s': attribute 'activations' is too long or malformed",
                               im->node_name);
        if (i) buf[len++] = ',';
        if (n) memcpy(buf + len, a->strings[i].data, n);
        len += n;
    }
    buf[len] = 0;
    return opara__node_set_string(im->g, node, "activations", buf);
}

/* Softmax, LogSoftmax, Hardmax. */
static opara_result opara__canon_softmax(opara__imp* im, int32_t node, const int32_t* in) {
    const opara__shape* x = opara__imp_shape(im, in[0]);
    int64_t axis = opara__oattr_int(im->node, "axis", im->opset < 13 ? 1 : -1);
    if (im->opset < 13 && x->ndim >= 0 && opara__onnx_axis(axis, x->ndim) != x->ndim - 1)
        return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP,
                           "node '%s' (%s, opset %lld): axis %lld of a rank-%d input flattens the trailing dims; "
                           "only the last axis is supported before opset 13",
                           im->node_name, im->node->op_type, (long long)im->opset, (long long)axis, (int)x->ndim);
    return opara__node_set_int(im->g, node, "axis", axis);
}

/* Trilu's k (input 1, optional) and Tile's repeats (input 1) become attributes. */
static opara_result opara__canon_trilu_tile(opara__imp* im, opara__op op, int32_t node, const int32_t* in, uint32_t n_in) {
    opara__param p;
    int tile = op == OPARA__OP_TILE;
    opara_result r = opara__ints_param(im, in, n_in, 1, NULL, 0, &p);
    if (r != OPARA_OK) return r;
    if (tile && !p.present)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Tile): no repeats", im->node_name);
    if (!tile && p.present && p.n != 1)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Trilu): k must hold one value", im->node_name);
    if (tile) return opara__set_ints_param(im, node, "repeats", &p);
    return p.present ? opara__node_set_int(im->g, node, "k", p.ints[0]) : OPARA_OK;
}

/* OneHot's depth (input 1, a one-element numeric tensor) becomes an attribute; the node keeps indices
   and values (opara__emit_node). */
static opara_result opara__canon_one_hot(opara__imp* im, int32_t node, const int32_t* in, uint32_t n_in) {
    opara__param p;
    opara_result r = opara__floats_param(im, in, n_in, 1, &p);
    if (r != OPARA_OK) return r;
    if (!p.present || p.n != 1 || !(p.floats[0] >= 1.0f && p.floats[0] < 1e12f))
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (OneHot): depth must be one positive value",
                           im->node_name);
    return opara__node_set_int(im->g, node, "depth", (int64_t)p.floats[0]);
}

/* CumSum: its axis input (a constant scalar) becomes the attribute 'axis'. */
static opara_result opara__canon_cum_sum(opara__imp* im, int32_t node, const int32_t* in, uint32_t n_in) {
    opara__param p;
    opara_result r = opara__ints_param(im, in, n_in, 1, NULL, 0, &p);
    if (r != OPARA_OK) return r;
    if (!p.present || p.n != 1)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (CumSum): 'axis' must be one integer", im->node_name);
    return opara__node_set_int(im->g, node, "axis", p.ints[0]);
}

/* PRelu before opset 7 applies a slope of C values per channel (dim 1); from 7 on the slope
   broadcasts numpy-style from the right. A constant [C] slope becomes [C, 1, ...] (a new constant,
   shared by the nodes that use the same slope). */
static opara_result opara__canon_prelu(opara__imp* im, int32_t node, const int32_t* in) {
    const opara__shape* x = opara__imp_shape(im, in[0]);
    opara__shape shape;
    opara__cv slope;
    char name[256];
    int32_t v, d;
    opara_result r = OPARA_OK;
    if (im->opset >= 7 || in[1] < 0 || !opara__is_const(im, in[1]) || x->ndim < 3) return OPARA_OK;
    opara__cv_of(im, in[1], &slope);
    if (slope.shape.ndim != 1 || slope.count < 2 || (int64_t)slope.count != x->dims[1]) return OPARA_OK;
    opara__format(name, sizeof name, "%s:per_channel", im->g->values[in[1]].name);
    shape.ndim = x->ndim - 1;
    shape.dims[0] = (int64_t)slope.count;
    for (d = 1; d < shape.ndim; ++d) shape.dims[d] = 1;
    if (opara__graph_find_value(im->g, name) < 0) r = opara__imp_const(im, name, slope.dtype, &shape, slope.data, NULL, 1);
    v = opara__graph_find_value(im->g, name);
    if (r == OPARA_OK) im->g->nodes[node].inputs[1] = v;
    return r;
}

/* Moves constant inputs into canonical attributes and fills defaults that depend on the opset. */
/* TopK-10+'s K input (one int64) becomes the attribute k that TopK-1 has. */
static opara_result opara__canon_topk(opara__imp* im, int32_t node, const int32_t* in, uint32_t n_in) {
    opara__param p;
    opara_result r;
    if (im->opset < 10) return OPARA_OK;
    r = opara__ints_param(im, in, n_in, 1, NULL, 0, &p);
    if (r != OPARA_OK) return r;
    if (!p.present || p.n != 1)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (TopK): K must be one value", im->node_name);
    return opara__node_set_int(im->g, node, "k", p.ints[0]) == OPARA_OK ? OPARA_OK : opara__imp_oom(im);
}

static opara_result opara__canonicalize(opara__imp* im, opara__op op, int32_t node, const int32_t* in, uint32_t n_in) {
    opara__param p;
    opara_result r = OPARA_OK;
    switch (op) {
    case OPARA__OP_SPLIT: r = opara__canon_split(im, node, in, n_in); break;
    case OPARA__OP_SQUEEZE: case OPARA__OP_UNSQUEEZE: case OPARA__OP_REDUCE_MEAN: OPARA__CASE_REDUCE_KINDS:
        r = opara__ints_param(im, in, n_in, 1, "axes", 0, &p);
        if (r == OPARA_OK) r = opara__set_ints_param(im, node, "axes", &p);
        if (r == OPARA_OK && op == OPARA__OP_UNSQUEEZE && !p.present)
            r = opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Unsqueeze): no axes", im->node_name);
        break;
    case OPARA__OP_RESHAPE: case OPARA__OP_EXPAND:
        r = opara__ints_param(im, in, n_in, 1, "shape", 1, &p);
        if (r == OPARA_OK && !p.present)
            r = opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s': no target shape", im->node_name);
        if (r == OPARA_OK) r = opara__set_ints_param(im, node, "shape", &p);
        break;
    case OPARA__OP_SLICE: r = opara__canon_slice(im, node, in, n_in); break;
    case OPARA__OP_RESIZE: r = opara__canon_resize(im, node, in, n_in); break;
    case OPARA__OP_CLIP: r = opara__canon_clip(im, node, in, n_in); break;
    case OPARA__OP_PAD: r = opara__canon_pad(im, node, in, n_in); break;
    case OPARA__OP_SOFTMAX: case OPARA__OP_LOG_SOFTMAX: case OPARA__OP_HARDMAX: r = opara__canon_softmax(im, node, in); break;
    case OPARA__OP_LSTM: case OPARA__OP_GRU: case OPARA__OP_RNN: r = opara__canon_rnn(im, node); break;
    case OPARA__OP_CUM_SUM: r = opara__canon_cum_sum(im, node, in, n_in); break;
    case OPARA__OP_TOPK: r = opara__canon_topk(im, node, in, n_in); break;
    case OPARA__OP_TRILU: case OPARA__OP_TILE: r = opara__canon_trilu_tile(im, op, node, in, n_in); break;
    case OPARA__OP_ONE_HOT: r = opara__canon_one_hot(im, node, in, n_in); break;
    case OPARA__OP_PRELU: r = opara__canon_prelu(im, node, in); break;
    case OPARA__OP_MAX_UNPOOL:
        r = opara__ints_param(im, in, n_in, 2, NULL, 0, &p);
        if (r == OPARA_OK) r = opara__set_ints_param(im, node, "output_shape", &p);
        break;
    case OPARA__OP_CONV: case OPARA__OP_CONV_TRANSPOSE: case OPARA__OP_QUANTIZE_LINEAR: case OPARA__OP_DEQUANTIZE_LINEAR:
    case OPARA__OP_DYNAMIC_QUANTIZE_LINEAR: case OPARA__OP_CONV_INTEGER: case OPARA__OP_MATMUL_INTEGER:
    case OPARA__OP_QLINEAR_CONV: case OPARA__OP_QLINEAR_MATMUL: case OPARA__OP_MAX_POOL: case OPARA__OP_AVERAGE_POOL:
    case OPARA__OP_GLOBAL_AVERAGE_POOL: case OPARA__OP_BATCH_NORM: case OPARA__OP_INSTANCE_NORM:
    case OPARA__OP_LRN: case OPARA__OP_MVN: case OPARA__OP_SHRINK: case OPARA__OP_GLOBAL_MAX_POOL: case OPARA__OP_DROPOUT:
    case OPARA__OP_EINSUM: case OPARA__OP_RELU: case OPARA__OP_LEAKY_RELU:
    case OPARA__OP_SIGMOID: case OPARA__OP_TANH: case OPARA__OP_HARD_SIGMOID: case OPARA__OP_HARD_SWISH:
    case OPARA__OP_ADD: case OPARA__OP_SUB: case OPARA__OP_MUL: case OPARA__OP_DIV: case OPARA__OP_POW:
    OPARA__CASE_COMPARE: OPARA__CASE_LOGIC_BINARY: OPARA__CASE_INT_BINARY: OPARA__CASE_LOGIC_UNARY: OPARA__CASE_VARIADIC:
    case OPARA__OP_SQRT: case OPARA__OP_ERF: case OPARA__OP_GELU: case OPARA__OP_CONCAT: case OPARA__OP_GATHER:
    case OPARA__OP_GATHER_ELEMENTS: case OPARA__OP_SCATTER_ELEMENTS: case OPARA__OP_SCATTER: case OPARA__OP_GATHER_ND:
    case OPARA__OP_SCATTER_ND: case OPARA__OP_SIZE: case OPARA__OP_DEPTH_TO_SPACE: case OPARA__OP_SPACE_TO_DEPTH:
    case OPARA__OP_EYE_LIKE: case OPARA__OP_REVERSE_SEQUENCE:
    case OPARA__OP_FLATTEN: case OPARA__OP_TRANSPOSE: case OPARA__OP_GEMM: case OPARA__OP_MATMUL:
    case OPARA__OP_LAYER_NORM: case OPARA__OP_WHERE: case OPARA__OP_CAST: case OPARA__OP_ARG_MAX: case OPARA__OP_ARG_MIN:
    OPARA__CASE_MATH_UNARY: case OPARA__OP_GRID_SAMPLE: case OPARA__OP_DET: case OPARA__OP_COUNT:
        break; /* attributes as ONNX has them */
    }
    return r;
}

/* Operators whose kernel computes every output anyway (LSTM, GRU, RNN: Y, Y_h and Y_c come from the
   same recurrence): an omitted output before a present one becomes a value nothing reads. */
static int opara__outputs_all_computed(opara__op op) {
    return op == OPARA__OP_LSTM || op == OPARA__OP_GRU || op == OPARA__OP_RNN;
}

static opara_result opara__insert_unused_output(opara__imp* im, uint32_t k, int32_t* value) {
    char name[300];
    uint32_t serial;
    opara_result r;
    for (serial = 0; serial < 1000; ++serial) {
        if (serial) opara__format(name, sizeof name, "%.200s:unused_output_%u_%u", im->node_name, k, serial);
        else opara__format(name, sizeof name, "%.200s:unused_output_%u", im->node_name, k);
        if (opara__graph_find_value(im->g, name) < 0) break;
    }
    r = opara__graph_insert_value(im->g, name, OPARA_DTYPE_UNDEFINED, NULL, value);
    return r == OPARA_OK ? OPARA_OK : opara__onnx_insert_result(r);
}

static opara_result opara__emit_node(opara__imp* im, opara__op op, const int32_t* in, uint32_t n_in) {
    const opara__onnx_node* n = im->node;
    uint32_t n_out = n->n_outputs, kept = opara__op_info_of(op)->kept_inputs, i;
    int32_t outs[16], node, one_hot_in[2];
    const int32_t* node_in = in;
    opara_result r;
    while (n_out > 0 && !n->outputs[n_out - 1][0]) --n_out;
    if (kept == 0 || kept > n_in) kept = n_in; /* the rest became attributes (opara__canonicalize) */
    while (kept > 0 && in[kept - 1] < 0) --kept;
    if (op == OPARA__OP_ONE_HOT && n_in == 3) { /* canonical inputs: indices, values (depth an attribute) */
        one_hot_in[0] = in[0], one_hot_in[1] = in[2];
        node_in = one_hot_in, kept = 2;
    }
    if (n_out == 0 || n_out > 16)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (%s): %u outputs", im->node_name, n->op_type, n_out);
    for (i = 0; i < n_out; ++i) {
        if (!n->outputs[i][0] && opara__outputs_all_computed(op)) {
            r = opara__insert_unused_output(im, i, &outs[i]);
            if (r != OPARA_OK) return r;
            continue;
        }
        if (!n->outputs[i][0])
            return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP, "node '%s' (%s): omitted output %u is not supported",
                               im->node_name, n->op_type, i);
        if (opara__graph_find_value(im->g, n->outputs[i]) >= 0)
            return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s': tensor '%s' is defined twice", im->node_name,
                               n->outputs[i]);
        r = opara__graph_insert_value(im->g, n->outputs[i], OPARA_DTYPE_UNDEFINED, NULL, &outs[i]);
        if (r != OPARA_OK) return opara__onnx_insert_result(r);
    }
    r = opara__graph_insert_node(im->g, op, im->node_name, kept, node_in, n_out, outs, &node);
    if (r != OPARA_OK) return opara__onnx_insert_result(r);
    r = opara__copy_onnx_attrs(im, node);
    if (r == OPARA_OK) r = opara__canonicalize(im, op, node, in, n_in);
    if (r == OPARA_OK) r = opara__infer_node(im, node);
    for (i = 0; r == OPARA_OK && i < n_out; ++i)
        if (im->g->values[outs[i]].dtype == OPARA_DTYPE_F16) r = opara__widen_f16(im, outs[i]);
    return r;
}

static opara_result opara__import_constant(opara__imp* im) {
    const opara__onnx_node* n = im->node;
    const opara__onnx_attr* a;
    opara__shape shape;
    const char* out = n->n_outputs ? n->outputs[0] : "";
    if (!out[0]) return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Constant): no output", im->node_name);
    if ((a = opara__oattr(n, "value")) != NULL && a->t) {
        opara__tensor_data t;
        opara_result r = opara__onnx_tensor_load(im->rt, a->t, im->base_dir, im->node_name, &t);
        if (r != OPARA_OK) return r;
        r = opara__imp_const(im, out, t.dtype, &t.shape, t.data, NULL, 1);
        opara__tensor_data_free(im->rt, &t);
        return r;
    }
    shape.ndim = 0;
    if ((a = opara__oattr(n, "value_float")) != NULL)
        return opara__imp_const(im, out, OPARA_DTYPE_F32, &shape, &a->f, NULL, 1);
    if ((a = opara__oattr(n, "value_int")) != NULL)
        return opara__imp_const(im, out, OPARA_DTYPE_I64, &shape, &a->i, NULL, 1);
    shape.ndim = 1;
    if ((a = opara__oattr(n, "value_floats")) != NULL) {
        shape.dims[0] = a->n_floats;
        return opara__imp_const(im, out, OPARA_DTYPE_F32, &shape, a->floats, NULL, 1);
    }
    if ((a = opara__oattr(n, "value_ints")) != NULL) {
        shape.dims[0] = a->n_ints;
        return opara__imp_const(im, out, OPARA_DTYPE_I64, &shape, a->ints, NULL, 1);
    }
    return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP, "node '%s' (Constant): only value, value_float(s) and "
                       "value_int(s) are supported", im->node_name);
}

/* Tensor out becomes another name of src (Identity, Dropout, a folded If's outputs). */
static opara_result opara__alias_value(opara__imp* im, const char* out, int32_t src) {
    int32_t v;
    opara__imp_side* side;
    opara_result r;
    if (!out[0] || src < 0) return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (%s): missing input or output",
                                               im->node_name, im->node->op_type);
    if (opara__graph_find_value(im->g, out) >= 0)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s': tensor '%s' is defined twice", im->node_name, out);
    r = opara__graph_insert_value(im->g, out, im->g->values[src].dtype, NULL, &v);
    if (r != OPARA_OK) return opara__onnx_insert_result(r);
    if (!(side = opara__side(im, v))) return opara__imp_oom(im);
    side->alias = src;
    return OPARA_OK;
}

static opara_result opara__import_alias(opara__imp* im, int32_t src) {
    return opara__alias_value(im, im->node->n_outputs ? im->node->outputs[0] : "", src);
}

static opara_result opara__import_if(opara__imp* im, const int32_t* in);

/* ConstantOfShape whose value is zero (ONNX's default) and whose shape depends on the batch: what
   torch.onnx.export writes for an LSTM/GRU/RNN's zero initial state. It has no constant to fold to,
   so it becomes a value marked as zeros (nothing produces it) that only an RNN's initial state may
   read, directly or through the shape-only ops opara__zeros_pass_through names. 0: not such a node. */
static int opara__zero_fill_node(opara__imp* im, const opara__onnx_node* n) {
    const opara__onnx_attr* a = opara__oattr(n, "value");
    opara__tensor_data t;
    uint64_t i;
    int zero = 1;
    if (!opara__op_is(n, "ConstantOfShape") || !n->n_outputs || !n->outputs[0][0]) return 0;
    if (!a || !a->t) return 1;
    if (opara__onnx_tensor_load(im->rt, a->t, im->base_dir, im->node_name, &t) != OPARA_OK) return 0;
    for (i = 0; i < t.nbytes; ++i) zero &= ((const uint8_t*)t.data)[i] == 0;
    opara__tensor_data_free(im->rt, &t);
    return zero;
}

static opara_result opara__import_zeros(opara__imp* im, const char* zeros_of) {
    const char* out = im->node->outputs[0];
    opara__imp_side* side;
    int32_t v;
    opara_result r;
    if (opara__graph_find_value(im->g, out) >= 0)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s': tensor '%s' is defined twice", im->node_name, out);
    r = opara__graph_insert_value(im->g, out, OPARA_DTYPE_F32, NULL, &v);
    if (r != OPARA_OK) return opara__onnx_insert_result(r);
    if (!(side = opara__side(im, v))) return opara__imp_oom(im);
    side->zeros_of = zeros_of;
    return OPARA_OK;
}

/* Ops whose output is zeros when their first input is: they only pick, reorder or reshape it. */
static int opara__zeros_pass_through(const opara__onnx_node* n) {
    return opara__op_is(n, "Slice") || opara__op_is(n, "Reshape") || opara__op_is(n, "Squeeze") ||
           opara__op_is(n, "Unsqueeze") || opara__op_is(n, "Transpose") || opara__op_is(n, "Expand");
}

static const char* opara__zeros_input(opara__imp* im, int32_t v) {
    return v >= 0 && (size_t)v < im->side_cap ? im->side[v].zeros_of : NULL;
}

/* The node's inputs that are marked zeros: passed through (*zeros_of set), an RNN's initial state
   omitted, anything else refused as the ConstantOfShape it comes from would have been. */
static opara_result opara__zeros_inputs(opara__imp* im, opara__op op, int32_t* in, const char** zeros_of) {
    const opara__onnx_node* n = im->node;
    int rnn = op == OPARA__OP_LSTM || op == OPARA__OP_GRU || op == OPARA__OP_RNN;
    uint32_t i;
    *zeros_of = NULL;
    for (i = 0; i < n->n_inputs; ++i) {
        const char* z = opara__zeros_input(im, in[i]);
        if (!z) continue;
        if (i == 0 && opara__zeros_pass_through(n)) *zeros_of = z;
        else if (rnn && (i == 5 || i == 6)) in[i] = -1; /* an omitted initial state is zeros */
        else
            return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP, "node '%s' (ConstantOfShape): only supported when it can be "
                               "evaluated at import time (constant inputs), or as the zero initial state of an RNN "
                               "(read by node '%s' (%s))", z, im->node_name, n->op_type);
    }
    return OPARA_OK;
}

/* Dropout with its mask output (an IR Dropout node; without it Dropout is an alias of its input). */
static int opara__dropout_mask(const opara__onnx_node* n) { return n->n_outputs > 1 && n->outputs[1][0]; }

/* Upsample (opset 7-9; deprecated in 10) is a Resize node (opara__canon_upsample). */
static opara_result opara__import_upsample(opara__imp* im, const int32_t* in) {
    if (im->node->n_inputs == 0 || in[0] < 0)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Upsample): missing first input", im->node_name);
    return opara__emit_node(im, OPARA__OP_RESIZE, in, im->node->n_inputs);
}

static opara_result opara__import_node(opara__imp* im, const opara__onnx_node* n, int32_t* in) {
    opara__op op = opara__op_from_name(n->op_type);
    opara__cv folded;
    const char* zeros_of;
    uint32_t i;
    int r;
    im->node = n;
    im->node_name = n->name[0] ? n->name : n->n_outputs ? n->outputs[0] : n->op_type;
    for (i = 0; i < n->n_inputs; ++i) in[i] = n->inputs[i][0] ? opara__imp_find(im, n->inputs[i]) : -1;
    if (opara__op_is(n, "Constant")) return opara__import_constant(im);
    if (opara__op_is(n, "Dropout") && n->n_inputs >= 3 && in[2] >= 0) {
        opara__cv mode;
        if (opara__is_const(im, in[2])) opara__cv_of(im, in[2], &mode);
        if (!opara__is_const(im, in[2]) || mode.count != 1 || opara__get_i64(mode.dtype, mode.data, 0) != 0)
            return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP, "node '%s' (Dropout): training mode is not supported",
                               im->node_name);
    }
    if (opara__op_is(n, "Identity") || (opara__op_is(n, "Dropout") && !opara__dropout_mask(n)))
        return opara__import_alias(im, n->n_inputs ? in[0] : -1);
    if ((r = opara__zeros_inputs(im, op, in, &zeros_of)) != OPARA_OK) return (opara_result)r;
    if (zeros_of && n->n_outputs && n->outputs[0][0]) return opara__import_zeros(im, zeros_of);
    if (opara__op_is(n, "If")) return opara__import_if(im, in);
    if (opara__op_is(n, "CastLike")) return opara__import_castlike(im, in);
    if (opara__op_is(n, "Split") && (r = opara__try_fold_split(im, in, n->n_inputs)) != OPARA__NOFOLD)
        return (opara_result)r;
    if (opara__op_is(n, "Upsample")) return opara__import_upsample(im, in);
    r = opara__try_fold(im, in, n->n_inputs, &folded);
    if (r == OPARA_OK) {
        if (!n->n_outputs || !n->outputs[0][0])
            return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s': no output", im->node_name);
        return opara__imp_const(im, n->outputs[0], folded.dtype, &folded.shape, folded.data, folded.coef, 0);
    }
    if (r != OPARA__NOFOLD) return (opara_result)r;
    if (opara__zero_fill_node(im, n)) return opara__import_zeros(im, im->node_name);
    if (op == OPARA__OP_COUNT)
        return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP,
                           "node '%s' (%s): only supported when it can be evaluated at import time (constant inputs%s)",
                           im->node_name, n->op_type, opara__op_is(n, "Shape") ? ", or an input of known shape" : "");
    if (n->n_inputs == 0 || in[0] < 0)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (%s): missing first input", im->node_name,
                           n->op_type);
    return opara__emit_node(im, op, in, n->n_inputs);
}

/* ---- unsupported operators: one error listing them all ---------------------------------------- */

/* The model's opset of the default domain (ai.onnx). */
static int64_t opara__default_opset(const opara__onnx_model* m) {
    uint32_t i;
    for (i = 0; i < m->n_opsets; ++i)
        if (!m->opsets[i].domain[0] || strcmp(m->opsets[i].domain, "ai.onnx") == 0) return m->opsets[i].version;
    return m->n_opsets ? 0 : 1; /* no opset_import at all: very old files mean opset 1 */
}

/* An IR operator whose table row is newer than the model's default-domain opset (0: none declared). */
static int opara__op_too_new(opara__op op, int64_t opset) {
    return op != OPARA__OP_COUNT && opset > 0 && opset < opara__op_info_of(op)->since;
}

/* An IR operator whose ONNX version at the model's opset (the newest one not after it) is newer than
   the one we implement: the table's next version, which changed its meaning, is not after the opset. */
static int opara__version_changed(const opara__op_info* info, int64_t opset) {
    return info->next && opset >= info->next;
}

static int opara__op_changed(opara__op op, int64_t opset) {
    return op != OPARA__OP_COUNT && opara__version_changed(opara__op_info_of(op), opset);
}

static void opara__changed_label(const opara__op_info* info, int64_t opset, char* buf, size_t cap) {
    opara__format(buf, cap, "%s (changed in opset %d, the model's is %lld; supported up to version %d)", info->name,
                  (int)info->next, (long long)opset, (int)info->until);
}

static int opara__node_supported(const opara__onnx_node* n, int64_t opset) {
    static const char* const fold_only[] = {"Constant", "Shape", "Identity", "ConstantOfShape", "Range",
                                            "Equal", "If", "HannWindow", "HammingWindow", "BlackmanWindow",
                                            "MelWeightMatrix", "CastLike" /* imported as a Cast */};
    opara__op op = opara__op_from_name(n->op_type);
    const char* domain = strcmp(n->domain, "ai.onnx") == 0 ? "" : n->domain; /* the table's "" */
    uint32_t i, extra_outputs = 0;
    if (strcmp(domain, op != OPARA__OP_COUNT ? opara__op_info_of(op)->domain : "") != 0) return 0;
    for (i = 1; i < n->n_outputs; ++i) extra_outputs += n->outputs[i][0] != 0;
    if (op == OPARA__OP_BATCH_NORM && extra_outputs) return 0;
    if (strcmp(n->op_type, "Upsample") == 0 && strcmp(domain, "") == 0) return opset >= 7;
    if (op == OPARA__OP_BATCH_NORM && opara__oattr_int(n, "training_mode", 0)) return 0;
    if (op != OPARA__OP_COUNT) return !opara__op_too_new(op, opset) && !opara__op_changed(op, opset);
    for (i = 0; i < OPARA__ARRAY_COUNT(fold_only); ++i)
        if (strcmp(n->op_type, fold_only[i]) == 0) return 1;
    return 0;
}

static void opara__unsupported_label(const opara__onnx_node* n, int64_t opset, char* buf, size_t cap) {
    opara__op op = opara__op_from_name(n->op_type);
    const char* what = op == OPARA__OP_BATCH_NORM ? " (training mode)" : "";
    if (n->domain[0] && strcmp(n->domain, "ai.onnx") != 0) opara__format(buf, cap, "%s.%s", n->domain, n->op_type);
    else if (opara__op_too_new(op, opset))
        opara__format(buf, cap, "%s (opset %d+, the model's is %lld)", n->op_type, (int)opara__op_info_of(op)->since,
                      (long long)opset);
    else if (opara__op_changed(op, opset)) opara__changed_label(opara__op_info_of(op), opset, buf, cap);
    else opara__format(buf, cap, "%s%s", n->op_type, what);
}

/* The report of unsupported operators: each kind once (its label), with its count and the first node
   that uses it, over the main graph and every subgraph (If branches, Loop and Scan bodies), so a
   model's blockers are all named in one error. */
#define OPARA__REPORT_KINDS 32

typedef struct opara__op_kind {
    char label[128];
    char first[192];
    uint32_t count;
} opara__op_kind;

typedef struct opara__op_report {
    int64_t opset;
    uint32_t total, n_kinds, more_kinds;
    opara__op_kind kinds[OPARA__REPORT_KINDS];
} opara__op_report;

static void opara__report_node(opara__op_report* rep, const opara__onnx_node* n, const char* scope) {
    char label[128];
    uint32_t k;
    opara__op_kind* kind;
    if (opara__node_supported(n, rep->opset)) return;
    rep->total++;
    opara__unsupported_label(n, rep->opset, label, sizeof label);
    for (k = 0; k < rep->n_kinds; ++k)
        if (strcmp(rep->kinds[k].label, label) == 0) {
            rep->kinds[k].count++;
            return;
        }
    if (rep->n_kinds == OPARA__REPORT_KINDS) {
        rep->more_kinds++; /* counted by node: the message says "more" without naming them */
        return;
    }
    kind = &rep->kinds[rep->n_kinds++];
    memcpy(kind->label, label, sizeof label);
    kind->count = 1;
    opara__format(kind->first, sizeof kind->first, "node '%s'%s%s", n->name[0] ? n->name : n->n_outputs ? n->outputs[0] : "",
                  scope[0] ? " in " : "", scope);
}

/* Walks g's nodes and, depth first, the graphs in their attributes (nesting is bounded by the decoder). */
static void opara__report_graph(opara__op_report* rep, const opara__onnx_graph* g, const char* scope) {
    uint32_t i, j;
    for (i = 0; i < g->n_nodes; ++i) {
        const opara__onnx_node* n = &g->nodes[i];
        opara__report_node(rep, n, scope);
        for (j = 0; j < n->n_attrs; ++j) {
            char inner[192];
            if (!n->attrs[j].g) continue;
            opara__format(inner, sizeof inner, "%s%s%s '%s'.%s", scope, scope[0] ? " > " : "", n->op_type, n->name,
                          n->attrs[j].name);
            opara__report_graph(rep, n->attrs[j].g, inner);
        }
    }
}

/* "ai.onnx 13, com.example 1": the model's opsets, which decide what each operator means. */
static size_t opara__format_opsets(const opara__onnx_model* m, char* buf, size_t cap) {
    size_t len = 0;
    uint32_t i;
    buf[0] = 0;
    for (i = 0; i < m->n_opsets; ++i)
        len += opara__format(buf + len, cap - len, "%s%s %lld", i ? ", " : "",
                             m->opsets[i].domain[0] ? m->opsets[i].domain : "ai.onnx", (long long)m->opsets[i].version);
    return len;
}

static opara_result opara__check_ops(opara_runtime* rt, const opara__onnx_model* m) {
    char msg[OPARA__DETAIL_MAX], opsets[160];
    opara__op_report* rep = (opara__op_report*)opara__calloc(rt, 1, sizeof *rep);
    size_t len;
    uint32_t k;
    if (!rep) return opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory checking the model's operators");
    rep->opset = opara__default_opset(m);
    opara__report_graph(rep, &m->graph, "");
    if (!rep->total) {
        opara__free(rt, rep);
        return OPARA_OK;
    }
    opara__format_opsets(m, opsets, sizeof opsets);
    len = opara__format(msg, sizeof msg, "%u node%s use%s unsupported operators (opsets %s):", rep->total,
                        rep->total == 1 ? "" : "s", rep->total == 1 ? "s" : "", opsets[0] ? opsets : "none declared");
    for (k = 0; k < rep->n_kinds; ++k)
        len += opara__format(msg + len, sizeof msg - len, "%s %s x%u (first: %s)", k ? "," : "", rep->kinds[k].label,
                             rep->kinds[k].count, rep->kinds[k].first);
    if (rep->more_kinds) opara__format(msg + len, sizeof msg - len, ", and %u more nodes of other kinds", rep->more_kinds);
    opara__free(rt, rep);
    return opara__fail(rt, OPARA_ERR_UNSUPPORTED_OP, "%s", msg);
}

/* ---- graph inputs ----------------------------------------------------------------------------- */

/* Finds "name=d0,d1,..." for input name in the options and parses it into shape. 1 found, 0 not, <0 error. */
static int opara__override_shape(opara__imp* im, const char* name, opara__shape* shape) {
    uint32_t i;
    size_t len = strlen(name);
    if (!im->opt) return 0;
    for (i = 0; i < im->opt->n_input_shapes; ++i) {
        const char* spec = im->opt->input_shapes[i];
        const char* p;
        if (!spec || strncmp(spec, name, len) != 0 || spec[len] != '=') continue;
        shape->ndim = 0;
        for (p = spec + len + 1; *p;) {
            char* end = NULL;
            long long v;
            if (shape->ndim == OPARA_MAX_DIMS) goto bad;
            if (*p == 'N' || *p == '?') {
                v = OPARA__DIM_BATCH;
                end = (char*)(p + 1);
            } else {
                v = strtoll(p, &end, 10);
                if (end == p || v < 0) goto bad;
            }
            shape->dims[shape->ndim++] = v;
            p = end;
            if (*p == ',') ++p;
            else if (*p) goto bad;
        }
        return 1;
    bad:
        return opara__fail(im->rt, OPARA_ERR_INVALID_ARGS,
                           "shape override '%s': expected NAME=d0,d1,... with sizes >= 0 (N or ? for the batch)", spec);
    }
    return 0;
}

static opara_result opara__check_overrides(opara__imp* im) {
    uint32_t i;
    if (!im->opt) return OPARA_OK;
    for (i = 0; i < im->opt->n_input_shapes; ++i) {
        const char* spec = im->opt->input_shapes[i];
        const char* eq = spec ? strchr(spec, '=') : NULL;
        uint32_t k;
        int found = 0;
        if (!eq) return opara__fail(im->rt, OPARA_ERR_INVALID_ARGS, "shape override '%s': expected NAME=d0,d1,...",
                                    spec ? spec : "(null)");
        for (k = 0; k < im->model->graph.n_inputs; ++k) {
            const char* nm = im->model->graph.inputs[k].name;
            found |= strlen(nm) == (size_t)(eq - spec) && strncmp(nm, spec, (size_t)(eq - spec)) == 0;
        }
        if (!found)
            return opara__fail(im->rt, OPARA_ERR_NOT_FOUND, "shape override '%s': the model has no input '%.*s'", spec,
                               (int)(eq - spec), spec);
    }
    return OPARA_OK;
}

static opara_result opara__add_graph_input(opara__imp* im, const opara__onnx_value_info* vi) {
    opara__shape shape;
    opara_dtype dtype = opara__onnx_dtype(vi->elem_type);
    uint32_t d;
    int32_t v;
    int r;
    if (!vi->is_tensor || dtype == OPARA_DTYPE_UNDEFINED)
        return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED, "graph input '%s': only tensors of f32/f64/f16/i64/i32/i8/u8/"
                           "bool are supported (elem_type %d)", vi->name, (int)vi->elem_type);
    r = opara__override_shape(im, vi->name, &shape);
    if (r < 0) return (opara_result)r;
    if (!r) {
        if (!vi->has_shape)
            return opara__fail(im->rt, OPARA_ERR_SHAPE, "graph input '%s' has no shape: give one with a shape override "
                               "(\"%s=d0,d1,...\"; the CLI's --shape)", vi->name, vi->name);
        if (vi->n_dims > OPARA_MAX_DIMS)
            return opara__fail(im->rt, OPARA_ERR_LIMIT_EXCEEDED, "graph input '%s' has rank %u (max %d)", vi->name,
                               vi->n_dims, OPARA_MAX_DIMS);
        shape.ndim = (int32_t)vi->n_dims;
        for (d = 0; d < vi->n_dims; ++d) {
            const opara__onnx_dim* dim = &vi->dims[d];
            if (dim->has_value && dim->value >= 0) shape.dims[d] = dim->value;
            else if (d == 0) shape.dims[d] = OPARA__DIM_BATCH;
            else if (im->opt && im->opt->default_dim > 0) shape.dims[d] = im->opt->default_dim;
            else
                return opara__fail(im->rt, OPARA_ERR_SHAPE,
                                   "graph input '%s' dim %u ('%s') is symbolic: give its size with a shape override "
                                   "(\"%s=d0,d1,...\"; the CLI's --shape) or options.default_dim (--default-dim N)",
                                   vi->name, d, dim->param ? dim->param : "?", vi->name);
        }
    }
    r = opara__graph_insert_value(im->g, vi->name, dtype, &shape, &v);
    if (r != OPARA_OK) return opara__onnx_insert_result((opara_result)r);
    r = opara__graph_add_input(im->g, v);
    if (r == OPARA_OK && dtype == OPARA_DTYPE_F16) r = opara__widen_f16(im, v);
    return (opara_result)r;
}

/* g's initializers as constants (the main graph's, or a folded If branch's). */
static opara_result opara__add_graph_constants(opara__imp* im, const opara__onnx_graph* g) {
    uint32_t i;
    for (i = 0; i < g->n_initializers; ++i) {
        opara__tensor_data t;
        char where[192];
        opara_result r;
        opara__format(where, sizeof where, "graph.initializer[%u] '%s'", i, g->initializers[i].name);
        r = opara__onnx_tensor_load(im->rt, &g->initializers[i], im->base_dir, where, &t);
        if (r == OPARA_OK) {
            r = opara__imp_const(im, g->initializers[i].name, t.dtype, &t.shape, t.data, NULL, 1);
            opara__tensor_data_free(im->rt, &t);
        }
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

static opara_result opara__add_initializers(opara__imp* im) {
    const opara__onnx_graph* g = &im->model->graph;
    uint32_t i;
    opara_result r0 = opara__add_graph_constants(im, g);
    if (r0 != OPARA_OK) return r0;
    for (i = 0; i < g->n_inputs; ++i) {
        opara_result r;
        uint32_t k;
        const opara__tensor_data* frozen = NULL;
        if (opara__graph_find_value(im->g, g->inputs[i].name) >= 0) continue; /* IR < 4: an initializer */
        for (k = 0; im->extra && k < im->extra->n_frozen; ++k)
            if (strcmp(im->extra->frozen[k].name, g->inputs[i].name) == 0) frozen = &im->extra->frozen[k];
        if (frozen) r = opara__imp_const(im, g->inputs[i].name, frozen->dtype, &frozen->shape, frozen->data, NULL, 1);
        else r = opara__add_graph_input(im, &g->inputs[i]);
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

/* ---- nodes in dependency order ---------------------------------------------------------------- */

static int opara__node_ready(opara__imp* im, const opara__onnx_node* n, const char** missing) {
    uint32_t i;
    for (i = 0; i < n->n_inputs; ++i)
        if (n->inputs[i][0] && opara__imp_find(im, n->inputs[i]) < 0) {
            *missing = n->inputs[i];
            return 0;
        }
    return 1;
}

static opara_result opara__stuck(opara__imp* im, const opara__onnx_graph* g, const uint8_t* done) {
    uint32_t i, j, k;
    for (i = 0; i < g->n_nodes; ++i) {
        const char* missing = NULL;
        if (done[i] || opara__node_ready(im, &g->nodes[i], &missing)) continue;
        for (j = 0; j < g->n_nodes; ++j)
            for (k = 0; !done[j] && k < g->nodes[j].n_outputs; ++k)
                if (strcmp(g->nodes[j].outputs[k], missing) == 0)
                    return opara__fail(im->rt, OPARA_ERR_CYCLE, "node '%s' (%s): input '%s' lies on a cycle",
                                       g->nodes[i].name, g->nodes[i].op_type, missing);
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID,
                           "node '%s' (%s): input '%s' is not produced by any node, initializer or graph input",
                           g->nodes[i].name, g->nodes[i].op_type, missing);
    }
    return OPARA_ERR_INTERNAL;
}

/* Imports g's nodes (the main graph's, or a folded If branch's, whose nodes also read the outer
   scope's tensors by name) in dependency order. */
static opara_result opara__import_nodes(opara__imp* im, const opara__onnx_graph* g) {
    uint32_t i, max_in = 1, left = g->n_nodes, first = 0;
    uint8_t* done = (uint8_t*)opara__calloc(im->rt, g->n_nodes + 1, 1);
    int32_t* in;
    opara_result r = OPARA_OK;
    for (i = 0; i < g->n_nodes; ++i) max_in = OPARA__MAX(max_in, g->nodes[i].n_inputs);
    in = (int32_t*)opara__calloc(im->rt, max_in, sizeof(int32_t));
    if (!done || !in) r = opara__fail(im->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory importing nodes");
    while (r == OPARA_OK && left) {
        uint32_t progress = 0;
        for (i = first; i < g->n_nodes && r == OPARA_OK; ++i) {
            const char* missing;
            if (done[i] || !opara__node_ready(im, &g->nodes[i], &missing)) continue;
            r = opara__import_node(im, &g->nodes[i], in);
            done[i] = 1;
            left--;
            progress++;
        }
        while (first < g->n_nodes && done[first]) first++;
        if (r == OPARA_OK && left && !progress) r = opara__stuck(im, g, done);
    }
    opara__free(im->rt, done);
    opara__free(im->rt, in);
    return r;
}

/* If whose condition is known at import (a constant, or folded from constants and shapes) is
   replaced by the branch it takes: the branch's constants and nodes join the graph, and the If's
   outputs become names of the branch's outputs. The other branch is never imported. A condition
   computed at run time is refused (run-time control flow is not supported). */
static opara_result opara__import_if(opara__imp* im, const int32_t* in) {
    const opara__onnx_node* n = im->node;
    const char* name = im->node_name;
    const opara__onnx_attr* branch_attr;
    const opara__onnx_graph* branch;
    opara__cv cond;
    uint32_t k;
    opara_result r;
    if (n->n_inputs < 1 || in[0] < 0)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (If): no condition input", name);
    if (!opara__is_const(im, in[0]))
        return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP, "node '%s' (If): its condition '%s' is computed at run time; "
                           "If is supported only when the condition is known at import (a constant, or computed from "
                           "constants and shapes)", name, n->inputs[0]);
    opara__cv_of(im, in[0], &cond);
    if (cond.count != 1)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (If): the condition has %llu elements (1 expected)",
                           name, (unsigned long long)cond.count);
    branch_attr = opara__oattr(n, opara__get_i64(cond.dtype, cond.data, 0) ? "then_branch" : "else_branch");
    branch = branch_attr ? branch_attr->g : NULL;
    if (!branch)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (If): the %s is missing", name,
                           opara__get_i64(cond.dtype, cond.data, 0) ? "then_branch" : "else_branch");
    if (branch->n_outputs != n->n_outputs)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (If): the %s has %u outputs, the node %u", name,
                           branch_attr->name, branch->n_outputs, n->n_outputs);
    r = opara__add_graph_constants(im, branch);
    if (r == OPARA_OK) r = opara__import_nodes(im, branch);
    for (k = 0; r == OPARA_OK && k < n->n_outputs; ++k) {
        int32_t src = opara__imp_find(im, branch->outputs[k].name);
        if (!n->outputs[k][0]) continue;
        if (src < 0)
            return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (If): %s output '%s' is not produced", name,
                               branch_attr->name, branch->outputs[k].name);
        im->node = n; /* for the alias's messages: the branch's nodes were imported in between */
        im->node_name = name;
        r = opara__alias_value(im, n->outputs[k], src);
    }
    return r;
}

/* A graph output that Identity/Dropout made an alias of a graph input, a constant or another
   output cannot take over that tensor's name: it becomes a copy (Cast to its own type). */
static opara_result opara__materialize_alias(opara__imp* im, int32_t alias, int32_t src) {
    int32_t node;
    opara_result r;
    im->side[alias].alias = -1;
    im->g->values[alias].dtype = im->g->values[src].dtype;
    r = opara__graph_insert_node(im->g, OPARA__OP_CAST, im->g->values[alias].name, 1, &src, 1, &alias, &node);
    if (r != OPARA_OK) return opara__onnx_insert_result(r);
    if (opara__node_set_int(im->g, node, "to", (int64_t)im->g->values[src].dtype) != OPARA_OK) return opara__imp_oom(im);
    return opara__infer_node(im, node);
}

static opara_result opara__add_outputs(opara__imp* im) {
    const opara__onnx_graph* g = &im->model->graph;
    uint32_t i;
    for (i = 0; i < g->n_outputs; ++i) {
        const char* name = g->outputs[i].name;
        int32_t direct = opara__graph_find_value(im->g, name), v = opara__imp_find(im, name);
        opara_result r;
        if (v < 0)
            return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "graph output '%s' is not produced by any node", name);
        if (opara__zeros_input(im, v))
            return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP, "node '%s' (ConstantOfShape): only supported when it can be "
                               "evaluated at import time (constant inputs), or as the zero initial state of an RNN (graph "
                               "output '%s' reads it)", opara__zeros_input(im, v), name);
        if (!opara__side(im, v)) return opara__imp_oom(im);
        if (opara__onnx_dtype(g->outputs[i].elem_type) == OPARA_DTYPE_F16 &&
            (r = opara__narrow_output(im, name, &v, &direct)) != OPARA_OK)
            return r;
        if (direct != v) {
            opara__imp_side* side = opara__side(im, v);
            if (!side) return opara__imp_oom(im);
            if (im->g->values[v].kind == OPARA__VALUE_ACTIVATION && !im->g->values[v].is_output && !side->rename) {
                side->rename = im->g->values[direct].name; /* keeps its name through Identity */
            } else {
                r = opara__materialize_alias(im, direct, v);
                if (r != OPARA_OK) return r;
                v = direct;
            }
        }
        r = opara__graph_add_output(im->g, v);
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

/* ---- rebuild: live nodes in topological order, only the values they use ------------------------- */

typedef struct opara__rebuild {
    opara__imp* im;
    const opara__graph* src;
    opara__graph* dst;
    int32_t* map; /* src value -> dst value, -1 */
    opara_result result; /* why opara__rebuild_value last failed */
} opara__rebuild;

/* Why opara__rebuild_value failed: its insertion's code (out of memory), else ours (a bug). */
static opara_result opara__rebuild_failure(const opara__rebuild* rb) {
    if (rb->result == OPARA_ERR_OUT_OF_MEMORY) return rb->result;
    return opara__fail(rb->im->rt, OPARA_ERR_INTERNAL, "rebuilding the graph failed");
}

static int32_t opara__rebuild_value(opara__rebuild* rb, int32_t v) {
    const opara__value* val;
    const char* name;
    int32_t nv;
    opara_result r;
    if (v < 0) return -1;
    if (rb->map[v] >= 0) return rb->map[v];
    val = &rb->src->values[v];
    name = (size_t)v < rb->im->side_cap && rb->im->side[v].rename ? rb->im->side[v].rename : val->name;
    r = opara__graph_insert_value(rb->dst, name, val->dtype, val->kind == OPARA__VALUE_ACTIVATION ? NULL : &val->shape,
                                  &nv);
    if (r == OPARA_OK && val->kind == OPARA__VALUE_CONST)
        r = opara__graph_set_const(rb->dst, nv, val->data, val->nbytes, 1);
    if (r != OPARA_OK) {
        rb->result = r;
        return -2;
    }
    rb->map[v] = nv;
    return nv;
}

static opara_result opara__rebuild_attrs(opara__rebuild* rb, const opara__node* n, int32_t node) {
    uint32_t i;
    opara_result r = OPARA_OK;
    for (i = 0; i < n->n_attrs && r == OPARA_OK; ++i) {
        const opara__attr* a = &n->attrs[i];
        switch (a->type) {
        case OPARA__ATTR_INT: r = opara__node_set_int(rb->dst, node, a->name, a->v.i); break;
        case OPARA__ATTR_FLOAT: r = opara__node_set_float(rb->dst, node, a->name, a->v.f); break;
        case OPARA__ATTR_INTS: r = opara__node_set_ints(rb->dst, node, a->name, a->v.ints, a->count); break;
        case OPARA__ATTR_FLOATS: r = opara__node_set_floats(rb->dst, node, a->name, a->v.floats, a->count); break;
        case OPARA__ATTR_STRING: r = opara__node_set_string(rb->dst, node, a->name, a->v.s); break;
        }
    }
    return r;
}

/* Marks the nodes that some graph output needs (walking the topological order backwards). */
static uint8_t* opara__live_nodes(opara__imp* im, const opara__graph* g, const uint8_t* dead) {
    uint8_t* live = (uint8_t*)opara__calloc(im->rt, (size_t)g->n_nodes + 1, 1);
    uint8_t* needed = (uint8_t*)opara__calloc(im->rt, (size_t)g->n_values + 1, 1);
    uint32_t i, k;
    if (live && needed) {
        for (i = 0; i < g->n_outputs; ++i) needed[g->outputs[i]] = 1;
        for (i = g->n_nodes; i-- > 0;) {
            uint32_t n = g->topo[i];
            const opara__node* node = &g->nodes[n];
            if (dead && dead[n]) continue;
            for (k = 0; k < node->n_outputs && !live[n]; ++k) live[n] = needed[node->outputs[k]];
            for (k = 0; live[n] && k < node->n_inputs; ++k)
                if (node->inputs[k] >= 0) needed[node->inputs[k]] = 1;
        }
    }
    opara__free(im->rt, needed);
    if (!needed) {
        opara__free(im->rt, live);
        return NULL;
    }
    return live;
}

static opara_result opara__rebuild_into(opara__imp* im, const uint8_t* dead, opara__graph* dst) {
    opara__rebuild rb;
    const opara__graph* src = im->g;
    uint8_t* live;
    uint32_t i, k;
    opara_result r = opara__graph_finalize(im->g);
    if (r != OPARA_OK) return r;
    rb.im = im;
    rb.src = src;
    rb.dst = dst;
    rb.result = OPARA_OK;
    rb.map = (int32_t*)opara__calloc(im->rt, (size_t)src->n_values + 1, sizeof(int32_t));
    live = opara__live_nodes(im, src, dead);
    if (!rb.map || !live) r = opara__fail(im->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory rebuilding the graph");
    for (i = 0; rb.map && i < src->n_values; ++i) rb.map[i] = -1;
    dst->producer_name = src->producer_name ? opara__pool_strdup(im->rt, &dst->pool, src->producer_name) : NULL;
    dst->source_opset = src->source_opset;
    for (i = 0; r == OPARA_OK && i < src->n_inputs; ++i) {
        int32_t v = opara__rebuild_value(&rb, src->inputs[i]);
        r = v < 0 ? opara__rebuild_failure(&rb) : opara__graph_add_input(dst, v);
    }
    for (i = 0; r == OPARA_OK && i < src->n_nodes; ++i) {
        const opara__node* n = &src->nodes[src->topo[i]];
        int32_t ins[64], outs[16], node;
        if (!live[src->topo[i]]) continue;
        if (n->n_inputs > 64 || n->n_outputs > 16) {
            r = opara__fail(im->rt, OPARA_ERR_LIMIT_EXCEEDED, "node '%s': more than 64 inputs", n->name);
            break;
        }
        for (k = 0; k < n->n_inputs; ++k)
            if ((ins[k] = opara__rebuild_value(&rb, n->inputs[k])) < -1) r = opara__rebuild_failure(&rb);
        for (k = 0; k < n->n_outputs; ++k)
            if ((outs[k] = opara__rebuild_value(&rb, n->outputs[k])) < 0) r = opara__rebuild_failure(&rb);
        if (r != OPARA_OK) break;
        r = opara__graph_insert_node(dst, n->op, n->name, n->n_inputs, ins, n->n_outputs, outs, &node);
        if (r == OPARA_OK) r = opara__rebuild_attrs(&rb, n, node);
    }
    for (i = 0; r == OPARA_OK && i < src->n_outputs; ++i) {
        int32_t v = opara__rebuild_value(&rb, src->outputs[i]);
        r = v < 0 ? opara__rebuild_failure(&rb) : opara__graph_add_output(dst, v);
    }
    if (r == OPARA_OK) r = opara__graph_finalize(dst);
    else if (!im->rt->error.text[0]) r = opara__fail(im->rt, r, "rebuilding the graph failed");
    opara__free(im->rt, rb.map);
    opara__free(im->rt, live);
    return r;
}

/* ---- fusions ---------------------------------------------------------------------------------- */

/* The single consumer of value v that is not a graph output, or -1. */
static int32_t opara__sole_consumer(const opara__graph* g, int32_t v) {
    if (g->values[v].is_output || g->consumer_start[v + 1] - g->consumer_start[v] != 1) return -1;
    return (int32_t)g->consumer_nodes[g->consumer_start[v]];
}

static int opara__const_f32(const opara__graph* g, int32_t v, uint64_t count) {
    return v >= 0 && g->values[v].kind == OPARA__VALUE_CONST && g->values[v].dtype == OPARA_DTYPE_F32 &&
           g->values[v].nbytes == count * 4;
}

static int32_t opara__add_folded_const(opara__imp* im, const char* base, const char* suffix, const opara__shape* shape,
                                       const float* data) {
    char name[256];
    int32_t v;
    int k;
    for (k = 0; k < 1000; ++k) {
        if (k) opara__format(name, sizeof name, "%s%s_%d", base, suffix, k);
        else opara__format(name, sizeof name, "%s%s", base, suffix);
        if (opara__graph_find_value(im->g, name) < 0) break;
    }
    v = opara__graph_add_value(im->g, name, OPARA_DTYPE_F32, shape);
    if (v < 0 || opara__graph_set_const(im->g, v, data, opara__shape_count(shape) * 4, 1) != OPARA_OK) return -1;
    return v;
}

static float opara__f32_at(const opara__value* v, uint64_t i) {
    float f;
    memcpy(&f, (const uint8_t*)v->data + i * 4, 4);
    return f;
}

/* Conv(X, W, B) -> BatchNormalization(scale, bias, mean, var): W' = W*s, B' = (B - mean)*s + bias,
   s = scale / sqrt(var + eps), per output channel. */
static opara_result opara__fold_bn(opara__imp* im, uint32_t bn, uint8_t* dead) {
    opara__graph* g = im->g;
    opara__node* b = &g->nodes[bn];
    int32_t y = b->inputs[0], conv, wv, bv, nw, nb;
    opara__node* c;
    opara__shape wshape, bshape;
    uint64_t ch, per, o, i;
    float *w, *bias;
    double eps = opara__attr_float(b, "epsilon", 1e-5f);
    int32_t* ins;
    if (b->n_inputs != 5 || y < 0 || (conv = g->values[y].producer) < 0 || dead[conv]) return OPARA_OK;
    c = &g->nodes[conv];
    if (c->op != OPARA__OP_CONV || opara__sole_consumer(g, y) != (int32_t)bn || c->n_inputs < 2) return OPARA_OK;
    wv = c->inputs[1];
    bv = c->n_inputs > 2 ? c->inputs[2] : -1;
    if (wv < 0 || g->values[wv].kind != OPARA__VALUE_CONST || g->values[wv].shape.ndim < 1) return OPARA_OK;
    wshape = g->values[wv].shape;
    ch = (uint64_t)wshape.dims[0];
    if (!ch || !opara__const_f32(g, wv, opara__shape_count(&wshape)) || (bv >= 0 && !opara__const_f32(g, bv, ch)))
        return OPARA_OK;
    for (i = 1; i < 5; ++i)
        if (!opara__const_f32(g, b->inputs[i], ch)) return OPARA_OK;
    per = opara__shape_count(&wshape) / ch;
    w = (float*)opara__alloc(im->rt, (size_t)(ch * per * 4 + 4));
    bias = (float*)opara__alloc(im->rt, (size_t)(ch * 4 + 4));
    if (!w || !bias) {
        opara__free(im->rt, w);
        opara__free(im->rt, bias);
        return opara__fail(im->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory folding BatchNormalization");
    }
    for (o = 0; o < ch; ++o) {
        double s = opara__f32_at(&g->values[b->inputs[1]], o) / sqrt((double)opara__f32_at(&g->values[b->inputs[4]], o) + eps);
        double b0 = bv >= 0 ? opara__f32_at(&g->values[bv], o) : 0.0;
        for (i = 0; i < per; ++i) w[o * per + i] = (float)(opara__f32_at(&g->values[wv], o * per + i) * s);
        bias[o] = (float)((b0 - opara__f32_at(&g->values[b->inputs[3]], o)) * s + opara__f32_at(&g->values[b->inputs[2]], o));
    }
    bshape.ndim = 1;
    bshape.dims[0] = (int64_t)ch;
    nw = opara__add_folded_const(im, g->values[wv].name, "_bnfold", &wshape, w);
    nb = opara__add_folded_const(im, g->values[wv].name, "_bnfold_bias", &bshape, bias);
    opara__free(im->rt, w);
    opara__free(im->rt, bias);
    if (nw < 0 || nb < 0) return OPARA_ERR_OUT_OF_MEMORY;
    c = &g->nodes[conv];
    b = &g->nodes[bn];
    ins = (int32_t*)opara__pool_alloc(im->rt, &g->pool, 3 * sizeof(int32_t), 4);
    if (!ins) return opara__imp_oom(im);
    ins[0] = c->inputs[0];
    ins[1] = nw;
    ins[2] = nb;
    c->inputs = ins;
    c->n_inputs = 3;
    c->outputs[0] = b->outputs[0];
    g->values[b->outputs[0]].producer = conv;
    dead[bn] = 1;
    return OPARA_OK;
}

static opara_result opara__fuse_relu(opara__imp* im, uint32_t relu, uint8_t* dead) {
    opara__graph* g = im->g;
    opara__node* r = &g->nodes[relu];
    int32_t y = r->n_inputs ? r->inputs[0] : -1, p;
    opara__node* prod;
    if (y < 0 || (p = g->values[y].producer) < 0 || dead[p]) return OPARA_OK;
    prod = &g->nodes[p];
    if ((prod->op != OPARA__OP_CONV && prod->op != OPARA__OP_GEMM) || opara__node_attr(prod, "activation") ||
        prod->n_outputs != 1 || opara__sole_consumer(g, y) != (int32_t)relu)
        return OPARA_OK;
    if (opara__node_set_string(g, p, "activation", "Relu") != OPARA_OK) return OPARA_ERR_OUT_OF_MEMORY;
    prod = &g->nodes[p];
    prod->outputs[0] = r->outputs[0];
    g->values[r->outputs[0]].producer = p;
    dead[relu] = 1;
    return OPARA_OK;
}

/* The "activation" attribute that stands for activation node a fused into a binary operator: Relu,
   Gelu with approximate "none" or "tanh"; NULL for any other node. */
static const char* opara__binary_act_name(const opara__node* a) {
    const char* approx;
    if (a->op == OPARA__OP_RELU) return "Relu";
    if (a->op != OPARA__OP_GELU) return NULL;
    approx = opara__attr_string(a, "approximate", "none");
    return strcmp(approx, "none") == 0 ? "Gelu" : strcmp(approx, "tanh") == 0 ? "GeluTanh" : NULL;
}

/* How many live nodes read each value (the graph's consumer lists predate the GELU fusion, which
   rewires inputs). */
static uint32_t* opara__live_reads(opara__imp* im, const uint8_t* dead) {
    const opara__graph* g = im->g;
    uint32_t* reads = (uint32_t*)opara__calloc(im->rt, (size_t)g->n_values + 1, sizeof(uint32_t));
    uint32_t i, k;
    if (!reads) return NULL;
    for (i = 0; i < g->n_nodes; ++i)
        for (k = 0; !dead[i] && k < g->nodes[i].n_inputs; ++k)
            if (g->nodes[i].inputs[k] >= 0) ++reads[g->nodes[i].inputs[k]];
    return reads;
}

/* Activation node a (Relu, Gelu) whose input is the sole read of an f32 Add, Sub, Mul or Div's
   output that is no graph output: the binary node takes it over (attribute "activation") and
   produces a's output; a dies. */
static opara_result opara__fuse_binary_act(opara__imp* im, uint32_t a, const uint32_t* reads, uint8_t* dead) {
    opara__graph* g = im->g;
    const char* name = opara__binary_act_name(&g->nodes[a]);
    int32_t y = g->nodes[a].n_inputs ? g->nodes[a].inputs[0] : -1, p;
    opara__node* prod;
    if (!name || dead[a] || y < 0 || (p = g->values[y].producer) < 0 || dead[p] || g->values[y].is_output ||
        reads[y] != 1 || g->values[y].dtype != OPARA_DTYPE_F32)
        return OPARA_OK;
    prod = &g->nodes[p];
    if ((prod->op != OPARA__OP_ADD && prod->op != OPARA__OP_SUB && prod->op != OPARA__OP_MUL && prod->op != OPARA__OP_DIV) ||
        opara__node_attr(prod, "activation") || prod->n_outputs != 1)
        return OPARA_OK;
    if (opara__node_set_string(g, p, "activation", name) != OPARA_OK) return opara__imp_oom(im);
    prod = &g->nodes[p];
    prod->outputs[0] = g->nodes[a].outputs[0];
    g->values[prod->outputs[0]].producer = p;
    dead[a] = 1;
    return OPARA_OK;
}

/* After the GELU fusion (whose Gelu nodes it may take): every Relu or Gelu after a binary operator. */
static opara_result opara__fuse_binary_acts(opara__imp* im, uint8_t* dead) {
    opara__graph* g = im->g;
    uint32_t* reads = opara__live_reads(im, dead);
    uint32_t i;
    opara_result r = OPARA_OK;
    if (!reads) return opara__imp_oom(im);
    for (i = 0; r == OPARA_OK && i < g->n_nodes; ++i) r = opara__fuse_binary_act(im, g->topo[i], reads, dead);
    opara__free(im->rt, reads);
    return r;
}

/* The spatial pads of a Pad that an unpadded AveragePool after it can take over: constant 0, no
   padding of N and C, each pad smaller than the window; 0 when it cannot. */
static int opara__pad_for_pool(const opara__node* pad, const opara__node* pool, int64_t* pads, uint32_t* n_pads) {
    uint32_t np = 0, nk = 0, n_pool_pads = 0, n_dil = 0, i, rank;
    const int64_t* p = opara__attr_ints(pad, "pads", &np);
    const int64_t* kernel = opara__attr_ints(pool, "kernel_shape", &nk);
    const int64_t* pool_pads = opara__attr_ints(pool, "pads", &n_pool_pads);
    const int64_t* dil = opara__attr_ints(pool, "dilations", &n_dil);
    rank = nk + 2;
    if (!p || !kernel || nk == 0 || nk > 3 || np != 2 * rank || opara__attr_float(pad, "value", 0.0f) != 0.0f ||
        strcmp(opara__attr_string(pad, "mode", "constant"), "constant") != 0 ||
        opara__node_auto_pad(pool) != OPARA__AUTO_PAD_NOTSET || opara__attr_int(pool, "ceil_mode", 0))
        return 0;
    for (i = 0; i < n_pool_pads; ++i)
        if (pool_pads[i]) return 0;
    for (i = 0; i < n_dil; ++i)
        if (dil[i] != 1) return 0;
    if (p[0] || p[1] || p[rank] || p[rank + 1]) return 0;
    for (i = 0; i < nk; ++i) {
        int64_t b = p[2 + i], e = p[2 + i + rank];
        if (b < 0 || e < 0 || b >= kernel[i] || e >= kernel[i]) return 0;
        pads[i] = b;
        pads[i + nk] = e;
    }
    *n_pads = 2 * nk;
    return 1;
}

/* Pad(0) -> AveragePool (how exporters write count_include_pad pooling) becomes one AveragePool
   with the pads and count_include_pad = 1: every window lies inside the padded extent and divides
   by the whole kernel, as it did over the padded tensor. */
static opara_result opara__fuse_pad_pool(opara__imp* im, uint32_t pool, uint8_t* dead) {
    opara__graph* g = im->g;
    int32_t x = g->nodes[pool].n_inputs ? g->nodes[pool].inputs[0] : -1, p;
    int64_t pads[6];
    uint32_t n_pads = 0;
    opara_result r;
    if (x < 0 || (p = g->values[x].producer) < 0 || dead[p] || g->nodes[p].op != OPARA__OP_PAD ||
        g->nodes[p].n_inputs < 1 || g->nodes[p].inputs[0] < 0 || opara__sole_consumer(g, x) != (int32_t)pool ||
        !opara__pad_for_pool(&g->nodes[p], &g->nodes[pool], pads, &n_pads))
        return OPARA_OK;
    r = opara__node_set_ints(g, (int32_t)pool, "pads", pads, n_pads);
    if (r == OPARA_OK) r = opara__node_set_int(g, (int32_t)pool, "count_include_pad", 1);
    if (r != OPARA_OK) return OPARA_ERR_OUT_OF_MEMORY;
    g->nodes[pool].inputs[0] = g->nodes[p].inputs[0];
    dead[p] = 1;
    return OPARA_OK;
}

/* ---- GELU: the element-wise chains exporters write for it become one Gelu node ------------------ */

/* A GELU chain's nodes, which die when it fuses, and the node that becomes the Gelu. */
typedef struct opara__gelu_match {
    uint32_t nodes[10];
    uint32_t n;
    int32_t x;
} opara__gelu_match;

/* Value c is an f32 scalar constant (rank 0, or rank 1 when x has rank >= 1, so that broadcasting
   it changes no shape) within a relative 1e-6 of want. */
static int opara__gelu_const(opara__imp* im, int32_t c, int32_t x, double want) {
    const opara__graph* g = im->g;
    if (!opara__const_f32(g, c, 1) || g->values[c].shape.ndim > 1) return 0;
    if (g->values[c].shape.ndim == 1 && (x < 0 || opara__imp_shape(im, x)->ndim < 1)) return 0;
    return fabs(opara__f32_at(&g->values[c], 0) - want) <= 1e-6 * want;
}

/* The node of op that produces v and whose output only the node `user` reads (not a graph output),
   or -1. */
static int32_t opara__gelu_producer(const opara__graph* g, int32_t v, opara__op op, uint32_t user, const uint8_t* dead) {
    int32_t p = v >= 0 ? g->values[v].producer : -1;
    if (p < 0 || dead[p] || g->nodes[p].op != op || g->nodes[p].n_inputs != 2 || g->nodes[p].n_outputs != 1 ||
        opara__sole_consumer(g, v) != (int32_t)user)
        return -1;
    return p;
}

/* The sole reader of node n's output when it is a 2-input node of op (not dead), or -1. */
static int32_t opara__gelu_next(const opara__graph* g, uint32_t n, opara__op op, const uint8_t* dead) {
    int32_t c = g->nodes[n].n_outputs == 1 ? opara__sole_consumer(g, g->nodes[n].outputs[0]) : -1;
    if (c < 0 || dead[c] || g->nodes[c].op != op || g->nodes[c].n_inputs != 2 || g->nodes[c].n_outputs != 1) return -1;
    return c;
}

/* The input of the 2-input node n that is not v (v itself for n(v, v)), or -1 when v is no input. */
static int32_t opara__other_input(const opara__node* n, int32_t v) {
    if (n->inputs[0] == v) return n->inputs[1];
    return n->inputs[1] == v ? n->inputs[0] : -1;
}

/* The input of the 2-input node n beside an f32 scalar constant within 1e-6 of want, or -1. */
static int32_t opara__gelu_scaled(opara__imp* im, int32_t n, double want) {
    const opara__node* nd = &im->g->nodes[n];
    int k;
    for (k = 0; k < 2; ++k)
        if (opara__gelu_const(im, nd->inputs[k], nd->inputs[1 - k], want)) return nd->inputs[1 - k];
    return -1;
}

static void opara__gelu_add(opara__gelu_match* m, int32_t node) { m->nodes[m->n++] = (uint32_t)node; }

/* After Erf/Tanh node t: Add(., 1) then 0.5 * x * (.) as Mul(Mul(x, .), 0.5), Mul(Mul(., 0.5), x) or
   Mul(Mul(x, 0.5), .), operands in either order. The last node in m; 0 when the chain differs. */
static int opara__gelu_tail(opara__imp* im, uint32_t t, const uint8_t* dead, opara__gelu_match* m) {
    const opara__graph* g = im->g;
    int32_t add = opara__gelu_next(g, t, OPARA__OP_ADD, dead), m1, m2, o1, o2, h;
    if (add < 0 || !opara__gelu_const(im, opara__other_input(&g->nodes[add], g->nodes[t].outputs[0]), m->x, 1.0) ||
        (m1 = opara__gelu_next(g, (uint32_t)add, OPARA__OP_MUL, dead)) < 0)
        return 0;
    opara__gelu_add(m, add);
    o1 = opara__other_input(&g->nodes[m1], g->nodes[add].outputs[0]);
    if (o1 == m->x || opara__gelu_const(im, o1, m->x, 0.5)) {
        if ((m2 = opara__gelu_next(g, (uint32_t)m1, OPARA__OP_MUL, dead)) < 0) return 0;
        o2 = opara__other_input(&g->nodes[m2], g->nodes[m1].outputs[0]);
        if (o1 == m->x ? !opara__gelu_const(im, o2, m->x, 0.5) : o2 != m->x) return 0;
        opara__gelu_add(m, m1);
        opara__gelu_add(m, m2);
        return 1;
    }
    if ((h = opara__gelu_producer(g, o1, OPARA__OP_MUL, (uint32_t)m1, dead)) < 0 || opara__gelu_scaled(im, h, 0.5) != m->x)
        return 0;
    opara__gelu_add(m, h);
    opara__gelu_add(m, m1);
    return 1;
}

/* Before Erf node e: Div(x, sqrt 2) or Mul(x, 1/sqrt 2), x in m. */
static int opara__gelu_erf_head(opara__imp* im, uint32_t e, const uint8_t* dead, opara__gelu_match* m) {
    const opara__graph* g = im->g;
    int32_t in = g->nodes[e].n_inputs == 1 ? g->nodes[e].inputs[0] : -1, d;
    if ((d = opara__gelu_producer(g, in, OPARA__OP_DIV, e, dead)) >= 0) {
        m->x = g->nodes[d].inputs[0];
        if (!opara__gelu_const(im, g->nodes[d].inputs[1], m->x, 1.4142135623730951)) return 0;
    } else if ((d = opara__gelu_producer(g, in, OPARA__OP_MUL, e, dead)) < 0 ||
               (m->x = opara__gelu_scaled(im, d, 0.7071067811865476)) < 0)
        return 0;
    opara__gelu_add(m, d);
    return 1;
}

/* x cubed: Pow(x, 3) or Mul(x, Mul(x, x)) in either order, its nodes into m. */
static int opara__gelu_cube(opara__imp* im, int32_t w, uint32_t user, const uint8_t* dead, opara__gelu_match* m) {
    const opara__graph* g = im->g;
    int32_t p = opara__gelu_producer(g, w, OPARA__OP_POW, user, dead), sq, o;
    if (p >= 0) {
        if (g->nodes[p].inputs[0] != m->x || !opara__gelu_const(im, g->nodes[p].inputs[1], m->x, 3.0)) return 0;
        opara__gelu_add(m, p);
        return 1;
    }
    if ((p = opara__gelu_producer(g, w, OPARA__OP_MUL, user, dead)) < 0 || (o = opara__other_input(&g->nodes[p], m->x)) < 0 ||
        o == m->x)
        return 0;
    if ((sq = opara__gelu_producer(g, o, OPARA__OP_MUL, (uint32_t)p, dead)) < 0 || g->nodes[sq].inputs[0] != m->x ||
        g->nodes[sq].inputs[1] != m->x)
        return 0;
    opara__gelu_add(m, sq);
    opara__gelu_add(m, p);
    return 1;
}

/* Before Tanh node t: Mul(sqrt(2/pi), Add(x, Mul(0.044715, x^3))), operands in either order. */
static int opara__gelu_tanh_head(opara__imp* im, uint32_t t, const uint8_t* dead, opara__gelu_match* m) {
    const opara__graph* g = im->g;
    int32_t in = g->nodes[t].n_inputs == 1 ? g->nodes[t].inputs[0] : -1, s, a, c, j;
    if ((s = opara__gelu_producer(g, in, OPARA__OP_MUL, t, dead)) < 0 ||
        (a = opara__gelu_producer(g, opara__gelu_scaled(im, s, 0.7978845608028654), OPARA__OP_ADD, (uint32_t)s, dead)) < 0)
        return 0;
    for (j = 0; j < 2; ++j) {
        m->x = g->nodes[a].inputs[j];
        m->n = 0;
        if ((c = opara__gelu_producer(g, g->nodes[a].inputs[1 - j], OPARA__OP_MUL, (uint32_t)a, dead)) >= 0 &&
            opara__gelu_cube(im, opara__gelu_scaled(im, c, 0.044715), (uint32_t)c, dead, m)) {
            opara__gelu_add(m, c);
            opara__gelu_add(m, a);
            opara__gelu_add(m, s);
            return 1;
        }
    }
    return 0;
}

/* Erf or Tanh node t with its GELU chain around it (every intermediate read once and no graph
   output; the constants within 1e-6): the chain's last node becomes Gelu(x), the others die. */
static opara_result opara__fuse_gelu(opara__imp* im, uint32_t t, uint8_t* dead) {
    opara__graph* g = im->g;
    int tanh_form = g->nodes[t].op == OPARA__OP_TANH;
    opara__gelu_match m;
    uint32_t last, k;
    int32_t* ins;
    memset(&m, 0, sizeof m);
    if (dead[t] || g->nodes[t].n_outputs != 1 ||
        !(tanh_form ? opara__gelu_tanh_head(im, t, dead, &m) : opara__gelu_erf_head(im, t, dead, &m)) ||
        m.x < 0 || g->values[m.x].dtype != OPARA_DTYPE_F32)
        return OPARA_OK;
    opara__gelu_add(&m, (int32_t)t);
    if (!opara__gelu_tail(im, t, dead, &m)) return OPARA_OK;
    last = m.nodes[m.n - 1];
    ins = (int32_t*)opara__pool_alloc(im->rt, &g->pool, sizeof(int32_t), 4);
    if (!ins) return opara__imp_oom(im);
    ins[0] = m.x;
    g->nodes[last].op = OPARA__OP_GELU;
    g->nodes[last].inputs = ins;
    g->nodes[last].n_inputs = 1;
    if (opara__node_set_string(g, (int32_t)last, "approximate", tanh_form ? "tanh" : "none") != OPARA_OK)
        return opara__imp_oom(im);
    for (k = 0; k + 1 < m.n; ++k) dead[m.nodes[k]] = 1;
    return OPARA_OK;
}

static opara_result opara__fuse(opara__imp* im, uint8_t* dead) {
    opara__graph* g = im->g;
    uint32_t i, n = g->n_nodes;
    opara_result r = opara__graph_finalize(g);
    for (i = 0; r == OPARA_OK && i < n; ++i)
        if (g->nodes[g->topo[i]].op == OPARA__OP_BATCH_NORM) r = opara__fold_bn(im, g->topo[i], dead);
    for (i = 0; r == OPARA_OK && i < n; ++i)
        if (g->nodes[g->topo[i]].op == OPARA__OP_RELU) r = opara__fuse_relu(im, g->topo[i], dead);
    for (i = 0; r == OPARA_OK && i < n; ++i)
        if (g->nodes[g->topo[i]].op == OPARA__OP_AVERAGE_POOL) r = opara__fuse_pad_pool(im, g->topo[i], dead);
    for (i = 0; r == OPARA_OK && i < n; ++i)
        if (g->nodes[g->topo[i]].op == OPARA__OP_ERF || g->nodes[g->topo[i]].op == OPARA__OP_TANH)
            r = opara__fuse_gelu(im, g->topo[i], dead);
    if (r == OPARA_OK) r = opara__fuse_binary_acts(im, dead);
    return r;
}

/* ---- entry points ----------------------------------------------------------------------------- */

static opara_result opara__import_model(opara__imp* im, opara__graph* out) {
    int flags = im->extra ? im->extra->flags : 0;
    opara__graph work;
    uint8_t* dead;
    opara_result r;
    opara__graph_init(&work, im->rt);
    im->g = &work;
    work.source_opset = im->opset;
    work.producer_name = opara__pool_strdup(im->rt, &work.pool, im->model->producer_name);
    r = opara__check_overrides(im);
    if (r == OPARA_OK) r = opara__add_initializers(im);
    if (r == OPARA_OK) r = opara__import_nodes(im, &im->model->graph);
    if (r == OPARA_OK) r = opara__add_outputs(im);
    dead = (uint8_t*)opara__calloc(im->rt, (size_t)work.n_nodes + 1, 1);
    if (r == OPARA_OK && !dead) r = opara__fail(im->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory");
    if (r == OPARA_OK && !(flags & OPARA__ONNX_NO_FUSION)) r = opara__fuse(im, dead);
    if (r == OPARA_OK) r = opara__rebuild_into(im, dead, out);
    opara__free(im->rt, dead);
    opara__graph_free(&work);
    return r;
}

OPARA__PRIVATE opara_result opara__onnx_import(opara_runtime* rt, const void* data, size_t size,
                                              const opara_onnx_options* options, const char* base_dir,
                                              const opara__onnx_extra* extra, opara__graph* out) {
    opara__pool pool;
    opara__onnx_model model;
    opara__imp im;
    opara_result r;
    opara__graph_init(out, rt);
    if (!data && size) return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "ONNX import: no data");
    memset(&pool, 0, sizeof pool);
    memset(&im, 0, sizeof im);
    r = opara__onnx_decode_model(rt, &pool, (const uint8_t*)data, size, &model);
    if (r == OPARA_OK && !model.has_graph) r = opara__fail(rt, OPARA_ERR_ONNX_INVALID, "the model has no graph");
    if (r == OPARA_OK && model.graph.n_sparse_initializers)
        r = opara__fail(rt, OPARA_ERR_UNSUPPORTED, "graph.sparse_initializer is not supported");
    if (r == OPARA_OK) r = opara__check_ops(rt, &model);
    if (r == OPARA_OK) {
        im.rt = rt;
        im.model = &model;
        im.opt = options;
        im.base_dir = base_dir ? base_dir : options ? options->external_data_dir : NULL;
        im.opset = opara__default_opset(&model);
        im.extra = extra;
        r = opara__import_model(&im, out);
    }
    opara__free(rt, im.side);
    opara__pool_free(rt, &pool);
    return r;
}

#ifndef OPARA_NO_STDIO
OPARA__PRIVATE opara_result opara__onnx_import_file(opara_runtime* rt, const char* path,
                                                   const opara_onnx_options* options, const opara__onnx_extra* extra,
                                                   opara__graph* out) {
    char dir[4096];
    const char* slash = strrchr(path, '/');
    uint8_t* data;
    size_t size;
    opara_result r;
#ifdef _WIN32
    const char* bslash = strrchr(path, '\\');
    if (bslash && (!slash || bslash > slash)) slash = bslash;
#endif
    opara__graph_init(out, rt);
    if (slash) opara__format(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else opara__format(dir, sizeof dir, ".");
    if (slash == path) opara__format(dir, sizeof dir, "/");
    r = opara__onnx_read_file(rt, path, &data, &size);
    if (r != OPARA_OK) return r;
    r = opara__onnx_import(rt, data, size, options, options && options->external_data_dir ? options->external_data_dir : dir,
                           extra, out);
    opara__free(rt, data);
    return r;
}
#endif

/* ---- public API ------------------------------------------------------------------------------- */

static opara_result opara__model_from_onnx_graph(opara_runtime* rt, opara_result r, opara__graph* g, opara_model** out) {
    if (r == OPARA_OK) return opara__model_from_graph(rt, g, out);
    opara__graph_free(g);
    return r;
}

/* The (pointer, count) pairs and values of the options, checked before anything is read. */
static opara_result opara__check_onnx_options(opara_runtime* rt, const opara_onnx_options* o, const char* fn) {
    if (!o) return OPARA_OK;
    if (o->n_input_shapes && !o->input_shapes)
        return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "%s: options.input_shapes is NULL but n_input_shapes is %u", fn,
                           (unsigned)o->n_input_shapes);
    if (o->default_dim < 0)
        return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "%s: options.default_dim is %lld (0 or a size > 0)", fn,
                           (long long)o->default_dim);
    return OPARA_OK;
}

OPARADEF opara_result opara_model_load_onnx_memory(opara_runtime* runtime, const void* data, size_t size,
                                                   const opara_onnx_options* options, opara_model** out) {
    opara__graph g;
    if (!out) return runtime ? opara__fail(runtime, OPARA_ERR_INVALID_ARGS, "opara_model_load_onnx_memory: out is NULL")
                             : OPARA_ERR_INVALID_ARGS;
    *out = NULL;
    if (!runtime || (!data && size)) return runtime ? opara__fail(runtime, OPARA_ERR_INVALID_ARGS,
                                                                  "opara_model_load_onnx_memory: no data") : OPARA_ERR_INVALID_ARGS;
    if (opara__check_onnx_options(runtime, options, "opara_model_load_onnx_memory") != OPARA_OK) return OPARA_ERR_INVALID_ARGS;
    return opara__model_from_onnx_graph(runtime, opara__onnx_import(runtime, data, size, options, NULL, NULL, &g), &g, out);
}

#ifndef OPARA_NO_STDIO
OPARADEF opara_result opara_model_load_onnx_file(opara_runtime* runtime, const char* path,
                                                 const opara_onnx_options* options, opara_model** out) {
    opara__graph g;
    if (!out) return runtime ? opara__fail(runtime, OPARA_ERR_INVALID_ARGS, "opara_model_load_onnx_file: out is NULL")
                             : OPARA_ERR_INVALID_ARGS;
    *out = NULL;
    if (!runtime || !path) return runtime ? opara__fail(runtime, OPARA_ERR_INVALID_ARGS,
                                                        "opara_model_load_onnx_file: no path") : OPARA_ERR_INVALID_ARGS;
    if (opara__check_onnx_options(runtime, options, "opara_model_load_onnx_file") != OPARA_OK) return OPARA_ERR_INVALID_ARGS;
    return opara__model_from_onnx_graph(runtime, opara__onnx_import_file(runtime, path, options, NULL, &g), &g, out);
}
#endif
