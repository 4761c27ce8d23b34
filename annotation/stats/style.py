"""Do models still beat the fans once style is accounted for? Raters may simply prefer the
longer or the more decorated answer (emoji, kaomoji). Per compared source and metric, the
paired difference (compared - reference, same judgment) is fitted by least squares on the
two answers' difference in length (per 100 characters) and in emoji and kaomoji count;
the intercept is the difference expected between two answers of the same length and
decoration, shown beside the plain paired difference.

The intercept's interval is two-way cluster-robust (cells, annotators), as the means'
are, from each pair's influence on the intercept: each one-way term is CR2 (the sum of
squared per-cluster sums of residuals adjusted for the cluster's leverage), the
intersection is subtracted (Cameron, Gelbach and
Miller 2011; the larger one-way term where the difference is not positive), and the t
quantile has the effective number of cells or annotators (the fewer) minus one degrees
of freedom (`effective_clusters`). A single rater (an LLM judge) is clustered by cell
alone."""

import re
from dataclasses import dataclass

import numpy as np

from .arrays import clean, index_of
from .intervals import effective_clusters, t_quantile
from .minimum import enough_data
from .rules import Rules

# Emoji: the pictographic blocks and the dingbats and symbols most used as emoji.
_EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff]")
# Kaomoji: a bracketed face of a few characters with at least one of the usual face
# parts, such as (＾▽＾) or （；´д｀）, and a few bare ones.
_KAOMOJI = re.compile(
    r"[（(][^（()）\s]{0,6}[＾^▽ω∀´｀`°・･ﾟДд︶≧≦╥﹏Ｔ][^（()）\s]{0,6}[)）]|\^_\^|QAQ|T_T|orz",
)


def decorations(text: str) -> int:
    """How many emoji and kaomoji the text holds."""
    return len(_EMOJI.findall(text)) + len(_KAOMOJI.findall(text))


def answer_style(text: str) -> tuple[int, int]:
    """(length in characters, emoji and kaomoji) of an answer."""
    return len(text), decorations(text)


@dataclass(frozen=True)
class StyleFit:
    adjusted: float  # the intercept: the difference at equal length and decoration
    ci_low: float
    ci_high: float
    per_100_characters: float  # the slope on the length difference
    per_decoration: float | None  # the slope on the decoration difference, if it varies
    df: float


