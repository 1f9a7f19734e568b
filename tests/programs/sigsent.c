/* sigsent.c — a SIGSEGV that nobody's fault raised: sent with raise(), kill() or
 * from another process.  It must get exactly the disposition the program chose,
 * as without unblock (whose own SIGSEGV handler is installed all along):
 *   handler  the program's handler runs, once per signal;
 *   ignored  nothing happens, however often it comes;
 *   default  the process dies of it (raise, kill from itself, kill from outside);
 *   sysv     a handler installed with sysv_signal() runs once, then the default.
 * Each case runs in a fork child; the parent prints how each child ended, and
 * exits 1 if any ended otherwise than the kernel's rules say (MISMATCH).
 *
 * usage: sigsent */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t calls;

static void on_segv(int sig)
{
    (void)sig;
    calls++;
}

/* Runs `body` in a child; returns its wait status. */
static int in_child(void (*body)(void))
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        body();
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    return status;
}

static void handler_case(void)
{
    signal(SIGSEGV, on_segv);
    raise(SIGSEGV);
    kill(getpid(), SIGSEGV);
    _exit(calls == 2 ? 0 : 10 + calls);
}

static void ignored_case(void)
{
    signal(SIGSEGV, SIG_IGN);
    for (int i = 0; i < 3; i++) {
        raise(SIGSEGV);
        kill(getpid(), SIGSEGV);
    }
    _exit(0);
}

static void default_raise_case(void)
{
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
    _exit(0); /* survived: wrong */
}

static void default_kill_case(void)
{
    kill(getpid(), SIGSEGV); /* never changed: the default */
    _exit(0);
}

static void default_outside_case(void)
{
    for (int i = 0; i < 200; i++) /* the parent sends it; 10 s at most */
        usleep(50000);
    _exit(0);
}

static void sysv_case(void)
{
    sysv_signal(SIGSEGV, on_segv);
    raise(SIGSEGV); /* the handler, which System V semantics then reset */
    if (calls != 1)
        _exit(20 + calls);
    raise(SIGSEGV); /* the default: dies */
    _exit(0);
}

static int report(const char *what, int status, int want_sig)
{
    int ok;
    if (WIFSIGNALED(status)) {
        printf("%s: killed by signal %d", what, WTERMSIG(status));
        ok = want_sig == WTERMSIG(status);
    } else {
        printf("%s: exit %d", what, WEXITSTATUS(status));
        ok = want_sig == 0 && WEXITSTATUS(status) == 0;
    }
    printf(" %s\n", ok ? "ok" : "MISMATCH");
    return !ok;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct rlimit none = { 0, 0 };
    setrlimit(RLIMIT_CORE, &none); /* the children die of SIGSEGV on purpose */
    signal(SIGSEGV, SIG_DFL); /* the process starts with the default */
    int bad = 0;
    bad |= report("handler", in_child(handler_case), 0);
    bad |= report("ignored", in_child(ignored_case), 0);
    bad |= report("default raise", in_child(default_raise_case), SIGSEGV);
    bad |= report("default kill", in_child(default_kill_case), SIGSEGV);
    bad |= report("sysv", in_child(sysv_case), SIGSEGV);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        default_outside_case();
    usleep(100000);
    kill(pid, SIGSEGV);
    int status;
    waitpid(pid, &status, 0);
    bad |= report("default from outside", status, SIGSEGV);
    return bad;
}
