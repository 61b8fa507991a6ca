// Endgame practice (残局练习): a won tablebase position against perfect defence. The server
// (web/puzzle_api.py, app/training/endgames.py) answers each move with the table's longest
// resistance and says whether the win is still there; the distance to mate only on request.

import { parseFen } from "./board.js";
import { boardFen } from "./editor.js";
import { TEXT, fill, language, t } from "./i18n.js";
import { createJobPanel } from "./setup.js";

Object.assign(TEXT.zh, {
  endgame: "残局练习", eg_title: "残局练习", eg_ending: "残局", eg_new: "换一局", eg_undo: "悔棋", eg_dtm: "显示步数",
  eg_none: "还没有残局库。", eg_your_move: "红先胜：请走棋，对方按残局库最顽强地防守",
  eg_your_move_black: "黑先胜：请走棋，对方按残局库最顽强地防守",
  eg_kept: "好棋，离杀棋更近了", eg_still_winning: "仍是胜势", eg_no_progress: "仍是胜势，但没有离杀棋更近（步数没有减少），试试更紧的走法", eg_draw: "这步棋失去了胜势（和棋），可以悔棋再试", eg_loss: "这步棋反而要输了，可以悔棋再试",
  eg_mate: "将死！练习完成", eg_mated: "被将死了", eg_drawn: "子力不足，和棋",
  eg_dtm_win: "残局库：走棋方胜，{n} 步杀（{p} 个半回合）", eg_dtm_loss: "残局库：走棋方负，{n} 步后被杀", eg_dtm_draw: "残局库：和棋",
});
Object.assign(TEXT.en, {
  endgame: "Endgames", eg_title: "Endgame practice", eg_ending: "Ending", eg_new: "New position", eg_undo: "Take back",
  eg_dtm: "Show distance to mate", eg_none: "No endgame tables yet.",
  eg_your_move: "Red to play and win: the defence plays the table's longest resistance",
  eg_your_move_black: "Black to play and win: the defence plays the table's longest resistance",
  eg_kept: "Good: closer to mate", eg_still_winning: "Still winning", eg_no_progress: "Still winning, but no closer to mate (the distance did not shrink): try a tighter move", eg_draw: "That lets the win go (a draw): take it back and try again",
  eg_loss: "That move loses: take it back and try again", eg_mate: "Mate! Practice done", eg_mated: "Mated",
  eg_drawn: "No mating material left: a draw",
  eg_dtm_win: "Tablebase: the side to move mates in {n} ({p} plies)", eg_dtm_loss: "Tablebase: the side to move is mated in {n}",
  eg_dtm_draw: "Tablebase: draw",
});

// the tablebase verdict of the engine panel (analysis board)
Object.assign(TEXT.zh, { tb_best: "最佳着法：{moves}", tb_mated: "残局库：{side}胜（已将死）", tb_more: "等 {n} 着",
  tb_was: "（走前：{v}）", tb_red: "红", tb_black: "黑", tbb_win: "{side}胜，{n} 步杀", tbb_draw: "和棋",
  tbb_mated: "{side}胜（已将死）" });
Object.assign(TEXT.en, { tb_best: "best: {moves}", tb_mated: "Tablebase: {side} has mated", tb_more: "and {n} more",
  tb_was: " (before the move: {v})", tb_red: "Red", tb_black: "Black", tbb_win: "{side} mates in {n}",
  tbb_draw: "draw", tbb_mated: "{side} has mated" });

// results of the repetition rule (tables of the cxa-check model: one-sided perpetual check loses)
Object.assign(TEXT.zh, { tb_rule: "残局库：{side}胜（对方只能长将，长将判负）", tbb_rule: "{side}胜（长将判负）",
  eg_perpetual_won: "对方长将，判负：练习完成", eg_perpetual_lost: "长将判负", eg_repetition: "重复局面，判和",
  eg_dtm_rule_win: "残局库：走棋方胜（对方只能长将，长将判负）", eg_dtm_rule_loss: "残局库：走棋方只能长将，判负" });
Object.assign(TEXT.en, { tb_rule: "Tablebase: {side} wins (the other side can only check perpetually, which loses)",
  tbb_rule: "{side} wins (perpetual check loses)", eg_perpetual_won: "Perpetual check: the defence loses. Practice done",
  eg_perpetual_lost: "Perpetual check loses", eg_repetition: "Repetition: a draw",
  eg_dtm_rule_win: "Tablebase: the side to move wins (the other side can only check perpetually, which loses)",
  eg_dtm_rule_loss: "Tablebase: the side to move can only check perpetually, which loses" });

