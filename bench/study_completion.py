"""Does a study finish with the number of annotators that create_study names?

Simulated annotators (annotation.simulation) work through a study one item at a time,
in turn, until none of them gets another item; the figure is how many judgments the
study still lacks. Each layout runs with several seeds (the lease order is random) on
a fresh SQLite database with the demo data of dialogues/demo_data (3 characters,
8 scenarios, human + 3 LLMs), once choosing items greedily (the look-ahead of
annotation.selectors.ordering switched off) and once as served.

    .venv/bin/python bench/study_completion.py [--seeds 20] [--layout N]
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench import report
from bench.import_speed import REPO, manage, run_script

LAYOUTS = {
    "pairs only, overlap 3, rounds 1-2": {"overlap": 3, "rounds": [1, 2], "diversity": False},
    "with diversity sets, overlap 3, rounds 1-2": {
        "overlap": 3,
        "rounds": [1, 2],
        "diversity": True,
    },
    "with diversity sets, overlap 2, round 1": {"overlap": 2, "rounds": [1], "diversity": True},
}

RUN = """
import json, django
django.setup()
from django.conf import settings
settings.CHATANIME_BOOTSTRAP_DRAWS = 10
from annotation import services
from annotation.selectors import ordering
if {greedy!r}:
    ordering.LOOKAHEAD_SHARE = ordering.LOOKAHEAD_STAFFING = 0
from annotation.models import Item, ItemKind
from annotation.simulation import annotators_for, simulate_study
from dialogues.importer import import_chatanime
from dialogues.models import Character, Source, SourceKind
import_chatanime({data!r})
layout = {layout!r}
study = services.study_create(
    name="bench", reference=Source.objects.get(kind=SourceKind.HUMAN),
    compared=list(Source.objects.filter(kind=SourceKind.LLM)),
    characters=list(Character.objects.all()), rounds=layout["rounds"],
    overlap=layout["overlap"], include_diversity=layout["diversity"],
)
services.study_open(study=study)
annotators = annotators_for(study)
simulate_study(study=study, annotators=annotators, seed={seed})
items = Item.objects.filter(study=study)
def missing(kind):
    return sum(study.overlap - n for n in items.filter(kind=kind).values_list("judgment_count", flat=True))
print(json.dumps({{
    "annotators": annotators,
    "judgments": items.count() * study.overlap,
    "missing_pairs": missing(ItemKind.PAIR),
    "missing_sets": missing(ItemKind.DIVERSITY),
}}))
"""


def run(layout: dict, seed: int, url: str, greedy: bool) -> dict:
    manage(url, "migrate", "--noinput")
    code = RUN.format(
        data=str(REPO / "dialogues" / "demo_data"), layout=layout, seed=seed, greedy=greedy
    )
    out = run_script(url, code)
    return json.loads(out.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--layout", type=int, help="run only this layout (0, 1, 2)")
    args = parser.parse_args()
    layouts = list(LAYOUTS.items())
    if args.layout is not None:
        layouts = [layouts[args.layout]]
    ways = {"greedy": True, "served": False}
    print(
        f"{'layout':45} {'annotators':>10} {'judgments':>9} {'choice':>7}  "
        "missing per seed (pairs + sets)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for name, layout in layouts:
            for way, greedy in ways.items():
                results = [
                    run(
                        layout,
                        seed,
                        f"sqlite:///{tmp}/completion-{way}-{seed}-{len(name)}.sqlite3",
                        greedy,
                    )
                    for seed in range(args.seeds)
                ]
                missing = ", ".join(f"{r['missing_pairs']} + {r['missing_sets']}" for r in results)
                lacking = sum(r["missing_pairs"] + r["missing_sets"] for r in results)
                print(
                    f"{name:45} {results[0]['annotators']:>10} {results[0]['judgments']:>9} "
                    f"{way:>7}  {lacking} in all: {missing}",
                    flush=True,
                )
                report(
                    "study completion",
                    f"{name}, {results[0]['annotators']} annotators, {way}",
                    f"{lacking} of {results[0]['judgments'] * len(results)} judgments missing "
                    f"over {len(results)} seeds",
                )


if __name__ == "__main__":
    main()
