/* resolvesig.c — a signal handler that calls a wrapped function (write)
 * whose real function unblock has not looked up yet, run while the program's
 * thread is inside another lookup (the test hook UNBLOCK_TEST_RESOLVE_SIGNAL
 * sends the signal there: src/interpose/resolve.c).  Before, the handler's
 * write found the thread resolving, got no function and jumped to address 0
 * (serial.writebehind.sigwrite crashed so 2-4 times in 100 under load).
 * Exits 0 when the handler ran and its write wrote. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t wrote = -1;

static void on_alarm(int sig)
{
    (void)sig;
    wrote = (int)write(1, "handler\n", 8);
}

int main(void)
{
    struct sigaction sa = { .sa_handler = on_alarm };
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, NULL) != 0)
        return 2;
    /* The first lookups after the handler is in place: the hook's signal. */
    int fd = open("/dev/null", O_RDONLY);
    char c;
    ssize_t r = read(fd, &c, 1);
    close(fd);
    printf("handler %s, its write %d, read %zd\n", wrote == -1 ? "not run" : "ran", (int)wrote,
           r);
    return wrote == 8 ? 0 : 1;
}
