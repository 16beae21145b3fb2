/* CPU kernels that sample an image at computed coordinates: GridSample. */
#include "opara_cpu.h"

#include <math.h>

/* ---- GridSample ------------------------------------------------------------------------------ */

/* One image plane and how it is read outside its bounds. lo/hi are the coordinate range the grid's
   [-1, 1] maps onto (pixel centers with align_corners, pixel edges without). */
typedef struct opara__grid_plane {
    const float* data;
    int64_t h, w;
    float x_lo, x_hi, y_lo, y_hi;
    opara__grid_padding padding;
} opara__grid_plane;

/* A normalized coordinate in pixels. Non-finite or absurd ones are pinned far outside the image, so
   every later step stays in range (NaN reads as outside). */
static float opara__grid_unnormalize(float g, int64_t len, int align_corners) {
    float x = align_corners ? (g + 1.0f) / 2.0f * (float)(len - 1) : ((g + 1.0f) * (float)len - 1.0f) / 2.0f;
    if (!(x > -1e7f)) x = -1e7f;
    if (!(x < 1e7f)) x = 1e7f;
    return x;
}

/* x folded back into [lo, hi] by reflections at the borders. */
static float opara__grid_reflect(float x, float lo, float hi) {
    float range = hi - lo, d, turns, r;
    if (x >= lo && x <= hi) return x;
    if (!(range > 0)) return lo;
    d = x < lo ? lo - x : x - hi;
    turns = floorf(d / range);
    r = d - turns * range;
    if (fmodf(turns, 2.0f) == 0.0f) return x < lo ? lo + r : hi - r;
    return x < lo ? hi - r : lo + r;
}

/* A coordinate outside [lo, hi] moved inside as the padding mode says (zeros leaves it). */
static float opara__grid_pad_coord(float x, float lo, float hi, int64_t len, opara__grid_padding padding) {
    if (x >= lo && x <= hi) return x;
    if (padding == OPARA__GRID_BORDER) return x < 0 ? 0.0f : x > (float)(len - 1) ? (float)(len - 1) : x;
    if (padding == OPARA__GRID_REFLECTION) return opara__grid_reflect(x, lo, hi);
    return x;
}

/* The index a tap reads along one dim, or -1 for a zero (zeros padding outside the image). */
static int64_t opara__grid_tap(int64_t i, int64_t len, float lo, float hi, opara__grid_padding padding) {
    if (i >= 0 && i < len) return i;
    if (padding == OPARA__GRID_ZEROS) return -1;
    if (padding == OPARA__GRID_REFLECTION) i = (int64_t)opara__grid_reflect((float)i, lo, hi);
    return i < 0 ? 0 : i >= len ? len - 1 : i;
}

static float opara__grid_pixel(const opara__grid_plane* p, int64_t y, int64_t x) {
    int64_t yi = opara__grid_tap(y, p->h, p->y_lo, p->y_hi, p->padding);
    int64_t xi = opara__grid_tap(x, p->w, p->x_lo, p->x_hi, p->padding);
    return yi < 0 || xi < 0 ? 0.0f : p->data[yi * p->w + xi];
}

/* Keys' cubic convolution weights (a = -0.75) of the four taps around a point t past the first. */
static void opara__grid_cubic_weights(float t, float* c) {
    const float a = -0.75f;
    float t1 = t + 1.0f, u = 1.0f - t, u1 = 2.0f - t;
    c[0] = ((a * t1 - 5.0f * a) * t1 + 8.0f * a) * t1 - 4.0f * a;
    c[1] = ((a + 2.0f) * t - (a + 3.0f)) * t * t + 1.0f;
    c[2] = ((a + 2.0f) * u - (a + 3.0f)) * u * u + 1.0f;
    c[3] = ((a * u1 - 5.0f * a) * u1 + 8.0f * a) * u1 - 4.0f * a;
}

