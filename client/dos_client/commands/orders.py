"""``orders``: the standing orders the server plays for your seat (draw, only, dos, catch)."""

from __future__ import annotations

from collections.abc import Sequence

import click

from dos_client.context import Settings, pass_settings
from dos_client.i18n import N_, _

# The server's order names (dos_server.services.orders.ORDERS; a test compares them).
ORDERS = ("draw", "only", "dos", "catch")
_WHAT = {
    "draw": N_("draw for me when nothing matches"),
    "only": N_("play my only legal move"),
    "dos": N_("call DOS for me the moment I hold two cards"),
    "catch": N_("catch for me when another player is exposed"),
}
_SWITCH = {"on": True, "off": False}


def parse_words(words: Sequence[str]) -> tuple[dict[str, bool], str | None]:
    """``draw on only off [GAME]`` -> ({draw: True, only: False}, GAME); ``all on|off`` too."""
    changes: dict[str, bool] = {}
    game: str | None = None
    rest = list(words)
    while rest:
        word = rest.pop(0)
        name = word.lower()
        if (name in ORDERS or name == "all") and rest and rest[0].lower() in _SWITCH:
            on = _SWITCH[rest.pop(0).lower()]
            for each in ORDERS if name == "all" else (name,):
                changes[each] = on
        elif name in ORDERS or name == "all":
            raise click.BadParameter(_("say `{order} on` or `{order} off`").format(order=name),
                                     param_hint="ORDER")
        elif game is None:
            game = word
        else:
            raise click.BadParameter(
                _("{word!r} is not a standing order: choose from {orders}").format(
                    word=word, orders=", ".join(ORDERS)), param_hint="ORDER")
    return changes, game


@click.command(
    help=N_("Show or set your standing orders in a game: the server plays them for you the\n"
            "moment they apply, marked \"by standing order\".\n\n"
            "\b\n"
            "  dos-client orders                show them\n"
            "  dos-client orders draw on only off [GAME]\n"
            "  dos-client orders all off\n\n"
            "\b\n"
            "draw   draw for me when nothing matches\n"
            "only   play my only legal move\n"
            "dos    call DOS for me the moment I hold two cards\n"
            "catch  catch for me when another player is exposed\n"
            "(dos and catch only where the game's host allows them)"))
@click.argument("words", nargs=-1, metavar="[ORDER on|off]... [GAME]")
@pass_settings
def orders(settings: Settings, words: Sequence[str]) -> None:
    changes, game = parse_words(words)
    saved = settings.saved_game(game)
    seat = saved.seat()
    result = saved.api.orders(saved.game_id, seat)
    if changes:
        held = {name for name in result.get("orders", []) if name in ORDERS}
        held |= {name for name, on in changes.items() if on}
        held -= {name for name, on in changes.items() if not on}
        result = saved.api.set_orders(saved.game_id, seat,
                                      [name for name in ORDERS if name in held])
    applies = {item.get("order"): item.get("applies", True)
               for item in result.get("available", [])}
    held_now = set(result.get("orders", []))
    lines = [_("Standing orders in {game}:").format(game=saved.name)]
    for name in ORDERS:
        state = _("on") if name in held_now else _("off")
        note = "" if applies.get(name, True) else " " + _("(not allowed in this game)")
        lines.append(f"  {name:<6} {state:<4} {_(_WHAT[name])}{note}")
    if not changes:
        lines.append(_("Change them with `{command} orders draw on` (see --help).").format(
            command=settings.command()))
    settings.emit(result, "\n".join(lines))


COMMANDS = (orders,)
