// The page: talks to the server (REST + one WebSocket per game) and renders its state
// with the board component. The server owns the game; this file only shows it and
// sends the user's requests.

import { createAnalysis } from "./analysis.js";
import { createBoard } from "./board.js";
import { createEnginePanel } from "./enginepanel.js";
import { createDatabase } from "./database.js";
import { createEditor } from "./editor.js";
import { createExplorer } from "./explorer.js";
import { createEndgame } from "./endgame.js";
import { createEngines } from "./engines.js";
import { createTournament } from "./tournament.js";
import { createJieqi, jieqiLevel } from "./jieqi.js";
import { createPuzzles } from "./puzzles.js";
import { createLibrary } from "./library.js";
import { createPractice } from "./practice.js";
import { createRecordBrowser } from "./record.js";
import { createReview } from "./review.js";
import { createCoach } from "./coach.js";
import { createProfile, ratingLine } from "./profile.js";
import { createOnline } from "./online.js";
import { createTalk } from "./talk.js";
import { createMoreMenu } from "./topbar.js";
import { markBookMoves, renderOpening } from "./opening.js";
import { LEVEL_NAMES, applyLanguage, fill, language, playerName, setLanguage, t } from "./i18n.js";
import { learn, message, translate } from "./messages.js";
import { request, socket } from "./net.js";
import * as sound from "./sound.js";

const $ = (sel) => document.querySelector(sel);

const ui = {
  state: null,
  ws: null,
  wsGameId: null,
  flipped: false,
  hint: null,
  settings: { theme: "wood", pieces: "traditional", mode: "light", language: "zh", sound: "on", traditional: false, notation: "auto", computer_tendency: "normal", talk: "on", talk_speech: "off" },
  levels: [],
  shownResultFor: null,
  reconnectDelay: 250,
};
window.xq = ui; // read by the browser tests and handy in the console

const board = createBoard($("#board"), { onMove: tryMove });
const coach = createCoach({ panel: $("#coach-panel"), api, toast, onState: (st) => render(st) });
const talk = createTalk({ api, changeSetting: (key, value) => changeSetting(key, value) });

// Arrows over the board by layer: the game's hint, the engine panel's best move, the review's better move.
const arrows = { hint: null, engine: null, review: null };
function boardShapes() {
  const out = [];
  if (arrows.hint && !analysis.browsing) out.push(arrows.hint);
  if (arrows.engine) out.push(arrows.engine);
  if (arrows.review) out.push(arrows.review);
  return out;
}
function setArrow(layer, shape) {
  arrows[layer] = shape;
  if (!ui.editing && !ui.replaying) board.set({ shapes: boardShapes() });
}

/** A tree node's move in the page's notation (its text holds chinese, wxf and iccs). */
function nodeText(n) {
  const text = n.text[notation()] || n.text.chinese || n.move || "";
  return ui.settings.traditional && notation() === "chinese" ? toTraditional(text) : text;
}

const analysis = createAnalysis({
  board, api: (...a) => api(...a), moveText: nodeText, toast: (x) => toast(x), shapes: boardShapes,
  onChange: () => analysisChanged(),
  onTree: () => review.reapply(),
  onRendered: (source) => { if (source === "current" && ui.state) markBookMoves(ui.state); },
});
window.xqAnalysis = analysis;

const engine = createEnginePanel({
  notation: () => notation(),
  decorate: (x) => (ui.settings.traditional ? toTraditional(x) : x),
  onArrow: (shape) => setArrow("engine", shape),
  orientation: () => (ui.state ? orientation(ui.state) : "red"),
});

/** The analysis view showed another position or went back to the live game. */
function analysisChanged() {
  const tr = analysis.tree;
  $("#an-title").textContent = tr && tr.source !== "current" ? `· ${tr.title || tr.name || ""}` : "";
  document.body.classList.toggle("analysing", analysis.browsing);
  if (!ui.state) return;
  arrows.engine = null;
  if (!analysis.browsing) render(ui.state);
  else { renderActions(ui.state); renderPlayers(ui.state); renderHint(); }
  tellEngine();
  review.update();
}

/** The engine panel analyses the position shown: the live game's, or the analysis view's. */
function tellEngine() {
  const st = ui.state;
  if (analysis.browsing) {
    const p = analysis.position();
    if (p) engine.setPosition({ fen: p.fen, moves: p.moves, shownFen: p.shownFen });
  } else if (st) {
    engine.setPosition({ fen: st.start_fen, moves: st.moves.map((m) => m.iccs), shownFen: st.fen });
  }
}

// The position on the board, whatever shows it (game, replay, record, editor): the explorer follows it.
const boardWatch = { fen: "", listeners: [] };
{
  const set = board.set;
  board.set = (update) => {
    set(update);
    if (update && update.fen) boardWatch.fen = update.fen;
    for (const fn of boardWatch.listeners) fn();
  };
}

// -- server access ----------------------------------------------------------

async function api(path, options = {}) {
  const res = await request(path, options);
  const text = await res.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch { body = text; }
  if (!res.ok) {
    const detail = body && body.detail ? body.detail : text;
    throw new Error(message(detail)); // in the page's language (messages.js)
  }
  return body;
}

function connect(gameId) {
  if (ui.ws && ui.wsGameId === gameId && ui.ws.readyState <= 1) return;
  if (ui.ws) { ui.ws.onclose = null; ui.ws.close(); }
  document.body.dataset.connected = "0";
  const ws = socket(`/ws/game/${gameId}`);
  ui.ws = ws;
  ui.wsGameId = gameId;
  ui.resync = true; // the first state of a connection is taken as it is (the server may have restarted)
  ws.onopen = () => {
    ui.reconnectDelay = 250;
    ui.hintPending = false;
    hideNotice();
    document.body.dataset.connected = "1";
    if (ui.analysis && ui.state) render(ui.state);
  };
  ws.onmessage = (ev) => onMessage(JSON.parse(ev.data));
  ws.onclose = () => {
    document.body.dataset.connected = "0";
    if (ui.ws !== ws) return;
    showNotice(t("connection_lost"));
    setTimeout(async () => {
      try {
        const st = await api("/api/game");
        render(st);
        ui.ws = null;
        connect(st.id);
      } catch {
        ui.ws = null;
        connect(gameId);
      }
    }, ui.reconnectDelay);
    ui.reconnectDelay = Math.min(ui.reconnectDelay * 2, 4000);
  };
}

function send(msg) {
  if (ui.ws && ui.ws.readyState === 1) ui.ws.send(JSON.stringify(msg));
  else toast(t("connection_lost"));
}

/** Undo (悔棋) names the state version the page shows, so that two pages pressing it once each take
 *  back one move, not two; the server refuses a stale one with an error and the current state. */
function undo() {
  send(ui.state && typeof ui.state.version === "number" ? { type: "undo", version: ui.state.version } : { type: "undo" });
}

/** Whether a state message should be shown: not one older than what the page shows (a late reply);
 *  on a version gap (a missed message) the page shows it and asks for the current state again. */
function acceptState(st) {
  const cur = ui.state;
  if (ui.resync || !cur || cur.id !== st.id || typeof st.version !== "number" || typeof cur.version !== "number") {
    ui.resync = false;
    return true;
  }
  if (st.version < cur.version) return false;
  if (st.version > cur.version + 1) send({ type: "state" });
  return true;
}

