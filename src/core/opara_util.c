/* Memory through the allocator hook, checked arithmetic, little-endian access, text helpers. */
#include "opara_internal.h"

#include <stdio.h>
#include <stdlib.h>
#if defined(_WIN32)
#  include "../../opara_dl.h" /* <windows.h>, opara_dl_widen */
#endif

#if !defined(OPARA_MALLOC)
/* Over-allocates and keeps the malloc'd pointer just below the aligned block, so the default
   needs nothing beyond C99 (no posix_memalign or _aligned_malloc). */
static void* opara__default_aligned_alloc(size_t size, size_t alignment) {
    size_t total;
    uint8_t *raw, *aligned;
    if (!opara__add_size(size, alignment + sizeof(void*), &total)) return NULL;
    raw = (uint8_t*)malloc(total);
    if (!raw) return NULL;
    aligned = raw + sizeof(void*);
    aligned += (alignment - (size_t)((uintptr_t)aligned & (alignment - 1))) & (alignment - 1);
    memcpy(aligned - sizeof(void*), &raw, sizeof raw);
    return aligned;
}

static void opara__default_aligned_free(void* ptr) {
    void* raw;
    memcpy(&raw, (uint8_t*)ptr - sizeof(void*), sizeof raw);
    free(raw);
}
#  define OPARA_MALLOC(size, alignment) opara__default_aligned_alloc((size), (alignment))
#  define OPARA_FREE(ptr) opara__default_aligned_free(ptr)
#endif

OPARA__PRIVATE void* opara__alloc_aligned(const opara_allocator* a, size_t size, size_t alignment) {
    if (alignment < 16) alignment = 16;
    if (!opara__is_pow2(alignment)) return NULL;
    if (a && a->alloc_fn) return a->alloc_fn(size, alignment, a->user_data);
    return OPARA_MALLOC(size, alignment);
}

OPARA__PRIVATE void opara__free_aligned(const opara_allocator* a, void* ptr) {
    if (!ptr) return;
    if (a && a->free_fn) {
        a->free_fn(ptr, a->user_data);
        return;
    }
    OPARA_FREE(ptr);
}

OPARA__PRIVATE void* opara__alloc(opara_runtime* rt, size_t size) {
    return opara__alloc_aligned(rt ? &rt->allocator : NULL, size, 16);
}

OPARA__PRIVATE void* opara__calloc(opara_runtime* rt, size_t count, size_t size) {
    size_t total;
    void* p;
    if (!opara__mul_size(count, size, &total)) return NULL;
    p = opara__alloc(rt, total);
    if (p) memset(p, 0, total);
    return p;
}

OPARA__PRIVATE void opara__free(opara_runtime* rt, void* ptr) {
    opara__free_aligned(rt ? &rt->allocator : NULL, ptr);
}

OPARA__PRIVATE opara_result opara__grow(opara_runtime* rt, void** items, size_t* capacity, size_t need, size_t elem) {
    size_t cap = *capacity ? *capacity : 8;
    size_t bytes, old_bytes;
    void* bigger;
    if (need <= *capacity) return OPARA_OK;
    while (cap < need) {
        if (!opara__mul_size(cap, 2, &cap)) return OPARA_ERR_OUT_OF_MEMORY;
    }
    if (!opara__mul_size(cap, elem, &bytes)) return OPARA_ERR_OUT_OF_MEMORY;
    bigger = opara__alloc(rt, bytes);
    if (!bigger) return OPARA_ERR_OUT_OF_MEMORY;
    old_bytes = *capacity * elem;
    if (*items && old_bytes) memcpy(bigger, *items, old_bytes);
    memset((char*)bigger + old_bytes, 0, bytes - old_bytes);
    opara__free(rt, *items);
    *items = bigger;
    *capacity = cap;
    return OPARA_OK;
}

OPARA__PRIVATE int opara__add_size(size_t a, size_t b, size_t* out) {
    if (a > (size_t)-1 - b) return 0;
    *out = a + b;
    return 1;
}

OPARA__PRIVATE int opara__mul_size(size_t a, size_t b, size_t* out) {
    if (a != 0 && b > (size_t)-1 / a) return 0;
    *out = a * b;
    return 1;
}

OPARA__PRIVATE int opara__mul_i64(int64_t a, int64_t b, int64_t* out) {
    if (a < 0 || b < 0) return 0; /* only used for sizes; negative means invalid */
    if (a != 0 && b > INT64_MAX / a) return 0;
    *out = a * b;
    return 1;
}

OPARA__PRIVATE int opara__range_ok(uint64_t offset, uint64_t size, uint64_t total) {
    return offset <= total && size <= total - offset;
}

OPARA__PRIVATE int opara__is_pow2(size_t x) {
    return x != 0 && (x & (x - 1)) == 0;
}

OPARA__PRIVATE size_t opara__align_up(size_t x, size_t alignment) {
    return (x + alignment - 1) & ~(alignment - 1);
}

OPARA__PRIVATE uint16_t opara__rd_u16(const uint8_t* p) {
    return (uint16_t)(p[0] | (p[1] << 8));
}

