/* Shared body of the compile-matrix programs: touches the public API so that every declaration
   is checked against its definition, and exits 0 only if the basic calls work. */
#include <stdio.h>
#include <string.h>

static int use_api(void) {
    opara_runtime* rt = NULL;
    if (opara_runtime_create(NULL, &rt) != OPARA_OK || !rt) return 1;
    if (strcmp(opara_version_string(), OPARA_VERSION_STRING) != 0) return 2;
    if (strncmp(opara_result_string(OPARA_ERR_TRUNCATED), "OPARA_ERR_TRUNCATED", 19) != 0) return 3;
    if (opara_dtype_size(OPARA_DTYPE_F32) != 4) return 4;
    opara_runtime_destroy(rt);
    return 0;
}
