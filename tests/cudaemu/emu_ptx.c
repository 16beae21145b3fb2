/* emu_ptx.c - a tolerant scanner for the PTX that nvcc/NVRTC emit: module directives, `.entry` headers with
 * their `.param` lists, `.shared` and `.reg` declarations and the launch-bound directives. Instructions are
 * skipped: the emulator runs the host build of the kernel, not the PTX. */
#include "emu_ptx.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct emu_scan {
    const char* p;
    char* err;
    size_t err_size;
} emu_scan;

static void emu_skip_space(emu_scan* s) {
    for (;;) {
        while (*s->p && isspace((unsigned char)*s->p)) s->p++;
        if (s->p[0] == '/' && s->p[1] == '/') {
            while (*s->p && *s->p != '\n') s->p++;
        } else if (s->p[0] == '/' && s->p[1] == '*') {
            const char* end = strstr(s->p + 2, "*/");
            s->p = end ? end + 2 : s->p + strlen(s->p);
        } else {
            return;
        }
    }
}

/* A token: identifier/directive/number characters, or one punctuation character. */
static size_t emu_token(emu_scan* s, char* buf, size_t cap) {
    size_t n = 0;
    emu_skip_space(s);
    if (!*s->p) {
        buf[0] = 0;
        return 0;
    }
    if (isalnum((unsigned char)*s->p) || strchr("._$%", *s->p)) {
        while (*s->p && (isalnum((unsigned char)*s->p) || strchr("._$%", *s->p))) {
            if (n + 1 < cap) buf[n++] = *s->p;
            s->p++;
        }
    } else {
        buf[n++] = *s->p++;
    }
    buf[n] = 0;
    return n;
}

static int emu_fail(emu_scan* s, const char* what) {
    snprintf(s->err, s->err_size, "PTX: %s", what);
    return -1;
}

static unsigned int emu_type_size(const char* t) {
    size_t n = strlen(t);
    if (n < 3 || t[0] != '.') return 0;
    if (!strchr("usbf", t[1])) return 0;
    if (strcmp(t + 2, "8") == 0) return 1;
    if (strcmp(t + 2, "16") == 0) return 2;
    if (strcmp(t + 2, "32") == 0) return 4;
    if (strcmp(t + 2, "64") == 0) return 8;
    return 0;
}

static unsigned int emu_align_up(unsigned int v, unsigned int a) { return a ? (v + a - 1) / a * a : v; }

/* `.param [.ptr .space] [.align N] .type name[count]?` ; s->p is after ".param". */
static int emu_parse_param(emu_scan* s, emu_ptx_entry* e) {
    char tok[EMU_PTX_NAME];
    unsigned int align = 0, size = 0, count = 1;
    for (;;) {
        if (!emu_token(s, tok, sizeof tok)) return emu_fail(s, "unterminated .param");
        if (strcmp(tok, ".align") == 0) {
            emu_token(s, tok, sizeof tok);
            align = (unsigned int)strtoul(tok, NULL, 10);
        } else if (emu_type_size(tok)) {
            size = emu_type_size(tok);
        } else if (tok[0] == '.') {
            continue; /* .ptr, .global, ... */
        } else {
            break; /* the parameter name */
        }
    }
    emu_skip_space(s);
    if (*s->p == '[') {
        s->p++;
        count = (unsigned int)strtoul(s->p, (char**)&s->p, 10);
        emu_skip_space(s);
        if (*s->p != ']') return emu_fail(s, "bad .param array");
        s->p++;
    }
    if (!size || !count) return emu_fail(s, "unknown .param type");
    if (e->param_count >= EMU_PTX_MAX_PARAMS) return emu_fail(s, "too many parameters");
    if (!align) align = size;
    e->param_offset[e->param_count] = emu_align_up(e->param_bytes, align);
    e->param_size[e->param_count] = size * count;
    e->param_bytes = e->param_offset[e->param_count] + size * count;
    e->param_count++;
    return 0;
}

static void emu_parse_dims(emu_scan* s, unsigned int dims[3]) {
    int i;
    for (i = 0; i < 3; i++) {
        emu_skip_space(s);
        dims[i] = (unsigned int)strtoul(s->p, (char**)&s->p, 10);
        emu_skip_space(s);
        if (*s->p != ',') break;
        s->p++;
    }
    for (i++; i < 3; i++) dims[i] = 1;
}

