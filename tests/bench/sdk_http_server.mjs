// The comparison peer of mcp_http_bench: the official TypeScript SDK's server, stateless
// Streamable HTTP (a server and transport per request, as the SDK documents it), one tool,
// running natively on the host. Prints "listening PORT" when ready.
// Usage: node sdk_http_server.mjs [PORT]
import http from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";

import { root } from "../mcp/sdk.mjs";

const esm = path.join(root, ".deps/npm/node_modules/@modelcontextprotocol/sdk/dist/esm");
const { McpServer } = await import(pathToFileURL(path.join(esm, "server/mcp.js")));
const { StreamableHTTPServerTransport } = await import(pathToFileURL(path.join(esm, "server/streamableHttp.js")));

const started = Date.now();
function makeServer() {
  const server = new McpServer({ name: "sdk-peer", version: "1.0.0" });
  server.registerTool("kernel_info", { description: "A small structured answer, like Basalt's kernel_info" }, async () => {
    const info = { name: "sdk-peer", version: "1.0.0", uptime_ms: Date.now() - started, time: new Date().toISOString() };
    return { content: [{ type: "text", text: JSON.stringify(info) }], structuredContent: info };
  });
  return server;
}

const httpServer = http.createServer(async (req, res) => {
  let body = "";
  for await (const chunk of req)
    body += chunk;
  const server = makeServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => { transport.close(); server.close(); });
  await server.connect(transport);
  await transport.handleRequest(req, res, body ? JSON.parse(body) : undefined);
});
httpServer.keepAliveTimeout = 60000;
httpServer.listen(Number(process.argv[2] || 0), "127.0.0.1", () => console.log(`listening ${httpServer.address().port}`));
