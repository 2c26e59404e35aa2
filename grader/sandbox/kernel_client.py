"""Kernel clients whose sockets never hold more of a message than the grader allows.

A grading kernel is the student's code: it holds the connection key and can send any message, of
any size, on any channel. Each socket refuses a frame above `max_message_bytes` before receiving it
(zmq's MAXMSGSIZE), and a message whose frames add up to more is read frame by frame and dropped as
it comes; a message whose JSON part (header, metadata, content: what jupyter_client decodes into Python
objects, which can take several times its size) is above `max_json_bytes` is dropped before it is
decoded. Either way the grader sees a short stand-in instead: a note on stderr (iopub), an error reply
(shell), an empty input request (stdin).
"""
import json
import math
import time
from queue import Empty

import zmq
import zmq.asyncio
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.blocking import BlockingKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel, ZMQSocketChannel
from jupyter_client.connect import channel_socket_types
from jupyter_client.session import DELIM, Session
from traitlets import Type

from grader.limits import FIXED, GradingLimits
from grader.trusted.wire import MAX_ITEMS

DEFAULT_MAX_MESSAGE_BYTES = GradingLimits.message_mb.default_value * 2 ** 20
DEFAULT_MAX_JSON_BYTES = GradingLimits.message_json_mb.default_value * 2 ** 20
# A header read to address the stand-in of a refused message: larger ones are not decoded.
MAX_HEADER_BYTES = FIXED["message_header_bytes"].value


def _refused(frames: list, total: int, limit: int, channel: str, part: str = "message") -> dict:
    """The stand-in for a message that was too large, addressed like the original."""
    try:
        start = next(i for i, frame in enumerate(frames) if len(frame.buffer) == len(DELIM)
                     and bytes(frame) == DELIM) + 1
        if any(len(frames[start + k].buffer) > MAX_HEADER_BYTES for k in (1, 2)):
            raise ValueError("a header too large to read")
        header, parent = (json.loads(bytes(frames[start + k])) for k in (1, 2))
        if not (isinstance(header, dict) and isinstance(parent, dict)):
            raise ValueError("not a message header")
    except (StopIteration, IndexError, ValueError):
        header, parent = {}, {}
    what = {"message": "a message of {:,} bytes", "JSON part": "a message whose JSON part is {:,} bytes",
            "JSON part's items": "a message whose JSON part holds about {:,} items"}[part].format(total)
    note = f"{what} from the kernel was refused: above the grader's limit of {limit:,}"
    stand_ins = {"iopub": ("stream", {"name": "stderr", "text": f"[{note}]\n"}),
                 "shell": ("execute_reply", {"status": "error", "ename": "MessageTooLarge", "evalue": note,
                                             "traceback": [note], "execution_count": None}),
                 "stdin": ("input_request", {"prompt": "", "password": False})}
    kind, content = stand_ins.get(channel, ("refused", {}))
    header = {**header, "msg_type": kind}
    return {"header": header, "parent_header": parent, "msg_id": header.get("msg_id", ""), "msg_type": kind,
            "metadata": {}, "content": content, "buffers": []}


class _Frames:
    """Frames of one message, kept while their total stays under the limit."""

    def __init__(self, limit: int, json_limit: int):
        self.limit, self.json_limit, self.total, self.frames = limit, json_limit, 0, []

    def add(self, frame) -> None:
        size = len(frame.buffer)
        self.total += size
        # Past the limit only the first small frames stay (identities, delimiter, headers): the stand-in's.
        if self.total <= self.limit or (len(self.frames) < 8 and size <= 65536):
            self.frames.append(frame)

    def message(self, session: Session, channel: str) -> dict:
        if self.total > self.limit:
            return _refused(self.frames, self.total, self.limit, channel)
        _, frames = session.feed_identities(self.frames, copy=False)
        parts = frames[1:5]  # header, parent, metadata, content
        json_bytes = sum(len(frame.buffer) for frame in parts)
        if json_bytes > self.json_limit:
            return _refused(self.frames, json_bytes, self.json_limit, channel, part="JSON part")
        # Decoded, an item can cost a hundred times its characters (an empty list): counted as grader.trusted.wire does.
        items = sum(bytes(frame).count(b",") for frame in parts) + 1
        if items > MAX_ITEMS:
            return _refused(self.frames, items, MAX_ITEMS, channel, part="JSON part's items")
        return session.deserialize(frames, copy=False)


