"""core/backoff.py: the ledger of the run's bets and the patience of one bet, exactly."""

from wormhole_ns3.core.backoff import JUDGED_FLOW_EVENTS, RECORDED_FLOW_EVENTS, Ledger, Patience


def test_a_losing_bet_is_made_at_every_chance_until_its_patience_runs_out_then_ever_more_rarely():
    patience = Patience(patience=3, max_wait=4)
    taken = []
    for chance in range(30):
        if patience.due(backing_off=True):
            taken.append(chance)
            patience.lost(backing_off=True)
    # three losses in a row, then waits of 1, 2, 4 and 4 chances
    assert taken == [0, 1, 2, 4, 7, 12, 17, 22, 27]
    assert patience.passed == 30 - len(taken)


def test_only_the_first_wait_is_reported_as_a_back_off_starting():
    patience = Patience(patience=2, max_wait=8)
    assert [patience.lost(backing_off=True) for _ in range(5)] == [False, True, False, False, False]
    assert patience.wait == 8


def test_while_the_shortcuts_pay_every_chance_is_taken_and_no_wait_is_set():
    patience = Patience(patience=1, max_wait=8)
    assert not any(patience.lost(backing_off=False) for _ in range(10))
    assert patience.wait == 0 and all(patience.due(backing_off=False) for _ in range(10))
    assert patience.passed == 0


def test_a_win_starts_the_patience_afresh():
    patience = Patience(patience=2, max_wait=8)
    for _ in range(4):
        patience.lost(backing_off=True)
    patience.won()
    assert (patience.losses, patience.wait, patience.waiting) == (0, 0, 0)
    assert patience.due(backing_off=True)


def test_the_ledger_counts_bets_in_event_equivalents_and_pays_once_the_shortcuts_saved_as_much():
    ledger = Ledger()
    ledger.judged(4)
    ledger.judged(2)
    ledger.recorded(3)
    spent = 6 * JUDGED_FLOW_EVENTS + 3 * RECORDED_FLOW_EVENTS
    assert ledger.spent == spent and (ledger.judgements, ledger.judged_flows, ledger.recorded_flows) == (2, 6, 3)
    assert not ledger.pays(int(spent) - 1) and ledger.pays(int(spent))
    assert ledger.words(7).startswith(f"the run's bets cost {spent:,.0f} event equivalents (2 judgements of 6 flows")
    assert ledger.words(7).endswith("against 7 events its shortcuts avoided")
