#!/bin/sh
# SPDX-License-Identifier: MIT
# libgpukern_mpi exports exactly the functions its version script lists, each under its node.
# usage: check_abi_mpi.sh <libgpukern_mpi.so> <gpukern_mpi.map> <nm>
set -u
lib=$1 map=$2 nm=$3
want=$(sed -n 's/^ *\(gk_mpi_[a-z_0-9;  ]*\)$/\1/p' "$map" | tr ' ;' '\n\n' | grep . | sort)
have=$("$nm" -D --defined-only "$lib" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort)
unversioned=$("$nm" -D --defined-only "$lib" | awk '$2 == "T" && $3 !~ /@@GPUKERN_MPI_/')
[ -n "$want" ] || { echo "FAIL: no gk_mpi_ symbols found in $map"; exit 1; }
if [ "$want" != "$have" ]; then
  echo "FAIL: exported functions differ from $map"
  echo "map:"; echo "$want"
  echo "library:"; echo "$have"
  exit 1
fi
[ -z "$unversioned" ] || { echo "FAIL: exports outside a GPUKERN_MPI_ node: $unversioned"; exit 1; }
echo "libgpukern_mpi ABI OK: $(echo "$have" | tr '\n' ' ')"
