/* GPU timing simulator: a deterministic discrete-event model of kernels on SMs (docs/SIMULATOR.md).

   Blocks: a kernel's blocks are dispatched breadth-first over the SMs that have room (threads,
   registers, shared memory, block slots), oldest ready kernel first; a kernel whose next block
   fits nowhere blocks every younger kernel (head-of-line blocking).
   Block time (roofline): an SM reaches peak/sm_count with sm_saturation_threads resident threads,
   so a block of t threads alone computes at that rate times min(1, t/sm_saturation_threads); DRAM
   saturates once mem_saturation of the device's thread slots load, so a block pulls
   bandwidth/(sm_count*max_threads_per_sm*mem_saturation)*t. Its uncontended time is the larger
   of its FLOP time and its byte time. Contention is processor sharing on virtual clocks (a rate
   change costs O(1)): memory-bound blocks share the bandwidth (when their uncontended demand D
   exceeds it, all slow down by bandwidth/D); compute-bound blocks share their SM's peak likewise.
   Launch: eager mode issues kernels from one host thread in launch order (launch_us each, event_us
   per event), streams map onto hw_queues queues (stream % hw_queues) that run in issue order (a
   plan runs on the CUDA backend's streams, one per lane, as opara__sim_plan says);
   graph mode has one replay call and a front end that reaches node i after (i+1)*graph_node_us.
   A kernel becomes ready kernel_gap_us after its last dependency finished (or when launched). */
#include "opara_sim.h"
#include "../plan/opara_sched.h"

#include <math.h>
#include <stdlib.h>

/* ---- private interface (used by tests and the CLI through the amalgamation) ------------------ */

/* One kernel as the engine sees it, in launch order. */
typedef struct opara__sim_kernel {
    opara__op_desc desc;
    uint32_t stream;
    uint32_t host_events;          /* eager: event records and waits the host issues with this launch */
    uint32_t dep_start, dep_count; /* into the deps array: earlier kernels that must finish first */
} opara__sim_kernel;

/* Simulates kernels[0..n) (launch order; every dep index < its kernel's index). */
OPARA__PRIVATE opara_result opara__sim_run(opara_runtime* rt, const opara_sim_device* dev, opara_sim_mode mode,
                                          const opara__sim_kernel* kernels, uint32_t n, const uint32_t* deps,
                                          opara_sim_result* out);
/* Simulates a plan on the CUDA backend's streams (one per lane): each op depends on the previous
   op of its lane and on the events it waits for. */
OPARA__PRIVATE_TOOL opara_result opara__sim_plan(opara_runtime* rt, const opara_sim_device* dev, opara_sim_mode mode,
                                           const opara__plan* plan, const opara__op_desc* descs,
                                           opara_sim_result* out);
/* The scheduler's view of a simulator device (name points into dev). */
OPARA__PRIVATE_TOOL void opara__sim_device_limits(const opara_sim_device* dev, opara__device* out);

/* ---- engine state ---------------------------------------------------------------------------- */

#define OPARA__SIM_INF 1e300

typedef struct opara__sim_group { /* blocks of one kernel started together on one SM */
    uint32_t kernel, sm, count, seq;
    double finish; /* virtual finish time on its SM's clock (compute-bound) or the memory clock */
} opara__sim_group;

typedef struct opara__sim_heap { /* min-heap of group indices by (finish, seq) */
    uint32_t* items;
    uint32_t size;
} opara__sim_heap;

typedef struct opara__sim_ready { double time; uint32_t kernel; } opara__sim_ready;

typedef struct opara__sim_sm {
    int64_t threads, regs, smem, blocks; /* in use */
    double busy_since;
    /* compute-bound groups share the SM: its virtual clock runs at rate = 1/max(1, share) */
    double vclock, updated, rate, share;
    double next_finish;  /* real time the next compute group ends, or OPARA__SIM_INF */
    uint32_t n_compute;  /* compute groups, in s->sm_groups[sm * max_blocks_per_sm ...] */
} opara__sim_sm;

typedef struct opara__sim_kstate {
    uint32_t unmet, blocks_left, running;
    int64_t threads, regs, smem; /* per block */
    double block_us;             /* uncontended block time */
    double demand;               /* memory-bound: bytes/us one block pulls uncontended; else 0 */
    double share;                /* compute-bound: fraction of its SM's peak one block uses alone */
    double arrival, dep_done;
} opara__sim_kstate;

typedef struct opara__sim {
    opara_runtime* rt;
    const opara_sim_device* dev;
    const opara__sim_kernel* kernels;
    uint32_t n;
    opara__sim_kstate* ks;
    uint32_t* succ_start; /* CSR successors */
    uint32_t* succ;
    opara__sim_sm* sms;
    opara__sim_group* groups;
    size_t n_groups, cap_groups;
    uint32_t* free_groups;
    size_t n_free, cap_free;
    opara__sim_heap memory;
    uint32_t* sm_groups; /* compute groups per SM, max_blocks_per_sm slots each */
    uint32_t n_running;  /* compute groups on all SMs */
    opara__sim_ready* ready; /* min-heap by (time, kernel) */
    uint32_t n_ready;
    uint32_t* fifo; /* ready kernels with blocks left, in the order they became ready */
    uint32_t fifo_head, fifo_tail;
    uint32_t head_scanned; /* the head kernel was tried on every SM (then only freed SMs are retried) */
    uint32_t* dirty;       /* SMs freed since the last dispatch */
    uint8_t* is_dirty;
    uint32_t n_dirty;
    uint32_t* fit;         /* scratch per SM */
    uint32_t* take;
    uint32_t next_sm;
    uint32_t seq;
    double now, vclock, rate, demand, bandwidth; /* bandwidth in bytes/us */
    uint32_t busy_sms;
    double busy_total;
    size_t cap_samples;
    opara_sim_result* res;
} opara__sim;

static int opara__sim_group_less(const opara__sim* s, uint32_t a, uint32_t b) {
    const opara__sim_group* ga = &s->groups[a];
    const opara__sim_group* gb = &s->groups[b];
    return ga->finish < gb->finish || (ga->finish == gb->finish && ga->seq < gb->seq);
}

static void opara__sim_heap_push(opara__sim* s, opara__sim_heap* h, uint32_t g) {
    uint32_t i = h->size++;
    h->items[i] = g;
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!opara__sim_group_less(s, h->items[i], h->items[parent])) break;
        h->items[i] = h->items[parent];
        h->items[parent] = g;
        i = parent;
    }
}

