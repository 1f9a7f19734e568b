/* process.c — wrappers of the calls that start or end a process.
 *
 * Which processes are accelerated is decided in each process at start-up
 * (core/init.c) from UNBLOCK_OWNER, so these wrappers need not touch the child's
 * environment.  They count, and _exit writes the report that destructors would
 * have written.  vfork is wrapped in process_vfork.S: a C wrapper would return
 * into a frame the child has already used. */
#define _GNU_SOURCE
#include "fileio/fileio.h"
#include "core/module.h"

#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;


/* fork: the child shares every descriptor's offset, so write-behind stops
 * following them all (after writing their blocks). */
UNBLOCK_REAL_DECL(pid_t, fork, (void));
UNBLOCK_EXPORT pid_t UNBLOCK_WRAP(fork)(void)
{
    if (unblock_io_enter(UNBLOCK_IO_ID_fork)) {
        unblock_process_starts();
        unblock_process_quiesce();
        unblock_wb_forking();
    }
    return UNBLOCK_REAL(fork)();
}
UNBLOCK_PASS_QUIESCE(int, posix_spawn,
             (pid_t *restrict pid, const char *restrict path,
              const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *restrict attr,
              char *const argv[restrict], char *const envp[restrict]),
             (pid, path, fa, attr, argv, envp))
UNBLOCK_PASS_QUIESCE(int, posix_spawnp,
             (pid_t *restrict pid, const char *restrict file,
              const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *restrict attr,
              char *const argv[restrict], char *const envp[restrict]),
             (pid, file, fa, attr, argv, envp))
UNBLOCK_PASS_QUIESCE(int, system, (const char *cmd), (cmd))
UNBLOCK_PASS_QUIESCE(FILE *, popen, (const char *cmd, const char *mode), (cmd, mode))
/* exec: as the others, and the sidecar lets go of the program's files (if exec
 * fails, the program goes on without it); the other threads' writes are made in
 * their calls from before the flush until the exec fails (drain.c:
 * unblock_wb_exec_begin). */
#define UNBLOCK_EXEC_CALL(ret, id, call) \
    { \
        unblock_io_enter(id); \
        int began_ = unblock_wb_exec_begin(); \
        unblock_process_quiesce(); \
        if (began_ && unblock_g.active) \
            unblock_modules_exec_drain(); /* (MPI-IO's buffered writes) */ \
        unblock_wb_execing(); \
        ret r_ = call; \
        unblock_wb_exec_failed(began_); \
        return r_; \
    }
