// libFuzzer target for the world loader: any input must either load (with findings) or throw
// kestrel::Error — never crash, hang or trip AddressSanitizer. Build and run: scripts/fuzz-sdf.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kestrel/sdf/world_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kestrel;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ecs::Registry registry;
  const ecs::Entity world = registry.create();
  try {
    sdf::LoadOptions options;
    options.max_file_bytes = 1u << 20;
    const auto d = sdf::load_world_string(text, registry, world, options, "fuzz.sdf");
    for (const auto& f : d.findings.items()) (void)sdf::format_finding(f);
  } catch (const Error&) {
    // Expected for unusable input.
  }
  return 0;
}
