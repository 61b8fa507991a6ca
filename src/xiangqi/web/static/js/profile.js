// The profile page (我的等级): the player's Glicko-2 rating with its rank name, RD and games, an SVG
// chart of the rating history (the line with its ±RD band) and the recent rated games. Data from
// GET /api/coach/profile (web/coach_api.py); the dialog is built here, opened from the top bar.

import { LEVEL_NAMES, fill, language, t } from "./i18n.js";

const SVG = "http://www.w3.org/2000/svg";

function el(tag, attrs = {}, parent = null, text = null) {
  const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== null) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

/** A level key as shown (初级, 自适应 …). */
function levelName(key) {
  return (LEVEL_NAMES[language()] || {})[key] || key;
}

/** A signed whole number: +12, −8 (a real minus sign), ±0. */
export function signed(n) {
  const v = Math.round(n);
  if (v > 0) return `+${v}`;
  if (v < 0) return `−${-v}`;
  return "±0";
}

/** The rating line of the result dialog for a finished game's state: the change of a rated game
 *  (等级分 1500 → 1462（−38）· 常侍), why an unrated one is not rated, "" for a game without the coach. */
export function ratingLine(st) {
  const c = st && st.coach;
  if (!c) return "";
  if (c.rating) {
    return fill(t("rating_change"), { before: c.rating.before, after: c.rating.after, delta: signed(c.rating.delta),
      rank: c.rating.rank || "" });
  }
  if (c.reason === "not_vs_computer") return "";
  return language() === "zh" ? c.why_zh : c.why_en;
}

/** The rating history as an SVG line chart (ratings with a ±RD band), ``history`` oldest first. */
export function chart(history, width = 640, height = 220) {
  const svg = el("svg:svg", { viewBox: `0 0 ${width} ${height}`, class: "pf-chart", role: "img",
    "aria-label": t("profile_chart") });
  const pad = { l: 44, r: 12, t: 12, b: 26 };
  if (!history.length) {
    el("svg:text", { x: width / 2, y: height / 2, "text-anchor": "middle", class: "pf-empty" }, svg, t("profile_no_games"));
    return svg;
  }
  const pts = [{ rating: history[0].rating - history[0].delta, rd: null }, ...history];
  const lo = Math.min(...pts.map((p) => p.rating - (p.rd || 0)));
  const hi = Math.max(...pts.map((p) => p.rating + (p.rd || 0)));
  const step = hi - lo > 600 ? 200 : hi - lo > 250 ? 100 : 50;
  const y0 = Math.floor(lo / step) * step, y1 = Math.ceil(hi / step) * step || y0 + step;
  const X = (i) => pad.l + (pts.length === 1 ? 0 : (i / (pts.length - 1)) * (width - pad.l - pad.r));
  const Y = (v) => pad.t + (1 - (v - y0) / Math.max(1, y1 - y0)) * (height - pad.t - pad.b);
  for (let v = y0; v <= y1; v += step) {
    el("svg:line", { x1: pad.l, x2: width - pad.r, y1: Y(v), y2: Y(v), class: "pf-grid" }, svg);
    el("svg:text", { x: pad.l - 6, y: Y(v) + 4, "text-anchor": "end", class: "pf-axis" }, svg, String(v));
  }
  const band = pts.map((p, i) => [i, p.rd]).filter(([, rd]) => rd !== null);
  if (band.length) {
    const up = band.map(([i]) => `${X(i)},${Y(pts[i].rating + pts[i].rd)}`);
    const down = band.slice().reverse().map(([i]) => `${X(i)},${Y(pts[i].rating - pts[i].rd)}`);
    el("svg:polygon", { points: [...up, ...down].join(" "), class: "pf-band" }, svg);
  }
  el("svg:polyline", { points: pts.map((p, i) => `${X(i)},${Y(p.rating)}`).join(" "), class: "pf-line" }, svg);
  pts.forEach((p, i) => {
    if (i === 0) return;
    const dot = el("svg:circle", { cx: X(i), cy: Y(p.rating), r: pts.length > 60 ? 1.8 : 3.2,
      class: `pf-dot s${String(p.score).replace(".", "")}` }, svg);
    el("svg:title", {}, dot, `${p.date.slice(0, 10)} · ${levelName(p.level)} · ${Math.round(p.rating)} (${signed(p.delta)})`);
  });
  el("svg:text", { x: pad.l, y: height - 6, class: "pf-axis" }, svg, t("profile_first"));
  el("svg:text", { x: width - pad.r, y: height - 6, "text-anchor": "end", class: "pf-axis" }, svg,
    fill(t("profile_games_n"), { n: history.length }));
  return svg;
}

/** The profile dialog; ``api`` is the page's fetch wrapper, ``toast`` its message line. */
export function createProfile({ api, toast }) {
  const dlg = el("dialog", { id: "dlg-profile" }, document.body);
  const form = el("form", { method: "dialog", class: "dlg wide" }, dlg);
  const title = el("h2", {}, form);
  const head = el("div", { class: "pf-head" }, form);
  const chartBox = el("div", { class: "pf-chart-box" }, form);
  const recentTitle = el("h3", {}, form);
  const table = el("table", { class: "lib-table pf-recent" }, form);
  const menu = el("menu", {}, form);
  const close = el("button", { value: "close" }, menu);

  function render(p) {
    title.textContent = t("profile");
    head.replaceChildren();
    el("span", { class: "pf-rating", id: "pf-rating" }, head, String(Math.round(p.rating)));
    el("span", { class: "pf-rank", id: "pf-rank" }, head, p.rank || "");
    el("span", { class: "pf-rd" }, head, fill(t("profile_rd"), { rd: Math.round(p.rd) }));
    el("span", { class: "pf-games", id: "pf-games" }, head, fill(t("profile_games_n"), { n: p.games }));
    if (p.provisional) el("span", { class: "pf-prov" }, head, t("profile_provisional"));
    chartBox.replaceChildren(chart(p.history));
    recentTitle.textContent = t("profile_recent");
    table.replaceChildren();
    const headRow = el("tr", {}, el("thead", {}, table));
    for (const k of ["date", "level", "result", "profile_rating"]) el("th", {}, headRow, t(k));
    const body = el("tbody", {}, table);
    if (!p.recent.length) {
      el("td", { colspan: 4, class: "empty" }, el("tr", {}, body), t("profile_no_games"));
    }
    for (const r of p.recent) {
      const tr = el("tr", {}, body);
      el("td", {}, tr, r.date.slice(0, 10));
      el("td", {}, tr, `${levelName(r.level)} ${r.opponent_elo}`);
      el("td", {}, tr, t(r.score === 1 ? "profile_win" : r.score === 0 ? "profile_loss" : "profile_draw"));
      el("td", { class: r.delta >= 0 ? "up" : "down" }, tr, `${Math.round(r.rating)} (${signed(r.delta)})`);
    }
    close.textContent = t("close");
  }

  async function open() {
    try {
      const p = await api("/api/coach/profile");
      render(p);
      if (!dlg.open) dlg.showModal();
    } catch (e) {
      toast(`${t("error")}: ${e.message}`);
    }
  }

  return { open, element: dlg };
}
