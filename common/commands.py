"""The base of every management command of the platform.

Commands speak English, as their options, their help and the documentation that quotes
them do. The platform's default language (Chinese, `LANGUAGE_CODE`) is for its pages:
without this, a command's own messages came in English and the services' refusals it
passes on in Chinese, in one line ("--screen-out-code: 每种结果都需要各自的码。")."""

from django.core.management.base import BaseCommand
from django.utils import translation


class Command(BaseCommand):
    def execute(self, *args, **options):
        with translation.override("en"):
            return super().execute(*args, **options)
