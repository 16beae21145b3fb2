/* The model object: loading from memory and from files (mmap / MapViewOfFile / read) and the
   public queries. Every way a model is made validates it with opara_validate.c. */
#include "opara_model.h"
#if defined(_WIN32)
#  include <io.h>              /* _get_osfhandle */
#  include "../../opara_dl.h" /* <windows.h>, opara_dl_widen */
#endif

#if !defined(OPARA_NO_STDIO)
#  include <errno.h>
#  include <stdio.h>
#  if defined(__unix__) || defined(__APPLE__) /* Windows: <windows.h> comes with opara_dl.h */
#    include <fcntl.h>
#    include <sys/stat.h>
#    include <unistd.h>
#    define OPARA__HAVE_FSTAT 1
/* OPARA_NO_MMAP: always copy .opara files into memory (then a file rewritten in place while the
   model lives cannot fault the process; see opara_model_load_file). */
#    if !defined(OPARA_NO_MMAP)
#      include <sys/mman.h>
#      define OPARA__HAVE_MMAP 1
#    endif
#  endif
#endif

/* ---- the model object ------------------------------------------------------------------------ */

static opara_model* opara__model_new(opara_runtime* rt) {
    opara_model* m = (opara_model*)opara__calloc(rt, 1, sizeof *m);
    if (!m) return NULL;
    m->rt = rt;
    m->refs = 1;
    opara__graph_init(&m->graph, rt);
    return m;
}

static void opara__unmap(opara_model* m) {
#if defined(OPARA__HAVE_MMAP)
    if (m->map_base) munmap(m->map_base, m->map_size);
#elif defined(_WIN32) && !defined(OPARA_NO_STDIO)
    if (m->map_base) UnmapViewOfFile(m->map_base);
    if (m->map_handle) CloseHandle((HANDLE)m->map_handle);
#endif
    m->map_base = NULL;
    m->map_handle = NULL;
}

static void opara__model_free(opara_model* model) {
    opara_runtime* rt = model->rt;
    opara__graph_free(&model->graph);
    opara__free(rt, model->owned);
    opara__unmap(model);
    opara__free(rt, model);
}

/* The model object is mutable only in its reference count (sessions take `const opara_model*`). */
OPARA__PRIVATE void opara__model_retain(const opara_model* model) {
    opara__atomic_add(&((opara_model*)(uintptr_t)model)->refs, 1);
}

OPARA__PRIVATE void opara__model_release(const opara_model* model) {
    opara_model* m = (opara_model*)(uintptr_t)model;
    if (m && opara__atomic_add(&m->refs, -1) == 0) opara__model_free(m);
}

/* Drops the caller's reference: sessions made from the model keep it alive until they are destroyed. */
OPARADEF void opara_model_destroy(opara_model* model) { opara__model_release(model); }

OPARA__PRIVATE opara_result opara__model_from_graph(opara_runtime* rt, opara__graph* g, opara_model** out) {
    opara_model* m;
    opara_result r;
    *out = NULL;
    r = opara__graph_validate(g);
    if (r != OPARA_OK) {
        opara__graph_free(g);
        return r;
    }
    m = opara__model_new(rt);
    if (!m) {
        opara__graph_free(g);
        return opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory creating a model");
    }
    m->graph = *g;
    memset(g, 0, sizeof *g);
    *out = m;
    return OPARA_OK;
}

OPARA__PRIVATE const opara__graph* opara__model_graph(const opara_model* model) {
    return &model->graph;
}

/* Parses m->image into m->graph; destroys m on failure. */
static opara_result opara__model_parse(opara_model* m, opara_model** out) {
    opara_result r = opara__format_read(m->rt, m->image, m->image_size, &m->graph, &m->alignment, &m->content_hash);
    if (r == OPARA_OK && m->rt->verify_content_hash) r = opara__format_verify_hash(m->rt, m->image);
    if (r != OPARA_OK) {
        opara_model_destroy(m);
        return r;
    }
    opara__log(&m->rt->logger, OPARA_LOG_DEBUG, OPARA_LOGITEM_MODEL_LOADED, "model loaded: %u tensors, %u nodes, %s",
               m->graph.n_values, m->graph.n_nodes, m->zero_copy ? "weights used in place" : "weights copied");
    *out = m;
    return OPARA_OK;
}

