// Interface text in simplified Chinese and English. Elements carry data-i18n="key"
// (text) or data-i18n-title="key" (tooltip); applyLanguage() fills them in.

export const TEXT = {
  zh: {
    opening: "开局", book_move: "开局库着法", book_mark: "库",
    title: "象棋", new_game: "新局", undo: "悔棋", hint: "提示", draw: "提和", resign: "认输", flip: "翻转",
    save: "保存", open: "打开", settings: "设置", moves: "着法", red: "红方", black: "黑方",
    human: "棋手", computer: "电脑", level: "难度", play_as: "执子", play_red: "执红（先走）",
    level_label: "{name} · {rank} ≈{elo}", level_elo: "等级分 {elo}{err}（95%，{games} 局对局测定）",
    play_black: "执黑（后走）", two_players: "双人对弈", computer_both: "电脑对电脑", start: "开始",
    cancel: "取消", ok: "确定", close: "关闭", red_to_move: "红方走棋", black_to_move: "黑方走棋",
    thinking: "电脑思考中…", warming_up: "引擎预热中，请稍候…",
    hint_quick: "（引擎预热中，浅层提示）", your_move: "轮到你走", check: "将军！", game_over: "对局结束",
    save_title: "保存棋谱", notation: "记谱方式", chinese: "中文纵线", iccs: "ICCS 坐标", wxf: "WXF",
    download: "下载", open_title: "打开棋谱", opened: "已打开棋谱", forbidden_title: "禁着警告",
    forbidden_go: "仍然走", forbidden_back: "换一步", draw_declined: "电脑拒绝和棋", draw_accepted: "电脑同意和棋",
    confirm_resign: "确定认输吗？", theme: "棋盘", theme_wood: "木纹", theme_flat: "简洁", theme_contrast: "高对比",
    mode: "外观", light: "浅色", dark: "深色", language: "语言", sound: "声音", sound_on: "开", sound_off: "静音",
    pieces_trad: "繁体棋子", no_moves: "尚未走棋", error: "错误", connection_lost: "连接中断，正在重连…",
    river_left: "楚 河", river_right: "汉 界", hint_none: "没有提示", new_game_title: "新对局",
    time_control: "用时", tc_none: "不限时", tc_per_move: "步时", tc_fischer: "局时 + 加时", tc_byoyomi: "局时 + 读秒",
    tc_base: "局时（分）", tc_inc: "加时（秒）", tc_move: "步时（秒）", tc_byo: "读秒（秒）", byoyomi: "读秒",
    handicap: "让子", hc_none: "不让子", hc_horse: "让单马", hc_horses: "让双马", hc_rook: "让单车",
    hc_cannon: "让单炮", hc_rook_horse: "让车马",
    editor: "摆谱", library: "棋谱库", side_to_move: "轮走", clear: "清空", initial: "初始局面", copy: "复制",
    load_fen: "载入 FEN", play_from_here: "开始对局", copied: "已复制 FEN", position_ok: "局面合法",
    forbidden_text: "这步棋构成禁止的循环重复（长将、长捉等），走了就判负：", piece_style: "棋子", pieces_wood: "传统", accept: "同意", decline: "拒绝", analysis: "分析（显示最佳着法）", eraser: "清除", autoplay: "自动", title_label: "标题", notes: "注释", save_notes: "保存注释", export: "导出",
    delete: "删除", search: "搜索", all_results: "全部结果", red_wins: "红胜", black_wins: "黑胜", draws: "和棋",
    date: "日期", players: "对局", result: "结果", length: "步数", library_empty: "还没有对局", replay: "复盘",
    confirm_delete: "确定删除这盘棋吗？", saved: "已保存",
    tc_periods: "读秒次数", file_format: "文件格式", open_formats: "PGN（中文、WXF、ICCS）、XQF、DhtmlXQ/UBB、EPD、FEN",
    choose_file: "选择文件…", paste_label: "或粘贴 FEN、PGN 或 UBB 文本：", open_pasted: "打开粘贴内容",
    paste_empty: "请先粘贴 FEN、PGN 或 UBB 文本", open_failed: "无法打开：", record_problems: "棋谱有问题：",
    rc_variations: "含 {n} 处变着", rc_variations_one: "含 {n} 处变着", hint_text: "提示：", rc_choices: "种走法", rc_back: "返回", rc_next_choices: "下一步变着",
    rc_main: "主线", rc_variation: "变着", rc_play: "从此处续下", event_default: "象棋对局",
    retry: "重试", engine_failed: "电脑未能走棋（{why}；已试 {attempts} 次）。可以重试、替电脑走一步，或悔棋。",
    draw_offer_text: "{offerer}提和，{other}是否同意？",
    storage_full_title: "磁盘已满，无法保存",
    storage_full_text: "刚才那一步没有保存，所以没有走成。腾出磁盘空间后再走一次即可继续对局。",
    storage_engine_retry: "电脑的着法会自动重试。", details: "详情",
    storage_read_only_title: "数据库是只读的",
    storage_read_only_text: "可以查看对局，但不能走棋或保存。请让数据目录可写（或换一个 --data-dir）后重启服务器。",
    storage_io_title: "无法保存",
    storage_io_text: "刚才那一步没有保存，所以没有走成。问题解决后再走一次即可继续对局。",
    notice_damaged_db: "数据库文件已损坏", notice_damaged_game: "上次的对局已损坏", notice_read_only: "数据库是只读的",
    notice_other: "存储提示", notice_ok: "知道了",
  },
  en: {
    opening: "Opening", book_move: "Book move", book_mark: "book",
    title: "Xiangqi", new_game: "New game", undo: "Undo", hint: "Hint", draw: "Offer draw", resign: "Resign",
    flip: "Flip", save: "Save", open: "Open", settings: "Settings", moves: "Moves", red: "Red", black: "Black",
    human: "Human", computer: "Computer", level: "Level", play_as: "Play as", play_red: "Red (moves first)",
    level_label: "{name} · ~{elo}", level_elo: "Elo {elo}{err} (95%, measured in {games} games)",
    play_black: "Black", two_players: "Two players", computer_both: "Computer vs computer", start: "Start",
    cancel: "Cancel", ok: "OK", close: "Close", red_to_move: "Red to move", black_to_move: "Black to move",
    thinking: "Computer is thinking…", warming_up: "Engine warming up, please wait…",
    hint_quick: " (quick hint while the engine warms up)", your_move: "Your move", check: "Check!", game_over: "Game over",
    save_title: "Save game", notation: "Move notation", chinese: "Chinese", iccs: "ICCS coordinates",
    wxf: "WXF", download: "Download", open_title: "Open a game record", opened: "Game opened",
    forbidden_title: "Forbidden move", forbidden_go: "Play it anyway", forbidden_back: "Choose another move",
    draw_declined: "The computer declines the draw", draw_accepted: "The computer accepts the draw",
    confirm_resign: "Resign this game?", theme: "Board", theme_wood: "Wood", theme_flat: "Flat",
    theme_contrast: "High contrast", mode: "Mode", light: "Light", dark: "Dark", language: "Language",
    sound: "Sound", sound_on: "On", sound_off: "Muted", pieces_trad: "Traditional pieces", no_moves: "No moves yet",
    error: "Error", connection_lost: "Connection lost, reconnecting…", river_left: "楚 河", river_right: "汉 界",
    hint_none: "No hint", new_game_title: "New game",
    time_control: "Time control", tc_none: "No clock", tc_per_move: "Per move", tc_fischer: "Game + increment",
    tc_byoyomi: "Game + byo-yomi", tc_base: "Game time (min)", tc_inc: "Increment (s)", tc_move: "Per move (s)",
    tc_byo: "Byo-yomi (s)", byoyomi: "byo-yomi", handicap: "Handicap", hc_none: "None", hc_horse: "Horse",
    hc_horses: "Two horses", hc_rook: "Rook", hc_cannon: "Cannon", hc_rook_horse: "Rook and horse",
    editor: "Edit position", library: "Library", side_to_move: "To move", clear: "Clear", initial: "Start position",
    copy: "Copy", load_fen: "Load FEN", play_from_here: "Play from here", copied: "FEN copied",
    position_ok: "Position is valid", eraser: "Eraser", piece_style: "Pieces", pieces_wood: "Traditional", accept: "Accept", decline: "Decline",
    analysis: "Analysis (show the best move)",
    forbidden_text: "This move completes a forbidden repetition (perpetual check or chase); playing it loses:", autoplay: "Autoplay", title_label: "Title", notes: "Notes",
    save_notes: "Save notes", export: "Export", delete: "Delete", search: "Search", all_results: "All results",
    red_wins: "Red wins", black_wins: "Black wins", draws: "Draws", date: "Date", players: "Game", result: "Result",
    length: "Moves", library_empty: "No games yet", replay: "Replay", confirm_delete: "Delete this game?",
    saved: "Saved",
    tc_periods: "Periods", file_format: "File format", open_formats: "PGN (Chinese, WXF, ICCS), XQF, DhtmlXQ/UBB, EPD, FEN",
    choose_file: "Choose a file…", paste_label: "or paste FEN, PGN or UBB text:", open_pasted: "Open pasted text",
    paste_empty: "Paste FEN, PGN or UBB text first", open_failed: "Cannot open:", record_problems: "Problems in the record:",
    rc_variations: "{n} variations", rc_variations_one: "{n} variation", hint_text: "Hint: ", rc_choices: "choices", rc_back: "Back", rc_next_choices: "Next move: variations",
    rc_main: "Main line", rc_variation: "Variation", rc_play: "Play on from here", event_default: "Xiangqi game",
    retry: "Retry",
    engine_failed: "The computer could not make its move ({why}; {attempts} attempts). Retry it, make its move yourself, or undo.",
    draw_offer_text: "{offerer} offers a draw. Does {other} accept?",
    storage_full_title: "The disk is full: nothing can be saved",
    storage_full_text: "The last move could not be saved, so it was not played. Free some disk space and play it again to go on.",
    storage_engine_retry: " The computer's move is retried by itself.", details: "Details",
    storage_read_only_title: "The database is read-only",
    storage_read_only_text: "Games can be viewed but not played or saved. Make the data dir writable (or use another --data-dir) and restart the server.",
    storage_io_title: "Cannot save",
    storage_io_text: "The last move could not be saved, so it was not played. Once the problem is fixed, play it again to go on.",
    notice_damaged_db: "The database file was damaged", notice_damaged_game: "The last game was damaged",
    notice_read_only: "The database is read-only", notice_other: "Storage notice", notice_ok: "Got it",
  },
};

