/* Loading a model for any subcommand: a file that starts with the .opara magic is a .opara model;
   otherwise a name ending in .opara gets the .opara loader's "bad magic" error (not a confusing
   protobuf one), and anything else is read as ONNX. */
#if !defined(_WIN32)
#  include <sys/stat.h>
#endif

static int cli_has_suffix(const char* s, const char* suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int cli_starts_with_magic(const char* path) {
    unsigned char magic[OPARA_FILE_MAGIC_SIZE];
    FILE* f;
#if !defined(_WIN32)
    struct stat st; /* opening a FIFO would block: only regular files are sniffed (the loader refuses the rest) */
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
#endif
    f = tool_fopen(path, "rb");
    size_t got = f ? fread(magic, 1, sizeof magic, f) : 0;
    if (f) fclose(f);
    return got == sizeof magic && memcmp(magic, OPARA_FILE_MAGIC, sizeof magic) == 0;
}

/* 1 when path is loaded as .opara, 0 when as ONNX. */
static int cli_is_opara(const char* path) {
    return cli_starts_with_magic(path) || cli_has_suffix(path, ".opara");
}

/* --shape NAME=d0,d1,... (repeatable) and --default-dim N: how an ONNX file's symbolic input dims
   are sized, shared by every subcommand that loads a model (convert, run, info, plan). */
#define CLI_MAX_SHAPES 64

typedef struct cli_onnx_args {
    const char* shapes[CLI_MAX_SHAPES];
    uint32_t n_shapes;
    long long default_dim;
} cli_onnx_args;

/* 1: argv[*i] was one of those options and is consumed with its value; 0: it is not one of them;
   -1: it is, but its value is missing or wrong (the message is printed). */
static int cli_onnx_arg(const char* cmd, int argc, char** argv, int* i, cli_onnx_args* a) {
    const char* opt = argv[*i];
    const char* v = *i + 1 < argc ? argv[*i + 1] : NULL;
    int is_shape = strcmp(opt, "--shape") == 0;
    if (!is_shape && strcmp(opt, "--default-dim") != 0) return 0;
    if (!v) {
        fprintf(stderr, "opara %s: %s needs a value\n", cmd, opt);
        return -1;
    }
    ++*i;
    if (!is_shape) return cli_int_arg(cmd, opt, v, 0, INT32_MAX, &a->default_dim) ? 1 : -1;
    if (a->n_shapes == CLI_MAX_SHAPES) {
        fprintf(stderr, "opara %s: at most %d --shape options\n", cmd, CLI_MAX_SHAPES);
        return -1;
    }
    a->shapes[a->n_shapes++] = v;
    return 1;
}

/* The import options those arguments give (pointing into a). */
static opara_onnx_options cli_onnx_options(const cli_onnx_args* a) {
    opara_onnx_options o;
    memset(&o, 0, sizeof o);
    o.input_shapes = a->shapes;
    o.n_input_shapes = a->n_shapes;
    o.default_dim = a->default_dim;
    return o;
}

/* onnx may be NULL (ONNX defaults). */
static opara_result cli_load_model(opara_runtime* rt, const char* path, const opara_onnx_options* onnx,
                                   opara_model** m) {
    if (cli_is_opara(path)) return opara_model_load_file(rt, path, m);
    return opara_model_load_onnx_file(rt, path, onnx, m);
}

/* 0 (after saying why) when a gives ONNX options for a .opara file: they would be ignored (its shapes
   were fixed when it was converted), so they are refused instead. */
static int cli_onnx_args_fit(const char* cmd, const char* path, const cli_onnx_args* a) {
    if (!cli_is_opara(path) || (!a->n_shapes && !a->default_dim)) return 1;
    fprintf(stderr, "opara %s: --shape and --default-dim size the symbolic dims of an ONNX file; '%s' is a .opara "
                    "model whose shapes were fixed by `opara convert` (give them there)\n", cmd, path);
    return 0;
}

/* Size of the file at path, -1 when it cannot be sized. */
static long long cli_file_size(const char* path) {
    FILE* f = tool_fopen(path, "rb");
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0) n = ftell(f);
    if (f) fclose(f);
    return n;
}

/* --batch N sets the symbolic batch dimension; on a model whose inputs have none (their batch is
   fixed in the file) it would be ignored, so it is refused instead. */
static int cli_check_batch(const char* cmd, const opara_model* m, long long batch, int given) {
    uint32_t i;
    opara_tensor_info t;
    if (!given) return 1;
    for (i = 0; i < opara_model_input_count(m); ++i)
        if (opara_model_input_info(m, i, &t) == OPARA_OK && t.rank > 0 && t.dims[0] == OPARA_DIM_BATCH) return 1;
    fprintf(stderr, "opara %s: --batch %lld: the model has no symbolic batch dimension (its input shapes are fixed), so "
                    "the batch cannot be changed; convert the ONNX model with --shape NAME=N,... to make the first "
                    "dim the batch\n", cmd, batch);
    return 0;
}

/* The library's log for subcommands that set a logger: INFO and WARN lines (backend fallback,
   libraries loaded) pass; while cli_caller_reports_errors is set, the ERROR line a failing call
   logs is dropped, because the subcommand prints that detail itself (once, with its context). */
static int cli_caller_reports_errors;

static void cli_log(opara_log_level level, opara_log_item item, const char* message, void* user_data) {
    if (cli_caller_reports_errors && level == OPARA_LOG_ERROR && item == OPARA_LOGITEM_ERROR_DETAIL) return;
    opara_log_stderr(level, item, message, user_data);
}
