"""examples/attention_backward.py in tlc's interpreter against a float64 reference:
causal or not, a sequence length no block (nor the dQ accumulator's 8 x 8 layout)
divides."""


import pytest
import example_modules



@pytest.fixture(scope="module")
def ex():
    return example_modules.load("attention_backward")


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("seq", [128, 100])
def test_gradients_match_float64(ex, causal, seq):
    inputs, outputs = ex.interpret(1, 2, seq, 64, causal, seed=seq)
    for name, got, want in zip(("out", "dQ", "dK", "dV"), outputs,
                               ex.reference(*inputs, causal)):
        err = abs(got.astype("float64") - want).max()
        assert err < 5e-3, f"{name}: max |error| {err}"


def test_the_accumulator_is_kept_in_the_order_of_a_warps_lanes(ex):
    import tlc.language as T

    class Buf:
        shape = (1, 1, 16, 16)

    layout = ex.dq_accumulator_layout(Buf())
    assert layout.get_output_shape() == [1, 1, 2, 2, 2, 8, 4]
    assert layout.offset(0, 0, 0, 8) == 64 and layout.offset(0, 0, 8, 0) == 128
    # lane t holds row t // 4, columns 2 (t % 4) + r: offset 32 r + t
    for t in range(32):
        for r in range(2):
            assert layout.offset(0, 0, t // 4, 2 * (t % 4) + r) == 32 * r + t
    Buf.shape = (1, 1, 12, 16)  # 8 does not divide the length: row-major
    assert ex.dq_accumulator_layout(Buf()).get_output_shape() == [1, 1, 12, 16]
    assert isinstance(layout, T.Layout)
