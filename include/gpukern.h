/* SPDX-License-Identifier: MIT */
/* gpukern.h - the whole public API of libgpukern: numerical kernels on a GPU or the CPU. */
#ifndef GPUKERN_H
#define GPUKERN_H

#include <stddef.h>
#include <stdint.h>

#include "gpukern_version.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef GK_API
#if defined(__GNUC__) && defined(GK_BUILDING_LIBRARY)
#define GK_API __attribute__((visibility("default")))
#else
#define GK_API
#endif
#endif

/* ==========================================================================================
 * Conventions
 *
 * Every function that can fail returns a gk_status; results come back through out-parameters,
 * which are left untouched on failure. On failure gk_last_error() holds a message naming the
 * function, the argument and the values. Destroy functions accept NULL. Getters given NULL
 * return 0 or "". Nothing aborts and nothing prints unless the environment sets GK_LOG=1.
 *
 * A destroyed handle passed again (a second destroy, a call on it) is detected while its memory
 * is still the library's: a destroy ignores it, a getter returns 0, NULL or "", anything else
 * returns GK_E_INVALID_ARGUMENT ("... was destroyed"). That holds as long as fewer than 16
 * contexts (256 buffers) have been freed since it was; a context is freed when its last buffer
 * goes. Beyond that, as with free(), the behaviour is undefined. Readable memory that is no
 * handle of the kind expected (a buffer passed as a context, say) is GK_E_INVALID_ARGUMENT.
 *
 * Besides the statuses listed with each function, a call that allocates returns
 * GK_E_OUT_OF_MEMORY when an allocation fails, with its outputs untouched and the context
 * still usable: gk_rbf_matrix and gk_rbf_matvec take scratch memory, and on a CUDA context so
 * does every operation with a host-wrapped operand (device copies of it).
 *
 * Scalars (alpha, beta, value, gamma, mean, stddev) are passed as double and rounded to the
 * operands' dtype before use, on every backend.
 *
 * "Waits" below says whether a call returns only after the device finished the work. On a CUDA
 * context, calls that do not wait queue work on the context's stream; a kernel fault then
 * surfaces as GK_E_DEVICE at the next call that waits. CPU work is always synchronous.
 * ======================================================================================== */

/* ==========================================================================================
 * Version
 * ======================================================================================== */

/* GK_VERSION_NUMBER of the library actually loaded (major*10000 + minor*100 + patch). */
GK_API uint32_t gk_version_number(void);
/* "major.minor.patch" of the library actually loaded; never NULL. */
GK_API const char *gk_version_string(void);

/* ==========================================================================================
 * Status and errors
 * ======================================================================================== */

typedef enum gk_status {
    GK_OK = 0,
    GK_E_INVALID_ARGUMENT = 1,     /* NULL, bad enum value, bad leading dimension, aliasing */
    GK_E_SHAPE = 2,                /* sizes disagree, or a buffer is too small */
    GK_E_DTYPE = 3,                /* operands of different dtypes */
    GK_E_CONTEXT_MISMATCH = 4,     /* a buffer belongs to another context */
    GK_E_OUT_OF_MEMORY = 5,        /* host or device allocation failed; the context stays usable */
    GK_E_OVERFLOW = 6,             /* a size product or offset + count does not fit in size_t */
    GK_E_BACKEND_UNAVAILABLE = 7,  /* the requested backend cannot be used on this machine */
    GK_E_UNSUPPORTED = 8,          /* the backend does not implement this operation */
    GK_E_DEVICE = 9,               /* the device reported an error (message has its text) */
    GK_E_INTERNAL = 10             /* a bug in libgpukern: please report it */
} gk_status;

/* A constant English name of the status ("GK_E_SHAPE: ..."); never NULL, also for unknown codes. */
GK_API const char *gk_status_string(gk_status s);

