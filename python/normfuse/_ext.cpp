//===- _ext.cpp - the ops' CUDA implementation in C++ ---------------------===//
//
// Part of normfuse. An optional torch extension that setup.py builds against
// the installed torch (with CUDA): it registers each kernel's CUDA
// implementation with the dispatcher as a boxed C++ kernel and gives
// Kernel.launch a C++ entry, so that a call costs what one eager torch op
// costs: no Python frame, no ctypes marshalling. It reads the tensors,
// allocates the fresh results, and calls nf_launch on the current stream of
// the tensors' device; every check is the runtime's (planLaunch) but the
// ones needed to read the call (kinds, dtypes with a code, one device,
// ranks the result sizes are read from). Without it, the package's ctypes
// path does the same in Python.
//
//===----------------------------------------------------------------------===//

#include "runtime/nf_runtime.h"

#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/cuda/EmptyTensor.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/Exceptions.h>
#include <torch/extension.h>
#include <torch/library.h>
#include <torch/version.h>

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

// torch's 8-bit float types (2.1 and later), for the f8E4M3FN and f8E5M2
// codes; an older torch builds without them (the package refuses kernels
// that use them there).
#if TORCH_VERSION_MAJOR > 2 ||                                                 \
    (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
#define NF_TORCH_HAS_FLOAT8 1
#else
#define NF_TORCH_HAS_FLOAT8 0
#endif

namespace {

constexpr int kMaxDevices = 64;
constexpr size_t kMaxValues = 64;

[[noreturn]] void fail(const std::string &message) {
  // TORCH_CHECK's message reaches Python as the RuntimeError's text; the
  // package turns texts that start with "error: " into NormfuseError.
  TORCH_CHECK(false, message);
}

/// An artifact loaded once per device, on first use there.
class ModuleSet {
public:
  explicit ModuleSet(std::string path) : path(std::move(path)) {
    for (auto &m : modules)
      m.store(nullptr, std::memory_order_relaxed);
  }
  ~ModuleSet() {
    for (auto &m : modules)
      if (nf_module *module = m.load())
        nf_module_unload(module);
  }

  nf_module *get(int device) {
    if (device < 0 || device >= kMaxDevices)
      fail("error: device index " + std::to_string(device) +
           " is out of range");
    if (nf_module *module = modules[device].load(std::memory_order_acquire))
      return module;
    std::lock_guard<std::mutex> lock(mutex);
    if (nf_module *module = modules[device].load())
      return module;
    // The device's primary context is current while the module loads, so
    // the module is that device's (the runtime launches in it after).
    c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device));
    char error[1024] = {};
    nf_module *module = nullptr;
    if (nf_module_load(path.c_str(), &module, error, sizeof error))
      fail(std::string("error: ") + error);
    modules[device].store(module, std::memory_order_release);
    return module;
  }

  /// The module's address, for the ctypes path of the same process.
  int64_t handle(int device) { return reinterpret_cast<int64_t>(get(device)); }

private:
  std::string path;
  std::mutex mutex;
  std::array<std::atomic<nf_module *>, kMaxDevices> modules;
};

/// What the launcher needs to know of one kernel, from its metadata.
struct KernelSpec {
  std::shared_ptr<ModuleSet> modules;
  std::string name;
  std::vector<std::string> argNames;
  std::vector<bool> argIsTensor;
  /// Per result: the argument it is written into, or -1 (fresh).
  std::vector<int64_t> inPlace;
  /// Per fresh result: its dtype and where each of its [B, S, D] sizes
  /// ([B, S] for a per-row result) comes from: (argument, dimension,
  /// divisor: G for the D / G of a group result, else 1), or (-1, static
  /// size, 1).
  std::vector<at::ScalarType> freshDtypes;
  std::vector<std::vector<std::tuple<int64_t, int64_t, int64_t>>> freshSizes;
  /// The exception type Kernel.launch raises (normfuse.NormfuseError).
  pybind11::object errorType;
  /// The dtype code of each argument it was built for (-1: a scalar), and
  /// its combination of an `nf-compile --types` build ("act=bf16").
  std::vector<int> argCodes;
  std::string types;
};