/** "残局库：红胜，23 步杀" / "残局库：和棋" for a table verdict ``{wdl, dtm}`` with ``turn`` to move. */
function verdictHead(tb, turn, bare = false) {
  const k = bare ? "tbb_" : "tb_"; // bare: without the "残局库：" prefix
  if (tb.wdl === "draw") return t(`${k}draw`);
  const winner = tb.wdl === "win" ? turn : (turn === "red" ? "black" : "red");
  if (tb.rule) return fill(t(`${k}rule`), { side: t(`tb_${winner}`) });
  if (!tb.dtm) return fill(t(`${k}mated`), { side: t(`tb_${winner}`) });
  return fill(t(`${k}win`), { side: t(`tb_${winner}`), n: Math.ceil(tb.dtm / 2) });
}

/**
 * The review's table note on ply ``p`` (``{color, tb_before, tb_after}`` of /api/review): the exact
 * verdict after the move and, when the move changed it, the one before: "残局库：和棋（走前：红胜，12 步杀）".
 * "" when the position after the move is in no table.
 */
export function reviewTableNote(p) {
  if (!p || !p.tb_after) return "";
  const other = p.color === "red" ? "black" : "red";
  const now = verdictHead(p.tb_after, other);
  const was = p.tb_before ? verdictHead(p.tb_before, p.color, true) : "";
  const changed = p.tb_before && p.tb_before.wdl !== ({ win: "loss", loss: "win", draw: "draw" })[p.tb_after.wdl];
  return changed ? now + fill(t("tb_was"), { v: was }) : now;
}

/** Most best moves listed by {@link tablebaseVerdict}. */
const TB_BEST_SHOWN = 4;

/**
 * The endgame table's verdict as one line: "残局库：红胜，23 步杀 · 最佳着法：车一平四 车一进一" (English on
 * the English page). ``tb`` is the server's ``{wdl, dtm, mate, winner, best, chinese, wxf}``
 * (app/training/analysis.py ``tablebase_verdict``); ``notation`` chinese|wxf|iccs; ``decorate`` the
 * page's final form of Chinese text. "" without a verdict.
 */
export function tablebaseVerdict(tb, notation = "chinese", decorate = (x) => x) {
  if (!tb) return "";
  const head = verdictHead(tb, tb.wdl === "loss" ? (tb.winner === "red" ? "black" : "red") : tb.winner || "red");
  const moves = notation === "iccs" ? tb.best.map((m) => `${m.slice(0, 2)}-${m.slice(2, 4)}`.toUpperCase())
    : notation === "wxf" ? tb.wxf : tb.chinese.map(decorate);
  if (!moves.length) return head;
  let list = moves.slice(0, TB_BEST_SHOWN).join(" ");
  if (moves.length > TB_BEST_SHOWN) list += ` ${fill(t("tb_more"), { n: moves.length - TB_BEST_SHOWN })}`;
  return `${head} · ${fill(t("tb_best"), { moves: list })}`;
}

const $ = (sel) => document.querySelector(sel);
const REPLY_DELAY_MS = 400;

function applyMove(fen, mv) {
  const pieces = parseFen(fen);
  pieces[mv.slice(2, 4)] = pieces[mv.slice(0, 2)];
  delete pieces[mv.slice(0, 2)];
  return boardFen(pieces);
}

