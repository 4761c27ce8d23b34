import pytest

pytest_plugins = [
    "tests.fixtures.services",
    "tests.fixtures.faults",
    "tests.fixtures.data",
    "tests.fixtures.studies",
    "tests.fixtures.browser",
    "tests.fixtures.chat_server",
]


@pytest.fixture(autouse=True)
def _english_by_default(settings):
    """Assertions read English; tests about Chinese set the language explicitly."""
    settings.LANGUAGE_CODE = "en"


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Log-in throttling counts failures in the cache, metric rows are recreated with new
    ids after a transactional test, and a debounced task queued by one test would absorb
    another's: no test inherits another's."""
    from django.core.cache import cache

    from annotation.selectors import metrics_cache_clear
    from annotation.selectors.progress import items_left_forget
    from annotation.selectors.staffing import staffing_forget
    from common.enqueue import queued_here_forget

    cache.clear()
    metrics_cache_clear()
    queued_here_forget()
    items_left_forget()
    staffing_forget()
    yield
    cache.clear()
    metrics_cache_clear()
    queued_here_forget()
    items_left_forget()
    staffing_forget()
