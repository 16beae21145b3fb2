/* The CUDA profiler (src/cuda/opara_cuda_profile.c) on the CUDA emulator (or a real driver with
   OPARA_CUDA_DRIVER): static descriptors of our kernels against the PTX (parsed here, independently
   of the emulator's parser) and ptxas's resource table; library kernels fall back to the documented
   estimates when CUPTI is absent or unusable, logged once; a profiling run times every node, the
   replanned plan passes the verifier, outputs match the CPU backend, and later runs allocate
   nothing; a cuDNN whose first call on a handle is slow (tests/cuda_cold_cudnn.c) leaves the
   profiled times untouched (warm-up, median of the timed runs). Models come from build/zoo
   (`make zoo`); a missing one is a skip. */
#define _GNU_SOURCE
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"

#include <dlfcn.h>

#include "cuda_test_env.h"
#define ZOO_DIR "build/zoo"

/* libcupti (NVIDIA's, loaded by the profiling run) keeps allocations we do not own. */
const char* __lsan_default_suppressions(void);
const char* __lsan_default_suppressions(void) { return "leak:libcupti\n"; }

/* 1 when the driver is the emulator (it exports its control API). */
static int on_emulator(void) {
    void* h = dlopen(driver_path(), RTLD_NOW);
    int yes = h && dlsym(h, "opara_emu_config") != NULL;
    if (h) dlclose(h);
    return yes;
}

/* ---- a runtime that counts host allocations and CUPTI log lines ---------------------------------- */

typedef struct counters {
    long allocs;
    int cupti_lines;
} counters;

static void* count_alloc(size_t size, size_t alignment, void* user) {
    void* p = NULL;
    ((counters*)user)->allocs++;
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    return posix_memalign(&p, alignment, size ? size : 1) == 0 ? p : NULL;
}
static void count_free(void* p, void* user) {
    (void)user;
    free(p);
}
static void count_log(opara_log_level level, opara_log_item item, const char* msg, void* user) {
    (void)level;
    (void)item;
    if (strstr(msg, "CUPTI")) ((counters*)user)->cupti_lines++;
}

typedef struct zoo {
    counters c;
    opara_runtime* rt;
    opara_model* model;
} zoo;

static int zoo_open(zoo* z, const char* name, char* why, size_t cap) {
    opara_runtime_desc rd;
    char path[256];
    memset(z, 0, sizeof *z);
    memset(&rd, 0, sizeof rd);
    rd.allocator.alloc_fn = count_alloc;
    rd.allocator.free_fn = count_free;
    rd.allocator.user_data = &z->c;
    rd.logger.func = count_log;
    rd.logger.max_level = OPARA_LOG_DEBUG;
    rd.logger.user_data = &z->c;
    if (opara_runtime_create(&rd, &z->rt) != OPARA_OK) {
        snprintf(why, cap, "runtime");
        return 0;
    }
    snprintf(path, sizeof path, "%s/%s.onnx", ZOO_DIR, name);
    if (opara_model_load_onnx_file(z->rt, path, NULL, &z->model) != OPARA_OK) {
        snprintf(why, cap, "%s", opara_runtime_last_error(z->rt));
        return 0;
    }
    return 1;
}

/* A zoo model that does not load: a skip, or a failure under OPARA_REQUIRE_ZOO=1 (make test-gpu). */
static void zoo_missing(opara_test* T, const char* name, const char* why) {
    const char* req = getenv("OPARA_REQUIRE_ZOO");
    if (req && *req && strcmp(req, "0") != 0) {
        OT_LOG("%s: %s (OPARA_REQUIRE_ZOO=1: a missing model is a failure)", name, why);
        CHECK(0);
    } else {
        printf("SKIP %s: %s\n", name, why);
    }
}

static void zoo_close(zoo* z) {
    opara_model_destroy(z->model);
    opara_runtime_destroy(z->rt);
}

/* cuDNN as OPARA_CUDNN or the search list say (not forced to the emulator's). */
static opara__cuda_options options(opara__cuda_mode mode) {
    opara__cuda_options o = cuda_test_options(mode);
    o.cudnn_path = NULL;
    return o;
}

/* ---- our own reading of the embedded PTX ----------------------------------------------------------- */

/* Bytes of the .shared declarations inside the body of .entry `name` ("[.align A] .b8 x[N]") in one PTX
   text; -1 when it has no such entry. */
