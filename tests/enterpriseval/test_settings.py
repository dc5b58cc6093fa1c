"""Settings come from the environment and production refuses unsafe configurations."""

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from enterpriseval.celery import app

ROOT = Path(__file__).resolve().parents[2]


def run_django(code: str, **environ: str) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(
            ("DJANGO_", "ENTERPRISEVAL_", "CELERY_", "DATABASE_URL", "SECRET_KEY", "CACHE_URL")
        )
    }
    env.update(environ, DJANGO_SETTINGS_MODULE="enterpriseval.settings")
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def production_env(**extra: str) -> dict[str, str]:
    return {
        "ENTERPRISEVAL_ENV": "production",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DJANGO_ALLOWED_HOSTS": "eval.bank.example",
        **extra,
    }


SETUP = "import django; django.setup(); from django.conf import settings; "


def test_production_refuses_to_start_without_a_secret_key():
    env = production_env()
    del env["SECRET_KEY"]
    result = run_django(SETUP, **env)
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_production_refuses_to_start_with_debug_on():
    result = run_django(SETUP, **production_env(DJANGO_DEBUG="true"))
    assert result.returncode != 0
    assert "DJANGO_DEBUG must be off" in result.stderr


def test_production_refuses_to_start_without_allowed_hosts():
    env = production_env()
    del env["DJANGO_ALLOWED_HOSTS"]
    result = run_django(SETUP, **env)
    assert result.returncode != 0
    assert "DJANGO_ALLOWED_HOSTS" in result.stderr


def test_an_unknown_mode_is_refused_with_the_allowed_values():
    result = run_django(SETUP, ENTERPRISEVAL_ENV="staging")
    assert result.returncode != 0
    assert "development, test, production" in result.stderr


def test_check_deploy_is_clean_under_production_settings():
    code = (
        "import sys; from django.core.management import execute_from_command_line; "
        "execute_from_command_line(['manage.py', 'check', '--deploy', '--fail-level', 'WARNING'])"
    )
    result = run_django(code, **production_env())
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_development_defaults_to_sqlite_under_var_and_the_filesystem_broker():
    code = SETUP + (
        "import json; print(json.dumps({'engine': settings.DATABASES['default']['ENGINE'], "
        "'name': str(settings.DATABASES['default']['NAME']), 'broker': settings.CELERY_BROKER_URL, "
        "'folder': settings.CELERY_BROKER_TRANSPORT_OPTIONS['data_folder_in'], "
        "'eager': settings.CELERY_TASK_ALWAYS_EAGER}))"
    )
    result = run_django(code, ENTERPRISEVAL_VAR_DIR=str(ROOT / "var"))
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    assert values["engine"] == "django.db.backends.sqlite3"
    assert values["name"] == str(ROOT / "var" / "enterpriseval.sqlite3")
    assert values["broker"] == "filesystem://"
    assert values["folder"].startswith(str(ROOT / "var"))
    assert values["eager"] is False


def test_database_url_and_broker_url_come_from_the_environment():
    code = SETUP + (
        "import json; from enterpriseval.celery import app; "
        "print(json.dumps({'engine': settings.DATABASES['default']['ENGINE'], "
        "'host': settings.DATABASES['default']['HOST'], 'broker': app.conf.broker_url}))"
    )
    result = run_django(
        code,
        DATABASE_URL="postgres://evaluser@db.internal:5432/enterpriseval",
        CELERY_BROKER_URL="redis://127.0.0.1:6379/3",
    )
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    assert values["engine"] == "django.db.backends.postgresql"
    assert values["host"] == "db.internal"
    assert values["broker"] == "redis://127.0.0.1:6379/3"


def test_unit_tests_run_celery_tasks_eagerly():
    assert settings.MODE == "test"
    assert app.conf.task_always_eager is True
    assert app.conf.task_acks_late is True


def test_litellm_never_downloads_its_price_list():
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"


@pytest.mark.django_db
def test_healthz_reports_the_database_it_reached(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"database": "ok", "vendor": connection.vendor}


@pytest.mark.django_db
def test_responses_carry_a_content_security_policy_that_forbids_inline_script(client):
    response = client.get("/healthz")
    policy = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert "object-src 'none'" in policy
    assert response.headers["X-Frame-Options"] == "DENY"


@pytest.mark.django_db
def test_the_suite_runs_on_the_database_that_database_url_names():
    url = os.environ.get("DATABASE_URL", "")
    expected = "postgresql" if url.startswith(("postgres://", "postgresql://")) else "sqlite"
    assert connection.vendor == expected


def test_the_cache_is_a_file_cache_under_var_that_cache_url_replaces(tmp_path):
    code = (
        SETUP
        + "print(settings.CACHES['default']['BACKEND'], settings.CACHES['default']['LOCATION'])"
    )
    result = run_django(code, ENTERPRISEVAL_VAR_DIR=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "django.core.cache.backends.filebased.FileBasedCache",
        str(tmp_path / "cache"),
    ]
    result = run_django(code, CACHE_URL="rediscache://127.0.0.1:6379/9")
    assert result.stdout.split() == [
        "django.core.cache.backends.redis.RedisCache",
        "redis://127.0.0.1:6379/9",
    ]
