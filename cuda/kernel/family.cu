/* SPDX-License-Identifier: MIT */
/* family.cu - which pass and epilogue each kernel kind and metric takes, the copies of the rows
 * some of them read (unit-norm, or scaled for a tiny gamma), and a tile of either. */
#include <math.h>
#include <stdio.h>

#include "family.h"

/* For the cosine forms: unit-norm copies of x and y, then their norms, in one allocation. */
template <typename T>
static gk_status cuda_family_unit(gk_cuda_state *s, size_t m, size_t n, size_t d, const T *x,
                                  const T *y, cuda_family<T> *f)
{
    const size_t rows = gk__cuda_round16((m + n) * d * sizeof(T));
    const size_t bytes = rows + gk__cuda_round16((m + n) * sizeof(T));
    void *p = NULL;
    cudaError_t e = gk__cuda_malloc(s, bytes, &p);
    if (e != cudaSuccess) {
        char what[96];
        snprintf(what, sizeof what, "unit-norm rows of %zu bytes", bytes);
        return gk__cuda_check(e, what);
    }
    T *u = (T *)p, *norm = (T *)((unsigned char *)p + rows);
    f->buf = p;
    gk_status r = gk__cuda_unit_rows<T>(s, m, d, x, u, norm);
    if (r == GK_OK)
        r = gk__cuda_unit_rows<T>(s, n, d, y, u + m * d, norm + m);
    if (r != GK_OK) {
        gk__cuda_family_release(s, f);
        return r;
    }
    f->x = u;
    f->y = u + m * d;
    f->p.nx = norm;
    f->p.ny = norm + m;
    return GK_OK;
}

/* Below this gamma (as the dtype holds it) ||x - y||^2 can overflow where gamma ||x - y||^2 does
 * not: the Gaussian and Matern kernels then read x and y scaled by 2^k with gamma scaled by
 * 2^-2k, which changes no distance's ratio to 1 / gamma (the rule of src/ops_rbf.c, which the
 * core applies to rbf_matrix and rbf_matvec but not to kernel_matmul's tiles). */
#define GK_TINY_GAMMA_F32 0x1p-60
#define GK_TINY_GAMMA_F64 0x1p-500

/* k < 0 with gamma 2^-2k in [1, 4) where gamma is positive and below the dtype's limit, else 0.
 * Scaling by 2^k is exact but for values that become subnormal, whose squares are then below
 * 2^-200 of gamma's unit and change no kernel value by 1e-5. */
template <typename T> static int cuda_tiny_gamma_scale(double gamma)
{
    if (!(gamma > 0.0) || gamma >= (sizeof(T) == 4 ? GK_TINY_GAMMA_F32 : GK_TINY_GAMMA_F64))
        return 0;
    int e;
    (void)frexp(gamma, &e);
    return (e - 1) >> 1;
}

/* x and y scaled by 2^k into one allocation (f->buf), read in their place. */
template <typename T>
static gk_status cuda_family_scaled(gk_cuda_state *s, size_t m, size_t n, size_t d, int k,
                                    cuda_family<T> *f)
{
    const gk_dtype t = sizeof(T) == 4 ? GK_FLOAT32 : GK_FLOAT64;
    const size_t count = (m + n) * d, bytes = count * sizeof(T);
    void *p = NULL;
    cudaError_t e = gk__cuda_malloc(s, bytes, &p);
    if (e != cudaSuccess) {
        char what[96];
        snprintf(what, sizeof what, "scaled rows of %zu bytes", bytes);
        return gk__cuda_check(e, what);
    }
    T *c = (T *)p;
    f->buf = p;
    gk_status r = gk__cuda_copy(s, t, m * d, f->x, c);
    if (r == GK_OK)
        r = gk__cuda_copy(s, t, n * d, f->y, c + m * d);
    if (r == GK_OK)
        r = gk__cuda_scale(s, t, count, ldexp(1.0, k), c);
    if (r != GK_OK) {
        gk__cuda_family_release(s, f);
        return r;
    }
    f->x = c;
    f->y = c + m * d;
    return GK_OK;
}

template <typename T>
static void cuda_family_init(cuda_family<T> *f, const T *x, const T *y, cuda_acc acc, cuda_epi epi)
{
    *f = cuda_family<T>();
    f->acc = acc;
    f->epi = epi;
    f->x = x;
    f->y = y;
}

template <typename T>
gk_status gk__cuda_family_kernel(gk_cuda_state *s, const gk_kernel *k, size_t m, size_t n, size_t d,
                                 const T *x, const T *y, cuda_family<T> *f)
{
    switch (k->kind) {
    case GK_KERNEL_RBF:
        cuda_family_init(f, x, y, CUDA_ACC_SQDIFF, CUDA_EPI_IDENTITY);
        f->rbf = true;
        break;
    case GK_KERNEL_LAPLACIAN:
        cuda_family_init(f, x, y, CUDA_ACC_ABSDIFF, CUDA_EPI_LAPLACIAN);
        break;
    case GK_KERNEL_POLYNOMIAL:
        cuda_family_init(f, x, y, CUDA_ACC_DOT, CUDA_EPI_POLYNOMIAL);
        break;
    case GK_KERNEL_SIGMOID:
        cuda_family_init(f, x, y, CUDA_ACC_DOT, CUDA_EPI_SIGMOID);
        break;
    case GK_KERNEL_LINEAR:
        cuda_family_init(f, x, y, CUDA_ACC_DOT, CUDA_EPI_IDENTITY);
        break;
    case GK_KERNEL_COSINE:
        cuda_family_init(f, x, y, CUDA_ACC_DOT, CUDA_EPI_COSINE_KERNEL);
        return cuda_family_unit(s, m, n, d, x, y, f);
    case GK_KERNEL_MATERN:
        cuda_family_init(f, x, y, CUDA_ACC_SQDIFF,
                         k->nu == 0.5   ? CUDA_EPI_MATERN05
                         : k->nu == 1.5 ? CUDA_EPI_MATERN15
                                        : CUDA_EPI_MATERN25);
        break;
    default:
        return gk__cuda_error(GK_E_INTERNAL, "cuda: kernel kind %d reached the backend",
                              (int)k->kind);
    }
    const int scale =
        (f->rbf || f->acc == CUDA_ACC_SQDIFF) && d > 0 ? cuda_tiny_gamma_scale<T>(k->gamma) : 0;
    f->gamma = ldexp(k->gamma, -2 * scale);
    f->p.gamma = (T)f->gamma;
    f->p.coef0 = (T)k->coef0;
    f->p.degree = (int)k->degree;
    return scale != 0 ? cuda_family_scaled(s, m, n, d, scale, f) : GK_OK;
}

