// Settings → engines (引擎): add any UCI/UCCI engine of this machine (web/engines_api.py). The
// server checks it with a handshake and shows its name and options; an added engine can then be
// chosen as the computer in the new-game dialog and as the analyser of the engine panel.

import { TEXT, fill, t } from "./i18n.js";
import { message } from "./messages.js";

Object.assign(TEXT.zh, {
  engines: "引擎", eng_builtin: "内置引擎", eng_added: "已添加的引擎", eng_none: "还没有添加引擎",
  eng_path: "程序路径", eng_protocol: "协议", eng_auto: "自动", eng_check: "检查", eng_add: "添加",
  eng_remove: "删除", eng_movetime: "每步用时（秒）", eng_checking: "正在与引擎握手…",
  eng_found: "找到引擎：{name}（{protocol}，{n} 个选项）", eng_added_ok: "已添加：{name}",
  eng_removed: "已删除：{name}", eng_options: "选项", eng_public: "公开服务器上不能添加本机引擎",
  eng_group: "其他引擎", eng_analyser: "分析引擎",
  eng_path_hint: "如 /usr/games/fairy-stockfish 或 fairy-stockfish", ep_depth: "深度 {depth}",
  rv_by_engine: "复盘引擎：{name}",
});
Object.assign(TEXT.en, {
  engines: "Engines", eng_builtin: "Built-in engine", eng_added: "Added engines", eng_none: "No engines added yet",
  eng_path: "Program", eng_protocol: "Protocol", eng_auto: "Automatic", eng_check: "Check", eng_add: "Add",
  eng_remove: "Remove", eng_movetime: "Seconds a move", eng_checking: "Talking to the engine…",
  eng_found: "Found: {name} ({protocol}, {n} options)", eng_added_ok: "Added: {name}",
  eng_removed: "Removed: {name}", eng_options: "Options", eng_public: "Engines of this machine cannot be added on a public server",
  eng_group: "Other engines", eng_analyser: "Analysis engine",
  eng_path_hint: "e.g. /usr/games/fairy-stockfish or fairy-stockfish", ep_depth: "depth {depth}",
  rv_by_engine: "Reviewed by {name}",
});

const $ = (sel) => document.querySelector(sel);
// Options an engine announces that the client sets itself or that make no sense to change here.
const HIDDEN_OPTIONS = new Set(["UCI_Variant", "Protocol", "UCI_Chess960", "usemillisec", "Debug Log File",
  "VariantPath", "UCI_AnalyseMode", "MultiPV", "Ponder"]);

/**
 * ``api(path, options)`` the page's JSON requests (errors thrown with the server's detail),
 * ``toast(text)`` a short notice, ``onChange(list)`` called after the list changed (the page
 * refills its level choice and the engine panel's choice).
 */
