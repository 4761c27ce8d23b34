"""annotation.sql.literal: the loop's statements name the choices they ask for (a lease's
state, a study's status, an item's kind) in their text, so that a prepared statement's
plan knows how rare a live lease is; nothing else may be written into a statement."""

import pytest

from annotation import sql
from annotation.models import AssignmentState, ItemKind, StudyStatus


def test_a_choice_the_code_defines_is_written_as_a_quoted_literal():
    assert sql.literal(AssignmentState.ACTIVE) == "'active'"
    assert sql.literal(StudyStatus.OPEN) == "'open'"
    assert sql.literal(ItemKind.DIVERSITY) == "'diversity'"


@pytest.mark.parametrize("value", ["x'); DROP TABLE annotation_item; --", "it's", "", "a b"])
def test_anything_else_is_refused(value):
    with pytest.raises(ValueError, match="not a choice the code defines"):
        sql.literal(value)