function onMessage(msg) {
  if (msg.type === "state") {
    if (!acceptState(msg.state)) return;
    render(msg.state);
    if (msg.draw_offer) toast(msg.draw_offer.accepted ? t("draw_accepted") : t("draw_declined"));
    // the computer's failure is said by the status line with its retry button, not a toast over it
    const failed = msg.state.engine_error;
    if (msg.error && !(failed && [failed.detail_zh, failed.detail_en, failed.detail].includes(msg.error))) {
      toast(message(msg.error));
    }
  } else if (msg.type === "replaced") {
    api("/api/game").then((st) => { render(st); connect(st.id); });
  } else if (msg.type === "hint") {
    ui.hintPending = false;
    // a hint dropped because the position moved on: analysis asks again for the position shown
    if (msg.cancelled && ui.analysis && ui.state && msg.version !== ui.state.version) { render(ui.state); return; }
    if (!ui.state || !msg.hint || msg.hint.fen !== ui.state.fen) return; // the position moved on
    ui.hint = msg.hint.move;
    ui.hintInfo = msg.hint;
    // hints grow in steps: the piece (coach mode), the move, the line (coach.js)
    ui.hintStep = coach.firstHintStep(ui.state);
    document.body.dataset.hint = ui.hint || "";
    render(ui.state);
  } else if (msg.type === "error") {
    toast(message(msg.detail));
    if (!browsing()) board.refresh(); // a refused move: a dragged piece goes back to its point
  }
}

// -- rendering --------------------------------------------------------------

function humanToMove(st) {
  // after the computer failed (engine_error) the player may make its move
  return !st.result && !st.thinking && (st.players[st.turn] === "human" || Boolean(st.engine_error));
}

function orientation(st) {
  const base = st.players.red === "engine" && st.players.black === "human" ? "black" : "red";
  if (!ui.flipped) return base;
  return base === "red" ? "black" : "red";
}

function render(st) {
  if (!st) return;
  const prev = ui.state;
  ui.state = st;
  // texts the server sends in both languages, quoted by its English messages ("the game is over (…)")
  if (st.result) learn(st.result.reason_en, st.result.reason_zh);
  for (const f of Object.values(st.forbidden || {})) learn(f.reason_en, f.reason_zh);
  // A hint belongs to one position of a game in progress.
  if (!prev || prev.fen !== st.fen || prev.id !== st.id || st.result) { ui.hint = null; ui.hintInfo = null; }
  const movable = humanToMove(st);
  // the hint's arrow, or only its piece ringed at the coach's first hint step
  arrows.hint = ui.hint ? coach.hintShapes(ui.hint, ui.analysis ? 3 : ui.hintStep)[0] : null;
  analysis.setOrientation(orientation(st));
  const away = analysis.browsing;
  if (!ui.editing && !ui.replaying && !away) board.set({
    fen: st.fen,
    orientation: orientation(st),
    lastMove: st.last_move,
    check: st.check,
    dests: movable ? st.legal : {},
    movable,
    shapes: boardShapes(),
    traditional: ui.settings.traditional,
    labels: { river: [t("river_left"), t("river_right")] },
    animate: Boolean(prev && prev.id === st.id),
  });
  if (ui.analysis && movable && !ui.hint && !ui.hintPending && !ui.editing && !ui.replaying && !away) {
    ui.hintPending = true; // analysis: show the engine's best move in every position
    send({ type: "hint" });
  }
  renderStatus(st);
  renderStorage(st);
  renderNotices(st);
  renderHint();
  renderPlayers(st);
  ui.clockAt = performance.now();
  renderClocks();
  renderMoves(st);
  if (!away) tellEngine();
  renderOpening(st, browsing()); // opening.js: the ECCO line and the book marks
  markBookMoves(st);
  if (prev && prev.id === st.id && st.moves.length > prev.moves.length) {
    const last = st.moves[st.moves.length - 1];
    sound.play(st.result ? "end" : last.check ? "check" : last.capture ? "capture" : "move");
    if (last.check && !st.result) announceCheck();
  }
  document.body.dataset.thinking = st.thinking ? "1" : "0";
  document.body.dataset.turn = st.turn;
  document.body.dataset.plies = String(st.moves.length);
  document.body.dataset.gameId = st.id;
  document.body.dataset.result = st.result ? st.result.result : "";
  renderActions(st);
  coach.render(st, { prev, browsing: browsing() });
  talk.render(st, { browsing: browsing() }); // the named opponent's remarks (talk.js)
  if (st.result && prev && ui.shownResultFor !== st.id + ":" + st.moves.length && !prev.result) {
    showResult(st);
  }
  if (!st.result) ui.shownResultFor = null;
}

/** Whether the board shows something other than the current game (a library replay, an opened
 *  record, the position editor): the game's own actions are then closed. */
function browsing() {
  return Boolean(ui.editing || ui.replaying || library.active || record.active || practice.active
    || analysis.browsing);
}

/** Open or close 悔棋/提示/提和/认输 for the current game. While another position is shown they are
 *  all disabled (they would act on the hidden game), and 保存 too unless a record is shown; their
 *  keys go through these buttons too. */
function renderActions(st = ui.state) {
  if (!st) return;
  const away = browsing();
  const human = Object.values(st.players).includes("human");
  // 悔棋 stays open after the game ends (casual play): it withdraws a resignation or agreed draw, or
  // takes back the move that ended the game; never after a loss on time (server: can_undo).
  $("#btn-undo").disabled = away || (st.can_undo === undefined ? st.moves.length === 0 || !human : !st.can_undo);
  $("#btn-hint").disabled = away || !humanToMove(st);
  $("#btn-draw").disabled = away || Boolean(st.result) || !human;
  $("#btn-resign").disabled = away || Boolean(st.result) || !human;
  // 保存 downloads the current game (or, in the record browser, the record shown); a library replay
  // (its own 导出) or the editor shows another position: closed, not a download of the hidden game.
  $("#btn-save").disabled = Boolean(ui.editing || library.active);
  document.body.dataset.browsing = away ? "1" : "0";
}

let checkTimer = null;
/** 将军 / Check: shown over the board for a moment and spoken when the sound is on. */
function announceCheck() {
  const el = $("#check-banner");
  el.textContent = t("check");
  el.hidden = false;
  el.classList.remove("show");
  void el.offsetWidth; // restart the animation
  el.classList.add("show");
  clearTimeout(checkTimer);
  checkTimer = setTimeout(() => { el.hidden = true; el.classList.remove("show"); }, 1600);
  if (language() === "zh") sound.say("将军", "zh-CN");
  else sound.say("Check", "en-US");
}

