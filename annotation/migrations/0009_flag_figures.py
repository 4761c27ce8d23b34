"""Quality flags and automatic pauses keep their numbers as data instead of English
sentences, so that the staff pages can put them into words in either UI language.

Existing sentences are parsed back into figures; one that does not parse is kept
verbatim under "text"."""

import re

from django.db import migrations, models

FLAG_SENTENCES = {
    "failed_check": (re.compile(r"^(?P<ratings>\d+) rating\(s\) outside"), {"ratings": int}),
    "straight_lining": (re.compile(r"^every rating is (?P<value>\d+)$"), {"value": int}),
    "too_fast": (
        re.compile(r"^(?P<seconds>[\d.]+) s, below (?P<minimum>[\d.e+-]+) s$"),
        {"seconds": float, "minimum": float},
    ),
    "low_agreement": (
        re.compile(
            r"^mean distance (?P<distance>[\d.]+) from the others over (?P<ratings>\d+) ratings$"
        ),
        {"distance": float, "ratings": int},
    ),
}
PAUSE_SENTENCE = re.compile(r"^paused automatically after (?P<flags>\d+) quality flags in (?P<study>.+)$")


def figures_of(kind: str, detail: str) -> dict:
    if not detail:
        return {}
    pattern, types = FLAG_SENTENCES.get(kind, (None, {}))
    found = pattern.match(detail) if pattern else None
    if found is None:
        return {"text": detail}
    return {name: convert(found[name]) for name, convert in types.items()}


def sentences_to_figures(apps, schema_editor):
    QualityFlag = apps.get_model("annotation", "QualityFlag")
    AnnotatorProfile = apps.get_model("annotation", "AnnotatorProfile")
    Study = apps.get_model("annotation", "Study")
    for flag in QualityFlag.objects.exclude(detail=""):
        flag.figures = figures_of(flag.kind, flag.detail)
        flag.save(update_fields=["figures"])
    for profile in AnnotatorProfile.objects.filter(paused_reason__startswith="paused automatically"):
        found = PAUSE_SENTENCE.match(profile.paused_reason)
        if found is None:
            continue
        study = Study.objects.filter(slug=found["study"]).first()
        profile.automatic_pause = {
            "flags": int(found["flags"]),
            "study": study.name if study else found["study"],
        }
        profile.paused_reason = ""
        profile.save(update_fields=["automatic_pause", "paused_reason"])


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0008_staff_operations"),
    ]

    operations = [
        migrations.AddField(
            model_name="annotatorprofile",
            name="automatic_pause",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="qualityflag",
            name="figures",
            field=models.JSONField(blank=True, default=dict),
        ),
        # Going back leaves the old column empty: the figures are what is kept.
        migrations.RunPython(sentences_to_figures, migrations.RunPython.noop),
        migrations.RemoveField(
            model_name="qualityflag",
            name="detail",
        ),
    ]
