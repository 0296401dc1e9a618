#pragma once
// Chunk compression: the only code that calls zstd and lz4 (LZ4 frame format, as MCAP's "lz4").

#include <string>
#include <string_view>

#include "kestrel/record/mcap.h"

namespace kestrel::record::detail {

/// Compresses `in` into `out` (replaced). `zstd_context` is a ZSTD_CCtx* kept by the caller
/// (created on first use). @throws Error if the library fails.
void compress(Compression c, std::string_view in, std::string& out, void*& zstd_context);
void free_zstd_context(void* zstd_context);

/// Decompresses a chunk's records; "" is stored. @return empty on success, else the reason
/// (an unknown compression, a corrupt stream, a size other than `uncompressed_size`).
std::string decompress(std::string_view compression, std::string_view in,
                       std::uint64_t uncompressed_size, std::string& out);

/// CRC32 (IEEE, as zlib's crc32) continuing from `crc` (0 to start).
std::uint32_t crc32(std::uint32_t crc, std::string_view bytes);

}  // namespace kestrel::record::detail
