// Checks shared by the subcommands' options (commands.h).

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "cli/commands.h"

namespace kestrel::cli {

CLI::Validator finite_number(double min, bool inclusive) {
  const std::string bound =
      std::isinf(min) ? "" : (inclusive ? " >= " : " > ") + CLI::detail::to_string(min);
  return CLI::Validator(
      [min, inclusive, bound](std::string& text) -> std::string {
        double v = 0;
        const char* end = text.data() + text.size();
        const auto [p, ec] = std::from_chars(text.data(), end, v);
        if (ec != std::errc() || p != end || !std::isfinite(v) || v < min ||
            (!inclusive && v == min)) {
          return "expected a finite number" + bound + ", found '" + text + "'";
        }
        return {};
      },
      "NUMBER" + bound);
}

CLI::Validator unsigned_integer() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::uint64_t v = 0;
        const char* end = text.data() + text.size();
        const auto [p, ec] = std::from_chars(text.data(), end, v);
        if (text.empty() || ec != std::errc() || p != end) {
          return "expected an integer from 0 to 18446744073709551615, found '" + text + "'";
        }
        return {};
      },
      "UINT64");
}

CLI::Validator output_file() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        namespace fs = std::filesystem;
        std::error_code ec;
        if (fs::is_directory(path, ec)) {
          return "'" + path + "' is a directory; expected a file name";
        }
        // Unusable output is a usage error before anything runs, not a failure at the end.
        const fs::path folder =
            fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
        if (!fs::is_directory(folder, ec)) {
          return "cannot write '" + path + "': folder '" + folder.string() + "' does not exist";
        }
        if (fs::exists(path, ec) ? ::access(path.c_str(), W_OK) != 0
                                 : ::access(folder.c_str(), W_OK | X_OK) != 0) {
          return "cannot write '" + path + "': " + std::strerror(errno);
        }
        return {};
      },
      "FILE");
}

void refuse_overwriting(const std::string& input, const std::string& output, const char* option) {
  std::error_code ec;
  if (!output.empty() && std::filesystem::equivalent(input, output, ec)) {
    throw UsageError(std::string(option) + " '" + output +
                     "' is the world file being read; it would be overwritten");
  }
}

}  // namespace kestrel::cli
