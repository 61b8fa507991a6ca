// The named computer opponents (web/talk_api.py, app/opponents/persona.py): the choice in the new-game dialog,
// the opponent's name on its player bar, and its remarks in a speech bubble beside that bar, spoken
// with the browser's speech synthesis when the talk_speech setting is on. The server decides every
// remark (state.talk.remarks, oldest first); this file only shows and speaks them.

import { fill, language, t } from "./i18n.js";

const $ = (sel) => document.querySelector(sel);

// The order of remarks made at the same moment (kinds of app/opponents/persona.py): what happened, then what it means.
const ORDER = ["greet", "history", "blunder_player", "blunder_self", "sacrifice_player", "sacrifice_self", "rook_won",
  "rook_lost", "opening", "perpetual", "forbidden", "mate_found", "mated", "better", "winning", "worse", "losing",
  "resign", "end_win", "end_loss", "end_draw"];

/** "about" before an Elo, as the level list writes it (i18n level_label: ≈ in Chinese, ~ in English). */
function approx() {
  return language() === "en" ? "~" : "≈";
}

/** The talk part of the page. ``api`` is the page's fetch helper, ``changeSetting(key, value)`` its
 *  settings writer. */
export function createTalk({ api, changeSetting }) {
  let opponents = [];
  let spokenFor = null; // [game id, highest remark id seen] : remarks up to it are not spoken again
  let open = false; // the log of all remarks shown
  let settings = {}; // the page's settings (talk, talk_speech): a change shows at once

  const row = document.createElement("div");
  row.id = "talk";
  row.className = "talk-row";
  row.hidden = true;
  row.innerHTML = `<span class="talk-avatar" aria-hidden="true"></span>
    <div class="talk-bubble" role="status" aria-live="polite"><p class="talk-text"></p><ol class="talk-log" hidden></ol></div>
    <button type="button" class="talk-more" aria-expanded="false">▾</button>`;
  const more = row.querySelector(".talk-more");
  more.addEventListener("click", () => {
    open = !open;
    more.setAttribute("aria-expanded", String(open));
    if (last) render(last);
  });
  let last = null;

  function label(op) {
    const name = language() === "en" ? op.name_en : op.name_zh;
    const level = language() === "en" ? op.level_en : op.level_zh;
    const style = language() === "en" ? op.style_en : op.style_zh;
    const elo = op.elo == null ? "" : ` ${approx()}${Math.round(op.elo / 10) * 10}`; // as the level list shows it
    return fill(t("opponent_label"), { name, level, style, elo });
  }

  async function load() {
    try {
      opponents = (await api("/api/talk/opponents")).opponents || [];
    } catch {
      opponents = [];
    }
    fillDialog();
  }

  /** The opponent choice of the new-game dialog: 不选 (the level list decides) or a named opponent,
   *  whose level then fixes the level list. Only for a game against the computer (执红 / 执黑). */
  function fillDialog() {
    const sel = $("#sel-opponent");
    if (!sel) return;
    const keep = sel.value;
    const added = [...sel.querySelectorAll("optgroup.added-engines")]; // engines.js's, kept
    sel.replaceChildren();
    const none = document.createElement("option");
    none.value = "";
    none.textContent = t("opponent_none");
    sel.appendChild(none);
    for (const op of opponents) {
      const o = document.createElement("option");
      o.value = op.key;
      o.textContent = label(op);
      sel.appendChild(o);
    }
    sel.append(...added);
    sel.value = [...sel.options].some((o) => o.value === keep) ? keep : "";
    syncDialog();
  }

  function syncDialog() {
    const sel = $("#sel-opponent");
    if (!sel) return;
    const form = sel.form;
    const mode = form.mode.value;
    const vsComputer = mode === "red" || mode === "black";
    sel.disabled = !vsComputer;
    const op = vsComputer ? opponents.find((o) => o.key === sel.value) : null;
    const about = $("#opponent-about");
    about.hidden = !op;
    about.textContent = op ? (language() === "en" ? op.about_en : op.about_zh) : "";
    const level = $("#sel-level");
    if (op) level.value = op.level;
    // a named opponent has its level; an added engine (engine:<id>) plays at its own strength
    level.disabled = Boolean(op) || (vsComputer && sel.value.startsWith("engine:"));
  }

  const dlgSel = $("#sel-opponent");
  if (dlgSel) {
    dlgSel.addEventListener("change", syncDialog);
    for (const r of dlgSel.form.querySelectorAll('input[name="mode"]')) r.addEventListener("change", syncDialog);
  }
  for (const [id, key] of [["#set-talk", "talk"], ["#set-talk-speech", "talk_speech"]]) {
    const el = $(id);
    if (el) el.addEventListener("change", (e) => changeSetting(key, e.target.value));
  }

  /** The chosen opponent key of the new-game dialog's form (null: none, or not a game against the computer). */
  function chosen(form) {
    const sel = form.querySelector("#sel-opponent");
    return sel && !sel.disabled && sel.value ? sel.value : null;
  }

  /** The opponent's name for its player bar (阿福 · 初级 · 都尉 ≈1334), or null without one. */
  function playerName(st) {
    const op = st.talk && st.talk.opponent;
    if (!op) return null;
    const name = language() === "en" ? op.name_en : op.name_zh;
    const level = language() === "en" ? op.level_en : op.level_zh;
    const rank = language() === "zh" && op.rank_zh ? ` · ${op.rank_zh}` : "";
    return `${name} · ${level}${rank}${op.elo == null ? "" : ` ${approx()}${Math.round(op.elo / 10) * 10}`}`;
  }

  function text(r) {
    return language() === "en" ? r.en : r.zh;
  }

  function speak(words, op) {
    document.body.dataset.lastRemarkSpoken = words;
    try {
      if (!window.speechSynthesis || !window.SpeechSynthesisUtterance) return;
      const u = new SpeechSynthesisUtterance(words);
      u.lang = language() === "en" ? "en-US" : "zh-CN";
      u.pitch = op.pitch || 1;
      u.rate = op.rate || 1;
      window.speechSynthesis.speak(u);
    } catch {
      // speech is optional
    }
  }

  /** Show ``st``'s remarks beside the opponent's player bar (and speak the new ones). */
  function render(st, { browsing = false } = {}) {
    last = st;
    const tk = st && st.talk;
    const op = tk && tk.opponent;
    const on = tk && tk.enabled && settings.talk !== "off";
    const remarks = (on && tk.remarks) || [];
    if (!op || !on || browsing) {
      row.hidden = true;
      document.body.dataset.talk = "0";
      return;
    }
    document.body.dataset.talk = "1";
    const engine = st.players.red === "engine" ? "red" : "black";
    const bar = document.querySelector(`.player-bar[data-color="${engine}"]`) || $("#bar-top");
    if (row.previousElementSibling !== bar) bar.after(row);
    row.hidden = false;
    row.dataset.side = bar.id === "bar-bottom" ? "bottom" : "top";
    row.querySelector(".talk-avatar").textContent = op.avatar;
    row.querySelector(".talk-avatar").title = language() === "en" ? op.name_en : op.name_zh;
    // the bubble: what was said at the latest moment (a blunder and the evaluation after it, say)
    const newest = remarks[remarks.length - 1];
    // (the greeting stays until the game's second move: the computer's first move as Red comes at once)
    const since = newest ? (newest.ply <= 1 && st.moves.length <= 1 ? 0 : newest.ply) : 0;
    const now = newest ? remarks.filter((r) => r.ply >= since) : [];
    now.sort((a, b) => ORDER.indexOf(a.kind) - ORDER.indexOf(b.kind)); // the blunder before the rook it lost
    const before = remarks.slice(0, remarks.length - now.length);
    const p = row.querySelector(".talk-text");
    p.textContent = now.length ? now.map(text).join(" ") : "…";
    p.title = p.textContent; // the whole text when the bubble cuts it at two lines
    row.dataset.remark = newest ? String(newest.id) : "";
    row.dataset.kind = now.map((r) => r.kind).join(" ");
    // said a while ago (two plies or more before the position shown): faded, no longer the moment's word
    row.dataset.stale = newest && st.moves.length - newest.ply >= 2 ? "1" : "0";
    const log = row.querySelector(".talk-log");
    log.hidden = !open;
    row.dataset.open = open ? "1" : "0";
    // ▾ opens the earlier remarks, and the whole text when two lines cut it (a narrow screen)
    p.classList.toggle("full", open);
    more.hidden = before.length === 0 && !open && p.scrollHeight <= p.clientHeight + 1;
    if (open) {
      log.replaceChildren(...before.reverse().map((r) => {
        const li = document.createElement("li");
        li.textContent = text(r);
        return li;
      }));
    }
    // speak what is new since the page last saw this game (not what was said before it loaded)
    const top = newest ? newest.id : 0;
    if (!spokenFor) spokenFor = [st.id, top]; // the page just loaded: what was said is not said again
    else if (spokenFor[0] !== st.id) spokenFor = [st.id, 0]; // a new game: its greeting is new
    const fresh = remarks.filter((r) => r.id > spokenFor[1]);
    spokenFor[1] = Math.max(spokenFor[1], top);
    fresh.sort((a, b) => a.ply - b.ply || ORDER.indexOf(a.kind) - ORDER.indexOf(b.kind));
    const speechOn = settings.talk_speech ? settings.talk_speech === "on" : tk.speech;
    if (speechOn && fresh.length) speak(fresh.map(text).join(" "), op); // one utterance, in the bubble's order
  }

  /** After a settings change: the dialog's texts and the two talk settings. */
  function applySettings(values) {
    settings = values;
    const a = $("#set-talk"), b = $("#set-talk-speech");
    if (a) a.value = settings.talk === "off" ? "off" : "on";
    if (b) b.value = settings.talk_speech === "on" ? "on" : "off";
    fillDialog();
    if (last) render(last);
  }

  // load() is called by the page once it knows it is the local game's (a public server has no named
  // opponents: asking there was a 404 on every load)
  return { render, chosen, playerName, applySettings, syncDialog, load };
}
