# SPDX-License-Identifier: MIT
"""The examples at their defaults: each finishes within 30 s on a 2-core machine, shows progress
lines on its longer phases, and ends with its Summary (issue 36)."""

import os
import subprocess
import sys
import time

import pytest

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")


@pytest.mark.parametrize("script", ["000_rbf_network.py", "002_vector_add.py", "004_matmul.py",
                                    "kernel_ridge_mpi.py", "knn_digits.py", "kernel_ridge_targets.py"])
def test_examples_are_fast_by_default(script, tmp_path):
    command = [sys.executable, os.path.join(EXAMPLES, script)]
    if script == "knn_digits.py":
        pytest.importorskip("sklearn", reason="knn_digits.py needs scikit-learn's digits")
    if script == "kernel_ridge_mpi.py":
        pytest.importorskip("mpi4py", reason="kernel_ridge_mpi.py needs mpi4py")
        if not os.environ.get("GPUKERN_MPI_LIBRARY"):
            import gpukern

            if not os.path.isfile(os.path.join(os.path.dirname(gpukern.library_path), "libgpukern_mpi.so.1")):
                pytest.skip("no libgpukern_mpi beside the library (set GPUKERN_MPI_LIBRARY)")
        command[1:1] = ["-m", "mpi4py"]  # one rank, without mpiexec
    t0 = time.perf_counter()
    done = subprocess.run(command, cwd=str(tmp_path), capture_output=True, text=True, timeout=120)
    seconds = time.perf_counter() - t0
    assert done.returncode == 0, done.stdout + done.stderr
    assert seconds <= 30, "%s took %.1f s by default" % (script, seconds)
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith(("Summary:", "CG:")), last
