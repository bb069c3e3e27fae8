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
#include <functional>
#include <random>
#include <set>
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
  EXPECT_EQ(error, "m: optimizer state 'exp_avg' of 'w''s piece #0 ('offset' "
                   "20, 40 bytes) runs past the end of rank-00000.bin (56 "
                   "bytes)");
}

/// The manifest `m` would be, with the seal `sealedFrom` was written with:
/// `m`'s fields edited into `sealedFrom`'s text by hand.
std::string editedWithoutResealing(const CkptManifest &m,
                                   const std::string &sealedFrom) {
  std::string text = manifestToJson(m);
  size_t digits = text.rfind('"') - 8, old = sealedFrom.rfind('"') - 8;
  text.replace(digits, 8, sealedFrom.substr(old, 8));
  return text;
}

/// Each check a reader makes, with the field its one line names.
TEST(Checkpoint, ManifestFieldsAreChecked) {
  const CkptManifest good = sample();
  const std::string text = manifestToJson(good);
  auto refusal = [&](const std::function<void(CkptManifest &)> &edit,
                     bool reseal = true) {
    CkptManifest m = good, back;
    edit(m);
    std::string error;
    std::string t = reseal ? manifestToJson(m) : editedWithoutResealing(m, text);
    EXPECT_FALSE(manifestFromJson(t, back, error, "m"));
    return error;
  };
  // The example: a piece's offset moved off its elements.
  EXPECT_EQ(refusal([](CkptManifest &m) { m.tensors[0].pieces[1].offset = 9; }),
            "m: parameter 'w''s piece #1 has 'offset' 9, not a multiple of "
            "its 4-byte elements");
  EXPECT_EQ(refusal([](CkptManifest &m) { m.worldSize = 4000000000; }),
            "m: the manifest has 'world_size' 4000000000, outside 1 to "
            "1048576");
  EXPECT_EQ(refusal([](CkptManifest &m) { m.stage = 4; }),
            "m: the manifest has 'stage' 4, outside 0 to 3");
  EXPECT_EQ(refusal([](CkptManifest &m) { m.worldSize = 2; }),
            "m: it lists 3 files for 'world_size' 2 (one per saving rank at "
            "most)");
  EXPECT_EQ(refusal([](CkptManifest &m) { m.tensors[1].shard = 5; }),
            "m: optimizer state 'exp_avg' of 'w' has padded 12 and shard 5, "
            "but 10 elements on 'world_size' 3 are padded to 12 in shards of "
            "4");
  // Aligned and inside the file, but on top of the parameter's bytes.
  EXPECT_EQ(refusal([](CkptManifest &m) { m.tensors[1].pieces[0].offset = 12; }),
            "m: optimizer state 'exp_avg' of 'w''s piece #0 ('offset' 12) "
            "overlaps parameter 'w''s piece #0 in rank-00000.bin");
  EXPECT_EQ(refusal([](CkptManifest &m) { m.files[2].name = m.files[0].name; }),
            "m: file #2 has name 'rank-00000.bin', as an earlier file does");
  EXPECT_EQ(refusal([](CkptManifest &m) { m.tensors[0].shape.assign(33, 1); }),
            "m: parameter 'w' has a 'shape' of 33 dimensions (at most 32)");
  EXPECT_EQ(refusal([](CkptManifest &m) {
              m.tensors[0].pieces.push_back(m.tensors[0].pieces[0]);
            }),
            "m: parameter 'w' has 4 pieces in 3 files (at most one per file)");
  // A change every field check passes: only the seal sees it.
  EXPECT_EQ(refusal([](CkptManifest &m) { m.step = 8; }, /*reseal=*/false),
            "m: fails its own checksum ('manifest_crc32' " +
                text.substr(text.rfind('"') - 8, 8) +
                ", its bytes give " +
                manifestToJson([] {
                  CkptManifest m = sample();
                  m.step = 8;
                  return m;
                }())
                    .substr(text.rfind('"') - 8, 8) +
                "): it was edited or damaged; restore it from a copy");
  // The seal moved from the end to the front.
  size_t seal = text.rfind(",\n \"manifest_crc32\"");
  std::string moved = "{\n" + text.substr(seal + 2, 29) + ",\n" +
                      text.substr(2, seal - 2) + "\n}\n";
  CkptManifest back;
  std::string error;
  EXPECT_FALSE(manifestFromJson(moved, back, error, "m"));
  EXPECT_NE(error.find("'manifest_crc32' is not the manifest's last member"),
            std::string::npos)
      << error;
}

