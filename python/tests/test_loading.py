# SPDX-License-Identifier: MIT
"""Finding and loading libgpukern, and what import tells when it cannot."""

import importlib.metadata
import os
import re
import subprocess
import sys

import pytest

import gpukern
from gpukern import _lib


def test_loaded_library():
    assert os.path.isfile(gpukern.library_path)
    assert gpukern.library_version.split(".")[0] == str(_lib.ABI_MAJOR)
    assert gpukern.__version__ == gpukern.library_version
    if os.environ.get("GPUKERN_LIBRARY"):
        assert os.path.samefile(gpukern.library_path, os.environ["GPUKERN_LIBRARY"])


def test_pip_installed_package_loads_the_library_it_ships():
    if os.environ.get("GPUKERN_LIBRARY"):
        pytest.skip("GPUKERN_LIBRARY chooses the library")
    package_dir = os.path.dirname(os.path.abspath(gpukern.__file__))
    shipped = os.path.join(package_dir, _lib.SONAME)
    if not os.path.isfile(shipped):
        pytest.skip("this gpukern was not installed by pip (no %s in %s)" % (_lib.SONAME, package_dir))
    assert os.path.samefile(gpukern.library_path, shipped)
    for header in ("gpukern.h", "gpukern_version.h"):
        assert os.path.isfile(os.path.join(package_dir, "include", header))
    # The distribution's version is the C library's, read from the same CMakeLists.txt.
    assert importlib.metadata.version("gpukern") == gpukern.__version__
    cmakelists = os.path.join(os.path.dirname(__file__), "..", "..", "CMakeLists.txt")
    if os.path.isfile(cmakelists):
        with open(cmakelists, encoding="utf-8") as f:
            declared = re.search(r"project\(gpukern VERSION ([0-9.]+)", f.read()).group(1)
        assert gpukern.__version__ == declared


def test_available_backends():
    backends = gpukern.available_backends()
    assert backends[0] == "cpu" and set(backends) <= {"cpu", "cuda"}


def _import_with(env_update):
    env = dict(os.environ, **env_update)
    return subprocess.run([sys.executable, "-c", "import gpukern"], env=env, capture_output=True, text=True)


def test_bad_gpukern_library_is_an_import_error_naming_it(tmp_path):
    missing = str(tmp_path / "libgpukern.so.1")
    proc = _import_with({"GPUKERN_LIBRARY": missing})
    assert proc.returncode != 0
    assert "ImportError" in proc.stderr and missing in proc.stderr


def test_library_without_the_api_is_rejected():
    # Any shared library without the gk_* symbols stands in for a foreign or broken copy.
    with pytest.raises(ImportError) as e:
        _lib.load({"GPUKERN_LIBRARY": "libc.so.6"})
    assert "gk_" in str(e.value)


def test_search_order_and_failure_message(tmp_path):
    # An empty package directory and no GPUKERN_LIBRARY: only an installed copy can be found.
    try:
        lib, path = _lib.load({}, package_dir=str(tmp_path))
    except ImportError as e:
        message = str(e)
        for place in ("GPUKERN_LIBRARY", str(tmp_path), "system loader", "find_library", "pkg-config"):
            assert place in message
        assert message.index("GPUKERN_LIBRARY") < message.index(str(tmp_path)) < message.index("system loader")
    else:
        assert os.path.basename(path).startswith("libgpukern.so")


def test_copy_next_to_the_package_is_found(tmp_path):
    os.symlink(gpukern.library_path, tmp_path / "libgpukern.so.1")
    lib, path = _lib.load({}, package_dir=str(tmp_path))
    assert os.path.samefile(path, gpukern.library_path)
    assert lib.gk_version_number() // 10000 == _lib.ABI_MAJOR


def test_python_m_gpukern_prints_what_a_bug_report_needs(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: Test CPU\nflags\t\t: fpu sse4_2 avx avx2 fma\n")
    from gpukern import __main__ as main

    assert main.cpu_simd(str(cpuinfo)) == "avx2 fma avx sse4_2"
    assert main.cpu_simd(str(tmp_path / "absent")).startswith("unknown")
    assert main.cpu_model(str(cpuinfo)) == "Test CPU"
    # The installed package (or PYTHONPATH's), as users run it.
    out = subprocess.run([sys.executable, "-m", "gpukern"], capture_output=True, text=True, check=True,
                         cwd=str(tmp_path)).stdout
    assert out.startswith("gpukern %s" % gpukern.__version__)
    for needed in ("library: %s" % gpukern.library_path, "numpy %s" % __import__("numpy").__version__,
                   "SIMD: ", "backends: cpu", "  cpu: "):
        assert needed in out, (needed, out)
    from gpukern import _base

    assert ("C extension gpukern._fast: %s" % ("in use" if _base._FAST_FN else "not in use")) in out
