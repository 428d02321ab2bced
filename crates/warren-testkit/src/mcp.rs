//! Small MCP servers for tests, speaking the protocol over stdio.

/// A Python stdio MCP server with two tools: `small` answers `small answer`; `flood` answers
/// with one 64 MiB line (a server that says too much). Run it with `python3 <file>`.
pub const FLOOD_SERVER: &str = r#"
import json, sys
def send(v):
    sys.stdout.write(json.dumps(v) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    i, method = m["id"], m.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": i, "result": {"protocolVersion": m["params"]["protocolVersion"],
              "capabilities": {"tools": {}}, "serverInfo": {"name": "flood", "version": "1"}}})
    elif method == "tools/list":
        tool = lambda n: {"name": n, "description": n, "inputSchema": {"type": "object", "properties": {}}}
        send({"jsonrpc": "2.0", "id": i, "result": {"tools": [tool("small"), tool("flood")]}})
    elif method == "tools/call" and m["params"]["name"] == "small":
        send({"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": "small answer"}]}})
    elif method == "tools/call":
        sys.stdout.write('{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"' % json.dumps(i))
        chunk = "a" * (1 << 20)
        for _ in range(64):
            sys.stdout.write(chunk)
        sys.stdout.write('"}]}}\n'); sys.stdout.flush()
    else:
        send({"jsonrpc": "2.0", "id": i, "result": {}})
"#;
