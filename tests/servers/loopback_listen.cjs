// Preloaded with `node --require` into a Node MCP server that listens on a fixed port on every
// interface (server-everything's HTTP modes): every listen() binds 127.0.0.1 on an ephemeral port
// instead, and once bound the process prints `LISTENING http://127.0.0.1:<port><MCP_PATH>` on stdout,
// the line the harness waits for from a launched HTTP target. Tests talk to loopback only.
"use strict";
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const callback = typeof args[args.length - 1] === "function" ? args.pop() : undefined;
  this.once("listening", () => {
    const { port } = this.address();
    process.stdout.write(`LISTENING http://127.0.0.1:${port}${process.env.MCP_PATH || "/mcp"}\n`);
  });
  return listen.call(this, { port: 0, host: "127.0.0.1" }, callback);
};
