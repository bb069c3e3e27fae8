/*===- embed-c.c - The zero passes through the C API only ---------*- C -*-===*\
|*                                                                            *|
|* embed-c <file.mlir>: parses a training step, runs zero-verify (a pass      *|
|* object from the generated C API) and then                                  *|
|* zero-partition{stage=3 world-size=2},canonicalize,cse (a pipeline string   *|
|* naming our passes and upstream ones), and prints the module. C99, MLIR's   *|
|* and zero-mlir's C API, nothing else.                                       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/Support.h"
#include "mlir-c/Transforms.h"
#include "zero-c/Dialects.h"
#include "zero-c/Passes.h"

#include <stdio.h>
#include <stdlib.h>

static void printTo(MlirStringRef text, void *userData) {
  fwrite(text.data, 1, text.length, (FILE *)userData);
}

static char *readFile(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  char *data = NULL;
  long length;
  if (!f)
    return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (length = ftell(f)) >= 0 &&
      fseek(f, 0, SEEK_SET) == 0) {
    data = malloc((size_t)length + 1);
    if (data && fread(data, 1, (size_t)length, f) == (size_t)length) {
      data[length] = '\0';
      *size = (size_t)length;
    } else {
      free(data);
      data = NULL;
    }
  }
  fclose(f);
  return data;
}

int main(int argc, char **argv) {
  const char *pipeline = "zero-partition{stage=3 world-size=2},canonicalize,cse";
  MlirContext ctx;
  MlirDialectRegistry registry;
  MlirDialectHandle zero = mlirGetDialectHandle__zero__();
  MlirModule module;
  MlirPassManager pm;
  MlirLogicalResult result;
  size_t size = 0;
  char *text;
  int status = EXIT_FAILURE;

  if (argc != 2) {
    fprintf(stderr, "usage: embed-c <file.mlir>\n");
    return EXIT_FAILURE;
  }
  text = readFile(argv[1], &size);
  if (!text) {
    fprintf(stderr, "embed-c: error: cannot read %s\n", argv[1]);
    return EXIT_FAILURE;
  }

  ctx = mlirContextCreate();
  registry = mlirDialectRegistryCreate();
  /* The zero dialect through its handle; the upstream dialects a training
     step is written in, with their interface models, in one call. */
  mlirDialectHandleInsertDialect(zero, registry);
  mlirZeroRegisterTrainingStepDialects(registry);
  mlirContextAppendDialectRegistry(ctx, registry);
  mlirDialectRegistryDestroy(registry);
  mlirDialectHandleLoadDialect(zero, ctx);
  printf("// zero loaded: %d\n",
         !mlirDialectIsNull(mlirContextGetOrLoadDialect(
             ctx, mlirDialectHandleGetNamespace(zero))));

  /* Our passes and pipelines and upstream's transforms, for pipeline
     strings. */
  mlirZeroRegisterPassesAndPipelines();
  mlirRegisterTransformsPasses();

  module = mlirModuleCreateParse(ctx, mlirStringRefCreate(text, size));
  if (mlirModuleIsNull(module)) {
    fprintf(stderr, "embed-c: error: cannot parse %s\n", argv[1]);
    goto done;
  }

  pm = mlirPassManagerCreate(ctx);
  mlirPassManagerAddOwnedPass(pm, mlirCreateZeroZeroVerifyPass());
  result = mlirOpPassManagerAddPipeline(
      mlirPassManagerGetAsOpPassManager(pm),
      mlirStringRefCreateFromCString(pipeline), printTo, stderr);
  if (mlirLogicalResultIsFailure(result)) {
    fprintf(stderr, "\nembed-c: error: bad pipeline '%s'\n", pipeline);
  } else {
    printf("// pipeline: ");
    mlirPrintPassPipeline(mlirPassManagerGetAsOpPassManager(pm), printTo,
                          stdout);
    printf("\n");
    result = mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module));
    if (mlirLogicalResultIsFailure(result)) {
      fprintf(stderr, "embed-c: error: the pipeline failed\n");
    } else {
      mlirOperationPrint(mlirModuleGetOperation(module), printTo, stdout);
      printf("\n");
      status = EXIT_SUCCESS;
    }
  }
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
done:
  mlirContextDestroy(ctx);
  free(text);
  return status;
}