/* Body of an entry: counts .shared bytes and .reg declarations; stops after the matching '}'. */
static int emu_parse_body(emu_scan* s, emu_ptx_entry* e) {
    char tok[EMU_PTX_NAME];
    int depth = 1;
    while (depth > 0) {
        if (!emu_token(s, tok, sizeof tok)) return emu_fail(s, "unterminated entry body");
        if (tok[0] == '{') depth++;
        else if (tok[0] == '}') depth--;
        else if (strcmp(tok, ".shared") == 0) {
            unsigned int size = 0, count = 1, align = 1;
            while (emu_token(s, tok, sizeof tok) && tok[0] == '.') {
                if (strcmp(tok, ".align") == 0) {
                    emu_token(s, tok, sizeof tok);
                    align = (unsigned int)strtoul(tok, NULL, 10);
                } else if (emu_type_size(tok)) {
                    size = emu_type_size(tok);
                }
            }
            emu_skip_space(s);
            if (*s->p == '[') {
                s->p++;
                count = (unsigned int)strtoul(s->p, (char**)&s->p, 10);
            }
            e->static_shared = emu_align_up(e->static_shared, align) + size * count;
        } else if (strcmp(tok, ".reg") == 0) {
            emu_token(s, tok, sizeof tok); /* type */
            emu_token(s, tok, sizeof tok); /* name */
            emu_skip_space(s);
            if (*s->p == '<') e->virtual_regs += (unsigned int)strtoul(s->p + 1, NULL, 10);
            else e->virtual_regs += 1;
        }
    }
    return 0;
}

static int emu_parse_entry(emu_scan* s, emu_ptx_module* m) {
    char tok[EMU_PTX_NAME];
    emu_ptx_entry* e;
    emu_ptx_entry* grown = (emu_ptx_entry*)realloc(m->entries, sizeof(*grown) * (size_t)(m->entry_count + 1));
    if (!grown) return emu_fail(s, "out of memory");
    m->entries = grown;
    e = &m->entries[m->entry_count];
    memset(e, 0, sizeof(*e));
    if (!emu_token(s, e->name, sizeof e->name)) return emu_fail(s, "entry without a name");
    emu_skip_space(s);
    if (*s->p == '(') {
        s->p++;
        for (;;) {
            if (!emu_token(s, tok, sizeof tok)) return emu_fail(s, "unterminated parameter list");
            if (tok[0] == ')') break;
            if (tok[0] == ',') continue;
            if (strcmp(tok, ".param") != 0) return emu_fail(s, "expected .param");
            if (emu_parse_param(s, e) != 0) return -1;
        }
    }
    for (;;) { /* performance directives until the body (or ';' for a declaration) */
        if (!emu_token(s, tok, sizeof tok)) return emu_fail(s, "entry without a body");
        if (tok[0] == '{') break;
        if (tok[0] == ';') return 0; /* a prototype: not counted */
        if (strcmp(tok, ".maxntid") == 0) emu_parse_dims(s, e->maxntid);
        else if (strcmp(tok, ".reqntid") == 0) emu_parse_dims(s, e->reqntid);
    }
    if (emu_parse_body(s, e) != 0) return -1;
    m->entry_count++;
    return 0;
}

int emu_ptx_parse(const char* text, emu_ptx_module* m, char* err, size_t err_size) {
    emu_scan s;
    char tok[EMU_PTX_NAME];
    memset(m, 0, sizeof(*m));
    s.p = text;
    s.err = err;
    s.err_size = err_size;
    while (emu_token(&s, tok, sizeof tok)) {
        if (strcmp(tok, ".version") == 0) {
            emu_token(&s, tok, sizeof tok);
            if (sscanf(tok, "%d.%d", &m->version_major, &m->version_minor) != 2) return emu_fail(&s, "bad .version");
        } else if (strcmp(tok, ".target") == 0) {
            emu_token(&s, tok, sizeof tok);
            if (strncmp(tok, "sm_", 3) != 0) return emu_fail(&s, "bad .target");
            m->target_sm = atoi(tok + 3);
        } else if (strcmp(tok, ".address_size") == 0) {
            emu_token(&s, tok, sizeof tok);
            m->address_size = atoi(tok);
        } else if (strcmp(tok, ".entry") == 0) {
            if (emu_parse_entry(&s, m) != 0) {
                emu_ptx_free(m);
                return -1;
            }
        } else if (tok[0] == '{') { /* a .func body: skip */
            emu_ptx_entry scratch;
            memset(&scratch, 0, sizeof scratch);
            if (emu_parse_body(&s, &scratch) != 0) {
                emu_ptx_free(m);
                return -1;
            }
        }
    }
    if (!m->version_major || !m->target_sm) {
        emu_ptx_free(m);
        return emu_fail(&s, "missing .version or .target");
    }
    return 0;
}

void emu_ptx_free(emu_ptx_module* m) {
    free(m->entries);
    m->entries = NULL;
    m->entry_count = 0;
}
