/* writebehind.h — what the rest of the runtime calls of write-behind, read-ahead and
 * background reads (src/fileio/: fdtable.c, merge.c, readahead.c, bgread.c, drain.c;
 * fileio_internal.h lists which file does what). */
#ifndef UNBLOCK_WRITEBEHIND_H
#define UNBLOCK_WRITEBEHIND_H

#include "core/core.h"

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

/* Descriptors with bytes waiting in their block: 0 means every hook is a no-op. */
#define unblock_wb_dirty (unblock_busy.n.wb_dirty) /* core.h: unblock_busy */
/* 1 after a descriptor the sidecar holds was closed without waiting for it to
 * let go (a DROP): the next MPI call settles it (unblock_wb_news), since its
 * message may tell another process to take a lease on the file, which the
 * sidecar's duplicate would refuse (sidecar.c); a file call's full path clears
 * it once the sidecar has let go (unblock_wb_sidecar_poll). */
#define unblock_sc_unsettled (unblock_busy.n.sc_unsettled)

/* MPI_Init is about to run in the program, and has returned (comm): crash
 * safety's sidecar starts then rather than at the first buffered write
 * (sidecar.c; the second call does nothing). */
void unblock_wb_mpi_started(void);

/* A descriptor the program opened (open, openat, creat with these flags). */
void unblock_wb_opened(int fd, int flags, const char *path);

/* Descriptors of a file a module holds writes of (core.h: unblock_outside_look,
 * MPI-IO write-behind): they take the full path, which gives the module its
 * look before each call (unblock_wb_outside), and never read ahead.  Marked
 * when the module starts to follow the file (every descriptor of dev, ino the
 * program opened), or when the look after an open found it followed; unmarked
 * when a look finds it no longer is. */
void unblock_wb_outside_file(uint64_t dev, uint64_t ino);
void unblock_wb_outside_mark(int fd);
void unblock_wb_outside_dup(int fd, int to); /* (to: a duplicate of fd) */
void unblock_wb_outside(int fd);

/* write(): 1 if handled (*ret is the result; errno set when -1), 0 to forward. */
int unblock_wb_write(int fd, const void *p, size_t n, ssize_t *ret);

/* After a forwarded write(fd, n) returned r; ns: what it took, when timed (0). */
void unblock_wb_wrote(int fd, size_t n, ssize_t r, uint64_t ns);

/* Forwarded writes of at least this many bytes are timed (the cost decides
 * whether large writes are copied and queued). */
#define UNBLOCK_WB_TIMED (64 << 10)

/* Before another call on fd: its block goes to the file.  Returns an error that
 * an earlier background write met (this call must return it) or 0.
 * flags: UNBLOCK_WB_STOP stops following fd (shared or mapped from now on);
 * UNBLOCK_WB_RESIZE forgets the reservation (the file's size changes). */
#define UNBLOCK_WB_STOP 1
#define UNBLOCK_WB_RESIZE 2
/* UNBLOCK_WB_KEEP: a call that cannot return an error (a mapping seen through
 * UCX's events, memory/ucm.c): one met stays for the descriptor's next call,
 * which keeps it followed for that. */
#define UNBLOCK_WB_KEEP 4
int unblock_wb_before_fd(int fd, int flags);

/* pwrite(): 1 if handled (merged: *ret is n), 0 to forward it; after a
 * forwarded one returned r, unblock_wb_pwrote. */
int unblock_wb_pwrite(int fd, const void *p, size_t n, off_t pos, ssize_t *ret);
/* writev (pos -1) or pwritev (pos >= 0): 1 if a large one was queued (*ret),
 * 0 to forward it (any other pos: always). */
int unblock_wb_writev(int fd, const struct iovec *iov, int cnt, off_t pos, ssize_t *ret);
void unblock_wb_pwrote(int fd, size_t n, off_t off, ssize_t r);

/* The descriptor's offset is now pos (lseek), or moved by n (read).  A seek
 * that leaves it where it was keeps the run of writes or reads. */
