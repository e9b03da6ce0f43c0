/* SPDX-License-Identifier: MIT */
/* test_slots.c - public ops, calibration and the interop calls on a backend lacking a slot. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "gk_test.h"

/* The module (slots_module.c) is the CPU backend's code loaded as the CUDA module, so contexts
 * of GK_BACKEND_CUDA run on it and AUTO contexts are hybrid; between contexts the test edits the
 * table the core holds: one op slot NULL, or struct_size ending before it (what a module built
 * against an older backend.h hands over). Each public op must then run if its slot is there and
 * otherwise return GK_E_UNSUPPORTED naming the function, the backend and the slot. */

#define OP_SLOTS(X)                                                                                \
    X(fill)                                                                                        \
    X(copy)                                                                                        \
    X(add) X(sub) X(mul) X(axpy) X(scale) X(exp) X(sum) X(dot) X(nrm2) X(gemm) X(rbf_rows)         \
        X(rbf_matrix) X(rbf_matvec) X(rng_uniform) X(rng_normal) X(div) X(kernel_matrix)           \
            X(kernel_matmul) X(distance_matrix) X(knn)

typedef struct slot {
    const char *name;
    size_t offset;
    void (*clear)(gk_backend_ops *t);
} slot;

#define SLOT_CLEAR(s)                                                                              \
    static void clear_##s(gk_backend_ops *t)                                                       \
    {                                                                                              \
        t->s = NULL;                                                                               \
    }
OP_SLOTS(SLOT_CLEAR)
#undef SLOT_CLEAR

#define SLOT_ENTRY(s) {#s, offsetof(gk_backend_ops, s), clear_##s},
static const slot slots[] = {OP_SLOTS(SLOT_ENTRY)};
#undef SLOT_ENTRY
#define NSLOTS (sizeof slots / sizeof slots[0])

static gk_backend_ops *table; /* the module's, as the core holds it */
static gk_backend_ops full;   /* as the module first handed it over */

/* Buffers of the module's context: inputs x, y, output o, 8 float32 each; index, 8 int64. */
typedef struct fixture {
    gk_buffer *x, *y, *o, *index;
} fixture;

/* One public op on the fixture: rbf, gemm with m = n = d = k = 2, reductions into res. */
typedef struct op {
    const char *fn;
    const char *slot;
    gk_status (*run)(gk_context *c, const fixture *f);
} op;

static double res;
static gk_status run_fill(gk_context *c, const fixture *f)
{
    return gk_fill(c, 1.0, f->o);
}
static gk_status run_copy(gk_context *c, const fixture *f)
{
    return gk_copy(c, f->x, f->o);
}
static gk_status run_add(gk_context *c, const fixture *f)
{
    return gk_add(c, f->x, f->y, f->o);
}
static gk_status run_sub(gk_context *c, const fixture *f)
{
    return gk_sub(c, f->x, f->y, f->o);
}
static gk_status run_mul(gk_context *c, const fixture *f)
{
    return gk_mul(c, f->x, f->y, f->o);
}
static gk_status run_div(gk_context *c, const fixture *f)
{
    return gk_div(c, f->x, f->y, f->o);
}
static gk_status run_axpy(gk_context *c, const fixture *f)
{
    return gk_axpy(c, 2.0, f->x, f->o);
}
static gk_status run_scale(gk_context *c, const fixture *f)
{
    return gk_scale(c, 2.0, f->o);
}
static gk_status run_exp(gk_context *c, const fixture *f)
{
    return gk_exp(c, f->x, f->o);
}
static gk_status run_sum(gk_context *c, const fixture *f)
{
    return gk_sum(c, f->x, &res);
}
static gk_status run_dot(gk_context *c, const fixture *f)
{
    return gk_dot(c, f->x, f->y, &res);
}
static gk_status run_nrm2(gk_context *c, const fixture *f)
{
    return gk_nrm2(c, f->x, &res);
}
static gk_status run_gemm(gk_context *c, const fixture *f)
{
    return gk_gemm(c, GK_NO_TRANS, GK_NO_TRANS, 2, 2, 2, 1.0, f->x, 2, f->y, 2, 0.0, f->o, 2);
}
static gk_status run_rbf_rows(gk_context *c, const fixture *f)
{
    return gk_rbf_rows(c, 2, 2, 0.5, f->x, f->y, f->o);
}
static gk_status run_rbf_matrix(gk_context *c, const fixture *f)
{
    return gk_rbf_matrix(c, 2, 2, 2, 0.5, f->x, f->y, f->o);
}
static gk_status run_rbf_matvec(gk_context *c, const fixture *f)
{
    return gk_rbf_matvec(c, 2, 2, 2, 0.5, f->x, f->y, f->x, f->o);
}
/* Not the Gaussian kernel, which the core hands to the rbf slots. */
static gk_status run_kernel_matrix(gk_context *c, const fixture *f)
{
    gk_kernel k;
    gk_kernel_init(&k, GK_KERNEL_LAPLACIAN);
    return gk_kernel_matrix(c, &k, 2, 2, 2, f->x, f->y, f->o);
}
static gk_status run_kernel_matmul(gk_context *c, const fixture *f)
{
    gk_kernel k;
    gk_kernel_init(&k, GK_KERNEL_LAPLACIAN);
    return gk_kernel_matmul(c, &k, 2, 2, 2, 2, f->x, f->y, f->x, f->o);
}
static gk_status run_distance_matrix(gk_context *c, const fixture *f)
{
    return gk_distance_matrix(c, GK_METRIC_MANHATTAN, 2, 2, 2, f->x, f->y, f->o);
}
static gk_status run_knn(gk_context *c, const fixture *f)
{
    return gk_knn(c, GK_METRIC_EUCLIDEAN, 2, 2, 2, 2, f->x, f->y, f->o, f->index);
}
static gk_status run_rng_uniform(gk_context *c, const fixture *f)
{
    return gk_rng_uniform(c, 1, 0, f->o);
}
static gk_status run_rng_normal(gk_context *c, const fixture *f)
{
    return gk_rng_normal(c, 1, 0, 0.0, 1.0, f->o);
}

