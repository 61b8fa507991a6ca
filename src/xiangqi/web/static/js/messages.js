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
  jsonwhere: { "request body": "请求内容", message: "消息" },
  param: { "body field": "字段", "query parameter": "查询参数", "path parameter": "路径参数", "header parameter": "请求头" },
  pytype: {
    string: "字符串", integer: "整数", boolean: "布尔值", number: "数", dictionary: "对象", list: "数组",
    str: "字符串", int: "整数", bool: "布尔值", float: "数", dict: "对象", NoneType: "null",
  },
  most: { most: "最多", least: "至少" },
  datefield: { date_from: "起始日期", date_to: "截止日期" }, // polish2: the search's date filters
  rule: {
    advisor: "仕（士）只能在本方九宫的五个点上", elephant: "相（象）只能在本方的七个象位上",
    pawn: "兵（卒）不会后退，也不会在未过河时横走",
  },
};

const SQ = "([a-i][0-9])";
const RULES = [
  // (first: these quote file names, which the record rule "name.ext: message" below would take)
  [/^game ('[^']*') is not the current game \((.+)\)$/, "$1 不是当前对局（当前对局为 $2）"],
  [/^this socket is for game (\w+), which another game replaced: nothing was done \(reconnect to the current game\)$/,
    "此连接属于已被新对局取代的对局 $1：未执行任何操作（请重新连接当前对局）"],
  [/^(red|black) player must be one of ([\w, ]+), got (.+)$/, "{side:$1}的棋手须为 $2 之一，现为 $3"],
  [/^level must be one of ([\w, ]+) or an added engine \(engine:<id>\), got (.+)$/,
    "难度须为 $1 之一或已添加的引擎（engine:<编号>），现为 $2"],
  [/^level must be one of ([\w, ]+), got (.+)$/, "难度须为 $1 之一，现为 $2"],
  // -- storage (xiangqi.app.play.store: a change that cannot be saved is not made; notices at start-up) --
  [/^the disk is full: nothing could be written to (.+); free some space and try again$/s,
    "磁盘已满：没有写入 $1 的任何内容；请腾出一些空间后再试"],
  [/^the disk holding (.+) is full: the database cannot be opened; free some space and start again$/s,
    "$1 所在的磁盘已满，无法打开数据库；请腾出一些空间后重新启动"],
  [/^the database (.+) is read-only: nothing can be saved$/s, "数据库 $1 是只读的：无法保存"],
  [/^the database (.+) is read-only: games can be viewed but not played or saved; make it writable \(or use another --data-dir\) and restart$/s,
    "数据库 $1 是只读的：可以查看对局，但不能走棋或保存；请让它可写（或换一个 --data-dir）后重启"],
  [/^cannot create the database in (.+): it is read-only; make it writable or choose another with --data-dir$/s,
    "无法在 $1 中建立数据库：该目录是只读的；请让它可写，或用 --data-dir 另选目录"],
  [/^disk I\/O error on (.+) \(disk I\/O error\); nothing was written$/s, "$1 磁盘读写出错；没有写入任何内容"],
  [/^disk I\/O error on (.+) \((.+)\); nothing was written$/s, "$1 磁盘读写出错（{$2}）；没有写入任何内容"],
  [/^the database (.+) is damaged \((.+)\); restart the server to keep it aside and start a fresh one$/s,
    "数据库 $1 已损坏（{$2}）；请重启服务器，它会把损坏的文件另存并新建数据库"],
  [/^the database (.+) was damaged \((.+)\); it was kept as (.+) and a fresh one was started; (\d+) saved games? came back from it, with the current game$/s,
    "数据库 $1 已损坏（{$2}）；原文件已另存为 $3，并新建了数据库；从中找回了 $4 局已保存的对局和当前对局"],
  [/^the database (.+) was damaged \((.+)\); it was kept as (.+) and a fresh one was started; (\d+) saved games? came back from it$/s,
    "数据库 $1 已损坏（{$2}）；原文件已另存为 $3，并新建了数据库；从中找回了 $4 局已保存的对局"],
  [/^the database (.+) was damaged \((.+)\); it was kept as (.+) and a fresh one was started$/s,
    "数据库 $1 已损坏（{$2}）；原文件已另存为 $3，并新建了数据库"],
  [/^cannot start a fresh database at (.+): (.+)$/s, "无法在 $1 新建数据库：{$2}"],
  [/^database error on (.+?): (.+)$/s, "数据库 $1 出错：{$2}"],
  [/^the saved current game could not be replayed \((.+)\); it was kept aside \(table damaged_games, row (\d+)\) and a new game was started$/s,
    "保存的当前对局无法复原（{$1}）；它已另存（damaged_games 表第 $2 行），并开始了新对局"],
  [/^the saved current game could not be replayed \((.+)\)$/s, "保存的当前对局无法复原（{$1}）"],
  [/^saved game (\d+) is damaged and cannot be opened \((.+)\); (?:.+)$/s, "棋谱库第 $1 局已损坏，无法打开（{$2}）；可以删除它"],
  [/^another xiangqi server \(pid (\d+)\) is using the data dir (.+); stop it first, or start this one with another --data-dir$/s,
    "另一个象棋服务器（进程 $1）正在使用数据目录 $2；请先关闭它，或用 --data-dir 另选目录"],
  [/^another xiangqi server is using the data dir (.+); stop it first, or start this one with another --data-dir$/s,
    "另一个象棋服务器正在使用数据目录 $1；请先关闭它，或用 --data-dir 另选目录"],
  // SQLite's own words, quoted by the messages above
  [/^(?:file is not a database|file is encrypted or is not a database)$/, "不是数据库文件"],
  [/^database disk image is malformed$/, "数据库文件结构已损坏"],
  [/^(?:\(sqlite3\.\w+\) )?(?:database or disk is full)(?:\n.*)?$/s, "数据库或磁盘已满"],
  [/^(?:\(sqlite3\.\w+\) )?disk I\/O error(?:\n.*)?$/s, "磁盘读写出错"],
  [/^(?:\(sqlite3\.\w+\) )?attempt to write a readonly database(?:\n.*)?$/s, "试图写入只读数据库"],
  [/^(?:\(sqlite3\.\w+\) )?unable to open database file(?:\n.*)?$/s, "无法打开数据库文件"],
  [/^\w*Error: (.+)$/s, "{$1}"],
  [/^the record is (\w+), not text$/, "记录不是文本"],
  [/^the record is not JSON \((.+)\)$/s, "记录不是 JSON"],
  [/^the record is not a JSON object$/, "记录不是 JSON 对象"],
  [/^the record's field ('\w+') is missing or not text$/, "记录的字段 $1 缺失或不是文本"],
  [/^the record's moves are not a list of ICCS moves$/, "记录的着法不是 ICCS 着法列表"],
  // -- bad input (xiangqi.web.limits, xiangqi.app.play.settings, xiangqi.app.library.sandbox) --
  [/^request body too large: (?:more than )?(\d+) bytes \(limit (\d+) bytes for this route\)$/, "请求内容过大：$1 字节（此接口上限 $2 字节）"],
  [/^bad Content-Length header (.+)$/, "Content-Length 请求头有误：$1"],
  [/^message too large: (\d+) bytes \(limit (\d+)\)$/, "消息过大：$1 字节（上限 $2）"],
  [/^(request body|message) (is not UTF-8|is not valid|is not acceptable|holds|nested)(.*)$/s, "{jsonwhere:$1}{$2$3}"],
  [/^(request body|message) (NaN|Infinity|-Infinity|number|duplicate|string at|key at)(.*)$/s, "{jsonwhere:$1}中{$2$3}"],
  [/^is not UTF-8 \(it looks like UTF-16 or UTF-32\): JSON must be sent as UTF-8$/, "不是 UTF-8 编码（像是 UTF-16 或 UTF-32）：JSON 须用 UTF-8 发送"],
  [/^is not valid UTF-8: byte (0x[0-9a-f]{2}) at offset (\d+) \((.+)\)$/, "不是有效的 UTF-8：偏移 $2 处的字节 $1 有误"],
  [/^is not valid JSON: (.+) at line (\d+) column (\d+) \(offset (\d+)\)$/s, "不是有效的 JSON：第 $2 行第 $3 列（偏移 $4）有误"],
  [/^is not acceptable JSON: (.+)$/s, "不是可接受的 JSON（例如数字过长）"],
  [/^holds a lone UTF-16 surrogate character$/, "含有落单的 UTF-16 代理字符"],
  [/^nested too deeply at offset (\d+) \(limit (\d+) levels\)$/, "嵌套过深：偏移 $1 处超过 $2 层"],
  [/^(NaN|Infinity|-Infinity) is not a JSON number \(NaN and Infinity are not allowed\)$/, "含有 $1：不是 JSON 数字（不允许 NaN 和 Infinity）"],
  [/^number (\S+) is too large \(it overflows to infinity\)$/, "数字 $1 过大（溢出为无穷大）"],
  [/^duplicate key (.+)$/s, "重复的键 $1"],
  [/^string at top level holds a lone UTF-16 surrogate \(an unpaired \\ud800-\\udfff escape\)$/, "顶层的字符串含有落单的 UTF-16 代理字符（\\ud800-\\udfff）"],
  [/^string at (.+) holds a lone UTF-16 surrogate \(an unpaired \\ud800-\\udfff escape\)$/s, "字段 $1 的字符串含有落单的 UTF-16 代理字符（\\ud800-\\udfff）"],
  [/^key at top level holds a lone UTF-16 surrogate$/, "顶层的键含有落单的 UTF-16 代理字符"],
  [/^key at (.+) holds a lone UTF-16 surrogate$/s, "位于 $1 的键含有落单的 UTF-16 代理字符"],
  // a request's fields (limits.describe_validation_error: "<where>: <what>; …")
  [/^((?:body|unknown field|body field|query parameter|path parameter|header parameter|request|invalid request)\b.*?); (.+)$/s, "{list:$1; $2}"],
  [/^and (\d+) more$/, "另有 $1 处"],
  [/^unknown field ('[^']*') in the (body|query|path|request)$/, "不认识的字段 $1"],
  [/^(body field|query parameter|path parameter|header parameter) ('[^']*') is missing$/, "缺少{param:$1} $2"],
  [/^body is missing$/, "缺少请求内容"],
  [/^(body field|query parameter|path parameter|header parameter) ('[^']*'): (.+)$/s, "{param:$1} $2 有误：{$3}"],
  [/^body: (.+)$/s, "请求内容有误：{$1}"],
  [/^invalid request$/, "请求有误"],
  [/^Input should be a valid (string|integer|boolean|number|dictionary|list)(?:, .+)?$/, "应为{pytype:$1}"],
  [/^Input should be (.+)$/s, "取值应为 {or:$1}"],
  [/^String should have at (most|least) (\d+) characters?$/, "{most:$1} $2 个字符"],
  [/^List should have at (most|least) (\d+) items? after validation, not (\d+)$/, "{most:$1} $2 项，现有 $3 项"],
  [/^Value error, (.+)$/s, "{$1}"],
  [/^unknown setting ('[^']*') \(settings: (.+)\)$/, "没有设置项 $1（设置项有：$2）"],
  [/^setting ('[^']*') cannot be (.+) \(allowed: (.+)\)$/s, "设置项 $1 不能取 $2（可取：$3）"],
  [/^setting ('[^']*') is too long \(name (\d+), value (\d+) characters\)$/, "设置项 $1 过长（名称最多 $2 个字符，值最多 $3 个字符）"],
  [/^settings must be a JSON object of setting: value, got (\w+)$/, "设置须为“设置项: 值”的 JSON 对象，现为{pytype:$1}"],
  [/^record too complex: reading it took longer than (\S+) s \(the limit for one record\)$/, "棋谱过于复杂：读取超过 $1 秒（单个棋谱的上限）"],
  [/^record too complex: nested too deeply to read$/, "棋谱过于复杂：嵌套太深，无法读取"],
  [/^record too complex: reading it needs too much memory$/, "棋谱过于复杂：读取需要的内存太多"],
  [/^record too complex: its reader stopped without an answer$/, "棋谱过于复杂：读取程序没有给出结果就停止了"],
  [/^the record cannot be read \((.+)\)$/s, "无法读取棋谱（$1）"],
  [/^the record reader process did not start$/, "读取棋谱的进程没有启动"],
  // -- concurrency (xiangqi.app.play.hub, xiangqi.web.clients) --
  [/^undo refused: it was pressed at version (\d+) but the game is now at version (\d+) \(it changed meanwhile\); look at the current position and undo again$/,
    "悔棋未执行：按下时是第 $1 版，对局现已是第 $2 版（其间有变化）；请看清当前局面后再悔棋"],
  [/^hint cancelled: (.+)$/s, "提示已取消：{$1}"],
  [/^the draw offer was not judged: (.+)$/s, "提和未获答复：{$1}"],
  [/^the position changed before the hint was ready$/, "提示算出之前局面已变"],
  [/^a newer hint request from the same page replaced this one$/, "同一页面又请求了新的提示"],
  [/^the page went away$/, "页面已关闭"],
  [/^the request ended$/, "请求已结束"],
  [/^timed out$/, "超时"],
  [/^the game's engine task ended$/, "对局的引擎任务已结束"],
  [/^cancelled(?: before it began)?$/, "已取消"],
  [/^the computer has not failed: there is nothing to retry$/, "电脑没有出错，无需重试"],
  [/^'version' must be the integer version of the state shown, got (.+)$/, "version 须为所显示局面的整数版本号，现为 $1"],
  [/^unknown message type (.+) \(move, undo, resign, draw, hint, retry, state\)$/, "不认识的消息类型 $1（可用 move、undo、resign、draw、hint、retry、state）"],
  // the computer's failure (hub._engine_failure; its reasons from hub._think)
  [/^The computer could not make its move \((.+); (\d+) attempts\)\. Retry it, make its move yourself, or undo\.$/s,
    "电脑未能走棋（{$1}；已试 $2 次）。可以重试、替电脑走一步，或悔棋。"],
  [/^no move within (\S+) s$/, "$1 秒内没有走出着法"],
  [/^the engine failed: (\w+): (.*)$/s, "引擎出错（$1: $2）"],
  [/^the engine gave no move \(it returned (.+)\)$/s, "引擎没有给出着法（返回了 $1）"],
  [/^the computer chose a move the board refuses \((.+)\)$/s, "电脑选了一步不合规则的棋（{$1}）"],
  // -- security (xiangqi.web.security: refused before any route runs) --
  [/^repeated header\(s\): (.+)$/, "请求头重复：$1"],
  [/^this server answers only to its own address \((.+)\), not to Host (.+)$/s, "本服务器只接受发往它自己地址（$1）的请求，不接受 Host $2"],
  [/^requests from other web pages are refused \((.+)\)$/s, "拒绝来自其他网页的请求（$1）"],
  [/^missing or out-of-date session token: send it in (?:the 'token' query parameter|the X-Xiangqi-Token header) \(reload the page; scripts read it from the page, see xiangqi\.web\.server\)$/,
    "会话令牌缺失或已过期：请刷新页面"],
  // request validation (a list of {loc, msg} joined by message())
  [/^(?:body|query|path)\.([\w.]+): (.+)$/s, "请求有误（$1）：{$2}"],
  [/^Field required$/, "缺少此项"],
  [/^Extra inputs are not permitted$/, "不允许的字段"],
  [/^(?:Input should be|Value error,|String should have) (.+)$/s, "取值不合要求（$1）"],
  // -- FEN (xiangqi.core.board) --
  [/^bad FEN (\w+) at character (\d+): (.+)$/s, "FEN 有误（{field:$1}，第 $2 个字符）：{$3}"],
  [/^empty FEN$/, "FEN 为空"],
  [/^board must have 10 ranks separated by '\/', got (\d+)$/, "棋盘须有用“/”分隔的 10 行，现有 $1 行"],
  [/^empty-run digit 0 in FEN row (\d+) \(rank (\d)\)$/, "FEN 第 $1 行（棋盘第 $2 行）有表示空点的数字 0"],
  [/^unknown piece letter (.+) in FEN row (\d+) \(rank (\d)\)$/, "FEN 第 $2 行（棋盘第 $3 行）有不认识的棋子字母 $1"],
  [/^FEN row (\d+), rank (\d) \((.*)\) has more than 9 points$/, "FEN 第 $1 行（棋盘第 $2 行，$3）超过 9 个点"],
  [/^FEN row (\d+), rank (\d) \((.*)\) has (\d+) points, expected 9$/, "FEN 第 $1 行（棋盘第 $2 行，$3）有 $4 个点，应为 9 个"],
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
  // -- the game (xiangqi.app.play.session, xiangqi.app.play.hub) --
  [/^the game is over \((.+)\); start a new game or undo$/s, "对局已结束（{$1}）；请开新局或悔棋"],
  [/^the game is already over$/, "对局已经结束"],
  [/^the game is over: no hint$/, "对局已结束，没有提示"],
  [/^the game is over: no threat to show$/, "对局已结束，没有威胁可看"],
  [/^no coach warning for ply (\d+) to take back \(the game moved on\)$/, "第 $1 步没有可收回的教练警告（对局已变化）"],
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
  // -- position problems (xiangqi.app.play.position; the Chinese as the editor shows it) --
  [new RegExp(`^the (red|black) (advisor|elephant|pawn) on ${SQ} stands on a square no \\2 can reach$`),
    "{sidepiece:$1 $2}在$3：{rule:$2}"],
  [new RegExp(`^(the kings face each other|the side not to move is in check) \\(${SQ}\\): the side to move could take the king$`),
    "{why:$1}（$2）：轮走方可以直接吃将"],
  // -- records (xiangqi.app.library.records, xiangqi.core.*) --
  [/^(pasted text|[^:\n]*\.[A-Za-z0-9]{1,5}): (.+)$/s, "{label:$1}：{$2}"],
  [/^empty: nothing to open$/, "内容为空，没有可打开的"],
  [/^no game found \(not a PGN, XQF, DhtmlXQ\/UBB, EPD or FEN record\)$/, "没有找到对局（不是 PGN、XQF、DhtmlXQ/UBB、EPD 或 FEN 棋谱）"],
  [/^no game found \(not a PGN, XQF, DhtmlXQ or EPD record\)(?:: (.+))?$/s, "没有找到对局（不是 PGN、XQF、DhtmlXQ 或 EPD 棋谱）{opt:$1}"],
  [/^this is an? (PNG|JPEG|GIF|WebP) image, not a game record; accepted formats: PGN, XQF, DhtmlXQ\/UBB, EPD, FEN$/, "这是$1 图片，不是棋谱；可以打开的格式：PGN、XQF、DhtmlXQ/UBB、EPD、FEN"],
  [/^this is a PDF document, not a game record; accepted formats: PGN, XQF, DhtmlXQ\/UBB, EPD, FEN$/, "这是PDF 文档，不是棋谱；可以打开的格式：PGN、XQF、DhtmlXQ/UBB、EPD、FEN"],
  [/^this is an? (ZIP|gzip) archive, not a game record; accepted formats: PGN, XQF, DhtmlXQ\/UBB, EPD, FEN$/, "这是$1 压缩包，不是棋谱；可以打开的格式：PGN、XQF、DhtmlXQ/UBB、EPD、FEN"],
  [/^cannot be read as a game record \((.+)\)$/s, "无法作为棋谱读取（$1）"],
  [/^the record's start position is bad: (.+)$/s, "棋谱的起始局面有误：{$1}"],
  [/^the record holds (\d+) game\(s\); there is no game (\d+)$/, "棋谱共有 $1 局，没有第 $2 局"],
  [/^the data is neither UTF-8, GB18030\/GBK nor Big5 text$/, "数据不是 UTF-8、GB18030/GBK 或 Big5 文本"],
  [/^the data is neither UTF-8, GB18030\/GBK nor Big5 text: (\d+) of its (\d+) bytes cannot be read as (\S+) \(the closest\), the first at byte (\d+) \(line (\d+): (0x[0-9a-f]{2})\); a text record may hold at most (\d+) such bytes$/,
    "数据不是 UTF-8、GB18030/GBK 或 Big5 文本：共 $2 字节，按最接近的 $3 读有 $1 个字节无法读取，第一个在第 $4 字节（第 $5 行：$6）；文本棋谱最多只能有 $7 个这样的字节"],
  [/^the data is neither UTF-8, GB18030\/GBK nor Big5 text: (\d+) or more of its (\d+) bytes cannot be read as (\S+) \(the closest\), the first at byte (\d+) \(line (\d+): (0x[0-9a-f]{2})\); a text record may hold at most (\d+) such bytes$/,
    "数据不是 UTF-8、GB18030/GBK 或 Big5 文本：共 $2 字节，按最接近的 $3 读有 $1 个以上字节无法读取，第一个在第 $4 字节（第 $5 行：$6）；文本棋谱最多只能有 $7 个这样的字节"],
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
  // -- polish2: the game a record message is about, a long quoted input, a refused analysis position --
  [/^game (\d+) \((.+?)\): (.+)$/s, "第 $1 局（$2）：{$3}"],
  [/^game (\d+): (.+)$/s, "第 $1 局：{$2}"],
  [/^bad FEN ('.*')… \((\d+) characters\): (.+)$/s, "FEN $1…（共 $2 个字符）有误：{$3}"],
  [/^bad FEN ('.*'): (.+)$/s, "FEN $1 有误：{$2}"],
  [/^(date_from|date_to): (?:date_from|date_to) '([^']*)': no such date \(month 01-12, day within the month\)$/,
    "{datefield:$1}：没有 $2 这个日期（月份 01-12，日须在该月之内）"],
  [/^(fen|similar): (.+)$/s, "FEN：{$2}"],
  [/^impossible position (\S+ [wb]\b[^:]*): (.+)$/s, "不可能的局面（$1）：{$2}"],
  // -- XQF export: what the file cannot keep (core/xqf.py xqf_losses, shown by exportnotes.js)
  [/^XQF has no field for (.+): dropped$/, "XQF 没有存放 $1 的字段：已舍去"],
  [/^(\w+) cut to the (\d+) bytes of its XQF field: (.+) -> (.*)$/s, "$1 超出 XQF 字段的 $2 字节，已截断：$3 → $4"],
  [/^Result (.+) is not one XQF holds \(1-0, 0-1, 1\/2-1\/2, \*\): written as unknown$/, "结果 $1 不是 XQF 能存的（1-0、0-1、1/2-1/2、*）：写为未知"],
  [/^XQF has no annotation glyphs: the NAGs of (\d+) move\(s\) dropped$/, "XQF 没有着法评注符号：已舍去 $1 步的评注符号（NAG）"],
  [/^XQF has no comment after the result: (.+) dropped$/s, "XQF 不能存结果之后的注释：$1 已舍去"],
  [/^(\d+) more not shown$/, "另有 $1 条未列出"],
  // a record cut short (core/pgn.py, xqf.py, dhtmlxq.py: RecordProblem kind "truncated")
  [/^truncated: (.+)$/s, "文件不完整：{$1}"],
  [/^the text ends inside the move list \(no \[\/DhtmlXQ_movelist\], (\d+) digits\): main line read to ply (\d+)$/, "文本在着法列表中间结束（没有 [/DhtmlXQ_movelist]，余 $1 位数字）：主线读到第 $2 步"],
  [/^unterminated comment at character (\d+), after ply (\d+)$/, "第 $1 个字符处的注释没有结束（第 $2 步之后）"],
  [/^the move text ends in half a move (.+?) after ply (\d+): (.+)$/s, "着法在第 $2 步之后只剩半步 $1：{$3}"],
  [/^unclosed '\(' at the end of the move text \(main line read to ply (\d+)\)$/, "着法末尾的“(”没有闭合（主线读到第 $1 步）"],
  [/^the move text ends on a move number after ply (\d+)$/, "着法在第 $1 步之后停在一个回合数上"],
  [/^the move text stops after ply (\d+) without its result \((.+?), as the Result tag says\): the file looks cut$/, "着法在第 $1 步之后结束，没有结果（Result 标签写的是 $2）：文件像是被截断了"],
  [/^record (\d+) at byte (\d+): the file ends in its comment length$/, "第 $1 条记录（字节 $2）：文件在注释长度处结束"],
  [/^record (\d+) at byte (\d+): comment length (\d+) runs past the end of the file \((\d+) bytes left\)$/, "第 $1 条记录（字节 $2）：注释长度 $3 超出了文件末尾（只剩 $4 字节）"],
  [/^the first record is cut short \((\d+) of 4 bytes\)$/, "第一条记录不完整（4 字节只有 $1 字节）"],
  [/^the file ends right after its 1024-byte header, with no move record$/, "文件在 1024 字节的文件头之后就结束了，没有着法记录"],
  [/^the move records end early, after (\d+) move record\(s\) \(byte (\d+); the records promise more\)$/, "着法记录提前结束：只有 $1 条（字节 $2；记录表明还有更多）"],
  // -- requests (xiangqi.web.server) --
  [/^(PGN|record) file too large: (\d+) bytes \(limit (\d+)\)$/, "文件过大：$2 字节（上限 $3）"],
  [/^empty upload: send the PGN file's bytes as the request body$/, "上传的内容为空"],
  [/^no saved game with id (\d+)$/, "棋谱库中没有编号 $1 的对局"],
  // -- storage (xiangqi.app.play.store): a full disk, a read-only or damaged database --
  [/^the disk is full: nothing could be written to (.+); free some space and try again$/s,
    "磁盘已满：无法写入 $1；请腾出空间后再试"],
  [/^the database (.+) is read-only: nothing can be saved$/s, "数据库 $1 是只读的：无法保存"],
  [/^the database (.+) is read-only: games can be viewed but not played or saved; make it writable \(or use another --data-dir\) and restart$/s,
    "数据库 $1 是只读的：只能查看对局，不能下棋或保存；请让它可写（或换一个 --data-dir）后重启"],
  [/^disk I\/O error on (.+) \((.+)\); nothing was written$/s, "写入 $1 时磁盘出错（$2）；什么也没有写入"],
  [/^the database (.+) is damaged \((.+)\); restart the server to keep it aside and start a fresh one$/s,
    "数据库 $1 已损坏（$2）；请重启服务器：它会被留存在一旁，并新建一个数据库"],
  [/^message must be (?:a JSON object|an object with a string 'type')$/, "消息格式有误"],
  // -- the analysis board and its engine panel (xiangqi.web.analysis_api, xiangqi.app.library.trees) --
  [/^(\S+) is not a legal move in (\S+ [wb]\b.*)$/, "$1 在此局面不是合规着法（$2）"],
  [/^move (\d+): (.+)$/s, "第 $1 步：{$2}"],
  [/^node (\d+): (.+)$/s, "第 $1 个节点：$2"],
  [/^bad position: (.+)$/s, "局面有误：{$1}"],
  [/^the tree's main line must begin with the game's moves$/, "分析树的主线须以对局的着法开头"],
  [/^the tree's start position is not the game's$/, "分析树的起始局面与对局不同"],
  [/^too many analyses on this server \(at most (\d+) at once\); close another panel$/,
    "服务器上同时进行的引擎分析太多（最多 $1 个）；请先关闭别的页面的引擎"],
  [/^start message: (.+)$/s, "分析请求有误：{$1}"],
  // -- Settings → engines (xiangqi.app.opponents.engines, xiangqi.web.engines_api) --
  [/^engine: (engine:\d+) is not an added engine of this server$/, "引擎 $1 不是本服务器已添加的引擎"],
  [/^no program named '(.+)' on the PATH; give the engine's full path$/, "找不到名为 $1 的程序；请给出引擎的完整路径"],
  [/^(.+): no such file$/, "$1：文件不存在"],
  [/^(.+) is a folder, not a program$/, "$1 是文件夹，不是程序"],
  [/^(.+) is not executable \(chmod \+x, or give the program that runs it\)$/, "$1 没有执行权限（chmod +x，或填写运行它的程序）"],
  [/^the engine's program is empty: give its path, e\.g\. (\S+)$/, "没有填写引擎程序：请给出它的路径，例如 $1"],
  [/^the engine's command line is too long$/, "引擎命令行太长"],
  [/^the engine's command line holds a NUL character$/, "引擎命令行含有 NUL 字符"],
  [/^(.+): the handshake failed: (.+)$/s, "$1：握手失败（$2）"],
  [/^the engine has no option '(.+)'$/, "引擎没有选项 $1"],
  [/^option (.+): a whole number is needed, got (.+)$/, "选项 $1：需要整数，收到 $2"],
  [/^option (.+): (-?\d+) is outside (\S*)…(\S*)$/, "选项 $1：$2 超出范围 $3…$4"],
  [/^option (.+): true or false is needed, got (.+)$/, "选项 $1：需要 true 或 false，收到 $2"],
  [/^option (.+): (.+) is not one of (.+)$/, "选项 $1：$2 不是可选值（$3）之一"],
  [/^option (.+) is a button; it has no value to set$/, "选项 $1 是按钮，没有可设的值"],
  [/^option (.+): a text of at most 200 characters on one line is needed$/, "选项 $1：需要一行不超过 200 字的文字"],
  [/^the time a move must be (\S+)…(\S+) seconds, got (.+)$/, "每步用时须在 $1…$2 秒之间，收到 $3"],
  [/^the database is read-only: engines cannot be added$/, "数据库只读：不能添加引擎"],
  [/^at most (\d+) engines can be added; remove one first$/, "最多可添加 $1 个引擎；请先删除一个"],
  [/^there is no engine (\d+) \(it may have been removed\)$/, "没有编号为 $1 的引擎（可能已被删除）"],
  [/^(.+): cannot be started: (.+)$/s, "$1：无法启动（$2）"],
  [/^(.+) resigned in (.+)$/, "$1 认输（$2）"],
  [/^(.+) gave no move \(a draw claim or no legal move\) in (.+)$/, "$1 没有给出着法（提和或无合规着法）（$2）"],
  [/^engines of this machine can be added and used only on a local server$/, "本机引擎只能在本地服务器上添加和使用"],
  // xiangqi.web.security: THIS_MACHINE_ONLY, PUBLIC_NO_PROGRAMS
  [/^this action starts programs on the server \(adding, checking or running an engine, engine matches\) and is allowed only from the server's own machine, not over the network$/,
    "此操作会在服务器上启动程序（添加、检查或运行引擎，引擎比赛），只能在服务器所在的电脑上进行，不能通过网络"],
  [/^a public server starts no programs for its clients: added engines and engine matches are only on a local server$/,
    "公开服务器不为用户启动程序：添加引擎和引擎比赛只在本地服务器上提供"],
  [/^(.+) failed: (.+)$/s, "$1 出错：$2"],
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
      if (kind === "or") return value.replace(/,? or /g, " 或 "); // 'human' or 'engine'
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
