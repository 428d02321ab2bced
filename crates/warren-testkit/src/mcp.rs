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

/// The entry script of a reference MCP server (`filesystem`, `everything`) that `npm ci` in
/// `tests/mcp` installs. Panics naming that step when it is missing.
pub fn reference_server(name: &str) -> std::path::PathBuf {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp/node_modules/@modelcontextprotocol")
        .join(format!("server-{name}"))
        .join("dist/index.js");
    match std::fs::canonicalize(&p) {
        Ok(p) if p.is_file() => p,
        _ => panic!(
            "{} is missing: run scripts/setup.sh --test (npm ci in tests/mcp)",
            p.display()
        ),
    }
}
