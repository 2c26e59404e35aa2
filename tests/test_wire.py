"""The wire format between the grader and the kernel's agent: plain data only, arrays as .npy bytes."""
import numpy as np
import pytest

from grader.trusted import wire


def refuse(value):
    raise TypeError(f"not plain data: {type(value).__name__}")


def round_trip(value, with_buffers):
    buffers = [] if with_buffers else None
    tree = wire.pack(value, refuse, buffers)
    text = wire.dumps(tree)
    return wire.unpack(wire.loads(text, 10 ** 7), refuse, buffers or ())


@pytest.mark.parametrize("with_buffers", [True, False])
def test_plain_values_arrays_and_containers_round_trip(with_buffers):
    value = {"a": [1, 2.5, None, True, "x", (3, b"\x00\xff")], 7: np.arange(6, dtype="int16").reshape(2, 3),
             "big": 2 ** 70, "scalar": np.float32(1.5), "nan": float("nan")}
    back = round_trip(value, with_buffers)
    assert back["a"] == [1, 2.5, None, True, "x", (3, b"\x00\xff")] and back["big"] == 2 ** 70
    assert back[7].dtype == np.int16 and back[7].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert isinstance(back["scalar"], np.float32) and np.isnan(back["nan"])


def test_objects_arrays_and_deep_nesting_are_refused():
    with pytest.raises(TypeError):
        wire.pack(np.array([object()]), refuse)
    nested = []
    for _ in range(wire.MAX_DEPTH + 5):
        nested = [nested]
    with pytest.raises(ValueError, match="nested too deeply"):
        wire.pack(nested, refuse)
    with pytest.raises(ValueError, match="nested too deeply"):
        wire.unpack(wire.pack([[1]], refuse), refuse, depth=wire.MAX_DEPTH)


def test_unknown_trees_go_to_resolve_and_oversized_text_is_refused():
    assert wire.unpack({"ref": 5}, lambda tree: ("resolved", tree["ref"])) == ("resolved", 5)
    with pytest.raises(ValueError, match="unexpected float"):
        wire.unpack(1.5, refuse)  # floats travel as {"float": repr}, never bare
    with pytest.raises(ValueError, match="above the limit"):
        wire.loads("x" * 101, 100)


def test_pickled_arrays_never_load():
    import base64
    import io
    buffer = io.BytesIO()
    np.save(buffer, np.array([object()], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError):
        wire.unpack({"npy": base64.b64encode(buffer.getvalue()).decode()}, refuse)


def test_the_operations_are_named_once():
    from grader.trusted import kernel_agent
    assert set(kernel_agent.HANDLERS) == set(wire.OPERATIONS) and len(set(wire.OPERATIONS)) == len(wire.OPERATIONS)


def test_an_array_header_that_claims_more_than_its_bytes_is_refused_before_anything_is_allocated():
    import io
    import resource
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (10 ** 10,)})
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ValueError, match=r"array header says \(10000000000,\) of float64, but 16 bytes follow"):
        wire.unpack({"npy": 0}, refuse, [header.getvalue() + b"\0" * 16])
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # KB
    with pytest.raises(ValueError, match="but 0 bytes follow"):
        wire.load_npy(header.getvalue())


def test_a_message_of_more_items_than_the_limit_is_refused_before_it_is_decoded():
    text = "[" + ",".join(['{"float":"1"}'] * (wire.MAX_ITEMS + 1)) + "]"
    with pytest.raises(ValueError, match=f"above the limit of {wire.MAX_ITEMS:,}"):
        wire.loads(text, len(text))
    fits = "[" + ",".join(["1"] * wire.MAX_ITEMS) + "]"
    assert len(wire.loads(fits, len(fits))) == wire.MAX_ITEMS
