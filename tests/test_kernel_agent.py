"""The agent in the student's kernel, run here on requests as the grader packs them (no kernel needed)."""
import builtins
import getpass
import sys

import numpy as np
import pytest

from grader.trusted import kernel_agent, wire


class RequestComm:
    """The agent's side of the grader's request comm: what it sends back is kept."""

    def __init__(self):
        self.sent = []

    def send(self, data, buffers):
        self.sent.append((data["id"], wire.loads(data["reply"], 10 ** 8), [bytes(b) for b in buffers]))


@pytest.fixture
def agent():
    comm = RequestComm()

    def ask(op, *args):
        buffers = []
        text = wire.dumps({"op": op, "args": wire.pack(list(args), kernel_agent._other, buffers)})
        kernel_agent._requests["1"] = (text, buffers, comm)
        kernel_agent.serve("1")
        request_id, reply, reply_buffers = comm.sent.pop()
        assert request_id == "1"
        if "error" in reply:
            return reply["error"]
        return wire.unpack(reply["value"], lambda tree: ("ref", tree["ref"]), reply_buffers)
    return ask


def test_a_call_answers_data_and_changes_come_back_only_as_positions(agent, monkeypatch):
    def scale(values, factor=2):
        values *= 0
        return values.sum() + factor

    monkeypatch.setitem(sys.modules["__main__"].__dict__, "scale", scale)
    ref = agent("global", "scale")
    assert ref[0] == "ref"
    result, changed = agent("call_changes", kernel_agent._objects[ref[1]],
                            [np.arange(3.0)], {"factor": 5})
    assert float(result) == 5.0 and changed == [0]


def test_errors_come_back_with_their_builtin_base_and_a_trimmed_traceback(agent):
    class Odd(KeyError):
        pass

    def fail():
        raise Odd("no such key")

    error = agent("call", fail, [], {})
    assert error["name"] == "Odd" and error["builtin"] == "KeyError" and "no such key" in error["message"]
    assert "raise Odd" in error["traceback"] and len(error["traceback"]) <= 8000, error["traceback"]
    assert agent("global", "surely_not_defined_anywhere")["builtin"] == "NameError"


def test_items_cross_once_and_globals_are_swapped_and_restored(agent):
    class Liar:
        def __len__(self):
            return 3

        def __iter__(self):
            return iter([])

    assert agent("items", Liar()) == []
    main = sys.modules["__main__"].__dict__
    number = agent("set_globals", {"attention_test_value": 41})
    assert main["attention_test_value"] == 41
    agent("restore_globals", number)
    assert "attention_test_value" not in main


def test_only_course_helpers_are_resolved_by_name():
    with pytest.raises(ValueError, match="not a course helper"):
        kernel_agent._resolve({"helper": ["os", "system"]})
    assert kernel_agent._resolve({"helper": ["attention_course.checks", "check_close"]}).__name__ == "check_close"


def test_importing_the_agent_registers_nothing_until_install(monkeypatch):
    registered = []

    class Manager:
        def register_target(self, name, handler):
            registered.append(name)

    monkeypatch.setattr(kernel_agent, "get_comm_manager", lambda: Manager())
    assert registered == []
    kernel_agent.install()
    assert registered == [wire.REQUEST_TARGET]


def test_a_request_without_a_call_back_is_answered_in_the_comms_handler_where_input_reaches_nobody(monkeypatch):
    comm, saved_input, saved_getpass = RequestComm(), builtins.input, getpass.getpass
    comm.on_msg = lambda handler: setattr(comm, "handler", handler)
    kernel_agent._receive_request(comm, None)

    def deliver(request_id, op, *args, by_execute=False):
        buffers = []
        text = wire.dumps({"op": op, "args": wire.pack(list(args), kernel_agent._other, buffers), "limit": 10 ** 6})
        comm.handler({"content": {"data": {"id": request_id, "request": text, "by_execute": by_execute}},
                      "buffers": buffers})

    deliver("1", "call", lambda: input("name? ") + getpass.getpass("key: ", stream=None), [], {})
    assert comm.sent.pop() == ("1", {"value": ""}, []), "input() and getpass() in student code get an empty line"
    assert (builtins.input, getpass.getpass) == (saved_input, saved_getpass), "restored after the request"
    stale = kernel_agent._callback(7)
    deliver("2", "call", stale, [3], {})
    assert "belonged to a test that has ended" in comm.sent.pop()[1]["error"]["message"]
    deliver("3", "call", lambda: np.zeros(10 ** 6), [], {})
    error = comm.sent.pop()[1]["error"]
    assert error["builtin"] == "ValueError" and "above the grader's limit of 1,000,000" in error["message"]
    deliver("4", "global", "len", by_execute=True)
    assert comm.sent == [] and "4" in kernel_agent._requests, "kept for the execute request that serves it"
    monkeypatch.setattr(builtins, "input", lambda prompt="": '{"value": 6}')
    kernel_agent._requests["4"] = (wire.dumps({"op": "call", "args": wire.pack([stale, [3], {}], kernel_agent._other)}),
                                   [], comm)
    kernel_agent.serve("4")
    assert comm.sent.pop()[1] == {"value": 6}, "served by an execute request, a call-back reaches the grader"
