// A client program on the TypeScript SDK v2 (npm @modelcontextprotocol/client): its Client on the SDK's
// Streamable HTTP, HTTP+SSE or stdio transport, as a user of v2 writes it. The contract's revision is
// passed as the SDK's versionNegotiation: a 2026-07-28-era revision is pinned (the modern, stateless
// era), an earlier one keeps the SDK's default ('legacy', the initialize handshake). The client
// declares sampling and roots (contract.mjs's stub model and root folder, answered by the SDK's request
// handlers). The elicitation handler accepts every form with only its required fields without a default
// filled in (contract.mjs's acceptForm) and the client declares form elicitation with applyDefaults,
// the SDK's own switch for filling in the schema's defaults. A tool list change notification is noted
// for the user to list again; x-cancel's call is aborted at its progress. Over Streamable HTTP the
// transport carries the SDK's OAuth (contract.mjs's Authorization, below).
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

import {
  acceptForm,
  CAPABILITIES,
  connectHttp,
  grantProvider,
  main,
  ROOTS,
  SAMPLED,
  watch
} from './contract.mjs';

function transportOf(contract) {
  const [command, ...args] = contract.command;
  if (contract.transport === 'stdio') return new StdioClientTransport({ command, args });
  return new SSEClientTransport(new URL(contract.url));
}

// The SDK's OAuth provider: the extensions' grants in their scenarios (enterprise-managed authorization
// when the context carries the IdP's ID token), else the headless authorization code provider, with
// DPoP (the extension) in its scenarios.
async function authProviderOf(contract, authorization) {
  const sdk = { ClientCredentialsProvider, PrivateKeyJwtProvider };
  const context = contract.context;
  if (context.idp_id_token) return crossAppAccess(context);
  const grant = grantProvider(contract, sdk, 'kit-tsv2-client');
  if (grant) return grant;
  if (contract.scenario.startsWith('auth/dpop')) {
    const session = await DpopSession.create();
    authorization.provider.dpop = () => session;
  }
  return authorization.provider;
}

// Enterprise-managed authorization: the ID token exchanged at the IdP for an ID-JAG naming the
// authorization server and resource the SDK discovered, presented by the SDK's provider.
function crossAppAccess(context) {
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
    clientId: context.client_id,
    clientSecret: context.client_secret,
    assertion: async (target) => (await grant(target)).jwtAuthGrant
  });
}

await main(async (contract, authorization) => {
  const client = new Client(
    { name: 'kit-tsv2-client', version: '1.0.0' },
    {
      capabilities: CAPABILITIES,
      ...(contract.modern ? { versionNegotiation: { mode: { pin: contract.version } } } : {})
    }
  );
  client.setRequestHandler('sampling/createMessage', async () => SAMPLED);
  client.setRequestHandler('roots/list', async () => ({ roots: ROOTS }));
  client.setRequestHandler('elicitation/create', acceptForm);
  client.setNotificationHandler('notifications/tools/list_changed', () => {
    watch.toolsChanged = true;
  });
  if (contract.transport === 'http') {
    const authProvider = await authProviderOf(contract, authorization);
    return connectHttp(client, contract, authorization, StreamableHTTPClientTransport, authProvider);
  }
  await client.connect(transportOf(contract));
  return client;
},
  (client, params, options) => client.callTool(params, options),
  (transport, params) => transport.finishAuth(params),
  'kit-tsv2-client'
);
