"""Heavy modules loaded on first use, so a web process or task worker that never draws a report or an export
never holds the scientific stack (pandas, numpy, scipy, statsmodels, pyarrow, krippendorff: about 120 MiB).

lazy_view("pkg.views.name") is a view for a URLconf that imports pkg.views on its first request and calls
pkg.views.name. The real view keeps its own decorators (login, role, require_POST); the proxy itself carries
no exemption, so CsrfViewMiddleware and LoginRequiredMiddleware treat it as protected: a view marked
csrf_exempt or login_not_required cannot be made lazy (refused on its first request).

lazy_module("pkg.mod") is the module, executed on first attribute access (the standard library's LazyLoader),
for a light module that calls into a heavy one from some of its functions.
"""

import importlib
import importlib.util
import sys

from django.core.exceptions import ImproperlyConfigured


def lazy_view(dotted):
    module_name, name = dotted.rsplit(".", 1)
    found = []

    def view(request, *args, **kwargs):
        if not found:
            real = getattr(importlib.import_module(module_name), name)
            if getattr(real, "csrf_exempt", False) or not getattr(real, "login_required", True):
                raise ImproperlyConfigured(f"{dotted} is exempt from CSRF or login: it cannot be a lazy view")
            found.append(real)
        return found[0](request, *args, **kwargs)

    view.__name__ = view.__qualname__ = name
    view.__module__ = module_name
    return view


def lazy_module(name):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)
    return module