static int opara__host_is_little_endian(void) {
    const uint16_t probe = 1;
    uint8_t first;
    memcpy(&first, &probe, 1);
    return first == 1;
}

static opara_result opara__load_checks(opara_runtime* rt, opara_model** out) {
    if (!out) return rt ? opara__fail(rt, OPARA_ERR_INVALID_ARGS, "out is NULL") : OPARA_ERR_INVALID_ARGS;
    *out = NULL;
    if (!rt) return OPARA_ERR_INVALID_ARGS;
    if (!opara__host_is_little_endian())
        return opara__fail(rt, OPARA_ERR_UNSUPPORTED, "big-endian hosts cannot use .opara weights in place");
    return OPARA_OK;
}

OPARADEF opara_result opara_model_load_memory(opara_runtime* runtime, const void* data, size_t size, opara_model** out) {
    const uint8_t* bytes = (const uint8_t*)data;
    uint32_t alignment;
    opara_model* m;
    opara_result r = opara__load_checks(runtime, out);
    if (r != OPARA_OK) return r;
    if (!data && size) return opara__fail(runtime, OPARA_ERR_INVALID_ARGS, "data is NULL");
    m = opara__model_new(runtime);
    if (!m) return opara__fail(runtime, OPARA_ERR_OUT_OF_MEMORY, "out of memory creating a model");
    alignment = opara__format_peek_alignment(bytes, size);
    m->image = bytes;
    m->image_size = size;
    m->zero_copy = 1;
    if (alignment && opara__is_pow2(alignment) && alignment <= OPARA__FORMAT_MAX_ALIGN && (uintptr_t)bytes % alignment) {
        m->owned = (uint8_t*)opara__alloc_aligned(&runtime->allocator, size, alignment);
        if (!m->owned) {
            opara_model_destroy(m);
            return opara__fail(runtime, OPARA_ERR_OUT_OF_MEMORY, "out of memory copying a misaligned %zu-byte model", size);
        }
        memcpy(m->owned, bytes, size);
        m->image = m->owned;
        m->zero_copy = 0;
    }
    return opara__model_parse(m, out);
}

#if !defined(OPARA_NO_STDIO)
/* ---- reading a file once -------------------------------------------------------------------- */

/* An open file: a POSIX descriptor (opened without blocking, so a FIFO without a writer cannot
   hang the call; plain open/fstat/read need no feature macros beyond what mmap needs), else stdio. */
typedef struct opara__rfile {
#if defined(OPARA__HAVE_FSTAT)
    int fd;
#else
    FILE* f;
#endif
} opara__rfile;

#if defined(OPARA__HAVE_FSTAT)
static int opara__rfile_open(opara__rfile* f, const char* path) {
    f->fd = open(path, O_RDONLY | O_NONBLOCK);
    return f->fd >= 0;
}
static void opara__rfile_close(opara__rfile* f) { close(f->fd); }

/* Only regular files qualify: a directory reads as LONG_MAX bytes or fails, a device or pipe has
   no size (/dev/zero says 0 and yields bytes forever). */
static opara_result opara__rfile_size(opara_runtime* rt, opara__rfile* f, const char* path, size_t* size) {
    struct stat st;
    if (fstat(f->fd, &st) != 0) return opara__fail(rt, OPARA_ERR_IO, "cannot determine the size of '%s'", path);
    if (S_ISDIR(st.st_mode)) return opara__fail(rt, OPARA_ERR_IO, "'%s' is a directory, not a model file", path);
    if (!S_ISREG(st.st_mode))
        return opara__fail(rt, OPARA_ERR_IO, "'%s' is not a regular file (a device, pipe or socket); read it into "
                           "memory and load that", path);
    if (st.st_size < 0 || (uint64_t)st.st_size > (uint64_t)((size_t)-1 - 1))
        return opara__fail(rt, OPARA_ERR_IO, "'%s' is too large for this address space", path);
    *size = (size_t)st.st_size;
    return OPARA_OK;
}