/* This thread's last failure in detail, e.g. "gk_gemm: lda (3) is smaller than k (4) for A not
 * transposed"; "" if no call of this thread failed yet. Successful calls do not clear it. The
 * pointer stays valid until this thread's next failing call. */
GK_API const char *gk_last_error(void);

/* ==========================================================================================
 * Backends
 * ======================================================================================== */

typedef enum gk_backend { GK_BACKEND_AUTO = 0, GK_BACKEND_CPU = 1, GK_BACKEND_CUDA = 2 } gk_backend;
typedef enum gk_dtype { GK_FLOAT32 = 1, GK_FLOAT64 = 2 } gk_dtype;
typedef enum gk_transpose { GK_NO_TRANS = 0, GK_TRANS = 1 } gk_transpose;

/* 1 if backend b can be used now, else 0 and gk_last_error() says why (for CUDA: every path
 * tried for the module and the dlerror() or CUDA error text of each attempt). AUTO and CPU are
 * always available. Thread-safe; the CUDA module is looked for once per process. */
GK_API int gk_backend_available(gk_backend b);

/* ==========================================================================================
 * Contexts
 *
 * A context owns one backend instance (on CUDA: a device, a stream, a cuBLAS handle). Use a
 * context from one thread at a time; distinct contexts run concurrently without interference.
 * Environment: GK_BACKEND=cpu|cuda overrides a request for AUTO.
 * ======================================================================================== */

typedef struct gk_context gk_context;

#define GK_FLAG_ALLOW_TF32 1u /* let float32 gemm use TF32 tensor cores (about 1e-3 relative) */

typedef struct gk_context_options {
    uint32_t struct_size; /* sizeof(gk_context_options) as the caller knows it */
    int32_t backend;      /* a gk_backend; default GK_BACKEND_AUTO */
    int32_t device;       /* device ordinal, below gk_device_count(backend); default 0 */
    int32_t cpu_threads;  /* threads for CPU ops, at most 1024; 0 (default) = OpenMP's default */
    uint32_t flags;       /* GK_FLAG_*; default 0 */
} gk_context_options;

/* Fills *o with the defaults and sets o->struct_size. NULL is ignored. */
GK_API void gk_context_options_init(gk_context_options *o);

/* Creates a context on backend b (AUTO: CUDA when available, else CPU, unless GK_BACKEND says
 * otherwise). Same as gk_context_create_ex with default options and that backend.
 * Returns GK_OK, GK_E_INVALID_ARGUMENT (out NULL, b unknown, an environment switch with an
 * unknown value: GK_BACKEND, GK_LOG, GK_RBF_ISA; on an AUTO context with a GPU also
 * GK_CALIBRATION other than off, empty or an absolute path),
 * GK_E_BACKEND_UNAVAILABLE (CUDA asked for but not usable; gk_last_error() says why),
 * GK_E_OUT_OF_MEMORY, GK_E_DEVICE. */
GK_API gk_status gk_context_create(gk_backend b, gk_context **out);

/* Creates a context from options. A struct_size smaller than this library's (an older caller)
 * gets defaults for the missing fields; a larger one is GK_E_INVALID_ARGUMENT, as are a
 * struct_size below that of the first two fields or ending inside a field (the sizes of
 * every version are 8, 12, 16 and 20), a negative device, a cpu_threads below 0 or
 * above 1024, a device ordinal at or past gk_device_count() of the backend chosen (the CPU has
 * device 0 only; AUTO falling back to the CPU ignores the ordinal), and unknown flags. Other
 * statuses as gk_context_create. */
GK_API gk_status gk_context_create_ex(const gk_context_options *o, gk_context **out);

/* Drops the caller's reference; the context goes when its last buffer does. Waits. NULL ok. */
GK_API void gk_context_destroy(gk_context *ctx);

/* GK_BACKEND_CPU or GK_BACKEND_CUDA: what the context runs on (what AUTO chose); 0 for NULL. */
GK_API gk_backend gk_context_backend(const gk_context *ctx);

