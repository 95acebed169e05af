"""The state of a game of DOS and the rules that move it (RULES.md 2-6).

``Game`` holds the whole truth, including the draw pile's order; ``game.view(seat)`` is the only
way data leaves it for a player. ``play`` validates an action, applies it and returns the events
it caused. A game is a function of (players, seed, options, actions): see ``dos_engine.record``.

Turn structure, as the engine models it (one action at a time):

* start of turn: match (3.1-3.3) or draw (3.6); after a match: more matches on other CR cards,
  or ``end``. No draw after a match (3.7).
* after a draw: with ``after_draw="drawn_card"`` one match that uses the drawn card, otherwise
  ``add`` a card; with ``"any"`` any matches (one per CR card), otherwise ``add``.
* ``end``: matched CR cards go to discard (4.1), the CR is refilled to two (4.2); if colour
  bonuses were earned the player then places up to that many cards (``place``, 4.3) and says
  ``end`` again, or stops being asked once every bonus card is placed.
* The turn also ends by itself whenever ``end`` is the only action left to its player (after an
  ``add``, after the one match a drawn card allows, when the hand is empty...), so nobody has to
  type an ``end`` that could not be anything else. Under the first reading of the DOS rule
  (``Options.dos_rule == "v1"``) ``dos`` and ``catch`` keep the turn open until the player says
  ``end``; under the printed rule they can be played in or out of turn, so they keep nothing open.
* With ``bonus_placement="mandatory"`` the bonus phase has no ``end`` while a placement is
  possible: every earned bonus card is placed while the player has cards (3.5).

The DOS call (RULES.md 5, option ``dos_call``), as printed (``dos_rule="printed"``):

* A seat holding exactly two cards that has not called "DOS" on them is **exposed**
  (``dos_missed[seat]``). ``dos`` (any seat holding two cards, in or out of turn) protects it
  until its hand size changes: every change of a hand clears the seat's call
  (``dos_calls[seat]``) and its exposure.
* Exposure is settled at *request boundaries*: after each call of :meth:`play` and after each
  whole :meth:`play_turn` / :meth:`play_text`, never between the actions of one submitted turn.
  So other players only see the states between the requests a player submits (5.3): a turn
  sent at once exposes only its end state, and a seat that reaches two cards during a request
  can be caught from the next request on. Within a request a catch needs a seat exposed when
  the request began whose hand has not changed since.
* ``catch N`` (any other seat, in or out of turn): the caught seat draws two cards at once, or,
  if it is the player to move, at the end of its turn (``penalty``), after the bonus cards are
  placed (4.1-4.3) and before an empty hand ends the round (6.1): having been caught, a player
  who emptied their hand that turn does not go out (5.2). Replaying a record one action at a
  time gives the same game: exposure at rest is a function of the state, and settling more
  often only allows catches the record does not hold.

Under ``dos_rule="v1"`` (games started before the printed rule) a player is asked for the call
only when they end a turn on two cards (``called_dos`` for the turn); missing it sets
``dos_missed``, and the other seats may catch them until their next turn starts.
* [decided] A card added after a draw (3.6) goes to the CR at once; since nothing can be matched
  after an add and piles cannot grow during a turn, this equals placing it at the end (3.3).
* [decided] Declarations of wild cards (1.3-1.6) are made by the engine, so that a colour bonus
  is earned whenever the cards allow one; ``Game.declare`` says what was declared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from operator import attrgetter
from typing import Any

from dos_engine.actions import (
    CALL_DOS,
    DRAW,
    END,
    NOTATION_HELP,
    Action,
    Add,
    CallDos,
    Catch,
    Draw,
    End,
    Match,
    Place,
    split_turn,
)
from dos_engine.cards import (
    ALL_CARDS,
    CARDS_BY_CODE,
    COLOURS,
    COPIES_PER_COLOUR,
    DECK_SIZE,
    NUMBERS,
    WILD_DOS,
    WILD_DOS_COUNT,
    WILD_NUMBER_PER_COLOUR,
    Card,
    CardKind,
    new_deck,
)
from dos_engine.errors import (
    DosError,
    IllegalActionError,
    InvalidActionError,
    NotYourTurnError,
    with_context,
)

# InvalidStateError (now in errors.py), Bonus, Declaration and declare_match (now in matching.py)
# lived here before; the "import X as X" lines keep them importable from here.
from dos_engine.errors import InvalidStateError as InvalidStateError
from dos_engine.events import Event, EventKind, deferred_event
from dos_engine.matching import Bonus as Bonus
from dos_engine.matching import Declaration as Declaration
from dos_engine.matching import _canonical, mismatch_reason
from dos_engine.matching import declare_match as declare_match
from dos_engine.notation import resolve_action
from dos_engine.options import Options
from dos_engine.rng import continue_shuffle, derive_key, round_seed, seed_commitment, shuffle
from dos_engine.translation import N_, translator
from dos_engine.wording import card_name, colour_name

# Enum members read from their class cost a descriptor call each (Python 3.11): the hot path of
# play reads these module constants instead.
_MATCHED, _DREW, _ADDED, _PLACED = (EventKind.MATCHED, EventKind.DREW, EventKind.ADDED,
                                    EventKind.PLACED)
_DISCARDED, _CR_FLIPPED, _TURN_ENDED = (EventKind.DISCARDED, EventKind.CR_FLIPPED,
                                        EventKind.TURN_ENDED)
_NO_BONUS, _DOUBLE_COLOUR = Bonus.NONE, Bonus.DOUBLE_COLOUR

SCHEMA_VERSION = 1
_SETTLE_STEPS = 24  # swaps of a draw pile's shuffle made at a time as it is drawn (6 blocks)
HAND_SIZE = 7
MIN_PLAYERS = 2
MAX_PLAYERS = 4

_POINTS = [card.points for card in ALL_CARDS]  # by card id
# One action object per card, by card id: listing reuses them (actions are immutable). Read by
# a __getitem__ bound once: each read of the attribute makes a new bound method.
_add_of = [Add(card) for card in ALL_CARDS].__getitem__
_place_of = [Place(card) for card in ALL_CARDS].__getitem__
# The args of the frequent deferred events that are the same every time, made once: a draw's by
# card id, a turn's end by the next seat (-1: none, the round is over).
_DRAW_ARGS = [((card,), "draw") for card in ALL_CARDS]
_TURN_ENDED_ARGS = [*((seat,) for seat in range(MAX_PLAYERS)), (None,)]
# A Center Row's cr_matched with nothing matched is a slice of this (a CR never holds more
# than the deck): one list made instead of two for [None] * n.
_UNMATCHED: list[tuple[Card, ...] | None] = [None] * DECK_SIZE


class Phase(StrEnum):
    """Where the current player is in their turn (what kind of action comes next)."""

    START = "start"  # may match or draw
    MATCHING = "matching"  # has matched: may match other CR cards or end
    DRAWN = "drawn"  # has drawn: may match as 3.6 allows, or must add a card
    BONUS = "bonus"  # turn's matching is over: may place bonus cards, then end
    OVER = "over"  # the game is over


@dataclass(frozen=True, slots=True)
class CenterCard:
    position: int  # 1-based
    card: Card
    matched_with: tuple[Card, ...] | None  # cards matched onto it this turn

    def to_dict(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "card": self.card.code,
            "matched_with": None
            if self.matched_with is None
            else [c.code for c in self.matched_with],
        }


@dataclass(frozen=True, slots=True)
class View:
    """What one seat (or a spectator, ``seat=None``) may know of a game."""

    seat: int | None
    players: tuple[str, ...]
    hand: tuple[Card, ...] | None
    hand_sizes: tuple[int, ...]
    center_row: tuple[CenterCard, ...]
    scores: tuple[int, ...]
    round: int
    dealer: int
    current: int
    phase: Phase
    drawn: Card | None  # the card this seat drew this turn, only shown to that seat
    placements_left: int
    dos_called: bool  # the player to move has called DOS (on the two cards they hold)
    dos_missed: tuple[bool, ...]  # per seat: may be caught now (printed rule: exposed, 5.1)
    dos_calls: tuple[bool, ...]  # per seat: has called DOS on the two cards held (printed rule)
    dos_penalty: int  # cards the player to move draws at the end of the turn, caught (5.2)
    draw_pile_size: int
    discard_pile_size: int
    options: Options
    winner: int | None
    legal_actions: tuple[Action, ...]

    @property
    def my_turn(self) -> bool:
        return self.seat is not None and self.seat == self.current and self.winner is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "players": list(self.players),
            "hand": None if self.hand is None else [c.code for c in self.hand],
            "hand_sizes": list(self.hand_sizes),
            "center_row": [c.to_dict() for c in self.center_row],
            "scores": list(self.scores),
            "round": self.round,
            "dealer": self.dealer,
            "current": self.current,
            "phase": self.phase.value,
            "drawn": None if self.drawn is None else self.drawn.code,
            "placements_left": self.placements_left,
            "dos_called": self.dos_called,
            "dos_missed": list(self.dos_missed),
            "dos_calls": list(self.dos_calls),
            "dos_penalty": self.dos_penalty,
            "draw_pile_size": self.draw_pile_size,
            "discard_pile_size": self.discard_pile_size,
            "options": self.options.to_dict(),
            "winner": self.winner,
            "legal_actions": [a.text() for a in self.legal_actions],
        }


class Game:
    """A game of DOS in progress (or over). Create one with :meth:`new` or :func:`start_game`."""

    __slots__ = (
        "_counts",
        "_listed",
        "_listed_seat",
        "_pile",
        "_pile_shuffle",
        "_pile_unsettled",
        "actions_played",
        "added",
        "bonus_phase",
        "bonuses",
        "called_dos",
        "center_row",
        "cr_matched",
        "current",
        "dealer",
        "discard_pile",
        "dos_calls",
        "dos_missed",
        "drawn",
        "hands",
        "has_drawn",
        "matches",
        "options",
        "penalty",
        "placements_left",
        "players",
        "reshuffles",
        "round_no",
        "scores",
        "seed",
        "turn_no",
        "winner",
    )

    players: tuple[str, ...]
    seed: str
    options: Options
    scores: list[int]
    round_no: int
    dealer: int
    current: int
    hands: list[list[Card]]
    # By seat: its hand's counts by value (_count_hand), kept up to date with every
    # change of the hand so that listing needs no pass over the hand.
    _counts: list[int]
    # The draw pile (read it as ``draw_pile``), top card last. A round's shuffle (2.3) is made
    # as deep as the deal goes and goes on as the pile is drawn, since most of the pile is
    # never drawn before the round ends: the top ``len(_pile) - _pile_unsettled`` cards are
    # where the whole shuffle puts them, and ``_pile_shuffle`` (the key, the stream values
    # taken) says how the shuffle goes on below them (None once the pile is settled).
    _pile: list[Card]
    _pile_shuffle: tuple[bytes, int] | None
    _pile_unsettled: int
    discard_pile: list[Card]
    center_row: list[Card]
    cr_matched: list[tuple[Card, ...] | None]
    reshuffles: int
    drawn: Card | None
    has_drawn: bool
    matches: int
    added: bool
    bonuses: int
    bonus_phase: bool
    placements_left: int
    called_dos: bool  # v1 rule: the player to move called DOS this turn
    dos_missed: list[bool]  # v1: missed the call at the end of a turn; printed: exposed (5.1)
    dos_calls: list[bool]  # printed rule: called DOS on the two cards now held (5.1)
    penalty: int  # printed rule: cards the player to move draws at the end of this turn (5.2)
    winner: int | None
    actions_played: int
    turn_no: int  # 1 for the game's first turn; +1 whenever a new turn (or round) starts
    # The last legal_actions(seat) of this very state, and its seat: legal_actions answers from
    # it again, and play() takes an action from it without validating it again. Every change
    # of the state drops it (None; the seat is then left as it was).
    # (A tuple, or a list of its own that nothing else holds or changes.)
    _listed: Sequence[Action] | None
    _listed_seat: int

    # -- creation -----------------------------------------------------------------------------

    @classmethod
    def new(cls, players: Sequence[str], seed: str, options: Options | None = None) -> Game:
        """Draw for first dealer and deal the first round. See :func:`start_game` for events."""
        return start_game(players, seed, options)[0]

    def copy(self) -> Game:
        # Every slot written out (a loop of setattr/getattr costs several times more, and the
        # search bot copies a game for every playout); tests check that no slot is left out.
        other = object.__new__(Game)
        other._counts = self._counts[:]
        other._listed = self._listed
        other._listed_seat = self._listed_seat
        other._pile = self._pile[:]
        other._pile_shuffle = self._pile_shuffle
        other._pile_unsettled = self._pile_unsettled
        other.actions_played = self.actions_played
        other.added = self.added
        other.bonus_phase = self.bonus_phase
        other.bonuses = self.bonuses
        other.called_dos = self.called_dos
        other.center_row = self.center_row[:]
        other.cr_matched = self.cr_matched[:]
        other.current = self.current
        other.dealer = self.dealer
        other.discard_pile = self.discard_pile[:]
        other.dos_calls = self.dos_calls[:]
        other.dos_missed = self.dos_missed[:]
        other.drawn = self.drawn
        other.hands = [hand[:] for hand in self.hands]
        other.has_drawn = self.has_drawn
        other.matches = self.matches
        other.options = self.options
        other.penalty = self.penalty
        other.placements_left = self.placements_left
        other.players = self.players
        other.reshuffles = self.reshuffles
        other.round_no = self.round_no
        other.scores = self.scores[:]
        other.seed = self.seed
        other.turn_no = self.turn_no
        other.winner = self.winner
        return other

    # -- the draw pile ------------------------------------------------------------------------

    @property
    def draw_pile(self) -> list[Card]:
        """The draw pile, top card last."""
        if self._pile_shuffle is not None:
            self._settle_pile(len(self._pile))
        return self._pile

    @draw_pile.setter
    def draw_pile(self, cards: list[Card]) -> None:
        self._pile = cards
        self._pile_shuffle = None
        self._pile_unsettled = 0

    def _settle_pile(self, steps: int) -> None:
        """Go on with the draw pile's shuffle for ``steps`` more swaps (or to its end)."""
        assert self._pile_shuffle is not None
        key, taken = self._pile_shuffle
        start = self._pile_unsettled - 1  # the place whose swap comes next
        steps = min(steps, start)
        taken = continue_shuffle(self._pile, key, start, taken, steps)
        if steps == start:  # the last swap settles the bottom card too
            self._pile_shuffle = None
            self._pile_unsettled = 0
        else:
            self._pile_shuffle = (key, taken)
            self._pile_unsettled = start - steps + 1

    # -- simple queries -----------------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        return self.winner is not None

    @property
    def phase(self) -> Phase:
        if self.winner is not None:
            return Phase.OVER
        if self.bonus_phase:
            return Phase.BONUS
        if self.has_drawn:
            return Phase.DRAWN
        return Phase.MATCHING if self.matches else Phase.START

    @property
    def round_seed(self) -> str:
        return round_seed(self.seed, self.round_no)

    def name(self, seat: int) -> str:
        return self.players[seat]

    # -- legal actions ------------------------------------------------------------------------

    def legal_actions(self, seat: int | None = None) -> list[Action]:
        """Every distinct legal action for ``seat`` (default: the player whose turn it is).

        Matches are listed once per (CR position, cards), with the canonical declaration. A seat
        whose turn it is not can only ``catch`` (and, under the printed DOS rule, call ``dos``).
        """
        if self.winner is not None:
            return []
        if seat is None:
            seat = self.current
            current = True
        else:
            current = seat == self.current
            if not current and not 0 <= seat < len(self.players):
                return []
        listed = self._listed
        if listed is not None and self._listed_seat == seat:
            return list(listed)  # this state was listed already (a view, then the list...)
        options = self.options
        # Each branch makes its list (the listings of matches make new ones, ours to extend).
        actions: list[Action]
        if current:  # (the hand is read where it is needed: the start of a turn does not)
            if self.bonus_phase:
                hand = self.hands[seat]
                if self.placements_left and hand:
                    actions = list(map(_place_of, _distinct_ids(hand)))
                    if self.options.bonus_placement == "optional":
                        actions.append(END)
                else:
                    actions = [END]
            elif self.added:
                actions = [END]
            elif self.has_drawn:
                if self.options.after_draw == "drawn_card":
                    if self.matches == 0:
                        actions = ([] if self.drawn is None
                                   else self._list_drawn_matches(seat, self.drawn))
                        # (_distinct_ids written out: a quarter of all listings add)
                        actions.extend(map(_add_of,
                                           sorted({card.id for card in self.hands[seat]})))
                    else:
                        actions = [END]
                else:
                    actions = self._list_matches(seat)
                    if self.matches == 0:
                        # (_distinct_ids written out: a quarter of all listings add)
                        actions.extend(map(_add_of,
                                           sorted({card.id for card in self.hands[seat]})))
                    else:
                        actions.append(END)
            else:
                actions = self._list_matches(seat)
                if self.matches == 0:
                    actions.append(DRAW)
                else:
                    actions.append(END)
        else:
            actions = []
        if options.dos_call:
            if (current and options.dos_rule == "v1" and not self.called_dos
                    and len(self.hands[seat]) == 2):
                actions.append(CALL_DOS)
            # Plain loops, not generators: a generator would make self and seat cells, read
            # more slowly on every listing.
            if options.printed_dos_rule:
                if self._may_call(seat):
                    actions.append(CALL_DOS)
                for other, exposed in enumerate(self.dos_missed):
                    if exposed and other != seat:
                        actions.append(Catch(other))
            else:
                for other, missed in enumerate(self.dos_missed):
                    if missed and other != seat and len(self.hands[other]) == 2:
                        actions.append(Catch(other))
        self._listed = tuple(actions)
        self._listed_seat = seat
        return actions

    def _list_drawn_matches(self, seat: int, drawn: Card) -> list[Action]:
        """``_list_matches(seat, must_use=drawn)``, the matches a drawn card allows (3.6).

        Usually (no Wild # in the hand or on a free CR card) the drawn card's value alone says
        which CR cards it can match, and with which value of partner: the cards of that value
        come from the hand's counts by value, in the listing's order.
        """
        value = drawn.number
        counts = self._counts[seat].to_bytes(_COUNT_BYTES, "little")
        if value is None or counts[_WILD_NUMBER_BYTE]:
            return self._list_wild_matches(self.hands[seat], counts, drawn)
        row = self.center_row
        drawn_id = drawn.id
        out: list[Action] = []
        index = -1  # counted: an enumerate object costs more than a short loop's steps
        for matched in self.cr_matched:
            index += 1
            if matched is not None:
                continue
            number = row[index].number
            if number is None:  # a Wild # in the CR
                return self._list_wild_matches(self.hands[seat], counts, drawn)
            rest = number - value  # 0: the drawn card alone; else the partner's value
            if rest < 0 or (rest and not counts[rest]):
                continue  # the drawn card makes no match here (the usual case)
            table = _MATCHES[index] or _match_table(index)
            position = index + 1
            if not rest:
                key = _SINGLE_KEY[drawn_id]
                out.append(table[key] or _new_match(table, key, position, (drawn,)))
            elif rest > value:  # the drawn card first, then each card of value rest
                base = _BASE_KEY[drawn_id]
                for other in _IDS_IN_FIELD[rest][counts[rest]]:
                    key = base + other
                    out.append(table[key]
                               or _new_match(table, key, position, (drawn, ALL_CARDS[other])))
            elif rest < value:  # each card of value rest, then the drawn card
                for other in _IDS_IN_FIELD[rest][counts[rest]]:
                    key = _BASE_KEY[other] + drawn_id
                    out.append(table[key]
                               or _new_match(table, key, position, (ALL_CARDS[other], drawn)))
            else:  # two cards of the drawn card's value: the pairs that hold the drawn card
                for a, b in _SAME_VALUE_PAIRS[value][counts[value]]:
                    if a == drawn_id or b == drawn_id:
                        key = _BASE_KEY[a] + b
                        out.append(table[key] or _new_match(
                            table, key, position, (ALL_CARDS[a], ALL_CARDS[b])))
        return out

    def _list_matches(self, seat: int, must_use: Card | None = None) -> list[Action]:
        """The matches of seat's hand on the free CR cards, in the listing's order: by CR position,
        singles before pairs, pairs by the hand's values in the order of their first card.

        They are read from the hand's counts by value (:func:`_count_hand`), not by trying
        every pair of cards: the singles on a CR number N are the hand's cards of value N, its
        pairs the cards of values v and N - v when the hand holds both. This is the usual case,
        written out; a Wild # (in the hand or the CR) or a card that must be used goes to
        :meth:`_list_wild_matches`.
        """
        counts = self._counts[seat].to_bytes(_COUNT_BYTES, "little")
        if must_use is not None or counts[_WILD_NUMBER_BYTE]:
            return self._list_wild_matches(self.hands[seat], counts, must_use)
        # _lows_by_number with its usual case (a set of values met before) written out
        lows_by_number = (_LOWS_BY_PRESENCE.get(counts.translate(_PRESENT))
                          or _lows_by_number(counts))
        row = self.center_row
        out: list[Action] = []
        index = -1  # counted: an enumerate object costs more than a short loop's steps
        for matched in self.cr_matched:
            index += 1
            if matched is not None:
                continue
            number = row[index].number
            if number is None:  # a Wild # in the CR: any number 1-10 (1.5)
                return self._list_wild_matches(self.hands[seat], counts, None)
            lows: Sequence[int] | None = lows_by_number[number]
            if lows is None:
                continue  # nothing of the hand matches this card (the usual case)
            field = counts[number]
            table = _MATCHES[index] or _match_table(index)
            position = index + 1
            if field:
                for a in _IDS_IN_FIELD[number][field]:
                    key = _SINGLE_KEY[a]
                    out.append(table[key] or _new_match(table, key, position, (ALL_CARDS[a],)))
            if not lows:
                continue
            if len(lows) > 1:  # in the order of the hand's values (of their first cards)
                lows = _in_first_card_order(lows, counts)
            for value in lows:
                rest = number - value
                if rest == value:  # two cards of one value: each pair once
                    for a, b in _SAME_VALUE_PAIRS[value][counts[value]]:
                        key = _BASE_KEY[a] + b
                        out.append(table[key] or _new_match(
                            table, key, position, (ALL_CARDS[a], ALL_CARDS[b])))
                    continue
                others = _IDS_IN_FIELD[rest][counts[rest]]
                for a in _IDS_IN_FIELD[value][counts[value]]:
                    base = _BASE_KEY[a]
                    for b in others:
                        key = base + b
                        out.append(table[key] or _new_match(
                            table, key, position, (ALL_CARDS[a], ALL_CARDS[b])))
        return out

    def _list_wild_matches(self, hand: Sequence[Card], counts: bytes,
                           must_use: Card | None) -> list[Action]:
        """``_list_matches`` with Wild # cards about, or keeping only the matches that use
        ``must_use``, in the same order.

        A Wild # in the hand is a single on any CR number and pairs with every card of a lower
        value (and with another Wild #); a Wild # in the CR is any number 1-10, so every card
        is a single on it and every two cards that make at most 10 are a pair (1.3, 1.5).
        """
        wilds = _IDS_IN_FIELD[_WILD_NUMBER_BYTE][counts[_WILD_NUMBER_BYTE]]
        wild_pairs = _SAME_VALUE_PAIRS[_WILD_NUMBER_BYTE][counts[_WILD_NUMBER_BYTE]]
        firsts = []  # the first card of each value held, then in id order: the values' order
        for value in _VALUES:  # (a range would be made on every call)
            field = counts[value]
            if field:
                firsts.append(_FIRST_ID[value][field])
        firsts.sort()
        row = self.center_row
        out: list[Action] = []
        # Each match is listed as soon as its key in _MATCHES is made (a single's second card is
        # _SINGLE), in order: a list of the keys first cost more than the lookups.
        index = -1  # counted, as in _list_matches
        for matched in self.cr_matched:
            index += 1
            if matched is not None:
                continue
            number = row[index].number
            table = _MATCHES[index] or _match_table(index)
            position = index + 1
            if number is None:  # a Wild # in the CR is any number 1-10 (1.5)
                held = _distinct_ids(hand)
                for a in held:
                    key = _SINGLE_KEY[a]
                    out.append(table[key] or _match_of_key(table, key, position))
                for i, a in enumerate(held):
                    base = _BASE_KEY[a]
                    low = _LEAST_VALUE[a]
                    for b in held[i:]:
                        if (b != a or _held_twice(counts, a)) and low + _LEAST_VALUE[b] <= 10:
                            key = base + b
                            out.append(table[key] or _match_of_key(table, key, position))
                continue
            for a in _IDS_IN_FIELD[number][counts[number]]:
                key = _SINGLE_KEY[a]
                out.append(table[key] or _match_of_key(table, key, position))
            for w in wilds:
                key = _SINGLE_KEY[w]
                out.append(table[key] or _match_of_key(table, key, position))
            for first in firsts:
                value = _LEAST_VALUE[first]
                rest = number - value
                if rest < 1:
                    continue
                field = counts[value]
                if rest == value:
                    for a, partners in _SAME_VALUE_PARTNERS[value][field]:
                        base = _BASE_KEY[a]
                        for b in partners:
                            key = base + b
                            out.append(table[key] or _match_of_key(table, key, position))
                        for w in wilds:
                            key = base + w
                            out.append(table[key] or _match_of_key(table, key, position))
                    continue
                others = _IDS_IN_FIELD[rest][counts[rest]] if rest > value else ()
                for a in _IDS_IN_FIELD[value][field]:
                    base = _BASE_KEY[a]
                    for b in others:
                        key = base + b
                        out.append(table[key] or _match_of_key(table, key, position))
                    for w in wilds:
                        key = base + w
                        out.append(table[key] or _match_of_key(table, key, position))
            if number >= 2:  # two Wild #s make any number from 2 (1.3)
                for w, v in wild_pairs:
                    key = _BASE_KEY[w] + v
                    out.append(table[key] or _match_of_key(table, key, position))
        if must_use is not None:  # only the matches that use the card that must be used
            return _matches_using(out, must_use.id)
        return out

    def _only_end_left(self) -> bool:
        """Whether ``end`` is the one legal action of the current player (cheaper than listing)."""
        if self.winner is not None:
            return False
        seat = self.current
        hand = self.hands[seat]
        if self.options.dos_call and self.options.dos_rule == "v1" and (
            (not self.called_dos and len(hand) == 2)
            or any(
                missed and other != seat and len(self.hands[other]) == 2
                for other, missed in enumerate(self.dos_missed)
            )
        ):
            return False
        if self.bonus_phase:
            return not (self.placements_left and hand)
        if self.added:
            return True
        if self.matches == 0:
            return False  # may still draw, or (after a draw) must add
        if self.has_drawn and self.options.after_draw == "drawn_card":
            return True
        # Whether the hand can match any free CR card (the listing's question, without listing)
        if not hand:
            return True
        counts = self._counts[seat].to_bytes(_COUNT_BYTES, "little")
        if counts[_WILD_NUMBER_BYTE]:  # a Wild # matches any CR card alone (1.3, 1.5)
            return None not in self.cr_matched
        lows_by_number = _lows_by_number(counts)
        for index, target in enumerate(self.center_row):
            if self.cr_matched[index] is not None:
                continue
            number = target.number
            if number is None or counts[number]:
                return False
            for value in lows_by_number[number] or ():  # a pair of one value needs two cards
                if value + value != number or _SAME_VALUE_PAIRS[value][counts[value]]:
                    return False
        return True

    def is_legal(self, action: Action, seat: int | None = None) -> bool:
        try:
            self.check(action, seat)
        except DosError:
            return False
        return True

    # -- validation ---------------------------------------------------------------------------

    def check(self, action: Action, seat: int | None = None) -> Declaration | None:
        """Raise the error that forbids ``action`` for ``seat``; return a match's declaration."""
        if seat is None:
            seat = self.current
        if not 0 <= seat < len(self.players):
            raise IllegalActionError(N_("there is no seat {seat} in this game"), seat=seat)
        if self.winner is not None:
            raise IllegalActionError(
                N_("the game is over: {name} won"), rule="6.4", name=self.players[self.winner]
            )
        if isinstance(action, Catch):
            if self.options.printed_dos_rule:
                self._check_catch_printed(action, seat)
            else:
                self._check_catch(action, seat)
            return None
        if isinstance(action, CallDos) and (
            self.options.printed_dos_rule or not self.options.dos_call
        ):
            self._check_call_printed(seat)
            return None
        if seat != self.current:
            raise NotYourTurnError(
                N_("it is {current}'s turn, not {name}'s"),
                current=self.players[self.current], name=self.players[seat],
            )
        hand = self.hands[seat]
        if isinstance(action, Match):
            return self._check_match(action, hand)
        if isinstance(action, Draw):
            if self.bonus_phase:
                raise IllegalActionError(N_("the turn's matching is over"), rule="4.3")
            if self.has_drawn:
                raise IllegalActionError(N_("you have already drawn this turn"), rule="3.6")
            if self.matches:
                raise IllegalActionError(N_("you may not draw after matching"), rule="3.7")
        elif isinstance(action, Add):
            if not self.has_drawn or self.bonus_phase:
                raise IllegalActionError(
                    N_("you can add a card to the Center Row only after drawing"), rule="3.6"
                )
            if self.added:
                raise IllegalActionError(N_("you have already added a card this turn"),
                                         rule="3.6")
            if self.matches:
                raise IllegalActionError(
                    N_("you matched after drawing, so you do not add a card"), rule="3.6"
                )
            self._check_holds(hand, [action.card], rule="3.6")
        elif isinstance(action, Place):
            if not self.bonus_phase:
                if self.bonuses:
                    raise IllegalActionError(
                        N_("bonus cards are placed at the end of the turn: say 'end' first, "
                           "then place them"),
                        rule="4.3",
                    )
                raise IllegalActionError(
                    N_("you have not earned a colour bonus this turn, so you cannot place a "
                       "card"),
                    rule="3.5",
                )
            if not self.placements_left:
                raise IllegalActionError(
                    N_("you have placed one card for every bonus you earned"), rule="3.5"
                )
            self._check_holds(hand, [action.card], rule="3.5")
        elif isinstance(action, End):
            if (self.bonus_phase and self.placements_left and hand
                    and self.options.bonus_placement == "mandatory"):
                raise IllegalActionError(
                    N_("place your bonus cards first: {count} to place (rule option "
                       "bonus_placement is mandatory)") if self.placements_left > 1
                    else N_("place your bonus card first: {count} to place (rule option "
                            "bonus_placement is mandatory)"),
                    rule="3.5", count=self.placements_left,
                )
            if self.bonus_phase or self.added or self.matches:
                return None
            if self.has_drawn:
                if self.drawn is not None and self.options.after_draw == "drawn_card":
                    raise IllegalActionError(
                        N_("after drawing you must match using the card you drew ({card}) or "
                           "add a card to the Center Row before the turn can end"),
                        rule="3.6", card=self.drawn.code,
                    )
                raise IllegalActionError(
                    N_("after drawing you must match or add a card to the Center Row before "
                       "the turn can end"),
                    rule="3.6",
                )
            raise IllegalActionError(
                N_("a turn cannot end empty: match a Center Row card or draw"), rule="3.8"
            )
        elif isinstance(action, CallDos):  # v1 (with the option off, see above)
            if self.called_dos:
                raise IllegalActionError(N_("you have already called DOS this turn"), rule="5.1")
            if len(hand) != 2:
                raise IllegalActionError(
                    N_("you can call DOS only when you hold exactly two cards (you hold "
                       "{count})"),
                    rule="5.3", count=len(hand),
                )
        else:
            raise IllegalActionError(N_("unknown action {action}"), action=repr(action))
        return None

    def _check_catch(self, action: Catch, seat: int) -> None:
        if not self.options.dos_call:
            raise IllegalActionError(
                N_("this game does not use the DOS call (rule option dos_call is off)"), rule="5"
            )
        target = action.seat
        if target >= len(self.players):
            raise IllegalActionError(N_("there is no seat {seat} in this game"), seat=target)
        if target == seat:
            raise IllegalActionError(N_("you cannot catch yourself"), rule="5.2")
        name = self.players[target]
        if not self.dos_missed[target]:
            raise IllegalActionError(
                N_("{name} has not missed a DOS call that can still be caught"), rule="5.3",
                name=name,
            )
        if len(self.hands[target]) != 2:
            raise IllegalActionError(N_("{name} does not hold two cards now"), rule="5.3",
                                     name=name)

    def _may_call(self, seat: int) -> bool:
        """Printed rule: ``seat`` holds two cards it has not called on, and was not caught."""
        return (
            len(self.hands[seat]) == 2
            and not self.dos_calls[seat]
            and not (seat == self.current and self.penalty)
        )

    def _check_call_printed(self, seat: int) -> None:
        if not self.options.dos_call:
            raise IllegalActionError(
                N_("this game does not use the DOS call (rule option dos_call is off)"), rule="5"
            )
        held = len(self.hands[seat])
        if held != 2:
            raise IllegalActionError(
                N_("you can call DOS only when you hold exactly two cards (you hold {count})"),
                rule="5.3", count=held,
            )
        if self.dos_calls[seat]:
            raise IllegalActionError(
                N_("you have already called DOS on these two cards"), rule="5.1"
            )
        if seat == self.current and self.penalty:
            raise IllegalActionError(
                N_("you were caught holding these two cards: you draw two cards at the end "
                   "of your turn"),
                rule="5.2",
            )

    def _check_catch_printed(self, action: Catch, seat: int) -> None:
        target = action.seat
        if target >= len(self.players):
            raise IllegalActionError(N_("there is no seat {seat} in this game"), seat=target)
        if target == seat:
            raise IllegalActionError(N_("you cannot catch yourself"), rule="5.2")
        if self.dos_missed[target]:
            return
        name = self.players[target]
        held = len(self.hands[target])
        if held != 2:
            reason = N_("{name} holds {count} cards, not two, so there is no one to catch")
        elif self.dos_calls[target]:
            reason = N_("{name} has called DOS, so there is no one to catch")
        elif target == self.current and self.penalty:
            reason = N_("{name} has been caught already, so there is no one to catch")
        else:
            reason = N_("{name} came to two cards during this request: other players may "
                        "catch them once it has been submitted, so there is no one to catch")
        raise IllegalActionError(reason, rule="5.3", name=name, count=held)

    @staticmethod
    def _check_holds(hand: list[Card], cards: Sequence[Card], rule: str) -> None:
        for card in cards:
            need = 2 if len(cards) == 2 and cards[0] is cards[1] else 1
            if need == 1 and card in hand:
                continue
            have = hand.count(card)
            if have < need:
                if need == 1:
                    template = N_("you do not hold a {card} (you have none)")
                elif have == 0:
                    template = N_("you do not hold two {card} (you have none)")
                else:
                    template = N_("you do not hold two {card} (you have one)")
                raise IllegalActionError(template, rule=rule, card=card.code)

    def _check_match(self, action: Match, hand: list[Card]) -> Declaration:
        if self.bonus_phase:
            raise IllegalActionError(
                N_("the turn's matching is over: place bonus cards or end"), rule="4.3"
            )
        if self.added:
            raise IllegalActionError(
                N_("you added a card after drawing, so you cannot match"), rule="3.6"
            )
        size = len(self.center_row)
        if action.position > size:
            raise IllegalActionError(
                N_("there is no Center Row card {position}: the Center Row has {count} cards"),
                rule="2.3", position=action.position, count=size,
            )
        if self.cr_matched[action.position - 1] is not None:
            raise IllegalActionError(
                N_("Center Row card {position} was already matched this turn"), rule="3.3",
                position=action.position,
            )
        if self.has_drawn and self.options.after_draw == "drawn_card":
            if self.matches:
                raise IllegalActionError(
                    N_("after a draw you may make only one match, using the drawn card"),
                    rule="3.6",
                )
            if self.drawn is None or self.drawn not in action.cards:
                if self.drawn is None:
                    raise IllegalActionError(
                        N_("after drawing, a match must use the card you drew (nothing)"),
                        rule="3.6",
                    )
                raise IllegalActionError(
                    N_("after drawing, a match must use the card you drew ({card})"),
                    rule="3.6", card=self.drawn.code,
                )
        self._check_holds(hand, action.cards, rule="3.1" if len(action.cards) == 1 else "3.2")
        target = self.center_row[action.position - 1]
        declaration = declare_match(target, action.cards)
        if declaration is None:
            raise mismatch_reason(target, action)
        return declaration

    # -- playing ------------------------------------------------------------------------------

    def play(self, action: Action, seat: int | None = None, *,
             settle: bool = True) -> list[Event]:
        """Validate and apply one action; return the events it caused. The turn ends by itself
        after it if ``end`` is all that is left to do.

        A refused action raises and leaves the game unchanged.

        One call is one request: under the printed DOS rule exposure is settled after it, unless
        ``settle`` is false (:meth:`_run_turn` settles once, after the last of its actions).

        Raises:
            NotYourTurnError: ``seat`` is not the player to move (and the action is no ``catch``,
                or ``dos`` under the printed DOS rule).
            IllegalActionError: the rules forbid the action now; ``rule`` names the RULES.md
                section (NotYourTurnError is a subclass).
        """
        # (The early returns below are all without DOS calls: nothing to settle.)
        if seat is None:
            seat = self.current
        listed, self._listed = self._listed, None  # the state changes: the listing goes stale
        if listed is not None and self._listed_seat == seat:
            for candidate in listed:  # an action from the listing of this state is legal
                if candidate is action:
                    break
            else:
                self.check(action, seat)  # an equal action made elsewhere is validated
        else:
            self.check(action, seat)
        events: list[Event] = []
        self.actions_played += 1
        if isinstance(action, Match):  # written out here: two actions in five are matches
            cards = action.cards
            first = cards[0].id
            key = _SINGLE_KEY[first] if len(cards) == 1 else _BASE_KEY[first] + cards[1].id
            hand = self.hands[seat]
            for card in cards:  # as in _to_center_row
                index = 0
                for held in hand:
                    if held is card:
                        del hand[index]
                        break
                    index += 1  # noqa: SIM113 (an enumerate object costs more)
                else:
                    hand.remove(card)
            self._counts[seat] -= _KEY_UNITS[key]  # the cards' units at once
            if self.options.dos_call:
                self._hand_changed(seat)
            index = action.position - 1
            matched = self.center_row[index]
            declaration = ((_DECLARATIONS[matched.id] or _declaration_table(matched.id))[key]
                           or _new_declaration(matched.id, key))
            self.cr_matched[index] = cards
            self.matches += 1
            if declaration.bonus is not _NO_BONUS:
                self.bonuses += 1
            events.append(deferred_event(_MATCHED, seat, _matched_data,
                                        (action.position, matched, cards, declaration)))
            if declaration.bonus is _DOUBLE_COLOUR:
                count = len(self.players)
                for step in range(1, count):
                    self._draw_into((seat + step) % count, 1, "double_colour", events)
            if not self.has_drawn and not self.options.dos_call:
                # Without DOS calls the legal actions after a match are the matches left and
                # 'end': listed once here, they say whether the turn ends by itself, and
                # legal_actions() answers from them next.
                left = self._list_matches(seat)
                if left:
                    left.append(END)
                    self._listed = left  # made here, held nowhere else: no tuple needed
                    self._listed_seat = seat
                else:  # the turn ends, or its bonus phase begins with a card to place
                    self._apply_end(events)
                return events
            if not self.options.dos_call and self.options.after_draw == "drawn_card":
                self._apply_end(events)  # the one match a drawn card allows (3.6) was made
                return events
        elif isinstance(action, Draw):  # written out here: a quarter of all actions
            self.has_drawn = True
            pile = self._pile
            # _take_top's usual case written out: the top card is settled (so the pile not empty)
            drawn = pile.pop() if len(pile) > self._pile_unsettled else self._take_top(events)
            self.drawn = drawn
            if drawn is None:
                events.append(deferred_event(_DREW, seat, _drew_data, ((), "draw")))
            else:
                self.hands[seat].append(drawn)
                self._counts[seat] += _COUNT_UNIT[drawn.id]
                if self.options.dos_call:
                    self._hand_changed(seat)
                events.append(deferred_event(_DREW, seat, _drew_data, _DRAW_ARGS[drawn.id]))
            if not self.options.dos_call:
                return events  # a draw leaves a match or an add to make
        elif isinstance(action, Add):
            self._to_center_row(seat, action.card, _ADDED, events)
            self.added = True
            if not self.options.dos_call:  # 'end' is all that is left
                self._apply_end(events)
                return events
        elif isinstance(action, Place):
            self._to_center_row(seat, action.card, _PLACED, events)
            self.placements_left -= 1
            if not self.options.dos_call:
                if not (self.placements_left and self.hands[seat]):  # 'end' is all that is left
                    self._apply_end(events)
                return events
        elif isinstance(action, End):
            self._apply_end(events)
        elif isinstance(action, CallDos):
            if self.options.printed_dos_rule:
                self.dos_calls[seat] = True
                self.dos_missed[seat] = False
            else:
                self.called_dos = True
            events.append(Event(EventKind.DOS_CALLED, seat))
        elif isinstance(action, Catch):
            target = action.seat
            self.dos_missed[target] = False
            if not self.options.printed_dos_rule:
                events.append(Event(EventKind.CAUGHT, target, {"by": seat}))
                self._draw_into(target, 2, "caught", events)
            elif target == self.current:  # 5.2: drawn at the end of the caught player's turn
                self.penalty += 2
                events.append(Event(EventKind.CAUGHT, target, {"by": seat, "deferred": True}))
            else:
                events.append(Event(EventKind.CAUGHT, target, {"by": seat, "deferred": False}))
                self._draw_into(target, 2, "caught", events)
        # The turn ends by itself when 'end' is all its player could do next (a catch by a
        # waiting player can leave the current player there too).
        # (Without a match, an addition or a bonus phase the player may still draw or must add:
        # the usual case, answered here without the call.)
        while (self.matches or self.bonus_phase or self.added) and self._only_end_left():
            self._apply_end(events)
        if settle and self.options.dos_call and self.options.printed_dos_rule:
            self._settle_exposure()
        return events

    def play_turn(self, actions: Sequence[Action], seat: int | None = None) -> list[Event]:
        """Apply a list of actions (a turn, or part of one) all or nothing; return the events.

        This is how to play actions that are already ``Action`` objects, such as a choice from
        :meth:`legal_actions`: no text is involved. If one action is refused the game is
        unchanged. An ``end`` after the seat's turn has already ended by itself is ignored, so
        ``m1 R5; end`` works whether or not the match left anything else to do.

        The list is one request: under the printed DOS rule only the state it ends in can
        expose anyone (5.3).

        Raises:
            NotYourTurnError: ``seat`` is not the player to move.
            IllegalActionError: the rules forbid an action (``rule`` names the RULES.md section);
                in a list of several the message starts ``action N ('m1 R5'): ``.
        """
        trial, _, events = self._run_turn(actions, seat)
        self.adopt(trial)
        return events

    def play_text(self, text: str, seat: int | None = None) -> tuple[list[Action], list[Event]]:
        """Parse a turn leniently and apply it, all or nothing; return the actions and events.

        The same as ``play_turn(parse_turn(text))``, without playing the turn twice. The actions
        are those played, read leniently (see :meth:`_run_turn`): an ``end`` the turn did not
        need is left out, an ``end`` that a ``place`` implies is put in, so that playing them one
        by one (as :func:`replay` does) gives the same game. When the turn has several actions,
        an error's message starts ``action N ('what was typed'): ``.

        Raises:
            InvalidActionError: the text (or one of its ``;``-separated actions) is not notation.
            AmbiguousActionError: shorthand that fits several legal actions; ``candidates``.
            NotYourTurnError: ``seat`` is not the player to move.
            IllegalActionError: the rules forbid an action (``rule`` names the RULES.md section).
        """
        trial, actions, events = self._run_turn(_turn_texts(text), seat)
        self.adopt(trial)
        return actions, events

    def _run_turn(
        self, steps: Sequence[Action | str], seat: int | None
    ) -> tuple[Game, list[Action], list[Event]]:
        """The turn loop: play ``steps`` on a copy; return the copy, the actions played (each
        can be replayed with :meth:`play`, as records are) and the events.

        A step given as text is resolved against the copy as it stands after the steps before
        it: in ``m2; r5`` the ``r5`` is matched to a CR card that is still free after ``m2``.

        The lenient reading of a turn changes only lines that would otherwise be refused, so
        a line of legal actions means what playing them one by one means: an ``end`` is skipped
        when the turn has already ended by itself, or when it follows the step that ended the
        matching by itself and a ``place`` comes later (``m1 R5; end; place G7`` places G7 even
        if nothing could be matched after R5); a ``place`` while still matching, with a colour
        bonus earned, first ends the matching (``m1 R5; place G7`` needs no ``end``).
        """
        seat = self.current if seat is None else seat
        trial = self.copy()
        actions: list[Action] = []
        events: list[Event] = []
        closed_by_itself = False  # the step before closed the matching without an ``end``
        for number, step in enumerate(steps, start=1):
            try:
                action = step if isinstance(step, Action) else resolve_action(trial, step, seat)
                matching = trial.current == seat and not trial.bonus_phase
                if isinstance(action, End) and (
                    turn_ended(self, trial, seat)
                    or (closed_by_itself and trial.bonus_phase
                        and any(_is_place(later) for later in steps[number:]))
                ):
                    closed_by_itself = False
                    continue  # the 'end' the turn (or its matching) already had by itself
                if isinstance(action, Place) and matching and trial.bonuses:
                    events.extend(trial.play(END, seat, settle=False))  # placing ends the matching
                    actions.append(END)
                events.extend(trial.play(action, seat, settle=False))
                closed_by_itself = (
                    matching and not isinstance(action, (End, Place))
                    and trial.current == seat and trial.bonus_phase
                )
            except DosError as error:
                if len(steps) == 1:
                    raise
                raise with_context(error, number, str(step)) from error
            actions.append(action)
        if trial.options.printed_dos_rule:
            trial._settle_exposure()
        return trial, actions, events

    def adopt(self, trial: Game) -> None:
        """Become ``trial`` (a copy that played on): how several actions commit at once."""
        for name in Game.__slots__:
            setattr(self, name, getattr(trial, name))

    def _to_center_row(self, seat: int, card: Card, kind: EventKind,
                       events: list[Event]) -> None:
        """A card from ``seat``'s hand (and its counts by value) to the end of the Center Row
        (added or placed)."""
        hand = self.hands[seat]
        # list.remove by identity first: cards are shared objects, and Card.__eq__ is Python code
        index = 0
        for held in hand:
            if held is card:
                del hand[index]
                break
            index += 1  # noqa: SIM113 (an enumerate object costs more)
        else:
            hand.remove(card)  # an equal card made elsewhere
        self._counts[seat] -= _COUNT_UNIT[card.id]
        if self.options.dos_call:
            self._hand_changed(seat)
        self.center_row.append(card)
        self.cr_matched.append(None)
        events.append(deferred_event(kind, seat, _placed_data, (card, len(self.center_row))))

    def _draw_into(self, seat: int, count: int, reason: str, events: list[Event]) -> None:
        drawn: list[Card] = []
        for _ in range(count):
            card = self._take_top(events)
            if card is None:
                break
            drawn.append(card)
        self.hands[seat].extend(drawn)
        for card in drawn:
            self._counts[seat] += _COUNT_UNIT[card.id]
        if drawn and self.options.dos_call:
            self._hand_changed(seat)
        events.append(deferred_event(_DREW, seat, _drew_data, (drawn, reason)))

    def _hand_changed(self, seat: int) -> None:
        """Printed DOS rule: a call protects, and exposure lasts, until the hand size changes."""
        if self.options.dos_call and self.options.printed_dos_rule:
            self.dos_calls[seat] = False
            self.dos_missed[seat] = False

    def _settle_exposure(self) -> None:
        """Printed DOS rule, at a request boundary: who holds two cards without a call (5.1)."""
        self._listed = None  # exposure decides who can be caught
        over = self.winner is not None
        current, penalty = self.current, self.penalty
        for seat, hand in enumerate(self.hands):
            self.dos_missed[seat] = (
                not over
                and len(hand) == 2
                and not self.dos_calls[seat]
                and not (seat == current and penalty)
            )

    def _take_top(self, events: list[Event]) -> Card | None:
        """The top card of the draw pile, reshuffling the discard pile into it if needed (4.4)."""
        pile = self._pile
        if not pile:
            if not self.discard_pile:
                return None
            self.reshuffles += 1
            pile = self.discard_pile
            self.discard_pile = []
            shuffle(pile, derive_key(self.round_seed, "reshuffle", str(self.reshuffles)))
            self.draw_pile = pile
            events.append(Event(EventKind.RESHUFFLED, None, {"count": len(pile)}))
        elif len(pile) <= self._pile_unsettled:  # the shuffle has not settled the top card yet
            self._settle_pile(_SETTLE_STEPS)
        return pile.pop()

    def _apply_end(self, events: list[Event]) -> None:
        """The end of the matching (4.1-4.3) and, unless a bonus phase follows, of the turn."""
        seat = self.current
        hand = self.hands[seat]
        if not self.bonus_phase:
            if self.matches:  # 4.1: matched CR cards and the cards on them go to discard
                kept: list[Card] = []
                discarded: list[Card] = []
                row = self.center_row  # by index: zip's strict keyword costs a kwargs call
                index = -1  # counted: an enumerate object costs more than a short loop's steps
                for matched in self.cr_matched:
                    index += 1
                    if matched is None:
                        kept.append(row[index])
                    else:
                        discarded.append(row[index])
                        discarded.extend(matched)
                self.discard_pile.extend(discarded)
                self.center_row = kept
                self.cr_matched = _UNMATCHED[:len(kept)]
                events.append(deferred_event(_DISCARDED, None, _discarded_data, (discarded,)))
            if len(self.center_row) < 2:
                self._refill(events, "refill")
            if self.bonuses and hand:
                self.bonus_phase = True
                self.placements_left = self.bonuses
                return
        # The turn ends (written out here: this runs once a turn).
        options = self.options
        printed = options.dos_call and options.printed_dos_rule
        if printed and self.penalty:  # 5.2: after 4.1-4.3, before 6.1
            self._draw_into(seat, self.penalty, "caught", events)
            self.penalty = 0
        if not printed and options.dos_call and len(hand) == 2 and not self.called_dos:
            self.dos_missed[seat] = True
            events.append(Event(EventKind.DOS_MISSED, seat))
        following = (seat + 1) % len(self.players)
        events.append(deferred_event(_TURN_ENDED, seat, _turn_ended_data,
                                    _TURN_ENDED_ARGS[following if hand else -1]))
        if not hand:
            self._end_round(seat, events)
            return
        self.current = following
        self.turn_no += 1
        self._reset_turn()
        if not printed:
            self.dos_missed[following] = False  # v1: the window closes when their turn starts

    def _refill(self, events: list[Event], reason: str) -> None:
        """4.2: flip cards until the CR holds two (fewer if both piles are empty, 4.4)."""
        flipped: list[Card] = []
        while len(self.center_row) < 2:
            pile = self._pile  # _take_top's usual case written out, as in play's draw
            card = pile.pop() if len(pile) > self._pile_unsettled else self._take_top(events)
            if card is None:
                break
            self.center_row.append(card)
            self.cr_matched.append(None)
            flipped.append(card)
        if flipped:
            events.append(deferred_event(_CR_FLIPPED, None, _flipped_data, (flipped, reason)))

    def _reset_turn(self) -> None:
        self.drawn = None
        self.has_drawn = False
        self.matches = 0
        self.added = False
        self.bonuses = 0
        self.bonus_phase = False
        self.placements_left = 0
        self.called_dos = False
        self.penalty = 0

    def _end_round(self, winner: int, events: list[Event]) -> None:
        points = [sum([_POINTS[card.id] for card in hand]) for hand in self.hands]
        scored = sum(points) - points[winner]
        self.scores[winner] += scored
        events.append(deferred_event(
            EventKind.ROUND_OVER, winner, _round_over_data,
            (self.round_no, [tuple(hand) for hand in self.hands], points, scored,
             list(self.scores), self.seed)))
        if self.scores[winner] >= self.options.target_score:
            self.winner = winner
            self._reset_turn()
            events.append(
                Event(EventKind.GAME_OVER, winner,
                      {"scores": list(self.scores), "seed": self.seed, "rounds": self.round_no})
            )
            return
        self.dealer = (self.dealer + 1) % len(self.players)
        self._start_round(events)

    def _start_round(self, events: list[Event]) -> None:
        """2.3-2.4 and 6.5: shuffle all 108 cards, deal 7 each from the dealer's left, flip 2."""
        self.round_no += 1
        count = len(self.players)
        seed = self.round_seed
        deck = new_deck()
        key = derive_key(seed, "deal")
        # Shuffled as deep as the deal and the first two CR cards go (in whole blocks of the
        # key's stream); the rest of the shuffle is made as the pile is drawn (see _pile).
        depth = (HAND_SIZE * count + 2 + 3) // 4 * 4
        taken = continue_shuffle(deck, key, len(deck) - 1, 0, depth)
        first = (self.dealer + 1) % count
        # One card at a time from the top (the end of the list), from the dealer's left: the
        # seat `step` places after `first` gets every count-th card of the dealt ones.
        dealt = deck[:-HAND_SIZE * count - 1:-1]
        del deck[-HAND_SIZE * count:]
        self.hands = [dealt[(seat - first) % count::count] for seat in range(count)]
        self._counts = [_count_hand(hand) for hand in self.hands]
        self._pile = deck
        self._pile_shuffle = (key, taken)
        self._pile_unsettled = DECK_SIZE - depth
        self.discard_pile = []
        self.center_row = []
        self.cr_matched = []
        self.reshuffles = 0
        self.current = first
        self.turn_no += 1
        self.dos_missed = [False] * count
        self.dos_calls = [False] * count
        self._reset_turn()
        events.append(deferred_event(EventKind.ROUND_STARTED, None, _round_started_data,
                                     (self.round_no, self.dealer, first, seed)))
        for seat in range(count):
            events.append(deferred_event(_DREW, seat, _drew_data, (tuple(self.hands[seat]), "deal")))
        self._refill(events, "deal")

    # -- declarations, descriptions -----------------------------------------------------------

    def declare(self, action: Match) -> Declaration | None:
        """What the engine declares for a match here (None if the cards cannot match)."""
        if not 1 <= action.position <= len(self.center_row):
            return None
        return declare_match(self.center_row[action.position - 1], action.cards)

    def describe(self, action: Action, seat: int | None = None,
                 language: str | None = "en") -> str:
        """A one-line human description of an action in this position, in ``language``
        (English for one the engine has no catalog of); card codes stay as they are."""
        t = translator(language)
        if isinstance(action, Match):
            target = self.center_row[action.position - 1]
            declaration = self.declare(action)
            sentence = (N_("double match: {cards} on Center Row card {position} ({target})")
                        if action.is_double
                        else N_("match: {cards} on Center Row card {position} ({target})"))
            cards = " + ".join(card_name(c, language) for c in action.cards)
            text = t.gettext(sentence).format(cards=cards, position=action.position,
                                              target=card_name(target, language))
            if declaration is not None:
                text += _declaration_note(target, action.cards, declaration, language)
                if declaration.bonus is Bonus.SINGLE_COLOUR:
                    text += "; " + t.gettext("colour match: place a card at the end of the turn")
                elif declaration.bonus is Bonus.DOUBLE_COLOUR:
                    text += "; " + t.gettext(
                        "double colour match: everyone else draws a card now, "
                        "and you place a card at the end of the turn"
                    )
            return text
        if isinstance(action, Draw):
            return t.gettext("draw a card")
        if isinstance(action, Add):
            return t.gettext("add {card} to the Center Row").format(
                card=card_name(action.card, language))
        if isinstance(action, Place):
            return t.gettext("place {card} in the Center Row (colour bonus)").format(
                card=card_name(action.card, language))
        if isinstance(action, End):
            if self.bonuses and not self.bonus_phase:
                return t.gettext("end matching, then place your bonus cards")
            return t.gettext("end your turn")
        if isinstance(action, CallDos):
            return t.gettext("call DOS (you hold two cards)")
        if isinstance(action, Catch):
            name = self.players[action.seat]
            if not self.options.printed_dos_rule:
                sentence = N_("catch {name}, who did not call DOS: they draw two cards")
            elif action.seat == self.current:
                sentence = N_("catch {name}, who holds two cards without calling DOS: they draw "
                              "two at the end of their turn")
            else:
                sentence = N_("catch {name}, who holds two cards without calling DOS: they draw "
                              "two")
            return t.gettext(sentence).format(name=name)
        return action.text()

    # -- lenient parsing (shorthand is resolved in dos_engine.notation) ----------------------

    def parse_action(self, text: str, seat: int | None = None) -> Action:
        """Parse what a person typed, resolving shorthand against this position.

        Raises:
            InvalidActionError: the text is not an action, even leniently read.
            AmbiguousActionError: shorthand that fits several legal actions; ``candidates``.
            IllegalActionError: shorthand for a match that no legal match fits, or declarations
                (``R#=7``) that do not fit; ``rule`` names the RULES.md section.
        """
        return resolve_action(self, text, self.current if seat is None else seat)

    def parse_turn(self, text: str, seat: int | None = None) -> list[Action]:
        """Parse a whole turn (``;``-separated), each action resolved after the ones before it.

        The game is unchanged: the turn is played on a copy, since each action is resolved in
        the position the ones before it leave. Errors are those of :meth:`play_text`.

        Raises:
            InvalidActionError: the text (or one of its actions) is not notation.
            AmbiguousActionError: shorthand that fits several legal actions; ``candidates``.
            NotYourTurnError: ``seat`` is not the player to move.
            IllegalActionError: an action the rules forbid, where it stands in the turn (a
                later action would be resolved in the position it leaves).
        """
        return self._run_turn(_turn_texts(text), seat)[1]

    # -- views --------------------------------------------------------------------------------

    def view(self, seat: int | None) -> View:
        """What ``seat`` may know; ``None`` is a spectator (no hand at all)."""
        if seat is not None and not 0 <= seat < len(self.players):
            raise ValueError(f"there is no seat {seat} in this game")
        own_turn = seat is not None and seat == self.current and self.winner is None
        return View(
            seat=seat,
            players=self.players,
            hand=None if seat is None else tuple(sorted(self.hands[seat])),
            hand_sizes=tuple(len(hand) for hand in self.hands),
            center_row=tuple(
                CenterCard(index + 1, card, matched)
                for index, (card, matched) in enumerate(
                    zip(self.center_row, self.cr_matched, strict=True)
                )
            ),
            scores=tuple(self.scores),
            round=self.round_no,
            dealer=self.dealer,
            current=self.current,
            phase=self.phase,
            drawn=self.drawn if own_turn else None,
            placements_left=self.placements_left,
            dos_called=(self.dos_calls[self.current] if self.options.printed_dos_rule
                        else self.called_dos),
            dos_missed=tuple(self.dos_missed),
            dos_calls=tuple(self.dos_calls),
            dos_penalty=self.penalty,
            draw_pile_size=len(self._pile),
            discard_pile_size=len(self.discard_pile),
            options=self.options,
            winner=self.winner,
            legal_actions=tuple(self.legal_actions(seat)) if seat is not None else (),
        )

    # -- serialization ------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The full state, JSON-safe (including the draw pile: never show it to a player)."""
        return {
            "schema": SCHEMA_VERSION,
            "players": list(self.players),
            "seed": self.seed,
            "options": self.options.to_dict(),
            "scores": list(self.scores),
            "round": self.round_no,
            "dealer": self.dealer,
            "current": self.current,
            "hands": [[c.code for c in hand] for hand in self.hands],
            "draw_pile": [c.code for c in self.draw_pile],
            "discard_pile": [c.code for c in self.discard_pile],
            "center_row": [
                {"card": card.code, "matched_with": None if m is None else [c.code for c in m]}
                for card, m in zip(self.center_row, self.cr_matched, strict=True)
            ],
            "reshuffles": self.reshuffles,
            "turn": {
                "drawn": None if self.drawn is None else self.drawn.code,
                "has_drawn": self.has_drawn,
                "matches": self.matches,
                "added": self.added,
                "bonuses": self.bonuses,
                "bonus_phase": self.bonus_phase,
                "placements_left": self.placements_left,
                "called_dos": self.called_dos,
                "penalty": self.penalty,
            },
            "dos_missed": list(self.dos_missed),
            "dos_calls": list(self.dos_calls),
            "winner": self.winner,
            "actions_played": self.actions_played,
            "turn_no": self.turn_no,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Game:
        """Rebuild a game from :meth:`to_dict`; a malformed state raises InvalidStateError."""
        try:
            return _from_dict(raw)
        except InvalidStateError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
            raise InvalidStateError(N_("not a valid DOS game state: {error}"),
                                    error=repr(error)) from error

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Game) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"<Game {', '.join(self.players)}: round {self.round_no}, "
            f"{self.players[self.current]} to play, scores {self.scores}>"
        )

    def card_count(self) -> int:
        """How many cards the state holds in all (always 108, RULES.md 7)."""
        on_cr = sum(len(m) for m in self.cr_matched if m is not None)
        return (
            len(self._pile)
            + len(self.discard_pile)
            + len(self.center_row)
            + on_cr
            + sum(len(hand) for hand in self.hands)
        )


