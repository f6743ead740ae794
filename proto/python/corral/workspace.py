"""Workspaces (proto/PROTOCOL.md, "Workspaces"): a directory in the daemon that outlives each
exec. Every exec in it sees its files at /work, so what one installs the next finds.

    with Client(path) as c:
        with c.create_workspace(name="build", idle_timeout=600) as ws:
            ws.write("main.py", "print('hi')\\n")
            ws.exec(["python3", "main.py"])["stdout"]          # 'hi\\n'
            ws.exec(["pip", "install", "--target", "/work/lib", "six"])
            [c["path"] for c in ws.changes()]                  # what the execs left
        # leaving the block ends it (keep=True keeps it for another connection)

A workspace belongs to the caller's uid, not to the connection: Client.workspace(name)
finds it again from another connection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, List, Optional, Sequence, Tuple, Union

from .protocol import Json, chunk_bytes, put_bytes

if TYPE_CHECKING:  # pragma: no cover
    from .client import Client

# The most one call carries of a file; bigger files move in pieces.
PIECE = 4 << 20


def write_calls(path: str, data: Union[str, bytes], mode: int, parents: bool) -> Iterator[Tuple[str, Json]]:
    """The calls that put `data` at `path`: one write (renamed into place whole), then an
    append per further piece. Shared by Workspace and AsyncWorkspace."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    first: Json = {"path": path, "mode": mode, "parents": parents}
    put_bytes(first, "data", raw[:PIECE])
    yield "workspace.files.write", first
    for at in range(PIECE, len(raw), PIECE):
        more: Json = {"path": path}
        put_bytes(more, "data", raw[at:at + PIECE])
        yield "workspace.files.append", more


def read_piece(reply: Json) -> Tuple[bytes, bool]:
    """One workspace.files.read answer: its bytes, and whether the file ends there."""
    piece = chunk_bytes(reply)
    return piece, bool(reply.get("eof", True)) or not piece


class Workspace:
    def __init__(self, client: "Client", info: Json, keep: bool = False) -> None:
        self._client = client
        self.info = info
        self.id: str = info["workspace"]
        self.name: str = info.get("name", "")
        self.keep = keep  # leaving a `with` block ends it unless this is set

    def __enter__(self) -> "Workspace":
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self.keep:
            self.end()

    def _call(self, method: str, **params: Any) -> Any:
        return self._client.call(method, dict(params, workspace=self.id))

    # -- running --------------------------------------------------------------------------
    def exec(self, argv: Optional[Sequence[str]] = None, **kwargs: Any) -> Json:
        """Client.exec with this workspace's files at /work (the working directory)."""
        return self._client.exec(argv, workspace=self.id, **kwargs)

    # -- files ----------------------------------------------------------------------------
    def read(self, path: str) -> bytes:
        """The whole file (relative to /work, or under /work)."""
        out = bytearray()
        while True:
            piece, last = read_piece(self._call("workspace.files.read", path=path, offset=len(out)))
            out += piece
            if last:
                return bytes(out)

    def write(self, path: str, data: Union[str, bytes], mode: int = 0o644, parents: bool = False) -> Json:
        """Replaces the file with `data` (the first piece is renamed into place whole; a
        bigger file's later pieces are appended). Returns its entry."""
        entry: Json = {}
        for method, params in write_calls(path, data, mode, parents):
            entry = self._call(method, **params)
        return entry

    def list(self, path: str = ".", depth: int = 1) -> List[Json]:
        """Entries below `path`: path, name, type, size, mode, mtime (symlink_target)."""
        return self._call("workspace.files.list", path=path, depth=depth)["entries"]

    def stat(self, path: str) -> Json:
        return self._call("workspace.files.stat", path=path)

    def mkdir(self, path: str, parents: bool = False, mode: int = 0o755) -> Json:
        return self._call("workspace.files.mkdir", path=path, parents=parents, mode=mode)

    def remove(self, path: str, recursive: bool = False) -> None:
        self._call("workspace.files.remove", path=path, recursive=recursive)

    def move(self, source: str, target: str) -> Json:
        return self._call("workspace.files.move", **{"from": source, "to": target})

    # -- changes --------------------------------------------------------------------------
    def mark(self, label: str) -> str:
        """Remembers the files as they are now, for changes(since=label)."""
        return self._call("workspace.mark", label=label)["mark"]

    def changes(self, since: str = "creation") -> List[Json]:
        """Added, modified and removed entries since the mark (each with its sha256)."""
        return self._call("workspace.changes", since=since)["changes"]

    # -- snapshots --------------------------------------------------------------------------
    def snapshot(self) -> Json:
        """Archives the files between execs (background processes frozen meanwhile):
        {snapshot, digest, bytes, ...}.
        Client.create_workspace(from_snapshot=...) starts a workspace from it."""
        return self._call("workspace.snapshot")

    # -- processes ------------------------------------------------------------------------
    def ps(self) -> List[Json]:
        """The processes living in it (exec(..., leave_running=True) left them): pid as seen
        inside, ppid, state, started_at, command."""
        return self._call("workspace.ps")["processes"]

    def kill(self, pid: int, signal: Union[int, str] = "TERM") -> None:
        """Signals one of them by its pid inside (a number or a name: TERM, KILL, INT...)."""
        self._call("workspace.kill", pid=pid, signal=signal)

    def pause(self) -> Json:
        """Freezes everything in it; nothing new starts until resume(). Files stay readable."""
        self.info = self._call("workspace.pause")
        return self.info

    def resume(self) -> Json:
        self.info = self._call("workspace.resume")
        return self.info

    # -- terminals ------------------------------------------------------------------------
    def terminal(self, argv: Optional[Sequence[str]] = None, **kwargs: Any) -> Any:
        """Opens a terminal in it (default /bin/sh): a Session that belongs to the workspace,
        so it outlives this connection; detach() leaves it running. Keyword arguments as
        Client.open_session's (rows, cols, echo, env, on_output...)."""
        return self._client.open_session(argv, kind="terminal", workspace=self.id, **kwargs)

    def terminals(self) -> List[Json]:
        """The terminals it keeps: terminal (id), argv, started_at, viewers, writer."""
        return self._call("workspace.terminals")["terminals"]

    def attach(self, terminal: Optional[str] = None, writer: bool = True, take_over: bool = False,
               **kwargs: Any) -> Any:
        """Attaches to one of its terminals (the latest when none is named): scrollback
        first, then live. See Client.attach_terminal."""
        return self._client.attach_terminal(self.id, terminal, writer, take_over, **kwargs)

    # -- life -----------------------------------------------------------------------------
    def inspect(self) -> Json:
        self.info = self._call("workspace.inspect")
        return self.info

    def end(self, keep_files: bool = False) -> Json:
        """Ends it (refused while an exec runs in it); its files go unless keep_files."""
        return self._call("workspace.end", keep_files=keep_files)


