#!/bin/sh
# SPDX-License-Identifier: MIT
# Compares the ABI of a libgpukern built with debug info against every released baseline dump.
#
# usage: abidiff.sh <libgpukern.so.X.Y.Z> <include dir> <abi dir>
#        abidiff.sh --update <libgpukern.so.X.Y.Z> <include dir> <abi dir> <version>
# The first form fails when an interface of a release (abi/libgpukern-<version>.abi) was removed
# or changed; additions pass. abidiff's own verdict (exit bit 8, ABIDIFF_ABI_INCOMPATIBLE_CHANGE)
# covers only removals, so a changed function or type (exit bit 4 with something listed as
# Removed or Changed) fails too. abi/abidiff.supp lists the changes the library's conventions make
# compatible. The second form writes the baseline of a release.
set -u
if [ "${1:-}" = "--update" ]; then
  update=1
  shift
else
  update=0
fi
lib=$1 include=$2 abi=$3
command -v abidw >/dev/null || { echo "abidiff.sh: abidw not found (Debian: abigail-tools)"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# Private types (the opaque handles' insides) are dropped: callers cannot see them. Source paths
# keep their last two parts, so a dump does not depend on where the tree was built.
abidw --headers-dir "$include" --drop-private-types --no-show-locs --no-comp-dir-path \
  --no-corpus-path --no-elf-needed --type-id-style hash "$lib" >"$tmp/raw.abi" ||
  { echo "abidw failed on $lib"; exit 1; }
sed "s|path='[^']*/\([^/']*/[^/']*\)'|path='\1'|" "$tmp/raw.abi" >"$tmp/new.abi"

if [ $update -eq 1 ]; then
  cp "$tmp/new.abi" "$abi/libgpukern-$4.abi"
  echo "wrote $abi/libgpukern-$4.abi"
  exit 0
fi

status=0
found=0
for base in "$abi"/libgpukern-*.abi; do
  [ -e "$base" ] || continue
  found=1
  abidiff --suppressions "$abi/abidiff.supp" "$base" "$tmp/new.abi" >"$tmp/report" 2>&1
  rc=$?
  changed=$(sed -n 's/^\(Functions\|Variables\) changes summary: \([0-9]*\) Removed, \([0-9]*\) Changed.*/\2 \3/p' \
    "$tmp/report" | awk '{ n += $1 + $2 } END { print n + 0 }')
  name=$(basename "$base")
  if [ $((rc & 3)) -ne 0 ]; then
    echo "FAIL: abidiff could not compare with $name (exit $rc):"; cat "$tmp/report"; status=1
  elif [ $((rc & 8)) -ne 0 ] || [ "$changed" -ne 0 ]; then
    echo "FAIL: incompatible with $name (abidiff exit $rc):"; cat "$tmp/report"; status=1
  elif [ $((rc & 4)) -ne 0 ]; then
    echo "ABI compatible with $name; additions:"; cat "$tmp/report"
  else
    echo "ABI identical to $name"
  fi
done
[ $found -eq 1 ] || { echo "FAIL: no baseline abi/libgpukern-*.abi in $abi"; status=1; }
exit $status
