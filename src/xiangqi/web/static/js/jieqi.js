// 揭棋 (Jieqi): a game with the pieces face down, against the computer or two at one board.
// The server (web/jieqi_api.py, app/play/jieqi_game.py) holds the secret deal and answers every move
// with the position as the player may see it: hidden pieces are X/x in its FEN (the board draws
// them as plain discs with a mark), a reveal turns the piece face up where it lands.

import { TEXT, fill, language, t } from "./i18n.js";

// -- 揭棋 texts (feature: jieqi) --
Object.assign(TEXT.zh, {
  jieqi: "揭棋", start_jieqi: "揭棋（暗子，走动即翻开）", jq_title: "揭棋", jq_capture: "吃暗子后",
  jq_capture_capturer: "只有吃子方看到", jq_capture_both: "双方都看到",
  jq_red_to_move: "红方走棋", jq_black_to_move: "黑方走棋", jq_your_move: "轮到你走", jq_thinking: "电脑思考中…",
  jq_revealed: "{side}翻开：{piece}", jq_pools: "未翻开", jq_red: "红", jq_black: "黑", jq_none: "无",
  jq_no_game: "还没有揭棋对局：点「新局」，开局方式选「揭棋」", jq_new: "新局", jq_check: "将军！",
  jq_saved: "对局已存入棋谱库",
});
Object.assign(TEXT.en, {
  jieqi: "Jieqi", start_jieqi: "Jieqi (pieces face down, turned up when moved)", jq_title: "Jieqi (揭棋)",
  jq_capture: "A hidden piece taken is seen by", jq_capture_capturer: "the capturer only", jq_capture_both: "both players",
  jq_red_to_move: "Red to move", jq_black_to_move: "Black to move", jq_your_move: "Your move",
  jq_thinking: "Computer is thinking…", jq_revealed: "{side} turned up: {piece}", jq_pools: "Face down",
  jq_red: "Red", jq_black: "Black", jq_none: "none", jq_no_game: "No Jieqi game yet: New game, start: Jieqi",
  jq_new: "New game", jq_check: "Check!", jq_saved: "The game is in the library",
});

const $ = (sel) => document.querySelector(sel);
const PIECE_ZH = { K: ["帅", "将"], A: ["仕", "士"], B: ["相", "象"], N: ["马", "马"], R: ["车", "车"], C: ["炮", "炮"], P: ["兵", "卒"] };
const PIECE_EN = { K: "king", A: "advisor", B: "elephant", N: "horse", R: "rook", C: "cannon", P: "pawn" };
const ENGINE_PAUSE_MS = 250;
const START = "xxxxkxxxx/9/1x5x1/x1x1x1x1x/9/9/X1X1X1X1X/1X5X1/9/XXXXKXXXX"; // between the human's move shown and the computer's search

function pieceName(letter, red) {
  return language() === "zh" ? PIECE_ZH[letter][red ? 0 : 1] : PIECE_EN[letter];
}

/** The 揭棋 mode. ``board`` the page's board, ``api(path, options)`` the page's fetch helper,
 * ``onEnter``/``onExit`` give the board and the panel to this mode and back, ``restoreMove`` the
 * page's own move handler (put back on the board when the mode closes). */
