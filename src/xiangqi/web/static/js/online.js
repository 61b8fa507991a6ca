// Online play on a public server (`xiangqi serve --public`): the page's account bar, the views
// (lobby, game, leaderboard, player profile) and the one lobby WebSocket. The contract with the
// server is docs/ONLINE_API.md; the server owns every game and clock, this page only shows them and
// sends the player's requests. The local page (app.js) calls startOnline() instead of its own start
// when GET /api/online/config answers {"public": true}.
//
// Views are addressed by the URL (so a reload or a reopened tab comes back to the same place):
//   /                     the lobby           /?game=ID            a game (played or watched)
//   /?leaderboard=blitz   the leaderboard     /?player=NAME        a player's profile
//   /?challenge=ID        a friend's challenge link, shown over the lobby

import "./onlinetext.js";
import { applyLanguage, fill, language, t } from "./i18n.js";
import { message } from "./messages.js";
import { request, socket } from "./net.js";
import { createLobby } from "./lobby.js";
import { createOnlineGame } from "./onlinegame.js";
import { createOnlineProfile } from "./onlineprofile.js";

const $ = (sel) => document.querySelector(sel);

/** A refusal from the server: ``status``, ``code`` (docs/ONLINE_API.md section 2), ``detail`` (English),
 *  ``retryAfter`` (seconds, for 429) and the whole ``body``. */
export class OnlineError extends Error {
  constructor(status, body, retryAfter) {
    const detail = body && typeof body === "object" ? body.detail : body;
    super(typeof detail === "string" ? detail : JSON.stringify(detail));
    this.status = status;
    this.body = body && typeof body === "object" ? body : {};
    this.code = this.body.code || (status === 422 ? "invalid" : status === 429 ? "rate_limited" : "");
    this.detail = detail;
    this.retryAfter = retryAfter;
  }
}

/** JSON from ``path`` on this server (``body`` sent as JSON); a refusal throws an OnlineError. */
export async function call(path, { method = "GET", body } = {}) {
  const options = { method, cache: "no-store" };
  if (body !== undefined) {
    options.headers = { "Content-Type": "application/json" };
    options.body = JSON.stringify(body);
  }
  const res = await request(path, options);
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = text; }
  if (!res.ok) {
    const header = Number(res.headers.get("Retry-After"));
    const retry = (data && typeof data === "object" && Number(data.retry_after)) || (header > 0 ? header : 0);
    throw new OnlineError(res.status, data, Math.ceil(retry));
  }
  return data;
}

// The server's English account messages (xiangqi/online/accounts.py) and what the page says instead.
const ACCOUNT_RULES = [
  [/username .*is taken|taken/i, "ol_err_taken"],
  [/has \d+-\d+ characters|username must be text/i, "ol_err_name_len"],
  [/letters, digits/i, "ol_err_name_chars"],
  [/starts with a letter or a digit/i, "ol_err_name_start"],
  [/is reserved/i, "ol_err_reserved"],
  [/password has \d+-\d+ characters|password must be text/i, "ol_err_pw_len"],
  [/password must not be the username/i, "ol_err_pw_name"],
  [/wrong username or password|no such account/i, "ol_err_bad_login"],
  [/guest.*rated|rated.*guest/i, "ol_err_guest_rated"],
  [/one open seek|already.*seek/i, "ol_err_one_seek"],
];

/** An error (an OnlineError or any other) as a sentence in the page's language; ``name`` fills
 *  the username into the account messages. */
export function errorText(err, { name = "", seek = false } = {}) {
  if (!(err instanceof OnlineError)) return `${t("error")}: ${err && err.message ? err.message : err}`;
  if (err.code === "rate_limited") return fill(t(seek ? "ol_err_seek_rate" : "ol_err_rate"), { s: err.retryAfter || 1 });
  if (err.code === "db_unavailable") return fill(t("ol_err_db_unavailable"), { s: err.retryAfter || 5 });
  if (err.code === "presence_unknown") return fill(t("ol_err_presence_unknown"), { s: err.retryAfter || 5 });
  const detail = Array.isArray(err.detail)
    ? err.detail.map((e) => (e && e.msg) || "").join("; ") : String(err.detail || "");
  for (const [re, key] of ACCOUNT_RULES) if (re.test(detail)) return fill(t(key), { name });
  const byCode = {
    login_required: "ol_err_login_required", not_found: "ol_err_not_found", not_your_turn: "ol_err_not_your_turn",
    game_over: "ol_err_game_over", not_your_seat: "ol_err_not_your_seat", csrf: "ol_err_csrf",
    bad_login: "ol_err_bad_login", stale_version: "ol_err_stale", too_many_games: "ol_err_computer_games",
  }[err.code];
  if (byCode) return t(byCode);
  if (err.code === "taken" || err.code === "conflict") return fill(t("ol_err_conflict"), { why: message(detail) });
  return message(err.detail);
}