function renderStatus(st) {
  const el = $("#status");
  el.classList.remove("over", "check", "thinking", "failed");
  if (st.result) {
    el.textContent = language() === "zh" ? st.result.reason_zh : st.result.reason_en;
    el.classList.add("over");
  } else if (st.thinking) {
    // a stronger level's first move after a fresh install waits for the engine's compile (tens of seconds)
    el.innerHTML = `<span class="spinner" aria-hidden="true"></span> ${t(st.engine_warming ? "warming_up" : "thinking")}`;
    el.classList.add("thinking");
  } else if (st.engine_error) {
    // the computer could not move: say why; the player may retry it or move for it
    const text = document.createElement("span");
    text.className = "status-text";
    text.textContent = engineFailureText(st.engine_error);
    const retry = document.createElement("button");
    retry.type = "button";
    retry.id = "btn-retry";
    retry.textContent = t("retry");
    retry.addEventListener("click", () => send({ type: "retry" }));
    el.replaceChildren(text, retry);
    el.classList.add("check", "failed");
  } else if (st.storage_error) {
    // the last change could not be saved (disk full, read-only database): it was not made; say why
    // until a change is saved again
    el.textContent = message(st.storage_error.detail);
    el.classList.add("check");
  } else {
    let text = t(st.turn === "red" ? "red_to_move" : "black_to_move");
    if (st.players[st.turn] === "human" && Object.values(st.players).includes("engine")) text = t("your_move");
    if (st.check) { text = `${t("check")} ${text}`; el.classList.add("check"); }
    el.textContent = text;
    if (st.computer_draw_offer && ui.declinedOffer !== st.version) {
      // the computer offers a draw (its tendency setting): take it, or play on (which declines it)
      const offer = document.createElement("span");
      offer.className = "computer-offer";
      offer.textContent = ` · ${t("computer_offers_draw")} `;
      const yes = document.createElement("button");
      yes.type = "button";
      yes.id = "btn-take-draw";
      yes.textContent = t("accept");
      yes.addEventListener("click", () => send({ type: "draw" }));
      const no = document.createElement("button");
      no.type = "button";
      no.id = "btn-play-on";
      no.textContent = t("play_on");
      no.addEventListener("click", () => { ui.declinedOffer = st.version; renderStatus(st); });
      offer.append(yes, no);
      el.append(offer);
    }
  }
}

/** Why the computer could not move (the state's engine_error) in the page's language: the reason
 *  (``detail``, English) through the message table; the server's own Chinese when it has no rule. */
function engineFailureText(err) {
  const why = translate(err.detail);
  if (language() === "zh" && !why.ok) return err.detail_zh || err.detail;
  return fill(t("engine_failed"), { why: language() === "zh" ? why.text : err.detail, attempts: err.attempts });
}

/** A storage fault (the state's storage_error: the disk is full, the database read-only, an I/O
 *  error) as a banner that stays while the server cannot save: the last move was not played. It goes
 *  when a state comes without storage_error (space is back and a change was saved). */
function renderStorage(st) {
  const el = $("#storage-banner");
  const err = st.storage_error;
  document.body.dataset.storage = err ? String(err.kind) : "";
  if (!err) { el.hidden = true; el.replaceChildren(); return; }
  const kind = err.kind === "full" || err.kind === "read_only" ? err.kind : "io";
  const title = document.createElement("strong");
  title.textContent = t(`storage_${kind}_title`);
  const text = document.createElement("p");
  text.textContent = t(`storage_${kind}_text`);
  if (kind !== "read_only" && Object.values(st.players).includes("engine")) text.textContent += t("storage_engine_retry");
  // the server's own words (which file, what SQLite said) on request: the text above says what to do
  const detail = document.createElement("details");
  const summary = document.createElement("summary");
  summary.textContent = t("details");
  const why = document.createElement("p");
  why.textContent = message(err.detail);
  detail.append(summary, why);
  el.replaceChildren(title, text, detail);
  el.dataset.kind = kind;
  if (el.hidden && $("#toast").textContent === why.textContent) $("#toast").hidden = true; // said here
  el.hidden = false;
}

const SEEN_NOTICES = "xiangqi.storage-notices-seen";

