/* profile.c — the program's profile (profile.h, docs/profile.md).
 *
 * The file, text, one item per line:
 *     unblock-profile 1
 *     key EXE<TAB>SCRIPT          (SCRIPT empty but for interpreters)
 *     stamp SIZE MTIME_NS [SIZE MTIME_NS]
 *     mpi openmpi|mpich
 *     version UNBLOCK_VERSION
 *     runs N
 *     thread needed|not-needed WHY
 *     own needed|not-needed WHY   (following the program's own requests;
 *                                  absent: it started none, followed)
 *     site OBJECT+0xOFF FUNCTION DECISIONS   (one char per size class: C converts,
 *                                             P runs the original call, E called but
 *                                             never decided, . never called)
 *     end
 * A file whose key is another program's, or that does not parse, is ignored
 * with one line; one whose stamp, MPI or version differs is stale and quietly
 * replaced at the end of the run.  Reads and writes use plain system calls
 * and static buffers (this runs inside MPI_Init and MPI_Finalize). */
#define _GNU_SOURCE
#include "core/profile.h"
#include "core/profile_file.h"
#include "core/log.h"
#include "core/options.h"
#include "core/sites.h"
#include "core/stats.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TEXT_MAX 65536

typedef struct {
    char obj[64];
    unsigned long off;
    char fn[48];
    char dec[UNBLOCK_SITE_CLASSES + 1];
} seed_t;

static struct {
    unblock_profile_state_t state;
    int keyed;                 /* key, stamp and file are set */
    char file[PATH_MAX];
    char key[2 * PATH_MAX + 2];
    char stamp[96];
    char family[16];
    int runs, need;            /* need: -1 no profile */
    char why[200];
    int own;                   /* following own requests: 1 needed, 0 not, -1 not said */
    char own_why[120];
    unsigned nseeds;
    seed_t seeds[UNBLOCK_SITES_MAX];
    char level[16], level_why[200];
    char need_here[200];       /* set by unblock_profile_need (MPI-IO, ...) */
    int own_armed;             /* own requests not followed (unblock_profile_chose_own) */
    char own_how[200];
} P = { .need = -1, .own = -1 };

static char text[TEXT_MAX]; /* the profile read (rank 0's after MPI_Init) */
static size_t text_len;

/* ---- which program ---- */

static int is_python(const char *exe)
{
    const char *b = strrchr(exe, '/');
    b = b ? b + 1 : exe;
    return strncmp(b, "python", 6) == 0;
}

/* The script an interpreter runs, from /proc/self/cmdline: the first argument
 * that is not an option ("-m MODULE" names a module; "-c" has no script). */
static int script_of(char *out, size_t len)
{
    static char cmd[8192];
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, cmd, sizeof(cmd) - 1);
    syscall(SYS_close, fd);
    if (n <= 0)
        return -1;
    cmd[n] = '\0';
    char *p = cmd + strlen(cmd) + 1, *end = cmd + n;
    while (p < end) {
        if (strcmp(p, "-c") == 0 || strcmp(p, "-") == 0)
            return -1;
        if (strcmp(p, "-m") == 0) {
            p += strlen(p) + 1;
            if (p >= end)
                return -1;
            snprintf(out, len, "-m %s", p);
            return 0;
        }
        if (strcmp(p, "-W") == 0 || strcmp(p, "-X") == 0) {
            p += strlen(p) + 1;
            if (p < end)
                p += strlen(p) + 1;
            continue;
        }
        if (p[0] == '-') {
            p += strlen(p) + 1;
            continue;
        }
        if (realpath(p, out) == NULL)
            return -1;
        return 0;
    }
    return -1;
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h;
}

static void base_into(char *out, size_t len, const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t i = 0;
    for (; *b && i + 1 < len; b++)
        out[i++] = (char)((*b == ' ' || *b == '\t') ? '_' : *b);
    out[i] = '\0';
}

