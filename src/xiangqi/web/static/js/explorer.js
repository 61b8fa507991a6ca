// Opening explorer: the moves played from the board's position in the games database (GET
// /api/explore), each with its games and Red win / draw / Black win shares, the opening's ECCO name
// above and the most recent games below. A panel beside the board, toggled by its button.
// It is shown for a browsed record or library game, in a two-player or analysis game and in the
// position editor; during a game against the computer it stays closed (no game against the computer
// is played with the database's help) and says so.

import { TEXT, language, playerName, t } from "./i18n.js";
import { createJobPanel } from "./setup.js";

const $ = (sel) => document.querySelector(sel);

Object.assign(TEXT.zh, {
  explorer: "开局库", ex_source_master: "大师对局", ex_source_mine: "我的对局", ex_source_both: "全部对局",
  ex_move: "着法", ex_games: "局数", ex_score: "红胜 / 和 / 黑胜", ex_year: "年份", ex_total: "共 {n} 局",
  ex_ended: "，{n} 局在此结束", ex_total_one: "共 {n} 局", ex_ended_one: "，{n} 局在此结束", ex_none: "数据库中没有这个局面。", ex_empty_db: "数据库里还没有大师对局（附带的大师对局可用 xiangqi db import --masters 导入）。",
  ex_top: "最近的对局", ex_blocked: "与电脑对局时不显示开局库。浏览棋谱、复盘、双人对弈、分析或摆谱时可用。",
  ex_no_opening: "（未定名的局面）", ex_play_title: "点击走这步", ex_edit_note: "摆谱时只显示着法；开始对局或分析后可点击走棋。",
  ex_not_in_record: "这步不在棋谱中。从此处开始分析并走这步吗？", ex_not_in_game: "这步不在这盘棋中。",
  ex_analyse: "开始分析", ex_loading: "正在查询…", ex_unknown: "{n} 局无结果",
});
Object.assign(TEXT.en, {
  explorer: "Explorer", ex_source_master: "Master games", ex_source_mine: "My games", ex_source_both: "All games",
  ex_move: "Move", ex_games: "Games", ex_score: "Red / draw / Black", ex_year: "Year", ex_total: "{n} games",
  ex_total_one: "{n} game", ex_ended_one: ", {n} ends here",
  ex_ended: ", {n} end here", ex_none: "This position is not in the database.",
  ex_empty_db: "No master games in the database yet (the ones that ship with the program: xiangqi db import --masters).",
  ex_top: "Recent games", ex_blocked: "The explorer is off in a game against the computer. It works when browsing a record or a replay, in two-player or analysis games and in the editor.",
  ex_no_opening: "(no named opening)", ex_play_title: "Click to play this move",
  ex_edit_note: "In the editor the moves are listed only; start a game or an analysis to play them.",
  ex_not_in_record: "This move is not in the record. Start an analysis from here and play it?",
  ex_not_in_game: "This move is not in this game.", ex_analyse: "Analyse", ex_loading: "Looking up…",
  ex_unknown: "{n} without result",
});

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function fmt(n) {
  return Number(n).toLocaleString(language() === "zh" ? "zh-CN" : "en-US");
}

/**
 * ``context()`` describes what the board shows: ``{kind: "game"|"record"|"replay"|"editor", fen,
 * start, moves, allowed, playable}`` (``start`` + ``moves``: the line from its start, when known;
 * ``allowed``: whether the explorer may be shown; ``playable``: whether a click plays the move).
 * ``onPlay(iccs)`` plays a clicked move; ``onOpenGame(hit)`` opens a top game.
 */
