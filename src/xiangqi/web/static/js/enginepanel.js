// The engine panel: live multi-PV analysis of the position shown, over the analysis socket
// (/ws/analysis, xiangqi/web/analysis_api.py), with the evaluation bar beside the board and the best
// move as an arrow. One analysis per page: one socket, opened when the panel opens and closed when
// it closes (the server stops the search then, and when the page goes away). While the game's own
// computer searches, the server pauses the analysis (the game comes first) and the panel says so.

import { tablebaseVerdict } from "./endgame.js";
import { fill, t } from "./i18n.js";
import { socket } from "./net.js";

const $ = (sel) => document.querySelector(sel);

/** Win chance (-1..1) of Red from Red's centipawns: lichess's logistic curve
 *  (2 / (1 + exp(-0.00368208 · cp)) - 1), the scale of the bar; a mate or a win by the
 *  repetition rules (``rule``) fills it. */
export function barShare(cp, mate, rule = false) {
  if (mate !== null && mate !== undefined) return mate > 0 ? 1 : -1;
  if (rule && cp) return cp > 0 ? 1 : -1;
  if (cp === null || cp === undefined) return 0;
  return 2 / (1 + Math.exp(-0.00368208 * cp)) - 1;
}

/** A score from Red's side as text: +0.35, -1.20, M3 (Red mates in 3), -M2 (Black mates in 2);
 *  with ``rule`` (a win by the repetition rules, the server's line.rule) 红胜 / 黑胜 in place of
 *  the engine's rule score (about ±250 pawns, which is no material balance). */
export function scoreText(cp, mate, rule = false) {
  if (mate !== null && mate !== undefined) return mate > 0 ? `M${mate}` : `-M${-mate}`;
  if (rule && cp) return t(cp > 0 ? "ep_rule_red" : "ep_rule_black");
  if (cp === null || cp === undefined) return "";
  const v = (cp / 100).toFixed(2);
  return cp > 0 ? `+${v}` : v;
}

function rate(nps) {
  if (nps >= 1e6) return `${(nps / 1e6).toFixed(1)}M`;
  if (nps >= 1e3) return `${Math.round(nps / 1e3)}k`;
  return String(nps);
}

/**
 * ``notation()`` the page's move notation (chinese, wxf, iccs); ``decorate(text)`` its final form
 * (traditional characters); ``onArrow(shape|null)`` the best move's arrow for the board;
 * ``orientation()`` the board's orientation (the bar fills from Red's edge).
 */