/// The kernels of one name: one, or one per dtype combination.
struct Dispatch {
  std::vector<std::shared_ptr<KernelSpec>> specs;
  /// The op normfuse::<op> once its CUDA implementation is registered.
  std::optional<c10::OperatorHandle> op;
};

/// The results in the IR's order (in-place ones are their arguments): one
/// object, or a tuple.
pybind11::object assemble(const KernelSpec &spec, const pybind11::args &args,
                          std::vector<at::Tensor> fresh) {
  namespace py = pybind11;
  size_t n = spec.inPlace.size(), next = 0;
  if (n == 1 && spec.inPlace[0] < 0)
    return py::cast(std::move(fresh[0]));
  py::tuple out(n);
  for (size_t r = 0; r < n; ++r)
    out[r] = spec.inPlace[r] >= 0
                 ? py::reinterpret_borrow<py::object>(args[spec.inPlace[r]])
                 : py::cast(std::move(fresh[next++]));
  if (n == 1)
    return out[0];
  return std::move(out);
}

int dtypeCode(at::ScalarType type) {
  switch (type) {
  case at::kFloat:
    return NF_F32;
  case at::kHalf:
    return NF_F16;
  case at::kBFloat16:
    return NF_BF16;
  case at::kChar:
    return NF_I8;
  case at::kInt:
    return NF_I32;
  case at::kLong:
    return NF_I64;
#if NF_TORCH_HAS_FLOAT8
  case at::ScalarType::Float8_e4m3fn:
    return NF_F8E4M3FN;
  case at::ScalarType::Float8_e5m2:
    return NF_F8E5M2;
#endif
  default:
    return -1;
  }
}

at::ScalarType scalarType(int code) {
  switch (code) {
  case NF_F32:
    return at::kFloat;
  case NF_F16:
    return at::kHalf;
  case NF_BF16:
    return at::kBFloat16;
  case NF_I8:
    return at::kChar;
  case NF_I32:
    return at::kInt;
  case NF_I64:
    return at::kLong;
#if NF_TORCH_HAS_FLOAT8
  case NF_F8E4M3FN:
    return at::ScalarType::Float8_e4m3fn;
  case NF_F8E5M2:
    return at::ScalarType::Float8_e5m2;
#endif
  }
  throw std::invalid_argument("unknown dtype code " + std::to_string(code));
}

void toTensor(const KernelSpec &spec, const char *what, size_t index,
              const at::Tensor &t, nf_tensor &out) {
  int code = dtypeCode(t.scalar_type());
  if (code < 0 || t.dim() > 4)
    fail("error: kernel '" + spec.name + "': " + what + " " +
         std::to_string(index) + " has dtype " +
         std::string(c10::toString(t.scalar_type())) + " and rank " +
         std::to_string(t.dim()) +
         "; kernels take f32, f16, bf16, i8, i32, i64, f8E4M3FN "
         "(float8_e4m3fn) or f8E5M2 (float8_e5m2) tensors of rank <= 4");
  out.data = reinterpret_cast<uint64_t>(t.data_ptr());
  out.dtype = code;
  out.rank = static_cast<int32_t>(t.dim());
  for (int64_t d = 0; d < t.dim(); ++d) {
    out.shape[d] = t.size(d);
    out.strides[d] = t.stride(d);
  }
}

