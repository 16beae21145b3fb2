/* Loading a model for any subcommand: a file that starts with the .opara magic is a .opara model;
   otherwise a name ending in .opara gets the .opara loader's "bad magic" error (not a confusing
   protobuf one), and anything else is read as ONNX. */

static int cli_has_suffix(const char* s, const char* suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int cli_starts_with_magic(const char* path) {
    unsigned char magic[OPARA__FORMAT_MAGIC_SIZE];
    FILE* f = fopen(path, "rb");
    size_t got = f ? fread(magic, 1, sizeof magic, f) : 0;
    if (f) fclose(f);
    return got == sizeof magic && memcmp(magic, OPARA__FORMAT_MAGIC, sizeof magic) == 0;
}

/* onnx may be NULL (ONNX defaults). */
static opara_result cli_load_model(opara_runtime* rt, const char* path, const opara_onnx_options* onnx,
                                   opara_model** m) {
    if (cli_starts_with_magic(path) || cli_has_suffix(path, ".opara")) return opara_model_load_file(rt, path, m);
    return opara_model_load_onnx_file(rt, path, onnx, m);
}
