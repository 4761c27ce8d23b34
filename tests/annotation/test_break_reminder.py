from datetime import UTC, datetime, timedelta

from annotation.selectors import is_break_due

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def sitting(minutes_ago: list[int], every_items=20, every_minutes=45):
    return [
        (NOW - timedelta(minutes=m), every_items, every_minutes)
        for m in sorted(minutes_ago, reverse=True)
    ]


def test_no_break_before_anything_was_rated():
    assert not is_break_due([], NOW)


def test_a_break_after_every_n_items():
    assert is_break_due(sitting(list(range(20))), NOW)
    assert not is_break_due(sitting(list(range(19))), NOW)


def test_a_break_after_a_long_sitting():
    # One judgment every 5 minutes for 50 minutes, never a 10-minute gap.
    assert is_break_due(sitting(list(range(0, 51, 5))), NOW)


def test_a_pause_of_ten_minutes_starts_a_new_sitting():
    # Rated 60..40 minutes ago, paused 15 minutes, then rated for 25 minutes.
    assert not is_break_due(sitting([60, 55, 50, 45, 40, 25, 20, 15, 10, 5, 0]), NOW)


def test_no_reminder_for_someone_who_already_stopped():
    assert not is_break_due(sitting(list(range(20, 40))), NOW)
