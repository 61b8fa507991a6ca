// The leaderboard (per rating category) and a player's profile: ratings per category with their
// rank names and provisional marks, the record of wins/losses/draws, the rating chart (profile.js's
// chart, fed the online history) and the recent games. Data: GET /api/online/leaderboard and
// GET /api/online/players/{name} (docs/ONLINE_API.md section 4).

import { fill, language, t } from "./i18n.js";
import { chart } from "./profile.js";
import { categoryName, el, ratingText, userName } from "./online.js";

const CATEGORIES = ["bullet", "blitz", "rapid", "classical"];

function categoryKeys(cfg) {
  const list = (cfg && cfg.categories) || [];
  const keys = list.map((c) => (typeof c === "string" ? c : c.key || c.category)).filter(Boolean);
  return keys.length ? keys : CATEGORIES;
}

/** The player's score in a finished game summary: 1, 0.5, 0, or null (not theirs, unfinished). */
function scoreOf(game, username) {
  const color = game.red && game.red.username === username ? "red" : game.black && game.black.username === username ? "black" : null;
  if (!color || !game.result) return null;
  if (game.result === "1/2-1/2") return 0.5;
  return (game.result === "1-0") === (color === "red") ? 1 : 0;
}

export function createOnlineProfile(ctx) {
  const board = el("section", { id: "ol-leaderboard", class: "ol-card ol-board-view", hidden: true }, ctx.main);
  const player = el("section", { id: "ol-player", class: "ol-card ol-player-view", hidden: true }, ctx.main);
  let route = { view: "lobby" };
  let boardData = null;
  let playerData = null;
  let chartCategory = null;

  function userLink(parent, user) {
    if (!user || user.kind !== "user") { el("span", { class: "ol-user" }, parent, userName(user)); return; }
    const a = el("a", { href: `/?player=${encodeURIComponent(user.username)}`, class: "ol-user" }, parent, user.username);
    a.addEventListener("click", (ev) => { ev.preventDefault(); ctx.go({ view: "player", name: user.username }); });
  }

  // -- the leaderboard ------------------------------------------------------------------------------
  async function loadBoard(category) {
    boardData = { category, loading: true, players: [] };
    renderBoard();
    try {
      boardData = await ctx.call(`/api/online/leaderboard?category=${encodeURIComponent(category)}&limit=50`);
    } catch (e) {
      boardData = { category, players: [], error: ctx.errorText(e) };
    }
    renderBoard();
  }

  function renderBoard() {
    board.replaceChildren();
    el("h2", {}, board, t("ol_leaderboard"));
    const cat = route.category || "blitz";
    const tabs = el("div", { class: "lib-tabs ol-tabs ol-cats", role: "tablist" }, board);
    for (const c of categoryKeys(ctx.cfg)) {
      const b = el("button", { type: "button", class: `lib-tab${c === cat ? " on" : ""}`, role: "tab",
        "aria-selected": String(c === cat), "data-category": c }, tabs, categoryName(c));
      b.addEventListener("click", () => ctx.go({ view: "leaderboard", category: c }));
    }
    if (!boardData) return;
    if (boardData.error) { el("p", { class: "problems" }, board, boardData.error); return; }
    const table = el("table", { class: "lib-table ol-ranking", id: "ol-ranking" }, board);
    const hr = el("tr", {}, el("thead", {}, table));
    for (const k of ["ol_rank", "ol_player", "profile_rating", "ol_rank_name", "ol_games"]) {
      el("th", { class: ["ol_rank", "profile_rating", "ol_games"].includes(k) ? "num" : "" }, hr, t(k));
    }
    const body = el("tbody", {}, table);
    if (!boardData.loading && !boardData.players.length) el("td", { colspan: 5, class: "empty" }, el("tr", {}, body), t("ol_nobody"));
    for (const p of boardData.players) {
      const tr = el("tr", { "data-user": p.user.username, class: p.provisional ? "provisional" : "" }, body);
      el("td", { class: "num" }, tr, String(p.rank));
      userLink(el("td", {}, tr), p.user);
      el("td", { class: "num", title: p.provisional ? t("ol_provisional") : "" }, tr, ratingText(p));
      el("td", {}, tr, p.rank_zh || "");
      el("td", { class: "num" }, tr, String(p.games ?? ""));
    }
  }

  // -- a player's profile ------------------------------------------------------------------------------
  async function loadPlayer(name) {
    playerData = { loading: true, name };
    renderPlayer();
    try {
      playerData = await ctx.call(`/api/online/players/${encodeURIComponent(name)}`);
    } catch (e) {
      playerData = { name, error: ctx.errorText(e) };
    }
    chartCategory = null;
    renderPlayer();
  }

  /** The online history of one category in profile.js's chart shape (oldest first). */
  function chartHistory(category) {
    const hist = (playerData.history && playerData.history[category]) || [];
    const games = new Map((playerData.games || []).map((g) => [g.id, g]));
    const me = playerData.user.username;
    let before = 1500;
    return hist.map((h) => {
      const g = games.get(h.game_id);
      const opp = g ? (g.red && g.red.username === me ? g.black : g.red) : null;
      const point = { rating: h.rating, rd: h.rd, delta: h.rating - before, date: h.at || "", score: g ? scoreOf(g, me) : null,
        level: opp ? userName(opp) : "" };
      before = h.rating;
      return point;
    });
  }

  function renderPlayer() {
    player.replaceChildren();
    const p = playerData;
    if (!p) return;
    if (p.loading) { el("h2", {}, player, p.name); return; }
    if (p.error) { el("h2", {}, player, p.name); el("p", { class: "problems", id: "ol-player-error" }, player, p.error); return; }
    const name = p.user.username;
    el("h2", { id: "ol-player-name" }, player, fill(t("ol_profile_of"), { name }));
    const s = p.stats || {};
    const since = p.created_at ? fill(t("ol_member_since"), { date: p.created_at.slice(0, 10) }) : "";
    el("p", { class: "ol-meta", id: "ol-player-stats" }, player,
      [since, fill(t("ol_stats"), { games: s.games ?? 0, wins: s.wins ?? 0, losses: s.losses ?? 0, draws: s.draws ?? 0 })].filter(Boolean).join(" · "));

    const cards = el("div", { class: "ol-ratings", id: "ol-ratings" }, player);
    const ratings = p.ratings || [];
    if (!ratings.length) el("p", { class: "empty" }, cards, t("ol_no_rated"));
    for (const r of ratings) {
      const c = el("div", { class: `ol-rating-card${r.provisional ? " provisional" : ""}`, "data-category": r.category,
        "data-rating": Math.round(r.rating) }, cards);
      el("div", { class: "ol-cat" }, c, categoryName(r.category));
      el("div", { class: "pf-rating" }, c, ratingText(r));
      el("div", { class: "pf-rank" }, c, r.rank_zh || "");
      el("div", { class: "hint-text" }, c, `${t("ol_rd")} ±${Math.round(r.rd)} · ${fill(t("profile_games_n"), { n: r.games })}`);
      if (r.provisional) el("div", { class: "pf-prov" }, c, t("ol_provisional"));
    }

    const withHistory = Object.keys(p.history || {}).filter((k) => (p.history[k] || []).length);
    if (withHistory.length) {
      const head = el("div", { class: "ol-list-head" }, player);
      el("h3", {}, head, t("ol_history"));
      chartCategory = withHistory.includes(chartCategory) ? chartCategory : withHistory[0];
      if (withHistory.length > 1) {
        const sel = el("select", { id: "ol-chart-category", "aria-label": t("ol_category") }, head);
        for (const k of withHistory) sel.appendChild(new Option(categoryName(k), k, false, k === chartCategory));
        sel.addEventListener("change", () => { chartCategory = sel.value; renderPlayer(); });
      }
      el("div", { class: "pf-chart-box", id: "ol-chart" }, player).appendChild(chart(chartHistory(chartCategory)));
    }

    el("h3", {}, player, t("ol_recent_games"));
    const table = el("table", { class: "lib-table ol-player-games", id: "ol-player-games" }, player);
    const hr = el("tr", {}, el("thead", {}, table));
    for (const k of ["ol_date", "ol_opponent", "ol_color", "ol_time_control", "ol_result", ""]) el("th", {}, hr, k ? t(k) : "");
    const body = el("tbody", {}, table);
    if (!(p.games || []).length) el("td", { colspan: 6, class: "empty" }, el("tr", {}, body), t("profile_no_games"));
    for (const g of p.games || []) {
      const color = g.red && g.red.username === name ? "red" : "black";
      const opp = color === "red" ? g.black : g.red;
      const tr = el("tr", { "data-game": g.id }, body);
      el("td", {}, tr, (g.finished_at || g.started_at || "").slice(0, 10));
      userLink(el("td", {}, tr), opp);
      el("td", { class: `ol-side ${color}` }, tr, t(color));
      el("td", {}, tr, `${g.time_control} ${t(g.rated ? "ol_rated" : "ol_casual")}`);
      const sc = scoreOf(g, name);
      const term = g.termination ? t(`term_${g.termination}`).replace(/^term_/, "") : "";
      const res = g.status === "playing" ? t("ol_ongoing") : g.status === "aborted" ? t("term_aborted")
        : `${t(sc === 1 ? "ol_win" : sc === 0 ? "ol_loss" : "ol_draw")}${term ? ` · ${term}` : ""}`;
      el("td", { class: sc === 1 ? "up" : sc === 0 ? "down" : "" }, tr, res);
      const td = el("td", { class: "ol-act" }, tr);
      const b = el("button", { type: "button", class: "ol-open" }, td, g.status === "playing" ? t("ol_watch") : t("ol_open_game"));
      b.addEventListener("click", () => ctx.go({ view: "game", id: g.id }));
    }
  }

  return {
    show(r) {
      route = r;
      board.hidden = r.view !== "leaderboard";
      player.hidden = r.view !== "player";
      if (r.view === "leaderboard") {
        if (!r.category) r.category = "blitz";
        loadBoard(r.category);
      }
      if (r.view === "player") loadPlayer(r.name);
    },
    render() {
      if (route.view === "leaderboard") renderBoard();
      if (route.view === "player") renderPlayer();
    },
    get language() { return language(); },
  };
}
