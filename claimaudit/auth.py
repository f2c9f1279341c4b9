from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.core.cache import cache
from django.views.decorators.http import require_POST


def _throttle_key(request):
    username = request.POST.get("username", "").lower()[:150]
    return f"login-fail:{request.META.get('REMOTE_ADDR', '')}:{username}"


class ThrottledLoginView(auth_views.LoginView):
    """Refuses further attempts after LOGIN_MAX_FAILURES failures for one username and address."""

    def post(self, request, *args, **kwargs):
        if cache.get(_throttle_key(request), 0) >= settings.LOGIN_MAX_FAILURES:
            form = self.get_form()
            form.add_error(None, "Too many failed logins. Wait a few minutes and try again.")
            return self.render_to_response(self.get_context_data(form=form), status=429)
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        key = _throttle_key(self.request)
        cache.add(key, 0, settings.LOGIN_WINDOW)
        cache.incr(key)
        return super().form_invalid(form)


login_view = login_not_required(ThrottledLoginView.as_view(redirect_authenticated_user=True))
logout_view = require_POST(auth_views.LogoutView.as_view())
