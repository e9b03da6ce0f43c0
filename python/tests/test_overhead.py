# SPDX-License-Identifier: MIT
"""The Python cost of one small operation on device Arrays (acceptance: <= 10 us per call)."""

import timeit

import numpy as np

import gpukern


def test_add_overhead_on_small_arrays(backend):
    with gpukern.Context(backend) as ctx:
        x = ctx.asarray(np.ones(1000, np.float32))
        y = ctx.asarray(np.ones(1000, np.float32))
        add = ctx.add
        add(x, y)
        calls = 200
        # The best of many short runs: the cost of the code path, not of whatever else a shared
        # machine happens to be doing (one quiet millisecond suffices).
        best = min(timeit.repeat(lambda: add(x, y), number=calls, repeat=50)) / calls
        print("ctx.add on two 1000-element Arrays (%s): %.2f us per call" % (backend, best * 1e6))
        assert best <= 10e-6
