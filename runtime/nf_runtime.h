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

/* Element types. The 8-bit floats are MLIR's f8E4M3FN (no infinities, one
 * NaN pattern per sign) and f8E5M2 (IEEE-like), the layouts of torch's
 * float8_e4m3fn and float8_e5m2. */
enum {
  NF_F32 = 0,
  NF_F16 = 1,
  NF_BF16 = 2,
  NF_I8 = 3,
  NF_I32 = 4,
  NF_I64 = 5,
  NF_F8E4M3FN = 6,
  NF_F8E5M2 = 7
};

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

/* Loads an artifact file into the current (or primary) CUDA context, with
 * its tune file (artifact_path + ".tune", written by nf-run --tune) where
 * there is one: the variants it names are launched at their row lengths. */
int nf_module_load(const char *artifact_path, nf_module **module, char *error,
                   size_t error_size);
void nf_module_unload(nf_module *module);

/* Validates and launches `kernel` on `stream` (a CUstream, may be NULL). */
int nf_launch(nf_module *module, const char *kernel, const nf_value *args,
              size_t num_args, const nf_tensor *results, size_t num_results,
              void *stream, char *error, size_t error_size);

/* The packed form, for callers (Python's ctypes) for which building
 * nf_value structs costs more than the launch itself. `packed` holds the
 * arguments, then the results, one after the other, each as int64 words:
 *   a scalar: NF_PACKED_SCALAR, value
 *   a tensor: dtype, rank, data, shape[rank], strides[rank]
 * `packed_size` is the number of words; a mismatch is an error. */
enum { NF_PACKED_SCALAR = -1 };

/* Validates and launches, like nf_launch, from the packed form. */
int nf_launch_packed(nf_module *module, const char *kernel,
                     const int64_t *packed, size_t packed_size, size_t num_args,
                     size_t num_results, void *stream, char *error,
                     size_t error_size);

/* An artifact read without loading it: no CUDA driver needed. Like
 * nf_module_load, it refuses a file whose digest does not match (cut short
 * or changed after nf-compile wrote it). */
typedef struct nf_artifact nf_artifact;
int nf_artifact_read(const char *artifact_path, nf_artifact **artifact,
                     char *error, size_t error_size);
void nf_artifact_free(nf_artifact *artifact);

/* The checks nf_launch makes before launching (counts, dtypes, ranks, sizes,
 * strides, null pointers, in-place results, overlaps), without a GPU: for
 * callers that run the kernel's semantics elsewhere (a CPU fallback) and
 * want the same contract. The data words are compared, never read. */
int nf_artifact_check(const nf_artifact *artifact, const char *kernel,
                      const int64_t *packed, size_t packed_size,
                      size_t num_args, size_t num_results, char *error,
                      size_t error_size);

/* The artifact's metadata as a JSON object (UTF-8, NUL-terminated; fields
 * in docs/Artifact.md): what other languages read instead of parsing the
 * file themselves. The text belongs to `artifact` and lives until
 * nf_artifact_free. Returns 0, or 1 for a null argument. */
int nf_artifact_describe(const nf_artifact *artifact, const char **json,
                         size_t *length);

#ifdef __cplusplus
}
#endif

#endif /* NF_RUNTIME_C_API_H */