static long ptx_text_static_shared(const char* line, const char* name) {
    int inside = 0;
    long bytes = 0;
    for (; *line; line += strcspn(line, "\n"), line += *line == '\n') {
        size_t len = strcspn(line, "\n");
        const char* entry = strstr(line, ".entry ");
        const char* open;
        if (entry && entry < line + len) {
            if (inside) return bytes;
            entry += 7;
            inside = strncmp(entry, name, strlen(name)) == 0 && entry[strlen(name)] == '(';
            continue;
        }
        if (!inside || strncmp(line, ".shared .align", 14) != 0) continue;
        for (open = line + len; open > line && *open != '['; --open) {
        }
        if (*open == '[') bytes += strtol(open + 1, NULL, 10);
    }
    return inside ? bytes : -1;
}

/* The same in the embedded PTX (each kernel file unpacked); -1 when no kernel file has the entry. */
static long ptx_static_shared(const char* name) {
    size_t f;
    long bytes = -1;
    for (f = 0; f < OPARA__ARRAY_COUNT(opara__kernel_images) && bytes < 0; ++f) {
        const opara__kernel_image* img = &opara__kernel_images[f];
        char* ptx = (char*)malloc(img->ptx_size + 1);
        if (!ptx || opara__ptx_unpack(img->packed, img->packed_size, ptx, img->ptx_size, NULL) != OPARA__PTX_UNPACKED) {
            free(ptx);
            return -2;
        }
        ptx[img->ptx_size] = 0;
        bytes = ptx_text_static_shared(ptx, name);
        free(ptx);
    }
    return bytes;
}

static const opara__kernel_resources* ptxas_row(const char* name) {
    size_t i;
    for (i = 0; i < OPARA__ARRAY_COUNT(opara__kernel_resource_table); ++i)
        if (strcmp(opara__kernel_resource_table[i].entry, name) == 0) return &opara__kernel_resource_table[i];
    return NULL;
}

static uint32_t ceil_div(int64_t a, int64_t b) { return (uint32_t)((a + b - 1) / b); }

/* ---- tests -------------------------------------------------------------------------------------- */

OT_TEST(library_estimate_is_the_documented_tile) {
    opara__cuda_op_profile p;
    opara__cuda_library_estimate(OPARA__CULIB_GEMM, 300, 129, 2, &p);
    CHECK_EQ(3 * 2 * 2, p.grid[0] * p.grid[1] * p.grid[2]);
    CHECK_EQ(256, p.block[0] * p.block[1] * p.block[2]);
    CHECK_EQ(128, p.regs);
    CHECK_EQ(2 * (128 * 8 + 8 * 128) * 4, p.smem_static);
    CHECK_EQ(OPARA__CURES_ESTIMATE, p.source);
    opara__cuda_library_estimate(OPARA__CULIB_CONV, 56 * 56, 64, 1, &p);
    CHECK_EQ(25 * 1, p.grid[0]);
    CHECK(strstr(p.kernel, "cuDNN") != NULL);
}

/* The sgemm kernel declares two OPARA__TILE x (OPARA__TILE + 1) float tiles (epilogue.cu, tile 16). */
OT_TEST(our_ptx_parse_agrees_with_the_kernel_source_and_ptxas) {
    const opara__kernel_resources* r = ptxas_row("opara_sgemm_f32");
    CHECK_EQ(2 * 16 * 17 * 4, ptx_static_shared("opara_sgemm_f32"));
    CHECK_EQ(256 * 4, ptx_static_shared("opara_softmax_f32")); /* norm.cu: OPARA__NORM_THREADS floats */
    CHECK_EQ(0, ptx_static_shared("opara_unary_f32"));
    REQUIRE(r != NULL);
    CHECK_EQ(r->static_shared_bytes, ptx_static_shared("opara_sgemm_f32"));
}

/* Every node's row against the driver's answer for its kernel: static shared memory = the PTX's
   .shared bytes, registers = ptxas's count (what the emulator reports; a real driver reports the
   count of the JIT-compiled SASS, so that check runs on the emulator only), grid/block = the launch. */
