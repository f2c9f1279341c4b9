/* Adjudication: keys over the claim blocks and their server-rendered gold forms (htmx posts them); the
 * passages pane follows the current claim with its own hx-get. */
(() => {
  "use strict";
  const root = document.getElementById("adjudication");
  if (!root) return;
  const NS = window.ClaimAudit, sets = JSON.parse(document.getElementById("verdict-sets").textContent);
  const blocks = () => Array.from(root.querySelectorAll(".claim-block")), claim = document.getElementById("current-claim");
  const form = () => current && current.querySelector("form.gold-form");
  let current = null;
  function setCurrent(block, load) {
    if (!block) return;
    if (current && current.dataset.claim !== block.dataset.claim) NS.sentenceCursor.hide();
    blocks().forEach((b) => b.classList.toggle("current", b === block));
    root.querySelectorAll("mark.claim-span").forEach((m) => m.classList.toggle("lit", m.dataset.claim === block.dataset.claim));
    current = block;
    block.focus({ preventScroll: true });
    block.scrollIntoView({ block: "nearest" });
    if (load && claim.value !== block.dataset.claim) { claim.value = block.dataset.claim; htmx.trigger(claim.form, "claim-change"); }
  }
  const move = (step) => {
    const all = blocks(), i = all.indexOf(current);
    setCurrent(all[Math.min(all.length - 1, Math.max(0, i < 0 ? 0 : i + step))], true);
  };
  const check = (name, value) => { const i = form() && form().querySelector(`input[name="${name}"][value="${value}"]`); return !!(i && !i.disabled && (i.checked = true)); };
  function verdict(v) { // the evidence choice stays, greyed out where the verdict takes none
    if (check("verdict", v)) form().querySelector(".gold-evidence").classList.toggle("unused", !sets.needs_evidence.includes(v));
  }
  function take(slot) {
    const v = current && current.dataset[`${slot}Verdict`];
    if (v) { verdict(v); if (!check("evidence", slot)) check("evidence", "none"); NS.say(`${slot.toUpperCase()}'s label taken (${v.replace("_", "-")}), not saved yet: r for the reason, then Enter.`); }
  }
  function takeSelection(block) {
    const f = block && block.querySelector("form.gold-form"), s = NS.evidence(), out = f && f.querySelector(".new-evidence");
    if (!f) return;
    if (!s || s.error) { out.textContent = (s && s.error) || "Select text in a passage (or move the sentence cursor with . and ,) first."; return; }
    ["passage", "start", "end"].forEach((k) => { f.elements[k].value = s[k]; });
    f.querySelector('input[name=evidence][value="new"]').checked = true;
    out.textContent = `\u201c${s.text}\u201d`;
  }
  function go(which) { // a link follows; a stop (no later answer has disputes) says why
    const link = document.querySelector(`.answer-nav [data-nav="${which}"]`);
    if (link && link.href) location.assign(link.href); else if (link) NS.say(link.textContent, true);
  }
  const save = () => form() && form().requestSubmit();
  const keys = {
    j: () => move(1), k: () => move(-1), a: () => take("a"), b: () => take("b"), s: () => takeSelection(current),
    r: () => form() && form().elements.reason.focus(), "]": () => go("next"), "[": () => go("prev"), "?": () => document.querySelector("[data-dialog=adjudication-help]").click(),
    "Ctrl+Enter": save, Enter: (ev) => (/^(A|BUTTON|SUMMARY)$/.test(ev.target.tagName) ? false : save()),
    ArrowDown: (ev) => (ev.target.type === "radio" ? false : move(1)), ArrowUp: (ev) => (ev.target.type === "radio" ? false : move(-1)),
  };
  ["supported", "contradicted", "unsupported", "non_assertive"].forEach((v, i) => { keys[i + 1] = () => verdict(v); });
  NS.keys(keys, () => current);
  root.addEventListener("focusin", (ev) => { const b = ev.target.closest(".claim-block"); if (b && b !== current) setCurrent(b, true); });
  root.addEventListener("click", (ev) => { if (ev.target.closest("[data-action=take-selection]")) takeSelection(ev.target.closest(".claim-block")); });
  document.body.addEventListener("htmx:afterSwap", (ev) => {
    const block = ev.detail.target && document.getElementById(ev.detail.target.id);
    if (block && block.classList.contains("claim-block")) { claim.value = ""; setCurrent(block, true); announceDone(); }
    NS.sentenceCursor.redraw(); // the passages were re-rendered under the cursor
  });
  function announceDone() { // every dispute of the answer settled: say where ] goes
    const open = root.querySelectorAll('.claim-block.kind-disputed[data-gold=""]');
    const next = document.querySelector('.answer-nav [data-nav="next"]') || {}, where = next.rel === "next" ? "press ] for the next answer with disputes." : next.href ? "press ] for the queue." : next.textContent;
    if (!open.length && root.querySelector(".kind-disputed")) document.querySelector("[data-answer-status]").textContent = `Every disputed claim of this answer is settled: ${where}`;
  }
  htmx.process(document.body); // now, not at DOMContentLoaded: a save pressed at once goes through htmx
  setCurrent(root.querySelector(`.claim-block[data-claim="${claim.value}"]`) || blocks()[0], false), announceDone(); // settled by "take for all", say where ] goes
})();
