"""Host utilities with TileLang's names (`tilelang.utils`): tensors for tests
and benchmarks in tlc.utils.tensor."""

from .tensor import TensorSupplyType, get_tensor_supply, map_torch_type, torch_assert_close

__all__ = ["TensorSupplyType", "get_tensor_supply", "map_torch_type", "torch_assert_close"]
