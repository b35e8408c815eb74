"""What a replay records per request, in columns: a million requests are a few arrays,
not a million objects. Read as a mapping of request id to `RequestRecord` (a snapshot
built on access); written through the methods the step loop calls."""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

_NONE = -1  # an event that has not happened (steps and counts are never negative)
_NO_TIME = math.nan  # times are finite: inputs are bounded, steps last what a model says


@dataclass(slots=True)
class RequestRecord:
    arrival_step: int | None
    arrival_time: float | None = None
    first_scheduled_step: int | None = None
    first_token_step: int | None = None
    finish_step: int | None = None
    finish_reason: str | None = None
    num_preemptions: int = 0
    num_output_tokens: int = 0
    prompt_len: int = 0
    # wall clock only
    first_scheduled_time: float | None = None
    first_token_time: float | None = None
    finish_time: float | None = None

    def to_log_dict(self) -> dict[str, Any]:
        return {
            "arrival_step": self.arrival_step,
            "first_scheduled_step": self.first_scheduled_step,
            "first_token_step": self.first_token_step,
            "finish_step": self.finish_step,
            "finish_reason": self.finish_reason,
            "num_preemptions": self.num_preemptions,
            "num_output_tokens": self.num_output_tokens,
        }


def _step(value: int) -> int | None:
    return None if value == _NONE else value


def _time(value: float) -> float | None:
    return None if value != value else value  # NaN: not happened


