import sys, types
torch = types.ModuleType("torch")
class _F:
    @staticmethod
    def apply(*a): pass
torch.autograd = types.SimpleNamespace(Function=_F)
torch.float16 = "float16"; torch.float32 = "float32"
nn = types.ModuleType("torch.nn"); fn = types.ModuleType("torch.nn.functional")
nn.functional = fn; torch.nn = nn
sys.modules["torch"] = torch; sys.modules["torch.nn"] = nn; sys.modules["torch.nn.functional"] = fn
torch.compile = lambda f=None, **k: (f if f is not None else (lambda g: g))
torch.cuda = types.SimpleNamespace(get_device_capability=lambda *a: (9, 0), is_available=lambda: True)
torch.Tensor = object
torch.dtype = object
torch.cuda.current_device = lambda: 0
torch.cuda.get_device_properties = lambda *a: types.SimpleNamespace(major=9, minor=0, name="NVIDIA H200")
