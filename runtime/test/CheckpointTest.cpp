//===- CheckpointTest.cpp - The checkpoint format, without a run ----------===//
//
// The manifest's JSON round trip and checks, the pieces' reader, and
// mutation fuzzing of both readers of untrusted bytes (manifests and
// safetensors headers): any input gives a result or a message, never a
// crash or a hang.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

using namespace zero::driver;

namespace {

/// A manifest of one 10-element f32 parameter in pieces of 4, 4 and 2
/// elements over three files, and its Adam state whole in file 0.
CkptManifest sample() {
  CkptManifest m;
  m.producer = "test";
  m.step = 7;
  m.seed = 18446744073709551615ull; // Beyond int64: stored as a string.
  m.worldSize = 3;
  m.stage = 3;
  m.partitioned = true;
  m.dataSource = "built-in corpus";
  m.dataTokens = 100;
  m.dataCrc = 0xdeadbeef;
  m.hypers = {{"lr", 1e-3}};
  m.files = {{"rank-00000.bin", 56, 1}, {"rank-00001.bin", 16, 2},
             {"rank-00002.bin", 8, 3}};
  CkptTensor w;
  w.param = "w";
  w.shape = {2, 5};
  w.numel = 10;
  w.padded = 12;
  w.shard = 4;
  w.sharded = true;
  w.pieces = {{0, 0, 0, 4}, {1, 0, 4, 8}, {2, 0, 8, 10}};
  CkptTensor s = w;
  s.state = true;
  s.kind = "exp_avg";
  s.sharded = false;
  s.pieces = {{0, 16, 0, 10}};
  m.tensors = {w, s};
  return m;
}

TEST(Checkpoint, ManifestRoundTrip) {
  CkptManifest m = sample(), back;
  std::string error;
  ASSERT_TRUE(manifestFromJson(manifestToJson(m), back, error, "m")) << error;
  EXPECT_EQ(back.seed, m.seed);
  EXPECT_EQ(back.step, 7);
  EXPECT_EQ(back.dataCrc, 0xdeadbeefu);
  ASSERT_EQ(back.tensors.size(), 2u);
  EXPECT_EQ(back.tensors[1].label(), "optimizer state 'exp_avg' of 'w'");
  EXPECT_EQ(back.tensors[0].pieces[2].begin, 8);
  EXPECT_TRUE(back.hasStates());
  EXPECT_NE(back.find("w", "exp_avg"), nullptr);
  EXPECT_EQ(back.find("w", "exp_avg_sq"), nullptr);
  EXPECT_EQ(manifestToJson(back), manifestToJson(m));
}

TEST(Checkpoint, PiecesMustCoverEachElementOnce) {
  std::string error;
  CkptManifest m = sample(), back;
  m.tensors[0].pieces[2].begin = 7; // Overlaps the second piece.
  m.tensors[0].pieces[2].end = 9;
  EXPECT_FALSE(manifestFromJson(manifestToJson(m), back, error, "m"));
  EXPECT_EQ(error, "m: parameter 'w''s pieces overlap at element 7");
  m = sample();
  m.tensors[0].pieces.pop_back();
  back = CkptManifest();
  EXPECT_FALSE(manifestFromJson(manifestToJson(m), back, error, "m"));
  EXPECT_EQ(error, "m: parameter 'w''s pieces end at element 8 of 10");
  m = sample();
  m.tensors[1].pieces[0].offset = 20; // 40 bytes from 20 pass file 0's 56.
  back = CkptManifest();
  EXPECT_FALSE(manifestFromJson(manifestToJson(m), back, error, "m"));
  EXPECT_EQ(error, "m: optimizer state 'exp_avg' of 'w' has a piece past the "
                   "end of rank-00000.bin");
}

/// Files in a fresh temporary directory.
struct TempDir {
  std::string path;
  TempDir() {
    char name[] = "/tmp/zero-ckpt-test-XXXXXX";
    path = ::mkdtemp(name);
  }
  ~TempDir() { removeTree(path); }
};

TEST(Checkpoint, ReaderJoinsPiecesAndWriterChecksums) {
  TempDir dir;
  CkptManifest m = sample();
  std::vector<float> all(10), state(10);
  for (int i = 0; i < 10; ++i)
    all[i] = static_cast<float>(i), state[i] = 100.f + i;
  std::string error;
  // File q holds w's piece q; file 0 then the whole state.
  std::vector<std::vector<Chunk>> files = {
      {{all.data(), 16}, {state.data(), 40}},
      {{all.data() + 4, 16}},
      {{all.data() + 8, 8}}};
  for (size_t q = 0; q < 3; ++q) {
    ASSERT_TRUE(writeShardFile(dir.path + "/" + m.files[q].name, files[q],
                               m.files[q].crc32, error))
        << error;
    EXPECT_TRUE(verifyFile(dir.path, m.files[q], error)) << error;
  }
  // Writing over an existing file is refused (a save never reuses one).
  uint32_t crc;
  EXPECT_FALSE(writeShardFile(dir.path + "/" + m.files[0].name, files[0], crc,
                              error));
  CkptReader reader(dir.path, m);
  std::vector<float> got(5);
  ASSERT_TRUE(reader.read(m.tensors[0], 3, 8, got.data(), error)) << error;
  EXPECT_EQ(got, std::vector<float>({3, 4, 5, 6, 7}));
  ASSERT_TRUE(reader.read(m.tensors[1], 5, 10, got.data(), error)) << error;
  EXPECT_EQ(got, std::vector<float>({105, 106, 107, 108, 109}));
  // One flipped bit fails the checksum, with the file's name.
  {
    std::fstream f(dir.path + "/rank-00001.bin",
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(5);
    f.put('\x7f');
  }
  EXPECT_FALSE(verifyFile(dir.path, m.files[1], error));
  EXPECT_NE(error.find("rank-00001.bin' fails its checksum"), std::string::npos)
      << error;
}

TEST(Checkpoint, PublishReplacesAndPruneKeepsNewest) {
  TempDir root;
  std::string error;
  for (int step : {1, 2, 3}) {
    std::string temp = ".step.tmp";
    ASSERT_TRUE(makeDirectories(root.path + "/" + temp, error)) << error;
    std::ofstream(root.path + "/" + temp + "/" + kManifestName) << step;
    ASSERT_TRUE(publishCheckpoint(root.path, temp, checkpointDirName(step),
                                  error))
        << error;
  }
  // The same step again replaces it whole.
  ASSERT_TRUE(makeDirectories(root.path + "/.again.tmp", error));
  std::ofstream(root.path + "/.again.tmp/" + kManifestName) << "again";
  ASSERT_TRUE(publishCheckpoint(root.path, ".again.tmp", checkpointDirName(3),
                                error));
  ASSERT_TRUE(makeDirectories(root.path + "/.step-00000009.tmp", error));
  pruneCheckpoints(root.path, 2, checkpointDirName(3));
  struct stat st;
  EXPECT_NE(::stat((root.path + "/step-00000001").c_str(), &st), 0);
  EXPECT_EQ(::stat((root.path + "/step-00000002").c_str(), &st), 0);
  EXPECT_NE(::stat((root.path + "/.step-00000009.tmp").c_str(), &st), 0);
  std::string dir;
  ASSERT_TRUE(resolveCheckpoint(root.path, dir, error)) << error;
  EXPECT_EQ(dir, root.path + "/step-00000003");
  std::ifstream in(dir + "/" + kManifestName);
  std::string text;
  in >> text;
  EXPECT_EQ(text, "again");
  // The checkpoint just saved is kept even when newer-numbered ones exist
  // (a run resumed from an older checkpoint into the same directory).
  pruneCheckpoints(root.path, 1, checkpointDirName(2));
  EXPECT_EQ(::stat((root.path + "/step-00000002").c_str(), &st), 0);
  EXPECT_NE(::stat((root.path + "/step-00000003").c_str(), &st), 0);
}

/// Random edits of a valid text: byte flips, cuts, duplicated spans.
std::string mutate(std::string s, std::mt19937 &rng) {
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !s.empty(); ++e) {
    size_t at = rng() % s.size();
    switch (rng() % 4) {
    case 0:
      s[at] = static_cast<char>(rng());
      break;
    case 1:
      s.resize(at);
      break;
    case 2:
      s.insert(at, s.substr(rng() % s.size(), rng() % 16));
      break;
    default:
      s[at] = "0123456789-{}[]\",:"[rng() % 18];
    }
  }
  return s;
}

TEST(Checkpoint, FuzzManifest) {
  std::mt19937 rng(1);
  const std::string text = manifestToJson(sample());
  int accepted = 0;
  for (int i = 0; i < 5000; ++i) {
    CkptManifest m;
    std::string error;
    if (manifestFromJson(mutate(text, rng), m, error, "m"))
      ++accepted;
    else
      EXPECT_FALSE(error.empty());
  }
  // Most edits break something the reader checks; some (in a name, a
  // producer) are harmless.
  EXPECT_LT(accepted, 2500);
}

TEST(Checkpoint, FuzzSafetensorsImport) {
  TempDir dir;
  std::string header =
      "{\"__metadata__\": {\"a\": \"b\"}, \"w\": {\"dtype\": \"F32\", "
      "\"shape\": [2, 2], \"data_offsets\": [0, 16]}, \"b\": {\"dtype\": "
      "\"F64\", \"shape\": [1], \"data_offsets\": [16, 24]}}";
  std::mt19937 rng(2);
  std::string error;
  int imported = 0;
  for (int i = 0; i < 1000; ++i) {
    std::string h = i == 0 ? header : mutate(header, rng);
    std::string bytes(8, '\0');
    uint64_t n = h.size();
    if (i % 50 == 7)
      n = rng(); // A header size that lies.
    for (int k = 0; k < 8; ++k)
      bytes[k] = static_cast<char>(n >> (8 * k));
    bytes += h + std::string(24, '\1');
    std::string in = dir.path + "/in.safetensors";
    std::ofstream(in, std::ios::binary) << bytes;
    std::string out = dir.path + "/ck" + std::to_string(i);
    if (importSafetensors(in, out, 0, error)) {
      ++imported;
      CkptManifest m;
      ASSERT_TRUE(readManifest(out, m, error)) << error;
      for (const CkptFile &f : m.files)
        EXPECT_TRUE(verifyFile(out, f, error)) << error;
    } else {
      EXPECT_FALSE(error.empty());
      struct stat st;
      EXPECT_NE(::stat(out.c_str(), &st), 0) << "a failed import left " << out;
    }
  }
  EXPECT_GE(imported, 1);
}

} // namespace
