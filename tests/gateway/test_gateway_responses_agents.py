"""OpenAI's Agents SDK on the gateway: its default model class (``OpenAIResponsesModel``,
the Responses API) runs an agent with a function tool against ``POST /v1/responses``
(`agentladder serve` in front of ``provider.py``; agents in ``conftest.py``)."""

from __future__ import annotations

import asyncio

import openai
from agents import Agent, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled

from tests.gateway.conftest import CLIENT
from tests.gateway.provider import Providers
from tests.served import Server


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


async def _run(server: Server, streamed: bool = False) -> str:
    made = openai.AsyncOpenAI(base_url=server.url("/v1"), api_key=CLIENT, max_retries=0)
    try:
        model = OpenAIResponsesModel(model="alpha", openai_client=made)
        agent = Agent(name="forecaster", instructions="Answer briefly.", model=model,
                      tools=[weather])  # fmt: skip
        if not streamed:
            result = await Runner.run(agent, "Weather in Paris?")
            return str(result.final_output)
        running = Runner.run_streamed(agent, "Weather in Paris?")
        async for _ in running.stream_events():
            pass
        return str(running.final_output)
    finally:
        await made.close()


def test_an_agents_sdk_agent_runs_a_tool_through_the_gateway(
    shared_gateway: Server, providers: Providers
) -> None:
    """The agent asks alpha, which calls ``weather``; the SDK runs it and sends its output
    back; alpha's answer after it is the run's final output."""
    set_tracing_disabled(True)
    before = len(providers.seen())
    assert asyncio.run(_run(shared_gateway)) == "answer from alpha: sunny in Paris"
    sent = providers.seen()[before:]
    assert [s["model"] for s in sent] == ["good:alpha", "good:alpha"]
    assert sent[0]["messages"][0] == {"role": "system", "content": "Answer briefly."}
    assert sent[1]["messages"][-1]["role"] == "tool"


def test_an_agents_sdk_agent_streams_through_the_gateway(shared_gateway: Server) -> None:
    """``Runner.run_streamed`` reads the gateway's Responses events: the tool call, then
    the answer after its output."""
    set_tracing_disabled(True)
    assert asyncio.run(_run(shared_gateway, streamed=True)) == "answer from alpha: sunny in Paris"
