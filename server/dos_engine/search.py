"""A searching bot: determinized Monte Carlo over whole turns, from what its seat can see.

``SearchStrategy`` is a strategy like the others, a function ``(view, legal_actions) -> action``.
It reads nothing but the :class:`~dos_engine.game.View` (and the legal actions, which the view
also holds), so it plays only on what its seat may know. Each decision:

1. Trivial choices are made at once: the one legal action; ``dos`` (calling DOS only protects);
   ``catch`` (the caught player draws two); a seat that is not to move can only catch.
2. **Determinizations.** The unseen cards are the 108 of a deck less the seat's hand and the
   cards lying in the Center Row (with those matched onto it this turn). A determinization deals
   them at random into the other hands (their sizes are public), the draw pile and the discard
   pile (their sizes are public), and rebuilds the turn in progress from the view (phase, drawn
   card, matched CR cards, placements left, DOS flags). Every sample is consistent with the view;
   the view does not show the discard pile's contents, so the bot does not use them either.
   The first sample's legal actions must equal the view's, or the bot plays the keeping policy
   (below) without searching: it never searches a position it has misread.
3. **Candidate turns.** From the current position the bot lists whole turns -- sequences of
   actions played on copies until the turn ends, or until a ``draw`` (what comes after a draw is
   decided once the card is seen). Matches are taken in increasing CR position (any set of
   matches can be made in that order, 3.3), placements as combinations, and the branching is
   capped by ranking each step's choices with the keeping score (below).
4. **Evaluation.** Each candidate is played on determinizations and the round is played out:
   the other seats by a fast greedy policy (what ``greedy`` plays), the bot's own seat (its
   rest of turn after a draw, too) by the *keeping* policy, greedy that spends its wild cards
   last (a Wild # matches any number card and a Wild DOS makes a 2 or part of a sum, so kept to
   the end they take the hand out; greedy sheds them first as its highest-point cards). The value
   is the round's score swing for the bot (its gain less the others' mean gain, in hundreds of
   points) and a bonus or penalty when the round ends the game. All candidates meet the same
   determinizations (common random numbers), and successive halving spends the playout budget
   on the better half, round after round.

Deterministic: the random generator is seeded from the strategy's seed, its budget and the view
alone, so the same (seed, level, view) always gives the same action (bot games replay), and two
positions that differ only in what the seat cannot see give the same action.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dos_engine.actions import Action, Add, CallDos, Catch, Draw, End, Match, Place
from dos_engine.cards import ALL_CARDS, Card, CardKind, new_deck
from dos_engine.errors import DosError
from dos_engine.game import Game, Phase, View
from dos_engine.matching import Bonus, declare_match


@dataclass(frozen=True, slots=True)
class Level:
    """A strength level: the playouts one decision may spend, and how wide the turn list is."""

    name: str
    playouts: int
    max_candidates: int
    max_round_actions: int = 600  # a playout stops after this many actions (a very long round)


LEVELS: dict[str, Level] = {
    # Few candidates, many deals each: the first halving must compare candidates on enough
    # deals (the budget spread over 24 candidates gave each one deal, and the choice was
    # nearly random in 4-player games).
    "search-1": Level("search-1", playouts=96, max_candidates=6),
    "search-2": Level("search-2", playouts=480, max_candidates=12),
    "search-3": Level("search-3", playouts=1600, max_candidates=20),
}
DEFAULT_LEVEL = "search-2"

_BONUS_WEIGHT = {Bonus.NONE: 0, Bonus.SINGLE_COLOUR: 30, Bonus.DOUBLE_COLOUR: 60}
# The value of a round that ends the game, on top of its score swing (in hundreds of points).
_GAME_END_VALUE = 2.0
# How many of the best-ranked choices each step of a turn keeps (deeper steps keep fewer).
_MATCH_WIDTH = (6, 3, 2, 1)
_PLACE_WIDTH = 4
_ADD_WIDTH = 8
# action_score of a match by (CR card id, hand card ids), read as digits of base _KEYS (a
# single has _SINGLE for its second card): at most 41 * 41 * 42 entries.
_SINGLE = len(ALL_CARDS)
_KEYS = _SINGLE + 1
_MATCH_SCORES: dict[int, int] = {}
# The keeping score's cost of spending a wild card while more than one card stays in hand, by
# card id: a match with a Wild # ranks below every other match (above a draw), a Wild DOS
# below most; an add or a placement sheds every number card first. Measured as a policy in
# 4-player games to 200 (one seat against three greedy, 4000 games): greedy wins 24.6%, the
# Wild # costs alone 29.8%, with the Wild DOS costs 36.0%; a Wild DOS match cost of 80 gave
# 32.4%, and a Wild # cost above a match's score (ending the turn rather than spend it) 26.7%.
_SPEND_COST = tuple(
    990 if card.kind is CardKind.WILD_NUMBER else 45 if card.kind is CardKind.WILD_DOS else 0
    for card in ALL_CARDS
)
_SHED_COST = tuple(
    100 if card.kind is CardKind.WILD_NUMBER else 30 if card.kind is CardKind.WILD_DOS else 0
    for card in ALL_CARDS
)


class SearchStrategy:
    """Determinized Monte Carlo search over whole turns; see the module docstring."""

    def __init__(self, seed: int | str = 0, level: str | Level = DEFAULT_LEVEL) -> None:
        self.seed = str(seed)
        self.level = level if isinstance(level, Level) else LEVELS[level]

    def __call__(self, view: View, legal: Sequence[Action]) -> Action:
        return choose(view, legal, self.level, self.seed)


def make_search(level: str) -> Any:
    """A factory ``seed -> strategy`` for ``level`` (for ``strategies.STRATEGIES``)."""
    found = LEVELS[level]
    return lambda seed: SearchStrategy(seed, found)


# -- the decision -----------------------------------------------------------------------------


def choose(view: View, legal: Sequence[Action], level: Level, seed: str) -> Action:
    """The search's action for ``view`` (``legal`` are its legal actions)."""
    if not legal:
        raise ValueError("there is no legal action to choose from")
    if len(legal) == 1:
        return legal[0]
    for action in legal:
        if isinstance(action, CallDos):
            return action
    catches = [action for action in legal if isinstance(action, Catch)]
    if catches:
        return catches[0]
    seat = view.seat
    if seat is None or not view.my_turn:
        return legal[0]
    rng = random.Random(_seed_material(view, level, seed))
    try:
        base = determinize(view, rng)
    except (DosError, ValueError, KeyError, TypeError):
        return _fallback(view, legal)
    if set(base.legal_actions(seat)) != set(legal):
        return _fallback(view, legal)
    candidates = candidate_turns(base, seat, level.max_candidates)
    if len(candidates) == 1:
        return candidates[0][0]
    worlds = [base]
    best = _successive_halving(view, candidates, worlds, rng, level)
    return candidates[best][0]


