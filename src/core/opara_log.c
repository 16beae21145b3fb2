/* Result strings, the logger hook, and failure details. */
#include "opara_internal.h"

#include <stdio.h>

OPARADEF const char* opara_result_string(opara_result result) {
    switch (result) {
#define OPARA__RESULT_CASE(name, value, text) case name: return #name ": " text;
        OPARA_RESULTS(OPARA__RESULT_CASE)
#undef OPARA__RESULT_CASE
    default: return "unknown opara_result";
    }
}

OPARADEF const char* opara_version_string(void) {
    return OPARA_VERSION_STRING;
}

#ifndef OPARA_NO_STDIO
static const char* opara__level_name(opara_log_level level) {
    switch (level) {
    case OPARA_LOG_ERROR: return "error";
    case OPARA_LOG_WARN: return "warning";
    case OPARA_LOG_INFO: return "info";
    default: return "debug";
    }
}

OPARADEF void opara_log_stderr(opara_log_level level, opara_log_item item, const char* message, void* user_data) {
    (void)item;
    (void)user_data;
    fprintf(stderr, "opara: %s: %s\n", opara__level_name(level), message ? message : "");
}
#endif

static int opara__log_enabled(const opara_logger* logger, opara_log_level level) {
    opara_log_level max = logger && logger->max_level ? logger->max_level : OPARA_LOG_INFO;
    return logger && logger->func && level <= max;
}

static void opara__logv(const opara_logger* logger, opara_log_level level, opara_log_item item, const char* fmt,
                        va_list args) {
    char line[OPARA__DETAIL_MAX];
    if (!opara__log_enabled(logger, level)) return;
    if (opara__vsnprintf(line, sizeof line, fmt, args) < 0) line[0] = 0;
    logger->func(level, item, line, logger->user_data);
}

OPARA__PRIVATE void opara__log(const opara_logger* logger, opara_log_level level, opara_log_item item, const char* fmt,
                               ...) {
    va_list args;
    va_start(args, fmt);
    opara__logv(logger, level, item, fmt, args);
    va_end(args);
}

OPARA__PRIVATE opara_result opara__fail_into(opara__errbuf* buf, const opara_logger* logger, opara_result code,
                                             const char* fmt, va_list args) {
    if (opara__vsnprintf(buf->text, sizeof buf->text, fmt, args) < 0) buf->text[0] = 0;
    opara__log(logger, OPARA_LOG_ERROR, OPARA_LOGITEM_ERROR_DETAIL, "%s (%s)", buf->text, opara_result_string(code));
    return code;
}

OPARA__PRIVATE opara_result opara__fail_to(opara__errbuf* buf, const opara_logger* logger, opara_result code,
                                           const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    code = opara__fail_into(buf, logger, code, fmt, args);
    va_end(args);
    return code;
}

OPARA__PRIVATE opara_result opara__failv(opara_runtime* rt, opara_result code, const char* fmt, va_list args) {
    if (!rt) return code;
    return opara__fail_into(&rt->error, &rt->logger, code, fmt, args);
}

OPARA__PRIVATE opara_result opara__fail(opara_runtime* rt, opara_result code, const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    code = opara__failv(rt, code, fmt, args);
    va_end(args);
    return code;
}