export function createJieqi({ board, api, toast, onEnter, onExit, restoreMove }) {
  let active = false;
  let st = null;
  let busy = false;
  let flipped = false;

  function orientation() {
    const base = st && st.viewer === "black" ? "black" : "red";
    return flipped === (base === "black") ? "red" : "black";
  }

  function humanToMove() {
    return st && !st.result && st[st.turn] === "human";
  }

  function dests() {
    const out = {};
    for (const [from, tos] of Object.entries(st.dests || {})) out[from] = tos.map((to) => from + to);
    return out;
  }

  function renderPools() {
    const line = (side) => {
      const pool = st.pools[side] || {};
      const parts = Object.entries(pool).filter(([, n]) => n > 0).map(([k, n]) => `${pieceName(k, side === "red")}×${n}`);
      return `<b>${t(side === "red" ? "jq_red" : "jq_black")}</b> ${parts.length ? parts.join(" ") : t("jq_none")}`;
    };
    $("#jq-pools").innerHTML = `${t("jq_pools")}: ${line("red")}<br>${t("jq_pools")}: ${line("black")}`;
  }

  function renderMoves() {
    const list = $("#jq-moves");
    list.replaceChildren();
    const moves = st.moves;
    for (let i = 0; i < moves.length; i += 2) {
      const li = document.createElement("li");
      for (const k of [i, i + 1]) {
        if (k >= moves.length) break;
        const span = document.createElement("span");
        span.className = "mv";
        span.dataset.ply = String(k + 1);
        span.textContent = language() === "zh" ? moves[k].chinese : moves[k].token;
        if (k > i) li.appendChild(document.createTextNode(" "));
        li.appendChild(span);
      }
      list.appendChild(li);
    }
    list.scrollTop = list.scrollHeight;
  }

  function status() {
    if (!st) return t("jq_no_game");
    if (st.result) return language() === "zh" ? st.result.reason_zh : st.result.reason_en;
    if (busy && st[st.turn] === "engine") return t("jq_thinking");
    const last = st.moves.length ? st.moves[st.moves.length - 1] : null;
    let text = humanToMove() && (st.red !== "human" || st.black !== "human") ? t("jq_your_move")
      : t(st.turn === "red" ? "jq_red_to_move" : "jq_black_to_move");
    if (st.check) text = `${t("jq_check")} ${text}`;
    if (last && st.last_reveal) {
      const moverRed = st.turn === "black";
      text = `${fill(t("jq_revealed"), { side: t(moverRed ? "jq_red" : "jq_black"), piece: pieceName(st.last_reveal, moverRed) })} · ${text}`;
    }
    return text;
  }

  function render(animate = true) {
    document.body.dataset.jieqiPlies = st ? String(st.moves.length) : "";
    document.body.dataset.jieqiResult = st && st.result ? st.result.result : "";
    document.body.dataset.jieqiBusy = busy ? "1" : "0";
    $("#jq-status").textContent = status();
    $("#jq-resign").disabled = !st || Boolean(st.result) || busy;
    if (!st) { // no game yet: the start face down, nothing to move
      $("#jq-pools").textContent = "";
      $("#jq-moves").replaceChildren();
      board.set({ fen: START, lastMove: null, check: null, dests: {}, movable: false, shapes: [], animate: false });
      return;
    }
    renderPools();
    renderMoves();
    const movable = humanToMove() && !busy;
    board.set({ fen: st.fen, lastMove: st.last_move, check: st.check, orientation: orientation(),
      dests: movable ? dests() : {}, movable, shapes: [], animate, onMove });
  }

  async function call(path, body) {
    const options = { method: "POST" };
    if (body) {
      options.headers = { "Content-Type": "application/json" };
      options.body = JSON.stringify(body);
    }
    return (await api(path, options)).game;
  }

  async function computer() {
    // the computer moves while it is its turn (both sides in a computer-computer game)
    while (active && st && !st.result && st[st.turn] === "engine") {
      busy = true;
      render(false);
      await new Promise((r) => setTimeout(r, ENGINE_PAUSE_MS));
      try {
        st = await call("/api/jieqi/engine");
      } finally {
        busy = false;
      }
      render();
    }
    if (st && st.result) toast(t("jq_saved"));
  }

  async function onMove(iccs) {
    if (!active || busy || !humanToMove()) return;
    busy = true;
    try {
      st = await call("/api/jieqi/move", { move: iccs, game_id: st.id });
    } catch (e) {
      toast(`${t("error")}: ${e.message}`);
    } finally {
      busy = false;
    }
    render();
    if (st.result) toast(t("jq_saved"));
    else await computer();
  }

  async function open() {
    if (!active) {
      onEnter();
      active = true;
      $("#jieqi").hidden = false;
      $("#game-panel").hidden = true;
      document.body.classList.add("jieqi");
    }
    st = (await api("/api/jieqi")).game;
    flipped = false;
    render(false);
    await computer();
  }

  /** A new game: ``{red, black}`` human/engine, ``level`` 1-3, ``capture`` capturer/both. */
  async function start({ red, black, level, capture }) {
    await call("/api/jieqi/new", { red, black, level, capture_reveal: capture });
    await open();
  }

  function close() {
    if (!active) return;
    active = false;
    $("#jieqi").hidden = true;
    $("#game-panel").hidden = false;
    document.body.classList.remove("jieqi");
    board.set({ onMove: restoreMove });
    onExit();
  }

  /** 翻转: turn the board round. */
  function flip() {
    flipped = !flipped;
    if (st) render(false);
  }

  $("#jq-resign").addEventListener("click", async () => {
    if (!st || st.result || busy) return;
    try {
      st = await call("/api/jieqi/resign");
      render();
      toast(t("jq_saved"));
    } catch (e) { toast(`${t("error")}: ${e.message}`); }
  });
  $("#jq-exit").addEventListener("click", () => close());
  $("#jq-new").addEventListener("click", () => {
    $("#sel-start").value = "jieqi";
    $("#sel-start").dispatchEvent(new Event("change"));
    $("#btn-new").click();
  });

  return { open, start, close, flip, get active() { return active; }, get state() { return st; } };
}

/** The 揭棋 level of the new-game dialog's level (入门/初级 1, 中级/自适应 2, 高级/大师 3). */
export function jieqiLevel(level) {
  return { beginner: "1", novice: "1", intermediate: "2", adaptive: "2", advanced: "3", master: "3" }[level] || "2";
}
