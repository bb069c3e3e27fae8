//===- Checkpoint.cpp - Sharded checkpoints: format and files -------------===//

#include "Checkpoint.h"

#include "Json.h"

#include "zero/runtime.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <map>
#include <set>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

using namespace zero::driver;

namespace {

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

std::string join(const std::string &dir, const std::string &name) {
  if (dir.empty() || dir.back() == '/')
    return dir + name;
  return dir + "/" + name;
}

bool isDirectory(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string &path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

/// The step of a published checkpoint directory name `step-N`, or -1.
int64_t stepOfName(const std::string &name) {
  if (name.rfind("step-", 0) != 0 || name.size() == 5 || name.size() > 5 + 18)
    return -1;
  int64_t v = 0;
  for (size_t i = 5; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9')
      return -1;
    v = v * 10 + (name[i] - '0');
  }
  return v;
}

std::vector<std::string> listDirectory(const std::string &path) {
  std::vector<std::string> names;
  if (DIR *d = ::opendir(path.c_str())) {
    while (dirent *e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..")
        names.push_back(n);
    }
    ::closedir(d);
  }
  return names;
}

bool preadAll(int fd, void *out, size_t bytes, uint64_t offset) {
  char *p = static_cast<char *>(out);
  while (bytes > 0) {
    ssize_t n = ::pread(fd, p, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    bytes -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

/// safetensors' dtype names.
const std::pair<DType, const char *> kSafetensorsTypes[] = {
    {DType::F32, "F32"}, {DType::F64, "F64"}, {DType::BF16, "BF16"},
    {DType::F16, "F16"}, {DType::I8, "I8"},   {DType::I16, "I16"},
    {DType::I32, "I32"}, {DType::I64, "I64"}};

/// Reads a manifest's JSON, with messages that say where.
struct Reader {
  std::string &error;
  const std::string &where;

  bool fail(const std::string &what) {
    error = where + ": " + what;
    return false;
  }
  const JsonValue *need(const JsonValue &obj, const char *key,
                        JsonValue::Kind kind, const std::string &in) {
    const JsonValue *v = obj.get(key);
    if (!v || v->kind() != kind) {
      fail(in + " lacks '" + key + "' of the right type");
      return nullptr;
    }
    return v;
  }
  bool integer(const JsonValue &obj, const char *key, int64_t &out,
               const std::string &in, int64_t min = 0,
               int64_t max = INT64_MAX) {
    const JsonValue *v = obj.get(key);
    if (!v || !v->isInteger())
      return fail(in + " lacks '" + key + "' (an integer from " +
                  std::to_string(min) + " to " + std::to_string(max) + ")");
    if (v->asInt() < min || v->asInt() > max)
      return fail(in + " has '" + key + "' " + std::to_string(v->asInt()) +
                  ", outside " + std::to_string(min) + " to " +
                  std::to_string(max));
    out = v->asInt();
    return true;
  }
  bool string(const JsonValue &obj, const char *key, std::string &out,
              const std::string &in) {
    const JsonValue *v = need(obj, key, JsonValue::Kind::String, in);
    if (!v)
      return false;
    out = v->asString();
    return true;
  }
  bool crc(const JsonValue &obj, uint32_t &out, const std::string &in,
           const char *key = "crc32") {
    std::string s;
    if (!string(obj, key, s, in))
      return false;
    if (s.size() != 8 || s.find_first_not_of("0123456789abcdef") !=
                             std::string::npos)
      return fail(in + " has " + key + " '" + s +
                  "', not 8 lower-case hexadecimal digits");
    unsigned long v = std::strtoul(s.c_str(), nullptr, 16);
    out = static_cast<uint32_t>(v);
    return true;
  }
};

/// Where the seal's key starts in a manifest's text (npos: nowhere). It is
/// the last member, so its last occurrence.
size_t sealAt(const std::string &text) {
  return text.rfind(std::string("\"") + kManifestChecksumKey + "\"");
}

/// Whether the text from the seal's key on is that member alone and the
/// end of the manifest: `"manifest_crc32": "xxxxxxxx"`, then `}`, with
/// white space around.
bool sealIsLast(const std::string &text, size_t at) {
  size_t i = at + std::strlen(kManifestChecksumKey) + 2;
  auto space = [&] {
    while (i < text.size() && std::strchr(" \t\r\n", text[i]))
      ++i;
  };
  space();
  if (i >= text.size() || text[i++] != ':')
    return false;
  space();
  if (text.compare(i, 1, "\"") != 0 || text.compare(i + 9, 1, "\"") != 0)
    return false;
  i += 10;
  space();
  if (i >= text.size() || text[i++] != '}')
    return false;
  space();
  return i == text.size();
}

/// A byte range [begin, end) of a file that a piece takes.
struct Extent {
  uint64_t begin, end;
  size_t piece;  ///< Its index in its tensor's pieces.
  size_t tensor; ///< Its tensor's index in the manifest.
};

} // namespace

std::string CkptTensor::label() const {
  return state ? "optimizer state '" + kind + "' of '" + param + "'"
               : "parameter '" + param + "'";
}

const CkptTensor *CkptManifest::find(const std::string &p,
                                     const std::string &k) const {
  for (const CkptTensor &t : tensors)
    if (t.param == p && t.kind == k && t.state == !k.empty())
      return &t;
  return nullptr;
}

bool CkptManifest::hasStates() const {
  for (const CkptTensor &t : tensors)
    if (t.state)
      return true;
  return false;
}

std::string zero::driver::shardFileName(int rank) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "rank-%05d.bin", rank);
  return buf;
}

std::string zero::driver::checkpointDirName(int64_t step) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "step-%08lld", static_cast<long long>(step));
  return buf;
}

