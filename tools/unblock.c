/* unblock.c — the launcher: `unblock [options] [--] program [args]`.
 *
 * Turns its options into UNBLOCK_* variables (from the one options table), finds
 * which MPI the program will use, puts the matching library first in LD_PRELOAD
 * (keeping what was there), tells UCX to leave SIGSEGV to us, marks itself as the
 * owner of the run (UNBLOCK_OWNER, see src/core/init.c) and execs the program, so
 * the program keeps the launcher's pid.  `unblock report DIR` runs the report
 * (tools/report.py, installed in lib/unblock/ beside the libraries); `unblock plan
 * ARGS` runs the planner (the package tools/plan, in lib/unblock/plan/). */
#define _GNU_SOURCE
#include "core/core.h"
#include "core/job.h"
#include "core/options.h"
#include "core/profile_file.h"

#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int verbose; /* UNBLOCK_LOG=info or debug: say what was detected */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: unblock [options] [--] program [args...]\n"
            "       unblock report [--html FILE | --text] [--png FILE] DIR\n"
            "       unblock profile show|clear [PROGRAM...]\n"
            "       unblock plan KERNEL.c --spec SPEC.toml [-o OUT.c] [--report DIR] [--dry-run]\n"
            "       unblock --help | --version\n\n"
            "Runs an unmodified (MPI) program with its blocking MPI calls and file I/O\n"
            "made asynchronous.  Typical use: mpirun -np 4 unblock ./app\n\n"
            "Options (each is also an environment variable UNBLOCK_<NAME>):\n");
    for (unsigned i = 0; i < unblock_option_count; i++) {
        const unblock_option_desc_t *d = &unblock_option_table[i];
        char flag[64], lower[32];
        unsigned j;
        for (j = 0; d->name[j] && j < sizeof(lower) - 1; j++)
            lower[j] = (char)tolower((unsigned char)d->name[j]);
        lower[j] = '\0';
        snprintf(flag, sizeof(flag), "--%s=%s", lower, d->metavar);
        fprintf(f, "  %-24s %s\n  %-24s UNBLOCK_%s, default: %s%s%s\n", flag, d->doc, "", d->name,
                d->def[0] ? d->def : "(unset)", d->type == UNBLOCK_OPT_ENUM ? "; one of " : "",
                d->type == UNBLOCK_OPT_ENUM ? d->choices : "");
    }
    fprintf(f, "\nA boolean flag alone means 1 (--verify); --no-NAME means 0.\n"
               "Report: unblock report DIR prints the tables of DIR/unblock-*.json and draws\n"
               "the run (hidden and exposed time per phase, call sites, file I/O, ranks) into\n"
               "the page DIR/unblock-report.html (--html FILE: there; --text: no page;\n"
               "--png FILE: the phases also as a PNG picture).\n"
               "Profiles: unblock profile show lists what each program's last runs learned\n"
               "(UNBLOCK_PROFILE, default ~/.cache/unblock/profiles); unblock profile clear\n"
               "deletes them (with PROGRAM: only its own).  --no-profile: none this run.\n"
               "Plan: unblock plan restructures the loop nests of a C function over\n"
               "disk-resident arrays for disk reuse (unblock plan --help; docs/plan.md).\n");
}

/* ---- which MPI the program uses ---- */

/* Classifies a list of library names (ld.so --list output, or a file's bytes). */
static const char *mpi_from_text(const char *text, size_t len)
{
    static const struct { const char *needle; const char *impl; } known[] = {
        { "libmpich.so", "mpich" },   /* MPICH and its derivatives */
        { "libmpi.so.12", "mpich" },  /* MPICH ABI soname (also Intel MPI) */
        { "libmpi.so.40", "openmpi" },
        { "libmpi.so.20", "openmpi" },
    };
    for (unsigned k = 0; k < sizeof(known) / sizeof(known[0]); k++)
        if (memmem(text, len, known[k].needle, strlen(known[k].needle)) != NULL)
            return known[k].impl;
    return NULL;
}