static uint32_t opara__sim_heap_pop(opara__sim* s, opara__sim_heap* h) {
    uint32_t top = h->items[0], i = 0;
    h->items[0] = h->items[--h->size];
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i, t;
        if (l < h->size && opara__sim_group_less(s, h->items[l], h->items[m])) m = l;
        if (r < h->size && opara__sim_group_less(s, h->items[r], h->items[m])) m = r;
        if (m == i) break;
        t = h->items[i];
        h->items[i] = h->items[m];
        h->items[m] = t;
        i = m;
    }
    return top;
}

static int opara__sim_ready_less(const opara__sim_ready* a, const opara__sim_ready* b) {
    return a->time < b->time || (a->time == b->time && a->kernel < b->kernel);
}

static void opara__sim_ready_push(opara__sim* s, double time, uint32_t kernel) {
    uint32_t i = s->n_ready++;
    s->ready[i].time = time;
    s->ready[i].kernel = kernel;
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        opara__sim_ready t;
        if (!opara__sim_ready_less(&s->ready[i], &s->ready[parent])) break;
        t = s->ready[i];
        s->ready[i] = s->ready[parent];
        s->ready[parent] = t;
        i = parent;
    }
}

static opara__sim_ready opara__sim_ready_pop(opara__sim* s) {
    opara__sim_ready top = s->ready[0];
    uint32_t i = 0;
    s->ready[0] = s->ready[--s->n_ready];
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        opara__sim_ready t;
        if (l < s->n_ready && opara__sim_ready_less(&s->ready[l], &s->ready[m])) m = l;
        if (r < s->n_ready && opara__sim_ready_less(&s->ready[r], &s->ready[m])) m = r;
        if (m == i) break;
        t = s->ready[i];
        s->ready[i] = s->ready[m];
        s->ready[m] = t;
        i = m;
    }
    return top;
}

/* ---- bookkeeping ----------------------------------------------------------------------------- */

static opara_result opara__sim_sample(opara__sim* s) {
    opara_sim_result* r = s->res;
    if (r->n_samples > 0 && r->sample_us[r->n_samples - 1] == s->now) {
        r->busy_sms[r->n_samples - 1] = s->busy_sms;
        return OPARA_OK;
    }
    if (r->n_samples > 0 && r->busy_sms[r->n_samples - 1] == s->busy_sms) return OPARA_OK;
    if (r->n_samples == s->cap_samples) {
        size_t cap = s->cap_samples;
        if (opara__grow(s->rt, (void**)&r->sample_us, &cap, cap + 1, sizeof(double)) != OPARA_OK ||
            opara__grow(s->rt, (void**)&r->busy_sms, &s->cap_samples, cap, sizeof(uint32_t)) != OPARA_OK)
            return OPARA_ERR_OUT_OF_MEMORY;
    }
    r->sample_us[r->n_samples] = s->now;
    r->busy_sms[r->n_samples] = s->busy_sms;
    r->n_samples++;
    return OPARA_OK;
}

static void opara__sim_ready_later(opara__sim* s, uint32_t k) {
    const opara__sim_kernel* kn = &s->kernels[k];
    double t = OPARA__MAX(s->ks[k].arrival, s->ks[k].dep_done);
    if (!kn->desc.kernel_less && kn->desc.grid > 0) t += s->dev->kernel_gap_us;
    opara__sim_ready_push(s, t, k);
}

static void opara__sim_kernel_done(opara__sim* s, uint32_t k) {
    uint32_t i;
    s->res->ops[k].end_us = s->now;
    for (i = s->succ_start[k]; i < s->succ_start[k + 1]; ++i) {
        uint32_t j = s->succ[i];
        s->ks[j].dep_done = OPARA__MAX(s->ks[j].dep_done, s->now);
        if (--s->ks[j].unmet == 0) opara__sim_ready_later(s, j);
    }
}

static void opara__sim_kernel_ready(opara__sim* s, uint32_t k) {
    s->res->ops[k].ready_us = s->now;
    if (s->ks[k].blocks_left == 0) {
        s->res->ops[k].start_us = s->now;
        opara__sim_kernel_done(s, k);
        return;
    }
    s->fifo[s->fifo_tail++] = k;
}

/* Brings SM i's virtual clock to now. */
static void opara__sim_sm_advance(opara__sim* s, uint32_t i) {
    opara__sim_sm* sm = &s->sms[i];
    sm->vclock += sm->rate * (s->now - sm->updated);
    sm->updated = s->now;
}

/* After SM i's compute groups or share changed (clock advanced to now): new rate and next end. */
static void opara__sim_sm_reschedule(opara__sim* s, uint32_t i) {
    opara__sim_sm* sm = &s->sms[i];
    const uint32_t* gs = s->sm_groups + (size_t)i * (size_t)s->dev->max_blocks_per_sm;
    double first = OPARA__SIM_INF;
    uint32_t j;
    if (sm->n_compute == 0) sm->share = 0; /* no drift from repeated sums */
    sm->rate = sm->share > 1.0 ? 1.0 / sm->share : 1.0;
    for (j = 0; j < sm->n_compute; ++j) first = OPARA__MIN(first, s->groups[gs[j]].finish);
    sm->next_finish = sm->n_compute ? s->now + OPARA__MAX(first - sm->vclock, 0.0) / sm->rate : OPARA__SIM_INF;
}

static opara_result opara__sim_group_finish(opara__sim* s, uint32_t g);

/* Ends the compute groups of SM i due at now (the earliest one even if rounding left its clock short). */
static opara_result opara__sim_sm_finish_due(opara__sim* s, uint32_t i) {
    opara__sim_sm* sm = &s->sms[i];
    uint32_t* gs = s->sm_groups + (size_t)i * (size_t)s->dev->max_blocks_per_sm;
    double first = OPARA__SIM_INF;
    uint32_t j;
    opara__sim_sm_advance(s, i);
    for (j = 0; j < sm->n_compute; ++j) first = OPARA__MIN(first, s->groups[gs[j]].finish);
    sm->vclock = OPARA__MAX(sm->vclock, first);
    for (j = 0; j < sm->n_compute;) {
        uint32_t g = gs[j];
        if (s->groups[g].finish <= sm->vclock) {
            opara_result r;
            memmove(gs + j, gs + j + 1, (sm->n_compute - j - 1) * sizeof *gs); /* keep start order */
            sm->n_compute--;
            s->n_running--;
            if ((r = opara__sim_group_finish(s, g)) != OPARA_OK) return r;
        } else {
            ++j;
        }
    }
    opara__sim_sm_reschedule(s, i);
    return OPARA_OK;
}

