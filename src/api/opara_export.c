/* Graphviz DOT of a plan and Chrome-trace JSON of a run. */
#include "opara_export.h"

#ifndef OPARA_NO_STDIO

OPARA__PRIVATE void opara__write_json_string(FILE* f, const char* s) {
    fputc('"', f);
    for (; s && *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

/* Text inside a DOT string: quotes and backslashes escaped, control characters as spaces. */
static void opara__write_dot_text(FILE* f, const char* s) {
    for (; s && *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else fputc(c < 0x20 ? ' ' : c, f);
    }
}

/* What the node computes, for people: its operator, and "+Relu", "+Gelu", "+GeluTanh" with an
   activation fused into it ("Add+Relu"); written into buf (cap bytes) when so. */
static const char* opara__node_op_label(const opara__node* n, char* buf, size_t cap) {
    const char* act = opara__attr_string(n, "activation", "");
    if (!act[0]) return opara__op_name(n->op);
    opara__format(buf, cap, "%s+%s", opara__op_name(n->op), act);
    return buf;
}

static const char* opara__node_label(const opara__graph* g, uint32_t n) {
    return g->nodes[n].name && g->nodes[n].name[0] ? g->nodes[n].name : opara__op_name(g->nodes[n].op);
}

OPARA__PRIVATE int opara__plan_write_dot(FILE* f, const opara__graph* g, const opara__plan* p) {
    static const char* const colors[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
                                         "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};
    uint32_t n, k;
    char op[64];
    fprintf(f, "digraph plan {\n  rankdir=TB;\n  node [shape=box, style=filled, fontname=\"Helvetica\"];\n");
    for (n = 0; n < g->n_nodes; ++n) {
        fprintf(f, "  n%u [label=\"%u: ", n, p->position[n]);
        opara__write_dot_text(f, opara__node_label(g, n));
        fprintf(f, "\\n");
        opara__write_dot_text(f, opara__node_op_label(&g->nodes[n], op, sizeof op));
        fprintf(f, " s%u\", fillcolor=\"%s\"];\n", p->stream[n],
                colors[p->stream[n] % OPARA__ARRAY_COUNT(colors)]);
    }
    for (n = 0; n < g->n_nodes; ++n)
        for (k = g->pred_start[n]; k < g->pred_start[n + 1]; ++k) fprintf(f, "  n%u -> n%u;\n", g->preds[k], n);
    for (n = 0; n < g->n_nodes; ++n)
        for (k = p->wait_start[n]; k < p->wait_start[n + 1]; ++k)
            fprintf(f, "  n%u -> n%u [style=dashed, color=\"#d62728\", constraint=false];\n", p->wait_nodes[k], n);
    fprintf(f, "}\n");
    return !ferror(f);
}

OPARA__PRIVATE int opara__write_trace(FILE* f, const opara__graph* g, const opara_node_time* times, uint32_t n,
                                     const char* track_kind) {
    uint32_t i, tracks = 0;
    char op[64];
    fprintf(f, "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n");
    for (i = 0; i < n; ++i) {
        uint32_t node = times[i].node;
        fprintf(f, "  {\"name\": ");
        opara__write_json_string(f, opara__node_op_label(&g->nodes[node], op, sizeof op));
        fprintf(f, ", \"cat\": \"op\", \"ph\": \"X\", \"pid\": 1, \"tid\": %u, \"ts\": %.3f, \"dur\": %.3f, "
                   "\"args\": {\"node\": %u, \"name\": ",
                times[i].worker, (double)times[i].start_ns / 1000.0,
                (double)(times[i].end_ns - times[i].start_ns) / 1000.0, node);
        opara__write_json_string(f, g->nodes[node].name);
        fprintf(f, "}},\n");
        if (times[i].worker + 1 > tracks) tracks = times[i].worker + 1;
    }
    for (i = 0; i < tracks; ++i)
        fprintf(f, "  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": %u, \"args\": {\"name\": \"%s %u\"}},\n",
                i, track_kind, i);
    fprintf(f, "  {\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"args\": {\"name\": \"opara\"}}\n]}\n");
    return !ferror(f);
}

#endif /* OPARA_NO_STDIO */
