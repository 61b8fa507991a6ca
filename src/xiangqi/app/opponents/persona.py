"""Named computer opponents with a character that speaks (issue 17, after 象棋高手's talking computer).

An opponent (:data:`OPPONENTS`) is a level of :mod:`xiangqi.engine.levels` (its Elo is that level's
measured Elo, ``engine/level_elo.json``), a playing style (:mod:`xiangqi.app.opponents.persona_style`) and a
character: a name, an avatar character and a way of speaking. A game against one keeps its key in
``session.extras["opponent"]``.

:class:`TalkService` makes the opponent's remarks. Every remark is triggered by the position, the
computer's own evaluation or the player's record, never by chance (only the wording varies, chosen
by a hash of the game, the ply and the trigger):

- ``greet`` and ``history`` when the game starts: the player's record from the store's library
  (:func:`player_history`: colour streaks "你已经连续执黑八盘了", results against this opponent, a
  winning or losing streak, the favourite opening as Red);
- ``blunder_player`` / ``blunder_self``: the computer's evaluation after its move rose (fell) by
  :data:`BLUNDER_CP` or more against its evaluation one move earlier: the player's move in between
  was worse than the computer expected (or refuted the computer's previous move);
- ``sacrifice_player`` / ``sacrifice_self``: a move that leaves material worth
  :data:`SACRIFICE_CP` or more to be won by a simple exchange (:func:`material_offered`) that the
  search says is sound: the computer's evaluations one move apart are both known (and the game not
  decided) and the mover's side lost at most :data:`SOUND_CP` by it despite the material;
- ``greet`` variants of "again" or "first meeting" only when the stored games against this
  opponent say so (:attr:`History.vs_games`), never a greeting the record below it contradicts;
- ``rook_won`` / ``rook_lost``: a rook captured;
- ``perpetual``: the player's next move would complete a cycle the rules forbid (the referee's
  :func:`~xiangqi.core.referee.forbidden_moves`), or the player has checked on each of its last
  four moves and the position repeats;
- ``opening``: the ECCO opening of the game (:meth:`GameSession.opening`) when it becomes known or
  changes (at most every :data:`OPENING_GAP` plies, in the first 30 plies);
- ``better`` / ``winning`` / ``worse`` / ``losing`` / ``mate_found`` / ``mated``: the computer's
  evaluation crossing ±:data:`BETTER_CP` or ±:data:`WINNING_CP`, or a mate found;
- ``end_win`` / ``end_loss`` / ``end_draw`` / ``resign``: the result.

Remarks are kept in ``session.extras["talk"]`` (saved with the game: a reloaded page shows them), a
move taken back removes the remarks made after it, and the ``talk`` setting ``off`` stops them all.
Texts are in Chinese and English; the page shows the one of its language and may speak it
(``talk_speech``, the browser's speech synthesis).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import re
from collections import Counter
from typing import Any

from xiangqi.app.opponents.persona_style import MATERIAL, STYLES, Style
from xiangqi.core.board import BLACK, RED, ROOK, STARTING_FEN, Board, Move, Termination

log = logging.getLogger(__name__)

__all__ = ["Opponent", "OPPONENTS", "get_opponent", "opponent_view", "History", "player_history",
           "history_facts", "material_offered", "TalkService", "BLUNDER_CP", "SACRIFICE_CP", "SOUND_CP",
           "BETTER_CP",
           "WINNING_CP", "MAX_REMARKS", "OPENING_GAP"]

#: A swing of the computer's evaluation between two of its moves that makes the move between a blunder.
BLUNDER_CP = 250
#: Material (centipawns) a move must leave to be won for it to be a sacrifice.
SACRIFICE_CP = 200
#: A move that offers material is a sacrifice only when the search says it is sound: the mover's
#: evaluation (the computer's, one move apart) got worse by at most this much despite the material.
SOUND_CP = 100
#: Evaluation bands (the computer's view, centipawns): better, winning.
BETTER_CP, WINNING_CP = 300, 900
#: An evaluation beyond this before the swing means the game is decided: no blunder remark then.
DECIDED_CP = 1500
#: Fewest plies between two opening remarks, and between two evaluation-band remarks.
OPENING_GAP, BAND_GAP = 4, 6
#: Remarks kept per game (the oldest go first).
MAX_REMARKS = 40


@dataclasses.dataclass(frozen=True)
class Opponent:
    """A named computer opponent: ``level`` (a level key), ``style`` (a key of
    :data:`xiangqi.app.opponents.persona_style.STYLES`), ``margin_cp`` (the least margin its style chooses in,
    for a level that has none: 大师), names, a one-line description, the character on its avatar and
    the pitch/rate its voice is spoken with (speechSynthesis' 0–2 and 0.1–10)."""

    key: str
    name_zh: str
    name_en: str
    level: str
    style: str
    about_zh: str
    about_en: str
    avatar: str
    pitch: float = 1.0
    rate: float = 1.0
    margin_cp: int = 0
    hello_zh: tuple[str, ...] = ()
    hello_en: tuple[str, ...] = ()
    #: greetings only for a player met before ("again"), and only for one never met ("nice to meet
    #: you"): which applies comes from the stored games against this opponent (History.vs_games)
    again_zh: tuple[str, ...] = ()
    again_en: tuple[str, ...] = ()
    first_zh: tuple[str, ...] = ()
    first_en: tuple[str, ...] = ()
    win_zh: str = ""
    win_en: str = ""
    lose_zh: str = ""
    lose_en: str = ""

    def style_obj(self) -> Style:
        """Its :class:`~xiangqi.app.opponents.persona_style.Style`, with its ``margin_cp`` when it has one."""
        st = STYLES[self.style]
        return dataclasses.replace(st, min_margin_cp=self.margin_cp) if self.margin_cp else st


#: The opponents, weakest first.
OPPONENTS: dict[str, Opponent] = {o.key: o for o in (
    Opponent("afu", "阿福", "A-Fu", "beginner", "attacking",
             "村口大树下的棋迷，开局就架当头炮，见将就将。",
             "A regular under the village tree: central cannon first, a check whenever he can.",
             "福", pitch=1.2, rate=1.05,
             hello_zh=("来来来，杀一盘！", "摆上摆上，杀一盘！"),
             hello_en=("Come on, let's have a game!", "Set them up, let's play!"),
             again_zh=("又来啦？摆上摆上！",), again_en=("Back again? Set them up!",),
             win_zh="哈哈，当头炮就是厉害！", win_en="Ha! Nothing beats the central cannon!",
             lose_zh="输了输了，下回再来！", lose_en="I lost. Again next time!"),
    Opponent("zhou", "周老伯", "Uncle Zhou", "intermediate", "solid",
             "退休的数学老师，先求不败，能兑子就兑子。",
             "A retired maths teacher: first make sure not to lose, and trade when he can.",
             "周", pitch=0.8, rate=0.9,
             hello_zh=("慢慢下，不着急。", "下棋如做人，稳字当头。"),
             hello_en=("No hurry, let's play slowly.", "In chess as in life: safety first."),
             win_zh="稳扎稳打，总能赢。", win_en="Slow and steady wins in the end.",
             lose_zh="后生可畏啊。", lose_en="The young ones are fearsome."),
    Opponent("yan", "小燕", "Xiaoyan", "intermediate", "positional",
             "棋社里的大学生，喜欢出子抢位，不爱兑子。",
             "A student at the chess club: develops fast, wants space, avoids trades.",
             "燕", pitch=1.35, rate=1.1,
             hello_zh=("你好呀，今天下快一点？",), hello_en=("Hi! Shall we play a quick one?",),
             first_zh=("请多指教！",), first_en=("Nice to meet you, go easy on me!",),
             again_zh=("又见面啦，这次我可不会让你。",), again_en=("We meet again! No mercy this time.",),
             win_zh="子力活了，棋就好下了。", win_en="Active pieces make the game easy.",
             lose_zh="我得回去复盘了。", lose_en="I need to go over this game."),
    Opponent("tie", "铁将军", "Iron General", "advanced", "attacking",
             "业余比赛的常胜将军，专攻九宫，不惜弃子。",
             "A winner of amateur tournaments: goes for the palace and gives material for the attack.",
             "铁", pitch=0.7, rate=1.0,
             hello_zh=("摆好阵势，我要进攻了。", "小心你的九宫。"),
             hello_en=("Set up your defences: I am coming.", "Mind your palace."),
             win_zh="攻城拔寨，一鼓作气！", win_en="Storm the palace, in one go!",
             lose_zh="好防守，我服。", lose_en="Good defence. I yield."),
    Opponent("chen", "陈大师", "Master Chen", "master", "solid", "特级大师的风范，厚积薄发，不给对手机会。",
             "The manner of a grandmaster: builds slowly, gives the opponent nothing.",
             "陈", pitch=0.9, rate=0.85, margin_cp=15,
             hello_zh=("请。", "今天看看你的功力。"),
             hello_en=("Please, begin.", "Let us see how strong you are today."),
             win_zh="棋差一着，满盘皆输。", win_en="One move short, and the whole game is lost.",
             lose_zh="后生可畏，佩服。", lose_en="Impressive. My respects."),
)}


def get_opponent(key: str | None) -> Opponent | None:
    """The opponent named ``key`` (None for None or an unknown key)."""
    return OPPONENTS.get(key) if isinstance(key, str) else None


def opponent_view(op: Opponent) -> dict[str, Any]:
    """What the page shows of ``op``: names, description, level (names, measured Elo and rank), style
    names, avatar and voice."""
    from xiangqi.engine.levels import LEVELS

    lv = LEVELS.get(op.level)
    st = STYLES[op.style]
    return {"key": op.key, "name_zh": op.name_zh, "name_en": op.name_en, "about_zh": op.about_zh,
            "about_en": op.about_en, "level": op.level, "level_zh": lv.name_zh if lv else op.level,
            "level_en": lv.name_en if lv else op.level, "elo": lv.elo if lv else None,
            "elo_error": lv.elo_error if lv else None, "rank_zh": lv.rank_zh if lv else None,
            "style": op.style, "style_zh": st.name_zh, "style_en": st.name_en, "avatar": op.avatar,
            "pitch": op.pitch, "rate": op.rate}


# ---------------------------------------------------------------------------
# The player's record
# ---------------------------------------------------------------------------

@dataclasses.dataclass
class History:
    """The player's record against the computer, newest game first (from the library).

    ``colours``: the player's colour in each game (True = Red); ``results``: the player's score in each
    finished one (1, ½, 0; ``None`` for an unfinished game); ``vs``: ``(wins, draws, losses)`` against
    the opponent asked about and ``vs_last`` the player's score in the last finished game against it
    (None: none); ``vs_games``: every stored game against that opponent, finished or not (a greeting
    of "again" needs one, "our first game" needs none); ``openings_red``: the ECCO opening name (the
    part before its "：") of each game the player had Red, when known."""

    colours: list[bool] = dataclasses.field(default_factory=list)
    results: list[float | None] = dataclasses.field(default_factory=list)
    vs: tuple[int, int, int] = (0, 0, 0)
    vs_last: float | None = None
    openings_red: list[str] = dataclasses.field(default_factory=list)
    vs_games: int = 0


_TAG = re.compile(r'^\[(\w+) "([^"]*)"\]', re.M)


def player_history(store: Any, opponent: str | None, *, exclude: str | None = None,
                   limit: int = 200) -> History:
    """The player's :class:`History` from the last ``limit`` library games against the computer
    (``exclude``: a game id left out, the current game). Rows that cannot be read are skipped.
    ``store`` is a :class:`xiangqi.app.play.store.Store` (its
    :meth:`~xiangqi.app.play.store.Store.recent_games`)."""
    h = History()
    w = d = lo = 0
    for row in store.recent_games(limit):
        if row["game_id"] == exclude:
            continue
        try:
            rec = json.loads(row["record"])
        except (ValueError, TypeError):
            continue
        if not isinstance(rec, dict) or sorted((rec.get("red"), rec.get("black"))) != ["engine", "human"]:
            continue
        red = rec.get("red") == "human"
        score = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}.get(row["result"])
        if score is not None and not red:
            score = 1.0 - score
        h.colours.append(red)
        h.results.append(score)
        extras = rec.get("extras") if isinstance(rec.get("extras"), dict) else {}
        if opponent is not None and extras.get("opponent") == opponent:
            h.vs_games += 1
        if opponent is not None and extras.get("opponent") == opponent and score is not None:
            if h.vs_last is None:
                h.vs_last = score
            w, d, lo = w + (score == 1.0), d + (score == 0.5), lo + (score == 0.0)
        if red:
            tags = dict(_TAG.findall(row["pgn"] or ""))
            if tags.get("Opening"):
                h.openings_red.append(tags["Opening"])
    h.vs = (w, d, lo)
    return h