/* The interpolated value at pixel coordinates (x, y): taps along x per row, then along y. */
static float opara__grid_sample_at(const opara__grid_plane* p, opara__grid_mode mode, float x, float y) {
    float wx[4], wy[4], v = 0.0f;
    int64_t x0, y0, i, j, n = mode == OPARA__GRID_CUBIC ? 4 : 2, first = mode == OPARA__GRID_CUBIC ? -1 : 0;
    if (mode == OPARA__GRID_NEAREST) return opara__grid_pixel(p, (int64_t)y, (int64_t)x);
    x0 = (int64_t)floorf(x), y0 = (int64_t)floorf(y);
    if (mode == OPARA__GRID_CUBIC) {
        opara__grid_cubic_weights(x - (float)x0, wx);
        opara__grid_cubic_weights(y - (float)y0, wy);
    } else {
        wx[1] = x - (float)x0, wx[0] = 1.0f - wx[1];
        wy[1] = y - (float)y0, wy[0] = 1.0f - wy[1];
    }
    for (i = 0; i < n; ++i) {
        float row = 0.0f;
        for (j = 0; j < n; ++j) row += wx[j] * opara__grid_pixel(p, y0 + first + i, x0 + first + j);
        v += wy[i] * row;
    }
    return v;
}

/* One work item: one output row (n, c, oh) of W_out samples. */
static opara_result opara__grid_sample_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_tensor *x = &op->in[0], *grid = &op->in[1];
    const opara__grid_sample_params* gp = &op->p.grid;
    int64_t C = x->dims[1], H = x->dims[2], W = x->dims[3], Ho = grid->dims[1], Wo = grid->dims[2], ow;
    size_t item;
    opara__grid_plane plane;
    (void)scratch;
    plane.h = H, plane.w = W, plane.padding = gp->padding;
    plane.x_lo = gp->align_corners ? 0.0f : -0.5f, plane.x_hi = gp->align_corners ? (float)(W - 1) : (float)W - 0.5f;
    plane.y_lo = gp->align_corners ? 0.0f : -0.5f, plane.y_hi = gp->align_corners ? (float)(H - 1) : (float)H - 0.5f;
    for (item = begin; item < end; ++item) {
        int64_t oh = (int64_t)item % Ho, nc = (int64_t)item / Ho, n = nc / C;
        const float* g = (const float*)grid->data + (n * Ho + oh) * Wo * 2;
        float* y = (float*)op->out[0].data + (int64_t)item * Wo;
        plane.data = (const float*)x->data + nc * H * W;
        for (ow = 0; ow < Wo; ++ow) {
            float px = opara__grid_unnormalize(g[2 * ow], W, gp->align_corners);
            float py = opara__grid_unnormalize(g[2 * ow + 1], H, gp->align_corners);
            if (gp->mode == OPARA__GRID_NEAREST) px = nearbyintf(px), py = nearbyintf(py); /* ties to even */
            px = opara__grid_pad_coord(px, plane.x_lo, plane.x_hi, W, gp->padding);
            py = opara__grid_pad_coord(py, plane.y_lo, plane.y_hi, H, gp->padding);
            y[ow] = opara__grid_sample_at(&plane, gp->mode, px, py);
        }
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_grid_sample(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *grid = &op->in[1], *y = &op->out[0];
    if (x->dtype != OPARA_DTYPE_F32 || grid->dtype != OPARA_DTYPE_F32 || y->dtype != OPARA_DTYPE_F32)
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "GridSample: needs f32 input and grid");
    if (!op->params || !op->params->resolved || x->ndim != 4 || grid->ndim != 4 || y->ndim != 4 || grid->dims[3] != 2 ||
        grid->dims[0] != x->dims[0] || y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1] ||
        y->dims[2] != grid->dims[1] || y->dims[3] != grid->dims[2])
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "GridSample: needs X [N, C, H, W], grid [N, Ho, Wo, 2]");
    op->p.grid = op->params->u.grid;
    op->work_items = (size_t)(y->dims[0] * y->dims[1] * y->dims[2]);
    if (op->work_items && (x->dims[2] == 0 || x->dims[3] == 0) && op->p.grid.padding != OPARA__GRID_ZEROS)
        return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, /* zeros padding samples 0 from it */
                                 "GridSample: border or reflection padding of an empty image (no pixel to repeat)");
    op->min_items_per_task = 4;
    op->fn = opara__grid_sample_kernel;
    return OPARA_OK;
}
