/* SPDX-License-Identifier: MIT */
/* cache_file.c - the AUTO cost model's cache file: its path, its "key value" format, and reads
 * and writes that neither follow a planted link nor trust a file another user could write. */
#include "cache_file.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "env.h"

/* A cache file written by gk__cost_model_save is some 700 bytes. */
#define CACHE_FILE_MAX 65536
/* Longest line that is not a comment, newline excluded. */
#define CACHE_LINE_MAX 255

static const char *const class_names[GK_WORK_CLASSES] = {
    "stream", "exp", "gemm", "rbf_rows", "rbf_pairs", "rng_uniform", "rng_normal"};

/* name with every character but a letter or a digit replaced by '_', cut to size - 1. */
static void file_name_part(const char *name, char *out, size_t size)
{
    snprintf(out, size, "%s", name);
    for (char *p = out; *p; p++)
        if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') && !(*p >= '0' && *p <= '9'))
            *p = '_';
}

gk_cache_where gk__cache_file_path(const char *calibration, const char *xdg_cache_home,
                                   const char *home, const char *device, const char *host,
                                   char *path, size_t size, char *why, size_t why_size)
{
    path[0] = '\0';
    if (calibration != NULL && strcmp(calibration, "off") == 0)
        return GK_CACHE_NONE;
    if (calibration != NULL && calibration[0] != '\0') {
        /* A relative path would land wherever the program runs (GK_CALIBRATION=OFF: ./OFF). */
        if (calibration[0] != '/') {
            char shown[64 * 4 + 8];
            gk__printable(calibration, 64, shown, sizeof shown);
            snprintf(why, why_size, "GK_CALIBRATION=%s is neither off, empty nor an absolute path",
                     shown);
            return GK_CACHE_INVALID;
        }
        if (strlen(calibration) >= size) {
            snprintf(why, why_size,
                     "GK_CALIBRATION (%zu characters) is longer than a path can be (%zu)",
                     strlen(calibration), size - 1);
            return GK_CACHE_INVALID;
        }
        snprintf(path, size, "%s", calibration);
        return GK_CACHE_NAMED;
    }
    const char *base, *var, *sub;
    if (xdg_cache_home != NULL && xdg_cache_home[0] == '/') {
        base = xdg_cache_home;
        var = "XDG_CACHE_HOME";
        sub = "/gpukern";
    } else if (home != NULL && home[0] != '\0') {
        base = home;
        var = "HOME";
        sub = "/.cache/gpukern";
    } else {
        return GK_CACHE_NONE;
    }
    char dev[128], hostname[128];
    file_name_part(device, dev, sizeof dev);
    file_name_part(host, hostname, sizeof hostname);
    int n = snprintf(path, size, "%s%s/calibration-%s-%s.txt", base, sub, dev, hostname);
    if (n < 0 || (size_t)n >= size) {
        snprintf(why, why_size,
                 "the cache file's path under %s (%zu characters) would be %d characters, longer "
                 "than a path can be (%zu)",
                 var, strlen(base), n, size - 1);
        path[0] = '\0';
        return GK_CACHE_UNUSABLE;
    }
    return GK_CACHE_DEFAULT;
}

/* The cache file's keys, in the order gk__cost_model_save writes them: the four fixed costs,
 * then per class and dtype the CPU's rate and the GPU's. Key k names *slot_at(m, k). */
#define MODEL_KEYS (4 + 4 * (size_t)GK_WORK_CLASSES)
_Static_assert(MODEL_KEYS * sizeof(double) == sizeof(gk_cost_model),
               "every field of the cost model has a key");

static const char *const fixed_keys[4] = {"h2d_bytes_per_s", "d2h_bytes_per_s", "gpu_call_s",
                                          "cpu_call_s"};

static void key_at(size_t k, char *name, size_t size)
{
    if (k < 4) {
        snprintf(name, size, "%s", fixed_keys[k]);
        return;
    }
    size_t j = k - 4;
    snprintf(name, size, "%s_%s_%s", j % 2 ? "gpu" : "cpu", class_names[j / 4],
             j / 2 % 2 ? "f64" : "f32");
}

static double *slot_at(gk_cost_model *m, size_t k)
{
    double *fixed[4] = {&m->h2d_bytes_per_s, &m->d2h_bytes_per_s, &m->gpu_call_s, &m->cpu_call_s};
    if (k < 4)
        return fixed[k];
    size_t j = k - 4;
    return j % 2 ? &m->gpu_rate[j / 4][j / 2 % 2] : &m->cpu_rate[j / 4][j / 2 % 2];
}

/* The index of the key, MODEL_KEYS when it is none. */
static size_t key_index(const char *key)
{
    for (size_t k = 0; k < MODEL_KEYS; k++) {
        char name[64];
        key_at(k, name, sizeof name);
        if (strcmp(key, name) == 0)
            return k;
    }
    return MODEL_KEYS;
}