//===----------------------------------------------------------------------===//
// The manifest
//===----------------------------------------------------------------------===//

std::string zero::driver::manifestToJson(const CkptManifest &m) {
  JsonValue root = JsonValue::object();
  root.set("format", JsonValue::string("zero-mlir checkpoint"));
  // The writer writes the current version whatever it read.
  root.set("version", JsonValue::integer(kCheckpointVersion));
  root.set("producer", JsonValue::string(m.producer));
  root.set("step", JsonValue::integer(m.step));
  // A string: JSON numbers are doubles to most readers.
  root.set("seed", JsonValue::string(std::to_string(m.seed)));
  root.set("world_size", JsonValue::integer(m.worldSize));
  root.set("stage", JsonValue::integer(m.stage));
  root.set("partitioned", JsonValue::boolean(m.partitioned));
  if (!m.dataSource.empty()) {
    JsonValue data = JsonValue::object();
    data.set("source", JsonValue::string(m.dataSource));
    data.set("tokens", JsonValue::integer(m.dataTokens));
    data.set("crc32", JsonValue::string(hex32(m.dataCrc)));
    root.set("data", std::move(data));
  }
  JsonValue hypers = JsonValue::object();
  for (const auto &h : m.hypers)
    hypers.set(h.first, JsonValue::number(h.second));
  root.set("hyper", std::move(hypers));
  JsonValue tensors = JsonValue::array();
  for (const CkptTensor &t : m.tensors) {
    JsonValue o = JsonValue::object();
    o.set("role", JsonValue::string(t.state ? "state" : "param"));
    o.set("param", JsonValue::string(t.param));
    if (t.state)
      o.set("kind", JsonValue::string(t.kind));
    o.set("dtype", JsonValue::string(dtypeName(t.dtype)));
    JsonValue shape = JsonValue::array();
    for (int64_t d : t.shape)
      shape.push(JsonValue::integer(d));
    o.set("shape", std::move(shape));
    o.set("numel", JsonValue::integer(t.numel));
    o.set("padded", JsonValue::integer(t.padded));
    o.set("shard", JsonValue::integer(t.shard));
    o.set("sharded", JsonValue::boolean(t.sharded));
    JsonValue pieces = JsonValue::array();
    for (const CkptPiece &p : t.pieces) {
      JsonValue po = JsonValue::object();
      po.set("file", JsonValue::integer(p.file));
      po.set("offset", JsonValue::integer(static_cast<int64_t>(p.offset)));
      po.set("begin", JsonValue::integer(p.begin));
      po.set("end", JsonValue::integer(p.end));
      pieces.push(std::move(po));
    }
    o.set("pieces", std::move(pieces));
    tensors.push(std::move(o));
  }
  root.set("tensors", std::move(tensors));
  JsonValue files = JsonValue::array();
  for (const CkptFile &f : m.files) {
    JsonValue o = JsonValue::object();
    o.set("name", JsonValue::string(f.name));
    o.set("bytes", JsonValue::integer(static_cast<int64_t>(f.bytes)));
    o.set("crc32", JsonValue::string(hex32(f.crc32)));
    files.push(std::move(o));
  }
  root.set("files", std::move(files));
  // The seal: a placeholder, then its digits are the CRC-32 of every byte
  // before its key.
  root.set(kManifestChecksumKey, JsonValue::string("00000000"));
  std::string text = root.dump(1) + "\n";
  size_t at = sealAt(text);
  size_t digits = text.find('"', at + std::strlen(kManifestChecksumKey) + 2) + 1;
  text.replace(digits, 8, hex32(crc32Update(0, text.data(), at)));
  return text;
}

