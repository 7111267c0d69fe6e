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

const DEFAULT_VERSION = '2025-11-25';
const FOCAL_TOOL = 'json_schema_2020_12_tool';
const ECHO_TOOL = 'json_schema_echo';
const SAMPLE = { string: 'x', integer: 1, number: 1, boolean: true };

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
  const schema = tool.inputSchema ?? {};
  const properties = schema.properties ?? {};
  const args = {};
  for (const name of schema.required ?? []) {
    const type = properties[name]?.type;
    if (type in SAMPLE) args[name] = SAMPLE[type];
  }
  return args;
}

// Each step runs, a failure is reported on stderr and the session goes on; the count decides the exit.
class Steps {
  failed = 0;
  async run(what, step) {
    try {
      return await step();
    } catch (error) {
      this.failed++;
      console.error(`${what} failed: ${error?.message ?? error}`);
      return undefined;
    }
  }
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

export async function act(contract, client, callWith) {
  const steps = new Steps();
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
// `callWith(client, params, options)` is the SDK's callTool with request options (signal, onprogress).
export async function main(connect, callWith) {
  let contract;
  try {
    contract = readContract();
  } catch (error) {
    console.error(error.message);
    process.exit(2);
  }
  try {
    const client = await connect(contract);
    const failed = await act(contract, client, callWith);
    await client.close();
    process.exit(failed ? 1 : 0);
  } catch (error) {
    console.error(error?.stack ?? error);
    process.exit(1);
  }
}
