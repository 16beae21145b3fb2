/* opara_kernel.h - the restricted CUDA C dialect of opara's kernels (the .cu files in src/cuda/kernels).
 *
 * One source, three builds:
 *   nvcc -ptx / NVRTC   every entry point becomes  extern "C" __global__ void name(params)
 *   host C/C++ compiler every entry point becomes  a static C function, plus a trampoline that unpacks
 *                       cuLaunchKernel's `void** kernelParams` and a registry entry {name, trampoline,
 *                       parameter sizes and type names}, found by the PTX `.entry` name
 *                       (tests/cudaemu executes kernels this way; see docs/TESTING-GPU.md).
 *
 * The dialect (anything else is not allowed in a kernel file):
 *   - C99 statements and expressions that are also valid C++11; no includes other than this header;
 *     no globals except `const` tables; no recursion; no function pointers; no printf.
 *   - Entry points:      OPARA_KERNEL(name, (type, arg), (type, arg), ...) { body }
 *                        1 to 24 parameters; a type is a scalar (int, unsigned, float, long long ...)
 *                        or a pointer to one (device memory); structs by value are not allowed.
 *                        Entry names start with `opara_` and are unique over all kernel files.
 *   - Device helpers:    OPARA_DEVICE float helper(float x) { ... }      (file-local inline function)
 *   - Built-ins:         threadIdx, blockIdx, blockDim, gridDim (.x .y .z, unsigned int), warpSize.
 *   - Shared memory:     OPARA_SHARED(type, name, count);          a 1-D __shared__ array
 *                        OPARA_SHARED_2D(type, name, rows, cols);  a 2-D __shared__ array
 *                        OPARA_DYNAMIC_SHARED(type, name);         the launch's dynamic shared memory
 *                        Declare them at the top of the kernel body, unconditionally, in the same order
 *                        for every thread. Their contents are undefined at block start.
 *   - Barrier:           __syncthreads(), reached by every thread of the block or by none (as in CUDA).
 *                        Warp-synchronous code (shuffles, votes, relying on lock-step warps) is not
 *                        allowed: the host build runs each thread separately.
 *   - Math:              the float functions of C99 <math.h> that CUDA also provides (expf, logf, sqrtf,
 *                        tanhf, erff, powf, fabsf, fmaxf, fminf, floorf, ceilf, ...); OPARA_INF_F32.
 *   - Atomics:           opara_atomic_add_f32(float* p, float v), opara_atomic_add_i32(int* p, int v)
 *                        (both return the old value).
 *
 * Host execution model (tests/cudaemu/emu_exec.c): the blocks of a launch run one after the other on one
 * emulator thread; inside a block, thread 0 starts on a fiber (its own stack). If it finishes without a
 * __syncthreads() or shared-memory declaration, the block's other threads run as plain calls (fast path for
 * elementwise kernels); otherwise every thread of the block gets a fiber and the barrier switches between
 * them, in a seeded random thread order per phase.
 */
#ifndef OPARA_KERNEL_H
#define OPARA_KERNEL_H

