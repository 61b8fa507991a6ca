// The board component: renders a position as SVG and reports moves through a callback.
// It owns no game: the page calls board.set({...}) with the state to show (chessground style).
//
// Config keys (all optional in set()):
//   fen          board field or full FEN (Red upper case)
//   orientation  "red" (Red at the bottom) or "black"
//   lastMove     ICCS "h2e2" or null        check   square name of the king in check, or null
//   dests        {"h2": ["h2e2", ...]}      movable true when the user may move now
//   shapes       [{from: "h2", to: "e2", kind: "hint"}]   arrows drawn over the board
//   pieceStyle   "traditional" | "flat" | "contrast"      traditional  true for 帥/將 … characters
//   onMove(iccs) called when the user moves a piece (a click on the piece then on its point, or a
//                drag and drop with the mouse, a pen or a finger: pointer events)
//   onSelect(square|null)
//   editable     true in the position editor: clicks go to onEdit(square) instead
//
// File numbers stand on both edges: 一…九 along Red's edge (right to left as Red sees it: file i is
// 一), 1…9 along Black's edge (right to left as Black sees it: file a is 1); they flip with the board.

const NS = "http://www.w3.org/2000/svg";
const S = 100; // grid spacing in SVG units
const M = 70; // margin from the frame to the first line
const BAND = 46; // the band above and below the frame that holds the file numbers
const MY = M + BAND; // y of the first line
export const VIEW_W = M * 2 + S * 8;
export const VIEW_H = MY * 2 + S * 9;
const RED_FILES = ["一", "二", "三", "四", "五", "六", "七", "八", "九"];
const DRAG_START_PX = 6; // a press that moves this far (screen pixels) is a drag, not a click
const FILES = "abcdefghi";

const NAMES = {
  simplified: { K: "帅", A: "仕", B: "相", N: "马", R: "车", C: "炮", P: "兵", k: "将", a: "士", b: "象", n: "马", r: "车", c: "炮", p: "卒" },
  traditional: { K: "帥", A: "仕", B: "相", N: "傌", R: "俥", C: "炮", P: "兵", k: "將", a: "士", b: "象", n: "馬", r: "車", c: "砲", p: "卒" },
};

export function squareName(file, rank) {
  return FILES[file] + String(rank);
}

export function parseSquare(name) {
  return { file: FILES.indexOf(name[0]), rank: Number(name[1]) };
}

/** Pieces of a FEN board field: {"a0": "R", ...}. */
export function parseFen(fen) {
  const out = {};
  const rows = fen.split(" ")[0].split("/");
  rows.forEach((row, i) => {
    const rank = 9 - i;
    let file = 0;
    for (const ch of row) {
      if (/[0-9]/.test(ch)) file += Number(ch);
      else {
        out[squareName(file, rank)] = ch;
        file += 1;
      }
    }
  });
  return out;
}

function el(name, attrs = {}, parent = null) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

