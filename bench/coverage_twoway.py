"""Whether the quantile of the studentized mean under a fitted two-way model, in place
of Student's t, makes the means' and paired differences' intervals cover 95 % in every
setting of `bench/coverage_df.py`.

`bench/coverage_exact.py` drew the quantile from the governing term's working model alone
(annotators or cells); it removed the skewed cells' conservatism but left the even
10-annotator mean at 96.2 % and over-corrected where the cell term it leaves out carries
more of the variance. Here every term is drawn together: the ratings of a figure are
modelled as y = annotator effect + cell effect + noise, the three variances fitted to the
study by unbiased moments (the residuals' within-annotator and within-cell cross-products
and their sum of squares, each set equal to its expectation under the model with the mean
estimated: Henderson's method 3 for a crossed design, negative variances set to 0), and
the published statistic, mean error over the published two-way CR2 standard error
(`intervals.two_way_cluster_means`, its fallback included), is drawn 2,000 times on the
study's own design (who rated which cell). Its 95 % quantile of |t| replaces t; the
variance is the published one, unchanged. "drawn" also draws the annotator and cell
variances per draw from their fit's uncertainty (scaled inverse chi-squares on the
effective numbers of annotators and cells minus one).

Same studies as `bench/coverage_df.py` (same seeds); figures without a published interval
are left out of both columns.

    .venv/bin/python bench/coverage_twoway.py [STUDIES] [--strong]
"""

import math
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotation.stats.crowd import Crowd, simulate
from annotation.stats.intervals import t_quantile, two_way_cluster_means
from bench.coverage_df import SETTINGS

DRAWS = 2000


def indicator(ids) -> np.ndarray:
    """The n x G matrix saying which cluster each rating is in."""
    _, inverse = np.unique(ids, return_inverse=True)
    members = np.zeros((len(ids), int(inverse.max()) + 1))
    members[np.arange(len(ids)), inverse] = 1
    return members


def published_variance(draws, by_annotator, by_cell, by_both) -> np.ndarray:
    """`two_way_cluster_means`'s variance of the mean, for each row of `draws`."""
    n = draws.shape[1]
    residuals = draws - draws.mean(axis=1, keepdims=True)

    def term(members):
        sizes = members.sum(axis=0)
        kept = sizes < n
        sums = residuals @ members[:, kept]
        return (sums**2 / (1 - sizes[kept] / n)).sum(axis=1)

    v_c, v_a, v_i = term(by_cell), term(by_annotator), term(by_both)
    variance = v_c + v_a - v_i
    return np.where(variance > 0, variance, np.maximum(v_c, v_a)) / n**2


def fitted_variances(values, by_annotator, by_cell) -> np.ndarray:
    """Annotator, cell and noise variances by unbiased moments (Henderson's method 3):
    E[r' B r] = sum_k sigma_k^2 tr(P B P K_k), P the centring matrix, K_k the model's
    covariance patterns, B the off-diagonal same-annotator and same-cell patterns and I."""
    n = len(values)
    patterns = [by_annotator @ by_annotator.T, by_cell @ by_cell.T, np.eye(n)]
    forms = [patterns[0] - np.eye(n), patterns[1] - np.eye(n), np.eye(n)]

    def trace(form, pattern):  # tr(P form P pattern), without forming P
        return (
            (form * pattern).sum()
            - 2 / n * (form.sum(axis=1) @ pattern.sum(axis=1))
            + form.sum() * pattern.sum() / n**2
        )

    residuals = values - values.mean()
    expected = np.array([[trace(form, pattern) for pattern in patterns] for form in forms])
    observed = np.array([residuals @ form @ residuals for form in forms])
    variances = np.maximum(np.linalg.solve(expected, observed), 0.0)
    variances[2] = max(variances[2], 1e-9)
    return variances