export const LEVEL_NAMES = {
  zh: { beginner: "初级", intermediate: "中级", advanced: "高级", master: "大师" },
  en: { beginner: "Beginner", intermediate: "Intermediate", advanced: "Advanced", master: "Master" },
};

let current = "zh";

export function setLanguage(lang) {
  current = TEXT[lang] ? lang : "zh";
  document.documentElement.lang = current === "zh" ? "zh-Hans" : "en";
  applyLanguage();
}

export function language() {
  return current;
}

/** Text for key in the current language (the key itself if unknown). */
export function t(key) {
  return TEXT[current][key] ?? TEXT.zh[key] ?? key;
}

/** ``text`` with its ``{name}`` fields filled from ``values`` (unknown fields left as they are). */
export function fill(text, values) {
  return text.replace(/\{(\w+)\}/g, (m, k) => (k in values ? String(values[k]) : m));
}

export function applyLanguage(root = document) {
  for (const e of root.querySelectorAll("[data-i18n]")) e.textContent = t(e.dataset.i18n);
  for (const e of root.querySelectorAll("[data-i18n-title]")) e.title = t(e.dataset.i18nTitle);
  for (const e of root.querySelectorAll("[data-i18n-placeholder]")) e.placeholder = t(e.dataset.i18nPlaceholder);
}

