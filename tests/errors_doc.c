/* SPDX-License-Identifier: MIT */
/* errors_doc.c - provokes each documented error and writes docs/errors.md, or checks it. */
#include <math.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache_file.h"
#include "gpukern.h"
#include "placement.h"

/* usage: errors_doc            prints docs/errors.md
 *        errors_doc --check F  compares F with what it would print (exit 1 on a difference, 77
 *                              where CUDA is usable: the "unavailable" rows cannot be provoked) */

#if defined(__SANITIZE_ADDRESS__)
/* The out-of-memory row asks for 8 EiB; AddressSanitizer's malloc must return NULL for it. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}
#endif

static FILE *out;
static regex_t pointer_re;

/* Pointers (%p, at least 8 hex digits) differ from run to run; the document shows 0x... */
static void put_message(const char *msg)
{
    regmatch_t m;
    while (*msg) {
        if (regexec(&pointer_re, msg, 1, &m, 0) != 0)
            m.rm_so = m.rm_eo = (regoff_t)strlen(msg);
        for (regoff_t i = 0; i < m.rm_so; i++) {
            if (msg[i] == '|')
                fputc('\\', out);
            fputc(msg[i] == '\n' ? ' ' : msg[i], out);
        }
        if (m.rm_eo > m.rm_so)
            fputs("0x...", out);
        msg += m.rm_eo;
    }
}

/* One row: the function, what was wrong, the status and gk_last_error(). */
static void row(const char *fn, const char *input, gk_status st)
{
    const char *name = gk_status_string(st);
    fprintf(out, "| `%s` | %s | `%.*s` | ", fn, input, (int)strcspn(name, ":"), name);
    if (st == GK_OK)
        fputs("(no error)", out);
    else
        put_message(gk_last_error());
    fputs(" |\n", out);
}

/* The CUDA module's message lists every path it tried, which depends on the build tree. */
static void row_first_line(const char *fn, const char *input, gk_status st)
{
    const char *name = gk_status_string(st);
    const char *msg = gk_last_error();
    fprintf(out, "| `%s` | %s | `%.*s` | %.*s (then each path tried, with its error) |\n", fn,
            input, (int)strcspn(name, ":"), name, (int)strcspn(msg, "\n"), msg);
}

static void section(const char *title)
{
    fprintf(out, "\n### %s\n\n| function | bad input | status | message |\n|---|---|---|---|\n",
            title);
}

/* Scratch files for the loader's and the cache file's rows; shown as $DIR. */
static char workdir[] = "/tmp/gk_errors_doc_XXXXXX";

/* Writes text (len bytes) to workdir/name and returns the path. */
static const char *scratch_file(const char *name, const void *text, size_t len)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", workdir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(text, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "errors_doc: cannot write %s\n", path);
        exit(2);
    }
    return path;
}

/* A message with workdir shown as $DIR. */
static void put_scrubbed(const char *msg)
{
    size_t n = strlen(workdir);
    char buf[4096];
    size_t used = 0;
    while (*msg && used + 5 < sizeof buf) {
        if (strncmp(msg, workdir, n) == 0) {
            memcpy(buf + used, "$DIR", 4);
            used += 4;
            msg += n;
        } else {
            buf[used++] = *msg++;
        }
    }
    buf[used] = '\0';
    put_message(buf);
}

static const char *self_path; /* this program, run again for each loader row */

/* --plugin-candidate mode: the first line of what the loader recorded about GK_CUDA_PLUGIN. */
static int print_candidate(const char *path)
{
    setenv("GK_CUDA_PLUGIN", path, 1);
    gk_backend_available(GK_BACKEND_CUDA);
    const char *msg = strchr(gk_last_error(), '\n');
    msg = msg ? msg + 1 + strspn(msg + 1, " ") : "";
    printf("%.*s", (int)strcspn(msg, "\n"), msg);
    return 0;
}

/* What the CUDA module loader records for a candidate named by GK_CUDA_PLUGIN: it looks once
 * per process, so a fresh process (this program again) asks and sends back the line. */