static opara_result opara__sim_group_finish(opara__sim* s, uint32_t g) {
    opara__sim_group* gr = &s->groups[g];
    opara__sim_kstate* k = &s->ks[gr->kernel];
    opara__sim_sm* sm = &s->sms[gr->sm];
    uint32_t kernel = gr->kernel;
    sm->threads -= k->threads * gr->count;
    sm->regs -= k->regs * gr->count;
    sm->smem -= k->smem * gr->count;
    sm->blocks -= gr->count;
    if (k->demand > 0) s->demand -= k->demand * gr->count;
    else sm->share -= k->share * gr->count;
    if (sm->blocks == 0) {
        s->busy_total += s->now - sm->busy_since;
        s->busy_sms--;
        if (opara__sim_sample(s) != OPARA_OK) return OPARA_ERR_OUT_OF_MEMORY;
    }
    if (!s->is_dirty[gr->sm]) {
        s->is_dirty[gr->sm] = 1;
        s->dirty[s->n_dirty++] = gr->sm;
    }
    s->free_groups[s->n_free++] = g;
    if (--k->running == 0 && k->blocks_left == 0) opara__sim_kernel_done(s, kernel);
    return OPARA_OK;
}

static opara_result opara__sim_group_start(opara__sim* s, uint32_t kernel, uint32_t smi, uint32_t count) {
    opara__sim_kstate* k = &s->ks[kernel];
    opara__sim_sm* sm = &s->sms[smi];
    opara__sim_group* gr;
    uint32_t g;
    if (s->n_free > 0) {
        g = s->free_groups[--s->n_free];
    } else {
        if (opara__grow(s->rt, (void**)&s->groups, &s->cap_groups, s->n_groups + 1, sizeof *s->groups) != OPARA_OK)
            return OPARA_ERR_OUT_OF_MEMORY;
        g = (uint32_t)s->n_groups++;
        if (s->n_groups > s->cap_free) {
            size_t cap_m = s->cap_free;
            if (opara__grow(s->rt, (void**)&s->free_groups, &s->cap_free, s->n_groups, sizeof(uint32_t)) != OPARA_OK ||
                opara__grow(s->rt, (void**)&s->memory.items, &cap_m, s->n_groups, sizeof(uint32_t)) != OPARA_OK)
                return OPARA_ERR_OUT_OF_MEMORY;
        }
    }
    gr = &s->groups[g];
    gr->kernel = kernel;
    gr->sm = smi;
    gr->count = count;
    gr->seq = s->seq++;
    if (sm->blocks == 0) {
        sm->busy_since = s->now;
        s->busy_sms++;
        if (opara__sim_sample(s) != OPARA_OK) return OPARA_ERR_OUT_OF_MEMORY;
    }
    sm->threads += k->threads * count;
    sm->regs += k->regs * count;
    sm->smem += k->smem * count;
    sm->blocks += count;
    k->blocks_left -= count;
    k->running++;
    if (k->demand > 0) {
        gr->finish = s->vclock + k->block_us;
        s->demand += k->demand * count;
        opara__sim_heap_push(s, &s->memory, g);
    } else {
        opara__sim_sm_advance(s, smi);
        gr->finish = sm->vclock + k->block_us;
        sm->share += k->share * count;
        s->sm_groups[(size_t)smi * (size_t)s->dev->max_blocks_per_sm + sm->n_compute++] = g;
        s->n_running++;
        opara__sim_sm_reschedule(s, smi);
    }
    return OPARA_OK;
}

/* How many more blocks of kernel k fit on SM i. */
static uint32_t opara__sim_fit(const opara__sim* s, const opara__sim_kstate* k, uint32_t i) {
    const opara_sim_device* d = s->dev;
    const opara__sim_sm* sm = &s->sms[i];
    int64_t fit = d->max_blocks_per_sm - sm->blocks;
    fit = OPARA__MIN(fit, (d->max_threads_per_sm - sm->threads) / k->threads);
    if (k->regs > 0) fit = OPARA__MIN(fit, (d->max_regs_per_sm - sm->regs) / k->regs);
    if (k->smem > 0) fit = OPARA__MIN(fit, (d->max_smem_per_sm - sm->smem) / k->smem);
    return fit > 0 ? (uint32_t)fit : 0;
}

/* Places blocks of kernel k breadth-first over the candidate SMs (one per SM per round). */
static opara_result opara__sim_place(opara__sim* s, uint32_t kernel, const uint32_t* cand, uint32_t n_cand) {
    opara__sim_kstate* k = &s->ks[kernel];
    uint32_t left = k->blocks_left, i, last = UINT32_MAX;
    int progress = 1;
    for (i = 0; i < n_cand; ++i) {
        s->fit[i] = opara__sim_fit(s, k, cand[i]);
        s->take[i] = 0;
    }
    while (left > 0 && progress) {
        progress = 0;
        for (i = 0; i < n_cand && left > 0; ++i) {
            if (s->take[i] < s->fit[i]) {
                s->take[i]++;
                left--;
                progress = 1;
                last = cand[i];
            }
        }
    }
    if (last == UINT32_MAX) return OPARA_OK;
    if (k->blocks_left == s->kernels[kernel].desc.grid) s->res->ops[kernel].start_us = s->now;
    for (i = 0; i < n_cand; ++i) {
        if (s->take[i] > 0) {
            opara_result r = opara__sim_group_start(s, kernel, cand[i], s->take[i]);
            if (r != OPARA_OK) return r;
        }
    }
    s->next_sm = (last + 1) % (uint32_t)s->dev->sm_count;
    return OPARA_OK;
}

static opara_result opara__sim_dispatch(opara__sim* s) {
    uint32_t n_sm = (uint32_t)s->dev->sm_count, i;
    while (s->fifo_head < s->fifo_tail) {
        uint32_t k = s->fifo[s->fifo_head];
        opara_result r;
        if (s->head_scanned != k) {
            uint32_t* all = s->dirty + n_sm; /* second half of the dirty buffer: rotation order */
            for (i = 0; i < n_sm; ++i) all[i] = (s->next_sm + i) % n_sm;
            r = opara__sim_place(s, k, all, n_sm);
        } else {
            r = opara__sim_place(s, k, s->dirty, s->n_dirty);
        }
        if (r != OPARA_OK) return r;
        if (s->ks[k].blocks_left > 0) {
            s->head_scanned = k;
            break;
        }
        s->fifo_head++;
    }
    for (i = 0; i < s->n_dirty; ++i) s->is_dirty[s->dirty[i]] = 0;
    s->n_dirty = 0;
    return OPARA_OK;
}