static int key_program(void)
{
    char exe[PATH_MAX], script[PATH_MAX] = "", dir[PATH_MAX];
    if (unblock_profile_dir(unblock_opt.profile, dir, sizeof(dir)) != 0)
        return -1;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    if (unblock_profile_stamp(exe, P.stamp, sizeof(P.stamp)) != 0)
        return -1;
    if (is_python(exe)) {
        if (script_of(script, sizeof(script)) != 0)
            return -1; /* python -c: nothing to key it by */
        char s2[48];
        if (script[0] == '/' && unblock_profile_stamp(script, s2, sizeof(s2)) == 0) {
            size_t l = strlen(P.stamp);
            snprintf(P.stamp + l, sizeof(P.stamp) - l, " %s", s2);
        }
    }
    snprintf(P.key, sizeof(P.key), "%s\t%s", exe, script);
    char b1[64], b2[64] = "";
    base_into(b1, sizeof(b1), exe);
    if (script[0])
        base_into(b2, sizeof(b2), script);
    if (snprintf(P.file, sizeof(P.file), "%s/%s%s%s-%016llx.profile", dir, b1, b2[0] ? "-" : "",
                 b2, (unsigned long long)fnv1a(P.key)) >= (int)sizeof(P.file))
        return -1;
    P.keyed = 1;
    return 0;
}

/* ---- reading ---- */

/* A line's "needed|not-needed WHY" (`v`): 1 or 0, WHY into `why`; -1 neither. */
static int needed(const char *v, char *why, size_t len)
{
    int n;
    if (strncmp(v, "needed", 6) == 0 && (v[6] == ' ' || v[6] == '\0'))
        n = 1, v += 6;
    else if (strncmp(v, "not-needed", 10) == 0 && (v[10] == ' ' || v[10] == '\0'))
        n = 0, v += 10;
    else
        return -1;
    snprintf(why, len, "%s", *v ? v + 1 : "");
    return n;
}

/* Parses `t` (NUL-terminated, modified in place: lines split) into P.  Returns
 * the state it leads to. */
static unblock_profile_state_t parse(char *t, const char **what)
{
    int saw_end = 0, version_ok = 0, fam_ok = 0, stamp_ok = 0, key_ok = 0, runs = 0, need = -1;
    int own = -1;
    unsigned nseeds = 0;
    char why[sizeof(P.why)] = "", own_why[sizeof(P.own_why)] = "";
    char *save = NULL;
    char *line = strtok_r(t, "\n", &save);
    *what = "not a profile";
    if (line == NULL || strcmp(line, "unblock-profile 1") != 0)
        return UNBLOCK_PROFILE_IGNORED;
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        if (saw_end) {
            *what = "text after its end";
            return UNBLOCK_PROFILE_IGNORED;
        }
        if (strncmp(line, "key ", 4) == 0) {
            key_ok = strcmp(line + 4, P.key) == 0;
        } else if (strncmp(line, "stamp ", 6) == 0) {
            stamp_ok = strcmp(line + 6, P.stamp) == 0;
        } else if (strncmp(line, "mpi ", 4) == 0) {
            fam_ok = strcmp(line + 4, P.family) == 0;
        } else if (strncmp(line, "version ", 8) == 0) {
            version_ok = strcmp(line + 8, UNBLOCK_VERSION) == 0;
        } else if (strncmp(line, "runs ", 5) == 0) {
            char *e;
            long r = strtol(line + 5, &e, 10);
            if (*e || r < 0 || r > 1000000000L) {
                *what = "a bad run count";
                return UNBLOCK_PROFILE_IGNORED;
            }
            runs = (int)r;
        } else if (strncmp(line, "thread ", 7) == 0) {
            if ((need = needed(line + 7, why, sizeof(why))) < 0) {
                *what = "a bad thread line";
                return UNBLOCK_PROFILE_IGNORED;
            }
        } else if (strncmp(line, "own ", 4) == 0) {
            if ((own = needed(line + 4, own_why, sizeof(own_why))) < 0) {
                *what = "a bad own line";
                return UNBLOCK_PROFILE_IGNORED;
            }
        } else if (strncmp(line, "site ", 5) == 0) {
            seed_t s;
            char where[128];
            if (nseeds >= UNBLOCK_SITES_MAX ||
                sscanf(line + 5, "%127s %47s %8s", where, s.fn, s.dec) != 3 ||
                strlen(s.dec) != UNBLOCK_SITE_CLASSES ||
                strspn(s.dec, "CPE.") != UNBLOCK_SITE_CLASSES) {
                *what = "a bad site line";
                return UNBLOCK_PROFILE_IGNORED;
            }
            char *plus = strrchr(where, '+');
            char *e = NULL;
            if (plus == NULL || strncmp(plus, "+0x", 3) != 0 ||
                (size_t)(plus - where) >= sizeof(s.obj)) {
                *what = "a bad site line";
                return UNBLOCK_PROFILE_IGNORED;
            }
            s.off = strtoul(plus + 3, &e, 16);
            if (*e) {
                *what = "a bad site line";
                return UNBLOCK_PROFILE_IGNORED;
            }
            memcpy(s.obj, where, (size_t)(plus - where));
            s.obj[plus - where] = '\0';
            P.seeds[nseeds++] = s;
        } else if (strcmp(line, "end") == 0) {
            saw_end = 1;
        } else {
            *what = "an unknown line";
            return UNBLOCK_PROFILE_IGNORED;
        }
    }
    if (!saw_end || need < 0) {
        *what = "cut short";
        return UNBLOCK_PROFILE_IGNORED;
    }
    if (!key_ok) {
        *what = "written for another program";
        return UNBLOCK_PROFILE_IGNORED;
    }
    if (!stamp_ok || !fam_ok || !version_ok) {
        *what = !stamp_ok ? "the program changed" : !fam_ok ? "another MPI" : "another unblock";
        return UNBLOCK_PROFILE_STALE;
    }
    P.nseeds = nseeds;
    P.runs = runs;
    P.need = need;
    snprintf(P.why, sizeof(P.why), "%s", why);
    P.own = own;
    snprintf(P.own_why, sizeof(P.own_why), "%s", own_why);
    return UNBLOCK_PROFILE_USED;
}

