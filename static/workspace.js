/* The annotation workspace: keys, the current claim and its highlights, time on task. Every control of a row is
 * server-rendered and posts through the row's form (the note itself); this file points keys at them, adds the evidence. */
(() => {
  "use strict";
  const root = document.getElementById("ws"); if (!root) return;
  const NS = window.ClaimAudit, list = document.getElementById("claims"), $ = (sel) => document.querySelector(sel);
  const rows = () => Array.from(list.querySelectorAll("li.claim")), edit = (el) => el && (el.focus(), el.setSelectionRange(el.value.length, el.value.length)); // typing goes after the note
  const rowOf = (pk) => pk && document.getElementById(`claim-${pk}`), rowId = (el) => el.closest && (el.closest("li.claim") || {}).id;
  const locked = root.dataset.locked === "1", later = [], READ_ONLY = "Read-only: this answer is submitted or the audit is closed.";
  let current = null, busy = null, replay = null, refocus = null, pending = 0, last = Date.now(); // busy: the save in flight
  const marksOf = (pk) => document.querySelectorAll(`.claim-span[data-claim="${pk}"], mark.evidence[data-claims~="${pk}"]`);
  const light = (pk, on) => pk && marksOf(pk).forEach((m) => m.classList.toggle("lit", on));
  function select(pk, scroll) {
    if (current && current !== pk) { light(current, false); NS.sentenceCursor.hide(); if (rowOf(current)) rowOf(current).classList.remove("current"); }
    const r = rowOf((current = pk));
    if (!r) return; else r.classList.add("current"), light(pk, true);
    if (scroll) { r.focus({ preventScroll: true }); marksOf(pk).forEach((m) => m.scrollIntoView({ block: "nearest" })); r.scrollIntoView({ block: "nearest" }); } // the row last: in one column it wins
  }
  function move(step) {
    const all = rows(), i = all.indexOf(rowOf(current));
    if (all.length) select(all[i < 0 ? 0 : Math.max(0, Math.min(all.length - 1, i + step))].dataset.claim, true);
  }
  const row = () => rowOf(current) || (move(0), rowOf(current));
  function press(sel) { // a control of the current row
    const el = row() && row().querySelector(sel);
    if (el && !el.disabled && !locked) el.click();
    else NS.say(el || locked ? READ_ONLY : "This claim has no evidence to remove.", !!el || locked);
  }
  function refresh() { // each claim's span in the answer coloured by its verdict; the count
    const all = rows(), v = (r) => r.dataset.verdict;
    all.forEach((r) => document.querySelectorAll(`.claim-span[data-claim="${r.dataset.claim}"]`).forEach((m) => { m.className = "claim-span" + (v(r) ? ` v-${v(r)}` : ""); }));
    if (all.length) $("#labelled-count").textContent = `(${all.filter(v).length} of ${all.length} labelled)`;
    if (current) select(current);
  }
  list.addEventListener("focusin", (ev) => { const r = ev.target.closest("li.claim"); if (r) select(r.dataset.claim); });
  list.addEventListener("mouseover", (ev) => { const r = ev.target.closest("li.claim"); if (r) light(r.dataset.claim, true); });
  list.addEventListener("mouseout", (ev) => { const r = ev.target.closest("li.claim"); if (r && !r.contains(ev.relatedTarget) && r.dataset.claim !== current) light(r.dataset.claim, false); });
  document.addEventListener("click", (ev) => {
    const span = ev.target.closest(".claim-span, mark.evidence"), go = ev.target.closest("[data-goto]");
    if (span && !String(getSelection()) && !ev.target.closest("a")) select(span.dataset.claim || span.dataset.claims.split(" ")[0], true);
    if (go) { ev.preventDefault(); select(go.dataset.goto, true); }
  });
  const click = (sel, none) => () => { // [ and ] wait for the saves in flight and the presses held behind them
    const el = $(sel); if (el && el.tagName === "A" && busy) later.push([[el.id]]); else if (el && !el.disabled) el.click(); else if (el || none) NS.say(el ? READ_ONLY : none, true); };
  const keys = {
    j: () => move(1), ArrowDown: () => move(1), k: () => move(-1), ArrowUp: () => move(-1), "?": click("[data-dialog=shortcuts]"),
    e: () => press("[value=attach]"), x: () => press("[value=clear]"), 0: () => press("[value='']"), Backspace: () => press("[value='']"),
    a: () => press("[name=not_atomic]"), c: () => press("[name=needs_context]"), t: () => press("[name=true_not_in_passages]"),
    n: () => edit(row() && row().querySelector("textarea")), m: () => edit($("#answer-note")), o: click("#omission"),
    u: click("#undo"), "Ctrl+z": click("#undo"), "[": click("#prev-answer", "No earlier answer."), "]": click("#next-answer", "No later answer."),
    "Shift+Enter": () => (locked ? NS.say(READ_ONLY, true) : $("#submit-box").requestSubmit()), // queued behind the saves in flight (hx-sync)
  };
  ["supported", "contradicted", "unsupported", "non_assertive"].forEach((v, i) => { keys[i + 1] = () => press(`[value=${v}]`); });
  NS.keys(keys, (t) => t.closest("li.claim") || rowOf(current));
  /* A response replaces rows, and htmx drops a request queued (hx-sync) on a control no longer in the page: while a save of
   * the claims, undo or submit is in flight, hold every press (an attach with the evidence pointed at then) and press them
   * again, one a response, a row's on the fresh row by name and value (a flag by name: its fresh value is the last saved). */
  const control = (id, name, value) => { const r = document.getElementById(id); return r && name ? r.querySelector(`[name="${name}"][value="${CSS.escape(value)}"]`) || r.querySelector(`[name="${name}"]`) : r; };
  document.body.addEventListener("htmx:confirm", (ev) => {
    const d = ev.detail, elt = (d.triggeringEvent && d.triggeringEvent.submitter) || d.elt; // the button, or the note
    if (busy && d.verb !== "get") ev.preventDefault(), later.push([rowId(elt) ? [rowId(elt), elt.name, elt.value] : [elt.id], elt.value === "attach" && NS.evidence()]);
  });
  const focused = (f = document.activeElement) => f && f.tagName === "BUTTON" && rowId(f) && [rowId(f), f.name, f.value];
  document.body.addEventListener("htmx:beforeSwap", () => { refocus = focused(); }); // htmx refocuses only an element with an id
  document.body.addEventListener("htmx:configRequest", (ev) => {
    const elt = ev.detail.elt, p = ev.detail.parameters, sel = p.evidence === "attach" && (replay ? replay[1] : NS.evidence());
    if (ev.detail.verb === "get") return; else NS.say("Saving…"), (replay = null); // a GET fills a dialog: not a save
    if (p.evidence === "attach" && (!sel || sel.error)) {
      ev.preventDefault(); // the text selected in a passage, else the sentence cursor
      return NS.say(sel ? sel.error : "Select the evidence text in a passage (or move the sentence cursor with . and ,), then press e.", true);
    }
    if (sel) Object.assign(p, { passage: sel.passage, start: sel.start, end: sel.end, text: sel.text });
    if (elt.id === "submit-box") [p.seconds, pending] = [pending, 0];
    if (elt.closest("[hx-sync]")) busy = ev.detail; // its requestConfig; the answer's own fields save beside them
  });
  const FAILED = { 409: "Not saved: the answer is locked.", 422: "Not submitted: see the list below.", 400: "Not saved: see the message." };
  document.body.addEventListener("htmx:afterRequest", (ev) => {
    const xhr = ev.detail.xhr, code = xhr ? xhr.status : 0, elt = ev.detail.elt;
    if (ev.detail.requestConfig.verb === "get") return; else if (ev.detail.requestConfig === busy) busy = null; // a dialog's GET leaves it
    const text = /text\/plain/.test(xhr && xhr.getResponseHeader("content-type")) ? xhr.responseText : "";
    if (!code) NS.say("Not saved: no connection. Try again.", true);
    else if (code < 400) { NS.say(elt.id === "undo" ? "Undone" : ev.detail.requestConfig.elt.id !== "omission" ? "Saved" : `Saved: the answer ${$("#omission").checked ? "omits something the question needed" : "omits nothing"} (o)`); if (ev.detail.requestConfig.parameters.evidence === "attach") NS.clearPassageSelection(); }
    else NS.say(text || FAILED[code] || `Not saved (error ${code}). Try again.`, true);
    if (elt.type === "checkbox" && !(code > 0 && code < 400)) elt.checked = !elt.checked; // not saved (401, 403, offline): as stored
    if (code === 422 && $("#submit-box [data-goto]")) select($("#submit-box [data-goto]").dataset.goto, true);
    const h = !(xhr && xhr.getResponseHeader("HX-Refresh")) && later.shift(), el = h && control(...h[0]); // the next held press (none if the page reloads: it says so)
    replay = el && h; // its evidence, for its configRequest (this tick, once htmx releases the request lock)
    if (el) el.tagName === "TEXTAREA" ? htmx.trigger(el, "change") : (el.requestSubmit || el.click).call(el); // the submit box is a form
  });
  document.body.addEventListener("htmx:afterSettle", () => {
    if (refocus && control(...refocus)) control(...refocus).focus({ preventScroll: true });
    refresh();
    NS.sentenceCursor.redraw(); // an attach re-renders the passage under the cursor
    if (rowOf(current)) rowOf(current).scrollIntoView({ block: "nearest" }); // a grown row stays clear of the submit bar
  });
  // ---- time on task: visible, focused, and some activity in the last minute
  ["keydown", "mousemove", "mousedown", "wheel", "scroll", "touchstart", "selectionchange"].forEach((t) =>
    document.addEventListener(t, () => { last = Date.now(); }, { passive: true, capture: true }));
  setInterval(() => { if (!locked && document.visibilityState === "visible" && document.hasFocus() && Date.now() - last < 60000) pending++; }, 1000);
  function flush() {
    const body = new FormData(), n = pending, token = JSON.parse(document.body.getAttribute("hx-headers"))["x-csrftoken"];
    if (!n) return;
    body.append("seconds", (pending = 0) || n);
    fetch(root.dataset.timeUrl, { method: "POST", body, keepalive: true, credentials: "same-origin", headers: { "X-CSRFToken": token } })
      .catch(() => { pending += n; });
  }
  setInterval(flush, 15000), addEventListener("pagehide", flush);
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") flush(); });
  htmx.process(document.body); // now, not at DOMContentLoaded: keys pressed at once reach live controls
  const first = rows().find((r) => !r.dataset.verdict) || rows()[0]; // start on the first claim without a verdict
  if (first) select(first.dataset.claim, true), refresh();
})();
