"""CPU of rendering the rating page an annotator receives after each submission (the
`work` part of `annotation/annotate.html`, as htmx asks for it), for a pair leased in the
database `bench/load.py --keep` leaves behind, in English and in Chinese. Medians over
7 passes of 300 renders, the process's own CPU; the page's data are read once, before.

    .venv/bin/python bench/load.py --users 50 --crowd '' --seconds 20 --keep
    .venv/bin/python bench/rating_page.py

To compare two commits, run the script of each checkout against the same database; it
only reads.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from bench.loop_cpu import django_env  # noqa: E402

PASSES, RENDERS = 7, 300


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", default="chatanime_bench_load", help="kept by load.py")
    args = parser.parse_args()
    os.environ.update(django_env(args.database))
    import django

    django.setup()
    from django.middleware.csrf import get_token
    from django.template.loader import render_to_string
    from django.test import RequestFactory
    from django.utils import translation

    from annotation import selectors
    from annotation.models import Assignment, AssignmentState, ItemKind
    from annotation.views.annotate import TEMPLATE

    lease = (
        Assignment.objects.filter(state=AssignmentState.ACTIVE, item__kind=ItemKind.PAIR)
        .select_related("item__character", "item__scenario", "item__study")
        .first()
    )
    if lease is None:
        raise SystemExit(f"no pair leased in {args.database}: run bench/load.py --keep first")
    request = RequestFactory().post(f"/annotate/{lease.token}/", headers={"HX-Request": "true"})
    request.user = lease.annotator
    get_token(request)
    context = {
        "progress": selectors.progress_of(lease.annotator, study_id=lease.item.study_id),
        "error": None,
        "notice": None,
        "posted": {},
        "item": selectors.shown_item(lease),
    }
    for language in ["en", "zh-hans"]:
        with translation.override(language):
            for _ in range(50):  # templates compiled, fixed parts rendered once
                render_to_string(f"{TEMPLATE}#work", context, request=request)
            passes = []
            for _ in range(PASSES):
                started = time.process_time()
                for _ in range(RENDERS):
                    render_to_string(f"{TEMPLATE}#work", context, request=request)
                passes.append((time.process_time() - started) / RENDERS * 1e6)
        print(
            f"{language}: {statistics.median(passes):.0f} µs per render"
            f" (passes {', '.join(f'{p:.0f}' for p in passes)})"
        )


if __name__ == "__main__":
    main()
