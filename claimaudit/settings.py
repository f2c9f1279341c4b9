"""One settings module; every knob comes from the environment through strict helpers."""

import os
from datetime import timedelta
from pathlib import Path
from urllib.parse import unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent


def envbool(name, default):
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), got {raw!r}")


def envint(name, default):
    raw = os.environ.get(name, "")
    try:
        return int(raw) if raw else default
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None


def envfloat(name, default):
    raw = os.environ.get(name, "")
    try:
        return float(raw) if raw else default
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, got {raw!r}") from None


def envlist(name, default):
    raw = os.environ.get(name)
    return [x.strip() for x in raw.split(",") if x.strip()] if raw else default


def database_from_url(url):
    parts = urlsplit(url)
    if parts.scheme in ("postgres", "postgresql"):
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": unquote(parts.path.lstrip("/")),
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": str(parts.port or ""),
            "CONN_MAX_AGE": 60,
            "CONN_HEALTH_CHECKS": True,
        }
    if parts.scheme == "sqlite":
        # sqlite:///relative.db or sqlite:////absolute/path.db
        path = url[len("sqlite:///") :]
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": path if path.startswith("/") else BASE_DIR / path,
            # WAL lets the task worker write while pages read; IMMEDIATE takes the write lock when a
            # transaction begins (so a lock refusal comes before any write, see audit/busy.py); a writer
            # waits up to SQLITE_BUSY_TIMEOUT seconds for the lock (imports hold it one chunk at a time).
            "OPTIONS": {
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                "transaction_mode": "IMMEDIATE",
                "timeout": envfloat("SQLITE_BUSY_TIMEOUT", 5.0),
            },
        }
    raise ImproperlyConfigured(f"DATABASE_URL scheme {parts.scheme!r} is not supported")


DEBUG = envbool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY is required when DEBUG is off")
    SECRET_KEY = "insecure-dev-only-key-do-not-use-in-production-0123456789"  # noqa: S105
elif not DEBUG and len(SECRET_KEY) < 50:
    raise ImproperlyConfigured(
        f"SECRET_KEY has {len(SECRET_KEY)} characters; use at least 50 random ones when DEBUG is off, e.g. "
        "python3 -c 'import secrets; print(secrets.token_urlsafe(50))'"
    )
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", ["127.0.0.1", "localhost"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "audit",  # before django_tasks_db: its db_worker command wraps that one (audit/management/commands)
    "django_tasks_db",
    "axes",
    "ninja",  # the API docs page's own static files and template (no CDN)
    "annotations",
    "claimaudit",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "claimaudit.compression.CompressionMiddleware",  # gzip, BREACH-aware (see the module)
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "claimaudit.middleware.SessionLimitsMiddleware",
    "claimaudit.session_end.LoginRequired",  # Django's, with a 401 for htmx requests
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "claimaudit.not_allowed.MethodNotAllowedBody",  # inside CSP and CSRF: a 405 page uses both; JSON on the API
    "audit.validation.RefuseUnstorableInput",  # after CSRF and login: 400 for NUL etc. in any field
    "axes.middleware.AxesMiddleware",
    "audit.busy.BusyRetryMiddleware",  # innermost: retries the view on "database is locked", then 503
]

# Responses that show a one-time secret beside text the user typed are never compressed (BREACH).
GZIP_EXCLUDED_URL_NAMES = ["api_tokens", "people", "person_link"]

ROOT_URLCONF = "claimaudit.urls"
WSGI_APPLICATION = "claimaudit.wsgi.application"

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
                "django.template.context_processors.csp",
                "claimaudit.context_processors.roles_context",
            ],
        },
    },
]

DATABASES = {"default": database_from_url(os.environ.get("DATABASE_URL", "sqlite:///db.sqlite3"))}
if os.environ.get("TEST_DATABASE_NAME"):  # lets parallel test runs share one PostgreSQL server
    DATABASES["default"]["TEST"] = {"NAME": os.environ["TEST_DATABASE_NAME"]}
elif DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Tests use a SQLite file, as the app does. Django's default in-memory test database is one connection
    # shared by every thread, and two requests at once on it fail ("bad parameter or other API misuse").
    DATABASES["default"]["TEST"] = {"NAME": f"{DATABASES['default']['NAME']}-test"}

CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