def _seed_material(view: View, level: Level, seed: str) -> str:
    public = repr(sorted(view.to_dict().items()))
    digest = hashlib.sha256(f"{seed}|{level.name}|{level.playouts}|{public}".encode()).hexdigest()
    return digest


def _fallback(view: View, legal: Sequence[Action]) -> Action:
    """The keeping policy's choice (the search does not play a position it could not rebuild)."""
    return _keeping_choice([slot.card for slot in view.center_row], legal, len(view.hand or ()))


def _successive_halving(
    view: View,
    candidates: list[tuple[Action, ...]],
    worlds: list[Game],
    rng: random.Random,
    level: Level,
) -> int:
    """Spend the playouts over the candidates, keeping the better half each round.

    Every survivor meets the same deals (common random numbers), so they are compared on equal
    terms; ties go to the better-ranked candidate (the keeping policy's turn is candidate 0).

    Measured (bench/bots.py, heads-up rounds against greedy): keeping the greedy turn as a
    reference that a challenger had to beat by a standard error, on the same or on fresh deals,
    made the bot no better than greedy; plain halving is what beats it.
    """
    seat = view.seat
    assert seat is not None
    alive = list(range(len(candidates)))
    totals = [0.0] * len(candidates)
    rounds = max(1, (len(candidates) - 1).bit_length())  # halvings down to one
    per_round = max(1, level.playouts // rounds)
    used = 0  # deals so far: every survivor has met all of them
    while len(alive) > 1:
        fresh = max(1, per_round // len(alive))
        while len(worlds) < used + fresh:
            worlds.append(determinize(view, rng))
        for world in worlds[used:used + fresh]:
            for index in alive:
                totals[index] += evaluate(world, candidates[index], seat, level)
        used += fresh
        alive.sort(key=lambda i: (-totals[i], i))  # equal counts: totals rank like means
        alive = alive[: (len(alive) + 1) // 2]
    return alive[0]


# -- determinizations -------------------------------------------------------------------------


def unseen_cards(view: View) -> list[Card]:
    """The cards ``view``'s seat cannot see, as one sorted list (a deck less hand and CR)."""
    if view.hand is None:
        raise ValueError("a spectator's view has no hand to search from")
    counts: dict[Card, int] = {}
    for card in new_deck():
        counts[card] = counts.get(card, 0) + 1
    seen: list[Card] = list(view.hand)
    for slot in view.center_row:
        seen.append(slot.card)
        if slot.matched_with is not None:
            seen.extend(slot.matched_with)
    for card in seen:
        counts[card] -= 1
        if counts[card] < 0:
            raise ValueError(f"the view shows more {card.code} than a deck holds")
    return sorted((card for card, n in counts.items() for _ in range(n)), key=lambda c: c.id)


def determinize(view: View, rng: random.Random) -> Game:
    """A whole game state that looks exactly like ``view`` to its seat, hidden cards sampled.

    Built from a fresh game's serialized state (so fields this module does not know keep their
    defaults) with everything the view shows put in, and the unseen cards dealt at random.
    """
    seat = view.seat
    if seat is None or view.hand is None:
        raise ValueError("a spectator's view cannot be searched")
    hidden = unseen_cards(view)
    rng.shuffle(hidden)
    count = len(view.players)
    hands: list[list[str]] = []
    taken = 0
    for other in range(count):
        if other == seat:
            hands.append([card.code for card in view.hand])
            continue
        size = view.hand_sizes[other]
        hands.append([card.code for card in hidden[taken:taken + size]])
        taken += size
    draw = hidden[taken:taken + view.draw_pile_size]
    taken += view.draw_pile_size
    discard = hidden[taken:]
    if len(draw) != view.draw_pile_size or len(discard) != view.discard_pile_size:
        raise ValueError("the view's pile sizes do not add up to the unseen cards")
    matched = [slot for slot in view.center_row if slot.matched_with is not None]
    bonuses = sum(
        1
        for slot in matched
        if slot.matched_with is not None
        and (found := declare_match(slot.card, slot.matched_with)) is not None
        and found.bonus is not Bonus.NONE
    )
    phase = view.phase
    added = (
        phase is Phase.DRAWN
        and not matched
        and not any(isinstance(action, Add) for action in view.legal_actions)
    )
    raw = Game.new(list(view.players), "determinization", view.options).to_dict()
    raw.update(
        {
            "seed": f"determinization:{rng.getrandbits(64):x}",
            "scores": list(view.scores),
            "round": view.round,
            "dealer": view.dealer,
            "current": view.current,
            "hands": hands,
            "draw_pile": [card.code for card in draw],
            "discard_pile": [card.code for card in discard],
            "center_row": [slot.to_dict() for slot in view.center_row],
            "reshuffles": 0,
            "dos_missed": list(view.dos_missed),
            "dos_calls": list(view.dos_calls),  # public: who called DOS (printed rule)
            "winner": None,
            "actions_played": 0,
        }
    )
    turn = dict(raw["turn"])
    turn.update(
        {
            "drawn": None if view.drawn is None else view.drawn.code,
            "has_drawn": phase is Phase.DRAWN,
            "matches": len(matched),
            "added": added,
            "bonuses": view.placements_left if phase is Phase.BONUS else bonuses,
            "bonus_phase": phase is Phase.BONUS,
            "placements_left": view.placements_left,
            "called_dos": view.dos_called,
            "penalty": view.dos_penalty,
        }
    )
    raw["turn"] = turn
    return Game.from_dict(raw)


# -- candidate turns --------------------------------------------------------------------------


def _turn_over(game: Game, seat: int, round_no: int) -> bool:
    return game.is_over or game.current != seat or game.round_no != round_no


def candidate_turns(game: Game, seat: int, limit: int) -> list[tuple[Action, ...]]:
    """Whole turns from ``game`` (``seat`` to move), best-ranked first, at most ``limit``.

    A turn stops at its end or right after a ``draw``. The first candidate is the keeping
    policy's turn. Every first step the search follows gets that policy's completion first (the
    choice made now is the first step: the next decision searches again), then the other
    completions fill the list.
    """
    out: list[tuple[Action, ...]] = []
    seen: set[tuple[Action, ...]] = set()
    round_no = game.round_no

    def visit(node: Game, prefix: tuple[Action, ...], after: int, below: int, wide: bool) -> None:
        if len(out) >= limit:
            return
        if prefix and (_turn_over(node, seat, round_no) or isinstance(prefix[-1], Draw)):
            if prefix not in seen:
                seen.add(prefix)
                out.append(prefix)
            return
        choices = _ranked_choices(node, seat, after, below, len(prefix))
        if not choices:  # nothing the search follows (cannot happen in a legal position)
            if prefix not in seen:
                seen.add(prefix)
                out.append(prefix)
            return
        if prefix and not wide:
            choices = choices[:1]
        for action in choices:
            child = node.copy()
            child.play(action, seat)
            visit(
                child,
                (*prefix, action),
                action.position if isinstance(action, Match) else after,
                action.card.id if isinstance(action, Place) else below,
                wide,
            )
            if len(out) >= limit:
                return

    visit(game, (), 0, 1 << 30, False)
    visit(game, (), 0, 1 << 30, True)
    return out


def _ranked_choices(game: Game, seat: int, after: int, below: int, depth: int) -> list[Action]:
    """The choices a turn's step keeps: matches on CR cards right of ``after`` (any set of
    matches can be made left to right), placements of cards with ids at most ``below`` (a set
    of placements is listed once), the best-ranked few of each."""
    legal = game.legal_actions(seat)
    forced: list[Action] = [a for a in legal if isinstance(a, CallDos)]
    if forced:
        return forced
    matches: list[Action] = []
    places: list[Action] = []
    adds: list[Action] = []
    rest: list[Action] = []
    for action in legal:
        if isinstance(action, Match):
            if action.position > after:
                matches.append(action)
        elif isinstance(action, Place):
            if action.card.id <= below:
                places.append(action)
        elif isinstance(action, Add):
            adds.append(action)
        elif isinstance(action, (Draw, End)):
            rest.append(action)
    score = _scorer(game, seat)
    matches.sort(key=score, reverse=True)
    places.sort(key=score, reverse=True)
    adds.sort(key=score, reverse=True)
    width = _MATCH_WIDTH[min(depth, len(_MATCH_WIDTH) - 1)]
    ranked = matches[:width] + places[:_PLACE_WIDTH] + adds[:_ADD_WIDTH] + rest
    ranked.sort(key=score, reverse=True)
    return ranked


def _scorer(game: Game, seat: int) -> Any:
    row = game.center_row
    held = len(game.hands[seat])

    def score(action: Action) -> int:
        return keep_score(row, action, held)

    return score


def action_score(row: Sequence[Card], action: Action) -> int:
    """The greedy bot's ranking of ``action``, from the Center Row's cards alone (no view), so
    that playouts need not build views; ``strategies.greedy`` ranks with it too."""
    if isinstance(action, CallDos):
        return 10_000
    if isinstance(action, Catch):
        return 9_000
    if isinstance(action, Match):
        target = row[action.position - 1]
        cards = action.cards
        # One int per (target, cards): no generator nor tuple per call of a playout's step
        key = (target.id * _KEYS + cards[0].id) * _KEYS + (cards[1].id if len(cards) == 2
                                                            else _SINGLE)
        found = _MATCH_SCORES.get(key)
        if found is None:  # declare_match is the costly part of a playout: once per card set
            declaration = declare_match(target, action.cards)
            bonus = declaration.bonus if declaration else Bonus.NONE
            found = (1_000 + _BONUS_WEIGHT[bonus] + 10 * len(action.cards)
                     + sum(c.points for c in action.cards))
            _MATCH_SCORES[key] = found
        return found
    if isinstance(action, Place):
        return 500 + action.card.points
    if isinstance(action, Add):
        return 100 + action.card.points
    if isinstance(action, Draw):
        return 10
    return 0


def keep_score(row: Sequence[Card], action: Action, held: int) -> int:
    """``action_score`` less the cost of spending a wild card (``_SPEND_COST``, ``_SHED_COST``)
    while more than one card would stay in a hand of ``held`` cards: the keeping policy."""
    score = action_score(row, action)
    if isinstance(action, Match):
        if held > len(action.cards) + 1:
            for card in action.cards:
                score -= _SPEND_COST[card.id]
    elif isinstance(action, (Add, Place)) and held > 1:
        score -= _SHED_COST[action.card.id]
    return score


# -- playouts ---------------------------------------------------------------------------------


def rollout_action(game: Game) -> Action:
    """Greedy for the player to move, without building a view: the other seats' playout policy."""
    legal = game.legal_actions()
    row = game.center_row
    best = legal[0]
    best_score = -1
    for action in legal:
        value = action_score(row, action)
        if value > best_score:
            best, best_score = action, value
    return best


def keeping_action(game: Game) -> Action:
    """The keeping policy of the search's own seat in playouts, for the player to move."""
    return _keeping_choice(game.center_row, game.legal_actions(), len(game.hands[game.current]))


def _keeping_choice(row: Sequence[Card], legal: Sequence[Action], held: int) -> Action:
    """The first of ``legal`` with the best keeping score, for a hand of ``held`` cards."""
    return max(legal, key=lambda action: keep_score(row, action, held))


def evaluate(world: Game, turn: Sequence[Action], seat: int, level: Level) -> float:
    """Play ``turn`` then the rest of the round on a copy of ``world``; the value for ``seat``."""
    game = world.copy()
    before = list(game.scores)
    round_no = game.round_no
    for action in turn:
        if _turn_over(game, seat, round_no):
            break
        try:
            game.play(action, seat)
        except DosError:
            break
    steps = 0
    while not game.is_over and game.round_no == round_no and steps < level.max_round_actions:
        game.play(keeping_action(game) if game.current == seat else rollout_action(game))
        steps += 1
    gains = [after - start for after, start in zip(game.scores, before, strict=True)]
    others = [gain for other, gain in enumerate(gains) if other != seat]
    value = (gains[seat] - sum(others) / len(others)) / 100.0
    if game.winner is not None:
        value += _GAME_END_VALUE if game.winner == seat else -_GAME_END_VALUE
    return value


__all__ = [
    "DEFAULT_LEVEL",
    "LEVELS",
    "Level",
    "SearchStrategy",
    "action_score",
    "candidate_turns",
    "choose",
    "determinize",
    "evaluate",
    "keep_score",
    "keeping_action",
    "make_search",
    "rollout_action",
    "unseen_cards",
]
