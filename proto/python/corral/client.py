"""A client for the corral daemon (proto/PROTOCOL.md), standard library only.

    from corral import Client
    with Client("/run/corral/corral.sock") as c:
        r = c.exec(argv=["python3", "-c", "print(1)"], on_stdout=print)
        r["verdict"], r["exit_code"], r["stdout"]

    with Client(path) as c:                           # a long-lived child, framed stdio
        s = c.open_session(["python3", "server.py"], framing="newline")
        s.write('{"ping": 1}')
        for message in s:                              # bytes, one per framed message
            ...
        s.close(); s.wait()                            # the session.ended params

    with Client(path) as c, c.exec_stream(argv=["make"]) as run:
        for stream, data in run:                      # ("stdout" | "stderr", bytes), as it comes
            ...
        run.result["exit_code"]                       # leaving the block early cancels the run

One background thread reads the socket and routes replies and notifications by call id
(sessions: by session id), so calls may overlap (e.g. cancel() from another thread while
exec() waits).
"""

from __future__ import annotations

import itertools
import json
import queue
import socket
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Type, Union

from .protocol import (INTERNAL_ERROR, INVALID_PARAMS, SESSION_NOTIFICATIONS, ConnectionLost,  # noqa: F401
                       CorralError, Json, OutputEvent, attach_params, chunk_bytes, exec_params, lost_session_end,
                       output_stream, result_of, session_params, write_params)
from .protocol import STREAM_CLOSE_TIMEOUT
from .protocol import *  # noqa: F401,F403  (the error codes, for `from corral.client import *`)
from .workspace import Workspace

BytesCallback = Optional[Callable[[bytes], None]]
EventCallback = Optional[Callable[[Json], None]]


class _Call:
    def __init__(self, on_stdout: BytesCallback = None, on_stderr: BytesCallback = None,
                 on_network: EventCallback = None, events: "Optional[queue.Queue[Optional[OutputEvent]]]" = None
                 ) -> None:
        self.done = threading.Event()
        self.reply: Optional[Json] = None
        self.on_stdout = on_stdout
        self.on_stderr = on_stderr
        self.on_network = on_network
        self.events = events  # exec_stream: (stream, bytes) as they come, then None
        self.execution_id: Optional[str] = None
        self.session: Optional[Session] = None  # session.open: the Session to register with the reply

    def finish(self, reply: Json) -> None:
        """The call's answer (or the lost connection's error): wakes wait() and, last, the
        stream's reader (so a reader that sees the end finds the reply set)."""
        self.reply = reply
        self.done.set()
        if self.events is not None:
            self.events.put(None)


class Session:
    """An open session (stdio or terminal) of this connection.

    Output arrives as bytes: to on_output(bytes) when given, else through iteration
    (`for chunk in session`, which ends with the session; stdio: one chunk per framed
    message). wait() returns the session.ended params. A stdio session opened with
    forward_stderr sends the child's stderr as it comes: to on_stderr(bytes) when given,
    else appended to `stderr`. In allowlist network mode each connection through the
    session's egress proxy, as it ends, goes to on_network(event dict) when given and is
    appended to `network`; messages the session refused to frame are kept in `refused`.
    A terminal in a workspace belongs to the workspace: `terminal` is its id there,
    `writer` whether this client may type (False after another took over), and detach()
    leaves it running."""

    def __init__(self, client: "Client", kind: str, on_output: BytesCallback = None, on_ended: EventCallback = None,
                 on_stderr: BytesCallback = None, on_network: EventCallback = None) -> None:
        self._client = client
        self.kind = kind
        self.id = None
        self.on_output = on_output
        self.on_ended = on_ended
        self.on_stderr = on_stderr
        self.on_network = on_network
        self.stderr = bytearray()
        self.network = []
        self.refused = []
        self.ended = None
        self.terminal = None   # a workspace's terminal: its id there
        self.workspace = None
        self.writer = True
        self.detached = False
        self._done = threading.Event()
        self._queue = queue.Queue()

    def write(self, data: Union[str, bytes]) -> Json:
        """Sends one message (stdio) or input bytes (terminal); str or bytes."""
        return self._client.call("session.write", write_params(self.id, data))

    def resize(self, rows: int, cols: int) -> Json:
        return self._client.call("session.resize", {"session": self.id, "rows": rows, "cols": cols})

    def close(self) -> Json:
        """Stdio: EOF on stdin, then the child's grace; terminal: cancelled."""
        return self._client.call("session.close", {"session": self.id})

    def detach(self) -> Json:
        """A workspace's terminal only: stop hearing it; it goes on in the workspace
        (Workspace.attach finds it again). Iteration ends; wait() returns None."""
        reply = self._client.call("session.detach", {"session": self.id})
        self._client._forget_session(self.id)
        self.detached = True
        self._queue.put(None)
        self._done.set()
        return reply

    def wait(self, timeout: Optional[float] = None) -> Json:
        if not self._done.wait(timeout):
            raise TimeoutError("session %s did not end within %s s" % (self.id, timeout))
        return self.ended

    def read(self, timeout: Optional[float] = None) -> Optional[bytes]:
        """The next chunk of output, or None once the session has ended."""
        try:
            item = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError("no output from session %s within %s s" % (self.id, timeout))
        if item is None:
            self._queue.put(None)  # later reads see the end too
        return item

    def __iter__(self):
        while True:
            item = self.read()
            if item is None:
                return
            yield item

    def _output(self, data):
        if self.on_output:
            self.on_output(data)
        else:
            self._queue.put(data)

    def _stderr(self, data):
        if self.on_stderr:
            self.on_stderr(data)
        else:
            self.stderr += data

    def _network(self, event):
        self.network.append(event)
        if self.on_network:
            self.on_network(event)

    def _opened(self, result):
        self.id = result.get("session")
        self.terminal = result.get("terminal")
        self.workspace = result.get("workspace")
        self.writer = result.get("writer", True)

    def _end(self, params):
        self.ended = params
        self._queue.put(None)
        self._done.set()
        if self.on_ended:
            self.on_ended(params)


