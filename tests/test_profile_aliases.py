"""List-returning views (unbind, split) alias their input: zero-byte views, never fresh storages."""
from planner.models import load_model


def test_list_views_are_aliases_in_checked_in_profiles():
    for name in ("bert-large-tiny", "gpt3-2.7b-tiny", "swin-t-tiny", "bilstm-tiny"):
        g = load_model(name)
        ops = [o for o in g.ops if o.target in ("aten.unbind.int", "aten.split.Tensor")]
        assert ops, name
        for o in ops:
            for t in o.outputs:
                tt = g.tensors[t]
                assert tt.alias_of is not None and tt.bytes == 0, (name, o.name, t)
