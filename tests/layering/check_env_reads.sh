#!/bin/sh
# SPDX-License-Identifier: MIT
# check_env_reads.sh - fails unless src/env.c is the one file of the library and its CUDA module
# that reads the environment, so that docs/environment.md can list every variable from there.
#
#   check_env_reads.sh SOURCE_DIR
set -eu
cd "$1"
found=$(grep -rlE '\b(secure_getenv|getenv|environ)\b' src cpu cuda | sort | tr '\n' ' ')
if [ "$found" != "src/env.c " ]; then
  echo "the environment is read in: $found(only src/env.c may: call gk__env from env.h)"
  exit 1
fi
echo "only src/env.c reads the environment"