#define OP_ENTRY(s) {"gk_" #s, #s, run_##s},
static const op ops[] = {OP_SLOTS(OP_ENTRY)};
#undef OP_ENTRY
#define NOPS (sizeof ops / sizeof ops[0])

/* The slots gk_context_calibrate measures with, in the order it first calls them. */
static const char *const calibrate_slots[] = {
    "fill", "add", "exp", "gemm", "rbf_rows", "rbf_matrix", "rng_uniform", "rng_normal"};

/* One case: the table lacks slots[index], alone or with every slot after it. */
typedef struct slot_case {
    size_t index;
    int truncate;
    char label[64];
} slot_case;

static slot_case cases[2 * NSLOTS];

static const slot *slot_named(const char *name)
{
    for (size_t i = 0; i < NSLOTS; i++)
        if (strcmp(slots[i].name, name) == 0)
            return &slots[i];
    fail_msg("no slot %s", name);
    return NULL;
}

static int lacks(const slot_case *k, const char *name)
{
    const slot *s = slot_named(name);
    return k->truncate ? s->offset >= slots[k->index].offset : s == &slots[k->index];
}

/* Asserts the last call failed with GK_E_UNSUPPORTED naming fn, the backend and slot. */
static void expect_unsupported(gk_status st, const char *fn, const char *slot_name,
                               const char *label)
{
    char want[128];
    snprintf(want, sizeof want, "%s: the slots-test backend does not implement %s", fn, slot_name);
    const char *msg = gk_last_error();
    if (st != GK_E_UNSUPPORTED || strstr(msg, want) == NULL)
        fail_msg("%s: %s returned %s with \"%s\", expected GK_E_UNSUPPORTED with \"%s\"", label, fn,
                 gk_status_string(st), msg, want);
}

static void test_lacking_slot(void **state)
{
    const slot_case *k = *state;
    *table = full;
    if (k->truncate)
        table->struct_size = (uint32_t)slots[k->index].offset;
    else
        slots[k->index].clear(table);

    gk_context *ctx = NULL;
    GK_CHECK_OK(gk_context_create(GK_BACKEND_CUDA, &ctx));
    fixture f = {gk_test_buffer_const(ctx, GK_FLOAT32, 8, 0.25),
                 gk_test_buffer_const(ctx, GK_FLOAT32, 8, 0.5),
                 gk_test_buffer_const(ctx, GK_FLOAT32, 8, 0.0), NULL};
    GK_CHECK_OK(gk_buffer_create(ctx, GK_INT64, 8, &f.index));
    for (size_t i = 0; i < NOPS; i++) {
        gk_status st = ops[i].run(ctx, &f);
        if (lacks(k, ops[i].slot))
            expect_unsupported(st, ops[i].fn, ops[i].slot, k->label);
        else if (st != GK_OK)
            fail_msg("%s: %s failed: %s", k->label, ops[i].fn, gk_last_error());
    }
    gk_buffer_destroy(f.x);
    gk_buffer_destroy(f.y);
    gk_buffer_destroy(f.o);
    gk_buffer_destroy(f.index);
    gk_context_destroy(ctx);

    /* A calibration with every slot present measures the module at CPU speed on GPU-sized
     * runs, minutes on a small host: only the failing ones run, and must fail before that. */
    const char *first = NULL;
    for (size_t i = 0; i < sizeof calibrate_slots / sizeof calibrate_slots[0] && !first; i++)
        if (lacks(k, calibrate_slots[i]))
            first = calibrate_slots[i];
    if (first != NULL) {
        GK_CHECK_OK(gk_context_create(GK_BACKEND_AUTO, &ctx));
        assert_int_equal(gk_context_backend(ctx), GK_BACKEND_CUDA);
        expect_unsupported(gk_context_calibrate(ctx, 0), "gk_context_calibrate", first, k->label);
        gk_context_destroy(ctx);
    }
    *table = full;
}