def turn_ended(before: Game, after: Game, seat: int) -> bool:
    """Whether ``seat``'s turn, current in ``before``, has ended (by itself) in ``after``."""
    return before.current == seat and before.winner is None and (
        after.current != seat or after.round_no != before.round_no or after.is_over
    )


def _is_place(step: Action | str) -> bool:
    """Whether a step of a turn is a ``place`` (for text: by its verb, before resolving)."""
    if isinstance(step, Action):
        return isinstance(step, Place)
    words = step.split(None, 1)
    return bool(words) and words[0].lower() in ("place", "p", "bonus")


def _turn_texts(text: str) -> list[str]:
    parts = split_turn(text)
    if not parts:
        raise InvalidActionError(N_("no action given. {help}"), help=NOTATION_HELP)
    return parts


def _distinct_ids(hand: Sequence[Card]) -> list[int]:
    return sorted({card.id for card in hand})


_card_id = attrgetter("id")

# Matches are immutable, so listing reuses one object per (CR position, cards): the table of
# position p holds the match of cards a, b at a.id * _KEYS + b.id (a single at b = _SINGLE).
_SINGLE = len(ALL_CARDS)
_KEYS = _SINGLE + 1
# The keys a * _KEYS and a * _KEYS + _SINGLE by card id a, made once: most are past the ints
# Python keeps made, so working them out would make new int objects on every listing.
_BASE_KEY = [a * _KEYS for a in range(len(ALL_CARDS))]
_SINGLE_KEY = [base + _SINGLE for base in _BASE_KEY]
# By CR index (a CR never holds more than the deck), each table made when its position is
# first listed: listing need not compare the CR's length with the tables'.
_MATCHES: list[list[Match | None] | None] = [None] * DECK_SIZE


