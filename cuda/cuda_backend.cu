/* SPDX-License-Identifier: MIT */
/* cuda_backend.cu - the module's one exported symbol, handing the core the CUDA backend table. */
#include <type_traits>

#include "cuda_internal.h"

/* Positional, in the order of gk_backend_ops in src/backend.h (C++17 has no designated
 * initializers); every slot is filled. */
static const gk_backend_ops gk_cuda_ops = {
    GK_BACKEND_ABI_VERSION,
    (uint32_t)sizeof(gk_backend_ops),
    GK_BACKEND_CUDA,
    "cuda",
    gk__cuda_device_count,
    gk__cuda_context_create,
    gk__cuda_context_destroy,
    gk__cuda_device_name,
    gk__cuda_synchronize,
    gk__cuda_mem_alloc,
    gk__cuda_mem_free,
    gk__cuda_mem_write,
    gk__cuda_mem_read,
    gk__cuda_fill,
    gk__cuda_copy,
    gk__cuda_add,
    gk__cuda_sub,
    gk__cuda_mul,
    gk__cuda_axpy,
    gk__cuda_scale,
    gk__cuda_exp,
    gk__cuda_sum,
    gk__cuda_dot,
    gk__cuda_nrm2,
    gk__cuda_gemm,
    gk__cuda_rbf_rows,
    gk__cuda_rbf_matrix,
    gk__cuda_rbf_matvec,
    gk__cuda_rng_uniform,
    gk__cuda_rng_normal,
    gk__cuda_mem_check_device,
    gk__cuda_set_stream,
    gk__cuda_stream,
};

extern "C" __attribute__((visibility("default"))) gk_status
gk_module_entry(uint32_t abi_version, const gk_host_services *svc, const gk_backend_ops **ops)
{
    if (svc != NULL)
        gk__cuda_set_services(svc);
    if (abi_version != GK_BACKEND_ABI_VERSION)
        return gk__cuda_error(GK_E_UNSUPPORTED,
                              "libgpukern-cuda.so: backend ABI version %u requested, this module "
                              "implements %u",
                              (unsigned)abi_version, (unsigned)GK_BACKEND_ABI_VERSION);
    if (svc == NULL || ops == NULL)
        return gk__cuda_error(GK_E_INVALID_ARGUMENT, "libgpukern-cuda.so: %s is NULL",
                              svc == NULL ? "svc" : "ops");
    *ops = &gk_cuda_ops;
    return GK_OK;
}

/* The core calls the entry through this type after dlsym; a mismatch must not compile. */
static_assert(std::is_same<decltype(&gk_module_entry), gk_module_entry_fn>::value,
              "gk_module_entry does not match gk_module_entry_fn");