void unblock_wb_moved(int fd, off_t pos);
/* lseek(fd, off, whence) to where the program's offset already is, on a
 * descriptor whose block holds merged writes or that reads ahead: 1 when made
 * here (*ret the offset), the block and the buffer kept; 0: the full path. */
int unblock_wb_seek_in_place(int fd, off_t off, int whence, off_t *ret);
void unblock_wb_moved_by(int fd, ssize_t n);

/* fd is closed where no wrapper sees it (fclose): what was learnt of it goes. */
void unblock_wb_forget(int fd);

/* close(fd) is about to run: returns the error it must report, or 0. */
int unblock_wb_closing(int fd);
/* The same for every descriptor of [first, last] (close_range, closefrom): the
 * first error met, each also printed when `report` (a call that returns none). */
int unblock_wb_closing_range(unsigned first, unsigned last, int report);

/* Every block to its file (paths, other descriptors, MPI, exec, spawn). */
void unblock_wb_flush_all(void);

/* Read-ahead (read-only descriptors, after 3 small sequential reads).  read():
 * 1 if served (*ret), 0 to forward it; after a forwarded one, read_done.  The
 * same for pread()s that each continue the previous one (rows read in turn). */
#define unblock_ra_live (unblock_busy.n.ra_live)
int unblock_wb_read(int fd, void *p, size_t n, ssize_t *ret);
int unblock_wb_pread(int fd, void *p, size_t n, off_t off, ssize_t *ret);
void unblock_wb_pread_done(int fd, size_t n, off_t off, ssize_t r);

/* A large read()/pread() (pos -1: read at the descriptor's offset) into memory
 * that can be protected: answered from the page cache at once, or handed to the
 * filesystem's worker in pieces while the pages stay inaccessible.  `fn` (the
 * file table's index) and `pc` (the program's call site) name it for the
 * predictor.  1 if handled (*ret set), 0 to run the real call.  docs/fileio.md. */
int unblock_rd_read(int fd, void *p, size_t n, off_t pos, unsigned fn, uintptr_t pc,
                    ssize_t *ret);
void unblock_wb_read_done(int fd, size_t n, ssize_t r);
/* Every read-ahead buffer is dropped (news that a file changed may arrive). */
void unblock_ra_drop_all(void);

/* A point where news may leave or arrive (a path call, an MPI call, exec):
 * blocks to their files, read-ahead dropped. */
void unblock_wb_news(void);

/* fork: flush, and stop following every descriptor (the child shares them). */
void unblock_wb_forking(void);

/* exit: flush, and report errors the program never saw. */
void unblock_wb_at_exit(void);
/* A fork child: the write-behind sidecar and its shared memory are the parent's. */
void unblock_wb_forked_child(void);

/* MPI-IO write-behind (src/mpiio/) on a descriptor of the runtime's own beside
 * the file: [start, end) reserved as buffered writes are (fallocate KEEP_SIZE:
 * the size does not change, so running out of space is found in the program's
 * call).  1 if reserved; 0 if not (errno: ENOSPC, EDQUOT, EFBIG, or no
 * fallocate).  unblock_wb_unreserve gives back what lies past the end of the
 * file (only once nobody writes the file any more: below). */
int unblock_wb_reserve(int fd, off_t start, off_t end);
/* fd's reservations reach at least `ahead` bytes past the write that asks, where
 * the file system has room for that (else the usual steps): MPI-IO's blocks are
 * written by its I/O thread while the program goes on, and on FUSE or NFS a
 * fallocate waits for the write in flight (10 ms for 1 MiB on bench/slowfs). */
void unblock_wb_reserve_ahead(int fd, off_t ahead);
/* Where the reserved range holding byte `start` of fd's file ends (start if none
 * holds it), and a count that grows whenever any reserved range shrinks: an end
 * read before is good while the count stays (MPI-IO's continuation path). */
off_t unblock_wb_reserved_to(int fd, off_t start);
extern UNBLOCK_HIDDEN uint32_t unblock_wb_resv_shrinks;
/* From now on SIGTERM, SIGINT, SIGHUP and SIGABRT at their default action run
 * every module's fatal drain before the process ends (as buffered blocks do). */
