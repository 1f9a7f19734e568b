/* profile.h — what a program's last run learned, kept for its next run
 * (profile.c; docs/profile.md).
 *
 * A profile is one small text file per program in UNBLOCK_PROFILE (by default
 * the user's cache directory), keyed by the executable and, for an interpreter,
 * the script it runs; a changed executable or script makes it stale.  It holds
 * whether the program needed the completion thread (and so MPI_THREAD_MULTIPLE)
 * and each call site's decision per size class.  At MPI_Init every rank reads
 * it to choose the thread level it asks MPI for; after MPI_Init rank 0's copy is
 * broadcast (comm/profile.c), so every rank seeds its sites alike; at
 * MPI_Finalize rank 0 writes it (a temporary file, then rename) with what the
 * ranks found.  It never decides anything collective. */
#ifndef UNBLOCK_PROFILE_H
#define UNBLOCK_PROFILE_H

#include "core/core.h"
#include "core/module.h"

#include <stddef.h>
#include <stdint.h>

/* What became of the profile this run (the report's profile.state). */
typedef enum {
    UNBLOCK_PROFILE_OFF = 0,  /* UNBLOCK_PROFILE=off, no MPI, or no directory */
    UNBLOCK_PROFILE_NEW,      /* none yet: this run writes the first */
    UNBLOCK_PROFILE_USED,     /* read and used */
    UNBLOCK_PROFILE_STALE,    /* the executable or script changed: started afresh */
    UNBLOCK_PROFILE_IGNORED,  /* corrupt, or of another MPI or version (one line said so) */
} unblock_profile_state_t;

/* Reads this program's profile (before MPI_Init; every rank).  Returns 1 when
 * one was found and applies. */
int unblock_profile_load(const char *mpi_family);

/* Whether the profile read says the program needs the completion thread (1),
 * does not (0), or there is none (-1). */
int unblock_profile_needs_thread(void);

/* Whether the profile read says following the program's own requests is
 * needed (1), is not (0: comm/requests.h, unblock_own_arm), or says nothing
 * (-1: no profile, or the program started none). */
int unblock_profile_own_needed(void);

/* Why the profile read says the thread is needed. */
const char *unblock_profile_last_why(void);

/* The profile as text (rank 0's, to be broadcast); 0 when there is none. */
size_t unblock_profile_text(const char **text);
/* Replaces the profile read by `text` (rank 0's). */
void unblock_profile_adopt(const char *text, size_t len);

/* A new site at `pc` calling `fn_name`: the decisions its size classes had
 * (UNBLOCK_SITE_CONVERT or UNBLOCK_SITE_PASS, or 0: none), from the profile. */
void unblock_profile_seed(uintptr_t pc, const char *fn_name, uint32_t seed[]);

/* What this process found that needs the completion thread (a text saying why,
 * or NULL).  `threaded`: the thread ran; then it is needed when it drove the
 * program's own requests and `own_late` of them were waited for late (at call
 * sites where that is common: comm/requests.c, unblock_own_late_helped), or
 * when what conversions hid is more than `calls` MPI calls at `call_ns` each
 * (what the thread level costs a call).  Without it: calls of sites the
 * profile did not know that it refused, and the program's own requests large
 * enough to drive, `own_late` of them waited for late.  An MPI-IO I/O thread
 * (unblock_profile_need) always needs it. */
const char *unblock_profile_thread_reason(int threaded, uint64_t calls, uint64_t call_ns,
                                          uint64_t own_late);

/* Something this process runs needs the completion thread's level next time
 * (MPI-IO write-behind's I/O thread calls MPI): `why` says what. */
void unblock_profile_need(const char *why);

/* Rank 0, at MPI_Finalize: writes the profile, with `need` (any rank needed the
 * thread) and `why` (rank 0's reason, or another rank's), and `own`, whether
 * following the program's own requests was needed (1), not (0), or no rank
 * started one (-1: not written), `own_why` saying why. */
void unblock_profile_save(int need, const char *why, int own, const char *own_why);

/* The thread level chosen and why, for the report ("program" or "multiple"). */
void unblock_profile_chose(const char *level, const char *why);

/* Whether the program's own requests are followed (comm/profile.c) and why
 * not (NULL: the profile's word), for the report ("own", "own_why"). */
void unblock_profile_chose_own(int follow, const char *why);

/* The report's "profile" member. */
void unblock_profile_emit(unblock_emitter_t *e);

#endif
