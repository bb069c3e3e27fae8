//===- gemm-bench.cpp - OpenBLAS GEMM throughput per shape ----------------===//
//
// zero-gemm-bench --shapes MxNxK[,MxNxK...] [--dtype f32|f64] [--repeats N]
//                 [--warmup W] [--threads T] [--beta B]
//
// Times cblas_sgemm/cblas_dgemm directly (row-major, C[M,N] = A[M,K]*B[K,N]
// + beta*C, the call the runtime makes for linalg.matmul) and prints one JSON
// line per shape: the median seconds per call over N timed calls after W
// warm-up calls, and the GFLOP/s that gives (2*M*N*K flops per call). It is
// the ceiling zero-run's GEMM time is compared with; it asserts nothing.
//
//===----------------------------------------------------------------------===//

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Shape {
  int64_t m, n, k;
};

struct Options {
  bool f64 = false;
  std::vector<Shape> shapes;
  int repeats = 10;
  int warmup = 2;
  int threads = 0; // 0: OpenBLAS's default
  double beta = 1.0;
};

/// Prints the help (error == nullptr, exit 0) or a one-line error (exit 2).
[[noreturn]] void usage(const char *error) {
  if (error) {
    std::fprintf(stderr,
                 "zero-gemm-bench: error: %s (zero-gemm-bench --help for "
                 "usage)\n",
                 error);
    std::exit(2);
  }
  std::printf(
      "usage: zero-gemm-bench --shapes MxNxK[,MxNxK...] [--dtype f32|f64]\n"
      "                       [--repeats N] [--warmup W] [--threads T] "
      "[--beta B]\n"
      "Times row-major OpenBLAS GEMM C[M,N] = A[M,K]*B[K,N] + beta*C and "
      "prints\none JSON line per shape (median seconds per call, GFLOP/s).\n"
      "  --dtype    element type (default f32)\n"
      "  --repeats  timed calls per shape (default 10)\n"
      "  --warmup   untimed calls before them (default 2)\n"
      "  --threads  OpenBLAS threads (default: OpenBLAS's own, which honours "
      "OPENBLAS_NUM_THREADS)\n"
      "  --beta     beta (default 1, as for linalg.matmul)\n");
  std::exit(0);
}

bool parseInt(const std::string &text, int64_t lo, int64_t &out) {
  if (text.empty() || text.size() > 12)
    return false;
  for (char c : text)
    if (c < '0' || c > '9')
      return false;
  out = std::stoll(text);
  return out >= lo;
}

std::vector<Shape> parseShapes(const std::string &text) {
  std::vector<Shape> shapes;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos)
      end = text.size();
    std::string item = text.substr(begin, end - begin);
    size_t x1 = item.find('x'), x2 = item.find('x', x1 + 1);
    Shape s;
    if (x1 == std::string::npos || x2 == std::string::npos ||
        item.find('x', x2 + 1) != std::string::npos ||
        !parseInt(item.substr(0, x1), 1, s.m) ||
        !parseInt(item.substr(x1 + 1, x2 - x1 - 1), 1, s.n) ||
        !parseInt(item.substr(x2 + 1), 1, s.k) || s.m > INT32_MAX ||
        s.n > INT32_MAX || s.k > INT32_MAX)
      usage(("bad shape '" + item +
             "': expected MxNxK with positive integers, e.g. 1024x768x768")
                .c_str());
    shapes.push_back(s);
    begin = end + 1;
  }
  return shapes;
}