/* Creates dir (mode 0700) unless it exists; 0 with why set on failure. */
static int make_dir(const char *dir, char *why, size_t why_size)
{
    if (mkdir(dir, 0700) == 0 || errno == EEXIST)
        return 1;
    snprintf(why, why_size, "cannot create %s: %s", dir, strerror(errno));
    return 0;
}

/* Creates the file's directory and its parent where missing; the directory must then be one
 * the user owns, so that nobody else can swap the file under it. */
static int make_parents(const char *path, char *why, size_t why_size)
{
    char dir[GK_CACHE_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL || slash == dir)
        return 1;
    *slash = '\0';
    char *up = strrchr(dir, '/');
    if (up != NULL && up != dir) {
        *up = '\0';
        int ok = make_dir(dir, why, why_size);
        *up = '/';
        if (!ok)
            return 0;
    }
    struct stat st;
    if (!make_dir(dir, why, why_size))
        return 0;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
        snprintf(why, why_size, "%s is not a directory of this user's", dir);
        return 0;
    }
    return 1;
}

/* Why the existing file st may not be replaced or read: NULL when it may. */
static const char *unsafe(const struct stat *st, char *why, size_t why_size)
{
    if (S_ISLNK(st->st_mode))
        snprintf(why, why_size, "a symbolic link, which is not followed");
    else if (!S_ISREG(st->st_mode))
        snprintf(why, why_size, "not a regular file");
    else if (st->st_uid != geteuid())
        snprintf(why, why_size, "owned by uid %u, not by this user (uid %u)", (unsigned)st->st_uid,
                 (unsigned)geteuid());
    else if (st->st_mode & (S_IWGRP | S_IWOTH))
        snprintf(why, why_size, "writable by users other than its owner (mode %04o)",
                 (unsigned)(st->st_mode & 07777));
    else
        return NULL;
    return why;
}

int gk__cost_model_save(const gk_cost_model *m, const char *path, int make_dirs, char *why,
                        size_t why_size)
{
    if (make_dirs && !make_parents(path, why, why_size))
        return 0;
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (unsafe(&st, why, why_size) != NULL)
            return 0;
    } else if (errno != ENOENT) {
        snprintf(why, why_size, "cannot stat it: %s", strerror(errno));
        return 0;
    }
    /* mkstemp creates the file (O_EXCL, mode 0600): no link is followed and no one else's file
     * is written; rename then replaces path itself, never what a link there points to. */
    char tmp[GK_CACHE_PATH_MAX + 8];
    if (snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= (int)sizeof tmp) {
        snprintf(why, why_size, "the path is longer than %d characters", GK_CACHE_PATH_MAX - 1);
        return 0;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(why, why_size, "cannot create a temporary file beside it: %s", strerror(errno));
        return 0;
    }
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    FILE *f = fdopen(fd, "w");
    if (f == NULL) {
        snprintf(why, why_size, "cannot write: %s", strerror(errno));
        close(fd);
        unlink(tmp);
        return 0;
    }
    fprintf(f, "# libgpukern AUTO calibration: rates in work units per second\n");
    gk_cost_model copy = *m;
    for (size_t k = 0; k < MODEL_KEYS; k++) {
        char name[64];
        key_at(k, name, sizeof name);
        fprintf(f, "%s %.6g\n", name, *slot_at(&copy, k));
    }
    int written = !ferror(f);
    if (fclose(f) != 0 || !written || rename(tmp, path) != 0) {
        snprintf(why, why_size, "cannot write: %s", strerror(errno));
        unlink(tmp);
        return 0;
    }
    return 1;
}

/* What a physical figure of each kind may be; a cache file with anything else is refused. */
static void plausible_range(const char *key, double *lo, double *hi, const char **unit)
{
    if (strstr(key, "bytes_per_s") != NULL) {
        *lo = 1e6; /* 1 MB/s .. 10 TB/s */
        *hi = 1e13;
        *unit = "bytes/s";
    } else if (strstr(key, "call_s") != NULL) {
        *lo = 1e-9; /* 1 ns .. 1 s */
        *hi = 1.0;
        *unit = "s";
    } else {
        *lo = 1e6; /* work units per second */
        *hi = 1e18;
        *unit = "units/s";
    }
}

