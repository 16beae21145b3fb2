/* The smallest embedding of opara.h: one file, no build system.
       cc examples/minimal.c -o minimal -lm -ldl -lpthread */
#define OPARA_IMPLEMENTATION
#include "../opara.h"

#include <stdio.h>

int main(void) {
    opara_runtime* rt = NULL;
    opara_result r = opara_runtime_create(NULL, &rt);
    if (r != OPARA_OK) {
        fprintf(stderr, "opara_runtime_create: %s\n", opara_result_string(r));
        return 1;
    }
    printf("opara.h %s is ready\n", opara_version_string());
    opara_runtime_destroy(rt);
    return 0;
}
