// `g` opens the audit's guidelines (the #guidelines_dialog the page includes); Esc closes them.
document.addEventListener("keydown", (ev) => {
  if (ev.key !== "g" || ev.ctrlKey || ev.metaKey || ev.altKey || ev.defaultPrevented) return;
  const t = ev.target;
  if (t && t.closest && t.closest("input, textarea, select, [contenteditable]")) return;
  const dialog = document.getElementById("guidelines_dialog");
  if (!dialog || dialog.open) return;
  ev.preventDefault();
  dialog.showModal();
});
