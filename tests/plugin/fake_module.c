/* SPDX-License-Identifier: MIT */
/* fake_module.c - a stand-in CUDA module for test_plugin: it loads, then refuses to start. */
#include "backend.h"

/* The message says the loader reached this file: test_plugin looks for it in the attempts. */
__attribute__((visibility("default"))) gk_status
gk_module_entry(uint32_t abi_version, const gk_host_services *svc, const gk_backend_ops **ops);

gk_status gk_module_entry(uint32_t abi_version, const gk_host_services *svc,
                          const gk_backend_ops **ops)
{
    (void)abi_version;
    (void)ops;
    return svc->error(GK_E_DEVICE, "fake module entered");
}
