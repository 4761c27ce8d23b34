from datetime import datetime, timedelta

from django import template
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.timesince import timesince
from django.utils.translation import get_language, gettext, gettext_lazy

from ..services import COMMENT_MAX_CHARS

register = template.Library()


@register.filter
def lookup(mapping, key):
    """`posted|lookup:name`: a form value by a computed field name."""
    return mapping.get(key, "") if hasattr(mapping, "get") else ""


# The fields staff decisions change, as the audit trail names them (keys of an event's
# before and after); a key without a name here shows as it is stored.
CHANGE_LABELS = {
    "annotator": gettext_lazy("annotator"),
    "bonus_minor_units": gettext_lazy("bonus (minor units)"),
    "answer_r1": gettext_lazy("round-1 answer"),
    "answer_r2": gettext_lazy("round-2 answer"),
    "cap": gettext_lazy("cap"),
    "characters": gettext_lazy("characters"),
    "check_positions": gettext_lazy("attention checks after items"),
    "checks_failed": gettext_lazy("attention checks failed"),
    "code": gettext_lazy("code given"),
    "compared_sources": gettext_lazy("compared sources"),
    "completion_code": gettext_lazy("completion code"),
    "completion_url_template": gettext_lazy("completion URL"),
    "continued": gettext_lazy("continued"),
    "currency": gettext_lazy("currency"),
    "decision": gettext_lazy("decision"),
    "decision_note": gettext_lazy("reason given"),
    "design": gettext_lazy("design"),
    "endpoint": gettext_lazy("endpoint"),
    "excluded": gettext_lazy("excluded"),
    "failed_checks_code": gettext_lazy("failed-checks code"),
    "gold_expectations": gettext_lazy("gold expectations"),
    "id_parameter": gettext_lazy("id parameter"),
    "is_gold": gettext_lazy("gold item"),
    "is_open": gettext_lazy("open to the panel"),
    "items": gettext_lazy("items"),
    "items_generated": gettext_lazy("items generated"),
    "items_per_participant": gettext_lazy("items per participant"),
    "leases_released": gettext_lazy("leases released"),
    "minutes": gettext_lazy("time limit in minutes"),
    "name": gettext_lazy("name"),
    "note": gettext_lazy("note"),
    "overlap": gettext_lazy("overlap"),
    "paused_reason": gettext_lazy("reason for pausing"),
    "places": gettext_lazy("places"),
    "skips_per_participant": gettext_lazy("skips per participant"),
    "skips_allowed": gettext_lazy("skips allowed"),
    "profile_status": gettext_lazy("annotator status"),
    "prolific_study_id": gettext_lazy("Prolific study id"),
    "provider": gettext_lazy("panel"),
    "question_r2": gettext_lazy("follow-up question"),
    "quiz": gettext_lazy("character quiz"),
    "reference_source": gettext_lazy("reference source"),
    "resolved": gettext_lazy("resolved"),
    "review_note": gettext_lazy("review note"),
    "reward_minor_units": gettext_lazy("reward per participant"),
    "rounds": gettext_lazy("rounds"),
    "scenarios": gettext_lazy("scenarios"),
    "screen_out_code": gettext_lazy("screen-out code"),
    "simulator": gettext_lazy("user simulator"),
    "source": gettext_lazy("source"),
    "state": gettext_lazy("state"),
    "status": gettext_lazy("status"),
    "text": gettext_lazy("text"),
    "voided_checks": gettext_lazy("attention checks set aside"),
}


@register.filter
def ago(moment: datetime | None) -> str:
    """`computed_at|ago`: "5 minutes ago", or "just now" within a minute (where
    `timesince` would say "0 minutes"), in the page's language."""
    if moment is None:
        return ""
    if timezone.now() - moment < timedelta(minutes=1):
        return gettext("just now")
    return gettext("%(ago)s ago") % {"ago": timesince(moment)}


@register.filter
def change_label(key: str) -> str:
    """`key|change_label`: a field of an audit event's before or after, by name."""
    return str(CHANGE_LABELS.get(key, key))


@register.filter
def pairs(mapping):
    """`event.after|pairs`: a dict's (key, value) pairs. `mapping.items` in a template
    would look up a key named "items" first."""
    return list(mapping.items()) if isinstance(mapping, dict) else []


# Rendered rating controls, per process, by what they show (see `rating_controls`).
CONTROLS_KEPT = 64
_rendered_controls: dict[tuple, str] = {}


# The wording of each list of metrics the selectors handed out, per language, with the
# list itself: held, its id cannot be reused by another list while it is here.
_wordings: dict[tuple[int, str], tuple[list, tuple]] = {}


def _wording(metrics: list) -> tuple:
    """The metrics' wording as this language shows it, part of the scales' key: an edit
    in the admin makes a new key. Worked out once per list of metrics and language: the
    selectors keep one list for a minute (`selectors.metrics_for`) and a fresh one after
    an edit, and working it out on every page cost more than rendering what changes."""
    language = get_language()
    found = _wordings.get((id(metrics), language))
    if found is None or found[0] is not metrics:
        if len(_wordings) >= CONTROLS_KEPT:
            _wordings.clear()
        wording = tuple(
            (metric.slug, metric.label, metric.definition, tuple(metric.anchor_list()))
            for metric in metrics
        )
        found = _wordings[(id(metrics), language)] = (metrics, wording)
    return found[1]


@register.simple_tag
def rating_controls(item, posted):
    """Everything the annotator fills in for `item` (`selectors.ShownItem`): every metric
    with its definition and a row of 1–5 radio buttons per answer, the overall
    preference, the fan guess where the study asks it, the comment and the submit
    button. They are most of the rating page's template nodes and nearly all of its
    translated text, yet the same for every item of a kind in one language, so each
    process renders them once per language, kind of item, wording of the metrics and
    fan guess asked or not; after that they cost a dictionary lookup. A page that shows
    what was posted (a refused submission) is rendered as it is."""
    context = {"item": item, "posted": posted, "comment_max": COMMENT_MAX_CHARS}
    if posted:
        return render_to_string("annotation/_controls.html", context)
    key = (
        get_language(),
        item.kind,
        tuple((answer.position, answer.letter) for answer in item.answers),
        item.ask_human_guess,
        _wording(item.metrics),
    )
    return _rendered_once(_rendered_controls, key, "annotation/_controls.html", context)


# Templates of fixed text, rendered, by template and language (see `per_language`).
_rendered_per_language: dict[tuple[str, str], str] = {}


@register.simple_tag
def per_language(template_name):
    """`template_name` rendered once per language and process, then reused: for a
    template of fixed, translated text that reads nothing from the page's context, shown
    on every rating page (each `{% translate %}` costs a catalogue lookup per page)."""
    key = (template_name, get_language())
    return _rendered_once(_rendered_per_language, key, template_name)


def _rendered_once(kept: dict, key, template_name: str, context=None) -> str:
    """`template_name` as rendered the first time `key` was asked for in `kept`; at most
    CONTROLS_KEPT renderings are kept per store."""
    rendered = kept.get(key)
    if rendered is None:
        if len(kept) >= CONTROLS_KEPT:
            kept.clear()
        rendered = kept[key] = render_to_string(template_name, context)
    return rendered