/* `own`: this process read the file itself (a problem is worth a line); else
 * it is rank 0's copy, whose program may sit at another path on this node. */
static void apply(char *t, size_t len, int own)
{
    static char work[TEXT_MAX];
    memcpy(work, t, len);
    work[len] = '\0';
    P.nseeds = 0;
    P.need = -1;
    P.runs = 0;
    P.own = -1;
    const char *what = "";
    P.state = parse(work, &what);
    if (P.state != UNBLOCK_PROFILE_USED)
        P.nseeds = 0, P.need = -1, P.runs = 0, P.own = -1;
    if (P.state == UNBLOCK_PROFILE_IGNORED && own)
        unblock_warn("the profile %s is ignored (%s); this run writes a new one", P.file, what);
    else if (P.state == UNBLOCK_PROFILE_STALE)
        unblock_info("the profile %s is stale (%s); this run writes a new one", P.file, what);
    else if (P.state == UNBLOCK_PROFILE_IGNORED)
        unblock_info("rank 0's profile does not apply here (%s)", what);
}

int unblock_profile_load(const char *mpi_family)
{
    snprintf(P.family, sizeof(P.family), "%s", mpi_family);
    P.state = UNBLOCK_PROFILE_OFF;
    if (key_program() != 0)
        return 0;
    P.state = UNBLOCK_PROFILE_NEW;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, P.file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t n = 0;
    ssize_t r;
    while (n < sizeof(text) - 1 && (r = read(fd, text + n, sizeof(text) - 1 - n)) > 0)
        n += (size_t)r;
    syscall(SYS_close, fd);
    text[n] = '\0';
    text_len = n;
    apply(text, n, 1);
    if (P.state != UNBLOCK_PROFILE_USED)
        text_len = 0;
    return P.state == UNBLOCK_PROFILE_USED;
}

int unblock_profile_needs_thread(void)
{
    return P.state == UNBLOCK_PROFILE_USED ? P.need : -1;
}

int unblock_profile_own_needed(void)
{
    return P.state == UNBLOCK_PROFILE_USED ? P.own : -1;
}

const char *unblock_profile_last_why(void)
{
    return P.why[0] ? P.why : "it was needed";
}

size_t unblock_profile_text(const char **t)
{
    *t = text;
    return text_len;
}

void unblock_profile_adopt(const char *t, size_t len)
{
    if (!P.keyed || len >= sizeof(text))
        return;
    if (t != text)
        memcpy(text, t, len);
    text[len] = '\0';
    text_len = len;
    if (len == 0) {
        /* rank 0 has none: start afresh, as it does */
        P.nseeds = 0, P.need = -1, P.runs = 0, P.own = -1;
        if (P.state == UNBLOCK_PROFILE_USED)
            P.state = UNBLOCK_PROFILE_NEW;
        return;
    }
    apply(text, len, 0);
}

/* ---- sites ---- */

static int where_of(uintptr_t pc, char *obj, size_t len, unsigned long *off)
{
    Dl_info di;
    if (!dladdr((void *)pc, &di) || di.dli_fname == NULL || di.dli_fbase == NULL)
        return -1;
    base_into(obj, len, di.dli_fname);
    if (obj[0] == '\0')
        return -1;
    *off = (unsigned long)(pc - (uintptr_t)di.dli_fbase);
    return 0;
}