/* Runs argv, returns its standard output (malloc'd, NUL-terminated) or NULL. */
static char *capture(char *const argv[])
{
    int p[2];
    if (pipe(p) != 0)
        return NULL;
    pid_t pid = fork();
    if (pid < 0)
        return NULL;
    if (pid == 0) {
        dup2(p[1], 1);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 2);
        close(p[0]);
        close(p[1]);
        unsetenv("LD_PRELOAD");
        execv(argv[0], argv);
        _exit(127);
    }
    close(p[1]);
    size_t cap = 4096, len = 0;
    char *out = malloc(cap);
    ssize_t n;
    while (out && (n = read(p[0], out + len, cap - len - 1)) > 0) {
        len += (size_t)n;
        if (cap - len < 2) {
            char *bigger = realloc(out, cap * 2);
            if (!bigger) {
                free(out);
                out = NULL;
                break;
            }
            out = bigger;
            cap *= 2;
        }
    }
    close(p[0]);
    int status;
    waitpid(pid, &status, 0);
    if (out)
        out[len] = '\0';
    return out;
}

/* The ELF interpreter (dynamic loader) of `path`, or "" for a static binary.
 * Returns -1 if the file is not a 64-bit ELF file. */
static int elf_interp(const char *path, char *interp, size_t len)
{
    interp[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    Elf64_Ehdr eh;
    int rc = -1;
    if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
        memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64) {
        rc = 0;
        for (unsigned i = 0; i < eh.e_phnum; i++) {
            Elf64_Phdr ph;
            if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * eh.e_phentsize)) !=
                (ssize_t)sizeof(ph))
                break;
            if (ph.p_type == PT_INTERP && ph.p_filesz < len) {
                if (pread(fd, interp, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz)
                    interp[ph.p_filesz] = '\0';
                break;
            }
        }
    }
    close(fd);
    return rc;
}

/* Libraries `path` (a program or a shared library) will load, as ld.so lists them;
 * falls back to the strings of the file, which finds a soname given to dlopen. */
static const char *mpi_of_elf(const char *path, const char *interp)
{
    char *const argv[] = { (char *)interp, "--list", (char *)path, NULL };
    char *out = capture(argv);
    const char *impl = out ? mpi_from_text(out, strlen(out)) : NULL;
    free(out);
    if (impl)
        return impl;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size > 0 && st.st_size < (1 << 28)) {
        char *buf = malloc((size_t)st.st_size);
        if (buf && read(fd, buf, (size_t)st.st_size) == st.st_size)
            impl = mpi_from_text(buf, (size_t)st.st_size);
        free(buf);
    }
    close(fd);
    return impl;
}

static const char *mpi_of_python(const char *python)
{
    char *const argv[] = { (char *)python, "-c",
                           "import importlib.util as u\n"
                           "s = u.find_spec('mpi4py.MPI')\n"
                           "print(s.origin if s else '')",
                           NULL };
    char *out = capture(argv);
    if (!out)
        return NULL;
    out[strcspn(out, "\n")] = '\0';
    const char *impl = NULL;
    char interp[PATH_MAX], real[PATH_MAX];
    if (out[0] && realpath(python, real) && elf_interp(real, interp, sizeof(interp)) == 0 &&
        interp[0])
        impl = mpi_of_elf(out, interp);
    free(out);
    return impl ? impl : "serial";
}

static int find_in_path(const char *name, char *out, size_t len)
{
    if (strchr(name, '/')) {
        snprintf(out, len, "%s", name);
        return access(out, X_OK);
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *end = strchr(path, ':');
        size_t n = end ? (size_t)(end - path) : strlen(path);
        snprintf(out, len, "%.*s/%s", (int)n, path, name);
        if (access(out, X_OK) == 0)
            return 0;
        if (!end)
            break;
        path = end + 1;
    }
    return -1;
}

static int is_python(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, "python", 6) == 0;
}

static const char *env_get(const char *name)
{
    return getenv(name);
}

