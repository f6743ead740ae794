"""A real `corral serve` for the client tests (landlock tier, a temp socket and state dir).

The binary: $CORRAL_BIN, else the repository's build/corral. PROBLEM says why the tests
cannot run here (then they skip, printing it), or is None."""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
BIN = os.environ.get("CORRAL_BIN") or os.path.join(REPO, "build", "corral")


def wait_until(predicate, bound=10.0):
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def accepts(path):
    """Whether a daemon listens on the socket at path: the file appears at bind(), before
    listen(), so its existence alone is not enough."""
    if not os.path.exists(path):
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        try:
            s.connect(path)
            return True
        except OSError:
            return False


def binary_problem():
    """Why the tests cannot run here, or None."""
    if not os.access(BIN, os.X_OK):
        return "corral binary not found at %s (set CORRAL_BIN)" % BIN
    help_text = subprocess.run([BIN, "serve", "--help"], capture_output=True, text=True).stdout
    if "--state-dir" not in help_text:
        return "%s has no `serve --state-dir` (an older build; rebuild or set CORRAL_BIN)" % BIN
    return None


PROBLEM = binary_problem()
if PROBLEM:
    print("skipping the corral client tests: " + PROBLEM, file=sys.stderr)


class Daemon:
    """Started by start(), stopped (and everything it made removed) by stop(). `config`:
    the corral.toml text, if any."""

    def __init__(self, prefix="corral-py-", config=None):
        self.dir = tempfile.mkdtemp(prefix=prefix)
        os.chmod(self.dir, 0o700)
        self.sock = os.path.join(self.dir, "corral.sock")
        argv = [BIN, "serve", "--socket", self.sock, "--state-dir", os.path.join(self.dir, "state")]
        if config is not None:
            path = os.path.join(self.dir, "corral.toml")
            with open(path, "w") as f:
                f.write(config)
            argv += ["--config", path]
        env = dict(os.environ)
        env.pop("CORRAL_ALLOW_HOST", None)
        # Its workspaces live in the temp dir (removed with it), not in /var/lib/corral.
        env["CORRAL_WORKSPACES_DIR"] = os.path.join(self.dir, "workspaces")
        # Its log goes to a file: a pipe nobody reads would stall the daemon once full.
        self.log = os.path.join(self.dir, "serve.log")
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(argv, cwd=self.dir, env=env, stderr=log)
        if not wait_until(lambda: self.process.poll() is None and accepts(self.sock)):
            self.process.kill()
            self.process.wait(timeout=30)
            with open(self.log, errors="replace") as log:
                why = log.read()
            shutil.rmtree(self.dir, ignore_errors=True)
            raise RuntimeError("corral serve did not start listening on its socket: %s" % why)

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)
        shutil.rmtree(self.dir, ignore_errors=True)