void unblock_wb_fatal_signals(void);
/* Where fd's reserved range ends (0: none).  unblock_wb_unreserve(fd, end): fd's
 * reservation is forgotten, and the file cut to its size where `end` (the
 * furthest end any writer of the file reserved; 0: none, or cut elsewhere) lies
 * past it: one cut per file, by one of its writers. */
off_t unblock_wb_reserved_end(int fd);
void unblock_wb_unreserve(int fd, off_t end);

/* The file size limit is about to change (setrlimit, prlimit): what was written
 * under the old limit goes to the files now, and every reservation is given back,
 * so that the next write past the new limit fails in its own call. */
void unblock_wb_limit_changing(void);
int unblock_wb_space_short(int err);
/* exec: everything was written (unblock_process_quiesce); the sidecar lets go of
 * the descriptors it holds and ends. */
void unblock_wb_execing(void);
/* Before an exec's flush: the other threads' writes are made in their calls
 * until it fails (unblock_wb_exec_failed with what begin returned; errno kept). */
int unblock_wb_exec_begin(void);
void unblock_wb_exec_failed(int began);
/* The crash-safety sidecar has let go of every descriptor the program closed
 * (before a process starts: it may execute one).  ..._must_wait: the same, and
 * from now on each close waits for it (the program took a flock, an OFD lock or
 * a lease, which outlive its close while the sidecar holds a duplicate, or
 * changed a file's mode). */
void unblock_wb_sidecar_settle(void);
void unblock_wb_sidecar_must_wait(void);
/* The same without waiting: the flag is cleared only if the sidecar has let go
 * already (a file call's full path: fileio.h, unblock_io_enter_full). */
void unblock_wb_sidecar_poll(void);
/* A lock taken or let go (flock, lockf, fcntl's locks, a lease): news, as for a
 * path call; `ofd`: one that belongs to the open file description. */
void unblock_wb_locking(int ofd);
/* truncate(path) made: no descriptor's file is known to have its blocks. */
void unblock_wb_truncated(void);

/* A fatal signal (SIGTERM, SIGINT, SIGHUP, SIGABRT at their default action, a
 * SIGSEGV that is not ours): every block and queue to the files, 2 s at most.
 * Async-signal-safe. */
void unblock_wb_drain_fatal(void);

/* What small writes of one size class (under 256 B, under 4 KiB, larger) cost a
 * file, in ns (0: not measured yet; recent ones weigh more). */
typedef struct {
    uint32_t small_ns;   /* a small write made in the call (the system call) */
    uint32_t merged_ns;  /* a small write merged into the block (the call's time) */
    uint32_t calls;      /* small writes while buffering (samples and rechecks) */
    uint32_t run_left, run_n; /* a run of merged writes timed together (a recheck) */
    uint64_t run_ns;
    uint8_t direct;      /* they go to the file in the call: merging did not pay */
    uint8_t probe;       /* a recheck is due */
} unblock_wb_small_t;
#define UNBLOCK_WB_SMALL_CLASSES 3

/* What writes cost a file.  Kept with the file, so a file opened again starts
 * from what was learnt. */
typedef struct {
    uint32_t ns_per_kb;  /* large writes: the program's, and the worker's blocks */
    unblock_wb_small_t small[UNBLOCK_WB_SMALL_CLASSES];
} unblock_wb_costs_t;

/* The access pattern of each file opened for writing, for the stats. */
#define UNBLOCK_WB_FILES 64
typedef struct {
    dev_t dev;
    ino_t ino;
    char path[120];      /* as the program named it at open (truncated) */
    unblock_wb_costs_t costs;
    uint64_t writes, bytes, merged, direct; /* direct: small writes made in the call */
    uint64_t sequential, strided, random; /* writes by where they start */
    uint64_t min_size, max_size;
} unblock_wb_file_t;
int unblock_wb_files(const unblock_wb_file_t **files);
/* Adds each descriptor's counts to io.merged and io.files (before they are read). */
void unblock_wb_fold(void);

#endif