/// The kernel of `dispatch` built for the dtypes of `args`' tensors (the
/// only one: the runtime checks its dtypes).
const KernelSpec &choose(const Dispatch &dispatch,
                         c10::ArrayRef<c10::IValue> args) {
  if (dispatch.specs.size() == 1)
    return *dispatch.specs[0];
  for (const auto &spec : dispatch.specs) {
    bool match = args.size() == spec->argCodes.size();
    for (size_t i = 0; match && i < args.size(); ++i)
      if (spec->argCodes[i] >= 0 && args[i].isTensor())
        match =
            dtypeCode(args[i].toTensor().scalar_type()) == spec->argCodes[i];
    if (match)
      return *spec;
  }
  const KernelSpec &first = *dispatch.specs[0];
  std::string call, built;
  for (size_t i = 0; i < args.size() && i < first.argNames.size(); ++i)
    if (args[i].isTensor())
      call += (call.empty() ? "" : ", ") + first.argNames[i] + ": " +
              std::string(c10::toString(args[i].toTensor().scalar_type()));
  for (const auto &spec : dispatch.specs)
    built += (built.empty() ? "" : "; ") + spec->types;
  fail("error: kernel '" + first.name +
       "' was not built for the dtypes of this call (" + call +
       "); it was built for " + built + " (nf-compile --types)");
}

/// Launches `spec`'s kernel on `args`; returns the fresh results.
std::vector<at::Tensor> launch(const KernelSpec &spec,
                               c10::ArrayRef<c10::IValue> args) {
  const size_t numArgs = spec.argNames.size();
  if (args.size() != numArgs)
    fail("error: kernel '" + spec.name + "': expected " +
         std::to_string(numArgs) + " arguments, found " +
         std::to_string(args.size()));
  nf_value values[kMaxValues];
  const at::Tensor *first = nullptr;
  for (size_t i = 0; i < numArgs; ++i) {
    const c10::IValue &a = args[i];
    nf_value &v = values[i];
    v.is_tensor = spec.argIsTensor[i];
    if (!spec.argIsTensor[i]) {
      if (!a.isInt())
        fail("error: kernel '" + spec.name + "': argument '" +
             spec.argNames[i] + "' must be a Python int");
      v.scalar = a.toInt();
      continue;
    }
    if (!a.isTensor())
      fail("error: kernel '" + spec.name + "': argument '" + spec.argNames[i] +
           "' must be a tensor");
    const at::Tensor &t = a.toTensor();
    if (!first)
      first = &t;
    else if (t.device() != first->device())
      fail("error: kernel '" + spec.name + "': argument '" + spec.argNames[i] +
           "' is on " + t.device().str() + ", expected " +
           first->device().str() + " like the arguments before it");
    toTensor(spec, "argument", i, t, v.tensor);
  }
  if (!first || !first->is_cuda())
    fail("error: kernel '" + spec.name +
         "': the CUDA implementation needs "
         "CUDA tensors");
  const int device = first->get_device();

  std::vector<at::Tensor> fresh;
  fresh.reserve(spec.freshDtypes.size());
  for (size_t r = 0; r < spec.freshDtypes.size(); ++r) {
    // [B, S, D], or [B, S] for a per-row result.
    const size_t rank = spec.freshSizes[r].size();
    int64_t sizes[3];
    for (size_t k = 0; k < rank; ++k) {
      auto [arg, dim, divisor] = spec.freshSizes[r][k];
      if (arg < 0) {
        sizes[k] = dim;
        continue;
      }
      const at::Tensor &t = args[arg].toTensor();
      if (dim >= t.dim())
        fail("error: kernel '" + spec.name + "': argument '" +
             spec.argNames[arg] + "' has rank " + std::to_string(t.dim()) +
             ", too few dimensions for its role");
      // D / G rounds down where G does not divide D: the launch refuses
      // that row length.
      sizes[k] = t.size(dim) / divisor;
    }
    // The CUDA allocator directly: at::empty would go through the
    // dispatcher again, a microsecond per result.
    fresh.emplace_back(at::detail::empty_cuda(at::IntArrayRef(sizes, rank),
                                              spec.freshDtypes[r],
                                              first->device(), std::nullopt));
  }
  nf_tensor results[kMaxValues];
  size_t next = 0;
  for (size_t r = 0; r < spec.inPlace.size(); ++r) {
    const at::Tensor &t =
        spec.inPlace[r] >= 0 ? args[spec.inPlace[r]].toTensor() : fresh[next++];
    toTensor(spec, "result", r, t, results[r]);
  }
  nf_module *module = spec.modules->get(device);
  cudaStream_t stream =
      c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device))
          .stream();
  char error[1024];
  if (nf_launch(module, spec.name.c_str(), values, numArgs, results,
                spec.inPlace.size(), stream, error, sizeof error))
    fail(std::string("error: ") + error);
  return fresh;
}

