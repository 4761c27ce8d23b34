"""Array plumbing shared by the study figures: dense indexes over ids, row selections,
clusters, and JSON-safe numbers. Pure numpy, no database."""

import functools
import math
from decimal import ROUND_HALF_UP, Decimal

import numpy as np

# The Likert scale every metric is rated on.
VALUES = [1, 2, 3, 4, 5]

# The columns of a study's counted ratings, one integer array each, as the figures read
# them (loaded from the database by `annotation.results.loading`, from a snapshot by
# `annotation.reproduce`).
COLUMNS = [
    "value",
    "metric",
    "judgment",
    "annotator",
    "item",
    "character",
    "scenario",
    "round",
    "is_pair",
    "source",
    "answer",
]


def agreement_unit(item, answer):
    """The key of an agreement unit: one answer within one item (an answer shown in several
    pairs is several units). The study's agreement and the judges' use the same key."""
    return np.asarray(item, dtype=np.int64) * 1_000_000_000 + np.asarray(answer, dtype=np.int64)


def clean(value):
    """JSON has no NaN: undefined figures become null."""
    if isinstance(value, float | np.floating):
        return None if math.isnan(value) else round(float(value), 6)
    if isinstance(value, np.integer):
        return int(value)
    return value


@functools.lru_cache(maxsize=4)
def cluster_resampling(n_clusters: int, draws: int, seed: int) -> np.ndarray:
    """Bootstrap draws of clusters: row b holds how many times each of `n_clusters`
    clusters is taken in draw b (the first draw of a generator seeded with `seed`).
    Kept per process, read-only: for a study of 1,200 cells the 2,000 draws took about
    a quarter of a whole results recompute, and a study's cells stay the same from one
    recompute to the next once each has a judgment; the same seed gives the same draws,
    so the figures are those drawn afresh. About 10 MB each at that size."""
    rng = np.random.default_rng(seed)
    drawn = rng.multinomial(n_clusters, np.full(n_clusters, 1 / n_clusters), size=draws)
    # Counts of at most n_clusters: int32 halves what is kept.
    drawn = drawn.astype(np.int32)
    drawn.setflags(write=False)
    return drawn


def index_of(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values, 0-based index of each element). Ids and small keys go through a
    lookup table (linear time); large composite keys through a sort."""
    values = np.asarray(values)
    if len(values) and values.min() >= 0 and values.max() < 10_000_000:
        present = np.flatnonzero(np.bincount(values))
        lookup = np.zeros(int(values.max()) + 1, dtype=np.int64)
        lookup[present] = np.arange(len(present))
        return present, lookup[values]
    distinct, inverse = np.unique(values, return_inverse=True)
    return distinct, inverse.ravel()


def subset(data, mask):
    if mask.all():
        return data
    return {name: column[mask] for name, column in data.items()}


def cells_of(data) -> np.ndarray:
    """Clusters: the (character, scenario) cell of a pair; a diversity item is its own
    cell."""
    return np.where(
        data["is_pair"] == 1, data["character"] * 1000 + data["scenario"], -data["item"]
    )


def distinct_per_group(group, annotator, n_groups) -> np.ndarray:
    """How many distinct annotators each group has."""
    group, annotator = np.asarray(group, dtype=np.int64), np.asarray(annotator, dtype=np.int64)
    if len(group) == 0:
        return np.zeros(n_groups, dtype=np.int64)
    n_annotators = int(annotator.max()) + 1
    distinct = np.unique(group * n_annotators + annotator)
    return np.bincount(distinct // n_annotators, minlength=n_groups)


def seconds_value(seconds: float) -> float:
    """Time on task to the millisecond, rounded half away from zero from its shortest
    decimal form (what PostgreSQL's numeric round does, so that COPY agrees)."""
    return float(Decimal(repr(seconds)).quantize(Decimal("0.001"), ROUND_HALF_UP)) + 0.0
