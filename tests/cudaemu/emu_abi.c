/* emu_abi.c - compile-time agreement of the emulated driver with opara_cuda.h: every constant the emulator
 * uses and every parameter struct it reads has opara_cuda.h's value and layout (which tests/cuda_headers_check.c
 * in turn checks against NVIDIA's headers). A drift is a build error naming the constant or field. The cuBLAS
 * and cuDNN fakes use opara_cuda.h's types directly (emu_lib.h). */
#include <stddef.h>

#include "../../opara_cuda.h"
#include "emu_internal.h"

#define EMU_ABI_CAT_(a, b) a##b
#define EMU_ABI_CAT(a, b) EMU_ABI_CAT_(a, b)
#define EMU_ABI_ASSERT(cond, what) typedef char EMU_ABI_CAT(emu_abi_##what##_, __LINE__)[(cond) ? 1 : -1]
#define EMU_ABI_SAME(emu, opara) EMU_ABI_ASSERT((long long)(emu) == (long long)(opara), emu)
#define EMU_ABI_FIELD(emu_t, emu_f, opara_t, opara_f)                                                          \
    EMU_ABI_ASSERT(offsetof(emu_t, emu_f) == offsetof(opara_t, opara_f) &&                                   \
                       sizeof(((emu_t*)0)->emu_f) == sizeof(((opara_t*)0)->opara_f),                        \
                   emu_f)

