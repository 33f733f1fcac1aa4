// Raw HTTP/1.1 requests over a fixed set of keep-alive connections (node:http). QEMU's own user
// network (run.sh --user-net, or where passt is missing) accepts forwarded connections with a
// listen backlog of one, so a burst of new connections loses SYNs to the host kernel and waits
// out TCP's retransmissions: tests and the benchmark that need requests to arrive together open
// their connections first (warm()) and then reuse them, as a real client's connection pool does.
import http from "node:http";

export class HttpPool {
  constructor(url, connections) {
    this.url = new URL(url);
    this.size = connections;
    this.agent = new http.Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections });
  }

  request(method, body, headers = {}) {
    return new Promise((resolve, reject) => {
      const data = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
      const req = http.request(this.url, {
        method, agent: this.agent,
        headers: { ...(data !== undefined ? { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(data) } : {}),
                   Accept: "application/json, text/event-stream", ...headers },
      }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d) => (text += d));
        res.on("end", () => {
          const json = /^application\/json/.test(res.headers["content-type"] || "") && text ? JSON.parse(text) : null;
          resolve({ status: res.statusCode, headers: res.headers, text, json });
        });
      });
      req.on("error", reject);
      if (data !== undefined)
        req.write(data);
      req.end();
    });
  }

  // A 2026-07-28 request goes out as a conforming client sends it: its revision, method and name
  // mirrored in headers (MCP "Streamable HTTP", Request Metadata). Headers given here win.
  post(body, headers = {}) {
    const version = typeof body === "object" ? body?.params?._meta?.["io.modelcontextprotocol/protocolVersion"] : undefined;
    if (typeof version !== "string")
      return this.request("POST", body, headers);
    const name = body.params.name ?? body.params.uri;
    const mirrored = { "MCP-Protocol-Version": version, "Mcp-Method": body.method, ...(typeof name === "string" ? { "Mcp-Name": name } : {}) };
    return this.request("POST", body, { ...mirrored, ...headers });
  }

  // Opens every connection of the pool (concurrent cheap requests: OPTIONS, which an MCP
  // endpoint refuses at once), leaving them idle for reuse.
  async warm() {
    await Promise.all(Array.from({ length: this.size }, () => this.request("OPTIONS")));
    return Object.values(this.agent.freeSockets).flat().length;
  }

  close() { this.agent.destroy(); }
}
