//===- CommTimelineTest.cpp - zero-schedule's cost model and timeline -----===//
//
// The cost model and the timeline of zero/Analysis/CommTimeline.h against
// closed forms: an op's seconds from its FLOPs and bytes at the model's
// rates, a collective's bytes by runtime.h's formulas, and the step time of
// a block whose collective overlaps a GEMM or stalls the wait after it.
//
//===----------------------------------------------------------------------===//

#include "zero/Analysis/CommTimeline.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::zero;

namespace {

// A GEMM of 2*2*4*3 = 48 FLOPs, an elementwise add of two tensor<4xf32>
// (4 FLOPs; 3 operands and 1 result of 16 bytes), two markers (constants,
// which cost nothing) for a collective's start and wait, and a blocking
// all-reduce of 10 f32 on 4 ranks.
constexpr const char *kModule = R"mlir(
shard.grid @g(shape = 4)
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<2x4xf32>,
             %x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<10xf32>) {
  %start = arith.constant 0 : index
  %m = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>)
                     outs(%c : tensor<2x4xf32>) -> tensor<2x4xf32>
  %wait = arith.constant 1 : index
  %s = linalg.add ins(%x, %y : tensor<4xf32>, tensor<4xf32>)
                  outs(%x : tensor<4xf32>) -> tensor<4xf32>
  %r = shard.all_reduce %z on @g grid_axes = [0] : tensor<10xf32> -> tensor<10xf32>
  return
}
)mlir";

class CommTimelineTest : public ::testing::Test {
protected:
  CommTimelineTest() {
    ctx.loadDialect<arith::ArithDialect, func::FuncDialect,
                    linalg::LinalgDialect, shard::ShardDialect,
                    tensor::TensorDialect, ZeroDialect>();
    module = parseSourceString<ModuleOp>(kModule, &ctx);
    block = &module->lookupSymbol<func::FuncOp>("f").getBody().front();
    for (Operation &op : *block)
      ops.push_back(&op);
  }

  Operation *start() { return ops[0]; }
  Operation *matmul() { return ops[1]; }
  Operation *wait() { return ops[2]; }
  Operation *add() { return ops[3]; }
  Operation *allReduce() { return ops[4]; }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  Block *block = nullptr;
  SmallVector<Operation *> ops;
  // 48 GEMM FLOP/s, 4 vector FLOP/s, 64 bytes/s of memory, 72 bytes/s of
  // link and 0.25 s of latency: the GEMM takes 1 s, the add 1 + 1 s, the
  // all-reduce's 72 bytes 1.25 s.
  CostModel model{48, 4, 64, 72, 0.25};
};

TEST_F(CommTimelineTest, ComputeAtTheModelsRates) {
  ASSERT_TRUE(module);
  EXPECT_DOUBLE_EQ(model.compute(matmul()), 1.0);
  // 4 FLOPs at 4/s, and 64 bytes (x, y, the init x, the result) at 64/s.
  EXPECT_DOUBLE_EQ(model.compute(add()), 2.0);
  EXPECT_DOUBLE_EQ(model.compute(start()), 0.0);
  EXPECT_DOUBLE_EQ(model.link(144), 0.25 + 2.0);
}

// runtime.h's formulas: (N-1)*count*b for a gather (count per rank) and a
// reduce-scatter (count per rank), 2*(N-1)*ceil(count/N)*b for an
// all-reduce, (N-1)*b for a scalar.
TEST_F(CommTimelineTest, BytesSentAreTheRuntimes) {
  EXPECT_DOUBLE_EQ(bytesSent(CollectiveKind::AllGather, 10, 4, 4), 120);
  EXPECT_DOUBLE_EQ(bytesSent(CollectiveKind::ReduceScatter, 10, 4, 2), 60);
  EXPECT_DOUBLE_EQ(bytesSent(CollectiveKind::AllReduce, 10, 4, 4), 72);
  EXPECT_DOUBLE_EQ(bytesSent(CollectiveKind::AllReduce, 10, 4, 8, true), 24);
  EXPECT_DOUBLE_EQ(bytesSent(CollectiveKind::AllGather, 10, 1, 4), 0);
  EXPECT_EQ(gridSize(allReduce(),
                     cast<shard::AllReduceOp>(allReduce()).getGridAttr()),
            4);
  EXPECT_DOUBLE_EQ(blockingLinkSeconds(allReduce(), model), 0.25 + 1.0);
  EXPECT_DOUBLE_EQ(blockingLinkSeconds(matmul(), model), 0.0);
}

// A collective started before the GEMM and waited for after it: hidden
// when it takes less than the GEMM, a stall of the difference otherwise.
// The blocking all-reduce at the end waits for the link, then runs.
TEST_F(CommTimelineTest, OverlapAndStall) {
  ASSERT_TRUE(module);
  for (double seconds : {0.5, 1.5}) {
    StartedCollective c{start(), WaitOp(), CollectiveKind::ReduceScatter,
                        36, seconds};
    auto byStart = [&](Operation *op) -> const StartedCollective * {
      return op == start() ? &c : nullptr;
    };
    auto byWait = [&](Operation *op) -> const StartedCollective * {
      return op == wait() ? &c : nullptr;
    };
    CommTimeline timeline(*block, model);
    std::vector<TimelineEvent> events;
    double stall = std::max(0.0, seconds - 1.0);
    // GEMM, the wait's stall, the add, the blocking all-reduce.
    EXPECT_DOUBLE_EQ(timeline.simulate(byStart, byWait, &events),
                     1.0 + stall + 2.0 + 1.25);
    EXPECT_DOUBLE_EQ(timeline.doneOf(start()), seconds);
    EXPECT_DOUBLE_EQ(timeline.stallOf(wait()), stall);
    EXPECT_DOUBLE_EQ(timeline.beginOf(add()), 1.0 + stall);
    EXPECT_DOUBLE_EQ(timeline.blockingTime(byStart, byWait),
                     seconds + 1.0 + 2.0 + 1.25);
    // The link's collective, the GEMM, a wait event when it stalls, the
    // add, and the blocking all-reduce on the link and the compute stream.
    ASSERT_EQ(events.size(), stall > 0 ? 6u : 5u);
    EXPECT_TRUE(events[0].comm);
    EXPECT_EQ(events[0].name, "reduce_scatter");
    EXPECT_DOUBLE_EQ(events[0].end, seconds);
    EXPECT_EQ(events[1].name, "linalg.matmul");
    EXPECT_DOUBLE_EQ(events[1].bytes, 48);
    if (stall > 0) {
      EXPECT_EQ(events[2].name, "wait reduce_scatter");
    }
    EXPECT_EQ(events.back().name, "blocked all_reduce");

    llvm::json::Array trace;
    appendTimelineTrace(trace, 7, "f", events);
    // A process name, two thread names, and the events.
    EXPECT_EQ(trace.size(), 3 + events.size());
  }
}

} // namespace
