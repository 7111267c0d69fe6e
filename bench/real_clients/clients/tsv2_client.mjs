// A client program on the TypeScript SDK v2 (npm @modelcontextprotocol/client): its Client on the
// SDK's Streamable HTTP, HTTP+SSE or stdio transport, as a user of v2 writes it. The contract's
// revision is passed as the SDK's versionNegotiation: a 2026-07-28-era revision is pinned (the modern,
// stateless era), an earlier one keeps the SDK's default ('legacy', the initialize handshake). The
// elicitation handler accepts every form untouched (empty content) and the client declares form
// elicitation with applyDefaults, the SDK's own switch for filling in the schema's defaults. A tool
// list change notification is noted for the user to list again; x-cancel's call is aborted at its progress.
import {
  Client,
  ClientCredentialsProvider,
  CrossAppAccessProvider,
  DpopSession,
  PrivateKeyJwtProvider,
  requestJwtAuthorizationGrant,
  SSEClientTransport,
  StreamableHTTPClientTransport
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { main, watch, workloadProvider } from './contract.mjs';

function transportOf(contract) {
  const [command, ...args] = contract.command;
  if (contract.transport === 'stdio') return new StdioClientTransport({ command, args });
  return new SSEClientTransport(new URL(contract.url));
}

// The SDK's OAuth provider: the client credentials extension's providers for its scenarios (the user's
// choice of grant, as in the official example client), else the headless authorization code provider, the assertion grants' (enterprise-managed
// authorization, workload identity federation) when the context carries their credentials, with DPoP (the extension) in its scenarios.
async function authProviderOf(contract, authorization) {
  const { client_id: clientId, client_secret: clientSecret, private_key_pem: privateKey } = contract.context;
  if (contract.scenario === 'auth/client-credentials-basic') return new ClientCredentialsProvider({ clientId, clientSecret });
  if (contract.scenario === 'auth/client-credentials-jwt') {
    return new PrivateKeyJwtProvider({ clientId, privateKey, algorithm: contract.context.signing_algorithm || 'ES256' });
  }
  const context = contract.context;
  if (context.valid_jwt) return workloadProvider(context, 'kit-tsv2-client');
  if (context.idp_id_token) {
    // enterprise-managed authorization: the ID token exchanged at the IdP for an ID-JAG naming the
    // authorization server and resource the SDK discovered, presented by the SDK's provider
    const grant = (target) =>
      requestJwtAuthorizationGrant({
        tokenEndpoint: context.idp_token_endpoint,
        audience: target.authorizationServerUrl,
        resource: target.resourceUrl,
        idToken: context.idp_id_token,
        clientId: context.idp_client_id,
        scope: target.scope,
        fetchFn: target.fetchFn
      });
    return new CrossAppAccessProvider({
      clientId,
      clientSecret,
      assertion: async (target) => (await grant(target)).jwtAuthGrant
    });
  }
  if (contract.scenario.startsWith('auth/dpop')) {
    const session = await DpopSession.create();
    authorization.provider.dpop = () => session;
  }
  return authorization.provider;
}

await main(async (contract, authorization) => {
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
  if (contract.transport === 'http') {
    const authProvider = await authProviderOf(contract, authorization);
    return authorization.connect(client, () => new StreamableHTTPClientTransport(new URL(contract.url), { authProvider }));
  }
  await client.connect(transportOf(contract));
  return client;
},
  (client, params, options) => client.callTool(params, options),
  (transport, params) => transport.finishAuth(params),
  'kit-tsv2-client'
);
