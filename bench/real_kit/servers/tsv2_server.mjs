// A tiny server on the TypeScript SDK v2 (@modelcontextprotocol/server), for the real-server kit.
// `node tsv2_server.mjs stdio` serves stdio; `node tsv2_server.mjs http PORT` serves Streamable HTTP on
// 127.0.0.1:PORT/mcp through @modelcontextprotocol/node. The kit copies it beside its node_modules.
import { createServer } from "node:http";
import { McpServer, createMcpHandler } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { z } from "zod";

function build() {
  const server = new McpServer({ name: "kit-tsv2", version: "1.0.0" });
  server.registerTool(
    "echo",
    {
      description: "Echo the text back",
      inputSchema: z.object({ text: z.string() }),
      annotations: { readOnlyHint: true },
    },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  server.registerTool(
    "add",
    {
      description: "Add two numbers",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      outputSchema: z.object({ sum: z.number() }),
      annotations: { readOnlyHint: true },
    },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }], structuredContent: { sum: a + b } }),
  );
  server.registerResource(
    "readme",
    "kit://readme",
    { description: "A static text", mimeType: "text/plain" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "hello from the kit" }] }),
  );
  server.registerPrompt(
    "greet",
    { description: "Greet someone", argsSchema: z.object({ name: z.string() }) },
    ({ name }) => ({ messages: [{ role: "user", content: { type: "text", text: `Hello ${name}` } }] }),
  );
  return server;
}

if (process.argv[2] === "http") {
  const handle = toNodeHandler(createMcpHandler(build));
  const http = createServer((req, res) => {
    if (req.url && req.url.split("?")[0] === "/mcp") {
      handle(req, res);
    } else {
      res.writeHead(404).end();
    }
  });
  http.listen(Number(process.argv[3]), "127.0.0.1");
} else {
  serveStdio(build);
}