#define UNBLOCK_EXEC(ret, name, params, args) \
    UNBLOCK_REAL_DECL(ret, name, params); \
    UNBLOCK_EXPORT ret UNBLOCK_WRAP(name) params \
    UNBLOCK_EXEC_CALL(ret, UNBLOCK_IO_ID_##name, UNBLOCK_REAL(name) args)
UNBLOCK_EXEC(int, execve, (const char *path, char *const argv[], char *const envp[]),
             (path, argv, envp))
UNBLOCK_EXEC(int, execv, (const char *path, char *const argv[]), (path, argv))
UNBLOCK_EXEC(int, execvp, (const char *file, char *const argv[]), (file, argv))
UNBLOCK_EXEC(int, execvpe, (const char *file, char *const argv[], char *const envp[]),
             (file, argv, envp))
UNBLOCK_EXEC(int, fexecve, (int fd, char *const argv[], char *const envp[]), (fd, argv, envp))

/* The execl family: gather the variadic arguments on the stack (this may run in a
 * vfork child, where allocating is not allowed) and call the vector form. */
#define UNBLOCK_COUNT_ARGS(first, last_named) \
    size_t argc = 1; \
    { \
        va_list ap; \
        va_start(ap, last_named); \
        while (va_arg(ap, const char *) != NULL) \
            argc++; \
        va_end(ap); \
    }
#define UNBLOCK_COLLECT_ARGS(first, last_named, argv) \
    va_list ap; \
    va_start(ap, last_named); \
    argv[0] = (char *)(first); \
    for (size_t i = 1; i <= argc; i++) \
        argv[i] = va_arg(ap, char *);

UNBLOCK_EXPORT int UNBLOCK_WRAP(execl)(const char *path, const char *arg, ...)
{
    UNBLOCK_COUNT_ARGS(arg, arg)
    char *argv[argc + 1];
    UNBLOCK_COLLECT_ARGS(arg, arg, argv)
    va_end(ap);
    UNBLOCK_EXEC_CALL(int, UNBLOCK_IO_ID_execl, UNBLOCK_REAL(execve)(path, argv, environ))
}

UNBLOCK_EXPORT int UNBLOCK_WRAP(execlp)(const char *file, const char *arg, ...)
{
    UNBLOCK_COUNT_ARGS(arg, arg)
    char *argv[argc + 1];
    UNBLOCK_COLLECT_ARGS(arg, arg, argv)
    va_end(ap);
    UNBLOCK_EXEC_CALL(int, UNBLOCK_IO_ID_execlp, UNBLOCK_REAL(execvp)(file, argv))
}

UNBLOCK_EXPORT int UNBLOCK_WRAP(execle)(const char *path, const char *arg, ...)
{
    UNBLOCK_COUNT_ARGS(arg, arg)
    char *argv[argc + 1];
    UNBLOCK_COLLECT_ARGS(arg, arg, argv)
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    UNBLOCK_EXEC_CALL(int, UNBLOCK_IO_ID_execle, UNBLOCK_REAL(execve)(path, argv, envp))
}

/* Before a process starts that goes on beside this one (fork, vfork, system,
 * popen, posix_spawn): what a module holds of the program's files is written
 * first, since the new process may read them (core.h: unblock_outside_look,
 * MPI-IO's writes).  Not before an exec or an exit: their drains write it, and
 * this one's flush would wait for owners that may have ended. */
void unblock_process_starts(void)
{
    unblock_outside_look_t look = __atomic_load_n(&unblock_outside_look, __ATOMIC_ACQUIRE);
    if (unblock_unlikely(look != NULL) && (pid_t)syscall(SYS_getpid) == unblock_g.pid)
        look(1, 0, 0); /* (it says which threads may flush: mpiio/flush.c) */
}

void unblock_process_quiesce(void)
{
    if ((pid_t)syscall(SYS_getpid) != unblock_g.pid)
        return; /* a vfork child: our memory, not our process */
    if (unblock_io_touches_inflight())
        unblock_modules_quiesce(); /* the messages in flight */
    if (unblock_io_active()) {
        unblock_wb_news(); /* read-ahead dropped: the kernel's offsets are the program's */
        unblock_wb_sidecar_settle(); /* the new process may execute a file just closed */
    }
    unblock_trace_flush(); /* the open runs are this process's */
}

/* _exit skips atexit handlers and destructors, and quick_exit runs only its own
 * handlers before glibc's inner _exit: finish and report here, every module's
 * exit drain as the destructor runs them (errors the program never saw are
 * printed).  Before, only the POSIX write-behind drained here: MPI-IO writes
 * taken and not yet written were lost at _exit and quick_exit (2 ranks, 1000
 * cells each: 16,000 bytes plain, an empty file under unblock, both MPIs; a
 * Python program's os._exit is the same call; *.mpiio-quickexit.np2).  Not in
 * a vfork child: the memory is its parent's, and so are the buffers. */
#define UNBLOCK_EXIT(name) \
    UNBLOCK_REAL_DECL(void, name, (int)); \
    UNBLOCK_EXPORT void UNBLOCK_WRAP(name)(int status) \
    { \
        unblock_io_enter(UNBLOCK_IO_ID_##name); \
        unblock_process_quiesce(); \
        if (unblock_g.active && (pid_t)syscall(SYS_getpid) == unblock_g.pid) \
            unblock_modules_exit_drain(); \
        unblock_core_flush_at_exit(); \
        UNBLOCK_REAL(name)(status); \
        __builtin_unreachable(); \
    }
UNBLOCK_EXIT(_exit)
UNBLOCK_EXIT(_Exit)
UNBLOCK_EXIT(quick_exit)

/* The file size limit: the program's data written under the old limit reaches its
 * files under it (a later background write would meet the new one: EFBIG, or
 * SIGXFSZ in the program's thread), and the next write checks the new one. */
static void limit_changing(int resource, pid_t pid, const void *new_limit)
{
    if (resource == RLIMIT_FSIZE && new_limit != NULL &&
        (pid == 0 || pid == unblock_g.pid))
        unblock_wb_limit_changing();
}

#define UNBLOCK_SETRLIMIT(name, limit_t) \
    UNBLOCK_REAL_DECL(int, name, (__rlimit_resource_t, const limit_t *)); \
    UNBLOCK_EXPORT int UNBLOCK_WRAP(name)(__rlimit_resource_t r, const limit_t *l) \
    { \
        if (unblock_io_enter(UNBLOCK_IO_ID_##name)) \
            limit_changing(r, 0, l); \
        return UNBLOCK_REAL(name)(r, l); \
    }
UNBLOCK_SETRLIMIT(setrlimit, struct rlimit)
UNBLOCK_SETRLIMIT(setrlimit64, struct rlimit64)

#define UNBLOCK_PRLIMIT(name, limit_t) \
    UNBLOCK_REAL_DECL(int, name, (pid_t, __rlimit_resource_t, const limit_t *, limit_t *)); \
    UNBLOCK_EXPORT int UNBLOCK_WRAP(name)(pid_t pid, __rlimit_resource_t r, const limit_t *l, \
                                          limit_t *old) \
    { \
        if (unblock_io_enter(UNBLOCK_IO_ID_##name)) \
            limit_changing(r, pid, l); \
        return UNBLOCK_REAL(name)(pid, r, l, old); \
    }
UNBLOCK_PRLIMIT(prlimit, struct rlimit)
UNBLOCK_PRLIMIT(prlimit64, struct rlimit64)

/* Called by the vfork stub in the parent, before the real vfork: returns it. */
UNBLOCK_REAL_DECL(pid_t, vfork, (void));
void *unblock_vfork_prepare(void)
{
    if (unblock_io_enter(UNBLOCK_IO_ID_vfork))
        unblock_wb_forking();
    unblock_process_starts();
    unblock_process_quiesce();
    return (void *)UNBLOCK_REAL(vfork);
}
