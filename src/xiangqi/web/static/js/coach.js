// The coach in the side panel: whether the game is rated (and why not), the help taken (悔棋, the
// coach's takebacks). The state's ``coach`` part comes from web/coach_api.py.

import { LEVEL_NAMES, fill, language, t } from "./i18n.js";
import { ratingLine } from "./profile.js";

/** The coach panel in ``panel`` (an element of the side panel). ``api`` is the page's fetch wrapper,
 *  ``toast`` its message line, ``onState`` renders a state a request answered with. */
export function createCoach({ panel, api, toast, onState }) {
  let dismissed = null; // "game:ply" of a warning the player closed
  let threat = null; // {fen, text} of the last threat shown

  function line(cls, text) {
    const p = document.createElement("p");
    p.className = cls;
    p.textContent = text;
    return p;
  }

  function button(id, label, onClick) {
    const b = document.createElement("button");
    b.type = "button";
    b.id = id;
    b.textContent = label;
    b.addEventListener("click", onClick);
    return b;
  }

  async function post(path, body) {
    try {
      return await api(path, { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body || {}) });
    } catch (e) {
      toast(`${t("error")}: ${e.message}`);
      return null;
    }
  }

  /** Show the coach's part of state ``st`` (``browsing``: another position is on the board). */
  function render(st, { browsing = false } = {}) {
    const c = st && st.coach;
    const vsComputer = st && Object.values(st.players).includes("engine") && Object.values(st.players).includes("human");
    panel.replaceChildren();
    if (!c || !vsComputer || browsing) { panel.hidden = true; return; }
    const zh = language() === "zh";
    const note = c.note;
    if (c.checking) panel.appendChild(line("coach-checking", t("coach_checking")));
    else if (note && note.warn && dismissed !== `${st.id}:${note.ply}`) {
      const box = document.createElement("div");
      box.className = `coach-warning ${note.class}`;
      box.id = "coach-warning";
      box.setAttribute("role", "alert");
      box.appendChild(line("coach-text", zh ? note.text_zh : note.text_en));
      const row = document.createElement("div");
      row.className = "row";
      row.append(
        button("btn-coach-takeback", t("coach_takeback"), async () => {
          const next = await post("/api/coach/takeback", { ply: note.ply });
          if (next) onState(next);
        }),
        button("btn-coach-dismiss", t("coach_dismiss"), () => { dismissed = `${st.id}:${note.ply}`; render(st); }));
      box.appendChild(row);
      panel.appendChild(box);
    } else if (note && c.mode && (note.class === "best" || note.class === "good")) {
      panel.appendChild(line("coach-good", t("coach_good")));
    }
    const text = c.rating ? ratingLine(st) : c.rated ? t("rated_game") : (zh ? c.why_zh : c.why_en);
    const rated = line(`coach-rated ${c.rated ? "yes" : "no"}`, text);
    rated.id = "coach-rated";
    const help = [];
    if (c.undos) help.push(fill(t("undos_n"), { n: c.undos }));
    if (c.coach_takebacks) help.push(fill(t("coach_takebacks"), { n: c.coach_takebacks }));
    const myTurn = !st.result && !st.thinking && st.players[st.turn] === "human";
    if (threat && threat.fen === st.fen) panel.appendChild(line("coach-threat", zh ? threat.zh : threat.en));
    const foot = document.createElement("div");
    foot.className = "coach-foot";
    foot.appendChild(rated);
    if (help.length) foot.appendChild(line("coach-help", help.join(" · ")));
    if (myTurn) {
      const b = button("btn-threat", t("threat"), async () => {
        b.disabled = true;
        const th = await post("/api/coach/threat");
        if (th) { threat = { fen: th.fen, zh: th.text_zh, en: th.text_en }; render(st); }
        b.disabled = false;
      });
      b.title = t("threat_title");
      foot.appendChild(b);
    }
    panel.appendChild(foot);
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

  /** The first step of a new hint: 1 (only the piece) in coach mode, else 2 (the move); a
   *  further press of 提示 adds a step, up to 3 (the line). */
  function firstHintStep(st) {
    return st && st.coach && st.coach.mode ? 1 : 2;
  }

  /** The board's shapes for hint ``move`` (ICCS) at ``step``: a ring on the piece, then the arrow. */
  function hintShapes(move, step) {
    const from = move.slice(0, 2), to = move.slice(2, 4);
    return step <= 1 ? [{ from, to: from, kind: "hint piece" }] : [{ from, to, kind: "hint" }];
  }

  /** The hint line's text at ``step``: "动这个子", the move (``moveText``, as the page writes it), the
   *  move and the line after it (Chinese notation). */
  function hintText(h, step, moveText) {
    if (step <= 1) return t("hint_piece");
    if (step === 2 || !h.line || h.line.length < 2) return moveText;
    return `${moveText} · ${t("hint_line")}${h.line.slice(1).join(" ")}`;
  }

  /** Whether a move about to be played in ``st`` is shown to the coach first (coach mode, the player's
   *  turn against the computer). */
  function checksFirst(st) {
    const c = st && st.coach;
    const players = st ? Object.values(st.players) : [];
    return Boolean(c && c.mode && !st.result && !st.thinking && players.includes("engine")
      && st.players[st.turn] === "human");
  }

  /** The coach's word on ``iccs`` before it is sent (POST /api/coach/check): the note, or null when
   *  the coach cannot say (the move then goes as it is; the word after the move still comes). */
  async function precheck(iccs) {
    panel.hidden = false;
    const wait = line("coach-checking", t("coach_checking"));
    panel.prepend(wait);
    try {
      return await api("/api/coach/check", { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ move: iccs }) });
    } catch {
      return null;
    } finally {
      wait.remove();
    }
  }

  /** The player saw the warning for ``ply`` before moving and played the move anyway: not shown again. */
  function confirmed(gameId, ply) { dismissed = `${gameId}:${ply}`; }

  return { render, firstHintStep, hintShapes, hintText, levelText, levelTitle, addLevelChoice, namedLevel,
    checksFirst, precheck, confirmed };
}