export function createEndgame({ board, api, toast, onEnter, onExit, restoreMove }) {
  let view = null;
  let active = false;
  let busy = false;
  let status = null;
  let timer = null;
  let flipped = false;
  let shown = null; // what the board shows now, for flip()
  // no tables yet: the offer to generate the default set; when it is done, practice starts
  const tables = createJobPanel({ api, name: "tablebases", box: $("#eg-setup"), onDone: () => { if (active) open(); } });

  function setStatus(key, cls = "", values = {}) {
    status = [key, cls, values];
    const el = $("#eg-status");
    el.textContent = fill(t(key), values);
    el.className = "pz-status " + cls;
    document.body.dataset.endgameStatus = key;
  }

  function show(fen, { lastMove = null, movable = false, animate = true } = {}) {
    board.set({
      fen, lastMove, animate, shapes: [], check: view && view.fen === fen ? view.check : null,
      orientation: (view && !view.red) !== flipped ? "black" : "red",
      dests: movable && view ? view.dests : {}, movable, onMove,
    });
    shown = { fen, lastMove, movable };
  }

  /** 翻转: turn the board round. */
  function flip() {
    flipped = !flipped;
    if (shown) show(shown.fen, { ...shown, animate: false, movable: shown.movable && !busy });
  }

  function render() {
    $("#eg-name").textContent = view ? (language() === "zh" ? view.ending_zh : view.ending) : "";
    $("#eg-dtm-line").textContent = "";
    $("#eg-undo").disabled = !view || view.moves.length === 0;
    document.body.dataset.endgameVerdict = view ? view.verdict : "";
  }

  async function start() {
    const ending = $("#eg-ending").value;
    if (!ending) { setStatus("eg_none", "bad"); return; }
    try {
      view = await api("/api/endgames/start", { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ ending }) });
    } catch (e) {
      toast(`${t("error")}: ${e.message}`);
      return;
    }
    render();
    setStatus(view.red ? "eg_your_move" : "eg_your_move_black");
    show(view.fen, { movable: true, animate: false });
  }

  function verdictStatus(res) {
    if (res.over === "mate") return setStatus("eg_mate", "good");
    if (res.over === "mated") return setStatus("eg_mated", "bad");
    if (res.over === "draw") return setStatus("eg_drawn", "bad");
    if (res.over === "perpetual") {
      return setStatus(res.verdict === "win" ? "eg_perpetual_won" : "eg_perpetual_lost", res.verdict === "win" ? "good" : "bad");
    }
    if (res.over === "repetition") return setStatus("eg_repetition", "bad");
    // praise only progress (the distance to mate shrank, app/training/endgames.py); a win by the
    // repetition rule has no distance (progress null): still winning, said plainly
    if (res.verdict === "win" && res.progress === false) return setStatus("eg_no_progress", "");
    if (res.verdict === "win" && res.progress === true) return setStatus("eg_kept", "good");
    if (res.verdict === "win") return setStatus("eg_still_winning", "");
    return setStatus(res.verdict === "draw" ? "eg_draw" : "eg_loss", "bad");
  }

  async function onMove(mv) {
    if (!active || busy || !view) return;
    busy = true;
    show(applyMove(view.fen, mv), { lastMove: mv });
    let res;
    try {
      res = await api(`/api/endgames/${view.session}/move`, { method: "POST",
        headers: { "Content-Type": "application/json" }, body: JSON.stringify({ move: mv }) });
    } catch (e) {
      busy = false;
      toast(`${t("error")}: ${e.message}`);
      show(view.fen, { movable: true, animate: false });
      return;
    }
    view = res;
    busy = false;
    render();
    verdictStatus(res);
    timer = setTimeout(() => show(res.fen, { lastMove: res.reply || mv, movable: !res.over }),
      res.reply ? REPLY_DELAY_MS : 0);
  }

  async function undo() {
    if (!view || busy) return;
    clearTimeout(timer);
    try {
      view = await api(`/api/endgames/${view.session}/undo`, { method: "POST" });
    } catch (e) {
      toast(`${t("error")}: ${e.message}`);
      return;
    }
    render();
    setStatus(view.red ? "eg_your_move" : "eg_your_move_black");
    show(view.fen, { movable: true, animate: false, lastMove: view.moves[view.moves.length - 1] || null });
  }

  async function dtm() {
    if (!view) return;
    const d = await api(`/api/endgames/${view.session}/dtm`);
    const key = d.wdl === "draw" ? "eg_dtm_draw" : `eg_dtm_${d.rule ? "rule_" : ""}${d.wdl}`;
    $("#eg-dtm-line").textContent = fill(t(key), { n: d.mate_in, p: d.dtm });
    document.body.dataset.endgameDtm = String(d.dtm);
  }

  $("#eg-new").addEventListener("click", () => { if (!busy) start(); });
  $("#eg-ending").addEventListener("change", () => { if (!busy) start(); });
  $("#eg-undo").addEventListener("click", undo);
  $("#eg-dtm").addEventListener("click", () => dtm().catch((e) => toast(e.message)));
  $("#eg-exit").addEventListener("click", () => close());

  async function open() {
    onEnter(); // first: it closes the other modes, which give the board and the panel back
    active = true;
    document.body.classList.add("puzzling");
    $("#endgame").hidden = false;
    $("#game-panel").hidden = true;
    let list = [];
    try {
      list = (await api("/api/endgames")).endings;
    } catch (e) {
      toast(`${t("error")}: ${e.message}`);
    }
    const sel = $("#eg-ending");
    sel.replaceChildren(...list.map((x) => new Option(language() === "zh" ? `${x.zh} (${x.name})` : x.name, x.name)));
    // no tables: no buttons that cannot do anything (the status says how to make the tables)
    $("#eg-new").parentElement.hidden = !list.length;
    sel.closest(".row").hidden = !list.length;
    if (!list.length) {
      view = null;
      render();
      setStatus("eg_none", "bad");
      show("9/9/9/9/9/9/9/9/9/9", { animate: false });
      // the offer to generate the default tables here, in the background (setup.js, web/jobs_api.py)
      tables.show().catch(() => tables.hide());
      return;
    }
    tables.hide();
    await start();
  }

  function close() {
    clearTimeout(timer);
    active = false;
    busy = false;
    document.body.classList.remove("puzzling");
    $("#endgame").hidden = true;
    $("#game-panel").hidden = false;
    board.set({ onMove: restoreMove, shapes: [] });
    onExit();
  }

  function refresh() {
    if (!active) return;
    tables.refresh();
    render();
    if (status) setStatus(...status);
  }

  return { open, close, refresh, flip, get active() { return active; }, get view() { return view; } };
}