bool zero::driver::manifestFromJson(const std::string &text, CkptManifest &m,
                                    std::string &error,
                                    const std::string &where) {
  JsonValue root;
  std::string why;
  if (!parseJson(text, root, why)) {
    error = where + ": not valid JSON (" + why + ")";
    return false;
  }
  Reader r{error, where};
  if (!root.isObject())
    return r.fail("not a JSON object");
  const JsonValue *format = root.get("format");
  if (!format || !format->isString() ||
      format->asString() != "zero-mlir checkpoint")
    return r.fail("not a zero-mlir checkpoint manifest (no \"format\": "
                  "\"zero-mlir checkpoint\")");
  if (!r.integer(root, "version", m.version, "the manifest"))
    return false;
  if (m.version != 1 && m.version != kCheckpointVersion)
    return r.fail("format version " + std::to_string(m.version) +
                  ", but this build reads versions 1 to " +
                  std::to_string(kCheckpointVersion));
  // Version 2 is sealed; the seal is checked last, after the fields, so
  // that an edit which breaks a field is reported by that field's name.
  uint32_t sealed = 0;
  if (m.version >= 2 &&
      !r.crc(root, sealed, "the manifest", kManifestChecksumKey))
    return false;
  if (m.version == 1 && root.get(kManifestChecksumKey))
    return r.fail(std::string("format version 1 has no '") +
                  kManifestChecksumKey + "' (version 2 does)");
  std::string seed;
  if (!r.string(root, "producer", m.producer, "the manifest") ||
      !r.integer(root, "step", m.step, "the manifest") ||
      !r.string(root, "seed", seed, "the manifest") ||
      !r.integer(root, "world_size", m.worldSize, "the manifest", 1,
                 kMaxCheckpointWorldSize) ||
      !r.integer(root, "stage", m.stage, "the manifest", 0,
                 kMaxCheckpointStage))
    return false;
  char *end = nullptr;
  errno = 0;
  m.seed = std::strtoull(seed.c_str(), &end, 10);
  if (seed.empty() || seed.find_first_not_of("0123456789") != std::string::npos ||
      errno)
    return r.fail("the seed '" + seed + "' is not a decimal 64-bit integer");
  const JsonValue *part = r.need(root, "partitioned", JsonValue::Kind::Bool,
                                 "the manifest");
  if (!part)
    return false;
  m.partitioned = part->asBool();
  if (const JsonValue *data = root.get("data")) {
    if (!data->isObject())
      return r.fail("'data' is not an object");
    if (!r.string(*data, "source", m.dataSource, "the manifest's data") ||
        !r.integer(*data, "tokens", m.dataTokens, "the manifest's data") ||
        !r.crc(*data, m.dataCrc, "the manifest's data"))
      return false;
  }
  if (const JsonValue *h = root.get("hyper")) {
    if (!h->isObject())
      return r.fail("'hyper' is not an object");
    for (const auto &kv : h->members())
      if (kv.second.isNumber())
        m.hypers.emplace_back(kv.first, kv.second.asDouble());
  }
  const JsonValue *files =
      r.need(root, "files", JsonValue::Kind::Array, "the manifest");
  if (!files)
    return false;
  std::set<std::string> fileNames;
  for (const JsonValue &f : files->items()) {
    std::string in = "file #" + std::to_string(m.files.size());
    if (!f.isObject())
      return r.fail(in + " is not an object");
    CkptFile file;
    int64_t bytes = 0;
    if (!r.string(f, "name", file.name, in) ||
        !r.integer(f, "bytes", bytes, in) || !r.crc(f, file.crc32, in))
      return false;
    if (file.name.empty() || file.name.find('/') != std::string::npos ||
        file.name[0] == '.')
      return r.fail(in + " has name '" + file.name +
                    "', which is not a plain file name");
    file.bytes = static_cast<uint64_t>(bytes);
    if (!fileNames.insert(file.name).second)
      return r.fail(in + " has name '" + file.name +
                    "', as an earlier file does");
    m.files.push_back(file);
  }
  // One file per saving rank at most.
  if (static_cast<int64_t>(m.files.size()) > m.worldSize)
    return r.fail("it lists " + std::to_string(m.files.size()) +
                  " files for 'world_size' " + std::to_string(m.worldSize) +
                  " (one per saving rank at most)");
  const JsonValue *tensors =
      r.need(root, "tensors", JsonValue::Kind::Array, "the manifest");
  if (!tensors)
    return false;
  // The bytes each file's pieces take, and the tensors seen.
  std::map<unsigned, std::vector<Extent>> extents;
  std::set<std::pair<std::string, std::string>> tensorKeys;
  for (const JsonValue &tj : tensors->items()) {
    std::string in = "tensor #" + std::to_string(m.tensors.size());
    if (!tj.isObject())
      return r.fail(in + " is not an object");
    CkptTensor t;
    std::string role, dtype;
    if (!r.string(tj, "role", role, in) || !r.string(tj, "param", t.param, in) ||
        !r.string(tj, "dtype", dtype, in))
      return false;
    if (role != "param" && role != "state")
      return r.fail(in + " has role '" + role + "' (expected param or state)");
    t.state = role == "state";
    if (t.state && !r.string(tj, "kind", t.kind, in))
      return false;
    if (t.state && t.kind.empty())
      return r.fail(in + " is a state with an empty kind");
    in = t.label();
    if (!parseDType(dtype, t.dtype))
      return r.fail(in + " has unknown dtype '" + dtype + "'");
    const JsonValue *shape = r.need(tj, "shape", JsonValue::Kind::Array, in);
    if (!shape)
      return false;
    if (shape->items().size() > kMaxCheckpointRank)
      return r.fail(in + " has a 'shape' of " +
                    std::to_string(shape->items().size()) +
                    " dimensions (at most " +
                    std::to_string(kMaxCheckpointRank) + ")");
    int64_t n = 1;
    for (const JsonValue &d : shape->items()) {
      if (!d.isInteger() || d.asInt() < 0)
        return r.fail(in + " has a negative or non-integer size");
      if (d.asInt() != 0 && n > INT64_MAX / 16 / d.asInt())
        return r.fail(in + " has a shape whose element count overflows");
      n *= d.asInt();
      t.shape.push_back(d.asInt());
    }
    if (!r.integer(tj, "numel", t.numel, in) ||
        !r.integer(tj, "padded", t.padded, in) ||
        !r.integer(tj, "shard", t.shard, in))
      return false;
    if (t.numel != n)
      return r.fail(in + " has numel " + std::to_string(t.numel) +
                    " but its shape holds " + std::to_string(n));
    // The saving run's flat layout, by the runtime's rule.
    int64_t padded = 0, shard = 0;
    if (zrt_flat_layout(t.numel, m.worldSize, &padded, &shard) != 0 ||
        t.padded != padded || t.shard != shard)
      return r.fail(in + " has padded " + std::to_string(t.padded) +
                    " and shard " + std::to_string(t.shard) + ", but " +
                    std::to_string(t.numel) + " elements on 'world_size' " +
                    std::to_string(m.worldSize) + " are padded to " +
                    std::to_string(padded) + " in shards of " +
                    std::to_string(shard));
    const JsonValue *sharded = tj.get("sharded");
    t.sharded = sharded && sharded->isBool() && sharded->asBool();
    const JsonValue *pieces = r.need(tj, "pieces", JsonValue::Kind::Array, in);
    if (!pieces)
      return false;
    size_t eb = dtypeBytes(t.dtype);
    // One piece per file at most, and so no more than there are files.
    if (pieces->items().size() > m.files.size())
      return r.fail(in + " has " + std::to_string(pieces->items().size()) +
                    " pieces in " + std::to_string(m.files.size()) +
                    " files (at most one per file)");
    for (const JsonValue &pj : pieces->items()) {
      if (!pj.isObject())
        return r.fail(in + " has a piece that is not an object");
      CkptPiece p;
      int64_t file = 0, offset = 0;
      if (!r.integer(pj, "file", file, in + "'s piece") ||
          !r.integer(pj, "offset", offset, in + "'s piece") ||
          !r.integer(pj, "begin", p.begin, in + "'s piece") ||
          !r.integer(pj, "end", p.end, in + "'s piece"))
        return false;
      if (file >= static_cast<int64_t>(m.files.size()))
        return r.fail(in + " has a piece in file #" + std::to_string(file) +
                      ", but there are " + std::to_string(m.files.size()) +
                      " files");
      p.file = static_cast<unsigned>(file);
      p.offset = static_cast<uint64_t>(offset);
      std::string piece = in + "'s piece #" + std::to_string(t.pieces.size());
      if (p.offset % eb != 0)
        return r.fail(piece + " has 'offset' " + std::to_string(offset) +
                      ", not a multiple of its " + std::to_string(eb) +
                      "-byte elements");
      if (p.begin >= p.end || p.end > t.numel)
        return r.fail(piece + " has 'begin' " + std::to_string(p.begin) +
                      " and 'end' " + std::to_string(p.end) +
                      ", not a range inside its " + std::to_string(t.numel) +
                      " elements");
      uint64_t bytes = static_cast<uint64_t>(p.end - p.begin) * eb;
      const CkptFile &in_file = m.files[p.file];
      if (p.offset > in_file.bytes || bytes > in_file.bytes - p.offset)
        return r.fail(piece + " ('offset' " + std::to_string(offset) + ", " +
                      std::to_string(bytes) + " bytes) runs past the end of " +
                      in_file.name + " (" + std::to_string(in_file.bytes) +
                      " bytes)");
      // The tensor goes in at index m.tensors.size() once checked whole.
      extents[p.file].push_back(
          {p.offset, p.offset + bytes, t.pieces.size(), m.tensors.size()});
      t.pieces.push_back(p);
    }
    // The pieces cover every element exactly once.
    std::vector<CkptPiece> sorted = t.pieces;
    std::sort(sorted.begin(), sorted.end(),
              [](const CkptPiece &a, const CkptPiece &b) {
                return a.begin < b.begin;
              });
    int64_t next = 0;
    for (const CkptPiece &p : sorted) {
      if (p.begin != next)
        return r.fail(in + "'s pieces " +
                      (p.begin < next ? "overlap" : "leave a gap") +
                      " at element " + std::to_string(std::min(p.begin, next)));
      next = p.end;
    }
    if (next != t.numel)
      return r.fail(in + "'s pieces end at element " + std::to_string(next) +
                    " of " + std::to_string(t.numel));
    if (!tensorKeys.insert({t.param, t.kind}).second)
      return r.fail(in + " appears twice");
    m.tensors.push_back(std::move(t));
  }
  // No two pieces share a byte of a file.
  for (auto &[file, list] : extents) {
    std::sort(list.begin(), list.end(), [](const Extent &a, const Extent &b) {
      return a.begin < b.begin;
    });
    for (size_t i = 1; i < list.size(); ++i)
      if (list[i].begin < list[i - 1].end)
        return r.fail(m.tensors[list[i].tensor].label() + "'s piece #" +
                      std::to_string(list[i].piece) + " ('offset' " +
                      std::to_string(list[i].begin) + ") overlaps " +
                      m.tensors[list[i - 1].tensor].label() + "'s piece #" +
                      std::to_string(list[i - 1].piece) + " in " +
                      m.files[file].name);
  }
  // Last, the seal: the fields are consistent, and are they as written?
  if (m.version >= 2) {
    size_t at = sealAt(text);
    if (at == std::string::npos || !sealIsLast(text, at))
      return r.fail(std::string("'") + kManifestChecksumKey +
                    "' is not the manifest's last member: it was edited");
    uint32_t computed = crc32Update(0, text.data(), at);
    if (computed != sealed)
      return r.fail(std::string("fails its own checksum ('") +
                    kManifestChecksumKey + "' " + hex32(sealed) +
                    ", its bytes give " + hex32(computed) +
                    "): it was edited or damaged; restore it from a copy");
    m.sealed = true;
    m.manifestCrc = sealed;
  }
  return true;
}