/* ---- setup ----------------------------------------------------------------------------------- */

OPARA__PRIVATE opara_result opara__sim_check_device(opara_runtime* rt, const opara_sim_device* d) {
    if (d->sm_count <= 0 || d->max_threads_per_sm <= 0 || d->max_regs_per_sm <= 0 || d->max_smem_per_sm < 0 ||
        d->max_blocks_per_sm <= 0 || d->sm_saturation_threads <= 0 || d->hw_queues <= 0)
        return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "sim device '%s': SM counts and limits must be positive",
                           d->name);
    if (!(d->peak_gflops > 0) || !(d->mem_gbps > 0) || !(d->mem_saturation > 0) || d->mem_saturation > 1)
        return opara__fail(rt, OPARA_ERR_INVALID_ARGS,
                           "sim device '%s': peak_gflops and mem_gbps must be > 0, mem_saturation in (0, 1]", d->name);
    if (!(d->launch_us >= 0) || !(d->event_us >= 0) || !(d->graph_launch_us >= 0) || !(d->graph_node_us >= 0) ||
        !(d->kernel_gap_us >= 0))
        return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "sim device '%s': overheads must be >= 0", d->name);
    return OPARA_OK;
}

/* Per-block demand and time of kernel i; fails when one block cannot fit on an empty SM. */
static opara_result opara__sim_kernel_setup(opara__sim* s, uint32_t i) {
    const opara_sim_device* d = s->dev;
    const opara__op_desc* desc = &s->kernels[i].desc;
    opara__sim_kstate* k = &s->ks[i];
    double sm_flops_us = d->peak_gflops * 1e3 / d->sm_count;
    double thread_bytes_us = d->mem_gbps * 1e3 / ((double)d->sm_count * d->max_threads_per_sm * d->mem_saturation);
    double per_block_flops, per_block_bytes, t_compute, t_memory;
    uint32_t grid = desc->kernel_less ? 0 : desc->grid;
    k->blocks_left = grid;
    s->res->ops[i].blocks = grid;
    s->res->ops[i].stream = s->kernels[i].stream;
    if (grid == 0) return OPARA_OK;
    k->threads = desc->block_threads ? desc->block_threads : 1;
    k->regs = (int64_t)desc->regs_per_thread * k->threads;
    k->smem = desc->smem_per_block;
    if (k->threads > d->max_threads_per_sm || k->regs > d->max_regs_per_sm || k->smem > d->max_smem_per_sm)
        return opara__fail(s->rt, OPARA_ERR_INVALID_ARGS,
                           "sim: kernel %u (%u threads, %u regs/thread, %u B smem per block) never fits on an SM of '%s'",
                           i, desc->block_threads, desc->regs_per_thread, desc->smem_per_block, d->name);
    per_block_flops = (desc->flops > 0 ? desc->flops : 0) / grid;
    per_block_bytes = (desc->bytes > 0 ? desc->bytes : 0) / grid;
    k->share = OPARA__MIN(1.0, (double)k->threads / d->sm_saturation_threads);
    t_compute = per_block_flops / (sm_flops_us * k->share);
    t_memory = per_block_bytes / (thread_bytes_us * (double)k->threads);
    k->block_us = OPARA__MAX(t_compute, t_memory);
    k->demand = (t_memory > t_compute) ? per_block_bytes / t_memory : 0.0;
    s->res->ops[i].memory_bound = k->demand > 0;
    return OPARA_OK;
}

/* Arrival of every kernel at the GPU; eager: also the previous kernel issued to the same hardware
   queue (the fifo array serves as scratch: last kernel per queue). */
static void opara__sim_arrivals(opara__sim* s, opara_sim_mode mode, uint32_t* queue_pred) {
    const opara_sim_device* d = s->dev;
    uint32_t q, i, n_q = (uint32_t)d->hw_queues;
    double host = 0;
    for (q = 0; q < n_q; ++q) s->fifo[q] = UINT32_MAX;
    for (i = 0; i < s->n; ++i) {
        const opara__sim_kernel* k = &s->kernels[i];
        queue_pred[i] = UINT32_MAX;
        if (mode == OPARA_SIM_GRAPH) {
            s->ks[i].arrival = d->graph_launch_us + (double)(i + 1) * d->graph_node_us;
            continue;
        }
        host += (double)k->host_events * d->event_us;
        if (s->ks[i].blocks_left > 0) {
            host += d->launch_us;
            q = k->stream % n_q;
            queue_pred[i] = s->fifo[q];
            s->fifo[q] = i;
        }
        s->ks[i].arrival = host;
    }
    s->res->host_us = mode == OPARA_SIM_GRAPH ? d->graph_launch_us : host;
}

static opara_result opara__sim_successors(opara__sim* s, const uint32_t* deps, const uint32_t* queue_pred) {
    uint32_t i, j, total = 0;
    for (i = 0; i < s->n; ++i) {
        const opara__sim_kernel* k = &s->kernels[i];
        for (j = 0; j < k->dep_count; ++j) {
            uint32_t p = deps[k->dep_start + j];
            if (p >= i)
                return opara__fail(s->rt, OPARA_ERR_INVALID_ARGS, "sim: kernel %u depends on kernel %u, not an earlier one",
                                   i, p);
            s->succ_start[p + 1]++;
        }
        if (queue_pred[i] != UINT32_MAX) s->succ_start[queue_pred[i] + 1]++;
    }
    for (i = 0; i < s->n; ++i) s->succ_start[i + 1] += s->succ_start[i];
    total = s->succ_start[s->n];
    s->succ = (uint32_t*)opara__calloc(s->rt, total ? total : 1, sizeof(uint32_t));
    if (!s->succ) return OPARA_ERR_OUT_OF_MEMORY;
    for (i = 0; i < s->n; ++i) s->fifo[i] = s->succ_start[i];
    for (i = 0; i < s->n; ++i) {
        const opara__sim_kernel* k = &s->kernels[i];
        for (j = 0; j < k->dep_count; ++j) s->succ[s->fifo[deps[k->dep_start + j]]++] = i;
        if (queue_pred[i] != UINT32_MAX) s->succ[s->fifo[queue_pred[i]]++] = i;
        s->ks[i].unmet = k->dep_count + (queue_pred[i] != UINT32_MAX);
    }
    return OPARA_OK;
}