static void plugin_row(const char *input, const char *path)
{
    int fds[2];
    fflush(out);
    if (pipe(fds) != 0)
        exit(2);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 1);
        execl(self_path, self_path, "--plugin-candidate", path, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char line[2048];
    size_t used = 0;
    ssize_t n;
    while (used < sizeof line - 1 && (n = read(fds[0], line + used, sizeof line - 1 - used)) > 0)
        used += (size_t)n;
    line[used] = '\0';
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    fprintf(out, "| `GK_CUDA_PLUGIN` | %s | (not loaded) | ", input);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fprintf(out, "the process died (status %d) ", status);
    /* Which segment, its size and offset depend on how the library was built. */
    regex_t segment;
    regmatch_t m;
    if (regcomp(&segment, "segment [0-9]+ \\([0-9]+ bytes at offset [0-9]+\\)", REG_EXTENDED) != 0)
        exit(2);
    if (regexec(&segment, line, 1, &m, 0) == 0) {
        char tail[2048];
        snprintf(tail, sizeof tail, "%s", line + m.rm_eo);
        snprintf(line + m.rm_so, sizeof line - (size_t)m.rm_so, "segment N (S bytes at offset O)%s",
                 tail);
    }
    regfree(&segment);
    put_scrubbed(line);
    fputs(" |\n", out);
}

/* What AUTO's cache file reader says of a valid saved model whose line for the key `line`
 * starts with is replaced by `line` (appended when it names no key; NULL: none), and whose lines
 * holding `drop` are left out (NULL: none). */
static void cache_row(const char *input, const char *line, const char *drop)
{
    gk_cost_model m;
    gk__cost_model_defaults(&m);
    char path[256], why[256] = "", text[4096];
    snprintf(path, sizeof path, "%s/calibration.txt", workdir);
    FILE *f = NULL;
    size_t len = 0;
    if (!gk__cost_model_save(&m, path, 0, why, sizeof why) || (f = fopen(path, "r")) == NULL)
        exit(2);
    len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    if ((f = fopen(path, "w")) == NULL)
        exit(2);
    size_t key = line != NULL ? strcspn(line, " ") : 0;
    for (char *l = strtok(text, "\n"); l != NULL; l = strtok(NULL, "\n"))
        if ((line == NULL || strncmp(l, line, key) != 0 || l[key] != ' ') &&
            (drop == NULL || strstr(l, drop) == NULL))
            fprintf(f, "%s\n", l);
    if (line != NULL)
        fputs(line, f);
    fclose(f);
    int ok = gk__cost_model_load(&m, path, why, sizeof why);
    fprintf(out, "| cache file | %s | %s | ", input, ok ? "(loaded)" : "(defaults used)");
    put_scrubbed(ok ? "(no error)" : why);
    fputs(" |\n", out);
}

