/* SPDX-License-Identifier: MIT */
/* test_plugin.c - the CUDA module loader given hostile candidates: each case in a child process. */
#include "gk_test.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The loader runs once per process, so every case forks a child that sets the environment,
 * asks for the CUDA backend (or an AUTO context) with GK_LOG=1 and reports on stderr, which the
 * parent reads. A child that dies (SIGBUS in dlopen) or does not finish within the limit (a
 * FIFO opened for reading) fails the case instead of the test program. This process itself
 * never touches the loader. With a real CUDA module present (a GPU host), the loader goes on to
 * it after rejecting the candidate; the log still shows the rejection. */

#define CHILD_SECONDS 30

typedef struct outcome {
    int status;    /* waitpid's */
    int timed_out; /* killed after CHILD_SECONDS */
    char log[65536];
} outcome;

static char workdir[] = "/tmp/gk_test_plugin_XXXXXX";

static void run_child(const char *plugin, const char *calibration, int auto_context, outcome *o)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* cmocka's handlers would turn a crash into a longjmp back into the test body */
        static const int crashes[] = {SIGBUS, SIGSEGV, SIGILL, SIGFPE, SIGABRT};
        for (size_t i = 0; i < sizeof crashes / sizeof crashes[0]; i++)
            signal(crashes[i], SIG_DFL);
        close(fds[0]);
        dup2(fds[1], 2);
        setenv("GK_LOG", "1", 1);
        unsetenv("GK_BACKEND");
        if (plugin != NULL)
            setenv("GK_CUDA_PLUGIN", plugin, 1);
        else
            unsetenv("GK_CUDA_PLUGIN");
        if (calibration != NULL)
            setenv("GK_CALIBRATION", calibration, 1);
        if (auto_context) {
            gk_context *ctx = NULL;
            gk_status st = gk_context_create(GK_BACKEND_AUTO, &ctx);
            fprintf(stderr, "RESULT status=%d backend=%d\n", (int)st, (int)gk_context_backend(ctx));
            gk_context_destroy(ctx);
        } else {
            int available = gk_backend_available(GK_BACKEND_CUDA);
            fprintf(stderr, "RESULT available=%d\nLAST ERROR %s\n", available, gk_last_error());
        }
        fflush(stderr);
        _exit(0);
    }
    close(fds[1]);
    size_t used = 0;
    time_t deadline = time(NULL) + CHILD_SECONDS;
    o->timed_out = 0;
    for (;;) {
        struct pollfd p = {fds[0], POLLIN, 0};
        int left = (int)(deadline - time(NULL));
        if (left <= 0 || poll(&p, 1, left * 1000) == 0) {
            o->timed_out = 1;
            kill(pid, SIGKILL);
            break;
        }
        ssize_t n = read(fds[0], o->log + used, sizeof o->log - 1 - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        used += (size_t)n;
        if (used == sizeof o->log - 1)
            break;
    }
    o->log[used] = '\0';
    close(fds[0]);
    assert_int_equal(waitpid(pid, &o->status, 0), pid);
}

/* The child finished normally and its log holds every one of the strings (NULL-terminated). */
static void expect_log(const char *what, const outcome *o, ...)
{
    if (o->timed_out)
        GK_FAIL("%s: the child blocked for %d s (log: %s)", what, CHILD_SECONDS, o->log);
    if (WIFSIGNALED(o->status))
        GK_FAIL("%s: the child died of signal %d (%s); log: %s", what, WTERMSIG(o->status),
                strsignal(WTERMSIG(o->status)), o->log);
    if (!WIFEXITED(o->status) || WEXITSTATUS(o->status) != 0 || strstr(o->log, "RESULT") == NULL)
        GK_FAIL("%s: the child did not finish (status %d); log: %s", what, o->status, o->log);
    va_list ap;
    va_start(ap, o);
    for (const char *s = va_arg(ap, const char *); s != NULL; s = va_arg(ap, const char *))
        if (strstr(o->log, s) == NULL) {
            print_message("%s: the child's log:\n%s\n", what, o->log);
            GK_FAIL("%s: the log should contain \"%s\"", what, s);
        }
    va_end(ap);
}

static void expect_not_in_log(const char *what, const outcome *o, const char *s)
{
    if (strstr(o->log, s) != NULL) {
        print_message("%s: the child's log:\n%s\n", what, o->log);
        GK_FAIL("%s: the log should not contain \"%s\"", what, s);
    }
}

