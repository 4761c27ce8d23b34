"""Full recompute of a study's results at the published scale, and a comparison with the
straightforward approach.

Builds, on PostgreSQL, the full published study (10 LLMs vs human, 20 characters, both
rounds: 24,000 pairs) with 3 synthetic judgments per pair from 180 simulated annotators
(about 1.3 million ratings), drawn around known true source effects. Then:

- times `results_refresh` + low-agreement flags (everything the workers compute), median
  of several runs;
- times the straightforward approach for the agreement part: pandas pivots a raters x
  units matrix per metric and calls `krippendorff.alpha` (ordinal), against our count-based
  alpha for the same metrics (no bootstrap on either side), and prints the ratio;
- checks that the recovered source ranking equals the true one.

    .venv/bin/python bench/aggregate_scale.py [--runs 3] [--keep] [--reuse]
    BENCH_SCALE_DATABASE=chatanime_bench_scale_mine .venv/bin/python bench/aggregate_scale.py ...
"""

import argparse
import io
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench import report  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data" / "chatanime"
SERVER = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
# Its own name per engineer on a shared server (BENCH_SCALE_DATABASE), so runs do not collide.
DATABASE = os.environ.get("BENCH_SCALE_DATABASE", "chatanime_bench_scale")
ANNOTATORS = 180


def use_scale_database(*, migrate: bool = False) -> None:
    """Point Django at the scratch database (migrated first if asked) and set it up; the
    scripts that measure on the study kept here (`--keep`) start with this."""
    os.environ["DATABASE_URL"] = f"{SERVER.rsplit('/', 1)[0]}/{DATABASE}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chatanime_site.settings.local")
    os.environ.pop("REDIS_URL", None)
    if migrate:
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput"],
            cwd=REPO,
            check=True,
            capture_output=True,
        )
    import django

    django.setup()


