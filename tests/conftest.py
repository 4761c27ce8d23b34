import pytest

pytest_plugins = [
    "tests.fixtures.services",
    "tests.fixtures.faults",
    "tests.fixtures.data",
    "tests.fixtures.studies",
    "tests.fixtures.browser",
    "tests.fixtures.chat_server",
    "tests.fixtures.judge_server",
    "tests.fixtures.prolific",
]


@pytest.fixture(autouse=True)
def _english_by_default(settings):
    """Assertions read English; tests about Chinese set the language explicitly."""
    settings.LANGUAGE_CODE = "en"


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Log-in throttling counts failures in the cache, metric rows are recreated with new
    ids after a transactional test, and a debounced task queued by one test would absorb
    another's: no test inherits another's cache or process copies."""
    from django.core.cache import cache

    from common import kept

    def forget():
        cache.clear()
        kept.forget_all()  # the debounced tasks known to be queued (common.enqueue) too

    forget()
    yield
    forget()