export function createEnginePanel({ notation, decorate, onArrow, orientation }) {
  let ws = null;
  let open = false;
  let pos = null; // {fen, moves, shownFen}
  let sent = null; // the key of the position asked for
  let timer = null;
  let retry = 250;

  const key = (p) => (p ? `${p.fen}|${p.moves.join(",")}` : "");
  const board2 = (fen) => (fen ? fen.split(" ").slice(0, 2).join(" ") : "");

  function status(text) {
    const el = $("#ep-status");
    el.textContent = text || "";
    el.hidden = !text;
  }

  function connect() {
    ws = socket("/ws/analysis");
    const mine = ws;
    ws.onopen = () => { retry = 250; sent = null; ask(); };
    ws.onmessage = (ev) => { if (ws === mine) onMessage(JSON.parse(ev.data)); };
    ws.onclose = () => {
      if (ws !== mine || !open) return;
      ws = null;
      status(t("connection_lost"));
      setTimeout(() => { if (open && !ws) connect(); }, retry);
      retry = Math.min(retry * 2, 4000);
    };
  }

  function ask() {
    if (!open || !ws || ws.readyState !== 1 || !pos) return;
    const engine = $("#ep-engine") ? $("#ep-engine").value : ""; // an added engine (engines.js), or ours
    const k = `${key(pos)}|${$("#ep-multipv").value}|${engine}`;
    if (k === sent) return;
    sent = k;
    clearLines();
    status(t("ep_thinking"));
    const msg = { type: "start", fen: pos.fen, moves: pos.moves, multipv: Number($("#ep-multipv").value) };
    if (engine) msg.engine = engine;
    ws.send(JSON.stringify(msg));
  }

  function clearLines() {
    lastInfo = null;
    $("#ep-lines").replaceChildren();
    if ($("#ep-tb")) showTablebase(null);
    $("#ep-stats").textContent = "";
    onArrow(null);
    document.body.dataset.engineDepth = "0";
  }

  function onMessage(msg) {
    if (msg.type === "info") {
      if (pos && pos.shownFen && board2(msg.fen) !== board2(pos.shownFen)) return; // an older position's
      status("");
      showInfo(msg);
    } else if (msg.type === "paused") {
      status(t("ep_paused"));
    } else if (msg.type === "resumed") {
      status(t("ep_thinking"));
    } else if (msg.type === "stopped") {
      if (msg.reason === "time") status(t("ep_time"));
      else if (msg.reason === "error") status(`${t("error")}: ${msg.detail || ""}`);
    } else if (msg.type === "error") {
      status(`${t("error")}: ${msg.detail}`);
    }
  }

  function lineText(line) {
    const n = notation();
    const moves = n === "iccs" ? line.pv.slice(0, line.chinese.length).map((m) => `${m.slice(0, 2)}-${m.slice(2, 4)}`.toUpperCase())
      : n === "wxf" ? line.wxf : line.chinese.map(decorate);
    return moves.join(" ");
  }

  function showTablebase(tb) {
    let el = $("#ep-tb");
    if (!el) {
      el = document.createElement("p");
      el.id = "ep-tb";
      el.className = "ep-tb";
      $("#ep-lines").before(el);
    }
    el.textContent = tablebaseVerdict(tb, notation(), decorate);
    el.hidden = !tb;
    document.body.dataset.engineTb = tb ? tb.wdl : "";
  }

  let lastInfo = null; // the update shown, drawn again when the language or notation changes

  function showInfo(msg) {
    lastInfo = msg;
    $("#ep-stats").textContent = msg.nps ? fill(t("ep_stats"), { depth: msg.depth, nps: rate(msg.nps) })
      : fill(t("ep_depth"), { depth: msg.depth }); // an added engine reports no speed here
    showTablebase(msg.tablebase);
    const list = $("#ep-lines");
    list.replaceChildren();
    for (const line of msg.lines) {
      const li = document.createElement("li");
      li.className = "ep-line";
      li.dataset.multipv = String(line.multipv);
      const score = document.createElement("span");
      score.className = "ep-score";
      score.textContent = scoreText(line.red_cp, line.red_mate, line.rule);
      const pv = document.createElement("span");
      pv.className = "ep-pv";
      pv.textContent = lineText(line);
      li.append(score, " ", pv);
      list.appendChild(li);
    }
    const best = msg.lines[0];
    if (best && best.pv.length) {
      onArrow({ from: best.pv[0].slice(0, 2), to: best.pv[0].slice(2, 4), kind: "best" });
      bar(best.red_cp, best.red_mate, best.rule);
    }
    document.body.dataset.engineDepth = String(msg.depth);
    document.body.dataset.engineLines = String(msg.lines.length);
    document.body.dataset.engineBest = best ? best.pv[0] : "";
  }

  function bar(cp, mate, rule) {
    const el = $("#eval-bar");
    const share = barShare(cp, mate, rule);
    const red = Math.round((50 + 50 * share) * 10) / 10;
    el.hidden = false;
    el.classList.toggle("black-bottom", orientation() === "black");
    el.querySelector(".eval-fill").style.height = `${red}%`;
    el.querySelector(".eval-label").textContent = scoreText(cp, mate, rule);
    el.setAttribute("aria-valuenow", String(red));
    el.dataset.red = String(red);
    el.dataset.score = scoreText(cp, mate, rule);
  }

  function setOpen(on) {
    open = on;
    $("#engine-panel").hidden = !on;
    $("#an-engine").setAttribute("aria-pressed", on ? "true" : "false");
    document.body.dataset.engine = on ? "1" : "0";
    if (on) {
      if (!ws) connect();
      else ask();
    } else {
      clearTimeout(timer);
      if (ws) {
        const w = ws;
        ws = null;
        if (w.readyState === 1) w.send(JSON.stringify({ type: "stop" }));
        w.close();
      }
      sent = null;
      status("");
      clearLines();
      $("#eval-bar").hidden = true;
    }
  }

  $("#an-engine").addEventListener("click", () => setOpen(!open));
  $("#ep-multipv").addEventListener("change", () => ask());
  if ($("#ep-engine")) $("#ep-engine").addEventListener("change", () => ask());
  window.addEventListener("pagehide", () => { if (ws) ws.close(); });

  return {
    get open() { return open; },
    setOpen,
    /** The position to analyse: ``{fen (start), moves (ICCS to it), shownFen}``; asked for after a
     *  short pause, so that stepping quickly through a game does not restart the search at every ply. */
    setPosition(p) {
      if (key(p) === key(pos)) return;
      pos = p;
      clearTimeout(timer);
      if (open) { clearLines(); timer = setTimeout(ask, 120); }
    },
    /** The page's notation changed: nothing to do until the next update (lines carry every notation). */
    refresh() {
      $("#eval-bar").classList.toggle("black-bottom", orientation() === "black");
      if (open && lastInfo) showInfo(lastInfo);
    },
  };
}
