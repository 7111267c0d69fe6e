// A client program on the TypeScript SDK v1 (npm @modelcontextprotocol/sdk): its Client on the SDK's
// Streamable HTTP, HTTP+SSE or stdio transport, as a user of v1 writes it. The client declares sampling
// and roots (contract.mjs's stub model and root folder, answered by the SDK's request handlers). The
// elicitation handler accepts every form with only its required fields without a default filled in
// (contract.mjs's acceptForm) and the client declares form elicitation with applyDefaults, the SDK's
// own switch for filling in the schema's defaults. v1 offers no choice of protocol revision (it sends
// its latest), so the contract's revision is not passed on. A tool list change notification is noted
// for the user to list again; x-cancel's call is aborted at its progress. Over Streamable HTTP the
// transport carries the SDK's OAuth (contract.mjs's Authorization, below).
import {
  ClientCredentialsProvider,
  PrivateKeyJwtProvider
} from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ToolListChangedNotificationSchema
} from '@modelcontextprotocol/sdk/types.js';

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

// The SDK's OAuth provider: the extensions' grants in their scenarios (v1 has no enterprise-managed
// authorization provider, nor DPoP), else the headless authorization code provider.
function authProviderOf(contract, authorization) {
  const sdk = { ClientCredentialsProvider, PrivateKeyJwtProvider };
  return grantProvider(contract, sdk, 'kit-tsv1-client') ?? authorization.provider;
}

// Task-augmented sampling (2025-11-25's experimental tasks), on the SDK's own task support: the client
// declares it and keeps its tasks in the SDK's InMemoryTaskStore, whose tasks/get and tasks/result the
// SDK answers; the handler makes the task, stores the stub model's answer in it and returns the task,
// as the SDK's task examples do.
const TASK_SAMPLING = { tasks: { requests: { sampling: { createMessage: {} } } } };

async function sample(request, extra) {
  if (!request.params.task) return SAMPLED;
  const task = await extra.taskStore.createTask({ ttl: request.params.task.ttl });
  await extra.taskStore.storeTaskResult(task.taskId, 'completed', SAMPLED);
  return { task };
}

await main(async (contract, authorization) => {
  const client = new Client(
    { name: 'kit-tsv1-client', version: '1.0.0' },
    { capabilities: { ...CAPABILITIES, ...TASK_SAMPLING }, taskStore: new InMemoryTaskStore() }
  );
  client.setRequestHandler(CreateMessageRequestSchema, sample);
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: ROOTS }));
  client.setRequestHandler(ElicitRequestSchema, acceptForm);
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    watch.toolsChanged = true;
  });
  if (contract.transport === 'http') {
    const authProvider = authProviderOf(contract, authorization);
    return connectHttp(client, contract, authorization, StreamableHTTPClientTransport, authProvider);
  }
  await client.connect(transportOf(contract));
  return client;
},
  (client, params, options) => client.callTool(params, undefined, options),
  (transport, params) => transport.finishAuth(params.get('code')),
  'kit-tsv1-client'
);
