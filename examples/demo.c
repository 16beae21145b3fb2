/* The main job (`make demo`). For now it shows the header working end to end: a runtime with a
   logger, an error reported with its detail. The GoogLeNet demo replaces this once the CPU
   backend lands. */
#define OPARA_IMPLEMENTATION
#include "../opara.h"

#include <stdio.h>

int main(void) {
    opara_runtime_desc desc;
    opara_runtime* rt = NULL;
    memset(&desc, 0, sizeof desc);
    desc.logger.func = opara_log_stderr;
    if (opara_runtime_create(&desc, &rt) != OPARA_OK) return 1;
    printf("opara.h %s: runtime created with the stderr logger.\n", opara_version_string());
    opara_runtime_destroy(rt);
    return 0;
}
