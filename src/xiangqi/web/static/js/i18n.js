// Interface text in simplified Chinese and English. Elements carry data-i18n="key"
// (text) or data-i18n-title="key" (tooltip); applyLanguage() fills them in.

export const TEXT = {
  zh: {
    opening: "开局", book_move: "开局库着法", book_mark: "库",
    title: "象棋", new_game: "新局", undo: "悔棋", hint: "提示", draw: "提和", resign: "认输", flip: "翻转",
    save: "保存", open: "打开", settings: "设置", more: "更多", moves: "着法", red: "红方", black: "黑方",
    human: "棋手", computer: "电脑", level: "难度", play_as: "执子", play_red: "执红（先走）",
    level_label: "{name} · {rank} ≈{elo}", level_elo: "等级分 {elo}{err}（95%，{games} 局对局测定）",
    play_black: "执黑（后走）", two_players: "双人对弈", computer_both: "电脑对电脑", start: "开始",
    cancel: "取消", ok: "确定", close: "关闭", red_to_move: "红方走棋", black_to_move: "黑方走棋",
    thinking: "电脑思考中…", warming_up: "引擎预热中，请稍候…",
    hint_quick: "（引擎预热中，浅层提示）", your_move: "轮到你走", check: "将军！", game_over: "对局结束",
    save_title: "保存棋谱", tb_win: "残局库：{side}胜，{n} 步杀", tb_draw: "残局库：和棋",
    start_kind: "开局方式", start_standard: "标准开局", start_random: "随机开局（车马炮打乱）",
    tendency: "电脑性格", tendency_normal: "正常", tendency_stubborn: "顽固（下到底）", tendency_compliant: "顺从（早认输、早提和）",
    computer_offers_draw: "电脑提和", play_on: "继续下",
    notation: "记谱方式", notation_auto: "随语言（中文/WXF）", chinese: "中文纵线", iccs: "ICCS 坐标", wxf: "WXF",
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
    date: "日期", players: "对局", result: "结果", length: "步数", library_empty: "还没有对局", replay: "回放",
    show_abandoned: "显示未下完的空对局（{n}）", library_all_abandoned: "这里只有未下完的空对局（不足两步、无结果），已隐藏",
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
    practice: "练习", practice_title: "从错着中学习", pr_starting: "正在准备复盘…", pr_loading: "正在复盘… {done}/{total}",
    pr_count: "第 {i} / {n} 题", pr_task: "第 {round} 回合，{side}走了 {move}。找一步更好的棋。",
    pr_find: "请走一步更好的棋。", pr_judging: "正在判断…", pr_right_best: "正确！这正是电脑的着法。",
    pr_right_good: "好棋！和最佳着法相差无几。", pr_engine_had: "电脑的着法：{move}", pr_wrong: "这步不够好，再试一次（还有 {left} 次）。",
    pr_wrong_last: "还是不够好。看看答案：", pr_shown: "答案：", pr_answer: "更好的是 {move}，变化：{line}",
    pr_solved_before: "这题已经答对了。", pr_show: "显示答案", pr_prev: "上一题", pr_next: "下一题", pr_finish: "完成",
    pr_done: "练习完成", pr_done_text: "{n} 题中答对 {k} 题。", pr_none: "这盘棋没有要练习的错着或漏着。",
    pr_again: "再练一次", pr_cancelled: "复盘已取消",
    an_first: "开局", an_prev: "上一步", an_next: "下一步", an_last: "最后", an_engine: "引擎", an_back: "回到对局",
    an_close: "关闭分析", an_promote: "设为主线", an_delete: "删除此着", an_comment: "注释", an_analyse: "分析",
    ep_rule_red: "红胜", ep_rule_black: "黑胜", // a win by the repetition rules on the eval bar
    ep_lines: "线路", ep_thinking: "引擎分析中…", ep_paused: "电脑走棋中，分析暂停…",
    ep_time: "已分析 5 分钟，停止。换一个局面或重开引擎继续。", ep_stats: "深度 {depth} · {nps} 节点/秒",
    review: "复盘", rv_running: "复盘中", rv_graph: "形势图", rv_title: "复盘总结",
    rv_side: "{side}：准确率 {acc}% · 缓着 {i} · 错着 {m} · 败着 {b}", rv_worst: "最大失误：", rv_better: "应走 {move}",
    rv_clean: "没有明显失误", rv_practice: "练习", rv_inaccuracy: "缓着", rv_mistake: "错着", rv_blunder: "败着",
  },
  en: {
    opening: "Opening", book_move: "Book move", book_mark: "book",
    title: "Xiangqi", new_game: "New game", undo: "Undo", hint: "Hint", draw: "Offer draw", resign: "Resign",
    flip: "Flip", save: "Save", open: "Open", settings: "Settings", more: "More", moves: "Moves", red: "Red", black: "Black",
    human: "Human", computer: "Computer", level: "Level", play_as: "Play as", play_red: "Red (moves first)",
    level_label: "{name} · ~{elo}", level_elo: "Elo {elo}{err} (95%, measured in {games} games)",
    play_black: "Black", two_players: "Two players", computer_both: "Computer vs computer", start: "Start",
    cancel: "Cancel", ok: "OK", close: "Close", red_to_move: "Red to move", black_to_move: "Black to move",
    thinking: "Computer is thinking…", warming_up: "Engine warming up, please wait…",
    hint_quick: " (quick hint while the engine warms up)", your_move: "Your move", check: "Check!", game_over: "Game over",
    save_title: "Save game", tb_win: "Tablebase: {side} mates in {n}", tb_draw: "Tablebase: draw",
    start_kind: "Start", start_standard: "Standard", start_random: "Random (rooks, horses, cannons shuffled)",
    tendency: "Computer temper", tendency_normal: "Normal", tendency_stubborn: "Stubborn (plays it out)", tendency_compliant: "Compliant (resigns and offers draws early)",
    computer_offers_draw: "The computer offers a draw", play_on: "Play on",
    notation: "Move notation", notation_auto: "By language (Chinese/WXF)", chinese: "Chinese", iccs: "ICCS coordinates",
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
    show_abandoned: "Show unfinished games without moves ({n})", library_all_abandoned: "Only unfinished games without moves here (under two plies, no result); they are hidden",
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
    practice: "Practice", practice_title: "Learn from your mistakes", pr_starting: "Preparing the review…",
    pr_loading: "Reviewing… {done}/{total}", pr_count: "Puzzle {i} of {n}",
    pr_task: "Move {round}: {side} played {move}. Find a better move.", pr_find: "Play a better move.",
    pr_judging: "Checking…", pr_right_best: "Correct! That is the engine's move.",
    pr_right_good: "Good move! About as good as the best one.", pr_engine_had: "The engine's move: {move}",
    pr_wrong: "Not good enough, try again ({left} left).", pr_wrong_last: "Still not good enough. The answer:",
    pr_shown: "The answer:", pr_answer: "Better was {move}, line: {line}", pr_solved_before: "You solved this one.",
    pr_show: "Show answer", pr_prev: "Previous", pr_next: "Next", pr_finish: "Finish", pr_done: "Practice done",
    pr_done_text: "{k} of {n} solved.", pr_none: "No mistakes or blunders to practise in this game.",
    pr_again: "Practise again", pr_cancelled: "The review was cancelled",
    an_first: "Start", an_prev: "Previous move", an_next: "Next move", an_last: "End", an_engine: "Engine",
    an_back: "Back to the game", an_close: "Close analysis", an_promote: "Make main line", an_delete: "Delete move",
    an_comment: "Comment", an_analyse: "Analyse", ep_lines: "Lines", ep_thinking: "Analysing…",
    ep_rule_red: "Red wins", ep_rule_black: "Black wins", // a win by the repetition rules
    ep_paused: "The computer is moving; analysis paused…",
    ep_time: "Analysed for 5 minutes and stopped. Show another position or reopen the engine to go on.",
    ep_stats: "depth {depth} · {nps} nodes/s",
    review: "Review", rv_running: "Reviewing", rv_graph: "Evaluation graph", rv_title: "Review",
    rv_side: "{side}: accuracy {acc}% · inaccuracies {i} · mistakes {m} · blunders {b}", rv_worst: "Biggest mistake:",
    rv_better: "better was {move}", rv_clean: "No clear mistakes", rv_practice: "Learn from mistakes",
    rv_inaccuracy: "Inaccuracy.", rv_mistake: "Mistake.", rv_blunder: "Blunder.",
  },
};

