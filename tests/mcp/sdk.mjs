// Shared by the end-to-end tests and the benchmark: the official MCP SDK from .deps/npm (installed
// by toolchain/bootstrap.sh) and a client that boots the kernel with `qemu/run.sh --stdio`.
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const sdkDir = path.join(root, ".deps/npm/node_modules/@modelcontextprotocol/sdk/dist/esm");
const load = (file) => import(pathToFileURL(path.join(sdkDir, file)));

export const { Client } = await load("client/index.js");
export const { StdioClientTransport } = await load("client/stdio.js");
export const types = await load("types.js");
export const defaultKernel = path.join(root, "build/kernel/basalt.elf");

// A client and its transport for a kernel booted with extra run.sh arguments. On failure or
// timeout, fail() closes the transport (QEMU holds the test's stdout open while it runs).
export function boot(name, runArgs, { kernel = defaultKernel, stderr = "inherit", timeoutMs = 60000 } = {}) {
  const transport = new StdioClientTransport({
    command: path.join(root, "qemu/run.sh"),
    args: ["--kernel", kernel, "--stdio", ...runArgs],
    stderr,
  });
  const client = new Client({ name, version: "1.0.0" });
  const fail = async (e) => {
    console.error("FAIL:", e);
    await transport.close().catch(() => {});
    process.exit(1);
  };
  const timer = timeoutMs ? setTimeout(() => fail("timed out"), timeoutMs) : null;
  const done = async () => {
    if (timer)
      clearTimeout(timer);
    await client.close();
  };
  return { client, transport, fail, done };
}

// Polls kernel_tasks (through callTool) until no task named `name` is left: cancellation must
// really stop the tool task, not just silence its answer.
export async function taskGone(callTool, name, tries = 20) {
  for (let i = 0; i < tries; ++i) {
    await new Promise((r) => setTimeout(r, 100));
    const now = await callTool({ name: "kernel_tasks", arguments: {} });
    if (!now.structuredContent.tasks.some((t) => t.name === name))
      return true;
  }
  return false;
}
