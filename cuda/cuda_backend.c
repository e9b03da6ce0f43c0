/* SPDX-License-Identifier: MIT */
/* cuda_backend.c - the module's one exported symbol, handing the core the CUDA backend table. */
#include "cuda_slots.h"

/* C, for the designated initializers: each slot is filled by name, so reordering backend.h
 * cannot silently swap ops of the same type (add, sub, mul). */
static const gk_backend_ops gk_cuda_ops = {
    .abi_version = GK_BACKEND_ABI_VERSION,
    .struct_size = sizeof(gk_backend_ops),
    .kind = GK_BACKEND_CUDA,
    .name = "cuda",
    .device_count = gk__cuda_device_count,
    .context_create = gk__cuda_context_create,
    .context_destroy = gk__cuda_context_destroy,
    .device_name = gk__cuda_device_name,
    .synchronize = gk__cuda_synchronize,
    .mem_alloc = gk__cuda_mem_alloc,
    .mem_free = gk__cuda_mem_free,
    .mem_write = gk__cuda_mem_write,
    .mem_read = gk__cuda_mem_read,
    .fill = gk__cuda_fill,
    .copy = gk__cuda_copy,
    .add = gk__cuda_add,
    .sub = gk__cuda_sub,
    .mul = gk__cuda_mul,
    .axpy = gk__cuda_axpy,
    .scale = gk__cuda_scale,
    .exp = gk__cuda_exp,
    .sum = gk__cuda_sum,
    .dot = gk__cuda_dot,
    .nrm2 = gk__cuda_nrm2,
    .gemm = gk__cuda_gemm,
    .rbf_rows = gk__cuda_rbf_rows,
    .rbf_matrix = gk__cuda_rbf_matrix,
    .rbf_matvec = gk__cuda_rbf_matvec,
    .rng_uniform = gk__cuda_rng_uniform,
    .rng_normal = gk__cuda_rng_normal,
    .mem_check_device = gk__cuda_mem_check_device,
    .set_stream = gk__cuda_set_stream,
    .stream = gk__cuda_stream,
    .div = gk__cuda_div,
    .kernel_matrix = gk__cuda_kernel_matrix,
    .kernel_matmul = gk__cuda_kernel_matmul,
    .distance_matrix = gk__cuda_distance_matrix,
    .knn = gk__cuda_knn,
};

__attribute__((visibility("default"))) gk_status
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
_Static_assert(__builtin_types_compatible_p(__typeof__(&gk_module_entry), gk_module_entry_fn),
               "gk_module_entry does not match gk_module_entry_fn");
