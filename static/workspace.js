/* The annotation workspace: claim row controls, keyboard shortcuts, the current claim, save status, time on task.
 * Each claim row arrives with its state only (data-url, data-verdict, data-flags, the note): its verdict
 * buttons, attach button and flags are cloned from the one <template id="claim-controls"> of the page, which
 * keeps the page small, and saved through htmx.ajax to the row's data-url (the row re-renders). */
(function () {
  "use strict";
  var root = document.getElementById("ws");
  if (!root) return;
  var list = document.getElementById("claims");
  var statusEl = document.getElementById("save-status");
  var help = document.getElementById("shortcuts");
  var locked = root.getAttribute("data-locked") === "1";
  var current = null; // pk of the current claim, as a string

  // ---- claim row controls ----
  var controls = document.getElementById("claim-controls");
  function build(row) {
    if (row.querySelector(".verdicts")) return;
    var pk = row.getAttribute("data-claim"), verdict = row.getAttribute("data-verdict") || "";
    var flags = (row.getAttribute("data-flags") || "").split(" "), frag = controls.content.cloneNode(true);
    frag.querySelectorAll("button, input").forEach(function (el) {
      el.id = "c" + pk + "-" + (el.value || "attach");
      el.disabled = locked;
      if (el.name === "verdict") el.setAttribute("aria-pressed", el.value === verdict ? "true" : "false");
      if (el.name === "checked") el.checked = flags.indexOf(el.value) >= 0;
    });
    // The row's own markup is kept to its state: its names and labels are set here, once per row.
    row.tabIndex = -1;
    row.setAttribute("aria-labelledby", "c" + pk + "-text");
    var note = row.querySelector("textarea.note"), tools = frag.querySelector(".row-tools");
    note.name = "note";
    note.rows = 1;
    note.maxLength = 5000;
    note.placeholder = "Note (n)";
    note.setAttribute("aria-label", "Note");
    row.querySelector(".claim-text").after(frag.querySelector(".verdicts"));
    note.replaceWith(tools);
    tools.prepend(note);
    tools.after(frag); // the flags
  }

  function post(el, values) {
    var row = el.closest("li.claim");
    window.htmx.ajax("POST", row.getAttribute("data-url"),
      { source: el, target: row, swap: "outerHTML settle:0ms", values: values || {} });
  }
  var noteTimers = {};
  list.addEventListener("click", function (ev) {
    var b = ev.target.closest('button[name="verdict"], button[data-attach], button[name="evidence"]');
    if (b && !b.disabled && b.closest("li.claim")) post(b);
  });
  list.addEventListener("change", function (ev) {
    var t = ev.target;
    if (!t.closest("li.claim")) return;
    if (t.name === "checked") post(t, { flag: t.value }); // unchecked sends no "checked"
    else if (t.tagName === "TEXTAREA") { clearTimeout(noteTimers[t.id]); post(t); }
  });
  list.addEventListener("input", function (ev) { // a typing pause of two seconds saves the note too
    var t = ev.target;
    if (t.tagName !== "TEXTAREA" || !t.closest("li.claim")) return;
    clearTimeout(noteTimers[t.id]);
    noteTimers[t.id] = setTimeout(function () { if (document.body.contains(t)) post(t); }, 2000);
  });

  // The list is taller than a laptop screen: focusing its Close button would open it scrolled to the end.
  function openHelp() { help.showModal(); help.scrollTop = 0; }
  function rows() { return Array.prototype.slice.call(list.querySelectorAll("li.claim")); }
  function rowOf(pk) { return pk ? document.getElementById("claim-" + pk) : null; }
  function say(text, bad) {
    statusEl.textContent = text;
    statusEl.classList.toggle("bad", !!bad);
  }

  // ---- the current claim and its highlights ----
  function marksOf(pk) {
    var out = Array.prototype.slice.call(document.querySelectorAll('.claim-span[data-claim="' + pk + '"]'));
    document.querySelectorAll("mark.evidence").forEach(function (m) {
      if ((m.getAttribute("data-claims") || "").split(" ").indexOf(pk) >= 0) out.push(m);
    });
    return out;
  }
  function light(pk, on) { if (pk) marksOf(pk).forEach(function (m) { m.classList.toggle("lit", on); }); }

  function select(pk, opts) {
    opts = opts || {};
    if (current && current !== pk) {
      var old = rowOf(current);
      if (old) old.classList.remove("current");
      light(current, false);
    }
    current = pk;
    var r = rowOf(pk);
    if (!r) return;
    r.classList.add("current");
    light(pk, true);
    if (opts.focus) r.focus({ preventScroll: true });
    if (opts.scroll) {
      r.scrollIntoView({ block: "nearest" });
      marksOf(pk).forEach(function (m) { m.scrollIntoView({ block: "nearest" }); });
    }
  }

  function move(step) {
    var all = rows();
    if (!all.length) return;
    var i = all.indexOf(rowOf(current));
    var next = all[i < 0 ? 0 : Math.max(0, Math.min(all.length - 1, i + step))];
    select(next.getAttribute("data-claim"), { focus: true, scroll: true });
  }

  function currentRow() {
    var r = rowOf(current);
    if (!r && rows().length) { move(0); r = rowOf(current); }
    return r;
  }

  function press(el, what) {
    if (!el) return;
    if (el.disabled || locked) { say("Read-only: this answer is submitted or the audit is closed.", true); return; }
    el.click();
    if (what) say(what);
  }

  // Colour each claim's span in the answer by the verdict given, count progress, restore the current claim.
  function refresh() {
    var all = rows(), done = 0;
    all.forEach(function (r) {
      var pk = r.getAttribute("data-claim"), v = r.getAttribute("data-verdict");
      if (v) done++;
      document.querySelectorAll('.claim-span[data-claim="' + pk + '"]').forEach(function (m) {
        m.className = "claim-span" + (v ? " v-" + v : "") + (pk === current ? " lit" : "");
      });
    });
    var count = document.getElementById("labelled-count");
    if (count && all.length) count.textContent = "(" + done + " of " + all.length + " labelled)";
    if (current) select(current);
  }

  list.addEventListener("focusin", function (ev) {
    var r = ev.target.closest("li.claim");
    if (r) select(r.getAttribute("data-claim"));
  });
  list.addEventListener("mouseover", function (ev) {
    var r = ev.target.closest("li.claim");
    if (r) light(r.getAttribute("data-claim"), true);
  });
  list.addEventListener("mouseout", function (ev) {
    var r = ev.target.closest("li.claim");
    if (r && !r.contains(ev.relatedTarget) && r.getAttribute("data-claim") !== current) light(r.getAttribute("data-claim"), false);
  });
  document.addEventListener("click", function (ev) {
    var span = ev.target.closest(".claim-span, mark.evidence");
    if (span && !String(window.getSelection())) {
      var pk = span.getAttribute("data-claim") || (span.getAttribute("data-claims") || "").split(" ")[0];
      if (pk) select(pk, { focus: true, scroll: true });
    }
    var go = ev.target.closest("[data-goto]");
    if (go) { ev.preventDefault(); select(go.getAttribute("data-goto"), { focus: true, scroll: true }); }
    var act = ev.target.closest("[data-action]");
    if (act && act.getAttribute("data-action") === "help") openHelp();
    if (act && act.getAttribute("data-action") === "close-help") help.close();
  });

  // ---- keyboard ----
  function cursor() { return window.ClaimAudit.sentenceCursor; }

  function typing(el) {
    if (!el || !el.tagName) return false;
    if (el.isContentEditable || el.tagName === "TEXTAREA" || el.tagName === "SELECT") return true;
    return el.tagName === "INPUT" && ["checkbox", "radio", "button", "submit", "reset"].indexOf(el.type) < 0;
  }

  var keys = {
    j: function () { move(1); }, ArrowDown: function () { move(1); },
    k: function () { move(-1); }, ArrowUp: function () { move(-1); },
    e: function () { press(currentRow() && currentRow().querySelector("[data-attach]")); },
    x: function () {
      var b = currentRow() && currentRow().querySelector('[name="evidence"][value="clear"]');
      if (b) press(b, "Removing evidence…"); else say("This claim has no evidence to remove.");
    },
    n: function () { var r = currentRow(); if (r) r.querySelector("textarea.note").focus(); },
    m: function () { document.getElementById("answer-note").focus(); },
    o: function () { press(document.getElementById("omission")); },
    "?": openHelp,
    "[": function () { var a = document.getElementById("prev-answer"); if (a) a.click(); },
    ".": function () { cursor().move(1); }, ",": function () { cursor().move(-1); },
    "]": function () { var a = document.getElementById("next-answer"); if (a) a.click(); },
  };
  ["1", "2", "3", "4"].forEach(function (k, i) {
    keys[k] = function () {
      var r = currentRow();
      if (r) press(r.querySelectorAll(".verdicts button")[i]);
    };
  });

  document.addEventListener("keydown", function (ev) {
    if (ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey || ev.isComposing) return;
    var t = ev.target;
    if (typing(t)) {
      if (ev.key === "Escape") { // leave the field; its change event saves it
        ev.preventDefault();
        t.blur();
        var r = t.closest("li.claim") || rowOf(current);
        if (r) r.focus({ preventScroll: true });
      }
      return;
    }
    if (help.open) return; // the dialog handles Escape itself
    if ((ev.key === "ArrowRight" || ev.key === "ArrowLeft") && ev.shiftKey && !(t.closest && t.closest(".passages-pane"))) {
      ev.preventDefault(); // grow / shrink the sentence cursor (in the passages pane Shift+arrows stay native)
      cursor().extend(ev.key === "ArrowRight" ? 1 : -1);
      return;
    }
    if (ev.key === "Enter" && ev.shiftKey) {
      ev.preventDefault();
      submitWhenSaved();
      return;
    }
    // Arrows keep scrolling the passages while that pane has focus.
    if ((ev.key === "ArrowDown" || ev.key === "ArrowUp") && t.closest && t.closest(".passages-pane")) return;
    var fn = keys[ev.key];
    if (!fn) return;
    ev.preventDefault();
    fn();
  });

  // Submit only once every save in flight has landed, or the check would miss the latest change.
  var inflight = 0;
  function submitWhenSaved() {
    var form = document.getElementById("submit-box");
    if (!form) return;
    say("Submitting…");
    (function wait(tries) {
      if (inflight > 0 && tries < 50) { setTimeout(function () { wait(tries + 1); }, 100); return; }
      form.requestSubmit();
    })(0);
  }

  // ---- htmx: evidence parameters, error rows, stale responses, unsaved typing ----
  var typed = null, submitting = false;
  var sentNotes = {}; // a note goes out once per value, whichever trigger (typing pause, leaving) fires first
  document.body.addEventListener("htmx:configRequest", function (ev) {
    var elt = ev.detail.elt;
    if (elt.tagName === "TEXTAREA") {
      var last = elt.id in sentNotes ? sentNotes[elt.id] : elt.defaultValue;
      if (elt.value === last) { ev.preventDefault(); return; }
      sentNotes[elt.id] = elt.value;
    }
    if (elt.hasAttribute("data-attach")) {
      var sel = window.ClaimAudit.evidence(); // the text selected in a passage, else the sentence cursor
      if (!sel || sel.error) {
        ev.preventDefault();
        say(sel ? sel.error : "Select the evidence text in a passage (or move the sentence cursor with . and ,), then press e.", true);
        return;
      }
      ev.detail.parameters.passage = sel.passage;
      ev.detail.parameters.start = sel.start;
      ev.detail.parameters.end = sel.end;
      ev.detail.parameters.text = sel.text;
    }
    if (elt.id === "submit-box") { ev.detail.parameters.seconds = pending; pending = 0; submitting = true; }
  });
  document.body.addEventListener("htmx:beforeRequest", function () { inflight++; say("Saving…"); });
  var focusedId = null;
  document.body.addEventListener("htmx:beforeSwap", function (ev) {
    var code = ev.detail.xhr.status, target = ev.detail.target;
    if (code === 400 || code === 409 || code === 422) { ev.detail.shouldSwap = true; ev.detail.isError = false; }
    if (target && target.classList.contains("claim")) {
      // Responses can overtake each other: never replace a row with an older version of itself.
      var m = /data-version="(\d+)"/.exec(ev.detail.serverResponse);
      if (m && +m[1] < +target.getAttribute("data-version")) ev.detail.shouldSwap = false;
    }
    var a = document.activeElement;
    focusedId = a && a.id && target && target.contains(a) ? a.id : null;
    typed = a && a.tagName === "TEXTAREA" && target && target.contains(a) && a.value !== a.defaultValue
      ? { id: a.id, value: a.value, start: a.selectionStart, end: a.selectionEnd } : null;
  });
  document.body.addEventListener("htmx:afterSwap", function (ev) {
    var row = ev.target;
    if (!row.matches || !row.matches("li.claim")) return;
    build(row);
    // htmx puts focus back by id before this event, when the row's controls did not exist yet
    var again = focusedId && document.getElementById(focusedId);
    if (again && row.contains(again) && document.activeElement !== again) again.focus({ preventScroll: true });
  });
  document.body.addEventListener("htmx:afterSettle", function () {
    if (typed) { // keep what was typed after the save that was sent before it
      var ta = document.getElementById(typed.id);
      if (ta && ta.value !== typed.value) {
        ta.value = typed.value;
        ta.focus();
        ta.setSelectionRange(typed.start, typed.end);
      }
      typed = null;
    }
    refresh();
    cursor().redraw(); // an attach re-renders the passage under the cursor
    if (submitting) { // refused: take the annotator to the first claim that is not ready
      submitting = false;
      var first = document.querySelector("#submit-box [data-goto]");
      if (first) select(first.getAttribute("data-goto"), { focus: true, scroll: true });
    }
  });
  document.body.addEventListener("htmx:afterRequest", function (ev) {
    inflight = Math.max(0, inflight - 1);
    var code = ev.detail.xhr ? ev.detail.xhr.status : 0;
    if (ev.detail.successful && code < 300) {
      say("Saved");
      if (ev.detail.elt.hasAttribute && ev.detail.elt.hasAttribute("data-attach")) window.ClaimAudit.clearPassageSelection();
    } else if (code === 409) say("Not saved: the answer is locked.", true);
    else if (code === 422) say("Not submitted: see the list below.", true);
    else if (code === 400) say("Not saved: see the message.", true);
    else if (code) say("Not saved (error " + code + "). Try again.", true);
  });
  document.body.addEventListener("htmx:responseError", function (ev) { delete sentNotes[ev.detail.elt.id]; });
  document.body.addEventListener("htmx:sendError", function (ev) {
    delete sentNotes[ev.detail.elt.id];
    say("Not saved: no connection. Try again.", true);
  });

  // ---- time on task: visible, focused, and some activity in the last minute ----
  var timeUrl = root.getAttribute("data-time-url");
  var pending = 0, lastActivity = Date.now();
  ["keydown", "mousemove", "mousedown", "wheel", "scroll", "touchstart", "selectionchange"].forEach(function (t) {
    document.addEventListener(t, function () { lastActivity = Date.now(); }, { passive: true, capture: true });
  });
  setInterval(function () {
    if (!locked && document.visibilityState === "visible" && document.hasFocus() && Date.now() - lastActivity < 60000) pending++;
  }, 1000);
  function csrf() {
    try { return JSON.parse(document.body.getAttribute("hx-headers"))["x-csrftoken"]; } catch (e) { return ""; }
  }
  function flush() {
    if (!pending) return;
    var n = pending, body = new FormData();
    pending = 0;
    body.append("seconds", n);
    fetch(timeUrl, { method: "POST", body: body, keepalive: true, credentials: "same-origin",
      headers: { "X-CSRFToken": csrf() } }).catch(function () { pending += n; });
  }
  setInterval(flush, 15000);
  window.addEventListener("pagehide", flush);
  document.addEventListener("visibilitychange", function () { if (document.visibilityState === "hidden") flush(); });

  // ---- start on the first claim without a verdict ----
  rows().forEach(build);
  var first = rows().filter(function (r) { return !r.getAttribute("data-verdict"); })[0] || rows()[0];
  if (first) select(first.getAttribute("data-claim"), { focus: true, scroll: true });
  refresh();
})();
