//===- ZeroAttrs.td - zero dialect attributes --------------*- tablegen -*-===//
//
// Attributes of the `zero` dialect: the flat layout of one parameter, an
// element of `zero.manifest` (zero-partition writes it; the memory
// prediction and the step ABI read it).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DIALECT_ZERO_IR_ZEROATTRS_TD
#define ZERO_DIALECT_ZERO_IR_ZEROATTRS_TD

include "zero/Dialect/Zero/IR/ZeroDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Zero_ShardedParts : I32BitEnumAttr<"ShardedParts",
    "the parts of a parameter each rank holds a shard of", [
      I32BitEnumAttrCaseNone<"none">,
      I32BitEnumAttrCaseBit<"params", 0>,
      I32BitEnumAttrCaseBit<"grads", 1>,
      I32BitEnumAttrCaseBit<"states", 2>
    ]> {
  let cppNamespace = "::mlir::zero";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class Zero_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Zero_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Zero_LayoutAttr : Zero_Attr<"Layout", "layout"> {
  let summary = "The flat layout of one parameter, and which parts are sharded";
  let description = [{
    One element of `zero.manifest`: the parameter `name` of `shape`
    (`numel` elements) viewed 1-D and zero-padded to `padded` elements,
    the least multiple of the world size at or above `numel`; rank r owns
    elements [r * shard, (r + 1) * shard) of it, with `shard` = `padded` /
    world size (runtime.h's `zrt_flat_layout`, docs/zero-form.md). The
    same layout holds for the parameter's gradient and optimizer states.

    `sharded` says which of the three a rank holds only its shard of
    between steps: zero-partition's decision for the stage (`states` from
    stage 1, `grads` from stage 2, `params` at stage 3), recorded here so
    that no reader has to derive it from `zero.stage`. `grad_bytes` is the
    bytes per element of the gradient the step holds when an accumulator
    is wider than the parameter (bf16 with `accumulate`); without it, the
    parameter's.

    The attribute checks what it holds alone: a name, a static shape whose
    product is `numel` (without overflow), `grad_bytes` positive. Whether
    `padded` and `shard` are the layout at the function's
    `zero.world_size` is checked where the world size is known, on
    `zero.manifest` (one world for every parameter; `verifyWorldSize`).

    ```mlir
    func.func @train_step(...) attributes {
        zero.manifest = [#zero.layout<name = "w", shape = [3, 5], numel = 15,
                                      padded = 16, shard = 8,
                                      sharded = grads|states, grad_bytes = 4>],
        zero.role = "train_step", zero.stage = 2 : i64,
        zero.world_size = 2 : i64}
    ```
  }];
  let parameters = (ins
    "::mlir::StringAttr":$name,
    ArrayRefParameter<"int64_t", "the parameter's shape">:$shape,
    "int64_t":$numel,
    "int64_t":$padded,
    "int64_t":$shard,
    EnumParameter<Zero_ShardedParts>:$sharded,
    OptionalParameter<"std::optional<int64_t>",
                      "bytes per element of the gradient the step holds">:
        $grad_bytes
  );
  let assemblyFormat = [{
    `<` `name` `=` $name `,` `shape` `=` custom<Shape>($shape) `,`
    `numel` `=` $numel `,` `padded` `=` $padded `,` `shard` `=` $shard `,`
    `sharded` `=` $sharded (`,` `grad_bytes` `=` $grad_bytes^)? `>`
  }];
  let extraClassDeclaration = [{
    /// Whether a rank holds only its shard of the parameter, of its
    /// gradient, of its optimizer states.
    bool paramsSharded() const {
      return ::mlir::zero::bitEnumContainsAll(getSharded(),
                                              ShardedParts::params);
    }
    bool gradsSharded() const {
      return ::mlir::zero::bitEnumContainsAll(getSharded(),
                                              ShardedParts::grads);
    }
    bool statesSharded() const {
      return ::mlir::zero::bitEnumContainsAll(getSharded(),
                                              ShardedParts::states);
    }
    /// Checks that `padded` and `shard` are the layout of `numel` elements
    /// on `worldSize` ranks (zrt_flat_layout).
    ::llvm::LogicalResult
    verifyWorldSize(::llvm::function_ref<::mlir::InFlightDiagnostic()>
                        emitError,
                    int64_t worldSize) const;
  }];
  let genVerifyDecl = 1;
}

#endif // ZERO_DIALECT_ZERO_IR_ZEROATTRS_TD
