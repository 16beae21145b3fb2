/* opara_cuda.h's loader against the emulator: every entry point opara needs is found (through
 * cuGetProcAddress_v2 with the ABI version of opara's prototype, or dlsym), with the right ABI. */
#define OPARA_CUDA_IMPLEMENTATION
#define OPARA_CUDA_STATIC
#include "opara_cuda.h"

#include "emu_test.h"

OT_TEST(opara_cuda_loader_finds_every_driver_entry_point) {
    opara_cuda_driver cu;
    char err[1024];
    const char* env = getenv("OPARA_CUDA_DRIVER");
    const char* path = env && *env ? env : OPARA_EMU_LIB_DIR "/libcuda.so.1";
    int n = 0;
    opara_CUdevice dev = -1;
    opara_CUcontext ctx = NULL;
    opara_CUdeviceptr p = 0;
    opara_cuda_load_status st = opara_cuda_driver_load(&cu, path, err, sizeof err);
    OT_LOG("%s", err);
    REQUIRE(st == OPARA_CUDA_LOAD_OK);
    REQUIRE(cu.cuInit != NULL && cu.cuMemAlloc_v2 != NULL && cu.cuGraphExecUpdate_v2 != NULL);
    CHECK_EQ(cu.cuInit(0), OPARA_CUDA_SUCCESS);
    CHECK_EQ(cu.cuDeviceGetCount(&n), OPARA_CUDA_SUCCESS);
    CHECK(n >= 1);
    CHECK_EQ(cu.cuDeviceGet(&dev, 0), OPARA_CUDA_SUCCESS);
    CHECK_EQ(cu.cuDevicePrimaryCtxRetain(&ctx, dev), OPARA_CUDA_SUCCESS);
    CHECK_EQ(cu.cuCtxSetCurrent(ctx), OPARA_CUDA_SUCCESS);
    CHECK_EQ(cu.cuMemAlloc_v2(&p, 1024), OPARA_CUDA_SUCCESS);
    CHECK_EQ(cu.cuMemFree_v2(p), OPARA_CUDA_SUCCESS);
    CHECK(cu.cuStreamGetCaptureInfo_v3 != NULL); /* optional (12.3), but the emulator is 13.0 */
    CHECK(cu.cuGraphGetEdges_v2 != NULL);
    CHECK_EQ(cu.cuCtxSetCurrent(NULL), OPARA_CUDA_SUCCESS);
    CHECK_EQ(cu.cuDevicePrimaryCtxRelease_v2(dev), OPARA_CUDA_SUCCESS);
    opara_cuda_driver_unload(&cu);
}

OT_TEST(old_driver_is_reported) { /* fault injection: an emulated CUDA 11.8 driver */
    TCU_REQUIRE_EMULATOR(d);
    opara_cuda_driver cu;
    char err[1024];
    d->emu_config("driver_version", 11080);
    CHECK_EQ(opara_cuda_driver_load(&cu, d->path, err, sizeof err), OPARA_CUDA_LOAD_DRIVER_TOO_OLD);
    OT_LOG("%s", err);
    d->emu_config("driver_version", 13000);
    CHECK_EQ(opara_cuda_driver_load(&cu, d->path, err, sizeof err), OPARA_CUDA_LOAD_OK);
    opara_cuda_driver_unload(&cu);
}

static const opara_test_case tests[] = {
    OT_CASE(opara_cuda_loader_finds_every_driver_entry_point),
    OT_CASE(old_driver_is_reported),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
