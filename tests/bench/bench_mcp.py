"""corral mcp's cost per message: JSON-RPC round trips through `corral mcp -- SERVER` next to
the same SERVER run directly, interleaved in this one run (used by scripts/bench).

The server is a line echo (one JSON-RPC response per request line), so the figure is the
proxy's, not a tool's. For a small message (about 100 bytes) and a 247 KB one it prints
  mcp_rtt size=... direct_median_us=... corral_median_us=... added_median_us=... ratio=...
and then the gateway's policy stage (a deny list and an argument rule) against the
transparent relay, both answering through the same responder:
  mcp_policy size=... transparent_median_us=... policy_median_us=... added_median_us=...
Usage: bench_mcp.py CORRAL [ROUNDS] [TIER]   (default 2000 rounds of small, 200 of large; landlock;
env BENCH_MCP_BEFORE=another build's corral to set beside it)"""

import json
import os
import statistics
import subprocess
import sys
import time

# Answers each request with a response carrying it whole: what the gateway's policy stage
# needs to see (a request, then its answer with the same id).
RESPOND = r"""
import sys
inp, out = sys.stdin.buffer, sys.stdout.buffer
for line in inp:
    out.write(b'{"jsonrpc":"2.0","id":1,"result":' + line.rstrip(b"\n") + b'}\n')
    out.flush()
"""

# A policy that looks at every call: a denied tool, an argument rule on the echoed text.
POLICY = ["--tools-deny", "write_file", "--tool-rule", "echo.text~^x*$"]

ECHO = r"""
import sys
inp, out = sys.stdin.buffer, sys.stdout.buffer
for line in inp:
    out.write(line)
    out.flush()
"""


class Peer:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  bufsize=0)

    def round_trip(self, line, answered=False):
        start = time.perf_counter()
        self.p.stdin.write(line)
        got = b""
        while not got.endswith(b"\n"):
            chunk = os.read(self.p.stdout.fileno(), 1 << 20)
            if not chunk:
                raise SystemExit("bench_mcp: the server ended early")
            got += chunk
        took = (time.perf_counter() - start) * 1e6
        if answered:
            # Compared as JSON: the gateway forwards what it parsed, written again.
            if json.loads(got)["result"] != json.loads(line):
                raise SystemExit("bench_mcp: the answer does not carry the request (%d bytes)" % len(got))
        elif got != line:
            raise SystemExit("bench_mcp: the echo came back changed (%d bytes, sent %d)" % (len(got), len(line)))
        return took

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def message(size):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": ""}}}
    pad = size - len(json.dumps(body))
    body["params"]["arguments"]["text"] = "x" * max(0, pad)
    return (json.dumps(body) + "\n").encode()


def main():
    corral = os.path.abspath(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    tier = sys.argv[3] if len(sys.argv) > 3 else "landlock"
    server = ["/usr/bin/python3", "-c", ECHO]
    direct = Peer(server)
    proxied = Peer([corral, "mcp", "--tier", tier, "--"] + server)
    # BENCH_MCP_BEFORE: a corral built from another commit, in the same rounds.
    before_cli = os.environ.get("BENCH_MCP_BEFORE")
    before = Peer([before_cli, "mcp", "--tier", tier, "--"] + server) if before_cli else None
    try:
        for size, n in ((100, rounds), (247 * 1024, max(20, rounds // 10))):
            line = message(size)
            for _ in range(max(5, n // 20)):  # warm-up: both pipes, the interpreter, corral's actors
                direct.round_trip(line)
                proxied.round_trip(line)
            d, c, b = [], [], []
            for _ in range(n):
                d.append(direct.round_trip(line))
                c.append(proxied.round_trip(line))
                if before:
                    b.append(before.round_trip(line))
            dm, cm = statistics.median(d), statistics.median(c)
            print("mcp_rtt tier=%s size=%d direct_median_us=%.1f corral_median_us=%.1f added_median_us=%.1f "
                  "ratio=%.2f n=%d" % (tier, len(line), dm, cm, cm - dm, cm / dm, n))
            if before:
                bm = statistics.median(b)
                print("mcp_rtt_before tier=%s size=%d corral_median_us=%.1f added_median_us=%.1f ratio=%.2f" % (
                    tier, len(line), bm, bm - dm, bm / dm))
    finally:
        direct.close()
        proxied.close()
        if before:
            before.close()
    policy_cost(corral, tier, rounds)


def policy_cost(corral, tier, rounds):
    """The MCP gateway's policy stage against the transparent relay, same server, same run."""
    server = ["/usr/bin/python3", "-c", RESPOND]
    plain = Peer([corral, "mcp", "--tier", tier, "--"] + server)
    gated = Peer([corral, "mcp", "--tier", tier] + POLICY + ["--"] + server)
    try:
        for size, n in ((100, rounds), (247 * 1024, max(20, rounds // 10))):
            line = message(size)
            for _ in range(max(5, n // 20)):
                plain.round_trip(line, True)
                gated.round_trip(line, True)
            p, g = [], []
            for _ in range(n):
                p.append(plain.round_trip(line, True))
                g.append(gated.round_trip(line, True))
            pm, gm = statistics.median(p), statistics.median(g)
            print("mcp_policy tier=%s size=%d transparent_median_us=%.1f policy_median_us=%.1f added_median_us=%.1f "
                  "n=%d" % (tier, len(line), pm, gm, gm - pm, n))
    finally:
        plain.close()
        gated.close()


if __name__ == "__main__":
    main()
