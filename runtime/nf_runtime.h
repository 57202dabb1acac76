/*===- nf_runtime.h - C API of the normfuse runtime ---------------*- C -*-===*\
|*                                                                            *|
|* Part of normfuse. A plain C API over runtime/Runtime.h for FFI (ctypes,   *|
|* other languages). Every call returns 0 on success; on failure a non-zero  *|
|* code and a message in the caller's buffer (never allocated).             *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef NF_RUNTIME_C_API_H
#define NF_RUNTIME_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nf_module nf_module;

/* Element types. */
enum { NF_F32 = 0, NF_F16 = 1, NF_BF16 = 2, NF_I8 = 3, NF_I32 = 4, NF_I64 = 5 };

typedef struct {
  uint64_t data; /* device pointer */
  int32_t dtype;
  int32_t rank; /* at most 4 */
  int64_t shape[4];
  int64_t strides[4]; /* in elements; the last must be 1 */
} nf_tensor;

typedef struct {
  int32_t is_tensor;
  nf_tensor tensor;
  int64_t scalar;
} nf_value;

/* Loads an artifact file into the current (or primary) CUDA context. */
int nf_module_load(const char *artifact_path, nf_module **module, char *error,
                   size_t error_size);
void nf_module_unload(nf_module *module);

/* Validates and launches `kernel` on `stream` (a CUstream, may be NULL). */
int nf_launch(nf_module *module, const char *kernel, const nf_value *args,
              size_t num_args, const nf_tensor *results, size_t num_results,
              void *stream, char *error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif /* NF_RUNTIME_C_API_H */
