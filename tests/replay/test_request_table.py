"""Per-request records in columns: read as a mapping of snapshots, written by position."""

from __future__ import annotations

from llmsched.replay.request_table import RequestRecord, RequestTable


def _table() -> RequestTable:
    table = RequestTable()
    assert table.add("a", 0, None, 10) == 0
    assert table.add("b", 3, None, 20) == 1
    return table


def test_events_written_by_position_read_back_by_id() -> None:
    table = _table()
    table.scheduled(1, 4, None)
    table.scheduled(1, 9, None)  # only the first scheduling counts
    table.sampled(1, 5, None)
    table.sampled(1, 6, None)  # only the first token counts
    table.preempted(1)
    table.finished(1, 12, None, "length", 7)
    assert list(table) == ["a", "b"] and len(table) == 2 and "b" in table
    assert table["b"] == RequestRecord(
        arrival_step=3,
        first_scheduled_step=4,
        first_token_step=5,
        finish_step=12,
        finish_reason="length",
        num_preemptions=1,
        num_output_tokens=7,
        prompt_len=20,
    )
    assert table["a"] == RequestRecord(arrival_step=0, prompt_len=10)  # nothing happened
    assert table.get("zzz") is None


def test_an_id_added_after_a_lookup_is_found() -> None:
    table = _table()
    assert table.position("b") == 1
    table.add("c", 5, None, 30)
    assert table.position("c") == 2 and table["c"].arrival_step == 5


def test_times_appear_with_the_first_time_recorded() -> None:
    table = _table()
    assert table.times is None
    table.add("w", None, 1.5, 8)
    table.scheduled(2, 0, 1.5)
    table.sampled(2, 0, 1.75)
    table.finished(2, 3, 2.5, "length", 4)
    w = table["w"]
    assert (w.arrival_time, w.first_scheduled_time, w.first_token_time, w.finish_time) == (
        1.5, 1.5, 1.75, 2.5,
    )  # fmt: skip
    assert w.arrival_step is None
    assert table["a"].arrival_time is None and table["a"].finish_time is None


def test_merged_tables_keep_every_record_in_order() -> None:
    first, second = _table(), RequestTable()
    first.finished(0, 2, None, "length", 3)
    second.add("z", None, 4.0, 5)
    second.finished(0, 1, 4.5, "ignored", 0)
    merged = RequestTable.merged([first, second])
    assert list(merged) == ["a", "b", "z"]
    assert dict(merged) == {**dict(first), **dict(second)}
