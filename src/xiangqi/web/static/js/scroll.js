// Scrolling a list to one of its items without scrolling the page (Element.scrollIntoView also
// scrolls every scrollable ancestor, the page included: a long move list then moved the board).

/** Scroll ``list`` (a scrollable element) so that ``item`` (one of its descendants) is in view. */
export function keepInView(list, item) {
  if (!list || !item) return;
  const l = list.getBoundingClientRect(), r = item.getBoundingClientRect();
  if (r.top < l.top) list.scrollTop -= l.top - r.top;
  else if (r.bottom > l.bottom) list.scrollTop += r.bottom - l.bottom;
}
