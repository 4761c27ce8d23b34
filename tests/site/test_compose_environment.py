"""docker-compose.yml hands its Django services the variables the documentation tells an
operator to set: every variable of .env at start (`env_file`), never built into the image."""

import yaml

from tests.fixtures.services import REPO


def django_environment() -> dict:
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    services = compose["services"]
    environments = [services[name]["environment"] for name in ("web", "worker", "beat")]
    assert all(environment == environments[0] for environment in environments)
    return environments[0]


def test_the_django_services_get_prolifics_webhook_secret_and_api_token():
    environment = django_environment()
    assert environment["PROLIFIC_WEBHOOK_SECRET"] == "${PROLIFIC_WEBHOOK_SECRET:-}"
    assert environment["PROLIFIC_API_TOKEN"] == "${PROLIFIC_API_TOKEN:-}"


def test_the_django_services_get_the_production_settings_and_their_required_variables():
    environment = django_environment()
    assert environment["DJANGO_SETTINGS_MODULE"] == "chatanime_site.settings.production"
    for name in ("DJANGO_SECRET_KEY", "DJANGO_ALLOWED_HOSTS", "DATABASE_URL", "REDIS_URL"):
        assert environment[name]


def test_the_env_file_never_goes_into_the_image():
    """`COPY . .` would put the operator's secrets into the image, where the settings would
    read them from /app/.env, stale after any change until a rebuild."""
    ignored = (REPO / ".dockerignore").read_text().split("\n")
    assert ".env" in [line.strip() for line in ignored]


def test_every_variable_of_the_env_file_reaches_the_django_services():
    """A model endpoint names the variable holding its key (`api_key_env`): whatever its
    name, it must reach the worker that calls the model."""
    services = yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"]
    for name in ("web", "worker", "beat"):
        assert services[name]["env_file"] in (".env", [".env"]), name