/* ---- parameter-list plumbing: OPARA__MAP(M, (T,a), (T,b), ...) -> M(0,(T,a)), M(1,(T,b)), ... ---- */
#define OPARA__CAT_(a, b) a##b
#define OPARA__CAT(a, b) OPARA__CAT_(a, b)
#define OPARA__NARGS(...) OPARA__NARGS_((__VA_ARGS__, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0))
#define OPARA__NARGS_(t) OPARA__NARGS_N t
#define OPARA__NARGS_N(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32, n, ...) n
#define OPARA__MAP_1(M, p1) M(0, p1)
#define OPARA__MAP_2(M, p1, p2) OPARA__MAP_1(M, p1), M(1, p2)
#define OPARA__MAP_3(M, p1, p2, p3) OPARA__MAP_2(M, p1, p2), M(2, p3)
#define OPARA__MAP_4(M, p1, p2, p3, p4) OPARA__MAP_3(M, p1, p2, p3), M(3, p4)
#define OPARA__MAP_5(M, p1, p2, p3, p4, p5) OPARA__MAP_4(M, p1, p2, p3, p4), M(4, p5)
#define OPARA__MAP_6(M, p1, p2, p3, p4, p5, p6) OPARA__MAP_5(M, p1, p2, p3, p4, p5), M(5, p6)
#define OPARA__MAP_7(M, p1, p2, p3, p4, p5, p6, p7) OPARA__MAP_6(M, p1, p2, p3, p4, p5, p6), M(6, p7)
#define OPARA__MAP_8(M, p1, p2, p3, p4, p5, p6, p7, p8) OPARA__MAP_7(M, p1, p2, p3, p4, p5, p6, p7), M(7, p8)
#define OPARA__MAP_9(M, p1, p2, p3, p4, p5, p6, p7, p8, p9) OPARA__MAP_8(M, p1, p2, p3, p4, p5, p6, p7, p8), M(8, p9)
#define OPARA__MAP_10(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10) OPARA__MAP_9(M, p1, p2, p3, p4, p5, p6, p7, p8, p9), M(9, p10)
#define OPARA__MAP_11(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11) OPARA__MAP_10(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10), M(10, p11)
#define OPARA__MAP_12(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12) OPARA__MAP_11(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11), M(11, p12)
#define OPARA__MAP_13(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13) OPARA__MAP_12(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12), M(12, p13)
#define OPARA__MAP_14(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14) OPARA__MAP_13(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13), M(13, p14)
#define OPARA__MAP_15(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15) OPARA__MAP_14(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14), M(14, p15)
#define OPARA__MAP_16(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16) OPARA__MAP_15(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15), M(15, p16)
#define OPARA__MAP_17(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17) OPARA__MAP_16(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16), M(16, p17)
#define OPARA__MAP_18(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18) OPARA__MAP_17(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17), M(17, p18)
#define OPARA__MAP_19(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, p19) OPARA__MAP_18(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18), M(18, p19)
#define OPARA__MAP_20(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, p19, p20) OPARA__MAP_19(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, p19), M(19, p20)
#define OPARA__MAP_21(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, p19, p20, p21) OPARA__MAP_20(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, p19, p20), M(20, p21)
#define OPARA__MAP_22(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, p19, p20, p21, p22) OPARA__MAP_21(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, p19, p20, p21), M(21, p22)
#define OPARA__MAP_23(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, p19, p20, p21, p22, p23) OPARA__MAP_22(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, p19, p20, p21, p22), M(22, p23)
#define OPARA__MAP_24(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, p19, p20, p21, p22, p23, p24) OPARA__MAP_23(M, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, p19, p20, p21, p22, p23), M(23, p24)
#define OPARA__MAP(M, ...) OPARA__CAT(OPARA__MAP_, OPARA__NARGS(__VA_ARGS__))(M, __VA_ARGS__)

#define OPARA__DECL_(T, a) T a
#define OPARA__M_DECL(i, p) OPARA__DECL_ p

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
/* ================================ device build (nvcc, NVRTC) ================================ */
#define OPARA_KERNEL(name, ...) extern "C" __global__ void name(OPARA__MAP(OPARA__M_DECL, __VA_ARGS__))
#define OPARA_DEVICE static __device__ __forceinline__
#define OPARA_SHARED(T, name, count) __shared__ T name[count]
#define OPARA_SHARED_2D(T, name, rows, cols) __shared__ T name[rows][cols]
#define OPARA_DYNAMIC_SHARED(T, name) extern __shared__ T name[]
#define OPARA_INF_F32 __int_as_float(0x7f800000)
OPARA_DEVICE float opara_atomic_add_f32(float* p, float v) { return atomicAdd(p, v); }
OPARA_DEVICE int opara_atomic_add_i32(int* p, int v) { return atomicAdd(p, v); }

#else
/* ====================================== host build ====================================== */
#include <math.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct opara_uint3 { unsigned int x, y, z; } opara_uint3;

/* What a kernel sees of the CUDA thread it runs as (owned by the executor). */
typedef struct opara_kernel_thread {
    opara_uint3 thread_idx, block_idx, block_dim, grid_dim;
    unsigned char* dynamic_shared;  /* the launch's dynamic shared memory */
} opara_kernel_thread;

typedef void (*opara_kernel_trampoline)(void* const* params);

/* Registry entry; every host-built kernel file registers its entries at load time. */
typedef struct opara_kernel_entry {
    const char* name;
    opara_kernel_trampoline trampoline;
    int param_count;
    const unsigned short* param_sizes;
    const char* const* param_types;      /* spelled as in the source, e.g. "const float*" */
    struct opara_kernel_entry* next;
} opara_kernel_entry;

/* Provided by the executor that links the host build (tests/cudaemu/emu_exec.c). */
extern __thread opara_kernel_thread* opara__kernel_current;
void opara_kernel_register(opara_kernel_entry* entry);
void opara__kernel_syncthreads(void);
void* opara__kernel_shared(size_t bytes);

#ifdef __cplusplus
}
#endif

#define threadIdx (opara__kernel_current->thread_idx)
#define blockIdx (opara__kernel_current->block_idx)
#define blockDim (opara__kernel_current->block_dim)
#define gridDim (opara__kernel_current->grid_dim)
#define warpSize 32
#define __syncthreads() opara__kernel_syncthreads()
#define OPARA_DEVICE static inline
#define OPARA_SHARED(T, name, count) T* name = (T*)opara__kernel_shared(sizeof(T) * (size_t)(count))
#define OPARA_SHARED_2D(T, name, rows, cols) \
    T(*name)[cols] = (T(*)[cols])opara__kernel_shared(sizeof(T) * (size_t)(rows) * (size_t)(cols))
