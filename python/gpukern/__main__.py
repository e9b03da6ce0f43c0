# SPDX-License-Identifier: MIT
"""`python -m gpukern`: what a bug report needs (the versions, the library loaded, its backends
and devices, the CPU's SIMD level, the GK_* settings). Exits 0 even where CUDA is absent."""

from __future__ import annotations

import os
import platform
import sys

import numpy as np

import gpukern

# The x86 and Arm extensions that decide which kernels run, best first.
_SIMD = ["avx512_bf16", "avx512f", "avx2", "fma", "avx", "sse4_2", "sve2", "sve", "asimd"]


def cpu_simd(cpuinfo: str = "/proc/cpuinfo") -> str:
    """The CPU's SIMD extensions that matter here, best first ("unknown" off Linux)."""
    try:
        with open(cpuinfo) as f:
            text = f.read()
    except OSError:
        return "unknown (no %s)" % cpuinfo
    flags: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            flags.update(value.split())
            break
    found = [name for name in _SIMD if name in flags]
    return " ".join(found) if found else "none of %s" % " ".join(_SIMD)


def cpu_model(cpuinfo: str = "/proc/cpuinfo") -> str:
    try:
        with open(cpuinfo) as f:
            for line in f:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def report() -> list[str]:
    """The lines `python -m gpukern` prints."""
    lines = [
        "gpukern %s (package %s)" % (gpukern.__version__, os.path.dirname(os.path.abspath(gpukern.__file__))),
        "library: %s" % gpukern.library_path,
        "C extension gpukern._fast: %s" % (
            "in use" if getattr(sys.modules.get("gpukern._base"), "_FAST_FN", None)
            else "not in use (small ops go through ctypes)"),
        "python %s, numpy %s, %s" % (platform.python_version(), np.__version__, platform.platform()),
        "cpu: %s; %d logical cores; SIMD: %s" % (cpu_model(), os.cpu_count() or 0, cpu_simd()),
        "backends: %s" % ", ".join(gpukern.available_backends()),
    ]
    with gpukern.Context("cpu") as ctx:
        lines.append("  cpu: %s" % ctx.device_name)
    try:
        count = gpukern.device_count("cuda")
    except NotImplementedError as e:
        count = 0
        lines.append("  cuda: %s" % e)
    for i in range(count):
        try:
            with gpukern.Context("cuda", device=i) as ctx:
                lines.append("  cuda:%d: %s" % (i, ctx.device_name))
        except gpukern.GpukernError as e:
            lines.append("  cuda:%d: cannot open: %s" % (i, e))
    if count == 0 and "cuda" not in gpukern.available_backends():
        lines.append("  cuda: not available (no GPU, no driver, or the CUDA module was not built)")
    settings = sorted((k, v) for k, v in os.environ.items()
                      if k.startswith(("GK_", "GPUKERN_", "OMP_", "OPENBLAS_")) or k == "CUDA_VISIBLE_DEVICES")
    lines.append("settings: %s" % (", ".join("%s=%s" % kv for kv in settings) if settings else "none"))
    return lines


def main() -> int:
    print("\n".join(report()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
