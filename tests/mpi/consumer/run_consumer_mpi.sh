#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs the build tree into a temporary prefix, then builds consumer_mpi.c against it with
# the plain C compiler, once through pkg-config (gpukern-mpi.pc must bring MPI's flags) and once
# through find_package(gpukern COMPONENTS mpi), and runs each on two ranks.
# usage: run_consumer_mpi.sh <build dir> <work dir> <cmake> <cc> <generator> <make program>
#                            <consumer source dir> <pkg-config> <config> <mpiexec> <flags...>
set -u
build=$1 work=$2 cmake=$3 cc=$4 generator=$5 make_program=$6 src=$7 pkgconfig=$8 config=$9
shift 9
mpiexec=$1
shift
fail() { echo "FAIL: $*"; exit 1; }

rm -rf "$work" && mkdir -p "$work" || fail "cannot create $work"
prefix="$work/prefix"
[ -n "$config" ] || config=Release
"$cmake" --install "$build" --prefix "$prefix" --config "$config" >"$work/install.log" 2>&1 || {
  cat "$work/install.log"; fail "cmake --install"; }
for f in include/gpukern_mpi.h; do
  [ -f "$prefix/$f" ] || fail "$f is not installed"
done
lib=$(find "$prefix" -name 'libgpukern_mpi.so.1' | head -n 1)
[ -n "$lib" ] || fail "no libgpukern_mpi.so.1 installed under $prefix"

# ---- pkg-config
pc=$(find "$prefix" -name gpukern-mpi.pc | head -n 1)
[ -n "$pc" ] || fail "no gpukern-mpi.pc installed under $prefix"
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH
flags=$("$pkgconfig" --cflags --libs gpukern-mpi) || fail "pkg-config gpukern-mpi"
echo "pkg-config gpukern-mpi: $flags"
libdir=$("$pkgconfig" --variable=libdir gpukern-mpi)
# shellcheck disable=SC2086
"$cc" "$src/consumer_mpi.c" -o "$work/consumer_pc" $flags -lm "-Wl,-rpath,$libdir" ||
  fail "compiling with pkg-config gpukern-mpi's flags"
"$mpiexec" -n 2 "$@" "$work/consumer_pc" || fail "consumer_mpi built with pkg-config"
ldd "$work/consumer_pc" | grep -q "$prefix/.*libgpukern_mpi" || {
  ldd "$work/consumer_pc"; fail "consumer_pc did not load the installed libgpukern_mpi"; }

# ---- find_package(gpukern COMPONENTS mpi)
"$cmake" -S "$src" -B "$work/build" -G "$generator" -DCMAKE_MAKE_PROGRAM="$make_program" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE="$config" \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configuring the consumer"; }
"$cmake" --build "$work/build" >"$work/build.log" 2>&1 || {
  cat "$work/build.log"; fail "building the consumer"; }
"$mpiexec" -n 2 "$@" "$work/build/consumer_mpi" || fail "consumer_mpi built with find_package"
ldd "$work/build/consumer_mpi" | grep -q "$prefix/.*libgpukern_mpi" || {
  ldd "$work/build/consumer_mpi"; fail "consumer_mpi did not load the installed libgpukern_mpi"; }
echo "MPI consumer test OK"