class RequestTable(Mapping[str, RequestRecord]):
    """Per-request records in arrival order (the order requests were added)."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self._position: dict[str, int] | None = None  # made on the first look-up by id
        self.arrival_step = array("q")
        self.first_scheduled_step = array("q")
        self.first_token_step = array("q")
        self.finish_step = array("q")
        self.num_preemptions = array("q")
        self.num_output_tokens = array("q")
        self.prompt_len = array("q")
        self.finish_reason: list[str | None] = []
        # Wall clock only: made when the first time is recorded.
        self.times: tuple[array[float], array[float], array[float], array[float]] | None = None

    # ---- Mapping ------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)

    def __contains__(self, rid: object) -> bool:
        return rid in self._positions()

    def __getitem__(self, rid: str) -> RequestRecord:
        return self.record(self._positions()[rid])

    def position(self, rid: str) -> int:
        """Where request `rid` is (engines that hold the `Request` use its `record`)."""
        return self._positions()[rid]

    def _positions(self) -> dict[str, int]:
        if self._position is None:
            self._position = {rid: i for i, rid in enumerate(self.ids)}
        return self._position

    def record(self, i: int) -> RequestRecord:
        times = self.times
        arrival_time, scheduled_time, token_time, finish_time = (
            (_time(t[i]) for t in times) if times else (None, None, None, None)
        )
        return RequestRecord(
            arrival_step=_step(self.arrival_step[i]),
            arrival_time=arrival_time,
            first_scheduled_step=_step(self.first_scheduled_step[i]),
            first_token_step=_step(self.first_token_step[i]),
            finish_step=_step(self.finish_step[i]),
            finish_reason=self.finish_reason[i],
            num_preemptions=self.num_preemptions[i],
            num_output_tokens=self.num_output_tokens[i],
            prompt_len=self.prompt_len[i],
            first_scheduled_time=scheduled_time,
            first_token_time=token_time,
            finish_time=finish_time,
        )

    # ---- writing ------------------------------------------------------------------

    def add(
        self, rid: str, arrival_step: int | None, arrival_time: float | None, prompt_len: int
    ) -> int:
        """Add a request; returns its position."""
        i = len(self.ids)
        if self._position is not None:
            self._position[rid] = i
        self.ids.append(rid)
        self.arrival_step.append(_NONE if arrival_step is None else arrival_step)
        self.first_scheduled_step.append(_NONE)
        self.first_token_step.append(_NONE)
        self.finish_step.append(_NONE)
        self.num_preemptions.append(0)
        self.num_output_tokens.append(0)
        self.prompt_len.append(prompt_len)
        self.finish_reason.append(None)
        if self.times is not None:
            for times in self.times:
                times.append(_NO_TIME)
        if arrival_time is not None:
            self._times()[0][-1] = arrival_time
        return i

    def extend(
        self,
        rids: list[str],
        arrival_steps: array[int] | None,
        arrival_times: list[float | None] | None,
        prompt_lens: array[int],
    ) -> None:
        """`add` of many requests at once (`arrival_steps` None: none known yet)."""
        n = len(rids)
        if self._position is not None:
            start = len(self.ids)
            self._position.update(zip(rids, range(start, start + n), strict=True))
        self.ids.extend(rids)
        unknown = array("q", [_NONE]) * n
        self.arrival_step.extend(unknown if arrival_steps is None else arrival_steps)
        self.first_scheduled_step.extend(unknown)
        self.first_token_step.extend(unknown)
        self.finish_step.extend(unknown)
        zeros = array("q", bytes(8 * n))
        self.num_preemptions.extend(zeros)
        self.num_output_tokens.extend(zeros)
        self.prompt_len.extend(prompt_lens)
        self.finish_reason.extend([None] * n)
        known = [(i, t) for i, t in enumerate(arrival_times or ()) if t is not None]
        if self.times is not None:
            for times in self.times:
                times.extend(array("d", [_NO_TIME]) * n)
        if known:
            column = self._times()[0]
            first = len(self.ids) - n
            for i, t in known:
                column[first + i] = t

    def _times(self) -> tuple[array[float], array[float], array[float], array[float]]:
        if self.times is None:
            n = len(self.ids)
            self.times = (
                array("d", [_NO_TIME]) * n,
                array("d", [_NO_TIME]) * n,
                array("d", [_NO_TIME]) * n,
                array("d", [_NO_TIME]) * n,
            )
        return self.times

    # Writers take the request's position (`add`, `Request.record`).

    def set_arrival_step(self, i: int, step: int) -> None:
        self.arrival_step[i] = step

    def scheduled(self, i: int, step: int, start: float | None) -> None:
        """The first time only."""
        if self.first_scheduled_step[i] == _NONE:
            self.first_scheduled_step[i] = step
            if start is not None:
                self._times()[1][i] = start

    def sampled(self, i: int, step: int, end: float | None) -> None:
        """The first token only."""
        if self.first_token_step[i] == _NONE:
            self.first_token_step[i] = step
            if end is not None:
                self._times()[2][i] = end

    def finished(
        self, i: int, step: int, end: float | None, reason: str, num_output_tokens: int | None
    ) -> None:
        self.finish_step[i] = step
        self.finish_reason[i] = reason
        if end is not None:
            self._times()[3][i] = end
        elif self.times is not None:
            self.times[3][i] = _NO_TIME
        if num_output_tokens is not None:
            self.num_output_tokens[i] = num_output_tokens

    # The same for many requests in one step (the fast replay's admissions, samples and
    # finishes).

    def scheduled_all(self, positions: list[int], step: int, start: float | None) -> None:
        first = self.first_scheduled_step
        for i in positions:
            if first[i] == _NONE:
                first[i] = step
                if start is not None:
                    self._times()[1][i] = start

    def sampled_all(self, positions: list[int], step: int, end: float | None) -> None:
        first = self.first_token_step
        for i in positions:
            if first[i] == _NONE:
                first[i] = step
                if end is not None:
                    self._times()[2][i] = end

    def finished_all(
        self,
        positions: list[int],
        step: int,
        end: float | None,
        reason: str,
        num_output_tokens: list[int],
    ) -> None:
        if end is not None or self.times is not None:
            for i, n in zip(positions, num_output_tokens, strict=True):
                self.finished(i, step, end, reason, n)
            return
        finish, reasons, outputs = self.finish_step, self.finish_reason, self.num_output_tokens
        for i, n in zip(positions, num_output_tokens, strict=True):
            finish[i] = step
            reasons[i] = reason
            outputs[i] = n

    def set_output_tokens(self, i: int, n: int) -> None:
        self.num_output_tokens[i] = n

    def preempted(self, i: int) -> None:
        self.num_preemptions[i] += 1

    @classmethod
    def merged(cls, tables: Iterable[RequestTable]) -> RequestTable:
        """The tables one after the other (request ids are distinct across them)."""
        out = cls()
        for table in tables:
            for i in range(len(table)):
                r = table.record(i)
                j = out.add(table.ids[i], r.arrival_step, r.arrival_time, r.prompt_len)
                out.first_scheduled_step[j] = table.first_scheduled_step[i]
                out.first_token_step[j] = table.first_token_step[i]
                out.finish_step[j] = table.finish_step[i]
                out.num_preemptions[j] = table.num_preemptions[i]
                out.num_output_tokens[j] = table.num_output_tokens[i]
                out.finish_reason[j] = table.finish_reason[i]
                if table.times is not None:
                    for mine, theirs in zip(out._times(), table.times, strict=True):
                        mine[j] = theirs[i]
        return out

    # ---- reading by column ----------------------------------------------------------

    def finished_positions(self) -> Iterator[int]:
        finish = self.finish_step
        return (i for i in range(len(finish)) if finish[i] != _NONE)

    def steps_since_arrival(self, column: array[int]) -> Iterator[int]:
        """`column - arrival_step` of finished requests, where both happened."""
        arrival, finish = self.arrival_step, self.finish_step
        for i in range(len(column)):
            value, start = column[i], arrival[i]
            if finish[i] != _NONE and value != _NONE and start != _NONE:
                yield value - start
