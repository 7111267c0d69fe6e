// A loopback launcher for panva's oidc-provider (npm), configured as an MCP deployment's authorization
// server would be, for `mcp-conformance authorization --url ISSUER` to judge with no browser:
//
//   node bench/authorization_servers/oidc_provider.mjs --module DIR [--port N]
//
// DIR is where the package is installed (`npm install --prefix DIR oidc-provider@8`, outside the
// repository). It prints `LISTENING <issuer>` once it accepts connections, on 127.0.0.1 only.
//
// What is configured, and why: devInteractions off, and a tiny interaction route of our own that logs
// the test user in and consents to what the client asked (the "auto-approve test account" the docs
// ask for); PKCE required; resource indicators on, issuing JWT access tokens whose audience is the
// resource asked for; dynamic client registration open; a refresh token for every code grant (the
// package's own rotation policy is left as it ships); one pre-registered public client,
// `mcp-conformance`, whose redirect URI is http://127.0.0.1/callback. Everything else is the package's
// default: its verdicts are its own.

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 && at + 1 < args.length ? args[at + 1] : fallback;
};
const moduleDir = option('--module');
if (!moduleDir) {
  console.error('usage: oidc_provider.mjs --module DIR [--port N]');
  process.exit(2);
}
const port = Number(option('--port', '0'));
const { pathToFileURL } = await import('node:url');
const { createServer } = await import('node:http');
const entry = pathToFileURL(`${moduleDir}/node_modules/oidc-provider/lib/index.js`).href;
const { default: Provider } = await import(entry);

const TEST_USER = 'mcp-conformance-test-user';

function configuration() {
  return {
    clients: [
      {
        client_id: 'mcp-conformance',
        token_endpoint_auth_method: 'none',
        application_type: 'native',
        redirect_uris: ['http://127.0.0.1/callback'],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
    ],
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource) => ({
          scope: 'mcp:tools',
          audience: resource,
          accessTokenFormat: 'jwt',
        }),
      },
    },
    pkce: { required: () => true },
    scopes: ['openid', 'offline_access', 'mcp:tools'],
    issueRefreshToken: () => true,
    findAccount: (ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  };
}

// The auto-approving interaction: log the test user in, then grant what the client asked for.
async function approve(provider, ctx) {
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  const { prompt, params, session } = details;
  let result;
  if (prompt.name === 'login') {
    result = { login: { accountId: TEST_USER } };
  } else {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const missing = prompt.details;
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes || {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    result = { consent: { grantId: await grant.save() } };
  }
  await provider.interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: true });
}

const server = createServer();
await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;
const provider = new Provider(issuer, configuration());
provider.use(async (ctx, next) => {
  if (/^\/interaction\/[^/]+$/.test(ctx.path)) {
    ctx.respond = false;
    await approve(provider, ctx);
    return;
  }
  await next();
});
server.on('request', provider.callback());
console.log(`LISTENING ${issuer}`);
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