function seenNotices() {
  try {
    const v = JSON.parse(localStorage.getItem(SEEN_NOTICES) || "[]");
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
}

/** What the server kept aside at start-up (the state's storage_notices: a damaged database or
 *  current game, a read-only database), each shown once: a notice is remembered by its text in
 *  localStorage when shown, and stays in the panel until dismissed. A read-only notice is not
 *  repeated while the read-only banner says it. */
function renderNotices(st) {
  ui.notices = ui.notices || [];
  const seen = seenNotices();
  let changed = false;
  for (const n of st.storage_notices || []) {
    if (!n || typeof n.message !== "string" || seen.includes(n.message)) continue;
    seen.push(n.message);
    changed = true;
    const banner = st.storage_error && st.storage_error.kind === "read_only" && n.kind === "read_only";
    if (!banner) ui.notices.push(n);
  }
  if (changed) {
    try { localStorage.setItem(SEEN_NOTICES, JSON.stringify(seen.slice(-50))); } catch { /* private mode */ }
  }
  const box = $("#storage-notices");
  box.replaceChildren();
  for (const n of ui.notices) {
    const item = document.createElement("div");
    item.className = "storage-notice";
    item.dataset.kind = String(n.kind);
    const title = document.createElement("strong");
    const key = `notice_${n.kind}`;
    title.textContent = t(key) === key ? t("notice_other") : t(key);
    const text = document.createElement("p");
    text.textContent = message(n.message);
    const ok = document.createElement("button");
    ok.type = "button";
    ok.textContent = t("notice_ok");
    ok.addEventListener("click", () => { ui.notices = ui.notices.filter((x) => x !== n); renderNotices(ui.state); });
    item.append(title, text, ok);
    box.appendChild(item);
  }
  box.hidden = ui.notices.length === 0;
}

/** The hint as text in the side panel (提示：车一平二 / Hint: R1.2), in the move-list notation. */
function renderHint() {
  const el = $("#hint-line");
  const h = ui.hint && ui.hintInfo;
  el.hidden = !h || Boolean(ui.editing || ui.replaying || record.active || analysis.browsing);
  if (!h) { el.textContent = ""; return; }
  let text = moveText({ iccs: h.move, chinese: h.chinese, wxf: h.wxf });
  if (ui.settings.traditional && notation() === "chinese") text = toTraditional(text);
  el.textContent = coach.hintText(h, ui.analysis ? 2 : ui.hintStep, `${t("hint_text")}${text}${h.quick ? t("hint_quick") : ""}`)
    + tablebaseText(h.tablebase, ui.state && ui.state.turn);
}

/** The endgame table's verdict on a hint's position (the side to move ``turn``): " · 残局库：红胜，5 步杀". */
function tablebaseText(tb, turn) {
  if (!tb || !turn) return "";
  if (tb.wdl === "draw") return ` · ${t("tb_draw")}`;
  const winner = tb.wdl === "win" ? turn : (turn === "red" ? "black" : "red");
  if (tb.rule) return ` · ${fill(t("tb_rule"), { side: t(`tb_${winner}`) })}`; // won by the perpetual-check rule
  return ` · ${fill(t("tb_win"), { side: t(`tb_${winner}`), n: Math.ceil((tb.dtm || 0) / 2) })}`;
}

function renderPlayers(st) {
  // the level with its rank and measured Elo when known (e.g. 初级 · 校尉 ≈1440)
  const lv = (ui.levels || []).find((x) => x.key === st.level) || engines.level(st.level);
  const level = coach.levelText(st) || (lv ? levelLabel(lv) : LEVEL_NAMES[language()][st.level] || st.level);
  // a browsed record or library game: its own players' names, not the current game's
  const other = analysis.browsing && analysis.source !== "current" && analysis.tree;
  const names = record.active ? record.players() : library.active ? library.players()
    : other ? { red: other.headers.Red || "", black: other.headers.Black || "" } : null;
  const name = (color) => {
    if (names) return `${t(color)} — ${names[color] ? playerName(names[color]) : "?"}`;
    const who = st.players[color] === "engine" ? talk.playerName(st) || `${t("computer")} · ${level}` : t("human");
    return `${t(color)} — ${who}`;
  };
  const bottom = orientation(st);
  const top = bottom === "red" ? "black" : "red";
  for (const [id, color] of [["#bar-top", top], ["#bar-bottom", bottom]]) {
    const bar = $(id);
    bar.querySelector(".who").textContent = name(color);
    bar.querySelector(".who").title = !names && st.players[color] === "engine" ? coach.levelTitle(st) : "";
    bar.dataset.color = color;
    bar.classList.toggle("to-move", !names && !st.result && st.turn === color);
  }
}

function formatMs(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  const mm = h ? `${h}:${String(m).padStart(2, "0")}` : String(m);
  return `${mm}:${String(sec).padStart(2, "0")}`;
}

/** Show both clocks, counting down the running one from the last state the server sent. */
function renderClocks() {
  const st = ui.state;
  for (const id of ["#bar-top", "#bar-bottom"]) {
    const bar = $(id);
    const el = bar.querySelector(".clock");
    const c = st && st.clock;
    if (!c) { el.hidden = true; continue; }
    const color = bar.dataset.color;
    let ms = c[`${color}_ms`];
    let byo = c[`${color}_byoyomi`];
    let periods = c[`${color}_periods`];
    if (c.running === color && !st.result) {
      ms -= performance.now() - ui.clockAt;
      if (c.kind === "byoyomi" && c.byoyomi_ms > 0) {
        // 读秒: main time ends in the first period; an overrun period starts the next one.
        if (ms <= 0 && !byo && periods > 0) { byo = true; ms += c.byoyomi_ms; }
        while (ms <= 0 && byo && periods > 1) { ms += c.byoyomi_ms; periods -= 1; }
      }
    }
    el.hidden = false;
    el.dataset.ms = String(Math.max(0, Math.round(ms)));
    el.dataset.periods = byo ? String(periods) : "";
    el.textContent = (byo ? `${t("byoyomi")} ` : "") + formatMs(ms) + (byo && periods > 1 ? ` ×${periods}` : "");
    el.classList.toggle("low", ms < 10000);
    el.classList.toggle("running", c.running === color && !st.result);
  }
}
setInterval(renderClocks, 200);

/** The move list: the analysis view's tree of the live game (its moves, the player's branches). */
function renderMoves(st) {
  analysis.syncLive(st);
}

/** The move-list notation chosen in the settings: chinese, wxf or iccs ("auto", the default:
 * Chinese on the Chinese page, WXF on the English one). */
function notation() {
  const n = ui.settings.notation;
  if (["chinese", "wxf", "iccs"].includes(n)) return n;
  return language() === "en" ? "wxf" : "chinese";
}

/** A played move's text in the chosen notation (ICCS as H2-E2, the ICCS standard form). */
function moveText(m) {
  const n = notation();
  if (n === "wxf" && m.wxf) return m.wxf;
  if (n === "iccs") return `${m.iccs.slice(0, 2)}-${m.iccs.slice(2, 4)}`.toUpperCase();
  return m.chinese;
}

const TRAD = { 马: "馬", 车: "車", 帅: "帥", 将: "將", 进: "進", 后: "後", 兵: "兵", 炮: "炮", 相: "相", 象: "象" };
/** Traditional characters for move text (繁體): 馬 車 帥 將 進 後. */
export function toTraditional(text) {
  return [...text].map((c) => TRAD[c] || c).join("");
}

function showResult(st) {
  ui.shownResultFor = st.id + ":" + st.moves.length;
  // The headline once (黑胜), then the reason without it (红方认输), not 黑胜 — 红方认输 again.
  const r = st.result, zh = language() === "zh";
  const full = zh ? r.reason_zh : r.reason_en;
  const head = (zh ? r.headline_zh : r.headline_en) || full.split(" — ")[0];
  const why = (zh ? r.why_zh : r.why_en) ?? (full.includes(" — ") ? full.split(" — ").slice(1).join(" — ") : "");
  $("#result-headline").textContent = head;
  $("#result-reason").textContent = why;
  $("#result-reason").hidden = !why;
  // The referee's lines for a repetition ruling (each move's class and deciding article).
  const lines = r.explain || [];
  $("#result-explain pre").textContent = lines.join("\n");
  $("#result-explain").hidden = !lines.length;
  $("#result-rating").textContent = ratingLine(st); // the rating change, or why the game is unrated
  $("#result-rating").hidden = !$("#result-rating").textContent;
  const dlg = $("#dlg-result");
  if (!dlg.open) dlg.showModal();
}

let toastTimer = null;
function toast(text) {
  const el = $("#toast");
  el.textContent = text;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, 3500);
}

function showNotice(text) {
  const el = $("#notice");
  el.textContent = text;
  el.hidden = false;
}

function hideNotice() {
  $("#notice").hidden = true;
}

function confirmDialog(title, text, yes, no) {
  return new Promise((resolve) => {
    const dlg = $("#dlg-confirm");
    $("#confirm-title").textContent = title;
    $("#confirm-text").textContent = text;
    $("#confirm-yes").textContent = yes;
    $("#confirm-no").textContent = no;
    dlg.returnValue = "";
    dlg.addEventListener("close", () => resolve(dlg.returnValue === "ok"), { once: true });
    dlg.showModal();
  });
}

// -- user actions -------------------------------------------------------------

async function tryMove(iccs) {
  if (analysis.browsing) { analysis.play(iccs); return; } // a branch in the analysis tree, never the game
  const st = ui.state;
  const bad = st && st.forbidden && st.forbidden[iccs];
  if (bad) {
    const reason = language() === "zh" ? bad.reason_zh : bad.reason_en;
    const go = await confirmDialog(t("forbidden_title"), `${t("forbidden_text")} ${reason}`, t("forbidden_go"),
      t("forbidden_back"));
    if (!go) { board.refresh(); return; } // a dragged piece goes back to its point
  }
  if (coach.checksFirst(st)) {
    // coach mode: the coach judges the move before it is sent, so a blunder can be taken back before
    // the computer has replied (coach.js, POST /api/coach/check)
    const note = await coach.precheck(iccs);
    const now = ui.state;
    if (!now || now.id !== st.id || now.moves.length !== st.moves.length) { board.refresh(); return; } // moved on
    if (note && note.warn) {
      const text = language() === "zh" ? note.text_zh : note.text_en;
      const go = await confirmDialog(t("coach_before_title"), `${text}${language() === "zh" ? "。" : ". "}${t("coach_before_ask")}`,
        t("coach_play_anyway"), t("coach_change_move"));
      if (!go) { board.refresh(); return; }
      coach.confirmed(st.id, note.ply);
    }
  }
  send({ type: "move", move: iccs });
}

