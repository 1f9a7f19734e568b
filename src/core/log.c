/* log.c — see log.h.  Safe before the constructor has run (level defaults to warn)
 * and from any thread; keeps errno. */
#define _GNU_SOURCE
#include "core/log.h"
#include "core/core.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

void unblock_log_raw(const char *line)
{
    int saved = errno;
    size_t n = strlen(line);
    while (n > 0) {
        long w = syscall(SYS_write, 2, line, n);
        if (w <= 0)
            break;
        line += w;
        n -= (size_t)w;
    }
    errno = saved;
}

void unblock_log(int level, const char *fmt, ...)
{
    if (level > unblock_opt.log)
        return;
    int saved = errno;
    char buf[512];
    int off;
    if (unblock_g.rank >= 0)
        off = snprintf(buf, sizeof(buf), "unblock[%d]: ", unblock_g.rank);
    else
        off = snprintf(buf, sizeof(buf), "unblock[pid %d]: ", (int)syscall(SYS_getpid));
    va_list ap;
    va_start(ap, fmt);
    errno = saved; /* so %m prints the caller's error */
    vsnprintf(buf + off, sizeof(buf) - (size_t)off - 1, fmt, ap);
    va_end(ap);
    strcat(buf, "\n");
    unblock_log_raw(buf);
    errno = saved;
}