bool zero::driver::resolveCheckpoint(const std::string &path, std::string &dir,
                                     std::string &error) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    error = "cannot open checkpoint '" + path + "': " + std::strerror(errno);
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    error = "checkpoint '" + path + "' is not a directory";
    return false;
  }
  if (exists(join(path, kManifestName))) {
    dir = path;
    return true;
  }
  int64_t best = -1;
  for (const std::string &n : listDirectory(path)) {
    int64_t step = stepOfName(n);
    if (step > best && exists(join(join(path, n), kManifestName))) {
      best = step;
      dir = join(path, n);
    }
  }
  if (best < 0) {
    error = "'" + path + "' holds no checkpoint (no " + kManifestName +
            ", and no step-N directory with one)";
    return false;
  }
  return true;
}

bool zero::driver::openCheckpoint(const std::string &path, std::string &dir,
                                  CkptManifest &m, std::string &error) {
  return resolveCheckpoint(path, dir, error) && readManifest(dir, m, error);
}

bool zero::driver::readManifest(const std::string &dir, CkptManifest &m,
                                std::string &error) {
  std::string path = join(dir, kManifestName), text;
  if (!readFileLimited(path, size_t(1) << 28, text, error, "checkpoint manifest"))
    return false;
  return manifestFromJson(text, m, error, "checkpoint manifest '" + path + "'");
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

uint32_t zero::driver::crc32Update(uint32_t crc, const void *data,
                                   size_t bytes) {
  const Bytef *p = static_cast<const Bytef *>(data);
  uLong c = crc;
  while (bytes > 0) {
    uInt n = static_cast<uInt>(std::min<size_t>(bytes, 1u << 30));
    c = ::crc32(c, p, n);
    p += n;
    bytes -= n;
  }
  return static_cast<uint32_t>(c);
}

bool zero::driver::verifyFile(const std::string &dir, const CkptFile &file,
                              std::string &error) {
  std::string path = join(dir, file.name);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = "checkpoint file '" + path + "' cannot be read: " +
            std::strerror(errno);
    return false;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    error = "checkpoint file '" + path + "' is not a regular file";
    return false;
  }
  if (static_cast<uint64_t>(st.st_size) != file.bytes) {
    ::close(fd);
    error = "checkpoint file '" + path + "' has " + std::to_string(st.st_size) +
            " bytes, but the manifest says " + std::to_string(file.bytes) +
            ": it is truncated or was replaced";
    return false;
  }
  std::vector<char> buf(size_t(4) << 20);
  uint32_t crc = 0;
  uint64_t offset = 0;
  while (offset < file.bytes) {
    size_t n = static_cast<size_t>(
        std::min<uint64_t>(buf.size(), file.bytes - offset));
    if (!preadAll(fd, buf.data(), n, offset)) {
      ::close(fd);
      error = "checkpoint file '" + path + "' cannot be read at byte " +
              std::to_string(offset);
      return false;
    }
    crc = crc32Update(crc, buf.data(), n);
    offset += n;
  }
  ::close(fd);
  if (crc != file.crc32) {
    error = "checkpoint file '" + path + "' fails its checksum (CRC-32 " +
            hex32(crc) + ", the manifest says " + hex32(file.crc32) +
            "): it is corrupted";
    return false;
  }
  return true;
}