_CN = "零一二三四五六七八九十"


def _cn(n: int) -> str:
    """1 → 一 … 10 → 十, 11–19 → 十一…, 20–99 → 二十…; larger numbers in digits."""
    if 0 <= n <= 10:
        return _CN[n]
    if n < 20:
        return "十" + _CN[n - 10]
    if n < 100:
        return _CN[n // 10] + "十" + (_CN[n % 10] if n % 10 else "")
    return str(n)


def _streak(seq: list[Any], value: Any = None) -> tuple[Any, int]:
    """(the first item of ``seq`` or ``value``, how many items in a row from the start equal it)."""
    if not seq:
        return value, 0
    first = seq[0] if value is None else value
    n = 0
    for x in seq:
        if x != first:
            break
        n += 1
    return first, n


def history_facts(h: History, colour: bool, opponent: Opponent | None) -> list[tuple[str, str]]:
    """What the opponent remarks on the player's record when a game starts in which the player has
    ``colour``: ``(zh, en)`` texts, most telling first (empty for a record with nothing to say)."""
    out: list[tuple[str, str]] = []
    side_zh, side_en = ("红", "Red") if colour else ("黑", "Black")
    last, n = _streak(h.colours)
    if n >= 3 and last == colour:
        out.append((f"你已经连续执{side_zh}{_cn(n)}盘了，这盘还是{side_zh}棋。",
                    f"You have played {side_en} {n} games in a row, and {side_en} again now."))
    elif n >= 3:
        other_zh = "黑" if colour else "红"
        out.append((f"连续执{other_zh}{_cn(n)}盘之后，总算换{side_zh}棋了。",
                    f"After {n} games in a row as {'Black' if colour else 'Red'}, {side_en} at last."))
    finished = [r for r in h.results if r is not None]
    res, k = _streak(finished)
    if k >= 3 and res == 1.0:
        out.append((f"你已经{_cn(k)}连胜了，今天我可要认真了。",
                    f"You have won {k} games in a row. Time I took you seriously."))
    elif k >= 3 and res == 0.0:
        out.append((f"你连输{_cn(k)}盘了，别灰心，慢慢来。",
                    f"You have lost {k} games in a row. Don't lose heart."))
    if opponent is not None:
        w, d, lo = h.vs
        total = w + d + lo
        if total == 0 and h.vs_games == 0:
            out.append(("我们是第一次交手吧？", "This is our first game, isn't it?"))
        elif total == 0:  # met before, but no game was played to its end
            out.append(("上次那盘没下完，这次下完它。",
                        "Our last game was never finished; let's finish this one."))
        else:
            last_zh, last_en = {
                1.0: ("上次你赢了我，这次可没那么容易。", "You beat me last time; not so easy today."),
                0.0: ("上次是我赢了，再接再厉吧。", "I won last time. Try again!"),
                0.5: ("上次我们下和了。", "Last time we drew."),
            }[h.vs_last]
            parts = [f"{word}{_cn(n)}盘" for word, n in (("赢", w), ("和", d), ("输", lo)) if n]
            never = "，还没赢过我" if not w else ""
            out.append((f"我们下过{_cn(total)}盘：你{'、'.join(parts)}{never}。{last_zh}",
                        f"We have played {total} games: you won {w}, drew {d}, lost {lo}. {last_en}"))
    if colour and len(h.openings_red) >= 3:
        name, c = Counter(h.openings_red).most_common(1)[0]
        if c >= 3 and c * 5 >= 2 * len(h.openings_red):
            out.append((f"你执红最爱走「{name}」，{_cn(c)}盘都是它，今天还走吗？",
                        f"As Red you like 「{name}」 best ({c} games). Again today?"))
    return out


# ---------------------------------------------------------------------------
# Moments of the game
# ---------------------------------------------------------------------------

def material_offered(board: Board, move: Move) -> int:
    """Material (centipawns) the mover of ``move`` (legal in ``board``, not changed) leaves to be won
    at once: the opponent's cheapest capture of the moved piece, less the mover's recapture (when it
    has one) and less what the move itself captured; 0 when the piece is safe or it is a fair trade."""
    b = board.copy(stack=False)
    moved = abs(b.squares[move.from_square])
    taken = abs(b.squares[move.to_square])
    b.push(move, validate=False)
    caps = [m for m in b.generate_legal_moves() if m.to_square == move.to_square]
    if not caps:
        return 0
    cheapest = min(caps, key=lambda m: MATERIAL[abs(b.squares[m.from_square])])
    attacker = abs(b.squares[cheapest.from_square])
    b.push(cheapest, validate=False)
    back = any(m.to_square == move.to_square for m in b.generate_legal_moves())
    loss = MATERIAL[moved] - (MATERIAL[attacker] if back else 0) - MATERIAL[taken]
    return max(0, loss)


# Phrases: kind -> (zh variants, en variants); {fields} from the moment.
PHRASES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "blunder_player": (
        (
            "{move}？这步棋走坏了！",
            "{move}……你是不是看漏了什么？",
            "谢谢你的{move}，我不客气了。",
        ),
        (
            "{move_en}? That was a mistake!",
            "{move_en}... didn't you see something there?",
            "Thank you for {move_en}; I'll take it.",
        ),
    ),
    "blunder_self": (
        (
            "哎呀，我上一步{mine}走坏了，没看到你的{move}。",
            "好一手{move}！我失算了。",
        ),
        (
            "Oops, my {mine_en} was bad: I missed your {move_en}.",
            "Good {move_en}! I miscalculated.",
        ),
    ),
    "sacrifice_player": (
        (
            "{move}，弃子？好胆量！",
            "送子给我？{move}里有埋伏吧。",
        ),
        (
            "{move_en}, a sacrifice? Bold!",
            "A piece for me? There's a trap in {move_en}.",
        ),
    ),
    "sacrifice_self": (
        (
            "送你一个{piece}，敢吃吗？",
            "{mine}，这{piece}就当见面礼了。",
        ),
        (
            "Here's a {piece_en} for you. Dare you take it?",
            "{mine_en}: the {piece_en} is a gift.",
        ),
    ),
    "rook_won": (
        (
            "吃你一个车！",
            "车没了，你这盘难了。",
        ),
        (
            "I'll have your rook!",
            "No rook: this gets hard for you.",
        ),
    ),
    "rook_lost": (
        (
            "哎呀，我的车！",
            "好棋，车被你吃了。",
        ),
        (
            "Oh no, my rook!",
            "Well played, you took my rook.",
        ),
    ),
    "perpetual": (
        (
            "别一直将军了，长将是要判负的！",
            "再这样将下去就犯规了，长将判负。",
        ),
        (
            "Stop checking: a perpetual check loses!",
            "Check like that once more and it is a perpetual: you would lose.",
        ),
    ),
    "forbidden": (
        (
            "小心，{reason}是要判负的，换一步吧。",
        ),
        (
            "Careful: {reason_en} loses. Try another move.",
        ),
    ),
    "opening": (
        (
            "{code}「{name}」，我们走进这个布局了。",
            "这是{code}「{name}」。",
        ),
        (
            "ECCO {code}: 「{name}」.",
            "So this is ECCO {code}, 「{name}」.",
        ),
    ),
    "better": (
        (
            "局面对我有利了。",
            "嗯，我的形势不错。",
        ),
        (
            "The position favours me now.",
            "Hm, I like my position.",
        ),
    ),
    "winning": (
        (
            "大势已定，你还要下吗？",
            "这盘我赢定了。",
        ),
        (
            "This game is mine.",
            "It's decided, I think.",
        ),
    ),
    "worse": (
        (
            "我的形势不妙啊。",
            "你占上风了。",
        ),
        (
            "My position is not good.",
            "You have the upper hand.",
        ),
    ),
    "losing": (
        (
            "这盘恐怕要输了……",
            "你下得真好，我快撑不住了。",
        ),
        (
            "I'm afraid I'm losing this one...",
            "You play well; I can hardly hold on.",
        ),
    ),
    "mate_found": (
        (
            "{n}步之内将死你！",
            "我看到杀棋了：{n}步。",
        ),
        (
            "Mate in {n_en}!",
            "I see a mate: {n_en} moves.",
        ),
    ),
    "mated": (
        (
            "看来我要被将死了。",
        ),
        (
            "It looks like I'm getting mated.",
        ),
    ),
    "resign": (
        (
            "我认输了，你下得好。",
        ),
        (
            "I resign. Well played.",
        ),
    ),
    "end_draw": (
        (
            "和棋，旗鼓相当。",
            "和了，下次分胜负。",
        ),
        (
            "A draw: evenly matched.",
            "A draw. Next time we'll settle it.",
        ),
    ),
}

