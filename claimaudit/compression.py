"""GZip for responses (HTML pages, JSON, CSV), with BREACH handled.

BREACH recovers a secret from the compressed size of responses that also reflect attacker-chosen text. Here:
- the CSRF token in every page is masked afresh for each response (Django), so it never repeats;
- Django's GZipMiddleware pads each compressed body with a random number of bytes ("Heal the Breach");
- the CSP nonce is new for every response; the session id is a cookie, never in a body;
- the only long-lived secrets a body ever shows are shown once: a new API token and a set-password link.
  Those responses also echo what the user typed (the token's name, the person's name), so they are sent
  uncompressed: URL names in GZIP_EXCLUDED_URL_NAMES. Static files are compressed ahead of time by WhiteNoise.
"""

from django.conf import settings
from django.middleware.gzip import GZipMiddleware


class CompressionMiddleware(GZipMiddleware):
    def process_response(self, request, response):
        match = getattr(request, "resolver_match", None)
        if match is not None and match.url_name in settings.GZIP_EXCLUDED_URL_NAMES:
            return response
        return super().process_response(request, response)