static void opara__sim_free_state(opara__sim* s) {
    opara__free(s->rt, s->ks);
    opara__free(s->rt, s->succ_start);
    opara__free(s->rt, s->succ);
    opara__free(s->rt, s->sms);
    opara__free(s->rt, s->groups);
    opara__free(s->rt, s->free_groups);
    opara__free(s->rt, s->sm_groups);
    opara__free(s->rt, s->memory.items);
    opara__free(s->rt, s->ready);
    opara__free(s->rt, s->fifo);
    opara__free(s->rt, s->dirty);
    opara__free(s->rt, s->is_dirty);
    opara__free(s->rt, s->fit);
    opara__free(s->rt, s->take);
}

static opara_result opara__sim_alloc_state(opara__sim* s) {
    size_t n = s->n ? s->n : 1, n_sm = (size_t)s->dev->sm_count, i;
    opara_runtime* rt = s->rt;
    s->ks = (opara__sim_kstate*)opara__calloc(rt, n, sizeof *s->ks);
    s->succ_start = (uint32_t*)opara__calloc(rt, n + 1, sizeof(uint32_t));
    s->sms = (opara__sim_sm*)opara__calloc(rt, n_sm, sizeof *s->sms);
    s->ready = (opara__sim_ready*)opara__calloc(rt, n, sizeof *s->ready);
    s->fifo = (uint32_t*)opara__calloc(rt, OPARA__MAX(n, (size_t)s->dev->hw_queues), sizeof(uint32_t));
    s->dirty = (uint32_t*)opara__calloc(rt, 2 * n_sm, sizeof(uint32_t));
    s->is_dirty = (uint8_t*)opara__calloc(rt, n_sm, 1);
    s->fit = (uint32_t*)opara__calloc(rt, n_sm, sizeof(uint32_t));
    s->take = (uint32_t*)opara__calloc(rt, n_sm, sizeof(uint32_t));
    s->sm_groups = (uint32_t*)opara__calloc(rt, n_sm * (size_t)s->dev->max_blocks_per_sm, sizeof(uint32_t));
    s->res->ops = (opara_sim_op_time*)opara__calloc(rt, n, sizeof *s->res->ops);
    for (i = 0; s->sms && i < n_sm; ++i) {
        s->sms[i].rate = 1.0;
        s->sms[i].next_finish = OPARA__SIM_INF;
    }
    if (!s->ks || !s->succ_start || !s->sms || !s->ready || !s->fifo || !s->dirty || !s->is_dirty || !s->fit ||
        !s->take || !s->sm_groups || !s->res->ops)
        return OPARA_ERR_OUT_OF_MEMORY;
    return OPARA_OK;
}

/* ---- the event loop -------------------------------------------------------------------------- */

static double opara__sim_next_memory_time(const opara__sim* s) {
    if (s->memory.size == 0) return OPARA__SIM_INF;
    return s->now + (s->groups[s->memory.items[0]].finish - s->vclock) / s->rate;
}

static opara_result opara__sim_step(opara__sim* s) {
    double t_ready = s->n_ready ? s->ready[0].time : OPARA__SIM_INF;
    double t_compute = OPARA__SIM_INF;
    double t_memory = opara__sim_next_memory_time(s);
    double t;
    uint32_t i, n_sm = (uint32_t)s->dev->sm_count;
    opara_result r;
    for (i = 0; i < n_sm; ++i) t_compute = OPARA__MIN(t_compute, s->sms[i].next_finish);
    t = OPARA__MIN(t_ready, OPARA__MIN(t_compute, t_memory));
    if (t < s->now) t = s->now;
    s->vclock += s->rate * (t - s->now);
    if (t_memory <= t) s->vclock = OPARA__MAX(s->vclock, s->groups[s->memory.items[0]].finish);
    s->now = t;
    for (i = 0; t_compute <= t && i < n_sm; ++i)
        if (s->sms[i].next_finish <= t && (r = opara__sim_sm_finish_due(s, i)) != OPARA_OK) return r;
    while (s->memory.size && s->groups[s->memory.items[0]].finish <= s->vclock)
        if ((r = opara__sim_group_finish(s, opara__sim_heap_pop(s, &s->memory))) != OPARA_OK) return r;
    if (s->memory.size == 0) s->demand = 0; /* no drift from repeated sums */
    while (s->n_ready && s->ready[0].time <= s->now) opara__sim_kernel_ready(s, opara__sim_ready_pop(s).kernel);
    if ((r = opara__sim_dispatch(s)) != OPARA_OK) return r;
    s->rate = s->demand > s->bandwidth ? s->bandwidth / s->demand : 1.0;
    return OPARA_OK;
}

static opara_result opara__sim_loop(opara__sim* s) {
    uint32_t i;
    opara_result r;
    for (i = 0; i < s->n; ++i)
        if (s->ks[i].unmet == 0) opara__sim_ready_later(s, i);
    while (s->n_ready || s->n_running || s->memory.size) {
        if ((r = opara__sim_step(s)) != OPARA_OK) return r;
    }
    if (s->fifo_head != s->fifo_tail) return opara__fail(s->rt, OPARA_ERR_INTERNAL, "sim: kernels left undispatched");
    return OPARA_OK;
}

static void opara__sim_summarize(opara__sim* s) {
    opara_sim_result* r = s->res;
    uint32_t i;
    double end = 0;
    for (i = 0; i < s->n; ++i) {
        end = OPARA__MAX(end, r->ops[i].end_us);
        if (r->ops[i].stream + 1 > r->n_streams) r->n_streams = r->ops[i].stream + 1;
    }
    r->makespan_us = end;
    r->sm_busy = end > 0 ? s->busy_total / (end * s->dev->sm_count) : 0.0;
}

