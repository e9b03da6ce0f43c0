/* SPDX-License-Identifier: MIT */
/* status_list.h - the one list of statuses; X-macro expanded wherever names or texts are needed. */
#ifndef GK_STATUS_LIST_H
#define GK_STATUS_LIST_H

/* X(enum name, text) in the order of their values in gpukern.h. */
#define GK_STATUS_LIST(X)                                                                        \
    X(GK_OK, "success")                                                                          \
    X(GK_E_INVALID_ARGUMENT, "invalid argument")                                                 \
    X(GK_E_SHAPE, "sizes do not match or a buffer is too small")                                 \
    X(GK_E_DTYPE, "operands have different dtypes")                                              \
    X(GK_E_CONTEXT_MISMATCH, "a buffer belongs to another context")                              \
    X(GK_E_OUT_OF_MEMORY, "out of memory")                                                       \
    X(GK_E_OVERFLOW, "a size does not fit in size_t")                                            \
    X(GK_E_BACKEND_UNAVAILABLE, "backend unavailable")                                           \
    X(GK_E_UNSUPPORTED, "operation not supported by the backend")                                \
    X(GK_E_DEVICE, "device error")                                                               \
    X(GK_E_INTERNAL, "internal error")

#endif /* GK_STATUS_LIST_H */
