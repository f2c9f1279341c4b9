/* The annotation workspace: keys, the current claim and its highlights, time on task. Every control of a
 * row is server-rendered and posts itself with hx-post; this file only points keys at them. */
(() => {
  "use strict";
  const root = document.getElementById("ws");
  if (!root) return;
  const NS = window.ClaimAudit, list = document.getElementById("claims"), help = document.getElementById("shortcuts");
  const locked = root.dataset.locked === "1", later = [];
  let current = null, busy = null; // busy: the id of the row whose save is in flight
  const rows = () => Array.from(list.querySelectorAll("li.claim"));
  const rowOf = (pk) => pk && document.getElementById(`claim-${pk}`);
  const $ = (sel) => document.querySelector(sel);

  const marksOf = (pk) => document.querySelectorAll(`.claim-span[data-claim="${pk}"], mark.evidence[data-claims~="${pk}"]`);
  const light = (pk, on) => pk && marksOf(pk).forEach((m) => m.classList.toggle("lit", on));
  function select(pk, scroll) {
    if (current && current !== pk) { const old = rowOf(current); if (old) old.classList.remove("current"); light(current, false); NS.sentenceCursor.hide(); }
    current = pk;
    const r = rowOf(pk);
    if (!r) return;
    r.classList.add("current");
    light(pk, true);
    if (scroll) { r.focus({ preventScroll: true }); r.scrollIntoView({ block: "nearest" }); marksOf(pk).forEach((m) => m.scrollIntoView({ block: "nearest" })); }
  }
  function move(step) {
    const all = rows(), i = all.indexOf(rowOf(current));
    if (all.length) select(all[i < 0 ? 0 : Math.max(0, Math.min(all.length - 1, i + step))].dataset.claim, true);
  }
  const row = () => rowOf(current) || (move(0), rowOf(current));
  function press(sel) {
    const el = row() && row().querySelector(sel);
    if (locked || (el && el.disabled)) return NS.say("Read-only: this answer is submitted or the audit is closed.", true);
    if (!el) return NS.say("This claim has no evidence to remove.");
    el.click();
  }
  function refresh() { // each claim's span in the answer coloured by its verdict; the count
    const all = rows();
    all.forEach((r) => marksOf(r.dataset.claim).forEach((m) => {
      if (m.matches(".claim-span")) m.className = `claim-span${r.dataset.verdict ? ` v-${r.dataset.verdict}` : ""}`;
    }));
    if (all.length) $("#labelled-count").textContent = `(${all.filter((r) => r.dataset.verdict).length} of ${all.length} labelled)`;
    if (current) select(current);
  }

  list.addEventListener("focusin", (ev) => { const r = ev.target.closest("li.claim"); if (r) select(r.dataset.claim); });
  list.addEventListener("mouseover", (ev) => { const r = ev.target.closest("li.claim"); if (r) light(r.dataset.claim, true); });
  list.addEventListener("mouseout", (ev) => {
    const r = ev.target.closest("li.claim");
    if (r && !r.contains(ev.relatedTarget) && r.dataset.claim !== current) light(r.dataset.claim, false);
  });
  document.addEventListener("click", (ev) => {
    const span = ev.target.closest(".claim-span, mark.evidence"), go = ev.target.closest("[data-goto]");
    if (span && !String(getSelection()) && !ev.target.closest("a")) select(span.dataset.claim || span.dataset.claims.split(" ")[0], true);
    if (go) { ev.preventDefault(); select(go.dataset.goto, true); }
    if (ev.target.closest("[data-action=help]")) { help.showModal(); help.scrollTop = 0; }
    if (ev.target.closest("[data-action=close-help]")) help.close();
  });

  const keys = {
    j: () => move(1), ArrowDown: () => move(1), k: () => move(-1), ArrowUp: () => move(-1),
    e: () => press("[value=attach]"), x: () => press("[value=clear]"), 0: () => press("[value='']"),
    Backspace: () => press("[value='']"), a: () => press("[id$=-not_atomic]"), c: () => press("[id$=-needs_context]"),
    t: () => press("[id$=-true_not_in_passages]"), u: () => $("#undo").click(), "Ctrl+z": () => $("#undo").click(),
    n: () => row() && row().querySelector("textarea").focus(), m: () => $("#answer-note").focus(), o: () => $("#omission").click(),
    "?": () => { help.showModal(); help.scrollTop = 0; }, "[": () => $("#prev-answer") && $("#prev-answer").click(),
    "]": () => $("#next-answer") && $("#next-answer").click(), "Shift+Enter": () => $("#submit-box").requestSubmit(),
  };
  ["supported", "contradicted", "unsupported", "non_assertive"].forEach((v, i) => { keys[i + 1] = () => press(`[value=${v}]`); });
  NS.keys(keys, (t) => t.closest("li.claim") || rowOf(current));

  /* A row's response replaces the row, so a control pressed while its row is saving would be dropped:
   * hold it and press it again on the fresh row. Saves of different rows queue (hx-sync on the list). */
  const rowId = (el) => { const r = el.closest && el.closest("li.claim"); return r && r.id; };
  document.body.addEventListener("htmx:confirm", (ev) => {
    const elt = ev.detail.elt;
    if (!busy || busy !== rowId(elt)) return;
    ev.preventDefault();
    later.push({ id: elt.id, checked: elt.checked });
  });
  document.body.addEventListener("htmx:configRequest", (ev) => {
    const elt = ev.detail.elt, p = ev.detail.parameters;
    if (elt.value === "attach") {
      const sel = NS.evidence(); // the text selected in a passage, else the sentence cursor
      if (!sel || sel.error) {
        ev.preventDefault();
        return NS.say(sel ? sel.error : "Select the evidence text in a passage (or move the sentence cursor with . and ,), then press e.", true);
      }
      Object.assign(p, { passage: sel.passage, start: sel.start, end: sel.end, text: sel.text });
    }
    if (elt.id === "submit-box") { p.seconds = pending; pending = 0; NS.say("Submitting…"); }
    busy = rowId(elt);
  });
  document.body.addEventListener("htmx:afterRequest", (ev) => {
    const xhr = ev.detail.xhr, code = xhr ? xhr.status : 0, elt = ev.detail.elt;
    busy = null;
    const text = /text\/plain/.test(xhr && xhr.getResponseHeader("content-type")) ? xhr.responseText : "";
    if (!code) NS.say("Not saved: no connection. Try again.", true);
    else if (ev.detail.successful) { NS.say(elt.id === "undo" ? "Undone" : "Saved"); if (elt.value === "attach") NS.clearPassageSelection(); }
    else NS.say(text || { 409: "Not saved: the answer is locked.", 422: "Not submitted: see the list below.", 400: "Not saved: see the message." }[code] || `Not saved (error ${code}). Try again.`, true);
    if (code === 422) { const first = $("#submit-box [data-goto]"); if (first) select(first.dataset.goto, true); }
    while (later.length) {
      const { id, checked } = later.shift(), el = document.getElementById(id);
      if (!el) continue;
      if (el.type === "checkbox") { el.checked = checked; htmx.trigger(el, "change"); } else if (el.tagName === "TEXTAREA") htmx.trigger(el, "change"); else el.click();
    }
  });
  document.body.addEventListener("htmx:beforeRequest", () => NS.say("Saving…"));
  document.body.addEventListener("htmx:afterSettle", () => {
    refresh();
    NS.sentenceCursor.redraw(); // an attach re-renders the passage under the cursor
    const r = rowOf(current);
    if (r) r.scrollIntoView({ block: "nearest" }); // a grown row stays clear of the sticky submit bar
  });

  // ---- time on task: visible, focused, and some activity in the last minute
  let pending = 0, last = Date.now();
  ["keydown", "mousemove", "mousedown", "wheel", "scroll", "touchstart", "selectionchange"].forEach((t) =>
    document.addEventListener(t, () => { last = Date.now(); }, { passive: true, capture: true }));
  setInterval(() => { if (!locked && document.visibilityState === "visible" && document.hasFocus() && Date.now() - last < 60000) pending++; }, 1000);
  function flush() {
    if (!pending) return;
    const n = pending, body = new FormData();
    pending = 0;
    body.append("seconds", n);
    const token = JSON.parse(document.body.getAttribute("hx-headers"))["x-csrftoken"];
    fetch(root.dataset.timeUrl, { method: "POST", body, keepalive: true, credentials: "same-origin", headers: { "X-CSRFToken": token } })
      .catch(() => { pending += n; });
  }
  setInterval(flush, 15000);
  addEventListener("pagehide", flush);
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") flush(); });

  const first = rows().find((r) => !r.dataset.verdict) || rows()[0]; // start on the first claim without a verdict
  if (first) select(first.dataset.claim, true);
  refresh();
})();