/* The backend that ran the context's last operation (GK_BACKEND_AUTO before any). */
GK_API gk_backend gk_context_last_backend(const gk_context *ctx);

/* A human-readable device name that says which device: "NVIDIA H200 (CUDA device 0)",
 * "CPU (16 threads)"; "" for NULL. */
GK_API const char *gk_context_device_name(const gk_context *ctx);

/* Waits for all queued work of the context. Returns GK_OK, GK_E_INVALID_ARGUMENT, GK_E_DEVICE
 * (a queued kernel failed). */
GK_API gk_status gk_context_synchronize(gk_context *ctx);

/* Since 1.1. Measures the cost model with which an AUTO context on a GPU host places calls
 * whose operands are all host buffers (gk_buffer_wrap_host): host<->device bandwidths, the
 * fixed cost of a device call and of a CPU call, and each backend's rate per kind of work.
 * Takes a few seconds and waits. The result is used at once and saved in a cache file keyed
 * by device and host ($XDG_CACHE_HOME/gpukern/, else ~/.cache/gpukern/), which later AUTO
 * contexts load; without one they use conservative built-in figures. GK_CALIBRATION=off
 * ignores the cache; GK_CALIBRATION=<absolute path> names the file; any other value is
 * GK_E_INVALID_ARGUMENT. The file is written through a temporary file renamed over it, mode
 * 0600; a symbolic link, a file not the user's or one that others may write is neither read nor
 * replaced, and a path longer than the system's limit (PATH_MAX) is not cut short: each of these
 * leaves the built-in figures, and GK_LOG=1 prints why. A context with one backend has
 * nothing to calibrate: GK_OK. flags must be 0. Returns GK_OK, GK_E_INVALID_ARGUMENT,
 * GK_E_OUT_OF_MEMORY, GK_E_DEVICE, GK_E_UNSUPPORTED (a backend lacks an op it measures with:
 * fill, add, exp, gemm, rbf_rows, rbf_matrix, rng_uniform, rng_normal). A cache file of 1.1,
 * which lacks the random-number rates, is not used: calibrate again. */
GK_API gk_status gk_context_calibrate(gk_context *ctx, uint32_t flags);

/* ==========================================================================================
 * Buffers
 *
 * A buffer is `count` elements of one dtype in the memory of its context's backend (device
 * memory on CUDA). A buffer holds a reference to its context and a view to its parent, so
 * handles may be destroyed in any order; memory goes with the last reference.
 * ======================================================================================== */

typedef struct gk_buffer gk_buffer;

/* Allocates count elements (uninitialized). count 0 is valid. Does not wait.
 * Returns GK_OK, GK_E_INVALID_ARGUMENT (ctx/out NULL or not handles, bad dtype),
 * GK_E_OVERFLOW (count * element size wraps), GK_E_OUT_OF_MEMORY, GK_E_DEVICE. */
GK_API gk_status gk_buffer_create(gk_context *ctx, gk_dtype t, size_t count, gk_buffer **out);

/* Wraps caller memory `host` of count elements without copying. The memory must outlive the
 * buffer. On CUDA contexts operations stage such operands to the device and results back
 * before they return (those operations wait). host may be NULL only if count is 0, and must be
 * aligned to the dtype's element size (4 or 8 bytes) unless count is 0.
 * Returns GK_OK, GK_E_INVALID_ARGUMENT (also: host misaligned), GK_E_OVERFLOW,
 * GK_E_OUT_OF_MEMORY. */
GK_API gk_status gk_buffer_wrap_host(gk_context *ctx, gk_dtype t, size_t count, void *host,
                                     gk_buffer **out);

/* A buffer of count elements starting at element offset of parent, sharing its memory.
 * Returns GK_OK, GK_E_INVALID_ARGUMENT, GK_E_SHAPE (past the parent's end), GK_E_OVERFLOW
 * (offset + count wraps), GK_E_OUT_OF_MEMORY. */