CkptReader::~CkptReader() {
  for (auto &f : fds)
    if (f.second >= 0)
      ::close(f.second);
}

bool CkptReader::read(const CkptTensor &t, int64_t begin, int64_t end,
                      void *out, std::string &error) {
  size_t eb = dtypeBytes(t.dtype);
  for (const CkptPiece &p : t.pieces) {
    int64_t lo = std::max(begin, p.begin), hi = std::min(end, p.end);
    if (lo >= hi)
      continue;
    const CkptFile &file = m.files[p.file];
    std::string path = join(dir, file.name);
    auto it = fds.find(p.file);
    if (it == fds.end())
      it = fds.emplace(p.file, ::open(path.c_str(), O_RDONLY | O_CLOEXEC)).first;
    if (it->second < 0) {
      error = "checkpoint file '" + path + "' cannot be read: " +
              std::strerror(errno);
      return false;
    }
    if (!preadAll(it->second, static_cast<char *>(out) + (lo - begin) * eb,
                  static_cast<size_t>(hi - lo) * eb,
                  p.offset + static_cast<uint64_t>(lo - p.begin) * eb)) {
      error = "checkpoint file '" + path + "' is shorter than its manifest "
              "says (" + t.label() + " is cut off): it is truncated";
      return false;
    }
  }
  return true;
}

