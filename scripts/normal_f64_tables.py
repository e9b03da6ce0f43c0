#!/usr/bin/env python3
"""Constants of src/normal_f64.h: the log table and the polynomial fits, printed as C.

Run with mpmath installed (`python3 scripts/normal_f64_tables.py`); the header holds its output.
Every figure it prints about the fits is in units of 2^-53 relative, as the header states them.
"""
import struct
from fractions import Fraction as Q

import mpmath as mp

mp.mp.prec = 200


def dbl(x):
    """x rounded to the nearest double, as a Python float."""
    return float(mp.mpf(x))


def hexd(x):
    return float(x).hex()


# Buckets of f in [0.75 - 2^-10, 1.5 - 2^-9), 256 of them, as normal_f64.h indexes them:
# j = ((hi(m) - 0x3FE80000 + 0x800) >> 12) & 255, f's high word = 0x3FE80000 - 0x800 + j 2^12 + ...
def bucket(j):
    def f_of(hi_off):
        hi = 0x3FE80000 - 0x800 + hi_off
        # hi word of a double in [0.5, 2): exponent bits and the top 20 mantissa bits
        e = (hi >> 20) - 1023
        frac = hi & 0xFFFFF
        return Q(2) ** e * (1 + Q(frac, 1 << 20))
    return f_of(j << 12), f_of((j + 1) << 12)


def r_of(j, lo, hi):
    """r_j: 1 for the bucket around 1 and the one below it (where u1 itself can be f, and
    2 ln r_j would cancel against T), else 1/mid on a grid of 2^-8 (f < 1) or 2^-9."""
    if j in (127, 128):
        return Q(1)
    mid = (lo + hi) / 2
    grid = Q(1, 256) if hi <= 1 else Q(1, 512)
    return round((1 / mid) / grid) * grid


entries = []
tmax = Q(0)
for j in range(256):
    lo, hi = bucket(j)
    r = r_of(j, lo, hi)
    t = max(abs(lo * r - 1), abs(hi * r - 1))
    tmax = max(tmax, t)
    # T = 2 - 2 r f is exact where |t| < 2^-8, with f's grid and r's (normal_f64.h)
    assert t < Q(1, 256), (j, float(t))
    a = 2 * mp.log(mp.mpf(r.numerator) / r.denominator)
    a_hi = dbl(a)
    a_lo = a - mp.mpf(a_hi)
    # a_lo kept to 21 bits (a double's high word): its error is below 2^-75
    a_lo_hw = mp.mpf(a_lo)
    bits = struct.unpack("<Q", struct.pack("<d", float(a_lo_hw)))[0]
    # round to nearest on the high word
    hw = (bits + 0x80000000) >> 32
    lo_d = struct.unpack("<d", struct.pack("<Q", hw << 32))[0]
    assert abs(mp.mpf(lo_d) - a_lo) < mp.mpf(2) ** -75
    rbits = struct.unpack("<Q", struct.pack("<d", float(r)))[0]
    assert rbits & 0xFFFFFFFF == 0
    entries.append((a_hi, rbits >> 32, hw))

print("/* max |t| over the buckets: 2^%.3f */" % mp.log(mp.mpf(tmax.numerator) / tmax.denominator, 2))
print("#define GK_LOG_TABLE \\")
for k, (a_hi, rh, lh) in enumerate(entries):
    print("    {%s, 0x%08xu, 0x%08xu}%s \\" % (hexd(a_hi), rh, lh, "," if k < 255 else ""))
print()

Tm = 2 * mp.mpf(tmax.numerator) / tmax.denominator


def fit(f, a, b, n, name, weight):
    """Chebyshev fit of f on [a, b] with n coefficients, rounded to doubles; the largest
    weighted error of the rounded polynomial on a fine grid, in 2^-53."""
    poly, _ = mp.chebyfit(f, [a, b], n, error=True)
    c = [dbl(x) for x in poly]  # highest degree first
    worst = mp.mpf(0)
    for i in range(4001):
        x = a + (b - a) * i / 4000
        p = mp.mpf(0)
        for ci in c:
            p = p * x + ci
        e = abs(p - f(x)) * weight(x)
        worst = max(worst, e)
    print("/* %s: %d coefficients, weighted error %.3g u */" % (name, n, float(worst / mp.mpf(2) ** -53)))
    print("#define %s %s" % (name, ", ".join(hexd(x) for x in c)))
    return c


# x = -2 ln(1 - T/2) = T + T^2 Q(T): error T^2 dQ relative to x ~ |T|: weight |T|
def qlog(T):
    if T == 0:
        return mp.mpf(1) / 4
    return (-2 * mp.log(1 - T / 2) - T) / T ** 2


fit(qlog, -Tm, Tm, 5, "GK_LOG_Q", lambda T: abs(T))

pi4 = mp.pi / 4
W = pi4 ** 2 * (1 + mp.mpf(2) ** -20)


# sin phi = phi + phi^3 S(phi^2): error phi^3 dS relative to sin phi ~ phi: weight w
def ssin(w):
    if w == 0:
        return -mp.mpf(1) / 6
    s = mp.sqrt(w)
    return (mp.sin(s) - s) / (s * w)


# cos phi = 1 - w/2 + w^2 C(w): error w^2 dC relative to cos phi >= 0.7: weight w^2 / cos
def ccos(w):
    if w == 0:
        return mp.mpf(1) / 24
    s = mp.sqrt(w)
    return (mp.cos(s) - 1 + w / 2) / w ** 2


fit(ssin, mp.mpf(0), W, 7, "GK_SIN_S", lambda w: w)
fit(ccos, mp.mpf(0), W, 6, "GK_COS_C", lambda w: w ** 2 / mp.cos(mp.sqrt(w)))