static void check_static_rows(opara_test* T, const char* name, int* n_driver, int* n_library) {
    zoo z;
    char why[1200];
    opara__cuda_options o = options(OPARA__CUDA_GRAPH);
    opara__cuda_session* s = NULL;
    opara__cuda_info info;
    const opara__graph* g;
    uint32_t n;
    int emu = on_emulator();
    if (!zoo_open(&z, name, why, sizeof why)) {
        zoo_missing(T, name, why);
        zoo_close(&z);
        return;
    }
    g = &z.model->graph;
    if (opara__cuda_session_create(z.rt, g, &o, &s) != OPARA_OK) {
        OT_LOG("%s: %s", name, opara_runtime_last_error(z.rt));
        CHECK(0);
        zoo_close(&z);
        return;
    }
    opara__cuda_session_info(s, &info);
    REQUIRE(info.profile != NULL);
    for (n = 0; n < g->n_nodes; ++n) {
        const opara__cuda_op_profile* row = &info.profile[n];
        const opara__cuda_launch* L = info.launches + info.node_launch_start[n];
        CHECK_EQ(0, row->measured);
        if (row->source == OPARA__CURES_DRIVER) {
            const opara__kernel_resources* pr = ptxas_row(row->kernel);
            ++*n_driver;
            CHECK_EQ(ptx_static_shared(row->kernel), row->smem_static);
            CHECK_EQ(0, row->smem_dynamic);
            CHECK(row->max_threads >= row->block[0] * row->block[1] * row->block[2]);
            if (emu && pr) CHECK_EQ(pr->registers, row->regs);
            CHECK(row->regs > 0);
            while (L->type != OPARA__CULAUNCH_KERNEL) ++L;
            CHECK_STR(opara__cuda_kernel_name((opara__cuda_kernel)L->kernel), row->kernel);
            CHECK_EQ(L->grid[0] * L->grid[1] * L->grid[2], row->grid[0] * row->grid[1] * row->grid[2]);
            CHECK_EQ(L->block[0], row->block[0]);
        } else if (row->source == OPARA__CURES_ESTIMATE) {
            /* one 128x128 tile per block: cuBLAS over the [.., M, N] output; a cuDNN convolution over
               M = N*spatial pixels and N = K/group channels, per group */
            const opara__shape* y = &info.shapes[g->nodes[n].outputs[0]];
            int64_t m = y->ndim >= 2 ? y->dims[y->ndim - 2] : 1, cols = y->dims[y->ndim - 1], batch = 1;
            int32_t d;
            if (g->nodes[n].op == OPARA__OP_CONV) {
                batch = opara__attr_int(&g->nodes[n], "group", 1);
                cols = y->dims[1] / batch;
                for (m = 1, d = 0; d < y->ndim; ++d)
                    if (d != 1) m *= y->dims[d];
            } else {
                for (d = 0; d + 2 < y->ndim; ++d) batch *= y->dims[d];
            }
            ++*n_library;
            CHECK_EQ(ceil_div(m, 128) * ceil_div(cols, 128) * (uint32_t)batch, row->grid[0]);
            CHECK_EQ(256, row->block[0]);
            CHECK_EQ(16384, row->smem_static);
        } else if (row->source == OPARA__CURES_NONE) {
            CHECK(info.node_launch_start[n] == info.node_launch_start[n + 1]);
        }
    }
    opara__cuda_session_destroy(s);
    zoo_close(&z);
}

OT_TEST(static_descriptors_come_from_cufuncgetattribute) {
    char why[1200];
    int n_driver = 0, n_library = 0;
    if (!opara__cuda_available(driver_path(), why, sizeof why)) SKIP("no CUDA driver: %s", why);
    check_static_rows(T, "squeezenet", &n_driver, &n_library);
    check_static_rows(T, "deepfm", &n_driver, &n_library);
    printf("static rows: %d of our kernels, %d library estimates\n", n_driver, n_library);
    CHECK(n_driver > 0);
}

static double nmse(const float* ref, const float* got, size_t n) {
    double num = 0, den = 0;
    size_t i;
    for (i = 0; i < n; ++i) {
        double d = (double)ref[i] - (double)got[i];
        num += d * d;
        den += (double)ref[i] * (double)ref[i];
    }
    return den > 0 ? num / den : num;
}

