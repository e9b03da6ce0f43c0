# SPDX-License-Identifier: MIT
"""The examples at their defaults: each finishes within 30 s on a 2-core machine, shows progress
lines on its longer phases (never more than 3 s without a line), and ends with its Summary
(issue 36)."""

import os
import subprocess
import sys
import threading
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
    # Each line as it comes, with the time since the one before: a phase of more than 2 s prints
    # progress (a line per step, or every 2 s, plus the step in flight when the 2 s are up).
    lines, silences = [], []
    with open(tmp_path / "stderr", "w+") as err:
        t0 = last = time.perf_counter()
        proc = subprocess.Popen(command, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=err, text=True,
                                env=dict(os.environ, PYTHONUNBUFFERED="1"))
        watchdog = threading.Timer(120, proc.kill)
        watchdog.start()
        try:
            for line in proc.stdout:
                now = time.perf_counter()
                silences.append((now - last, line.rstrip()))
                lines.append(line.rstrip())
                last = now
            returncode = proc.wait()
        finally:
            watchdog.cancel()
        seconds = time.perf_counter() - t0
        err.seek(0)
        output = "\n".join(lines) + "\n" + err.read()
    assert returncode == 0, output
    assert seconds <= 30, "%s took %.1f s by default" % (script, seconds)
    silences.append((seconds - (last - t0), "<exit>"))
    longest, before = max(silences)
    assert longest <= 3, "%s printed nothing for %.1f s before %r" % (script, longest, before)
    last_line = [line for line in lines if line.strip()][-1]
    assert last_line.startswith(("Summary:", "CG:")), last_line