/** The level key of a level name in either language (初级, Beginner, beginner), or null. */
function levelKey(name) {
  const n = name.trim().toLowerCase();
  for (const key of Object.keys(LEVEL_NAMES.en)) {
    if (n === key || n === LEVEL_NAMES.en[key].toLowerCase() || name.trim() === LEVEL_NAMES.zh[key]) return key;
  }
  return null;
}

/** A player's name from a record or the library in the interface language. This program writes its
 *  own players' names in the language of the day (棋手, 电脑·初级 / Player, Computer (Beginner); older
 *  versions Human); those are shown in the current language. Other names (许银川) as they are. */
export function playerName(name) {
  const s = String(name ?? "").trim();
  if (s === "Human" || s === "Player" || s === TEXT.zh.human) return t("human");
  const m = /^Computer \((.+)\)$/.exec(s) || /^电脑\s*[·・]\s*(.+)$/.exec(s);
  const key = m && levelKey(m[1]);
  if (!key) return s;
  const level = LEVEL_NAMES[language()][key];
  return language() === "zh" ? `${t("computer")}·${level}` : `${t("computer")} (${level})`;
}

/** A record's Event in the interface language when it is this program's own default (象棋对局 /
 *  Xiangqi game, written in the language of the day); any other event as it is. */
export function eventName(name) {
  const s = String(name ?? "").trim();
  return s === TEXT.zh.event_default || s === TEXT.en.event_default ? t("event_default") : s;
}
