"""What `bench/load.py` prepares before the server starts: the published data imported,
one full study per staffing case (24,000 pairs each), and approved annotators with live
sessions.

Two cases, as studies are staffed:
- tight: the study has about the annotators it needs (`ordering.tightly_staffed`: at
  least as many as each character needs, at most 1.5 times as many). Each annotator is
  a member for a few characters, so that every character has about STAFFING_TIGHT times
  the annotators it needs: the case a real study with a budget is in, where every
  request plans with the look-ahead.
- generous: every annotator may rate every character, at least STAFFING_GENEROUS times
  what each needs (idle accounts make up the difference for small levels).

Each case has annotators of its own (one per connection of each level, never reused),
and each case's study is open only while its levels run.
"""

import math
import secrets
import string

STAFFING_TIGHT = 1.15
# At least this many times the annotators a character needs in the generous case.
STAFFING_GENEROUS = 3


def csrf_secret() -> str:
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(32))


def prepare(args, host, cases: list[str], users: int) -> dict:
    """Import the data, open one study per case, make each case's annotators; count the
    queries of the annotator pages with one more account; say how each case is staffed."""
    import django

    django.setup()
    from django.db import connection

    from annotation import services
    from annotation.metric_definitions import PAIR_METRIC_SLUGS
    from annotation.models import Study, StudyStatus
    from annotation.selectors import study_capacity
    from annotation.selectors.ordering import tightly_staffed
    from dialogues.importer import import_chatanime
    from dialogues.models import Character, Source, SourceKind

    import_chatanime(args.data)
    characters = list(Character.objects.order_by("pk"))
    prepared: dict = {"cases": {}, "metrics": PAIR_METRIC_SLUGS, "host": host}
    for case in cases:
        study = services.study_create(
            name=f"Load {case}",
            reference=Source.objects.get(slug="human"),
            compared=list(Source.objects.filter(kind=SourceKind.LLM)),
            characters=characters,
        )
        items = services.study_open(study=study)
        needed = max(row.needed for row in study_capacity(study))
        accounts, per_character = _annotators(study, case, users, needed, characters)
        Study.objects.filter(pk=study.pk).update(status=StudyStatus.PAUSED)
        prepared["cases"][case] = {
            "study": study.pk,
            "items": items,
            "accounts": accounts,
            "needed": needed,
            "raters_per_character": per_character,
            "tightly_staffed": len(tightly_staffed(study)),
            "characters": len(characters),
        }
    # The pages' queries are counted on the first case's study, open for it alone.
    first = Study.objects.get(pk=prepared["cases"][cases[0]]["study"])
    first.status = StudyStatus.OPEN
    first.save(update_fields=["status"])
    prepared["queries"], prepared["profile"] = _count_queries(args, first)
    first.status = StudyStatus.PAUSED
    first.save(update_fields=["status"])
    connection.close()
    return prepared


def _annotators(study, case: str, users: int, needed: int, characters) -> tuple[list, int]:
    """The case's annotators with live sessions (the first `users` are the levels'), and
    how many may rate each character. Tight: a pool of at least STAFFING_TIGHT times the
    annotators a character needs, each a member for as few characters as give every
    character that many, in turn; generous: at least STAFFING_GENEROUS times as many,
    every character."""
    from annotation.models import StudyMembership

    n_characters = len(characters)
    if case == "tight":
        pool = max(users, math.ceil(STAFFING_TIGHT * needed))
        each = min(n_characters, math.ceil(STAFFING_TIGHT * needed * n_characters / pool))
    else:
        pool, each = max(users, STAFFING_GENEROUS * needed), n_characters
    accounts = []
    for n in range(pool):
        # The tight case's annotators rate only the study they are members of, so they
        # never count as staff of the other case's.
        user, session = _approved_annotator(
            f"load-{case}-{n}@example.com", characters, members_only=case == "tight"
        )
        if case == "tight":
            membership = StudyMembership.objects.create(study=study, annotator=user)
            membership.characters.set(
                [characters[(n * each + j) % n_characters] for j in range(each)]
            )
        # "-": the annotator's first request asks /annotate/ for an item; every later
        # one is a submission that receives the next item.
        accounts.append({"session": session, "csrf": csrf_secret(), "token": "-"})
    return accounts[:users], pool * each // n_characters


