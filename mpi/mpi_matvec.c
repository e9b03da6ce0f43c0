/* SPDX-License-Identifier: MIT */
/* mpi_matvec.c - gk_mpi_rbf_matvec: the y and w shards travel a ring of the ranks while each
 * rank multiplies its rows of x by the shard it holds. */
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

/* On the CPU the product runs on the calling thread, which is also what moves MPI's messages
 * on (no progress thread is assumed): a shard is computed in up to GK_MPI_PIECES pieces of at
 * least GK_MPI_PIECE_MIN rows with MPI_Testall between them, so the next shard arrives while
 * this one is being used. A CUDA context queues the product and waits inside MPI instead. */
#define GK_MPI_PIECES ((size_t)8)
#define GK_MPI_PIECE_MIN ((size_t)512)

/* Where the shards that travel live. HOST: host arrays that a CPU context wraps in place.
 * STAGED: host arrays for MPI and one device copy for the kernel (a CUDA context whose MPI
 * cannot read device memory). DEVICE: device buffers handed to a CUDA-aware MPI. */
typedef enum ring_mode { RING_HOST, RING_STAGED, RING_DEVICE } ring_mode;

typedef struct ring {
    const char *fn;
    gk_context *ctx;
    MPI_Comm comm;
    int rank, size;
    ring_mode mode;
    gk_dtype t;
    MPI_Datatype mt;
    size_t es, m, d, n_max;
    double gamma;
    void *hy[2], *hw[2];      /* what MPI sends from and receives into */
    gk_buffer *gy[2], *gw[2]; /* what the kernel reads (STAGED: slot 0 only) */
    gk_buffer *tmp;           /* one shard's contribution before it is added to out */
    gk_buffer *out;           /* out_local's first m elements */
    int own_out;              /* out is a view made here */
    int staged;               /* GK_MPI_CUDA_AWARE=0: device memory goes through the host */
    uint64_t *sizes;          /* per rank: n_local, then its set-up status */
} ring;

static gk_status fail_gk(const char *fn, gk_status s)
{
    return gk_mpi__fail(s, "%s: %s", fn, gk_last_error());
}

static gk_status check_size(const char *fn, const char *arg, const gk_buffer *b, size_t rows,
                            const char *rows_arg, size_t cols)
{
    size_t need = rows * cols;
    if (cols != 0 && need / cols != rows)
        return gk_mpi__fail(GK_E_OVERFLOW, "%s: %s * d (%zu * %zu) overflows size_t", fn, rows_arg,
                            rows, cols);
    size_t have = gk_buffer_count(b);
    if (have < need)
        return gk_mpi__fail(GK_E_SHAPE,
                            "%s: %s holds %zu elements, fewer than the %zu that %s = %zu rows "
                            "of %zu need",
                            fn, arg, have, need, rows_arg, rows, cols);
    return GK_OK;
}

