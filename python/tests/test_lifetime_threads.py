# SPDX-License-Identifier: MIT
"""Lifetimes of Contexts and Arrays under garbage collection, and use from several threads."""

import gc
import os
import threading

import numpy as np
import pytest

import gpukern


def test_arrays_outlive_their_context_object():
    ctx = gpukern.Context("cpu")
    a = ctx.add(ctx.asarray(np.arange(4.0)), ctx.asarray(np.ones(4)))
    del ctx
    gc.collect()
    np.testing.assert_array_equal(a.get(), [1, 2, 3, 4])
    # The Array still belongs to its (now unreferenced elsewhere) context and can be used with it.
    np.testing.assert_array_equal(a.context.add(a, a).get(), [2, 4, 6, 8])


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_many_temporaries_are_freed():
    with gpukern.Context("cpu") as ctx:
        x = ctx.asarray(np.ones(1 << 20, np.float32))  # 4 MiB per result, written, so resident
        ctx.add(x, x)
        before = _rss_bytes()
        for _ in range(200):
            ctx.add(x, x)
        assert _rss_bytes() - before < 100 << 20  # 800 MiB if every result leaked


def test_reference_cycles_through_arrays_are_collected():
    class Holder:
        pass

    ctx = gpukern.Context("cpu")
    h = Holder()
    h.self = h
    h.array = ctx.asarray(np.ones(8))
    h.ctx = ctx
    del h, ctx
    assert gc.collect() >= 1


def test_an_array_dying_while_another_thread_holds_the_context_is_freed_later():
    ctx = gpukern.Context("cpu")
    a = ctx.asarray(np.ones(3))
    held, release = threading.Event(), threading.Event()

    def hold():
        with ctx._lock:
            held.set()
            release.wait()

    t = threading.Thread(target=hold)
    t.start()
    held.wait()
    del a  # must not wait for the lock: the buffer is queued instead
    assert len(ctx._pending) == 1
    release.set()
    t.join()
    ctx.asarray(np.ones(3))  # the next allocation frees it
    assert not ctx._pending
    ctx.close()


def _worker(backend, seed, errors, results):
    try:
        rng = np.random.default_rng(seed)
        with gpukern.Context(backend) as ctx:
            for _ in range(30):
                x = rng.uniform(-1, 1, 5000).astype(np.float32)
                y = rng.uniform(-1, 1, 5000).astype(np.float32)
                np.testing.assert_array_equal(ctx.add(x, y), x + y)
                a = ctx.asarray(x.reshape(50, 100))
                got = ctx.matmul(a, ctx.asarray(y.reshape(100, 50))).get()
                np.testing.assert_allclose(got, x.reshape(50, 100).astype(np.float64) @ y.reshape(100, 50),
                                           rtol=1e-4, atol=1e-4)
                # Each thread reads its own last error, whatever the others do meanwhile.
                with pytest.raises(gpukern.GpukernError) as e:
                    ctx.uniform(10, seed, offset=2**64 - 1)
                assert e.value.status == gpukern.Status.OVERFLOW
        results.append(seed)
    except BaseException as e:  # reported by the main thread
        errors.append(e)


def test_threads_with_their_own_contexts(backend):
    errors, results = [], []
    threads = [threading.Thread(target=_worker, args=(backend, s, errors, results)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert sorted(results) == [0, 1, 2, 3]


def test_threads_sharing_one_context(backend):
    errors = []
    with gpukern.Context(backend) as ctx:
        base = np.arange(10000, dtype=np.float64)

        def work(k):
            try:
                a = ctx.asarray(base)
                for i in range(200):
                    r = ctx.axpy(float(k), a, ctx.asarray(base, copy=True))
                    if i % 50 == 0:
                        np.testing.assert_array_equal(r.get(), base * (1 + k))
                        gc.collect()  # free other threads' Arrays while they hold the lock
            except BaseException as e:
                errors.append(e)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors


def test_available_backends_from_threads():
    out = []
    threads = [threading.Thread(target=lambda: out.append(gpukern.available_backends())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 8 and all(o == out[0] for o in out) and "cpu" in out[0]
