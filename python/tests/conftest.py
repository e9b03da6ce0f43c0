# SPDX-License-Identifier: MIT
"""Fixtures: a context per backend, the dtypes, both kinds of operand, and seeded random data."""

import os
import random
import zlib

import numpy as np
import pytest

import gpukern

# One seed for the run, from GK_TEST_SEED or fresh; every test derives its own generator from
# it and its name, so a failure reproduces with GK_TEST_SEED alone, whatever ran before.
SEED = int(os.environ.get("GK_TEST_SEED", random.randrange(2**32)))


def pytest_report_header(config):
    return "gpukern package in %s; libgpukern %s from %s; backends %s; GK_TEST_SEED=%d" % (
        os.path.dirname(gpukern.__file__),
        gpukern.library_version,
        gpukern.library_path,
        gpukern.available_backends(),
        SEED,
    )


def pytest_runtest_makereport(item, call):
    if call.excinfo is not None:
        item.add_report_section(call.when, "seed", "GK_TEST_SEED=%d" % SEED)


@pytest.fixture
def rng(request):
    return np.random.default_rng([SEED, zlib.crc32(request.node.nodeid.encode())])


@pytest.fixture(params=["cpu", "cuda"])
def backend(request):
    if request.param not in gpukern.available_backends():
        pytest.skip("backend %s is not available here" % request.param)
    return request.param


@pytest.fixture
def ctx(backend):
    with gpukern.Context(backend) as c:
        yield c


@pytest.fixture
def cpu():
    """A CPU context, for what only host memory shows (sharing, addresses, foreign producers)."""
    with gpukern.Context("cpu") as c:
        yield c


@pytest.fixture(params=[np.float32, np.float64], ids=["f32", "f64"])
def dtype(request):
    return request.param


@pytest.fixture(params=["ndarray", "array"])
def kind(request):
    """Whether operands are passed as host ndarrays or as context Arrays."""
    return request.param