static void generate(void)
{
    gk_context *c = NULL, *other = NULL, *made = NULL, *dead = NULL;
    gk_buffer *x = NULL, *y = NULL, *z = NULL, *d = NULL, *s = NULL, *o = NULL, *v = NULL;
    gk_buffer *h = NULL, *t = NULL, *gone = NULL;
    if (gk_context_create(GK_BACKEND_CPU, &c) != GK_OK ||
        gk_context_create(GK_BACKEND_CPU, &other) != GK_OK ||
        gk_buffer_create(c, GK_FLOAT32, 10, &x) != GK_OK ||
        gk_buffer_create(c, GK_FLOAT32, 10, &y) != GK_OK ||
        gk_buffer_create(c, GK_FLOAT32, 10, &z) != GK_OK ||
        gk_buffer_create(c, GK_FLOAT64, 10, &d) != GK_OK ||
        gk_buffer_create(c, GK_FLOAT32, 5, &s) != GK_OK ||
        gk_buffer_create(other, GK_FLOAT32, 10, &o) != GK_OK ||
        gk_buffer_view(x, 2, 6, &v) != GK_OK || gk_buffer_view(x, 0, 5, &h) != GK_OK ||
        gk_buffer_view(x, 1, 5, &t) != GK_OK || gk_context_create(GK_BACKEND_CPU, &dead) != GK_OK ||
        gk_buffer_create(c, GK_FLOAT32, 3, &gone) != GK_OK) {
        fprintf(stderr, "errors_doc: setup failed: %s\n", gk_last_error());
        exit(2);
    }
    /* Destroyed handles stay recognisable for a while (quarantine.c). */
    gk_context_destroy(dead);
    gk_buffer_destroy(gone);
    float host[16] = {0};
    double r;
    gk_buffer *b;
    gk_context_options o_;

    fputs("<!-- SPDX-License-Identifier: MIT -->\n"
          "# Errors: what each bad input gets\n\n"
          "Generated by `tests/errors_doc.c` on the CPU backend\n"
          "(`build/tests/errors_doc > docs/errors.md`); the `errors_doc` test fails when this "
          "file\nand the library disagree. Each row is one call with one thing wrong; the "
          "message is\n`gk_last_error()` after it, with pointers shown as `0x...`. Buffers "
          "`x`, `y`, `z` hold\n10 float32, `d` 10 float64, `s` 5 float32; `o` belongs to "
          "another context; `v` is a view\nof `x`, `h` and `t` are views of its elements 0-4 "
          "and 1-5; `dead` is a\ncontext, `gone` a buffer, both destroyed just before.\n\n"
          "The CPU cannot provoke `GK_E_DEVICE` (a CUDA runtime or kernel failure, with the\n"
          "runtime's text) or `GK_E_INTERNAL` (a bug); its `GK_E_UNSUPPORTED` rows are interop\n"
          "calls that need a GPU. `GK_E_OUT_OF_MEMORY` comes from any allocation that fails "
          "(the\ncontext stays usable): `tests/fault` makes each one fail in turn. The scratch "
          "of\n`gk_rbf_matrix` and `gk_rbf_matvec` is bounded by a tile, not by the row length "
          "`d`: very\nwide rows take no scratch that grows with them (`tests/rbf_scratch.c`)."
          "\n\nA destroyed handle is recognised (`dead`, `gone` below) while the library still "
          "holds its\nmemory: until 16 contexts or 256 buffers have been freed after it "
          "(`gpukern.h`, Conventions).\n",
          out);

    section("Contexts");
    row("gk_context_create", "`out` NULL", gk_context_create(GK_BACKEND_CPU, NULL));
    row("gk_context_create", "`b` = 7", gk_context_create((gk_backend)7, &made));
    row_first_line("gk_context_create", "`GK_BACKEND_CUDA` without a usable GPU",
                   gk_context_create(GK_BACKEND_CUDA, &made));
    setenv("GK_BACKEND", "gpu", 1);
    row("gk_context_create", "`GK_BACKEND_AUTO` with `GK_BACKEND=gpu` set",
        gk_context_create(GK_BACKEND_AUTO, &made));
    unsetenv("GK_BACKEND");
    setenv("GK_RBF_FORM", "tensor", 1);
    row("gk_context_create", "`GK_BACKEND_CPU` with `GK_RBF_FORM=tensor` set",
        gk_context_create(GK_BACKEND_CPU, &made));
    unsetenv("GK_RBF_FORM");
    row("gk_context_create_ex", "options NULL", gk_context_create_ex(NULL, &made));
    gk_context_options_init(&o_);
    o_.struct_size = 4;
    row("gk_context_create_ex", "`struct_size` 4", gk_context_create_ex(&o_, &made));
    o_.struct_size = 14;
    row("gk_context_create_ex", "`struct_size` 14", gk_context_create_ex(&o_, &made));
    gk_context_options_init(&o_);
    o_.struct_size = sizeof o_ + 8;
    row("gk_context_create_ex", "`struct_size` larger than this library's",
        gk_context_create_ex(&o_, &made));
    gk_context_options_init(&o_);
    o_.backend = 9;
    row("gk_context_create_ex", "`backend` 9", gk_context_create_ex(&o_, &made));
    gk_context_options_init(&o_);
    o_.device = -1;
    row("gk_context_create_ex", "`device` -1", gk_context_create_ex(&o_, &made));
    gk_context_options_init(&o_);
    o_.backend = GK_BACKEND_CPU;
    o_.device = 1;
    row("gk_context_create_ex", "`device` 1 on the CPU backend", gk_context_create_ex(&o_, &made));
    gk_context_options_init(&o_);
    o_.cpu_threads = -2;
    row("gk_context_create_ex", "`cpu_threads` -2", gk_context_create_ex(&o_, &made));
    o_.cpu_threads = 100000;
    row("gk_context_create_ex", "`cpu_threads` 100000", gk_context_create_ex(&o_, &made));
    gk_context_options_init(&o_);
    o_.flags = 0x80;
    row("gk_context_create_ex", "`flags` 0x80", gk_context_create_ex(&o_, &made));
    row("gk_context_synchronize", "context NULL", gk_context_synchronize(NULL));
    row("gk_context_synchronize", "a buffer passed as the context",
        gk_context_synchronize((gk_context *)(void *)x));
    row("gk_context_synchronize", "`dead`", gk_context_synchronize(dead));
    row("gk_context_calibrate", "`flags` 1", gk_context_calibrate(c, 1));
    row_first_line("gk_backend_available", "`GK_BACKEND_CUDA` without a usable GPU (returns 0)",
                   gk_backend_available(GK_BACKEND_CUDA) ? GK_OK : GK_E_BACKEND_UNAVAILABLE);
    row("gk_backend_available", "`b` = 5 (returns 0)",
        gk_backend_available((gk_backend)5) ? GK_OK : GK_E_INVALID_ARGUMENT);

    section("Buffers");
    row("gk_buffer_create", "context NULL", gk_buffer_create(NULL, GK_FLOAT32, 4, &b));
    row("gk_buffer_create", "`t` = 4", gk_buffer_create(c, (gk_dtype)4, 4, &b));
    row("gk_buffer_create", "`out` NULL", gk_buffer_create(c, GK_FLOAT32, 4, NULL));
    row("gk_buffer_create", "`count` SIZE_MAX", gk_buffer_create(c, GK_FLOAT32, SIZE_MAX, &b));
    row("gk_buffer_create", "`count` 2^61 float32 (8 EiB)",
        gk_buffer_create(c, GK_FLOAT32, (size_t)1 << 61, &b));
    row("gk_buffer_wrap_host", "`host` NULL, `count` 5",
        gk_buffer_wrap_host(c, GK_FLOAT32, 5, NULL, &b));
    row("gk_buffer_wrap_host", "`count` SIZE_MAX",
        gk_buffer_wrap_host(c, GK_FLOAT64, SIZE_MAX, host, &b));
    row("gk_buffer_wrap_host", "float32 `host` 2 bytes past an element",
        gk_buffer_wrap_host(c, GK_FLOAT32, 3, (char *)host + 2, &b));
    row("gk_buffer_view", "`parent` NULL", gk_buffer_view(NULL, 0, 1, &b));
    row("gk_buffer_view", "`out` NULL", gk_buffer_view(x, 0, 1, NULL));
    row("gk_buffer_view", "`offset` 8, `count` 5 of `x`", gk_buffer_view(x, 8, 5, &b));
    row("gk_buffer_view", "`offset` SIZE_MAX, `count` 2", gk_buffer_view(x, SIZE_MAX, 2, &b));
    row("gk_buffer_write", "`buf` NULL", gk_buffer_write(NULL, 0, 1, host));
    row("gk_buffer_write", "`src` NULL, `count` 3", gk_buffer_write(x, 0, 3, NULL));
    row("gk_buffer_write", "`offset` 8, `count` 5 into `x`", gk_buffer_write(x, 8, 5, host));
    row("gk_buffer_read", "`offset` 1, `count` SIZE_MAX", gk_buffer_read(x, 1, SIZE_MAX, host));
    row("gk_buffer_read", "`dst` NULL, `count` 3", gk_buffer_read(x, 0, 3, NULL));
    row("gk_buffer_read", "a context passed as the buffer",
        gk_buffer_read((gk_buffer *)(void *)c, 0, 1, host));
    row("gk_buffer_read", "`gone`", gk_buffer_read(gone, 0, 1, host));
    row("gk_buffer_create", "context `dead`", gk_buffer_create(dead, GK_FLOAT32, 4, &b));

    section("Element-wise operations and reductions");
    row("gk_fill", "context NULL", gk_fill(NULL, 1.0, x));
    row("gk_fill", "`x` NULL", gk_fill(c, 1.0, NULL));
    row("gk_copy", "`y` = `d` (float64)", gk_copy(c, x, d));
    row("gk_copy", "`y` = `s` (5 elements)", gk_copy(c, x, s));
    row("gk_add", "`y` = `o` (another context)", gk_add(c, x, o, z));
    row("gk_sub", "`z` = `v` (6 elements)", gk_sub(c, x, y, v));
    row("gk_mul", "`x` NULL", gk_mul(c, NULL, y, z));
    row("gk_div", "`y` = `d` (float64)", gk_div(c, x, d, z));
    row("gk_axpy", "`y` = `s`", gk_axpy(c, 2.0, x, s));
    row("gk_scale", "`x` = `o`", gk_scale(c, 2.0, o));
    row("gk_exp", "`y` = `d`", gk_exp(c, x, d));
    row("gk_copy", "`x` = `h`, `y` = `t` (partial overlap)", gk_copy(c, h, t));
    row("gk_add", "`x` = `t`, `y` = `s`, `z` = `h`", gk_add(c, t, s, h));
    row("gk_fill", "`x` = `gone`", gk_fill(c, 1.0, gone));
    row("gk_sum", "`result` NULL", gk_sum(c, x, NULL));
    row("gk_dot", "`y` = `s`", gk_dot(c, x, s, &r));
    row("gk_nrm2", "`x` = `o`", gk_nrm2(c, o, &r));

    section("gemm");
    row("gk_gemm", "`ta` = 2",
        gk_gemm(c, (gk_transpose)2, GK_NO_TRANS, 2, 2, 2, 1, x, 2, y, 2, 0, z, 2));
    row("gk_gemm", "`lda` 1 < `k` 2",
        gk_gemm(c, GK_NO_TRANS, GK_NO_TRANS, 2, 2, 2, 1, x, 1, y, 2, 0, z, 2));
    row("gk_gemm", "`ldc` 1 < `n` 2",
        gk_gemm(c, GK_NO_TRANS, GK_NO_TRANS, 2, 2, 2, 1, x, 2, y, 2, 0, z, 1));
    row("gk_gemm", "4 x 3 `A` in `x` (10 elements)",
        gk_gemm(c, GK_NO_TRANS, GK_NO_TRANS, 4, 2, 3, 1, x, 3, y, 2, 0, z, 2));
    row("gk_gemm", "`m` 2^63 rows",
        gk_gemm(c, GK_NO_TRANS, GK_NO_TRANS, (size_t)1 << 63, 2, 2, 1, x, 2, y, 2, 0, z, 2));
    row("gk_gemm", "`c` = `x` = `a`",
        gk_gemm(c, GK_NO_TRANS, GK_NO_TRANS, 2, 2, 2, 1, x, 2, y, 2, 0, x, 2));
    row("gk_gemm", "`c` = `v`, a view inside `a`",
        gk_gemm(c, GK_NO_TRANS, GK_NO_TRANS, 2, 2, 2, 1, x, 2, y, 2, 0, v, 2));
    row("gk_gemm", "`b` = `d`",
        gk_gemm(c, GK_NO_TRANS, GK_NO_TRANS, 2, 2, 2, 1, x, 2, d, 2, 0, z, 2));
    row("gk_gemm", "`b` = `o`",
        gk_gemm(c, GK_NO_TRANS, GK_NO_TRANS, 2, 2, 2, 1, x, 2, o, 2, 0, z, 2));
    row("gk_gemm", "`lda`, `ldc` 2^31 + 3 with `m` 1 (accepted: one row addresses its columns)",
        gk_gemm(c, GK_NO_TRANS, GK_NO_TRANS, 1, 2, 2, 1, x, ((size_t)1 << 31) + 3, y, 2, 0, z,
                ((size_t)1 << 31) + 3));

    section("Gaussian (RBF) kernels");
    row("gk_rbf_rows", "`n` 6, `d` 2 (`a` holds 10)", gk_rbf_rows(c, 6, 2, 1.0, x, y, z));
    row("gk_rbf_rows", "`k` = `s`, `n` 6, `d` 1", gk_rbf_rows(c, 6, 1, 1.0, x, y, s));
    row("gk_rbf_rows", "`n` * `d` wraps", gk_rbf_rows(c, (size_t)1 << 62, 8, 1.0, x, y, z));
    row("gk_rbf_rows", "`k` = `v`, inside `a`", gk_rbf_rows(c, 5, 1, 1.0, x, y, v));
    row("gk_rbf_rows", "`b` = `d`", gk_rbf_rows(c, 5, 1, 1.0, x, d, z));
    row("gk_rbf_matrix", "`k` 10 for 4 x 3", gk_rbf_matrix(c, 4, 3, 1, 1.0, x, y, z));
    row("gk_rbf_matrix", "`m` * `n` wraps",
        gk_rbf_matrix(c, (size_t)1 << 32, (size_t)1 << 32, 0, 1.0, x, y, z));
    row("gk_rbf_matrix", "`y` = `o`", gk_rbf_matrix(c, 2, 2, 1, 1.0, x, o, z));
    row("gk_rbf_matvec", "`w` = `s`, `n` 6", gk_rbf_matvec(c, 2, 6, 1, 1.0, x, y, s, z));
    row("gk_rbf_matvec", "`out` = `y`", gk_rbf_matvec(c, 2, 2, 1, 1.0, x, y, z, y));

    section("Random numbers");
    row("gk_rng_uniform", "`x` NULL", gk_rng_uniform(c, 1, 0, NULL));
    row("gk_rng_uniform", "`offset` 2^64 - 4 with 10 elements",
        gk_rng_uniform(c, 1, UINT64_MAX - 3, x));
    row("gk_rng_normal", "`x` = `o`", gk_rng_normal(c, 1, 0, 0.0, 1.0, o));

    section("Interop (since 1.2)");
    row("gk_device_count", "`b` = 7 (returns 0)",
        gk_device_count((gk_backend)7) > 0 ? GK_OK : GK_E_INVALID_ARGUMENT);
    row_first_line("gk_device_count", "`GK_BACKEND_CUDA` without a usable GPU (returns 0)",
                   gk_device_count(GK_BACKEND_CUDA) > 0 ? GK_OK : GK_E_BACKEND_UNAVAILABLE);
    row("gk_buffer_wrap_device", "context NULL",
        gk_buffer_wrap_device(NULL, GK_FLOAT32, 4, host, &b));
    row("gk_buffer_wrap_device", "`t` = 4", gk_buffer_wrap_device(c, (gk_dtype)4, 4, host, &b));
    row("gk_buffer_wrap_device", "`out` NULL", gk_buffer_wrap_device(c, GK_FLOAT32, 4, host, NULL));
    row("gk_buffer_wrap_device", "`count` SIZE_MAX",
        gk_buffer_wrap_device(c, GK_FLOAT64, SIZE_MAX, host, &b));
    row("gk_buffer_wrap_device", "`device_ptr` NULL, `count` 5",
        gk_buffer_wrap_device(c, GK_FLOAT32, 5, NULL, &b));
    row("gk_buffer_wrap_device", "a CPU context",
        gk_buffer_wrap_device(c, GK_FLOAT32, 4, host, &b));
    row("gk_context_set_stream", "context NULL", gk_context_set_stream(NULL, NULL));
    row("gk_context_set_stream", "a CPU context", gk_context_set_stream(c, NULL));

    section("The kernel family, distances and k-NN (since 1.3; `n64` holds 10 int64)");
    gk_buffer *n64 = NULL;
    gk_kernel kr, bad;
    gk_kernel_init(&kr, GK_KERNEL_POLYNOMIAL);
    if (gk_buffer_create(c, GK_INT64, 10, &n64) != GK_OK)
        exit(2);
    row("gk_add", "`x` = `n64`", gk_add(c, n64, y, z));
    row("gk_copy", "`x` = `n64`, `y` = `d` (float64)", gk_copy(c, n64, d));
    row("gk_kernel_matrix", "`k` NULL", gk_kernel_matrix(c, NULL, 2, 2, 1, x, y, z));
    bad = kr;
    bad.struct_size = 4;
    row("gk_kernel_matrix", "`k->struct_size` 4", gk_kernel_matrix(c, &bad, 2, 2, 1, x, y, z));
    bad = kr;
    bad.kind = 9;
    row("gk_kernel_matrix", "`k->kind` 9", gk_kernel_matrix(c, &bad, 2, 2, 1, x, y, z));
    bad = kr;
    bad.gamma = NAN;
    row("gk_kernel_matrix", "polynomial, `k->gamma` NaN",
        gk_kernel_matrix(c, &bad, 2, 2, 1, x, y, z));
    bad.gamma = 1e300;
    row("gk_kernel_matrix", "polynomial, `k->gamma` 1e300 on float32",
        gk_kernel_matrix(c, &bad, 2, 2, 1, x, y, z));
    bad = kr;
    bad.coef0 = INFINITY;
    row("gk_kernel_matrix", "polynomial, `k->coef0` inf",
        gk_kernel_matrix(c, &bad, 2, 2, 1, x, y, z));
    bad = kr;
    bad.degree = 2.5;
    row("gk_kernel_matrix", "polynomial, `k->degree` 2.5",
        gk_kernel_matrix(c, &bad, 2, 2, 1, x, y, z));
    gk_kernel_init(&bad, GK_KERNEL_MATERN);
    bad.nu = 2.0;
    row("gk_kernel_matrix", "matern, `k->nu` 2", gk_kernel_matrix(c, &bad, 2, 2, 1, x, y, z));
    gk_kernel_init(&bad, GK_KERNEL_MATERN);
    bad.gamma = -1.0;
    row("gk_kernel_matrix", "matern, `k->gamma` -1", gk_kernel_matrix(c, &bad, 2, 2, 1, x, y, z));
    row("gk_kernel_matrix", "`out` = `n64`", gk_kernel_matrix(c, &kr, 2, 2, 1, x, y, n64));
    row("gk_kernel_matrix", "`out` 10 for 4 x 3", gk_kernel_matrix(c, &kr, 4, 3, 1, x, y, z));
    row("gk_kernel_matmul", "`w` = `s` for `n` 3, `r` 2",
        gk_kernel_matmul(c, &kr, 2, 3, 1, 2, x, y, s, z));
    row("gk_kernel_matmul", "`out` = `v`", gk_kernel_matmul(c, &kr, 2, 2, 1, 1, x, y, z, v));
    row("gk_distance_matrix", "`metric` 5", gk_distance_matrix(c, (gk_metric)5, 2, 2, 1, x, y, z));
    row("gk_distance_matrix", "`y` = `d`",
        gk_distance_matrix(c, GK_METRIC_EUCLIDEAN, 2, 2, 1, x, d, z));
    row("gk_knn", "`k` 0", gk_knn(c, GK_METRIC_EUCLIDEAN, 2, 3, 1, 0, x, y, z, n64));
    row("gk_knn", "`k` 4 > `n` 3", gk_knn(c, GK_METRIC_EUCLIDEAN, 2, 3, 1, 4, x, y, z, n64));
    row("gk_knn", "`index` = `s`", gk_knn(c, GK_METRIC_EUCLIDEAN, 2, 3, 1, 2, x, y, z, s));
    row("gk_knn", "`dist` = `n64`", gk_knn(c, GK_METRIC_EUCLIDEAN, 2, 3, 1, 2, x, y, n64, n64));
    row("gk_knn", "`m` * `k` wraps",
        gk_knn(c, GK_METRIC_EUCLIDEAN, (size_t)1 << 62, 8, 0, 8, x, y, z, n64));
    gk_buffer_destroy(n64);

    section("The CUDA module loader (each candidate path, here named by GK_CUDA_PLUGIN)");
    if (mkdtemp(workdir) == NULL)
        exit(2);
    char module[4096];
    FILE *lib = fopen(GK_LIBRARY_FILE, "rb");
    size_t got = lib ? fread(module, 1, sizeof module, lib) : 0;
    if (lib)
        fclose(lib);
    plugin_row("libgpukern.so cut to 4096 bytes", scratch_file("cut.so", module, got));
    plugin_row("a text file", scratch_file("text.so", "not a module\n", 13));
    char fifo[256];
    snprintf(fifo, sizeof fifo, "%s/fifo.so", workdir);
    mkfifo(fifo, 0600);
    plugin_row("a FIFO", fifo);
    plugin_row("a directory", workdir);
    const char *writable = scratch_file("writable.so", module, got);
    chmod(writable, 0666);
    plugin_row("a module writable by every user", writable);
    char open_dir[256];
    snprintf(open_dir, sizeof open_dir, "%s/open", workdir);
    mkdir(open_dir, 0700);
    chmod(open_dir, 0777);
    plugin_row("a module in a directory writable by every user, no sticky bit",
               scratch_file("open/m.so", module, got));
    static char longpath[5001];
    memset(longpath, 'x', 5000);
    longpath[0] = '/';
    plugin_row("a path of 5000 characters", longpath);

    section(
        "AUTO's calibration cache file (a message under GK_LOG=1; the built-in defaults are used)");
    cache_row("`gpu_call_s 1e-`", "gpu_call_s 1e-\n", NULL);
    cache_row("`cpu_gemm_f32 inf`", "cpu_gemm_f32 inf\n", NULL);
    cache_row("`cpu_gemm_f32 4.9e-324` (subnormal)", "cpu_gemm_f32 4.9e-324\n", NULL);
    cache_row("`h2d_bytes_per_s 1e30`", "h2d_bytes_per_s 1e30\n", NULL);
    cache_row("`foo 1`", "foo 1\n", NULL);
    char longline[300];
    memset(longline, ' ', sizeof longline);
    memcpy(longline + sizeof longline - 13, "foo_bar 1\n", 11);
    longline[0] = 'x';
    cache_row("a line of 297 characters", longline, NULL);
    memset(longline, '#', 256);
    memcpy(longline + 256, "gpu_call_s 5\n", 14);
    cache_row("a comment of 268 characters ending in `gpu_call_s 5`", longline, NULL);
    cache_row("a file of 1.1 (no `rng_` rates)", NULL, "_rng_");
    cache_row("CRLF line ends", "gpu_call_s 1e-4\r\n", NULL);
    cache_row("an escape sequence in a key", "gpu_call_s\x1b[2J 1e-4\n", NULL);
    gk_cost_model m;
    char why[256] = "";
    fprintf(out, "| cache file | a directory | (defaults used) | %s |\n",
            gk__cost_model_load(&m, workdir, why, sizeof why) ? "(loaded)" : why);
    fprintf(out, "| cache file | a FIFO | (defaults used) | %s |\n",
            gk__cost_model_load(&m, fifo, why, sizeof why) ? "(loaded)" : why);
    char path[256], link[256];
    snprintf(path, sizeof path, "%s/calibration.txt", workdir);
    snprintf(link, sizeof link, "%s/link.txt", workdir);
    gk__cost_model_defaults(&m);
    FILE *f = NULL;
    if (!gk__cost_model_save(&m, path, 0, why, sizeof why) || (f = fopen(path, "a")) == NULL ||
        fwrite("gpu_call_s 1\0\n", 1, 14, f) != 14 || fclose(f) != 0)
        exit(2);
    fprintf(out, "| cache file | a NUL byte in a short line | (defaults used) | %s |\n",
            gk__cost_model_load(&m, path, why, sizeof why) ? "(loaded)" : why);
    if (!gk__cost_model_save(&m, path, 0, why, sizeof why) || symlink(path, link) != 0)
        exit(2);
    fprintf(out, "| cache file | a symbolic link to a valid file | (defaults used) | %s |\n",
            gk__cost_model_load(&m, link, why, sizeof why) ? "(loaded)" : why);
    fprintf(out, "| cache file | saving over that link | (not saved) | %s |\n",
            gk__cost_model_save(&m, link, 0, why, sizeof why) ? "(saved)" : why);
    if (chmod(path, 0666) != 0)
        exit(2);
    fprintf(out, "| cache file | a valid file of mode 0666 | (defaults used) | %s |\n",
            gk__cost_model_load(&m, path, why, sizeof why) ? "(loaded)" : why);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", workdir);
    if (system(cmd) != 0)
        exit(2);

    gk_buffer *all[] = {x, y, z, d, s, o, v, h, t};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        gk_buffer_destroy(all[i]);
    gk_context_destroy(other);
    gk_context_destroy(c);
}

