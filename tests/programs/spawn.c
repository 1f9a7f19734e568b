/* spawn.c — a program that starts others in every way unblock must let through:
 * system, popen, posix_spawn, fork+exec, vfork+exec, and a fork child that writes a
 * file and leaves with _exit.  Each child is this program again (spawn --child FILE
 * TEXT), which writes TEXT to FILE.  usage: spawn OUTDIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void child_write(const char *file, const char *text)
{
    int fd = open(file, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0 || write(fd, text, strlen(text)) < 0)
        _exit(3);
    close(fd);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--child") == 0) {
        child_write(argv[2], argv[3]);
        return 0;
    }
    const char *out = argv[1];
    char self[4096], file[4096], cmd[9000];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    self[n > 0 ? n : 0] = '\0';
    int status;

    snprintf(cmd, sizeof(cmd), "%s --child %s/system.txt from-system", self, out);
    status = system(cmd);
    printf("system: %d\n", WEXITSTATUS(status));

    snprintf(cmd, sizeof(cmd), "%s --child %s/popen.txt from-popen && echo popen-output", self, out);
    FILE *p = popen(cmd, "r");
    char line[128] = "";
    if (!fgets(line, sizeof(line), p))
        line[0] = '\0';
    printf("popen: %s", line);
    printf("pclose: %d\n", WEXITSTATUS(pclose(p)));

    pid_t pid;
    snprintf(file, sizeof(file), "%s/spawn.txt", out);
    char *sargv[] = { self, "--child", file, "from-posix-spawn", NULL };
    int rc = posix_spawn(&pid, self, NULL, NULL, sargv, environ);
    waitpid(pid, &status, 0);
    printf("posix_spawn: %d %d\n", rc, WEXITSTATUS(status));

    snprintf(file, sizeof(file), "%s/forkexec.txt", out);
    char *fargv[] = { self, "--child", file, "from-fork-exec", NULL };
    pid = fork();
    if (pid == 0) {
        execv(self, fargv);
        _exit(127);
    }
    waitpid(pid, &status, 0);
    printf("fork+exec: %d\n", WEXITSTATUS(status));

    snprintf(file, sizeof(file), "%s/vfork.txt", out);
    char *vargv[] = { self, "--child", file, "from-vfork-exec", NULL };
    pid = vfork();
    if (pid == 0) {
        execv(self, vargv);
        _exit(127);
    }
    waitpid(pid, &status, 0);
    printf("vfork+exec: %d\n", WEXITSTATUS(status));

    snprintf(file, sizeof(file), "%s/forkonly.txt", out);
    pid = fork();
    if (pid == 0) {
        child_write(file, "from-fork-only");
        _exit(0);
    }
    waitpid(pid, &status, 0);
    printf("fork: %d\n", WEXITSTATUS(status));

    snprintf(file, sizeof(file), "%s/execl.txt", out);
    pid = fork();
    if (pid == 0) {
        execl(self, self, "--child", file, "from-execl", (char *)NULL);
        _exit(127);
    }
    waitpid(pid, &status, 0);
    printf("execl: %d\n", WEXITSTATUS(status));
    return 0;
}
