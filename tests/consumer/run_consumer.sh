#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs the build tree into a temporary prefix, then builds and runs consumer.c against it,
# once through pkg-config and once through find_package(gpukern).
# usage: run_consumer.sh <build dir> <work dir> <cmake> <cc> <generator> <make program>
#                        <consumer source dir> <pkg-config> <config>
set -u
build=$1 work=$2 cmake=$3 cc=$4 generator=$5 make_program=$6 src=$7 pkgconfig=$8 config=$9
fail() { echo "FAIL: $*"; exit 1; }

rm -rf "$work" && mkdir -p "$work" || fail "cannot create $work"
prefix="$work/prefix"
[ -n "$config" ] || config=Release
"$cmake" --install "$build" --prefix "$prefix" --config "$config" >"$work/install.log" 2>&1 || {
  cat "$work/install.log"; fail "cmake --install"; }

# ---- pkg-config
pc=$(find "$prefix" -name gpukern.pc | head -n 1)
[ -n "$pc" ] || fail "no gpukern.pc installed under $prefix"
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH
echo "pkg-config: $("$pkgconfig" --cflags --libs gpukern)"
libdir=$("$pkgconfig" --variable=libdir gpukern) || fail "pkg-config cannot read $pc"
includedir=$("$pkgconfig" --variable=includedir gpukern)
case "$libdir" in
  "$prefix"/*) ;;
  *) fail "gpukern.pc says libdir=$libdir, not inside the install prefix $prefix: the .pc file is not relocatable (cmake --install --prefix)" ;;
esac
case "$includedir" in
  "$prefix"/*) ;;
  *) fail "gpukern.pc says includedir=$includedir, not inside the install prefix $prefix" ;;
esac
# shellcheck disable=SC2046
"$cc" $("$pkgconfig" --cflags gpukern) "$src/consumer.c" -o "$work/consumer_pc" \
  $("$pkgconfig" --libs gpukern) "-Wl,-rpath,$libdir" || fail "compiling with pkg-config flags"
"$work/consumer_pc" || fail "consumer built with pkg-config"
ldd "$work/consumer_pc" | grep -q "$prefix/.*libgpukern" || {
  ldd "$work/consumer_pc"; fail "consumer_pc did not load the installed libgpukern"; }

# ---- find_package(gpukern)
"$cmake" -S "$src" -B "$work/build" -G "$generator" -DCMAKE_MAKE_PROGRAM="$make_program" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE="$config" \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configuring the consumer"; }
"$cmake" --build "$work/build" >"$work/build.log" 2>&1 || {
  cat "$work/build.log"; fail "building the consumer"; }
"$work/build/consumer" || fail "consumer built with find_package"
ldd "$work/build/consumer" | grep -q "$prefix/.*libgpukern" || {
  ldd "$work/build/consumer"; fail "consumer did not load the installed libgpukern"; }
echo "consumer test OK"
