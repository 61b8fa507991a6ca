// The analysis board: one view of a game tree (moves with variations and comments) in the game
// panel's move list, for the live game, a finished or library game and an opened record.
//
// The live game is never changed here. While the view follows the live game (its last move is
// the one shown) the page shows the game as the server sends it; a click on an earlier move, the
// arrow keys or the buttons show another position ("browsing"), and a move made on the board then
// goes into the tree as a branch, never into the game. 回到对局 / Back to the game returns.
//
// Trees: the server sends them in the record browser's shape (xiangqi.app.library.records.record_view:
// nodes with id, parent, children (main continuation first), move, text {chinese, wxf, iccs},
// comment, fen). The player's own branches of a game are saved with the game at once (PUT
// /api/analysis/tree/current or /library/{id}, stored as PGN variations); an opened record's stay
// in the page and go into its export. The game as played stays the main line of a game's tree;
// a record's tree is the player's to reorder.
//
// Nodes added by the review (the better line of a mistake) carry ``review: true``: they are shown
// and can be stepped through, but they are not the player's and are never saved.

import { t } from "./i18n.js";
import { keepInView } from "./scroll.js";

const $ = (sel) => document.querySelector(sel);

/**
 * The analysis view. ``board`` the board component; ``api(path, options)`` the page's JSON fetch;
 * ``moveText(node)`` a node's move in the page's notation (its ``text`` holds chinese/wxf/iccs);
 * ``onChange()`` after the shown position or the browsing state changed (the page updates its
 * actions and the engine panel); ``shapes()`` the arrows of the other layers (engine, review) for
 * the position shown; ``toast(text)`` a short message; ``onTree()`` after the game's tree was fetched
 * again (the review puts its marks back).
 */
