"""The asyncio client for the corral daemon: the same methods as corral.Client, awaited.

    import asyncio, corral

    async def main():
        async with await corral.AsyncClient.connect("/run/corral/corral.sock") as c:
            r = await c.exec(argv=["python3", "-c", "print(1)"], on_stdout=print)
            async with c.exec_stream(argv=["sh", "-c", "echo a; echo b >&2"]) as run:
                async for stream, data in run:        # ("stdout", b"a\\n"), ("stderr", b"b\\n")
                    ...
            (await run.wait())["exit_code"]           # leaving the block early cancels the run
            s = await c.open_session(["python3", "server.py"], framing="newline")
            await s.write('{"ping": 1}')
            async for message in s:                   # bytes, one per framed message
                ...
            await s.close(); await s.wait()

One reader task routes replies and notifications by call id (sessions: by session id),
so calls may overlap on one connection. Callbacks may be plain functions or coroutine
functions.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
from typing import (Any, AsyncIterator, Awaitable, Callable, Dict, Generator, List, Optional, Sequence, Tuple, Type,
                    Union)

from .protocol import (INTERNAL_ERROR, INVALID_PARAMS, SESSION_NOTIFICATIONS, STREAM_CLOSE_TIMEOUT, ConnectionLost,
                       CorralError, Json, OutputEvent, attach_params, chunk_bytes, exec_params, lost_session_end,
                       output_stream, result_of, session_params, write_params)
from .workspace import AsyncWorkspace

Callback = Optional[Callable[[Any], Union[None, Awaitable[None]]]]

# A line longer than this from the daemon is a broken stream (its own cap is 1 MiB of
# output per notification, base64 included).
_LINE_LIMIT = 64 * 1024 * 1024


async def _call_back(fn: Callback, value: Any) -> None:
    if fn is None:
        return
    result = fn(value)
    if inspect.isawaitable(result):
        await result


class _Call:
    def __init__(self, on_stdout: Callback = None, on_stderr: Callback = None, on_network: Callback = None,
                 events: Optional[asyncio.Queue] = None) -> None:
        self.reply: asyncio.Future = asyncio.get_running_loop().create_future()
        self.on_stdout = on_stdout
        self.on_stderr = on_stderr
        self.on_network = on_network
        self.events = events  # exec_stream, exec_events: every notification, then ("reply", the answer)
        self.execution_id: Optional[str] = None
        self.session: Optional[AsyncSession] = None


class AsyncSession:
    """An open session (stdio or terminal): output as bytes through iteration or
    on_output, wait() for the session.ended params. A workspace's terminal: `terminal`,
    `writer` and detach() as in corral.client.Session."""

    def __init__(self, client: "AsyncClient", kind: str, on_output: Callback = None, on_ended: Callback = None,
                 on_stderr: Callback = None, on_network: Callback = None) -> None:
        self._client = client
        self.kind = kind
        self.id: Optional[str] = None
        self.on_output = on_output
        self.on_ended = on_ended
        self.on_stderr = on_stderr
        self.on_network = on_network
        self.stderr = bytearray()
        self.network: list = []
        self.refused: list = []
        self.ended: Optional[Json] = None
        self.terminal: Optional[str] = None
        self.workspace: Optional[str] = None
        self.writer = True
        self.detached = False
        self._done = asyncio.Event()
        self._queue: asyncio.Queue = asyncio.Queue()

    async def write(self, data: Union[str, bytes]) -> Json:
        """Sends one message (stdio) or input bytes (terminal); str or bytes."""
        return await self._client.call("session.write", write_params(self.id, data))

    async def resize(self, rows: int, cols: int) -> Json:
        return await self._client.call("session.resize", {"session": self.id, "rows": rows, "cols": cols})

    async def close(self) -> Json:
        """Stdio: EOF on stdin, then the child's grace; terminal: cancelled."""
        return await self._client.call("session.close", {"session": self.id})

    async def detach(self) -> Json:
        """A workspace's terminal only: it goes on without this client; iteration ends and
        wait() returns None."""
        reply = await self._client.call("session.detach", {"session": self.id})
        self._client._sessions.pop(self.id, None)
        self.detached = True
        self._queue.put_nowait(None)
        self._done.set()
        return reply

    async def wait(self, timeout: Optional[float] = None) -> Optional[Json]:
        await asyncio.wait_for(self._done.wait(), timeout)
        assert self.ended is not None or self.detached
        return self.ended

    async def read(self, timeout: Optional[float] = None) -> Optional[bytes]:
        """The next chunk of output, or None once the session has ended."""
        item = await asyncio.wait_for(self._queue.get(), timeout)
        if item is None:
            self._queue.put_nowait(None)  # later reads see the end too
        return item

    def __aiter__(self) -> "AsyncSession":
        return self

    async def __anext__(self) -> bytes:
        item = await self.read()
        if item is None:
            raise StopAsyncIteration
        return item

    async def _output(self, data: bytes) -> None:
        if self.on_output:
            await _call_back(self.on_output, data)
        else:
            self._queue.put_nowait(data)

    async def _stderr(self, data: bytes) -> None:
        if self.on_stderr:
            await _call_back(self.on_stderr, data)
        else:
            self.stderr += data

    def _opened(self, result: Json) -> None:
        self.id = result.get("session")
        self.terminal = result.get("terminal")
        self.workspace = result.get("workspace")
        self.writer = result.get("writer", True)

    async def _end(self, params: Json) -> None:
        self.ended = params
        self._queue.put_nowait(None)
        self._done.set()
        await _call_back(self.on_ended, params)