class AsyncWorkspace:
    """Workspace for AsyncClient: the same methods, awaited (async with ends it unless kept)."""

    def __init__(self, client: Any, info: Json, keep: bool = False) -> None:
        self._client = client
        self.info = info
        self.id: str = info["workspace"]
        self.name: str = info.get("name", "")
        self.keep = keep

    async def __aenter__(self) -> "AsyncWorkspace":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if not self.keep:
            await self.end()

    async def _call(self, method: str, **params: Any) -> Any:
        return await self._client.call(method, dict(params, workspace=self.id))

    async def exec(self, argv: Optional[Sequence[str]] = None, **kwargs: Any) -> Json:
        return await self._client.exec(argv, workspace=self.id, **kwargs)

    async def read(self, path: str) -> bytes:
        out = bytearray()
        while True:
            piece, last = read_piece(await self._call("workspace.files.read", path=path, offset=len(out)))
            out += piece
            if last:
                return bytes(out)

    async def write(self, path: str, data: Union[str, bytes], mode: int = 0o644, parents: bool = False) -> Json:
        entry: Json = {}
        for method, params in write_calls(path, data, mode, parents):
            entry = await self._call(method, **params)
        return entry

    async def list(self, path: str = ".", depth: int = 1) -> List[Json]:
        return (await self._call("workspace.files.list", path=path, depth=depth))["entries"]

    async def stat(self, path: str) -> Json:
        return await self._call("workspace.files.stat", path=path)

    async def mkdir(self, path: str, parents: bool = False, mode: int = 0o755) -> Json:
        return await self._call("workspace.files.mkdir", path=path, parents=parents, mode=mode)

    async def remove(self, path: str, recursive: bool = False) -> None:
        await self._call("workspace.files.remove", path=path, recursive=recursive)

    async def move(self, source: str, target: str) -> Json:
        return await self._call("workspace.files.move", **{"from": source, "to": target})

    async def mark(self, label: str) -> str:
        return (await self._call("workspace.mark", label=label))["mark"]

    async def changes(self, since: str = "creation") -> List[Json]:
        return (await self._call("workspace.changes", since=since))["changes"]

    async def snapshot(self) -> Json:
        return await self._call("workspace.snapshot")

    async def ps(self) -> List[Json]:
        return (await self._call("workspace.ps"))["processes"]

    async def kill(self, pid: int, signal: Union[int, str] = "TERM") -> None:
        await self._call("workspace.kill", pid=pid, signal=signal)

    async def pause(self) -> Json:
        self.info = await self._call("workspace.pause")
        return self.info

    async def resume(self) -> Json:
        self.info = await self._call("workspace.resume")
        return self.info

    async def terminal(self, argv: Optional[Sequence[str]] = None, **kwargs: Any) -> Any:
        return await self._client.open_session(argv, kind="terminal", workspace=self.id, **kwargs)

    async def terminals(self) -> List[Json]:
        return (await self._call("workspace.terminals"))["terminals"]

    async def attach(self, terminal: Optional[str] = None, writer: bool = True, take_over: bool = False,
                     **kwargs: Any) -> Any:
        return await self._client.attach_terminal(self.id, terminal, writer, take_over, **kwargs)

    async def inspect(self) -> Json:
        self.info = await self._call("workspace.inspect")
        return self.info

    async def end(self, keep_files: bool = False) -> Json:
        return await self._call("workspace.end", keep_files=keep_files)
