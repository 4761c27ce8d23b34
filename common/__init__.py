"""What every app shares and no app owns: handing work to the Celery workers (`enqueue`),
and the small helpers the apps would otherwise each write again. It imports none of the
apps, so any of them can use it."""