class AsyncExecution:
    """A running exec: await wait() for its result, or cancel() it."""

    def __init__(self, client: "AsyncClient", call_id: int, call: _Call) -> None:
        self._client = client
        self.id = call_id
        self._call = call

    @property
    def execution_id(self) -> Optional[str]:
        return self._call.execution_id

    async def wait(self, timeout: Optional[float] = None) -> Json:
        return result_of(await asyncio.wait_for(asyncio.shield(self._call.reply), timeout))

    async def cancel(self) -> Json:
        return await self._client.cancel(self.id)


class AsyncExecStream(AsyncExecution):
    """A running exec whose live output is read with `async for`: AsyncClient.exec_stream.

        async with client.exec_stream(argv=["sh", "-c", "echo out; echo err >&2"]) as run:
            async for stream, data in run:    # ("stdout", b"out\\n"), ("stderr", b"err\\n")
                ...
        (await run.wait())["exit_code"]

    The same semantics as corral.client.ExecStream: (stream, data) per exec.output, in
    arrival order, ending when the execution has ended (an error answer is raised as
    CorralError); `await wait(timeout)` for the result at any time (`result` is it once
    ended, else None); `await cancel()` from any task; `async with` cancels an execution
    still running when the block is left (break, return, an exception, the task being
    cancelled) and waits at most `close_timeout` seconds for its end (see close()). The exec
    is sent when exec_stream() is called; `s = await client.exec_stream(...)` also works and
    waits until the request is handed to the transport.

    A slow consumer: exec output has no flow control toward the client (PROTOCOL.md; the
    daemon disconnects a client once 16 MiB of its output waits unsent). The client's
    reader task therefore never waits for this consumer: it puts every piece into this
    stream's unbounded asyncio.Queue. The program is not slowed, the connection's other
    calls go on, and the queue holds at most what the daemon streams: never more than each
    stream's output cap (`output_cap`, 1 MiB by default; the profile may raise it; the
    result's `*_truncated` / `*_dropped_bytes` tell what was dropped past it)."""

    #: Seconds close() (and leaving an `async with` block early) waits for a cancelled execution.
    close_timeout: float = STREAM_CLOSE_TIMEOUT

    def __init__(self, client: "AsyncClient", call_id: int, call: _Call, network: List[Json]) -> None:
        super().__init__(client, call_id, call)
        assert call.events is not None
        self._events: asyncio.Queue = call.events
        self.network = network  # allowlist network mode: each egress event, as it ended

    def __await__(self) -> Generator[Any, None, "AsyncExecStream"]:
        return self._drained().__await__()

    async def _drained(self) -> "AsyncExecStream":
        await self._client._writer.drain()
        return self

    # -- the output --------------------------------------------------------------------
    async def read(self, timeout: Optional[float] = None) -> Optional[OutputEvent]:
        """The next (stream, data), or None once the execution has ended (every later read
        too). asyncio.TimeoutError when nothing came within `timeout` seconds (None: no
        bound); CorralError at the end when the exec was answered with an error."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - loop.time())
            kind, value = await asyncio.wait_for(self._events.get(), left)
            if kind == "reply":
                self._events.put_nowait((kind, value))  # later reads see the end too
                result_of(value)  # an error answer is raised here
                return None
            if kind in ("stdout", "stderr"):
                return kind, value
            # "started" and "network": execution_id and `network` have them already.

    def __aiter__(self) -> "AsyncExecStream":
        return self

    async def __anext__(self) -> OutputEvent:
        item = await self.read()
        if item is None:
            raise StopAsyncIteration
        return item

    # -- the end -----------------------------------------------------------------------
    @property
    def done(self) -> bool:
        """Whether the execution has ended (its answer arrived), whatever is left to read."""
        return self._call.reply.done()

    @property
    def result(self) -> Optional[Json]:
        """The result dict once the execution has ended, else None (await wait() for it);
        CorralError when the exec was answered with an error."""
        return result_of(self._call.reply.result()) if self.done else None

    async def cancel(self, timeout: Optional[float] = None) -> Json:
        """Cancels the execution: SIGTERM, then SIGKILL after the profile's grace (a second
        cancel kills at once). {"cancelled": True}; {"cancelled": False} when it had ended
        already. `timeout` bounds the wait for the daemon's answer."""
        try:
            return await self._client.call("cancel", {"id": self.id}, timeout)
        except CorralError as e:
            # The daemon answers the exec before refusing a cancel of it, and the reader
            # handles lines in order: an ended execution is known to be done here.
            if e.code == INVALID_PARAMS and self.done:
                return {"cancelled": False}
            raise

    async def close(self, timeout: Optional[float] = None) -> Json:
        """Ends the execution if it still runs and returns its result: cancel(), wait up to
        half of `timeout` (default close_timeout), then cancel again (killing at once) and
        wait for the rest. asyncio.TimeoutError when it has not ended by then; CorralError
        when the exec was answered with an error. Output not yet read stays readable."""
        bound = self.close_timeout if timeout is None else timeout
        loop = asyncio.get_running_loop()
        deadline = loop.time() + bound
        if not self.done:
            await self.cancel(bound)
            try:
                return await self.wait(bound / 2)
            except asyncio.TimeoutError:
                pass
            await self.cancel(max(0.0, deadline - loop.time()))
            return await self.wait(max(0.0, deadline - loop.time()))
        return result_of(self._call.reply.result())

    async def __aenter__(self) -> "AsyncExecStream":
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                        tb: Any) -> None:
        if exc_type is None:
            if not self.done:
                await self.close()
            return
        try:  # the block's own exception is the one to see
            await self.close()
        except Exception:
            pass