GK_API gk_status gk_buffer_view(gk_buffer *parent, size_t offset, size_t count, gk_buffer **out);

/* Drops the handle; views keep their parent's memory alive. NULL ok. */
GK_API void gk_buffer_destroy(gk_buffer *buf);

/* Number of elements; 0 for NULL. */
GK_API size_t gk_buffer_count(const gk_buffer *buf);
/* Element dtype; 0 for NULL. */
GK_API gk_dtype gk_buffer_dtype(const gk_buffer *buf);

/* Copies count elements from host memory src into buf at element offset. Returns after src may
 * be reused. Returns GK_OK, GK_E_INVALID_ARGUMENT (NULL), GK_E_SHAPE (past the end),
 * GK_E_OVERFLOW, GK_E_DEVICE. */
GK_API gk_status gk_buffer_write(gk_buffer *buf, size_t offset, size_t count, const void *src);

/* Copies count elements of buf from element offset into host memory dst. Waits for the queued
 * work of the buffer's context. Statuses as gk_buffer_write. */
GK_API gk_status gk_buffer_read(const gk_buffer *buf, size_t offset, size_t count, void *dst);

/* ==========================================================================================
 * Element-wise operations
 *
 * All operands have the same dtype (else GK_E_DTYPE) and count (else GK_E_SHAPE) and belong to
 * c (else GK_E_CONTEXT_MISMATCH). An output may be exactly an input (the same elements: the same
 * buffer, or a view starting at the same element) or share no memory with it; partial overlap,
 * such as x = p[0:n] and y = p[1:n+1], is GK_E_INVALID_ARGUMENT. NULL handles:
 * GK_E_INVALID_ARGUMENT. Device failures: GK_E_DEVICE. Do not wait (unless an operand is a
 * host-wrapped buffer on a CUDA context). Count 0 is a no-op.
 * add, sub, mul, div, fill, copy and scale give bit-identical results on every backend.
 * ======================================================================================== */

/* x[i] = value */
GK_API gk_status gk_fill(gk_context *c, double value, gk_buffer *x);
/* y[i] = x[i] */
GK_API gk_status gk_copy(gk_context *c, const gk_buffer *x, gk_buffer *y);
/* z[i] = x[i] + y[i] */
GK_API gk_status gk_add(gk_context *c, const gk_buffer *x, const gk_buffer *y, gk_buffer *z);
/* z[i] = x[i] - y[i] */
GK_API gk_status gk_sub(gk_context *c, const gk_buffer *x, const gk_buffer *y, gk_buffer *z);
/* z[i] = x[i] * y[i] */
GK_API gk_status gk_mul(gk_context *c, const gk_buffer *x, const gk_buffer *y, gk_buffer *z);
/* z[i] = x[i] / y[i]   (since 1.2) The IEEE 754 quotient rounded to nearest, as C's x / y in
 * the dtype: x / +-0 is an infinity of the sign of x times y, or NaN where x is 0 or NaN; inf /
 * inf is NaN; subnormal results are kept. A NaN result's sign and payload are unspecified (they
 * differ between CPUs and GPUs); all other bits agree. Statuses as above, and GK_E_UNSUPPORTED
 * on a context whose CUDA module is older than 1.2. */
GK_API gk_status gk_div(gk_context *c, const gk_buffer *x, const gk_buffer *y, gk_buffer *z);
/* y[i] += alpha * x[i]   (within 1 ulp of |alpha x| + |y|) */
GK_API gk_status gk_axpy(gk_context *c, double alpha, const gk_buffer *x, gk_buffer *y);
/* x[i] *= alpha */
GK_API gk_status gk_scale(gk_context *c, double alpha, gk_buffer *x);
/* y[i] = exp(x[i])   (within 2 ulp) */
GK_API gk_status gk_exp(gk_context *c, const gk_buffer *x, gk_buffer *y);

