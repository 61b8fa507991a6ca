// One online game on the page's board: played (the seat the server says is yours in its "hello")
// or watched. The server owns the game: every state it sends (GameState, docs/ONLINE_API.md
// section 5) replaces what the page shows, by version; a move is shown at once as sent and then
// confirmed by the next state (or taken back on a refusal). Clocks count down the running side
// from the server's values at the moment a state arrived; the server alone decides a time-out.
// Each change comes as an update (the keys that changed, the new moves) on the state shown; the
// socket's first message after "hello" is the whole state, and an update that does not follow on
// asks for it again. A closed socket reconnects with ?since=<version> and gets the whole game again,
// so nothing is lost; a reopened tab comes back here through the URL (/?game=ID) or GET /me.

import { parseFen } from "./board.js";
import { boardFen } from "./editor.js";
import { fill, language, t } from "./i18n.js";
import { message } from "./messages.js";
import { socket } from "./net.js";
import { OnlineError, categoryName, el, ratingText, tcTitle, userName } from "./online.js";
import * as sound from "./sound.js";

const $ = (sel) => document.querySelector(sel);
const other = (c) => (c === "red" ? "black" : "red");

/** The board field after an ICCS move (no legality: the server judged it). */
function applyMove(fen, mv) {
  const pieces = parseFen(fen);
  pieces[mv.slice(2, 4)] = pieces[mv.slice(0, 2)];
  delete pieces[mv.slice(0, 2)];
  return boardFen(pieces);
}

function formatMs(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  const mm = h ? `${h}:${String(m).padStart(2, "0")}` : String(m);
  return `${mm}:${String(sec).padStart(2, "0")}`;
}

