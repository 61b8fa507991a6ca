// What a record export could not keep. XQF has no field for many PGN headers, cuts its strings at
// fixed sizes and has no NAGs or comment after the result; the export routes list what was dropped or
// cut in the X-Xiangqi-Warnings response header (xiangqi/web/export_notes.py), and this module shows
// that list, in the page's language, after the file is downloaded.

import { TEXT, t } from "./i18n.js";
import { message } from "./messages.js";
import { request } from "./net.js";

Object.assign(TEXT.zh, {
  xn_title: "XQF 文件未能保存的内容", xn_intro: "文件已下载。XQF 格式容纳不下以下内容：",
});
Object.assign(TEXT.en, {
  xn_title: "Not kept in the XQF file", xn_intro: "The file was downloaded. The XQF format could not hold:",
});

export const HEADER = "X-Xiangqi-Warnings";

/** The warnings of an export response (its X-Xiangqi-Warnings header, a JSON list of English
 *  sentences); [] when there are none or the header is not a list. */
export function exportWarnings(res) {
  const raw = res.headers.get(HEADER);
  if (!raw) return [];
  try {
    const list = JSON.parse(raw);
    return Array.isArray(list) ? list.map(String) : [];
  } catch {
    return [];
  }
}

function dialog() {
  let dlg = document.getElementById("dlg-export-notes");
  if (dlg) return dlg;
  dlg = document.createElement("dialog");
  dlg.id = "dlg-export-notes";
  dlg.innerHTML = `<form method="dialog" class="dlg"><h2></h2><p class="xn-intro"></p>
    <ul class="problems xn-list"></ul><menu><button value="ok" class="primary"></button></menu></form>`;
  document.body.appendChild(dlg);
  return dlg;
}

/** Show ``warnings`` (English sentences from the server) in a dialog, each in the page's language. */
export function showExportWarnings(warnings) {
  if (!warnings.length) return;
  const dlg = dialog();
  dlg.querySelector("h2").textContent = t("xn_title");
  dlg.querySelector(".xn-intro").textContent = t("xn_intro");
  dlg.querySelector("button").textContent = t("ok");
  const list = dlg.querySelector(".xn-list");
  list.replaceChildren(...warnings.map((w) => {
    const li = document.createElement("li");
    li.textContent = message(w);
    return li;
  }));
  if (!dlg.open) dlg.showModal();
}

/** Save a response's body as a file called ``name`` and then show what the export could not keep. */
export async function saveResponse(res, name) {
  const blob = await res.blob();
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  showExportWarnings(exportWarnings(res));
}

/** GET ``url`` (an export route) and save it as ``name`` (the server's file name when empty), with its
 *  warnings shown; throws an Error with the server's message when the export is refused. */
export async function downloadExport(url, name = "") {
  const res = await request(url);
  if (!res.ok) {
    let detail = await res.text();
    try { detail = JSON.parse(detail).detail; } catch { /* plain text */ }
    throw new Error(message(detail));
  }
  const disposition = res.headers.get("Content-Disposition") || "";
  const given = /filename="([^"]+)"/.exec(disposition);
  await saveResponse(res, name || (given ? given[1] : "record"));
}
