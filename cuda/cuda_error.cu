/* SPDX-License-Identifier: MIT */
/* cuda_error.cu - turns CUDA and cuBLAS failures into gk_status values and core error messages. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "cuda_internal.h"

/* Set once by the entry point (under the core's pthread_once) before any other call. */
static const gk_host_services *gk_cuda_svc;

void gk__cuda_set_services(const gk_host_services *svc)
{
    gk_cuda_svc = svc;
}

#ifdef GK_FAULT_INJECTION
int gk__cuda_fault(void)
{
    const gk_host_services *s = gk_cuda_svc;
    return s != NULL &&
           s->struct_size >= offsetof(gk_host_services, fault_next) + sizeof s->fault_next &&
           s->fault_next != NULL && s->fault_next();
}
#endif

int gk__cuda_log_enabled(void)
{
    return gk_cuda_svc != NULL && gk_cuda_svc->log_enabled;
}

void gk__cuda_log(const char *fmt, ...)
{
    const gk_host_services *s = gk_cuda_svc;
    if (s == NULL || s->struct_size < offsetof(gk_host_services, log) + sizeof s->log ||
        s->log == NULL)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    s->log("%s", msg);
}

gk_status gk__cuda_error(gk_status status, const char *fmt, ...)
{
    /* The core's error() is variadic without a va_list twin, so format here and pass the
     * finished text through "%s". */
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (gk_cuda_svc != NULL && gk_cuda_svc->error != NULL)
        return gk_cuda_svc->error(status, "%s", msg);
    return status;
}

gk_status gk__cuda_check(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return GK_OK;
    /* Non-sticky errors (out of memory, bad launch configuration) stay in the runtime's
     * last-error slot; clear it so the next launch check reports only its own launch. */
    (void)cudaGetLastError();
    gk_status s = e == cudaErrorMemoryAllocation ? GK_E_OUT_OF_MEMORY : GK_E_DEVICE;
    return gk__cuda_error(s, "%s: %s: %s", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

gk_status gk__cublas_check(cublasStatus_t s, const char *what)
{
    if (s == CUBLAS_STATUS_SUCCESS)
        return GK_OK;
    (void)cudaGetLastError();
    gk_status st = s == CUBLAS_STATUS_ALLOC_FAILED ? GK_E_OUT_OF_MEMORY : GK_E_DEVICE;
    return gk__cuda_error(st, "%s failed: %s: %s", what, cublasGetStatusName(s),
                          cublasGetStatusString(s));
}

gk_status gk__cuda_bad_dtype(gk_dtype t)
{
    return gk__cuda_error(GK_E_INTERNAL, "unknown dtype %d reached the CUDA backend", (int)t);
}

gk_status gk__cuda_launched(const char *kernel)
{
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        return GK_OK;
    char what[128];
    snprintf(what, sizeof what, "launch of %s", kernel);
    return gk__cuda_check(e, what);
}

gk_status gk__cuda_enter(gk_cuda_state *st)
{
    /* cudaGetDevice only reads a thread-local, so the common case costs no driver call. */
    int cur = -1;
    cudaError_t e = cudaGetDevice(&cur);
    if (e == cudaSuccess && cur == st->device)
        return GK_OK;
    if (e != cudaSuccess)
        (void)cudaGetLastError();
    return gk__cuda_check(cudaSetDevice(st->device), "cudaSetDevice");
}
