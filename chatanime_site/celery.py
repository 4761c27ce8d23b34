import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chatanime_site.settings.local")

app = Celery("chatanime_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