export function createExplorer({ api, context, onPlay, onOpenGame }) {
  let shown = false;
  let seq = 0;
  let timer = null;
  let lastKey = "";

  const panel = $("#explorer");
  const button = $("#btn-explorer");
  // no master games yet (a new install): say so and offer the import of the shipped ones (setup.js)
  const setup = createJobPanel({ api, name: "masters", box: $("#ex-setup"), onDone: () => { lastKey = ""; update(); } });


  function toggle(on = !shown) {
    shown = on;
    panel.hidden = !on;
    button.setAttribute("aria-pressed", on ? "true" : "false");
    document.body.classList.toggle("exploring", on);
    lastKey = "";
    if (on) { update(); setup.offerMasters(); }
  }

  /** The board changed: look the new position up (debounced; a stale answer is dropped). */
  function update() {
    if (!shown) return;
    clearTimeout(timer);
    timer = setTimeout(load, 120);
  }

  async function load() {
    const ctx = context();
    const blocked = $("#ex-blocked");
    blocked.hidden = ctx.allowed;
    $("#ex-body").hidden = !ctx.allowed;
    if (!ctx.allowed) { lastKey = ""; return; }
    const params = new URLSearchParams({ source: $("#ex-source").value, top: "5" });
    if (ctx.start && ctx.moves) {
      params.set("fen", ctx.start);
      if (ctx.moves.length) params.set("moves", ctx.moves.join(" "));
    } else if (ctx.fen) {
      params.set("fen", ctx.fen);
    }
    const key = `${params}|${ctx.playable}`;
    if (key === lastKey) return;
    lastKey = key;
    const mine = ++seq;
    $("#ex-status").textContent = t("ex_loading");
    try {
      const d = await api(`/api/explore?${params}`);
      if (mine !== seq) return;
      render(d, ctx);
    } catch (e) {
      if (mine !== seq) return;
      lastKey = "";
      $("#ex-status").textContent = `${t("error")}: ${e.message}`;
    }
  }

  function render(d, ctx) {
    const opening = language() === "en" && d.opening_en ? d.opening_en : d.opening; // study/ecco.py: name_en
    $("#ex-opening").textContent = d.ecco ? `${d.ecco} ${opening}` : t("ex_no_opening");
    const unknown = d.moves.reduce((s, m) => s + m.unknown, 0);
    // English singular: "1 game, 1 ends here" (Chinese has no plural)
    const one = (key, n) => (n === 1 && language() === "en" ? t(`${key}_one`) : t(key)).replace("{n}", fmt(n));
    let status = d.games ? one("ex_total", d.games) : "";
    if (d.ended) status += one("ex_ended", d.ended);
    if (unknown) status += ` · ${t("ex_unknown").replace("{n}", fmt(unknown))}`;
    $("#ex-status").textContent = status;
    $("#ex-note").textContent = ctx.kind === "editor" ? t("ex_edit_note") : "";
    $("#ex-note").hidden = ctx.kind !== "editor";
    const rows = $("#ex-rows");
    rows.replaceChildren();
    for (const m of d.moves) {
      const tr = el("tr");
      tr.dataset.move = m.move;
      const mv = el("td", "ex-mv");
      if (ctx.playable) {
        const b = el("button", "ex-play", m.text);
        b.type = "button";
        b.title = `${t("ex_play_title")} (${m.move})`;
        b.addEventListener("click", () => onPlay(m.move));
        mv.appendChild(b);
      } else {
        mv.textContent = m.text;
        mv.title = m.move;
      }
      tr.appendChild(mv);
      tr.appendChild(el("td", "num", fmt(m.games)));
      const score = el("td", "ex-score");
      if (m.red_pct === null) {
        score.textContent = "—";
      } else {
        const bar = el("div", "ex-bar");
        bar.setAttribute("role", "img");
        bar.setAttribute("aria-label", `${m.red_pct}% / ${m.draw_pct}% / ${m.black_pct}%`);
        for (const [cls, pct] of [["r", m.red_pct], ["d", m.draw_pct], ["b", m.black_pct]]) {
          const seg = el("span", cls, pct >= 12 ? `${Math.round(pct)}%` : "");
          seg.style.width = `${pct}%`;
          bar.appendChild(seg);
        }
        score.appendChild(bar);
      }
      tr.appendChild(score);
      tr.appendChild(el("td", "num", m.avg_year ? String(m.avg_year) : ""));
      rows.appendChild(tr);
    }
    $("#ex-table").hidden = d.moves.length === 0;
    const none = $("#ex-none");
    none.hidden = d.moves.length > 0;
    none.textContent = d.games ? "" : t("ex_none");
    if (!d.games) {
      api("/api/db/info").then((info) => {
        if (!info.master && !none.hidden) none.textContent = t("ex_empty_db");
      }).catch(() => {});
    }
    const top = $("#ex-top");
    top.replaceChildren();
    $("#ex-top-title").hidden = d.top.length === 0;
    for (const g of d.top) {
      const li = el("li");
      const b = el("button", "ex-game");
      b.type = "button";
      const players = `${playerName(g.red) || "?"} – ${playerName(g.black) || "?"}`;
      const res = { "1-0": "1-0", "0-1": "0-1", "1/2-1/2": "½-½" }[g.result] || "*";
      b.appendChild(el("span", "ex-g-date", g.date || g.date_raw || ""));
      b.appendChild(el("span", "ex-g-players", players));
      b.appendChild(el("span", "ex-g-res", res));
      if (g.next_text) b.appendChild(el("span", "ex-g-next", g.next_text));
      b.title = [g.event, g.ecco || g.ecco_computed].filter(Boolean).join(" · ");
      b.addEventListener("click", () => onOpenGame(g));
      li.appendChild(b);
      top.appendChild(li);
    }
    document.body.dataset.explorerGames = String(d.games);
  }

  button.addEventListener("click", () => toggle());
  $("#ex-close").addEventListener("click", () => toggle(false));
  $("#ex-source").addEventListener("change", () => { lastKey = ""; update(); });

  return {
    toggle, update,
    get shown() { return shown; },
    /** Re-render after a language change (the texts are rebuilt from the next answer). */
    refresh() { lastKey = ""; update(); setup.refresh(); },
  };
}