/* Which MPI the launcher that started us serves (rule 4 of docs/launcher.md). */
static const char *mpi_of_environment(void)
{
    unblock_job_t job;
    unblock_job_from_env(&job, env_get);
    if (job.launcher == UNBLOCK_JOB_OPENMPI || getenv("OMPI_UNIVERSE_SIZE"))
        return "openmpi";
    if (job.launcher == UNBLOCK_JOB_HYDRA || getenv("PMI_FD") || getenv("PMI_PORT") ||
        getenv("HYDRA_CONTROL_FD"))
        return "mpich"; /* also srun --mpi=pmi2 (PMI_FD): MPICH's PMI client */
    /* srun --mpi=pmix: of the libraries built, only Open MPI speaks PMIx (Debian's
     * MPICH has no PMIx client: its ranks would be singletons). */
    if (job.launcher == UNBLOCK_JOB_SLURM && strncmp(job.mpi_type, "pmix", 4) == 0)
        return "openmpi";
    return NULL;
}

/* Which library the program needs: "openmpi", "mpich", "serial" or "static". */
static const char *detect_mpi(const char *program, const char **how)
{
    char path[PATH_MAX], interp[PATH_MAX];
    const char *impl = NULL;
    if (find_in_path(program, path, sizeof(path)) != 0) {
        *how = "program not found";
        return NULL;
    }
    int elf = elf_interp(path, interp, sizeof(interp));
    if (elf == 0 && interp[0] == '\0') {
        *how = "static binary";
        return "static";
    }
    if (elf == 0 && is_python(path)) {
        *how = "mpi4py of this python";
        return mpi_of_python(path);
    }
    if (elf == 0) {
        *how = "libraries of the program";
        impl = mpi_of_elf(path, interp);
        if (impl == NULL)
            impl = mpi_of_environment();
        return impl ? impl : "serial";
    }
    /* A script: a python one tells through mpi4py; a shell one through the MPI
     * launcher that started us, if any. */
    char line[PATH_MAX] = "";
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(line, sizeof(line), f))
            line[0] = '\0';
        fclose(f);
    }
    if (strncmp(line, "#!", 2) == 0) {
        char *save, *word = strtok_r(line + 2, " \t\n", &save);
        if (word && strcmp(strrchr(word, '/') ? strrchr(word, '/') + 1 : word, "env") == 0)
            word = strtok_r(NULL, " \t\n", &save);
        char interp_path[PATH_MAX];
        if (word && is_python(word) && find_in_path(word, interp_path, sizeof(interp_path)) == 0) {
            *how = "mpi4py of the script's python";
            return mpi_of_python(interp_path);
        }
    }
    impl = mpi_of_environment();
    *how = impl ? "environment of the MPI launcher" : "no clue: default";
    return impl;
}

/* Whether the library of `chosen` (--mpi) must not be preloaded: the program
 * certainly uses the other MPI (its libraries, or its python's mpi4py, say so).
 * Handles differ in size between the two (pointers in Open MPI, integers in
 * MPICH), so the wrong library's wrappers could not even pass the calls through:
 * the program then runs without unblock, and one line says why. */
static int refuses(const char *program, const char *chosen)
{
    const char *how = NULL, *found = detect_mpi(program, &how);
    if (found == NULL || (strcmp(found, "openmpi") != 0 && strcmp(found, "mpich") != 0) ||
        strcmp(found, chosen) == 0 || strcmp(how, "environment of the MPI launcher") == 0 ||
        strcmp(how, "no clue: default") == 0)
        return 0;
    fprintf(stderr, "unblock: --mpi=%s, but %s uses %s (%s): the %s library cannot pass its "
                    "calls through; running it without unblock\n",
            chosen, program, found, how, chosen);
    return 1;
}

/* ---- environment ---- */

static void set_ucx_error_signals(void)
{
    const char *v = getenv("UCX_ERROR_SIGNALS");
    if (v == NULL) {
        setenv("UCX_ERROR_SIGNALS", "SIGILL,SIGBUS,SIGFPE", 1);
        return;
    }
    /* Keep the user's list, without SIGSEGV, which must reach our fault handler. */
    char out[256] = "", copy[256];
    snprintf(copy, sizeof(copy), "%s", v);
    char *save, *tok;
    for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (strcasecmp(tok, "SIGSEGV") == 0 || strcasecmp(tok, "SEGV") == 0)
            continue;
        if (out[0])
            strncat(out, ",", sizeof(out) - strlen(out) - 1);
        strncat(out, tok, sizeof(out) - strlen(out) - 1);
    }
    setenv("UCX_ERROR_SIGNALS", out, 1);
}