void unblock_profile_seed(uintptr_t pc, const char *fn_name, uint32_t seed[])
{
    for (int c = 0; c < UNBLOCK_SITE_CLASSES; c++)
        seed[c] = 0;
    if (P.nseeds == 0 || fn_name == NULL)
        return;
    char obj[64];
    unsigned long off;
    if (where_of(pc, obj, sizeof(obj), &off) != 0)
        return;
    for (unsigned i = 0; i < P.nseeds; i++) {
        const seed_t *s = &P.seeds[i];
        if (s->off != off || strcmp(s->obj, obj) != 0 || strcmp(s->fn, fn_name) != 0)
            continue;
        for (int c = 0; c < UNBLOCK_SITE_CLASSES; c++)
            seed[c] = s->dec[c] == 'C' ? UNBLOCK_SITE_CONVERT
                    : s->dec[c] == 'P' ? UNBLOCK_SITE_PASS
                    : s->dec[c] == 'E' ? UNBLOCK_SITE_SEEN : 0;
        return;
    }
}

/* ---- what this run needed ---- */

void unblock_profile_need(const char *why)
{
    if (P.need_here[0] == '\0')
        snprintf(P.need_here, sizeof(P.need_here), "%s", why);
}

const char *unblock_profile_thread_reason(int threaded, uint64_t calls, uint64_t call_ns,
                                          uint64_t own_late)
{
    static char why[200];
    if (P.need_here[0])
        return P.need_here;
    if (threaded) {
        /* With the thread: whether what conversions hid paid for what the
         * thread level cost every call. */
        /* (requests the program waited for late: those the thread's driving
         * can move; one it found complete while the program already waited
         * for it did not need it: a 64 KiB ping-pong) */
        uint64_t driven = unblock_counter_get(&unblock_stats.comm_own_progressed);
        if (driven && own_late) {
            snprintf(why, sizeof(why),
                     "it drove %llu of the program's own requests (%llu waited for late)",
                     (unsigned long long)driven, (unsigned long long)own_late);
            return why;
        }
        uint64_t gain = unblock_sites_gain_ns();
        if (gain > calls * call_ns) {
            snprintf(why, sizeof(why), "conversions hid %.3f ms, the thread level cost about %.3f",
                     (double)gain / 1e6, (double)(calls * call_ns) / 1e6);
            return why;
        }
        return NULL;
    }
    /* Without it: calls new sites would have tried converting, and the
     * program's own large requests it would have driven. */
    uint64_t wanted = unblock_sites_wanted_thread();
    if (wanted) {
        snprintf(why, sizeof(why), "%llu calls of new sites could not be converted without it",
                 (unsigned long long)wanted);
        return why;
    }
    uint64_t driveable = unblock_counter_get(&unblock_stats.comm_own_driveable);
    if (driveable && own_late) {
        snprintf(why, sizeof(why),
                 "%llu of the program's own requests are large enough to drive "
                 "(%llu waited for late)",
                 (unsigned long long)driveable, (unsigned long long)own_late);
        return why;
    }
    return NULL;
}

/* ---- writing ---- */

static char out[TEXT_MAX];
static size_t out_len;
static int out_full;

static void put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void put(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out + out_len, sizeof(out) - out_len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(out) - out_len)
        out_full = 1;
    else
        out_len += (size_t)n;
}