bool zero::driver::writeShardFile(const std::string &path,
                                  const std::vector<Chunk> &chunks,
                                  uint32_t &crc, std::string &error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    error = "cannot write checkpoint file '" + path + "': " +
            std::strerror(errno);
    return false;
  }
  crc = 0;
  for (const Chunk &c : chunks)
    crc = crc32Update(crc, c.data, c.bytes);
  std::string why;
  writeChunks(fd, chunks, why);
  if (why.empty() && ::fsync(fd) != 0)
    why = std::strerror(errno);
  if (::close(fd) != 0 && why.empty())
    why = std::strerror(errno);
  if (!why.empty()) {
    ::unlink(path.c_str());
    error = "cannot write checkpoint file '" + path + "': " + why;
    return false;
  }
  return true;
}

bool zero::driver::makeDirectories(const std::string &path,
                                   std::string &error) {
  std::string prefix;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    prefix = path.substr(0, pos);
    if (prefix.empty() || isDirectory(prefix))
      continue;
    if (::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST) {
      error = "cannot create directory '" + prefix + "': " + std::strerror(errno);
      return false;
    }
  }
  if (!isDirectory(path)) {
    error = "cannot create directory '" + path + "': a file of that name exists";
    return false;
  }
  return true;
}

void zero::driver::removeTree(const std::string &path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0)
    return;
  if (S_ISDIR(st.st_mode)) {
    for (const std::string &n : listDirectory(path))
      removeTree(join(path, n));
    ::rmdir(path.c_str());
  } else {
    ::unlink(path.c_str());
  }
}

bool zero::driver::publishCheckpoint(const std::string &root,
                                     const std::string &temp,
                                     const std::string &final,
                                     std::string &error) {
  std::string from = join(root, temp), to = join(root, final);
  if (!syncDirectory(from, error))
    return false;
  // An older checkpoint of the same step (a run resumed from it and saved
  // again) steps aside first; rename cannot replace a non-empty directory.
  std::string old;
  if (exists(to)) {
    old = join(root, "." + final + ".old." + std::to_string(::getpid()));
    removeTree(old);
    if (::rename(to.c_str(), old.c_str()) != 0) {
      error = "cannot replace checkpoint '" + to + "': " + std::strerror(errno);
      return false;
    }
  }
  if (::rename(from.c_str(), to.c_str()) != 0) {
    error = "cannot publish checkpoint '" + to + "': " + std::strerror(errno);
    if (!old.empty())
      ::rename(old.c_str(), to.c_str());
    return false;
  }
  if (!syncDirectory(root, error))
    return false;
  if (!old.empty())
    removeTree(old);
  return true;
}

