// A client program on the TypeScript SDK v2 (npm @modelcontextprotocol/client): its Client on the
// SDK's Streamable HTTP, HTTP+SSE or stdio transport, as a user of v2 writes it. The contract's
// revision is passed as the SDK's versionNegotiation: a 2026-07-28-era revision is pinned (the modern,
// stateless era), an earlier one keeps the SDK's default ('legacy', the initialize handshake). The
// elicitation handler accepts every form untouched (empty content) and the client declares form
// elicitation with applyDefaults, the SDK's own switch for filling in the schema's defaults. A tool
// list change notification is noted for the user to list again; x-cancel's call is aborted at its progress.
import { Client, SSEClientTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { main, watch } from './contract.mjs';

function transportOf(contract) {
  if (contract.transport === 'stdio') {
    const [command, ...args] = contract.command;
    return new StdioClientTransport({ command, args });
  }
  if (contract.transport === 'sse') return new SSEClientTransport(new URL(contract.url));
  return new StreamableHTTPClientTransport(new URL(contract.url));
}

await main(async (contract) => {
  const client = new Client(
    { name: 'kit-tsv2-client', version: '1.0.0' },
    {
      capabilities: { elicitation: { form: { applyDefaults: true } } },
      ...(contract.modern ? { versionNegotiation: { mode: { pin: contract.version } } } : {})
    }
  );
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: {} }));
  client.setNotificationHandler('notifications/tools/list_changed', () => {
    watch.toolsChanged = true;
  });
  await client.connect(transportOf(contract));
  return client;
}, (client, params, options) => client.callTool(params, options));
