"""annotation.sql.random_draw: the serving order's random draws can be seeded on either
database (PostgreSQL's setseed, a seeded generator on SQLite whose RANDOM() cannot be),
so that a simulated study or a test's fans give the same data in every run."""

import pytest

from annotation import sql


def _draws(n: int) -> list[float]:
    return [sql.one_row(f"SELECT {sql.random_draw()}")[0] for _ in range(n)]


@pytest.mark.django_db
def test_a_seed_gives_the_same_draws_again():
    sql.seed_random(7)
    first = _draws(5)
    sql.seed_random(7)
    assert _draws(5) == first


@pytest.mark.django_db
def test_another_seed_gives_other_draws():
    sql.seed_random(7)
    first = _draws(5)
    sql.seed_random(8)
    assert _draws(5) != first
    assert len(set(first)) == 5