OPARA__PRIVATE opara_result opara__sim_run(opara_runtime* rt, const opara_sim_device* dev, opara_sim_mode mode,
                                          const opara__sim_kernel* kernels, uint32_t n, const uint32_t* deps,
                                          opara_sim_result* out) {
    opara__sim s;
    uint32_t* queue_pred;
    uint32_t i;
    opara_result r;
    if (!out) return OPARA_ERR_INVALID_ARGS;
    memset(out, 0, sizeof *out);
    if (!dev || (n > 0 && !kernels)) return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "sim: NULL device or kernels");
    if ((r = opara__sim_check_device(rt, dev)) != OPARA_OK) return r;
    memset(&s, 0, sizeof s);
    s.rt = rt;
    s.dev = dev;
    s.kernels = kernels;
    s.n = n;
    s.res = out;
    s.rate = 1.0;
    s.bandwidth = dev->mem_gbps * 1e3;
    s.head_scanned = UINT32_MAX;
    out->device = *dev;
    out->mode = mode;
    out->n_ops = n;
    r = opara__sim_alloc_state(&s);
    queue_pred = (uint32_t*)opara__calloc(rt, n ? n : 1, sizeof(uint32_t));
    if (r == OPARA_OK && !queue_pred) r = OPARA_ERR_OUT_OF_MEMORY;
    for (i = 0; r == OPARA_OK && i < n; ++i) r = opara__sim_kernel_setup(&s, i);
    if (r == OPARA_OK) {
        opara__sim_arrivals(&s, mode, queue_pred);
        r = opara__sim_successors(&s, deps, queue_pred);
    }
    if (r == OPARA_OK) r = opara__sim_sample(&s);
    if (r == OPARA_OK) r = opara__sim_loop(&s);
    if (r == OPARA_OK) opara__sim_summarize(&s);
    opara__free(rt, queue_pred);
    opara__sim_free_state(&s);
    if (r == OPARA_ERR_OUT_OF_MEMORY) opara__fail(rt, r, "sim: out of memory (%u kernels)", n);
    if (r != OPARA_OK) opara_sim_result_free(rt, out);
    return r;
}

OPARADEF void opara_sim_result_free(opara_runtime* rt, opara_sim_result* result) {
    if (!result) return;
    opara__free(rt, result->ops);
    opara__free(rt, result->sample_us);
    opara__free(rt, result->busy_sms);
    memset(result, 0, sizeof *result);
}

/* ---- plans ----------------------------------------------------------------------------------- */

/* As the CUDA backend runs it: on the CUDA stream of the plan stream's lane (lane 0 the origin),
   behind the lane's previous op, waiting on events of other lanes only. */
static void opara__sim_plan_kernel(const opara__plan* plan, const opara__op_desc* descs, uint32_t pos,
                                   const uint32_t* last_on_stream, opara__sim_kernel* k, uint32_t* deps,
                                   uint32_t* n_deps) {
    uint32_t node = plan->order[pos], s = plan->stream_lane[plan->stream[node]], w;
    memset(k, 0, sizeof *k);
    if (descs) k->desc = descs[node];
    else k->desc.kernel_less = 1;
    k->stream = s;
    k->dep_start = *n_deps;
    if (last_on_stream[s] != UINT32_MAX) deps[(*n_deps)++] = last_on_stream[s];
    for (w = plan->wait_start[node]; w < plan->wait_start[node + 1]; ++w) {
        uint32_t u = plan->wait_nodes[w];
        if (plan->stream_lane[plan->stream[u]] == s) continue; /* earlier on the same CUDA stream */
        deps[(*n_deps)++] = plan->position[u];
        k->host_events++;
    }
    k->dep_count = *n_deps - k->dep_start;
    k->host_events += plan->records_event[node] ? 1u : 0u;
    if (last_on_stream[s] == UINT32_MAX && plan->lane_fork[s]) k->host_events++; /* wait on the fork event */
    if (pos == 0) k->host_events++;                                               /* record the fork event */
}

OPARA__PRIVATE_TOOL opara_result opara__sim_plan(opara_runtime* rt, const opara_sim_device* dev, opara_sim_mode mode,
                                           const opara__plan* plan, const opara__op_desc* descs,
                                           opara_sim_result* out) {
    opara__sim_kernel* kernels;
    uint32_t *deps, *last_on_stream, pos, n_deps = 0, n;
    size_t dep_cap;
    opara_result r;
    if (!out) return OPARA_ERR_INVALID_ARGS;
    memset(out, 0, sizeof *out);
    if (!plan) return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "sim: NULL plan");
    n = plan->n_nodes;
    if (!opara__add_size(n, plan->wait_start[n], &dep_cap)) return opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "sim: plan too big");
    kernels = (opara__sim_kernel*)opara__calloc(rt, n ? n : 1, sizeof *kernels);
    deps = (uint32_t*)opara__calloc(rt, dep_cap ? dep_cap : 1, sizeof(uint32_t));
    last_on_stream = (uint32_t*)opara__calloc(rt, plan->n_lanes ? plan->n_lanes : 1, sizeof(uint32_t));
    if (!kernels || !deps || !last_on_stream) {
        r = opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "sim: out of memory for %u ops", n);
    } else {
        memset(last_on_stream, 0xff, (plan->n_lanes ? plan->n_lanes : 1) * sizeof(uint32_t));
        for (pos = 0; pos < n; ++pos) {
            opara__sim_plan_kernel(plan, descs, pos, last_on_stream, &kernels[pos], deps, &n_deps);
            last_on_stream[kernels[pos].stream] = pos;
        }
        r = opara__sim_run(rt, dev, mode, kernels, n, deps, out);
    }
    opara__free(rt, kernels);
    opara__free(rt, deps);
    opara__free(rt, last_on_stream);
    return r;
}

/* ---- devices --------------------------------------------------------------------------------- */

OPARA__PRIVATE_TOOL void opara__sim_device_limits(const opara_sim_device* dev, opara__device* out) {
    memset(out, 0, sizeof *out);
    out->name = dev->name;
    out->sms = (uint32_t)dev->sm_count;
    out->max_threads_per_block = (uint32_t)dev->max_threads_per_block;
    out->max_threads_per_sm = (uint32_t)dev->max_threads_per_sm;
    out->max_regs_per_block = (uint32_t)dev->max_regs_per_sm;
    out->max_regs_per_sm = (uint32_t)dev->max_regs_per_sm;
    out->max_smem_per_block = (uint32_t)dev->max_smem_per_block;
    out->max_smem_per_sm = (uint32_t)dev->max_smem_per_sm;
    out->max_blocks_per_sm = (uint32_t)dev->max_blocks_per_sm;
    out->peak_flops = dev->peak_gflops * 1e9;
    out->bandwidth = dev->mem_gbps * 1e9;
}

/* Calibration of the timing model per preset (the SM limits, peak and bandwidth are the
   scheduler's specification presets). See docs/SIMULATOR.md for where each number comes from. */
typedef struct opara__sim_calibration {
    const char* name;
    int32_t sm_saturation_threads;
    double mem_saturation, launch_us, event_us, graph_launch_us, graph_node_us, kernel_gap_us;
} opara__sim_calibration;

static const opara__sim_calibration opara__sim_calibrations[] = {
    /* sm_saturation_threads = 4 x FP32 lanes per SM (Little's law for a 4-cycle FMA pipe):
       64 lanes on Turing, Volta, GA100; 128 on Hopper and GA10B (Orin) */
    {"rtx2080s", 256, 0.25, 4.0, 1.5, 4.0, 0.5, 1.0},
    {"v100", 256, 0.25, 4.0, 1.5, 4.0, 0.5, 1.0},
    {"a100", 256, 0.25, 4.0, 1.5, 4.0, 0.5, 1.0},
    {"h100", 512, 0.25, 3.0, 1.0, 3.0, 0.4, 0.8},
    {"orin", 512, 0.25, 8.0, 3.0, 8.0, 1.0, 2.0},
};