export function createAnalysis({ board, api, moveText, onChange, shapes, toast, onTree = () => {},
  onRendered = () => {} }) {
  let tree = null; // {nodes, source: "current"|"library"|"record", gameId, libraryId, title, headers, played}
  let cur = 0; // the node shown
  let following = true; // the current game's view shows its last move (the page shows the live game)
  let live = null; // the live game's last state
  let fetching = null; // the pending fetch of the current game's tree (a promise)
  let fetchSeq = 0;
  let saveChain = Promise.resolve();
  const positions = new Map(); // fen -> {legal, check}: what the board needs to let the player move
  let orientation = "red";

  const node = (id) => tree.nodes[id];

  /** Node ids of the line from the start following the main continuations. */
  function mainLine() {
    const out = [0];
    while (node(out[out.length - 1]).children.length) out.push(node(out[out.length - 1]).children[0]);
    return out;
  }

  /** Ids from the start to ``id``. */
  function pathTo(id) {
    const out = [];
    for (let n = id; n !== null && n !== undefined; n = node(n).parent) out.unshift(n);
    return out;
  }

  /** True when ``id`` is one of the game's own moves (a game's played line: never removed or demoted). */
  function played(id) {
    if (!tree || tree.source === "record" || id === 0) return false;
    const p = pathTo(id);
    return p.length - 1 <= tree.played && p.every((n, i) => i === 0 || node(p[i - 1]).children[0] === n);
  }

  // -- the live game ------------------------------------------------------------------

  /** A tree of the live state's main line only (texts from the state; fens unknown but the last),
   *  shown at once while the full tree (with the saved branches) is fetched. */
  function provisional(st) {
    const nodes = [{ id: 0, parent: null, children: [], move: null, text: {}, comment: "", fen: st.start_fen }];
    st.moves.forEach((m, i) => {
      nodes[i].children.push(i + 1);
      nodes.push({
        id: i + 1, parent: i, children: [], move: m.iccs, comment: "",
        text: { chinese: m.chinese, wxf: m.wxf, iccs: `${m.iccs.slice(0, 2)}-${m.iccs.slice(2, 4)}`.toUpperCase() },
        fen: i === st.moves.length - 1 ? st.fen : null,
      });
    });
    return { nodes, source: "current", gameId: st.id, title: "", headers: {}, played: st.moves.length };
  }

  function sameLine(st) {
    if (!tree || tree.source !== "current" || tree.gameId !== st.id) return false;
    const main = mainLine().slice(1);
    return main.length >= st.moves.length && tree.played === st.moves.length
      && st.moves.every((m, i) => node(main[i]).move === m.iccs);
  }

  /** Follow the live game's state ``st`` (called on every state): its moves are the main line. */
  function syncLive(st) {
    live = st;
    if (tree && tree.source !== "current") return; // another game is shown; the live one waits
    if (!sameLine(st) && !extend(st)) {
      const keep = tree && tree.gameId === st.id && !following ? pathMoves(cur) : null;
      tree = provisional(st);
      cur = following || !keep ? tree.nodes.length - 1 : cur;
      if (keep) cur = findPath(keep) ?? tree.nodes.length - 1;
      fetchCurrent(keep);
    }
    if (following) cur = mainLine()[tree.played];
    render();
  }

  /** The game went on by one move (the usual case): add it to the tree here, without asking the
   *  server (a branch the player had tried with that move becomes the main line). False when the
   *  change is anything else (an undo, several moves, another game): then the tree is fetched. */
  function extend(st) {
    if (!tree || tree.source !== "current" || tree.gameId !== st.id || st.moves.length !== tree.played + 1) return false;
    const main = mainLine();
    if (!st.moves.slice(0, tree.played).every((m, i) => node(main[i + 1]).move === m.iccs)) return false;
    const at = main[tree.played];
    const m = st.moves[tree.played];
    const kids = node(at).children;
    let id = kids.find((c) => node(c).move === m.iccs);
    if (id === undefined) {
      id = tree.nodes.length;
      tree.nodes.push({
        id, parent: at, children: [], move: m.iccs, comment: "", fen: st.fen,
        text: { chinese: m.chinese, wxf: m.wxf, iccs: `${m.iccs.slice(0, 2)}-${m.iccs.slice(2, 4)}`.toUpperCase() },
      });
      kids.push(id);
    }
    kids.splice(kids.indexOf(id), 1);
    kids.unshift(id);
    node(id).fen = node(id).fen || st.fen;
    delete node(id).review;
    tree.played += 1;
    return true;
  }

  function pathMoves(id) {
    return pathTo(id).slice(1).map((n) => node(n).move);
  }

  /** The node reached by ``moves`` from the start, or null. */
  function findPath(moves) {
    let id = 0;
    for (const mv of moves) {
      const next = node(id).children.find((c) => node(c).move === mv);
      if (next === undefined) return null;
      id = next;
    }
    return id;
  }

  /** True when the fetched tree ``view``'s main line starts with the moves of the live state ``st``
   *  (a tree fetched before the computer's last move arrived has fewer: it is stale). */
  function viewHasMoves(view, st) {
    let id = 0;
    for (const m of st.moves) {
      const next = view.nodes[id] && view.nodes[id].children[0];
      if (next === undefined || !view.nodes[next] || view.nodes[next].move !== m.iccs) return false;
      id = next;
    }
    return true;
  }

  function fetchCurrent(keep, tries = 0) {
    const seq = ++fetchSeq;
    fetching = saveChain.then(() => api("/api/analysis/tree/current")).then((view) => {
      if (seq !== fetchSeq || !tree || tree.source !== "current" || !live || view.game_id !== live.id) return undefined;
      // The game went on while the tree was on its way (a new game as Black: the computer's first
      // move came first): ask again; the provisional tree stays meanwhile.
      if (!viewHasMoves(view, live)) return tries < 3 ? fetchCurrent(keep, tries + 1) : undefined;
      const reviewNodes = keepReview();
      setTree(view, "current");
      tree.played = live.moves.length;
      restoreReview(reviewNodes);
      cur = following ? mainLine()[tree.played] : findPath(keep || []) ?? mainLine()[tree.played];
      render();
      if (!following) show();
      onTree();
      return undefined;
    }).catch((e) => toast(`${t("error")}: ${e.message}`)).finally(() => { if (seq === fetchSeq) fetching = null; });
    return fetching;
  }

  function setTree(view, source) {
    tree = {
      nodes: view.nodes.map((n) => ({ ...n, children: [...n.children] })), source,
      gameId: view.game_id || null, libraryId: view.library_id || null, title: view.title || "",
      headers: view.headers || {}, played: 0, name: view.name || "",
    };
    if (source !== "record") tree.played = mainLine().length - 1;
  }

  // -- opening other trees ------------------------------------------------------------

  /** Show the tree ``view`` (a record_view) of a library game (``source`` "library") or an opened
   *  record ("record"), at node ``at``. */
  function openTree(view, source, at = 0) {
    setTree(view, source);
    following = false;
    cur = Math.max(0, Math.min(tree.nodes.length - 1, at));
    render();
    show();
    onChange();
  }

  /** Back to the live game: its tree, its last move, the board following the game again. */
  function backToGame() {
    const wasOther = tree && tree.source !== "current";
    following = true;
    if (wasOther || !tree) {
      tree = null;
      if (live) syncLive(live);
    } else {
      cur = mainLine()[tree.played];
      render();
    }
    onChange();
  }

  // -- moving around -------------------------------------------------------------------

  /** Show node ``id`` (for the current game: its last move follows the game again). */
  function go(id) {
    if (!tree || id === null || id === undefined || id < 0 || id >= tree.nodes.length) return;
    cur = id;
    following = tree.source === "current" && id === mainLine()[tree.played];
    markCurrent();
    if (!following) show();
    onChange();
  }

  function step(delta) {
    if (!tree) return;
    if (delta < 0) { if (node(cur).parent !== null) go(node(cur).parent); return; }
    if (node(cur).children.length) go(node(cur).children[0]);
  }

  /** The last node of the line through the node shown. */
  function lineEnd() {
    let id = cur;
    while (node(id).children.length) id = node(id).children[0];
    return id;
  }

  async function positionOf(fen) {
    if (!positions.has(fen)) {
      const p = await api("/api/analysis/position", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ fen }),
      });
      if (positions.size > 500) positions.clear();
      positions.set(fen, p);
    }
    return positions.get(fen);
  }

  /** Put the node shown on the board (browsing only): its position, last move and, for a move on
   *  the board, its legal moves. */
  async function show() {
    if (!tree || following) return;
    let n = node(cur);
    if (!n.fen && fetching) { await fetching; n = node(cur); }
    if (!n.fen) return;
    const id = cur;
    board.set({ fen: n.fen, orientation, lastMove: n.move, check: null, dests: {}, movable: false,
      shapes: shapes(), animate: true });
    try {
      const p = await positionOf(n.fen);
      if (id !== cur || following || !tree) return;
      board.set({ check: p.check, dests: p.legal, movable: Object.keys(p.legal).length > 0 });
    } catch (e) {
      toast(`${t("error")}: ${e.message}`);
    }
  }

  // -- the player's branches ---------------------------------------------------------------

  /** A move made on the board while browsing: follow it when the tree has it, else add a branch. */
  async function play(iccs) {
    if (!tree) return;
    const at = cur;
    const known = node(at).children.find((c) => node(c).move === iccs);
    if (known !== undefined) { go(known); return; }
    const n = node(at);
    try {
      const res = await api("/api/analysis/play", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ fen: n.fen, move: iccs }),
      });
      if (!tree || !tree.nodes[at] || tree.nodes[at] !== n) return;
      const id = tree.nodes.length;
      tree.nodes.push({ id, parent: at, children: [], move: res.move, text: res.text, comment: "", fen: res.fen, ply: (n.ply || 0) + 1 });
      n.children.push(id);
      // a move played inside a review line makes that line the player's (saved from now on)
      for (let k = at; k !== null && node(k).review; k = node(k).parent) delete node(k).review;
      render();
      go(id);
      save();
    } catch (e) {
      toast(`${t("error")}: ${e.message}`);
      board.refresh();
    }
  }

  /** Make the branch through node ``id`` the main line from its first differing point on (a game's
   *  played move stays first: the branch becomes the first alternative). */
  function promote(id = cur) {
    if (!tree || tree.nodes[id].review) return;
    let changed = false;
    for (let n = id; node(n).parent !== null; n = node(n).parent) {
      const p = node(node(n).parent);
      const i = p.children.indexOf(n);
      const first = played(p.children[0]) ? 1 : 0;
      if (i > first) { p.children.splice(i, 1); p.children.splice(first, 0, n); changed = true; }
    }
    if (changed) { render(); save(); onChange(); }
  }

  /** Delete node ``id`` and everything after it (not a game's own move). */
  function remove(id = cur) {
    if (!tree || id === 0 || played(id)) return;
    const parent = node(id).parent;
    const drop = new Set();
    const stack = [id];
    while (stack.length) { const n = stack.pop(); drop.add(n); stack.push(...node(n).children); }
    node(parent).children = node(parent).children.filter((c) => c !== id);
    renumber(drop);
    cur = tree.nodes.findIndex((n) => n.oldId === parent);
    for (const n of tree.nodes) delete n.oldId;
    render();
    following = false;
    go(cur);
    save();
  }

  /** Drop the nodes in ``drop`` and renumber the rest (ids are list indices); ``oldId`` keeps the old id. */
  function renumber(drop) {
    const map = new Map();
    const kept = tree.nodes.filter((n) => !drop.has(n.id));
    kept.forEach((n, i) => map.set(n.id, i));
    for (const n of kept) {
      n.oldId = n.id;
      n.id = map.get(n.id);
      n.parent = n.parent === null ? null : map.get(n.parent);
      n.children = n.children.filter((c) => map.has(c)).map((c) => map.get(c));
    }
    tree.nodes = kept;
  }

  function setComment(text, id = cur) {
    if (!tree || tree.nodes[id].review) return;
    const n = node(id);
    if ((n.comment || "") === text) return;
    n.comment = text;
    render();
    save();
  }

  /** The tree as the server takes it: nodes in an order where parents come first and siblings keep
   *  their order; the review's nodes left out. */
  function flatten() {
    const out = [];
    const index = new Map();
    const walk = [0];
    while (walk.length) {
      const id = walk.pop();
      const n = node(id);
      if (n.review) continue;
      index.set(id, out.length);
      out.push({ parent: n.parent === null ? null : index.get(n.parent), move: n.move, comment: n.comment || "" });
      for (let k = n.children.length - 1; k >= 0; k--) walk.push(n.children[k]);
    }
    return { start_fen: node(0).fen, nodes: out };
  }

  /** Save a game's tree with the game (an opened record's stays in the page until exported). */
  function save() {
    if (!tree || tree.source === "record") return Promise.resolve();
    const path = tree.source === "current" ? "/api/analysis/tree/current" : `/api/analysis/tree/library/${tree.libraryId}`;
    const body = JSON.stringify(flatten());
    saveChain = saveChain.then(() => api(path, { method: "PUT", headers: { "Content-Type": "application/json" }, body }))
      .then((r) => { document.body.dataset.treeSaved = String(r.variations); })
      .catch((e) => toast(`${t("error")}: ${e.message}`));
    return saveChain;
  }

  /** Number of alternatives in the tree (the player's, not the review's). */
  function variations() {
    if (!tree) return 0;
    return tree.nodes.reduce((k, n) => k + Math.max(0, n.children.filter((c) => !node(c).review).length - 1), 0);
  }

  /** Download the tree (with its variations and comments) as ``fmt`` (pgn/xqf) in ``notationKey``. */
  async function exportFile(fmt, notationKey) {
    const { request } = await import("./net.js");
    const headers = Object.fromEntries(Object.entries(tree.headers || {}).filter(([k, v]) => k !== "FEN" && typeof v === "string"));
    const res = await request("/api/analysis/export", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ ...flatten(), headers, fmt, notation: notationKey }),
    });
    if (!res.ok) throw new Error((await res.json()).detail);
    const { saveResponse } = await import("./exportnotes.js"); // XQF: what it could not keep is shown after
    await saveResponse(res, `${(tree.name || "analysis").replace(/\.[^.]*$/, "")}.${fmt}`);
  }

  // -- review nodes (the better lines of a review) ---------------------------------------

  /** Add ``line`` (ICCS moves with their texts and fens: [{move, text, fen}]) as a branch of node
   *  ``at``, marked as the review's; returns the first new node's id (or the existing one). */
  function addReviewLine(at, line) {
    let id = at;
    let first = null;
    for (const step of line) {
      const have = node(id).children.find((c) => node(c).move === step.move);
      if (have !== undefined) { id = have; if (first === null) first = have; continue; }
      const nid = tree.nodes.length;
      tree.nodes.push({ id: nid, parent: id, children: [], move: step.move, text: step.text, comment: "", fen: step.fen, review: true });
      node(id).children.push(nid);
      id = nid;
      if (first === null) first = nid;
    }
    return first;
  }

  function keepReview() {
    if (!tree) return [];
    return tree.nodes.filter((n) => n.review && !node(n.parent).review).map((n) => {
      const line = [];
      for (let id = n.id; ; id = node(id).children[0]) {
        line.push({ move: node(id).move, text: node(id).text, fen: node(id).fen });
        if (!node(id).children.length) break;
      }
      return { at: pathMoves(n.parent), line };
    });
  }

  function restoreReview(saved) {
    for (const r of saved) {
      const at = findPath(r.at);
      if (at !== null) addReviewLine(at, r.line);
    }
  }

  // -- the move list -------------------------------------------------------------------------

  function numberOf(n, parentFen) {
    const parts = parentFen.split(" ");
    return { red: parts[1] !== "b", num: Number(parts[5] || 1) };
  }

  function moveSpan(id) {
    const n = node(id);
    const span = document.createElement("span");
    span.className = "mv";
    span.textContent = moveText(n);
    span.dataset.node = String(id);
    span.dataset.iccs = n.move;
    span.title = n.move;
    if (n.comment) { span.classList.add("has-comment"); span.title = `${n.move} · ${n.comment}`; }
    if (n.review) span.classList.add("from-review");
    if (n.mark) {
      span.classList.add(`mark-${n.mark.cls}`);
      if (n.mark.symbol) span.dataset.symbol = n.mark.symbol;
    }
    span.addEventListener("click", () => go(id));
    return span;
  }

  /** The fen of node ``id``'s parent, or a stand-in with the side to move when unknown. */
  function parentFen(id) {
    const p = node(node(id).parent);
    if (p.fen) return p.fen;
    // unknown (a provisional tree): the side alternates from the start
    const start = node(0).fen.split(" ");
    const ply = pathTo(id).length - 2;
    const blackFirst = start[1] === "b";
    const red = (ply + (blackFirst ? 1 : 0)) % 2 === 0;
    const num = Number(start[5] || 1) + Math.floor((ply + (blackFirst ? 1 : 0)) / 2);
    return `x ${red ? "w" : "b"} - - 0 ${num}`;
  }

  /** A variation starting at node ``id`` (an alternative move) as an indented block. */
  function variationBlock(id, depth) {
    const div = document.createElement("div");
    div.className = "var";
    div.dataset.depth = String(depth);
    div.style.marginLeft = `${Math.min(depth, 6) * 0.9}rem`;
    let needNumber = true;
    for (let n = id; ; n = node(n).children[0]) {
      const { red, num } = numberOf(node(n), parentFen(n));
      if (red || needNumber) {
        const label = document.createElement("span");
        label.className = "num";
        label.textContent = red ? `${num}.` : `${num}…`;
        div.appendChild(label);
      }
      div.appendChild(moveSpan(n));
      div.appendChild(document.createTextNode(" "));
      needNumber = false;
      // alternatives to this move (after the first move of the variation: its own siblings are
      // the block's siblings)
      if (n !== id) {
        const sibs = node(node(n).parent).children;
        if (sibs[0] === n && sibs.length > 1) {
          for (const alt of sibs.slice(1)) div.appendChild(variationBlock(alt, depth + 1));
          needNumber = true;
        }
      }
      if (!node(n).children.length) break;
    }
    return div;
  }

  function render() {
    const list = $("#move-list");
    list.replaceChildren();
    if (!tree) return;
    const main = mainLine().slice(1);
    if (!main.length) {
      const li = document.createElement("li");
      li.className = "empty";
      li.textContent = t("no_moves");
      list.appendChild(li);
    }
    let li = null;
    for (const id of main) {
      const { red, num } = numberOf(node(id), parentFen(id));
      if (red || !li) {
        li = document.createElement("li");
        li.value = num;
        list.appendChild(li);
        if (!red) {
          const skip = document.createElement("span");
          skip.className = "mv skip";
          skip.textContent = "…";
          li.appendChild(skip);
        }
      }
      if (li.childNodes.length) li.appendChild(document.createTextNode(" "));
      const span = moveSpan(id);
      span.dataset.ply = String(pathTo(id).length - 2);
      li.appendChild(span);
      const sibs = node(node(id).parent).children;
      if (sibs.length > 1) {
        const box = document.createElement("li");
        box.className = "vars";
        for (const alt of sibs.slice(1)) box.appendChild(variationBlock(alt, 1));
        list.appendChild(box);
        li = null;
      }
    }
    markCurrent();
    document.body.dataset.treeNodes = String(tree.nodes.length);
    document.body.dataset.treeVariations = String(variations());
    onRendered(tree.source); // e.g. the book marks of the live game's moves (opening.js)
  }

  function markCurrent() {
    const list = $("#move-list");
    let shown = null;
    for (const s of list.querySelectorAll(".mv[data-node]")) {
      const on = Number(s.dataset.node) === cur;
      s.classList.toggle("current", on);
      if (on) shown = s;
    }
    if (following) list.scrollTop = list.scrollHeight;
    else if (shown) keepInView(list, shown);
    else list.scrollTop = 0; // the start position (no move shown): the list from its first move
    renderControls();
    document.body.dataset.analysisNode = String(cur);
    document.body.dataset.analysisPly = tree ? String(pathTo(cur).length - 1) : "0";
    document.body.dataset.analysisBrowsing = browsingNow() ? "1" : "0";
  }

  function browsingNow() {
    return Boolean(tree && (tree.source !== "current" || !following));
  }

  function renderControls() {
    const away = browsingNow();
    $("#an-live").hidden = !away;
    $("#an-live").textContent = tree && tree.source !== "current" ? t("an_close") : t("an_back");
    const edit = $("#an-edit");
    edit.hidden = !away || cur === 0;
    if (!tree) return;
    const n = node(cur);
    $("#an-promote").disabled = Boolean(n.review) || !canPromote(cur);
    $("#an-delete").disabled = n.review || cur === 0 || played(cur);
    const box = $("#an-comment");
    if (document.activeElement !== box) box.value = n.comment || "";
    box.disabled = Boolean(n.review);
    $("#an-first").disabled = cur === 0;
    $("#an-prev").disabled = cur === 0;
    $("#an-next").disabled = !n.children.length;
    $("#an-last").disabled = !n.children.length;
  }

  /** Whether promote() would change anything for node ``id``. */
  function canPromote(id) {
    for (let n = id; node(n).parent !== null; n = node(n).parent) {
      const kids = node(node(n).parent).children;
      if (kids.indexOf(n) > (played(kids[0]) ? 1 : 0)) return true;
    }
    return false;
  }

  $("#an-first").addEventListener("click", () => go(0));
  $("#an-prev").addEventListener("click", () => step(-1));
  $("#an-next").addEventListener("click", () => step(1));
  $("#an-last").addEventListener("click", () => go(lineEnd()));
  $("#an-live").addEventListener("click", backToGame);
  $("#an-promote").addEventListener("click", () => promote());
  $("#an-delete").addEventListener("click", () => remove());
  $("#an-comment").addEventListener("change", (e) => setComment(e.target.value.trim()));

  return {
    syncLive, openTree, backToGame, go, step, play, promote, remove, setComment, save, exportFile,
    addReviewLine, render, show, mainLine, pathTo,
    /** Resolves when the current game's tree (with its fens and saved branches) is fetched. */
    whenReady() { return fetching || Promise.resolve(); },
    /** True when the board shows a position other than the live game's (the page then leaves it alone). */
    get browsing() { return browsingNow(); },
    /** The tree's source: "current", "library" or "record" (null before the first state). */
    get source() { return tree ? tree.source : null; },
    get tree() { return tree; },
    get current() { return cur; },
    get libraryId() { return tree ? tree.libraryId : null; },
    /** Number of the player's variations in the tree. */
    variations,
    /** The position shown, for the engine panel: the start FEN and the moves to it. */
    position() {
      if (!tree) return null;
      const p = pathTo(cur);
      return { fen: node(0).fen, moves: p.slice(1).map((id) => node(id).move), node: cur, shownFen: node(cur).fen };
    },
    /** The board's orientation while browsing (the page's). */
    setOrientation(o) { orientation = o; if (browsingNow()) board.set({ orientation: o }); },
    /** Arrow keys, Home and End step through the tree; true when the key was used. */
    key(ev) {
      if (!tree || tree.nodes.length < 2) return false;
      const keys = { ArrowLeft: () => step(-1), ArrowRight: () => step(1), ArrowUp: () => go(0), Home: () => go(0),
        ArrowDown: () => go(lineEnd()), End: () => go(lineEnd()) };
      if (!keys[ev.key]) return false;
      keys[ev.key]();
      return true;
    },
  };
}