export function createEngines({ api, toast, onChange }) {
  let list = [];
  let allowed = true;
  let refused = ""; // the server's reason when engines cannot be added from here (a LAN device, a public server)
  let checked = null; // the last handshake's answer, for the add button

  function el(tag, props = {}, ...children) {
    const e = document.createElement(tag);
    Object.assign(e, props);
    e.append(...children);
    return e;
  }

  function status(text) {
    const s = $("#eng-status");
    s.textContent = text || "";
    s.hidden = !text;
  }

  function renderList() {
    const ul = $("#eng-list");
    ul.replaceChildren();
    $("#eng-empty").hidden = list.length > 0;
    for (const e of list) {
      const remove = el("button", { type: "button", className: "eng-remove", textContent: t("eng_remove") });
      remove.addEventListener("click", () => removeEngine(e));
      const time = el("input", { type: "number", min: "0.05", max: "60", step: "0.05", value: String(e.movetime_s),
        className: "eng-time", title: t("eng_movetime") });
      time.addEventListener("change", () => update(e, { movetime_s: Number(time.value) }));
      const li = el("li", { className: "eng-item" },
        el("span", { className: "eng-name", textContent: e.name, title: [e.command, ...e.args].join(" ") }),
        el("span", { className: "eng-proto", textContent: e.protocol.toUpperCase() }), time, remove);
      li.dataset.key = e.key;
      ul.appendChild(li);
    }
    $("#eng-add-form").hidden = !allowed;
    const note = $("#eng-public");
    note.hidden = allowed;
    // the reason in the page's language: "only on the server machine" for a device on the network
    if (!allowed) note.textContent = refused ? message(refused) : t("eng_public");
  }

  function renderOptions(info) {
    const box = $("#eng-options");
    box.replaceChildren();
    const shown = (info ? info.options : []).filter((o) => !HIDDEN_OPTIONS.has(o.name) && o.type !== "button");
    box.hidden = shown.length === 0;
    if (!shown.length) return;
    box.appendChild(el("legend", { textContent: t("eng_options") }));
    for (const o of shown) {
      let input;
      if (o.type === "check") {
        input = el("input", { type: "checkbox", checked: o.default === "true" });
      } else if (o.type === "combo") {
        input = el("select");
        for (const v of o.var) input.appendChild(el("option", { value: v, textContent: v, selected: v === o.default }));
      } else if (o.type === "spin") {
        input = el("input", { type: "number", value: o.default ?? "", min: o.min ?? "", max: o.max ?? "" });
      } else {
        input = el("input", { type: "text", value: o.default ?? "", maxLength: 200 });
      }
      input.dataset.option = o.name;
      input.dataset.type = o.type;
      input.dataset.default = o.default ?? "";
      box.appendChild(el("label", { className: "row eng-opt" }, el("span", { textContent: o.name }), input));
    }
  }

  /** The option values the user changed from the engine's defaults. */
  function changedOptions() {
    const out = {};
    for (const input of document.querySelectorAll("#eng-options [data-option]")) {
      const kind = input.dataset.type;
      const value = kind === "check" ? input.checked : kind === "spin" ? Number(input.value) : input.value;
      const dflt = kind === "check" ? input.dataset.default === "true" : kind === "spin" ? Number(input.dataset.default) : input.dataset.default;
      if (value !== dflt) out[input.dataset.option] = value;
    }
    return out;
  }

  function command() {
    const parts = $("#eng-path").value.trim().split(/\s+/).filter(Boolean);
    return { command: parts[0] || "", args: parts.slice(1), protocol: $("#eng-protocol").value };
  }

  async function check() {
    status(t("eng_checking"));
    $("#eng-add").disabled = true;
    try {
      checked = await api("/api/engines/check", { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify(command()) });
      renderOptions(checked);
      status(fill(t("eng_found"), { name: checked.name, protocol: checked.protocol.toUpperCase(), n: checked.options.length }));
      $("#eng-add").disabled = false;
      document.body.dataset.engineChecked = checked.name;
    } catch (e) {
      checked = null;
      renderOptions(null);
      status(`${t("error")}: ${e.message}`);
    }
  }

  async function add() {
    status(t("eng_checking"));
    try {
      const body = { ...command(), options: changedOptions(), movetime_s: Number($("#eng-new-time").value) || 1 };
      const e = await api("/api/engines", { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body) });
      status(fill(t("eng_added_ok"), { name: e.name }));
      $("#eng-path").value = "";
      checked = null;
      renderOptions(null);
      $("#eng-add").disabled = true;
      await refresh();
    } catch (e) {
      status(`${t("error")}: ${e.message}`);
    }
  }

  async function update(e, body) {
    try {
      await api(`/api/engines/${e.id}`, { method: "PATCH", headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body) });
      await refresh();
    } catch (err) {
      toast(`${t("error")}: ${err.message}`);
    }
  }

  async function removeEngine(e) {
    try {
      await api(`/api/engines/${e.id}`, { method: "DELETE" });
      status(fill(t("eng_removed"), { name: e.name }));
      await refresh();
    } catch (err) {
      toast(`${t("error")}: ${err.message}`);
    }
  }

  async function refresh() {
    const got = await api("/api/engines");
    list = got.engines;
    allowed = got.allowed;
    refused = got.refused || "";
    renderList();
    fillAnalyser();
    onChange(list);
    return list;
  }

  /** The engine panel's choice: the built-in engine or an added one. */
  function fillAnalyser() {
    const sel = $("#ep-engine");
    if (!sel) return;
    const current = sel.value;
    sel.replaceChildren(el("option", { value: "", textContent: t("eng_builtin") }));
    for (const e of list) sel.appendChild(el("option", { value: e.key, textContent: e.name }));
    sel.value = list.some((e) => e.key === current) ? current : "";
    $("#ep-engine-row").hidden = list.length === 0;
  }

  $("#eng-check").addEventListener("click", check);
  $("#eng-add").addEventListener("click", add);
  $("#eng-path").addEventListener("input", () => { $("#eng-add").disabled = true; checked = null; });

  return {
    refresh,
    get list() { return list; },
    /** The added engine of a level key (``engine:<id>``) as a level the page can name, or null. */
    level(key) {
      const e = list.find((x) => x.key === key);
      return e ? { key: e.key, name_zh: e.name, name_en: e.name, elo: null } : null;
    },
    /** Put the added engines in the new-game dialog's opponent choice ``sel`` (its option group, replaced). */
    addOpponentChoices(sel) {
      for (const old of sel.querySelectorAll("optgroup.added-engines")) old.remove();
      if (!list.length) return;
      const group = el("optgroup", { label: t("eng_group"), className: "added-engines" });
      for (const e of list) group.appendChild(el("option", { value: e.key, textContent: e.name }));
      sel.appendChild(group);
    },
    /** Texts of the section follow the page's language (option groups have no data-i18n). */
    relabel() { renderList(); fillAnalyser(); },
  };
}
