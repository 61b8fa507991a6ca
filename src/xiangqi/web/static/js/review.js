// The review display (复盘): runs a review of a game through the review API (POST /api/review, GET
// and DELETE /api/review/{job}: progress and cancel) and shows its result on the analysis view: the
// classes ?! ? ?? on the moves of the move list in colour, the evaluation graph under the board (one
// point per ply, a click jumps there), the better move of each mistake as an arrow in the position
// where it could have been played and its line as a branch of the tree that can be stepped through
// (a review branch: never saved as the player's), and a summary card (accuracy and counts per side,
// the biggest mistake, 练习 / Learn from mistakes when the practice mode is there).

import { reviewTableNote } from "./endgame.js";
import { fill, t } from "./i18n.js";

const $ = (sel) => document.querySelector(sel);
const SVG = "http://www.w3.org/2000/svg";
const BAD = ["inaccuracy", "mistake", "blunder"];

/**
 * ``api`` the page's JSON fetch; ``analysis`` the analysis view; ``openSource(target)`` shows the
 * reviewed game in the analysis view (``{library_id}`` or ``{current: true}``) and resolves when its
 * tree is there; ``setArrow(shape|null)`` the review's arrow layer; ``moveText(node)`` a node's text.
 */
export function createReview({ api, analysis, openSource, setArrow, moveText, toast }) {
  let job = null;
  let poll = null;
  let review = null; // GameReview.to_dict()
  let target = null;
  const lines = new Map(); // ply -> the better line's nodes (from /api/analysis/line)

  function el(name, attrs = {}, parent = null) {
    const e = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (parent) parent.appendChild(e);
    return e;
  }

  /** Review ``source`` ({library_id: id} or {current: true}): progress, then the display. */
  async function start(source) {
    clearTimeout(poll);
    clear();
    target = source;
    $("#review").hidden = false;
    progress(0, 0);
    try {
      // the analyser chosen in the engine panel (an added engine, engines.js) reviews too
      const body = { ...source };
      const chosen = document.querySelector("#ep-engine");
      if (chosen && chosen.value) body.engine = chosen.value;
      const r = await api("/api/review", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
      });
      job = r.job;
      await handle(r);
    } catch (e) {
      $("#rv-progress").hidden = true;
      toast(`${t("error")}: ${e.message}`);
    }
  }

  async function handle(r) {
    document.body.dataset.reviewStatus = r.status;
    if (r.status === "done" && r.review) {
      $("#rv-progress").hidden = true;
      await show(r.review);
      return;
    }
    if (r.status === "cancelled" || r.status === "failed") {
      $("#rv-progress").hidden = true;
      if (r.status === "failed") toast(`${t("error")}: ${r.error || ""}`);
      return;
    }
    progress(r.done || 0, r.total || 0);
    poll = setTimeout(async () => {
      try { await handle(await api(`/api/review/${job}`)); } catch (e) { toast(`${t("error")}: ${e.message}`); }
    }, 400);
  }

  function progress(done, total) {
    $("#rv-progress").hidden = false;
    $("#rv-bar").max = Math.max(1, total);
    $("#rv-bar").value = done;
    $("#rv-count").textContent = total ? `${done} / ${total}` : "…";
    document.body.dataset.reviewDone = String(done);
  }

  async function cancel() {
    clearTimeout(poll);
    $("#rv-progress").hidden = true;
    document.body.dataset.reviewStatus = "cancelled";
    if (!job) return;
    try { await api(`/api/review/${job}`, { method: "DELETE" }); } catch (e) { toast(`${t("error")}: ${e.message}`); }
  }

  function clear() {
    review = null;
    lines.clear();
    setArrow(null);
    $("#rv-graph").hidden = true;
    $("#rv-graph").replaceChildren();
    $("#rv-summary").hidden = true;
    $("#rv-note").hidden = true;
    document.body.classList.remove("reviewing");
    const tr = analysis.tree;
    if (tr) for (const n of tr.nodes) delete n.mark;
  }

  async function show(rv) {
    await openSource(target);
    review = rv;
    document.body.classList.add("reviewing");
    await apply();
    graph();
    summary();
    update();
  }

  /** The main line's node ids if the tree shown is the reviewed game, else null. */
  function reviewedLine() {
    if (!review || !analysis.tree) return null;
    const main = analysis.mainLine();
    const tr = analysis.tree;
    if (main.length - 1 < review.plies.length) return null;
    for (const p of review.plies) if (tr.nodes[main[p.ply]].move !== p.move) return null;
    return main;
  }

  /** Ply ``p``'s move in the page's notation (as the move list shows it; the review's own text is
   *  Chinese), so that "最大失误 / Biggest mistake" and "better was" use one notation. */
  function plyText(p) {
    const main = reviewedLine();
    const n = main && main[p.ply] !== undefined ? analysis.tree.nodes[main[p.ply]] : null;
    return n && n.move === p.move ? moveText(n) : (p.text || p.move);
  }

  /** The marks on the moves and the better lines as branches (again after the tree was rebuilt). */
  async function apply() {
    const main = reviewedLine();
    if (!main) return;
    const tr = analysis.tree;
    for (const p of review.plies) {
      const n = tr.nodes[main[p.ply]];
      n.mark = { cls: p.class, symbol: p.symbol || "" };
    }
    for (const p of review.plies) {
      if (!BAD.includes(p.class) || !p.line || !p.line.length) continue;
      const before = tr.nodes[main[p.ply - 1]];
      if (!before.fen) continue;
      if (!lines.has(p.ply)) {
        try {
          const r = await api("/api/analysis/line", {
            method: "POST", headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ fen: before.fen, moves: p.line.slice(0, 12) }),
          });
          lines.set(p.ply, r.nodes);
        } catch {
          continue; // a line that cannot be shown is left out; the arrow still shows the move
        }
      }
      if (analysis.tree !== tr) return; // the tree changed meanwhile: the next apply() does it
      analysis.addReviewLine(main[p.ply - 1], lines.get(p.ply));
    }
    analysis.render();
  }

  function winOf(p) {
    return typeof p.win === "number" ? p.win : 0;
  }

  /** The evaluation graph: Red's win chance (-100..100) after each ply, one point per ply. */
  function graph() {
    const box = $("#rv-graph");
    box.replaceChildren();
    const plies = review.plies;
    if (!plies.length) { box.hidden = true; return; }
    box.hidden = false;
    const W = Math.max(200, box.clientWidth || 600), H = 64;
    const step = plies.length > 1 ? (W - 8) / (plies.length - 1) : 0;
    const x = (i) => 4 + i * step;
    const y = (w) => H / 2 - (w / 100) * (H / 2 - 3);
    const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "rv-svg", role: "img",
      "aria-label": t("rv_graph") });
    el("rect", { x: 0, y: 0, width: W, height: H, class: "rv-bg" }, svg);
    const pts = plies.map((p, i) => `${x(i).toFixed(1)},${y(winOf(p)).toFixed(1)}`);
    el("polygon", { points: `${x(0)},${H / 2} ${pts.join(" ")} ${x(plies.length - 1)},${H / 2}`, class: "rv-area" }, svg);
    el("line", { x1: 0, y1: H / 2, x2: W, y2: H / 2, class: "rv-mid" }, svg);
    el("polyline", { points: pts.join(" "), class: "rv-line" }, svg);
    el("line", { x1: 0, y1: 0, x2: 0, y2: H, class: "rv-cursor", id: "rv-cursor" }, svg);
    plies.forEach((p, i) => {
      const c = el("circle", { cx: x(i), cy: y(winOf(p)), r: BAD.includes(p.class) ? 3.6 : 1.8,
        class: `rv-pt ${p.class}`, "data-ply": p.ply }, svg);
      const title = el("title", {}, c);
      title.textContent = `${p.ply}. ${p.text || p.move}${p.symbol || ""}`;
    });
    svg.addEventListener("click", (ev) => {
      const r = svg.getBoundingClientRect();
      const px = ((ev.clientX - r.left) / r.width) * W;
      const i = step ? Math.round((px - 4) / step) : 0;
      jump(plies[Math.max(0, Math.min(plies.length - 1, i))].ply);
    });
    box.appendChild(svg);
    box.dataset.points = String(plies.length);
  }

  /** Show the position after ply ``ply`` of the reviewed game. */
  function jump(ply) {
    const main = reviewedLine();
    if (main) analysis.go(main[ply]);
  }

  function sideLine(side) {
    const acc = review.accuracy[side];
    const c = review.counts[side];
    return fill(t("rv_side"), {
      side: t(side), acc: acc === null || acc === undefined ? "–" : acc.toFixed(1),
      i: c.inaccuracy, m: c.mistake, b: c.blunder,
    });
  }

  function biggest() {
    const bad = review.plies.filter((p) => BAD.includes(p.class));
    if (!bad.length) return null;
    return bad.reduce((a, p) => (p.drop > a.drop ? p : a));
  }

  function summary() {
    const card = $("#rv-summary");
    card.replaceChildren();
    const h = document.createElement("h3");
    h.textContent = t("rv_title");
    card.appendChild(h);
    if (review.limit && review.limit.engine) { // reviewed by an added engine (Settings → engines)
      const by = document.createElement("p");
      by.className = "rv-engine";
      by.textContent = fill(t("rv_by_engine"), { name: review.limit.engine });
      card.appendChild(by);
    }
    for (const side of ["red", "black"]) {
      const p = document.createElement("p");
      p.className = `rv-side ${side}`;
      p.dataset.side = side;
      p.textContent = sideLine(side);
      card.appendChild(p);
    }
    const worst = biggest();
    const p = document.createElement("p");
    p.className = "rv-worst";
    if (worst) {
      const better = lines.get(worst.ply);
      const b = document.createElement("button");
      b.type = "button";
      b.className = "rv-jump";
      b.textContent = `${Math.ceil(worst.ply / 2)}. ${plyText(worst)}${worst.symbol}`;
      b.addEventListener("click", () => jump(worst.ply));
      p.append(`${t("rv_worst")} `, b);
      if (better && better.length) p.append(` ${fill(t("rv_better"), { move: moveText(better[0]) })}`);
    } else {
      p.textContent = t("rv_clean");
    }
    card.appendChild(p);
    if (window.xiangqiPractice && typeof window.xiangqiPractice.open === "function") {
      const b = document.createElement("button");
      b.type = "button";
      b.id = "rv-practice";
      b.className = "primary";
      b.textContent = t("rv_practice");
      b.addEventListener("click", () => window.xiangqiPractice.open(target.library_id ?? job));
      card.appendChild(b);
    }
    card.hidden = false;
  }

  /** After the analysis view moved: the graph's cursor, the better move's arrow, the note. */
  function update() {
    if (!review) { setArrow(null); return; }
    const main = reviewedLine();
    const note = $("#rv-note");
    if (!main) { close(); return; } // another game is shown now: the review's display goes
    const cur = analysis.current;
    const k = main.indexOf(cur); // the position after ply k (0: the start), or -1 off the main line
    const next = k >= 0 ? review.plies.find((p) => p.ply === k + 1) : null;
    if (next && BAD.includes(next.class) && next.best) {
      setArrow({ from: next.best.slice(0, 2), to: next.best.slice(2, 4), kind: "review" });
    } else {
      setArrow(null);
    }
    const here = k > 0 ? review.plies.find((p) => p.ply === k) : null;
    const table = reviewTableNote(here); // the endgame table's exact verdict (endgame.js)
    if (here && BAD.includes(here.class)) {
      const better = lines.get(here.ply);
      note.textContent = `${plyText(here)}${here.symbol} ${t(`rv_${here.class}`)}` +
        (better && better.length ? ` ${fill(t("rv_better"), { move: moveText(better[0]) })}` : "") +
        (table ? ` · ${table}` : "");
      note.dataset.cls = here.class;
      note.hidden = false;
    } else if (table) {
      note.textContent = `${plyText(here)} · ${table}`;
      note.dataset.cls = here.class;
      note.hidden = false;
    } else {
      note.hidden = true;
    }
    const cursor = document.getElementById("rv-cursor");
    const pt = k > 0 ? document.querySelector(`#rv-graph .rv-pt[data-ply='${k}']`) : null;
    if (cursor) {
      cursor.setAttribute("x1", pt ? pt.getAttribute("cx") : "-10");
      cursor.setAttribute("x2", pt ? pt.getAttribute("cx") : "-10");
    }
  }

  function close() {
    clearTimeout(poll);
    clear();
    $("#review").hidden = true;
    target = null;
  }

  $("#rv-cancel").addEventListener("click", cancel);
  $("#rv-close").addEventListener("click", () => { close(); analysis.render(); });
  window.addEventListener("resize", () => { if (review) { graph(); update(); } });

  return {
    start, cancel, close, update, apply, jump,
    get review() { return review; },
    /** The tree was rebuilt (a fetch of the game's tree): put the marks and lines back. */
    reapply() { if (review) apply().then(update); },
    /** Re-render texts after a language or notation change. */
    refresh() { if (review) { summary(); update(); } },
  };
}