/* Reads one "key value" line (line number lineno) into read; 0 with *why set if it is not one. */
static int parse_line(gk_cost_model *read, unsigned char *seen, char *line, int lineno, char *why,
                      size_t why_size)
{
    char *key = line + strspn(line, " \t");
    char *key_end = key + strcspn(key, " \t");
    char *value = key_end + strspn(key_end, " \t");
    char *value_end = value + strcspn(value, " \t");
    char *rest = value_end + strspn(value_end, " \t");
    if (key == key_end || value == value_end || *rest != '\0') {
        char shown[64 * 4 + 8];
        gk__printable(key, 60, shown, sizeof shown);
        snprintf(why, why_size, "line %d is not \"key value\": \"%s\"", lineno, shown);
        return 0;
    }
    *key_end = '\0';
    *value_end = '\0';
    size_t index = key_index(key);
    if (index == MODEL_KEYS) {
        snprintf(why, why_size, "line %d: unknown key \"%.60s\"", lineno, key);
        return 0;
    }
    double *slot = slot_at(read, index);
    if (seen[index]) {
        snprintf(why, why_size, "line %d: %s appears twice", lineno, key);
        return 0;
    }
    seen[index] = 1;
    char *end = NULL;
    errno = 0;
    double v = strtod(value, &end);
    if (end != value_end || errno == ERANGE || !isfinite(v)) {
        snprintf(why, why_size, "line %d: %s \"%.40s\" is not a finite, normal number", lineno, key,
                 value);
        return 0;
    }
    double lo, hi;
    const char *unit;
    plausible_range(key, &lo, &hi, &unit);
    if (!(v >= lo && v <= hi)) {
        snprintf(why, why_size, "line %d: %s %g is outside [%g, %g] %s", lineno, key, v, lo, hi,
                 unit);
        return 0;
    }
    *slot = v;
    return 1;
}

/* Reads the next line of f into line (size bytes), without its newline, cut to size - 1
 * characters: *len is its whole length, *control its first byte that is neither printable ASCII
 * nor a tab (-1: none) and *column where that is. 0 at the end of the file. */
static int next_line(FILE *f, char *line, size_t size, size_t *len, int *control, size_t *column)
{
    int ch;
    size_t n = 0;
    *control = -1;
    while ((ch = getc(f)) != EOF && ch != '\n') {
        if (*control < 0 && ch != '\t' && (ch < 0x20 || ch > 0x7e)) {
            *control = ch;
            *column = n + 1;
        }
        if (n + 1 < size)
            line[n] = (char)ch;
        n++;
    }
    if (ch == EOF && n == 0)
        return 0;
    line[n + 1 < size ? n : size - 1] = '\0';
    *len = n;
    return 1;
}

/* Opens path for reading: 0 with why set when it cannot be, or must not be, read. */
static int open_cache_file(const char *path, FILE **out, char *why, size_t why_size)
{
    /* Not blocking: a FIFO would wait for a writer forever. Not through a link: one planted in
     * the cache directory would make us read whatever it points to. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
    if (fd < 0) {
        if (errno == ELOOP)
            snprintf(why, why_size, "a symbolic link, which is not followed");
        else
            snprintf(why, why_size, "cannot open: %s", strerror(errno));
        return 0;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(why, why_size, "cannot stat it: %s", strerror(errno));
    } else if (unsafe(&st, why, why_size) == NULL) {
        if (st.st_size > CACHE_FILE_MAX)
            snprintf(why, why_size, "larger than 64 KiB, which no cache file is");
        else if ((*out = fdopen(fd, "r")) == NULL)
            snprintf(why, why_size, "cannot read: %s", strerror(errno));
        else
            return 1;
    }
    close(fd);
    return 0;
}

int gk__cost_model_load(gk_cost_model *m, const char *path, char *why, size_t why_size)
{
    FILE *f = NULL;
    if (!open_cache_file(path, &f, why, why_size))
        return 0;
    gk_cost_model read = *m;
    unsigned char seen[MODEL_KEYS] = {0};
    char line[CACHE_LINE_MAX + 1];
    size_t len = 0, column = 0;
    int ok = 1, lineno = 0, control = -1;
    while (ok && next_line(f, line, sizeof line, &len, &control, &column)) {
        lineno++;
        const char *text = line + strspn(line, " \t");
        if (text[0] == '#')
            continue; /* a comment ends at its newline, however long, whatever it holds */
        if (control == '\r' && column == len) {
            snprintf(why, why_size, "line %d ends in a carriage return (CRLF line ends?)", lineno);
            ok = 0;
        } else if (control >= 0) {
            snprintf(why, why_size, "line %d holds byte 0x%02x at column %zu, not printable text",
                     lineno, (unsigned)control, column);
            ok = 0;
        } else if (len > CACHE_LINE_MAX) {
            snprintf(why, why_size, "line %d is longer than %d characters", lineno, CACHE_LINE_MAX);
            ok = 0;
        } else if (text[0] != '\0') {
            ok = parse_line(&read, seen, line, lineno, why, why_size);
        }
    }
    if (ok && ferror(f)) {
        snprintf(why, why_size, "read error after line %d", lineno);
        ok = 0;
    }
    fclose(f);
    size_t missing = 0, first = MODEL_KEYS;
    for (size_t i = 0; i < MODEL_KEYS; i++)
        if (!seen[i]) {
            missing++;
            first = first < i ? first : i;
        }
    if (ok && missing > 0) {
        char name[64];
        key_at(first, name, sizeof name);
        snprintf(why, why_size,
                 "%zu of its %zu keys are missing, %s the first (truncated, or written by an "
                 "older version?)",
                 missing, MODEL_KEYS, name);
        ok = 0;
    }
    if (ok)
        *m = read;
    return ok;
}
