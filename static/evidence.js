/* Text selected in a passage -> {passage, start, end, text}, offsets into the raw passage text.
 *
 * A passage is rendered as one element with data-passage="<id>" whose text is exactly the stored
 * passage text, split by <mark> elements (evidence already attached). Offsets are counted over the
 * element's text nodes, so marks do not shift them, and returned in code points (Python's str
 * indexing), not the UTF-16 units JavaScript counts in. Reused by the adjudication view:
 *   window.ClaimAudit.passageSelection()          -> selection object, {error}, or null
 *   window.ClaimAudit.rangeInPassage(range, el)   -> the same for a given Range and passage element
 *   window.ClaimAudit.evidence()                  -> the selection if any, else the sentence cursor's span
 *   window.ClaimAudit.sentenceCursor.move(+1|-1)  -> next / previous sentence over all passages
 *   window.ClaimAudit.sentenceCursor.extend(+1|-1) -> grow / shrink the cursor by one sentence
 *   window.ClaimAudit.sentenceCursor.redraw()     -> re-highlight after passages were re-rendered
 * The cursor's status ("Evidence: passage 2, sentence 3") goes to the [data-evidence-status] element.
 */
(function () {
  "use strict";
  var NS = (window.ClaimAudit = window.ClaimAudit || {});
  var cached = null;
  var PASSAGE = "[data-passage], [data-passage-id]"; // the workspace's and the adjudication page's markup

  function codePoints(s) {
    return Array.from(s).length; // iterates by code point
  }

  function rangeInPassage(range, el) {
    var whole = document.createRange();
    whole.selectNodeContents(el);
    var r = range.cloneRange();
    // A selection that starts in the heading or runs past the passage is clipped to the passage text.
    if (r.compareBoundaryPoints(Range.START_TO_START, whole) < 0) r.setStart(el, 0);
    if (r.compareBoundaryPoints(Range.END_TO_END, whole) > 0) r.setEnd(el, el.childNodes.length);
    var before = document.createRange();
    before.setStart(el, 0);
    before.setEnd(r.startContainer, r.startOffset);
    var full = el.textContent;
    var s = before.toString().length;
    var e = s + r.toString().length;
    while (s < e && /\s/.test(full.charAt(s))) s++;
    while (e > s && /\s/.test(full.charAt(e - 1))) e--;
    if (s >= e) return null;
    return { passage: el.getAttribute("data-passage") || el.getAttribute("data-passage-id"), start: codePoints(full.slice(0, s)),
      end: codePoints(full.slice(0, e)), text: full.slice(s, e) };
  }

  function fromSelection() {
    var sel = window.getSelection();
    if (!sel || !sel.rangeCount || sel.isCollapsed) return null;
    var range = sel.getRangeAt(0);
    var hits = Array.prototype.filter.call(document.querySelectorAll(PASSAGE), function (el) {
      return range.intersectsNode(el);
    });
    if (!hits.length) return null;
    if (hits.length > 1) return { error: "Select text inside one passage only." };
    return rangeInPassage(range, hits[0]);
  }

  // Clicking a button can drop the live selection in some browsers: remember the last passage selection
  // until the annotator selects something else or clicks into a passage.
  document.addEventListener("selectionchange", function () {
    var sel = window.getSelection();
    if (!sel || !sel.rangeCount) return;
    if (!sel.isCollapsed) {
      var got = fromSelection();
      cached = got && !got.error ? got : null;
    } else {
      var node = sel.anchorNode;
      var el = node && (node.nodeType === 1 ? node : node.parentElement);
      if (el && el.closest(PASSAGE)) cached = null;
    }
  });

  // ---- the sentence cursor: keyboard-only evidence ----
  // A sentence ends at . ! or ? (plus closing quotes or brackets) followed by whitespace. Spans are UTF-16
  // indices into el.textContent; rangeInPassage turns them into stored offsets like a mouse selection.
  function sentenceSpans(text) {
    var out = [], re = /[.!?]+["'\u201d\u2019)\]]*(?=\s)/g, start = 0, m;
    function push(s, e) {
      while (s < e && /\s/.test(text.charAt(s))) s++;
      while (e > s && /\s/.test(text.charAt(e - 1))) e--;
      if (s < e) out.push([s, e]);
    }
    while ((m = re.exec(text))) { push(start, re.lastIndex); start = re.lastIndex; }
    push(start, text.length);
    return out;
  }

  function domRange(el, s, e) { // UTF-16 offsets over the element's text nodes, marks included
    var r = document.createRange(), walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT), seen = 0, n;
    r.setStart(el, 0);
    r.setEnd(el, el.childNodes.length);
    while ((n = walker.nextNode())) {
      var len = n.data.length;
      if (s >= seen && s < seen + len) r.setStart(n, s - seen);
      if (e > seen && e <= seen + len) { r.setEnd(n, e - seen); break; }
      seen += len;
    }
    return r;
  }

  var cursor = null; // {passage: id, at: UTF-16 start of the first sentence, count: sentences covered}

  function passages() { return Array.prototype.slice.call(document.querySelectorAll(PASSAGE)); }
  function pid(el) { return el.getAttribute("data-passage") || el.getAttribute("data-passage-id"); }

  // Where the cursor is in the passages now on the page: passage index, sentence index, its spans.
  function locate() {
    if (!cursor) return null;
    var all = passages();
    for (var p = 0; p < all.length; p++) {
      if (pid(all[p]) !== cursor.passage) continue;
      var spans = sentenceSpans(all[p].textContent), i = 0;
      while (i < spans.length - 1 && spans[i][1] <= cursor.at) i++;
      return spans.length ? { all: all, p: p, i: i, spans: spans } : null;
    }
    return null;
  }

  function cursorRange(loc) {
    var last = Math.min(loc.spans.length - 1, loc.i + cursor.count - 1);
    return domRange(loc.all[loc.p], loc.spans[loc.i][0], loc.spans[last][1]);
  }

  function reveal(range, el) { // scroll only the passages pane, not the page under it
    var pane = el.closest(".passages-pane, .pane") || el.parentElement, box = range.getBoundingClientRect();
    var view = pane.getBoundingClientRect(), margin = 40;
    if (box.top < view.top + margin) pane.scrollTop -= view.top + margin - box.top;
    else if (box.bottom > view.bottom - margin) pane.scrollTop += Math.min(box.top - view.top - margin, box.bottom - view.bottom + margin);
  }

  function announce(text) {
    document.querySelectorAll("[data-evidence-status]").forEach(function (el) {
      el.textContent = text;
      el.classList.remove("bad");
    });
  }

  function draw(scroll) {
    var loc = locate();
    var hl = window.CSS && CSS.highlights;
    if (hl) hl.delete("sentence-cursor");
    if (!loc) return null;
    var range = cursorRange(loc);
    if (hl) hl.set("sentence-cursor", new Highlight(range));
    else { var sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range); } // still visible
    if (scroll) reveal(range, loc.all[loc.p]);
    return loc;
  }

  function say(loc) {
    var n = Math.min(cursor.count, loc.spans.length - loc.i), span = rangeInPassage(cursorRange(loc), loc.all[loc.p]);
    var which = n > 1 ? "sentences " + (loc.i + 1) + "\u2013" + (loc.i + n) : "sentence " + (loc.i + 1);
    announce("Evidence: passage " + (loc.p + 1) + ", " + which + (span ? ": \u201c" + span.text + "\u201d" : ""));
  }

  function move(step) {
    var loc = locate(), all = passages(), p, i; // i === null: the last sentence of passage p
    if (loc) { p = loc.p; i = (step > 0 ? loc.i + Math.min(cursor.count, loc.spans.length - loc.i) - 1 : loc.i) + step; }
    else { p = step > 0 ? 0 : all.length - 1; i = step > 0 ? 0 : null; }
    while (p >= 0 && p < all.length) { // walk over passage boundaries and empty passages
      var spans = sentenceSpans(all[p].textContent);
      if (i === null) i = spans.length - 1;
      if (i >= 0 && i < spans.length) {
        NS.clearPassageSelection(); // the latest thing the annotator pointed at is the evidence
        cursor = { passage: pid(all[p]), at: spans[i][0], count: 1 };
        say(draw(true));
        return true;
      }
      if (step > 0) { p++; i = 0; } else { p--; i = null; }
    }
    if (loc) say(draw(true)); // already at the first or last sentence: stay there
    return !!loc;
  }

  function extend(step) {
    var loc = locate();
    if (!loc) return move(1);
    cursor.count = Math.max(1, Math.min(loc.spans.length - loc.i, cursor.count + step));
    NS.clearPassageSelection();
    say(draw(true));
    return true;
  }

  NS.sentenceSpans = sentenceSpans;
  NS.sentenceCursor = {
    move: move,
    extend: extend,
    redraw: function () { draw(false); },
    current: function () { var loc = locate(); return loc ? rangeInPassage(cursorRange(loc), loc.all[loc.p]) : null; },
    clear: function () { cursor = null; draw(false); },
  };
  NS.evidence = function () { return NS.passageSelection() || NS.sentenceCursor.current(); };
  NS.rangeInPassage = rangeInPassage;
  NS.passageSelection = function () {
    return fromSelection() || cached;
  };
  NS.clearPassageSelection = function () {
    cached = null;
    var sel = window.getSelection();
    if (sel) sel.removeAllRanges();
  };
})();