def twoway_quantile(
    values, annotator, cell, rng, confidence: float = 0.95, *, uncertain=None
) -> float:
    """The `confidence` quantile of |mean error / published standard error| under the
    fitted two-way model on this figure's design, drawn. With `uncertain` (the effective
    numbers of annotators and cells), each draw's annotator and cell variances are drawn
    too, as the fitted ones times nu / chi-square(nu), nu that number minus one: the
    fit's own uncertainty, which the plug-in leaves out."""
    by_annotator, by_cell = indicator(annotator), indicator(cell)
    by_both = indicator(cell * (int(annotator.max()) + 1) + annotator)
    variances = fitted_variances(values, by_annotator, by_cell)
    annotators, cells, noise = np.sqrt(variances)
    if uncertain is not None:
        nu = [max(count - 1, 1.0) for count in uncertain]
        annotators = np.sqrt(variances[0] * nu[0] / rng.chisquare(nu[0], size=(DRAWS, 1)))
        cells = np.sqrt(variances[1] * nu[1] / rng.chisquare(nu[1], size=(DRAWS, 1)))
    draws = (
        (rng.normal(size=(DRAWS, by_annotator.shape[1])) * annotators) @ by_annotator.T
        + (rng.normal(size=(DRAWS, by_cell.shape[1])) * cells) @ by_cell.T
        + rng.normal(size=(DRAWS, len(values))) * noise
    )
    spread = np.sqrt(published_variance(draws, by_annotator, by_cell, by_both))
    return float(np.quantile(np.abs(draws.mean(axis=1)) / spread, confidence))


def coverage(crowd: Crowd, studies: int, seed: int) -> dict[str, np.ndarray]:
    """Per figure: covered with t (published), covered with the two-way quantile, the
    two quantiles, and covered with the quantile of drawn variances."""
    rng = np.random.default_rng(seed)
    draws = np.random.default_rng(seed + 1)
    levels = crowd.levels()
    rows: dict[str, list] = {"mean": [], "paired difference": []}
    for _ in range(studies):
        study = simulate(rng, crowd)
        for source in range(1, crowd.sources):
            mine = study["right"] == source
            annotator, cell = study["annotator"][mine], study["cell"][mine]
            for name, values, truth in (
                ("mean", study["value_right"][mine], levels[source]),
                (
                    "paired difference",
                    study["value_right"][mine] - study["value_left"][mine],
                    levels[source] - levels[0],
                ),
            ):
                group = np.zeros(int(mine.sum()), dtype=np.int64)
                found = two_way_cluster_means(values, group, cell, annotator, 1)
                t = float(t_quantile(found.df)[0])
                if not math.isfinite(t):
                    continue  # no interval published
                q = twoway_quantile(values, annotator, cell, draws)
                counts = (found.effective_annotators[0], found.effective_cells[0])
                drawn = twoway_quantile(values, annotator, cell, draws, uncertain=counts)
                error, spread = abs(found.mean[0] - truth), found.standard_error[0]
                rows[name].append(
                    (error <= t * spread, error <= q * spread, t, q, error <= drawn * spread)
                )
    return {name: np.array(found, dtype=float) for name, found in rows.items()}


def main() -> None:
    studies = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 1000
    strong = "--strong" in sys.argv
    crowd = Crowd(leniency_sd=0.8, taste_sd=0.6) if strong else Crowd()
    print(("annotators differ twice as much" if strong else "crowd of bench/coverage.py") + ",")
    print(f"{studies} studies per setting; coverage in %, ± one binomial standard error")
    print(
        f"{'annotators':>10} {'sd':>4}  {'figure':<18} {'t':>6} {'two-way':>7} {'drawn':>6} {'±':>4}"
        "  median quantiles"
    )
    for annotators, sd in SETTINGS:
        setting = replace(crowd, annotators=annotators, workload_sd=sd)
        found = coverage(setting, studies, seed=annotators * 10 + int(sd * 10))
        for name, rows in found.items():
            error = math.sqrt(0.95 * 0.05 / len(rows)) * 100
            print(
                f"{annotators:>10} {sd:>4}  {name:<18} {rows[:, 0].mean() * 100:6.1f}"
                f" {rows[:, 1].mean() * 100:7.1f} {rows[:, 4].mean() * 100:6.1f} {error:4.1f}  "
                f"t {np.median(rows[:, 2]):.2f} / two-way {np.median(rows[:, 3]):.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