static void set_preload(const char *lib)
{
    const char *old = getenv("LD_PRELOAD");
    if (old && strstr(old, "/libunblock-"))
        return; /* already under unblock (a nested launcher) */
    char *v;
    if (old && *old) {
        if (asprintf(&v, "%s:%s", lib, old) < 0)
            return;
    } else {
        v = strdup(lib);
    }
    if (v)
        setenv("LD_PRELOAD", v, 1);
    free(v);
}

/* The folder of unblock's libraries and sidecar, found from the launcher's own
 * place (/proc/self/exe, symbolic links resolved), never from where it was built
 * or installed, so that a moved tree works: the installed layout first
 * (UNBLOCK_LIBDIR_FROM_BIN, from cmake/UnblockInstallDirs.cmake), then the build
 * tree's (bin/ beside lib/).  The folder holds libunblock-serial.so, which every
 * build makes. */
static int library_dir(char *out, size_t len)
{
    static const char *const from_bin[] = { UNBLOCK_LIBDIR_FROM_BIN, "../lib" };
    char self[PATH_MAX];
    if (realpath("/proc/self/exe", self) == NULL)
        return -1;
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    for (unsigned i = 0; i < sizeof(from_bin) / sizeof(from_bin[0]); i++) {
        char dir[PATH_MAX], probe[PATH_MAX + 32], real[PATH_MAX];
        if (snprintf(dir, sizeof(dir), "%s/%s", self, from_bin[i]) >= (int)sizeof(dir))
            continue;
        snprintf(probe, sizeof(probe), "%s/libunblock-serial.so", dir);
        if (access(probe, R_OK) == 0 && realpath(dir, real) != NULL &&
            snprintf(out, len, "%s", real) < (int)len)
            return 0;
    }
    return -1;
}

static int library_path(const char *dir, const char *impl, char *out, size_t len)
{
    if (snprintf(out, len, "%s/libunblock-%s.so", dir, impl) >= (int)len)
        return -1;
    return access(out, R_OK);
}


/* `unblock report ARGS`: the report is a Python program (JSON and matplotlib are
 * better done there), run by the python found when unblock was configured
 * (UNBLOCK_REPORT_PYTHON: one with matplotlib, if there was one), else by the
 * first python3 on PATH. */
static int run_report(int argc, char **argv)
{
    /* Installed: in the libraries' folder (lib/unblock); in the build tree, in
     * lib/unblock under the libraries' lib/. */
    char dir[PATH_MAX], script[PATH_MAX + 32];
    int found = library_dir(dir, sizeof(dir)) == 0 &&
                ((snprintf(script, sizeof(script), "%s/report.py", dir) < (int)sizeof(script) &&
                  access(script, R_OK) == 0) ||
                 (snprintf(script, sizeof(script), "%s/unblock/report.py", dir) < (int)sizeof(script) &&
                  access(script, R_OK) == 0));
    if (!found) {
        fprintf(stderr, "unblock report: report.py is missing beside unblock's libraries "
                        "(lib/unblock)\n");
        return 127;
    }
    char **args = calloc((size_t)argc + 3, sizeof(*args));
    if (!args)
        return 1;
    const char *python = UNBLOCK_REPORT_PYTHON;
    if (access(python, X_OK) != 0)
        python = "python3";
    args[0] = (char *)python;
    args[1] = script;
    for (int i = 0; i < argc; i++)
        args[i + 2] = argv[i];
    execvp(python, args);
    fprintf(stderr, "unblock report: cannot run %s: %s\n", python, strerror(errno));
    return 127;
}

/* ---- unblock profile show|clear [PROGRAM...] ---- */

/* The profile's key line ("EXE\tSCRIPT") and stamp line, from its text. */
static int profile_lines(const char *path, char *key, size_t klen, char *stamp, size_t slen,
                         char *text, size_t tlen)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    size_t n = fread(text, 1, tlen - 1, f);
    fclose(f);
    text[n] = '\0';
    if (strncmp(text, "unblock-profile 1\n", 18) != 0)
        return -1;
    key[0] = stamp[0] = '\0';
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        size_t len = strcspn(l, "\n");
        if (strncmp(l, "key ", 4) == 0)
            snprintf(key, klen, "%.*s", (int)(len - 4), l + 4);
        else if (strncmp(l, "stamp ", 6) == 0)
            snprintf(stamp, slen, "%.*s", (int)(len - 6), l + 6);
    }
    return key[0] ? 0 : -1;
}

