"""Django settings, read from the environment (12-factor).

``ENTERPRISEVAL_ENV`` selects the mode: ``development`` (default), ``test`` or
``production``. Production refuses to start without ``SECRET_KEY``, without
``DJANGO_ALLOWED_HOSTS`` or with ``DJANGO_DEBUG`` on. Every other value has a
safe default so that a fresh clone runs with no configuration: SQLite and the
Celery ``filesystem://`` broker under ``var/``.
"""

import os
from datetime import timedelta
from pathlib import Path

import environ
from celery.schedules import crontab
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

# litellm must never fetch its price list from the internet (RECIPES.md).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

BASE_DIR = Path(__file__).resolve().parent.parent
env = environ.Env()

MODES = ("development", "test", "production")
MODE = env.str("ENTERPRISEVAL_ENV", default="development")
if MODE not in MODES:
    raise ImproperlyConfigured(f"ENTERPRISEVAL_ENV must be one of {', '.join(MODES)}; got {MODE!r}")
PRODUCTION = MODE == "production"

VAR_DIR = Path(env.str("ENTERPRISEVAL_VAR_DIR", default=str(BASE_DIR / "var")))
OUT_DIR = Path(env.str("ENTERPRISEVAL_OUT_DIR", default=str(BASE_DIR / "out")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env.bool("DJANGO_DEBUG", default=MODE == "development")

if PRODUCTION:
    if DEBUG:
        raise ImproperlyConfigured("DJANGO_DEBUG must be off when ENTERPRISEVAL_ENV=production")
    SECRET_KEY = env.str("SECRET_KEY", default="")
    if not SECRET_KEY:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set in the environment when ENTERPRISEVAL_ENV=production"
        )
    ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=[])
    if not ALLOWED_HOSTS:
        raise ImproperlyConfigured(
            "DJANGO_ALLOWED_HOSTS must list the served host names when ENTERPRISEVAL_ENV=production"
        )
else:
    # A fixed development key: never valid in production, which requires SECRET_KEY.
    SECRET_KEY = env.str(
        "SECRET_KEY", default="development-only-insecure-key-not-for-production-use"
    )
    ALLOWED_HOSTS = env.list(
        "DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]", "testserver"]
    )

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "enterpriseval.apps.EnterpriseValConfig",
    "audit",
    "charters",
    "runs",
    "grading",
    "metrics",
    "gates",
    "scorecards",
    "egibench",
    "lifecycle",
    "demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes requires: it turns a locked-out sign-in into the lockout response.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "enterpriseval.urls"
WSGI_APPLICATION = "enterpriseval.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "csp.context_processors.nonce",
            ],
        },
    },
]

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'enterpriseval.sqlite3'}"),
}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web process and the Celery worker write to one file: take the write lock when a
    # transaction begins (no "database is locked" mid-transaction) and let readers proceed.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"transaction_mode": "IMMEDIATE", "timeout": 20, "init_command": "PRAGMA journal_mode=WAL;"}
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Sign-in throttling (django-axes, docs/operations.md): after AXES_FAILURE_LIMIT wrong passwords
# for one user name, or from one address, sign-in through the login form and the API token
# endpoint is refused for AXES_COOLOFF_MINUTES, even with the right password; a successful
# sign-in before the limit clears the count.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.float("AXES_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = env.list("AXES_LOCKOUT_PARAMETERS", default=["username", "ip_address"])
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "enterpriseval.auth.lockout_response"
AXES_VERBOSE = False
# Behind N reverse proxies the client's address is the N-th from the right of X-Forwarded-For;
# with 0 (no proxy) it is REMOTE_ADDR.
ENTERPRISEVAL_PROXY_COUNT = env.int("ENTERPRISEVAL_PROXY_COUNT", default=0)
AXES_CLIENT_IP_CALLABLE = "enterpriseval.auth.client_ip"

