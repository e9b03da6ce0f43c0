#!/bin/sh
# SPDX-License-Identifier: MIT
# Checks libgpukern's ABI: exported symbols == abi/symbols.txt == the header's GK_API functions;
# each symbol has the version node the linker script gives it, each released node holds exactly
# its frozen list abi/GPUKERN_1.<minor>.txt; SONAME libgpukern.so.1; no link-time dependency on CUDA.
# usage: check_abi.sh <libgpukern.so> <abi dir> <gpukern.h> <gpukern.map> <nm> <readelf>
set -u
lib=$1 abi=$2 header=$3 map=$4 nm=$5 readelf=$6
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }
compare() { # compare <expected> <actual> <what>
  if ! diff -u "$1" "$2" >"$tmp/diff"; then
    fail "$3 (- expected, + actual):"; cat "$tmp/diff"
  fi
}

# Defined dynamic symbols, without version suffixes and without the version nodes (type A).
"$nm" -D --defined-only "$lib" | awk '$2 != "A" { print $3 }' | sed 's/@.*//' | sort -u \
  >"$tmp/exported" || fail "nm failed on $lib"
sort -u "$abi/symbols.txt" >"$tmp/listed"
sed -n 's/^GK_API[^(]*[ *]\(gk_[a-z0-9_]*\)(.*/\1/p' "$header" | sort -u >"$tmp/declared"
compare "$tmp/listed" "$tmp/exported" "exported symbols differ from abi/symbols.txt"
compare "$tmp/listed" "$tmp/declared" "abi/symbols.txt differs from the GK_API functions of $header"
echo "$(wc -l <"$tmp/exported") exported symbols, $(wc -l <"$tmp/listed") listed"

# name@@node as the version script assigns it, and as the library carries it.
awk '
  /^[A-Za-z0-9_.]+[ \t]*\{/ { node = $1; sub(/\{.*/, "", node); global = 0; next }
  /global:/ { global = 1; sub(/.*global:/, "") }
  /local:/ { global = 0 }
  global { gsub(/[;,]/, " "); for (i = 1; i <= NF; i++) if ($i ~ /^gk_/) print $i "@@" node }
' "$map" | sort >"$tmp/script_versions"
"$readelf" --dyn-syms -W "$lib" | awk '$7 != "UND" && $8 ~ /^gk_/ { print $8 }' | sort \
  >"$tmp/lib_versions"
compare "$tmp/script_versions" "$tmp/lib_versions" "symbol versions differ from $map"
for frozen in "$abi"/GPUKERN_1.*.txt; do
  node=$(basename "$frozen" .txt)
  sed "s/\$/@@$node/" "$frozen" | sort >"$tmp/frozen"
  grep "@@$node\$" "$tmp/lib_versions" >"$tmp/lib_node" || true
  compare "$tmp/frozen" "$tmp/lib_node" "the released $node node changed"
done
if grep -v '@@GPUKERN_1\.[0-9][0-9]*$' "$tmp/lib_versions" >"$tmp/odd"; then
  fail "symbols outside the GPUKERN_1.x nodes:"; cat "$tmp/odd"
fi

"$readelf" -d "$lib" >"$tmp/dynamic" || fail "readelf -d failed"
grep -q 'SONAME.*\[libgpukern\.so\.1\]' "$tmp/dynamic" || {
  fail "SONAME is not libgpukern.so.1:"; grep SONAME "$tmp/dynamic"; }
if grep NEEDED "$tmp/dynamic" | grep -E 'libcuda|libcudart|libcublas|libcurand'; then
  fail "libgpukern links CUDA libraries at link time"
fi
grep NEEDED "$tmp/dynamic"

[ $status -eq 0 ] && echo "ABI OK"
exit $status
