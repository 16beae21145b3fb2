/* GPU timing simulator (public part): a deterministic discrete-event model of kernels running on
   a GPU, fed by an execution plan. Every number it gives is a MODEL, not a measurement; label it
   "simulated" wherever it is shown. The model is described in docs/SIMULATOR.md. */
#ifndef OPARA_SIM_H
#define OPARA_SIM_H

#include "../api/opara_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A device as the simulator sees it. Built-in presets come from public specifications
   (opara_sim_device_preset); a text file of `key = value` lines describes any other card
   (opara_sim_device_parse). The overhead fields are calibration, not specification. */
typedef struct opara_sim_device {
    char name[32];
    /* streaming multiprocessors and their per-SM limits */
    int32_t sm_count;
    int32_t max_threads_per_sm;
    int32_t max_regs_per_sm;
    int32_t max_smem_per_sm;      /* bytes */
    int32_t max_blocks_per_sm;
    int32_t max_threads_per_block;
    int32_t max_smem_per_block;   /* bytes */
    /* throughput: an SM reaches peak_gflops/sm_count with sm_saturation_threads resident threads
       (fewer: proportionally less); DRAM saturates at mem_gbps once mem_saturation of the device's
       thread slots issue loads */
    int32_t sm_saturation_threads;
    double peak_gflops;           /* FP32, GFLOP/s */
    double mem_gbps;              /* DRAM bandwidth, GB/s */
    double mem_saturation;        /* (0, 1] */
    /* overheads in microseconds */
    double launch_us;             /* eager: host time per kernel launch */
    double event_us;              /* eager: host time per event record or wait */
    double graph_launch_us;       /* graph: one replay call */
    double graph_node_us;         /* graph: front-end time per node, in launch order */
    double kernel_gap_us;         /* from a kernel's last dependency finishing to its first block */
    int32_t hw_queues;            /* eager: hardware queues (CUDA_DEVICE_MAX_CONNECTIONS, 8) */
} opara_sim_device;

typedef enum opara_sim_mode {
    OPARA_SIM_GRAPH = 0, /* one captured graph replay: only the plan's edges constrain */
    OPARA_SIM_EAGER = 1  /* host launches kernel by kernel; streams share hw_queues queues */
} opara_sim_mode;

/* Timing of one operator (times in microseconds from the start of the inference). */
typedef struct opara_sim_op_time {
    double ready_us;  /* dependencies done (and launched): its blocks may be dispatched */
    double start_us;  /* first block dispatched */
    double end_us;    /* last block finished */
    uint32_t stream;
    uint32_t blocks;   /* thread blocks (0: kernel-less) */
    int memory_bound;  /* the roofline says memory time dominates */
} opara_sim_op_time;

/* Result of one simulation. Free with opara_sim_result_free. */
typedef struct opara_sim_result {
    double makespan_us;    /* simulated latency of one inference */
    double sm_busy;        /* time-average fraction of SMs with at least one resident block */
    double host_us;        /* host time spent launching */
    uint32_t n_ops;
    opara_sim_op_time* ops; /* in launch order */
    uint32_t n_samples;     /* busy-SM count over time: busy_sms[i] from sample_us[i] on */
    double* sample_us;
    uint32_t* busy_sms;
    uint32_t n_streams;
    opara_sim_device device;
    opara_sim_mode mode;
} opara_sim_result;

/* Built-in presets: "rtx2080s", "v100", "a100", "h100", "orin". OPARA_ERR_NOT_FOUND otherwise. */
OPARADEF opara_result opara_sim_device_preset(const char* name, opara_sim_device* out);
/* Name of the i-th preset, NULL past the end. */
OPARADEF const char* opara_sim_device_preset_name(uint32_t index);
/* Parses `key = value` lines ('#' starts a comment). `base = NAME` first copies a preset; every
   other key is a field of opara_sim_device. Unknown keys and bad numbers are errors. */
OPARADEF opara_result opara_sim_device_parse(opara_runtime* rt, const char* text, size_t len, opara_sim_device* out);
/* Writes the device as text that opara_sim_device_parse reads back to the same values. Returns the
   length it needs (excluding the NUL); writes at most cap bytes, always terminated when cap > 0. */
OPARADEF size_t opara_sim_device_format(const opara_sim_device* dev, char* dst, size_t cap);
#ifndef OPARA_NO_STDIO
/* A preset name, or else the path of a device text file. */
OPARADEF opara_result opara_sim_device_load(opara_runtime* rt, const char* name_or_path, opara_sim_device* out);
#endif

OPARADEF void opara_sim_result_free(opara_runtime* rt, opara_sim_result* result);

/* Chrome-trace / Perfetto JSON of a result: one track per stream (one slice per op, named by
   op_names[i] when given) and a counter track of busy SMs. Streams the text through write. */
OPARADEF void opara_sim_trace_write(const opara_sim_result* result, const char* const* op_names,
                                    void (*write)(const char* text, size_t len, void* user), void* user);

/* Simulates a plan (opara_plan_create, opara_session_get_plan) with the cost descriptors it was made
   with: its nodes in launch order on the CUDA streams its lanes become, each after the previous node
   of its lane and the events it waits on. result->ops are in launch order (opara_plan_node_at).
   OPARA_ERR_UNSUPPORTED for a CUDA session's plan. Free the result with opara_sim_result_free. */
OPARADEF opara_result opara_plan_simulate(const opara_plan* plan, const opara_sim_device* dev, opara_sim_mode mode,
                                          opara_sim_result* out);

#ifdef __cplusplus
}
#endif
#endif /* OPARA_SIM_H */
