// Position editor (摆谱): put pieces on the board and take them off, choose the side to move,
// copy or paste FEN; the server validates every change (POST /api/position/validate).

import { parseFen } from "./board.js";
import { t } from "./i18n.js";
import { problemText } from "./messages.js";

const PALETTE = ["K", "A", "B", "N", "R", "C", "P", "k", "a", "b", "n", "r", "c", "p", ""];
const CHARS = { K: "帅", A: "仕", B: "相", N: "马", R: "车", C: "炮", P: "兵", k: "将", a: "士", b: "象", n: "马", r: "车", c: "炮", p: "卒" };
const INITIAL = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR";

const $ = (sel) => document.querySelector(sel);

/** Board field of a FEN from a {square: letter} map. */
export function boardFen(pieces) {
  const rows = [];
  for (let rank = 9; rank >= 0; rank--) {
    let row = "", empty = 0;
    for (let file = 0; file < 9; file++) {
      const p = pieces["abcdefghi"[file] + rank];
      if (!p) { empty++; continue; }
      if (empty) { row += empty; empty = 0; }
      row += p;
    }
    if (empty) row += empty;
    rows.push(row);
  }
  return rows.join("/");
}

export function createEditor({ board, api, onPlay, onExit, toast }) {
  let pieces = {};
  let turn = "w";
  let tool = "R";
  let valid = false;
  let seq = 0;

  const palette = $("#palette");
  for (const p of PALETTE) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "pal " + (p === "" ? "eraser" : p === p.toUpperCase() ? "red" : "black");
    b.dataset.piece = p;
    b.textContent = p === "" ? "✕" : CHARS[p];
    b.title = p === "" ? t("eraser") : p;
    b.addEventListener("click", () => selectTool(p));
    palette.appendChild(b);
  }

  function selectTool(p) {
    tool = p;
    for (const b of palette.children) b.setAttribute("aria-pressed", String(b.dataset.piece === p));
  }

  function fen() {
    return `${boardFen(pieces)} ${turn} - - 0 1`;
  }

  function show() {
    board.set({ fen: boardFen(pieces), lastMove: null, check: null, dests: {}, movable: false, shapes: [], animate: false });
    $("#ed-fen").value = fen();
    $("#ed-turn").value = turn;
    validate();
  }

  async function validate() {
    const mine = ++seq;
    const list = $("#ed-problems");
    let res;
    try {
      res = await api("/api/position/validate", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ fen: fen() }),
      });
    } catch (e) {
      res = { ok: false, problems: [{ zh: e.message, en: e.message }] };
    }
    if (mine !== seq) return;
    valid = res.ok;
    list.replaceChildren();
    list.classList.toggle("ok", res.ok);
    if (res.ok) {
      const li = document.createElement("li");
      li.textContent = t("position_ok");
      list.appendChild(li);
    }
    for (const p of res.problems) {
      const li = document.createElement("li");
      li.textContent = problemText(p);
      if (p.square) li.dataset.sq = p.square;
      list.appendChild(li);
    }
    $("#ed-play").disabled = !res.ok;
    document.body.dataset.editorValid = res.ok ? "1" : "0";
  }

  function onEdit(sq) {
    if (tool === "" || pieces[sq] === tool) delete pieces[sq];
    else pieces[sq] = tool;
    show();
  }

  $("#ed-turn").addEventListener("change", (e) => { turn = e.target.value; show(); });
  $("#ed-clear").addEventListener("click", () => { pieces = {}; show(); });
  $("#ed-initial").addEventListener("click", () => { pieces = parseFen(INITIAL); turn = "w"; show(); });
  $("#ed-copy").addEventListener("click", async () => {
    const text = $("#ed-fen").value;
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      $("#ed-fen").select();
      document.execCommand("copy");
    }
    toast(t("copied"));
  });
  $("#ed-load").addEventListener("click", () => load($("#ed-fen").value));
  $("#ed-fen").addEventListener("keydown", (e) => { if (e.key === "Enter") load(e.target.value); });
  $("#ed-play").addEventListener("click", () => { if (valid) onPlay(fen(), $("#ed-mode").value); });
  $("#ed-exit").addEventListener("click", () => close());

  function load(text) {
    const parts = text.trim().split(/\s+/);
    if (!parts[0]) return;
    const rows = parts[0].split("/");
    if (rows.length !== 10) {
      // Let the server explain what is wrong with it.
      pieces = {};
      $("#ed-fen").value = text;
      seq++;
      api("/api/position/validate", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ fen: text }),
      }).then((res) => {
        const list = $("#ed-problems");
        list.replaceChildren();
        for (const p of res.problems) {
          const li = document.createElement("li");
          li.textContent = problemText(p);
          list.appendChild(li);
        }
        $("#ed-play").disabled = true;
        document.body.dataset.editorValid = "0";
      });
      return;
    }
    pieces = parseFen(parts[0].replace(/[hH]/g, (c) => (c === "h" ? "n" : "N")).replace(/[eE]/g, (c) => (c === "e" ? "b" : "B")));
    turn = parts[1] && parts[1].toLowerCase() === "b" ? "b" : "w";
    show();
  }

  function open(startFen) {
    document.body.classList.add("editing");
    $("#editor").hidden = false;
    $("#game-panel").hidden = true;
    board.set({ editable: true, onEdit });
    selectTool(tool);
    load(startFen);
  }

  function close() {
    document.body.classList.remove("editing");
    $("#editor").hidden = true;
    $("#game-panel").hidden = false;
    board.set({ editable: false });
    onExit();
  }

  /** The check's texts again in the page's language (app.js calls it after a settings change). */
  function refresh() {
    if (document.body.classList.contains("editing")) validate();
  }

  return { open, close, fen, refresh, get valid() { return valid; } };
}