/* Reads up to n bytes (fewer only at the end of the file); 0 on a read error. */
static int opara__rfile_read(opara__rfile* f, uint8_t* dst, size_t n, size_t* got) {
    *got = 0;
    while (*got < n) {
        size_t chunk = n - *got < ((size_t)1 << 30) ? n - *got : ((size_t)1 << 30);
        ssize_t k = read(f->fd, dst + *got, chunk);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return 0;
        if (k == 0) break;
        *got += (size_t)k;
    }
    return 1;
}
#else
static int opara__rfile_open(opara__rfile* f, const char* path) {
    f->f = opara__fopen(path, "rb");
    if (f->f) setvbuf(f->f, NULL, _IONBF, 0); /* reads go straight into the buffer, each one to the file */
    return f->f != NULL;
}
static void opara__rfile_close(opara__rfile* f) { fclose(f->f); }

static opara_result opara__rfile_size(opara_runtime* rt, opara__rfile* f, const char* path, size_t* size) {
    uint64_t n;
#  if defined(_WIN32) /* a device (NUL, CON, COM1) has no size */
    if (GetFileType((HANDLE)_get_osfhandle(_fileno(f->f))) != FILE_TYPE_DISK)
        return opara__fail(rt, OPARA_ERR_IO, "'%s' is not a regular file (a device, pipe or socket); read it into "
                           "memory and load that", path);
#  endif
    if (!opara__fsize(f->f, &n) || n > (uint64_t)((size_t)-1 - 1))
        return opara__fail(rt, OPARA_ERR_IO, "cannot determine the size of '%s' (a directory or not a regular file?)",
                           path);
    *size = (size_t)n;
    return OPARA_OK;
}

static int opara__rfile_read(opara__rfile* f, uint8_t* dst, size_t n, size_t* got) {
    *got = fread(dst, 1, n, f->f);
    return !ferror(f->f);
}
#endif

/* Reads exactly `size` more bytes, then checks that the file ends there: a file truncated or
   extended since it was sized (an editor rewriting it in place) is refused, not half-read. */
