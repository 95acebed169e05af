"""The pages, by role: each module adds its routes to the web blueprint when imported.

``home`` (the home page, creating a game), ``me`` (all your games), ``host`` (the host's
controls), ``join`` (joining and signing in to a seat), ``table`` (the game, moves, history,
record, the live-update long-poll), ``settings`` (the seat's settings), ``mailed`` (the pages
an email's link opens besides the table), ``emailed_move`` (a your-turn email's move, in
two taps), ``install`` (the web app manifest, for a phone's home screen), ``zone`` (the
browser's time zone, filling a seat's or an identity's the first time), ``rules`` (the
players' rules, in the reader's language), ``waiting`` (nudging the player to move, votes on an
absent player's seat), ``notes`` (the seat's private notes on the table page),
``rematching`` (Rematch, and the game-over email's accept link), ``players`` (a player's
rating, the leaderboard, your player name).
"""

from dos_server.web.pages import (
    chat,
    emailed_move,
    home,
    host,
    install,
    join,
    mailed,
    me,
    notes,
    players,
    rematching,
    rules,
    settings,
    table,
    waiting,
    zone,
)

__all__ = ["chat", "emailed_move", "home", "host", "install", "join", "mailed", "me", "notes",
           "players", "rematching", "rules", "settings", "table", "waiting", "zone"]
