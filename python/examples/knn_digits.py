# SPDX-License-Identifier: MIT
"""k-NN classification of scikit-learn's handwritten digits with gpukern.kneighbors.

    python knn_digits.py [--k 3] [--metric euclidean] [--repeat 8] [--backend auto]

The 1797 8x8 digits (load_digits ships with scikit-learn) are split 75/25; each test digit
takes the majority label of its k nearest training digits (ties: the nearest's label). The
same classification by scikit-learn's KNeighborsClassifier (brute force) gives the reference
accuracy and time. --repeat stacks shifted copies of the training set (--repeat 8: 10784
points) to make the search longer, as a larger collection would.
"""

import argparse
import sys
import time

import numpy as np

import gpukern

def vote(labels, k_index, train_labels):
    """The majority label of each row's neighbours; ties go to the label of the nearest."""
    near = train_labels[k_index]  # m x k labels, nearest first
    counts = np.zeros((len(near), labels), np.int64)
    np.add.at(counts, (np.arange(len(near))[:, None], near), 1)
    best = counts.max(axis=1)
    # The first neighbour (nearest first) whose label has the top count.
    winner = np.argmax(counts[np.arange(len(near))[:, None], near] == best[:, None], axis=1)
    return near[np.arange(len(near)), winner]


def timed(what, fn, repeats=3):
    """fn's result and its best time of a few runs (the first warms up caches and threads)."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    print("  %-34s %8.2f ms" % (what, best * 1e3), flush=True)
    return result, best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--metric", choices=["euclidean", "sqeuclidean", "manhattan", "cosine"], default="euclidean")
    ap.add_argument("--repeat", type=int, default=1, help="copies of the training set to search (default 1)")
    ap.add_argument("--backend", choices=["auto", "cpu", "cuda"], default="auto")
    ap.add_argument("--seed", type=int, default=2026)
    a = ap.parse_args()

    # A line first: importing scikit-learn and a CUDA context's start take seconds on some machines.
    print("k-NN on scikit-learn's digits (loading scikit-learn and the data) ...", flush=True)
    try:
        from sklearn.datasets import load_digits
        from sklearn.neighbors import KNeighborsClassifier
    except ImportError:
        sys.exit("knn_digits.py needs scikit-learn for its data set: pip install scikit-learn")
    digits = load_digits()
    x = digits.data.astype(np.float32)
    labels = digits.target.astype(np.int64)
    order = np.random.default_rng(a.seed).permutation(len(x))
    cut = len(x) * 3 // 4
    train, test = order[:cut], order[cut:]
    xtr, ytr, xte, yte = x[train], labels[train], x[test], labels[test]
    if a.repeat > 1:
        # Copies shifted by less than a pixel's step (the images hold integers 0..16): each
        # copy's points keep their labels and the nearest neighbours stay among the originals'.
        xtr = np.concatenate([xtr + np.float32(0.01 * i) for i in range(a.repeat)])
        ytr = np.tile(ytr, a.repeat)

    with gpukern.Context(a.backend) as ctx:
        print("k-NN on the digits: %d training points, %d queries, d = %d, k = %d, %s, %s"
              % (len(xtr), len(xte), x.shape[1], a.k, a.metric, ctx.device_name), flush=True)
        (dist, index), ours = timed("gpukern kneighbors (host arrays)", lambda: ctx.kneighbors(xte, xtr, a.k, a.metric))
        predicted = vote(10, index, ytr)
        accuracy = float((predicted == yte).mean())
        xtr_d, xte_d = ctx.asarray(xtr), ctx.asarray(xte)

        def on_device():
            d, i = ctx.kneighbors(xte_d, xtr_d, a.k, a.metric)
            ctx.synchronize()
            return d, i

        (_, index_d), device = timed("gpukern kneighbors (Arrays)", on_device)
        assert (np.asarray(index_d) == index).all()

    sk_metric = "euclidean" if a.metric == "sqeuclidean" else a.metric
    clf = KNeighborsClassifier(n_neighbors=a.k, algorithm="brute", metric=sk_metric).fit(xtr, ytr)
    (sk_dist, _), theirs = timed("scikit-learn kneighbors (brute)", lambda: clf.kneighbors(xte, a.k))
    sk_accuracy = float((clf.predict(xte) == yte).mean())
    if a.metric == "sqeuclidean":
        sk_dist = sk_dist**2
    gap = float(np.abs(dist.astype(np.float64) - sk_dist).max())
    print("  accuracy: gpukern %.4f, scikit-learn %.4f; largest distance difference %.3g"
          % (accuracy, sk_accuracy, gap))
    print("Summary: %d-NN digits accuracy %.2f%% (scikit-learn %.2f%%); kneighbors %.2f ms vs "
          "scikit-learn's %.2f ms (%.1fx), %d x %d points, d = %d"
          % (a.k, 100 * accuracy, 100 * sk_accuracy, min(ours, device) * 1e3, theirs * 1e3,
             theirs / min(ours, device), len(xte), len(xtr), x.shape[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