OPARADEF const char* opara_sim_device_preset_name(uint32_t index) {
    return index < OPARA__ARRAY_COUNT(opara__sim_calibrations) ? opara__sim_calibrations[index].name : NULL;
}

OPARADEF opara_result opara_sim_device_preset(const char* name, opara_sim_device* out) {
    size_t i;
    const opara__device* spec;
    if (!name || !out) return OPARA_ERR_INVALID_ARGS;
    for (i = 0; i < OPARA__ARRAY_COUNT(opara__sim_calibrations); ++i) {
        const opara__sim_calibration* c = &opara__sim_calibrations[i];
        if (strcmp(name, c->name) != 0) continue;
        spec = opara__device_preset(name);
        if (!spec) return OPARA_ERR_NOT_FOUND;
        memset(out, 0, sizeof *out);
        opara__format(out->name, sizeof out->name, "%s", c->name);
        out->sm_count = (int32_t)spec->sms;
        out->max_threads_per_sm = (int32_t)spec->max_threads_per_sm;
        out->max_regs_per_sm = (int32_t)spec->max_regs_per_sm;
        out->max_smem_per_sm = (int32_t)spec->max_smem_per_sm;
        out->max_blocks_per_sm = (int32_t)spec->max_blocks_per_sm;
        out->max_threads_per_block = (int32_t)spec->max_threads_per_block;
        out->max_smem_per_block = (int32_t)spec->max_smem_per_block;
        out->peak_gflops = spec->peak_flops / 1e9;
        out->mem_gbps = spec->bandwidth / 1e9;
        out->sm_saturation_threads = c->sm_saturation_threads;
        out->mem_saturation = c->mem_saturation;
        out->launch_us = c->launch_us;
        out->event_us = c->event_us;
        out->graph_launch_us = c->graph_launch_us;
        out->graph_node_us = c->graph_node_us;
        out->kernel_gap_us = c->kernel_gap_us;
        out->hw_queues = 8;
        return OPARA_OK;
    }
    return OPARA_ERR_NOT_FOUND;
}

typedef struct opara__sim_field {
    const char* key;
    int is_int;
    size_t offset;
} opara__sim_field;

#define OPARA__SIM_INT(f) {#f, 1, offsetof(opara_sim_device, f)}
#define OPARA__SIM_DBL(f) {#f, 0, offsetof(opara_sim_device, f)}
static const opara__sim_field opara__sim_fields[] = {
    OPARA__SIM_INT(sm_count), OPARA__SIM_INT(max_threads_per_sm), OPARA__SIM_INT(max_regs_per_sm),
    OPARA__SIM_INT(max_smem_per_sm), OPARA__SIM_INT(max_blocks_per_sm), OPARA__SIM_INT(max_threads_per_block),
    OPARA__SIM_INT(max_smem_per_block), OPARA__SIM_INT(sm_saturation_threads), OPARA__SIM_DBL(peak_gflops), OPARA__SIM_DBL(mem_gbps),
    OPARA__SIM_DBL(mem_saturation), OPARA__SIM_DBL(launch_us), OPARA__SIM_DBL(event_us),
    OPARA__SIM_DBL(graph_launch_us), OPARA__SIM_DBL(graph_node_us), OPARA__SIM_DBL(kernel_gap_us),
    OPARA__SIM_INT(hw_queues),
};
#undef OPARA__SIM_INT
#undef OPARA__SIM_DBL

/* Parses a decimal number (optional sign, digits, fraction, exponent) that fills [p, end). */
static int opara__sim_parse_number(const char* p, const char* end, double* out) {
    char buf[64];
    char* stop = NULL;
    size_t len = (size_t)(end - p);
    if (len == 0 || len >= sizeof buf) return 0;
    memcpy(buf, p, len);
    buf[len] = 0;
    *out = strtod(buf, &stop);
    return stop == buf + len && *out == *out && *out < 1e300 && *out > -1e300;
}

static opara_result opara__sim_set_field(opara_runtime* rt, opara_sim_device* out, const char* key, size_t key_len,
                                         const char* val, const char* val_end, uint32_t line) {
    size_t i;
    double v;
    if (key_len == 4 && memcmp(key, "base", 4) == 0) {
        char name[32];
        if ((size_t)(val_end - val) >= sizeof name) return opara__fail(rt, OPARA_ERR_NOT_FOUND, "sim device line %u: unknown base", line);
        memcpy(name, val, (size_t)(val_end - val));
        name[val_end - val] = 0;
        if (opara_sim_device_preset(name, out) != OPARA_OK)
            return opara__fail(rt, OPARA_ERR_NOT_FOUND, "sim device line %u: unknown base '%s'", line, name);
        return OPARA_OK;
    }
    if (key_len == 4 && memcmp(key, "name", 4) == 0) {
        if ((size_t)(val_end - val) >= sizeof out->name)
            return opara__fail(rt, OPARA_ERR_LIMIT_EXCEEDED, "sim device line %u: name longer than %u bytes", line,
                               (unsigned)sizeof out->name - 1);
        memset(out->name, 0, sizeof out->name);
        memcpy(out->name, val, (size_t)(val_end - val));
        return OPARA_OK;
    }
    for (i = 0; i < OPARA__ARRAY_COUNT(opara__sim_fields); ++i) {
        const opara__sim_field* f = &opara__sim_fields[i];
        if (strlen(f->key) != key_len || memcmp(f->key, key, key_len) != 0) continue;
        if (!opara__sim_parse_number(val, val_end, &v))
            return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "sim device line %u: '%s' needs a number", line, f->key);
        if (f->is_int) {
            if (v != floor(v) || v < 0 || v > 2147483647.0)
                return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "sim device line %u: '%s' needs a non-negative integer",
                                   line, f->key);
            *(int32_t*)(void*)((char*)out + f->offset) = (int32_t)v;
        } else {
            *(double*)(void*)((char*)out + f->offset) = v;
        }
        return OPARA_OK;
    }
    return opara__fail(rt, OPARA_ERR_NOT_FOUND, "sim device line %u: unknown key '%.*s'", line, (int)key_len, key);
}

static const char* opara__sim_trim_start(const char* p, const char* end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) ++p;
    return p;
}

