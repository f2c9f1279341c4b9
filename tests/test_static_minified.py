"""Production static files: collectstatic minifies the project's own CSS and JavaScript (names kept), hashes and
compresses them, and copies third-party files as they are. The browser tests marked with the `assets` fixture
run the keyboard flows on the minified files."""

import gzip
import json
import re
from pathlib import Path

import django_htmx
from django.conf import settings
from django.core.management import call_command
from django.test import override_settings

OWN = Path(settings.BASE_DIR) / "static"
STORAGE = {"staticfiles": {"BACKEND": "claimaudit.staticfiles.MinifiedStaticFilesStorage"}}
TEMPLATE_LITERAL = re.compile(r"`[^`]*`")
NESTED_LITERAL = re.compile(r"\$\{[^}]*`")  # a backtick inside a template literal's ${...}


def collect(root):
    with override_settings(STATIC_ROOT=root, STORAGES={**settings.STORAGES, **STORAGE}):
        call_command("collectstatic", interactive=False, verbosity=0)
    return json.loads((root / "staticfiles.json").read_text())["paths"]


def test_it_serves_the_projects_own_files_minified_hashed_and_gzipped(tmp_path):
    paths = collect(tmp_path)
    for source in sorted(OWN.glob("*.js")) + sorted(OWN.glob("*.css")):
        text = source.read_text(encoding="utf-8")
        served = (tmp_path / paths[source.name]).read_bytes()
        assert len(served) < len(text.encode()), source.name
        assert gzip.decompress((tmp_path / f"{paths[source.name]}.gz").read_bytes()) == served
        assert "/*" not in served.decode(), source.name  # comments are gone
        if source.suffix == ".js":  # every template literal is kept to the letter, spaces included
            assert TEMPLATE_LITERAL.findall(served.decode()) == TEMPLATE_LITERAL.findall(text), source.name


def test_it_finds_no_template_literal_nested_in_another():
    # rjsmin reads template literals without nesting: in `a${x ? ` b` : ""}` it takes the inner backtick for the
    # end of the outer literal and drops the space of " b". Our scripts concatenate instead.
    for source in sorted(OWN.glob("*.js")):
        lines = source.read_text(encoding="utf-8").splitlines()
        assert [n for n, line in enumerate(lines, 1) if NESTED_LITERAL.search(line)] == [], source.name


def test_it_copies_third_party_files_as_they_are(tmp_path):
    paths = collect(tmp_path)
    htmx = Path(django_htmx.__file__).parent / "static" / "django_htmx" / "htmx-2.min.js"
    assert (tmp_path / paths["django_htmx/htmx-2.min.js"]).read_bytes() == htmx.read_bytes()