/** A level as the level choice shows it (i18n level_label): 初级 · 县丞 ≈1150, Beginner · ~1150 (the
 *  Elo to the nearest 10: its error bar is wider); the name alone while the level has no measured Elo. */
export function levelLabel(lv) {
  const name = language() === "zh" ? lv.name_zh : lv.name_en;
  if (lv.elo == null) return name;
  return fill(t("level_label"), { name, rank: lv.rank_zh || "", elo: Math.round(lv.elo / 10) * 10 });
}

/** Tooltip of a level with a measured Elo (i18n level_elo): the 95 % error bar and the games behind it. */
export function levelTitle(lv) {
  if (lv.elo == null) return "";
  const err = lv.elo_error == null ? "" : ` ± ${lv.elo_error}`;
  return fill(t("level_elo"), { elo: lv.elo, err, games: lv.elo_games });
}

function fillLevels() {
  const sel = $("#sel-level");
  const current = sel.value || (ui.state && ui.state.level) || "beginner";
  sel.replaceChildren();
  for (const lv of ui.levels) {
    const o = document.createElement("option");
    o.value = lv.key;
    o.textContent = levelLabel(lv);
    o.title = levelTitle(lv);
    sel.appendChild(o);
  }
  coach.addLevelChoice(sel); // 自适应: the strength from the player's rating (coach.js)
  sel.value = current;
  // the engines added in Settings → engines are opponents, beside the named ones (engines.js, talk.js)
  engines.addOpponentChoices($("#sel-opponent"));
  talk.syncDialog();
}

const START_FEN = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";
// Pieces the computer (or, between humans, Red) gives up in a handicap game (让子), as Red's squares.
const HANDICAPS = { horse: ["b0"], horses: ["b0", "h0"], rook: ["a0"], cannon: ["b2"], rook_horse: ["a0", "b0"] };

/** FEN of the start position without the handicap pieces of the side that gives odds. */
export function handicapFen(kind, giver) {
  if (!kind) return null;
  const rows = START_FEN.split(" ")[0].split("/").map((row) => [...row.replace(/\d/g, (d) => ".".repeat(Number(d)))]);
  for (const sq of HANDICAPS[kind]) {
    const file = sq.charCodeAt(0) - 97;
    const rank = giver === "red" ? Number(sq[1]) : 9 - Number(sq[1]);
    rows[9 - rank][file] = ".";
  }
  const board = rows.map((r) => r.join("").replace(/\.+/g, (m) => String(m.length))).join("/");
  return `${board} w - - 0 1`;
}

function clockRequest(form) {
  const kind = form.tc.value;
  if (kind === "none") return null;
  return {
    kind, base_s: Number(form.base_min.value || 0) * 60, increment_s: Number(form.inc_s.value || 0),
    per_move_s: Number(form.per_move_s.value || 0), byoyomi_s: Number(form.byo_s.value || 0),
    periods: kind === "byoyomi" ? Math.max(1, Math.min(10, Math.round(Number(form.periods.value || 1)))) : 1,
  };
}

