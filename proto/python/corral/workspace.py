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

from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Union

from .protocol import Json, chunk_bytes, put_bytes

if TYPE_CHECKING:  # pragma: no cover
    from .client import Client

# The most one call carries of a file; bigger files move in pieces.
PIECE = 4 << 20


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
            r = self._call("workspace.files.read", path=path, offset=len(out))
            piece = chunk_bytes(r)
            out += piece
            if r.get("eof", True) or not piece:
                return bytes(out)

    def write(self, path: str, data: Union[str, bytes], mode: int = 0o644, parents: bool = False) -> Json:
        """Replaces the file with `data` (the first piece is renamed into place whole; a
        bigger file's later pieces are appended). Returns its entry."""
        raw = data.encode("utf-8") if isinstance(data, str) else data
        params: Json = {"path": path, "mode": mode, "parents": parents}
        put_bytes(params, "data", raw[:PIECE])
        entry = self._call("workspace.files.write", **params)
        for at in range(PIECE, len(raw), PIECE):
            more: Json = {"path": path}
            put_bytes(more, "data", raw[at:at + PIECE])
            entry = self._call("workspace.files.append", **more)
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

    # -- life -----------------------------------------------------------------------------
    def inspect(self) -> Json:
        self.info = self._call("workspace.inspect")
        return self.info

    def end(self, keep_files: bool = False) -> Json:
        """Ends it (refused while an exec runs in it); its files go unless keep_files."""
        return self._call("workspace.end", keep_files=keep_files)