/* A profiled session of `name`; checks the rows, the plan and the outputs against the CPU backend. */
static void check_profiled(opara_test* T, const char* name, const char* cupti_path) {
    zoo z;
    char why[1200];
    opara__cuda_options o = options(OPARA__CUDA_GRAPH), plain_o = options(OPARA__CUDA_GRAPH);
    opara__cuda_session *s = NULL, *plain = NULL;
    opara__cuda_info info, plain_info;
    opara_session* cpu = NULL;
    opara_session_desc d;
    const opara__graph* g;
    const void** ins = NULL;
    void** outs = NULL;
    uint32_t n, i, measured = 0, library = 0;
    int run;
    long allocs_before;
    if (!zoo_open(&z, name, why, sizeof why)) {
        zoo_missing(T, name, why);
        zoo_close(&z);
        return;
    }
    g = &z.model->graph;
    o.profile = 1;
    o.cupti_path = cupti_path;
    if (opara__cuda_session_create(z.rt, g, &o, &s) != OPARA_OK) {
        OT_LOG("%s: %s", name, opara_runtime_last_error(z.rt));
        CHECK(0);
        zoo_close(&z);
        return;
    }
    CHECK_EQ(1, z.c.cupti_lines); /* CUPTI absent or unusable: said once */
    opara__cuda_session_info(s, &info);
    for (n = 0; n < g->n_nodes; ++n) {
        const opara__cuda_op_profile* row = &info.profile[n];
        if (row->source == OPARA__CURES_ESTIMATE) ++library;
        if (row->measured) {
            ++measured;
            CHECK(row->time_ms > 0);
        } else if (row->source == OPARA__CURES_DRIVER || row->source == OPARA__CURES_ESTIMATE) {
            /* only a Concat whose inputs were all written in place launches nothing */
            CHECK_EQ(OPARA__OP_CONCAT, g->nodes[n].op);
        }
    }
    CHECK_EQ(OPARA__METRIC_TIME, info.plan->desc.metric);
    CHECK_EQ(OPARA_OK, opara__plan_verify(g, info.plan));
    printf("%-12s profiled: %u of %u nodes timed, %u library estimates, %u streams\n", name, measured, g->n_nodes,
           library, info.plan->n_streams);
    CHECK(measured > 0);

    /* outputs against the CPU backend; later runs allocate nothing and make the driver calls of
       an unprofiled session */
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CPU;
    REQUIRE(opara_session_create(z.rt, z.model, &d, &cpu) == OPARA_OK);
    ins = (const void**)calloc(g->n_inputs + 1, sizeof *ins);
    outs = (void**)calloc(g->n_outputs + 1, sizeof *outs);
    REQUIRE(ins && outs);
    for (i = 0; i < g->n_inputs; ++i) {
        uint64_t bytes, k;
        const opara__shape* sh = &info.shapes[g->inputs[i]];
        int32_t q;
        bytes = opara_dtype_size(g->values[g->inputs[i]].dtype);
        for (q = 0; q < sh->ndim; ++q) bytes *= (uint64_t)sh->dims[q];
        ins[i] = calloc(bytes + 4, 1);
        REQUIRE(ins[i] != NULL);
        for (k = 0; k + 4 <= bytes && g->values[g->inputs[i]].dtype == OPARA_DTYPE_F32; k += 4)
            ((float*)ins[i])[k / 4] = (float)((k / 4) % 17) / 17.0f - 0.4f;
    }
    {
        opara_tensor* tin = (opara_tensor*)calloc(g->n_inputs + 1, sizeof *tin);
        REQUIRE(tin != NULL);
        for (i = 0; i < g->n_inputs; ++i) {
            opara_tensor_info ti;
            opara_session_input_info(cpu, i, &ti);
            tin[i].name = ti.name;
            tin[i].dtype = ti.dtype;
            tin[i].rank = ti.rank;
            memcpy(tin[i].dims, ti.dims, sizeof tin[i].dims);
            tin[i].data = (void*)ins[i];
        }
        CHECK_EQ(OPARA_OK, opara_session_run(cpu, tin, g->n_inputs, NULL, 0));
        free(tin);
    }
    for (i = 0; i < g->n_outputs; ++i) {
        outs[i] = calloc((size_t)info.plan->arena_bytes + 16, 1); /* larger than any output */
        REQUIRE(outs[i] != NULL);
    }
    REQUIRE(opara__cuda_session_create(z.rt, g, &plain_o, &plain) == OPARA_OK);
    for (run = 0; run < 2; ++run) {
        allocs_before = z.c.allocs;
        CHECK_EQ(OPARA_OK, opara__cuda_session_run(s, ins, outs));
        CHECK_EQ(allocs_before, z.c.allocs);
    }
    for (i = 0; i < g->n_outputs; ++i) {
        opara_tensor_info ti;
        size_t count = 1;
        int32_t q;
        double e;
        opara_session_output_info(cpu, i, &ti);
        for (q = 0; q < ti.rank; ++q) count *= (size_t)ti.dims[q];
        if (ti.dtype != OPARA_DTYPE_F32) continue;
        e = nmse((const float*)opara_session_output_data(cpu, i), (const float*)outs[i], count);
        printf("%-12s output %s: NMSE vs CPU %.2e\n", name, ti.name, e);
        CHECK(e <= 1e-8);
    }
    CHECK_EQ(OPARA_OK, opara__cuda_session_run(plain, ins, outs));
    opara__cuda_session_info(s, &info);
    opara__cuda_session_info(plain, &plain_info);
    CHECK_EQ(plain_info.driver_calls_last_run, info.driver_calls_last_run);
    for (i = 0; i < g->n_inputs; ++i) free((void*)ins[i]);
    for (i = 0; i < g->n_outputs; ++i) free(outs[i]);
    free(ins);
    free(outs);
    opara__cuda_session_destroy(plain);
    opara__cuda_session_destroy(s);
    opara_session_destroy(cpu);
    zoo_close(&z);
}