def recreate_database(drop_only=False):
    import psycopg

    with psycopg.connect(SERVER.replace("postgres://", "postgresql://"), autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{DATABASE}"')
        if not drop_only:
            c.execute(f'CREATE DATABASE "{DATABASE}"')


def copy_rows(table: str, columns: list[str], rows):
    from django.db import connection

    buffer = io.StringIO()
    for row in rows:
        buffer.write("\t".join("\\N" if v is None else str(v) for v in row) + "\n")
    buffer.seek(0)
    with (
        connection.cursor() as cursor,
        cursor.connection.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy,
    ):
        copy.write(buffer.getvalue())


def build_synthetic_study(data: Path, seed: int = 1):
    from django.db import connection
    from django.utils import timezone

    from annotation import services
    from annotation.metric_definitions import PAIR_METRIC_SLUGS
    from annotation.models import AnnotatorProfile, Item, ItemAnswer, Metric
    from annotation.simulation import true_effects
    from dialogues.importer import import_chatanime
    from dialogues.models import Character, Source, SourceKind

    import_chatanime(data)
    study = services.study_create(
        name="Scale",
        reference=Source.objects.get(slug="human"),
        compared=list(Source.objects.filter(kind=SourceKind.LLM)),
        characters=list(Character.objects.all()),
    )
    services.study_open(study=study)
    truth = true_effects(study, seed)
    rng = np.random.default_rng(seed)
    users = [
        services.account_ensure(
            email=f"synthetic{i}@simulated.invalid", password="unused-" + str(i)
        )
        for i in range(ANNOTATORS)
    ]
    for user in users:
        profile = services.consent_give(user=user)
        AnnotatorProfile.objects.filter(pk=profile.pk).update(simulated=True, status="approved")
    severity = rng.normal(0, 0.35, size=ANNOTATORS)
    noise = np.abs(rng.normal(0.6, 0.15, size=ANNOTATORS))
    metric_id = dict(Metric.objects.values_list("slug", "pk"))
    slots = {}
    for item_id, slot, answer_id, source_id in ItemAnswer.objects.values_list(
        "item_id", "slot", "answer_id", "answer__source_id"
    ):
        slots.setdefault(item_id, {})[slot] = (answer_id, source_id)
    now = timezone.now().isoformat()
    items = list(Item.objects.filter(study=study).values_list("pk", flat=True))
    assignments, judgments, ratings = [], [], []
    next_id = 1
    for item_id in items:
        for annotator in rng.choice(ANNOTATORS, size=3, replace=False):
            user = users[annotator]
            order = [0, 1] if rng.random() < 0.5 else [1, 0]
            left, right = slots[item_id][order[0]][1], slots[item_id][order[1]][1]
            assignments.append(
                (
                    next_id,
                    f"synthetic-{next_id}",
                    item_id,
                    user.pk,
                    "submitted",
                    f"[{order[0]}, {order[1]}]",
                    now,
                    now,
                    "",
                    left,
                    right,
                )
            )
            totals = {}
            for slot in (0, 1):
                answer_id, source_id = slots[item_id][slot]
                total = 0
                for metric in PAIR_METRIC_SLUGS:
                    value = int(
                        np.clip(
                            round(
                                truth.quality[source_id][metric]
                                + severity[annotator]
                                + rng.normal(0, noise[annotator])
                            ),
                            1,
                            5,
                        )
                    )
                    ratings.append((next_id, answer_id, metric_id[metric], value))
                    total += value
                totals[slot] = total
            preferred = (
                None
                if abs(totals[0] - totals[1]) < 2
                else slots[item_id][0 if totals[0] > totals[1] else 1][0]
            )
            judgments.append(
                (
                    next_id,
                    item_id,
                    user.pk,
                    next_id,
                    now,
                    float(rng.gamma(4, 15)),
                    preferred,
                    preferred is None,
                    None,
                    False,
                    "",
                    False,
                    True,
                    study.pk,
                )
            )
            next_id += 1
    copy_rows(
        "annotation_assignment",
        [
            "id",
            "token",
            "item_id",
            "annotator_id",
            "state",
            "display_order",
            "served_at",
            "expires_at",
            "skip_reason",
            "left_source_id",
            "right_source_id",
        ],
        assignments,
    )
    copy_rows(
        "annotation_judgment",
        [
            "id",
            "item_id",
            "annotator_id",
            "assignment_id",
            "submitted_at",
            "seconds_on_task",
            "preferred_answer_id",
            "is_tie",
            "human_guess_id",
            "human_guess_asked",
            "comment",
            "excluded",
            "simulated",
            "study_id",
        ],
        judgments,
    )
    copy_rows("annotation_rating", ["judgment_id", "answer_id", "metric_id", "value"], ratings)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE annotation_item SET judgment_count = 3 WHERE study_id = %s", [study.pk]
        )
        # The rows above came with their ids: the identities go on after them, so that
        # what is written later (bench/lookahead_reads.py) gets ids of its own.
        for table in ("annotation_assignment", "annotation_judgment"):
            cursor.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), MAX(id)) FROM {table}"
            )
        cursor.execute("ANALYZE")
    return study, truth, len(ratings)


def straightforward_alpha(study):
    """pandas + krippendorff: a raters x units matrix per metric."""
    import krippendorff
    import pandas as pd
    from django.db import connection

    frame = pd.read_sql_query(
        "SELECT j.annotator_id, r.metric_id, j.item_id, r.answer_id, r.value FROM annotation_rating r "
        "JOIN annotation_judgment j ON j.id = r.judgment_id JOIN annotation_item i ON i.id = j.item_id "
        "WHERE i.study_id = %(study)s",
        connection.connection,
        params={"study": study.pk},
    )
    alphas = {}
    for metric_id, rows in frame.groupby("metric_id"):
        rows = rows.assign(unit=rows["item_id"].astype(str) + "-" + rows["answer_id"].astype(str))
        matrix = rows.pivot_table(
            index="annotator_id", columns="unit", values="value", aggfunc="first"
        )
        alphas[metric_id] = krippendorff.alpha(
            reliability_data=matrix.to_numpy(dtype=float),
            level_of_measurement="ordinal",
            value_domain=[1, 2, 3, 4, 5],
        )
    return alphas


