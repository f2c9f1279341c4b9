/* Text selected in a passage -> {passage, start, end, text}, offsets into the raw passage text.
 *
 * A passage is rendered as one element with data-passage="<id>" whose text is exactly the stored
 * passage text, split by <mark> elements (evidence already attached). Offsets are counted over the
 * element's text nodes, so marks do not shift them, and returned in code points (Python's str
 * indexing), not the UTF-16 units JavaScript counts in. Reused by the adjudication view:
 *   window.ClaimAudit.passageSelection()          -> selection object, {error}, or null
 *   window.ClaimAudit.rangeInPassage(range, el)   -> the same for a given Range and passage element
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
