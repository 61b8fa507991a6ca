// Saved-game library: list with search and filter, replay (step, jump, autoplay), rename,
// annotate, export and delete. Finished games are kept by the server automatically.

import { fill, language, playerName, t } from "./i18n.js";
import { keepInView } from "./scroll.js";

const $ = (sel) => document.querySelector(sel);

export function createLibrary({ board, api, toast, confirmDialog, onEnter, onExit, onReview = null }) {
  let game = null; // {id, fens, moves, result, title, notes}
  let ply = 0;
  let timer = null;

  // the names as stored (in the language of the day the game was saved), shown in today's language
  function playerText(row) {
    return `${playerName(row.red)} – ${playerName(row.black)}`;
  }

  async function refresh() {
    // every matching row, each flagged ``abandoned`` by the server (unfinished, under two plies, unnamed:
    // store.is_abandoned); those stay out of the list unless the player ticks the toggle that counts them
    const params = new URLSearchParams({ search: $("#lib-search").value, result: $("#lib-result").value, abandoned: "1" });
    const all = await api(`/api/library?${params}`);
    const hidden = all.filter((r) => r.abandoned).length;
    $("#lib-abandoned-toggle").hidden = hidden === 0;
    $("#lib-abandoned-label").textContent = fill(t("show_abandoned"), { n: hidden });
    const rows = $("#lib-abandoned").checked ? all : all.filter((r) => !r.abandoned);
    const body = $("#lib-rows");
    body.replaceChildren();
    $("#lib-empty").hidden = rows.length > 0;
    $("#lib-empty").textContent = t(hidden > 0 ? "library_all_abandoned" : "library_empty");
    for (const r of rows) {
      const tr = document.createElement("tr");
      tr.dataset.id = String(r.id);
      const cells = [r.time ? `${r.date} ${r.time}` : r.date, (r.title ? `${r.title} · ` : "") + playerText(r),
        language() === "zh" ? r.reason_zh || r.result : r.reason_en || r.result, String(Math.ceil(r.plies / 2))];
      for (const c of cells) {
        const td = document.createElement("td");
        td.textContent = c;
        tr.appendChild(td);
      }
      const td = document.createElement("td");
      td.className = "lib-actions";
      const buttons = document.createElement("div"); // one row (a column on a phone) of equal buttons
      buttons.className = "lib-buttons";
      td.appendChild(buttons);
      const open = document.createElement("button");
      open.type = "button";
      open.className = "lib-open";
      open.textContent = t("replay");
      open.disabled = Boolean(r.damaged); // the server answers 409 for a damaged row
      open.addEventListener("click", () => { $("#dlg-library").close(); replay(r.id); });
      buttons.appendChild(open);
      if (onReview) { // 复盘 / Review: the review display of this game (review.js)
        const rv = document.createElement("button");
        rv.type = "button";
        rv.className = "lib-review";
        rv.textContent = t("review");
        rv.disabled = Boolean(r.damaged) || r.plies === 0 || r.variant === "jieqi"; // 揭棋: replay only
        rv.addEventListener("click", () => { $("#dlg-library").close(); onReview(r.id); });
        buttons.appendChild(rv);
      }
      if (r.plies > 0 && window.xiangqiPractice && r.variant !== "jieqi") { // 练习: learn from this game's mistakes (practice.js)
        const pr = document.createElement("button");
        pr.type = "button";
        pr.className = "lib-practice";
        pr.textContent = t("practice");
        pr.disabled = Boolean(r.damaged);
        pr.addEventListener("click", () => { $("#dlg-library").close(); window.xiangqiPractice.open({ library_id: r.id }); });
        buttons.appendChild(pr);
      }
      tr.appendChild(td);
      body.appendChild(tr);
    }
  }

  async function openList() {
    await refresh();
    $("#dlg-library").showModal();
  }

  async function replay(id) {
    game = await api(`/api/library/${id}/replay`);
    onEnter();
    $("#replay").hidden = false;
    $("#game-panel").hidden = true;
    $("#rp-title").textContent = game.title || `${t("replay")} #${id}`;
    $("#rp-result").textContent = game.result ? (language() === "zh" ? game.result.reason_zh : game.result.reason_en) : "";
    $("#rp-name").value = game.title;
    $("#rp-notes").value = game.notes;
    $("#rp-export").href = `/api/library/${id}/pgn?lang=${language()}`;
    $("#rp-analyse").hidden = game.variant === "jieqi"; // 揭棋: no analysis board for hidden pieces
    document.body.classList.toggle("jieqi-replay", game.variant === "jieqi");
    const list = $("#rp-moves");
    list.replaceChildren();
    for (let i = 0; i < game.moves.length; i += 2) {
      const li = document.createElement("li");
      for (const k of [i, i + 1]) {
        if (k >= game.moves.length) break;
        if (k > i) li.appendChild(document.createTextNode(" "));
        const span = document.createElement("span");
        span.className = "mv";
        span.dataset.ply = String(k + 1);
        span.textContent = game.moves[k].chinese;
        span.addEventListener("click", () => go(k + 1));
        li.appendChild(span);
      }
      list.appendChild(li);
    }
    go(game.moves.length);
  }

  function go(n) {
    if (!game) return;
    ply = Math.max(0, Math.min(game.moves.length, n));
    const last = ply > 0 ? game.moves[ply - 1].iccs : null;
    board.set({ fen: game.fens[ply], lastMove: last, check: null, dests: {}, movable: false, shapes: [], animate: true });
    $("#rp-ply").textContent = `${ply} / ${game.moves.length}`;
    document.body.dataset.replayPly = String(ply);
    for (const s of document.querySelectorAll("#rp-moves .mv")) s.classList.toggle("current", Number(s.dataset.ply) === ply);
    const cur = document.querySelector("#rp-moves .mv.current");
    keepInView($("#rp-moves"), cur);
  }

  function stopAuto() {
    clearInterval(timer);
    timer = null;
    $("#rp-auto").setAttribute("aria-pressed", "false");
  }

  function close() {
    stopAuto();
    game = null;
    $("#replay").hidden = true;
    $("#game-panel").hidden = false;
    document.body.classList.remove("jieqi-replay");
    delete document.body.dataset.replayPly;
    onExit();
  }

  $("#rp-first").addEventListener("click", () => { stopAuto(); go(0); });
  $("#rp-prev").addEventListener("click", () => { stopAuto(); go(ply - 1); });
  $("#rp-next").addEventListener("click", () => { stopAuto(); go(ply + 1); });
  $("#rp-last").addEventListener("click", () => { stopAuto(); go(game ? game.moves.length : 0); });
  $("#rp-auto").addEventListener("click", () => {
    if (timer) { stopAuto(); return; }
    if (ply >= game.moves.length) go(0);
    $("#rp-auto").setAttribute("aria-pressed", "true");
    timer = setInterval(() => {
      if (!game || ply >= game.moves.length) { stopAuto(); return; }
      go(ply + 1);
    }, 700);
  });
  $("#rp-save").addEventListener("click", async () => {
    await api(`/api/library/${game.id}`, {
      method: "PATCH", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ title: $("#rp-name").value, notes: $("#rp-notes").value }),
    });
    $("#rp-title").textContent = $("#rp-name").value || `${t("replay")} #${game.id}`;
    toast(t("saved"));
  });
  $("#rp-delete").addEventListener("click", async () => {
    if (!(await confirmDialog(t("delete"), t("confirm_delete"), t("delete"), t("cancel")))) return;
    await api(`/api/library/${game.id}`, { method: "DELETE" });
    close();
    openList();
  });
  $("#rp-exit").addEventListener("click", close);
  $("#lib-search").addEventListener("input", () => refresh());
  $("#lib-result").addEventListener("change", () => refresh());
  $("#lib-abandoned").addEventListener("change", () => refresh());

  return {
    openList, replay, close, go, refresh,
    /** The replay's line: ``{start: FEN, moves: [ICCS up to the position shown]}``, or null. */
    position() { return game ? { start: game.fens[0], moves: game.moves.slice(0, ply).map((m) => m.iccs) } : null; },
    /** Step on when the game's next move is ``iccs``; false otherwise. */
    follow(iccs) {
      if (!game || !game.moves[ply] || game.moves[ply].iccs !== iccs) return false;
      stopAuto();
      go(ply + 1);
      return true;
    },
    /** The replayed game's players as the library stored them, ``{red, black}``, or null. */
    players() { return game ? { red: game.red || "", black: game.black || "" } : null; },
    get active() { return game !== null; },
    get ply() { return ply; },
    /** The library row id of the game replayed, or null. */
    get gameId() { return game ? game.id : null; },
    /** Arrow keys step through a replay; returns true when the key was used. */
    key(ev) {
      if (!game) return false;
      const map = { ArrowLeft: ply - 1, ArrowRight: ply + 1, Home: 0, End: game.moves.length };
      if (!(ev.key in map)) return false;
      stopAuto();
      go(map[ev.key]);
      return true;
    },
  };
}