def counted_alpha(study):
    from annotation.results.loading import load_ratings
    from annotation.stats.agreement import counts_from_ratings, krippendorff_alpha

    data = load_ratings(study)
    alphas = {}
    for metric_id in np.unique(data["metric"]).tolist():
        mask = data["metric"] == metric_id
        _units, unit_index = np.unique(
            data["item"][mask] * 1_000_000_000 + data["answer"][mask], return_inverse=True
        )
        counts = counts_from_ratings(unit_index.ravel(), data["value"][mask] - 1, 5)
        alphas[metric_id] = krippendorff_alpha(counts, [1, 2, 3, 4, 5], "ordinal")
    return alphas


def timed(function, runs):
    samples, result = [], None
    for _ in range(runs):
        started = time.perf_counter()
        result = function()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples), result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument(
        "--reuse", action="store_true", help="reuse the database a --keep run left behind"
    )
    args = parser.parse_args()

    if not args.reuse:
        recreate_database()
    use_scale_database(migrate=True)
    from django.conf import settings
    from django.db import connection

    from annotation import services
    from dialogues.models import Source

    started = time.perf_counter()
    if args.reuse:
        from annotation.models import Rating, Study
        from annotation.simulation import true_effects

        study = Study.objects.get(name="Scale")
        truth, n_ratings = true_effects(study, 1), Rating.objects.count()
        print(f"synthetic study reused: {n_ratings:,} ratings")
    else:
        study, truth, n_ratings = build_synthetic_study(args.data)
        print(
            f"synthetic study: 24,000 pairs x 3 judgments = {n_ratings:,} ratings "
            f"(built in {time.perf_counter() - started:.0f} s)"
        )

    def full_recompute():
        return services.study_recompute(study=study)

    seconds, results = timed(full_recompute, args.runs)
    report(
        f"full recompute, {n_ratings:,} ratings",
        f"{settings.CHATANIME_BOOTSTRAP_DRAWS} bootstrap draws",
        f"{seconds:.2f} s median",
    )
    print(
        f"full recompute (bootstrap draws = {settings.CHATANIME_BOOTSTRAP_DRAWS}): median {seconds:.2f} s over {args.runs} runs"
    )

    ours_seconds, ours = timed(lambda: counted_alpha(study), args.runs)
    theirs_seconds, theirs = timed(lambda: straightforward_alpha(study), args.runs)
    worst = max(abs(ours[m] - theirs[m]) for m in ours)
    print(
        f"ordinal alpha for 9 metrics: counts {ours_seconds:.2f} s vs pandas+krippendorff {theirs_seconds:.2f} s "
        f"(median of {args.runs}); {theirs_seconds / ours_seconds:.1f}x faster; largest difference {worst:.1e}"
    )

    slugs = dict(Source.objects.values_list("pk", "slug"))
    board = results.payload["leaderboard"]
    recovered = sorted(
        board, key=lambda s: -np.mean([board[s][m]["mean"] for m in board[s] if ":" not in m])
    )
    expected = [slugs[s] for s in truth.ranking()]
    print("true ranking:      " + " > ".join(expected))
    print("recovered ranking: " + " > ".join(recovered))
    print("ranking recovered: " + ("yes" if recovered == expected else "NO"))
    report(
        "ordinal alpha, 9 metrics",
        "vs pandas + krippendorff",
        f"{theirs_seconds / ours_seconds:.1f}x faster, max difference {worst:.1e}",
    )
    report(
        "recovered source ranking", "11 sources", "equal" if recovered == expected else "DIFFERENT"
    )
    if not args.keep:
        connection.close()
        recreate_database(drop_only=True)


if __name__ == "__main__":
    main()