/* This rank's arguments, judged before anything is exchanged. */
static gk_status check_local(const char *fn, gk_context *ctx, size_t m, size_t n, size_t d,
                             double gamma, const gk_buffer *x, const gk_buffer *y,
                             const gk_buffer *w, gk_buffer *out)
{
    const gk_buffer *b[4] = {x, y, w, out};
    static const char *const names[4] = {"x_local", "y_local", "w_local", "out_local"};
    if (ctx == NULL)
        return gk_mpi__fail(GK_E_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    for (int i = 0; i < 4; i++)
        if (b[i] == NULL)
            return gk_mpi__fail(GK_E_INVALID_ARGUMENT, "%s: %s is NULL", fn, names[i]);
    /* With no rows gk_rbf_matvec judges everything but the sizes (stale handles, contexts,
     * dtypes, out overlapping an input) and computes nothing. */
    gk_status st = gk_rbf_matvec(ctx, 0, 0, d, gamma, x, y, w, out);
    if (st != GK_OK)
        return fail_gk(fn, st);
    if ((st = check_size(fn, "x_local", x, m, "m_local", d)) != GK_OK ||
        (st = check_size(fn, "y_local", y, n, "n_local", d)) != GK_OK ||
        (st = check_size(fn, "w_local", w, n, "n_local", 1)) != GK_OK ||
        (st = check_size(fn, "out_local", out, m, "m_local", 1)) != GK_OK)
        return st;
    return GK_OK;
}

static void *host_alloc(const char *fn, size_t count, size_t es, gk_status *st)
{
    /* At least one element, so that an empty shard still has an address to wrap. */
    size_t bytes = (count ? count : 1) * es;
    void *p = bytes / es == (count ? count : 1) ? malloc(bytes) : NULL;
    if (p == NULL && *st == GK_OK)
        *st = gk_mpi__fail(GK_E_OUT_OF_MEMORY, "%s: cannot allocate %zu elements of %zu bytes", fn,
                           count, es);
    return p;
}

static void make_buffer(ring *r, size_t count, gk_buffer **out, gk_status *st)
{
    if (*st != GK_OK)
        return;
    gk_status s = gk_buffer_create(r->ctx, r->t, count, out);
    if (s != GK_OK)
        *st = fail_gk(r->fn, s);
}

static void wrap_buffer(ring *r, size_t count, void *host, gk_buffer **out, gk_status *st)
{
    if (*st != GK_OK)
        return;
    gk_status s = gk_buffer_wrap_host(r->ctx, r->t, count ? count : 1, host, out);
    if (s != GK_OK)
        *st = fail_gk(r->fn, s);
}

/* Copies count elements of src into dst (a ring buffer of the context) on the device. */
static gk_status copy_into(ring *r, const gk_buffer *src, gk_buffer *dst, size_t count)
{
    if (count == 0)
        return GK_OK;
    gk_buffer *vs = NULL, *vd = NULL;
    /* A view only reads its parent; the API takes it non-const because views may be written. */
    gk_status st = gk_buffer_view((gk_buffer *)src, 0, count, &vs);
    if (st == GK_OK)
        st = gk_buffer_view(dst, 0, count, &vd);
    if (st == GK_OK)
        st = gk_copy(r->ctx, vs, vd);
    gk_buffer_destroy(vs);
    gk_buffer_destroy(vd);
    return st == GK_OK ? GK_OK : fail_gk(r->fn, st);
}

/* Allocates the ring's buffers and puts this rank's own shard in slot 0. */
static gk_status ring_setup(ring *r, const gk_buffer *y, const gk_buffer *w, size_t n,
                            gk_buffer *out)
{
    gk_status st = GK_OK;
    size_t ny = r->n_max * r->d, nw = r->n_max;
    if (gk_buffer_count(out) == r->m) {
        r->out = out;
    } else if ((st = gk_buffer_view(out, 0, r->m, &r->out)) != GK_OK) {
        return fail_gk(r->fn, st);
    } else {
        r->own_out = 1;
    }
    make_buffer(r, r->m, &r->tmp, &st);
    if (r->mode == RING_DEVICE) {
        for (int i = 0; i < 2; i++) {
            make_buffer(r, ny ? ny : 1, &r->gy[i], &st);
            make_buffer(r, nw ? nw : 1, &r->gw[i], &st);
            if (st == GK_OK) {
                r->hy[i] = gk_buffer_data(r->gy[i]);
                r->hw[i] = gk_buffer_data(r->gw[i]);
            }
        }
        if (st == GK_OK && (st = copy_into(r, y, r->gy[0], n * r->d)) == GK_OK &&
            (st = copy_into(r, w, r->gw[0], n)) == GK_OK) {
            /* MPI reads slot 0 as soon as the ring starts: the copies must have landed. */
            gk_status s = gk_context_synchronize(r->ctx);
            if (s != GK_OK)
                st = fail_gk(r->fn, s);
        }
        return st;
    }
    for (int i = 0; i < 2; i++) {
        r->hy[i] = host_alloc(r->fn, ny, r->es, &st);
        r->hw[i] = host_alloc(r->fn, nw, r->es, &st);
        if (r->mode == RING_HOST) {
            wrap_buffer(r, ny, r->hy[i], &r->gy[i], &st);
            wrap_buffer(r, nw, r->hw[i], &r->gw[i], &st);
        }
    }
    if (r->mode == RING_STAGED) {
        make_buffer(r, ny ? ny : 1, &r->gy[0], &st);
        make_buffer(r, nw ? nw : 1, &r->gw[0], &st);
    }
    if (st == GK_OK && n > 0) {
        gk_status s = gk_buffer_read(y, 0, n * r->d, r->hy[0]);
        if (s == GK_OK)
            s = gk_buffer_read(w, 0, n, r->hw[0]);
        if (s != GK_OK)
            st = fail_gk(r->fn, s);
    }
    return st;
}

static void ring_free(ring *r)
{
    for (int i = 0; i < 2; i++) {
        gk_buffer_destroy(r->gy[i]);
        gk_buffer_destroy(r->gw[i]);
        if (r->mode != RING_DEVICE) {
            free(r->hy[i]);
            free(r->hw[i]);
        }
    }
    gk_buffer_destroy(r->tmp);
    if (r->own_out)
        gk_buffer_destroy(r->out);
    free(r->sizes);
}

/* out (first piece) or out += (later pieces) the product of x with rows [j0, j0 + len) of the
 * shard in y, w. */
static gk_status add_piece(ring *r, const gk_buffer *x, gk_buffer *y, gk_buffer *w, size_t j0,
                           size_t len, int *written)
{
    gk_buffer *vy = y, *vw = w;
    gk_status st = GK_OK;
    if (j0 > 0) {
        st = gk_buffer_view(y, j0 * r->d, len * r->d, &vy);
        if (st == GK_OK && (st = gk_buffer_view(w, j0, len, &vw)) != GK_OK)
            vw = w;
    }
    if (st == GK_OK) {
        gk_buffer *target = *written ? r->tmp : r->out;
        st = gk_rbf_matvec(r->ctx, r->m, len, r->d, r->gamma, x, vy, vw, target);
        if (st == GK_OK && *written)
            st = gk_axpy(r->ctx, 1.0, r->tmp, r->out);
        if (st == GK_OK)
            *written = 1;
    }
    if (vy != y)
        gk_buffer_destroy(vy);
    if (vw != w)
        gk_buffer_destroy(vw);
    return st == GK_OK ? GK_OK : fail_gk(r->fn, st);
}

/* Adds the product with the shard of ns rows in slot `slot`, giving MPI's pending requests a
 * chance to progress between pieces. */
static gk_status add_shard(ring *r, const gk_buffer *x, int slot, size_t ns, int *written,
                           MPI_Request *req, int nreq, int *mpi_err)
{
    if (r->m == 0) {
        *written = 1;
        return GK_OK;
    }
    if (ns == 0 && *written)
        return GK_OK;
    gk_buffer *y = r->gy[slot], *w = r->gw[slot];
    if (r->mode == RING_STAGED) {
        y = r->gy[0];
        w = r->gw[0];
        gk_status s = ns == 0 ? GK_OK : gk_buffer_write(y, 0, ns * r->d, r->hy[slot]);
        if (s == GK_OK && ns > 0)
            s = gk_buffer_write(w, 0, ns, r->hw[slot]);
        if (s != GK_OK)
            return fail_gk(r->fn, s);
    }
    size_t pieces = 1;
    if (nreq > 0 && r->mode == RING_HOST) {
        pieces = ns / GK_MPI_PIECE_MIN;
        pieces = pieces < 1 ? 1 : pieces > GK_MPI_PIECES ? GK_MPI_PIECES : pieces;
    }
    for (size_t p = 0; p < pieces; p++) {
        size_t j0 = ns * p / pieces, j1 = ns * (p + 1) / pieces;
        gk_status st = add_piece(r, x, y, w, j0, j1 - j0, written);
        if (st != GK_OK)
            return st;
        if (nreq > 0 && p + 1 < pieces) {
            int done = 0;
            int err = MPI_Testall(nreq, req, &done, MPI_STATUSES_IGNORE);
            if (err != MPI_SUCCESS) {
                *mpi_err = err;
                return gk_mpi__fail_mpi(r->fn, "MPI_Testall", err);
            }
        }
    }
    return GK_OK;
}

/* Posts this step's exchange: the shard in `cur` goes right, the next one comes from the left. */
static int post_step(ring *r, int cur, size_t n_send, size_t n_recv, MPI_Request *req, int *nreq)
{
    int left = (r->rank + r->size - 1) % r->size, right = (r->rank + 1) % r->size, nxt = cur ^ 1;
    int err;
    if ((err = gk_mpi__post(0, r->hy[nxt], n_recv * r->d, r->es, r->mt, left, 0, r->comm, req,
                            nreq)) != MPI_SUCCESS ||
        (err = gk_mpi__post(0, r->hw[nxt], n_recv, r->es, r->mt, left, 2, r->comm, req, nreq)) !=
            MPI_SUCCESS ||
        (err = gk_mpi__post(1, r->hy[cur], n_send * r->d, r->es, r->mt, right, 0, r->comm, req,
                            nreq)) != MPI_SUCCESS)
        return err;
    return gk_mpi__post(1, r->hw[cur], n_send, r->es, r->mt, right, 2, r->comm, req, nreq);
}

/* The P steps of the ring; returns the first failure of this rank (its message recorded). */
static gk_status ring_run(ring *r, const gk_buffer *x)
{
    gk_status st = GK_OK;
    int written = 0, p = r->size;
    for (int k = 0; k < p; k++) {
        int cur = k & 1, nreq = 0, mpi_err = MPI_SUCCESS;
        MPI_Request req[8];
        size_t n_cur = (size_t)r->sizes[2 * (size_t)((r->rank - k % p + p) % p)];
        if (k + 1 < p) {
            size_t n_next = (size_t)r->sizes[2 * (size_t)((r->rank - (k + 1) % p + p) % p)];
            mpi_err = post_step(r, cur, n_cur, n_next, req, &nreq);
            if (mpi_err != MPI_SUCCESS)
                return gk_mpi__fail_mpi(r->fn, "MPI_Isend/MPI_Irecv", mpi_err);
        }
        /* After a failure this rank still forwards every shard, so no neighbour waits. */
        if (st == GK_OK) {
            st = add_shard(r, x, cur, n_cur, &written, req, nreq, &mpi_err);
            if (mpi_err != MPI_SUCCESS)
                return st;
        }
        if (nreq > 0 && (mpi_err = MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE)) != MPI_SUCCESS)
            return gk_mpi__fail_mpi(r->fn, "MPI_Waitall", mpi_err);
        if (r->mode == RING_DEVICE && k + 1 < p) {
            /* The next step receives into the buffers this step's queued kernels read. */
            gk_status s = gk_context_synchronize(r->ctx);
            if (s != GK_OK && st == GK_OK)
                st = fail_gk(r->fn, s);
        }
    }
    return st;
}