#define OPARA_DYNAMIC_SHARED(T, name) T* name = (T*)(void*)opara__kernel_current->dynamic_shared
#define OPARA_INF_F32 ((float)INFINITY)

OPARA_DEVICE float opara_atomic_add_f32(float* p, float v) {
    float old = *p, want;
    union { float f; unsigned int u; } o, w;
    do {
        want = old + v;
        o.f = old;
        w.f = want;
        if (__atomic_compare_exchange_n((unsigned int*)(void*)p, &o.u, w.u, 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST))
            return old;
        old = o.f;
    } while (1);
}
OPARA_DEVICE int opara_atomic_add_i32(int* p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }

#define OPARA__M_ARG_(i, T, a) *(T*)params[i]
#define OPARA__APPLY(m, args) m args
#define OPARA__M_ARG(i, p) OPARA__APPLY(OPARA__M_ARG_, OPARA__ARGI(i, p))
#define OPARA__ARGI(i, p) (i, OPARA__UNPAREN p)
#define OPARA__UNPAREN(T, a) T, a
#define OPARA__SIZE_(T, a) (unsigned short)sizeof(T)
#define OPARA__M_SIZE(i, p) OPARA__SIZE_ p
#define OPARA__TYPE_(T, a) #T
#define OPARA__M_TYPE(i, p) OPARA__TYPE_ p

#define OPARA_KERNEL(name, ...)                                                                      \
    static void name(OPARA__MAP(OPARA__M_DECL, __VA_ARGS__));                                        \
    static void name##__opara_trampoline(void* const* params) {                                      \
        name(OPARA__MAP(OPARA__M_ARG, __VA_ARGS__));                                                 \
    }                                                                                                \
    static const unsigned short name##__opara_sizes[] = {OPARA__MAP(OPARA__M_SIZE, __VA_ARGS__)};    \
    static const char* const name##__opara_types[] = {OPARA__MAP(OPARA__M_TYPE, __VA_ARGS__)};      \
    static opara_kernel_entry name##__opara_entry = {                                                \
        #name, name##__opara_trampoline, (int)(sizeof(name##__opara_sizes) / sizeof(unsigned short)), \
        name##__opara_sizes, name##__opara_types, NULL};                                             \
    __attribute__((constructor)) static void name##__opara_register(void) {                          \
        opara_kernel_register(&name##__opara_entry);                                                 \
    }                                                                                                \
    static void name(OPARA__MAP(OPARA__M_DECL, __VA_ARGS__))

#endif /* host build */
/* Offset of element i in operand `which` (0-based, after the dims) of a meta block [ndim, dims,
 * each operand's strides] (the element-wise kernels and PRelu). */
OPARA_DEVICE long long opara__k_strided_offset(long long i, const int* meta, int which)
{
    int ndim = meta[0], d;
    const int* dims = meta + 1;
    const int* strides = meta + 1 + ndim * (1 + which);
    long long off = 0;
    for (d = ndim - 1; d >= 0; --d) {
        long long idx = i % dims[d];
        i /= dims[d];
        off += idx * strides[d];
    }
    return off;
}

/* Activation codes (act) and their parameters (a, b) of opara__k_act, the one activation helper of the
 * kernels (epilogue.cu's, opara_binary_f32); src/cuda/opara_backend_cuda.h mirrors them and
 * tests/test_cuda_kernels.c checks that both agree:
 *   0 none   1 Relu   2 LeakyRelu(a = alpha)   3 Sigmoid   4 Tanh   5 HardSigmoid(a = alpha, b = beta)
 *   6 HardSwish   7 Clip(a = min, b = max)   8 Sqrt   9 Erf   10 Gelu (erf)   11 Gelu (tanh approximation)
 */

/* x clamped to [lo, hi], a NaN x staying NaN (ONNX semantics; fminf/fmaxf would return the bound). */
OPARA_DEVICE float opara__k_clamp(float x, float lo, float hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}

/* Every activation propagates NaN, as ONNX Runtime and PyTorch do: comparisons are written so that
 * a NaN x fails them and falls through to x. */
OPARA_DEVICE float opara__k_act(float x, int act, float a, float b)
{
    switch (act) {
    case 1: return x < 0.0f ? 0.0f : x;
    case 2: return x >= 0.0f ? x : a * x;
    case 3: return 1.0f / (1.0f + expf(-x));
    case 4: return tanhf(x);
    case 5: return opara__k_clamp(a * x + b, 0.0f, 1.0f);
    case 6: return x * opara__k_clamp(x / 6.0f + 0.5f, 0.0f, 1.0f);
    case 7: return opara__k_clamp(x, a, b);
    case 8: return sqrtf(x);
    case 9: return erff(x);
    case 10: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case 11: return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
    default: return x;
    }
}

#endif /* OPARA_KERNEL_H */