/// Version 1 manifests, written before the seal, are read (their fields
/// checked), and may not carry one.
TEST(Checkpoint, VersionOneHasNoSeal) {
  std::string text = manifestToJson(sample());
  size_t seal = text.rfind(",\n \"manifest_crc32\"");
  ASSERT_NE(seal, std::string::npos);
  std::string v1 = text.substr(0, seal) + "\n}\n";
  v1.replace(v1.find("\"version\": 2"), 12, "\"version\": 1");
  CkptManifest m;
  std::string error;
  ASSERT_TRUE(manifestFromJson(v1, m, error, "m")) << error;
  EXPECT_EQ(m.version, 1);
  // Written again, it is version 2 and sealed.
  EXPECT_EQ(manifestToJson(m), text);
  std::string both = text;
  both.replace(both.find("\"version\": 2"), 12, "\"version\": 1");
  EXPECT_FALSE(manifestFromJson(both, m, error, "m"));
  EXPECT_EQ(error, "m: format version 1 has no 'manifest_crc32' (version 2 "
                   "does)");
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

/// Byte edits of a sealed manifest: the reader accepts only what reads as
/// the manifest that was written (an edit of white space after the seal, or
/// none), and refuses everything else with a message.
TEST(Checkpoint, FuzzManifest) {
  std::mt19937 rng(1);
  const std::string text = manifestToJson(sample());
  int accepted = 0;
  for (int i = 0; i < 5000; ++i) {
    CkptManifest m;
    std::string error;
    if (manifestFromJson(mutate(text, rng), m, error, "m")) {
      ++accepted;
      EXPECT_EQ(manifestToJson(m), text);
    } else {
      EXPECT_FALSE(error.empty());
    }
  }
  EXPECT_LT(accepted, 250);
}

/// What the reader promises of a manifest it accepts, checked the long
/// way: element by element and byte by byte.
std::string oracle(const CkptManifest &m) {
  if (m.worldSize < 1 || m.worldSize > (1 << 20) || m.stage < 0 || m.stage > 3)
    return "world size or stage";
  if (static_cast<int64_t>(m.files.size()) > m.worldSize)
    return "files";
  std::vector<std::set<uint64_t>> used(m.files.size());
  for (const CkptTensor &t : m.tensors) {
    int64_t n = 1;
    for (int64_t d : t.shape)
      n *= d;
    int64_t padded = t.numel;
    while (padded % m.worldSize)
      ++padded;
    if (n != t.numel || t.padded != padded ||
        t.shard * m.worldSize != padded)
      return t.label() + " layout";
    if (t.numel > 4096)
      return t.label() + " size";
    std::vector<int> covered(t.numel, 0);
    int64_t eb = static_cast<int64_t>(dtypeBytes(t.dtype));
    for (const CkptPiece &p : t.pieces) {
      if (p.file >= m.files.size() || p.offset % eb || p.begin < 0 ||
          p.end > t.numel)
        return t.label() + " piece";
      for (int64_t e = p.begin; e < p.end; ++e) {
        ++covered[e];
        for (int64_t b = 0; b < eb; ++b) {
          uint64_t at = p.offset + (e - p.begin) * eb + b;
          if (at >= m.files[p.file].bytes || !used[p.file].insert(at).second)
            return t.label() + " bytes";
        }
      }
    }
    for (int c : covered)
      if (c != 1)
        return t.label() + " coverage";
  }
  return "";
}

/// Edits of single fields (offsets, ranges, sizes, counts, world size,
/// stage, layout, files, pieces) to values near and far from the written
/// ones. Unsealed, as an edit by hand: every one that changes the manifest
/// is refused. Resealed, as a writer with a bug would write them: the
/// fields' checks refuse every manifest the oracle above finds broken.
TEST(Checkpoint, FuzzManifestFields) {
  std::mt19937_64 rng(3);
  const CkptManifest good = sample();
  const std::string text = manifestToJson(good);
  auto value = [&](int64_t was) -> int64_t {
    const int64_t picks[] = {0,   1,          2,          3,
                             4,   7,          8,          9,
                             12,  16,         -1,         int64_t(1) << 31,
                             int64_t(1) << 32, 4000000000, INT64_MAX,
                             INT64_MIN};
    switch (rng() % 4) {
    case 0:
      return was + 1;
    case 1:
      return was - 1;
    case 2:
      return was * 2;
    default:
      return picks[rng() % (sizeof picks / sizeof *picks)];
    }
  };
  int refusedSealed = 0, acceptedResealed = 0;
  for (int i = 0; i < 4000; ++i) {
    CkptManifest m = good;
    CkptTensor &t = m.tensors[rng() % m.tensors.size()];
    CkptPiece &p = t.pieces[rng() % t.pieces.size()];
    CkptFile &f = m.files[rng() % m.files.size()];
    switch (rng() % 14) {
    case 0: m.worldSize = value(m.worldSize); break;
    case 1: m.stage = value(m.stage); break;
    case 2: p.offset = static_cast<uint64_t>(value(static_cast<int64_t>(p.offset))); break;
    case 3: p.begin = value(p.begin); break;
    case 4: p.end = value(p.end); break;
    case 5: p.file = static_cast<unsigned>(value(p.file)); break;
    case 6: t.numel = value(t.numel); break;
    case 7: t.padded = value(t.padded); break;
    case 8: t.shard = value(t.shard); break;
    case 9: {
      int64_t &d = t.shape[rng() % t.shape.size()];
      d = value(d);
      break;
    }
    case 10: f.bytes = static_cast<uint64_t>(value(static_cast<int64_t>(f.bytes))); break;
    case 11: t.pieces.push_back(p); break;
    case 12: t.pieces.erase(t.pieces.begin() + (rng() % t.pieces.size())); break;
    default: m.files.push_back({"rank-00009.bin", f.bytes, 0}); break;
    }
    std::string resealed = manifestToJson(m);
    bool changed = resealed != text;
    CkptManifest back;
    std::string error;
    if (manifestFromJson(editedWithoutResealing(m, text), back, error, "m")) {
      EXPECT_FALSE(changed) << "an edit passed: " << resealed;
    } else {
      EXPECT_FALSE(error.empty());
      refusedSealed += changed;
    }
    back = CkptManifest();
    if (manifestFromJson(resealed, back, error, "m")) {
      ++acceptedResealed;
      EXPECT_EQ(oracle(back), "") << "accepted a broken manifest: " << resealed;
    } else {
      EXPECT_NE(error.find("m: "), std::string::npos);
    }
  }
  // Most edits break a field; some (the stage, a world size whose layout is
  // the same) make another valid manifest.
  EXPECT_GT(refusedSealed, 3000);
  EXPECT_LT(acceptedResealed, 1000);
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