def _match_table(index: int) -> list[Match | None]:
    table: list[Match | None] = [None] * (len(ALL_CARDS) * _KEYS)
    _MATCHES[index] = table
    return table


# The canonical declarations of the matches played, by CR card id and then by the match's key as
# in _MATCHES, each table made when first needed: two list lookups cost a fifth of a call of
# the memo matching._canonical (its key is a tuple of the three ids, made and hashed each time).
_DECLARATIONS: list[list[Declaration | None] | None] = [None] * len(ALL_CARDS)


def _declaration_table(target_id: int) -> list[Declaration | None]:
    table: list[Declaration | None] = [None] * (len(ALL_CARDS) * _KEYS)
    _DECLARATIONS[target_id] = table
    return table


def _new_declaration(target_id: int, key: int) -> Declaration:
    first, second = divmod(key, _KEYS)
    declaration = _canonical(target_id, first, -1 if second == _SINGLE else second)
    assert declaration is not None, "a legal match has a declaration"
    table = _DECLARATIONS[target_id]
    assert table is not None
    table[key] = declaration
    return declaration




# -- the hand as counts by value -----------------------------------------------------------
# A hand's cards counted in 12 bytes: byte v (1-10) holds the hand's cards of value v, two bits
# of count per colour (a colour has at most three copies of a number), the Wild DOS count (up to
# 12) filling byte 2; byte 11 holds the Wild # cards the same way. Listing reads the cards of one
# value as one small number instead of going through the hand card by card.
_WILD_NUMBER_BYTE = 11
_VALUES = tuple(range(1, 11))  # the bytes of the values 1-10
_COUNT_BYTES = 12


