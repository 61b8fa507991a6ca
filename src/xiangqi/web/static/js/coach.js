// The coach in the side panel: whether the game is rated (and why not), the help taken (悔棋, the
// coach's takebacks). The state's ``coach`` part comes from web/coach_api.py.

import { fill, language, t } from "./i18n.js";
import { ratingLine } from "./profile.js";

/** The coach panel in ``panel`` (an element of the side panel). */
export function createCoach({ panel }) {
  function line(cls, text) {
    const p = document.createElement("p");
    p.className = cls;
    p.textContent = text;
    return p;
  }

  /** Show the coach's part of state ``st`` (``browsing``: another position is on the board). */
  function render(st, { browsing = false } = {}) {
    const c = st && st.coach;
    const vsComputer = st && Object.values(st.players).includes("engine") && Object.values(st.players).includes("human");
    panel.replaceChildren();
    if (!c || !vsComputer || browsing) { panel.hidden = true; return; }
    const zh = language() === "zh";
    const text = c.rating ? ratingLine(st) : c.rated ? t("rated_game") : (zh ? c.why_zh : c.why_en);
    const rated = line(`coach-rated ${c.rated ? "yes" : "no"}`, text);
    rated.id = "coach-rated";
    panel.appendChild(rated);
    const help = [];
    if (c.undos) help.push(fill(t("undos_n"), { n: c.undos }));
    if (c.coach_takebacks) help.push(fill(t("coach_takebacks"), { n: c.coach_takebacks }));
    if (help.length) panel.appendChild(line("coach-help", help.join(" · ")));
    panel.hidden = false;
  }

  return { render };
}
