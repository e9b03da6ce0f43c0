# SPDX-License-Identifier: MIT
"""The parameters of the kernel family, distances and k-NN, checked as scikit-learn checks them.

Names, defaults and errors follow scikit-learn's pairwise_kernels, pairwise_distances and
NearestNeighbors.kneighbors: an unknown metric, a negative gamma or a degree out of range raise
InvalidParameterError (a ValueError and a TypeError); k out of range raises ValueError, a
non-integer k TypeError. Each kernel checks only the parameters it uses and ignores the others
(scikit-learn's filter_params=True).
"""

import math
import numbers
import operator
from ctypes import sizeof

import numpy as np

from . import _lib
from ._base import InvalidParameterError

# gk_kernel_kind by scikit-learn's kernel names (and "matern", GPyTorch's Matérn kernel).
KERNELS = {"rbf": 1, "laplacian": 2, "polynomial": 3, "poly": 3, "sigmoid": 4, "linear": 5,
           "cosine": 6, "matern": 7}
# gk_metric by scikit-learn's metric names.
METRICS = {"sqeuclidean": 1, "euclidean": 2, "l2": 2, "manhattan": 3, "l1": 3, "cityblock": 3,
           "cosine": 4}
# Which parameters each kind reads (the others are ignored).
_USES = {1: ("gamma",), 2: ("gamma",), 3: ("gamma", "degree", "coef0"), 4: ("gamma", "coef0"),
         5: (), 6: (), 7: ("gamma", "nu")}
_MAX_DEGREE = 32  # gk_kernel's limit
_NUS = (0.5, 1.5, 2.5)


def _real(value):
    """value as a float if it is a real number (not a bool, not a string), else None."""
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        return float(value)
    return None


def _bad(name, caller, accepted, value):
    return InvalidParameterError("The '%s' parameter of %s must be %s. Got %r instead."
                                 % (name, caller, accepted, value))


def _name(value, table, what, caller):
    if isinstance(value, str) and value in table:
        return table[value]
    hint = " (callables are not supported: the metric runs in C)" if callable(value) else ""
    raise InvalidParameterError("The '%s' parameter of %s must be a str among %s. Got %r instead.%s"
                                % (what, caller, sorted(table), value, hint))


def metric(value, caller):
    """The gk_metric of a scikit-learn metric name."""
    return _name(value, METRICS, "metric", caller)


def kernel(metric_name, gamma, degree, coef0, nu, d, caller):
    """A gk_kernel for scikit-learn's pairwise_kernels(metric=, gamma=, degree=, coef0=) and the
    Matérn kernel's nu, d features (gamma=None is 1 / d, as scikit-learn's)."""
    kind = _name(metric_name, KERNELS, "metric", caller)
    uses = _USES[kind]
    # Filled here rather than by gk_kernel_init, which would write a later library's larger
    # struct over this one; struct_size tells the library which fields this package knows.
    k = _lib.Kernel(struct_size=sizeof(_lib.Kernel), kind=kind, gamma=1.0, coef0=1.0, degree=3.0, nu=1.5)
    if "gamma" in uses:
        k.gamma = _gamma(gamma, d, kind, caller)
    if "coef0" in uses:
        c = _real(coef0)
        if c is None or not math.isfinite(c):
            raise _bad("coef0", caller, "a float in the range (-inf, inf)", coef0)
        k.coef0 = c
    if "degree" in uses:
        g = _real(degree)
        if g is None or not 1 <= g <= _MAX_DEGREE or g != int(g):
            raise _bad("degree", caller, "an integer in the range [1, %d]" % _MAX_DEGREE, degree)
        k.degree = g
    if "nu" in uses:
        v = _real(nu)
        if v not in _NUS:
            raise _bad("nu", caller, "one of 0.5, 1.5 and 2.5 (the Matérn kernels with a closed form)", nu)
        k.nu = v
    return k


def _gamma(gamma, d, kind, caller):
    if gamma is None:
        return 1.0 / d if d else 1.0
    g = _real(gamma)
    # scikit-learn's laplacian_kernel takes gamma > 0, its other kernels gamma >= 0.
    positive = kind == KERNELS["laplacian"]
    if g is None or not (g > 0 if positive else g >= 0) or not math.isfinite(g):
        raise _bad("gamma", caller, "a float in the range %s0.0, inf) or None" % ("(" if positive else "["), gamma)
    return g + 0.0


def n_neighbors(k, n, caller):
    """k as an int in [1, n] (n rows to search), with NearestNeighbors.kneighbors' errors."""
    try:
        if isinstance(k, (bool, np.bool_)):
            raise TypeError
        k = operator.index(k)
    except TypeError:
        raise TypeError("%s: k (n_neighbors) does not take %s value, enter integer value"
                        % (caller, type(k).__name__)) from None
    if k <= 0:
        raise ValueError("%s: expected k (n_neighbors) > 0. Got %d" % (caller, k))
    if k > n:
        raise ValueError("%s: expected k (n_neighbors) <= n_samples_fit, but k = %d, n_samples_fit "
                         "(rows of y) = %d" % (caller, k, n))
    return k
