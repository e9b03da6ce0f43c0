/* SPDX-License-Identifier: MIT */
/* gpukern._fast: one small element-wise op on ndarrays (wrap the operands, the op, destroy the
 * wrappers) or on Arrays (create the result, the op; with a scalar, create, fill or copy, the
 * op) in one call from Python, in place of two to seven ctypes calls (issue 36: ctypes spends some
 * 0.4 us on each; these run in C in about 0.2 us together).
 *
 * The library's functions come as addresses from the ctypes handle the package already holds
 * (init), so this module links nothing but Python and works with whichever libgpukern the
 * package loaded. The caller has checked the operands (plain, aligned, C-contiguous ndarrays
 * of one float dtype and size) and holds the context's lock. Optional: without it the package
 * makes the same calls through ctypes. Stable ABI (3.11), one build for every later Python. */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>

typedef int (*wrap_fn)(void *ctx, int dtype, size_t count, void *data, void **buf);
typedef void (*destroy_fn)(void *buf);
typedef int (*create_fn)(void *ctx, int dtype, size_t count, void **buf);
typedef int (*unary_fn)(void *ctx, const void *x, void *out);
typedef int (*binary_fn)(void *ctx, const void *x, const void *y, void *out);
typedef int (*fill_fn)(void *ctx, double value, void *x);
typedef int (*scale_fn)(void *ctx, double alpha, void *x);

static wrap_fn wrap_host;
static destroy_fn destroy;
static create_fn create;

/* Operands past this many bytes run without the GIL, as ctypes runs every call: other threads
 * go on meanwhile. Below it, releasing and taking the GIL back costs more than the op. */
#define RELEASE_GIL_BYTES (1 << 16)

/* An address from Python (an int), as an integer: function pointers are made from it by a
 * cast from the integer, which C allows, not from a void pointer, which it does not. 0 with an
 * exception set for a bad or NULL one. */
static uintptr_t address(PyObject *o)
{
    const unsigned long long a = PyLong_AsUnsignedLongLong(o);
    if (PyErr_Occurred())
        return 0;
    if (a == 0)
        PyErr_SetString(PyExc_ValueError, "gpukern._fast: a NULL address");
    return (uintptr_t)a;
}

static PyObject *init(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "gpukern._fast.init takes 3 addresses, not %zd arguments",
                     nargs);
        return NULL;
    }
    const uintptr_t w = address(args[0]), d = address(args[1]), c = address(args[2]);
    if (w == 0 || d == 0 || c == 0)
        return NULL;
    wrap_host = (wrap_fn)w;
    destroy = (destroy_fn)d;
    create = (create_fn)c;
    Py_RETURN_NONE;
}

/* call(ctx, fn, dtype, itemsize, x[, y], out) -> gk_status, for fn(ctx, x[, y], out). */
static PyObject *call(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 6 && nargs != 7) {
        PyErr_Format(PyExc_TypeError, "gpukern._fast.call takes 6 or 7 arguments, not %zd", nargs);
        return NULL;
    }
    if (wrap_host == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "gpukern._fast.init was not called");
        return NULL;
    }
    const int binary = nargs == 7;
    const uintptr_t c = address(args[0]), fn = address(args[1]);
    if (c == 0 || fn == 0)
        return NULL;
    void *ctx = (void *)c;
    const long dtype = PyLong_AsLong(args[2]), itemsize = PyLong_AsLong(args[3]);
    if (PyErr_Occurred())
        return NULL;
    if (itemsize != 4 && itemsize != 8) {
        PyErr_Format(PyExc_ValueError, "gpukern._fast.call: itemsize %ld is neither 4 nor 8",
                     itemsize);
        return NULL;
    }
    Py_buffer in[2], out;
    const int inputs = binary ? 2 : 1;
    int got = 0;
    for (; got < inputs; got++)
        if (PyObject_GetBuffer(args[4 + got], &in[got], PyBUF_SIMPLE) != 0)
            goto release_inputs;
    if (PyObject_GetBuffer(args[4 + inputs], &out, PyBUF_WRITABLE) != 0)
        goto release_inputs;
    for (int i = 0; i < inputs; i++)
        if (in[i].len != out.len) {
            PyErr_Format(PyExc_ValueError, "gpukern._fast.call: operand %d has %zd bytes, out %zd",
                         i, in[i].len, out.len);
            PyBuffer_Release(&out);
            goto release_inputs;
        }
    const size_t count = (size_t)out.len / (size_t)itemsize;
    void *h[3] = {NULL, NULL, NULL};
    int status;
    PyThreadState *saved = out.len >= RELEASE_GIL_BYTES ? PyEval_SaveThread() : NULL;
    status = wrap_host(ctx, (int)dtype, count, in[0].buf, &h[0]);
    if (!status && binary)
        status = wrap_host(ctx, (int)dtype, count, in[1].buf, &h[1]);
    if (!status)
        status = wrap_host(ctx, (int)dtype, count, out.buf, &h[2]);
    if (!status)
        status = binary ? ((binary_fn)fn)(ctx, h[0], h[1], h[2]) : ((unary_fn)fn)(ctx, h[0], h[2]);
    for (int i = 0; i < 3; i++)
        destroy(h[i]); /* gk_buffer_destroy(NULL) does nothing */
    if (saved != NULL)
        PyEval_RestoreThread(saved);
    PyBuffer_Release(&out);
    for (int i = 0; i < inputs; i++)
        PyBuffer_Release(&in[i]);
    return PyLong_FromLong(status);

