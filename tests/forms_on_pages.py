"""The POST forms a page renders, read from its HTML: forms_on(html, page) -> [(url, {field: [values]}, htmx)].
A <form> gives its fields (inputs, textareas, the first option of a select, named buttons, checked boxes); an
htmx control outside a form gives its own name and value and its hx-vals. htmx: whether htmx posts it."""

import contextlib
import json
from html.parser import HTMLParser


class _Forms(HTMLParser):
    def __init__(self, page):
        super().__init__(convert_charrefs=True)
        self.page, self.found, self.form, self.select, self.textarea = page, [], None, None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "option" and self.select:
            self.select[0].setdefault(self.select[1], [a.get("value", "")])
            return
        posts = (a.get("method") or "").lower() == "post"
        url = a.get("hx-post") or ((a.get("action") or self.page) if posts else None)
        if tag == "form":
            self.form = (url, {}, "hx-post" in a) if url else None
            return
        fields = self.form[1] if self.form else None
        if url and self.form is None:  # a control that posts itself
            fields = {}
            self.found.append((url, fields, True))
            with contextlib.suppress(ValueError):
                fields.update({k: [str(v)] for k, v in json.loads(a.get("hx-vals") or "{}").items()})
        name = a.get("name")
        if fields is None or not name:
            return
        if tag == "select":
            self.select = (fields, name)
        elif tag == "textarea":
            self.textarea = (fields, name)
            fields.setdefault(name, [""])
        elif tag in ("input", "button") and (a.get("type") not in ("checkbox", "radio") or "checked" in a):
            fields.setdefault(name, []).append(a.get("value") or ("on" if a.get("type") == "checkbox" else ""))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_data(self, data):
        if self.textarea:
            self.textarea[0][self.textarea[1]] = [data]

    def handle_endtag(self, tag):
        if tag == "form" and self.form:
            self.found.append(self.form)
            self.form = None
        elif tag in ("textarea", "select"):
            self.textarea = self.select = None


def forms_on(html, page):
    """The POST forms of the HTML of `page` (the URL a form without an action posts to)."""
    parser = _Forms(page)
    parser.feed(html)
    return [(url, {k: v for k, v in f.items() if k != "csrfmiddlewaretoken"}, hx) for url, f, hx in parser.found]