class AsyncClient:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._ids = itertools.count(1)
        self._calls: Dict[int, _Call] = {}
        self._sessions: Dict[Any, AsyncSession] = {}
        self._lost: Optional[str] = None
        self.connection_error: Optional[Json] = None
        self._task = asyncio.get_running_loop().create_task(self._read_loop())

    @classmethod
    async def connect(cls, socket_path: str, connect_timeout: float = 10.0) -> "AsyncClient":
        reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(socket_path, limit=_LINE_LIMIT),
                                                connect_timeout)
        return cls(reader, writer)

    async def close(self) -> None:
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except OSError:
            pass
        try:
            await asyncio.wait_for(self._task, 5)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            self._task.cancel()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    # -- methods ----------------------------------------------------------------------
    async def exec(self, argv: Optional[Sequence[str]] = None, language: Optional[str] = None,
                   code: Optional[str] = None, stdin: Union[str, bytes, None] = None,
                   timeout: Optional[float] = None, on_stdout: Callback = None, on_stderr: Callback = None,
                   on_network: Callback = None, wait_timeout: Optional[float] = None, **limits: Any) -> Json:
        """Runs one program and returns its result (a dict, see PROTOCOL.md); the callbacks
        receive stdout/stderr bytes and egress events as they arrive."""
        execution = await self.exec_async(argv, language, code, stdin, timeout, on_stdout, on_stderr,
                                          on_network, **limits)
        return await execution.wait(wait_timeout)

    async def exec_async(self, argv: Optional[Sequence[str]] = None, language: Optional[str] = None,
                         code: Optional[str] = None, stdin: Union[str, bytes, None] = None,
                         timeout: Optional[float] = None, on_stdout: Callback = None, on_stderr: Callback = None,
                         on_network: Callback = None, **limits: Any) -> AsyncExecution:
        params = exec_params(argv, language, code, stdin, timeout, bool(on_stdout or on_stderr or on_network),
                             limits)
        call = _Call(on_stdout, on_stderr, on_network)
        call_id = await self._send("exec", params, call)
        return AsyncExecution(self, call_id, call)

    def exec_stream(self, argv: Optional[Sequence[str]] = None, language: Optional[str] = None,
                    code: Optional[str] = None, stdin: Union[str, bytes, None] = None,
                    timeout: Optional[float] = None, **limits: Any) -> AsyncExecStream:
        """Starts an exec now and returns its AsyncExecStream (no await needed, though
        `await` works too): `async for stream, data in ...` yields ("stdout" | "stderr",
        bytes) as it arrives until the execution ends; then `await s.wait()`. Leaving its
        `async with` block early cancels the execution. Parameters as exec()'s. Must be
        called with the client's event loop running. See AsyncExecStream for what a slow
        consumer costs."""
        network: List[Json] = []
        call = _Call(on_network=network.append, events=asyncio.Queue())
        call_id = self._send_now("exec", exec_params(argv, language, code, stdin, timeout, True, limits), call)
        return AsyncExecStream(self, call_id, call, network)

    async def exec_events(self, argv: Optional[Sequence[str]] = None, language: Optional[str] = None,
                          code: Optional[str] = None, stdin: Union[str, bytes, None] = None,
                          timeout: Optional[float] = None, **limits: Any) -> AsyncIterator[Tuple[str, Any]]:
        """Runs one program and yields every event as it comes: ("started", execution_id),
        ("stdout", bytes), ("stderr", bytes), ("network", event), then ("result", dict).
        An error reply is raised as CorralError. (This is what exec_stream used to yield;
        exec_stream now yields only the output, and the result comes from wait().)"""
        events: asyncio.Queue = asyncio.Queue()
        call = _Call(events=events)
        await self._send("exec", exec_params(argv, language, code, stdin, timeout, True, limits), call)
        while True:
            kind, value = await events.get()
            if kind == "reply":
                yield "result", result_of(value)
                return
            yield kind, value

    async def open_session(self, argv: Optional[Sequence[str]] = None, kind: str = "stdio",
                           on_output: Callback = None, on_ended: Callback = None, timeout: Optional[float] = None,
                           on_stderr: Callback = None, on_network: Callback = None, **params: Any) -> AsyncSession:
        """Opens a session and returns it. kind: "stdio" or "terminal"; keyword arguments
        pass through as session.open params (env, tier, framing, rows, cols, echo,
        idle_timeout, lifetime, memory, pids, cpu, network_allow)."""
        return await self._open_session("session.open", session_params(argv, kind, on_stderr is not None, params),
                                        AsyncSession(self, kind, on_output, on_ended, on_stderr, on_network), timeout)

    async def attach_terminal(self, workspace: str, terminal: Optional[str] = None, writer: bool = True,
                              take_over: bool = False, on_output: Callback = None, on_ended: Callback = None,
                              timeout: Optional[float] = None) -> AsyncSession:
        """Client.attach_terminal, awaited."""
        return await self._open_session("workspace.attach", attach_params(workspace, terminal, writer, take_over),
                                        AsyncSession(self, "terminal", on_output, on_ended), timeout)

    async def _open_session(self, method: str, params: Json, session: AsyncSession,
                            timeout: Optional[float]) -> AsyncSession:
        call = _Call()
        call.session = session
        await self._send(method, params, call)
        result_of(await asyncio.wait_for(asyncio.shield(call.reply), timeout))
        return session

    async def create_workspace(self, name: Optional[str] = None, keep: bool = False, **options: Any) -> AsyncWorkspace:
        """Client.create_workspace, awaited (see corral.workspace)."""
        if name is not None:
            options["name"] = name
        return AsyncWorkspace(self, await self.call("workspace.create", options), keep=keep)

    async def workspace(self, ref: str) -> AsyncWorkspace:
        return AsyncWorkspace(self, await self.call("workspace.inspect", {"workspace": ref}), keep=True)

    async def list_workspaces(self) -> List[Json]:
        return (await self.call("workspace.list"))["workspaces"]

    async def list_snapshots(self) -> List[Json]:
        return (await self.call("snapshot.list"))["snapshots"]

    async def remove_snapshot(self, snapshot: str) -> Json:
        return await self.call("snapshot.remove", {"snapshot": snapshot})

    async def cancel(self, call_id: int) -> Json:
        return await self.call("cancel", {"id": call_id})

    async def capabilities(self) -> Json:
        return await self.call("capabilities")

    async def describe(self) -> Json:
        return await self.call("describe")

    async def health(self) -> Json:
        return await self.call("health")

    async def call(self, method: str, params: Optional[Json] = None, timeout: Optional[float] = None) -> Any:
        """Any method by name; its result, or CorralError."""
        call = _Call()
        await self._send(method, params or {}, call)
        return result_of(await asyncio.wait_for(asyncio.shield(call.reply), timeout))

    # -- plumbing ---------------------------------------------------------------------
    async def _send(self, method: str, params: Json, call: _Call) -> int:
        call_id = self._send_now(method, params, call)
        await self._writer.drain()
        return call_id

    def _send_now(self, method: str, params: Json, call: _Call) -> int:
        """Registers the call and hands its line to the transport (which buffers it)."""
        if self._lost:
            raise ConnectionLost(self._lost)
        call_id = next(self._ids)
        self._calls[call_id] = call
        line = json.dumps({"jsonrpc": "2.0", "id": call_id, "method": method, "params": params})
        self._writer.write(line.encode("utf-8") + b"\n")
        return call_id

    async def _read_loop(self) -> None:
        why = "the daemon closed the connection"
        try:
            while True:
                line = await self._reader.readline()
                if not line:
                    break
                if line.strip():
                    await self._dispatch(json.loads(line))
        except (OSError, ValueError, asyncio.LimitOverrunError) as e:
            why = str(e)
        if self.connection_error:
            why = self.connection_error.get("message", why)
        self._lost = why
        calls, self._calls = self._calls, {}
        sessions, self._sessions = self._sessions, {}
        for call in calls.values():
            self._finish(call, {"error": {"code": INTERNAL_ERROR, "message": "connection lost: " + why}})
        for session in sessions.values():
            await session._end(lost_session_end(session.id))

    def _finish(self, call: _Call, reply: Json) -> None:
        if not call.reply.done():
            call.reply.set_result(reply)
        if call.events is not None:
            call.events.put_nowait(("reply", reply))

    async def _dispatch(self, msg: Json) -> None:
        method = msg.get("method")
        params = msg.get("params", {})
        if method in SESSION_NOTIFICATIONS:
            session = self._sessions.get(params.get("session"))
            if method == "session.ended":
                self._sessions.pop(params.get("session"), None)
            if session is None:
                return
            if method == "session.output":
                await session._output(chunk_bytes(params))
            elif method == "session.stderr":
                await session._stderr(chunk_bytes(params))
            elif method == "session.network":
                session.network.append(params.get("event"))
                await _call_back(session.on_network, params.get("event"))
            elif method == "session.refused":
                session.refused.append(params)
            elif method == "session.writer_lost":
                session.writer = False
            elif method == "session.ended":
                await session._end(params)
            return
        if method is not None:
            call = self._calls.get(params.get("id"))
            if call is None:
                return
            if method == "exec.started":
                call.execution_id = params.get("execution_id")
                if call.events is not None:
                    call.events.put_nowait(("started", call.execution_id))
            elif method == "exec.output":
                stream = output_stream(params)
                data = chunk_bytes(params)
                if call.events is not None:
                    call.events.put_nowait((stream, data))
                await _call_back(call.on_stdout if stream == "stdout" else call.on_stderr, data)
            elif method == "exec.network":
                if call.events is not None:
                    call.events.put_nowait(("network", params.get("event")))
                await _call_back(call.on_network, params.get("event"))
            return
        call_id = msg.get("id")
        call = self._calls.pop(call_id, None) if call_id is not None else None
        if call is None and call_id is None and "error" in msg:
            # About the connection itself (refused, a line too long): kept as the reason
            # if the daemon then hangs up.
            self.connection_error = msg["error"]
            return
        if call is None:
            return
        if call.session is not None and "result" in msg:
            # Registered before any of its notifications is read (they follow the reply).
            call.session._opened(msg["result"])
            self._sessions[call.session.id] = call.session
        self._finish(call, msg)
