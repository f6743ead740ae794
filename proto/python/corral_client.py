"""The client's former single-file name, kept so existing imports work: use `import corral`."""

from corral.client import *  # noqa: F401,F403
from corral.client import Client, Execution, Session  # noqa: F401
from corral.protocol import ConnectionLost, CorralError  # noqa: F401