/** A user as shown: the username; a computer seat by its level in the page's language. */
export function userName(u) {
  if (!u) return "?";
  if (u.kind === "engine") return language() === "zh" ? `${t("computer")}·${u.username}` : `${t("computer")} (${u.username_en || u.username})`;
  return u.username;
}

/** A rating as shown: 1512 with a provisional mark (1512?) while its RD is high. */
export function ratingText(r) {
  if (!r) return "";
  return `${Math.round(r.rating)}${r.provisional ? t("ol_provisional_mark") : ""}`;
}

/** A time control's words (局时5分 加时3秒 / 5 min + 3 s) from the server's list, "" when unknown. */
export function tcTitle(cfg, key) {
  const tc = (cfg && cfg.time_controls || []).find((x) => x.key === key);
  if (!tc) return "";
  return language() === "zh" ? tc.describe_zh || "" : tc.describe_en || "";
}

export function categoryName(cat) {
  const key = `cat_${cat}`;
  return t(key) === key ? cat : t(key);
}

function el(tag, attrs = {}, parent = null, text = null) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false || v === null || v === undefined) continue;
    node.setAttribute(k, v === true ? "" : String(v));
  }
  if (text !== null) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}
export { el };

/** The online page. ``board`` is the page's board component; ``toast`` and ``confirmDialog`` the
 *  page's message line and yes/no dialog; ``notation()`` the move notation chosen (chinese, wxf,
 *  iccs) and ``settings()`` the page's settings (traditional pieces). */
