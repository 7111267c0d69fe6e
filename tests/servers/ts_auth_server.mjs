// A protected MCP server on the TypeScript SDK, written as its docs show: Express, the stateless
// Streamable HTTP transport, the SDK's `requireBearerAuth` and `mcpAuthMetadataRouter`, and a token
// verifier that checks a JWT against the issuer's JWKS with `jose`. It trusts the issuer given as the
// first argument (the harness's test authorization server) and listens on 127.0.0.1 at an ephemeral
// port, printing `LISTENING <url>`. tests/packs/auth/test_auth_suite.py judges it with the authorization suite;
// with `--no-audience-check` as second argument its verifier forgets the audience (a planted defect).
import express from 'express';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import {
  mcpAuthMetadataRouter,
  getOAuthProtectedResourceMetadataUrl,
} from '@modelcontextprotocol/sdk/server/auth/router.js';
import { z } from 'zod';

const issuer = process.argv[2];
if (!issuer) {
  console.error('usage: node ts_auth_server.mjs ISSUER_URL');
  process.exit(2);
}
const checkAudience = process.argv[3] !== '--no-audience-check';
const scope = 'mcp:tools';
const oauthMetadata = await (await fetch(`${issuer}/.well-known/oauth-authorization-server`)).json();
const jwks = createRemoteJWKSet(new URL(oauthMetadata.jwks_uri));

function buildServer() {
  const server = new McpServer({ name: 'ts-protected', version: '1.0.0' });
  server.registerTool(
    'echo',
    {
      description: 'Return the given text.',
      inputSchema: { text: z.string() },
      annotations: { readOnlyHint: true },
    },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return server;
}

const app = express();
app.use(express.json());
const listener = app.listen(0, '127.0.0.1', () => {
  const origin = `http://127.0.0.1:${listener.address().port}`;
  const mcpUrl = new URL(`${origin}/mcp`);
  const verifier = {
    async verifyAccessToken(token) {
      try {
        const { payload } = await jwtVerify(token, jwks, {
          issuer: oauthMetadata.issuer,
          audience: checkAudience ? mcpUrl.href : undefined,
          algorithms: ['ES256'],
        });
        return {
          token,
          clientId: String(payload.client_id ?? payload.sub ?? 'unknown'),
          scopes: typeof payload.scope === 'string' ? payload.scope.split(' ') : [],
          expiresAt: payload.exp,
          resource: mcpUrl,
        };
      } catch (error) {
        throw new InvalidTokenError(`invalid token: ${error.code ?? 'rejected'}`);
      }
    },
  };
  app.use(mcpAuthMetadataRouter({ oauthMetadata, resourceServerUrl: mcpUrl, scopesSupported: [scope] }));
  const auth = requireBearerAuth({
    verifier,
    requiredScopes: [scope],
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
  });
  app.post('/mcp', auth, async (req, res) => {
    const server = buildServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  app.get('/mcp', auth, (req, res) => res.status(405).set('Allow', 'POST').end());
  app.delete('/mcp', auth, (req, res) => res.status(405).set('Allow', 'POST').end());
  console.log(`LISTENING ${mcpUrl.href}`);
});
process.on('SIGTERM', () => listener.close(() => process.exit(0)));
