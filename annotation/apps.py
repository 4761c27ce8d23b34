from django.apps import AppConfig
from django.db.backends.signals import connection_created
from django.db.models.signals import m2m_changed, post_delete, post_migrate, post_save
from django.utils.translation import gettext_lazy as _


def _ensure_metrics(sender, **kwargs):
    """The rating form is built from the Metric rows. They come with the migrations, and
    come back after anything that empties the tables (`manage.py flush`, test teardown)."""
    from .metric_definitions import metrics_ensure
    from .models import Metric
    from .selectors import metrics_cache_clear

    metrics_ensure(Metric)
    metrics_cache_clear()


# Models whose changes alter what one annotator may rate.
_ANNOTATOR_MODELS = ("AnnotatorProfile", "Qualification")


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = _("Annotation")

    def ready(self):
        from . import tasks  # noqa: F401  (registered, so common.enqueue can send them by name)
        from .selectors import metrics_cache_clear
        from .sql import sqlite_functions

        post_migrate.connect(_ensure_metrics, sender=self)
        connection_created.connect(sqlite_functions, dispatch_uid="annotation-sqlite-functions")
        # A label edited in the admin shows at once in this process, within a minute in
        # the others (selectors.METRICS_CACHE_SECONDS).
        Metric = self.get_model("Metric")
        post_save.connect(metrics_cache_clear, sender=Metric)
        post_delete.connect(metrics_cache_clear, sender=Metric)
        self._connect_worklists()
        self._connect_staffing()

    def _connect_staffing(self):
        """Every process's copy of a study's staffing (selectors.staffing) goes stale when
        staff change who may rate what or how much: a study, its characters, members and
        caps; an annotator's profile or qualifications."""
        from .selectors.staffing import staffing_changed

        Study = self.get_model("Study")
        StudyMembership = self.get_model("StudyMembership")
        models = [Study, StudyMembership, *(self.get_model(n) for n in _ANNOTATOR_MODELS)]
        for model in models:
            for signal in (post_save, post_delete):
                signal.connect(staffing_changed, sender=model, dispatch_uid=f"staffing-{model}")
        for through in (Study.characters.through, StudyMembership.characters.through):
            m2m_changed.connect(
                staffing_changed, sender=through, dispatch_uid=f"staffing-{through}"
            )

    def _connect_worklists(self):
        """Annotators' kept worklists (services.worklists) go stale when staff change who
        may rate what: everyone's with a study or its characters, and when a study's first
        member makes it members-only or its last one opens it to all again; one
        annotator's with their membership, profile or qualifications."""
        from .services.worklists import plans_forget, plans_forget_all

        Study = self.get_model("Study")
        StudyMembership = self.get_model("StudyMembership")
        post_save.connect(plans_forget_all, sender=Study, dispatch_uid="worklists-study")
        post_delete.connect(plans_forget_all, sender=Study, dispatch_uid="worklists-study")
        m2m_changed.connect(
            plans_forget_all, sender=Study.characters.through, dispatch_uid="worklists-study-c"
        )

        def membership_changed(sender, instance, **kwargs):
            # A panel lets hundreds of participants join a study within minutes: one
            # joining changes no one else's plan, unless the study had no other member.
            # (Two first members joining at once each see no other: both forget all.)
            others = StudyMembership.objects.filter(study_id=instance.study_id).exclude(
                pk=instance.pk
            )
            if not others.exists():
                plans_forget_all()
            else:
                plans_forget(instance.annotator_id)

        def member_characters_changed(sender, instance, reverse, **kwargs):
            if reverse:  # from a character's side: whose, is not said here
                plans_forget_all()
            else:
                plans_forget(instance.annotator_id)

        post_save.connect(
            membership_changed, sender=StudyMembership, dispatch_uid="worklists-m", weak=False
        )
        post_delete.connect(
            membership_changed, sender=StudyMembership, dispatch_uid="worklists-m", weak=False
        )
        m2m_changed.connect(
            member_characters_changed,
            sender=StudyMembership.characters.through,
            dispatch_uid="worklists-m-c",
            weak=False,
        )

        def annotator_changed(sender, instance, **kwargs):
            user_id = getattr(instance, "user_id", None)
            if user_id is None:  # a qualification: its profile's user
                user_id = (
                    self.get_model("AnnotatorProfile")
                    .objects.filter(pk=instance.profile_id)
                    .values_list("user_id", flat=True)
                    .first()
                )
            if user_id is not None:
                plans_forget(user_id)

        for name in _ANNOTATOR_MODELS:
            model = self.get_model(name)
            post_save.connect(
                annotator_changed, sender=model, dispatch_uid=f"worklists-{name}", weak=False
            )
            post_delete.connect(
                annotator_changed, sender=model, dispatch_uid=f"worklists-{name}-d", weak=False
            )