class Execution:
    """A running exec: wait() for its result, or cancel() it."""

    def __init__(self, client: "Client", call_id: int, call: _Call) -> None:
        self._client = client
        self.id = call_id  # the exec call's id on this connection (what `cancel` names)
        self._call = call

    @property
    def execution_id(self) -> Optional[str]:
        """The daemon's id for the execution, once exec.started has arrived (else None)."""
        return self._call.execution_id

    def wait(self, timeout: Optional[float] = None) -> Json:
        """The result dict (PROTOCOL.md); CorralError if corral did not run it, TimeoutError
        when no answer came within `timeout` seconds (None: no bound)."""
        return self._client._wait(self._call, timeout)

    def cancel(self) -> Json:
        return self._client.cancel(self.id)


class ExecStream(Execution):
    """A running exec whose live output is read by iterating: Client.exec_stream.

        with client.exec_stream(argv=["sh", "-c", "echo out; echo err >&2"]) as run:
            for stream, data in run:          # ("stdout", b"out\n"), ("stderr", b"err\n")
                ...
        run.result                             # the result dict, as Client.exec returns it

    Iteration yields (stream, data) for each exec.output notification, in the order they
    arrived: stream is "stdout" or "stderr", data the exact bytes (never a character split
    across two pieces). Within one stream the pieces are in the program's order and,
    joined, are exactly what the result's `stdout`/`stderr` keep; between the two streams
    the order is the order the daemon read them. Iteration ends when the execution has
    ended (its result has arrived); an error answer (corral did not run it, or the
    connection was lost) is raised as CorralError from the iteration and from wait().
    `read(timeout)` is one step with a bound. Egress events (allowlist network mode) are
    appended to `network` as they come.

    `result` (blocking until the end) and `wait(timeout)` give the result at any time; the
    output not yet iterated stays readable. `cancel()` ends the execution (from any
    thread); the result's verdict is then "cancelled". As a context manager, leaving the
    block while the execution still runs (break, return, an exception) cancels it and waits
    at most `close_timeout` seconds for its end (a second cancel, which kills at once,
    after half of it): see close().

    A slow consumer: PROTOCOL.md gives exec output no flow control toward the client (unlike
    a stdio session's window): the daemon sends each piece as it reads it and disconnects a
    client once 16 MiB of its output waits unsent, which cancels its executions. So the
    client's reader thread never waits for this consumer: it moves every piece into this
    stream's queue in memory, which has no bound of its own. The program is not slowed by
    a slow consumer, and the connection's other calls go on; the queue holds at most what
    the daemon streams, which is never more than the output cap of each stream (`output_cap`,
    1 MiB each by default; the profile may raise it; past it the rest is dropped and the
    result's `*_truncated` / `*_dropped_bytes` say so). Events a consumer never reads are
    freed with this object."""

    #: Seconds close() (and leaving a `with` block early) waits for a cancelled execution.
    close_timeout: float = STREAM_CLOSE_TIMEOUT

    def __init__(self, client: "Client", call_id: int, call: _Call,
                 events: "queue.Queue[Optional[OutputEvent]]", network: List[Json]) -> None:
        super().__init__(client, call_id, call)
        self._events = events
        self.network = network  # allowlist network mode: each egress event, as it ended

    # -- the output --------------------------------------------------------------------
    def read(self, timeout: Optional[float] = None) -> Optional[OutputEvent]:
        """The next (stream, data), or None once the execution has ended (every later read
        too). Raises TimeoutError when nothing came within `timeout` seconds (None: no
        bound), CorralError at the end when the exec was answered with an error."""
        try:
            item = self._events.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError("no output from exec call %s within %s s" % (self.id, timeout)) from None
        if item is None:
            self._events.put(None)  # later reads see the end too
            assert self._call.reply is not None
            result_of(self._call.reply)  # an error answer is raised here
        return item

    def __iter__(self) -> "ExecStream":
        return self

    def __next__(self) -> OutputEvent:
        item = self.read()
        if item is None:
            raise StopIteration
        return item

    # -- the end -----------------------------------------------------------------------
    @property
    def done(self) -> bool:
        """Whether the execution has ended (its answer arrived), whatever is left to read."""
        return self._call.done.is_set()

    @property
    def result(self) -> Json:
        """The result dict (PROTOCOL.md), waiting without bound for the end: after the
        iteration it is there at once. wait(timeout) is the bounded form."""
        return self.wait()

    def cancel(self, timeout: Optional[float] = None) -> Json:
        """Cancels the execution: SIGTERM, then SIGKILL after the profile's grace (a second
        cancel kills at once). {"cancelled": True}; {"cancelled": False} when it had ended
        already. Safe from any thread. `timeout` bounds the wait for the daemon's answer."""
        try:
            return self._client.call("cancel", {"id": self.id}, timeout)
        except CorralError as e:
            # The daemon answers the exec before refusing a cancel of it, and the reader
            # handles lines in order: an ended execution is known to be done here.
            if e.code == INVALID_PARAMS and self.done:
                return {"cancelled": False}
            raise

    def close(self, timeout: Optional[float] = None) -> Json:
        """Ends the execution if it still runs and returns its result: cancel(), wait up to
        half of `timeout` (default close_timeout), then cancel again (killing at once) and
        wait for the rest. TimeoutError when it has not ended by then; CorralError when the
        exec was answered with an error. Output not yet read stays readable."""
        bound = self.close_timeout if timeout is None else timeout
        deadline = time.monotonic() + bound
        if not self.done:
            self.cancel(bound)
            if not self._call.done.wait(bound / 2):
                self.cancel(max(0.0, deadline - time.monotonic()))
                if not self._call.done.wait(max(0.0, deadline - time.monotonic())):
                    raise TimeoutError("exec call %s did not end within %s s of its cancel" % (self.id, bound))
        return self.wait(0)

    def __enter__(self) -> "ExecStream":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Any) -> None:
        if exc_type is None:
            if not self.done:
                self.close()
            return
        try:  # the block's own exception is the one to see
            self.close()
        except Exception:
            pass