def _count_unit(card: Card) -> int:
    if card.kind is CardKind.WILD_DOS:
        return 1 << 8 * 2
    assert card.colour is not None
    byte = _WILD_NUMBER_BYTE if card.number is None else card.number
    return 1 << (8 * byte + 2 * COLOURS.index(card.colour))


_COUNT_UNIT = [_count_unit(card) for card in ALL_CARDS]  # by card id
# By key of a match (see _MATCHES): its cards' units added up.
_KEY_UNITS = [_COUNT_UNIT[a] + (0 if b == _SINGLE else _COUNT_UNIT[b])
              for a in range(len(ALL_CARDS)) for b in range(_KEYS)]


def _count_hand(hand: Sequence[Card]) -> int:
    """The hand's counts by value (see above) as one integer: the sum of one unit per card."""
    counts = 0
    for card in hand:  # a plain loop: for a few cards, cheaper than sum(map(...)) here
        counts += _COUNT_UNIT[card.id]
    return counts


# By byte of counts (a value, or the Wild #s) and its field: the ids held, in id order; the
# first of them; the pairs of two cards of that value, each once, a card with itself if held
# twice, in the order of their first card, and the same as each card with its partners.
_IDS_IN_FIELD: list[list[tuple[int, ...]]] = [[()] * 256 for _ in range(_COUNT_BYTES)]
_FIRST_ID: list[list[int]] = [[-1] * 256 for _ in range(_COUNT_BYTES)]
_SAME_VALUE_PAIRS: list[list[tuple[tuple[int, int], ...]]] = [
    [()] * 256 for _ in range(_COUNT_BYTES)]
