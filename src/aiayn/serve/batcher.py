"""Dynamic batching: requests that arrive within a short wait are translated as one batch.

Each request's texts keep their own future, so a request only ever receives its own results.
With `max_pending`, a request that finds that many others waiting or being translated is refused
at once (`BusyError`, the server's 503) instead of queueing behind them for ever.
The model runs in one worker thread, off the event loop; load it there too (`model_thread()`).
PyTorch's CPU kernels run on an OpenMP thread team that belongs to the thread calling them, so
a model loaded in the main thread and run in the worker leaves two teams competing for the
cores: on 2 cores a 20-word beam-4 request took 230-260 ms instead of 80 ms.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

Translate = Callable[[list[str], int, int], list[list]]  # texts, beam, nbest -> n best per text
R = TypeVar("R")


def model_thread() -> ThreadPoolExecutor:
    """One worker thread for the model: load the model with it, then give it to the batcher."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="aiayn-model")


class BusyError(RuntimeError):
    """As many requests as the batcher's `max_pending` are already waiting."""


@dataclass
class Pending:
    texts: list[str]
    beam: int
    nbest: int
    future: asyncio.Future = field(repr=False)


class DynamicBatcher:
    """Collects requests for up to `wait_ms` (or `max_texts` texts), then translates each group
    of requests with the same search options in one call; at most `max_pending` requests wait
    (0: no cap)."""

    def __init__(
        self,
        translate: Translate,
        max_texts: int = 64,
        wait_ms: float = 5.0,
        executor: ThreadPoolExecutor | None = None,
        max_pending: int = 0,
    ) -> None:
        self.translate = translate
        self.max_texts = max_texts
        self.wait = wait_ms / 1000
        self.queue: asyncio.Queue[Pending] = asyncio.Queue()
        self.executor = executor or model_thread()  # the one thread that runs the model
        self.task: asyncio.Task | None = None
        self.batches = 0  # model calls made, for tests and metrics
        self.max_pending = max_pending
        self.pending = 0  # requests submitted and not yet answered

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
        self.executor.shutdown(wait=False, cancel_futures=True)

    async def submit(self, texts: list[str], beam: int, nbest: int) -> list[list]:
        if self.max_pending and self.pending >= self.max_pending:
            raise BusyError(f"{self.pending} requests are already waiting")
        self.pending += 1
        try:
            future = asyncio.get_running_loop().create_future()
            await self.queue.put(Pending(texts, beam, nbest, future))
            return await future
        finally:
            self.pending -= 1

    async def in_model_thread(self, fn: Callable[..., R], *args) -> R:
        """Run `fn` in the model's one worker thread, between batches, off the event loop."""
        return await asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)

    async def _collect(self) -> list[Pending]:
        batch = [await self.queue.get()]
        deadline = asyncio.get_running_loop().time() + self.wait
        while sum(len(p.texts) for p in batch) < self.max_texts:
            timeout = deadline - asyncio.get_running_loop().time()
            if timeout <= 0:
                break
            try:
                batch.append(await asyncio.wait_for(self.queue.get(), timeout))
            except TimeoutError:
                break
        return batch

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            batch = await self._collect()
            groups: dict[tuple[int, int], list[Pending]] = {}
            for p in batch:
                groups.setdefault((p.beam, p.nbest), []).append(p)
            for (beam, nbest), members in groups.items():
                texts = [t for p in members for t in p.texts]
                try:
                    results = await loop.run_in_executor(
                        self.executor, self.translate, texts, beam, nbest
                    )
                except Exception as err:
                    await self._one_by_one(members, err)
                    continue
                self.batches += 1
                start = 0
                for p in members:  # each request gets exactly its own slice
                    if not p.future.done():
                        p.future.set_result(results[start : start + len(p.texts)])
                    start += len(p.texts)

    async def _one_by_one(self, members: list[Pending], err: Exception) -> None:
        """A batch failed: translate its requests one at a time, so that only the request that
        caused the failure hears of it. The shortest go first: a text that ran past the time
        budget (most likely a long one) then holds the model after the others are answered."""
        loop = asyncio.get_running_loop()
        for p in sorted(members, key=lambda p: sum(len(t) for t in p.texts)):
            if p.future.done():
                continue
            if len(members) == 1:
                p.future.set_exception(err)
                continue
            try:
                result = await loop.run_in_executor(
                    self.executor, self.translate, p.texts, p.beam, p.nbest
                )
            except Exception as own:
                p.future.set_exception(own)
            else:
                self.batches += 1
                p.future.set_result(result)