class LimitedChannel(ZMQSocketChannel):
    limit = DEFAULT_MAX_MESSAGE_BYTES
    json_limit = DEFAULT_MAX_JSON_BYTES
    name = ""

    def _recv(self, **kwargs):
        frames = _Frames(self.limit, self.json_limit)
        frames.add(self.socket.recv(copy=False))
        while self.socket.getsockopt(zmq.RCVMORE):
            frames.add(self.socket.recv(copy=False))
        return frames.message(self.session, self.name)


class AsyncLimitedChannel(AsyncZMQSocketChannel):
    limit = DEFAULT_MAX_MESSAGE_BYTES
    json_limit = DEFAULT_MAX_JSON_BYTES
    name = ""

    async def _recv(self, **kwargs):
        frames = _Frames(self.limit, self.json_limit)
        frames.add(await self.socket.recv(copy=False))
        while self.socket.getsockopt(zmq.RCVMORE):
            frames.add(await self.socket.recv(copy=False))
        return frames.message(self.session, self.name)


class LimitedClientMixin:
    """Sockets with MAXMSGSIZE set before they connect; channels that drop what adds up to too much."""

    max_message_bytes = DEFAULT_MAX_MESSAGE_BYTES  # set before the channels start
    max_json_bytes = DEFAULT_MAX_JSON_BYTES

    def _create_connected_socket(self, channel, identity=None):
        sock = self.context.socket(channel_socket_types[channel])
        sock.linger = 1000
        sock.setsockopt(zmq.MAXMSGSIZE, int(self.max_message_bytes))  # must precede connect
        if identity:
            sock.identity = identity
        sock.connect(self._make_url(channel))
        return sock

    def _limited_channel(self, name: str):
        """jupyter_client's channel `name`, given this client's limit and its name when first made."""
        made = getattr(self, f"_{name}_channel") is None
        channel = getattr(super(LimitedClientMixin, self), f"{name}_channel")
        if made:
            channel.limit, channel.json_limit, channel.name = (int(self.max_message_bytes),
                                                               int(self.max_json_bytes), name)
        return channel

    iopub_channel = property(lambda self: self._limited_channel("iopub"))
    shell_channel = property(lambda self: self._limited_channel("shell"))
    stdin_channel = property(lambda self: self._limited_channel("stdin"))


class LimitedKernelClient(LimitedClientMixin, AsyncKernelClient):
    """nbclient's client for a grading kernel."""

    iopub_channel_class = Type(AsyncLimitedChannel)
    shell_channel_class = Type(AsyncLimitedChannel)
    stdin_channel_class = Type(AsyncLimitedChannel)
    flushed_messages = 1000  # IOPub messages dropped at most once the kernel is ready

    async def wait_for_ready(self, timeout=None):
        """jupyter_client's wait (a kernel_info reply, and IOPub connected: it carries that request's status),
        except that IOPub is then emptied of what has arrived instead of until it has been quiet for 0.2 s,
        a pause per graded notebook: nbclient reads only the messages of the cell it runs."""
        deadline = time.monotonic() + (math.inf if timeout is None else timeout)
        while True:
            self.kernel_info()
            try:
                reply = await self.shell_channel.get_msg(timeout=1)
            except Empty:
                reply = None
            if reply is not None and reply["msg_type"] == "kernel_info_reply":
                try:
                    await self.iopub_channel.get_msg(timeout=0.2)
                except Empty:
                    pass  # IOPub not connected yet: ask again
                else:
                    self._handle_kernel_info_reply(reply)
                    break
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout} seconds")
        for _ in range(self.flushed_messages):
            if not await self.iopub_channel.msg_ready():
                break
            await self.iopub_channel.get_msg(timeout=0)


class LimitedBlockingKernelClient(LimitedClientMixin, BlockingKernelClient):
    """The grader's own client for the tests' requests (grader.trusted.bridge.KernelBridge)."""

    iopub_channel_class = Type(LimitedChannel)
    shell_channel_class = Type(LimitedChannel)
    stdin_channel_class = Type(LimitedChannel)
