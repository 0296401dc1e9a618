// The door to zstd, lz4 and zlib's CRC32 (src/record/README.md).
#include "record/compress.h"

#include <fmt/format.h>
#include <lz4frame.h>
#include <zlib.h>
#include <zstd.h>

#include "kestrel/core/error.h"

namespace kestrel::record::detail {
namespace {
// zstd's level -1, its fastest but one: on the X3 demo's default recording (chunks of ~200 KiB)
// it compresses to 1.9 % more than level 1 at 1.9 times its speed (606 against 322 MB/s);
// --fast=3 would add 13 % (docs/performance.md, "Recording").
constexpr int kZstdLevel = -1;
}  // namespace

void compress(Compression c, std::string_view in, std::string& out, void*& zstd_context) {
  switch (c) {
    case Compression::kNone:
      out.assign(in);
      return;
    case Compression::kZstd: {
      if (!zstd_context) zstd_context = ZSTD_createCCtx();
      if (!zstd_context) throw Error("zstd: cannot create a compression context");
      out.resize(ZSTD_compressBound(in.size()));
      const std::size_t n = ZSTD_compressCCtx(static_cast<ZSTD_CCtx*>(zstd_context), out.data(),
                                              out.size(), in.data(), in.size(), kZstdLevel);
      if (ZSTD_isError(n)) throw Error(fmt::format("zstd: {}", ZSTD_getErrorName(n)));
      out.resize(n);
      return;
    }
    case Compression::kLz4: {
      LZ4F_preferences_t prefs{};
      prefs.frameInfo.contentSize = in.size();
      out.resize(LZ4F_compressFrameBound(in.size(), &prefs));
      const std::size_t n =
          LZ4F_compressFrame(out.data(), out.size(), in.data(), in.size(), &prefs);
      if (LZ4F_isError(n)) throw Error(fmt::format("lz4: {}", LZ4F_getErrorName(n)));
      out.resize(n);
      return;
    }
  }
}

void free_zstd_context(void* zstd_context) {
  if (zstd_context) ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(zstd_context));
}

std::string decompress(std::string_view compression, std::string_view in,
                       std::uint64_t uncompressed_size, std::string& out) {
  if (uncompressed_size > (std::uint64_t{1} << 34)) {
    return fmt::format("an uncompressed size of {} bytes (more than 16 GiB)", uncompressed_size);
  }
  out.resize(uncompressed_size);
  if (compression.empty()) {
    if (in.size() != uncompressed_size) {
      return fmt::format("{} bytes stored, {} declared", in.size(), uncompressed_size);
    }
    out.assign(in);
    return {};
  }
  if (compression == "zstd") {
    const std::size_t n = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(n)) return fmt::format("zstd: {}", ZSTD_getErrorName(n));
    if (n != uncompressed_size) {
      return fmt::format("zstd gave {} bytes, {} declared", n, uncompressed_size);
    }
    return {};
  }
  if (compression == "lz4") {
    LZ4F_dctx* ctx = nullptr;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&ctx, LZ4F_VERSION))) {
      return "lz4: cannot create a decompression context";
    }
    std::size_t done_in = 0, done_out = 0;
    std::string why;
    while (done_in < in.size()) {
      std::size_t src = in.size() - done_in, dst = out.size() - done_out;
      const std::size_t r =
          LZ4F_decompress(ctx, out.data() + done_out, &dst, in.data() + done_in, &src, nullptr);
      if (LZ4F_isError(r)) {
        why = fmt::format("lz4: {}", LZ4F_getErrorName(r));
        break;
      }
      done_in += src;
      done_out += dst;
      if (r == 0) break;
      if (src == 0 && dst == 0) {
        why = "lz4: the frame ends early";
        break;
      }
    }
    LZ4F_freeDecompressionContext(ctx);
    if (why.empty() && done_out != uncompressed_size) {
      why = fmt::format("lz4 gave {} bytes, {} declared", done_out, uncompressed_size);
    }
    return why;
  }
  return fmt::format("compression '{}' (Kestrel reads zstd, lz4 and none)", compression);
}

std::uint32_t crc32(std::uint32_t crc, std::string_view bytes) {
  // zlib takes uInt lengths: feed it in pieces below 4 GiB.
  while (!bytes.empty()) {
    const std::size_t n = std::min<std::size_t>(bytes.size(), 1u << 30);
    crc = static_cast<std::uint32_t>(
        ::crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(n)));
    bytes.remove_prefix(n);
  }
  return crc;
}

}  // namespace kestrel::record::detail