export const LEVEL_NAMES = {
  zh: { novice: "入门", beginner: "初级", intermediate: "中级", advanced: "高级", master: "大师", adaptive: "自适应" },
  en: { novice: "Novice", beginner: "Beginner", intermediate: "Intermediate", advanced: "Advanced", master: "Master", adaptive: "Adaptive" },
};

// The coach, the rating and the profile page (coach.js, profile.js).
Object.assign(TEXT.zh, {
  profile: "我的等级", profile_chart: "等级分走势", profile_no_games: "还没有计分的对局",
  profile_first: "开始", profile_games_n: "{n} 局", profile_rd: "偏差 ±{rd}", profile_provisional: "（暂定）",
  profile_recent: "最近的计分对局", profile_rating: "等级分", profile_win: "胜", profile_loss: "负", profile_draw: "和",
  rating_change: "等级分 {before} → {after}（{delta}）· {rank}", rated_game: "本局计等级分",
  adaptive_level: "自适应（按你的等级分）", adaptive_label: "自适应 · {rank} ≈{elo}",
  adaptive_title: "介于{a}与{b}之间：深度 {depth}，候选 {multipv} 步，温度 {temp}",
  coach_mode: "教练模式", coach_mode_note: "（每步点评，不计等级分）",
  coach_checking: "教练正在看这步…", coach_takeback: "收回这步", coach_dismiss: "知道了",
  coach_good: "教练：这步不错", threat: "对方威胁", threat_title: "看对方的威胁（不计等级分）", hint_piece: "提示：动这个子", hint_line: "接着：",
  coach_takebacks: "教练建议收回 {n} 步（不算悔棋）", undos_n: "悔棋 {n} 次",
  coach_before_title: "教练提醒", coach_before_ask: "还要走这步吗？", coach_play_anyway: "仍然走", coach_change_move: "换一步",
});
Object.assign(TEXT.en, {
  profile: "Profile", profile_chart: "Rating history", profile_no_games: "No rated games yet",
  profile_first: "start", profile_games_n: "{n} games", profile_rd: "RD ±{rd}", profile_provisional: "(provisional)",
  profile_recent: "Recent rated games", profile_rating: "Rating", profile_win: "Win", profile_loss: "Loss",
  profile_draw: "Draw", rating_change: "Rating {before} → {after} ({delta}) · {rank}", rated_game: "This game is rated",
  adaptive_level: "Adaptive (from your rating)", adaptive_label: "Adaptive · ~{elo}",
  adaptive_title: "Between {a} and {b}: depth {depth}, {multipv} candidate moves, temperature {temp}",
  coach_mode: "Coach mode", coach_mode_note: " (comments on every move; unrated)",
  coach_checking: "The coach is looking at this move…", coach_takeback: "Take it back", coach_dismiss: "OK",
  coach_good: "Coach: a good move", threat: "Threat", threat_title: "What the opponent threatens (the game becomes unrated)", hint_piece: "Hint: move this piece", hint_line: "then: ",
  coach_takebacks: "{n} taken back on the coach's advice (not undos)", undos_n: "{n} undos",
  coach_before_title: "Coach", coach_before_ask: "Play it anyway?", coach_play_anyway: "Play it", coach_change_move: "Choose another",
});

// The referee's explanation of a repetition ruling in the result dialog (referee).
Object.assign(TEXT.zh, { referee_explain: "棋例判定：每步的性质与条款" });
Object.assign(TEXT.en, { referee_explain: "How the referee ruled: each move's class and article (in Chinese)" });
// The named opponents and their remarks (talk.js).
Object.assign(TEXT.zh, {
  opponent: "对手", opponent_none: "不选（按难度）", opponent_label: "{name} · {level} · {style}{elo}",
  talk_setting: "对手说话", talk_speech: "朗读对手的话", talk_on: "开", talk_off: "关",
});
Object.assign(TEXT.en, {
  opponent: "Opponent", opponent_none: "None (by level)", opponent_label: "{name} · {level} · {style}{elo}",
  talk_setting: "Opponent talks", talk_speech: "Read the remarks aloud", talk_on: "On", talk_off: "Off",
});

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