/* A module built before 1.2 hands over a table that ends before the interop slots, or leaves
 * them NULL (as this one does): the interop calls on its contexts are GK_E_UNSUPPORTED, and so
 * is gk_div where the table ends there (its slot comes after them). */
static void test_module_before_interop(void **state)
{
    (void)state;
    for (int truncate = 0; truncate < 2; truncate++) {
        const char *label = truncate ? "table ends before mem_check_device" : "NULL interop slots";
        *table = full;
        if (truncate)
            table->struct_size = (uint32_t)offsetof(gk_backend_ops, mem_check_device);
        gk_context *ctx = NULL;
        GK_CHECK_OK(gk_context_create(GK_BACKEND_CUDA, &ctx));
        float mem[4] = {0};
        gk_buffer *b = NULL;
        expect_unsupported(gk_buffer_wrap_device(ctx, GK_FLOAT32, 4, mem, &b),
                           "gk_buffer_wrap_device", "mem_check_device", label);
        assert_null(b);
        expect_unsupported(gk_context_set_stream(ctx, NULL), "gk_context_set_stream", "set_stream",
                           label);
        assert_null(gk_context_stream(ctx));
        gk_buffer *x = gk_test_buffer_const(ctx, GK_FLOAT32, 4, 3.0);
        gk_buffer *z = gk_test_buffer_const(ctx, GK_FLOAT32, 4, GK_TEST_SENTINEL);
        if (truncate)
            expect_unsupported(gk_div(ctx, x, x, z), "gk_div", "div", label);
        else
            GK_CHECK_OK(gk_div(ctx, x, x, z));
        float got[4];
        GK_CHECK_OK(gk_buffer_read(z, 0, 4, got));
        assert_true(got[0] == (truncate ? (float)GK_TEST_SENTINEL : 1.0f));
        gk_buffer_destroy(x);
        gk_buffer_destroy(z);
        gk_context_destroy(ctx);
    }
    *table = full;
}

static int group_setup(void **state)
{
    (void)state;
    /* Before the core's one search for the CUDA module: this module instead of any other. */
    setenv("GK_CUDA_PLUGIN", GK_SLOTS_MODULE, 1);
    setenv("GK_CALIBRATION", "off", 1);
    unsetenv("GK_BACKEND");
    if (!gk_backend_available(GK_BACKEND_CUDA)) {
        fprintf(stderr, "test module did not load: %s\n", gk_last_error());
        return -1;
    }
    void *handle = dlopen(GK_SLOTS_MODULE, RTLD_NOW | RTLD_NOLOAD);
    if (handle == NULL) {
        fprintf(stderr, "%s is not the loaded module: %s\n", GK_SLOTS_MODULE, dlerror());
        return -1;
    }
    gk_backend_ops *(*get)(void);
    *(void **)&get = dlsym(handle, "gk_slots_test_table");
    if (get == NULL)
        return -1;
    table = get();
    full = *table;
    dlclose(handle);
    return 0;
}

int main(void)
{
    struct CMUnitTest tests[2 * NSLOTS + 1];
    for (size_t i = 0; i < 2 * NSLOTS; i++) {
        slot_case *k = &cases[i];
        k->index = i / 2;
        k->truncate = (int)(i % 2);
        snprintf(k->label, sizeof k->label, "%s %s", k->truncate ? "table ends before" : "NULL",
                 slots[k->index].name);
        tests[i] = (struct CMUnitTest){k->label, test_lacking_slot, NULL, NULL, k};
    }
    tests[2 * NSLOTS] = (struct CMUnitTest)cmocka_unit_test(test_module_before_interop);
    return cmocka_run_group_tests_name("slots", tests, group_setup, NULL);
}
