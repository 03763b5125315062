"""Derive the polynomial coefficients of glasstorch/_array/special.py.

Each table there is a Chebyshev interpolant of a smooth function, computed here at 50 digits with
mpmath (a dependency of torch, so present wherever the tests run), converted to powers of the
interval's own variable ``s = (x - centre) / half_width`` in [-1, 1], and accepted at the lowest
degree whose float64 Horner evaluation stays within ``TARGET`` relative error on a dense grid.

    python tools/fit_special.py          # prints the tables, ready to paste

Nothing in the package imports this file; it documents where the numbers come from and lets them be
rebuilt or refitted (narrower intervals, other functions) by anyone.
"""
import mpmath as mp

mp.mp.dps = 50
TARGET = 2.0 ** -57   # relative error of the interpolant itself: a small fraction of an ulp


def chebyshev_coefficients(f, a, b, n):
    """The n Chebyshev coefficients of f's interpolant at n Chebyshev nodes of [a, b]."""
    centre, half = (mp.mpf(a) + b) / 2, (mp.mpf(b) - a) / 2
    angles = [mp.pi * (j + mp.mpf(1) / 2) / n for j in range(n)]
    values = [f(centre + half * mp.cos(t)) for t in angles]
    cheb = [2 * mp.fsum(v * mp.cos(k * t) for v, t in zip(values, angles)) / n for k in range(n)]
    cheb[0] /= 2
    return cheb


def to_powers(cheb):
    """Chebyshev series -> powers of s, highest first (as Horner's rule reads them)."""
    n = len(cheb)
    powers = [mp.mpf(0)] * n
    t_prev, t_cur = [mp.mpf(1)] + [mp.mpf(0)] * n, [mp.mpf(0), mp.mpf(1)] + [mp.mpf(0)] * (n - 1)
    for k, c in enumerate(cheb):  # T_{k+1} = 2 s T_k - T_{k-1}
        if k >= 2:
            t_prev, t_cur = t_cur, [2 * (t_cur[i - 1] if i else 0) - t_prev[i] for i in range(n + 1)]
        t = t_prev if k == 0 else t_cur
        for i in range(n):
            powers[i] += c * t[i]
    return list(reversed(powers))


def worst_relative_error(f, a, b, coefficients, points=400):
    """(exact Horner on the float64 coefficients, float64 Horner) worst relative errors on a grid."""
    centre, half = (a + b) / 2, (b - a) / 2
    worst_exact = worst_float = 0.0
    for i in range(points + 1):
        x = a + (b - a) * i / points
        s = (x - centre) / half
        exact = f(mp.mpf(x))
        in_mp, in_float = mp.mpf(0), 0.0
        for c in coefficients:
            in_mp, in_float = in_mp * s + c, in_float * s + c
        worst_exact = max(worst_exact, float(abs((in_mp - exact) / exact)))
        worst_float = max(worst_float, float(abs((in_float - exact) / exact)))
    return worst_exact, worst_float


def fit(name, f, a, b, max_degree=48, target=TARGET):
    """The lowest degree whose dropped Chebyshev terms are below target relative to f's size."""
    cheb = chebyshev_coefficients(f, a, b, max_degree + 1)
    size = min(abs(f(mp.mpf(a))), abs(f(mp.mpf(b))), abs(f((mp.mpf(a) + b) / 2)))
    degree = max_degree
    while degree > 1 and mp.fsum(abs(c) for c in cheb[degree:]) < target * size:
        degree -= 1
    coefficients = [float(c) for c in to_powers(cheb[:degree + 1])]
    exact, in_float = worst_relative_error(f, a, b, coefficients)
    print(f"# {name} on [{a}, {b}]: degree {degree}, relative error {exact:.1e} (float64 Horner: {in_float:.1e})")
    return coefficients


def erf_over_x(u):
    """erf(x)/x as a function of u = x*x (even in x, so a polynomial in x*x)."""
    if u == 0:
        return 2 / mp.sqrt(mp.pi)
    x = mp.sqrt(u)
    return mp.erf(x) / x


def scaled_erfc(x):
    """erfc(x) * exp(x*x): smooth and slowly varying, so erfc = exp(-x*x) * this."""
    return mp.erfc(x) * mp.exp(x * x)


def lgamma_near_one(x):
    """lgamma(x+1)/(x(x-1)): lgamma(x) = x(x-1) * this - log(x), smooth on (-1, inf)."""
    if x == 0:
        return mp.euler
    if x == 1:
        return 1 - mp.euler
    return mp.loggamma(x + 1) / (x * (x - 1))


def lgamma_near_two(x):
    """lgamma(x)/(x-2): lgamma(x) = (x-2) * this, smooth on (0, inf)."""
    if x == 2:
        return 1 - mp.euler
    return mp.loggamma(x) / (x - 2)


def print_table(name, coefficients, indent=""):
    print(f"{indent}{name}(")
    for i in range(0, len(coefficients), 3):
        print(f"{indent}    " + " ".join(f"{c!r}," for c in coefficients[i:i + 3]))
    print(f"{indent}),")


def main():
    print_table("ERF_SMALL = ", fit("erf(x)/x in u = x*x", erf_over_x, 0.0, 1.0))
    print("ERFCX_BY_OCTAVE = (")
    for lo in [0.5, 1.0, 2.0, 4.0, 8.0, 16.0]:
        print_table("", fit("erfc(x)*exp(x*x)", scaled_erfc, lo, 2 * lo), "    ")
    print(")")
    print_table("LGAMMA_NEAR_1 = ", fit("lgamma(x+1)/(x(x-1))", lgamma_near_one, 0.0, 1.5))
    print_table("LGAMMA_NEAR_2 = ", fit("lgamma(x)/(x-2)", lgamma_near_two, 1.5, 2.5))
    # erf for float32 (and narrower) results: 2**-36 relative is far below float32's half ulp (2**-24)
    print_table("ERF32_SMALL = ", fit("erf(x)/x in u = x*x", erf_over_x, 0.0, 1.0, target=2.0 ** -36))
    print_table("ERFCX32_1_4 = ", fit("erfc(x)*exp(x*x)", scaled_erfc, 1.0, 4.0, target=2.0 ** -36))


if __name__ == "__main__":
    main()