# Checked wherever a password is set: create_user, the password change and set-password pages, the admin.
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
if envbool("FAST_PASSWORD_HASHER", False):  # tests only: hashing dominates login-heavy tests
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Set-password links are mailed only when EMAIL_ENABLED (on in development, where MAILERS below prints
# mail to the console); the link is always shown to the lead who created the user.
EMAIL_ENABLED = envbool("EMAIL_ENABLED", DEBUG)
# Sessions end SESSION_COOKIE_AGE seconds after login, or after SESSION_IDLE_TIMEOUT seconds without a
# request (claimaudit.middleware.SessionLimitsMiddleware).
SESSION_COOKIE_AGE = envint("SESSION_COOKIE_AGE", 12 * 3600)
SESSION_IDLE_TIMEOUT = envint("SESSION_IDLE_TIMEOUT", 2 * 3600)
SESSION_COOKIE_HTTPONLY = True
# No script reads the CSRF cookie: pages put the token in hx-headers on <body>.
CSRF_FAILURE_VIEW = "claimaudit.session_end.csrf_failure"  # a line for htmx, Django's page otherwise
CSRF_COOKIE_HTTPONLY = True
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
# Login throttling (django-axes, counts in the database so every process shares them): after
# LOGIN_MAX_FAILURES failures for one normalised username from one client address, that pair is refused
# (429) for LOGIN_WINDOW seconds. The client address is REMOTE_ADDR unless TRUSTED_PROXY_HEADER names the
# header a trusted reverse proxy sets (e.g. X-Forwarded-For, X-Real-IP; off by default: set it only when
# every request comes through that proxy, or clients could forge their address).
LOGIN_MAX_FAILURES = envint("LOGIN_MAX_FAILURES", 5)
LOGIN_WINDOW = envint("LOGIN_WINDOW", 300)
TRUSTED_PROXY_HEADER = os.environ.get("TRUSTED_PROXY_HEADER", "")
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "claimaudit.auth.RoleBackend"]
AXES_FAILURE_LIMIT = LOGIN_MAX_FAILURES
AXES_COOLOFF_TIME = timedelta(seconds=LOGIN_WINDOW)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_USERNAME_CALLABLE = "claimaudit.auth.throttle_username"
AXES_CLIENT_IP_CALLABLE = "claimaudit.auth.client_address"
AXES_LOCKOUT_CALLABLE = "claimaudit.auth.lockout_response"
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "claimaudit.staticfiles.MinifiedStaticFilesStorage"
        if not DEBUG and not envbool("PLAIN_STATIC", False)
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "base-uri": [CSP.NONE],
}

# Uploads: bounded. Files above the memory limit spool to disk; the import caps total size.
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
IMPORT_MAX_UPLOAD_BYTES = envint("IMPORT_MAX_UPLOAD_BYTES", 200 * 1024 * 1024)
IMPORT_MAX_FIELD_CHARS = envint("IMPORT_MAX_FIELD_CHARS", 100_000)
IMPORT_MAX_PASSAGES = envint("IMPORT_MAX_PASSAGES", 200)
IMPORT_MAX_CLAIMS = envint("IMPORT_MAX_CLAIMS", 500)
IMPORT_MAX_META_CHARS = envint("IMPORT_MAX_META_CHARS", 200_000)
IMPORT_MAX_LINE_BYTES = envint("IMPORT_MAX_LINE_BYTES", 32 * 1024 * 1024)
IMPORT_MAX_INFLATED_BYTES = envint("IMPORT_MAX_INFLATED_BYTES", 2 * 1024 * 1024 * 1024)  # a .gz upload, inflated
IMPORT_MAX_ERRORS = 50
IMPORT_BATCH_SIZE = 2000  # records per chunk (one transaction each), at most
IMPORT_LOCK_SECONDS = envfloat("IMPORT_LOCK_SECONDS", 0.25)  # SQLite: chunks sized to hold the write lock this long
IMPORT_LOCK_PAUSE = 0.15  # SQLite: seconds the import leaves the lock free after each chunk
# Web uploads above IMPORT_INLINE_BYTES are spooled here and imported by the task worker; the web
# servers and the workers must share this directory. It is never served.
IMPORT_SPOOL_DIR = Path(os.environ.get("IMPORT_SPOOL_DIR", BASE_DIR / "var" / "imports"))
IMPORT_INLINE_BYTES = envint("IMPORT_INLINE_BYTES", 1_000_000)
IMPORT_STALL_SECONDS = envint("IMPORT_STALL_SECONDS", 300)
IMPORT_PROGRESS_RECORDS = 5000
# A write still locked out after the busy timeout is tried again after each delay (seconds), then a web
# request answers 503 with this Retry-After.
DB_BUSY_RETRY_DELAYS = (0.25, 0.5, 1.0)
DB_BUSY_RETRY_AFTER = 5

