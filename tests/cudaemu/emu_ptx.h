/* emu_ptx.h - the part of a PTX module the emulator needs: version, target, entries and their parameters. */
#ifndef EMU_PTX_H
#define EMU_PTX_H
#include <stddef.h>

enum { EMU_PTX_MAX_PARAMS = 64, EMU_PTX_NAME = 128 };

typedef struct emu_ptx_entry {
    char name[EMU_PTX_NAME];
    int param_count;
    unsigned int param_size[EMU_PTX_MAX_PARAMS];
    unsigned int param_offset[EMU_PTX_MAX_PARAMS];   /* in the packed argument buffer (for `extra`) */
    unsigned int param_bytes;                         /* packed buffer size */
    unsigned int static_shared;                       /* bytes of .shared declared in the entry */
    unsigned int virtual_regs;                        /* PTX registers declared (an upper bound hint) */
    unsigned int maxntid[3], reqntid[3];              /* 0 when absent */
} emu_ptx_entry;

typedef struct emu_ptx_module {
    int version_major, version_minor;   /* .version */
    int target_sm;                       /* .target sm_XY -> XY*1 (75, 80, 90 ...) */
    int address_size;
    int entry_count;
    emu_ptx_entry* entries;              /* malloc'ed */
} emu_ptx_module;

/* Parses NUL-terminated PTX text. Returns 0 or -1 with a message in err. */
int emu_ptx_parse(const char* text, emu_ptx_module* out, char* err, size_t err_size);
void emu_ptx_free(emu_ptx_module* m);

#endif
