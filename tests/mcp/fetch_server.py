#!/usr/bin/env python3
"""A small MCP server over stdio (newline-delimited JSON-RPC 2.0) with one tool, `fetch`, that
downloads a URL with urllib, which goes through HTTP_PROXY / HTTPS_PROXY when they are set. The
network tests run it inside an agent's sandbox to show that an agent's MCP servers reach the
network through Warren's proxy and nowhere else. Standard library only."""

import json
import sys
import urllib.error
import urllib.request


def reply(id_, result=None, error=None):
    msg = {"jsonrpc": "2.0", "id": id_}
    if error is not None:
        msg["error"] = error
    else:
        msg["result"] = result
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


FETCH = {
    "name": "fetch",
    "description": "Download a URL and return its body as text.",
    "inputSchema": {
        "type": "object",
        "properties": {"url": {"type": "string"}},
        "required": ["url"],
    },
}


def fetch(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return {"content": [{"type": "text", "text": r.read().decode("utf-8", "replace")}]}
    except urllib.error.HTTPError as e:
        body = e.read().decode("utf-8", "replace")
        text = f"HTTP {e.code}: {body}"
    except Exception as e:  # noqa: BLE001 - every failure is the tool's answer
        text = f"{type(e).__name__}: {e}"
    return {"content": [{"type": "text", "text": text}], "isError": True}


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    msg = json.loads(line)
    method, id_ = msg.get("method"), msg.get("id")
    if id_ is None:
        continue  # notifications
    if method == "initialize":
        reply(id_, {
            "protocolVersion": msg.get("params", {}).get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fetch-test", "version": "1.0.0"},
        })
    elif method == "tools/list":
        reply(id_, {"tools": [FETCH]})
    elif method == "tools/call":
        params = msg.get("params", {})
        reply(id_, fetch(params.get("arguments", {}).get("url", "")))
    elif method == "ping":
        reply(id_, {})
    else:
        reply(id_, error={"code": -32601, "message": f"no method {method}"})