_SAME_VALUE_PARTNERS: list[list[tuple[tuple[int, tuple[int, ...]], ...]]] = [
    [()] * 256 for _ in range(_COUNT_BYTES)]


def _fill_field_tables() -> None:
    # A field's colours, and each colour's partners of the same value, are the same in every
    # byte up to the ids' offset: worked out once, then mapped to the ids of each byte (this
    # runs at import). A colour holds at most 3 copies of a number and 2 of a Wild #: fields
    # that hold more are left empty; the byte of the Wild DOS holds its count.
    colours: list[tuple[int, ...]] = []
    partners: list[tuple[tuple[int, tuple[int, ...]], ...]] = []
    most: list[int] = []
    for field in range(256):
        counts = [field >> 2 * colour & 3 for colour in range(4)]
        held = tuple(colour for colour in range(4) if counts[colour])
        colours.append(held)
        partners.append(tuple(
            (a, tuple(b for b in held if b > a or (b == a and counts[a] > 1))) for a in held))
        most.append(max(counts))
    for byte in (*NUMBERS, _WILD_NUMBER_BYTE):
        offset = 9 if byte == _WILD_NUMBER_BYTE else NUMBERS.index(byte)  # within a colour
        limit = WILD_NUMBER_PER_COLOUR if byte == _WILD_NUMBER_BYTE else COPIES_PER_COLOUR[byte]
        card_id = [colour * 10 + offset for colour in range(4)].__getitem__
        for field in range(1, 256):
            if most[field] > limit:
                continue  # more copies than the deck has
            _IDS_IN_FIELD[byte][field] = tuple(map(card_id, colours[field]))
            _FIRST_ID[byte][field] = card_id(colours[field][0])
            same = tuple((card_id(a), tuple(map(card_id, others)))
                         for a, others in partners[field])
            _SAME_VALUE_PARTNERS[byte][field] = same
            _SAME_VALUE_PAIRS[byte][field] = tuple((a, b) for a, others in same for b in others)
    wild_dos = WILD_DOS.id
    for count in range(1, WILD_DOS_COUNT + 1):
        _IDS_IN_FIELD[2][count] = (wild_dos,)
        _FIRST_ID[2][count] = wild_dos
        _SAME_VALUE_PARTNERS[2][count] = ((wild_dos, (wild_dos,) if count > 1 else ()),)
        _SAME_VALUE_PAIRS[2][count] = ((wild_dos, wild_dos),) if count > 1 else ()


