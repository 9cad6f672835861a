#!/usr/bin/env python3
"""An agent's side of toolnexus, in Python over gRPC (grpcio).

List the tools, export them in the shape OpenAI's chat API takes, then run
the tool call a model made with ExecuteStream — printing the tool's output,
progress and log messages as they arrive — and turn the result into the
"tool" message that goes back to the model. No LLM is involved: the model's
tool call is replayed from a fixed value (or from the command line).

    python3 agent.py [ADDR] [TOOL ARGS_JSON]

ADDR defaults to $TOOLNEXUS_ADDR, then 127.0.0.1:50051. $TOOLNEXUS_TOKEN,
when set, is sent as a bearer token. A call that suspends (OUTCOME_PENDING)
is resumed with $TOOLNEXUS_ANSWER (a JSON value) when it is set. Exit codes: 0 the call succeeded, 1 the
tool reported a failure (is_error), 2 the server could not be used.

The stubs in gen/ are generated from proto/ by buf with protoc's Python
plugin and grpc_python_plugin (buf.gen.python.yaml; `make generate`).
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))

import grpc  # noqa: E402
from google.protobuf import json_format  # noqa: E402

from toolnexus.v1 import registry_service_pb2 as rs  # noqa: E402
from toolnexus.v1 import registry_service_pb2_grpc as rs_grpc  # noqa: E402
from toolnexus.v1 import tool_pb2  # noqa: E402


def list_tools(registry, metadata):
    """Every tool the caller may use, following next_page_token to the end."""
    tools, token, revision = [], "", 0
    while True:
        page = registry.ListTools(rs.ListToolsRequest(page_token=token), metadata=metadata, timeout=10)
        tools.extend(page.tools)
        revision = page.revision
        token = page.next_page_token
        if not token:
            return tools, revision


def replayed_call(names, tool, args):
    """The call the model "made": debug_echo when the server has the debug
    tools, otherwise the todowrite builtin, which every default server has."""
    if tool:
        return {"id": "call_1", "type": "function", "function": {"name": tool, "arguments": args or "{}"}}
    if "debug_echo" in names:
        return {"id": "call_1", "type": "function",
                "function": {"name": "debug_echo", "arguments": '{"greeting":"hello from python","n":3}'}}
    return {"id": "call_1", "type": "function", "function": {
        "name": "todowrite", "arguments": '{"todos":[{"id":"1","text":"call toolnexus from python","completed":true}]}'}}


def answer_data(kind, answer):
    """The answer's data for a pending request. A sampling request asks the
    agent's model for a completion: the model's text goes back as MCP's
    CreateMessageResult. Anything else (an elicitation's content, the text an
    A2A agent asked for, the question tool's answers) goes as it is."""
    if kind == "sampling" and isinstance(answer, str):
        return {"role": "assistant", "model": "example-model", "content": {"type": "text", "text": answer}}
    return answer


def resume(registry, metadata, req, result):
    """A call that suspended (an MCP server's elicitation or sampling, an A2A
    agent's input-required, the question tool) waits for an answer. Show
    what it asks; when $TOOLNEXUS_ANSWER holds one (a JSON value: the
    elicitation's content, the completion's text for sampling...), send it
    with the same name and arguments, and return what the call does next."""
    while result.outcome == tool_pb2.OUTCOME_PENDING:
        p = result.pending
        print(f"pending: {p.kind} {json.dumps(p.prompt)}")
        answer = os.environ.get("TOOLNEXUS_ANSWER")
        if answer is None:
            return result
        ans = tool_pb2.Answer(id=p.id, ok=True)
        json_format.ParseDict(answer_data(p.kind, json.loads(answer)), ans.data)
        req = rs.ExecuteRequest(name=req.name, arguments_json=req.arguments_json, call_id=req.call_id, answer=ans)
        result = registry.Execute(req, metadata=metadata, timeout=60).result
        if result.outcome == tool_pb2.OUTCOME_PENDING and result.pending.id == p.id:
            return result
    return result


def run(addr, tool, args):
    metadata = []
    token = os.environ.get("TOOLNEXUS_TOKEN")
    if token:
        metadata.append(("authorization", "Bearer " + token))  # never print it
    with grpc.insecure_channel(addr) as channel:
        registry = rs_grpc.RegistryServiceStub(channel)
        tools, revision = list_tools(registry, metadata)
        print(f"connected to {addr} (registry revision {revision})")
        print(f"tools ({len(tools)}): {', '.join(t.name for t in tools)}")

        # The exact JSON OpenAI's `tools` request field takes.
        exported = registry.ExportTools(rs.ExportToolsRequest(format=rs.EXPORT_FORMAT_OPENAI), metadata=metadata, timeout=10)
        openai_tools = json.loads(exported.json)
        print(f"openai tools: {len(openai_tools)} function declarations")
        if openai_tools:
            first = openai_tools[0]
            print(f"first declaration: type={first['type']} function keys={','.join(first['function'].keys())}")

        call = replayed_call({t.name for t in tools}, tool, args)
        print(f"model called: {call['function']['name']} {call['function']['arguments']}")

        # arguments_json hands the model's text over verbatim (exact numbers).
        req = rs.ExecuteRequest(name=call["function"]["name"], arguments_json=call["function"]["arguments"], call_id=call["id"])
        result = None
        for event in registry.ExecuteStream(req, metadata=metadata, timeout=60):
            kind = event.WhichOneof("event")
            if kind == "output":
                stream = "stderr" if event.output.stream == rs.OUTPUT_STREAM_STDERR else "stdout"
                print(f"live {stream}: {event.output.data.decode('utf-8', 'replace')!r}")
            elif kind == "progress":
                p = event.progress
                total = f"/{p.total:g}" if p.total else ""
                print(f"progress: {p.progress:g}{total} {p.message}".rstrip())
            elif kind == "log":
                data = json_format.MessageToJson(event.log.data, indent=None)
                print(f"log [{event.log.level}] {event.log.logger}: {data}")
            elif kind == "result":
                result = event.result  # always the last event
        if result is None:
            raise RuntimeError("ExecuteStream ended without a result")

        result = resume(registry, metadata, req, result)

        # A failing tool is a normal result: the model reads it and retries.
        outcome = tool_pb2.Outcome.Name(result.outcome).removeprefix("OUTCOME_").lower()
        print(f"result: {outcome} is_error={str(result.is_error).lower()} output={json.dumps(result.output)}")
        for part in result.content:
            kind = part.WhichOneof("kind")
            if kind in ("image", "audio"):
                media = getattr(part, kind)
                print(f"part: {kind} {media.mime_type} {len(media.data)} bytes")
            elif kind == "resource":
                print(f"part: resource {part.resource.uri}")
        if result.HasField("metadata"):
            print(f"metadata: {json_format.MessageToJson(result.metadata, indent=None, sort_keys=True)}")
        message = {"role": "tool", "tool_call_id": call["id"], "content": result.output}
        print(f"tool message: {json.dumps(message)}")
        return 1 if result.is_error else 0


def main(argv):
    addr = (argv[1] if len(argv) > 1 and argv[1] else None) or os.environ.get("TOOLNEXUS_ADDR") or "127.0.0.1:50051"
    tool = argv[2] if len(argv) > 2 else None
    args = argv[3] if len(argv) > 3 else None
    try:
        return run(addr, tool, args)
    except grpc.RpcError as e:
        print(f"toolnexus at {addr}: {e.code().name.lower()}: {e.details()}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
