#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs a Python MPI program with the first interpreter that has mpi4py and numpy, against the
# build tree's libraries; exits 77 (ctest: skipped) when no interpreter has both.
# usage: run_python.sh <build lib dir> <python package dir> <command...>, where the argument
# @PYTHON@ of the command stands for the interpreter found.
lib=$1 pkg=$2
shift 2
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import mpi4py, numpy' 2>/dev/null; then
    found=$(command -v "$py") # a path: mpiexec's ranks may search another PATH
    break
  fi
done
if [ -z "${found:-}" ]; then
  echo "SKIP: no python3 with mpi4py and numpy (Debian: python3-mpi4py python3-numpy)"
  exit 77
fi
PYTHONPATH=$pkg${PYTHONPATH:+:$PYTHONPATH}
GPUKERN_LIBRARY=$lib/libgpukern.so.1
GPUKERN_MPI_LIBRARY=$lib/libgpukern_mpi.so.1
export PYTHONPATH GPUKERN_LIBRARY GPUKERN_MPI_LIBRARY
for a do
  shift
  if [ "$a" = "@PYTHON@" ]; then set -- "$@" "$found"; else set -- "$@" "$a"; fi
done
exec "$@"