/* Whether the profile's program is one of `progs` (their real paths), or all. */
static int profile_matches(const char *key, char **progs, int nprogs)
{
    if (nprogs == 0)
        return 1;
    char exe[PATH_MAX], script[PATH_MAX];
    snprintf(exe, sizeof(exe), "%.*s", (int)strcspn(key, "\t"), key);
    snprintf(script, sizeof(script), "%s", strchr(key, '\t') ? strchr(key, '\t') + 1 : "");
    for (int i = 0; i < nprogs; i++) {
        char real[PATH_MAX];
        const char *p = progs[i];
        if (realpath(p, real) != NULL)
            p = real;
        if (strcmp(p, exe) == 0 || strcmp(p, script) == 0)
            return 1;
    }
    return 0;
}

static int run_profile(int argc, char **argv)
{
    if (argc < 1 || (strcmp(argv[0], "show") != 0 && strcmp(argv[0], "clear") != 0)) {
        fprintf(stderr, "usage: unblock profile show|clear [PROGRAM...]\n");
        return 2;
    }
    int clear = strcmp(argv[0], "clear") == 0;
    char dir[PATH_MAX];
    if (unblock_profile_dir(getenv("UNBLOCK_PROFILE"), dir, sizeof(dir)) != 0) {
        fprintf(stderr, "unblock profile: no profiles (UNBLOCK_PROFILE=off, or no HOME)\n");
        return clear ? 0 : 1;
    }
    DIR *d = opendir(dir);
    if (d == NULL) {
        if (errno == ENOENT) {
            printf("no profiles in %s\n", dir);
            return 0;
        }
        fprintf(stderr, "unblock profile: cannot read %s: %s\n", dir, strerror(errno));
        return 1;
    }
    int found = 0, failed = 0;
    static char text[65536];
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 9 || strcmp(e->d_name + n - 8, ".profile") != 0)
            continue;
        char path[PATH_MAX + 256], key[2 * PATH_MAX + 2], stamp[128];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        int ok = profile_lines(path, key, sizeof(key), stamp, sizeof(stamp), text, sizeof(text)) == 0;
        if (!ok && argc > 1)
            continue; /* a corrupt one belongs to no program named */
        if (ok && !profile_matches(key, argv + 1, argc - 1))
            continue;
        found++;
        if (clear) {
            if (unlink(path) != 0) {
                fprintf(stderr, "unblock profile: cannot delete %s: %s\n", path, strerror(errno));
                failed = 1;
            } else {
                printf("deleted %s\n", path);
            }
            continue;
        }
        printf("%s\n", path);
        if (!ok) {
            printf("  (not a profile unblock can read)\n");
            continue;
        }
        /* Current or stale: the program's stamp now against the profile's. */
        char exe[PATH_MAX], now[128] = "", s2[64];
        snprintf(exe, sizeof(exe), "%.*s", (int)strcspn(key, "\t"), key);
        const char *script = strchr(key, '\t') ? strchr(key, '\t') + 1 : "";
        if (unblock_profile_stamp(exe, now, sizeof(now)) == 0 && script[0] == '/' &&
            unblock_profile_stamp(script, s2, sizeof(s2)) == 0) {
            size_t l = strlen(now);
            snprintf(now + l, sizeof(now) - l, " %s", s2);
        }
        printf("  program: %s%s%s\n  state:   %s\n", exe, script[0] ? " " : "", script,
               strcmp(now, stamp) == 0 ? "current" : "stale (the program changed since)");
        for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
            size_t len = strcspn(l, "\n");
            if (strncmp(l, "runs ", 5) == 0 || strncmp(l, "thread ", 7) == 0 ||
                strncmp(l, "mpi ", 4) == 0 || strncmp(l, "site ", 5) == 0)
                printf("  %.*s\n", (int)len, l);
        }
    }
    closedir(d);
    if (!found)
        printf("no profiles%s in %s\n", argc > 1 ? " of that program" : "", dir);
    return failed;
}

