"""405 Method Not Allowed that says why, in one place: a view refusing a method (require_POST and the like)
answers with an empty body and only an Allow header. This fills it: the API's JSON error shape for API views
(they are marked json_errors; their framework's own plain-text 405 is replaced too), the site's layout for a
request that accepts HTML, plain text otherwise. The status and the Allow header stay as the view set them."""

import json

from django.template.loader import render_to_string


def _allowed(response):
    return [m.strip() for m in response.get("Allow", "").split(",") if m.strip()]


class MethodNotAllowedBody:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if response.status_code != 405 or response.streaming:
            return response
        allowed, match = _allowed(response), getattr(request, "resolver_match", None)
        if match is not None and getattr(match.func, "json_errors", False):
            if not response.get("Content-Type", "").startswith("application/json"):
                said = f"method {request.method} not allowed: this endpoint accepts {', '.join(allowed) or 'none'}"
                response.content = json.dumps({"message": said, "errors": []})
                response["Content-Type"] = "application/json; charset=utf-8"
        elif not response.content and request.accepts("text/html"):
            ctx = {"allowed": allowed, "method": request.method}
            response.content = render_to_string("405.html", ctx, request=request)
            response["Content-Type"] = "text/html; charset=utf-8"
        elif not response.content:
            response.content = f"{request.method} is not allowed here; allowed: {', '.join(allowed) or 'none'}.\n"
            response["Content-Type"] = "text/plain; charset=utf-8"
        return response