if not DEBUG:
    SESSION_COOKIE_SECURE = envbool("SECURE_COOKIES", True)
    CSRF_COOKIE_SECURE = envbool("SECURE_COOKIES", True)
    SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 60 * 60 * 24 * 365)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# The judge. The API key and base URL are read by the anthropic SDK from
# ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL; they are repeated here so checks can see them.
ANTHROPIC_API_KEY = os.environ.get("ANTHROPIC_API_KEY", "")
ANTHROPIC_BASE_URL = os.environ.get("ANTHROPIC_BASE_URL", "")
JUDGE_MODEL = os.environ.get("JUDGE_MODEL", "claude-sonnet-5-5")
JUDGE_EFFORT = os.environ.get("JUDGE_EFFORT", "low")
JUDGE_CONCURRENCY = envint("JUDGE_CONCURRENCY", 8)
JUDGE_MAX_RETRIES = envint("JUDGE_MAX_RETRIES", 4)
JUDGE_TIMEOUT = envfloat("JUDGE_TIMEOUT", 120.0)
JUDGE_BATCH_POLL_SECONDS = envfloat("JUDGE_BATCH_POLL_SECONDS", 30.0)
# A run with no heartbeat for this long is shown as stalled and may be resumed.
JUDGE_STALL_SECONDS = envint("JUDGE_STALL_SECONDS", 120)
# USD per million tokens: input, output, cache write for 5 minutes (1.25x input) and for 1 hour (2x input),
# cache read (0.1x input). The Batch API bills half of each.
JUDGE_PRICES = {
    "claude-opus-5-5": {"input": 15.0, "output": 75.0, "cache_write": 18.75, "cache_write_1h": 30.0, "cache_read": 1.5},
    "claude-sonnet-5-5": {"input": 3.0, "output": 15.0, "cache_write": 3.75, "cache_write_1h": 6.0, "cache_read": 0.3},
    "claude-haiku-5-5": {"input": 1.0, "output": 5.0, "cache_write": 1.25, "cache_write_1h": 2.0, "cache_read": 0.1},
}
# The shortest prefix (tokens) each model caches, from the prompt-caching documentation: a shorter one is
# sent uncached at the input price. Models not listed are taken to need the largest of these.
JUDGE_MIN_CACHE_TOKENS = {"claude-opus-5-5": 4096, "claude-sonnet-5-5": 1024, "claude-haiku-5-5": 4096}

# Adjudication and export.
ADJUDICATOR_MAY_ADJUDICATE_OWN = envbool("ADJUDICATOR_MAY_ADJUDICATE_OWN", False)
# Salt of the pseudonymous annotator ids in exports; changing it changes every pseudonym.
EXPORT_PSEUDONYM_SALT = os.environ.get("EXPORT_PSEUDONYM_SALT", "claim-audit-annotator-v1")
# Report: a stratum holding more than this share of the population and no data makes the
# population-weighted estimate not computable (smaller ones are listed as not covered).
REPORT_MIN_STRATUM_SHARE = envfloat("REPORT_MIN_STRATUM_SHARE", 0.05)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}

# Jobs, notifications (issue 13). Pages that wait for the task worker name this command to start it.
WORKER_COMMAND = os.environ.get("WORKER_COMMAND", "python manage.py db_worker")
# Polling of a job page: every second while it moves, every JOB_STALLED_POLL_SECONDS while stalled.
JOB_STALLED_POLL_SECONDS = envint("JOB_STALLED_POLL_SECONDS", 10)
# Email: printed to the console in development; SMTP (EMAIL_HOST, EMAIL_PORT) otherwise.
MAILERS = {
    "default": {
        "BACKEND": os.environ.get(
            "EMAIL_BACKEND",
            "django.core.mail.backends.console.EmailBackend"
            if DEBUG
            else "django.core.mail.backends.smtp.EmailBackend",
        ),
        "OPTIONS": {}
        if DEBUG and not os.environ.get("EMAIL_HOST")
        else {"host": os.environ.get("EMAIL_HOST", "localhost"), "port": envint("EMAIL_PORT", 25)},
    }
}
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "claim-audit@localhost")
# The address pages link to in emails and webhook payloads, e.g. https://audit.example.org
SITE_URL = os.environ.get("SITE_URL", "http://127.0.0.1:8000")
# Webhooks: attempts per event, and the first wait before a retry (doubled per attempt; 0 in tests).
WEBHOOK_MAX_ATTEMPTS = envint("WEBHOOK_MAX_ATTEMPTS", 5)
WEBHOOK_BACKOFF_SECONDS = envfloat("WEBHOOK_BACKOFF_SECONDS", 30.0)
WEBHOOK_TIMEOUT = envfloat("WEBHOOK_TIMEOUT", 10.0)
