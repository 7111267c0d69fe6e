// A client program on the TypeScript SDK v1 (npm @modelcontextprotocol/sdk): its Client on the SDK's
// Streamable HTTP, HTTP+SSE or stdio transport, as a user of v1 writes it. The elicitation handler
// accepts every form untouched (empty content) and the client declares form elicitation with
// applyDefaults, the SDK's own switch for filling in the schema's defaults. v1 offers no choice of
// protocol revision (it sends its latest), so the contract's revision is not passed on. A tool list
// change notification is noted for the user to list again; x-cancel's call is aborted at its progress.
import { ClientCredentialsProvider, PrivateKeyJwtProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { main, watch, workloadProvider } from './contract.mjs';

function transportOf(contract) {
  const [command, ...args] = contract.command;
  if (contract.transport === 'stdio') return new StdioClientTransport({ command, args });
  return new SSEClientTransport(new URL(contract.url));
}

// The SDK's OAuth provider: the client credentials extension's providers for its scenarios (the user's
// choice of grant, as in the official example client), else the headless authorization code provider (workload identity federation's JWT bearer grant
// through the SDK's prepareTokenRequest when the context carries the workload's JWT; v1 has no
// enterprise-managed authorization provider).
async function authProviderOf(contract, authorization) {
  const { client_id: clientId, client_secret: clientSecret, private_key_pem: privateKey } = contract.context;
  if (contract.scenario === 'auth/client-credentials-basic') return new ClientCredentialsProvider({ clientId, clientSecret });
  if (contract.scenario === 'auth/client-credentials-jwt') {
    return new PrivateKeyJwtProvider({ clientId, privateKey, algorithm: contract.context.signing_algorithm || 'ES256' });
  }
  if (contract.context.valid_jwt) return workloadProvider(contract.context, 'kit-tsv1-client');
  return authorization.provider;
}

await main(async (contract, authorization) => {
  const client = new Client(
    { name: 'kit-tsv1-client', version: '1.0.0' },
    { capabilities: { elicitation: { form: { applyDefaults: true } } } }
  );
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: {} }));
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    watch.toolsChanged = true;
  });
  if (contract.transport === 'http') {
    const authProvider = await authProviderOf(contract, authorization);
    return authorization.connect(client, () => new StreamableHTTPClientTransport(new URL(contract.url), { authProvider }));
  }
  await client.connect(transportOf(contract));
  return client;
},
  (client, params, options) => client.callTool(params, undefined, options),
  (transport, params) => transport.finishAuth(params.get('code')),
  'kit-tsv1-client'
);
