"""annotation.sql.instance: a row read by a written statement becomes the model instance the
ORM would make, and what it keeps to convert rows goes with the connection that needs it
(a development server makes a connection per request thread)."""

import gc
import threading
import weakref

from django.db import connections

from annotation import sql
from dialogues.models import Source
from tests.builders import SourceFactory


def row_of(source: Source) -> list:
    return [getattr(source, field.attname) for field in Source._meta.concrete_fields]


def test_a_row_becomes_the_instance_it_was_read_from():
    given = SourceFactory.build(pk=7)

    made = sql.instance(Source, row_of(given))

    assert made.pk == 7 and row_of(made) == row_of(given)
    assert not made._state.adding


def test_a_threads_connection_is_not_kept_once_the_thread_is_done():
    kept = []

    def request_thread():
        sql.instance(Source, row_of(SourceFactory.build(pk=1)))
        kept.append(weakref.ref(connections["default"]))
        connections.close_all()

    thread = threading.Thread(target=request_thread)
    thread.start()
    thread.join()
    gc.collect()

    assert kept and kept[0]() is None
