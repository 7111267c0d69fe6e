// The official client contract and one user's session, shared by the kit's TypeScript SDK programs.
//
// Why: the kit judges SDK clients, so each program must be what a user of that SDK would write; the
// parts that are not the SDK (reading the contract from argv and the environment, and what the user
// does once connected) are written once here, as contract.py is for the Python programs (the same
// contract, the same steps). The SDK's Client is used as it is: v1 and v2 name these calls alike.
//
// The contract: the last argument is the server's URL, or `stdio:` followed by the server's
// shell-quoted command line; MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_PROTOCOL_VERSION (default
// 2025-11-25), MCP_CONFORMANCE_TRANSPORT (http, sse, stdio) and MCP_CONFORMANCE_CONTEXT (JSON).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const DEFAULT_VERSION = '2025-11-25';
const FOCAL_TOOL = 'json_schema_2020_12_tool';
const ECHO_TOOL = 'json_schema_echo';
const SAMPLE = { string: 'x', integer: 1, number: 1, boolean: true };

// What the user's client offers the server, the same in every program (as in contract.py): sampling
// (SAMPLED, a fixed assistant text message from "contract-model", as a stub model would answer) and
// roots (ROOTS, one root, "contract-root": a temporary folder, removed at exit). Each program hands
// them to its SDK's own request handlers and declares the capabilities (CAPABILITIES).
export const SAMPLED = {
  role: 'assistant',
  content: { type: 'text', text: 'Hello from the contract program.' },
  model: 'contract-model',
  stopReason: 'endTurn'
};
const rootFolder = mkdtempSync(join(tmpdir(), 'contract-root-'));
process.on('exit', () => rmSync(rootFolder, { recursive: true, force: true }));
export const ROOTS = [{ uri: pathToFileURL(rootFolder).href, name: 'contract-root' }];
export const CAPABILITIES = {
  sampling: {},
  roots: { listChanged: true },
  elicitation: { form: { applyDefaults: true } }
};

// A POSIX shell word split (quotes and backslashes), enough for a shell-quoted command line.
export function shellSplit(line) {
  const words = [];
  let word = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error('unterminated single quote');
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      word = word ?? '';
      for (i++; i < line.length && line[i] !== '"'; i++) {
        if (line[i] === '\\' && '"\\$`\n'.includes(line[i + 1])) i++;
        word += line[i];
      }
      if (i >= line.length) throw new Error('unterminated double quote');
    } else if (c === '\\') {
      word = (word ?? '') + (line[++i] ?? '');
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

export function readContract(argv = process.argv, env = process.env) {
  if (argv.length < 3) {
    throw new Error('usage: PROGRAM <server-url | stdio:COMMAND LINE> (the runner appends it)');
  }
  const target = argv[argv.length - 1];
  const context = JSON.parse(env.MCP_CONFORMANCE_CONTEXT || '{}');
  const version = env.MCP_CONFORMANCE_PROTOCOL_VERSION || DEFAULT_VERSION;
  const common = {
    scenario: env.MCP_CONFORMANCE_SCENARIO || '',
    version,
    modern: version >= '2026-',
    context: context && typeof context === 'object' ? context : {}
  };
  if (target.startsWith('stdio:')) {
    const command = shellSplit(target.slice('stdio:'.length));
    if (command.length === 0) throw new Error('stdio: names no command');
    return { ...common, transport: 'stdio', command, url: '' };
  }
  return { ...common, transport: env.MCP_CONFORMANCE_TRANSPORT || 'http', command: [], url: target };
}

export function argumentsFor(tool, context) {
  for (const call of context.toolCalls ?? []) {
    if (call && call.name === tool.name) return { ...(call.arguments ?? {}) };
  }
  return samplesFor(tool.inputSchema ?? {});
}

// A sample value per typed required property of an object schema (defaults false: only those without
// a default, which the SDK is to apply).
function samplesFor(schema, defaults = true) {
  const properties = schema?.properties ?? {};
  const args = {};
  for (const name of schema?.required ?? []) {
    const type = properties[name]?.type;
    if (type in SAMPLE && (defaults || !('default' in properties[name]))) args[name] = SAMPLE[type];
  }
  return args;
}

// What the user types into an elicitation form: a sample for each required field without a default,
// nothing else (the defaults are the SDK's to fill in: elicitation-sep1034-client-defaults). A
// URL-mode request (the page opened out of band) is accepted without content.
export function acceptForm(request) {
  const params = request.params ?? {};
  if (params.mode === 'url') return { action: 'accept' };
  return { action: 'accept', content: samplesFor(params.requestedSchema, false) };
}

// Each step runs, a failure is reported on stderr and the session goes on; the count decides the exit.
// A step the SDK stopped to send the user to the authorization server (its transport threw after
// redirectToAuthorization) is completed as the SDK asks (finishAuth) and made again, as a user retries.
class Steps {
  failed = 0;
  constructor(authorization) {
    this.authorization = authorization;
  }
  async run(what, step) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await step();
      } catch (error) {
        if (attempt < AUTHORIZATIONS && (await this.authorization?.complete())) continue;
        this.failed++;
        console.error(`${what} failed: ${error?.message ?? error}`);
        return undefined;
      }
    }
  }
}

