// Record browser: a game record opened from a file or pasted text (PGN, XQF, DhtmlXQ/UBB, EPD/FEN),
// shown beside the board with its variations and comments. Browsing is local to the page: the
// current (autosaved) game changes only when the player chooses "play on from here".

import { eventName, language, playerName, t } from "./i18n.js";
import { message } from "./messages.js";
import { request } from "./net.js";
import { keepInView } from "./scroll.js";

const $ = (sel) => document.querySelector(sel);

export function createRecordBrowser({ board, api, toast, notation, onEnter, onExit, onPlay }) {
  let rec = null; // the server's record view: {nodes, headers, comment, count, index, games, …}
  let bytes = null; // the opened file's bytes (kept to switch games in a multi-game file and to save)
  let name = "";
  let line = []; // node ids from the start position to the end of the line shown
  let pos = 0; // index into line of the node on the board
  let back = []; // saved {line, pos} to return to after choosing a variation

  const node = (id) => rec.nodes[id];

  /** Node ids from the start to ``id``, then on along the main continuation to the line's end. */
  function lineThrough(id) {
    const out = [];
    for (let n = id; n !== null; n = node(n).parent) out.unshift(n);
    let n = id;
    while (node(n).children.length) { n = node(n).children[0]; out.push(n); }
    return out;
  }

  function moveText(n) {
    return n.text[notation()] || n.text.chinese;
  }

  /** Open ``data`` (ArrayBuffer/Uint8Array of a file, or text) named ``fileName`` ("" for pasted text):
   *  game ``index`` when one is chosen, else (a file just opened) the first game that can be shown. */
  async function open(data, fileName = "", index = null) {
    const body = typeof data === "string" ? new TextEncoder().encode(data) : new Uint8Array(data);
    const params = new URLSearchParams({ name: fileName, index: String(index ?? 0),
      first_readable: index === null ? "true" : "false" });
    const view = await api(`/api/record/open?${params}`, { method: "POST", body });
    bytes = body;
    name = fileName;
    rec = view;
    back = [];
    line = lineThrough(0);
    onEnter();
    $("#record").hidden = false;
    $("#game-panel").hidden = true;
    showHeader();
    renderMoves();
    go(0);
  }

  function showHeader() {
    const h = rec.headers;
    // Event · Red – Black, with this program's older English player names translated.
    const players = [h.Red, h.Black].filter(Boolean).map(playerName).join(" – ");
    const title = [eventName(h.Event), players].filter(Boolean).join(" · ");
    $("#rc-title").textContent = title || rec.title;
    const meta = [h.Date, h.Site, h.Result && h.Result !== "*" ? h.Result : ""].filter(Boolean).join(" · ");
    $("#rc-meta").textContent = meta;
    const sel = $("#rc-game");
    sel.hidden = rec.count < 2;
    sel.replaceChildren();
    rec.games.forEach((title, i) => {
      const o = document.createElement("option");
      o.value = String(i);
      o.textContent = `${i + 1}. ${title}`;
      sel.appendChild(o);
    });
    sel.value = String(rec.index);
    const gc = $("#rc-game-comment");
    gc.textContent = rec.comment;
    gc.hidden = !rec.comment;
    const errs = $("#rc-errors");
    const sep = language() === "zh" ? "；" : "; ";
    const problems = [...(rec.skipped || []), ...rec.errors]; // games not shown, then this game's own
    errs.textContent = problems.length
      ? `${t("record_problems")} ${problems.slice(0, 3).map(message).join(sep)}` : "";
    errs.hidden = !problems.length;
    // Only a record with variations gets a summary: 含 5 处变着 / 5 variations.
    const summary = $("#rc-summary");
    summary.textContent = rec.branches > 0 ? t(rec.branches === 1 ? "rc_variations_one" : "rc_variations")
      .replace("{n}", String(rec.branches)) : "";
    summary.hidden = rec.branches === 0;
    document.body.dataset.recordLines = String(rec.lines);
  }

  /** The move list of the current line; moves that have alternatives are marked. */
  function renderMoves() {
    const list = $("#rc-moves");
    list.replaceChildren();
    const start = node(line[0]);
    const blackFirst = start.fen.split(" ")[1] === "b";
    const firstNumber = Number(start.fen.split(" ")[5] || 1);
    const cells = blackFirst ? [null, ...line.slice(1)] : line.slice(1);
    for (let i = 0; i < cells.length; i += 2) {
      const li = document.createElement("li");
      li.value = firstNumber + i / 2;
      for (const k of [i, i + 1]) {
        if (k >= cells.length) break;
        if (k > i) li.appendChild(document.createTextNode(" "));
        const span = document.createElement("span");
        span.className = "mv";
        const id = cells[k];
        if (id === null) {
          span.textContent = "…";
          span.classList.add("skip");
        } else {
          const n = node(id);
          span.textContent = moveText(n);
          span.dataset.node = String(id);
          const idx = line.indexOf(id);
          span.dataset.pos = String(idx);
          const siblings = node(n.parent).children.length;
          if (siblings > 1) { span.classList.add("has-var"); span.title = `${siblings} ${t("rc_choices")}`; }
          if (n.comment) span.classList.add("has-comment");
          span.addEventListener("click", () => go(idx));
        }
        li.appendChild(span);
      }
      list.appendChild(li);
    }
    if (!cells.length) {
      const li = document.createElement("li");
      li.className = "empty";
      li.textContent = t("no_moves");
      list.appendChild(li);
    }
  }

  /** Show the position at ``line[i]``: board, move highlight, comment and the next move's choices. */
  function go(i) {
    if (!rec) return;
    pos = Math.max(0, Math.min(line.length - 1, i));
    const n = node(line[pos]);
    board.set({ fen: n.fen, lastMove: n.move, check: null, dests: {}, movable: false, shapes: [], animate: true });
    $("#rc-ply").textContent = `${pos} / ${line.length - 1}`;
    for (const s of document.querySelectorAll("#rc-moves .mv")) s.classList.toggle("current", Number(s.dataset.pos) === pos && pos > 0);
    const cur = document.querySelector("#rc-moves .mv.current");
    keepInView($("#rc-moves"), cur);
    const comment = pos === 0 ? "" : n.comment;
    $("#rc-comment").textContent = comment;
    $("#rc-comment").hidden = !comment;
    renderBranches(n);
    $("#rc-back").hidden = back.length === 0;
    document.body.dataset.recordNode = String(n.id);
    document.body.dataset.recordPly = String(pos);
  }

  function renderBranches(n) {
    const box = $("#rc-branches");
    const list = $("#rc-branch-list");
    list.replaceChildren();
    box.hidden = n.children.length < 2;
    if (n.children.length < 2) return;
    const chosen = line[pos + 1];
    n.children.forEach((cid, k) => {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.className = "branch";
      b.dataset.node = String(cid);
      b.textContent = `${k === 0 ? t("rc_main") : `${t("rc_variation")} ${k}`}: ${moveText(node(cid))}`;
      b.classList.toggle("chosen", cid === chosen);
      b.setAttribute("aria-pressed", cid === chosen ? "true" : "false");
      b.addEventListener("click", () => choose(cid));
      li.appendChild(b);
      list.appendChild(li);
    });
  }

  /** Follow the variation starting with node ``cid`` (a child of the node on the board). */
  function choose(cid) {
    if (line[pos + 1] === cid) { go(pos + 1); return; }
    back.push({ line, pos });
    line = lineThrough(cid);
    renderMoves();
    go(pos + 1);
  }

  function goBack() {
    const prev = back.pop();
    if (!prev) return;
    line = prev.line;
    renderMoves();
    go(prev.pos);
  }

  function close() {
    rec = null;
    bytes = null;
    $("#record").hidden = true;
    $("#game-panel").hidden = false;
    delete document.body.dataset.recordNode;
    delete document.body.dataset.recordPly;
    onExit();
  }

  /** Save the opened record (every variation and comment) as PGN in ``notationKey`` or as XQF. */
  async function save(fmt, notationKey) {
    const params = new URLSearchParams({ name, index: String(rec.index), fmt, notation: notationKey });
    const res = await request(`/api/record/export?${params}`, { method: "POST", body: bytes });
    if (!res.ok) {
      let detail = await res.text();
      try { detail = JSON.parse(detail).detail; } catch { /* plain text */ }
      throw new Error(message(detail));
    }
    const stem = (name || "record").replace(/\.[^.]*$/, "");
    const { saveResponse } = await import("./exportnotes.js"); // XQF: what it could not keep is shown after
    await saveResponse(res, `${stem}.${fmt}`);
  }

  function playHere(mode) {
    const moves = line.slice(1, pos + 1).map((id) => node(id).move);
    const h = rec.headers;
    return onPlay({ fen: node(line[0]).fen, moves, mode, headers: { Event: h.Event || "", Red: h.Red || "", Black: h.Black || "" } });
  }

  $("#rc-first").addEventListener("click", () => go(0));
  $("#rc-prev").addEventListener("click", () => go(pos - 1));
  $("#rc-next").addEventListener("click", () => go(pos + 1));
  $("#rc-last").addEventListener("click", () => go(line.length - 1));
  $("#rc-back").addEventListener("click", goBack);
  $("#rc-exit").addEventListener("click", close);
  $("#rc-play").addEventListener("click", () => playHere($("#rc-mode").value));
  $("#rc-game").addEventListener("change", (e) => {
    open(bytes, name, Number(e.target.value)).catch((err) => {
      e.target.value = String(rec.index); // a game that cannot be shown (its start is unreadable): stay
      toast(`${t("error")}: ${err.message}`);
    });
  });

  return {
    open, close, go, choose, goBack, save,
    /** Play on from the node shown (``mode``: red, black, two, analysis); resolves when the game is set up. */
    playOn: (mode) => playHere(mode),
    /** The line shown: ``{start: FEN, moves: [ICCS to the node on the board]}``, or null. */
    position() { return rec ? { start: node(line[0]).fen, moves: line.slice(1, pos + 1).map((id) => node(id).move) } : null; },
    /** Step to the next node when its move (or a variation's) is ``iccs``; false when the record has none. */
    follow(iccs) {
      if (!rec) return false;
      const cid = node(line[pos]).children.find((c) => node(c).move === iccs);
      if (cid === undefined) return false;
      choose(cid);
      return true;
    },
    get active() { return rec !== null; },
    /** The record's tree, the node shown and the file name, for the analysis view (or null). */
    snapshot() { return rec ? { view: rec, node: line[pos], name } : null; },
    /** The record's player names ``{red, black}`` (from its Red/Black headers). */
    players() { return rec ? { red: rec.headers.Red || "", black: rec.headers.Black || "" } : null; },
    /** Re-render the header and the move texts after the notation or language setting changed. */
    refresh() { if (rec) { showHeader(); renderMoves(); go(pos); } },
    /** Arrow keys step through the record; returns true when the key was used. */
    key(ev) {
      if (!rec) return false;
      const map = { ArrowLeft: pos - 1, ArrowRight: pos + 1, Home: 0, End: line.length - 1 };
      if (ev.key === "Backspace" && back.length) { goBack(); return true; }
      if (!(ev.key in map)) return false;
      go(map[ev.key]);
      return true;
    },
  };
}