OPARA__PRIVATE uint32_t opara__rd_u32(const uint8_t* p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

OPARA__PRIVATE uint64_t opara__rd_u64(const uint8_t* p) {
    return (uint64_t)opara__rd_u32(p) | ((uint64_t)opara__rd_u32(p + 4) << 32);
}

OPARA__PRIVATE void opara__wr_u16(uint8_t* p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

OPARA__PRIVATE void opara__wr_u32(uint8_t* p, uint32_t v) {
    opara__wr_u16(p, (uint16_t)v);
    opara__wr_u16(p + 2, (uint16_t)(v >> 16));
}

OPARA__PRIVATE void opara__wr_u64(uint8_t* p, uint64_t v) {
    opara__wr_u32(p, (uint32_t)v);
    opara__wr_u32(p + 4, (uint32_t)(v >> 32));
}

OPARA__PRIVATE size_t opara__format(char* dst, size_t cap, const char* fmt, ...) {
    va_list args;
    int n;
    if (cap == 0) return 0;
    va_start(args, fmt);
    n = opara__vsnprintf(dst, cap, fmt, args);
    va_end(args);
    if (n < 0) {
        dst[0] = 0;
        return 0;
    }
    return (size_t)n < cap ? (size_t)n : cap - 1;
}

OPARA__PRIVATE uint64_t opara__hash64(const void* data, size_t size, uint64_t seed) {
    const uint8_t* p = (const uint8_t*)data;
    uint64_t h = 0xcbf29ce484222325ull ^ seed;
    size_t i;
    for (i = 0; i < size; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

OPARA__PRIVATE float opara__f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu, bits;
    float f;
    if (exp == 0) { /* zero or subnormal: mant * 2^-24, exact in f32 */
        f = (float)mant * 5.9604644775390625e-8f;
        return sign ? -f : f;
    }
    bits = exp == 31 ? sign | 0x7F800000u | (mant << 13) : sign | ((exp + 112u) << 23) | (mant << 13);
    memcpy(&f, &bits, sizeof f);
    return f;
}

OPARA__PRIVATE uint16_t opara__f64_to_f16(double d) {
    uint64_t bits, sig, rem, half, value;
    uint16_t sign;
    int32_t e;
    uint32_t shift;
    memcpy(&bits, &d, sizeof bits);
    sign = (uint16_t)((bits >> 48) & 0x8000u);
    e = (int32_t)((bits >> 52) & 0x7FFu);
    sig = bits & 0xFFFFFFFFFFFFFull;
    if (e == 0x7FF) return (uint16_t)(sign | 0x7C00u | (sig ? 0x200u | (uint16_t)(sig >> 42) : 0u));
    if (e == 0) return sign; /* f64 subnormals are far below f16's smallest subnormal */
    e -= 1023;
    if (e > 15) return (uint16_t)(sign | 0x7C00u);
    sig |= 1ull << 52;
    /* normal f16: keep 10 of the 52 fraction bits; subnormal: shift further so that the unit is 2^-24 */
    shift = e >= -14 ? 42u : 42u + (uint32_t)(-14 - e);
    if (shift > 60) return sign;
    value = sig >> shift;
    rem = sig & ((1ull << shift) - 1);
    half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (value & 1))) value++;
    /* a normal result adds the biased exponent; a carry out of the mantissa moves into it (65520 and
       up become inf), a subnormal that rounds up to 2^-14 becomes the smallest normal the same way */
    if (e >= -14) value = ((uint64_t)(e + 15) << 10) + (value - 0x400u);
    return (uint16_t)(sign | (uint16_t)OPARA__MIN(value, 0x7C00u));
}

OPARADEF size_t opara_dtype_size(opara_dtype dtype) {
    switch (dtype) {
    case OPARA_DTYPE_F32: case OPARA_DTYPE_I32: return 4;
    case OPARA_DTYPE_I64: case OPARA_DTYPE_F64: return 8;
    case OPARA_DTYPE_F16: return 2;
    case OPARA_DTYPE_U8: case OPARA_DTYPE_I8: case OPARA_DTYPE_BOOL: return 1;
    default: return 0;
    }
}

OPARADEF const char* opara_dtype_name(opara_dtype dtype) {
    switch (dtype) {
    case OPARA_DTYPE_F32: return "f32";
    case OPARA_DTYPE_U8: return "u8";
    case OPARA_DTYPE_I8: return "i8";
    case OPARA_DTYPE_I32: return "i32";
    case OPARA_DTYPE_I64: return "i64";
    case OPARA_DTYPE_BOOL: return "bool";
    case OPARA_DTYPE_F16: return "f16";
    case OPARA_DTYPE_F64: return "f64";
    default: return "?";
    }
}

#if !defined(OPARA_NO_STDIO)
OPARA__PRIVATE FILE* opara__fopen(const char* path, const char* mode) {
#  if defined(_WIN32)
    wchar_t wide_path[OPARA_DL_WPATH_MAX], wide_mode[8];
    if (!opara_dl_widen(path, wide_path, OPARA_DL_WPATH_MAX) || !opara_dl_widen(mode, wide_mode, 8)) return NULL;
    return _wfopen(wide_path, wide_mode);
#  else
    return fopen(path, mode);
#  endif
}

/* Windows' long is 32 bits: its 64-bit stdio offsets there, plain fseek/ftell elsewhere. */
OPARA__PRIVATE int opara__fseek_to(FILE* f, uint64_t offset) {
#  if defined(_WIN32)
    return offset <= (uint64_t)LLONG_MAX && _fseeki64(f, (long long)offset, SEEK_SET) == 0;
#  else
    return offset <= (uint64_t)LONG_MAX && fseek(f, (long)offset, SEEK_SET) == 0;
#  endif
}

OPARA__PRIVATE int opara__fsize(FILE* f, uint64_t* size) {
#  if defined(_WIN32)
    long long end;
    if (_fseeki64(f, 0, SEEK_END) != 0 || (end = _ftelli64(f)) < 0) return 0;
#  else
    long end;
    if (fseek(f, 0, SEEK_END) != 0 || (end = ftell(f)) < 0 || end == LONG_MAX) return 0; /* LONG_MAX: a directory */
#  endif
    *size = (uint64_t)end;
    return opara__fseek_to(f, 0);
}
#endif
