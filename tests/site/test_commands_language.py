"""Management commands speak English whatever the platform's default language: their
options, help and documentation are English, and a service's refusal they pass on must
not arrive in Chinese inside an English line."""

import pkgutil
from importlib import import_module

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command

from common import commands


def platform_commands():
    for app in apps.get_app_configs():
        if app.name.split(".")[0] not in {
            "annotation", "collection", "dialogues", "judges", "panels", "writing",
        }:  # fmt: skip
            continue
        package = f"{app.name}.management.commands"
        try:
            found = import_module(package)
        except ModuleNotFoundError:
            continue
        for module in pkgutil.iter_modules(found.__path__):
            yield f"{package}.{module.name}"


def test_every_command_of_the_platform_speaks_english():
    modules = list(platform_commands())
    assert len(modules) >= 14
    for name in modules:
        assert issubclass(import_module(name).Command, commands.Command), name


@pytest.mark.django_db
def test_a_services_refusal_reaches_the_command_line_in_english(settings, study):
    settings.LANGUAGE_CODE = "zh-hans"

    with pytest.raises(CommandError) as refused:
        call_command(
            "study_panel", study.slug, "--provider", "prolific", "--completion-code", "SAME",
            "--screen-out-code", "SAME", "--items", "5",
        )  # fmt: skip

    assert str(refused.value) == "--screen-out-code: Each outcome needs its own code."
