# SPDX-License-Identifier: MIT
"""Type hints: mypy --strict passes on the stubs, `python -m gpukern` and a typical user's code,
and mypy.stubtest finds the stubs true to the runtime (names, signatures, defaults)."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("mypy", reason="mypy is not installed (pip install mypy)")

PYTHON_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def run(*args):
    done = subprocess.run([sys.executable, "-m", *args], cwd=PYTHON_DIR, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_strict_on_the_public_surface():
    assert os.path.isfile(os.path.join(PYTHON_DIR, "gpukern", "py.typed"))
    run("mypy", "--config-file", "mypy.ini", "gpukern/__init__.pyi", "gpukern/__main__.py", "tests/typed_usage.py")


def test_stubs_match_the_runtime(tmp_path):
    # Against the gpukern this test imports (pip's, or PYTHONPATH's), from outside python/,
    # where the sources (without the library) would shadow it.
    import gpukern

    package = os.path.dirname(os.path.abspath(gpukern.__file__))
    for shipped in ("__init__.pyi", "py.typed"):
        assert os.path.isfile(os.path.join(package, shipped)), "%s does not ship %s" % (package, shipped)
    done = subprocess.run([sys.executable, "-m", "mypy.stubtest", "gpukern", "--mypy-config-file",
                           os.path.join(PYTHON_DIR, "mypy.ini"), "--allowlist",
                           os.path.join(PYTHON_DIR, "stubtest-allowlist.txt")],
                          cwd=str(tmp_path), capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
