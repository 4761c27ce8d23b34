"""Figures from the preferences of pair judgments: win / tie / loss against the
reference, Bradley-Terry strengths, how often each source passed for human, and position
bias, each proportion with a clustering-aware interval."""

from typing import Any

import numpy as np

from .arrays import clean, distinct_per_group, index_of
from .estimates import bradley_terry_estimates
from .intervals import clustered_proportions
from .minimum import enough_data, enough_for_interval, enough_information
from .rules import Rules


def proportion(successes, n, deff, low, high, annotators, rules: Rules) -> dict:
    enough = bool(enough_data(n, annotators, low, high, rules))
    return {
        "ci_low": clean(low) if enough else None,
        "ci_high": clean(high) if enough else None,
        "design_effect": clean(deff),
        "annotators": int(annotators),
        "enough_data": enough,
    }


def preferences(rows, reference, sources, rules: Rules) -> dict:
    """Win / tie / loss against the reference, Bradley-Terry strengths over all pairs
    (unless every pair is with the reference: `bradley_terry_note` says why none),
    how often each source passed for human, and position bias."""
    annotator_names = sorted({row[8] or "" for row in rows})
    annotator_of = {name: i for i, name in enumerate(annotator_names)}
    outcomes = []  # (compared source, outcome 0 win / 1 tie / 2 loss, cell, annotator)
    guesses = []  # (source, passed for human, cell, annotator)
    comparisons = []
    positions = []  # (annotator name, left won, cell, annotator)
    for character, scenario, preferred, is_tie, guess, asked, left, right, name in rows:
        cell = character * 1000 + (scenario or 0)
        annotator = annotator_of[name or ""]
        pair = (left, right)
        compared = [s for s in pair if s != reference]
        if reference in pair and compared:
            other = compared[0]
            outcome = 1 if is_tie else (0 if preferred == other else 2)
            outcomes.append((other, outcome, cell, annotator))
        if asked:
            for source in pair:
                guesses.append((source, guess == source, cell, annotator))
        if is_tie:
            comparisons.append((left, right, True, cell, annotator))
        elif preferred is not None:
            loser = right if preferred == left else left
            comparisons.append((preferred, loser, False, cell, annotator))
            positions.append((name or "", preferred == left, cell, annotator))

    out: dict[str, Any] = {
        "preferences": {},
        "bradley_terry": {},
        "human_guess": {},
        "position_bias": {},
    }
    if outcomes:
        table = np.array(outcomes, dtype=np.int64)
        ids, group = index_of(table[:, 0])
        _c, cell = index_of(table[:, 2] - table[:, 2].min())
        won = clustered_proportions(
            table[:, 1] == 0, group, cell, table[:, 3], len(ids), confidence=rules.confidence
        )
        annotators = distinct_per_group(group, table[:, 3], len(ids))
        for i, source_id in enumerate(ids.tolist()):
            mine = table[group == i, 1]
            wins, ties, losses = (int((mine == k).sum()) for k in range(3))
            n = len(mine)
            _s, _n, deff, low, high = won[i]
            interval = proportion(wins, n, deff, low, high, annotators[i], rules)
            out["preferences"][sources[source_id].slug] = {
                "wins": wins,
                "ties": ties,
                "losses": losses,
                "n": n,
                "win_rate": clean(wins / n),
                "win_low": interval.pop("ci_low"),
                "win_high": interval.pop("ci_high"),
                **interval,
                "tie_rate": clean(ties / n),
                "loss_rate": clean(losses / n),
            }
    # Where every comparison is with the reference, the strengths are the win rates
    # again on a log-odds scale (each source's only games are against the reference):
    # they add nothing, and their intervals would count the same judgments twice.
    restates = reference is not None and all(reference in c[:2] for c in comparisons)
    out["bradley_terry_note"] = (
        "restates_win_rates"
        if comparisons and restates
        else ""
        if comparisons
        else "no_comparisons"
    )
    if comparisons and not restates:
        out["bradley_terry"] = strengths_of(comparisons, sources, rules)
    if guesses:
        table = np.array(guesses, dtype=np.int64)
        ids, group = index_of(table[:, 0])
        _c, cell = index_of(table[:, 2] - table[:, 2].min())
        passed = clustered_proportions(
            table[:, 1], group, cell, table[:, 3], len(ids), confidence=rules.confidence
        )
        annotators = distinct_per_group(group, table[:, 3], len(ids))
        for i, source_id in enumerate(ids.tolist()):
            times, asked, deff, low, high = passed[i]
            out["human_guess"][sources[source_id].slug] = {
                "passed_for_human": int(times),
                "asked": asked,
                "rate": clean(times / asked),
                **proportion(times, asked, deff, low, high, annotators[i], rules),
            }
    if positions:
        names = ["overall", *sorted({p[0] for p in positions})]
        left_won = np.array([p[1] for p in positions], dtype=float)
        position_cell = index_of(
            np.array([p[2] for p in positions]) - min(p[2] for p in positions)
        )[1]
        position_annotator = np.array([p[3] for p in positions], dtype=np.int64)
        group_of = {name: i for i, name in enumerate(names)}
        # Every decided judgment counts overall and for its annotator.
        group = np.concatenate(
            [
                np.zeros(len(positions), dtype=np.int64),
                np.array([group_of[p[0]] for p in positions]),
            ]
        )
        both = clustered_proportions(
            np.concatenate([left_won, left_won]),
            group,
            np.concatenate([position_cell, position_cell]),
            np.concatenate([position_annotator, position_annotator]),
            len(names),
            confidence=rules.confidence,
        )
        annotators = distinct_per_group(
            group, np.concatenate([position_annotator, position_annotator]), len(names)
        )
        for i, name in enumerate(names):
            left, n, deff, low, high = both[i]
            # One annotator's own position bias: the minimum is about judgments only.
            enough_annotators = annotators[i] if i == 0 else rules.min_annotators
            out["position_bias"][name] = {
                "left": int(left),
                "right": n - int(left),
                "n": n,
                "left_rate": clean(left / n),
                **proportion(left, n, deff, low, high, enough_annotators, rules),
            }
            out["position_bias"][name]["annotators"] = int(annotators[i])
    return out


