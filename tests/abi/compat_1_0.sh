#!/bin/sh
# SPDX-License-Identifier: MIT
# A program linked against the 1.0 ABI runs against this library: the program is linked
# against a stand-in libgpukern.so.1 that exports exactly abi/GPUKERN_1.0.txt in node
# GPUKERN_1.0 (what a 1.0 release exported), then run against the real library.
# usage: compat_1_0.sh <real libgpukern.so.1> <abi dir> <include dirs (colon separated)> <cc> <work dir>
set -eu
lib=$1 abi=$2 includes=$3 cc=$4 work=$5
rm -rf "$work" && mkdir -p "$work/stub"

# The stand-in: one empty function per 1.0 symbol, all in node GPUKERN_1.0.
{
  echo "GPUKERN_1.0 { global:"
  sed 's/$/;/' "$abi/GPUKERN_1.0.txt"
  echo "local: *; };"
} >"$work/stub/map"
sed 's/^\(.*\)$/void \1(void) {}/' "$abi/GPUKERN_1.0.txt" >"$work/stub/stub.c"
"$cc" -shared -fPIC -o "$work/stub/libgpukern.so.1" -Wl,-soname,libgpukern.so.1 \
  -Wl,--version-script="$work/stub/map" "$work/stub/stub.c"
ln -sf libgpukern.so.1 "$work/stub/libgpukern.so"

# A 1.0 program: only functions of 1.0.
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
    printf("library %s, sum %g\n", gk_version_string(), sum);
    gk_buffer_destroy(x);
    gk_context_destroy(ctx);
    return sum == 6.0 ? 0 : 1;
}
C
incflags=$(echo "$includes" | tr ':' '\n' | sed 's/^/-I/' | tr '\n' ' ')
# shellcheck disable=SC2086
"$cc" $incflags -o "$work/app" "$work/app.c" -L"$work/stub" -lgpukern

# Every gk_ reference the program makes is bound to version GPUKERN_1.0.
refs=$(objdump -T "$work/app" | grep ' gk_' || true)
echo "$refs"
if echo "$refs" | grep -v '(GPUKERN_1\.0)' | grep -q gk_; then
  echo "FAIL: the 1.0 program references a symbol outside GPUKERN_1.0"
  exit 1
fi

LD_LIBRARY_PATH=$(dirname "$lib") "$work/app"
