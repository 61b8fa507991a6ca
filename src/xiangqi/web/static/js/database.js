// Database browser: the library dialog's 数据库 tab. Filters (player, event, date range, result, ECCO,
// comment text, source, and a position from the board with its mirror switch or similar positions)
// search the games database (GET /api/db/search); the list is paginated and each game opens in the
// record viewer (GET /api/db/games/{id}). The 我的对局 tab is the saved-game library as before.

import { TEXT, language, playerName, t } from "./i18n.js";
import { createJobPanel } from "./setup.js";

const $ = (sel) => document.querySelector(sel);
const PAGE = 20;

Object.assign(TEXT.zh, {
  db_tab: "数据库", mine_tab: "我的对局", db_player: "棋手", db_event: "赛事", db_from: "从", db_to: "到",
  db_ecco: "ECCO", db_comment: "注释含", db_source: "来源", db_search: "搜索", db_reset: "清除条件",
  db_position: "局面", db_mirror: "含镜像", db_similar: "相似局面", db_clear_position: "不按局面",
  db_search_position: "搜索此局面", db_total: "共 {n} 局", db_page: "{a}–{b} / {n}", db_prev: "上一页",
  db_next: "下一页", db_none: "没有符合条件的对局", db_ply: "步", db_event_col: "赛事", db_open: "打开",
  db_ranked: "按相似度排列", db_empty_db: "数据库还是空的（附带的大师对局可用 xiangqi db import --masters 导入）；保存的对局也会出现在这里。",
  db_mine_badge: "我的", date_hint: "年[-月[-日]]", db_any_result: "全部结果", db_unknown: "无结果",
});
Object.assign(TEXT.en, {
  db_tab: "Database", mine_tab: "My games", db_player: "Player", db_event: "Event", db_from: "From", db_to: "To",
  db_ecco: "ECCO", db_comment: "Comment has", db_source: "Source", db_search: "Search", db_reset: "Clear filters",
  db_position: "Position", db_mirror: "with mirror", db_similar: "similar positions", db_clear_position: "Any position",
  db_search_position: "Search this position", db_total: "{n} games", db_page: "{a}–{b} of {n}", db_prev: "Previous",
  db_next: "Next", db_none: "No game matches", db_ply: "Ply", db_event_col: "Event", db_open: "Open",
  db_ranked: "ranked by similarity", db_empty_db: "The database is empty (the master games that ship with the program: xiangqi db import --masters); saved games show here too.",
  db_mine_badge: "mine", date_hint: "YYYY[-MM[-DD]]", db_any_result: "All results", db_unknown: "No result",
});

const FIELDS = ["player", "event", "date_from", "date_to", "result", "ecco", "comment"];

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function fmt(n) {
  return Number(n).toLocaleString(language() === "zh" ? "zh-CN" : "en-US");
}

