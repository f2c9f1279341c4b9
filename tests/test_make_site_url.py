"""`make demo PORT=...` links emails and webhook payloads to the port it serves, through SITE_URL."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def dry_run(*args, env=None):
    """The commands make would run (-n: nothing runs), one a line."""
    out = subprocess.run(["make", "-n", *args], cwd=ROOT, capture_output=True, text=True, check=True, env=env)
    return out.stdout.splitlines()


def test_it_gives_every_process_the_site_url_of_the_port_it_serves():
    for target in ("demo", "serve"):
        served = [line for line in dry_run(target, "PORT=8131") if "honcho" in line]
        assert served and all('SITE_URL="http://127.0.0.1:8131"' in line for line in served), served
    assert any('SITE_URL="http://127.0.0.1:8000"' in line for line in dry_run("worker"))


def test_it_keeps_a_site_url_given_to_make():
    served = [line for line in dry_run("serve", "PORT=8131", "SITE_URL=https://audit.example.org") if "honcho" in line]
    assert served and 'SITE_URL="https://audit.example.org"' in served[0]