static int mkdirs(const char *dir)
{
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s", dir);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0700) != 0 && errno != EEXIST)
                return -1;
            *s = '/';
        }
    return mkdir(p, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* A WHY of the file's, on one line. */
static void one_line(char *out, size_t len, const char *why)
{
    snprintf(out, len, "%s", why ? why : "");
    for (char *c = out; *c; c++)
        if (*c == '\n')
            *c = ' ';
}

void unblock_profile_save(int need, const char *why, int own, const char *own_why)
{
    if (!P.keyed || P.state == UNBLOCK_PROFILE_OFF)
        return;
    out_len = 0;
    out_full = 0;
    char clean[sizeof(P.why)], own_clean[sizeof(P.own_why)];
    one_line(clean, sizeof(clean), why);
    one_line(own_clean, sizeof(own_clean), own_why);
    put("unblock-profile 1\nkey %s\nstamp %s\nmpi %s\nversion %s\nruns %d\nthread %s%s%s\n",
        P.key, P.stamp, P.family, UNBLOCK_VERSION, P.runs + 1, need ? "needed" : "not-needed",
        clean[0] ? " " : "", clean);
    if (own >= 0)
        put("own %s%s%s\n", own ? "needed" : "not-needed", own_clean[0] ? " " : "", own_clean);
    /* This run's sites, each class as it ended (or as the profile had it, if
     * this run never decided it), then the profile's sites this run missed. */
    static unsigned char seen[UNBLOCK_SITES_MAX];
    memset(seen, 0, sizeof(seen));
    for (unsigned k = 0; k < UNBLOCK_SITES_MAX; k++) {
        const unblock_site_t *s = &unblock_sites[k];
        if (s->pc == 0 || s->excluded || s->fn_name == NULL)
            continue;
        char obj[64], dec[UNBLOCK_SITE_CLASSES + 1];
        unsigned long off;
        if (where_of(s->pc, obj, sizeof(obj), &off) != 0)
            continue;
        const seed_t *old = NULL;
        for (unsigned i = 0; i < P.nseeds; i++)
            if (P.seeds[i].off == off && strcmp(P.seeds[i].obj, obj) == 0 &&
                strcmp(P.seeds[i].fn, s->fn_name) == 0) {
                old = &P.seeds[i];
                seen[i] = 1;
            }
        int any = 0;
        for (int c = 0; c < UNBLOCK_SITE_CLASSES; c++) {
            uint32_t d = s->cls[c].decision;
            dec[c] = d == UNBLOCK_SITE_CONVERT ? 'C' : d == UNBLOCK_SITE_PASS ? 'P'
                   : old && old->dec[c] != '.' ? old->dec[c]
                   : s->cls[c].calls ? 'E' : '.';
            any |= dec[c] != '.';
        }
        dec[UNBLOCK_SITE_CLASSES] = '\0';
        if (any)
            put("site %s+%#lx %s %s\n", obj, off, s->fn_name, dec);
    }
    for (unsigned i = 0; i < P.nseeds; i++)
        if (!seen[i])
            put("site %s+%#lx %s %s\n", P.seeds[i].obj, P.seeds[i].off, P.seeds[i].fn,
                P.seeds[i].dec);
    put("end\n");
    if (out_full) {
        unblock_warn("the profile of this program is too large to write (%zu bytes)", sizeof(out));
        return;
    }
    char dir[PATH_MAX], tmp[PATH_MAX + 32];
    snprintf(dir, sizeof(dir), "%s", P.file);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", P.file, (int)getpid());
    int fd = -1;
    if (mkdirs(dir) == 0)
        fd = (int)syscall(SYS_openat, AT_FDCWD, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        /* The default directory is a convenience: say so only when asked for. */
        if (unblock_opt.profile && unblock_opt.profile[0])
            unblock_warn("cannot write the profile in %s: %s", dir, strerror(errno));
        return;
    }
    size_t done = 0;
    while (done < out_len) {
        ssize_t w = write(fd, out + done, out_len - done);
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    int ok = done == out_len && fsync(fd) == 0;
    syscall(SYS_close, fd);
    if (!ok || rename(tmp, P.file) != 0) {
        unlink(tmp);
        unblock_warn("cannot write the profile %s", P.file);
    }
}

void unblock_profile_chose(const char *level, const char *why)
{
    snprintf(P.level, sizeof(P.level), "%s", level);
    snprintf(P.level_why, sizeof(P.level_why), "%s", why);
}

void unblock_profile_chose_own(int follow, const char *why)
{
    P.own_armed = !follow;
    if (why)
        snprintf(P.own_how, sizeof(P.own_how), "%s", why);
    else
        snprintf(P.own_how, sizeof(P.own_how), "the profile: following bought nothing last run (%s)",
                 P.own_why[0] ? P.own_why : "it said not needed");
}

void unblock_profile_emit(unblock_emitter_t *e)
{
    static const char *const states[] = { "off", "new", "used", "stale", "ignored" };
    unblock_emit(e, "  \"profile\": {\"state\": \"%s\", \"file\": \"%s\", \"runs\": %d, "
                    "\"thread\": \"%s\", \"why\": \"%s\", \"own\": \"%s\", "
                    "\"own_why\": \"%s\"},\n",
                 states[P.state], unblock_json_safe(P.state ? P.file : ""), P.runs,
                 P.level[0] ? P.level : "none", unblock_json_safe(P.level_why),
                 P.own_armed ? "not-followed" : "followed", unblock_json_safe(P.own_how));
}
