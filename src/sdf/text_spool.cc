// TextSpool (kestrel/sdf/world_loader.h): spawned SDF text as files ModelCache can parse.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <iterator>

#include "kestrel/sdf/world_loader.h"

namespace kestrel::sdf {

namespace fs = std::filesystem;

TextSpool::~TextSpool() {
  std::error_code ec;
  if (!dir_.empty()) fs::remove_all(dir_, ec);
}

fs::path TextSpool::write(const std::string& text) {
  std::lock_guard lock(mutex_);
  std::error_code ec;
  if (dir_.empty()) {
    const fs::path d =
        fs::temp_directory_path(ec) /
        fmt::format("{}-{}-{}", prefix_, getpid(), reinterpret_cast<std::uintptr_t>(this));
    if (ec || (!fs::create_directories(d, ec) && ec)) {
      throw Error("cannot create a directory for spawned SDF text: " + ec.message());
    }
    dir_ = d;
  }
  const std::size_t h = std::hash<std::string>{}(text);
  for (int n = 0;; ++n) {
    const fs::path file = dir_ / fmt::format("{:016x}-{}.sdf", h, n);
    if (fs::exists(file, ec)) {
      std::ifstream in(file, std::ios::binary);
      if (std::string(std::istreambuf_iterator<char>(in), {}) == text) return file;
      continue;
    }
    // Written whole under another name, then renamed: a reader never sees half a file.
    const fs::path tmp = file.string() + ".part";
    std::ofstream f(tmp, std::ios::binary);
    if (!(f << text) || !f.flush()) throw Error("cannot write " + tmp.string());
    f.close();
    fs::rename(tmp, file, ec);
    if (ec) throw Error("cannot write " + file.string() + ": " + ec.message());
    written_.push_back(file);
    while (written_.size() > kMaxFiles) {
      fs::remove(written_.front(), ec);
      written_.pop_front();
    }
    return file;
  }
}

}  // namespace kestrel::sdf
