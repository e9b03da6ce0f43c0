/* SPDX-License-Identifier: MIT */
/* cache_file.h - the AUTO cost model's cache file: where it lives, its format, how it is read
 * and written. */
#ifndef GK_CACHE_FILE_H
#define GK_CACHE_FILE_H

#include <stddef.h>

#include "placement.h"

/* Longest cache path, terminator included: the system's PATH_MAX, past which open() fails. A
 * longer one is refused rather than cut short. */
#define GK_CACHE_PATH_MAX 4096

/* What gk__cache_file_path found. */
typedef enum gk_cache_where {
    GK_CACHE_INVALID = -2,  /* GK_CALIBRATION's value is refused; why says so */
    GK_CACHE_UNUSABLE = -1, /* the default path does not fit GK_CACHE_PATH_MAX; why says so */
    GK_CACHE_NONE = 0,      /* GK_CALIBRATION=off, or neither XDG_CACHE_HOME nor HOME */
    GK_CACHE_NAMED = 1,     /* GK_CALIBRATION=<absolute path> */
    GK_CACHE_DEFAULT = 2    /* <cache dir>/gpukern/calibration-<device>-<host>.txt */
} gk_cache_where;

/* The cache file's path into path (size bytes) from the values of GK_CALIBRATION,
 * XDG_CACHE_HOME and HOME (NULL when unset), the device's name and the host's: GK_CALIBRATION
 * unset or empty gives the default file under XDG_CACHE_HOME when it is an absolute path, else
 * under ~/.cache; "off" gives none; an absolute path names the file; anything else (a relative
 * path, "OFF") is GK_CACHE_INVALID. Characters of device and host other than letters and digits
 * become '_'. */
gk_cache_where gk__cache_file_path(const char *calibration, const char *xdg_cache_home,
                                   const char *home, const char *device, const char *host,
                                   char *path, size_t size, char *why, size_t why_size);

/* Writes the model as "key value" lines, one per field, with a comment, through a temporary
 * file (mode 0600) in the same directory renamed over path, so a reader sees the old file or
 * the new one whole. With make_dirs, the file's directory and its parent are created first
 * (mode 0700) where missing, and the file's directory must be one the user owns. An existing
 * path that is a symbolic link, not a regular file or not the user's is left alone. 1 when
 * written; 0 with why saying what failed. */
int gk__cost_model_save(const gk_cost_model *m, const char *path, int make_dirs, char *why,
                        size_t why_size);

/* Reads what gk__cost_model_save wrote: 1 and *m filled, or 0 with *m as it was and why saying,
 * in printable characters, what is wrong. The file is opened without following a symbolic link
 * and without blocking, and must be a regular file of at most 64 KiB that the user owns and no
 * one else may write (its group and others lack write permission). It holds each key once with
 * a finite number in its physical range, comments (#) and blank lines; anything else (an unknown
 * key, a number with trailing characters, a line over 255 characters that is not a comment, a
 * NUL byte or another control character but a tab, CRLF line ends, a missing key) refuses the
 * whole file. */
int gk__cost_model_load(gk_cost_model *m, const char *path, char *why, size_t why_size);

#endif /* GK_CACHE_FILE_H */
