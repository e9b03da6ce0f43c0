# SPDX-License-Identifier: MIT
"""Typical use of the public API, for mypy --strict (test_typing.py): it must type-check as it
is, with the stubs giving ndarray results for ndarray operands and Arrays for Arrays."""

import numpy as np
import numpy.typing as npt

import gpukern


def kernel_ridge_predict(x: npt.NDArray[np.float32], centers: npt.NDArray[np.float32],
                         weights: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    with gpukern.Context("cpu", cpu_threads=2) as ctx:
        k = ctx.rbf_matrix(x, centers, gamma="scale")
        out = np.empty(x.shape[0], np.float32)
        ctx.rbf_matvec(x, centers, weights, gamma=0.5, out=out)
        a: gpukern.Array = ctx.asarray(x)
        b: gpukern.Array = (a * 2.0 + a) ** 2 / a.sum()
        s: npt.NDArray[np.float32] = ctx.exp(x)
        total: float = ctx.sum(b) + ctx.dot(a, a) + float(np.asarray(k).sum())
        m = a.mean(axis=0, keepdims=True)
        ctx.axpy(total, s, out)
        z: gpukern.Array = ctx.zeros((3, 4), np.float64) @ ctx.ones((4, 2), np.float64).T.T
        print(m, z.shape, a.device, gpukern.available_backends(), gpukern.device_count("cuda"))
        try:
            ctx.rbf_matrix(x, gamma=-1.0)
        except gpukern.InvalidParameterError as e:
            print(e)
        except gpukern.GpukernError as e:
            print(e.status is gpukern.Status.SHAPE)
        return out


def neighbours_and_kernels(x: npt.NDArray[np.float64], w: npt.NDArray[np.float64]) -> float:
    dist, index = gpukern.kneighbors(x, x, 3)
    first: npt.NDArray[np.int64] = index[:, 0]
    k: npt.NDArray[np.float64] = gpukern.pairwise_kernels(x, metric="polynomial", degree=2, coef0=0.5)
    with gpukern.Context("cpu") as ctx:
        a = ctx.asarray(x)
        d: gpukern.Array = ctx.pairwise_distances(a, metric="cityblock")
        kw: gpukern.Array = ctx.kernel_matmul(a, None, ctx.asarray(w), metric="matern", nu=2.5)
        m: npt.NDArray[np.float64] = ctx.kernel_matmul(x, x, w, gamma=0.5)
        return float(dist.sum() + first.sum() + k.sum() + d.sum() + kw.sum() + m.sum())