void zero::driver::pruneCheckpoints(const std::string &root, unsigned keep,
                                    const std::string &current) {
  std::vector<std::pair<int64_t, std::string>> published;
  if (keep == 0)
    return;
  for (const std::string &n : listDirectory(root)) {
    int64_t step = stepOfName(n);
    if (n == current)
      continue;
    if (step >= 0 && exists(join(join(root, n), kManifestName)))
      published.emplace_back(step, n);
    else if (n.size() > 6 && n.rfind(".step-", 0) == 0 &&
             (n.find(".tmp") != std::string::npos ||
              n.find(".old.") != std::string::npos))
      removeTree(join(root, n));
  }
  std::sort(published.rbegin(), published.rend());
  for (size_t i = keep - 1; i < published.size(); ++i)
    removeTree(join(root, published[i].second));
}

//===----------------------------------------------------------------------===//
// safetensors
//===----------------------------------------------------------------------===//

bool zero::driver::exportSafetensors(const std::string &dir,
                                     const CkptManifest &m,
                                     const std::string &out,
                                     std::string &error) {
  for (const CkptFile &f : m.files)
    if (!verifyFile(dir, f, error))
      return false;
  // Header: each parameter under its name, data in manifest order.
  JsonValue header = JsonValue::object();
  JsonValue meta = JsonValue::object();
  meta.set("format", JsonValue::string("pt"));
  meta.set("producer", JsonValue::string("zero-ckpt export"));
  meta.set("step", JsonValue::string(std::to_string(m.step)));
  header.set("__metadata__", std::move(meta));
  uint64_t offset = 0;
  std::vector<const CkptTensor *> params;
  for (const CkptTensor &t : m.tensors) {
    if (t.state)
      continue;
    const char *name = nullptr;
    for (const auto &st : kSafetensorsTypes)
      if (st.first == t.dtype)
        name = st.second;
    JsonValue o = JsonValue::object();
    o.set("dtype", JsonValue::string(name));
    JsonValue shape = JsonValue::array();
    for (int64_t d : t.shape)
      shape.push(JsonValue::integer(d));
    o.set("shape", std::move(shape));
    uint64_t bytes = static_cast<uint64_t>(t.numel) * dtypeBytes(t.dtype);
    JsonValue offsets = JsonValue::array();
    offsets.push(JsonValue::integer(static_cast<int64_t>(offset)));
    offsets.push(JsonValue::integer(static_cast<int64_t>(offset + bytes)));
    o.set("data_offsets", std::move(offsets));
    if (header.get(t.param)) {
      error = "checkpoint '" + dir + "' has two parameters named '" + t.param + "'";
      return false;
    }
    header.set(t.param, std::move(o));
    params.push_back(&t);
    offset += bytes;
  }
  std::string text = header.dump(-1);
  // The data starts 8-byte aligned; the format pads the header with spaces.
  text.append((8 - text.size() % 8) % 8, ' ');
  unsigned char size[8];
  for (int i = 0; i < 8; ++i)
    size[i] = static_cast<unsigned char>(static_cast<uint64_t>(text.size()) >> (8 * i));
  AtomicFile file;
  if (!file.open(out, error) || !file.write(size, 8, error) ||
      !file.write(text.data(), text.size(), error))
    return false;
  CkptReader reader(dir, m);
  std::vector<char> buf;
  for (const CkptTensor *t : params) {
    size_t eb = dtypeBytes(t->dtype);
    // In blocks of at most 64 MiB, so that a large tensor needs no copy of
    // its own.
    int64_t block = std::max<int64_t>(1, (int64_t(64) << 20) / static_cast<int64_t>(eb));
    for (int64_t b = 0; b < t->numel; b += block) {
      int64_t e = std::min(t->numel, b + block);
      buf.resize(static_cast<size_t>(e - b) * eb);
      if (!reader.read(*t, b, e, buf.data(), error) ||
          !file.write(buf.data(), buf.size(), error))
        return false;
    }
  }
  return file.commit(error);
}

