#!/bin/sh
# SPDX-License-Identifier: MIT
# check_layering.sh - fails when the core's files call each other in a circle (src/*.c).
#
#   check_layering.sh NM DIR OBJECT...
#
# Only the objects compiled from DIR/ (e.g. src) are read; the others are skipped. An OBJECT
# argument may be a ;-separated list, as CMake's $<TARGET_OBJECTS:...> gives one.
# An edge a -> b is a symbol that a.o uses and b.o defines. A circle means neither file can be
# read, tested or replaced without the other, so each must be broken by moving code.
set -eu
nm=$1
dir=$2
shift 2
IFS=';'
set -- $*
unset IFS
for o in "$@"; do
  case "$o" in */"$dir"/*) ;; *) continue ;; esac
  f=$(basename "$o")
  f=${f%%.*}
  "$nm" "$o" | awk -v f="$f" '$1 == "U" { print "U", f, $2 } NF == 3 && $2 ~ /^[TDBR]$/ { print "D", f, $3 }'
done | awk '
  $1 == "D" { def[$3] = $2; next }
  { use[++n] = $2 " " $3 }
  END {
    for (i = 1; i <= n; i++) {
      split(use[i], u, " ")
      if ((u[2] in def) && def[u[2]] != u[1] && !((u[1] SUBSEP def[u[2]]) in edge)) {
        edge[u[1], def[u[2]]] = u[2]
        out[u[1]] = out[u[1]] " " def[u[2]]
        files[u[1]] = files[def[u[2]]] = 1
      }
    }
    # A file is in a circle when it reaches itself; print one path per such file.
    bad = 0
    for (s in files) {
      delete seen; delete prev
      top = 0; stack[++top] = s; seen[s] = 1
      while (top > 0) {
        a = stack[top--]
        m = split(out[a], next_, " ")
        for (j = 1; j <= m; j++) {
          b = next_[j]
          if (b == s) {
            path = s; x = a; chain = ""
            while (x != s) { chain = " -> " x chain; x = prev[x] }
            printf "circle: %s%s -> %s (%s calls %s)\n", s, chain, s, a, edge[a, s]
            bad = 1; top = 0; break
          }
          if (!(b in seen)) { seen[b] = 1; prev[b] = a; stack[++top] = b }
        }
      }
    }
    if (n == 0) { print "no object read: none was compiled from the directory given"; exit 1 }
    if (!bad) print "no circle among the files that call each other"
    exit bad
  }'