/// The boxed kernel the dispatcher calls for the op's CUDA key.
class BoxedLaunch final : public c10::OperatorKernel {
public:
  explicit BoxedLaunch(std::shared_ptr<Dispatch> dispatch)
      : dispatch(std::move(dispatch)) {}
  void operator()(const c10::OperatorHandle &, c10::DispatchKeySet,
                  torch::jit::Stack *stack) {
    size_t n = dispatch->specs[0]->argNames.size();
    auto args = torch::jit::last(*stack, n);
    std::vector<at::Tensor> fresh = launch(choose(*dispatch, args), args);
    torch::jit::drop(*stack, n);
    for (at::Tensor &t : fresh)
      stack->emplace_back(std::move(t));
  }

private:
  std::shared_ptr<Dispatch> dispatch;
};

/// The registrations made so far; they last as long as the process.
std::vector<std::unique_ptr<torch::Library>> &libraries() {
  static std::vector<std::unique_ptr<torch::Library>> all;
  return all;
}

} // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  namespace py = pybind11;
  py::class_<ModuleSet, std::shared_ptr<ModuleSet>>(m, "ModuleSet")
      .def(py::init<std::string>())
      .def("handle", &ModuleSet::handle, py::arg("device"));
  py::class_<KernelSpec, std::shared_ptr<KernelSpec>>(m, "Kernel")
      .def(py::init(
          [](std::shared_ptr<ModuleSet> modules, std::string name,
             std::vector<std::string> argNames, std::vector<bool> argIsTensor,
             std::vector<int64_t> inPlace, std::vector<int> freshCodes,
             std::vector<std::vector<std::tuple<int64_t, int64_t, int64_t>>>
                 freshSizes,
             py::object errorType, std::vector<int> argCodes,
             std::string types) {
            auto spec = std::make_shared<KernelSpec>();
            if (argNames.size() > kMaxValues || inPlace.size() > kMaxValues ||
                argIsTensor.size() != argNames.size() ||
                freshSizes.size() != freshCodes.size())
              throw std::invalid_argument("malformed kernel description");
            spec->modules = std::move(modules);
            spec->errorType = std::move(errorType);
            if (argCodes.size() != argNames.size())
              throw std::invalid_argument("one dtype code per argument");
            spec->argCodes = std::move(argCodes);
            spec->types = std::move(types);
            spec->name = std::move(name);
            spec->argNames = std::move(argNames);
            spec->argIsTensor = std::move(argIsTensor);
            spec->inPlace = std::move(inPlace);
            for (int code : freshCodes)
              spec->freshDtypes.push_back(scalarType(code));
            for (auto &sizes : freshSizes) {
              if (sizes.size() != 3 && sizes.size() != 2)
                throw std::invalid_argument(
                    "a result has three sizes, or two (per row)");
              for (auto &size : sizes)
                if (std::get<2>(size) < 1)
                  throw std::invalid_argument("a size divisor must be >= 1");
              spec->freshSizes.push_back(std::move(sizes));
            }
            return spec;
          }));
  py::class_<Dispatch, std::shared_ptr<Dispatch>>(m, "Dispatch")
      .def(py::init([](std::vector<std::shared_ptr<KernelSpec>> specs) {
        if (specs.empty())
          throw std::invalid_argument("a dispatch needs a kernel");
        auto dispatch = std::make_shared<Dispatch>();
        dispatch->specs = std::move(specs);
        return dispatch;
      }))
      // Kernel.launch itself: the results in the IR's order (in-place ones
      // are their arguments), one tensor or a tuple; errors raise the
      // package's NormfuseError.
      .def("launch",
           [](const Dispatch &dispatch, py::args args) -> py::object {
             c10::SmallVector<c10::IValue, 16> values;
             for (py::handle a : args) {
               if (THPVariable_Check(a.ptr()))
                 values.emplace_back(THPVariable_Unpack(a.ptr()));
               else if (PyLong_Check(a.ptr()))
                 values.emplace_back(a.cast<int64_t>());
               else
                 values.emplace_back(); // refused by launch()
             }
             const KernelSpec *chosen = dispatch.specs[0].get();
             std::vector<at::Tensor> fresh;
             try {
               chosen = &choose(dispatch, values);
               fresh = launch(*chosen, values);
             } catch (const c10::Error &e) {
               PyErr_SetString(chosen->errorType.ptr(),
                               e.what_without_backtrace());
               throw py::error_already_set();
             }
             return assemble(*chosen, args, std::move(fresh));
           })
      // Kernel.__call__'s eager path: the op through the dispatcher, as
      // torch.ops.normfuse.<op> calls it (autograd, modes, every device
      // type, the CPU fallback), without the Python binding's schema
      // matching. Returns NotImplemented where that binding is needed: an
      // argument that is not a tensor or an int, a tensor or mode with
      // __torch_function__, a count or kind the schema does not take; the
      // caller then goes through torch.ops, which also words the errors.
      .def("call",
           [](const Dispatch &dispatch, py::args args) -> py::object {
             HANDLE_TH_ERRORS
             const KernelSpec &first = *dispatch.specs[0];
             py::object notImplemented =
                 py::reinterpret_borrow<py::object>(Py_NotImplemented);
             if (!dispatch.op || args.size() != first.argNames.size() ||
                 at::impl::torch_function_mode_enabled())
               return notImplemented;
             torch::jit::Stack stack;
             stack.reserve(args.size());
             for (size_t i = 0; i < args.size(); ++i) {
               PyObject *a = args[i].ptr();
               // A tensor subclass may have __torch_function__ (a
               // Parameter is a tensor to C++).
               if (first.argIsTensor[i] && THPVariable_CheckExact(a))
                 stack.emplace_back(THPVariable_Unpack(a));
               else if (!first.argIsTensor[i] && PyLong_Check(a) &&
                        !PyBool_Check(a)) {
                 int overflow = 0;
                 long long value = PyLong_AsLongLongAndOverflow(a, &overflow);
                 if (overflow)
                   return notImplemented;
                 stack.emplace_back(static_cast<int64_t>(value));
               } else {
                 return notImplemented;
               }
             }
             dispatch.op->callBoxed(stack);
             // The spec of the combination the tensors' dtypes picked
             // (the boxed kernel or the fallback ran it): only its
             // results' order matters, and every combination has the same.
             std::vector<at::Tensor> fresh;
             fresh.reserve(stack.size());
             for (c10::IValue &v : stack)
               fresh.push_back(std::move(v).toTensor());
             return assemble(first, args, std::move(fresh));
             END_HANDLE_TH_ERRORS_PYBIND
           })
      // Registers the kernel as the CUDA implementation of normfuse::<op>.
      .def("register_cuda", [](std::shared_ptr<Dispatch> dispatch,
                               const std::string &op) {
        auto library = std::make_unique<torch::Library>(
            torch::Library::IMPL, "normfuse", c10::DispatchKey::CUDA, __FILE__,
            __LINE__);
        library->impl(op.c_str(), torch::CppFunction::makeFromBoxedFunctor(
                                      std::make_unique<BoxedLaunch>(dispatch)));
        libraries().push_back(std::move(library));
        dispatch->op = c10::Dispatcher::singleton().findSchemaOrThrow(
            ("normfuse::" + op).c_str(), "");
      });
}