async function newGame(mode, level, options = {}) {
  const players = {
    red: ["human", "engine"], black: ["engine", "human"], two: ["human", "human"], cvc: ["engine", "engine"],
    analysis: ["human", "human"],
  }[mode];
  if (practice.active) practice.close(); // the new game is shown, not the practice board
  ui.flipped = false;
  ui.analysis = mode === "analysis";
  document.body.dataset.analysis = ui.analysis ? "1" : "0";
  const giver = players[0] === "engine" || players[1] === "human" && players[0] === "human" ? "red" : "black";
  const body = { red: players[0], black: players[1], level, clock: options.clock || null };
  body.fen = options.fen || handicapFen(options.handicap, giver);
  if (!options.fen && options.start === "random") { // 随机开局: a shuffle from the server, handicap ignored
    body.fen = (await api("/api/variants/random")).fen;
  }
  // the adaptive level and coach mode are the coach's (web/coach_api.py), a named opponent talk.js's
  const coached = level === "adaptive" || options.coach;
  if (coached) body.coach = Boolean(options.coach);
  // an engine of Settings → engines (web/engines_api.py), chosen as the opponent: it plays at its own strength
  const added = Boolean(options.opponent && options.opponent.startsWith("engine:"));
  if (added) { body.engine = Number(options.opponent.slice(7)); delete body.level; delete body.coach; }
  if (options.opponent && !added) { delete body.level; body.opponent = options.opponent; }
  const url = added ? "/api/engines/game" : options.opponent ? "/api/talk/new" : coached ? "/api/coach/new" : "/api/game/new";
  const st = await api(url, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  if (analysis.browsing) analysis.backToGame(); // a new game is shown, not the tree browsed before
  render(st);
  connect(st.id);
}

function openNewDialog() {
  fillLevels();
  const dlg = $("#dlg-new");
  if (ui.state) $("#sel-level").value = ui.state.level;
  // each new game starts from the standard set-up unless 随机开局 or 揭棋 is chosen again for it
  $("#sel-start").value = "";
  $("#dlg-new .jq-row").hidden = true;
  talk.syncDialog();
  dlg.returnValue = "";
  dlg.showModal();
}

$("#dlg-new").addEventListener("close", () => {
  const dlg = $("#dlg-new");
  if (dlg.returnValue !== "ok") return;
  const form = dlg.querySelector("form");
  if (form.start.value === "jieqi") { // 揭棋: a game of its own (jieqi.js)
    const [red, black] = { red: ["human", "engine"], black: ["engine", "human"], two: ["human", "human"],
      cvc: ["engine", "engine"] }[form.mode.value] || ["human", "engine"];
    jieqi.start({ red, black, level: jieqiLevel(form.level.value), capture: form.jieqi_capture.value })
      .catch((e) => toast(`${t("error")}: ${e.message}`));
    return;
  }
  if (jieqi.active) jieqi.close();
  newGame(form.mode.value, form.level.value, { clock: clockRequest(form), handicap: form.handicap.value,
    coach: form.coach.checked, start: form.start.value, opponent: talk.chosen(form) })
    .catch((e) => toast(`${t("error")}: ${e.message}`));
});

function showClockFields() {
  const kind = $("#sel-tc").value;
  for (const el of document.querySelectorAll("#dlg-new .tc-f")) el.hidden = !el.dataset.kinds.split(" ").includes(kind);
}
$("#sel-tc").addEventListener("change", showClockFields);
showClockFields();

$("#dlg-result").addEventListener("close", () => {
  if ($("#dlg-result").returnValue === "new") openNewDialog();
  if ($("#dlg-result").returnValue === "review") review.start({ current: true });
});

$("#dlg-save").addEventListener("close", () => {
  const dlg = $("#dlg-save");
  if (dlg.returnValue !== "ok") return;
  const form = dlg.querySelector("form");
  const fmt = form.fmt.value, notationKey = form.notation.value;
  if (record.active) {
    record.save(fmt, notationKey).catch((e) => toast(`${t("error")}: ${e.message}`));
    return;
  }
  if (analysis.source === "record" || analysis.variations() > 0) { // the tree with the player's variations
    analysis.exportFile(fmt, notationKey).catch((e) => toast(`${t("error")}: ${e.message}`));
    return;
  }
  import("./exportnotes.js").then(({ downloadExport }) => downloadExport(`/api/game/export?fmt=${fmt}&notation=${notationKey}&lang=${language()}`))
    .catch((e) => toast(`${t("error")}: ${e.message}`)); // XQF: what it could not keep is shown after
});

/** Open a record (file bytes or pasted text) in the record browser; a bad one is reported in the dialog. */
async function openRecord(data, name) {
  const err = $("#open-error");
  err.hidden = true;
  try {
    if (library.active) library.close();
    if (ui.editing) editor.close();
    if (puzzles.active) puzzles.close();
    if (endgame.active) endgame.close();
    await record.open(data, name);
    $("#dlg-open").close();
    toast(t("opened"));
  } catch (e) {
    err.textContent = `${t("open_failed")} ${e.message}`;
    err.hidden = false;
    if (!$("#dlg-open").open) $("#dlg-open").showModal();
  }
}

$("#file-open").addEventListener("change", async (ev) => {
  const file = ev.target.files[0];
  ev.target.value = "";
  if (!file) return;
  await openRecord(await file.arrayBuffer(), file.name);
});
$("#btn-open-file").addEventListener("click", () => $("#file-open").click());
$("#btn-paste-open").addEventListener("click", () => {
  const text = $("#paste-text").value;
  if (!text.trim()) {
    $("#open-error").textContent = t("paste_empty");
    $("#open-error").hidden = false;
    return;
  }
  openRecord(text, "");
});

function openOpenDialog() {
  $("#open-error").hidden = true;
  $("#dlg-open").returnValue = "";
  $("#dlg-open").showModal();
}

$("#btn-new").addEventListener("click", () => {
  if (puzzles.active) puzzles.close();
  if (endgame.active) endgame.close();
  openNewDialog();
});
$("#btn-undo").addEventListener("click", () => { if (!browsing()) undo(); });
$("#btn-hint").addEventListener("click", () => {
  if (browsing()) return;
  // a hint already shown grows a step (the piece, the move, the line) before another is asked for
  if (ui.hint && !ui.analysis && ui.hintStep < 3) { ui.hintStep += 1; render(ui.state); return; }
  if (!ui.hint) send({ type: "hint" });
});
$("#btn-draw").addEventListener("click", async () => {
  if (browsing()) return;
  const st = ui.state;
  if (st && !Object.values(st.players).includes("engine")) {
    // Two players on one screen: the other player answers the offer here.
    const offerer = t(st.turn), other = t(st.turn === "red" ? "black" : "red");
    const text = fill(t("draw_offer_text"), { offerer, other });
    if (!(await confirmDialog(t("draw"), text, t("accept"), t("decline")))) return;
  }
  send({ type: "draw" });
});
$("#btn-resign").addEventListener("click", async () => {
  if (browsing()) return;
  if (await confirmDialog(t("resign"), t("confirm_resign"), t("resign"), t("cancel")) && !browsing()) send({ type: "resign" });
});
$("#btn-flip").addEventListener("click", () => {
  if (puzzles.active) return puzzles.flip();
  if (endgame.active) return endgame.flip();
  if (jieqi.active) return jieqi.flip();
  ui.flipped = !ui.flipped;
  render(ui.state);
});
$("#btn-save").addEventListener("click", () => { $("#dlg-save").returnValue = ""; $("#dlg-save").showModal(); });
$("#btn-open").addEventListener("click", openOpenDialog);
$("#btn-settings").addEventListener("click", () => $("#dlg-settings").showModal());
createMoreMenu($("#btn-more"), $("#more-menu"));

const editor = createEditor({
  board, api, toast,
  onPlay: (fen, mode) => {
    const level = (ui.state && ui.state.level) || "beginner";
    editor.close();
    newGame(mode, level, { fen }).catch((e) => toast(`${t("error")}: ${e.message}`));
  },
  onExit: () => { ui.editing = false; render(ui.state); },
});
const library = createLibrary({
  board, api, toast, confirmDialog,
  onEnter: () => {
    if (practice.active) practice.close();
    if (jieqi.active) jieqi.close();
    ui.replaying = true;
    document.body.classList.add("replaying");
    if (ui.state) { renderActions(ui.state); renderPlayers(ui.state); }
  },
  onExit: () => { ui.replaying = false; document.body.classList.remove("replaying"); render(ui.state); },
  onReview: (id) => review.start({ library_id: id }),
});
// 棋谱库: the database browser (database.js) with the saved games in its 我的对局 tab, which it opens
// on first when there are saved games.
let libraryOpened = false;
$("#btn-library").addEventListener("click", async () => {
  if (puzzles.active) puzzles.close();
  if (endgame.active) endgame.close();
  try {
    if (libraryOpened) { database.openDialog(); return; }
    libraryOpened = true;
    await library.refresh();
    database.openDialog($("#lib-empty").hidden ? "mine" : "db");
  } catch (e) { toast(e.message); }
});
const profile = createProfile({ api, toast });
$("#btn-profile").addEventListener("click", () => profile.open());
const record = createRecordBrowser({
  board, api, toast, notation,
  onEnter: () => {
    if (practice.active) practice.close();
    ui.replaying = true;
    document.body.classList.add("replaying", "browsing");
    if (ui.state) { renderActions(ui.state); renderPlayers(ui.state); }
  },
  onExit: () => {
    ui.replaying = false;
    document.body.classList.remove("replaying", "browsing");
    if (ui.state) render(ui.state);
  },
  onPlay: async ({ fen, moves, mode, headers }) => {
    const players = { red: ["human", "engine"], black: ["engine", "human"], two: ["human", "human"],
      analysis: ["human", "human"] }[mode] || ["human", "human"];
    const level = coach.namedLevel(ui.state);
    try {
      const st = await api("/api/game/from_record", {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ fen, moves, red: players[0], black: players[1], level, headers }),
      });
      ui.flipped = false;
      ui.analysis = mode === "analysis";
      document.body.dataset.analysis = ui.analysis ? "1" : "0";
      record.close();
      if (analysis.browsing) analysis.backToGame();
      render(st);
      connect(st.id);
    } catch (e) {
      toast(`${t("error")}: ${e.message}`);
    }
  },
});
window.xqRecord = record;

/** 分析 / Analyse in the record browser: the record's tree (with its variations) in the analysis view. */
$("#rc-analyse").addEventListener("click", () => {
  const snap = record.snapshot();
  if (!snap) return;
  record.close();
  analysis.openTree({ ...snap.view, name: snap.name }, "record", snap.node);
});

/** 分析 / Analyse a library game: its tree with the player's saved variations, at the ply shown. */
async function analyseLibraryGame(id, ply = null) {
  try {
    const view = await api(`/api/analysis/tree/library/${id}`);
    if (library.active) library.close();
    if (record.active) record.close();
    analysis.openTree(view, "library", 0);
    const main = analysis.mainLine();
    analysis.go(main[ply === null ? main.length - 1 : Math.min(ply, main.length - 1)]);
    return view;
  } catch (e) {
    toast(`${t("error")}: ${e.message}`);
    return null;
  }
}
window.xqAnalyseLibrary = analyseLibraryGame;

