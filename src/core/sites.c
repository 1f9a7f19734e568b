/* sites.c — call sites and the predictor (sites.h).
 *
 * Paper: Natvig & Elster, section IV, and its reference to context-sensitive
 * prediction: an optimisation must never make the program slower.  What is
 * compared is what the program itself experiences, per site:
 *   - blocking: the time the original call took;
 *   - converted: the time the call took (issue, copy, protection) plus every
 *     later wait for its operations (a fault on their pages, with the kernel's
 *     cost of delivering it; a call that had to finish them first; the
 *     unprotect).
 * A new site runs its first 3 eligible calls blocking and the next 3 converted;
 * from then on it converts while the converted mean is below
 * (1 - UNBLOCK_PREDICT_MARGIN%) of the blocking mean, and every
 * UNBLOCK_PREDICT_RECHECK calls it makes one call the other way to keep both means
 * current.  The means weigh recent calls more (counts and sums are halved every 64
 * samples). */
#define _GNU_SOURCE
#include "core/sites.h"
#include "core/log.h"
#include "core/options.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

unblock_site_t unblock_sites[UNBLOCK_SITES_MAX];
static int create_lock;

/* What a fault costs besides what the handler measures itself: the kernel's
 * delivery of SIGSEGV and the return, 5.6 us measured on this machine
 * (docs/performance.md, bench/protect_cost). */
#define FAULT_NS 5600
#define EXPLORE_CALLS 3

static void slock(int *l)
{
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
        __builtin_ia32_pause();
}