export function createBoard(container, config = {}) {
  const cfg = {
    fen: "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR",
    orientation: "red", lastMove: null, check: null, dests: {}, movable: false, shapes: [],
    traditional: false, onMove: () => {}, onSelect: () => {}, labels: { river: ["楚 河", "汉 界"] },
    editable: false, onEdit: () => {},
    ...config,
  };
  let selected = null;
  let shownPieces = {};
  let cursor = null; // keyboard cursor square, shown only after a key press
  let dropped = null; // the move just made by drag and drop: its piece is already there, no slide

  const svg = el("svg", {
    viewBox: `0 0 ${VIEW_W} ${VIEW_H}`, class: "xq-board", role: "img", "aria-label": "xiangqi board",
  });
  container.appendChild(svg);
  const defs = el("defs", {}, svg);
  const marker = el("marker", {
    id: "xq-arrowhead", viewBox: "0 0 10 10", refX: "5", refY: "5", markerWidth: "2.6", markerHeight: "2.6",
    orient: "auto-start-reverse",
  }, defs);
  el("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "xq-arrowhead" }, marker);
  const grad = el("radialGradient", { id: "xq-piece-grad", cx: "40%", cy: "35%", r: "70%" }, defs);
  el("stop", { offset: "0%", class: "xq-grad-a" }, grad);
  el("stop", { offset: "100%", class: "xq-grad-b" }, grad);

  const gBoard = el("g", { class: "xq-lines" }, svg);
  const gMarks = el("g", { class: "xq-marks" }, svg);
  const gPieces = el("g", { class: "xq-pieces" }, svg);
  const gDests = el("g", { class: "xq-dests" }, svg);
  const gShapes = el("g", { class: "xq-shapes" }, svg);
  const gHits = el("g", { class: "xq-hits" }, svg);

  function xy(sq) {
    const { file, rank } = typeof sq === "string" ? parseSquare(sq) : sq;
    if (cfg.orientation === "red") return [M + file * S, MY + (9 - rank) * S];
    return [M + (8 - file) * S, MY + rank * S];
  }

  /** The point under a screen position (client pixels), or null off the board. */
  function squareAt(clientX, clientY) {
    const ctm = svg.getScreenCTM();
    if (!ctm) return null;
    const p = new DOMPoint(clientX, clientY).matrixTransform(ctm.inverse());
    let file = Math.round((p.x - M) / S), row = Math.round((p.y - MY) / S);
    if (file < 0 || file > 8 || row < 0 || row > 9) return null;
    if (Math.abs(p.x - (M + file * S)) > S / 2 || Math.abs(p.y - (MY + row * S)) > S / 2) return null;
    if (cfg.orientation !== "red") { file = 8 - file; row = 9 - row; }
    return squareName(file, 9 - row);
  }

  function svgPoint(clientX, clientY) {
    const ctm = svg.getScreenCTM();
    return ctm ? new DOMPoint(clientX, clientY).matrixTransform(ctm.inverse()) : null;
  }

  function drawGrid() {
    gBoard.replaceChildren();
    el("rect", { x: 0, y: 0, width: VIEW_W, height: VIEW_H, rx: 16, class: "xq-wood" }, gBoard);
    el("rect", { x: 12, y: BAND + 12, width: VIEW_W - 24, height: VIEW_H - 2 * BAND - 24, rx: 6, class: "xq-frame" }, gBoard);
    el("rect", { x: M, y: MY, width: S * 8, height: S * 9, class: "xq-border" }, gBoard);
    for (let r = 0; r < 10; r++) {
      el("line", { x1: M, y1: MY + r * S, x2: M + 8 * S, y2: MY + r * S, class: "xq-line" }, gBoard);
    }
    for (let f = 0; f < 9; f++) {
      const x = M + f * S;
      if (f === 0 || f === 8) {
        el("line", { x1: x, y1: MY, x2: x, y2: MY + 9 * S, class: "xq-line" }, gBoard);
      } else {
        el("line", { x1: x, y1: MY, x2: x, y2: MY + 4 * S, class: "xq-line" }, gBoard);
        el("line", { x1: x, y1: MY + 5 * S, x2: x, y2: MY + 9 * S, class: "xq-line" }, gBoard);
      }
    }
    // File numbers: Red's along Red's edge, Black's along Black's (the edge nearer each side's pieces).
    const redBottom = cfg.orientation === "red";
    for (let f = 0; f < 9; f++) {
      const x = xy({ file: f, rank: 0 })[0];
      el("text", { x, y: redBottom ? VIEW_H - BAND / 2 : BAND / 2, class: "xq-file red", "data-file": FILES[f] },
        gBoard).textContent = RED_FILES[8 - f];
      el("text", { x, y: redBottom ? BAND / 2 : VIEW_H - BAND / 2, class: "xq-file black", "data-file": FILES[f] },
        gBoard).textContent = String(f + 1);
    }
    // Palace diagonals (orientation-independent: the palaces are symmetric).
    for (const top of [0, 7]) {
      const y0 = MY + top * S;
      el("line", { x1: M + 3 * S, y1: y0, x2: M + 5 * S, y2: y0 + 2 * S, class: "xq-line" }, gBoard);
      el("line", { x1: M + 5 * S, y1: y0, x2: M + 3 * S, y2: y0 + 2 * S, class: "xq-line" }, gBoard);
    }
    // Small marks at the cannon and pawn points.
    const points = [[1, 2], [7, 2], [1, 7], [7, 7]];
    for (const r of [3, 6]) for (const f of [0, 2, 4, 6, 8]) points.push([f, r]);
    const g = 8, l = 18;
    for (const [f, r] of points) {
      const x = M + f * S, y = MY + r * S;
      for (const dx of [-1, 1]) {
        if ((f === 0 && dx < 0) || (f === 8 && dx > 0)) continue;
        for (const dy of [-1, 1]) {
          const px = x + dx * g, py = y + dy * g;
          el("polyline", { points: `${px + dx * l},${py} ${px},${py} ${px},${py + dy * l}`, class: "xq-mark" }, gBoard);
        }
      }
    }
    const ry = MY + 4.5 * S;
    const [left, right] = cfg.labels.river;
    el("text", { x: M + 2 * S, y: ry, class: "xq-river" }, gBoard).textContent = left;
    el("text", { x: M + 6 * S, y: ry, class: "xq-river" }, gBoard).textContent = right;
    // Hit targets: one per point, on top, so a click anywhere near a point selects it.
    gHits.replaceChildren();
    for (let f = 0; f < 9; f++) {
      for (let r = 0; r < 10; r++) {
        const name = squareName(f, r);
        const [x, y] = xy({ file: f, rank: r });
        const c = el("rect", { x: x - S / 2, y: y - S / 2, width: S, height: S, class: "xq-hit", "data-sq": name }, gHits);
        c.addEventListener("click", (ev) => {
          ev.preventDefault();
          if (dragJustEnded) return; // the click that ends a drag is not a click on this point
          onSquare(name);
        });
      }
    }
  }

  function drawMarks() {
    gMarks.replaceChildren();
    if (cfg.lastMove) {
      const [fx, fy] = xy(cfg.lastMove.slice(0, 2));
      const [tx, ty] = xy(cfg.lastMove.slice(2, 4));
      el("circle", { cx: fx, cy: fy, r: 30, class: "xq-last from", "data-sq": cfg.lastMove.slice(0, 2) }, gMarks);
      el("circle", { cx: tx, cy: ty, r: 50, class: "xq-last to", "data-sq": cfg.lastMove.slice(2, 4) }, gMarks);
    }
    if (selected) {
      const [x, y] = xy(selected);
      el("circle", { cx: x, cy: y, r: 49, class: "xq-selected" }, gMarks);
    }
    if (cursor) {
      const [x, y] = xy(cursor);
      el("rect", { x: x - 50, y: y - 50, width: 100, height: 100, rx: 8, class: "xq-cursor", "data-sq": cursor }, gMarks);
    }
  }

  function pieceNode(sq, letter) {
    const red = letter === letter.toUpperCase();
    const g = el("g", { class: `xq-piece ${red ? "red" : "black"}`, "data-sq": sq, "data-piece": letter });
    el("circle", { r: 44, class: "xq-piece-body" }, g);
    el("circle", { r: 36, class: "xq-piece-ring" }, g);
    if (letter === "X" || letter === "x") { // 揭棋: a piece face down, a plain disc with a mark
      g.classList.add("face-down");
      el("circle", { r: 13, class: "xq-hidden-mark" }, g);
      return g;
    }
    const t = el("text", { class: "xq-piece-text", y: 2 }, g);
    t.textContent = (cfg.traditional ? NAMES.traditional : NAMES.simplified)[letter];
    return g;
  }

  function place(g, sq) {
    const [x, y] = xy(sq);
    g.style.transform = `translate(${x}px, ${y}px)`;
  }

  function drawPieces(animate) {
    const pieces = parseFen(cfg.fen);
    gPieces.replaceChildren();
    const lm = cfg.lastMove;
    for (const [sq, letter] of Object.entries(pieces)) {
      const g = pieceNode(sq, letter);
      if (sq === cfg.check && (letter === "K" || letter === "k")) g.classList.add("in-check");
      gPieces.appendChild(g);
      const before = shownPieces[lm ? lm.slice(0, 2) : ""];
      const revealed = before && /^[Xx]$/.test(before) && !/^[Xx]$/.test(letter) && (before === "X") === (letter === letter.toUpperCase());
      if (animate && lm && sq === lm.slice(2, 4) && revealed) g.classList.add("revealed"); // 揭棋: turned face up
      if (animate && lm && lm !== dropped && sq === lm.slice(2, 4) && (before === letter || revealed)) {
        place(g, lm.slice(0, 2));
        g.getBoundingClientRect(); // commit the start position before the transition
        g.classList.add("moving");
        requestAnimationFrame(() => place(g, sq));
        g.addEventListener("transitionend", () => g.classList.remove("moving"), { once: true });
      } else {
        place(g, sq);
      }
    }
    shownPieces = pieces;
    dropped = null;
  }

  function drawDests() {
    gDests.replaceChildren();
    // the points whose piece may move now, e.g. "b9 h9" (the tests wait for a point before clicking it:
    // a browsed position's legal moves arrive from the server after the position is shown)
    svg.dataset.movableFrom = cfg.movable && !cfg.editable
      ? Object.keys(cfg.dests).filter((sq) => (cfg.dests[sq] || []).length).sort().join(" ") : "";
    if (!selected) return;
    const pieces = shownPieces;
    for (const mv of cfg.dests[selected] || []) {
      const to = mv.slice(2, 4);
      const [x, y] = xy(to);
      if (pieces[to]) el("circle", { cx: x, cy: y, r: 46, class: "xq-dest capture", "data-sq": to }, gDests);
      else el("circle", { cx: x, cy: y, r: 14, class: "xq-dest", "data-sq": to }, gDests);
    }
  }

  // An arrow with rings on its two points: the from-ring dashed, the to-ring solid. The shaft runs
  // from the edge of the moving piece's character to just short of the to-point's centre, so even
  // a one-step move (i0→h0) shows a shaft and a head; the rings mark both points.
  function drawShapes() {
    gShapes.replaceChildren();
    for (const sh of cfg.shapes || []) {
      const [x1, y1] = xy(sh.from);
      const [x2, y2] = xy(sh.to);
      const kind = sh.kind || "";
      el("circle", { cx: x1, cy: y1, r: 50, class: `xq-shape-ring from ${kind}`, "data-sq": sh.from }, gShapes);
      el("circle", { cx: x2, cy: y2, r: 50, class: `xq-shape-ring to ${kind}`, "data-sq": sh.to }, gShapes);
      const len = Math.hypot(x2 - x1, y2 - y1) || 1;
      const ux = (x2 - x1) / len, uy = (y2 - y1) / len;
      // Start past the piece's character, stop just short of the to-point's centre.
      el("line", {
        x1: x1 + ux * 28, y1: y1 + uy * 28, x2: x2 - ux * 12, y2: y2 - uy * 12, class: `xq-arrow ${kind}`, "marker-end": "url(#xq-arrowhead)",
        "data-from": sh.from, "data-to": sh.to,
      }, gShapes);
    }
  }

  function onSquare(sq) {
    if (cfg.editable) { cfg.onEdit(sq); return; }
    if (!cfg.movable) { setSelected(null); return; }
    if (selected) {
      const mv = selected + sq;
      if ((cfg.dests[selected] || []).includes(mv)) {
        setSelected(null);
        cfg.onMove(mv);
        return;
      }
    }
    if (cfg.dests[sq] && cfg.dests[sq].length) setSelected(sq === selected ? null : sq);
    else setSelected(null);
  }

  function setSelected(sq) {
    selected = sq;
    drawMarks();
    drawDests();
    cfg.onSelect(sq);
  }

  function redraw(animate) {
    drawGrid();
    drawMarks();
    drawPieces(animate);
    drawDests();
    drawShapes();
  }

  // -- drag and drop (pointer events: mouse, pen and touch alike) --
  let press = null; // {id, sq, x, y, node, dragging}
  let dragJustEnded = false; // true from a drag's pointerup until its click (same task) has passed

  function pieceNodeAt(sq) {
    return gPieces.querySelector(`.xq-piece[data-sq="${sq}"]`);
  }

  svg.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0 || cfg.editable || !cfg.movable) return;
    const sq = squareAt(ev.clientX, ev.clientY);
    if (!sq || !(cfg.dests[sq] || []).length) return;
    press = { id: ev.pointerId, sq, x: ev.clientX, y: ev.clientY, node: pieceNodeAt(sq), dragging: false };
  });

  svg.addEventListener("pointermove", (ev) => {
    if (!press || ev.pointerId !== press.id) return;
    if (!press.dragging) {
      if (Math.hypot(ev.clientX - press.x, ev.clientY - press.y) < DRAG_START_PX) return;
      press.dragging = true;
      try { svg.setPointerCapture(ev.pointerId); } catch { /* the pointer is gone */ }
      selected = press.sq;
      drawMarks();
      drawDests();
      cfg.onSelect(press.sq);
      if (press.node) { press.node.classList.add("dragging"); gPieces.appendChild(press.node); }
      svg.classList.add("dragging");
    }
    ev.preventDefault();
    const p = svgPoint(ev.clientX, ev.clientY);
    if (p && press.node) press.node.style.transform = `translate(${p.x}px, ${p.y}px)`;
  });

  function endDrag(ev, drop) {
    if (!press || ev.pointerId !== press.id) return;
    const { sq, node, dragging } = press;
    press = null;
    if (!dragging) return; // a click: the point's click handler does the rest
    dragJustEnded = true;
    setTimeout(() => { dragJustEnded = false; }, 0);
    svg.classList.remove("dragging");
    if (node) node.classList.remove("dragging");
    const to = drop ? squareAt(ev.clientX, ev.clientY) : null;
    const mv = to ? sq + to : "";
    if (to && to !== sq && (cfg.dests[sq] || []).includes(mv)) {
      if (node) place(node, to); // stays where it was dropped until the new state arrives
      dropped = mv;
      setSelected(null);
      cfg.onMove(mv);
      return;
    }
    if (node) place(node, sq); // not a legal point: the piece goes back, still selected
  }
  svg.addEventListener("pointerup", (ev) => endDrag(ev, true));
  svg.addEventListener("pointercancel", (ev) => endDrag(ev, false));

  redraw(false);

  return {
    /** Update the board with new config values (see the header comment). */
    set(update) {
      const oldFen = cfg.fen, oldOrientation = cfg.orientation, oldTrad = cfg.traditional, oldCheck = cfg.check;
      const oldRiver = cfg.labels.river.join();
      Object.assign(cfg, update);
      if (selected && (!cfg.movable || !(cfg.dests[selected] || []).length)) selected = null;
      if (cfg.orientation !== oldOrientation || cfg.labels.river.join() !== oldRiver) {
        shownPieces = {};
        redraw(false);
      } else {
        const fenChanged = cfg.fen.split(" ")[0] !== oldFen.split(" ")[0];
        drawMarks();
        // Redraw pieces only when they change, so a state push during a move animation does not cut it.
        if (fenChanged || cfg.traditional !== oldTrad || cfg.check !== oldCheck) {
          drawPieces(fenChanged && cfg.animate !== false);
        }
        drawDests();
        drawShapes();
      }
    },
    /** Move the keyboard cursor by screen direction (dx right, dy up), starting at the bottom king's point. */
    moveCursor(dx, dy) {
      const sign = cfg.orientation === "red" ? 1 : -1;
      let { file, rank } = cursor ? parseSquare(cursor) : { file: 4, rank: cfg.orientation === "red" ? 0 : 9 };
      if (cursor) {
        file = Math.max(0, Math.min(8, file + dx * sign));
        rank = Math.max(0, Math.min(9, rank + dy * sign));
      }
      cursor = squareName(file, rank);
      drawMarks();
      return cursor;
    },
    /** Act on the cursor square as a click would (select, move, or edit). */
    activateCursor() {
      if (cursor) onSquare(cursor);
    },
    get cursor() { return cursor; },
    /** Put the pieces back on the points of the position shown (after a dropped move was not played). */
    refresh() { drawPieces(false); drawMarks(); drawDests(); },
    /** Square name currently selected, or null. */
    get selected() { return selected; },
    select(sq) { onSquare(sq); },
    svg,
  };
}