static ring_mode choose_mode(const ring *r)
{
    if (gk_context_backend(r->ctx) != GK_BACKEND_CUDA)
        return RING_HOST;
    return !r->staged && gk_mpi__mpi_cuda_aware() ? RING_DEVICE : RING_STAGED;
}

/* Steps after the arguments are agreed on; every rank of comm runs the same collectives. */
static gk_status distributed(ring *r, const gk_buffer *x, const gk_buffer *y, const gk_buffer *w,
                             size_t n, gk_buffer *out)
{
    gk_status st = GK_OK;
    if (r->size == 1) {
        st = gk_rbf_matvec(r->ctx, r->m, n, r->d, r->gamma, x, y, w, out);
        if (st == GK_OK)
            st = gk_context_synchronize(r->ctx);
        return gk_mpi__agree(r->fn, r->comm, st == GK_OK ? GK_OK : fail_gk(r->fn, st));
    }
    r->mode = choose_mode(r);
    r->mt = r->t == GK_FLOAT32 ? MPI_FLOAT : MPI_DOUBLE;
    r->es = r->t == GK_FLOAT32 ? sizeof(float) : sizeof(double);
    st = ring_setup(r, y, w, n, out);
    /* Everyone's shard size, and whether everyone is ready, in one exchange. */
    uint64_t mine[2] = {(uint64_t)n, (uint64_t)st};
    int err = MPI_Allgather(mine, 2, MPI_UINT64_T, r->sizes, 2, MPI_UINT64_T, r->comm);
    if (err != MPI_SUCCESS)
        return gk_mpi__fail_mpi(r->fn, "MPI_Allgather", err);
    for (int i = 0; i < r->size; i++)
        if (r->sizes[2 * (size_t)i + 1] != GK_OK)
            return gk_mpi__agree(r->fn, r->comm, st);
    st = ring_run(r, x);
    if (st == GK_OK) {
        gk_status s = gk_context_synchronize(r->ctx);
        if (s != GK_OK)
            st = fail_gk(r->fn, s);
    }
    return gk_mpi__agree(r->fn, r->comm, st);
}