Options parseOptions(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help")
      usage(nullptr);
    std::string value;
    size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      usage(("missing value for " + arg).c_str());
    }
    int64_t number = 0;
    if (arg == "--dtype") {
      if (value != "f32" && value != "f64")
        usage(("bad --dtype '" + value + "': expected f32 or f64").c_str());
      o.f64 = value == "f64";
    } else if (arg == "--shapes") {
      o.shapes = parseShapes(value);
    } else if (arg == "--repeats") {
      if (!parseInt(value, 1, number) || number > 1000000)
        usage("--repeats must be an integer in [1, 1000000]");
      o.repeats = int(number);
    } else if (arg == "--warmup") {
      if (!parseInt(value, 0, number) || number > 1000000)
        usage("--warmup must be an integer in [0, 1000000]");
      o.warmup = int(number);
    } else if (arg == "--threads") {
      if (!parseInt(value, 1, number) || number > 4096)
        usage("--threads must be an integer in [1, 4096]");
      o.threads = int(number);
    } else if (arg == "--beta") {
      char *end = nullptr;
      o.beta = std::strtod(value.c_str(), &end);
      if (value.empty() || *end)
        usage(("bad --beta '" + value + "'").c_str());
    } else {
      usage(("unknown option '" + arg + "'").c_str());
    }
  }
  if (o.shapes.empty())
    usage("--shapes is required");
  return o;
}

/// 64-byte aligned, filled with deterministic values in [-1, 1).
template <typename T> T *makeMatrix(int64_t elements, uint64_t seed) {
  size_t bytes = size_t(elements) * sizeof(T);
  void *p = nullptr;
  if (posix_memalign(&p, 64, std::max<size_t>(bytes, 64)) != 0) {
    std::fprintf(stderr, "zero-gemm-bench: error: cannot allocate %zu bytes\n",
                 bytes);
    std::exit(1);
  }
  T *data = static_cast<T *>(p);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < elements; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    data[i] = T(double(x >> 11) / double(1ull << 52) - 1.0);
  }
  return data;
}

template <typename T> double timeShape(const Options &o, const Shape &s) {
  T *a = makeMatrix<T>(s.m * s.k, 1), *b = makeMatrix<T>(s.k * s.n, 2),
    *c = makeMatrix<T>(s.m * s.n, 3);
  auto m = blasint(s.m), n = blasint(s.n), k = blasint(s.k);
  auto call = [&] {
    if constexpr (sizeof(T) == 4)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a,
                  k, b, n, float(o.beta), c, n);
    else
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, k,
                  b, n, o.beta, c, n);
  };
  for (int i = 0; i < o.warmup; ++i)
    call();
  std::vector<double> seconds;
  for (int i = 0; i < o.repeats; ++i) {
    auto start = std::chrono::steady_clock::now();
    call();
    std::chrono::duration<double> elapsed =
        std::chrono::steady_clock::now() - start;
    seconds.push_back(elapsed.count());
  }
  std::free(a);
  std::free(b);
  std::free(c);
  std::sort(seconds.begin(), seconds.end());
  size_t mid = seconds.size() / 2;
  return seconds.size() % 2 ? seconds[mid]
                            : (seconds[mid - 1] + seconds[mid]) / 2;
}

std::string jsonEscape(const char *text) {
  std::string out;
  for (const char *p = text; p && *p; ++p) {
    if (*p == '"' || *p == '\\')
      out += '\\';
    if (static_cast<unsigned char>(*p) >= 0x20)
      out += *p;
  }
  return out;
}

} // namespace

int main(int argc, char **argv) {
  Options o = parseOptions(argc, argv);
  if (o.threads > 0)
    openblas_set_num_threads(o.threads);
  std::string config = jsonEscape(openblas_get_config());
  for (const Shape &s : o.shapes) {
    double seconds = o.f64 ? timeShape<double>(o, s) : timeShape<float>(o, s);
    double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
    std::printf("{\"dtype\": \"%s\", \"m\": %lld, \"n\": %lld, \"k\": %lld, "
                "\"seconds_per_call\": %.6e, \"gflops\": %.2f, "
                "\"repeats\": %d, \"threads\": %d, \"beta\": %g, "
                "\"blas\": \"%s\"}\n",
                o.f64 ? "f64" : "f32", (long long)s.m, (long long)s.n,
                (long long)s.k, seconds, flops / seconds / 1e9, o.repeats,
                openblas_get_num_threads(), o.beta, config.c_str());
    std::fflush(stdout);
  }
  return 0;
}
