// Learn from your mistakes (练习): the reviewed side's mistakes and blunders as puzzles. A board mode
// of its own, like the position editor: it takes over the board and the panel's #practice section.
//
// open(source) with source one of {job: id, side?} (a review job of the review API), {library_id: n,
// side?, depth?} or {current: true, side?, depth?}: the review is started (or found stored) with
// POST /api/review, its progress shown until it is done, then GET /api/review/{job}/puzzles gives
// the puzzles (the position before each mistake). Each try goes to POST /api/review/{job}/try
// (accepted when it is the engine's move or loses at most study.review.TRY_TOLERANCE = 3.5 points
// of win chance); after two failed tries the answer is shown (arrow and line). side: "red",
// "black" or "both"; by default the human side of a library game or of the current game (both when
// both or neither are human). The page exposes it as window.xiangqiPractice.

import { parseFen } from "./board.js";
import { boardFen } from "./editor.js";
import { fill, t } from "./i18n.js";

const $ = (sel) => document.querySelector(sel);
/** Failed tries after which the answer is shown. */
const TRIES = 2;

export function createPractice({ board, api, onMove, onEnter, onExit, players }) {
  let job = null;
  let puzzles = [];
  let index = 0;
  let tries = 0;
  let results = []; // per puzzle: null (open), "solved", "shown"
  let busy = false;
  let opened = 0; // a counter: a late answer for a practice closed meanwhile is dropped
  let poll = null;
  let isOpen = false;
  let ownJob = false; // the review was started here (not handed over): closing while it runs cancels it

  const el = {
    section: $("#practice"), count: $("#pr-count"), task: $("#pr-task"), feedback: $("#pr-feedback"),
    line: $("#pr-line"), prev: $("#pr-prev"), next: $("#pr-next"), show: $("#pr-show"), done: $("#pr-done"),
    doneText: $("#pr-done-text"), again: $("#pr-again"), controls: $("#pr-controls"), cancel: $("#pr-cancel"),
  };

  function setMode(mode) {
    document.body.dataset.practice = mode;
  }

  function say(text, kind = "") {
    el.feedback.textContent = text;
    el.feedback.className = "pr-feedback " + kind;
  }

  /** The board field after the (legal) move ``iccs`` from the FEN ``fen``. */
  function played(fen, iccs) {
    const pieces = parseFen(fen.split(" ")[0]);
    pieces[iccs.slice(2, 4)] = pieces[iccs.slice(0, 2)];
    delete pieces[iccs.slice(0, 2)];
    return boardFen(pieces);
  }

  function arrow(iccs, kind) {
    return { from: iccs.slice(0, 2), to: iccs.slice(2, 4), kind };
  }

  /** The move number of a ply as a record counts it (the start may be Black's). */
  function roundOf(p) {
    const blackStarted = (p.ply % 2 === 1) !== (p.color === "red");
    return Math.floor((p.ply - 1 + (blackStarted ? 1 : 0)) / 2) + 1;
  }

  function showPuzzle(i) {
    index = Math.max(0, Math.min(puzzles.length - 1, i));
    const p = puzzles[index];
    tries = 0;
    busy = false;
    el.done.hidden = true;
    el.controls.hidden = false;
    el.count.textContent = fill(t("pr_count"), { i: index + 1, n: puzzles.length });
    el.task.textContent = fill(t("pr_task"), { round: roundOf(p), side: t(p.color), move: p.played.text + p.symbol });
    el.line.hidden = true;
    el.line.textContent = "";
    el.prev.disabled = index === 0;
    el.next.textContent = index === puzzles.length - 1 ? t("pr_finish") : t("pr_next");
    el.show.disabled = false;
    document.body.dataset.practicePly = String(p.ply);
    if (results[index] === "solved" || results[index] === "shown") {
      // a puzzle seen before: show where it ended
      reveal(p, results[index] === "solved" ? t("pr_solved_before") : "", false);
      return;
    }
    say(t("pr_find"));
    setMode("puzzle");
    board.set({
      fen: p.fen, orientation: p.color, lastMove: p.last_move, check: null, dests: p.dests, movable: true,
      shapes: [], animate: false, onMove: judge,
    });
  }

  /** The answer: the engine's move as an arrow and its line in words; the board still. */
  function reveal(p, text, failed = true) {
    board.set({
      fen: p.fen, orientation: p.color, lastMove: p.last_move, dests: {}, movable: false, animate: false,
      shapes: p.best ? [arrow(p.best.move, "hint")] : [], onMove: judge,
    });
    el.line.textContent = p.best ? fill(t("pr_answer"), { move: p.best.text, line: p.line.map((m) => m.text).join(" ") }) : "";
    el.line.hidden = !p.best;
    el.show.disabled = true;
    say(text, text ? (failed ? "wrong" : "right") : "");
    setMode(failed ? "shown" : "solved");
  }

  async function judge(iccs) {
    const p = puzzles[index];
    if (busy || !p || results[index]) return;
    busy = true;
    const mine = opened;
    board.set({ movable: false, dests: {}, shapes: [arrow(iccs, "hint")] });
    say(t("pr_judging"));
    setMode("judging");
    let res;
    try {
      res = await api(`/api/review/${job}/try`, {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ ply: p.ply, move: iccs }),
      });
    } catch (e) {
      if (mine !== opened) return;
      busy = false;
      say(`${t("error")}: ${e.message}`, "wrong");
      board.set({ fen: p.fen, dests: p.dests, movable: true, shapes: [] });
      setMode("puzzle");
      return;
    }
    if (mine !== opened || puzzles[index] !== p) return;
    busy = false;
    if (res.accepted) {
      results[index] = "solved";
      board.set({ fen: played(p.fen, iccs), lastMove: iccs, shapes: [], movable: false, dests: {}, animate: true });
      say(res.best ? t("pr_right_best") : t("pr_right_good"), "right");
      el.show.disabled = true;
      if (!res.best && p.best) {
        el.line.textContent = fill(t("pr_engine_had"), { move: p.best.text });
        el.line.hidden = false;
      }
      setMode("solved");
      return;
    }
    tries += 1;
    if (tries >= TRIES) {
      results[index] = "shown";
      reveal(p, t("pr_wrong_last"));
      return;
    }
    say(fill(t("pr_wrong"), { left: TRIES - tries }), "wrong");
    board.set({ fen: p.fen, lastMove: p.last_move, dests: p.dests, movable: true, shapes: [], animate: false });
    setMode("puzzle");
  }

  function finish() {
    const solved = results.filter((r) => r === "solved").length;
    el.controls.hidden = true;
    el.done.hidden = false;
    el.count.textContent = t("pr_done");
    el.task.textContent = "";
    el.line.hidden = true;
    say("");
    el.doneText.textContent = puzzles.length ? fill(t("pr_done_text"), { k: solved, n: puzzles.length }) : t("pr_none");
    el.again.hidden = puzzles.length === 0;
    board.set({ movable: false, dests: {}, shapes: [] });
    setMode("done");
  }

  /** The side to practise: the only human one of the game, else both. */
  async function sideOf(source) {
    if (source.side) return source.side;
    let kinds = null;
    try {
      if (source.library_id) {
        const g = await api(`/api/library/${source.library_id}`);
        kinds = { red: g.record.red, black: g.record.black };
      } else if (source.current && players) {
        kinds = players();
      }
    } catch {
      kinds = null;
    }
    if (!kinds) return "both";
    const humans = ["red", "black"].filter((c) => kinds[c] === "human");
    return humans.length === 1 ? humans[0] : "both";
  }

  async function waitDone(id, mine) {
    for (;;) {
      const st = await api(`/api/review/${id}`);
      if (mine !== opened) return null;
      if (st.status === "done") return st;
      if (st.status === "cancelled" || st.status === "failed") throw new Error(st.error || t("pr_cancelled"));
      say(fill(t("pr_loading"), { done: st.done, total: st.total }));
      await new Promise((r) => { poll = setTimeout(r, 400); });
      if (mine !== opened) return null;
    }
  }

  async function open(source = {}) {
    const mine = ++opened;
    if (!isOpen) onEnter();
    isOpen = true;
    el.section.hidden = false;
    $("#game-panel").hidden = true;
    el.controls.hidden = true;
    el.done.hidden = true;
    el.line.hidden = true;
    el.count.textContent = t("practice_title");
    el.task.textContent = "";
    el.cancel.hidden = false;
    say(t("pr_starting"));
    setMode("loading");
    puzzles = [];
    results = [];
    try {
      ownJob = false;
      if (source.job) {
        job = source.job;
      } else {
        const body = source.library_id ? { library_id: source.library_id } : { current: true };
        if (source.depth) body.depth = source.depth;
        const st = await api("/api/review", {
          method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
        });
        job = st.job;
        ownJob = st.status !== "done";
      }
      if (!(await waitDone(job, mine))) return;
      const side = await sideOf(source);
      const res = await api(`/api/review/${job}/puzzles?side=${encodeURIComponent(side)}`);
      if (mine !== opened) return;
      puzzles = res.puzzles;
      results = puzzles.map(() => null);
      el.cancel.hidden = true;
      if (!puzzles.length) finish();
      else showPuzzle(0);
    } catch (e) {
      if (mine !== opened) return;
      el.cancel.hidden = true;
      el.done.hidden = false;
      el.again.hidden = true;
      el.doneText.textContent = `${t("error")}: ${e.message}`;
      say("");
      setMode("error");
    }
  }

  function close() {
    if (!isOpen) return;
    isOpen = false;
    opened++;
    clearTimeout(poll);
    const running = job && ownJob && document.body.dataset.practice === "loading";
    if (running) api(`/api/review/${job}`, { method: "DELETE" }).catch(() => {});
    job = null;
    puzzles = [];
    el.section.hidden = true;
    $("#game-panel").hidden = false;
    delete document.body.dataset.practice;
    delete document.body.dataset.practicePly;
    board.set({ onMove, shapes: [] });
    onExit();
  }

  el.prev.addEventListener("click", () => showPuzzle(index - 1));
  el.next.addEventListener("click", () => { if (index >= puzzles.length - 1) finish(); else showPuzzle(index + 1); });
  el.show.addEventListener("click", () => {
    const p = puzzles[index];
    if (!p || results[index] || busy) return;
    results[index] = "shown";
    reveal(p, t("pr_shown"));
  });
  el.again.addEventListener("click", () => { results = puzzles.map(() => null); showPuzzle(0); });
  el.cancel.addEventListener("click", close);
  for (const b of document.querySelectorAll("#practice .pr-exit")) b.addEventListener("click", close);

  return {
    open, close,
    get active() { return isOpen; },
    get index() { return index; },
    get puzzles() { return puzzles; },
  };
}