template <typename T>
gk_status gk__cuda_family_metric(gk_cuda_state *s, gk_metric metric, size_t m, size_t n, size_t d,
                                 const T *x, const T *y, cuda_family<T> *f)
{
    switch (metric) {
    case GK_METRIC_SQEUCLIDEAN:
        cuda_family_init(f, x, y, CUDA_ACC_SQDIFF, CUDA_EPI_IDENTITY);
        return GK_OK;
    case GK_METRIC_EUCLIDEAN:
        cuda_family_init(f, x, y, CUDA_ACC_SQDIFF, CUDA_EPI_EUCLIDEAN);
        return GK_OK;
    case GK_METRIC_MANHATTAN:
        cuda_family_init(f, x, y, CUDA_ACC_ABSDIFF, CUDA_EPI_IDENTITY);
        return GK_OK;
    case GK_METRIC_COSINE:
        cuda_family_init(f, x, y, CUDA_ACC_SQDIFF, CUDA_EPI_COSINE_DIST);
        return cuda_family_unit(s, m, n, d, x, y, f);
    }
    return gk__cuda_error(GK_E_INTERNAL, "cuda: metric %d reached the backend", (int)metric);
}

template <typename T> void gk__cuda_family_release(gk_cuda_state *s, cuda_family<T> *f)
{
    if (f->buf != NULL)
        gk__cuda_free(s, f->buf);
    f->buf = NULL;
}

template <typename T>
gk_status gk__cuda_family_tile(gk_cuda_state *s, const cuda_family<T> &f, size_t i0, size_t mb,
                               size_t j0, size_t nb, size_t d, T *out, size_t ldo, bool stream)
{
    const T *x = f.x == NULL ? NULL : f.x + i0 * d, *y = f.y == NULL ? NULL : f.y + j0 * d;
    if (f.rbf) {
        if (ldo != nb)
            return gk__cuda_error(GK_E_INTERNAL,
                                  "cuda: a Gaussian tile of %zu columns with row "
                                  "length %zu",
                                  nb, ldo);
        return gk__cuda_rbf_matrix(s, sizeof(T) == 4 ? GK_FLOAT32 : GK_FLOAT64, mb, nb, d, f.gamma,
                                   x, y, out);
    }
    cuda_epi_params<T> p = f.p;
    if (p.nx != NULL) {
        p.nx += i0;
        p.ny += j0;
    }
    p.x = x;
    p.y = y;
    p.d = d;
    return gk__cuda_pass<T>(s, f.acc, f.epi, p, mb, nb, d, x, y, out, ldo, stream);
}

template <typename T>
void gk__cuda_family_log(const gk_cuda_state *s, const char *op, const char *what,
                         const cuda_family<T> &f, size_t m, size_t n, size_t d)
{
    static const char *const sums[] = {"dot", "sqdiff", "absdiff"};
    static const char *const epis[] = {"identity",      "polynomial",     "sigmoid",  "laplacian",
                                       "matern05",      "matern15",       "matern25", "euclidean",
                                       "cosine_kernel", "cosine_distance"};
    static_assert(sizeof epis / sizeof epis[0] == CUDA_EPI_COSINE_DIST + 1, "a name per epilogue");
    if (!s->log)
        return;
    if (f.rbf)
        gk__cuda_log("%s: form %s (%zu x %zu x %zu; tiles of rbf_matrix, its planner's forms)", op,
                     what, m, n, d);
    else
        gk__cuda_log("%s: form %s (%zu x %zu x %zu; sum %s, epilogue %s)", op, what, m, n, d,
                     sums[f.acc], epis[f.epi]);
}

#define GK_FAMILY_INSTANTIATE(T)                                                                   \
    template gk_status gk__cuda_family_kernel<T>(gk_cuda_state *, const gk_kernel *, size_t,       \
                                                 size_t, size_t, const T *, const T *,             \
                                                 cuda_family<T> *);                                \
    template gk_status gk__cuda_family_metric<T>(gk_cuda_state *, gk_metric, size_t, size_t,       \
                                                 size_t, const T *, const T *, cuda_family<T> *);  \
    template void gk__cuda_family_release<T>(gk_cuda_state *, cuda_family<T> *);                   \
    template void gk__cuda_family_log<T>(const gk_cuda_state *, const char *, const char *,        \
                                         const cuda_family<T> &, size_t, size_t, size_t);          \
    template gk_status gk__cuda_family_tile<T>(gk_cuda_state *, const cuda_family<T> &, size_t,    \
                                               size_t, size_t, size_t, size_t, T *, size_t, bool);
GK_FAMILY_INSTANTIATE(float)
GK_FAMILY_INSTANTIATE(double)