static void sunlock(int *l)
{
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

void unblock_site_name(const unblock_site_t *s, char *out, unsigned len)
{
    Dl_info di;
    if (dladdr((void *)s->pc, &di) && di.dli_fname) {
        const char *obj = strrchr(di.dli_fname, '/');
        obj = obj ? obj + 1 : di.dli_fname;
        if (di.dli_sname && di.dli_saddr)
            snprintf(out, len, "%s+%#lx (%s)", di.dli_sname,
                     (unsigned long)(s->pc - (uintptr_t)di.dli_saddr), obj);
        else
            snprintf(out, len, "%s+%#lx", *obj ? obj : "?",
                     (unsigned long)(s->pc - (uintptr_t)di.dli_fbase));
        return;
    }
    snprintf(out, len, "%#lx", (unsigned long)s->pc);
}

/* UNBLOCK_EXCLUDE: a comma-separated list of MPI function names (MPI_Sendrecv),
 * symbols of the caller (what dladdr finds: exported functions, or any with
 * -rdynamic), or sites as the report names them ("object+0xoff"). */
static int excluded(const unblock_site_t *s, const char *fn_name)
{
    const char *p = unblock_opt.exclude;
    if (p == NULL || *p == '\0')
        return 0;
    char name[256] = "", sym[256] = "";
    unblock_site_name(s, name, sizeof(name));
    Dl_info di;
    if (dladdr((void *)s->pc, &di) && di.dli_sname)
        snprintf(sym, sizeof(sym), "%s", di.dli_sname);
    char *paren = strstr(name, " (");
    if (paren)
        *paren = '\0'; /* "sym+0xoff" */
    while (*p) {
        size_t n = strcspn(p, ",");
        if ((n == strlen(fn_name) && strncmp(p, fn_name, n) == 0) ||
            (sym[0] && n == strlen(sym) && strncmp(p, sym, n) == 0) ||
            (n == strlen(name) && strncmp(p, name, n) == 0))
            return 1;
        p += n + (p[n] == ',');
    }
    return 0;
}

int unblock_site_of(uintptr_t pc, unsigned fn, const char *fn_name)
{
    if (pc == 0)
        return -1;
    unsigned h = (unsigned)(((pc >> 3) ^ (pc >> 17) ^ (fn * 0x9e3779b1u)) % UNBLOCK_SITES_MAX);
    for (int pass = 0; pass < 2; pass++) {
        for (unsigned i = 0; i < UNBLOCK_SITES_MAX; i++) {
            unsigned k = (h + i) % UNBLOCK_SITES_MAX;
            uintptr_t cur = __atomic_load_n(&unblock_sites[k].pc, __ATOMIC_ACQUIRE);
            if (cur == pc && unblock_sites[k].fn == fn)
                return (int)k;
            if (cur != 0)
                continue;
            if (pass == 0)
                break; /* not there: create it (under the lock, looking again) */
            unblock_site_t *s = &unblock_sites[k];
            s->fn = fn;
            s->pc = pc; /* for excluded(); published below */
            s->decision = excluded(s, fn_name) ? UNBLOCK_SITE_EXCLUDED : UNBLOCK_SITE_EXPLORE;
            __atomic_store_n(&s->pc, pc, __ATOMIC_RELEASE);
            sunlock(&create_lock);
            return (int)k;
        }
        if (pass == 0)
            slock(&create_lock);
    }
    sunlock(&create_lock);
    return -1; /* full */
}

static void decide(unblock_site_t *s)
{
    if (s->pass_n < EXPLORE_CALLS || s->conv_n < EXPLORE_CALLS) {
        s->decision = UNBLOCK_SITE_EXPLORE;
        return;
    }
    /* conv_ns/conv_n < pass_ns/pass_n * (100 - margin)/100, without division */
    unsigned __int128 conv = (unsigned __int128)s->conv_ns * s->pass_n * 100;
    unsigned __int128 pass = (unsigned __int128)s->pass_ns * s->conv_n *
                             (100 - (unblock_opt.predict_margin < 100 ? unblock_opt.predict_margin : 99));
    s->decision = conv < pass ? UNBLOCK_SITE_CONVERT : UNBLOCK_SITE_PASS;
}

int unblock_site_convert(int i)
{
    if (i < 0)
        return 1;
    unblock_site_t *s = &unblock_sites[i];
    if (s->decision == UNBLOCK_SITE_EXCLUDED)
        return 0;
    if (!unblock_opt.predict)
        return 1;
    slock(&s->lock);
    uint64_t calls = ++s->calls;
    int conv;
    if (s->pass_n < EXPLORE_CALLS) {
        conv = 0;
    } else if (s->conv_n < EXPLORE_CALLS) {
        conv = 1;
    } else {
        decide(s);
        conv = s->decision == UNBLOCK_SITE_CONVERT;
        if (unblock_opt.predict_recheck && calls % unblock_opt.predict_recheck == 0)
            conv = !conv;
    }
    sunlock(&s->lock);
    return conv;
}

static void add(uint64_t *sum, uint64_t *n, uint64_t ns, int count)
{
    *sum += ns;
    if (count && ++*n >= 64) {
        *sum /= 2;
        *n /= 2;
    }
}

void unblock_site_passed(int i, uint64_t ns)
{
    if (i < 0)
        return;
    unblock_site_t *s = &unblock_sites[i];
    slock(&s->lock);
    s->passed++;
    s->pass_total_ns += ns;
    add(&s->pass_ns, &s->pass_n, ns, 1);
    sunlock(&s->lock);
}

void unblock_site_converted(int i, uint64_t ns, uint64_t bytes)
{
    if (i < 0)
        return;
    unblock_site_t *s = &unblock_sites[i];
    slock(&s->lock);
    s->converted++;
    s->bytes += bytes;
    s->conv_total_ns += ns;
    add(&s->conv_ns, &s->conv_n, ns, 1);
    sunlock(&s->lock);
}

/* Called from the fault handler too: the lock is only ever held for a few
 * instructions, and never by a thread that could be interrupted by our own fault
 * while holding it (no memory an operation owns is touched under it). */
void unblock_site_protected(int i, int fault)
{
    if (i < 0 || i >= UNBLOCK_SITES_MAX)
        return;
    unblock_site_t *s = &unblock_sites[i];
    __atomic_add_fetch(fault ? &s->protected_faults : &s->protected_sends, 1, __ATOMIC_RELAXED);
}

int unblock_site_prefers_copy(int i)
{
    if (i < 0)
        return 0;
    const unblock_site_t *s = &unblock_sites[i];
    uint64_t sends = __atomic_load_n(&s->protected_sends, __ATOMIC_RELAXED);
    return sends >= 2 && 2 * __atomic_load_n(&s->protected_faults, __ATOMIC_RELAXED) >= sends;
}

void unblock_site_waited(int i, uint64_t ns, int fault)
{
    if (i < 0 || i >= UNBLOCK_SITES_MAX)
        return;
    unblock_site_t *s = &unblock_sites[i];
    if (fault)
        ns += FAULT_NS;
    slock(&s->lock);
    s->faults += (unsigned)fault;
    s->conv_total_ns += ns;
    add(&s->conv_ns, &s->conv_n, ns, 0);
    sunlock(&s->lock);
}
