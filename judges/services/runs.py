"""Judge runs: started or continued for one configuration, failed, finished."""

import logging

from django.db import transaction
from django.utils import timezone

from annotation.models import AuditAction, Item, ItemKind, Study
from annotation.services import audit
from collection.models import EndpointKeyMissing, ModelEndpoint
from common import enqueue
from common.run_controls import RunControls
from dialogues.models import Source, SourceKind

from ..models import JudgeRun, JudgeRunStatus
from ..prompts import PROMPT_VERSION, rubric_metrics, rubric_version, system_prompt
from ..selectors import metrics_of_pairs, run_complete
from .errors import JudgeError

logger = logging.getLogger(__name__)


def run_start(
    *,
    study: Study,
    endpoint: ModelEndpoint,
    language: str = "zh",
    both_orders: bool = False,
    items: int | None = None,
    self_source: Source | None = None,
) -> JudgeRun:
    """Continue the run of this configuration (study, endpoint, model, temperature,
    language, prompt and rubric version), or start it. The key is read first and the
    study checked, so a refusal creates nothing."""
    try:
        endpoint.api_key()
    except EndpointKeyMissing as error:
        raise JudgeError("missing_key", str(error)) from None
    if language not in ("zh", "en"):
        raise JudgeError("bad_language", f"language {language!r} is not zh or en")
    if items is not None and items < 1:
        raise JudgeError("bad_items", "--items must be at least 1")
    if self_source is not None and self_source.kind != SourceKind.LLM:
        # Self-preference is a model's bias towards its own family's answers.
        raise JudgeError(
            "not_llm_source",
            f"{self_source.slug!r} is written by human fans, not by a model family",
        )
    if not Item.objects.filter(study=study, kind=ItemKind.PAIR, is_gold=False).exists():
        raise JudgeError("no_items", f"study {study.slug} has no answer pairs to judge")
    metrics = rubric_metrics(metrics_of_pairs(), language)
    if not metrics:
        raise JudgeError("no_metrics", "there are no pair metrics to rate")
    fields = {
        "system_prompt": system_prompt(metrics, language),
        "both_orders": both_orders,
        "items_requested": items,
        "self_source": self_source,
        "status": JudgeRunStatus.RUNNING,
        "error": "",
        "finished_at": None,
    }
    with transaction.atomic():
        run, _created = JudgeRun.objects.select_for_update().update_or_create(
            study=study,
            endpoint=endpoint,
            model=endpoint.model,
            temperature=endpoint.temperature,
            language=language,
            prompt_version=PROMPT_VERSION,
            rubric_version=rubric_version(metrics),
            defaults=fields,
        )
    return run


def run_fail(*, run: JudgeRun, error: str) -> None:
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRunStatus.FAILED, error=error[:4000])
    run.refresh_from_db(fields=["status", "error"])
    logger.warning("judge run %s failed: %s", run.pk, error)


def run_finish_if_complete(*, run: JudgeRun) -> bool:
    if not run_complete(run):
        return False
    JudgeRun.objects.filter(pk=run.pk, status=JudgeRunStatus.RUNNING).update(
        status=JudgeRunStatus.FINISHED, finished_at=timezone.now()
    )
    run.refresh_from_db(fields=["status", "finished_at"])
    return run.status == JudgeRunStatus.FINISHED


def run_control(*, run: JudgeRun, action: str, by=None) -> JudgeRun:
    """Pause, resume or cancel, as a collection run's controls do. Calls in flight finish
    and are kept; queued ones find the run stopped and call no model. Resuming enqueues
    the missing calls again; starting the same configuration again continues any run,
    a cancelled one too."""
    return _CONTROLS.apply(run=run, action=action, by=by)


RUN_ENQUEUE_TASK = "judges.tasks.judge_run_enqueue"
CALL_TASK = "judges.tasks.judge_call"


def run_enqueue(*, run: JudgeRun) -> None:
    """Hand the run's missing calls to the workers once the transaction commits."""
    enqueue.on_commit(RUN_ENQUEUE_TASK, run.pk, long_running=True)


_CONTROLS = RunControls(
    model=JudgeRun,
    statuses=JudgeRunStatus,
    audited={
        "pause": AuditAction.JUDGE_RUN_PAUSE,
        "resume": AuditAction.JUDGE_RUN_RESUME,
        "cancel": AuditAction.JUDGE_RUN_CANCEL,
    },
    refusal=JudgeError,
    record=audit.record,
    enqueue=run_enqueue,
)