release_inputs:
    for (int i = 0; i < got; i++)
        PyBuffer_Release(&in[i]);
    return NULL;
}

/* new(ctx, fn, dtype, count, x[, y]) -> the handle of a new buffer of count elements that
 * fn(ctx, x[, y], out) has written (x, y: buffer handles), or -status where a call failed (the
 * buffer then destroyed): one call for an op on Arrays that returns a new Array. */
static PyObject *new_result(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 5 && nargs != 6) {
        PyErr_Format(PyExc_TypeError, "gpukern._fast.new takes 5 or 6 arguments, not %zd", nargs);
        return NULL;
    }
    if (create == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "gpukern._fast.init was not called");
        return NULL;
    }
    uintptr_t a[4] = {0, 0, 0, 0}; /* ctx, fn, x, y */
    static const int arg[4] = {0, 1, 4, 5};
    for (int i = 0; i < (nargs == 6 ? 4 : 3); i++)
        if ((a[i] = address(args[arg[i]])) == 0)
            return NULL;
    const long dtype = PyLong_AsLong(args[2]);
    const size_t count = PyLong_AsSize_t(args[3]);
    if (PyErr_Occurred())
        return NULL;
    void *ctx = (void *)a[0], *out = NULL;
    int status = create(ctx, (int)dtype, count, &out);
    if (!status)
        status = nargs == 6 ? ((binary_fn)a[1])(ctx, (void *)a[2], (void *)a[3], out)
                            : ((unary_fn)a[1])(ctx, (void *)a[2], out);
    if (status) {
        destroy(out);
        return PyLong_FromLong(-(long)status);
    }
    return PyLong_FromVoidPtr(out);
}

/* scalar(ctx, first, second, dtype, count, x, s, mode) -> a new buffer's handle, or -status
 * (the buffer then destroyed): an Array (op) a Python scalar in one call. mode 0: z = x by
 * first (gk_copy), then z *= s by second (gk_scale); mode 1: z = s by first (gk_fill), then
 * z = second(x, z); mode 2: z = s, then z = second(z, x) (the scalar on the left). */
static PyObject *scalar(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 8) {
        PyErr_Format(PyExc_TypeError, "gpukern._fast.scalar takes 8 arguments, not %zd", nargs);
        return NULL;
    }
    if (create == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "gpukern._fast.init was not called");
        return NULL;
    }
    uintptr_t a[4]; /* ctx, first, second, x */
    static const int arg[4] = {0, 1, 2, 5};
    for (int i = 0; i < 4; i++)
        if ((a[i] = address(args[arg[i]])) == 0)
            return NULL;
    const long dtype = PyLong_AsLong(args[3]), mode = PyLong_AsLong(args[7]);
    const size_t count = PyLong_AsSize_t(args[4]);
    const double value = PyFloat_AsDouble(args[6]);
    if (PyErr_Occurred())
        return NULL;
    if (mode < 0 || mode > 2) {
        PyErr_Format(PyExc_ValueError, "gpukern._fast.scalar: mode %ld is not 0, 1 or 2", mode);
        return NULL;
    }
    void *ctx = (void *)a[0], *x = (void *)a[3], *z = NULL;
    int status = create(ctx, (int)dtype, count, &z);
    if (!status && mode == 0) {
        status = ((unary_fn)a[1])(ctx, x, z); /* gk_copy's signature is a unary op's */
        if (!status)
            status = ((scale_fn)a[2])(ctx, value, z);
    } else if (!status) {
        status = ((fill_fn)a[1])(ctx, value, z);
        if (!status)
            status = mode == 1 ? ((binary_fn)a[2])(ctx, x, z, z) : ((binary_fn)a[2])(ctx, z, x, z);
    }
    if (status) {
        destroy(z);
        return PyLong_FromLong(-(long)status);
    }
    return PyLong_FromVoidPtr(z);
}

static PyMethodDef methods[] = {
    {"init", (PyCFunction)(void (*)(void))init, METH_FASTCALL,
     "init(gk_buffer_wrap_host, gk_buffer_destroy, gk_buffer_create addresses)"},
    {"call", (PyCFunction)(void (*)(void))call, METH_FASTCALL,
     "call(ctx, fn, dtype, itemsize, x[, y], out) -> gk_status: wraps, runs fn, destroys"},
    {"new", (PyCFunction)(void (*)(void))new_result, METH_FASTCALL,
     "new(ctx, fn, dtype, count, x[, y]) -> a new buffer's handle written by fn, or -gk_status"},
    {"scalar", (PyCFunction)(void (*)(void))scalar, METH_FASTCALL,
     "scalar(ctx, first, second, dtype, count, x, s, mode) -> a new buffer's handle, or "
     "-gk_status"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "gpukern._fast",
    "One small op on ndarrays in one C call (see _fast.c); optional.",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__fast(void)
{
    return PyModule_Create(&module);
}
