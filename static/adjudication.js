/* Adjudication view: keyboard-first moves between claim blocks, verdict keys, taking A's or B's label,
   evidence from a passage selection, and htmx saves that re-render one claim block. */
(function () {
  "use strict";
  const root = document.getElementById("adjudication");
  if (!root) return;
  const VERDICTS = ["supported", "contradicted", "unsupported", "non_assertive"];
  let current = null;

  const blocks = () => Array.from(root.querySelectorAll(".claim-block"));
  const isTyping = (el) => el && (el.isContentEditable || el.tagName === "TEXTAREA" || el.tagName === "SELECT" ||
    (el.tagName === "INPUT" && !["radio", "checkbox", "button", "submit"].includes(el.type)));

  function setCurrent(block, opts) {
    if (!block) return;
    const o = Object.assign({ focus: true, load: true }, opts);
    const changed = !current || current.dataset.claim !== block.dataset.claim;
    blocks().forEach((b) => b.classList.toggle("current", b === block));
    root.querySelectorAll("mark.claim-span").forEach((m) => m.classList.toggle("lit", m.dataset.claim === block.dataset.claim));
    current = block;
    if (o.focus) { block.focus({ preventScroll: true }); reveal(block); }
    if (o.load && changed) loadPassages(block.dataset.claim);
  }

  // Scroll only the claims pane (scrollIntoView would also move the page under the fixed-height panes).
  function reveal(block) {
    const pane = block.closest(".pane");
    if (!pane) return;
    const top = block.offsetTop - pane.offsetTop, bottom = top + block.offsetHeight;
    if (top < pane.scrollTop || bottom > pane.scrollTop + pane.clientHeight) pane.scrollTop = Math.max(0, top - 8);
  }

  /* The passages pane shows the evidence of the current claim. fetch, not htmx.ajax: htmx drops a request
     while another on the same element is in flight, and the last claim asked for must win. */
  let asked = 0;
  function loadPassages(claimId) {
    const ticket = ++asked;
    const url = root.dataset.passagesUrl + "?claim=" + encodeURIComponent(claimId);
    fetch(url, { headers: { "HX-Request": "true", "HX-Target": "passages" }, credentials: "same-origin" })
      .then((r) => (r.ok ? r.text() : Promise.reject(r.status)))
      .then((html) => {
        const old = document.getElementById("passages");
        if (ticket !== asked || !old) return;
        const tpl = document.createElement("template");
        tpl.innerHTML = html.trim();
        const fresh = tpl.content.getElementById("passages");
        if (fresh) old.replaceWith(fresh);
        const api = window.ClaimAudit && window.ClaimAudit.sentenceCursor;
        if (api) api.redraw();  // the sentence cursor survives the swap (same passage, same sentence)
      })
      .catch(() => {});
  }

  function move(step) {
    const all = blocks();
    if (!all.length) return;
    const i = all.indexOf(current);
    setCurrent(all[Math.min(all.length - 1, Math.max(0, i < 0 ? 0 : i + step))]);
  }

  function check(form, name, value) {
    const input = form.querySelector(`input[name="${name}"][value="${value}"]`);
    if (input && !input.disabled) { input.checked = true; return true; }
    return false;
  }

  function takeLabel(slot) {
    const form = current && current.querySelector("form.gold-form");
    const verdict = current && current.dataset[slot + "Verdict"];
    if (!form || !verdict) return;
    check(form, "verdict", verdict);
    if (!check(form, "evidence", slot)) check(form, "evidence", "none");
  }

  /* Evidence comes from the workspace's evidence.js: window.ClaimAudit.evidence() gives the passage
     selection, else the sentence cursor's span, as {passage, start, end, text} with offsets in code points
     of the raw passage text, {error}, or null. */
  function passageSelection() {
    const api = window.ClaimAudit && window.ClaimAudit.evidence;
    return typeof api === "function" ? api() : null;
  }
  const cursor = (fn, step) => window.ClaimAudit && window.ClaimAudit.sentenceCursor[fn](step);

  function takeSelection(block) {
    const form = block && block.querySelector("form.gold-form");
    const s = passageSelection();
    if (!form) return;
    const out = form.querySelector(".new-evidence");
    if (!s || s.error) {
      out.textContent = (s && s.error) || "Select text in a passage (or move the sentence cursor with . and ,) first.";
      return;
    }
    form.elements.passage.value = s.passage;
    form.elements.start.value = s.start;
    form.elements.end.value = s.end;
    check(form, "evidence", "new");
    out.textContent = "\u201c" + s.text + "\u201d";
  }

  function save() {
    const form = current && current.querySelector("form.gold-form");
    if (form) form.requestSubmit();
  }

  // ] and [ follow the page's links to the next / previous answer with disputes (or back to the queue).
  function go(which) {
    const link = document.querySelector(`.answer-nav a[data-nav="${which}"]`);
    if (link) window.location.assign(link.href);
  }

  /* Once every disputed claim of the answer has gold, say so and point at the next answer, so the
     adjudicator need not go back to the queue by hand. */
  function announceDone() {
    const disputed = Array.from(root.querySelectorAll(".claim-block.kind-disputed"));
    const status = document.querySelector("[data-answer-status]");
    const next = document.querySelector('.answer-nav a[data-nav="next"]');
    if (!status || !disputed.length || disputed.some((b) => !b.dataset.gold)) return;
    status.textContent = "Every disputed claim of this answer is settled: press ] for " +
      (next && next.rel === "next" ? "the next answer with disputes." : "the queue.");
    if (next) next.classList.add("button");
  }

  function help() {
    const d = document.getElementById("adjudication-help");
    if (d.open) d.close(); else d.showModal();
  }

  document.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); save(); return; }
    if (isTyping(e.target)) {
      if (e.key === "Escape") { e.target.blur(); if (current) current.focus(); }
      return;
    }
    if (e.altKey || e.ctrlKey || e.metaKey || document.querySelector("dialog[open]") && e.key !== "?") return;
    const k = e.key;
    if (k === "j" || (k === "ArrowDown" && e.target.type !== "radio")) move(1);
    else if (k === "k" || (k === "ArrowUp" && e.target.type !== "radio")) move(-1);
    else if (k >= "1" && k <= "4") { if (current) check(current.querySelector("form.gold-form"), "verdict", VERDICTS[+k - 1]); }
    else if (k === "a" || k === "b") takeLabel(k);
    else if (k === "s") takeSelection(current);
    else if (k === "." || k === ",") cursor("move", k === "." ? 1 : -1);
    else if ((k === "ArrowRight" || k === "ArrowLeft") && e.shiftKey && e.target.type !== "radio") {
      cursor("extend", k === "ArrowRight" ? 1 : -1);
    }
    else if (k === "r") { const r = current && current.querySelector('input[name="reason"]'); if (r) r.focus(); }
    else if (k === "]" || k === "[") go(k === "]" ? "next" : "prev");
    else if (k === "?") help();
    else if (k === "Enter" && !["A", "BUTTON", "SUMMARY"].includes(e.target.tagName)) save();
    else return;
    e.preventDefault();
  });

  root.addEventListener("focusin", function (e) {
    const block = e.target.closest(".claim-block");
    if (block && block !== current) setCurrent(block, { focus: false });
  });
  root.addEventListener("click", function (e) {
    if (e.target.closest('[data-action="take-selection"]')) takeSelection(e.target.closest(".claim-block"));
  });
  document.querySelectorAll('[data-action="help"]').forEach((b) => b.addEventListener("click", help));

  // A refused save (400 invalid, 409 stale or closed) re-renders the block with its message and the current value.
  document.body.addEventListener("htmx:beforeSwap", function (e) {
    if (e.detail.xhr.status === 400 || e.detail.xhr.status === 409) { e.detail.shouldSwap = true; e.detail.isError = false; }
  });
  document.body.addEventListener("htmx:afterSwap", function (e) {
    const block = e.detail.target && document.getElementById(e.detail.target.id);
    if (block && block.classList.contains("claim-block")) {
      current = null;
      setCurrent(block, { load: false });
      loadPassages(block.dataset.claim);  // the gold's evidence may have changed
      announceDone();
    }
  });

  const initial = document.getElementById("passages");
  const first = initial && root.querySelector(`.claim-block[data-claim="${initial.dataset.claim}"]`);
  setCurrent(first || blocks()[0], { focus: !!(first || blocks()[0]), load: false });
})();
