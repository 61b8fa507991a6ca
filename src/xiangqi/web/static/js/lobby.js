// The online lobby: create a seek (a preset time control, rated or casual, a side), the open seeks
// (accept one, cancel one's own), a challenge link for a friend, the computer at every level, and
// the games in progress to watch with their watch counts. Live from the lobby WebSocket (online.js
// passes each {"type": "lobby"} message to update()). Contract: docs/ONLINE_API.md sections 4 and 6.

import { fill, language, t } from "./i18n.js";
import { categoryName, el, ratingText, tcTitle, userName } from "./online.js";

export function createLobby(ctx) {
  const root = ctx.el("section", { id: "ol-lobby", class: "ol-lobby", hidden: true }, ctx.main);
  const left = el("div", { class: "ol-card ol-create" }, root);
  const right = el("div", { class: "ol-card ol-lists" }, root);

  const choice = { tc: "", rated: false, color: "random" };
  let state = null; // the last lobby message
  let myChallenge = null; // the challenge this page made: {id, url, ...}
  let shownChallenge = null; // a friend's challenge opened by its link: the id
  let challengeView = null; // its GET /challenges/{id} answer, or "gone"
  let visible = false;

  function me() {
    return ctx.me && ctx.me.user;
  }

  function isMine(user) {
    const m = me();
    return Boolean(m && user && String(user.id) === String(m.id));
  }

  function colorText(c) {
    return t(c === "red" ? "ol_color_red" : c === "black" ? "ol_color_black" : "ol_color_random");
  }

  // -- the create card ---------------------------------------------------------------------------
  function renderCreate() {
    left.replaceChildren();
    const cfg = ctx.cfg || {};
    const tcs = cfg.time_controls || [];
    if (!choice.tc && tcs.length) choice.tc = (tcs.find((x) => x.key === "5+3") || tcs[0]).key;
    const guest = !me() || me().kind !== "user";
    if (guest) choice.rated = false;

    renderChallengeCard(left);
    renderMyGames(left);
    el("h2", {}, left, t("ol_create"));
    el("div", { class: "ol-label" }, left, t("ol_time_control"));
    const grid = el("div", { class: "ol-tc-grid", role: "radiogroup", "aria-label": t("ol_time_control") }, left);
    for (const tc of tcs) {
      const b = el("button", { type: "button", class: "ol-tc", role: "radio", "data-tc": tc.key,
        "aria-checked": String(choice.tc === tc.key), title: language() === "zh" ? tc.describe_zh : tc.describe_en }, grid);
      el("strong", {}, b, tc.key);
      el("small", {}, b, categoryName(tc.category));
      b.addEventListener("click", () => { choice.tc = tc.key; renderCreate(); });
    }
    const modeRow = el("div", { class: "ol-seg", role: "radiogroup", "aria-label": t("ol_mode") }, left);
    for (const [rated, key] of [[false, "ol_casual"], [true, "ol_rated"]]) {
      const b = el("button", { type: "button", role: "radio", id: rated ? "ol-rated" : "ol-casual",
        "aria-checked": String(choice.rated === rated), disabled: rated && guest }, modeRow, t(key));
      b.addEventListener("click", () => { choice.rated = rated; renderCreate(); });
    }
    if (guest) el("p", { class: "hint-text ol-guest-note" }, left, t("ol_guest_casual"));
    const colorRow = el("div", { class: "ol-seg", role: "radiogroup", "aria-label": t("ol_color") }, left);
    for (const c of ["red", "random", "black"]) {
      const b = el("button", { type: "button", role: "radio", "data-color": c, "aria-checked": String(choice.color === c) },
        colorRow, colorText(c));
      b.addEventListener("click", () => { choice.color = c; renderCreate(); });
    }
    const mine = mySeek();
    const actions = el("div", { class: "row ol-actions" }, left);
    const seekBtn = el("button", { type: "button", id: "ol-create-seek", class: "primary", disabled: Boolean(mine) }, actions, t("ol_seek"));
    seekBtn.addEventListener("click", createSeek);
    const friendBtn = el("button", { type: "button", id: "ol-challenge-friend", disabled: Boolean(myChallenge) }, actions, t("ol_challenge_friend"));
    friendBtn.addEventListener("click", createChallenge);
    if (mine) {
      const box = el("div", { class: "ol-waiting", id: "ol-my-seek" }, left);
      el("span", { class: "spinner", "aria-hidden": "true" }, box);
      el("span", {}, box, `${t("ol_waiting")} ${mine.time_control} · ${t(mine.rated ? "ol_rated" : "ol_casual")} · ${colorText(mine.color)}`);
      const c = el("button", { type: "button", id: "ol-cancel-seek" }, box, t("ol_cancel"));
      c.addEventListener("click", () => cancelSeek(mine.id));
    }
    if (myChallenge) {
      const box = el("div", { class: "ol-link-box", id: "ol-my-challenge" }, left);
      el("p", {}, box, t("ol_challenge_link"));
      const link = new URL(myChallenge.url, location.href).href;
      const input = el("input", { type: "text", id: "ol-challenge-url", readonly: true, value: link }, box);
      input.addEventListener("focus", () => input.select());
      const row = el("div", { class: "row" }, box);
      const copy = el("button", { type: "button", id: "ol-copy-link", class: "primary" }, row, t("ol_copy"));
      copy.addEventListener("click", () => copyLink(input));
      const c = el("button", { type: "button", id: "ol-cancel-challenge" }, row, t("ol_cancel"));
      c.addEventListener("click", cancelChallenge);
      el("span", { class: "hint-text" }, row, `${myChallenge.time_control} · ${t(myChallenge.rated ? "ol_rated" : "ol_casual")}`);
    }

    el("h2", {}, left, t("ol_computers"));
    el("p", { class: "hint-text" }, left, t("ol_computer_note"));
    const comps = el("div", { class: "ol-computers" }, left);
    for (const c of (state && state.computers) || cfg.computers || []) {
      const name = language() === "zh" ? c.name_zh : c.name_en;
      const b = el("button", { type: "button", class: "ol-computer", "data-level": c.level }, comps);
      el("strong", {}, b, name);
      if (c.elo) el("small", {}, b, `${c.rank_zh && language() === "zh" ? c.rank_zh + " " : ""}≈${Math.round(c.elo / 10) * 10}`);
      b.addEventListener("click", () => playComputer(c.level));
    }
  }

  async function copyLink(input) {
    try {
      await navigator.clipboard.writeText(input.value);
    } catch {
      input.select();
      document.execCommand("copy");
    }
    ctx.toast(t("ol_copied"));
  }

  function mySeek() {
    return ((state && state.seeks) || []).find((s) => isMine(s.by)) || null;
  }

  async function act(fn, opts = {}) {
    try {
      return await fn();
    } catch (e) {
      ctx.toast(ctx.errorText(e, opts));
      return null;
    }
  }

  async function createSeek() {
    if (!(await ctx.ensurePlayer())) return;
    const seek = await act(() => ctx.call("/api/online/seeks", { method: "POST",
      body: { time_control: choice.tc, rated: choice.rated, color: choice.color } }), { seek: true });
    if (seek && state) {
      // shown at once; the lobby socket's next message confirms it
      if (!state.seeks.some((s) => s.id === seek.id)) state.seeks = [...state.seeks, seek];
      render();
    }
  }

  async function cancelSeek(id) {
    const ok = await act(() => ctx.call(`/api/online/seeks/${encodeURIComponent(id)}`, { method: "DELETE" }));
    if (ok && state) { state.seeks = state.seeks.filter((s) => s.id !== id); render(); }
  }

  async function acceptSeek(id) {
    if (!(await ctx.ensurePlayer())) return;
    const res = await act(() => ctx.call(`/api/online/seeks/${encodeURIComponent(id)}/accept`, { method: "POST" }));
    if (res && res.game_id) ctx.go({ view: "game", id: res.game_id });
  }

  async function createChallenge() {
    if (!(await ctx.ensurePlayer())) return;
    const ch = await act(() => ctx.call("/api/online/challenges", { method: "POST",
      body: { time_control: choice.tc, rated: choice.rated, color: choice.color } }), { seek: true });
    if (ch) { myChallenge = ch; render(); }
  }

  async function cancelChallenge() {
    if (!myChallenge) return;
    const id = myChallenge.id;
    await act(() => ctx.call(`/api/online/challenges/${encodeURIComponent(id)}`, { method: "DELETE" }));
    myChallenge = null;
    render();
  }

  async function playComputer(level) {
    if (!(await ctx.ensurePlayer())) return;
    const res = await act(() => ctx.call("/api/online/computer", { method: "POST",
      body: { level, time_control: choice.tc, color: choice.color } }));
    if (res && res.game_id) ctx.go({ view: "game", id: res.game_id });
  }

  /** The player's own games in progress (another tab, a closed one): a way back to each. */
  function renderMyGames(parent) {
    const games = ((state && state.games) || []).filter((g) => isMine(g.red) || isMine(g.black));
    for (const g of games) {
      const box = el("div", { class: "ol-waiting ol-my-game", "data-game": g.id }, parent);
      el("span", {}, box, fill(t("ol_my_game"), { red: userName(g.red), black: userName(g.black), tc: g.time_control }));
      const b = el("button", { type: "button", class: "primary" }, box, t("ol_back_to_game"));
      b.addEventListener("click", () => ctx.go({ view: "game", id: g.id }));
    }
  }

  // -- a friend's challenge, opened by its link ---------------------------------------------------
  async function loadChallenge(id) {
    shownChallenge = id;
    challengeView = null;
    try {
      challengeView = await ctx.call(`/api/online/challenges/${encodeURIComponent(id)}`);
    } catch {
      challengeView = "gone";
    }
    render();
  }

  function renderChallengeCard(parent) {
    if (!shownChallenge || !challengeView) return;
    const box = el("div", { class: "ol-challenge", id: "ol-challenge", role: "region" }, parent);
    if (challengeView === "gone") {
      el("p", {}, box, t("ol_challenge_gone"));
      const ok = el("button", { type: "button" }, box, t("close"));
      ok.addEventListener("click", () => { shownChallenge = null; ctx.go({ view: "lobby" }); });
      return;
    }
    const ch = challengeView;
    if (isMine(ch.by)) {
      myChallenge = myChallenge || ch;
      shownChallenge = null;
      return;
    }
    el("h2", {}, box, fill(t("ol_challenge_from"), { name: userName(ch.by) }));
    // the challenger's colour is theirs: the friend gets the other one
    const yours = ch.color === "red" ? "black" : ch.color === "black" ? "red" : "random";
    el("p", { class: "ol-terms" }, box, fill(t("ol_challenge_terms"), {
      tc: `${ch.time_control} ${tcTitle(ctx.cfg, ch.time_control)}`.trim(), rated: t(ch.rated ? "ol_rated" : "ol_casual"),
      color: t(yours === "red" ? "ol_you_red" : yours === "black" ? "ol_you_black" : "ol_you_random"),
    }));
    const needLogin = ch.rated && (!me() || me().kind !== "user");
    if (needLogin) el("p", { class: "hint-text" }, box, t("ol_challenge_login"));
    const row = el("div", { class: "row" }, box);
    const yes = el("button", { type: "button", id: "ol-accept-challenge", class: "primary" }, row, t("ol_accept"));
    yes.addEventListener("click", async () => {
      if (needLogin) { ctx.openAccount("login"); return; }
      if (!(await ctx.ensurePlayer())) return;
      const res = await act(() => ctx.call(`/api/online/challenges/${encodeURIComponent(ch.id)}/accept`, { method: "POST" }));
      if (res && res.game_id) { shownChallenge = null; ctx.go({ view: "game", id: res.game_id }); }
    });
    const no = el("button", { type: "button", id: "ol-decline-challenge" }, row, t("ol_decline_invite"));
    no.addEventListener("click", () => { shownChallenge = null; ctx.go({ view: "lobby" }); });
  }

  // -- the lists --------------------------------------------------------------------------------
  function renderLists() {
    right.replaceChildren();
    const head = el("div", { class: "ol-list-head" }, right);
    el("h2", {}, head, t("ol_seeks"));
    if (state) el("span", { class: "ol-online", id: "ol-online-count" }, head, fill(t("ol_online"), { n: state.online ?? 0 }));
    const seeks = (state && state.seeks) || [];
    const table = el("table", { class: "lib-table ol-seeks", id: "ol-seeks" }, right);
    const hr = el("tr", {}, el("thead", {}, table));
    for (const k of ["ol_player", "profile_rating", "ol_time_control", "ol_mode", "ol_their_color", ""]) {
      el("th", { class: k === "profile_rating" ? "num" : "" }, hr, k ? t(k) : "");
    }
    const body = el("tbody", {}, table);
    if (!seeks.length) el("td", { colspan: 6, class: "empty" }, el("tr", {}, body), t("ol_no_seeks"));
    for (const s of seeks) {
      const mine = isMine(s.by);
      const tr = el("tr", { "data-seek": s.id, class: mine ? "mine" : "" }, body);
      const who = el("td", {}, tr);
      playerLink(who, s.by);
      el("td", { class: "num" }, tr, s.rating == null ? "" : `${Math.round(s.rating)}${s.provisional ? t("ol_provisional_mark") : ""}`);
      el("td", { title: tcTitle(ctx.cfg, s.time_control) }, tr, `${s.time_control} ${categoryName(s.category)}`);
      el("td", {}, tr, t(s.rated ? "ol_rated" : "ol_casual"));
      el("td", {}, tr, colorText(s.color));
      const td = el("td", { class: "ol-act" }, tr);
      if (mine) {
        const b = el("button", { type: "button", class: "ol-cancel" }, td, t("ol_cancel"));
        b.addEventListener("click", () => cancelSeek(s.id));
      } else {
        const guestRated = s.rated && (!me() || me().kind !== "user");
        const b = el("button", { type: "button", class: "ol-accept primary", title: guestRated ? t("ol_err_guest_rated") : "" }, td, t("ol_accept"));
        b.addEventListener("click", () => (guestRated ? ctx.openAccount("login") : acceptSeek(s.id)));
      }
    }

    el("h2", {}, right, t("ol_playing_games"));
    const games = (state && state.games) || [];
    const gt = el("table", { class: "lib-table ol-games", id: "ol-games" }, right);
    const gh = el("tr", {}, el("thead", {}, gt));
    for (const k of ["players", "ol_time_control", "ol_moves", "ol_watchers_col", ""]) {
      el("th", { class: k === "ol_moves" || k === "ol_watchers_col" ? "num" : "" }, gh, k ? t(k) : "");
    }
    const gb = el("tbody", {}, gt);
    if (!games.length) el("td", { colspan: 5, class: "empty" }, el("tr", {}, gb), t("ol_no_games"));
    for (const g of games) {
      const tr = el("tr", { "data-game": g.id }, gb);
      const who = el("td", { class: "ol-vs" }, tr);
      playerLink(who, g.red, "red");
      el("span", { class: "ol-vs-sep" }, who, " – ");
      playerLink(who, g.black, "black");
      el("td", {}, tr, `${g.time_control} ${t(g.rated ? "ol_rated" : "ol_casual")}`);
      el("td", { class: "num" }, tr, String(g.plies ?? 0));
      el("td", { class: "num ol-watchers", "data-watchers": g.watchers ?? 0 }, tr, fill(t("ol_watchers"), { n: g.watchers ?? 0 }));
      const td = el("td", { class: "ol-act" }, tr);
      const mine = isMine(g.red) || isMine(g.black);
      const b = el("button", { type: "button", class: "ol-watch" }, td, mine ? t("ol_open_game") : t("ol_watch"));
      b.addEventListener("click", () => ctx.go({ view: "game", id: g.id }));
    }
  }

  function playerLink(parent, user, color = "") {
    if (!user) return;
    if (user.kind === "user") {
      const a = el("a", { href: `/?player=${encodeURIComponent(user.username)}`, class: `ol-user ${color}` }, parent, userName(user));
      a.addEventListener("click", (ev) => { ev.preventDefault(); ctx.go({ view: "player", name: user.username }); });
    } else {
      el("span", { class: `ol-user ${color} ${user.kind}` }, parent, userName(user));
    }
  }

  function render() {
    if (!visible) return;
    renderCreate();
    renderLists();
  }

  return {
    /** A lobby message from the socket (or GET /lobby). */
    update(lobby) {
      state = lobby;
      document.body.dataset.olSeeks = String((lobby.seeks || []).length);
      render();
    },
    /** The page's seek or challenge was accepted: its waiting box goes. */
    started(msg) {
      if (msg.challenge_id && myChallenge && myChallenge.id === msg.challenge_id) myChallenge = null;
    },
    show(on, challengeId) {
      visible = on;
      root.hidden = !on;
      if (!on) return;
      if (challengeId && challengeId !== shownChallenge) loadChallenge(challengeId);
      if (!challengeId) shownChallenge = null;
      if (ctx.lobbyState) state = ctx.lobbyState;
      render();
      ctx.call("/api/online/lobby").then((l) => { if (!state || (l.version ?? 0) >= (state.version ?? 0)) this.update(l); }).catch(() => {});
    },
    render,
    get choice() { return choice; },
  };
}