/* ==========================================================================================
 * Reductions: the result (a double) is written to host memory; these calls wait.
 * float32 data is accumulated in double. Statuses as the element-wise operations, plus
 * GK_E_INVALID_ARGUMENT for a NULL result. An empty buffer gives 0.
 * ======================================================================================== */

/* *result = sum_i x[i] */
GK_API gk_status gk_sum(gk_context *c, const gk_buffer *x, double *result);
/* *result = sum_i x[i] * y[i] */
GK_API gk_status gk_dot(gk_context *c, const gk_buffer *x, const gk_buffer *y, double *result);
/* *result = sqrt(sum_i x[i]^2), without overflow or underflow for representable results */
GK_API gk_status gk_nrm2(gk_context *c, const gk_buffer *x, double *result);

/* ==========================================================================================
 * Matrix multiplication
 * ======================================================================================== */

/* Row-major C = alpha * op(A) * op(B) + beta * C with op(A) m x k, op(B) k x n, C m x n.
 * lda, ldb, ldc are the stored row lengths: lda >= (ta ? m : k), ldb >= (tb ? k : n),
 * ldc >= n (else GK_E_INVALID_ARGUMENT). Each buffer must hold the elements it addresses,
 * (rows - 1) * ld + cols (else GK_E_SHAPE); a matrix with a zero dimension addresses nothing.
 * C must not overlap A or B (GK_E_INVALID_ARGUMENT). beta = 0 does not read C; k = 0 scales C
 * by beta; elements of C beyond each row's n are never written. float32 uses TF32 only when the
 * context has GK_FLAG_ALLOW_TF32. Also GK_E_DTYPE, GK_E_CONTEXT_MISMATCH, GK_E_OVERFLOW,
 * GK_E_DEVICE. Does not wait. */
GK_API gk_status gk_gemm(gk_context *c, gk_transpose ta, gk_transpose tb, size_t m, size_t n,
                         size_t k, double alpha, const gk_buffer *a, size_t lda,
                         const gk_buffer *b, size_t ldb, double beta, gk_buffer *cc, size_t ldc);

/* ==========================================================================================
 * Gaussian (RBF) kernels over row-major rows of d features
 *
 * Accuracy, on every backend and whatever the data (offset far from the origin, clustered,
 * standardized): each kernel value within 1e-5 (float32) or 1e-12 (float64) of the exact one,
 * rbf_matvec within that times sum |w|; exactly 1 where x_i = y_j; NaN propagates. Each backend
 * chooses how to compute a call (its planner: docs/forms.md; GK_LOG=1 prints the choice).
 * Outputs must not overlap inputs (GK_E_INVALID_ARGUMENT); buffers too small for the sizes are
 * GK_E_SHAPE; size products that wrap are GK_E_OVERFLOW; also GK_E_DTYPE,
 * GK_E_CONTEXT_MISMATCH, GK_E_OUT_OF_MEMORY (scratch), GK_E_DEVICE. gamma may be any finite or
 * infinite value. Do not wait.
 * ======================================================================================== */

/* k[i] = exp(-gamma * ||a_i - b_i||^2) for i < n; a and b hold n x d, k holds n. */
GK_API gk_status gk_rbf_rows(gk_context *c, size_t n, size_t d, double gamma, const gk_buffer *a,
                             const gk_buffer *b, gk_buffer *k);

/* k[i*n + j] = exp(-gamma * ||x_i - y_j||^2); x holds m x d, y n x d, k m x n. */
GK_API gk_status gk_rbf_matrix(gk_context *c, size_t m, size_t n, size_t d, double gamma,
                               const gk_buffer *x, const gk_buffer *y, gk_buffer *k);

/* out[i] = sum_j exp(-gamma * ||x_i - y_j||^2) * w[j]; x holds m x d, y n x d, w n, out m.
 * Never materializes the m x n matrix: its scratch grows with m + n, not m n. */
GK_API gk_status gk_rbf_matvec(gk_context *c, size_t m, size_t n, size_t d, double gamma,
                               const gk_buffer *x, const gk_buffer *y, const gk_buffer *w,
                               gk_buffer *out);

