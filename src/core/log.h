/* log.h — messages on stderr that never allocate and never re-enter stdio or our
 * own wrappers (formatted into a stack buffer, written with the raw system call). */
#ifndef UNBLOCK_LOG_H
#define UNBLOCK_LOG_H

#include "core/options.h"

/* Prints "unblock[<rank or pid>]: <message>\n" if `level` is enabled by UNBLOCK_LOG. */
void unblock_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes `line` (already formatted, newline included) to stderr as it is. */
void unblock_log_raw(const char *line);

#define unblock_error(...) unblock_log(UNBLOCK_LOG_ERROR, __VA_ARGS__)
#define unblock_warn(...) unblock_log(UNBLOCK_LOG_WARN, __VA_ARGS__)
#define unblock_info(...) unblock_log(UNBLOCK_LOG_INFO, __VA_ARGS__)
#define unblock_debug(...) unblock_log(UNBLOCK_LOG_DEBUG, __VA_ARGS__)

#endif