# The cache holds plots of decisions and signed scorecards, drawn once per content hash
# (enterpriseval/plot_cache.py). By default a file cache under var/cache/: it survives restarts
# and every gunicorn and Celery worker on the host shares it, with no server and no table to
# create. CACHE_URL picks another (django-environ syntax: rediscache://host:6379/2 when web
# servers span hosts). Tests keep a cache per process, so no test reads another's entries.
CACHES = {
    "default": env.cache_url(
        "CACHE_URL",
        default="locmemcache://"
        if MODE == "test"
        else f"filecache://{VAR_DIR / 'cache'}?max_entries=5000",
    )
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard"
LOGOUT_REDIRECT_URL = "login"
# Large task-set imports stream from a temporary file, never from memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
DATA_UPLOAD_MAX_MEMORY_SIZE = 10_485_760
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
MEDIA_ROOT = VAR_DIR / "media"


# Size caps per kind of uploaded file, in bytes, checked before a byte of the file is parsed
# (enterpriseval/limits.py, docs/operations.md): ENTERPRISEVAL_MAX_<KIND>_BYTES. The defaults are
# a few times the largest real file of each kind.
_UPLOAD_LIMIT_DEFAULTS = {
    "sigma": 1_000_000,
    "charter": 1_000_000,
    "task_set": 256 * 1024 * 1024,
    "outputs": 256 * 1024 * 1024,
    "grades": 64 * 1024 * 1024,
    "adjudications": 64 * 1024 * 1024,
    "oversight_decisions": 64 * 1024 * 1024,
    "decision": 1_000_000,
    "egi_result": 64 * 1024 * 1024,
}
ENTERPRISEVAL_UPLOAD_LIMITS = {
    kind: env.int(f"ENTERPRISEVAL_MAX_{kind.upper()}_BYTES", default=default)
    for kind, default in _UPLOAD_LIMIT_DEFAULTS.items()
}
for _kind, _limit in ENTERPRISEVAL_UPLOAD_LIMITS.items():
    if _limit < 1:
        raise ImproperlyConfigured(
            f"ENTERPRISEVAL_MAX_{_kind.upper()}_BYTES must be a positive number of bytes, got "
            f"{_limit}"
        )

# Security. Model output is untrusted HTML: the CSP forbids inline script and
# every origin but our own, so an injected <script> in an output cannot run.
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads it to send X-CSRFToken
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    }
}
if PRODUCTION:
    SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
    SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    if env.bool("DJANGO_BEHIND_TLS_PROXY", default=False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

REST_FRAMEWORK = {
    # Token first: DRF answers an anonymous call with the first class's challenge, so 401 with
    # "WWW-Authenticate: Token" (session authentication has no challenge: 403).
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "enterpriseval.errors.api_exception_handler",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "EnterpriseVal API",
    "DESCRIPTION": "Use-case-level evaluation of LLM workflows.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# Celery. Unset CELERY_BROKER_URL: kombu's filesystem transport under var/, no server
# needed (RECIPES.md); set it to redis:// or amqp:// for production.
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    _queue_dir = VAR_DIR / "celery" / "queue"
    _processed_dir = VAR_DIR / "celery" / "processed"
    _control_dir = VAR_DIR / "celery" / "control"
    for _folder in (_queue_dir, _processed_dir, _control_dir):
        _folder.mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_queue_dir),
        "data_folder_out": str(_queue_dir),
        "processed_folder": str(_processed_dir),
        "control_folder": str(_control_dir),
        "store_processed": False,
        "polling_interval": 0.01,
    }
CELERY_RESULT_BACKEND = env.str("CELERY_RESULT_BACKEND", default=None)
# Executed runs (runs/services/runs.py): the Redis server holding each run's concurrency as a
# lease shared by every worker process (default: the broker when it is Redis; empty: none, so
# each chunk keeps at most the run's concurrency in flight — run one worker process then),
# and the calls one worker process keeps in flight at most.
RUN_SLOTS_REDIS_URL = env.str(
    "RUN_SLOTS_REDIS_URL",
    default=CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(("redis://", "rediss://")) else "",
)
RUN_PROCESS_MAX_IN_FLIGHT = env.int("RUN_PROCESS_MAX_IN_FLIGHT", default=128)
# Worker processes that split outputs into sentences (imports, runs); empty: one per core,
# 0: split in the process that writes (runs/segment_pool.py).
SEGMENT_PROCESSES = env.int("SEGMENT_PROCESSES", default=None)
# The LLM judge's calls in flight when a judging names no concurrency.
JUDGE_LLM_CONCURRENCY = env.int("JUDGE_LLM_CONCURRENCY", default=32)
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=MODE == "test")
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = TIME_ZONE
# `celery -A enterpriseval beat` (or a worker with -B) runs these.
CELERY_BEAT_SCHEDULE = {
    # SPEC §7: a final scorecard past its next review date needs re-evaluation.
    "scorecards-review-dates": {
        "task": "scorecards.review_dates_check",
        "schedule": crontab(hour=6, minute=0),
    },
}

# E-mail (re-evaluation notices, SPEC §7). EMAIL_URL as django-environ reads it, e.g.
# smtp+tls://user:password@mail.example.com:587; unset, mail is printed to the console
# (production: SMTP on localhost:25). Links in e-mails start with ENTERPRISEVAL_SITE_URL.
_email = env.email_url(
    "EMAIL_URL", default="smtp://localhost:25" if PRODUCTION else "consolemail://"
)
globals().update({name: value for name, value in _email.items() if value is not None})
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="enterpriseval@localhost")
ENTERPRISEVAL_SITE_URL = env.str("ENTERPRISEVAL_SITE_URL", default="http://127.0.0.1:8000")

# Regulatory mapping packs of the scorecard appendix (SPEC §7): a compliance team may point
# this at its own copy of scorecards/packs/ (docs/regulatory-packs.md); unset, the shipped packs.
SCORECARD_PACK_DIR = env.str("SCORECARD_PACK_DIR", default="") or None

if MODE == "test":
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="WARNING")},
}