OT_TEST(cupti_absent_keeps_the_estimates_and_says_so_once) {
    char why[1200];
    if (!opara__cuda_available(driver_path(), why, sizeof why)) SKIP("no CUDA driver: %s", why);
    check_profiled(T, "deepfm", "/nonexistent/libcupti.so.13");
}

/* The default search list: on the emulator NVIDIA's libcupti (when installed) loads but cannot
   enable activity records for a driver it does not know, which is the same fallback. */
OT_TEST(profiling_run_times_every_node_and_the_replanned_plan_is_sound) {
    char why[1200];
    if (!opara__cuda_available(driver_path(), why, sizeof why)) SKIP("no CUDA driver: %s", why);
    if (!on_emulator()) SKIP("on a real GPU CUPTI may work: the fallback count does not apply");
    check_profiled(T, "squeezenet", NULL);
}

/* ---- first-use costs --------------------------------------------------------------------------- */

/* x [1,4,8,8] -> Conv 3x3 (bias) -> Relu -> Conv 3x3 -> y: both convolutions go to cuDNN. */
static opara_model* two_conv_model(opara_runtime* rt) {
    static float w[4 * 4 * 9], b[4];
    int64_t xd[4] = {1, 4, 8, 8}, wd[4] = {4, 4, 3, 3}, bd[1] = {4}, pads[4] = {1, 1, 1, 1};
    const char *c1[3] = {"x", "w1", "b1"}, *r1[1] = {"c1"}, *c2[2] = {"r1", "w2"};
    const char *o1[1] = {"c1"}, *o2[1] = {"r1"}, *o3[1] = {"y"};
    opara_attr pad;
    opara_builder* b_ = NULL;
    opara_model* m = NULL;
    int i;
    for (i = 0; i < 4 * 4 * 9; ++i) w[i] = (float)((i * 7) % 11) / 11.0f - 0.5f;
    for (i = 0; i < 4; ++i) b[i] = 0.1f * (float)i;
    memset(&pad, 0, sizeof pad);
    pad.name = "pads", pad.type = OPARA_ATTR_INTS, pad.count = 4, pad.v.ints = pads;
    if (opara_builder_create(rt, &b_) != OPARA_OK) return NULL;
    opara_builder_add_input(b_, "x", OPARA_DTYPE_F32, 4, xd);
    opara_builder_add_constant(b_, "w1", OPARA_DTYPE_F32, 4, wd, w, sizeof w);
    opara_builder_add_constant(b_, "b1", OPARA_DTYPE_F32, 1, bd, b, sizeof b);
    opara_builder_add_constant(b_, "w2", OPARA_DTYPE_F32, 4, wd, w, sizeof w);
    opara_builder_add_node(b_, "Conv", "conv1", 3, c1, 1, o1, 1, &pad);
    opara_builder_add_node(b_, "Relu", "relu1", 1, r1, 1, o2, 0, NULL);
    opara_builder_add_node(b_, "Conv", "conv2", 2, c2, 1, o3, 1, &pad);
    opara_builder_add_output(b_, "y");
    if (opara_builder_finish(b_, &m) != OPARA_OK) m = NULL;
    opara_builder_destroy(b_);
    return m;
}