/* ==========================================================================================
 * Counter-based random numbers (Philox4x32-10)
 *
 * Element i of x depends only on (seed, offset + i): results are identical on every backend,
 * independent of launch geometry and of how a range is split into calls. The stream is part of
 * the API for the whole 1.x series; docs/numerics.md gives the exact mapping from Philox words to
 * values. Statuses: GK_E_INVALID_ARGUMENT (NULL), GK_E_OVERFLOW (offset + count wraps),
 * GK_E_CONTEXT_MISMATCH, GK_E_DEVICE. Do not wait.
 * ======================================================================================== */

/* Uniform values in [0, 1): 24 random bits for float32, 53 for float64; never 1.0. */
GK_API gk_status gk_rng_uniform(gk_context *c, uint64_t seed, uint64_t offset, gk_buffer *x);

/* Normal values mean + stddev * z, z standard normal by Box-Muller. */
GK_API gk_status gk_rng_normal(gk_context *c, uint64_t seed, uint64_t offset, double mean,
                               double stddev, gk_buffer *x);

/* ==========================================================================================
 * Interop (since 1.2): other libraries' device memory and CUDA streams, without copies
 *
 * A program that already holds device arrays (cudaMalloc, PyTorch, CuPy) and a CUDA stream
 * hands them to libgpukern as they are, and hands results on by address. Pointers and streams
 * pass as void * so that this header needs no CUDA types: device_ptr is a CUDA device pointer,
 * cuda_stream a cudaStream_t, both of the context's GPU.
 * ======================================================================================== */

/* Number of usable devices of backend b, the valid gk_context_options.device ordinals being
 * 0 .. count - 1. GK_BACKEND_CUDA: the GPUs the CUDA module sees (CUDA_VISIBLE_DEVICES
 * applies), or 0 with gk_last_error() saying why (no module, no driver, no device).
 * GK_BACKEND_CPU: 1. GK_BACKEND_AUTO: the count of the backend an AUTO context would run on
 * (GK_BACKEND honoured). An unknown b: 0, with gk_last_error() naming it. Thread-safe. */
GK_API int gk_device_count(gk_backend b);

/* Wraps count elements of dtype t at device_ptr, memory of the context's GPU that the caller
 * allocated (cudaMalloc, cudaMallocAsync, cudaMallocManaged, a framework's allocator),
 * without copying. The library never frees it: it must stay allocated while any handle on it
 * (the buffer or a view of it) lives and until the work queued on it has completed. Views,
 * lifetimes and the overlap rules are those of gk_buffer_create's buffers, and operations on
 * it do not wait either. device_ptr must be aligned to the element size; it may be NULL only
 * if count is 0, and with count 0 it is not examined. cudaPointerGetAttributes must report
 * the first and the last byte of the range as memory of the context's device (or managed
 * memory): host memory, pinned or not (wrap it with gk_buffer_wrap_host), unregistered
 * pointers, a range running past its allocation into unmapped addresses and another GPU's
 * memory are GK_E_INVALID_ARGUMENT, with a message naming the pointer, what it points to and
 * the devices. Does not wait.
 * Returns GK_OK, GK_E_INVALID_ARGUMENT (also ctx or out NULL or not handles, a bad dtype, a
 * misaligned or NULL pointer), GK_E_OVERFLOW (count * element size wraps), GK_E_UNSUPPORTED
 * (a CPU context, which has no device memory; a CUDA module older than 1.2),
 * GK_E_OUT_OF_MEMORY (the handle). */
GK_API gk_status gk_buffer_wrap_device(gk_context *ctx, gk_dtype t, size_t count,
                                       void *device_ptr, gk_buffer **out);

