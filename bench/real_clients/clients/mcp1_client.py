"""A client program on the Python `mcp` SDK 1.x (`ClientSession` over the SDK's transports).

Why: the kit judges the SDK's client, so this is what a user of mcp 1.x writes: open the SDK's transport
for the URL (Streamable HTTP, or HTTP+SSE) or for the stdio command, hand its streams to a
`ClientSession` with sampling, elicitation and roots callbacks (the SDK declares what it is given),
initialize, and make plain session calls. mcp 1.x offers no choice of protocol revision (it sends its
latest), so the contract's revision is not passed on. The callback accepts every form with only its
required fields without a default filled in (`contract.form_content`): defaults are the SDK's to apply.
Over Streamable HTTP the SDK's HTTP client carries the SDK's OAuth provider (mcp_oauth.py).
"""

from __future__ import annotations

import sys
from contextlib import AsyncExitStack
from typing import Any

from contract import WATCH, Contract, SdkSession, act, main
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.experimental.task_handlers import ExperimentalTaskHandlers
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.experimental.tasks.in_memory_task_store import InMemoryTaskStore
from mcp_handlers import accept_form, list_roots, sample
from mcp_oauth import oauth_provider


class SamplingTasks:
    """Task-augmented sampling (2025-11-25's experimental tasks) on the SDK's own task support: its
    experimental task handlers (which make the session declare `tasks.requests.sampling.createMessage`)
    over its in-memory task store. A sampling task is made, answered by the stub model at once and
    kept for the server's `tasks/get` and `tasks/result`."""

    def __init__(self) -> None:
        self.store = InMemoryTaskStore()

    def handlers(self) -> ExperimentalTaskHandlers:
        return ExperimentalTaskHandlers(
            augmented_sampling=self.sample, get_task=self.get, get_task_result=self.result
        )

    async def sample(
        self, context: Any, params: types.CreateMessageRequestParams, metadata: types.TaskMetadata
    ) -> types.CreateTaskResult:
        task = await self.store.create_task(metadata)
        await self.store.store_result(task.taskId, await sample(context, params))
        done = await self.store.update_task(task.taskId, status="completed")
        return types.CreateTaskResult(task=done)

    async def get(
        self, _context: Any, params: types.GetTaskRequestParams
    ) -> types.GetTaskResult | types.ErrorData:
        task = await self.store.get_task(params.taskId)
        if task is None:
            return types.ErrorData(code=types.INVALID_PARAMS, message=f"no task {params.taskId}")
        return types.GetTaskResult.model_validate(task.model_dump(by_alias=True))

    async def result(
        self, _context: Any, params: types.GetTaskPayloadRequestParams
    ) -> types.GetTaskPayloadResult | types.ErrorData:
        result = await self.store.get_result(params.taskId)
        if result is None:
            return types.ErrorData(code=types.INVALID_PARAMS, message=f"no result for task {params.taskId}")
        return types.GetTaskPayloadResult.model_validate(result.model_dump(by_alias=True, exclude_none=True))


async def run(contract: Contract) -> int:
    async with AsyncExitStack() as stack:
        if contract.transport == "stdio":
            server = StdioServerParameters(command=contract.command[0], args=contract.command[1:])
            streams = await stack.enter_async_context(stdio_client(server))
        elif contract.transport == "sse":
            streams = await stack.enter_async_context(sse_client(contract.url))
        else:
            auth = oauth_provider(contract, "kit-mcp1-client")
            http = await stack.enter_async_context(create_mcp_http_client(auth=auth))
            streams = await stack.enter_async_context(streamable_http_client(contract.url, http_client=http))
        session = await stack.enter_async_context(
            ClientSession(
                streams[0],
                streams[1],
                sampling_callback=sample,
                elicitation_callback=accept_form,
                list_roots_callback=list_roots,
                message_handler=WATCH.handle,
                experimental_task_handlers=SamplingTasks().handlers(),
            )
        )
        initialized = await session.initialize()
        declared = initialized.capabilities.model_dump(exclude_none=True)
        return await act(contract, SdkSession(session, declared))


if __name__ == "__main__":
    sys.exit(main(run))
