// The game's opening and its book moves: the ECCO code and name of the current game (the state's
// `opening`, computed by the server from the moves) on a line above the move list, and a small
// mark on the moves the computer took from its opening book (a move's `book: true`).

import { language, t } from "./i18n.js";

/** Show `st.opening` ({code, name} or null) in #opening-line; hidden while `browsing` another
 *  position (a record, a library game, the editor) and when there is no opening to name. */
export function renderOpening(st, browsing) {
  const el = document.getElementById("opening-line");
  if (!el) return;
  const op = st && st.opening;
  el.hidden = Boolean(browsing || !op);
  if (el.hidden) { el.replaceChildren(); return; }
  const label = document.createElement("span");
  label.className = "opening-label";
  label.textContent = t("opening");
  const code = document.createElement("b");
  code.className = "opening-code";
  code.textContent = op.code;
  const name = document.createElement("span");
  name.className = "opening-name";
  // the ECCO 2004 names are Chinese; the English one is built from them by a term table (study/ecco.py)
  const shown = language() === "en" && op.name_en ? op.name_en : op.name;
  name.textContent = shown;
  el.replaceChildren(label, " ", code, " ", name);
  el.title = `ECCO ${op.code} ${shown}`;
}

/** Mark the moves of #move-list whose state entry says `book: true` (data-book holds the mark). */
export function markBookMoves(st) {
  const list = document.getElementById("move-list");
  if (!list || !st) return;
  for (const span of list.querySelectorAll(".mv[data-ply]")) {
    const m = st.moves[Number(span.dataset.ply)];
    if (m && m.book) {
      span.dataset.book = t("book_mark");
      span.classList.add("book");
      span.title = `${m.iccs} · ${t("book_move")}`;
    }
  }
}