GK_MPI_API gk_status gk_mpi_rbf_matvec(gk_context *ctx, MPI_Comm comm, size_t m_local,
                                       size_t n_local, size_t d, double gamma,
                                       const gk_buffer *x_local, const gk_buffer *y_local,
                                       const gk_buffer *w_local, gk_buffer *out_local)
{
    static const char fn[] = "gk_mpi_rbf_matvec";
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized)
        return gk_mpi__fail(GK_E_INVALID_ARGUMENT, "%s: MPI is %s", fn,
                            finalized ? "already finalized" : "not initialized");
    if (comm == MPI_COMM_NULL)
        return gk_mpi__fail(GK_E_INVALID_ARGUMENT, "%s: comm is MPI_COMM_NULL", fn);
    /* Every rank of an intercommunicator sees that it is one, so each refuses it alone, before
     * any collective call: the ring's reductions and neighbours assume one group. */
    int inter = 0, err = MPI_Comm_test_inter(comm, &inter);
    if (err != MPI_SUCCESS)
        return gk_mpi__fail_mpi(fn, "MPI_Comm_test_inter", err);
    if (inter)
        return gk_mpi__fail(GK_E_INVALID_ARGUMENT,
                            "%s: comm is an intercommunicator; pass an intracommunicator (for "
                            "one over both groups, MPI_Intercomm_merge)",
                            fn);
    ring r;
    memset(&r, 0, sizeof r);
    r.fn = fn;
    r.ctx = ctx;
    r.m = m_local;
    r.d = d;
    r.gamma = gamma;
    gk_status st = gk_mpi__private_comm(fn, comm, &r.comm);
    if (st != GK_OK)
        return st;
    MPI_Comm_rank(r.comm, &r.rank);
    MPI_Comm_size(r.comm, &r.size);

    gk_status local =
        check_local(fn, ctx, m_local, n_local, d, gamma, x_local, y_local, w_local, out_local);
    if (local == GK_OK)
        local = gk_mpi__cuda_aware_switch(fn, &r.staged);
    gk_mpi_params p = {d, local == GK_OK ? gk_buffer_dtype(x_local) : GK_FLOAT32, gamma, n_local};
    if (local == GK_OK) {
        r.sizes = malloc(2 * (size_t)r.size * sizeof *r.sizes);
        if (r.sizes == NULL)
            local =
                gk_mpi__fail(GK_E_OUT_OF_MEMORY, "%s: cannot allocate %d shard sizes", fn, r.size);
    }
    st = gk_mpi__agree_params(fn, r.comm, local, &p, &r.n_max);
    if (st == GK_OK) {
        r.t = p.dtype;
        st = distributed(&r, x_local, y_local, w_local, n_local, out_local);
    }
    ring_free(&r);
    return st;
}
