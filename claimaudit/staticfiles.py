"""Static files as production serves them: the project's own CSS and JavaScript (those under STATICFILES_DIRS)
are minified when `collectstatic` copies them, then hashed and compressed by WhiteNoise as before.

rjsmin and rcssmin only drop comments and whitespace; no name is changed, so a minified file behaves as its source
does (the keyboard browser tests run once on the minified files to say so). Third-party files (django-htmx's
htmx, the admin's) come already built and are copied as they are. The sources in `static/` stay as written;
runserver under DEBUG serves them unminified.
"""

from pathlib import Path

import rcssmin
import rjsmin
from django.conf import settings
from whitenoise.storage import CompressedManifestStaticFilesStorage

MINIFIERS = {".js": rjsmin.jsmin, ".css": rcssmin.cssmin}


def minified(name, text):
    """The minified text of a .js or .css file; None for any other file."""
    minify = MINIFIERS.get(Path(name).suffix)
    return minify(text) if minify else None


def _own(source_storage):
    location = getattr(source_storage, "location", None)
    return location is not None and Path(location).resolve() in {Path(d).resolve() for d in settings.STATICFILES_DIRS}


class MinifiedStaticFilesStorage(CompressedManifestStaticFilesStorage):
    def post_process(self, paths, dry_run=False, **options):
        if not dry_run:
            paths = dict(paths)
            for name, (source_storage, _path) in list(paths.items()):
                if _own(source_storage) and Path(name).suffix in MINIFIERS:
                    target = Path(self.path(name))
                    target.write_text(minified(name, target.read_text(encoding="utf-8")), encoding="utf-8")
                    paths[name] = (self, name)  # hashing reads the file from here: the minified copy
        yield from super().post_process(paths, dry_run, **options)