export function createOnline({ board, toast, confirmDialog, notation, settings }) {
  const ctx = {
    cfg: null, me: null, board, toast, confirmDialog, notation, settings, call, go, errorText, refreshMe, el,
    get lobbyState() { return lobbyState; },
  };
  let lobbyState = null;
  let lobbyWs = null;
  let lobbyDelay = 500;
  let route = { view: "lobby" };

  // -- the top bar: views and the account --------------------------------------------------
  const nav = el("nav", { class: "ol-nav", "aria-label": "online" });
  const bLobby = el("button", { type: "button", id: "ol-nav-lobby", "data-i18n": "ol_lobby" }, nav);
  const bBoard = el("button", { type: "button", id: "ol-nav-leaderboard", "data-i18n": "ol_leaderboard" }, nav);
  const account = el("div", { class: "ol-account", id: "ol-account" });
  $(".topbar h1").after(nav);
  $(".topbar").appendChild(account);
  bLobby.addEventListener("click", () => go({ view: "lobby" }));
  bBoard.addEventListener("click", () => go({ view: "leaderboard" }));

  function renderAccount() {
    account.replaceChildren();
    const u = ctx.me && ctx.me.user;
    document.body.dataset.olUser = u ? u.username : "";
    document.body.dataset.olKind = u ? u.kind : "";
    if (u && u.kind === "user") {
      const name = el("button", { type: "button", id: "ol-me", class: "ol-me link", title: fill(t("ol_signed_in"), { name: u.username }) }, account, u.username);
      name.addEventListener("click", () => go({ view: "player", name: u.username }));
      const out = el("button", { type: "button", id: "ol-logout" }, account, t("ol_logout"));
      out.addEventListener("click", logout);
      return;
    }
    if (u && u.kind === "guest") el("span", { class: "ol-me guest", id: "ol-me", title: t("ol_guest_note") }, account, u.username);
    const login = el("button", { type: "button", id: "ol-login", class: "primary" }, account, t("ol_login"));
    login.addEventListener("click", () => openAccount("login"));
    const reg = el("button", { type: "button", id: "ol-register" }, account, t("ol_register"));
    reg.addEventListener("click", () => openAccount("register"));
  }

  // -- the account dialog ---------------------------------------------------------------------
  const dlg = el("dialog", { id: "dlg-account" }, document.body);
  const form = el("form", { class: "dlg ol-account-form", novalidate: true }, dlg);
  const tabs = el("div", { class: "lib-tabs ol-tabs", role: "tablist" }, form);
  const tabLogin = el("button", { type: "button", class: "lib-tab", role: "tab", "data-tab": "login", "data-i18n": "ol_login" }, tabs);
  const tabReg = el("button", { type: "button", class: "lib-tab", role: "tab", "data-tab": "register", "data-i18n": "ol_register" }, tabs);
  const nameRow = el("label", { class: "ol-field" }, form);
  el("span", { "data-i18n": "ol_username" }, nameRow);
  const nameIn = el("input", { id: "ol-username", name: "username", autocomplete: "username", maxlength: 40, required: true }, nameRow);
  const nameRule = el("small", { class: "hint-text", "data-i18n": "ol_username_rule" }, form);
  const pwRow = el("label", { class: "ol-field" }, form);
  el("span", { "data-i18n": "ol_password" }, pwRow);
  const pwIn = el("input", { id: "ol-password", name: "password", type: "password", maxlength: 128, required: true }, pwRow);
  const pwRule = el("small", { class: "hint-text", "data-i18n": "ol_password_rule" }, form);
  const errLine = el("p", { id: "ol-account-error", class: "problems", role: "alert", hidden: true }, form);
  const menu = el("menu", {}, form);
  const cancel = el("button", { type: "button", value: "cancel", "data-i18n": "cancel" }, menu);
  const submit = el("button", { type: "submit", id: "ol-account-submit", class: "primary" }, menu);
  let mode = "login";
  let waitTimer = null;

  function setMode(m) {
    mode = m;
    for (const b of [tabLogin, tabReg]) {
      const on = b.dataset.tab === m;
      b.classList.toggle("on", on);
      b.setAttribute("aria-selected", String(on));
    }
    nameRule.hidden = pwRule.hidden = m !== "register";
    pwIn.autocomplete = m === "register" ? "new-password" : "current-password";
    submit.textContent = t(m === "register" ? "ol_register" : "ol_login");
    dlg.dataset.mode = m;
    showError("");
  }
  tabLogin.addEventListener("click", () => setMode("login"));
  tabReg.addEventListener("click", () => setMode("register"));
  cancel.addEventListener("click", () => dlg.close());

  function showError(text) {
    errLine.textContent = text;
    errLine.hidden = !text;
  }

  /** The page's own check of the rules the server applies (accounts.py), said before a round trip. */
  function localProblem(name, pw) {
    const n = name.normalize("NFKC");
    if ([...n].length < 3 || [...n].length > 20) return t("ol_err_name_len");
    if (!/^[\p{L}\p{N}_-]+$/u.test(n)) return t("ol_err_name_chars");
    if (!/^[\p{L}\p{N}]/u.test(n)) return t("ol_err_name_start");
    if (mode === "register") {
      if (pw.length < 8 || pw.length > 128) return t("ol_err_pw_len");
      if (pw === name || pw.normalize("NFKC").toLowerCase() === n.toLowerCase()) return t("ol_err_pw_name");
    }
    return "";
  }

  /** Refuse the form for ``s`` seconds, counting down in the error line (a rate limit). */
  function waitFor(s) {
    clearInterval(waitTimer);
    let left = s;
    submit.disabled = true;
    const tick = () => {
      if (left <= 0) { clearInterval(waitTimer); submit.disabled = false; showError(""); return; }
      showError(fill(t("ol_err_rate"), { s: left }));
      errLine.dataset.wait = String(left);
      left -= 1;
    };
    tick();
    waitTimer = setInterval(tick, 1000);
  }

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const name = nameIn.value.trim(), pw = pwIn.value;
    const bad = localProblem(name, pw);
    if (bad) { showError(bad); return; }
    submit.disabled = true;
    try {
      ctx.me = await call(`/api/online/${mode}`, { method: "POST", body: { username: name, password: pw } });
      submit.disabled = false;
      pwIn.value = "";
      dlg.close();
      toast(fill(t("ol_signed_in"), { name: ctx.me.user.username }));
      changedIdentity();
    } catch (e) {
      submit.disabled = false;
      if (e instanceof OnlineError && e.code === "rate_limited") waitFor(e.retryAfter || 1);
      else showError(errorText(e, { name }));
    }
  });

  function openAccount(m = "login") {
    setMode(m);
    showError("");
    applyLanguage(dlg);
    setMode(m);
    if (!dlg.open) dlg.showModal();
    nameIn.focus();
  }
  ctx.openAccount = openAccount;

  async function logout() {
    try {
      await call("/api/online/logout", { method: "POST" });
    } catch (e) {
      toast(errorText(e));
    }
    await refreshMe();
    changedIdentity();
  }

  /** Become a guest (casual games only) unless already a user or guest. */
  ctx.ensurePlayer = async () => {
    if (ctx.me && ctx.me.user) return true;
    try {
      ctx.me = await call("/api/online/guest", { method: "POST" });
      changedIdentity();
      return true;
    } catch (e) {
      toast(errorText(e));
      return false;
    }
  };

  async function refreshMe() {
    try { ctx.me = await call("/api/online/me"); } catch { /* keep the last one */ }
    renderAccount();
    return ctx.me;
  }

  /** After a login, logout or becoming a guest: the lobby socket speaks for the new identity. */
  function changedIdentity() {
    renderAccount();
    connectLobby(true);
    views.lobby.render();
    if (route.view === "game") views.game.reconnect();
  }

  // -- the lobby socket ------------------------------------------------------------------------
  function connectLobby(fresh = false) {
    if (lobbyWs && !fresh && lobbyWs.readyState <= 1) return;
    if (lobbyWs) { lobbyWs.onclose = null; lobbyWs.close(); }
    const ws = socket("/ws/online/lobby");
    lobbyWs = ws;
    ws.onopen = () => { lobbyDelay = 500; document.body.dataset.olLobby = "1"; };
    ws.onmessage = (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch { return; }
      if (msg.type === "lobby") {
        lobbyState = msg.lobby;
        views.lobby.update(lobbyState);
      } else if (msg.type === "game_start") {
        views.lobby.started(msg);
        go({ view: "game", id: msg.game_id });
      } else if (msg.type === "ping") {
        ws.send(JSON.stringify({ type: "pong", id: msg.id }));
      }
    };
    ws.onclose = () => {
      document.body.dataset.olLobby = "0";
      if (lobbyWs !== ws) return;
      setTimeout(() => { if (lobbyWs === ws) connectLobby(true); }, lobbyDelay);
      lobbyDelay = Math.min(lobbyDelay * 2, 8000);
    };
  }

  // -- views and the URL -------------------------------------------------------------------------
  const main = el("main", { id: "online-main", class: "ol-main", hidden: true });
  $("main.layout").after(main);
  ctx.main = main;
  const views = {
    lobby: createLobby(ctx),
    game: createOnlineGame(ctx),
    profile: createOnlineProfile(ctx),
  };

  function routeFromUrl() {
    const q = new URLSearchParams(location.search);
    if (q.get("game")) return { view: "game", id: q.get("game") };
    if (q.get("player")) return { view: "player", name: q.get("player") };
    if (q.has("leaderboard")) return { view: "leaderboard", category: q.get("leaderboard") || "" };
    if (q.get("challenge")) return { view: "lobby", challenge: q.get("challenge") };
    return { view: "lobby" };
  }

  function urlOf(r) {
    if (r.view === "game") return `/?game=${encodeURIComponent(r.id)}`;
    if (r.view === "player") return `/?player=${encodeURIComponent(r.name)}`;
    if (r.view === "leaderboard") return `/?leaderboard=${encodeURIComponent(r.category || "")}`;
    if (r.challenge) return `/?challenge=${encodeURIComponent(r.challenge)}`;
    return "/";
  }

  /** Show the view of ``r`` (and put it in the address bar unless ``replace`` is null). */
  function go(r, { push = true } = {}) {
    const url = urlOf(r);
    if (push && url !== location.pathname + location.search) history.pushState(null, "", url);
    show(r);
  }

  function show(r) {
    const leaving = route;
    route = r;
    if (leaving.view === "game" && (r.view !== "game" || r.id !== leaving.id)) views.game.close();
    const onBoard = r.view === "game";
    document.body.classList.toggle("ol-game", onBoard);
    document.body.classList.toggle("ol-page", !onBoard);
    document.body.dataset.olView = r.view;
    main.hidden = onBoard;
    $("main.layout").hidden = !onBoard;
    bLobby.classList.toggle("on", r.view === "lobby");
    bBoard.classList.toggle("on", r.view === "leaderboard");
    views.lobby.show(r.view === "lobby", r.challenge || null);
    views.profile.show(r);
    if (onBoard) views.game.open(r.id);
  }

  window.addEventListener("popstate", () => show(routeFromUrl()));

  /** Start the online page with the server's config (GET /api/online/config). */
  async function start(cfg) {
    ctx.cfg = cfg;
    ctx.me = cfg.me || null;
    document.body.classList.add("public");
    applyLanguage();
    renderAccount();
    connectLobby();
    let r = routeFromUrl();
    // a reopened tab: back into the game the player was in
    if (r.view === "lobby" && !r.challenge && ctx.me && (ctx.me.playing || []).length) {
      r = { view: "game", id: ctx.me.playing[0] };
      history.replaceState(null, "", urlOf(r));
    }
    show(r);
  }

  /** The language changed: every view redraws its texts. */
  function refresh() {
    if (!ctx.cfg) return;
    renderAccount();
    applyLanguage(dlg);
    submit.textContent = t(mode === "register" ? "ol_register" : "ol_login");
    views.lobby.render();
    views.game.render();
    views.profile.render();
  }

  /** Keys for the online page: only the game view's (f flips the board); true when handled. */
  function key(ev) {
    if (route.view === "game") return views.game.key(ev);
    return false;
  }

  window.xqOnline = ctx; // read by the browser tests
  ctx.views = views;
  return { start, refresh, key, get active() { return Boolean(ctx.cfg); } };
}
