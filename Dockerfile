# One image for web, worker and beat; compose picks the command.
FROM python:3.13-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    DJANGO_SETTINGS_MODULE=chatanime_site.settings.production

WORKDIR /app
COPY requirements/base.lock requirements/base.lock
RUN pip install --no-cache-dir -r requirements/base.lock

COPY . .
# collectstatic needs settings that import; these throwaway values never reach a container.
RUN DJANGO_SECRET_KEY=build-only DJANGO_ALLOWED_HOSTS=localhost \
    DATABASE_URL=sqlite:////tmp/build.sqlite3 REDIS_URL=redis://localhost:6379/0 \
    python manage.py collectstatic --noinput

RUN useradd --system --home /app chatanime && mkdir -p /app/media && chown -R chatanime /app
USER chatanime
EXPOSE 8000
# Workers, threads and bind: gunicorn.conf.py.
CMD ["gunicorn", "chatanime_site.wsgi:application"]
