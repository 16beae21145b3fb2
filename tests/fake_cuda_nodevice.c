/* fake_cuda_nodevice.c - a CUDA driver library on a machine without a GPU, for tests/test_cuda_nodevice.c:
   built as build/cuda/libopara_fake_nodevice_cuda.so here (mk/cuda.mk) and as
   opara_fake_nodevice_cuda.dll beside the Windows test (mk/windows.mk). It exports what a CUDA 13 driver
   is asked for first, cuDriverGetVersion (13.0) and cuGetProcAddress_v2, which hands out cuInit
   answering CUDA_ERROR_NO_DEVICE (100, as NVIDIA's driver does with no device) and, for every other
   entry point, a function answering CUDA_ERROR_UNKNOWN (999), so the loader's table is complete and
   nothing past cuInit can succeed. */
#if defined(_WIN32)
#  define FAKE_EXPORT __declspec(dllexport)
#else
#  define FAKE_EXPORT
#endif

FAKE_EXPORT int cuDriverGetVersion(int* version);
FAKE_EXPORT int cuGetProcAddress_v2(const char* symbol, void** pfn, int version, unsigned long long flags, int* status);

static int fake_init(unsigned int flags) { return flags == 0 ? 100 : 1; }
static int fake_unknown(void) { return 999; }

static int same(const char* a, const char* b) {
    while (*a && *a == *b) ++a, ++b;
    return *a == *b;
}

FAKE_EXPORT int cuDriverGetVersion(int* version) {
    if (!version) return 1; /* CUDA_ERROR_INVALID_VALUE */
    *version = 13000;
    return 0;
}

FAKE_EXPORT int cuGetProcAddress_v2(const char* symbol, void** pfn, int version, unsigned long long flags, int* status) {
    int (*init)(unsigned int) = fake_init;
    int (*unknown)(void) = fake_unknown;
    const unsigned char* from = same(symbol ? symbol : "", "cuInit") ? (const unsigned char*)&init : (const unsigned char*)&unknown;
    unsigned char* to = (unsigned char*)pfn;
    unsigned i;
    if (!symbol || !pfn || version > 13000) return 1;
    (void)flags;
    for (i = 0; i < sizeof *pfn; ++i) to[i] = from[i]; /* a function pointer into void*, quietly for ISO C */
    if (status) *status = 0; /* CU_GET_PROC_ADDRESS_SUCCESS */
    return 0;
}
