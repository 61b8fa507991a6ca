// Messages from the server in the page's language. The rules library and the server speak English
// (HTTP error details, WebSocket errors, a record's problems, position problems); this is the one
// table that gives their Chinese text. Every message the page shows from the server goes through
// message(): in English it is shown as it came, in Chinese it is translated here.
//
// A rule is [English pattern, Chinese text]. The Chinese text fills $1, $2 … from the pattern's
// groups; a group written {$n} is itself a message (translated again, so "label: message" chains
// compose), {side:$n}, {piece:$n}, {field:$n} … name words of the small vocabularies below.

import { language } from "./i18n.js";

const WORDS = {
  side: { red: "红方", black: "黑方", Red: "红方", Black: "黑方" },
  head: { "Red wins": "红胜", "Black wins": "黑胜", Draw: "和棋" },
  piece: {
    king: "将（帅）", advisor: "仕（士）", elephant: "相（象）", horse: "马", rook: "车", cannon: "炮",
    pawn: "兵（卒）", piece: "棋子",
  },
  field: { board: "棋盘", side: "轮走方", counters: "计数" },
  counter: { "halfmove clock": "半回合计数", "fullmove number": "回合数" },
  label: { "pasted text": "粘贴的文本" }, // else a file name, shown as it is
  where: { "main line": "主线", variation: "变着" },
  dir: { forward: "进", back: "退" },
  why: { "the kings face each other": "将帅照面", "the side not to move is in check": "不走棋的一方正被将军" },
  // a piece by side, as position problems name it (红仕, 黑象, 红兵 …)
  sidepiece: {
    "red advisor": "红仕", "black advisor": "黑士", "red elephant": "红相", "black elephant": "黑象",
    "red pawn": "红兵", "black pawn": "黑卒",
  },
  rule: {
    advisor: "仕（士）只能在本方九宫的五个点上", elephant: "相（象）只能在本方的七个象位上",
    pawn: "兵（卒）不会后退，也不会在未过河时横走",
  },
};