PIECE_ZH = {1: "帅", 2: "仕", 3: "相", 4: "马", 5: "车", 6: "炮", 7: "兵"}
PIECE_EN = {1: "king", 2: "advisor", 3: "elephant", 4: "horse", 5: "rook", 6: "cannon", 7: "pawn"}


def _quiet(fn):
    """A hook that logs its own failure instead of raising: a remark must never stop a move or a save."""
    import functools

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception:  # noqa: BLE001 - see above
            log.exception("the opponent's remark failed (%s)", fn.__name__)
            return None

    return run


def _variant(options: tuple[str, ...], seed: str) -> int:
    return int(hashlib.sha1(seed.encode()).hexdigest()[:8], 16) % len(options)


class TalkService:
    """The opponents' remarks for the games of one ``store`` (see the module text). The web hub calls
    :meth:`saved` after every saved change, :meth:`observe` with the computer's evaluation after each
    of its moves and :meth:`state` for the page; :meth:`style_for` gives the computer's style. The
    hooks never raise: a failure is logged and the game goes on without the remark."""

    def __init__(self, store: Any) -> None:
        self.store = store

    # -- settings and opponents -------------------------------------------------

    def settings(self) -> tuple[bool, bool]:
        """``(talk on, speech on)`` from the settings (``talk`` default on, ``talk_speech`` default off)."""
        try:
            s = self.store.get_settings()
        except Exception:  # noqa: BLE001 - a settings read must never stop a move
            log.exception("could not read the settings")
            return True, False
        return s.get("talk", "on") != "off", s.get("talk_speech", "off") == "on"

    @staticmethod
    def opponent_of(session: Any) -> Opponent | None:
        """The game's named opponent (``extras["opponent"]``) when the computer plays one side."""
        op = get_opponent(session.extras.get("opponent"))
        if op is None or sorted(session.players.values()) != ["engine", "human"]:
            return None
        return op

    @staticmethod
    def style_for(opponent: str | None) -> Style | None:
        """The :class:`Style` the computer plays for opponent key ``opponent`` (None: no style)."""
        op = get_opponent(opponent)
        return None if op is None else op.style_obj()

    # -- the record of remarks --------------------------------------------------

    @staticmethod
    def _talk(session: Any) -> dict[str, Any]:
        t = session.extras.get("talk")
        if not isinstance(t, dict) or not isinstance(t.get("remarks"), list):
            t = session.extras["talk"] = {"remarks": [], "evals": {}, "n": 0}
        return t

    def _prune(self, session: Any, t: dict[str, Any]) -> None:
        plies = len(session.moves)
        t["remarks"] = [r for r in t["remarks"] if isinstance(r, dict) and r.get("ply", 0) <= plies]
        t["evals"] = {k: v for k, v in t.get("evals", {}).items() if int(k) <= plies}

    @staticmethod
    def _has(t: dict[str, Any], kind: str, ply: int | None = None) -> bool:
        return any(r["kind"] == kind and (ply is None or r["ply"] == ply) for r in t["remarks"])

    @staticmethod
    def _last(t: dict[str, Any], kinds: tuple[str, ...]) -> dict[str, Any] | None:
        return next((r for r in reversed(t["remarks"]) if r["kind"] in kinds), None)

    def _say(self, session: Any, t: dict[str, Any], kind: str, zh: str, en: str, key: Any = None) -> None:
        t["n"] = int(t.get("n", 0)) + 1
        t["remarks"].append({"id": t["n"], "ply": len(session.moves), "kind": kind, "zh": zh, "en": en,
                             "key": key})
        del t["remarks"][:-MAX_REMARKS]

    def _phrase(self, session: Any, t: dict[str, Any], kind: str, key: Any = None, **fields: Any) -> None:
        if self._has(t, kind, len(session.moves)):
            return
        zh_opts, en_opts = PHRASES[kind]
        seed = f"{session.id}:{len(session.moves)}:{kind}"
        zh = zh_opts[_variant(zh_opts, seed)].format(**fields)
        en = en_opts[_variant(en_opts, seed)].format(**fields)
        self._say(session, t, kind, zh, en, key)

    # -- hooks ------------------------------------------------------------------

    @_quiet
    def saved(self, session: Any) -> None:
        """After a saved change of ``session``: take back the remarks of moves taken back, then greet,
        and remark on the last move, the opening, a forbidden repetition ahead and the result."""
        op = self.opponent_of(session)
        if op is None or not self.settings()[0]:
            return
        t = self._talk(session)
        self._prune(session, t)
        comp = BLACK if session.players[RED] == "human" else RED
        plies = len(session.moves)
        if plies <= 2 and not self._has(t, "greet"):
            self._greet(session, t, op, not comp)
        if plies:
            self._last_move(session, t, comp)
        self._opening(session, t)
        if session.is_over:
            self._result(session, t, op, comp)
        elif session.board.turn != comp:
            self._repetition(session, t, comp)

    @_quiet
    def observe(self, session: Any, score_cp: int | None, mate: int | None) -> None:
        """The computer's evaluation of the game after its move just played (its own side's view):
        remarks on a blunder or a sacrifice by either side, the evaluation band and a mate found."""
        op = self.opponent_of(session)
        if op is None or not self.settings()[0] or not session.moves:
            return
        if score_cp is None and mate is None:
            return
        t = self._talk(session)
        p = len(session.moves)
        now = _value(score_cp, mate)
        t.setdefault("evals", {})[str(p)] = now
        before = t["evals"].get(str(p - 2))
        moves = session.moves
        fields = {}
        if p >= 2:
            fields = {"move": moves[p - 2].chinese, "move_en": moves[p - 2].wxf or moves[p - 2].iccs}
        if p >= 3:
            fields.update(mine=moves[p - 3].chinese, mine_en=moves[p - 3].wxf or moves[p - 3].iccs)
        swing = None if before is None or abs(before) >= DECIDED_CP else now - before
        if swing is not None and swing >= BLUNDER_CP:
            self._phrase(session, t, "blunder_player", **fields)
        elif swing is not None and swing <= -BLUNDER_CP and p >= 3:
            self._phrase(session, t, "blunder_self", **fields)
        elif p >= 2 and swing is not None and swing <= SOUND_CP:
            # a sacrifice is material given that the search says is sound: the computer's view
            # (known before and after) did not rise by more than SOUND_CP; without both views, or in
            # a decided game, nothing is said (a plain blunder was praised as a sacrifice when the
            # view before was missing)
            board = session.board.copy()
            board.pop()
            last = board.pop()  # the player's move, in the position before it
            if material_offered(board, last) >= SACRIFICE_CP:
                self._phrase(session, t, "sacrifice_player", **fields)
        # the computer's own move
        b = session.board.copy()
        mine = b.pop()
        offered = material_offered(b, mine)
        own_before = before if before is not None and abs(before) < DECIDED_CP else None
        if offered >= SACRIFICE_CP and own_before is not None and now >= own_before - SOUND_CP:
            code = abs(b.squares[mine.from_square])
            self._phrase(session, t, "sacrifice_self", piece=PIECE_ZH[code], piece_en=PIECE_EN[code],
                         mine=moves[-1].chinese, mine_en=moves[-1].wxf or moves[-1].iccs)
        self._band(session, t, score_cp, mate)

    def state(self, session: Any) -> dict[str, Any]:
        """The page's view: ``{"enabled", "speech", "opponent": opponent_view or None, "remarks":
        [{"id", "ply", "kind", "zh", "en"}, ...] (oldest first; empty while switched off)}``. Never
        raises (a failure is logged and shows no opponent)."""
        try:
            return self._state(session)
        except Exception:  # noqa: BLE001 - the game's state must always be served
            log.exception("the opponent's state failed")
            return {"enabled": False, "speech": False, "opponent": None, "remarks": []}

    def _state(self, session: Any) -> dict[str, Any]:
        on, speech = self.settings()
        op = self.opponent_of(session)
        remarks = []
        if on and op is not None:
            t = session.extras.get("talk")
            plies = len(session.moves)
            if isinstance(t, dict) and isinstance(t.get("remarks"), list):
                remarks = [{k: r.get(k) for k in ("id", "ply", "kind", "zh", "en")}
                           for r in t["remarks"] if isinstance(r, dict) and r.get("ply", 0) <= plies]
        return {"enabled": on, "speech": speech, "opponent": None if op is None else opponent_view(op),
                "remarks": remarks}

    # -- the moments ------------------------------------------------------------

    def _greet(self, session: Any, t: dict[str, Any], op: Opponent, colour: bool) -> None:
        """The greeting and the record: a greeting of "again" only for a player with stored games
        against ``op``, one of "first meeting" only for a player without (the record is read first;
        a record that cannot be read allows only the greetings that fit either)."""
        try:
            hist: History | None = player_history(self.store, op.key, exclude=session.id)
        except Exception:  # noqa: BLE001 - a library that cannot be read leaves only the history out
            log.exception("could not read the player's history")
            hist = None
        zh_opts, en_opts = list(op.hello_zh), list(op.hello_en)
        if hist is not None:
            met = hist.vs_games > 0
            zh_opts += op.again_zh if met else op.first_zh
            en_opts += op.again_en if met else op.first_en
        i = _variant(tuple(zh_opts), f"{session.id}:greet")
        lv_zh, lv_en = _level_names(op.level)
        st = STYLES[op.style]
        self._say(session, t, "greet", f"我是{op.name_zh}（{lv_zh}，{st.name_zh}）。{zh_opts[i]}",
                  f"I am {op.name_en} ({lv_en}, {st.name_en.lower()}). {en_opts[i]}")
        if hist is None:
            return
        facts = history_facts(hist, colour, op)
        if facts:
            two = facts[:2]
            zh, en = "".join(f[0] for f in two), " ".join(f[1] for f in two)
            self._say(session, t, "history", zh, en)

    def _last_move(self, session: Any, t: dict[str, Any], comp: bool) -> None:
        board = session.board
        captured = board.captured_piece()
        if captured is not None and captured.piece_type == ROOK:
            mover = not board.turn
            self._phrase(session, t, "rook_won" if mover == comp else "rook_lost")

    def _opening(self, session: Any, t: dict[str, Any]) -> None:
        if session.start_fen != STARTING_FEN or not 0 < len(session.moves) <= 30:
            return
        op = session.opening()
        if op is None:
            return
        last = self._last(t, ("opening",))
        if last is not None and last.get("key") == op["code"]:
            return
        if last is not None and len(session.moves) - last["ply"] < OPENING_GAP:
            return
        self._phrase(session, t, "opening", key=op["code"], code=op["code"], name=op["name"])

    def _repetition(self, session: Any, t: dict[str, Any], comp: bool) -> None:
        last = self._last(t, ("perpetual", "forbidden"))
        if last is not None and len(session.moves) - last["ply"] < 4:
            return
        forbidden = session.state().get("forbidden") or {}
        reasons = [v for v in forbidden.values() if isinstance(v, dict)]
        if any("长将" in (v.get("reason_zh") or "") for v in reasons):
            self._phrase(session, t, "perpetual")
            return
        if reasons:
            self._phrase(session, t, "forbidden", reason=_why(reasons[0].get("reason_zh", "")),
                         reason_en=_why(reasons[0].get("reason_en", "")))
            return
        first = session.board.root().turn
        mine = [m for i, m in enumerate(session.moves) if (first if i % 2 == 0 else not first) != comp]
        if len(mine) >= 4 and all(m.check for m in mine[-4:]) and session.repetitions() >= 2:
            self._phrase(session, t, "perpetual")

    def _band(self, session: Any, t: dict[str, Any], score_cp: int | None, mate: int | None) -> None:
        if mate is not None:
            kind = "mate_found" if mate > 0 else "mated"
            if not self._has(t, kind):
                self._phrase(session, t, kind, n=_cn(abs(mate)), n_en=abs(mate))
            return
        cp = int(score_cp or 0)
        band = ("winning" if cp >= WINNING_CP else "better" if cp >= BETTER_CP else
                "losing" if cp <= -WINNING_CP else "worse" if cp <= -BETTER_CP else None)
        last = self._last(t, ("better", "winning", "worse", "losing"))
        if band is None or (last is not None and last["kind"] == band):
            return
        if last is not None and len(session.moves) - last["ply"] < BAND_GAP:
            return
        self._phrase(session, t, band)

    def _result(self, session: Any, t: dict[str, Any], op: Opponent, comp: bool) -> None:
        if self._last(t, ("end_win", "end_loss", "end_draw", "resign")) is not None:
            return
        out = session.outcome
        if out.winner is None:
            self._phrase(session, t, "end_draw")
        elif out.winner == comp:
            self._say(session, t, "end_win", op.win_zh, op.win_en)
        elif out.termination == Termination.RESIGNATION:
            self._phrase(session, t, "resign")
        else:
            self._say(session, t, "end_loss", op.lose_zh, op.lose_en)


def _value(score_cp: int | None, mate: int | None) -> int:
    """One number for an evaluation: centipawns, a mate as ±(3000 − moves) (beyond any swing)."""
    if mate is not None:
        return 3000 - abs(mate) if mate > 0 else -(3000 - abs(mate))
    return max(-2999, min(2999, int(score_cp or 0)))


def _why(reason: str) -> str:
    return reason.split(" — ", 1)[1] if " — " in reason else reason


def _level_names(key: str) -> tuple[str, str]:
    from xiangqi.engine.levels import LEVELS

    lv = LEVELS.get(key)
    return (lv.name_zh, lv.name_en) if lv else (key, key)
