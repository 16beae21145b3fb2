/* Exports of a plan and of a run's timeline for people to look at: Graphviz DOT and Chrome-trace
   (Perfetto) JSON. Shared by the session API and the command-line tools. */
#ifndef OPARA_EXPORT_H
#define OPARA_EXPORT_H

#include "../plan/opara_sched.h"

/* What the inspection API (opara_inspect.c) reads of a session (opara_session.c). */
typedef struct opara__session_parts {
    const opara_model* model;
    const opara__plan* plan;
    const opara__shape* shapes;
    const opara_dtype* dtypes;
    const opara__op_desc* descs;                  /* what the plan was made with */
    const char* device;                           /* what the plan was made for: "cpu" or "cuda" */
} opara__session_parts;

OPARA__PRIVATE void opara__session_get_parts(const opara_session* s, opara__session_parts* out);
/* As opara_session_get_node_kernel after the arguments were checked: the backend's table answers
   (OPARA_ERR_UNSUPPORTED where it has no per-node kernels). */
OPARA__PRIVATE opara_result opara__session_node_kernel(const opara_session* s, uint32_t node, opara_node_kernel* out);

#ifndef OPARA_NO_STDIO
#include <stdio.h>

/* The plan's DAG: ops labelled "position: name / op sN" and coloured by stream, data edges solid,
   cross-stream event waits dashed red. Returns 1 when everything was written. */
OPARA__PRIVATE int opara__plan_write_dot(FILE* f, const opara__graph* g, const opara__plan* p);
/* One complete event per op on track `tid` = its worker (CPU) or stream, in microseconds. */
OPARA__PRIVATE int opara__write_trace(FILE* f, const opara__graph* g, const opara_node_time* times, uint32_t n,
                                     const char* track_kind);
/* A JSON string literal (quotes included) with ", \ and control characters escaped. */
OPARA__PRIVATE void opara__write_json_string(FILE* f, const char* s);
#endif

#endif /* OPARA_EXPORT_H */