static opara_result opara__rfile_read_rest(opara_runtime* rt, opara__rfile* f, const char* path, uint8_t* dst,
                                           size_t done, size_t size) {
    uint8_t probe;
    size_t got, more;
    if (!opara__rfile_read(f, dst + done, size - done, &got)) return opara__fail(rt, OPARA_ERR_IO, "cannot read '%s'", path);
    got += done;
    if (got != size)
        return opara__fail(rt, OPARA_ERR_IO, "'%s' changed while being read: it was %zu bytes, %zu could be read",
                           path, size, got);
    if (!opara__rfile_read(f, &probe, 1, &more)) return opara__fail(rt, OPARA_ERR_IO, "cannot read '%s'", path);
    if (more)
        return opara__fail(rt, OPARA_ERR_IO, "'%s' changed while being read: it was %zu bytes and now holds more",
                           path, size);
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__read_file_once(opara_runtime* rt, const char* path, opara__head_alignment_fn align,
                                                 uint8_t** data, size_t* size) {
    uint8_t head[OPARA__FORMAT_HEADER_SIZE];
    size_t n = 0, got = 0, alignment = 16;
    opara_result r;
    opara__rfile f;
    *data = NULL;
    *size = 0;
    if (!opara__rfile_open(&f, path)) {
#if defined(_WIN32) /* Windows' C runtime does not open a directory at all: say why it failed */
        wchar_t wide[OPARA_DL_WPATH_MAX];
        DWORD attributes = opara_dl_widen(path, wide, OPARA_DL_WPATH_MAX) ? GetFileAttributesW(wide) : INVALID_FILE_ATTRIBUTES;
        if (attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY))
            return opara__fail(rt, OPARA_ERR_IO, "'%s' is a directory, not a model file", path);
#endif
        return opara__fail(rt, OPARA_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    }
    r = opara__rfile_size(rt, &f, path, &n);
    if (r == OPARA_OK && !opara__rfile_read(&f, head, n < sizeof head ? n : sizeof head, &got)) /* never past the size */
        r = opara__fail(rt, OPARA_ERR_IO, "cannot read '%s'", path);
    if (r != OPARA_OK) {
        opara__rfile_close(&f);
        return r;
    }
    if (align) alignment = align(head, got);
    if (!opara__is_pow2(alignment) || alignment > OPARA__FORMAT_MAX_ALIGN) alignment = OPARA__DEFAULT_ALIGN;
    *data = (uint8_t*)opara__alloc_aligned(&rt->allocator, n + 1, alignment);
    if (!*data) {
        opara__rfile_close(&f);
        return opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory reading '%s' (%zu bytes)", path, n);
    }
    memcpy(*data, head, got);
    r = opara__rfile_read_rest(rt, &f, path, *data, got, n);
    opara__rfile_close(&f);
    if (r != OPARA_OK) {
        opara__free(rt, *data);
        *data = NULL;
        return r;
    }
    *size = n;
    return OPARA_OK;
}

/* Reads the whole file into an aligned buffer (the portable path). */
static opara_result opara__read_whole_file(opara_model* m, const char* path) {
    size_t n;
    opara_result r = opara__read_file_once(m->rt, path, opara__format_peek_alignment, &m->owned, &n);
    if (r != OPARA_OK) return r;
    m->image = m->owned;
    m->image_size = n;
    return OPARA_OK;
}

/* Maps the file read-only; returns OPARA_ERR_UNSUPPORTED when mapping is not possible here. */
static opara_result opara__map_file(opara_model* m, const char* path) {
#if defined(OPARA__HAVE_MMAP)
    struct stat st;
    void* base;
    int fd = open(path, O_RDONLY | O_NONBLOCK); /* a FIFO must not block; it takes the read path's refusal */
    if (fd < 0) return opara__fail(m->rt, OPARA_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (uint64_t)st.st_size > (uint64_t)(size_t)-1) {
        close(fd);
        return OPARA_ERR_UNSUPPORTED; /* empty or odd files take the read path and its messages */
    }
    base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (base == MAP_FAILED) return OPARA_ERR_UNSUPPORTED;
    m->map_base = base;
    m->map_size = (size_t)st.st_size;
#elif defined(_WIN32) && !defined(OPARA_NO_MMAP)
    wchar_t wide[OPARA_DL_WPATH_MAX];
    HANDLE file;
    LARGE_INTEGER size;
    HANDLE mapping;
    void* base;
    if (!opara_dl_widen(path, wide, OPARA_DL_WPATH_MAX))
        return opara__fail(m->rt, OPARA_ERR_IO, "cannot open '%s': the path is not UTF-8 or is longer than %d characters",
                           path, OPARA_DL_WPATH_MAX - 1);
    file = CreateFileW(wide, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
    if (file == INVALID_HANDLE_VALUE) return opara__fail(m->rt, OPARA_ERR_IO, "cannot open '%s'", path);
    if (!GetFileSizeEx(file, &size) || size.QuadPart <= 0 || (uint64_t)size.QuadPart > (uint64_t)(size_t)-1) {
        CloseHandle(file);
        return OPARA_ERR_UNSUPPORTED;
    }
    mapping = CreateFileMappingA(file, NULL, PAGE_READONLY, 0, 0, NULL);
    CloseHandle(file);
    if (!mapping) return OPARA_ERR_UNSUPPORTED;
    base = MapViewOfFile(mapping, FILE_MAP_READ, 0, 0, 0);
    if (!base) {
        CloseHandle(mapping);
        return OPARA_ERR_UNSUPPORTED;
    }
    m->map_base = base;
    m->map_handle = mapping;
    m->map_size = (size_t)size.QuadPart;
#else
    (void)m;
    (void)path;
    return OPARA_ERR_UNSUPPORTED;
#endif
    m->image = (const uint8_t*)m->map_base;
    m->image_size = m->map_size;
    return OPARA_OK;
}

OPARADEF opara_result opara_model_load_file(opara_runtime* runtime, const char* path, opara_model** out) {
    opara_model* m;
    opara_result r = opara__load_checks(runtime, out);
    if (r != OPARA_OK) return r;
    if (!path) return opara__fail(runtime, OPARA_ERR_INVALID_ARGS, "path is NULL");
    m = opara__model_new(runtime);
    if (!m) return opara__fail(runtime, OPARA_ERR_OUT_OF_MEMORY, "out of memory creating a model");
    r = opara__map_file(m, path);
    if (r == OPARA_OK) {
        uint32_t alignment = opara__format_peek_alignment(m->image, m->image_size);
        m->zero_copy = 1;
        if (alignment && (uintptr_t)m->image % alignment) { /* alignment above the page size */
            opara__unmap(m);
            r = OPARA_ERR_UNSUPPORTED;
        }
    }
    if (r == OPARA_ERR_UNSUPPORTED) {
        m->zero_copy = 0;
        r = opara__read_whole_file(m, path);
    }
    if (r != OPARA_OK) {
        opara_model_destroy(m);
        return r;
    }
    return opara__model_parse(m, out);
}
#endif

/* ---- queries --------------------------------------------------------------------------------- */

static void opara__tensor_info(const opara__value* v, opara_tensor_info* out) {
    int32_t k;
    memset(out, 0, sizeof *out);
    out->name = v->name;
    out->dtype = v->dtype;
    out->rank = v->shape.ndim;
    for (k = 0; k < v->shape.ndim && k < OPARA_MAX_DIMS; ++k)
        out->dims[k] = v->shape.dims[k] == OPARA__DIM_BATCH ? OPARA_DIM_BATCH : v->shape.dims[k];
}

OPARADEF uint32_t opara_model_input_count(const opara_model* model) {
    return model ? model->graph.n_inputs : 0;
}

OPARADEF uint32_t opara_model_output_count(const opara_model* model) {
    return model ? model->graph.n_outputs : 0;
}

OPARADEF opara_result opara_model_input_info(const opara_model* model, uint32_t index, opara_tensor_info* out) {
    if (!model || !out) return OPARA_ERR_INVALID_ARGS;
    if (index >= model->graph.n_inputs) return OPARA_ERR_NOT_FOUND;
    opara__tensor_info(&model->graph.values[model->graph.inputs[index]], out);
    return OPARA_OK;
}

OPARADEF opara_result opara_model_output_info(const opara_model* model, uint32_t index, opara_tensor_info* out) {
    if (!model || !out) return OPARA_ERR_INVALID_ARGS;
    if (index >= model->graph.n_outputs) return OPARA_ERR_NOT_FOUND;
    opara__tensor_info(&model->graph.values[model->graph.outputs[index]], out);
    return OPARA_OK;
}

OPARADEF uint32_t opara_model_node_count(const opara_model* model) {
    return model ? model->graph.n_nodes : 0;
}

OPARADEF const char* opara_model_node_op(const opara_model* model, uint32_t index) {
    if (!model || index >= model->graph.n_nodes) return NULL;
    return opara__op_name(model->graph.nodes[index].op);
}

OPARADEF const char* opara_model_node_name(const opara_model* model, uint32_t index) {
    if (!model || index >= model->graph.n_nodes) return NULL;
    return model->graph.nodes[index].name ? model->graph.nodes[index].name : "";
}

OPARADEF opara_result opara_model_get_stats(const opara_model* model, opara_model_stats* out) {
    const opara__graph* g;
    uint32_t i;
    if (!model || !out) return OPARA_ERR_INVALID_ARGS;
    g = &model->graph;
    memset(out, 0, sizeof *out);
    out->n_tensors = g->n_values;
    out->n_nodes = g->n_nodes;
    out->n_inputs = g->n_inputs;
    out->n_outputs = g->n_outputs;
    for (i = 0; i < g->n_values; ++i)
        if (g->values[i].kind == OPARA__VALUE_CONST) {
            out->n_constants++;
            out->n_params += (uint64_t)opara__shape_numel(&g->values[i].shape);
            out->param_bytes += g->values[i].nbytes;
        }
    out->file_bytes = model->image ? model->image_size : 0;
    out->content_hash = model->content_hash;
    out->zero_copy = model->zero_copy;
    out->source_opset = g->source_opset;
    out->producer = g->producer_name ? g->producer_name : "";
    return OPARA_OK;
}

OPARADEF void opara_free(opara_runtime* runtime, void* ptr) {
    if (runtime) opara__free(runtime, ptr);
}