export function createOnlineGame(ctx) {
  const { board } = ctx;
  // -- the two player bars over and under the board -------------------------------------------
  function bar(id) {
    const b = el("div", { class: "player-bar ol-bar", id });
    const who = el("span", { class: "ol-who" }, b);
    el("span", { class: "ol-presence", "aria-hidden": "true" }, who);
    el("span", { class: "who" }, who);
    el("span", { class: "ol-rating" }, who);
    // the side to move's time for its first move (GameState first_move_ms), beside its clock
    el("span", { class: "ol-first-move", role: "timer", hidden: true }, b);
    el("span", { class: "clock", hidden: true }, b);
    return b;
  }
  const barTop = bar("ol-bar-top"), barBottom = bar("ol-bar-bottom");
  $("#bar-top").before(barTop);
  $("#bar-bottom").after(barBottom);

  // -- the side panel -----------------------------------------------------------------------------
  const panel = el("section", { id: "online-game", class: "online-game", hidden: true }, $("aside.panel"));
  const titleEl = el("h2", { id: "ol-title", class: "ol-title" }, panel);
  const meta = el("p", { id: "ol-meta", class: "ol-meta" }, panel);
  const statusEl = el("div", { id: "ol-status", class: "status", role: "status", "aria-live": "polite" }, panel);
  const noticeEl = el("div", { id: "ol-notice", class: "notice", hidden: true }, panel);
  const offerEl = el("div", { id: "ol-offer", class: "ol-offer", hidden: true, role: "alert" }, panel);
  const claimEl = el("div", { id: "ol-claim", class: "ol-offer", hidden: true }, panel);
  const resultEl = el("div", { id: "ol-result", class: "ol-result", hidden: true }, panel);
  const buttons = el("div", { class: "row ol-buttons" }, panel);
  const bDraw = el("button", { type: "button", id: "ol-draw" }, buttons);
  const bTake = el("button", { type: "button", id: "ol-takeback" }, buttons);
  const bAbort = el("button", { type: "button", id: "ol-abort" }, buttons);
  const bResign = el("button", { type: "button", id: "ol-resign" }, buttons);
  const bFlip = el("button", { type: "button", id: "ol-flip" }, buttons);
  const movesHead = el("h2", {}, panel);
  const list = el("ol", { id: "ol-moves", class: "move-list ol-moves" }, panel);
  const nav = el("div", { class: "row an-controls" }, panel);
  const nFirst = el("button", { type: "button", "aria-label": "first" }, nav, "|◀");
  const nPrev = el("button", { type: "button", "aria-label": "previous" }, nav, "◀");
  const nNext = el("button", { type: "button", "aria-label": "next" }, nav, "▶");
  const nLast = el("button", { type: "button", "aria-label": "last", id: "ol-live" }, nav, "▶|");
  const bLobby = el("button", { type: "button", id: "ol-back-lobby" }, panel);

  let gameId = null;
  let st = null; // the GameState shown
  let you = null; // "red" | "black" | null (watching)
  let ws = null;
  let delay = 300;
  let clockAt = 0;
  let pending = null; // {move, version}: sent, not yet confirmed
  let flipped = false;
  let ply = null; // a past position shown (number of plies), or null for the live one
  let claimAt = 0; // performance.now() when the claim opens (the opponent's grace period ended)
  let shownResult = null;

  function send(msg) {
    if (ws && ws.readyState === 1) { ws.send(JSON.stringify(msg)); return true; }
    return false;
  }

  /** An action of the player: by the socket, or by REST when it is down (the answer is the state). */
  async function action(type, extra = {}) {
    if (send({ type, ...extra })) return;
    try {
      const state = await ctx.call(`/api/online/games/${encodeURIComponent(gameId)}/${type}`, { method: "POST", body: extra });
      take(state);
    } catch (e) {
      pending = null;
      if (e.body && e.body.state) take(e.body.state);
      ctx.toast(ctx.errorText(e));
      render();
    }
  }

  function orientation() {
    const base = you === "black" ? "black" : "red";
    return flipped ? other(base) : base;
  }

  function myTurn() {
    return Boolean(st && you && st.status === "playing" && st.turn === you && !pending);
  }

  // -- the board ---------------------------------------------------------------------------------
  function fenAt(n) {
    let fen = st.start_fen;
    for (let i = 0; i < n; i++) fen = applyMove(fen, st.moves[i].iccs);
    return fen;
  }

  function showBoard(animate = true) {
    if (!st) return;
    let fen = st.fen, last = st.last_move, check = st.check;
    const movable = ply === null && myTurn();
    if (ply !== null) {
      fen = fenAt(ply);
      last = ply ? st.moves[ply - 1].iccs : null;
      check = null;
    } else if (pending) {
      fen = applyMove(st.fen, pending.move);
      last = pending.move;
      check = null;
    }
    board.set({
      fen, orientation: orientation(), lastMove: last, check, dests: movable ? st.legal || {} : {}, movable,
      shapes: [], traditional: Boolean(ctx.settings && ctx.settings().traditional),
      labels: { river: [t("river_left"), t("river_right")] }, animate, onMove,
    });
  }

  function onMove(iccs) {
    if (!myTurn()) return;
    pending = { move: iccs, version: st.version };
    document.body.dataset.olPending = iccs;
    showBoard(false);
    render();
    sound.play("move");
    action("move", { move: iccs, version: st.version });
  }

  // -- the socket ----------------------------------------------------------------------------------
  function connect() {
    if (ws) { ws.onclose = null; ws.close(); }
    const since = st && st.id === gameId ? st.version : 0;
    const sock = socket(`/ws/online/game/${encodeURIComponent(gameId)}?since=${since}`);
    ws = sock;
    document.body.dataset.olConnected = "0";
    sock.onopen = () => {
      delay = 300;
      noticeEl.hidden = true;
      document.body.dataset.olConnected = "1";
    };
    sock.onmessage = (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch { return; }
      onMessage(msg);
    };
    sock.onclose = (ev) => {
      document.body.dataset.olConnected = "0";
      if (ws !== sock) return;
      if (ev.code === 4404) { gone(); return; }
      noticeEl.textContent = t("ol_reconnecting");
      noticeEl.hidden = false;
      setTimeout(() => { if (ws === sock && gameId) connect(); }, delay);
      delay = Math.min(delay * 2, 5000);
    };
  }

  function gone() {
    ws = null;
    statusEl.textContent = t("ol_err_not_found");
    statusEl.className = "status over";
    document.body.dataset.olGame = "gone";
  }

  function onMessage(msg) {
    if (msg.type === "hello") {
      const was = you;
      you = msg.you || null;
      if (was !== you) flipped = false;
      document.body.dataset.olSeat = you || "watch";
    } else if (msg.type === "state") {
      take(msg.state);
    } else if (msg.type === "update") {
      update(msg);
    } else if (msg.type === "event") {
      eventToast(msg);
    } else if (msg.type === "error") {
      if (pending) { pending = null; delete document.body.dataset.olPending; showBoard(false); }
      ctx.toast(ctx.errorText(new OnlineError(0, { detail: msg.detail, code: msg.code }, msg.retry_after || 0)));
      render();
    } else if (msg.type === "ping") {
      send({ type: "pong", id: msg.id });
    }
  }

  function eventToast(msg) {
    const mine = msg.by === you;
    const key = {
      draw_declined: mine ? "" : "ol_draw_declined", takeback_declined: mine ? "" : "ol_takeback_declined",
      draw_offered: mine ? "" : "ol_draw_offered", takeback_requested: mine ? "" : "ol_takeback_requested",
      opponent_left: you && msg.by !== you ? "ol_opponent_left" : "", opponent_back: you && msg.by !== you ? "ol_opponent_back" : "",
    }[msg.event];
    if (key) ctx.toast(t(key));
  }

  /** What changed since the state shown (ONLINE_API.md section 5: the changed keys and the moves
   * after the first moves_from); one that does not follow on from it means a message was missed:
   * the whole state is asked for. */
  function update(msg) {
    if (st && msg.version <= st.version) return; // already shown (the whole state came first)
    if (!st || msg.base !== st.version) { send({ type: "state" }); return; }
    const next = { ...st, ...msg.changes, version: msg.version };
    if (msg.moves_from !== undefined) next.moves = st.moves.slice(0, msg.moves_from).concat(msg.moves_add);
    take(next, true);
  }

  /** A state from the server: shown unless older than the one shown (a late message). */
  function take(state, followsOn = false) {
    if (!state || state.id !== gameId) return;
    if (st && st.id === state.id && state.version < st.version) return;
    const prev = st && st.id === state.id ? st : null;
    if (!followsOn && prev && state.version > prev.version + 1 && ws) send({ type: "state" }); // a missed message
    st = state;
    clockAt = performance.now();
    if (pending && state.version > pending.version) { pending = null; delete document.body.dataset.olPending; }
    const claim = state.claim;
    claimAt = claim && claim.by === you ? clockAt + (claim.after_ms || 0) : 0;
    if (prev && state.moves.length > prev.moves.length && ply === null) {
      const last = state.moves[state.moves.length - 1];
      const byMe = Boolean(you) && other(state.turn) === you;
      if (!byMe || state.status !== "playing") sound.play(state.status !== "playing" ? "end" : last.check ? "check" : last.capture ? "capture" : "move");
    }
    if (ply !== null && ply > state.moves.length) ply = null;
    showBoard(Boolean(prev));
    render();
  }

  // -- the panel ---------------------------------------------------------------------------------
  function nameOf(color) {
    const seat = st && st.seats && st.seats[color];
    return seat ? userName(seat.user) : "?";
  }

  function renderBars() {
    const bottom = orientation(), top = other(bottom);
    for (const [b, color] of [[barTop, top], [barBottom, bottom]]) {
      b.dataset.color = color;
      const seat = st && st.seats ? st.seats[color] : null;
      const who = b.querySelector(".who");
      who.replaceChildren(`${t(color)} — `);
      const user = seat && seat.user;
      if (user && user.kind === "user") {
        // the profile in a new tab: the game (and its socket) stays here
        el("a", { href: `/?player=${encodeURIComponent(user.username)}`, target: "_blank", rel: "noopener", class: "ol-user" },
          who, user.username);
      } else {
        who.append(user ? userName(user) : "?");
      }
      if (you === color) who.append(t("ol_you_mark"));
      const r = seat && seat.rating;
      const rating = b.querySelector(".ol-rating");
      rating.textContent = r ? `${ratingText(r)}${r.rank_zh && language() === "zh" ? " · " + r.rank_zh : ""}` : "";
      rating.title = r && r.provisional ? t("ol_provisional") : "";
      const dot = b.querySelector(".ol-presence");
      const engine = seat && seat.user && seat.user.kind === "engine";
      const on = Boolean(seat && (seat.connected || engine));
      dot.classList.toggle("on", on);
      dot.title = t(on ? "ol_connected" : "ol_disconnected");
      b.dataset.connected = on ? "1" : "0";
      b.classList.toggle("to-move", Boolean(st && st.status === "playing" && st.turn === color));
    }
    renderClocks();
  }

  function renderClocks() {
    for (const b of [barTop, barBottom]) {
      const c = st && st.clock;
      const elc = b.querySelector(".clock");
      if (!c) { elc.hidden = true; continue; }
      const color = b.dataset.color;
      let ms = c[`${color}_ms`];
      const running = c.running === color && st.status === "playing";
      if (running) ms -= performance.now() - clockAt;
      elc.hidden = false;
      elc.dataset.ms = String(Math.max(0, Math.round(ms)));
      elc.textContent = formatMs(ms);
      elc.classList.toggle("low", ms < 10000);
      elc.classList.toggle("running", running);
    }
    renderFirstMove();
    renderClaim();
  }

  /** The countdown of the side to move's first move (ONLINE_API.md section 5, first_move_ms; the
   * server aborts the game when it runs out): counted down here from the state's value, in the bar
   * of that side, for both players and spectators; gone once that side has moved. */
  function renderFirstMove() {
    let shown = "";
    for (const b of [barTop, barBottom]) {
      const elf = b.querySelector(".ol-first-move");
      const color = b.dataset.color;
      const ms0 = st && st.status === "playing" && st.turn === color ? st.first_move_ms : null;
      if (ms0 === null || ms0 === undefined || (pending && color === you)) { elf.hidden = true; continue; }
      const ms = Math.max(0, ms0 - (performance.now() - clockAt));
      const s = Math.ceil(ms / 1000);
      elf.textContent = color === you ? fill(t("ol_first_move_yours"), { s })
        : you ? fill(t("ol_first_move_theirs"), { s }) : fill(t("ol_first_move_side"), { side: t(color), s });
      elf.dataset.ms = String(Math.round(ms));
      elf.classList.toggle("low", ms < 10000);
      elf.hidden = false;
      shown = color;
    }
    document.body.dataset.olFirstMove = shown;
  }

  function renderClaim() {
    const c = st && st.claim;
    const playing = st && st.status === "playing";
    if (!playing || !c || c.by !== you) { claimEl.hidden = true; claimEl.replaceChildren(); delete document.body.dataset.olClaim; return; }
    const left = Math.max(0, claimAt - performance.now());
    const ready = left <= 0;
    const key = ready ? "now" : "wait";
    if (claimEl.dataset.key !== key || !ready) {
      claimEl.replaceChildren();
      el("span", {}, claimEl, ready ? t("ol_claim_now") : fill(t("ol_claim_in"), { s: Math.ceil(left / 1000) }));
      if (ready) {
        const b = el("button", { type: "button", id: "ol-claim-win", class: "primary" }, claimEl, t("ol_claim"));
        b.addEventListener("click", () => action("claim"));
      }
      claimEl.dataset.key = key;
    }
    document.body.dataset.olClaim = key;
    claimEl.hidden = false;
  }

  function statusText() {
    if (!st) return "";
    if (st.status === "aborted") return t("ol_aborted");
    if (st.result) return language() === "zh" ? st.result.reason_zh : st.result.reason_en;
    if (pending) return t("ol_sending");
    if (st.engine_error) return `${t("ol_engine_failed")} ${message(st.engine_error.detail || "")}`.trim();
    if (st.thinking) return t("thinking");
    let text;
    if (you) text = st.turn === you ? t("ol_your_turn") : t("ol_their_turn");
    else text = t(st.turn === "red" ? "ol_red_to_move" : "ol_black_to_move");
    return st.check ? `${t("check")} ${text}` : text;
  }

  function renderOffer() {
    offerEl.replaceChildren();
    const offers = (st && st.offers) || {};
    const playing = st && st.status === "playing";
    let shown = false;
    for (const kind of ["draw", "takeback"]) {
      const by = offers[kind];
      if (!playing || !by) continue;
      shown = true;
      const line = el("div", { class: "ol-offer-line", "data-offer": kind }, offerEl);
      if (!you) { el("span", {}, line, fill(t(kind === "draw" ? "ol_draw_by" : "ol_takeback_by"), { side: t(by) })); continue; }
      if (by === you) { el("span", {}, line, t(kind === "draw" ? "ol_draw_sent" : "ol_takeback_sent")); continue; }
      el("span", {}, line, t(kind === "draw" ? "ol_draw_to_you" : "ol_takeback_to_you"));
      const yes = el("button", { type: "button", class: "primary", id: `ol-${kind}-accept` }, line, t("ol_agree"));
      yes.addEventListener("click", () => action(`${kind}_accept`));
      const no = el("button", { type: "button", id: `ol-${kind}-decline` }, line, t("ol_refuse"));
      no.addEventListener("click", () => action(`${kind}_decline`));
    }
    offerEl.hidden = !shown;
    document.body.dataset.olOffer = shown ? Object.entries(offers).filter(([, v]) => v).map(([k, v]) => `${k}:${v}`).join(",") : "";
  }

  function renderResult() {
    if (!st || st.status === "playing") { resultEl.hidden = true; shownResult = null; return; }
    resultEl.replaceChildren();
    const r = st.result;
    const zh = language() === "zh";
    if (st.status === "aborted") el("p", { class: "headline" }, resultEl, t("ol_aborted"));
    else if (r) {
      el("p", { class: "headline", id: "ol-headline" }, resultEl, (zh ? r.headline_zh : r.headline_en) || "");
      const why = zh ? r.why_zh : r.why_en;
      if (why) el("p", { class: "reason" }, resultEl, why);
    }
    const rc = st.rating_change;
    if (rc) {
      for (const color of ["red", "black"]) {
        const c = rc[color];
        if (!c) continue;
        const d = Math.round(c.delta);
        el("p", { class: `ol-rating-change ${d >= 0 ? "up" : "down"}`, "data-color": color, "data-after": Math.round(c.after) }, resultEl,
          fill(t("ol_rating_change"), { name: nameOf(color), before: Math.round(c.before), after: Math.round(c.after),
            delta: d > 0 ? `+${d}` : d < 0 ? `−${-d}` : "±0" }));
      }
    }
    const row = el("div", { class: "row" }, resultEl);
    const a = el("a", { class: "button", id: "ol-pgn", href: `/api/online/games/${encodeURIComponent(st.id)}/pgn`,
      download: `xiangqi-online-${st.id}.pgn` }, row, t("ol_pgn"));
    a.hidden = st.status === "aborted";
    resultEl.hidden = false;
    const key = `${st.id}:${st.version}`;
    if (shownResult === null && st.status !== "playing") shownResult = key;
  }

  function renderMoves() {
    list.replaceChildren();
    if (!st) return;
    const n = ctx.notation ? ctx.notation() : "chinese";
    const blackFirst = st.start_fen.split(" ")[1] === "b";
    if (!st.moves.length) el("li", { class: "ol-empty" }, list, t("no_moves"));
    st.moves.forEach((m, i) => {
      const text = n === "wxf" && m.wxf ? m.wxf : n === "iccs" ? `${m.iccs.slice(0, 2)}-${m.iccs.slice(2, 4)}`.toUpperCase() : m.chinese;
      const li = el("li", { class: "mv", "data-ply": i + 1 }, list, text);
      if ((ply === null ? st.moves.length : ply) === i + 1) li.classList.add("current");
      li.addEventListener("click", () => goPly(i + 1));
      li.dataset.round = String(Math.floor((i + (blackFirst ? 1 : 0)) / 2) + 1);
      const red = (i % 2 === 0) !== blackFirst;
      if (red) li.dataset.red = "1";
      if (i === 0 && blackFirst) li.classList.add("first-black");
    });
    const cur = list.querySelector(".current");
    if (cur) cur.scrollIntoView({ block: "nearest" });
  }

  function goPly(n) {
    if (!st) return;
    const last = st.moves.length;
    ply = n >= last ? null : Math.max(0, n);
    showBoard(false);
    render();
  }

  function render() {
    if (!gameId) return;
    const zh = language() === "zh";
    titleEl.textContent = st ? fill(t("ol_game_title"), { red: nameOf("red"), black: nameOf("black") }) : "";
    if (st) {
      const parts = [you ? t(you === "red" ? "ol_seat_red" : "ol_seat_black") : t("ol_spectating"),
        `${st.time_control} ${categoryName(st.category)}`.trim(), t(st.rated ? "ol_rated_game" : "ol_casual_game"),
        fill(t("ol_watchers"), { n: st.watchers ?? 0 })];
      meta.textContent = parts.join(" · ");
      meta.title = tcTitle(ctx.cfg, st.time_control);
      meta.dataset.watchers = String(st.watchers ?? 0);
    }
    statusEl.textContent = statusText();
    // a tab in the background says whose turn it is in its title
    document.title = `${myTurn() ? "● " + t("ol_your_turn") + " · " : ""}${t("title")} · pyxiangqi`;
    statusEl.className = `status${st && st.status !== "playing" ? " over" : st && st.check ? " check" : ""}`;
    renderBars();
    renderOffer();
    renderResult();
    renderMoves();
    const playing = Boolean(st && st.status === "playing");
    const player = Boolean(you);
    buttons.hidden = false;
    bDraw.textContent = t("ol_offer_draw");
    bTake.textContent = t("ol_takeback");
    bAbort.textContent = t("ol_abort");
    bResign.textContent = t("ol_resign");
    bFlip.textContent = t("flip");
    for (const b of [bDraw, bTake, bAbort, bResign]) b.hidden = !player || !playing;
    const offers = (st && st.offers) || {};
    bDraw.disabled = Boolean(offers.draw);
    const first = st && st.start_fen.split(" ")[1] === "b" ? "black" : "red";
    const myMoves = st && you ? st.moves.filter((_, i) => (i % 2 === 0 ? first : other(first)) === you).length : 0;
    bTake.disabled = Boolean(offers.takeback) || myMoves === 0;
    bAbort.hidden = bAbort.hidden || !st.can_abort;
    bResign.hidden = bResign.hidden || Boolean(st && st.can_abort);
    movesHead.textContent = t("moves");
    bLobby.textContent = t("ol_back_lobby");
    nav.hidden = !st || !st.moves.length;
    document.body.dataset.olPlies = String(st ? st.moves.length : 0);
    document.body.dataset.olStatus = st ? st.status : "";
    document.body.dataset.olVersion = String(st ? st.version : -1);
    document.body.dataset.olTurn = st ? st.turn : "";
    document.body.dataset.olWatchers = String(st ? st.watchers ?? 0 : 0);
    document.body.dataset.olPly = ply === null ? "" : String(ply);
    void zh;
  }

  bDraw.addEventListener("click", () => action("draw_offer"));
  bTake.addEventListener("click", () => action("takeback_request"));
  bAbort.addEventListener("click", async () => {
    if (await ctx.confirmDialog(t("ol_abort"), t("ol_confirm_abort"), t("ol_abort"), t("cancel"))) action("abort");
  });
  bResign.addEventListener("click", async () => {
    if (await ctx.confirmDialog(t("ol_resign"), t("ol_confirm_resign"), t("ol_resign"), t("cancel"))) action("resign");
  });
  bFlip.addEventListener("click", () => { flipped = !flipped; showBoard(false); render(); });
  bLobby.addEventListener("click", () => ctx.go({ view: "lobby" }));
  nFirst.addEventListener("click", () => goPly(0));
  nPrev.addEventListener("click", () => goPly((ply === null ? st.moves.length : ply) - 1));
  nNext.addEventListener("click", () => goPly((ply === null ? st.moves.length : ply) + 1));
  nLast.addEventListener("click", () => goPly(st ? st.moves.length : 0));

  setInterval(() => { if (gameId && st) renderClocks(); }, 200);

  return {
    /** Show game ``id`` (a new one: reset; the same one: keep the socket). */
    async open(id) {
      panel.hidden = false;
      if (gameId === id && ws && ws.readyState <= 1) { render(); return; }
      if (gameId !== id) { st = null; you = null; pending = null; ply = null; flipped = false; shownResult = null; }
      gameId = id;
      document.body.dataset.olGame = id;
      render();
      connect();
      try {
        const state = await ctx.call(`/api/online/games/${encodeURIComponent(id)}`);
        if (gameId === id) take(state);
      } catch (e) {
        if (gameId === id && e.code === "not_found") gone();
      }
    },
    close() {
      if (ws) { ws.onclose = null; ws.close(); ws = null; }
      document.title = `${t("title")} · pyxiangqi`;
      gameId = null;
      st = null;
      panel.hidden = true;
      delete document.body.dataset.olGame;
    },
    /** The identity changed (login, logout): the seat is asked again. */
    reconnect() { if (gameId) connect(); },
    render() { if (gameId) { showBoard(false); render(); } },
    key(ev) {
      if (ev.key === "f") { bFlip.click(); return true; }
      if (ev.key === "ArrowLeft" && st) { nPrev.click(); return true; }
      if (ev.key === "ArrowRight" && st) { nNext.click(); return true; }
      return false;
    },
    get state() { return st; },
    get seat() { return you; },
  };
}