def strengths_of(comparisons, sources, rules: Rules) -> dict:
    """Bradley-Terry log-strengths over all decided and tied pairs, each comparison
    (winner, loser, tie, cell, annotator). A separated source is reported as such with
    no number; a source whose comparisons fall short of the minimum information gets
    its point and no interval, as means do."""
    ids, index = index_of(np.array([c[0] for c in comparisons] + [c[1] for c in comparisons]))
    half = len(comparisons)
    _cells_ids, cluster = index_of(np.array([c[3] for c in comparisons]))
    annotator = np.array([c[4] for c in comparisons], dtype=np.int64)
    strengths = bradley_terry_estimates(
        index[:half],
        index[half:],
        [c[2] for c in comparisons],
        cluster,
        len(ids),
        draws=rules.draws,
        seed=rules.seed + 17,
        confidence=rules.confidence,
        annotator=annotator,
    )
    # Each comparison counts for both of its sources.
    played = np.concatenate([index[:half], index[half:]])
    games = np.bincount(played, minlength=len(ids))
    annotators = distinct_per_group(played, np.concatenate([annotator, annotator]), len(ids))
    enough = np.asarray(
        enough_information(
            games,
            annotators,
            min_judgments=rules.min_judgments,
            min_annotators=rules.min_annotators,
        )
    )
    out = {}
    for i, source_id in enumerate(ids.tolist()):
        status = strengths.status[i]
        shown = status != "separated"
        if status == "ok":
            enough[i] = enough_for_interval(enough[i], strengths.ci_low[i], strengths.ci_high[i])
        interval = shown and bool(enough[i])
        out[sources[source_id].slug] = {
            "log_strength": clean(strengths.log_strength[i]) if shown else None,
            "ci_low": clean(strengths.ci_low[i]) if interval else None,
            "ci_high": clean(strengths.ci_high[i]) if interval else None,
            "estimable": status == "ok",
            "status": status,
            "n": int(games[i]),
            "annotators": int(annotators[i]),
            "enough_data": bool(enough[i]),
        }
    return out