_fill_field_tables()

# By card id: where its count sits in the counts (byte, shift, mask), and the least value it
# can count as (a Wild # counts as 1 to 10).
_COUNT_PLACE: list[tuple[int, int, int]] = [
    ((unit.bit_length() - 1) // 8, (unit.bit_length() - 1) % 8, 255 if card is WILD_DOS else 3)
    for unit, card in zip(_COUNT_UNIT, ALL_CARDS, strict=True)]
_LEAST_VALUE = [card.number or 1 for card in ALL_CARDS]


def _held_twice(counts: bytes, card_id: int) -> bool:
    byte, shift, mask = _COUNT_PLACE[card_id]
    return counts[byte] >> shift & mask > 1


def _lows_by_number(counts: bytes) -> tuple[tuple[int, ...] | None, ...]:
    """By CR number: the values v <= number - v of the pairs the hand can make (:func:`_lows`),
    or None when the hand holds neither such a pair nor a card of that number (so that listing
    skips a CR card with one lookup); worked out once for each set of values a hand holds."""
    present = counts.translate(_PRESENT)
    found = _LOWS_BY_PRESENCE.get(present)
    if found is None:
        mask = sum(1 << value for value in range(1, 11) if present[value])
        found = _LOWS_BY_PRESENCE[present] = tuple(
            _lows(number, mask) or (() if mask >> number & 1 else None)
            for number in range(11))
    return found


_PRESENT = bytes([0] + [1] * 255)  # a byte of counts -> whether it holds any card
_LOWS_BY_PRESENCE: dict[bytes, tuple[tuple[int, ...] | None, ...]] = {}  # at most 2^12 entries


def _lows(number: int, mask: int) -> tuple[int, ...]:
    """The values v <= number - v such that both v and number - v are bits of mask (1-10)."""
    return tuple(v for v in range(1, number // 2 + 1)
                 if mask >> v & 1 and mask >> (number - v) & 1)


# Helpers with a lambda or a comprehension of a caller's variable: in the caller itself, the
# variable would be a cell, read more slowly on every call.
def _in_first_card_order(values: Sequence[int], counts: bytes) -> Sequence[int]:
    """Values in the order of the hand's first card of each."""
    if len(values) == 2:  # the usual case, compared here: sorted would call the key twice
        low, high = values
        return values if _FIRST_ID[low][counts[low]] < _FIRST_ID[high][counts[high]] else (high, low)
    return sorted(values, key=lambda value: _FIRST_ID[value][counts[value]])


def _matches_using(matches: list[Action], card_id: int) -> list[Action]:
    """The matches that use the card ``card_id``."""
    return [match for match in matches
            if isinstance(match, Match) and card_id in (match.cards[0].id, match.cards[-1].id)]


def _match_of_key(matches: list[Match | None], key: int, position: int) -> Match:
    first, second = divmod(key, _KEYS)
    cards = ((ALL_CARDS[first],) if second == _SINGLE
             else (ALL_CARDS[first], ALL_CARDS[second]))
    return _new_match(matches, key, position, cards)


def _new_match(matches: list[Match | None], key: int, position: int,
               cards: tuple[Card, ...]) -> Match:
    match = matches[key] = Match(position, cards)
    return match


# The data of the frequent events, made when an event is first read (events.deferred_event):
# (data, secret) from what the event was made of.
_EventData = tuple[dict[str, Any], dict[str, Any] | None]


def _matched_data(position: int, target: Card, cards: tuple[Card, ...],
                  declaration: Declaration) -> _EventData:
    declared = declaration.to_dict()
    return {
        "position": position,
        "target": target.code,
        "cards": [c.code for c in cards],
        "declared": declared,
        "bonus": declared["bonus"],
    }, None


def _drew_data(cards: Sequence[Card], reason: str) -> _EventData:
    return {"count": len(cards), "reason": reason}, {"cards": [c.code for c in cards]}


def _placed_data(card: Card, position: int) -> _EventData:
    return {"card": card.code, "position": position}, None


def _discarded_data(cards: list[Card]) -> _EventData:
    return {"cards": [c.code for c in cards]}, None


def _flipped_data(cards: list[Card], reason: str) -> _EventData:
    return {"cards": [c.code for c in cards], "reason": reason}, None


def _turn_ended_data(following: int | None) -> _EventData:
    return {"next": following}, None


def _round_over_data(round_no: int, hands: list[tuple[Card, ...]], points: list[int],
                     scored: int, scores: list[int], seed: str) -> _EventData:
    return {
        "round": round_no,
        "hands": [[c.code for c in sorted(hand, key=_card_id)] for hand in hands],
        "points": points,
        "scored": scored,
        "scores": scores,
        "round_seed": round_seed(seed, round_no),
    }, None


def _round_started_data(round_no: int, dealer: int, first: int, seed: str) -> _EventData:
    return {
        "round": round_no,
        "dealer": dealer,
        "first": first,
        "seed_commitment": seed_commitment(seed),
    }, None


def start_game(
    players: Sequence[str], seed: str, options: Options | None = None
) -> tuple[Game, list[Event]]:
    """Set up a game (2.1-2.4): draw for the first dealer, then deal round 1."""
    names = tuple(players)
    if not MIN_PLAYERS <= len(names) <= MAX_PLAYERS:
        raise ValueError(f"DOS is played by 2 to 4 players, not {len(names)} (2.1)")
    if any(not isinstance(n, str) or not n.strip() for n in names):
        raise ValueError("every player needs a name")
    if not isinstance(seed, str) or not seed:
        raise ValueError("the seed must be a non-empty string")
    game = object.__new__(Game)
    game.players = names
    game.seed = seed
    game.options = options or Options()
    game.scores = [0] * len(names)
    game.round_no = 0
    game.winner = None
    game.actions_played = 0
    game.turn_no = 0
    game._listed = None
    game._listed_seat = -1
    dealer, draws = _draw_for_dealer(seed, len(names))
    game.dealer = dealer
    events = [
        Event(
            EventKind.GAME_STARTED,
            None,
            {
                "players": list(names),
                "options": game.options.to_dict(),
                "dealer_draws": draws,
                "dealer": dealer,
            },
        )
    ]
    game._start_round(events)
    return game, events


_DEALER_TOP = 16  # cards of a deck the draw for dealer shuffles into place first (4 draws of 4)


def _draw_for_dealer(seed: str, count: int) -> tuple[int, list[dict[str, str]]]:
    """2.2: everyone draws a card; highest number deals (wilds count 0); ties draw again."""
    # Cards come off the top of each deck, so the deck is shuffled only as deep as the draws go
    # (shuffle's ``top``), and shuffled whole, as it always was, if the ties go deeper.
    deck_no = 0
    key = derive_key(seed, "dealer", str(deck_no))
    deck = new_deck()
    shuffle(deck, key, top=_DEALER_TOP)
    placed = _DEALER_TOP  # the cards on top of the deck that are where a whole shuffle puts them
    contenders = list(range(count))
    draws: list[dict[str, str]] = []
    while True:
        if len(deck) < len(contenders):
            deck_no += 1
            key = derive_key(seed, "dealer", str(deck_no))
            deck = new_deck()
            shuffle(deck, key, top=_DEALER_TOP)
            placed = _DEALER_TOP
        taken = DECK_SIZE - len(deck)
        if taken + len(contenders) > placed:
            deck = new_deck()
            shuffle(deck, key)
            del deck[DECK_SIZE - taken:]
            placed = DECK_SIZE
        drawn = {seat: deck.pop() for seat in contenders}
        draws.append({str(seat): card.code for seat, card in drawn.items()})
        best = max(card.dealer_value for card in drawn.values())
        contenders = [seat for seat, card in drawn.items() if card.dealer_value == best]
        if len(contenders) == 1:
            return contenders[0], draws


def _from_dict(raw: Mapping[str, Any]) -> Game:
    schema = raw.get("schema")
    if type(schema) is not int or schema != SCHEMA_VERSION:
        raise InvalidStateError(
            N_("unsupported state schema {schema} (this engine reads {version})"),
            schema=repr(schema), version=SCHEMA_VERSION,
        )
    game = object.__new__(Game)
    players = raw["players"]
    if not isinstance(players, list) or not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
        raise InvalidStateError(N_("players must be a list of 2 to 4 names"))
    if not all(isinstance(p, str) and p.strip() for p in players):
        raise InvalidStateError(N_("players must be non-empty names"))
    if not isinstance(raw["seed"], str) or not raw["seed"]:
        raise InvalidStateError(N_("the seed must be a non-empty string"))
    count = len(players)
    game.players = tuple(players)
    game.seed = raw["seed"]
    game.options = Options.from_stored(raw["options"])

    def cards(codes: Any) -> list[Card]:
        if not isinstance(codes, list):
            raise InvalidStateError(N_("card lists must be lists of codes"))
        try:  # stored states hold canonical codes: a plain lookup, the parser for the rest
            return [CARDS_BY_CODE[code] for code in codes]
        except (KeyError, TypeError):
            return [Card.from_code(code) for code in codes]

    def seat(value: Any, allow_none: bool = False) -> Any:
        if value is None and allow_none:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < count:
            raise InvalidStateError(N_("{value} is not a seat"), value=repr(value))
        return value

    def natural(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidStateError(N_("{value} is not a count"), value=repr(value))
        return value

    def flag(value: Any) -> bool:
        if not isinstance(value, bool):
            raise InvalidStateError(N_("{value} is not true or false"), value=repr(value))
        return value

    game.scores = [natural(s) for s in raw["scores"]]
    game.round_no = natural(raw["round"])
    game.dealer = seat(raw["dealer"])
    game.current = seat(raw["current"])
    game.hands = [cards(hand) for hand in raw["hands"]]
    game._counts = [_count_hand(hand) for hand in game.hands]
    game.draw_pile = cards(raw["draw_pile"])
    game.discard_pile = cards(raw["discard_pile"])
    game.center_row = []
    game.cr_matched = []
    for slot in raw["center_row"]:
        game.center_row.append(Card.from_code(slot["card"]))
        matched = slot["matched_with"]
        game.cr_matched.append(None if matched is None else tuple(cards(matched)))
    game.reshuffles = natural(raw["reshuffles"])
    turn = raw["turn"]
    game.drawn = None if turn["drawn"] is None else Card.from_code(turn["drawn"])
    game.has_drawn = flag(turn["has_drawn"])
    game.matches = natural(turn["matches"])
    game.added = flag(turn["added"])
    game.bonuses = natural(turn["bonuses"])
    game.bonus_phase = flag(turn["bonus_phase"])
    game.placements_left = natural(turn["placements_left"])
    game.called_dos = flag(turn["called_dos"])
    # States stored before the printed DOS rule have no calls or penalties.
    game.penalty = natural(turn.get("penalty", 0))
    game.dos_missed = [flag(m) for m in raw["dos_missed"]]
    game.dos_calls = [flag(m) for m in raw.get("dos_calls", [False] * count)]
    game.winner = seat(raw["winner"], allow_none=True)
    game.actions_played = natural(raw["actions_played"])
    # States stored before the counter existed start counting from 0: only its changes matter.
    game.turn_no = natural(raw.get("turn_no", 0))
    game._listed = None
    game._listed_seat = -1
    if (len(game.scores) != count or len(game.hands) != count
            or len(game.dos_missed) != count or len(game.dos_calls) != count):
        raise InvalidStateError(
            N_("scores, hands, dos_missed and dos_calls need one entry per player"))
    if game.options.printed_dos_rule:
        game._settle_exposure()  # a stored state is at rest: exposure follows from it (5.1)
    counts = [0] * len(ALL_CARDS)
    for card in _all_cards(game):
        counts[card.id] += 1
    if counts != _DECK_COUNTS:
        raise InvalidStateError(N_("the state does not hold exactly the 108 cards of a deck"))
    return game


def _deck_counts() -> list[int]:
    counts = [0] * len(ALL_CARDS)
    for card in new_deck():
        counts[card.id] += 1
    return counts


_DECK_COUNTS = _deck_counts()


def _all_cards(game: Game) -> list[Card]:
    out = [*game.draw_pile, *game.discard_pile, *game.center_row]
    for matched in game.cr_matched:
        if matched is not None:
            out.extend(matched)
    for hand in game.hands:
        out.extend(hand)
    return out


def _declaration_note(target: Card, cards: Sequence[Card], declaration: Declaration,
                      language: str | None) -> str:
    """What the engine declared the wild cards of a match as, for :meth:`Game.describe`:
    " (... as 7)", in ``language``."""
    t = translator(language)
    notes: list[str] = []
    if target.kind is CardKind.WILD_NUMBER:
        notes.append(t.gettext("the Wild # in the Center Row as {number}").format(
            number=declaration.target_number))
    if target.kind is CardKind.WILD_DOS:
        notes.append(t.gettext("the Wild DOS in the Center Row as {colour}").format(
            colour=colour_name(declaration.target_colour, language)))
    for card, number, colour in zip(cards, declaration.numbers, declaration.colours, strict=True):
        if card.kind is CardKind.WILD_NUMBER:
            notes.append(t.gettext("your {card} as {number}").format(
                card=card_name(card, language), number=number))
        elif card.kind is CardKind.WILD_DOS:
            notes.append(t.gettext("your Wild DOS as a {colour} 2").format(
                colour=colour_name(colour, language)))
    return " (" + ", ".join(notes) + ")" if notes else ""