bool zero::driver::importSafetensors(const std::string &in,
                                     const std::string &outDir, uint64_t seed,
                                     std::string &error) {
  std::string bytes;
  if (!readFileLimited(in, SIZE_MAX, bytes, error, "safetensors file"))
    return false;
  auto bad = [&](const std::string &why) {
    error = "safetensors file '" + in + "': " + why;
    return false;
  };
  if (bytes.size() < 8)
    return bad("shorter than its 8-byte header size");
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = headerSize << 8 | static_cast<unsigned char>(bytes[i]);
  if (headerSize > bytes.size() - 8 || headerSize > (uint64_t(100) << 20))
    return bad("its header size " + std::to_string(headerSize) +
               " is larger than the file or 100 MB");
  JsonValue header;
  std::string why;
  if (!parseJson(bytes.substr(8, headerSize), header, why))
    return bad("its header is not valid JSON (" + why + ")");
  if (!header.isObject())
    return bad("its header is not a JSON object");
  const char *data = bytes.data() + 8 + headerSize;
  uint64_t dataBytes = bytes.size() - 8 - headerSize;

  CkptManifest m;
  m.producer = "zero-ckpt import";
  m.seed = seed;
  m.files.push_back({shardFileName(0), 0, 0});
  std::vector<Chunk> chunks;
  for (const auto &kv : header.members()) {
    if (kv.first == "__metadata__")
      continue;
    const std::string in = "tensor '" + kv.first + "'";
    const JsonValue &o = kv.second;
    const JsonValue *dt = o.isObject() ? o.get("dtype") : nullptr;
    const JsonValue *shape = o.isObject() ? o.get("shape") : nullptr;
    const JsonValue *offsets = o.isObject() ? o.get("data_offsets") : nullptr;
    if (!dt || !dt->isString() || !shape || !shape->isArray() || !offsets ||
        !offsets->isArray() || offsets->items().size() != 2 ||
        !offsets->items()[0].isInteger() || !offsets->items()[1].isInteger())
      return bad(in + " lacks dtype, shape or data_offsets");
    if (m.find(kv.first))
      return bad(in + " appears twice in the header");
    CkptTensor t;
    t.param = kv.first;
    bool known = false;
    for (const auto &st : kSafetensorsTypes)
      if (dt->asString() == st.second)
        t.dtype = st.first, known = true;
    if (!known)
      return bad(in + " is " + dt->asString() +
                 "; checkpoints hold F32, F64, BF16, F16 and I8-I64 tensors");
    int64_t n = 1;
    for (const JsonValue &d : shape->items()) {
      if (!d.isInteger() || d.asInt() < 0 ||
          (d.asInt() != 0 && n > INT64_MAX / 16 / d.asInt()))
        return bad(in + " has an invalid shape");
      n *= d.asInt();
      t.shape.push_back(d.asInt());
    }
    t.numel = t.padded = t.shard = n;
    int64_t b = offsets->items()[0].asInt(), e = offsets->items()[1].asInt();
    uint64_t need = static_cast<uint64_t>(n) * dtypeBytes(t.dtype);
    if (b < 0 || e < b || static_cast<uint64_t>(e) > dataBytes ||
        static_cast<uint64_t>(e - b) != need)
      return bad(in + " has data_offsets [" + std::to_string(b) + ", " +
                 std::to_string(e) + "], which do not hold its " +
                 std::to_string(need) + " bytes inside the file's " +
                 std::to_string(dataBytes));
    if (n > 0) {
      t.pieces.push_back({0, m.files[0].bytes, 0, n});
      chunks.push_back({data + b, need});
      m.files[0].bytes += need;
    }
    m.tensors.push_back(std::move(t));
  }
  if (m.tensors.empty())
    return bad("it holds no tensors");
  if (exists(outDir)) {
    error = "cannot import into '" + outDir + "': it exists (choose a new "
            "directory)";
    return false;
  }
  size_t slash = outDir.find_last_not_of('/');
  std::string trimmed = outDir.substr(0, slash + 1);
  size_t cut = trimmed.rfind('/');
  std::string parent = cut == std::string::npos ? "." : trimmed.substr(0, cut);
  std::string base = cut == std::string::npos ? trimmed : trimmed.substr(cut + 1);
  if (parent.empty())
    parent = "/";
  if (base.empty())
    return bad("the output directory '" + outDir + "' has no name");
  std::string temp = "." + base + ".tmp." + std::to_string(::getpid());
  std::string tempPath = join(parent, temp);
  removeTree(tempPath);
  if (!makeDirectories(tempPath, error))
    return false;
  std::string manifest;
  bool ok = writeShardFile(join(tempPath, m.files[0].name), chunks,
                           m.files[0].crc32, error);
  if (ok) {
    manifest = manifestToJson(m);
    uint32_t ignored;
    ok = writeShardFile(join(tempPath, kManifestName),
                        {{manifest.data(), manifest.size()}}, ignored, error);
  }
  if (ok)
    ok = publishCheckpoint(parent, temp, base, error);
  if (!ok)
    removeTree(tempPath);
  return ok;
}