class Client:
    def __init__(self, socket_path: str, connect_timeout: float = 10.0) -> None:
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(connect_timeout)
        self._sock.connect(socket_path)
        self._sock.settimeout(None)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        # sendall() of a long line may take several send()s: one line at a time, or two
        # threads' lines would interleave on the socket.
        self._send_lock = threading.Lock()
        self._calls: Dict[int, _Call] = {}
        self._sessions = {}
        self._lost = None
        self.connection_error = None
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    # -- life cycle -------------------------------------------------------------------
    def close(self):
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        self._reader.join(timeout=5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- methods ----------------------------------------------------------------------
    def exec(self, argv: Optional[Sequence[str]] = None, language: Optional[str] = None, code: Optional[str] = None,
             stdin: Union[str, bytes, None] = None, timeout: Optional[float] = None,
             on_stdout: BytesCallback = None, on_stderr: BytesCallback = None,
             wait_timeout: Optional[float] = None, on_network: EventCallback = None, **limits: Any) -> Json:
        """Runs one program and returns its result (a dict, see PROTOCOL.md).

        stdin may be str or bytes; on_stdout/on_stderr receive bytes as they arrive;
        on_network receives each egress connection's event (a dict) as it ends (allowlist
        network mode; the whole audit is also the result's `network`). Extra keyword
        arguments (memory_limit, output_cap, pids_limit, cpu_cores, env, tier,
        network_allow) pass through as exec params."""
        return self.exec_async(argv=argv, language=language, code=code, stdin=stdin, timeout=timeout,
                               on_stdout=on_stdout, on_stderr=on_stderr, on_network=on_network,
                               **limits).wait(wait_timeout)

    def exec_async(self, argv: Optional[Sequence[str]] = None, language: Optional[str] = None,
                   code: Optional[str] = None, stdin: Union[str, bytes, None] = None,
                   timeout: Optional[float] = None, on_stdout: BytesCallback = None,
                   on_stderr: BytesCallback = None, on_network: EventCallback = None,
                   **limits: Any) -> "Execution":
        """Starts an exec and returns its Execution at once (wait() for the result)."""
        params = exec_params(argv, language, code, stdin, timeout, bool(on_stdout or on_stderr or on_network),
                             limits)
        call = _Call(on_stdout, on_stderr, on_network)
        call_id = self._send("exec", params, call)
        return Execution(self, call_id, call)

    def exec_stream(self, argv: Optional[Sequence[str]] = None, language: Optional[str] = None,
                    code: Optional[str] = None, stdin: Union[str, bytes, None] = None,
                    timeout: Optional[float] = None, **limits: Any) -> ExecStream:
        """Starts an exec and returns its ExecStream at once: iterate it for the output,
        ("stdout" | "stderr", bytes) as it arrives, until the execution ends; then `result`.
        Leaving its `with` block early cancels the execution. Parameters as exec()'s
        (limits: memory_limit, output_cap, pids_limit, cpu_cores, env, tier, network_allow,
        workspace, cwd, ...). See ExecStream for what a slow consumer costs."""
        events: "queue.Queue[Optional[OutputEvent]]" = queue.Queue()
        network: List[Json] = []
        call = _Call(on_network=network.append, events=events)
        call_id = self._send("exec", exec_params(argv, language, code, stdin, timeout, True, limits), call)
        return ExecStream(self, call_id, call, events, network)

    def open_session(self, argv: Optional[Sequence[str]] = None, kind: str = "stdio",
                     on_output: BytesCallback = None, on_ended: EventCallback = None,
                     timeout: Optional[float] = None, on_stderr: BytesCallback = None,
                     on_network: EventCallback = None, **params: Any) -> Session:
        """Opens a session and returns its Session. kind: "stdio" or "terminal". Keyword
        arguments pass through as session.open params (env, tier, framing, rows, cols,
        echo, idle_timeout, lifetime, memory, pids, cpu, forward_stderr, network_allow);
        on_stderr implies forward_stderr=True."""
        params = session_params(argv, kind, on_stderr is not None, params)
        return self._open_session("session.open", params, Session(self, kind, on_output, on_ended, on_stderr, on_network),
                                  timeout)

    def attach_terminal(self, workspace: str, terminal: Optional[str] = None, writer: bool = True,
                        take_over: bool = False, on_output: BytesCallback = None, on_ended: EventCallback = None,
                        timeout: Optional[float] = None) -> Session:
        """Attaches to a terminal a workspace keeps (the latest when none is named): its
        scrollback comes first as output, then the terminal live. writer=False watches
        only; a writer attached elsewhere refuses another unless take_over."""
        return self._open_session("workspace.attach", attach_params(workspace, terminal, writer, take_over),
                                  Session(self, "terminal", on_output, on_ended), timeout)

    def _open_session(self, method: str, params: Json, session: Session, timeout: Optional[float]) -> Session:
        call = _Call()
        call.session = session
        self._send(method, params, call)
        self._wait(call, timeout)
        return session

    def _forget_session(self, session_id):
        with self._lock:
            self._sessions.pop(session_id, None)

    def create_workspace(self, name: Optional[str] = None, keep: bool = False, **options: Any) -> Workspace:
        """Makes a workspace (see corral.workspace). Options narrow the daemon's settings:
        idle_timeout, lifetime (seconds), memory_limit, pids_limit, cpu_cores, keep_files,
        from_snapshot (a snapshot id: the files start as it holds them).
        keep=True: leaving a `with` block does not end it."""
        if name is not None:
            options["name"] = name
        return Workspace(self, self.call("workspace.create", options), keep=keep)

    def workspace(self, ref: str) -> Workspace:
        """One of this uid's workspaces, by id or name (kept when a `with` block ends)."""
        return Workspace(self, self.call("workspace.inspect", {"workspace": ref}), keep=True)

    def list_workspaces(self) -> List[Json]:
        return self.call("workspace.list")["workspaces"]

    def list_snapshots(self) -> List[Json]:
        return self.call("snapshot.list")["snapshots"]

    def remove_snapshot(self, snapshot: str) -> Json:
        return self.call("snapshot.remove", {"snapshot": snapshot})

    def cancel(self, call_id: int) -> Json:
        """Cancels this connection's call `call_id` (an exec)."""
        return self.call("cancel", {"id": call_id})

    def capabilities(self) -> Json:
        """What this machine can enforce (as `corral doctor --json`)."""
        return self.call("capabilities")

    def describe(self) -> Json:
        """The daemon's frozen profile descriptor and its digest."""
        return self.call("describe")

    def health(self) -> Json:
        """Liveness and load: status, executions running and queued."""
        return self.call("health")

    def call(self, method: str, params: Optional[Json] = None, timeout: Optional[float] = None) -> Any:
        """Any method by name; its result, or CorralError."""
        call = _Call()
        self._send(method, params or {}, call)
        return self._wait(call, timeout)

    def send_raw(self, line: bytes) -> None:
        """Sends bytes as they are (tests of malformed input)."""
        with self._send_lock:
            self._sock.sendall(line)

    # -- plumbing ---------------------------------------------------------------------
    def _send(self, method, params, call):
        with self._lock:
            if self._lost:
                raise ConnectionLost(self._lost)
            call_id = next(self._ids)
            self._calls[call_id] = call
        line = json.dumps({"jsonrpc": "2.0", "id": call_id, "method": method, "params": params})
        with self._send_lock:
            self._sock.sendall(line.encode("utf-8") + b"\n")
        return call_id

    def _wait(self, call, timeout):
        if not call.done.wait(timeout):
            raise TimeoutError("no answer from the corral daemon within %s s" % timeout)
        return result_of(call.reply)

    def _read_loop(self):
        buf = b""
        why = "the daemon closed the connection"
        try:
            while True:
                data = self._sock.recv(65536)
                if not data:
                    break
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if line.strip():
                        self._dispatch(json.loads(line))
        except (OSError, ValueError) as e:
            why = str(e)
        if self.connection_error:
            why = self.connection_error.get("message", why)
        with self._lock:
            self._lost = why
            calls, self._calls = self._calls, {}
            sessions, self._sessions = self._sessions, {}
        for call in calls.values():
            call.finish({"error": {"code": INTERNAL_ERROR, "message": "connection lost: " + why}})
        for session in sessions.values():
            session._end(lost_session_end(session.id))

    def _dispatch(self, msg):
        method = msg.get("method")
        if method in SESSION_NOTIFICATIONS:
            params = msg.get("params", {})
            with self._lock:
                session = self._sessions.get(params.get("session"))
                if method == "session.ended":
                    self._sessions.pop(params.get("session"), None)
            if session is None:
                return
            if method == "session.output":
                session._output(chunk_bytes(params))
            elif method == "session.stderr":
                session._stderr(chunk_bytes(params))
            elif method == "session.network":
                session._network(params.get("event"))
            elif method == "session.refused":
                session.refused.append(params)
            elif method == "session.writer_lost":
                session.writer = False
            elif method == "session.ended":
                session._end(params)
            return
        if "method" in msg:
            params = msg.get("params", {})
            with self._lock:
                call = self._calls.get(params.get("id"))
            if call is None:
                return
            if msg["method"] == "exec.started":
                call.execution_id = params.get("execution_id")
            elif msg["method"] == "exec.output":
                stream = output_stream(params)
                data = chunk_bytes(params)
                if call.events is not None:
                    call.events.put((stream, data))
                fn = call.on_stdout if stream == "stdout" else call.on_stderr
                if fn:
                    fn(data)
            elif msg["method"] == "exec.network" and call.on_network:
                call.on_network(params.get("event"))
            return
        call_id = msg.get("id")
        with self._lock:
            call = self._calls.pop(call_id, None)
        if call is None and call_id is None and "error" in msg:
            # About the connection itself (refused, a line too long): kept as the reason
            # if the daemon then hangs up.
            self.connection_error = msg["error"]
            return
        if call is not None:
            if call.session is not None and "result" in msg:
                # Registered before any of its notifications is read (they follow the reply).
                call.session._opened(msg["result"])
                with self._lock:
                    self._sessions[call.session.id] = call.session
            call.finish(msg)
