/* SPDX-License-Identifier: MIT */
/* report.c - writes gkbench's results as an aligned table, CSV (one row per result) and JSON. */
#include "report.h"

#include "common.h"

static const char *const status_names[] = {"ok", "skipped", "unsupported", "error"};

const char *bench_status_name(bench_status s)
{
    return status_names[s];
}

static const char *dtype_name(gk_dtype t)
{
    return t == GK_FLOAT64 ? "float64" : "float32";
}

/* Rates are derived, not measured: bytes or flops of one call over its median time. */
static double rate(double work, double s)
{
    return work > 0 && s > 0 ? work / s * 1e-9 : 0;
}

/* A time with a unit a reader takes in at a glance. */
static void time_str(double s, char *buf, size_t len)
{
    if (s < 1e-3)
        snprintf(buf, len, "%.2f us", s * 1e6);
    else if (s < 1)
        snprintf(buf, len, "%.3f ms", s * 1e3);
    else
        snprintf(buf, len, "%.3f s", s);
}

void report_table_header(FILE *f)
{
    fprintf(f, "%-12s %-7s %-18s %-7s %12s %10s %10s  %s\n", "op", "dtype", "size", "backend",
            "median", "GB/s", "GFLOP/s", "note");
}

void report_table_row(FILE *f, const bench_result *r)
{
    char size[64], t[32] = "-", gb[32] = "-", gf[32] = "-";
    bench_case_size(&r->c, size, sizeof size);
    if (r->status == RESULT_OK) {
        double bw = rate(bench_case_bytes(&r->c), r->median_s);
        double fl = rate(bench_case_flops(&r->c), r->median_s);
        time_str(r->median_s, t, sizeof t);
        if (bw > 0)
            snprintf(gb, sizeof gb, "%.1f", bw);
        if (fl > 0)
            snprintf(gf, sizeof gf, "%.1f", fl);
    }
    fprintf(f, "%-12s %-7s %-18s %-7s %12s %10s %10s", bench_op_name(r->c.op),
            dtype_name(r->c.dtype), size, gkx_backend_name(r->backend), t, gb, gf);
    if (r->status != RESULT_OK)
        fprintf(f, "  %s%s%s", bench_status_name(r->status), r->note[0] ? ": " : "", r->note);
    fputc('\n', f);
    fflush(f);
}

/* CSV field: quoted, with quotes doubled, whenever it could break the row. */
static void csv_str(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\n") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* A rate and its comma; empty where the rate means nothing for the op. */
static void csv_num(FILE *f, double v)
{
    if (v > 0)
        fprintf(f, "%.6g", v);
    fputc(',', f);
}

void report_csv(FILE *f, const bench_result *r, size_t n)
{
    fprintf(f, "op,dtype,size,m,n,k,backend,status,median_s,min_s,calls,reps,sets,gbps,gflops,"
               "note\n");
    for (size_t i = 0; i < n; i++) {
        char size[64];
        bench_case_size(&r[i].c, size, sizeof size);
        fprintf(f, "%s,%s,%s,%zu,%zu,%zu,%s,%s,", bench_op_name(r[i].c.op),
                dtype_name(r[i].c.dtype), size, r[i].c.m, r[i].c.n, r[i].c.k,
                gkx_backend_name(r[i].backend), bench_status_name(r[i].status));
        if (r[i].status == RESULT_OK)
            fprintf(f, "%.6e,%.6e,%d,%d,%d,", r[i].median_s, r[i].min_s, r[i].calls, r[i].reps,
                    r[i].sets);
        else
            fprintf(f, ",,,,,");
        /* median_s is 0 unless the case ran, and rate() of 0 seconds is 0: empty fields */
        csv_num(f, rate(bench_case_bytes(&r[i].c), r[i].median_s));
        csv_num(f, rate(bench_case_flops(&r[i].c), r[i].median_s));
        csv_str(f, r[i].note);
        fputc('\n', f);
    }
}

/* JSON string with the escapes RFC 8259 requires; error messages may hold anything. */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* A number, or null where there is none (JSON has no NaN). */
static void json_num(FILE *f, double v)
{
    if (v > 0)
        fprintf(f, "%.6e", v);
    else
        fputs("null", f);
}

void report_json(FILE *f, const bench_meta *meta, const bench_result *r, size_t n)
{
    fprintf(f, "{\n  \"tool\": \"gkbench\",\n  \"version\": ");
    json_str(f, meta->version);
    fprintf(f, ",\n  \"date\": ");
    json_str(f, meta->date);
    fprintf(f, ",\n  \"host\": ");
    json_str(f, meta->host);
    fprintf(f, ",\n  \"loadavg\": ");
    json_str(f, meta->loadavg);
    fprintf(f, ",\n  \"quick\": %s,\n  \"tf32\": %s,\n  \"cpu_threads\": %d,\n  \"min_rep_s\": %g,",
            meta->quick ? "true" : "false", meta->tf32 ? "true" : "false", meta->cpu_threads,
            meta->min_rep_s);
    fprintf(f, "\n  \"devices\": {");
    const char *sep = "";
    for (int b = GK_BACKEND_CPU; b <= GK_BACKEND_CUDA; b++)
        if (meta->device[b] != NULL) {
            fprintf(f, "%s\"%s\": ", sep, gkx_backend_name((gk_backend)b));
            json_str(f, meta->device[b]);
            sep = ", ";
        }
    fprintf(f, "},\n  \"results\": [");
    for (size_t i = 0; i < n; i++) {
        const bench_result *x = &r[i];
        char size[64];
        bench_case_size(&x->c, size, sizeof size);
        int ok = x->status == RESULT_OK;
        fprintf(f,
                "%s\n    {\"op\": \"%s\", \"dtype\": \"%s\", \"size\": \"%s\", \"m\": %zu, "
                "\"n\": %zu, \"k\": %zu, \"backend\": \"%s\", \"status\": \"%s\", \"note\": ",
                i ? "," : "", bench_op_name(x->c.op), dtype_name(x->c.dtype), size, x->c.m, x->c.n,
                x->c.k, gkx_backend_name(x->backend), bench_status_name(x->status));
        json_str(f, x->note);
        fprintf(f, ",\n     \"median_s\": ");
        json_num(f, ok ? x->median_s : 0);
        fprintf(f, ", \"min_s\": ");
        json_num(f, ok ? x->min_s : 0);
        fprintf(f, ", \"calls\": %d, \"reps\": %d, \"sets\": %d, \"bytes\": ", x->calls, x->reps,
                x->sets);
        json_num(f, bench_case_bytes(&x->c));
        fprintf(f, ", \"flops\": ");
        json_num(f, bench_case_flops(&x->c));
        fprintf(f, ", \"gbps\": ");
        json_num(f, ok ? rate(bench_case_bytes(&x->c), x->median_s) : 0);
        fprintf(f, ", \"gflops\": ");
        json_num(f, ok ? rate(bench_case_flops(&x->c), x->median_s) : 0);
        fputc('}', f);
    }
    fprintf(f, "\n  ]\n}\n");
}
