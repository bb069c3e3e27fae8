//===- RuntimeNvmeTest.cpp - The NVMe tier ---------------------------------===//
//
// Extents in the per-rank file: reservation and accounting, started
// transfers through zrt_wait (out of order), the drivers' blocking
// transfers at any alignment, and the errors of each entry point.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

using namespace zero::runtime::test;

namespace {

constexpr size_t kBlock = 4096;

zrt_nvme_stats nvmeStats() {
  zrt_nvme_stats stats;
  zrt_get_nvme_stats(&stats);
  return stats;
}

/// A 4096-aligned buffer, freed with std::free.
struct Aligned {
  explicit Aligned(size_t bytes)
      : ptr(static_cast<char *>(std::aligned_alloc(kBlock, bytes))) {}
  ~Aligned() { std::free(ptr); }
  char *ptr;
};

class RuntimeNvme : public RuntimeFixture {
protected:
  void SetUp() override {
    RuntimeFixture::SetUp();
    // The build tree, not /tmp: O_DIRECT needs a disk file system.
    // One per test: ctest runs the cases in parallel processes.
    dir = std::filesystem::current_path() /
          ("nvme-" + std::string(::testing::UnitTest::GetInstance()
                                     ->current_test_info()
                                     ->name()));
    std::filesystem::create_directories(dir);
    ASSERT_EQ(zrt_nvme_open(dir.c_str()), 0) << zrt_last_error();
  }
  void TearDown() override {
    zrt_nvme_close();
    std::filesystem::remove_all(dir);
    RuntimeFixture::TearDown();
  }
  std::filesystem::path file() const { return dir / "zero-rank0.nvme"; }
  std::filesystem::path dir;
};

// Extents are rounded up to 4096 bytes, read as zeros, and are counted per
// category; the file holds exactly the reserved extents.
TEST_F(RuntimeNvme, ExtentsAreReservedAndCounted) {
  int64_t a = zrt_nvme_alloc(10, ZRT_OPTIMIZER_STATES);
  int64_t b = zrt_nvme_alloc(3 * kBlock, ZRT_PARAMS);
  int64_t c = zrt_nvme_alloc(kBlock + 1, ZRT_OPTIMIZER_STATES);
  ASSERT_EQ(a, 1) << zrt_last_error();
  EXPECT_EQ(b, 2);
  EXPECT_EQ(c, 3);
  zrt_nvme_stats s = nvmeStats();
  EXPECT_EQ(s.reserved[ZRT_OPTIMIZER_STATES], kBlock + 2 * kBlock);
  EXPECT_EQ(s.reserved[ZRT_PARAMS], 3 * kBlock);
  EXPECT_EQ(s.file_bytes, 6 * kBlock);
  EXPECT_EQ(std::filesystem::file_size(file()), 6 * kBlock);
  EXPECT_GE(s.disk_bytes, 6 * kBlock);
  std::vector<char> out(kBlock + 1, 'x');
  ASSERT_EQ(zrt_nvme_read(c, out.data(), out.size()), 0) << zrt_last_error();
  EXPECT_EQ(std::count(out.begin(), out.end(), 0), (long)out.size());
  // Nothing stays resident in RAM.
  EXPECT_EQ(memoryStats().current_total, 0u);
}

// Started transfers complete through zrt_wait in any order, and move the
// whole reserved extent.
TEST_F(RuntimeNvme, StartedTransfersRoundTrip) {
  constexpr int kExtents = 6;
  constexpr size_t kBytes = 5 * 1024 * 1024 + 12; // more than one chunk
  size_t reserved = (kBytes + kBlock - 1) / kBlock * kBlock;
  std::vector<int64_t> extents;
  std::vector<std::unique_ptr<Aligned>> in, out;
  for (int i = 0; i < kExtents; ++i) {
    extents.push_back(zrt_nvme_alloc(kBytes, ZRT_OPTIMIZER_STATES));
    in.push_back(std::make_unique<Aligned>(reserved));
    out.push_back(std::make_unique<Aligned>(reserved));
    for (size_t j = 0; j < reserved; ++j)
      in[i]->ptr[j] = static_cast<char>((j * 7 + i) & 0x7f);
  }
  zrt_reset_nvme_stats();
  std::vector<int64_t> writes, reads;
  for (int i = 0; i < kExtents; ++i)
    writes.push_back(zrt_nvme_write_start(extents[i], in[i]->ptr,
                                          static_cast<int64_t>(reserved)));
  for (int i = kExtents - 1; i >= 0; --i)
    zrt_wait(writes[i]);
  for (int i = 0; i < kExtents; ++i) {
    reads.push_back(zrt_nvme_read_start(extents[i], out[i]->ptr,
                                        static_cast<int64_t>(reserved)));
    EXPECT_NE(reads.back() & (int64_t(1) << 62), 0)
        << "transfer requests are tagged apart from collectives";
  }
  for (int i = kExtents - 1; i >= 0; --i)
    zrt_wait(reads[i]);
  for (int i = 0; i < kExtents; ++i)
    EXPECT_EQ(std::memcmp(in[i]->ptr, out[i]->ptr, kBytes), 0) << "extent " << i;
  zrt_nvme_stats s = nvmeStats();
  EXPECT_EQ(s.written_bytes, kExtents * reserved);
  EXPECT_EQ(s.read_bytes, kExtents * reserved);
  EXPECT_EQ(s.reads, (uint64_t)kExtents);
  EXPECT_EQ(s.writes, (uint64_t)kExtents);
  // A request is waited for once.
  EXPECT_NE(fatalMessageOf([&] { zrt_wait(reads[0]); }).find(
                "was never started or was waited for already"),
            std::string::npos);
}

// The drivers' blocking transfers take any alignment and any length up to
// the extent's.
TEST_F(RuntimeNvme, BlockingTransfersAnyAlignment) {
  constexpr size_t kBytes = 9 * 1024 * 1024 + 3; // three staging rounds
  int64_t e = zrt_nvme_alloc(kBytes, ZRT_PARAMS);
  std::vector<char> data(kBytes + 1), back(kBytes + 1, 0);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<char>(i * 13);
  ASSERT_EQ(zrt_nvme_write(e, data.data() + 1, kBytes), 0) << zrt_last_error();
  ASSERT_EQ(zrt_nvme_read(e, back.data() + 1, kBytes), 0) << zrt_last_error();
  EXPECT_EQ(std::memcmp(data.data() + 1, back.data() + 1, kBytes), 0);
  // The staging buffer is the runtime's own: the step's figures stay its
  // own.
  EXPECT_EQ(memoryStats().peak_total, 0u);
  // A prefix reads; a partial write does not.
  std::vector<char> head(100);
  ASSERT_EQ(zrt_nvme_read(e, head.data(), head.size()), 0);
  EXPECT_EQ(std::memcmp(head.data(), data.data() + 1, 100), 0);
  EXPECT_NE(zrt_nvme_write(e, data.data(), 100), 0);
  EXPECT_NE(std::string(zrt_last_error()).find("writes whole extents"),
            std::string::npos);
  EXPECT_NE(zrt_nvme_read(e, back.data(), kBytes + 1), 0);
}

// Every misuse is one clear error.
TEST_F(RuntimeNvme, Errors) {
  int64_t e = zrt_nvme_alloc(100, ZRT_OPTIMIZER_STATES);
  Aligned buffer(2 * kBlock);
  EXPECT_NE(fatalMessageOf([&] { zrt_nvme_read_start(e, buffer.ptr, 100); })
                .find("reserved 4096 bytes (its 100 rounded up to 4096), not 100"),
            std::string::npos);
  EXPECT_NE(fatalMessageOf([&] {
              zrt_nvme_read_start(e, buffer.ptr + 64, kBlock);
            }).find("aligned to 4096 bytes"),
            std::string::npos);
  EXPECT_NE(fatalMessageOf([&] { zrt_nvme_write_start(7, buffer.ptr, kBlock); })
                .find("NVMe extent 7 does not exist"),
            std::string::npos);
  EXPECT_EQ(zrt_nvme_alloc(1, static_cast<zrt_category>(9)), 0);
  EXPECT_NE(std::string(zrt_last_error()).find("invalid category"),
            std::string::npos);
  EXPECT_NE(zrt_nvme_open(dir.c_str()), 0);
  EXPECT_NE(std::string(zrt_last_error()).find("open already"),
            std::string::npos);
}

// Opening needs a directory; closing removes the file; without a store
// nothing can be reserved.
TEST(RuntimeNvmeStore, OpenAndClose) {
  ASSERT_EQ(zrt_init("cpu", 1), 0) << zrt_last_error();
  EXPECT_NE(zrt_nvme_open("/nonexistent-zero-dir"), 0);
  EXPECT_NE(std::string(zrt_last_error()).find("does not exist"),
            std::string::npos);
  EXPECT_EQ(zrt_nvme_alloc(10, ZRT_PARAMS), 0);
  EXPECT_NE(std::string(zrt_last_error()).find("no NVMe store is open"),
            std::string::npos);
  auto dir = std::filesystem::current_path() / "nvme-close-dir";
  std::filesystem::create_directories(dir);
  ASSERT_EQ(zrt_nvme_open(dir.c_str()), 0) << zrt_last_error();
  EXPECT_TRUE(std::filesystem::exists(dir / "zero-rank0.nvme"));
  zrt_nvme_close();
  EXPECT_FALSE(std::filesystem::exists(dir / "zero-rank0.nvme"));
  EXPECT_EQ(nvmeStats().file_bytes, 0u);
  std::filesystem::remove_all(dir);
}

} // namespace
