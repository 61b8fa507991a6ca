// Puzzle mode (练习题 / 杀法练习): a board mode of its own, like the editor. The server
// (web/puzzle_api.py) holds each attempt and judges every move: the solution's move, any mate in a
// mate puzzle, or another move the engine confirms; the opponent's reply comes back with the verdict.
// Wrong moves are taken back (retry); hint, show solution, next; the player's Glicko-2 rating,
// streak and progress live in the app store.

import { parseFen } from "./board.js";
import { boardFen } from "./editor.js";
import { TEXT, fill, language, t } from "./i18n.js";

Object.assign(TEXT.zh, {
  puzzles: "练习题", pz_title: "练习题", pz_your_move: "轮到你走", pz_right: "正确！继续", pz_wrong: "不对，再试一次",
  pz_solved: "解题成功！", pz_failed: "已显示答案", pz_hint: "提示", pz_solution: "看答案", pz_next: "下一题",
  pz_retry: "重做", pz_all: "全部", pz_theme: "题型", pz_source: "来源", pz_rating: "题目等级分 {r}",
  pz_player: "我的等级分 {r} ± {rd} · 连胜 {s}（最佳 {b}）· 已解 {n}", pz_change: "等级分 {before} → {after}（{d}）",
  pz_hint_piece: "提示：走{piece}", pz_hint_move: "提示：{mv}", pz_none: "没有符合条件的题目",
  pz_credit: "题目来自 CCPD（Yu-Han Tseng、Bo-Nian Chen 2026，CC BY 4.0），经本程序引擎验证",
  pz_count: "共 {n} 题，已解 {s} 题", pz_opponent: "对方应着",
  th_mate: "杀棋", th_material: "得子", th_win: "残局胜", th_mateIn1: "一步杀", th_mateIn2: "二步杀",
  th_mateIn3: "三步杀", th_mateIn4: "四步杀", th_mateIn5: "五步杀", th_mateLong: "长杀", th_menGong: "闷宫",
  th_winRook: "得车", th_chouJiang: "抽将",
});
Object.assign(TEXT.en, {
  puzzles: "Puzzles", pz_title: "Puzzles", pz_your_move: "Your move", pz_right: "Right! Go on", pz_wrong: "Not that one: try again",
  pz_solved: "Solved!", pz_failed: "Solution shown", pz_hint: "Hint", pz_solution: "Solution", pz_next: "Next",
  pz_retry: "Retry", pz_all: "All", pz_theme: "Theme", pz_source: "Source", pz_rating: "Puzzle rating {r}",
  pz_player: "My rating {r} ± {rd} · streak {s} (best {b}) · solved {n}", pz_change: "Rating {before} → {after} ({d})",
  pz_hint_piece: "Hint: move the {piece}", pz_hint_move: "Hint: {mv}", pz_none: "No puzzle matches",
  pz_credit: "Puzzles from CCPD (Yu-Han Tseng, Bo-Nian Chen 2026, CC BY 4.0), checked by this program's engine",
  pz_count: "{n} puzzles, {s} solved", pz_opponent: "Reply",
  th_mate: "Mate", th_material: "Win material", th_win: "Won ending", th_mateIn1: "Mate in 1", th_mateIn2: "Mate in 2",
  th_mateIn3: "Mate in 3", th_mateIn4: "Mate in 4", th_mateIn5: "Mate in 5", th_mateLong: "Long mate",
  th_menGong: "Smothered palace (闷宫)", th_winRook: "Win a rook", th_chouJiang: "Discovered check (抽将)",
});

const SOURCES = { "ccpd/殺局_殺法_練習題": ["杀局·杀法练习", "Mating exercises"], "ccpd/殘局": ["残局", "Endgames"],
  "ccpd/全盤戰術": ["全盘战术", "Whole-game tactics"], "ccpd/中局": ["中局", "Middlegames"],
  "mined/db": ["对局库", "Games database"], "mined/file": ["棋谱文件", "Record files"] };

const PIECES = { K: ["帅", "king"], A: ["仕", "advisor"], B: ["相", "elephant"], N: ["马", "horse"], R: ["车", "rook"],
  C: ["炮", "cannon"], P: ["兵", "pawn"], k: ["将", "king"], a: ["士", "advisor"], b: ["象", "elephant"], n: ["马", "horse"],
  r: ["车", "rook"], c: ["炮", "cannon"], p: ["卒", "pawn"] };
const $ = (sel) => document.querySelector(sel);
const REPLY_DELAY_MS = 450;

function themeName(tag) {
  const key = "th_" + tag;
  return t(key) !== key ? t(key) : tag;
}

function sourceName(src) {
  const s = SOURCES[src];
  return s ? s[language() === "zh" ? 0 : 1] : src;
}

