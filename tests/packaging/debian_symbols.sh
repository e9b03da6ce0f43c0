#!/bin/sh
# SPDX-License-Identifier: MIT
# The Debian symbols file that cmake/package.cmake makes from a version script lists exactly the
# symbols the built library exports, each at its node: dpkg-gensymbols -c4 fails on any symbol
# that appeared or disappeared.
# usage: debian_symbols.sh <library file> <symbols file> <package> <work dir>
set -u
lib=$1 symbols=$2 package=$3 work=$4
rm -rf "$work" && mkdir -p "$work/debian" || exit 1
cd "$work" || exit 1
# Newer dpkg (1.22) reads the package's stanza from debian/control even with -p.
printf 'Source: gpukern\n\nPackage: %s\nArchitecture: any\n' "$package" > debian/control
dpkg-gensymbols -p"$package" -v0 -e"$lib" -I"$symbols" -O"$work/generated" -c4 || {
  echo "FAIL: $symbols does not match what $lib exports (diff above)"; exit 1; }
echo "$symbols matches $lib"
