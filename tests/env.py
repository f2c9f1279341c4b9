"""Loaded with -p before Django settings: the environment every test run uses."""

import os

os.environ.setdefault("SECRET_KEY", "test-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz")
os.environ.setdefault("DEBUG", "false")
os.environ.setdefault("SECURE_SSL_REDIRECT", "false")
os.environ.setdefault("SECURE_COOKIES", "false")
os.environ.setdefault("PLAIN_STATIC", "true")
os.environ.setdefault("FAST_PASSWORD_HASHER", "true")
os.environ.setdefault("ALLOWED_HOSTS", "testserver,localhost,127.0.0.1")
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
# Tests must never reach a real API.
os.environ["ANTHROPIC_API_KEY"] = "test-key"
os.environ.pop("ANTHROPIC_BASE_URL", None)
