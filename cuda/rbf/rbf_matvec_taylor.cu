/* SPDX-License-Identifier: MIT */
/* rbf_matvec_taylor.cu - the launch of rbf_matvec's Taylor form: where it applies, its
 * workspace and its kernels (cuda_rbf_matvec_taylor.cuh). */
#include "rbf_matvec_taylor.h"

#include <cmath>

#include "rbf_matvec_taylor.cuh"

/* Rows per block of the box pass (grid-stride, at most two blocks per multiprocessor). */
#define GK_TAYLOR_BOX_ROWS (GK_CUDA_THREADS * 8)
/* Points of y per moments block at least (at most four blocks per multiprocessor). */
#define GK_TAYLOR_MOMENT_POINTS 1024

static size_t cuda_taylor_terms_of(size_t d)
{
    switch (d) {
    case 1:
        return cuda_taylor_terms<1>();
    case 2:
        return cuda_taylor_terms<2>();
    case 3:
        return cuda_taylor_terms<3>();
    default:
        return cuda_taylor_terms<4>();
    }
}

/* The workspace: the plan, the box partials, the moments partials, the moments. */
struct cuda_taylor_layout {
    size_t box_blocks, mom_blocks, span, o_box, o_part, o_mom, bytes;
};
static cuda_taylor_layout cuda_taylor_layout_of(const gk_cuda_state *s, size_t m, size_t n,
                                                size_t d)
{
    cuda_taylor_layout l;
    const size_t rows = m > n ? m : n, terms = cuda_taylor_terms_of(d);
    l.box_blocks = gk__cuda_blocks(rows, GK_TAYLOR_BOX_ROWS, (size_t)s->sm_count * 2);
    l.mom_blocks = gk__cuda_blocks(n, GK_TAYLOR_MOMENT_POINTS, (size_t)s->sm_count * 4);
    l.span = (n + l.mom_blocks - 1) / l.mom_blocks;
    l.mom_blocks = (n + l.span - 1) / l.span;
    l.o_box = gk__cuda_round16(sizeof(cuda_taylor_plan));
    l.o_part = l.o_box + gk__cuda_round16(l.box_blocks * (4 * d + 1) * sizeof(double));
    l.o_mom = l.o_part + gk__cuda_round16(l.mom_blocks * terms * sizeof(double));
    l.bytes = l.o_mom + terms * sizeof(double);
    return l;
}

size_t gk__cuda_matvec_taylor_bytes(const gk_cuda_state *s, size_t m, size_t n, size_t d)
{
    return cuda_taylor_layout_of(s, m, n, d).bytes;
}

template <int D>
static gk_status cuda_taylor_launch(gk_cuda_state *s, const cuda_taylor_layout &l, size_t m,
                                    size_t n, double g, const float *x, const float *y,
                                    const float *w, float *out, char *work)
{
    cudaStream_t st = s->stream;
    cuda_taylor_plan *plan = (cuda_taylor_plan *)work;
    double *box = (double *)(work + l.o_box), *part = (double *)(work + l.o_part);
    double *mom = (double *)(work + l.o_mom);
    gk_status r;
    cuda_taylor_box<D><<<(unsigned int)l.box_blocks, GK_CUDA_THREADS, 0, st>>>(m, n, x, y, w, box);
    if ((r = gk__cuda_launched("cuda_taylor_box")) != GK_OK)
        return r;
    cuda_taylor_plan_kernel<D><<<1, GK_CUDA_THREADS, 0, st>>>(
        (unsigned int)l.box_blocks, box, g, (double)l.span, (double)l.mom_blocks, plan);
    if ((r = gk__cuda_launched("cuda_taylor_plan_kernel")) != GK_OK)
        return r;
    cuda_taylor_moments<D>
        <<<(unsigned int)l.mom_blocks, GK_CUDA_THREADS, 0, st>>>(n, l.span, y, w, plan, part);
    if ((r = gk__cuda_launched("cuda_taylor_moments")) != GK_OK)
        return r;
    const unsigned int tb =
        (unsigned int)((cuda_taylor_terms<D>() + GK_CUDA_THREADS - 1) / GK_CUDA_THREADS);
    cuda_taylor_reduce_moments<D>
        <<<tb, GK_CUDA_THREADS, 0, st>>>((unsigned int)l.mom_blocks, part, plan, mom);
    if ((r = gk__cuda_launched("cuda_taylor_reduce_moments")) != GK_OK)
        return r;
    cuda_taylor_eval<D>
        <<<gk__cuda_blocks(m, GK_CUDA_THREADS, (size_t)s->sm_count * 8), GK_CUDA_THREADS, 0, st>>>(
            m, x, plan, mom, out);
    return gk__cuda_launched("cuda_taylor_eval");
}

gk_status gk__cuda_matvec_taylor(gk_cuda_state *s, size_t m, size_t n, size_t d, double gamma,
                                 const float *x, const float *y, const float *w, float *out,
                                 void *work, const int **skip)
{
    const cuda_taylor_layout l = cuda_taylor_layout_of(s, m, n, d);
    /* gamma as the float32 operands see it (DESIGN: scalars are rounded to the dtype). */
    const double g = (double)(float)gamma;
    char *wk = (char *)work;
    *skip = &((const cuda_taylor_plan *)wk)->taylor;
    switch (d) {
    case 1:
        return cuda_taylor_launch<1>(s, l, m, n, g, x, y, w, out, wk);
    case 2:
        return cuda_taylor_launch<2>(s, l, m, n, g, x, y, w, out, wk);
    case 3:
        return cuda_taylor_launch<3>(s, l, m, n, g, x, y, w, out, wk);
    default:
        return cuda_taylor_launch<4>(s, l, m, n, g, x, y, w, out, wk);
    }
}