/** ``library``: the saved-game list (library.js); ``openGame(game, hit)``: show a database game. */
export function createDatabase({ api, library, openGame }) {
  let offset = 0;
  let fen = null; // the position searched for, or null
  let seq = 0;
  let timer = null;
  let tab = "db";
  // no master games yet (a new install): the offer to import the shipped ones (setup.js)
  const setup = createJobPanel({ api, name: "masters", box: $("#db-setup"), onDone: () => search() });


  function showTab(name) {
    tab = name;
    for (const b of document.querySelectorAll("#dlg-library .lib-tab")) {
      const on = b.dataset.tab === name;
      b.setAttribute("aria-selected", on ? "true" : "false");
      b.classList.toggle("on", on);
    }
    $("#db-pane").hidden = name !== "db";
    $("#mine-pane").hidden = name !== "mine";
    if (name === "mine") library.refresh().catch(() => {});
    else { search(); setup.offerMasters(); }
  }

  function params() {
    const p = new URLSearchParams({ limit: String(PAGE), offset: String(offset), source: $("#db-source").value });
    for (const f of FIELDS) {
      const v = $(`#db-${f.replace("_", "-")}`).value.trim();
      if (v) p.set(f, v);
    }
    if (fen) {
      p.set($("#db-similar").checked ? "similar" : "fen", fen);
      if ($("#db-mirror").checked) p.set("mirror", "true");
    }
    return p;
  }

  function later() {
    clearTimeout(timer);
    timer = setTimeout(() => { offset = 0; search(); }, 300);
  }

  async function search() {
    const mine = ++seq;
    const err = $("#db-error");
    try {
      const d = await api(`/api/db/search?${params()}`);
      if (mine !== seq) return;
      err.hidden = true;
      render(d);
    } catch (e) {
      if (mine !== seq) return;
      err.textContent = e.message;
      err.hidden = false;
    }
  }

  function render(d) {
    const body = $("#db-rows");
    body.replaceChildren();
    const similar = Boolean(fen && $("#db-similar").checked);
    $("#db-ply-head").hidden = !fen;
    for (const g of d.games) {
      const tr = el("tr");
      tr.dataset.id = String(g.id);
      const players = `${playerName(g.red) || "?"} – ${playerName(g.black) || "?"}`;
      const res = { "1-0": "1-0", "0-1": "0-1", "1/2-1/2": "½-½" }[g.result] || "*";
      const who = el("td", "db-players", players);
      if (g.collection === "mine") who.appendChild(el("span", "badge", t("db_mine_badge")));
      const cells = [el("td", "db-date", g.date || g.date_raw || ""), who, el("td", "db-res", res),
        el("td", "db-ecco", g.ecco || g.ecco_computed || ""), el("td", "db-event", g.event)];
      for (const c of cells) tr.appendChild(c);
      if (fen) {
        const ply = g.ply === null || g.ply === undefined ? "" : String(g.ply);
        const cell = el("td", "db-ply", similar && g.similarity !== null ? `${ply} · ${Math.round(g.similarity * 100)}%` : ply);
        if (g.mirrored) cell.title = t("db_mirror");
        tr.appendChild(cell);
      }
      const td = el("td");
      const b = el("button", "db-open", t("db_open"));
      b.type = "button";
      b.addEventListener("click", () => open(g));
      td.appendChild(b);
      tr.appendChild(td);
      body.appendChild(tr);
    }
    const n = d.total;
    const count = $("#db-count");
    if (similar) count.textContent = t("db_ranked");
    else if (n) count.textContent = t("db_page").replace("{a}", fmt(offset + 1))
      .replace("{b}", fmt(offset + d.games.length)).replace("{n}", fmt(n));
    else count.textContent = "";
    $("#db-prev").disabled = offset === 0;
    $("#db-next").disabled = similar ? d.games.length < PAGE : n === null || offset + d.games.length >= n;
    const empty = $("#db-empty");
    empty.hidden = d.games.length > 0;
    empty.textContent = t("db_none");
    if (!d.games.length && !offset) {
      api("/api/db/info").then((info) => { if (!info.games) empty.textContent = t("db_empty_db"); }).catch(() => {});
    }
    document.body.dataset.dbTotal = n === null ? "" : String(n);
  }

  async function open(hit) {
    const game = await api(`/api/db/games/${hit.id}`);
    $("#dlg-library").close();
    await openGame(game, hit);
  }

  function setPosition(value) {
    fen = value;
    $("#db-pos").hidden = !fen;
    $("#db-pos-fen").textContent = fen || "";
    $("#db-pos-fen").title = fen || "";
  }

  /** Open the dialog on ``name``'s tab (default: the last one shown). */
  function openDialog(name = tab) {
    if (!$("#dlg-library").open) $("#dlg-library").showModal();
    showTab(name);
  }

  /** The database tab filtered by ``position`` (a FEN), mirror switch on; the other filters kept. */
  function searchPosition(position) {
    setPosition(position);
    $("#db-mirror").checked = true;
    $("#db-similar").checked = false;
    offset = 0;
    openDialog("db");
  }

  for (const b of document.querySelectorAll("#dlg-library .lib-tab")) {
    b.addEventListener("click", () => showTab(b.dataset.tab));
  }
  for (const f of FIELDS) {
    const input = $(`#db-${f.replace("_", "-")}`);
    input.addEventListener(input.tagName === "SELECT" ? "change" : "input", later);
    input.addEventListener("keydown", (ev) => { if (ev.key === "Enter") { ev.preventDefault(); offset = 0; search(); } });
  }
  $("#db-source").addEventListener("change", () => { offset = 0; search(); });
  $("#db-mirror").addEventListener("change", () => { offset = 0; search(); });
  $("#db-similar").addEventListener("change", () => { offset = 0; search(); });
  $("#db-pos-clear").addEventListener("click", () => { setPosition(null); offset = 0; search(); });
  $("#db-reset").addEventListener("click", () => {
    for (const f of FIELDS) $(`#db-${f.replace("_", "-")}`).value = "";
    $("#db-source").value = "both";
    setPosition(null);
    offset = 0;
    search();
  });
  $("#db-prev").addEventListener("click", () => { offset = Math.max(0, offset - PAGE); search(); });
  $("#db-next").addEventListener("click", () => { offset += PAGE; search(); });

  return { openDialog, searchPosition, search, get tab() { return tab; } };
}
