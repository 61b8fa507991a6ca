// Setup from the page (web/jobs_api.py, app/tasks/jobs.py): on a new install the games database has no
// master games (the opening explorer and the database browser are empty) and there are no endgame
// tables (endgame practice cannot start). A panel says what is missing, offers a button that starts
// the work on the server in the background, and shows its progress until it is done; the work can be
// cancelled and started again (what was finished is kept).

import { TEXT, fill, language, t } from "./i18n.js";

Object.assign(TEXT.zh, {
  job_masters_missing: "数据库里还没有大师对局，所以开局库和数据库是空的。本程序附带 {n} 局大师对局（CCPD 中国象棋实战数据集，CC BY 4.0；WXF 胡荣华、柳大华对局），可以现在导入（约需一分钟，可以边等边下棋）。",
  job_masters_start: "导入大师对局", job_masters_running: "正在导入大师对局：{games} 局", job_masters_counts: "正在统计开局库的局面…",
  job_masters_done: "已导入 {added} 局大师对局。", job_tb_missing: "还没有残局库，所以残局练习无法开始。可以在这里生成默认的 62 种残局（约需一两分钟；中断后再点会接着生成），或在终端运行：",
  job_tb_start: "生成残局库", job_tb_running: "正在生成残局库：{name}（{i} / {n}）", job_tb_done: "残局库已生成（{n} 种残局）。",
  job_cancel: "停止", job_cancelled: "已停止；已完成的部分会保留，再点一次接着做。", job_failed: "没有完成：{error}", job_retry: "重试",
});
Object.assign(TEXT.en, {
  job_masters_missing: "The database holds no master games yet, so the opening explorer and the database are empty. {n} master games ship with the program (the Chinese Chess Practical Dataset, CC BY 4.0, and the WXF games of Hu Ronghua and Liu Dahua): import them now (about a minute; you can play meanwhile).",
  job_masters_start: "Import the master games", job_masters_running: "Importing the master games: {games} games",
  job_masters_counts: "Counting the explorer's positions…", job_masters_done: "{added} master games imported.",
  job_tb_missing: "There are no endgame tables yet, so endgame practice cannot start. Generate the default 62 endings here (a minute or two; stopped midway, it goes on where it was), or in a terminal run:",
  job_tb_start: "Generate the tables", job_tb_running: "Generating the tables: {name} ({i} of {n})",
  job_tb_done: "Tables generated ({n} endings).", job_cancel: "Stop",
  job_cancelled: "Stopped; what was finished is kept: start again to go on.", job_failed: "Not finished: {error}", job_retry: "Try again",
});

/** Games in the shipped master file (xiangqi.db.masters.MASTER_GAMES). */
const MASTER_GAMES = 28225;
const POLL_MS = 400;

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
 * A setup panel in ``box`` for job ``name`` ("masters" or "tablebases"). ``show()`` asks the server
 * and shows the offer (or the running job's progress); ``onDone(snapshot)`` is called once when a run
 * ends done. ``box.dataset.job`` holds the job's state (tests wait on it).
 */
export function createJobPanel({ api, name, box, onDone }) {
  let timer = null;
  let last = null;
  const key = name === "masters" ? "masters" : "tb";

  function render(s) {
    last = s;
    box.dataset.job = s.state;
    box.replaceChildren();
    box.hidden = false;
    const running = s.state === "running";
    if (s.state === "done") {
      const text = name === "masters" ? fill(t("job_masters_done"), { added: fmt(s.result ? s.result.added : 0) })
        : fill(t("job_tb_done"), { n: fmt(s.result ? s.result.endings : s.tables) });
      box.appendChild(el("p", "job-what", text));
      return;
    }
    const what = el("p", "job-what", name === "masters" ? fill(t("job_masters_missing"), { n: fmt(MASTER_GAMES) })
      : t("job_tb_missing"));
    box.appendChild(what);
    if (name === "tablebases" && s.command) box.appendChild(el("code", "job-command", s.command));
    if (s.state === "failed") box.appendChild(el("p", "job-error", fill(t("job_failed"), { error: s.error || "" })));
    if (s.state === "cancelled") box.appendChild(el("p", "job-note", t("job_cancelled")));
    const row = el("div", "row job-row");
    if (running) {
      const bar = el("progress", "job-bar");
      bar.max = 1;
      if (s.total) bar.value = Math.min(1, s.done / s.total);
      else bar.removeAttribute("value"); // not known yet: an indeterminate bar
      row.appendChild(bar);
      let text;
      if (name === "masters") {
        text = s.phase === "counts" ? t("job_masters_counts") : fill(t("job_masters_running"), {
          games: fmt((s.info && s.info.games) || 0) });
        if (s.phase !== "counts" && s.total) text += ` · ${Math.floor((100 * s.done) / s.total)}%`;
      } else {
        text = fill(t("job_tb_running"), { name: s.phase, i: fmt(Math.min(s.done + 1, s.total || 1)), n: fmt(s.total || 0) });
      }
      row.appendChild(el("span", "job-count", text));
      const stop = el("button", "job-cancel", t("job_cancel"));
      stop.type = "button";
      stop.addEventListener("click", () => cancel());
      row.appendChild(stop);
    } else {
      const go = el("button", "primary job-start", t(s.state === "failed" ? "job_retry" : `job_${key}_start`));
      go.type = "button";
      go.addEventListener("click", () => start());
      row.appendChild(go);
    }
    box.appendChild(row);
  }

  function follow(s) {
    const was = last && last.state;
    render(s);
    clearTimeout(timer);
    if (s.state === "running") timer = setTimeout(poll, POLL_MS);
    else if (was === "running" && s.state === "done" && onDone) onDone(s);
  }

  async function poll() {
    try { follow(await api(`/api/jobs/${name}`)); } catch { timer = setTimeout(poll, POLL_MS * 5); }
  }

  async function start() {
    try {
      follow(await api(`/api/jobs/${name}`, { method: "POST" }));
    } catch (e) {
      box.appendChild(el("p", "job-error", fill(t("job_failed"), { error: e.message })));
      poll();
    }
  }

  async function cancel() {
    try { follow(await api(`/api/jobs/${name}/cancel`, { method: "POST" })); } catch { poll(); }
  }

  return {
    /** Show the offer or the running job (asks the server). Resolves with the job's snapshot. */
    async show() {
      const s = await api(`/api/jobs/${name}`);
      follow(s);
      return s;
    },
    hide() { clearTimeout(timer); box.hidden = true; },
    /** The master games job: shown while the database has none (or the job runs or failed), hidden
     *  otherwise (a "done" message stays); hidden on a public server (no such route). */
    async offerMasters() {
      try {
        const s = await api("/api/jobs/masters");
        if (s.master_games === 0 || s.state === "running" || s.state === "failed") follow(s);
        else if (!last || last.state !== "done") { clearTimeout(timer); box.hidden = true; }
      } catch { clearTimeout(timer); box.hidden = true; }
    },
    refresh() { if (last && !box.hidden) render(last); },
    get state() { return last; },
  };
}