/* Copies the fake module to path, cut to `size` bytes (0: whole). */
static void place_module(const char *path, off_t size)
{
    FILE *in = fopen(GK_FAKE_MODULE, "rb"), *out = fopen(path, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
    if (size > 0)
        assert_int_equal(truncate(path, size), 0);
}

static outcome result;

/* The whole fake module loads and its entry runs: the checks pass a sound file. */
static void test_sound_module_is_loaded(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/whole.so", workdir);
    place_module(path, 0);
    run_child(path, NULL, 0, &result);
    expect_log("a sound module", &result, "fake module entered", (const char *)NULL);
}

/* A module cut to 4096 bytes is refused before dlopen (which would die of SIGBUS inside), as
 * are a file that is not ELF, an empty file and a directory; the process lives on. */
static void test_truncated_module_is_refused(void **state)
{
    (void)state;
    struct stat st;
    assert_int_equal(stat(GK_FAKE_MODULE, &st), 0);
    assert_true(st.st_size > 3 * 4096); /* segments beyond the cut, or the case proves nothing */
    char path[256];
    snprintf(path, sizeof path, "%s/truncated.so", workdir);
    place_module(path, 4096);
    run_child(path, NULL, 0, &result);
    expect_log("a truncated module", &result, "truncated.so: segment",
               "runs past the end of the file (4096 bytes)", (const char *)NULL);
    expect_not_in_log("a truncated module", &result, "fake module entered");

    snprintf(path, sizeof path, "%s/text.so", workdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("not a shared object at all, but long enough to hold an ELF header's 64 bytes......\n",
          f);
    fclose(f);
    run_child(path, NULL, 0, &result);
    expect_log("a text file", &result, "text.so: not an ELF file", (const char *)NULL);

    snprintf(path, sizeof path, "%s/empty.so", workdir);
    place_module(path, 0);
    assert_int_equal(truncate(path, 0), 0);
    run_child(path, NULL, 0, &result);
    expect_log("an empty file", &result, "empty.so: not an ELF file (0 bytes)", (const char *)NULL);

    run_child(workdir, NULL, 0, &result);
    expect_log("a directory", &result, "not a regular file (a directory)", (const char *)NULL);
}

/* A FIFO is refused without blocking (dlopen would wait for a writer forever). */
static void test_fifo_module_is_refused(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/fifo.so", workdir);
    assert_int_equal(mkfifo(path, 0600), 0);
    run_child(path, NULL, 0, &result);
    expect_log("a FIFO", &result, "fifo.so: not a regular file (a FIFO)", (const char *)NULL);
    unlink(path);
}

/* Makes dir/<components of 200 characters>/ until the path is at least `length` - 200 long,
 * then returns in path a file name there that makes it exactly `length` characters. */
static void long_path(char *path, size_t size, size_t length)
{
    snprintf(path, size, "%s", workdir);
    char component[201];
    memset(component, 'd', 200);
    component[200] = '\0';
    while (strlen(path) + 201 + 100 < length) {
        size_t len = strlen(path);
        snprintf(path + len, size - len, "/%s", component);
        if (mkdir(path, 0700) != 0 && errno != EEXIST)
            GK_FAIL("mkdir of a %zu-character path: %s", strlen(path), strerror(errno));
    }
    size_t len = strlen(path), name = length - len - 1 - 3;
    path[len] = '/';
    memset(path + len + 1, 'm', name);
    memcpy(path + len + 1 + name, ".so", 4);
    assert_int_equal(strlen(path), length);
}

/* A GK_CUDA_PLUGIN path longer than 1023 characters is used whole: a module at its first 1023
 * characters is not loaded (it once was), and one at the long path is. */
static void test_long_plugin_path(void **state)
{
    (void)state;
    static char path[4096], longer[8192];
    long_path(path, sizeof path, 1023);
    place_module(path, 0);
    snprintf(longer, sizeof longer, "%s.not-there", path);
    run_child(longer, NULL, 0, &result);
    expect_log("a path whose first 1023 characters name a module", &result,
               "mmm.so.not-there (1033 characters): cannot resolve: No such file or directory",
               (const char *)NULL);
    expect_not_in_log("a path whose first 1023 characters name a module", &result,
                      "fake module entered");

    long_path(path, sizeof path, 2000);
    place_module(path, 0);
    run_child(path, NULL, 0, &result);
    expect_log("a module at a 2000-character path", &result, "fake module entered",
               (const char *)NULL);

    /* longer than PATH_MAX: refused with a message, not cut */
    memset(longer, 'x', 5000);
    longer[0] = '/';
    longer[5000] = '\0';
    run_child(longer, NULL, 0, &result);
    expect_log("a 5000-character path", &result, "(5000 characters): ignored, longer than PATH_MAX",
               (const char *)NULL);
}

/* dir/name, or dir itself where name is NULL: a static buffer, as each case uses one path. */
static const char *in_workdir(const char *dir, const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s%s%s", workdir, dir, name ? "/" : "", name ? name : "");
    return path;
}

/* A directory of the work directory with exactly mode (mkdir applies the umask). */
static void make_dir(const char *dir, mode_t mode)
{
    const char *path = in_workdir(dir, NULL);
    assert_int_equal(mkdir(path, 0700), 0);
    assert_int_equal(chmod(path, mode), 0);
}

/* The fake module at path with exactly mode, loaded from GK_CUDA_PLUGIN (or not): the log holds
 * want, and "fake module entered" exactly when it is loaded. */
static void expect_plugin(const char *what, const char *path, mode_t mode, int loaded,
                          const char *want)
{
    place_module(path, 0);
    assert_int_equal(chmod(path, mode), 0);
    run_child(path, NULL, 0, &result);
    expect_log(what, &result, want, (const char *)NULL);
    if (!loaded)
        expect_not_in_log(what, &result, "fake module entered");
}

/* A module named by GK_CUDA_PLUGIN that another user could replace is refused before dlopen (at
 * 77d1b29 every one of them was loaded): writable by every user, in a directory writable by
 * every user without the sticky bit, reached through a link into such a directory. Group write
 * and a sticky directory writable by all (/tmp) are accepted. */
static void test_writable_module_is_refused(void **state)
{
    (void)state;
    expect_plugin("a module writable by all", in_workdir("writable.so", NULL), 0666, 0,
                  "writable.so: the file /tmp/gk_test_plugin_");
    expect_log("a module writable by all", &result,
               "writable.so is writable by every user (mode 0666)", (const char *)NULL);
    expect_plugin("a group-writable module", in_workdir("group.so", NULL), 0664, 1,
                  "fake module entered");

    make_dir("open", 0777);
    expect_plugin("a module in a directory writable by all", in_workdir("open", "m.so"), 0644, 0,
                  "/open is writable by every user (mode 0777, no sticky bit)");
    make_dir("sticky", 01777);
    expect_plugin("a module in a sticky directory writable by all", in_workdir("sticky", "m.so"),
                  0644, 1, "fake module entered");

    char link[512];
    snprintf(link, sizeof link, "%s", in_workdir("link.so", NULL));
    assert_int_equal(symlink(in_workdir("open", "m.so"), link), 0);
    run_child(link, NULL, 0, &result);
    expect_log("a link to a module in a directory writable by all", &result,
               "link.so: its directory ", "/open is writable by every user", (const char *)NULL);
    expect_not_in_log("a link to a module in a directory writable by all", &result,
                      "fake module entered");
}

/* A module named by GK_CUDA_PLUGIN that belongs to another user (uid 65534), or sits in a
 * directory of theirs, is refused (both were once loaded). Only root can give a file
 * away: skipped for other users. */
static void test_module_of_another_user_is_refused(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        print_message("[ SKIP WHY ] only root can make a file another user's (chown)\n");
        skip();
    }
    const char *path = in_workdir("theirs.so", NULL);
    place_module(path, 0);
    assert_int_equal(chown(path, 65534, 65534), 0);
    run_child(path, NULL, 0, &result);
    expect_log("another user's module", &result,
               "theirs.so is owned by uid 65534, neither this user (uid 0) nor root",
               (const char *)NULL);
    expect_not_in_log("another user's module", &result, "fake module entered");

    make_dir("their_dir", 0755);
    assert_int_equal(chown(in_workdir("their_dir", NULL), 65534, 65534), 0);
    path = in_workdir("their_dir", "m.so");
    place_module(path, 0);
    run_child(path, NULL, 0, &result);
    expect_log("a module in another user's directory", &result,
               "their_dir is owned by uid 65534, neither this user (uid 0) nor root",
               (const char *)NULL);
    expect_not_in_log("a module in another user's directory", &result, "fake module entered");
}

/* GK_CALIBRATION naming a FIFO: an AUTO context on a GPU host reads its cache file; it must not
 * block (it once did, forever). Without a GPU AUTO reads no file: skipped. */
static void test_fifo_calibration(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/calibration.fifo", workdir);
    assert_int_equal(mkfifo(path, 0600), 0);
    run_child(NULL, path, 1, &result);
    unlink(path);
    expect_log("GK_CALIBRATION naming a FIFO", &result, "RESULT status=0", (const char *)NULL);
    if (strstr(result.log, "backend=1") != NULL) {
        print_message("[ SKIP WHY ] AUTO chose the CPU (no GPU): it reads no calibration file\n");
        skip();
    }
    expect_log("GK_CALIBRATION naming a FIFO", &result, "not a regular file", (const char *)NULL);
}

static int make_workdir(void **state)
{
    (void)state;
    return mkdtemp(workdir) == NULL ? -1 : 0;
}

static int remove_workdir(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", workdir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sound_module_is_loaded),
        cmocka_unit_test(test_truncated_module_is_refused),
        cmocka_unit_test(test_fifo_module_is_refused),
        cmocka_unit_test(test_long_plugin_path),
        cmocka_unit_test(test_writable_module_is_refused),
        cmocka_unit_test(test_module_of_another_user_is_refused),
        cmocka_unit_test(test_fifo_calibration),
    };
    return cmocka_run_group_tests_name("plugin", tests, make_workdir, remove_workdir);
}