/* CUresult */
EMU_ABI_SAME(E_OK, OPARA_CUDA_SUCCESS);
EMU_ABI_SAME(E_INVALID_VALUE, OPARA_CUDA_ERROR_INVALID_VALUE);
EMU_ABI_SAME(E_OUT_OF_MEMORY, OPARA_CUDA_ERROR_OUT_OF_MEMORY);
EMU_ABI_SAME(E_NOT_INITIALIZED, OPARA_CUDA_ERROR_NOT_INITIALIZED);
EMU_ABI_SAME(E_DEINITIALIZED, OPARA_CUDA_ERROR_DEINITIALIZED);
EMU_ABI_SAME(E_NO_DEVICE, OPARA_CUDA_ERROR_NO_DEVICE);
EMU_ABI_SAME(E_INVALID_DEVICE, OPARA_CUDA_ERROR_INVALID_DEVICE);
EMU_ABI_SAME(E_INVALID_IMAGE, OPARA_CUDA_ERROR_INVALID_IMAGE);
EMU_ABI_SAME(E_INVALID_CONTEXT, OPARA_CUDA_ERROR_INVALID_CONTEXT);
EMU_ABI_SAME(E_NO_BINARY_FOR_GPU, OPARA_CUDA_ERROR_NO_BINARY_FOR_GPU);
EMU_ABI_SAME(E_INVALID_PTX, OPARA_CUDA_ERROR_INVALID_PTX);
EMU_ABI_SAME(E_UNSUPPORTED_PTX_VERSION, OPARA_CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
EMU_ABI_SAME(E_INVALID_HANDLE, OPARA_CUDA_ERROR_INVALID_HANDLE);
EMU_ABI_SAME(E_ILLEGAL_STATE, OPARA_CUDA_ERROR_ILLEGAL_STATE);
EMU_ABI_SAME(E_LOSSY_QUERY, OPARA_CUDA_ERROR_LOSSY_QUERY);
EMU_ABI_SAME(E_NOT_FOUND, OPARA_CUDA_ERROR_NOT_FOUND);
EMU_ABI_SAME(E_NOT_READY, OPARA_CUDA_ERROR_NOT_READY);
EMU_ABI_SAME(E_ILLEGAL_ADDRESS, OPARA_CUDA_ERROR_ILLEGAL_ADDRESS);
EMU_ABI_SAME(E_LAUNCH_OUT_OF_RESOURCES, OPARA_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
EMU_ABI_SAME(E_CONTEXT_IS_DESTROYED, OPARA_CUDA_ERROR_CONTEXT_IS_DESTROYED);
EMU_ABI_SAME(E_LAUNCH_FAILED, OPARA_CUDA_ERROR_LAUNCH_FAILED);
EMU_ABI_SAME(E_NOT_PERMITTED, OPARA_CUDA_ERROR_NOT_PERMITTED);
EMU_ABI_SAME(E_NOT_SUPPORTED, OPARA_CUDA_ERROR_NOT_SUPPORTED);
EMU_ABI_SAME(E_CAPTURE_UNSUPPORTED, OPARA_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
EMU_ABI_SAME(E_CAPTURE_INVALIDATED, OPARA_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
EMU_ABI_SAME(E_CAPTURE_MERGE, OPARA_CUDA_ERROR_STREAM_CAPTURE_MERGE);
EMU_ABI_SAME(E_CAPTURE_UNMATCHED, OPARA_CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
EMU_ABI_SAME(E_CAPTURE_UNJOINED, OPARA_CUDA_ERROR_STREAM_CAPTURE_UNJOINED);
EMU_ABI_SAME(E_CAPTURE_ISOLATION, OPARA_CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
EMU_ABI_SAME(E_CAPTURE_IMPLICIT, OPARA_CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
EMU_ABI_SAME(E_CAPTURED_EVENT, OPARA_CUDA_ERROR_CAPTURED_EVENT);
EMU_ABI_SAME(E_CAPTURE_WRONG_THREAD, OPARA_CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
EMU_ABI_SAME(E_GRAPH_EXEC_UPDATE_FAILURE, OPARA_CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
EMU_ABI_SAME(E_UNKNOWN, OPARA_CUDA_ERROR_UNKNOWN);

/* capture modes and states, stream and event flags, node types, update results */
EMU_ABI_SAME(CAPTURE_GLOBAL, OPARA_CU_STREAM_CAPTURE_MODE_GLOBAL);
EMU_ABI_SAME(CAPTURE_THREAD_LOCAL, OPARA_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
EMU_ABI_SAME(CAPTURE_RELAXED, OPARA_CU_STREAM_CAPTURE_MODE_RELAXED);
EMU_ABI_SAME(STATUS_NONE, OPARA_CU_STREAM_CAPTURE_STATUS_NONE);
EMU_ABI_SAME(STATUS_ACTIVE, OPARA_CU_STREAM_CAPTURE_STATUS_ACTIVE);
EMU_ABI_SAME(STATUS_INVALIDATED, OPARA_CU_STREAM_CAPTURE_STATUS_INVALIDATED);
EMU_ABI_SAME(STREAM_NON_BLOCKING, OPARA_CU_STREAM_NON_BLOCKING);
EMU_ABI_SAME(EVENT_BLOCKING_SYNC, OPARA_CU_EVENT_BLOCKING_SYNC);
EMU_ABI_SAME(EVENT_DISABLE_TIMING, OPARA_CU_EVENT_DISABLE_TIMING);
EMU_ABI_SAME(EVENT_INTERPROCESS, OPARA_CU_EVENT_INTERPROCESS);
EMU_ABI_SAME(EVENT_WAIT_EXTERNAL, OPARA_CU_EVENT_WAIT_EXTERNAL);
EMU_ABI_SAME(NODE_KERNEL, OPARA_CU_GRAPH_NODE_TYPE_KERNEL);
EMU_ABI_SAME(NODE_MEMCPY, OPARA_CU_GRAPH_NODE_TYPE_MEMCPY);
EMU_ABI_SAME(NODE_MEMSET, OPARA_CU_GRAPH_NODE_TYPE_MEMSET);
EMU_ABI_SAME(NODE_HOST, OPARA_CU_GRAPH_NODE_TYPE_HOST);
EMU_ABI_SAME(NODE_EMPTY, OPARA_CU_GRAPH_NODE_TYPE_EMPTY);
EMU_ABI_SAME(NODE_WAIT_EVENT, OPARA_CU_GRAPH_NODE_TYPE_WAIT_EVENT);
EMU_ABI_SAME(NODE_EVENT_RECORD, OPARA_CU_GRAPH_NODE_TYPE_EVENT_RECORD);
EMU_ABI_SAME(UPDATE_SUCCESS, OPARA_CU_GRAPH_EXEC_UPDATE_SUCCESS);
EMU_ABI_SAME(UPDATE_TOPOLOGY_CHANGED, OPARA_CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
EMU_ABI_SAME(UPDATE_NODE_TYPE_CHANGED, OPARA_CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED);
EMU_ABI_SAME(UPDATE_UNSUPPORTED_FUNCTION_CHANGE, OPARA_CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE);
EMU_ABI_ASSERT(sizeof(emu_result) == sizeof(opara_CUresult) && sizeof(emu_devptr) == sizeof(opara_CUdeviceptr), scalars);

/* parameter structs */
EMU_ABI_ASSERT(sizeof(emu_edge_data) == sizeof(opara_CUgraphEdgeData), edge_data);
EMU_ABI_FIELD(emu_edge_data, from_port, opara_CUgraphEdgeData, from_port);
EMU_ABI_FIELD(emu_edge_data, to_port, opara_CUgraphEdgeData, to_port);
EMU_ABI_FIELD(emu_edge_data, type, opara_CUgraphEdgeData, type);
EMU_ABI_FIELD(emu_edge_data, reserved, opara_CUgraphEdgeData, reserved);
EMU_ABI_ASSERT(sizeof(emu_update_info) == sizeof(opara_CUgraphExecUpdateResultInfo), update_info);
EMU_ABI_FIELD(emu_update_info, result, opara_CUgraphExecUpdateResultInfo, result);
EMU_ABI_FIELD(emu_update_info, error_node, opara_CUgraphExecUpdateResultInfo, errorNode);
EMU_ABI_FIELD(emu_update_info, error_from_node, opara_CUgraphExecUpdateResultInfo, errorFromNode);
EMU_ABI_ASSERT(sizeof(emu_kernel_node_params) == sizeof(opara_CUDA_KERNEL_NODE_PARAMS_v2), kernel_node_params);
EMU_ABI_FIELD(emu_kernel_node_params, func, opara_CUDA_KERNEL_NODE_PARAMS_v2, func);
EMU_ABI_FIELD(emu_kernel_node_params, grid_x, opara_CUDA_KERNEL_NODE_PARAMS_v2, gridDimX);
EMU_ABI_FIELD(emu_kernel_node_params, grid_y, opara_CUDA_KERNEL_NODE_PARAMS_v2, gridDimY);
EMU_ABI_FIELD(emu_kernel_node_params, grid_z, opara_CUDA_KERNEL_NODE_PARAMS_v2, gridDimZ);
EMU_ABI_FIELD(emu_kernel_node_params, block_x, opara_CUDA_KERNEL_NODE_PARAMS_v2, blockDimX);
EMU_ABI_FIELD(emu_kernel_node_params, block_y, opara_CUDA_KERNEL_NODE_PARAMS_v2, blockDimY);
EMU_ABI_FIELD(emu_kernel_node_params, block_z, opara_CUDA_KERNEL_NODE_PARAMS_v2, blockDimZ);
EMU_ABI_FIELD(emu_kernel_node_params, shared, opara_CUDA_KERNEL_NODE_PARAMS_v2, sharedMemBytes);
EMU_ABI_FIELD(emu_kernel_node_params, kernel_params, opara_CUDA_KERNEL_NODE_PARAMS_v2, kernelParams);
EMU_ABI_FIELD(emu_kernel_node_params, extra, opara_CUDA_KERNEL_NODE_PARAMS_v2, extra);
EMU_ABI_FIELD(emu_kernel_node_params, kern, opara_CUDA_KERNEL_NODE_PARAMS_v2, kern);
EMU_ABI_FIELD(emu_kernel_node_params, ctx, opara_CUDA_KERNEL_NODE_PARAMS_v2, ctx);

/* Every driver entry point in opara's table is exported by the emulator (its address is taken here, so a
 * missing definition fails the link of libcuda.so.1). Their prototypes use the emulator's handle types;
 * tests/cudaemu/test_emu_loader.c calls them through opara's typed table. */
#define EMU_ABI_PROTO(ret, name, params, req, proc, ver, alt, alt_ver) extern char name;
OPARA_CUDA_DRIVER_FUNCS(EMU_ABI_PROTO)
#undef EMU_ABI_PROTO
#define EMU_ABI_ADDRESS(ret, name, params, req, proc, ver, alt, alt_ver) &name,
static const void* const emu_abi_exports[] __attribute__((used)) = {OPARA_CUDA_DRIVER_FUNCS(EMU_ABI_ADDRESS)};
#undef EMU_ABI_ADDRESS