// --- OAuth, headless ---------------------------------------------------------------------------------
// Not the SDK: the user's browser and redirect listener. The scenario's authorization endpoint approves
// at once, so visiting the authorization URL is one GET whose redirect (not followed) carries the
// authorization response. Everything else (discovery, registration, scopes, PKCE, the token request,
// the issuer check) is the SDK's: the program hands `provider` (an OAuthClientProvider, in memory: a run
// is one session) to its transport as authProvider and `finish(transport, params)` calls the SDK's
// finishAuth. The context's pre-registered credentials are the user's; `state` is the user's to
// compare (the SDK does not).

export const REDIRECT_URI = 'http://127.0.0.1:8976/callback';
// The client ID metadata document URL the official contract fixes (its auth/basic-cimd expects it).
export const CIMD_URL = 'https://conformance-test.local/client-metadata.json';
// How many times one step may be authorized and made again (MCP: clients SHOULD limit retries).
const AUTHORIZATIONS = 3;

export class Authorization {
  pending = undefined; // the authorization response the browser read, until the SDK is handed it
  transport = undefined; // the transport whose SDK asked for it
  constructor(contract, clientName, finish) {
    this.finish = finish;
    const expected = { state: undefined, verifier: undefined };
    const clients = new Map();
    const tokens = new Map();
    const context = contract.context;
    const secret = context.client_secret ? { client_secret: context.client_secret } : {};
    const preRegistered = context.client_id ? { client_id: context.client_id, ...secret } : undefined;
    const latest = (map) => [...map.values()].at(-1);
    this.provider = {
      get redirectUrl() {
        return REDIRECT_URI;
      },
      clientMetadataUrl: CIMD_URL,
      get clientMetadata() {
        return {
          client_name: clientName,
          redirect_uris: [REDIRECT_URI],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code']
        };
      },
      state: () => (expected.state = randomState()),
      clientInformation: (ctx) => preRegistered ?? (ctx ? clients.get(ctx.issuer) : latest(clients)),
      saveClientInformation: (info, ctx) => void clients.set(ctx?.issuer ?? '', info),
      tokens: (ctx) => (ctx ? tokens.get(ctx.issuer) : latest(tokens)),
      saveTokens: (saved, ctx) => void tokens.set(ctx?.issuer ?? '', saved),
      redirectToAuthorization: async (url) => {
        this.pending = await visit(url);
      },
      saveCodeVerifier: (verifier) => void (expected.verifier = verifier),
      codeVerifier: () => expected.verifier,
      invalidateCredentials: (scope) => {
        if (scope === 'all' || scope === 'client') clients.clear();
        if (scope === 'all' || scope === 'tokens') tokens.clear();
      }
    };
    this.expected = expected;
  }

  // Connect `client` on transports `make()` builds, completing the authorizations the SDK asks for.
  async connect(client, make) {
    for (let attempt = 1; ; attempt++) {
      this.transport = make();
      try {
        await client.connect(this.transport);
        return client;
      } catch (error) {
        if (attempt >= AUTHORIZATIONS || !(await this.complete())) throw error;
      }
    }
  }

  // Hand the SDK the authorization response it waits for; false when there is none to hand.
  async complete() {
    const params = this.pending;
    if (!params || !this.transport) return false;
    this.pending = undefined;
    if (params.get('state') !== this.expected.state) {
      throw new Error('the authorization response state does not match');
    }
    await this.finish(this.transport, params);
    return true;
  }
}

// The workload identity federation extension: the JWT bearer grant (RFC 7523 section 2.1) with the
// workload's JWT from the context, a public client, through the SDK's own hook for a grant of the
// user's choosing (prepareTokenRequest), as the official example client does.
export function workloadProvider(context, clientName) {
  let saved;
  return {
    get redirectUrl() {
      return undefined;
    },
    get clientMetadata() {
      const grant = { grant_types: [JWT_BEARER], token_endpoint_auth_method: 'none' };
      return { client_name: clientName, redirect_uris: [], ...grant };
    },
    clientInformation: () => ({ client_id: context.client_id }),
    tokens: () => saved,
    saveTokens: (tokens) => void (saved = tokens),
    redirectToAuthorization: () => {
      throw new Error('the JWT bearer grant has no redirect');
    },
    saveCodeVerifier: () => {},
    codeVerifier: () => '',
    prepareTokenRequest: (scope) => {
      const fields = { grant_type: JWT_BEARER, assertion: context.valid_jwt };
      return new URLSearchParams(scope ? { ...fields, scope } : fields);
    }
  };
}