const review = createReview({
  api: (...a) => api(...a), analysis, moveText: nodeText, toast: (x) => toast(x),
  setArrow: (shape) => setArrow("review", shape),
  openSource: async (target) => {
    if (target.library_id) {
      await analyseLibraryGame(target.library_id, 0);
    } else {
      if (library.active) library.close();
      if (record.active) record.close();
      analysis.backToGame();
      await analysis.whenReady();
    }
  },
});
window.xqReview = review;
/** 导出 in the library replay: the game's PGN, with the player's saved variations when it has some
 *  (written from its analysis tree; without variations the plain link's download). */
$("#rp-export").addEventListener("click", async (ev) => {
  if (!library.active || ev.defaultPrevented) return;
  const id = library.gameId;
  ev.preventDefault();
  const link = $("#rp-export").href;
  try {
    const view = await api(`/api/analysis/tree/library/${id}`);
    if (!view.variations) { download(link); return; }
    const nodes = view.nodes.map((n) => ({ parent: n.parent, move: n.move, comment: n.comment || "" }));
    const headers = Object.fromEntries(Object.entries(view.headers).filter(([k, v]) => k !== "FEN" && typeof v === "string"));
    const res = await request("/api/analysis/export", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ start_fen: view.nodes[0].fen, nodes, headers, fmt: "pgn", notation: "chinese" }),
    });
    if (!res.ok) throw new Error(message((await res.json()).detail));
    const url = URL.createObjectURL(await res.blob());
    download(url, `xiangqi-library-${id}.pgn`);
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  } catch (e) {
    toast(`${t("error")}: ${e.message}`);
  }
});

function download(href, name = "") {
  const a = document.createElement("a");
  a.href = href;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
}

$("#rp-analyse").addEventListener("click", () => {
  if (library.active) analyseLibraryGame(library.gameId, library.ply);
});
window.xqLibrary = library;
// 练习 (learn from your mistakes): a board mode of its own, opened from a review or a library row
const practice = createPractice({
  board, api, onMove: tryMove,
  players: () => (ui.state ? ui.state.players : null),
  onEnter: () => {
    if (library.active) library.close();
    if (record.active) record.close();
    if (ui.editing) editor.close();
    ui.replaying = true;
    document.body.classList.add("replaying");
    $("#hint-line").hidden = true;
    if (ui.state) { renderActions(ui.state); renderPlayers(ui.state); }
  },
  onExit: () => { ui.replaying = false; document.body.classList.remove("replaying"); render(ui.state); },
});
window.xiangqiPractice = { open: (source) => practice.open(source), close: () => practice.close() };

// -- games database: browser and opening explorer ------------------------------------

/** A database game (``GET /api/db/games/{id}``) in the record viewer, at the searched position's ply. */
async function openDbGame(game, hit) {
  if (library.active) library.close();
  if (ui.editing) editor.close();
  const name = `${game.red || "?"}-${game.black || "?"}.pgn`;
  await record.open(game.pgn, name);
  const ply = hit && hit.ply !== null && hit.ply !== undefined ? hit.ply : 0;
  if (ply) record.go(ply);
}

const database = createDatabase({
  api, library,
  openGame: (game, hit) => openDbGame(game, hit).catch((e) => toast(`${t("error")}: ${e.message}`)),
});

/** What the board shows, for the explorer (see explorer.js). A game against the computer: not allowed. */
function explorerContext() {
  if (ui.editing) return { kind: "editor", fen: boardWatch.fen, allowed: true, playable: false };
  if (record.active) return { kind: "record", fen: boardWatch.fen, ...record.position(), allowed: true, playable: true };
  if (library.active) return { kind: "replay", fen: boardWatch.fen, ...library.position(), allowed: true, playable: true };
  const st = ui.state;
  if (!st) return { kind: "game", fen: boardWatch.fen, allowed: false, playable: false };
  const twoHumans = st.players.red === "human" && st.players.black === "human";
  return { kind: "game", fen: st.fen, start: st.start_fen, moves: st.moves.map((m) => m.iccs),
    allowed: twoHumans || Boolean(st.result), playable: twoHumans && humanToMove(st) };
}

/** A move clicked in the explorer: followed in a record or replay, played in a two-player game. */
async function playExplorerMove(iccs) {
  const ctx = explorerContext();
  if (ctx.kind === "record") {
    if (record.follow(iccs)) return;
    if (!(await confirmDialog(t("explorer"), t("ex_not_in_record"), t("ex_analyse"), t("cancel")))) return;
    await record.playOn("analysis");
    if (record.active || !ui.state) return; // the game could not be set up (told by a toast)
    // the new game's socket may still be opening: the move goes by REST, its answer is the state
    const st = await api("/api/game/move", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ move: iccs, game_id: ui.state.id }),
    });
    if (st && st.id) render(st);
  } else if (ctx.kind === "replay") {
    if (!library.follow(iccs)) toast(t("ex_not_in_game"));
  } else if (ctx.kind === "game" && ctx.playable) {
    tryMove(iccs);
  }
}

const explorer = createExplorer({
  api, context: explorerContext, onPlay: (m) => playExplorerMove(m).catch((e) => toast(`${t("error")}: ${e.message}`)),
  onOpenGame: async (hit) => {
    try { await openDbGame(await api(`/api/db/games/${hit.id}`), hit); } catch (e) { toast(`${t("error")}: ${e.message}`); }
  },
});
boardWatch.listeners.push(() => explorer.update());
$("#btn-search-pos").addEventListener("click", () => database.searchPosition(boardWatch.fen || (ui.state && ui.state.fen)));
window.xqExplorer = explorer;
window.xqDatabase = database;

/** Enter a board mode of its own (puzzles, endgame practice): the game's actions close. */
function enterOwnMode() {
  if (library.active) library.close();
  if (record.active) record.close();
  if (ui.editing) editor.close();
  ui.replaying = true;
  $("#hint-line").hidden = true;
  document.body.classList.add("replaying");
  if (ui.state) { renderActions(ui.state); renderPlayers(ui.state); }
}
// Settings → engines: UCI/UCCI engines of this machine as the computer and the analyser (engines.js)
const engines = createEngines({
  api, toast, onChange: () => { fillLevels(); if (ui.state) renderPlayers(ui.state); },
});
window.xqEngines = engines;
// engine matches: a round-robin of levels and added engines with its cross table (tournament.js)
const tournament = createTournament({
  api,
  levels: () => (ui.levels || []).map((lv) => ({ key: lv.key, name: language() === "zh" ? lv.name_zh : lv.name_en })),
  engines: () => engines.list.map((e) => ({ key: e.key, name: e.name })),
  onGame: () => {},
});
$("#btn-tournament").addEventListener("click", () => { $("#dlg-settings").close(); tournament.open(); });
const endgame = createEndgame({
  board, api, toast, restoreMove: tryMove,
  onEnter: () => { if (puzzles.active) puzzles.close(); enterOwnMode(); },
  onExit: () => { ui.replaying = false; document.body.classList.remove("replaying"); render(ui.state); },
});
window.xqEndgame = endgame;
$("#btn-endgame").addEventListener("click", () => { if (!endgame.active) endgame.open(); });
const puzzles = createPuzzles({
  board, api, toast, restoreMove: tryMove,
  onEnter: () => { if (endgame.active) endgame.close(); enterOwnMode(); },
  onExit: () => { ui.replaying = false; document.body.classList.remove("replaying"); render(ui.state); },
});
window.xqPuzzles = puzzles;
// 揭棋: hidden pieces (jieqi.js, web/jieqi_api.py)
const jieqi = createJieqi({
  board, api, toast, restoreMove: tryMove,
  onEnter: () => { if (puzzles.active) puzzles.close(); if (endgame.active) endgame.close(); enterOwnMode(); },
  onExit: () => { ui.replaying = false; document.body.classList.remove("replaying"); render(ui.state); },
});
window.xqJieqi = jieqi;
$("#btn-jieqi").addEventListener("click", () => { jieqi.open().catch((e) => toast(`${t("error")}: ${e.message}`)); });
$("#sel-start").addEventListener("change", () => { $("#dlg-new .jq-row").hidden = $("#sel-start").value !== "jieqi"; });
$("#btn-puzzles").addEventListener("click", () => { if (!puzzles.active) puzzles.open(); });

