"""corral: a client for the corral daemon (proto/PROTOCOL.md), standard library only.

`Client` (threads) and `AsyncClient` (asyncio) speak the same methods: exec with streamed
output (callbacks, or iterating `exec_stream`: ExecStream, AsyncExecStream), stdio and
terminal sessions, cancel, capabilities, describe, health, and workspaces
(corral.workspace: Workspace, AsyncWorkspace).
"""

from .aio import AsyncClient, AsyncExecStream, AsyncExecution, AsyncSession
from .client import Client, Execution, ExecStream, Session
from .workspace import AsyncWorkspace, Workspace
from .protocol import (CONFIG_ERROR, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, LIMIT_EXCEEDED,
                       METHOD_NOT_FOUND, PARSE_ERROR, REFUSED, SPAWN_FAILED, NOT_FOUND, CONFLICT, TIER_UNAVAILABLE, TIMEOUT,
                       ConnectionLost, CorralError, OutputEvent)

__version__ = "0.1.0"

__all__ = [
    "AsyncClient", "AsyncExecStream", "AsyncExecution", "AsyncSession", "Client", "ExecStream", "Execution",
    "OutputEvent", "Session", "Workspace", "AsyncWorkspace", "CorralError",
    "ConnectionLost", "PARSE_ERROR", "INVALID_REQUEST", "METHOD_NOT_FOUND", "INVALID_PARAMS", "INTERNAL_ERROR",
    "REFUSED", "TIER_UNAVAILABLE", "LIMIT_EXCEEDED", "TIMEOUT", "CONFIG_ERROR", "SPAWN_FAILED", "NOT_FOUND", "CONFLICT",
]