/** The board field after one ICCS move (pieces move, a capture replaces): the page shows the
 *  solver's move at once, before the server's answer with the reply arrives. */
function applyMove(fen, mv) {
  const pieces = parseFen(fen);
  const from = mv.slice(0, 2), to = mv.slice(2, 4);
  pieces[to] = pieces[from];
  delete pieces[from];
  return boardFen(pieces);
}

export function createPuzzles({ board, api, toast, onEnter, onExit, restoreMove }) {
  let view = null; // the attempt as the server sent it
  let busy = false;
  let active = false;
  let timer = null;
  let catalog = null;
  let flipped = false;
  let shown = null; // what the board shows now, for flip()

  let status = null; // [key, class, values] of the status line, for a change of language

  function setStatus(key, cls = "", values = {}) {
    status = [key, cls, values];
    const el = $("#pz-status");
    el.textContent = fill(t(key), values);
    el.className = "pz-status " + cls;
    el.dataset.key = key;
    document.body.dataset.puzzleStatus = key;
  }

  function showBoard(fen, { lastMove = null, check = null, movable = false, shapes = [], animate = true } = {}) {
    board.set({
      fen, lastMove, check, shapes, animate,
      orientation: (view && !view.red) !== flipped ? "black" : "red",
      dests: movable && view ? view.dests : {}, movable,
      onMove: onBoardMove,
    });
    shown = { fen, lastMove, check, movable };
  }

  /** 翻转: turn the board round (the solver's side at the top). */
  function flip() {
    flipped = !flipped;
    if (shown) showBoard(shown.fen, { ...shown, animate: false, movable: shown.movable && !busy });
  }

  function renderPlayer() {
    if (!catalog) return;
    const p = catalog.player;
    $("#pz-player").textContent = fill(t("pz_player"), {
      r: Math.round(p.rating), rd: Math.round(p.rd), s: p.streak, b: p.best_streak, n: p.solved,
    });
    $("#pz-count").textContent = fill(t("pz_count"), { n: catalog.count, s: catalog.solved });
    document.body.dataset.puzzleRating = String(Math.round(p.rating));
  }

  function fillFilters() {
    const theme = $("#pz-theme"), source = $("#pz-source");
    const keepT = theme.value, keepS = source.value;
    theme.replaceChildren(new Option(t("pz_all"), ""));
    for (const [tag, n] of Object.entries(catalog.themes)) theme.appendChild(new Option(`${themeName(tag)} (${n})`, tag));
    source.replaceChildren(new Option(t("pz_all"), ""));
    for (const [src, n] of Object.entries(catalog.sources)) source.appendChild(new Option(`${sourceName(src)} (${n})`, src));
    theme.value = keepT;
    source.value = keepS;
  }

  async function loadCatalog() {
    const q = new URLSearchParams();
    if ($("#pz-theme").value) q.set("theme", $("#pz-theme").value);
    if ($("#pz-source").value) q.set("source", $("#pz-source").value);
    catalog = await api("/api/puzzles?" + q.toString());
    fillFilters();
    renderPlayer();
  }

  function renderView() {
    $("#pz-goal").textContent = language() === "zh" ? view.goal_zh : view.goal_en;
    $("#pz-meta").textContent = [fill(t("pz_rating"), { r: view.rating }), view.themes.map(themeName).join(" · "),
      sourceName(view.source)].filter(Boolean).join(" · ");
    $("#pz-change").textContent = "";
    $("#pz-change").className = "pz-change";
    $("#pz-hint").disabled = view.done;
    $("#pz-solution").disabled = view.done;
    document.body.dataset.puzzleId = view.id;
    document.body.dataset.puzzleDone = view.done ? "1" : "0";
  }

  function renderChange() {
    const ch = view.rating_change;
    if (!ch) return;
    const d = Math.round(ch.after - ch.before);
    const el = $("#pz-change");
    el.textContent = fill(t("pz_change"), { before: Math.round(ch.before), after: Math.round(ch.after), d: (d >= 0 ? "+" : "") + d });
    el.className = "pz-change " + (d >= 0 ? "up" : "down");
  }

  async function start(promise) {
    clearTimeout(timer);
    busy = true;
    try {
      view = await promise;
    } catch (e) {
      busy = false;
      setStatus("pz_none", "bad");
      $("#pz-goal").textContent = "";
      $("#pz-meta").textContent = e.message;
      showBoard(view ? view.fen : "9/9/9/9/9/9/9/9/9/9");
      return;
    }
    busy = false;
    renderView();
    setStatus("pz_your_move");
    showBoard(view.fen, { movable: true, animate: false, check: view.check });
  }

  function next() {
    const body = { theme: $("#pz-theme").value || null, source: $("#pz-source").value || null,
      exclude: view ? view.id : null };
    return start(api("/api/puzzles/next", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body) }));
  }

  function retry() {
    if (!view) return next();
    return start(api("/api/puzzles/start", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ id: view.id }) }));
  }

  async function onBoardMove(mv) {
    if (!active || busy || !view || view.done) return;
    busy = true;
    const before = view.fen;
    showBoard(applyMove(before, mv), { lastMove: mv, animate: true });
    let res;
    try {
      res = await api(`/api/puzzles/attempt/${view.attempt}/move`, {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ move: mv }),
      });
    } catch (e) {
      busy = false;
      toast(`${t("error")}: ${e.message}`);
      showBoard(before, { movable: true, animate: false });
      return;
    }
    view = res;
    if (res.verdict === "wrong") {
      setStatus("pz_wrong", "bad");
      timer = setTimeout(() => { busy = false; showBoard(res.fen, { movable: true, check: res.check }); }, REPLY_DELAY_MS);
      return;
    }
    if (res.verdict === "solved") {
      busy = false;
      setStatus("pz_solved", "good");
      showBoard(res.fen, { lastMove: mv, check: res.check });
      renderView();
      renderChange();
      await loadCatalog();
      return;
    }
    setStatus("pz_right", "good");
    timer = setTimeout(() => {
      busy = false;
      showBoard(res.fen, { lastMove: res.reply, movable: true, check: res.check });
    }, REPLY_DELAY_MS);
  }

  async function hint() {
    if (!view || view.done || busy) return;
    try {
      const h = await api(`/api/puzzles/attempt/${view.attempt}/hint`, { method: "POST" });
      const zh = language() === "zh";
      if (h.move) {
        setStatus("pz_hint_move", "", { mv: zh ? h.text : h.text_en });
        showBoard(view.fen, { movable: true, animate: false, shapes: [{ from: h.from, to: h.move.slice(2, 4), kind: "hint" }] });
      } else {
        const name = PIECES[h.piece] || [h.from, h.from];
        setStatus("pz_hint_piece", "", { piece: zh ? name[0] : name[1] });
        showBoard(view.fen, { movable: true, animate: false, shapes: [{ from: h.from, to: h.from, kind: "hint pz-piece" }] });
      }
      view.clean = false;
    } catch (e) {
      toast(`${t("error")}: ${e.message}`);
    }
  }

  async function solution() {
    if (!view || busy) return;
    busy = true;
    let res;
    try {
      res = await api(`/api/puzzles/attempt/${view.attempt}/solution`, { method: "POST" });
    } catch (e) {
      busy = false;
      toast(`${t("error")}: ${e.message}`);
      return;
    }
    view = res;
    renderView();
    renderChange();
    setStatus("pz_failed", "bad");
    // play the rest of the line on the board, one move at a time
    let fen = res.fen, i = 0;
    const step = () => {
      if (i >= res.rest.length) { busy = false; return; }
      const mv = res.rest[i++];
      fen = applyMove(fen, mv);
      showBoard(fen, { lastMove: mv });
      timer = setTimeout(step, REPLY_DELAY_MS * 1.5);
    };
    step();
    loadCatalog().catch(() => {});
  }

  $("#pz-next").addEventListener("click", () => { if (!busy) next(); });
  $("#pz-retry").addEventListener("click", () => { if (!busy) retry(); });
  $("#pz-hint").addEventListener("click", hint);
  $("#pz-solution").addEventListener("click", solution);
  $("#pz-exit").addEventListener("click", () => close());
  for (const sel of ["#pz-theme", "#pz-source"]) {
    $(sel).addEventListener("change", async () => { await loadCatalog(); next(); });
  }

  async function open() {
    onEnter(); // first: it closes the other modes, which give the board and the panel back
    active = true;
    document.body.classList.add("puzzling");
    $("#puzzles").hidden = false;
    $("#game-panel").hidden = true;
    try {
      await loadCatalog();
    } catch (e) {
      toast(`${t("error")}: ${e.message}`);
    }
    await next();
  }

  function close() {
    clearTimeout(timer);
    active = false;
    busy = false;
    document.body.classList.remove("puzzling");
    $("#puzzles").hidden = true;
    $("#game-panel").hidden = false;
    board.set({ onMove: restoreMove, shapes: [] });
    onExit();
  }

  /** The texts again in the page's language (called by app.js after a settings change). */
  function refresh() {
    if (!active) return;
    if (catalog) { fillFilters(); renderPlayer(); }
    if (view) {
      const done = view.rating_change;
      renderView();
      if (done) renderChange();
    }
    if (status) setStatus(...status);
  }

  return { open, close, refresh, flip, get active() { return active; }, get view() { return view; } };
}