/* Where the buffer's element 0 is, the view's offset applied, for handing data to other
 * libraries: a device pointer for the device buffers of a CUDA context (created or wrapped
 * with gk_buffer_wrap_device), a host pointer for the buffers of a CPU context and for
 * gk_buffer_wrap_host buffers on any context. NULL for a buffer of no elements, for NULL and
 * for a handle that is not a live buffer. The address is valid while any handle on the memory
 * lives. Does not wait: on CUDA, work queued on the buffer may still be running; order other
 * work after it on gk_context_stream() or call gk_context_synchronize() first. */
GK_API void *gk_buffer_data(const gk_buffer *buf);

/* Makes a CUDA context queue all its later device work on cuda_stream (a cudaStream_t of the
 * context's GPU, cudaStreamLegacy and cudaStreamPerThread included): operations, cuBLAS calls,
 * the copies of gk_buffer_write and gk_buffer_read, the staging of host-wrapped operands and
 * stream-ordered allocations and frees. NULL returns the context to its own stream (it does
 * not mean the legacy default stream). Ordering, as for cublasSetStream:
 * - work the context queued before the switch comes before work it queues after: the new
 *   stream waits on the device for an event recorded on the old one; the call does not wait;
 * - work the caller queues on the same stream is ordered with the context's by the stream
 *   alone: a kernel queued before a gk_ call sees memory as that kernel left it, one queued
 *   after sees the call's results, with no synchronization;
 * - work on other streams is not ordered with the context's: use events or
 *   gk_context_synchronize(). A buffer destroyed is freed in order on the context's current
 *   stream, so memory the caller still uses on another stream must be waited for first;
 * - calls that wait (gk_buffer_read, reductions, gk_context_synchronize, operations with
 *   host-wrapped operands, gk_buffer_write of more than 1 MiB) wait for the whole stream,
 *   the caller's work queued on it included (a reduction returns once its result is in host
 *   memory: everything queued before it has finished and its kernel has read its inputs,
 *   though that kernel may take a few microseconds more to retire).
 * The stream must stay valid until the context is switched to another stream or destroyed:
 * gk_context_destroy waits for it and returns the context to its own stream, on which buffers
 * that outlive the handle are read, written and freed.
 * Returns GK_OK, GK_E_INVALID_ARGUMENT (ctx NULL or not a context; a stream of another
 * device), GK_E_UNSUPPORTED (a CPU context; a CUDA module older than 1.2), GK_E_DEVICE (not a
 * usable stream: the runtime's message). */
GK_API gk_status gk_context_set_stream(gk_context *ctx, void *cuda_stream);

/* The cudaStream_t a CUDA context queues its work on now: the one set with
 * gk_context_set_stream, else its own (valid while the context lives). NULL for a CPU context,
 * and for NULL or a handle that is not a context. Does not wait. */
GK_API void *gk_context_stream(const gk_context *ctx);

/* ==========================================================================================
 * Since 1.3: the kernel family, distances and k nearest neighbours
 *
 * All take row-major x (m×d) and y (n×d) of one dtype; d may be 0. The same checks as the RBF
 * calls apply (sizes, overflow, aliasing of the output with an input). Accuracy, per entry, in
 * float32 (float64: 1e-12 in place of 1e-5):
 * - bounded kernels (rbf, laplacian, sigmoid, cosine, Matérn): abs err ≤ 1e-5, and 1 exactly
 *   where x_i = y_j for rbf, laplacian and Matérn;
 * - linear and polynomial: ≤ 1e-5 times the same kernel evaluated on |x| and |y|;
 * - distances: ≤ 1e-5 times the true distance (so 0 exactly on identical rows, also on data
 *   offset by 1e3); cosine distance: abs ≤ 1e-6;
 * - gk_kernel_matmul: ≤ 1e-5 · Σ_j |K̃_ij| |w_jc|, K̃_ij the entry's bound above;
 * - gk_knn: every distance within the distance contract; an index whose true distance is within
 *   it of the true k-th nearest is as good as any other.
 * ======================================================================================== */