const SQ = "([a-i][0-9])";
const RULES = [
  // -- FEN (xiangqi.core.board) --
  [/^bad FEN (\w+) at character (\d+): (.+)$/s, "FEN 有误（{field:$1}，第 $2 个字符）：{$3}"],
  [/^empty FEN$/, "FEN 为空"],
  [/^board must have 10 ranks separated by '\/', got (\d+)$/, "棋盘须有用“/”分隔的 10 行，现有 $1 行"],
  [/^empty-run digit 0 in rank (\d+)$/, "第 $1 行有表示空点的数字 0"],
  [/^unknown piece letter (.+) in rank (\d+)$/, "第 $2 行有不认识的棋子字母 $1"],
  [/^rank (\d+) \((.*)\) has more than 9 points$/, "第 $1 行（$2）超过 9 个点"],
  [/^rank (\d+) \((.*)\) has (\d+) points, expected 9$/, "第 $1 行（$2）有 $3 个点，应为 9 个"],
  [/^(red|black) has (\d+) (\w+?)s, at most (\d+) allowed$/, "{side:$1}有 $2 个{piece:$3}，最多只能有 $4 个"],
  [/^(red|black) must have exactly one king, found (\d+)$/, "{side:$1}必须恰有一个将（帅），现有 $2 个"],
  [new RegExp(`^(red|black) king on ${SQ} is outside its palace$`), "{side:$1}的将（帅）在 $2，不在九宫内"],
  [/^side to move must be w, r or b, got (.+)$/, "轮走方须为 w、r 或 b，现为 $1"],
  [/^too many fields after the side to move: (.+)$/, "轮走方之后的字段过多：$1"],
  [/^(halfmove clock|fullmove number) must be a non-negative integer, got (.+)$/, "{counter:$1}须为非负整数，现为 $2"],
  // -- moves --
  [/^illegal move (\S+) in ([^:]+): (.+)$/s, "着法 $1 不合规则：{$3}（局面 $2）"],
  [/^illegal move (\S+): (.+)$/s, "着法 $1 不合规则：{$2}"],
  [/^illegal$/, "不合规则"],
  [/^square out of range \(squares are 0-89\)$/, "格子超出棋盘（0-89）"],
  [new RegExp(`^no piece on ${SQ}$`), "$1 上没有棋子"],
  [new RegExp(`^the piece on ${SQ} is not (red|black)'s \\((red|black) to move\\)$`), "$1 上的棋子不是{side:$2}的（轮到{side:$3}走）"],
  [new RegExp(`^${SQ} is occupied by (red|black)'s own piece$`), "$1 上是{side:$2}自己的棋子"],
  [new RegExp(`^the (\\w+) on ${SQ} cannot move to ${SQ}$`), "$2 上的{piece:$1}不能走到 $3"],
  [/^it would leave the (red|black) king in check or facing the other king$/, "走后{side:$1}被将军或将帅照面"],
  [/^not a square: (.+) \(expected a file a-i and a rank 0-9\)$/, "不是棋盘上的点：$1（应为 a-i 列加 0-9 行）"],
  [/^not an ICCS move: (.+) \(expected e\.g\. h2e2 or H2-E2\)$/, "不是 ICCS 着法：$1（应如 h2e2 或 H2-E2）"],
  [/^not a move: (.+) starts and ends on the same square$/, "不是着法：$1 起点和终点相同"],
  [/^not a piece letter: (.+) \(expected KABNRCP, H or E, any case\)$/, "不是棋子字母：$1（应为 KABNRCP、H 或 E，大小写均可）"],
  [/^(.+) is ambiguous in ([^:]+): it fits (.+)$/, "$1 有歧义：可指 $3（局面 $2）"],
  [/^(.+?): (\S+) would leave the (red|black) king in check or facing the other king \((.+)\)$/,
    "$1：$2 走后{side:$3}被将军或将帅照面（局面 $4）"],
  [/^(.+?): no (red|black) (.*?)\b(king|advisor|elephant|horse|rook|cannon|pawn|piece)( on file \d+)? can (.+) \(([^()]+)\)$/,
    "$1：{side:$2}没有棋子能这样走（局面 $7）"],
  [/^not a Chinese move: (.+?)(?: \((.+)\))?$/, "不是中文纵线着法：$1"],
  [/^not a WXF move: (.+?)(?: \((.+)\))?$/, "不是 WXF 着法：$1"],
  [/^not a move in ICCS, Chinese or WXF notation: (.+)$/, "不是 ICCS、中文或 WXF 记法的着法：$1"],
  [/^move message needs a string 'move' in ICCS, e\.g\. h2e2$/, "走棋消息须带 ICCS 着法（如 h2e2）"],
  // -- the game (xiangqi.app.session, xiangqi.web.hub) --
  [/^the game is over \((.+)\); start a new game or undo$/s, "对局已结束（{$1}）；请开新局或悔棋"],
  [/^the game is already over$/, "对局已经结束"],
  [/^the game is over: no hint$/, "对局已结束，没有提示"],
  [/^nothing to undo: the computer plays both sides$/, "无棋可悔：双方都由电脑走"],
  [/^nothing to undo: no move has been played$/, "无棋可悔：还没有走棋"],
  [/^the game was lost on time \((.+)\): a move cannot be taken back$/, "对局已超时判负（{$1}），不能悔棋"],
  [/^it is the computer's turn; wait for its move$/, "轮到电脑走棋，请等它走完"],
  [/^it is the computer's turn$/, "轮到电脑走棋"],
  [/^no human player to resign$/, "没有可以认输的棋手"],
  [/^the start position needs both kings$/, "起始局面须有双方的将帅"],
  [/^the engine did not judge the draw offer within (\d+) s$/, "电脑未能在 $1 秒内答复提和"],
  [/^the engine gave no hint within (\d+) s$/, "电脑未能在 $1 秒内给出提示"],
  [/^no game found in the PGN text$/, "PGN 文本中没有对局"],
  [/^move (\d+) \((.+?)\) of the PGN cannot be played: (.+)$/s, "PGN 的第 $1 步（$2）走不了：{$3}"],
  [/^the PGN could not be read: (.+)$/s, "无法读取 PGN：{$1}"],
  [/^damaged game record: missing or bad field (.+)$/, "对局记录已损坏：字段 $1 缺失或有误"],
  [/^impossible start position: (.+)$/s, "不可能的起始局面：{list:$1}"],
  [/^cannot start from the record's position: (.+)$/s, "无法从棋谱的局面开始：{$1}"],
  [/^move (\d+) \((.+?)\) cannot be played: (.+)$/s, "第 $1 步（$2）走不了：{$3}"],
  // -- results (xiangqi.core.outcome; the server also sends their Chinese, see learn())
  [/^(Red wins|Black wins|Draw) — (.+)$/s, "{head:$1} — {$2}"],
  [/^checkmate$/, "将死"],
  [/^(Red|Black) resigns$/, "{side:$1}认输"],
  [/^(Red|Black) ran out of time$/, "{side:$1}超时"],
  [/^(Red|Black) is stalemated \(no legal move loses\)$/, "{side:$1}困毙"],
  [/^draw agreed$/, "双方议和"],
  [/^neither side has a rook, horse, cannon or pawn$/, "双方均无进攻子力，判和"],
  [/^(\d+) moves without a capture$/, "$1回合未吃子，判和"],
  [/^(\d+) plies without a capture$/, "$1着未吃子，判和"],
  [/^both sides check perpetually$/, "双方长将，不变作和"],
  [/^both sides repeat with allowed moves$/, "双方不变，判和"],
  [/^the position repeats; the record gives a draw$/, "循环重复，棋谱记为和棋"],
  [/^recorded as a draw$/, "棋谱记为和棋"],
  [/^recorded result$/, "记录结果"],
  // -- position problems (xiangqi.app.position; the Chinese as the editor shows it) --
  [new RegExp(`^the (red|black) (advisor|elephant|pawn) on ${SQ} stands on a square no \\2 can reach$`),
    "{sidepiece:$1 $2}在$3：{rule:$2}"],
  [new RegExp(`^(the kings face each other|the side not to move is in check) \\(${SQ}\\): the side to move could take the king$`),
    "{why:$1}（$2）：轮走方可以直接吃将"],
  // -- records (xiangqi.app.records, xiangqi.core.*) --
  [/^(pasted text|[^:\n]*\.[A-Za-z0-9]{1,5}): (.+)$/s, "{label:$1}：{$2}"],
  [/^empty: nothing to open$/, "内容为空，没有可打开的"],
  [/^no game found \(not a PGN, XQF, DhtmlXQ\/UBB, EPD or FEN record\)$/, "没有找到对局（不是 PGN、XQF、DhtmlXQ/UBB、EPD 或 FEN 棋谱）"],
  [/^no game found \(not a PGN, XQF, DhtmlXQ or EPD record\)(?:: (.+))?$/s, "没有找到对局（不是 PGN、XQF、DhtmlXQ 或 EPD 棋谱）{opt:$1}"],
  [/^cannot be read as a game record \((.+)\)$/s, "无法作为棋谱读取（$1）"],
  [/^the record's start position is bad: (.+)$/s, "棋谱的起始局面有误：{$1}"],
  [/^the record holds (\d+) game\(s\); there is no game (\d+)$/, "棋谱共有 $1 局，没有第 $2 局"],
  [/^the data is neither UTF-8, GB18030\/GBK nor Big5 text$/, "数据不是 UTF-8、GB18030/GBK 或 Big5 文本"],
  [/^the data is not valid (\S+): (.+)$/, "数据不是有效的 $1 文本：$2"],
  [/^not an XQF file: (\d+) bytes, the header alone is (\d+)$/, "不是 XQF 文件：只有 $1 字节，文件头就有 $2 字节"],
  [/^not an XQF file: it starts with (.+), expected b'XQ'$/, "不是 XQF 文件：开头是 $1，应为 XQ"],
  [/^the XQF position is impossible: (.+)$/s, "XQF 的局面不可能：{$1}"],
  [/^two pieces on the same point (\d+) in the XQF piece table$/, "XQF 棋子表中两枚棋子在同一点 $1"],
  [/^no DhtmlXQ record found \(expected \[DhtmlXQ_movelist\]… fields\)$/, "没有找到 DhtmlXQ 棋谱（应有 [DhtmlXQ_movelist] 等字段）"],
  [/^no position found in the list(?:: (.+))?$/s, "列表中没有局面{opt:$1}"],
  [/^an XQF file holds one game, got (\d+): convert them one at a time$/, "XQF 文件只能存一局，现有 $1 局：请逐局转换"],
  [/^the variations are nested too deeply to write as (\w+)$/, "变着嵌套太深，无法写成 $1"],
  // a record's problems (shown above its moves)
  [/^line (\d+): cannot read tag (.+)$/, "第 $1 行：无法读取标签 $2"],
  [/^line (\d+): (.+)$/s, "第 $1 行：{$2}"],
  [/^FEN tag: (.+)$/s, "FEN 标签：{$1}"],
  [/^start position: (.+)$/s, "起始局面：{$1}"],
  [/^unterminated comment at character (\d+)$/, "第 $1 个字符处的注释没有结束"],
  [/^'\(' before any move at character (\d+): variation ignored$/, "第 $1 个字符处的“(”在任何着法之前：变着已忽略"],
  [/^unmatched '\)' at character (\d+)$/, "第 $1 个字符处的“)”没有配对"],
  [/^unclosed '\(' at the end of the move text$/, "着法文本结尾有未闭合的“(”"],
  [/^ply (\d+) \((main line|variation)\): (.+)$/s, "第 $1 步（{where:$2}）：{$3}"],
  [/^ply (\d+): illegal move (\S+) \((.+)\); its line is dropped$/, "第 $1 步：着法 $2 不合规则（{$3}），该分支已舍去"],
  [/^the move records end early \(truncated file\)$/, "着法记录提前结束（文件不完整）"],
  // -- requests (xiangqi.web.server) --
  [/^(PGN|record) file too large: (\d+) bytes \(limit (\d+)\)$/, "文件过大：$2 字节（上限 $3）"],
  [/^empty upload: send the PGN file's bytes as the request body$/, "上传的内容为空"],
  [/^no saved game with id (\d+)$/, "棋谱库中没有编号 $1 的对局"],
  // -- storage (xiangqi.app.store): a full disk, a read-only or damaged database --
  [/^the disk is full: nothing could be written to (.+); free some space and try again$/s,
    "磁盘已满：无法写入 $1；请腾出空间后再试"],
  [/^the database (.+) is read-only: nothing can be saved$/s, "数据库 $1 是只读的：无法保存"],
  [/^the database (.+) is read-only: games can be viewed but not played or saved; make it writable \(or use another --data-dir\) and restart$/s,
    "数据库 $1 是只读的：只能查看对局，不能下棋或保存；请让它可写（或换一个 --data-dir）后重启"],
  [/^disk I\/O error on (.+) \((.+)\); nothing was written$/s, "写入 $1 时磁盘出错（$2）；什么也没有写入"],
  [/^the database (.+) is damaged \((.+)\); restart the server to keep it aside and start a fresh one$/s,
    "数据库 $1 已损坏（$2）；请重启服务器：它会被留存在一旁，并新建一个数据库"],
  [/^message must be (?:a JSON object|an object with a string 'type')$/, "消息格式有误"],
  // request validation (a list of {loc, msg} joined by message())
  [/^(?:body|query|path)\.([\w.]+): (.+)$/s, "请求有误（$1）：{$2}"],
  [/^Field required$/, "缺少此项"],
  [/^Extra inputs are not permitted$/, "不允许的字段"],
  [/^(?:Input should be|Value error,|String should have) (.+)$/s, "取值不合要求（$1）"],
];

// Texts the server sends in both languages (a result's reason, a forbidden move's reason): an
// English message that quotes one of them gets its Chinese from here.
const KNOWN = new Map();

/** Remember that the server's English ``en`` is ``zh`` in Chinese (pairs the server sent). */
export function learn(en, zh) {
  if (en && zh && KNOWN.size < 500) KNOWN.set(String(en).trim(), String(zh));
}

function word(kind, key) {
  const w = WORDS[kind] && WORDS[kind][key];
  return w === undefined ? null : w;
}

/** ``text`` translated to Chinese: ``{text, ok}``; ``ok`` is false when some part has no rule
 *  (that part is left in English). */
export function translate(text) {
  const s = String(text ?? "").trim();
  if (KNOWN.has(s)) return { text: KNOWN.get(s), ok: true };
  for (const [re, zh] of RULES) {
    const m = re.exec(s);
    if (!m) continue;
    let ok = true;
    const out = zh.replace(/\{(?:(\w+):)?([^}]*)\}|\$(\d)/g, (all, kind, arg, n) => {
      if (n !== undefined) return m[Number(n)] ?? "";
      const value = arg.replace(/\$(\d)/g, (_, k) => m[Number(k)] ?? "");
      if (!kind) { const r = translate(value); ok = ok && r.ok; return r.text; }
      if (kind === "opt") {
        if (!value) return "";
        const r = translate(value);
        ok = ok && r.ok;
        return `：${r.text}`;
      }
      if (kind === "list") {
        return value.split("; ").map((part) => { const r = translate(part); ok = ok && r.ok; return r.text; }).join("；");
      }
      const w = word(kind, value);
      if (w === null && kind === "label") return value;
      if (w === null) { ok = false; return value; }
      return w;
    });
    return { text: out, ok };
  }
  return { text: s, ok: false };
}

/** A server message in the page's language (``text`` is the English the server sent; a list of
 *  request-validation errors ``[{loc, msg}]`` becomes one line). */
export function message(text) {
  if (Array.isArray(text)) {
    text = text.map((e) => (e && typeof e === "object" ? `${(e.loc || []).join(".")}: ${e.msg}` : String(e))).join("; ");
  } else if (text && typeof text === "object") {
    text = text.detail ?? JSON.stringify(text);
  }
  if (language() !== "zh") return String(text ?? "");
  return translate(text).text;
}

/** A position problem ``{zh, en}`` in the page's language: the Chinese from this table when it knows
 *  the message, else the server's own Chinese. */
export function problemText(p) {
  if (language() !== "zh") return p.en;
  const r = translate(p.en);
  return r.ok ? r.text : p.zh;
}
