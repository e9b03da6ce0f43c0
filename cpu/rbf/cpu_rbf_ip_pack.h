/* SPDX-License-Identifier: MIT */
/* cpu_rbf_ip_pack.h - packing a panel of centered rows for the fused inner-product kernels. */
#ifndef GK_CPU_RBF_IP_PACK_H
#define GK_CPU_RBF_IP_PACK_H

#include <math.h>
#include <stddef.h>

/* Included by the ISA kernels of cpu/rbf/ in their ip_pack, whose parameters it uses. */
/* Centers panel p of rows (per rows, row i = p per + r - sh, d features) on c, each value v then
 * stored by PUT(r, f, v) (the kernel's layout), norms[p per + r] the squared norms rounded to
 * float, *nmax the largest; rows outside 0 .. rows - 1 are zero. Returns the sum of the panel's
 * norms in double, or -1 when a row is not finite or is so large that its dot products could
 * overflow float (then the caller uses another form). */
#define GK_IP_PACK_BODY(PUT)                                                                       \
    double total = 0.0;                                                                            \
    float top = 0.0f;                                                                              \
    for (size_t r = 0; r < per; r++) {                                                             \
        size_t i = p * per + r - sh; /* wraps to a huge value for the rows before row 0 */         \
        double s = 0.0;                                                                            \
        if (p * per + r >= sh && i < rows) {                                                       \
            const float *row = src + i * d;                                                        \
            _Pragma("omp simd reduction(+ : s)") for (size_t f = 0; f < d; f++)                    \
            {                                                                                      \
                float v = row[f] - c[f];                                                           \
                PUT(r, f, v);                                                                      \
                s += (double)v * (double)v;                                                        \
            }                                                                                      \
        } else {                                                                                   \
            for (size_t f = 0; f < d; f++)                                                         \
                PUT(r, f, 0.0f);                                                                   \
        }                                                                                          \
        /* |x.y| <= sqrt(nx ny) <= 2^60 keeps every partial sum finite */                          \
        if (!(s <= 0x1p60))                                                                        \
            return -1.0;                                                                           \
        float sf = (float)s;                                                                       \
        norms[p * per + r] = sf;                                                                   \
        top = sf > top ? sf : top;                                                                 \
        total += s;                                                                                \
    }                                                                                              \
    *nmax = top;                                                                                   \
    return total;

#endif /* GK_CPU_RBF_IP_PACK_H */
