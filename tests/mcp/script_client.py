# Drives an MCP server command (here: `corral mcp ... -- SERVER`) through a script of JSON-RPC
# messages, one at a time: a request waits for its answer (20 s bound), a notification is
# only sent; {"await": METHOD} waits for a message from the server with that method. Prints
# one JSON report on stdout: every message received, in order, and the command's exit status.
#   python3 script_client.py SCRIPT.json -- COMMAND [ARGS...]
import json
import subprocess
import sys
import threading
import queue

script = json.load(open(sys.argv[1]))
command = sys.argv[sys.argv.index("--") + 1:]
proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
lines = queue.Queue()


def read():
    for line in proc.stdout:
        lines.put(json.loads(line))
    lines.put(None)


threading.Thread(target=read, daemon=True).start()
received = []
problems = []


def wait_for(pred, what):
    while True:
        try:
            m = lines.get(timeout=20)
        except queue.Empty:
            problems.append("no " + what + " within 20 s")
            return False
        if m is None:
            problems.append("the server's output ended before " + what)
            return False
        received.append(m)
        if pred(m):
            return True


for step in script:
    if "await" in step:
        if not wait_for(lambda m: m.get("method") == step["await"], step["await"]):
            break
        continue
    msg = dict(step, jsonrpc="2.0")
    proc.stdin.write((json.dumps(msg) + "\n").encode())
    proc.stdin.flush()
    if "id" in msg and "method" in msg:
        if not wait_for(lambda m: m.get("id") == msg["id"] and "method" not in m, "an answer to id %r" % (msg["id"],)):
            break
proc.stdin.close()
try:
    status = proc.wait(timeout=20)
except subprocess.TimeoutExpired:
    proc.kill()
    status = proc.wait()
    problems.append("the command did not exit within 20 s of EOF")
while True:
    try:
        m = lines.get(timeout=5)
    except queue.Empty:
        break
    if m is None:
        break
    received.append(m)
print(json.dumps({"received": received, "status": status, "problems": problems}))