$("#btn-edit").addEventListener("click", () => {
  if (practice.active) practice.close();
  if (puzzles.active) puzzles.close();
  if (endgame.active) endgame.close();
  ui.editing = true;
  $("#hint-line").hidden = true; // the editor's position is not the game's
  editor.open(ui.state ? ui.state.fen : "");
  renderActions();
});

// -- settings -------------------------------------------------------------------

function applySettings() {
  const s = ui.settings;
  document.documentElement.dataset.theme = s.theme;
  document.documentElement.dataset.mode = s.mode;
  document.documentElement.dataset.pieces = s.pieces;
  sound.setMuted(s.sound === "off");
  setLanguage(s.language);
  document.title = `${t("title")} · pyxiangqi`;
  $("#set-theme").value = s.theme;
  $("#set-pieces").value = s.pieces;
  $("#set-mode").value = s.mode;
  $("#set-language").value = s.language;
  $("#set-sound").value = s.sound;
  $("#set-trad").checked = Boolean(s.traditional);
  $("#set-tendency").value = ["normal", "stubborn", "compliant"].includes(s.computer_tendency) ? s.computer_tendency : "normal";
  $("#set-notation").value = ["chinese", "wxf", "iccs"].includes(ui.settings.notation) ? ui.settings.notation : "auto";
  record.refresh();
  if (analysis.source !== "current") analysis.render();
  review.refresh();
  explorer.refresh();
  engine.refresh();
  if (window.xqPuzzles) window.xqPuzzles.refresh();
  if (window.xqEndgame) window.xqEndgame.refresh();
  editor.refresh(); // the position check's text
  engines.relabel();
  fillLevels();
  talk.applySettings(s);
  if (ui.state) render(ui.state);
  if (online) online.refresh();
}

async function changeSetting(key, value) {
  ui.settings[key] = value;
  applySettings();
  if (online) { localStorage.setItem("xiangqi.settings", JSON.stringify(ui.settings)); return; }
  try {
    await api("/api/settings", {
      method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ [key]: value }),
    });
  } catch (e) {
    toast(e.message);
  }
}

$("#set-theme").addEventListener("change", (e) => changeSetting("theme", e.target.value));
$("#set-pieces").addEventListener("change", (e) => changeSetting("pieces", e.target.value));
$("#set-mode").addEventListener("change", (e) => changeSetting("mode", e.target.value));
$("#set-language").addEventListener("change", (e) => changeSetting("language", e.target.value));
$("#set-sound").addEventListener("change", (e) => changeSetting("sound", e.target.value));
$("#set-trad").addEventListener("change", (e) => changeSetting("traditional", e.target.checked));
$("#set-notation").addEventListener("change", (e) => changeSetting("notation", e.target.value));
$("#set-tendency").addEventListener("change", (e) => changeSetting("computer_tendency", e.target.value));

// -- keyboard -------------------------------------------------------------------

document.addEventListener("keydown", (ev) => {
  if (document.querySelector("dialog[open]") || ev.target.closest("input, select, textarea")) return;
  if (online) { if (!ev.ctrlKey && !ev.metaKey && !ev.altKey && online.key(ev)) ev.preventDefault(); return; }
  if (library.key(ev) || record.key(ev)) { ev.preventDefault(); return; }
  // The move list's keys (←/→ one ply, ↑/Home start, ↓/End end), unless the board has the focus
  // for its keyboard cursor (Tab to the board, or a game without moves yet).
  const onBoard = ev.target.closest && ev.target.closest("#board");
  const cursorKeys = onBoard && (board.cursor || ev.target.matches(":focus-visible"));
  if (!ui.editing && !ui.replaying && !cursorKeys && analysis.key(ev)) { ev.preventDefault(); return; }
  const cursorMoves = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] };
  if (cursorMoves[ev.key]) {
    ev.preventDefault();
    $("#board").focus({ preventScroll: true });
    board.moveCursor(...cursorMoves[ev.key]);
    return;
  }
  if ((ev.key === "Enter" || ev.key === " ") && !ev.target.closest("button, a")) {
    ev.preventDefault();
    board.activateCursor();
    return;
  }
  if ((ev.ctrlKey || ev.metaKey) && ev.key.toLowerCase() === "z") { ev.preventDefault(); $("#btn-undo").click(); return; }
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const keys = { n: openNewDialog, f: () => $("#btn-flip").click(), h: () => $("#btn-hint").click(),
    s: () => $("#btn-save").click(), o: openOpenDialog, u: () => $("#btn-undo").click() };
  const fn = keys[ev.key.toLowerCase()];
  if (fn) { ev.preventDefault(); fn(); }
});

// -- start ----------------------------------------------------------------------

let online = null; // online play on a public server (online.js)

/** A public server (xiangqi serve --public): the online page (lobby, games, profiles) instead of
 *  the local game; settings are kept in the browser (the server has none per visitor). */
async function startOnline(cfg) {
  try { Object.assign(ui.settings, JSON.parse(localStorage.getItem("xiangqi.settings") || "{}")); } catch { /* none */ }
  ui.levels = []; // the computer levels are in the lobby (cfg.computers)
  online = createOnline({ board, toast, confirmDialog, notation, settings: () => ui.settings });
  applySettings();
  await online.start(cfg);
  document.body.dataset.ready = "1";
  document.body.dataset.connected = "1";
}

async function start() {
  try {
    const cfg = await api("/api/online/config").catch(() => ({ public: false }));
    if (cfg && cfg.public) { await startOnline(cfg); return; }
    talk.load(); // the named opponents of the new-game dialog (local server only)
    const [settings, levels, st] = await Promise.all([api("/api/settings"), api("/api/levels"), api("/api/game")]);
    Object.assign(ui.settings, settings || {});
    ui.levels = levels;
    engines.refresh().catch(() => {}); // the added engines: level choices and the analyser
    applySettings();
    render(st);
    connect(st.id);
    document.body.dataset.ready = "1";
  } catch (e) {
    showNotice(`${t("error")}: ${e.message}`);
  }
}

applyLanguage();
start();
