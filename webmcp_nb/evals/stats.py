"""The statistics an eval report rests on: a success rate's Wilson interval, pass^k, percentiles, and the exact
tests that decide whether two groups of runs really differ — Fisher's exact test on success counts, and the
Mann-Whitney U test (exact for small groups) on tokens or latency. With a handful of runs most differences are
noise; reports call a difference better or worse only when its test says it is unlikely to be (p < ``ALPHA``)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

__all__ = ["wilson", "pass_hat_k", "percentile", "fisher_exact", "mann_whitney", "ALPHA", "Z95"]

Z95 = 1.959963984540054
ALPHA = 0.05
"""The p-value below which a difference counts (two-sided)."""
EXACT_LIMIT = 50_000
"""Splits the exact Mann-Whitney test enumerates at most; larger groups use the normal approximation."""


def wilson(passes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval (95 %) of a success rate; ``None`` without trials."""
    if n <= 0:
        return None
    p = passes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def pass_hat_k(passes: int, n: int, k: int) -> float | None:
    """pass^k: the chance that ``k`` runs drawn from the ``n`` made all pass (``C(c, k) / C(n, k)``)."""
    if n <= 0 or k > n or k <= 0:
        return None
    return math.comb(passes, k) / math.comb(n, k)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (linear interpolation); ``None`` for no values."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def fisher_exact(passes_a: int, n_a: int, passes_b: int, n_b: int) -> float:
    """Two-sided p-value of Fisher's exact test: how likely success counts at least this far apart are when both
    groups have the same success rate. 1.0 when either group is empty."""
    if n_a <= 0 or n_b <= 0:
        return 1.0
    passes, total = passes_a + passes_b, n_a + n_b

    def chance(x: int) -> float:
        return math.comb(passes, x) * math.comb(total - passes, n_a - x) / math.comb(total, n_a)

    observed = chance(passes_a)
    low, high = max(0, passes - n_b), min(passes, n_a)
    return min(1.0, sum(p for x in range(low, high + 1) if (p := chance(x)) <= observed * (1 + 1e-9)))


def _ranks(values: Sequence[float]) -> list[float]:
    """Ranks from 1, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def mann_whitney(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p-value of the Mann-Whitney U test: whether values of one group tend to be larger than the
    other's. Exact (every split of the pooled values enumerated, ties included) up to ``EXACT_LIMIT`` splits,
    else the normal approximation with the tie correction. 1.0 when either group is empty."""
    m, n = len(a), len(b)
    if not m or not n:
        return 1.0
    ranks = _ranks([*a, *b])
    centre = m * n / 2

    def u_of(group: Sequence[float]) -> float:
        return sum(group) - m * (m + 1) / 2

    observed = abs(u_of(ranks[:m]) - centre)
    if math.comb(m + n, m) <= EXACT_LIMIT:
        splits = list(itertools.combinations(ranks, m))
        extreme = sum(1 for split in splits if abs(u_of(split) - centre) >= observed - 1e-9)
        return extreme / len(splits)
    ties: dict[float, int] = {}
    for r in ranks:
        ties[r] = ties.get(r, 0) + 1
    total = m + n
    variance = m * n / 12 * ((total + 1) - sum(t**3 - t for t in ties.values()) / (total * (total - 1)))
    if variance <= 0:
        return 1.0
    z = max(0.0, observed - 0.5) / math.sqrt(variance)
    return min(1.0, math.erfc(z / math.sqrt(2)))