/* `unblock plan ARGS`: the planner is a Python package (isl through islpy, libclang),
 * run as `python -m plan` with its folder first on PYTHONPATH, by the python found
 * at configuration (UNBLOCK_PLAN_PYTHON: the virtual environment with islpy), else
 * by the first python3 on PATH, where the planner says what is missing. */
static int run_plan(int argc, char **argv)
{
    char dir[PATH_MAX], pkg[PATH_MAX + 32], path[2 * PATH_MAX + 64];
    int found = library_dir(dir, sizeof(dir)) == 0 &&
                ((snprintf(pkg, sizeof(pkg), "%s/plan/__main__.py", dir) < (int)sizeof(pkg) &&
                  access(pkg, R_OK) == 0) ||
                 (snprintf(pkg, sizeof(pkg), "%s/unblock/plan/__main__.py", dir) < (int)sizeof(pkg) &&
                  access(pkg, R_OK) == 0));
    if (!found) {
        fprintf(stderr, "unblock plan: the planner is missing beside unblock's libraries "
                        "(lib/unblock/plan)\n");
        return 127;
    }
    /* pkg is .../plan/__main__.py: its grandparent goes on PYTHONPATH. */
    *strrchr(pkg, '/') = '\0';
    *strrchr(pkg, '/') = '\0';
    const char *old = getenv("PYTHONPATH");
    snprintf(path, sizeof(path), "%s%s%s", pkg, old && *old ? ":" : "", old && *old ? old : "");
    setenv("PYTHONPATH", path, 1);
    char **args = calloc((size_t)argc + 4, sizeof(*args));
    if (!args)
        return 1;
    const char *python = UNBLOCK_PLAN_PYTHON;
    if (access(python, X_OK) != 0)
        python = "python3";
    args[0] = (char *)python;
    args[1] = "-m";
    args[2] = "plan";
    for (int i = 0; i < argc; i++)
        args[i + 3] = argv[i];
    execvp(python, args);
    fprintf(stderr, "unblock plan: cannot run %s: %s\n", python, strerror(errno));
    return 127;
}

/* ---- options ---- */

static int find_option(const char *name, size_t len)
{
    for (unsigned i = 0; i < unblock_option_count; i++)
        if (strlen(unblock_option_table[i].name) == len &&
            strncasecmp(unblock_option_table[i].name, name, len) == 0)
            return (int)i;
    return -1;
}