int main(int argc, char **argv)
{
    self_path = "/proc/self/exe";
    if (argc == 3 && strcmp(argv[1], "--plugin-candidate") == 0)
        return print_candidate(argv[2]);
    if (regcomp(&pointer_re, "0x[0-9a-f]{8,}", REG_EXTENDED) != 0)
        return 2;
    if (argc == 1) {
        out = stdout;
        generate();
        regfree(&pointer_re);
        return 0;
    }
    if (argc != 3 || strcmp(argv[1], "--check") != 0) {
        fprintf(stderr, "usage: errors_doc [--check docs/errors.md | --plugin-candidate PATH]\n");
        return 2;
    }
    if (gk_backend_available(GK_BACKEND_CUDA)) {
        printf("CUDA is usable here, so its \"unavailable\" rows cannot be provoked: skipped\n");
        return 77;
    }
    char *text = NULL;
    size_t len = 0;
    out = open_memstream(&text, &len);
    if (out == NULL)
        return 2;
    generate();
    fclose(out);
    regfree(&pointer_re);

    FILE *f = fopen(argv[2], "r");
    char line[4096];
    const char *p = text;
    int lineno = 0, differ = 0;
    while (!differ && f != NULL && fgets(line, sizeof line, f) != NULL) {
        lineno++;
        size_t n = strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n');
        differ = strlen(line) != n || strncmp(line, p, n) != 0;
        if (differ)
            printf("%s:%d is\n  %s but the library now gives\n  %.*s\n", argv[2], lineno, line,
                   (int)n, p);
        p += n;
    }
    if (f == NULL)
        printf("cannot read %s\n", argv[2]);
    else if (!differ && *p != '\0')
        printf("%s ends at line %d; the library gives more:\n  %.*s\n", argv[2], lineno,
               (int)strcspn(p, "\n"), p);
    int ok = f != NULL && !differ && *p == '\0';
    if (f != NULL)
        fclose(f);
    free(text);
    if (!ok) {
        printf("regenerate it: errors_doc > docs/errors.md\n");
        return 1;
    }
    printf("%s matches what the library reports (%d lines)\n", argv[2], lineno);
    return 0;
}
