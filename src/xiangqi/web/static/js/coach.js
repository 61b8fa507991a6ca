// The coach in the side panel: whether the game is rated (and why not), the help taken (悔棋, the
// coach's takebacks). The state's ``coach`` part comes from web/coach_api.py.

import { LEVEL_NAMES, fill, language, t } from "./i18n.js";
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

  /** The adaptive level as the player bar shows it (自适应 · 常侍 ≈1500), null for a named level. */
  function levelText(st) {
    const a = st && st.level === "adaptive" && st.coach && st.coach.adaptive;
    if (!a) return st && st.level === "adaptive" ? LEVEL_NAMES[language()].adaptive : null;
    if (a.elo == null) return LEVEL_NAMES[language()].adaptive;
    return fill(t("adaptive_label"), { rank: a.rank || "", elo: Math.round(a.elo / 10) * 10 });
  }

  /** The adaptive level's settings in words (the player bar's tooltip), "" for a named level. */
  function levelTitle(st) {
    const a = st && st.level === "adaptive" && st.coach && st.coach.adaptive;
    if (!a || !a.between) return "";
    const names = LEVEL_NAMES[language()];
    return fill(t("adaptive_title"), { a: names[a.between[0]], b: names[a.between[1]], depth: a.depth ?? "—",
      multipv: a.multipv, temp: a.temperature_cp });
  }

  /** Add the adaptive level (自适应) to the new-game dialog's level choice ``sel``. */
  function addLevelChoice(sel) {
    const o = document.createElement("option");
    o.value = "adaptive";
    o.textContent = t("adaptive_level");
    sel.appendChild(o);
  }

  /** A named level for a request that knows only those (playing on from a record): the adaptive
   *  level's nearer measured neighbour. */
  function namedLevel(st) {
    const level = (st && st.level) || "beginner";
    if (level !== "adaptive") return level;
    const a = st.coach && st.coach.adaptive;
    return a && a.between ? a.between[a.t < 0.5 ? 0 : 1] : "beginner";
  }

  return { render, levelText, levelTitle, addLevelChoice, namedLevel };
}