/* Parses the launcher's flags; returns the index of the program in argv. */
static int parse_flags(int argc, char **argv)
{
    int i = 1;
    for (; i < argc; i++) {
        char *a = argv[i];
        if (strcmp(a, "--") == 0)
            return i + 1;
        if (strncmp(a, "--", 2) != 0)
            return i;
        if (strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        }
        if (strcmp(a, "--version") == 0) {
            printf("unblock %s (libraries: %s)\n", UNBLOCK_VERSION, UNBLOCK_BUILT_MPIS);
            exit(0);
        }
        const char *name = a + 2, *value = NULL;
        const char *eq = strchr(name, '=');
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        int negate = 0;
        int idx = find_option(name, nlen);
        if (idx < 0 && nlen > 3 && strncmp(name, "no-", 3) == 0) {
            idx = find_option(name + 3, nlen - 3);
            negate = 1;
        }
        if (idx < 0) {
            fprintf(stderr, "unblock: unknown option '%s' (see unblock --help)\n", a);
            exit(2);
        }
        const unblock_option_desc_t *d = &unblock_option_table[idx];
        if (eq)
            value = eq + 1;
        else if (d->type == UNBLOCK_OPT_BOOL)
            value = negate ? "0" : "1";
        else if (negate && strcmp(d->name, "PROFILE") == 0)
            value = "off"; /* --no-profile */
        else if (i + 1 < argc)
            value = argv[++i];
        else {
            fprintf(stderr, "unblock: option '%s' needs a value (%s)\n", a, d->metavar);
            exit(2);
        }
        char why[160];
        const char *bad = unblock_option_invalid((unsigned)idx, value, why, sizeof(why));
        if (bad) {
            fprintf(stderr, "unblock: --%.*s=%s is not valid (%s); using the default %s\n",
                    (int)nlen, name, value, bad, d->def);
            value = d->def;
        }
        char env[64];
        snprintf(env, sizeof(env), "UNBLOCK_%s", d->name);
        setenv(env, value, 1);
    }
    return i;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "report") == 0) {
        return run_report(argc - 2, argv + 2);
    }
    if (argc >= 2 && strcmp(argv[1], "profile") == 0)
        return run_profile(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "plan") == 0) {
        return run_plan(argc - 2, argv + 2);
    }
    int first = parse_flags(argc, argv);
    if (first >= argc) {
        usage(stderr);
        return 2;
    }
    /* Bad values in the environment are reported by the library, once. */
    unblock_options_t opts;
    unblock_options_load(&opts, NULL);
    verbose = opts.log >= UNBLOCK_LOG_INFO;
    const char *program = argv[first];
    const char *base = strrchr(program, '/') ? strrchr(program, '/') + 1 : program;
    if (strncmp(base, "mpirun", 6) == 0 || strncmp(base, "mpiexec", 7) == 0 ||
        strcmp(base, "srun") == 0 || strcmp(base, "orterun") == 0)
        fprintf(stderr, "unblock: %s is an MPI launcher; unblock goes after it, once per rank: "
                        "mpirun -np N unblock ./app\n", base);
    const char *impl = NULL, *how = "--mpi";
    if (opts.mpi == UNBLOCK_MPI_OPENMPI)
        impl = "openmpi";
    else if (opts.mpi == UNBLOCK_MPI_MPICH)
        impl = "mpich";
    else
        impl = detect_mpi(program, &how);
    if (opts.mpi != UNBLOCK_MPI_AUTO && refuses(program, impl))
        impl = "none";

    /* The folder goes to the program too: a program linked with the link-time
     * variant finds the sidecar there (src/fileio/sidecar.c). */
    char dir[PATH_MAX], lib[PATH_MAX + 32];
    int have_dir = library_dir(dir, sizeof(dir)) == 0;
    if (have_dir)
        setenv("UNBLOCK_LIBDIR", dir, 1);
    if (strcmp(impl ? impl : "", "none") == 0) {
        /* refused: the program runs as it would without unblock */
    } else if (impl && strcmp(impl, "static") == 0) {
        if (verbose)
            fprintf(stderr, "unblock: %s is static: nothing to preload; it works only if "
                            "linked with the link-time variant (see README)\n", program);
    } else {
        if (impl == NULL) {
            /* Nothing tells: prefer a library that also covers MPI. */
            const char *built = UNBLOCK_BUILT_MPIS;
            static char first_built[32];
            snprintf(first_built, sizeof(first_built), "%.*s", (int)strcspn(built, ","), built);
            impl = first_built[0] ? first_built : "serial";
        }
        if (!have_dir || library_path(dir, impl, lib, sizeof(lib)) != 0) {
            fprintf(stderr, "unblock: no library for %s next to the launcher; running %s "
                            "without unblock\n", impl, program);
        } else {
            set_preload(lib);
            set_ucx_error_signals();
        }
        if (verbose)
            fprintf(stderr, "unblock: %s uses %s (%s)\n", program, impl, how);
    }
    if (verbose) {
        unblock_job_t job;
        unblock_job_from_env(&job, env_get);
        if (job.launcher != UNBLOCK_JOB_NONE)
            fprintf(stderr, "unblock: rank %d of %d, local rank %d of %d (%s%s%s)\n", job.rank,
                    job.size, job.local_rank, job.local_size,
                    unblock_job_launcher_name(job.launcher), job.mpi_type[0] ? " --mpi=" : "",
                    job.mpi_type);
    }
    char pid[32];
    snprintf(pid, sizeof(pid), "%d", (int)getpid());
    setenv("UNBLOCK_OWNER", pid, 1);
    execvp(program, argv + first);
    int err = errno;
    fprintf(stderr, "unblock: cannot run %s: %s\n", program, strerror(err));
    return err == ENOENT ? 127 : 126;
}
