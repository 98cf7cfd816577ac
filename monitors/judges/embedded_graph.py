"""The embedded judge's model graph, rewritten at load so the int8 embedding tables are
not folded into float32 (see :func:`gather_int8_tables`).

The model stores each weight W as int8 `q` and a float scale `s`: W = Mul(Cast(q), s).
onnxruntime folds those constants into float32 tensors when the session is built: the
word-embedding table alone becomes 30,522 x 384 x 4 bytes = 45 MiB. For a table that
is only gathered from, `Gather(Mul(Cast(q), s), ids)` equals `Mul(Cast(Gather(q, ids)),
Gather(s, ids))` element for element (Cast and Mul are exact and elementwise; the scale
is one per row), so the rewritten graph gathers int8 rows and dequantises only those:
the same float32 values, bit for bit, and the table stays int8 (11 MiB). The MatMul
weights stay folded: dequantising them on every run would cost CPU, and a product
scaled after the MatMul would round differently. The rewrite edits the protobuf wire
format of ModelProto.graph.node directly (no `onnx` dependency).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["gather_int8_tables"]


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _put_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _split(buf: bytes) -> list[tuple[int, int, bytes]]:
    """(field number, wire type, raw bytes of the whole field: key included) of each field
    of a protobuf message, in order."""
    out, pos = [], 0
    while pos < len(buf):
        start = pos
        key, pos = _varint(buf, pos)
        num, wire = key >> 3, key & 7
        if wire == 0:
            pos = _varint(buf, pos)[1]
        elif wire == 2:
            size, pos = _varint(buf, pos)
            pos += size
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        out.append((num, wire, buf[start:pos]))
    return out


def _payload(raw: bytes) -> bytes:
    """The payload of one length-delimited field's raw bytes."""
    _, pos = _varint(raw, 0)
    size, pos = _varint(raw, pos)
    return raw[pos : pos + size]


def _len_field(num: int, payload: bytes) -> bytes:
    return _put_varint(num << 3 | 2) + _put_varint(len(payload)) + payload


class _Node:
    """The NodeProto fields the rewrite reads: input 1, output 2, name 3, op_type 4
    (attributes and any other field are kept as raw bytes)."""

    def __init__(self, raw: bytes) -> None:
        self.inputs: list[str] = []
        self.outputs: list[str] = []
        self.name = self.op_type = ""
        self.rest: list[bytes] = []
        for num, _wire, field in _split(_payload(raw)):
            text = _payload(field).decode() if num in (1, 2, 3, 4) else ""
            if num == 1:
                self.inputs.append(text)
            elif num == 2:
                self.outputs.append(text)
            elif num == 3:
                self.name = text
            elif num == 4:
                self.op_type = text
            else:
                self.rest.append(field)

    @staticmethod
    def make(
        inputs: Sequence[str], outputs: Sequence[str], name: str, op_type: str, rest: list[bytes]
    ) -> bytes:
        body = b"".join(
            [_len_field(1, i.encode()) for i in inputs]
            + [_len_field(2, o.encode()) for o in outputs]
            + [_len_field(3, name.encode()), _len_field(4, op_type.encode()), *rest]
        )
        return _len_field(1, body)


def _initializers(graph: list[tuple[int, int, bytes]]) -> dict[str, tuple[int, list[int]]]:
    """{name: (TensorProto data type, dims)} of the graph's initializers."""
    out = {}
    for num, _wire, field in graph:
        if num != 5:  # GraphProto.initializer
            continue
        dims: list[int] = []
        name, dtype = "", 0
        for tnum, twire, tfield in _split(_payload(field)):
            if tnum == 1 and twire == 0:  # TensorProto.dims, unpacked
                dims.append(_varint(tfield, 1)[0])
            elif tnum == 1:  # dims, packed
                body, pos = _payload(tfield), 0
                while pos < len(body):
                    dim, pos = _varint(body, pos)
                    dims.append(dim)
            elif tnum == 2:  # data_type
                dtype = _varint(tfield, 1)[0]
            elif tnum == 8:  # name
                name = _payload(tfield).decode()
        out[name] = (dtype, dims)
    return out


def _axis0(rest: list[bytes]) -> bool:
    """True when a Gather node's other fields are at most an `axis` attribute of 0."""
    for field in rest:
        num, _wire, _raw = _split(field)[0]
        if num != 5:  # NodeProto.attribute; anything else (domain, doc): leave the node
            return False
        attr = {n: raw for n, _w, raw in _split(_payload(field))}
        if 1 not in attr or _payload(attr[1]) != b"axis" or _varint(attr.get(3, b"\x18\x00"), 1)[0]:
            return False  # AttributeProto.name 1, .i 3
    return True


def gather_int8_tables(model: bytes) -> tuple[bytes, int]:
    """`model` (ModelProto bytes) with each `Gather(Mul(Cast(q), s), ids)` of an int8
    table q (n, d) with a float scale s (n, 1) rewritten to `Mul(Cast(Gather(q, ids)),
    Gather(s, ids))`, and how many were rewritten (0: `model` unchanged). The gathered
    float32 values are the same, bit for bit."""
    top = _split(model)
    at = next((i for i, (num, wire, _) in enumerate(top) if num == 7 and wire == 2), None)
    if at is None:
        return model, 0
    graph = _split(_payload(top[at][2]))
    inits = _initializers(graph)
    nodes = {i: _Node(raw) for i, (num, _w, raw) in enumerate(graph) if num == 1}
    producer = {o: i for i, n in nodes.items() for o in n.outputs}
    users: dict[str, int] = {}
    for n in nodes.values():
        for name in n.inputs:
            users[name] = users.get(name, 0) + 1
    replace: dict[int, list[bytes]] = {}
    for i, gather in nodes.items():
        if gather.op_type != "Gather" or len(gather.inputs) != 2 or not _axis0(gather.rest):
            continue
        mul = nodes.get(producer.get(gather.inputs[0], -1))
        if mul is None or mul.op_type != "Mul" or len(mul.inputs) != 2 or mul.rest:
            continue
        cast = nodes.get(producer.get(mul.inputs[0], -1))
        if cast is None or cast.op_type != "Cast" or len(cast.inputs) != 1:
            continue
        q_type, q_dims = inits.get(cast.inputs[0], (0, []))
        s_type, s_dims = inits.get(mul.inputs[1], (0, []))
        if q_type != 3 or len(q_dims) != 2 or s_type != 1 or s_dims != [q_dims[0], 1]:
            continue  # not an int8 table with one float scale per row
        if users.get(gather.inputs[0]) != 1 or users.get(mul.inputs[0]) != 1:
            continue  # the float table is used elsewhere: keep it
        table, scale, ids, out = cast.inputs[0], mul.inputs[1], gather.inputs[1], gather.outputs[0]
        replace[producer[mul.inputs[0]]] = replace[producer[gather.inputs[0]]] = []
        replace[i] = [
            _Node.make([table, ids], [f"{out}__q"], f"{gather.name}__q", "Gather", gather.rest),
            _Node.make([scale, ids], [f"{out}__s"], f"{gather.name}__s", "Gather", gather.rest),
            _Node.make([f"{out}__q"], [f"{out}__f"], cast.name, "Cast", cast.rest),
            _Node.make([f"{out}__f", f"{out}__s"], [out], mul.name, "Mul", []),
        ]
    if not replace:
        return model, 0
    body = b"".join(
        b"".join(replace[i]) if i in replace else raw for i, (_n, _w, raw) in enumerate(graph)
    )
    top[at] = (7, 2, _len_field(7, body))
    return b"".join(raw for _n, _w, raw in top), sum(1 for v in replace.values() if v)
