"""A Chainlit app whose conversations agentmem keeps: seed 000's app, with
agentmem as its data layer and no model.

    pip install './python[chainlit]'
    go run ./cmd/agentmem serve                        # agentmem on 127.0.0.1:8080
    export CHAINLIT_AUTH_SECRET=$(chainlit create-secret | tail -1 | cut -d'"' -f2)
    chainlit run examples/chainlit/app.py              # http://localhost:8000

Sign in with any name and the password "demo" (DEMO_PASSWORD): the
sidebar lists your conversations, which resume where they were. Instead
of calling a model, the app answers with what agentmem would give one:
the turns of the thread and what it knows of you from the others (tell it
"I live in Porto and I am vegetarian", then ask "Where should I eat
tonight?" in a new chat). AGENTMEM_URL and AGENTMEM_API_KEY (the admin
key, with --auth apikey) say where agentmem is.
"""

import os
from typing import Optional

import chainlit as cl
from chainlit.data import get_data_layer
from chainlit.types import ThreadDict

import agentmem
from agentmem.chainlit import AgentmemDataLayer


@cl.data_layer
def data_layer() -> AgentmemDataLayer:
    client = agentmem.AsyncClient(
        os.environ.get("AGENTMEM_URL", "http://127.0.0.1:8080"), api_key=os.environ.get("AGENTMEM_API_KEY")
    )
    return AgentmemDataLayer(client)


@cl.password_auth_callback
def login(username: str, password: str) -> Optional[cl.User]:
    # A demo: any name, one password. Chainlit lists threads for signed-in users only.
    if password == os.environ.get("DEMO_PASSWORD", "demo"):
        return cl.User(identifier=username, metadata={"provider": "password"})
    return None


@cl.on_chat_resume
async def resume(thread: ThreadDict) -> None:
    # Chainlit resumes a thread of the sidebar only when this is defined; the
    # page shows its steps, and agentmem's context holds its turns: nothing
    # to rebuild (seed 000 rebuilt its in-memory history here).
    pass


@cl.on_message
async def on_message(message: cl.Message) -> None:
    # What the model call would be given, from agentmem rather than the
    # in-memory list: the Responses API's instructions (what agentmem knows
    # of the user that bears on the message, and the thread's earlier turns,
    # within the token budget) and input (the message, once stored).
    layer = get_data_layer()
    assert isinstance(layer, AgentmemDataLayer)
    user, thread = await layer.session_thread(message)
    context = await layer.client.threads.context(thread, user, query=message.content, format="responses")

    # With a model: client.responses.create(model=…, instructions=context.instructions,
    # input=context.input, stream=True). No model here: an echo, with what
    # agentmem knows as a side element.
    reply = f"You said: {message.content}"
    elements = []
    if context.instructions:
        reply += "\n\nA model would be given what agentmem knows (see *Context*)."
        elements.append(cl.Text(name="Context", content=context.instructions, display="side"))
    await cl.Message(content=reply, elements=elements).send()