// The extensions' grants, each the user's choice by scenario (as the official example client chooses):
// the client credentials grant through the SDK's providers (`sdk`: its ClientCredentialsProvider and
// PrivateKeyJwtProvider), and workload identity federation's JWT bearer grant when the context carries
// the workload's JWT. Undefined for the authorization code flow.
export function grantProvider(contract, sdk, clientName) {
  const { client_id: clientId, client_secret: clientSecret, private_key_pem: privateKey } = contract.context;
  if (contract.scenario === 'auth/client-credentials-basic') {
    return new sdk.ClientCredentialsProvider({ clientId, clientSecret });
  }
  if (contract.scenario === 'auth/client-credentials-jwt') {
    const algorithm = contract.context.signing_algorithm || 'ES256';
    return new sdk.PrivateKeyJwtProvider({ clientId, privateKey, algorithm });
  }
  if (contract.context.valid_jwt) return workloadProvider(contract.context, clientName);
  return undefined;
}

// Streamable HTTP with the SDK's transport (`Transport`) carrying `authProvider`, connected through
// `authorization` (which completes what the SDK asks the user for).
export function connectHttp(client, contract, authorization, Transport, authProvider) {
  const url = new URL(contract.url);
  return authorization.connect(client, () => new Transport(url, { authProvider }));
}

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

function randomState() {
  return globalThis.crypto.randomUUID().replaceAll('-', '');
}

// The user's browser: the authorization URL visited, its redirect read, not followed.
async function visit(url) {
  const response = await fetch(url, { redirect: 'manual' });
  const location = response.headers.get('location') ?? '';
  return new URL(location, url).searchParams;
}

// What the user's notification handler saw: the program registers it on its SDK's Client.
export const watch = { toolsChanged: false };

// x-cancel: the call made with a progress callback, and cancelled (aborted) at its first progress,
// as a user stops a long task; the SDK sends what it sends. The abort's rejection is the end asked for.
async function callCancelled(client, params, callWith) {
  const controller = new AbortController();
  let progressed = false;
  const options = {
    signal: controller.signal,
    onprogress: () => {
      progressed = true;
      controller.abort('the user cancelled');
    }
  };
  try {
    return await callWith(client, params, options);
  } catch (error) {
    if (!progressed) throw error;
    return undefined;
  }
}

export async function act(contract, client, callWith, authorization) {
  const steps = new Steps(authorization);
  const tools = (await steps.run('tools/list', () => client.listTools()))?.tools ?? [];
  if (contract.scenario === 'json-schema-ref-no-deref') return steps.failed;
  if (contract.scenario === 'json-schema-2020-12-preservation') {
    const schema = tools.find((tool) => tool.name === FOCAL_TOOL)?.inputSchema;
    await steps.run(`tools/call ${ECHO_TOOL}`, () =>
      client.callTool({ name: ECHO_TOOL, arguments: { schema } })
    );
    return steps.failed;
  }
  for (const tool of tools) {
    const params = { name: tool.name, arguments: argumentsFor(tool, contract.context) };
    const call =
      contract.scenario === 'x-cancel'
        ? () => callCancelled(client, params, callWith)
        : () => client.callTool(params);
    await steps.run(`tools/call ${tool.name}`, call);
  }
  // the list changed, or a call was cancelled and the session goes on (the SDK's cancellation is sent
  // without being awaited: the program must not close the transport under it)
  if (watch.toolsChanged || contract.scenario === 'x-cancel') {
    await steps.run('tools/list (again)', () => client.listTools());
  }
  const declared = client.getServerCapabilities() ?? {};
  if (declared.resources) {
    const listed = await steps.run('resources/list', () => client.listResources());
    for (const { uri } of listed?.resources ?? []) {
      await steps.run(`resources/read ${uri}`, () => client.readResource({ uri }));
    }
  }
  if (declared.prompts) {
    const listed = await steps.run('prompts/list', () => client.listPrompts());
    for (const { name, arguments: wanted } of listed?.prompts ?? []) {
      const required = (wanted ?? []).filter((arg) => arg.required);
      const args = Object.fromEntries(required.map((arg) => [arg.name, SAMPLE.string]));
      await steps.run(`prompts/get ${name}`, () => client.getPrompt({ name, arguments: args }));
    }
  }
  return steps.failed;
}

// Read the contract, connect with the program's `connect`, act, close; exit 0 only if every step did.
// `connect(contract, authorization)` makes the SDK's Client and connects it (`authorization.connect`
// over Streamable HTTP, which completes an authorization the SDK asked for and connects again on a new
// transport, as the SDKs' examples do). `callWith(client, params, options)` is the SDK's callTool with
// request options (signal, onprogress). `finish(transport, params)` is the SDK's finishAuth.
export async function main(connect, callWith, finish, clientName) {
  let contract;
  try {
    contract = readContract();
  } catch (error) {
    console.error(error.message);
    process.exit(2);
  }
  try {
    const authorization = new Authorization(contract, clientName, finish);
    const client = await connect(contract, authorization);
    const failed = await act(contract, client, callWith, authorization);
    await client.close();
    process.exit(failed ? 1 : 0);
  } catch (error) {
    console.error(error?.stack ?? error);
    process.exit(1);
  }
}