static const char* opara__sim_trim_end(const char* start, const char* p) {
    while (p > start && (p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\r')) --p;
    return p;
}

OPARADEF opara_result opara_sim_device_parse(opara_runtime* rt, const char* text, size_t len, opara_sim_device* out) {
    const char* p = text;
    const char* end = text + len;
    uint32_t line = 0;
    opara_sim_device dev;
    opara_result r;
    if (!out || (!text && len > 0)) return OPARA_ERR_INVALID_ARGS;
    memset(&dev, 0, sizeof dev);
    dev.hw_queues = 8;
    dev.mem_saturation = 0.25;
    while (p < end) {
        const char* eol = (const char*)memchr(p, '\n', (size_t)(end - p));
        const char *hash, *eq, *key, *key_end, *val, *val_end;
        if (!eol) eol = end;
        ++line;
        hash = (const char*)memchr(p, '#', (size_t)(eol - p));
        val_end = hash ? hash : eol;
        key = opara__sim_trim_start(p, val_end);
        p = eol < end ? eol + 1 : end;
        if (key == val_end) continue;
        eq = (const char*)memchr(key, '=', (size_t)(val_end - key));
        if (!eq) return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "sim device line %u: expected 'key = value'", line);
        key_end = opara__sim_trim_end(key, eq);
        val = opara__sim_trim_start(eq + 1, val_end);
        val_end = opara__sim_trim_end(val, val_end);
        r = opara__sim_set_field(rt, &dev, key, (size_t)(key_end - key), val, val_end, line);
        if (r != OPARA_OK) return r;
    }
    if (!dev.name[0]) opara__format(dev.name, sizeof dev.name, "custom");
    if ((r = opara__sim_check_device(rt, &dev)) != OPARA_OK) return r;
    *out = dev;
    return OPARA_OK;
}

OPARADEF size_t opara_sim_device_format(const opara_sim_device* dev, char* dst, size_t cap) {
    size_t i, len = 0;
    char line[128];
    if (!dev) return 0;
    for (i = 0; i <= OPARA__ARRAY_COUNT(opara__sim_fields); ++i) {
        size_t n;
        if (i == 0) {
            n = opara__format(line, sizeof line, "name = %s\n", dev->name);
        } else {
            const opara__sim_field* f = &opara__sim_fields[i - 1];
            const char* field = (const char*)dev + f->offset;
            if (f->is_int) n = opara__format(line, sizeof line, "%s = %d\n", f->key, (int)*(const int32_t*)(const void*)field);
            else n = opara__format(line, sizeof line, "%s = %.17g\n", f->key, *(const double*)(const void*)field);
        }
        if (dst && len + n < cap) memcpy(dst + len, line, n + 1);
        else if (dst && cap > 0 && len < cap) dst[len] = 0;
        len += n;
    }
    return len;
}

#ifndef OPARA_NO_STDIO
#include <stdio.h>
OPARADEF opara_result opara_sim_device_load(opara_runtime* rt, const char* name_or_path, opara_sim_device* out) {
    FILE* f;
    char* text;
    long size;
    opara_result r;
    if (!name_or_path || !out) return OPARA_ERR_INVALID_ARGS;
    if (opara_sim_device_preset(name_or_path, out) == OPARA_OK) return OPARA_OK;
    f = opara__fopen(name_or_path, "rb");
    if (!f) return opara__fail(rt, OPARA_ERR_NOT_FOUND, "sim device '%s': not a preset and not a readable file", name_or_path);
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || size > (1 << 20) || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return opara__fail(rt, OPARA_ERR_IO, "sim device '%s': cannot size the file (or it is over 1 MiB)", name_or_path);
    }
    text = (char*)opara__alloc(rt, (size_t)size + 1);
    if (!text) {
        fclose(f);
        return opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "sim device '%s': out of memory", name_or_path);
    }
    r = fread(text, 1, (size_t)size, f) == (size_t)size ? OPARA_OK : OPARA_ERR_IO;
    fclose(f);
    if (r != OPARA_OK) opara__fail(rt, r, "sim device '%s': read failed", name_or_path);
    else r = opara_sim_device_parse(rt, text, (size_t)size, out);
    opara__free(rt, text);
    return r;
}
#endif

/* ---- Chrome trace ---------------------------------------------------------------------------- */

static void opara__sim_json_string(const char* s, void (*write)(const char*, size_t, void*), void* user) {
    char buf[8];
    write("\"", 1, user);
    for (; *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            buf[0] = '\\';
            buf[1] = (char)c;
            write(buf, 2, user);
        } else if (c < 0x20) {
            write(buf, opara__format(buf, sizeof buf, "\\u%04x", c), user);
        } else {
            write(s, 1, user);
        }
    }
    write("\"", 1, user);
}

OPARADEF void opara_sim_trace_write(const opara_sim_result* result, const char* const* op_names,
                                    void (*write)(const char* text, size_t len, void* user), void* user) {
    char buf[256];
    uint32_t i;
    if (!result || !write) return;
    write(buf, opara__format(buf, sizeof buf,
                             "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
                             "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"SIMULATED %s (%s)\"}}",
                             result->device.name, result->mode == OPARA_SIM_EAGER ? "eager" : "graph"), user);
    for (i = 0; i < result->n_streams; ++i)
        write(buf, opara__format(buf, sizeof buf,
                                 ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%u,\"args\":{\"name\":\"stream %u\"}}",
                                 i, i), user);
    for (i = 0; i < result->n_ops; ++i) {
        const opara_sim_op_time* o = &result->ops[i];
        char fallback[32];
        if (o->blocks == 0) continue;
        opara__format(fallback, sizeof fallback, "op%u", i);
        write(",\n{\"name\":", 10, user);
        opara__sim_json_string(op_names && op_names[i] ? op_names[i] : fallback, write, user);
        write(buf, opara__format(buf, sizeof buf,
                                 ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
                                 "\"args\":{\"ready_us\":%.3f,\"blocks\":%u}}",
                                 o->memory_bound ? "memory" : "compute", o->stream, o->start_us, o->end_us - o->start_us,
                                 o->ready_us, o->blocks), user);
    }
    for (i = 0; i < result->n_samples; ++i)
        write(buf, opara__format(buf, sizeof buf,
                                 ",\n{\"name\":\"busy SMs\",\"ph\":\"C\",\"pid\":1,\"ts\":%.3f,\"args\":{\"busy\":%u}}",
                                 result->sample_us[i], result->busy_sms[i]), user);
    write("\n]}\n", 4, user);
}