/* A cuDNN whose first convolution on a handle sleeps COLD_MS (tests/cuda_cold_cudnn.c, forwarding to
   the cuDNN the tests use): the profiled times, which the plan uses, must not contain that sleep. A
   profiler that times the first (cold) pass gives the first convolution >= COLD_MS and fails here. */
#define COLD_MS 300
OT_TEST(first_run_costs_stay_out_of_the_plan) {
    char why[1200];
    opara_runtime* rt = NULL;
    opara_model* m;
    opara__cuda_options o = cuda_test_options(OPARA__CUDA_EAGER);
    opara__cuda_session* s = NULL;
    opara__cuda_info info;
    void *shim, *real;
    void (*configure)(int) = NULL;
    int (*sleeps)(void) = NULL;
    int before;
    uint32_t n, timed = 0;
    if (!opara__cuda_available(driver_path(), why, sizeof why)) SKIP("no CUDA driver: %s", why);
    real = dlopen(cudnn_path(), RTLD_NOW | RTLD_LOCAL);
    if (!real) SKIP("cuDNN %s does not load: %s", cudnn_path(), dlerror());
    dlclose(real);
    setenv("OPARA_COLD_CUDNN_REAL", cudnn_path(), 1); /* the cuDNN behind the shim */
    shim = dlopen(OPARA_COLD_CUDNN, RTLD_NOW | RTLD_LOCAL);
    if (!shim) SKIP("%s does not load: %s", OPARA_COLD_CUDNN, dlerror());
    *(void**)(&configure) = dlsym(shim, "opara_cold_configure");
    *(void**)(&sleeps) = dlsym(shim, "opara_cold_sleeps");
    REQUIRE(configure && sleeps);
    configure(COLD_MS);
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    m = two_conv_model(rt);
    REQUIRE(m != NULL);
    o.cudnn_path = OPARA_COLD_CUDNN;
    o.cupti_path = "none";
    o.profile = 1;
    before = sleeps();
    if (opara__cuda_session_create(rt, opara__model_graph(m), &o, &s) != OPARA_OK) {
        OT_LOG("%s", opara_runtime_last_error(rt));
        CHECK(0);
    } else {
        opara__cuda_session_info(s, &info);
        CHECK_EQ(2, info.n_cudnn_convs); /* the shim served the convolutions */
        CHECK(sleeps() > before);        /* and its first call slept during the profiling */
        for (n = 0; n < opara__model_graph(m)->n_nodes; ++n) {
            const opara__cuda_op_profile* row = &info.profile[n];
            if (!row->measured) continue;
            ++timed;
            printf("node %u %-6s %8.3f ms (spread %.0f%%, %u timed runs)\n", n, opara_model_node_op(m, n), row->time_ms,
                   row->time_spread * 100, (unsigned)row->n_runs);
            CHECK(row->time_ms < COLD_MS / 2);
            CHECK(row->n_runs >= 5);
            CHECK(row->time_spread >= 0);
        }
        CHECK_EQ(3, timed);
        opara__cuda_session_destroy(s);
    }
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
    configure(50);
    dlclose(shim);
}

static const opara_test_case tests[] = {
    OT_CASE(library_estimate_is_the_documented_tile),
    OT_CASE(our_ptx_parse_agrees_with_the_kernel_source_and_ptxas),
    OT_CASE(static_descriptors_come_from_cufuncgetattribute),
    OT_CASE(cupti_absent_keeps_the_estimates_and_says_so_once),
    OT_CASE(profiling_run_times_every_node_and_the_replanned_plan_is_sound),
    /* last: the cuDNN it loads answers later dlopen calls by its soname (libcudnn.so.9) */
    OT_CASE(first_run_costs_stay_out_of_the_plan),
};

int main(int argc, char** argv) {
    setenv("OPARA_CUDA_DRIVER", driver_path(), 0);
    return opara_test_main(argc, argv, tests, OT_COUNT(tests));
}