/* A gk_dtype for index outputs (int64_t): buffers of it can be created, wrapped, viewed, read,
 * written, copied and destroyed; every other operation refuses it (GK_E_INVALID_ARGUMENT). */
#define GK_INT64 3

typedef enum gk_kernel_kind {
    GK_KERNEL_RBF = 1,        /* exp(-gamma |x-y|^2) */
    GK_KERNEL_LAPLACIAN = 2,  /* exp(-gamma |x-y|_1) */
    GK_KERNEL_POLYNOMIAL = 3, /* (gamma <x,y> + coef0)^degree, degree an integer 0..32 */
    GK_KERNEL_SIGMOID = 4,    /* tanh(gamma <x,y> + coef0) */
    GK_KERNEL_LINEAR = 5,     /* <x,y> */
    GK_KERNEL_COSINE = 6,     /* <x,y> / (|x| |y|); 0 where either norm is 0 */
    GK_KERNEL_MATERN = 7      /* r = sqrt(gamma) |x-y| (gamma = 1/length_scale^2); nu 0.5: exp(-r);
                                 1.5: (1 + sqrt3 r) exp(-sqrt3 r);
                                 2.5: (1 + sqrt5 r + 5r^2/3) exp(-sqrt5 r) */
} gk_kernel_kind;

/* A kernel and its parameters; fields a kind does not use are ignored. */
typedef struct gk_kernel {
    uint32_t struct_size; /* sizeof(gk_kernel), set by gk_kernel_init */
    int32_t kind;         /* a gk_kernel_kind */
    double gamma, coef0, degree, nu;
} gk_kernel;

/* Sets *k to kind with gamma 1, coef0 1, degree 3 and nu 1.5. Does nothing given NULL. */
GK_API void gk_kernel_init(gk_kernel *k, gk_kernel_kind kind);

typedef enum gk_metric {
    GK_METRIC_SQEUCLIDEAN = 1,
    GK_METRIC_EUCLIDEAN = 2,
    GK_METRIC_MANHATTAN = 3,
    GK_METRIC_COSINE = 4 /* 1 - cosine similarity; 1 where either norm is 0 */
} gk_metric;

/* out[i*n + j] = k(x_i, y_j); out m×n. GK_E_INVALID_ARGUMENT: a NULL or uninitialized k, an
 * unknown kind, a gamma, coef0 or nu the kind cannot use (NaN or inf gamma; degree outside
 * 0..32 or not an integer; nu outside {0.5, 1.5, 2.5}). */
GK_API gk_status gk_kernel_matrix(gk_context *ctx, const gk_kernel *k, size_t m, size_t n,
                                  size_t d, const gk_buffer *x, const gk_buffer *y,
                                  gk_buffer *out);

/* out = K(x, y) · w, w n×r and out m×r row-major, without ever holding the m×n matrix. */
GK_API gk_status gk_kernel_matmul(gk_context *ctx, const gk_kernel *k, size_t m, size_t n,
                                  size_t d, size_t r, const gk_buffer *x, const gk_buffer *y,
                                  const gk_buffer *w, gk_buffer *out);

/* out[i*n + j] = metric(x_i, y_j); out m×n. */
GK_API gk_status gk_distance_matrix(gk_context *ctx, gk_metric metric, size_t m, size_t n,
                                    size_t d, const gk_buffer *x, const gk_buffer *y,
                                    gk_buffer *out);

/* For each row of x its k nearest rows of y (1 ≤ k ≤ n), nearest first, equal distances by the
 * smaller index: dist m×k (x's dtype), index m×k (GK_INT64). Memory beyond the outputs is
 * bounded by tiles, not by m×n. */
GK_API gk_status gk_knn(gk_context *ctx, gk_metric metric, size_t m, size_t n, size_t d, size_t k,
                        const gk_buffer *x, const gk_buffer *y, gk_buffer *dist,
                        gk_buffer *index);

#ifdef __cplusplus
}
#endif

#endif /* GPUKERN_H */
