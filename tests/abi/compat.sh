#!/bin/sh
# SPDX-License-Identifier: MIT
# A program linked against an older release's ABI runs against this library: the program is
# linked against a stand-in libgpukern.so.1 that exports exactly what that release exported
# (abi/GPUKERN_1.0.txt ... abi/GPUKERN_<release>.txt, each in its own version node), then run
# against the real library. Release 1.0 uses only 1.0 functions; 1.1 also calls
# gk_context_calibrate; 1.2 also gk_div and gk_device_count.
# usage: compat.sh <release: 1.0|1.1|1.2> <real libgpukern.so.1> <abi dir> <include dirs (colon
#        separated)> <cc> <work dir>
set -eu
release=$1 lib=$2 abi=$3 includes=$4 cc=$5 work=$6
case $release in
  1.0) nodes="1.0" ;;
  1.1) nodes="1.0 1.1" ;;
  1.2) nodes="1.0 1.1 1.2" ;;
  *) echo "compat.sh: no program for release $release"; exit 1 ;;
esac
rm -rf "$work" && mkdir -p "$work/stub"

# The stand-in: one empty function per symbol of the release, each in the node it shipped in,
# the nodes chained as in src/gpukern.map.
: >"$work/stub/map"
: >"$work/stub/stub.c"
previous=
for node in $nodes; do
  {
    echo "GPUKERN_$node { global:"
    sed 's/$/;/' "$abi/GPUKERN_$node.txt"
    [ -n "$previous" ] || echo "local: *;"
    echo "}${previous:+ GPUKERN_$previous};"
  } >>"$work/stub/map"
  sed 's/^\(.*\)$/void \1(void) {}/' "$abi/GPUKERN_$node.txt" >>"$work/stub/stub.c"
  previous=$node
done
"$cc" -shared -fPIC -o "$work/stub/libgpukern.so.1" -Wl,-soname,libgpukern.so.1 \
  -Wl,--version-script="$work/stub/map" "$work/stub/stub.c"
ln -sf libgpukern.so.1 "$work/stub/libgpukern.so"

# The program: only functions of the release.
cat >"$work/app.c" <<'C'
#include <gpukern.h>
#include <stdio.h>
int main(void)
{
    gk_context *ctx = NULL;
    gk_buffer *x = NULL;
    float v[3] = {1, 2, 3};
    double sum = 0;
    if (gk_context_create(GK_BACKEND_CPU, &ctx) != GK_OK ||
        gk_buffer_wrap_host(ctx, GK_FLOAT32, 3, v, &x) != GK_OK || gk_sum(ctx, x, &sum) != GK_OK) {
        printf("failed: %s\n", gk_last_error());
        return 1;
    }
#if RELEASE_1_1
    /* a context with one backend has nothing to calibrate */
    if (gk_context_calibrate(ctx, 0) != GK_OK) {
        printf("gk_context_calibrate failed: %s\n", gk_last_error());
        return 1;
    }
#endif
#if RELEASE_1_2
    float q[3];
    gk_buffer *z = NULL;
    if (gk_device_count(GK_BACKEND_CPU) != 1 ||
        gk_buffer_wrap_host(ctx, GK_FLOAT32, 3, q, &z) != GK_OK || gk_div(ctx, x, x, z) != GK_OK ||
        q[0] != 1.0f || q[2] != 1.0f) {
        printf("gk_div or gk_device_count failed: %s\n", gk_last_error());
        return 1;
    }
    gk_buffer_destroy(z);
#endif
    printf("library %s, sum %g\n", gk_version_string(), sum);
    gk_buffer_destroy(x);
    gk_context_destroy(ctx);
    return sum == 6.0 ? 0 : 1;
}
C
incflags=$(echo "$includes" | tr ':' '\n' | sed 's/^/-I/' | tr '\n' ' ')
define="-DRELEASE_1_1=0 -DRELEASE_1_2=0"
[ "$release" = 1.0 ] || define="-DRELEASE_1_1=1 -DRELEASE_1_2=0"
[ "$release" != 1.2 ] || define="-DRELEASE_1_1=1 -DRELEASE_1_2=1"
# shellcheck disable=SC2086
"$cc" $incflags $define -o "$work/app" "$work/app.c" -L"$work/stub" -lgpukern

# Every gk_ reference the program makes is bound to a node of the release.
refs=$(objdump -T "$work/app" | grep ' gk_' || true)
echo "$refs"
pattern=$(echo "$nodes" | sed 's/\./\\./g; s/ /\\|/g')
if echo "$refs" | grep -v "(GPUKERN_\($pattern\))" | grep -q gk_; then
  echo "FAIL: the $release program references a symbol outside the nodes $nodes"
  exit 1
fi
if [ "$release" != 1.0 ] && ! echo "$refs" | grep -q '(GPUKERN_1\.1) gk_context_calibrate'; then
  echo "FAIL: the $release program does not reference gk_context_calibrate@GPUKERN_1.1"
  exit 1
fi
if [ "$release" = 1.2 ] && ! echo "$refs" | grep -q '(GPUKERN_1\.2) gk_div'; then
  echo "FAIL: the 1.2 program does not reference gk_div@GPUKERN_1.2"
  exit 1
fi

LD_LIBRARY_PATH=$(dirname "$lib") "$work/app"