def _cluster_sums(design, inverse, residual, cluster) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster: its CR2-adjusted contribution to the intercept, and its size. CR2
    (Bell and McCaffrey 2002) takes each cluster's residuals through (I - H_gg)^(-1/2),
    H_gg = X_g A X_g' with A = (X'X)^-1, before summing: it undoes the shrinkage of a
    cluster that pulls the fit towards itself (an annotator who did 40 % of the pairs).
    A single pair's contribution is e0' A x r / sqrt(1 - h). For larger clusters, by the
    push-through identity X_g' f(X_g A X_g') = f(X_g' X_g A) X_g', the contribution
    e0' A X_g' (I - H_gg)^(-1/2) r_g needs only the coefficients' few-by-few matrices:
    with S = A^(1/2) it is e0' S (I - S G_g S)^(-1/2) S X_g' r_g, G_g = X_g' X_g, for all
    such clusters at once."""
    _ids, dense = index_of(cluster)
    sizes = np.bincount(dense)
    sums = np.zeros(len(sizes))
    single = sizes[dense] == 1
    x = design[single]
    leverage = np.einsum("ij,jk,ik->i", x, inverse, x)
    sums[dense[single]] = (
        (x @ inverse)[:, 0] * residual[single] / np.sqrt(np.maximum(1 - leverage, 1e-12))
    )
    if single.all():
        return sums, sizes.astype(float)
    shared = ~single
    owners, owner = np.unique(dense[shared], return_inverse=True)
    x, r, width = design[shared], residual[shared], design.shape[1]
    gram = np.empty((len(owners), width, width))
    for i in range(width):
        for j in range(width):
            gram[:, i, j] = np.bincount(owner, weights=x[:, i] * x[:, j], minlength=len(owners))
    scores = np.column_stack(
        [np.bincount(owner, weights=x[:, i] * r, minlength=len(owners)) for i in range(width)]
    )
    values, vectors = np.linalg.eigh(inverse)
    root = (vectors * np.sqrt(np.maximum(values, 0))) @ vectors.T
    shares, directions = np.linalg.eigh(root @ gram @ root)
    scale = 1 / np.sqrt(np.maximum(1 - shares, 1e-12))
    adjust = (directions * scale[:, None, :]) @ np.swapaxes(directions, 1, 2)
    sums[owners] = np.einsum("j,gjk,gk->g", root[0], adjust, scores @ root)
    return sums, sizes.astype(float)


def _one_way(design, inverse, residual, cluster) -> tuple[float, float]:
    """(CR2 variance, effective number of clusters) of the intercept clustered by
    `cluster`; NaN below 2 clusters."""
    sums, sizes = _cluster_sums(design, inverse, residual, cluster)
    if len(sums) < 2:
        return float("nan"), float(len(sums))
    squares = sums**2
    m1, m2, m3, m4 = (float((sizes**k).sum()) for k in (1, 2, 3, 4))
    effective = effective_clusters(
        m1, m2, m3, m4, float(squares.sum()), float((sizes * squares).sum())
    )
    return float(squares.sum()), float(effective)


def style_fit(
    difference, length, decorated, cell, annotator=None, *, confidence: float = 0.95
) -> StyleFit | None:
    """The intercept of the differences on the style differences (`length` already per
    100 characters), with its interval; None where the fit cannot tell style from the
    intercept (no spread in length, or no more pairs than coefficients)."""
    difference = np.asarray(difference, dtype=float)
    length, decorated = np.asarray(length, dtype=float), np.asarray(decorated, dtype=float)
    columns = [np.ones(len(difference)), length]
    decorations_vary = len(decorated) > 0 and bool(np.any(decorated != decorated[0]))
    if decorations_vary:
        columns.append(decorated)
    design = np.column_stack(columns)
    if len(difference) <= design.shape[1] or np.linalg.matrix_rank(design) < design.shape[1]:
        return None
    inverse = np.linalg.inv(design.T @ design)
    coefficients = inverse @ design.T @ difference
    residual = difference - design @ coefficients
    cell = np.asarray(cell, dtype=np.int64)
    v_cell, effective_cells = _one_way(design, inverse, residual, cell)
    if annotator is None:
        variance, df = v_cell, effective_cells - 1
    else:
        annotator = np.asarray(annotator, dtype=np.int64)
        v_annotator, effective_annotators = _one_way(design, inverse, residual, annotator)
        _cells, cell_index = index_of(cell)
        both = cell_index * (int(annotator.max()) + 1) + annotator
        v_both, _ = _one_way(design, inverse, residual, both)
        variance = v_cell + v_annotator - v_both
        if not variance > 0:
            variance = float(np.fmax(v_cell, v_annotator))
        df = min(effective_cells, effective_annotators) - 1
    intercept = float(coefficients[0])
    half = float(t_quantile(df, confidence)) * float(np.sqrt(variance)) if df >= 1 else np.nan
    return StyleFit(
        adjusted=intercept,
        ci_low=intercept - half,
        ci_high=intercept + half,
        per_100_characters=float(coefficients[1]),
        per_decoration=float(coefficients[2]) if decorations_vary else None,
        df=float(df),
    )


def style_adjusted_differences(paired, metric_by_id, sources, styles: dict, rules: Rules) -> dict:
    """Per compared source and metric: the paired difference adjusted for style, with
    the mean length difference (characters, compared - reference) it was adjusted for,
    from the ratings matched by `figures.with_reference`. `styles`: answer id ->
    (length, emoji and kaomoji)."""
    if paired is None or not styles:
        return {}
    d, compared, against = paired
    styled = np.array(sorted(styles), dtype=np.int64)
    table = np.array([styles[a] for a in styled.tolist()], dtype=float).reshape(-1, 2)
    known = np.isin(d["answer"][compared], styled) & np.isin(d["answer"][against], styled)
    compared, against = compared[known], against[known]
    if len(compared) == 0:
        return {}
    style_of = table[np.searchsorted(styled, d["answer"][compared])]
    style_against = table[np.searchsorted(styled, d["answer"][against])]
    length = style_of[:, 0] - style_against[:, 0]
    decorated = style_of[:, 1] - style_against[:, 1]
    difference = (d["value"][compared] - d["value"][against]).astype(float)
    # Dense indexes once, so that each group's cluster keys stay small.
    _cells, cell = index_of(d["character"][compared] * 1000 + d["scenario"][compared])
    _annotators, annotator = index_of(d["annotator"][compared])
    group = d["source"][compared] * 100_000 + d["metric"][compared]
    order = np.argsort(group, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(group[order]) != 0])
    out: dict = {}
    for rows in np.split(order, starts[1:]):
        source, metric = divmod(int(group[rows[0]]), 100_000)
        n, annotators = len(rows), len(np.unique(annotator[rows]))
        fit = style_fit(
            difference[rows],
            length[rows] / 100,
            decorated[rows],
            cell[rows],
            annotator[rows],
            confidence=rules.confidence,
        )
        low, high = (fit.ci_low, fit.ci_high) if fit else (np.nan, np.nan)
        enough = bool(enough_data(n, annotators, low, high, rules))
        out.setdefault(sources[source].slug, {})[metric_by_id[metric].slug] = {
            "adjusted": clean(fit.adjusted) if fit else None,
            "ci_low": clean(low) if enough else None,
            "ci_high": clean(high) if enough else None,
            "per_100_characters": clean(fit.per_100_characters) if fit else None,
            "per_decoration": clean(fit.per_decoration) if fit else None,
            "mean_length_difference": clean(float(length[rows].mean())),
            "n": n,
            "annotators": annotators,
            "enough_data": enough,
        }
    return out
