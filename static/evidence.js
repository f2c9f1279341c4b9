/* Shared by the workspace and adjudication (window.ClaimAudit): a passage selection as {passage, start, end, text}
 * (code points of the stored text, as Python counts), the sentence cursor, passage search and jump, the status line,
 * the key dispatcher. A passage is one [data-passage] (or [data-passage-id]) element: the stored text split by marks. */
(() => {
  "use strict";
  const NS = (window.ClaimAudit = window.ClaimAudit || {});
  const PASSAGE = "[data-passage], [data-passage-id]";
  const passages = () => Array.from(document.querySelectorAll(PASSAGE));
  const pid = (el) => el.getAttribute("data-passage") || el.getAttribute("data-passage-id");
  const cp = (s) => Array.from(s).length, hl = window.CSS && CSS.highlights; // code points; the highlight registry
  const trim = (t, s, e) => { while (s < e && /\s/.test(t[s])) s++; while (e > s && /\s/.test(t[e - 1])) e--; return [s, e]; };
  let cached = null;
  NS.say = (text, bad) => document.querySelectorAll("[data-evidence-status]").forEach((el) => { el.textContent = text; el.classList.toggle("bad", !!bad); });
  function rangeInPassage(range, el) {
    const r = range.cloneRange(), whole = document.createRange(), before = document.createRange();
    whole.selectNodeContents(el); // a selection running past the passage is clipped to it
    if (r.compareBoundaryPoints(Range.START_TO_START, whole) < 0) r.setStart(el, 0);
    if (r.compareBoundaryPoints(Range.END_TO_END, whole) > 0) r.setEnd(el, el.childNodes.length);
    before.setStart(el, 0); before.setEnd(r.startContainer, r.startOffset);
    const full = el.textContent, at = before.toString().length, [s, e] = trim(full, at, at + r.toString().length);
    return s < e ? { passage: pid(el), start: cp(full.slice(0, s)), end: cp(full.slice(0, e)), text: full.slice(s, e) } : null;
  }
  function fromSelection() {
    const sel = getSelection(), range = sel && sel.rangeCount && !sel.isCollapsed && sel.getRangeAt(0);
    if (!range) return null;
    const hits = passages().filter((el) => range.intersectsNode(el));
    if (hits.length > 1) return { error: "Select text inside one passage only." };
    return hits.length ? rangeInPassage(range, hits[0]) : null;
  }
  // A click can drop the live selection: keep the last passage selection until the next one.
  document.addEventListener("selectionchange", () => {
    const sel = getSelection();
    if (!sel || !sel.rangeCount) return;
    const node = sel.anchorNode, el = node && (node.nodeType === 1 ? node : node.parentElement);
    if (!sel.isCollapsed) { const got = fromSelection(); cached = got && !got.error ? got : null; }
    else if (el && el.closest(PASSAGE)) cached = null;
  });
  /* Sentences: an end is . ! or ? (plus closing quotes or brackets) before whitespace, or glued to a
   * capital letter after a word ("blood.For"); never after an abbreviation or initial ("Dr.", "e.g.",
   * "U.S.", "J.") nor inside a number ("3.5"). Spans are UTF-16 offsets into the text. */
  const ABBR = /(?:^|[^\p{L}])(?:mr|mrs|ms|dr|prof|sr|jr|st|vs|no|fig|approx|inc|ltd|co|al|cf|ca|\p{L}(?:\.\p{L})*)$/iu;
  function sentenceSpans(text) {
    const out = [], re = /[.!?]+["'\u201d\u2019)\]\u00bb]*(?=(\s)|(\p{Lu}))/gu;
    let start = 0, m;
    const push = (s, e) => { const span = trim(text, s, e); if (span[0] < span[1]) out.push(span); };
    while ((m = re.exec(text))) {
      const before = text.slice(Math.max(start, m.index - 12), m.index);
      if ((m[0][0] === "." && ABBR.test(before)) || (m[2] && !/\p{Ll}{2}$|\d$/u.test(before))) continue; // "U.S.Army", ".NET"
      push(start, re.lastIndex);
      start = re.lastIndex;
    }
    push(start, text.length);
    return out;
  }
  function domRange(el, s, e) { // UTF-16 offsets over the element's text nodes, marks included
    const r = document.createRange(), walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    r.selectNodeContents(el);
    for (let seen = 0, n; (n = walker.nextNode()); seen += n.data.length) {
      if (s >= seen && s < seen + n.data.length) r.setStart(n, s - seen);
      if (e > seen && e <= seen + n.data.length) { r.setEnd(n, e - seen); break; }
    }
    return r;
  }
  function reveal(range, el) { // scroll only the passages pane, not the page under it
    const pane = el.closest(".pane") || el.parentElement, box = range.getBoundingClientRect(), view = pane.getBoundingClientRect();
    if (box.top < view.top + 40) pane.scrollTop -= view.top + 40 - box.top;
    else if (box.bottom > view.bottom - 40) pane.scrollTop += Math.min(box.top - view.top - 40, box.bottom - view.bottom + 40);
  }
  // ---- the sentence cursor: {passage id, at: UTF-16 start of its first sentence, count}, drawn while in use
  let cursor = null, shown = false;
  function locate() {
    const all = passages(), p = cursor ? all.findIndex((el) => pid(el) === cursor.passage) : -1;
    const spans = p < 0 ? [] : sentenceSpans(all[p].textContent);
    let i = 0;
    while (i < spans.length - 1 && spans[i][1] <= cursor.at) i++;
    return spans.length ? { all, p, i, spans, n: Math.min(cursor.count, spans.length - i) } : null;
  }
  const cursorRange = (loc) => domRange(loc.all[loc.p], loc.spans[loc.i][0], loc.spans[loc.i + loc.n - 1][1]);
  function draw(scroll) {
    if (hl) hl.delete("sentence-cursor");
    const loc = shown && locate(), range = loc && cursorRange(loc);
    if (range && hl) hl.set("sentence-cursor", new Highlight(range));
    if (range && scroll) reveal(range, loc.all[loc.p]);
    return loc;
  }
  function place(p, i, count) { // show the cursor on sentence i of passage p
    const el = passages()[p], spans = el ? sentenceSpans(el.textContent) : [];
    if (!spans[i]) return false;
    NS.clearPassageSelection(); // the latest thing pointed at is the evidence
    [cursor, shown] = [{ passage: pid(el), at: spans[i][0], count: count || 1 }, true];
    const loc = draw(true), span = rangeInPassage(cursorRange(loc), loc.all[loc.p]);
    const which = loc.n > 1 ? `sentences ${loc.i + 1}\u2013${loc.i + loc.n}` : `sentence ${loc.i + 1}`;
    NS.say(`Evidence: passage ${p + 1}, ${which}` + (span ? `: \u201c${span.text}\u201d` : ""));
    return true;
  }
  function move(step) { // over passage boundaries and empty passages; stays at the first or last sentence
    const loc = locate(), all = passages(); // i null: the last sentence of passage p
    let p = loc ? loc.p : step > 0 ? 0 : all.length - 1;
    let i = loc ? (step > 0 ? loc.i + loc.n - 1 : loc.i) + step : step > 0 ? 0 : null;
    for (; p >= 0 && p < all.length; p += step, i = step > 0 ? 0 : null) {
      if (place(p, i === null ? sentenceSpans(all[p].textContent).length - 1 : i)) return true;
    }
    return loc ? place(loc.p, loc.i) : false;
  }
  // ---- search: every hit highlighted; Enter puts the cursor on the sentence of the next hit
  let hits = [], hit = -1;
  function search(q) {
    const needle = q.trim().toLowerCase();
    [hits, hit] = [[], -1];
    if (hl) hl.delete("search-hit");
    if (needle.length < 2) return 0;
    passages().forEach((el, p) => {
      const text = el.textContent.toLowerCase();
      for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) hits.push({ p, at, end: at + needle.length });
    });
    if (hl && hits.length) hl.set("search-hit", new Highlight(...hits.map((h) => domRange(passages()[h.p], h.at, h.end))));
    return hits.length;
  }
  function nextHit() {
    if (!hits.length) return NS.say("No passage contains that text.", true);
    hit = (hit + 1) % hits.length;
    const h = hits[hit];
    place(h.p, Math.max(0, sentenceSpans(passages()[h.p].textContent).findIndex((s) => s[1] > h.at)));
  }
  const box = document.getElementById("passage-search") || document.createElement("input");
  box.addEventListener("input", () => NS.say(box.value.trim().length < 2 ? "" : `${search(box.value)} hits: Enter goes to the next.`));
  box.addEventListener("keydown", (ev) => { if (ev.key === "Enter") { ev.preventDefault(); nextHit(); } });
  Object.assign(NS, { sentenceSpans, rangeInPassage });
  NS.sentenceCursor = {
    move,
    extend: (step) => {
      const loc = locate();
      return loc ? place(loc.p, loc.i, Math.max(1, Math.min(loc.spans.length - loc.i, loc.n + step))) : move(1);
    },
    jump: (n) => place(n - 1, 0) || NS.say(`There is no passage ${n}.`, true),
    redraw: () => draw(false),
    hide: () => { if (shown && /^Evidence: p/.test(document.querySelector("[data-evidence-status]").textContent)) NS.say("Sentence cursor put away for this claim: . or , brings it back."); shown = false; draw(false); },
    current: () => { const loc = shown && locate(); return loc ? rangeInPassage(cursorRange(loc), loc.all[loc.p]) : null; },
  };
  NS.evidence = () => fromSelection() || cached || NS.sentenceCursor.current();
  NS.passageSelection = () => fromSelection() || cached;
  NS.clearPassageSelection = () => { cached = null; const sel = getSelection(); if (sel) sel.removeAllRanges(); };
  const typing = (el) => !!el && !!el.tagName && (el.isContentEditable || /^(TEXTAREA|SELECT)$/.test(el.tagName) ||
    (el.tagName === "INPUT" && !/^(checkbox|radio|button|submit|reset)$/.test(el.type)));
  /* A dialog filled on first use (guidelines, shortcuts): its button (data-dialog; hx-get, hx-trigger="click once" if it
   * starts empty) loads it; it opens once filled, at its top; a press while it is open closes it. Keys press the button. */
  const show = (d) => { if (d && d.open) d.close(); else if (d && d.firstElementChild) { d.showModal(); d.scrollTop = 0; } };
  document.addEventListener("click", (ev) => { const b = ev.target.closest("[data-dialog]"); if (b) show(document.getElementById(b.dataset.dialog)); });
  document.addEventListener("htmx:afterSettle", (ev) => { if (ev.detail.target.tagName === "DIALOG") show(ev.detail.target); });
  document.addEventListener("htmx:responseError", (ev) => { const x = ev.detail.xhr; if (/text\/plain/.test(x.getResponseHeader("content-type"))) NS.say(x.responseText, true); }); // a refusal htmx does not swap (401: logged out)
  /* keys(map, home): the page's one keydown handler. Shortcuts pause while typing (Escape leaves the field for home());
   * p then digits jumps to passage n; . , Shift+arrows and / drive the cursor and the search on both pages; g opens
   * the audit's guidelines (when it has some; Esc closes them). */
  NS.keys = (map, home) => {
    let digits = null;
    const common = {
      ".": () => move(1), ",": () => move(-1), p: () => { digits = ""; NS.say("Passage number?"); },
      "/": () => box.focus() || box.select(),
      g: () => { const b = document.querySelector("[data-dialog=guidelines_dialog]"); return b ? b.click() : false; },
    };
    document.addEventListener("keydown", (ev) => {
      const t = ev.target, k = ev.getModifierState("CapsLock") && !ev.shiftKey && /^[A-Z]$/.test(ev.key) ? ev.key.toLowerCase() : ev.key; // Caps Lock: letters work
      if (ev.defaultPrevented || ev.altKey || ev.metaKey || ev.isComposing) return;
      if (typing(t)) {
        if (k === "Escape") { ev.preventDefault(); t.blur(); const h = home(t); if (h) h.focus({ preventScroll: true }); }
        if (!ev.ctrlKey || k !== "Enter") return;
      }
      if (document.querySelector("dialog[open]") && !"?g".includes(k)) return; // the dialog handles Escape; ? and g close theirs
      if (digits !== null && k === "Escape") NS.say(""); // p then Esc: no jump
      const more = digits !== null && /^\d$/.test(k) && NS.sentenceCursor.jump(+(digits += k)) !== null; // p 1 7: passage 17
      if (more || (digits !== null && k === "Enter")) ev.preventDefault(); // ends at Enter or when no digit more fits
      digits = more && +digits * 10 <= passages().length ? digits : null;
      if (more || ev.defaultPrevented) return;
      const inPane = t.closest && t.closest(".passages-pane, #passages");
      if (inPane && /^Arrow(Down|Up)$/.test(k)) return; // arrows scroll the focused pane
      if (ev.shiftKey && /^Arrow(Right|Left)$/.test(k) && !inPane && t.type !== "radio") {
        ev.preventDefault();
        return NS.sentenceCursor.extend(k === "ArrowRight" ? 1 : -1);
      }
      const name = (ev.ctrlKey ? "Ctrl+" : "") + (ev.shiftKey && k === "Enter" ? "Shift+" : "") + k;
      const fn = map[name] || (!ev.ctrlKey && common[k]);
      if (fn && fn(ev) !== false) ev.preventDefault();
    });
  };
})();
