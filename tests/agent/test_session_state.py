"""``SessionState.to_json``/``from_json``: the one object every runtime saves, written as a snapshot
that shares nothing with the live state (a runtime compares what it wrote last with what it reads
back, and the application and capabilities edit their dicts in place)."""

from __future__ import annotations

from agcore.agent import SessionState, TurnState
from agcore.llm.types import UserMessage


def _state() -> SessionState:
    state = SessionState(created_at=100.0, turn_index=3, started=True, last_model=("openai", "m"))
    state.always_confirmed.add("write_file")
    state.follow_ups.append(UserMessage(content="and then?"))
    state.app_state["plan"] = {"step": 2, "done": [0, 1]}
    state.turn = TurnState(start=4, model_calls=2)
    state.turn.capabilities["mine"] = {"seen": [1]}
    return state


def test_a_running_turn_round_trips_when_asked_for_and_is_left_out_otherwise() -> None:
    state = _state()
    data = state.to_json(running_turn=True)
    loaded = SessionState.from_json(data, history_length=10)
    assert loaded.to_json(running_turn=True) == data
    assert loaded.turn is not None
    assert loaded.turn.capabilities == {"mine": {"seen": [1]}}
    assert loaded.follow_ups[0].content == "and then?"
    assert loaded.always_confirmed == {"write_file"}
    assert state.to_json()["turn"] is None  # a store saving mid-turn leaves the running turn out


def test_the_written_data_is_a_snapshot_of_app_state_and_capability_state() -> None:
    state = _state()
    data = state.to_json(running_turn=True)
    state.app_state["plan"]["done"].append(2)
    assert state.turn is not None
    state.turn.capabilities["mine"]["seen"].append(2)
    assert data["app_state"] == {"plan": {"step": 2, "done": [0, 1]}}
    assert data["turn"]["capabilities"] == {"mine": {"seen": [1]}}


def test_loading_does_not_share_the_callers_data() -> None:
    data = _state().to_json(running_turn=True)
    loaded = SessionState.from_json(data, history_length=10)
    loaded.app_state["plan"]["done"].append(9)
    assert data["app_state"]["plan"]["done"] == [0, 1]


def test_an_empty_state_writes_empty_containers_of_its_own() -> None:
    state = SessionState(created_at=1.0)
    first, second = state.to_json(), state.to_json()
    assert first == second
    assert first["app_state"] == {}
    assert first["app_state"] is not second["app_state"]
