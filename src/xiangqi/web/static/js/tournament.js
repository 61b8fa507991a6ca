// Engine matches (引擎比赛): a round-robin of built-in levels and added engines, played on the
// server by the match tool (web/tournament_api.py); a live cross table with points and Elo, and
// every game in the library.

import { TEXT, fill, t } from "./i18n.js";

Object.assign(TEXT.zh, {
  tournament: "引擎比赛", tn_players: "参赛者（至少两个）", tn_games: "每对局数", tn_movetime: "每步用时（秒）",
  tn_start: "开始比赛", tn_stop: "停止", tn_progress: "第 {done}/{total} 局 · {current}",
  tn_done: "比赛结束：{total} 局，已存入棋谱库", tn_cancelled: "比赛已停止（{done}/{total} 局）",
  tn_failed: "比赛出错：{error}", tn_player: "参赛者", tn_points: "积分", tn_elo: "等级分差",
  tn_elo_note: "等级分以第一位参赛者为 0 计（95% 误差）", tn_pick: "请至少选两个参赛者",
  tn_openings: "开局", tn_openings_standard: "常见开局（轮换，先后手互换）",
});
Object.assign(TEXT.en, {
  tournament: "Engine match", tn_players: "Players (two or more)", tn_games: "Games per pair", tn_movetime: "Seconds a move",
  tn_start: "Start", tn_stop: "Stop", tn_progress: "Game {done}/{total} · {current}",
  tn_done: "Finished: {total} games, kept in the library", tn_cancelled: "Stopped ({done}/{total} games)",
  tn_failed: "The match failed: {error}", tn_player: "Player", tn_points: "Points", tn_elo: "Elo",
  tn_elo_note: "Elo relative to the first player (95 % error)", tn_pick: "Choose at least two players",
  tn_openings: "Openings", tn_openings_standard: "Common openings (in turn, colours swapped)",
});

const $ = (sel) => document.querySelector(sel);

/** ``api`` the page's JSON requests; ``levels()`` the built-in levels ``[{key, name}]``;
 *  ``engines()`` the added engines ``[{key, name}]``; ``onGame()`` after games were kept. */
export function createTournament({ api, levels, engines, onGame }) {
  let timer = null;
  let last = null;

  function el(tag, props = {}, ...children) {
    const e = document.createElement(tag);
    Object.assign(e, props);
    e.append(...children);
    return e;
  }

  function fillPlayers() {
    const box = $("#tn-players");
    const checked = new Set([...box.querySelectorAll("input:checked")].map((i) => i.value));
    box.replaceChildren();
    for (const p of [...levels(), ...engines()]) {
      const input = el("input", { type: "checkbox", value: p.key, checked: checked.has(p.key) });
      box.appendChild(el("label", { className: "tn-player" }, input, el("span", { textContent: p.name })));
    }
  }

  function cellText(c) {
    if (!c) return "—";
    return `${c.wins}-${c.draws}-${c.losses}`;
  }

  function eloText(elo, err) {
    if (elo === null || elo === undefined) return "";
    const e = err === null || err === undefined ? "" : ` ±${err}`;
    return `${elo > 0 ? "+" : ""}${elo}${e}`;
  }

  function render(st) {
    last = st;
    const running = st.status === "queued" || st.status === "running";
    $("#tn-start").disabled = running;
    $("#tn-stop").hidden = !running;
    document.body.dataset.tournament = st.status;
    const status = $("#tn-status");
    status.textContent = st.status === "none" ? ""
      : running ? fill(t("tn_progress"), { done: st.done + 1, total: st.total, current: st.current || "" })
      : st.status === "done" ? fill(t("tn_done"), { total: st.total })
      : st.status === "cancelled" ? fill(t("tn_cancelled"), { done: st.done, total: st.total })
      : fill(t("tn_failed"), { error: st.error || "" });
    const wrap = $("#tn-table");
    wrap.replaceChildren();
    if (st.status === "none") return;
    const n = st.players.length;
    const head = el("tr", {}, el("th", { textContent: t("tn_player") }),
      ...st.players.map((_, j) => el("th", { textContent: String(j + 1) })),
      el("th", { textContent: t("tn_points") }), el("th", { textContent: t("tn_elo") }));
    const table = el("table", { className: "tn-cross" }, el("thead", {}, head));
    const body = el("tbody");
    const byName = Object.fromEntries(st.standings.map((s) => [s.name, s]));
    for (let i = 0; i < n; i++) {
      const s = byName[st.players[i]];
      const row = el("tr", {}, el("th", { textContent: `${i + 1}. ${st.players[i]}` }));
      for (let j = 0; j < n; j++) {
        const c = st.table[i][j];
        const td = el("td", { textContent: i === j ? "×" : cellText(c) });
        if (c && c.elo !== null) td.title = eloText(c.elo, c.elo_error);
        td.dataset.cell = `${i}-${j}`;
        row.appendChild(td);
      }
      row.append(el("td", { className: "tn-points", textContent: String(s ? s.points : 0) }),
        el("td", { className: "tn-elo", textContent: s ? eloText(s.elo, s.elo_error) : "" }));
      body.appendChild(row);
    }
    table.appendChild(body);
    wrap.append(table, el("p", { className: "tn-note", textContent: t("tn_elo_note") }));
  }

  async function poll() {
    clearTimeout(timer);
    try {
      const st = await api("/api/tournament");
      const before = last ? last.done : 0;
      render(st);
      if (st.done !== before) onGame();
      if ((st.status === "running" || st.status === "queued") && $("#dlg-tournament").open) {
        timer = setTimeout(poll, 1000);
      }
    } catch (e) {
      $("#tn-status").textContent = `${t("error")}: ${e.message}`;
    }
  }

  async function start() {
    const players = [...document.querySelectorAll("#tn-players input:checked")].map((i) => i.value);
    if (players.length < 2) { $("#tn-status").textContent = t("tn_pick"); return; }
    try {
      const st = await api("/api/tournament", { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ players, games_per_pair: Number($("#tn-games").value),
          movetime_s: Number($("#tn-movetime").value), openings: $("#tn-openings").value }) });
      render(st);
      timer = setTimeout(poll, 500);
    } catch (e) {
      $("#tn-status").textContent = `${t("error")}: ${e.message}`;
    }
  }

  $("#tn-start").addEventListener("click", start);
  $("#tn-stop").addEventListener("click", async () => { render(await api("/api/tournament", { method: "DELETE" })); });
  $("#dlg-tournament").addEventListener("close", () => clearTimeout(timer));

  return {
    open() {
      fillPlayers();
      $("#dlg-tournament").showModal();
      poll();
    },
    refresh() { if (last) render(last); },
  };
}
