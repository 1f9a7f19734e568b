/* profile_file.h — where profiles live and what makes one stale: shared by the
 * library (profile.c) and the launcher's `unblock profile` (tools/unblock.c). */
#ifndef UNBLOCK_PROFILE_FILE_H
#define UNBLOCK_PROFILE_FILE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The profiles' directory: `opt` (UNBLOCK_PROFILE) when set, else the user's
 * cache directory.  -1: none ("off", or no HOME). */
static inline int unblock_profile_dir(const char *opt, char *out, size_t len)
{
    if (opt && strcmp(opt, "off") == 0)
        return -1;
    if (opt && *opt)
        return snprintf(out, len, "%s", opt) < (int)len ? 0 : -1;
    const char *x = getenv("XDG_CACHE_HOME");
    if (x && x[0] == '/')
        return snprintf(out, len, "%s/unblock/profiles", x) < (int)len ? 0 : -1;
    const char *h = getenv("HOME");
    if (h && h[0] == '/')
        return snprintf(out, len, "%s/.cache/unblock/profiles", h) < (int)len ? 0 : -1;
    return -1;
}

/* A file's stamp: its size and modification time in ns ("SIZE MTIME"). */
static inline int unblock_profile_stamp(const char *path, char *out, size_t len)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    snprintf(out, len, "%lld %lld", (long long)st.st_size,
             (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec);
    return 0;
}

#endif