def _approved_annotator(email: str, characters, *, members_only: bool = False):
    from django.test import Client
    from django.test.utils import override_settings

    from annotation import services
    from annotation.models import ProfileStatus, Qualification

    # Sessions are made here, so a slow password hash would only slow the preparation.
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        user = services.account_ensure(email=email, password="load-password")
    profile = services.consent_give(user=user)
    Qualification.objects.bulk_create(
        Qualification(profile=profile, character=c, status="approved") for c in characters
    )
    profile.status = ProfileStatus.APPROVED
    profile.members_only = members_only
    profile.save()
    client = Client()
    client.force_login(user)
    return user, client.cookies["sessionid"].value


def _count_queries(args, study) -> tuple[dict, str]:
    """Queries per annotator page, counted in-process with an account of its own."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from annotation.metric_definitions import PAIR_METRIC_SLUGS
    from annotation.models import Assignment, StudyMembership
    from dialogues.models import Character

    user, _session = _approved_annotator("load-queries@example.com", Character.objects.all())
    if StudyMembership.objects.filter(study=study).exists():
        StudyMembership.objects.create(study=study, annotator=user)
    client = Client(headers={"X-Forwarded-Proto": "https"})
    client.force_login(user)
    form = {f"{p}-{slug}": "4" for p in "ab" for slug in PAIR_METRIC_SLUGS}
    form["preference"] = "tie"

    def count(method, url, **kwargs):
        with CaptureQueriesContext(connection) as queries:
            response = getattr(client, method)(url, secure=True, **kwargs)
        assert response.status_code in (200, 302), (url, response.status_code)
        return len(queries)

    queries = {"home": count("get", "/"), "screening hub": count("get", "/screening/")}
    Assignment.objects.filter(annotator=user).delete()
    queries["next item (redirect)"] = count("get", "/annotate/")
    token = Assignment.objects.get(annotator=user, state="active").token
    queries["rating page"] = count("get", f"/annotate/{token}/")
    queries["submit + next item"] = count(
        "post", f"/annotate/{token}/", data=form, headers={"HX-Request": "true"}
    )
    token = Assignment.objects.get(annotator=user, state="active").token
    queries["skip + next item"] = count(
        "post", f"/annotate/{token}/skip/", data={"reason": "unclear"}
    )
    profile = cpu_profile(client, user, form, args.profile) if args.profile else ""
    Assignment.objects.filter(annotator=user, state="active").update(state="expired")
    return queries, profile


def cpu_profile(client, user, form, cycles: int) -> str:
    """Where a judgment's CPU goes: `cycles` submit + next cycles in-process under
    cProfile, the functions with the most cumulative time, then with the most own time.
    The form is posted URL-encoded, as browsers and wrk send it (the test client's default,
    multipart, costs about a millisecond more to parse)."""
    import cProfile
    import io
    import pstats
    from urllib.parse import urlencode

    from annotation.models import Assignment

    client.get("/annotate/", secure=True)
    profiler = cProfile.Profile()
    for _ in range(cycles):
        token = Assignment.objects.get(annotator=user, state="active").token
        profiler.enable()
        client.post(
            f"/annotate/{token}/",
            data=urlencode(form, doseq=True),
            content_type="application/x-www-form-urlencoded",
            headers={"HX-Request": "true"},
            secure=True,
        )
        profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(45)
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(30)
    return out.getvalue()


def open_only(case_study: int, other_studies: list[int]) -> None:
    """Open this case's study and pause the others, as staff would (every process's plans
    and staffing copies go stale with it)."""
    import django

    django.setup()
    from django.db import connection

    from annotation.models import Assignment, Study, StudyStatus

    for pk in other_studies:
        study = Study.objects.get(pk=pk)
        study.status = StudyStatus.PAUSED
        study.save(update_fields=["status"])
    study = Study.objects.get(pk=case_study)
    study.status = StudyStatus.OPEN
    study.save(update_fields=["status"])
    # Leases still held in a paused study would be the annotators' current items.
    Assignment.objects.filter(item__study_id__in=other_studies, state="active").update(
        state="expired"
    )
    connection.close()
